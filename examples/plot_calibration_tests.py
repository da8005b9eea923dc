"""
==========================================================
Testing calibration: p-values and run times of the tests
==========================================================

A calibration error has no unit: is an SKCE of 0.002 large? The tests of :mod:`skcalib.stats`
answer with a p-value under the null hypothesis "the model is calibrated". This example runs
every test on

* two scikit-learn classifiers fitted on synthetic three-class data drawn from a multinomial
  logistic model: a logistic regression, which is well specified and therefore close to
  calibrated, and a Gaussian naive Bayes classifier, whose independence assumption is wrong for
  the correlated features and which is over-confident;
* two regressors' predictive distributions with known calibration, the Gaussian models of
  Widmann et al. (2021) (:func:`skcalib.datasets.make_gaussian_predictions`): a calibrated one,
  and a miscalibrated one whose exact SKCE is known,

and prints each test's p-value and run time. It then checks on 200 calibrated data sets that the
p-values are uniform -- what makes a p-value of 0.03 mean "unusual for a calibrated model" -- and
compares confidence intervals for the SKCE with its exact value. A figure shows the p-values
and their distribution under calibration. :ref:`tests` explains the tests and when to use which.
"""

# %%
# Data and classifiers
# --------------------
# Six correlated Gaussian features, three classes with probabilities given by a softmax of a
# linear function of the features. A logistic regression fitted on 5,000 samples recovers that
# model almost exactly; Gaussian naive Bayes treats the correlated features as independent and
# so counts the same evidence several times: its probabilities are too extreme. Both are
# evaluated on 1,000 other samples.

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

import skcalib
from skcalib.datasets import gaussian_predictions_skce, make_gaussian_predictions
from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor
from skcalib.stats import consistency_test, skce_ci, skce_test, ucme_test

rng = np.random.default_rng(0)
n_features, n_classes = 6, 3
coef = 0.8 * rng.normal(size=(n_features, n_classes))
cov = 0.6 * np.ones((n_features, n_features)) + 0.4 * np.eye(n_features)
chol = np.linalg.cholesky(cov)


def draw(n):
    """Features and labels of the multinomial logistic model."""
    X = rng.normal(size=(n, n_features)) @ chol.T
    z = X @ coef
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    y = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    return X, np.minimum(y, n_classes - 1)


X_train, y_train = draw(5000)
X_test, y_test = draw(1000)
classifiers = {"logistic regression": LogisticRegression(max_iter=1000),
               "Gaussian naive Bayes": GaussianNB()}
probas = {}
print(f"{'classifier':<22}{'accuracy':>10}{'ECE':>8}{'SKCE':>11}")
for name, clf in classifiers.items():
    P = clf.fit(X_train, y_train).predict_proba(X_test)
    probas[name] = P
    acc = np.mean(clf.classes_[P.argmax(axis=1)] == y_test)
    print(f"{name:<22}{acc:>10.3f}{skcalib.calibration_error(y_test, P):>8.3f}"
          f"{skcalib.skce(y_test, P):>11.2e}")

# %%
# Every test on the classifiers
# -----------------------------
# The SKCE tests share the default kernel, ``GaussianKernel("median") ⊗ DeltaKernel()``, resolved
# once on the tested predictions:
#
# * ``"block"`` with blocks of 2 (the linear test) and of ``floor(sqrt(n))`` samples -- a
#   normal approximation, linear or ``n^1.5`` time;
# * ``"bootstrap"`` -- the papers' U-statistic test (1,000 bootstrap resamples);
# * ``"spectral"`` exact and with 100 Nyström landmarks, and ``"gamma"`` -- approximations of the
#   same null distribution, extensions not evaluated in the papers;
# * ``"distribution_free"`` -- Hoeffding's bound for the unbiased estimate and McDiarmid's for the
#   biased one: valid for every ``n``, but very conservative.
#
# The calibration-mean-embedding test :func:`~skcalib.stats.ucme_test` (Hotelling's statistic at
# 10 random test locations) and :func:`~skcalib.stats.consistency_test` with the ECE (1,000
# resamples) complete the list: ``method="conditional"`` keeps the predictions and draws labels from them (exact in
# finite samples), ``method="consistency"`` also resamples the predictions (the Bröcker--Smith
# procedure, known to reject calibrated models too often). Resampling p-values are
# ``(1 + #{T* >= T}) / (1 + B)``, so 0.001 is the smallest value 1,000 resamples can give.
#
# Run times are wall-clock seconds of one call on a shared machine: read them as orders of
# magnitude.

SKCE_TESTS = {
    "block, B = 2": dict(method="block", block_size=2),
    "block, B = sqrt(n)": dict(method="block", block_size="sqrt"),
    "bootstrap": dict(method="bootstrap"),
    "spectral (exact)": dict(method="spectral"),
    "spectral (100 landmarks)": dict(method="spectral", n_landmarks=100),
    "gamma": dict(method="gamma"),
    "distribution-free (U)": dict(method="distribution_free"),
    "distribution-free (V)": dict(method="distribution_free", estimator="biased"),
}


def run_tests(y, pred, kernel=None, labels=None, metric="ece"):
    """p-value and seconds of every test on ``(y, pred)``."""
    options = {} if labels is None else {"labels": labels}
    calls = {name: (lambda kw=kw: skce_test(y, pred, kernel=kernel, random_state=0, **kw,
                                            **options))
             for name, kw in SKCE_TESTS.items()}
    calls["UCME (Hotelling, J = 10)"] = lambda: ucme_test(y, pred, kernel=kernel, random_state=0,
                                                          **options)
    n_resamples = 1000 if metric == "ece" else 100
    for method in ("conditional", "consistency"):
        calls[f"{metric.upper()} resampling, {method}"] = (
            lambda method=method: consistency_test(metric, y, pred, method=method,
                                                   n_resamples=n_resamples, random_state=0,
                                                   **options))
    results = {}
    for name, call in calls.items():
        start = time.perf_counter()
        res = call()
        results[name] = (res.pvalue, time.perf_counter() - start)
    return results


def print_table(results_by_model):
    models = list(results_by_model)
    print(f"{'test':<27}" + "".join(f"{m:>23}" for m in models))
    print(f"{'':<27}" + "".join(f"{'p-value':>14}{'seconds':>9}" for _ in models))
    for test in results_by_model[models[0]]:
        cells = "".join(f"{p:>14.3g}{t:>9.3f}" for p, t in
                        (results_by_model[m][test] for m in models))
        print(f"{test:<27}{cells}")


classification = {name: run_tests(y_test, P, labels=np.arange(n_classes))
                  for name, P in probas.items()}
print()
print_table(classification)

# %%
# What the classifier tests say
# -----------------------------
# No test rejects the logistic regression: its p-values are large, as they should be for a
# model that is calibrated up to the estimation error of its coefficients. Its unbiased SKCE is
# slightly *negative* -- the estimate of a squared error that is (nearly) zero scatters around
# zero -- and every test reads that as no evidence at all.
#
# Naive Bayes is rejected by the U-statistic tests (bootstrap, spectral, Gamma), by the
# ``sqrt(n)`` block test, by the UCME test and by both ECE tests. The linear (``B = 2``) test
# misses it: a mean of 500 independent pairs is much noisier than the U-statistic over all
# pairs, which is the price of its linear cost. The distribution-free bounds miss it too; they
# are guarantees for every ``n``, not powerful tests.
#
# At ``n = 1000`` every SKCE test takes well under a second, and part of each run time is the
# median heuristic, resolved on every call. What grows with ``n`` differs: the block tests need
# ``O(n B)`` pairs and the UCME test ``O(n J)`` kernel evaluations; the Gamma approximation and
# the Nyström spectral test about one pass over all pairs; the bootstrap one pass per batch of
# resamples plus ``n^2`` flops per resample, and the exact spectral test an ``n x n``
# eigendecomposition (it is refused above 10,000 samples). The resampling tests of a metric
# cost ``n_resamples`` evaluations of it.

# %%
# Every test on predictive distributions
# --------------------------------------
# The same tests take predictive distributions and real targets. The models are those of the
# 2021 paper's synthetic experiments: predictions ``N(c, 0.1^2)`` with ``c ~ U(0, 1)``, targets
# drawn from the predictions (calibrated) or from ``N(0, 0.1^2)`` (miscalibrated). The kernel is
# the paper's, ``exp(-W2) ⊗ exp(-(y - y')^2 / 2)``. ``consistency_test`` uses the SKCE as its
# statistic here (the ECE needs class probabilities) with 100 resamples, as each resample costs
# one SKCE.

paper_kernel = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
regression = {}
for calibrated in (True, False):
    pred, y = make_gaussian_predictions(1000, calibrated=calibrated, random_state=1)
    name = "calibrated" if calibrated else "miscalibrated"
    regression[name] = run_tests(y, pred, kernel=paper_kernel, metric="skce")
print()
print_table(regression)

# %%
# The miscalibrated model is rejected by every test except Hoeffding's distribution-free bound
# for the unbiased estimate; McDiarmid's bound for the biased estimate, which is large here,
# does reject it. (The UCME test's p-value underflows to 0: an analytic tail, unlike the
# resampling p-values, which are never below ``1 / (1 + B)``.)
#
# On the calibrated model most p-values are large, but a few are near or below 0.05.
# A test at the 5 % level rejects a calibrated model in 5 % of the data sets, and several tests
# on the same data are not independent chances: a single p-value near 0.05 should not be
# over-read. Consistency resampling, which also resamples the predictions, is not exact (with
# finely binned ECEs it rejects almost every calibrated model; see :ref:`tests`); the
# conditional test is. The next section shows the whole distribution of the p-values under
# calibration.

# %%
# p-values of calibrated models are uniform
# ------------------------------------------
# A valid test's p-values are uniform on ``[0, 1]`` when the null hypothesis holds: a
# calibrated model gets ``p <= 0.05`` in 5 % of the data sets and ``p <= 0.5`` in half of
# them. This is what makes the p-value readable. Here are 200 calibrated data sets of 200
# normal predictions each; the bootstrap and spectral tests use 200 resamples to keep the
# example fast.

n_sets, n_small = 200, 200
null_tests = {
    "block, B = 2": dict(method="block", block_size=2),
    "block, B = sqrt(n)": dict(method="block", block_size="sqrt"),
    "bootstrap": dict(method="bootstrap", n_resamples=200),
    "spectral (exact)": dict(method="spectral", n_resamples=200),
    "gamma": dict(method="gamma"),
    "distribution-free (U)": dict(method="distribution_free"),
}
null_pvalues = {name: np.empty(n_sets) for name in null_tests}
sets = np.random.default_rng(2)
for r in range(n_sets):
    pred, y = make_gaussian_predictions(n_small, calibrated=True, random_state=sets)
    for name, kw in null_tests.items():
        null_pvalues[name][r] = skce_test(y, pred, kernel=paper_kernel, random_state=r,
                                          **kw).pvalue
print(f"\n{'calibrated, n = 200':<24}{'P(p <= 0.05)':>14}{'P(p <= 0.5)':>13}")
for name, p in null_pvalues.items():
    print(f"{name:<24}{np.mean(p <= 0.05):>14.3f}{np.mean(p <= 0.5):>13.3f}")
half_width = 2.58 * np.sqrt(0.05 * 0.95 / n_sets)
print(f"(99 % sampling range of the rate for a valid test: 0.05 +- {half_width:.3f})")

# %%
# The rejection rates of the asymptotic tests lie within the sampling range of a valid test
# (200 data sets cannot tell 0.05 from 0.07). The ``sqrt(n)`` block test tends to reject less
# often than nominal (as in the paper's regression experiments), and the distribution-free
# bound never rejects -- its p-values are upper bounds, far from uniform. The slow test suite
# (``tests/stats/test_size_power.py``) checks the tests' sizes over 500 to 1,000 data sets.

# %%
# Confidence intervals for the SKCE
# ---------------------------------
# A p-value measures evidence, not size. :func:`~skcalib.stats.skce_ci` gives an interval for
# the SKCE itself; for the miscalibrated Gaussian model the exact value is known
# (:func:`~skcalib.datasets.gaussian_predictions_skce`). The normal interval uses the variance
# of the U-statistic from its Hoeffding decomposition; the block interval that of the block
# means; the bootstrap interval the percentiles of bootstrap replicates.

pred, y = make_gaussian_predictions(1000, calibrated=False, random_state=1)
exact = gaussian_predictions_skce(1)
print(f"\nexact SKCE of the miscalibrated model: {exact:.4f}")
for label, kw in {"normal, U-statistic": {},
                  "normal, blocks of sqrt(n)": dict(estimator="block", block_size="sqrt"),
                  "bootstrap percentile": dict(method="bootstrap", random_state=0)}.items():
    ci = skce_ci(y, pred, kernel=paper_kernel, **kw)
    print(f"{label:<28} estimate {ci.estimate:.4f}   95 % interval "
          f"[{ci.low:.4f}, {ci.high:.4f}]")

# %%
# Figures
# -------
# Left: the p-values of every test on the four models (log scale; the dashed line is 0.05).
# Right: the empirical distribution function of the p-values on the 200 calibrated data sets;
# a valid test follows the diagonal.

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5))
everything = {**{f"{k} (clf.)": v for k, v in classification.items()},
              **{f"{k} (regr.)": v for k, v in regression.items()}}
# the same tests in the same order for every model (the resampling tests' metric differs)
tests = [t.replace("ECE ", "") for t in next(iter(everything.values()))]
width = 0.8 / len(everything)
for i, (model, results) in enumerate(everything.items()):
    ax1.barh(np.arange(len(tests)) + i * width,
             [max(p, 1e-4) for p, _ in results.values()], height=width, label=model)
ax1.axvline(0.05, color="black", linestyle="--", linewidth=1)
ax1.set_xscale("log")
ax1.set_yticks(np.arange(len(tests)) + 0.4 - width / 2)
ax1.set_yticklabels(tests, fontsize=8)
ax1.invert_yaxis()
ax1.set_xlabel("p-value (values below 1e-4 drawn at 1e-4)")
ax1.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2)
grid = np.linspace(0, 1, 101)
ax2.plot([0, 1], [0, 1], color="grey", linestyle="--")
for name, p in null_pvalues.items():
    ax2.plot(grid, [np.mean(p <= a) for a in grid], label=name)
ax2.set_xlabel("alpha")
ax2.set_ylabel("fraction of p-values <= alpha")
ax2.set_title("200 calibrated data sets")
ax2.legend(fontsize=8)
fig.tight_layout()
plt.show()
