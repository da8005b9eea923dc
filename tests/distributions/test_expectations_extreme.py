"""Kernel expectations of predictive distributions at extreme length scales (issue 11).

The SKCE/UCME of ``Normal``, ``Laplace``, ``MultivariateNormal`` and ``Mixture`` predictions must be
finite, warning-free and correct for target and prediction length scales from 1e-300 to 1e300.
References are independent of :mod:`skcalib._expectations`:

* explicit limits, brute force on small inputs: target length scale -> infinity gives
  ``k_Y = e1 = e2 = 1`` (``h = 0``); -> 0 gives ``k_Y(y, y') = 1{y == y'}`` and ``e1 = e2 = 0``
  (continuous predictions); ``WassersteinKernel(l)`` gives the identity on distinct predictions
  (l -> 0) or all ones (l -> infinity); ``k_P`` at ``l = 1`` from W2 written out per family;
* moderate scales (1e+-20 for the prediction kernel, where ``exp(-W2 / l)`` is already exactly 0 or
  1 in floating point, computed by the fused/ordinary code), and quadrature or asymptotic
  expansions for the closed forms themselves.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from skcalib import _expectations, skce, ucme
from skcalib.distributions._laplace import (
    _laplace_e1_scaled,
    _laplace_e2_scaled,
    laplace_e1,
    laplace_e2,
)
from skcalib.distributions._multivariate_normal import _FullNormalGaussOps
from skcalib.distributions._normal import (
    _gauss_abs_mgf,
    _gauss_abs_mgf_scaled,
    _gauss_log_e_scaled,
    normal_gauss_log_e1,
)
from skcalib.distributions import Laplace, Mixture, MultivariateNormal, Normal
from skcalib.kernels import ExponentialKernel, GaussianKernel, WassersteinKernel, tensor

TINY, HUGE = 1e-300, 1e300
ESTIMATORS = ("unbiased", "biased", "block")

# Rows 0 and 1: identical predictions and targets (their pair survives every limit); rows 3, 4:
# equal targets, different predictions.
Y = np.array([0.0, 0.0, 1.0, -0.5, -0.5, 2.0])
LOC = np.array([0.1, 0.1, 0.9, -0.4, 0.3, 1.7])
SC = np.array([1.0, 1.0, 0.5, 2.0, 0.7, 1.3])
Y2 = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0], [-0.5, 0.2], [-0.5, 0.2], [2.0, 0.0]])
M2 = np.array([[0.1, 0.0], [0.1, 0.0], [0.9, 1.2], [-0.4, 0.1], [0.3, -0.2], [1.7, 0.5]])
V2 = np.array([[1.0, 0.5], [1.0, 0.5], [0.3, 2.0], [2.0, 1.0], [0.5, 0.5], [1.3, 0.2]])


def _full_covs():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(6, 2, 2))
    C = X @ X.transpose(0, 2, 1) + 0.2 * np.eye(2)
    C[1] = C[0]
    return C


def _rank_one_covs():
    v = np.array([[1.0, 0.5], [1.0, 0.5], [0.2, 1.0], [-1.0, 1.0], [0.7, 0.0], [0.3, 0.3]])
    return v[:, :, None] * v[:, None, :]


# name -> (prediction, targets, target kernel class, W2 matrix function or None)
def _w2_normal(loc, sc, factor=1.0):
    return np.sqrt((loc[:, None] - loc[None, :]) ** 2 + factor * (sc[:, None] - sc[None, :]) ** 2)


def _w2_diag(m, v):
    s = np.sqrt(v)
    return np.sqrt(((m[:, None] - m[None, :]) ** 2).sum(-1)
                   + ((s[:, None] - s[None, :]) ** 2).sum(-1))


CASES = {
    "normal-gauss": (lambda: Normal(LOC, SC), Y, GaussianKernel, lambda: _w2_normal(LOC, SC)),
    "normal-exp": (lambda: Normal(LOC, SC), Y, ExponentialKernel, lambda: _w2_normal(LOC, SC)),
    "laplace-exp": (lambda: Laplace(LOC, SC), Y, ExponentialKernel,
                    lambda: _w2_normal(LOC, SC, 2.0)),
    "laplace-gauss-mc": (lambda: Laplace(LOC, SC), Y, GaussianKernel,
                         lambda: _w2_normal(LOC, SC, 2.0)),
    "mvn-diag-gauss": (lambda: MultivariateNormal(M2, V2), Y2, GaussianKernel,
                       lambda: _w2_diag(M2, V2)),
    "mvn-diag-tv": (lambda: MultivariateNormal(M2, V2), Y2,
                    lambda ls: ExponentialKernel(ls, metric="tv"), lambda: _w2_diag(M2, V2)),
    "mvn-full-gauss": (lambda: MultivariateNormal(M2, _full_covs()), Y2, GaussianKernel, None),
    "mvn-rank1-gauss": (lambda: MultivariateNormal(M2, _rank_one_covs()), Y2, GaussianKernel,
                        None),
    "mixture-normal": (lambda: Mixture([0.3, 0.7], [Normal(LOC, SC), Normal(LOC + 1.0, 2.0 * SC)]),
                       Y, GaussianKernel, None),
    "mixture-laplace": (lambda: Mixture([0.4, 0.6], [Laplace(LOC, SC), Laplace(LOC - 1.0, SC)]),
                        Y, ExponentialKernel, None),
}


def _same_rows(P):
    """1 where two rows are the same prediction (the two constructions above: rows 0 and 1)."""
    n = P.n_samples
    S = np.eye(n)
    S[0, 1] = S[1, 0] = 1.0
    return S


def _pred_gram(case, P, w_scale):
    if w_scale == TINY:
        return _same_rows(P)
    if w_scale == HUGE:
        return np.ones((P.n_samples, P.n_samples))
    return np.exp(-CASES[case][3]() / w_scale)


def _same_targets(y):
    y = np.asarray(y)
    if y.ndim == 1:
        return (y[:, None] == y[None, :]).astype(float)
    return np.all(y[:, None, :] == y[None, :, :], axis=-1).astype(float)


def _estimates(H):
    """Brute-force unbiased, biased and block (B = 2) estimates from the full matrix of h_ij."""
    n = H.shape[0]
    off = ~np.eye(n, dtype=bool)
    return {"unbiased": H[off].mean(), "biased": H.mean(),
            "block": np.mean([H[i, i + 1] for i in range(0, n - 1, 2)])}


def _kernel(case, w_scale, y_scale):
    return tensor(WassersteinKernel(w_scale), CASES[case][2](y_scale))


# --------------------------------------------------------------------------------------------
# explicit limits of the SKCE


def _case_scales(cases):
    """(case, prediction length scale) pairs: the extremes for every case, ``l = 1`` where W2 has
    an independent formula here (Normal, Laplace, diagonal normals)."""
    return [(c, w) for c in cases for w in (TINY, 1.0, HUGE)
            if w != 1.0 or CASES[c][3] is not None]


@pytest.mark.filterwarnings("ignore::skcalib.kernels.KernelValidityWarning")
@pytest.mark.parametrize("case, w_scale", _case_scales(sorted(CASES)))
def test_target_scale_limits_match_brute_force(case, w_scale):
    make, y, _, _ = CASES[case]
    P = make()
    KP = _pred_gram(case, P, w_scale)
    # l_Y -> 0: h_ij = k_P(p_i, p_j) 1{y_i == y_j} (e1 = e2 = 0), h_ii = 1.
    H0 = KP * _same_targets(y)
    ref0 = _estimates(H0)
    for est in ESTIMATORS:
        got_small = skce(y, P, kernel=_kernel(case, w_scale, TINY), estimator=est,
                         random_state=0, n_mc_samples=20)
        assert got_small == pytest.approx(ref0[est], abs=1e-13), est
        # l_Y -> infinity: k_Y = e1 = e2 = 1, every h_ij = 0.
        got_large = skce(y, P, kernel=_kernel(case, w_scale, HUGE), estimator=est,
                         random_state=0, n_mc_samples=20)
        assert abs(got_large) <= 1e-12, est


@pytest.mark.filterwarnings("ignore::skcalib.kernels.KernelValidityWarning")
@pytest.mark.parametrize("case", sorted(CASES))
def test_target_scale_limits_agree_with_moderate_scales(case):
    # 1e-90 and 1e90 still use the rate formulas (gamma = 0.5 / l**2 in range): the scaled
    # formulas at 1e-300 / 1e300 must agree with them (the differences are O(1e-90)).
    make, y, _, _ = CASES[case]
    P = make()
    for est in ESTIMATORS:
        for extreme, moderate in [(TINY, 1e-90), (HUGE, 1e90), (1e-170, 1e-90), (1e170, 1e90)]:
            a = skce(y, P, kernel=_kernel(case, 1.0, extreme), estimator=est, random_state=0,
                     n_mc_samples=20)
            b = skce(y, P, kernel=_kernel(case, 1.0, moderate), estimator=est, random_state=0,
                     n_mc_samples=20)
            assert a == pytest.approx(b, abs=1e-13), (est, extreme)


def _normal_gauss_h(loc, sc, y, ls, KP):
    """Brute-force h_ij for Normal predictions and GaussianKernel(ls) (closed form written out)."""
    v = sc ** 2
    ky = np.exp(-0.5 * ((y[:, None] - y[None, :]) / ls) ** 2)
    e1 = ls / np.sqrt(ls ** 2 + v[:, None]) * np.exp(
        -0.5 * (loc[:, None] - y[None, :]) ** 2 / (ls ** 2 + v[:, None]))   # e1(p_i, y_j)
    vv = v[:, None] + v[None, :]
    e2 = ls / np.sqrt(ls ** 2 + vv) * np.exp(-0.5 * (loc[:, None] - loc[None, :]) ** 2
                                            / (ls ** 2 + vv))
    return KP * (ky - e1 - e1.T + e2)


@pytest.mark.parametrize("homoscedastic", [False, True])
@pytest.mark.parametrize("w_scale", [TINY, 1e-160, 1e160, HUGE])
def test_prediction_scale_limits_normal_gauss(w_scale, homoscedastic):
    # The colleagues' failures: the fused Normal x Gaussian sum at extreme prediction scales
    # (ZeroDivisionError for equal scales, invalid values in the strips).
    sc = np.ones_like(SC) if homoscedastic else SC
    P = Normal(LOC, sc)
    KP = _same_rows(P) if w_scale < 1 else np.ones((6, 6))
    ref = _estimates(_normal_gauss_h(LOC, sc, Y, 0.8, KP))
    for est in ESTIMATORS:
        got = skce(Y, P, kernel=tensor(WassersteinKernel(w_scale), GaussianKernel(0.8)),
                   estimator=est)
        assert got == pytest.approx(ref[est], rel=1e-12, abs=1e-15), est
        # and the fused path at moderate scales, where exp(-W2 / l) is already 0 or 1
        moderate = 1e-20 if w_scale < 1 else 1e20
        fused = skce(Y, P, kernel=tensor(WassersteinKernel(moderate), GaussianKernel(0.8)),
                     estimator=est)
        assert got == pytest.approx(fused, rel=1e-12, abs=1e-15), est


@pytest.mark.filterwarnings("ignore::skcalib.kernels.KernelValidityWarning")
@pytest.mark.parametrize("case", sorted(CASES))
def test_prediction_scale_limits_agree_with_moderate_scales(case):
    make, y, _, _ = CASES[case]
    P = make()
    for est in ESTIMATORS:
        for extreme, moderate in [(TINY, 1e-20), (HUGE, 1e20)]:
            a = skce(y, P, kernel=_kernel(case, extreme, 0.9), estimator=est, random_state=0,
                     n_mc_samples=20)
            b = skce(y, P, kernel=_kernel(case, moderate, 0.9), estimator=est, random_state=0,
                     n_mc_samples=20)
            assert np.isfinite(a)
            assert a == pytest.approx(b, rel=1e-12, abs=1e-15), (est, extreme)


def test_scale_equivariance_at_extreme_data_magnitudes():
    # Multiplying data and both length scales by a power of two changes nothing mathematically:
    # data of magnitude 1e+-180 and 1e+-270 (beyond the rate formulas' range) give the same SKCE.
    for make, TK in [(Normal, GaussianKernel), (Normal, ExponentialKernel),
                     (Laplace, ExponentialKernel)]:
        ref = {est: skce(Y, make(LOC, SC), kernel=tensor(WassersteinKernel(1.3), TK(0.7)),
                         estimator=est) for est in ESTIMATORS}
        for c in [2.0 ** -900, 2.0 ** -600, 2.0 ** 600, 2.0 ** 900]:
            for est in ESTIMATORS:
                got = skce(Y * c, make(LOC * c, SC * c),
                           kernel=tensor(WassersteinKernel(1.3 * c), TK(0.7 * c)), estimator=est)
                assert got == pytest.approx(ref[est], rel=1e-12), (make, TK, c, est)


def test_robust_formulas_match_rate_formulas_at_ordinary_scales(monkeypatch):
    # Forcing the scaled formulas everywhere reproduces the (separately tested) rate formulas.
    rng = np.random.default_rng(3)
    n = 9
    loc, sc, y = rng.normal(size=n), rng.uniform(0.3, 2.0, n), rng.normal(size=n)
    m2, y2 = rng.normal(size=(n, 2)), rng.normal(size=(n, 2))
    X = rng.normal(size=(n, 2, 2))
    C = X @ X.transpose(0, 2, 1) + 0.1 * np.eye(2)
    cases = [
        (Normal(loc, sc), y, GaussianKernel(0.7)),
        (Normal(loc, sc), y, ExponentialKernel(0.7)),
        (Normal(loc, np.ones(n)), y, GaussianKernel(1.3)),
        (Laplace(loc, sc), y, ExponentialKernel(0.7)),
        (Laplace(loc, np.ones(n)), y, ExponentialKernel(1.0)),     # beta gamma = 1 cases
        (MultivariateNormal(m2, sc[:, None] * [1.0, 0.5]), y2, GaussianKernel(0.9)),
        (MultivariateNormal(m2, sc[:, None] * [1.0, 0.5]), y2, ExponentialKernel(0.9, metric="tv")),
        (MultivariateNormal(m2, C), y2, GaussianKernel(0.9)),
        (Mixture([0.5, 0.5], [Normal(loc, sc), Normal(-loc, 1.0)]), y, GaussianKernel(0.6)),
        (Mixture([0.5, 0.5], [Laplace(loc, sc), Laplace(-loc, 1.0)]), y, ExponentialKernel(0.6)),
    ]
    def values():
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for P, yy, tk in cases:
                k = tensor(WassersteinKernel(1.1), tk)
                out += [skce(yy, P, kernel=k, estimator=est) for est in ESTIMATORS]
                tp = P[np.arange(3)]
                out.append(ucme(yy, P, kernel=k, test_predictions=tp, test_targets=yy[:3]))
        return np.array(out)

    rate = values()
    monkeypatch.setattr(_expectations, "_SAFE_SCALES", (np.inf, np.inf))
    scaled = values()
    np.testing.assert_allclose(scaled, rate, rtol=1e-10, atol=1e-14)


# --------------------------------------------------------------------------------------------
# UCME


@pytest.mark.filterwarnings("ignore::skcalib.kernels.KernelValidityWarning")
@pytest.mark.parametrize("case, w_scale", _case_scales(
    ["normal-gauss", "normal-exp", "laplace-exp", "mvn-diag-gauss", "mvn-full-gauss",
     "mixture-normal", "mixture-laplace"]))
def test_ucme_target_scale_limits(case, w_scale):
    make, y, _, _ = CASES[case]
    P = make()
    J = [0, 3, 5]
    tP, tY = P[np.array(J)], np.asarray(y)[[0, 3, 2]]
    KP = _pred_gram(case, P, w_scale)[:, J]              # k_P(p_i, t_j): t_j is row J[j]
    same = _same_targets(np.concatenate([np.asarray(y), tY]))[:6, 6:]
    W = KP * same                                         # l_Y -> 0: k_Y = 1{y_i == t_j}, e1 = 0
    ref = float(np.mean(W.mean(axis=0) ** 2))
    got = ucme(y, P, kernel=_kernel(case, w_scale, TINY), test_predictions=tP, test_targets=tY)
    assert got == pytest.approx(ref, abs=1e-13)
    got = ucme(y, P, kernel=_kernel(case, w_scale, HUGE), test_predictions=tP, test_targets=tY)
    assert abs(got) <= 1e-24                             # l_Y -> infinity: every witness is 0


# --------------------------------------------------------------------------------------------
# closed forms


def _quad_gauss_abs(d, s, g):
    f = lambda w: np.exp(-g * abs(w)) * stats.norm.pdf(w, d, s)  # noqa: E731
    cuts = [-np.inf, -40.0 / g, 0.0, 40.0 / g, np.inf]
    return sum(integrate.quad(f, a, b, epsabs=0, epsrel=1e-13, limit=500)[0]
               for a, b in zip(cuts[:-1], cuts[1:]))


@pytest.mark.parametrize("d, s, g", [(0.3, 1.0, 1000.0), (-1.0, 0.7, 1000.0), (0.1, 10.0, 5.0),
                                     (2.0, 3.9, 8.0)])
def test_gauss_abs_mgf_accurate_for_large_gamma_s(d, s, g):
    # gamma * s >= 30: the log-Phi form lost (gamma s)^2 eps (5e-11 at 1000); overflowed at 1e8.
    ref = _quad_gauss_abs(d, s, g)
    assert _gauss_abs_mgf(np.array([d]), np.array([s]), g)[0] == pytest.approx(ref, rel=1e-13)
    assert _gauss_abs_mgf_scaled(d, s, 1.0 / g) == pytest.approx(ref, rel=1e-13)


def test_gauss_abs_mgf_scaled_limits_and_agreement():
    d = np.array([-3.0, -0.4, 0.0, 0.2, 1.5, 4.0])
    s = np.array([1.5, 1.0, 2.0, 0.3, 1.1, 0.0])
    for g in [0.3, 1.0, 4.0]:
        np.testing.assert_allclose(_gauss_abs_mgf_scaled(d, s, 1.0 / g), _gauss_abs_mgf(d, s, g),
                                   rtol=1e-13)
    # unit -> 0: 2 u * density of W at 0 (u = 1e-300: exact in floating point); point mass: 0.
    u = TINY
    got = _gauss_abs_mgf_scaled(d, s, u)
    pos = s > 0
    np.testing.assert_allclose(got[pos], 2.0 * u * stats.norm.pdf(0.0, d[pos], s[pos]),
                               rtol=1e-12)
    assert got[~pos] == 0.0
    # unit -> infinity: 1
    np.testing.assert_allclose(_gauss_abs_mgf_scaled(d, s, HUGE), 1.0, rtol=1e-15)


def test_gauss_log_e_scaled_limits_and_agreement():
    d = np.array([-3.0, -0.4, 0.0, 0.2, 1.5])
    s = np.array([0.5, 1.0, 2.0, 0.3, 1.1])
    for ls in [0.2, 1.0, 7.0]:
        np.testing.assert_allclose(_gauss_log_e_scaled(d, s, ls),
                                   normal_gauss_log_e1(d, s ** 2, 0.0, 0.5 / ls ** 2), rtol=1e-13)
    # l -> 0: l * sqrt(2 pi) * N(0; d, s^2); l -> infinity: log e = 0.
    np.testing.assert_allclose(_gauss_log_e_scaled(d, s, TINY),
                               math.log(TINY * math.sqrt(2 * math.pi)) + stats.norm.logpdf(0, d, s),
                               rtol=1e-14)
    assert np.all(_gauss_log_e_scaled(d, s, HUGE) == 0.0)
    # point mass, tiny l: 1{d == 0}
    np.testing.assert_array_equal(np.exp(_gauss_log_e_scaled(d, 0.0, TINY)), d == 0)


def test_laplace_scaled_forms_agree_and_have_limits():
    m1 = np.array([0.0, 0.3, -1.0, 2.0, 0.5, 0.5])
    b1 = np.array([1.0, 0.5, 2.0, 0.7, 1.3, 1.3])
    m2 = np.array([0.1, 0.3, 1.0, -2.0, 0.5, 0.4])
    b2 = np.array([1.0, 0.9, 2.0 * (1 + 1e-8), 0.2, 1.3, 0.4])
    for g in [0.5, 1.0, 1 / 1.3, 3.0]:
        np.testing.assert_allclose(_laplace_e1_scaled(m1, b1, m2, 1 / g),
                                   laplace_e1(m1, b1, m2, g), rtol=1e-13)
        np.testing.assert_allclose(_laplace_e2_scaled(m1, b1, m2, b2, 1 / g),
                                   laplace_e2(m1, b1, m2, b2, g), rtol=1e-10)
    # unit -> 0: e1 = 2u f(y) = (u / b) exp(-|y - m| / b); e2 = 2u int f1 f2 (quadrature).
    u = TINY
    np.testing.assert_allclose(_laplace_e1_scaled(m1, b1, m2, u),
                               u / b1 * np.exp(-np.abs(m2 - m1) / b1), rtol=1e-12)
    overlap = [integrate.quad(lambda z: stats.laplace.pdf(z, a, p) * stats.laplace.pdf(z, c, q),
                              -np.inf, np.inf, points=None, epsabs=0, epsrel=1e-12, limit=200)[0]
               for a, p, c, q in zip(m1, b1, m2, b2)]
    np.testing.assert_allclose(_laplace_e2_scaled(m1, b1, m2, b2, u), 2 * u * np.array(overlap),
                               rtol=1e-9)
    # unit -> infinity: 1
    np.testing.assert_allclose(_laplace_e1_scaled(m1, b1, m2, HUGE), 1.0, rtol=1e-15)
    np.testing.assert_allclose(_laplace_e2_scaled(m1, b1, m2, b2, HUGE), 1.0, rtol=1e-12)


def test_full_covariance_scaled_log_e_matches_densities():
    # l -> 0: e1 = (2 pi)^(d/2) l^d N(y; m, S) for positive definite S.
    C = _full_covs()
    P = MultivariateNormal(M2, C)
    for ls in [TINY, 1e-150]:
        got = P.expected_kernel(GaussianKernel(ls), Y2)
        ref = np.array([(2 * np.pi) * ls ** 2 * stats.multivariate_normal.pdf(Y2[i], M2[i], C[i])
                        if ls > 1e-200 else 0.0 for i in range(6)])
        if ls == TINY:
            assert np.all(got >= 0) and np.all(got <= 1e-290)
            logs = _FullNormalGaussOps(P, Y2, _expectations._TargetKernel(
                GaussianKernel(ls), True))._log_e(M2 - Y2, C)
            logref = [2 * math.log(ls) + math.log(2 * np.pi)
                      + stats.multivariate_normal.logpdf(Y2[i], M2[i], C[i]) for i in range(6)]
            np.testing.assert_allclose(logs, logref, rtol=1e-13)
        else:
            np.testing.assert_allclose(got, ref, rtol=1e-12)


@pytest.mark.filterwarnings("ignore::skcalib.kernels.KernelValidityWarning")
def test_singular_covariance_small_length_scale():
    # I + 2g S with a rank-one S and l = 1e-60 is indefinite after rounding (LinAlgError before);
    # the limit: e1 -> 0 off the covariance's range.
    P = MultivariateNormal(M2, _rank_one_covs())
    ref = _estimates(_same_rows(P) * _same_targets(Y2))
    for ls in [1e-60, 1e-120, TINY]:
        for est in ESTIMATORS:
            got = skce(Y2, P, kernel=tensor(WassersteinKernel(TINY), GaussianKernel(ls)),
                       estimator=est)
            assert got == pytest.approx(ref[est], abs=1e-13), (ls, est)


def test_high_dimensional_diagonal_normal_small_length_scale():
    # e2's running product of (1 + 2g(v + v')) over 32 coordinates overflowed for l = 1e-5.
    rng = np.random.default_rng(4)
    n, d = 6, 40
    m, v = rng.normal(size=(n, d)), rng.uniform(0.5, 2.0, (n, d))
    y = rng.normal(size=(n, d))
    m[1], v[1], y[1] = m[0], v[0], y[0]
    P = MultivariateNormal(m, v)
    ref = _estimates(_same_rows(P) * _same_targets(y))     # e1, e2 < 1e-150: the l -> 0 limit
    for est in ESTIMATORS:
        got = skce(y, P, kernel=tensor(WassersteinKernel(TINY), GaussianKernel(1e-5)),
                   estimator=est)
        assert got == pytest.approx(ref[est], abs=1e-13), est


def test_tiny_wasserstein_exponent():
    # exponent 1e-4: log2(e)**(1/exponent) overflowed in the fused sum's set-up.
    nu = 1e-4
    KP = np.exp(-(_w2_normal(LOC, SC) / 2.0) ** nu)
    np.fill_diagonal(KP, 1.0)
    ref = _estimates(_normal_gauss_h(LOC, SC, Y, 0.8, KP))
    for est in ESTIMATORS:
        got = skce(Y, Normal(LOC, SC), kernel=tensor(WassersteinKernel(2.0, exponent=nu),
                                                     GaussianKernel(0.8)), estimator=est)
        assert got == pytest.approx(ref[est], rel=1e-12, abs=1e-15), est
