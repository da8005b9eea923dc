"""The binning estimation function ``h_bin`` (Gruber & Bach, Eq. 23) and its debiased variant."""

import numpy as np

from .._validation import MAX_STORED_BINS, check_bool, check_n_bins, check_option
from .._problems.binning import make_binning
from ._base import _CalibrationEstimatorBase


class BinnedCalibrationEstimator(_CalibrationEstimatorBase):
    """Binning calibration estimation function ``h_bin(p, p') = <delta_b(p), delta_b(p')>``.

    The bins are fitted on the training inputs; ``delta_b`` is the mean residual
    ``mean(q - t)`` of the training samples in bin ``b`` (confidence minus accuracy for the
    top-label notion) and 0 for bins without training samples. Its diagonal mean on the training
    data is the squared binned ECE, ``(TCE_2^bin)^2`` of Eq. 10 (Gruber & Bach, Eq. 24). The bins
    are those of :func:`skcalib.calibration_error`: right-closed ``(b_{m-1}, b_m]`` with 0 in the
    first bin (``strategy="uniform"``), or equal-mass edges at the quantiles of the training
    inputs, deduplicated (``"quantile"``); the canonical notion bins each coordinate and uses the
    occupied cells of the grid.

    With ``debias=True`` (Kumar et al. 2019) pairs in the same bin lose the estimated variance of
    the bin's outcome frequency, ``sum_c tbar_c (1 - tbar_c) / (n_b - 1)``, so that the training
    diagonal mean is the debiased squared error of :func:`~skcalib.calibration_error`
    (``norm="l2", squared=True, debias=True``); bins with one training sample contribute 0 on the
    diagonal. The debiased ``h`` can be negative.

    For ``mode="classwise"`` the estimation functions **sum** over classes (the convention of
    :mod:`skcalib.estimation`), while :func:`~skcalib.calibration_error` averages: the training
    diagonal mean is then ``n_classes`` times its class-wise value.

    Parameters
    ----------
    n_bins : int, default=15
        Bins per coordinate (the paper's grid is 5, 10, ..., 100; 15 is the common default); at
        most ``10**6``.
    strategy : {"uniform", "quantile"}, default="uniform"
    debias : bool, default=False
        Kumar et al.'s variance correction on same-bin pairs (see above).
    mode : {"auto", "binary", "top_label", "classwise", "canonical"}, default="auto"
        The notion (see :mod:`skcalib.estimation`); ``"auto"`` is ``"binary"`` for two classes and
        ``"top_label"`` otherwise.
    labels : array-like, default=None
        All class labels, one per column of ``X`` (default: the labels present in ``y``); needed
        when a training set lacks a class.

    Attributes
    ----------
    classes_ : ndarray
    mode_ : str
    n_train_ : int
    problems_ : list
        Per problem: the fitted binning, the cells' mean residuals and corrections.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import calibration_error
    >>> from skcalib.estimation import BinnedCalibrationEstimator
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=500)
    >>> y = rng.integers(0, 3, size=500)
    >>> est = BinnedCalibrationEstimator(n_bins=10).fit(P, y)
    >>> bool(np.isclose(est.calibration_error(P),
    ...                 calibration_error(y, P, norm="l2", n_bins=10, squared=True)))
    True
    """

    def __init__(self, n_bins=15, strategy="uniform", *, debias=False, mode="auto", labels=None):
        self.n_bins = n_bins
        self.strategy = strategy
        self.debias = debias
        self.mode = mode
        self.labels = labels

    def _check_params(self):
        super()._check_params()
        check_n_bins(self.n_bins, max_val=MAX_STORED_BINS)
        check_option(self.strategy, "strategy", ("uniform", "quantile"))
        check_bool(self.debias, "debias")

    def _fit_problems(self, problems):
        states = []
        for Q, R in problems:
            binning = make_binning(self.strategy, self.n_bins).fit(Q)
            cells = binning.assign(Q)
            n_cells = int(cells.max()) + 1
            counts = np.bincount(cells, minlength=n_cells).astype(float)
            safe = np.maximum(counts, 1.0)
            delta = np.column_stack([np.bincount(cells, weights=R[:, c], minlength=n_cells)
                                     for c in range(R.shape[1])]) / safe[:, None]
            corr = np.zeros(n_cells)
            if self.debias:
                T = Q - R
                tbar = np.column_stack([np.bincount(cells, weights=T[:, c], minlength=n_cells)
                                        for c in range(T.shape[1])]) / safe[:, None]
                var = (tbar * (1.0 - tbar)).sum(axis=1)
                ok = counts > 1
                # one-sample bins: the correction cancels delta^2 (their diagonal is 0)
                corr = np.where(ok, var / np.where(ok, counts - 1.0, 1.0),
                                np.einsum("ij,ij->i", delta, delta))
            # the leave-own-pair-out square of the bin mean (debiased estimates): a U-statistic
            # over pairs of distinct samples of the bin, 0 for a bin with one sample
            r2 = np.bincount(cells, weights=np.einsum("ij,ij->i", R, R), minlength=n_cells)
            pairs = counts * (counts - 1.0)
            square = np.where(counts > 1, (counts ** 2 * np.einsum("ij,ij->i", delta, delta) - r2)
                              / np.where(counts > 1, pairs, 1.0), 0.0)
            states.append({"binning": binning, "Q": np.array(Q), "cells": cells,
                           "delta": delta, "corr": corr, "square": square})
        self.problems_ = states

    def _cells(self, k, Q):
        """Training-cell ids of new inputs (-1 for cells without training samples).

        Grid cells of several coordinates are numbered per call, so new inputs are assigned
        together with the training inputs.
        """
        st = self.problems_[k]
        if Q.shape[1] == 1:
            cells = st["binning"].assign(Q)
        else:
            both = st["binning"].assign(np.vstack([st["Q"], Q]))
            train, cells = both[:st["Q"].shape[0]], both[st["Q"].shape[0]:]
            lookup = np.full(int(both.max()) + 1, -1, dtype=np.int64)
            lookup[train] = st["cells"]
            cells = lookup[cells]
        return np.where(cells < st["delta"].shape[0], cells, -1)

    def _delta(self, k, cells):
        D = self.problems_[k]["delta"]
        return np.where((cells >= 0)[:, None], D[np.maximum(cells, 0)], 0.0)

    def _residual_terms(self, k, Q):
        c = self._cells(k, Q)
        return self._delta(k, c), np.where(c >= 0, self.problems_[k]["square"][np.maximum(c, 0)],
                                           0.0)

    def _pairwise_problem(self, k, Q1, Q2):
        c1 = self._cells(k, Q1)
        c2 = c1 if Q2 is Q1 else self._cells(k, Q2)
        H = self._delta(k, c1) @ self._delta(k, c2).T
        if self.debias:
            corr = self.problems_[k]["corr"]
            same = (c1[:, None] == c2[None, :]) & (c1[:, None] >= 0)
            H -= np.where(same, corr[np.maximum(c1, 0)][:, None], 0.0)
        return H

    def _diag_problem(self, k, Q):
        c = self._cells(k, Q)
        D = self._delta(k, c)
        d = np.einsum("ij,ij->i", D, D)
        if self.debias:
            d -= np.where(c >= 0, self.problems_[k]["corr"][np.maximum(c, 0)], 0.0)
        return d
