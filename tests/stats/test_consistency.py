"""skcalib.stats.consistency_test: the conditional Monte-Carlo test and consistency resampling.

The size checks are statistical with seeded generators: under a calibrated model the rejection
count of the conditional test (exact in finite samples) must lie in the binomial 99.9% interval
around alpha = 0.05.
"""

import functools

import numpy as np
import pytest
from scipy import stats

import skcalib
from skcalib import calibration_error, skce
from skcalib.distributions import Categorical, Laplace, Mixture, MultivariateNormal, Normal
from skcalib.kernels import GaussianKernel
from skcalib.stats import CalibrationTestResult, consistency_test
from skcalib.stats import _consistency
from skcalib.stats._consistency import sample_labels

ALPHA = 0.05


def _calibrated(rng, n, K):
    P = rng.dirichlet(np.ones(K), size=n)
    y = np.array([rng.choice(K, p=row) for row in P])  # independent of the sampler under test
    return y, P


def _linear_skce(y, P, labels):
    """A cheap calibration statistic: the biased SKCE with the linear kernel, ``||R^T P||^2/n^2``
    with residuals ``R = e_y - P`` (needs ``labels`` when a class is missing)."""
    idx = np.searchsorted(labels, y)
    R = -np.asarray(P, dtype=float)
    R[np.arange(len(y)), idx] += 1.0
    return float(np.sum((R.T @ P) ** 2)) / len(y) ** 2


# --------------------------------------------------------------------------------------------
# The label sampler


def test_sample_labels_frequencies_chi_square():
    probs = np.array([[0.5, 0.3, 0.2, 0.0],
                      [0.0, 0.1, 0.0, 0.9],
                      [0.25, 0.25, 0.25, 0.25],
                      [0.0, 0.0, 1.0, 0.0]])
    rng = np.random.default_rng(20261125)
    draws = sample_labels(probs, rng, size=40000)
    assert draws.shape == (40000, 4)
    for i, p in enumerate(probs):
        counts = np.bincount(draws[:, i], minlength=4)
        assert np.all(counts[p == 0] == 0), "a class of probability 0 was drawn"
        keep = p > 0
        if keep.sum() > 1:
            res = stats.chisquare(counts[keep], 40000 * p[keep])
            assert res.pvalue > 1e-3, (i, counts)


def test_sample_labels_batched_rows_and_unnormalised_rows():
    # a stack of (M, n, K) rows (the consistency resampler's layout), rows summing to 2
    rng = np.random.default_rng(1)
    P = np.array([[0.2, 1.8], [1.5, 0.5]])
    stack = np.broadcast_to(P, (30000, 2, 2))
    codes = sample_labels(stack, rng)
    assert codes.shape == (30000, 2)
    for i in range(2):
        counts = np.bincount(codes[:, i], minlength=2)
        assert stats.chisquare(counts, 30000 * P[i] / 2).pvalue > 1e-3


# --------------------------------------------------------------------------------------------
# Size: the conditional test is exact


def _binomial_bounds(n_rep, level=0.999):
    lo, hi = stats.binom.interval(level, n_rep, ALPHA)
    return lo, hi


def test_conditional_test_is_exact_binary_ece():
    rng = np.random.default_rng(12)
    n_rep = 300
    rejections = 0
    for _ in range(n_rep):
        p = rng.uniform(size=50)
        y = (rng.uniform(size=50) < p).astype(int)
        res = consistency_test("ece", y, p, n_resamples=99, random_state=rng, labels=[0, 1])
        rejections += res.pvalue <= ALPHA
    lo, hi = _binomial_bounds(n_rep)
    assert lo <= rejections <= hi, rejections


def test_conditional_test_is_exact_three_classes():
    rng = np.random.default_rng(13)
    n_rep = 300
    rejections = 0
    for _ in range(n_rep):
        y, P = _calibrated(rng, 50, 3)
        res = consistency_test(_linear_skce, y, P, n_resamples=99, random_state=rng,
                               labels=[0, 1, 2])
        rejections += res.pvalue <= ALPHA
    lo, hi = _binomial_bounds(n_rep)
    assert lo <= rejections <= hi, rejections


@pytest.mark.slow
def test_conditional_test_is_exact_three_classes_ece():
    rng = np.random.default_rng(14)
    n_rep = 500
    rejections = 0
    for _ in range(n_rep):
        y, P = _calibrated(rng, 50, 3)
        res = consistency_test("ece", y, P, n_resamples=99, random_state=rng)
        rejections += res.pvalue <= ALPHA
    lo, hi = stats.binom.interval(0.99, n_rep, ALPHA)
    assert lo <= rejections <= hi, rejections


def test_conditional_test_size_normal_predictions():
    rng = np.random.default_rng(15)
    n_rep = 150
    rejections = 0
    for _ in range(n_rep):
        d = Normal(rng.normal(size=30), rng.uniform(0.5, 2.0, size=30))
        y = d.sample(random_state=rng)
        res = consistency_test("skce", y, d, n_resamples=39, random_state=rng)
        rejections += res.pvalue <= ALPHA
    lo, hi = _binomial_bounds(n_rep)
    assert lo <= rejections <= hi, rejections


# --------------------------------------------------------------------------------------------
# Consistency resampling: the documented flaw with the binned ECE


def test_consistency_resampling_with_binned_ece_is_anti_conservative():
    # Widmann et al. (2019): 10-class Dirichlet(0.1) calibrated model, canonical ECE with 10 bins
    # per class; consistency resampling rejects (almost) always, the conditional test does not.
    rng = np.random.default_rng(16)
    kw = {"mode": "canonical", "n_bins": 10}
    rates = {}
    for method in ("consistency", "conditional"):
        rej = 0
        for r in range(8):
            P = rng.dirichlet(np.full(10, 0.1), size=250)
            y = np.array([rng.choice(10, p=row) for row in P])
            res = consistency_test("ece", y, P, method=method, n_resamples=49, random_state=r,
                                   labels=np.arange(10), metric_kwargs=kw)
            rej += res.pvalue <= ALPHA
        rates[method] = rej / 8
    assert rates["consistency"] > 0.5
    assert rates["conditional"] <= 0.25


# --------------------------------------------------------------------------------------------
# Power


@pytest.mark.parametrize("method", ["conditional", "consistency"])
@pytest.mark.parametrize("metric", ["ece", "skce", "mmce", "ucme"])
def test_always_class_zero_is_rejected(method, metric):
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(3), size=100)
    y = np.zeros(100, dtype=int)
    res = consistency_test(metric, y, P, method=method, n_resamples=49, labels=[0, 1, 2],
                           random_state=0)
    assert res.pvalue == pytest.approx(1 / 50)
    assert np.all(res.null_distribution < res.statistic)


@pytest.mark.parametrize("dist_factory", [
    lambda mu, sd: Normal(mu, sd),
    lambda mu, sd: Laplace(mu, sd),
    lambda mu, sd: MultivariateNormal(np.c_[mu, -mu], np.c_[sd, sd] ** 2),
    lambda mu, sd: Mixture([0.4, 0.6], [Normal(mu, sd), Normal(mu + 1.0, sd)]),
], ids=["normal", "laplace", "mvn", "mixture"])
@pytest.mark.parametrize("method", ["conditional", "consistency"])
def test_distributions_shifted_targets_are_rejected(dist_factory, method):
    rng = np.random.default_rng(4)
    mu, sd = rng.normal(size=40), rng.uniform(0.5, 1.0, size=40)
    d = dist_factory(mu, sd)
    y = d.sample(random_state=5)
    bad = consistency_test("skce", y + 3.0, d, method=method, n_resamples=19, random_state=0)
    assert bad.pvalue == pytest.approx(1 / 20)
    assert bad.null_distribution.shape == (19,)
    assert bad.statistic == pytest.approx(skce(y + 3.0, d), rel=1e-12)


# --------------------------------------------------------------------------------------------
# The result, the p-value and reproducibility


def test_result_fields_and_pvalue_formula():
    rng = np.random.default_rng(6)
    y, P = _calibrated(rng, 60, 3)
    res = consistency_test("ece", y, P, n_resamples=59, random_state=1)
    assert isinstance(res, CalibrationTestResult)
    assert res.statistic == res.estimate == pytest.approx(calibration_error(y, P))
    assert res.method == "conditional" and res.n_samples == 60 and res.n_resamples == 59
    null = res.null_distribution
    assert null.shape == (59,)
    assert res.pvalue == (1 + np.count_nonzero(null >= res.statistic)) / 60
    res0 = consistency_test("ece", y, P, n_resamples=59, random_state=1, add_one=False)
    np.testing.assert_array_equal(res0.null_distribution, null)
    assert res0.pvalue == np.count_nonzero(null >= res.statistic) / 59
    statistic, pvalue = res
    assert (statistic, pvalue) == (res.statistic, res.pvalue)
    with pytest.raises(ValueError, match="confidence interval"):
        res.confidence_interval()


def test_null_is_the_metric_on_targets_drawn_from_the_predictions():
    # Brute force: replay the conditional sampler's stream and evaluate the metric directly.
    rng = np.random.default_rng(7)
    y, P = _calibrated(rng, 20, 3)
    res = consistency_test(_linear_skce, y, P, n_resamples=5, random_state=11)
    gen = np.random.default_rng(11)
    gen.integers(2**32)  # the metric seed is drawn first
    (stream,) = gen.spawn(1)
    codes = sample_labels(P, stream, size=5)
    expected = [_linear_skce(np.arange(3)[c], P, np.arange(3)) for c in codes]
    np.testing.assert_allclose(res.null_distribution, expected, rtol=0, atol=0)


def test_random_state_is_deterministic():
    rng = np.random.default_rng(8)
    y, P = _calibrated(rng, 40, 3)
    for method in ("conditional", "consistency"):
        a = consistency_test("ece", y, P, method=method, n_resamples=30, random_state=3)
        b = consistency_test("ece", y, P, method=method, n_resamples=30, random_state=3)
        c = consistency_test("ece", y, P, method=method, n_resamples=30, random_state=4)
        np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
        assert not np.array_equal(a.null_distribution, c.null_distribution)
    g1 = consistency_test("ece", y, P, n_resamples=30, random_state=np.random.default_rng(5))
    g2 = consistency_test("ece", y, P, n_resamples=30, random_state=np.random.default_rng(5))
    np.testing.assert_array_equal(g1.null_distribution, g2.null_distribution)
    r = consistency_test("ece", y, P, n_resamples=30, random_state=np.random.RandomState(0))
    assert r.null_distribution.shape == (30,)


@pytest.mark.parametrize("method", ["conditional", "consistency"])
def test_results_do_not_depend_on_n_jobs(monkeypatch, method):
    # several batches (the unit of parallel work and of seeding)
    monkeypatch.setattr(_consistency, "_MAX_BATCH", 7)
    rng = np.random.default_rng(9)
    y, P = _calibrated(rng, 30, 3)
    one = consistency_test("ece", y, P, method=method, n_resamples=40, random_state=2)
    two = consistency_test("ece", y, P, method=method, n_resamples=40, random_state=2,
                           n_jobs=2)
    np.testing.assert_array_equal(one.null_distribution, two.null_distribution)
    assert one.pvalue == two.pvalue


def test_batches_draw_independent_streams(monkeypatch):
    monkeypatch.setattr(_consistency, "_MAX_BATCH", 5)
    rng = np.random.default_rng(10)
    y, P = _calibrated(rng, 30, 3)
    null = consistency_test(_linear_skce, y, P, n_resamples=20, random_state=0).null_distribution
    assert np.unique(null).size == 20  # batches do not repeat each other's draws


# --------------------------------------------------------------------------------------------
# Data-dependent metric parameters are fixed on the observed data


def _recording(func, calls):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        calls.append(kwargs)
        return func(*args, **kwargs)
    return wrapper


@pytest.mark.parametrize("method", ["conditional", "consistency"])
def test_named_skce_uses_one_resolved_kernel(monkeypatch, method):
    calls = []
    monkeypatch.setitem(_consistency._NAMED_METRICS, "skce", _recording(skce, calls))
    rng = np.random.default_rng(11)
    y, P = _calibrated(rng, 40, 3)
    res = consistency_test("skce", y, P, method=method, n_resamples=10, random_state=0)
    assert len(calls) == 11
    ls = {c["kernel"].pred_kernel.length_scale for c in calls}
    assert len(ls) == 1 and isinstance(ls.pop(), float)  # numeric, the same for every call
    # the observed statistic is skcalib.skce with its default kernel (n <= 1000: no subsampling)
    assert res.statistic == pytest.approx(skce(y, P), rel=1e-12)


def test_named_skce_null_differs_from_refitting_the_median():
    # With consistency resampling the predictions change: refitting the median heuristic on each
    # resample (an unfixed callable) gives a different null than the fixed kernel.
    rng = np.random.default_rng(12)
    y, P = _calibrated(rng, 40, 3)
    fixed = consistency_test("skce", y, P, method="consistency", n_resamples=10, random_state=0)
    refit = consistency_test(lambda yy, pp, labels: skce(yy, pp, labels=labels), y, P,
                             method="consistency", n_resamples=10, random_state=0)
    assert fixed.statistic == pytest.approx(refit.statistic)
    assert not np.allclose(fixed.null_distribution, refit.null_distribution)


def test_named_ucme_uses_fixed_test_locations(monkeypatch):
    calls = []
    monkeypatch.setitem(_consistency._NAMED_METRICS, "ucme",
                        _recording(skcalib.ucme, calls))
    rng = np.random.default_rng(13)
    y, P = _calibrated(rng, 40, 3)
    consistency_test("ucme", y, P, n_resamples=6, random_state=0)
    first = calls[0]
    assert first["test_predictions"].shape == (10, 3)
    for c in calls[1:]:
        assert c["test_predictions"] is first["test_predictions"]
        assert c["test_targets"] is first["test_targets"]
        assert c["random_state"] == first["random_state"]


def test_named_mmce_resolves_a_median_length_scale(monkeypatch):
    calls = []
    monkeypatch.setitem(_consistency._NAMED_METRICS, "mmce", _recording(skcalib.mmce, calls))
    rng = np.random.default_rng(14)
    y, P = _calibrated(rng, 40, 3)
    kw = {"kernel": GaussianKernel("median")}
    consistency_test("mmce", y, P, method="consistency", n_resamples=5, random_state=0,
                     metric_kwargs=kw)
    assert kw == {"kernel": kw["kernel"]} and kw["kernel"].length_scale == "median"  # unchanged
    scales = {c["kernel"].length_scale for c in calls}
    assert len(scales) == 1 and isinstance(scales.pop(), float)


def test_distribution_kernel_is_resolved_once(monkeypatch):
    calls = []
    monkeypatch.setitem(_consistency._NAMED_METRICS, "skce", _recording(skce, calls))
    rng = np.random.default_rng(15)
    d = Normal(rng.normal(size=30), np.ones(30))
    y = d.sample(random_state=0)
    res = consistency_test("skce", y, d, method="consistency", n_resamples=5, random_state=0)
    kernels = {(c["kernel"].pred_kernel.length_scale, c["kernel"].target_kernel.length_scale)
               for c in calls}
    assert len(kernels) == 1 and all(isinstance(v, float) for v in kernels.pop())
    assert res.statistic == pytest.approx(skce(y, d), rel=1e-12)


# --------------------------------------------------------------------------------------------
# Inputs: layouts, labels, weights


def test_one_column_binary_equals_two_columns():
    rng = np.random.default_rng(16)
    p = rng.uniform(size=50)
    y = (rng.uniform(size=50) < p).astype(int)
    for method in ("conditional", "consistency"):
        a = consistency_test("ece", y, p, method=method, n_resamples=20, random_state=1)
        b = consistency_test("ece", y, np.c_[1 - p, p], method=method, n_resamples=20,
                             random_state=1)
        c = consistency_test("ece", y, p[:, None], method=method, n_resamples=20,
                             random_state=1)
        np.testing.assert_allclose(a.null_distribution, b.null_distribution, rtol=1e-12)
        np.testing.assert_allclose(a.null_distribution, c.null_distribution, rtol=1e-12)


def test_one_column_input_reaches_the_metric_as_one_column_with_pos_label():
    rng = np.random.default_rng(17)
    p_neg = rng.uniform(size=40)  # P("neg")
    y = np.where(rng.uniform(size=40) < p_neg, "neg", "pos")
    seen = []

    def metric(yy, pp, *, labels=None, pos_label=None):
        seen.append((np.ndim(pp), pos_label, tuple(labels)))
        return calibration_error(yy, pp, labels=labels, pos_label=pos_label)

    res = consistency_test(metric, y, p_neg, pos_label="neg", n_resamples=5, random_state=0)
    assert set(seen) == {(1, "neg", ("neg", "pos"))}
    assert res.statistic == pytest.approx(calibration_error(y, p_neg, pos_label="neg"))


def test_string_labels_and_a_class_missing_from_resamples():
    rng = np.random.default_rng(18)
    P = rng.dirichlet(np.ones(2), size=60)
    P = np.c_[P * (1 - 1e-12), np.full(60, 1e-12)]  # class "c" (almost) never drawn
    y = np.where(rng.uniform(size=60) < P[:, 0], "a", "b")
    seen = set()

    def metric(yy, pp, labels):
        seen.update(np.unique(yy).tolist())
        assert list(labels) == ["a", "b", "c"]
        return calibration_error(yy, pp, labels=labels)

    for method in ("conditional", "consistency"):
        res = consistency_test(metric, y, P, method=method, labels=["a", "b", "c"],
                               n_resamples=10, random_state=0)
        assert np.isfinite(res.pvalue)
    assert seen == {"a", "b"}


def test_categorical_predictions():
    rng = np.random.default_rng(19)
    y, P = _calibrated(rng, 40, 3)
    classes = np.array(["x", "y", "z"])
    cat = Categorical(P, classes)
    seen = []

    def metric(yy, pp, labels):
        seen.append(type(pp))
        return calibration_error(yy, pp, labels=labels)

    a = consistency_test(metric, classes[y], cat, n_resamples=10, random_state=0)
    b = consistency_test("ece", classes[y], P, labels=classes, n_resamples=10, random_state=0)
    assert set(seen) == {Categorical}
    np.testing.assert_allclose(a.null_distribution, b.null_distribution, rtol=1e-12)


def test_sample_weight_travels_with_its_rows():
    rng = np.random.default_rng(20)
    p = rng.uniform(0.05, 0.95, size=40)
    y = (rng.uniform(size=40) < p).astype(int)
    w = 1.0 + p  # the weight is a function of the row's prediction

    seen = []

    def metric(yy, pp, *, labels, pos_label, sample_weight):
        np.testing.assert_allclose(sample_weight, 1.0 + pp)
        seen.append(pp)
        return calibration_error(yy, pp, labels=labels, pos_label=pos_label,
                                 sample_weight=sample_weight)

    for method in ("conditional", "consistency"):
        seen.clear()
        res = consistency_test(metric, y, p, method=method, n_resamples=10, random_state=0,
                               metric_kwargs={"sample_weight": w})
        assert res.statistic == pytest.approx(calibration_error(y, p, sample_weight=w))
        resampled = [not np.array_equal(pp, p) for pp in seen[1:]]
        # conditional: the predictions are kept; consistency: drawn with replacement from them
        assert all(resampled) if method == "consistency" else not any(resampled)
        assert all(np.isin(pp, p).all() for pp in seen)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(21)
    y, P = _calibrated(rng, 30, 3)
    y0, P0 = y.copy(), P.copy()
    kw = {"n_bins": 5}
    for method in ("conditional", "consistency"):
        consistency_test("ece", y, P, method=method, n_resamples=5, random_state=0,
                         metric_kwargs=kw)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(P, P0)
    assert kw == {"n_bins": 5}


def test_metric_returning_numpy_scalar_is_accepted():
    rng = np.random.default_rng(22)
    y, P = _calibrated(rng, 30, 3)
    res = consistency_test(lambda yy, pp, labels: np.float32(_linear_skce(yy, pp, labels)),
                           y, P, n_resamples=5, random_state=0)
    assert isinstance(res.statistic, float)


# --------------------------------------------------------------------------------------------
# Errors


@pytest.fixture
def data3():
    rng = np.random.default_rng(23)
    return _calibrated(rng, 20, 3)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"metric": "brier"}, ValueError, "metric"),
    ({"metric": 3}, TypeError, "metric"),
    ({"method": "bootstrap"}, ValueError, "method"),
    ({"n_resamples": 0}, ValueError, "n_resamples"),
    ({"n_resamples": 2.5}, TypeError, "n_resamples"),
    ({"n_resamples": True}, TypeError, "n_resamples"),
    ({"add_one": "yes"}, TypeError, "add_one"),
    ({"metric_kwargs": [("n_bins", 3)]}, TypeError, "metric_kwargs"),
    ({"metric_kwargs": {"labels": [0, 1, 2]}}, ValueError, "metric_kwargs"),
    ({"metric_kwargs": {"pos_label": 1}}, ValueError, "metric_kwargs"),
    ({"metric_kwargs": {1: 2}}, TypeError, "metric_kwargs"),
    ({"random_state": -1}, ValueError, "random_state"),
    ({"random_state": "seed"}, ValueError, "random_state"),
    ({"n_jobs": 0}, ValueError, "n_jobs"),
    ({"n_jobs": 1.5}, TypeError, "n_jobs"),
])
def test_invalid_parameters_raise_before_any_work(data3, kwargs, exc, match):
    y, P = data3
    calls = []

    def metric(yy, pp, labels):
        calls.append(1)
        return 0.0

    args = {"metric": metric, "n_resamples": 5, **kwargs}
    m = args.pop("metric")
    with pytest.raises(exc, match=match):
        consistency_test(m, y, P, **args)
    assert calls == []


def test_invalid_data_raise(data3):
    y, P = data3
    with pytest.raises(ValueError, match="y_pred"):
        consistency_test("ece", y, P[:, :2], n_resamples=5)
    with pytest.raises(ValueError, match="y_true"):
        consistency_test("ece", y[:-1], P, n_resamples=5)
    d = Normal(np.zeros(5), np.ones(5))
    with pytest.raises(ValueError, match="labels"):
        consistency_test("skce", np.zeros(5), d, labels=[0, 1], n_resamples=5)
    with pytest.raises(ValueError, match="'ece' needs class probabilities"):
        consistency_test("ece", np.zeros(5), d, n_resamples=5)
    with pytest.raises(ValueError, match="sample_weight"):
        consistency_test("ece", y, P, n_resamples=5, metric_kwargs={"sample_weight": [1, 2]})


@pytest.mark.parametrize("bad, exc, match", [
    (float("nan"), ValueError, "metric returned nan"),
    (np.ones(2), TypeError, "metric must return a scalar"),
    ("0.5", TypeError, "metric must return a real number"),
    (True, TypeError, "metric must return a real number"),
])
def test_bad_metric_values_raise(data3, bad, exc, match):
    y, P = data3
    with pytest.raises(exc, match=match):
        consistency_test(lambda yy, pp: bad, y, P, n_resamples=5)


def test_nan_in_the_null_raises(data3):
    y, P = data3
    calls = []

    def metric(yy, pp):
        calls.append(1)
        return 0.0 if len(calls) == 1 else float("nan")

    with pytest.raises(ValueError, match="synthetic data set"):
        consistency_test(metric, y, P, n_resamples=5)


def test_public_api():
    assert "consistency_test" in skcalib.stats.__all__
    assert skcalib.stats.consistency_test is consistency_test


@pytest.mark.parametrize("options", [
    {}, {"mode": "classwise"}, {"mode": "canonical", "norm": "l2"}, {"norm": "max"},
    {"norm": "l2", "debias": True, "squared": True}, {"strategy": "quantile", "n_bins": 7},
    {"mode": "binary", "pos_label": 2},
])
@pytest.mark.parametrize("weighted", [False, True])
def test_fixed_prediction_errors_equal_the_metric_on_each_draw(options, weighted):
    """The binned error's fast path of the conditional test (bins, confidences and prediction
    sums computed once) gives calibration_error's value on every synthetic label vector."""
    from skcalib._problems.binned import FixedPredictionErrors
    from skcalib.stats._consistency import _ResamplingProblem as _Problem, _sample_from_cdf

    rng = np.random.default_rng(4)
    n = 300
    P = rng.dirichlet([0.5, 1.0, 2.0], size=n)
    P[:20, :2] = 0.4                        # top-label ties
    P[:20, 2] = 0.2
    y = rng.integers(0, 3, n) + 1           # labels 1, 2, 3
    if options.get("mode") == "binary":
        P = P[:, :2] / P[:, :2].sum(axis=1, keepdims=True)
        y = np.where(y == 3, 2, y)
    kwargs = dict(options)
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    if weighted:
        kwargs["sample_weight"] = w
    problem = _Problem(calibration_error, y, P, None, None, kwargs, seed=0)
    assert isinstance(problem.fast, FixedPredictionErrors)
    codes = _sample_from_cdf(problem.cdf, np.random.default_rng(9), size=6)
    fast = problem.fast.values(codes)
    classes = problem.data.classes
    for b in range(6):
        expected = calibration_error(classes[codes[b]], P, labels=classes, sample_weight=w,
                                     **options)
        assert fast[b] == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_fast_path_keeps_the_p_value_and_other_metrics_keep_the_generic_path():
    from skcalib.stats._consistency import _ResamplingProblem as _Problem

    rng = np.random.default_rng(5)
    P = rng.dirichlet([1, 1, 1], size=200)
    y = rng.integers(0, 3, 200)
    res = consistency_test("ece", y, P, n_resamples=199, random_state=3)
    by_hand = consistency_test(lambda a, b, labels: calibration_error(a, b, labels=labels),
                               y, P, n_resamples=199, random_state=3)
    assert res.pvalue == by_hand.pvalue and res.statistic == by_hand.statistic
    assert _Problem("skce", y, P, None, None, {}, seed=0).fast is None
