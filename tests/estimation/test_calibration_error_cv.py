"""CalibrationErrorCV: the paper's pipeline, checked against a by-hand run of the protocol."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, train_test_split

from skcalib.estimation import (BinnedCalibrationEstimator, CalibrationErrorCV,
                                GridBoundaryWarning, KDECalibrationEstimator,
                                KernelRidgeCalibrationEstimator, ZeroCalibrationEstimator,
                                calibration_risk, default_candidates, paper_grids)

pytestmark = pytest.mark.usefixtures("single_threaded_blas")


def _data(n=400, C=3, seed=0, power=0.5):
    """Probabilities f = softmax(power * log P) of true probabilities P, labels drawn from P."""
    rng = np.random.default_rng(seed)
    logP = 2.0 * rng.normal(size=(n, C))
    P = np.exp(logP - logP.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=C - 1)
    f = P ** power
    return f / f.sum(axis=1, keepdims=True), y


CANDIDATES = [
    ("bins", BinnedCalibrationEstimator(), {"n_bins": [3, 6, 12]}),
    ("kde", KDECalibrationEstimator(), {"bandwidth": [0.02, 0.2]}),
    ("kkr", KernelRidgeCalibrationEstimator(method="kronecker"), {"alpha": [1e-7, 1e-5, 1e-3]}),
    ("ukkr", KernelRidgeCalibrationEstimator(method="two_step"),
     {"alpha": [1e-4, 1e-2], "gamma": [0.5, 5.0]}),
]


def _by_hand_folds(n, seed, test_size=0.2, n_folds=5):
    tune, _ = train_test_split(np.arange(n), test_size=test_size, random_state=seed)
    return list(KFold(n_folds, shuffle=True, random_state=seed).split(tune))


def _by_hand(P, y, candidates, mode, seed, test_size=0.2, n_folds=5):
    """The protocol of Gruber & Bach Sec. 3.2, written out with plain fits (no shared
    eigendecompositions): risks per fold and candidate, test estimates per fold model."""
    tune, test = train_test_split(np.arange(len(y)), test_size=test_size, random_state=seed)
    folds = list(KFold(n_folds, shuffle=True, random_state=seed).split(tune))
    rows = []
    for name, est, grid in candidates:
        from sklearn.model_selection import ParameterGrid

        for params in ParameterGrid(grid):
            risks, ests, diags = [], [], []
            for tr, va in folds:
                m = clone(est).set_params(**params, mode=mode, labels=[0, 1, 2]).fit(
                    P[tune[tr]], y[tune[tr]])
                risks.append(calibration_risk(y[tune[va]], P[tune[va]], m))
                d = m.transform(P[test])[:, 0]
                diags.append(d)
                ests.append(d.mean())
            rows.append((name, params, np.array(risks), np.array(ests), np.array(diags)))
    return rows, test


@pytest.mark.parametrize("mode", ["top_label", "classwise"])
def test_pipeline_equals_the_protocol_by_hand(mode):
    P, y = _data()
    cv = CalibrationErrorCV(CANDIDATES, estimate="plugin", mode=mode, random_state=3).fit(P, y)
    rows, test = _by_hand(P, y, CANDIDATES, mode, seed=3)
    res = cv.cv_results_
    assert len(res["mean_risk"]) == len(rows) == 3 + 2 + 3 + 4
    for i, (name, params, risks, ests, _) in enumerate(rows):
        assert res["family"][i] == name and res["params"][i] == params
        for k in range(5):
            assert_allclose(res[f"split{k}_risk"][i], risks[k], rtol=1e-9)
            assert_allclose(res[f"split{k}_estimate"][i], ests[k], rtol=1e-9, atol=1e-15)
        assert_allclose(res["se_risk"][i], risks.std(ddof=1) / np.sqrt(5), rtol=1e-9)
    best = int(np.argmin([r[2].mean() for r in rows]))
    assert cv.best_index_ == best and res["rank_risk"][best] == 1
    assert cv.best_family_ == rows[best][0] and cv.best_params_ == rows[best][1]
    ests, diags = rows[best][3], rows[best][4]
    assert_allclose(cv.calibration_error_, ests.mean(), rtol=1e-9)
    assert_allclose(cv.fold_estimates_, ests, rtol=1e-9)
    assert_allclose(cv.standard_error_, ests.std(ddof=1) / np.sqrt(5), rtol=1e-8)
    ens = diags.mean(axis=0)
    assert_allclose(cv.sampling_standard_error_, ens.std(ddof=1) / np.sqrt(len(test)), rtol=1e-8)
    assert cv.n_test_ == len(test)
    assert cv.n_train_ == len(rows and _by_hand_folds(len(y), 3)[0][0])
    assert "rank" in cv.summary().splitlines()[0]


@pytest.mark.parametrize("estimate", ["plugin", "one_step", "product"])
def test_test_labels_are_never_used_for_the_selection(estimate):
    """The selection never reads the test split's labels; the plug-in estimate does not either,
    while the debiased estimates do (they correct the plug-in with them)."""
    P, y = _data(seed=1)
    cv1 = CalibrationErrorCV(CANDIDATES[:3], estimate=estimate, mode="top_label",
                             random_state=0).fit(P, y)
    _, test = train_test_split(np.arange(len(y)), test_size=0.2, random_state=0)
    y2 = y.copy()
    y2[test] = (y2[test] + 1) % 3
    cv2 = CalibrationErrorCV(CANDIDATES[:3], estimate=estimate, mode="top_label",
                             random_state=0).fit(P, y2)
    for key in cv1.cv_results_:
        if key not in ("family", "params"):
            assert_array_equal(cv1.cv_results_[key], cv2.cv_results_[key])
    assert cv1.estimates_["plugin"] == cv2.estimates_["plugin"]
    if estimate == "plugin":
        assert cv1.calibration_error_ == cv2.calibration_error_
    else:
        assert cv1.calibration_error_ != cv2.calibration_error_


def test_candidate_formats_and_errors():
    P, y = _data(n=200)
    a = CalibrationErrorCV([(ZeroCalibrationEstimator(), {}),
                            (BinnedCalibrationEstimator(), {"n_bins": [4]})], cv=3,
                           random_state=0).fit(P, y)
    assert list(a.cv_results_["family"]) == ["ZeroCalibrationEstimator",
                                             "BinnedCalibrationEstimator"]
    b = CalibrationErrorCV({"zero": (ZeroCalibrationEstimator(), {}),
                            "bins": (BinnedCalibrationEstimator(), {"n_bins": [4]})}, cv=3,
                           random_state=0).fit(P, y)
    assert_array_equal(a.cv_results_["mean_risk"], b.cv_results_["mean_risk"])
    same = CalibrationErrorCV([(ZeroCalibrationEstimator(), {}), (ZeroCalibrationEstimator(), {})],
                              cv=3, random_state=0).fit(P, y)
    assert list(same.cv_results_["family"]) == ["ZeroCalibrationEstimator",
                                                "ZeroCalibrationEstimator_2"]
    with pytest.raises(ValueError, match="twice"):
        CalibrationErrorCV([("z", ZeroCalibrationEstimator(), {}),
                            ("z", ZeroCalibrationEstimator(), {})]).fit(P, y)
    with pytest.raises(TypeError, match="calibration estimation function"):
        CalibrationErrorCV([(LogisticRegression(), {})]).fit(P, y)
    with pytest.raises(ValueError, match="empty"):
        CalibrationErrorCV([]).fit(P, y)
    with pytest.raises(ValueError, match="test_size"):
        CalibrationErrorCV(test_size=1.0).fit(P, y)
    with pytest.raises(ValueError, match="mode"):
        CalibrationErrorCV(mode="toplabel").fit(P, y)
    with pytest.raises(ValueError, match="at least 2 folds"):
        CalibrationErrorCV([(ZeroCalibrationEstimator(), {})],
                           cv=[(np.arange(100), np.arange(100, 160))]).fit(P, y)


def test_default_candidates_follow_the_paper():
    tl = default_candidates(1600, "top_label", grids="paper")
    assert [name for name, _, _ in tl] == ["binning", "kde", "kronecker", "two_step"]
    can = default_candidates(1600, "canonical", grids="paper")
    assert [name for name, _, _ in can] == ["kde", "kronecker", "two_step"]
    g = paper_grids(1600)
    for name, est, grid in tl:
        assert grid == g[name]
        if name in ("kronecker", "two_step"):
            assert est.gamma == 0.5 and est.method == name
    g = paper_grids(1600)
    assert g["binning"]["n_bins"] == list(range(5, 101, 5))
    assert len(g["kde"]["bandwidth"]) == 20 and g["kde"]["bandwidth"][0] == pytest.approx(1e-5)
    assert_allclose(g["kronecker"]["alpha"][0], 40 * 1e-1)
    assert_allclose(g["kronecker"]["alpha"][-1], 40 * 1e-17)
    assert_allclose(g["two_step"]["alpha"], 40 * 10.0 ** -np.arange(1, 10.0))
    gc = paper_grids(1600, "canonical")
    assert len(gc["kronecker"]["alpha"]) == 18 and len(gc["two_step"]["alpha"]) == 18
    assert_allclose(gc["kronecker"]["alpha"][0], 40 * 1e8)
    assert_allclose(gc["two_step"]["alpha"][0], 40 * 1e4)


def test_default_candidates_search_the_width():
    from skcalib.estimation import DEFAULT_GAMMAS, default_ridge_grids

    for mode in ("top_label", "canonical"):
        cands = {name: (est, grid) for name, est, grid in default_candidates(1600, mode)}
        paper = paper_grids(1600, mode)
        assert cands["kde"][1] == paper["kde"]
        assert ("binning" in cands) == (mode != "canonical")
        for method in ("kronecker", "two_step"):
            est, grid = cands[method]
            assert est.method == method and est.n_components == "auto"  # the automatic low rank
            assert grid["gamma"] == [0.5, 2.0, 8.0, 32.0] == list(DEFAULT_GAMMAS)
            assert grid["alpha"] == default_ridge_grids(1600)[method]["alpha"]
    r = default_ridge_grids(1600)
    assert_allclose(r["kronecker"]["alpha"], 40 * 10.0 ** -np.arange(1, 13.0))
    assert_allclose(r["two_step"]["alpha"], 40 * 10.0 ** (-0.5 * np.arange(1, 15.0)))
    nys = default_candidates(1600, "binary", n_components=50, random_state=3)
    assert all(est.n_components == 50 and est.random_state == 3
               for name, est, _ in nys if name in ("kronecker", "two_step"))


def test_default_and_paper_pipelines_use_those_candidates():
    """``estimators_and_grids=None`` is the width search, ``"paper"`` the paper's grids."""
    P, y = _data(n=150, seed=11)
    for option, grids in ((None, "default"), ("paper", "paper")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GridBoundaryWarning)  # tiny data: edges are expected
            cv = CalibrationErrorCV(option, mode="top_label", random_state=0).fit(P, y)
            explicit = CalibrationErrorCV(
                default_candidates(cv.n_train_, "top_label", grids=grids), mode="top_label",
                random_state=0).fit(P, y)
        assert_array_equal(cv.cv_results_["family"], explicit.cv_results_["family"])
        assert list(cv.cv_results_["params"]) == list(explicit.cv_results_["params"])
        assert_allclose(cv.cv_results_["mean_risk"], explicit.cv_results_["mean_risk"],
                        rtol=1e-12)
        assert cv.calibration_error_ == pytest.approx(explicit.calibration_error_, rel=1e-12)
        gammas = {p.get("gamma") for p in cv.cv_results_["params"]}
        assert gammas == ({None, 0.5, 2.0, 8.0, 32.0} if grids == "default" else {None})


def test_width_search_lowers_the_risk_of_kernel_ridge_on_low_entropy_data():
    """Issue 11 item 1: with gamma fixed at 1/2 kernel ridge underfits the Dirichlet simulation
    (predictions in the corners of the simplex); searching the width by the same held-out risk
    selects a narrower kernel, with a smaller risk and a larger estimate, nearer the truth."""
    from skcalib.datasets import DIRICHLET_CALIBRATION_ERRORS, make_dirichlet_calibration

    P, y = make_dirichlet_calibration(600, random_state=0)
    fits = {}
    for grids in ("default", "paper"):
        cands = [c for c in default_candidates(384, "canonical", grids=grids) if c[0] != "kde"]
        fits[grids] = CalibrationErrorCV(cands, estimate="plugin", mode="canonical",
                                         random_state=0).fit(P, y)
    width, paper = fits["default"], fits["paper"]
    assert width.n_train_ == 384
    assert width.best_params_["gamma"] > 0.5
    best_risk = {k: v.cv_results_["mean_risk"][v.best_index_] for k, v in fits.items()}
    assert best_risk["default"] < best_risk["paper"]
    truth = DIRICHLET_CALIBRATION_ERRORS["canonical"]
    assert paper.calibration_error_ < width.calibration_error_ < truth


def test_nystrom_candidate_without_random_state_is_seeded_by_the_search():
    """Issue 11 item 2: a user's Nystrom candidate with ``random_state=None`` is reproducible."""
    P, y = _data(n=300, seed=12)
    cands = [("nys", KernelRidgeCalibrationEstimator(method="two_step", n_components=20),
              {"alpha": [1e-4, 1e-2]})]
    runs = [CalibrationErrorCV(cands, mode="canonical", random_state=7).fit(P, y)
            for _ in range(2)]
    seeded = CalibrationErrorCV(
        [("nys", KernelRidgeCalibrationEstimator(method="two_step", n_components=20,
                                                 random_state=7), {"alpha": [1e-4, 1e-2]})],
        mode="canonical", random_state=7).fit(P, y)
    for other in (runs[1], seeded):
        assert_array_equal(runs[0].cv_results_["mean_risk"], other.cv_results_["mean_risk"])
        assert runs[0].calibration_error_ == other.calibration_error_
    assert runs[0].best_estimator_.random_state == 7
    assert cands[0][1].random_state is None  # the user's estimator is not modified
    # a candidate's own seed is kept
    own = CalibrationErrorCV(
        [("nys", KernelRidgeCalibrationEstimator(method="two_step", n_components=20,
                                                 random_state=1), {"alpha": [1e-4, 1e-2]})],
        mode="canonical", random_state=7).fit(P, y)
    assert own.best_estimator_.random_state == 1
    # a Generator gives one seed per fit: equal generators, equal results, whatever n_jobs
    a = CalibrationErrorCV(cands, mode="canonical", random_state=np.random.default_rng(3)).fit(
        P, y)
    b = CalibrationErrorCV(cands, mode="canonical", random_state=np.random.default_rng(3),
                           n_jobs=2).fit(P, y)
    assert_allclose(a.cv_results_["mean_risk"], b.cv_results_["mean_risk"], rtol=1e-12)
    assert_array_equal(a.tune_indices_, b.tune_indices_)


@pytest.mark.parametrize("params, exc, match", [
    ({"n_jobs": 0}, ValueError, "n_jobs"),
    ({"n_jobs": "2"}, TypeError, "n_jobs"),
    ({"n_jobs": 1.5}, TypeError, "n_jobs"),
    ({"random_state": "x"}, ValueError, "random_state"),
    ({"random_state": -1}, ValueError, "random_state"),
    ({"cv": 1}, ValueError, "cv"),
    ({"cv": True}, TypeError, "cv"),
    ({"cv": "5"}, TypeError, "cv"),
    ({"cv": 2.5}, TypeError, "cv"),
    ({"test_size": 0.0}, ValueError, "test_size"),
    ({"n_components": 0}, ValueError, "n_components"),
    ({"mode": "toplabel"}, ValueError, "mode"),
    ({"estimators_and_grids": "papers"}, ValueError, "estimators_and_grids"),
    ({"estimators_and_grids": [(ZeroCalibrationEstimator(), {"mode": ["binary"]})]},
     ValueError, "'mode' is set by CalibrationErrorCV"),
    ({"estimators_and_grids": [(BinnedCalibrationEstimator(), {"n_bin": [5]})]},
     ValueError, "'n_bin' is not a parameter"),
    ({"estimators_and_grids": [(BinnedCalibrationEstimator(), {"n_bins": 5})]},
     TypeError, "estimators_and_grids: candidate 'BinnedCalibrationEstimator'"),
    ({"estimators_and_grids": [(KernelRidgeCalibrationEstimator(), {"alpha": [1e-3, -1.0]})]},
     ValueError, "alpha must be > 0"),
    ({"estimators_and_grids": [(KernelRidgeCalibrationEstimator(), [])]},
     ValueError, "grid is empty"),
])
def test_parameters_are_checked_before_the_data(params, exc, match):
    """Issue 11 item 3: every parameter is validated at the start of ``fit``, whether or not the
    code path uses it (here the data are invalid too: the parameter's message comes first)."""
    with pytest.raises(exc, match=match):
        CalibrationErrorCV(**params).fit(None, None)


def test_summary_states_the_estimate_and_the_bias():
    P, y = _data(n=200, seed=13)
    cv = CalibrationErrorCV(CANDIDATES[1:2], mode="top_label", cv=3, random_state=0).fit(P, y)
    text = cv.summary()
    low, high = cv.confidence_interval()
    assert text.splitlines()[0].split()[0] == "rank"
    assert f"one-step estimate (debiased, cross-fitted): {cv.calibration_error_:.6f}" in text
    assert f"[{low:.6f}, {high:.6f}]" in text
    assert f"plugin {cv.estimates_['plugin'][0]:.6f}" in text
    plug = CalibrationErrorCV(CANDIDATES[1:2], estimate="plugin", mode="top_label", cv=3,
                              random_state=0).fit(P, y)
    text = plug.summary()
    assert f"plug-in estimate (the paper's fold ensemble): {plug.calibration_error_:.6f}" in text
    for phrase in ("biased", "downwards", "standard errors do not cover",
                   f"one_step {cv.calibration_error_:.6f}"):
        assert phrase in text


def test_boundary_warning():
    P, y = _data(n=300, seed=2)
    with pytest.warns(GridBoundaryWarning, match="end of its grid"):
        CalibrationErrorCV([(KDECalibrationEstimator(), {"bandwidth": [1e3, 2e3, 4e3]})],
                           mode="top_label", cv=3, random_state=0).fit(P, y)


def test_parallel_equals_sequential():
    P, y = _data(n=300, seed=4)
    a = CalibrationErrorCV(CANDIDATES[2:], mode="canonical", random_state=0).fit(P, y)
    b = CalibrationErrorCV(CANDIDATES[2:], mode="canonical", random_state=0, n_jobs=2).fit(P, y)
    assert_allclose(a.cv_results_["mean_risk"], b.cv_results_["mean_risk"], rtol=1e-12)
    assert a.calibration_error_ == pytest.approx(b.calibration_error_, rel=1e-12)


def test_split_is_exposed_and_risk_scorer_accepts_pipelines():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    from skcalib import get_scorer

    P, y = _data(n=300, seed=5)
    with pytest.warns(GridBoundaryWarning, match="n_bins=3"):
        cv = CalibrationErrorCV(CANDIDATES[:1], mode="top_label", cv=3, random_state=1).fit(P, y)
    tune, test = train_test_split(np.arange(300), test_size=0.2, random_state=1)
    assert_array_equal(cv.tune_indices_, tune)
    assert_array_equal(cv.test_indices_, test)
    assert cv.n_splits_ == 3
    # a one-step pipeline whose step is searched: the scorer scores the final step
    pipe = Pipeline([("h", ZeroCalibrationEstimator())])
    grid = {"h": [ZeroCalibrationEstimator(mode="top_label"),
                  BinnedCalibrationEstimator(n_bins=5, mode="top_label")]}
    search = GridSearchCV(pipe, grid, scoring=get_scorer("neg_calibration_risk"),
                          cv=KFold(3, shuffle=True, random_state=0)).fit(P, y)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    fitted = pipe.set_params(h=grid["h"][1]).fit(P[:200], y[:200])
    assert get_scorer("neg_calibration_risk")(fitted, P[200:], y[200:]) == pytest.approx(
        -calibration_risk(y[200:], P[200:], fitted[-1]))


def _z_scores(make, truth, mode, seeds, n):
    cands = [("kde", KDECalibrationEstimator(), {"bandwidth": [0.003, 0.01, 0.03, 0.1]}),
             ("ukkr", KernelRidgeCalibrationEstimator(method="two_step", n_components=100,
                                                      random_state=0),
              {"alpha": [1e-9, 1e-7, 1e-5]}),
             ("bins", BinnedCalibrationEstimator(), {"n_bins": [5, 10, 20]})]
    z = []
    for seed in seeds:
        P, y = make(n, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GridBoundaryWarning)
            cv = CalibrationErrorCV(cands, estimate="plugin", mode=mode,
                                    random_state=seed).fit(P, y)
        assert cv.fold_overlap_ == pytest.approx(0.75, abs=0.01)
        assert cv.total_standard_error_ > np.hypot(cv.standard_error_,
                                                   cv.sampling_standard_error_)
        z.append((cv.calibration_error_ - truth) / cv.total_standard_error_)
    return np.array(z)


def test_pipeline_estimate_within_two_standard_errors_of_known_truth():
    """Issue item 5: on data with known ground truth the pipeline's estimate is within 2
    (total) standard errors of the truth. Each run is one draw; with honest error bars a run is
    within 2 SE with probability ~0.95, so 3 of 4 seeded runs per data set must be (the
    chance of fewer for a calibrated error bar is ~1.4%)."""
    from skcalib.datasets import (BINARY_SQUARED_CALIBRATION_ERROR, DIRICHLET_CALIBRATION_ERRORS,
                                  make_binary_squared_calibration, make_dirichlet_calibration)

    z_bin = _z_scores(make_binary_squared_calibration, BINARY_SQUARED_CALIBRATION_ERROR,
                      "binary", range(4), 2000)
    z_dir = _z_scores(make_dirichlet_calibration, DIRICHLET_CALIBRATION_ERRORS["top_label"],
                      "top_label", range(4), 2000)
    assert np.sum(np.abs(z_bin) < 2) >= 3, z_bin
    assert np.sum(np.abs(z_dir) < 2) >= 3, z_dir


def test_best_estimator_carries_the_notion():
    P, y = _data(n=200, seed=6)
    with pytest.warns(GridBoundaryWarning, match="n_bins=3"):
        cv = CalibrationErrorCV(CANDIDATES[:1], mode="classwise", cv=3, random_state=0).fit(P, y)
    best = cv.best_estimator_
    assert best.mode == "classwise" and best.n_bins == cv.best_params_["n_bins"]
    assert best.fit(P, y).mode_ == "classwise"


@pytest.mark.parametrize("n, params, exc, match", [
    (60, {"test_size": 1e-9}, ValueError, "leaves 1 test sample"),
    (60, {"cv": 100}, ValueError, "cv cannot split the 48 tuning samples"),
    (8, {}, ValueError, "fold 1 has 5 training and 1 validation samples"),
    (60, {"estimators_and_grids": ZeroCalibrationEstimator()}, TypeError,
     "estimators_and_grids must be None"),
    (60, {"estimators_and_grids": 5}, TypeError, "estimators_and_grids must be None"),
    (60, {"estimators_and_grids": {"z": ZeroCalibrationEstimator()}}, ValueError,
     r"estimators_and_grids\['z'\] must be an \(estimator, param_grid\) pair"),
])
def test_data_dependent_cv_errors_name_the_parameter(n, params, exc, match):
    """Issue 11 item 7: these gave a RuntimeWarning (one test sample), scikit-learn's or
    numpy's messages, or a risk error about ``y_true`` (one-sample validation fold)."""
    P, y = _data(n=n, seed=14)
    params = {"estimators_and_grids": [(ZeroCalibrationEstimator(), {})], **params}
    with pytest.raises(exc, match=match):
        CalibrationErrorCV(**params).fit(P, y)
