"""Size, power and coverage of the calibration tests of :mod:`skcalib.stats` (issue 12, item 5).

Every check simulates seeded replications of a generative model with known calibration and
compares a rate with a binomial interval computed by :func:`binomial_interval`:

* **size**: under a calibrated model the rejection rate at ``ALPHA = 0.05`` lies in the
  equal-tailed 99% binomial interval of ``Binomial(reps, 0.05) / reps`` (the distribution-free
  bounds: at most its upper end);
* **power**: under a miscalibrated model the rejection rate is at least 0.99, or, where the papers
  report less power, within the binomial 99% interval of the papers' rate;
* **coverage** of :func:`skcalib.stats.skce_ci` on the miscalibrated Gaussian model, whose SKCE is
  known exactly (:func:`skcalib.datasets.gaussian_predictions_skce`).

Models: the Dirichlet models M1 (calibrated), M2 and M3 of Widmann et al. (2019) with ``n = 250``,
``m = 10``, ``alpha = 0.1`` and their kernel ``exp(-TV / nu)`` (their median heuristic) times the
delta kernel on labels; the Gaussian models of Widmann et al. (2021) with their kernel
``exp(-W2) exp(-|y - y'|^2 / 2)``.

The ``slow`` suite (``make test-slow``, about 7 minutes on one core) uses 200 to 1000
replications; a fast subset with 100-200 replications and 99.9% intervals runs in ``make test``.
Known departures from the nominal level are asserted against their measured, documented values
instead of being hidden: the conservative ``B = floor(sqrt(n))`` block test on the
one-dimensional Gaussian model, the CME test at moderate ``n`` (liberal), and consistency resampling with the finely binned ECE of the paper
(anti-conservative). Measured rates are printed with ``pytest -s``.
"""

import functools
import math

import numpy as np
import pytest
from scipy import stats
from threadpoolctl import threadpool_limits

from skcalib.datasets import (
    gaussian_predictions_skce,
    make_dirichlet_predictions,
    make_gaussian_predictions,
)
from skcalib.kernels import (
    ExponentialKernel,
    GaussianKernel,
    WassersteinKernel,
    median_heuristic,
    tensor,
)
from skcalib.stats import consistency_test, skce_ci, skce_test, ucme_test

ALPHA = 0.05


def binomial_interval(n, p, level):
    """Equal-tailed acceptance interval of the rate ``X / n`` of ``X ~ Binomial(n, p)``.

    Returns ``(low, high)`` with ``P(low <= X / n <= high) >= level`` and each tail outside at
    most ``(1 - level) / 2`` (``scipy.stats.binom.interval``).
    """
    low, high = stats.binom.interval(level, n, p)
    return low / n, high / n


def test_binomial_interval_brute_force():
    # independent check: sum the binomial pmf over the interval and over each tail
    for n, p, level in [(20, 0.05, 0.99), (500, 0.05, 0.99), (200, 0.05, 0.999),
                        (500, 0.95, 0.99), (1000, 0.186, 0.99)]:
        low, high = binomial_interval(n, p, level)
        k = np.arange(n + 1)
        pmf = np.array([math.comb(n, int(j)) * p ** j * (1 - p) ** (n - j) for j in k])
        inside = (k >= round(low * n)) & (k <= round(high * n))
        assert pmf[inside].sum() >= level
        assert pmf[k < round(low * n)].sum() <= (1 - level) / 2 + 1e-12
        assert pmf[k > round(high * n)].sum() <= (1 - level) / 2 + 1e-12
        # the interval is the narrowest such: one step in loses a tail bound
        assert pmf[k <= round(low * n)].sum() > (1 - level) / 2 or round(low * n) == 0
        assert pmf[k >= round(high * n)].sum() > (1 - level) / 2


# ------------------------------------------------------------------------------------------------
# Models: each returns (y_true, y_pred, kernel, extra keyword arguments)


def tv_kernel(P):
    """The kernel of Widmann et al. (2019) for predictions ``P``: ``exp(-TV / nu)`` times the delta
    kernel on labels, with their median heuristic ``nu`` (over the full distance matrix,
    including its zero diagonal), computed on each data set's predictions."""
    return ExponentialKernel(median_heuristic(P, metric="tv", include_diagonal=True), metric="tv")


#: The kernel of Widmann et al. (2021): exp(-W2(p, p')) exp(-|y - y'|^2 / 2).
W_KERNEL = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
_LABELS = {"labels": np.arange(10)}


def _dirichlet(pi, target):
    def draw(rng):
        P, y = make_dirichlet_predictions(250, 10, concentration=0.1, miscalibration=pi,
                                          target=target, random_state=rng)
        return y, P, tv_kernel(P), _LABELS
    return draw


def _gaussian(n, d, calibrated):
    def draw(rng):
        pred, y = make_gaussian_predictions(n, n_dims=d, calibrated=calibrated, random_state=rng)
        return y, pred, W_KERNEL, {}
    return draw


MODELS = {
    "M1": _dirichlet(0.0, "first"),
    "M2": _dirichlet(0.5, "first"),
    "M3": _dirichlet(1.0, "uniform"),
    "normal-d1-n256": _gaussian(256, 1, True),
    "normal-d10-n256": _gaussian(256, 10, True),
    "normal-d1-n1024": _gaussian(1024, 1, True),
    "normal-d10-n1024": _gaussian(1024, 10, True),
    "normal-d1-n64": _gaussian(64, 1, True),
    "shifted-d1-n64": _gaussian(64, 1, False),
    "shifted-d10-n64": _gaussian(64, 10, False),
    "shifted-d1-n256": _gaussian(256, 1, False),
    "shifted-d10-n256": _gaussian(256, 10, False),
}
_MODEL_IDS = {name: i for i, name in enumerate(MODELS)}


# ------------------------------------------------------------------------------------------------
# Tests: each maps (y, y_pred, kernel, extra, rng) to a p-value


def _skce(**kw):
    def run(y, pred, kernel, extra, rng):
        return skce_test(y, pred, kernel=kernel, random_state=rng, **extra, **kw).pvalue
    return run


def _ucme(y, pred, kernel, extra, rng):
    return ucme_test(y, pred, kernel=kernel, n_test_locations=10, random_state=rng,
                     **extra).pvalue


def _consistency(metric, method, n_resamples, **metric_kwargs):
    def run(y, pred, kernel, extra, rng):
        kwargs = dict(metric_kwargs)
        if metric == "skce":
            kwargs["kernel"] = kernel
        return consistency_test(metric, y, pred, method=method, n_resamples=n_resamples,
                                metric_kwargs=kwargs or None, random_state=rng,
                                **extra).pvalue
    return run


TESTS = {
    "block B=2": _skce(method="block"),
    "block B=sqrt(n)": _skce(method="block", block_size="sqrt"),
    "bootstrap": _skce(method="bootstrap", n_resamples=200),
    "spectral": _skce(method="spectral", n_resamples=500),
    "spectral Nystrom m=25": _skce(method="spectral", n_landmarks=25, n_resamples=500),
    "spectral Nystrom m=50": _skce(method="spectral", n_landmarks=50, n_resamples=500),
    "spectral Nystrom m=100": _skce(method="spectral", n_landmarks=100, n_resamples=500),
    "gamma": _skce(method="gamma"),
    "D unbiased": _skce(method="distribution_free"),
    "D block B=2": _skce(method="distribution_free", estimator="block"),
    "D biased": _skce(method="distribution_free", estimator="biased"),
    "ucme": _ucme,
    # the conditional test is exact: with 39 resamples P(p <= 0.05) = 2/40 under the null
    "conditional ECE": _consistency("ece", "conditional", 39),
    "conditional SKCE": _consistency("skce", "conditional", 39),
    "conditional ECE fast": _consistency("ece", "conditional", 19),
    "consistency ECE": _consistency("ece", "consistency", 39),
    # the paper's ECE of test C: canonical, 10 uniform bins per coordinate, TV distance
    "conditional ECE canonical": _consistency("ece", "conditional", 39, mode="canonical",
                                              n_bins=10),
    "consistency ECE canonical": _consistency("ece", "consistency", 39, mode="canonical",
                                              n_bins=10),
}


@functools.lru_cache(maxsize=None)
def rejection_rate(model, test, reps, seed=0):
    """Fraction of ``reps`` seeded replications of ``model`` with ``pvalue <= ALPHA``.

    Replication ``r`` draws its data and then the test's randomness from one generator seeded by
    ``(seed, model, r)``: every test of a model sees the same data sets.
    """
    draw, run = MODELS[model], TESTS[test]
    children = np.random.SeedSequence([seed, _MODEL_IDS[model]]).spawn(reps)
    pvalues = np.empty(reps)
    with threadpool_limits(limits=1, user_api="blas"):
        for r, child in enumerate(children):
            rng = np.random.default_rng(child)
            y, pred, kernel, extra = draw(rng)
            pvalues[r] = run(y, pred, kernel, extra, rng)
    assert np.all((pvalues >= 0) & (pvalues <= 1))
    rate = float(np.mean(pvalues <= ALPHA))
    print(f"\n{test} | {model} | reps={reps} | rejection rate {rate:.4f}")
    return rate


def _assert_size(model, test, reps, level, *, upper_only=False):
    rate = rejection_rate(model, test, reps)
    low, high = binomial_interval(reps, ALPHA, level)
    if upper_only:
        assert rate <= high, (test, model, rate, high)
    else:
        assert low <= rate <= high, (test, model, rate, (low, high))


# ------------------------------------------------------------------------------------------------
# FAST subset (runs in `make test`): 200 replications, 99.9% intervals

FAST_REPS = 200


@pytest.mark.parametrize("test", ["block B=2", "bootstrap", "spectral Nystrom m=50"])
def test_fast_size_M1(test):
    _assert_size("M1", test, FAST_REPS, 0.999)


def test_fast_conditional_test_size_M1():
    # exact: with 19 resamples P(p <= 0.05) = 1/20 under the null
    _assert_size("M1", "conditional ECE fast", FAST_REPS, 0.999)


def test_fast_distribution_free_never_rejects_M1():
    assert rejection_rate("M1", "D unbiased", FAST_REPS) == 0.0


@pytest.mark.parametrize("test", ["block B=2", "bootstrap"])
def test_fast_power_shifted_gaussian(test):
    assert rejection_rate("shifted-d1-n64", test, 100) >= 0.99


def test_fast_ci_coverage():
    cov = coverage("shifted-d1-n64", "normal U", FAST_REPS)
    low, high = binomial_interval(FAST_REPS, 0.95, 0.999)
    assert low <= cov <= high, cov


# ------------------------------------------------------------------------------------------------
# SLOW suite: size under calibrated models

SLOW_REPS = 1000
SLOW_REPS_EXPENSIVE = 500

_EXACT_LEVEL_SKCE = ["block B=2", "block B=sqrt(n)", "bootstrap", "spectral",
                     "spectral Nystrom m=50", "gamma"]
_DISTRIBUTION_FREE = ["D unbiased", "D block B=2", "D biased"]


@pytest.mark.slow
@pytest.mark.parametrize("test", _EXACT_LEVEL_SKCE)
def test_size_dirichlet_M1(test):
    _assert_size("M1", test, SLOW_REPS, 0.99)


@pytest.mark.slow
@pytest.mark.parametrize("test", _DISTRIBUTION_FREE)
@pytest.mark.parametrize("model", ["M1", "normal-d1-n256"])
def test_size_distribution_free(model, test):
    _assert_size(model, test, SLOW_REPS, 0.99, upper_only=True)
    # the bounds are very conservative: the papers' 0 rejections
    assert rejection_rate(model, test, SLOW_REPS) == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("test", ["block B=2", "bootstrap", "spectral", "gamma"])
@pytest.mark.parametrize("model", ["normal-d1-n256", "normal-d10-n256"])
def test_size_gaussian(model, test):
    _assert_size(model, test, SLOW_REPS, 0.99)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["normal-d1-n256", "normal-d10-n256"])
@pytest.mark.parametrize("test", ["spectral Nystrom m=25", "spectral Nystrom m=50",
                                  "spectral Nystrom m=100"])
def test_size_gaussian_nystrom(model, test):
    # The d = 10 model's centred Gram matrix has a slow spectral decay: a null from the top
    # eigenvalues alone was liberal there (0.112 with 25 landmarks, 0.064-0.069 with 50, over
    # 1000-2000 data sets). The spectrum beyond the landmarks now enters the null as a normal
    # with the missing variance (from E h^2), which restores the nominal level.
    _assert_size(model, test, SLOW_REPS, 0.99)


@pytest.mark.slow
def test_size_gaussian_sqrt_block():
    # B = floor(sqrt(n)) is conservative on the one-dimensional Gaussian model: the block
    # estimates are right-skewed, so the z statistic of few (16) blocks is left-skewed. The paper
    # reports type-I errors of 0.020-0.030 at n >= 64 (Widmann et al. 2021, Fig. 10; an
    # independent re-run 0.020-0.028); at d = 10 it is at the nominal level.
    _assert_size("normal-d10-n256", "block B=sqrt(n)", SLOW_REPS, 0.99)
    rate = rejection_rate("normal-d1-n256", "block B=sqrt(n)", SLOW_REPS)
    assert rate <= binomial_interval(SLOW_REPS, ALPHA, 0.99)[1]
    assert rate >= binomial_interval(SLOW_REPS, 0.02, 0.99)[0]


# ------------------------------------------------------------------------------------------------
# SLOW suite: power under miscalibrated models

_FULL_POWER = ["block B=2", "block B=sqrt(n)", "bootstrap", "spectral", "spectral Nystrom m=50",
               "gamma"]


@pytest.mark.slow
@pytest.mark.parametrize("test", _FULL_POWER)
@pytest.mark.parametrize("model", ["M2", "shifted-d1-n64", "shifted-d10-n64"])
def test_power_full(model, test):
    assert rejection_rate(model, test, SLOW_REPS_EXPENSIVE) >= 0.99


@pytest.mark.slow
@pytest.mark.parametrize("test", [t for t in _FULL_POWER if not t.startswith("block")])
def test_power_M3(test):
    assert rejection_rate("M3", test, SLOW_REPS_EXPENSIVE) >= 0.99


@pytest.mark.slow
def test_power_sqrt_block_test_M3():
    # Not in the paper (measured here): the B = floor(sqrt(n)) = 15 block test has less power on
    # M3 than the U-statistic tests (rejection rate about 0.96 over 1000 data sets), far more
    # than the linear test (about 0.19): a block estimator's variance falls with B.
    rate = rejection_rate("M3", "block B=sqrt(n)", SLOW_REPS)
    assert rate >= 0.9, rate
    assert rate > 4 * rejection_rate("M3", "block B=2", SLOW_REPS)


@pytest.mark.slow
def test_power_linear_test_M3_as_in_paper():
    # Widmann et al. (2019), Fig. 2: the linear test A_l has type-II error 0.8141 on M3
    # (10^4 data sets; an independent re-run 0.8135): rejection rate 0.1859.
    rate = rejection_rate("M3", "block B=2", SLOW_REPS)
    low, high = binomial_interval(SLOW_REPS, 1 - 0.8141, 0.99)
    assert low <= rate <= high, rate


@pytest.mark.slow
@pytest.mark.parametrize("model", ["M2", "M3"])
@pytest.mark.parametrize("test", ["D unbiased", "D block B=2"])
def test_distribution_free_no_power_as_in_paper(model, test):
    # Fig. 2: D_uq and D_ul never reject M2 or M3 at n = 250
    assert rejection_rate(model, test, SLOW_REPS) == 0.0


@pytest.mark.slow
def test_distribution_free_biased_power_M2_as_in_paper():
    # Fig. 2: D_b has type-II error 0.3706 on M2 (re-run 0.3875): rejection rate about 0.63; it
    # never rejects M3
    rate = rejection_rate("M2", "D biased", SLOW_REPS)
    low, high = binomial_interval(SLOW_REPS, 1 - 0.3706, 0.99)
    assert low <= rate <= high, rate
    assert rejection_rate("M3", "D biased", SLOW_REPS) == 0.0


# ------------------------------------------------------------------------------------------------
# SLOW suite: the CME (Hotelling) test and the resampling tests of any metric

@pytest.mark.slow
def test_ucme_size():
    # The chi-squared limit is reached slowly (Widmann et al. 2021, Figs. 10-11, J = 10: type-I
    # error 0.118-0.152 at n = 256; at n = 1024 0.074 (d = 10) and 0.068 (d = 1), an independent
    # re-run 0.042 and 0.080). At d = 10 and n = 1024 the level is nominal here (measured 0.042);
    # at d = 1 the test is still liberal (measured 0.102 over 500 data sets), which is tested
    # against the re-run's rate rather than against 0.05.
    _assert_size("normal-d10-n1024", "ucme", SLOW_REPS_EXPENSIVE, 0.99)
    rate = rejection_rate("normal-d1-n1024", "ucme", SLOW_REPS_EXPENSIVE)
    low, high = binomial_interval(SLOW_REPS_EXPENSIVE, 0.080, 0.99)
    assert low <= rate <= high, rate


@pytest.mark.slow
def test_ucme_size_M1():
    # Not in the papers (measured here): on M1 (n = 250, J = 10) the CME test is liberal like on
    # the Gaussian models at n = 256 (paper 0.118-0.152): 0.096 over 500 data sets.
    rate = rejection_rate("M1", "ucme", SLOW_REPS_EXPENSIVE)
    assert binomial_interval(SLOW_REPS_EXPENSIVE, ALPHA, 0.99)[0] <= rate <= 0.152, rate


@pytest.mark.slow
@pytest.mark.parametrize("model", ["M2", "shifted-d1-n64", "shifted-d10-n64"])
def test_ucme_power(model):
    assert rejection_rate(model, "ucme", SLOW_REPS_EXPENSIVE) >= 0.99


@pytest.mark.slow
def test_ucme_power_M3():
    # Not in the papers (measured here): with J = 10 random test locations the CME test rejects
    # M3 (SKCE 0.015, a small departure spread over all classes) in about 77% of the data sets,
    # while the U-statistic SKCE tests reject it always.
    assert rejection_rate("M3", "ucme", SLOW_REPS_EXPENSIVE) >= 0.7


@pytest.mark.slow
@pytest.mark.parametrize("model, test", [("M1", "conditional ECE"), ("M1", "conditional SKCE"),
                                         ("M1", "conditional ECE canonical"),
                                         ("normal-d1-n64", "conditional SKCE")])
def test_conditional_test_size(model, test):
    # exact in finite samples: with 39 resamples P(p <= 0.05) = 2/40 = 0.05 under the null
    _assert_size(model, test, SLOW_REPS_EXPENSIVE, 0.99)


@pytest.mark.slow
@pytest.mark.parametrize("model, test", [("M2", "conditional ECE"), ("M3", "conditional ECE"),
                                         ("M2", "conditional SKCE"), ("M3", "conditional SKCE"),
                                         ("shifted-d1-n64", "conditional SKCE")])
def test_conditional_test_power(model, test):
    assert rejection_rate(model, test, 200) >= 0.99


@pytest.mark.slow
def test_consistency_resampling_ece_is_anti_conservative():
    # The documented flaw (Widmann et al. 2019, Fig. 2, test C): consistency resampling with the
    # paper's binned ECE (canonical, 10 bins per coordinate) rejects the calibrated model M1
    # almost always (paper: 1.0 at every level). Its bins hold about one sample each, and the
    # duplicates of resampling with replacement share bins, which lowers the resampled ECE. The
    # conditional test with the same statistic keeps the predictions and is exact (see
    # test_conditional_test_size).
    rate = rejection_rate("M1", "consistency ECE canonical", 200)
    assert rate > binomial_interval(200, ALPHA, 0.999)[1]
    assert rate >= 0.9, rate


@pytest.mark.slow
def test_consistency_resampling_default_ece_M1():
    # Measured here: with skcalib's default ECE (top-label, 15 bins, each holding many samples)
    # the duplicates hardly matter and consistency resampling is close to the nominal level on
    # M1 (0.055 over 200 data sets); the flaw above is one of fine binnings.
    _assert_size("M1", "consistency ECE", 200, 0.999)


# ------------------------------------------------------------------------------------------------
# Coverage of skce_ci on the miscalibrated Gaussian model with its exact SKCE

CI_METHODS = {
    "normal U": dict(method="normal"),
    "normal block B=2": dict(method="normal", estimator="block"),
    "normal block B=sqrt(n)": dict(method="normal", estimator="block", block_size="sqrt"),
    "bootstrap U": dict(method="bootstrap", n_resamples=500),
}


@functools.lru_cache(maxsize=None)
def coverage(model, ci, reps, seed=1):
    """Fraction of ``reps`` seeded data sets of a miscalibrated Gaussian ``model`` whose 95%
    ``skce_ci`` interval contains the exact SKCE."""
    d = int(model.split("-")[1][1:])
    truth = gaussian_predictions_skce(d)
    children = np.random.SeedSequence([seed, _MODEL_IDS[model]]).spawn(reps)
    hits = np.empty(reps, dtype=bool)
    with threadpool_limits(limits=1, user_api="blas"):
        for r, child in enumerate(children):
            rng = np.random.default_rng(child)
            y, pred, kernel, extra = MODELS[model](rng)
            low, high = skce_ci(y, pred, kernel=kernel, confidence_level=0.95, random_state=rng,
                                **CI_METHODS[ci])
            hits[r] = low <= truth <= high
    cov = float(np.mean(hits))
    print(f"\nskce_ci {ci} | {model} | reps={reps} | coverage {cov:.4f}")
    return cov


@pytest.mark.slow
@pytest.mark.parametrize("ci", list(CI_METHODS))
@pytest.mark.parametrize("model", ["shifted-d1-n256", "shifted-d10-n256"])
def test_ci_coverage(model, ci):
    cov = coverage(model, ci, SLOW_REPS_EXPENSIVE)
    low, high = binomial_interval(SLOW_REPS_EXPENSIVE, 0.95, 0.99)
    assert low <= cov <= high, (ci, model, cov, (low, high))
