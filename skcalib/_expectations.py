"""Kernel expectations of predictive distributions: the family-specific part of the SKCE.

For a tensor-product kernel ``k((p, y), (p', y')) = k_P(p, p') k_Y(y, y')`` the SKCE kernel of
predictive distributions (Widmann et al. 2021) is

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
:mod:`skcalib.distributions` (which imports it for ``expected_kernel``). It never imports
``distributions``: it dispatches on the family marker ``_family`` that every distribution class
carries (``"normal"``, ``"laplace"``, ``"multivariate_normal"``, ``"mixture"``,
``"categorical"``). The pair term built on these ops lives in :mod:`skcalib.metrics._distribution`.
"""

import math
import threading
import weakref

import numpy as np
from scipy.special import erfcx, log_ndtr, ndtr

from ._validation import (MAX_MC_SAMPLES, check_n_resamples, check_numeric, check_rng,
                          check_work_memory)
from .kernels import ExponentialKernel, GaussianKernel


def _family(dist):
    """The family marker of a distribution object (None for anything else)."""
    return getattr(type(dist), "_family", None)


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
            self.kind = "gauss"
            self.unit = ls
        elif isinstance(kernel, ExponentialKernel):
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

    @property
    def laplacian_1d_gamma(self):
        """Rate ``g`` of ``exp(-g |y - y'|)`` per coordinate (exponential kernels that factorise)."""
        return self.gamma


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
        with np.errstate(over="ignore", under="ignore"):   # used by the rate formulas only
            self.var = dist.scale ** 2
        self.scale = dist.scale
        self.homoscedastic = bool(np.all(self.scale == self.scale[0])) if self.scale.size else True
        self._fused = {}  # (length_scale, exponent) -> _FusedNormalGauss

    def P(self, idx, axis):
        # Scaled formulas: standard deviations (their squares may leave the float range).
        return _place(self.loc, idx, axis), _place(self.scale if self.ky.robust else self.var,
                                                   idx, axis)

    def e1(self, P, Y):
        if self.ky.robust:
            return np.exp(_gauss_log_e_scaled(P[0] - Y, P[1], self.ky.unit))
        return np.exp(normal_gauss_log_e1(P[0], P[1], Y, self.ky.gamma))

    def e2(self, P, Q):
        if self.ky.robust:
            return np.exp(_gauss_log_e_scaled(P[0] - Q[0], np.hypot(P[1], Q[1]), self.ky.unit))
        return np.exp(normal_gauss_log_e1(P[0], P[1] + Q[1], Q[0], self.ky.gamma))

    def fused(self, length_scale, exponent):
        """The fused evaluator of ``sum w_i w_j h_ij`` over tiles for the prediction kernel
        ``exp(-(W2 / length_scale)**exponent)`` on these same Normal predictions (the hot loop
        of the SKCE estimators, see :class:`_FusedNormalGauss`), or None where its scaled
        quantities would leave the floating-point range (use the generic tiles then)."""
        if self.ky.robust:
            return None
        key = (float(length_scale), float(exponent))
        if key not in self._fused:
            engine = _FusedNormalGauss(self, *key)
            self._fused[key] = engine if engine.in_range else None
        return self._fused[key]


#: Pairs per strip of the fused Normal x Gaussian sum (strips of a tile's rows by all its columns):
#: the strip's six float64 slabs (3 MiB) stay in the L3 cache while numpy's per-call overhead
#: stays small (measured: 16384 to 65536 pairs are equally fast; 131072 is slower).
_STRIP_PAIRS = 65536

#: The fused sum expands the squares of the target and mean differences (BLAS products of row and
#: column features) when the centred values are at most sqrt(_EXPANSION_LIMIT) target length
#: scales from the centre: the expansion's rounding stays below ~1e-13 in every exponent.
#: Wider data use exact differences instead (slower, same result).
_EXPANSION_LIMIT = 100.0

#: Up to this many samples the fused sum keeps every sample's row and column features (36
#: float64 each, 9 MiB at this size); beyond, it builds them per tile (O(tile) memory).
_FEATURE_CACHE_SAMPLES = 1 << 15

_LOG2E = 1.0 / math.log(2.0)

_WORKSPACE = threading.local()  # per-thread scratch buffers of the fused sum (joblib threads)


def _workspace(size, n_ones):
    """A float64 scratch buffer of at least ``size`` elements and a vector of ``n_ones`` ones,
    reused by the calling thread (fresh large arrays would be page-faulted in at every strip)."""
    buf = getattr(_WORKSPACE, "buf", None)
    if buf is None or buf.size < size:
        buf = _WORKSPACE.buf = np.empty(size)
    ones = getattr(_WORKSPACE, "ones", None)
    if ones is None or ones.size < n_ones:
        ones = _WORKSPACE.ones = np.ones(n_ones)
    return buf[:size], ones[:n_ones]


class _FusedNormalGauss:
    """Fused tile sums of the SKCE pair term for Normal predictions, the Gaussian target kernel
    ``exp(-g (y - y')^2)`` and the Wasserstein kernel ``exp(-(W2 / l)**nu)``.

    Every pair's ``h_ij`` is four exponentials sharing ``NL_ij = (W2_ij / l)**nu``::

        h_ij = exp(G1_ij - NL_ij) - exp(G2_ij - NL_ij) - exp(G3_ij - NL_ij) + c0 exp(E4_ij),
        G1 = -g (y_i - y_j)^2,
        G2 = -w_i (m_i - y_j)^2 + log alpha_i,    G3 = -w_j (m_j - y_i)^2 + log alpha_j,
        E4 = -NL - D_ij^2 / q_ij - log(q_ij) / 2,

    with ``alpha_i = (1 + 2 g s_i^2)^(-1/2)``, ``w_i = g alpha_i^2``, ``D_ij = (m_i - m_j) / l``,
    ``q_ij = u_i + v_j = (1 + 2 g (s_i^2 + s_j^2)) / (g l^2)`` and ``c0 = (g l^2)^(-1/2)``: the
    ``e2`` prefactor ``(1 + 2g(s_i^2 + s_j^2))^(-1/2)`` enters the exponent through ``log q``
    (equal variances: a constant). All exponents are kept in base 2 (scaled by ``log2(e)``:
    ``exp2`` is the faster call), with the coordinates scaled accordingly.

    Every sample has row and column *features* (kept for all samples up to
    ``_FEATURE_CACHE_SAMPLES``, else built per tile: O(tile) memory). A strip of a tile's rows by
    its columns (stored transposed) then costs

    * one batched matrix product with inner dimension 3 giving the exact differences
      ``m_i - m_j``, ``s_i - s_j`` and the sums ``q_ij`` (one non-trivial term per product, so
      each is rounded once, like a subtraction) and ``G1``, ``G2``, ``G3`` expanded into row times
      column terms (``-g y_i^2 - g y_j^2 + 2 g y_i y_j`` on centred values; data wider than
      ``_EXPANSION_LIMIT`` use exact differences instead);
    * one ``sqrt`` (``nu = 1``), one ``log`` and one ``exp2`` call over the four stacked exponent
      slabs, up to seven other elementwise passes (in place, on six slabs: the ``q_ij`` slab
      becomes the fourth exponent), and matrix-vector products for the (weighted) sums.
      (Measured: the transcendental calls, the product and the reductions are ~80% of the
      time; ``sqrt`` alone costs as much as the product, and no exponential can be shared:
      each of the four terms has its own pairwise exponent.)

    The identities are exact; only the rounding differs from the unfused evaluation (tested
    against a brute-force formula). Scratch buffers are per thread (``n_jobs`` threads).
    """

    def __init__(self, ops, length_scale, exponent):
        g = self.gamma = ops.ky.gamma
        self.exponent = exponent
        self.loc, self.scale, self.y = ops.loc, ops.scale, ops.y
        m, s, y = self.loc, self.scale, self.y
        n = m.shape[0]
        self._all = None
        if math.log(_LOG2E) / exponent > 600.0:        # tiny exponents: kappa overflows
            self.in_range = False
            return
        # Coordinates scaled so that (|d| kappa)^nu = log2(e) (|d| / l)^nu.
        self.kappa = kappa = _LOG2E ** (1.0 / exponent) / length_scale
        self.scale_q = scale_q = kappa * kappa / (g * _LOG2E)
        # Centre targets and means together: differences are unchanged, expansions shrink.
        self.centre = c = 0.5 * (min(m.min(), y.min()) + max(m.max(), y.max())) if n else 0.0
        tg_max = 2.0 * g * float(np.max(s)) ** 2 if n else 0.0
        spread = max(float(np.max(np.abs(m - c))), float(np.max(np.abs(y - c)))) if n else 0.0
        # Scaled coordinates and q far inside the float range: squares neither overflow nor, where
        # they matter (q >= scale_q), underflow. Otherwise (extreme prediction length scales) the
        # engine is not used: the generic tiles take the prepared kernel's log k instead.
        big = kappa * max(spread, float(np.max(s)) if n else 0.0)
        self.in_range = bool(big < 1e150 and 1e-150 < scale_q and scale_q * (1.0 + 2.0 * tg_max)
                             < 1e150 and math.isfinite(g * spread * spread))
        if not self.in_range:
            return
        self.homoscedastic = ops.homoscedastic
        if self.homoscedastic:
            q0 = scale_q * (1.0 + 4.0 * g * float(s[0]) ** 2) if n else 1.0   # 1 + tg_i + tg_j
            self.inv_q0 = 1.0 / q0
            c4 = 1.0 / math.sqrt(q0 / scale_q)
        else:
            c4 = math.sqrt(scale_q)
        self.signs = np.array([1.0, -1.0, -1.0, c4])        # k_Y - e1 - e1 + e2
        self.expand = g * spread * spread <= _EXPANSION_LIMIT
        # Small data: the features of all samples once (36 floats per sample); larger data build
        # them per tile, keeping the memory O(tile).
        if n <= _FEATURE_CACHE_SAMPLES:
            self._all = self._features(slice(0, n))

    def _features(self, sl):
        """Column and row features (slabs, 3, T) of the samples ``sl``: the strip's products
        ``cols.T @ rows`` give the differences ``kappa (m_i - m_j)``, ``kappa (s_i - s_j)``,
        (expanded) ``log2(e) (G1, G2, G3)`` and last the sums ``q_ij``; plus the centred
        vectors. (The slab order matches the strip's buffer: the ``q_ij`` slab becomes the
        fourth exponent slab in place, see :meth:`_strip`.)"""
        g, kappa, L = self.gamma, self.kappa, _LOG2E
        m = self.loc[sl] - self.centre
        s = self.scale[sl]
        y = self.y[sl] - self.centre
        tg = 2.0 * g * s * s
        w = g / (1.0 + tg)
        log_alpha = -0.5 * np.log1p(tg)
        ys = math.sqrt(g) * y
        hetero = not self.homoscedastic
        k = 2 + (3 if self.expand else 0) + hetero
        cols, rows = np.zeros((k, 3, m.shape[0])), np.zeros((k, 3, m.shape[0]))
        # Differences x_i - x_j as [1, -x_j, 0] (columns) times [x_i, 1, 0] (rows).
        cols[:2, 0] = 1.0
        rows[:2, 1] = 1.0
        np.multiply(m, -kappa, out=cols[0, 1])
        np.multiply(m, kappa, out=rows[0, 0])
        np.multiply(s, -kappa, out=cols[1, 1])
        np.multiply(s, kappa, out=rows[1, 0])
        if hetero:                                          # q_ij = u_i + v_j (last slab)
            cols[-1, 0] = 1.0
            rows[-1, 1] = 1.0
            np.multiply(tg, self.scale_q, out=cols[-1, 1])
            rows[-1, 0] = self.scale_q * (1.0 + tg)
        vecs = dict(ys=ys, m=m, y=y, w=L * w, log_alpha=L * log_alpha)
        if self.expand:
            # G1 = -ys_i^2 - ys_j^2 + 2 ys_i ys_j; G2 = -w_i (m_i - y_j)^2 + log alpha_i; G3
            # mirrored (all times log2 e, put on the row side of G1 and G2).
            e2 = np.stack([L * (log_alpha - w * m * m), 2.0 * L * w * m, -L * w])
            y_pow = np.stack([np.ones_like(y), y, y * y])
            cols[2] = [np.ones_like(y), -ys * ys, ys]
            rows[2] = [-L * ys * ys, np.full_like(y, L), 2.0 * L * ys]
            cols[3], rows[3] = y_pow, e2
            cols[4], rows[4] = e2, y_pow
        return cols, rows, vecs

    @staticmethod
    def _g_slabs_exact(vr, vc, G):
        """``log2(e) (G1, G2, G3)`` of rows ``vr`` and columns ``vc`` (centred vectors),
        transposed, into ``G``, from exact differences (data too wide for the expansion)."""
        d = np.subtract(vc["ys"][:, None], vr["ys"][None, :], out=G[0])
        np.multiply(d, d, out=d)
        d *= -_LOG2E
        d = np.subtract(vc["y"][:, None], vr["m"][None, :], out=G[1])
        np.multiply(d, d, out=d)
        d *= -vr["w"][None, :]
        d += vr["log_alpha"][None, :]
        d = np.subtract(vc["m"][:, None], vr["y"][None, :], out=G[2])
        np.multiply(d, d, out=d)
        d *= -vc["w"][:, None]
        d += vc["log_alpha"][:, None]

    def _strip(self, cols, rows, vc, vr, wr, wc, split):
        """Sum of ``wr_i wc_j h_ij`` over one strip: column features ``cols`` (slabs, 3, C) times
        row features ``rows`` (slabs, 3, R). With ``split = R`` the first ``R`` columns are the
        rows themselves (a diagonal block), of whose pairs only ``i < j`` count."""
        C, R = cols.shape[2], rows.shape[2]
        buf, ones = _workspace(6 * R * C, R * C)
        # Slabs Dm, NL, then the four exponents E (G1, G2, G3 and E4, which starts as q_ij).
        buf = buf.reshape(6, C, R)
        Dm, NL, E, E4 = buf[0], buf[1], buf[2:], buf[5]
        if self.expand:
            np.matmul(cols.transpose(0, 2, 1), rows, out=buf[:cols.shape[0]])
        else:
            np.matmul(cols[:2].transpose(0, 2, 1), rows[:2], out=buf[:2])
            if not self.homoscedastic:
                np.matmul(cols[2:].transpose(0, 2, 1), rows[2:], out=buf[5:])
            self._g_slabs_exact(vr, vc, E)
        # All in place (cheaper than writing a third array).
        Dm *= Dm
        NL *= NL
        NL += Dm                                            # log2(e)^(2/nu) (W2 / l)^2
        if self.exponent == 1.0:
            np.sqrt(NL, out=NL)
        elif self.exponent != 2.0:
            np.power(NL, 0.5 * self.exponent, out=NL)
        if self.homoscedastic:
            np.multiply(Dm, -self.inv_q0, out=E4)
        else:
            Dm /= E4                                        # E4 holds q_ij
            np.log(E4, out=E4)
            E4 *= -0.5 * _LOG2E
            E4 -= Dm
        E -= NL
        np.exp2(E, out=E)
        signs = self.signs
        # Transposed slabs: axis 1 runs over the columns, axis 2 over the rows.
        if not split:
            if wr is None:
                return float(signs @ (E.reshape(4, C * R) @ ones))
            return float(signs @ ((E.reshape(4 * C, R) @ wr).reshape(4, C) @ wc))
        ar = np.arange(R)
        diag = E[:, ar, ar]                                 # the pairs (i, i) as computed here
        inner = E[:, :split, :]                             # the diagonal block (R x R)
        if wr is None:
            total = 0.5 * float(signs @ (inner.reshape(4, split * R) @ ones[:split * R]
                                         - diag.sum(axis=1)))
            if C > split:
                rest = E[:, split:, :].reshape(4, (C - split) * R)
                total += float(signs @ (rest @ ones[:(C - split) * R]))
            return total
        per_col = (inner.reshape(4 * split, R) @ wr).reshape(4, split) @ wc[:split]
        total = 0.5 * float(signs @ (per_col - diag @ (wr * wc[:split])))
        if C > split:
            rest = E[:, split:, :].reshape(4 * (C - split), R)
            total += float(signs @ ((rest @ wr).reshape(4, C - split) @ wc[split:]))
        return total

    def _tile_features(self, a, b, diagonal_tile):
        """Column features of ``b``, row features of ``a`` and their centred vectors."""
        if self._all is not None:
            cols, rows, vecs = self._all
            return (cols[:, :, b], rows[:, :, a], {k: v[b] for k, v in vecs.items()},
                    {k: v[a] for k, v in vecs.items()})
        cols, rows, vb = self._features(b)
        if diagonal_tile:
            return cols, rows, vb, vb
        # The engine walks the tiles of one row block in turn: keep that block's row features.
        last = getattr(_WORKSPACE, "rows", None)
        if last is not None and last[0]() is self and last[1] == (a.start, a.stop):
            rows, va = last[2]
        else:
            _, rows, va = self._features(a)
            _WORKSPACE.rows = (weakref.ref(self), (a.start, a.stop), (rows, va))
        return cols, rows, vb, va

    def tile_sum(self, a, b, diagonal_tile, weights):
        """Sum of ``w_i w_j h_ij`` over the tile ``a`` x ``b`` (slices; pairs ``i < j`` only on a
        diagonal tile, ``a == b``). ``weights``: all samples' weights, or None for ones."""
        cols, rows, vb, va = self._tile_features(a, b, diagonal_tile)
        n_cols = b.stop - b.start
        step = max(8, _STRIP_PAIRS // max(n_cols, 1))
        total = 0.0
        for r0 in range(0, a.stop - a.start, step):
            r = slice(r0, min(r0 + step, a.stop - a.start))
            cb = slice(r0, n_cols) if diagonal_tile else slice(0, n_cols)
            vr = vc = None
            if not self.expand:
                vr, vc = {k: v[r] for k, v in va.items()}, {k: v[cb] for k, v in vb.items()}
            wr = wc = None
            if weights is not None:
                wr, wc = weights[a][r], weights[b][cb]
            total += self._strip(cols[:, :, cb], rows[:, :, r], vc, vr, wr, wc,
                                 r.stop - r.start if diagonal_tile else 0)
        return total


class _LocationScaleOps(_Ops):
    """Ops of 1-D location-scale predictions: the predictions are ``(loc, scale)``."""

    def __init__(self, dist, y, ky):
        super().__init__(y, ky)
        self.loc, self.scale = dist.loc, dist.scale

    def P(self, idx, axis):
        return _place(self.loc, idx, axis), _place(self.scale, idx, axis)


class _NormalLaplaceOps(_LocationScaleOps):
    """Normal predictions, exponential target kernel ``exp(-gamma |y - y'|)`` (1-D)."""

    def e1(self, P, Y):
        if self.ky.robust:
            return _gauss_abs_mgf_scaled(P[0] - Y, P[1], self.ky.unit)
        return _gauss_abs_mgf(P[0] - Y, P[1], self.ky.gamma)

    def e2(self, P, Q):
        if self.ky.robust:
            return _gauss_abs_mgf_scaled(P[0] - Q[0], np.hypot(P[1], Q[1]), self.ky.unit)
        return _gauss_abs_mgf(P[0] - Q[0], np.sqrt(P[1] ** 2 + Q[1] ** 2), self.ky.gamma)


class _LaplaceOps(_LocationScaleOps):
    """Laplace predictions, exponential target kernel ``exp(-gamma |y - y'|)`` (1-D)."""

    def e1(self, P, Y):
        if self.ky.robust:
            return _laplace_e1_scaled(P[0], P[1], Y, self.ky.unit)
        return laplace_e1(P[0], P[1], Y, self.ky.gamma)

    def e2(self, P, Q):
        if self.ky.robust:
            return _laplace_e2_scaled(P[0], P[1], Q[0], Q[1], self.ky.unit)
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


def _closed_ops(dist, y, ky, rotate=True):
    """Closed-form target ops for ``dist`` and ``k_Y``, or None if there is none. ``rotate``
    allows commuting full covariances to be rotated to diagonal ones (not inside mixtures, whose
    components must share the target coordinates)."""
    family = _family(dist)
    if family == "normal":
        if ky.kind == "gauss":
            return _NormalGaussOps(dist, y, ky)
        return _NormalLaplaceOps(dist, y, ky)
    if family == "laplace":
        return _LaplaceOps(dist, y, ky) if ky.kind != "gauss" else None
    if family == "multivariate_normal":
        factorises = ky.kind in ("gauss", "exp_tv") or dist.dim == 1
        if factorises and (dist.covariance_type != "full" or dist.dim == 1
                           or (rotate and ky.kind == "gauss" and dist.commuting())):
            return _DiagNormalOps(dist, y, ky)
        if ky.kind == "gauss":
            return _FullNormalGaussOps(dist, y, ky)
        return None
    if family == "mixture":
        comps = [_closed_ops(c, y, ky, rotate=False) for c in dist.components]
        if any(c is None for c in comps):
            return None
        if len({type(c) for c in comps}) != 1:
            # e.g. diagonal and full covariances among the components: one common form.
            if ky.kind != "gauss" or _family(dist.components[0]) != "multivariate_normal":
                return None
            comps = [_FullNormalGaussOps(_as_full(c), y, ky) for c in dist.components]
        return _MixtureOps(dist, y, ky, comps)
    return None


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
    ops = _closed_ops(dist, y, ky, rotate=rotate)
    if ops is None:
        ops = _MonteCarloOps(dist, y, ky, n_mc_samples, random_state)
    return ops


def _signature(ops):
    if isinstance(ops, _MixtureOps):
        return (_MixtureOps, type(ops.comps[0]))
    return (type(ops),)


def _full_gauss_ops(dist, y, ky):
    if _family(dist) == "mixture":
        return _MixtureOps(dist, y, ky, [_FullNormalGaussOps(_as_full(c), y, ky)
                                         for c in dist.components])
    return _FullNormalGaussOps(_as_full(dist), y, ky)


def paired_ops(p, q, y, target_kernel, *, n_mc_samples=100, random_state=None):
    """Target ops for two distributions of one family whose ``e2(p_i, q_i)`` is wanted: closed
    forms of one common type (full covariances for mixed normal covariance types), else Monte
    Carlo for both (independent draws)."""
    check_n_resamples(n_mc_samples, "n_mc_samples", max_val=MAX_MC_SAMPLES)
    rng = check_rng(random_state)
    mag = max(_magnitude(p, y), _magnitude(q, y))  # one formula for both
    ops = target_ops(p, y, target_kernel, n_mc_samples=n_mc_samples, random_state=rng,
                     rotate=False, magnitude=mag)
    ops2 = target_ops(q, y, target_kernel, n_mc_samples=n_mc_samples, random_state=rng,
                      rotate=False, magnitude=mag)
    if _signature(ops) == _signature(ops2):
        return ops, ops2
    comp = p.components[0] if _family(p) == "mixture" else p
    if ops.ky.kind == "gauss" and _family(comp) == "multivariate_normal":
        return _full_gauss_ops(p, y, ops.ky), _full_gauss_ops(q, y, ops.ky)
    return (_MonteCarloOps(p, y, ops.ky, n_mc_samples, rng),
            _MonteCarloOps(q, y, ops.ky, n_mc_samples, rng))


def has_closed_form(dist, target_kernel):
    """True if ``E k_Y`` has a closed form for ``dist`` (no Monte-Carlo fallback needed)."""
    ky = _TargetKernel(target_kernel, vector=dist.dim is not None)
    return _closed_ops(dist, np.zeros((dist.n_samples,) + dist.target_shape), ky) is not None


# --------------------------------------------------------------------------------------------
# closed-form kernel expectations (broadcasting formulas)
#
# Each function takes parameter arrays that broadcast against each other; the engine calls them
# with shapes (T, 1) x (1, T) for tiles and (k,) x (k,) for matching pairs.


def normal_gauss_log_e1(loc, var, y, gamma):
    """``log E exp(-gamma (Z - y)^2)``, ``Z ~ N(loc, var)``."""
    a = 1.0 + 2.0 * gamma * var
    d = loc - y
    return -0.5 * np.log(a) - gamma * d * d / a


def normal_laplace_e1(loc, sd, y, gamma):
    """``E exp(-gamma |Z - y|)``, ``Z ~ N(loc, sd^2)`` (closed form through log Phi)."""
    return _gauss_abs_mgf(loc - y, sd, gamma)


def _gauss_abs_mgf(delta, s, gamma):
    """``E exp(-gamma |W|)`` for ``W ~ N(delta, s^2)``, stable for all ``s >= 0``."""
    delta, s = np.broadcast_arrays(np.asarray(delta, dtype=np.float64),
                                   np.asarray(s, dtype=np.float64))
    shape = delta.shape
    delta, s = delta.ravel(), s.ravel()
    out = np.exp(-gamma * np.abs(delta))
    pos = s > 0
    # gamma s > _MGF_SWITCH: the exponents below are sums of terms of order (gamma s)^2 that
    # cancel (absolute error ~(gamma s)^2 eps, overflow beyond ~1e8): the ratio form instead.
    wide = pos & (gamma * s > _MGF_SWITCH)
    pos &= ~wide
    if np.any(pos):
        d, sp = delta[pos], s[pos]
        half = 0.5 * (gamma * sp) ** 2
        out[pos] = (np.exp(half - gamma * d + log_ndtr(d / sp - gamma * sp))
                    + np.exp(half + gamma * d + log_ndtr(-d / sp - gamma * sp)))
    if np.any(wide):
        d, sp = delta[wide], s[wide]
        with np.errstate(over="ignore", under="ignore"):
            z, a = d / sp, gamma * sp
            out[wide] = _half_mgf(z, a) + _half_mgf(-z, a)
    return out.reshape(shape)


#: ``gamma * s`` above which :func:`_gauss_abs_mgf` uses the ratio form of
#: :func:`_gauss_abs_mgf_scaled` (where the log-Phi form loses more than ~1e-13).
_MGF_SWITCH = 30.0


def _gauss_log_e_scaled(delta, sd, length_scale):
    """``log E exp(-(W / l)^2 / 2)`` for ``W ~ N(delta, sd^2)`` at any length scale ``l``:
    ``log(l / h) - (delta / h)^2 / 2`` with ``h = hypot(l, sd)`` (no squares of ``l`` or ``sd``;
    where ``l / h`` or ``delta / h`` leave the float range the expectation is 0 in floating point).
    """
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        h = np.hypot(length_scale, sd)
        t = delta / h
        t *= t
        t *= -0.5
        t += np.log(length_scale / h)
    return t


def _half_mgf(z, a):
    """``exp(a^2 / 2 - a z) Phi(z - a)`` for ``a >= 0`` (arrays), without overflow: with
    ``v = a - z`` it is ``exp(-z^2 / 2) erfcx(v / sqrt 2) / 2`` for ``v >= 0`` and
    ``exp(-a (z - a / 2)) Phi(-v)`` (both factors at most 1) otherwise."""
    v = a - z
    out = np.empty(v.shape)
    right = v >= 0.0
    zr = z[right]
    out[right] = np.exp(-0.5 * (zr * zr)) * (0.5 * erfcx(v[right] * _SQRT_HALF))
    left = ~right
    al, zl = a[left], z[left]
    expo = np.zeros(al.shape)
    np.multiply(al, zl - 0.5 * al, out=expo, where=al > 0.0)   # a = 0: exponent 0
    out[left] = np.exp(-expo) * ndtr(-v[left])
    return out


_SQRT_HALF = math.sqrt(0.5)


def _gauss_abs_mgf_scaled(delta, s, unit):
    """``E exp(-|W| / unit)`` for ``W ~ N(delta, s^2)``, at any ``unit``: the two terms of
    :func:`_gauss_abs_mgf` in the ratios ``z = delta / s`` and ``a = s / unit`` only (see
    :func:`_half_mgf`), so that no intermediate overflows for tiny or huge ``unit``."""
    delta, s = np.broadcast_arrays(np.asarray(delta, dtype=np.float64),
                                   np.asarray(s, dtype=np.float64))
    shape = delta.shape
    delta, s = delta.ravel(), s.ravel()
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        out = np.exp(-(np.abs(delta) / unit))
        pos = s > 0
        if np.any(pos):
            d, sp = delta[pos], s[pos]
            z, a = d / sp, sp / unit
            out[pos] = _half_mgf(z, a) + _half_mgf(-z, a)
    return out.reshape(shape)


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
    if raw is not None and raw.dtype.kind in "mMb":
        # numpy would read dates and durations as nanoseconds since 1970 (a CRPS of 1e15) and
        # booleans as 0/1, which, with a distribution prediction, is almost always a class label
        # passed to a regression metric: refuse them as the distributions' parameters are (B3).
        what = "booleans" if raw.dtype.kind == "b" else "dates or durations"
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
