"""Kernel calibration errors of predictive distributions (Widmann et al. 2021): the pair term.

For a tensor-product kernel ``k((p, y), (p', y')) = k_P(p, p') k_Y(y, y')`` the SKCE kernel is

    h((p, y), (p', y')) = k_P(p, p') [k_Y(y, y') - e1(p, y') - e1(p', y) + e2(p, p')],

with ``e1(p, y) = E_{Z ~ p} k_Y(Z, y)`` and ``e2(p, p') = E k_Y(Z, Z')`` for independent
``Z ~ p``, ``Z' ~ p'`` (also on the diagonal ``p = p'``). Note the pairing: ``e1(p, y')`` takes
the first prediction with the *second* target.

The model-family-specific pieces are ``e1`` and ``e2``. A *target-ops* object holds the targets and
the family's parameters and evaluates them on tiles (rows ``a`` x columns ``b``, broadcast as
``(T, 1)`` x ``(1, T)``), on matching pairs and on the diagonal. Closed forms:

* Normal / MultivariateNormal with the Gaussian target kernel (diagonal, spherical and commuting
  covariances factorise; other full covariances through per-pair Cholesky factors);
* Normal (and diagonal MultivariateNormal with the total-variation metric, which factorises over
  coordinates) with the exponential (Laplacian) target kernel;
* Laplace with the exponential target kernel (all five cases, with stable switching);
* mixtures through all pairs of components.

Every other combination uses the Monte-Carlo fallback: ``m`` draws ``Z_i^(s) ~ p_i`` (and an
independent second set for the diagonal) replace the expectations; each ``h_ij`` stays
conditionally unbiased, so the U- and block estimators stay unbiased.

:class:`DistributionTerm` is the pair term of the engine (:mod:`skcalib._pairwise`).
"""

import math
import warnings

import numpy as np

from .._validation import check_rng, check_scalar_param
from ..distributions import (
    Laplace,
    Mixture,
    MultivariateNormal,
    Normal,
    _gauss_abs_mgf,
    laplace_e1,
    laplace_e2,
    normal_gauss_log_e1,
)
from ..kernels import (
    ExponentialKernel,
    GaussianKernel,
    TensorProductKernel,
    WassersteinKernel,
    subsample_indices,
)

_AXES = ("row", "col", "flat")


def _place(arr, idx, axis):
    """Rows ``idx`` of ``arr`` shaped to broadcast as tile rows, tile columns, or flat pairs."""
    x = arr[idx]
    if axis == "row":
        return x[:, None]
    if axis == "col":
        return x[None, :]
    return x


# --------------------------------------------------------------------------------------------
# target kernels


class _TargetKernel:
    """``k_Y`` as a broadcasting function of two target arrays (vector targets: last axis)."""

    def __init__(self, kernel, vector):
        if isinstance(kernel, GaussianKernel):
            self.kind = "gauss"
            self.gamma = 0.5 / float(kernel.length_scale) ** 2
        elif isinstance(kernel, ExponentialKernel):
            self.kind = "exp_" + kernel.metric
            self.gamma = (0.5 if kernel.metric == "tv" else 1.0) / float(kernel.length_scale)
        else:  # pragma: no cover - checked before
            raise TypeError(f"unsupported target kernel {kernel!r}")
        self.vector = vector

    def __call__(self, Y1, Y2):
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

    @property
    def laplacian_1d_gamma(self):
        """Rate ``g`` of ``exp(-g |y - y'|)`` per coordinate (exponential kernels that factorise)."""
        return self.gamma


# --------------------------------------------------------------------------------------------
# target ops


class _Ops:
    """Targets + family parameters; generic tile / pair / diagonal evaluation of ``h_Y``."""

    def __init__(self, y, ky):
        self.y = y
        self.ky = ky
        self.n_samples = y.shape[0]

    def targets(self, y):
        """Targets in the ops' coordinates (identity except for rotated normal families)."""
        return y

    def Y(self, idx, axis):
        return _place(self.y, idx, axis)

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

    def witness(self, logK, a, tY):
        """``k_P(p_i, t_j) [k_Y(y_i, tY_j) - e1(p_i, tY_j)]`` for rows ``a`` and test targets
        ``tY`` (already in the ops' coordinates)."""
        Pa, Ya = self.P(a, "row"), self.Y(a, "row")
        T = tY[None, :]
        W = self.ky(Ya, T)
        W -= self.e1(Pa, T)
        W *= np.exp(logK)
        return W


class _NormalGaussOps(_Ops):
    """Normal predictions, Gaussian target kernel ``exp(-gamma (y - y')^2)``."""

    def __init__(self, dist, y, ky):
        super().__init__(y, ky)
        self.loc = dist.loc
        self.var = dist.scale ** 2
        g = ky.gamma
        a = 1.0 + 2.0 * g * self.var
        self.alpha = 1.0 / np.sqrt(a)      # prefactor (1 + 2 g s^2)^(-1/2) of e1
        self.w = g / a                     # curvature of the e1 exponent
        self.tg = 2.0 * g * self.var
        self.scale = dist.scale
        self.ysc = math.sqrt(g) * y
        self.u = (1.0 + self.tg) / g
        self.v = self.tg / g
        self.homoscedastic = bool(np.all(self.var == self.var[0])) if self.var.size else True

    def P(self, idx, axis):
        return _place(self.loc, idx, axis), _place(self.var, idx, axis)

    def e1(self, P, Y):
        return np.exp(normal_gauss_log_e1(P[0], P[1], Y, self.ky.gamma))

    def e2(self, P, Q):
        return np.exp(normal_gauss_log_e1(P[0], P[1] + Q[1], Q[0], self.ky.gamma))

    def fused_sum(self, length_scale, exponent, a, b):
        """Sum of the tile ``h[a, b]`` for the kernel ``exp(-(W2 / l)**exponent)`` on these same
        Normal predictions, sharing ``(m_i - m_j)^2`` between W2 and ``e2`` and taking the
        prefactors of ``e1`` out of the exponentials as row/column weights (the hot loop of the
        unbiased estimator: 4 ``exp`` and ~20 elementwise passes per pair)."""
        g = self.ky.gamma
        la, lb = self.loc[a][:, None], self.loc[b][None, :]
        M2 = la - lb
        M2 *= M2
        S = self.scale[a][:, None] - self.scale[b][None, :]
        S *= S
        S += M2
        if exponent == 1.0:
            logK = np.sqrt(S, out=S)
            logK *= -1.0 / length_scale
        else:
            logK = np.power(S, 0.5 * exponent, out=S)
            logK *= -(1.0 / length_scale) ** exponent
        ya, yb = self.ysc[a][:, None], self.ysc[b][None, :]
        E = ya - yb
        E *= E
        np.subtract(logK, E, out=E)
        total = float(np.exp(E, out=E).sum())
        # e1(p_i, y_j): alpha_i exp(logK - w_i (m_i - y_j)^2), alpha_i taken out of the sum.
        E = la - self.y[b][None, :]
        E *= E
        E *= self.w[a][:, None]
        np.subtract(logK, E, out=E)
        total -= float(np.exp(E, out=E).sum(axis=1) @ self.alpha[a])
        E = lb - self.y[a][:, None]
        E *= E
        E *= self.w[b][None, :]
        np.subtract(logK, E, out=E)
        total -= float(self.alpha[b] @ np.exp(E, out=E).sum(axis=0))
        # e2: c exp(logK - g c^2 (m_i - m_j)^2), c^2 = 1 / (1 + 2g(s_i^2 + s_j^2)).
        if self.homoscedastic:
            c2 = 1.0 / (1.0 + 2.0 * self.tg[0]) if self.tg.size else 1.0
            M2 *= g * c2
            np.subtract(logK, M2, out=M2)
            total += math.sqrt(c2) * float(np.exp(M2, out=M2).sum())
        else:
            # gc2 = g c^2 = 1 / ((1 + tg_i) / g + tg_j / g); c = sqrt(gc2 / g).
            gc2 = self.u[a][:, None] + self.v[b][None, :]
            np.reciprocal(gc2, out=gc2)
            M2 *= gc2
            np.subtract(logK, M2, out=M2)
            T4 = np.exp(M2, out=M2)
            T4 *= np.sqrt(gc2, out=gc2)
            total += float(T4.sum()) / math.sqrt(g)
        return total


class _NormalLaplaceOps(_Ops):
    """Normal predictions, exponential target kernel ``exp(-gamma |y - y'|)`` (1-D)."""

    def __init__(self, dist, y, ky):
        super().__init__(y, ky)
        self.loc, self.sd = dist.loc, dist.scale

    def P(self, idx, axis):
        return _place(self.loc, idx, axis), _place(self.sd, idx, axis)

    def e1(self, P, Y):
        return _gauss_abs_mgf(P[0] - Y, P[1], self.ky.gamma)

    def e2(self, P, Q):
        return _gauss_abs_mgf(P[0] - Q[0], np.sqrt(P[1] ** 2 + Q[1] ** 2), self.ky.gamma)


class _LaplaceOps(_Ops):
    """Laplace predictions, exponential target kernel ``exp(-gamma |y - y'|)`` (1-D)."""

    def __init__(self, dist, y, ky):
        super().__init__(y, ky)
        self.loc, self.scale = dist.loc, dist.scale

    def P(self, idx, axis):
        return _place(self.loc, idx, axis), _place(self.scale, idx, axis)

    def e1(self, P, Y):
        return laplace_e1(P[0], P[1], Y, self.ky.gamma)

    def e2(self, P, Q):
        return laplace_e2(P[0], P[1], Q[0], Q[1], self.ky.gamma)


class _DiagNormalOps(_Ops):
    """Multivariate normals with diagonal (or spherical, or commuting full) covariances and a
    kernel that factorises over coordinates: Gaussian, or exponential with the TV metric (and
    the Euclidean exponential kernel in one dimension)."""

    def __init__(self, dist, y, ky):
        self.basis = dist._basis if dist.covariance_type == "full" and dist.dim > 1 else None
        if self.basis is not None:
            mean, var = dist.mean @ self.basis, dist._basis_var
        else:
            mean, var = dist.mean, dist.variance
        super().__init__(self.targets(y), ky)
        self.mean, self.var = mean, var
        self.gauss = ky.kind == "gauss"

    def targets(self, y):
        return y if self.basis is None else y @ self.basis

    def P(self, idx, axis):
        return _place(self.mean, idx, axis), _place(self.var, idx, axis)

    def e1(self, P, Y):
        g = self.ky.gamma
        if self.gauss:
            # log e1 = sum_k [-0.5 log(1 + 2g v_k) - g (m_k - y_k)^2 / (1 + 2g v_k)]: the
            # logarithms depend on the prediction only, one per row and coordinate.
            a = 1.0 + 2.0 * g * P[1]
            logv = -0.5 * np.log(a).sum(axis=-1)
            w = g / a
            for k in range(Y.shape[-1]):
                d = P[0][..., k] - Y[..., k]
                d *= d
                d *= w[..., k]
                logv = logv - d
            return np.exp(logv)
        out = None
        for k in range(Y.shape[-1]):
            term = _gauss_abs_mgf(P[0][..., k] - Y[..., k], np.sqrt(P[1][..., k]), g)
            out = term if out is None else out * term
        return out

    def e2(self, P, Q):
        g = self.ky.gamma
        if self.gauss:
            # prod_k (1 + 2g(v_k + v'_k))^(-1/2) exp(-g (m_k - m'_k)^2 / (1 + 2g(v_k + v'_k)));
            # the prefactor as a running product, one logarithm per 32 coordinates.
            expo, logpre, prod = 0.0, 0.0, 1.0
            for k in range(P[0].shape[-1]):
                a = 1.0 + 2.0 * g * (P[1][..., k] + Q[1][..., k])
                d = P[0][..., k] - Q[0][..., k]
                expo = expo + d * d / a
                prod = prod * a
                if k % 32 == 31:
                    logpre = logpre + np.log(prod)
                    prod = 1.0
            return np.exp(-g * expo - 0.5 * (logpre + np.log(prod)))
        out = None
        for k in range(P[0].shape[-1]):
            term = _gauss_abs_mgf(P[0][..., k] - Q[0][..., k],
                                  np.sqrt(P[1][..., k] + Q[1][..., k]), g)
            out = term if out is None else out * term
        return out


class _FullNormalGaussOps(_Ops):
    """Multivariate normals with non-commuting full covariances, Gaussian target kernel:
    ``e1 = |I + 2g S|^(-1/2) exp(-g d^T (I + 2g S)^(-1) d)`` through Cholesky factors."""

    def __init__(self, dist, y, ky):
        super().__init__(y, ky)
        self.mean = dist.mean
        self.cov = dist.cov
        self.d = dist.dim

    def P(self, idx, axis):
        return _place(self.mean, idx, axis), _place(self.cov, idx, axis)

    def _log_e(self, delta, cov):
        g = self.ky.gamma
        shape = np.broadcast_shapes(delta.shape[:-1], cov.shape[:-2])
        delta = np.broadcast_to(delta, shape + (self.d,)).reshape(-1, self.d)
        cov = np.broadcast_to(cov, shape + (self.d, self.d)).reshape(-1, self.d, self.d)
        out = np.empty(delta.shape[0])
        step = max(1, 2_000_000 // (self.d * self.d))
        eye = np.eye(self.d)
        for s in range(0, delta.shape[0], step):
            A = eye + 2.0 * g * cov[s:s + step]
            L = np.linalg.cholesky(A)
            v = np.linalg.solve(L, delta[s:s + step, :, None])[..., 0]
            out[s:s + step] = (-np.log(np.einsum("nii->ni", L)).sum(axis=1)
                               - g * np.einsum("ni,ni->n", v, v))
        return out.reshape(shape)

    def e1(self, P, Y):
        return np.exp(self._log_e(P[0] - Y, P[1]))

    def e2(self, P, Q):
        return np.exp(self._log_e(P[0] - Q[0], P[1] + Q[1]))


def _as_full(dist):
    return MultivariateNormal(dist.mean, dist.full_covariance())


class _MixtureOps(_Ops):
    """Mixtures: ``e1`` and ``e2`` by bilinearity over **all** pairs of components."""

    def __init__(self, dist, y, ky, comp_ops):
        super().__init__(comp_ops[0].y, ky)
        self.weights = dist.weights
        self.comps = comp_ops

    def targets(self, y):
        return self.comps[0].targets(y)

    def P(self, idx, axis):
        return [(_place(self.weights[:, k], idx, axis), c.P(idx, axis))
                for k, c in enumerate(self.comps)]

    def e1(self, P, Y):
        return sum(w * c.e1(Pk, Y) for c, (w, Pk) in zip(self.comps, P))

    def e2(self, P, Q):
        c = self.comps[0]
        return sum(wk * wl * c.e2(Pk, Ql) for wk, Pk in P for wl, Ql in Q)


class _MonteCarloOps(_Ops):
    """Monte-Carlo fallback: ``m`` draws per prediction replace ``e1`` and ``e2``; the diagonal uses
    a second, independent set of draws (``Z, Z'`` independent also for ``p = p'``)."""

    def __init__(self, dist, y, ky, n_draws, rng):
        super().__init__(y, ky)
        rng = check_rng(rng)  # one generator: the two draw sets must be independent
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


def _closed_ops(dist, y, ky, rotate=True):
    """Closed-form target ops for ``dist`` and ``k_Y``, or None if there is none. ``rotate``
    allows commuting full covariances to be rotated to diagonal ones (not inside mixtures, whose
    components must share the target coordinates)."""
    if isinstance(dist, Normal):
        if ky.kind == "gauss":
            return _NormalGaussOps(dist, y, ky)
        return _NormalLaplaceOps(dist, y, ky)
    if isinstance(dist, Laplace):
        return _LaplaceOps(dist, y, ky) if ky.kind != "gauss" else None
    if isinstance(dist, MultivariateNormal):
        factorises = ky.kind in ("gauss", "exp_tv") or dist.dim == 1
        if factorises and (dist.covariance_type != "full" or dist.dim == 1
                           or (rotate and ky.kind == "gauss" and dist.commuting())):
            return _DiagNormalOps(dist, y, ky)
        if ky.kind == "gauss":
            return _FullNormalGaussOps(dist, y, ky)
        return None
    if isinstance(dist, Mixture):
        comps = [_closed_ops(c, y, ky, rotate=False) for c in dist.components]
        if any(c is None for c in comps):
            return None
        if len({type(c) for c in comps}) != 1:
            # e.g. diagonal and full covariances among the components: one common form.
            if ky.kind != "gauss" or not isinstance(dist.components[0], MultivariateNormal):
                return None
            comps = [_FullNormalGaussOps(_as_full(c), y, ky) for c in dist.components]
        return _MixtureOps(dist, y, ky, comps)
    return None


def target_ops(dist, y, target_kernel, *, n_mc_samples=100, random_state=None, rotate=True):
    """Target ops of ``dist``/``y`` for the target kernel (closed form, else Monte Carlo)."""
    if not isinstance(target_kernel, (GaussianKernel, ExponentialKernel)):
        raise TypeError(f"kernel must be a GaussianKernel or an ExponentialKernel; got {target_kernel!r}.")
    target_kernel._check()
    if isinstance(target_kernel.length_scale, str):
        raise ValueError("the target kernel's length_scale must be a number here.")
    ky = _TargetKernel(target_kernel, vector=dist.dim is not None)
    ops = _closed_ops(dist, y, ky, rotate=rotate)
    if ops is None:
        ops = _MonteCarloOps(dist, y, ky, n_mc_samples, random_state)
    return ops


def _signature(ops):
    if isinstance(ops, _MixtureOps):
        return (_MixtureOps, type(ops.comps[0]))
    return (type(ops),)


def _full_gauss_ops(dist, y, ky):
    if isinstance(dist, Mixture):
        return _MixtureOps(dist, y, ky, [_FullNormalGaussOps(_as_full(c), y, ky)
                                         for c in dist.components])
    return _FullNormalGaussOps(_as_full(dist), y, ky)


def paired_ops(p, q, y, target_kernel, *, n_mc_samples=100, random_state=None):
    """Target ops for two distributions of one family whose ``e2(p_i, q_i)`` is wanted: closed
    forms of one common type (full covariances for mixed normal covariance types), else Monte
    Carlo for both (independent draws)."""
    rng = check_rng(random_state)
    ops = target_ops(p, y, target_kernel, n_mc_samples=n_mc_samples, random_state=rng,
                     rotate=False)
    ops2 = target_ops(q, y, target_kernel, n_mc_samples=n_mc_samples, random_state=rng,
                      rotate=False)
    if _signature(ops) == _signature(ops2):
        return ops, ops2
    comp = p.components[0] if isinstance(p, Mixture) else p
    if ops.ky.kind == "gauss" and isinstance(comp, MultivariateNormal):
        return _full_gauss_ops(p, y, ops.ky), _full_gauss_ops(q, y, ops.ky)
    return (_MonteCarloOps(p, y, ops.ky, n_mc_samples, rng),
            _MonteCarloOps(q, y, ops.ky, n_mc_samples, rng))


def has_closed_form(dist, target_kernel):
    """True if ``E k_Y`` has a closed form for ``dist`` (no Monte-Carlo fallback needed)."""
    ky = _TargetKernel(target_kernel, vector=dist.dim is not None)
    return _closed_ops(dist, np.zeros((dist.n_samples,) + dist.target_shape), ky) is not None


class DistributionTerm:
    """Pair term ``h_ij`` of the SKCE for predictive distributions (see the module docstring).

    Parameters
    ----------
    pred : prepared :class:`~skcalib.kernels.WassersteinKernel`
    ops : target ops
    """

    def __init__(self, pred, ops):
        self.pred = pred
        self.ops = ops
        self.n_samples = ops.n_samples
        # Normal predictions with the Gaussian target kernel: W2 computed inside the fused sum.
        self._fused = hasattr(ops, "fused_sum") and isinstance(pred.dist, Normal)

    def block(self, a, b):
        return self.ops.tile(self.pred.log_block(a, b), a, b)

    def block_sum(self, a, b, diagonal_tile):
        if self._fused:
            total = self.ops.fused_sum(self.pred.length_scale, self.pred.exponent, a, b)
            if diagonal_tile:
                # The fused W2 of a row with itself is exactly 0, so k_P = 1 on the diagonal
                # and the strict upper triangle is (sum - sum_i h_ii) / 2.
                return 0.5 * (total - float(self.ops.diag(a).sum()))
            return total
        H = self.ops.tile(self.pred.log_block(a, b), a, b)
        if diagonal_tile:
            return 0.5 * (float(H.sum()) - float(np.trace(H)))
        return float(H.sum())

    def pairs(self, i, j):
        return self.ops.pairs(self.pred.log_pairs(i, j), i, j)

    def diag(self, a):
        # k_P(p, p) = 1 for every Wasserstein kernel.
        return self.ops.diag(a)


# --------------------------------------------------------------------------------------------
# validation and kernels


def check_targets(y_true, dist, name="y_true"):
    """Real targets matching a distribution: ``(n,)`` for univariate, ``(n, d)`` for d-variate."""
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


def default_target_kernel(dist):
    """``GaussianKernel("median")``, or ``ExponentialKernel("median")`` for Laplace predictions
    (and mixtures of them), the target kernels with closed-form expectations for the family."""
    comp = dist.components[0] if isinstance(dist, Mixture) else dist
    if isinstance(comp, Laplace):
        return ExponentialKernel("median")
    return GaussianKernel("median")


def as_regression_kernel(kernel, dist, name="kernel"):
    """Normalise the ``kernel`` argument for distribution predictions.

    ``None`` is ``WassersteinKernel("median") ⊗ default_target_kernel(dist)``; a
    :class:`~skcalib.kernels.WassersteinKernel` alone is combined with the default target kernel.
    """
    if kernel is None:
        return TensorProductKernel(WassersteinKernel("median"), default_target_kernel(dist))
    if isinstance(kernel, WassersteinKernel):
        return TensorProductKernel(kernel, default_target_kernel(dist))
    if isinstance(kernel, TensorProductKernel):
        if not isinstance(kernel.pred_kernel, WassersteinKernel):
            raise TypeError(
                f"{name}: for distribution predictions the prediction kernel must be a "
                f"WassersteinKernel; got {kernel.pred_kernel!r}."
            )
        tk = kernel.target_kernel
        if tk is None or not isinstance(tk, (GaussianKernel, ExponentialKernel)):
            raise TypeError(
                f"{name}: for real-valued targets the target kernel must be a GaussianKernel or "
                f"an ExponentialKernel; got {tk!r}."
            )
        return kernel
    raise TypeError(
        f"{name} must be None, a WassersteinKernel or a TensorProductKernel for distribution "
        f"predictions; got {kernel!r}."
    )


def target_scale(dist, max_samples=1000, random_state=None):
    """Median heuristic for the target kernel, computed on the predictions only (never on the
    targets): the median over pairs ``i < j`` of ``sqrt(E ||Z_i - Z_j||^2)`` with ``Z_i ~ p_i``
    independent, i.e. ``sqrt(||m_i - m_j||^2 + tr V_i + tr V_j)``."""
    m, v = dist._moments()
    idx = subsample_indices(m.shape[0], max_samples, random_state)
    if idx is not None:
        m, v = m[idx], v[idx]
    k = m.shape[0]
    iu, ju = np.triu_indices(k, 1)
    if iu.size == 0:
        return 1.0
    d = m[iu] - m[ju]
    vals = np.sqrt(np.einsum("ij,ij->i", d, d) + v[iu] + v[ju])
    med = float(np.median(vals))
    return med if med > 0 else 1.0


def resolve_regression_kernel(kernel, dist, random_state=None):
    """Tensor kernel with numeric length scales for distribution predictions."""
    tk = as_regression_kernel(kernel, dist)
    pk = tk.pred_kernel.resolve(dist, random_state=random_state)
    yk = tk.target_kernel
    yk._check()
    if isinstance(yk.length_scale, str):
        params = yk.get_params()
        params["length_scale"] = target_scale(dist, yk.max_samples, random_state)
        yk = type(yk)(**params)
    if pk is tk.pred_kernel and yk is tk.target_kernel:
        return tk
    return TensorProductKernel(pk, yk)


def prepare_term(y_true, y_pred, kernel, *, random_state=None, n_mc_samples=100):
    """Validate ``(y_true, y_pred)`` for distribution predictions and build the pair term.

    Returns
    -------
    term : DistributionTerm
    chunk_size : int or None
        Preferred tile side (bounded memory for full covariances).
    """
    rng = check_rng(random_state)
    y = check_targets(y_true, y_pred)
    k = resolve_regression_kernel(kernel, y_pred, rng if random_state is not None else None)
    term = distribution_term(y_pred, y, k, n_mc_samples=n_mc_samples, random_state=rng)
    return term, preferred_chunk_size(y_pred)


def distribution_term(dist, y, kernel, *, n_mc_samples=100, random_state=None):
    """Pair term for validated targets ``y`` and a resolved tensor kernel."""
    ops = target_ops(dist, y, kernel.target_kernel, n_mc_samples=n_mc_samples,
                     random_state=random_state)
    return DistributionTerm(kernel.pred_kernel._prepare(dist), ops)


def preferred_chunk_size(dist):
    """Tile side bounding the memory of per-pair covariance factors (full covariances)."""
    comps = dist.components if isinstance(dist, Mixture) else (dist,)
    d2 = max((c.dim or 1) ** 2 if isinstance(c, MultivariateNormal) and not c.commuting() else 1
             for c in comps)
    if d2 == 1:
        return None
    return max(16, int(math.sqrt(4_000_000 / d2)))


def draw_distribution_test_locations(dist, n_locations, random_state=None):
    """Test locations for the UCME of distribution predictions: ``J`` predictions chosen at random
    among the data's (without replacement when possible) and one target drawn from each."""
    rng = check_rng(random_state)
    n = dist.n_samples
    idx = rng.choice(n, n_locations, replace=n_locations > n)
    tP = dist[idx]
    return tP, tP.sample(random_state=rng)


def ucme_distribution(y_true, y_pred, kernel, test_predictions, test_targets, n_test_locations,
                      *, random_state=None, n_mc_samples=100, chunk_size=None):
    """Validate, resolve the kernel and the test locations, and return ``(UCME^2, contributions)``."""
    rng = check_rng(random_state)
    y = check_targets(y_true, y_pred)
    k = resolve_regression_kernel(kernel, y_pred, rng if random_state is not None else None)
    if test_predictions is None and test_targets is None:
        check_scalar_param(n_test_locations, "n_test_locations", min_val=1)
        test_P, test_y = draw_distribution_test_locations(y_pred, n_test_locations, rng)
    else:
        if test_predictions is None or test_targets is None:
            raise ValueError("test_predictions and test_targets must be given together.")
        if type(test_predictions) is not type(y_pred) or test_predictions.dim != y_pred.dim:
            raise TypeError(
                "test_predictions must be a distribution of the same family and dimension as "
                f"y_pred ({type(y_pred).__name__}); got {test_predictions!r}."
            )
        test_P = test_predictions
        test_y = check_targets(test_targets, test_P, name="test_targets")
    return ucme_distribution_value(y_pred, y, k, test_P, test_y, n_mc_samples=n_mc_samples,
                                   random_state=rng, chunk_size=chunk_size)


def ucme_distribution_value(dist, y, kernel, test_P, test_y, *, n_mc_samples=100,
                            random_state=None, chunk_size=None):
    """``UCME^2`` and per-sample contributions for distribution predictions."""
    from .._pairwise import _chunk_size, witness_statistic

    ops = target_ops(dist, y, kernel.target_kernel, n_mc_samples=n_mc_samples,
                     random_state=random_state)
    prep = kernel.pred_kernel._prepare(dist)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep_t = prep.like(test_P)
    tY = ops.targets(test_y)
    n, J = dist.n_samples, test_P.n_samples
    T = _chunk_size(chunk_size or preferred_chunk_size(dist))
    chunks = ((a, ops.witness(prep.log_block(a, slice(0, J), prep_t), a, tY))
              for a in (slice(s, min(s + T, n)) for s in range(0, n, T)))
    return witness_statistic(chunks, n, J)
