"""
==============================================================
The practitioner's toolbox: calibration of classifiers
==============================================================

Every calibration metric a practitioner reaches for, on three scikit-learn classifiers fitted to
the same data:

* reliability-curve data with a binomial interval per bin (:func:`skcalib.reliability_curve`),
* the smooth ECE and its smoothed reliability curve (:func:`skcalib.smooth_ece`,
  :func:`skcalib.smooth_reliability_curve`), the ICI family of a loess calibration curve
  (:func:`skcalib.integrated_calibration_index`) and the cumulative-differences (ECCE) test
  (:func:`skcalib.stats.ecce_test`),
* the Brier and log scores and their Murphy and CORP decompositions
  (:func:`skcalib.murphy_decomposition`, :func:`skcalib.corp_decomposition`),
* the clinical tests: Spiegelhalter's Z, Hosmer--Lemeshow and logistic calibration (slope,
  intercept, calibration-in-the-large, O/E) of :mod:`skcalib.stats`,
* a three-class model (top-label metrics, one-vs-rest tests with the Holm correction), and
* the scorers of all of it in one ``cross_validate`` call.

Figures show the reliability diagrams (binned with intervals, smooth and
CORP) and the cumulative differences. :ref:`metrics` says which metric answers which question.
"""

# %%
# Data and classifiers
# --------------------
# A binary problem from :func:`~sklearn.datasets.make_classification` with informative,
# redundant and noise features and 5 % flipped labels. Logistic regression is close to
# calibrated; Gaussian naive Bayes counts the redundant (correlated) features several times and is
# over-confident; a random forest averages trees and is under-confident near 0 and 1.

import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_validate, train_test_split
from sklearn.naive_bayes import GaussianNB

import skcalib
from skcalib.stats import (ecce_test, hosmer_lemeshow_test, logistic_calibration,
                           spiegelhalter_test)

X, y = make_classification(n_samples=8000, n_features=20, n_informative=4, n_redundant=8,
                           flip_y=0.05, class_sep=0.8, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
models = {"logistic": LogisticRegression(max_iter=1000),
          "naive Bayes": GaussianNB(),
          "random forest": RandomForestClassifier(n_estimators=100, min_samples_leaf=5,
                                                  n_jobs=1, random_state=0)}
proba = {name: m.fit(X_train, y_train).predict_proba(X_test)[:, 1] for name, m in models.items()}

# %%
# Reliability-curve data
# ----------------------
# Ten equal-width bins; per bin the mean prediction, the observed frequency, the count and a
# 95 % Clopper--Pearson interval of the frequency. A bin whose interval misses its mean
# prediction is a bin where the model is miscalibrated beyond the noise. The count-weighted mean
# gap is the ECE of the same bins.

for name, p in proba.items():
    curve = skcalib.reliability_curve(y_test, p, n_bins=10)
    missed = (curve.ci_low > curve.prob_pred) | (curve.ci_high < curve.prob_pred)
    ece = np.average(np.abs(curve.prob_true - curve.prob_pred), weights=curve.weight_sums)
    print(f"{name:<14} ECE (10 bins) {ece:.4f}; bins whose interval misses the diagonal: "
          f"{int(missed.sum())} of {curve.n_kept}")

curve = skcalib.reliability_curve(y_test, proba["naive Bayes"], n_bins=10)
print("\nnaive Bayes, per bin:")
print(f"{'mean pred':>10}{'frequency':>11}{'95% interval':>20}{'count':>7}")
for q, f, lo, hi, c in zip(curve.prob_pred, curve.prob_true, curve.ci_low, curve.ci_high,
                           curve.counts):
    print(f"{q:>10.3f}{f:>11.3f}   [{lo:.3f}, {hi:.3f}]{c:>9d}")

# %%
# Smooth and cumulative errors
# ----------------------------
# The smooth ECE needs no bins: its bandwidth is the fixed point ``smECE(sigma) = sigma``. The
# ICI, E50, E90 and Emax summarise the distance of a loess calibration curve (degree 2, span
# 0.75, as Austin and Steyerberg) from the diagonal. The ECCE test needs neither bins nor a
# bandwidth: the standardised cumulative differences are a Brownian motion under calibration.

print(f"\n{'model':<14}{'smECE':>8}{'sigma':>8}{'ICI':>8}{'E50':>8}{'E90':>8}{'Emax':>8}"
      f"{'ECCE KS p':>11}{'Kuiper p':>10}")
for name, p in proba.items():
    sm, sigma = skcalib.smooth_ece(y_test, p, return_bandwidth=True)
    ici = skcalib.integrated_calibration_index(y_test, p, statistic="all")
    ks, kuiper = ecce_test(y_test, p), ecce_test(y_test, p, statistic="kuiper")
    print(f"{name:<14}{sm:>8.4f}{sigma:>8.4f}{ici.ici:>8.4f}{ici.e50:>8.4f}{ici.e90:>8.4f}"
          f"{ici.emax:>8.4f}{ks.pvalue:>11.2g}{kuiper.pvalue:>10.2g}")

# %%
# Proper scores and their decompositions
# --------------------------------------
# The Brier and log scores equal scikit-learn's ``brier_score_loss`` and ``log_loss``. Murphy's
# binned decomposition is exact only with its within-bin term; the CORP decomposition recalibrates
# by isotonic regression instead of bins, and ``score == mcb - dsc + unc`` holds exactly. MCB is
# the part of the score lost to miscalibration, DSC what the forecast gains by discrimination.

print(f"\n{'model':<14}{'Brier':>8}{'log':>8} | Murphy {'REL':>7}{'RES':>8}{'UNC':>8}{'within':>9}"
      f" | CORP {'MCB':>7}{'DSC':>8}{'UNC':>8}")
for name, p in proba.items():
    brier, log = skcalib.brier_score(y_test, p), skcalib.log_score(y_test, p)
    mur = skcalib.murphy_decomposition(y_test, p, n_bins=10)
    corp = skcalib.corp_decomposition(y_test, p)
    print(f"{name:<14}{brier:>8.4f}{log:>8.4f} |        {mur.rel:>7.4f}{mur.res:>8.4f}"
          f"{mur.unc:>8.4f}{mur.within_bin:>9.4f} |      {corp.mcb:>7.4f}{corp.dsc:>8.4f}"
          f"{corp.unc:>8.4f}")
corp_log = skcalib.corp_decomposition(y_test, proba["naive Bayes"], score="log")
print(f"naive Bayes, log score: MCB {corp_log.mcb:.4f}, DSC {corp_log.dsc:.4f}, "
      f"UNC {corp_log.unc:.4f}, score {corp_log.score:.4f}")

# %%
# Clinical tests and logistic calibration
# ---------------------------------------
# Spiegelhalter's Z (two-sided), Hosmer--Lemeshow with deciles of risk (``df = G - 2``: the
# default for development data; ``df=10`` for external validation), and the logistic
# recalibration ``logit P(y=1) = a + b logit(p)``: a slope below 1 means predictions that are too
# extreme; calibration-in-the-large is the intercept with the slope fixed at 1, and O/E the ratio
# of observed to expected events. Hosmer--Lemeshow warns when a group expects fewer than one event
# or non-event (its chi-squared approximation is then unreliable): naive Bayes puts whole deciles
# at probabilities of 1e-7 and 0.999. The example counts the warnings instead of printing them.

print(f"\n{'model':<14}{'Spiegel. p':>11}{'HL p':>10}{'slope':>18}{'CITL':>8}{'O/E':>7}"
      f"{'LR p':>10}")
for name, p in proba.items():
    z = spiegelhalter_test(y_test, p)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hl = hosmer_lemeshow_test(y_test, p)
    lc = logistic_calibration(y_test, p)
    lo, hi = lc.slope_ci
    print(f"{name:<14}{z.pvalue:>11.2g}{hl.pvalue:>10.2g}{lc.slope:>7.2f} [{lo:.2f}, {hi:.2f}]"
          f"{lc.calibration_in_the_large:>8.3f}{lc.oe_ratio:>7.3f}{lc.pvalue:>10.2g}"
          + (f"   (HL: {len(caught)} sparse-group warning)" if caught else ""))

# %%
# A three-class model
# -------------------
# The smooth ECE, the ICI and the ECCE test use the top label (confidence against correctness);
# the clinical tests run one-vs-rest and correct the p-values for multiple testing (Holm). The
# multiclass Brier score sums over the classes; the CORP decomposition is one-vs-rest.

X3, y3 = make_classification(n_samples=6000, n_features=10, n_informative=5, n_classes=3,
                             n_clusters_per_class=1, random_state=1)
X3_train, X3_test, y3_train, y3_test = train_test_split(X3, y3, test_size=0.5, random_state=1)
P3 = GaussianNB().fit(X3_train, y3_train).predict_proba(X3_test)
top = skcalib.reliability_curve(y3_test, P3, mode="top_label", n_bins=10)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # sparse extreme groups, as above
    hl3 = hosmer_lemeshow_test(y3_test, P3)
print(f"\nthree classes (naive Bayes): top-label ECE "
      f"{np.average(np.abs(top.prob_true - top.prob_pred), weights=top.weight_sums):.4f}, "
      f"smECE {skcalib.smooth_ece(y3_test, P3):.4f}, "
      f"ICI {skcalib.integrated_calibration_index(y3_test, P3):.4f}, "
      f"ECCE p {ecce_test(y3_test, P3).pvalue:.2g}, Brier {skcalib.brier_score(y3_test, P3):.4f}")
print(f"  Hosmer-Lemeshow one-vs-rest p-values {np.round(hl3.pvalues, 4)}, Holm-adjusted "
      f"{np.round(hl3.pvalues_adjusted, 4)}, overall {hl3.pvalue:.2g}")

# %%
# Scorers
# -------
# Every metric and test is a scorer (negated where lower is better, p-values as they are), usable
# in ``cross_validate`` and ``GridSearchCV`` next to scikit-learn's.

scoring = {name: skcalib.get_scorer(name) for name in
           ("neg_smooth_ece", "neg_ici", "neg_brier_score", "neg_log_score",
            "spiegelhalter_pvalue", "hosmer_lemeshow_pvalue", "ecce_pvalue")}
scoring["roc_auc"] = "roc_auc"
print(f"\n5-fold cross-validation (means) {'':<6}" + "".join(f"{k[:14]:>15}" for k in scoring))
for name in ("logistic", "naive Bayes"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Hosmer-Lemeshow's sparse groups, as above
        res = cross_validate(models[name], X, y, cv=5, scoring=scoring)
    print(f"{name:<38}" + "".join(f"{res['test_' + k].mean():>15.4f}" for k in scoring))

# %%
# Figures
# -------
# Top left: the binned reliability diagram of each model
# (:class:`skcalib.plotting.ReliabilityDisplay`) with its 95% Clopper--Pearson intervals and the
# number of test samples per bin (right-hand scale). Top right: the smooth reliability curves
# (:class:`skcalib.plotting.SmoothReliabilityDisplay`) with their smooth ECE and the density of
# the predictions. Bottom left: the CORP (isotonic) reliability diagrams. Bottom right: the
# standardised cumulative differences of the ECCE test; under calibration they stay within a few
# units of 0, and their slope over a range of predictions is the miscalibration there.

from skcalib.plotting import ReliabilityDisplay, SmoothReliabilityDisplay

fig, axes = plt.subplots(2, 2, figsize=(12, 10))
for k, (name, p) in enumerate(proba.items()):
    color = f"C{k}"
    ReliabilityDisplay.from_predictions(y_test, p, n_bins=10, name=name, color=color,
                                        ax=axes[0, 0])
    SmoothReliabilityDisplay.from_predictions(y_test, p, name=name, color=color,
                                              ax=axes[0, 1])
    cc = skcalib.corp_decomposition(y_test, p).curve
    axes[1, 0].step(cc.forecast, cc.recalibrated, where="post", color=color, label=name)
    e = ecce_test(y_test, p)
    axes[1, 1].plot(e.abscissa, e.cumulative / e.scale, color=color, label=name)
axes[0, 0].set_title("binned (95% Clopper-Pearson intervals)")
axes[0, 1].set_title("smooth")
ax = axes[1, 0]
ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1)
ax.set_xlabel("predicted probability")
ax.set_ylabel("observed frequency")
ax.legend(fontsize=8)
ax.set_title("CORP (isotonic)")
axes[1, 1].axhline(0, color="grey", linestyle="--", linewidth=1)
axes[1, 1].set_xlabel("k / n (samples sorted by prediction)")
axes[1, 1].set_ylabel("cumulative difference / sigma")
axes[1, 1].set_title("ECCE: cumulative differences")
axes[1, 1].legend(fontsize=8)
fig.tight_layout()
plt.show()
