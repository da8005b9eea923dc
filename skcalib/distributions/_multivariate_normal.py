"""The MultivariateNormal family ``N(mean, cov)`` on ``R^d`` and its closed forms.

Besides the class (full, diagonal or spherical covariances; Bures W2; temperature scaling), this
module holds and registers with :mod:`skcalib._expectations` the closed-form kernel expectations
of multivariate normal predictions: :class:`_DiagNormalOps` (diagonal, spherical and commuting
covariances with a kernel that factorises over coordinates: Gaussian, or exponential with the TV
metric) and :class:`_FullNormalGaussOps` (other full covariances, Gaussian kernel: per-pair
Cholesky factors), the latter also being the family's *common* form (mixed covariance types).
"""

import math

import numpy as np

from .._expectations import TargetOps, place, register_expectations
from ..kernels import ExponentialKernel, GaussianKernel
from ._base import (Distribution, _check_scale, _check_temperature, _float_array,
                    _read_only_float_copy, _require_positive)
from ._normal import _gauss_abs_mgf, _gauss_abs_mgf_scaled, _gauss_log_e_scaled


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
        self.mean = _read_only_float_copy(mean)
        self.cov = _read_only_float_copy(cov)
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

    @classmethod
    def _concatenate(cls, dists):
        dims = sorted({d.dim for d in dists})
        if len(dims) > 1:
            raise ValueError("can only concatenate MultivariateNormal batches of one dimension; "
                             f"got dimensions {dims}.")
        kinds = {d.covariance_type for d in dists}
        covs = [d.cov for d in dists] if len(kinds) == 1 else [d.full_covariance() for d in dists]
        return MultivariateNormal(np.concatenate([d.mean for d in dists]), np.concatenate(covs))

    def _moments(self, unit=1.0):
        return self.mean / unit, (self.variance / unit / unit).sum(axis=1)

    def _draw(self, rng, m):
        E = rng.standard_normal((m, self.n_samples, self.dim))
        if self.covariance_type == "spherical":
            return self.mean + np.sqrt(self.cov)[:, None] * E
        if self.covariance_type == "diag":
            return self.mean + np.sqrt(self.cov) * E
        return self.mean + np.einsum("nij,mnj->mni", self._root, E)

    def _pair_cost(self):
        """``d**2`` numbers per pair for full covariances that do not commute, else 1."""
        return 1 if self.commuting() else (self.dim or 1) ** 2

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


# --------------------------------------------------------------------------------------------
# kernel expectations (registered with skcalib._expectations)


class _DiagNormalOps(TargetOps):
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
        return place(self.mean, idx, axis), place(self.var, idx, axis)

    def e1(self, P, Y):
        if self.ky.robust:
            return self._e_scaled(P[0], P[1], Y, 0.0)
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

    def _e_scaled(self, M, V, Y, V2):
        """``e1`` (``V2 = 0``) or ``e2`` (``Y`` the other means, ``V2`` their variances) by the
        scaled one-dimensional forms, coordinate by coordinate."""
        unit = self.ky.unit
        out = None
        for k in range(Y.shape[-1]):
            V2k = V2 if np.ndim(V2) == 0 else V2[..., k]
            # hypot of the standard deviations: the sum of huge variances may overflow
            sd = np.hypot(np.sqrt(V[..., k]), np.sqrt(V2k))
            delta = M[..., k] - Y[..., k]
            if self.gauss:
                term = _gauss_log_e_scaled(delta, sd, unit)
                out = term if out is None else out + term
            else:
                term = _gauss_abs_mgf_scaled(delta, sd, unit)
                out = term if out is None else out * term
        return np.exp(out) if self.gauss else out

    def e2(self, P, Q):
        if self.ky.robust:
            return self._e_scaled(P[0], P[1], Q[0], Q[1])
        g = self.ky.gamma
        if self.gauss:
            # prod_k (1 + 2g(v_k + v'_k))^(-1/2) exp(-g (m_k - m'_k)^2 / (1 + 2g(v_k + v'_k)));
            # the prefactor as a running product, one logarithm per 32 coordinates.
            # (Fewer factors per logarithm where one factor may exceed 1e9: small length scales.)
            a_max = 1.0 + 2.0 * g * (float(np.max(P[1], initial=0.0))
                                     + float(np.max(Q[1], initial=0.0)))
            period = 32 if a_max <= 1e9 else max(1, int(300.0 // math.log10(a_max)))
            expo, logpre, prod = 0.0, 0.0, 1.0
            for k in range(P[0].shape[-1]):
                a = 1.0 + 2.0 * g * (P[1][..., k] + Q[1][..., k])
                d = P[0][..., k] - Q[0][..., k]
                expo = expo + d * d / a
                prod = prod * a
                if k % period == period - 1:
                    logpre = logpre + np.log(prod)
                    prod = 1.0
            return np.exp(-g * expo - 0.5 * (logpre + np.log(prod)))
        out = None
        for k in range(P[0].shape[-1]):
            term = _gauss_abs_mgf(P[0][..., k] - Q[0][..., k],
                                  np.sqrt(P[1][..., k] + Q[1][..., k]), g)
            out = term if out is None else out * term
        return out


class _FullNormalGaussOps(TargetOps):
    """Multivariate normals with non-commuting full covariances, Gaussian target kernel:
    ``e1 = |I + 2g S|^(-1/2) exp(-g d^T (I + 2g S)^(-1) d)`` through Cholesky factors."""

    def __init__(self, dist, y, ky):
        super().__init__(y, ky)
        self.mean = dist.mean
        self.cov = dist.cov
        self.d = dist.dim

    def P(self, idx, axis):
        return place(self.mean, idx, axis), place(self.cov, idx, axis)

    def _log_e(self, delta, cov):
        if self.ky.robust:
            return self._log_e_scaled(delta, cov)
        g = self.ky.gamma
        shape = np.broadcast_shapes(delta.shape[:-1], cov.shape[:-2])
        delta = np.broadcast_to(delta, shape + (self.d,)).reshape(-1, self.d)
        cov = np.broadcast_to(cov, shape + (self.d, self.d)).reshape(-1, self.d, self.d)
        out = np.empty(delta.shape[0])
        step = max(1, 2_000_000 // (self.d * self.d))
        eye = np.eye(self.d)
        for s in range(0, delta.shape[0], step):
            A = eye + 2.0 * g * cov[s:s + step]
            try:
                L = np.linalg.cholesky(A)
            except np.linalg.LinAlgError:
                # I + 2g S with a singular S and a small length scale: rounding made it
                # indefinite; the eigenvalue form treats the null directions exactly.
                out[s:s + step] = self._log_e_eig(delta[s:s + step], cov[s:s + step],
                                                  self.ky.unit)
                continue
            v = np.linalg.solve(L, delta[s:s + step, :, None])[..., 0]
            out[s:s + step] = (-np.log(np.einsum("nii->ni", L)).sum(axis=1)
                               - g * np.einsum("ni,ni->n", v, v))
        return out.reshape(shape)

    def _log_e_scaled(self, delta, cov):
        """``_log_e`` at any length scale ``l`` and for singular covariances: in the eigenbasis
        ``S = U diag(mu) U^T`` it is a sum of one-dimensional scaled terms,
        ``sum_k log(l / h_k) - (u_k^T delta / h_k)^2 / 2`` with ``h_k = hypot(l, sqrt(mu_k))``
        (:func:`_gauss_log_e_scaled`; eigenvalues below 0 from rounding count as 0)."""
        l = self.ky.unit
        shape = np.broadcast_shapes(delta.shape[:-1], cov.shape[:-2])
        delta = np.broadcast_to(delta, shape + (self.d,)).reshape(-1, self.d)
        cov = np.broadcast_to(cov, shape + (self.d, self.d)).reshape(-1, self.d, self.d)
        out = np.empty(delta.shape[0])
        step = max(1, 2_000_000 // (self.d * self.d))
        for s in range(0, delta.shape[0], step):
            out[s:s + step] = self._log_e_eig(delta[s:s + step], cov[s:s + step], l)
        return out.reshape(shape)

    @staticmethod
    def _log_e_eig(delta, cov, l):
        mu, U = np.linalg.eigh(cov)
        proj = np.einsum("nij,ni->nj", U, delta)             # u_k^T delta
        return _gauss_log_e_scaled(proj, np.sqrt(np.maximum(mu, 0.0)), l).sum(axis=1)

    def e1(self, P, Y):
        return np.exp(self._log_e(P[0] - Y, P[1]))

    def e2(self, P, Q):
        return np.exp(self._log_e(P[0] - Q[0], P[1] + Q[1]))


def _as_full(dist):
    return type(dist)(dist.mean, dist.full_covariance())


def _closed_ops(dist, y, ky, rotate):
    factorises = ky.kind in ("gauss", "exp_tv") or dist.dim == 1
    if factorises and (dist.covariance_type != "full" or dist.dim == 1
                       or (rotate and ky.kind == "gauss" and dist.commuting())):
        return _DiagNormalOps(dist, y, ky)
    if ky.kind == "gauss":
        return _FullNormalGaussOps(dist, y, ky)
    return None


def _full_gauss_ops(dist, y, ky):
    return _FullNormalGaussOps(_as_full(dist), y, ky)


register_expectations(MultivariateNormal, GaussianKernel, _closed_ops, common=_full_gauss_ops)
register_expectations(MultivariateNormal, ExponentialKernel, _closed_ops)
