"""Size and power of the calibration tests on ensemble (``Empirical``) predictions (issue 23,
item 5).

**The calibrated ensemble.** Row ``i`` predicts the empirical law ``P_i`` of ``m`` draws
``x_ik = mu_i + s_i z_ik`` (locations ``mu_i ~ N(0, 1)``, spreads ``s_i ~ U(0.5, 2)``, optionally
with random per-draw weights), and its target is *one of its own draws*, ``y_i = x_iK`` with
``P(K = k) = w_ik``. Given the prediction ``P_i`` the target is then distributed as ``P_i``: the
model is calibrated in the sense of the kernel calibration error, ``P(Y | P_X) = P_X``.

A target drawn from the law the members came from, ``y_i ~ N(mu_i, s_i^2)``, is **not**
calibrated for the empirical law. Given ``P_i``, such a target is continuous, so it never hits an
atom that ``P_i`` puts mass ``1 / m`` on, and it has the spread ``s_i^2``, whereas the
``m`` members' population variance has expectation ``(m - 1) / m * s_i^2``: the ensemble is
under-dispersed by a factor ``(m - 1) / m``. The tests cannot see this at ``m = 10`` and
moderate ``n``, but at ``m = 2`` (a factor 1/2) the SKCE test rejects it nearly always
(:func:`test_members_law_is_not_the_prediction`).

Rates are rejection rates at ``ALPHA = 0.05`` over seeded data sets; a size passes when the
exact (Clopper--Pearson) confidence interval of the rate at the stated level contains ``ALPHA``.
The default suite runs reduced versions (small ``n``, 99.9% bands) that still fail if the size is
off by a factor of about two; the ``slow`` suite runs 500-1000 data sets with 99% bands.
Measured rates are printed with ``pytest -s``.
"""

import numpy as np
import pytest
from scipy import stats
from threadpoolctl import threadpool_limits

from skcalib import quantile_calibration_error
from skcalib.distributions import Empirical
from skcalib.stats import consistency_test, skce_test

ALPHA = 0.05


def clopper_pearson(k, reps, level):
    """Exact (Clopper--Pearson) confidence interval of a binomial rate ``k / reps``."""
    ci = stats.binomtest(k, reps).proportion_ci(confidence_level=level, method="exact")
    return ci.low, ci.high


def test_clopper_pearson_against_beta_quantiles():
    # independent check of the band: the Clopper-Pearson ends are beta quantiles
    for k, reps in [(0, 100), (5, 100), (31, 500), (100, 100)]:
        low, high = clopper_pearson(k, reps, 0.99)
        expect_low = 0.0 if k == 0 else stats.beta.ppf(0.005, k, reps - k + 1)
        expect_high = 1.0 if k == reps else stats.beta.ppf(0.995, k + 1, reps - k)
        assert low == pytest.approx(expect_low, abs=1e-9)
        assert high == pytest.approx(expect_high, abs=1e-9)


def ensemble(rng, n, m, target="own draw", weighted=False):
    """One data set ``(y, Empirical)`` of the ensemble model of the module docstring.

    ``target``: ``"own draw"`` (calibrated), ``"members' law"`` (``N(mu_i, s_i^2)``, not
    calibrated), ``"narrow"`` (``N(mu_i, (0.3 s_i)^2)``: the ensemble is over-dispersed),
    ``"shifted"`` (an own draw plus 1: biased).
    """
    mu = rng.normal(size=n)
    s = rng.uniform(0.5, 2.0, size=n)
    x = mu[:, None] + s[:, None] * rng.normal(size=(n, m))
    w = rng.uniform(0.2, 1.0, size=(n, m)) if weighted else np.full((n, m), 1.0 / m)
    w = w / w.sum(axis=1, keepdims=True)
    # the index of the target's draw, by weight (inverse CDF of each row's weights)
    k = np.minimum((rng.uniform(size=(n, 1)) > np.cumsum(w, axis=1)).sum(axis=1), m - 1)
    own = x[np.arange(n), k]
    if target == "own draw":
        y = own
    elif target == "members' law":
        y = mu + s * rng.normal(size=n)
    elif target == "narrow":
        y = mu + 0.3 * s * rng.normal(size=n)
    elif target == "shifted":
        y = own + 1.0
    else:  # pragma: no cover - a typo in a test
        raise ValueError(target)
    return y, Empirical(x, w if weighted else None)


def rejection_rate(run, reps, seed, **model):
    """Fraction of ``reps`` seeded data sets of :func:`ensemble` with ``run(y, pred, rng) <=
    ALPHA``; data set ``r`` and the test's randomness come from one generator."""
    children = np.random.SeedSequence(seed).spawn(reps)
    pvalues = np.empty(reps)
    with threadpool_limits(limits=1, user_api="blas"):
        for r, child in enumerate(children):
            rng = np.random.default_rng(child)
            y, pred = ensemble(rng, **model)
            pvalues[r] = run(y, pred, rng)
    assert np.all((pvalues >= 0) & (pvalues <= 1))
    return int(np.sum(pvalues <= ALPHA))


def _skce(method):
    return lambda y, pred, rng: skce_test(y, pred, method=method, random_state=rng).pvalue


def _assert_size(k, reps, level, label):
    low, high = clopper_pearson(k, reps, level)
    print(f"\n{label}: rejection rate {k / reps:.3f} ({k}/{reps}), "
          f"{level:.1%} CP band [{low:.3f}, {high:.3f}]")
    assert low <= ALPHA <= high, (label, k, reps)


# --------------------------------------------------------------------------------------------
# skce_test: size on calibrated ensembles (defaults: method="auto" = bootstrap, and the block
# test with its default block size 2), default kernel (median heuristics on W2 and targets)


@pytest.mark.parametrize("method, reps, weighted", [
    ("auto", 150, False), ("auto", 100, True), ("block", 300, False), ("block", 150, True)])
def test_skce_test_size_calibrated_ensemble(method, reps, weighted):
    # the weighted laws take the merge path of W2 in the median heuristic and the kernel
    k = rejection_rate(_skce(method), reps, seed=[23, 1, weighted], n=60, m=10,
                       weighted=weighted)
    _assert_size(k, reps, 0.999, f"skce_test {method}, n=60 m=10 {weighted=}")


@pytest.mark.slow
@pytest.mark.parametrize("method, reps", [("auto", 500), ("block", 1000)])
@pytest.mark.parametrize("weighted, n", [(False, 200), (True, 100)], ids=["equal", "weighted"])
def test_skce_test_size_calibrated_ensemble_full(method, reps, weighted, n):
    # weighted laws at n = 100: their W2 (merge path) costs 4x the equal-weight one
    k = rejection_rate(_skce(method), reps, seed=[23, 2, weighted], n=n, m=10,
                       weighted=weighted)
    _assert_size(k, reps, 0.99, f"skce_test {method}, n={n} m=10 {weighted=}")


def test_skce_test_size_small_ensembles():
    # m = 3 members: laws of three atoms, far from the continuous laws of the Normal families
    # the tests were first checked on; the size still holds
    reps = 150
    k = rejection_rate(_skce("auto"), reps, seed=[23, 3], n=60, m=3)
    _assert_size(k, reps, 0.999, "skce_test auto, n=60 m=3")


# --------------------------------------------------------------------------------------------
# skce_test: power


@pytest.mark.parametrize("target", ["narrow", "shifted"])
def test_skce_test_power_miscalibrated_ensemble(target):
    reps = 40
    k = rejection_rate(_skce("auto"), reps, seed=[23, 4], n=100, m=10, target=target)
    print(f"\nskce_test auto power ({target}, n=100 m=10): {k / reps:.3f}")
    assert k / reps >= 0.95
    # the linear-time block test has less power at this n, but rejects most of the time
    k = rejection_rate(_skce("block"), 100, seed=[23, 5], n=200, m=10, target=target)
    print(f"skce_test block power ({target}, n=200 m=10): {k / 100:.3f}")
    assert k / 100 >= 0.6


def test_members_law_is_not_the_prediction():
    # targets from N(mu_i, s_i^2) with m = 2 members: the empirical law's variance is s_i^2 / 2
    # on average, the targets are over-dispersed for it (see the module docstring)
    reps = 30
    k = rejection_rate(_skce("auto"), reps, seed=[23, 6], n=200, m=2, target="members' law")
    print(f"\nskce_test auto on members' law targets (n=200 m=2): {k / reps:.3f}")
    assert k / reps >= 0.9
    # the same predictions with own-draw targets (calibrated) are not rejected
    k = rejection_rate(_skce("auto"), reps, seed=[23, 6], n=200, m=2)
    print(f"skce_test auto on own-draw targets (n=200 m=2): {k / reps:.3f}")
    assert k / reps <= 0.2


# --------------------------------------------------------------------------------------------
# consistency_test: the conditional test draws synthetic targets from the predictions
# (Empirical._draw), so its size checks the sampling of the family. Default suite: a cheap
# statistic (the quantile calibration error of the step CDF); slow suite: the SKCE.


def _consistency(metric, n_resamples):
    def run(y, pred, rng):
        return consistency_test(metric, y, pred, n_resamples=n_resamples,
                                random_state=rng).pvalue
    return run


def _qce(y, pred):
    return quantile_calibration_error(y, pred, quantiles=19)


def test_consistency_test_size_and_power_ensemble():
    # 39 resamples: under the null P(p <= 0.05) = 2/40 exactly for a continuous statistic, at
    # most that with ties (the step CDF makes ties likely), so only the upper end is a defect
    reps = 150
    k = rejection_rate(_consistency(_qce, 39), reps, seed=[23, 7], n=60, m=10,
                       weighted=True)
    low, high = clopper_pearson(k, reps, 0.999)
    print(f"\nconsistency_test (QCE) size: {k / reps:.3f} [{low:.3f}, {high:.3f}]")
    assert low <= ALPHA
    assert k / reps >= 0.01           # not degenerate: the statistic does vary
    k = rejection_rate(_consistency(_qce, 39), 30, seed=[23, 8], n=100, m=10,
                       target="shifted")
    print(f"consistency_test (QCE) power (shifted): {k / 30:.3f}")
    assert k / 30 >= 0.9


@pytest.mark.slow
def test_consistency_test_skce_size_ensemble_full():
    reps = 300
    k = rejection_rate(_consistency("skce", 39), reps, seed=[23, 9], n=40, m=10,
                       weighted=True)
    _assert_size(k, reps, 0.99, "consistency_test skce, n=40 m=10 weighted")
    k = rejection_rate(_consistency("skce", 39), 50, seed=[23, 10], n=60, m=10,
                       target="narrow")
    print(f"consistency_test skce power (narrow): {k / 50:.3f}")
    assert k / 50 >= 0.9
