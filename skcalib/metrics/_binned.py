"""Binned calibration errors: ECE, MCE and the L2 (RMS) calibration error.

A binned calibration error is computed on one or more *problems* ``(Q, T)``: ``Q`` (n, d) holds the
predicted probabilities that are binned and compared, ``T`` (n, d) the matching 0/1 outcomes.

================  =====================================  ===========================================
mode              problems                               distance between bin means (norm="l1")
================  =====================================  ===========================================
``"binary"``      ``Q = P(pos_label)``, ``T = 1{y = pos}``  ``|mean T - mean Q|``
``"top_label"``   ``Q = max_k p_k``, ``T = 1{y = argmax}``  ``|mean T - mean Q|``
``"classwise"``   one per class ``k``: ``Q = p_k``          ``|.|`` per class, averaged over classes
``"canonical"``   ``Q = p`` (whole vector), ``T = e_y``      total variation ``0.5 * ||.||_1``
================  =====================================  ===========================================

``norm="l2"`` uses ``||.||_2`` and ``norm="max"`` uses ``||.||_inf`` for the canonical mode.
In the top-label mode a maximum shared by several classes ``A`` is a uniform draw among them:
``T = 1{y in A} / |A|`` (``_validation.top_label``; ``1{y = argmax}`` when the maximum is unique).

The problems of each mode come from :mod:`skcalib._problems.modes`, the bins from
:mod:`skcalib._problems.binning` (right-closed, ``p = 0`` in the first and ``p = 1`` in the last
bin; memory grows with the occupied bins, never with ``n_bins``) and the errors of the per-cell
sums from :mod:`skcalib._problems.binned`. This module holds the public function and its
chunk-by-chunk path for Dask arrays.
"""

from .. import _dask
from .._problems.binned import binned_errors, cell_error, check_binned_params, combine, finalize
from .._problems.binning import UniformBinning, make_binning
from .._problems.modes import make_problems, resolve_mode
from .._validation import check_labels_and_probabilities


def calibration_error(y_true, y_proba, *, norm="l1", squared=False, n_bins=15, strategy="uniform",
                      mode="auto", debias=False, labels=None, pos_label=None, sample_weight=None,
                      min_bin_size=1):
    """Binned calibration error: ECE (``norm="l1"``), L2/RMS (``"l2"``) and MCE (``"max"``).

    The predictions are grouped into bins and, in each bin, the mean prediction is compared with the
    frequency of the outcome: ``ECE = sum_b w_b d(ybar_b, pbar_b)`` (bins weighted by their share of
    the sample weight), ``L2 = (sum_b w_b d(ybar_b, pbar_b)**2)**(1/2)`` and
    ``MCE = max_b d(ybar_b, pbar_b)`` over non-empty bins.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels (any hashable, sortable values).
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: P(``pos_label``) for a binary problem, or one column per class
        (columns in the order of the sorted ``labels``). Dask arrays (also for ``y_true`` and
        ``sample_weight``) are reduced chunk by chunk without loading them, with
        ``strategy="uniform"`` only (see :ref:`scaling`).
    norm : {"l1", "l2", "max"}, default="l1"
        ECE, L2 calibration error or MCE.
    squared : bool, default=False
        Return the squared L2 error (``norm="l2"`` only).
    n_bins : int, default=15
        Number of bins per coordinate (``"uniform"``, ``"quantile"``) or the largest number of bins
        (``"median_variance"``), in ``[1, 2**53]``. Memory grows with the number of occupied bins
        (at most ``n_samples`` per problem), never with ``n_bins``.
    strategy : {"uniform", "quantile", "median_variance"}, default="uniform"
        * ``"uniform"``: equal-width bins, right-closed, ``p = 0`` in the first and ``p = 1`` in the
          last bin;
        * ``"quantile"``: equal-mass bins, edges at the quantiles of the data (deduplicated);
        * ``"median_variance"``: recursive median splits along the coordinate of largest variance
          (Widmann et al. 2019), each bin with at least ``min_bin_size`` samples.
    mode : {"auto", "binary", "top_label", "classwise", "canonical"}, default="auto"
        * ``"binary"``: calibration of P(``pos_label``), as scikit-learn's binary calibration error;
        * ``"top_label"``: confidence ``max_k p_k`` against accuracy (Guo et al. 2017);
        * ``"classwise"``: every class's probability against its indicator, averaged over classes
          (``norm="max"``: the maximum over classes; ``"l2"``: the root of the mean square);
        * ``"canonical"``: the whole probability vector, binned on the simplex, with the total
          variation (``"l1"``), Euclidean (``"l2"``) or sup (``"max"``) distance between the bin's
          mean prediction and its label frequencies;
        * ``"auto"``: ``"binary"`` for two classes, ``"top_label"`` otherwise.
    debias : bool, default=False
        Subtract the estimated variance of each bin's outcome frequency,
        ``ybar (1 - ybar) / (n_b - 1)``, from the squared gap (Kumar et al. 2019; ``norm="l2"``
        only; bins with ``n_b <= 1`` contribute 0; sample weights count as frequencies). The
        squared result can be negative; with ``squared=False`` a negative estimate is reported as
        0.0 with a warning.
    labels : array-like, default=None
        All class labels (default: those present in ``y_true``).
    pos_label : label, default=None
        Positive class for a one-column ``y_proba`` and for ``mode="binary"``; default: the greater
        label.
    sample_weight : array-like of shape (n_samples,), default=None
        Weights of the samples; bins are weighted by their total weight. Only weight ratios matter
        (huge but finite weights such as 1e308 are fine), except for ``debias=True``, which reads
        weights as frequencies. Data-dependent bin edges are computed without weights.
    min_bin_size : int, default=1
        Smallest bin of ``strategy="median_variance"``.

    Returns
    -------
    float

    See Also
    --------
    CalibrationError : the same error as an estimator with learned bins.
    skce : a binning-free kernel calibration error.

    References
    ----------
    C. Guo et al. On calibration of modern neural networks. ICML 2017.
    A. Kumar, P. Liang, T. Ma. Verified uncertainty calibration. NeurIPS 2019.
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests in multi-class classification: a unifying
    framework. NeurIPS 2019.

    Examples
    --------
    >>> from skcalib import calibration_error
    >>> y_true = [0, 0, 1, 1]
    >>> y_proba = [0.1, 0.4, 0.6, 0.95]
    >>> round(calibration_error(y_true, y_proba, n_bins=2), 4)
    0.2375
    >>> P = [[.7, .2, .1], [.1, .8, .1], [.3, .3, .4], [.5, .25, .25], [.05, .15, .8], [.2, .6, .2]]
    >>> round(calibration_error([0, 1, 2, 1, 2, 0], P, n_bins=10, mode="canonical"), 12)
    0.475
    """
    check_binned_params(norm, squared, n_bins, strategy, mode, debias, min_bin_size)
    if _dask.any_dask(y_true, y_proba, sample_weight):
        value = chunked_error(y_true, y_proba, norm, n_bins, strategy, mode, debias, labels,
                              pos_label, sample_weight)
        return finalize(value, norm, squared)
    data = check_labels_and_probabilities(y_true, y_proba, labels=labels, pos_label=pos_label,
                                          sample_weight=sample_weight)
    m = resolve_mode(mode, data.n_classes)
    problems = make_problems(data, m, pos_label)
    value, _ = binned_errors(problems, [make_binning(strategy, n_bins, min_bin_size).fit(Q)
                                        for Q, _ in problems],
                             norm, debias, data.sample_weight, shares=False)
    return finalize(value, norm, squared)



def check_chunked_strategy(strategy):
    """Only fixed bin edges can be applied to each chunk alone."""
    if strategy != "uniform":
        raise ValueError(
            f"strategy={strategy!r} needs the whole data set to place its bin edges; Dask "
            "arrays are reduced chunk by chunk with strategy='uniform' only (or compute the "
            "arrays into memory first)."
        )



def chunk_cell_sums(problems, binning, w):
    """Per-cell sums (:class:`skcalib._dask.CellSums`) of every problem of one chunk."""
    wn, scale = _dask.scaled_weights(w)
    return [_dask.CellSums.from_bins(binning.bin_indices(Q), binning.n_bins, wn, scale,
                                     t=T, q=Q)
            for Q, T in problems]



def chunked_problem_sums(y_true, y_proba, sample_weight, mode, strategy, n_bins, labels,
                         pos_label):
    """Per-cell sums of every problem of a mode over Dask arrays, merged over the chunks:
    ``(sums, mode, classes, binning)`` with one :class:`skcalib._dask.CellSums` per problem, the
    resolved mode, the classes and the (uniform) binning."""
    check_chunked_strategy(strategy)
    chunks = _dask.ClassificationChunks(y_true, y_proba, sample_weight, labels=labels,
                                        pos_label=pos_label)
    m = resolve_mode(mode, chunks.n_classes)
    binning = UniformBinning(n_bins)

    def per_chunk(data, w):
        return chunk_cell_sums(make_problems(data, m, pos_label), binning, w)

    return chunks.reduce(per_chunk, _dask.merge_lists), m, chunks.classes, binning



def chunked_error(y_true, y_proba, norm, n_bins, strategy, mode, debias, labels, pos_label,
                  sample_weight):
    """The binned error (squared for l2) of Dask arrays: per-cell sums of every chunk, merged
    (see :mod:`skcalib._dask`); equal to the in-memory error up to rounding."""
    sums, _, _, _ = chunked_problem_sums(y_true, y_proba, sample_weight, mode, strategy, n_bins,
                                         labels, pos_label)
    values = []
    for cs in sums:
        if not cs.weight.sum() > 0:
            raise ValueError("sample_weight must have a positive sum (all weights are zero).")
        values.append(cell_error(cs.weight, cs.sums["t"], cs.sums["q"], norm, debias,
                                 cs.scale)[0])
    return combine(values, [None] * len(values), norm)[0]

