"""The Quantiles family: predictions given as quantiles at fixed levels (quantile regression).

A row is the law whose quantile function interpolates the predicted quantiles linearly between
the levels and continues with the slope of the outermost segment down to level 0 and up to
level 1 (linear tails, bounded support). The law is a mixture of uniform distributions on the
segments between knots (an atom where two knots are equal), so its CDF, moments and
quantiles are exact piecewise formulas.
"""

import math

import numpy as np
from scipy import special

from .._expectations import TargetOps, place, register_expectations
from .._validation import check_option
from ..kernels import ExponentialKernel, GaussianKernel
from ._base import Distribution, _check_q, _float_array, _read_only_float_copy

#: Elements of the temporary arrays one block of the kernel expectations and W2 may hold.
_BLOCK_ITEMS = 250_000


def _check_levels(levels, n_values):
    tau = _float_array(levels, "levels", ndim=(1,))
    if tau.size < 2:
        raise ValueError(f"levels must hold at least two quantile levels; got {tau.size}.")
    if tau.size != n_values:
        raise ValueError(f"levels must have one level per column of values ({n_values}); got "
                         f"{tau.size}.")
    if np.any((tau <= 0) | (tau >= 1)):
        raise ValueError("levels must lie strictly between 0 and 1; got "
                         f"{tau[(tau <= 0) | (tau >= 1)][0]!r}.")
    if np.any(np.diff(tau) <= 0):
        raise ValueError("levels must be strictly increasing.")
    return tau


class Quantiles(Distribution):
    """Batch of predictive distributions given by quantiles at fixed levels.

    Row ``i`` is the law whose quantile function ``Q_i`` takes the value ``values[i, j]`` at
    level ``levels[j]``, is linear between consecutive levels, and continues linearly with the
    slope of the outermost segment down to level 0 and up to level 1 (*linear tails*: the
    support is bounded, ``[Q_i(0), Q_i(1)]``). Between two knots the law is uniform; equal
    knots make an atom.

    Parameters
    ----------
    values : array-like of shape (n_samples, n_levels)
        Finite predicted quantiles, one column per level.
    levels : array-like of shape (n_levels,)
        Strictly increasing levels in ``(0, 1)``; at least two.
    crossing : {"sort", "raise"}, default="sort"
        What to do with rows whose quantiles decrease with the level (crossing quantiles, common
        when each level has its own model): ``"sort"`` sorts each row (the monotone
        rearrangement of Chernozhukov, Fernandez-Val and Galichon 2010 on the grid of levels,
        which never increases the pinball loss of the row); ``"raise"`` raises a ``ValueError``
        naming the first crossing row.

    Attributes
    ----------
    values : ndarray of shape (n_samples, n_levels)
        The quantiles after rearrangement (read-only).
    levels : ndarray of shape (n_levels,)
        The levels (read-only).

    Notes
    -----
    Every row is a mixture of uniform laws on the segments between consecutive knots
    ``(0, Q_i(0)), (tau_1, values[i, 0]), ..., (1, Q_i(1))`` with the level differences as
    masses (an atom where two knots are equal, e.g. a repeated quantile or a flat outer
    segment). Everything below is exact for this interpolated law:

    * ``cdf`` (right-continuous, with jumps at atoms), ``ppf``, ``mean``, ``variance``,
      sampling (``ppf`` of uniforms), and the left limit of the CDF used by the randomised PIT;
    * ``log_pdf``: the density is piecewise constant (a segment's mass over its width), ``-inf``
      outside ``[Q_i(0), Q_i(1)]``; rows with an atom have no density and ``log_pdf`` (so
      ``nll``) refuses them with a ``ValueError``;
    * the CRPS, ``2 int_0^1 (1{y < Q(u)} - u)(Q(u) - y) du`` integrated segment by segment.
      The ``"quantile_score"`` estimator, ``(2 / q) sum_j pinball_{tau_j}(y, values[:, j])``
      (scoringrules' ``crps_quantile``), uses the predicted quantiles only: an equal-weight
      Riemann sum of that integral, biased for finite ``q`` (it ignores the interpolation and
      the tails beyond the outer levels, and over-weights crowded levels; about 1% of the CRPS
      for 9 evenly spread levels of a normal law), consistent only as the levels fill
      ``(0, 1)`` evenly;
    * the kernel expectations ``E k(X, y)`` and ``E k(X, X')`` of the Gaussian and exponential
      target kernels (sums over pairs of segments of closed-form integrals, so ``skce``,
      ``ucme`` and their tests need no Monte-Carlo step), accurate to about ``1e-13`` for
      segment widths from 0 to ``1e3`` length scales;
    * the 2-Wasserstein distance ``(int_0^1 (Q(u) - Q'(u))^2 du)^(1/2)``, piecewise quadratic
      on the union of both batches' levels; batches with equal levels share a Euclidean
      embedding of dimension ``q + 2``.

    Examples
    --------
    >>> from skcalib.distributions import Quantiles
    >>> d = Quantiles([[-1.0, 0.0, 1.0]], levels=[0.25, 0.5, 0.75])
    >>> d.ppf(0.5), d.cdf(0.5), d.mean
    (array([0.]), array([0.625]), array([0.]))
    """

    _family = "quantiles"
    dim = None
    _univariate = True

    def __init__(self, values, levels, *, crossing="sort"):
        v = _float_array(values, "values", ndim=(2,))
        tau = _check_levels(levels, v.shape[1])
        check_option(crossing, "crossing", ("sort", "raise"))
        crossed = np.any(np.diff(v, axis=1) < 0, axis=1)
        if crossed.any():
            if crossing == "raise":
                i = int(np.flatnonzero(crossed)[0])
                raise ValueError(
                    f"values must increase with the level in every row; row {i} has crossing "
                    "quantiles (pass crossing='sort' to sort each row).")
            v = np.sort(v, axis=1)
        self.values = _read_only_float_copy(v)
        self.levels = _read_only_float_copy(tau)
        self.n_samples = v.shape[0]
        # the knots of the quantile function: levels 0, tau..., 1 and the values there
        u = np.concatenate([[0.0], tau, [1.0]])
        lo_slope = (v[:, 1] - v[:, 0]) / (tau[1] - tau[0])
        hi_slope = (v[:, -1] - v[:, -2]) / (tau[-1] - tau[-2])
        q = np.concatenate([(v[:, 0] - tau[0] * lo_slope)[:, None], v,
                            (v[:, -1] + (1.0 - tau[-1]) * hi_slope)[:, None]], axis=1)
        self._u = _read_only_float_copy(u)
        self._q = _read_only_float_copy(q)
        self._freeze()

    @property
    def n_levels(self):
        """Number of levels (``values.shape[1]``)."""
        return self.levels.size

    @property
    def mean(self):
        """Means of the interpolated laws, shape ``(n_samples,)``."""
        du = np.diff(self._u)
        return 0.5 * (self._q[:, :-1] + self._q[:, 1:]) @ du

    @property
    def variance(self):
        """Variances of the interpolated laws, shape ``(n_samples,)``."""
        du = np.diff(self._u)
        d = self._q - self.mean[:, None]     # centred: no cancellation for large offsets
        a, b = d[:, :-1], d[:, 1:]
        return np.maximum((a * a + a * b + b * b) @ du / 3.0, 0.0)

    def _take(self, rows):
        return Quantiles(self.values[rows], self.levels)

    @classmethod
    def _concatenate(cls, dists):
        # the union of the levels; with linear tails, adding a knot keeps every quantile
        # function unchanged, so the concatenation is exact
        tau = np.unique(np.concatenate([d.levels for d in dists]))
        vals = [d._quantiles_at(tau) for d in dists]
        return cls(np.concatenate(vals), tau)

    def _quantiles_at(self, tau):
        """``Q_i(tau_j)`` for every row and every level of the 1-D array ``tau``."""
        k = np.clip(np.searchsorted(self._u, tau, side="right") - 1, 0, self._u.size - 2)
        t = (tau - self._u[k]) / (self._u[k + 1] - self._u[k])
        return self._q[:, k] + t * (self._q[:, k + 1] - self._q[:, k])

    def _cdf_mapped(self, knots, values):
        # R(F_i) exactly, as a Quantiles: F_i^{-1}(R^{-1}(p)) is piecewise linear with kinks
        # only at the levels p in values (the kinks of R^{-1}) and R(levels) (those of
        # F_i^{-1}), the same for every row, and linear below the first and above the last, so
        # one more level halfway into each tail makes the linear tails reproduce it. R is
        # strictly increasing here (quantile recalibration without atoms): R^{-1} interpolates.
        inner = np.unique(np.concatenate([values[1:-1], np.interp(self.levels, knots, values)]))
        inner = inner[(inner > 0.0) & (inner < 1.0)]
        p = np.unique(np.concatenate([[0.5 * inner[0]], inner, [0.5 * (1.0 + inner[-1])]]))
        return Quantiles(self._quantiles_at(np.interp(p, values, knots)), p)

    def _draw(self, rng, m):
        return self._ppf_rows(rng.uniform(size=(m, self.n_samples)))

    def _ppf_rows(self, p):
        """``Q_i(p[..., i])`` for probabilities ``p`` whose last axis runs over the rows."""
        u = self._u
        k = np.clip(np.searchsorted(u, p, side="right") - 1, 0, u.size - 2)
        rows = np.arange(self.n_samples)
        t = (p - u[k]) / (u[k + 1] - u[k])
        lo, hi = self._q[rows, k], self._q[rows, k + 1]
        return lo + t * (hi - lo)

    def cdf(self, y):
        """CDF of the interpolated laws (right-continuous; a jump at an atom).

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        y = np.broadcast_to(self._check_y(y), (self.n_samples,))[:, None]
        lo, hi = self._q[:, :-1], self._q[:, 1:]
        du = np.diff(self._u)
        width = hi - lo
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(width > 0, np.clip((y - lo) / width, 0.0, 1.0),
                            (y >= lo).astype(np.float64))
        # beyond the support exactly 0 and 1 (the level widths need not sum to 1 in floats)
        out = np.minimum(frac @ du, 1.0)
        return np.where(y[:, 0] >= self._q[:, -1], 1.0, out)

    def ppf(self, q):
        """Quantile function: linear interpolation of the knots, linear tails.

        Parameters
        ----------
        q : float or array-like of shape (n_samples,)
            Probabilities in ``[0, 1]`` (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        q = np.broadcast_to(_check_q(q, self.n_samples), (self.n_samples,))
        return self._ppf_rows(np.asarray(q, dtype=np.float64))

    def _segment_fractions(self, y, left):
        """Per segment, the fraction of its mass below ``y`` (``<= y``, or ``< y`` if ``left``)."""
        y = np.broadcast_to(self._check_y(y), (self.n_samples,))[:, None]
        lo, hi = self._q[:, :-1], self._q[:, 1:]
        width = hi - lo
        atom = (y > lo) if left else (y >= lo)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(width > 0, np.clip((y - lo) / width, 0.0, 1.0),
                            atom.astype(np.float64))

    def _cdf_left(self, y):
        """``P(Y_i < y_i)``: the CDF less the atoms at ``y`` (rows with repeated quantiles)."""
        return np.minimum(self._segment_fractions(y, left=True) @ np.diff(self._u), 1.0)

    def _moments(self, unit=1.0):
        q = self._q / unit
        du = np.diff(self._u)
        mu = 0.5 * (q[:, :-1] + q[:, 1:]) @ du
        d = q - mu[:, None]
        a, b = d[:, :-1], d[:, 1:]
        return mu[:, None], np.maximum((a * a + a * b + b * b) @ du / 3.0, 0.0)

    def _atom_rows(self):
        return np.any(self._q[:, 1:] <= self._q[:, :-1], axis=1)

    def log_pdf(self, y):
        """Log-density of the interpolated laws (piecewise constant between the knots).

        On the segment between two knots the density is the segment's probability over its
        width; outside the support ``[Q_i(0), Q_i(1)]`` it is 0 (``-inf`` here). Rows with
        repeated quantiles have an atom, hence no density, and are refused.

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)

        Raises
        ------
        ValueError
            If a row has two equal knots (an atom: no density).
        """
        y = np.broadcast_to(self._check_y(y), (self.n_samples,))
        atoms = self._atom_rows()
        if atoms.any():
            i = int(np.flatnonzero(atoms)[0])
            raise ValueError(
                f"Quantiles row {i} has repeated quantiles (equal values at two levels, or a "
                "flat tail), i.e. an atom, so it has no density: log_pdf and the NLL are "
                "defined only for rows whose interpolated quantiles strictly increase; score "
                "such predictions with crps or the kernel calibration errors.")
        q, du = self._q, np.diff(self._u)
        k = (q[:, 1:-1] <= y[:, None]).sum(axis=1)      # the segment [q_k, q_k+1) holding y
        rows = np.arange(self.n_samples)
        dens = du[k] / (q[rows, k + 1] - q[rows, k])
        inside = (y >= q[:, 0]) & (y <= q[:, -1])
        with np.errstate(divide="ignore"):
            return np.where(inside, np.log(dens), -np.inf)

    # -- CRPS -------------------------------------------------------------------------------------
    def _crps(self, y):
        # CRPS = 2 int_0^1 (1{y < Q(u)} - u)(Q(u) - y) du: on each segment Q is linear; split it
        # where Q crosses y, and integrate the two non-negative quadratics exactly (Simpson)
        y = np.asarray(y, dtype=np.float64)
        c = self.mean                       # centred: no cancellation for large offsets
        q = self._q - c[:, None]
        y = (y - c)[:, None]
        u0, u1 = self._u[:-1], self._u[1:]
        q0, q1 = q[:, :-1], q[:, 1:]
        width = q1 - q0
        with np.errstate(divide="ignore", invalid="ignore"):
            frac = np.where(width > 0, np.clip((y - q0) / width, 0.0, 1.0),
                            (y >= q0).astype(np.float64))
        us = u0 + frac * (u1 - u0)          # Q <= y on [u0, us], Q >= y on [us, u1]
        qa = np.minimum(y, q1)              # Q(us) seen from the left part ...
        qb = np.maximum(y, q0)              # ... and from the right part
        left = (us - u0) / 6.0 * (u0 * (y - q0) + 2.0 * (u0 + us) * (y - 0.5 * (q0 + qa))
                                  + us * (y - qa))
        right = (u1 - us) / 6.0 * ((1.0 - us) * (qb - y)
                                   + 2.0 * (2.0 - us - u1) * (0.5 * (qb + q1) - y)
                                   + (1.0 - u1) * (q1 - y))
        return np.maximum(2.0 * (left + right).sum(axis=1), 0.0)

    _crps_estimators = ("quantile_score",)

    def _crps_estimate(self, y, estimator):
        """CRPS estimates other than the exact one (``_crps``): ``"quantile_score"``.

        ``"quantile_score"`` is ``(2 / q) sum_j pinball_{tau_j}(y, values[:, j])`` with
        ``pinball_tau(y, v) = (1{y < v} - tau)(v - y)`` (as scoringrules' ``crps_quantile``):
        an equal-weight Riemann sum of ``CRPS = 2 int_0^1 pinball_u(y, Q(u)) du`` on the
        levels. It uses only the predicted quantiles, not the interpolation; it is exact only in
        the limit of levels filling ``(0, 1)`` evenly (``tau_j = (j - 1/2) / q``, ``q`` large).
        For finite ``q`` it misses the tails below ``tau_1`` and above ``tau_q`` (weighted as if
        the end levels stood for them), the curvature between the levels, and, for unevenly
        spaced levels, it over-weights the crowded ones.
        """
        if estimator != "quantile_score":
            raise ValueError(f"estimator={estimator!r} is not available for Quantiles "
                             "predictions; this family supports estimator in "
                             "{None, 'quantile_score'}.")
        y = np.broadcast_to(self._check_y(y), (self.n_samples,))[:, None]
        v = self.values
        loss = ((y < v).astype(np.float64) - self.levels) * (v - y)
        return 2.0 * loss.mean(axis=1)

    # -- 2-Wasserstein ------------------------------------------------------------------------
    def _embedding(self):
        # W2^2 = int (Q - Q')^2 = d^T A d for the knot differences d (both linear between the
        # common knots): A = L L^T gives the embedding q L
        return self._q @ _w2_factor(self._u)

    def _embedding_key(self):
        return ("quantiles",) + tuple(self.levels.tolist())

    def _w2_squared(self, i, other, j):
        i, j = np.broadcast_arrays(np.asarray(i), np.asarray(j))
        if self._embedding_key() == other._embedding_key():
            E1, E2 = self._embedding(), other._embedding()
        else:   # the union of both grids of levels: both quantile functions stay linear
            u = np.union1d(self._u, other._u)
            L = _w2_factor(u)
            E1, E2 = self._quantiles_at(u) @ L, other._quantiles_at(u) @ L
        shape = i.shape
        i, j = i.ravel(), j.ravel()
        out = np.empty(i.shape)
        step = max(1, _BLOCK_ITEMS // E1.shape[1])
        for s in range(0, i.size, step):
            d = E1[i[s:s + step]] - E2[j[s:s + step]]
            out[s:s + step] = np.einsum("ij,ij->i", d, d)
        return out.reshape(shape)

    def _pair_cost(self):
        """The kernel expectations hold a grid of knot differences, ``(q + 2)**2`` per pair."""
        return self._u.size ** 2


def _w2_factor(u):
    """``L`` with ``L L^T = A``, ``int_0^1 D(t)^2 dt = d^T A d`` for ``D`` linear between the
    knots ``u`` with values ``d`` (``A`` tridiagonal: ``du (d0^2 + d0 d1 + d1^2) / 3``)."""
    du = np.diff(u)
    A = np.zeros((u.size, u.size))
    idx = np.arange(du.size)
    A[idx, idx] += du / 3.0
    A[idx + 1, idx + 1] += du / 3.0
    A[idx, idx + 1] = A[idx + 1, idx] = du / 6.0
    return np.linalg.cholesky(A)


# --------------------------------------------------------------------------------------------
# kernel expectations (registered with skcalib._expectations)
#
# A row is a mixture of uniform laws on its segments, so e1 = sum_k du_k S_k and
# e2 = sum_{k,l} du_k du'_l S_kl, with S the kernel averaged over one uniform (or two). In
# units of the kernel (Gaussian exp(-t^2 / 2), exponential exp(-|t|)), with widths h:
#
# * both widths > _WIDE: second differences of an antiderivative on the grid of knot
#   differences, divided by h h' (rounding error about 4 eps / (h h') <= 5e-14); the
#   antiderivative's |t| part contributes the overlap of the two segments exactly;
# * a width <= _WIDE (near-atoms, atoms): Gaussian: Taylor series of the box averages in the
#   small width(s) (order 8; truncation below 1e-15 for widths <= 0.1), exponential: the
#   exact split of the segments at each other's ends into pieces with positive terms only.

#: Segment widths (in units of the target kernel) at most this use the small-width formulas.
_WIDE = 0.1
#: Distances (in kernel units) beyond which the Gaussian kernel is 0 in double precision.
_FAR = 40.0
_SQRT_HALF_PI = math.sqrt(0.5 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
#: Box-average Taylor coefficients: S_h f = sum_k h^(2k) f^(2k) / (4^k (2k + 1)!).
_BOX = [1.0 / (4.0 ** k * math.factorial(2 * k + 1)) for k in range(5)]


class _QuantilesOps(TargetOps):
    """Quantiles predictions, Gaussian or exponential target kernel: exact sums over segments.

    ``P`` places the knots of the rows, ``(..., q + 2)``, with the segments' masses ``(q + 1,)``
    (common to the batch). The sums loop over blocks of pairs so that no temporary exceeds
    about ``_BLOCK_ITEMS`` numbers beyond the tile itself.
    """

    def __init__(self, dist, y, ky):
        super().__init__(y, ky)
        self.q, self.du = dist._q, np.diff(dist._u)
        self.gauss = ky.kind == "gauss"

    def P(self, idx, axis):
        return place(self.q, idx, axis), self.du

    def e1(self, P, Y):
        (x, du) = P
        Y = np.asarray(Y, dtype=np.float64)
        lead = np.broadcast_shapes(x.shape[:-1], Y.shape)
        x = np.broadcast_to(x, lead + x.shape[-1:]).reshape(-1, x.shape[-1])
        Y = np.broadcast_to(Y, lead).reshape(-1)
        out = np.empty(Y.shape)
        step = max(1, _BLOCK_ITEMS // (4 * x.shape[1]))
        f = _gauss_e1 if self.gauss else _exp_e1
        for s in range(0, Y.size, step):
            out[s:s + step] = f(x[s:s + step], Y[s:s + step], self.ky.unit) @ du
        return out.reshape(lead)

    def e2(self, P, Q):
        (x, du), (xq, duq) = P, Q
        lead = np.broadcast_shapes(x.shape[:-1], xq.shape[:-1])
        x = np.broadcast_to(x, lead + x.shape[-1:]).reshape(-1, x.shape[-1])
        xq = np.broadcast_to(xq, lead + xq.shape[-1:]).reshape(-1, xq.shape[-1])
        out = np.empty(x.shape[0])
        step = max(1, _BLOCK_ITEMS // (4 * x.shape[1] * xq.shape[1]))
        for s in range(0, out.size, step):
            out[s:s + step] = _e2_sum(x[s:s + step], du, xq[s:s + step], duq, self.ky.unit,
                                      self.gauss)
        return out.reshape(lead)


def _segments(x, unit):
    """Widths ``(B, K)`` of the segments between knots ``x`` ``(B, K + 1)`` in kernel units, and
    their midpoints (raw units)."""
    with np.errstate(over="ignore"):
        h = np.diff(x, axis=1) / unit
    return h, 0.5 * x[:, :-1] + 0.5 * x[:, 1:]


def _hermite(t, n):
    """Probabilists' Hermite polynomials ``He_0 .. He_n`` at ``t`` (a list)."""
    He = [np.ones_like(t), t]
    for k in range(1, n):
        He.append(t * He[k] - k * He[k - 1])
    return He


def _phi_difference(x, y):
    """``Phi1(x) - Phi1(y)`` for ``x >= y``, ``Phi1(t) = int_0^t exp(-s^2 / 2) ds``, without
    cancellation in the tails (erfc where both arguments lie on one side)."""
    r = math.sqrt(0.5)
    upper = special.erfc(np.maximum(y, 0.0) * r) - special.erfc(np.maximum(x, 0.0) * r)
    lower = special.erfc(np.maximum(-x, 0.0) * r) - special.erfc(np.maximum(-y, 0.0) * r)
    both = special.erf(x * r) - special.erf(y * r)
    return _SQRT_HALF_PI * np.where(y >= 0, upper, np.where(x <= 0, lower, both))


def _gauss_box(m, hs, hb):
    """``E exp(-(m + hs V - hb V')^2 / 2)`` for independent ``V, V' ~ U(-1/2, 1/2)``, in kernel
    units, where ``hs <= _WIDE`` (``hs = 0``: a point); ``m >= 0``."""
    out = np.zeros(m.shape)
    near = m - 0.5 * (hs + hb) < _FAR
    both = near & (hb <= _WIDE)
    if both.any():      # Taylor series in both widths around m
        t, a, b = m[both], hs[both] ** 2, hb[both] ** 2
        c = _BOX
        He = _hermite(t, 8)
        M = [c[1] * (a + b),
             c[2] * (a * a + b * b) + c[1] ** 2 * a * b,
             c[3] * (a ** 3 + b ** 3) + c[1] * c[2] * a * b * (a + b),
             c[4] * (a ** 4 + b ** 4) + c[1] * c[3] * a * b * (a * a + b * b)
             + c[2] ** 2 * (a * b) ** 2]
        series = 1.0 + M[0] * He[2] + M[1] * He[4] + M[2] * He[6] + M[3] * He[8]
        out[both] = np.exp(-0.5 * t * t) * series
    mid = near & (hb > _WIDE)
    if mid.any():       # exact box average over hb of the Taylor series in hs
        t, a, w = m[mid], hs[mid] ** 2, hb[mid]
        x, y = t + 0.5 * w, t - 0.5 * w
        Hx, Hy = _hermite(x, 7), _hermite(y, 7)
        px, py = np.exp(-0.5 * x * x), np.exp(-0.5 * y * y)
        total = _phi_difference(x, y)
        for j in range(1, 5):   # D^(2j-1) phi = -He_(2j-1) phi
            total += _BOX[j] * a ** j * (Hy[2 * j - 1] * py - Hx[2 * j - 1] * px)
        out[mid] = total / w
    return out


def _gauss_tail(s):
    """``G(s) - sqrt(pi/2) |s|`` for ``G(t) = t Phi1(t) + exp(-t^2 / 2)`` (``G'' = exp(-t^2/2)``):
    ``exp(-s^2/2) - |s| sqrt(pi/2) erfc(|s| / sqrt 2)``, bounded and decaying."""
    s = np.minimum(np.abs(s), _FAR)     # 0 beyond (both terms underflow), also for inf
    g = special.erfc(s * math.sqrt(0.5))
    g *= s
    g *= -_SQRT_HALF_PI
    g += np.exp(-0.5 * s * s)
    return g


def _gauss_e1(x, y, unit):
    """Average Gaussian kernel between each segment's uniform law and ``y``, ``(B, K)``."""
    h, mid = _segments(x, unit)
    with np.errstate(over="ignore", invalid="ignore"):
        t = (x - y[:, None]) / unit
        E = special.erfc(np.abs(t) * math.sqrt(0.5))    # one erfc per knot, then by sides:
        lo, hi = t[:, :-1], t[:, 1:]                     # Phi1(hi) - Phi1(lo) without cancellation
        S = np.where(lo >= 0, E[:, :-1] - E[:, 1:],
                     np.where(hi <= 0, E[:, 1:] - E[:, :-1], 2.0 - E[:, :-1] - E[:, 1:]))
        S *= _SQRT_HALF_PI
        S /= h
    small = h <= _WIDE
    if small.any():
        with np.errstate(over="ignore"):
            m = np.abs(mid - y[:, None])[small] / unit
        S[small] = _gauss_box(m, np.zeros(m.shape), h[small])
    return S


def _exp_e1(x, y, unit):
    """Average exponential kernel between each segment's uniform law and ``y``, ``(B, K)``."""
    h, _ = _segments(x, unit)
    with np.errstate(over="ignore", invalid="ignore"):
        t = (x - y[:, None]) / unit
        E = np.exp(-np.abs(t))
        lo, hi = t[:, :-1], t[:, 1:]
        S = np.where(lo >= 0, E[:, :-1] - E[:, 1:],
                     np.where(hi <= 0, E[:, 1:] - E[:, :-1], 2.0 - E[:, :-1] - E[:, 1:])) / h
    small = h <= _WIDE
    if small.any():
        lo, hi, w = t[:, :-1][small], t[:, 1:][small], h[small]
        with np.errstate(over="ignore", invalid="ignore"):
            S[small] = np.where(lo >= 0, np.exp(-lo) * _g(w), np.where(
                hi <= 0, np.exp(hi) * _g(w),
                (-np.expm1(lo) - np.expm1(-hi)) / np.where(w > 0, w, 1.0)))
    return S


def _g(u):
    """``(1 - exp(-u)) / u``, 1 at ``u = 0``: the average of ``exp(-t)`` over ``[0, u]``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(u > 0, -np.expm1(-u) / np.where(u > 0, u, 1.0), 1.0)


def _e2_sum(x1, du1, x2, du2, unit, gauss):
    """``e2`` between the rows of knots ``x1`` ``(B, K1 + 1)`` and ``x2`` (masses ``du``), ``(B,)``.

    Pairs of wide segments: with ``rho = du / h`` (densities in kernel units) and the jumps
    ``J_i = rho_(i-1) - rho_i`` at the knots, summation by parts turns the double sum of second
    differences of ``G`` (``G'' =`` the kernel) into ``J1^T (c F2(x1) - G J2)``: ``G`` minus its
    ``c |t| / 2`` part on the grid of knot differences, ``F2`` the CDF of row 2's wide segments
    at row 1's knots (the overlap term). Pairs with a narrow segment: the per-pair formulas.
    """
    h1, mid1 = _segments(x1, unit)
    h2, mid2 = _segments(x2, unit)
    wide1, wide2 = h1 > _WIDE, h2 > _WIDE
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        J1 = -np.diff(np.where(wide1, du1 / h1, 0.0), prepend=0.0, append=0.0, axis=1)
        J2 = -np.diff(np.where(wide2, du2 / h2, 0.0), prepend=0.0, append=0.0, axis=1)
        t = x1[:, :, None] - x2[:, None, :]
        t /= unit
        G = _gauss_tail(t) if gauss else np.exp(-np.abs(t, out=t), out=t)
        c = x2[:, None, :-1]
        w2 = np.diff(x2, axis=1)[:, None, :]
        F = np.clip((x1[:, :, None] - c) / np.where(w2 > 0, w2, 1.0), 0.0, 1.0)
    F = np.matmul(F, np.where(wide2, du2, 0.0)[:, :, None])[:, :, 0]
    F *= _SQRT_2PI if gauss else 2.0
    F -= np.matmul(G, J2[:, :, None])[:, :, 0]
    out = np.einsum("bi,bi->b", J1, F)
    narrow = ~(wide1[:, :, None] & wide2[:, None, :])
    if narrow.any():
        b, k, l = np.nonzero(narrow)
        if gauss:
            H1, H2 = h1[b, k], h2[b, l]
            with np.errstate(over="ignore"):
                m = np.abs(mid1[b, k] - mid2[b, l]) / unit
            S = _gauss_box(m, np.minimum(H1, H2), np.maximum(H1, H2))
        else:
            S = _exp_box(x1[b, k], x1[b, k + 1], x2[b, l], x2[b, l + 1], unit)
        out += np.bincount(b, weights=S * du1[k] * du2[l], minlength=out.size)
    return out


def _exp_box(a, b, c, d, unit):
    """``E exp(-|X - X'| / unit)`` for ``X ~ U[a, b]``, ``X' ~ U[c, d]`` (flat arrays; a zero
    width is a point), from the pieces into which each segment cuts the other: every term is
    positive, so atoms and tiny widths are exact."""
    swap = c < a                                  # make [a, b] the segment starting first
    a, b, c, d = (np.where(swap, c, a), np.where(swap, d, b), np.where(swap, a, c),
                  np.where(swap, b, d))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        h1, h2 = (b - a) / unit, (d - c) / unit
        out = np.exp(-(c - b) / unit) * _g(h1) * _g(h2)             # disjoint: c >= b
        inside = (c < b) & (d <= b)                                  # [c, d] in [a, b]
        al, be = (c - a) / unit, (b - d) / unit
        # every fraction divided before it is multiplied: widths may be far below 1e-154
        contained = (-np.expm1(-al) / h1 - np.expm1(-be) / h1) * _g(h2) + h2 / h1 * _r(h2)
        partial = (c < b) & (d > b)                                  # a <= c < b < d
        mu = (b - c) / unit
        ea, eb, em = -np.expm1(-al), -np.expm1(-(d - b) / unit), -np.expm1(-mu)
        fa, fb = ea / h1, eb / h2
        crossing = (fa * fb * np.exp(-mu) + fa * (em / h2) + mu / h1 * (mu / h2) * _r(mu)
                    + em / h1 * fb)
    return np.where(inside, contained, np.where(partial, crossing, out))


def _r(u):
    """``E exp(-|V - V'|)`` for ``V, V'`` independent uniform on ``[0, u]``:
    ``2 (u - 1 + exp(-u)) / u^2``, by its series below ``u = 0.1`` (no cancellation)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        direct = 2.0 * (u + np.expm1(-u)) / (u * u)
        series = sum(2.0 * (-u) ** k / math.factorial(k + 2) for k in range(10))
    return np.where(u < 0.1, series, direct)


register_expectations(Quantiles, GaussianKernel, _QuantilesOps)
register_expectations(Quantiles, ExponentialKernel, _QuantilesOps)
