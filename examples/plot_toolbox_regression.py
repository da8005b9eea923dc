"""
==============================================================
The practitioner's toolbox: calibration of regressors
==============================================================

Regressors that predict distributions are calibrated when their predictive distributions say
how far off they are. This example fits several such models to heteroscedastic data (the noise
grows with the feature) and reports, on a held-out half,

* the PIT values (:func:`skcalib.pit`) and their uniformity tests
  (:func:`skcalib.stats.pit_test`: Kolmogorov--Smirnov, Cramér--von Mises, Anderson--Darling),
* the CRPS (:func:`skcalib.crps`, closed forms for Normal, Laplace and mixtures) and the
  negative log-likelihood (:func:`skcalib.nll`),
* the coverage of central prediction intervals (:func:`skcalib.interval_coverage`), the quantile
  calibration error of Kuleshov et al. (:func:`skcalib.quantile_calibration_error`) and the
  miscalibration area (:func:`skcalib.miscalibration_area`),
* ENCE and UCE (:func:`skcalib.ence`, :func:`skcalib.uce`), which compare the predicted spread
  with the observed error bin by bin,

for Normal, Laplace and mixture predictions and for ``(n, 2)`` rows of mean and standard
deviation, then scores the models with the regression scorers in ``cross_validate``. Figures
show the PIT histograms and the quantile-calibration curves. :ref:`metrics` says
which metric answers which question.
"""

# %%
# Data and models
# ---------------
# ``y = sin(pi x) + 0.3 |1 + x| eps`` (:func:`skcalib.datasets.make_heteroscedastic_regression`):
# the true conditional law is known, so the *oracle* ``N(sin(pi x), (0.3 |1 + x|)^2)`` is a
# calibrated reference. The models:
#
# * a Gaussian process with a white-noise term: a good mean, but one noise level for every ``x``
#   (too wide on the left, too narrow on the right);
# * Bayesian ridge regression on ``x``: a straight line through a sine, so a wrong mean;
# * a heteroscedastic two-stage model: gradient boosting for the mean, then for the absolute
#   residual (of out-of-fold predictions), giving Normal or Laplace predictions through a
#   ``predict_distribution`` method, and an ensemble of five bootstrap mean models as a mixture of
#   Normals (the mixture's spread includes the disagreement of the members).


import matplotlib.pyplot as plt
import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, WhiteKernel
from sklearn.linear_model import BayesianRidge
from sklearn.model_selection import cross_val_predict, cross_validate

import skcalib
from skcalib.datasets import make_heteroscedastic_regression
from skcalib.distributions import Laplace, Mixture, Normal
from skcalib.stats import pit_test

NOISE = 0.3
X, y = make_heteroscedastic_regression(4000, noise=NOISE, random_state=0)
X_train, y_train, X_test, y_test = X[:2000], y[:2000], X[2000:], y[2000:]


class TwoStageRegressor(RegressorMixin, BaseEstimator):
    """Mean by gradient boosting, spread by gradient boosting on the absolute out-of-fold
    residuals; ``family`` "normal" or "laplace"; ``n_members > 1``: a mixture of Normals from
    bootstrap mean models."""

    def __init__(self, family="normal", n_members=1, random_state=0):
        self.family = family
        self.n_members = n_members
        self.random_state = random_state

    def fit(self, X, y):
        base = GradientBoostingRegressor(n_estimators=60, max_depth=2, random_state=0)
        rng = np.random.default_rng(self.random_state)
        self.members_ = []
        for _ in range(self.n_members):
            idx = rng.integers(0, len(y), len(y)) if self.n_members > 1 else np.arange(len(y))
            self.members_.append(clone(base).fit(X[idx], y[idx]))
        resid = np.abs(y - cross_val_predict(clone(base), X, y, cv=3))
        self.spread_ = clone(base).fit(X, resid)
        return self

    def predict(self, X):
        return np.mean([m.predict(X) for m in self.members_], axis=0)

    def predict_distribution(self, X):
        mad = np.maximum(self.spread_.predict(X), 1e-3)  # E|y - mu|
        if self.family == "laplace":
            return Laplace(self.predict(X), mad)  # E|y - mu| = b
        sigma = np.sqrt(np.pi / 2) * mad  # E|y - mu| = sigma sqrt(2 / pi)
        if self.n_members == 1:
            return Normal(self.predict(X), sigma)
        means = [m.predict(X) for m in self.members_]
        # members share the noise; their disagreement adds to it, so that the mixture's variance
        # is about sigma^2
        within = np.sqrt(np.maximum(sigma ** 2 - np.var(means, axis=0), (0.5 * sigma) ** 2))
        return Mixture(np.full(len(means), 1 / len(means)), [Normal(m, within) for m in means])


gp = GaussianProcessRegressor(RBF(0.5) + WhiteKernel(0.1), normalize_y=True, random_state=0)
gp.fit(X_train[:500], y_train[:500])  # 500 samples keep the O(n^3) fit fast
mu_gp, sd_gp = gp.predict(X_test, return_std=True)
mu_br, sd_br = BayesianRidge().fit(X_train, y_train).predict(X_test, return_std=True)
models = {"two-stage Normal": TwoStageRegressor("normal").fit(X_train, y_train),
          "two-stage Laplace": TwoStageRegressor("laplace").fit(X_train, y_train),
          "ensemble mixture": TwoStageRegressor("normal", n_members=5).fit(X_train, y_train)}
x = X_test[:, 0]
predictions = {
    "oracle": Normal(np.sin(np.pi * x), NOISE * np.abs(1 + x)),
    "Gaussian process": Normal(mu_gp, sd_gp),
    "Bayesian ridge": np.column_stack([mu_br, sd_br]),  # (n, 2) rows: read as Normal
    **{name: m.predict_distribution(X_test) for name, m in models.items()},
}

# %%
# PIT values and their tests
# --------------------------
# Uniform PIT values are calibration in the probabilistic sense. The three tests weigh the
# deviations differently: Kolmogorov--Smirnov the largest gap of the distribution functions,
# Cramér--von Mises the squared gaps, Anderson--Darling the tails most (where too narrow
# predictions put their misses).

print(f"{'model':<20}{'KS p':>10}{'CvM p':>10}{'AD p':>10}   PIT share in the outer 5% tails")
for name, pred in predictions.items():
    u = skcalib.pit(y_test, pred)
    tails = np.mean((u < 0.05) | (u > 0.95))
    pv = [pit_test(y_test, pred, method=m).pvalue for m in ("ks", "cvm", "ad")]
    print(f"{name:<20}" + "".join(f"{p:>10.2g}" for p in pv) + f"   {tails:.3f} (0.100 expected)")

# %%
# Proper scores, coverage, quantile calibration, ENCE
# ---------------------------------------------------
# CRPS and NLL are proper scores (lower is better; they reward calibration *and* sharpness). The
# coverage of the central 50 % and 90 % intervals, the interval-coverage error (mean absolute gap
# over the levels 0.5, 0.8, 0.9 and 0.95), the quantile-calibration error and the miscalibration
# area (exact, from the sorted PIT values) summarise the PIT values. ENCE and UCE bin the samples
# by predicted standard deviation and compare it with the observed RMSE: they see that the
# Gaussian process's single noise level is wrong for most ``x``, even where its intervals cover
# about right on average.

print(f"\n{'model':<20}{'CRPS':>7}{'NLL':>7}{'cov50':>7}{'cov90':>7}{'ICE':>7}{'QCE':>7}"
      f"{'MA':>7}{'ENCE':>7}{'UCE':>8}")
for name, pred in predictions.items():
    cov = skcalib.interval_coverage(y_test, pred, levels=[0.5, 0.9])
    print(f"{name:<20}{skcalib.crps(y_test, pred):>7.3f}{skcalib.nll(y_test, pred):>7.3f}"
          f"{cov[0]:>7.3f}{cov[1]:>7.3f}{skcalib.interval_coverage_error(y_test, pred):>7.3f}"
          f"{skcalib.quantile_calibration_error(y_test, pred):>7.3f}"
          f"{skcalib.miscalibration_area(y_test, pred):>7.3f}{skcalib.ence(y_test, pred):>7.3f}"
          f"{skcalib.uce(y_test, pred):>8.4f}")

# The conventions where packages differ are options: uncertainty-toolbox's miscalibration area
# uses central-interval proportions on the grid ``np.linspace(0, 1, 100)`` (it gives the same
# value with these options), and ENCE can use equal-width bins.
pred = predictions["Gaussian process"]
uct_area = skcalib.miscalibration_area(y_test, pred, proportion="interval",
                                       quantiles=np.linspace(0, 1, 100))
print(f"\nGaussian process: miscalibration area exact "
      f"{skcalib.miscalibration_area(y_test, pred):.4f}, interval proportions on 100 levels "
      f"{uct_area:.4f}; "
      f"ENCE equal-count bins {skcalib.ence(y_test, pred):.3f}, equal-width "
      f"{skcalib.ence(y_test, pred, strategy='uniform'):.3f}")

# The (n, 2) rows and the Normal distribution are the same predictions:
crps_rows = skcalib.crps(y_test, np.column_stack([mu_gp, sd_gp]))
crps_normal = skcalib.crps(y_test, Normal(mu_gp, sd_gp))
print(f"CRPS of the (n, 2) rows {crps_rows:.6f}, of the Normal distribution {crps_normal:.6f}")

# %%
# Scorers
# -------
# The regression scorers get Normal predictions from ``predict(X, return_std=True)`` or, when the
# model has one, from its ``predict_distribution`` method, so the two-stage model is scored by its
# own Laplace (or mixture) predictions.

scoring = {name: skcalib.get_scorer(name) for name in
           ("neg_crps", "neg_nll", "neg_interval_coverage_error", "neg_miscalibration_area",
            "neg_ence", "pit_pvalue")}
scoring["r2"] = "r2"
print("\n3-fold cross-validation (means) " + "".join(f"{k[:13]:>14}" for k in scoring))
for name, model in {"Bayesian ridge": BayesianRidge(),
                    "two-stage Laplace": TwoStageRegressor("laplace")}.items():
    res = cross_validate(model, X_train, y_train, cv=3, scoring=scoring)
    print(f"{name:<32}" + "".join(f"{res['test_' + k].mean():>14.4f}" for k in scoring))

# %%
# Figures
# -------
# The Displays of :mod:`skcalib.plotting`, several models per axis. Left: PIT histograms
# (:class:`~skcalib.plotting.PITHistogramDisplay`; flat for a calibrated model, a hump means too
# wide, a U too narrow, a slope a biased mean); the grey band holds the bin heights of uniform
# PIT values with probability 95 % for all 20 bins at once (binomial quantiles, Bonferroni), so
# a bar outside it is more than noise. Middle: quantile-calibration curves
# (:class:`~skcalib.plotting.QuantileCalibrationDisplay`; observed fraction of targets below
# the predicted ``q``-quantile against ``q``), the miscalibration area shaded and given in the
# legend. Right: coverage of central prediction intervals with Clopper--Pearson intervals
# (:class:`~skcalib.plotting.IntervalCoverageDisplay`).

from skcalib.plotting import (IntervalCoverageDisplay, PITHistogramDisplay,
                              QuantileCalibrationDisplay)

fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(17, 5.2))
for name, pred in predictions.items():
    PITHistogramDisplay.from_predictions(y_test, pred, bins=20, band="simultaneous",
                                         histtype="step", name=name, ax=ax1)
    QuantileCalibrationDisplay.from_predictions(y_test, pred, name=name, ax=ax2)
    IntervalCoverageDisplay.from_predictions(y_test, pred, name=name, ax=ax3,
                                             errorbar_kwargs={"markersize": 3})
ax1.set_title("PIT histograms")
ax2.set_title("quantile calibration")
ax3.set_title("interval coverage")
for ax in (ax1, ax2, ax3):
    ax.legend(fontsize=7)
fig.tight_layout()
plt.show()
