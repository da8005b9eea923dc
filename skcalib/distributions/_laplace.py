"""The Laplace family (density ``exp(-|y - loc| / scale) / (2 scale)``) and its closed forms.

Besides the class, this module holds and registers with :mod:`skcalib._expectations` the
closed-form kernel expectations of Laplace predictions with the exponential (Laplacian) target
kernel (:class:`_LaplaceOps`: :func:`laplace_e1`, :func:`laplace_e2` and their scaled variants
for extreme length scales; the Gaussian target kernel falls back to Monte Carlo), and its CRPS
(``_crps``, and the terms ``E|X - y|``, ``E|X - X'|`` of the mixture CRPS).
"""

import math

import numpy as np

from .._expectations import LocationScaleOps, register_expectations
from ..kernels import ExponentialKernel
from ._base import _LocationScale, _check_q, _check_temperature, _standardised
from ._base import _variance_in_range


class Laplace(_LocationScale):
    """Batch of Laplace distributions with density ``exp(-|y - loc| / scale) / (2 * scale)``.

    Parameters
    ----------
    loc : array-like of shape (n_samples,)
        Locations (the means and medians).
    scale : float or array-like of shape (n_samples,)
        Positive scales (the variance is ``2 * scale**2``).

    Examples
    --------
    >>> from skcalib.distributions import Laplace
    >>> Laplace([0.0], [2.0]).variance
    array([8.])
    """

    _family = "laplace"  # dispatch key of skcalib._expectations (no import cycle)
    _default_target_kernel = ExponentialKernel
    _positive_scale = True

    @property
    def variance(self):
        return _variance_in_range(self)

    def _take(self, rows):
        return Laplace(self.loc[rows], self.scale[rows])

    def _moments(self, unit=1.0):
        s = self.scale / unit
        return self.loc[:, None] / unit, 2.0 * s * s

    def _draw(self, rng, m):
        return self.loc + self.scale * rng.laplace(size=(m, self.n_samples))

    def _embedding(self):
        return np.column_stack([self.loc, math.sqrt(2.0) * self.scale])

    def _w2_squared(self, i, other, j):
        return (self.loc[i] - other.loc[j]) ** 2 + 2.0 * (self.scale[i] - other.scale[j]) ** 2

    def log_pdf(self, y):
        """Log-density of ``y[i]`` under row ``i``.

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        y = self._check_y(y)
        with np.errstate(over="ignore"):  # -inf beyond the float range
            return -np.abs(_standardised(y, self.loc, self.scale)) - np.log(2.0 * self.scale)

    def cdf(self, y):
        """Cumulative distribution function: ``exp(z) / 2`` for ``z = (y - loc) / scale < 0``,
        ``1 - exp(-z) / 2`` otherwise.

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skcalib.distributions import Laplace
        >>> Laplace([0.0], [1.0]).cdf(0.0)
        array([0.5])
        """
        y = self._check_y(y)
        z = _standardised(y, self.loc, self.scale)
        half = 0.5 * np.exp(-np.abs(z))
        return np.where(z < 0, half, 1.0 - half)

    def ppf(self, q):
        """Quantile function ``loc - scale * sign(q - 1/2) * log(1 - 2 |q - 1/2|)``.

        ``q = 0`` and ``q = 1`` give ``-inf`` and ``inf``.

        Parameters
        ----------
        q : float or array-like of shape (n_samples,)
            Probabilities in ``[0, 1]`` (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skcalib.distributions import Laplace
        >>> Laplace([0.0], [1.0]).ppf(0.5)
        array([0.])
        """
        q = _check_q(q, self.n_samples)
        # log(2 q) below the median (exact for tiny q, where q - 1/2 would round to -1/2 and
        # give -inf), -log(2 (1 - q)) above
        lower = q < 0.5
        with np.errstate(divide="ignore"):  # q = 0 or 1: log(0) = -inf, the end of the support
            t = np.where(lower, np.log(2.0 * np.where(lower, q, 0.25)),
                         -np.log1p(-2.0 * np.where(lower, 0.75, q) + 1.0))
        return self.loc + self.scale * t

    def tempered(self, temperature):
        """Temperature scaling (Definition F.1): ``Laplace(loc, T * scale)``; the mean is unchanged.

        Parameters
        ----------
        temperature : float
            Positive finite temperature ``T`` (``T > 1`` widens, ``T < 1`` sharpens).

        Returns
        -------
        Laplace
            A new batch; ``self`` is unchanged.
        """
        T = _check_temperature(temperature)
        return Laplace(self.loc, self.scale * T)

    def _crps(self, y):
        b = self.scale
        return _abs_laplace(y - self.loc, b) - 0.75 * b

    def _mixture_abs(self, y, w):
        """``w E|X - y|`` (a term of the mixture CRPS, Grimit et al. 2006)."""
        return w * _abs_laplace(y - self.loc, self.scale)

    def _mixture_abs_self(self, w2):
        """``w2 E|X - X'|`` for independent copies of every row."""
        return w2 * 1.5 * self.scale

    def _mixture_abs_pair(self, other):
        """``E|X - X'|`` for independent ``X`` of ``self`` and ``X'`` of ``other``."""
        return _abs_laplace_difference(self.loc - other.loc, self.scale, other.scale)

    def _temperature_statistic(self, y):
        z = _standardised(np.asarray(y, dtype=np.float64), self.loc, self.scale)
        return 2.0 * np.abs(z), 2


# --------------------------------------------------------------------------------------------
# kernel expectations (registered with skcalib._expectations)


class _LaplaceOps(LocationScaleOps):
    """Laplace predictions, exponential target kernel ``exp(-gamma |y - y'|)`` (1-D)."""

    def e1(self, P, Y):
        if self.ky.robust:
            return _laplace_e1_scaled(P[0], P[1], Y, self.ky.unit)
        return laplace_e1(P[0], P[1], Y, self.ky.gamma)

    def e2(self, P, Q):
        if self.ky.robust:
            return _laplace_e2_scaled(P[0], P[1], Q[0], Q[1], self.ky.unit)
        return laplace_e2(P[0], P[1], Q[0], Q[1], self.ky.gamma)


def _laplace_e1_core(a, t, r):
    """``E exp(-|X + z|)`` for ``X ~ Laplace(0, a)`` (unit rate) from ``a``, ``t = z`` and the
    ratio ``r = t / a`` (passed separately: exact when ``a`` and ``t`` over- or underflow).
    Flat arrays. Same two branches as :func:`laplace_e1`, the second written so that
    ``a = inf`` or ``a = 0`` give its limits instead of ``inf / inf``."""
    x = np.zeros(a.shape)
    np.multiply(r, a - 1.0, out=x, where=r > 0.0)               # t (a - 1) / a
    out = np.empty(a.shape)
    small = np.abs(x) < 1.0
    xs = x[small]
    rel = np.ones_like(xs)
    nz = xs != 0
    rel[nz] = np.expm1(xs[nz]) / xs[nz]
    ts = t[small]
    out[small] = np.exp(-ts) * (1.0 + ts * rel) / (a[small] + 1.0)
    big = ~small
    ab, tb, rb = a[big], t[big], r[big]
    # (a e^{-r} - e^{-t}) / ((a - 1)(a + 1)); a / ((a - 1)(a + 1)) = 1 / ((a - 1)(1 + 1/a)).
    coef = np.empty(ab.shape)
    hi = ab > 1.0
    coef[hi] = 1.0 / ((ab[hi] - 1.0) * (1.0 + 1.0 / ab[hi]))
    lo = ~hi
    coef[lo] = ab[lo] / ((ab[lo] - 1.0) * (ab[lo] + 1.0))
    out[big] = coef * np.exp(-rb) - np.exp(-tb) / ((ab - 1.0) * (ab + 1.0))
    return out


def _laplace_e1_scaled(loc, scale, y, unit):
    """:func:`laplace_e1` with ``gamma = 1 / unit`` at any ``unit`` (ratios formed from the raw
    values: ``scale / unit``, ``|loc - y| / unit``, ``|loc - y| / scale``)."""
    scale, dist = np.broadcast_arrays(np.asarray(scale, dtype=np.float64),
                                      np.abs(np.asarray(loc, dtype=np.float64) - y))
    shape = scale.shape
    scale, dist = scale.ravel(), dist.ravel()
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        out = _laplace_e1_core(scale / unit, dist / unit, dist / scale)
    return out.reshape(shape)


def _laplace_e2_scaled(loc1, scale1, loc2, scale2, unit):
    """:func:`laplace_e2` with ``gamma = 1 / unit`` at any ``unit``: the divided difference of
    ``F(s) = s e1(sqrt(s))`` with numerator and denominator divided by ``(S / unit)^2``,
    ``S = max(scale1, scale2)``, i.e. in the relative squared scales ``(scale / S)^2 <= 1``."""
    p, q, loc1, loc2 = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (scale1, scale2, loc1, loc2)))
    shape = p.shape
    p, q = p.ravel(), q.ravel()
    z = np.abs(loc1.ravel() - loc2.ravel())
    S = np.maximum(p, q)
    out = np.empty(p.shape)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        t = z / unit

        def G(sig, idx):                        # sig e1(S sqrt(sig)) (F / (S/unit)^2)
            b = S[idx] * np.sqrt(sig)
            return sig * _laplace_e1_core(b / unit, t[idx], z[idx] / b)

        s1, s2 = (p / S) ** 2, (q / S) ** 2
        near = np.abs(s1 - s2) < _DD_TOL * np.maximum(s1, s2)
        far = ~near
        if np.any(far):
            a, b = s1[far], s2[far]
            out[far] = (G(a, far) - G(b, far)) / (a - b)
        if np.any(near):
            m = 0.5 * (s1[near] + s2[near])
            h = 1e-3 * m
            out[near] = (8.0 * (G(m + h, near) - G(m - h, near))
                         - (G(m + 2 * h, near) - G(m - 2 * h, near))) / (12.0 * h)
    return out.reshape(shape)


_DD_TOL = 1e-5


def laplace_e1(loc, scale, y, gamma):
    """``E exp(-gamma |Z - y|)`` for ``Z ~ Laplace(loc, scale)`` (cancellation-free form)."""
    a = np.asarray(scale, dtype=np.float64) * gamma
    t = np.abs(np.asarray(loc, dtype=np.float64) - y) * gamma
    a, t = np.broadcast_arrays(a, t)
    shape = a.shape
    a, t = a.ravel(), t.ravel()
    x = t * (a - 1.0) / a
    out = np.empty(a.shape)
    small = np.abs(x) < 1.0
    # |x| < 1: e^{-t} (1 + t expm1(x)/x) / (a + 1); removable singularity at a = 1 (x = 0).
    xs = x[small]
    rel = np.ones_like(xs)
    nz = xs != 0
    rel[nz] = np.expm1(xs[nz]) / xs[nz]
    out[small] = np.exp(-t[small]) * (1.0 + t[small] * rel) / (a[small] + 1.0)
    big = ~small
    ab, tb = a[big], t[big]
    out[big] = (ab * np.exp(-tb / ab) - np.exp(-tb)) / ((ab - 1.0) * (ab + 1.0))
    return out.reshape(shape)


def laplace_e2(loc1, scale1, loc2, scale2, gamma):
    """``E exp(-gamma |Z - Z'|)`` for independent ``Z ~ Laplace(loc1, scale1)``,
    ``Z' ~ Laplace(loc2, scale2)``.

    In units ``gamma = 1`` (scales ``p, q``, distance ``z``) the paper's five cases are one
    formula: ``e2 = (p^2 e1(p) - q^2 e1(q)) / (p^2 - q^2)``, the divided difference of
    ``F(s) = s e1(sqrt(s))`` at ``s = p^2, q^2``, where ``e1(a)`` is the one-point expectation for
    scale ``a`` (itself evaluated without cancellation at ``a = 1``). Where the relative gap
    ``|p^2 - q^2| / max(p^2, q^2)`` is below 1e-5 the divided difference is replaced by a
    five-point derivative of ``F`` at the midpoint (error ~1e-11 relative); this covers
    ``beta = beta'``, ``beta gamma = 1`` and their neighbourhoods without special cases.
    """
    p, q, loc1, loc2 = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (scale1, scale2, loc1, loc2)))
    shape = p.shape
    p, q = p.ravel() * gamma, q.ravel() * gamma
    z = np.abs(loc1.ravel() - loc2.ravel()) * gamma

    def F(s, zz):
        return s * laplace_e1(0.0, np.sqrt(s), zz, 1.0)

    s1, s2 = p * p, q * q
    out = np.empty(s1.shape)
    near = np.abs(s1 - s2) < _DD_TOL * np.maximum(s1, s2)
    far = ~near
    if np.any(far):
        a, b, zz = s1[far], s2[far], z[far]
        out[far] = (F(a, zz) - F(b, zz)) / (a - b)
    if np.any(near):
        m, zz = 0.5 * (s1[near] + s2[near]), z[near]
        h = 1e-3 * m
        out[near] = (8.0 * (F(m + h, zz) - F(m - h, zz))
                     - (F(m + 2 * h, zz) - F(m - 2 * h, zz))) / (12.0 * h)
    return out.reshape(shape)


register_expectations(Laplace, ExponentialKernel, _LaplaceOps)


# --------------------------------------------------------------------------------------------
# CRPS


def _abs_laplace(c, b):
    """``E|c + L|`` for ``L ~ Laplace(0, b)``: ``|c| + b exp(-|c| / b)``."""
    a = np.abs(c)
    return a + b * np.exp(-a / b)


def _abs_laplace_difference(c, b1, b2):
    """``E|c + L1 - L2|`` for independent ``L1 ~ Laplace(0, b1)``, ``L2 ~ Laplace(0, b2)``.

    The characteristic function of ``L1 - L2`` is ``1 / ((1 + b1^2 t^2)(1 + b2^2 t^2))``; its
    partial fractions make ``L1 - L2`` the signed mixture ``(b1^2 L(b1) - b2^2 L(b2)) /
    (b1^2 - b2^2)``, so the expectation is the divided difference of ``h(s) = s g(c, sqrt(s))``
    (``g`` = :func:`_abs_laplace`) at ``s = b1^2, b2^2``. For nearly equal scales the derivative
    ``h'(s) = |c| + exp(-|c| / b) (3 b + |c|) / 2`` at the midpoint replaces it (error of order
    ``(s1 - s2)^2``).
    """
    # The divided difference is homogeneous in s: computed in the squared scales relative to
    # the larger one, (b / S)^2 <= 1, so that huge scales (1e300) do not overflow.
    S = np.maximum(b1, b2)
    s1, s2 = (b1 / S) ** 2, (b2 / S) ** 2
    a = np.abs(c)
    mid = 0.5 * (s1 + s2)
    close = np.abs(s1 - s2) <= 1e-3 * mid
    bm = S * np.sqrt(mid)
    deriv = a + np.exp(-a / bm) * (1.5 * bm + 0.5 * a)
    denom = np.where(close, 1.0, s1 - s2)
    diff = (s1 * _abs_laplace(c, b1) - s2 * _abs_laplace(c, b2)) / denom
    return np.where(close, deriv, diff)
