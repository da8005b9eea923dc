"""Inductive Venn--Abers predictors (Vovk and Petej 2014; Vovk, Petej and Fedorova 2015)."""

import numpy as np
from scipy.special import softmax
from sklearn.utils.validation import check_is_fitted

from .._validation import check_option
from ._base import ClassifierRecalibrator

__all__ = ["VennAbers", "venn_abers_tables"]

_MULTICLASS = ("ovr", "ovo")


def _chain_hull(xs, ys, order):
    """Lower convex hull pointers of the points visited in ``order`` (monotone chain).

    ``out[i]``: the hull vertex visited just before ``i`` on the lower hull of the points visited
    up to ``i`` (-1: none). Collinear middle points are dropped. One pass, O(k) amortised.
    """
    k = len(xs)
    out = [-1] * k
    st, sx, sy = [0] * k, [0.0] * k, [0.0] * k      # the stack: indices and coordinates
    top = -1
    for i in order:
        xi, yi = xs[i], ys[i]
        while top >= 1:
            ox, oy = sx[top - 1], sy[top - 1]
            # pop while (o, top, i) is not a strict turn towards the hull's inside
            if (sx[top] - ox) * (yi - oy) <= (sy[top] - oy) * (xi - ox):
                top -= 1
            else:
                break
        if top >= 0:
            out[i] = st[top]
        top += 1
        st[top], sx[top], sy[top] = i, xi, yi
    return np.asarray(out, dtype=np.intp)


def _prefix_hull(X, Y):
    """``prv[i]``: the vertex before ``i`` on the lower convex hull of points ``0..i`` (-1: none).

    The points have strictly increasing ``X``.
    """
    return _chain_hull(X.tolist(), Y.tolist(), range(X.size))


def _suffix_hull(X, Y):
    """``nxt[i]``: the vertex after ``i`` on the lower convex hull of points ``i..k`` (-1: none).

    Walking from the right, the lower hull turns clockwise: negate ``x`` to reuse the chain.
    """
    return _chain_hull((-X).tolist(), Y.tolist(), range(X.size - 1, -1, -1))


def _bridge_values(X, Y, prv, nxt, A, B, label, w):
    """Isotonic value at a test point of weight ``w`` and label ``label`` for each query ``(A, B)``.

    The cumulative sum diagram of the calibration groups is ``P_j = (X[j], Y[j])`` (``P_0`` the
    origin). A test point after the first ``A`` groups and before group ``B + 1`` (``A = B``: in
    the gap after group ``A``; ``A = B - 1``: tied with group ``B``) has the isotonic value
    ``max_{a <= A} min_{b >= B} (Y[b] - Y[a] + label w) / (X[b] - X[a] + w)``: the slope of the
    lower common tangent (bridge) of the hull of the shifted left points
    ``Q_a = P_a - (w, label w)`` and the hull of the right points ``P_b``. The bridge is found by
    the classical merge walk (the left vertex moves left, the right one right, while the line
    is not a tangent), run for all queries at once.
    """
    a = A.copy()
    b = B.copy()
    shift_y = label * w
    active = np.arange(a.size)
    while active.size:
        ai, bi = a[active], b[active]
        qx, qy = X[ai] - w, Y[ai] - shift_y
        moved = np.zeros(active.size, dtype=bool)
        # the right vertex: advance while the next one is on or below the line Q_a -> P_b
        nb = nxt[bi]
        ok = nb >= 0
        nbs = np.where(ok, nb, bi)
        cross = (X[bi] - qx) * (Y[nbs] - qy) - (Y[bi] - qy) * (X[nbs] - qx)
        step = ok & (cross <= 0)
        bi = np.where(step, nbs, bi)
        moved |= step
        # the left vertex: move back while the previous one is on or below the line Q_a -> P_b
        pa = prv[ai]
        ok = pa >= 0
        pas = np.where(ok, pa, ai)
        px, py = X[pas] - w, Y[pas] - shift_y
        cross = (X[bi] - qx) * (py - qy) - (Y[bi] - qy) * (px - qx)
        step = ok & (cross <= 0)
        ai = np.where(step, pas, ai)
        moved |= step
        a[active], b[active] = ai, bi
        active = active[moved]
    return (Y[b] - Y[a] + shift_y) / (X[b] - X[a] + w)


def venn_abers_tables(scores, y, sample_weight=None):
    """The Venn--Abers probabilities ``(p0, p1)`` at every position of a new score.

    Parameters
    ----------
    scores : ndarray of shape (n_samples,)
        Calibration scores (any real values; only their order matters).
    y : ndarray of shape (n_samples,)
        Binary labels (0 or 1).
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights of the calibration points; the test point has weight 1 in the same
        units (integer weights count as repetitions).

    Returns
    -------
    thresholds : ndarray of shape (k,)
        The distinct calibration scores of positive weight, sorted.
    gap : ndarray of shape (k + 1, 2)
        ``(p0, p1)`` of a test score strictly between ``thresholds[j - 1]`` and
        ``thresholds[j]`` (row ``j``; row 0 below all, row ``k`` above all).
    tie : ndarray of shape (k, 2)
        ``(p0, p1)`` of a test score equal to ``thresholds[j]``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.recalibration._venn_abers import venn_abers_tables
    >>> t, gap, tie = venn_abers_tables(np.array([0.1, 0.4, 0.7]), np.array([0, 1, 1]))
    >>> gap.tolist()
    [[0.0, 0.5], [0.0, 1.0], [0.5, 1.0], [0.6666666666666666, 1.0]]
    """
    scores = np.asarray(scores, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if sample_weight is None:
        w = np.ones(scores.size)
        w_test = 1.0
    else:
        w = np.asarray(sample_weight, dtype=np.float64)
        top = float(w.max()) if w.size else 0.0
        top = top if top > 0 else 1.0
        w = w / top                      # no overflow for huge weights; only ratios matter
        w_test = 1.0 / top
        keep = w > 0
        scores, y, w = scores[keep], y[keep], w[keep]
    thresholds, inverse = np.unique(scores, return_inverse=True)
    k = thresholds.size
    W = np.bincount(inverse, weights=w, minlength=k)
    Wy = np.bincount(inverse, weights=w * y, minlength=k)
    X = np.concatenate([[0.0], np.cumsum(W)])
    Y = np.concatenate([[0.0], np.cumsum(Wy)])
    prv, nxt = _prefix_hull(X, Y), _suffix_hull(X, Y)
    j = np.arange(k + 1)
    m = np.arange(1, k + 1)
    gap = np.column_stack([_bridge_values(X, Y, prv, nxt, j, j, lab, w_test) for lab in (0, 1)])
    tie = np.column_stack([_bridge_values(X, Y, prv, nxt, m - 1, m, lab, w_test)
                           for lab in (0, 1)])
    # the exact values lie in [0, 1]; rounding must not push them out
    return thresholds, np.clip(gap, 0.0, 1.0), np.clip(tie, 0.0, 1.0)


def _lookup(thresholds, gap, tie, s):
    """``(p0, p1)`` of test scores ``s`` from the tables (binary search, O(log k) each)."""
    pos = np.searchsorted(thresholds, s, side="left")
    hit = pos < thresholds.size
    hit[hit] = thresholds[pos[hit]] == s[hit]
    out = gap[pos]
    out[hit] = tie[pos[hit]]
    return out[:, 0], out[:, 1]


class VennAbers(ClassifierRecalibrator):
    """Inductive Venn--Abers predictor (IVAP) of a classifier's scores.

    For a binary problem and a test score ``s``, the calibration scores are fitted by isotonic
    regression twice: once with the test point added with label 0, once with label 1. The fitted
    values at ``s`` are the two probabilities ``p0(s) <= p1(s)`` of the *multiprobability*
    prediction (Vovk and Petej 2014): one of them is the probability a perfectly calibrated
    (in the Venn sense) predictor would give, and the pair is valid without assumptions beyond
    exchangeability of the calibration and test data. :meth:`predict_interval` returns the pair;
    :meth:`predict_proba` the merged probability ``p1 / (1 - p0 + p1)``, the one that minimises
    the worst-case log loss over the two (Vovk, Petej and Fedorova 2015). The interval is wide
    where calibration data are scarce (in particular for tiny or separable calibration sets, which
    need no special treatment: every probability is strictly between 0 and 1).

    Computation. ``p0`` and ``p1`` only depend on where ``s`` falls among the distinct
    calibration scores, so ``fit`` tabulates them for each gap between and each tie with the
    ``k`` distinct calibration scores: the isotonic value at the test point is the slope of the
    lower common tangent of two convex hulls of the cumulative sum diagram (the prefix hull to
    its left, the suffix hull to its right), built in one pass each and bridged for all ``2k + 1``
    positions at once. Prediction is a binary search (O(log k) per score). The result equals the
    brute-force refit of :class:`~sklearn.isotonic.IsotonicRegression` per test point (tied
    calibration scores are pooled, as there).

    Multiclass, the two reductions of Manokhin (2017):

    * ``multiclass="ovr"``: one binary IVAP per class (class ``c`` against the rest, on the score
      of class ``c``), the merged probabilities normalised to sum to one;
      :meth:`predict_interval` returns the per-class (unnormalised) intervals.
    * ``multiclass="ovo"``: one binary IVAP per pair of classes ``i < j``, fitted on the
      calibration samples of those two classes with the score ``p_j / (p_i + p_j)`` (logits:
      ``l_j - l_i``), giving merged pairwise probabilities ``r_ij`` of ``j`` against ``i``;
      they are coupled into class probabilities by ``p_i = 1 / (sum_{j != i} 1 / r_ji - (C - 2))``
      (Price, Knerr, Personnaz and Dreyfus 1995), then normalised. :meth:`predict_interval` is
      not defined for it (a ``ValueError``): the pairwise intervals do not couple into class
      intervals.

    Both agree with the ``venn-abers`` package's ``predict_proba_prefitted_va`` on fixed inputs
    (``va_tpe="one_vs_rest"`` and ``"one_vs_one"``); for a binary problem both are the binary
    IVAP.

    Parameters
    ----------
    input : {"auto", "logits", "proba"}, default="auto"
        What ``X`` holds: logits or probabilities, one column per class of ``classes_`` (or one
        column for a binary problem: the log-odds or the probability of ``classes_[1]``);
        ``"auto"`` decides from the values (see
        :class:`~skcalib.recalibration.TemperatureScaling`). Only the order of each class's
        scores matters: the binary score is ``p[:, 1]`` or the logit difference, the one-vs-rest
        score of class ``c`` its probability (``softmax`` of logits).
    labels : array-like, default=None
        All class labels, one per column of ``X``, when some are absent from ``y``.
    eps : float, default=1e-12
        Clipping of probabilities before logarithms (used only to validate and convert input, as
        in every recalibrator; Venn--Abers itself uses the scores' order).
    multiclass : {"ovr", "ovo"}, default="ovr"
        Multiclass variant (Manokhin 2017): ``"ovr"``, one-vs-rest with normalisation;
        ``"ovo"``, one-vs-one with pairwise coupling. Ignored for binary problems.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    input_ : str
        ``"logits"`` or ``"proba"``: the kind of ``X`` seen in ``fit``.
    n_features_in_ : int
        Number of score columns (1 for 1-D binary scores).
    thresholds_ : list of ndarray
        Per binary problem (one for a binary problem; otherwise one per class for ``"ovr"``, one
        per pair ``(i, j)``, ``i < j``, in lexicographic order for ``"ovo"``): the distinct
        calibration scores (of positive weight), sorted.
    p_gap_ : list of ndarray of shape (k + 1, 2)
        ``(p0, p1)`` for test scores in each gap between consecutive thresholds.
    p_tie_ : list of ndarray of shape (k, 2)
        ``(p0, p1)`` for test scores equal to a threshold.

    Notes
    -----
    With ``sample_weight``, the isotonic fits are weighted and the test point counts with weight 1
    in the units of ``sample_weight`` (so integer weights act as repeated calibration points).

    Cost: the two hulls are one Python-level pass each over the ``k`` distinct scores, the
    bridges vectorised; one binary problem with 100,000 distinct calibration scores fits in about
    0.35 s, so ``"ovr"`` with ``C`` classes takes about ``C`` times that (``"ovo"``: the pairs
    see ``2 n / C`` samples each). Prediction is one ``searchsorted`` per binary problem.

    References
    ----------
    V. Vovk, I. Petej. Venn-Abers predictors. UAI 2014.

    V. Vovk, I. Petej, V. Fedorova. Large-scale probabilistic predictors with and without
    guarantees of validity. NeurIPS 2015.

    V. Manokhin. Multi-class probabilistic classification using inductive and cross Venn-Abers
    predictors. COPA 2017, PMLR 60.

    D. Price, S. Knerr, L. Personnaz, G. Dreyfus. Pairwise neural network classifiers with
    probabilistic outputs. NIPS 1994 (1995).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.recalibration import VennAbers
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=2000)                     # log-odds of an overconfident model
    >>> y = rng.random(2000) < 1 / (1 + np.exp(-z / 3))
    >>> va = VennAbers().fit(z, y)
    >>> p0, p1 = va.predict_interval(np.array([-2.0, 0.0, 2.0]))
    >>> bool(np.all(p0 <= p1))
    True
    >>> va.predict_proba(np.array([0.0])).round(1).tolist()
    [[0.5, 0.5]]
    """

    def __init__(self, input="auto", *, labels=None, eps=1e-12, multiclass="ovr"):
        self.input = input
        self.labels = labels
        self.eps = eps
        self.multiclass = multiclass

    def _check_method_params(self):
        check_option(self.multiclass, "multiclass", _MULTICLASS)

    def _ovo(self):
        return self.multiclass == "ovo" and self.classes_.size > 2

    def _pairs(self):
        C = self.classes_.size
        return [(i, j) for i in range(C - 1) for j in range(i + 1, C)]

    def _pair_scores(self, S, L, i, j):
        """The score of class ``j`` against ``i``: ``p_j / (p_i + p_j)`` or ``l_j - l_i``."""
        if self.input_ == "logits":
            return L[:, j] - L[:, i]
        tot = S[:, i] + S[:, j]
        return np.divide(S[:, j], tot, out=np.full(tot.shape, 0.5), where=tot > 0)

    def _class_scores(self, S, L):
        """``(n, m)`` scores of the binary problems (``m = 1`` for a binary problem)."""
        if self._ovo():
            return np.column_stack([self._pair_scores(S, L, i, j) for i, j in self._pairs()])
        if L.shape[1] == 2:
            if self.input_ == "proba":
                s = S if S.ndim == 1 else S[:, 1]
            else:
                s = L[:, 1] - L[:, 0]
            return s.reshape(-1, 1)
        return S if self.input_ == "proba" else softmax(L, axis=1)

    def _fit_scores(self, S, L, y_idx, n_classes, w):
        T = self._class_scores(S, L)
        if self._ovo():
            rows = [(y_idx == i) | (y_idx == j) for i, j in self._pairs()]
            targets = [y_idx == j for _, j in self._pairs()]
        else:
            targets = [y_idx == 1] if n_classes == 2 else [y_idx == c for c in range(n_classes)]
            rows = [slice(None)] * len(targets)
        self.thresholds_, self.p_gap_, self.p_tie_ = [], [], []
        for j, (target, r) in enumerate(zip(targets, rows)):
            t, gap, tie = venn_abers_tables(T[r, j], target[r], None if w is None else w[r])
            self.thresholds_.append(t)
            self.p_gap_.append(gap)
            self.p_tie_.append(tie)

    def _intervals(self, S, L):
        T = self._class_scores(S, L)
        p0 = np.empty(T.shape)
        p1 = np.empty(T.shape)
        for j in range(T.shape[1]):
            p0[:, j], p1[:, j] = _lookup(self.thresholds_[j], self.p_gap_[j], self.p_tie_[j],
                                         T[:, j])
        return p0, p1

    def _proba(self, S, L):
        p0, p1 = self._intervals(S, L)
        p = p1 / (1.0 - p0 + p1)           # in (0, 1): p1 > 0 and p0 < 1 always
        if self._ovo():
            C = self.classes_.size
            inv = np.zeros((p.shape[0], C))    # sum over pairs of 1 / P(class | pair)
            for col, (i, j) in enumerate(self._pairs()):
                inv[:, i] += 1.0 / (1.0 - p[:, col])
                inv[:, j] += 1.0 / p[:, col]
            p = 1.0 / (inv - (C - 2))
            return p / p.sum(axis=1, keepdims=True)
        if p.shape[1] == 1:
            return np.column_stack([1.0 - p[:, 0], p[:, 0]])
        return p / p.sum(axis=1, keepdims=True)

    def predict_interval(self, X):
        """The multiprobability prediction ``(p0, p1)``, with ``p0 <= p1``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Scores of the kind seen in ``fit``.

        Returns
        -------
        p0, p1 : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary problem: the isotonic probabilities of ``classes_[1]`` with the test point
            labelled 0 and labelled 1 (shape ``(n_samples,)``). Multiclass: the same for each
            class against the rest (unnormalised), one column per class.
        """
        check_is_fitted(self)
        if self._ovo():
            raise ValueError("predict_interval is defined for binary problems and for "
                             "multiclass='ovr'; this VennAbers was fitted with multiclass='ovo' on "
                             f"{self.classes_.size} classes.")
        S, _, L = self._scores(X, fitting=False)
        p0, p1 = self._intervals(S, L)
        if p0.shape[1] == 1:
            return p0[:, 0], p1[:, 0]
        return p0, p1
