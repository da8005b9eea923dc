"""Size and power of the KLCE test on the paper's simulations (Vashistha and Farahi, App. A.2 and
Fig. 3; seed-004 sections 2.5 and 5.3). The fast tests run scaled-down versions in `make test`;
the `slow` ones the paper's sizes (`make test-slow`)."""

import numpy as np
import pytest
from scipy.stats import binom

from skcalib.kernels import GaussianKernel
from skcalib.stats import klce_test


def _sigmoid(t):
    return 1.0 / (1.0 + np.exp(-t))


def _binomial_interval(reps, rate, level):
    a = (1.0 - level) / 2.0
    lo, hi = binom.ppf([a, 1.0 - a], reps, rate)
    return lo / reps, hi / reps


def _type_one_rate(n, width, reps, n_resamples, method, seed):
    """Fig. 5 DGP: x ~ N(0, 1), p = sigmoid(-1 + x/2), y ~ Bern(p); the true p is tested with the
    probability kernel only (a constant audit feature), width w = exp(-d^2 / w^2)."""
    rng = np.random.default_rng(seed)
    k = GaussianKernel(width / np.sqrt(2))
    rejections = 0
    for _ in range(reps):
        x = rng.normal(size=n)
        p = _sigmoid(-1.0 + 0.5 * x)
        y = (rng.random(n) < p).astype(int)
        res = klce_test(y, p, np.zeros(n), kernel=k, method=method, n_resamples=n_resamples,
                        standardize=False, random_state=rng)
        rejections += res.pvalue <= 0.05
    return rejections / reps


def _type_two_rate(n, d, reps, n_resamples, seed):
    """Fig. 3 DGP: x ~ N(0, I_d), y ~ Bern(sigmoid(sum x)); the model sigmoid(sum_{i<d} x_i) is
    audited on the full x, both kernel widths 5, permutation null. Returns the type-II error."""
    rng = np.random.default_rng(seed)
    k = GaussianKernel(5.0 / np.sqrt(2))
    misses = 0
    for _ in range(reps):
        x = rng.normal(size=(n, d))
        y = (rng.random(n) < _sigmoid(x.sum(axis=1))).astype(int)
        p = _sigmoid(x[:, :-1].sum(axis=1))
        res = klce_test(y, p, x, kernel=k, feature_kernel=k, method="permutation",
                        n_resamples=n_resamples, standardize=False, random_state=rng)
        misses += res.pvalue > 0.05
    return misses / reps


@pytest.mark.parametrize("method", ["permutation", "conditional"])
def test_type_one_error_fast(method):
    reps = 300
    rate = _type_one_rate(50, 0.2, reps, 99, method, seed=1)
    lo, hi = _binomial_interval(reps, 0.05, 0.999)
    assert lo <= rate <= hi, rate


def test_type_two_error_fig3_scaled():
    """Fig. 3 at N = 500, d = 10 (paper: type-II error 0.006), on 40 realisations."""
    assert _type_two_rate(500, 10, 40, 199, seed=2) <= 0.1


@pytest.mark.slow
@pytest.mark.parametrize("width", [0.01, 0.206, 0.5, 0.99])
def test_type_one_error_fig5(width):
    """Fig. 5(a): N = 50, permutation null; the paper's rates are 0.049-0.051 for every width."""
    reps = 1000
    rate = _type_one_rate(50, width, reps, 199, "permutation", seed=3)
    lo, hi = _binomial_interval(reps, 0.05, 0.99)
    assert lo <= rate <= hi, rate


@pytest.mark.slow
@pytest.mark.parametrize("n", [20, 60, 100])
def test_type_one_error_fig5_sample_sizes(n):
    """Fig. 5(b): width 0.2, N in {20, ..., 100}; also the exact conditional null."""
    reps = 1000
    lo, hi = _binomial_interval(reps, 0.05, 0.99)
    for method in ("permutation", "conditional"):
        rate = _type_one_rate(n, 0.2, reps, 199, method, seed=4 + n)
        assert lo <= rate <= hi, (method, rate)


# The paper's Fig. 3 type-II errors at N = 500 for d = 10, 20, 30, 40, 50 (1000 realisations).
FIG3_N500 = {10: 0.006, 20: 0.069, 30: 0.242, 40: 0.426, 50: 0.534}


@pytest.mark.slow
@pytest.mark.parametrize("d", sorted(FIG3_N500))
def test_type_two_error_fig3(d):
    """Fig. 3 at N = 500: the type-II error grows with dim(X) as in the paper (300 realisations,
    999 permutations; tolerance 4 binomial standard errors of the paper's 1000 realisations plus
    ours)."""
    reps = 300
    rate = _type_two_rate(500, d, reps, 999, seed=10 + d)
    ref = FIG3_N500[d]
    se = np.sqrt(max(ref * (1 - ref), 0.01) * (1 / reps + 1 / 1000))
    assert abs(rate - ref) <= 4 * se + 0.01, (d, rate, ref)
