"""``n_mc_samples`` is checked and named by the kernel metrics and expectations."""

import numpy as np
import pytest

from skcalib import metrics
from skcalib.distributions import Laplace
from skcalib.kernels import GaussianKernel


# --------------------------------------------------------------------------------------------
# 5. Errors that name the problem


@pytest.mark.parametrize("value", [0, 2.5, "10", None, True])
@pytest.mark.parametrize("call", ["skce", "ucme", "expected_kernel", "expected_kernel_pair"])
def test_n_mc_samples_is_named(call, value):
    y, d = np.zeros(4), Laplace(np.zeros(4), np.ones(4))
    calls = {
        "skce": lambda: metrics.skce(y, d, n_mc_samples=value),
        "ucme": lambda: metrics.ucme(y, d, n_mc_samples=value),
        "expected_kernel": lambda: d.expected_kernel(GaussianKernel(1.0), y, n_mc_samples=value),
        "expected_kernel_pair": lambda: d.expected_kernel_pair(GaussianKernel(1.0),
                                                               n_mc_samples=value),
    }
    with pytest.raises((TypeError, ValueError), match="n_mc_samples"):
        calls[call]()
