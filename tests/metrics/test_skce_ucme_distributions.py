"""SKCE and UCME of predictive distributions: reference values, brute force, Monte Carlo, scorers."""

import numpy as np
import pytest
from scipy import integrate
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, WhiteKernel
from sklearn.linear_model import BayesianRidge, LinearRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from skcalib import _pairwise, calibration_error, get_scorer, make_calibration_scorer, skce, ucme
from skcalib.distributions import Categorical, Laplace, Mixture, MultivariateNormal, Normal
from skcalib.kernels import (
    DeltaKernel,
    ExponentialKernel,
    GaussianKernel,
    WassersteinKernel,
    tensor,
)
from skcalib._problems.terms import distribution_term
from skcalib.scorers import predict_distribution

K1 = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))


# --------------------------------------------------------------------------------------------
# reference values (reference-values.md section 3, CalibrationErrors.jl normal.jl)

P2 = Normal([0.0, 1.0], [1.0, 2.0])


@pytest.mark.parametrize(
    "pred, y, ls, expected",
    [
        (Normal([0.0, 0.0], [1.0, 1.0]), [0.0, 0.0], 1.0, 0.16313670681653092),
        (P2, [1.0, 0.0], 1.0, -0.04186060698827978),
        (P2, [0.0, 1.0], 1.0, 0.00651220001294024),
        (Normal([0.0, 0.0], [1.0, 1.0]), [0.0, 0.0], 2.0, 0.027642198927894435),
        (P2, [1.0, 0.0], 2.0, -0.021490892973595306),
        (P2, [0.0, 1.0], 2.0, 0.00961770077268961),
    ],
)
def test_gaussian_regression_reference_values(pred, y, ls, expected):
    k = tensor(WassersteinKernel(1.0), GaussianKernel(ls))
    assert skce(y, pred, kernel=k) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    # A single pair: the block estimator with B = 2 is the same number.
    assert skce(y, pred, kernel=k, estimator="block") == pytest.approx(expected, rel=1e-12)
    # The closed-form expressions of the reference file, recomputed here.
    as_mvn = MultivariateNormal(pred.loc[:, None], pred.scale ** 2)
    assert skce(np.asarray(y)[:, None], as_mvn, kernel=k) == pytest.approx(expected, rel=1e-12)


def test_reference_values_closed_form_expressions():
    # The first three values written out as in the reference file.
    e = np.exp
    r = np.sqrt
    assert 1 - r(2) + 1 / r(3) == pytest.approx(0.16313670681653092, rel=1e-15)
    v = e(-r(2)) * (e(-0.5) - 1 / r(2) - 1 / r(5) + e(-1 / 12) / r(6))
    assert skce([1.0, 0.0], P2, kernel=K1) == pytest.approx(v, rel=1e-12)


@pytest.mark.parametrize(
    "tP, ty, expected",
    [
        (Normal([0.5], [0.5]), [1.0], 0.0034272907966348366),
        (Normal([0.5, -1.0], [0.5, 1.5]), [1.0, -0.5], 0.003041968925894749),
    ],
)
def test_ucme_reference_values(tP, ty, expected):
    v = ucme([0.0, 0.5], P2, kernel=K1, test_predictions=tP, test_targets=ty)
    assert v == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------------------------
# every estimator equals brute force on the dense matrix, for every family and path


def _families(rng, n):
    mu = rng.normal(size=n)
    s = rng.uniform(0.1, 1.5, size=n)
    A = rng.normal(size=(n, 2, 2))
    full = A @ np.swapaxes(A, 1, 2) + 0.1 * np.eye(2)
    mix = Mixture(rng.dirichlet(np.ones(3), size=n),
                  [Normal(mu + d, s * f) for d, f in ((0.0, 1.0), (0.5, 0.5), (-1.0, 2.0))])
    return {
        "normal": (Normal(mu, s), mu + s * rng.normal(size=n), GaussianKernel(1.3)),
        "normal_homoscedastic": (Normal(mu, 0.4), mu + rng.normal(size=n), GaussianKernel(0.8)),
        "normal_laplacian": (Normal(mu, s), mu + rng.normal(size=n), ExponentialKernel(1.1)),
        "laplace": (Laplace(mu, s), mu + rng.laplace(size=n), ExponentialKernel(0.9)),
        "mvn_diag": (MultivariateNormal(rng.normal(size=(n, 2)), rng.uniform(0.1, 1, (n, 2))),
                     rng.normal(size=(n, 2)), GaussianKernel(1.0)),
        "mvn_full": (MultivariateNormal(rng.normal(size=(n, 2)), full), rng.normal(size=(n, 2)),
                     GaussianKernel(1.0)),
        "mixture": (mix, mu + rng.normal(size=n), GaussianKernel(1.0)),
    }


@pytest.mark.parametrize("family", ["normal", "normal_homoscedastic", "normal_laplacian",
                                    "laplace", "mvn_diag", "mvn_full", "mixture"])
@pytest.mark.parametrize("chunk_size", [1, 7, 64])
def test_estimators_equal_brute_force(family, chunk_size):
    rng = np.random.default_rng(3)
    n = 15 if family == "mixture" else 23  # unequal mixture weights: one LP per pair
    pred, y, ky = _families(rng, n)[family]
    k = tensor(WassersteinKernel(0.9), ky)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Bures kernel warning for mvn_full
        H = _pairwise.dense_matrix(distribution_term(pred, y, k))
        assert np.allclose(H, H.T, rtol=0, atol=1e-13)
        off = H.sum() - np.trace(H)
        kw = dict(kernel=k, chunk_size=chunk_size)
        assert skce(y, pred, **kw) == pytest.approx(off / (n * (n - 1)), rel=1e-10, abs=1e-15)
        assert skce(y, pred, estimator="biased", **kw) == pytest.approx(H.sum() / n ** 2, rel=1e-10)
        for B in (2, 3, 5, n):
            nb = n // B
            blocks = [H[b * B:(b + 1) * B, b * B:(b + 1) * B] for b in range(nb)]
            ref = np.mean([(M.sum() - np.trace(M)) / (B * (B - 1)) for M in blocks])
            got = skce(y, pred, estimator="block", block_size=B, **kw)
            assert got == pytest.approx(ref, rel=1e-10, abs=1e-15)


def test_biased_estimate_nonnegative_and_diagonal_positive():
    rng = np.random.default_rng(0)
    for family, (pred, y, ky) in _families(rng, 15).items():
        if family == "mvn_full":
            continue
        term = distribution_term(pred, y, tensor(WassersteinKernel(1.0), ky))
        d = _pairwise.diagonal(term)
        assert np.all(d > 0), family
        assert skce(y, pred, kernel=tensor(WassersteinKernel(1.0), ky), estimator="biased") >= 0


def test_n_jobs_does_not_change_the_result():
    rng = np.random.default_rng(1)
    n = 1500
    mu, s = rng.normal(size=n), rng.uniform(0.2, 1, n)
    pred, y = Normal(mu, s), mu + s * rng.normal(size=n)
    a = skce(y, pred, kernel=K1, chunk_size=256, n_jobs=1)
    b = skce(y, pred, kernel=K1, chunk_size=256, n_jobs=2)
    assert a == b


# --------------------------------------------------------------------------------------------
# agreement with an independent Monte-Carlo estimate of the same SKCE


def test_agrees_with_monte_carlo_mmd_estimate():
    """The paper's estimator integrates Z ~ P_X out; the ordinary MMD U-statistic with one draw
    Z_i ~ P_{X_i} per sample and the kernel k_P [k_Y(y,y') - k_Y(y,z') - k_Y(z,y') + k_Y(z,z')]
    has the same conditional expectation. Average it over independent draws and compare."""
    rng = np.random.default_rng(11)
    n = 60
    mu, s = rng.uniform(size=n), rng.uniform(0.1, 0.3, size=n)
    y = 0.1 + 0.1 * rng.normal(size=n)  # uncalibrated
    pred = Normal(mu, s)
    exact = skce(y, pred, kernel=K1)
    KP = np.exp(-np.sqrt((mu[:, None] - mu) ** 2 + (s[:, None] - s) ** 2))
    ky = lambda a, b: np.exp(-0.5 * (a[:, None] - b[None, :]) ** 2)  # noqa: E731
    off = ~np.eye(n, dtype=bool)
    draws = []
    for _ in range(2000):
        z = mu + s * rng.normal(size=n)
        Hmc = KP * (ky(y, y) - ky(y, z) - ky(z, y) + ky(z, z))
        draws.append(Hmc[off].mean())
    draws = np.asarray(draws)
    se = draws.std(ddof=1) / np.sqrt(draws.size)
    assert abs(draws.mean() - exact) < 3 * se
    assert se < 0.1 * abs(exact)  # the comparison has power


def _laplace_gauss_e1(loc, b, y, gamma):
    f = lambda z: np.exp(-abs(z - loc) / b) / (2 * b) * np.exp(-gamma * (z - y) ** 2)  # noqa
    return integrate.quad(f, loc - 60 * b, loc + 60 * b, points=[loc, y], limit=200)[0]


def _laplace_gauss_e2(l1, b1, l2, b2, gamma):
    # Z - Z' has density given by the convolution; integrate e1 against the second density.
    f = lambda z: (np.exp(-abs(z - l2) / b2) / (2 * b2)  # noqa
                   * _laplace_gauss_e1(l1, b1, z, gamma))
    return integrate.quad(f, l2 - 40 * b2, l2 + 40 * b2, points=[l2, l1], limit=200)[0]


def test_monte_carlo_fallback_is_unbiased():
    """Laplace predictions with a Gaussian target kernel have no closed form here: the fallback's
    estimates average (over its own draws) to the exact U- and V-statistics computed by
    quadrature."""
    n = 5
    rng = np.random.default_rng(5)
    loc, b = rng.normal(size=n), rng.uniform(0.3, 1.0, n)
    y = loc + rng.laplace(size=n) * b
    gamma = 0.5
    pred = Laplace(loc, b)
    KP = np.exp(-np.sqrt((loc[:, None] - loc) ** 2 + 2 * (b[:, None] - b) ** 2))
    e1 = np.array([[_laplace_gauss_e1(loc[i], b[i], y[j], gamma) for j in range(n)]
                   for i in range(n)])
    e2 = np.array([[_laplace_gauss_e2(loc[i], b[i], loc[j], b[j], gamma) for j in range(n)]
                   for i in range(n)])
    KY = np.exp(-gamma * (y[:, None] - y) ** 2)
    H = KP * (KY - e1 - e1.T + e2)
    exact_u = (H.sum() - np.trace(H)) / (n * (n - 1))
    exact_v = H.sum() / n ** 2
    for estimator, exact in (("unbiased", exact_u), ("biased", exact_v)):
        vals = np.array([skce(y, pred, kernel=K1, estimator=estimator, n_mc_samples=20,
                              random_state=seed) for seed in range(300)])
        se = vals.std(ddof=1) / np.sqrt(vals.size)
        assert abs(vals.mean() - exact) < 4 * se, estimator
        assert se < 0.2 * abs(exact) + 1e-4
    # Seeded: reproducible.
    a = skce(y, pred, kernel=K1, random_state=3)
    assert a == skce(y, pred, kernel=K1, random_state=3)


def test_calibrated_normal_unbiased_mean_near_zero():
    """Reference-values section 3: unbiased SKCE on calibrated Normal data has mean ~ 0."""
    rng = np.random.default_rng(2)
    vals = []
    for _ in range(1000):
        mu, s = rng.normal(size=20), rng.uniform(0.5, 1.5, size=20)
        vals.append(skce(mu + s * rng.normal(size=20), Normal(mu, s), kernel=K1))
    vals = np.asarray(vals)
    se = vals.std(ddof=1) / np.sqrt(vals.size)
    assert abs(vals.mean()) < 4 * se
    # ...while an overconfident model (std too small by half) is clearly detected.
    bad = []
    for _ in range(200):
        mu, s = rng.normal(size=20), rng.uniform(0.5, 1.5, size=20)
        bad.append(skce(mu + s * rng.normal(size=20), Normal(mu, 0.5 * s), kernel=K1))
    assert np.mean(bad) > 10 * se


# --------------------------------------------------------------------------------------------
# UCME by brute force


def test_ucme_equals_brute_force():
    rng = np.random.default_rng(4)
    n, J = 17, 4
    mu, s = rng.normal(size=n), rng.uniform(0.2, 1, n)
    y = mu + rng.normal(size=n)
    pred = Normal(mu, s)
    tP = Normal(rng.normal(size=J), rng.uniform(0.2, 1, J))
    ty = rng.normal(size=J)
    k = tensor(WassersteinKernel(0.7), GaussianKernel(1.2))
    ky = GaussianKernel(1.2)
    W = np.empty((n, J))
    for j in range(J):
        kp = np.exp(-np.sqrt((mu - tP.loc[j]) ** 2 + (s - tP.scale[j]) ** 2) / 0.7)
        e1 = pred.expected_kernel(ky, np.full(n, ty[j]))
        W[:, j] = kp * (np.exp(-(y - ty[j]) ** 2 / (2 * 1.2 ** 2)) - e1)
    ref = np.mean(W.mean(axis=0) ** 2)
    got = ucme(y, pred, kernel=k, test_predictions=tP, test_targets=ty, chunk_size=5)
    assert got == pytest.approx(ref, rel=1e-12)


def test_ucme_drawn_test_locations_are_seeded():
    rng = np.random.default_rng(0)
    mu = rng.normal(size=30)
    a = ucme(mu, Normal(mu, 1.0), random_state=1)
    assert a == ucme(mu, Normal(mu, 1.0), random_state=1)
    assert a != ucme(mu, Normal(mu, 1.0), random_state=2)
    assert a >= 0


# --------------------------------------------------------------------------------------------
# classification goes through the same door


def test_categorical_equals_probability_matrix():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=40)
    classes = np.array(["a", "b", "c"])
    y = classes[rng.integers(3, size=40)]
    cat = Categorical(P, classes=classes)
    for est in ("unbiased", "biased"):
        assert skce(y, cat, estimator=est) == skce(y, P, labels=classes, estimator=est)
    assert calibration_error(y, cat) == calibration_error(y, P, labels=classes)


# --------------------------------------------------------------------------------------------
# default kernel and errors


def test_default_kernel_is_scale_equivariant():
    """The default (median) kernel makes the SKCE invariant to the units of the target."""
    rng = np.random.default_rng(7)
    mu, s = rng.normal(size=50), rng.uniform(0.5, 1, 50)
    y = mu + 2 * s * rng.normal(size=50)
    a = skce(y, Normal(mu, s))
    b = skce(1000 * y + 5, Normal(1000 * mu + 5, 1000 * s))
    assert a == pytest.approx(b, rel=1e-9)


@pytest.mark.parametrize(
    "y, match",
    [
        (np.zeros(3), "has 3 samples"),
        (np.zeros((4, 2)), r"shape \(4,\)"),
        ([0.0, np.nan, 0.0, 1.0], "finite"),
        (["a", "b", "c", "d"], "y_true must contain numbers; got strings"),
    ],
)
def test_bad_targets(y, match):
    with pytest.raises((ValueError, TypeError), match=match):
        skce(y, Normal(np.zeros(4), 1.0))


@pytest.mark.parametrize(
    "kernel, match",
    [
        (GaussianKernel(1.0), "must be None, a WassersteinKernel"),
        (tensor(GaussianKernel(1.0), GaussianKernel(1.0)), "must be a WassersteinKernel"),
        (tensor(WassersteinKernel(1.0), DeltaKernel()), "GaussianKernel or"),
        (tensor(WassersteinKernel(-1.0), GaussianKernel(1.0)), "length_scale"),
        (tensor(WassersteinKernel(1.0, exponent=0.0), GaussianKernel(1.0)), "exponent"),
    ],
)
def test_bad_kernels(kernel, match):
    with pytest.raises((TypeError, ValueError), match=match):
        skce(np.zeros(4), Normal(np.zeros(4), 1.0), kernel=kernel)


def test_other_errors():
    pred = Normal(np.zeros(4), 1.0)
    with pytest.raises(ValueError, match="block_size"):
        skce(np.zeros(4), pred, estimator="block", block_size=5)
    with pytest.raises(ValueError, match="at least 2"):
        skce([0.0], Normal([0.0], 1.0))
    with pytest.raises(ValueError, match="n_mc_samples"):
        skce(np.zeros(4), Laplace(np.zeros(4), 1.0), n_mc_samples=0)
    with pytest.raises(TypeError, match="class probabilities"):
        calibration_error(np.zeros(4), pred)
    with pytest.raises(TypeError, match="same family"):
        ucme(np.zeros(4), pred, test_predictions=Laplace([0.0], 1.0), test_targets=[0.0])
    with pytest.raises(ValueError, match="together"):
        ucme(np.zeros(4), pred, test_predictions=Normal([0.0], 1.0))
    with pytest.raises(ValueError, match="test_targets"):
        ucme(np.zeros(4), pred, test_predictions=Normal([0.0], 1.0), test_targets=[0.0, 1.0])


def test_inputs_not_modified():
    rng = np.random.default_rng(0)
    mu, s = rng.normal(size=30), rng.uniform(0.5, 1, 30)
    y = mu + rng.normal(size=30)
    copies = [a.copy() for a in (mu, s, y)]
    pred = Normal(mu, s)
    skce(y, pred, kernel=K1)
    skce(y, pred, estimator="biased")
    ucme(y, pred, random_state=0)
    for a, c in zip((mu, s, y), copies):
        np.testing.assert_array_equal(a, c)
    y.setflags(write=False)
    skce(y, pred)  # read-only inputs work


# --------------------------------------------------------------------------------------------
# regression scorers


def _regression_data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] + 0.2 * rng.normal(size=n)
    return X, y


def test_grid_search_gaussian_process_with_neg_skce():
    X, y = _regression_data()
    gp = GaussianProcessRegressor(kernel=RBF(1.0) + WhiteKernel(0.05), optimizer=None)
    search = GridSearchCV(gp, {"kernel__k2__noise_level": [1e-4, 0.04, 4.0]},
                          scoring=get_scorer("neg_skce"), cv=KFold(3))
    search.fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores))
    # The scorer's fold value equals the metric computed by hand.
    train, test = next(iter(KFold(3).split(X)))
    model = gp.set_params(kernel__k2__noise_level=0.04).fit(X[train], y[train])
    mean, std = model.predict(X[test], return_std=True)
    expected = -skce(y[test], Normal(mean, std))
    assert search.cv_results_["split0_test_score"][1] == pytest.approx(expected, rel=1e-12)
    # Grossly wrong noise levels are worse calibrated than the true one (0.04 = 0.2^2).
    assert search.best_params_["kernel__k2__noise_level"] == 0.04


def test_cross_validate_bayesian_ridge():
    X, y = _regression_data(200, seed=1)
    scoring = {"skce": get_scorer("neg_skce"), "skce_b": get_scorer("neg_skce_biased"),
               "ucme": get_scorer("neg_ucme"),
               "paper": make_calibration_scorer("skce", kernel=K1, estimator="block",
                                                block_size=4)}
    res = cross_validate(BayesianRidge(), X, y, scoring=scoring, cv=4)
    for name in scoring:
        assert np.all(np.isfinite(res[f"test_{name}"])), name
    assert np.all(res["test_skce_b"] <= 0)
    assert np.all(res["test_ucme"] <= 0)


def test_multi_output_regressor_gives_multivariate_normal():
    X, y = _regression_data(60)
    Y = np.column_stack([y, -y + 0.1])
    gp = GaussianProcessRegressor(kernel=RBF(1.0) + WhiteKernel(0.05), optimizer=None).fit(X, Y)
    pred = predict_distribution(gp, X[:10])
    assert isinstance(pred, MultivariateNormal) and pred.dim == 2
    assert np.isfinite(get_scorer("neg_skce")(gp, X, Y))


class _LaplaceRegressor(RegressorMixin, BaseEstimator):
    """A model with the predict_distribution hook."""

    def fit(self, X, y):
        self.lr_ = LinearRegression().fit(X, y)
        self.b_ = np.mean(np.abs(y - self.lr_.predict(X)))
        return self

    def predict(self, X):
        return self.lr_.predict(X)

    def predict_distribution(self, X):
        return Laplace(self.predict(X), self.b_)


def test_predict_distribution_hook():
    X, y = _regression_data(100)
    model = _LaplaceRegressor().fit(X, y)
    pred = predict_distribution(model, X)
    assert isinstance(pred, Laplace)
    k = tensor(WassersteinKernel(1.0), ExponentialKernel(1.0))
    score = make_calibration_scorer("skce", kernel=k)(model, X, y)
    assert score == pytest.approx(-skce(y, pred, kernel=k), rel=1e-12)


def test_scorer_errors_for_regressors():
    X, y = _regression_data(40)
    lr = LinearRegression().fit(X, y)
    with pytest.raises(TypeError, match="return_std"):
        get_scorer("neg_skce")(lr, X, y)
    with pytest.raises(TypeError, match="class probabilities"):
        get_scorer("neg_expected_calibration_error")(BayesianRidge().fit(X, y), X, y)

    class Bad(_LaplaceRegressor):
        def predict_distribution(self, X):
            return self.predict(X)

    with pytest.raises(TypeError, match="must return a skcalib distribution"):
        get_scorer("neg_skce")(Bad().fit(X, y), X, y)


def test_predict_distribution_of_a_classifier_is_categorical():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] > 0, "yes", "no")
    clf = LogisticRegression().fit(X, y)
    pred = predict_distribution(clf, X)
    assert isinstance(pred, Categorical)
    np.testing.assert_array_equal(pred.classes, clf.classes_)
    np.testing.assert_allclose(pred.probs, clf.predict_proba(X))
    assert skce(y, pred) == skce(y, clf.predict_proba(X), labels=clf.classes_)


# --------------------------------------------------------------------------------------------
# the fused Normal x Gaussian sum against a brute-force formula written out here


def _brute_h(mu, s, y, l_w, nu, l_y):
    """Dense h_ij of the SKCE for Normal predictions, kernel exp(-(W2/l_w)^nu) x Gaussian(l_y),
    from the closed forms of e1 and e2 (one pair at a time, no library code)."""
    g = 0.5 / l_y ** 2
    n = len(mu)
    H = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            w2 = np.hypot(mu[i] - mu[j], s[i] - s[j])
            k_p = np.exp(-((w2 / l_w) ** nu))
            k_y = np.exp(-g * (y[i] - y[j]) ** 2)
            a_i, a_j = 1 + 2 * g * s[i] ** 2, 1 + 2 * g * s[j] ** 2
            e1_ij = np.exp(-g * (mu[i] - y[j]) ** 2 / a_i) / np.sqrt(a_i)
            e1_ji = np.exp(-g * (mu[j] - y[i]) ** 2 / a_j) / np.sqrt(a_j)
            a = 1 + 2 * g * (s[i] ** 2 + s[j] ** 2)
            e2 = np.exp(-g * (mu[i] - mu[j]) ** 2 / a) / np.sqrt(a)
            H[i, j] = k_p * (k_y - e1_ij - e1_ji + e2)
    return H


def _normal_case(case, n=37, seed=5):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    s = np.full(n, 0.3) if case == "homoscedastic" else rng.uniform(0.05, 1.2, size=n)
    y = mu + s * rng.normal(size=n)
    if case == "wide":
        # far from the target length scale: the fused sum uses exact differences
        mu, y = mu * 40.0, y * 40.0 + 3.0
    return mu, s, y


@pytest.mark.parametrize("case", ["heteroscedastic", "homoscedastic", "wide"])
@pytest.mark.parametrize("nu", [1.0, 2.0, 1.5])
@pytest.mark.parametrize("cached", [True, False])
def test_fused_normal_sum_equals_brute_force(case, nu, cached, monkeypatch):
    import skcalib.distributions._normal as expectations

    monkeypatch.setattr(expectations, "_STRIP_PAIRS", 50)  # several strips per tile
    if not cached:  # features built per tile, as for large n
        monkeypatch.setattr(expectations, "_FEATURE_CACHE_SAMPLES", 0)
    mu, s, y = _normal_case(case)
    l_w, l_y = 0.7, (3.0 if case == "wide" else 0.8)
    H = _brute_h(mu, s, y, l_w, nu, l_y)
    k = tensor(WassersteinKernel(l_w, exponent=nu), GaussianKernel(l_y))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # exponent 1.5 / 2: KernelValidityWarning not at issue
        term = distribution_term(Normal(mu, s), y, k)
    engine = term._fused
    assert engine is not None
    scale = np.abs(H).sum()
    a, b = slice(0, 20), slice(20, 37)
    assert term.block_sum(a, b, False) == pytest.approx(H[a, b].sum(), rel=0, abs=1e-13 * scale)
    for t in (slice(0, 20), slice(3, 37), slice(36, 37)):
        upper = np.triu(H[t, t], 1).sum()
        assert term.block_sum(t, t, True) == pytest.approx(upper, rel=0, abs=1e-13 * scale)
    assert engine.expand is (case != "wide")
    assert engine.homoscedastic is (case == "homoscedastic")
    assert (engine._all is not None) is cached
    n = len(mu)
    for T in (1, 8, 64):
        got = _pairwise.u_statistic(term, chunk_size=T)
        assert got == pytest.approx((H.sum() - np.trace(H)) / (n * (n - 1)), rel=0,
                                    abs=1e-13 * scale / n ** 2)


def test_fused_normal_sum_keeps_exact_differences_for_duplicates():
    # Identical predictions: W2 = 0 exactly, so k_P = 1 and h_ij is the bracket alone (the
    # differences are formed exactly, not through an expansion of squares).
    mu, s = np.full(6, 1e3 + 0.1), np.full(6, 0.2)
    y = 1e3 + np.linspace(-0.3, 0.4, 6)
    H = _brute_h(mu, s, y, 1.0, 1.0, 0.5)
    term = distribution_term(Normal(mu, s), y, tensor(WassersteinKernel(1.0), GaussianKernel(0.5)))
    got = term.block_sum(slice(0, 6), slice(0, 6), True)
    assert got == pytest.approx(np.triu(H, 1).sum(), rel=1e-12)


def test_fused_normal_large_n_matches_unfused_tiles():
    # The fused sum (strips, BLAS products, exp2) against the generic tiles of the same term.
    rng = np.random.default_rng(11)
    n = 700
    mu, s = rng.uniform(0, 1, n), 0.1 + 0.05 * rng.uniform(size=n)
    y = rng.normal(mu, s)
    term, _ = _prepare(y, Normal(mu, s))
    for a, b, diag in ((slice(0, 512), slice(512, 700), False), (slice(0, 512), slice(0, 512), True)):
        H = term.block(a, b)
        ref = np.triu(H, 1).sum() if diag else H.sum()
        assert term.block_sum(a, b, diag) == pytest.approx(ref, rel=0, abs=1e-13 * np.abs(H).sum())


@pytest.mark.parametrize("l_w, l_y", [(1e200, 1.0), (1e-160, 1.0), (1.0, 1e-100), (1e170, 1e-100)])
def test_fused_normal_sum_falls_back_at_extreme_scales(l_w, l_y):
    # Scaled coordinates outside the float range: the generic tiles (same numbers, no NaN).
    mu, s, y = _normal_case("heteroscedastic", n=9)
    term = distribution_term(Normal(mu, s), y, tensor(WassersteinKernel(l_w), GaussianKernel(l_y)))
    assert term._fused is None
    H = term.block(slice(0, 9), slice(0, 9))
    assert np.all(np.isfinite(H))
    assert term.block_sum(slice(0, 9), slice(0, 9), True) == pytest.approx(
        np.triu(H, 1).sum(), rel=0, abs=1e-15 * np.abs(H).sum())


def _prepare(y, pred, kernel=None):
    from skcalib._problems.kernel import prepare_term

    return prepare_term(y, pred, kernel)


# --------------------------------------------------------------------------------------------
# weighted pair terms (sample_weight): w_i w_j h_ij, fused and generic


@pytest.mark.parametrize("family", ["normal", "normal_homoscedastic", "normal_laplacian",
                                    "laplace", "mixture"])
def test_with_weights_is_the_weight_outer_product(family):
    rng = np.random.default_rng(8)
    n = 19
    pred, y, ky = _families(rng, n)[family]
    term = distribution_term(pred, y, tensor(WassersteinKernel(0.9), ky))
    w = rng.uniform(0, 3, n)
    w[4] = 0.0
    given = w.copy()  # wt.weights is w itself: compare with a copy taken before
    wt = term.with_weights(w)
    assert term.weights is None
    np.testing.assert_array_equal(wt.weights, given)
    H = _pairwise.dense_matrix(term)
    HW = H * np.outer(w, w)
    scale = np.abs(HW).sum()
    np.testing.assert_allclose(wt.block(slice(0, n), slice(0, n)), HW, rtol=1e-13, atol=1e-15)
    i, j = np.array([0, 3, 7, 18]), np.array([5, 3, 1, 2])
    np.testing.assert_allclose(wt.pairs(i, j), HW[i, j], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(wt.diag(slice(2, 9)), np.diag(HW)[2:9], rtol=1e-13, atol=1e-15)
    a, b = slice(0, 8), slice(8, 19)
    assert wt.block_sum(a, b, False) == pytest.approx(HW[a, b].sum(), rel=0, abs=1e-13 * scale)
    assert wt.block_sum(a, a, True) == pytest.approx(np.triu(HW[a, a], 1).sum(), rel=0,
                                                     abs=1e-13 * scale)
    # the engine: the weighted U-statistic sum_{i != j} w_i w_j h_ij / sum_{i != j} w_i w_j
    ref = (HW.sum() - np.trace(HW)) / (w.sum() ** 2 - (w ** 2).sum())
    for T in (1, 5, 64):
        got = _pairwise.u_statistic(_pairwise.weighted(term, w), chunk_size=T)
        assert got == pytest.approx(ref, rel=1e-10, abs=1e-15)


@pytest.mark.parametrize("cached", [True, False])
def test_with_weights_fused_equals_brute_force(cached, monkeypatch):
    import skcalib.distributions._normal as expectations

    if not cached:
        monkeypatch.setattr(expectations, "_FEATURE_CACHE_SAMPLES", 0)
    mu, s, y = _normal_case("heteroscedastic", n=29)
    w = np.random.default_rng(2).uniform(0.0, 2.0, size=29)
    H = _brute_h(mu, s, y, 0.6, 1.0, 1.1) * np.outer(w, w)
    term = distribution_term(Normal(mu, s), y, tensor(WassersteinKernel(0.6), GaussianKernel(1.1)))
    wt = _pairwise.weighted(term, w)
    assert wt._fused is term._fused is not None and wt is not term
    scale = np.abs(H).sum()
    assert wt.block_sum(slice(0, 29), slice(0, 29), True) == pytest.approx(
        np.triu(H, 1).sum(), rel=0, abs=1e-13 * scale)
    # unit weights give the unweighted sums (up to the order of summation)
    ones = term.with_weights(np.ones(29))
    H1 = _brute_h(mu, s, y, 0.6, 1.0, 1.1)
    for a, b, diag in ((slice(0, 10), slice(10, 29), False), (slice(0, 29), slice(0, 29), True)):
        assert ones.block_sum(a, b, diag) == pytest.approx(
            term.block_sum(a, b, diag), rel=0, abs=1e-14 * np.abs(H1).sum())


def test_with_weights_checks_the_length():
    term = distribution_term(Normal([0.0, 1.0], [1.0, 1.0]), np.array([0.0, 1.0]), K1)
    with pytest.raises(ValueError, match="sample_weight"):
        term.with_weights(np.ones(3))


@pytest.mark.parametrize("cached", [True, False])
def test_fused_sum_threads_share_nothing(cached, monkeypatch):
    # per-thread scratch buffers (and row features): n_jobs=2 gives the results of n_jobs=1
    import skcalib.distributions._normal as expectations

    if not cached:
        monkeypatch.setattr(expectations, "_FEATURE_CACHE_SAMPLES", 0)
    rng = np.random.default_rng(4)
    n = 1200
    mu, s = rng.normal(size=n), rng.uniform(0.2, 1, n)
    y = mu + s * rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n)
    term = distribution_term(Normal(mu, s), y, K1)
    for t in (term, term.with_weights(w)):
        a = _pairwise.u_statistic(t, chunk_size=300, n_jobs=1)
        b = _pairwise.u_statistic(t, chunk_size=300, n_jobs=2)
        assert a == b


@pytest.mark.parametrize("n", [2, 3, 4, 5, 40])
@pytest.mark.parametrize("family", ["normal", "mvn_diag", "mixture"])
def test_target_scale_is_the_median_over_pairs(n, family):
    from skcalib._problems.kernel_resolution import target_scale

    pred, _, _ = _families(np.random.default_rng(n), n)[family]
    m, v = pred._moments()
    vals = [np.sqrt(np.sum((m[i] - m[j]) ** 2) + v[i] + v[j])
            for i in range(n) for j in range(i + 1, n)]
    assert target_scale(pred) == pytest.approx(np.median(vals), rel=1e-14)
