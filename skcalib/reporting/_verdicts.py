"""The report's prose: one function per section writes its verdict from the section's numbers,
and ``combine_tests`` / ``overall_verdict`` write the report's first sentence from all its tests
(Holm's adjustment, :func:`skcalib.stats.adjust_pvalues`) and tell each section what the
adjustment did to its test.

Every function takes numbers already computed by :mod:`skcalib.metrics` and :mod:`skcalib.stats`
and returns text; only ``combine_tests`` also appends to the sections' notes and verdicts.
"""

from ..stats import adjust_pvalues
from ._format import fmt, fmt_ci, fmt_level, fmt_p, join, p_phrase, pct
from ._report import find_row

__all__ = ["accuracy_verdict", "binned_verdict", "smooth_verdict", "kernel_verdict",
           "corp_verdict", "logistic_verdict", "REGRESSION_SCORES_VERDICT", "pit_verdict",
           "coverage_verdict", "quantile_verdict", "combine_tests", "overall_verdict"]


# ------------------------------------------------------------------------------------------
# classification


def accuracy_verdict(accuracy, confidence, ci, level, n):
    """Over- or under-confidence on average: the mean ``confidence`` against the accuracy's
    interval ``ci``."""
    if confidence > ci.high:
        return (f"Over-confident on average: the mean confidence {fmt(confidence)} is above "
                f"the accuracy {fmt(accuracy)} and its {level} interval "
                f"[{fmt(ci.low)}, {fmt(ci.high)}].")
    if confidence < ci.low:
        return (f"Under-confident on average: the mean confidence {fmt(confidence)} is below "
                f"the accuracy {fmt(accuracy)} and its {level} interval "
                f"[{fmt(ci.low)}, {fmt(ci.high)}].")
    return (f"The mean confidence {fmt(confidence)} lies within the {level} interval of "
            f"the accuracy [{fmt(ci.low)}, {fmt(ci.high)}] (n = {n}).")


def binned_verdict(ece, ece_test, null_high, alpha, n_resamples, n, *, mce, worst_count,
                   n_small, n_bins_used, small_bin):
    """The ECE against what a calibrated model gives (the consistency test), and a warning
    about bins too small to read."""
    null_mean = ece_test.null_distribution.mean()
    p_text = p_phrase(ece_test.pvalue, n_resamples)
    if ece_test.pvalue < alpha:
        verdict = (f"Miscalibrated: the ECE of {fmt(ece)} is larger than a calibrated model "
                   f"gives on these predictions ({fmt(null_mean)} on average, "
                   f"{fmt(null_high)} at most in {pct(1 - alpha / 2)} of simulations; "
                   f"consistency test {p_text}, n = {n}).")
    else:
        verdict = (f"No evidence of miscalibration: the ECE of {fmt(ece)} is within what a "
                   f"calibrated model gives on these predictions ({fmt(null_mean)} on "
                   f"average; consistency test {p_text}, "
                   f"n = {n}). Binned errors are biased upwards, so an ECE is never 0.")
    if worst_count < small_bin:
        verdict += (f" The MCE ({fmt(mce)}) comes from a bin of {worst_count} "
                    f"sample{'s' if worst_count != 1 else ''}: too few to read.")
    elif n_small:
        verdict += (f" {n_small} of the {n_bins_used} non-empty bins hold fewer than "
                    f"{small_bin} samples.")
    return verdict


def smooth_verdict(smece, ici):
    """The smooth errors are descriptive."""
    return (f"The smoothed reliability curve is on average {fmt(smece)} (smECE) and "
            f"{fmt(ici)} (ICI) away from the diagonal. These errors are descriptive; the "
            f"tests of the other sections say whether the gap exceeds the noise.")


def corp_verdict(corp, brier):
    """The share of the Brier score that miscalibration accounts for (CORP)."""
    share = corp.mcb / brier if brier > 0 else 0.0
    return (f"Score = MCB - DSC + UNC (CORP decomposition). Miscalibration accounts for "
            f"{pct(share)} of the Brier score (MCB {fmt(corp.mcb)} of {fmt(brier)}); "
            f"discrimination DSC {fmt(corp.dsc)} against uncertainty {fmt(corp.unc)}. MCB is "
            f"the score that isotonic recalibration would remove on these data (an "
            f"optimistic, in-sample figure). Lower scores are better.")


# ------------------------------------------------------------------------------------------
# kernel test (both tasks)


def kernel_verdict(estimate, low, high, test, alpha, n, confidence_level):
    """The SKCE test's decision, with the interval (an upper bound when it does not reject)."""
    p = p_phrase(test.pvalue, test.n_resamples)
    if test.pvalue < alpha:
        verdict = (f"Miscalibrated: the SKCE test rejects calibration ({p}, n = {n}); SKCE "
                   f"{fmt(estimate)} [{fmt(low)}, {fmt(high)}].")
        if low <= 0:
            verdict += (" The normal interval is conservative near calibration, so it can "
                        "reach 0 when the test rejects.")
        return verdict
    return (f"No evidence of miscalibration (SKCE test {p}, n = {n}). A large p-value "
            f"is not proof of calibration: the SKCE is at most {fmt(high)} at the "
            f"{fmt_level(confidence_level)} level.")


# ------------------------------------------------------------------------------------------
# logistic calibration


def _binary_logistic_no_rejection(r, p_text, level):
    citl = r.calibration_in_the_large_ci
    text = (f"The joint test of slope and intercept does not reject ({p_text}; "
            f"calibration slope {fmt_ci(r.slope, r.slope_ci)}, calibration intercept "
            f"{fmt_ci(r.calibration_in_the_large, citl)}).")
    # the joint 2-df test can miss a shift that the 1-parameter interval shows
    if citl.low > 0 or citl.high < 0:
        way = "under-predicts" if citl.low > 0 else "over-predicts"
        return (text + f" But the calibration intercept's {level} interval excludes "
                f"0: on its own it says the model {way} the events on average.")
    if r.slope_ci.low > 1 or r.slope_ci.high < 1:
        way = "under-confident" if r.slope_ci.low > 1 else "over-confident"
        return (text + f" But the calibration slope's {level} interval excludes 1: on "
                f"its own it says the model is {way}.")
    return (text.replace("The joint test of slope and intercept does not reject",
                         "No evidence of miscalibration in slope or intercept")
            + " This is not proof of calibration.")


def _binary_logistic_parts(r, over, under, low_events, high_events):
    parts = []
    if over:
        parts.append(f"over-confident (calibration slope {fmt_ci(r.slope, r.slope_ci)})")
    if under:
        parts.append(f"under-confident (calibration slope {fmt_ci(r.slope, r.slope_ci)})")
    citl = fmt_ci(r.calibration_in_the_large, r.calibration_in_the_large_ci)
    if low_events:
        parts.append(f"under-predicts the events on average (calibration intercept {citl})")
    if high_events:
        parts.append(f"over-predicts the events on average (calibration intercept {citl})")
    return parts


def _multiclass_logistic_parts(fits, over, under, low_events, high_events):
    def classes_text(group):
        return ", ".join(str(c) for c, _ in group)

    def slopes_text(group):
        if len(group) == 1:
            c, r = group[0]
            return f"class {c}: slope {fmt_ci(r.slope, r.slope_ci)}"
        slopes = [r.slope for _, r in group]
        return (f"{len(group)} of {len(fits)} classes, slopes {fmt(min(slopes))} to "
                f"{fmt(max(slopes))}")

    parts = []
    if over:
        parts.append(f"over-confident ({slopes_text(over)})")
    if under:
        parts.append(f"under-confident ({slopes_text(under)})")
    if low_events:
        parts.append(f"under-predicts class{'es' if len(low_events) > 1 else ''} "
                     f"{classes_text(low_events)} on average")
    if high_events:
        parts.append(f"over-predicts class{'es' if len(high_events) > 1 else ''} "
                     f"{classes_text(high_events)} on average")
    return parts


def logistic_verdict(fits, pvalue, alpha, level):
    """Verdict of the logistic calibration: ``fits`` is ``[(label or None, result)]`` (one
    binary fit with label None, or one fit per class)."""
    p_text = f"likelihood-ratio test {p_phrase(pvalue)}"
    if pvalue >= alpha:
        if fits[0][0] is None:
            return _binary_logistic_no_rejection(fits[0][1], p_text, level)
        return (f"No evidence of miscalibration in slope or intercept for any class "
                f"({p_text}, Holm-adjusted). This is not proof of calibration.")
    over = [(c, r) for c, r in fits if r.slope_ci.high < 1]
    under = [(c, r) for c, r in fits if r.slope_ci.low > 1]
    low_events = [(c, r) for c, r in fits if r.calibration_in_the_large_ci.low > 0]
    high_events = [(c, r) for c, r in fits if r.calibration_in_the_large_ci.high < 0]
    if fits[0][0] is None:  # binary: the numbers themselves
        parts = _binary_logistic_parts(fits[0][1], over, under, low_events, high_events)
    else:  # multiclass: which classes, and the range of their slopes
        parts = _multiclass_logistic_parts(fits, over, under, low_events, high_events)
        p_text += ", Holm-adjusted"
    if parts:
        return f"Miscalibrated: the model is {join(parts)}; {p_text}."
    return (f"Miscalibrated: the logistic recalibration model departs from (intercept, slope) = "
            f"(0, 1) ({p_text}), although no {level} interval alone excludes its calibrated "
            f"value.")


# ------------------------------------------------------------------------------------------
# regression

#: The regression report's verdict on its proper scores.
REGRESSION_SCORES_VERDICT = (
    "Lower is better; the scores compare models on the same data and mix "
    "calibration with sharpness, so they are no test of calibration.")


def pit_verdict(ks, mean_pit, mean_test, tails, alpha, n):
    """Uniformity of the PIT values (KS test), the share in the outer 10 % for the direction,
    and the bias that the mean PIT's test shows."""
    p_mean = mean_test.pvalue
    if ks.pvalue < alpha:
        verdict = (f"Miscalibrated: the PIT values are not uniform (KS test "
                   f"{p_phrase(ks.pvalue)}, n = {n}).")
        if tails > 0.1 and p_mean >= alpha:
            verdict += (f" {pct(tails)} of them fall in the outer 10%: the predictive "
                        f"distributions are too narrow (over-confident).")
        elif tails < 0.1 and p_mean >= alpha:
            verdict += (f" Only {pct(tails)} of them fall in the outer 10%: the predictive "
                        f"distributions are too wide (under-confident).")
    else:
        verdict = (f"No evidence of non-uniform PIT values (KS test {p_phrase(ks.pvalue)}, "
                   f"n = {n}); this is not proof of calibration.")
    if p_mean < alpha:
        side = "above" if mean_pit > 0.5 else "below"
        verdict += (f" The targets tend to fall {side} the predicted medians (mean PIT "
                    f"{fmt(mean_pit)}, {p_phrase(p_mean)}): the predictions are biased "
                    f"{'low' if mean_pit > 0.5 else 'high'}.")
    return verdict


def coverage_verdict(narrow, wide, levels, alpha):
    """Too narrow or too wide intervals: ``narrow`` and ``wide`` are the flagged levels
    ``[(level, coverage, interval, adjusted p-value)]``."""

    def cite(flagged):  # the clearest level; the 90% interval among equals
        lev, cov, ci, _ = min(flagged, key=lambda t: (t[3], abs(t[0] - 0.9)))
        return (f"the central {pct(lev)} intervals cover {pct(cov)} [{pct(ci.low)}, "
                f"{pct(ci.high)}] of the targets")

    if narrow and not wide:
        return f"Intervals too narrow (over-confident): {cite(narrow)}."
    if wide and not narrow:
        return f"Intervals too wide (under-confident): {cite(wide)}."
    if narrow and wide:
        return ("Miscalibrated intervals: some levels cover too few targets ("
                + ", ".join(pct(t[0]) for t in narrow) + "), others too many ("
                + ", ".join(pct(t[0]) for t in wide) + ").")
    return (f"Coverage consistent with the nominal levels (binomial tests at "
            f"{', '.join(pct(v) for v in levels)}, Bonferroni-adjusted: "
            f"all p >= {fmt(alpha)}).")


def quantile_verdict(qce, area):
    """The quantile calibration errors are descriptive."""
    return (f"The observed proportions below the predicted quantiles differ from the "
            f"nominal ones by {fmt(qce)} on average (miscalibration area "
            f"{fmt(area)}); descriptive: the PIT test says whether this exceeds the "
            f"noise.")


# ------------------------------------------------------------------------------------------
# the report's tests together


def combine_tests(sections, tests, alpha, n):
    """The overall verdict from ``tests`` (``[(name, pvalue, section key, metric or None)]``),
    and each test's Holm-adjusted p-value written into its section (the row's note and the
    verdict), so that a section and the overall verdict tell one story: a section whose test
    rejects on its own but not after the adjustment says so, and why the overall verdict leaves
    it out."""
    m = len(tests)
    if m > 1:
        adjusted = adjust_pvalues([t[1] for t in tests], method="holm")
        by_key = {section.key: section for section in sections}
        for (name, p, key, metric), a in zip(tests, adjusted):
            section = by_key[key]
            row = find_row(section, metric) if metric is not None else None
            if row is not None:
                row.note += f"; Holm-adjusted over {m} tests: {fmt_p(a)}"
            adjusted_text = f"Adjusted for the report's {m} tests (Holm), {p_phrase(a)}"
            if p < alpha <= a:
                if section.verdict.startswith("Miscalibrated:"):
                    section.verdict = ("Miscalibrated on this test alone:"
                                       + section.verdict[len("Miscalibrated:"):])
                section.verdict += (f" {adjusted_text}, not below {fmt(alpha)}: with {m} "
                                    f"tests a p-value this small is expected by chance more "
                                    f"often than {fmt(alpha)}, so the overall "
                                    f"verdict does not count this one.")
            elif p < alpha:
                section.verdict += f" {adjusted_text}: still below {fmt(alpha)}."
    return overall_verdict([(t[0], t[1]) for t in tests], alpha, n)


def overall_verdict(tests, alpha, n):
    """The report's first sentence. The sections' tests are combined by Holm's step-down
    adjustment, so that a calibrated model gets "evidence of miscalibration" with probability
    at most ``alpha`` (each test alone is at level ``alpha``: without the adjustment three tests
    would give about 10 % false alarms at ``alpha = 0.05``)."""
    adjusted = adjust_pvalues([p for _, p in tests], method="holm")
    m = len(tests)
    rejecting = [(name, p, a) for (name, p), a in zip(tests, adjusted) if a < alpha]
    listed = ", ".join(f"{name} {p_phrase(p)}" for name, p in tests)
    holm = f"Holm-adjusted over the report's {m} tests" if m > 1 else "one test"
    if rejecting:
        which = join([f"the {name} ({p_phrase(p)}, adjusted {p_phrase(a)[2:]})"
                      for name, p, a in rejecting])
        verb = "rejects" if len(rejecting) == 1 else "reject"
        return (f"Evidence of miscalibration at level {fmt(alpha)} ({holm}): {which} {verb} "
                f"calibration (n = {n}). Recalibration (skcalib.recalibration) may help; "
                f"see the sections for the direction.")
    alone = [name for name, p in tests if p < alpha]
    caveat = ""
    if alone:
        caveat = (f" On its own the {join(alone)} would reject at {fmt(alpha)}; with "
                  f"{m} tests such a result is expected by chance more often than "
                  f"{fmt(alpha)}.")
    return (f"No evidence of miscalibration at level {fmt(alpha)} ({holm}; {listed}; "
            f"n = {n}).{caveat} A large p-value is not proof of calibration: small samples "
            f"rarely reject.")
