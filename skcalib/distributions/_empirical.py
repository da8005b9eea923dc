"""The Empirical family: sample-based predictions (draws or ensemble members, optional weights).

Besides the class, this module holds and registers with :mod:`skcalib._expectations` the exact
kernel expectations of empirical predictions with the Gaussian and exponential target kernels
(:class:`_EmpiricalOps`: ``e1 = sum_k w_k k(x_k, y)`` and ``e2 = sum_{k,l} w_k v_l
k(x_k, x'_l)``, full double sums over the draws -- every cross term, so ``e2`` is symmetric in the
two predictions, unlike the reference implementation's ensemble kernel), with the SKCE's tiles of
the Gaussian target kernel evaluated by factorised exponents (:func:`_gauss_tile`: one BLAS
product with inner dimension 3 and one ``exp`` per kernel value), the plug-in and fair CRPS by
sorting, the randomised PIT's left limit of the CDF (``_cdf_left``), and the exact
2-Wasserstein distance between two weighted empirical laws (merged quantile functions).
"""

import math

import numpy as np

from .._expectations import TargetOps, register_expectations
from .._validation import check_rng
from ..kernels import ExponentialKernel, GaussianKernel
from ._base import (Distribution, _check_q, _float_array,
                    _read_only_float_copy)

#: Elements of the temporary arrays one block of the double sums and of the W2 merge may hold.
_BLOCK_ITEMS = 2_000_000
#: Elements of the temporaries of one block of rows of the CRPS (2 MiB: they stay in cache).
_CRPS_BLOCK_ITEMS = 1 << 18


class Empirical(Distribution):
    """Batch of empirical (sample-based) predictive distributions.

    Row ``i`` is the discrete law putting mass ``weights[i, k]`` on ``samples[i, k]``: the draws
    of a Monte-Carlo predictive, or the point predictions of an ensemble's members.

    Parameters
    ----------
    samples : array-like of shape (n_samples, n_draws)
        Finite draws (``n_draws >= 1``).
    weights : array-like of shape (n_samples, n_draws), default=None
        Non-negative finite weights of the draws, normalised per row (every row needs a positive
        sum); None gives every draw the weight ``1 / n_draws``.

    Notes
    -----
    ``cdf`` is the right-continuous step function (the weighted fraction of draws ``<= y``),
    ``ppf`` its generalised inverse (the smallest draw whose CDF is ``>= q``; ``q = 0`` gives the
    smallest draw of positive weight).

    **PIT.** The law has atoms, so the plain PIT ``F(y)`` of a calibrated target takes only the
    values ``k / m`` (equal weights) and is not uniform. :func:`skcalib.pit` and
    :func:`skcalib.stats.pit_test` use the *randomised* PIT of Czado, Gneiting and Held (2009)
    instead, ``F(y-) + V (F(y) - F(y-))`` with ``V ~ U(0, 1)`` drawn from their ``random_state``
    (``F(y-)``: the weight of the draws ``< y``), which is uniform under calibration; it differs
    from ``F(y)`` only where ``y`` equals a draw.

    **CRPS.** :func:`skcalib.crps` gives by default the *plug-in* CRPS of the empirical law,
    ``E|X - y| - E|X - X'| / 2``, computed exactly in ``O(m log m)`` per row by sorting; as an
    estimate of the CRPS of the law the draws come from it is too large, by
    ``E|X - X'| / (2 m)`` in expectation for ``m`` independent equal-weight draws.
    ``estimator="fair"`` gives the fair CRPS (Ferro 2014), which divides the pair sum by
    ``1 - sum_k w_k^2`` (``(m - 1) / m`` for equal weights) instead: unbiased for independent
    draws with fixed weights. There is no density: ``log_pdf`` (and so ``nll``) raises a
    ``TypeError``.

    Examples
    --------
    >>> from skcalib.distributions import Empirical
    >>> d = Empirical([[0.0, 1.0, 2.0, 3.0]])
    >>> d.mean, d.variance
    (array([1.5]), array([1.25]))
    >>> d.cdf(1.0), d.ppf(0.5)
    (array([0.5]), array([1.]))
    >>> import skcalib
    >>> round(skcalib.crps([1.0], d), 4), round(skcalib.crps([1.0], d, estimator="fair"), 4)
    (0.375, 0.1667)
    """

    _family = "empirical"
    dim = None
    _univariate = True

    def __init__(self, samples, weights=None):
        x = _float_array(samples, "samples", ndim=(2,))     # already a private copy
        if x.shape[1] < 1:
            raise ValueError(f"samples must have at least one draw per row; got shape {x.shape}.")
        n, m = x.shape
        if weights is None:
            # equal weights: no argsort, and the weights and cumulative weights are read-only
            # broadcast rows ((k + 1) / m correctly rounded), not n x m arrays
            xs = np.sort(x, axis=1)
            w = ws = np.broadcast_to(np.full(m, 1.0 / m), x.shape)
            cw = np.broadcast_to(np.arange(1, m + 1, dtype=np.float64) / m, x.shape)
        else:
            w = _float_array(weights, "weights", ndim=(2,))
            if w.shape != x.shape:
                raise ValueError(f"weights must have the shape of samples {x.shape}; got "
                                 f"{w.shape}.")
            if np.any(w < 0):
                raise ValueError(f"weights must be non-negative; got {w[w < 0][0]!r}.")
            total = w.sum(axis=1)
            if np.any(total <= 0):
                i = int(np.flatnonzero(total <= 0)[0])
                raise ValueError(f"weights must have a positive sum in every row; row {i} "
                                 "sums to 0.")
            # raw weights scaled by the row's largest: equal positive weights (a slice, a
            # concatenation's zero-weight padding) become exactly 1, so their cumulative
            # sums below are exact integers
            raw, w = w / w.max(axis=1, keepdims=True), w / total[:, None]
            order = np.argsort(x, axis=1, kind="stable")
            xs = np.take_along_axis(x, order, axis=1)
            ws = _read_only_float_copy(np.take_along_axis(w, order, axis=1))
            # cumulative weights from the raw weights: (k + 1) / m correctly rounded for equal
            # weights (a cumulative sum of 1 / m would drift below k / m and move quantiles)
            cw_raw = np.cumsum(np.take_along_axis(raw, order, axis=1), axis=1)
            cw = np.minimum(cw_raw / cw_raw[:, -1:], 1.0)
            cw[:, -1] = 1.0
            cw.setflags(write=False)
            w.setflags(write=False)
        x.setflags(write=False)
        xs.setflags(write=False)
        self.samples = x
        self.weights = w
        self._uniform = weights is None
        self._xs = xs
        self._ws = ws
        self._cw = cw
        self.n_samples = n
        self._freeze()

    @property
    def n_draws(self):
        """Number of draws per row (``samples.shape[1]``)."""
        return self.samples.shape[1]

    @property
    def mean(self):
        """Weighted means of the draws, shape ``(n_samples,)``."""
        return np.einsum("ij,ij->i", self.weights, self.samples)

    @property
    def variance(self):
        """Weighted (population) variances of the draws, shape ``(n_samples,)``."""
        return self._moments(1.0)[1]

    def _moments(self, unit=1.0):
        x = self.samples / unit
        mu = np.einsum("ij,ij->i", self.weights, x)
        d = x - mu[:, None]
        return mu[:, None], np.einsum("ij,ij->i", self.weights, d * d)

    def _take(self, rows):
        return Empirical(self.samples[rows], None if self._uniform else self.weights[rows])

    @classmethod
    def _concatenate(cls, dists):
        m = max(d.n_draws for d in dists)
        xs, ws = [], []
        for d in dists:
            pad = m - d.n_draws   # zero-weight copies of the first draw: the laws are unchanged
            xs.append(np.concatenate([d.samples, np.repeat(d.samples[:, :1], pad, axis=1)], 1))
            ws.append(np.concatenate([d.weights, np.zeros((d.n_samples, pad))], axis=1))
        return cls(np.concatenate(xs), np.concatenate(ws))

    def _draw(self, rng, m):
        n, k = self._cw.shape
        offset = np.arange(n, dtype=np.float64)
        # rows' cumulative weights shifted to [i, i + 1]: one searchsorted for every row
        flat = (self._cw + offset[:, None]).ravel()
        u = rng.uniform(size=(m, n)) + offset
        idx = np.searchsorted(flat, u.ravel(), side="right").reshape(m, n)
        col = np.minimum(idx - np.arange(n) * k, k - 1)
        return self._xs[np.arange(n), col]

    def cdf(self, y):
        """Right-continuous step CDF: the weighted fraction of draws ``<= y``.

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._cumulative(y, np.less_equal)

    def _cdf_left(self, y):
        """Left limit of the CDF: the weighted fraction of draws ``< y`` (the randomised PIT
        draws uniformly between it and ``cdf(y)`` where ``y`` is a draw)."""
        return self._cumulative(y, np.less)

    def _cumulative(self, y, below):
        y = np.broadcast_to(self._check_y(y), (self.n_samples,))
        k = below(self._xs, y[:, None]).sum(axis=1)   # sorted draws: the first k are below
        rows = np.arange(self.n_samples)
        return np.where(k > 0, self._cw[rows, np.maximum(k - 1, 0)], 0.0)

    def ppf(self, q):
        """Generalised inverse of the CDF: the smallest draw whose CDF is ``>= q``.

        Parameters
        ----------
        q : float or array-like of shape (n_samples,)
            Probabilities in ``[0, 1]`` (a scalar is used for every row); ``q = 0`` gives the
            smallest draw of positive weight.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        q = np.broadcast_to(_check_q(q, self.n_samples), (self.n_samples,))[:, None]
        k = np.where(q > 0, self._cw < q, self._cw <= 0).sum(axis=1)
        k = np.minimum(k, self.n_draws - 1)
        return self._xs[np.arange(self.n_samples), k]

    def log_pdf(self, y):
        """Not defined: an empirical law has no density (raises a ``TypeError``).

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Targets (not used).

        Raises
        ------
        TypeError
            Always.
        """
        raise TypeError("Empirical predictions have no density, so log_pdf and the NLL are not "
                        "defined; score them with crps or the kernel calibration errors.")

    _crps_estimators = ("fair",)

    def _cdf_mapped(self, knots, values):
        # R(F_i) exactly, as an Empirical: the draws are kept and draw k of row i (in sorted
        # order, C_k its cumulative weight, as cdf reads it) gets the weight R(C_k) - R(C_{k-1})
        G = np.interp(self._cw, knots, values)
        G[:, -1] = 1.0
        order = np.argsort(self.samples, axis=1, kind="stable")
        new = np.empty(self.samples.shape)
        np.put_along_axis(new, order, np.diff(G, axis=1, prepend=0.0), axis=1)
        return Empirical(self.samples, np.maximum(new, 0.0))

    def _rank_pit(self, y, rng):
        # (r + V (t + 1)) / (m + 1): r draws below y, t draws equal to it, V ~ U(0, 1); uniform
        # when y and the m draws are exchangeable (the Talagrand rank histogram, randomised)
        if not self._uniform and not np.all(self.weights == self.weights[:, :1]):
            raise ValueError("ranks=True needs equal-weight draws: the verification rank assumes "
                             "that the target and the draws are exchangeable; these draws have "
                             "unequal weights (use ranks=False, the randomised PIT).")
        y = np.asarray(y, dtype=np.float64)[:, None]
        below = (self._xs < y).sum(axis=1)
        ties = (self._xs == y).sum(axis=1)
        v = check_rng(rng).uniform(size=self.n_samples)
        return (below + v * (ties + 1)) / (self.n_draws + 1)

    def _crps(self, y):
        abs_y, spread = self._crps_parts(y)
        return np.maximum(abs_y - 0.5 * spread, 0.0)

    def _crps_estimate(self, y, estimator):
        if estimator != "fair":
            return super()._crps_estimate(y, estimator)
        # E sum_{k != l} w_k w_l |X_k - X_l| = (1 - sum_k w_k^2) E|X - X'| for iid draws
        if self._uniform:
            denom = np.full(self.n_samples, 1.0 - 1.0 / self.n_draws)
        else:
            denom = 1.0 - np.einsum("ij,ij->i", self._ws, self._ws)
        bad = denom <= 1e-12
        if np.any(bad):
            i = int(np.flatnonzero(bad)[0])
            raise ValueError("estimator='fair' needs at least two draws of positive weight in "
                             f"every row of y_pred; row {i} has one.")
        abs_y, spread = self._crps_parts(y)
        return abs_y - 0.5 * spread / denom

    def _crps_parts(self, y):
        """``(E|X - y|, E|X - X'|)`` of every row under the empirical law, exactly, in blocks of
        rows (temporaries of about ``_CRPS_BLOCK_ITEMS`` numbers, in cache):
        ``E|X - X'| = 2 sum_k w_k x_(k) (2 C_<k + w_k - 1)``, ``C_<k`` the weight sorted before
        draw ``k``. The coefficients sum to 0, so the sum is taken over the differences
        ``x_(k) - y`` that ``E|X - y|`` needs anyway: no cancellation for large offsets, and an
        error relative to the CRPS itself where the target is far from the draws. For equal
        weights the coefficients are one row, ``(2k + 1 - m) / m^2``, and both sums are
        matrix-vector products."""
        n, m = self._xs.shape
        y = np.broadcast_to(np.asarray(y, dtype=np.float64), (n,))
        abs_y, spread = np.empty(n), np.empty(n)
        step = max(1, _CRPS_BLOCK_ITEMS // m)
        buf = np.empty((min(step, n), m))
        if self._uniform:
            w = np.full(m, 1.0 / m)
            coef = (2.0 * np.arange(m) + (1.0 - m)) / (float(m) * m)
        for s in range(0, n, step):
            r = slice(s, s + step)
            d = buf[:min(step, n - s)]
            np.subtract(self._xs[r], y[r, None], out=d)
            if self._uniform:
                np.matmul(d, coef, out=spread[r])
                np.abs(d, out=d)
                np.matmul(d, w, out=abs_y[r])
            else:
                ws = self._ws[r]
                c = self._cw[r] - ws
                c *= 2.0
                c += ws
                c -= 1.0
                c *= ws
                spread[r] = np.einsum("ij,ij->i", c, d)
                np.abs(d, out=d)
                abs_y[r] = np.einsum("ij,ij->i", ws, d)
        spread *= 2.0
        return abs_y, spread

    # -- 2-Wasserstein --------------------------------------------------------------------------
    def _equal_weights(self):
        return bool(np.all(self.weights == 1.0 / self.n_draws))

    def _embedding(self):
        # equal weights: W2^2 = mean((sorted - sorted')^2), a Euclidean distance
        if not self._equal_weights():
            return None
        return self._xs * np.sqrt(1.0 / self.n_draws)

    def _embedding_key(self):
        return ("empirical", self.n_draws) if self._equal_weights() else None

    def _w2_squared(self, i, other, j):
        i, j = np.broadcast_arrays(np.asarray(i), np.asarray(j))
        shape = i.shape
        i, j = i.ravel(), j.ravel()
        out = np.empty(i.shape)
        m1, m2 = self.n_draws, other.n_draws
        step = max(1, _BLOCK_ITEMS // (m1 + m2))
        for s in range(0, i.size, step):
            a, b = i[s:s + step], j[s:s + step]
            out[s:s + step] = _w2_merge(self._xs[a], self._cw[a], other._xs[b], other._cw[b])
        return out.reshape(shape)


def _w2_merge(x1, c1, x2, c2):
    """``int_0^1 (Q1(u) - Q2(u))^2 du`` for step quantile functions: sorted draws ``x`` with
    cumulative weights ``c`` (last 1) per row; the union of both rows' breakpoints splits
    ``(0, 1]`` into intervals on which both quantile functions are constant."""
    B, m1 = x1.shape
    m2 = x2.shape[1]
    c = np.concatenate([c1, c2], axis=1)
    lab = np.concatenate([np.ones((B, m1)), np.zeros((B, m2))], axis=1)
    order = np.argsort(c, axis=1, kind="stable")
    s = np.take_along_axis(c, order, axis=1)
    lab = np.take_along_axis(lab, order, axis=1)
    before1 = (np.cumsum(lab, axis=1) - lab).astype(np.intp)     # breakpoints of row 1 passed
    before2 = np.arange(m1 + m2) - before1
    q1 = np.take_along_axis(x1, np.minimum(before1, m1 - 1), axis=1)
    q2 = np.take_along_axis(x2, np.minimum(before2, m2 - 1), axis=1)
    dt = np.diff(s, axis=1, prepend=0.0)
    d = q1 - q2
    return np.einsum("ij,ij->i", dt, d * d)


# --------------------------------------------------------------------------------------------
# kernel expectations (registered with skcalib._expectations)


class _EmpiricalOps(TargetOps):
    """Empirical predictions, Gaussian or exponential target kernel: exact sums over draws.

    ``P`` places the sorted draws and their weights, ``(..., m)``; the sums loop over blocks of
    draws so that no temporary exceeds about ``_BLOCK_ITEMS`` numbers beyond the tile itself.
    """

    def __init__(self, dist, y, ky):
        super().__init__(y, ky)
        self.x, self.w = dist._xs, dist._ws

    def P(self, idx, axis):
        x, w = self.x[idx], self.w[idx]
        if axis == "row":
            return x[:, None, :], w[:, None, :]
        if axis == "col":
            return x[None, :, :], w[None, :, :]
        return x, w

    def e1(self, P, Y):
        x, w = P
        Y = np.asarray(Y, dtype=np.float64)[..., None]
        return _weighted_kernel_sum(self.ky, x, w, Y)

    def tile(self, logK, a, b):
        """``h`` on a tile of pairs: the Gaussian target kernel by factorised exponents
        (:func:`_gauss_tile`), the generic sums otherwise (exponential kernel, extreme scales,
        or draws and targets of one tile spread over more than ``_FACTORED_SPREAD`` length
        scales, where the expanded exponent would lose accuracy)."""
        ky = self.ky
        if ky.kind == "gauss" and not ky.robust:
            H = _gauss_tile(self, a, b)
            if H is not None:
                H *= np.exp(logK)
                return H
        return super().tile(logK, a, b)

    def e2(self, P, Q):
        (x, w), (xq, wq) = P, Q
        out = 0.0
        for k in range(x.shape[-1]):
            inner = _weighted_kernel_sum(self.ky, xq, wq, x[..., k:k + 1])
            out = out + w[..., k] * inner
        return out


def _weighted_kernel_sum(ky, x, w, y):
    """``sum_k w[..., k] ky(x[..., k], y[..., 0])`` over the last axis, in blocks of draws."""
    lead = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    size = max(1, int(np.prod(lead)))
    step = max(1, _BLOCK_ITEMS // size)
    out = np.zeros(lead)
    for s in range(0, x.shape[-1], step):
        K = ky(x[..., s:s + step], y)
        K *= w[..., s:s + step]
        out += K.sum(axis=-1)
    return out


register_expectations(Empirical, GaussianKernel, _EmpiricalOps)
register_expectations(Empirical, ExponentialKernel, _EmpiricalOps)


# --------------------------------------------------------------------------------------------
# the SKCE tile of the Gaussian target kernel by factorised exponents

#: Largest distance, in target length scales, of a tile's draws and targets from its centre for
#: which the factorised exponents are used: their rounding error is about ``3 eps Z^2`` absolute
#: in the exponent (``2e-13`` relative in a kernel value at ``Z = 16``), against ``eps d^2`` for
#: the direct difference ``d``.
_FACTORED_SPREAD = 16.0
#: Elements of one block of exponentials (512 KiB: in cache).
_FACTORED_ITEMS = 1 << 16


def _gauss_tile(ops, a, b):
    """``k_Y(y_i, y_j) - e1(p_i, y_j) - e1(p_j, y_i) + e2(p_i, p_j)`` on the tile of rows ``a``
    by columns ``b``, or None if the tile's values spread too far (see ``_FACTORED_SPREAD``).

    With the draws and targets centred at the tile's midpoint ``c`` and scaled by the length
    scale ``l`` (``z = (x - c) / l``, ``t = (y - c) / l``) and the log-weights folded in,
    ``log(w_k v_l) - (z_k - z'_l)^2 / 2 = [z_k, 1, u_k] . [z'_l, u'_l, 1]`` with
    ``u = log w - z^2 / 2``: every exponent of ``e2`` is one entry of a matrix product with inner
    dimension 3 (BLAS), followed by one in-place ``exp`` and two summations (over the column
    draws by adding rows, over the row draws by a matrix-vector product); ``e1`` likewise with
    ``[t, -t^2 / 2, 1]``. Blocks hold about ``_FACTORED_ITEMS`` numbers; a diagonal tile computes
    the blocks on and above its diagonal and mirrors the rest (``e2`` is symmetric).
    """
    same = isinstance(a, slice) and a == b
    xa, wa, ya = ops.x[a], ops.w[a], ops.y[a]
    xb, wb, yb = (xa, wa, ya) if same else (ops.x[b], ops.w[b], ops.y[b])
    p, m = xa.shape
    q = xb.shape[0]
    if p == 0 or q == 0:
        return np.zeros((p, q))
    lo = min(xa.min(), xb.min(), ya.min(), yb.min())
    hi = max(xa.max(), xb.max(), ya.max(), yb.max())
    inv = 1.0 / ops.ky.unit
    if not 0.5 * (hi - lo) * inv <= _FACTORED_SPREAD:
        return None
    c = 0.5 * (lo + hi)
    fa = _draw_features(xa, wa, c, inv)
    fb = fa if same else _draw_features(xb, wb, c, inv)
    ta, tb = (ya - c) * inv, (yb - c) * inv
    H = ops.ky(ya[:, None], yb[None, :])
    E1 = _e1_factored(fa, tb, p, m)
    H -= E1
    H -= E1.T if same else _e1_factored(fb, ta, q, m).T     # e1(p_j, y_i)
    H += _e2_factored(fa, fb, p, q, m, same)
    return H


def _draw_features(x, w, c, inv):
    """Rows ``[z, 1, u]`` per draw, shape ``(rows * m, 3)``: ``z = (x - c) / l``,
    ``u = log w - z^2 / 2`` (``-1e300`` for a zero weight: its exponentials are exactly 0)."""
    z = (x - c) * inv
    F = np.empty(x.shape + (3,))
    F[..., 0] = z
    F[..., 1] = 1.0
    with np.errstate(divide="ignore"):
        u = np.log(w)
    np.maximum(u, -1e300, out=u)
    u -= 0.5 * z * z
    F[..., 2] = u
    return F.reshape(-1, 3)


def _e1_factored(F, t, p, m):
    """``e1[i, j] = sum_k w_ik k(x_ik, y_j)`` for the draws' features ``F`` of ``p`` rows and the
    scaled targets ``t``, shape ``(p, t.size)``."""
    q = t.size
    G = np.empty((3, q))
    G[0] = t
    G[1] = -0.5 * t * t
    G[2] = 1.0
    out = np.empty((p, q))
    step = max(1, _FACTORED_ITEMS // (m * q))
    buf = np.empty(min(p, step) * m * q)
    for s in range(0, p, step):
        r = min(step, p - s)
        E = buf[:r * m * q].reshape(r * m, q)
        np.matmul(F[s * m:(s + r) * m], G, out=E)
        np.exp(E, out=E)
        np.add.reduce(E.reshape(r, m, q), axis=1, out=out[s:s + r])
    return out


def _e2_factored(Fa, Fb, p, q, m, same):
    """``e2[i, j] = sum_{k,l} w_ik w_jl k(x_ik, x_jl)``, shape ``(p, q)``, in square blocks of
    rows and columns (on a diagonal tile only the blocks on and above the diagonal), through
    buffers allocated once (fresh blocks would cost page faults)."""
    Gb = np.empty((3, q * m))
    Gb[0] = Fb[:, 0]
    Gb[1] = Fb[:, 2]
    Gb[2] = 1.0
    ones = np.ones(m)
    side = max(1, math.isqrt(_FACTORED_ITEMS) // m)
    buf = np.empty(min(side, p) * min(side, q) * m * m)
    sbuf = np.empty(min(side, p) * min(side, q) * m)
    out = np.empty((p, q))
    for i0 in range(0, p, side):
        i1 = min(i0 + side, p)
        r = i1 - i0
        A = Fa[i0 * m:i1 * m]
        for j0 in range(i0 if same else 0, q, side):
            j1 = min(j0 + side, q)
            c = j1 - j0
            E = buf[:r * m * c * m].reshape(r * m, c * m)
            np.matmul(A, Gb[:, j0 * m:j1 * m], out=E)
            np.exp(E, out=E)
            S = sbuf[:r * c * m].reshape(r, c * m)
            np.add.reduce(E.reshape(r, m, c * m), axis=1, out=S)      # over the row draws
            out[i0:i1, j0:j1] = (S.reshape(r * c, m) @ ones).reshape(r, c)   # column draws
            if same and j0 > i0:
                out[j0:j1, i0:i1] = out[i0:i1, j0:j1].T
    return out
