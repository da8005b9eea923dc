"""concatenate names its distributions argument; mixed families, multivariate normals of different
dimensions and Recalibrated of different maps are refused; as_distribution accepts arrays."""

import numpy as np
import pytest

from skcalib.distributions import (
    Laplace,
    MultivariateNormal,
    Normal,
    Recalibrated,
    as_distribution,
    concatenate,
)


N4 = Normal(np.arange(4.0), np.ones(4))
ARR4 = np.array([[0, 1], [1, 1], [2, 1], [3, 1.0]])


# --------------------------------------------------------------------------------------------
# A6: concatenate


@pytest.mark.parametrize("bad, what", [
    (None, "got NoneType"), (5, "got int"), ("ab", "got str"), ({"a": N4}, "got dict"),
    ([], "empty sequence"), ([N4, 3], "item 1 is int"), (N4, "a single Normal"),
])
def test_concatenate_names_distributions(bad, what):
    with pytest.raises(TypeError, match=f"^distributions .*{what}"):
        concatenate(bad)


def test_concatenate_mixed_families_and_generators():
    with pytest.raises(TypeError, match="^distributions must all be of one family; got Normal "
                                        "and Laplace"):
        concatenate([N4, Laplace(np.zeros(4), np.ones(4))])
    assert len(concatenate(d for d in (N4, N4))) == 8


def test_as_distribution_still_accepts_arrays():
    d, from_array = as_distribution(ARR4)
    assert from_array and isinstance(d, Normal)


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
