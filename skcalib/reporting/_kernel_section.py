"""The kernel section, shared by both tasks: the SKCE with its test and interval
(:func:`skcalib.stats.skce_test`, :func:`skcalib.stats.skce_ci`).

Up to :data:`LARGE_N` samples it reports the unbiased estimate, the bootstrap test and the normal
interval; above, the block estimator with blocks of about ``sqrt(n)`` and its asymptotic test and
interval, in one pass. ``check_n_samples`` refuses reports of fewer than :data:`MIN_SAMPLES`
predictions (the SKCE interval's variance needs 3).
"""

from ..stats import skce_ci, skce_test
from ._format import fmt
from ._report import ReportRow, ReportSection
from ._verdicts import kernel_verdict

__all__ = ["LARGE_N", "MIN_SAMPLES", "check_n_samples", "kernel_section"]

#: Above this many samples the kernel section uses the block estimator with blocks of about
#: sqrt(n) samples (O(n^1.5) pair terms, one pass for estimate, p-value and interval) instead of
#: the unbiased U-statistic, whose interval needs all n^2 pairs.
LARGE_N = 20_000

#: Smallest number of predictions a report accepts.
MIN_SAMPLES = 3


def check_n_samples(n):
    """Refuse a report of fewer than :data:`MIN_SAMPLES` predictions."""
    if n < MIN_SAMPLES:
        raise ValueError(f"a calibration report needs at least {MIN_SAMPLES} samples (the SKCE "
                         f"interval's variance needs 3); got {n}.")


def kernel_section(y, pred, common, n, confidence_level, n_resamples, random_state, n_jobs):
    """The ``"kernel"`` section of ``(y, pred)`` (class probabilities with ``common`` holding
    their ``labels``, or a predictive distribution with ``common`` empty)."""
    alpha = 1.0 - confidence_level
    if n > LARGE_N:
        test = skce_test(y, pred, method="block", block_size="sqrt", random_state=random_state,
                         n_jobs=n_jobs, **common)
        low, high = test.confidence_interval(confidence_level)
        note = "block estimator, blocks of ~sqrt(n); p: block test"
    else:
        test = skce_test(y, pred, n_resamples=n_resamples, random_state=random_state,
                         n_jobs=n_jobs, **common)
        ci = skce_ci(y, pred, confidence_level=confidence_level, random_state=random_state,
                     n_jobs=n_jobs, **common)
        low, high = ci.confidence_interval
        note = f"unbiased estimate; p: {test.method} test"
    # The SKCE is a squared error (>= 0) and its interval is cut at 0; the unbiased estimate can
    # be negative (near calibration, about half of the time). It is shown cut at 0 too, so that
    # the interval contains the number printed beside it, and the note gives its own value.
    estimate = max(float(test.estimate), 0.0)
    if test.estimate < 0:
        note += (f"; unbiased estimate {fmt(test.estimate)} shown as 0 (the SKCE is >= 0, "
                 f"its interval is cut at 0 alike)")
    rows = [ReportRow("SKCE", estimate, low, high, test.pvalue, note=note)]
    verdict = kernel_verdict(estimate, low, high, test, alpha, n, confidence_level)
    return ReportSection("kernel", "Kernel calibration test (SKCE)", rows, verdict)
