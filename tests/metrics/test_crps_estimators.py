"""CRPS estimators of sample-based predictions (``crps(..., estimator=)``): the plug-in CRPS (the
default of Empirical) and the fair ensemble CRPS (Ferro 2014) against brute-force double sums,
against values of properscoring 0.1 and scoringrules 0.10.0 (computed in a scratch environment and
stored here: the project never imports them), and against their expected bias."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

import skcalib
from skcalib.distributions import Empirical, Normal

# properscoring.crps_ensemble(y, X[, weights=W]) and scoringrules.crps_ensemble(y, X,
# estimator="fair"[, ens_w=W]) on these inputs (2026-11-27, /work/scratch/peers).
X = np.array([[-0.53, 0.988, -2.476, 1.057, 1.516],
              [1.365, -2.154, 1.855, -1.794, 1.36],
              [-0.143, 3.244, 0.047, -2.397, 1.538],
              [1.855, -3.734, -0.243, -0.04, 1.926]])
Y = np.array([-0.811, 1.855, -3.547, 1.775])        # Y[1] is one of its row's draws
W = np.array([[0.33, 1.0, 0.83, 0.18, 0.84],
              [0.71, 0.38, 0.18, 0.1, 0.65],
              [0.7, 0.39, 0.46, 0.75, 0.73],
              [0.46, 0.39, 0.6, 0.58, 0.98]])
PROPERSCORING_PLAIN = [0.8223199999999998, 0.8344400000000001, 2.96776, 0.8411599999999999]
PROPERSCORING_WEIGHTED = [0.9185303389897552, 0.5989594402509559, 2.709901817904563,
                          0.6001932980872177]
SCORINGRULES_FAIR = [0.6308999999999999, 0.6108999999999998, 2.7085000000000004,
                     0.5728000000000002]
SCORINGRULES_FAIR_WEIGHTED = [0.6402892020897841, 0.34852424257592607, 2.438775865888257,
                              0.33413244268447007]


def _brute(x, w, y, fair):
    w = np.ones_like(x) if w is None else np.asarray(w, float)
    w = w / w.sum()
    a = np.sum(w * np.abs(x - y))
    pairs = sum(w[k] * w[l] * abs(x[k] - x[l])
                for k in range(x.size) for l in range(x.size) if k != l)
    return a - 0.5 * pairs / ((1.0 - np.sum(w * w)) if fair else 1.0)


def test_against_peers():
    plain = skcalib.crps(Y, Empirical(X), reduction="none")
    assert_allclose(plain, PROPERSCORING_PLAIN, rtol=1e-13)
    assert_allclose(skcalib.crps(Y, Empirical(X, W), reduction="none"), PROPERSCORING_WEIGHTED,
                    rtol=1e-13)
    assert_allclose(skcalib.crps(Y, Empirical(X), reduction="none", estimator="fair"),
                    SCORINGRULES_FAIR, rtol=1e-13)
    assert_allclose(skcalib.crps(Y, Empirical(X, W), reduction="none", estimator="fair"),
                    SCORINGRULES_FAIR_WEIGHTED, rtol=1e-13)
    assert skcalib.crps(Y, Empirical(X), estimator=None) == skcalib.crps(Y, Empirical(X))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("fair", [False, True])
def test_against_brute_force_double_sums(weighted, fair):
    rng = np.random.default_rng(11)
    n, m = 9, 7
    x = np.round(rng.normal(size=(n, m)), 1)          # rounding makes ties
    x[:, 1] = x[:, 0]
    w = rng.uniform(0.0, 1.0, size=(n, m)) if weighted else None
    if weighted:
        w[0, 3] = 0.0                                  # zero-weight draw
    y = rng.normal(size=n)
    y[2] = x[2, 4]
    got = skcalib.crps(y, Empirical(x, w), reduction="none",
                       estimator="fair" if fair else None)
    expect = [_brute(x[i], None if w is None else w[i], y[i], fair) for i in range(n)]
    assert_allclose(got, expect, rtol=1e-12, atol=1e-15)
    # many row blocks: the blocked evaluation does not depend on the block size
    import skcalib.distributions._empirical as mod
    old = mod._CRPS_BLOCK_ITEMS
    try:
        mod._CRPS_BLOCK_ITEMS = 2 * m
        again = skcalib.crps(y, Empirical(x, w), reduction="none",
                             estimator="fair" if fair else None)
    finally:
        mod._CRPS_BLOCK_ITEMS = old
    assert_allclose(again, got, rtol=1e-14, atol=1e-15)


def test_fair_is_unbiased_and_plug_in_biased_by_half_mean_difference():
    # m = 4 standard normal draws per row, targets N(0, 1) independent of them: the mean over
    # rows estimates E CRPS(N(0, 1), y) = 1 / sqrt(pi) (the fair one), and the plug-in one exceeds
    # it by E|X - X'| / (2 m) = 1 / (sqrt(pi) m)
    rng = np.random.default_rng(12)
    n, m = 200_000, 4
    x = rng.normal(size=(n, m))
    y = rng.normal(size=n)
    d = Empirical(x)
    fair = skcalib.crps(y, d, estimator="fair", reduction="none")
    plug = skcalib.crps(y, d, reduction="none")
    exact = skcalib.crps(y, Normal(np.zeros(n), 1.0), reduction="none")
    se = np.std(fair - exact) / math.sqrt(n)
    assert abs(np.mean(fair - exact)) < 4 * se
    bias = 1.0 / (math.sqrt(math.pi) * m)
    assert abs(np.mean(plug - exact) - bias) < 4 * np.std(plug - exact) / math.sqrt(n)
    assert np.mean(plug - exact) > 10 * se          # the plug-in bias is clearly visible
    # for equal weights the two differ by exactly E|X - X'| / (2 (m - 1))
    spread = np.mean(np.abs(x[:, :, None] - x[:, None, :]), axis=(1, 2))
    assert_allclose(plug - fair, spread / (2 * (m - 1)), rtol=1e-10, atol=1e-13)


def test_fair_approaches_normal_as_m_grows():
    rng = np.random.default_rng(13)
    n = 30
    loc, scale = rng.normal(size=n), rng.uniform(0.5, 2.0, size=n)
    y = rng.normal(size=n)
    exact = skcalib.crps(y, Normal(loc, scale), reduction="none")
    m = 20_000
    x = loc[:, None] + scale[:, None] * rng.normal(size=(n, m))
    got = skcalib.crps(y, Empirical(x), reduction="none", estimator="fair")
    sd = np.sqrt(scale ** 2 + (loc - y) ** 2) / math.sqrt(m)
    assert np.all(np.abs(got - exact) < 5 * sd)


def test_sample_weight_and_large_offsets():
    d = Empirical(X, W)
    sw = np.array([1.0, 2.0, 0.5, 1.0])
    vals = skcalib.crps(Y, d, estimator="fair", reduction="none")
    assert_allclose(skcalib.crps(Y, d, estimator="fair", sample_weight=sw),
                    np.average(vals, weights=sw), rtol=1e-14)
    far = skcalib.crps(Y + 1e8, Empirical(X + 1e8, W), estimator="fair", reduction="none")
    assert_allclose(far, vals, rtol=1e-7)


def test_errors_name_the_argument_and_the_supported_estimators():
    d = Empirical(X)
    with pytest.raises(ValueError, match="estimator must be None or one of 'fair', "
                                         "'quantile_score'; got 'unbiased'"):
        skcalib.crps(Y, d, estimator="unbiased")
    with pytest.raises(ValueError, match="estimator must be None"):
        skcalib.crps(Y, d, estimator=["fair"])
    with pytest.raises(ValueError, match=r"Normal.*None"):
        skcalib.crps([0.0], Normal([0.0], 1.0), estimator="fair")
    with pytest.raises(ValueError, match=r"Empirical.*'fair'"):
        skcalib.crps(Y, d, estimator="quantile_score")
    with pytest.raises(ValueError, match="two draws of positive weight.*row 0"):
        skcalib.crps([0.0], Empirical([[1.0]]), estimator="fair")
    with pytest.raises(ValueError, match="row 1"):
        skcalib.crps([0.0, 0.0], Empirical([[1.0, 2.0], [1.0, 2.0]], [[1, 1], [0, 3]]),
                     estimator="fair")
    # the plug-in CRPS of one draw is the absolute error
    assert skcalib.crps([0.5], Empirical([[2.0]])) == 1.5
