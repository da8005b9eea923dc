"""Kernel expectations of predictive distributions: the family-specific part of the SKCE.

For a tensor-product kernel ``k((p, y), (p', y')) = k_P(p, p') k_Y(y, y')`` the SKCE kernel of
predictive distributions (Widmann et al. 2021) is

    h((p, y), (p', y')) = k_P(p, p') [k_Y(y, y') - e1(p, y') - e1(p', y) + e2(p, p')],

with ``e1(p, y) = E_{Z ~ p} k_Y(Z, y)`` and ``e2(p, p') = E k_Y(Z, Z')`` for independent
``Z ~ p``, ``Z' ~ p'`` (also on the diagonal ``p = p'``). Note the pairing: ``e1(p, y')`` takes
the first prediction with the *second* target.

The model-family-specific pieces are ``e1`` and ``e2``. A *target-ops* object (a
:class:`TargetOps`) holds the targets and the family's parameters and evaluates them on tiles
(rows ``a`` x columns ``b``, broadcast as ``(T, 1)`` x ``(1, T)``), on matching pairs and on the
diagonal. This module holds the generic part; the closed forms live with their families in
:mod:`skcalib.distributions` and are registered here by :func:`register_expectations`
(``(family class, target kernel class) -> ops``), which :func:`target_ops` consults:

* Normal / MultivariateNormal with the Gaussian target kernel (diagonal, spherical and commuting
  covariances factorise; other full covariances through per-pair Cholesky factors);
* Normal (and diagonal MultivariateNormal with the total-variation metric, which factorises over
  coordinates) with the exponential (Laplacian) target kernel;
* Laplace with the exponential target kernel (all five cases, with stable switching);
* mixtures through all pairs of components.

Every other combination uses the Monte-Carlo fallback: ``m`` draws ``Z_i^(s) ~ p_i`` (and an
independent second set for the diagonal) replace the expectations; each ``h_ij`` stays
conditionally unbiased, so the U- and block estimators stay unbiased.

Any positive finite target length scale works (issue 11). Between ``1e-100`` and ``1e100`` (and for
data of magnitude up to ``1e50``) the closed forms use the rate ``gamma`` as before; outside, each
has a *scaled* variant that divides differences by the length scale before squaring and replaces
``1 + 2 gamma var`` by ``hypot(l, sd)`` (Gaussian kernel; eigenvalues for full covariances, so
that singular ones work too), or works in the ratios ``delta / sd`` and ``sd / l`` with ``erfcx``
(Normal x exponential kernel) and in relative scales (Laplace). Limits come out exactly: ``l ->
infinity`` gives ``k_Y = e1 = e2 = 1``; ``l -> 0`` gives ``k_Y(y, y') = 1{y == y'}`` and
``e1, e2 -> 0`` for continuous predictions (``1{m == y}`` for a point mass). The fused Normal x
Gaussian sum is only used where its scaled quantities stay in range (otherwise the generic tiles,
with the prepared Wasserstein kernel's ``log k``).

Layering: this module sits between :mod:`skcalib.kernels` (which it imports) and
:mod:`skcalib.distributions` (which imports it for ``expected_kernel`` and to register its closed
forms). It never imports ``distributions``: the registry holds the classes the family modules
pass in, and the family marker ``_family`` every distribution class carries tells mixtures
(``"mixture"``) and class probabilities (``"categorical"``) apart where magnitudes are measured.
The pair term built on these ops lives in :mod:`skcalib._problems.terms`.

Internal API: :class:`TargetOps` (and :class:`LocationScaleOps`), :func:`place`,
:func:`register_expectations`, :func:`closed_ops`, :func:`common_ops`, :func:`target_ops`,
:func:`paired_ops`, :func:`has_closed_form`, :func:`check_targets`, :func:`check_not_empty`.
"""

import math

import numpy as np

from ._validation import (MAX_MC_SAMPLES, check_n_resamples, check_numeric, check_rng,
                          check_work_memory, not_real_kind)
from .kernels import ExponentialKernel, GaussianKernel


def _family(dist):
    """The family marker of a distribution object (None for anything else)."""
    return getattr(type(dist), "_family", None)


def place(arr, idx, axis):
    """Rows ``idx`` of ``arr`` shaped to broadcast as tile rows, tile columns, or flat pairs."""
    x = arr[idx]
    if axis == "row":
        return x[:, None]
    if axis == "col":
        return x[None, :]
    return x


# --------------------------------------------------------------------------------------------
# target kernels


#: Target length scales outside this range, or predictions and targets of magnitude beyond
#: ``_SAFE_MAGNITUDE``, use the *scaled* formulas (differences divided by the length scale before
#: squaring, ``hypot`` instead of ``1 + 2 gamma var``): ``0.5 / l**2`` itself under- or overflows
#: at ``l = 1e+-170``, and ``gamma * d**2`` can. Inside, the rate form (``gamma``) is kept: its
#: results and speed are those of the ordinary scales.
_SAFE_SCALES = (1e-100, 1e100)
_SAFE_MAGNITUDE = 1e50


class _TargetKernel:
    """``k_Y`` as a broadcasting function of two target arrays (vector targets: last axis).

    ``unit`` is the length in which the kernel is ``exp(-factor * ||d / unit||**2)`` (Gaussian,
    ``factor = 1/2``) or ``exp(-|d / unit|)`` (exponential; ``unit = 2 l`` for the TV metric);
    ``gamma`` (the rate ``factor / unit**2`` or ``1 / unit``) is None when ``robust`` (extreme
    length scale or data magnitude ``magnitude``): every closed form then uses its scaled variant.
    """

    def __init__(self, kernel, vector, magnitude=0.0):
        ls = float(kernel.length_scale)
        if isinstance(kernel, GaussianKernel):
            self.kernel_class = GaussianKernel
            self.kind = "gauss"
            self.unit = ls
        elif isinstance(kernel, ExponentialKernel):
            self.kernel_class = ExponentialKernel
            self.kind = "exp_" + kernel.metric
            self.unit = 2.0 * ls if kernel.metric == "tv" else ls
        else:  # pragma: no cover - checked before
            raise TypeError(f"unsupported target kernel {kernel!r}")
        self.length_scale = ls
        self.robust = not (_SAFE_SCALES[0] <= ls <= _SAFE_SCALES[1]
                           and magnitude <= _SAFE_MAGNITUDE)
        if self.robust:
            self.gamma = None
        elif self.kind == "gauss":
            self.gamma = 0.5 / ls ** 2
        else:
            self.gamma = (0.5 if kernel.metric == "tv" else 1.0) / ls
        self.vector = vector

    def __call__(self, Y1, Y2):
        if self.robust:
            return self._scaled(Y1, Y2)
        d = Y1 - Y2
        if self.kind == "gauss":
            d *= d
            if self.vector:
                d = d.sum(axis=-1)
            d *= -self.gamma
        elif self.kind == "exp_tv" or not self.vector:
            d = np.abs(d, out=d)
            if self.vector:
                d = d.sum(axis=-1)
            d *= -self.gamma
        else:
            d *= d
            d = np.sqrt(d.sum(axis=-1))
            d *= -self.gamma
        return np.exp(d, out=d)

    def _scaled(self, Y1, Y2):
        """The kernel from differences divided by ``unit`` first (over/underflow only where the
        kernel is exactly 0 or 1 in floating point)."""
        with np.errstate(over="ignore", under="ignore"):
            d = np.subtract(Y1, Y2, dtype=np.float64)
            d /= self.unit
            if self.kind == "gauss" or (self.kind != "exp_tv" and self.vector):
                d *= d
                if self.vector:
                    d = d.sum(axis=-1)
                if self.kind == "gauss":
                    d *= -0.5
                else:
                    d = np.sqrt(d)
                    d *= -1.0
            else:
                d = np.abs(d, out=d)
                if self.vector:
                    d = d.sum(axis=-1)
                d *= -1.0
            return np.exp(d, out=d)


def _magnitude(dist, y):
    """Largest magnitude among the targets and the predictions' means and standard deviations
    (chooses between the rate and the scaled formulas, see ``_SAFE_MAGNITUDE``)."""
    with np.errstate(over="ignore", under="ignore"):
        mags = [float(np.max(np.abs(y))) if np.size(y) else 0.0]
        stack = [dist]
        while stack:
            d = stack.pop()
            if _family(d) == "mixture":
                stack.extend(d.components)
                continue
            moments = getattr(d, "_moments", None)
            if moments is None or _family(d) == "categorical":
                continue
            m, v = moments()
            if np.size(m):
                mags.append(float(np.max(np.abs(m))))
                mags.append(math.sqrt(float(np.max(v))))
    return max(mags)


# --------------------------------------------------------------------------------------------
# target ops


class TargetOps:
    """Targets + family parameters; generic tile / pair / diagonal evaluation of ``h_Y``."""

    def __init__(self, y, ky):
        self.y = y
        self.ky = ky
        self.n_samples = y.shape[0]

    def targets(self, y):
        """Targets in the ops' coordinates (identity except for rotated normal families)."""
        return y

    def Y(self, idx, axis):
        return place(self.y, idx, axis)

    def e2_self(self, P):
        return self.e2(P, P)

    def tile(self, logK, a, b):
        Pa, Pb = self.P(a, "row"), self.P(b, "col")
        Ya, Yb = self.Y(a, "row"), self.Y(b, "col")
        H = self.ky(Ya, Yb)
        H -= self.e1(Pa, Yb)
        H -= self.e1(Pb, Ya)
        H += self.e2(Pa, Pb)
        H *= np.exp(logK)
        return H

    def pairs(self, logK, i, j):
        Pi, Pj = self.P(i, "flat"), self.P(j, "flat")
        Yi, Yj = self.Y(i, "flat"), self.Y(j, "flat")
        h = self.ky(Yi, Yj) - self.e1(Pi, Yj) - self.e1(Pj, Yi) + self.e2(Pi, Pj)
        return h * np.exp(logK)

    def diag(self, a):
        P, Y = self.P(a, "flat"), self.Y(a, "flat")
        return self.ky(Y, Y) - 2.0 * self.e1(P, Y) + self.e2_self(P)

    def signature(self):
        """Ops of equal signatures evaluate ``e2`` between each other's predictions."""
        return (type(self),)

    def witness(self, logK, a, tY):
        """``k_P(p_i, t_j) [k_Y(y_i, tY_j) - e1(p_i, tY_j)]`` for rows ``a`` and test targets
        ``tY`` (already in the ops' coordinates)."""
        Pa, Ya = self.P(a, "row"), self.Y(a, "row")
        T = tY[None, :]
        W = self.ky(Ya, T)
        W -= self.e1(Pa, T)
        W *= np.exp(logK)
        return W


class LocationScaleOps(TargetOps):
    """Ops of 1-D location-scale predictions: the predictions are ``(loc, scale)``."""

    def __init__(self, dist, y, ky):
        super().__init__(y, ky)
        self.loc, self.scale = dist.loc, dist.scale

    def P(self, idx, axis):
        return place(self.loc, idx, axis), place(self.scale, idx, axis)


class _MonteCarloOps(TargetOps):
    """Monte-Carlo fallback: ``m`` draws per prediction replace ``e1`` and ``e2``; the diagonal uses
    a second, independent set of draws (``Z, Z'`` independent also for ``p = p'``)."""

    def __init__(self, dist, y, ky, n_draws, rng):
        super().__init__(y, ky)
        rng = check_rng(rng)  # one generator: the two draw sets must be independent
        check_work_memory(2.0 * n_draws * dist.n_samples * math.prod(dist.target_shape),
                          "n_mc_samples", n_draws, "the Monte-Carlo draws")
        self.Z = dist.sample(random_state=rng, size=n_draws)
        self.Z2 = dist.sample(random_state=rng, size=n_draws)

    def P(self, idx, axis):
        x = self.Z[:, idx]
        if axis == "row":
            return x[:, :, None]
        if axis == "col":
            return x[:, None, :]
        return x

    def e1(self, P, Y):
        return sum(self.ky(P[s], Y) for s in range(P.shape[0])) / P.shape[0]

    def e2(self, P, Q):
        return sum(self.ky(P[s], Q[s]) for s in range(P.shape[0])) / P.shape[0]

    def diag(self, a):
        Z, Z2, Y = self.Z[:, a], self.Z2[:, a], self.y[a]
        return self.ky(Y, Y) - 2.0 * self.e1(Z, Y) + self.e2(Z, Z2)


#: The registry of closed forms: ``(distribution class, target kernel class) -> (ops, common)``,
#: filled by the family modules of :mod:`skcalib.distributions` through
#: :func:`register_expectations` when they are imported.
_CLOSED_FORMS = {}


def register_expectations(family, kernel, ops, *, common=None):
    """Register the closed-form kernel expectations of a distribution family.

    Parameters
    ----------
    family : type
        The distribution class (a subclass of ``skcalib.distributions.Distribution``); its
        subclasses inherit the entry.
    kernel : {GaussianKernel, ExponentialKernel}
        The class of the target kernel ``k_Y``.
    ops : type or callable
        A :class:`TargetOps` subclass built as ``ops(dist, y, ky)``, or a callable
        ``ops(dist, y, ky, rotate)`` returning the target ops or None where this family member
        has no closed form for ``ky`` (the Monte-Carlo fallback is used then). ``ky`` is the
        :class:`_TargetKernel` (``ky.kind``, ``ky.gamma``, ``ky.unit``, ``ky.robust``); ``rotate``
        allows a change of target coordinates (``targets``), which mixtures refuse.
    common : callable, default=None
        ``common(dist, y, ky)``: target ops of one type for every member of the family, used
        when two batches of the family (a prediction and its counterpart in ``paired_ops``, or
        the components of a mixture) get ops of different types; None: Monte Carlo then.

    Returns
    -------
    ops
        ``ops`` unchanged (so that this can decorate a class or a function).
    """
    if isinstance(ops, type) and issubclass(ops, TargetOps):
        cls = ops

        def build(dist, y, ky, rotate):
            return cls(dist, y, ky)
    else:
        build = ops
    _CLOSED_FORMS[(family, kernel)] = (build, common)
    return ops


def _closed_form(dist, ky):
    """The registered ``(ops, common)`` of ``dist``'s class (or a base class) and ``ky``."""
    for cls in type(dist).__mro__:
        entry = _CLOSED_FORMS.get((cls, ky.kernel_class))
        if entry is not None:
            return entry
    return None


def closed_ops(dist, y, ky, rotate=True):
    """Closed-form target ops for ``dist`` and ``k_Y``, or None if there is none. ``rotate``
    allows commuting full covariances to be rotated to diagonal ones (not inside mixtures, whose
    components must share the target coordinates)."""
    entry = _closed_form(dist, ky)
    return None if entry is None else entry[0](dist, y, ky, rotate)


def common_ops(dist, y, ky):
    """Target ops of the type common to the whole family of ``dist`` (see
    :func:`register_expectations`), or None if the family has none for ``k_Y``."""
    entry = _closed_form(dist, ky)
    return None if entry is None or entry[1] is None else entry[1](dist, y, ky)


def target_ops(dist, y, target_kernel, *, n_mc_samples=100, random_state=None, rotate=True,
               magnitude=None):
    """Target ops of ``dist``/``y`` for the target kernel (closed form, else Monte Carlo).
    ``magnitude``: the data magnitude deciding the scaled formulas (default: that of ``dist``
    and ``y``)."""
    if not isinstance(target_kernel, (GaussianKernel, ExponentialKernel)):
        raise TypeError(f"kernel must be a GaussianKernel or an ExponentialKernel; got {target_kernel!r}.")
    # every path to the Monte-Carlo fallback passes here: one check names the argument
    check_n_resamples(n_mc_samples, "n_mc_samples", max_val=MAX_MC_SAMPLES)
    target_kernel._check()
    if isinstance(target_kernel.length_scale, str):
        raise ValueError("the target kernel's length_scale must be a number here.")
    if magnitude is None:
        magnitude = _magnitude(dist, y)
    ky = _TargetKernel(target_kernel, vector=dist.dim is not None, magnitude=magnitude)
    ops = closed_ops(dist, y, ky, rotate=rotate)
    if ops is None:
        ops = _MonteCarloOps(dist, y, ky, n_mc_samples, random_state)
    return ops


def paired_ops(p, q, y, target_kernel, *, n_mc_samples=100, random_state=None):
    """Target ops for two distributions of one family whose ``e2(p_i, q_i)`` is wanted: closed
    forms of one common type (the family's ``common`` form, e.g. full covariances for mixed
    normal covariance types), else Monte Carlo for both (independent draws)."""
    check_n_resamples(n_mc_samples, "n_mc_samples", max_val=MAX_MC_SAMPLES)
    rng = check_rng(random_state)
    mag = max(_magnitude(p, y), _magnitude(q, y))  # one formula for both
    ops = target_ops(p, y, target_kernel, n_mc_samples=n_mc_samples, random_state=rng,
                     rotate=False, magnitude=mag)
    ops2 = target_ops(q, y, target_kernel, n_mc_samples=n_mc_samples, random_state=rng,
                      rotate=False, magnitude=mag)
    if ops.signature() == ops2.signature():
        return ops, ops2
    common, common2 = common_ops(p, y, ops.ky), common_ops(q, y, ops.ky)
    if common is not None and common2 is not None:
        return common, common2
    return (_MonteCarloOps(p, y, ops.ky, n_mc_samples, rng),
            _MonteCarloOps(q, y, ops.ky, n_mc_samples, rng))


def has_closed_form(dist, target_kernel):
    """True if ``E k_Y`` has a closed form for ``dist`` (no Monte-Carlo fallback needed)."""
    ky = _TargetKernel(target_kernel, vector=dist.dim is not None)
    return closed_ops(dist, np.zeros((dist.n_samples,) + dist.target_shape), ky) is not None


# --------------------------------------------------------------------------------------------
# targets


def check_not_empty(dist, name="y_pred"):
    """``ValueError`` naming ``name`` for a distribution object without rows: every metric, test,
    scorer and Display refuses empty predictions, as it does the empty array form (which
    scikit-learn's ``check_array`` refuses), instead of an ``IndexError`` or a silent NaN."""
    if dist.n_samples < 1:
        raise ValueError(f"{name} is empty: found a {type(dist).__name__} with 0 sample(s) while "
                         "a minimum of 1 is required.")


def check_targets(y_true, dist, name="y_true", pred_name="y_pred"):
    """Real targets matching a distribution: ``(n,)`` for univariate, ``(n, d)`` for d-variate.
    Strings, complex numbers, booleans, dates and durations are refused rather than converted
    (numpy would read a date as nanoseconds since 1970; booleans are refused as the
    distributions' parameters are). The distribution must not be empty (see
    :func:`check_not_empty`; ``pred_name=None`` allows it, for the distribution's own methods)."""
    if pred_name is not None:
        check_not_empty(dist, pred_name)
    check_numeric(y_true, name)
    raw = y_true if isinstance(y_true, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(y_true)
        except (TypeError, ValueError):
            raw = None  # ragged: reported below
    if raw is not None and (raw.dtype.kind in "USc" or (raw.dtype.kind == "O" and any(
            isinstance(v, (str, bytes, complex)) for v in raw.ravel()))):
        # numpy would turn "0.5" into 0.5 and drop imaginary parts: refuse instead (H3).
        raise ValueError(f"{name} must contain real numbers for distribution predictions; got "
                         f"{raw.dtype} values (strings and complex numbers are not converted).")
    what = not_real_kind(raw)
    if what is not None:
        # numpy would read dates and durations as nanoseconds since 1970 (a CRPS of 1e15) and
        # booleans as 0/1, which, with a distribution prediction, is almost always a class label
        # passed to a regression metric: refuse them as the distributions' parameters are (B3).
        hint = ("y.astype(float) if 0/1 targets are meant" if raw.dtype.kind == "b" else
                "numbers in the unit the predictions use, e.g. days since a reference date")
        raise TypeError(f"{name} must contain real numbers for distribution predictions; got "
                        f"{what} (dtype {raw.dtype}), which are not converted; pass {hint}.")
    try:
        y = np.asarray(y_true, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of real numbers for distribution predictions.") from None
    n = dist.n_samples
    if dist.dim is None:
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            raise ValueError(f"{name} must have shape ({n},) for univariate predictions; got {y.shape}.")
    else:
        if y.ndim == 1 and dist.dim == 1:
            y = y[:, None]
        if y.ndim != 2 or y.shape[1] != dist.dim:
            raise ValueError(f"{name} must have shape ({n}, {dist.dim}); got {y.shape}.")
    if y.shape[0] != n:
        raise ValueError(f"{name} has {y.shape[0]} samples but the predictions have {n}.")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{name} must be finite (no NaN or infinity).")
    y = np.array(y, copy=True)
    y.setflags(write=False)
    return y
