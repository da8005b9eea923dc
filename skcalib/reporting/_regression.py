"""The report of predictive distributions: its sections, each built from the public functions of
:mod:`skcalib.metrics` and :mod:`skcalib.stats`, in display order -- the kernel test
(:mod:`._kernel_section`), proper scores (NLL; CRPS with :func:`skcalib.stats.mean_score_ci`),
and for univariate predictions the PIT (:func:`skcalib.stats.pit_test`,
:func:`skcalib.stats.pit_mean_test`), interval coverage (:func:`skcalib.stats.coverage_test` at
the :data:`COVERAGE_LEVELS`, Bonferroni-adjusted) and quantile calibration.

Every univariate family gets every section it supports. Where a family lacks what a section
needs, the section stays in the report and says so in plain words instead of a number: the NLL
of predictions without a density (draws and ensembles, :class:`~skcalib.distributions.Empirical`),
the kernel test of a family without a Wasserstein distance between predictions (the kernel on
predictions needs it).

``regression_report(predictions, y, name, **settings)`` returns the :class:`CalibrationReport`;
the prose of each section is written by :mod:`._verdicts`.
"""

import math

import numpy as np

from .._expectations import check_targets
from .._problems.univariate import outside_support
from ..distributions import Categorical, Empirical, as_distribution
from ..metrics import crps, miscalibration_area, nll, pit, quantile_calibration_error
from ..stats import adjust_pvalues, coverage_test, mean_score_ci, pit_mean_test, pit_test
from ._format import pct
from ._kernel_section import check_n_samples, kernel_section
from ._report import CalibrationReport, ReportRow, ReportSection
from ._verdicts import (
    REGRESSION_SCORES_VERDICT,
    combine_tests,
    coverage_verdict,
    pit_verdict,
    quantile_verdict,
)

__all__ = ["COVERAGE_LEVELS", "regression_report"]

#: Nominal levels of the central prediction intervals whose coverage is reported.
COVERAGE_LEVELS = (0.5, 0.8, 0.9, 0.95)


def regression_report(predictions, y, name, *, n_bins, confidence_level, n_resamples,
                      random_state, n_jobs):
    """The :class:`CalibrationReport` of predictive distributions ``predictions`` (a
    distribution or ``[mean, std]`` columns) and targets ``y``, with validated settings."""
    if isinstance(predictions, Categorical):
        raise TypeError("task='regression' needs a predictive distribution of real targets; "
                        "got a Categorical (use task='classification').")
    dist, _ = as_distribution(predictions, name="estimator_or_predictions")
    y_arr = check_targets(y, dist, name="y")
    n = dist.n_samples
    check_n_samples(n)
    alpha = 1.0 - confidence_level
    univariate = dist.dim is None
    tests = []
    if _has_wasserstein(dist):
        kernel = kernel_section(y_arr, dist, {}, n, confidence_level, n_resamples, random_state,
                                n_jobs)
        tests.append(("SKCE test", kernel["SKCE"].pvalue, "kernel", "SKCE"))
    else:
        kernel = _kernel_unavailable(dist)
    sections = [kernel, _scores_section(y_arr, dist, univariate, confidence_level)]
    if univariate:
        pit_section, ks = _pit_section(y_arr, dist, alpha, random_state)
        coverage, coverage_p = _coverage_section(y_arr, dist, confidence_level)
        sections += [pit_section, coverage, _quantile_section(y_arr, dist)]
        tests += [("PIT test", ks.pvalue, "pit", "KS statistic"),
                  ("coverage test", coverage_p, "coverage", None)]

    verdict = combine_tests(sections, tests, alpha, n)
    if not univariate:
        verdict += (" PIT, coverage and quantile calibration are defined for univariate "
                    "predictions only and are left out.")
    data = {"y": y_arr, "y_pred": dist, "n_bins": n_bins, "confidence_level": confidence_level,
            "univariate": univariate, "random_state": random_state}
    return CalibrationReport(task="regression", sections=sections, verdict=verdict,
                             n_samples=n, name=name, confidence_level=confidence_level,
                             data=data)


def _has_wasserstein(dist):
    """Whether the family of ``dist`` has a Wasserstein distance between its predictions (the
    kernel on predictions of the SKCE needs it), asked through the public method."""
    try:
        dist[:1].wasserstein(dist[:1])
    except (TypeError, NotImplementedError):
        return False
    return True


def _kernel_unavailable(dist):
    """The kernel section of a family without a Wasserstein distance: no rows, the reason."""
    family = type(dist).__name__
    verdict = (f"Not computed: the kernel calibration test compares predictions with each other "
               f"by the Wasserstein distance between them, and skcalib has no such distance for "
               f"{family} predictions yet. The PIT, coverage and quantile sections below test "
               f"calibration without it.")
    return ReportSection("kernel", "Kernel calibration test (SKCE)", [], verdict)


def _no_density_note(dist):
    """The NLL row's note for a family without a density, in words."""
    why = (" (an ensemble or a set of draws is a finite set of points)"
           if isinstance(dist, Empirical) else "")
    return (f"not defined: {type(dist).__name__} predictions have no probability density{why}, "
            "so there is no likelihood to score; compare models by the CRPS")


def _outside_support_note(y, dist):
    """The NLL row's note when targets fall outside the bounded support of their predictions
    (the linear tails of ``Quantiles`` end at levels 0 and 1), where the density is 0 and the
    NLL infinite; None for families with unbounded support, point predictions, or when no
    target is outside."""
    mask = outside_support(y, dist)
    outside = 0 if mask is None else int(np.sum(mask))
    if outside == 0:
        return None
    return (f"infinite: {outside} of the {y.size} targets fall outside the range their "
            f"{type(dist).__name__} predictions allow (for quantiles: beyond the linear tails "
            "past the outermost levels), where the predicted density is 0; compare models by "
            "the CRPS")


def _scores_section(y, dist, univariate, confidence_level):
    # a score that the metric refuses (point predictions have no density; a value beyond the
    # float range) is shown as n/a with the metric's reason, never as inf; a family without a
    # density (no log_pdf, or one that raises a TypeError, as Empirical's) says so in words
    rows = [ReportRow("NLL", None, note=_no_density_note(dist))]
    if callable(getattr(dist, "log_pdf", None)):
        try:
            rows = [ReportRow("NLL", nll(y, dist), note="mean negative log density")]
        except TypeError:
            pass
        except ValueError as exc:
            rows = [ReportRow("NLL", None, note=_outside_support_note(y, dist)
                              or f"n/a: {exc}")]
    if univariate:
        try:
            scores = crps(y, dist, reduction="none")
        except ValueError as exc:
            rows.append(ReportRow("CRPS", None, note=f"n/a: {exc}"))
        else:
            low, high = _mean_interval(scores, confidence_level)
            rows.append(ReportRow("CRPS", crps(y, dist), low, high,
                                  note="mean; normal interval"))
    return ReportSection("scores", "Proper scores", rows, REGRESSION_SCORES_VERDICT)


def _mean_interval(scores, confidence_level):
    """The normal interval of the mean of ``scores``, or ``(None, None)`` where it has none."""
    try:
        low, high = mean_score_ci(scores, confidence_level=confidence_level)
    except ValueError:  # (non-finite scores)
        return None, None
    return (low, high) if math.isfinite(low) and math.isfinite(high) else (None, None)


def _pit_section(y, dist, alpha, random_state=None):
    """The PIT section and its uniformity test."""
    # the same seed for both: the randomised PIT of targets on an atom (a draw) is drawn once
    u = pit(y, dist, random_state=random_state)
    ks = pit_test(y, dist, method="ks", random_state=random_state)
    mean_test = pit_mean_test(y, dist)
    mean_pit = float(np.mean(u))
    tails = float(np.mean((u < 0.05) | (u > 0.95)))
    rows = [ReportRow("KS statistic", ks.statistic, pvalue=ks.pvalue,
                      note="Kolmogorov-Smirnov test of uniformity"),
            ReportRow("mean PIT", mean_pit, pvalue=mean_test.pvalue,
                      note="0.5 if calibrated"),
            ReportRow("PIT in outer 10%", tails,
                      note="below 0.05 or above 0.95; 0.1 if calibrated")]
    verdict = pit_verdict(ks, mean_pit, mean_test, tails, alpha, len(u))
    return ReportSection("pit", "Probability integral transform (PIT)", rows, verdict), ks


def _coverage_section(y, dist, confidence_level):
    """The coverage section and the smallest Bonferroni-adjusted p-value of its levels."""
    alpha = 1.0 - confidence_level
    tests = [coverage_test(y, dist, level=lev) for lev in COVERAGE_LEVELS]
    adjusted = adjust_pvalues([t.pvalue for t in tests], method="bonferroni")
    rows, narrow, wide = [], [], []
    for lev, test, p_adj in zip(COVERAGE_LEVELS, tests, adjusted):
        cov = test.statistic
        ci = test.proportion_ci(confidence_level, method="exact")
        rows.append(ReportRow(f"coverage {pct(lev)}", cov, ci.low, ci.high, test.pvalue,
                              note="p: binomial test"))
        if p_adj < alpha:
            (narrow if cov < lev else wide).append((lev, cov, ci, p_adj))
    verdict = coverage_verdict(narrow, wide, COVERAGE_LEVELS, alpha) + _few_draws_note(dist)
    return (ReportSection("coverage", "Interval coverage", rows, verdict),
            float(np.min(adjusted)))


def _few_draws_note(dist):
    """For draws and ensembles with too few members to reach the reported levels: why."""
    if not isinstance(dist, Empirical):
        return ""
    m = dist.n_draws
    reach = (m - 1) / (m + 1)
    if max(COVERAGE_LEVELS) <= reach:
        return ""
    return (f" Each prediction has {m} draws: a target that behaves like one more draw lies "
            f"outside all of them with probability 2/{m + 1} ({pct(2 / (m + 1))}), so with these "
            f"draws no central interval covers more than about {pct(reach)} of such targets; "
            "more draws (or wider ones) are needed to reach the higher levels.")


def _quantile_section(y, dist):
    qce = quantile_calibration_error(y, dist)
    area = miscalibration_area(y, dist)
    rows = [ReportRow("quantile calibration error", qce, note="99 quantile levels"),
            ReportRow("miscalibration area", area, note="area to the diagonal")]
    return ReportSection("quantile", "Quantile calibration", rows, quantile_verdict(qce, area))
