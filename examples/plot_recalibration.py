"""
=======================================================
Recalibration by temperature scaling
=======================================================

Measuring miscalibration is half of the job; this example repairs it. Temperature scaling (Guo
et al., "On calibration of modern neural networks", ICML 2017) divides a classifier's logits by
one number :math:`T` fitted on held-out data. It changes the confidence of every prediction but
never its order, so the predicted class -- and the accuracy -- stay exactly the same. Widmann,
Lindsten and Zachariah ("Calibration tests beyond classification", ICLR 2021, Definition F.1)
extend it to predictive distributions: the density :math:`p` becomes proportional to
:math:`p^{1/T}`, which for a normal prediction multiplies the variance by :math:`T` and keeps the
mean.

The example recalibrates

* an over-confident neural network on a four-class problem, with
  :class:`~skcalib.recalibration.RecalibratedClassifier` around a
  :class:`~sklearn.frozen.FrozenEstimator`, with a :class:`~sklearn.pipeline.Pipeline` of
  :class:`~skcalib.recalibration.PredictionTransformer` and
  :class:`~skcalib.recalibration.TemperatureScaling`, and with scikit-learn's
  ``CalibratedClassifierCV(method="temperature")`` for comparison;
* a Gaussian process whose noise level was fixed at a wrong value, with
  :class:`~skcalib.recalibration.RecalibratedRegressor` and
  :class:`~skcalib.recalibration.DistributionTemperatureScaling`,

and reports accuracy, negative log-likelihood (NLL), ECE and SKCE on a test split before and
after, with top-label reliability diagrams and histograms of the probability integral
transform (PIT).
"""

# %%
# An over-confident classifier
# ----------------------------
# A multilayer perceptron with almost no weight decay, trained on only 1000 samples of a
# 20-feature, four-class problem, fits its training data closely and is far too sure of itself
# on new data. The data are split three ways: the *training* split fits the network, the
# *calibration* split fits the temperature, and the *test* split evaluates both. The temperature
# must not be fitted on the test data (that would make the recalibrated model look better
# calibrated than it is), nor on the training data (on which the network is even more often
# right than its confidence says).


import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import norm
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, WhiteKernel
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline

from skcalib import calibration_error, pit, skce
from skcalib.distributions import Normal
from skcalib.kernels import GaussianKernel, WassersteinKernel, median_heuristic, tensor
from skcalib.recalibration import (DistributionTemperatureScaling, PredictionTransformer,
                                   RecalibratedClassifier, RecalibratedRegressor,
                                   TemperatureScaling)

X, y = make_classification(
    n_samples=5000, n_features=20, n_informative=10, n_redundant=4, n_classes=4,
    flip_y=0.05, random_state=0,
)
X_train, X_rest, y_train, y_rest = train_test_split(
    X, y, train_size=1000, random_state=0, stratify=y
)
X_cal, X_test, y_cal, y_test = train_test_split(
    X_rest, y_rest, train_size=2000, random_state=0, stratify=y_rest
)
print(f"train {len(y_train)}, calibration {len(y_cal)}, test {len(y_test)} samples")

mlp = MLPClassifier(hidden_layer_sizes=(64, 64), alpha=1e-5, max_iter=300, random_state=0)
mlp.fit(X_train, y_train)

# %%
# Recalibration with a meta-estimator
# -----------------------------------
# :class:`~skcalib.recalibration.RecalibratedClassifier` works like scikit-learn's
# ``CalibratedClassifierCV``. Wrapping the fitted network in a
# :class:`~sklearn.frozen.FrozenEstimator` says "do not refit it": ``fit`` then fits only the
# recalibrator (by default :class:`~skcalib.recalibration.TemperatureScaling`) on the
# network's scores for the data passed to ``fit`` -- here the calibration split. The network has
# no ``decision_function``, so its probabilities are the scores; temperature scaling turns them
# into logits ``log(p)`` (the softmax of ``log(p) / T`` is ``p`` when ``T = 1``).

recalibrated = RecalibratedClassifier(FrozenEstimator(mlp)).fit(X_cal, y_cal)
ts = recalibrated.recalibrators_[0]
print(f"\nRecalibratedClassifier: scores from {recalibrated.method_}, "
      f"input {ts.input_!r}, temperature T = {ts.temperature_:.6f} "
      f"({ts.n_iter_} Newton iterations)")

# %%
# ... or as a pipeline step
# -------------------------
# :class:`~skcalib.recalibration.PredictionTransformer` turns a model into a transformer whose
# output is the model's scores (logits when it has a ``decision_function``, else probabilities),
# so that a recalibrator can follow it in a pipeline. With a frozen model, fitting the pipeline
# fits the temperature only; it gives the same temperature and the same probabilities. (With an
# *unfrozen* model the pipeline would fit the model and the temperature on the same data: use
# the meta-estimator and its cross-fitting for that.)

pipeline = Pipeline([
    ("model", PredictionTransformer(FrozenEstimator(mlp))),
    ("ts", TemperatureScaling()),
]).fit(X_cal, y_cal)
P_before = mlp.predict_proba(X_test)
P_after = recalibrated.predict_proba(X_test)
print(f"Pipeline:               temperature T = {pipeline.named_steps['ts'].temperature_:.6f}, "
      f"largest difference of the probabilities "
      f"{np.max(np.abs(pipeline.predict_proba(X_test) - P_after)):.1e}")

# %%
# Before and after, on the test split
# -----------------------------------
# The NLL (:func:`sklearn.metrics.log_loss`) is what temperature scaling minimises on the
# calibration split. The top-label ECE (:func:`skcalib.calibration_error`, 15 equal-width bins)
# and the SKCE (:func:`skcalib.skce`) measure calibration. The SKCE's kernel on the probability
# vectors is fixed once -- a Gaussian kernel whose length scale is the median distance between
# the *original* test predictions -- so that both rows use the same kernel (the default median
# heuristic would choose a new length scale for each set of predictions). The accuracy is
# identical: dividing all logits by the same ``T`` keeps their arg-max.

classes = mlp.classes_
kernel = GaussianKernel(median_heuristic(P_before))


def summary(P):
    return {
        "accuracy": np.mean(classes[P.argmax(axis=1)] == y_test),
        "NLL": log_loss(y_test, P, labels=classes),
        "ECE": calibration_error(y_test, P, labels=classes),
        "SKCE": skce(y_test, P, kernel=kernel, labels=classes),
    }


rows = {"network": summary(P_before), "temperature-scaled": summary(P_after)}
print(f"\n{'test split':<22}" + "".join(f"{key:>12}" for key in rows["network"]))
for name, values in rows.items():
    print(f"{name:<22}" + "".join(
        f"{v:>12.2e}" if key == "SKCE" else f"{v:>12.4f}" for key, v in values.items()))

# %%
# The same with scikit-learn
# --------------------------
# Since version 1.8, ``CalibratedClassifierCV(method="temperature")`` fits the same model (with
# older versions this section prints skcalib's numbers only). Its fitted parameter is the inverse
# temperature ``beta_``. The two temperatures differ in the third decimal place here because the
# probabilities become logits in slightly different ways: ``log(p + 1e-12)`` there,
# ``log(max(p, 1e-12))`` here -- for a confident network with probabilities far below 1e-3 that
# matters a little. Fitted on scikit-learn's logits,
# :class:`~skcalib.recalibration.TemperatureScaling` reproduces its temperature to about eight
# digits (scikit-learn's bounded Brent search on ``log beta`` stops at a tolerance; skcalib's
# Newton iteration on ``beta`` is solved to rounding error).


def sklearn_temperature_scaling(model, X, y):
    """scikit-learn's temperature scaling of a frozen model, or None before scikit-learn 1.8."""
    try:
        return CalibratedClassifierCV(FrozenEstimator(model), method="temperature").fit(X, y)
    except ValueError:  # an unknown `method` (scikit-learn < 1.8)
        return None


sk_ts = sklearn_temperature_scaling(mlp, X_cal, y_cal)
T_sk_logits = TemperatureScaling(input="logits").fit(
    np.log(mlp.predict_proba(X_cal) + 1e-12), y_cal).temperature_
print()
if sk_ts is not None:
    sk_T = 1.0 / sk_ts.calibrated_classifiers_[0].calibrators[0].beta_
    print(f"CalibratedClassifierCV(method='temperature'): T = 1 / beta_ = {sk_T:.8f}")
print(f"TemperatureScaling on log(p + 1e-12):          T = {T_sk_logits:.8f}")
print(f"TemperatureScaling on log(max(p, 1e-12)):      T = {ts.temperature_:.8f}")
if sk_ts is not None:
    print(f"largest difference of the test probabilities: "
          f"{np.max(np.abs(sk_ts.predict_proba(X_test) - P_after)):.1e}")

# %%
# For a *binary* classifier with a one-dimensional ``decision_function`` ``z`` the conventions
# differ by a factor of two. skcalib reads ``z`` as the log-odds of the positive class (the
# logits ``(0, z)``, probability ``sigmoid(z / T)``); scikit-learn uses the logits ``(-z, z)``,
# probability ``sigmoid(2 beta z)``. So scikit-learn's ``beta_`` is half of skcalib's
# ``inverse_temperature_``, and ``1 / beta_`` is *twice* skcalib's ``T``; the recalibrated
# probabilities agree.

Xb, yb = make_classification(n_samples=3000, n_features=30, n_informative=5, random_state=1)
logreg = LogisticRegression(C=1e4, max_iter=5000).fit(Xb[:300], yb[:300])
ours = RecalibratedClassifier(FrozenEstimator(logreg)).fit(Xb[300:2000], yb[300:2000])
theirs = sklearn_temperature_scaling(logreg, Xb[300:2000], yb[300:2000])
ours_ts = ours.recalibrators_[0]
print(f"\nbinary logistic regression (C=1e4): skcalib T = {ours_ts.temperature_:.6f}, "
      f"inverse_temperature_ = {ours_ts.inverse_temperature_:.6f}")
if theirs is not None:
    beta_sk = theirs.calibrated_classifiers_[0].calibrators[0].beta_
    print(f"scikit-learn: 1 / beta_ = {1 / beta_sk:.6f}, 2 * beta_ = {2 * beta_sk:.6f}; largest "
          f"difference of the probabilities "
          f"{np.max(np.abs(ours.predict_proba(Xb[2000:]) - theirs.predict_proba(Xb[2000:]))):.1e}")

# %%
# Top-label reliability diagrams
# ------------------------------
# For equal-width bins of the confidence ``max_k p_k``: the accuracy in each bin against the
# mean confidence in it (:func:`skcalib.reliability_curve`). A point below the diagonal is
# over-confident, above it under-confident. The binning is the one of
# ``calibration_error(strategy="uniform")`` (right-closed bins), so the count-weighted mean gap
# of a diagram is the top-label ECE with the same number of bins.

from skcalib import reliability_curve  # noqa: E402

names = ("network", f"temperature-scaled (T = {ts.temperature_:.2f})")
curves = {name: reliability_curve(y_test, P, n_bins=10, labels=classes)
          for name, P in zip(names, (P_before, P_after))}
print()
for (name, curve), P in zip(curves.items(), (P_before, P_after)):
    gap = np.average(np.abs(curve.prob_true - curve.prob_pred), weights=curve.counts)
    ece10 = calibration_error(y_test, P, n_bins=10, labels=classes)
    print(f"{name:<33} diagram gap {gap:.4f} = ECE with 10 bins {ece10:.4f}")

# %%
# :class:`skcalib.plotting.ReliabilityDisplay` draws both curves on one axis with Broecker and
# Smith's *consistency bars* (``band="consistency"``): for every bin, the range of accuracies a
# calibrated model with the bin's own confidences would show in 95% of test sets (labels
# resampled from the confidences). The network's confident bins lie far below their bars:
# over-confidence well beyond chance. After temperature scaling the points are close to the
# diagonal and most are inside their bars; the bins that remain outside are small deviations
# that a single temperature cannot remove, made visible by bins of hundreds of samples (narrow
# bars). The low-confidence bins hold a handful of samples each (the histogram at the bottom
# counts the test samples of every bin, right-hand scale), so their bars span most of the plot.


from skcalib.plotting import ReliabilityDisplay

fig, ax = plt.subplots(figsize=(6, 5.5))
for name, P in zip(names, (P_before, P_after)):
    display = ReliabilityDisplay.from_predictions(
        y_test, P, labels=classes, n_bins=10, band="consistency", random_state=0,
        name=name, ax=ax)
    inside = np.mean((display.band_low <= display.prob_true)
                     & (display.prob_true <= display.band_high))
    print(f"{name:<33} bins inside their 95% consistency bar: {inside:.0%}")
ax.set_title("Top-label reliability diagram (test split)")
fig.tight_layout()
plt.show()

# %%
# A Gaussian process with the wrong noise level
# ---------------------------------------------
# The targets are ``sin(2 x)`` plus normal noise of standard deviation 0.3 (variance 0.09). The
# Gaussian process is given a fixed kernel with a :class:`~sklearn.gaussian_process.kernels.
# WhiteKernel` noise level of 1.0 and ``optimizer=None``, so the noise is not learned: its
# predictive standard deviation (about 1) is more than three times too large, the model is
# *under*-confident. Its mean is still good. The same three-way split as above: 200 training
# points, 1000 for the temperature, 1000 for testing.

rng = np.random.default_rng(0)


def make_data(n):
    x = rng.uniform(-3, 3, size=(n, 1))
    return x, np.sin(2 * x[:, 0]) + 0.3 * rng.standard_normal(n)


Xr_train, yr_train = make_data(200)
Xr_cal, yr_cal = make_data(1000)
Xr_test, yr_test = make_data(1000)
gpr = GaussianProcessRegressor(RBF(0.3) + WhiteKernel(1.0), optimizer=None)
gpr.fit(Xr_train, yr_train)

# %%
# :class:`~skcalib.recalibration.RecalibratedRegressor` reads the model's predictive
# distributions (``predict(X, return_std=True)`` as :class:`~skcalib.distributions.Normal`) on the
# calibration split and fits :class:`~skcalib.recalibration.DistributionTemperatureScaling`.
# For normal predictions the NLL-optimal temperature has a closed form, the mean squared
# standardized residual ``T = mean((y - m)**2 / s**2)``; the new standard deviation is
# ``sqrt(T) * s``. Here ``T`` is close to the ratio 0.09 / 1.0 of the true to the assumed noise
# variance. ``DistributionTemperatureScaling`` also takes ``[mean, std]`` columns directly.

recal_gpr = RecalibratedRegressor(FrozenEstimator(gpr)).fit(Xr_cal, yr_cal)
T_reg = recal_gpr.recalibrators_[0].temperature_
mean_cal, std_cal = gpr.predict(Xr_cal, return_std=True)
dts = DistributionTemperatureScaling().fit(np.column_stack([mean_cal, std_cal]), yr_cal)
print(f"\nGaussian process kernel (fixed): {gpr.kernel_}")
print(f"RecalibratedRegressor:          T = {T_reg:.6f}")
print(f"DistributionTemperatureScaling: T = {dts.temperature_:.6f}")
print(f"mean((y - m)**2 / s**2):         T = {np.mean(((yr_cal - mean_cal) / std_cal) ** 2):.6f}")

# %%
# On the test split: the mean (and so the RMSE) is unchanged; the NLL, the SKCE and the coverage
# of central prediction intervals improve. The SKCE uses the kernel of Widmann et al.'s
# experiments, ``tensor(WassersteinKernel(1.0), GaussianKernel(1.0))``, fixed for both rows (the
# targets are of unit scale).

before = Normal(*gpr.predict(Xr_test, return_std=True))
after = recal_gpr.predict_distribution(Xr_test)
paper_kernel = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))


def regression_summary(p):
    return {
        "RMSE": np.sqrt(np.mean((yr_test - p.loc) ** 2)),
        "mean std": np.mean(p.scale),
        "NLL": -np.mean(p.log_pdf(yr_test)),
        "SKCE": skce(yr_test, p, kernel=paper_kernel),
        "50% cover": np.mean(np.abs(yr_test - p.loc) <= norm.ppf(0.75) * p.scale),
        "90% cover": np.mean(np.abs(yr_test - p.loc) <= norm.ppf(0.95) * p.scale),
    }


reg_rows = {"Gaussian process": regression_summary(before),
            "temperature-scaled": regression_summary(after)}
print(f"\n{'test split':<22}" + "".join(f"{key:>11}" for key in reg_rows["Gaussian process"]))
for name, values in reg_rows.items():
    print(f"{name:<22}" + "".join(
        f"{v:>11.2e}" if key == "SKCE" else f"{v:>11.3f}" for key, v in values.items()))

# %%
# The SKCE as objective (an extension, not an evaluated method)
# -------------------------------------------------------------
# Widmann et al. (2021, Sec. 6) suggest that the kernel calibration error could itself serve as
# the objective of a recalibration method; they do not evaluate this. ``objective="skce"``
# implements the suggestion: it minimises the (unbiased) SKCE of the recalibrated predictions on
# the calibration split. Calibration alone has trivial optima -- very wide distributions, or
# probabilities tending to uniform as ``T`` grows, can be calibrated and useless -- so the
# search is restricted to within a factor of 10 of the NLL temperature. Treat it as an
# experiment; the NLL is the standard objective.

dts_skce = DistributionTemperatureScaling(objective="skce", kernel=paper_kernel).fit(
    np.column_stack([mean_cal, std_cal]), yr_cal)
after_skce = dts_skce.predict_distribution(before)
ts_skce = TemperatureScaling(objective="skce", kernel=kernel).fit(
    mlp.predict_proba(X_cal), y_cal)
P_skce = ts_skce.predict_proba(mlp.predict_proba(X_test))
print(f"\nobjective='skce', Gaussian process: T = {dts_skce.temperature_:.4f} "
      f"(NLL: {T_reg:.4f}); test NLL {-np.mean(after_skce.log_pdf(yr_test)):.3f}, "
      f"test SKCE {skce(yr_test, after_skce, kernel=paper_kernel):.2e}")
print(f"objective='skce', network:          T = {ts_skce.temperature_:.4f} "
      f"(NLL: {ts.temperature_:.4f}); test NLL {log_loss(y_test, P_skce, labels=classes):.4f}, "
      f"test ECE {calibration_error(y_test, P_skce, labels=classes):.4f}, "
      f"test SKCE {skce(y_test, P_skce, kernel=kernel, labels=classes):.2e}")

# %%
# Probability integral transform
# ------------------------------
# If the targets are distributed as predicted, the PIT values ``F_i(y_i)`` (each target's
# quantile under its own predictive distribution) are uniform on [0, 1]. An under-confident
# model puts too many of them near 0.5 (a hump), an over-confident one too many near 0 and 1 (a
# U). Like interval coverage, the PIT histogram checks only *marginal* calibration -- weaker
# than the conditional calibration the SKCE measures.

predictive = {"Gaussian process": before, f"temperature-scaled (T = {T_reg:.3f})": after}
edges = np.linspace(0, 1, 11)
print()
for name, dist in predictive.items():
    counts = np.histogram(pit(yr_test, dist), bins=edges)[0]
    print(f"{name:<33} PIT counts per tenth: {' '.join(f'{c:3d}' for c in counts)}")

from skcalib.plotting import PITHistogramDisplay

# one panel per model; the band holds each bar's height under uniformity with 95 %
# probability (binomial quantiles of the bin count)
fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
for ax, (name, dist) in zip(axes, predictive.items()):
    PITHistogramDisplay.from_predictions(yr_test, dist, bins=10, name=name, ax=ax)
    ax.set_title(name)
fig.suptitle("PIT histograms (test split)")
fig.tight_layout()
plt.show()
