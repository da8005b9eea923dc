"""Checking scalar parameters: options, numbers, sizes with their ceilings, random states.

The part of the validation gate (:mod:`skcalib._validation`, which re-exports every name here)
that checks one hyper-parameter at a time, never an array of data:

* :func:`check_option`, :func:`did_you_mean` -- one of a set of strings, with a suggestion for
  a mistyped one; :func:`check_bool`, :func:`check_scalar_param` -- booleans and bounded numbers;
* :func:`check_n_bins`, :func:`check_n_resamples`, :func:`check_work_memory`, :func:`check_n_jobs`
  -- sizes, refused beyond their ceilings (``MAX_BINS``, ``MAX_STORED_BINS``, ``MAX_RESAMPLES``,
  ``MAX_MC_SAMPLES``, ``MAX_TEST_LOCATIONS``, ``MAX_WORK_BYTES``, ``MAX_N_JOBS``) before any work;
* :func:`check_confidence_level` -- a level in (0, 1), and optionally a test's ``alternative``;
* :func:`check_random_state_param`, :func:`check_rng` -- a ``random_state`` checked without
  drawing from it, and the ``numpy.random.Generator`` made from it.

It imports nothing from skcalib.
"""

import difflib
import re
from numbers import Integral, Real

import numpy as np

__all__ = [
    "did_you_mean",
    "check_option",
    "check_scalar_param",
    "MAX_BINS",
    "MAX_STORED_BINS",
    "MAX_RESAMPLES",
    "MAX_MC_SAMPLES",
    "MAX_TEST_LOCATIONS",
    "MAX_WORK_BYTES",
    "check_n_resamples",
    "check_work_memory",
    "ALTERNATIVES",
    "check_confidence_level",
    "check_n_bins",
    "check_bool",
    "MAX_N_JOBS",
    "check_n_jobs",
    "check_random_state_param",
    "check_rng",
]


def did_you_mean(value, options):
    """``" Did you mean 'x'?"`` for the option closest to a mistyped string, or ``""``.

    Case and the separators ``-``/``_``/space are ignored when matching, so ``"Top_Label"`` and
    ``"toplabel"`` both suggest ``"top-label"``; a suggestion needs a similarity ratio of 0.6
    (``difflib``'s default).
    """
    if not isinstance(value, str):
        return ""

    def key(s):
        return re.sub(r"[\s_\-]+", "", str(s).lower())

    keyed = {key(o): o for o in options if isinstance(o, str)}
    match = difflib.get_close_matches(key(value), list(keyed), n=1)
    return f" Did you mean {keyed[match[0]]!r}?" if match else ""


def check_option(value, name, options):
    """Raise a ``ValueError`` naming ``name`` unless ``value`` is one of ``options``.

    A mistyped string gets the closest option as a suggestion (:func:`did_you_mean`).
    """
    if not isinstance(value, str) or value not in options:
        raise ValueError(
            f"{name} must be one of {', '.join(repr(o) for o in options)}; got {value!r}."
            + did_you_mean(value, options)
        )
    return value


def check_scalar_param(value, name, *, kind="int", min_val=None, max_val=None,
                       include_min=True, allow_none=False):
    """Validate a scalar hyper-parameter and return it.

    ``kind`` is ``"int"`` or ``"real"``. Booleans are rejected for both.
    """
    if value is None and allow_none:
        return value
    target = Integral if kind == "int" else Real
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, target):
        what = "an integer" if kind == "int" else "a real number"
        raise TypeError(f"{name} must be {what}; got {value!r} of type {type(value).__name__}.")
    if kind == "real" and not np.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value!r}.")
    if min_val is not None:
        bad = value < min_val if include_min else value <= min_val
        if bad:
            op = ">=" if include_min else ">"
            raise ValueError(f"{name} must be {op} {min_val}; got {value!r}.")
    if max_val is not None and value > max_val:
        raise ValueError(f"{name} must be <= {max_val}; got {value!r}.")
    return value


#: Largest ``n_bins`` (equal-width bins on ``[0, 1]`` narrower than this are finer than float64).
MAX_BINS = 2**53
#: Largest number of bins of a binning that stores something per bin (its edges, a fitted
#: estimate): 8 MB per stored float64 value (``calibration_error`` itself stores only the
#: occupied bins and takes up to ``MAX_BINS``).
MAX_STORED_BINS = 10**6

#: Largest ``n_resamples`` (simulated null draws, bootstrap replicates) any test accepts: a null
#: distribution of 80 MB and a Monte-Carlo p-value resolution of 1e-7, far beyond what any
#: level needs (at ``p = 0.05`` the Monte-Carlo error of 10**4 resamples is already 0.002).
MAX_RESAMPLES = 10**7
#: Largest ``n_mc_samples`` (draws per prediction of the Monte-Carlo fallback): a relative
#: Monte-Carlo error of about 1e-3; the draws' memory is bounded by ``MAX_WORK_BYTES`` as well.
MAX_MC_SAMPLES = 10**6
#: Largest number of UCME test locations (the CME test's covariance is ``J x J``).
MAX_TEST_LOCATIONS = 10**4
#: Largest buffer (bytes) that a resampling-size parameter (``n_resamples``, ``n_mc_samples``,
#: ``n_landmarks``, ``n_test_locations``) may make skcalib allocate: 4 GiB.
MAX_WORK_BYTES = 2**32


def check_n_resamples(value, name="n_resamples", *, min_val=1, max_val=MAX_RESAMPLES):
    """Validate a resampling size (``n_resamples`` by default; also ``n_mc_samples``, ...): an
    integer in ``[min_val, max_val]``, refused *before* any work.

    An absurd magnitude (``10**12``, ``1e12``, inf) is a ``ValueError`` naming ``name`` whatever
    its type, as in :func:`check_n_bins`; an ordinary non-integer (``2.5``, ``"3"``, ``True``)
    is a ``TypeError``.
    """
    if (isinstance(value, Real) and not isinstance(value, (bool, np.bool_, Integral))
            and not abs(float(value)) <= max_val):  # also catches NaN and inf
        raise ValueError(f"{name} must be an integer in [{min_val}, {max_val}]; got {value!r} "
                         "(the ceiling keeps time and memory bounded).")
    value = check_scalar_param(value, name, kind="int", min_val=min_val)
    if value > max_val:
        raise ValueError(f"{name} must be an integer in [{min_val}, {max_val}]; got {value!r} "
                         "(the ceiling keeps time and memory bounded).")
    return int(value)


def check_work_memory(n_items, name, value, what, *, itemsize=8, max_bytes=MAX_WORK_BYTES):
    """``ValueError`` naming ``name`` if ``n_items`` numbers of ``itemsize`` bytes (the buffer
    that ``name=value`` makes a call allocate, described by ``what``) exceed ``max_bytes``."""
    need = float(n_items) * itemsize
    if need > max_bytes:
        raise ValueError(f"{name}={value!r} would need {_format_bytes(need)} for {what} (more "
                         f"than the {_format_bytes(max_bytes)} skcalib allows one buffer); use "
                         f"a smaller {name}.")


def _format_bytes(n):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1024.0


#: The ``alternative`` of a test or a one-sided interval (SciPy's names).
ALTERNATIVES = ("two-sided", "greater", "less")


#: ``check_confidence_level`` called without an ``alternative`` (None is a wrong alternative).
_NO_ALTERNATIVE = object()


def check_confidence_level(confidence_level, alternative=_NO_ALTERNATIVE):
    """``confidence_level`` as a float in (0, 1), or a ``ValueError``/``TypeError`` naming it;
    when ``alternative`` is passed (an interval's or a test's), that it is one of
    :data:`ALTERNATIVES` too (checked after the level)."""
    check_scalar_param(confidence_level, "confidence_level", kind="real", min_val=0.0,
                       include_min=False)
    if not confidence_level < 1.0:
        raise ValueError(f"confidence_level must be < 1; got {confidence_level!r}.")
    if alternative is not _NO_ALTERNATIVE:
        check_option(alternative, "alternative", ALTERNATIVES)
    return float(confidence_level)


def check_n_bins(n_bins, name="n_bins", *, max_val=MAX_BINS):
    """Validate a number of bins: an integer in ``[1, max_val]`` (default ``2**53``).

    Beyond ``2**53`` equal-width bins on ``[0, 1]`` are narrower than the spacing of float64
    numbers near 1, so no finer binning exists. An absurd magnitude (``2**63``, ``1e20``, inf) is a
    ``ValueError`` naming ``name`` whatever its type; an ordinary non-integer (``2.5``, ``"3"``,
    ``True``) is a ``TypeError``.
    """
    if (isinstance(n_bins, Real) and not isinstance(n_bins, (bool, np.bool_))
            and not isinstance(n_bins, Integral)
            and not abs(float(n_bins)) <= max_val):  # also catches NaN and inf
        raise ValueError(f"{name} must be an integer in [1, {max_val}]; got {n_bins!r}.")
    return int(check_scalar_param(n_bins, name, kind="int", min_val=1, max_val=max_val))


def check_bool(value, name):
    """Return ``value`` if it is a bool (``numpy.bool_`` included); ``TypeError`` naming ``name``
    otherwise. Truthiness is not enough: ``squared="False"`` must not mean ``True``."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False; got {value!r} of type {type(value).__name__}.")


#: The largest ``abs(n_jobs)`` accepted (2**15 workers; joblib itself refuses 10**6).
MAX_N_JOBS = 2 ** 15


def check_n_jobs(n_jobs, name="n_jobs"):
    """Validate a joblib ``n_jobs``: ``None`` or a non-zero integer of magnitude at most
    :data:`MAX_N_JOBS` (negative counts from the number of CPUs, as in joblib, whose process
    pool refuses a million workers with a raw error)."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, Integral):
        raise TypeError(f"{name} must be None or an integer; got {n_jobs!r} of type "
                        f"{type(n_jobs).__name__}.")
    if n_jobs == 0:
        raise ValueError(f"{name} must not be 0 (None or 1 runs sequentially, -1 uses every CPU).")
    if abs(n_jobs) > MAX_N_JOBS:
        raise ValueError(f"{name} must be at most {MAX_N_JOBS} in magnitude; got {n_jobs!r} "
                         "(-1 uses every CPU).")
    return int(n_jobs)


def check_random_state_param(random_state, name="random_state"):
    """Validate a ``random_state`` without drawing from it (no side effects): ``None``, a
    non-negative integer, a numpy ``Generator`` or ``RandomState``."""
    if random_state is None or isinstance(random_state, (np.random.Generator,
                                                         np.random.RandomState)):
        return random_state
    if isinstance(random_state, (bool, np.bool_)) or not isinstance(random_state, Integral):
        raise ValueError(f"{name} must be None, an int, a numpy Generator or RandomState; got "
                         f"{random_state!r}.")
    if random_state < 0 or random_state >= 2**32:
        raise ValueError(f"{name} must be an integer in [0, 2**32 - 1]; got {random_state!r}.")
    return random_state


def check_rng(random_state):
    """A ``numpy.random.Generator`` from None, an int, a Generator or a RandomState.

    A ``RandomState`` is used to seed a new Generator (advancing the RandomState), so that passing
    the same RandomState twice gives different draws, as scikit-learn users expect.
    """
    check_random_state_param(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**32, dtype=np.uint64))
    if random_state is None or (isinstance(random_state, (int, np.integer))
                                and not isinstance(random_state, bool)):
        return np.random.default_rng(random_state)
    raise ValueError(
        f"random_state must be None, an int, a numpy Generator or RandomState; got {random_state!r}."
    )
