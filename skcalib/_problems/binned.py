"""The binned calibration errors of problems ``(Q, T)`` (see :mod:`skcalib._problems.modes`).

Every error is finished from per-cell sums: the weight ``W``, the weighted outcome sums ``ST`` and
prediction sums ``SQ`` of each occupied cell of a fitted binning (:mod:`skcalib._problems.binning`).
The sums are mergeable, so Dask chunks (:mod:`skcalib._dask`) give the error of the whole array.

Internal API (used by ``metrics``, ``recalibration`` and ``stats``):

* :data:`NORMS` and :func:`check_binned_params` -- the options of
  :func:`skcalib.calibration_error`, checked;
* :func:`problem_error` -- error (squared for l2) of one problem with its cells, and each sample's
  share of it;
* :func:`cell_error` -- the same from the per-cell sums;
* :func:`combine` -- the per-problem errors combined (mean over classes, or max);
* :func:`finalize` -- the square root of an l2 error (0.0 with a warning when the debiased
  estimate is negative);
* :func:`binned_errors` -- the error and shares over all problems with fitted binnings;
* :class:`FixedPredictionErrors` -- the binned error of fixed predictions for many label vectors
  (the conditional consistency test).
"""

import warnings

import numpy as np

from .._validation import (
    check_bool,
    check_n_bins,
    check_option,
    check_scalar_param,
    pos_index,
    top_label,
)
from .binning import STRATEGIES, make_binning, occupied_cells
from .modes import MODES, resolve_mode

__all__ = ["NORMS", "FixedPredictionErrors", "binned_errors", "cell_error", "check_binned_params",
           "combine", "finalize", "problem_error"]

#: The ``norm`` options of the binned errors.
NORMS = ("l1", "l2", "max")


def check_binned_params(norm, squared, n_bins, strategy, mode, debias, min_bin_size):
    """The options of :func:`skcalib.calibration_error`, checked (``ValueError`` naming each)."""
    check_option(norm, "norm", NORMS)
    check_option(strategy, "strategy", STRATEGIES)
    check_option(mode, "mode", MODES)
    check_n_bins(n_bins)
    check_scalar_param(min_bin_size, "min_bin_size", min_val=1)
    check_bool(squared, "squared")
    check_bool(debias, "debias")
    if squared and norm != "l2":
        raise ValueError(f"squared=True is only defined for norm='l2'; got norm={norm!r}.")
    if debias and norm != "l2":
        raise ValueError(f"debias=True is only defined for norm='l2'; got norm={norm!r}.")



def _distance(D, norm):
    if D.shape[1] == 1:
        return np.abs(D[:, 0])
    if norm == "l1":
        return 0.5 * np.abs(D).sum(axis=1)
    if norm == "l2":
        return np.sqrt(np.einsum("ij,ij->i", D, D))
    return np.abs(D).max(axis=1)



def problem_error(Q, T, cells, norm, debias, sample_weight, shares=True):
    """Squared (l2) or plain (l1, max) error of one problem and each sample's share of it.

    Weights enter through their ratios, after division by the largest weight (huge but finite
    weights such as 1e308 cannot overflow); only the debiasing correction, where weights count as
    frequencies, uses the bins' actual total weight.
    """
    cells = occupied_cells(cells)
    n_cells = int(cells.max()) + 1 if cells.size else 0
    w = sample_weight
    scale = 1.0
    if w is not None:
        scale = float(w.max())
        w = w / scale
    W = np.bincount(cells, weights=w, minlength=n_cells)
    d = Q.shape[1]
    ST = np.empty((n_cells, d))
    SQ = np.empty((n_cells, d))
    for c in range(d):
        wt = T[:, c] if w is None else T[:, c] * w
        wq = Q[:, c] if w is None else Q[:, c] * w
        ST[:, c] = np.bincount(cells, weights=wt, minlength=n_cells)
        SQ[:, c] = np.bincount(cells, weights=wq, minlength=n_cells)
    value, per_cell = cell_error(W, ST, SQ, norm, debias, scale)
    return value, (per_cell[cells] if shares else None)



def cell_error(W, ST, SQ, norm, debias, scale=1.0):
    """Error (squared for l2) of one problem from its per-cell sums, and each cell's term.

    ``W`` (m,) are the cells' weight sums, ``ST`` and ``SQ`` (m, d) their weighted outcome and
    prediction sums, all for weights divided by ``scale`` (the debiasing reads ``W * scale`` as
    frequencies). The sums are mergeable, so chunked data (:mod:`skcalib._dask`) gives the same
    error as the whole array.
    """
    n_cells, d = ST.shape
    nonempty = W > 0
    safeW = np.where(nonempty, W, 1.0)
    D = np.empty((n_cells, d))
    for c in range(d):
        D[:, c] = (ST[:, c] - SQ[:, c]) / safeW
    dist = _distance(D, norm)
    total = W.sum()
    if norm == "max":
        return float(dist[nonempty].max()), dist
    if norm == "l1":
        return float(np.dot(W, dist) / total), dist
    sq = dist * dist
    if debias:
        # Kumar et al. (2019): subtract the estimated variance of the bin's outcome frequency,
        # sum_c ybar_c (1 - ybar_c) / (n_b - 1). Sample weights are frequency weights
        # (n_b = total weight of the bin, as if samples were repeated); bins with n_b <= 1 cannot
        # estimate a variance and contribute 0.
        with np.errstate(over="ignore"):
            freq = W * scale  # inf for overflowing weights: the correction is then 0
        ok = freq > 1.0
        ybar = np.empty((n_cells, d))
        for c in range(d):
            ybar[:, c] = ST[:, c] / safeW
        var = (ybar * (1.0 - ybar)).sum(axis=1)
        corr = np.where(ok, var / np.where(ok, freq - 1.0, 1.0), 0.0)
        sq = np.where(ok, sq - corr, 0.0)
    return float(np.dot(W, sq) / total), sq



def combine(values, shares, norm):
    """Combine the per-problem errors (classwise: mean over classes; max: max)."""
    if len(values) == 1:
        return values[0], shares[0]
    if shares[0] is None:
        s = None
    elif norm == "max":
        s = np.max(np.vstack(shares), axis=0)
    else:
        s = np.mean(np.vstack(shares), axis=0)
    return (float(max(values)) if norm == "max" else float(np.mean(values))), s



def finalize(value, norm, squared):
    """The reported error of ``value`` (squared for l2): its square root unless ``squared``."""
    if norm != "l2":
        return value
    if squared:
        return value
    if value < 0:
        warnings.warn(
            f"the debiased squared calibration error is negative ({value:.3g}); returning 0.0 for "
            "its square root. Use squared=True to obtain the signed estimate.",
            UserWarning, stacklevel=3,
        )
        return 0.0
    return float(np.sqrt(value))



def binned_errors(problems, binnings, norm, debias, sample_weight, shares=True):
    """Error (squared for l2) and per-sample shares over all problems with fitted binnings."""
    values, all_shares = [], []
    for (Q, T), binning in zip(problems, binnings):
        cells = binning.assign(Q)
        v, s = problem_error(Q, T, cells, norm, debias, sample_weight, shares)
        values.append(v)
        all_shares.append(s)
    return combine(values, all_shares, norm)



class FixedPredictionErrors:
    """:func:`skcalib.calibration_error` of fixed predictions for many label vectors at once.

    The conditional consistency test (:func:`skcalib.stats.consistency_test`) evaluates the
    binned error of the *same* predictions on hundreds of synthetic label vectors. Everything
    but the outcomes is fixed: the validated probabilities, the problems' predictions ``Q`` (the
    top-label confidence and its tie shares), the bins and their weight and prediction sums. They
    are computed once here; each label vector adds only its per-cell outcome sums (one
    ``bincount`` for a whole batch of label vectors), and :func:`cell_error` finishes each. The
    values equal ``calibration_error(classes[codes], y_proba, **kwargs)`` (same sums in the same
    order).

    Parameters
    ----------
    data : ClassificationData
        Validated probabilities (``check_labels_and_probabilities``).
    norm, squared, n_bins, strategy, mode, debias, pos_label, min_bin_size
        As in :func:`skcalib.calibration_error` (validated here).
    """

    def __init__(self, data, *, norm="l1", squared=False, n_bins=15, strategy="uniform",
                 mode="auto", debias=False, pos_label=None, min_bin_size=1):
        check_binned_params(norm, squared, n_bins, strategy, mode, debias, min_bin_size)
        self.norm, self.squared, self.debias = norm, squared, debias
        self.mode = m = resolve_mode(mode, data.n_classes)
        P = data.probs
        self.n_classes = data.n_classes
        w = data.sample_weight
        self.scale = 1.0
        if w is not None:
            self.scale = float(w.max())
            w = w / self.scale
        self.w = w
        if m == "binary":
            self.k = pos_index(data.classes, pos_label)
            Qs = [P[:, self.k:self.k + 1]]
        elif m == "top_label":
            conf, self.shares = top_label(P)
            Qs = [conf[:, None]]
        elif m == "classwise":
            Qs = [P[:, k:k + 1] for k in range(P.shape[1])]
        else:
            Qs = [P]
        self.cells, self.W, self.SQ = [], [], []
        for Q in Qs:
            cells = occupied_cells(make_binning(strategy, n_bins, min_bin_size).fit(Q).assign(Q))
            m_cells = int(cells.max()) + 1 if cells.size else 0
            self.cells.append(cells)
            self.W.append(np.bincount(cells, weights=w, minlength=m_cells))
            self.SQ.append(np.column_stack([
                np.bincount(cells, weights=Q[:, c] if w is None else Q[:, c] * w,
                            minlength=m_cells) for c in range(Q.shape[1])]))

    def _outcome_sums(self, j, codes):
        """``(M, n_cells, d)`` outcome sums of problem ``j`` for label codes ``(M, n)``."""
        cells, W = self.cells[j], self.W[j]
        M, n = codes.shape
        m_cells = W.size
        offset = (np.arange(M) * m_cells)[:, None] + cells[None, :]
        w = None if self.w is None else np.broadcast_to(self.w, (M, n))
        if self.mode == "canonical":
            C = self.n_classes
            idx = (offset * C + codes).ravel()
            return np.bincount(idx, weights=None if w is None else w.ravel(),
                               minlength=M * m_cells * C).reshape(M, m_cells, C)
        if self.mode == "top_label":
            t = self.shares[np.arange(n)[None, :], codes]
        else:
            k = self.k if self.mode == "binary" else j
            t = (codes == k).astype(np.float64)
        if w is not None:
            t = t * w
        return np.bincount(offset.ravel(), weights=t.ravel(),
                           minlength=M * m_cells).reshape(M, m_cells, 1)

    def values(self, codes):
        """The error for each row of ``codes`` (``(M, n)`` class indices into the data's
        classes)."""
        codes = np.asarray(codes)
        out = np.empty(codes.shape[0])
        ST = [self._outcome_sums(j, codes) for j in range(len(self.cells))]
        for b in range(codes.shape[0]):
            vals = [cell_error(self.W[j], ST[j][b], self.SQ[j], self.norm, self.debias,
                               self.scale)[0] for j in range(len(self.cells))]
            value = combine(vals, [None] * len(vals), self.norm)[0]
            out[b] = finalize(value, self.norm, self.squared)
        return out

