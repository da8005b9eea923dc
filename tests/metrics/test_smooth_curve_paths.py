"""smooth_reliability_curve: the direct and FFT smoothing paths agree; degenerate data give a
small curve; ``n_points`` has a ceiling."""

import numpy as np
import pytest

from skcalib.metrics import _smooth
from skcalib.metrics import smooth_reliability_curve


@pytest.mark.parametrize("n,sigma", [(30, 1e-4), (30, 0.01), (200, 0.003), (5, 0.3)])
def test_direct_smoothing_equals_the_fft(n, sigma):
    """The direct sum over occupied cells is the same circular convolution as the FFT path."""
    rng = np.random.default_rng(n)
    p = rng.random(n)
    y = (rng.random(n) < p).astype(float)
    w = rng.random(n) + 0.5
    m = _smooth._grid_size(sigma)
    binned = _smooth._Binned(p, y - p, w, m)
    at = np.arange(0, m + 1, max(1, m // 4096))
    for which in (0, 1):
        full = binned.smooth(sigma, which)[at]
        direct = binned.smooth_at(sigma, which, at)
        assert np.max(np.abs(full - direct)) <= 1e-13 * np.max(np.abs(full))


def test_curve_paths_agree_on_ordinary_data():
    rng = np.random.default_rng(3)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(int)
    dense = smooth_reliability_curve(y, p, bandwidth=0.05, n_points=101)
    binned = _smooth._Binned(p, y - p, np.ones(500), _smooth._grid_size(0.05))
    assert not binned.direct_is_cheaper(202)  # this call used the FFT
    # the same curve through the direct sums, forced
    orig = _smooth._Binned.direct_is_cheaper
    try:
        _smooth._Binned.direct_is_cheaper = lambda self, n_at: True
        direct = smooth_reliability_curve(y, p, bandwidth=0.05, n_points=101)
    finally:
        _smooth._Binned.direct_is_cheaper = orig
    np.testing.assert_allclose(direct.frequency, dense.frequency, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(direct.density, dense.density, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: (np.arange(30) % 3, np.full((30, 3), 1 / 3)),              # constant
    lambda: (np.arange(30) % 2, (np.arange(30) % 2).astype(float)),    # exact 0/1
    lambda: (np.arange(30) % 3, np.eye(3)[np.arange(30) % 3]),         # one-hot
])
def test_degenerate_predictions_give_a_small_curve_without_a_dense_grid(make, monkeypatch):
    y, P = make()
    curve = smooth_reliability_curve(y, P)
    assert curve.bandwidth == pytest.approx(_smooth._MIN_BANDWIDTH)
    assert curve.grid.size == _smooth._MAX_DEFAULT_POINTS + 1  # was 524,289 points, 99.9% NaN
    # A bootstrap band's per-resample call at the curve's bandwidth sums over the few occupied
    # cells and never builds (or FFTs) the 2**19-point grid: it took 0.3 s a resample before.
    def no_fft(self, which):
        raise AssertionError("dense FFT path used")
    monkeypatch.setattr(_smooth._Binned, "_spectrum", no_fft)
    again = smooth_reliability_curve(y, P, bandwidth=curve.bandwidth, n_points=curve.grid.size)
    np.testing.assert_allclose(again.frequency, curve.frequency, rtol=1e-9, atol=1e-12)


def test_n_points_has_a_ceiling():
    y = np.arange(30) % 2
    with pytest.raises(ValueError, match="n_points must be <="):
        smooth_reliability_curve(y, np.full(30, 0.5), n_points=10**12)
