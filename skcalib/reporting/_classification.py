"""The report of class probabilities: its sections, each built from the public functions of
:mod:`skcalib.metrics` and :mod:`skcalib.stats`, in display order -- accuracy and confidence
(:func:`skcalib.stats.accuracy_test`), binned errors (:func:`skcalib.calibration_error` with
:func:`skcalib.stats.consistency_test`), smooth errors, the kernel test
(:mod:`._kernel_section`), proper scores with their CORP decompositions, and logistic
calibration (:func:`skcalib.stats.logistic_calibration`, one-vs-rest with Holm's adjustment for
more than two classes).

``classification_report(predictions, y, labels, name, **settings)`` returns the
:class:`CalibrationReport`; the prose of each section is written by :mod:`._verdicts`.
"""

import math

import numpy as np

from .._validation import check_labels_and_probabilities
from ..distributions import Categorical, is_distribution
from ..metrics import (
    brier_score,
    calibration_error,
    corp_decomposition,
    integrated_calibration_index,
    log_score,
    reliability_curve,
    smooth_ece,
)
from ..stats import accuracy_test, adjust_pvalues, consistency_test, logistic_calibration
from ._format import fmt, fmt_level
from ._kernel_section import check_n_samples, kernel_section
from ._report import CalibrationReport, ReportRow, ReportSection, find_row
from ._verdicts import (
    accuracy_verdict,
    binned_verdict,
    combine_tests,
    corp_verdict,
    logistic_verdict,
    smooth_verdict,
)

__all__ = ["SMALL_BIN", "classification_report"]

#: Bins with fewer samples than this are flagged in the binned section (their frequency is too
#: noisy to read: a Clopper-Pearson 95% interval of a bin of 10 samples is about 0.6 wide).
SMALL_BIN = 10


def classification_report(predictions, y, labels, name, *, n_bins, confidence_level,
                          n_resamples, random_state, n_jobs):
    """The :class:`CalibrationReport` of class probabilities ``predictions`` (an array or a
    ``Categorical``) and labels ``y``, with validated settings."""
    y_arr, P, classes = _check_predictions(predictions, y, labels)
    n = P.shape[0]
    check_n_samples(n)
    alpha = 1.0 - confidence_level
    common = dict(labels=classes)
    resampling = dict(n_resamples=n_resamples, random_state=random_state, n_jobs=n_jobs)
    sections = [_accuracy_section(y_arr, P, common, confidence_level)]
    binned, ece_test = _binned_section(y_arr, P, common, n_bins, confidence_level, **resampling)
    sections += [binned,
                 _smooth_section(y_arr, P, common),
                 kernel_section(y_arr, P, common, n, confidence_level, **resampling),
                 _scores_section(y_arr, P, common),
                 _logistic_section(y_arr, P, common, classes, confidence_level)]

    tests = [("SKCE test", sections[3]["SKCE"].pvalue, "kernel", "SKCE"),
             ("ECE consistency test", ece_test.pvalue, "binned", "ECE")]
    lr = find_row(sections[-1], "likelihood-ratio test")
    if lr is not None:
        tests.append(("logistic calibration test", lr.pvalue, "logistic",
                      "likelihood-ratio test"))
    verdict = combine_tests(sections, tests, alpha, n)
    data = {"y": y_arr, "probs": P, "classes": np.asarray(classes), "n_bins": n_bins,
            "confidence_level": confidence_level}
    return CalibrationReport(task="classification", sections=sections, verdict=verdict,
                             n_samples=n, name=name, confidence_level=confidence_level,
                             data=data)


def _check_predictions(predictions, y, labels):
    """``(y, P, classes)``: the labels as given, the ``(n, C)`` float64 probabilities (column
    ``j`` for ``classes[j]``) and the classes."""
    if is_distribution(predictions) and not isinstance(predictions, Categorical):
        raise TypeError(f"task='classification' needs class probabilities; got a "
                        f"{type(predictions).__name__} distribution (use task='regression').")
    if isinstance(predictions, Categorical):
        if labels is None:
            labels = predictions.classes
        predictions = predictions.probs
    data = check_labels_and_probabilities(y, predictions, labels=labels, min_samples=2,
                                          prob_name="estimator_or_predictions", label_name="y")
    classes = data.classes
    P = np.array(data.probs)  # (n, C) float64, column j for classes[j]
    return np.asarray(classes)[data.y], P, classes


def _mode(P):
    return "binary" if P.shape[1] == 2 else "top_label"  # (as calibration_error's mode= spells it)


def _accuracy_section(y, P, common, confidence_level):
    test = accuracy_test(y, P, **common)
    accuracy, confidence = test.statistic, test.expected
    ci = test.proportion_ci(confidence_level, method="exact")
    rows = [ReportRow("accuracy", accuracy, ci.low, ci.high, note="Clopper-Pearson interval"),
            ReportRow("mean confidence", confidence, note="mean largest probability")]
    verdict = accuracy_verdict(accuracy, confidence, ci, fmt_level(confidence_level),
                               test.n_samples)
    return ReportSection("accuracy", "Accuracy and confidence", rows, verdict)


def _binned_section(y, P, common, n_bins, confidence_level, *, n_resamples, random_state,
                    n_jobs):
    """The binned section and the consistency test of its ECE."""
    alpha = 1.0 - confidence_level
    level = fmt_level(confidence_level)
    ece = calibration_error(y, P, n_bins=n_bins, **common)
    ece_test = consistency_test(calibration_error, y, P, n_resamples=n_resamples,
                                metric_kwargs={"n_bins": n_bins}, random_state=random_state,
                                n_jobs=n_jobs, **common)
    null_low, null_high = ece_test.null_interval(confidence_level)
    mce = calibration_error(y, P, n_bins=n_bins, norm="max", **common)
    curve = reliability_curve(y, P, n_bins=n_bins, confidence_level=confidence_level, **common)
    gaps = np.abs(curve.prob_true - curve.prob_pred)
    worst_count = int(curve.counts[int(np.argmax(gaps))])
    n_small = int(np.sum(curve.counts < SMALL_BIN))
    rows = [
        ReportRow("ECE", ece, pvalue=ece_test.pvalue, note="p: consistency test"),
        ReportRow("ECE if calibrated", float(np.mean(ece_test.null_distribution)), null_low,
                  null_high, note=f"simulated: mean, central {level}"),
        ReportRow("MCE", mce, note="largest bin gap"),
        ReportRow("MCE bin size", worst_count,
                  note="worst bin: too few to read" if worst_count < SMALL_BIN else ""),
        ReportRow("bins used", len(curve.counts),
                  note=f"non-empty; {n_small} with < {SMALL_BIN} samples"),
    ]
    if P.shape[1] > 2:
        rows.append(ReportRow("class-wise ECE", calibration_error(
            y, P, n_bins=n_bins, mode="classwise", **common), note="mean one-vs-rest ECE"))
    verdict = binned_verdict(ece, ece_test, null_high, alpha, n_resamples, P.shape[0], mce=mce,
                             worst_count=worst_count, n_small=n_small,
                             n_bins_used=len(curve.counts), small_bin=SMALL_BIN)
    title = f'Binned errors (mode="{_mode(P)}", {n_bins} equal-width bins)'
    return ReportSection("binned", title, rows, verdict), ece_test


def _smooth_section(y, P, common):
    smece, bandwidth = smooth_ece(y, P, return_bandwidth=True, **common)
    ici = integrated_calibration_index(y, P, **common)
    bandwidth_note = f"smoothing bandwidth {fmt(bandwidth)}"
    if math.isclose(bandwidth, smece, rel_tol=1e-6):  # the automatic bandwidth: not a typo
        bandwidth_note += " (chosen equal to the smECE: see the glossary)"
    rows = [ReportRow("smECE", smece, note=bandwidth_note),
            ReportRow("ICI", ici, note="mean gap of a loess-smoothed curve (span 0.75)")]
    return ReportSection("smooth", f'Smooth errors (mode="{_mode(P)}")', rows,
                         smooth_verdict(smece, ici))


def _scores_section(y, P, common):
    binary = P.shape[1] == 2
    brier = brier_score(y, P, **common)
    corp = corp_decomposition(y, P, **common)
    logloss = log_score(y, P, **common)
    rows = [ReportRow("Brier score", brier),
            ReportRow("Brier miscalibration", corp.mcb,
                      note="MCB: what recalibration could remove; 0 if calibrated"),
            ReportRow("Brier discrimination", corp.dsc,
                      note="DSC: how well the predictions sort the outcomes"),
            ReportRow("Brier uncertainty", corp.unc,
                      note="UNC: score of always predicting the class frequencies"),
            ReportRow("log loss", logloss,
                      note="" if binary else "not decomposed for more than 2 classes")]
    if binary:
        corp_log = corp_decomposition(y, P, score="log", **common)
        rows += [ReportRow("log loss miscalibration", corp_log.mcb, note="MCB"),
                 ReportRow("log loss discrimination", corp_log.dsc, note="DSC"),
                 ReportRow("log loss uncertainty", corp_log.unc, note="UNC")]
    return ReportSection("scores", "Proper scores (lower is better) and their decomposition",
                         rows, corp_verdict(corp, brier))


_LOGISTIC_TITLE = "Logistic calibration (slope and intercept)"


def _logistic_section(y, P, common, classes, confidence_level):
    alpha = 1.0 - confidence_level
    level = fmt_level(confidence_level)
    if P.shape[1] == 2:
        try:
            res = logistic_calibration(y, P, confidence_level=confidence_level, **common)
        except ValueError as exc:
            return ReportSection("logistic", _LOGISTIC_TITLE, [], f"Not available: {exc}")
        rows = [
            ReportRow("calibration slope", res.slope, *res.slope_ci,
                      note="1 if calibrated; < 1 over-confident"),
            ReportRow("calibration intercept", res.calibration_in_the_large,
                      *res.calibration_in_the_large_ci, note="slope fixed at 1; 0 if calibrated"),
            ReportRow("likelihood-ratio test", res.statistic, pvalue=res.pvalue,
                      note="chi2(2): (intercept, slope) = (0, 1)")]
        return ReportSection("logistic", _LOGISTIC_TITLE, rows,
                             logistic_verdict([(None, res)], res.pvalue, alpha, level))
    return _one_vs_rest_logistic_section(y, P, classes, confidence_level)


def _one_vs_rest_logistic_section(y, P, classes, confidence_level):
    """One binary fit per class (as logistic_calibration does), so that a class whose fit does
    not exist (separated, or absent from ``y``) leaves the others reported."""
    fits, failed = [], []
    for k, label in enumerate(classes):
        try:
            fits.append((label, logistic_calibration((y == label).astype(int), P[:, k],
                                                     confidence_level=confidence_level)))
        except ValueError as exc:
            failed.append((label, str(exc)))
    if not fits:
        return ReportSection("logistic", _LOGISTIC_TITLE, [],
                             f"Not available for any class: {failed[0][1]}")
    adjusted = adjust_pvalues([r.pvalue for _, r in fits], method="holm")
    rows = []
    for (label, r), p_adj in zip(fits, adjusted):
        rows.append(ReportRow(f"slope [{label}]", r.slope, *r.slope_ci, pvalue=p_adj,
                              note="one-vs-rest; p: LR test, Holm"))
    for label, r in fits:
        rows.append(ReportRow(f"intercept [{label}]", r.calibration_in_the_large,
                              *r.calibration_in_the_large_ci, note="slope fixed at 1"))
    best = int(np.argmin(adjusted))
    pvalue = float(adjusted[best])
    rows.append(ReportRow("likelihood-ratio test", fits[best][1].statistic, pvalue=pvalue,
                          note=f"{len(fits)} classes (Holm)"))
    verdict = logistic_verdict(fits, pvalue, 1.0 - confidence_level,
                               fmt_level(confidence_level))
    if failed:
        verdict += (f" Left out: class{'es' if len(failed) > 1 else ''} "
                    f"{', '.join(str(c) for c, _ in failed)}, whose logistic fit has no finite "
                    f"solution (the predictions separate the class from the others perfectly, "
                    f"or the class is absent).")
    return ReportSection("logistic", _LOGISTIC_TITLE, rows, verdict)
