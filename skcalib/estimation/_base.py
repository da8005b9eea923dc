"""Calibration estimation functions (Gruber & Bach): the shared estimator class and the risk.

A *calibration estimation function* ``h(p, p')`` estimates the bilinear target
``h*(p, p') = <p - pi(p), p' - pi(p')>`` with ``pi(p) = P(Y | f(X) = p)``. For two independent
samples the *pair target* ``T_ij = <p_i - e_{y_i}, p_j - e_{y_j}>`` has conditional mean
``h*(p_i, p_j)``, so ``h`` is fitted and judged like any regression function:

* the squared calibration error is the mean of ``h(p, p)`` (on data not used to fit ``h``);
* the *calibration estimation risk* ``R(h) = E[(T - h(P, P'))^2]`` over independent pairs is
  minimised by ``h*`` and estimated without bias by the U-statistic over pairs ``i != j`` of
  held-out data (Gruber & Bach, Eq. 20).

Notions (``mode``) follow :func:`skcalib.calibration_error`: each turns ``(P, y)`` into one or
more *problems* ``(Q, T)`` -- inputs ``Q`` (the confidence for ``top_label``, ``P(pos)`` for
``binary``, one column per class for ``classwise``, the whole vector for ``canonical``) and
targets ``T`` (the matching indicators or one-hot labels). A problem's residuals are
``R = Q - T``. The class-wise error and risk are **sums** over the per-class problems; each class
has its own estimation function and its own pair targets (the summed target would be the
canonical one). The scalar problems use the scalar convention ``(c - a)(c' - a')``: embedding a
scalar problem as 2-vectors ``(c, 1 - c)`` would double the targets, the risk and the estimate.
"""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._sklearn_compat import ScoreRequestMixin
from .._validation import (check_labels_and_probabilities, check_numeric, check_option,
                           check_probabilities, check_sample_weight)
from .._problems.modes import make_problems, resolve_mode

MODES = ("auto", "binary", "top_label", "classwise", "canonical")

#: The estimates of the squared error an estimation function gives on held-out data: the plug-in
#: mean of ``h(p, p)`` and the two debiased ones that also read the labels (docs/estimation.rst).
ESTIMATES = ("plugin", "one_step", "product")


def terms_of(parts, estimate):
    """The per-sample terms of ``estimate`` from ``(plugin, gR, sq)``: ``h(p, p)``,
    ``2 g_hat . r - sq`` or ``g_hat . r`` (``plugin`` may be None for the debiased ones)."""
    plugin, gR, sq = parts
    if estimate == "plugin":
        return plugin
    return gR if estimate == "product" else 2.0 * gR - sq

#: Rows per tile of the chunked risk: tiles of ``_RISK_TILE`` x n_samples pair entries.
_RISK_TILE = 256


class _Data:
    """Probabilities with (optionally) labels, in the form ``make_problems`` expects."""

    __slots__ = ("probs", "y", "classes", "n_samples")

    def __init__(self, probs, y, classes):
        self.probs, self.y, self.classes = probs, y, classes
        self.n_samples = probs.shape[0]


def problems_of(P, y_idx, classes, mode, pos_label=None):
    """``[(Q, R)]``: inputs and residuals ``Q - T`` of every problem (``R`` is None without labels).

    ``y_idx`` are column indices of the labels, or None (inputs only).
    """
    dummy = np.zeros(P.shape[0], dtype=np.intp) if y_idx is None else y_idx
    out = []
    for Q, T in make_problems(_Data(P, dummy, classes), mode, pos_label):
        out.append((np.ascontiguousarray(Q), None if y_idx is None else Q - T))
    return out


class CalibrationEstimatorMixin:
    """Interface of calibration estimation functions; subclasses define the per-problem parts.

    Subclasses set ``self.problems_`` in ``_fit_problems(problems)`` (one fitted state per
    problem) and implement ``_pairwise_problem(k, Q1, Q2)`` (the ``n1 x n2`` matrix of ``h`` for
    problem ``k``; ``Q2`` may be ``Q1``) and ``_diag_problem(k, Q)``. Plug-in estimators
    ``h(p, p') = <r(p), r(p')>`` only implement ``_residual_problem(k, Q)`` (the estimated
    residual ``r(p) = p - pi(p)``, an ``(n, m)`` array). The hooks receive what
    ``_problem_inputs(P)`` returns for each problem -- the inputs ``Q`` by default; kernel ridge
    passes projected kernel vectors, temperature scaling its residuals -- sliced by rows.
    """

    _min_fit_samples = 1

    def _plugin_residuals(self, k, inputs):
        """``r(p)`` of a plug-in estimator on these inputs, else None (the risk then uses tiles)."""
        if type(self)._pairwise_problem is not CalibrationEstimatorMixin._pairwise_problem:
            return None
        return self._residual_problem(k, inputs)

    def _pairwise_problem(self, k, Q1, Q2):
        R1 = self._residual_problem(k, Q1)
        R2 = R1 if Q2 is Q1 else self._residual_problem(k, Q2)
        return R1 @ R2.T

    def _diag_problem(self, k, Q):
        R = self._residual_problem(k, Q)
        return np.einsum("ij,ij->i", R, R)

    def _residual_terms(self, k, inputs):
        """``(G, sq)``: the estimated residual ``g_hat`` at these inputs and its square.

        ``G`` (``(n, m)``) is the family's estimate of ``g(q) = q - pi(q)``, the residual the
        debiased estimates correct with the labels; ``sq`` (``(n,)``) is the square of ``g_hat``
        with the pairs of a training sample with itself left out (a U-statistic: free of the
        variance of ``g_hat``). Families whose ``g_hat`` carries no training noise of that kind
        (temperature scaling, zero) keep ``sq = ||G||^2``, the default.
        """
        G = self._residual_problem(k, inputs)
        return G, np.einsum("ij,ij->i", G, G)

    def _residual_estimate(self, k, inputs):
        """``g_hat`` alone (``(n, m)``), for the regression risk that selects the candidate of
        the debiased estimates; families with a cheaper path than :meth:`_residual_terms`
        override it."""
        return self._residual_terms(k, inputs)[0]

    def _estimate_parts(self, P, y_idx, inputs=None):
        """``(gR, sq)``: per sample ``g_hat(q) . r`` and the square ``sq``, summed over problems."""
        if inputs is None:
            inputs = self._problem_inputs(P)
        gR = np.zeros(P.shape[0])
        sq = np.zeros(P.shape[0])
        for k, (_, R) in enumerate(problems_of(P, y_idx, self.classes_, self.mode_)):
            G, s = self._residual_terms(k, inputs[k])
            gR += np.einsum("ij,ij->i", G, R)
            sq += s
        return gR, sq


class _CalibrationEstimatorBase(CalibrationEstimatorMixin, TransformerMixin, BaseEstimator):
    """``fit(P, y)``, ``pairwise``, ``transform`` (diagonal), ``calibration_error``, ``score``."""

    def _check_params(self):
        check_option(self.mode, "mode", MODES)

    def fit(self, X, y):
        """Fit the estimation function on predicted probabilities ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities (one column per class of ``y``, sorted; or P(positive class)
            for a binary problem).
        y : array-like of shape (n_samples,)
            True labels.

        Returns
        -------
        self
        """
        self._check_params()
        data = check_labels_and_probabilities(y, X, labels=self.labels, prob_name="X",
                                              label_name="y", min_samples=self._min_fit_samples)
        mode = resolve_mode(self.mode, data.n_classes)
        self.classes_ = data.classes
        self.mode_ = mode
        self.n_features_in_ = 1 if np.ndim(X) == 1 or np.shape(X)[1] == 1 else data.n_classes
        self.n_train_ = data.n_samples
        try:
            self._fit(data.probs, data.y, problems_of(data.probs, data.y, data.classes, mode))
        except BaseException:
            # a failed (re)fit leaves the estimator unfitted, never half-fitted
            for attr in ("classes_", "mode_", "n_features_in_", "n_train_", "problems_"):
                self.__dict__.pop(attr, None)
            raise
        return self

    def _fit(self, P, y_idx, problems):
        self._fit_problems(problems)

    def _inputs(self, X, name="X"):
        check_is_fitted(self)
        self._check_params()  # set_params after fit: checked at every call, as in fit
        P = check_probabilities(X, self.classes_.size, name=name)
        return P, self._problem_inputs(P)

    def _problem_inputs(self, P):
        """Per-problem inputs handed to the ``_*_problem`` hooks (default: the ``Q`` arrays)."""
        return [Q for Q, _ in problems_of(P, None, self.classes_, self.mode_)]

    def pairwise(self, X, X2=None):
        """``h(p_i, p'_j)`` for the rows of ``X`` and ``X2`` (default ``X``), summed over problems.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities (rows of the result).
        X2 : array-like of shape (n_samples2, n_classes) or (n_samples2,), default=None
            Predicted probabilities (columns of the result); ``None`` means ``X``.

        Returns
        -------
        ndarray of shape (n_samples, n_samples2)
        """
        _, Q1 = self._inputs(X)
        Q2 = Q1 if X2 is None else self._inputs(X2, "X2")[1]
        return sum(self._pairwise_problem(k, Q1[k], Q2[k]) for k in range(len(Q1)))

    def transform(self, X):
        """Each sample's ``h(p_i, p_i)`` (summed over problems), as an ``(n_samples, 1)`` array.

        Its mean is :meth:`calibration_error`. It can be negative for estimation functions that
        are not of plug-in form (kernel ridge ``method="kronecker"``, debiased binning). With
        ``set_output(transform="pandas")`` it is a one-column DataFrame (column
        :meth:`get_feature_names_out`).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities.

        Returns
        -------
        ndarray of shape (n_samples, 1)
        """
        return self._diagonal(X)[:, None]

    def _diagonal(self, X):
        """``h(p_i, p_i)`` as a 1-D array (not wrapped by ``set_output``)."""
        _, Q = self._inputs(X)
        return sum(self._diag_problem(k, Q[k]) for k in range(len(Q)))

    def calibration_error(self, X, sample_weight=None, *, y=None, estimate="plugin"):
        """The estimate of the **squared** calibration error on held-out data.

        ``estimate="plugin"`` is the mean of ``h(p_i, p_i)`` (no labels needed). The debiased
        estimates also read the labels ``y`` of the held-out samples: ``"one_step"`` the mean of
        ``2 g_hat(q_i) . r_i - sq_i`` (bias of second order: minus the squared smoothing bias
        of ``g_hat``) and ``"product"`` the mean of ``g_hat(q_i) . r_i`` (bias of first order in
        the smoothing bias, none from the variance of ``g_hat``); see :meth:`_residual_terms`
        and the user guide (docs/estimation.rst, "Debiased estimates"). Every estimate can be
        negative; it is never square-rooted or clipped here.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities (data not used to fit the estimator).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: the weighted mean of the per-sample terms.
        y : array-like of shape (n_samples,), default=None
            Labels of ``X``; required by the debiased estimates.
        estimate : {"plugin", "one_step", "product"}, default="plugin"

        Returns
        -------
        float

        Examples
        --------
        >>> from skcalib.datasets import make_binary_squared_calibration
        >>> from skcalib.estimation import KDECalibrationEstimator
        >>> c, y = make_binary_squared_calibration(4000, random_state=0)   # truth 1/30 = 0.0333
        >>> est = KDECalibrationEstimator(bandwidth=0.05, mode="binary").fit(c[:2000], y[:2000])
        >>> round(est.calibration_error(c[2000:], y=y[2000:], estimate="one_step"), 3)
        0.034
        """
        t = self.calibration_error_terms(X, y, estimate=estimate)
        w = check_sample_weight(sample_weight, t.shape[0], rescale=True)
        return float(t.mean() if w is None else (w @ t) / w.sum())

    def calibration_error_terms(self, X, y=None, *, estimate="plugin"):
        """Per-sample terms whose mean is :meth:`calibration_error` (for standard errors).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities (data not used to fit the estimator).
        y : array-like of shape (n_samples,), default=None
            Labels of ``X``; required by the debiased estimates.
        estimate : {"plugin", "one_step", "product"}, default="plugin"
            ``"plugin"``: ``h(p_i, p_i)``; ``"product"``: ``g_hat(q_i) . r_i``;
            ``"one_step"``: ``2 g_hat(q_i) . r_i - sq_i`` (the estimated influence values, up to
            the estimate: their standard deviation over ``sqrt(n)`` is the standard error of
            both debiased estimates).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_option(estimate, "estimate", ESTIMATES)
        if estimate == "plugin":
            return self._diagonal(X)
        return terms_of((None, *self._labelled_parts(X, y, estimate)), estimate)

    def _labelled_parts(self, X, y, estimate):
        check_is_fitted(self)
        self._check_params()
        if y is None:
            raise ValueError(f"estimate={estimate!r} reads the labels of the held-out samples: "
                             f"pass y=.")
        data = check_labels_and_probabilities(y, X, labels=self.classes_, prob_name="X",
                                              label_name="y")
        return self._estimate_parts(data.probs, data.y)

    def score(self, X, y, sample_weight=None):
        """Negated calibration estimation risk on ``(X, y)`` (greater is better).

        Use held-out data: on the fitting data the risk is optimistic.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Pair weights ``w_i w_j`` of the weighted U-statistic (see
            :func:`calibration_risk`).

        Returns
        -------
        float
        """
        return -_risk(y, X, self, sample_weight=sample_weight, prob_name="X", label_name="y")

    def get_feature_names_out(self, input_features=None):
        """Name of the single output column of :meth:`transform`.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Ignored apart from its length (the output is one new feature, ``h(p, p)``).

        Returns
        -------
        ndarray of str objects of shape (1,)
            ``["<lower-case class name>0"]``, scikit-learn's convention for new features
            (``pca0``, ...).
        """
        check_is_fitted(self)
        if input_features is not None and len(input_features) != self.n_features_in_:
            raise ValueError(f"input_features has {len(input_features)} names but the estimator "
                             f"was fitted on {self.n_features_in_} columns.")
        return np.asarray([f"{type(self).__name__.lower()}0"], dtype=object)


def _check_h_type(h):
    """``TypeError`` naming ``h`` unless it is an estimation function or a numeric array-like."""
    if isinstance(h, CalibrationEstimatorMixin):
        return h
    bad = h is None or isinstance(h, (str, bytes, dict, set, frozenset)) or hasattr(h, "fit")
    if not bad:
        check_numeric(h, "h", what="a matrix of h values")
        try:
            h = np.asarray(h, dtype=np.float64)
        except (TypeError, ValueError):
            bad = True
    if bad:
        raise TypeError(f"h must be a fitted calibration estimation function of "
                        f"skcalib.estimation or an array of h values (a matrix of shape "
                        f"(n_samples, n_samples)); got {type(h).__name__}.")
    return h


def _check_h_matrix(H, n_problems, n, mode):
    if n_problems == 1 and H.shape == (n, n):
        H = H[None]
    if H.shape != (n_problems, n, n):
        want = f"({n}, {n})" if n_problems == 1 else f"({n_problems}, {n}, {n}) (one per class)"
        raise ValueError(f"the h matrix for mode={mode!r} must have shape {want}; got {H.shape}.")
    if not np.all(np.isfinite(H)):
        raise ValueError("the h matrix must be finite.")
    return H


def calibration_risk(y_true, y_proba, h, *, mode=None, labels=None, pos_label=None,
                     sample_weight=None):
    """Calibration estimation risk of ``h`` on ``(y_true, y_proba)`` (Gruber & Bach, Eq. 20).

    The unbiased U-statistic over pairs ``i != j``::

        R = 1 / (n (n - 1)) * sum_{i != j} (<r_i, r_j> - h(p_i, p_j))**2,   r_i = p_i - e_{y_i}

    with the residuals and inputs of the notion ``mode``; for ``"classwise"`` the sum over the
    per-class risks. It estimates ``E[(T - h(P, P'))^2]`` for independent pairs, which ``h*`` (the
    true calibration function) minimises: use it on data that did **not** fit ``h``. Pairs with
    ``i = j`` are excluded (their targets are biased).

    With ``sample_weight`` the pairs are weighted by the product of their weights::

        R_w = sum_{i != j} w_i w_j (<r_i, r_j> - h(p_i, p_j))**2 / sum_{i != j} w_i w_j

    (a weighted U-statistic over the same pairs ``i != j``; integer weights are *not* the same as
    repeated rows, whose copies would form pairs with each other). Only the ratios of the
    weights matter.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities.
    h : fitted calibration estimator or array-like
        An estimator of :mod:`skcalib.estimation` (its ``mode`` is used; the matrix is computed in
        tiles, never ``n x n`` at once), or the matrix ``H[i, j] = h(p_i, p_j)`` of shape
        ``(n, n)``; ``(n_classes, n, n)`` for ``mode="classwise"``.
    mode : {"auto", "binary", "top_label", "classwise", "canonical"}, default=None
        The notion; default the estimator's, or ``"auto"`` for a matrix (``"binary"`` for two
        classes, else ``"top_label"``).
    labels : array-like, default=None
        All class labels (default: the estimator's ``classes_``, or those in ``y_true``).
    pos_label : label, default=None
        Positive class of ``mode="binary"``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights; at least two samples need a positive weight.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.estimation import calibration_risk
    >>> y = np.array([0, 1, 1, 0])
    >>> p = np.array([0.2, 0.7, 0.6, 0.4])
    >>> r = p - y
    >>> round(calibration_risk(y, p, np.zeros((4, 4)), mode="binary"), 6)  # h = 0
    0.0118
    >>> calibration_risk(y, p, np.outer(r, r), mode="binary")  # h = the pair targets
    0.0
    """
    return _risk(y_true, y_proba, h, mode=mode, labels=labels, pos_label=pos_label,
                 sample_weight=sample_weight)


def _risk(y_true, y_proba, h, *, mode=None, labels=None, pos_label=None, sample_weight=None,
          prob_name="y_proba", label_name="y_true"):
    """:func:`calibration_risk` with the argument names of the caller in its messages."""
    h = _check_h_type(h)
    is_estimator = isinstance(h, CalibrationEstimatorMixin)
    if mode is not None:
        check_option(mode, "mode", MODES)
    if is_estimator:
        check_is_fitted(h)
        if hasattr(h, "_check_params"):
            h._check_params()
        if mode is not None and resolve_mode(mode, h.classes_.size) != h.mode_:
            raise ValueError(f"mode={mode!r} differs from the estimator's mode {h.mode_!r}.")
        if labels is None:
            labels = h.classes_
    data = check_labels_and_probabilities(y_true, y_proba, labels=labels, pos_label=pos_label,
                                          min_samples=2, prob_name=prob_name,
                                          label_name=label_name)
    n = data.n_samples
    w = check_sample_weight(sample_weight, n, rescale=True)
    if w is None:
        denom = n * (n - 1.0)
    else:
        denom = float(w.sum() ** 2 - w @ w)
        if np.count_nonzero(w) < 2 or not denom > 0:
            raise ValueError("sample_weight must be positive for at least 2 samples (the risk "
                             "is a mean over pairs of distinct samples).")
    if is_estimator:
        if not np.array_equal(data.classes, h.classes_):
            raise ValueError(f"the labels {data.classes.tolist()} differ from the estimator's "
                             f"classes_ {h.classes_.tolist()}.")
        mode = h.mode_
    else:
        mode = resolve_mode("auto" if mode is None else mode, data.n_classes)
    problems = problems_of(data.probs, data.y, data.classes, mode, pos_label)
    residuals = [R for _, R in problems]
    if is_estimator:
        inputs = h._problem_inputs(data.probs)
        total = sum(_risk_sum(R, lambda a, b, k=k, I=inputs[k]: h._pairwise_problem(k, I[a:b], I),
                              plugin=h._plugin_residuals(k, inputs[k]), w=w)
                    for k, R in enumerate(residuals))
    else:
        H = _check_h_matrix(h, len(problems), n, mode)
        total = sum(_risk_sum(R, lambda a, b, k=k: H[k, a:b], w=w)
                    for k, R in enumerate(residuals))
    return total / denom


def _risk_sum(R, h_rows, plugin=None, w=None):
    """``sum_{i != j} w_i w_j (<R_i, R_j> - H_ij)^2`` of one problem (``w = None``: all 1).

    For a plug-in ``H = Rh Rh^T`` (``plugin = Rh``) in O(n m^2): the sum over all pairs is
    ``||R^T W R||^2 - 2 ||R^T W Rh||^2 + ||Rh^T W Rh||^2`` (Frobenius norms of m x m matrices,
    ``W = diag(w)``), minus the diagonal terms ``w_i^2 (|R_i|^2 - |Rh_i|^2)^2``. Otherwise in row
    tiles of ``H`` (``h_rows(a, b)`` gives rows ``a:b``), never ``n x n`` at once.
    """
    if plugin is not None:
        WR = R if w is None else R * w[:, None]
        WP = plugin if w is None else plugin * w[:, None]
        full = (np.square(R.T @ WR).sum() - 2.0 * np.square(R.T @ WP).sum()
                + np.square(plugin.T @ WP).sum())
        diag = np.einsum("ij,ij->i", R, R) - np.einsum("ij,ij->i", plugin, plugin)
        if w is not None:
            diag = diag * w
        return float(full - diag @ diag)
    n = R.shape[0]
    total = 0.0
    for lo in range(0, n, _RISK_TILE):
        hi = min(n, lo + _RISK_TILE)
        D = R[lo:hi] @ R.T
        D -= h_rows(lo, hi)
        D *= D
        rows = np.arange(hi - lo)
        D[rows, lo + rows] = 0.0
        if w is not None:
            D *= w[lo:hi, None]
            D *= w[None, :]
        total += float(D.sum())
    return total


class _RiskScorer(ScoreRequestMixin):
    """``scorer(estimator, X, y) = -calibration_risk(y, X, estimator)`` (greater is better);
    ``set_score_request(sample_weight=True)`` routes ``sample_weight`` to it."""

    def __call__(self, estimator, X, y_true, sample_weight=None):
        steps = getattr(estimator, "steps", None)
        if steps is not None and isinstance(steps[-1][1], CalibrationEstimatorMixin):
            # a Pipeline ending in an estimation function: score the final step on the
            # transformed X (e.g. a one-step pipeline whose step is a searched parameter)
            for _, step in steps[:-1]:
                if step is not None and step != "passthrough":
                    X = step.transform(X)
            estimator = steps[-1][1]
        if not isinstance(estimator, CalibrationEstimatorMixin):
            raise TypeError(f"neg_calibration_risk scores calibration estimation functions of "
                            f"skcalib.estimation; got {type(estimator).__name__}.")
        return -_risk(y_true, X, estimator, sample_weight=sample_weight, prob_name="X",
                      label_name="y")

    def __repr__(self):
        return "get_scorer('neg_calibration_risk')"


#: The scorer behind ``get_scorer("neg_calibration_risk")``.
RISK_SCORER = _RiskScorer()

__all__ = ["calibration_risk", "MODES", "RISK_SCORER"]

