"""The mixture Wasserstein distance of a mixture to itself is exactly zero, and symmetric."""

import numpy as np
import pytest

from skcalib.distributions import Mixture, Normal, pairwise_wasserstein, wasserstein_distance
from skcalib.kernels import WassersteinKernel


# --------------------------------------------------------------------------------------------
# 3. Mixture distance to itself


@pytest.mark.parametrize("n_components", [2, 3, 4])
@pytest.mark.parametrize("uniform", [False, True])
def test_mixture_distance_to_itself_is_exactly_zero_and_symmetric(n_components, uniform):
    rng = np.random.default_rng(n_components)
    n = 9
    W = (np.full((n, n_components), 1.0 / n_components) if uniform
         else rng.dirichlet(np.ones(n_components), size=n))
    mix = Mixture(W, [Normal(rng.normal(size=n), rng.uniform(0.5, 2.0, size=n))
                      for _ in range(n_components)])
    D = pairwise_wasserstein(mix)
    assert np.all(np.diag(D) == 0.0)
    assert np.array_equal(D, D.T)
    assert np.all(D >= 0.0)
    np.testing.assert_array_equal(np.diag(WassersteinKernel(1e-9)(mix)), 1.0)
    copy = Mixture(np.array(W), [Normal(c.loc.copy(), c.scale.copy()) for c in mix.components])
    assert np.all(wasserstein_distance(mix, copy) == 0.0)
