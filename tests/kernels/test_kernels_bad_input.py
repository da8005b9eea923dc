"""Kernels called directly refuse non-arrays, strings and empty input naming ``x`` / ``y``."""

import numpy as np
import pytest

from skcalib.kernels import (
    DeltaKernel,
    ExponentialKernel,
    GaussianKernel,
    median_heuristic,
    pairwise_distances,
)


# --------------------------------------------------------------------------------------------
# A5: kernels called directly

X = np.random.default_rng(0).normal(size=(6, 2))


@pytest.mark.parametrize("bad", [0.5, np.float64(0.5), np.array(0.5), {"a": 1}, {1, 2}, "abc"])
@pytest.mark.parametrize("call", [
    lambda a: GaussianKernel(1.0)(a),
    lambda a: ExponentialKernel()(a),
    lambda a: GaussianKernel()(a),
    lambda a: median_heuristic(a),
    lambda a: pairwise_distances(a),
])
def test_kernels_refuse_non_arrays_naming_x(call, bad):
    with pytest.raises(TypeError, match="^X must"):
        call(bad)


def test_kernels_name_y():
    for bad in (0.5, {"a": 1}):
        with pytest.raises(TypeError, match="^Y must"):
            GaussianKernel(1.0)(X, bad)
        with pytest.raises(TypeError, match="^Y must"):
            pairwise_distances(X, bad)
        with pytest.raises((TypeError, ValueError), match="^Y must"):
            DeltaKernel()(np.arange(3), bad)


@pytest.mark.parametrize("call", [
    lambda a: GaussianKernel(1.0)(a),
    lambda a: median_heuristic(a),
    lambda a: pairwise_distances(a),
])
def test_kernels_refuse_numeric_strings_and_empty(call):
    with pytest.raises((TypeError, ValueError), match="X"):
        call(X.astype(str))
    with pytest.raises(ValueError, match="X"):
        call(np.empty((0, 2)))


def test_delta_kernel_empty_and_scalar():
    with pytest.raises(ValueError, match="^X is empty"):
        DeltaKernel()(np.array([]))
    with pytest.raises(ValueError, match=r"^X must be 1-D or 2-D; got shape \(\)"):
        DeltaKernel()(3)
    with pytest.raises(ValueError, match=r"^X must be 1-D or 2-D; got shape \(\)"):
        DeltaKernel()({"a": 1})
    np.testing.assert_array_equal(DeltaKernel()(np.array([0, 1, 0])),
                                  [[1, 0, 1], [0, 1, 0], [1, 0, 1]])
