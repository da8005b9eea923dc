"""Proper scores (Brier, log) and their Murphy and CORP decompositions.

Independent references: scikit-learn's ``brier_score_loss`` and ``log_loss``; a brute-force PAV
written here (stack of pooled blocks) and the max-min formula of isotonic regression; Murphy's
terms by an explicit loop over the bins; hand-computed small examples; CORP values computed with
the peer package ``model-diagnostics`` 1.5.0 (``model_diagnostics.scoring.decompose``, isotonic
recalibration), stored as constants.
"""

import itertools

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss

import skcalib
from skcalib.metrics import (
    CORPDecomposition,
    MurphyDecomposition,
    brier_score,
    corp_decomposition,
    log_score,
    murphy_decomposition,
)


def _binary(n, seed=0, *, ties=False, miscal=1.3):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 3, size=n)
    if ties:
        p = np.round(p, 1)
    y = (rng.random(n) < np.clip(miscal * p - 0.1, 0, 1)).astype(int)
    return y, p


def _multiclass(n, C=4, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(C), size=n)
    y = np.array([rng.choice(C, p=np.roll(row, 1)) for row in P])
    return y, P


# --------------------------------------------------------------------------------------------
# Brier score and log score against scikit-learn


@pytest.mark.parametrize("scale", ["auto", True, False])
def test_brier_agrees_with_sklearn(scale):
    y, p = _binary(200, 1)
    w = np.random.default_rng(2).random(200)
    for args in [(y, p), (y, np.c_[1 - p, p])]:
        for sw in (None, w):
            ours = brier_score(*args, sample_weight=sw, scale_by_half=scale)
            ref = brier_score_loss(*args, sample_weight=sw, scale_by_half=scale)
            assert ours == pytest.approx(ref, rel=1e-13, abs=0)
    yc, P = _multiclass(300, 4, 3)
    for sw in (None, np.random.default_rng(4).random(300)):
        ours = brier_score(yc, P, sample_weight=sw, scale_by_half=scale)
        ref = brier_score_loss(yc, P, sample_weight=sw, scale_by_half=scale)
        assert ours == pytest.approx(ref, rel=1e-13, abs=0)


def test_brier_unweighted_is_bitwise_sklearn():
    y, p = _binary(500, 5)
    assert brier_score(y, p) == brier_score_loss(y, p)
    yc, P = _multiclass(500, 3, 6)
    assert brier_score(yc, P) == brier_score_loss(yc, P)


def test_brier_string_labels_pos_label_and_missing_class():
    y = np.array(["spam", "ham", "ham", "spam"])
    p = np.array([0.1, 0.9, 0.8, 0.3])
    assert brier_score(y, p, pos_label="ham") == pytest.approx(
        brier_score_loss(y, p, pos_label="ham"), rel=1e-14)
    assert brier_score(y, 1 - p, pos_label="spam") == pytest.approx(0.0375, rel=1e-14)
    # A class absent from y_true but listed in labels.
    P = np.array([[0.5, 0.3, 0.2], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    yy = [0, 1, 1]
    assert brier_score(yy, P, labels=[0, 1, 2]) == pytest.approx(
        brier_score_loss(yy, P, labels=[0, 1, 2]), rel=1e-14)


def test_brier_binary_convention_by_hand():
    # one-column Brier = mean (p - y)^2; Brier's original sum is twice that.
    y = [0, 1, 1]
    p = [0.2, 0.6, 1.0]
    one_col = (0.04 + 0.16 + 0.0) / 3
    assert brier_score(y, p) == pytest.approx(one_col, rel=1e-14)
    assert brier_score(y, p, scale_by_half=False) == pytest.approx(2 * one_col, rel=1e-14)
    # 3 classes: the full sum by default, halved on request.
    P = [[0.2, 0.5, 0.3], [1.0, 0.0, 0.0]]
    full = ((0.04 + 0.25 + 0.49) + 0.0) / 2
    assert brier_score([2, 0], P, labels=[0, 1, 2]) == pytest.approx(full, rel=1e-14)
    half = brier_score([2, 0], P, labels=[0, 1, 2], scale_by_half=True)
    assert half == pytest.approx(full / 2, rel=1e-14)


def test_log_score_agrees_with_sklearn_including_clipping():
    y, p = _binary(300, 7)
    p = p.copy()
    p[:5] = 0.0  # clipped: a zero on the observed class is finite
    p[5:10] = 1.0
    w = np.random.default_rng(8).random(300)
    for args in [(y, p), (y, np.c_[1 - p, p])]:
        for sw in (None, w):
            assert log_score(*args, sample_weight=sw) == pytest.approx(
                log_loss(*args, sample_weight=sw), rel=1e-13)
            assert log_score(*args, sample_weight=sw, normalize=False) == pytest.approx(
                log_loss(*args, sample_weight=sw, normalize=False), rel=1e-13)
    yc, P = _multiclass(300, 5, 9)
    P[0] = [1, 0, 0, 0, 0]
    yc[0] = 3
    assert log_score(yc, P) == pytest.approx(log_loss(yc, P), rel=1e-13)
    assert log_score(yc, P, labels=np.arange(5)) == pytest.approx(
        log_loss(yc, P, labels=np.arange(5)), rel=1e-13)


def test_log_score_clipping_by_hand_and_float32():
    eps64 = np.finfo(np.float64).eps
    assert log_score([1, 0], [0.0, 0.0]) == pytest.approx(-np.log(eps64) / 2, rel=1e-14)
    # float32 input: sklearn clips at float32's eps (and computes in float32).
    p32 = np.array([0.0, 0.25, 0.75], dtype=np.float32)
    y = [1, 0, 1]
    eps32 = float(np.finfo(np.float32).eps)
    expected = (-np.log(eps32) - np.log(0.75) - np.log(0.75)) / 3
    assert log_score(y, p32) == pytest.approx(expected, rel=1e-14)
    assert log_score(y, p32) == pytest.approx(log_loss(y, p32), rel=1e-6)


def test_weights_integer_equal_repeated_rows_scores():
    y, p = _binary(50, 10)
    k = np.random.default_rng(11).integers(0, 4, size=50)
    yr, pr = np.repeat(y, k), np.repeat(p, k)
    assert brier_score(y, p, sample_weight=k) == pytest.approx(brier_score(yr, pr), rel=1e-13)
    assert log_score(y, p, sample_weight=k) == pytest.approx(log_score(yr, pr), rel=1e-13)
    assert log_score(y, p, sample_weight=k, normalize=False) == pytest.approx(
        log_score(yr, pr, normalize=False), rel=1e-13)
    # Huge weights: only ratios matter.
    assert brier_score(y, p, sample_weight=np.full(50, 1e308)) == pytest.approx(
        brier_score(y, p), rel=1e-13)


def test_scores_validation():
    with pytest.raises(ValueError, match="scale_by_half"):
        brier_score([0, 1], [0.2, 0.7], scale_by_half="yes")
    with pytest.raises(TypeError, match="scale_by_half"):
        brier_score([0, 1], [0.2, 0.7], scale_by_half=1)
    with pytest.raises(TypeError, match="normalize"):
        log_score([0, 1], [0.2, 0.7], normalize="False")
    with pytest.raises(ValueError, match="y_proba"):
        brier_score([0, 1], [0.2, 1.7])
    with pytest.raises(ValueError, match="sample_weight"):
        log_score([0, 1], [0.2, 0.7], sample_weight=[1, -1])


# --------------------------------------------------------------------------------------------
# Brute-force references for the decompositions


def _pav_bruteforce(m, w):
    """PAV on ordered values ``m`` with weights ``w``: a stack of pooled blocks (loops)."""
    blocks = []  # [sum of w*m, sum of w, count]
    for mi, wi in zip(m, w):
        blocks.append([mi * wi, wi, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, ww, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += ww
            blocks[-1][2] += c
    out = []
    for s, ww, c in blocks:
        out += [s / ww] * c
    return np.array(out)


def _isotonic_maxmin(m, w):
    """Isotonic regression by its max-min formula: r_i = max_{j<=i} min_{k>=i} avg(m[j..k])."""
    n = len(m)
    r = np.empty(n)
    for i in range(n):
        r[i] = max(min(np.dot(w[j:k + 1], m[j:k + 1]) / w[j:k + 1].sum() for k in range(i, n))
                   for j in range(i + 1))
    return r


def _corp_bruteforce(y, p, w, score):
    """CORP from scratch: pool equal forecasts, PAV, per-sample scores (loops)."""
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    vals = sorted(set(p.tolist()))
    m = np.array([np.dot(w[p == v], y[p == v]) / w[p == v].sum() for v in vals])
    W = np.array([w[p == v].sum() for v in vals])
    r_vals = _pav_bruteforce(m, W)
    r = np.array([r_vals[vals.index(v)] for v in p])
    eps = np.finfo(float).eps

    def S(f):
        if score == "brier":
            return sum(wi * (fi - yi) ** 2 for fi, yi, wi in zip(f, y, w)) / w.sum()
        tot = 0.0
        for fi, yi, wi in zip(f, y, w):
            pr = fi if yi == 1 else 1 - fi
            tot += 0.0 if pr == 1 else -wi * np.log(pr)
        return tot / w.sum()

    obar = np.dot(w, y) / w.sum()
    pc = np.clip(p, eps, 1 - eps) if score == "log" else p
    s_p, s_r, s_c = S(pc), S(r), S(np.full(len(y), obar))
    return dict(mcb=s_p - s_r, dsc=s_c - s_r, unc=s_c, score=s_p), np.array(vals), r_vals


# --------------------------------------------------------------------------------------------
# CORP


def test_pav_references_agree():
    rng = np.random.default_rng(12)
    m = rng.random(9)
    w = rng.integers(1, 5, size=9).astype(float)
    np.testing.assert_allclose(_pav_bruteforce(m, w), _isotonic_maxmin(m, w), rtol=1e-12)


@pytest.mark.parametrize("score", ["brier", "log"])
@pytest.mark.parametrize("weighted", [False, True])
def test_corp_against_bruteforce(score, weighted):
    y, p = _binary(80, 13, ties=True)
    w = np.random.default_rng(14).random(80) if weighted else None
    d = corp_decomposition(y, p, score=score, sample_weight=w)
    ref, vals, r_vals = _corp_bruteforce(y, p, w, score)
    for f in ("mcb", "dsc", "unc", "score"):
        assert getattr(d, f) == pytest.approx(ref[f], rel=1e-12, abs=1e-15)
    np.testing.assert_array_equal(d.curve.forecast, vals)
    np.testing.assert_allclose(d.curve.recalibrated, r_vals, rtol=1e-12, atol=1e-15)
    W = np.array([(np.ones(80) if w is None else w)[p == v].sum() for v in vals])
    np.testing.assert_allclose(d.curve.weight, W, rtol=1e-12)


def test_corp_curve_matches_maxmin_formula_without_ties():
    y, p = _binary(25, 15)
    d = corp_decomposition(y, p)
    order = np.argsort(p)
    np.testing.assert_allclose(d.curve.recalibrated,
                               _isotonic_maxmin(y[order].astype(float), np.ones(25)), rtol=1e-12)


#: model_diagnostics.scoring.decompose (model-diagnostics 1.5.0, isotonic recalibration) on
#: ``_peer_data()``: (miscalibration, discrimination, uncertainty, score).
PEER_CORP = {
    ("brier", False): (0.016121212121212064, 0.0743434343434343, 0.24555555555555555,
                       0.18733333333333332),
    ("brier", True): (0.02649713564754827, 0.0790127443884431, 0.24993496357960454,
                      0.1974193548387097),
    ("log", False): (0.054249093584091135, 0.1812486981879391, 0.6842317651303004,
                     0.5572321605264524),
    ("log", True): (0.073753953583935, 0.186447357708733, 0.6930171020789194,
                    0.5803236979541214),
}


def _peer_data():
    rng = np.random.default_rng(20211)
    n = 60
    p = np.round(rng.beta(2, 3, size=n), 1)  # ties, pooled by both
    y = (rng.random(n) < np.clip(1.3 * p - 0.1, 0, 1)).astype(int)
    w = rng.integers(1, 4, size=n).astype(float)
    return y, p, w


@pytest.mark.parametrize("key", sorted(PEER_CORP))
def test_corp_agrees_with_model_diagnostics(key):
    score, weighted = key
    y, p, w = _peer_data()
    d = corp_decomposition(y, p, score=score, sample_weight=w if weighted else None)
    np.testing.assert_allclose(list(d), PEER_CORP[key], rtol=1e-12)


@pytest.mark.parametrize("score", ["brier", "log"])
@pytest.mark.parametrize("seed", range(5))
def test_corp_identity_and_signs(score, seed):
    y, p = _binary(1000, seed, ties=seed % 2 == 0, miscal=0.5 + 0.3 * seed)
    w = np.random.default_rng(seed).random(1000) if seed >= 3 else None
    mcb, dsc, unc, s = corp_decomposition(y, p, score=score, sample_weight=w)
    assert mcb - dsc + unc == pytest.approx(s, abs=1e-12)
    assert mcb >= 0 and dsc >= 0
    ref = (brier_score if score == "brier" else log_score)(y, p, sample_weight=w)
    assert s == pytest.approx(ref, rel=1e-12)


def test_corp_hand_example():
    # Forecasts .2 .4 .6 .8, outcomes 0 1 0 1: PAV = 0, .5, .5, 1.
    d = corp_decomposition([0, 1, 0, 1], [0.2, 0.4, 0.6, 0.8])
    np.testing.assert_allclose(d.curve.recalibrated, [0, 0.5, 0.5, 1])
    assert d.score == pytest.approx(0.2, rel=1e-14)
    assert d.mcb == pytest.approx(0.2 - 0.125, rel=1e-14)
    assert d.dsc == pytest.approx(0.25 - 0.125, rel=1e-14)
    assert d.unc == 0.25
    dl = corp_decomposition([0, 1, 0, 1], [0.2, 0.4, 0.6, 0.8], score="log")
    assert dl.unc == pytest.approx(np.log(2), rel=1e-14)
    assert dl.dsc == pytest.approx(np.log(2) - 0.5 * np.log(2), rel=1e-14)
    s = -(np.log(0.8) + np.log(0.4) + np.log(0.4) + np.log(0.8)) / 4
    assert dl.score == pytest.approx(s, rel=1e-14)


def test_corp_pools_ties():
    # Tied forecasts are pooled before the fit, whatever the row order: the fit at 0.5 is the mean
    # outcome 0.5 of its two samples. A PAV on the rows in the order (0.5, y=0), (0.5, y=1) without
    # pooling would keep 0 and 1 apart (no violation) and report a smaller S(pav).
    y = np.array([0, 1, 0, 1, 1])
    p = np.array([0.3, 0.5, 0.5, 0.7, 0.7])
    for order in itertools.permutations(range(5)):
        o = list(order)
        d = corp_decomposition(y[o], p[o])
        np.testing.assert_allclose(d.curve.forecast, [0.3, 0.5, 0.7])
        np.testing.assert_allclose(d.curve.recalibrated, [0.0, 0.5, 1.0])
        np.testing.assert_allclose(d.curve.weight, [1, 2, 2])
        # S(p) = (.09 + .25 + .25 + .09 + .09) / 5, S(pav) = (.25 + .25) / 5, S(clim) = .24
        assert d.mcb == pytest.approx(0.154 - 0.1, rel=1e-13)
        assert d.dsc == pytest.approx(0.24 - 0.1, rel=1e-13)


def test_corp_mcb_zero_for_isotonic_calibrated_forecast():
    y, p = _binary(500, 16, ties=True)
    d = corp_decomposition(y, p)
    # Replace every forecast by its own PAV value: that forecast is its own recalibration.
    q = d.curve.recalibrated[np.searchsorted(d.curve.forecast, p)]
    for score in ("brier", "log"):
        dq = corp_decomposition(y, q, score=score)
        assert dq.mcb == 0.0 if score == "brier" else abs(dq.mcb) < 1e-15
        # ... and discrimination is unchanged (the PAV of a PAV is itself, pooled values merge).
        assert dq.dsc == pytest.approx(corp_decomposition(y, p, score=score).dsc, rel=1e-12)


def test_corp_constant_forecast_has_no_discrimination():
    y = np.array([0, 1, 1, 1, 0])
    d = corp_decomposition(y, np.full(5, 0.3))
    assert d.dsc == 0.0
    assert d.mcb == pytest.approx((0.3 - 0.6) ** 2, rel=1e-13)
    assert d.unc == pytest.approx(0.24, rel=1e-14)


def test_corp_label_swap_and_pos_label():
    y, p = _binary(200, 17, ties=True)
    a = corp_decomposition(y, p)
    b = corp_decomposition(1 - y, 1 - p)
    c = corp_decomposition(y, np.c_[1 - p, p], pos_label=0)
    for other in (b, c):
        np.testing.assert_allclose(list(other), list(a), rtol=1e-12, atol=1e-15)
    assert c.classes.tolist() == [0]


@pytest.mark.parametrize("fn", [corp_decomposition, murphy_decomposition])
def test_integer_weights_equal_repeated_rows(fn):
    y, p = _binary(60, 18, ties=True)
    k = np.random.default_rng(19).integers(0, 4, size=60)
    for score in ("brier", "log"):
        a = fn(y, p, score=score, sample_weight=k)
        b = fn(np.repeat(y, k), np.repeat(p, k), score=score)
        for f in ("score", "unc") + (("mcb", "dsc") if fn is corp_decomposition
                                     else ("rel", "res", "within_bin")):
            assert getattr(a, f) == pytest.approx(getattr(b, f), rel=1e-12, abs=1e-15)


def test_corp_multiclass_brier_is_sum_of_one_vs_rest():
    y, P = _multiclass(400, 4, 20)
    d = corp_decomposition(y, P)
    assert d.score == pytest.approx(brier_score(y, P), rel=1e-12)
    assert d.mcb - d.dsc + d.unc == pytest.approx(d.score, abs=1e-12)
    assert len(d.curves) == 4 and d.classes.tolist() == [0, 1, 2, 3]
    for k in range(4):
        dk = corp_decomposition((y == k).astype(int), P[:, k])
        for f in ("mcb", "dsc", "unc", "score"):
            assert d.per_class[k][f] == pytest.approx(getattr(dk, f), rel=1e-12)
    assert d.mcb == pytest.approx(sum(pc["mcb"] for pc in d.per_class), rel=1e-12)
    with pytest.raises(AttributeError, match="curves"):
        d.curve
    with pytest.raises(ValueError, match="score='log'"):
        corp_decomposition(y, P, score="log")


def test_corp_result_object():
    d = corp_decomposition([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3])
    assert isinstance(d, CORPDecomposition)
    assert len(d) == 4 and d[0] == d.mcb and d[3] == d.score
    assert "mcb=" in repr(d) and "CORPCurve" in repr(d.curve)
    assert d.score_name == "brier"


# --------------------------------------------------------------------------------------------
# Murphy


def _murphy_bruteforce(y, p, w, cells, score):
    """Murphy terms by a loop over the bins (classical formulas)."""
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    W = w.sum()
    obar = np.dot(w, y) / W
    eps = np.finfo(float).eps
    if score == "log":
        p = np.clip(p, eps, 1 - eps)

    def loss(f, o):  # expected loss of forecast f when the frequency is o
        if score == "brier":
            return (f - o) ** 2 + o * (1 - o)
        ent = lambda a, b: 0.0 if a == 0 else a * np.log(b)  # noqa: E731
        return -(ent(o, f) + ent(1 - o, 1 - f))

    rel = res = wbv = wbc = s_bins = 0.0
    for c in np.unique(cells):
        i = cells == c
        wk = w[i].sum()
        if wk == 0:
            continue
        fk = np.dot(w[i], p[i]) / wk
        ok = np.dot(w[i], y[i]) / wk
        rel += wk / W * (loss(fk, ok) - loss(ok, ok))
        res += wk / W * (loss(obar, ok) - loss(ok, ok))
        wbv += np.dot(w[i], (p[i] - fk) ** 2) / W
        wbc += np.dot(w[i], (p[i] - fk) * (y[i] - ok)) / W
        s_bins += np.dot(w[i], [loss(fk, yy) for yy in y[i]]) / W
    s = np.dot(w, [loss(pi, yi) for pi, yi in zip(p, y)]) / W
    return dict(rel=rel, res=res, unc=loss(obar, obar), within_bin=s - s_bins, score=s,
                within_bin_variance=wbv, within_bin_covariance=wbc)


@pytest.mark.parametrize("score", ["brier", "log"])
@pytest.mark.parametrize("strategy", ["uniform", "quantile", "unique"])
@pytest.mark.parametrize("weighted", [False, True])
def test_murphy_against_bruteforce(score, strategy, weighted):
    y, p = _binary(150, 21, ties=strategy == "unique")
    w = np.random.default_rng(22).random(150) if weighted else None
    n_bins = 7
    if strategy == "uniform":
        pc = np.clip(p, 1e-300, 1)
        cells = np.maximum(np.ceil(pc * n_bins), 1) - 1  # right-closed bins, 0 in the first
    elif strategy == "quantile":
        edges = np.unique(np.quantile(p, np.arange(1, n_bins) / n_bins))
        cells = np.searchsorted(edges, p, side="left")
    else:
        cells = p
    d = murphy_decomposition(y, p, score=score, n_bins=n_bins, strategy=strategy,
                             sample_weight=w)
    ref = _murphy_bruteforce(y, p, w, cells, score)
    keys = ["rel", "res", "unc", "within_bin", "score"]
    if score == "brier":
        keys += ["within_bin_variance", "within_bin_covariance"]
    else:
        assert d.within_bin_variance is None
    for f in keys:
        assert getattr(d, f) == pytest.approx(ref[f], rel=1e-10, abs=1e-14), f
    assert d.rel - d.res + d.unc + d.within_bin == pytest.approx(d.score, abs=1e-12)
    if score == "brier":
        assert d.within_bin == pytest.approx(
            d.within_bin_variance - 2 * d.within_bin_covariance, abs=1e-14)
    if strategy == "unique":
        assert abs(d.within_bin) < 1e-14
    assert d.reliability == d.rel and d.resolution == d.res and d.uncertainty == d.unc


def test_murphy_hand_example():
    # bins {0.1: y = 0, 0, 1}, {0.8: y = 1, 1}; base rate 0.6.
    d = murphy_decomposition([0, 0, 1, 1, 1], [0.1, 0.1, 0.1, 0.8, 0.8], strategy="unique")
    assert d.rel == pytest.approx(0.6 * (0.1 - 1 / 3) ** 2 + 0.4 * 0.2 ** 2, rel=1e-13)
    assert d.res == pytest.approx(0.6 * (1 / 3 - 0.6) ** 2 + 0.4 * 0.4 ** 2, rel=1e-13)
    assert d.unc == pytest.approx(0.24, rel=1e-14)
    assert d.score == pytest.approx((0.01 * 2 + 0.81 + 0.04 * 2) / 5, rel=1e-13)
    np.testing.assert_allclose(d.per_class[0]["forecast"], [0.1, 0.8])
    np.testing.assert_allclose(d.per_class[0]["observed"], [1 / 3, 1.0])
    np.testing.assert_allclose(d.per_class[0]["weight"], [3, 2])
    # one bin for everything: rel = (mean p - base rate)^2, res = 0.
    d1 = murphy_decomposition([0, 0, 1, 1, 1], [0.1, 0.1, 0.1, 0.8, 0.8], n_bins=1)
    assert d1.rel == pytest.approx((0.38 - 0.6) ** 2, rel=1e-13)
    assert d1.res == 0.0
    assert d1.rel - d1.res + d1.unc + d1.within_bin == pytest.approx(d1.score, abs=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_murphy_identity_random(seed):
    y, p = _binary(2000, seed)
    w = np.random.default_rng(seed).random(2000) if seed % 2 else None
    for score in ("brier", "log"):
        for nb in (1, 5, 15, 200):
            d = murphy_decomposition(y, p, score=score, n_bins=nb, sample_weight=w)
            assert d.rel - d.res + d.unc + d.within_bin == pytest.approx(d.score, abs=1e-12)
            assert d.rel >= 0 and d.res >= 0
            ref = (brier_score if score == "brier" else log_score)(y, p, sample_weight=w)
            assert d.score == pytest.approx(ref, rel=1e-12)


def test_murphy_multiclass_brier():
    y, P = _multiclass(300, 3, 23)
    d = murphy_decomposition(y, P, n_bins=8)
    assert d.score == pytest.approx(brier_score(y, P), rel=1e-12)
    assert d.rel - d.res + d.unc + d.within_bin == pytest.approx(d.score, abs=1e-12)
    parts = [murphy_decomposition((y == k).astype(int), P[:, k], n_bins=8) for k in range(3)]
    assert d.rel == pytest.approx(sum(x.rel for x in parts), rel=1e-12)
    assert d.res == pytest.approx(sum(x.res for x in parts), rel=1e-12)
    with pytest.raises(ValueError, match="binary"):
        murphy_decomposition(y, P, score="log")


def test_murphy_zero_weight_bin_is_ignored():
    y = np.array([0, 1, 1, 0, 1])
    p = np.array([0.05, 0.15, 0.55, 0.6, 0.95])
    w = np.array([0.0, 0.0, 1.0, 1.0, 1.0])  # the first bin (<= 0.2) has zero weight
    d = murphy_decomposition(y, p, n_bins=5, sample_weight=w)
    e = murphy_decomposition(y[2:], p[2:], n_bins=5)
    for f in ("rel", "res", "unc", "within_bin", "score"):
        assert getattr(d, f) == pytest.approx(getattr(e, f), rel=1e-13, abs=1e-16)
    assert isinstance(d, MurphyDecomposition) and "rel=" in repr(d)


# --------------------------------------------------------------------------------------------
# Validation, immutability, exports


def test_decomposition_validation():
    y, p = [0, 1, 1], [0.2, 0.6, 0.9]
    for fn in (murphy_decomposition, corp_decomposition):
        with pytest.raises(ValueError, match="score"):
            fn(y, p, score="brer")
        with pytest.raises(ValueError, match="y_proba"):
            fn(y, [0.2, 0.6, 1.5])
        with pytest.raises(ValueError, match="sample_weight"):
            fn(y, p, sample_weight=[1, 1])
        with pytest.raises(TypeError):
            fn(y, p, "brier")  # keyword-only
    with pytest.raises(ValueError, match="strategy"):
        murphy_decomposition(y, p, strategy="median")
    with pytest.raises(TypeError, match="n_bins"):
        murphy_decomposition(y, p, n_bins=2.5)
    with pytest.raises(ValueError, match="n_bins"):
        murphy_decomposition(y, p, n_bins=0)


def test_inputs_not_mutated():
    y, P = _multiclass(50, 3, 24)
    w = np.random.default_rng(25).random(50)
    copies = (y.copy(), P.copy(), w.copy())
    brier_score(y, P, sample_weight=w)
    log_score(y, P, sample_weight=w)
    murphy_decomposition(y, P, sample_weight=w)
    corp_decomposition(y, P, sample_weight=w)
    for a, b in zip((y, P, w), copies):
        np.testing.assert_array_equal(a, b)


def test_exports():
    for name in ("brier_score", "murphy_decomposition", "corp_decomposition", "log_score"):
        assert getattr(skcalib, name) is getattr(skcalib.metrics, name)
        assert name in skcalib.__all__ and name in skcalib.metrics.__all__
