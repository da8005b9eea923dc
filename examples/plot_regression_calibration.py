"""
=====================================================
Calibration of regression models beyond the mean
=====================================================

A probabilistic regressor predicts a whole distribution :math:`P_x` for the target, not just a
number. It is *calibrated* when these distributions are right: among the samples that receive the
prediction :math:`P_x`, the targets are distributed according to :math:`P_x` (Definition 1 of
Widmann, Lindsten and Zachariah, "Calibration tests beyond classification", ICLR 2021). This
example fits a Gaussian process and a Bayesian ridge regression on scikit-learn's bundled
``diabetes`` dataset, turns their ``predict(X, return_std=True)`` into normal predictive
distributions, and measures their calibration on a held-out split with

* the squared kernel calibration error :func:`skcalib.skce` (unbiased and biased estimators),
  with the kernel of the paper's experiments and with the default median-heuristic kernel,
* :func:`skcalib.ucme`,
* a consistency-resampling reference that shows what the SKCE looks like for a calibrated model,
* the ``neg_skce`` scorer in :func:`sklearn.model_selection.cross_validate`.

Deliberately over- and under-confident versions of the Bayesian ridge (its standard deviation
multiplied by 0.3 and by 3) show the SKCE reacting to miscalibration although the mean
predictions, and hence the squared error, are unchanged. A figure shows the empirical coverage
of central prediction intervals against their nominal level.
"""

# %%
# Data and models
# ---------------
# The diabetes target (a disease-progression score between 25 and 346) is standardized, so that
# the fixed length scales of the paper's kernel (1 for both kernels) are on the scale of the
# data; the median-heuristic kernel would not need it. Half of the 442 patients train the models,
# the other half is held out.
#
# The Gaussian process has a :class:`~sklearn.gaussian_process.kernels.WhiteKernel` term, so that
# its predictive standard deviation includes the observation noise -- without it, it would only
# describe the uncertainty about the regression function and be far too small for the targets.
# Bayesian ridge regression predicts a normal distribution whose variance is the noise variance
# plus the uncertainty of the coefficients.
#
# The miscalibrated variants wrap the Bayesian ridge in a small meta-estimator with a
# ``predict_distribution(X)`` method. skcalib's scorers call that hook before anything else,
# which is how a model reports a predictive distribution other than ``predict(X,
# return_std=True)``.


import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import norm
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.datasets import load_diabetes
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.linear_model import BayesianRidge
from sklearn.model_selection import KFold, cross_validate, train_test_split

import skcalib
from skcalib import skce, ucme
from skcalib.distributions import Normal
from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor
from skcalib.scorers import predict_distribution


class ScaledStdRegressor(RegressorMixin, BaseEstimator):
    """A regressor whose predictive standard deviation is ``factor`` times that of ``estimator``."""

    def __init__(self, estimator, factor=1.0):
        self.estimator = estimator
        self.factor = factor

    def fit(self, X, y):
        self.estimator_ = clone(self.estimator).fit(X, y)
        return self

    def predict(self, X):
        return self.estimator_.predict(X)

    def predict_distribution(self, X):
        mean, std = self.estimator_.predict(X, return_std=True)
        return Normal(mean, self.factor * std)


X, y = load_diabetes(return_X_y=True)
y = (y - y.mean()) / y.std()
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)

gp_kernel = ConstantKernel(1.0) * RBF(length_scale=1.0) + WhiteKernel(noise_level=0.5)
models = {
    "Gaussian process": GaussianProcessRegressor(gp_kernel, normalize_y=True, random_state=0),
    "Bayesian ridge": BayesianRidge(),
    "ridge, std x 0.3": ScaledStdRegressor(BayesianRidge(), factor=0.3),
    "ridge, std x 3": ScaledStdRegressor(BayesianRidge(), factor=3.0),
}

# %%
# Predictive distributions
# ------------------------
# :func:`skcalib.scorers.predict_distribution` returns what a model predicts in the form the
# metrics take: here a :class:`skcalib.distributions.Normal` with one row per test sample (from
# the ``predict_distribution`` hook, else from ``predict(X, return_std=True)``), and, as its
# second value, the classes of a classifier (None for regressors). Besides the root-mean-square
# error of the means, the table shows the mean negative log-likelihood and the coverage of the
# central 90 % prediction intervals -- a well calibrated model covers about 90 % of the targets.

predictions = {}
for name, model in models.items():
    model.fit(X_train, y_train)
    predictions[name] = predict_distribution(model, X_test)
print(f"fitted GP kernel: {models['Gaussian process'].kernel_}\n")

z90 = norm.ppf(0.95)
print(f"{'held-out half':<22}" + "".join(f"{name:>19}" for name in models))
summaries = {
    "RMSE": lambda p: np.sqrt(np.mean((y_test - p.loc) ** 2)),
    "mean predicted std": lambda p: np.mean(p.scale),
    "mean NLL": lambda p: -np.mean(p.log_pdf(y_test)),
    "90% interval coverage": lambda p: np.mean(np.abs(y_test - p.loc) <= z90 * p.scale),
}
for label, summary in summaries.items():
    print(f"{label:<22}" + "".join(f"{summary(p):>19.3f}" for p in predictions.values()))

# %%
# Squared kernel calibration error
# --------------------------------
# :func:`~skcalib.skce` accepts a distribution as ``y_pred`` and real targets as ``y_true``. The
# kernel is a tensor product of a kernel on predictive distributions and a kernel on targets.
# The paper's experiments use ``exp(-W2(p, p'))``, with the 2-Wasserstein distance
# ``W2 = sqrt((m - m')**2 + (s - s')**2)`` between normal distributions, and the Gaussian kernel
# ``exp(-(y - y')**2 / 2)`` on targets: ``tensor(WassersteinKernel(1.0), GaussianKernel(1.0))``.
# The expectations of the target kernel under normal predictions have closed forms, so the
# estimates are exact (no Monte Carlo).
#
# The default unbiased estimator is a U-statistic: it can be slightly negative for a calibrated
# model and is therefore never square-rooted. The biased estimator is never negative and its
# square root is the plug-in estimate of the kernel calibration error (KCE) itself. For normal
# predictions the default kernel (``kernel=None``) is
# ``WassersteinKernel("median") ⊗ GaussianKernel("median")``, both length scales computed from
# the predictions only. Each model then gets its own kernel: the
# target length scale is the median of ``sqrt((m_i - m_j)**2 + s_i**2 + s_j**2)``, which grows
# with the predicted spread, so the median kernel judges the under-confident model more leniently
# than the fixed kernel does. Compare models under one fixed kernel; the median kernel is for
# data whose scale is unknown.
# :func:`~skcalib.ucme` evaluates the witness function of the SKCE at 10 test locations drawn
# from the predictions (``random_state`` fixes them).

paper_kernel = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
kernel_metrics = {
    "SKCE (unbiased)": lambda p: skce(y_test, p, kernel=paper_kernel),
    "SKCE (biased)": lambda p: skce(y_test, p, kernel=paper_kernel, estimator="biased"),
    "KCE = sqrt(biased)": lambda p: np.sqrt(skce(y_test, p, kernel=paper_kernel,
                                                 estimator="biased")),
    "SKCE, median kernel": lambda p: skce(y_test, p),
    "UCME, median kernel": lambda p: ucme(y_test, p, random_state=0),
}
print(f"\n{'kernel error':<22}" + "".join(f"{name:>19}" for name in models))
for label, metric in kernel_metrics.items():
    print(f"{label:<22}" + "".join(f"{metric(p):>19.2e}" for p in predictions.values()))

# %%
# How large is a calibrated model's SKCE?
# ---------------------------------------
# Even a perfectly calibrated model has a non-zero estimate on a finite sample. *Consistency
# resampling* shows its spread: replace the targets by draws from the predictions themselves,
# ``Z_i ~ P_i`` -- targets for which the model is calibrated by construction -- and recompute the
# SKCE. The fraction of resampled estimates at least as large as the observed one is a p-value of
# the hypothesis "the model is calibrated" (with the predictions held fixed). A small value means
# the observed SKCE is unusually large for a calibrated model; a large one means the data cannot
# tell the model from a calibrated one. With 100 resamples the smallest possible value is
# 1/101 = 0.010. (The resampled targets are exactly calibrated, so the unbiased estimates scatter
# around zero, negative about half of the time.)

n_resamples = 100
rng = np.random.default_rng(0)
print(f"\n{'consistency resampling':<22}" + "".join(f"{name:>19}" for name in models))
rows = {"observed SKCE": [], "95th pct, calibrated": [], "p-value": []}
for p in predictions.values():
    observed = skce(y_test, p, kernel=paper_kernel)
    resampled = np.array(
        [skce(p.sample(random_state=rng), p, kernel=paper_kernel) for _ in range(n_resamples)]
    )
    rows["observed SKCE"].append(f"{observed:.2e}")
    rows["95th pct, calibrated"].append(f"{np.quantile(resampled, 0.95):.2e}")
    rows["p-value"].append(f"{(1 + np.sum(resampled >= observed)) / (1 + n_resamples):.3f}")
for label, values in rows.items():
    print(f"{label:<22}" + "".join(f"{v:>19}" for v in values))

# %%
# What the SKCE found
# -------------------
# The two unmodified models cover 90 % of the held-out targets with their 90 % intervals, yet
# their SKCE exceeds that of every one of the 100 resampled, calibrated target sets. Calibration
# in the sense of Definition 1 is about the whole distribution *given the prediction*, and the
# diabetes targets are heteroscedastic: grouping the held-out samples by the quartile of the
# predicted mean shows the root-mean-square residual growing with the prediction (from about 0.5
# to 0.8) while the predicted standard deviation stays at about 0.7 -- too wide for low
# predictions, too narrow for high ones. Interval coverage pooled over all samples cannot see
# that; it is the situation of the paper's Fig. 1 (a homoscedastic model of heteroscedastic
# data).

print(f"\n{'by predicted mean':<22}" + "".join(
    f"{c:>19}" for c in ("mean prediction", "RMS residual", "predicted std")))
for name, short in (("Gaussian process", "GP"), ("Bayesian ridge", "ridge")):
    p = predictions[name]
    order = np.argsort(p.loc)
    for q, part in enumerate(np.array_split(order, 4), start=1):
        label = f"{short}, quartile {q}"
        residual_std = np.sqrt(np.mean((y_test[part] - p.loc[part]) ** 2))
        print(f"{label:<22}{np.mean(p.loc[part]):>19.3f}{residual_std:>19.3f}"
              f"{np.mean(p.scale[part]):>19.3f}")

# %%
# Calibration in cross-validation
# -------------------------------
# The scorers find the predictive distribution themselves
# (:func:`~skcalib.scorers.predict_distribution`), so ``get_scorer("neg_skce")`` works for any
# regressor whose ``predict`` accepts ``return_std=True`` -- ``GaussianProcessRegressor``,
# ``BayesianRidge``, ``ARDRegression`` -- and for models with a ``predict_distribution`` hook, in
# ``cross_validate``, ``cross_val_score`` and ``GridSearchCV``. ``make_calibration_scorer`` fixes
# the kernel; the named scorers use the median kernel, resolved anew on every fold's predictions
# of every model. Calibration errors are lower-is-better, so the scorers are negated; the table
# undoes the negation. Binned errors such as the ECE need class probabilities and raise a
# ``TypeError`` for regressors.

scoring = {
    "RMSE": "neg_root_mean_squared_error",
    "SKCE (paper kernel)": skcalib.make_calibration_scorer("skce", kernel=paper_kernel),
    "SKCE (median kernel)": skcalib.get_scorer("neg_skce"),
    "SKCE (biased, median)": skcalib.get_scorer("neg_skce_biased"),
}
cv = KFold(n_splits=5, shuffle=True, random_state=0)
print(f"\n{'5-fold CV (mean)':<22}" + "".join(f"{name:>19}" for name in models))
cv_results = {
    name: cross_validate(model, X, y, cv=cv, scoring=scoring) for name, model in models.items()
}
for key in scoring:
    values = [-np.mean(res[f"test_{key}"]) for res in cv_results.values()]
    fmt = ">19.3f" if key == "RMSE" else ">19.2e"
    print(f"{key:<22}" + "".join(f"{v:{fmt}}" for v in values))

# %%
# Coverage of prediction intervals
# --------------------------------
# A simple picture of (part of) the story: the fraction of held-out targets inside the central
# prediction interval of level :math:`\alpha`, against :math:`\alpha`. A calibrated model follows
# the diagonal; the over-confident model (intervals too narrow) falls below it, the
# under-confident one rises above it. This checks only *marginal quantile* calibration, which is
# weaker than Definition 1: the two unmodified models follow the diagonal closely and are still
# miscalibrated conditionally on their predictions, as the SKCE showed above.

levels = np.linspace(0.05, 0.95, 19)
coverage = {name: skcalib.interval_coverage(y_test, p, levels=levels)
            for name, p in predictions.items()}
print()
for name, cov in coverage.items():
    gap = np.max(np.abs(cov - levels))
    print(f"{name:<20} largest coverage gap over 19 levels {gap:.3f}")

# %%
# :class:`skcalib.plotting.IntervalCoverageDisplay` draws these coverages with a
# Clopper--Pearson interval per level (221 held-out targets, so about +-0.07 around 0.5): the
# diagonal inside the bars is what a calibrated model's sample looks like. Several models share
# one axis through ``ax``.

from skcalib.plotting import IntervalCoverageDisplay

fig, ax = plt.subplots(figsize=(5.5, 5.5))
for name, p in predictions.items():
    IntervalCoverageDisplay.from_predictions(y_test, p, levels=levels, name=name, ax=ax,
                                             errorbar_kwargs={"markersize": 3, "capsize": 2})
ax.set_title("Interval coverage (diabetes, held-out half)")
fig.tight_layout()
plt.show()
