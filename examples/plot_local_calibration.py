"""
=====================================================================
Auditing local calibration: calibrated on average, wrong for a group
=====================================================================

A model can be calibrated on average and still be systematically wrong for a group of people.
The kernel local calibration error (KLCE) of Vashistha and Farahi measures calibration *within*
every neighbourhood of some audit features -- age and a group label here -- which the model need
not have seen, and :func:`skcalib.stats.klce_test` turns it into a p-value.

This example audits a logistic regression on the synthetic data of
:func:`skcalib.datasets.make_audit_data`, where the true risk of people aged 30-40 is higher, and
that of group-1 people aged 55 or more lower, than the model's inputs say. It shows

1. the model passes the global tests (binned ECE, :func:`skcalib.stats.skce_test`) and fails the
   local one;
2. the local calibration bias (:func:`skcalib.local_calibration_bias`) locates the problem:
   positive (risk underestimated) at ages 30-40, negative for group 1 above 55;
3. global recalibration -- temperature scaling and isotonic regression of a gradient-boosting
   model, fitted on a held-out calibration split -- lowers its ECE but does not pass the local
   test (the paper's finding); a model that sees the audit features does.
"""

# %%
# Data and model
# --------------
# Three splits: the model is fitted on the first, recalibrators on the second, and everything
# is evaluated on the third.


import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import SplineTransformer

from skcalib import calibration_error, klce, local_calibration_bias
from skcalib.datasets import make_audit_data
from skcalib.kernels import GaussianKernel
from skcalib.recalibration import TemperatureScaling
from skcalib.stats import klce_test, skce_test

X, y, audit, proba = make_audit_data(6000, random_state=0)
train, cal, test = slice(0, 3000), slice(3000, 4500), slice(4500, 6000)
model = LogisticRegression().fit(X[train], y[train])
p_test = model.predict_proba(X[test])[:, 1]
p_cal = model.predict_proba(X[cal])[:, 1]

# %%
# Global and local tests
# ----------------------
# The ECE and the SKCE test look at the predictions alone; the KLCE test at the predictions and
# the audit features (age, group; standardised by default). The local test's power depends on
# the feature kernel's length scale: the default median heuristic (about 1.4 standard
# deviations here) averages over most of the population, while the bias lives on a scale of a
# decade of age (0.6 standard deviations), so the audit uses a length scale of 0.2.

FEATURE_KERNEL = GaussianKernel(0.2)


def audit_row(name, p):
    ece = calibration_error(y[test], p)
    p_global = skce_test(y[test], p, random_state=0).pvalue
    local = klce_test(y[test], p, audit[test], feature_kernel=FEATURE_KERNEL, random_state=0)
    print(f"{name:<28} ECE {ece:.3f}   SKCE test p {p_global:.3f}   "
          f"KLCE {local.estimate: .2e}   KLCE test p {local.pvalue:.3f}")
    return local.pvalue


print("model                        global tests                    local test (age, group)")
p_model = audit_row("logistic regression", p_test)
p_median = klce_test(y[test], p_test, audit[test], random_state=0).pvalue
print(f"(with the default median-heuristic feature kernel the KLCE test gives p = {p_median:.3f})")

# %%
# Where is it biased?
# -------------------
# The local calibration bias averages the residuals ``y - p`` over the samples close in age,
# group and prediction (leaving each sample out of its own average). The true bias is known
# here: the true risk minus the prediction.

lcb = local_calibration_bias(y[test], p_test, audit[test], feature_kernel=FEATURE_KERNEL,
                             leave_one_out=True)
age, group = audit[test, 0], audit[test, 1]
young = (age >= 30) & (age < 40)
old_g1 = (age >= 55) & (group == 1)
for label, mask in [("ages 30-40", young), ("group 1, 55+", old_g1),
                    ("everyone else", ~young & ~old_g1)]:
    print(f"{label:<16} mean local bias {lcb[mask].mean(): .3f}   "
          f"true {np.mean(proba[test][mask] - p_test[mask]): .3f}")

# %%
# Global recalibration does not fix local miscalibration
# -------------------------------------------------------
# A gradient-boosting model on the same inputs is globally miscalibrated (its ECE is twice the
# logistic regression's). Temperature scaling and isotonic regression, fitted on the
# calibration split, lower its ECE -- but they remap the predictions as a function of the
# predictions only, so they cannot move people aged 30-40 differently from others with the
# same prediction, and the local test still rejects. A model that sees the audit features
# (splines in age, also per group) passes it.

boost = HistGradientBoostingClassifier(random_state=0).fit(X[train], y[train])
b_test = np.clip(boost.predict_proba(X[test])[:, 1], 1e-6, 1 - 1e-6)
b_cal = np.clip(boost.predict_proba(X[cal])[:, 1], 1e-6, 1 - 1e-6)
ts = TemperatureScaling(input="proba").fit(b_cal, y[cal])
iso = IsotonicRegression(out_of_bounds="clip", y_min=1e-6, y_max=1 - 1e-6).fit(b_cal, y[cal])
p_ts = ts.predict_proba(b_test)[:, 1]
p_boost = audit_row("gradient boosting", b_test)
recalibrated = {"+ temperature scaling": p_ts, "+ isotonic regression": iso.predict(b_test)}
# recalibration lowers the ECE, but not the local miscalibration
p_after = {name: audit_row(name, p) for name, p in recalibrated.items()}

with_audit = np.column_stack([X, audit[:, 0], audit[:, 0] * audit[:, 1], audit[:, 1]])
aware = make_pipeline(SplineTransformer(n_knots=8), LogisticRegression(max_iter=2000))
aware.fit(with_audit[train], y[train])
p_aware_value = audit_row("model seeing age and group", aware.predict_proba(with_audit[test])[:, 1])

print(f"\nKLCE of the audited model with the paper's normalisation (kernel-weighted mean): "
      f"{klce(y[test], p_test, audit[test], feature_kernel=FEATURE_KERNEL, normalization='kite'):.2e}")

# %%
# The bias plot
# -------------
# The paper's Fig. 6: each point is one person's local calibration bias against age, coloured
# by group, with a smoothed trend per group.

from skcalib.plotting import LocalCalibrationBiasDisplay

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
LocalCalibrationBiasDisplay.from_predictions(y[test], p_test, audit[test], feature=0,
                                             group=1, feature_kernel=FEATURE_KERNEL, ax=ax1)
ax1.set_title("logistic regression on the model inputs")
ax1.set_xlabel("age")
LocalCalibrationBiasDisplay.from_predictions(y[test], p_ts, audit[test], feature=0,
                                             group=1, feature_kernel=FEATURE_KERNEL, ax=ax2)
ax2.set_title("gradient boosting after temperature scaling")
ax2.set_xlabel("age")
plt.show()
