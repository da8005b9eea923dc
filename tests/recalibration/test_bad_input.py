"""Issue 21 (helper "recal"): the recalibrators and meta-estimators at their bad inputs.

Each test is a class of input, checked at several entry points: huge-but-finite scores, a
recalibrator of the wrong kind, overflowing model predictions, degenerate temperature fits,
argument names in messages, "almost" probabilities under input="auto", transposed X, a fold
without weight, and an n_jobs beyond what joblib accepts.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import BayesianRidge, LinearRegression, LogisticRegression

import skcalib.distributions as D
import skcalib.recalibration as R
from skcalib.estimation import CalibrationErrorCV

RNG = np.random.default_rng(0)
P3 = RNG.dirichlet(np.ones(3), 30)
Y3 = np.arange(30) % 3
XF = RNG.normal(size=(60, 3))
YR = XF[:, 0] + RNG.normal(size=60)
YC = (YR > 0).astype(int)


# -- item 9: n_jobs has a ceiling at every n_jobs entry point --------------------------------

@pytest.mark.parametrize("make", [
    lambda n_jobs: R.RecalibratedClassifier(LogisticRegression(), n_jobs=n_jobs).fit(XF, YC),
    lambda n_jobs: R.RecalibratedRegressor(BayesianRidge(), n_jobs=n_jobs).fit(XF, YR),
    lambda n_jobs: CalibrationErrorCV(n_jobs=n_jobs).fit(P3, Y3),
], ids=["RecalibratedClassifier", "RecalibratedRegressor", "CalibrationErrorCV"])
@pytest.mark.parametrize("n_jobs", [10 ** 6, -10 ** 6, 2 ** 63])
def test_n_jobs_ceiling(make, n_jobs):
    with pytest.raises(ValueError, match=r"^n_jobs must be at most 32768 in magnitude"):
        make(n_jobs)


# -- item 7: a transposed X is named with both shapes ----------------------------------------

@pytest.mark.parametrize("fit", [
    lambda: R.TemperatureScaling().fit(P3.T, Y3),
    lambda: R.PlattScaling().fit(P3.T, Y3),
    lambda: R.IsotonicCalibration().fit(P3.T, Y3),
    lambda: R.RecalibratedClassifier(LogisticRegression()).fit(P3.T, Y3),
    lambda: R.RecalibratedRegressor(BayesianRidge()).fit(P3.T, Y3 * 1.0),
])
def test_transposed_X_names_both_shapes(fit):
    with pytest.raises(ValueError) as info:
        fit()
    msg = str(info.value)
    assert "y has 30 entries but there are 3 samples" in msg
    assert "X has shape (3, 30)" in msg and "y has shape (30,)" in msg
    assert "transposed" in msg


# -- item 2: a recalibrator of the wrong kind names `recalibrator` and what fits ---------------

_CLF_ADVICE = "RecalibratedClassifier needs a recalibrator of a classifier's scores"
_REG_ADVICE = "RecalibratedRegressor needs a recalibrator of predictive distributions"


@pytest.mark.parametrize("recal, exc, match", [
    (R.TemperatureScaling(), TypeError, r"recalibrator=TemperatureScaling\(\): .*use it with "
     r"RecalibratedClassifier"),
    (R.PlattScaling(), TypeError, "PlattScaling recalibrates a classifier's scores"),
    (R.IsotonicCalibration(), TypeError, "IsotonicCalibration recalibrates"),
    (LogisticRegression(), TypeError, "recalibrator must provide transform"),
    (LinearDiscriminantAnalysis(), TypeError, "LinearDiscriminantAnalysis is a classifier"),
    ("platt", ValueError, r"recalibrator='platt' is not a regressor recalibrator name: it names "
     r"PlattScaling, which recalibrates a classifier's"),
    ("isotonic", ValueError, r"recalibrator='isotonic'"),
    (object(), TypeError, "recalibrator must be an estimator"),
    (R.DistributionTemperatureScaling, TypeError, "recalibrator must be an estimator instance"),
    (BayesianRidge(), TypeError, "recalibrator must provide transform"),
])
def test_regressor_refuses_other_recalibrators(recal, exc, match):
    with pytest.raises(exc, match=match) as info:
        R.RecalibratedRegressor(BayesianRidge(), recal).fit(XF, YR)
    assert _REG_ADVICE in str(info.value) and "'quantile' (QuantileRecalibration)" in str(
        info.value)


@pytest.mark.parametrize("recal, exc, match", [
    (R.DistributionTemperatureScaling(), TypeError, "DistributionTemperatureScaling recalibrates "
     "predictive distributions"),
    (R.QuantileRecalibration(), TypeError, r"use it with RecalibratedRegressor"),
    (R.DistributionIdentityRecalibration(), TypeError, "recalibrates predictive distributions"),
    (BayesianRidge(), TypeError, "recalibrator must provide predict_proba"),
    ("quantile", ValueError, r"recalibrator='quantile' is not a classifier recalibrator name: "
     "it names QuantileRecalibration"),
    (object(), TypeError, "recalibrator must be an estimator"),
    (R.TemperatureScaling, TypeError, r"e\.g\. TemperatureScaling\(\)"),
])
def test_classifier_refuses_other_recalibrators(recal, exc, match):
    with pytest.raises(exc, match=match) as info:
        R.RecalibratedClassifier(LogisticRegression(), recal).fit(XF, YC)
    assert _CLF_ADVICE in str(info.value) and "'platt' (PlattScaling)" in str(info.value)


def test_right_kind_still_fits():
    R.RecalibratedRegressor(BayesianRidge(), "quantile", cv=3).fit(XF, YR)
    R.RecalibratedClassifier(LogisticRegression(), R.PlattScaling(), cv=3).fit(XF, YC)


# -- item 8: a cv fold whose weights are all zero is named ------------------------------------

@pytest.mark.parametrize("ensemble", [True, False])
@pytest.mark.parametrize("meta", ["classifier", "regressor"])
def test_zero_weight_fold_names_sample_weight(meta, ensemble):
    from sklearn.model_selection import KFold

    w = np.zeros(60)
    w[:20] = 1.0  # fold 0 trains on samples 20..59: all weights zero
    est = (R.RecalibratedClassifier(LogisticRegression(), cv=KFold(3), ensemble=ensemble)
           if meta == "classifier" else
           R.RecalibratedRegressor(BayesianRidge(), cv=KFold(3), ensemble=ensemble))
    y = YC if meta == "classifier" else YR
    with pytest.raises(ValueError, match=r"^sample_weight is zero for every training sample of "
                                         r"cv fold 0 \(40 samples\)"):
        est.fit(XF, y, sample_weight=w)
    w = np.ones(60)
    w[40:] = 0.0  # fold 2 holds out samples 40..59: its recalibrator has no weight
    if ensemble:
        with pytest.raises(ValueError, match=r"^sample_weight is zero for every held-out sample "
                                             r"of cv fold 2 .*ensemble=False"):
            est.fit(XF, y, sample_weight=w)
    else:
        est.fit(XF, y, sample_weight=w)  # one recalibrator on all out-of-fold scores: fine


# -- item 3: a model whose predictions overflow is named, not the Normal's `loc` ---------------

_OVERFLOW = r"^the predictions of BayesianRidge on X are not finite: its predicted {}"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # scikit-learn's own overflow warnings
@pytest.mark.parametrize("call, what", [
    (lambda: R.RecalibratedRegressor(BayesianRidge()).fit(XF * 1e300, YR), "means"),
    (lambda: R.RecalibratedRegressor(BayesianRidge(), "quantile", cv=3, ensemble=False).fit(
        XF * 1e300, YR), "means"),
    (lambda: R.RecalibratedRegressor(BayesianRidge()).fit(XF, YR * 1e300),
     "standard deviations"),
    (lambda: R.RecalibratedRegressor(BayesianRidge(), cv=3).fit(XF, YR).predict(XF * 1e300),
     "standard deviations"),
    (lambda: __import__("skcalib.scorers").scorers.predict_distribution(
        BayesianRidge().fit(XF, YR), XF * 1e300), "standard deviations"),
])
def test_overflowing_model_predictions_are_named(call, what):
    with pytest.raises(ValueError, match=_OVERFLOW.format(what)) as info:
        call()
    assert "Rescale X and y" in str(info.value) and "loc" not in str(info.value)


# -- item 4: DistributionTemperatureScaling's temperature is finite or refused at fit ----------

MU = RNG.normal(size=30)
YD = MU + RNG.normal(size=30)


@pytest.mark.parametrize("X, y, match", [
    (D.Normal(MU, np.full(30, 1e-300)), YD,
     r"overflows float64: .* scales are as small as 1e-300"),
    (np.column_stack([MU, np.full(30, 1e-300)]), YD, "overflows float64"),
    (D.Normal(MU, np.ones(30)), np.full(30, 1e300),
     r"overflows float64: the targets lie up to 1e\+300"),
    (D.Normal(MU, np.full(30, 1e300)), YD, r"underflows float64: .* as large as 1e\+300"),
])
def test_temperature_out_of_float_range_is_refused_at_fit(X, y, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no RuntimeWarning on the way
        with pytest.raises(ValueError, match=r"^X and y: the NLL-optimal temperature.*" + match):
            R.DistributionTemperatureScaling().fit(X, y)


def test_temperature_targets_on_the_means_keeps_its_message():
    with pytest.raises(ValueError, match="every fitting target equals its predicted mean"):
        R.DistributionTemperatureScaling().fit(D.Normal(MU, 1.0), MU)


@pytest.mark.parametrize("X, y", [
    (D.Laplace(MU, np.full(30, 1e-300)), YD),
    (D.Laplace(MU, np.full(30, 1e300)), YD),
    (D.MultivariateNormal(np.c_[MU, MU], np.tile(np.eye(2) * 1e-300, (30, 1, 1))), np.c_[YD, YD]),
    (D.MultivariateNormal(np.c_[MU, MU], np.tile(np.eye(2) * 1e300, (30, 1, 1))), np.c_[YD, YD]),
])
def test_representable_extreme_temperatures_fit_and_predict(X, y):
    m = R.DistributionTemperatureScaling().fit(X, y)
    assert np.isfinite(m.temperature_) and m.temperature_ > 0
    m.transform(X)


def test_mixture_with_extreme_scales_is_a_clear_error():
    X = D.Mixture(np.full((30, 2), 0.5), [D.Normal(MU, 1e-300), D.Normal(MU, 1e-300)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="NLL of the Mixture predictions X at the targets y "
                                             "is not finite at any temperature"):
            R.DistributionTemperatureScaling().fit(X, YD)


def test_recalibrated_predictions_are_refused_naming_X():
    r = D.Recalibrated(D.Normal(MU, np.ones(30)), np.linspace(0, 1, 5),
                       np.linspace(0, 1, 5) ** 1.2)
    for X in (r, D.Mixture(np.full((30, 2), 0.5), [r, r]),
              R.QuantileRecalibration().fit(D.Normal(MU, 1.0), YD).transform(D.Normal(MU, 1.0))):
        with pytest.raises(TypeError, match=r"^X holds .*Recalibrated.* predictions, which "
                                            "temperature scaling does not support.*Normal, "
                                            "Laplace and MultivariateNormal"):
            R.DistributionTemperatureScaling().fit(X, YD)


# -- item 1: huge-but-finite scores give a finite fit (or a clear error naming X) -------------

_FAMILY = ["TemperatureScaling", "PlattScaling", "BetaCalibration", "VectorScaling",
           "MatrixScaling", "DirichletCalibration", "IsotonicCalibration", "HistogramBinning",
           "ScalingBinning", "VennAbers", "IdentityRecalibration"]


def _informative_logits(n=300, C=3, seed=0):
    rng = np.random.default_rng(seed)
    L = 2.0 * rng.normal(size=(n, C))
    P = np.exp(L / 2.0)
    P /= P.sum(axis=1, keepdims=True)
    return L, (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=C - 1)


@pytest.mark.parametrize("name", _FAMILY)
@pytest.mark.parametrize("scale", [1e300, -1e300, 1e-300])
@pytest.mark.parametrize("shape", ["2d", "1d", "log_proba"])
def test_extreme_scores_fit_finite_without_warnings(name, scale, shape):
    L, y = _informative_logits()
    if shape == "1d":
        L, y = L[:, 1] - L[:, 0], (y == 1).astype(int)
    elif shape == "log_proba":  # the sweep's np.log(P) * 1e300
        L = L - np.log(np.exp(L).sum(axis=1, keepdims=True))
    X = L * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way
        warnings.simplefilter("ignore", UserWarning)    # ConvergenceWarnings about the data
        est = getattr(R, name)(input="logits").fit(X, y)
        P = est.predict_proba(X)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", ["TemperatureScaling", "VectorScaling", "MatrixScaling"])
@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e150])
def test_logit_maps_are_scale_equivariant_at_extremes(name, scale):
    # these maps are linear in the logits: scaling them changes the parameters, not the fit
    L, y = _informative_logits()
    ref = getattr(R, name)(input="logits").fit(L, y).predict_proba(L)
    est = getattr(R, name)(input="logits").fit(L * scale, y)
    np.testing.assert_allclose(est.predict_proba(L * scale), ref, atol=1e-9)
    if name == "TemperatureScaling":
        np.testing.assert_allclose(est.temperature_ / scale,
                                   R.TemperatureScaling(input="logits").fit(L, y).temperature_,
                                   rtol=1e-9)


def test_top_class_log_odds_do_not_overflow():
    # a top logit ahead by more than ~745 made its one-vs-rest log-odds +inf
    from skcalib.recalibration._binary_maps import log_odds

    L = np.array([[0.0, -800.0, -900.0], [5.0, 0.0, -1e300]])
    Z = log_odds(L, L, "logits", 1e-12)
    np.testing.assert_allclose(Z[0], [800.0, -800.0, -900.0])
    np.testing.assert_allclose(Z[1], [5.0, -5.0, -1e300], rtol=1e-12)


@pytest.mark.parametrize("name", _FAMILY)
def test_logits_whose_differences_overflow_name_X(name):
    big = np.finfo(np.float64).max
    X = np.tile([[big, -big, 0.0]], (30, 1))
    X[::2] = X[::2, ::-1]
    with pytest.raises(ValueError, match=r"^X holds logits from -1\.8e\+308 to 1\.8e\+308, "
                                         r"whose differences overflow float64"):
        getattr(R, name)(input="logits").fit(X, Y3)


# -- item 6: input="auto" warns when a few values keep X from being probabilities --------------

@pytest.mark.parametrize("name", ["TemperatureScaling", "PlattScaling", "VectorScaling",
                                  "IsotonicCalibration", "VennAbers"])
@pytest.mark.parametrize("value", [1.5, -0.2])
def test_auto_warns_on_almost_probabilities(name, value):
    Q = P3.copy()
    Q[4, 0] = value
    with pytest.warns(UserWarning, match=r"^X: 1 of 30 rows is not probabilities \(row 4 = .*"
                                         r"input='auto' .*input='logits'"):
        est = getattr(R, name)().fit(Q, Y3)
    assert est.input_ == "logits"  # the documented decision is kept, but not silently
    # 1-D probabilities of the positive class with one value out of range
    p = P3[:, 0].copy()
    p[3] = value
    with warnings.catch_warnings():
        # read as logits, these scores say nothing of the labels: a ConvergenceWarning beside
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(UserWarning, match=r"^X: 1 of 30 values is not probabilities \(val"):
            getattr(R, name)().fit(p, Y3 % 2)


@pytest.mark.parametrize("X", [
    RNG.normal(size=(30, 3)),                 # logits
    np.log(P3),                               # log-probabilities: all out of range
    np.linspace(-3, 3, 30),                   # 1-D log-odds
    P3,                                       # probabilities (no warning, read as such)
])
def test_auto_does_not_warn_on_logits_or_probabilities(X):
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)  # about the data, not about X
        R.TemperatureScaling().fit(X, Y3 if X.ndim == 2 else np.arange(30) // 15)


def test_explicit_input_does_not_warn():
    Q = P3.copy()
    Q[4, 0] = 1.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        R.TemperatureScaling(input="logits").fit(Q, Y3)
    with pytest.raises(ValueError, match="input='proba'"):
        R.TemperatureScaling(input="proba").fit(Q, Y3)


# -- item 5: messages use the caller's argument names -----------------------------------------

@pytest.mark.parametrize("X", [np.column_stack([MU, np.zeros(30)]), D.Normal(MU, np.zeros(30)),
                               D.Normal(MU, np.r_[np.ones(29), 0.0])])
def test_point_predictions_name_X(X):
    with pytest.raises(ValueError, match=r"^X: temperature scaling needs scale > 0 .* row \d+ "
                                         "has scale 0"):
        R.DistributionTemperatureScaling().fit(X, YD)


def test_quantile_on_multivariate_outputs_names_y_and_recalibrator():
    from sklearn.gaussian_process import GaussianProcessRegressor

    Y = np.column_stack([YR, -YR])
    with pytest.raises(ValueError, match=r"^y has 2 outputs, so the model's predictive "
                                         r"distributions are multivariate, but "
                                         r"recalibrator=QuantileRecalibration") as info:
        R.RecalibratedRegressor(GaussianProcessRegressor(), "quantile", cv=3).fit(XF, Y)
    assert "y_pred" not in str(info.value)


@pytest.mark.parametrize("call", [
    lambda: R.DistributionTemperatureScaling().fit(D.Normal(MU, 1.0), YD[:29]),
    lambda: R.DistributionTemperatureScaling().fit(D.Normal(MU, 1.0), YD.astype(str)),
    lambda: R.DistributionTemperatureScaling().fit(D.Normal(MU, 1.0), np.full(30, np.nan)),
    lambda: R.DistributionTemperatureScaling().fit(D.Normal(MU, 1.0), YD).score(
        D.Normal(MU, 1.0), YD[:29]),
    lambda: R.TemperatureScaling(objective="skce").fit(P3, Y3[:29]),
    lambda: R.PlattScaling().fit(P3, Y3[:29]),
    lambda: R.VennAbers().fit(P3, np.full(30, 0.5)),
])
def test_recalibrator_messages_name_X_and_y(call):
    with pytest.raises(ValueError) as info:
        call()
    msg = str(info.value)
    assert msg.startswith(("y ", "X", "y:")) and not any(
        name in msg for name in ("y_true", "y_pred", "y_proba"))
