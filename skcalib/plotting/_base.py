"""What every Display shares: the lazy matplotlib import, the axes to draw on, and a fitted
model's predictions.

A Display follows scikit-learn's pattern (``sklearn.metrics.RocCurveDisplay``): the constructor
stores the *data* of the plot (computed by the metrics, never recomputed here), ``plot(ax=None,
*, name=None, ...)`` draws them and returns ``self`` with ``ax_``, ``figure_`` and the artists it
made, and the class methods ``from_predictions`` / ``from_estimator`` compute the data and plot
them. Several models go on one axis by passing the same ``ax`` (each call adds its own legend
entry, named by ``name``).

**Checks.** As in scikit-learn, a Display's constructor only stores its data; ``plot`` checks
them first (:func:`check_display_array`: lengths that agree, finite values, sorted edges,
levels in (0, 1), ...) and refuses bad data with a ``ValueError`` naming the constructor's
parameter, before anything is drawn. The ``*_kwargs`` dicts (and ``**kwargs``) a user passes
to matplotlib go through :func:`check_kwargs` and :func:`draw_with`, so that a key matplotlib does
not know is a ``TypeError`` naming the argument and the key, not matplotlib's
``AttributeError``.

**Styles.** A Display's default style and the user's keyword arguments are merged by one function,
:func:`merge_style` (every merge goes through it, most of them inside :func:`draw_with`): a user's
matplotlib alias (``lw``, ``ls``, ``c``, ``ec``, ``fc``, ``ms``, ...) replaces the default's long
name (``linewidth``, ...) and a long name replaces a default alias, so ``lw=3`` draws a line 3
points wide instead of matplotlib's ``Got both 'linewidth' and 'lw'``; a user who gives both an
alias and its long name gets a ``TypeError`` naming both. ``from_estimator`` names ``X`` and ``y`` in its errors (:func:`user_names`),
not the ``y_true`` and ``y_pred`` of the metric it calls.

Matplotlib is an optional dependency (``pip install 'skcalib[plot]'``): it is imported when a
Display draws, not when :mod:`skcalib.plotting` is imported.
"""

import contextlib
import re
import warnings

import numpy as np
from sklearn.exceptions import NotFittedError

from .._optional import pyplot
from .._predictions import predict_distribution
from .._validation import check_numeric, check_option, user_stacklevel

__all__ = ["pyplot", "get_axes", "check_ax", "estimator_name", "predict_proba_of", "distribution_of",
           "check_name", "check_kwargs", "unused_kwargs", "merge_style", "style_properties",
           "draw_with", "draw_once", "diagonal",
           "check_display_array", "check_display_number", "check_display_option",
           "check_rows", "user_names"]

#: The gid of the line of perfect calibration (one per axes, shared by every Display on it).
DIAGONAL_GID = "skcalib-diagonal"


def get_axes(ax):
    """``(figure, ax)``: ``ax`` and its figure, or a new figure with one axes when ``ax`` is None.

    Anything other than None or a matplotlib Axes is refused with a message naming ``ax``.
    """
    plt = pyplot()
    if ax is None:
        fig, ax = plt.subplots()
        return fig, ax
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None; got {type(ax).__name__}.")
    return ax.figure, ax


def check_ax(ax):
    """Refuse anything but None or an Axes before any work is done (``get_axes`` creates
    nothing when ``ax`` is given)."""
    if ax is not None:
        get_axes(ax)
    return ax


def estimator_name(estimator, name=None):
    """The legend name of a model: ``name`` if given, else the class name of ``estimator``
    (the last step's class name for a Pipeline)."""
    if name is not None:
        return check_name(name)
    steps = getattr(estimator, "steps", None)
    if steps:
        estimator = steps[-1][1]
    return type(estimator).__name__


def predict_proba_of(estimator, X):
    """``(y_proba, classes)`` of a fitted classifier, with a clear error for anything else."""
    if not hasattr(estimator, "predict_proba"):
        raise TypeError(f"{type(estimator).__name__} has no predict_proba; a fitted classifier "
                        "is needed (or call from_predictions with its probabilities).")
    classes = getattr(estimator, "classes_", None)
    if classes is None:
        raise NotFittedError(f"{type(estimator).__name__} is not fitted (it has no classes_).")
    return np.asarray(estimator.predict_proba(X)), np.asarray(classes)


def distribution_of(estimator, X):
    """A fitted regressor's predictive distribution (:func:`skcalib.scorers.predict_distribution`)."""
    return predict_distribution(estimator, X)


def check_name(name, arg="name"):
    """``name`` (a legend name or axis label, the argument ``arg``), refused with a
    ``TypeError`` naming ``arg`` unless a str or None."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"{arg} must be a str or None; got {type(name).__name__}.")
    return name


def check_kwargs(value, name):
    """A copy of the keyword-argument dict ``value`` (``{}`` for None), refused with a
    ``TypeError`` naming ``name`` unless a dict with string keys."""
    if value is not None and not isinstance(value, dict):
        raise TypeError(f"{name} must be a dict of matplotlib keyword arguments or None; got "
                        f"{type(value).__name__} {value!r:.60}.")
    value = dict(value or {})
    bad = [k for k in value if not isinstance(k, str)]
    if bad:
        raise TypeError(f"{name} must have str keys (matplotlib keyword arguments); got "
                        f"{bad[0]!r}.")
    return value


def unused_kwargs(value, name, reason):
    """Warn (``UserWarning``) that the keyword-argument dict ``name`` is ignored because of
    ``reason`` (e.g. ``band_kwargs`` with no band drawn), if it holds anything."""
    if value:
        warnings.warn(f"{name} is ignored: {reason}.", UserWarning,
                      stacklevel=user_stacklevel())


#: matplotlib's short aliases of artist properties (Line2D, Patch and Collection setters), and
#: the property each one names.
STYLE_ALIASES = {
    "aa": "antialiased",
    "c": "color",
    "ds": "drawstyle",
    "ec": "edgecolor",
    "fc": "facecolor",
    "ls": "linestyle",
    "lw": "linewidth",
    "mec": "markeredgecolor",
    "mew": "markeredgewidth",
    "mfc": "markerfacecolor",
    "mfcalt": "markerfacecoloralt",
    "ms": "markersize",
}


def _property(key):
    """The matplotlib property a keyword argument sets: its long name for an alias."""
    return STYLE_ALIASES.get(key, key)


def style_properties(kwargs):
    """The set of matplotlib properties the keyword arguments ``kwargs`` set, an alias counted
    as its long name (``{"lw": 2, "fc": "red"}`` sets ``{"linewidth", "facecolor"}``)."""
    return {_property(k) for k in kwargs}


def merge_style(defaults, user, name="kwargs", *, as_given=()):
    """The keyword arguments of a matplotlib call: a Display's ``defaults`` updated by the
    user's ``user`` (the argument ``name``), aliases resolved.

    Each of the user's keys replaces the default that sets the same property, whichever of the
    two is an alias (``lw=2`` replaces ``linewidth=1.5``; ``linewidth=2`` replaces ``lw=1.5``).
    The user's aliases are passed under their long names (every artist knows ``linewidth``; a
    Patch does not know ``c``), except the keys in ``as_given``, which the called function
    takes under that spelling (``scatter``'s ``c``, which may be values to colour-map).
    Neither dict is modified.

    Parameters
    ----------
    defaults : dict
        The Display's style (long names or aliases).
    user : dict
        The user's keyword arguments.
    name : str, default="kwargs"
        The argument that holds ``user``, for the error.
    as_given : tuple of str, default=()
        Aliases passed under the user's spelling.

    Returns
    -------
    dict
        The merged keyword arguments.

    Raises
    ------
    TypeError
        If ``user`` sets one property twice (an alias and its long name, e.g. ``lw`` and
        ``linewidth``), naming both keys.

    Examples
    --------
    >>> merge_style({"linewidth": 1.5, "color": "C0"}, {"lw": 3, "ls": "--"})
    {'color': 'C0', 'linewidth': 3, 'linestyle': '--'}
    >>> merge_style({"lw": 1.5}, {"linewidth": 3})
    {'linewidth': 3}
    >>> merge_style({"color": "C0"}, {"c": [0.1, 0.9]}, as_given=("c",))
    {'c': [0.1, 0.9]}
    >>> merge_style({}, {"lw": 3, "linewidth": 2}, "line_kwargs")
    Traceback (most recent call last):
    ...
    TypeError: line_kwargs has both 'lw' and 'linewidth', which are the same matplotlib property (linewidth); pass one of them.
    """
    seen = {}
    for key in user:
        prop = _property(key)
        if prop in seen:
            raise TypeError(f"{name} has both {seen[prop]!r} and {key!r}, which are the same "
                            f"matplotlib property ({prop}); pass one of them.")
        seen[prop] = key
    merged = {k: v for k, v in defaults.items() if _property(k) not in seen}
    for key, value in user.items():
        merged[key if key in as_given else _property(key)] = value
    return merged


_UNEXPECTED = re.compile(r"unexpected keyword argument '([^']+)'|"
                         r"got multiple values for keyword argument '([^']+)'")


def draw_with(func, args, defaults, user, name, *, as_given=()):
    """``func(*args, **merge_style(defaults, user, name))``: a matplotlib call with the
    Display's defaults and the user's keyword arguments ``user`` (the argument ``name``,
    checked by :func:`check_kwargs`; the user's keys win, aliases resolved by
    :func:`merge_style`, which passes the keys of ``as_given`` as they are).

    A key matplotlib refuses is a ``TypeError`` naming ``name`` and the key (matplotlib raises
    ``AttributeError: Rectangle.set() got an unexpected keyword argument 'bogus'``); a value
    it refuses (``color="nope"``) is its ``ValueError`` or ``TypeError`` prefixed with ``name``.
    """
    kwargs = merge_style(defaults, user, name, as_given=as_given)
    try:
        return func(*args, **kwargs)
    except (AttributeError, TypeError, ValueError) as exc:
        if not user:
            raise
        msg = str(exc).strip().split("\n")[0]
        # the user's keys under the names matplotlib saw (an alias under its long name)
        passed = {(k if k in as_given else _property(k)): k for k in user}
        found = _UNEXPECTED.search(msg)
        if found is not None:
            key = found.group(1) or found.group(2)
            if key in passed:
                raise TypeError(f"{name} has a key that {_callee(func)} does not accept: "
                                f"{passed[key]!r} ({msg}).") from None
        if isinstance(exc, AttributeError):
            raise TypeError(f"{name}: {_callee(func)} refused {sorted(user)}: {msg}") from None
        if any(re.search(rf"\b{re.escape(k)}\b", msg) for k in {*user, *passed}):
            raise type(exc)(f"{name}: {msg}") from None
        raise


def _callee(func):
    return f"matplotlib's {getattr(func, '__name__', 'drawing function')}"


# --------------------------------------------------------------------------------------------
# the data of a Display, checked at plot time


def check_display_option(value, name, options, *, allow_none=False):
    """``value`` among ``options`` (or None with ``allow_none``), with "did you mean"."""
    if value is None and allow_none:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{name} must be one of {list(options)}"
                         + (" or None" if allow_none else "") + f"; got {value!r:.60}.")
    return check_option(value, name, options)


def check_display_number(value, name, *, low=None, high=None, low_open=False, high_open=False,
                         allow_none=False, allow_inf=False):
    """A real number (a float) in the given range, or None with ``allow_none``; a
    ``ValueError`` (``TypeError`` for a non-number) naming ``name`` otherwise."""
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                    np.floating)):
        raise TypeError(f"{name} must be a real number; got {type(value).__name__} "
                        f"{value!r:.60}.")
    x = float(value)
    if np.isnan(x) or (np.isinf(x) and not allow_inf):
        raise ValueError(f"{name} must be finite; got {x!r}.")
    if (low is not None and (x < low or (low_open and x == low))) or \
            (high is not None and (x > high or (high_open and x == high))):
        raise ValueError(f"{name} must be {_range(low, high, low_open, high_open)}; got "
                         f"{x!r}.")
    return x


def _range(low, high, low_open, high_open):
    """``"in (0, 1)"``, ``"> 0"``, ``">= 0"``, ... for the messages."""
    if high is None:
        return f"{'>' if low_open else '>='} {low:g}"
    if low is None:
        return f"{'<' if high_open else '<='} {high:g}"
    return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def check_display_array(value, name, *, size=None, size_of=None, low=None, high=None,
                        low_open=False, high_open=False, allow_nan=False, increasing=False,
                        allow_none=False, min_size=0):
    """The 1-D float array ``value`` of a Display, checked before it is drawn.

    A ``ValueError`` naming ``name`` unless it is a 1-D array-like of numbers (strings are
    refused as everywhere, :func:`skcalib._validation.check_numeric`) with ``size`` entries
    (``size_of`` names the parameter that fixes that size, for the message), at least
    ``min_size`` entries, finite (NaN allowed with ``allow_nan``: not drawn), within
    ``[low, high]`` up to rounding (1e-9; open ends, ``low_open``/``high_open``, exactly) and,
    with ``increasing``,
    strictly increasing. None is returned as None with ``allow_none``.
    """
    if value is None:
        if allow_none:
            return None
        raise ValueError(f"{name} is needed (an array of numbers); got None.")
    check_numeric(value, name)
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a one-dimensional array of numbers; got "
                         f"{type(value).__name__} {value!r:.60}.") from None
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {a.shape}.")
    if size is not None and a.size != size:
        why = f" ({size_of})" if size_of else ""
        raise ValueError(f"{name} must have {size} {'entry' if size == 1 else 'entries'}{why}; "
                         f"got {a.size}.")
    if a.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} entries; got {a.size}.")
    finite = np.isfinite(a)
    if not finite.all():
        if not allow_nan or np.isinf(a).any():
            i = int(np.flatnonzero(~finite)[0])
            raise ValueError(f"{name} must be finite; got {float(a[i])!r} at index {i}.")
    v = a[finite]
    for bound, is_low, is_open in ((low, True, low_open), (high, False, high_open)):
        if bound is None or not v.size:
            continue
        # a closed bound allows rounding errors (a weighted fraction of 1 + 2e-16); an open one
        # (levels in (0, 1)) does not
        tol = 0.0 if is_open else 1e-9 * max(1.0, abs(bound))
        bad = (v < bound - tol if is_low else v > bound + tol) | \
            ((v == bound) if is_open else False)
        if bad.any():
            raise ValueError(f"{name} must hold values {_range(low, high, low_open, high_open)};"
                             f" got {float(v[bad][0])!r}.")
    if increasing and np.any(np.diff(a) <= 0):
        i = int(np.flatnonzero(np.diff(a) <= 0)[0])
        raise ValueError(f"{name} must be strictly increasing; got {float(a[i])!r} then "
                         f"{float(a[i + 1])!r} at index {i}.")
    return a


def check_rows(y, n_rows, *, y_name="y", x_name="X"):
    """``from_estimator``: ``y`` must have one entry per row of ``x_name`` (``n_rows``, the
    number of the estimator's predictions on it), a ``ValueError`` naming both otherwise."""
    n = np.shape(y)[0] if np.ndim(y) else None
    if n is not None and n != n_rows:
        raise ValueError(f"{y_name} has {n} entries but {x_name} has {n_rows} rows; they must "
                         "describe the same samples.")


@contextlib.contextmanager
def user_names(names):
    """Errors raised inside name the caller's arguments: each ``{inner: outer}`` of ``names``
    (e.g. ``{"y_true": "y"}`` in ``from_estimator``, which passes its ``y`` to a metric as
    ``y_true``) is replaced, as a whole word, in the message of a ``ValueError`` or
    ``TypeError``."""
    try:
        yield
    except (TypeError, ValueError) as exc:
        msg = str(exc)
        new = msg
        for inner, outer in names.items():
            new = re.sub(rf"(?<![\w.]){re.escape(inner)}(?![\w])", outer, new)
        if new == msg:
            raise
        try:
            renamed = type(exc)(new)
        except Exception:  # pragma: no cover - an exception type with another signature
            raise exc from None
        raise renamed from None


def draw_once(ax, gid, draw):
    """The artist with ``gid`` already on ``ax`` (several models on one axis share it), else the
    one that ``draw()`` makes, marked with ``gid``."""
    for artist in list(ax.lines) + list(ax.collections):
        if artist.get_gid() == gid:
            return artist
    artist = draw()
    artist.set_gid(gid)
    return artist


def diagonal(ax):
    """The line of perfect calibration ``y = x`` on ``[0, 1]``, drawn once per axes (below the
    curves)."""
    def draw():
        (line,) = ax.plot([0.0, 1.0], [0.0, 1.0], linestyle="--", color="grey", linewidth=1,
                          label="Perfectly calibrated", zorder=1)
        return line

    return draw_once(ax, DIAGONAL_GID, draw)
