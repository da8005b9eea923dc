"""Every calibration scorer routes ``sample_weight`` (metadata routing), checked fold by fold
against the metric called with the weights."""

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_allclose
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from skcalib import get_scorer, get_scorer_names
from skcalib.metrics import brier_score, calibration_error, klce, skce


pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _binary(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-2.0 * X[:, 0]))).astype(int)
    return X, y


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
