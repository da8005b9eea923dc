"""The Recalibrated family: a univariate prediction whose CDF is mapped by a monotone
piecewise-linear ``R`` of ``[0, 1]`` (quantile recalibration).

The class has ``cdf``, ``ppf``, ``log_pdf``, sampling, moments, a CRPS (exact for a Normal base,
quadrature otherwise) and Wasserstein distances (by the Gauss-Legendre rules of this module, see
the package docstring); its kernel expectations are Monte Carlo. Recalibrated batches may be the
components of a :class:`~skcalib.distributions.Mixture` (registered below).
"""

import math

import numpy as np
from scipy import special

from ._base import (_GL_NODES, _GL_WEIGHTS, Distribution, _check_q, _crps_quantile_quadrature,
                    _float_array, _read_only_float_copy, _univariate_only, _variance_in_range,
                    concatenate)
from ._laplace import Laplace
from ._mixture import Mixture, register_component_family
from ._normal import Normal
from ._scipy import ScipyDistribution

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
    return _read_only_float_copy(a), _read_only_float_copy(r)


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
        Continuous univariate predictive distributions (Normal, Laplace, a Mixture of them, a
        ScipyDistribution, or Recalibrated). Draws (Empirical) and Quantiles are recalibrated
        within their own families by
        :class:`~skcalib.recalibration.QuantileRecalibration`.
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
        # continuous univariate bases (Empirical and Quantiles are recalibrated within their
        # own families by QuantileRecalibration)
        if not (isinstance(base, (Normal, Laplace, Recalibrated, ScipyDistribution)) or (
                isinstance(base, Mixture) and isinstance(base.components[0], (Normal, Laplace)))):
            raise TypeError(_univariate_only(base, "base of Recalibrated"))
        self.base = base
        self.knots, self.values = _check_quantile_map(knots, values)
        self.n_samples = base.n_samples
        d = np.diff(self.knots)
        self._slopes = _read_only_float_copy(np.diff(self.values) / d)
        self._cache = {}   # derived quantities of the immutable parameters (W2 moments)
        self._freeze()

    def _take(self, rows):
        return Recalibrated(self.base._take(rows), self.knots, self.values)

    _univariate = True

    def _inner_distributions(self):
        return (self.base,)

    def _draw_items(self):
        return 2 * self.base._draw_items()

    @classmethod
    def _concatenate(cls, dists):
        first = dists[0]
        if any(not (np.array_equal(d.knots, first.knots) and np.array_equal(d.values, first.values))
               for d in dists):
            raise ValueError("can only concatenate Recalibrated batches with the same map (knots "
                             "and values); use a Mixture to combine differently recalibrated "
                             "predictions.")
        return Recalibrated(concatenate([d.base for d in dists]), first.knots, first.values)

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
            E = _read_only_float_copy(Q * np.sqrt(w)[None, :])
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


register_component_family(Recalibrated)
