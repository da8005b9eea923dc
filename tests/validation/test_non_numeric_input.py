"""Numeric strings (``"0.2"``) are refused by every entry point that reads numbers -- in a list, a
str-dtype array, an object array and a DataFrame's object columns -- with the message of
``brier_score``: ``"<name> must contain numbers (...); got strings such as '0.2'."`` (one check,
``skcalib._validation.check_numeric``). String class labels keep working.

A model passed where data belong (``TemperatureScaling().fit(model, y)``) gets a ``TypeError``
saying what the argument must be; ``predict_distribution`` names ``estimator`` and the methods it
needs; objects that are not arrays are named; the recalibrators name their own arguments."""

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402
from sklearn.linear_model import BayesianRidge, LinearRegression, LogisticRegression  # noqa: E402

from skcalib import metrics as M  # noqa: E402
from skcalib import plotting as D  # noqa: E402
from skcalib import recalibration as R  # noqa: E402
from skcalib import stats as S  # noqa: E402
from skcalib.datasets import squared_calibration_errors  # noqa: E402
from skcalib.distributions import Categorical, Laplace, Mixture, Normal, as_distribution  # noqa: E402
from skcalib.estimation import (  # noqa: E402
    BinnedCalibrationEstimator, CalibrationErrorCV, calibration_risk,
)
from skcalib.kernels import GaussianKernel, median_heuristic, pairwise_distances  # noqa: E402
from skcalib.reporting import calibration_report  # noqa: E402
from skcalib.scorers import predict_distribution  # noqa: E402


RNG = np.random.default_rng(0)
N = 30
P = RNG.dirichlet([1.0, 1.0], size=N)
YB = (RNG.random(N) < P[:, 1]).astype(int)
XF = RNG.normal(size=(N, 2))
MEAN = RNG.normal(size=N)
STD = RNG.uniform(0.5, 2.0, N)
MS = np.column_stack([MEAN, STD])  # the [mean, std] form of regression predictions
NORMAL = Normal(MEAN, STD)
YR = MEAN + STD * RNG.normal(size=N)
W = RNG.uniform(0.5, 1.0, N)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------------------------
# 1. numeric strings


def as_strings(a, form):
    """``a`` with its numbers written as strings, in one of the forms users meet."""
    a = np.asarray(a)
    text = a.astype(str)
    if form == "object":
        return text.astype(object)
    if form == "str":
        return text
    if form == "list":
        return text.tolist()
    # a DataFrame (or Series) whose columns hold strings, as read_csv gives for a bad column
    return pd.Series(text.astype(object)) if a.ndim == 1 else pd.DataFrame(text.astype(object))


def _cases():
    """``(id, argument name, valid value, call)`` for every public entry point that reads an
    array of numbers from the caller."""
    cases = []

    def add(name, arg, valid, call):
        cases.append(pytest.param(arg, valid, call, id=f"{name}-{arg}"))

    classification = [M.calibration_error, M.skce, M.mmce, M.brier_score, M.log_score,
                      M.reliability_curve, M.smooth_ece, M.smooth_reliability_curve,
                      M.murphy_decomposition, M.corp_decomposition,
                      M.integrated_calibration_index, S.spiegelhalter_test,
                      S.hosmer_lemeshow_test, S.logistic_calibration, S.ecce_test]
    prob_name = {M.skce: "y_pred", M.mmce: "y_pred", S.ecce_test: "y_pred"}
    for f in classification:
        add(f.__name__, prob_name.get(f, "y_proba"), P, lambda v, f=f: f(YB, v))
        add(f.__name__, "sample_weight", W, lambda v, f=f: f(YB, P, sample_weight=v))
    add("ucme", "y_pred", P, lambda v: M.ucme(YB, v, random_state=0))
    add("ucme", "test_predictions", P[:5],
        lambda v: M.ucme(YB, P, test_predictions=v, test_targets=YB[:5], random_state=0))
    add("skce_test", "y_pred", P, lambda v: S.skce_test(YB, v, random_state=0, n_resamples=20))
    add("consistency_test", "y_pred", P,
        lambda v: S.consistency_test("ece", YB, v, random_state=0, n_resamples=20))
    add("calibration_risk", "y_proba", P, lambda v: calibration_risk(YB, v, np.eye(N)))
    add("calibration_risk", "h", np.eye(N), lambda v: calibration_risk(YB, P, v))

    # audit features of the local calibration error
    add("klce", "X", XF, lambda v: M.klce(YB, P, v))
    add("klce_test", "X", XF, lambda v: S.klce_test(YB, P, v, n_resamples=20, random_state=0))
    add("local_calibration_bias", "X", XF, lambda v: M.local_calibration_bias(YB, P, v))
    add("local_calibration_bias", "X_eval", XF,
        lambda v: M.local_calibration_bias(YB, P, XF, v, P))
    add("local_calibration_bias", "y_proba_eval", P,
        lambda v: M.local_calibration_bias(YB, P, XF, XF, v))
    add("LocalCalibrationBiasDisplay", "X", XF,
        lambda v: D.LocalCalibrationBiasDisplay.from_predictions(YB, P, v))

    # regression: the [mean, std] form, targets and weights
    regression = [M.pit, M.crps, M.interval_coverage, M.interval_coverage_error,
                  M.quantile_calibration_curve, M.quantile_calibration_error,
                  M.miscalibration_area, M.ence, M.uce, M.nll, S.pit_test]
    for f in regression:
        add(f.__name__, "y_pred", MS, lambda v, f=f: f(YR, v))
        add(f.__name__, "y_true", YR, lambda v, f=f: f(v, MS))
        if f not in (M.pit, S.pit_test):
            add(f.__name__, "sample_weight", W, lambda v, f=f: f(YR, MS, sample_weight=v))
    for f in (M.skce, M.ucme):
        add(f.__name__ + "[regression]", "y_true", YR, lambda v, f=f: f(v, NORMAL, random_state=0))
    add("skce_test[regression]", "y_true", YR,
        lambda v: S.skce_test(v, NORMAL, random_state=0, n_resamples=20))
    add("skce_ci[regression]", "y_true", YR, lambda v: S.skce_ci(v, NORMAL, random_state=0))
    for C in (D.PITHistogramDisplay, D.QuantileCalibrationDisplay, D.IntervalCoverageDisplay):
        add(C.__name__, "y_pred", MS, lambda v, C=C: C.from_predictions(YR, v))
        add(C.__name__, "y_true", YR, lambda v, C=C: C.from_predictions(v, MS))
    for C in (D.ReliabilityDisplay, D.SmoothReliabilityDisplay):
        add(C.__name__, "y_proba", P, lambda v, C=C: C.from_predictions(YB, v))

    # the report: predictions of both kinds, and regression targets
    add("calibration_report", "estimator_or_predictions", P,
        lambda v: calibration_report(v, y=YB, n_resamples=20))
    add("calibration_report[regression]", "estimator_or_predictions", MS,
        lambda v: calibration_report(v, y=YR, task="regression", n_resamples=20))
    add("calibration_report[regression]", "y", YR,
        lambda v: calibration_report(MS, y=v, task="regression", n_resamples=20))

    # estimators: the metrics', the estimation functions' and every recalibrator's X
    for C in (M.CalibrationError, M.SKCE, M.MMCE, M.UCME, BinnedCalibrationEstimator):
        add(C.__name__ + ".fit", "X", P, lambda v, C=C: C().fit(v, YB))
    add("CalibrationErrorCV.fit", "X", P, lambda v: CalibrationErrorCV(cv=2).fit(v, YB))
    for C in (R.TemperatureScaling, R.VennAbers, R.IsotonicCalibration, R.HistogramBinning,
              R.ScalingBinning, R.PlattScaling, R.BetaCalibration, R.VectorScaling,
              R.MatrixScaling, R.DirichletCalibration):
        add(C.__name__ + ".fit", "X", P, lambda v, C=C: C().fit(v, YB))
        add(C.__name__ + ".predict_proba", "X", P, lambda v, C=C: C().fit(P, YB).predict_proba(v))
        add(C.__name__ + ".fit", "sample_weight", W, lambda v, C=C: C().fit(P, YB, sample_weight=v))
    for C in (R.DistributionTemperatureScaling, R.QuantileRecalibration):
        add(C.__name__ + ".fit", "X", MS, lambda v, C=C: C().fit(v, YR))
        add(C.__name__ + ".fit", "y", YR, lambda v, C=C: C().fit(MS, v))
        add(C.__name__ + ".transform", "X", MS, lambda v, C=C: C().fit(MS, YR).transform(v))
        add(C.__name__ + ".fit", "sample_weight", W,
            lambda v, C=C: C().fit(MS, YR, sample_weight=v))
    add("DistributionTemperatureScaling.fit[Normal]", "y", YR,
        lambda v: R.DistributionTemperatureScaling().fit(NORMAL, v))
    add("RecalibratedRegressor.fit", "y", YR,
        lambda v: R.RecalibratedRegressor(BayesianRidge(), cv=3).fit(XF, v))
    add("RecalibratedRegressor.fit", "sample_weight", W,
        lambda v: R.RecalibratedRegressor(BayesianRidge(), cv=3).fit(XF, YR, sample_weight=v))
    add("RecalibratedClassifier.fit", "sample_weight", W,
        lambda v: R.RecalibratedClassifier(LogisticRegression(), cv=3).fit(XF, YB,
                                                                          sample_weight=v))

    # data sets, kernels, distributions
    add("squared_calibration_errors", "y_proba", P, lambda v: squared_calibration_errors(v, P))
    add("squared_calibration_errors", "true_prob", P, lambda v: squared_calibration_errors(P, v))
    add("median_heuristic", "X", XF, lambda v: median_heuristic(v))
    add("pairwise_distances", "X", XF, lambda v: pairwise_distances(v))
    add("GaussianKernel", "X", XF, lambda v: GaussianKernel(1.0)(v))
    add("as_distribution", "y_pred", MS, lambda v: as_distribution(v))
    add("Normal", "loc", MEAN, lambda v: Normal(v, 1.0))
    add("Normal", "scale", STD, lambda v: Normal(0.0, v))
    add("Laplace", "loc", MEAN, lambda v: Laplace(v, 1.0))
    add("Categorical", "probs", P, lambda v: Categorical(v))
    add("Mixture", "weights", np.array([0.5, 0.5]),
        lambda v: Mixture(v, [Normal([0.0], 1.0), Normal([1.0], 1.0)]))
    add("Normal.cdf", "y", YR, lambda v: NORMAL.cdf(v))
    return cases


CASES = _cases()
FORMS = ["object", "str", "list", "dataframe"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("arg, valid, call", CASES)
def test_numeric_strings_are_refused_everywhere_with_one_message(arg, valid, call, form):
    # One message everywhere, the one brier_score has always given; the argument is named.
    with pytest.raises((ValueError, TypeError),
                       match=rf"^{arg} must contain numbers( \(.*\))?; got strings such as '-?\d"):
        call(as_strings(valid, form))


@pytest.mark.parametrize("arg, valid, call", [c for c in CASES if c.id.split("-")[0] in {
    "brier_score", "klce", "pit", "TemperatureScaling.fit", "DistributionTemperatureScaling.fit",
    "RecalibratedRegressor.fit", "squared_calibration_errors", "Normal", "median_heuristic",
}])
def test_the_same_call_with_numbers_works(arg, valid, call):
    """The entry points refuse the strings, not the input: the same values as numbers pass
    (and as an object array or DataFrame of floats)."""
    call(valid)
    call(np.asarray(valid).astype(object))
    if np.ndim(valid) == 2:
        call(pd.DataFrame(np.asarray(valid)))


def test_the_message_is_brier_scores_and_both_exception_types_catch_it():
    with pytest.raises(ValueError) as brier:
        M.brier_score(YB, P.astype(str))
    with pytest.raises(TypeError) as temperature:  # distributions and kernels raised TypeError
        R.TemperatureScaling().fit(P.astype(str), YB)
    assert str(brier.value).startswith("y_proba must contain numbers (probabilities); got strings")
    assert str(temperature.value).startswith("X must contain numbers; got strings such as")
    assert type(brier.value) is type(temperature.value)


def test_mixed_numbers_and_strings_and_bytes_are_refused():
    X = np.array([[0.1, "0.2"], [0.3, 0.4]] * (N // 2), dtype=object)
    with pytest.raises(ValueError, match=r"^X must contain numbers; got strings such as '0.2'"):
        M.klce(YB, P, X)
    with pytest.raises(ValueError, match=r"^X must contain numbers; got strings such as b'1'"):
        M.klce(YB, P, np.array([[b"1", b"2"]] * N))
    long = "1" * 100
    with pytest.raises(ValueError, match=r"got strings such as '1{40}'\.\.\."):
        Normal([long], 1.0)


def test_string_class_labels_still_work():
    """Labels are not numbers: string labels -- numeric-looking ones too -- stay legitimate."""
    for labels in (np.array(["no", "yes"]), np.array(["0", "1"])):
        y = labels[YB]
        assert_allclose(M.brier_score(y, P), M.brier_score(YB, P))
        assert_allclose(M.calibration_error(y, P), M.calibration_error(YB, P))
        ts = R.TemperatureScaling().fit(P, y)
        assert list(ts.classes_) == list(labels)
        assert_allclose(M.klce(y, P, XF), M.klce(YB, P, XF))
        clf = R.RecalibratedClassifier(LogisticRegression(), cv=3).fit(XF, pd.Series(y))
        assert list(clf.classes_) == list(labels)


# --------------------------------------------------------------------------------------------
# 3. models where data belong


@pytest.mark.parametrize("estimator, got", [
    (object(), "got object, which provides no predictive distribution"),
    (LinearRegression().fit(XF, YR), "got LinearRegression, which provides no predictive"),
    (XF, r"got an array \(ndarray\); the model comes first, then X"),
])
def test_predict_distribution_names_estimator_and_the_methods_it_needs(estimator, got):
    with pytest.raises(TypeError) as err:
        predict_distribution(estimator, XF)
    msg = str(err.value)
    assert msg.startswith("estimator must be a fitted model with a predict_distribution(X) "
                          "method, predict(X, return_std=True)")
    assert "predict_proba(X)" in msg
    assert re.search(got, msg)


def test_predict_distribution_still_reads_models():
    assert isinstance(predict_distribution(BayesianRidge().fit(XF, YR), XF), Normal)
    cat = predict_distribution(LogisticRegression().fit(XF, YB), XF)
    assert isinstance(cat, Categorical)


LR = LinearRegression().fit(XF, YR)
LOGREG = LogisticRegression().fit(XF, YB)

CLASSIFIER_RECALIBRATORS = [R.TemperatureScaling, R.VennAbers, R.IsotonicCalibration,
                            R.HistogramBinning, R.ScalingBinning, R.PlattScaling,
                            R.BetaCalibration, R.VectorScaling, R.MatrixScaling,
                            R.DirichletCalibration]


@pytest.mark.parametrize("model", [LR, LOGREG], ids=["regressor", "classifier"])
@pytest.mark.parametrize("C", [R.DistributionTemperatureScaling, R.QuantileRecalibration])
def test_distribution_recalibrators_say_what_X_must_be(C, model):
    what = (r"^X must be predictive distributions: a skcalib distribution \(Normal, ...\) or an "
            r"array of shape \(n_samples, 2\) of predicted means and standard deviations; got the "
            rf"{type(model).__name__} model itself: pass "
            r"skcalib.scorers.predict_distribution\(model, X\) instead, or let "
            r"RecalibratedRegressor")
    with pytest.raises(TypeError, match=what):
        C().fit(model, YR)
    fitted = C().fit(MS, YR)
    with pytest.raises(TypeError, match=what):
        fitted.transform(model)
    with pytest.raises(TypeError, match=r"^y must be an array-like of numbers; got the "
                                        r"\w+ model itself: it holds the true labels or targets"):
        C().fit(MS, model)


@pytest.mark.parametrize("C", CLASSIFIER_RECALIBRATORS, ids=lambda C: C.__name__)
def test_classifier_recalibrators_say_what_X_must_be(C):
    what = (r"^X must be a classifier's predictions: probabilities or logits of shape "
            r"\(n_samples,\) or \(n_samples, n_classes\); got the LogisticRegression model "
            r"itself: pass model.predict_proba\(X\)")
    with pytest.raises(TypeError, match=what):
        C().fit(LOGREG, YB)
    fitted = C().fit(P, YB)
    for method in ("predict_proba", "predict", "transform"):
        if hasattr(fitted, method):
            with pytest.raises(TypeError, match=what):
                getattr(fitted, method)(LOGREG)
    with pytest.raises(TypeError, match=r"^y must be a one-dimensional array-like; got the "
                                        r"LogisticRegression model itself"):
        C().fit(P, LOGREG)


@pytest.mark.parametrize("call, message", [
    (lambda m: M.brier_score(YB, m),
     r"^y_proba must be an array-like of numbers \(probabilities\); got the LogisticRegression "
     r"model itself: pass its predictions instead: model.predict_proba\(X\)"),
    (lambda m: M.skce(YB, m), r"^y_pred must be an array-like of numbers \(probabilities\)"),
    (lambda m: M.brier_score(m, P), r"^y_true must be a one-dimensional array-like; got the "
                                   r"LogisticRegression model itself: it holds the true labels"),
    (lambda m: M.crps(YR, m),
     r"^y_pred must be a skcalib distribution or an array of shape \(n_samples, 2\) of means "
     r"and standard deviations; got the LogisticRegression model itself: pass its predictions"),
    (lambda m: M.crps(m, MS), r"^y_true must be an array-like of numbers; got the "
                              r"LogisticRegression model itself"),
    (lambda m: M.klce(YB, P, m), r"^X must be an array-like of numbers; got the "
                                 r"LogisticRegression model itself\.$"),
    (lambda m: M.CalibrationError().fit(m, YB), r"^X must be an array-like of numbers"),
    (lambda m: M.brier_score(YB, P, sample_weight=m), r"^sample_weight must be an array-like"),
    (lambda m: D.ReliabilityDisplay.from_predictions(YB, m), r"^y_proba must be an array-like"),
    (lambda m: D.PITHistogramDisplay.from_predictions(YR, m), r"^y_pred must be a skcalib"),
    (lambda m: squared_calibration_errors(m, P), r"^y_proba must be an array-like"),
    (lambda m: median_heuristic(m), r"^X must be an array-like of numbers"),
    (lambda m: Normal(m, 1.0), r"^loc must be an array-like of numbers"),
    (lambda m: R.RecalibratedClassifier(LogisticRegression(), cv=3).fit(m, YB),
     r"^X must be an array-like of shape \(n_samples, ...\); got the LogisticRegression model "
     r"itself: the model goes in the estimator parameter"),
    (lambda m: R.RecalibratedRegressor(cv=3).fit(XF, m),
     r"^y must be an array-like of numbers; got the LogisticRegression model itself"),
    (lambda m: calibration_report(P, y=m), r"^y must be a one-dimensional array-like; got the "
                                           r"LogisticRegression model itself"),
])
def test_a_model_where_data_belong_gets_one_clear_error(call, message):
    with pytest.raises(TypeError, match=message):
        call(LOGREG)


def test_objects_that_are_not_arrays_are_named():
    with pytest.raises(TypeError, match=r"^X must be an array-like of numbers; got object"):
        R.TemperatureScaling().fit(object(), YB)
    with pytest.raises(TypeError, match=r"^X must be an array-like of numbers; got object"):
        M.klce(YB, P, object())


def test_dask_chunks_of_strings_are_refused_with_the_same_message():
    da = pytest.importorskip("dask.array")
    y, p = da.from_array(YB, chunks=10), da.from_array(P, chunks=(10, 2))
    with pytest.raises(ValueError, match=r"^y_proba must contain numbers \(probabilities\); got "
                                         r"strings such as"):
        M.calibration_error(y, da.from_array(P.astype(str), chunks=(10, 2)))
    with pytest.raises(ValueError, match=r"^sample_weight must contain numbers; got strings"):
        M.calibration_error(y, p, sample_weight=da.from_array(W.astype(str), chunks=10))


def test_a_dataframe_with_a_column_named_like_a_method_is_data():
    X = pd.DataFrame(XF, columns=["fit", "predict"])
    assert_allclose(M.klce(YB, P, X), M.klce(YB, P, XF))


def test_the_message_shows_the_callers_string_not_a_converted_number():
    # numpy turns [0.1, "0.2"] into ["0.1", "0.2"]; the message quotes the string the caller wrote
    with pytest.raises(ValueError, match=r"got strings such as '0.2'\.$"):
        M.brier_score([0, 1], [0.1, "0.2"])
    with pytest.raises(ValueError, match=r"got strings such as '0.3'\.$"):
        M.klce(YB[:2], P[:2], [[0.1, 0.2], [0.4, "0.3"]])


def test_quantile_recalibration_names_its_own_arguments():
    """Its checks went through the metrics' (y_true, y_pred); fit and score take (X, y)."""
    from skcalib.distributions import MultivariateNormal

    q = R.QuantileRecalibration()
    with pytest.raises(TypeError, match=r"^X must be univariate predictive distributions"):
        q.fit(MultivariateNormal(np.zeros((N, 2)), np.ones(N)), np.zeros((N, 2)))
    with pytest.raises(ValueError, match=r"^y must have shape \(30,\)"):
        q.fit(NORMAL, np.zeros((N, 2)))
    with pytest.raises(ValueError, match=r"^y has 10 samples"):
        q.fit(NORMAL, YR[:10])
    fitted = q.fit(NORMAL, YR)
    with pytest.raises(ValueError, match=r"^y must be finite"):
        fitted.score(NORMAL, np.r_[np.nan, YR[1:]])
    assert np.isfinite(fitted.score(NORMAL, YR))
