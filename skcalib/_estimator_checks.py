"""Why some of scikit-learn's generic estimator checks fail for skcalib's estimators: one table.

scikit-learn's ``parametrize_with_checks`` / ``check_estimator`` run generic checks that fit on
blobs or uniform noise with class labels unrelated to the column count. Most skcalib estimators
take *predictions* as ``X`` -- probability vectors (the calibration errors and the estimation
functions), a classifier's scores with one column per class (``TemperatureScaling``), or
``[mean, std]`` / distribution objects (``DistributionTemperatureScaling``) -- and reject
anything else with a ``ValueError`` that says so. Those checks cannot pass, and are listed here
with one reason per check and estimator class. In summary:

* **not predictions** (most entries): the check's ``X`` is not valid input for the estimator;
* **transform needs y**: the calibration errors' ``transform`` is each sample's share of the
  error, which depends on the labels;
* **one_d_array**: ``TemperatureScaling`` accepts the 1-D scores of a binary classifier, so the
  checks pass it 1-D ``X`` and then index it as 2-D themselves;
* **a scikit-learn bug**: ``BayesianRidge.predict(X, return_std=True)`` fails on object-dtype
  ``X`` (scikit-learn 1.9.1), which ``RecalibratedRegressor`` does not hide.

Every property such a check would test is re-tested on valid input in the test suite (the
reasons name the tests). Use with scikit-learn's checks as::

    parametrize_with_checks(estimators, expected_failed_checks=expected_failed_checks)

This module imports nothing from skcalib (the tables are keyed by class name).
"""

__all__ = ["EXPECTED_FAILED_CHECKS", "expected_failed_checks"]

# ---------------------------------------------------------------------------------------------
# Calibration errors: CalibrationError, SKCE, MMCE, UCME

# scikit-learn's generic checks feed X drawn from blobs / uniform noise. skcalib's estimators take
# predicted probabilities as X (entries in [0, 1], rows summing to 1, one column per class of y) and
# reject anything else with a ValueError, so every check that fits on such X cannot pass. Each is
# listed with its reason; the property it checks is re-tested on valid probabilities
# (tests/metrics/test_estimators.py::test_sklearn_properties_on_probabilities).
_METRICS_NOT_PROBABILITIES = (
    "the check fits on X that are not probabilities (values outside [0, 1], rows not summing to 1 "
    "or a column count different from the number of classes in y); skcalib rejects such X with a "
    "ValueError. Re-tested on valid probabilities in test_sklearn_properties_on_probabilities."
)
_METRICS_NEEDS_Y = (
    "transform needs y (per-sample calibration contributions depend on the labels), and the check "
    "fits on X that are not probabilities."
)
#: The checks that fit on X that are not probabilities (the calibration errors and the estimation
#: functions alike).
_NOT_PROBABILITY_CHECKS = [
    "check_fit_score_takes_y", "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters", "check_estimators_fit_returns_self",
    "check_readonly_memmap_input", "check_n_features_in_after_fitting",
    "check_positive_only_tag_during_fit", "check_estimators_dtypes", "check_dtype_object",
    "check_pipeline_consistency", "check_estimators_nan_inf", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_fit2d_1sample", "check_fit2d_1feature",
    "check_dict_unchanged", "check_fit_idempotent", "check_fit_check_is_fitted",
    "check_n_features_in", "check_fit2d_predict1d",
]
_METRICS = dict.fromkeys(_NOT_PROBABILITY_CHECKS, _METRICS_NOT_PROBABILITIES)
_METRICS_WEIGHTS = (
    "the check fits with sample_weight on X that are not probabilities; skcalib rejects such X "
    "with a ValueError. The property is re-tested on valid probabilities in "
    "tests/metrics/test_kernel_sample_weights.py (pandas/list weights, shape and all-zero "
    "errors, weights not overwritten, integer weights as repeated rows for the estimates that allow it; "
    "the learned parts of fit are unweighted)."
)
_METRICS.update({
    name: _METRICS_WEIGHTS
    for name in [
        "check_sample_weights_pandas_series", "check_sample_weights_not_an_array",
        "check_sample_weights_list", "check_all_zero_sample_weights_error",
        "check_sample_weights_shape", "check_sample_weights_not_overwritten",
        "check_sample_weight_equivalence_on_dense_data",
    ]
})
_METRICS.update({
    name: _METRICS_NEEDS_Y
    for name in ["check_transformer_data_not_an_array", "check_transformer_general",
                 "check_transformer_preserve_dtypes"]
})

# ---------------------------------------------------------------------------------------------
# Calibration estimation functions

# The estimation functions' X is predicted probabilities (entries in [0, 1], rows summing to 1,
# one column per class of y). scikit-learn's generic checks fit on blobs / uniform noise and
# class labels unrelated to the column count, which every estimator rejects with a ValueError;
# the checks below therefore cannot pass. Each property is re-tested on valid probabilities in
# tests/estimation/test_estimators.py::test_sklearn_properties_on_probabilities.
_ESTIMATION_NOT_PROBABILITIES = (
    "the check fits on X that are not probabilities (values outside [0, 1], rows not summing to 1 "
    "or a column count different from the number of classes in y); the calibration estimation "
    "functions reject such X with a ValueError. Re-tested on valid probabilities in "
    "tests/estimation/test_estimators.py::test_sklearn_properties_on_probabilities."
)
_ESTIMATION_TRANSFORMER = (
    "transform is h(p, p) of probability vectors: the transformer check fits and transforms X "
    "that are not probabilities (ValueError). Re-tested on valid probabilities in "
    "tests/estimation/test_estimators.py::test_sklearn_properties_on_probabilities."
)
_ESTIMATION = dict.fromkeys(_NOT_PROBABILITY_CHECKS, _ESTIMATION_NOT_PROBABILITIES)
_ESTIMATION.update(dict.fromkeys([
    "check_transformer_data_not_an_array", "check_transformer_general",
    "check_transformer_preserve_dtypes",
], _ESTIMATION_TRANSFORMER))

# ---------------------------------------------------------------------------------------------
# Recalibration

# TemperatureScaling's X is a classifier's scores: one column per class of y, or one column for a
# binary problem (the `one_d_array` input tag). The generic checks fit on blobs or noise whose
# column count differs from the number of classes, or -- because of that tag -- on 1-D X that the
# check itself then indexes as 2-D. Every property is re-tested on valid scores in
# test_temperature_scaling_sklearn_properties.
_TS_COLUMNS = ("the check fits on X with {k} column(s) but y with a different number of classes; "
               "TemperatureScaling needs one score column per class and raises a ValueError saying "
               "so")
_TS_ONE_D = ("the one_d_array tag makes the check pass 1-D X, which the check itself then indexes "
             "as 2-D ({what}) before TemperatureScaling is involved")
_RECALIBRATION = {
    "TemperatureScaling": {
        "check_fit_score_takes_y": _TS_COLUMNS.format(k=1) + ".",
        "check_estimators_overwrite_params": _TS_COLUMNS.format(k=1) + ".",
        "check_estimators_fit_returns_self": _TS_COLUMNS.format(k=1) + ".",
        "check_readonly_memmap_input": _TS_COLUMNS.format(k=1) + ".",
        "check_n_features_in_after_fitting": _TS_COLUMNS.format(k=1) + ".",
        "check_sample_weights_list": _TS_COLUMNS.format(k=1) + ".",
        "check_sample_weight_equivalence_on_dense_data": _TS_COLUMNS.format(k=30) + ".",
        "check_dtype_object": _TS_COLUMNS.format(k=1) + " (4 classes).",
        "check_classifiers_classes": _TS_COLUMNS.format(k=1) + " (string labels, 3 classes).",
        "check_supervised_y_2d": _TS_COLUMNS.format(k=1) + " (a column-vector y).",
        "check_positive_only_tag_during_fit": (
            _TS_COLUMNS.format(k=1) + ", which the check mistakes for a refusal of negative "
            "values (scores are logits: negative values are valid)."),
        "check_classifiers_train": (
            "the check expects a classifier to learn its decision rule from features; temperature "
            "scaling never changes the arg-max of the scores it is given, so on a 1-D feature that "
            "is not a score its accuracy is whatever that arg-max gives."),
        "check_estimator_sparse_array": (
            "the one_d_array tag makes the check pass 1-D X, which it cannot convert to a sparse "
            "matrix (1-D sparse arrays have no lil format): the check fails before fitting."),
        "check_dont_overwrite_parameters": _TS_ONE_D.format(what="X[:, 0]") + ".",
        "check_f_contiguous_array_estimator": _TS_ONE_D.format(what="X[:, 0]") + ".",
        "check_methods_sample_order_invariance": _TS_ONE_D.format(what="X[:, 0]") + ".",
        "check_methods_subset_invariance": _TS_ONE_D.format(what="X[:, 0]") + ".",
        "check_fit2d_1sample": _TS_ONE_D.format(what="X[:, 0]") + ".",
        "check_fit2d_1feature": _TS_ONE_D.format(what="X[:, 0]") + ".",
        "check_dict_unchanged": _TS_ONE_D.format(what="X[:, 0]") + ".",
        "check_fit2d_predict1d": _TS_ONE_D.format(what="X[:, 0]") + ".",
        "check_n_features_in": _TS_ONE_D.format(what="X.shape[1]") + ".",
        "check_transformer_general": _TS_ONE_D.format(what="n_samples, n_features = X.shape") + ".",
        "check_transformer_data_not_an_array": (
            _TS_ONE_D.format(what="n_samples, n_features = X.shape") + "."),
    },
    # DistributionTemperatureScaling's X is a distribution object or an (n, 2) array of Normal
    # means and standard deviations (>= 0); y is real. Re-tested on valid input in
    # test_distribution_scaling_sklearn_properties and test_distribution_scaling_set_output.
    "DistributionTemperatureScaling": {
        **dict.fromkeys([
            "check_fit_score_takes_y", "check_dont_overwrite_parameters",
            "check_n_features_in_after_fitting", "check_estimators_dtypes",
            "check_sample_weights_list", "check_sample_weight_equivalence_on_dense_data",
            "check_dtype_object", "check_pipeline_consistency", "check_estimators_nan_inf",
            "check_estimators_pickle", "check_f_contiguous_array_estimator",
            "check_transformer_general", "check_transformer_preserve_dtypes",
            "check_methods_sample_order_invariance", "check_methods_subset_invariance",
            "check_dict_unchanged", "check_fit2d_predict1d"],
            "the check's X has 3 or more columns; DistributionTemperatureScaling takes [mean, std] "
            "(two columns) or a distribution object and raises a ValueError saying so."),
        **dict.fromkeys([
            "check_estimators_overwrite_params", "check_estimators_fit_returns_self",
            "check_readonly_memmap_input"],
            "the check's X has two columns, but its second column (read as standard deviations) "
            "has negative values, which DistributionTemperatureScaling rejects (ValueError)."),
        "check_positive_only_tag_during_fit": (
            "the check's X is not [mean, std] and is rejected (ValueError), which the check "
            "mistakes for a refusal of negative values (means may be negative)."),
        "check_all_zero_sample_weights_error": (
            "the check's X (3 columns) is rejected for its shape before the weights are looked "
            "at; all-zero weights on valid X raise 'sample_weight must have a positive sum' "
            "(test_distribution_scaling_bad_input)."),
        "check_transformer_data_not_an_array": (
            "the check's X (3 columns, wrapped in an object numpy functions refuse) is rejected "
            "for its shape; valid [mean, std] lists are tested in "
            "test_distribution_scaling_sklearn_properties."),
        "check_fit2d_1sample": (
            "the check's 1-sample X has 10 columns and is rejected for its shape, not its sample "
            "count, so the message is not the one the check looks for."),
        "check_fit2d_1feature": (
            "the check's 1-feature X is rejected because DistributionTemperatureScaling needs "
            "two columns ([mean, std]); the message names the shape, not 'n_features=1'."),
    },
    "RecalibratedRegressor": {
        "check_dtype_object": (
            "BayesianRidge.predict(X, return_std=True) itself raises a TypeError for object-dtype X "
            "(np.sqrt of an object array; scikit-learn 1.9.1); the meta-estimator does not convert "
            "X behind the estimator's back."),
    },
}

# PlattScaling and BetaCalibration take the same scores as TemperatureScaling (one column per
# class, or one column for a binary problem: the one_d_array tag), so the same generic checks fail
# for the same reasons. check_classifiers_train: both are monotone maps of each class's log-odds
# (for the check's two blob features, of their difference), not learners of a decision rule from
# feature columns. Re-tested on valid scores in tests/recalibration/test_platt_beta.py
# (test_sklearn_properties_on_scores).
for _name in ("PlattScaling", "BetaCalibration"):
    _RECALIBRATION[_name] = {
        check: reason.replace("TemperatureScaling", _name)
        for check, reason in _RECALIBRATION["TemperatureScaling"].items()}
    _RECALIBRATION[_name]["check_classifiers_train"] = (
        f"the check expects a classifier to learn its decision rule from features; {_name} is a "
        "monotone map of each class's log-odds (for the check's two blob features, of their "
        "difference), so its accuracy on features that are not scores is whatever that gives.")
del _name

# QuantileRecalibration takes the same X as DistributionTemperatureScaling (a univariate
# distribution or [mean, std]), so the same checks fail for the same reasons; its transform
# returns a distribution object even for array input. Re-tested on valid input in
# tests/recalibration/test_quantile.py.
_RECALIBRATION["QuantileRecalibration"] = {
    **{check: reason.replace("DistributionTemperatureScaling", "QuantileRecalibration")
       for check, reason in _RECALIBRATION["DistributionTemperatureScaling"].items()},
    "check_all_zero_sample_weights_error": (
        "the check's X (3 columns) is rejected for its shape before the weights are looked at; "
        "all-zero weights on valid X raise a ValueError naming sample_weight "
        "(tests/recalibration/test_quantile.py::test_bad_input)."),
    "check_fit_idempotent": (
        "transform returns a Recalibrated distribution object even for [mean, std] input (a "
        "recalibrated Normal has no [mean, std] form), which the check cannot compare as an "
        "array; refitting is tested to give the same map in test_refit_is_idempotent."),
}

# VennAbers takes the same scores as TemperatureScaling, so the same generic checks fail for the
# same reasons. check_classifiers_train: it is a monotone (isotonic) map of the positive class's
# score (one-vs-rest: of each class's score), not a learner of a decision rule from feature
# columns. Re-tested on valid scores in tests/recalibration/test_venn_abers.py
# (test_sklearn_properties_on_scores).
_RECALIBRATION["VennAbers"] = {
    **{check: reason.replace("TemperatureScaling", "VennAbers")
       for check, reason in _RECALIBRATION["TemperatureScaling"].items()},
    "check_classifiers_train": (
        "the check expects a classifier to learn its decision rule from features; VennAbers is an "
        "isotonic map of each class's score, so its accuracy on features that are not scores is "
        "whatever that gives."),
}

# IsotonicCalibration, HistogramBinning and ScalingBinning take the same scores as
# TemperatureScaling, so the same generic checks fail for the same reasons. check_classifiers_train:
# each is a monotone or binned map of each class's probability (softmax of the check's blob
# features), not a learner of a decision rule from feature columns. Re-tested on valid scores in
# tests/recalibration/test_binning.py (test_common_behaviour and the per-method tests).
for _name in ("IsotonicCalibration", "HistogramBinning", "ScalingBinning"):
    _RECALIBRATION[_name] = {
        **{check: reason.replace("TemperatureScaling", _name)
           for check, reason in _RECALIBRATION["TemperatureScaling"].items()},
        "check_classifiers_train": (
            f"the check expects a classifier to learn its decision rule from features; {_name} "
            "maps each class's probability (softmax of the check's features) by a monotone or "
            "binned function, so its accuracy on features that are not scores is whatever that "
            "gives."),
    }
del _name

# VectorScaling, MatrixScaling and DirichletCalibration take the same scores as TemperatureScaling
# (one column per class, or one for a binary problem), so the same generic checks fail for the same
# reasons; their max_iter parameter also enables check_non_transformer_estimators_n_iter, which fits
# on iris (4 feature columns, 3 classes). Re-tested on valid scores in
# tests/recalibration/test_linear.py.
for _name in ("VectorScaling", "MatrixScaling", "DirichletCalibration"):
    _RECALIBRATION[_name] = {
        **{check: reason.replace("TemperatureScaling", _name)
           for check, reason in _RECALIBRATION["TemperatureScaling"].items()},
        "check_classifiers_train": (
            "the one_d_array tag makes the check fit the binary problem on X[:, 0] alone, read as "
            "the log-odds of a binary classifier; a map of that one coordinate of the blobs "
            "cannot reach the accuracy the check asks for (0.83)."),
        "check_non_transformer_estimators_n_iter": (
            _TS_COLUMNS.replace("TemperatureScaling", _name).format(k=4) + " (iris, 3 classes)."),
    }
del _name

# IdentityRecalibration ("none": no recalibration) takes the same scores as TemperatureScaling, and
# DistributionIdentityRecalibration the same predictions as DistributionTemperatureScaling, so the
# same generic checks fail for the same reasons. check_classifiers_train: the identity returns the
# softmax of the check's features, a classifier's accuracy only if they are its scores. Re-tested
# on valid input in tests/recalibration/test_identity_and_names.py (the "none" tests).
_RECALIBRATION["IdentityRecalibration"] = {
    check: reason.replace("TemperatureScaling", "IdentityRecalibration").replace(
        "temperature scaling never changes", "the identity never changes")
    for check, reason in _RECALIBRATION["TemperatureScaling"].items()}
_RECALIBRATION["DistributionIdentityRecalibration"] = {
    check: reason.replace("DistributionTemperatureScaling", "DistributionIdentityRecalibration")
    .replace("test_distribution_scaling_bad_input",
             "tests/recalibration/test_identity_and_names.py")
    for check, reason in _RECALIBRATION["DistributionTemperatureScaling"].items()}

# ConformalQuantileRecalibration takes Quantiles predictions, interval bounds of shape
# (n_samples, 2) with its `level` parameter (None by default, so an array is refused until a level
# is given), or a dict of them; SpreadScaling takes Empirical ensembles only. Every generic check
# fits on a plain numeric array, which both refuse (a ValueError naming the form, or a TypeError),
# so these checks cannot pass; re-tested on valid input in tests/recalibration/test_cqr.py and
# tests/recalibration/test_spread.py (input forms, weights, refits, pickling, errors).
_FORM_CHECKS = [
    "check_all_zero_sample_weights_error", "check_dict_unchanged",
    "check_dont_overwrite_parameters", "check_dtype_object", "check_estimators_dtypes",
    "check_estimators_fit_returns_self", "check_estimators_nan_inf",
    "check_estimators_overwrite_params", "check_estimators_pickle",
    "check_f_contiguous_array_estimator", "check_fit2d_1feature", "check_fit2d_1sample",
    "check_fit2d_predict1d", "check_fit_check_is_fitted", "check_fit_idempotent",
    "check_fit_score_takes_y", "check_methods_sample_order_invariance",
    "check_methods_subset_invariance", "check_n_features_in", "check_n_features_in_after_fitting",
    "check_pipeline_consistency", "check_positive_only_tag_during_fit",
    "check_readonly_memmap_input", "check_sample_weight_equivalence_on_dense_data",
    "check_sample_weights_list", "check_sample_weights_not_an_array",
    "check_sample_weights_not_overwritten", "check_sample_weights_pandas_series",
    "check_sample_weights_shape", "check_transformer_data_not_an_array",
    "check_transformer_general", "check_transformer_preserve_dtypes",
]
_RECALIBRATION["ConformalQuantileRecalibration"] = dict.fromkeys(
    _FORM_CHECKS + ["check_estimator_sparse_array", "check_estimator_sparse_matrix"],
    "the check fits on a numeric array that is not interval bounds with a level (the default "
    "level=None refuses an array of bounds; other column counts are refused too), nor Quantiles "
    "predictions; re-tested on valid input in tests/recalibration/test_cqr.py.")
_RECALIBRATION["SpreadScaling"] = dict.fromkeys(
    _FORM_CHECKS,
    "the check fits on a numeric array; SpreadScaling takes Empirical ensembles (distribution "
    "objects) only and refuses arrays with a TypeError; re-tested on valid input in "
    "tests/recalibration/test_spread.py.")

#: ``{estimator class name: {check name: reason}}``.
EXPECTED_FAILED_CHECKS = {
    **dict.fromkeys(["CalibrationError", "SKCE", "MMCE", "UCME"], _METRICS),
    **dict.fromkeys(["BinnedCalibrationEstimator", "KDECalibrationEstimator",
                     "KernelRidgeCalibrationEstimator", "TemperatureCalibrationEstimator",
                     "ZeroCalibrationEstimator"], _ESTIMATION),
    **_RECALIBRATION,
}


def expected_failed_checks(estimator):
    """The generic checks expected to fail for ``estimator``, with their reasons.

    Parameters
    ----------
    estimator : estimator instance
        A skcalib estimator (any other estimator has no expected failures).

    Returns
    -------
    dict
        ``{check name: reason}``, as ``parametrize_with_checks(expected_failed_checks=...)``
        takes it.
    """
    return dict(EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {}))
