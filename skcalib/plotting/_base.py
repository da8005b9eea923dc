"""What every Display shares: the lazy matplotlib import, the axes to draw on, and a fitted
model's predictions.

A Display follows scikit-learn's pattern (``sklearn.metrics.RocCurveDisplay``): the constructor
stores the *data* of the plot (computed by the metrics, never recomputed here), ``plot(ax=None,
*, name=None, ...)`` draws them and returns ``self`` with ``ax_``, ``figure_`` and the artists it
made, and the class methods ``from_predictions`` / ``from_estimator`` compute the data and plot
them. Several models go on one axis by passing the same ``ax`` (each call adds its own legend
entry, named by ``name``).

Matplotlib is an optional dependency (``pip install 'skcalib[plot]'``): it is imported when a
Display draws, not when :mod:`skcalib.plotting` is imported.
"""

import numpy as np
from sklearn.exceptions import NotFittedError

from .._predictions import predict_distribution

__all__ = ["pyplot", "get_axes", "estimator_name", "predict_proba_of", "distribution_of",
           "check_name", "check_kwargs", "draw_once", "diagonal"]

#: The gid of the line of perfect calibration (one per axes, shared by every Display on it).
DIAGONAL_GID = "skcalib-diagonal"


def pyplot():
    """``matplotlib.pyplot``, or an ImportError that says how to install it."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised without matplotlib only
        raise ImportError(
            "plotting needs matplotlib: pip install 'skcalib[plot]' (or matplotlib)."
        ) from exc
    return plt


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


def check_name(name):
    """``name`` (a legend name), refused with a ``TypeError`` unless a str or None."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None; got {type(name).__name__}.")
    return name


def check_kwargs(value, name):
    """A copy of the keyword-argument dict ``value`` (``{}`` for None), refused with a
    ``TypeError`` naming ``name`` unless a dict."""
    if value is not None and not isinstance(value, dict):
        raise TypeError(f"{name} must be a dict or None; got {type(value).__name__}.")
    return dict(value or {})


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
