"""predict_distribution on the forms models give besides return_std: averaging ensembles (an
Empirical of the members) and quantile regressors (Quantiles), and MultiQuantileRegressor.

The ensembles are checked against an independent recomputation: each member's prediction,
with the feature subsets and weights the ensemble itself uses, and the ensemble's predict as the
members' (weighted) mean."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.datasets import make_regression
from sklearn.ensemble import (AdaBoostRegressor, BaggingRegressor, ExtraTreesRegressor,
                              GradientBoostingRegressor, HistGradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor, StackingRegressor,
                              VotingRegressor)
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.linear_model import BayesianRidge, LinearRegression, QuantileRegressor, Ridge
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import skcalib
from skcalib import MultiQuantileRegressor
from skcalib._predictions import check_distribution_capable, quantile_level
from skcalib.distributions import Categorical, Empirical, Normal, Quantiles
from skcalib.scorers import predict_distribution

X, Y = make_regression(n_samples=120, n_features=4, noise=10.0, random_state=0)
XT = X[:15]


# --------------------------------------------------------------------------------------------
# ensembles


@pytest.mark.parametrize("make", [
    lambda: RandomForestRegressor(n_estimators=12, random_state=0),
    lambda: ExtraTreesRegressor(n_estimators=7, random_state=0),
    lambda: BaggingRegressor(n_estimators=6, max_features=2, random_state=0),
    lambda: BaggingRegressor(Ridge(), n_estimators=5, max_features=0.75, bootstrap_features=True,
                             random_state=0),
])
def test_averaging_ensembles_become_the_members_draws(make):
    est = make().fit(X, Y)
    d = predict_distribution(est, XT)
    assert type(d) is Empirical and d.n_draws == len(est.estimators_)
    features = getattr(est, "estimators_features_", [slice(None)] * len(est.estimators_))
    want = np.column_stack([m.predict(XT[:, f]) for m, f in zip(est.estimators_, features)])
    np.testing.assert_array_equal(d.samples, want)
    np.testing.assert_allclose(d.mean, est.predict(XT), rtol=1e-12, atol=1e-10)


def test_voting_weights_weight_the_members_and_dropped_ones_are_skipped():
    est = VotingRegressor([("a", LinearRegression()), ("off", "drop"), ("b", Ridge(alpha=50.0))],
                          weights=[1.0, 7.0, 3.0]).fit(X, Y)
    d = predict_distribution(est, XT)
    np.testing.assert_allclose(d.weights, np.broadcast_to([0.25, 0.75], (15, 2)))
    np.testing.assert_allclose(d.mean, est.predict(XT), rtol=1e-12)


def test_data_frames_reach_members_without_feature_name_warnings():
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    for est in (RandomForestRegressor(n_estimators=5, random_state=0),
                BaggingRegressor(n_estimators=4, max_features=3, random_state=0),
                VotingRegressor([("p", make_pipeline(StandardScaler(), Ridge())),
                                 ("l", LinearRegression())])):
        est.fit(frame, Y)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            d = predict_distribution(est, frame.iloc[:15])
        np.testing.assert_allclose(d.mean, est.predict(frame.iloc[:15]), rtol=1e-12)


def test_return_std_comes_before_members_and_classifiers_stay_categorical():
    class ForestWithStd(RandomForestRegressor):
        def predict(self, X, return_std=False):
            mean = super().predict(X)
            return (mean, np.full(mean.shape, 2.0)) if return_std else mean

    d = predict_distribution(ForestWithStd(n_estimators=3, random_state=0).fit(X, Y), XT)
    assert type(d) is Normal and np.all(d.scale == 2.0)
    labels = (Y > 0).astype(int)
    d = predict_distribution(RandomForestClassifier(n_estimators=3, random_state=0)
                             .fit(X, labels), XT)
    assert type(d) is Categorical
    assert type(predict_distribution(GaussianProcessRegressor().fit(X[:30], Y[:30]), XT)) is Normal


@pytest.mark.parametrize("est", [GradientBoostingRegressor(n_estimators=5),
                                 AdaBoostRegressor(n_estimators=5)])
def test_boosting_is_refused_by_name(est):
    for model in (est, clone(est).fit(X, Y)):          # before fit too (RecalibratedRegressor)
        with pytest.raises(TypeError, match=r"has estimators_ that are not members whose "
                                            r"predictions average .*MultiQuantileRegressor"):
            check_distribution_capable(model)
    with pytest.raises(TypeError, match="are not members"):
        predict_distribution(est.fit(X, Y), XT)


class _Stages(RegressorMixin, BaseEstimator):
    """A duck-typed additive model with estimators_ (boosting that no class check knows)."""

    def fit(self, X, y):
        first = LinearRegression().fit(X, y)
        second = Ridge().fit(X, y - first.predict(X))
        self.estimators_ = [first, second]
        return self

    def predict(self, X):
        return sum(m.predict(X) for m in self.estimators_)


def test_duck_typed_boosting_is_caught_by_the_mean_check():
    with pytest.raises(ValueError, match="differs from its predict.*not an averaging ensemble"):
        predict_distribution(_Stages().fit(X, Y), XT)


class _Mixed(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        self.estimators_ = [LinearRegression().fit(X, y),
                            LinearRegression().fit(X, np.column_stack([y, y]))]
        return self

    def predict(self, X):
        return self.estimators_[0].predict(X)


def test_members_with_different_outputs_are_refused():
    with pytest.raises(ValueError, match=r"member 1 of _Mixed \(LinearRegression\) predicts an "
                                         r"array of shape \(15, 2\)"):
        predict_distribution(_Mixed().fit(X, Y), XT)


def test_unfitted_and_multi_output_ensembles_are_refused():
    forest = RandomForestRegressor(n_estimators=3)
    assert check_distribution_capable(forest) is forest       # recognised before fit
    with pytest.raises(NotFittedError):
        predict_distribution(forest, XT)
    forest.fit(X, np.column_stack([Y, -Y]))
    with pytest.raises(ValueError, match="predicts 2 outputs"):
        predict_distribution(forest, XT)


def test_negative_voting_weights_are_refused():
    est = VotingRegressor([("a", LinearRegression()), ("b", Ridge())], weights=[2.0, -1.0])
    with pytest.raises(ValueError, match="non-negative"):
        predict_distribution(est.fit(X, Y), XT)


def test_ensembles_work_in_scorers_and_the_metrics():
    forest = RandomForestRegressor(n_estimators=20, min_samples_leaf=5, random_state=0)
    score = skcalib.get_scorer("neg_crps")(forest.fit(X, Y), X[60:], Y[60:])
    d = predict_distribution(forest, X[60:])
    assert score == pytest.approx(-skcalib.crps(Y[60:], d))
    assert np.isfinite(skcalib.skce(Y[60:], d, random_state=0))


# --------------------------------------------------------------------------------------------
# lists and dicts of quantile regressors


def _gb(level):
    return GradientBoostingRegressor(loss="quantile", alpha=level, n_estimators=10,
                                     random_state=0).fit(X, Y)


def test_levels_are_read_from_each_kind_of_model():
    assert quantile_level(HistGradientBoostingRegressor(loss="quantile", quantile=0.3)) == 0.3
    assert quantile_level(GradientBoostingRegressor(loss="quantile", alpha=0.7)) == 0.7
    assert quantile_level(QuantileRegressor(quantile=0.2, alpha=0.5)) == 0.2   # alpha: penalty
    assert quantile_level(make_pipeline(StandardScaler(), QuantileRegressor(quantile=0.4))) == 0.4
    assert quantile_level(GradientBoostingRegressor(alpha=0.7)) is None       # squared error
    assert quantile_level(HistGradientBoostingRegressor()) is None
    assert quantile_level(LinearRegression()) is None

    class LGBMLike(BaseEstimator):                     # LightGBM's and XGBoost's names
        def __init__(self, objective="quantile", alpha=0.9, quantile_alpha=None):
            self.objective, self.alpha, self.quantile_alpha = objective, alpha, quantile_alpha

    assert quantile_level(LGBMLike()) == 0.9
    assert quantile_level(LGBMLike(objective="regression")) is None
    assert quantile_level(LGBMLike(objective="reg:quantileerror", quantile_alpha=0.1)) == 0.1


def test_a_list_of_quantile_models_becomes_quantiles_sorted_by_level():
    models = [_gb(0.9), _gb(0.1), _gb(0.5)]
    d = predict_distribution(models, XT)
    assert type(d) is Quantiles
    np.testing.assert_array_equal(d.levels, [0.1, 0.5, 0.9])
    want = np.sort(np.column_stack([models[1].predict(XT), models[2].predict(XT),
                                    models[0].predict(XT)]), axis=1)
    np.testing.assert_array_equal(d.values, want)
    same = predict_distribution(tuple(models), XT)
    np.testing.assert_array_equal(same.values, d.values)


def test_a_dict_gives_the_levels_and_they_must_agree_with_the_models():
    lin = [LinearRegression().fit(X, Y + shift) for shift in (-5.0, 5.0)]
    d = predict_distribution({0.8: lin[1], 0.2: lin[0]}, XT)
    np.testing.assert_array_equal(d.levels, [0.2, 0.8])
    np.testing.assert_allclose(d.values[:, 1] - d.values[:, 0], 10.0)
    with pytest.raises(ValueError, match=r"estimator\[0.3\] is a GradientBoostingRegressor "
                                         r"fitted for the level 0.1"):
        predict_distribution({0.3: _gb(0.1), 0.6: _gb(0.6)}, XT)


@pytest.mark.parametrize("models, exc, match", [
    (lambda: [_gb(0.1), LinearRegression().fit(X, Y)], TypeError,
     r"estimator\[1\] \(LinearRegression\) is not a quantile regressor.*dict \{level: model\}"),
    (lambda: [_gb(0.1), (0.5, _gb(0.5))], TypeError,
     r"estimator\[1\] must be a fitted quantile regressor; got tuple"),
    (lambda: [_gb(0.5), _gb(0.1), _gb(0.5)], ValueError, "two models of the level 0.5"),
    (lambda: [_gb(0.5)], ValueError, "at least two levels; got 1"),
    (lambda: {0.2: _gb(0.2), 1.5: LinearRegression()}, ValueError,
     "strictly between 0 and 1; got 1.5"),
    (lambda: {"low": _gb(0.2), 0.5: _gb(0.5)}, TypeError, "keys of estimator must be quantile "
                                                          "levels"),
    (lambda: {0.2: _gb(0.2), 0.5: "model"}, TypeError, r"estimator\[0.5\] must be a fitted"),
])
def test_bad_collections_are_refused_with_the_reason(models, exc, match):
    with pytest.raises(exc, match=match):
        predict_distribution(models(), XT)


def test_unfitted_quantile_models_and_bad_predictions():
    with pytest.raises(NotFittedError):
        predict_distribution([_gb(0.1), GradientBoostingRegressor(loss="quantile", alpha=0.9)],
                             XT)
    two = LinearRegression().fit(X, np.column_stack([Y, Y]))
    with pytest.raises(ValueError, match=r"model 1 \(LinearRegression\) predicts shape \(15, 2\)"):
        predict_distribution({0.1: _gb(0.1), 0.9: two}, XT)


def test_capability_check_knows_the_new_forms():
    with pytest.raises(TypeError) as err:
        check_distribution_capable(LinearRegression())
    msg = str(err.value)
    assert "averaging ensemble with estimators_" in msg
    assert "a list of fitted quantile regressors (or a dict {level: model})" in msg
    with pytest.raises(TypeError, match=r"single quantile at level 0.9: pass several"):
        check_distribution_capable(HistGradientBoostingRegressor(loss="quantile", quantile=0.9))
    with pytest.raises(TypeError, match=r"got an array \(list\)"):
        check_distribution_capable([[0.0, 1.0]])
    models = [_gb(0.1), _gb(0.9)]
    assert check_distribution_capable(models) is models
    with pytest.raises(ValueError, match="two models of the level"):
        check_distribution_capable([_gb(0.1), _gb(0.1)])


# --------------------------------------------------------------------------------------------
# MultiQuantileRegressor


def test_multi_quantile_regressor_fits_one_clone_per_level():
    base = HistGradientBoostingRegressor(loss="quantile", max_iter=15, random_state=0)
    before = base.get_params()
    model = MultiQuantileRegressor(base, levels=[0.9, 0.1, 0.5]).fit(X, Y)
    np.testing.assert_array_equal(model.levels_, [0.1, 0.5, 0.9])
    assert [m.quantile for m in model.estimators_] == [0.1, 0.5, 0.9]
    assert base.get_params() == before and not hasattr(base, "n_iter_")   # untouched
    d = predict_distribution(model, XT)
    assert type(d) is Quantiles
    np.testing.assert_array_equal(d.levels, [0.1, 0.5, 0.9])
    alone = clone(base).set_params(quantile=0.9).fit(X, Y)
    raw = np.column_stack([m.predict(XT) for m in model.estimators_])
    np.testing.assert_array_equal(d.values, np.sort(raw, axis=1))
    np.testing.assert_array_equal(raw[:, 2], alone.predict(XT))
    np.testing.assert_array_equal(model.predict(XT), d.ppf(0.5))
    assert model.n_features_in_ == 4


def test_multi_quantile_regressor_with_pipelines_weights_and_level_param():
    pipe = make_pipeline(StandardScaler(), QuantileRegressor(alpha=0.0))
    model = MultiQuantileRegressor(pipe, levels=(0.25, 0.75)).fit(X, Y)
    assert [m[-1].quantile for m in model.estimators_] == [0.25, 0.75]
    w = np.where(np.arange(len(Y)) < 60, 1.0, 0.0)
    weighted = MultiQuantileRegressor(GradientBoostingRegressor(loss="quantile", n_estimators=5,
                                                                random_state=0),
                                      levels=(0.2, 0.8)).fit(X, Y, sample_weight=w)
    plain = GradientBoostingRegressor(loss="quantile", alpha=0.8, n_estimators=5,
                                      random_state=0).fit(X, Y, sample_weight=w)
    np.testing.assert_allclose(weighted.estimators_[1].predict(XT), plain.predict(XT))
    gb = GradientBoostingRegressor(n_estimators=5, random_state=0, loss="quantile")
    explicit = MultiQuantileRegressor(gb, levels=(0.2, 0.8), level_param="alpha").fit(X, Y)
    auto = MultiQuantileRegressor(gb, levels=(0.2, 0.8)).fit(X, Y)
    np.testing.assert_array_equal(explicit.predict_distribution(XT).values,
                                  auto.predict_distribution(XT).values)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(estimator=LinearRegression()), ValueError,
     "cannot tell which parameter of LinearRegression sets the quantile level"),
    (dict(levels=(0.5,)), ValueError, "at least two quantile levels"),
    (dict(levels=(0.1, 0.5, 0.1)), ValueError, "0.1 is given twice"),
    (dict(levels=(0.0, 0.5)), ValueError, "strictly between 0 and 1; got 0.0"),
    (dict(levels=("a", "b")), TypeError, "levels must be"),
    (dict(levels=[[0.1, 0.2]]), TypeError, "1-D sequence"),
    (dict(level_param="quantiles"), ValueError, "level_param='quantiles' is not a parameter"),
    (dict(level_param=3), TypeError, "level_param must be None or a parameter name"),
    (dict(crossing="ignore"), ValueError, "crossing"),
    (dict(estimator="hgb"), TypeError, "estimator must be a scikit-learn regressor"),
])
def test_multi_quantile_regressor_validates_its_parameters(kwargs, exc, match):
    params = dict(estimator=HistGradientBoostingRegressor(loss="quantile", max_iter=3))
    params.update(kwargs)
    with pytest.raises(exc, match=match):
        MultiQuantileRegressor(**params).fit(X, Y)


def test_multi_quantile_regressor_is_not_fitted_before_fit():
    with pytest.raises(NotFittedError):
        MultiQuantileRegressor(QuantileRegressor()).predict(XT)


def test_multi_quantile_regressor_in_grid_search_with_skcalib_scorers():
    model = MultiQuantileRegressor(GradientBoostingRegressor(loss="quantile", n_estimators=10,
                                                             random_state=0),
                                   levels=(0.1, 0.5, 0.9))
    search = GridSearchCV(model, {"estimator__max_depth": [1, 3]}, cv=3,
                          scoring={"crps": skcalib.get_scorer("neg_crps"),
                                   "qce": skcalib.get_scorer("neg_quantile_calibration_error")},
                          refit="crps", error_score="raise").fit(X, Y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_crps"]))
    assert isinstance(search.best_estimator_.predict_distribution(XT), Quantiles)


def test_multi_quantile_regressor_passes_scikit_learn_checks():
    from sklearn.utils.estimator_checks import check_estimator
    for est in (MultiQuantileRegressor(QuantileRegressor(alpha=0.0), levels=(0.25, 0.5, 0.75)),
                MultiQuantileRegressor(HistGradientBoostingRegressor(loss="quantile",
                                                                      max_iter=10),
                                       levels=(0.25, 0.5, 0.75))):
        failed = [r["check_name"] for r in check_estimator(est, on_fail=None)
                  if r["status"] == "failed"]
        assert not failed


def test_stacking_keeps_reading_return_std_of_its_final_estimator():
    stack = StackingRegressor([("l", LinearRegression()), ("r", Ridge())],
                              final_estimator=BayesianRidge()).fit(X, Y)
    assert type(predict_distribution(stack, XT)) is Normal


def test_pipelines_ending_in_an_ensemble_or_a_hook_are_read_through_their_final_step():
    pipe = make_pipeline(StandardScaler(), RandomForestRegressor(n_estimators=4, random_state=0))
    pipe.fit(X, Y)
    d = predict_distribution(pipe, XT)
    assert type(d) is Empirical and d.n_draws == 4
    np.testing.assert_allclose(d.mean, pipe.predict(XT), rtol=1e-12)
    quantile_pipe = make_pipeline(StandardScaler(), MultiQuantileRegressor(
        QuantileRegressor(alpha=0.0), levels=(0.2, 0.8))).fit(X, Y)
    d = predict_distribution(quantile_pipe, XT)
    assert type(d) is Quantiles
    np.testing.assert_array_equal(d.ppf(0.5), quantile_pipe.predict(XT))
    gp = make_pipeline(StandardScaler(), BayesianRidge()).fit(X, Y)
    assert type(predict_distribution(gp, XT)) is Normal               # return_std as before


def test_recalibrated_regressor_fits_ensembles_and_multi_quantile_models():
    # the capability check at fit (on the unfitted model) and predict_distribution of the
    # cross-fitted clones; recalibrator="none" keeps the form (the recalibrators of the new
    # families are theirs to test)
    from skcalib.recalibration import RecalibratedRegressor
    for est, form in ((RandomForestRegressor(n_estimators=5, random_state=0), Empirical),
                      (MultiQuantileRegressor(QuantileRegressor(alpha=0.0), levels=(0.2, 0.8)),
                       Quantiles)):
        model = RecalibratedRegressor(est, recalibrator="none").fit(X, Y)
        assert type(model.predict_distribution(XT)) is form
    with pytest.raises(TypeError, match="not members whose predictions average"):
        RecalibratedRegressor(GradientBoostingRegressor(), recalibrator="none").fit(X, Y)
