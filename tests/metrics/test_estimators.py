"""The calibration-error estimators: scikit-learn conformance, fit/score/transform semantics."""

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcalib import MMCE, SKCE, UCME, CalibrationError, calibration_error, mmce, skce, ucme
from skcalib._estimator_checks import expected_failed_checks
from skcalib.kernels import ExponentialKernel, GaussianKernel

ESTIMATORS = [CalibrationError(), SKCE(), MMCE(), UCME(random_state=0)]

# The reasons for the expected failures of scikit-learn's generic checks are in one table for
# every skcalib estimator: skcalib/_estimator_checks.py.


def _expected_failed(estimator):
    return expected_failed_checks(estimator)


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n=300, C=3, seed=0, power=1.0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(C), size=n)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(max=C - 1)
    Q = P ** power
    return Q / Q.sum(axis=1, keepdims=True), y


def _fresh():
    return [CalibrationError(strategy="quantile"), CalibrationError(norm="l2", mode="classwise"),
            CalibrationError(strategy="median_variance", mode="canonical", min_bin_size=10),
            SKCE(), SKCE(estimator="biased"), SKCE(estimator="block", block_size=4), MMCE(),
            UCME(random_state=0)]


@pytest.mark.parametrize("est", _fresh(), ids=repr)
def test_sklearn_properties_on_probabilities(est):
    P, y = _data()
    P2, y2 = _data(seed=1)
    params_before = est.get_params()
    Pc, yc = P.copy(), y.copy()
    fitted = est.fit(P, y)
    assert fitted is est  # fit returns self
    assert np.array_equal(P, Pc) and np.array_equal(y, yc)  # inputs untouched
    assert est.get_params() == params_before  # parameters not overwritten
    assert est.n_features_in_ == 3 and list(est.classes_) == [0, 1, 2]
    s1 = est.score(P2, y2)
    t1 = est.transform(P2, y2)
    assert t1.shape == (len(y2), 1)
    # fit idempotence and clone
    est2 = clone(est).fit(P, y)
    assert est2.score(P2, y2) == s1
    est.fit(P, y)
    assert est.score(P2, y2) == s1
    # pickling
    est3 = pickle.loads(pickle.dumps(est))
    assert est3.score(P2, y2) == s1
    # float32, F-contiguous, read-only and list inputs give the same score
    assert_allclose(est.score(np.asfortranarray(P2), y2), s1, rtol=1e-12)
    ro = P2.copy()
    ro.setflags(write=False)
    assert_allclose(est.score(ro, y2), s1, rtol=1e-12)
    assert_allclose(est.score(P2.tolist(), y2.tolist()), s1, rtol=1e-12)
    P32 = P2.astype(np.float32)
    assert np.isfinite(est.score(P32, y2))
    # wrong number of columns
    with pytest.raises(ValueError, match="features"):
        est.score(P2[:, :2] / P2[:, :2].sum(1, keepdims=True), y2)
    # not fitted
    with pytest.raises(Exception, match="not fitted"):
        clone(est).score(P2, y2)
    # sample-order invariance of score (except the order-dependent block estimator)
    perm = np.random.default_rng(2).permutation(len(y2))
    if getattr(est, "estimator", None) != "block":
        assert_allclose(est.score(P2[perm], y2[perm]), s1, rtol=1e-10, atol=1e-15)
        assert_allclose(est.transform(P2[perm], y2[perm]), t1[perm], rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("est", _fresh(), ids=repr)
def test_transform_shares_average_to_error(est):
    P, y = _data(200, 4, 3)
    est.fit(P, y)
    shares = est.transform(P, y)[:, 0]
    err = est.error(P, y)
    if isinstance(est, CalibrationError) and est.norm == "l2":
        assert_allclose(shares.mean(), err ** 2, rtol=1e-10)
    elif isinstance(est, MMCE):
        assert_allclose(shares.mean(), err ** 2, rtol=1e-10)
    else:
        assert_allclose(shares.mean(), err, rtol=1e-10, atol=1e-15)
    assert_allclose(est.fit_transform(P, y), shares[:, None], rtol=1e-12)


def test_functions_and_estimators_agree_on_the_fitting_sample():
    P, y = _data(250, 3, 4)
    for strategy in ["uniform", "quantile", "median_variance"]:
        for mode in ["top_label", "classwise", "canonical"]:
            for norm in ["l1", "l2", "max"]:
                kw = dict(strategy=strategy, mode=mode, norm=norm, n_bins=8)
                f = calibration_error(y, P, **kw)
                e = CalibrationError(**kw).fit(P, y).error(P, y)
                assert_allclose(e, f, rtol=1e-12, err_msg=str(kw))
    for est_name in ["unbiased", "biased", "block"]:
        assert_allclose(SKCE(estimator=est_name).fit(P, y).error(P, y),
                        skce(y, P, estimator=est_name), rtol=1e-12)
    assert_allclose(MMCE().fit(P, y).error(P, y), mmce(y, P), rtol=1e-12)
    assert_allclose(UCME(random_state=3).fit(P, y).error(P, y),
                    ucme(y, P, random_state=3), rtol=1e-12)


def test_fit_learns_data_dependent_parts():
    P, y = _data(400, 3, 5)
    est = SKCE().fit(P[:200], y[:200])
    ls = est.kernel_.pred_kernel.length_scale
    assert isinstance(ls, float) and ls > 0
    # scoring another sample keeps the fitted length scale
    expected = skce(y[200:], P[200:], kernel=GaussianKernel(ls))
    assert_allclose(est.error(P[200:], y[200:]), expected, rtol=1e-12)
    ce = CalibrationError(strategy="quantile", n_bins=5, mode="top_label").fit(P[:200], y[:200])
    edges = ce.binnings_[0].edges_[0]
    assert edges.size == 4 and np.all(np.diff(edges) > 0)
    u = UCME(random_state=1, n_test_locations=4).fit(P, y)
    assert u.test_predictions_.shape == (4, 3)
    assert set(u.test_targets_) <= {0, 1, 2}
    with pytest.raises(ValueError, match="y is None"):
        SKCE().fit(P, None)


def test_string_labels_and_binary_single_column():
    P, y = _data(200, 2, 6)
    names = np.array(["cat", "dog"])
    est = SKCE().fit(P, names[y])
    est1 = SKCE().fit(P[:, 1:], names[y])
    assert list(est.classes_) == ["cat", "dog"]
    assert_allclose(est.score(P, names[y]), est1.score(P[:, 1:], names[y]), rtol=1e-12)
    ce = CalibrationError(pos_label="cat").fit(P[:, :1], names[y])
    assert_allclose(ce.error(P[:, :1], names[y]),
                    calibration_error(names[y], P[:, 0], pos_label="cat"), rtol=1e-12)


def test_pipeline_gridsearch_and_cross_val_score():
    P, y = _data(600, 3, 7, power=2.0)
    # A pipeline whose last step is the error: score() runs transform of earlier steps.
    pipe = Pipeline([("identity", FunctionTransformer()), ("skce", SKCE())])
    pipe.fit(P, y)
    assert_allclose(pipe.score(P, y), SKCE().fit(P, y).score(P, y), rtol=1e-12)
    scores = cross_val_score(CalibrationError(strategy="quantile", n_bins=5), P, y,
                             cv=KFold(3, shuffle=True, random_state=0))
    assert scores.shape == (3,) and np.all(scores <= 0)
    scores = cross_val_score(pipe, P, y, cv=3)
    assert np.all(np.isfinite(scores))
    # grid search over the estimators' own hyper-parameters
    search = GridSearchCV(SKCE(), {"kernel": [GaussianKernel(0.1), ExponentialKernel(0.5)],
                                   "estimator": ["unbiased", "block"]}, cv=3).fit(P, y)
    assert set(search.cv_results_["params"][0]) == {"kernel", "estimator"}
    search = GridSearchCV(CalibrationError(), {"n_bins": [5, 10, 20]}, cv=3).fit(P, y)
    assert search.best_params_["n_bins"] in (5, 10, 20)


def test_mmce_squared_rules():
    P, y = _data(100, 3, 8)
    with pytest.raises(ValueError, match="squared=False"):
        MMCE(estimator="unbiased").fit(P, y)
    sq = MMCE(estimator="unbiased", squared=True).fit(P, y).error(P, y)
    assert_allclose(sq, mmce(y, P, estimator="unbiased", squared=True), rtol=1e-12)


def test_ucme_estimator_equals_function_beyond_median_subsample():
    # more predictions than the median heuristic's max_samples (1000): same draws in both
    P, y = _data(1300, 3, 9)
    for rs in [0, None]:
        est = UCME(random_state=rs, test_predictions=None)
        if rs is None:
            est.set_params(test_predictions=P[:5], test_targets=y[:5])
            expected = ucme(y, P, test_predictions=P[:5], test_targets=y[:5])
        else:
            expected = ucme(y, P, random_state=rs)
        assert_allclose(est.fit(P, y).error(P, y), expected, rtol=1e-12)


@pytest.mark.parametrize("Est, column", [(CalibrationError, "calibration_error_share"),
                                         (SKCE, "skce_share"), (MMCE, "mmce_share"),
                                         (UCME, "ucme_share")])
def test_set_output_pandas(Est, column):
    """``set_output(transform="pandas")``: the shares as a one-column DataFrame that keeps the
    input's index, with the same values as the default array output."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    P = rng.dirichlet(np.ones(3), size=40)
    y = rng.integers(0, 3, size=40)
    kw = {"random_state": 0} if Est is UCME else {}
    plain = Est(**kw).fit(P, y)
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):  # unfitted: no feature names yet
        Est(**kw).get_feature_names_out()
    Xdf = pd.DataFrame(P, index=np.arange(40) + 100, columns=["a", "b", "c"])
    # (fitted on the DataFrame: feature_names_in_, so transforming it does not warn)
    est = Est(**kw).set_output(transform="pandas").fit(Xdf, y)
    assert list(est.get_feature_names_out()) == [column]
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    out = est.transform(Xdf, y)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == [column]
    assert list(out.index) == list(Xdf.index)
    np.testing.assert_allclose(out.to_numpy(), plain.transform(P, y), rtol=1e-12)
    assert isinstance(est.fit_transform(P, y), pd.DataFrame)
    assert isinstance(plain.transform(P, y), np.ndarray)  # the default is unchanged


def test_expected_failed_checks_table_covers_every_estimator_with_reasons():
    """One table holds the reasons for every skcalib estimator's expected check failures; each
    reason is a sentence, and unknown estimators have none."""
    from skcalib._estimator_checks import EXPECTED_FAILED_CHECKS

    names = {"CalibrationError", "SKCE", "MMCE", "UCME", "BinnedCalibrationEstimator",
             "KDECalibrationEstimator", "KernelRidgeCalibrationEstimator",
             "TemperatureCalibrationEstimator", "ZeroCalibrationEstimator", "TemperatureScaling",
             "DistributionTemperatureScaling", "RecalibratedRegressor"}
    assert names <= set(EXPECTED_FAILED_CHECKS)
    for table in EXPECTED_FAILED_CHECKS.values():
        for check, reason in table.items():
            assert check.startswith("check_") and len(reason) > 40
    assert expected_failed_checks(GridSearchCV(SKCE(), {})) == {}
    assert expected_failed_checks(SKCE()) is not expected_failed_checks(SKCE())  # copies
