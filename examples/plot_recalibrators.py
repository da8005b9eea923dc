"""
=======================================================
Choosing a recalibration method
=======================================================

No single recalibration method wins everywhere. Temperature scaling fits one number and never
changes the predicted class; Platt and beta calibration fit a few numbers per class; vector,
matrix and Dirichlet scaling fit a linear map of the logits (up to ``C * (C + 1)`` numbers);
isotonic regression, histogram binning, scaling-binning and Venn--Abers predictors fit a monotone
or piecewise-constant map with many degrees of freedom. The more flexible the map, the more
miscalibration it can repair -- and the more held-out data it needs not to overfit.

Every method of :mod:`skcalib.recalibration` is a transformer with the same interface and a
valid ``recalibrator=`` of :class:`~skcalib.recalibration.RecalibratedClassifier`, as an
instance or by name. This example

* scores every method on two problems: a naive Bayes classifier on the digits (ten classes,
  a few hundred calibration samples), and scores whose miscalibration is a per-class bias of the
  logits (which no temperature can fix);
* lets :class:`~sklearn.model_selection.GridSearchCV` choose the method by a calibration scorer,
  on the calibration data only.

The table has the test split's top-label ECE, the p-value of the SKCE test
(:func:`skcalib.stats.skce_test`; small: miscalibration detected), the log loss, the Brier score,
the change in accuracy, and the fit time. ``benchmarks/bench_recalibrators.py`` runs the same
comparison on more data sets, classifiers and distortions, and times every method at
n = 100,000 against scikit-learn's and other packages' implementations.
"""

# %%
# Two problems
# ------------
# A Gaussian naive Bayes classifier on the digits is famously overconfident. Its data are split
# three ways: the *training* split fits the model, the *calibration* split fits the
# recalibrator, the *test* split scores it.

import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.frozen import FrozenEstimator
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.naive_bayes import GaussianNB

import skcalib
from skcalib import brier_score, calibration_error, log_score
from skcalib.recalibration import (BetaCalibration, DirichletCalibration, HistogramBinning,
                                   IsotonicCalibration, MatrixScaling, PlattScaling,
                                   RecalibratedClassifier, ScalingBinning, TemperatureScaling,
                                   VectorScaling, VennAbers)
from skcalib.stats import skce_test

# The names RecalibratedClassifier(recalibrator=...) accepts, and their classes
METHODS = {"temperature": TemperatureScaling, "platt": PlattScaling, "beta": BetaCalibration,
           "vector": VectorScaling, "matrix": MatrixScaling, "dirichlet": DirichletCalibration,
           "isotonic": IsotonicCalibration, "histogram": HistogramBinning,
           "scaling_binning": ScalingBinning, "venn_abers": VennAbers}

X, y = load_digits(return_X_y=True)
X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, test_size=0.5, stratify=y, random_state=0)
X_cal, X_te, y_cal, y_te = train_test_split(X_rest, y_rest, test_size=0.5, stratify=y_rest,
                                            random_state=0)
nb = GaussianNB().fit(X_tr, y_tr)

# %%
# The second problem is synthetic: the true probabilities are ``softmax(L + b)`` with a fixed
# per-class bias ``b``, and the "model" reports the logits ``L``. Its miscalibration is of a
# known form that vector scaling represents exactly.

rng = np.random.default_rng(0)
n_cal, n_te, C = 1500, 5000, 4
L = 1.5 * rng.normal(size=(n_cal + n_te, C))
b = np.array([1.2, -0.8, 0.0, 0.4])
P_true = np.exp(L + b) / np.exp(L + b).sum(axis=1, keepdims=True)
y_syn = (rng.random((len(L), 1)) > np.cumsum(P_true, axis=1)).sum(axis=1).clip(max=C - 1)

problems = {
    "digits / GaussianNB": ("proba", nb.predict_proba(X_cal), y_cal, nb.predict_proba(X_te),
                            y_te),
    "synthetic class bias": ("logits", L[:n_cal], y_syn[:n_cal], L[n_cal:], y_syn[n_cal:]),
}

# %%
# Every method, by name
# ---------------------
# Each name of ``RecalibratedClassifier(recalibrator=...)`` maps to a class of
# :mod:`skcalib.recalibration` (``METHODS``); here the classes are fitted directly on the scores
# (``input`` says whether they are probabilities or logits, ``labels`` lists the classes).


def evaluate(y_true, P, labels):
    return {"ECE": calibration_error(y_true, P, labels=labels),
            "SKCE p": skce_test(y_true, P, labels=labels, random_state=0).pvalue,
            "log loss": log_score(y_true, P, labels=labels),
            "Brier": brier_score(y_true, P, labels=labels),
            "acc": np.mean(np.argmax(P, axis=1) == y_true)}


def softmax(Z):
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


results = {}
predictions = {}  # (problem, method) -> test probabilities, for the reliability diagrams below
for pname, (kind, S_cal, yc, S_te, yt) in problems.items():
    labels = np.unique(np.r_[yc, yt])
    P0 = (np.clip(S_te, 0, 1) / np.clip(S_te, 0, 1).sum(axis=1, keepdims=True)
          if kind == "proba" else softmax(S_te))
    predictions[pname, "uncalibrated"] = P0
    rows = {"uncalibrated": dict(evaluate(yt, P0, labels), fit=0.0)}
    for name, cls in METHODS.items():
        est = cls(input=kind, labels=labels)
        if name == "scaling_binning":
            est.set_params(random_state=0)  # it splits the calibration data at random
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (e.g. convergence on tiny bins)
            t0 = time.perf_counter()
            est.fit(S_cal, yc)
            fit = time.perf_counter() - t0
        predictions[pname, name] = est.predict_proba(S_te)
        rows[name] = dict(evaluate(yt, predictions[pname, name], labels), fit=fit)
    if pname == "synthetic class bias":  # the oracle: the probabilities the labels came from
        rows["(true probabilities)"] = dict(evaluate(yt, P_true[n_cal:], labels), fit=0.0)
    results[pname] = rows
    print(f"\n{pname} (calibration n = {len(yc)}, test n = {len(yt)})")
    print(f"  {'method':<20}{'ECE':>8}{'SKCE p':>8}{'log loss':>10}{'Brier':>8}{'d acc':>8}"
          f"{'fit [ms]':>10}")
    acc0 = rows["uncalibrated"]["acc"]
    for name, r in rows.items():
        print(f"  {name:<20}{r['ECE']:8.4f}{r['SKCE p']:8.3f}{r['log loss']:10.4f}"
              f"{r['Brier']:8.4f}{r['acc'] - acc0:+8.3f}{1e3 * r['fit']:10.1f}")

# %%
# On the digits, naive Bayes' probabilities are nearly all 0 or 1; every method lowers the log
# loss by a large factor. The maps that act on each class separately and renormalise (Platt,
# beta, isotonic, histogram) may change the predicted class, and so the accuracy; temperature
# scaling cannot. With 449 calibration samples and ten classes, the 110 parameters of matrix
# scaling and Dirichlet calibration (unregularised by default) overfit: compare their log loss
# with vector scaling's. On the synthetic bias, the temperature barely helps (the SKCE test
# still rejects), while vector, matrix and Dirichlet scaling -- which can add a bias per class --
# come close to the log loss of the true probabilities (last row).

# %%
# Choosing by cross-validation
# ----------------------------
# ``recalibrator`` is an ordinary hyper-parameter: a grid search over the names, scored by a
# calibration scorer (here the log loss and the SKCE), picks a method on the calibration data
# alone. The frozen model is never refitted.

names = ["temperature", "platt", "vector", "isotonic"]
for scoring in ("neg_log_loss", "neg_skce"):
    grid = GridSearchCV(RecalibratedClassifier(FrozenEstimator(nb)), {"recalibrator": names},
                        scoring=skcalib.get_scorer(scoring), cv=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid.fit(X_cal, y_cal)
    print(f"digits, {scoring}: picks {grid.best_params_['recalibrator']!r}; test log loss "
          f"{log_score(y_te, grid.predict_proba(X_te), labels=np.arange(10)):.4f}")

# %%
# The comparison as a figure
# --------------------------
# The log-loss column of the tables above, drawn: the test log loss of every method on both
# problems (lower is better), so that the methods can be compared at a glance.

fig, axes = plt.subplots(1, len(results), figsize=(11, 4))
for ax, (pname, rows) in zip(np.atleast_1d(axes), results.items()):
    methods = list(rows)
    ax.barh(methods, [rows[m]["log loss"] for m in methods], color="tab:blue")
    ax.set_title(pname)
    ax.set_xlabel("test log loss (lower is better)")
    ax.invert_yaxis()
fig.tight_layout()
plt.show()

# %%
# Class-wise reliability diagrams
# -------------------------------
# Why the temperature cannot repair the synthetic bias: the class-wise diagrams
# (:class:`skcalib.plotting.ReliabilityDisplay` with ``mode="classwise"``, one curve per class)
# of the test probabilities before recalibration, after temperature scaling and after vector
# scaling, with Broecker and Smith's 95% consistency bars (the range of observed frequencies a
# calibrated model with these predictions would show). A per-class bias moves each class's curve
# off the diagonal in its own direction -- one class under-predicted, another over-predicted --
# and a single temperature, which sharpens or flattens all classes alike, leaves them there;
# vector scaling, with one bias per class, brings every curve back within its bars.

from skcalib.plotting import ReliabilityDisplay

pname = "synthetic class bias"
yt = problems[pname][4]
fig, axes = plt.subplots(1, 3, figsize=(15, 4.8), sharey=True)
for ax, name in zip(axes, ("uncalibrated", "temperature", "vector")):
    display = ReliabilityDisplay.from_predictions(
        yt, predictions[pname, name], mode="classwise", n_bins=8, band="consistency",
        random_state=0, show_counts=False, ax=ax)
    outside = sum(int(np.sum((c.prob_true < lo) | (c.prob_true > hi)))
                  for c, lo, hi in zip(display.curves, display.band_low, display.band_high))
    total = sum(len(c) for c in display.curves)
    ax.set_title(f"{name}: {outside} of {total} bins outside their bars")
    print(f"{pname}, {name}: {outside} of {total} class-wise bins outside their 95% "
          "consistency bars")
fig.tight_layout()
plt.show()
