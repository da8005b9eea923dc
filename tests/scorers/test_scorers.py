"""Scorers in GridSearchCV, cross_validate (several at once) and cross_val_score."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skcalib import (
    calibration_error,
    get_scorer,
    get_scorer_names,
    make_calibration_scorer,
    mmce,
    skce,
)
from skcalib.kernels import GaussianKernel

NAMED = ["neg_l1_calibration_error", "neg_l2_calibration_error",
         "neg_l2_squared_calibration_error", "neg_max_calibration_error", "neg_skce", "neg_mmce",
         "neg_ucme", "neg_skce_biased", "neg_expected_calibration_error"]
# short alias -> long name: the same scorer
ALIASES = {"neg_ece": "neg_expected_calibration_error", "neg_rmsce": "neg_l2_calibration_error",
           "neg_msce": "neg_l2_squared_calibration_error", "neg_mce": "neg_max_calibration_error",
           "neg_skce": "neg_squared_kernel_calibration_error",
           "neg_mmce": "neg_maximum_mean_calibration_error",
           "neg_ucme": "neg_unnormalized_calibration_mean_embedding"}


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    return X, names


def _model():
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


@pytest.mark.parametrize("name", NAMED)
def test_named_scorers_negate_the_metric(iris, name):
    X, y = iris
    model = _model().fit(X, y)
    scorer = get_scorer(name)
    P = model.predict_proba(X)
    value = scorer(model, X, y)
    direct = {
        "neg_l1_calibration_error": lambda: calibration_error(y, P),
        "neg_expected_calibration_error": lambda: calibration_error(y, P),
        "neg_l2_calibration_error": lambda: calibration_error(y, P, norm="l2"),
        "neg_l2_squared_calibration_error": lambda: calibration_error(y, P, norm="l2",
                                                                      squared=True),
        "neg_max_calibration_error": lambda: calibration_error(y, P, norm="max"),
        "neg_skce": lambda: skce(y, P),
        "neg_skce_biased": lambda: skce(y, P, estimator="biased"),
        "neg_mmce": lambda: mmce(y, P),
        "neg_ucme": None,
    }[name]
    if direct is not None:
        assert_allclose(value, -direct(), rtol=1e-12)
    assert name in get_scorer_names()


def test_scorer_uses_estimator_classes_for_missing_labels(iris):
    X, y = iris
    model = _model().fit(X, y)
    # a subset with only two of the three classes: labels come from model.classes_
    mask = y != "setosa"
    for name in NAMED:
        assert np.isfinite(get_scorer(name)(model, X[mask], y[mask]))


def test_cross_val_score_and_gridsearch(iris):
    X, y = iris
    cv = KFold(5, shuffle=True, random_state=0)
    scores = cross_val_score(_model(), X, y, cv=cv, scoring=get_scorer("neg_skce"))
    assert scores.shape == (5,) and np.all(np.isfinite(scores))
    search = GridSearchCV(
        _model(), {"logisticregression__C": [0.01, 1.0, 100.0]},
        scoring=get_scorer("neg_l1_calibration_error"), cv=cv,
    ).fit(X, y)
    assert search.best_params_["logisticregression__C"] in (0.01, 1.0, 100.0)
    # the best score is the negated mean ECE of the selected candidate
    best = search.cv_results_["mean_test_score"][search.best_index_]
    assert best == pytest.approx(search.best_score_) and best <= 0
    # several scorers at once, with refit on one of them
    search = GridSearchCV(
        _model(), {"logisticregression__C": [0.1, 10.0]},
        scoring={"ece": get_scorer("neg_l1_calibration_error"),
                 "skce": make_calibration_scorer("skce", kernel=GaussianKernel(0.5)),
                 "acc": "accuracy"},
        refit="skce", cv=cv,
    ).fit(X, y)
    assert {"mean_test_ece", "mean_test_skce", "mean_test_acc"} <= set(search.cv_results_)


def test_cross_validate_several_scorers_binary():
    X, y = load_breast_cancer(return_X_y=True)
    cv = KFold(4, shuffle=True, random_state=0)
    scoring = {name: get_scorer(name) for name in NAMED}
    scoring["roc_auc"] = "roc_auc"
    res = cross_validate(_model(), X, y, cv=cv, scoring=scoring)
    for name in NAMED:
        vals = res[f"test_{name}"]
        assert vals.shape == (4,) and np.all(np.isfinite(vals))
    assert np.all(res["test_neg_l1_calibration_error"] <= 0)
    # same numbers as computing the metric by hand on each fold
    for k, (tr, te) in enumerate(cv.split(X, y)):
        m = _model().fit(X[tr], y[tr])
        assert_allclose(res["test_neg_l1_calibration_error"][k],
                        -calibration_error(y[te], m.predict_proba(X[te])), rtol=1e-12)


def test_make_calibration_scorer_options(iris):
    X, y = iris
    model = _model().fit(X, y)
    s = make_calibration_scorer("calibration_error", norm="max", mode="classwise")
    P = model.predict_proba(X)
    assert_allclose(s(model, X, y), -calibration_error(y, P, norm="max", mode="classwise"))
    pos = make_calibration_scorer("calibration_error", greater_is_better=True)
    assert pos(model, X, y) == -get_scorer("neg_l1_calibration_error")(model, X, y)
    # sample weights reach metrics that support them
    w = np.linspace(0.5, 2, len(y))
    assert_allclose(s(model, X, y, sample_weight=w),
                    -calibration_error(y, P, norm="max", mode="classwise", sample_weight=w))
    # ... the kernel metrics included (weighted statistics:
    # tests/metrics/test_kernel_sample_weights.py)
    assert_allclose(get_scorer("neg_skce")(model, X, y, sample_weight=w),
                    -skce(y, P, sample_weight=w, labels=model.classes_), rtol=1e-12)
    with pytest.raises(ValueError, match="metric"):
        make_calibration_scorer("nope")
    with pytest.raises(TypeError, match="unexpected"):
        make_calibration_scorer("skce", n_bins=3)
    with pytest.raises(TypeError, match="metric"):
        make_calibration_scorer(3)
    with pytest.raises(ValueError, match="neither a skcalib scorer"):
        get_scorer("neg_nonsense")
    with pytest.raises(TypeError, match="scoring must be a string or a callable"):
        get_scorer(3)
    assert get_scorer("accuracy")(model, X, y) > 0.9
    assert "make_calibration_scorer" in repr(s)


@pytest.mark.parametrize("short", sorted(ALIASES))
def test_short_aliases_equal_the_long_names(iris, short):
    X, y = iris
    model = _model().fit(X, y)
    assert repr(get_scorer(short)) == repr(get_scorer(ALIASES[short]))
    assert get_scorer(short)(model, X, y) == get_scorer(ALIASES[short])(model, X, y)
    assert {short, ALIASES[short]} <= set(get_scorer_names())


def test_get_scorer_names_lists_skcalib_names_only():
    from sklearn.metrics import get_scorer_names as sk_names

    names = get_scorer_names()
    assert names == sorted(names) and len(names) == len(set(names))
    # one shared name, by design (issue 14): skcalib's neg_brier_score gives scikit-learn's
    # values (tests/scorers/test_toolbox.py), with labels from estimator.classes_
    assert not set(names) & set(sk_names()) - {"neg_brier_score"}
    assert "neg_calibration_risk" in names
    for name in names:  # every listed name resolves
        assert callable(get_scorer(name))
    # scikit-learn's names still resolve through skcalib.get_scorer
    assert get_scorer("neg_log_loss") is not None


def test_one_scoring_dict_mixes_skcalib_and_sklearn_scorers(iris):
    """The documented pattern: one ``scoring=`` dict of skcalib scorers and scikit-learn names."""
    X, y = iris
    cv = KFold(3, shuffle=True, random_state=0)
    res = cross_validate(_model(), X, y, cv=cv,
                         scoring={"ece": get_scorer("neg_ece"), "skce": get_scorer("neg_skce"),
                                  "log_loss": "neg_log_loss", "brier": get_scorer("accuracy")})
    for key in ("ece", "skce", "log_loss", "brier"):
        assert np.all(np.isfinite(res[f"test_{key}"]))


def test_neg_calibration_risk_on_a_classifier_is_one_clear_type_error(iris):
    X, y = iris
    model = _model().fit(X, y)
    with pytest.raises(TypeError, match=r"neg_calibration_risk.*estimation.*LogisticRegression|"
                                        r"neg_calibration_risk.*estimation.*Pipeline"):
        get_scorer("neg_calibration_risk")(model, X, y)
    with pytest.raises(TypeError, match="neg_calibration_risk"):
        cross_val_score(_model(), X, y, cv=3, scoring=get_scorer("neg_calibration_risk"),
                        error_score="raise")


def test_lazy_submodules():
    import subprocess
    import sys

    code = ("import sys, skcalib; "
            "lazy = ['skcalib.recalibration', 'skcalib.estimation', 'skcalib.stats']; "
            "assert not [m for m in lazy if m in sys.modules], 'loaded eagerly'; "
            "assert {'recalibration', 'estimation', 'datasets'} <= set(dir(skcalib)); "
            "assert {'recalibration', 'estimation'} <= set(skcalib.__all__); "
            "assert skcalib.recalibration.TemperatureScaling; "
            "assert skcalib.estimation.CalibrationErrorCV; "
            "assert skcalib.stats.skce_test; "
            "assert 'skcalib.recalibration' in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
    import skcalib

    for name in skcalib.__all__:
        assert getattr(skcalib, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        skcalib.nope


# --------------------------------------------------------------------------------------------
# skce_pvalue: a scorer from a test (greater is better, deterministic)


def test_skce_pvalue_scorer_is_the_test_pvalue_and_deterministic(iris):
    from skcalib.stats import skce_test

    X, y = iris
    model = _model().fit(X, y)
    scorer = get_scorer("skce_pvalue")
    assert "skce_pvalue" in get_scorer_names()
    P = model.predict_proba(X)
    expected = skce_test(y, P, labels=model.classes_, random_state=0).pvalue
    assert scorer(model, X, y) == expected == scorer(model, X, y)
    assert 0 < expected <= 1


def test_skce_pvalue_prefers_the_calibrated_model_in_a_search():
    """A search over C: the strongly regularised model (predictions pulled to 1/2) is rejected by
    the test (p at its floor) and loses against the well-fitted one."""
    from sklearn.datasets import make_classification

    X, y = make_classification(600, random_state=0)
    search = GridSearchCV(LogisticRegression(), {"C": [1e-3, 1.0]}, cv=3,
                          scoring=get_scorer("skce_pvalue")).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert scores[0] < 0.01 < scores[1]
    assert search.best_params_ == {"C": 1.0}
    again = GridSearchCV(LogisticRegression(), {"C": [1e-3, 1.0]}, cv=3,
                         scoring=get_scorer("skce_pvalue")).fit(X, y)
    assert_allclose(again.cv_results_["mean_test_score"], scores, rtol=0, atol=0)


def test_skce_pvalue_scorer_on_a_regressor_and_options():
    from sklearn.linear_model import BayesianRidge

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = X @ [1.0, -1.0] + rng.normal(scale=0.5, size=300)
    model = BayesianRidge().fit(X, y)
    p = get_scorer("skce_pvalue")(model, X, y)
    assert 0 < p <= 1
    scorer = make_calibration_scorer("skce_pvalue", greater_is_better=True, method="block")
    assert repr(scorer) == "make_calibration_scorer(skce_pvalue, method='block')"
    assert 0 < scorer(model, X, y) <= 1
    with pytest.raises(TypeError, match="unexpected keyword.*foo"):
        make_calibration_scorer("skce_pvalue", greater_is_better=True, foo=1)
    with pytest.raises(ValueError, match="skce_pvalue does not support sample_weight"):
        get_scorer("skce_pvalue")(model, X, y, sample_weight=np.ones(300))


# --------------------------------------------------------------------------------------------
# neg_klce: audit features by column selection or metadata routing


def _audit_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-X[:, 0]))).astype(int)
    return X, y, rng.normal(size=(n, 2))


def test_neg_klce_scorer_column_selection():
    import pandas as pd

    from skcalib import klce
    from skcalib.scorers import make_klce_scorer

    X, y, _ = _audit_data()
    model = LogisticRegression().fit(X, y)
    P = model.predict_proba(X)
    assert "neg_klce" in get_scorer_names()
    assert_allclose(get_scorer("neg_klce")(model, X, y), -klce(y, P, X), rtol=1e-12)
    assert_allclose(make_klce_scorer(audit_columns=[2])(model, X, y), -klce(y, P, X[:, 2]),
                    rtol=1e-12)
    df = pd.DataFrame(X, columns=["a", "b", "age"])
    model_df = LogisticRegression().fit(df, y)
    assert_allclose(make_klce_scorer(audit_columns=["age"])(model_df, df, y),
                    -klce(y, model_df.predict_proba(df), X[:, 2]), rtol=1e-12)
    w = np.linspace(0.5, 2, 300)
    assert_allclose(get_scorer("neg_klce")(model, X, y, sample_weight=w),
                    -klce(y, P, X, sample_weight=w), rtol=1e-12)
    with pytest.raises(ValueError, match=r"audit_columns \['nope'\] are not columns of X"):
        make_klce_scorer(audit_columns=["nope"])(model_df, df, y)
    with pytest.raises(ValueError, match="out of range"):
        make_klce_scorer(audit_columns=[5])(model, X, y)
    with pytest.raises(ValueError, match="integer positions"):
        make_klce_scorer(audit_columns=["age"])(model, X, y)
    with pytest.raises(TypeError, match="unexpected keyword.*foo"):
        make_klce_scorer(foo=1)
    with pytest.raises(ValueError, match="at least one column"):
        make_klce_scorer(audit_columns=[])


def test_neg_klce_scorer_metadata_routing_splits_the_audit_features_with_the_folds():
    import sklearn

    from skcalib import klce
    from skcalib.scorers import make_klce_scorer

    X, y, A = _audit_data()
    cv = KFold(3)
    with sklearn.config_context(enable_metadata_routing=True):
        scores = cross_val_score(LogisticRegression(), X, y, cv=cv, scoring=make_klce_scorer(),
                                 params={"audit_features": A})
        search = GridSearchCV(LogisticRegression(), {"C": [0.01, 1.0]}, cv=cv,
                              scoring=make_klce_scorer()).fit(X, y, audit_features=A)
    expected = []
    for train, test in cv.split(X):
        m = LogisticRegression().fit(X[train], y[train])
        expected.append(-klce(y[test], m.predict_proba(X[test]), A[test], labels=m.classes_))
    assert_allclose(scores, expected, rtol=1e-12)
    assert_allclose(search.cv_results_["mean_test_score"][1], np.mean(expected), rtol=1e-12)
