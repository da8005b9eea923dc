"""Ground-truth tests of skcalib.estimation on synthetic data with known calibration.

Sources: the specification seed-002 (Gruber & Bach, "Optimizing estimators of squared calibration
errors in classification"), sections 2.8 (the temperature family h_sim), 4.1 (the paper's
simulation and its table of risks), 4.4 (the analytic binary case S2), 7.2 (pitfall P13) and 8
(the end-to-end sanity run).

1. The generator ``make_dirichlet_calibration`` (Dirichlet(0.04) sampled in log space,
   f = softmax(0.3 log P)) and its population truths.
2. The paper's simulation (issue item 5): the empirical risk of h_sim(theta) =
   TemperatureCalibrationEstimator(temperature=0.3 / theta) on the same 500 samples is minimised
   at theta = 1 and matches the spec's table.
3. The estimators against ground truth, with train/test splits: the binary case S2 (truth 1/30)
   and the Dirichlet model (canonical truth E||f - P||^2).

Tolerances. Statistical checks compare with k standard errors (k = 3 or 4, stated at each check)
computed from the data of the test itself; where a check could pass vacuously because the standard
error is large, the standard error is bounded too. Everything is seeded, so the tests are
deterministic; the tolerances say how surprising a failure would be for other seeds.
"""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from scipy.special import softmax

from skcalib.datasets import (
    BINARY_SQUARED_CALIBRATION_ERROR,
    DIRICHLET_CALIBRATION_ACCURACY,
    DIRICHLET_CALIBRATION_ERRORS,
    DIRICHLET_CALIBRATION_ERRORS_SE,
    dirichlet_calibration_errors,
    make_binary_squared_calibration,
    make_dirichlet_calibration,
    squared_calibration_errors,
)
from skcalib.datasets._gruber_bach import _neighbour_pair_terms
from skcalib.estimation import (
    BinnedCalibrationEstimator,
    KDECalibrationEstimator,
    KernelRidgeCalibrationEstimator,
    TemperatureCalibrationEstimator,
    ZeroCalibrationEstimator,
    calibration_risk,
)

#: The spec's [SIM] values (§4.1), rounded as printed there.
SPEC_ACCURACY = 0.906
SPEC_CCE2 = 0.0633
SPEC_TCE2 = 0.0362
SPEC_CWCE2 = 0.0527
SPEC_MEAN_CONFIDENCE = 0.740
SPEC_RISK_OPTIMAL = 0.00867   # population R_CE(h*)
SPEC_RISK_ZERO = 0.00968      # population R_CE(0)

#: §4.1 table: R_hat(h_sim(theta)) at n = 500 over 100 repetitions -- theta: (mean, sd).
SPEC_RISK_TABLE = {
    0.0: (0.05697, 0.00192),
    0.3: (0.00983, 0.00099),
    0.5: (0.00943, 0.00100),
    0.75: (0.00895, 0.00103),
    0.9: (0.00885, 0.00106),
    1.0: (0.00883, 0.00108),
    1.1: (0.00884, 0.00110),
    1.25: (0.00891, 0.00114),
    1.5: (0.00908, 0.00119),
    2.0: (0.00948, 0.00128),
    3.0: (0.01020, 0.00142),
}
THETAS = tuple(SPEC_RISK_TABLE)
#: Half a unit in the last printed digit of the spec's values.
SPEC_ROUNDING = 5e-6

pytestmark = pytest.mark.usefixtures("single_threaded_blas")




def _mean_se(values):
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


# ================================================================================================
# 1. The generator and its truths
# ================================================================================================

@pytest.fixture(scope="module")
def big_sample():
    """10^5 draws of the default model with the true probabilities."""
    return make_dirichlet_calibration(100_000, random_state=20250, return_truth=True)


def test_log_space_sampling_has_no_exact_zeros(big_sample):
    # Pitfall P13: numpy's dirichlet(0.04) has exact zeros in ~3% of the entries; the log-space
    # sampler has none (P underflows only below exp(-745), probability < 1e-12 per entry).
    f, _, P = big_sample
    assert np.all(P > 0) and np.all(f > 0)
    assert np.all(np.isfinite(np.log(P))) and np.all(np.isfinite(np.log(f)))
    assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert_allclose(f.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # the sparsity that breaks linear-space sampling is really there: 47% of the entries of P
    # are below 1e-6 and 1e-4 of them below 1e-100 (the smallest is about 1e-151)
    assert np.mean(P < 1e-6) > 0.4 and P.min() < 1e-100


def test_accuracy_is_binomial_around_0906(big_sample):
    f, y, P = big_sample
    n = y.size
    correct = f.argmax(axis=1) == y
    assert np.array_equal(f.argmax(axis=1), P.argmax(axis=1))  # f is monotone in P
    # 4 binomial standard errors (sd = sqrt(p (1 - p) / n) = 9.2e-4 at n = 1e5); the spec's
    # 0.906 is rounded to 5e-4, and the constant has a Monte-Carlo error of 1e-5.
    se = math.sqrt(DIRICHLET_CALIBRATION_ACCURACY * (1 - DIRICHLET_CALIBRATION_ACCURACY) / n)
    assert abs(correct.mean() - DIRICHLET_CALIBRATION_ACCURACY) < 4 * se
    assert abs(correct.mean() - SPEC_ACCURACY) < 4 * se + 5e-4
    # E[max P] is the accuracy; its per-sample sd is smaller than the Bernoulli one
    assert abs(P.max(axis=1).mean() - DIRICHLET_CALIBRATION_ACCURACY) < 4 * se
    assert abs(DIRICHLET_CALIBRATION_ACCURACY - SPEC_ACCURACY) <= 5e-4
    # underconfident: mean top-label confidence 0.740 (4 SE of the sample mean + rounding)
    conf_mean, conf_se = _mean_se(f.max(axis=1))
    assert abs(conf_mean - SPEC_MEAN_CONFIDENCE) < 4 * conf_se + 5e-4
    assert conf_mean < correct.mean() - 0.1


def test_canonical_error_monte_carlo():
    """E||f - P||^2 = 0.0633 (spec), 0.063303 (constant, 1e8 samples), from 2e5 fresh draws."""
    f, _, P = make_dirichlet_calibration(200_000, random_state=7, return_truth=True)
    mean, se = _mean_se(squared_calibration_errors(f, P))
    assert se < 2e-4  # informative: 0.3% of the value
    assert abs(mean - DIRICHLET_CALIBRATION_ERRORS["canonical"]) < 4 * se
    assert abs(mean - SPEC_CCE2) < 4 * se + 5e-5


def test_labels_are_distributed_as_P(big_sample):
    f, y, P = big_sample
    n, d = P.shape
    E = np.eye(d)[y] - P
    # (a) E[e_y - P] = 0, each class within 4 SE (Var = sum_i P_ik (1 - P_ik))
    se = np.sqrt((P * (1 - P)).sum(axis=0)) / n
    assert np.all(np.abs(E.mean(axis=0)) < 4 * se), (E.mean(axis=0), se)
    # (b) P is calibrated: for each class, counts in 10 bins of P_k (equal mass) agree with the
    # expected counts; sum of squared z-scores ~ chi2(10), rejected below p = 1e-3 only
    for k in range(d):
        order = np.argsort(P[:, k])
        z = [E[idx, k].sum() / math.sqrt((P[idx, k] * (1 - P[idx, k])).sum())
             for idx in np.array_split(order, 10)]
        chi2 = float(np.sum(np.square(z)))
        assert stats.chi2.sf(chi2, df=10) > 1e-3, (k, chi2)


def test_truth_is_the_temperature_scaled_prediction(big_sample):
    f, _, P = big_sample
    assert_allclose(softmax(np.log(f) / 0.3, axis=1), P, rtol=1e-8, atol=1e-300)


def test_population_truths_agree_with_constants_and_spec():
    """dirichlet_calibration_errors on 2e5 fresh samples vs the 1e8-sample constants and §4.1."""
    errors, se = dirichlet_calibration_errors(n_samples=200_000, random_state=11, return_se=True)
    spec = {"canonical": SPEC_CCE2, "top_label": SPEC_TCE2, "classwise": SPEC_CWCE2}
    for key, value in DIRICHLET_CALIBRATION_ERRORS.items():
        # 4 combined SE (batch-means SE of 10 batches: conservative-ish, hence 4 rather than 3)
        combined = math.hypot(se[key], DIRICHLET_CALIBRATION_ERRORS_SE[key])
        assert se[key] < 5e-4
        assert abs(errors[key] - value) < 4 * combined, (key, errors[key], value, combined)
        # the spec's values are rounded to 5e-5 and have their own MC error (~3e-5)
        assert abs(value - spec[key]) < 5e-5 + 3e-5, (key, value, spec[key])
    assert abs(errors["accuracy"] - DIRICHLET_CALIBRATION_ACCURACY) < 4 * math.hypot(
        se["accuracy"], DIRICHLET_CALIBRATION_ERRORS_SE["accuracy"])
    # ordering of the notions: canonical > class-wise > top-label
    assert errors["canonical"] > errors["classwise"] > errors["top_label"] > 0


def test_neighbour_pairs_recover_an_analytic_conditional():
    """The neighbour-pair estimator behind the top-label truth, on S2: E[(c - c^2)^2] = 1/30.

    Given the sorted c, the labels are independent Bernoulli(c^2), so the pair products are
    unbiased for (c_i - c_i^2)(c_j - c_j^2); 4 SE of the mean of the 5e4 pair products.
    """
    c, y = make_binary_squared_calibration(100_000, random_state=3)
    mean, se = _mean_se(_neighbour_pair_terms(c, y))
    assert se < 1e-3
    assert abs(mean - BINARY_SQUARED_CALIBRATION_ERROR) < 4 * se, (mean, se)
    # in the order of c, the pairs are neighbours: same result for shuffled input
    perm = np.random.default_rng(0).permutation(c.size)
    assert _neighbour_pair_terms(c[perm], y[perm]).mean() == pytest.approx(mean, abs=1e-15)


def test_population_truths_of_a_calibrated_model_are_zero():
    errors, se = dirichlet_calibration_errors(4, power=1.0, n_samples=100_000, random_state=2,
                                              return_se=True)
    assert errors["canonical"] < 1e-25  # f = P up to rounding
    for key in ("top_label", "classwise"):
        assert abs(errors[key]) < 4 * se[key], (key, errors[key], se[key])


def test_overconfident_model_has_positive_errors():
    """power = 2 (overconfident) is miscalibrated too; the truths are positive by many SE."""
    errors, se = dirichlet_calibration_errors(3, concentration=0.5, power=2.0, n_samples=50_000,
                                              random_state=2, return_se=True)
    for key in ("canonical", "top_label", "classwise"):
        assert errors[key] > 10 * se[key]


# ================================================================================================
# 2. The paper's simulation (Gruber & Bach, Sec. 5.1; spec §2.8 and §4.1)
# ================================================================================================

N_PAPER, POWER = 500, 0.3


def _h_sim(theta):
    """h_sim(theta) = <p - softmax((10/3) theta log p), ...>: temperature 0.3 / theta."""
    return TemperatureCalibrationEstimator(temperature=POWER / theta, mode="canonical")


def _uniform_risk(f, y):
    """R_hat(h_sim(0)): softmax(0 * log p) is the uniform vector, given as an exact H matrix."""
    a = f - 1.0 / f.shape[1]
    return calibration_risk(y, f, a @ a.T, mode="canonical")


def _simulation_risks(n_reps, seed0):
    """(n_reps, len(THETAS)) risks R_hat(h_sim(theta)), each on its own 500 samples."""
    out = np.empty((n_reps, len(THETAS)))
    for r in range(n_reps):
        f, y = make_dirichlet_calibration(N_PAPER, random_state=seed0 + r)
        for j, theta in enumerate(THETAS):
            # h_sim has no fitted parameters for a fixed temperature: fit only records classes
            out[r, j] = (_uniform_risk(f, y) if theta == 0
                         else calibration_risk(y, f, _h_sim(theta).fit(f, y)))
    return out


@pytest.fixture(scope="module")
def simulation_risks():
    return _simulation_risks(100, seed0=1000)


def _check_paired_wins(risks, min_fraction):
    one = THETAS.index(1.0)
    wins = {theta: int(np.sum(risks[:, one] < risks[:, THETAS.index(theta)]))
            for theta in (0.3, 0.5, 2.0, 3.0)}
    for theta, w in wins.items():
        assert w >= min_fraction * risks.shape[0], (theta, wins)
    return wins


def test_simulation_theta_one_wins_paired(simulation_risks):
    """theta = 1 beats theta in {0.3, 0.5, 2, 3} on the same sample (spec: 100/100 each).

    Unpaired comparisons are hopeless (the sd over samples, 1e-3, exceeds the gaps). Paired,
    theta = 0.5 and 2 lose about 1% of the time (their gaps have mean 6e-4 and 6.6e-4, sd 2e-4
    and 2.8e-4; 1000/1000 and 990/1000 wins in the slow test's 1000 repetitions) and 0.3 and 3
    essentially never: require 97/100 (observed: 100/100 for all four).
    """
    _check_paired_wins(simulation_risks, 0.97)


def _check_mean_curve(risks, spec_k):
    n_reps = risks.shape[0]
    mean = risks.mean(axis=0)
    # (1) the mean curve is minimised at theta = 1. Paired over repetitions the neighbouring
    # gaps R(0.9) - R(1) and R(1.1) - R(1) are 3 to 5 SE with 100 repetitions (1.3e-5 and
    # 1.8e-5, SE 4e-6), and more than 10 SE with 1000.
    assert THETAS[int(np.argmin(mean))] == 1.0, dict(zip(THETAS, mean))
    one = THETAS.index(1.0)
    diff = risks - risks[:, [one]]
    for j, theta in enumerate(THETAS):
        spec_mean, spec_sd = SPEC_RISK_TABLE[theta]
        # (2) each mean matches the spec's mean: both are means of 100 (or n_reps) independent
        # repetitions, so their difference has SE sqrt(sd^2 / n_reps + sd_spec^2 / 100)
        se = math.sqrt(risks[:, j].var(ddof=1) / n_reps + spec_sd ** 2 / 100)
        assert abs(mean[j] - spec_mean) < spec_k * se + SPEC_ROUNDING, (theta, mean[j], spec_mean)
        if theta == 1.0:
            continue
        # (3) the paired gaps R(theta) - R(1) match the spec's gaps, which are much more precise
        # than the means; the spec's own paired SE is unknown but has the same size as ours
        # (same model, n and repetitions), hence sqrt(1 + n_reps / 100) times our SE
        d_mean, d_se = _mean_se(diff[:, j])
        spec_gap = spec_mean - SPEC_RISK_TABLE[1.0][0]
        tol = spec_k * d_se * math.sqrt(1 + n_reps / 100) + 2 * SPEC_ROUNDING
        assert abs(d_mean - spec_gap) < tol, (theta, d_mean, spec_gap, tol)
    return mean


def test_simulation_mean_risk_curve(simulation_risks):
    """Mean risk over 100 repetitions: argmin at theta = 1, means and gaps as in §4.1 (3 SE)."""
    _check_mean_curve(simulation_risks, spec_k=3)


def test_simulation_theta_03_is_the_zero_estimator():
    """theta = 0.3 gives softmax(log p) = p: h = 0 exactly, so its risk is that of h = 0.

    The only differences are rounding and the clipping of p at eps = 1e-12 before the logarithm
    (entries below it change by < 1e-12); relative tolerance 1e-9.
    """
    for seed in range(5):
        f, y = make_dirichlet_calibration(N_PAPER, random_state=seed)
        zero = calibration_risk(y, f, ZeroCalibrationEstimator(mode="canonical").fit(f, y))
        h03 = _h_sim(0.3).fit(f, y)
        assert calibration_risk(y, f, h03) == pytest.approx(zero, rel=1e-9)
        assert abs(h03.calibration_error(f)) < 1e-20
        # h = 0: the risk is the mean squared pair target over i != j
        r = f - np.eye(5)[y]
        T = r @ r.T
        off = ~np.eye(N_PAPER, dtype=bool)
        assert zero == pytest.approx(np.mean(T[off] ** 2), rel=1e-12)


def test_simulation_theta_0_is_uniform_and_theta_1_is_the_truth():
    f, y, P = make_dirichlet_calibration(N_PAPER, random_state=0, return_truth=True)
    # theta -> 0: a huge temperature approaches the uniform map of the exact H matrix
    near_zero = TemperatureCalibrationEstimator(temperature=1e12, mode="canonical").fit(f, y)
    assert calibration_risk(y, f, near_zero) == pytest.approx(_uniform_risk(f, y), rel=1e-8)
    # theta = 1: h_sim(1)(p, p) = ||p - P||^2 per sample, the exact canonical truth
    assert_allclose(_h_sim(1.0).fit(f, y).transform(f)[:, 0], squared_calibration_errors(f, P),
                    rtol=1e-9, atol=1e-30)


def _population_risks(n_mc, seed):
    """Population R_CE(h_sim(theta)) by Monte Carlo of second moments (no pairs needed).

    For a plug-in h = <a(p), a(p')> and independent pairs,
    R(h) = ||E[S]||_F^2 - 2 ||E[b a^T]||_F^2 + ||E[a a^T]||_F^2 with b = f - P and
    E[(f - e_Y)(f - e_Y)^T | P] = S = b b^T + diag(P) - P P^T; a = f - g_theta(f).
    Returns the risks and the Monte-Carlo SE of R(h*), the noisiest part (batch means).
    """
    f, _, P = make_dirichlet_calibration(n_mc, random_state=seed, return_truth=True)
    b = f - P
    logf = np.log(f)
    out = []
    batches = np.array_split(np.arange(n_mc), 10)
    for theta in THETAS:
        g = np.full_like(f, 1.0 / f.shape[1]) if theta == 0 else softmax(logf * (theta / POWER),
                                                                            axis=1)
        a = f - g
        vals = []
        for idx in [slice(None)] + batches:
            bb, aa, pp = b[idx], a[idx], P[idx]
            m = bb.shape[0]
            S = (bb.T @ bb + np.diag(pp.sum(axis=0)) - pp.T @ pp) / m
            C, A = bb.T @ aa / m, aa.T @ aa / m
            vals.append(np.sum(S * S) - 2 * np.sum(C * C) + np.sum(A * A))
        out.append((vals[0], np.std(vals[1:], ddof=1) / math.sqrt(10)))
    return np.array(out)


@pytest.mark.slow
def test_simulation_1000_repetitions():
    """1000 repetitions: wins >= 98%; means vs the spec's table; means vs population risks.

    theta = 2 loses about 1% of the paired comparisons (990/1000 wins observed; 98% is 3
    binomial sd below 99%). The spec's table means are about 1.6e-4 (1.5 of their SE) above
    the population values computed here (R(h*) = 0.00868, R(0) = 0.00968), which agree with the
    spec's own population values: the spec's 100 repetitions were on the high side.
    """
    risks = _simulation_risks(1000, seed0=5000)
    _check_paired_wins(risks, 0.98)
    mean = _check_mean_curve(risks, spec_k=3)
    pop = _population_risks(1_000_000, seed=77)
    for j, theta in enumerate(THETAS):
        # E[R_hat] = R exactly (U-statistic): 3 combined SE (ours over repetitions, the
        # population's over Monte-Carlo batches)
        se = math.hypot(risks[:, j].std(ddof=1) / math.sqrt(risks.shape[0]), pop[j, 1])
        assert abs(mean[j] - pop[j, 0]) < 3 * se, (theta, mean[j], pop[j])
    # the spec's population values (about 3 significant digits)
    assert pop[THETAS.index(1.0), 0] == pytest.approx(SPEC_RISK_OPTIMAL, abs=5e-5)
    assert pop[THETAS.index(0.3), 0] == pytest.approx(SPEC_RISK_ZERO, abs=5e-5)
    assert THETAS[int(np.argmin(pop[:, 0]))] == 1.0


# ================================================================================================
# 3. Estimators against ground truth (train/test splits; the CV pipeline is tested elsewhere)
# ================================================================================================

N_BINARY, N_BINARY_TRAIN = 4000, 3000
BINARY_SEEDS = range(10)
#: alpha = 1e-7 for both kernel-ridge methods: on S2 it is where the held-out risk of both is
#: minimal (larger alphas shrink: kronecker at 1e-3 underestimates by 12%); gamma = 0.5 on the
#: scalar c. The 1-D RBF kernel with gamma = 0.5 has numerical rank ~15 on [0, 1], so a Nystrom
#: approximation on 200 landmarks is exact to rounding (checked below against the exact solver).
BINARY_ESTIMATORS = {
    "binning-10-debiased": BinnedCalibrationEstimator(n_bins=10, debias=True, mode="binary"),
    "binning-15": BinnedCalibrationEstimator(n_bins=15, mode="binary"),
    # bandwidth 0.01: at 0.03 the smoothing bias is already -2e-3 (-6%, 2.5 SE here)
    "kde-0.01": KDECalibrationEstimator(bandwidth=0.01, mode="binary"),
    "two_step": KernelRidgeCalibrationEstimator(alpha=1e-7, method="two_step", mode="binary",
                                                n_components=200, random_state=0),
    "kronecker": KernelRidgeCalibrationEstimator(alpha=1e-7, method="kronecker", mode="binary",
                                                 n_components=200, random_state=0),
}


@pytest.fixture(scope="module")
def binary_estimates():
    """Test-split estimates of every estimator for 10 seeds (n = 4000: 3000 train, 1000 test)."""
    out = {name: [] for name in BINARY_ESTIMATORS}
    out["sample truth"] = []
    for seed in BINARY_SEEDS:
        c, y, pi = make_binary_squared_calibration(N_BINARY, random_state=seed, return_truth=True)
        tr, te = slice(None, N_BINARY_TRAIN), slice(N_BINARY_TRAIN, None)
        out["sample truth"].append(squared_calibration_errors(c[te], pi[te]).mean())
        for name, est in BINARY_ESTIMATORS.items():
            out[name].append(est.fit(c[tr], y[tr]).calibration_error(c[te]))
    return {k: np.array(v) for k, v in out.items()}


@pytest.mark.parametrize("name", list(BINARY_ESTIMATORS))
def test_binary_estimates_match_one_thirtieth(binary_estimates, name):
    """Mean over 10 seeds within 3 SE of 1/30; SE = sd over seeds / sqrt(10).

    The SE must come from repeating the whole fit: the spread of the diagonal on the test split
    (sd / sqrt(n_test), ~6e-4) misses the dominant variance, that of the fitted function (the
    estimates of one estimator vary by ~3e-3 between training sets, while the test-split sample
    truth varies by ~7e-4). Observed biases (+-1e-3, from the noise of the fitted residual
    function and from smoothing) are below 1 SE (~9e-4). With 9 degrees of freedom, 3 SE is a
    98.5% t-interval.
    """
    mean, se = _mean_se(binary_estimates[name])
    assert se < 1.5e-3  # informative: 3 SE is at most 13% of the truth
    assert abs(mean - BINARY_SQUARED_CALIBRATION_ERROR) < 3 * se, (name, mean, se)


def test_binary_sample_truth(binary_estimates):
    mean, se = _mean_se(binary_estimates["sample truth"])
    assert abs(mean - BINARY_SQUARED_CALIBRATION_ERROR) < 3 * se


def test_binary_debiasing_lowers_the_binned_estimate():
    """The plug-in binned square is biased upward by the bin-mean noise; debiasing removes
    sum_b (n_b / n) acc_b (1 - acc_b) / (n_b - 1) ~ E[c^2 (1 - c^2)] M / n = (2/15) M / n,
    here 6.7e-4 for M = 15 and n = 3000 (observed 6.9e-4)."""
    c, y = make_binary_squared_calibration(N_BINARY, random_state=0)
    plain = BinnedCalibrationEstimator(n_bins=15, mode="binary").fit(c[:3000], y[:3000])
    debiased = BinnedCalibrationEstimator(n_bins=15, debias=True, mode="binary").fit(c[:3000],
                                                                                     y[:3000])
    gap = plain.calibration_error(c[3000:]) - debiased.calibration_error(c[3000:])
    assert 3e-4 < gap < 3e-3


def test_kernel_ridge_nystrom_equals_exact_on_binary():
    """The Nystrom shortcut of the seed loop reproduces the exact eigendecomposition (n = 1000)."""
    c, y = make_binary_squared_calibration(2000, random_state=0)
    for method in ("two_step", "kronecker"):
        exact = KernelRidgeCalibrationEstimator(alpha=1e-7, method=method, mode="binary")
        approx = KernelRidgeCalibrationEstimator(alpha=1e-7, method=method, mode="binary",
                                                 n_components=200, random_state=0)
        e = exact.fit(c[:1000], y[:1000]).calibration_error(c[1000:])
        a = approx.fit(c[:1000], y[:1000]).calibration_error(c[1000:])
        assert a == pytest.approx(e, rel=1e-4), method
        assert abs(e - BINARY_SQUARED_CALIBRATION_ERROR) < 0.01


def test_binary_as_two_class_canonical_problem_doubles():
    """Spec §1.6/§4.4: p = (1 - c, c) carries the error in both coordinates (truth 2/30).

    KDE: the Dirichlet kernel on (1 - c, c) is the Beta kernel on c, so the estimate doubles
    exactly; binning: uniform bins of c and of 1 - c are the same cells; kernel ridge: the RBF
    kernel with gamma on the 2-vector is the one with 2 gamma on the scalar.
    """
    c, y = make_binary_squared_calibration(1500, random_state=4)
    P = np.column_stack([1 - c, c])
    tr, te = slice(None, 1000), slice(1000, None)
    pairs = [
        (KDECalibrationEstimator(bandwidth=0.02, mode="binary"),
         KDECalibrationEstimator(bandwidth=0.02, mode="canonical")),
        (BinnedCalibrationEstimator(n_bins=10, mode="binary"),
         BinnedCalibrationEstimator(n_bins=10, mode="canonical")),
        (KernelRidgeCalibrationEstimator(alpha=1e-6, gamma=1.0, method="two_step", mode="binary"),
         KernelRidgeCalibrationEstimator(alpha=1e-6, gamma=0.5, method="two_step",
                                         mode="canonical")),
    ]
    for binary, canonical in pairs:
        b = binary.fit(c[tr], y[tr]).calibration_error(c[te])
        m = canonical.fit(P[tr], y[tr]).calibration_error(P[te])
        assert m == pytest.approx(2 * b, rel=1e-6), type(binary).__name__
        # and the risks double... squared: targets and h both double, so the risk is 4x
        assert calibration_risk(y[te], P[te], canonical) == pytest.approx(
            4 * calibration_risk(y[te], c[te], binary), rel=1e-6)


def _fisher_se_of_temperature(f, T):
    """Asymptotic SE of the NLL temperature: the model g_T(f) = softmax(log f / T) is a
    one-parameter exponential family in beta = 1/T with Fisher information E[Var_g(log f)]."""
    z = np.log(f)
    g = softmax(z / T, axis=1)
    info = np.mean((g * z * z).sum(axis=1) - (g * z).sum(axis=1) ** 2)
    return T ** 2 / math.sqrt(f.shape[0] * info)


def test_temperature_estimator_recovers_the_true_map():
    """TemperatureCalibrationEstimator(temperature=None) contains h*: T_hat ~ 0.3 and the
    canonical estimate ~ the sample truth of the test split.

    n = 25000 (20000 train): the Fisher SE of T_hat is 0.0046 (an sd of 0.0048 was observed
    over 10 seeds); T_hat within 3 SE of 0.3. The estimate's error is driven by T_hat - 0.3; by
    the delta method its SE is |d estimate / dT| * SE(T): within 3 of those.
    """
    f, y, P = make_dirichlet_calibration(25_000, random_state=31, return_truth=True)
    tr, te = slice(None, 20_000), slice(20_000, None)
    est = TemperatureCalibrationEstimator(mode="canonical").fit(f[tr], y[tr])
    T, se_T = est.temperature_, _fisher_se_of_temperature(f[tr], POWER)
    assert se_T < 0.01
    assert abs(T - POWER) < 3 * se_T, (T, se_T)
    truth = squared_calibration_errors(f[te], P[te]).mean()
    assert abs(truth - DIRICHLET_CALIBRATION_ERRORS["canonical"]) < 0.005  # 5000 samples: SE 8e-4
    at_truth = TemperatureCalibrationEstimator(temperature=POWER, mode="canonical").fit(f[tr],
                                                                                         y[tr])
    assert at_truth.calibration_error(f[te]) == pytest.approx(truth, rel=1e-9)
    h = 1e-3
    slope = (TemperatureCalibrationEstimator(temperature=POWER + h, mode="canonical")
             .fit(f[tr], y[tr]).calibration_error(f[te])
             - TemperatureCalibrationEstimator(temperature=POWER - h, mode="canonical")
             .fit(f[tr], y[tr]).calibration_error(f[te])) / (2 * h)
    assert slope < 0  # a larger temperature is closer to the (underconfident) model
    assert abs(est.calibration_error(f[te]) - truth) < 3 * abs(slope) * se_T


def _canonical_family_run(seed):
    """Spec §8: n = 2500, 1600 train / 400 validation / 500 test, the hyperparameters §8 chose
    (paper grids with n = 1600): KDE b = 0.2, Kronecker alpha = 4e-8, two-step alpha = 1.26e-3,
    gamma = 0.5, and the NLL temperature (the oracle's family)."""
    f, y, P = make_dirichlet_calibration(2500, random_state=seed, return_truth=True)
    tr, va, te = slice(None, 1600), slice(1600, 2000), slice(2000, None)
    truth = squared_calibration_errors(f[te], P[te]).mean()
    families = {
        "temperature": TemperatureCalibrationEstimator(mode="canonical"),
        "kde": KDECalibrationEstimator(bandwidth=0.2, mode="canonical"),
        "kronecker": KernelRidgeCalibrationEstimator(alpha=4e-8, method="kronecker",
                                                     mode="canonical"),
        "two_step": KernelRidgeCalibrationEstimator(alpha=1.26e-3, method="two_step",
                                                    mode="canonical"),
        "zero": ZeroCalibrationEstimator(mode="canonical"),
    }
    risk, error, estimate = {}, {}, {}
    for name, est in families.items():
        est.fit(f[tr], y[tr])
        risk[name] = calibration_risk(y[va], f[va], est)
        estimate[name] = est.calibration_error(f[te])
        error[name] = abs(estimate[name] - truth)
    return list(families), risk, error, estimate, truth


def _check_canonical_order(seed):
    names, risk, error, estimate, truth = _canonical_family_run(seed)
    # §8: risk order oracle < kde < kkr < ukkr < 0, and the estimates in the same order of
    # closeness (kde 0.041, kkr 0.027, ukkr 0.017 for a truth of 0.061 there). Observed on
    # seeds 0-5 without exception; the risk gaps (>= 3e-5) are paired differences on one
    # validation set.
    assert sorted(names, key=risk.get) == names, risk
    assert sorted(names, key=error.get) == names, (error, truth)
    # the kernel estimators underfit at gamma = 0.5 (spec §8.3); the temperature is close: from
    # 1600 samples its Fisher SE is 0.016 (5% of 0.3), and 3 SE move the estimate by ~20%
    # (seeds 0-5: errors of -11%, +15%, -6%, -8%, +11%, -2%)
    assert estimate["temperature"] == pytest.approx(truth, rel=0.25)
    assert estimate["two_step"] < estimate["kronecker"] < estimate["kde"] < truth


def test_canonical_estimators_ordered_as_in_spec_section_8():
    _check_canonical_order(0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1, 6))
def test_canonical_estimators_ordered_as_in_spec_section_8_more_seeds(seed):
    _check_canonical_order(seed)
