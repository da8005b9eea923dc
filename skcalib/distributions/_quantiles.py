"""The Quantiles family: predictions given as quantiles at fixed levels (quantile regression).

A row is the law whose quantile function interpolates the predicted quantiles linearly between
the levels and continues with the slope of the outermost segment down to level 0 and up to
level 1 (linear tails, bounded support). The law is a mixture of uniform distributions on the
segments between knots (an atom where two knots are equal), so its CDF, moments and
quantiles are exact piecewise formulas.
"""

import numpy as np

from .._validation import check_option
from ._base import Distribution, _check_q, _float_array, _read_only_float_copy


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

    def _draw(self, rng, m):
        u = rng.uniform(size=(m, self.n_samples))
        return np.stack([self._ppf_rows(u[s]) for s in range(m)])

    def _ppf_rows(self, p):
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
        return np.minimum(frac @ du, 1.0)

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
