"""``skcalib demo``: a tour of skcalib on data sets that ship with scikit-learn (no download).

1. **Classification** -- handwritten digits (:func:`sklearn.datasets.load_digits`, 10
   classes), split into training (50 %), recalibration (25 %) and test (25 %) parts. Gaussian
   naive Bayes (over-confident) and a random forest (under-confident) are fitted on the training
   part, and the calibration report of each (:func:`skcalib.calibration_report`) on the test
   part is written to files. Each model is then recalibrated on the recalibration part, with
   temperature scaling and with the best member of the recalibrator family
   (:data:`skcalib.recalibration._registry.CLASSIFIER_RECALIBRATORS`): every member is fitted on one
   half of the recalibration part and scored by the Brier score on the other half; the best is
   refitted on all of it. A before/after table on the test part follows.
2. **Regression** -- diabetes progression (:func:`sklearn.datasets.load_diabetes`), the same
   split. Bayesian ridge regression and a Gaussian process whose noise level was set by hand
   (too low: over-confident) predict normal distributions; they are recalibrated by variance
   scaling (``"temperature"``) and by quantile recalibration (``"quantile"``), the better one
   chosen by the CRPS on a held-out half.

The demo prints a short summary (a verdict per model, the scores before and after
recalibration, which recalibrators keep the predicted class, the files, the glossary and a
command that runs from the user's shell). The full reports (text with the recalibration
details, and HTML), the figures (each report's figure; reliability diagrams, PIT histograms and
quantile calibration curves before and after), the test predictions of every model (as CSV
files that ``skcalib report`` reads) and ``next_steps.txt`` go into the output folder.
``--quick`` runs one model per task with 100 resamples (a few seconds; used by the tests).
"""

import argparse
import csv
import os
import re
import shutil
import sys
import textwrap
import warnings

import numpy as np

from ._io import CLIError
from ._report import _has_matplotlib, _seed

__all__ = ["add_parser", "run"]

DESCRIPTION = """\
A tour of skcalib on data sets that ship with scikit-learn (nothing is downloaded).

Fits two classifiers (handwritten digits) and two probabilistic regressors (diabetes), tests
their calibration, recalibrates them (temperature scaling, and the best of the recalibrator
family chosen on held-out data) and prints a short summary: the verdicts and the scores before
and after. The full reports (text and HTML), the figures, the test predictions and the next
steps go into the output folder. 10 to 60 seconds (--quick: a few)."""


def add_parser(subparsers, parents=()):
    """Add the ``demo`` subcommand to ``subparsers`` (an argparse subparsers action).

    Parameters
    ----------
    subparsers : argparse subparsers action
        From ``ArgumentParser.add_subparsers``.
    parents : sequence of argparse.ArgumentParser, default=()
        Parsers whose options the subcommand shares (``--verbose``, ``--version``).

    Returns
    -------
    argparse.ArgumentParser
        The subcommand's parser.

    Examples
    --------
    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="skcalib").add_subparsers()
    >>> add_parser(sub).get_default("output_dir")
    'skcalib-demo'
    """
    p = subparsers.add_parser(
        "demo", parents=list(parents), help="a tour on bundled data sets: reports, "
        "recalibration, figures", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--output-dir", default="skcalib-demo", metavar="DIR",
                   help="folder for the figures and predictions, created if needed "
                        "(default: ./skcalib-demo)")
    p.add_argument("--random-state", type=_seed, default=0, metavar="SEED",
                   help="seed of the splits, the models and the resampling (default: 0)")
    p.add_argument("--quick", action="store_true",
                   help="one model per task, 100 resamples, fewer and smaller figures: a few "
                        "seconds")
    p.set_defaults(run=run)
    return p


# -- models ------------------------------------------------------------------------------------

def _classifiers(seed):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.naive_bayes import GaussianNB

    return [
        ("gaussian_nb", "Gaussian naive Bayes", GaussianNB()),
        ("random_forest", "random forest (100 trees)",
         RandomForestClassifier(n_estimators=100, random_state=seed)),
    ]


def _regressors(seed):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel
    from sklearn.linear_model import BayesianRidge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    # The kernel and the noise level alpha are set by hand (not fitted): the noise is too low,
    # so the predictive distributions are too narrow.
    gp = make_pipeline(StandardScaler(), GaussianProcessRegressor(
        ConstantKernel(1.0, "fixed") * RBF(3.0, "fixed"), alpha=0.1, normalize_y=True,
        random_state=seed))
    return [
        ("gaussian_process", "Gaussian process (noise set by hand)", gp),
        ("bayesian_ridge", "Bayesian ridge", BayesianRidge()),
    ]


# -- output helpers ----------------------------------------------------------------------------

class _Output:
    """The output folder: figures and CSV files written there, listed at the end."""

    def __init__(self, folder, dpi, can_draw, tight=True):
        self.folder = folder
        self.dpi = dpi
        self.tight = tight
        self.can_draw = can_draw
        self.written = []

    def path(self, name):
        return os.path.join(self.folder, name)

    def figure(self, fig, name, what):
        import matplotlib.pyplot as plt

        try:
            fig.savefig(self.path(name), dpi=self.dpi, bbox_inches="tight" if self.tight else None)
        finally:
            plt.close(fig)
        self.written.append((name, what))

    def text(self, name, text, what):
        with open(self.path(name), "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        self.written.append((name, what))

    def report(self, report, stem, title, details):
        """The full report of a model as text (with ``details``: the recalibration) and HTML."""
        self.text(f"{stem}_report.txt", f"{report}\n\n{details}",
                  f"{title}: full calibration report and recalibration")
        self.text(f"{stem}_report.html", report.to_html(include_plot=self.can_draw),
                  f"{title}: full calibration report (HTML)")

    def csv(self, name, header, columns, what):
        with open(self.path(name), "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            for row in zip(*columns):
                writer.writerow([repr(v) if isinstance(v, float) else v for v in row])
        self.written.append((name, what))


def _prepare_folder(folder):
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise CLIError(f"--output-dir: {folder!r} exists and is not a folder.")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise CLIError(f"--output-dir: cannot create {folder!r}: {exc}") from None


def _pvalue(p):
    if p is None or not np.isfinite(p):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _table(header, rows, aligns, indent=""):
    widths = [max(len(str(r[j])) for r in [header] + rows) for j in range(len(header))]

    def fmt(row):
        cells = [str(c).ljust(w) if a == "<" else str(c).rjust(w)
                 for c, w, a in zip(row, widths, aligns)]
        return indent + "  ".join(cells).rstrip()

    line = fmt(header)
    return "\n".join([line, indent + "-" * (len(line) - len(indent))] + [fmt(r) for r in rows])


def _fit_quietly(estimator, X, y):
    """Fit, recording warnings instead of printing them; returns the warning messages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimator.fit(X, y)
    return [str(w.message).split("\n")[0] for w in caught]


#: Width of the printed summary.
WIDTH = 100


def _heading(text, char="="):
    return f"\n{text}\n{char * len(text)}"


def _report(estimator, X, y, settings, name):
    from ..reporting import calibration_report

    return calibration_report(estimator, X, y, n_resamples=settings["n_resamples"],
                              random_state=settings["seed"], name=name)


# -- the two tasks -----------------------------------------------------------------------------

def _split(X, y, seed, stratify):
    from sklearn.model_selection import train_test_split

    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, test_size=0.5, random_state=seed, stratify=y if stratify else None)
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, test_size=0.5, random_state=seed, stratify=y_rest if stratify else None)
    return X_train, y_train, X_cal, y_cal, X_test, y_test


def _select(candidates, X_cal, y_cal, score, seed, stratify, progress):
    """Fit every candidate on half of the recalibration data, score it on the other half.

    Returns ``[(name, score or None, warnings)]`` sorted best first (failures last).
    """
    from sklearn.base import clone
    from sklearn.model_selection import train_test_split

    X_a, X_b, y_a, y_b = train_test_split(X_cal, y_cal, test_size=0.5, random_state=seed,
                                          stratify=y_cal if stratify else None)
    results = []
    for name, estimator in candidates:
        progress(f"  candidate {name}")
        est = clone(estimator)
        try:
            caught = _fit_quietly(est, X_a, y_a)
            with warnings.catch_warnings(record=True):
                warnings.simplefilter("always")
                value = float(score(est, X_b, y_b))
        except (ValueError, TypeError, np.linalg.LinAlgError) as exc:
            results.append((name, None, [f"failed: {exc}"]))
            continue
        results.append((name, value if np.isfinite(value) else None, caught))
    results.sort(key=lambda r: (r[1] is None, r[1] if r[1] is not None else 0.0))
    return results


def _candidates_text(results, score_name):
    parts = []
    for name, value, caught in results:
        mark = "*" if caught else ""
        parts.append(f"{name} {value:.4f}{mark}" if value is not None else f"{name} failed")
    lines, line = [], "  "
    for part in parts:
        if len(line) + len(part) + 2 > 96:
            lines.append(line.rstrip(", "))
            line = "  "
        line += part + ", "
    lines.append(line.rstrip(", "))
    text = "\n".join(lines)
    if any(caught for _, value, caught in results if value is not None):
        text += ("\n  * warned while fitting (e.g. separable scores or a map fitted on few "
                 "samples); its score counts all the same")
    return (f"Recalibrators fitted on one half of the recalibration split, {score_name} on "
            f"the other half (lower is better):\n{text}")


def _classification(settings, out, progress):
    from sklearn.datasets import load_digits
    from sklearn.frozen import FrozenEstimator

    from .. import brier_score, calibration_error, log_score
    from ..recalibration import CLASSIFIER_RECALIBRATORS, RecalibratedClassifier, method_names
    from ..stats import skce_test

    seed = settings["seed"]
    X, y = load_digits(return_X_y=True)
    X_train, y_train, X_cal, y_cal, X_test, y_test = _split(X, y, seed, stratify=True)
    print(_heading(f"1. Classifiers of handwritten digits ({np.unique(y).size} classes; "
                   f"{len(y_train)} to train, {len(y_cal)} to recalibrate, {len(y_test)} to "
                   "test)"))
    models = _classifiers(seed)[:settings["n_models"]]
    verdicts, table = [], []
    for key, title, model in models:
        progress(f"fitting {title}")
        model.fit(X_train, y_train)
        classes = model.classes_
        progress(f"calibration report of {title}")
        report = _report(model, X_test, y_test, settings, title)
        verdicts.append((title, _short_verdict(report)))
        if out.can_draw:
            out.figure(report.plot(), f"digits_{key}_report.png",
                       f"{title}: report figure")
        P = model.predict_proba(X_test)
        columns = [f"p_{c}" for c in classes]
        out.csv(f"digits_{key}_predictions.csv", ["y"] + columns,
                [y_test.tolist()] + [P[:, j].tolist() for j in range(P.shape[1])],
                f"{title}: test predictions (for skcalib report)")

        frozen = FrozenEstimator(model)
        progress("temperature scaling")
        temperature = RecalibratedClassifier(frozen, recalibrator="temperature")
        _fit_quietly(temperature, X_cal, y_cal)
        progress("choosing the best of the recalibrator family")
        # on probabilities (no decision_function), matrix scaling of their logarithms *is*
        # Dirichlet calibration: list it once
        names = [name for name in method_names(CLASSIFIER_RECALIBRATORS)
                 if not (name == "matrix" and not hasattr(model, "decision_function"))]
        candidates = [(name, RecalibratedClassifier(frozen, recalibrator=name))
                      for name in names]
        results = _select(candidates, X_cal, y_cal,
                          lambda est, Xs, ys: brier_score(ys, est.predict_proba(Xs),
                                                          labels=classes),
                          seed, True, progress)
        best_name = results[0][0]
        best = RecalibratedClassifier(frozen, recalibrator=best_name)
        _fit_quietly(best, X_cal, y_cal)

        T = temperature.recalibrators_[0].temperature_
        family = f"best of {len(results)}"
        variants = [("none", model), (f"temperature (T = {T:.2f})", temperature)]
        if best_name == "temperature":
            variants[1] = (f"{variants[1][0]}, {family}", temperature)
        else:
            variants.append((f"{best_name}, {family}", best))
        rows, probs = [], {}
        for label, est in variants:
            progress(f"scoring {label}")
            Pv = est.predict_proba(X_test)
            probs[label] = Pv
            test = skce_test(y_test, Pv, labels=classes, method="bootstrap",
                             n_resamples=settings["n_resamples"], random_state=seed)
            acc = float(np.mean(classes[Pv.argmax(axis=1)] == y_test))
            rows.append([label, f"{acc:.3f}",
                         f"{calibration_error(y_test, Pv, labels=classes):.4f}",
                         f"{brier_score(y_test, Pv, labels=classes):.4f}",
                         f"{log_score(y_test, Pv, labels=classes):.4f}",
                         _pvalue(test.pvalue)])
        table += [[title if i == 0 else ""] + row for i, row in enumerate(rows)]
        details = "\n\n".join([
            _candidates_text(results, "Brier score"),
            "Before and after recalibration (test split)\n" + _table(
                ["recalibration", "accuracy", "ECE", "Brier", "log loss", "SKCE p-value"],
                rows, "<>>>>>"),
            CLASSIFIER_TABLE_NOTE.format(n_resamples=settings["n_resamples"])])
        out.report(report, f"digits_{key}", title, details)
        if out.can_draw:
            progress(f"figures of {title}")
            _reliability_figure(out, key, title, y_test, probs, classes)
        if out.can_draw and not settings["quick"]:
            progress(f"calibration report of {title} after {best_name}")
            after = _report(best, X_test, y_test, settings, f"{title} + {best_name}")
            out.figure(after.plot(), f"digits_{key}_{best_name}_report.png",
                       f"{title}: report figure after {best_name}")
    _print_verdicts(verdicts)
    print(_table(["model", "recalibration", "accuracy", "ECE", "Brier", "SKCE p-value"],
                 [[r[0], r[1], r[2], r[3], r[4], r[6]] for r in table], "<<>>>>",
                 indent="  "))
    print(textwrap.fill(
        "ECE: confidence-accuracy gap; Brier: a proper score (both: lower is better); SKCE "
        "p < 0.05: still miscalibrated. Only temperature scaling keeps every predicted class "
        "(and the accuracy).", WIDTH,
        initial_indent="  ", subsequent_indent="  "))
    return table


CLASSIFIER_TABLE_NOTE = """\
ECE: mode="top_label", 15 bins. Brier, log loss: proper scores (calibration and sharpness; lower
is better). SKCE p-value: the bootstrap test of 'calibrated' ({n_resamples} resamples); below
0.05 is evidence of miscalibration. Temperature scaling divides the logits by one number T, so
it keeps the order of the classes of every prediction: the predicted class and the accuracy
never change. The other recalibrators map each class's probability separately (platt, beta,
isotonic, histogram, scaling_binning, venn_abers) or mix the classes (vector, matrix,
dirichlet), and can change the predicted class."""


def _short_verdict(report):
    """One line from a report: calibrated or not, in which direction, and how many tests
    reject after Holm's adjustment."""
    tests = [s for s in report.sections if s.key in ("kernel", "binned", "logistic", "pit",
                                                      "coverage")]
    rejecting = report.verdict.startswith("Evidence")
    if not rejecting:
        return "no evidence of miscalibration (not a proof: see its report)"
    direction = ""
    if report.task == "classification":
        acc = report["accuracy"]
        confidence, accuracy = acc["mean confidence"].value, acc["accuracy"].value
        if acc.verdict.startswith(("Over-confident", "Under-confident")):
            sign = ">" if acc.verdict.startswith("Over") else "<"
            direction = (f", {acc.verdict.split(' ')[0].lower()} (mean confidence "
                         f"{confidence:.3g} {sign} accuracy {accuracy:.3g})")
    else:
        coverage = next((s for s in tests if s.key == "coverage"), None)
        if coverage is not None and coverage.verdict.startswith("Intervals too"):
            row = coverage["coverage 90%"]
            way = "over" if "narrow" in coverage.verdict.split(":")[0] else "under"
            direction = (f", {way}-confident (90% intervals hold {100 * row.value:.0f}% of "
                         "targets)")
    return f"miscalibrated{direction}"


def _print_verdicts(verdicts):
    width = max(len(title) for title, _ in verdicts) + 1
    for title, verdict in verdicts:
        print(textwrap.fill(verdict, WIDTH + 10, initial_indent=f"  {(title + ':').ljust(width)} ",
                            subsequent_indent=" " * (width + 3)))


def _reliability_figure(out, key, title, y, probs, classes):
    from .. import plotting

    display = getattr(plotting, "ReliabilityDisplay", None)
    if display is None:
        return
    from .._optional import pyplot

    fig, ax = pyplot().subplots(figsize=(6, 5), layout="constrained")
    for label, P in probs.items():
        display.from_predictions(y, P, labels=classes, name=label, ax=ax)
    ax.set_title(f"{title}: top-label reliability (test split)")
    out.figure(fig, f"digits_{key}_reliability.png",
               f"{title}: reliability diagrams before and after")


def _regression(settings, out, progress):
    from sklearn.datasets import load_diabetes
    from sklearn.frozen import FrozenEstimator

    from .. import crps, interval_coverage, nll
    from .._predictions import predict_distribution
    from ..recalibration import REGRESSOR_RECALIBRATORS, RecalibratedRegressor, method_names
    from ..stats import pit_test, skce_test

    seed = settings["seed"]
    X, y = load_diabetes(return_X_y=True)
    X_train, y_train, X_cal, y_cal, X_test, y_test = _split(X, y, seed, stratify=False)
    print(_heading(f"2. Probabilistic regressors of diabetes progression ({len(y_train)} to "
                   f"train, {len(y_cal)} to recalibrate, {len(y_test)} to test)"))
    models = _regressors(seed)[:settings["n_models"]]
    verdicts, table = [], []
    for key, title, model in models:
        progress(f"fitting {title}")
        _fit_quietly(model, X_train, y_train)
        progress(f"calibration report of {title}")
        report = _report(model, X_test, y_test, settings, title)
        verdicts.append((title, _short_verdict(report)))
        if out.can_draw:
            out.figure(report.plot(), f"diabetes_{key}_report.png",
                       f"{title}: report figure")
        dist = predict_distribution(model, X_test)
        out.csv(f"diabetes_{key}_predictions.csv", ["y", "mean", "std"],
                [y_test.tolist(), dist.loc.tolist(), dist.scale.tolist()],
                f"{title}: test predictions (for skcalib report)")

        frozen = FrozenEstimator(model)
        progress("choosing between variance scaling and quantile recalibration")
        candidates = [(name, RecalibratedRegressor(frozen, recalibrator=name))
                      for name in method_names(REGRESSOR_RECALIBRATORS)]
        results = _select(candidates, X_cal, y_cal,
                          lambda est, Xs, ys: crps(ys, predict_distribution(est, Xs)),
                          seed, False, progress)
        best_name = results[0][0]
        fitted = {}
        for name, est in candidates:
            _fit_quietly(est, X_cal, y_cal)
            fitted[name] = est
        T = fitted["temperature"].recalibrators_[0].temperature_
        variants = [("none", model),
                    (f"temperature (variance x {T:.2f})", fitted["temperature"]),
                    ("quantile", fitted["quantile"])]
        rows, dists = [], {}
        for label, est in variants:
            progress(f"scoring {label}")
            d = predict_distribution(est, X_test)
            dists[label] = d
            skce_p = skce_test(y_test, d, method="bootstrap", n_resamples=settings["n_resamples"],
                               random_state=seed).pvalue
            chosen = ", best of 2" if label.split(" ")[0] == best_name else ""
            rows.append([label + chosen, f"{nll(y_test, d):.3f}", f"{crps(y_test, d):.2f}",
                         f"{float(interval_coverage(y_test, d, levels=0.9)):.3f}",
                         _pvalue(pit_test(y_test, d).pvalue), _pvalue(skce_p)])
        table += [[title if i == 0 else ""] + row for i, row in enumerate(rows)]
        details = "\n\n".join([
            _candidates_text(results, "CRPS"),
            "Before and after recalibration (test split)\n" + _table(
                ["recalibration", "NLL", "CRPS", "90% coverage", "PIT p-value", "SKCE p-value"],
                rows, "<>>>>>"),
            REGRESSOR_TABLE_NOTE])
        out.report(report, f"diabetes_{key}", title, details)
        if out.can_draw:
            progress(f"figures of {title}")
            _regression_figures(out, key, title, y_test, dists)
    _print_verdicts(verdicts)
    print(_table(["model", "recalibration", "CRPS", "90% coverage", "PIT p-value"],
                 [[r[0], r[1], r[3], r[4], r[5]] for r in table], "<<>>>", indent="  "))
    print(textwrap.fill(
        "CRPS: a proper score (lower is better); 90% coverage: 0.9 if calibrated; PIT p < 0.05: "
        "still miscalibrated. Variance scaling (temperature) keeps every predicted mean.",
        WIDTH, initial_indent="  ", subsequent_indent="  "))
    return table


REGRESSOR_TABLE_NOTE = """\
NLL, CRPS: proper scores (lower is better). 90% coverage: fraction of targets in the central 90%
interval. PIT p-value: Kolmogorov-Smirnov test of uniform PIT values; SKCE p-value: the
bootstrap SKCE test (n/a: not available for quantile-recalibrated predictions). Below 0.05 is
evidence of miscalibration. Variance scaling (temperature) multiplies each predicted variance by
one number and keeps the predicted mean; quantile recalibration maps every predicted quantile
and so changes the mean too."""


def _regression_figures(out, key, title, y, dists):
    from .. import plotting

    pit_display = getattr(plotting, "PITHistogramDisplay", None)
    quantile_display = getattr(plotting, "QuantileCalibrationDisplay", None)
    if pit_display is None and quantile_display is None:
        return
    from .._optional import pyplot

    plt = pyplot()
    if pit_display is not None:
        fig, axes = plt.subplots(1, len(dists), figsize=(4 * len(dists), 3.8), sharey=True,
                                 layout="constrained")
        for ax, (label, d) in zip(np.atleast_1d(axes), dists.items()):
            pit_display.from_predictions(y, d, name=label, ax=ax)
            ax.set_title(label)
        fig.suptitle(f"{title}: PIT histograms (test split)")
        out.figure(fig, f"diabetes_{key}_pit.png", f"{title}: PIT histograms before and after")
    if quantile_display is not None:
        fig, ax = plt.subplots(figsize=(5, 5), layout="constrained")
        for label, d in dists.items():
            quantile_display.from_predictions(y, d, name=label, ax=ax)
        ax.set_title(f"{title}: quantile calibration (test split)")
        out.figure(fig, f"diabetes_{key}_quantiles.png",
                   f"{title}: quantile calibration before and after")


NEXT_STEPS = """\
Next steps, on your own data
----------------------------
1. Save your model's test-set predictions with the true target, one row per sample, e.g.
     P = model.predict_proba(X_test)                                   # a classifier
     frame = pandas.DataFrame(P, columns=[f"p_{{c}}" for c in model.classes_])
     frame["y"] = numpy.asarray(y_test)                # by position, whatever y_test's index
     mean, std = model.predict(X_test, return_std=True)                # a regressor
     frame = pandas.DataFrame({{"y": numpy.asarray(y_test), "mean": mean, "std": std}})
     frame.to_csv("my_predictions.csv", index=False)                   # or .to_parquet(...)
2. Report on them (text on screen; --html and --plot also save a page and a figure):
     {command} report my_predictions.csv --target y --proba-cols 'p_*' --html report.html
     {command} report my_predictions.csv --target y --mean-col mean --std-col std --plot report.png
   For example, on predictions this demo saved:
     {example}
3. In Python: skcalib.calibration_report(model, X_test, y_test). To recalibrate a fitted
   model on held-out data (X_cal, y_cal), e.g.
     RecalibratedClassifier(FrozenEstimator(model), recalibrator="temperature").fit(X_cal, y_cal)
   (from skcalib.recalibration and sklearn.frozen; or "vector", "isotonic", ... -- the family
   of the reports; without FrozenEstimator the model is refitted by cross-fitting), and
   RecalibratedRegressor(..., recalibrator="temperature" or "quantile") for regressors.
   Temperature scaling keeps every predicted class (or mean); the other recalibrators can
   change it.
Options of every command: {command} report --help, {command} demo --help.
Terms: {glossary}"""


def skcalib_command():
    """How to call the ``skcalib`` command from the user's shell, as a shell word.

    ``skcalib`` when the command on the ``PATH`` is the one installed beside this Python (an
    activated virtual environment); otherwise the path of that script (relative to the current
    folder when it is inside it, as ``.venv/bin/skcalib`` after ``make demo``); otherwise
    ``python -m skcalib`` with the path of this Python.

    Returns
    -------
    str

    Examples
    --------
    >>> skcalib_command().endswith(("skcalib", "skcalib.exe"))
    True
    """
    folder = os.path.dirname(sys.executable)
    script = next((os.path.join(folder, name) for name in ("skcalib", "skcalib.exe")
                   if os.path.isfile(os.path.join(folder, name))), None)
    on_path = shutil.which("skcalib")
    if script is None:
        return f"{_quote(_shortest(sys.executable))} -m skcalib"
    try:
        if on_path is not None and os.path.samefile(on_path, script):
            return "skcalib"
    except OSError:
        pass
    return _quote(_shortest(script))


def _shortest(path):
    """``path`` relative to the current folder when it lies inside it, else absolute."""
    path = os.path.abspath(path)
    try:
        relative = os.path.relpath(path)
    except ValueError:  # (another drive on Windows)
        return path
    if relative.startswith(os.pardir):
        return path
    return relative if os.sep in relative else os.path.join(os.curdir, relative)


def glossary_location():
    """Where the glossary of the report's terms is: the built page or the source page of a
    checkout, else the page's name in skcalib's documentation.

    Returns
    -------
    str

    Examples
    --------
    >>> "glossary" in glossary_location()
    True
    """
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    docs = os.path.join(os.path.dirname(root), "docs")
    for page in (os.path.join(docs, "_build", "html", "glossary.html"),
                 os.path.join(docs, "glossary.rst")):
        if os.path.isfile(page):
            return _shortest(page)
    return "the Glossary page of skcalib's documentation (docs/glossary.rst in its source)"


def run(args, progress):
    """Run ``skcalib demo`` with the parsed ``args``; return the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    progress : callable
        ``progress(message, always=False)``: progress messages on standard error
        (:class:`skcalib._cli.Progress`).

    Returns
    -------
    int
        0; errors raise :class:`~skcalib._cli._io.CLIError` (exit status 2 in :func:`main`).

    Examples
    --------
    >>> from skcalib._cli import main
    >>> main(["demo", "--help"])  # doctest: +ELLIPSIS
    usage: skcalib demo ...
    0
    """
    folder = args.output_dir
    can_draw = _has_matplotlib()
    _prepare_folder(folder)
    settings = {"seed": args.random_state, "quick": args.quick, "n_models": 1 if args.quick else 2,
                "n_resamples": 100 if args.quick else 1000}
    out = _Output(folder, dpi=60 if args.quick else 110, can_draw=can_draw,
                  tight=not args.quick)
    where = _shortest(folder) + os.sep
    print(textwrap.fill(
        f"skcalib demo (random_state={args.random_state}{', --quick' if args.quick else ''}): "
        "do the models' probabilities mean what they say? Models trained on scikit-learn's "
        "bundled data are tested for calibration (level 0.05), then recalibrated.",
        WIDTH))
    _classification(settings, out, progress)
    _regression(settings, out, progress)

    command = skcalib_command()
    glossary = glossary_location()
    example_csv = next(name for name, _ in out.written if name.endswith("_predictions.csv"))
    example = (f"{command} report {_quote(os.path.join(_shortest(folder), example_csv))} "
               "--target y --proba-cols 'p_*'")
    out.text("next_steps.txt", NEXT_STEPS.format(command=command, example=example,
                                                 glossary=glossary),
             "how to report on your own predictions")
    print(f"\nFiles in {where}")
    groups = [("*_report.txt, *_report.html", "each model's full report, recalibrators "
               "compared"),
              ("*.png", "reliability diagrams, PIT histograms, quantile calibration"),
              ("*_predictions.csv", "the test predictions, which skcalib report reads"),
              ("next_steps.txt", "how to do the same on your own predictions")]
    if not can_draw:
        groups[1] = ("(no figures)", "they need matplotlib: pip install 'skcalib[plot]'")
    width = max(len(g) for g, _ in groups)
    for pattern, what in groups:
        print(f"  {pattern.ljust(width)}  {what}")
    print(f"Terms (ECE, SKCE, PIT, CRPS, Holm, ...): {glossary}")
    print(f"The command line on a saved file:\n  {example}")
    sys.stdout.flush()
    return 0


def _quote(path):
    return path if re.fullmatch(r"[\w./\\:-]+", path) else "'" + path.replace("'", "'\\''") + "'"
