"""Non-parametric recalibration maps: isotonic regression, histogram binning, scaling-binning.

* :class:`IsotonicCalibration` -- a non-decreasing step-and-ramp map of each class's probability
  (Zadrozny and Elkan 2002), fitted by scikit-learn's :class:`~sklearn.isotonic.IsotonicRegression`
  (the same ties and interpolation), one-vs-rest and renormalised for several classes.
* :class:`HistogramBinning` -- the frequency of the class in the bin of its probability
  (Zadrozny and Elkan 2001), on the bins of :func:`skcalib.calibration_error`.
* :class:`ScalingBinning` -- a scaling map fitted on one half of the data, discretised by
  quantile bins on the other half (Kumar, Liang and Ma 2019), with the debiased estimate of its
  L2 calibration error.

All three work on probabilities: logits are turned into ``softmax(logits)`` (``sigmoid`` of a
1-D binary score) first.
"""

import numpy as np
from scipy.special import softmax
from sklearn.base import clone
from sklearn.isotonic import IsotonicRegression
from sklearn.utils.validation import check_is_fitted

from .._problems.binned import combine, problem_error
from .._problems.binning import QuantileBinning, UniformBinning, edge_levels, quantiles_of_sorted
from .._validation import check_n_bins, check_option, check_random_state_param, check_rng
from ._base import ClassifierRecalibrator
from ._temperature import TemperatureScaling

__all__ = ["IsotonicCalibration", "HistogramBinning", "ScalingBinning"]

_OUT_OF_BOUNDS = ("clip", "raise")
_BIN_STRATEGIES = ("uniform", "quantile")
_SB_MODES = ("marginal", "top_label")


def _probabilities(S, kind, L):
    """``(n, C)`` probabilities of validated scores: as given, or ``softmax`` of the logits."""
    if kind == "proba":
        return np.column_stack([1.0 - S, S]) if S.ndim == 1 else np.asarray(S, dtype=np.float64)
    return softmax(L, axis=1)


def _one_vs_rest_columns(n_classes):
    """Columns fitted one-vs-rest: only the positive class of a binary problem."""
    return [1] if n_classes == 2 else list(range(n_classes))


def _assemble(cols, n, n_classes):
    """``(n, C)`` probabilities from the recalibrated one-vs-rest columns.

    Binary: ``(1 - q, q)``. Several classes: each row divided by its sum; rows whose
    recalibrated probabilities are all 0 become uniform (as scikit-learn's
    ``CalibratedClassifierCV``).
    """
    if n_classes == 2:
        q = cols[0]
        return np.column_stack([1.0 - q, q])
    P = np.column_stack(cols) if n else np.zeros((0, n_classes))
    s = P.sum(axis=1, keepdims=True)
    zero = s[:, 0] <= 0
    P = np.divide(P, np.where(zero[:, None], 1.0, s))
    P[zero] = 1.0 / n_classes
    return P


# ---------------------------------------------------------------------------------------------
# Isotonic regression


class IsotonicCalibration(ClassifierRecalibrator):
    """Isotonic regression of the labels on a classifier's probabilities (one-vs-rest).

    ``X`` holds the scores of a fitted classifier, one column per class of ``classes_`` or one
    column for a binary problem (see ``input``). Logits are first turned into probabilities
    (``softmax``; ``sigmoid`` of a 1-D score). For a binary problem the map is the
    non-decreasing function of ``p = P(classes_[1])`` closest in (weighted) least squares to the
    indicator of ``classes_[1]``; ``predict_proba`` returns ``(1 - q, q)``. For several classes
    each class's probability gets its own map against the indicator of that class
    (one-vs-rest), and every row is divided by its sum; a row whose recalibrated probabilities
    are all 0 becomes uniform, ``1 / n_classes`` (scikit-learn's rule).

    Ties and interpolation are exactly those of :class:`sklearn.isotonic.IsotonicRegression`
    (used for the fit): tied scores are merged into their weighted mean label, the fitted map
    interpolates linearly between the fitted points, and scores outside the range seen in
    ``fit`` are clipped to it. On probabilities, the result equals scikit-learn's
    ``CalibratedClassifierCV(FrozenEstimator(clf), method="isotonic")`` on ``predict_proba``
    (tested). Scikit-learn fits a ``decision_function`` directly, not its ``softmax``: the fitted
    steps are the same for a binary score (a monotone transformation), only the interpolation
    between them differs.

    **Tiny and one-class fitting sets.** A class that never occurs in the fitting labels (present
    through ``labels``) gets probability 0 everywhere, and a class that always occurs gets 1;
    with one sample the map is the constant label of that sample. For a binary problem fitted
    on one class only, ``predict_proba`` is therefore ``(1, 0)`` or ``(0, 1)`` for every input.
    The map is a step function with as many levels as the pooled blocks of the fit, so that
    small fitting sets give few distinct probabilities; isotonic regression needs more data than
    the scaling methods (hundreds of samples per class, Niculescu-Mizil and Caruana 2005).

    Parameters
    ----------
    input : {"auto", "logits", "proba"}, default="auto"
        What ``X`` holds: logits (turned into probabilities by ``softmax``) or probabilities.
        ``"auto"``: probabilities if every value is in ``[0, 1]`` and (for several columns) every
        row sums to one, logits otherwise; the decision is stored in ``input_``.
    labels : array-like, default=None
        All class labels, one per column of ``X``, when some are absent from the fitting ``y``.
        Default: the labels present in ``y``.
    eps : float, default=1e-12
        Probabilities are clipped to ``[eps, 1]`` when turned into logits by the base class;
        isotonic regression itself uses the probabilities as they are.
    out_of_bounds : {"clip", "raise"}, default="clip"
        Scores outside the range of a class's scores in ``fit``: ``"clip"`` maps them to the
        value at the nearest end (scikit-learn's ``"clip"``); ``"raise"`` raises a
        ``ValueError``. (scikit-learn's ``"nan"`` is not offered: it would return NaN
        probabilities.)

    Attributes
    ----------
    X_thresholds_ : list of ndarray
        Per fitted class (only ``classes_[1]`` for a binary problem): the scores at which the
        map is evaluated, increasing (``IsotonicRegression.X_thresholds_``).
    y_thresholds_ : list of ndarray
        The map's values at ``X_thresholds_``.
    X_min_, X_max_ : ndarray of shape (n_fitted_classes,)
        Range of each fitted class's scores (with positive weight) in ``fit``.
    classes_ : ndarray of shape (n_classes,)
    input_ : str
        ``"logits"`` or ``"proba"``: the kind of ``X`` seen in ``fit``.
    n_features_in_ : int
        Number of score columns (1 for 1-D binary scores).

    See Also
    --------
    HistogramBinning : a fixed step function on bins.
    sklearn.calibration.CalibratedClassifierCV : ``method="isotonic"``.

    References
    ----------
    B. Zadrozny, C. Elkan. Transforming classifier scores into accurate multiclass probability
    estimates. KDD 2002.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.recalibration import IsotonicCalibration
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(1000)
    >>> y = (rng.random(1000) < p ** 2).astype(int)      # the truth is P(y=1) = p**2
    >>> iso = IsotonicCalibration().fit(p, y)
    >>> iso.predict_proba([0.5])[:, 1].round(1)
    array([0.2])
    """

    def __init__(self, input="auto", *, labels=None, eps=1e-12, out_of_bounds="clip"):
        self.input = input
        self.labels = labels
        self.eps = eps
        self.out_of_bounds = out_of_bounds

    def _check_own_params(self):
        check_option(self.out_of_bounds, "out_of_bounds", _OUT_OF_BOUNDS)

    def _fit_scores(self, S, L, y_idx, n_classes, w):
        P = _probabilities(S, self.input_, L)
        self.X_thresholds_, self.y_thresholds_ = [], []
        lo, hi = [], []
        ww = None if w is None else w / w.max()  # only ratios matter
        for k in _one_vs_rest_columns(n_classes):
            iso = IsotonicRegression(out_of_bounds="clip")
            iso.fit(P[:, k], (y_idx == k).astype(np.float64), sample_weight=ww)
            self.X_thresholds_.append(iso.X_thresholds_)
            self.y_thresholds_.append(iso.y_thresholds_)
            lo.append(iso.X_min_)
            hi.append(iso.X_max_)
        self.X_min_ = np.asarray(lo, dtype=np.float64)
        self.X_max_ = np.asarray(hi, dtype=np.float64)

    def _proba(self, S, L):
        P = _probabilities(S, self.input_, L)
        C = self.classes_.size
        cols = []
        for j, k in enumerate(_one_vs_rest_columns(C)):
            x = P[:, k]
            if self.out_of_bounds == "raise" and x.size and (
                    x.min() < self.X_min_[j] or x.max() > self.X_max_[j]):
                raise ValueError(
                    f"X has scores outside the range seen in fit for class "
                    f"{self.classes_[k]!r} ([{self.X_min_[j]!r}, {self.X_max_[j]!r}] as "
                    f"probabilities) and out_of_bounds='raise'.")
            cols.append(np.interp(x, self.X_thresholds_[j], self.y_thresholds_[j]))
        return _assemble(cols, P.shape[0], C)


# ---------------------------------------------------------------------------------------------
# Binning helpers


def _bin_centres(binning, cells):
    """Centre of the interval of each (1-D) bin id of a fitted Uniform/QuantileBinning."""
    cells = np.asarray(cells, dtype=np.int64)
    if isinstance(binning, UniformBinning):
        return (cells + 0.5) / binning.n_bins
    if binning.edges_ is not None:
        e = np.concatenate([[0.0], binning.edges_[0], [1.0]])
        return 0.5 * (e[cells] + e[cells + 1])
    # implicit edges: bin j lies between the j-th and (j+1)-th quantile edge
    s, nb = binning.sorted_[0], binning.n_bins
    left = np.where(cells > 0, quantiles_of_sorted(s, edge_levels(cells, nb)), 0.0)
    right = np.where(cells < nb - 1,
                     quantiles_of_sorted(s, edge_levels(np.minimum(cells + 1, nb - 1), nb)), 1.0)
    return 0.5 * (left + right)


class _BinMap:
    """A step function on the bins of one column: weighted bin means of ``target``.

    Only the occupied bins are stored (``n_bins`` may be huge); a value whose bin was empty in
    ``fit`` (or held only zero-weight samples) gets the centre of its bin.
    """

    def __init__(self, binning):
        self.binning = binning

    def fit(self, q, target, w):
        q = q[:, None]
        self.binning.fit(q)
        cells = self.binning.assign(q)
        occupied, inv = np.unique(cells, return_inverse=True)
        inv = inv.ravel()
        W = np.bincount(inv, weights=w, minlength=occupied.size)
        V = np.bincount(inv, weights=target if w is None else target * w,
                        minlength=occupied.size)
        keep = W > 0
        self.cells_ = occupied[keep]
        self.values_ = V[keep] / W[keep]
        return self

    def cells(self, q):
        return self.binning.assign(np.asarray(q, dtype=np.float64)[:, None])

    def predict(self, q):
        cells = self.cells(q)
        pos = np.searchsorted(self.cells_, cells)
        pos = np.minimum(pos, self.cells_.size - 1)
        found = self.cells_[pos] == cells
        out = self.values_[pos]
        if not found.all():
            out = np.where(found, out, _bin_centres(self.binning, cells))
        return out


def _make_binning(strategy, n_bins):
    return UniformBinning(n_bins) if strategy == "uniform" else QuantileBinning(n_bins)


# ---------------------------------------------------------------------------------------------
# Histogram binning


class HistogramBinning(ClassifierRecalibrator):
    """Histogram binning (Zadrozny and Elkan 2001): the frequency of the class in the score's bin.

    The probability of the positive class (binary problems) or of each class (one-vs-rest for
    several classes) is cut into ``n_bins`` bins; a score is replaced by the (weighted) frequency
    of its class among the fitting samples in its bin. For several classes every row is then
    divided by its sum; a row whose recalibrated probabilities are all 0 becomes uniform.
    Logits are first turned into probabilities (``softmax``).

    The bins are those of :func:`skcalib.calibration_error` (right-closed, ``p = 0`` in the first
    bin; quantile edges deduplicated), and the fitted map is calibrated *on the fitting data* in
    the bins of its input: within each bin, the mean recalibrated probability of a binary
    problem equals the frequency of the positive class.

    **Empty bins.** A bin that holds no fitting sample (or only zero-weight samples) has no
    frequency; a score falling into it at prediction time is mapped to the centre of its bin
    (the middle of its edges, with 0 and 1 as the outer edges): without evidence the score is
    kept, up to half a bin width. Quantile bins hold fitting samples except when edges tie
    between two order statistics.

    **Tiny and one-class fitting sets.** With one fitting sample, its bin gets its label and
    every other bin is empty (the rule above). A class absent from the fitting labels (present
    through ``labels``) gets probability 0 in every occupied bin.

    Parameters
    ----------
    input : {"auto", "logits", "proba"}, default="auto"
        What ``X`` holds: logits (turned into probabilities by ``softmax``) or probabilities.
        ``"auto"``: probabilities if every value is in ``[0, 1]`` and (for several columns) every
        row sums to one, logits otherwise; the decision is stored in ``input_``.
    labels : array-like, default=None
        All class labels, one per column of ``X``, when some are absent from the fitting ``y``.
    eps : float, default=1e-12
        Probabilities are clipped to ``[eps, 1]`` when turned into logits by the base class;
        the binning uses the probabilities as they are.
    n_bins : int, default=15
        Number of bins per class, in ``[1, 2**53]`` (only occupied bins are stored).
    strategy : {"uniform", "quantile"}, default="uniform"
        ``"uniform"``: equal-width bins on ``[0, 1]``; ``"quantile"``: equal-mass bins, edges at
        the quantiles of each class's probabilities in ``fit`` (computed without the weights, as
        :func:`skcalib.calibration_error` does).

    Attributes
    ----------
    bin_maps_ : list
        Per fitted class (only ``classes_[1]`` for a binary problem), the fitted bins with the
        ids ``cells_`` of the occupied bins and their frequencies ``values_``.
    classes_ : ndarray of shape (n_classes,)
    input_ : str
        ``"logits"`` or ``"proba"``: the kind of ``X`` seen in ``fit``.
    n_features_in_ : int
        Number of score columns (1 for 1-D binary scores).

    See Also
    --------
    IsotonicCalibration : a monotone step map with data-chosen steps.
    ScalingBinning : binning of a scaling map's outputs, with fewer samples per bin needed.

    References
    ----------
    B. Zadrozny, C. Elkan. Obtaining calibrated probability estimates from decision trees and
    naive Bayesian classifiers. ICML 2001.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.recalibration import HistogramBinning
    >>> p = np.array([0.1, 0.2, 0.3, 0.6, 0.7, 0.9])
    >>> y = np.array([0, 0, 1, 1, 1, 0])
    >>> hb = HistogramBinning(n_bins=2).fit(p, y)
    >>> hb.predict_proba([0.25, 0.8])[:, 1].round(4)
    array([0.3333, 0.6667])
    """

    def __init__(self, input="auto", *, labels=None, eps=1e-12, n_bins=15, strategy="uniform"):
        self.input = input
        self.labels = labels
        self.eps = eps
        self.n_bins = n_bins
        self.strategy = strategy

    def _check_own_params(self):
        check_n_bins(self.n_bins)
        check_option(self.strategy, "strategy", _BIN_STRATEGIES)

    def _fit_scores(self, S, L, y_idx, n_classes, w):
        P = _probabilities(S, self.input_, L)
        ww = None if w is None else w / w.max()
        nb = check_n_bins(self.n_bins)
        self.bin_maps_ = [
            _BinMap(_make_binning(self.strategy, nb)).fit(
                P[:, k], (y_idx == k).astype(np.float64), ww)
            for k in _one_vs_rest_columns(n_classes)]

    def _proba(self, S, L):
        P = _probabilities(S, self.input_, L)
        cols = [m.predict(P[:, k]) for m, k in
                zip(self.bin_maps_, _one_vs_rest_columns(self.classes_.size))]
        return _assemble(cols, P.shape[0], self.classes_.size)


# ---------------------------------------------------------------------------------------------
# Scaling-binning


class ScalingBinning(ClassifierRecalibrator):
    """The scaling-binning calibrator of Kumar, Liang and Ma (2019), with its debiased error.

    ``fit`` splits the fitting data at random (``random_state``) into two halves:

    1. a scaling map ``g`` (``scaler``; temperature scaling by default) is fitted on the first
       half (``ceil(n / 2)`` samples);
    2. ``g``'s outputs on the second half are cut into ``n_bins`` equal-mass bins (quantile edges,
       deduplicated, as :func:`skcalib.calibration_error` with ``strategy="quantile"``), and
       each output is replaced by the (weighted) mean of ``g``'s outputs in its bin -- the mean
       *scaled* output, not the mean label: the labels of the second half are not used to build
       the map, which keeps the error estimate below honest and needs fewer samples per bin than
       histogram binning.

    What is binned:

    * binary problems: ``g``'s probability of ``classes_[1]``; ``predict_proba`` is ``(1 - h, h)``;
    * ``mode="marginal"`` (several classes): each class's probability separately (Kumar et al.'s
      marginal calibrator), then every row divided by its sum (so that rows are probabilities;
      the sums are close to 1 as the bin means are means of probabilities);
    * ``mode="top_label"``: the confidence ``max_k g_k`` of the scaled arg-max class (ties: the
      first) is replaced by its bin value ``h``; the other classes share the rest, ``1 - h``, in
      proportion to their scaled probabilities -- mixed with equal shares just enough that none
      exceeds ``h`` (a bin value below the confidence could otherwise hand the arg-max to
      another class). The predicted class is then kept (up to a tie at ``h``).

    ``calibration_error_`` is the debiased estimate of the L2 calibration error of the result
    (Kumar et al. 2019, the estimator of ``calibration_error(..., norm="l2", debias=True)``),
    computed on the second half with the calibrator's own bins: ``"binary"`` for two classes,
    ``"classwise"`` (the root of the mean over classes of the squared errors) for
    ``mode="marginal"`` and ``"top_label"`` for ``mode="top_label"``. The second half's labels
    were not used by the map, so that the estimate is not optimistic; it is a lower bound of the
    error of a map that is not constant on its bins. Its signed square (which can be negative)
    is ``squared_calibration_error_``; ``calibration_error_`` is its root, 0 when negative.

    **Tiny and one-class fitting sets.** ``fit`` needs at least 2 samples (one per half); a
    ``ValueError`` says so. The scaler is fitted on the first half with all of ``classes_``
    as ``labels``, so that a class absent from it is allowed (temperature scaling then warns
    about separated data if the scores separate the labels of that half). Bins with a single
    sample of the second half contribute 0 to the debiased estimate.

    Parameters
    ----------
    input : {"auto", "logits", "proba"}, default="auto"
        What ``X`` holds (see :class:`TemperatureScaling`); passed to the scaler.
    labels : array-like, default=None
        All class labels, one per column of ``X``, when some are absent from the fitting ``y``.
    eps : float, default=1e-12
        Probabilities are clipped to ``[eps, 1]`` before taking logarithms.
    n_bins : int, default=15
        Number of equal-mass bins per binned quantity, in ``[1, 2**53]``.
    mode : {"marginal", "top_label"}, default="marginal"
        What is binned for more than two classes (see above); ignored for binary problems.
    scaler : ClassifierRecalibrator, default=None
        The scaling map (cloned), a recalibrator with ``input`` and ``labels`` parameters
        (e.g. Platt scaling). Default: :class:`TemperatureScaling`.
    random_state : int, RandomState instance, Generator or None, default=None
        Seed of the random split into halves.

    Attributes
    ----------
    scaler_ : ClassifierRecalibrator
        The scaler fitted on the first half.
    bin_maps_ : list
        The bins of the second half (one per class for ``"marginal"``, one otherwise) with the
        ids ``cells_`` of the occupied bins and their mean scaled outputs ``values_``.
    calibration_error_ : float
        Debiased L2 calibration error estimate of the recalibrated probabilities on the second
        half (0 when the signed estimate is negative).
    squared_calibration_error_ : float
        The signed debiased estimate of the squared error.
    split_ : tuple of two ndarrays
        Indices of the fitting samples of the scaling half and of the binning half.
    classes_ : ndarray of shape (n_classes,)
    input_ : str
        ``"logits"`` or ``"proba"``: the kind of ``X`` seen in ``fit``.
    n_features_in_ : int
        Number of score columns (1 for 1-D binary scores).

    See Also
    --------
    HistogramBinning : bins of the scores with their label frequencies.
    TemperatureScaling : the default scaler.

    References
    ----------
    A. Kumar, P. Liang, T. Ma. Verified uncertainty calibration. NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.recalibration import ScalingBinning
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=4000) * 3
    >>> y = (rng.random(4000) < 1 / (1 + np.exp(-z / 3))).astype(int)   # overconfident logits
    >>> sb = ScalingBinning(n_bins=10, random_state=0).fit(z, y)
    >>> np.unique(sb.predict_proba(z)[:, 1]).size
    10
    >>> bool(sb.calibration_error_ < 0.05)
    True
    """

    def __init__(self, input="auto", *, labels=None, eps=1e-12, n_bins=15, mode="marginal",
                 scaler=None, random_state=None):
        self.input = input
        self.labels = labels
        self.eps = eps
        self.n_bins = n_bins
        self.mode = mode
        self.scaler = scaler
        self.random_state = random_state

    def _check_own_params(self):
        check_n_bins(self.n_bins)
        check_option(self.mode, "mode", _SB_MODES)
        check_random_state_param(self.random_state)
        if self.scaler is not None and not isinstance(self.scaler, ClassifierRecalibrator):
            raise TypeError(f"scaler must be None or a skcalib classifier recalibrator; got "
                            f"{self.scaler!r} of type {type(self.scaler).__name__}.")

    def _make_scaler(self):
        if self.scaler is None:
            return TemperatureScaling()
        return clone(self.scaler)

    def fit(self, X, y, sample_weight=None):
        """Fit the scaler on one half and the bins on the other.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Logits or probabilities of a fitted classifier (see ``input``).
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the scaler's objective (first half), of the bin means and of the error
            estimate (second half, where they count as frequencies as in
            ``calibration_error(debias=True)``). Bin edges are computed without weights, and
            the random split acts on rows, so that integer weights are not the same as
            repeated rows.

        Returns
        -------
        self : ScalingBinning
        """
        S, kind, L, classes, y_idx, w = self._validate_fit(X, y, sample_weight)
        n = S.shape[0]
        if n < 2:
            raise ValueError(f"ScalingBinning needs at least 2 samples in X (one for the scaler's "
                             f"half and one for the binning half); got {n}.")
        self._set_fitted(S, kind, classes)
        perm = check_rng(self.random_state).permutation(n)
        half = (n + 1) // 2
        a, b = np.sort(perm[:half]), np.sort(perm[half:])
        self.split_ = (a, b)
        scaler = self._make_scaler()
        params = scaler.get_params()
        scaler.set_params(**{k: v for k, v in (("input", kind), ("labels", classes))
                             if k in params})
        scaler.fit(S[a], classes[y_idx[a]], sample_weight=None if w is None else w[a])
        self.scaler_ = scaler
        G = scaler.predict_proba(S[b])
        wb = None if w is None else w[b]
        if wb is not None and not wb.max() > 0:
            raise ValueError("sample_weight is zero on every sample of the binning half of "
                             "ScalingBinning (see split_); give positive weight to more samples.")
        wr = None if wb is None else wb / wb.max()
        nb = check_n_bins(self.n_bins)
        C = classes.size
        Q = self._binned_columns(G)
        self.bin_maps_ = [_BinMap(QuantileBinning(nb)).fit(q, q, wr) for q in Q.T]
        H = self._map(G)
        # the debiased L2 error of the result on the binning half, in the calibrator's own bins
        yb = y_idx[b]
        if C == 2:
            problems = [(H[:, 1:2], (yb == 1).astype(np.float64)[:, None])]
        elif self.mode == "marginal":
            problems = [(H[:, k:k + 1], (yb == k).astype(np.float64)[:, None])
                        for k in range(C)]
        else:
            top = G.argmax(axis=1)
            problems = [(H[np.arange(b.size), top][:, None],
                         (yb == top).astype(np.float64)[:, None])]
        values = []
        for (Hq, T), m, q in zip(problems, self.bin_maps_, Q.T):
            v, _ = problem_error(Hq, T, m.cells(q), "l2", True, wb, shares=False)
            values.append(v)
        sq, _ = combine(values, [None] * len(values), "l2")
        self.squared_calibration_error_ = float(sq)
        self.calibration_error_ = float(np.sqrt(max(sq, 0.0)))
        return self

    # -- the map ---------------------------------------------------------------------------

    def _binned_columns(self, G):
        """``(n, m)`` quantities that are binned: P(classes_[1]), every class, or the confidence."""
        C = G.shape[1]
        if C == 2:
            return G[:, 1:2]
        if self.mode == "marginal":
            return G
        return G.max(axis=1)[:, None]

    def _map(self, G):
        """Recalibrated probabilities of scaled probabilities ``G``."""
        n, C = G.shape
        if C == 2:
            return _assemble([self.bin_maps_[0].predict(G[:, 1])], n, C)
        if self.mode == "marginal":
            return _assemble([m.predict(G[:, k]) for k, m in enumerate(self.bin_maps_)], n, C)
        rows = np.arange(n)
        top = G.argmax(axis=1)
        h = self.bin_maps_[0].predict(G[rows, top])
        # the other classes share 1 - h in proportion to g, mixed with equal shares just enough
        # that none of them exceeds h (equal shares (1 - h) / (C - 1) never do: h >= 1 / C, as
        # a bin mean of confidences)
        rest = G.copy()
        rest[rows, top] = 0.0
        mass = rest.sum(axis=1)
        u = (1.0 - h) / (C - 1)
        prop = np.divide(rest, mass[:, None], out=np.zeros_like(rest), where=mass[:, None] > 0)
        prop *= (1.0 - h)[:, None]
        prop[mass <= 0] = u[mass <= 0, None]
        prop[rows, top] = 0.0
        m = prop.max(axis=1)
        over = m > h
        lam = np.ones(n)
        lam[over] = (h[over] - u[over]) / (m[over] - u[over])
        H = lam[:, None] * prop + ((1.0 - lam) * u)[:, None]
        np.minimum(H, h[:, None], out=H)  # rounding of the mix: at most h, exactly
        H[rows, top] = h
        return H

    def _proba(self, S, L):
        check_is_fitted(self)
        return self._map(self.scaler_.predict_proba(S))
