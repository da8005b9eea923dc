"""The Empirical family: sample-based predictions (draws or ensemble members, optional weights).

Besides the class, this module holds and registers with :mod:`skcalib._expectations` the exact
kernel expectations of empirical predictions with the Gaussian and exponential target kernels
(:class:`_EmpiricalOps`: ``e1 = sum_k w_k k(x_k, y)`` and ``e2 = sum_{k,l} w_k v_l
k(x_k, x'_l)``, full double sums over the draws -- every cross term, so ``e2`` is symmetric in the
two predictions, unlike the reference implementation's ensemble kernel), the plug-in CRPS by
sorting, and the exact 2-Wasserstein distance between two weighted empirical laws (merged
quantile functions).
"""

import numpy as np

from .._expectations import TargetOps, register_expectations
from ..kernels import ExponentialKernel, GaussianKernel
from ._base import (Distribution, _check_q, _float_array,
                    _read_only_float_copy)

#: Elements of the temporary arrays one block of the double sums and of the W2 merge may hold.
_BLOCK_ITEMS = 2_000_000


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
    smallest draw of positive weight). The CRPS is the *plug-in* CRPS of the empirical law,
    ``E|X - y| - E|X - X'| / 2``, computed exactly in ``O(m log m)`` per row by sorting; as an
    estimate of the CRPS of the law the draws come from it is biased (too large by about
    ``E|X - X'| / (2 m)`` for ``m`` equal-weight draws). There is no density: ``log_pdf`` (and so
    ``nll``) raises a ``TypeError``.

    Examples
    --------
    >>> from skcalib.distributions import Empirical
    >>> d = Empirical([[0.0, 1.0, 2.0, 3.0]])
    >>> d.mean, d.variance
    (array([1.5]), array([1.25]))
    >>> d.cdf(1.0), d.ppf(0.5)
    (array([0.5]), array([1.]))
    """

    _family = "empirical"
    dim = None
    _univariate = True

    def __init__(self, samples, weights=None):
        x = _float_array(samples, "samples", ndim=(2,))
        if x.shape[1] < 1:
            raise ValueError(f"samples must have at least one draw per row; got shape {x.shape}.")
        if weights is None:
            raw = np.ones(x.shape)
            w = np.full(x.shape, 1.0 / x.shape[1])
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
            raw, w = w, w / total[:, None]
        order = np.argsort(x, axis=1, kind="stable")
        xs = np.take_along_axis(x, order, axis=1)
        ws = np.take_along_axis(w, order, axis=1)
        # cumulative weights from the raw weights: (k + 1) / m correctly rounded for equal
        # weights (a cumulative sum of 1 / m would drift below k / m and move quantiles)
        cw_raw = np.cumsum(np.take_along_axis(raw, order, axis=1), axis=1)
        cw = np.minimum(cw_raw / cw_raw[:, -1:], 1.0)
        cw[:, -1] = 1.0
        self.samples = _read_only_float_copy(x)
        self.weights = _read_only_float_copy(w)
        self._xs = _read_only_float_copy(xs)
        self._ws = _read_only_float_copy(ws)
        self._cw = _read_only_float_copy(cw)
        self.n_samples = x.shape[0]
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
        return Empirical(self.samples[rows], self.weights[rows])

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
        y = np.broadcast_to(self._check_y(y), (self.n_samples,))
        k = (self._xs <= y[:, None]).sum(axis=1)     # draws <= y (sorted: the first k)
        cw = np.concatenate([np.zeros((self.n_samples, 1)), self._cw], axis=1)
        return cw[np.arange(self.n_samples), k]

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

    def _crps(self, y):
        y = np.asarray(y, dtype=np.float64)
        c = self.mean                       # centred: no cancellation for large offsets
        xs = self._xs - c[:, None]
        ws = self._ws
        abs_y = np.einsum("ij,ij->i", ws, np.abs(xs - (y - c)[..., None]))
        below = self._cw - ws               # weight of the draws sorted before each one
        # E|X - X'| = 2 sum_k w_k x_(k) (2 C_<k + w_k - 1)
        spread = 2.0 * np.einsum("ij,ij->i", ws * xs, 2.0 * below + ws - 1.0)
        return np.maximum(abs_y - 0.5 * spread, 0.0)

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
