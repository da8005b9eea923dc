"""Multiple-testing adjustment of p-values (Holm's step-down and Bonferroni's correction).

:func:`adjust_pvalues` is the public, validating entry; ``adjust(pvalues, correction)`` does the
arithmetic on p-values already known to be valid (the one-vs-rest families of ``_clinical``
call it directly).
"""

import numpy as np

from .._validation import check_option

__all__ = ["adjust_pvalues", "adjust"]

METHODS = ("holm", "bonferroni")


def adjust_pvalues(pvalues, method="holm"):
    """P-values adjusted for testing several hypotheses at once, in the input order.

    Rejecting the hypotheses whose adjusted p-value is below ``alpha`` rejects a true one with
    probability at most ``alpha`` (the family-wise error rate), whatever the dependence between
    the tests. This is how :func:`logistic_calibration` and :func:`hosmer_lemeshow_test` combine
    the classes of a multiclass problem and how :func:`skcalib.calibration_report` combines its
    sections' tests into its overall verdict.

    Parameters
    ----------
    pvalues : array-like of shape (n_tests,)
        The p-values of the individual tests, each in [0, 1].
    method : {"holm", "bonferroni"}, default="holm"
        ``"holm"``: Holm's step-down adjustment (the ``k``-th smallest p-value is multiplied by
        ``n_tests - k + 1``, made monotone and capped at 1); uniformly more powerful than
        ``"bonferroni"``, which multiplies every p-value by ``n_tests`` (capped at 1).

    Returns
    -------
    ndarray of shape (n_tests,)
        The adjusted p-values, each at least as large as its unadjusted one.

    Raises
    ------
    ValueError
        If ``pvalues`` is not one-dimensional, is empty, or holds a value outside [0, 1] or
        NaN, or if ``method`` is unknown.
    TypeError
        If ``pvalues`` is not numeric.

    Examples
    --------
    >>> from skcalib.stats import adjust_pvalues
    >>> adjust_pvalues([0.026, 0.5, 0.004]).round(3).tolist()
    [0.052, 0.5, 0.012]
    >>> adjust_pvalues([0.026, 0.5, 0.004], method="bonferroni").round(3).tolist()
    [0.078, 1.0, 0.012]
    """
    method = check_option(method, "method", METHODS)
    if isinstance(pvalues, (str, bytes)):
        raise TypeError(f"pvalues must be an array-like of numbers; got a "
                        f"{type(pvalues).__name__}.")
    try:
        p = np.asarray(pvalues)
    except (ValueError, TypeError):
        raise ValueError("pvalues must be a one-dimensional array of numbers (a ragged "
                         "sequence was given).") from None
    if p.dtype.kind not in "biuf" or p.dtype.kind == "b":
        raise TypeError(f"pvalues must be numbers; got an array of dtype {p.dtype}.")
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"pvalues must be a non-empty one-dimensional array; got shape "
                         f"{p.shape}.")
    p = p.astype(np.float64)
    if not np.all((p >= 0.0) & (p <= 1.0)):  # (also NaN)
        bad = p[~((p >= 0.0) & (p <= 1.0))][0]
        raise ValueError(f"pvalues must be in [0, 1]; got {bad!r}.")
    return adjust(p, method)


def adjust(pvalues, correction):
    """Holm (step-down) or Bonferroni adjusted p-values, in the input order, of validated
    ``pvalues`` (the tests' one-vs-rest families call it directly)."""
    p = np.asarray(pvalues, dtype=np.float64)
    K = p.size
    if correction == "bonferroni":
        return np.minimum(1.0, K * p)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (K - np.arange(K)) * p[order])
    adjusted = np.empty(K)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted
