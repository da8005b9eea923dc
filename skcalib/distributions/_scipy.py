"""The ScipyDistribution family: batches of continuous :mod:`scipy.stats` laws.

A frozen continuous ``scipy.stats`` distribution with vectorised parameters
(``scipy.stats.gamma(a, loc=..., scale=...)`` with arrays of shape ``(n,)``) is ``n`` predictive
distributions. This module holds the class that wraps one: it keeps the ``rv_continuous``
object and its parameters broadcast to ``(n,)``, delegates ``cdf``, ``ppf``, ``log_pdf``,
moments and sampling to scipy, and slices and concatenates by slicing the parameters. No
closed form is registered: the CRPS is the base's quantile quadrature, the kernel expectations
are the generic Monte-Carlo fallback of :mod:`skcalib._expectations`, the 2-Wasserstein
distance is a Gauss--Legendre quadrature of the quantile functions (a Euclidean embedding of
the quantiles at the nodes).

Internal API: :class:`ScipyDistribution` (public through :mod:`skcalib.distributions`),
:func:`frozen_scipy_kind` (``"continuous"``, ``"discrete"``, ``"other"`` or None) and
:func:`validated_parameters` (the checked ``rv`` and parameters of a frozen law), which
:func:`~skcalib.distributions.as_distribution` uses to recognise and convert scipy objects.
"""

import numpy as np
from scipy import stats

from ._base import (_GL_NODES, _GL_WEIGHTS, Distribution, _broadcast_rows, _check_q,
                    _crps_quantile_quadrature, _float_array, _read_only_float_copy)

#: Rows per chunk of the quadratures (256 nodes each).
_CHUNK_ROWS = 2048


def frozen_scipy_kind(obj):
    """``"continuous"`` for a frozen continuous ``scipy.stats`` distribution, ``"discrete"``
    for a frozen discrete one, ``"other"`` for any other object of :mod:`scipy.stats`
    (multivariate frozen laws, unfrozen generators, the new distribution classes), None for
    objects that do not come from scipy.stats."""
    rv = getattr(obj, "dist", None)
    if isinstance(rv, stats.rv_continuous) and hasattr(obj, "args") and hasattr(obj, "kwds"):
        return "continuous"
    if isinstance(rv, stats.rv_discrete):
        return "discrete"
    if type(obj).__module__.startswith("scipy.stats") or isinstance(
            obj, (stats.rv_continuous, stats.rv_discrete)):
        return "other"
    return None


def _parameter_names(rv):
    shapes = [s.strip() for s in rv.shapes.split(",")] if rv.shapes else []
    return shapes + ["loc", "scale"]


class ScipyDistribution(Distribution):
    """Batch of continuous ``scipy.stats`` distributions with one parameter set per row.

    Parameters
    ----------
    frozen : frozen continuous scipy.stats distribution
        For instance ``scipy.stats.gamma(a, loc=loc, scale=scale)`` whose parameters are arrays
        of shape ``(n_samples,)`` (scalars are broadcast against them). At least one parameter
        must be an array: a law with scalar parameters only does not say how many predictions
        it stands for (repeat it, e.g. ``scipy.stats.t(df, loc=np.zeros(n))``).

    Attributes
    ----------
    rv : scipy.stats.rv_continuous
        The scipy family (``scipy.stats.gamma``, ...).
    params : dict of str to ndarray of shape (n_samples,)
        The shape parameters, ``loc`` and ``scale`` of every row (read-only).

    Notes
    -----
    ``cdf``, ``ppf``, ``log_pdf``, ``mean``, ``variance`` and sampling are scipy's. The CRPS is
    the quantile quadrature of every family without a closed form (256 Gauss--Legendre nodes;
    about ``1e-5`` absolute for a standard normal, and inaccurate for laws without a finite
    mean, whose CRPS is infinite). The 2-Wasserstein distance is the same quadrature of
    ``int_0^1 (Q(t) - Q'(t))^2 dt`` (relative error about ``1e-4`` for normal laws; laws without
    a finite variance have no W2). The kernel expectations of the SKCE and UCME are Monte Carlo
    (``n_mc_samples`` draws per row: each expectation has a standard error of at most
    ``1 / sqrt(n_mc_samples)``, and every term of the unbiased estimate stays unbiased). Moments
    that scipy reports as infinite or undefined (Cauchy, Student's t with ``df <= 2``) make
    the moment-based quantities (``ence``, ``uce``, the ``"median"`` length scale of the target
    kernel, the kernel expectations) raise a ``ValueError``. For ``scipy.stats.norm`` and
    ``scipy.stats.laplace`` use :class:`Normal` and :class:`Laplace` (closed forms everywhere;
    :func:`as_distribution` converts them).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from skcalib.distributions import ScipyDistribution
    >>> d = ScipyDistribution(stats.gamma(np.array([1.0, 2.0]), scale=2.0))
    >>> d.mean, d.cdf(2.0).round(4)
    (array([2., 4.]), array([0.6321, 0.2642]))
    >>> d[1:].params["a"]
    array([2.])
    """

    _family = "scipy"
    dim = None
    _univariate = True

    def __init__(self, frozen):
        rv, params = validated_parameters(frozen, "frozen")
        self._set(rv, params)

    def _set(self, rv, params):
        self.rv = rv
        self.params = {s: _read_only_float_copy(a) for s, a in params.items()}
        self.n_samples = next(iter(self.params.values())).shape[0]
        self._freeze()

    @classmethod
    def _from_parameters(cls, rv, params):
        """A batch from parameters already validated (slices of a batch's parameters)."""
        obj = cls.__new__(cls)
        obj._set(rv, params)
        return obj

    def __repr__(self):
        return f"ScipyDistribution({self.rv.name}, n_samples={self.n_samples})"

    # -- parameters -------------------------------------------------------------------------
    @property
    def loc(self):
        """Locations (scipy's ``loc``), shape ``(n_samples,)``."""
        return self.params["loc"]

    @property
    def scale(self):
        """Scales (scipy's ``scale``), shape ``(n_samples,)``."""
        return self.params["scale"]

    def _args(self, rows=None, axis_front=False):
        """The parameters in scipy's order, the rows ``rows`` (None: all), shaped ``(1, k)``
        with ``axis_front`` (to broadcast against a leading axis of levels or draws)."""
        out = []
        for a in self.params.values():
            a = a if rows is None else a[rows]
            out.append(a[None, :] if axis_front else a)
        return out

    def frozen(self):
        """The batch as a frozen scipy distribution.

        Returns
        -------
        scipy.stats.rv_continuous_frozen
            ``rv`` frozen with the parameters of every row (arrays of shape ``(n_samples,)``).
        """
        return self.rv(*self._args())

    def _take(self, rows):
        return ScipyDistribution._from_parameters(
            self.rv, {s: a[rows] for s, a in self.params.items()})

    @classmethod
    def _concatenate(cls, dists):
        first = dists[0].rv
        for d in dists[1:]:
            if type(d.rv) is not type(first) or d.rv.name != first.name:
                raise TypeError("concatenate needs ScipyDistribution batches of one scipy "
                                f"family; got {first.name} and {d.rv.name}.")
        return cls._from_parameters(first, {s: np.concatenate([d.params[s] for d in dists])
                                            for s in dists[0].params})

    # -- scipy's functions ------------------------------------------------------------------
    def cdf(self, y):
        """Cumulative distribution function (scipy's ``cdf``).

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        y = self._check_y(y)
        return np.asarray(self.rv.cdf(y, *self._args()), dtype=np.float64)

    def ppf(self, q):
        """Quantile function (scipy's ``ppf``; ``q = 0`` and ``1`` give the support's ends).

        Parameters
        ----------
        q : float or array-like of shape (n_samples,)
            Probabilities in ``[0, 1]`` (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        q = _check_q(q, self.n_samples)
        return np.asarray(self.rv.ppf(q, *self._args()), dtype=np.float64)

    def log_pdf(self, y):
        """Log-density of ``y[i]`` under row ``i`` (scipy's ``logpdf``).

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        y = self._check_y(y)
        with np.errstate(divide="ignore"):  # -inf outside the support
            return np.asarray(self.rv.logpdf(y, *self._args()), dtype=np.float64)

    @property
    def mean(self):
        """Means (scipy's ``mean``; ``inf`` or NaN where the law has none)."""
        with np.errstate(all="ignore"):
            return np.asarray(self.rv.mean(*self._args()), dtype=np.float64)

    @property
    def variance(self):
        """Variances (scipy's ``var``; ``inf`` or NaN where the law has none)."""
        with np.errstate(all="ignore"):
            return np.asarray(self.rv.var(*self._args()), dtype=np.float64)

    def _moments(self, unit=1.0):
        mean, var = self.mean, self.variance
        bad = ~(np.isfinite(mean) & np.isfinite(var))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"row {i} of this ScipyDistribution (scipy.stats.{self.rv.name}) has no finite "
                "mean or variance (heavy tails); the variance-based metrics (ence, uce), the "
                "'median' length scale of the target kernel and the kernel calibration errors "
                "need finite moments.")
        return mean[:, None] / unit, var / (unit * unit)

    def _draw(self, rng, m):
        return np.asarray(self.rv.rvs(*self._args(axis_front=True),
                                      size=(m, self.n_samples), random_state=rng),
                          dtype=np.float64)

    # -- quadratures --------------------------------------------------------------------------
    def _node_quantiles(self, rows):
        """Quantiles at the 256 Gauss--Legendre nodes, shape ``(256, len(rows))``."""
        return np.asarray(self.rv.ppf(_GL_NODES[:, None], *self._args(rows, axis_front=True)),
                          dtype=np.float64)

    def _crps(self, y):
        y = np.broadcast_to(np.asarray(y, dtype=np.float64), (self.n_samples,))
        out = np.empty(self.n_samples)
        for start in range(0, self.n_samples, _CHUNK_ROWS):
            rows = np.arange(start, min(start + _CHUNK_ROWS, self.n_samples))
            out[rows] = _crps_quantile_quadrature(self, y[rows], Q=self._node_quantiles(rows))
        return out

    def _embedding(self):
        # W2^2 = int_0^1 (Q - Q')^2 dt ~ sum_k w_k (Q(t_k) - Q'(t_k))^2: the quantiles at the
        # nodes, times sqrt(w_k), are a Euclidean embedding (the same nodes for every batch)
        E = np.empty((self.n_samples, _GL_NODES.size))
        root_w = np.sqrt(_GL_WEIGHTS)[:, None]
        for start in range(0, self.n_samples, _CHUNK_ROWS):
            rows = np.arange(start, min(start + _CHUNK_ROWS, self.n_samples))
            E[rows] = (root_w * self._node_quantiles(rows)).T
        return E

    def _w2_squared(self, i, other, j):
        E1, E2 = self._embedding(), other._embedding()
        i, j = np.broadcast_arrays(np.asarray(i), np.asarray(j))
        flat_i, flat_j = i.ravel(), j.ravel()
        out = np.empty(flat_i.size)
        for start in range(0, flat_i.size, 4096):
            sl = slice(start, start + 4096)
            d = E1[flat_i[sl]] - E2[flat_j[sl]]
            out[sl] = np.einsum("ij,ij->i", d, d)
        return out.reshape(i.shape)


def validated_parameters(frozen, name):
    """``(rv, params)`` of a frozen continuous scipy law: its ``rv_continuous`` and its shape
    parameters, ``loc`` and ``scale`` as float arrays broadcast to ``(n,)``; a ``TypeError`` or
    ``ValueError`` naming ``name`` for anything else (discrete, multivariate or unfrozen laws,
    parameters that are scalars only, non-finite or outside the family's domain)."""
    kind = frozen_scipy_kind(frozen)
    if kind != "continuous":
        raise TypeError(_refusal(frozen, kind, name))
    rv = frozen.dist
    names = _parameter_names(rv)
    if len(frozen.args) > len(names):
        raise TypeError(f"{name}: scipy.stats.{rv.name} takes at most {len(names)} "
                        f"parameters; got {len(frozen.args)} positional ones.")
    given = dict(zip(names, frozen.args))
    given.update(frozen.kwds)
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise TypeError(f"{name}: scipy.stats.{rv.name} has no parameter {unknown[0]!r} "
                        f"(its parameters: {', '.join(names)}).")
    missing = [s for s in names[:-2] if s not in given]
    if missing:
        raise TypeError(f"{name}: scipy.stats.{rv.name} needs its shape parameter "
                        f"{missing[0]!r}.")
    given.setdefault("loc", 0.0)
    given.setdefault("scale", 1.0)
    arrays = [_float_array(given[s], f"{name}: the parameter {s!r}", ndim=(0, 1))
              for s in names]
    if all(a.ndim == 0 for a in arrays):
        raise ValueError(
            f"{name}: every parameter of this scipy.stats.{rv.name} law is a scalar, so it "
            "does not say how many predictions it stands for; give its parameters as arrays "
            "with one value per sample (e.g. loc=np.zeros(n_samples)).")
    try:
        arrays = _broadcast_rows(arrays, names)
    except ValueError as exc:
        raise ValueError(f"{name}: the {exc}") from None
    if arrays[0].shape[0] == 0:
        raise ValueError(f"{name}: the scipy.stats.{rv.name} law has parameters of length 0; "
                         "at least one sample is needed.")
    params = dict(zip(names, arrays))
    if np.any(params["scale"] <= 0):
        raise ValueError(f"{name}: the scale of scipy.stats.{rv.name} must be positive; got "
                         f"{params['scale'][params['scale'] <= 0][0]!r}.")
    # scipy returns NaN for parameters outside the family's domain (gamma with a <= 0)
    with np.errstate(all="ignore"):
        median = rv.ppf(0.5, *arrays)
    bad = ~np.isfinite(median)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        shown = ", ".join(f"{s}={float(params[s][i])!r}" for s in names)
        raise ValueError(f"{name}: the parameters of row {i} ({shown}) are outside the domain "
                         f"of scipy.stats.{rv.name}.")
    return rv, params


def _refusal(obj, kind, name):
    """The message refusing a scipy object that is not a frozen continuous law."""
    if kind == "discrete":
        return (f"{name}: scipy.stats.{obj.dist.name} is a discrete distribution; skcalib's "
                "predictive distributions are continuous (the kernel errors of integer targets "
                "need a continuous family or an Empirical of draws).")
    if isinstance(obj, (stats.rv_continuous, stats.rv_discrete)):
        return (f"{name}: scipy.stats.{obj.name} is not frozen; freeze it with one parameter "
                f"set per sample, e.g. scipy.stats.{obj.name}(..., loc=mean, scale=spread).")
    if kind == "other":
        return (f"{name}: {type(obj).__name__} is not a frozen univariate continuous scipy.stats "
                "distribution (multivariate laws and scipy's new distribution classes are not "
                "supported; freeze a univariate rv_continuous, e.g. scipy.stats.t(df, loc, "
                "scale)).")
    return (f"{name} must be a frozen continuous scipy.stats distribution; got "
            f"{type(obj).__name__}.")
