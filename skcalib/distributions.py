"""Batched predictive distributions: the predictions of probabilistic regressors (and classifiers).

A distribution object holds ``n_samples`` predictions of one family -- row ``i`` is the predictive
distribution of sample ``i`` -- and is immutable (its arrays are read-only copies). Every family

* validates its parameters (a ``ValueError`` naming the parameter for non-finite values, negative or
  zero scales, covariances that are not symmetric positive semi-definite, mixture weights that are
  negative or do not sum to one; a ``TypeError`` for strings, complex numbers or booleans, which
  numpy would otherwise convert silently),
* draws samples (``sample(random_state=..., size=...)``; ``size`` and the ``tempered`` factor are
  validated before anything is drawn or built),
* knows its 2-Wasserstein distance to another member of its family
  (:func:`wasserstein_distance`, :func:`pairwise_wasserstein`),
* for the univariate families (Normal, Laplace and mixtures of them), has a cumulative
  distribution function ``cdf`` and a quantile function ``ppf`` (the other families raise a
  ``TypeError``: probability integral transforms and quantiles are univariate),
* and, for the kernel calibration errors, the closed-form kernel expectations
  ``E k(Z, y)`` and ``E k(Z, Z')`` (computed in :mod:`skcalib._expectations`; see
  :meth:`Normal.expected_kernel`).

Families
--------
:class:`Normal`
    ``N(loc, scale**2)``; ``scale`` is the standard deviation (``scale = 0``, a point prediction, is
    allowed: it is the one-dimensional case of a singular covariance).
:class:`MultivariateNormal`
    ``N(mean, cov)`` on ``R^d`` with full ``(n, d, d)``, diagonal ``(n, d)`` or spherical ``(n,)``
    covariances (positive semi-definite).
:class:`Laplace`
    Density ``exp(-|y - loc| / scale) / (2 scale)``, ``scale > 0``.
:class:`Mixture`
    ``sum_k weights[:, k] * components[k]``, components of one family (e.g. a deep ensemble).
:class:`Categorical`
    Class probabilities, so that classification goes through the same door.
:class:`Recalibrated`
    A univariate prediction whose CDF is mapped by a monotone piecewise-linear ``R`` of
    ``[0, 1]`` (quantile recalibration); it has ``cdf``, ``ppf``, ``log_pdf``, sampling, moments,
    a CRPS and Wasserstein distances (its kernel expectations are Monte Carlo).

2-Wasserstein distances
-----------------------
* Normal: ``W2^2 = (m - m')^2 + (s - s')^2``; Laplace: ``(m - m')^2 + 2 (b - b')^2`` (Gelbrich).
* MultivariateNormal: the Bures formula
  ``|m - m'|^2 + tr(S + S' - 2 (S'^{1/2} S S'^{1/2})^{1/2})``; for commuting covariances
  (spherical, diagonal, or full ones that share eigenvectors) this is
  ``|m - m'|^2 + ||S^{1/2} - S'^{1/2}||_F^2``, a Euclidean distance between embeddings.
* Mixture: the mixture Wasserstein distance ``MW2`` of Widmann et al. (2021, Eq. D.2) with the
  components' W2 as ground cost, by exact optimal transport (closed forms for two components,
  a vectorised transportation simplex otherwise; see :class:`Mixture`).
* Categorical: with the discrete metric ``1{y != y'}`` on classes, ``W2 = sqrt(TV(p, p'))``.
* Recalibrated: ``W2^2 = int_0^1 (G^{-1}(tau) - G'^{-1}(tau))^2 dtau``. With a Normal or Laplace
  base, rows are ``m + s Q(tau)`` for one standardised quantile function ``Q`` per map, and
  ``W2^2 = (mean - mean')^2 + (sd - sd')^2 + 2 s s' (sigma sigma' - cov(Q, Q'))`` (0 for the last
  term when the maps agree: a Euclidean embedding), with the moments of ``Q`` by a composite
  Gauss-Legendre rule that has a panel per piece of the maps and dyadic panels toward the
  singular ends (accurate to about 1e-13); other bases (mixtures) by the quantiles of every row
  on such a rule thinned to 128 panels of 4 nodes (exact to about 1e-9 for maps of up to 128
  pieces; about 1e-3 relative for maps of hundreds of knots, whose kinks then fall inside
  panels).
"""

import itertools
import math
from collections.abc import Iterable
from numbers import Real

import numpy as np
from scipy import optimize, sparse, special

from ._expectations import check_not_empty, check_targets, paired_ops, target_ops
from ._validation import (_check_no_missing, check_n_resamples, check_numeric, check_rng,
                          check_scalar_param, check_scores, check_work_memory,
                          renormalise_low_precision, row_sum_tolerance)

__all__ = [
    "Normal",
    "MultivariateNormal",
    "Laplace",
    "Mixture",
    "Categorical",
    "Recalibrated",
    "wasserstein_distance",
    "pairwise_wasserstein",
    "is_distribution",
    "concatenate",
    "as_distribution",
]


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


def as_distribution(y_pred, name="y_pred"):
    """A distribution object, or ``(n, 2)`` predictions ``[mean, std]`` as a :class:`Normal`.

    The points-plus-standard-deviation form of regressors (``predict(X, return_std=True)``
    stacked as columns) is accepted wherever a predictive distribution is. Both forms must hold
    at least one sample (a ``ValueError`` naming ``name`` otherwise).

    Parameters
    ----------
    y_pred : Distribution or array-like of shape (n_samples, 2)
        A :mod:`skcalib.distributions` object (returned as it is), or predicted means (column 0)
        and non-negative standard deviations (column 1).
    name : str, default="y_pred"
        Name of the argument in error messages.

    Returns
    -------
    dist : Distribution
        The distribution.
    from_array : bool
        Whether ``y_pred`` was an array (so that outputs can keep that form).

    Examples
    --------
    >>> from skcalib.distributions import as_distribution
    >>> dist, from_array = as_distribution([[0.0, 1.0], [2.0, 0.5]])
    >>> type(dist).__name__, dist.scale, from_array
    ('Normal', array([1. , 0.5]), True)
    """
    if is_distribution(y_pred):
        check_not_empty(y_pred, name)
        return y_pred, False
    if y_pred is None:
        raise ValueError(f"{name} must be an array-like of shape (n_samples, 2) or a skcalib "
                         "distribution; got None.")
    if isinstance(y_pred, (str, bytes, dict, set, frozenset, Real, np.generic)) or (
            isinstance(y_pred, np.ndarray) and y_pred.ndim == 0):
        raise TypeError(f"{name} must be an array-like of shape (n_samples, 2) or a skcalib "
                        f"distribution; got {type(y_pred).__name__} {y_pred!r:.60}.")
    if isinstance(y_pred, (list, tuple)):
        try:
            np.shape(y_pred)
        except ValueError:
            raise ValueError(f"{name} must be a rectangular array-like of shape (n_samples, 2); "
                             "got a ragged sequence (rows of different lengths).") from None
    check_numeric(y_pred, name, what="means and standard deviations", expected="a skcalib "
                  "distribution or an array of shape (n_samples, 2) of means and standard deviations")
    A = check_scores(y_pred, name)
    if A.ndim != 2 or A.shape[1] != 2:
        raise ValueError(
            f"{name} must be a skcalib distribution or an array of shape (n_samples, 2) holding "
            f"the predicted means and standard deviations; got shape {A.shape}.")
    if np.any(A[:, 1] < 0):
        raise ValueError(f"{name}: the standard deviations (column 1) must be non-negative.")
    return Normal(A[:, 0], A[:, 1]), True


# --------------------------------------------------------------------------------------------
# parameter checks


def _read_only(a):
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


def _check_classes(classes, n_classes):
    """Class labels of a Categorical: one per column, unique, no missing values (None, NaN), and
    of one comparable type (numpy would turn ``["a", 1]`` into the strings ``"a", "1"``)."""
    if isinstance(classes, (str, bytes)):
        raise TypeError(f"classes must be an array-like of labels; got a {type(classes).__name__}.")
    try:
        arr = np.asarray(classes)
    except (TypeError, ValueError):
        raise ValueError("classes must be a one-dimensional array-like of labels.") from None
    if arr.shape != (n_classes,):
        raise ValueError(f"classes must have one label per column ({n_classes}); got "
                         f"shape {arr.shape}.")
    if arr.dtype.kind in "US" and not isinstance(classes, np.ndarray):
        if not all(isinstance(v, (str, bytes, np.str_, np.bytes_)) for v in classes):
            raise ValueError("classes mixes strings with other types (e.g. numbers); use one "
                             "type of label.")
    if arr.dtype.kind == "c":
        raise TypeError("classes must not be complex numbers.")
    _check_no_missing(arr, "classes")
    try:
        unique = np.unique(arr)
    except TypeError:
        raise ValueError("classes must be labels of one comparable type (e.g. all strings or all "
                         "numbers).") from None
    if unique.size != arr.size:
        raise ValueError("classes must be unique.")
    arr = arr.copy()
    arr.setflags(write=False)
    return arr


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
        if isinstance(d, Mixture):
            stack.extend(d.components)
        elif isinstance(d, Recalibrated):
            stack.append(d.base)
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
        d = self
        per = 1
        while isinstance(d, (Mixture, Recalibrated)):
            if isinstance(d, Mixture):
                per *= d.n_components + 1
                d = d.components[0]
            else:
                per *= 2
                d = d.base
        return per * self.n_samples * (getattr(d, "dim", None) or 1)

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
    if isinstance(p, Mixture) and type(p.components[0]) is not type(q.components[0]):
        raise TypeError(f"{name} is a mixture of a different component family "
                        f"({type(q.components[0]).__name__}, expected "
                        f"{type(p.components[0]).__name__}).")
    if isinstance(p, Categorical) and not (p.classes.shape == q.classes.shape
                                           and np.array_equal(p.classes, q.classes)):
        raise ValueError(f"{name} is a categorical distribution over different classes.")


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

    def __init__(self, loc, scale):
        loc = _float_array(loc, "loc", ndim=(0, 1))
        scale = _float_array(scale, "scale", ndim=(0, 1))
        _check_scale(scale, "scale", strict=self._positive_scale)
        loc, scale = _broadcast_rows([loc, scale], ["loc", "scale"])
        self.loc = _read_only(loc)
        self.scale = _read_only(scale)
        self.n_samples = loc.shape[0]
        self._freeze()

    @property
    def mean(self):
        return self.loc

    def _check_y(self, y):
        """Finite real targets of shape ``(n_samples,)`` (or a scalar, broadcast)."""
        y = _float_array(y, "y", ndim=(0, 1))
        if y.ndim == 1 and y.shape != (self.n_samples,):
            raise ValueError(f"y must have shape ({self.n_samples},); got {y.shape}.")
        return y


class Normal(_LocationScale):
    """Batch of univariate normal distributions ``N(loc, scale**2)``.

    Parameters
    ----------
    loc : array-like of shape (n_samples,)
        Means.
    scale : float or array-like of shape (n_samples,)
        Standard deviations, ``>= 0`` (0 is a point prediction).

    Examples
    --------
    >>> from skcalib.distributions import Normal
    >>> p = Normal([0.0, 1.0], [1.0, 2.0])
    >>> len(p), p.variance
    (2, array([1., 4.]))
    """

    _family = "normal"  # dispatch key of skcalib._expectations (no import cycle)
    _positive_scale = False

    @property
    def variance(self):
        return _variance_in_range(self)

    def _take(self, rows):
        return Normal(self.loc[rows], self.scale[rows])

    def _moments(self, unit=1.0):
        s = self.scale / unit
        return self.loc[:, None] / unit, s * s

    def _draw(self, rng, m):
        return self.loc + self.scale * rng.standard_normal((m, self.n_samples))

    def _embedding(self):
        return np.column_stack([self.loc, self.scale])

    def _w2_squared(self, i, other, j):
        return (self.loc[i] - other.loc[j]) ** 2 + (self.scale[i] - other.scale[j]) ** 2

    def log_pdf(self, y):
        """Log-density of ``y[i]`` under row ``i``.

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
            ``-inf`` where the log-density is below the float range (a target some ``1e154``
            standard deviations away); ``inf`` at, and ``-inf`` off, a point prediction
            (``scale = 0``), which has no density (:func:`~skcalib.metrics.nll` refuses it).
        """
        y = self._check_y(y)
        out = np.where(y == self.loc, np.inf, -np.inf)  # point predictions (scale 0)
        pos = self.scale > 0
        s = np.where(pos, self.scale, 1.0)
        z = _standardised(y, self.loc, s)
        with np.errstate(over="ignore"):  # -inf beyond the float range (|z| > 1e154)
            val = -0.5 * (z * z) - np.log(s) - 0.5 * math.log(2 * math.pi)
        return np.where(pos, val, out)

    def cdf(self, y):
        """Cumulative distribution function ``Phi((y[i] - loc[i]) / scale[i])``.

        A point prediction (``scale = 0``) has the step ``1{y >= loc}``.

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skcalib.distributions import Normal
        >>> Normal([0.0, 1.0], [1.0, 0.0]).cdf([0.0, 1.0])
        array([0.5, 1. ])
        """
        y = self._check_y(y)
        pos = self.scale > 0
        s = np.where(pos, self.scale, 1.0)
        return np.where(pos, special.ndtr(_standardised(y, self.loc, s)),
                        (y >= self.loc).astype(np.float64))

    def ppf(self, q):
        """Quantile function ``loc[i] + scale[i] * Phi^{-1}(q[i])``.

        ``q = 0`` and ``q = 1`` give the ends of the support (``-inf`` and ``inf``; ``loc`` for
        a point prediction, ``scale = 0``), as in :mod:`scipy.stats`.

        Parameters
        ----------
        q : float or array-like of shape (n_samples,)
            Probabilities in ``[0, 1]`` (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)

        Examples
        --------
        >>> from skcalib.distributions import Normal
        >>> Normal([0.0, 1.0], [1.0, 2.0]).ppf(0.5)
        array([0., 1.])
        """
        q = _check_q(q, self.n_samples)
        z = special.ndtri(q)
        with np.errstate(invalid="ignore"):  # inf * 0 for point predictions, replaced below
            out = self.loc + self.scale * z
        return np.where(self.scale > 0, out, self.loc + 0.0 * q)

    def tempered(self, temperature):
        """Temperature scaling (Widmann et al. 2021, Definition F.1): ``N(loc, T * scale**2)``.

        The density becomes proportional to ``p**(1/T)``; the mean is unchanged.

        Parameters
        ----------
        temperature : float
            Positive finite temperature ``T`` (``T > 1`` widens, ``T < 1`` sharpens).

        Returns
        -------
        Normal
            A new batch; ``self`` is unchanged.
        """
        T = _check_temperature(temperature)
        return Normal(self.loc, self.scale * np.sqrt(T))

    def _temperature_statistic(self, y):
        _require_positive(self.scale, "scale")
        r = _standardised(np.asarray(y, dtype=np.float64), self.loc, self.scale)
        return r * r, 1


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

    def _temperature_statistic(self, y):
        z = _standardised(np.asarray(y, dtype=np.float64), self.loc, self.scale)
        return 2.0 * np.abs(z), 2


def _psd_sqrt_and_check(cov, name):
    """Symmetric square roots of a batch of PSD matrices; ValueError naming ``name`` otherwise."""
    scale = np.maximum(np.abs(cov).max(axis=(1, 2)), np.finfo(float).tiny)
    asym = np.abs(cov - np.swapaxes(cov, 1, 2)).max(axis=(1, 2))
    bad = asym > 1e-10 * scale
    if np.any(bad):
        raise ValueError(f"{name} must be symmetric; row {int(np.flatnonzero(bad)[0])} is not.")
    sym = 0.5 * (cov + np.swapaxes(cov, 1, 2))
    w, U = np.linalg.eigh(sym)
    tol = 1e-10 * scale * cov.shape[1]
    bad = w.min(axis=1) < -tol
    if np.any(bad):
        r = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} must be positive semi-definite; row {r} has eigenvalue {w[r].min():.3g}."
        )
    w = np.maximum(w, 0.0)
    root = np.einsum("nij,nj,nkj->nik", U, np.sqrt(w), U)
    return sym, root


def _common_basis(cov):
    """An orthogonal ``U`` diagonalising every covariance of the batch, or None if they do not
    commute (checked on a random combination's eigenvectors, to a relative 1e-9)."""
    n, d, _ = cov.shape
    c = np.random.default_rng(12345).uniform(0.5, 1.5, size=n)
    _, U = np.linalg.eigh(np.einsum("n,nij->ij", c, cov))
    rot = np.einsum("ki,nkl,lj->nij", U, cov, U)
    off = rot - np.einsum("nii->ni", rot)[:, :, None] * np.eye(d)
    scale = np.maximum(np.abs(cov).max(axis=(1, 2)), np.finfo(float).tiny)
    if np.all(np.abs(off).max(axis=(1, 2)) <= 1e-9 * scale):
        return U, np.maximum(np.einsum("nii->ni", rot), 0.0)
    return None, None


class MultivariateNormal(Distribution):
    """Batch of multivariate normal distributions ``N(mean, cov)`` on ``R^d``.

    Parameters
    ----------
    mean : array-like of shape (n_samples, d)
        Means (finite).
    cov : array-like of shape (n_samples, d, d), (n_samples, d) or (n_samples,)
        Full covariances (symmetric positive semi-definite), diagonal variances, or one spherical
        variance per row (``cov * I``). A scalar is one spherical variance for every row. The
        type is recorded in ``covariance_type`` (``"full"``, ``"diag"``, ``"spherical"``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import MultivariateNormal
    >>> p = MultivariateNormal(np.zeros((3, 2)), np.ones((3, 2)))
    >>> p.covariance_type, p.dim
    ('diag', 2)
    """

    _family = "multivariate_normal"  # dispatch key of skcalib._expectations (no import cycle)

    def __init__(self, mean, cov):
        mean = _float_array(mean, "mean", ndim=(2,))
        n, d = mean.shape
        if d < 1:
            raise ValueError("mean must have at least one column.")
        cov = _float_array(cov, "cov", ndim=(0, 1, 2, 3))
        if cov.ndim == 0:
            cov = np.full(n, float(cov))
        if cov.shape[0] != n:
            raise ValueError(f"cov has {cov.shape[0]} rows but mean has {n}.")
        if cov.ndim == 1:
            kind = "spherical"
            _check_scale(cov, "cov", strict=False)
        elif cov.ndim == 2:
            kind = "diag"
            if cov.shape[1] != d:
                raise ValueError(f"diagonal cov must have shape ({n}, {d}); got {cov.shape}.")
            _check_scale(cov, "cov", strict=False)
        else:
            kind = "full"
            if cov.shape[1:] != (d, d):
                raise ValueError(f"full cov must have shape ({n}, {d}, {d}); got {cov.shape}.")
            cov, root = _psd_sqrt_and_check(cov, "cov")
        self.mean = _read_only(mean)
        self.cov = _read_only(cov)
        self.covariance_type = kind
        self.dim = d
        self.n_samples = n
        if kind == "full":
            self._root = root
            self._basis, self._basis_var = _common_basis(cov)
        self._freeze()

    @property
    def variance(self):
        """Per-coordinate variances ``(n_samples, d)``."""
        if self.covariance_type == "spherical":
            return np.repeat(self.cov[:, None], self.dim, axis=1)
        if self.covariance_type == "diag":
            return self.cov.copy()
        return np.einsum("nii->ni", self.cov).copy()

    def full_covariance(self):
        """Covariances as full matrices, whatever ``covariance_type``.

        Returns
        -------
        ndarray of shape (n_samples, d, d)
            A new array.
        """
        if self.covariance_type == "full":
            return self.cov.copy()
        return np.einsum("ni,ij->nij", self.variance, np.eye(self.dim))

    def _take(self, rows):
        return MultivariateNormal(self.mean[rows], self.cov[rows])

    def _moments(self, unit=1.0):
        return self.mean / unit, (self.variance / unit / unit).sum(axis=1)

    def _draw(self, rng, m):
        E = rng.standard_normal((m, self.n_samples, self.dim))
        if self.covariance_type == "spherical":
            return self.mean + np.sqrt(self.cov)[:, None] * E
        if self.covariance_type == "diag":
            return self.mean + np.sqrt(self.cov) * E
        return self.mean + np.einsum("nij,mnj->mni", self._root, E)

    def commuting(self):
        """Whether all covariances commute (spherical, diagonal, or sharing eigenvectors).

        Returns
        -------
        bool
            True if the W2 distance is a Euclidean distance of embeddings (no Bures formula).
        """
        return self.covariance_type != "full" or self._basis is not None

    def _embedding(self):
        if self.covariance_type != "full":
            # Spherical covariances as diagonal ones, so that both types share one embedding.
            return np.column_stack([self.mean, np.sqrt(self.variance)])
        if self._basis is not None:
            return np.column_stack([self.mean, np.sqrt(self._basis_var)])
        return None

    def _w2_squared(self, i, other, j):
        E1, E2 = self._embedding(), other._embedding()
        if E1 is not None and E2 is not None and (
                self.covariance_type != "full" and other.covariance_type != "full"):
            d = E1[i] - E2[j]
            return np.einsum("...k,...k->...", d, d)
        # Bures: |m - m'|^2 + tr S + tr S' - 2 tr (S^{1/2} S' S^{1/2})^{1/2}
        shape = np.broadcast(i, j).shape
        i, j = np.broadcast_to(i, shape).ravel(), np.broadcast_to(j, shape).ravel()
        # In units of a power of two u when the covariances are huge (or tiny): S^{1/2} S'
        # S^{1/2} has the fourth power of the scales, beyond the float range for 1e150.
        top = max(math.sqrt(float(np.max(np.abs(d.cov)))) if d.cov.size else 0.0
                  for d in (self, other))
        unit = 1.0 if top == 0.0 or 1e-60 <= top <= 1e60 else math.ldexp(1.0, math.frexp(top)[1])
        R1 = self._roots() / unit
        C2 = other.full_covariance() / unit / unit
        out = np.empty(i.size)
        step = 4096
        for s in range(0, i.size, step):
            ii, jj = i[s:s + step], j[s:s + step]
            M = np.einsum("nij,njk,nkl->nil", R1[ii], C2[jj], R1[ii])
            ev = np.maximum(np.linalg.eigvalsh(0.5 * (M + np.swapaxes(M, 1, 2))), 0.0)
            dm = (self.mean[ii] - other.mean[jj]) / unit
            tr1 = np.einsum("nii->n", R1[ii] @ R1[ii])
            tr2 = np.einsum("nii->n", C2[jj])
            bures = tr1 + tr2 - 2 * np.sqrt(ev).sum(axis=1)
            # >= 0 exactly; below the rounding noise of the eigenvalues it is 0 (identical
            # covariances in two batches must be at distance 0, also for tiny length scales)
            noise = 16 * M.shape[1] * np.finfo(np.float64).eps * (tr1 + tr2)
            out[s:s + step] = np.einsum("nk,nk->n", dm, dm) + np.where(bures <= noise, 0.0, bures)
        if unit != 1.0:
            with np.errstate(over="ignore", under="ignore"):   # inf: a distance beyond range
                out *= unit * unit
        return out.reshape(shape)

    def _roots(self):
        if self.covariance_type == "full":
            return self._root
        return np.einsum("ni,ij->nij", np.sqrt(self.variance), np.eye(self.dim))

    def _mahalanobis_and_logdet(self, y):
        """``(y - m)^T S^{-1} (y - m)`` and ``log det S`` per row (covariances must be definite)."""
        y = _float_array(y, "y", ndim=(2,))
        if y.shape != self.mean.shape:
            raise ValueError(f"y must have shape {self.mean.shape}; got {y.shape}.")
        # residuals in halves (exact), so that opposite huge values do not overflow; the
        # quadratic form is 4 times that of the halves (inf beyond the float range)
        r = 0.5 * y - 0.5 * self.mean
        if self.covariance_type != "full":
            var = self.variance
            _require_positive(var, "cov")
            with np.errstate(over="ignore", invalid="ignore"):
                maha = 4.0 * np.einsum("ni,ni->n", r, r / var)
            return np.where(np.isnan(maha), np.inf, maha), np.log(var).sum(axis=1)
        try:
            L = np.linalg.cholesky(self.cov)
        except np.linalg.LinAlgError:
            raise ValueError("cov must be positive definite (a singular covariance has no "
                             "density).") from None
        with np.errstate(over="ignore", invalid="ignore"):
            z = np.linalg.solve(L, r[:, :, None])[:, :, 0]
            maha = 4.0 * np.einsum("ni,ni->n", z, z)
        logdet = 2.0 * np.log(np.einsum("nii->ni", L)).sum(axis=1)
        return np.where(np.isnan(maha), np.inf, maha), logdet

    def log_pdf(self, y):
        """Log-density of ``y[i]`` under row ``i`` (covariances must be positive definite).

        Parameters
        ----------
        y : array-like of shape (n_samples, d)
            Finite targets, one vector per row.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        maha, logdet = self._mahalanobis_and_logdet(y)
        return -0.5 * (maha + logdet + self.dim * math.log(2 * math.pi))  # -inf beyond range

    def tempered(self, temperature):
        """Temperature scaling (Definition F.1): ``N(mean, T * cov)``; the mean is unchanged.

        Parameters
        ----------
        temperature : float
            Positive finite temperature ``T`` (``T > 1`` widens, ``T < 1`` sharpens).

        Returns
        -------
        MultivariateNormal
            A new batch; ``self`` is unchanged.
        """
        T = _check_temperature(temperature)
        return MultivariateNormal(self.mean, self.cov * T)

    def _temperature_statistic(self, y):
        return self._mahalanobis_and_logdet(y)[0], self.dim


class Categorical(Distribution):
    """Batch of categorical distributions: the predicted class probabilities of a classifier.

    Parameters
    ----------
    probs : array-like of shape (n_samples, n_classes)
        Rows in ``[0, 1]`` summing to one (within ``sqrt(eps)`` of the input dtype).
    classes : array-like of shape (n_classes,), default=None
        Label of each column (default ``0, ..., n_classes - 1``): unique, of one type, no
        missing values.

    Notes
    -----
    Every classification metric accepts a ``Categorical`` in place of the probability matrix
    (its ``classes`` become the default ``labels``).

    Examples
    --------
    >>> from skcalib.distributions import Categorical
    >>> p = Categorical([[0.9, 0.1], [0.2, 0.8]], classes=["no", "yes"])
    >>> p.sample(random_state=0).shape
    (2,)
    """

    _family = "categorical"  # dispatch key of skcalib._expectations (no import cycle)
    dim = None

    def __init__(self, probs, classes=None):
        P = _float_array(probs, "probs", ndim=(2,))
        if P.shape[1] < 2:
            raise ValueError(f"probs must have at least 2 columns; got {P.shape[1]}.")
        if np.any(P < 0) or np.any(P > 1):
            raise ValueError("probs must be in [0, 1].")
        in_dtype = np.asarray(probs).dtype if hasattr(probs, "dtype") else np.float64
        if np.any(np.abs(P.sum(axis=1) - 1.0) > row_sum_tolerance(in_dtype)):
            raise ValueError("the rows of probs must sum to 1.")
        P = renormalise_low_precision(P, in_dtype)
        if classes is None:
            classes = np.arange(P.shape[1])
        self.probs = _read_only(P)
        self.classes = _check_classes(classes, P.shape[1])
        self.n_samples = P.shape[0]
        self._freeze()

    def _take(self, rows):
        return Categorical(self.probs[rows], self.classes)

    def _draw(self, rng, m):
        cdf = np.cumsum(self.probs, axis=1)
        u = rng.uniform(size=(m, self.n_samples, 1)) * cdf[:, -1:]
        idx = np.minimum((u > cdf).sum(axis=2), self.probs.shape[1] - 1)
        return self.classes[idx]

    def tempered(self, temperature):
        """Temperature scaling (Guo et al. 2017): probabilities ``proportional to probs**(1/T)``.

        Zero probabilities stay zero; the arg-max is unchanged.

        Parameters
        ----------
        temperature : float
            Positive finite temperature ``T`` (``T > 1`` widens, ``T < 1`` sharpens).

        Returns
        -------
        Categorical
            A new batch; ``self`` is unchanged.
        """
        T = _check_temperature(temperature)
        with np.errstate(divide="ignore"):
            z = np.log(self.probs) / T
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return Categorical(e / e.sum(axis=1, keepdims=True), self.classes)

    def _w2_squared(self, i, other, j):
        if not np.array_equal(self.classes, other.classes):
            raise ValueError("categorical distributions over different classes.")
        return 0.5 * np.abs(self.probs[i] - other.probs[j]).sum(axis=-1)


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
        if fam not in (Normal, MultivariateNormal, Laplace, Recalibrated):
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
        self.weights = _read_only(W)
        self.components = tuple(components)
        self.n_samples = n
        self.dim = components[0].dim
        self._freeze()

    @property
    def n_components(self):
        return len(self.components)

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
        if isinstance(self.components[0], Recalibrated):
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
        if isinstance(self.components[0], Recalibrated):
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


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(256)
_GL_NODES = 0.5 * (_GL_NODES + 1.0)   # Gauss-Legendre on (0, 1)
_GL_WEIGHTS = 0.5 * _GL_WEIGHTS
_INV_2_SQRT_PI = 0.5 / math.sqrt(math.pi)


def _check_quantile_map(knots, values):
    """Knots ``0 = a_0 < ... < a_m = 1`` and non-decreasing values from 0 to 1."""
    a = _float_array(knots, "knots", ndim=(1,))
    r = _float_array(values, "values", ndim=(1,))
    if a.shape != r.shape or a.size < 2:
        raise ValueError(f"knots and values must have one common length >= 2; got {a.shape} "
                         f"and {r.shape}.")
    if a[0] != 0.0 or a[-1] != 1.0 or np.any(np.diff(a) <= 0):
        raise ValueError("knots must increase strictly from 0 to 1.")
    if r[0] != 0.0 or r[-1] != 1.0 or np.any(np.diff(r) < 0):
        raise ValueError("values must be non-decreasing from 0 to 1 (R must map [0, 1] onto "
                         "[0, 1]).")
    return _read_only(a), _read_only(r)


def _std_normal_quantile_terms(a):
    """``z = Phi^{-1}(a)``, ``phi(z)`` and ``z phi(z)`` (0 at the ends ``a = 0, 1``)."""
    z = special.ndtri(a)
    finite = np.isfinite(z)
    zf = np.where(finite, z, 0.0)
    phi = np.where(finite, np.exp(-0.5 * zf * zf) / math.sqrt(2 * math.pi), 0.0)
    return z, phi, zf * phi


def _normal_partial_integral(a, u):
    """``int_a^u Phi^{-1}(v) dv = phi(Phi^{-1}(a)) - phi(Phi^{-1}(u))`` (elementwise); on short
    interior intervals (``u - a < 1e-3``) by the midpoint rule, avoiding the cancellation."""
    exact = _std_normal_quantile_terms(a)[1] - _std_normal_quantile_terms(u)[1]
    mid = (u - a) * special.ndtri(np.clip(0.5 * (a + u), 1e-300, 1.0 - 1e-16))
    return np.where((u - a < 1e-3) & (a > 0) & (u < 1), mid, exact)


def _normal_piece_averages(a):
    """Means over each piece ``[a_k, a_{k+1}]`` of ``z = Phi^{-1}(u)``, of ``t z`` with
    ``t = (u - a_k) / h_k`` and of ``z^2``: closed forms (``int z = -phi(z)``,
    ``int (u - a) z = -(u - a) phi(z) + Phi(sqrt(2) z) / (2 sqrt(pi))``,
    ``int z^2 = u - z phi(z)``), except on short interior pieces (``h < 1e-3``), where the
    differences of the closed forms would cancel, by Simpson's rule (the averages lie between the
    extreme values of ``z`` on the piece, so the error is bounded by its range of ``z``)."""
    z, phi, zphi = _std_normal_quantile_terms(a)
    h = np.diff(a)
    za, zb = z[:-1], z[1:]
    G = _INV_2_SQRT_PI * special.ndtr(np.sqrt(2.0) * z)
    # 1/(2 sqrt(pi)) - G(z_a) without cancellation near u = 1
    G_upper = _INV_2_SQRT_PI * special.ndtr(-np.sqrt(2.0) * za)
    last = np.isinf(zb)
    with np.errstate(invalid="ignore"):
        avg_z = (phi[:-1] - phi[1:]) / h
        D = np.where(last, G_upper, -h * phi[1:] + G[1:] - G[:-1])
        avg_tz = D / (h * h)
        avg_z2 = 1.0 - (zphi[1:] - zphi[:-1]) / h
    short = (h < 1e-3) & np.isfinite(za) & np.isfinite(zb)
    if np.any(short):
        zm = special.ndtri(0.5 * (a[:-1] + a[1:])[short])
        zs_a, zs_b = za[short], zb[short]
        avg_z[short] = (zs_a + 4.0 * zm + zs_b) / 6.0
        avg_tz[short] = (2.0 * zm + zs_b) / 6.0
        avg_z2[short] = (zs_a ** 2 + 4.0 * zm ** 2 + zs_b ** 2) / 6.0
    return avg_z, avg_tz, avg_z2


def _generalised_inverse(a, r, q):
    """``min{u : R(u) >= q}`` of the piecewise-linear map through ``(a, r)``, for ``q`` in
    ``[0, 1]`` (any shape; exact at the ends)."""
    k = np.clip(np.searchsorted(r, q, side="left"), 1, r.size - 1)
    lo, hi = r[k - 1], r[k]
    t = np.divide(q - lo, hi - lo, out=np.zeros(np.shape(q)), where=hi > lo)
    u = a[k - 1] + t * (a[k] - a[k - 1])
    return np.where(q <= 0, 0.0, np.where(q >= 1, 1.0, u))


def _inverse_map_with_complement(a, r, tau, delta, exact_ends=False, side="left"):
    """``u = R^{-1}(tau)`` and ``1 - u`` (from ``delta = 1 - tau``, without cancellation) at
    levels strictly inside ``(0, 1)``: ``u`` for the lower tail, ``1 - u`` for the upper one
    (kept at least the smallest normal number unless ``exact_ends``). ``side="right"`` gives the
    limit from the right where ``R`` is flat at ``tau`` (the low ends of the rule's panels)."""
    k = np.clip(np.searchsorted(r, tau, side=side), 1, r.size - 1)
    r_lo, r_hi = r[k - 1], r[k]
    width = r_hi - r_lo
    below = np.where(r_lo == 0.0, tau, tau - r_lo)        # tau - r_lo
    above = np.where(r_hi == 1.0, delta, r_hi - tau)      # r_hi - tau
    da = a[k] - a[k - 1]
    u = a[k - 1] + np.clip(below / width, 0.0, 1.0) * da
    v = (1.0 - a[k]) + np.clip(above / width, 0.0, 1.0) * da
    if exact_ends:
        return u, v
    tiny = np.finfo(np.float64).tiny
    return np.maximum(u, tiny), np.maximum(v, tiny)


def _standard_quantile(fam, u, v):
    """Quantiles of the standard Normal or Laplace at levels ``u`` (with ``v = 1 - u``), each
    from the nearer tail."""
    lower = u <= v
    if fam is Normal:
        return np.where(lower, special.ndtri(np.where(lower, u, 0.5)),
                        -special.ndtri(np.where(lower, 0.5, v)))
    return np.where(lower, np.log(2.0 * np.where(lower, u, 0.5)),
                    -np.log(2.0 * np.where(lower, 0.5, v)))


def _gauss_legendre01(m):
    x, w = np.polynomial.legendre.leggauss(m)
    return 0.5 * (x + 1.0), 0.5 * w


#: Largest number of dyadic panels toward a level 0 or 1: the innermost panel is
#: ``2**-64`` of its piece, below any effect on the integrals of quantile functions.
_MAX_GRADING = 64


def _tau_rule(breaks, maps, n_nodes=8, max_panels=None):
    """Nodes ``tau``, ``delta = 1 - tau`` (accurate near 1) and weights of a composite
    Gauss-Legendre rule on ``[0, 1]`` for integrands built from ``F0^{-1}(R^{-1}(tau))``.

    Panels are the pieces between the sorted ``breaks`` (0, 1/2 and 1 added; with
    ``max_panels``, at most that many, taken evenly among the breaks), each graded
    geometrically toward an end where a map's level ``u = R^{-1}(tau)`` comes within one
    panel width (in ``u``) of 0 or 1: the quantile functions of unbounded distributions are
    singular there (integrably), and the dyadic panels ``[c 2^-k-1, c 2^-k]`` make them smooth
    on every panel (up to ``_MAX_GRADING`` levels). ``maps`` is a list of ``(knots, values)``.
    """
    t = np.unique(np.concatenate([[0.0, 0.5, 1.0], np.clip(breaks, 0.0, 1.0)]))
    if max_panels is not None and t.size - 1 > max_panels:
        keep = np.unique(np.round(np.linspace(0, t.size - 1, max_panels + 1)).astype(np.intp))
        t = np.unique(np.r_[t[keep], 0.5])
    d = 1.0 - t                              # exact for t >= 1/2 (Sterbenz)
    lo_t, hi_t, lo_d, hi_d = t[:-1], t[1:], d[:-1], d[1:]
    width = np.where(hi_t <= 0.5, hi_t - lo_t, lo_d - hi_d)
    # levels of grading toward each end: log2 of (u-width / distance of u to 0 or 1)
    need_lo = np.zeros(width.size, np.intp)
    need_hi = np.zeros(width.size, np.intp)
    for a, r in maps:
        u_lo, v_lo = _inverse_map_with_complement(a, r, lo_t, lo_d, exact_ends=True,
                                                  side="right")
        u_hi, v_hi = _inverse_map_with_complement(a, r, hi_t, hi_d, exact_ends=True)
        span = np.maximum(u_hi - u_lo, v_lo - v_hi)
        with np.errstate(divide="ignore"):
            g_lo = np.ceil(np.log2(span / u_lo)) + 1        # singular at u = 0 (lower half)
            g_hi = np.ceil(np.log2(span / v_hi)) + 1        # singular at u = 1 (upper half)
        need_lo = np.maximum(need_lo, np.clip(np.nan_to_num(g_lo, posinf=_MAX_GRADING), 0,
                                              _MAX_GRADING).astype(np.intp))
        need_hi = np.maximum(need_hi, np.clip(np.nan_to_num(g_hi, posinf=_MAX_GRADING), 0,
                                              _MAX_GRADING).astype(np.intp))
    # Sub-panel boundaries, as fractions f of each panel from its low end (and 1 - f).
    x, w = _gauss_legendre01(n_nodes)
    taus, deltas, weights = [], [], []
    for p in range(width.size):
        if width[p] <= 0.0:
            continue
        fr = [0.0, 1.0]
        fr += [0.5 ** k for k in range(1, need_lo[p] + 1)]
        fr += [1.0 - 0.5 ** k for k in range(1, need_hi[p] + 1)]
        f = np.unique(fr)
        g = 1.0 - f[::-1]                     # distances from the high end, exact
        f_lo, f_hi = f[:-1], f[1:]
        g_lo, g_hi = g[::-1][:-1], g[::-1][1:]   # 1 - f_lo, 1 - f_hi
        h = width[p] * np.where(f_hi <= 0.5, f_hi - f_lo, g_lo - g_hi)[:, None]
        if hi_t[p] <= 0.5:
            tau = lo_t[p] + width[p] * f_lo[:, None] + h * x
            delta = 1.0 - tau
        else:
            delta = hi_d[p] + width[p] * g_hi[:, None] + h * (1.0 - x)
            tau = 1.0 - delta
        taus.append(tau.ravel())
        deltas.append(delta.ravel())
        weights.append((h * w).ravel())
    return np.concatenate(taus), np.concatenate(deltas), np.concatenate(weights)


def _standardised_quantile_moments(maps):
    """Means and standard deviations of ``Q_k(U) = F0_k^{-1}(R_k^{-1}(U))``, ``U`` uniform, for
    two maps ``(family, knots, values)`` and the covariance of the two (comonotone coupling):
    ``(mu_1, sd_1, mu_2, sd_2, cov)``, by :func:`_tau_rule` on the union of the maps' kinks in
    ``tau`` (their values, and ``R(1/2)`` where the Laplace quantile has its kink): smooth
    integrands on every panel, integrated to about 1e-14."""
    breaks = np.concatenate([np.concatenate([r, np.interp([0.5], a, r)]) for _, a, r in maps])
    tau, delta, w = _tau_rule(breaks, [(a, r) for _, a, r in maps])
    Q = [_standard_quantile(fam, *_inverse_map_with_complement(a, r, tau, delta))
         for fam, a, r in maps]
    mus = [float(w @ q) for q in Q]
    C = [q - m for q, m in zip(Q, mus)]
    sds = [math.sqrt(max(float(w @ (c * c)), 0.0)) for c in C]
    return mus[0], sds[0], mus[1], sds[1], float(w @ (C[0] * C[1]))


#: Panels and nodes per panel of the rule of recalibrated mixtures, whose W2 needs the
#: quantiles of every row at every node (see :meth:`Recalibrated._rule_embedding`).
_MIXTURE_RULE = (128, 4)




class Recalibrated(Distribution):
    """Univariate predictive distributions recalibrated by a monotone map of their PIT.

    Row ``i`` has the cumulative distribution function ``G_i(y) = R(F_i(y))``, where ``F_i`` is
    row ``i`` of a univariate ``base`` (Normal, Laplace, a Mixture of them, or another
    ``Recalibrated``) and ``R`` is one continuous, non-decreasing, piecewise-linear map of
    ``[0, 1]`` onto itself through the points ``(knots[k], values[k])`` (``R(0) = 0``,
    ``R(1) = 1``), shared by every row. This is the predictive distribution of quantile
    recalibration (Kuleshov, Fenner and Ermon 2018; see
    :class:`~skcalib.recalibration.QuantileRecalibration`).

    * ``cdf(y) = R(F(y))``; the PIT of the recalibrated predictions is ``R`` of the base PIT.
    * ``ppf(q) = F^{-1}(R^{-1}(q))`` with the generalised inverse
      ``R^{-1}(q) = min{u : R(u) >= q}`` (flat pieces of ``R`` are jumped over).
    * ``log_pdf(y) = log R'(F(y)) + log f(y)``: the slope of the piece of ``R`` that contains
      ``F(y)`` (the left one at a knot, so that the fitted PIT values of
      :class:`~skcalib.recalibration.QuantileRecalibration` have positive density), ``-inf``
      where ``R`` is flat.
    * ``sample`` draws by the inverse CDF, ``ppf(U)`` with ``U`` uniform.
    * ``mean``, ``variance`` and the CRPS (:func:`skcalib.crps`): exact for a Normal base, whose
      recalibrated rows are one standardised distribution ``R(Phi(.))`` shifted and scaled
      (closed-form integrals of ``Phi^{-1}`` over each piece of ``R``); for other bases, a
      256-node Gauss-Legendre quadrature over the quantile level ``tau`` of
      ``int G^{-1}(tau) dtau``, ``int G^{-1}(tau)^2 dtau`` and
      ``CRPS = 2 int (1{y < G^{-1}(tau)} - tau)(G^{-1}(tau) - y) dtau`` (an approximation,
      tested against adaptive quadrature and against the exact Normal case).

    * 2-Wasserstein distances (:func:`wasserstein_distance`, and so the default kernels of
      :func:`skcalib.skce`, :func:`skcalib.ucme` and their tests): see the module docstring;
      the kernel expectations ``E k(Z, y)`` use the Monte-Carlo fallback (``n_mc_samples``).

    Resolution: near ``u = 1`` a base CDF has the spacing of float64
    (``1.1e-16``), so on a last piece of ``R`` that starts within about ``1e-12`` of 1 the CDF
    moves in steps of up to its slope times that spacing (bounded by the probability of that
    piece, ``1 / (2n)`` for a map fitted on ``n`` PIT values); ``ppf`` there is exact.

    Parameters
    ----------
    base : Distribution
        Univariate predictive distributions (Normal, Laplace, a Mixture of them, or
        Recalibrated).
    knots : array-like of shape (m,)
        Strictly increasing, from 0 to 1.
    values : array-like of shape (m,)
        ``R(knots)``: non-decreasing, from 0 to 1.

    Examples
    --------
    >>> from skcalib.distributions import Normal, Recalibrated
    >>> d = Recalibrated(Normal([0.0, 1.0], 1.0), [0.0, 0.5, 1.0], [0.0, 0.8, 1.0])
    >>> d.cdf([0.0, 1.0])                       # R(1/2) = 0.8
    array([0.8, 0.8])
    >>> d.ppf(0.8)
    array([0., 1.])
    """

    _family = "recalibrated"
    dim = None

    def __init__(self, base, knots, values):
        if not isinstance(base, Distribution):
            raise TypeError("base must be a skcalib distribution; got "
                            f"{type(base).__name__}.")
        if not (isinstance(base, (Normal, Laplace, Recalibrated)) or (
                isinstance(base, Mixture) and isinstance(base.components[0], (Normal, Laplace)))):
            raise TypeError(_univariate_only(base, "base of Recalibrated"))
        self.base = base
        self.knots, self.values = _check_quantile_map(knots, values)
        self.n_samples = base.n_samples
        d = np.diff(self.knots)
        self._slopes = _read_only(np.diff(self.values) / d)
        self._cache = {}   # derived quantities of the immutable parameters (W2 moments)
        self._freeze()

    def _take(self, rows):
        return Recalibrated(self.base._take(rows), self.knots, self.values)

    # -- 2-Wasserstein distances ---------------------------------------------------------------
    #
    # W2^2(p, q) = int_0^1 (G_p^{-1}(tau) - G_q^{-1}(tau))^2 dtau for univariate distributions.
    # With a location-scale base (Normal, Laplace; nested maps composed into one), row i's
    # quantile function is m_i + s_i Q(tau) with the standardised Q(tau) = F0^{-1}(R^{-1}(tau)),
    # so that everything reduces to three numbers per pair of maps (see _ls_w2_squared). Other
    # bases use the quantiles of every row on a quadrature rule (_rule_embedding).

    def _flat(self):
        """``(base, knots, values)`` with nested recalibrations composed into one map
        (``R2(R1(u))`` is piecewise linear, with kinks at the knots of ``R1`` and where ``R1``
        crosses a knot of ``R2``)."""
        if not isinstance(self.base, Recalibrated):
            return self.base, self.knots, self.values
        base, a1, r1 = self.base._flat()
        pre = _generalised_inverse(a1, r1, self.knots)
        knots = np.unique(np.concatenate([a1, pre]))
        values = np.interp(np.interp(knots, a1, r1), self.knots, self.values)
        values[0], values[-1] = 0.0, 1.0
        return base, knots, np.maximum.accumulate(values)

    def _map_info(self):
        """``(base, family, knots, values, key)`` of the composed map; ``family`` is Normal or
        Laplace for a location-scale base, else None. Cached (the object is immutable)."""
        info = self._cache.get("map")
        if info is None:
            base, a, r = self._flat()
            fam = type(base) if type(base) in (Normal, Laplace) else None
            key = ("location-scale" if fam else "quantile rule",
                   fam.__name__ if fam else None, a.tobytes(), r.tobytes())
            info = self._cache["map"] = (base, fam, a, r, key)
        return info

    def _embedding_key(self):
        return self._map_info()[4]

    def _pair_moments(self, other):
        """``(mu_p, sd_p, mu_q, sd_q, cov)``: means, standard deviations and covariance of the
        standardised quantile functions ``Q_p(U), Q_q(U)`` of two location-scale maps (one
        quadrature rule for all five, so that ``cov <= sd_p sd_q`` holds to rounding)."""
        _, fam_q, a_q, r_q, key_q = other._map_info()
        got = self._cache.get(("pair", key_q))
        if got is None:
            _, fam_p, a_p, r_p, key_p = self._map_info()
            got = _standardised_quantile_moments([(fam_p, a_p, r_p), (fam_q, a_q, r_q)])
            self._cache[("pair", key_q)] = got
        return got

    def _location_scale(self):
        """``(loc, scale, mean, sd)`` per row of a location-scale base (``mean = loc + scale mu``,
        ``sd = scale sigma`` of the recalibrated rows)."""
        base = self._map_info()[0]
        mu, sd = self._pair_moments(self)[:2]
        return base.loc, base.scale, base.loc + base.scale * mu, base.scale * sd

    def _embedding(self):
        if self._map_info()[1] is not None:
            _, _, mean, sd = self._location_scale()
            return np.column_stack([mean, sd])
        return self._rule_embedding(self)

    def _rule_embedding(self, other):
        """``sqrt(w_t) G_i^{-1}(tau_t)`` on the rule of the maps of ``self`` and ``other``
        (:func:`_tau_rule` with ``_MIXTURE_RULE`` panels and nodes): squared differences of
        rows are the rule's approximation of ``W2^2``. Location-scale bases compute the
        quantiles from the standardised ones; others (mixtures) by their ``ppf``."""
        key = ("rule", other._embedding_key())
        E = self._cache.get(key)
        if E is None:
            base, fam, a, r, _ = self._map_info()
            maps = [(a, r)] if other is self else [(a, r), other._map_info()[2:4]]
            breaks = np.concatenate([m[1] for m in maps])
            panels, nodes = _MIXTURE_RULE
            tau, delta, w = _tau_rule(breaks, maps, n_nodes=nodes, max_panels=panels)
            u, v = _inverse_map_with_complement(a, r, tau, delta)
            if fam is not None:
                Q = base.loc[:, None] + base.scale[:, None] * _standard_quantile(fam, u, v)[None]
            else:
                # the base's quantiles at the levels u (one vectorised ppf per chunk of rows;
                # levels above 1/2 that round to 1 are kept just below it)
                u = np.minimum(u, np.nextafter(1.0, 0.0))
                n, m = self.n_samples, u.size
                Q = np.empty((n, m))
                step = max(1, (1 << 18) // m)
                for start in range(0, n, step):
                    rows = np.arange(start, min(start + step, n))
                    tiled = base[np.repeat(rows, m)]
                    Q[rows] = tiled.ppf(np.tile(u, rows.size)).reshape(rows.size, m)
            E = _read_only(Q * np.sqrt(w)[None, :])
            self._cache[key] = E
        return E

    def _w2_squared(self, i, other, j):
        if self._embedding_key() == other._embedding_key():
            return Distribution._w2_squared(self, i, other, j)
        if self._map_info()[1] is not None and other._map_info()[1] is not None:
            # W2^2 = (mean_i - mean_j)^2 + (sd_i - sd_j)^2 + 2 s_i s_j (sig_p sig_q - cov_pq)
            # (expand int (m_i + s_i Q_p - m_j - s_j Q_q)^2); the last term is >= 0 (Cauchy-
            # Schwarz) and 0 for equal maps.
            mu_p, sd_p, mu_q, sd_q, cov = self._pair_moments(other)
            loc_p, s_p = self._map_info()[0].loc, self._map_info()[0].scale
            loc_q, s_q = other._map_info()[0].loc, other._map_info()[0].scale
            dm = (loc_p[i] + s_p[i] * mu_p) - (loc_q[j] + s_q[j] * mu_q)
            ds = s_p[i] * sd_p - s_q[j] * sd_q
            return dm * dm + ds * ds + 2.0 * s_p[i] * s_q[j] * max(sd_p * sd_q - cov, 0.0)
        # a recalibrated mixture: quantiles on the joint rule of both maps
        E1, E2 = self._rule_embedding(other), other._rule_embedding(self)
        shape = np.broadcast(i, j).shape
        i, j = np.broadcast_to(i, shape).ravel(), np.broadcast_to(j, shape).ravel()
        out = np.empty(i.size)
        step = max(1, (1 << 22) // E1.shape[1])
        for s in range(0, i.size, step):
            d = E1[i[s:s + step]] - E2[j[s:s + step]]
            out[s:s + step] = np.einsum("nk,nk->n", d, d)
        return out.reshape(shape)

    def _map(self, u):
        return np.interp(u, self.knots, self.values)

    def _inverse_map(self, q):
        """``min{u : R(u) >= q}`` for ``q`` in ``[0, 1]`` (any shape)."""
        u = _generalised_inverse(self.knots, self.values, q)
        # for 0 < q < 1 the inverse lies in (0, 1); keep rounding from reaching the ends (whose
        # base quantiles are infinite): u = 1 - 1e-17 would round to 1
        u = np.clip(u, np.finfo(np.float64).tiny, np.nextafter(1.0, 0.0))
        return np.where(q <= 0, 0.0, np.where(q >= 1, 1.0, u))

    def cdf(self, y):
        """Cumulative distribution function ``R(F_i(y_i))``.

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._map(self.base.cdf(y))

    def ppf(self, q):
        """Quantile function ``F_i^{-1}(R^{-1}(q_i))`` (generalised inverse of ``R``).

        Parameters
        ----------
        q : float or array-like of shape (n_samples,)
            Probabilities in ``[0, 1]`` (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        q = _check_q(q, self.n_samples)
        return self.base.ppf(self._inverse_map(q))

    def log_pdf(self, y):
        """Log-density ``log R'(F_i(y_i)) + log f_i(y_i)`` (``-inf`` where ``R`` is flat).

        Parameters
        ----------
        y : float or array-like of shape (n_samples,)
            Finite targets (a scalar is used for every row).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        u = self.base.cdf(y)
        k = np.clip(np.searchsorted(self.knots, u, side="left") - 1, 0, self._slopes.size - 1)
        with np.errstate(divide="ignore"):
            return np.log(self._slopes[k]) + self.base.log_pdf(y)

    def _draw(self, rng, m):
        U = rng.random((m, self.n_samples))
        return np.stack([self.base.ppf(self._inverse_map(U[j])) for j in range(m)])

    # -- moments and CRPS ---------------------------------------------------------------------

    def _standard_normal_terms(self):
        """For a Normal base: ``(mu, second, c, K0)`` of the standardised distribution
        ``R(Phi)``: its mean ``int z dR``, second moment ``int z^2 dR``, ``c = K0(1) - K1(1)``
        of the CRPS and ``K0`` at the knots (``K0(u) = int_0^u z dR``,
        ``K1(u) = int_0^u R z dR``)."""
        a, r = self.knots, self.values
        dr = np.diff(r)
        avg_z, avg_tz, avg_z2 = _normal_piece_averages(a)
        K0 = np.concatenate(([0.0], np.cumsum(dr * avg_z)))
        K1_total = float(np.sum(dr * (r[:-1] * avg_z + dr * avg_tz)))
        second = float(np.sum(dr * avg_z2))
        return K0[-1], second, K0[-1] - K1_total, K0

    def _quadrature_quantiles(self):
        """``G^{-1}`` at the Gauss-Legendre levels: shape ``(256, n_samples)``."""
        u = self._inverse_map(_GL_NODES)
        return np.stack([self.base.ppf(np.full(self.n_samples, v)) for v in u])

    @property
    def mean(self):
        """Means ``int G^{-1}(tau) dtau`` (exact for a Normal base)."""
        if isinstance(self.base, Normal):
            mu = self._standard_normal_terms()[0]
            return self.base.loc + self.base.scale * mu
        return _GL_WEIGHTS @ self._quadrature_quantiles()

    @property
    def variance(self):
        """Variances (exact for a Normal base)."""
        return _variance_in_range(self)

    def _moments(self, unit=1.0):
        if isinstance(self.base, Normal):
            mu, second = self._standard_normal_terms()[:2]
            s = self.base.scale / unit
            return ((self.base.loc / unit + s * mu)[:, None],
                    s * s * max(second - mu * mu, 0.0))
        Q = self._quadrature_quantiles() / unit
        m = _GL_WEIGHTS @ Q
        return m[:, None], np.maximum(_GL_WEIGHTS @ (Q - m) ** 2, 0.0)

    def _crps(self, y):
        """CRPS of every row at ``y`` (exact for a Normal base, quadrature otherwise)."""
        y = np.asarray(y, dtype=np.float64)
        if isinstance(self.base, Normal) and np.all(self.base.scale > 0):
            _, _, c, K0 = self._standard_normal_terms()
            s = self.base.scale
            t = (y - self.base.loc) / s
            u = special.ndtr(t)
            k = np.clip(np.searchsorted(self.knots, u, side="right") - 1, 0, self._slopes.size - 1)
            # K0(u) = K0(a_k) + slope_k int_{a_k}^u z: a partial piece
            K0u = K0[k] + self._slopes[k] * _normal_partial_integral(self.knots[k], u)
            return s * np.maximum(t * (2.0 * self._map(u) - 1.0) + 2.0 * c - 2.0 * K0u, 0.0)
        return _crps_quantile_quadrature(self, y, self._quadrature_quantiles())


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
    if fam in (Normal, Laplace):
        return fam(np.concatenate([d.loc for d in dists]), np.concatenate([d.scale for d in dists]))
    if fam is MultivariateNormal:
        dims = sorted({d.dim for d in dists})
        if len(dims) > 1:
            raise ValueError("can only concatenate MultivariateNormal batches of one dimension; "
                             f"got dimensions {dims}.")
        kinds = {d.covariance_type for d in dists}
        covs = [d.cov for d in dists] if len(kinds) == 1 else [d.full_covariance() for d in dists]
        return MultivariateNormal(np.concatenate([d.mean for d in dists]), np.concatenate(covs))
    if fam is Categorical:
        if any(not np.array_equal(d.classes, dists[0].classes) for d in dists):
            raise ValueError("can only concatenate Categorical batches with the same classes.")
        return Categorical(np.concatenate([d.probs for d in dists]), dists[0].classes)
    if fam is Recalibrated:
        first = dists[0]
        if any(not (np.array_equal(d.knots, first.knots) and np.array_equal(d.values, first.values))
               for d in dists):
            raise ValueError("can only concatenate Recalibrated batches with the same map (knots "
                             "and values); use a Mixture to combine differently recalibrated "
                             "predictions.")
        return Recalibrated(concatenate([d.base for d in dists]), first.knots, first.values)
    if any(d.n_components != dists[0].n_components for d in dists):
        raise ValueError("can only concatenate mixtures with the same number of components.")
    return Mixture(np.concatenate([d.weights for d in dists]),
                   [concatenate([d.components[k] for d in dists])
                    for k in range(dists[0].n_components)])


_MAX_PERMUTATION_COMPONENTS = 6
_TRANSPORT_CHUNK = 16384


def _transport_cost(a, b, cost):
    """Exact optimal-transport cost ``min_w sum w_kl cost_kl`` for batches of weight vectors.

    ``a`` (n, M) and ``b`` (n, Mq) are the marginals (rows summing to one), ``cost`` (n, M, Mq).
    Every path is exact (no iterative approximation): one component on either side is a product
    coupling; uniform weights with equal counts are an assignment problem (Birkhoff), solved by
    enumerating permutations; two components on one side are a fractional knapsack (closed form
    after sorting); otherwise a batched transportation simplex runs to a certified optimum.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n, M, Mq = cost.shape
    if n == 0:
        return np.zeros(0)
    if M == 1 or Mq == 1:
        return np.einsum("nk,nl,nkl->n", a, b, cost)
    # Rows may sum to one only within sqrt(eps); transport needs equal masses.
    a = a / a.sum(axis=1, keepdims=True)
    b = b / b.sum(axis=1, keepdims=True)
    out = _transport_cost_normalised(a, b, cost)
    if M == Mq:
        # The identity plan is feasible where both sides have the same weights: its cost (0 for
        # identical rows) bounds the optimum, which the solvers reach only to within rounding
        # (a mixture's distance to itself would be ~1e-8 instead of 0).
        same = np.all(a == b, axis=1)
        if np.any(same):
            diag = np.einsum("nk,nkk->n", a[same], cost[same])
            out[same] = np.minimum(out[same], diag)
    return np.maximum(out, 0.0)


def _transport_cost_normalised(a, b, cost):
    """:func:`_transport_cost` for marginals that sum to one exactly."""
    n, M, Mq = cost.shape
    equal = (M == Mq and np.allclose(a, 1.0 / M, rtol=0, atol=1e-12)
             and np.allclose(b, 1.0 / M, rtol=0, atol=1e-12))
    if equal and M <= _MAX_PERMUTATION_COMPONENTS:
        # Birkhoff: with uniform weights an optimal plan is a permutation; enumerate them.
        best = np.full(n, np.inf)
        cols = np.arange(M)
        for perm in itertools.permutations(range(M)):
            np.minimum(best, cost[:, cols, perm].sum(axis=1), out=best)
        return best / M
    if M == 2:
        return _transport_two_rows(a, b, cost)
    if Mq == 2:
        return _transport_two_rows(b, a, np.swapaxes(cost, 1, 2))
    out = np.empty(n)
    for s in range(0, n, _TRANSPORT_CHUNK):
        sl = slice(s, s + _TRANSPORT_CHUNK)
        out[sl] = _transport_simplex(a[sl], b[sl], cost[sl])
    return out


def _transport_two_rows(a, b, cost):
    """Closed form for two sources: a fractional knapsack.

    With ``w`` the mass source 0 sends (``0 <= w_l <= b_l``, ``sum_l w_l = a_0``) and source 1
    the rest, the cost is ``sum_l cost_1l b_l + sum_l w_l (cost_0l - cost_1l)``: source 0 fills
    the targets in increasing order of ``cost_0l - cost_1l``. For 2 x 2 this is the closed form on
    the one-dimensional transport polytope (the end point chosen by the sign of
    ``cost_00 - cost_01 - cost_10 + cost_11``).
    """
    d = cost[:, 0, :] - cost[:, 1, :]
    order = np.argsort(d, axis=1, kind="stable")
    bs = np.take_along_axis(b, order, axis=1)
    before = np.cumsum(bs, axis=1) - bs
    w = np.clip(a[:, :1] - before, 0.0, bs)
    return (np.einsum("nl,nl->n", cost[:, 1, :], b)
            + np.einsum("nl,nl->n", w, np.take_along_axis(d, order, axis=1)))


def _transport_lp(a, b, cost):
    """The guard of :func:`_transport_simplex` (pairs not certified optimal after its iteration
    cap; never reached in the tests but by forcing it): one sparse linear program for the whole
    batch (block-diagonal marginal constraints, HiGHS), whose blocks are the separate transport
    problems; each block of the optimal plan is optimal for its pair."""
    n, M, Mq = cost.shape
    one = np.vstack([np.kron(np.eye(M), np.ones(Mq)), np.kron(np.ones(M), np.eye(Mq))])[:-1]
    A_eq = sparse.kron(sparse.identity(n, format="csr"), sparse.csr_matrix(one), format="csr")
    b_eq = np.concatenate([a, b[:, :-1]], axis=1).ravel()
    c = cost.reshape(-1)
    res = optimize.linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status != 0:  # pragma: no cover - the (normalised) marginals always admit a plan
        raise RuntimeError(f"optimal transport failed: {res.message}")
    x = np.maximum(res.x, 0.0).reshape(n, M * Mq)
    return np.einsum("nk,nk->n", x, cost.reshape(n, M * Mq))


_SIMPLEX_DANTZIG_ITERATIONS = 50
_SIMPLEX_MAX_ITERATIONS = 500


def _transport_simplex(a, b, cost):
    """Batched transportation simplex (the network simplex on the bipartite graph), exact.

    Every pair starts from a least-cost basis (a spanning tree of the bipartite graph
    rows x columns with ``M + Mq - 1`` cells) and pivots until no reduced cost
    ``cost_kl - u_k - v_l`` is below ``-1e-12 * max|cost|``; that certifies optimality (by
    duality the cost is then within that tolerance of the optimum). The entering cell is the most
    negative reduced cost (Dantzig), switching to Bland's rule (first negative cell, first
    blocking cell) after a few dozen pivots so that degenerate pivots cannot cycle. Arrays keep
    the batch on the last axis and each step is vectorised over the pairs not yet optimal.
    """
    n, M, Mq = cost.shape
    K = M * Mq
    c = np.ascontiguousarray(np.moveaxis(cost.reshape(n, K), 0, -1))  # (K, n)
    x, basis = _least_cost_basis(a.T, b.T, c.reshape(M, Mq, n))
    x, basis = x.reshape(K, n), basis.reshape(K, n)
    tol = 1e-12 * np.abs(c).max(axis=0)
    out = np.empty(n)
    act = np.arange(n)
    for it in range(_SIMPLEX_MAX_ITERATIONS):
        u, v, parent, depth = _tree_potentials(basis.reshape(M, Mq, -1), c.reshape(M, Mq, -1))
        r = (c.reshape(M, Mq, -1) - u[:, None, :] - v[None, :, :]).reshape(K, -1)
        r[basis] = 0.0
        neg = r < -tol
        done = ~neg.any(axis=0)
        if np.any(done):
            out[act[done]] = np.einsum("kn,kn->n", x[:, done], c[:, done])
            keep = ~done
            act, x, basis, c, tol = act[keep], x[:, keep], basis[:, keep], c[:, keep], tol[keep]
            r, neg, parent, depth = r[:, keep], neg[:, keep], parent[:, keep], depth[:, keep]
            if act.size == 0:
                break
        m = act.size
        cols = np.arange(m)
        enter = r.argmin(axis=0) if it < _SIMPLEX_DANTZIG_ITERATIONS else neg.argmax(axis=0)
        p, q = np.divmod(enter, Mq)
        S = _cycle_signs(p, q, parent, depth, M, Mq).reshape(K, m)
        S[enter, cols] = 1.0
        blocking = np.where(S < 0, x, np.inf)
        leave = blocking.argmin(axis=0)  # the first blocking cell among ties (Bland)
        theta = blocking[leave, cols]
        x += theta * S
        x[leave, cols] = 0.0
        basis[enter, cols] = True
        basis[leave, cols] = False
    if act.size:  # Bland's rule terminates; a guard against rounding loops (tests force it)
        out[act] = _transport_lp(a[act], b[act], cost[act])
    return out


def _least_cost_basis(a, b, c):
    """Initial basic feasible plans by the least-cost rule: ``M + Mq - 1`` steps, each giving the
    cheapest open cell as much as its row and column allow and closing one line (both on the
    last step), so that the basic cells form a spanning tree. ``a`` (M, n), ``b`` (Mq, n),
    ``c`` (M, Mq, n)."""
    M, Mq, n = c.shape
    x = np.zeros((M, Mq, n))
    basis = np.zeros((M, Mq, n), dtype=bool)
    ra, rb = a.copy(), b.copy()
    open_r = np.ones((M, n), dtype=bool)
    open_c = np.ones((Mq, n), dtype=bool)
    cols = np.arange(n)
    for step in range(M + Mq - 1):
        masked = np.where(open_r[:, None, :] & open_c[None, :, :], c, np.inf).reshape(M * Mq, n)
        i, j = np.divmod(masked.argmin(axis=0), Mq)
        t = np.minimum(ra[i, cols], rb[j, cols])
        x[i, j, cols] = t
        basis[i, j, cols] = True
        ra[i, cols] -= t
        rb[j, cols] -= t
        row_min = ra[i, cols] <= 0.0
        more_r = open_r.sum(axis=0) > 1
        more_c = open_c.sum(axis=0) > 1
        close_r = (row_min & more_r) | ~more_c
        close_c = ~close_r | ~more_r
        open_r[i[close_r], cols[close_r]] = False
        open_c[j[close_c], cols[close_c]] = False
    return x, basis


def _tree_potentials(basis, c):
    """Dual potentials ``u_k + v_l = cost_kl`` on the basic cells (``u_0 = 0``) and the basis
    tree rooted at row 0: ``parent`` and ``depth`` of every node (rows ``0..M-1``, then
    columns ``M..M+Mq-1``). Batch on the last axis."""
    M, Mq, m = c.shape
    u = np.zeros((M, m))
    v = np.zeros((Mq, m))
    known_u = np.zeros((M, m), dtype=bool)
    known_u[0] = True
    known_v = np.zeros((Mq, m), dtype=bool)
    parent = np.full((M + Mq, m), -1, np.intp)
    depth = np.zeros((M + Mq, m), np.intp)
    for _ in range(M + Mq):  # one round per level of the tree at least
        for l in range(Mq):
            for k in range(M):
                new = basis[k, l] & known_u[k] & ~known_v[l]
                if new.any():
                    v[l] = np.where(new, c[k, l] - u[k], v[l])
                    parent[M + l] = np.where(new, k, parent[M + l])
                    depth[M + l] = np.where(new, depth[k] + 1, depth[M + l])
                    known_v[l] |= new
        for k in range(M):
            for l in range(Mq):
                new = basis[k, l] & known_v[l] & ~known_u[k]
                if new.any():
                    u[k] = np.where(new, c[k, l] - v[l], u[k])
                    parent[k] = np.where(new, M + l, parent[k])
                    depth[k] = np.where(new, depth[M + l] + 1, depth[k])
                    known_u[k] |= new
        if known_u.all() and known_v.all():
            return u, v, parent, depth
    # pragma: no cover - the least-cost rule and the pivots keep the basis a spanning tree
    raise RuntimeError("internal error: a transport basis is not a spanning tree.")


def _cycle_signs(p, q, parent, depth, M, Mq):
    """Signs (+1/-1) of the basic cells on the cycle that cell ``(p, q)`` closes in the tree.

    The cycle is the entering cell (+) followed by the tree path from column ``q`` back to row
    ``p``, whose cells alternate -, +, ..., - ; an edge is identified by its child node ``c``,
    and its sign is - when the distance from the path's end (``p`` or ``q``) to ``c`` is even.
    Batch on the last axis; returns ``(M, Mq, m)``."""
    m = p.size
    S = np.zeros((M, Mq, m))
    cols = np.arange(m)
    ends = (p, M + q)
    nodes = [p.copy(), M + q]
    for _ in range(M + Mq):
        same = nodes[0] == nodes[1]
        if same.all():
            break
        d0 = depth[nodes[0], cols]
        d1 = depth[nodes[1], cols]
        for side, move in ((0, (d0 >= d1) & ~same), (1, (d1 >= d0) & ~same)):
            idx = np.flatnonzero(move)
            child = nodes[side][idx]
            par = parent[child, idx]
            dist = depth[ends[side][idx], idx] - depth[child, idx]
            is_row = child < M
            k = np.where(is_row, child, par)
            l = np.where(is_row, par, child) - M
            S[k, l, idx] = np.where(dist % 2 == 0, -1.0, 1.0)
            nodes[side][idx] = par
    return S
