"""The two simulations with closed-form calibration errors: make_shrinkage_calibration (with
shrinkage_calibration_errors) and make_smoothstep_calibration.

The closed forms are checked against brute force that shares nothing with them: Monte Carlo on
1e6 samples within 5 Monte-Carlo standard errors (the sample truths from ``pi`` and, separately,
from the labels alone), the law of the largest uniform spacing by inclusion-exclusion quadrature
and by sorted uniforms (not Rényi's representation the code uses), and 1/210 by exact rational
integration.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, stats

from skcalib import calibration_error
from skcalib.datasets import (SHRINKAGE_CALIBRATION_ERRORS, SMOOTHSTEP_CALIBRATION_ERROR,
                              make_shrinkage_calibration, make_smoothstep_calibration,
                              shrinkage_calibration_errors, squared_calibration_errors)
from skcalib.datasets._closed_form import _top_label_moment

N_MC = 1_000_000


def _mean_se(x):
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def _pair_terms(s, target):
    """``(s_i - t_i)(s_j - t_j)`` over disjoint pairs of neighbours in the order of ``s``: given
    the ``s`` values the terms have mean ``g(s_i) g(s_j)``, ``g(s) = s - E[t | s]``, so their mean
    estimates ``E[g(s)^2]`` from the labels alone (bias of the order of the squared spacing)."""
    r = (s - target)[np.argsort(s, kind="stable")]
    m = r.size // 2
    return r[0:2 * m:2] * r[1:2 * m:2]


# --------------------------------------------------------------------------------------------
# shrinkage: the closed forms


def test_constant_is_the_function_at_the_defaults_and_exact():
    assert SHRINKAGE_CALIBRATION_ERRORS == shrinkage_calibration_errors()
    assert SHRINKAGE_CALIBRATION_ERRORS == shrinkage_calibration_errors(10, 0.5)
    assert SHRINKAGE_CALIBRATION_ERRORS["canonical"] == float(Fraction(1, 4) * Fraction(9, 110))
    assert SHRINKAGE_CALIBRATION_ERRORS["classwise"] == SHRINKAGE_CALIBRATION_ERRORS["canonical"]
    assert SHRINKAGE_CALIBRATION_ERRORS["top_label"] == float(
        Fraction(1, 4) * Fraction(1381181, 31752000))
    assert SHRINKAGE_CALIBRATION_ERRORS["top_label"] == pytest.approx(0.25 * 0.04350, rel=1e-4)


@pytest.mark.parametrize("strength", [0.0, 0.3, 0.5, 1.0])
def test_two_classes_special_case(strength):
    """C = 2: ``M = max(U, 1 - U) ~ U(1/2, 1)``, ``E[M] = 3/4``, ``E[M^2] = 7/12``, so
    ``E[(M - 1/2)^2] = 1/12``; ``E||f - u||^2 = 2 Var(U) = 1/6``."""
    assert _top_label_moment(2) == Fraction(7, 12) - 2 * Fraction(3, 4) / 2 + Fraction(1, 4)
    assert _top_label_moment(2) == Fraction(1, 12)
    errors = shrinkage_calibration_errors(2, strength)
    s2 = strength * strength
    assert errors["canonical"] == pytest.approx(s2 / 6, rel=1e-15, abs=0)
    assert errors["classwise"] == pytest.approx(s2 / 6, rel=1e-15, abs=0)
    assert errors["top_label"] == pytest.approx(s2 / 12, rel=1e-15, abs=0)


def test_errors_scale_with_strength_squared():
    base = shrinkage_calibration_errors(7, 1.0)
    for s in (0.1, 0.25, 0.9):
        errors = shrinkage_calibration_errors(7, s)
        for key in base:
            assert errors[key] == pytest.approx(s * s * base[key], rel=1e-14)
    assert all(v == 0.0 for v in shrinkage_calibration_errors(7, 0.0).values())


def _max_spacing_sf(x, d):
    """``P(max spacing of d uniform spacings > x)`` by inclusion-exclusion:
    ``sum_{j>=1} (-1)^(j+1) binom(d, j) (1 - j x)_+^(d-1)`` (no Rényi representation)."""
    return sum((-1) ** (j + 1) * math.comb(d, j) * max(1.0 - j * x, 0.0) ** (d - 1)
               for j in range(1, d + 1))


@pytest.mark.parametrize("d", [2, 3, 5, 10])
def test_top_label_moment_by_quadrature_of_the_law_of_the_largest_spacing(d):
    """``E[(M - 1/d)^2] = int_{1/d}^1 2 (x - 1/d) P(M > x) dx`` (M >= 1/d), with the kinks of the
    survival function at ``1/j`` given to the quadrature."""
    points = [1.0 / j for j in range(2, d)]
    value, err = integrate.quad(lambda x: 2.0 * (x - 1.0 / d) * _max_spacing_sf(x, d),
                                1.0 / d, 1.0, points=points or None, epsabs=1e-14,
                                epsrel=1e-12, limit=200)
    assert err < 1e-11
    assert float(_top_label_moment(d)) == pytest.approx(value, rel=1e-9, abs=1e-13)


def test_top_label_moment_by_sorted_uniforms():
    """Sorting-based Monte Carlo: the spacings of 9 sorted uniforms are ``Dir(1_10)``."""
    rng = np.random.default_rng(20261127)
    d = 10
    u = np.sort(rng.random((N_MC, d - 1)), axis=1)
    spacings = np.diff(u, axis=1, prepend=0.0, append=1.0)
    mean, se = _mean_se((spacings.max(axis=1) - 1.0 / d) ** 2)
    assert abs(mean - float(_top_label_moment(d))) < 5 * se
    assert se < 2e-3 * mean  # the check has the resolution to see a 1% error


def test_exact_and_float_top_label_moments_agree():
    for d in (2, 10, 999, 1000):
        assert _top_label_moment(d, exact=False) == pytest.approx(
            float(_top_label_moment(d, exact=True)), rel=1e-13)
    # beyond the exact range the float path is used and stays continuous in d
    assert isinstance(_top_label_moment(1001), float)
    assert _top_label_moment(1001) == pytest.approx(float(_top_label_moment(1000)), rel=2e-3)


@pytest.fixture(scope="module")
def shrinkage_sample():
    return make_shrinkage_calibration(N_MC, random_state=12345, return_truth=True)


def test_closed_forms_against_monte_carlo_from_the_truth(shrinkage_sample):
    f, _, pi = shrinkage_sample
    d, s = 10, 0.5
    truth = SHRINKAGE_CALIBRATION_ERRORS
    canonical = squared_calibration_errors(f, pi)
    mean, se = _mean_se(canonical)
    assert abs(mean - truth["canonical"]) < 5 * se
    classwise = ((f - pi) ** 2).sum(axis=1)  # E[1{Y=k} | f_k] = pi_k: the per-class errors
    mean, se = _mean_se(classwise)
    assert abs(mean - truth["classwise"]) < 5 * se
    m = f.max(axis=1)
    top = (m - ((1.0 - s) * m + s / d)) ** 2  # the exact conditional accuracy given M
    mean, se = _mean_se(top)
    assert abs(mean - truth["top_label"]) < 5 * se
    assert se < 0.01 * truth["top_label"]


def test_closed_forms_against_the_labels_alone(shrinkage_sample):
    """The conditional probabilities claimed in the docstring, checked from ``(f, y)`` only:
    neighbour-pair products of ``s - 1{Y = ...}`` in the order of ``s = f_k`` or ``max f``."""
    f, y, _ = shrinkage_sample
    truth = SHRINKAGE_CALIBRATION_ERRORS
    pred = f.argmax(axis=1)
    terms = _pair_terms(f.max(axis=1), (y == pred).astype(float))
    mean, se = _mean_se(terms)
    assert abs(mean - truth["top_label"]) < 5 * se
    per_class = [_pair_terms(f[:, k], (y == k).astype(float)) for k in range(10)]
    mean = sum(t.mean() for t in per_class)
    se = math.sqrt(sum(t.var(ddof=1) / t.size for t in per_class))
    assert abs(mean - truth["classwise"]) < 5 * se


@pytest.mark.parametrize("d, s", [(2, 0.8), (3, 0.3), (25, 1.0)])
def test_closed_forms_against_monte_carlo_other_parameters(d, s):
    f, _, pi = make_shrinkage_calibration(300_000, d, strength=s, random_state=d,
                                          return_truth=True)
    truth = shrinkage_calibration_errors(d, s)
    mean, se = _mean_se(squared_calibration_errors(f, pi))
    assert abs(mean - truth["canonical"]) < 5 * se
    m = f.max(axis=1)
    mean, se = _mean_se((m - (1.0 - s) * m - s / d) ** 2)
    assert abs(mean - truth["top_label"]) < 5 * se


# --------------------------------------------------------------------------------------------
# shrinkage: the generator


def _binned_chi2(score, hit, prob, n_bins=10):
    """Chi-square statistic (``n_bins`` degrees of freedom) of the counts of ``hit`` in
    equal-mass bins of ``score`` against the sums of their probabilities ``prob``."""
    edges = np.quantile(score, np.linspace(0, 1, n_bins + 1)[1:-1])
    b = np.searchsorted(edges, score)
    obs = np.bincount(b, weights=hit, minlength=n_bins)
    exp = np.bincount(b, weights=prob, minlength=n_bins)
    var = np.bincount(b, weights=prob * (1.0 - prob), minlength=n_bins)
    return float(((obs - exp) ** 2 / var).sum())


def test_labels_follow_the_truth():
    f, y, pi = make_shrinkage_calibration(200_000, random_state=7, return_truth=True)
    m, hit = f.max(axis=1), (y == f.argmax(axis=1)).astype(float)
    crit = stats.chi2.ppf(1 - 1e-4, 10)
    assert _binned_chi2(m, hit, (1 - 0.5) * m + 0.05) < crit
    for k in (0, 4, 9):
        assert _binned_chi2(f[:, k], (y == k).astype(float), pi[:, k]) < crit
    counts = np.bincount(y, minlength=10)
    assert stats.chisquare(counts, pi.sum(axis=0) * (counts.sum() / pi.sum())).pvalue > 1e-4
    # the check has power: the calibrated law (pi = f) is rejected
    assert _binned_chi2(m, hit, m) > 100 * crit


def test_strength_zero_is_calibrated_and_one_is_uniform():
    f, _, pi = make_shrinkage_calibration(50, 4, strength=0.0, random_state=0, return_truth=True)
    assert_array_equal(pi, f)
    f, y, pi = make_shrinkage_calibration(20_000, 4, strength=1.0, random_state=0,
                                          return_truth=True)
    assert_allclose(pi, 0.25)
    assert stats.chisquare(np.bincount(y, minlength=4)).pvalue > 1e-4


def test_shapes_and_support():
    f, y, pi = make_shrinkage_calibration(1000, 3, random_state=0, return_truth=True)
    assert f.shape == pi.shape == (1000, 3) and y.shape == (1000,)
    assert f.dtype == pi.dtype == np.float64 and y.dtype == np.int64
    assert_allclose(f.sum(axis=1), 1.0)
    assert_allclose(pi.sum(axis=1), 1.0)
    assert f.min() >= 0.0 and set(np.unique(y)) == {0, 1, 2}
    f, y = make_shrinkage_calibration(1, 2, random_state=0)
    assert f.shape == (1, 2) and y.shape == (1,)


def test_draws_in_the_documented_order():
    n, d, s = 500, 6, 0.4
    rng = np.random.default_rng(3)
    e = rng.standard_exponential((n, d))
    f = e / e.sum(axis=1, keepdims=True)
    pi = (1 - s) * f + s / d
    u = rng.random(n)
    y = np.array([np.flatnonzero(np.cumsum(row) > ui)[0] for row, ui in zip(pi, u)])
    f2, y2, pi2 = make_shrinkage_calibration(n, d, strength=s, random_state=3,
                                             return_truth=True)
    assert_allclose(f2, f, rtol=0, atol=0)
    assert_allclose(pi2, pi, rtol=1e-15)
    assert_array_equal(y2, y)


def test_reproducible_and_seed_forms():
    a = make_shrinkage_calibration(100, random_state=11, return_truth=True)
    b = make_shrinkage_calibration(100, random_state=11, return_truth=True)
    c = make_shrinkage_calibration(100, random_state=np.random.default_rng(11),
                                   return_truth=True)
    for x, z, w in zip(a, b, c):
        assert_array_equal(x, z)
        assert_array_equal(x, w)
    d = make_shrinkage_calibration(100, random_state=np.random.RandomState(11))
    assert d[0].shape == (100, 10)
    assert not np.array_equal(make_shrinkage_calibration(100, random_state=12)[0], a[0])


def test_outputs_are_independent_and_truth_dict_is_fresh():
    f, y, pi = make_shrinkage_calibration(20, random_state=0, return_truth=True)
    f_copy = f.copy()
    pi[:] = 0.0
    assert_array_equal(f, f_copy)
    errors = shrinkage_calibration_errors()
    errors["canonical"] = -1.0
    assert shrinkage_calibration_errors()["canonical"] > 0
    assert SHRINKAGE_CALIBRATION_ERRORS["canonical"] > 0


@pytest.mark.parametrize("kwargs, exc, name", [
    ({"n_samples": 0}, ValueError, "n_samples"),
    ({"n_samples": 2.0}, TypeError, "n_samples"),
    ({"n_samples": True}, TypeError, "n_samples"),
    ({"n_classes": 1}, ValueError, "n_classes"),
    ({"n_classes": 3.0}, TypeError, "n_classes"),
    ({"strength": -0.01}, ValueError, "strength"),
    ({"strength": 1.01}, ValueError, "strength"),
    ({"strength": float("nan")}, ValueError, "strength"),
    ({"strength": "0.5"}, TypeError, "strength"),
    ({"return_truth": "yes"}, TypeError, "return_truth"),
    ({"random_state": "seed"}, (TypeError, ValueError), "random_state"),
])
def test_make_shrinkage_calibration_rejects(kwargs, exc, name):
    with pytest.raises(exc, match=name):
        make_shrinkage_calibration(**kwargs)


@pytest.mark.parametrize("kwargs, exc, name", [
    ({"n_classes": 1}, ValueError, "n_classes"),
    ({"n_classes": np.float64(4)}, TypeError, "n_classes"),
    ({"strength": -1}, ValueError, "strength"),
    ({"strength": 2}, ValueError, "strength"),
    ({"strength": None}, TypeError, "strength"),
])
def test_shrinkage_calibration_errors_rejects(kwargs, exc, name):
    with pytest.raises(exc, match=name):
        shrinkage_calibration_errors(**kwargs)


# --------------------------------------------------------------------------------------------
# smoothstep


def _poly_integral(coefs, lo=Fraction(0), hi=Fraction(1)):
    """Exact ``int_lo^hi sum_k coefs[k] x^k dx`` of a polynomial with rational coefficients."""
    return sum(a * (hi ** (k + 1) - lo ** (k + 1)) / (k + 1) for k, a in enumerate(coefs))


def _poly_square(coefs):
    out = [Fraction(0)] * (2 * len(coefs) - 1)
    for i, a in enumerate(coefs):
        for j, b in enumerate(coefs):
            out[i + j] += a * b
    return out


def test_smoothstep_error_is_one_over_210_exactly():
    g = [Fraction(0), Fraction(1), Fraction(-3), Fraction(2)]  # c - (3c^2 - 2c^3)
    assert _poly_integral(_poly_square(g)) == Fraction(1, 210)
    assert SMOOTHSTEP_CALIBRATION_ERROR == float(Fraction(1, 210))
    # top-label: confidence m ~ U(1/2, 1) with density 2, E[1{Y = argmax} | m] = pi(m)
    assert 2 * _poly_integral(_poly_square(g), lo=Fraction(1, 2)) == Fraction(1, 210)
    # the symmetry behind it: pi(1 - c) = 1 - pi(c)
    c = np.linspace(0, 1, 101)
    assert_allclose(3 * (1 - c) ** 2 - 2 * (1 - c) ** 3, 1 - (3 * c ** 2 - 2 * c ** 3),
                    atol=1e-15)


def test_smoothstep_against_monte_carlo():
    c, y, pi = make_smoothstep_calibration(N_MC, random_state=2026, return_truth=True)
    mean, se = _mean_se(squared_calibration_errors(c, pi))
    assert abs(mean - 1 / 210) < 5 * se
    # two-class canonical problem: twice the binary error
    p = np.column_stack([1 - c, c])
    mean, se = _mean_se(squared_calibration_errors(p, np.column_stack([1 - pi, pi])))
    assert abs(mean - 2 / 210) < 5 * se
    # from the labels alone: binary (class 1) and top-label (confidence max(c, 1 - c))
    mean, se = _mean_se(_pair_terms(c, y.astype(float)))
    assert abs(mean - 1 / 210) < 5 * se
    hit = (y == (c > 0.5)).astype(float)
    mean, se = _mean_se(_pair_terms(np.maximum(c, 1 - c), hit))
    assert abs(mean - 1 / 210) < 5 * se
    assert se < 0.05 / 210


def test_smoothstep_labels_follow_the_truth():
    c, y, pi = make_smoothstep_calibration(200_000, random_state=5, return_truth=True)
    crit = stats.chi2.ppf(1 - 1e-4, 10)
    assert _binned_chi2(c, y.astype(float), pi) < crit
    assert _binned_chi2(c, y.astype(float), c) > 10 * crit  # power: c itself is rejected


def test_smoothstep_draws_shapes_and_reproducibility():
    rng = np.random.default_rng(9)
    c = rng.random(300)
    y = (rng.random(300) < 3 * c ** 2 - 2 * c ** 3).astype(np.int64)
    c2, y2, pi2 = make_smoothstep_calibration(300, random_state=9, return_truth=True)
    assert_array_equal(c2, c)
    assert_array_equal(y2, y)
    assert_allclose(pi2, 3 * c ** 2 - 2 * c ** 3, rtol=1e-14, atol=1e-16)
    assert y2.dtype == np.int64 and c2.shape == pi2.shape == (300,)
    a = make_smoothstep_calibration(50, random_state=1)
    b = make_smoothstep_calibration(50, random_state=np.random.default_rng(1))
    assert_array_equal(a[0], b[0]) and assert_array_equal(a[1], b[1])
    assert not np.array_equal(make_smoothstep_calibration(50, random_state=2)[0], a[0])


@pytest.mark.parametrize("kwargs, exc, name", [
    ({"n_samples": 0}, ValueError, "n_samples"),
    ({"n_samples": 1.5}, TypeError, "n_samples"),
    ({"return_truth": 1}, TypeError, "return_truth"),
])
def test_make_smoothstep_calibration_rejects(kwargs, exc, name):
    with pytest.raises(exc, match=name):
        make_smoothstep_calibration(**kwargs)


# --------------------------------------------------------------------------------------------
# the binned calibration error lands near the truths (loose sanity check)

#: 4e5 samples and 50 equal-width bins (20 per coordinate for the 3-class canonical binning):
#: over 8 seeds the debiased binned estimates were within 1% of the truths on average (the
#: binning bias is downwards, of the order of the squared bin width) with a relative sd of at
#: most 1.3%; 6% is more than 4 sd from both sides.
SANITY_N, SANITY_REL = 400_000, 0.06


def _binned(y, p, mode, n_bins=50):
    return calibration_error(y, p, mode=mode, norm="l2", squared=True, debias=True,
                             n_bins=n_bins)


def test_calibration_error_lands_near_the_truths():
    f, y = make_shrinkage_calibration(SANITY_N, random_state=1)
    truth = SHRINKAGE_CALIBRATION_ERRORS
    assert _binned(y, f, "top_label") == pytest.approx(truth["top_label"], rel=SANITY_REL)
    # calibration_error averages the class-wise errors over the classes; the truth sums them
    assert 10 * _binned(y, f, "classwise") == pytest.approx(truth["classwise"], rel=SANITY_REL)
    # a canonical binning of a 10-class simplex is empty-celled; 3 classes bin well
    f, y = make_shrinkage_calibration(SANITY_N, 3, random_state=1)
    assert _binned(y, f, "canonical", n_bins=20) == pytest.approx(
        shrinkage_calibration_errors(3)["canonical"], rel=SANITY_REL)
    c, y = make_smoothstep_calibration(SANITY_N, random_state=1)
    for mode, factor in (("binary", 1), ("top_label", 1), ("canonical", 2)):
        assert _binned(y, c, mode) == pytest.approx(factor / 210, rel=SANITY_REL), mode
