"""Every script in ``examples/`` runs to completion as plain Python, and what it shows holds.

The examples are gallery pages (sphinx-gallery): they show numbers and figures and assert
nothing. The facts they state -- a diagram's data are the metric's, a decomposition adds up,
recalibration keeps the accuracy, the local test rejects where the global ones cannot -- are
checked here, in the example's own namespace after it has run (``CHECKS``).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")  # the examples draw their figures

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = ROOT / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.py"))

#: Run an example as ``__main__``, then the checks (argv[2]) in its namespace.
RUNNER = "import runpy, sys; g = runpy.run_path(sys.argv[1], run_name='__main__'); " \
         "exec(sys.argv[2], g)"

#: Example -> statements run in its namespace after it ran (the facts its text states).
CHECKS = {
    "plot_classifier_calibration.py": """
from skcalib.plotting import ReliabilityDisplay
for name, model in models.items():  # the diagram draws the data of reliability_curve
    display = ReliabilityDisplay.from_estimator(model, X_test, y_test, n_bins=10)
    assert np.array_equal(display.prob_true, curves[name].prob_true)
""",
    "plot_local_calibration.py": """
ece_boost = calibration_error(y[test], b_test)
# recalibration lowers the ECE, but the local test still rejects; the audit-aware model passes
assert all(calibration_error(y[test], p) < ece_boost for p in recalibrated.values())
assert p_model < 0.01 and p_boost < 0.01 and all(v < 0.05 for v in p_after.values())
assert p_aware_value > 0.05
""",
    "plot_recalibration.py": """
# temperature scaling keeps the predicted class
assert rows["network"]["accuracy"] == rows["temperature-scaled"]["accuracy"]
assert np.array_equal(recalibrated.predict(X_test), mlp.predict(X_test))
""",
    "plot_regression_calibration.py": """
from skcalib.plotting import IntervalCoverageDisplay
for name, p in predictions.items():  # the display draws the coverages printed
    display = IntervalCoverageDisplay.from_predictions(y_test, p, levels=levels)
    assert np.allclose(display.coverage, coverage[name])
""",
    "plot_regression_forms.py": """
from skcalib.plotting import IntervalCoverageDisplay
for name, pred in before.items():  # the display draws the coverages printed
    display = IntervalCoverageDisplay.from_predictions(y_test, pred, levels=coverage_levels)
    assert np.allclose(display.coverage, [rows_before[name][f"coverage {lv:.0%}"]
                                          for lv in coverage_levels])
# the forest is too confident and the repairs bring the coverage to the levels
forest_before, forest_after = rows["random forest, before"], rows["random forest, after"]
assert forest_before["PIT test p"] < 0.001 < 0.05 < forest_after["PIT test p"]
assert forest_before["coverage 90%"] < 0.7 and abs(forest_after["coverage 90%"] - 0.9) < 0.05
assert rows["quantile boosting, before"]["coverage 90%"] < 0.85
assert rows["quantile boosting, after"]["coverage 90%"] >= 0.85
assert skce_forest_after < 0.1 * skce_forest
# the CQR bounds are the knots of the conformalized quantiles: the same coverage
assert np.allclose(list(bounds_coverage.values()),
                   interval_coverage(y_test, cqr, levels=list(bounds_coverage)))
""",
    "plot_toolbox_classification.py": """
for name, p in proba.items():
    # the count-weighted mean gap of the curve is the ECE of the same bins
    curve = skcalib.reliability_curve(y_test, p, n_bins=10)
    ece = np.average(np.abs(curve.prob_true - curve.prob_pred), weights=curve.weight_sums)
    assert np.isclose(ece, skcalib.calibration_error(y_test, p, n_bins=10))
    # the decompositions add up to the Brier score
    brier = skcalib.brier_score(y_test, p)
    mur = skcalib.murphy_decomposition(y_test, p, n_bins=10)
    corp = skcalib.corp_decomposition(y_test, p)
    assert np.isclose(corp.mcb - corp.dsc + corp.unc, brier, rtol=1e-12)
    assert np.isclose(mur.rel - mur.res + mur.unc + mur.within_bin, brier, rtol=1e-12)
""",
    "plot_toolbox_regression.py": """
assert np.isclose(crps_rows, crps_normal)  # (n, 2) rows are Normal predictions
""",
}


def test_examples_exist():
    assert EXAMPLES, f"no example scripts found in {EXAMPLES_DIR}"
    unknown = set(CHECKS) - {p.name for p in EXAMPLES}
    assert not unknown, f"checks of examples that do not exist: {sorted(unknown)}"


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_are_gallery_pages(script):
    # narrative cells and figures; no asserts, temporary files or optional-matplotlib guards
    text = script.read_text()
    assert text.startswith('"""') and "# %%" in text
    assert "plt.show()" in text
    for banned in ("assert ", "tempfile", "savefig", "plt = None", "except ImportError"):
        assert banned not in text, f"{script.name} contains {banned!r}"


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script, tmp_path):
    env = dict(os.environ)
    env["MPLBACKEND"] = "Agg"
    # the skcalib of this checkout, whatever is installed
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # One BLAS/OpenMP thread: small problems only get slower with more, and much slower when
    # other processes compete for the cores (e.g. a parallel test run).
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(script), CHECKS.get(script.name, "")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a guard against a hang, not a speed check (a loaded machine took > 120 s)
    )
    assert proc.returncode == 0, (
        f"{script.name} exited with {proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}"
        f"\n--- stderr ---\n{proc.stderr[-4000:]}"
    )
