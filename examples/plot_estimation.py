"""
==================================================================
Choosing an estimator of the calibration error by cross-validation
==================================================================

Binned ECE, kernel density and kernel ridge estimators of a squared calibration error can give
quite different numbers for the same predictions, and each has hyperparameters (the number of
bins, a bandwidth, a ridge). Gruber and Bach ("Optimizing estimators of squared calibration
errors in classification") turn the choice into ordinary supervised learning. Every squared L2
calibration error is the mean of ``h*(p, p)`` for the bilinear function
``h*(p, p') = <p - pi(p), p' - pi(p')>``, ``pi(p) = P(Y | f(X) = p)``; for two *independent*
samples the observable pair target ``T = <p - e_y, p' - e_y'>`` has conditional mean
``h*(p, p')``. So a *calibration estimation function* ``h`` can be fitted like a regression
function and judged by its mean squared error against ``T`` on held-out pairs, the *calibration
estimation risk*: the family and the hyperparameters with the smallest held-out risk are chosen,
and the squared calibration error is estimated as the mean of ``h(p, p)`` on a separate test
split.

For one classifier this example

* estimates its squared top-label calibration error with
  :class:`~skcalib.estimation.CalibrationErrorCV` over binning, kernel density (KDE) and kernel
  ridge (Kronecker and two-step) estimators, prints the selection table, the estimate with its
  standard errors, and compares it with the classical binned squared L2 error,
* compares the candidates by *paired* fold-wise risk differences,
* makes the same selection with plain scikit-learn (:class:`~sklearn.model_selection.GridSearchCV`
  with ``get_scorer("neg_calibration_risk")``) and explains how the result differs,
* estimates the canonical calibration error (KDE against kernel ridge),
* explains why the risk on the test split must never be used for the selection.

A figure shows the held-out risk of every candidate relative to the best one.
"""

# %%
# One classifier and its evaluation data
# --------------------------------------
# A gradient-boosted tree ensemble is trained on 3000 samples of a five-class problem. Its
# predicted probabilities on 4000 other samples, with their labels, are all we need: these are
# the data whose calibration we estimate (the paper uses the test set of CIFAR or ImageNet in
# this role). The classifier is fixed from now on: everything below estimates the calibration of
# this one model.

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import GridSearchCV, KFold, cross_validate, train_test_split
from sklearn.pipeline import Pipeline

from skcalib import calibration_error, get_scorer
from skcalib.estimation import (BinnedCalibrationEstimator, CalibrationErrorCV,
                                GridBoundaryWarning, KDECalibrationEstimator,
                                KernelRidgeCalibrationEstimator, ZeroCalibrationEstimator,
                                paper_grids)

X, y = make_classification(
    n_samples=7000, n_features=20, n_informative=8, n_redundant=4, n_classes=5,
    flip_y=0.05, random_state=0,
)
X_train, X_eval, y_train, y_eval = train_test_split(
    X, y, train_size=3000, random_state=0, stratify=y
)
model = HistGradientBoostingClassifier(random_state=0).fit(X_train, y_train)
P = model.predict_proba(X_eval)
classes = model.classes_
print(f"classifier trained on {len(y_train)} samples; evaluation data: {len(y_eval)} samples, "
      f"accuracy {np.mean(classes[P.argmax(axis=1)] == y_eval):.3f}, "
      f"top-label ECE {calibration_error(y_eval, P, labels=classes):.4f}")

# %%
# Candidates: small versions of the paper's grids
# -----------------------------------------------
# :class:`~skcalib.estimation.CalibrationErrorCV` follows the paper's protocol (Sec. 5.2): a
# random 80 / 20 split of the evaluation data into a *tuning* part and a *test* part, five-fold
# cross-validation on the tuning part (every candidate is fitted on four folds and its risk
# measured on the fifth), selection of the candidate with the smallest mean held-out risk --
# across families --, and the estimate: the mean of ``h(p, p)`` over the test part, averaged
# over the five fold models.
#
# :func:`~skcalib.estimation.paper_grids` gives the paper's grids for ``n`` training samples per
# fold (here ``4/5`` of the 3200 tuning samples); to stay fast we take seven values of each:
#
# * :class:`~skcalib.estimation.BinnedCalibrationEstimator` -- equal-width bins of the
#   confidence; its training-data estimate is the squared binned L2 error,
# * :class:`~skcalib.estimation.KDECalibrationEstimator` -- a Nadaraya-Watson estimate of the
#   accuracy at each confidence with Beta kernels (Popordanoska et al. 2022),
# * :class:`~skcalib.estimation.KernelRidgeCalibrationEstimator` -- kernel ridge regression on
#   all pairs with the product kernel (``method="kronecker"``) or a kernel ridge fit of the
#   residual ``p - pi(p)`` plugged into the inner product (``"two_step"``), both with the
#   paper's RBF kernel (``gamma = 1/2``).
#
# The kernel ridge estimators use a Nystrom approximation with 200 landmarks
# (``n_components=200``) instead of the exact ``O(n^3)`` eigendecomposition: on the scalar
# top-label confidence the RBF kernel matrix has fewer than ten eigenvalues above rounding level,
# so the results agree with the exact fit to about six decimals (checked below), in a small
# fraction of the time. (With far fewer landmarks the smallest ridges, which reach down to those
# rounding-level eigenvalues, would start to differ.)
#
# :class:`~skcalib.estimation.ZeroCalibrationEstimator` (``h = 0``, "the model is calibrated")
# is added as a baseline: a useful estimator must have a smaller risk.

n_tune = len(y_eval) - int(np.ceil(0.2 * len(y_eval)))  # the tuning part of the 80 / 20 split
n_fold_train = n_tune - n_tune // 5                      # training folds of 5-fold CV
grids = paper_grids(n_fold_train, mode="top_label")
small = {
    "binning": {"n_bins": [5, 10, 15, 20, 30, 50, 100]},
    "kde": {"bandwidth": grids["kde"]["bandwidth"][5:18:2]},
    "kronecker": {"alpha": grids["kronecker"]["alpha"][1:8]},
    "two_step": {"alpha": grids["two_step"]["alpha"][1:8]},
}
for family, grid in small.items():
    (name, values), = grid.items()
    print(f"{family:<10} {name:<9} " + " ".join(f"{v:.3g}" for v in values))


def short(params):
    """``{"alpha": 5.0596e-12}`` as ``alpha=5.06e-12``."""
    return ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in params.items())


def kernel_ridge(method, **params):
    return KernelRidgeCalibrationEstimator(method=method, n_components=200, random_state=0,
                                           **params)


candidates = [
    ("binning", BinnedCalibrationEstimator(), small["binning"]),
    ("kde", KDECalibrationEstimator(), small["kde"]),
    ("kronecker", kernel_ridge("kronecker"), small["kronecker"]),
    ("two_step", kernel_ridge("two_step"), small["two_step"]),
    ("zero", ZeroCalibrationEstimator(), {}),
]

# %%
# Cross-validated selection and the estimate
# ------------------------------------------
# ``summary()`` lists every candidate, best first: the mean held-out risk over the five folds
# with its standard error, ``100 * sqrt(risk)`` (the number in the paper's tables) and -- for
# reporting only, they play no part in the choice -- every candidate's estimate on the test part
# with the standard error over the fold models.

cv = CalibrationErrorCV(candidates, mode="top_label", cv=5, random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", GridBoundaryWarning)
    cv.fit(P, y_eval)
print(f"\ntuning part {n_tune} samples (training folds {cv.n_train_}), "
      f"test part {cv.n_test_} samples\n")
print(cv.summary())
for w in caught:
    print(f"{w.category.__name__}: {w.message}")

# %%
# ``calibration_error_`` estimates the **squared** top-label calibration error ``TCE_2^2`` --
# Eq. 21 of the paper gives the square, not the root, whatever its name says. It can be negative,
# so it is never clipped; only to report the error on the scale of the probabilities do we take
# the square root, after clipping at 0.
#
# Which estimate? The paper reports the *plug-in*: the mean of ``h(p, p)`` over the test part
# for the selected, regularised fit ``h``. A plug-in of a squared quantity is **biased** --
# downwards when ``h`` is regularised (a large ridge or bandwidth, few bins shrink ``h`` towards
# 0), upwards when ``h`` follows the label noise -- and selecting ``h`` by the risk does not
# remove the bias: on the canonical notion of this simulation it is several of its standard
# errors low. So ``CalibrationErrorCV`` reports by default the **one-step** estimate: the
# selected candidate is refitted on the folds, and each sample's label corrects the plug-in at
# that sample, scored by a model that never saw it. Its bias is of second order (minus the
# squared smoothing bias of the fitted residual), and its standard error -- from the per-sample
# influence values -- gives an interval whose coverage the user guide measures on simulations
# with known truths ("Which estimate is reported"). ``estimates_`` holds all three estimates of
# the fit: one-step, the cross-fitted product, and the paper's plug-in.

est = cv.calibration_error_
low, high = cv.confidence_interval()
print(f"\nselected: {cv.best_family_} ({short(cv.best_params_)})")
print(f"squared TCE, one-step   {est:.6f}  (SE {cv.total_standard_error_:.6f}, "
      f"95% interval [{low:.6f}, {high:.6f}])")
for kind, (value, se) in cv.estimates_.items():
    print(f"  {kind:<8} {value:.6f}  (SE {se:.6f})")
print(f"TCE = sqrt(max(est, 0)) {np.sqrt(max(est, 0.0)):.4f}")

# %%
# The plug-in's error bars
# ------------------------
# ``CalibrationErrorCV(estimate="plugin")`` reports the paper's estimate (above it is in
# ``estimates_["plugin"]``). Then its
# ``standard_error_`` is the spread of the five fold models' estimates on the shared test part
# (the paper's error bars), ``sampling_standard_error_`` the standard error of the mean of
# ``h(p, p)`` over the test samples, and ``total_standard_error_`` adds the variance of the fold
# ensemble over tuning samples, corrected for the overlap of the folds' training sets. Every one
# of them measures how the estimate *varies*, not how far its mean is from the truth: they do
# not cover the plug-in's bias. For a *verdict* on whether the model is calibrated, use the SKCE
# tests of ``skcalib.stats`` (:func:`skcalib.stats.skce_test`;
# ``examples/plot_calibration_tests.py``).

value, se = cv.estimates_["plugin"]
plugin_best = int(np.argmin(cv.cv_results_["mean_risk"]))  # the plug-in's selection
plugin_folds = np.array([cv.cv_results_[f"split{k}_estimate"][plugin_best] for k in range(5)])
print(f"plug-in {value:.6f}: total SE {se:.6f} (it does not cover the plug-in's bias)")
print(f"fold models' plug-in estimates {np.array2string(plugin_folds, precision=6)}")

# %%
# The classical binned estimate, ``calibration_error(..., norm="l2", squared=True)``, is the
# binning estimation function fitted *and* evaluated on the same samples (Gruber and Bach,
# Eq. 24). It is biased upwards by the sampling variance of the accuracy in each bin, the more so
# the fewer samples per bin; the debiased version (Kumar et al. 2019) subtracts that variance.
# Here both use the usual untuned 15 bins, on each part of ``CalibrationErrorCV``'s split (it
# splits the sample indices with ``train_test_split`` and its ``random_state``) and on all the
# data.
#
# Note what the estimate above does *not* use: the labels of the test part. The estimation
# function learns the calibration from the tuning part's labels and is then evaluated at the test
# part's predictions. A binned error of the 800 test samples alone depends on their labels and is
# far noisier -- here the test part happens to be more over-confident (larger mean confidence
# minus accuracy) than the tuning part, and its binned errors are accordingly larger.

idx_tune, idx_test = train_test_split(np.arange(len(y_eval)), test_size=0.2, random_state=0)
P_tune, y_tune = P[idx_tune], y_eval[idx_tune]
P_test, y_test = P[idx_test], y_eval[idx_test]
parts = {"tuning part": (P_tune, y_tune), "test part": (P_test, y_test), "all data": (P, y_eval)}
print(f"\n{'15 bins':<36}" + "".join(f"{name:>13}" for name in parts))
rows = {
    "squared L2 error": {},
    "squared L2 error, debiased": {"debias": True},
}
for label, kwargs in rows.items():
    print(f"{label:<36}" + "".join(
        f"{calibration_error(yy, PP, norm='l2', squared=True, labels=classes, **kwargs):>13.6f}"
        for PP, yy in parts.values()))
print(f"{'mean confidence - accuracy':<36}" + "".join(
    f"{np.mean(PP.max(axis=1) - (classes[PP.argmax(axis=1)] == yy)):>13.4f}"
    for PP, yy in parts.values()))

# %%
# How different are the candidates really?
# ----------------------------------------
# The risks in the table agree to three or four significant digits, and their standard errors
# are far larger than their differences. This is expected. The risk of ``h`` is the risk of the
# true ``h*`` plus ``E[(h - h*)^2]``, and the first term -- the irreducible noise of the pair
# targets, which comes from the randomness of the labels -- dwarfs the second. The fold standard
# error mostly measures how that noise varies between folds, which is common to all candidates.
# To compare two candidates, look at their *paired* fold-wise differences: both were evaluated on
# the same held-out folds, so the shared noise cancels. The helper below prints, for the best
# candidate of each family, its mean risk minus the selected candidate's risk, fold by fold, with
# the standard error of that difference.


def paired_differences(search):
    """Mean and SE over folds of each candidate's risk minus the least risk's candidate's."""
    res = search.cv_results_
    n_splits = search.n_splits_
    risks = np.array([res[f"split{k}_risk"] for k in range(n_splits)])  # (folds, candidates)
    diff = risks - risks[:, [int(np.argmin(res["mean_risk"]))]]
    return diff.mean(axis=0), diff.std(axis=0, ddof=1) / np.sqrt(n_splits)


def print_best_of_each_family(search, title):
    res = search.cv_results_
    diff_mean, diff_se = paired_differences(search)
    print(f"\n{title:<42}{'risk - best':>13}{'paired SE':>11}{'estimate':>11}{'fold SE':>10}")
    for family in dict.fromkeys(res["family"]):
        idx = np.flatnonzero(res["family"] == family)
        i = idx[np.argmin(res["mean_risk"][idx])]
        label = f"{family} {short(res['params'][i])}".strip()
        print(f"{label:<42}{diff_mean[i]:>13.2e}{diff_se[i]:>11.2e}"
              f"{res['mean_estimate'][i]:>11.6f}{res['se_estimate'][i]:>10.2e}")


print_best_of_each_family(cv, "top-label: best of each family")

# %%
# The plot shows, for every family, the mean paired risk difference to the candidate of least
# risk over its grid, with the paired standard errors.

r = cv.cv_results_
diff_mean, diff_se = paired_differences(cv)
families = [f for f in dict.fromkeys(r["family"]) if f != "zero"]
fig, axes = plt.subplots(1, len(families), figsize=(12, 3.6), sharey=True)
for ax, family in zip(axes, families):
    idx = np.flatnonzero(r["family"] == family)
    (name,) = r["params"][idx[0]]
    values = np.array([r["params"][i][name] for i in idx], dtype=float)
    ax.errorbar(values, diff_mean[idx], yerr=diff_se[idx], marker="o", capsize=3)
    ax.axhline(0.0, color="grey", linestyle="--", label="least risk")
    ax.axhline(diff_mean[r["family"] == "zero"][0], color="C3", linestyle=":",
               label="h = 0")
    ax.set_xscale("log")
    ax.set_xlabel(name)
    ax.set_title(family)
axes[0].set_ylabel("held-out risk - best risk")
axes[0].legend(loc="upper left")
fig.suptitle("Paired 5-fold risk differences (top-label), mean and SE")
fig.tight_layout()
plt.show()

# %%
# The same selection with plain scikit-learn
# ------------------------------------------
# Every estimation function is a scikit-learn estimator whose ``X`` is the predicted
# probabilities and ``y`` the labels, and ``get_scorer("neg_calibration_risk")`` (or the
# estimator's own ``score``) is the negated held-out risk. So
# :class:`~sklearn.model_selection.GridSearchCV` tunes one family directly. We give it the tuning
# part of ``CalibrationErrorCV``'s split and the same shuffled folds; its fold scores are then
# exactly the negated risks of the table above. (Shuffle the folds: unshuffled ``KFold`` on data
# sorted by label would give folds that are not samples of the same distribution.) One
# difference in cost: ``GridSearchCV`` fits every ``alpha`` from scratch, while
# ``CalibrationErrorCV`` decomposes the kernel matrix once per fold and evaluates the whole ridge
# grid on it.

folds = KFold(5, shuffle=True, random_state=0)
search = GridSearchCV(
    kernel_ridge("kronecker", mode="top_label"), small["kronecker"],
    scoring=get_scorer("neg_calibration_risk"), cv=folds,
).fit(P_tune, y_tune)
kron = np.flatnonzero(r["family"] == "kronecker")
print(f"\nGridSearchCV (kronecker): best alpha {search.best_params_['alpha']:.3g}; largest "
      f"difference to CalibrationErrorCV's mean risks "
      f"{np.max(np.abs(-search.cv_results_['mean_test_score'] - r['mean_risk'][kron])):.1e}")

# %%
# The difference is the final step. With ``refit=True`` (the default) ``GridSearchCV`` refits
# the best candidate on the whole tuning part and we evaluate that single model on the test part.
# The paper instead averages the five fold models -- nothing is refitted -- which also gives the
# fold standard error. ``cross_validate(..., return_estimator=True)`` keeps the fold models and
# reproduces ``CalibrationErrorCV``'s estimate for that candidate. The two estimates differ a
# little: the refitted model saw 25 % more data, and its ridge is scaled by that larger ``n``
# (``alpha n^2``), so the same ``alpha`` is not quite the same regularisation.

refit_estimate = search.best_estimator_.calibration_error(P_test)
fold_models = cross_validate(
    kernel_ridge("kronecker", mode="top_label", **search.best_params_), P_tune, y_tune,
    cv=folds, scoring=get_scorer("neg_calibration_risk"), return_estimator=True,
)["estimator"]
ensemble_estimate = np.mean([m.calibration_error(P_test) for m in fold_models])
i_best_kron = kron[np.argmax(search.cv_results_["mean_test_score"])]
print(f"refitted on the tuning part:        {refit_estimate:.6f}")
print(f"fold ensemble (cross_validate):     {ensemble_estimate:.6f}")
print(f"fold ensemble (CalibrationErrorCV): {r['mean_estimate'][i_best_kron]:.6f}")

# %%
# The Nystrom approximation, checked: fitted on the first 1200 tuning samples (the exact
# ``O(n^3)`` eigendecomposition of all 3200 takes about as long as the rest of this example), the
# exact kernel ridge fit (``n_components=None``) and the approximation give the same estimate to
# about six decimals.

for n_components in (None, 200):
    h = KernelRidgeCalibrationEstimator(method="kronecker", mode="top_label",
                                        n_components=n_components, random_state=0,
                                        **search.best_params_).fit(P_tune[:1200], y_tune[:1200])
    print(f"{'exact' if n_components is None else 'Nystrom, 200 landmarks':<22} "
          f"(1200 samples): {h.calibration_error(P_test):.6f}")

# %%
# ``GridSearchCV`` tunes one estimator, but it can also choose *across families* when the
# estimator is a one-step :class:`~sklearn.pipeline.Pipeline` whose step is itself a
# hyperparameter. The pipeline's ``score`` is the step's, so ``scoring=None`` is the negated risk
# again (``get_scorer("neg_calibration_risk")`` accepts only the estimation functions
# themselves, not a pipeline).

family_grid = [
    {"h": [BinnedCalibrationEstimator(mode="top_label")], "h__n_bins": small["binning"]["n_bins"]},
    {"h": [KDECalibrationEstimator(mode="top_label")], "h__bandwidth": small["kde"]["bandwidth"]},
    {"h": [kernel_ridge("kronecker", mode="top_label")], "h__alpha": small["kronecker"]["alpha"]},
    {"h": [kernel_ridge("two_step", mode="top_label")], "h__alpha": small["two_step"]["alpha"]},
]
family_search = GridSearchCV(Pipeline([("h", ZeroCalibrationEstimator())]), family_grid,
                             cv=folds).fit(P_tune, y_tune)
family_names = ["binning", "kde", "kronecker", "two_step"]
best_family = next(name for name, grid in zip(family_names, family_grid)
                   if family_search.best_params_["h"] is grid["h"][0])
best_params = {k[3:]: v for k, v in family_search.best_params_.items() if k != "h"}
print(f"\nGridSearchCV over families: {best_family} ({short(best_params)}), risk "
      f"{-family_search.best_score_:.6f}; refitted estimate "
      f"{family_search.best_estimator_.named_steps['h'].calibration_error(P_test):.6f}")

# %%
# The canonical calibration error
# -------------------------------
# The canonical notion asks whether the whole probability vector is calibrated,
# ``P(Y | f(X) = p) = p``; its estimation functions work on the simplex (Dirichlet kernels for
# the KDE, an RBF kernel on the probability vectors for kernel ridge). Binning is not used for
# it (equal-width cells of a five-dimensional simplex are almost all empty). The paper's kernel
# ridge grids for this notion differ from the top-label ones. With the paper's fixed
# ``gamma = 1/2`` kernel ridge regression can underfit badly on the simplex -- the selected ridge
# then lies at the end of its grid -- so we also search ``gamma`` (an extension of the paper,
# which ``CalibrationErrorCV``'s default candidates make too; ``estimators_and_grids="paper"``
# gives the paper's grids).
# On the simplex the kernel matrix has a larger numerical rank than on the confidence; 200
# Nystrom landmarks still suffice here (400 select the same candidate, with estimates within
# 0.3 %). The table has the same columns as the top-label one: the paired
# differences tell whether a family's higher risk is more than noise.

grids_cce = paper_grids(n_fold_train, mode="canonical")
cce_candidates = [
    ("kde", KDECalibrationEstimator(), {"bandwidth": [0.03, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0]}),
    ("kronecker", kernel_ridge("kronecker"),
     {"alpha": grids_cce["kronecker"]["alpha"][9:16], "gamma": [0.5, 5.0]}),
    ("two_step", kernel_ridge("two_step"),
     {"alpha": grids_cce["two_step"]["alpha"][11:18], "gamma": [0.5, 5.0]}),
]
cv_cce = CalibrationErrorCV(cce_candidates, mode="canonical", cv=5, random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", GridBoundaryWarning)
    cv_cce.fit(P, y_eval)
print_best_of_each_family(cv_cce, "canonical: best of each family")
est_cce = cv_cce.calibration_error_
low_cce, high_cce = cv_cce.confidence_interval()
print(f"selected: {cv_cce.best_family_} ({short(cv_cce.best_params_)}): squared CCE, one-step "
      f"{est_cce:.6f} (SE {cv_cce.total_standard_error_:.2e}, 95% interval [{low_cce:.6f}, "
      f"{high_cce:.6f}]; plug-in {cv_cce.estimates_['plugin'][0]:.6f}), "
      f"CCE = sqrt(max(est, 0)) {np.sqrt(max(est_cce, 0.0)):.4f}")
for w in caught:
    print(f"{w.category.__name__}: {w.message}")

# %%
# Why the test risk must never be used for selection
# --------------------------------------------------
# Nothing above computes the risk of any candidate on the test part, and nothing should. The
# test part plays the role of a classifier's test set. Its risk would be computed from its
# labels, so choosing the estimation function with the smallest test risk would favour the
# candidates that happen to fit the label noise of those very samples, and the estimate -- the
# mean of ``h(p, p)`` on the same samples -- would inherit that selection: it is no longer an
# honest estimate, just as the test accuracy of the classifier that did best on the test set
# overstates its accuracy. Gruber and Bach (Sec. 3.2) therefore "encourage to never compare the
# test set risk of different calibration estimation functions, since this would put a bias on the
# final calibration estimation". The held-out folds of the tuning part are the validation data
# and the only data on which candidates are compared; the test part is used once, for the final
# mean of ``h(p, p)``. ``CalibrationErrorCV`` never computes a test risk; with ``GridSearchCV``
# it is up to you not to call ``score`` (or the risk scorer) on the test part.
#
# Two more points from the paper:
#
# * The risk differences between good estimators are tiny and often within the error bars
#   ("no calibration estimator outperforms the other approaches across all settings"): the risk
#   is the right criterion, but not a sensitive one. Compare candidates by paired fold
#   differences, as above, and do not over-interpret the ranking. A large risk, on the other
#   hand, often flags an outlying estimate.
# * The risk compares estimators of the calibration of *one fixed model*: the pair targets are
#   built from that model's predictions. Risks of different classifiers (or of a model before and
#   after recalibration) are not comparable, and neither are risks of different notions
#   (top-label and canonical). To compare the calibration of two models, compare their estimates
#   (with their standard errors), not the risks of their estimators. Likewise, a recalibration map
#   or a model chosen with the help of the calibration estimate must be fitted on data disjoint
#   from the data used for the estimate.
