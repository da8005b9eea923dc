"""Checking and normalising inputs, shared by every metric, estimator and scorer.

Everything that enters skcalib passes through here, so that every public name raises the same
errors with the same wording and no public name writes its own checks.

Conventions
-----------
* Labels are arbitrary hashable values. They are mapped to column indices through ``classes``
  (sorted unique labels, as ``sklearn.metrics.log_loss`` and ``classes_`` do). Column ``j`` of a
  probability matrix belongs to ``classes[j]``.
* Binary probabilities may be one column -- P(``pos_label``) -- or two columns.
* Rows of a probability matrix must sum to one within ``sqrt(eps)`` of the *input* dtype
  (1.5e-8 for float64, 3.5e-4 for float32). Float64 rows are not renormalised; the float64 copy
  of a lower-precision input (float32, float16) is divided by its row sums once checked
  (:func:`renormalise_low_precision`), so that every later check of the copy at the float64
  tolerance (a scorer's metric, the report's sections) passes.
* Inputs are never modified: results are computed on float64 copies where a conversion is needed,
  and nothing is ever written into an array that came from the caller.
"""

import os
import sys

import numpy as np
from sklearn.utils import check_array, column_or_1d

# The scalar-parameter checks (options, bounded numbers, size ceilings, random states) live in
# skcalib._params; the validation gate re-exports them, so that every check is imported from here.
from ._params import (  # noqa: F401 - re-exported
    ALTERNATIVES, MAX_BINS, MAX_MC_SAMPLES, MAX_N_JOBS, MAX_RESAMPLES, MAX_STORED_BINS,
    MAX_TEST_LOCATIONS, MAX_WORK_BYTES, check_bool, check_confidence_level, check_n_bins,
    check_n_jobs, check_n_resamples, check_option, check_random_state_param, check_rng,
    check_scalar_param, check_work_memory, did_you_mean,
)

__all__ = [
    "check_bool",
    "check_n_jobs",
    "check_random_state_param",
    "check_labels_and_probabilities",
    "check_sample_weight",
    "check_scalar_param",
    "check_option",
    "did_you_mean",
    "check_n_bins",
    "check_n_resamples",
    "check_work_memory",
    "ClassificationData",
    "top_label",
]


def _to_1d(y, name):
    """Column-or-1d with a message that names the argument."""
    if isinstance(y, (str, bytes, set, frozenset)):
        raise TypeError(
            f"{name} must be a one-dimensional array-like; got a {type(y).__name__}."
        )
    check_not_model(y, name, "a one-dimensional array-like")
    try:
        arr = column_or_1d(y, warn=False)
    except ValueError:
        # A ragged list first: np.iscomplexobj itself raises numpy's "inhomogeneous shape" on it.
        ragged = isinstance(y, (list, tuple)) and not _is_rectangular(y)
        if not ragged and np.iscomplexobj(y):
            raise ValueError(f"Complex data not supported: {name} must be real.") from None
        shape = None if ragged else np.shape(y)
        what = f"an array of shape {shape}" if shape is not None else "a ragged sequence"
        raise ValueError(
            f"{name} must be one-dimensional (shape (n_samples,)); got {what}."
        ) from None
    if isinstance(y, (list, tuple)) and arr.dtype.kind in "US":
        # numpy silently turns [0, 1, "2"] into strings; refuse instead of guessing.
        values = np.asarray(y, dtype=object).ravel()
        if not all(isinstance(v, (str, bytes)) for v in values):
            raise ValueError(
                f"{name} mixes strings with other types (e.g. numbers); use one type of label."
            )
    return arr


def _is_rectangular(seq):
    try:
        np.shape(seq)
    except ValueError:
        return False
    return True


def _is_missing(v):
    """None, NaN (float or numpy float), pandas.NA and pandas.NaT."""
    if v is None:
        return True
    if isinstance(v, (float, np.floating)):
        return v != v
    return type(v).__name__ in ("NAType", "NaTType")


def _check_no_missing(arr, name):
    """``ValueError`` naming ``name`` if a label array contains None, NaN, pandas.NA or NaT."""
    if arr.dtype.kind in "fc":
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or infinity.")
    elif arr.dtype.kind == "O":
        # One pass over the types; the per-element test only runs if a suspect type occurs.
        types = set(map(type, arr))
        if any(t is type(None) or issubclass(t, (float, np.floating))
               or t.__name__ in ("NAType", "NaTType") for t in types):
            if any(_is_missing(v) for v in arr):
                raise ValueError(f"{name} contains missing values (None, NaN or pandas.NA).")
    elif arr.dtype.kind in "mM":
        if np.any(np.isnat(arr)):
            raise ValueError(f"{name} contains missing values (NaT).")


def _check_finite_range(P, name, lo=0.0, hi=1.0):
    """One min and one max pass catch NaN, +-inf and values outside [lo, hi].

    The message shows the offending value in full (``repr``): ``1 + 2.2e-16`` prints as
    ``1.0000000000000002``, not as a rounded ``1`` that reads as valid.
    """
    mn = P.min()
    mx = P.max()
    if mn >= lo and mx <= hi:
        return
    if np.isnan(P).any():
        raise ValueError(f"{name} contains NaN.")
    if np.isinf(P).any():
        raise ValueError(f"{name} contains infinity (inf).")
    bad = float(mx) if mx > hi else float(mn)
    where = np.unravel_index(int(np.argmax(P) if mx > hi else np.argmin(P)), P.shape)
    at = f"row {where[0]}" + (f", column {where[1]}" if P.ndim == 2 else "")
    raise ValueError(
        f"{name} must contain probabilities in [{lo:g}, {hi:g}]; found {bad!r} ({at}); "
        f"values range over [{float(mn)!r}, {float(mx)!r}]."
    )


def _numpy_dtype(dtype):
    """numpy dtype of a numpy or pandas (extension) dtype; None if it has none."""
    dtype = getattr(dtype, "numpy_dtype", dtype)  # pandas nullable Float32/Float64/Int64 ...
    try:
        return np.dtype(dtype)
    except TypeError:
        return None


def _input_dtype(y_proba):
    """The dtype the caller's probabilities come in (decides the row-sum tolerance).

    numpy arrays and pandas Series: their dtype; DataFrames: the common dtype of their columns;
    other array-likes (lists): the dtype numpy gives them. float64 when undecidable.
    """
    if hasattr(y_proba, "columns") and hasattr(y_proba, "dtypes"):
        dts = [_numpy_dtype(d) for d in y_proba.dtypes]
        if not dts or any(d is None for d in dts):
            return np.dtype(np.float64)
        try:
            return np.result_type(*dts)
        except TypeError:
            return np.dtype(np.float64)
    if hasattr(y_proba, "dtype"):
        d = _numpy_dtype(y_proba.dtype)
        return np.dtype(np.float64) if d is None else d
    try:
        return np.asarray(y_proba).dtype
    except (TypeError, ValueError):  # ragged sequences: check_array reports them
        return np.dtype(np.float64)


def _read_only(a):
    """A read-only view: nothing downstream can write into an array that came from the caller."""
    v = a.view()
    v.flags.writeable = False
    return v


def row_sum_tolerance(dtype):
    """Tolerance on ``|row sum - 1|``: ``sqrt(eps)`` of the input dtype (float64 if not floating)."""
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.floating):
        dtype = np.dtype(np.float64)
    return float(np.sqrt(np.finfo(dtype).eps))


def renormalise_low_precision(P, in_dtype):
    """``P`` (float64, rows already checked against the tolerance of ``in_dtype``) with its rows
    divided by their sums when the input had less precision than float64, else ``P`` itself.

    A float32 model's rows sum to 1 only within 3.5e-4; the float64 copy that skcalib computes
    on is renormalised once here, so that every later check of the same rows (a scorer's metric,
    the report's sections, a test's statistic) sees float64-exact rows instead of refusing them at
    the float64 tolerance. Never writes into ``P``.
    """
    if row_sum_tolerance(in_dtype) <= row_sum_tolerance(np.float64):
        return P
    return P / P.sum(axis=-1, keepdims=True)


def check_sample_weight(sample_weight, n_samples, name="sample_weight", *, rescale=False):
    """Return float64 non-negative finite weights of length ``n_samples`` (or ``None``).

    ``rescale=True`` divides by the largest weight, for users whose result only depends on weight
    ratios (every metric): huge but finite weights (1e308) then give the unweighted answer
    instead of overflowing to NaN in products or sums.
    """
    if sample_weight is None:
        return None
    if not isinstance(sample_weight, (str, bytes)):  # a lone string: _to_1d's message
        check_numeric(sample_weight, name)
    w = _to_1d(sample_weight, name)
    try:
        w = np.asarray(w, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric.") from None
    if w.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {w.shape[0]} entries but there are {n_samples} samples."
        )
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{name} contains NaN or infinity.")
    if np.any(w < 0):
        raise ValueError(f"{name} must be non-negative.")
    if n_samples and not np.any(w > 0):
        raise ValueError(f"{name} must have a positive sum (all weights are zero).")
    if rescale and n_samples:
        w = w / w.max()
    return _read_only(w)


#: Largest total of frequency weights: beyond 2**53 a count of observations is no longer exact in
#: float64, and the squared sums of the tests' statistics overflow soon after.
MAX_FREQUENCY_TOTAL = 2.0**53


def check_frequency_weights(w, name="sample_weight", *, min_total=1.0):
    """Refuse *frequency* weights (counts of observations, as the tests of ``stats`` read them)
    whose total is below ``min_total`` observations or above ``2**53``, with a ``ValueError``
    naming ``name``. ``w`` are weights already through :func:`check_sample_weight` (or None).

    A test's p-value depends on the scale of frequency weights: weights of 1e-300 are 1e-298
    observations in all (no evidence, p = 1), and weights of 1e300 overflow the statistic.
    """
    if w is None:
        return w
    total = float(np.sum(w))
    if not min_total <= total <= MAX_FREQUENCY_TOTAL:
        raise ValueError(
            f"{name} are frequency weights (a weight k counts as k observations) and must sum "
            f"to between {min_total:g} and 2**53 observations; they sum to {total:.3g}. Rescale "
            f"them, e.g. to sum to the number of samples."
        )
    return w


def _encode(y, classes, name="y_true"):
    """Indices of ``y`` in sorted ``classes``; ``ValueError`` naming ``name`` on unknown labels."""
    if _int64_safe(y.dtype) and _int64_safe(classes.dtype) and classes.size:
        # Fast path for integer labels: an O(n) lookup table instead of a sort.
        lo, hi = int(classes[0]), int(classes[-1])
        if hi - lo < 4 * max(y.size, 1024):
            yi = y.astype(np.int64, copy=False)
            ymin, ymax = int(yi.min()), int(yi.max())
            table = np.full(hi - lo + 1, -1, dtype=np.intp)
            table[classes.astype(np.int64) - lo] = np.arange(classes.size)
            if ymin >= lo and ymax <= hi:
                idx = table[yi - lo]
                if idx.min() >= 0:
                    return idx
            unknown = np.setdiff1d(np.unique(y), classes)
            raise ValueError(
                f"{name} contains labels not in labels/classes {classes.tolist()}: "
                f"{unknown[:10].tolist()}."
            )
    if (classes.dtype.kind in "US") != (y.dtype.kind in "US") and "O" not in (
        classes.dtype.kind, y.dtype.kind
    ):
        # str against numbers: numpy cannot compare them; no label can match.
        raise ValueError(
            f"{name} contains labels not in labels/classes {classes.tolist()[:10]}: "
            f"{np.unique(y)[:10].tolist()} (labels and {name} have incompatible types "
            f"{classes.dtype} and {y.dtype})."
        )
    try:
        idx = np.searchsorted(classes, y)
    except TypeError:
        raise ValueError(
            f"{name} contains labels that cannot be compared with labels/classes "
            f"{classes.tolist()[:10]}."
        ) from None
    idx_c = np.minimum(idx, classes.size - 1)
    bad = classes[idx_c] != y
    if np.any(bad):
        unknown = np.unique(y[bad])
        raise ValueError(
            f"{name} contains labels not in labels/classes {classes.tolist()}: "
            f"{unknown[:10].tolist()}."
        )
    return idx_c.astype(np.intp, copy=False)


def _int64_safe(dtype):
    """Integer/bool dtypes whose values all fit int64 (not uint64): the lookup-table fast paths."""
    return dtype.kind in "iub" and np.can_cast(dtype, np.int64)


def _unique_labels(y, name="y_true"):
    if _int64_safe(y.dtype) and y.size:
        yi = y.astype(np.int64, copy=False)
        lo, hi = int(yi.min()), int(yi.max())
        if hi - lo < 4 * max(y.size, 1024):
            present = np.flatnonzero(np.bincount(yi - lo, minlength=hi - lo + 1))
            return (present + lo).astype(y.dtype)
    try:
        return np.unique(y)
    except TypeError:
        raise ValueError(f"{name} contains labels of mixed types that cannot be sorted.") from None


_BINARY_DEFAULTS = ({0, 1}, {-1, 1}, {False, True})


class ClassificationData:
    """Validated classification input.

    Attributes
    ----------
    y : ndarray of shape (n_samples,), dtype intp
        Column index of each sample's label in ``probs``.
    probs : ndarray of shape (n_samples, n_classes), float64
        Probabilities; column ``j`` belongs to ``classes[j]``. Read-only view where possible.
    classes : ndarray of shape (n_classes,)
        The labels, sorted.
    sample_weight : ndarray or None
    """

    __slots__ = ("y", "probs", "classes", "sample_weight")

    def __init__(self, y, probs, classes, sample_weight):
        self.y = y
        self.probs = probs
        self.classes = classes
        self.sample_weight = sample_weight

    @property
    def n_samples(self):
        return self.probs.shape[0]

    @property
    def n_classes(self):
        return self.probs.shape[1]

    def residuals(self):
        """``e_y - p``, an (n, C) float64 array (a new array)."""
        R = -self.probs
        R[np.arange(self.n_samples), self.y] += 1.0
        return R


def top_label(P):
    """Top-label confidences and the label-invariant tie rule shared by every top-label notion.

    Returns ``(conf, shares)``: ``conf[i] = max_k P[i, k]`` and ``shares[i, k] = 1/|A_i|`` for
    ``k`` in the set ``A_i`` of columns attaining the maximum (0 elsewhere). A top-label
    prediction on a tied row is read as a uniform draw from the tied classes, so its correctness is
    ``shares[i, y_i]`` (``1{y_i = argmax}`` without ties) and the probability another model ``G``
    gives it is ``(shares * G).sum(axis=1)``. Renaming or reordering the labels therefore never
    changes a result, which "take the first column" would.
    """
    P = np.asarray(P)
    conf = P.max(axis=1)
    ties = P == conf[:, None]
    shares = ties / ties.sum(axis=1, keepdims=True)
    return conf, shares


def _binary_classes_from_one_label(present, y, pos_label, prob_name, label_name):
    """The two classes of a binary problem whose ``y_true`` holds one label only.

    ``{0, 1}``, ``{-1, 1}`` and ``{False, True}`` are completed to the usual pairs; any other label
    needs ``pos_label`` (the other class) or ``labels=``.
    """
    for default in _BINARY_DEFAULTS:
        if present in default and (pos_label is None or pos_label in default):
            return np.array(sorted(default), dtype=y.dtype if y.dtype.kind != "O" else object)
    if pos_label is not None and pos_label != present:
        try:
            return np.array(sorted([present, pos_label]))
        except TypeError:
            raise ValueError(
                f"pos_label={pos_label!r} cannot be compared with the label {present!r} of "
                f"{label_name}."
            ) from None
    raise ValueError(
        f"{label_name} contains a single label {present!r}; pass labels= (or pos_label=) "
        f"to say which two classes {prob_name} refers to."
    )


def pos_index(classes, pos_label):
    """Column of ``pos_label`` in ``classes`` (the greater label, column 1, if None)."""
    if pos_label is None:
        return 1
    matches = np.flatnonzero(classes == pos_label)
    if matches.size != 1:
        raise ValueError(f"pos_label={pos_label!r} is not one of the classes {classes.tolist()}.")
    return int(matches[0])


class NonNumericError(TypeError, ValueError):
    """Strings where numbers belong (raised by :func:`check_numeric`).

    Both a ``ValueError``, as scikit-learn's ``check_array`` and skcalib's probability checks have
    always raised for strings, and a ``TypeError``, as skcalib's distributions and kernels have:
    an ``except`` clause written for either keeps catching it, while every entry point now gives
    the same message.
    """


_MODEL_METHODS = ("fit", "predict", "predict_proba", "predict_distribution")
_PREDICTIONS_HINT = ("pass its predictions instead: model.predict_proba(X) for a classifier, "
                     "skcalib.scorers.predict_distribution(model, X) for a probabilistic regressor")


def check_not_model(x, name, expected, *, hint=None):
    """``TypeError`` naming ``name`` if ``x`` is a model (an object with ``fit``, ``predict``,
    ``predict_proba`` or ``predict_distribution``) where data belong.

    Passing the fitted model instead of its predictions (``TemperatureScaling().fit(model, y)``)
    would otherwise end in numpy's ``float() argument must be ... not 'LogisticRegression'``.
    ``expected`` says what ``name`` must be. ``hint`` (advice appended to the message) defaults
    by the argument's name: predictions (``y_pred*``, ``y_proba*``) get "pass its predictions
    instead: ...", targets (``y``, ``y_true``) "it holds the true labels or targets", other
    arguments none. Returns ``x`` unchanged.
    """
    if (hasattr(x, "dtype") or hasattr(x, "columns") or isinstance(x, (list, tuple))
            or not any(callable(getattr(x, m, None)) for m in _MODEL_METHODS)):
        return x  # data (a DataFrame's column named "fit" is no method)
    if hint is None:
        if name in ("y", "y_true"):
            hint = "it holds the true labels or targets"
        elif name.startswith(("y_pred", "y_proba")):
            hint = _PREDICTIONS_HINT
    raise TypeError(f"{name} must be {expected}; got the {type(x).__name__} model itself"
                    + (f": {hint}." if hint else "."))


def not_real_kind(x):
    """``"booleans"`` or ``"dates or durations"`` if the array ``x`` holds those (which numpy
    would read as 0/1 or as nanoseconds since 1970, and which the checks of real targets and
    bounds refuse rather than convert), else None."""
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    if kind == "b":
        return "booleans"
    return "dates or durations" if kind in ("m", "M") else None


def check_numeric(x, name, *, what=None, expected=None):
    """Refuse strings in an array-like that must hold numbers: a :class:`NonNumericError` (a
    ``ValueError`` and a ``TypeError``) naming ``name``.

    numpy (``np.asarray(x, dtype=float)``) and scikit-learn's ``check_array(x, dtype=np.float64)``
    silently parse ``"0.2"`` as 0.2, in a list, a str-dtype or object array or a DataFrame's object
    columns; a column of strings is far more often a CSV read wrongly than a deliberate input.
    Every entry point that reads numbers from the caller (probabilities, ``[mean, std]`` arrays,
    audit features, scores, targets of regressors, weights) calls this first, so that all refuse
    them with the same message: ``"<name> must contain numbers (<what>); got strings such as
    '0.2'."``. Class labels are not numbers and never pass through here.

    A model passed where the numbers belong is a ``TypeError`` (:func:`check_not_model`) saying
    what ``name`` must be: ``expected``, by default "an array-like of numbers (<what>)".

    Returns ``x`` unchanged. The scan is free for arrays of a numeric dtype; object arrays are
    scanned until the first string.
    """
    if expected is None:
        expected = "an array-like of numbers" + ("" if what is None else f" ({what})")
    check_not_model(x, name, expected)
    text = _first_string(x)
    if text is not None:
        expected = "numbers" if what is None else f"numbers ({what})"
        shown = repr(text) if len(text) <= 40 else repr(text[:40]) + "..."
        raise NonNumericError(f"{name} must contain {expected}; got strings such as {shown}.")
    return x


__all__ += ["check_numeric", "check_not_model", "NonNumericError"]


def _first_string(y_proba):
    """A str/bytes element of an array-like, as a Python ``str``/``bytes`` (None if there is
    none). numpy would silently parse ``["0.2", "0.7"]`` or ``np.array([0.2, "0.7"],
    dtype=object)`` as numbers."""
    found = _find_string(y_proba)
    return found.item() if isinstance(found, np.generic) else found


def _find_string(y_proba):
    """:func:`_first_string` without the conversion of numpy scalars (recursive on ragged rows)."""
    if hasattr(y_proba, "columns") and hasattr(y_proba, "dtypes"):  # DataFrame
        if not any(getattr(d, "kind", "O") in "OUS" for d in y_proba.dtypes):
            return None
        values = y_proba.to_numpy(dtype=object)
    elif hasattr(y_proba, "dtype") and getattr(y_proba.dtype, "kind", "O") not in "OUS":
        return None
    else:
        try:
            values = np.asarray(y_proba)  # numbers only: a numeric dtype, nothing to scan
        except (TypeError, ValueError):
            try:
                values = np.asarray(y_proba, dtype=object)
            except (TypeError, ValueError):  # check_array reports it
                return None
        if values.dtype.kind in "biufc":
            return None
        if values.dtype.kind in "US" and not isinstance(y_proba, np.ndarray):
            # numpy wrote the numbers of [0.1, "0.2"] as strings too: find the caller's string
            try:
                values = np.asarray(y_proba, dtype=object)
            except (TypeError, ValueError):
                pass
    if values.dtype.kind in "US":
        return values.reshape(-1)[0] if values.size else None
    for v in values.reshape(-1):
        if isinstance(v, (str, bytes, np.str_, np.bytes_)):
            return v
        if isinstance(v, (list, tuple, np.ndarray)):  # ragged rows held as objects
            found = _find_string(v)
            if found is not None:
                return found
    return None


def _check_prob_array(y_proba, prob_name):
    """float64 array (1-D or 2-D) of the probabilities; errors name ``prob_name``."""
    if y_proba is None:
        raise ValueError(f"{prob_name} must be given; got None.")
    if isinstance(y_proba, (str, bytes, set, frozenset)):
        raise TypeError(f"{prob_name} must be an array-like of probabilities; got a "
                        f"{type(y_proba).__name__}.")
    check_numeric(y_proba, prob_name, what="probabilities")
    P = _named_check_array(y_proba, prob_name, ensure_2d=False, allow_nd=True, dtype=np.float64,
                           ensure_all_finite=False, ensure_min_samples=0)
    if P.ndim not in (1, 2):
        raise ValueError(f"{prob_name} must be 1-D or 2-D; got an array of shape {P.shape}.")
    return P


def _check_row_sums(P, in_dtype, prob_name):
    """Rows of a 2-D probability matrix sum to one within the tolerance of the input dtype."""
    tol = row_sum_tolerance(in_dtype)
    dev = np.abs(P.sum(axis=1) - 1.0)
    worst = dev.max()
    if not worst <= tol:
        i = int(np.argmax(dev))
        shown = in_dtype if np.issubdtype(in_dtype, np.floating) else np.dtype(np.float64)
        raise ValueError(
            f"rows of {prob_name} must sum to 1 (tolerance {tol:.2g} for {shown} input); "
            f"row {i} sums to {P[i].sum():.17g}."
        )


def check_probability_array(y_proba, name="y_proba"):
    """Probabilities without labels, in the shape they come in: the checks of every metric.

    1-D input (or a single column) holds binary probabilities ``P(class 1)`` in ``[0, 1]``; the
    rows of a 2-D input with several columns must also sum to one (within the tolerance of the
    input dtype, see :func:`row_sum_tolerance`). ``None``, strings, NaN, infinity, empty input and
    other dimensions raise a ``ValueError``/``TypeError`` naming ``name``. Returns a read-only
    float64 array of the input's shape.
    """
    in_dtype = _input_dtype(y_proba)
    P = _check_prob_array(y_proba, name)
    if P.shape[0] == 0:
        raise ValueError(f"{name} is empty; at least 1 sample needed.")
    _check_finite_range(P, name)
    if P.ndim == 2 and P.shape[1] > 1:
        _check_row_sums(P, in_dtype, name)
        P = renormalise_low_precision(P, in_dtype)
    return _read_only(P)


def check_probabilities(y_proba, n_classes, *, pos=1, name="X"):
    """Probabilities without labels, against a known number of classes (fitted estimators).

    Returns a read-only float64 ``(n_samples, n_classes)`` array. A single column (or 1-D input) is
    the probability of column ``pos`` of a binary problem.
    """
    P = check_probability_array(y_proba, name)
    if P.ndim == 2 and P.shape[1] == 1:
        P = P[:, 0]
    if P.ndim == 1:
        if n_classes != 2:
            raise ValueError(f"a one-column {name} is a binary probability, but the estimator was "
                             f"fitted on {n_classes} classes.")
        P2 = np.empty((P.shape[0], 2))
        P2[:, pos] = P
        P2[:, 1 - pos] = 1.0 - P
        return _read_only(P2)
    if P.shape[1] != n_classes:
        raise ValueError(f"{name} has {P.shape[1]} columns but the estimator was fitted on "
                         f"{n_classes} classes.")
    return P


__all__ += ["check_probabilities", "check_probability_array"]


def _check_scalar_label(value, name):
    """``TypeError`` naming ``name`` unless ``value`` is one hashable scalar label (``[1]`` would
    otherwise match the label 1 by broadcasting)."""
    try:
        hash(value)
    except TypeError:
        raise TypeError(f"{name} must be a single label; got {value!r} of type "
                        f"{type(value).__name__}.") from None
    if np.ndim(value) != 0:
        raise TypeError(f"{name} must be a single label; got {value!r}.")


def _distribution_family(obj):
    """Family name of a skcalib distribution object (``"categorical"``, ``"normal"``, ...), or None.

    Duck typing on the class attribute ``_family`` that every distribution class of
    :mod:`skcalib.distributions` carries (the marker :mod:`skcalib._expectations` dispatches on):
    the bottom layer recognises distributions without importing the module that defines them.
    """
    family = getattr(type(obj), "_family", None)
    return family if isinstance(family, str) else None


def check_labels_and_probabilities(y_true, y_proba, *, labels=None, pos_label=None,
                                   sample_weight=None, min_samples=1,
                                   prob_name="y_proba", label_name="y_true"):
    """Validate ``(y_true, y_proba)`` and map the labels to columns (see
    :func:`_check_labels_and_probabilities`); a refused ``(n, 2)`` array with real-valued
    targets gets a hint at ``Normal(mean, std)`` (it looks like ``[mean, std]`` predictions)."""
    try:
        return _check_labels_and_probabilities(
            y_true, y_proba, labels=labels, pos_label=pos_label, sample_weight=sample_weight,
            min_samples=min_samples, prob_name=prob_name, label_name=label_name)
    except ValueError as exc:
        if not _looks_like_mean_std(y_true, y_proba):
            raise
        raise ValueError(
            f"{exc} {prob_name} is read as class probabilities here, but {label_name} holds "
            f"real-valued targets: if the two columns of {prob_name} are predicted means and "
            "standard deviations, pass skcalib.distributions.Normal(mean, std) (e.g. "
            f"Normal({prob_name}[:, 0], {prob_name}[:, 1])).") from None


def _looks_like_mean_std(y_true, y_proba):
    """An ``(n, 2)`` numeric array and real (non-integer) numeric targets."""
    try:
        P = np.asarray(y_proba)
        y = np.asarray(y_true)
    except (TypeError, ValueError):
        return False
    if P.ndim != 2 or P.shape[1] != 2 or P.dtype.kind not in "iuf" or y.dtype.kind != "f":
        return False
    finite = y[np.isfinite(y)]
    return bool(finite.size and np.any(finite != np.round(finite)))


def _check_labels_and_probabilities(y_true, y_proba, *, labels=None, pos_label=None,
                                    sample_weight=None, min_samples=1,
                                    prob_name="y_proba", label_name="y_true"):
    """Validate ``(y_true, y_proba)`` and map the labels to columns.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Labels of any hashable, sortable type.
    y_proba : array-like of shape (n_samples,), (n_samples, 1) or (n_samples, n_classes)
        Predicted probabilities. A single column is P(``pos_label``) of a binary problem.
    labels : array-like, default=None
        All class labels. Default: the labels present in ``y_true`` -- completed to a binary pair
        (see below) when ``y_true`` holds a single label and ``y_proba`` is binary.
    pos_label : label, default=None
        Positive class of a single-column binary ``y_proba``; default: the greater of the two labels.
        With two columns it only has to be one of the classes.
    sample_weight : array-like of shape (n_samples,), default=None
    min_samples : int, default=1
        Smallest accepted number of samples (2 for unbiased estimators).
    prob_name : str
        Name of the probability argument in error messages.
    label_name : str
        Name of the label argument in error messages (``"y"`` for estimators).

    Returns
    -------
    ClassificationData
        ``probs`` and ``sample_weight`` are read-only (they may be views of the caller's arrays).

    Notes
    -----
    A binary problem whose ``y_true`` holds one label only (a fold with one class) gets the classes
    ``{0, 1}``, ``{-1, 1}`` or ``{False, True}`` that contain the label (and ``pos_label``), or
    ``{label, pos_label}``; the same for one- and two-column ``y_proba``.

    A :class:`skcalib.distributions.Categorical` is accepted for ``y_proba``: its probabilities are
    used and its ``classes`` are the default ``labels``. Other distribution objects raise a
    ``TypeError`` (they are predictions of regressors). Distributions are recognised by the
    family marker their class carries (``_family``), so this module never imports
    :mod:`skcalib.distributions` (imports flow one way, see the architecture page).
    """
    if pos_label is not None:
        _check_scalar_label(pos_label, "pos_label")
    family = _distribution_family(y_proba)
    if family == "categorical":
        # Columns follow the sorted labels downstream: reorder the categorical's columns.
        order = np.argsort(y_proba.classes, kind="stable")
        classes = y_proba.classes[order]
        if labels is not None and not np.array_equal(np.sort(np.asarray(labels)), classes):
            raise ValueError(
                f"labels {list(labels)} differ from the classes of the Categorical "
                f"{prob_name} ({list(y_proba.classes)})."
            )
        labels = classes
        y_proba = y_proba.probs[:, order]
    elif family is not None:
        raise TypeError(
            f"{prob_name} is a {type(y_proba).__name__} distribution; this needs predicted class "
            "probabilities. Predictive distributions are accepted by skcalib.skce and "
            "skcalib.ucme (the functions, the SKCE and UCME estimators and their scorers), not "
            "by binned errors or MMCE."
        )
    in_dtype = _input_dtype(y_proba)
    P = _check_prob_array(y_proba, prob_name)
    if y_true is None:
        raise ValueError(f"{label_name} must be given; got None.")
    y = _to_1d(y_true, label_name)
    n = P.shape[0]
    if y.shape[0] != n:
        raise ValueError(
            f"{label_name} and {prob_name} have inconsistent lengths: {y.shape[0]} and {n}."
        )
    if n == 0:
        raise ValueError(
            f"{label_name} and {prob_name} are empty; at least {min_samples} sample(s) needed."
        )
    if n < min_samples:
        raise ValueError(
            f"this estimator needs at least {min_samples} samples; got {n} in {label_name} and "
            f"{prob_name}."
        )
    _check_no_missing(y, label_name)
    if P.ndim == 2 and P.shape[1] == 1:
        P = P[:, 0]
    _check_finite_range(P, prob_name)

    if labels is not None:
        lab = _to_1d(labels, "labels")
        _check_no_missing(lab, "labels")
        try:
            classes = np.unique(lab)
        except TypeError:
            raise ValueError("labels contains values of mixed types that cannot be sorted.") from None
        if classes.size != lab.size:
            raise ValueError("labels contains duplicate values.")
        if classes.size < 2:
            raise ValueError(f"labels must contain at least 2 classes; got {classes.tolist()}.")
    else:
        classes = _unique_labels(y, label_name)
        if classes.size == 1 and (P.ndim == 1 or P.shape[1] == 2):
            classes = _binary_classes_from_one_label(classes[0], y, pos_label, prob_name,
                                                     label_name)

    if P.ndim == 1:
        if classes.size != 2:
            where = "labels has" if labels is not None else f"{label_name} has"
            raise ValueError(
                f"a one-column {prob_name} is a binary P(pos_label), but {where} "
                f"{classes.size} classes: {classes.tolist()[:10]}. Pass probabilities of shape "
                f"(n_samples, n_classes) for multiclass problems."
            )
        pos = pos_index(classes, pos_label)
        P2 = np.empty((n, 2), dtype=np.float64)
        P2[:, pos] = P
        P2[:, 1 - pos] = 1.0 - P
        P = P2
    else:
        C = P.shape[1]
        if pos_label is not None and C > 2:
            raise ValueError("pos_label is only meaningful for binary problems.")
        if classes.size != C:
            if labels is None:
                raise ValueError(
                    f"{label_name} has {classes.size} distinct labels but {prob_name} has {C} "
                    f"columns; pass labels= to list every class in column order."
                )
            raise ValueError(
                f"labels has {classes.size} classes but {prob_name} has {C} columns."
            )
        if pos_label is not None:
            pos_index(classes, pos_label)
        _check_row_sums(P, in_dtype, prob_name)
        P = renormalise_low_precision(P, in_dtype)
    yi = _encode(y, classes, label_name)
    w = check_sample_weight(sample_weight, n)
    return ClassificationData(yi, _read_only(P), classes, w)


def _named_check_array(X, name, **kwargs):
    """scikit-learn's ``check_array`` whose errors name ``name`` and keep their first line only
    (some of scikit-learn's messages append the whole array)."""
    try:
        return check_array(X, input_name=name, **kwargs)
    except (TypeError, ValueError) as exc:
        msg = str(exc).strip().split("\n")[0]
        if isinstance(exc, TypeError) and np.ndim(X) == 0:  # object(), a callable, ...
            msg = f"{name} must be an array-like of numbers; got {type(X).__name__} ({msg})"
        elif name not in msg:
            msg = f"{name}: {msg}"
        raise type(exc)(msg) from None


def check_2d_features(X, name, *, min_samples=1):
    """Finite float64 2-D array with a message naming ``name``; strings are refused
    (:func:`check_numeric`)."""
    check_numeric(X, name)
    A = _named_check_array(X, name, dtype=np.float64, ensure_min_samples=min_samples,
                           ensure_2d=False)
    if A.ndim == 1:
        A = A[:, None]
    if A.ndim != 2:
        raise ValueError(f"{name} must be 1-D or 2-D; got shape {A.shape}.")
    return A


__all__ += ["check_2d_features", "row_sum_tolerance"]


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def user_stacklevel():
    """``stacklevel`` for ``warnings.warn`` that points at the first caller outside skcalib."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def length_mismatch_message(y_shape, n_samples, name="y", X_shape=None, X_name="X"):
    """The message for targets ``name`` whose length differs from the samples of ``X_name``: both
    shapes when ``X_shape`` is known, and a hint when ``X`` looks transposed."""
    y_shape = tuple(int(d) for d in y_shape)
    if X_shape is None:
        return f"{name} has {y_shape[0]} entries but there are {n_samples} samples."
    X_shape = tuple(int(d) for d in X_shape)
    msg = (f"{name} has {y_shape[0]} entries but there are {n_samples} samples ({X_name} has "
           f"shape {X_shape}, {name} has shape {y_shape}); pass one target per row of {X_name}.")
    if len(X_shape) == 2 and X_shape[1] == y_shape[0] != X_shape[0]:
        msg += f" {X_name} has one column per sample: is it transposed ({X_name}.T)?"
    return msg


__all__ += ["length_mismatch_message"]


def check_class_labels(y, n_samples, *, classes=None, name="y", min_classes=2, X_shape=None,
                       X_name="X"):
    """Validate classification labels; return ``(classes, indices)``.

    ``classes`` (sorted unique labels) defaults to the labels present in ``y``; given, it must
    contain every label of ``y``. A ``ValueError`` names ``name`` for missing values, a length
    different from ``n_samples``, unknown labels, continuous targets or fewer than
    ``min_classes`` classes. ``X_shape`` (the shape of the samples ``X_name``, if known) is
    shown with ``y``'s in the length message.
    """
    if y is None:
        raise ValueError(f"this estimator requires y to be passed, but the target {name} is None.")
    arr = _to_1d(y, name)
    _check_no_missing(arr, name)
    if arr.shape[0] != n_samples:
        raise ValueError(length_mismatch_message(arr.shape, n_samples, name, X_shape, X_name))
    if arr.dtype.kind == "f" and arr.size and np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold class labels; got continuous values.")
    if classes is None:
        classes = _unique_labels(arr, name)
    else:
        classes = _to_1d(classes, "classes")
        _check_no_missing(classes, "classes")
        sorted_classes = _unique_labels(classes, "classes")
        if sorted_classes.size != classes.size:
            raise ValueError("classes must not contain duplicates.")
        classes = sorted_classes
    if classes.size < min_classes:
        raise ValueError(
            f"{name} must contain at least {min_classes} classes; got {classes.size} "
            f"class{'' if classes.size == 1 else 'es'} ({classes.tolist()[:10]})."
        )
    return classes, _encode(arr, classes, name)


def check_scores(X, name="X", *, n_columns=None):
    """Finite float64 scores (logits or probabilities), 1-D or 2-D, never the caller's array.

    ``n_columns`` (if given) is the expected number of columns of 2-D scores; a single column
    counts as 1-D. Strings are refused (:func:`check_numeric`).
    """
    check_numeric(X, name)
    A = _named_check_array(X, name, dtype=np.float64, ensure_2d=False, ensure_min_samples=1)
    if A.ndim == 2 and A.shape[1] == 1:
        A = A[:, 0]
    if A.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-D or 2-D; got shape {A.shape}.")
    if n_columns is not None:
        got = 1 if A.ndim == 1 else A.shape[1]
        if got != n_columns:
            raise ValueError(f"{name} has {got} column(s); expected {n_columns} (one per class, "
                             "or one for a binary problem).")
    return A


__all__ += ["check_class_labels", "check_scores"]
