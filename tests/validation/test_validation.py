"""Input validation of every public metric and estimator.

Every bad input raises a ``ValueError`` (``TypeError`` for arguments of a wrong type) whose message
names the offending argument; every documented input form (lists, pandas, float32, arbitrary label
types) is accepted and gives the same result as plain numpy input; inputs are never modified.
"""

import re

import numpy as np
import pandas as pd
import pytest

import skcalib
from skcalib import MMCE, SKCE, UCME, CalibrationError, calibration_error, mmce, skce, ucme
from skcalib._validation import (
    check_labels_and_probabilities,
    check_option,
    check_sample_weight,
    check_scalar_param,
    row_sum_tolerance,
)
from skcalib.kernels import ExponentialKernel, GaussianKernel, tensor

# --------------------------------------------------------------------------------------------
# Data and helpers

N, C = 12, 3
_rng = np.random.default_rng(20240601)
P3 = _rng.dirichlet(np.ones(C), size=N)
Y3 = np.tile(np.arange(C), N // C)  # every class present
_rng.shuffle(Y3)
PB = _rng.uniform(size=N)  # binary P(1)
YB = np.tile([0, 1], N // 2)
_rng.shuffle(YB)
W = _rng.uniform(0.5, 2.0, size=N)

FUNCS = ["calibration_error", "skce", "mmce", "ucme"]
PROB_NAME = {"calibration_error": "y_proba", "skce": "y_pred", "mmce": "y_pred", "ucme": "y_pred"}


def call(name, y, P, **kw):
    """Call a public metric function by name (ucme with a fixed random_state)."""
    if name == "calibration_error":
        return calibration_error(y, P, **kw)
    if name == "skce":
        return skce(y, P, **kw)
    if name == "mmce":
        return mmce(y, P, **kw)
    kw.setdefault("random_state", 0)
    return ucme(y, P, **kw)


ESTIMATORS = {
    "CalibrationError": lambda **kw: CalibrationError(**kw),
    "SKCE": lambda **kw: SKCE(**kw),
    "MMCE": lambda **kw: MMCE(**kw),
    "UCME": lambda **kw: UCME(random_state=0, **kw),
}


def fmt(pattern, p, y="y_true"):
    """Regex for a message: ``{p}``/``{y}`` are the probability/label argument names."""
    return pattern.format(p=re.escape(p), y=y)


def _with(P, i, j, v):
    P = P.copy()
    P[i, j] = v
    return P


# --------------------------------------------------------------------------------------------
# Bad probabilities and labels: (id, y, P, kwargs, exception, message pattern)

BAD_CASES = [
    ("nan", Y3, _with(P3, 0, 0, np.nan), {}, ValueError, r"{p} contains NaN"),
    ("posinf", Y3, _with(P3, 1, 1, np.inf), {}, ValueError, r"{p} contains inf"),
    ("neginf", Y3, _with(P3, 2, 2, -np.inf), {}, ValueError, r"{p} contains inf"),
    ("above_one", Y3, np.vstack([[1.2, -0.2, 0.0], P3[1:]]), {}, ValueError,
     r"{p} must contain probabilities in \[0"),
    ("below_zero", Y3, np.vstack([[-0.1, 0.6, 0.5], P3[1:]]), {}, ValueError,
     r"{p} must contain probabilities in \[0"),
    ("above_one_row_sums_to_1", Y3, np.vstack([[1.5, -0.25, -0.25], P3[1:]]), {}, ValueError,
     r"{p} must contain probabilities in \[0"),
    ("rows_not_sum_1", Y3, P3 * 0.9, {}, ValueError, r"rows of {p} must sum to 1"),
    ("one_row_off_by_1e-6", Y3, _with(P3, 3, 0, P3[3, 0] + 1e-6), {}, ValueError,
     r"rows of {p} must sum to 1"),
    ("length_mismatch", Y3[:-1], P3, {}, ValueError, r"{y} and {p} have inconsistent lengths"),
    ("length_mismatch_binary", YB, PB[:-2], {}, ValueError,
     r"{y} and {p} have inconsistent lengths"),
    ("label_not_in_labels", Y3, P3, {"labels": [0, 1, 5]}, ValueError,
     r"{y} contains labels not in labels"),
    ("string_labels_vs_int_labels", np.array(list("abc"))[Y3], P3, {"labels": [0, 1, 2]},
     ValueError, r"{y} contains labels not in labels"),
    ("duplicate_labels", Y3, P3, {"labels": [0, 1, 1, 2]}, ValueError,
     r"labels contains duplicate"),
    ("duplicate_labels_same_count", Y3, P3, {"labels": [0, 1, 1]}, ValueError,
     r"labels contains duplicate"),
    ("labels_single_class", np.ones(N, int), PB, {"labels": [1]}, ValueError,
     r"labels must contain at least 2"),
    ("labels_nan", YB, np.column_stack([1 - PB, PB]), {"labels": [0.0, np.nan]}, ValueError,
     r"labels contains NaN"),
    ("empty_2d", Y3[:0], P3[:0], {}, ValueError, r"{y} and {p} are empty"),
    ("empty_1d", [], [], {}, ValueError, r"{y} and {p} are empty"),
    ("one_column_three_classes", Y3, P3[:, :1], {}, ValueError, r"one-column {p} is a binary"),
    ("1d_three_classes", Y3, P3[:, 0], {}, ValueError, r"one-column {p} is a binary"),
    ("1d_with_three_labels", YB, PB, {"labels": [0, 1, 2]}, ValueError,
     r"one-column {p} is a binary"),
    ("columns_vs_labels", Y3, P3, {"labels": [0, 1, 2, 3]}, ValueError,
     r"labels has 4 classes but {p} has 3 columns"),
    ("columns_vs_labels_fewer", YB, np.column_stack([1 - PB, PB]), {"labels": [0, 1, 2]},
     ValueError, r"labels has 3 classes but {p} has 2 columns"),
    ("columns_vs_y_true", Y3, np.column_stack([P3, np.zeros(N)]), {}, ValueError,
     r"{y} has 3 distinct labels but {p} has 4 columns"),
    ("y_nan", np.where(Y3 == 2, np.nan, Y3.astype(float)), P3, {}, ValueError,
     r"{y} contains NaN"),
    ("y_none_entry", np.array([None] + list(Y3[1:]), dtype=object), P3, {}, ValueError,
     r"{y} contains missing"),
    ("y_nan_in_strings", np.array([np.nan] + list("abcabcabcab"), dtype=object), P3, {},
     ValueError, r"{y} contains missing"),
    ("y_2d", np.column_stack([Y3, Y3]), P3, {}, ValueError, r"{y} must be one-dimensional"),
    ("y_mixed_types", np.array([0, "a"] * (N // 2), dtype=object), np.column_stack([1 - PB, PB]),
     {}, ValueError, r"{y} contains labels of mixed types"),
    ("y_list_numbers_and_strings", [0, "1"] * (N // 2), np.column_stack([1 - PB, PB]), {},
     ValueError, r"{y} mixes strings with other types"),
    ("labels_list_numbers_and_strings", YB, np.column_stack([1 - PB, PB]), {"labels": [0, "1"]},
     ValueError, r"labels mixes strings with other types"),
    ("P_3d", Y3, P3[:, :, None], {}, ValueError, r"{p}"),
    ("P_not_numeric", YB[:2], ["a", "b"], {}, ValueError, r"{p}"),
    ("P_ragged", YB[:2], [[0.5, 0.5], [1.0]], {}, ValueError, r"{p}"),
    ("P_none", Y3, None, {}, ValueError, r"{p} must be given"),
    ("y_none", None, P3, {}, ValueError, r"{y} must be given"),
    ("pos_label_not_a_class_1d", YB, PB, {"pos_label": 7}, ValueError,
     r"pos_label=7 is not one of the classes"),
    ("pos_label_not_a_class_2col", YB, np.column_stack([1 - PB, PB]), {"pos_label": 7},
     ValueError, r"pos_label=7 is not one of the classes"),
    ("pos_label_multiclass", Y3, P3, {"pos_label": 1}, ValueError,
     r"pos_label is only meaningful for binary"),
    ("single_string_label_1d", np.array(["a"] * N), PB, {}, ValueError,
     r"{y} contains a single label"),
    ("y_is_a_string", "abc", PB[:3], {}, TypeError, r"{y} must be a one-dimensional"),
    ("labels_is_a_set", YB, PB, {"labels": {0, 1}}, TypeError, r"labels must be a one-dim"),
    ("P_is_a_string", YB[:3], "0.5", {}, TypeError, r"{p} must be an array-like"),
]


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize(
    "y, P, kw, exc, pattern", [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES]
)
def test_functions_reject_bad_input(name, y, P, kw, exc, pattern):
    with pytest.raises(exc, match=fmt(pattern, PROB_NAME[name])):
        call(name, y, P, **kw)


# Estimators: the probability argument is X, the labels argument y. scikit-learn names it y; the
# shared validation says y_true (see test_estimator_messages_name_y below), so both are accepted.
EST_Y = r"y(_true)?"

EST_FIT_CASES = [c for c in BAD_CASES if c[0] not in ("y_none",)]


@pytest.mark.parametrize("est", list(ESTIMATORS))
@pytest.mark.parametrize(
    "y, P, kw, exc, pattern", [c[1:] for c in EST_FIT_CASES], ids=[c[0] for c in EST_FIT_CASES]
)
def test_estimator_fit_rejects_bad_input(est, y, P, kw, exc, pattern):
    with pytest.raises(exc, match=fmt(pattern, "X", EST_Y)):
        ESTIMATORS[est](**kw).fit(P, y)


# score: the classes are those seen in fit; cases that need labels=/pos_label= are fit-only.
EST_SCORE_CASES = [
    c for c in BAD_CASES
    if not c[3]
    and c[0] not in ("y_none", "one_column_three_classes", "1d_three_classes", "columns_vs_y_true",
                     "y_mixed_types", "single_string_label_1d", "P_ragged", "P_is_a_string")
    and np.ndim(c[2]) == 2 and np.shape(c[2])[1] == C
]


@pytest.mark.parametrize("est", list(ESTIMATORS))
@pytest.mark.parametrize(
    "y, P, kw, exc, pattern", [c[1:] for c in EST_SCORE_CASES], ids=[c[0] for c in EST_SCORE_CASES]
)
def test_estimator_score_rejects_bad_input(est, y, P, kw, exc, pattern):
    fitted = ESTIMATORS[est]().fit(P3, Y3)
    with pytest.raises(exc, match=fmt(pattern, "X", EST_Y)):
        fitted.score(P, y)


@pytest.mark.parametrize("est", list(ESTIMATORS))
@pytest.mark.parametrize("how", ["fit", "score"])
def test_estimator_rejects_missing_y(est, how):
    e = ESTIMATORS[est]()
    if how == "score":
        e.fit(P3, Y3)
    with pytest.raises(ValueError, match=r"\by\b"):
        getattr(e, how)(P3, None)


@pytest.mark.parametrize("est", list(ESTIMATORS))
def test_estimator_score_rejects_unseen_label_and_wrong_width(est):
    fitted = ESTIMATORS[est]().fit(P3, Y3)
    with pytest.raises(ValueError, match=r"y(_true)? contains labels not in"):
        fitted.score(P3, np.where(Y3 == 2, 3, Y3))
    with pytest.raises(ValueError, match=r"X has 1 features"):
        fitted.score(P3[:, :1], Y3)
    with pytest.raises(ValueError, match=r"X has 4 features"):
        fitted.score(np.column_stack([P3, np.zeros(N)]), Y3)


@pytest.mark.parametrize("est", list(ESTIMATORS))
def test_estimator_messages_name_y(est):
    fitted = ESTIMATORS[est]().fit(P3, Y3)
    with pytest.raises(ValueError, match=r"^y contains labels not in"):
        fitted.score(P3, np.where(Y3 == 2, 3, Y3))


# --------------------------------------------------------------------------------------------
# Row-sum tolerance: sqrt(eps) of the input dtype


def _softmax32(n, c, seed):
    z = (np.random.default_rng(seed).normal(size=(n, c)) * 4).astype(np.float32)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_row_sum_tolerance_values():
    assert row_sum_tolerance(np.float64) == pytest.approx(1.49e-8, rel=1e-2)
    assert row_sum_tolerance(np.float32) == pytest.approx(3.45e-4, rel=1e-2)
    assert row_sum_tolerance(np.int64) == row_sum_tolerance(np.float64)


@pytest.mark.parametrize("name", FUNCS)
def test_float64_row_sum_tolerance(name):
    tol = row_sum_tolerance(np.float64)
    top = P3.argmax(axis=1)  # moving the largest entry keeps every value in [0, 1]
    ok = P3.copy()
    ok[np.arange(N), top] -= 0.5 * tol
    assert np.isfinite(call(name, Y3, ok))
    bad = P3.copy()
    bad[0, top[0]] -= 10 * tol
    with pytest.raises(ValueError, match=r"rows of y_(proba|pred) must sum to 1.*float64"):
        call(name, Y3, bad)


@pytest.mark.parametrize("name", FUNCS)
def test_float32_softmax_rows_pass(name):
    P = _softmax32(200, 10, 1)
    y = np.random.default_rng(2).integers(0, 10, 200)
    y[:10] = np.arange(10)
    dev = np.abs(P.astype(np.float64).sum(axis=1) - 1.0).max()
    assert dev > row_sum_tolerance(np.float64)  # the float64 tolerance would reject these rows
    value = call(name, y, P)
    assert np.isfinite(value)
    # The same float32 values as a DataFrame and as a nullable-Float32 DataFrame.
    assert call(name, y, pd.DataFrame(P)) == pytest.approx(value, rel=1e-12, abs=1e-15)
    assert call(name, y, pd.DataFrame(P).astype("Float32")) == pytest.approx(
        value, rel=1e-12, abs=1e-15)
    assert call(name, pd.Series(y), pd.DataFrame(P)) == pytest.approx(value, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name", FUNCS)
def test_float32_deviation_within_and_beyond_tolerance(name):
    P = _softmax32(50, 3, 3)
    y = np.arange(50) % 3
    top = P.argmax(axis=1)  # moving the largest entry keeps every value in [0, 1]
    within = P.copy()
    within[np.arange(50), top] -= np.float32(1e-4)  # < sqrt(eps32) = 3.5e-4
    assert np.isfinite(call(name, y, within))
    assert np.isfinite(call(name, y, pd.DataFrame(within)))
    beyond = P.copy()
    beyond[5, top[5]] -= np.float32(1e-3)
    with pytest.raises(ValueError, match=r"rows of y_(proba|pred) must sum to 1.*float32.*row 5"):
        call(name, y, beyond)
    with pytest.raises(ValueError, match=r"rows of y_(proba|pred) must sum to 1.*float32"):
        call(name, y, pd.DataFrame(beyond))
    # float64 input with the same deviation is rejected: the tolerance is that of the input dtype.
    with pytest.raises(ValueError, match=r"rows of y_(proba|pred) must sum to 1.*float64"):
        call(name, y, within.astype(np.float64))


@pytest.mark.parametrize("est", list(ESTIMATORS))
def test_estimators_float32(est):
    P = _softmax32(60, 4, 4)
    y = np.arange(60) % 4
    e = ESTIMATORS[est]().fit(P, y)
    assert np.isfinite(e.score(P, y))
    assert np.isfinite(e.score(pd.DataFrame(P), pd.Series(y)))


# --------------------------------------------------------------------------------------------
# Sample size: estimators that need two samples


@pytest.mark.parametrize("name, kw", [
    ("skce", {"estimator": "unbiased"}),
    ("skce", {"estimator": "block"}),
    ("skce", {"estimator": "block", "block_size": 2}),
    ("mmce", {"estimator": "unbiased", "squared": True}),
    ("mmce", {"estimator": "block", "squared": True}),
])
def test_two_samples_needed(name, kw):
    with pytest.raises(ValueError, match=r"at least 2 samples"):
        call(name, [1], [[0.3, 0.7]], labels=[0, 1], **kw)
    with pytest.raises(ValueError, match=r"at least 2 samples"):
        call(name, [1], [0.7], **kw)
    assert np.isfinite(call(name, [0, 1], [[0.3, 0.7], [0.6, 0.4]], **kw))


@pytest.mark.parametrize("name, kw", [
    ("calibration_error", {}),
    ("skce", {"estimator": "biased"}),
    ("mmce", {}),
    ("ucme", {}),
])
def test_one_sample_suffices(name, kw):
    assert np.isfinite(call(name, [1], [[0.3, 0.7]], labels=[0, 1], **kw))
    assert np.isfinite(call(name, [1], [0.7], **kw))


@pytest.mark.parametrize("make", [
    lambda: SKCE(), lambda: SKCE(estimator="block"),
    lambda: MMCE(estimator="unbiased", squared=True), lambda: MMCE(estimator="block", squared=True),
], ids=["SKCE", "SKCE-block", "MMCE-unbiased", "MMCE-block"])
def test_estimators_two_samples_needed(make):
    fitted = make().fit(P3, Y3)
    with pytest.raises(ValueError, match=r"at least 2 samples"):
        fitted.score(P3[:1], Y3[:1])
    with pytest.raises(ValueError, match=r"at least 2 samples"):
        fitted.transform(P3[:1], Y3[:1])
    assert np.isfinite(fitted.score(P3[:2], Y3[:2]))


# --------------------------------------------------------------------------------------------
# Options and hyper-parameters


@pytest.mark.parametrize("option, valid", [
    ("norm", "l1"), ("strategy", "uniform"), ("mode", "auto"),
])
@pytest.mark.parametrize("bad", ["L1", "bogus", "", None, 1, "uniform ", ["l1"]])
def test_calibration_error_invalid_option_strings(option, valid, bad):
    with pytest.raises(ValueError, match=rf"^{option} must be one of"):
        calibration_error(Y3, P3, **{option: bad})
    with pytest.raises(ValueError, match=rf"^{option} must be one of"):
        CalibrationError(**{option: bad}).fit(P3, Y3)
    fitted = CalibrationError().fit(P3, Y3)
    fitted.set_params(**{option: bad})
    with pytest.raises(ValueError, match=rf"^{option} must be one of"):
        fitted.score(P3, Y3)


@pytest.mark.parametrize("bad", ["UNBIASED", "linear", "", None, 0])
def test_invalid_estimator_option(bad):
    with pytest.raises(ValueError, match=r"^estimator must be one of"):
        skce(Y3, P3, estimator=bad)
    with pytest.raises(ValueError, match=r"^estimator must be one of"):
        mmce(Y3, P3, estimator=bad, squared=True)
    with pytest.raises(ValueError, match=r"^estimator must be one of"):
        SKCE(estimator=bad).fit(P3, Y3)
    with pytest.raises(ValueError, match=r"^estimator must be one of"):
        MMCE(estimator=bad, squared=True).fit(P3, Y3)
    fitted = SKCE().fit(P3, Y3).set_params(estimator=bad)
    with pytest.raises(ValueError, match=r"^estimator must be one of"):
        fitted.score(P3, Y3)


def test_mode_binary_needs_two_classes():
    with pytest.raises(ValueError, match=r"mode='binary' needs 2 classes"):
        calibration_error(Y3, P3, mode="binary")
    with pytest.raises(ValueError, match=r"mode='binary' needs 2 classes"):
        CalibrationError(mode="binary").fit(P3, Y3)


@pytest.mark.parametrize("param", ["n_bins", "min_bin_size"])
@pytest.mark.parametrize("bad, exc", [
    (0, ValueError), (-1, ValueError), (-10, ValueError),
    (True, TypeError), (False, TypeError), (np.bool_(True), TypeError),
    (2.0, TypeError), (2.5, TypeError), (np.float64(3.0), TypeError), ("3", TypeError),
    (None, TypeError),
])
def test_invalid_bin_parameters(param, bad, exc):
    with pytest.raises(exc, match=rf"^{param} must be"):
        calibration_error(Y3, P3, **{param: bad})
    with pytest.raises(exc, match=rf"^{param} must be"):
        CalibrationError(**{param: bad}).fit(P3, Y3)


def test_numpy_integer_bins_accepted():
    assert calibration_error(Y3, P3, n_bins=np.int64(5)) == calibration_error(Y3, P3, n_bins=5)


BLOCK_CALLS = {
    "skce": lambda bs, y=Y3, P=P3: skce(y, P, estimator="block", block_size=bs),
    "mmce": lambda bs, y=Y3, P=P3: mmce(y, P, estimator="block", block_size=bs, squared=True),
    "SKCE": lambda bs, y=Y3, P=P3: SKCE(estimator="block", block_size=bs).fit(P, y).score(P, y),
    "MMCE": lambda bs, y=Y3, P=P3: MMCE(estimator="block", block_size=bs, squared=True)
    .fit(P, y).score(P, y),
}


@pytest.mark.parametrize("where", list(BLOCK_CALLS))
@pytest.mark.parametrize("bad, exc", [
    (0, ValueError), (1, ValueError), (-2, ValueError), (N + 1, ValueError), (10 * N, ValueError),
    (True, TypeError), (False, TypeError), (2.0, TypeError), (4.5, TypeError), (None, TypeError),
    ("4", TypeError),
])
def test_invalid_block_size(where, bad, exc):
    with pytest.raises(exc, match=r"block_size"):
        BLOCK_CALLS[where](bad)


@pytest.mark.parametrize("where", list(BLOCK_CALLS))
def test_valid_block_sizes(where):
    for bs in (2, 3, 5, N, np.int64(4)):
        assert np.isfinite(BLOCK_CALLS[where](bs))


@pytest.mark.parametrize("norm", ["l1", "max"])
def test_squared_and_debias_need_l2(norm):
    with pytest.raises(ValueError, match=r"squared=True is only defined for norm='l2'"):
        calibration_error(Y3, P3, norm=norm, squared=True)
    with pytest.raises(ValueError, match=r"debias=True is only defined for norm='l2'"):
        calibration_error(Y3, P3, norm=norm, debias=True)
    with pytest.raises(ValueError, match=r"squared=True"):
        CalibrationError(norm=norm, squared=True).fit(P3, Y3)
    with pytest.raises(ValueError, match=r"debias=True"):
        CalibrationError(norm=norm, debias=True).fit(P3, Y3)
    assert np.isfinite(calibration_error(Y3, P3, norm="l2", squared=True, debias=True))


@pytest.mark.parametrize("param", ["squared", "debias"])
@pytest.mark.parametrize("bad", ["yes", "False", 1, 0, 0.0, None, [True], np.array([True])])
def test_bool_flags_must_be_bool(param, bad):
    """A bool, not truthiness: ``squared="False"`` must not mean True."""
    with pytest.raises(TypeError, match=rf"^{param} must be True or False"):
        calibration_error(Y3, P3, norm="l2", **{param: bad})
    with pytest.raises(TypeError, match=rf"^{param} must be True or False"):
        CalibrationError(norm="l2", **{param: bad}).fit(P3, Y3)


def test_numpy_bools_accepted_as_flags():
    a = calibration_error(Y3, P3, norm="l2", squared=np.bool_(True), debias=np.bool_(False))
    assert a == calibration_error(Y3, P3, norm="l2", squared=True, debias=False)


def test_mmce_square_root_needs_biased_estimator():
    for est in ("unbiased", "block"):
        with pytest.raises(ValueError, match=r"squared=False"):
            mmce(Y3, P3, estimator=est)
        with pytest.raises(ValueError, match=r"squared=False"):
            MMCE(estimator=est).fit(P3, Y3)


def test_invalid_kernels():
    with pytest.raises(TypeError, match=r"^kernel"):
        skce(Y3, P3, kernel="gaussian")
    with pytest.raises(TypeError, match=r"^kernel"):
        mmce(Y3, P3, kernel=tensor(GaussianKernel(1.0)))
    with pytest.raises(TypeError, match=r"^kernel"):
        ucme(Y3, P3, kernel=lambda a, b: 1.0, random_state=0)
    with pytest.raises(ValueError, match=r"length_scale"):
        skce(Y3, P3, kernel=GaussianKernel("mean"))
    with pytest.raises(ValueError, match=r"length_scale"):
        skce(Y3, P3, kernel=GaussianKernel(-1.0))
    with pytest.raises(ValueError, match=r"metric"):
        skce(Y3, P3, kernel=ExponentialKernel(1.0, metric="l1"))


@pytest.mark.parametrize("bad, exc", [(0, ValueError), (-1, ValueError), (1.5, TypeError),
                                      (True, TypeError)])
def test_invalid_n_test_locations(bad, exc):
    with pytest.raises(exc, match=r"^n_test_locations"):
        ucme(Y3, P3, n_test_locations=bad, random_state=0)


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_invalid_chunk_size(bad):
    with pytest.raises((ValueError, TypeError), match=r"chunk_size"):
        skce(Y3, P3, chunk_size=bad)


def test_ucme_test_locations_validated():
    with pytest.raises(ValueError,
                       match=r"test_predictions and test_targets must be given together"):
        ucme(Y3, P3, test_predictions=P3[:3])
    with pytest.raises(ValueError, match=r"test_predictions must contain probabilities"):
        ucme(Y3, P3, test_predictions=P3[:3] * 2, test_targets=[0, 1, 2])
    with pytest.raises(ValueError, match=r"rows of test_predictions must sum to 1"):
        ucme(Y3, P3, test_predictions=P3[:3] * 0.5, test_targets=[0, 1, 2])
    with pytest.raises(ValueError, match=r"test_predictions has 2 columns"):
        ucme(Y3, P3, test_predictions=np.full((3, 2), 0.5), test_targets=[0, 1, 2])


def test_ucme_test_targets_named_in_messages():
    with pytest.raises(ValueError, match=r"test_targets"):
        ucme(Y3, P3, test_predictions=P3[:3], test_targets=[0, 1, 7])


# --------------------------------------------------------------------------------------------
# Sample weights

BAD_WEIGHTS = [
    ("negative", np.r_[-1.0, W[1:]], r"sample_weight must be non-negative"),
    ("nan", np.r_[np.nan, W[1:]], r"sample_weight contains NaN"),
    ("inf", np.r_[np.inf, W[1:]], r"sample_weight contains NaN or inf"),
    ("too_short", W[:-1], r"sample_weight has 11 entries but there are 12 samples"),
    ("too_long", np.r_[W, 1.0], r"sample_weight has 13 entries but there are 12 samples"),
    ("all_zero", np.zeros(N), r"sample_weight must have a positive sum"),
    ("2d", np.column_stack([W, W]), r"sample_weight must be one-dimensional"),
    ("scalar", 2.0, r"sample_weight must be one-dimensional"),
    ("strings", np.array(["a"] * N), r"sample_weight must contain numbers; got strings"),
]


@pytest.mark.parametrize("w, pattern", [c[1:] for c in BAD_WEIGHTS],
                         ids=[c[0] for c in BAD_WEIGHTS])
def test_invalid_sample_weight(w, pattern):
    with pytest.raises(ValueError, match=pattern):
        calibration_error(Y3, P3, sample_weight=w)
    with pytest.raises(ValueError, match=pattern):
        calibration_error(YB, PB, norm="l2", debias=True, squared=True, sample_weight=w)
    fitted = CalibrationError().fit(P3, Y3)
    with pytest.raises(ValueError, match=pattern):
        fitted.score(P3, Y3, sample_weight=w)


@pytest.mark.parametrize("est", ["SKCE", "MMCE", "UCME"])
@pytest.mark.parametrize("w, pattern", [c[1:] for c in BAD_WEIGHTS],
                         ids=[c[0] for c in BAD_WEIGHTS])
def test_kernel_estimators_check_sample_weight(est, w, pattern):
    # The kernel estimators take sample_weight (weighted statistics:
    # tests/metrics/test_kernel_sample_weights.py) and check it as calibration_error does.
    fitted = ESTIMATORS[est]().fit(P3, Y3)
    assert np.isfinite(fitted.score(P3, Y3, sample_weight=W))
    with pytest.raises(ValueError, match=pattern):
        fitted.score(P3, Y3, sample_weight=w)


def test_accepted_sample_weights():
    ref = calibration_error(Y3, P3, sample_weight=W)
    assert calibration_error(Y3, P3, sample_weight=W.tolist()) == ref
    assert calibration_error(Y3, P3, sample_weight=pd.Series(W)) == ref
    assert calibration_error(Y3, P3, sample_weight=W.astype(np.float32)) == pytest.approx(ref)
    w0 = W.copy()
    w0[:3] = 0.0  # zero weights are allowed as long as the sum is positive
    assert np.isfinite(calibration_error(Y3, P3, sample_weight=w0))
    assert calibration_error(Y3, P3, sample_weight=np.ones(N)) == pytest.approx(
        calibration_error(Y3, P3), rel=1e-12)
    assert calibration_error(Y3, P3, sample_weight=np.ones(N, dtype=int)) == pytest.approx(
        calibration_error(Y3, P3), rel=1e-12)


# --------------------------------------------------------------------------------------------
# Accepted input forms give the reference result

NAMES3 = np.array(["cat", "dog", "eel"])  # sorted, so the columns keep their order


def _encodings_multiclass():
    """(id, y, P, labels) with the same meaning as (Y3, P3)."""
    return [
        ("lists", Y3.tolist(), P3.tolist(), None),
        ("tuples", tuple(Y3.tolist()), tuple(map(tuple, P3.tolist())), None),
        ("fortran", Y3, np.asfortranarray(P3), None),
        ("dataframe_series", pd.Series(Y3), pd.DataFrame(P3, columns=NAMES3), None),
        ("int_from_10", Y3 + 10, P3, None),
        ("negative_ints", Y3 * 3 - 5, P3, None),
        ("int8", Y3.astype(np.int8), P3, None),
        ("uint", Y3.astype(np.uint16) + 1, P3, None),
        ("float_labels", Y3.astype(float) / 2, P3, None),
        ("strings", NAMES3[Y3], P3, None),
        ("object_strings", NAMES3.astype(object)[Y3], P3, None),
        ("string_series", pd.Series(NAMES3[Y3]), pd.DataFrame(P3), None),
        ("pandas_string_dtype", pd.Series(NAMES3[Y3], dtype="string"), pd.DataFrame(P3), None),
        ("categorical", pd.Series(NAMES3[Y3]).astype("category"), pd.DataFrame(P3), None),
        ("categorical_labels", pd.Series(NAMES3[Y3]).astype("category"), pd.DataFrame(P3),
         list(NAMES3)),
        ("nullable_int", pd.Series(Y3, dtype="Int64"), P3, None),
        ("labels_given_unsorted", Y3, P3, [2, 0, 1]),
        ("labels_series", Y3, P3, pd.Series([0, 1, 2])),
        ("column_vector_y", Y3[:, None], P3, None),
    ]


def _reference(name, kind="function", **kw):
    if kind == "function":
        return call(name, Y3, P3, **kw)
    e = ESTIMATORS[name]().fit(P3, Y3)
    return e.score(P3, Y3)


ENC3 = _encodings_multiclass()


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("y, P, labels", [e[1:] for e in ENC3], ids=[e[0] for e in ENC3])
def test_functions_accept_input_forms(name, y, P, labels):
    ref = call(name, Y3, P3)
    kw = {} if labels is None else {"labels": labels}
    assert call(name, y, P, **kw) == pytest.approx(ref, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("est", list(ESTIMATORS))
@pytest.mark.parametrize("y, P, labels", [e[1:] for e in ENC3], ids=[e[0] for e in ENC3])
def test_estimators_accept_input_forms(est, y, P, labels):
    ref = ESTIMATORS[est]().fit(P3, Y3).score(P3, Y3)
    kw = {} if labels is None else {"labels": labels}
    e = ESTIMATORS[est](**kw).fit(P, y)
    assert len(e.classes_) == C
    assert e.score(P, y) == pytest.approx(ref, rel=1e-12, abs=1e-15)


def _encodings_binary():
    """(id, y, p, kwargs) with the meaning of (YB, PB) -- P(greater label) = PB."""
    P2 = np.column_stack([1 - PB, PB])
    return [
        ("1d", YB, PB, {}),
        ("column", YB, PB[:, None], {}),
        ("two_columns", YB, P2, {}),
        ("lists", YB.tolist(), PB.tolist(), {}),
        ("series", pd.Series(YB), pd.Series(PB), {}),
        ("dataframe_1col", pd.Series(YB), pd.DataFrame({"p": PB}), {}),
        ("bool", YB.astype(bool), PB, {}),
        ("bool_two_columns", YB.astype(bool), P2, {}),
        ("bool_series", pd.Series(YB.astype(bool)), pd.Series(PB), {}),
        ("minus_one_one", 2 * YB - 1, PB, {}),
        ("strings", np.array(["neg", "pos"])[YB], PB, {}),
        ("categorical", pd.Series(np.array(["neg", "pos"])[YB]).astype("category"), PB, {}),
        ("pos_label_0", YB, 1 - PB, {"pos_label": 0}),
        ("pos_label_explicit", YB, PB, {"pos_label": 1}),
        ("pos_label_string", np.array(["neg", "pos"])[YB], 1 - PB, {"pos_label": "neg"}),
        ("labels", YB, PB, {"labels": [0, 1]}),
        ("float32", YB, PB.astype(np.float32), "f32"),
    ]


ENCB = _encodings_binary()


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("y, p, kw", [e[1:] for e in ENCB], ids=[e[0] for e in ENCB])
def test_functions_accept_binary_forms(name, y, p, kw):
    if kw == "f32":
        ref = call(name, YB, PB.astype(np.float32).astype(np.float64))
        kw = {}
    else:
        ref = call(name, YB, PB)
    if name == "calibration_error" and kw.get("pos_label") == 0:
        kw = dict(kw, mode="canonical")  # binary mode would bin P(0) instead of P(1)
        ref = call(name, YB, PB, mode="canonical")
    if name == "calibration_error" and kw.get("pos_label") == "neg":
        kw = dict(kw, mode="canonical")
        ref = call(name, YB, PB, mode="canonical")
    assert call(name, y, p, **kw) == pytest.approx(ref, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("est", list(ESTIMATORS))
@pytest.mark.parametrize("y, p, kw", [e[1:] for e in ENCB if e[0] not in ("float32",)],
                         ids=[e[0] for e in ENCB if e[0] not in ("float32",)])
def test_estimators_accept_binary_forms(est, y, p, kw):
    if est == "CalibrationError":
        kw = dict(kw, mode="canonical")
    ref = ESTIMATORS[est](**({"mode": "canonical"} if est == "CalibrationError" else {})) \
        .fit(np.column_stack([1 - PB, PB]), YB).score(np.column_stack([1 - PB, PB]), YB)
    e = ESTIMATORS[est](**kw).fit(p, y)
    assert e.score(p, y) == pytest.approx(ref, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("label", [0, 1])
def test_single_class_binary_fold_same_for_both_encodings(name, label):
    """A fold in which only one class occurs: P(1) and the two-column form agree (labels {0, 1})."""
    y = np.full(N, label)
    ref = call(name, y, PB, labels=[0, 1])
    assert call(name, y, PB) == pytest.approx(ref, rel=1e-12, abs=1e-15)
    assert call(name, y, np.column_stack([1 - PB, PB])) == pytest.approx(ref, rel=1e-12, abs=1e-15)


def test_single_label_completed_with_pos_label():
    y = np.array(["a"] * N)
    ref = skce(y, PB, labels=["a", "b"], pos_label="b")
    assert skce(y, PB, pos_label="b") == pytest.approx(ref, rel=1e-12)
    assert skce(y, np.column_stack([1 - PB, PB]), pos_label="b") == pytest.approx(ref, rel=1e-12)


def test_ucme_accepts_generator_random_state():
    a = ucme(Y3, P3, random_state=np.random.default_rng(0))
    b = UCME(random_state=np.random.default_rng(0)).fit(P3, Y3).score(P3, Y3)
    assert np.isfinite(a) and np.isfinite(b)


# --------------------------------------------------------------------------------------------
# Inputs are never modified (and read-only inputs work)


def _calls():
    """(id, callable(P, y, w, labels)) covering every public entry point."""
    def ce(**kw):
        return lambda P, y, w, lab: calibration_error(y, P, sample_weight=w, labels=lab, **kw)

    def est(make, weights=False):
        def f(P, y, w, lab):
            e = make(labels=lab).fit(P, y)
            out = [e.score(P, y, sample_weight=w) if weights else e.score(P, y)]
            out.append(e.transform(P, y))
            out.append(e.fit_transform(P, y))
            return out
        return f

    return [
        ("ce_l1", ce()),
        ("ce_l2_debias", ce(norm="l2", debias=True, squared=True)),
        ("ce_max_classwise", ce(norm="max", mode="classwise")),
        ("ce_canonical", ce(mode="canonical")),
        ("ce_quantile", ce(strategy="quantile", n_bins=3)),
        ("ce_median_variance", ce(strategy="median_variance", n_bins=4)),
        ("skce_unbiased", lambda P, y, w, lab: skce(y, P, labels=lab)),
        ("skce_biased", lambda P, y, w, lab: skce(y, P, labels=lab, estimator="biased",
                                                  kernel=ExponentialKernel("median", metric="tv"))),
        ("skce_block", lambda P, y, w, lab: skce(y, P, labels=lab, estimator="block", block_size=3,
                                                 chunk_size=2)),
        ("mmce", lambda P, y, w, lab: mmce(y, P, labels=lab)),
        ("mmce_unbiased", lambda P, y, w, lab: mmce(y, P, labels=lab, estimator="unbiased",
                                                    squared=True, kernel=GaussianKernel("median"))),
        ("ucme", lambda P, y, w, lab: ucme(y, P, labels=lab, random_state=0)),
        ("ucme_locations", lambda P, y, w, lab: ucme(y, P, labels=lab, test_predictions=P[:4],
                                                     test_targets=y[:4])),
        ("CalibrationError", est(lambda **kw: CalibrationError(strategy="quantile", n_bins=3, **kw),
                                 weights=True)),
        ("SKCE", est(lambda **kw: SKCE(**kw))),
        ("SKCE_block", est(lambda **kw: SKCE(estimator="block", block_size=4, **kw))),
        ("MMCE", est(lambda **kw: MMCE(**kw))),
        ("UCME", est(lambda **kw: UCME(random_state=0, **kw))),
        ("UCME_locations", lambda P, y, w, lab: est(
            lambda **kw: UCME(test_predictions=P[:3], test_targets=y[:3], **kw))(P, y, w, lab)),
    ]


def _inputs():
    """(id, P, y, w, labels) -- arrays, including binary and float32 forms."""
    P32 = _softmax32(N, C, 7)
    return [
        ("multiclass", P3.copy(), Y3.copy(), W.copy(), np.array([0, 1, 2])),
        ("multiclass_fortran", np.asfortranarray(P3), Y3.copy(), W.copy(), None),
        ("multiclass_float32", P32, Y3.copy(), W.astype(np.float32), None),
        ("binary_1d", PB.copy(), YB.copy(), W.copy(), None),
        ("binary_column", PB[:, None].copy(), YB.copy(), W.copy(), np.array([0, 1])),
        ("binary_two_columns", np.column_stack([1 - PB, PB]), YB.copy(), W.copy(), None),
        ("string_labels", P3.copy(), NAMES3[Y3], W.copy(), NAMES3.copy()),
    ]


CALLS = _calls()
INPUTS = _inputs()


@pytest.mark.parametrize("call_id, fn", CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize("inp", INPUTS, ids=[i[0] for i in INPUTS])
def test_inputs_are_never_modified(call_id, fn, inp):
    _, P, y, w, lab = inp
    copies = [None if a is None else a.copy() for a in (P, y, w, lab)]
    flags = [None if a is None else a.flags.writeable for a in (P, y, w, lab)]
    fn(P, y, w, lab)
    for a, c, f in zip((P, y, w, lab), copies, flags):
        if a is None:
            continue
        np.testing.assert_array_equal(a, c)
        assert a.dtype == c.dtype
        assert a.flags.writeable == f


@pytest.mark.parametrize("call_id, fn", CALLS, ids=[c[0] for c in CALLS])
@pytest.mark.parametrize("inp", INPUTS, ids=[i[0] for i in INPUTS])
def test_read_only_inputs(call_id, fn, inp):
    _, P, y, w, lab = inp
    arrays = [None if a is None else a.copy() for a in (P, y, w, lab)]
    for a in arrays:
        if a is not None:
            a.setflags(write=False)
    fn(*arrays)  # nothing tries to write into the caller's arrays


@pytest.mark.parametrize("call_id, fn", CALLS, ids=[c[0] for c in CALLS])
def test_pandas_inputs_are_never_modified(call_id, fn):
    P = pd.DataFrame(P3.copy(), columns=list("abc"))
    y = pd.Series(Y3.copy())
    w = pd.Series(W.copy())
    P0, y0, w0 = P.copy(), y.copy(), w.copy()
    fn(P, y, w, None)
    pd.testing.assert_frame_equal(P, P0)
    pd.testing.assert_series_equal(y, y0)
    pd.testing.assert_series_equal(w, w0)


def test_uint64_labels_beyond_int64():
    big = np.array([2**63, 2**63 + 1], dtype=np.uint64)
    y = big[YB]
    ref = skce(YB, PB)
    assert skce(y, PB) == pytest.approx(ref, rel=1e-12)
    assert skce(y, PB, labels=big) == pytest.approx(ref, rel=1e-12)
    with pytest.raises(ValueError, match=r"y_true contains labels not in"):
        skce(y, PB, labels=np.array([2**63, 5], dtype=np.uint64))


def test_validated_arrays_are_read_only():
    """Whatever check_labels_and_probabilities returns can't be written into by downstream code."""
    for P in (P3, np.asfortranarray(P3), P3.astype(np.float32), pd.DataFrame(P3)):
        data = check_labels_and_probabilities(Y3, P, sample_weight=W)
        assert not data.probs.flags.writeable
        assert not data.sample_weight.flags.writeable
        with pytest.raises(ValueError):
            data.probs[0, 0] = 0.5
    P = P3.copy()
    data = check_labels_and_probabilities(Y3, P)
    assert P.flags.writeable  # the caller's array keeps its flags
    R = data.residuals()  # a new, writable array
    R[0, 0] = 1.0
    np.testing.assert_array_equal(P, P3)


# --------------------------------------------------------------------------------------------
# The helpers themselves


def test_check_labels_and_probabilities_mapping():
    data = check_labels_and_probabilities(np.array(["b", "a", "c", "a"]), np.eye(3)[[1, 0, 2, 0]])
    np.testing.assert_array_equal(data.classes, ["a", "b", "c"])
    np.testing.assert_array_equal(data.y, [1, 0, 2, 0])
    data = check_labels_and_probabilities([1, 0], [0.8, 0.3], pos_label=0)
    np.testing.assert_allclose(data.probs, [[0.8, 0.2], [0.3, 0.7]])
    data = check_labels_and_probabilities([1, 0], [0.8, 0.3])
    np.testing.assert_allclose(data.probs, [[0.2, 0.8], [0.7, 0.3]])
    for label_name in ("y", "test_targets"):
        with pytest.raises(ValueError, match=rf"^{label_name} contains labels not in"):
            check_labels_and_probabilities([0, 5], np.eye(2), labels=[0, 1], label_name=label_name)


@pytest.mark.parametrize("value, kw, exc", [
    (True, {}, TypeError), (1.0, {}, TypeError), ("1", {}, TypeError),
    (0, {"min_val": 1}, ValueError), (5, {"max_val": 4}, ValueError),
    (0.0, {"kind": "real", "min_val": 0.0, "include_min": False}, ValueError),
    (np.nan, {"kind": "real"}, ValueError), (np.inf, {"kind": "real"}, ValueError),
    (True, {"kind": "real"}, TypeError), (None, {}, TypeError),
])
def test_check_scalar_param_rejects(value, kw, exc):
    with pytest.raises(exc, match=r"^my_param must be"):
        check_scalar_param(value, "my_param", **kw)


def test_check_scalar_param_accepts():
    assert check_scalar_param(3, "p", min_val=1) == 3
    assert check_scalar_param(np.int32(3), "p", min_val=1) == 3
    assert check_scalar_param(0.5, "p", kind="real", min_val=0.0, include_min=False) == 0.5
    assert check_scalar_param(2, "p", kind="real") == 2
    assert check_scalar_param(None, "p", allow_none=True) is None


def test_check_option_and_sample_weight_helpers():
    assert check_option("a", "opt", ("a", "b")) == "a"
    with pytest.raises(ValueError, match=r"^opt must be one of 'a', 'b'; got 'c'"):
        check_option("c", "opt", ("a", "b"))
    assert check_sample_weight(None, 3) is None
    with pytest.raises(ValueError, match=r"^weights has 2 entries"):
        check_sample_weight([1, 2], 3, name="weights")


def test_public_names_exist():
    for name in FUNCS:
        assert callable(getattr(skcalib, name))


# --------------------------------------------------------------------------------------------
# Issue 11: messages that show the offending value, layering, n_bins


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("bad, shown", [
    (1 + 2.2e-16, "1.0000000000000002"),
    (-1e-17, "-1e-17"),
    (1.5, "1.5"),
])
def test_out_of_range_message_shows_the_value_unrounded(name, bad, shown):
    """``1 + 2.2e-16`` used to print as ``1``, which reads as valid."""
    p = np.array([0.068, 0.5, 0.3, 0.9])
    p[2] = bad
    with pytest.raises(ValueError) as info:
        call(name, [0, 1, 0, 1], p)
    msg = str(info.value)
    assert msg.startswith(f"{PROB_NAME[name]} must contain probabilities in [0, 1]; found {shown} "
                          "(row 2)"), msg
    P = np.column_stack([1 - p, p])
    P[2] = [0.0, bad] if bad > 1 else [1.0, bad]
    with pytest.raises(ValueError, match=rf"found {re.escape(shown)} \(row 2, column 1\)"):
        call(name, [0, 1, 0, 1], P)


def test_probabilities_message_for_estimator_input():
    from skcalib._validation import check_probabilities

    with pytest.raises(ValueError, match=r"^X must contain .* found 1\.0000000000000002 \(row 1"):
        check_probabilities([0.5, 1 + 2.2e-16], 2)


def test_validation_module_never_imports_distributions():
    """Imports flow one way: ``_validation`` is the bottom layer. It imports only its own
    scalar-parameter checks (``_params``, which imports nothing from skcalib); loaded with them
    alone (in a package of their own, so that no other skcalib module can be reached), it still
    recognises a Categorical and rejects a Normal, by the family marker of their classes."""
    import ast
    import importlib.util
    import pathlib
    import sys
    import types

    from skcalib.distributions import Categorical, Normal

    folder = pathlib.Path(skcalib.__file__).parent
    for name, allowed in (("_validation", {"_params"}), ("_params", set())):
        tree = ast.parse((folder / f"{name}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                relative_ok = node.level == 1 and node.module in allowed
                assert relative_ok or (node.level == 0 and not (node.module or "").startswith(
                    "skcalib")), node.module
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("skcalib") for a in node.names)
    package = types.ModuleType("standalone_floor")
    package.__path__ = []  # nothing else is importable from it
    loaded = {"standalone_floor": package}
    try:
        sys.modules.update(loaded)
        for name in ("_params", "_validation"):
            spec = importlib.util.spec_from_file_location(f"standalone_floor.{name}",
                                                          folder / f"{name}.py")
            mod = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = loaded[spec.name] = mod
            spec.loader.exec_module(mod)
    finally:
        for name in loaded:
            sys.modules.pop(name, None)
    assert mod.check_option is loaded["standalone_floor._params"].check_option
    cat = Categorical([[0.1, 0.9], [0.8, 0.2]], classes=["yes", "no"])
    data = mod.check_labels_and_probabilities(["no", "yes"], cat)
    assert data.classes.tolist() == ["no", "yes"]
    assert_equal = np.testing.assert_array_equal
    assert_equal(data.probs, [[0.9, 0.1], [0.2, 0.8]])
    assert_equal(data.y, [0, 1])
    with pytest.raises(TypeError, match=r"^y_proba is a Normal distribution"):
        mod.check_labels_and_probabilities([0.1, 0.2], Normal([0.0, 0.0], [1.0, 1.0]))


def test_family_marker_must_be_on_the_class():
    """An array-like with an instance attribute ``_family`` is not a distribution."""

    class Arr(np.ndarray):
        pass

    a = np.array([0.2, 0.7]).view(Arr)
    a._family = "normal"
    data = check_labels_and_probabilities([0, 1], a)
    np.testing.assert_array_equal(data.probs[:, 1], [0.2, 0.7])


@pytest.mark.parametrize("bad, exc", [
    (2**63, ValueError), (10**20, ValueError), (1e20, ValueError), (np.inf, ValueError),
    (np.nan, ValueError), (2**53 + 1, ValueError), (0, ValueError), (-3, ValueError),
    (2.0, TypeError), (True, TypeError), ("10", TypeError), (None, TypeError), ({}, TypeError),
    (1 + 0j, TypeError),
])
def test_check_n_bins(bad, exc):
    from skcalib._validation import check_n_bins

    with pytest.raises(exc, match=r"^n_bins must be"):
        check_n_bins(bad)
    assert check_n_bins(np.int16(7)) == 7 and type(check_n_bins(np.int16(7))) is int
    assert check_n_bins(2**53) == 2**53


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("P", [
    np.array(["0.2", "0.7"]), ["0.2", "0.7"], np.array([b"0.2", b"0.7"]),
    np.array([0.2, "0.7"], dtype=object), [[0.8, 0.2], [0.3, "0.7"]],
    pd.DataFrame({"a": ["0.8", "0.3"], "b": [0.2, 0.7]}), pd.Series(["0.2", "0.7"], dtype="string"),
], ids=["str_array", "str_list", "bytes", "object_array", "nested_list", "dataframe", "series"])
def test_numeric_strings_are_not_probabilities(name, P):
    """numpy would parse "0.7" as 0.7; a string is never taken for a probability."""
    with pytest.raises(ValueError, match=rf"^{PROB_NAME[name]} must contain numbers"):
        call(name, [0, 1], P)


def test_numeric_strings_are_not_weights():
    with pytest.raises(ValueError, match=r"^sample_weight must contain numbers; got strings"):
        calibration_error([0, 1], [0.2, 0.7], sample_weight=["1", "2"])
    with pytest.raises(ValueError, match=r"^sample_weight must contain numbers; got strings"):
        calibration_error([0, 1], [0.2, 0.7], sample_weight=np.array([1.0, "2"], dtype=object))


@pytest.mark.parametrize("name", FUNCS)
@pytest.mark.parametrize("bad", [[1], np.array([1]), (1,), {1: 0}, {1}])
def test_pos_label_must_be_one_label(name, bad):
    """``pos_label=[1]`` used to match the label 1 by broadcasting."""
    with pytest.raises(TypeError, match=r"^pos_label must be a single label"):
        call(name, YB, PB, pos_label=bad)


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "0", [0]])
def test_check_rng_names_random_state(bad):
    from skcalib._validation import check_rng
    from skcalib.distributions import Normal

    with pytest.raises(ValueError, match=r"^random_state must be"):
        check_rng(bad)
    with pytest.raises(ValueError, match=r"^random_state must be"):
        Normal([0.0], [1.0]).sample(random_state=bad)


def test_check_option_suggests_the_closest_option():
    from skcalib._validation import check_option, did_you_mean

    opts = ("binary", "top-label", "classwise", "canonical")
    with pytest.raises(ValueError, match=r"mode must be one of .*Did you mean 'top-label'\?"):
        check_option("Top_Label", "mode", opts)
    assert did_you_mean("canonicl", opts) == " Did you mean 'canonical'?"
    assert did_you_mean("xyz", opts) == ""
    assert did_you_mean(3, opts) == ""
