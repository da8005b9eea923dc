"""What a scikit-learn user expects of the scorers and the recalibration estimators (issue 21).

* the scorers check their arguments when built, and mistyped names get a "Did you mean ...?";
* every calibration scorer routes ``sample_weight`` (metadata routing), checked fold by fold
  against the metric called with the weights;
* the meta-estimators pass scikit-learn's checks with their default ``cv``, refuse
  ``cv="prefit"`` with the ``FrozenEstimator`` advice, and every estimator fitted on a DataFrame
  sets ``feature_names_in_``;
* scikit-learn's private helpers are wrapped in ``skcalib/_sklearn_compat.py`` only;
* scikit-learn's names (``"sigmoid"``) and no recalibration (``"none"``) as recalibrators;
* ``neg_skce_zscore`` keeps ranking where the p-values of ``skce_pvalue`` saturate.
"""

import ast
import pathlib

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import load_diabetes, make_classification
from sklearn.frozen import FrozenEstimator
from sklearn.linear_model import BayesianRidge, LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate
from sklearn.naive_bayes import GaussianNB
from sklearn.utils.estimator_checks import check_fit2d_1feature, parametrize_with_checks

import skcalib
from skcalib import _sklearn_compat as compat
from skcalib import get_scorer, get_scorer_names, make_calibration_scorer
from skcalib._estimator_checks import expected_failed_checks
from skcalib.metrics import (MMCE, SKCE, UCME, CalibrationError, brier_score, calibration_error,
                             klce, skce)
from skcalib.recalibration import (BetaCalibration, DirichletCalibration,
                                   DistributionIdentityRecalibration,
                                   DistributionTemperatureScaling, HistogramBinning,
                                   IdentityRecalibration, IsotonicCalibration, MatrixScaling,
                                   PlattScaling, PredictionTransformer, QuantileRecalibration,
                                   RecalibratedClassifier, RecalibratedRegressor, ScalingBinning,
                                   TemperatureScaling, VectorScaling, VennAbers)
from skcalib.recalibration._registry import CLASSIFIER_RECALIBRATORS, REGRESSOR_RECALIBRATORS
from skcalib.scorers import CalibrationScorer, KLCEScorer, skce_pvalue, skce_zscore

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _binary(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-2.0 * X[:, 0]))).astype(int)
    return X, y


# ---------------------------------------------------------------------------------------------
# 1. Arguments checked when a scorer is built; "Did you mean" for mistyped names


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(metric=123), TypeError, r"metric must be a callable.*got 123"),
    (dict(metric="calibration_error"), TypeError, r"metric must be a callable.*"
                                                   r"make_calibration_scorer takes metric names"),
    (dict(metric=calibration_error, sign="x"), ValueError, r"sign must be 1 .* or -1.*got 'x'"),
    (dict(metric=calibration_error, sign=0), ValueError, r"sign must be 1 .* or -1.*got 0"),
    (dict(metric=calibration_error, sign=True), ValueError, r"sign must be.*got True"),
    (dict(metric=calibration_error, sign=2), ValueError, r"sign must be.*got 2"),
    (dict(metric=calibration_error, kwargs="abc"), TypeError,
     r"kwargs must be a dict of keyword arguments.*'abc'"),
    (dict(metric=calibration_error, kwargs=[("norm", "l2")]), TypeError, r"kwargs must be a dict"),
    (dict(metric=calibration_error, kwargs={1: 2}), TypeError, r"kwargs must have argument names"),
    (dict(metric=calibration_error, name=3), TypeError, r"name must be a string"),
])
def test_calibration_scorer_checks_its_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        CalibrationScorer(**kwargs)


def test_calibration_scorer_sign_is_never_a_silent_zero():
    # (sign=0 used to give -0.0 for every model)
    X, y = _binary()
    model = LogisticRegression().fit(X, y)
    value = CalibrationScorer(calibration_error, sign=1)(model, X, y)
    assert value == calibration_error(y, model.predict_proba(X)) > 0


@pytest.mark.parametrize("kwargs, exc", [(dict(sign=0), ValueError),
                                         (dict(sign="x"), ValueError),
                                         (dict(kwargs="abc"), TypeError)])
def test_klce_scorer_checks_its_arguments(kwargs, exc):
    with pytest.raises(exc, match="sign|kwargs"):
        KLCEScorer(**kwargs)


@pytest.mark.parametrize("typed, meant", [("neg_ec", "neg_ece"), ("neg_skce_zscor", "neg_skce_zscore"),
                                          ("skce_pvalu", "skce_pvalue"), ("neg_brier", None),
                                          ("acuracy", "accuracy")])
def test_mistyped_scorer_name_gets_a_suggestion(typed, meant):
    with pytest.raises(ValueError, match=rf"scoring='{typed}'") as info:
        get_scorer(typed)
    if meant is not None:
        assert f"Did you mean '{meant}'?" in str(info.value)


def test_mistyped_metric_name_gets_a_suggestion():
    with pytest.raises(ValueError, match=r"metric must be one of.*Did you mean 'calibration_error'"):
        make_calibration_scorer("calibraton_error")


@pytest.mark.parametrize("meta, typed, meant", [
    (RecalibratedClassifier, "dirchlet", "dirichlet"),
    (RecalibratedClassifier, "Venn-Abers", "venn_abers"),
    (RecalibratedClassifier, "sigmoidd", "sigmoid"),
    (RecalibratedRegressor, "quantil", "quantile"),
])
def test_mistyped_recalibrator_name_gets_a_suggestion(meta, typed, meant):
    X, y = _binary(60) if meta is RecalibratedClassifier else load_diabetes(return_X_y=True)
    with pytest.raises(ValueError, match=rf"recalibrator='{typed}'.*Did you mean '{meant}'\?"):
        meta(recalibrator=typed, cv=3).fit(X, y)


# ---------------------------------------------------------------------------------------------
# 2. Metadata routing of sample_weight to the scorers


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _independent(name, y, P, classes, w, X=None):
    """The metric of the scorer ``name``, called directly with the weights."""
    if name == "neg_ece":
        return -calibration_error(y, P, labels=classes, norm="l1", sample_weight=w)
    if name == "neg_msce":
        return -calibration_error(y, P, labels=classes, norm="l2", squared=True, sample_weight=w)
    if name == "neg_skce":
        return -skce(y, P, labels=classes, sample_weight=w)
    if name == "neg_brier_score":
        return -brier_score(y, P, labels=classes, sample_weight=w)
    if name == "neg_klce":
        return -klce(y, P, X, labels=classes, sample_weight=w)
    raise KeyError(name)


@pytest.mark.parametrize("name", ["neg_ece", "neg_msce", "neg_skce", "neg_brier_score",
                                  "neg_klce"])
def test_cross_validate_routes_sample_weight_to_the_scorer(routing, name):
    X, y = _binary()
    w = np.random.default_rng(1).uniform(0.05, 5.0, size=len(y))
    scorer = get_scorer(name).set_score_request(sample_weight=True)
    est = LogisticRegression().set_fit_request(sample_weight=True)
    res = cross_validate(est, X, y, cv=KFold(3), scoring={"cal": scorer},
                         params={"sample_weight": w}, return_estimator=True, return_indices=True)
    weighted = unweighted = 0
    for score, model, test in zip(res["test_cal"], res["estimator"], res["indices"]["test"]):
        P = model.predict_proba(X[test])
        expected = _independent(name, y[test], P, model.classes_, w[test], X[test])
        assert_allclose(score, expected, rtol=1e-10, atol=1e-15)
        plain = _independent(name, y[test], P, model.classes_, None, X[test])
        weighted += not np.isclose(score, plain, rtol=1e-6, atol=0)
        unweighted += 1
    assert weighted == unweighted  # the weights changed every fold's score


def test_without_routing_the_score_is_unweighted():
    """Routing off (the default): ``params`` reach ``fit`` only; the score is unweighted."""
    X, y = _binary()
    w = np.random.default_rng(1).uniform(0.05, 5.0, size=len(y))
    res = cross_validate(LogisticRegression(), X, y, cv=KFold(3),
                         scoring={"ece": get_scorer("neg_ece")}, params={"sample_weight": w},
                         return_estimator=True, return_indices=True)
    for score, model, test in zip(res["test_ece"], res["estimator"], res["indices"]["test"]):
        assert_allclose(score, -calibration_error(y[test], model.predict_proba(X[test])),
                        rtol=1e-12)


def test_routing_without_a_request_is_unweighted(routing):
    """Routing on, but the scorer not asked for the weights: unweighted, as scikit-learn's."""
    X, y = _binary()
    w = np.random.default_rng(1).uniform(0.05, 5.0, size=len(y))
    est = LogisticRegression().set_fit_request(sample_weight=True)
    res = cross_validate(est, X, y, cv=KFold(3), scoring={"ece": get_scorer("neg_ece")},
                         params={"sample_weight": w}, return_estimator=True,
                         return_indices=True)
    for score, model, test in zip(res["test_ece"], res["estimator"], res["indices"]["test"]):
        assert_allclose(score, -calibration_error(y[test], model.predict_proba(X[test])),
                        rtol=1e-12)


def test_grid_search_routes_sample_weight_to_the_scorer(routing):
    X, y = _binary()
    w = np.random.default_rng(2).uniform(0.05, 5.0, size=len(y))
    scorer = get_scorer("neg_ece").set_score_request(sample_weight=True)
    grid = GridSearchCV(LogisticRegression().set_fit_request(sample_weight=True),
                        {"C": [0.01, 1.0]}, scoring=scorer, cv=KFold(3)).fit(
        X, y, sample_weight=w)
    train, test = next(KFold(3).split(X))
    model = LogisticRegression(C=0.01).fit(X[train], y[train], sample_weight=w[train])
    assert_allclose(grid.cv_results_["split0_test_score"][0],
                    -calibration_error(y[test], model.predict_proba(X[test]),
                                       sample_weight=w[test]), rtol=1e-10)


@pytest.mark.parametrize("name", sorted(get_scorer_names()))
def test_every_scorer_has_metadata_routing(routing, name):
    scorer = get_scorer(name)
    assert callable(scorer.set_score_request)
    assert scorer.get_metadata_routing().score.requests.get("sample_weight") is None
    accepts = "sample_weight" in (
        scorer._routable_params() if hasattr(scorer, "_routable_params") else ())
    if accepts:
        scorer.set_score_request(sample_weight=True)
        assert scorer.get_metadata_routing().score.requests["sample_weight"] is True
        # a fresh scorer per call: requests never leak into another user's scorer
        assert get_scorer(name).get_metadata_routing().score.requests.get("sample_weight") is None
    else:  # the tests' p-values take no weights: said at the request
        with pytest.raises(TypeError, match=r"set_score_request.*sample_weight"):
            scorer.set_score_request(sample_weight=True)


def test_every_weighted_metric_scorer_accepts_the_request(routing):
    """Every scorer whose metric takes weights can request them (neg_calibration_risk too)."""
    accepting = [n for n in get_scorer_names()
                 if "sample_weight" in get_scorer(n)._routable_params()]
    assert {"neg_ece", "neg_skce", "neg_mmce", "neg_brier_score", "neg_crps", "neg_klce",
            "neg_calibration_risk"} <= set(accepting)


def test_set_score_request_needs_routing_and_valid_aliases(routing):
    scorer = get_scorer("neg_ece")
    with pytest.raises(TypeError, match="unexpected argument.*'groups'"):
        scorer.set_score_request(groups=True)
    with pytest.raises(ValueError):
        scorer.set_score_request(sample_weight=3.5)  # scikit-learn's check of the alias
    assert scorer.get_metadata_routing().score.requests.get("sample_weight") is None
    scorer.set_score_request(sample_weight="w")
    assert scorer.get_metadata_routing().score.requests["sample_weight"] == "w"
    klce_scorer = get_scorer("neg_klce").set_score_request(sample_weight=True)
    requests = klce_scorer.get_metadata_routing().score.requests
    assert requests == {"audit_features": True, "sample_weight": True}


def test_set_score_request_without_routing_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="enable_metadata_routing=True"):
        get_scorer("neg_ece").set_score_request(sample_weight=True)


# ---------------------------------------------------------------------------------------------
# 3. Default cv, cv="prefit", feature names


def test_default_cv_passes_check_fit2d_1feature():
    # 10 samples in 3 classes: the default 5 folds become as many as the smallest class has
    check_fit2d_1feature("RecalibratedClassifier", RecalibratedClassifier())


def test_default_cv_uses_fewer_folds_for_a_small_class_but_an_explicit_cv_does_not():
    X, y = make_classification(n_samples=40, n_classes=2, weights=[0.9, 0.1], flip_y=0,
                               random_state=0)
    assert np.bincount(y).min() == 4
    clf = RecalibratedClassifier().fit(X, y)
    assert len(clf.recalibrators_) == 4
    with pytest.raises(ValueError, match="cv has 5 folds but a class of y has only 4"):
        RecalibratedClassifier(cv=5).fit(X, y)
    assert len(RecalibratedClassifier().fit(*make_classification(random_state=0))
               .recalibrators_) == 5


@pytest.mark.parametrize("meta, est", [(RecalibratedClassifier, LogisticRegression()),
                                       (RecalibratedRegressor, BayesianRidge())])
def test_cv_prefit_is_refused_with_the_frozen_estimator_advice(meta, est):
    X, y = _binary() if meta is RecalibratedClassifier else load_diabetes(return_X_y=True)
    est.fit(X, y)
    with pytest.raises(ValueError, match=r"cv='prefit'.*FrozenEstimator"):
        meta(est, cv="prefit").fit(X, y)
    frozen = meta(FrozenEstimator(est)).fit(X, y)  # the advice works
    assert frozen.estimators_[0].estimator is est


def _score_frame(n=300, C=3, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(C), size=n)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=C - 1)
    return pd.DataFrame(P, columns=[f"p{k}" for k in range(C)]), y


def _normal_frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    return pd.DataFrame({"mean": mean, "std": np.full(n, 1.5)}), mean + rng.normal(size=n)


SCORE_ESTIMATORS = [TemperatureScaling(), PlattScaling(), BetaCalibration(), VectorScaling(),
                    MatrixScaling(), DirichletCalibration(), IsotonicCalibration(),
                    HistogramBinning(), ScalingBinning(random_state=0), VennAbers(),
                    IdentityRecalibration(), CalibrationError(), SKCE(), MMCE(),
                    UCME(random_state=0)]
DISTRIBUTION_ESTIMATORS = [DistributionTemperatureScaling(), QuantileRecalibration(),
                           DistributionIdentityRecalibration()]


def _predict(est, X, y):
    if hasattr(est, "error"):  # the calibration errors
        return est.error(X, y)
    for method in ("predict_proba", "predict_distribution"):
        if hasattr(est, method):
            return getattr(est, method)(X)


@pytest.mark.parametrize("est", SCORE_ESTIMATORS + DISTRIBUTION_ESTIMATORS,
                         ids=lambda e: type(e).__name__)
def test_fitted_on_a_dataframe_sets_feature_names_in(est):
    est = clone(est)
    X, y = _normal_frame() if est in DISTRIBUTION_ESTIMATORS or isinstance(
        est, tuple(type(e) for e in DISTRIBUTION_ESTIMATORS)) else _score_frame()
    est.fit(X, y)
    assert_array_equal(est.feature_names_in_, np.asarray(X.columns, dtype=object))
    assert est.n_features_in_ == X.shape[1]
    _predict(est, X, y)  # the same columns: fine
    renamed = X.rename(columns={X.columns[0]: "other"})
    with pytest.raises(ValueError, match="feature names"):
        _predict(est, renamed, y)
    # refitted on an array: no names any more
    est.fit(X.to_numpy(), y)
    assert not hasattr(est, "feature_names_in_")


@pytest.mark.parametrize("meta", [RecalibratedClassifier(cv=3),
                                  RecalibratedClassifier(recalibrator="none"),
                                  RecalibratedRegressor(cv=3), PredictionTransformer(
                                      LogisticRegression())], ids=lambda e: type(e).__name__)
def test_meta_estimators_fitted_on_a_dataframe_set_feature_names_in(meta):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["age", "dose", "weight"])
    y = (X["age"] > 0).astype(int) if not isinstance(meta, RecalibratedRegressor) else X["age"]
    meta = clone(meta).fit(X, y)
    assert list(meta.feature_names_in_) == ["age", "dose", "weight"]
    assert meta.n_features_in_ == 3


@parametrize_with_checks([IdentityRecalibration(), DistributionIdentityRecalibration(),
                          RecalibratedClassifier(recalibrator="none"),
                          RecalibratedRegressor(recalibrator="none")],
                         expected_failed_checks=expected_failed_checks)
def test_identity_sklearn_compatible(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------------------------------
# 4. scikit-learn's private helpers: wrapped in one module, each tested here

SKCALIB_DIR = pathlib.Path(skcalib.__file__).resolve().parent


def _private_sklearn_imports(path):
    """``(line, what)`` of every import of a private scikit-learn name or module in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "sklearn" and any(p.startswith("_") for p in parts[1:]):
                    found.append((node.lineno, alias.name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != "sklearn":
                continue
            if any(p.startswith("_") for p in parts[1:]):
                found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not (
                node.attr.startswith("__")):
            # sklearn.utils._x written out in the code
            base, chain = node.value, [node.attr]
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id == "sklearn":
                found.append((node.lineno, ".".join(["sklearn"] + chain[::-1])))
    return found


def test_the_private_import_finder_finds_them(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("from sklearn.utils import _safe_indexing, check_array\n"
                   "from sklearn.utils._tags import Tags\n"
                   "import sklearn.utils._testing\n"
                   "import sklearn\nx = sklearn.utils._param_validation\n"
                   "from sklearn.utils.validation import check_is_fitted\n"
                   "from sklearn import __version__\n")
    assert [w for _, w in _private_sklearn_imports(src)] == [
        "sklearn.utils._safe_indexing", "sklearn.utils._tags", "sklearn.utils._testing",
        "sklearn.utils._param_validation"]


def test_only_the_compat_module_imports_private_sklearn_names():
    offenders = {}
    for path in sorted(SKCALIB_DIR.rglob("*.py")):
        if path.name == "_sklearn_compat.py" and path.parent == SKCALIB_DIR:
            continue
        found = _private_sklearn_imports(path)
        if found:
            offenders[str(path.relative_to(SKCALIB_DIR))] = found
    assert not offenders, ("private scikit-learn names imported outside "
                           f"skcalib/_sklearn_compat.py: {offenders}")
    assert _private_sklearn_imports(SKCALIB_DIR / "_sklearn_compat.py")  # they are wrapped there


def test_routing_enabled_follows_the_config():
    from sklearn.utils.metadata_routing import _routing_enabled

    assert compat.routing_enabled() is False
    with sklearn.config_context(enable_metadata_routing=True):
        assert compat.routing_enabled() is True
        assert _routing_enabled() is True
    assert compat.routing_enabled() is _routing_enabled() is False


def _containers():
    A = np.arange(12.0).reshape(6, 2)
    return [A, A.tolist(), pd.DataFrame(A, columns=["a", "b"]), pd.Series(A[:, 0]),
            sp.csr_matrix(A), sp.coo_matrix(A), A[:, 0]]


@pytest.mark.parametrize("impl", [compat.num_samples, compat._num_samples_fallback])
def test_num_samples(impl):
    for X in _containers():
        assert impl(X) == 6
    for bad in (3.0, np.float64(2.0), LogisticRegression()):
        with pytest.raises(TypeError):
            impl(bad)


def _as_array(X):
    if sp.issparse(X):
        return X.toarray()
    return np.asarray(X)


@pytest.mark.parametrize("impl", [compat.safe_indexing, compat._safe_indexing_fallback])
def test_safe_indexing(impl):
    idx = np.array([4, 0, 2])
    mask = np.array([True, False, True, False, False, True])
    for X in _containers():
        if sp.issparse(X) and X.format == "coo":
            continue  # (scikit-learn does not index COO matrices; check_method_params converts)
        rows = impl(X, idx)
        assert type(rows) is type(X) or sp.issparse(X)
        assert_array_equal(_as_array(rows), _as_array(X)[idx])
        assert_array_equal(_as_array(impl(X, mask)), _as_array(X)[mask])
        if hasattr(X, "iloc"):  # pandas keeps the index
            assert list(rows.index) == [4, 0, 2]
    X = _containers()[0]
    assert impl(X, None) is X


@pytest.mark.parametrize("impl", [compat.check_method_params,
                                  compat._check_method_params_fallback])
def test_check_method_params(impl):
    X = np.zeros((6, 2))
    w = np.arange(6.0)
    groups = list("aabbcc")
    params = {"sample_weight": w, "groups": groups, "C": 1.0, "other": np.arange(3),
              "weights_df": pd.Series(w), "sparse": sp.csr_matrix(np.eye(6)), "none": None}
    out = impl(X, params, indices=[5, 1])
    assert_array_equal(out["sample_weight"], [5.0, 1.0])
    assert list(out["groups"]) == ["c", "a"]
    assert out["C"] == 1.0 and out["none"] is None
    assert_array_equal(out["other"], np.arange(3))  # not per-sample: passed through
    assert_array_equal(np.asarray(out["weights_df"]), [5.0, 1.0])
    assert_array_equal(out["sparse"].toarray(), np.eye(6)[[5, 1]])
    assert_array_equal(w, np.arange(6.0))  # not mutated


def test_compat_wrappers_agree_with_their_fallbacks():
    """On the installed scikit-learn, each wrapper is scikit-learn's helper; its fallback (for
    a release without it) gives the same results."""
    from sklearn.utils import _safe_indexing
    from sklearn.utils.validation import _check_method_params, _num_samples

    assert compat._sk_safe_indexing is _safe_indexing
    assert compat._sk_num_samples is _num_samples
    assert compat._sk_check_method_params is _check_method_params


def test_check_feature_names():
    X, y = _score_frame()
    est = TemperatureScaling()
    compat.check_feature_names(est, X, reset=True)
    assert list(est.feature_names_in_) == ["p0", "p1", "p2"]
    compat.check_feature_names(est, X, reset=False)
    with pytest.raises(ValueError, match="feature names"):
        compat.check_feature_names(est, X[["p1", "p0", "p2"]], reset=False)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        compat.check_feature_names(est, X.to_numpy(), reset=False)
    compat.check_feature_names(est, X.to_numpy()[:, 0], reset=True)  # 1-D scores: no error
    assert not hasattr(est, "feature_names_in_")


# ---------------------------------------------------------------------------------------------
# 5. scikit-learn's names, and "none"


def test_registries_map_names_to_classes():
    for registry in (CLASSIFIER_RECALIBRATORS, REGRESSOR_RECALIBRATORS):
        for name, cls in registry.items():
            assert isinstance(cls, type) and cls.__name__ in skcalib.recalibration.__all__, name
    assert CLASSIFIER_RECALIBRATORS["sigmoid"] is CLASSIFIER_RECALIBRATORS["platt"] is PlattScaling
    assert CLASSIFIER_RECALIBRATORS["isotonic"] is IsotonicCalibration
    assert CLASSIFIER_RECALIBRATORS["none"] is IdentityRecalibration
    assert REGRESSOR_RECALIBRATORS["none"] is DistributionIdentityRecalibration
    # the methods (what the demo compares): each class once, without "none"
    from skcalib.recalibration._registry import method_names

    assert method_names(CLASSIFIER_RECALIBRATORS) == [
        "temperature", "platt", "beta", "vector", "matrix", "dirichlet", "isotonic",
        "histogram", "scaling_binning", "venn_abers"]
    assert method_names(REGRESSOR_RECALIBRATORS) == ["temperature", "quantile"]


def test_sigmoid_is_platt_scaling():
    X, y = make_classification(n_samples=400, random_state=0)
    a = RecalibratedClassifier(recalibrator="sigmoid", cv=3).fit(X, y)
    b = RecalibratedClassifier(recalibrator="platt", cv=3).fit(X, y)
    assert all(type(r) is PlattScaling for r in a.recalibrators_)
    assert_array_equal(a.predict_proba(X), b.predict_proba(X))


class _ProbaOnly(ClassifierMixin, BaseEstimator):
    """A classifier with predict_proba but no decision_function."""

    def fit(self, X, y):
        self.model_ = GaussianNB().fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


@pytest.mark.parametrize("base", [LogisticRegression(max_iter=1000), GaussianNB(), _ProbaOnly()],
                         ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_none_gives_exactly_the_models_probabilities(base, n_classes):
    X, y = make_classification(n_samples=300, n_classes=n_classes, n_informative=4,
                               random_state=0)
    y = np.array(["x", "y", "z"])[y]
    meta = RecalibratedClassifier(clone(base), recalibrator="none").fit(X, y)
    ref = clone(base).fit(X, y)
    assert_array_equal(meta.predict_proba(X), ref.predict_proba(X))
    assert_array_equal(meta.predict(X), ref.predict(X))
    assert len(meta.estimators_) == 1 and meta.method_ == "predict_proba"
    # a frozen model is not refitted, with or without cv and ensemble
    frozen = RecalibratedClassifier(FrozenEstimator(ref), recalibrator="none", cv=3,
                                    ensemble=True).fit(X[:50], y[:50])
    assert_array_equal(frozen.predict_proba(X), ref.predict_proba(X))


def test_none_on_logits_is_their_softmax():
    X, y = make_classification(n_samples=300, random_state=0)
    meta = RecalibratedClassifier(LogisticRegression(), recalibrator="none",
                                  method="decision_function").fit(X, y)
    ref = LogisticRegression().fit(X, y)
    assert_allclose(meta.predict_proba(X), ref.predict_proba(X), rtol=1e-12, atol=1e-15)


def test_identity_recalibration_returns_a_copy():
    P = np.array([[0.2, 0.8], [0.6, 0.4]])
    out = IdentityRecalibration().fit(P, [0, 1]).predict_proba(P)
    out[0, 0] = 5.0
    assert P[0, 0] == 0.2


def test_none_gives_exactly_the_regressors_distributions():
    X, y = load_diabetes(return_X_y=True)
    meta = RecalibratedRegressor(BayesianRidge(), recalibrator="none").fit(X, y)
    ref = BayesianRidge().fit(X, y)
    mean, std = meta.predict(X, return_std=True)
    rmean, rstd = ref.predict(X, return_std=True)
    assert_array_equal(mean, rmean)
    assert_array_equal(std, rstd)
    dist = meta.predict_distribution(X)
    assert_array_equal(dist.loc, rmean) and assert_array_equal(dist.scale, rstd)


def test_grid_over_recalibrators_can_include_none():
    X, y = load_diabetes(return_X_y=True)
    grid = GridSearchCV(RecalibratedRegressor(BayesianRidge(), cv=3),
                        {"recalibrator": ["none", "temperature", "quantile"]},
                        scoring=get_scorer("neg_crps"), cv=3, error_score="raise").fit(X, y)
    # the "none" candidate's score is the base model's
    for k, (train, test) in enumerate(KFold(3).split(X)):
        ref = BayesianRidge().fit(X[train], y[train])
        assert_allclose(grid.cv_results_[f"split{k}_test_score"][0],
                        get_scorer("neg_crps")(ref, X[test], y[test]), rtol=1e-12)
    Xc, yc = make_classification(n_samples=400, random_state=0)
    grid = GridSearchCV(RecalibratedClassifier(GaussianNB(), cv=3),
                        {"recalibrator": ["none", "sigmoid", "isotonic"]},
                        scoring="neg_log_loss", cv=3, error_score="raise").fit(Xc, yc)
    assert np.all(np.isfinite(grid.cv_results_["mean_test_score"]))


def test_identity_distribution_recalibrator_checks_the_family():
    from skcalib.distributions import Laplace, Normal

    d = Normal(np.zeros(3), np.ones(3))
    est = DistributionIdentityRecalibration().fit(d, np.zeros(3))
    assert est.transform(d) is d
    assert_array_equal(est.fit([[0.0, 1.0], [1.0, 2.0]], [0.0, 1.0]).transform(
        [[0.0, 1.0]]), [[0.0, 1.0]])
    with pytest.raises(ValueError, match="Laplace predictions but the recalibrator was fitted on Normal"):
        est.transform(Laplace(np.zeros(3), np.ones(3)))
    with pytest.raises(ValueError, match="y"):
        DistributionIdentityRecalibration().fit(d, None)
    with pytest.raises(ValueError, match="sample_weight must have a positive sum"):
        DistributionIdentityRecalibration().fit(d, np.zeros(3), sample_weight=np.zeros(3))


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
