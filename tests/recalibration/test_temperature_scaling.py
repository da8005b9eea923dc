"""Mathematics and statistics of temperature scaling (skcalib.recalibration, Appendix F of the
seed-000 specification, §5).

Every number is checked against something computed independently of the library:

* the classifier NLL written with ``scipy.special.log_softmax`` / ``np.logaddexp``, minimised by
  ``scipy.optimize.minimize_scalar`` and by a plain bisection on its analytic derivative (written
  here from ``scipy.special.softmax``);
* the exact sampling laws of the closed-form temperatures (``n T_hat / T0`` is chi-square or gamma
  distributed when the model is correct up to the temperature) and, for classifiers, the Fisher
  information of the inverse temperature;
* ``scipy.stats`` densities (norm, laplace, multivariate_normal) for every log-density and for the
  mixture NLL;
* Definition F.1 itself (``q proportional to p**(1/T)``), checked pointwise on grids;
* scikit-learn's own ``_TemperatureScaling`` (a different optimiser and binary convention);
* the SKCE and the binned ECE on held-out data for the recalibration effect.
"""

import math
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, optimize, special, stats

from skcalib import calibration_error, skce
from skcalib.distributions import Categorical, Laplace, Mixture, MultivariateNormal, Normal
from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor
from skcalib.recalibration import DistributionTemperatureScaling, TemperatureScaling

# ============================================================================================
# independent reference machinery (no library code)


def draw_labels(rng, L):
    """One label per row, drawn from ``softmax(L)`` (inverse-CDF sampling)."""
    P = special.softmax(L, axis=1)
    idx = (rng.random((L.shape[0], 1)) > np.cumsum(P, axis=1)).sum(axis=1)
    return np.minimum(idx, L.shape[1] - 1)


def draw_binary(rng, z):
    """Bernoulli labels with ``P(y = 1) = sigmoid(z)``."""
    return (rng.random(z.shape) < special.expit(z)).astype(int)


class RefNLL:
    """Weighted mean NLL of ``softmax(beta * L)`` (2-D logits ``L``) or of ``sigmoid(beta * z)``
    (1-D log-odds ``z``, labels 0/1), and its derivative in ``beta``, written from scratch.

    Sums are taken with ``math.fsum`` so that the reference has no summation noise of its own.
    """

    def __init__(self, X, y, w=None):
        self.X = np.asarray(X, dtype=np.float64)
        self.y = np.asarray(y)
        n = self.X.shape[0]
        self.w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
        self.W = math.fsum(self.w)
        self.rows = np.arange(n)
        if self.X.ndim == 1:
            self.sign = 2.0 * self.y - 1.0  # +1 for label 1, -1 for label 0

    def _mean(self, terms):
        return math.fsum(self.w * terms) / self.W

    def __call__(self, beta):
        if self.X.ndim == 1:
            terms = np.logaddexp(0.0, -self.sign * beta * self.X)  # -log sigmoid(s beta z)
        else:
            terms = -special.log_softmax(beta * self.X, axis=1)[self.rows, self.y]
        return self._mean(terms)

    def grad(self, beta):
        if self.X.ndim == 1:
            # d/dbeta log(1 + exp(-s beta z)) = -s z sigmoid(-s beta z)
            terms = -self.sign * self.X * special.expit(-self.sign * beta * self.X)
        else:
            P = special.softmax(beta * self.X, axis=1)
            terms = (P * self.X).sum(axis=1) - self.X[self.rows, self.y]
        return self._mean(terms)


def bisect_root(g, start=1.0, steps=200):
    """Root of an increasing function ``g`` on ``(0, inf)``: bracket by doubling/halving from
    ``start``, then up to ``steps`` bisection steps (stopping when the bracket is two adjacent
    floats)."""
    lo = hi = float(start)
    for _ in range(400):
        if g(hi) > 0:
            break
        hi *= 2.0
    else:
        raise AssertionError("no upper bracket")
    for _ in range(400):
        if g(lo) < 0:
            break
        lo *= 0.5
    else:
        raise AssertionError("no lower bracket")
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        gm = g(mid)
        if gm < 0:
            lo = mid
        elif gm > 0:
            hi = mid
        else:
            return mid
    return 0.5 * (lo + hi)


def scipy_log_beta_minimum(f, center, half_width=math.log(100.0)):
    """``beta`` minimising ``f`` by bounded Brent on ``log beta`` with a very tight ``xatol``."""
    u0 = math.log(center)
    res = optimize.minimize_scalar(lambda u: f(math.exp(u)), method="bounded",
                                   bounds=(u0 - half_width, u0 + half_width),
                                   options={"xatol": 1e-14, "maxiter": 2000})
    assert res.success
    return math.exp(res.x)


def has_finite_optimum(X, y):
    """NLL'(0) < 0 (the scores are informative) and NLL'(inf) > 0 (some label is not the
    arg-max): the conditions for a finite positive inverse temperature."""
    L = np.column_stack([np.zeros_like(X), X]) if X.ndim == 1 else X
    rows = np.arange(L.shape[0])
    g0 = np.mean(L.mean(axis=1) - L[rows, y])
    ginf = np.mean(L.max(axis=1) - L[rows, y])
    return g0 < 0 < ginf


def classification_data(kind, n, seed, scale=2.0, T0=1.5):
    """Scores ``X`` and labels ``y`` with a finite NLL optimum near ``T0``.

    kind: ``"bin1d"`` (log-odds), ``"bin2col"`` (two logit columns) or an int ``C`` (C columns).
    """
    for s in range(seed, seed + 1000):
        rng = np.random.default_rng(s)
        if kind == "bin1d":
            X = scale * rng.normal(size=n)
            y = draw_binary(rng, X / T0)
        else:
            C = 2 if kind == "bin2col" else int(kind)
            X = scale * (rng.normal(size=(n, C)) + rng.normal(size=(n, 1)))  # row offsets too
            y = draw_labels(rng, X / T0)
        if has_finite_optimum(X, y) and (kind == "bin1d" or len(np.unique(y)) == X.shape[1]
                                         or n < X.shape[1]):
            return X, y
    raise AssertionError("no data with a finite optimum")


def fit_ts(X, y, **kw):
    """TemperatureScaling on logits, with every warning an error."""
    C = 2 if X.ndim == 1 else X.shape[1]
    kw.setdefault("labels", np.arange(C))
    sw = kw.pop("sample_weight", None)
    inp = kw.pop("input", "logits")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return TemperatureScaling(inp, **kw).fit(X, y, sample_weight=sw)


# ============================================================================================
# 1. the NLL optimum of TemperatureScaling agrees with independent minimisations

KINDS = ["bin1d", "bin2col", 3, 10, 100]

# Large fits exceed 4 * 4096 rows, so that the subsample warm start of _problems.temperature is used; more
# classes use fewer rows to keep the independent references fast. Weights are combined with every
# kind at n = 5 and with two kinds at large n.
LARGE_N = {"bin1d": 50_000, "bin2col": 50_000, 3: 50_000, 10: 20_000, 100: 17_000}
NLL_CASES = ([(kind, 5, weighted) for kind in KINDS for weighted in (False, True)]
             + [(kind, LARGE_N[kind], False) for kind in KINDS]
             + [(kind, LARGE_N[kind], True) for kind in ("bin1d", 3)])


@pytest.mark.parametrize(
    "kind, n, weighted", NLL_CASES,
    ids=[f"{k}-n{n}-{'weighted' if w else 'unweighted'}" for k, n, w in NLL_CASES])
def test_nll_optimum_matches_independent_minimisation(kind, n, weighted):
    X, y = classification_data(kind, n, seed=11)
    w = np.random.default_rng(3).uniform(0.1, 3.0, size=n) if weighted else None
    ts = fit_ts(X, y, sample_weight=w)
    ref = RefNLL(X, y, w)
    beta_bisect = bisect_root(ref.grad)
    beta_scipy = scipy_log_beta_minimum(ref, beta_bisect)

    assert_allclose(ts.inverse_temperature_, beta_bisect, rtol=1e-10)
    assert_allclose(ts.temperature_ * ts.inverse_temperature_, 1.0, rtol=1e-15)
    nll_ours, nll_scipy = ref(ts.inverse_temperature_), ref(beta_scipy)
    assert nll_ours <= nll_scipy + 1e-14 * abs(nll_scipy)


@pytest.mark.parametrize("n", [200, 20_000])
@pytest.mark.parametrize("kind", ["bin1d", 4])
def test_integer_weights_equal_row_duplication(kind, n):
    X, y = classification_data(kind, n, seed=5)
    w = np.random.default_rng(7).integers(0, 4, size=n)  # zeros drop rows
    weighted = fit_ts(X, y, sample_weight=w)
    duplicated = fit_ts(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert_allclose(weighted.inverse_temperature_, duplicated.inverse_temperature_, rtol=1e-12)
    # and the weighted fit is the optimum of the weighted independent objective
    assert_allclose(weighted.inverse_temperature_, bisect_root(RefNLL(X, y, w).grad), rtol=1e-10)


def test_zero_weights_on_the_warm_start_subsample():
    # n = 20000 -> the warm start uses rows 0, 4, 8, ...; weight 0 on every even row.
    X, y = classification_data(3, 20_000, seed=2)
    w = (np.arange(X.shape[0]) % 2 == 1).astype(float)
    weighted = fit_ts(X, y, sample_weight=w)  # no RuntimeWarning (an error under this config)
    kept = fit_ts(X[1::2], y[1::2])
    assert_allclose(weighted.inverse_temperature_, kept.inverse_temperature_, rtol=1e-12)


# ============================================================================================
# 2. extreme inputs


@pytest.mark.parametrize("kind", ["bin1d", 4])
@pytest.mark.parametrize("scale", [1e3, 1e-8])
def test_extreme_logit_magnitudes(kind, scale):
    # labels drawn from softmax(L / scale): the optimum temperature is about `scale`.
    X, y = classification_data(kind, 500, seed=1, scale=scale, T0=scale)
    ts = fit_ts(X, y)
    beta_ref = bisect_root(RefNLL(X, y).grad, start=1.0 / scale)
    assert_allclose(ts.inverse_temperature_, beta_ref, rtol=1e-10)
    assert 0.2 * scale < ts.temperature_ < 5.0 * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        P = ts.predict_proba(X)
        logP = ts.predict_log_proba(X)
        D = ts.decision_function(X)
    assert np.all(np.isfinite(P)) and np.all(np.isfinite(logP)) and np.all(np.isfinite(D))
    assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    L = np.column_stack([np.zeros_like(X), X]) if X.ndim == 1 else X
    assert_allclose(logP, special.log_softmax(L * ts.inverse_temperature_, axis=1),
                    rtol=1e-12, atol=1e-300)
    assert_allclose(P, special.softmax(L * ts.inverse_temperature_, axis=1), rtol=1e-12,
                    atol=1e-300)


def _proba_with_zeros_and_ones(rng, n, C):
    """Probabilities with exact zeros, exact one-hot rows, and labels sometimes on a zero."""
    L = 3.0 * rng.normal(size=(n, C))
    y = draw_labels(rng, L / 2.0)  # truth less confident than the predictions
    P = special.softmax(L, axis=1)
    P[P < 0.05] = 0.0  # exact zeros
    P[: n // 10] = np.eye(C)[P[: n // 10].argmax(axis=1)]  # exact ones
    P /= P.sum(axis=1, keepdims=True)
    return P, y


@pytest.mark.parametrize("eps", [1e-12, 1e-4])
@pytest.mark.parametrize("C", [1, 4])
def test_probabilities_with_exact_zeros_and_ones(C, eps):
    rng = np.random.default_rng(2)
    P, y = _proba_with_zeros_and_ones(rng, 600, 2 if C == 1 else C)
    X = P[:, 1] if C == 1 else P
    assert np.any(X == 0.0) and np.any(X == 1.0)
    assert np.any(P[np.arange(len(y)), y] == 0.0)  # some labels have predicted probability 0
    ts = fit_ts(X, y, input="proba", eps=eps)
    # the same clipped objective, built independently
    Pc = np.column_stack([1.0 - X, X]) if C == 1 else X
    L = np.log(np.clip(Pc, eps, 1.0))
    ref = RefNLL(L, y)
    beta_ref = bisect_root(ref.grad)
    assert_allclose(ts.inverse_temperature_, beta_ref, rtol=1e-10)
    assert ref(ts.inverse_temperature_) <= ref(scipy_log_beta_minimum(ref, beta_ref)) * (1 + 1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Q = ts.predict_proba(X)
    assert np.all(np.isfinite(Q)) and np.all(Q > 0)
    assert_allclose(Q, special.softmax(L * ts.inverse_temperature_, axis=1), rtol=1e-12)


# ============================================================================================
# 3. the arg-max is preserved


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("T0", [0.02, 1.0, 50.0])
@pytest.mark.parametrize("kind", ["bin1d", 5])
def test_argmax_preserved(kind, T0, seed):
    X, y = classification_data(kind, 400, seed=100 * seed, scale=T0, T0=T0)
    classes = np.array(["a", "b"] if kind == "bin1d" else ["a", "b", "c", "d", "e"])
    ts = fit_ts(X, classes[y], labels=classes)
    if T0 != 1.0:  # fitted temperatures far from 1
        assert ts.temperature_ > 10 or ts.temperature_ < 0.1
    top = (X > 0).astype(int) if X.ndim == 1 else X.argmax(axis=1)
    assert_array_equal(ts.predict(X), classes[top])
    P = ts.predict_proba(X)
    srt = np.sort(P, axis=1)
    untied = srt[:, -1] > srt[:, -2]
    assert untied.mean() > 0.9
    assert_array_equal(P.argmax(axis=1)[untied], top[untied])
    D = ts.decision_function(X)
    if X.ndim == 1:
        assert_array_equal(np.sign(D), np.sign(X))
    else:
        assert_array_equal(D.argmax(axis=1), top)


def test_shift_invariance_and_scale_equivariance():
    """softmax is invariant to per-row shifts of the logits, and fitting ``a * L`` gives the
    temperature ``a * T``: independent facts that the solver must reproduce."""
    X, y = classification_data(6, 3000, seed=4)
    T = fit_ts(X, y).temperature_
    shift = np.random.default_rng(0).normal(scale=100.0, size=(X.shape[0], 1))
    assert_allclose(fit_ts(X + shift, y).temperature_, T, rtol=1e-10)
    for a in (1e-3, 7.0, 1e4):
        assert_allclose(fit_ts(a * X, y).temperature_, a * T, rtol=1e-10)


def test_binary_encodings_agree():
    z, y = classification_data("bin1d", 2000, seed=8)
    T = fit_ts(z, y).temperature_
    # two columns (0, z) and the antisymmetric (-z/2, z/2) give the same log-odds
    assert_allclose(fit_ts(np.column_stack([np.zeros_like(z), z]), y).temperature_, T, rtol=1e-12)
    assert_allclose(fit_ts(np.column_stack([-z / 2, z / 2]), y).temperature_, T, rtol=1e-10)
    # probabilities: one column p and two columns (1 - p, p)
    p = special.expit(z)
    Tp = fit_ts(p, y, input="proba").temperature_
    assert_allclose(fit_ts(np.column_stack([1 - p, p]), y, input="proba").temperature_, Tp,
                    rtol=1e-12)


@pytest.mark.parametrize("kind", ["bin1d", 4])
def test_agrees_with_scikit_learn_temperature_scaling(kind):
    """scikit-learn >= 1.8 minimises the same NLL with bounded Brent on log beta (to about
    sqrt(eps) in beta); its binary logits are (-z, z), so its beta_ is half of ours."""
    sk_calibration = pytest.importorskip("sklearn.calibration")
    if not hasattr(sk_calibration, "_TemperatureScaling"):
        pytest.skip("scikit-learn without temperature scaling")
    X, y = classification_data(kind, 3000, seed=9)
    ts = fit_ts(X, y)
    sk = sk_calibration._TemperatureScaling().fit(X, y)
    factor = 2.0 if X.ndim == 1 else 1.0
    assert_allclose(ts.inverse_temperature_, factor * float(sk.beta_), rtol=1e-6)
    assert_allclose(ts.predict_proba(X), sk.predict(X), atol=1e-6)


# ============================================================================================
# 4. recovery of a known temperature


@pytest.mark.parametrize("T0", [0.5, 2.0, 3.0])
@pytest.mark.parametrize("kind", ["bin1d", 5])
def test_classifier_temperature_recovery(kind, T0):
    """Labels drawn from ``softmax(L / T0)``: the MLE of ``beta = 1 / T`` has asymptotic standard
    deviation ``1 / sqrt(n I)`` with the Fisher information ``I = mean_i Var_i[l]`` (variance of
    the logits under the true probabilities); ``T_hat / T0 - 1`` has the same relative sd.

    At n = 20000 that sd is 0.9-1.9 % (binary is the least informative), so a 3-5 % band would be
    only 2-3 sd; with n = 80000 a 4.5-sd band (two-sided tail 7e-6) is below 5 %."""
    n = 80_000
    rng = np.random.default_rng(int(10 * T0))
    if kind == "bin1d":
        X = 3.0 * rng.normal(size=n)
        y = draw_binary(rng, X / T0)
        p = special.expit(X / T0)
        info = np.mean(X * X * p * (1 - p))
    else:
        X = 3.0 * rng.normal(size=(n, kind))
        y = draw_labels(rng, X / T0)
        P = special.softmax(X / T0, axis=1)
        info = np.mean((P * X * X).sum(axis=1) - (P * X).sum(axis=1) ** 2)
    rel_sd = (1.0 / math.sqrt(n * info)) * T0  # sd(beta_hat) / beta0
    assert 4.5 * rel_sd < 0.05
    T_hat = fit_ts(X, y).temperature_
    assert abs(T_hat / T0 - 1.0) < 4.5 * rel_sd


def _random_spd(rng, n, d):
    A = rng.normal(size=(n, d, d))
    return A @ np.swapaxes(A, 1, 2) + 0.3 * np.eye(d)


def regression_case(family, n, T0, seed):
    """Predictions ``dist``, targets ``y`` drawn from ``dist.tempered(T0)`` (by hand), and the
    exact law of ``n * d * T_hat / T0`` (``k`` degrees of freedom / gamma shape)."""
    rng = np.random.default_rng(seed)
    m = rng.normal(scale=3.0, size=n)
    if family == "normal":
        s = rng.uniform(0.2, 2.0, size=n)
        y = m + math.sqrt(T0) * s * rng.normal(size=n)
        return Normal(m, s), y, stats.chi2(n)
    if family == "laplace":
        b = rng.uniform(0.2, 2.0, size=n)
        y = m + T0 * b * rng.laplace(size=n)
        return Laplace(m, b), y, stats.gamma(n)
    d = 3
    M = rng.normal(scale=3.0, size=(n, d))
    E = rng.normal(size=(n, d))
    if family == "mvn_full":
        S = _random_spd(rng, n, d)
        y = M + math.sqrt(T0) * np.einsum("nij,nj->ni", np.linalg.cholesky(S), E)
    elif family == "mvn_diag":
        S = rng.uniform(0.2, 3.0, size=(n, d))
        y = M + math.sqrt(T0) * np.sqrt(S) * E
    else:
        S = rng.uniform(0.2, 3.0, size=n)
        y = M + math.sqrt(T0) * np.sqrt(S)[:, None] * E
    return MultivariateNormal(M, S), y, stats.chi2(n * d)


def hand_statistic(dist, y):
    """Per-row ``(y - m)^2 / s^2``, Mahalanobis^2 / d or ``|y - m| / b``: the closed-form
    temperature is their (weighted) mean."""
    if isinstance(dist, Normal):
        return ((y - dist.loc) / dist.scale) ** 2
    if isinstance(dist, Laplace):
        return np.abs(y - dist.loc) / dist.scale
    r = y - dist.mean
    S = dist.full_covariance()
    return np.einsum("ni,ni->n", r, np.linalg.solve(S, r[:, :, None])[:, :, 0]) / dist.dim


FAMILIES = ["normal", "laplace", "mvn_full", "mvn_diag", "mvn_spherical"]


@pytest.mark.parametrize("T0", [0.3, 2.5])
@pytest.mark.parametrize("family", FAMILIES)
def test_distribution_temperature_recovery(family, T0):
    """If the model is right up to the temperature, ``n d T_hat / T0`` is exactly chi-square(nd)
    (normal families) or gamma(n) (Laplace: ``|y - m| / (T0 b)`` is Exp(1)); the test accepts the
    central 1 - 2e-4 of that law."""
    n = 2000
    dist, y, law = regression_case(family, n, T0, seed=int(100 * T0))
    ts = DistributionTemperatureScaling().fit(dist, y)
    k = n * (dist.dim or 1) if family != "laplace" else n
    stat = k * ts.temperature_ / T0
    assert law.ppf(1e-4) < stat < law.ppf(1 - 1e-4)
    assert_allclose(ts.temperature_, np.mean(hand_statistic(dist, y)), rtol=1e-12)
    assert ts.family_ == type(dist).__name__


@pytest.mark.parametrize("family", FAMILIES)
def test_weighted_closed_form(family):
    dist, y, _ = regression_case(family, 500, 1.7, seed=3)
    w = np.random.default_rng(1).uniform(0.0, 2.0, size=500)
    T = DistributionTemperatureScaling().fit(dist, y, sample_weight=w).temperature_
    stat = hand_statistic(dist, y)
    assert_allclose(T, math.fsum(w * stat) / math.fsum(w), rtol=1e-12)
    # integer weights are row duplication
    wi = np.random.default_rng(2).integers(0, 4, size=500)
    rows = np.repeat(np.arange(500), wi)
    T_dup = DistributionTemperatureScaling().fit(dist[rows], y[rows]).temperature_
    assert_allclose(DistributionTemperatureScaling().fit(dist, y, sample_weight=wi).temperature_,
                    T_dup, rtol=1e-12)


def test_array_input_is_a_normal():
    dist, y, _ = regression_case("normal", 300, 2.0, seed=5)
    A = np.column_stack([dist.loc, dist.scale])
    ts_arr = DistributionTemperatureScaling().fit(A, y)
    ts_dist = DistributionTemperatureScaling().fit(dist, y)
    assert ts_arr.temperature_ == ts_dist.temperature_
    out = ts_arr.transform(A)
    assert_allclose(out, np.column_stack([dist.loc, dist.scale * math.sqrt(ts_arr.temperature_)]),
                    rtol=1e-15)
    mean, std = ts_arr.predict(A, return_std=True)
    assert_array_equal(mean, dist.loc)
    assert_allclose(std, out[:, 1], rtol=1e-15)
    # score is the mean log-density of the tempered predictions
    T = ts_arr.temperature_
    assert_allclose(ts_arr.score(A, y),
                    np.mean(stats.norm.logpdf(y, dist.loc, dist.scale * math.sqrt(T))), rtol=1e-13)


# ============================================================================================
# 5. the closed form is the NLL optimum; log_pdf against scipy.stats


def _nll_of_log_t(dist, y, w=None):
    def f(u):
        return -float(np.average(dist.tempered(math.exp(u)).log_pdf(y), weights=w))
    return f


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("family", FAMILIES)
def test_closed_form_minimises_tempered_log_pdf(family, weighted):
    dist, y, _ = regression_case(family, 400, 1.8, seed=6)
    w = np.random.default_rng(0).uniform(0.0, 2.0, size=400) if weighted else None
    T = DistributionTemperatureScaling().fit(dist, y, sample_weight=w).temperature_
    f = _nll_of_log_t(dist, y, w)
    u = math.log(T)
    # (a) bounded Brent on the log_pdf path. A minimiser of a smooth function is determined only
    # to about sqrt(eps |f| / f'') ~ 3e-8 in log T (f'' = d/2 or 1 here), hence 2e-7.
    res = optimize.minimize_scalar(f, method="bounded", bounds=(u - 1.0, u + 1.0),
                                   options={"xatol": 1e-13, "maxiter": 1000})
    assert_allclose(res.x, u, rtol=0, atol=2e-7)
    assert f(u) <= res.fun + 1e-14 * abs(res.fun)
    # (b) the stationarity of f at log T, to 1e-9: a central difference (truncation ~ d^2 f'''/6
    # ~ 1e-11, rounding ~ eps |f| / d ~ 1e-10) divided by the curvature is the Newton distance
    # of log T to the minimiser of f.
    d1, d2 = 1e-5, 1e-3
    fp = (f(u + d1) - f(u - d1)) / (2 * d1)
    fpp = (f(u + d2) - 2 * f(u) + f(u - d2)) / d2 ** 2
    assert fpp > 0
    assert abs(fp / fpp) < 1e-9


def test_log_pdf_against_scipy_stats():
    rng = np.random.default_rng(0)
    n = 6
    m, s, y = rng.normal(size=n), rng.uniform(0.1, 3.0, size=n), rng.normal(scale=3, size=n)
    assert_allclose(Normal(m, s).log_pdf(y), stats.norm.logpdf(y, m, s), rtol=1e-13)
    assert_allclose(Laplace(m, s).log_pdf(y), stats.laplace.logpdf(y, m, s), rtol=1e-13)
    # Normal with a point prediction row: +inf at the point, -inf elsewhere
    assert_array_equal(Normal([0.0, 0.0], [0.0, 0.0]).log_pdf([0.0, 1.0]), [np.inf, -np.inf])
    d = 3
    M, Y = rng.normal(size=(n, d)), rng.normal(scale=2, size=(n, d))
    S = _random_spd(rng, n, d)
    D = rng.uniform(0.2, 3.0, size=(n, d))
    V = rng.uniform(0.2, 3.0, size=n)
    for cov, full in [(S, S), (D, [np.diag(r) for r in D]), (V, [v * np.eye(d) for v in V])]:
        ref = [stats.multivariate_normal(M[i], full[i]).logpdf(Y[i]) for i in range(n)]
        assert_allclose(MultivariateNormal(M, cov).log_pdf(Y), ref, rtol=1e-12)


# ============================================================================================
# 6. mixtures


def _mixture_case(family, n, T0, seed):
    """A random mixture and targets drawn (by hand) from its component-wise tempering by T0;
    ``ref_logpdf(T)`` is the tempered mixture's log-density from scipy.stats."""
    rng = np.random.default_rng(seed)
    K = 3 if family != "mvn" else 2
    W = rng.dirichlet(np.ones(K), size=n)
    comp = (rng.random((n, 1)) > W.cumsum(axis=1)).sum(axis=1).clip(max=K - 1)
    rows = np.arange(n)
    if family in ("normal", "laplace"):
        locs = rng.normal(scale=3.0, size=(n, K))
        scales = rng.uniform(0.3, 1.5, size=(n, K))
        fam = Normal if family == "normal" else Laplace
        mix = Mixture(W, [fam(locs[:, k], scales[:, k]) for k in range(K)])
        if family == "normal":
            y = locs[rows, comp] + math.sqrt(T0) * scales[rows, comp] * rng.normal(size=n)

            def ref_logpdf(T):
                return special.logsumexp(
                    np.log(W) + stats.norm.logpdf(y[:, None], locs, scales * math.sqrt(T)),
                    axis=1)
        else:
            y = locs[rows, comp] + T0 * scales[rows, comp] * rng.laplace(size=n)

            def ref_logpdf(T):
                return special.logsumexp(
                    np.log(W) + stats.laplace.logpdf(y[:, None], locs, scales * T), axis=1)
        return mix, y, ref_logpdf
    d = 2
    M = rng.normal(scale=2.0, size=(K, n, d))
    S = np.stack([_random_spd(rng, n, d) for _ in range(K)])
    mix = Mixture(W, [MultivariateNormal(M[k], S[k]) for k in range(K)])
    chol = np.linalg.cholesky(S[comp, rows])
    y = M[comp, rows] + math.sqrt(T0) * np.einsum("nij,nj->ni", chol, rng.normal(size=(n, d)))

    def ref_logpdf(T):
        terms = np.array([[math.log(W[i, k])
                           + stats.multivariate_normal(M[k, i], T * S[k, i]).logpdf(y[i])
                           for k in range(K)] for i in range(n)])
        return special.logsumexp(terms, axis=1)
    return mix, y, ref_logpdf


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("family", ["normal", "laplace", "mvn"])
def test_mixture_nll_temperature(family, weighted):
    n = 50 if family == "mvn" else 400
    mix, y, ref_logpdf = _mixture_case(family, n, 2.0, seed=4)
    w = np.random.default_rng(1).uniform(0.0, 2.0, size=n) if weighted else None
    T = DistributionTemperatureScaling().fit(mix, y, sample_weight=w).temperature_

    def ref_nll(u):
        return -np.average(ref_logpdf(math.exp(u)), weights=w)
    # independent global search: a fine grid over log T, then bounded Brent around the best point
    grid = np.linspace(math.log(0.05), math.log(20.0), 25 if family == "mvn" else 121)
    k = int(np.argmin([ref_nll(u) for u in grid]))
    res = optimize.minimize_scalar(ref_nll, method="bounded", bounds=(grid[k - 1], grid[k + 1]),
                                   options={"xatol": 1e-12})
    # both minimisers are limited to about sqrt(eps) in log T by the flatness of the minimum
    assert_allclose(T, math.exp(res.x), rtol=1e-6)
    assert ref_nll(math.log(T)) <= res.fun + 1e-12 * abs(res.fun)
    # the library's own mixture log-density agrees with scipy's at the optimum
    assert_allclose(mix.tempered(T).log_pdf(y), ref_logpdf(T), rtol=1e-11, atol=1e-12)
    assert 1.3 < T < 3.0  # and it is near the temperature that generated the data


def test_mixture_tempered_scales_each_component():
    rng = np.random.default_rng(0)
    n, T = 7, 2.7
    W = rng.dirichlet(np.ones(3), size=n)
    normals = [Normal(rng.normal(size=n), rng.uniform(0.1, 2, size=n)) for _ in range(3)]
    laplaces = [Laplace(rng.normal(size=n), rng.uniform(0.1, 2, size=n)) for _ in range(3)]
    mvns = [MultivariateNormal(rng.normal(size=(n, 2)), _random_spd(rng, n, 2)) for _ in range(3)]
    for comps, check in [
        (normals, lambda c, t: assert_allclose(t.scale, c.scale * math.sqrt(T), rtol=1e-15)),
        (laplaces, lambda c, t: assert_allclose(t.scale, c.scale * T, rtol=1e-15)),
        (mvns, lambda c, t: assert_allclose(t.cov, c.cov * T, rtol=1e-14)),
    ]:
        mix = Mixture(W, comps)
        tm = mix.tempered(T)
        assert_array_equal(tm.weights, mix.weights)
        assert_allclose(tm.mean, mix.mean, rtol=1e-15)
        for c, t in zip(comps, tm.components):
            assert type(t) is type(c)
            assert_array_equal(t.mean if isinstance(c, MultivariateNormal) else t.loc,
                               c.mean if isinstance(c, MultivariateNormal) else c.loc)
            check(c, t)


@pytest.mark.parametrize("family", ["normal", "laplace", "mvn"])
def test_mixture_variance(family):
    """Law of total variance ``sum_k w_k (v_k + (m_k - m)^2)`` (a different formula from the
    library's ``E X^2 - m^2``), and Monte Carlo within 5 standard errors."""
    rng = np.random.default_rng(1)
    n, K = 4, 3
    W = rng.dirichlet(np.ones(K), size=n)
    if family == "normal":
        comps = [Normal(rng.normal(scale=3, size=n), rng.uniform(0.1, 2, size=n))
                 for _ in range(K)]
        vk = [c.scale ** 2 for c in comps]
    elif family == "laplace":
        comps = [Laplace(rng.normal(scale=3, size=n), rng.uniform(0.1, 2, size=n))
                 for _ in range(K)]
        vk = [2 * c.scale ** 2 for c in comps]
    else:
        comps = [MultivariateNormal(rng.normal(scale=3, size=(n, 2)), _random_spd(rng, n, 2))
                 for _ in range(K)]
        vk = [np.einsum("nii->ni", c.cov) for c in comps]
    mix = Mixture(W, comps)
    means = [c.mean if family == "mvn" else c.loc for c in comps]
    wk = [W[:, k][:, None] if family == "mvn" else W[:, k] for k in range(K)]
    m = sum(wk[k] * means[k] for k in range(K))
    var = sum(wk[k] * (vk[k] + (means[k] - m) ** 2) for k in range(K))
    assert_allclose(mix.mean, m, rtol=1e-13, atol=1e-14)
    assert_allclose(mix.variance, var, rtol=1e-12)
    Z = mix.sample(random_state=0, size=200_000)  # (size, n) or (size, n, d)
    mc = Z.var(axis=0)
    fourth = ((Z - Z.mean(axis=0)) ** 4).mean(axis=0)
    se = np.sqrt((fourth - mc ** 2) / Z.shape[0])
    assert np.all(np.abs(mc - var) < 5 * se)


# ============================================================================================
# 7. Definition F.1: q proportional to p**(1/T)


@pytest.mark.parametrize("T", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("family", ["normal", "laplace", "mvn"])
def test_definition_f1_density_ratio(family, T):
    rng = np.random.default_rng(2)
    n = 5
    if family == "mvn":
        p = MultivariateNormal(rng.normal(size=(n, 2)), _random_spd(rng, n, 2))
        grid = [p.mean + rng.normal(scale=3.0, size=(n, 2)) for _ in range(25)]
    else:
        fam = Normal if family == "normal" else Laplace
        p = fam(rng.normal(size=n), rng.uniform(0.2, 2.0, size=n))
        grid = [p.loc + t * p.scale for t in np.linspace(-6, 6, 25)]
    q = p.tempered(T)
    D = np.array([q.log_pdf(g) - p.log_pdf(g) / T for g in grid])  # (grid, n)
    assert_allclose(D - D[0], 0.0, atol=1e-12 * np.abs(D).max() + 1e-13)
    assert_array_equal(q.mean, p.mean)
    # q is a normalised density: its integral over R is 1 (independent quadrature, 1-D families)
    if family != "mvn":
        for i in range(n):
            pdf = (lambda z, i=i: math.exp(float(q[i].log_pdf([z])[0])))
            loc, sc = float(q.loc[i]), float(q.scale[i])
            total = sum(integrate.quad(pdf, a, b, epsabs=1e-13)[0]
                        for a, b in [(-np.inf, loc), (loc, np.inf)])
            assert_allclose(total, 1.0, rtol=1e-9)
            assert_allclose(float(np.squeeze(q[i].variance)), (sc ** 2 if family == "normal"
                                                               else 2 * sc ** 2), rtol=1e-14)


@pytest.mark.parametrize("T", [0.25, 3.0])
def test_definition_f1_categorical(T):
    rng = np.random.default_rng(3)
    p = Categorical(special.softmax(2.0 * rng.normal(size=(20, 5)), axis=1))
    q = p.tempered(T)
    D = np.log(q.probs) - np.log(p.probs) / T
    assert_allclose(D - D[:, :1], 0.0, atol=1e-12)
    assert_allclose(q.probs.sum(axis=1), 1.0, rtol=1e-14)
    assert_array_equal(q.probs.argmax(axis=1), p.probs.argmax(axis=1))
    # the same as softmax(log p / T), Guo et al.'s temperature scaling
    assert_allclose(q.probs, special.softmax(np.log(p.probs) / T, axis=1), rtol=1e-12)


def test_mixture_tempering_is_not_the_power_of_the_mixture():
    """Documented: a component-wise tempered mixture is not ``p**(1/T)`` of the whole mixture."""
    p = Mixture([0.5, 0.5], [Normal([0.0], [1.0]), Normal([4.0], [1.0])])
    q = p.tempered(2.0)
    D = np.array([q.log_pdf([z]) - p.log_pdf([z]) / 2.0 for z in np.linspace(-3, 7, 11)])
    assert np.ptp(D) > 1e-2


# ============================================================================================
# 8. categorical predictions: DistributionTemperatureScaling is TemperatureScaling(input="proba")


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_distribution_ts_on_categorical_equals_temperature_scaling(weighted):
    rng = np.random.default_rng(5)
    n = 800
    L = 3.0 * rng.normal(size=(n, 4))
    yi = draw_labels(rng, L / 2.0)
    classes = np.array(["ant", "bee", "cat", "dog"])
    P = special.softmax(L, axis=1)
    w = rng.uniform(0.1, 2.0, size=n) if weighted else None
    dts = DistributionTemperatureScaling().fit(Categorical(P, classes), classes[yi],
                                               sample_weight=w)
    ts = TemperatureScaling(input="proba").fit(P, classes[yi], sample_weight=w)
    assert_allclose(dts.temperature_, ts.temperature_, rtol=1e-14)
    assert dts.temperature_ > 1.5  # overconfident predictions: T near 2
    # and against the independent reference on log p
    assert_allclose(1.0 / dts.temperature_, bisect_root(RefNLL(np.log(P), yi, w).grad),
                    rtol=1e-10)
    out = dts.transform(Categorical(P, classes))
    assert_array_equal(out.classes, classes)
    assert_allclose(out.probs, ts.predict_proba(P), rtol=1e-12)


def test_distribution_ts_on_categorical_with_zeros_equals_temperature_scaling():
    P = np.array([[0.0, 0.3, 0.7], [0.5, 0.5, 0.0], [0.1, 0.0, 0.9], [0.2, 0.3, 0.5]] * 50)
    y = np.array([0, 1, 2, 2] * 50)  # a quarter of the labels have predicted probability 0
    dts = DistributionTemperatureScaling().fit(Categorical(P), y)
    ts = TemperatureScaling(input="proba").fit(P, y)
    assert_allclose(dts.temperature_, ts.temperature_, rtol=1e-14)  # holds (T is about 322)
    assert_allclose(dts.transform(Categorical(P)).probs, ts.predict_proba(P), atol=1e-6)


# ============================================================================================
# 9. the SKCE objective


def _overconfident(rng, n, C=3, factor=3.0):
    L = rng.normal(size=(n, C))
    return factor * L, draw_labels(rng, L)  # predictions softmax(3 L), truth softmax(L)


def test_skce_objective_classifier():
    rng = np.random.default_rng(0)
    X_fit, y_fit = _overconfident(rng, 600)
    X_test, y_test = _overconfident(rng, 600)
    kernel = GaussianKernel(0.5)
    ts = TemperatureScaling("logits", objective="skce", kernel=kernel).fit(X_fit, y_fit)
    assert ts.temperature_ > 1.0
    before = skce(y_test, special.softmax(X_test, axis=1), kernel=kernel)
    after = skce(y_test, ts.predict_proba(X_test), kernel=kernel)
    assert after < before
    # the fitted temperature is (to the search's precision) a minimiser of the fitting SKCE
    labels = np.arange(3)

    def fit_skce(T):
        return skce(y_fit, special.softmax(X_fit / T, axis=1), kernel=kernel, labels=labels)
    T = ts.temperature_
    assert fit_skce(T) <= min(fit_skce(T * 1.05), fit_skce(T / 1.05)) + 1e-15


def test_skce_objective_distribution():
    rng = np.random.default_rng(1)

    def data(n):
        m = rng.normal(scale=2.0, size=n)
        s = rng.uniform(0.5, 1.5, size=n)
        return Normal(m, s), m + 2.0 * s * rng.normal(size=n)  # true variance 4 s^2
    fit_dist, fit_y = data(300)
    test_dist, test_y = data(300)
    kernel = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
    ts = DistributionTemperatureScaling(objective="skce", kernel=kernel, random_state=0)
    ts.fit(fit_dist, fit_y)
    assert ts.temperature_ > 1.0
    before = skce(test_y, test_dist, kernel=kernel)
    after = skce(test_y, ts.transform(test_dist), kernel=kernel)
    assert after < before
    assert_array_equal(ts.transform(test_dist).loc, test_dist.loc)


# ============================================================================================
# 10. held-out improvement of the NLL temperature


@pytest.mark.parametrize("C", [2, 5])
def test_heldout_calibration_improves(C):
    rng = np.random.default_rng(7)
    X_cal, y_cal = _overconfident(rng, 2000, C=C, factor=2.5)
    X_test, y_test = _overconfident(rng, 2000, C=C, factor=2.5)
    ts = fit_ts(X_cal, y_cal)
    assert ts.temperature_ > 1.5
    P0, P1 = special.softmax(X_test, axis=1), ts.predict_proba(X_test)
    kernel = GaussianKernel(0.5)
    assert calibration_error(y_test, P1) < calibration_error(y_test, P0)
    assert skce(y_test, P1, kernel=kernel) < skce(y_test, P0, kernel=kernel)
    assert np.mean(ts.predict(X_test) == y_test) == np.mean(P0.argmax(axis=1) == y_test)
    assert RefNLL(X_test, y_test)(ts.inverse_temperature_) < RefNLL(X_test, y_test)(1.0)


# ============================================================================================
# 8. separated fitting data: Laplace's rule of succession instead of T -> 0


def _mean_confidence(L, beta, w=None):
    """Weighted mean top-label confidence of softmax(beta * L), from scipy (no library code)."""
    conf = special.softmax(beta * L, axis=1).max(axis=1)
    return float(np.average(conf, weights=w))


def _separated(rng, n, C, scale=3.0):
    """Logits whose arg-max is every label (the NLL has no minimiser)."""
    L = scale * rng.normal(size=(n, C))
    return L, L.argmax(axis=1)


@pytest.mark.parametrize("C", [2, 3, 7])
@pytest.mark.parametrize("n", [3, 20, 200])
def test_separated_data_mean_confidence_is_laplace_estimate(n, C):
    """The fitted temperature makes the mean confidence on the fitting data (n + 1) / (n + 2),
    found here by bisection on the scipy softmax, and warns saying what happened and what to do."""
    from sklearn.exceptions import ConvergenceWarning

    L, y = _separated(np.random.default_rng(100 * n + C), n, C)
    with pytest.warns(ConvergenceWarning) as record:
        ts = TemperatureScaling("logits", labels=np.arange(C)).fit(L, y)
    msg = str(record[0].message)
    assert "separate" in msg and "no minimiser" in msg and "more held-out data" in msg
    assert f"n = {n}" in msg
    target = (n + 1) / (n + 2)
    beta_ref = bisect_root(lambda b: _mean_confidence(L, b) - target)
    assert_allclose(ts.inverse_temperature_, beta_ref, rtol=1e-9)
    assert_allclose(_mean_confidence(L, ts.inverse_temperature_), target, rtol=1e-12)
    # the binary 1-D log-odds form gives the same model
    if C == 2:
        with pytest.warns(ConvergenceWarning):
            t1 = TemperatureScaling("logits").fit(L[:, 1] - L[:, 0], y)
        assert_allclose(t1.predict_proba(L[:, 1] - L[:, 0]), ts.predict_proba(L), rtol=1e-9)


def test_separated_data_weights_count_as_repetitions():
    """n is the sum of the weights: integer weights equal repetition (scikit-learn's convention),
    and the rule uses the weighted mean confidence."""
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(7)
    L, y = _separated(rng, 30, 4)
    w = rng.integers(0, 4, size=30)
    with pytest.warns(ConvergenceWarning):
        a = TemperatureScaling("logits").fit(L, y, sample_weight=w)
    with pytest.warns(ConvergenceWarning):
        b = TemperatureScaling("logits").fit(np.repeat(L, w, axis=0), np.repeat(y, w))
    assert_allclose(a.temperature_, b.temperature_, rtol=1e-10)
    n = w.sum()
    beta_ref = bisect_root(lambda t: _mean_confidence(L, t, w) - (n + 1) / (n + 2))
    assert_allclose(a.inverse_temperature_, beta_ref, rtol=1e-9)
    # huge weights neither overflow nor change the optimum of non-separated data
    Lm, ym = classification_data(4, 200, seed=3)
    wm = rng.uniform(0.5, 2.0, size=200)
    ref = fit_ts(Lm, ym, sample_weight=wm)
    assert_allclose(fit_ts(Lm, ym, sample_weight=wm * 1e307).temperature_, ref.temperature_,
                    rtol=1e-12)


def test_separated_data_with_tied_labels():
    """A label tied with another class at the maximum counts as correct with probability 1/2
    (the top-label tie rule); the target a - (a - 1/C) C / ((C - 1)(n + 2)) is then below the
    limit a of the mean confidence, and reached exactly."""
    from sklearn.exceptions import ConvergenceWarning

    L = np.array([[3.0, 1.0, 0.0], [0.0, 2.0, 2.0], [1.0, 0.0, 4.0], [5.0, 2.0, 1.0]])
    y = np.array([0, 1, 2, 0])  # row 1: the label ties with class 2
    with pytest.warns(ConvergenceWarning):
        ts = TemperatureScaling("logits").fit(L, y)
    a, C, n = (3 + 0.5) / 4, 3, 4
    target = a - (a - 1 / C) * C / ((C - 1) * (n + 2))
    assert 1 / C < target < a
    assert_allclose(_mean_confidence(L, ts.inverse_temperature_), target, rtol=1e-12)


def test_separated_calibration_split_generalises():
    """A classifier's logits separate a small calibration split. The test log loss of the
    recalibrated model stays near the model's own and the best temperature's (the NLL's limit,
    T = 1e-10, costs 1.2e9 here), and beats scikit-learn's bounded search (sklearn 1.9:
    log beta in [-10, 10], which stops at beta = 46 on these separated data)."""
    sk_calibration = pytest.importorskip("sklearn.calibration")
    if not hasattr(sk_calibration, "_TemperatureScaling"):  # scikit-learn < 1.8
        pytest.skip("scikit-learn without temperature scaling")
    _TemperatureScaling = sk_calibration._TemperatureScaling
    from sklearn.datasets import make_classification
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    X, y = make_classification(n_samples=3000, n_features=20, n_informative=6, n_classes=3,
                               n_clusters_per_class=1, class_sep=1.5, random_state=0)
    clf = LogisticRegression(C=10.0).fit(X[:1000], y[:1000])
    L_cal, y_cal = clf.decision_function(X[1000:1015]), y[1000:1015]
    L_test, y_test = clf.decision_function(X[1015:]), y[1015:]
    assert np.all(L_cal.argmax(axis=1) == y_cal)  # the split is separated

    def test_nll(beta):
        return -np.mean(special.log_softmax(beta * L_test, axis=1)[np.arange(len(y_test)),
                                                                    y_test])

    with pytest.warns(ConvergenceWarning, match="separate"):
        ts = TemperatureScaling("logits").fit(L_cal, y_cal)
    ours = test_nll(ts.inverse_temperature_)
    sklearn_nll = test_nll(float(_TemperatureScaling().fit(L_cal, y_cal).beta_))
    best = test_nll(scipy_log_beta_minimum(test_nll, 1.0))
    assert test_nll(1e10) > 1e8                 # what T -> 0 costs
    assert ours < 0.25 * sklearn_nll            # measured: 0.19 against 5.4
    assert ours < 1.5 * best and ours < 1.5 * test_nll(1.0)


# ============================================================================================
# 9. reduced-precision probabilities


@pytest.mark.parametrize("dtype, tol", [(np.float32, 3.5e-4), (np.float16, 3.2e-2)])
def test_reduced_precision_probabilities(dtype, tol):
    """float32 and float16 probabilities are read as probabilities (input="auto") and accepted by
    input="proba": rows must sum to one within sqrt(eps) of the dtype, as for the metrics. The
    fit equals the float64 fit of the same values with rows renormalised (softmax of log p is
    invariant to a per-row factor)."""
    X, y = classification_data(10, 500, seed=11)
    P = special.softmax(X, axis=1).astype(dtype)
    P64 = P.astype(np.float64)
    dev = np.abs(P64.sum(axis=1) - 1.0).max()
    assert 1.5e-8 < dev < tol  # beyond the float64 tolerance, within the dtype's
    P_renormalised = P64 / P64.sum(axis=1, keepdims=True)
    ref = fit_ts(P_renormalised, y, input="proba")
    for inp in ("auto", "proba"):
        ts = fit_ts(P, y, input=inp)
        assert ts.input_ == "proba"
        assert_allclose(ts.temperature_, ref.temperature_, rtol=1e-9)
        assert_allclose(ts.predict_proba(P), ref.predict_proba(P_renormalised), rtol=1e-9)
    # rows off by more than the dtype's tolerance are still rejected, with the tolerance named
    bad = P.copy()
    bad[0] *= dtype(1.0 + 4 * tol)
    with pytest.raises(ValueError, match=r"row 0 sums to .*tolerance"):
        TemperatureScaling(input="proba").fit(bad, y)
    with pytest.warns(UserWarning, match="1 of 500 rows is not probabilities"):
        assert TemperatureScaling().fit(bad, y).input_ == "logits"  # as documented, not silently


@pytest.mark.parametrize("family", ["normal", "laplace", "mixture"])
def test_distribution_huge_weights_give_the_ratio_answer(family):
    """Only weight ratios matter for the NLL temperature and the mean log density: weights near
    the float64 maximum (whose sum overflows) give the same answer as moderate ones."""
    rng = np.random.default_rng(5)
    m = rng.normal(size=50)
    y = m + 2.0 * rng.normal(size=50)
    w = rng.uniform(0.5, 2.0, size=50)
    dist = {"normal": Normal(m, 1.0), "laplace": Laplace(m, 1.0),
            "mixture": Mixture([0.5, 0.5], [Normal(m, 1.0), Normal(m + 1.0, 1.0)])}[family]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = DistributionTemperatureScaling().fit(dist, y, sample_weight=w)
        b = DistributionTemperatureScaling().fit(dist, y, sample_weight=w * 1e307)
        rtol = 1e-6 if family == "mixture" else 1e-12  # mixtures: Brent on log T
        assert_allclose(b.temperature_, a.temperature_, rtol=rtol)
        assert_allclose(b.score(dist, y, sample_weight=w * 1e307),
                        a.score(dist, y, sample_weight=w), rtol=1e-6)
    if family == "normal":  # the closed form, weighted
        assert_allclose(a.temperature_, np.average((y - m) ** 2, weights=w), rtol=1e-12)
