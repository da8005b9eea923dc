"""The Mixture family ``sum_k weights[:, k] * components[k]`` (e.g. deep ensembles).

Besides the class (CDF and quantiles of univariate mixtures, moments, sampling, the mixture
Wasserstein distance by exact optimal transport through :mod:`._transport`, the CRPS of
Grimit et al. 2006 from the components' ``_mixture_abs*`` terms), this module registers with
:mod:`skcalib._expectations` the kernel expectations of mixtures (:class:`_MixtureOps`: all
pairs of components, for every component family with closed forms).

The component families are listed in ``_COMPONENT_FAMILIES``; :mod:`._recalibrated` (built on
mixtures) adds its class through :func:`register_component_family`.
"""

import math

import numpy as np
from scipy import special

from .._expectations import TargetOps, closed_ops, common_ops, place, register_expectations
from .._validation import check_scalar_param, row_sum_tolerance
from ..kernels import ExponentialKernel, GaussianKernel
from ._base import (Distribution, _check_q, _check_temperature, _crps_quantile_quadrature,
                    _float_array, _read_only_float_copy, _univariate_only, concatenate,
                    _variance_in_range, moment_unit)
from ._laplace import Laplace
from ._multivariate_normal import MultivariateNormal
from ._normal import Normal
from ._transport import _transport_cost

#: The classes of the batches a Mixture combines (exact classes, all components of one).
_COMPONENT_FAMILIES = [Normal, MultivariateNormal, Laplace]


def register_component_family(family):
    """Allow batches of ``family`` (a class) as the components of a :class:`Mixture`."""
    if family not in _COMPONENT_FAMILIES:
        _COMPONENT_FAMILIES.append(family)
    return family


class Mixture(Distribution):
    """Batch of finite mixtures ``sum_k weights[:, k] * components[k]`` (e.g. deep ensembles).

    Parameters
    ----------
    weights : array-like of shape (n_samples, n_components) or (n_components,)
        Non-negative, summing to one per row; a 1-D vector is shared by every row.
    components : list of Distribution
        ``n_components`` distributions of one family (Normal, MultivariateNormal, Laplace or
        Recalibrated: ``ppf`` by safeguarded Newton steps, CRPS by quadrature), each
        with ``n_samples`` rows: ``components[k][i]`` is component ``k`` of row ``i``.

    Notes
    -----
    The kernel expectations are sums over **all** pairs of components (the reference Julia code
    omits some; see the specification). The mixture Wasserstein distance ``MW2`` is computed by
    exact optimal transport between the component weights, vectorised over all pairs of rows: a
    permutation search when the weights are equal and the numbers of components agree, a closed
    form when either side has two components, and a batched transportation simplex (certified
    optimal by its reduced costs) otherwise; 1,000 rows of three-component mixtures take seconds
    in an SKCE. ``exp(-MW2**nu)`` is not known to be positive
    definite for ``nu > 1`` (Widmann et al.'s Theorem D.1 does not hold in general), so
    :class:`~skcalib.kernels.WassersteinKernel` warns for such exponents.

    Examples
    --------
    >>> from skcalib.distributions import Mixture, Normal
    >>> ens = Mixture([0.5, 0.5], [Normal([0.0, 1.0], 1.0), Normal([2.0, 1.0], 1.0)])
    >>> ens.mean
    array([1., 1.])
    """

    _family = "mixture"  # dispatch key of skcalib._expectations (no import cycle)

    def __init__(self, weights, components):
        if isinstance(components, Distribution) or not isinstance(components, (list, tuple)):
            raise TypeError("components must be a list of distributions.")
        components = list(components)
        if not components:
            raise ValueError("components must not be empty.")
        fam = type(components[0])
        if fam not in _COMPONENT_FAMILIES:
            raise TypeError(
                "mixture components must be Normal, MultivariateNormal, Laplace or Recalibrated; "
                f"got {fam.__name__}."
            )
        for c in components:
            if type(c) is not fam:
                raise TypeError("all mixture components must be of one family.")
            if c.n_samples != components[0].n_samples or c.dim != components[0].dim:
                raise ValueError("all mixture components must have the same rows and dimension.")
        n, M = components[0].n_samples, len(components)
        W = _float_array(weights, "weights", ndim=(1, 2))
        if W.ndim == 1:
            W = np.broadcast_to(W, (n, W.shape[0]))
        if W.shape != (n, M):
            raise ValueError(f"weights must have shape ({n}, {M}) or ({M},); got {np.shape(weights)}.")
        if np.any(W < 0):
            raise ValueError("weights must be non-negative.")
        if np.any(np.abs(W.sum(axis=1) - 1.0) > row_sum_tolerance(np.float64)):
            raise ValueError("weights must sum to 1 in every row.")
        self.weights = _read_only_float_copy(W)
        self.components = tuple(components)
        self.n_samples = n
        self.dim = components[0].dim
        self._freeze()

    @property
    def n_components(self):
        return len(self.components)

    @property
    def _univariate(self):
        return self.components[0]._univariate

    def _components_without_closed_forms(self):
        """Whether the components are univariate but not Normal or Laplace (Recalibrated): the
        CDF is then the weighted sum of theirs, the quantiles by safeguarded Newton steps."""
        return self.components[0]._univariate and type(self.components[0]) not in (Normal, Laplace)

    def _inner_distributions(self):
        return self.components

    def _draw_items(self):
        return (self.n_components + 1) * self.components[0]._draw_items()

    def _check_family_details(self, other, name):
        if type(self.components[0]) is not type(other.components[0]):
            raise TypeError(f"{name} is a mixture of a different component family "
                            f"({type(other.components[0]).__name__}, expected "
                            f"{type(self.components[0]).__name__}).")

    @classmethod
    def _concatenate(cls, dists):
        if any(d.n_components != dists[0].n_components for d in dists):
            raise ValueError("can only concatenate mixtures with the same number of components.")
        return Mixture(np.concatenate([d.weights for d in dists]),
                       [concatenate([d.components[k] for d in dists])
                        for k in range(dists[0].n_components)])

    def _crps(self, y):
        comps = self.components
        if not hasattr(comps[0], "_mixture_abs"):
            return _crps_quantile_quadrature(self, y)
        # Grimit et al. (2006): E|X - y| - E|X - X'| / 2 over all pairs of components.
        W = self.weights
        first = 0.0
        second = 0.0
        for k, ck in enumerate(comps):
            first = first + ck._mixture_abs(y, W[:, k])
            second = second + ck._mixture_abs_self(W[:, k] ** 2)
            for m in range(k + 1, len(comps)):
                second = second + 2.0 * W[:, k] * W[:, m] * ck._mixture_abs_pair(comps[m])
        return np.maximum(first - 0.5 * second, 0.0)

    @property
    def mean(self):
        return sum(self.weights[:, k].reshape((-1,) + (1,) * (c.mean.ndim - 1)) * c.mean
                   for k, c in enumerate(self.components))

    def _take(self, rows):
        return Mixture(self.weights[rows], [c._take(rows) for c in self.components])

    def _moments(self, unit=1.0):
        m = 0.0
        second = 0.0
        for k, c in enumerate(self.components):
            mk, vk = c._moments(unit)
            w = self.weights[:, k]
            m = m + w[:, None] * mk
            second = second + w * (vk + np.einsum("ij,ij->i", mk, mk))
        return m, np.maximum(second - np.einsum("ij,ij->i", m, m), 0.0)

    def _draw(self, rng, m):
        cdf = np.cumsum(self.weights, axis=1)
        u = rng.uniform(size=(m, self.n_samples, 1)) * cdf[:, -1:]
        which = np.minimum((u > cdf).sum(axis=2), self.n_components - 1)
        draws = np.stack([c._draw(rng, m) for c in self.components])  # (M, m, n, ...)
        idx = which.reshape((1,) + which.shape + (1,) * (draws.ndim - 3))
        return np.take_along_axis(draws, idx, axis=0)[0]

    @property
    def variance(self):
        """Variances of the mixtures: ``(n_samples,)``, or ``(n_samples, d)`` per coordinate."""
        if self.dim is None:
            return _variance_in_range(self)
        m = self.mean
        second = sum(self.weights[:, k].reshape(m.shape[:1] + (1,) * (m.ndim - 1))
                     * (c.variance + c.mean ** 2) for k, c in enumerate(self.components))
        return np.maximum(second - m ** 2, 0.0)

    def log_pdf(self, y):
        """Log-density of ``y[i]`` under row ``i``: ``log sum_k w_ik p_k(y_i)``.

        Parameters
        ----------
        y : float or array-like of shape (n_samples,), or (n_samples, d)
            Finite targets: one per row (vectors for multivariate components).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        # a component of weight 0 contributes nothing (not log(0) + inf = NaN at its point mass)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.stack([np.where(self.weights[:, k] > 0,
                                       np.log(self.weights[:, k]) + c.log_pdf(y), -np.inf)
                              for k, c in enumerate(self.components)], axis=1)
            top = terms.max(axis=1)
            top = np.where(np.isfinite(top), top, 0.0)
            return top + np.log(np.exp(terms - top[:, None]).sum(axis=1))  # -inf: below range

    def _univariate_parameters(self):
        """``(family, loc, scale)`` of univariate components as ``(n_samples, n_components)``."""
        fam = type(self.components[0])
        if fam not in (Normal, Laplace):
            return None
        loc = np.column_stack([c.loc for c in self.components])
        scale = np.column_stack([c.scale for c in self.components])
        return fam, loc, scale

    @staticmethod
    def _mixture_cdf_pdf(fam, x, W, loc, scale, pdf=True):
        """CDF (and density) of mixtures with parameters ``(m, K)`` at ``x`` of shape ``(m,)``."""
        pos = scale > 0
        s = np.where(pos, scale, 1.0)
        z = (x[:, None] - loc) / s
        if fam is Normal:
            F = np.where(pos, special.ndtr(z), (z >= 0).astype(np.float64))
            f = np.exp(-0.5 * z * z) / (math.sqrt(2 * math.pi) * s) if pdf else None
            if pdf:
                f = np.where(pos, f, np.where(z == 0, np.inf, 0.0))
        else:
            half = 0.5 * np.exp(-np.abs(z))
            F = np.where(z < 0, half, 1.0 - half)
            f = half / s if pdf else None
        with np.errstate(invalid="ignore"):  # 0 * inf of a zero-weight point mass
            dens = None if not pdf else np.nan_to_num(W * f, nan=0.0, posinf=np.inf).sum(axis=1)
        return (W * F).sum(axis=1), dens

    def cdf(self, y):
        """Cumulative distribution function ``sum_k weights[i, k] * F_k(y[i])``.

        Defined for mixtures of univariate components (Normal or Laplace); mixtures of
        multivariate normals raise a ``TypeError``.

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skcalib.distributions import Mixture, Normal
        >>> Mixture([0.5, 0.5], [Normal([0.0], 1.0), Normal([2.0], 1.0)]).cdf(1.0)
        array([0.5])
        """
        if self._components_without_closed_forms():
            # e.g. the cross-fitted ensembles of quantile recalibration
            y = _float_array(y, "y", ndim=(0, 1))
            if y.ndim == 1 and y.shape != (self.n_samples,):
                raise ValueError(f"y must have shape ({self.n_samples},); got {y.shape}.")
            return np.clip(sum(self.weights[:, k] * c.cdf(y)
                               for k, c in enumerate(self.components)), 0.0, 1.0)
        par = self._univariate_parameters()
        if par is None:
            raise TypeError(_univariate_only(self, "cdf"))
        fam, loc, scale = par
        y = self.components[0]._check_y(y)
        y = np.broadcast_to(y, (self.n_samples,))
        return np.clip(self._mixture_cdf_pdf(fam, y, self.weights, loc, scale, pdf=False)[0],
                       0.0, 1.0)

    def ppf(self, q, *, tol=1e-12, max_iter=200):
        """Quantile function: the smallest ``x`` with ``cdf(x) >= q``, by safeguarded Newton.

        Every row is solved at once (vectorised), starting from the quantile of the normal with
        the mixture's mean and variance: the quantile lies between the smallest and the
        largest of the components' ``q``-quantiles (components of positive weight), a bracket
        that each iteration narrows; a Newton step is taken when it stays strictly inside the
        bracket and at most halves the step before it (the ``rtsafe`` rule of Numerical Recipes,
        which keeps Newton from cycling at the kinks of Laplace densities), a bisection step
        otherwise, until the steps (or the bracket) fall below
        ``tol * max(1, |x|)``. ``q = 0`` and ``q = 1`` give the ends of the support.

        Parameters
        ----------
        q : float or array-like of shape (n_samples,)
            Probabilities in ``[0, 1]`` (a scalar is used for every row).
        tol : float, default=1e-12
            Relative tolerance on ``x``.
        max_iter : int, default=200
            Maximum number of iterations (bisection alone halves the bracket each time).

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skcalib.distributions import Mixture, Normal
        >>> Mixture([0.5, 0.5], [Normal([0.0], 1.0), Normal([2.0], 1.0)]).ppf(0.5)
        array([1.])
        """
        if self._components_without_closed_forms():
            return self._bisection_ppf(q, tol, max_iter)
        par = self._univariate_parameters()
        if par is None:
            raise TypeError(_univariate_only(self, "ppf"))
        fam, loc, scale = par
        check_scalar_param(tol, "tol", kind="real", min_val=0.0, include_min=False)
        check_scalar_param(max_iter, "max_iter", kind="int", min_val=1)
        q = np.broadcast_to(_check_q(q, self.n_samples), (self.n_samples,))
        W = self.weights
        comp = np.column_stack([c.ppf(q) for c in self.components])
        used = W > 0
        lo = np.where(used, comp, np.inf).min(axis=1)
        hi = np.where(used, comp, -np.inf).max(axis=1)
        # start from the quantile of the moment-matched normal, inside the bracket (moments in
        # units of their magnitude: variances of huge scales overflow)
        unit = moment_unit(self)
        m1, v1 = self._moments(unit)
        with np.errstate(invalid="ignore", over="ignore"):
            guess = np.clip((m1[:, 0] + np.sqrt(v1) * special.ndtri(q)) * unit, lo, hi)
        guess = np.where(np.isfinite(guess), guess, 0.5 * (lo + hi))
        out = np.where(q <= 0, lo, np.where(q >= 1, hi, guess))
        active = np.flatnonzero((q > 0) & (q < 1) & (lo < hi))
        x, a, b = out[active], lo[active], hi[active]
        step = b - a  # the previous step (Press et al.'s rtsafe: Newton must halve it)
        for _ in range(int(max_iter)):
            if active.size == 0:
                break
            F, f = self._mixture_cdf_pdf(fam, x, W[active], loc[active], scale[active])
            resid = F - q[active]
            below = resid < 0
            a = np.where(below, x, a)
            b = np.where(below, b, x)
            with np.errstate(divide="ignore", invalid="ignore"):
                newton = x - resid / f
            ok = (np.isfinite(newton) & (newton > a) & (newton < b)
                  & (np.abs(newton - x) <= 0.5 * step))
            x_new = np.where(ok, newton, 0.5 * (a + b))
            step = np.abs(x_new - x)
            width = tol * np.maximum(1.0, np.abs(x))
            # converged: a tiny step, a tiny bracket, or the cdf equal to q within rounding
            hit = np.abs(resid) <= 4.0 * np.finfo(np.float64).eps
            x_new = np.where(hit, x, x_new)
            done = hit | (np.abs(x_new - x) <= width) | (b - a <= width)
            out[active] = x_new
            keep = ~done
            active, x, a, b, step = active[keep], x_new[keep], a[keep], b[keep], step[keep]
        return out

    def _bisection_ppf(self, q, tol, max_iter):
        """Quantiles of mixtures of :class:`Recalibrated` components: Newton steps on the CDF
        inside the bracket of the components' quantiles, bisection where a step would leave it
        (the density is piecewise continuous, with kinks at the knots of each map)."""
        check_scalar_param(tol, "tol", kind="real", min_val=0.0, include_min=False)
        check_scalar_param(max_iter, "max_iter", kind="int", min_val=1)
        q = np.broadcast_to(_check_q(q, self.n_samples), (self.n_samples,))
        used = self.weights > 0
        comp = np.column_stack([c.ppf(q) for c in self.components])
        lo = np.where(used, comp, np.inf).min(axis=1)
        hi = np.where(used, comp, -np.inf).max(axis=1)
        out = np.where(q <= 0, lo, hi)
        active = np.flatnonzero((q > 0) & (q < 1) & (lo < hi))
        a, b = lo[active], hi[active]
        x = 0.5 * (a + b)
        for _ in range(int(max_iter)):
            if active.size == 0:
                break
            parts = [c[active] for c in self.components]
            W = self.weights[active]
            F = sum(W[:, k] * c.cdf(x) for k, c in enumerate(parts))
            with np.errstate(divide="ignore", over="ignore"):
                f = sum(W[:, k] * np.exp(c.log_pdf(x)) for k, c in enumerate(parts))
            resid = F - q[active]
            below = resid < 0
            a, b = np.where(below, x, a), np.where(below, b, x)
            # a Newton step where it stays inside the bracket, bisection otherwise
            with np.errstate(divide="ignore", invalid="ignore"):
                newton = x - resid / f
            ok = np.isfinite(newton) & (newton > a) & (newton < b)
            x_new = np.where(ok, newton, 0.5 * (a + b))
            width = tol * np.maximum(1.0, np.abs(x))
            # converged: the CDF equals q to 1e-13 (the density can have tall narrow steps, so
            # a small Newton step alone proves nothing), or the bracket is below tolerance
            hit = np.abs(resid) <= 1e-13
            done = hit | (b - a <= width)
            out[active[done]] = np.where(hit, x, b)[done]
            keep = ~done
            active, a, b, x = active[keep], a[keep], b[keep], x_new[keep]
        out[active] = x
        return out

    def tempered(self, temperature):
        """Every component temperature-scaled (covariances or scales times ``T``); weights kept.

        This is Definition F.1 applied to each component: the mixture's mean is unchanged, but
        the result is not ``p**(1/T)`` of the whole mixture (which is no longer a mixture).

        Parameters
        ----------
        temperature : float
            Positive finite temperature ``T`` (``T > 1`` widens, ``T < 1`` sharpens).

        Returns
        -------
        Mixture
            A new batch; ``self`` is unchanged.
        """
        T = _check_temperature(temperature)
        return Mixture(self.weights, [c.tempered(T) for c in self.components])

    def _w2_squared(self, i, other, j):
        """Squared mixture Wasserstein distance MW2^2 by exact optimal transport.

        Between rows of one batch the pair ``(i, j)`` is computed as ``(min, max)``, so that the
        distance matrix is exactly symmetric (the transport solvers need not treat the two
        sides alike to the last bit)."""
        shape = np.broadcast(i, j).shape
        i, j = np.broadcast_to(i, shape).ravel(), np.broadcast_to(j, shape).ravel()
        if other is self:
            i, j = np.minimum(i, j), np.maximum(i, j)
        M, Mq = self.n_components, other.n_components
        cost = np.empty((i.size, M, Mq))
        for k, ck in enumerate(self.components):
            for l, cl in enumerate(other.components):
                cost[:, k, l] = ck._w2_squared(i, cl, j)
        return _transport_cost(self.weights[i], other.weights[j], cost).reshape(shape)


# --------------------------------------------------------------------------------------------
# kernel expectations (registered with skcalib._expectations)


class _MixtureOps(TargetOps):
    """Mixtures: ``e1`` and ``e2`` by bilinearity over **all** pairs of components."""

    def __init__(self, dist, y, ky, comp_ops):
        super().__init__(comp_ops[0].y, ky)
        self.weights = dist.weights
        self.comps = comp_ops

    def targets(self, y):
        return self.comps[0].targets(y)

    def P(self, idx, axis):
        return [(place(self.weights[:, k], idx, axis), c.P(idx, axis))
                for k, c in enumerate(self.comps)]

    def e1(self, P, Y):
        return sum(w * c.e1(Pk, Y) for c, (w, Pk) in zip(self.comps, P))

    def e2(self, P, Q):
        c = self.comps[0]
        return sum(wk * wl * c.e2(Pk, Ql) for wk, Pk in P for wl, Ql in Q)

    def signature(self):
        return (type(self), type(self.comps[0]))


def _closed_ops(dist, y, ky, rotate):
    comps = [closed_ops(c, y, ky, rotate=False) for c in dist.components]
    if any(c is None for c in comps):
        return None
    if len({type(c) for c in comps}) != 1:
        # e.g. diagonal and full covariances among the components: one common form.
        return _common_ops(dist, y, ky)
    return _MixtureOps(dist, y, ky, comps)


def _common_ops(dist, y, ky):
    comps = [common_ops(c, y, ky) for c in dist.components]
    if any(c is None for c in comps):
        return None
    return _MixtureOps(dist, y, ky, comps)


register_expectations(Mixture, GaussianKernel, _closed_ops, common=_common_ops)
register_expectations(Mixture, ExponentialKernel, _closed_ops, common=_common_ops)
