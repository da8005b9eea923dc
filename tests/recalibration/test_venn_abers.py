"""Inductive Venn--Abers predictors: skcalib.recalibration.VennAbers."""


import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.isotonic import IsotonicRegression

from skcalib.recalibration import VennAbers
from skcalib.recalibration._venn_abers import venn_abers_tables


# scikit-learn's estimator checks of this class run with the whole family in
# tests/recalibration/test_family.py (one place, not twice).


# ---------------------------------------------------------------------------------------------
# brute force: refit isotonic regression with the test point labelled 0 and 1


def _brute(s, y, t, w=None):
    """(p0, p1) at test score t by two weighted isotonic fits with the test point added."""
    w = np.ones(s.size) if w is None else w
    out = []
    for label in (0, 1):
        ir = IsotonicRegression(out_of_bounds="clip").fit(
            np.r_[s, t], np.r_[y, label], sample_weight=np.r_[w, 1.0])
        out.append(float(ir.predict([t])[0]))
    return out


@pytest.mark.parametrize("weighted", [False, True])
def test_interval_equals_brute_force(weighted):
    """Every gap and every tie position, on small inputs with many ties, against refitting."""
    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(1, 14))
        s = rng.integers(0, 6, n).astype(float)
        y = rng.integers(0, 2, n)
        w = None
        if weighted:
            w = rng.integers(0, 4, n) + rng.random(n) * (trial % 2)
            w[0] += 1.0
        tests = np.arange(-1.0, 6.5, 0.5)      # below, between, on and above the scores
        va = VennAbers(input="logits", labels=[0, 1]).fit(s, y, sample_weight=w)
        p0, p1 = va.predict_interval(tests)
        expected = np.array([_brute(s, y, t, w) for t in tests])
        assert_allclose(np.column_stack([p0, p1]), expected, rtol=0, atol=1e-12)


def test_brute_force_continuous_scores_larger_n():
    rng = np.random.default_rng(1)
    s = rng.normal(size=300)
    y = (rng.random(300) < 1 / (1 + np.exp(-2 * s))).astype(int)
    tests = np.r_[rng.normal(size=40), s[:10]]          # new scores and ties
    p0, p1 = VennAbers(input="logits").fit(s, y).predict_interval(tests)
    expected = np.array([_brute(s, y, t) for t in tests])
    assert_allclose(np.column_stack([p0, p1]), expected, rtol=0, atol=1e-12)


def test_tables_example_by_hand():
    """Scores 0.1, 0.4, 0.7 with labels 0, 1, 1: the four gaps and three ties by hand."""
    t, gap, tie = venn_abers_tables(np.array([0.4, 0.1, 0.7]), np.array([1, 0, 1]))
    assert_array_equal(t, [0.1, 0.4, 0.7])
    # below all: (0 | t, 0, 1, 1) -> 0 ; (1, 0, 1, 1) -> pool(1, 0) = 1/2
    assert_allclose(gap, [[0, 0.5], [0, 1], [0.5, 1], [2 / 3, 1]])
    # tied with 0.1: pooled with label 0 -> (0, 1/2); with 0.4 (label 1): (1/2, 1); with 0.7:
    # label 0 makes (0, 1, {1, 0}) -> pool(1, 1, 0) = 2/3, label 1 keeps (0, 1, 1) -> 1
    assert_allclose(tie, [[0, 0.5], [0.5, 1], [2 / 3, 1]])


# ---------------------------------------------------------------------------------------------
# reference values of the venn-abers package (1.5.4; scratch venv), stored as constants

P_CAL = np.array([0.05, 0.1, 0.2, 0.2, 0.3, 0.35, 0.4, 0.5, 0.55, 0.6, 0.6, 0.7, 0.8, 0.85, 0.9,
                  0.95])
Y_CAL = np.array([0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1])
P_TEST = np.array([0.0, 0.07, 0.2, 0.25, 0.45, 0.6, 0.65, 0.75, 0.92, 1.0])
# venn_abers.VennAbers().fit(column_stack([1 - P_CAL, P_CAL]), Y_CAL).predict_proba(...)
REF_P0P1 = np.array([[0, 1 / 3], [0, 0.4], [0.25, 0.5], [0.25, 0.5], [1 / 3, 2 / 3], [0.5, 0.75],
                     [0.5, 0.75], [0.5, 1], [0.75, 1], [0.8, 1]])
REF_P = np.array([0.25, 0.28571428571428575, 0.4, 0.4, 0.49999999999999994, 0.6, 0.6,
                  0.6666666666666666, 0.8, 0.8333333333333334])


@pytest.mark.parametrize("form", ["1d", "2d", "logits"])
def test_binary_reference_values(form):
    if form == "1d":
        X_cal, X_test = P_CAL, P_TEST
    elif form == "2d":
        X_cal, X_test = (np.column_stack([1 - P_CAL, P_CAL]),
                         np.column_stack([1 - P_TEST, P_TEST]))
    else:   # any increasing transform of the scores gives the same predictor
        X_cal, X_test = 3 * P_CAL - 1, 3 * P_TEST - 1
    va = VennAbers().fit(X_cal, Y_CAL)
    p0, p1 = va.predict_interval(X_test)
    assert_allclose(np.column_stack([p0, p1]), REF_P0P1, rtol=0, atol=1e-15)
    P = va.predict_proba(X_test)
    assert_allclose(P[:, 1], REF_P, rtol=1e-14)
    assert_allclose(P.sum(axis=1), 1.0, rtol=1e-15)


P3_CAL = np.array([[0.7, 0.2, 0.1], [0.5, 0.3, 0.2], [0.2, 0.6, 0.2], [0.1, 0.8, 0.1],
                   [0.3, 0.3, 0.4], [0.1, 0.2, 0.7], [0.6, 0.1, 0.3], [0.4, 0.4, 0.2],
                   [0.2, 0.2, 0.6], [0.25, 0.5, 0.25], [0.8, 0.1, 0.1], [0.15, 0.35, 0.5]])
Y3_CAL = np.array([0, 1, 1, 1, 2, 2, 0, 0, 2, 2, 0, 1])
P3_TEST = np.array([[0.55, 0.25, 0.2], [0.1, 0.7, 0.2], [0.3, 0.3, 0.4], [0.45, 0.1, 0.45]])
# venn_abers.venn_abers.predict_proba_prefitted_va(..., va_tpe="one_vs_rest")
REF3_P = np.array([[0.5294117647058824, 0.29411764705882354, 0.17647058823529413],
                   [0.11363636363636365, 0.6818181818181819, 0.20454545454545459],
                   [0.2587548638132296, 0.3326848249027238, 0.40856031128404674],
                   [0.42765273311897106, 0.12218649517684889, 0.4501607717041801]])
REF3_P0 = np.array([[1 / 3, 0, 0], [0, 0.5, 0], [0, 1 / 3, 0.4], [1 / 3, 0, 0.4]])
REF3_P1 = np.array([[1, 0.5, 0.25], [0.125, 1, 0.25], [0.5, 0.5, 2 / 3],
                    [2 / 3, 1 / 6, 2 / 3]])


def test_multiclass_one_vs_rest_reference_values():
    va = VennAbers().fit(P3_CAL, Y3_CAL)
    assert_allclose(va.predict_proba(P3_TEST), REF3_P, rtol=1e-13)
    p0, p1 = va.predict_interval(P3_TEST)
    assert_allclose(p0, REF3_P0, rtol=0, atol=1e-15)
    assert_allclose(p1, REF3_P1, rtol=0, atol=1e-15)


def test_multiclass_logits_use_softmax_scores():
    """Logits give the predictor of their softmax probabilities (scores without ties: rounding
    in softmax could split tied probabilities)."""
    rng = np.random.default_rng(5)
    L, L_test = rng.normal(size=(200, 4)), rng.normal(size=(50, 4))
    y = rng.integers(0, 4, 200)
    P, P_test = np.exp(L), np.exp(L_test)
    P /= P.sum(axis=1, keepdims=True)
    P_test /= P_test.sum(axis=1, keepdims=True)
    by_logits = VennAbers(input="logits").fit(L + 3.0, y).predict_proba(L_test - 1.0)
    by_proba = VennAbers(input="proba").fit(P, y).predict_proba(P_test)
    assert_allclose(by_logits, by_proba, rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# properties


def _overconfident(n, rng, scale=3.0):
    z = scale * rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-z / scale))).astype(int)
    return z, y


def test_interval_ordered_and_merged_probability_inside():
    rng = np.random.default_rng(2)
    z, y = _overconfident(500, rng)
    va = VennAbers().fit(z, y)
    t = np.r_[rng.normal(scale=5, size=2000), z[:50], -1e9, 1e9]
    p0, p1 = va.predict_interval(t)
    assert np.all((0 <= p0) & (p0 <= p1) & (p1 <= 1))
    p = va.predict_proba(t)[:, 1]
    assert np.all((p0 <= p) & (p <= p1) & (p > 0) & (p < 1))
    # monotone in the score, as isotonic regression is
    order = np.argsort(t, kind="stable")
    assert np.all(np.diff(p0[order]) >= 0) and np.all(np.diff(p1[order]) >= 0)
    # the width shrinks with more calibration data
    va_big = VennAbers().fit(*_overconfident(20_000, rng))
    q0, q1 = va_big.predict_interval(t)
    assert np.mean(q1 - q0) < 0.2 * np.mean(p1 - p0)


def test_validity_monte_carlo():
    """Venn validity: with the label's own probability p_y (p1 if y = 1, else p0),
    E[y - p_y] = 0 exactly under exchangeability, however miscalibrated the scores.

    Isotonic regression keeps the label sum of each block, so over the n + 1 augmented points
    sum(y_i - f(x_i)) = 0; by exchangeability the test point carries 1/(n+1) of it. Tiny
    calibration sets (n = 8) make p0 and p1 far apart, so the test has power: the merged
    raw scores are visibly biased on the same draws.
    """
    rng = np.random.default_rng(3)
    n_rep, n_cal = 3000, 8
    resid, resid_raw = [], []
    for _ in range(n_rep):
        z, y = _overconfident(n_cal + 1, rng)
        z = z + 1.5                                    # also biased towards class 1
        t, gap, tie = venn_abers_tables(z[:-1], y[:-1])
        pos = np.searchsorted(t, z[-1])
        p0, p1 = (tie[pos] if pos < t.size and t[pos] == z[-1] else gap[pos])
        resid.append(y[-1] - (p1 if y[-1] else p0))
        resid_raw.append(y[-1] - 1 / (1 + np.exp(-z[-1])))
    se = np.std(resid) / np.sqrt(n_rep)
    assert abs(np.mean(resid)) < 4 * se
    assert abs(np.mean(resid_raw)) > 4 * se           # the scores are miscalibrated


def test_validity_monte_carlo_through_estimator():
    """The same property through fit / predict_interval on a few hundred draws (interval
    brackets: mean p0 <= mean y <= mean p1)."""
    rng = np.random.default_rng(4)
    ys, p0s, p1s = [], [], []
    for _ in range(300):
        z, y = _overconfident(31, rng)
        va = VennAbers(input="logits").fit(z[:-1], y[:-1])
        p0, p1 = va.predict_interval(z[-1:])
        ys.append(y[-1])
        p0s.append(p0[0])
        p1s.append(p1[0])
    assert np.mean(p0s) <= np.mean(ys) <= np.mean(p1s)


# ---------------------------------------------------------------------------------------------
# the estimator API on valid scores (the properties of the generic checks that cannot run)


@pytest.mark.parametrize("C", [2, 3])
def test_sklearn_properties_on_scores(C):
    rng = np.random.default_rng(6)
    L = rng.normal(size=(300, C))
    y = np.array(["a", "b", "c"])[:C][rng.integers(0, C, 300)]
    L0, y0 = L.copy(), y.copy()
    va = VennAbers()
    assert va.fit(L, y) is va
    assert_array_equal(L, L0)
    assert_array_equal(y, y0)                          # inputs never mutated
    assert va.n_features_in_ == C and va.input_ == "logits"
    assert_array_equal(va.classes_, np.array(["a", "b", "c"])[:C])
    P = va.predict_proba(L)
    assert P.shape == (300, C)
    assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    assert_array_equal(va.predict(L), va.classes_[P.argmax(axis=1)])
    assert_allclose(va.transform(L), P)
    # sample order and subsets: predictions are per row
    perm = rng.permutation(300)
    assert_allclose(va.predict_proba(L[perm]), P[perm])
    assert_allclose(va.predict_proba(L[:7]), P[:7])
    # refit is idempotent, clone is unfitted
    assert_allclose(clone(va).fit(L, y).predict_proba(L), P)
    assert_allclose(va.fit(np.asfortranarray(L), list(y)).predict_proba(L), P)
    # integer weights act as repeated calibration points
    w = rng.integers(0, 3, 300)
    rep = np.repeat(np.arange(300), w)
    a = VennAbers().fit(L, y, sample_weight=w).predict_proba(L)
    b = VennAbers().fit(L[rep], y[rep]).predict_proba(L)
    assert_allclose(a, b, rtol=1e-12)
    # rescaling all weights changes only the test point's relative weight; 1e300 does not overflow
    big = VennAbers().fit(L, y, sample_weight=1e300 * (w + 1)).predict_proba(L)
    assert np.all(np.isfinite(big))


def test_predict_without_fit_raises_not_fitted():
    from sklearn.exceptions import NotFittedError

    for method in ("predict", "predict_proba", "predict_interval", "transform"):
        with pytest.raises(NotFittedError):
            getattr(VennAbers(), method)(np.zeros(3))


def test_bad_parameters_and_input():
    z, y = np.array([0.1, 0.5, 0.9]), np.array([0, 1, 1])
    with pytest.raises(ValueError, match="multiclass"):
        VennAbers(multiclass="pairwise").fit(z, y)
    with pytest.raises(ValueError, match="input"):
        VennAbers(input="scores").fit(z, y)
    with pytest.raises(ValueError, match="sample_weight"):
        VennAbers().fit(z, y, sample_weight=[1, -1, 1])
    va = VennAbers(input="proba").fit(z, y)
    with pytest.raises(ValueError, match="X"):
        va.predict_proba(np.array([0.3, 1.5]))


# ---------------------------------------------------------------------------------------------
# tiny, separable and degenerate calibration sets: no special case, probabilities in (0, 1)


def test_tiny_and_separable_calibration_sets():
    # one calibration point: (p0, p1) = (0, 1/2) below it for label 0 ... by hand
    va = VennAbers(input="logits", labels=[0, 1]).fit(np.array([0.0]), np.array([1]))
    p0, p1 = va.predict_interval(np.array([-1.0, 0.0, 1.0]))
    # below: (t=0, 1) -> 0 ; (t=1, 1) -> 1 ; tied: pool with the point: 1/2 and 1; above:
    # label 0 after a 1 -> pool = 1/2, label 1 -> 1
    assert_allclose(p0, [0, 0.5, 0.5])
    assert_allclose(p1, [1, 1, 1])
    # separable: scores below 0 are all class 0, above all class 1
    z = np.r_[-np.arange(1, 11.0), np.arange(1, 11.0)]
    y = (z > 0).astype(int)
    va = VennAbers().fit(z, y)
    p = va.predict_proba(np.array([-100.0, -0.5, 0.5, 100.0]))[:, 1]
    assert np.all((p > 0) & (p < 1))
    assert_allclose(va.predict_interval(np.array([100.0]))[0], [10 / 11])   # 10 ones + a 0
    assert_allclose(p[[0, 3]], [1 / 12, 11 / 12])
    # one class only (labels given): the interval is [0, 1/(n+1)]
    va = VennAbers(labels=[0, 1]).fit(np.array([0.2, 0.4, 0.6]), np.array([0, 0, 0]))
    p0, p1 = va.predict_interval(np.array([0.5]))
    assert_allclose([p0[0], p1[0]], [0, 0.5])            # the 1 pools with the 0.6 above it


def test_multiclass_absent_class_with_labels():
    rng = np.random.default_rng(7)
    P = rng.dirichlet(np.ones(3), size=50)
    y = rng.integers(0, 2, 50)                              # class 2 never observed
    va = VennAbers(labels=[0, 1, 2]).fit(P, y)
    Q = va.predict_proba(P)
    assert np.all(Q[:, 2] > 0) and np.all(Q[:, 2] < Q[:, :2].max(axis=1))
    assert_allclose(Q.sum(axis=1), 1.0)


def test_100k_scores_give_monotone_valid_intervals():
    """At n = 100,000 (the size of the issue's speed target; timed in
    benchmarks/bench_recalibrators.py, not here) the vectorised hulls and bridges still give
    what Venn--Abers guarantees: p0 <= p1, both non-decreasing in the score, in [0, 1]."""
    rng = np.random.default_rng(8)
    z, y = _overconfident(100_000, rng)
    zt = np.sort(np.concatenate([3 * rng.normal(size=50_000), z[:50_000]]))   # gaps and ties
    va = VennAbers(input="logits").fit(z, y)
    p0, p1 = va.predict_interval(zt)
    assert np.all(p0 <= p1) and np.all(p0 >= 0) and np.all(p1 <= 1)
    assert np.all(np.diff(p0) >= -1e-12) and np.all(np.diff(p1) >= -1e-12)


@pytest.mark.parametrize("recalibrator", ["venn_abers", VennAbers()])
def test_in_recalibrated_classifier_and_pipeline(recalibrator):
    from sklearn.datasets import make_classification
    from sklearn.frozen import FrozenEstimator
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from skcalib.recalibration import PredictionTransformer, RecalibratedClassifier

    X, y = make_classification(n_samples=600, n_classes=3, n_informative=4, random_state=0)
    clf = RecalibratedClassifier(LogisticRegression(), recalibrator, cv=3).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (600, 3)
    assert_allclose(P.sum(axis=1), 1.0)
    assert all(isinstance(r, VennAbers) for r in clf.recalibrators_)
    # a fitted model's scores followed by VennAbers in a pipeline: the same as fitting by hand
    model = LogisticRegression().fit(X[:300], y[:300])
    S = model.decision_function(X[300:])
    pipe = make_pipeline(PredictionTransformer(FrozenEstimator(model)), VennAbers())
    assert_allclose(pipe.fit(X[300:], y[300:]).predict_proba(X[:10]),
                    VennAbers().fit(S, y[300:]).predict_proba(model.decision_function(X[:10])))


# venn_abers.venn_abers.predict_proba_prefitted_va(P3_CAL, Y3_CAL, P3_TEST, va_tpe="one_vs_one")
REF3_P_OVO = np.array([[0.5072463768115941, 0.28985507246376807, 0.2028985507246377],
                       [0.14454664914586077, 0.5519053876478318, 0.3035479632063074],
                       [0.20635793642063585, 0.3316466835331646, 0.4619953800461995],
                       [0.2863340563991324, 0.16702819956616055, 0.546637744034707]])


def test_multiclass_one_vs_one_reference_values():
    va = VennAbers(multiclass="ovo").fit(P3_CAL, Y3_CAL)
    assert_allclose(va.predict_proba(P3_TEST), REF3_P_OVO, rtol=1e-13)
    assert len(va.thresholds_) == 3                       # pairs (0, 1), (0, 2), (1, 2)
    # the pair (0, 1) is fitted on the samples of classes 0 and 1 only
    n01 = np.isin(Y3_CAL, [0, 1]).sum()
    assert va.thresholds_[0].size == np.unique(P3_CAL[Y3_CAL < 2, 1] / P3_CAL[Y3_CAL < 2, :2]
                                               .sum(axis=1)).size <= n01
    with pytest.raises(ValueError, match="multiclass='ovo'"):
        va.predict_interval(P3_TEST)


def test_one_vs_one_is_binary_ivap_for_two_classes():
    rng = np.random.default_rng(9)
    z, y = _overconfident(200, rng)
    a = VennAbers(multiclass="ovo").fit(z, y)
    b = VennAbers().fit(z, y)
    assert_allclose(a.predict_proba(z), b.predict_proba(z))
    assert_allclose(a.predict_interval(z), b.predict_interval(z))


def test_one_vs_one_absent_class_and_zero_weights():
    """A pair without calibration data (class 2 absent, or all its weights zero) gives the
    uninformative pairwise interval [0, 1], merged 1/2."""
    rng = np.random.default_rng(10)
    P = rng.dirichlet(np.ones(3), size=60)
    y = rng.integers(0, 3, 60)
    w = np.where(y == 2, 0.0, 1.0)
    Q = VennAbers(multiclass="ovo").fit(P, y, sample_weight=w).predict_proba(P)
    keep = y < 2
    R = VennAbers(multiclass="ovo", labels=[0, 1, 2]).fit(P[keep], y[keep]).predict_proba(P)
    assert_allclose(Q, R)
    assert np.all(np.isfinite(Q)) and np.all(Q > 0)
    assert_allclose(Q.sum(axis=1), 1.0)


def _sequential_lower_hull(X, Y):
    """Monotone-chain prefix hull pointers, one point at a time (the textbook algorithm)."""
    out, stack = [-1] * len(X), []
    for i in range(len(X)):
        while len(stack) >= 2:
            o, c = stack[-2], stack[-1]
            if (X[c] - X[o]) * (Y[i] - Y[o]) <= (Y[c] - Y[o]) * (X[i] - X[o]):
                stack.pop()
            else:
                break
        if stack:
            out[i] = stack[-1]
        stack.append(i)
    return np.array(out)


@pytest.mark.parametrize("shape", ["labels", "weighted", "concave", "convex", "zigzag", "ties"])
def test_vectorised_hull_pointers_equal_the_monotone_chain(shape):
    from skcalib.recalibration._venn_abers import _prefix_hull, _suffix_hull

    rng = np.random.default_rng(3)
    k = 3000
    X = np.arange(k + 1.0)
    if shape == "labels":
        Y = np.concatenate([[0.0], np.cumsum(rng.random(k) < np.sort(rng.random(k)))])
    elif shape == "weighted":
        W = rng.integers(1, 5, k).astype(float)
        X = np.concatenate([[0.0], np.cumsum(W)])
        Y = np.concatenate([[0.0], np.cumsum(W * (rng.random(k) < np.linspace(0, 1, k)))])
    elif shape == "concave":
        Y = -X ** 2
    elif shape == "convex":
        Y = X ** 2
    elif shape == "zigzag":
        Y = (np.arange(k + 1) % 2).astype(float)
    else:                                              # long collinear runs of both labels
        Y = np.concatenate([[0.0], np.cumsum(np.repeat(rng.integers(0, 2, 60), 50))])
    assert_array_equal(_prefix_hull(X, Y), _sequential_lower_hull(X, Y))
    nxt = _suffix_hull(X, Y)
    rev = _sequential_lower_hull(-X[::-1], Y[::-1])[::-1]
    assert_array_equal(nxt, np.where(rev >= 0, k - rev, -1))
