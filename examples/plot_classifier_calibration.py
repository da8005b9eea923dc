"""
=================================================
Measuring the calibration of three classifiers
=================================================

A classifier is *calibrated* when its predicted probabilities match the frequencies of the
outcomes: among the digits to which it assigns confidence 0.8, about 80 % should be classified
correctly. This example fits three scikit-learn classifiers on the bundled ``digits`` dataset
(10 classes) and measures how miscalibrated each is on a held-out split, with

* binned calibration errors (:func:`skcalib.calibration_error`) in several modes and norms,
* kernel calibration errors (:func:`skcalib.skce`, :func:`skcalib.mmce`, :func:`skcalib.ucme`),
* several skcalib scorers at once in :func:`sklearn.model_selection.cross_validate`,

and draws reliability diagrams of top-label confidence against accuracy, binned and smooth.
"""

# %%
# Data and models
# ---------------
# Half of the digits train the models, the other half is held out for measuring calibration.
# Logistic regression is usually well calibrated, Gaussian naive Bayes over-confident (its
# independence assumption is far from true for neighbouring pixels) and a random forest
# under-confident (averaging trees pulls its probabilities away from 0 and 1).

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_validate, train_test_split
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skcalib
from skcalib import calibration_error, mmce, skce, ucme

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.5, random_state=0, stratify=y
)

models = {
    "logistic regression": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
    "naive Bayes": GaussianNB(),
    "random forest": RandomForestClassifier(n_estimators=100, random_state=0),
}
probas = {}
for name, model in models.items():
    model.fit(X_train, y_train)
    probas[name] = model.predict_proba(X_test)
    accuracy = np.mean(model.classes_[probas[name].argmax(axis=1)] == y_test)
    print(f"{name:<20} accuracy {accuracy:.3f}")

# %%
# Binned calibration errors
# -------------------------
# :func:`~skcalib.calibration_error` bins the predictions and compares, in every bin, the mean
# prediction with the frequency of the outcome. ``norm="l1"`` is the expected calibration error
# (ECE), ``"l2"`` its root-mean-square version and ``"max"`` the maximum calibration error (MCE).
# With more than two classes the default ``mode="auto"`` is ``"top_label"`` (confidence against
# accuracy); ``"classwise"`` averages the error of every class's probability, and
# ``"canonical"`` bins the whole probability vector -- here with the data-dependent
# ``"median_variance"`` bins, since equal-width cells of a 10-dimensional simplex would be almost
# all empty. Passing ``labels=model.classes_`` states the column order of the probabilities.

settings = {
    "ECE": dict(norm="l1"),
    "L2-CE": dict(norm="l2"),
    "MCE": dict(norm="max"),
    "ECE (quantile bins)": dict(norm="l1", strategy="quantile"),
    "debiased L2-CE^2": dict(norm="l2", squared=True, debias=True),
    "class-wise ECE": dict(norm="l1", mode="classwise"),
    "canonical ECE": dict(norm="l1", mode="canonical", strategy="median_variance",
                          n_bins=32, min_bin_size=10),
}
print(f"\n{'binned error':<22}" + "".join(f"{name:>21}" for name in models))
for label, kwargs in settings.items():
    values = [
        calibration_error(y_test, P, labels=models[name].classes_, **kwargs)
        for name, P in probas.items()
    ]
    print(f"{label:<22}" + "".join(f"{v:>21.4f}" for v in values))

# %%
# Kernel calibration errors
# -------------------------
# Kernel calibration errors need no bins. :func:`~skcalib.skce` estimates the *squared* kernel
# calibration error of the whole probability vector; its default unbiased estimator can be
# slightly negative for a well calibrated model, which is why it is never square-rooted. The
# ``"biased"`` estimator is always non-negative. :func:`~skcalib.mmce` is the MMCE of Kumar et al.
# (2018) on top-label confidences, and :func:`~skcalib.ucme` the squared calibration mean embedding
# at 10 random test locations (``random_state`` makes them reproducible).

print(f"\n{'kernel error':<22}" + "".join(f"{name:>21}" for name in models))
kernel_metrics = {
    "SKCE (unbiased)": lambda P, labels: skce(y_test, P, labels=labels),
    "SKCE (biased)": lambda P, labels: skce(y_test, P, labels=labels, estimator="biased"),
    "SKCE (block, B=10)": lambda P, labels: skce(y_test, P, labels=labels, estimator="block",
                                                 block_size=10),
    "MMCE": lambda P, labels: mmce(y_test, P, labels=labels),
    "UCME": lambda P, labels: ucme(y_test, P, labels=labels, random_state=0),
}
for label, metric in kernel_metrics.items():
    values = [metric(P, models[name].classes_) for name, P in probas.items()]
    print(f"{label:<22}" + "".join(f"{v:>21.3e}" for v in values))

# %%
# Calibration in cross-validation
# -------------------------------
# skcalib's scorers call ``predict_proba`` and pass ``labels=estimator.classes_`` to the metric,
# so they work in every ``scoring=`` argument of scikit-learn. Calibration errors are
# lower-is-better, so the scorers are negated (``neg_...``). Several scorers, skcalib's and
# scikit-learn's, can be evaluated in one :func:`~sklearn.model_selection.cross_validate` run.

scoring = {
    "accuracy": "accuracy",
    "ECE": skcalib.get_scorer("neg_l1_calibration_error"),
    "MCE": skcalib.get_scorer("neg_max_calibration_error"),
    "class-wise ECE": skcalib.make_calibration_scorer("calibration_error", mode="classwise"),
    "SKCE": skcalib.get_scorer("neg_skce"),
    "MMCE": skcalib.get_scorer("neg_mmce"),
}
print(f"\n{'5-fold CV (mean)':<22}" + "".join(f"{name:>21}" for name in models))
cv_results = {
    name: cross_validate(model, X, y, cv=5, scoring=scoring) for name, model in models.items()
}
for key in scoring:
    # Undo the negation of the calibration scorers for display: lower is better.
    sign = 1.0 if key == "accuracy" else -1.0
    values = [sign * np.mean(res[f"test_{key}"]) for res in cv_results.values()]
    fmt = ">21.3e" if key == "SKCE" else ">21.4f"
    print(f"{key:<22}" + "".join(f"{v:{fmt}}" for v in values))

# %%
# Reliability diagram
# -------------------
# The top-label reliability diagram plots, for equal-width bins of the confidence
# ``max_k p_k``, the accuracy in the bin against its mean confidence. A calibrated classifier
# follows the diagonal; points below it are over-confident, points above under-confident. The
# data of the diagram are :func:`skcalib.reliability_curve` (the bins of
# ``calibration_error(strategy="uniform")``, with the number of samples and a Clopper--Pearson
# interval per bin), so only the drawing needs matplotlib.

curves = {name: skcalib.reliability_curve(y_test, P, n_bins=10, labels=models[name].classes_)
          for name, P in probas.items()}
print()
for name, curve in curves.items():
    # The count-weighted mean gap of the diagram is the top-label ECE with the same bins.
    gap = np.average(np.abs(curve.prob_true - curve.prob_pred), weights=curve.counts)
    ece = calibration_error(y_test, probas[name], n_bins=10, labels=models[name].classes_)
    sparse = curve.counts.min()
    print(f"{name:<20} diagram gap {gap:.4f} = ECE with 10 bins {ece:.4f} "
          f"(smallest bin: {sparse} samples)")

# %%
# :class:`skcalib.plotting.ReliabilityDisplay` draws these curves with their 95%
# Clopper--Pearson intervals and the bin counts (right-hand scale): naive Bayes puts most
# digits in its last bin, and its few low-confidence points rest on a handful of samples each.
# :class:`skcalib.plotting.SmoothReliabilityDisplay` draws the smooth reliability curve of the
# smooth ECE (no bins), with the density of the confidences. Several models share an axis
# through ``ax``; :meth:`~skcalib.plotting.ReliabilityDisplay.from_estimator` predicts itself.

from skcalib.plotting import ReliabilityDisplay, SmoothReliabilityDisplay

fig, axes = plt.subplots(1, 2, figsize=(11, 5))
for name, model in models.items():
    ReliabilityDisplay.from_estimator(model, X_test, y_test, n_bins=10, name=name, ax=axes[0])
    SmoothReliabilityDisplay.from_predictions(y_test, probas[name], name=name, ax=axes[1])
axes[0].set_title("Binned (digits, held-out half)")
axes[1].set_title("Smooth")
fig.tight_layout()
plt.show()
