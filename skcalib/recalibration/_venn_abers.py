"""Inductive Venn--Abers predictors (Vovk and Petej 2014; Vovk, Petej and Fedorova 2015)."""

import numpy as np
from scipy.special import softmax
from sklearn.utils.validation import check_is_fitted

from .._validation import check_option
from ._base import ClassifierRecalibrator

__all__ = ["VennAbers", "venn_abers_tables"]

_MULTICLASS = ("ovr", "ovo")


def _chain_hull(X, Y):
    """Lower convex hull pointers of the prefixes of points with increasing ``X``.

    ``out[i]``: the vertex just before ``i`` on the lower hull of points ``0..i`` (-1: none);
    collinear middle points are dropped. The monotone chain would pop, for each new point ``i``,
    the stack top ``c`` while ``(out[c], c, i)`` is not a strict turn towards the hull's inside.
    Here every point does that pop at once, by pointer jumping: start from ``out[i] = i - 1``
    and, in rounds, replace ``c = out[i]`` by ``out[c]`` wherever ``(out[c], c, i)`` is not a
    strict turn. Every point strictly between ``out[i]`` and ``i`` stays on or above the line
    through them (so a jump never passes the true predecessor), and at the fixed point each chain
    ``i, out[i], out[out[i]], ...`` is convex with all points above it: the lower hull. Jumps
    compose like pointer doubling, so a few dozen vectorised rounds replace the Python-level
    pass (a concave run of ``k`` points, where the chain pops everything, takes ``log2 k``).
    """
    k = X.size
    idx = np.arange(k, dtype=np.intp)
    out = idx - 1
    if k > 2:
        # A head start: inside a run of collinear steps (a run of equal labels, unweighted) the
        # middle points are dropped at once, so ``out[i]`` starts at the run's first point.
        dx, dy = np.diff(X), np.diff(Y)
        collinear = np.zeros(k, dtype=bool)
        collinear[2:] = dx[:-1] * dy[1:] == dy[:-1] * dx[1:]
        out = np.maximum.accumulate(np.where(collinear, 0, idx - 1))
        out[0] = -1
    active = idx[2:]                               # points 0 and 1 are final
    while active.size:
        c = out[active]
        o = out[c]
        ok = o >= 0
        cs, os_ = c[ok], o[ok]
        i = active[ok]
        cross = (X[cs] - X[os_]) * (Y[i] - Y[os_]) - (Y[cs] - Y[os_]) * (X[i] - X[os_])
        jump = cross <= 0
        out[i[jump]] = os_[jump]
        # a point can move again only if it jumped, or if its predecessor's pointer moved
        # (it did when that predecessor jumped in this round)
        # (index -1, "no predecessor", reads the sentinel False at the end)
        moved = np.zeros(k + 1, dtype=bool)
        moved[i[jump]] = True
        if not moved.any():
            break
        active = np.flatnonzero(moved[:k] | moved[out])
        active = active[active >= 2]
    return out


def _prefix_hull(X, Y):
    """``prv[i]``: the vertex before ``i`` on the lower convex hull of points ``0..i`` (-1: none).

    The points have strictly increasing ``X``.
    """
    return _chain_hull(X, Y)


def _suffix_hull(X, Y):
    """``nxt[i]``: the vertex after ``i`` on the lower convex hull of points ``i..k`` (-1: none).

    Walking from the right, the lower hull turns clockwise: negate and reverse ``x`` to reuse
    the chain.
    """
    k = X.size
    out = _chain_hull(-X[::-1], Y[::-1])[::-1]
    return np.where(out >= 0, k - 1 - out, -1)


def _bridge_values(X, Y, prv, nxt, A, B, w):
    """Isotonic values ``(p0, p1)`` at a test point of weight ``w`` for each query ``(A, B)``.

    The cumulative sum diagram of the calibration groups is ``P_j = (X[j], Y[j])`` (``P_0`` the
    origin). A test point with label ``l`` after the first ``A`` groups and before group
    ``B + 1`` (``A = B``: in the gap after group ``A``; ``A = B - 1``: tied with group ``B``) has
    the isotonic value ``max_{a <= A} min_{b >= B} (Y[b] - Y[a] + l w) / (X[b] - X[a] + w)``:
    the slope of the lower common tangent (bridge) of the hull of the shifted left points
    ``Q_a = P_a - (w, l w)`` and the hull of the right points ``P_b``. The bridge is found by the
    classical merge walk (the left vertex moves left, the right one right, while the line is not
    a tangent), run for all queries and both labels at once: column ``l`` of the result.
    """
    q = A.size
    a = np.concatenate([A, A])
    b = np.concatenate([B, B])
    shift = np.repeat([0.0, w], q)                 # label * w, label 0 then label 1
    active = np.arange(a.size)
    while active.size:
        ai, bi, sh = a[active], b[active], shift[active]
        qx, qy = X[ai] - w, Y[ai] - sh
        xb, yb = X[bi], Y[bi]
        # the right vertex: advance while the next one is on or below the line Q_a -> P_b
        nb = nxt[bi]
        ok = nb >= 0
        nbs = np.where(ok, nb, bi)
        step_b = ok & ((xb - qx) * (Y[nbs] - qy) <= (yb - qy) * (X[nbs] - qx))
        bi = np.where(step_b, nbs, bi)
        xb, yb = X[bi], Y[bi]
        # the left vertex: move back while the previous one is on or below the line Q_a -> P_b
        pa = prv[ai]
        ok = pa >= 0
        pas = np.where(ok, pa, ai)
        step_a = ok & ((xb - qx) * (Y[pas] - sh - qy) <= (yb - qy) * (X[pas] - w - qx))
        a[active] = np.where(step_a, pas, ai)
        b[active] = bi
        active = active[step_a | step_b]
    vals = (Y[b] - Y[a] + shift) / (X[b] - X[a] + w)
    # the exact values lie in [0, 1]; rounding must not push them out
    return np.clip(vals, 0.0, 1.0).reshape(2, q).T


class _Diagram:
    """One binary problem's cumulative sum diagram, with its prefix and suffix hull pointers.

    ``fit`` keeps one per binary problem: the ``(p0, p1)`` of the ``k + 1`` gaps between the
    distinct calibration scores are tabulated (``gap``), those of test scores tied with a
    calibration score are bridged when they occur (:meth:`tie`), so that fitting costs one
    bridge pass, not two.
    """

    def __init__(self, scores, y, sample_weight=None):
        scores = np.asarray(scores, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if sample_weight is None:
            w = None
            self.w_test = 1.0
        else:
            w = np.asarray(sample_weight, dtype=np.float64)
            top = float(w.max()) if w.size else 0.0
            top = top if top > 0 else 1.0
            w = w / top                  # no overflow for huge weights; only ratios matter
            self.w_test = 1.0 / top
            keep = w > 0
            scores, y, w = scores[keep], y[keep], w[keep]
        self.thresholds, inverse = np.unique(scores, return_inverse=True)
        k = self.thresholds.size
        W = np.bincount(inverse, weights=w, minlength=k)
        Wy = np.bincount(inverse, weights=y if w is None else w * y, minlength=k)
        self.X = np.concatenate([[0.0], np.cumsum(W)])
        self.Y = np.concatenate([[0.0], np.cumsum(Wy)])
        self.prv, self.nxt = _prefix_hull(self.X, self.Y), _suffix_hull(self.X, self.Y)
        j = np.arange(k + 1)
        self.gap = _bridge_values(self.X, self.Y, self.prv, self.nxt, j, j, self.w_test)

    def tie(self, m):
        """``(p0, p1)`` of test scores equal to ``thresholds[m]`` (``m``: int array)."""
        return _bridge_values(self.X, self.Y, self.prv, self.nxt, m, m + 1, self.w_test)

    def lookup(self, s):
        """``(p0, p1)`` of test scores ``s``: a binary search, and bridges for the ties only."""
        pos = np.searchsorted(self.thresholds, s, side="left")
        hit = pos < self.thresholds.size
        hit[hit] = self.thresholds[pos[hit]] == s[hit]
        out = self.gap[pos]
        if hit.any():
            tied, inverse = np.unique(pos[hit], return_inverse=True)
            out[hit] = self.tie(tied)[inverse]
        return out[:, 0], out[:, 1]


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
    d = _Diagram(scores, y, sample_weight)
    return d.thresholds, d.gap, d.tie(np.arange(d.thresholds.size))


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
    calibration scores: the isotonic value at the test point is the slope of the lower common
    tangent of two convex hulls of the cumulative sum diagram (the prefix hull to its left, the
    suffix hull to its right). ``fit`` builds both hulls (vectorised pointer jumping) and bridges
    them for the ``k + 1`` gaps between the ``k`` distinct calibration scores at once; prediction
    is a binary search (O(log k) per score), and test scores tied with a calibration score are
    bridged when they occur (vectorised as well). The result equals the
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
    diagrams_ : list
        Per binary problem, the cumulative sum diagram of the calibration scores with its hull
        pointers (used for test scores equal to a threshold).

    Notes
    -----
    With ``sample_weight``, the isotonic fits are weighted and the test point counts with weight 1
    in the units of ``sample_weight`` (so integer weights act as repeated calibration points).

    Cost: sorting, two hulls and one bridge pass, all vectorised (a few dozen numpy passes over
    the ``k`` distinct scores); one binary problem with 100,000 distinct calibration scores fits
    in about 0.05 s, and ``"ovr"`` with ``C`` classes takes about ``C`` times that (``"ovo"``:
    the pairs see ``2 n / C`` samples each). Prediction is one ``searchsorted`` per binary
    problem, plus one bridge pass over the distinct tied scores.

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

    def _check_own_params(self):
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
        self.diagrams_ = [_Diagram(T[r, j], target[r], None if w is None else w[r])
                          for j, (target, r) in enumerate(zip(targets, rows))]
        self.thresholds_ = [d.thresholds for d in self.diagrams_]
        self.p_gap_ = [d.gap for d in self.diagrams_]

    def _intervals(self, S, L):
        T = self._class_scores(S, L)
        p0 = np.empty(T.shape)
        p1 = np.empty(T.shape)
        for j in range(T.shape[1]):
            p0[:, j], p1[:, j] = self.diagrams_[j].lookup(T[:, j])
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
