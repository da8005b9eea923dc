"""concatenate refuses multivariate normals of different dimensions."""

import numpy as np
import pytest

from skcalib.distributions import MultivariateNormal, Normal, Recalibrated, concatenate


def test_concatenate_of_multivariate_normals_of_different_dimensions():
    with pytest.raises(ValueError, match="dimension"):
        concatenate([MultivariateNormal(np.zeros((2, 2)), 1.0),
                     MultivariateNormal(np.zeros((2, 3)), 1.0)])
    with pytest.raises(ValueError, match="same map"):
        concatenate([Recalibrated(Normal([0.0], 1.0), [0, 1], [0, 1]),
                     Recalibrated(Normal([0.0], 1.0), [0, 0.5, 1], [0, 0.2, 1])])
    d = Recalibrated(Normal([0.0, 1.0], 1.0), [0, 0.5, 1], [0, 0.2, 1])
    both = concatenate([d[:1], d[1:]])
    np.testing.assert_array_equal(both.cdf([0.3, 0.4]), d.cdf([0.3, 0.4]))
