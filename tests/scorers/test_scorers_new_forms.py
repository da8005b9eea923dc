"""The regression scorers on models whose ``predict_distribution`` gives the new forms (issue 23):
an ensemble's Empirical predictions and a quantile regressor's Quantiles. Every scorer equals its
metric, takes sample_weight, and selects the calibrated spread in GridSearchCV."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import norm
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV, KFold

import skcalib
from skcalib import get_scorer
from skcalib.distributions import Empirical, Quantiles

LEVELS = np.linspace(0.05, 0.95, 19)


class SpreadRegressor(RegressorMixin, BaseEstimator):
    """A linear model whose predictive law is N(mean, (spread * residual sd)^2), given as
    ``n_draws`` draws (``form="empirical"``) or as quantiles at LEVELS (``"quantiles"``)."""

    def __init__(self, form="empirical", spread=1.0, n_draws=200):
        self.form = form
        self.spread = spread
        self.n_draws = n_draws

    def fit(self, X, y):
        self.model_ = LinearRegression().fit(X, y)
        self.sd_ = float(np.std(y - self.model_.predict(X)))
        return self

    def predict(self, X):
        return self.model_.predict(X)

    def predict_distribution(self, X):
        mu = self.predict(X)
        s = self.spread * self.sd_
        if self.form == "empirical":
            z = np.random.default_rng(0).normal(size=(len(mu), self.n_draws))
            return Empirical(mu[:, None] + s * z)
        return Quantiles(mu[:, None] + s * norm.ppf(LEVELS)[None, :], LEVELS)


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ [1.0, -0.5, 0.2] + rng.normal(size=n)
    return X, y


def _needs(form, name):
    """Scorers that need a hook Quantiles may not have on this branch (its _moments; its W2
    for the default kernels of SKCE/UCME): skipped, not hidden, until it has them."""
    if form != "quantiles":
        return
    if name in ("neg_ence", "neg_uce") and not hasattr(Quantiles, "_moments"):
        pytest.skip("Quantiles has no _moments on this branch (ENCE/UCE need the variances)")


#: scorer name -> the metric it must equal, on (y, the model's distribution)
SCORERS = {
    "neg_crps": lambda y, D, **kw: -skcalib.crps(y, D, **kw),
    "neg_pinball_loss": lambda y, D, **kw: -skcalib.pinball_loss(y, D, **kw),
    "neg_interval_score": lambda y, D, **kw: -skcalib.interval_score(y, D, level=0.9, **kw),
    "neg_miscalibration_area": lambda y, D, **kw: -skcalib.miscalibration_area(y, D, **kw),
    "neg_interval_coverage_error":
        lambda y, D, **kw: -skcalib.interval_coverage_error(y, D, **kw),
    "neg_quantile_calibration_error":
        lambda y, D, **kw: -skcalib.quantile_calibration_error(y, D, **kw),
    "neg_ence": lambda y, D, **kw: -skcalib.ence(y, D, **kw),
    "neg_uce": lambda y, D, **kw: -skcalib.uce(y, D, **kw),
}


@pytest.mark.parametrize("form", ["empirical", "quantiles"])
@pytest.mark.parametrize("name", sorted(SCORERS))
def test_scorer_equals_the_metric_with_and_without_weights(form, name):
    _needs(form, name)
    X, y = _data()
    model = SpreadRegressor(form=form).fit(X[:400], y[:400])
    Xt, yt = X[400:], y[400:]
    D = model.predict_distribution(Xt)
    scorer = get_scorer(name)
    assert_allclose(scorer(model, Xt, yt), SCORERS[name](yt, D), rtol=1e-12)
    w = np.random.default_rng(1).random(len(yt))
    assert_allclose(scorer(model, Xt, yt, sample_weight=w), SCORERS[name](yt, D, sample_weight=w),
                    rtol=1e-12)
    assert scorer(model, Xt, yt, sample_weight=w) != scorer(model, Xt, yt)


@pytest.mark.parametrize("form", ["empirical", "quantiles"])
def test_pit_pvalue_scorer(form):
    X, y = _data()
    model = SpreadRegressor(form=form).fit(X[:400], y[:400])
    value = get_scorer("pit_pvalue")(model, X[400:], y[400:])
    assert 0.0 <= value <= 1.0
    assert get_scorer("pit_pvalue")(model.set_params(spread=0.3), X[400:], y[400:]) < 1e-6


@pytest.mark.parametrize("form", ["empirical", "quantiles"])
@pytest.mark.parametrize("name", ["neg_pinball_loss", "neg_interval_score", "neg_crps"])
def test_gridsearch_selects_the_calibrated_spread(form, name):
    X, y = _data(900, 2)
    search = GridSearchCV(SpreadRegressor(form=form), {"spread": [0.4, 1.0, 2.5]},
                          scoring=get_scorer(name), cv=KFold(3, shuffle=True, random_state=0))
    search.fit(X, y)
    assert search.best_params_["spread"] == 1.0
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_interval_score_scorer_level_is_documented_default():
    assert "level=0.9" in repr(get_scorer("neg_interval_score"))
    scorer = skcalib.make_calibration_scorer("interval_score", level=0.5)
    X, y = _data()
    model = SpreadRegressor(form="quantiles").fit(X, y)
    D = model.predict_distribution(X)
    assert_allclose(scorer(model, X, y), -skcalib.interval_score(y, D, level=0.5), rtol=1e-12)


def test_nll_scorer_refuses_empirical_clearly():
    X, y = _data()
    model = SpreadRegressor(form="empirical").fit(X, y)
    with pytest.raises(TypeError, match="Empirical.*crps"):
        get_scorer("neg_nll")(model, X, y)
