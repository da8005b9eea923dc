"""skcalib.datasets: generators, the exact SKCE of the synthetic Gaussian model (reference values of
../shared/specs/reference-values.md §8) and statistical agreement of skce with it.

Statistical checks use fixed seeds and compare means with 4 standard errors; each also checks that
its standard error is small enough for the comparison to be informative.
"""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, stats

from skcalib import skce
from skcalib.datasets import (
    GAUSSIAN_PREDICTIONS_SKCE,
    gaussian_predictions_skce,
    make_gaussian_predictions,
    make_heteroscedastic_regression,
    make_ols_predictions,
)
from skcalib.distributions import MultivariateNormal, Normal
from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor

KERNEL = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))  # the paper's kernel
REFERENCE = {1: 0.1107737017737, 10: 0.0595975411300}  # reference-values.md §8


def _skce(predictions, y, **kw):
    return skce(y, predictions, kernel=KERNEL, **kw)


def _mean_and_se(values):
    values = np.asarray(values, dtype=float)
    return values.mean(), values.std(ddof=1) / math.sqrt(values.size)


# ------------------------------------------------------------------------------------------------
# make_gaussian_predictions: shapes, types, reproducibility


@pytest.mark.parametrize("calibrated", [True, False])
def test_gaussian_predictions_univariate(calibrated):
    p, y = make_gaussian_predictions(40, calibrated=calibrated, random_state=0)
    assert type(p) is Normal
    assert len(p) == 40
    assert isinstance(y, np.ndarray) and y.shape == (40,) and y.dtype == np.float64
    assert_array_equal(p.scale, np.full(40, 0.1))
    assert np.all((p.loc >= 0) & (p.loc <= 1))
    assert np.all(np.isfinite(y))


@pytest.mark.parametrize("calibrated", [True, False])
def test_gaussian_predictions_multivariate(calibrated):
    p, y = make_gaussian_predictions(30, n_dims=4, calibrated=calibrated, random_state=1)
    assert type(p) is MultivariateNormal
    assert p.covariance_type == "spherical" and p.dim == 4 and len(p) == 30
    assert_array_equal(p.cov, np.full(30, 0.01))
    assert_array_equal(p.mean, np.repeat(p.mean[:, :1], 4, axis=1))  # c * 1_d
    assert np.all((p.mean >= 0) & (p.mean <= 1))
    assert y.shape == (30, 4) and y.dtype == np.float64


def test_gaussian_predictions_defaults():
    p, y = make_gaussian_predictions(random_state=0)
    assert len(p) == 100 and y.shape == (100,)
    p1, y1 = make_gaussian_predictions(100, n_dims=1, calibrated=True, random_state=0)
    assert_array_equal(p.loc, p1.loc)
    assert_array_equal(y, y1)


def test_gaussian_predictions_single_sample():
    p, y = make_gaussian_predictions(1, n_dims=2, random_state=0)
    assert len(p) == 1 and y.shape == (1, 2)


@pytest.mark.parametrize("n_dims", [1, 3])
def test_gaussian_predictions_reproducible(n_dims):
    def draw(rs):
        p, y = make_gaussian_predictions(25, n_dims=n_dims, calibrated=False, random_state=rs)
        return np.asarray(p.mean), y

    m0, y0 = draw(7)
    m1, y1 = draw(7)
    assert_array_equal(m0, m1)
    assert_array_equal(y0, y1)
    m2, y2 = draw(np.random.default_rng(7))  # an int seeds default_rng
    assert_array_equal(m0, m2)
    assert_array_equal(y0, y2)
    m3, y3 = draw(8)
    assert not np.any(m0 == m3)
    assert not np.any(y0 == y3)
    # A Generator or RandomState passed twice advances: different draws.
    rng = np.random.default_rng(3)
    assert not np.array_equal(draw(rng)[1], draw(rng)[1])
    rs = np.random.RandomState(3)
    a, b = draw(rs)[1], draw(rs)[1]
    assert not np.array_equal(a, b)
    assert_array_equal(draw(np.random.RandomState(3))[1], a)
    # None: fresh entropy every call.
    assert not np.array_equal(draw(None)[1], draw(None)[1])


def test_gaussian_predictions_models_share_draws():
    """Documented coupling: the two models drawn with one seed differ only in coordinate 1."""
    pc, yc = make_gaussian_predictions(50, n_dims=3, calibrated=True, random_state=5)
    pu, yu = make_gaussian_predictions(50, n_dims=3, calibrated=False, random_state=5)
    assert_array_equal(pc.mean, pu.mean)
    assert_array_equal(yc[:, 1:], yu[:, 1:])
    c = pc.mean[:, 0]
    assert_allclose(yu[:, 0] - 0.1, yc[:, 0] - c, rtol=0, atol=1e-15)
    assert not np.allclose(yu[:, 0], yc[:, 0])


# ------------------------------------------------------------------------------------------------
# validation


@pytest.mark.parametrize("func, kwargs, exc, name", [
    (make_gaussian_predictions, {"n_samples": 0}, ValueError, "n_samples"),
    (make_gaussian_predictions, {"n_samples": -3}, ValueError, "n_samples"),
    (make_gaussian_predictions, {"n_samples": 10.0}, TypeError, "n_samples"),
    (make_gaussian_predictions, {"n_samples": True}, TypeError, "n_samples"),
    (make_gaussian_predictions, {"n_samples": "10"}, TypeError, "n_samples"),
    (make_gaussian_predictions, {"n_dims": 0}, ValueError, "n_dims"),
    (make_gaussian_predictions, {"n_dims": 2.0}, TypeError, "n_dims"),
    (make_gaussian_predictions, {"calibrated": "yes"}, TypeError, "calibrated"),
    (make_gaussian_predictions, {"calibrated": 1}, TypeError, "calibrated"),
    (make_gaussian_predictions, {"random_state": "seed"}, ValueError, "random_state"),
    (make_gaussian_predictions, {"random_state": 1.5}, ValueError, "random_state"),
    (gaussian_predictions_skce, {"n_dims": 0}, ValueError, "n_dims"),
    (gaussian_predictions_skce, {"n_dims": 1.0}, TypeError, "n_dims"),
    (gaussian_predictions_skce, {"n_dims": None}, TypeError, "n_dims"),
    (gaussian_predictions_skce, {"calibrated": None}, TypeError, "calibrated"),
    (make_heteroscedastic_regression, {"n_samples": 0}, ValueError, "n_samples"),
    (make_heteroscedastic_regression, {"n_samples": 2.5}, TypeError, "n_samples"),
    (make_heteroscedastic_regression, {"noise": -0.1}, ValueError, "noise"),
    (make_heteroscedastic_regression, {"noise": float("nan")}, ValueError, "noise"),
    (make_heteroscedastic_regression, {"noise": float("inf")}, ValueError, "noise"),
    (make_heteroscedastic_regression, {"noise": "0.1"}, TypeError, "noise"),
    (make_heteroscedastic_regression, {"random_state": "x"}, ValueError, "random_state"),
    (make_ols_predictions, {"n_train": 2}, ValueError, "n_train"),
    (make_ols_predictions, {"n_train": 10.0}, TypeError, "n_train"),
    (make_ols_predictions, {"n_test": 0}, ValueError, "n_test"),
    (make_ols_predictions, {"n_test": None}, TypeError, "n_test"),
    (make_ols_predictions, {"random_state": [1, 2, 3]}, ValueError, "random_state"),
])
def test_validation_errors_name_the_argument(func, kwargs, exc, name):
    with pytest.raises(exc, match=name):
        func(**kwargs)


def test_numpy_scalars_accepted():
    p, y = make_gaussian_predictions(np.int64(5), n_dims=np.int32(2), calibrated=np.bool_(False),
                                     random_state=np.int64(0))
    assert y.shape == (5, 2)
    X, y = make_heteroscedastic_regression(np.int64(4), noise=np.float32(0.2), random_state=0)
    assert X.shape == (4, 1)
    assert gaussian_predictions_skce(np.int64(1)) == gaussian_predictions_skce(1)


# ------------------------------------------------------------------------------------------------
# the generative distributions


def test_calibrated_model_distribution():
    n, d = 20000, 3
    p, y = make_gaussian_predictions(n, n_dims=d, random_state=11)
    c = p.mean[:, 0]
    assert abs(c.mean() - 0.5) < 4 * math.sqrt(1 / 12 / n)
    assert stats.kstest(c, "uniform").pvalue > 0.01
    R = y - c[:, None]
    for j in range(d):
        assert abs(R[:, j].mean()) < 4 * 0.1 / math.sqrt(n)
        assert abs(R[:, j].std(ddof=1) - 0.1) < 4 * 0.1 / math.sqrt(2 * n)
        assert abs(np.corrcoef(R[:, j], c)[0, 1]) < 4 / math.sqrt(n)
    # coordinates are independent given c
    assert abs(np.corrcoef(R[:, 0], R[:, 1])[0, 1]) < 4 / math.sqrt(n)


@pytest.mark.parametrize("n_dims", [1, 3])
def test_uncalibrated_model_distribution(n_dims):
    n = 20000
    p, y = make_gaussian_predictions(n, n_dims=n_dims, calibrated=False, random_state=12)
    c = np.asarray(p.mean).reshape(n, -1)[:, 0]
    y = y.reshape(n, -1)
    y1 = y[:, 0]
    assert abs(y1.mean() - 0.1) < 4 * 0.1 / math.sqrt(n)
    assert abs(y1.std(ddof=1) - 0.1) < 4 * 0.1 / math.sqrt(2 * n)
    assert abs(np.corrcoef(y1, c)[0, 1]) < 4 / math.sqrt(n)  # coordinate 1 ignores c
    assert stats.kstest(y1, "norm", args=(0.1, 0.1)).pvalue > 0.01
    for j in range(1, n_dims):  # the other coordinates stay calibrated
        assert abs((y[:, j] - c).std(ddof=1) - 0.1) < 4 * 0.1 / math.sqrt(2 * n)
        assert abs((y[:, j] - c).mean()) < 4 * 0.1 / math.sqrt(n)


@pytest.mark.parametrize("n_dims", [1, 3])
def test_pit_values(n_dims):
    n = 5000
    p, y = make_gaussian_predictions(n, n_dims=n_dims, random_state=21)
    c = np.asarray(p.mean).reshape(n, -1)[:, 0]
    y = y.reshape(n, -1)
    for j in range(n_dims):
        assert stats.kstest(stats.norm.cdf(y[:, j], c, 0.1), "uniform").pvalue > 0.01
    # The same check detects the miscalibrated coordinate (and only that one).
    p, y = make_gaussian_predictions(n, n_dims=n_dims, calibrated=False, random_state=21)
    y = y.reshape(n, -1)
    assert stats.kstest(stats.norm.cdf(y[:, 0], c, 0.1), "uniform").pvalue < 1e-10
    for j in range(1, n_dims):
        assert stats.kstest(stats.norm.cdf(y[:, j], c, 0.1), "uniform").pvalue > 0.01


# ------------------------------------------------------------------------------------------------
# exact SKCE of the synthetic model


@pytest.mark.parametrize("n_dims", [1, 10])
def test_ground_truth_reference_values(n_dims):
    value = gaussian_predictions_skce(n_dims)
    assert isinstance(value, float)
    assert abs(value - REFERENCE[n_dims]) < 1e-10
    assert GAUSSIAN_PREDICTIONS_SKCE[n_dims] == REFERENCE[n_dims]
    assert gaussian_predictions_skce(n_dims, calibrated=False) == value


def test_ground_truth_table_keys():
    assert set(GAUSSIAN_PREDICTIONS_SKCE) == {1, 10}


@pytest.mark.parametrize("n_dims", [1, 2, 10, 100])
def test_ground_truth_calibrated_is_zero(n_dims):
    value = gaussian_predictions_skce(n_dims, calibrated=True)
    assert value == 0.0 and isinstance(value, float)


def test_ground_truth_default_is_uncalibrated_univariate():
    assert gaussian_predictions_skce() == gaussian_predictions_skce(1, calibrated=False)


def test_ground_truth_is_cached():
    from skcalib.datasets import _regression

    gaussian_predictions_skce(7)
    hits = _regression._miscalibrated_skce.cache_info().hits
    first = gaussian_predictions_skce(7)
    assert _regression._miscalibrated_skce.cache_info().hits == hits + 1
    assert gaussian_predictions_skce(7) == first


def _one_dimensional_skce(d):
    """The same integral with the inner c-integral in closed form (erf), one quad over u."""
    a = 2.04
    s = math.sqrt(a)

    def gauss_integral(lo, hi, m):  # int_lo^hi exp(-(c - m)^2 / a) dc
        return 0.5 * math.sqrt(math.pi * a) * (math.erf((hi - m) / s) - math.erf((lo - m) / s))

    def outer(u):
        inner = ((1.0 - u) * (1.0 + math.exp(-u * u / a)) - gauss_integral(u, 1.0, 0.1)
                 - gauss_integral(0.0, 1.0 - u, 0.1))
        return math.exp(-math.sqrt(d) * u - (d - 1) * u * u / a) * inner

    value, _ = integrate.quad(outer, 0.0, 1.0, epsabs=1e-15, epsrel=1e-14, limit=200)
    return 2.0 * 1.02 ** (-d / 2) * value


@pytest.mark.parametrize("n_dims", [1, 2, 3, 10, 50])
def test_ground_truth_independent_quadrature(n_dims):
    assert_allclose(gaussian_predictions_skce(n_dims), _one_dimensional_skce(n_dims),
                    rtol=1e-11, atol=1e-14)


def test_ground_truth_decreases_with_dimension():
    values = [gaussian_predictions_skce(d) for d in (1, 2, 3, 10, 50)]
    assert all(v > 0 for v in values)
    assert all(a > b for a, b in zip(values, values[1:]))


def test_ground_truth_monte_carlo_d3():
    """Independent check of the formula for d = 3, by simulation.

    (a) Average the integrand over random pairs (c, c'): checks the quadrature.
    (b) Simulate pairs of (prediction, target) of the miscalibrated model and average the SKCE
        kernel h, written out here from the Gaussian closed forms: checks the formula itself.
    """
    d, n = 3, 1_000_000
    truth = gaussian_predictions_skce(d)
    rng = np.random.default_rng(2024)
    c, c2 = rng.uniform(size=n), rng.uniform(size=n)

    a, u = 2.04, c - c2
    f = (np.exp(-math.sqrt(d) * np.abs(u)) * 1.02 ** (-d / 2) * np.exp(-(d - 1) * u * u / a)
         * (1 - np.exp(-(c - 0.1) ** 2 / a) - np.exp(-(c2 - 0.1) ** 2 / a) + np.exp(-u * u / a)))
    mean, se = _mean_and_se(f)
    assert se < 2e-3 * truth
    assert abs(mean - truth) < 4 * se

    mu, mu2 = np.repeat(c[:, None], d, axis=1), np.repeat(c2[:, None], d, axis=1)
    y = mu + 0.1 * rng.standard_normal((n, d))
    y2 = mu2 + 0.1 * rng.standard_normal((n, d))
    y[:, 0] = 0.1 + 0.1 * rng.standard_normal(n)
    y2[:, 0] = 0.1 + 0.1 * rng.standard_normal(n)

    def sq(v):
        return np.einsum("ij,ij->i", v, v)

    # k_Y(y, y') = exp(-|y - y'|^2 / 2); Z ~ N(mu, 0.01 I): E k_Y(Z, y) = 1.01^(-d/2)
    # exp(-|mu - y|^2 / 2.02), E k_Y(Z, Z') = 1.02^(-d/2) exp(-|mu - mu'|^2 / 2.04).
    h = np.exp(-math.sqrt(d) * np.abs(u)) * (
        np.exp(-sq(y - y2) / 2)
        - 1.01 ** (-d / 2) * np.exp(-sq(mu - y2) / 2.02)
        - 1.01 ** (-d / 2) * np.exp(-sq(mu2 - y) / 2.02)
        + 1.02 ** (-d / 2) * np.exp(-sq(mu - mu2) / 2.04)
    )
    mean, se = _mean_and_se(h)
    assert se < 0.01 * truth
    assert abs(mean - truth) < 4 * se


# ------------------------------------------------------------------------------------------------
# statistical agreement of skcalib.skce with the ground truth

# Variance of the unbiased (B = n) estimator at n = 1024 on the miscalibrated model
# (reference-values source §6.2: paper CSV 2.91e-5 for d = 1, 9.92e-6 for d = 10).
U_VARIANCE_1024 = {1: 2.91e-5, 10: 9.92e-6}


@pytest.mark.parametrize("n_dims, n, reps", [(1, 2048, 20), (10, 1024, 10)])
def test_unbiased_skce_matches_ground_truth(n_dims, n, reps):
    rng = np.random.default_rng(100 + n_dims)
    values = [_skce(*make_gaussian_predictions(n, n_dims=n_dims, calibrated=False,
                                               random_state=rng))
              for _ in range(reps)]
    truth = gaussian_predictions_skce(n_dims)
    mean, se = _mean_and_se(values)
    assert se < 0.02 * truth  # informative: 4 SE is below 8% of the value
    assert abs(mean - truth) < 4 * se, (mean, truth, se)
    # The spread agrees with the known variance (leading term scales as 1 / n).
    ratio = np.var(values, ddof=1) / (U_VARIANCE_1024[n_dims] * 1024 / n)
    assert 0.25 < ratio < 3.0, ratio


@pytest.mark.parametrize("n_dims", [1, 10])
def test_skce_calibrated_model(n_dims):
    """Unbiased estimates average 0; biased ones (1 - 1.02^(-d/2)) / n, exactly in expectation."""
    n, reps = 20, 500
    rng = np.random.default_rng(300 + n_dims)
    unbiased, biased = [], []
    for _ in range(reps):
        p, y = make_gaussian_predictions(n, n_dims=n_dims, random_state=rng)
        unbiased.append(_skce(p, y))
        biased.append(_skce(p, y, estimator="biased"))
    expected_biased = (1 - 1.02 ** (-n_dims / 2)) / n  # E h(z, z) / n
    mean, se = _mean_and_se(unbiased)
    assert se < 0.01 * gaussian_predictions_skce(n_dims)
    assert abs(mean) < 4 * se, (mean, se)
    mean, se = _mean_and_se(biased)
    assert se < 0.1 * expected_biased
    assert abs(mean - expected_biased) < 4 * se, (mean, expected_biased, se)
    # n * biased - (n - 1) * unbiased is the mean of the diagonal h(z_i, z_i), whose expectation
    # is 1 - 1.02^(-d/2); far less noisy than the biased estimate itself.
    diagonal = n * np.asarray(biased) - (n - 1) * np.asarray(unbiased)
    mean, se = _mean_and_se(diagonal)
    assert se < 0.02 * n * expected_biased
    assert abs(mean - n * expected_biased) < 4 * se, (mean, n * expected_biased, se)


# ------------------------------------------------------------------------------------------------
# heteroscedastic regression and the OLS example


def test_heteroscedastic_regression_shapes_and_reproducibility():
    X, y = make_heteroscedastic_regression(random_state=0)
    assert X.shape == (100, 1) and y.shape == (100,)
    assert X.dtype == np.float64 and y.dtype == np.float64
    X2, y2 = make_heteroscedastic_regression(100, noise=0.15, random_state=0)
    assert_array_equal(X, X2)
    assert_array_equal(y, y2)
    X3, y3 = make_heteroscedastic_regression(100, random_state=1)
    assert not np.any(X == X3)


def test_heteroscedastic_regression_noise_free():
    X, y = make_heteroscedastic_regression(50, noise=0.0, random_state=3)
    assert_array_equal(y, np.sin(np.pi * X[:, 0]))


@pytest.mark.parametrize("noise", [0.15, 0.5])
def test_heteroscedastic_regression_distribution(noise):
    n = 20000
    X, y = make_heteroscedastic_regression(n, noise=noise, random_state=4)
    x = X[:, 0]
    assert x.min() >= -1 and x.max() <= 1
    assert stats.kstest(x, "uniform", args=(-1, 2)).pvalue > 0.01
    eps = (y - np.sin(np.pi * x)) / np.abs(1 + x)
    assert abs(eps.mean()) < 4 * noise / math.sqrt(n)
    assert abs(eps.std(ddof=1) - noise) < 4 * noise / math.sqrt(2 * n)
    assert stats.kstest(eps, "norm", args=(0, noise)).pvalue > 0.01
    # heteroscedastic: the residual spread grows with x
    r = y - np.sin(np.pi * x)
    assert r[x > 0.5].std() > 3 * r[x < -0.5].std()


def test_ols_predictions_shapes_and_reproducibility():
    p, y = make_ols_predictions(random_state=0)
    assert type(p) is Normal and len(p) == 50 and y.shape == (50,)
    assert np.all(p.scale == p.scale[0]) and p.scale[0] > 0
    p2, y2 = make_ols_predictions(100, 50, random_state=0)
    assert_array_equal(p.loc, p2.loc)
    assert_array_equal(y, y2)
    p3, y3 = make_ols_predictions(100, 50, random_state=1)
    assert not np.any(y == y3)
    p4, y4 = make_ols_predictions(n_train=3, n_test=1, random_state=0)
    assert len(p4) == 1 and y4.shape == (1,)


def test_ols_predictions_are_the_documented_fit():
    """Training then test set from one generator; OLS line; residual sd with ddof = 1."""
    p, y_test = make_ols_predictions(60, 40, random_state=9)
    rng = np.random.default_rng(9)
    X_tr, y_tr = make_heteroscedastic_regression(60, random_state=rng)
    X_te, y_te = make_heteroscedastic_regression(40, random_state=rng)
    assert_array_equal(y_test, y_te)
    slope, intercept = np.polyfit(X_tr[:, 0], y_tr, 1)
    assert_allclose(p.loc, intercept + slope * X_te[:, 0], rtol=1e-10, atol=1e-12)
    resid = y_tr - (intercept + slope * X_tr[:, 0])
    assert_allclose(p.scale, np.std(resid, ddof=1), rtol=1e-10)
    assert not np.isclose(p.scale[0], np.std(resid, ddof=0), rtol=1e-6, atol=0)


def test_ols_predictions_are_miscalibrated_and_true_model_is_not():
    n_test, seeds = 200, range(30)
    ols = [_skce(*make_ols_predictions(100, n_test, random_state=s)) for s in seeds]
    mean, se = _mean_and_se(ols)
    assert mean > 4 * se, (mean, se)

    true_model = []
    for s in seeds:
        X, y = make_heteroscedastic_regression(n_test, random_state=1000 + s)
        x = X[:, 0]
        true_model.append(_skce(Normal(np.sin(np.pi * x), 0.15 * np.abs(1 + x)), y))
    mean_true, se_true = _mean_and_se(true_model)
    assert se_true < 0.1 * mean  # informative: resolves a tenth of the OLS error
    assert abs(mean_true) < 4 * se_true, (mean_true, se_true)


# ------------------------------------------------------------------------------------------------
# Classification generators (Gruber & Bach): shapes, reproducibility, documented draws, validation
# (statistical checks of these generators are in tests/estimation/test_simulation.py)

from scipy.special import logsumexp, softmax  # noqa: E402

from skcalib.datasets import (  # noqa: E402
    BINARY_SQUARED_CALIBRATION_ERROR,
    DIRICHLET_CALIBRATION_ACCURACY,
    DIRICHLET_CALIBRATION_ERRORS,
    DIRICHLET_CALIBRATION_ERRORS_SE,
    dirichlet_calibration_errors,
    make_binary_squared_calibration,
    make_dirichlet_calibration,
    squared_calibration_errors,
)


def test_dirichlet_calibration_shapes_and_types():
    f, y = make_dirichlet_calibration(random_state=0)
    assert f.shape == (500, 5) and f.dtype == np.float64
    assert y.shape == (500,) and np.issubdtype(y.dtype, np.integer)
    assert set(np.unique(y)) <= set(range(5))
    f, y, P = make_dirichlet_calibration(7, 3, random_state=0, return_truth=True)
    assert f.shape == P.shape == (7, 3) and y.shape == (7,)


def test_dirichlet_calibration_reproducible():
    a = make_dirichlet_calibration(50, random_state=3, return_truth=True)
    b = make_dirichlet_calibration(50, random_state=np.random.default_rng(3), return_truth=True)
    for u, v in zip(a, b):
        assert_array_equal(u, v)
    c = make_dirichlet_calibration(50, random_state=4, return_truth=True)
    assert not np.array_equal(a[0], c[0])
    # return_truth only appends P: the same draws
    f, y = make_dirichlet_calibration(50, random_state=3)
    assert_array_equal(f, a[0])
    assert_array_equal(y, a[1])
    # a RandomState seeds a new generator (and advances)
    rs = np.random.RandomState(0)
    d1 = make_dirichlet_calibration(5, random_state=rs)[0]
    d2 = make_dirichlet_calibration(5, random_state=rs)[0]
    assert not np.array_equal(d1, d2)


def test_dirichlet_calibration_documented_draws():
    """Gammas (shape a + 1), then uniforms, then one uniform per label; log-space Dirichlet."""
    n, d, a, power = 40, 4, 0.1, 0.5
    f, y, P = make_dirichlet_calibration(n, d, concentration=a, power=power, random_state=5,
                                         return_truth=True)
    rng = np.random.default_rng(5)
    log_g = np.log(rng.standard_gamma(a + 1, size=(n, d))) + np.log(1 - rng.random((n, d))) / a
    log_p = log_g - logsumexp(log_g, axis=1, keepdims=True)
    u = rng.random(n)
    assert_allclose(P, np.exp(log_p), rtol=1e-12, atol=0)
    assert_allclose(f, softmax(power * log_p, axis=1), rtol=1e-12, atol=0)
    cdf = np.cumsum(np.exp(log_p), axis=1)
    expected = np.array([min(int(np.searchsorted(row, ui, side="right")), d - 1)
                         for row, ui in zip(cdf, u)])
    assert_array_equal(y, expected)


def test_dirichlet_calibration_power_one_is_calibrated_and_truth_is_inverse_map():
    f, _, P = make_dirichlet_calibration(200, random_state=1, power=1.0, return_truth=True)
    assert_allclose(f, P, rtol=1e-12, atol=1e-300)
    f, _, P = make_dirichlet_calibration(200, random_state=1, power=0.3, return_truth=True)
    assert_allclose(softmax(np.log(f) / 0.3, axis=1), P, rtol=1e-9, atol=1e-300)
    assert np.all(f > 0)


@pytest.mark.parametrize("kwargs, error", [
    ({"n_samples": 0}, ValueError),
    ({"n_samples": 2.5}, TypeError),
    ({"n_classes": 1}, ValueError),
    ({"concentration": 0.0}, ValueError),
    ({"concentration": -1.0}, ValueError),
    ({"concentration": float("nan")}, ValueError),
    ({"concentration": 1e-320}, ValueError),  # log-probabilities overflow
    ({"power": 0}, ValueError),
    ({"power": 1e308}, ValueError),  # predictions overflow
    ({"power": True}, TypeError),
    ({"return_truth": 1}, TypeError),
    ({"random_state": "seed"}, ValueError),
])
def test_dirichlet_calibration_validation(kwargs, error):
    with pytest.raises(error):
        make_dirichlet_calibration(**{"n_samples": 10, **kwargs})


def test_binary_squared_calibration_shapes_and_draws():
    c, y, pi = make_binary_squared_calibration(30, random_state=2, return_truth=True)
    assert c.shape == y.shape == pi.shape == (30,)
    assert set(np.unique(y)) <= {0, 1} and np.issubdtype(y.dtype, np.integer)
    rng = np.random.default_rng(2)
    c2 = rng.random(30)
    assert_array_equal(c, c2)
    assert_array_equal(pi, c2 ** 2)
    assert_array_equal(y, (rng.random(30) < c2 ** 2).astype(int))
    c3, y3 = make_binary_squared_calibration(30, random_state=2)
    assert_array_equal(c3, c)
    assert_array_equal(y3, y)
    assert make_binary_squared_calibration(random_state=0)[0].shape == (1000,)


def test_binary_squared_calibration_truth_is_exact():
    assert BINARY_SQUARED_CALIBRATION_ERROR == pytest.approx(1 / 30, rel=1e-15)
    value, _ = integrate.quad(lambda c: (c - c * c) ** 2, 0, 1)
    assert value == pytest.approx(BINARY_SQUARED_CALIBRATION_ERROR, rel=1e-12)


@pytest.mark.parametrize("kwargs, error", [
    ({"n_samples": 0}, ValueError),
    ({"n_samples": 1.0}, TypeError),
    ({"return_truth": None}, TypeError),
])
def test_binary_squared_calibration_validation(kwargs, error):
    with pytest.raises(error):
        make_binary_squared_calibration(**kwargs)


def test_squared_calibration_errors_values_and_validation():
    assert_allclose(squared_calibration_errors([0.5, 0.2], [0.25, 0.2]), [0.0625, 0.0])
    assert_allclose(squared_calibration_errors([[0.5, 0.5], [1.0, 0.0]],
                                               [[0.25, 0.75], [1.0, 0.0]]), [0.125, 0.0])
    # the two-column canonical error of a binary problem is twice the binary error
    c = np.array([0.1, 0.6, 0.9])
    two = squared_calibration_errors(np.column_stack([1 - c, c]),
                                     np.column_stack([1 - c ** 2, c ** 2]))
    assert_allclose(two, 2 * squared_calibration_errors(c, c ** 2))
    with pytest.raises(ValueError, match="same shape"):
        squared_calibration_errors([[0.5, 0.5]], [0.5])
    with pytest.raises(ValueError):
        squared_calibration_errors([[0.5, np.nan]], [[0.5, 0.5]])


def test_dirichlet_calibration_errors_api():
    errors = dirichlet_calibration_errors(n_samples=2000, random_state=0)
    assert set(errors) == {"canonical", "top_label", "classwise", "accuracy"}
    assert all(isinstance(v, float) for v in errors.values())
    again, se = dirichlet_calibration_errors(n_samples=2000, random_state=0, return_se=True)
    assert again == errors and set(se) == set(errors)
    assert all(v > 0 for v in se.values())
    assert set(DIRICHLET_CALIBRATION_ERRORS) == {"canonical", "top_label", "classwise"}
    assert set(DIRICHLET_CALIBRATION_ERRORS_SE) == {"canonical", "top_label", "classwise",
                                                    "accuracy"}
    assert 0.9 < DIRICHLET_CALIBRATION_ACCURACY < 0.91
    with pytest.raises(ValueError):
        dirichlet_calibration_errors(n_samples=10)
    with pytest.raises(ValueError):
        dirichlet_calibration_errors(1)
    with pytest.raises(TypeError):
        dirichlet_calibration_errors(return_se="yes")


# ------------------------------------------------------------------------------------------------
# The Dirichlet models M1-M3 of Widmann et al. (2019): make_dirichlet_predictions

from skcalib.datasets import make_dirichlet_predictions  # noqa: E402


def test_dirichlet_predictions_shapes_defaults_and_reproducibility():
    P, y = make_dirichlet_predictions(random_state=0)
    assert P.shape == (250, 10) and P.dtype == np.float64
    assert y.shape == (250,) and np.issubdtype(y.dtype, np.integer)
    assert set(np.unique(y)) <= set(range(10))
    assert np.all(P >= 0) and np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    P2, y2 = make_dirichlet_predictions(random_state=0)
    assert_array_equal(P, P2)
    assert_array_equal(y, y2)
    P3, _ = make_dirichlet_predictions(random_state=1)
    assert not np.array_equal(P, P3)
    P4, y4 = make_dirichlet_predictions(7, 3, random_state=np.random.default_rng(0))
    assert P4.shape == (7, 3) and y4.shape == (7,)


def test_dirichlet_predictions_share_draws_across_models():
    # the documented draw order: predictions first, then one uniform per label
    P1, y1 = make_dirichlet_predictions(500, random_state=3)
    P2, y2 = make_dirichlet_predictions(500, miscalibration=0.5, random_state=3)
    P3, y3 = make_dirichlet_predictions(500, miscalibration=1.0, target="uniform",
                                        random_state=3)
    assert_array_equal(P1, P2)
    assert_array_equal(P1, P3)
    # pi = 1 and beta = e_1: always class 0; pi = 0: the label is drawn from the prediction
    _, y = make_dirichlet_predictions(500, miscalibration=1.0, target="first", random_state=3)
    assert np.all(y == 0)
    assert np.all(P1[np.arange(500), y1] > 0)


def test_dirichlet_predictions_marginal_is_beta():
    # g ~ Dir(a 1_m) has Beta(a, (m - 1) a) coordinates
    P, _ = make_dirichlet_predictions(20000, 4, concentration=0.7, random_state=0)
    for k in range(4):
        assert stats.kstest(P[:, k], stats.beta(0.7, 2.1).cdf).pvalue > 1e-3


@pytest.mark.parametrize("pi, target", [(0.0, "first"), (0.5, "first"), (1.0, "uniform"),
                                        (0.3, [0.5, 0.3, 0.15, 0.05])])
def test_dirichlet_predictions_label_law(pi, target):
    # E[onehot(Y) - Q | g] = 0 with Q = pi beta + (1 - pi) g; tested against 1 and g itself
    n, m = 100_000, 4
    P, y = make_dirichlet_predictions(n, m, concentration=0.5, miscalibration=pi, target=target,
                                      random_state=0)
    if isinstance(target, str):
        beta = np.eye(m)[0] if target == "first" else np.full(m, 1 / m)
    else:
        beta = np.asarray(target, dtype=float)
    R = np.eye(m)[y] - (pi * beta + (1 - pi) * P)
    for Z in (R, R * P):
        se = Z.std(axis=0, ddof=1) / math.sqrt(n)
        assert np.all(np.abs(Z.mean(axis=0)) < 5 * se), (Z.mean(axis=0), se)
    # and the law differs from the calibrated one when pi > 0 (the check above can fail)
    if pi > 0:
        R0 = np.eye(m)[y] - P
        z = [np.abs(Z.mean(axis=0)) / (Z.std(axis=0, ddof=1) / math.sqrt(n))
             for Z in (R0, R0 * P)]
        assert np.max(z) > 10


def test_dirichlet_predictions_small_concentration():
    P, y = make_dirichlet_predictions(2000, 10, concentration=0.01, random_state=0)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(P[np.arange(2000), y] > 0)


def test_dirichlet_predictions_target_not_mutated():
    beta = np.array([0.2, 0.3, 0.5])
    before = beta.copy()
    make_dirichlet_predictions(10, 3, miscalibration=0.5, target=beta, random_state=0)
    assert_array_equal(beta, before)


@pytest.mark.parametrize("kwargs, error, name", [
    ({"n_samples": 0}, ValueError, "n_samples"),
    ({"n_samples": 2.0}, TypeError, "n_samples"),
    ({"n_classes": 1}, ValueError, "n_classes"),
    ({"concentration": 0.0}, ValueError, "concentration"),
    ({"concentration": np.inf}, ValueError, "concentration"),
    ({"miscalibration": 1.5}, ValueError, "miscalibration"),
    ({"miscalibration": -0.1}, ValueError, "miscalibration"),
    ({"miscalibration": "0.5"}, TypeError, "miscalibration"),
    ({"target": "last"}, ValueError, "target"),
    ({"target": [0.5, 0.5]}, ValueError, "target"),
    ({"target": [1.1] + [-0.1] + [0.0] * 8}, ValueError, "target"),
    ({"target": [0.2] * 10}, ValueError, "target"),
    ({"target": [np.nan] * 10}, ValueError, "target"),
    ({"target": object()}, TypeError, "target"),
    ({"random_state": "seed"}, (TypeError, ValueError), "random_state"),
])
def test_dirichlet_predictions_validation(kwargs, error, name):
    with pytest.raises(error, match=name):
        make_dirichlet_predictions(**kwargs)


# --------------------------------------------------------------------------------------------
# make_audit_data


def test_make_audit_data_law_and_local_bias():
    from skcalib.datasets import make_audit_data
    from skcalib.datasets._audit import _audit_shift

    X, y, audit, proba = make_audit_data(20000, random_state=0)
    age, group = audit[:, 0], audit[:, 1]
    assert X.shape == (20000, 4) and set(np.unique(y)) == {0, 1}
    assert set(np.unique(group)) == {0.0, 1.0}
    # the shift is centred (exactly, in the population) and the labels follow proba
    s = _audit_shift(age, group)
    assert abs(s.mean()) < 4 * s.std() / np.sqrt(s.size)
    assert abs((y - proba).mean()) < 4 * np.sqrt((proba * (1 - proba)).mean() / y.size)
    logit = np.log(proba / (1 - proba))
    np.testing.assert_allclose(logit, X @ [1.0, -0.8, 0.6, -0.4] + s, rtol=1e-10, atol=1e-10)
    # locally biased: ages 30-40 have higher risk than the inputs alone say
    base = 1 / (1 + np.exp(-(X @ [1.0, -0.8, 0.6, -0.4])))
    young = (age >= 30) & (age < 40)
    assert (y[young] - base[young]).mean() > 0.1
    X2, y2, a2, p2 = make_audit_data(50, n_features=2, local_bias=0.0, random_state=1)
    np.testing.assert_allclose(p2, 1 / (1 + np.exp(-(X2 @ [1.0, -0.8]))))
    again = make_audit_data(50, n_features=2, local_bias=0.0, random_state=1)
    for a, b in zip((X2, y2, a2, p2), again):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_samples=0), "n_samples"),
    (dict(n_features=7), "n_features"),
    (dict(n_features=0), "n_features"),
    (dict(local_bias=np.inf), "local_bias"),
    (dict(local_bias="big"), "local_bias"),
])
def test_make_audit_data_validation(kwargs, match):
    from skcalib.datasets import make_audit_data

    with pytest.raises((ValueError, TypeError), match=match):
        make_audit_data(**kwargs)
