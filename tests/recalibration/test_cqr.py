"""Conformalized quantile regression (Romano, Patterson and Candes 2019) as a recalibrator:
the finite-sample coverage guarantee, checked over seeded data sets (issue 23, item 3).

The data sets are built so that the coverage of a recalibrated interval *given* its calibration
set is known exactly: ``y = mu(x) + sigma(x) eps`` with ``eps ~ N(0, 1)`` and ``sigma(x)`` one
of three values of known probability, and a quantile model ``mu(x) + b + c sigma(x) z_tau``
(biased, too narrow or too wide). The scores ``max(q_lo - y, y - q_hi)`` are then continuous
(no ties), and the coverage of ``[q_lo - Q, q_hi + Q]`` is
``mean_sigma [Phi((b + c sigma z_hi + Q) / sigma) - Phi((b + c sigma z_lo - Q) / sigma)]``.
For the ``k = ceil((n + 1)(1 - alpha))``-th smallest of ``n`` scores, that coverage is
``Beta(k, n + 1 - k)``-distributed, with mean ``k / (n + 1)`` in ``[1 - alpha, 1 - alpha + 1 /
(n + 1)]``: the tests check the mean over data sets against that band, the whole law (a KS test
against the Beta law), and a fresh test point per data set against its binomial band.
"""

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.base import BaseEstimator, RegressorMixin

from skcalib.distributions import Empirical, Normal, Quantiles
from skcalib.recalibration import ConformalQuantileRecalibration, QuantileRecalibration

LEVELS = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
SIGMAS = np.array([0.5, 1.0, 2.0])


def _data(n, rng, b=0.3, c=0.5):
    """Targets and the (miscalibrated) Quantiles predictions at LEVELS."""
    sigma = SIGMAS[rng.integers(0, 3, size=n)]
    mu = rng.normal(size=n)
    y = mu + sigma * rng.standard_normal(n)
    q = mu[:, None] + b + c * sigma[:, None] * stats.norm.ppf(LEVELS)
    return Quantiles(q, LEVELS), y


def _coverage(Q_lo, Q_hi, tau, b=0.3, c=0.5):
    """Exact coverage of the pair (tau, 1 - tau) corrected by ``Q_lo``, ``Q_hi``."""
    z = stats.norm.ppf(tau)
    s = SIGMAS
    lo = (b + c * s * z - Q_lo) / s
    hi = (b - c * s * z + Q_hi) / s
    return float(np.mean(stats.norm.cdf(hi) - stats.norm.cdf(lo)))


def _lower_miss(Q_lo, tau, b=0.3, c=0.5):
    z = stats.norm.ppf(tau)
    return float(np.mean(stats.norm.cdf((b + c * SIGMAS * z - Q_lo) / SIGMAS)))


def _coverage_study(n_sets, n_cal, seed, symmetric=True):
    """Exact conditional coverages (per pair) and one fresh test point's coverage per data
    set."""
    rng = np.random.default_rng(seed)
    cover = np.empty((n_sets, 2))
    fresh = np.empty((n_sets, 2), dtype=bool)
    lower_miss = np.empty((n_sets, 2))
    for r in range(n_sets):
        pred, y = _data(n_cal + 1, rng)
        cqr = ConformalQuantileRecalibration(symmetric=symmetric).fit(pred[:n_cal], y[:n_cal])
        assert cqr.pairs_ == [(0, 4), (1, 3)]
        out = cqr.transform(pred[n_cal:])
        for p, (tau, (Q_lo, Q_hi)) in enumerate(zip((0.05, 0.25), cqr.corrections_)):
            cover[r, p] = _coverage(Q_lo, Q_hi, tau)
            lower_miss[r, p] = _lower_miss(Q_lo, tau)
            lo, hi = out.values[0, p], out.values[0, 4 - p]
            fresh[r, p] = lo <= y[n_cal] <= hi
    return cover, fresh, lower_miss


def _check_coverage(cover, fresh, n_cal, width=1):
    """The guarantee, three ways, for the pairs alpha = 0.1 and 0.5 (``width``: 1 for the
    symmetric scores, 2 for the asymmetric ones)."""
    R = cover.shape[0]
    for p, alpha in enumerate((0.1, 0.5)):
        lo_band, hi_band = 1 - alpha, 1 - alpha + width / (n_cal + 1)
        # 1. the mean conditional coverage (= the coverage of a fresh point) within the band,
        # up to 4 standard errors of the mean over R data sets
        se = cover[:, p].std(ddof=1) / math.sqrt(R)
        assert lo_band - 4 * se <= cover[:, p].mean() <= hi_band + 4 * se, (alpha, cover.mean(0))
        # 2. a fresh test point per data set: covered with a probability in the band
        k = int(fresh[:, p].sum())
        assert stats.binom.cdf(k, R, lo_band) > 1e-3 and stats.binom.sf(k - 1, R, hi_band) > 1e-3
        if width == 1:
            # 3. the exact law of the conditional coverage: Beta(k, n + 1 - k)
            kk = math.ceil((n_cal + 1) * (1 - alpha) - 1e-12)
            assert stats.kstest(cover[:, p], stats.beta(kk, n_cal + 1 - kk).cdf).pvalue > 1e-3


def test_coverage_guarantee_reduced():
    """200 data sets of 55 calibration samples (where ceil((n + 1)(1 - alpha)) differs from
    ceil(n (1 - alpha)), so that an off-by-one order statistic fails the Beta law)."""
    cover, fresh, _ = _coverage_study(200, 55, seed=0)
    _check_coverage(cover, fresh, 55)


@pytest.mark.slow
@pytest.mark.parametrize("n_cal", [19, 100, 500])
def test_coverage_guarantee_full(n_cal):
    """1,000 data sets per calibration size (seeded by the issue number and the size)."""
    cover, fresh, _ = _coverage_study(1000, n_cal, seed=[23, n_cal])
    _check_coverage(cover, fresh, n_cal)


def test_asymmetric_coverage_and_tails():
    """symmetric=False: coverage in [1 - alpha, 1 - alpha + 2 / (n + 1)] and each tail's miss
    rate at most alpha / 2 (on average over data sets)."""
    n_cal = 55
    cover, fresh, lower_miss = _coverage_study(200, n_cal, seed=1, symmetric=False)
    _check_coverage(cover, fresh, n_cal, width=2)
    for p, alpha in enumerate((0.1, 0.5)):
        se = lower_miss[:, p].std(ddof=1) / math.sqrt(cover.shape[0])
        # the lower tail is itself a one-sided conformal bound at level 1 - alpha / 2
        k = math.ceil((n_cal + 1) * (1 - alpha / 2) - 1e-12)
        assert abs(lower_miss[:, p].mean() - (1 - k / (n_cal + 1))) < 4 * se


def test_the_reduced_study_can_fail():
    """The same checks reject the plain (n instead of n + 1) empirical quantile: its corrections
    are the ceil(n (1 - alpha))-th order statistics."""
    rng = np.random.default_rng(0)
    n_cal, R = 55, 200
    cover = np.empty((R, 2))
    for r in range(R):
        pred, y = _data(n_cal, rng)
        V = pred.values
        for p, (i, j, tau) in enumerate(((0, 4, 0.05), (1, 3, 0.25))):
            E = np.sort(np.maximum(V[:, i] - y, y - V[:, j]))
            Q = E[math.ceil(n_cal * (1 - 2 * tau)) - 1]
            cover[r, p] = _coverage(Q, Q, tau)
    kk = math.ceil((n_cal + 1) * 0.9)
    assert stats.kstest(cover[:, 0], stats.beta(kk, n_cal + 1 - kk).cdf).pvalue < 1e-3


def test_a_badly_miscalibrated_model_becomes_calibrated():
    """Intervals three times too narrow and biased: about 40% coverage for a nominal 90%,
    exactly the nominal one after CQR (one calibration set of 2,000: its coverage is
    Beta(k, n + 1 - k), within 4 of its standard deviations of k / (n + 1))."""
    rng = np.random.default_rng(3)
    n_cal = 2000
    pred, y = _data(n_cal, rng, b=0.3, c=1 / 3)
    cqr = ConformalQuantileRecalibration().fit(pred, y)
    for (Q_lo, Q_hi), tau, alpha in zip(cqr.corrections_, (0.05, 0.25), (0.1, 0.5)):
        before = _coverage(0.0, 0.0, tau, c=1 / 3)
        after = _coverage(Q_lo, Q_hi, tau, c=1 / 3)
        k = math.ceil((n_cal + 1) * (1 - alpha))
        beta = stats.beta(k, n_cal + 1 - k)
        assert before < 1 - alpha - 0.1
        assert abs(after - beta.mean()) < 4 * beta.std()
    # the empirical coverage on a large fresh test set agrees
    test, yt = _data(20000, rng, b=0.3, c=1 / 3)
    out = cqr.transform(test)
    covered = (out.values[:, 0] <= yt) & (yt <= out.values[:, 4])
    assert abs(covered.mean() - _coverage(*cqr.corrections_[0], 0.05, c=1 / 3)) < 4 * math.sqrt(
        0.09 / 20000)


def test_too_wide_intervals_are_narrowed():
    rng = np.random.default_rng(4)
    pred, y = _data(1000, rng, b=0.0, c=2.0)
    cqr = ConformalQuantileRecalibration().fit(pred, y)
    assert np.all(cqr.corrections_ < 0)
    out = cqr.transform(pred)
    assert np.all(np.diff(out.values, axis=1) >= 0)
    np.testing.assert_array_equal(out.values[:, 2], pred.values[:, 2])   # the median stays


def test_interval_and_dict_forms_agree_with_quantiles():
    rng = np.random.default_rng(5)
    pred, y = _data(300, rng)
    test, _ = _data(20, rng)
    V, T = pred.values, test.values
    for symmetric in (True, False):
        q = ConformalQuantileRecalibration(symmetric=symmetric).fit(pred, y)
        out = q.transform(test)
        a = ConformalQuantileRecalibration(level=0.9, symmetric=symmetric).fit(V[:, [0, 4]], y)
        np.testing.assert_array_equal(a.transform(T[:, [0, 4]]), out.values[:, [0, 4]])
        d = ConformalQuantileRecalibration(symmetric=symmetric).fit(
            {0.9: V[:, [0, 4]], 0.5: V[:, [1, 3]]}, y)
        got = d.transform({0.5: T[:, [1, 3]], 0.9: T[:, [0, 4]]})
        assert sorted(got) == [0.5, 0.9]
        np.testing.assert_array_equal(got[0.9], out.values[:, [0, 4]])
        np.testing.assert_array_equal(got[0.5], out.values[:, [1, 3]])
        np.testing.assert_array_equal(d.coverage_levels_, [0.5, 0.9])
        np.testing.assert_array_equal(q.coverage_levels_, [0.9, 0.5])
    # a hand computation: the ceil(301 * 0.9) = 271st smallest score
    E = np.sort(np.maximum(V[:, 0] - y, y - V[:, 4]))
    assert ConformalQuantileRecalibration(level=0.9).fit(V[:, [0, 4]], y).corrections_[0, 0] \
        == E[270]


def test_unpaired_levels_stay_and_crossing_is_sorted():
    """Levels without a partner are kept; a correction that makes the quantiles cross (an outer
    pair narrowed inside an inner one) is rearranged by sorting each row."""
    levels = [0.1, 0.3, 0.5, 0.8, 0.9]
    V = np.tile([-1.0, -0.2, 0.0, 0.5, 1.0], (40, 1))
    y = np.zeros(40)     # all targets at the median: the 80% pair is narrowed by 1
    pred = Quantiles(V, levels)
    cqr = ConformalQuantileRecalibration().fit(pred, y)
    assert cqr.pairs_ == [(0, 4)]
    assert cqr.corrections_[0, 0] == -1.0
    out = cqr.transform(pred)
    np.testing.assert_array_equal(out.values[0], [-0.2, 0.0, 0.0, 0.0, 0.5])


def test_weights():
    rng = np.random.default_rng(6)
    pred, y = _data(200, rng)
    a = ConformalQuantileRecalibration().fit(pred, y, sample_weight=np.full(200, 3.0))
    b = ConformalQuantileRecalibration().fit(pred, y)
    np.testing.assert_array_equal(a.corrections_, b.corrections_)
    w = np.r_[np.zeros(100), np.ones(100)]
    c = ConformalQuantileRecalibration().fit(pred, y, sample_weight=w)
    d = ConformalQuantileRecalibration().fit(pred[100:], y[100:])
    np.testing.assert_array_equal(c.corrections_, d.corrections_)
    assert c.n_calibration_ == 100


def test_bad_input():
    rng = np.random.default_rng(7)
    pred, y = _data(30, rng)
    with pytest.raises(ValueError, match="level .*must be given"):
        ConformalQuantileRecalibration().fit(pred.values[:, [0, 4]], y)
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        ConformalQuantileRecalibration(level=1.0).fit(pred.values[:, [0, 4]], y)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 2\)"):
        ConformalQuantileRecalibration(level=0.9).fit(pred.values, y)
    with pytest.raises(ValueError, match="no symmetric pair"):
        ConformalQuantileRecalibration().fit(Quantiles(pred.values[:, :2], LEVELS[:2]), y)
    with pytest.raises(TypeError, match="Normal predictions; ConformalQuantileRecalibration "
                                        "takes Quantiles"):
        ConformalQuantileRecalibration().fit(Normal(y, 1.0), y)
    with pytest.raises(TypeError, match="Empirical"):
        ConformalQuantileRecalibration().fit(Empirical(pred.values), y)
    ok = ConformalQuantileRecalibration(level=0.5).fit(pred.values[:, [1, 3]], y)
    with pytest.raises(ValueError, match="form 'quantiles' but the corrections were fitted on "
                                         "'interval'"):
        ok.transform(pred)
    big, yb = _data(100, rng)
    fitted = ConformalQuantileRecalibration().fit(big, yb)
    with pytest.raises(ValueError, match="levels"):
        fitted.transform(Quantiles(big.values[:, 1:4], LEVELS[1:4]))
    with pytest.raises(ValueError, match="y has 30 samples but the predictions have 100"):
        ConformalQuantileRecalibration().fit(big, y)


def test_too_few_samples_message():
    rng = np.random.default_rng(8)
    pred, y = _data(8, rng)
    with pytest.raises(ValueError, match=r"8 calibration samples are too few for the coverage "
                                         r"1 - alpha = 0\.9.*n >= 9"):
        ConformalQuantileRecalibration().fit(pred, y)


def test_inputs_are_not_mutated_and_refit_is_idempotent():
    rng = np.random.default_rng(9)
    pred, y = _data(100, rng)
    B = pred.values[:, [0, 4]].copy()
    B0, y0 = B.copy(), y.copy()
    est = ConformalQuantileRecalibration(level=0.9)
    a = est.fit(B, y).transform(B)
    b = est.fit(B, y).transform(B)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(B, B0)
    np.testing.assert_array_equal(y, y0)


def test_pickle_and_clone():
    import pickle
    from sklearn.base import clone
    rng = np.random.default_rng(10)
    pred, y = _data(100, rng)
    est = ConformalQuantileRecalibration().fit(pred, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.transform(pred).values, est.transform(pred).values)
    assert clone(est).get_params() == {"level": None, "symmetric": True}


def test_predict_and_predict_distribution():
    rng = np.random.default_rng(11)
    pred, y = _data(100, rng)
    est = ConformalQuantileRecalibration().fit(pred, y)
    out = est.predict_distribution(pred)
    np.testing.assert_array_equal(out.values, est.transform(pred).values)
    np.testing.assert_allclose(est.predict(pred), out.mean)
    arr = ConformalQuantileRecalibration(level=0.9).fit(pred.values[:, [0, 4]], y)
    with pytest.raises(TypeError, match="not a distribution"):
        arr.predict_distribution(pred.values[:, [0, 4]])


def test_quantile_recalibration_cannot_widen_beyond_the_support():
    """QuantileRecalibration also recalibrates Quantiles (every level), but within the support
    of their linear tails: intervals that are too narrow stay too narrow where the targets fall
    beyond the support, while CQR widens them to the nominal coverage."""
    rng = np.random.default_rng(12)
    pred, y = _data(3000, rng, c=0.8)
    test, yt = _data(20000, rng, c=0.8)
    qr = QuantileRecalibration(n_knots=100).fit(pred, y).transform(test)
    lo, hi = qr.ppf(0.05), qr.ppf(0.95)
    assert np.mean((lo <= yt) & (yt <= hi)) < 0.86
    cqr = ConformalQuantileRecalibration().fit(pred, y).transform(test)
    lo, hi = cqr.values[:, 0], cqr.values[:, 4]
    assert abs(np.mean((lo <= yt) & (yt <= hi)) - 0.9) < 0.01


class _ShiftModel(RegressorMixin, BaseEstimator):
    """A fitted 'model' of the data sets above: its predict_distribution reads the features
    ``[mu, sigma]`` and returns the miscalibrated Quantiles (b = 0.3, c = 1/3)."""

    def fit(self, X, y):
        return self

    def __sklearn_is_fitted__(self):
        return True

    def predict(self, X):
        return X[:, 0] + 0.3

    def predict_distribution(self, X):
        X = np.asarray(X)
        q = X[:, :1] + 0.3 + X[:, 1:2] / 3 * stats.norm.ppf(LEVELS)
        return Quantiles(q, LEVELS)


def test_split_conformal_through_the_meta_estimator():
    """RecalibratedRegressor(FrozenEstimator(model), recalibrator="cqr") is split conformal
    prediction: its corrections are those of the recalibrator fitted on the model's predictions
    of the calibration data, and its coverage on fresh data is the nominal one."""
    from sklearn.frozen import FrozenEstimator
    from skcalib.recalibration import RecalibratedRegressor
    rng = np.random.default_rng(13)

    def draw(n):
        sigma = SIGMAS[rng.integers(0, 3, size=n)]
        mu = rng.normal(size=n)
        return np.column_stack([mu, sigma]), mu + sigma * rng.standard_normal(n)

    X, y = draw(1000)
    meta = RecalibratedRegressor(FrozenEstimator(_ShiftModel()), recalibrator="cqr").fit(X, y)
    direct = ConformalQuantileRecalibration().fit(_ShiftModel().predict_distribution(X), y)
    np.testing.assert_array_equal(meta.recalibrators_[0].corrections_, direct.corrections_)
    Xt, yt = draw(20000)
    out = meta.predict_distribution(Xt)
    covered = np.mean((out.values[:, 0] <= yt) & (yt <= out.values[:, 4]))
    exact = _coverage(*direct.corrections_[0], 0.05, c=1 / 3)
    assert abs(covered - exact) < 4 * math.sqrt(0.09 / 20000)
    k = math.ceil(1001 * 0.9)
    beta = stats.beta(k, 1001 - k)
    assert abs(exact - beta.mean()) < 4 * beta.std()
