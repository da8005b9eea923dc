"""IsotonicCalibration, HistogramBinning and ScalingBinning: references, tiny sets, conformance."""

import time
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import ConvergenceWarning
from sklearn.frozen import FrozenEstimator
from sklearn.isotonic import IsotonicRegression

from skcalib import calibration_error
from skcalib.recalibration import (HistogramBinning, IsotonicCalibration, ScalingBinning,
                                   TemperatureScaling)

CHECKED = [IsotonicCalibration(), HistogramBinning(), ScalingBinning(random_state=0)]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
# scikit-learn's estimator checks of this class run with the whole family in
# tests/recalibration/test_family.py (one place, not twice).


def _proba_data(n=600, C=3, seed=0, T=2.0):
    """Probabilities softmax(L) of logits L and labels drawn from softmax(L / T)."""
    rng = np.random.default_rng(seed)
    L = 2.5 * rng.normal(size=(n, C))
    P = np.exp(L - L.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    Pt = np.exp(L / T - (L / T).max(axis=1, keepdims=True))
    Pt /= Pt.sum(axis=1, keepdims=True)
    y = (rng.random((n, 1)) > Pt.cumsum(axis=1)).sum(axis=1)
    return L, P, np.minimum(y, C - 1)


class _ProbaModel(ClassifierMixin, BaseEstimator):
    """A 'classifier' whose predict_proba returns its input (X holds the probabilities)."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        X = np.asarray(X, dtype=np.float64)
        return np.column_stack([1 - X[:, 0], X[:, 0]]) if X.shape[1] == 1 else X

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


# ---------------------------------------------------------------------------------------------
# IsotonicCalibration


@pytest.mark.filterwarnings("ignore:Since FrozenEstimator:UserWarning")
@pytest.mark.parametrize("C", [2, 4])
def test_isotonic_equals_sklearn_calibrated_classifier(C):
    L, P, y = _proba_data(n=500, C=C, seed=C)
    P = np.round(P, 2)  # ties, merged by their mean label as IsotonicRegression does
    P /= P.sum(axis=1, keepdims=True)
    X = P[:, 1:] if C == 2 else P
    w = np.random.default_rng(1).integers(0, 4, size=y.size).astype(float)
    ref = CalibratedClassifierCV(FrozenEstimator(_ProbaModel().fit(X, y)), method="isotonic")
    ref.fit(X, y, sample_weight=w)
    _, Pn, _ = _proba_data(n=300, C=C, seed=99)
    Xn = Pn[:, 1:] if C == 2 else Pn
    ours = IsotonicCalibration(input="proba").fit(X[:, 0] if C == 2 else X, y, sample_weight=w)
    assert_allclose(ours.predict_proba(Xn[:, 0] if C == 2 else Xn), ref.predict_proba(Xn),
                    rtol=0, atol=1e-12)


def test_isotonic_brute_force_pava_and_interpolation():
    # A brute-force isotonic fit: the weighted least-squares non-decreasing fit on the distinct
    # scores (tied scores merged by their mean), by the min-max formula
    # f(x_i) = max_{j <= i} min_{k >= i} mean(y[j..k]).
    rng = np.random.default_rng(3)
    p = np.round(rng.random(40), 1)
    y = (rng.random(40) < p).astype(int)
    iso = IsotonicCalibration().fit(p, y)
    xs = np.unique(p)
    s = np.array([y[p == x].sum() for x in xs], dtype=float)
    c = np.array([(p == x).sum() for x in xs], dtype=float)
    f = np.array([max(min(s[j:k + 1].sum() / c[j:k + 1].sum() for k in range(i, xs.size))
                      for j in range(i + 1)) for i in range(xs.size)])
    assert_allclose(iso.predict_proba(xs)[:, 1], f, atol=1e-12)
    # linear interpolation between fitted points, constant outside the range (clip)
    mid = 0.5 * (xs[:-1] + xs[1:])
    assert_allclose(iso.predict_proba(mid)[:, 1], 0.5 * (f[:-1] + f[1:]), atol=1e-12)
    assert_allclose(iso.predict_proba([0.0, 1.0])[:, 1], [f[0], f[-1]])
    assert_allclose(iso.predict_proba(xs).sum(axis=1), 1.0)


def test_isotonic_logits_fit_softmax_probabilities():
    L, P, y = _proba_data(n=400, C=3, seed=5)
    a = IsotonicCalibration().fit(L, y)
    assert a.input_ == "logits"
    b = IsotonicCalibration(input="proba").fit(P, y)
    assert_allclose(a.predict_proba(L), b.predict_proba(P), atol=1e-12)
    # binary 1-D logits: sigmoid, a monotone map -> the same fitted steps as on the logits
    z = L[:, 0] - L[:, 1]
    yb = (y == 0).astype(int)
    iso = IsotonicCalibration().fit(z, yb)
    ref = IsotonicRegression(out_of_bounds="clip").fit(z, yb)
    assert_allclose(iso.predict_proba(z)[:, 1], ref.predict(z), atol=1e-12)


def test_isotonic_rows_summing_to_zero_are_uniform_and_out_of_bounds():
    # class 2 only where its probability is high, class 0/1 nowhere near p = 0.05 ...
    P = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.45, 0.45, 0.1]])
    y = np.array([0, 1, 2, 2])
    iso = IsotonicCalibration().fit(P, y)
    # every per-class map is 0 at the low end: a row of small probabilities sums to 0
    Q = iso.predict_proba([[0.1, 0.1, 0.8], [1 / 3, 1 / 3, 1 / 3]])
    assert_allclose(Q.sum(axis=1), 1.0)
    Z = iso.predict_proba(np.array([[0.2, 0.2, 0.6]]))
    assert_allclose(Z.sum(axis=1), 1.0)
    # a row whose maps are all 0: [0.1, 0.1, 0.8] -> class 0 map at .1 = 0, class 1 at .1 = 0,
    # class 2 at 0.8 = 1 -> (0, 0, 1); force all-zero with clip below every range
    iso2 = IsotonicCalibration().fit(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2],
                                               [0.2, 0.2, 0.6]]), [0, 1, 2])
    # at (0.2, 0.2, 0.6): maps give 0, 0, 1 -> (0, 0, 1); at the fitted lows every map is 0
    assert_allclose(iso2.predict_proba([[0.2, 0.2, 0.6]]), [[0, 0, 1]], atol=1e-12)
    raising = IsotonicCalibration(out_of_bounds="raise").fit(P, y)
    with pytest.raises(ValueError, match="out_of_bounds"):
        raising.predict_proba([[0.05, 0.05, 0.9]])
    with pytest.raises(ValueError, match="out_of_bounds"):
        IsotonicCalibration(out_of_bounds="nan").fit(P, y)


def test_isotonic_all_zero_row_becomes_uniform():
    # every class occurs only where its probability is 0.5; each class also has a negative at
    # 0.26 and at 0.12, so that each per-class map is 0 on [0.12, 0.26]
    P = np.array([[0.5, 0.26, 0.12, 0.12], [0.12, 0.5, 0.26, 0.12],
                  [0.12, 0.12, 0.5, 0.26], [0.26, 0.12, 0.12, 0.5]])
    y = np.array([0, 1, 2, 3])
    iso = IsotonicCalibration().fit(P, y)
    for k in range(4):
        assert_allclose(np.interp([0.12, 0.25, 0.5], iso.X_thresholds_[k],
                                  iso.y_thresholds_[k]), [0, 0, 1])
    assert_allclose(iso.predict_proba([[0.25, 0.25, 0.25, 0.25]]), [[0.25] * 4])
    assert_allclose(iso.predict_proba([[0.5, 0.26, 0.12, 0.12]]), [[1, 0, 0, 0]])


def test_isotonic_tiny_and_one_class_sets():
    with pytest.raises(ValueError, match="2 classes"):
        IsotonicCalibration().fit([0.3], [1])  # one class and no labels=
    iso = IsotonicCalibration(labels=[0, 1]).fit([0.3], [1])
    assert_allclose(iso.predict_proba([0.0, 0.3, 0.9]), [[0, 1]] * 3)
    iso = IsotonicCalibration(labels=[0, 1]).fit([0.2, 0.7, 0.9], [0, 0, 0])
    assert_allclose(iso.predict_proba([0.1, 0.8]), [[1, 0]] * 2)
    # a class absent from y (labels=) gets 0 everywhere, the rest renormalised
    L, P, y = _proba_data(n=200, C=3, seed=2)
    keep = y != 2
    iso = IsotonicCalibration(labels=[0, 1, 2]).fit(P[keep], y[keep])
    Q = iso.predict_proba(P)
    uniform = np.all(Q == 1 / 3, axis=1)  # rows whose maps are all 0 (documented rule)
    assert_allclose(Q[~uniform, 2], 0.0)
    assert (~uniform).sum() > 150
    assert_allclose(Q.sum(axis=1), 1.0)


def test_isotonic_weights_are_repetitions_and_inputs_unchanged():
    L, P, y = _proba_data(n=150, C=3, seed=4)
    w = np.random.default_rng(0).integers(0, 3, size=y.size)
    P0, w0 = P.copy(), w.copy()
    a = IsotonicCalibration().fit(P, y, sample_weight=w)
    b = IsotonicCalibration().fit(np.repeat(P, w, axis=0), np.repeat(y, w))
    assert_allclose(a.predict_proba(P), b.predict_proba(P), atol=1e-12)
    c = IsotonicCalibration().fit(P, y, sample_weight=w * 1e300)
    assert_allclose(a.predict_proba(P), c.predict_proba(P), atol=1e-12)
    assert_array_equal(P, P0)
    assert_array_equal(w, w0)


# ---------------------------------------------------------------------------------------------
# HistogramBinning


def _brute_histogram(p, t, edges_fn, w=None):
    """Bin means of t by a Python loop over the bins given by edges_fn(value) -> bin id."""
    w = np.ones_like(p) if w is None else w
    bins = np.array([edges_fn(v) for v in p])
    return {b: np.sum(w[bins == b] * t[bins == b]) / np.sum(w[bins == b])
            for b in np.unique(bins) if np.sum(w[bins == b]) > 0}


@pytest.mark.parametrize("n_bins", [1, 4, 10])
def test_histogram_uniform_brute_force(n_bins):
    rng = np.random.default_rng(n_bins)
    p = rng.random(300)
    p[:5] = [0.0, 1.0, 0.5, 0.25, 0.75]  # edges: right-closed, 0 in the first bin
    y = (rng.random(300) < p ** 2).astype(int)
    w = rng.random(300)
    hb = HistogramBinning(n_bins=n_bins).fit(p, y, sample_weight=w)

    def bin_of(v):  # right-closed bins ((k - 1) / n, k / n], 0 in the first
        return sum(k / n_bins < v for k in range(1, n_bins))

    means = _brute_histogram(p, y.astype(float), bin_of, w)
    q = np.linspace(0, 1, 201)
    expect = [means.get(bin_of(v), (bin_of(v) + 0.5) / n_bins) for v in q]
    assert_allclose(hb.predict_proba(q)[:, 1], expect, atol=1e-12)


def test_histogram_quantile_bins_and_zero_ece_on_fitting_data():
    L, P, y = _proba_data(n=800, C=2, seed=7)
    p = P[:, 1]
    for strategy in ("uniform", "quantile"):
        hb = HistogramBinning(n_bins=8, strategy=strategy).fit(p, y)
        q = hb.predict_proba(p)[:, 1]
        # calibrated on its fitting data in calibration_error's own bins of the *input*
        cells = hb.bin_maps_[0].cells(p)
        for c in np.unique(cells):
            assert_allclose(q[cells == c].mean(), y[cells == c].mean(), atol=1e-12)
    # quantile edges are numpy's quantiles: about n / n_bins samples per bin
    hb = HistogramBinning(n_bins=8, strategy="quantile").fit(p, y)
    counts = np.bincount(hb.bin_maps_[0].cells(p))
    assert counts.min() >= 99 and counts.max() <= 101
    edges = np.quantile(p, np.arange(1, 8) / 8)
    assert_array_equal(hb.bin_maps_[0].cells(p), np.searchsorted(edges, p, side="left"))


def test_histogram_matches_uncertainty_calibration_package():
    # `uncertainty-calibration` 0.1.4: HistogramCalibrator(1000, 10).train_calibration(p, y), then
    # calibrate(p) at every 100th sorted p (its equal-mass edges, midpoints between groups of 100,
    # split the fitting data as the quantile edges do).
    rng = np.random.default_rng(11)
    p = rng.random(1000)
    y = (rng.random(1000) < p ** 2).astype(int)
    hb = HistogramBinning(n_bins=10, strategy="quantile").fit(p, y)
    assert_allclose(hb.predict_proba(np.sort(p)[::100])[:, 1],
                    [0.0, 0.03, 0.05, 0.1, 0.15, 0.33, 0.5, 0.64, 0.67, 0.89], atol=1e-12)


def test_histogram_multiclass_renormalised_and_empty_bins():
    L, P, y = _proba_data(n=500, C=4, seed=8)
    hb = HistogramBinning(n_bins=5).fit(P, y)
    Q = hb.predict_proba(P)
    assert_allclose(Q.sum(axis=1), 1.0)
    raw = np.column_stack([
        [np.mean(y[np.ceil(P[:, k] * 5).clip(1) == np.ceil(v * 5).clip(1)] == k)
         for v in P[:, k]] for k in range(4)])
    assert_allclose(Q, raw / raw.sum(axis=1, keepdims=True), atol=1e-12)
    # empty bins: the bin centre
    hb = HistogramBinning(n_bins=10).fit([0.05, 0.95], [0, 1])
    assert_allclose(hb.predict_proba([0.05, 0.45, 0.95, 0.61])[:, 1], [0, 0.45, 1, 0.65])
    hb = HistogramBinning(n_bins=4, strategy="quantile").fit([0.1, 0.2], [0, 1])
    # edges 0.125, 0.15, 0.175: (0.125, 0.15] is empty -> its centre
    assert_allclose(hb.predict_proba([0.1, 0.14, 0.2, 0.9])[:, 1], [0, 0.1375, 1, 1])
    # a huge n_bins stores only the occupied bins
    hb = HistogramBinning(n_bins=2 ** 53).fit([0.1, 0.2, 0.2], [0, 1, 0])
    assert hb.bin_maps_[0].cells_.size == 2
    assert_allclose(hb.predict_proba([0.2])[:, 1], [0.5])


def test_histogram_tiny_and_one_class_sets():
    hb = HistogramBinning(labels=["a", "b"], n_bins=4).fit([0.3], ["b"])
    assert_allclose(hb.predict_proba([0.3, 0.1, 0.9])[:, 1], [1.0, 0.125, 0.875])
    hb = HistogramBinning(labels=[0, 1, 2], n_bins=2).fit(
        [[0.6, 0.3, 0.1], [0.2, 0.7, 0.1]], [0, 1])
    Q = hb.predict_proba([[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    assert_allclose(Q.sum(axis=1), 1.0)
    assert_allclose(Q[0], [1, 0, 0])  # class 2 absent: 0 in its occupied bin
    # class 2's upper bin is empty: its centre 0.75 enters before renormalising
    assert Q[1, 2] > 0


def test_histogram_weights_and_errors():
    L, P, y = _proba_data(n=200, C=3, seed=9)
    w = np.random.default_rng(1).integers(0, 3, size=y.size)
    a = HistogramBinning(strategy="uniform").fit(P, y, sample_weight=w)
    b = HistogramBinning(strategy="uniform").fit(np.repeat(P, w, axis=0), np.repeat(y, w))
    assert_allclose(a.predict_proba(P), b.predict_proba(P), atol=1e-12)
    with pytest.raises(ValueError, match="strategy"):
        HistogramBinning(strategy="median_variance").fit(P, y)
    with pytest.raises((ValueError, TypeError), match="n_bins"):
        HistogramBinning(n_bins=0).fit(P, y)


# ---------------------------------------------------------------------------------------------
# ScalingBinning


def _binary_logits(n=4000, seed=0, scale=3.0, T=3.0):
    rng = np.random.default_rng(seed)
    z = scale * rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-z / T))).astype(int)
    return z, y


def test_scaling_binning_binary_by_hand():
    z, y = _binary_logits()
    sb = ScalingBinning(n_bins=10, random_state=0).fit(z, y)
    a, b = sb.split_
    assert a.size == 2000 and b.size == 2000 and np.intersect1d(a, b).size == 0
    ts = TemperatureScaling(input="logits", labels=[0, 1]).fit(z[a], y[a])
    assert_allclose(sb.scaler_.temperature_, ts.temperature_)
    g = ts.predict_proba(z[b])[:, 1]
    edges = np.unique(np.quantile(g, np.arange(1, 10) / 10))
    cells = np.searchsorted(edges, g, side="left")
    means = np.array([g[cells == c].mean() for c in range(10)])
    gn = ts.predict_proba(z)[:, 1]
    expect = means[np.searchsorted(edges, gn, side="left")]
    assert_allclose(sb.predict_proba(z)[:, 1], expect, atol=1e-12)
    # the debiased L2 estimate is calibration_error's, on the binning half
    h = sb.predict_proba(z[b])
    ref = calibration_error(y[b], h, norm="l2", debias=True, squared=True, n_bins=2 ** 53)
    assert_allclose(sb.squared_calibration_error_, ref, rtol=1e-12, atol=1e-15)
    # ... and by hand: sum_b w_b ((ybar - hbar)^2 - ybar (1 - ybar) / (n_b - 1))
    hb_ = h[:, 1]
    tot = 0.0
    for v in np.unique(hb_):
        m = hb_ == v
        yb = y[b][m].mean()
        tot += m.mean() * ((yb - v) ** 2 - yb * (1 - yb) / (m.sum() - 1))
    assert_allclose(sb.squared_calibration_error_, tot, rtol=1e-10)
    assert_allclose(sb.calibration_error_, np.sqrt(max(tot, 0)))
    assert sb.calibration_error_ < 0.05


@pytest.mark.parametrize("mode", ["marginal", "top_label"])
def test_scaling_binning_multiclass_error_by_hand(mode):
    L, P, y = _proba_data(n=3000, C=3, seed=11)
    sb = ScalingBinning(n_bins=6, mode=mode, random_state=1).fit(L, y)
    a, b = sb.split_
    G = sb.scaler_.predict_proba(L[b])
    H = sb.predict_proba(L[b])
    assert_allclose(H.sum(axis=1), 1.0)
    yb = y[b]

    def debiased(q, t, cells):
        tot = 0.0
        for c in np.unique(cells):
            m = cells == c
            tb = t[m].mean()
            corr = tb * (1 - tb) / (m.sum() - 1) if m.sum() > 1 else None
            tot += m.mean() * (0.0 if corr is None else (tb - q[m].mean()) ** 2 - corr)
        return tot

    def quantile_cells(g):
        edges = np.unique(np.quantile(g, np.arange(1, 6) / 6))
        return np.searchsorted(edges, g, side="left")

    if mode == "marginal":
        vals = [debiased(H[:, k], (yb == k).astype(float), quantile_cells(G[:, k]))
                for k in range(3)]
        expect = np.mean(vals)
        # each class's output is the bin mean of g_k, then rows are renormalised
        raw = np.column_stack([
            np.array([G[quantile_cells(G[:, k]) == c, k].mean() for c in range(6)])[
                quantile_cells(G[:, k])] for k in range(3)])
        assert_allclose(H, raw / raw.sum(axis=1, keepdims=True), atol=1e-12)
    else:
        top = G.argmax(axis=1)
        conf = G.max(axis=1)
        cells = quantile_cells(conf)
        assert_allclose(H[np.arange(b.size), top],
                        np.array([conf[cells == c].mean() for c in range(6)])[cells])
        # the predicted class is kept: no other class exceeds the bin value
        h = H[np.arange(b.size), top]
        assert np.all(H.max(axis=1) <= h)
        # the rest is shared in proportion to g where that keeps it, else mixed with equal shares
        other = (np.arange(3)[None, :] != top[:, None])
        Ho, Go = H[other].reshape(-1, 2), G[other].reshape(-1, 2)
        prop = Go / Go.sum(axis=1, keepdims=True) * (1 - h)[:, None]
        free = prop.max(axis=1) <= h
        assert free.sum() > 100 and (~free).sum() > 0  # both cases occur here
        assert_allclose(Ho[free], prop[free], atol=1e-12)
        assert_allclose(Ho[~free].max(axis=1), h[~free], atol=1e-12)
        assert_allclose(Ho.sum(axis=1), 1 - h, atol=1e-12)
        expect = debiased(H[np.arange(b.size), top], (yb == top).astype(float), cells)
    assert_allclose(sb.squared_calibration_error_, expect, rtol=1e-10, atol=1e-15)


# Values of Kumar, Liang and Ma's `uncertainty-calibration` package (0.1.4): its discrete
# calibrator (`get_discrete_calibrator(g, get_equal_bins(g, 10))`) and its debiased squared error
# (`unbiased_square_ce` on the discrete bins) applied to the scaled outputs g of the binning half
# of ScalingBinning(n_bins=10, random_state=5) / (mode="top_label", random_state=3) on the data
# below (the package fits and bins on the same data, so only the binning half is comparable;
# its equal-mass edges are midpoints between groups, which split the 1000 / 1500 samples
# exactly as the quantile edges do).
_KUMAR_BINARY_VALUES = [0.09624710183747726, 0.2101353911863357, 0.2886830682422986,
                        0.3677324850502256, 0.4512721883462355, 0.5370215596508819,
                        0.6329408790091704, 0.7194551331425231, 0.8095651852868404,
                        0.9141044915562608]
_KUMAR_BINARY_SQ = 0.001496516744910944
_KUMAR_TOP_VALUES = [0.421519726227789, 0.4935178266308916, 0.5448995581828407,
                     0.5936941959614999, 0.651767358209486, 0.70899782197367,
                     0.7665334889616701, 0.8209550920185421, 0.8865881683709604,
                     0.9534197131435395]
_KUMAR_TOP_SQ = -0.0004959780857883298


def test_scaling_binning_matches_uncertainty_calibration_package():
    rng = np.random.default_rng(2024)
    z = 3.0 * rng.normal(size=2000)
    y = (rng.random(2000) < 1 / (1 + np.exp(-z / 2.0))).astype(int)
    sb = ScalingBinning(n_bins=10, random_state=5).fit(z, y)
    assert_allclose(sb.bin_maps_[0].values_, _KUMAR_BINARY_VALUES, rtol=1e-12)
    assert_allclose(np.unique(sb.predict_proba(z[sb.split_[1]])[:, 1]), _KUMAR_BINARY_VALUES,
                    rtol=1e-12)
    assert_allclose(sb.squared_calibration_error_, _KUMAR_BINARY_SQ, rtol=1e-10)
    assert_allclose(sb.calibration_error_, np.sqrt(_KUMAR_BINARY_SQ), rtol=1e-10)
    rng = np.random.default_rng(7)
    L = 3.0 * rng.normal(size=(3000, 3))
    P = np.exp(L / 2)
    P /= P.sum(axis=1, keepdims=True)
    yy = (rng.random((3000, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(0, 2)
    sb = ScalingBinning(n_bins=10, mode="top_label", random_state=3).fit(L, yy)
    assert_allclose(sb.bin_maps_[0].values_, _KUMAR_TOP_VALUES, rtol=1e-12)
    assert_allclose(sb.squared_calibration_error_, _KUMAR_TOP_SQ, rtol=1e-10)
    assert sb.calibration_error_ == 0.0  # negative signed estimate: 0, as the package's l2


def test_scaling_binning_random_state_scaler_and_weights():
    z, y = _binary_logits(n=600, seed=3)
    a = ScalingBinning(random_state=0).fit(z, y)
    b = ScalingBinning(random_state=0).fit(z, y)
    c = ScalingBinning(random_state=1).fit(z, y)
    assert_array_equal(a.split_[0], b.split_[0])
    assert not np.array_equal(a.split_[0], c.split_[0])
    assert_array_equal(a.predict_proba(z), b.predict_proba(z))
    # any recalibrator as scaler (cloned, with input/labels set)
    scaler = IsotonicCalibration()
    d = ScalingBinning(scaler=scaler, random_state=0).fit(z, y)
    assert isinstance(d.scaler_, IsotonicCalibration) and d.scaler_ is not scaler
    assert not hasattr(scaler, "classes_")
    with pytest.raises(TypeError, match="scaler"):
        ScalingBinning(scaler=IsotonicRegression()).fit(z, y)
    with pytest.raises(ValueError, match="mode"):
        ScalingBinning(mode="canonical").fit(z, y)
    # binary problems bin P(classes_[1]) whatever the mode
    t = ScalingBinning(mode="top_label", random_state=0).fit(z, y)
    assert_array_equal(t.predict_proba(z), a.predict_proba(z))
    assert t.squared_calibration_error_ == a.squared_calibration_error_
    # weights: the split is the same; integer weights act on the scaler, the means, the estimate
    w = np.ones(z.size)
    e = ScalingBinning(random_state=0).fit(z, y, sample_weight=w * 7.0)
    assert_allclose(e.predict_proba(z), a.predict_proba(z), atol=1e-12)
    w0 = w.copy()
    w0[e.split_[1]] = 0
    with pytest.raises(ValueError, match="binning half"):
        ScalingBinning(random_state=0).fit(z, y, sample_weight=w0)


def test_scaling_binning_tiny_sets():
    with pytest.raises(ValueError, match="at least 2 samples"):
        ScalingBinning(labels=[0, 1]).fit([0.3], [1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sb = ScalingBinning(labels=[0, 1], random_state=0).fit([0.2, 0.9], [1, 1])
    Q = sb.predict_proba([0.2, 0.5, 0.9])
    assert_allclose(Q.sum(axis=1), 1.0)
    assert sb.squared_calibration_error_ == 0.0  # one sample per bin: contributes 0
    # a class absent from the scaling half is allowed (labels passed to the scaler)
    L, P, y = _proba_data(n=40, C=3, seed=12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sb = ScalingBinning(n_bins=3, random_state=0).fit(L, y)
    assert_array_equal(sb.scaler_.classes_, [0, 1, 2])


# ---------------------------------------------------------------------------------------------
# Common behaviour


@pytest.mark.parametrize("est", [IsotonicCalibration(), HistogramBinning(),
                                 HistogramBinning(strategy="quantile"),
                                 ScalingBinning(random_state=0),
                                 ScalingBinning(mode="top_label", random_state=0)],
                         ids=["iso", "hist", "hist_q", "sb", "sb_top"])
def test_common_behaviour(est):
    L, P, y = _proba_data(n=400, C=3, seed=13)
    labels = np.array(["x", "y", "z"])[y]
    est = clone(est).fit(P, labels)
    assert est.input_ == "proba"
    Q = est.predict_proba(P)
    assert Q.shape == (400, 3) and np.all(Q >= 0)
    assert_allclose(Q.sum(axis=1), 1.0)
    assert_array_equal(est.predict(P), est.classes_[Q.argmax(axis=1)])
    assert_array_equal(est.transform(P), Q)
    assert list(est.get_feature_names_out()) == ["proba_x", "proba_y", "proba_z"]
    with pytest.raises(ValueError, match="X"):
        est.predict_proba(P[:, :2])


@pytest.mark.parametrize("Est", [IsotonicCalibration, HistogramBinning, ScalingBinning])
def test_recalibration_lowers_error_of_overconfident_model(Est):
    rng = np.random.default_rng(0)
    L = 4 * rng.normal(size=(6000, 3))
    P = np.exp(L / 3)
    P /= P.sum(axis=1, keepdims=True)
    y = (rng.random((6000, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(0, 2)
    cal, test = slice(0, 3000), slice(3000, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = Est().fit(L[cal], y[cal])
    Q = est.predict_proba(L[test])
    from scipy.special import softmax

    before = calibration_error(y[test], softmax(L[test], axis=1))
    after = calibration_error(y[test], Q)
    assert after < 0.5 * before


def test_by_name_in_recalibrated_classifier_and_grid_search():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV

    from skcalib.recalibration import RecalibratedClassifier

    X, y = make_classification(n_samples=600, n_features=6, n_informative=4, n_classes=3,
                               random_state=0)
    clf = LogisticRegression(C=100).fit(X[:300], y[:300])
    frozen = FrozenEstimator(clf)
    rc = RecalibratedClassifier(frozen, "isotonic", method="predict_proba").fit(X[300:], y[300:])
    ref = IsotonicCalibration().fit(clf.predict_proba(X[300:]), y[300:])
    assert_allclose(rc.predict_proba(X[:300]), ref.predict_proba(clf.predict_proba(X[:300])),
                    atol=1e-12)
    for name, cls in [("histogram", HistogramBinning), ("scaling_binning", ScalingBinning)]:
        rc = RecalibratedClassifier(frozen, name).fit(X[300:], y[300:])
        assert isinstance(rc.recalibrators_[0], cls)
    gs = GridSearchCV(RecalibratedClassifier(frozen, cv=None),
                      {"recalibrator": ["isotonic", "histogram", "scaling_binning"]},
                      scoring="neg_log_loss", cv=3).fit(X[300:], y[300:])
    assert gs.best_params_["recalibrator"] in ("isotonic", "histogram", "scaling_binning")


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("est", [IsotonicCalibration(), HistogramBinning(),
                                 HistogramBinning(strategy="quantile"),
                                 ScalingBinning(random_state=0),
                                 ScalingBinning(mode="top_label", random_state=0)],
                         ids=["iso", "hist", "hist_q", "sb", "sb_top"])
def test_performance_100k_10_classes(est):
    rng = np.random.default_rng(0)
    L = 3 * rng.normal(size=(100_000, 10))
    y = rng.integers(0, 10, size=100_000)
    t = time.perf_counter()
    clone(est).fit(L, y)
    assert time.perf_counter() - t < 2.0  # 1 s on an idle 2-core machine; slack for load
