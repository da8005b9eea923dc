"""Exact values from ../shared/specs/reference-values.md (CalibrationErrors.jl tests, NeurIPS 2019
worked example). Labels are 0-based Python labels as in that file."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skcalib import calibration_error, skce, ucme
from skcalib.kernels import ExponentialKernel, GaussianKernel, median_heuristic
from skcalib._problems.binning import MedianVarianceBinning, UniformBinning

E = np.exp
SQEXP = GaussianKernel(length_scale=1.0)  # KernelFunctions SqExponentialKernel()
P2 = np.array([[1.0, 0.0], [0.0, 1.0]])

# §1: (targets, unbiased, biased)
SKCE_CASES = [
    ([0, 1], 0.0, 0.0),
    ([0, 0], 0.0, 0.5),
    ([1, 0], -2 * E(-1), 1 - E(-1)),
    ([1, 1], 0.0, 0.5),
]


@pytest.mark.parametrize("y, unbiased, biased", SKCE_CASES)
def test_skce_two_points(y, unbiased, biased):
    assert_allclose(skce(y, P2, kernel=SQEXP, labels=[0, 1]), unbiased, rtol=1e-12, atol=1e-15)
    assert_allclose(skce(y, P2, kernel=SQEXP, labels=[0, 1], estimator="biased"), biased,
                    rtol=1e-12, atol=1e-15)
    assert_allclose(skce(y, P2, kernel=SQEXP, labels=[0, 1], estimator="block", block_size=2),
                    unbiased, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("y, unbiased, biased", SKCE_CASES)
def test_skce_two_points_binary_encoding(y, unbiased, biased):
    # Julia binary predictions [1, 0] = P(class 0) ... in Python: column 1 is P(y = 1).
    p_pos = P2[:, 1]
    assert_allclose(skce(y, p_pos, kernel=SQEXP, labels=[0, 1]), unbiased, rtol=1e-12, atol=1e-15)
    assert_allclose(skce(y, p_pos, kernel=SQEXP, labels=[0, 1], estimator="biased"), biased,
                    rtol=1e-12, atol=1e-15)


def test_skce_block_repeated():
    P = np.tile(P2, (10, 1))
    y = np.tile([1, 0], 10)
    assert_allclose(skce(y, P, kernel=SQEXP, estimator="block", block_size=2), -2 * E(-1),
                    rtol=1e-12)


UCME_CASES = [
    ([0, 1], 0.0),
    ([0, 0], (E(-2) + E(-0.5) + 1) / 12),
    ([1, 1], (E(-2) + E(-0.5) + 1) / 12),
    ([1, 0], (1 - E(-1)) ** 2 / 6),
]


@pytest.mark.parametrize("y, expected", UCME_CASES)
def test_ucme_reference(y, expected):
    v = ucme(y, P2, kernel=SQEXP, labels=[0, 1], test_predictions=[[1, 0], [0.5, 0.5], [0, 1]],
             test_targets=[0, 0, 1])
    assert_allclose(v, expected, rtol=1e-12, atol=1e-15)
    # binary version: test predictions P(y=1) = [0, .5, 1]
    vb = ucme(y, P2[:, 1], kernel=SQEXP, labels=[0, 1], test_predictions=[0.0, 0.5, 1.0],
              test_targets=[0, 0, 1])
    assert_allclose(vb, expected, rtol=1e-12, atol=1e-15)


# §4 ECE
@pytest.mark.parametrize(
    "P, y",
    [
        ([[0, 1], [1, 0]], [1, 0]),
        ([[0, 1], [0.5, 0.5], [0.5, 0.5], [1, 0]], [1, 1, 0, 0]),
        ([0, 1], [0, 1]),
        ([0, 0.5, 0.5, 1], [0, 0, 1, 1]),
    ],
)
@pytest.mark.parametrize("mode", ["canonical", "binary", "top_label", "classwise"])
def test_ece_zero_cases(P, y, mode):
    assert calibration_error(y, P, n_bins=10, mode=mode) == pytest.approx(0.0, abs=1e-15)


def test_uniform_binindex():
    b = UniformBinning(10)
    got = b.assign(np.array([[0.0], [0.1], [0.45], [1.0], [0.55]]))
    assert got.tolist() == [0, 0, 4, 9, 5]


P3 = np.array([[0.4, 0.1, 0.5], [0.5, 0.3, 0.2], [0.3, 0.7, 0.0]])
P5 = np.vstack([P3, [[0.1, 0, 0.9], [0.8, 0.1, 0.1]]])


def _groups(cells):
    out = {}
    for i, c in enumerate(cells):
        out.setdefault(c, []).append(i)
    return sorted(out.values())


def test_uniform_grid_binning_partitions():
    assert _groups(UniformBinning(2).assign(P3)) == [[0, 1], [2]]
    assert _groups(UniformBinning(1).assign(P3)) == [[0, 1, 2]]
    assert _groups(UniformBinning(3).assign(P5)) == [[0], [1], [2], [3], [4]]
    assert _groups(UniformBinning(2).assign(P5)) == [[0, 1], [2], [3], [4]]


def test_derived_ece_values():
    assert_allclose(calibration_error([0, 1, 2], P3, n_bins=2, mode="canonical"),
                    0.5666666666666667, rtol=1e-12)
    y5 = [0, 1, 2, 0, 1]
    for nb, expected in [(1, 0.16), (2, 0.70), (3, 0.82)]:
        assert_allclose(calibration_error(y5, P5, n_bins=nb, mode="canonical"), expected,
                        rtol=1e-12)


def _mv_groups(P, min_bin_size):
    b = MedianVarianceBinning(n_bins=10**9, min_bin_size=min_bin_size).fit(P)
    assert np.array_equal(b.assign(P), b.train_cells_)
    return _groups(b.train_cells_)


def test_median_variance_binning():
    assert _mv_groups(P3, 1) == [[0], [1], [2]]
    assert _mv_groups(P3, 2) == [[0, 1, 2]]
    assert _mv_groups(P5, 1) == [[0], [1], [2], [3], [4]]
    assert _mv_groups(P5, 2) == [[0, 1, 3], [2, 4]]
    assert _mv_groups(P5, 3) == [[0, 1, 2, 3, 4]]
    # one bin: target proportions [0.4, 0.4, 0.2]; ECE = TV(mean p, proportions)
    y5 = [0, 1, 2, 0, 1]
    expected = 0.5 * np.abs(P5.mean(axis=0) - [0.4, 0.4, 0.2]).sum()
    assert_allclose(calibration_error(y5, P5, mode="canonical", strategy="median_variance",
                                      n_bins=100, min_bin_size=3), expected, rtol=1e-12)
    with pytest.raises(ValueError, match="min_bin_size"):
        calibration_error(y5, P5, mode="canonical", strategy="median_variance", min_bin_size=6)


# §7.1 tiny worked example
P6 = np.array([[0.70, 0.20, 0.10], [0.10, 0.80, 0.10], [0.30, 0.30, 0.40],
               [0.50, 0.25, 0.25], [0.05, 0.15, 0.80], [0.20, 0.60, 0.20]])
Y6 = np.array([0, 1, 2, 1, 2, 0])
TINY = {
    0.4: (0.0359731864670598, -0.047498842906194896, -0.04920863548092133,
          (-0.0133878096, -0.1364693984, 0.0022313016)),
    0.49999999999999994: (0.030943852050381818, -0.05353404420620848, -0.05529390698454298,
                           (-0.0180716527, -0.1508220104, 0.0030119421)),
    1.0: (0.018922294071288023, -0.06795991378112104, -0.07055166708241573,
          (-0.0329286982, -0.1842144194, 0.0054881164)),
}


def test_tiny_median_heuristic():
    assert median_heuristic(P6, metric="tv", include_diagonal=True) == pytest.approx(0.4, abs=1e-15)
    assert median_heuristic(P6, metric="tv") == pytest.approx(0.5, abs=1e-15)


@pytest.mark.parametrize("nu", sorted(TINY))
def test_tiny_skce(nu):
    b, uq, ul, pairs = TINY[nu]
    k = ExponentialKernel(length_scale=nu, metric="tv")
    assert_allclose(skce(Y6, P6, kernel=k, estimator="biased"), b, rtol=1e-12)
    assert_allclose(skce(Y6, P6, kernel=k), uq, rtol=1e-12)
    assert_allclose(skce(Y6, P6, kernel=k, estimator="block", block_size=2), ul, rtol=1e-12)
    for (i, j), h in zip([(0, 1), (2, 3), (4, 5)], pairs):
        assert_allclose(skce(Y6[[i, j]], P6[[i, j]], kernel=k, labels=[0, 1, 2]), h, rtol=1e-8)


def test_tiny_ece():
    assert_allclose(calibration_error(Y6, P6, n_bins=10, mode="canonical"), 0.475, rtol=1e-12)
    for ms, expected in [(1, 0.475), (2, 37 / 120), (3, 37 / 120)]:
        got = calibration_error(Y6, P6, mode="canonical", strategy="median_variance",
                                n_bins=100, min_bin_size=ms)
        assert_allclose(got, expected, rtol=1e-12)
    b = MedianVarianceBinning(10**9, 2).fit(P6)
    assert _groups(b.train_cells_) == [[0, 1, 5], [2, 3, 4]]


def test_tiny_diagonal_and_default_median():
    # h_ii = 1 - 2 p_i[y_i] + |p_i|^2 is bandwidth-free; biased - (n-1)/n unbiased = mean(h_ii)/n
    diag = 1 - 2 * P6[np.arange(6), Y6] + (P6 ** 2).sum(axis=1)
    assert_allclose(diag, [0.14, 0.06, 0.54, 0.875, 0.065, 1.04], rtol=1e-12)
    k = ExponentialKernel(length_scale=1.0, metric="tv")
    b = skce(Y6, P6, kernel=k, estimator="biased")
    u = skce(Y6, P6, kernel=k)
    assert_allclose(b - 5 / 6 * u, diag.mean() / 6, rtol=1e-12)
    # "median" resolves to the i<j median (0.5)
    km = ExponentialKernel(length_scale="median", metric="tv")
    assert_allclose(skce(Y6, P6, kernel=km), TINY[0.49999999999999994][1], rtol=1e-9)
