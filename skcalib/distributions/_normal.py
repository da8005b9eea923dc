"""The Normal family ``N(loc, scale**2)`` and its closed forms.

Besides the class (density, CDF, quantiles, sampling, W2 embedding ``(loc, scale)``, temperature
scaling and its NLL optimum), this module holds and registers with :mod:`skcalib._expectations`
the closed-form kernel expectations of normal predictions:

* Gaussian target kernel: :class:`_NormalGaussOps`, with the fused tile sum of the SKCE's hot
  loop (:class:`_FusedNormalGauss`);
* exponential (Laplacian) target kernel: :class:`_NormalLaplaceOps`;

and the one-dimensional Gaussian formulas that the multivariate normals reuse
(:func:`normal_gauss_log_e1`, :func:`_gauss_abs_mgf`, :func:`_gauss_log_e_scaled`,
:func:`_gauss_abs_mgf_scaled`), and the CRPS (Gneiting et al. 2005; ``_crps``, and the terms
``E|X - y|``, ``E|X - X'|`` of the mixture CRPS).
"""

import math
import threading
import weakref

import numpy as np
from scipy import special
from scipy.special import erfcx, log_ndtr, ndtr

from .._expectations import (LocationScaleOps, TargetOps, place, register_expectations)
from ..kernels import ExponentialKernel, GaussianKernel
from ._base import _LocationScale, _check_q, _check_temperature, _require_positive, _standardised
from ._base import _variance_in_range

_SQRT_PI = math.sqrt(math.pi)


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

    def _crps(self, y):
        return _crps_normal(y - self.loc, self.scale)

    def _mixture_abs(self, y, w):
        """``w E|X - y|`` (a term of the mixture CRPS, Grimit et al. 2006)."""
        return w * _abs_normal(y - self.loc, self.scale)

    def _mixture_abs_self(self, w2):
        """``w2 E|X - X'|`` for independent copies of every row."""
        return w2 * 2.0 * self.scale / _SQRT_PI

    def _mixture_abs_pair(self, other):
        """``E|X - X'|`` for independent ``X`` of ``self`` and ``X'`` of ``other``."""
        return _abs_normal(self.loc - other.loc, np.hypot(self.scale, other.scale))

    def _temperature_statistic(self, y):
        _require_positive(self.scale, "scale")
        r = _standardised(np.asarray(y, dtype=np.float64), self.loc, self.scale)
        return r * r, 1


# --------------------------------------------------------------------------------------------
# kernel expectations (registered with skcalib._expectations)


class _NormalGaussOps(TargetOps):
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
        return place(self.loc, idx, axis), place(self.scale if self.ky.robust else self.var,
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


class _NormalLaplaceOps(LocationScaleOps):
    """Normal predictions, exponential target kernel ``exp(-gamma |y - y'|)`` (1-D)."""

    def e1(self, P, Y):
        if self.ky.robust:
            return _gauss_abs_mgf_scaled(P[0] - Y, P[1], self.ky.unit)
        return _gauss_abs_mgf(P[0] - Y, P[1], self.ky.gamma)

    def e2(self, P, Q):
        if self.ky.robust:
            return _gauss_abs_mgf_scaled(P[0] - Q[0], np.hypot(P[1], Q[1]), self.ky.unit)
        return _gauss_abs_mgf(P[0] - Q[0], np.sqrt(P[1] ** 2 + Q[1] ** 2), self.ky.gamma)


def normal_gauss_log_e1(loc, var, y, gamma):
    """``log E exp(-gamma (Z - y)^2)``, ``Z ~ N(loc, var)``."""
    a = 1.0 + 2.0 * gamma * var
    d = loc - y
    return -0.5 * np.log(a) - gamma * d * d / a


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


register_expectations(Normal, GaussianKernel, _NormalGaussOps)
register_expectations(Normal, ExponentialKernel, _NormalLaplaceOps)


# --------------------------------------------------------------------------------------------
# CRPS


def _crps_normal(d, s):
    """CRPS of ``N(0, s^2)`` at ``d`` (``= E|X - d| - E|X - X'| / 2``); ``|d|`` for ``s = 0``."""
    pos = s > 0
    all_pos = bool(pos.all())
    ss = s if all_pos else np.where(pos, s, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):  # |z| > 1e154: exp(-inf) = 0
        z = d / ss
        val = ss * (z * (2.0 * special.ndtr(z) - 1.0) + 2.0 * np.exp(-0.5 * z * z) / math.sqrt(
            2 * math.pi) - 1.0 / _SQRT_PI)
        # beyond the float range of z the CRPS is |d| minus a negligible sharpness term
        val = np.where(np.isfinite(z), val, np.abs(d) - ss / _SQRT_PI)
    return val if all_pos else np.where(pos, val, np.abs(d))


def _abs_normal(d, s):
    """``E|d + s Z|`` for a standard normal ``Z`` (``|d|`` for ``s = 0``)."""
    pos = s > 0
    ss = np.where(pos, s, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):  # |z| > 1e154: exp(-inf) = 0
        z = d / ss
        val = (ss * 2.0 * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
               + d * (2.0 * special.ndtr(z) - 1.0))
    return np.where(pos & np.isfinite(z), val, np.abs(d))
