"""
=======================================================================
Calibration of ensembles and quantile regressors: measure, test, repair
=======================================================================

Most probabilistic regressors do not predict a mean and a standard deviation. A random forest
predicts one number per tree; quantile gradient boosting predicts a few quantiles, one model per
level. skcalib reads both forms as they are:

* the trees' predictions as an :class:`~skcalib.distributions.Empirical` distribution (an
  ensemble of point predictions is a sample-based predictive distribution, one draw per member);
* the predicted quantiles as a :class:`~skcalib.distributions.Quantiles` distribution
  (the quantile function interpolated linearly between the levels).

On scikit-learn's bundled ``diabetes`` data this example fits a
:class:`~sklearn.ensemble.RandomForestRegressor` and quantile
:class:`~sklearn.ensemble.HistGradientBoostingRegressor` models, *measures* their calibration
(CRPS, coverage of central intervals, SKCE), *tests* it (:func:`skcalib.stats.pit_test`),
*repairs* it on a held-out calibration split, and shows the figures before and after. The page
"What form do your predictions take?" of the user guide lists which metric applies to which
form, and what is exact.
"""

# %%
# Data and models
# ---------------
# 442 patients: 202 train the models, 120 calibrate the repairs, 120 are the test set on which
# everything is measured. The forest's trees (leaves of at least 10 patients, each tree on a
# bootstrap sample) predict averages of the targets; their spread measures how much the fitted
# function varies between bootstrap samples, not the noise of the targets around it, so a random
# forest read as an ensemble is expected to be too confident. Each quantile model is fitted
# with the pinball loss of its level.

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor
from sklearn.model_selection import train_test_split

from skcalib import crps, interval_bounds_coverage, interval_coverage, skce
from skcalib.plotting import (IntervalCoverageDisplay, PITHistogramDisplay,
                              QuantileCalibrationDisplay)
from skcalib.recalibration import ConformalQuantileRecalibration, SpreadScaling
from skcalib.scorers import predict_distribution
from skcalib.stats import pit_test

X, y = load_diabetes(return_X_y=True)
X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=120, random_state=0)
X_train, X_cal, y_train, y_cal = train_test_split(X_fit, y_fit, test_size=120, random_state=0)

forest = RandomForestRegressor(n_estimators=50, min_samples_leaf=10, random_state=0)
forest.fit(X_train, y_train)

levels = np.array([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95])
quantile_models = [
    HistGradientBoostingRegressor(loss="quantile", quantile=tau, max_iter=100,
                                  learning_rate=0.05, max_leaf_nodes=8, random_state=0)
    .fit(X_train, y_train)
    for tau in levels
]


# %%
# The predictions as distributions
# --------------------------------
# The forest's prediction for a patient is the list of its 50 trees' predictions: an
# ``Empirical`` with 50 equally weighted draws per row. The quantile models' predictions, one
# column per level, form a ``Quantiles`` (crossing quantiles, which separately fitted models
# can produce, are sorted per row).

# :func:`~skcalib.scorers.predict_distribution` reads both: a fitted averaging ensemble (its
# members' mean must equal its ``predict``, which rules out boosting's additive stages) and a
# list of fitted quantile regressors, whose levels it reads from each model's ``quantile``.


def forest_prediction(X):
    return predict_distribution(forest, X)


def quantile_prediction(X):
    return predict_distribution(quantile_models, X)


before = {"random forest": forest_prediction(X_test),
          "quantile boosting": quantile_prediction(X_test)}

# %%
# Measure and test
# ----------------
# The CRPS is a proper score in the unit of the target (lower is better); the coverage of the
# central 50, 80 and 90 % intervals should equal those levels; the PIT test asks whether the
# probability integral transforms are uniform, as they are for a calibrated model; the SKCE is
# zero for a calibrated model. For ``Empirical`` predictions every one of them is exact: the
# kernel expectations of the SKCE are finite double sums over the trees.

coverage_levels = [0.5, 0.8, 0.9]


def summary(y_true, pred):
    # random_state: the PIT of a target equal to a tree's prediction is drawn within the step
    # (the randomised PIT), so the seed makes the printed p-values reproducible
    row = {"CRPS": crps(y_true, pred), "PIT test p": pit_test(y_true, pred, random_state=0).pvalue}
    row.update({f"coverage {lv:.0%}": c
                for lv, c in zip(coverage_levels,
                                 interval_coverage(y_true, pred, levels=coverage_levels))})
    return row


def print_table(rows):
    names = list(next(iter(rows.values())))
    print(f"{'':<28}" + "".join(f"{name:>14}" for name in names))
    for label, row in rows.items():
        print(f"{label:<28}" + "".join(f"{row[name]:>14.3g}" for name in names))


rows_before = {name: summary(y_test, pred) for name, pred in before.items()}
print_table(rows_before)
skce_forest = skce(y_test, before["random forest"], random_state=0)
skce_quantiles = skce(y_test, before["quantile boosting"], random_state=0)
print(f"\nSKCE of the forest: {skce_forest:.3g}, of the quantile models: {skce_quantiles:.3g}")

# %%
# The forest's intervals cover far fewer targets than their levels: its trees agree with each
# other much more than the targets agree with them. (The SKCE estimate is unbiased, so for a
# nearly calibrated model it can come out slightly negative; the test, not the sign, decides.) The quantile models are closer, but their
# intervals are too narrow as well: on 202 training samples the fitted quantiles are pulled
# towards the data they were fitted on.
#
# Repair
# ------
# Both repairs are fitted on the calibration split only.
#
# *The forest*: spread scaling. Each row's trees are moved away from (or towards) their mean by
# one common factor ``s``; the factor minimises the mean CRPS on the calibration split. This
# keeps the ensemble's mean and shape and fixes its width.
#
# *The quantile models*: conformalized quantile regression (Romano, Patterson and Candes 2019).
# For the central interval between the levels ``tau`` and ``1 - tau``, the conformity score of
# a calibration target is how far it falls outside the interval (negative inside); both bounds
# are widened by the ``(1 - alpha)(1 + 1/n)`` empirical quantile of the scores, which
# guarantees a coverage of at least ``1 - alpha = 1 - 2 tau`` on new data (on average over
# calibration splits; any one split can fall short by chance).

spread = SpreadScaling(objective="crps").fit(forest_prediction(X_cal), y_cal)
print(f"spread factor of the forest: {spread.scale_:.2f}")
cqr_recalibrator = ConformalQuantileRecalibration().fit(quantile_prediction(X_cal), y_cal)

after = {"random forest": spread.transform(before["random forest"]),
         "quantile boosting": cqr_recalibrator.transform(before["quantile boosting"])}
rows = {}
for name in before:
    rows[f"{name}, before"] = rows_before[name]
    rows[f"{name}, after"] = summary(y_test, after[name])
print_table(rows)
skce_forest_after = skce(y_test, after["random forest"], random_state=0)
print(f"\nSKCE of the forest: {skce_forest:.3g} before, {skce_forest_after:.3g} after")

# %%
# After the repairs the coverage of both models is close to the nominal levels, the PIT test
# no longer rejects, the forest's SKCE falls by about two orders of magnitude, and the CRPS
# improves a little (it rewards calibration and sharpness together). With 120 test samples the
# coverage of each level is only known to within about +-8 percentage points (the error bars
# below), so differences smaller than that are noise.
#
# The conformalized intervals themselves are intervals given by their bounds; their coverage
# is :func:`skcalib.interval_bounds_coverage`, and
# :meth:`IntervalCoverageDisplay.from_bounds <skcalib.plotting.IntervalCoverageDisplay.from_bounds>`
# draws it.

cqr = after["quantile boosting"]
cqr_bounds = {round(1 - 2 * levels[j], 2): np.column_stack([cqr.values[:, j], cqr.values[:, -1 - j]])
              for j in range(levels.size // 2)}
bounds_coverage = interval_bounds_coverage(y_test, cqr_bounds)
print({level: round(c, 3) for level, c in bounds_coverage.items()})

# %%
# Before and after
# ----------------
# One row per model. The PIT histogram of the forest before the repair is U-shaped (most targets
# fall outside the bulk of the trees); the quantile-calibration curves and the interval
# coverage move towards the diagonal after the repair. The grey bands show what a calibrated
# model produces on 120 test samples.

fig, axes = plt.subplots(2, 3, figsize=(15, 9.5))
for row, name in enumerate(before):
    for label, pred, histtype in (("before", before[name], "bar"),
                                  ("after", after[name], "step")):
        PITHistogramDisplay.from_predictions(y_test, pred, bins=10, name=label,
                                             histtype=histtype, ax=axes[row, 0])
        QuantileCalibrationDisplay.from_predictions(y_test, pred, name=label, ax=axes[row, 1],
                                                    fill=False)
        IntervalCoverageDisplay.from_predictions(y_test, pred, levels=coverage_levels,
                                                 name=label, ax=axes[row, 2])
    axes[row, 0].set_title(f"{name}: PIT histogram")
    axes[row, 1].set_title(f"{name}: quantile calibration")
    axes[row, 2].set_title(f"{name}: interval coverage")
IntervalCoverageDisplay.from_bounds(y_test, cqr_bounds, name="CQR bounds", ax=axes[1, 2],
                                    errorbar_kwargs={"linestyle": ":"})
fig.tight_layout()
plt.show()
