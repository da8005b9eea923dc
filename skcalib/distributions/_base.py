"""The base of the distribution families: the :class:`Distribution` class, the shared checks.

Internal API (used by the family modules of :mod:`skcalib.distributions`):

* :class:`Distribution`, the base class: immutability, ``len``, row indexing through the
  family's ``_take``, sampling through its ``_draw``, ``expected_kernel`` /
  ``expected_kernel_pair`` through :mod:`skcalib._expectations`, the Wasserstein hooks, and the
  fallbacks a family may override (``cdf``/``ppf`` raise, ``_crps`` by quantile quadrature,
  ``_concatenate`` raises), the randomised PIT (``_cdf_left``, the left limit of the CDF, and
  ``_pit``) and the CRPS estimators (``_crps_estimators``, ``_crps_estimate``);
* :class:`_LocationScale`, the univariate ``(loc, scale)`` families (Normal, Laplace);
* :func:`is_distribution`, :func:`wasserstein_distance`, :func:`pairwise_wasserstein`,
  :func:`concatenate` (public through :mod:`skcalib.distributions`), :func:`moment_unit`;
* parameter checks (``_float_array``, ``_read_only_float_copy``, ``_check_scale``,
  ``_check_temperature``, ``_check_q`` ...) and the quantile quadrature of the CRPS
  (``_crps_quantile_quadrature``).
"""

import math
from collections.abc import Iterable
from numbers import Real

import numpy as np

from .._expectations import check_targets, paired_ops, target_ops
from .._validation import (check_n_resamples, check_numeric, check_rng, check_scalar_param,
                           check_work_memory)


def is_distribution(obj):
    """Whether ``obj`` is a skcalib distribution.

    Parameters
    ----------
    obj : object
        Anything.

    Returns
    -------
    bool
        True for the objects of :mod:`skcalib.distributions` (``Normal``, ``Mixture``, ...).
    """
    return isinstance(obj, Distribution)


# --------------------------------------------------------------------------------------------
# parameter checks


def _read_only_float_copy(a):
    """A read-only float64 copy of ``a`` (the parameters of a distribution are never views of
    the caller's arrays)."""
    a = np.array(a, dtype=np.float64, copy=True)
    a.setflags(write=False)
    return a


def _float_array(x, name, ndim=None):
    """A float64 copy of ``x``, refusing what numpy would silently convert: strings (``"1"``),
    complex numbers (the imaginary part would be dropped), booleans, and objects that are not
    real numbers."""
    check_numeric(x, name)
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a rectangular array of real numbers; got a ragged or "
                         f"invalid {type(x).__name__}.") from None
    kind = raw.dtype.kind
    if kind == "c":
        raise TypeError(f"{name} must be real; got complex values.")
    if kind == "b":
        raise TypeError(f"{name} must contain numbers, not booleans.")
    if kind == "O":
        bad = [v for v in raw.ravel() if isinstance(v, (bool, np.bool_)) or not isinstance(v, Real)]
        if bad:
            bad = bad[0]
            raise TypeError(f"{name} must contain real numbers; got {bad!r} of type "
                            f"{type(bad).__name__}.")
    elif kind not in "iuf":
        what = "dates or durations" if kind in "mM" else "strings"
        raise TypeError(f"{name} must contain real numbers; got an array of dtype {raw.dtype} "
                        f"({what} are not converted).")
    a = np.array(raw, dtype=np.float64)
    if ndim is not None and a.ndim not in ndim:
        raise ValueError(
            f"{name} must have {' or '.join(str(d) for d in ndim)} dimensions; got shape {a.shape}."
        )
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite (no NaN or infinity).")
    return a


def _standardised(y, loc, scale):
    """``(y - loc) / scale`` without overflow warnings: the difference is taken in halves (exact
    for normal floats), so that targets and locations of opposite sign near the float limit do
    not overflow; a quotient beyond the float range is ``+-inf`` (its square, or its
    exponential, is then far beyond the range anyway)."""
    with np.errstate(over="ignore"):
        return ((0.5 * y - 0.5 * loc) / scale) * 2.0


def _check_scale(scale, name, strict):
    bad = scale <= 0 if strict else scale < 0
    if np.any(bad):
        what = "positive" if strict else "non-negative"
        raise ValueError(f"{name} must be {what}; got {scale[bad].ravel()[0]!r}.")


def _check_temperature(temperature):
    """A positive finite real number (not a bool or a string; a 0-d numeric array is accepted)."""
    if isinstance(temperature, np.ndarray) and temperature.ndim == 0 and (
            temperature.dtype.kind in "iuf"):
        temperature = temperature.item()
    check_scalar_param(temperature, "temperature", kind="real", min_val=0.0, include_min=False)
    return float(temperature)


def _require_positive(scale, name):
    if np.any(scale <= 0):
        raise ValueError(f"temperature scaling needs {name} > 0 in every row (a zero scale is a "
                         "point prediction, whose density is not defined).")


def _broadcast_rows(arrays, names):
    """Broadcast 1-D parameters (scalars allowed) to a common length ``n``."""
    arrays = [np.atleast_1d(a) for a in arrays]
    try:
        out = np.broadcast_arrays(*arrays)
    except ValueError:
        shapes = ", ".join(f"{n} {a.shape}" for n, a in zip(names, arrays))
        raise ValueError(f"parameters have incompatible shapes: {shapes}.") from None
    return out


def _univariate_only(dist, what):
    return (f"{what} is defined for univariate predictive distributions (Normal, Laplace and "
            f"mixtures of them); got {type(dist).__name__}"
            + (f" of {type(dist.components[0]).__name__} components" if hasattr(dist, "components")
               else "") + ". Probability integral transforms and quantiles are univariate.")


def _check_q(q, n_samples):
    """Probabilities in [0, 1] of shape () or (n_samples,)."""
    q = _float_array(q, "q", ndim=(0, 1))
    if q.ndim == 1 and q.shape != (n_samples,):
        raise ValueError(f"q must have shape ({n_samples},); got {q.shape}.")
    if np.any((q < 0) | (q > 1)):
        raise ValueError("q must be probabilities in [0, 1].")
    return q


def _variance_in_range(dist):
    """Variances of a univariate family from its moments in units of their magnitude: ``inf``
    (no warning) only where the variance itself exceeds the float range (standard deviations
    beyond about 1.3e154)."""
    unit = moment_unit(dist)
    v = dist._moments(unit)[1]
    if unit == 1.0:
        return v
    with np.errstate(over="ignore"):
        return v * unit * unit


def moment_unit(dist, *arrays):
    """A power of two ``u`` such that ``dist._moments(u)`` (means and variances in units of
    ``u``) and ``arrays / u`` stay far inside the float range: 1 unless the largest location,
    scale or target exceeds ``1e150`` (whose squares would overflow), else about that
    magnitude. Ratios of variances and errors (ENCE, median heuristics) are then computed in
    these units, exactly as in the original ones (scaling by powers of two is exact)."""
    top = max([float(np.max(np.abs(a))) if np.size(a) else 0.0 for a in arrays] + [0.0])
    stack = [dist]
    while stack:
        d = stack.pop()
        inner = d._inner_distributions()
        if inner:
            stack.extend(inner)
        else:
            for name in ("loc", "scale", "mean", "cov"):
                v = getattr(d, name, None)
                if v is not None and np.size(v):
                    v = float(np.max(np.abs(v)))
                    top = max(top, math.sqrt(v) if name == "cov" else v)
    if top <= 1e150:
        return 1.0
    return math.ldexp(1.0, math.frexp(top)[1])


class Distribution:
    """Base class of batched predictive distributions (row ``i`` = prediction for sample ``i``)."""

    _frozen = False
    #: Whether the family is univariate with ``cdf`` and ``ppf`` (the PIT and CRPS metrics
    #: accept it): True for Normal, Laplace, Recalibrated and mixtures of them.
    _univariate = False
    #: The default target kernel of the SKCE and UCME on this family (a kernel class of
    #: :mod:`skcalib.kernels`, built with the ``"median"`` length scale): the target kernel with
    #: closed-form expectations for the family. ``None``: the Gaussian kernel.
    _default_target_kernel = None

    def __setattr__(self, name, value):
        if self._frozen:
            raise AttributeError(f"{type(self).__name__} objects are immutable.")
        object.__setattr__(self, name, value)

    def _freeze(self):
        object.__setattr__(self, "_frozen", True)

    def __len__(self):
        return self.n_samples

    def __getitem__(self, idx):
        """Rows ``idx`` (slice, integer array or boolean mask) as a distribution of the same family."""
        if isinstance(idx, (bool, np.bool_)):
            raise TypeError("a distribution is indexed by an integer, a slice, an integer array or "
                            "a boolean mask; got a single bool.")
        if isinstance(idx, (int, np.integer)):
            idx = [idx]
        rows = np.arange(self.n_samples)[idx]
        return self._take(np.atleast_1d(rows))

    def __repr__(self):
        return f"{type(self).__name__}(n_samples={self.n_samples})"

    @property
    def target_shape(self):
        """Shape of one target value: ``()`` for real, ``(d,)`` for vector targets."""
        return () if self.dim is None else (self.dim,)

    def sample(self, random_state=None, size=None):
        """Draw from every row.

        Parameters
        ----------
        random_state : None, int, Generator or RandomState, default=None
            Seed or generator of the draws.
        size : int, default=None
            Number of draws per row: a positive integer of at most ``10**7``, and the draws
            (with a mixture's component draws) must fit in 4 GiB. None draws one.

        Returns
        -------
        ndarray
            Of shape ``(n_samples,) + target_shape``, or ``(size, n_samples) + target_shape``.
        """
        m = 1 if size is None else check_n_resamples(size, "size")
        check_work_memory(m * self._draw_items(), "size", size, "the draws")
        rng = check_rng(random_state)
        Z = self._draw(rng, m)
        return Z[0] if size is None else Z

    def _draw_items(self):
        """Numbers that one draw of every row allocates (a mixture draws every component)."""
        return self.n_samples * (getattr(self, "dim", None) or 1)

    def _check_y(self, y):
        """Finite real targets of a univariate family, of shape ``(n_samples,)`` (or a scalar,
        broadcast): the argument of ``cdf``, ``log_pdf`` and ``_crps``."""
        y = _float_array(y, "y", ndim=(0, 1))
        if y.ndim == 1 and y.shape != (self.n_samples,):
            raise ValueError(f"y must have shape ({self.n_samples},); got {y.shape}.")
        return y

    def _pair_cost(self):
        """How many numbers the family's kernel expectations hold per pair of rows at once (a
        full covariance's ``d**2``; 1 by default). The pairwise engine shrinks its tiles so that
        one tile holds about ``4e6`` of them (:func:`skcalib._problems.terms.preferred_chunk_size`);
        a mixture takes the largest of its components'."""
        return max((d._pair_cost() for d in self._inner_distributions()), default=1)

    def _inner_distributions(self):
        """The distributions this one is built from (a mixture's components, a recalibrated
        prediction's base); empty for the families with parameters of their own."""
        return ()

    def _check_family_details(self, other, name):
        """Raise unless ``other`` (of the same class and dimension) is comparable beyond that:
        the same component family of mixtures, the same classes of categorical predictions."""

    @classmethod
    def _concatenate(cls, dists):
        """The rows of ``dists`` (batches of this family, at least one) as one batch."""
        raise TypeError(f"concatenate is not implemented for {cls.__name__} distributions.")

    def _crps(self, y):
        """CRPS of every row at ``y`` (univariate families): by default from the quantile
        function (:func:`_crps_quantile_quadrature`); families override it with closed forms."""
        return _crps_quantile_quadrature(self, y)

    #: The CRPS estimators other than the family's default (``_crps``) that
    #: :func:`skcalib.crps` may ask for by ``estimator=`` (``"fair"``: Empirical; ``"quantile_score"``:
    #: Quantiles); :meth:`_crps_estimate` computes them.
    _crps_estimators = ()

    def _crps_estimate(self, y, estimator):
        """CRPS of every row at ``y`` by the named ``estimator`` (one of ``_crps_estimators``;
        families that list some override this); a ``ValueError`` naming the estimators the
        family supports otherwise."""
        supported = ", ".join(repr(e) for e in (None,) + tuple(self._crps_estimators))
        raise ValueError(f"estimator={estimator!r} is not available for {type(self).__name__} "
                         f"predictions; this family supports estimator in {{{supported}}}.")

    def cdf(self, y):
        """Cumulative distribution function ``P(Y_i <= y_i)`` of univariate families.

        Defined for :class:`Normal`, :class:`Laplace` and mixtures of them; the other families
        (multivariate normals, categorical predictions) have no univariate CDF and raise.

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        raise TypeError(_univariate_only(self, "cdf"))

    # -- randomised PIT (hooks of the PIT metrics) -------------------------------------------
    def _cdf_left(self, y):
        """Left limit of the CDF, ``P(Y_i < y_i)``, of univariate families.

        The contract of the randomised PIT (:meth:`_pit`): ``_cdf_left(y) <= cdf(y)``, equal
        where the law of the row has no atom at ``y``. The default, ``cdf(y)``, is right for
        every continuous family (it also keeps their PIT values and random streams unchanged);
        a family with atoms (``Empirical``, ``Quantiles`` rows with repeated quantiles) overrides
        it, with the same argument checks as its ``cdf``.
        """
        return self.cdf(y)

    def _pit(self, y, rng):
        """Randomised PIT ``F(y-) + V (F(y) - F(y-))``, ``V ~ U(0, 1)`` (Czado, Gneiting and
        Held 2009): uniform on ``[0, 1]`` under calibration also where the law has atoms.

        ``rng`` is anything :func:`skcalib._validation.check_rng` accepts; it is turned into a
        generator, and one uniform per row drawn, only if some row has a jump at its target,
        so continuous families give exactly ``cdf(y)`` and consume no random numbers.
        """
        upper = np.asarray(self.cdf(y), dtype=np.float64)
        lower = np.asarray(self._cdf_left(y), dtype=np.float64)
        jump = upper - lower
        if not np.any(jump > 0):
            return upper
        v = check_rng(rng).uniform(size=upper.shape)
        return np.where(jump > 0, lower + v * jump, upper)

    def _cdf_mapped(self, knots, values):
        """The law whose CDF is ``R(F_i)``, ``R`` the piecewise-linear map through ``(knots,
        values)`` (quantile recalibration), in the family's own terms (``Empirical``: reweighted
        draws; ``Quantiles``: the composed quantile function), so that its closed forms keep
        applying; None by default, where the caller wraps the batch in a ``Recalibrated``."""
        return None

    def _rank_pit(self, y, rng):
        """Randomised verification rank of ``y`` among equal-weight draws (``pit(...,
        ranks=True)``): only families given as draws have one."""
        raise ValueError(f"ranks=True needs predictions given as equal-weight draws (Empirical, "
                         f"e.g. ensemble members); {type(self).__name__} predictions have no "
                         "draws to rank the target among: use ranks=False (the PIT).")

    def ppf(self, q):
        """Quantile function (inverse CDF) of univariate families.

        Defined for :class:`Normal`, :class:`Laplace` and mixtures of them; the other families
        raise.

        Parameters
        ----------
        q : float or array-like of shape (n_samples,)
            Probabilities in ``[0, 1]`` (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        raise TypeError(_univariate_only(self, "ppf"))

    def wasserstein(self, other):
        """2-Wasserstein distance between matching rows of ``self`` and ``other``.

        Parameters
        ----------
        other : Distribution
            Same family and dimension; ``self`` or ``other`` may have a single row (broadcast).

        Returns
        -------
        ndarray of shape (n_samples,)
            See :func:`wasserstein_distance`.
        """
        return wasserstein_distance(self, other)

    def expected_kernel(self, kernel, y, *, n_mc_samples=1000, random_state=None):
        """``E_{Z ~ p_i} kernel(Z, y_i)`` for every row ``i`` (``e1`` of the SKCE).

        Parameters
        ----------
        kernel : GaussianKernel or ExponentialKernel
            Kernel on targets, with a numeric length scale.
        y : array-like of shape (n_samples,) or (n_samples, d)
            One target per row.
        n_mc_samples : int, default=1000
            Draws of the Monte-Carlo fallback (families/kernels without a closed form).
        random_state : None, int or Generator, default=None
            Seed of the Monte-Carlo fallback.

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skcalib.distributions import Normal
        >>> from skcalib.kernels import GaussianKernel
        >>> Normal([0.0], [1.0]).expected_kernel(GaussianKernel(1.0), [0.0])  # 1/sqrt(2)
        array([0.70710678])
        """
        ops = target_ops(self, check_targets(y, self, "y", pred_name=None), kernel, n_mc_samples=n_mc_samples,
                         random_state=random_state, rotate=False)
        everything = slice(None)
        return np.asarray(ops.e1(ops.P(everything, "flat"), ops.Y(everything, "flat")), float)

    def expected_kernel_pair(self, kernel, other=None, *, n_mc_samples=1000, random_state=None):
        """``E kernel(Z, Z')`` for independent ``Z ~ p_i``, ``Z' ~ q_i`` (``e2`` of the SKCE).

        Parameters
        ----------
        kernel : GaussianKernel or ExponentialKernel
            Kernel on targets, with a numeric length scale.
        other : Distribution, default=None
            Same family and number of rows; defaults to ``self`` (two independent draws from
            the same row, as on the diagonal of the SKCE's kernel matrix).
        n_mc_samples : int, default=1000
            Draws of the Monte-Carlo fallback.
        random_state : None, int or Generator, default=None
            Seed of the Monte-Carlo fallback.

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skcalib.distributions import Normal
        >>> from skcalib.kernels import GaussianKernel
        >>> Normal([0.0], [1.0]).expected_kernel_pair(GaussianKernel(1.0))  # 1/sqrt(3)
        array([0.57735027])
        """
        other = self if other is None else other
        _same_family(self, other, "other")
        if other.n_samples != self.n_samples:
            raise ValueError(f"other has {other.n_samples} rows; expected {self.n_samples}.")
        rng = check_rng(random_state)
        zeros = np.zeros((self.n_samples,) + self.target_shape)
        everything = slice(None)
        if other is self:
            ops = target_ops(self, zeros, kernel, n_mc_samples=n_mc_samples, random_state=rng,
                             rotate=False)
            if hasattr(ops, "Z2"):
                return ops.e2(ops.Z, ops.Z2)
            P = ops.P(everything, "flat")
            return np.asarray(ops.e2(P, P), float)
        ops, ops2 = paired_ops(self, other, zeros, kernel, n_mc_samples=n_mc_samples,
                               random_state=rng)
        return np.asarray(ops.e2(ops.P(everything, "flat"), ops2.P(everything, "flat")), float)

    # -- hooks used by the kernel machinery ---------------------------------------------------
    def _check_comparable(self, other, name="other"):
        """Raise unless the W2 distance between rows of ``self`` and ``other`` is defined (one
        family and dimension; the same classes for categorical distributions). The kernels call
        this hook instead of importing this module."""
        _same_family(self, other, name)

    def _embedding(self):
        """Rows of a Euclidean embedding with ``W2 = ||phi(p) - phi(p')||``, or None."""
        return None

    def _embedding_key(self):
        """Batches whose keys are equal have embeddings in one space (their differences are W2
        distances); None for the families whose embedding does not depend on the batch."""
        return None

    def _w2_squared(self, i, other, j):
        """Squared W2 between rows ``i`` of self and ``j`` of other (matching index arrays)."""
        E1, E2 = self._embedding(), other._embedding()
        d = E1[i] - E2[j]
        return np.einsum("...k,...k->...", d, d)


def _check_is_distribution(p, name):
    if not is_distribution(p):
        raise TypeError(f"{name} must be a skcalib distribution; got {type(p).__name__}.")


def _same_family(p, q, name="q"):
    if type(p) is not type(q):
        raise TypeError(
            f"Wasserstein distances are defined here between members of one family; {name} is "
            f"a {type(q).__name__}, expected a {type(p).__name__}."
        )
    if p.dim != q.dim:
        raise ValueError(f"{name} has dimension {q.dim}; expected {p.dim} (distributions of "
                         "different dimensions).")
    p._check_family_details(q, name)


def wasserstein_distance(p, q):
    """2-Wasserstein distance between matching rows of two distributions of one family.

    Parameters
    ----------
    p, q : Distribution
        Same family and dimension; one of them may have a single row (broadcast).

    Returns
    -------
    ndarray of shape (n_samples,)

    Examples
    --------
    >>> from skcalib.distributions import Normal, wasserstein_distance
    >>> wasserstein_distance(Normal([0.0, 1.0], [1.0, 1.0]), Normal([3.0, 1.0], [5.0, 1.0]))
    array([5., 0.])
    """
    _check_is_distribution(p, "p")
    _check_is_distribution(q, "q")
    _same_family(p, q)
    n = max(p.n_samples, q.n_samples)
    if p.n_samples not in (1, n) or q.n_samples not in (1, n):
        raise ValueError(f"p and q have {p.n_samples} and {q.n_samples} rows.")
    i = np.zeros(n, np.intp) if p.n_samples == 1 else np.arange(n)
    j = np.zeros(n, np.intp) if q.n_samples == 1 else np.arange(n)
    return np.sqrt(np.maximum(p._w2_squared(i, q, j), 0.0))


def pairwise_wasserstein(p, q=None):
    """Matrix of 2-Wasserstein distances between the rows of ``p`` and of ``q`` (default ``p``).

    Parameters
    ----------
    p : Distribution
        Predictive distributions.
    q : Distribution, default=None
        Same family and dimension as ``p``; defaults to ``p``.

    Returns
    -------
    ndarray of shape (len(p), len(q))

    Examples
    --------
    >>> from skcalib.distributions import Laplace, pairwise_wasserstein
    >>> pairwise_wasserstein(Laplace([0.0, 3.0], [1.0, 1.0]))
    array([[0., 3.],
           [3., 0.]])
    """
    _check_is_distribution(p, "p")
    q = p if q is None else q
    _check_is_distribution(q, "q")
    _same_family(p, q)
    i, j = np.meshgrid(np.arange(p.n_samples), np.arange(q.n_samples), indexing="ij")
    return np.sqrt(np.maximum(p._w2_squared(i, q, j), 0.0))


# --------------------------------------------------------------------------------------------
# families


class _LocationScale(Distribution):
    """Univariate location-scale family: ``loc`` and ``scale`` per row."""

    dim = None
    _positive_scale = True
    _univariate = True

    def __init__(self, loc, scale):
        loc = _float_array(loc, "loc", ndim=(0, 1))
        scale = _float_array(scale, "scale", ndim=(0, 1))
        _check_scale(scale, "scale", strict=self._positive_scale)
        loc, scale = _broadcast_rows([loc, scale], ["loc", "scale"])
        self.loc = _read_only_float_copy(loc)
        self.scale = _read_only_float_copy(scale)
        self.n_samples = loc.shape[0]
        self._freeze()

    @property
    def mean(self):
        return self.loc

    @classmethod
    def _concatenate(cls, dists):
        return cls(np.concatenate([d.loc for d in dists]), np.concatenate([d.scale for d in dists]))


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(256)
_GL_NODES = 0.5 * (_GL_NODES + 1.0)   # Gauss-Legendre on (0, 1)
_GL_WEIGHTS = 0.5 * _GL_WEIGHTS


def _crps_quantile_quadrature(dist, y, Q=None):
    """``CRPS = 2 int_0^1 (1{y < G^{-1}(tau)} - tau)(G^{-1}(tau) - y) dtau`` by the 256-node
    Gauss-Legendre rule, from the quantiles ``Q`` (shape ``(256, n)``) or ``dist.ppf``."""
    y = np.asarray(y, dtype=np.float64)
    if Q is None:
        # one vectorised ppf call per chunk of rows, each row repeated at the 256 levels
        n, m = dist.n_samples, _GL_NODES.size
        Q = np.empty((m, n))
        for start in range(0, n, 2048):
            rows = np.arange(start, min(start + 2048, n))
            tiled = dist[np.tile(rows, m)]
            Q[:, rows] = tiled.ppf(np.repeat(_GL_NODES, rows.size)).reshape(m, rows.size)
    tau = _GL_NODES[:, None]
    loss = ((y < Q).astype(np.float64) - tau) * (Q - y)
    return np.maximum(2.0 * (_GL_WEIGHTS @ loss), 0.0)


def concatenate(distributions):
    """Stack batches of one family (and the same components, dimension or classes) row-wise.

    Parameters
    ----------
    distributions : sequence of Distribution
        Batches of one family (same components, dimension or classes).

    Returns
    -------
    Distribution
        The rows of every batch, in order.

    Examples
    --------
    >>> from skcalib.distributions import Normal, concatenate
    >>> len(concatenate([Normal([0.0], 1.0), Normal([1.0, 2.0], 2.0)]))
    3
    """
    if is_distribution(distributions):
        raise TypeError("distributions must be a sequence of skcalib distributions; got a single "
                        f"{type(distributions).__name__} (pass a list: concatenate([a, b])).")
    if isinstance(distributions, (str, bytes, dict)) or not isinstance(distributions, Iterable):
        raise TypeError("distributions must be a non-empty sequence of skcalib distributions; "
                        f"got {type(distributions).__name__} {distributions!r:.60}.")
    dists = list(distributions)
    if not dists:
        raise TypeError("distributions must be a non-empty sequence of skcalib distributions; "
                        "got an empty sequence.")
    bad = next((i for i, d in enumerate(dists) if not is_distribution(d)), None)
    if bad is not None:
        raise TypeError("distributions must be a non-empty sequence of skcalib distributions; "
                        f"item {bad} is {type(dists[bad]).__name__}.")
    fam = type(dists[0])
    other = next((d for d in dists if type(d) is not fam), None)
    if other is not None:
        raise TypeError("distributions must all be of one family; got "
                        f"{fam.__name__} and {type(other).__name__}.")
    return fam._concatenate(dists)
