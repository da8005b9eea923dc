"""``neg_skce_zscore`` keeps ranking where the p-values of ``skce_pvalue`` saturate."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV

from skcalib import get_scorer, get_scorer_names, make_calibration_scorer
from skcalib.scorers import skce_pvalue, skce_zscore


pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


# ---------------------------------------------------------------------------------------------
# 6. A calibration-test scorer that keeps ranking where the p-values saturate


class _Tempered(ClassifierMixin, BaseEstimator):
    """The true class probabilities ``softmax(logits)``, tempered: ``softmax(logits / T)``; the
    logits are the features ``X``."""

    def __init__(self, T=1.0):
        self.T = T

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict_proba(self, X):
        Z = np.asarray(X) / self.T
        P = np.exp(Z - Z.max(axis=1, keepdims=True))
        return P / P.sum(axis=1, keepdims=True)

    def predict(self, X):
        return self.classes_[np.argmax(X, axis=1)]


def test_skce_zscore_keeps_ranking_where_pvalues_saturate():
    rng = np.random.default_rng(0)
    n = 3000
    L = 1.5 * rng.normal(size=(n, 3))
    P = np.exp(L) / np.exp(L).sum(axis=1, keepdims=True)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=2)
    temperatures = [0.7, 0.5, 0.35]  # more and more overconfident
    models = [_Tempered(T).fit(L, y) for T in temperatures]
    pvalues = [get_scorer("skce_pvalue")(m, L, y) for m in models]
    assert pvalues == [1 / 1001] * 3  # saturated: no ranking
    z = [get_scorer("neg_skce_zscore")(m, L, y) for m in models]
    assert z[0] > z[1] > z[2]  # the less miscalibrated, the greater
    assert len(set(np.round(z, 6))) == 3
    # the calibrated model is ranked first, its z about standard normal
    z_true = get_scorer("neg_skce_zscore")(_Tempered(1.0).fit(L, y), L, y)
    assert z_true > z[0] and abs(z_true) < 3
    # a model search picks by it
    grid = GridSearchCV(_Tempered(), {"T": temperatures + [1.0]},
                        scoring=get_scorer("neg_skce_zscore"), cv=3).fit(L, y)
    assert grid.best_params_ == {"T": 1.0}


def test_skce_zscore_is_the_block_tests_statistic():
    from skcalib.stats import skce_test

    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, size=500)
    y = (rng.random(500) < p ** 0.5).astype(int)
    P = np.column_stack([1 - p, p])
    res = skce_test(y, P, method="block", block_size="sqrt", random_state=0)
    assert skce_zscore(y, P) == res.statistic
    assert_allclose(res.statistic, res.estimate / res.standard_error, rtol=1e-12)
    with pytest.raises(TypeError, match="method"):
        skce_zscore(y, P, method="bootstrap")
    with pytest.raises(TypeError, match="method"):
        make_calibration_scorer("skce_zscore", method="bootstrap")(
            LogisticRegression().fit(P, y), P, y)


def test_skce_pvalue_says_it_is_a_test_not_a_ranking():
    assert "A test, not a ranking" in skce_pvalue.__doc__
    assert "neg_skce_zscore" in skce_pvalue.__doc__
    assert "neg_skce_zscore" in get_scorer_names()


def test_skce_zscore_of_degenerate_blocks_is_finite_or_signed_infinity():
    """Equal block estimates have no spread: z is 0 when they are all zero (every prediction
    certain and right), +inf when they are all one positive value -- not nan, not a ratio of
    rounding errors."""
    y = np.array([0, 1] * 50)
    assert skce_zscore(y, np.eye(2)[y]) == 0.0
    assert skce_zscore(y, np.eye(2)[1 - y]) == np.inf  # certain and always wrong
    rng = np.random.default_rng(0)
    assert np.isfinite(skce_zscore(rng.integers(0, 2, 100), np.full((100, 2), 0.5)))
