"""A kernel that does not fit the predictions is an error naming ``kernel`` and ``y_pred``."""

import numpy as np
import pytest

from skcalib import metrics, stats
from skcalib.distributions import Normal
from skcalib.kernels import DeltaKernel, WassersteinKernel, tensor


@pytest.mark.parametrize("kernel", [WassersteinKernel(), tensor(WassersteinKernel(), DeltaKernel())])
@pytest.mark.parametrize("func", [metrics.skce, metrics.ucme, stats.skce_test])
def test_wasserstein_kernel_on_class_probabilities_names_kernel_and_y_pred(func, kernel):
    P, y = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]]), np.array([1, 0, 1])
    with pytest.raises(TypeError, match=r"^kernel: a WassersteinKernel .*y_pred"):
        func(y, P, kernel=kernel)


def test_an_overflowing_median_heuristic_says_so_and_names_y_pred():
    d = Normal([1e308, -1e308, 1e308, -1e308], 1.0)
    with pytest.raises(ValueError, match=r"median heuristic.*overflows.*y_pred"):
        metrics.skce(np.zeros(4), d)
