"""The local calibration bias against an audit feature (Vashistha and Farahi, Fig. 6)."""

import numpy as np

from .._validation import check_2d_features, check_bool, check_numeric
from ..metrics import local_calibration_bias
from ._base import (check_display_array, check_kwargs, check_name, check_rows, draw_with,
                    get_axes, predict_proba_of, unused_kwargs, user_names)

__all__ = ["LocalCalibrationBiasDisplay"]


def _column(X, key, name):
    """Column ``key`` (a DataFrame column name or an integer position) of ``X`` as a 1-D array,
    and its display name."""
    if hasattr(X, "iloc"):
        if isinstance(key, str):
            if key not in X.columns:
                raise ValueError(f"{name}={key!r} is not a column of X.")
            return np.asarray(X[key]), key
        return np.asarray(X.iloc[:, key]), str(X.columns[key])
    A = np.asarray(X)
    if A.ndim == 1:
        A = A[:, None]
    if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
        raise ValueError(f"{name} must be an integer column position when X is not a DataFrame; "
                         f"got {key!r}.")
    if not -A.shape[1] <= key < A.shape[1]:
        raise ValueError(f"{name}={key} is out of range for X with {A.shape[1]} columns.")
    return A[:, key], f"feature {int(key)}"


def _smooth(x, y, grid):
    """Nadaraya--Watson trend of ``y`` against ``x`` on ``grid`` (Gaussian kernel, Silverman's
    bandwidth)."""
    x = np.asarray(x, dtype=np.float64)
    sd = float(np.std(x))
    h = 1.06 * sd * x.size ** -0.2 if sd > 0 else 1.0
    W = np.exp(-0.5 * ((grid[:, None] - x[None, :]) / h) ** 2)
    den = W.sum(axis=1)
    return np.where(den > 0, W @ y / np.where(den > 0, den, 1.0), np.nan)


class LocalCalibrationBiasDisplay:
    """Local calibration bias against an audit feature, split by groups (Vashistha and Farahi,
    Fig. 6).

    Each point is one sample's local calibration bias (:func:`skcalib.local_calibration_bias`):
    positive where events happen more often than predicted (the risk is underestimated),
    negative where the model overestimates it. A smoothed trend per group and a zero line are
    drawn on top.

    Build it with :meth:`from_predictions` or :meth:`from_estimator`.
    The constructor only stores its arguments (as scikit-learn's Displays do); :meth:`plot`
    checks them before drawing and refuses bad data (lengths that disagree, NaN, unsorted
    edges, levels outside (0, 1), ...) with a ``ValueError`` naming the parameter.

    Parameters
    ----------
    feature_values : ndarray of shape (n_samples,)
        The feature on the horizontal axis.
    bias : ndarray of shape (n_samples,)
        The local calibration bias of each sample.
    groups : ndarray of shape (n_samples,), default=None
        Group of each sample (one colour and one trend per group).
    feature_name : str, default=None
        Axis label.

    Attributes
    ----------
    ax_ : matplotlib Axes
    figure_ : matplotlib Figure
    scatters_ : dict
        Group -> the PathCollection of its points.
    lines_ : dict
        Group -> the Line2D of its trend (empty without ``trend``).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.plotting import LocalCalibrationBiasDisplay
    >>> rng = np.random.default_rng(0)
    >>> age = rng.uniform(20, 70, 300)
    >>> p = rng.uniform(0.2, 0.8, 300)
    >>> y = (rng.random(300) < p + 0.1 * (age < 40)).astype(int)
    >>> display = LocalCalibrationBiasDisplay.from_predictions(y, p, age, feature=0)
    >>> len(display.lines_), display.ax_.get_ylabel()
    (1, 'Local calibration bias')
    """

    def __init__(self, feature_values, bias, groups=None, *, feature_name=None):
        self.feature_values = feature_values
        self.bias = bias
        self.groups = groups
        self.feature_name = feature_name

    def plot(self, ax=None, *, trend=True, scatter_kwargs=None, line_kwargs=None):
        """Plot the biases (and per-group trends) on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None.
        trend : bool, default=True
            Draw a smoothed trend of the bias per group.
        scatter_kwargs : dict, default=None
            Passed to ``ax.scatter``.
        line_kwargs : dict, default=None
            Passed to ``ax.plot`` for the trends.

        Returns
        -------
        LocalCalibrationBiasDisplay
            ``self``, with ``ax_``, ``figure_``, ``scatters_`` and ``lines_``.
        """
        check_bool(trend, "trend")
        scatter_kwargs = check_kwargs(scatter_kwargs, "scatter_kwargs")
        line_kwargs = check_kwargs(line_kwargs, "line_kwargs")
        if not trend:
            unused_kwargs(line_kwargs, "line_kwargs", "no trend is drawn (trend=False)")
        x = check_display_array(self.feature_values, "feature_values")
        bias = check_display_array(self.bias, "bias", size=x.size,
                                   size_of="one per entry of feature_values")
        if self.groups is None:
            groups = np.zeros(x.size, dtype=int)
        else:
            groups = np.asarray(self.groups)
            if groups.shape != x.shape:
                raise ValueError(f"groups must have shape ({x.size},) (one per entry of "
                                 f"feature_values); got {groups.shape}.")
        check_name(self.feature_name, "feature_name")
        _, ax = get_axes(ax)
        try:
            labels = np.unique(groups)
        except TypeError:  # mixed types cannot be sorted
            raise ValueError("groups must hold values of one type (they are sorted for the "
                             "legend).") from None
        self.scatters_, self.lines_ = {}, {}
        grid = np.linspace(np.min(x), np.max(x), 201) if x.size else np.zeros(0)
        for i, g in enumerate(labels):
            mask = groups == g
            color = f"C{i % 10}"
            label = None if self.groups is None else str(g)
            self.scatters_[g] = draw_with(ax.scatter, (x[mask], bias[mask]),
                                          {"s": 8, "alpha": 0.5, "color": color,
                                           "label": label}, scatter_kwargs, "scatter_kwargs",
                                          as_given=("c",))  # scatter's c may be values
            if trend and mask.sum() > 1:
                (line,) = draw_with(ax.plot, (grid, _smooth(x[mask], bias[mask], grid)),
                                    {"color": color, "linewidth": 2}, line_kwargs,
                                    "line_kwargs")
                self.lines_[g] = line
        ax.axhline(0.0, color="black", linewidth=1)
        ax.set_xlabel(self.feature_name or "feature")
        ax.set_ylabel("Local calibration bias")
        if self.groups is not None:
            ax.legend(title="group")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_proba, X, *, feature=0, group=None, kernel=None,
                         feature_kernel=None, standardize=True, labels=None, pos_label=None,
                         random_state=None, leave_one_out=True, ax=None, trend=True):
        """Compute the local calibration bias of predictions on audit features and plot it.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            True labels (binary).
        y_proba : array-like of shape (n_samples,) or (n_samples, 2)
            Predicted probabilities.
        X : array-like or DataFrame of shape (n_samples, n_features)
            Audit features; the bias is computed on all of them.
        feature : int or str, default=0
            Column of ``X`` on the horizontal axis.
        group : int, str or array-like of shape (n_samples,), default=None
            Column of ``X`` (or an array) whose values split the points and trends.
        kernel, feature_kernel, standardize, labels, pos_label, random_state
            As in :func:`skcalib.local_calibration_bias`.
        leave_one_out : bool, default=True
            Leave each sample out of its own average (advisable at the data points).
        ax : matplotlib Axes, default=None
            Axes to draw on.
        trend : bool, default=True
            Draw the per-group trends.

        Returns
        -------
        LocalCalibrationBiasDisplay
        """
        check_numeric(X, "X")  # before the DataFrame's float conversion would parse strings
        bias = local_calibration_bias(y_true, y_proba, X if not hasattr(X, "iloc")
                                      else X.to_numpy(dtype=np.float64), kernel=kernel,
                                      feature_kernel=feature_kernel, standardize=standardize,
                                      leave_one_out=leave_one_out, labels=labels,
                                      pos_label=pos_label, random_state=random_state)
        if bias.ndim != 1:
            raise ValueError("LocalCalibrationBiasDisplay plots binary problems; got "
                             f"{bias.shape[1]} classes (pass one class's probabilities).")
        values, name = _column(X, feature, "feature")
        if group is None:
            groups = None
        elif isinstance(group, (str, int, np.integer)) and not isinstance(group, bool):
            groups = _column(X, group, "group")[0]
        else:
            groups = np.asarray(group)
            if groups.shape != (bias.size,):
                raise ValueError(f"group has shape {groups.shape}; expected ({bias.size},).")
        return cls(values, bias, groups, feature_name=name).plot(ax=ax, trend=trend)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, audit_features, feature=0, group=None,
                       kernel=None, feature_kernel=None, standardize=True, leave_one_out=True,
                       random_state=None, ax=None, trend=True):
        """Plot the local calibration bias of a fitted classifier on audit features.

        Parameters
        ----------
        estimator : classifier
            Fitted binary classifier with ``predict_proba``.
        X : array-like of shape (n_samples, n_model_features)
            The model's inputs.
        y : array-like of shape (n_samples,)
            True labels.
        audit_features : array-like or DataFrame of shape (n_samples, n_features)
            The audit features (need not be model inputs).
        feature, group, kernel, feature_kernel, standardize, leave_one_out, random_state, ax, \
trend
            As in :meth:`from_predictions`.

        Returns
        -------
        LocalCalibrationBiasDisplay
        """
        classes = getattr(estimator, "classes_", None)
        if classes is not None and len(classes) != 2:
            raise ValueError("LocalCalibrationBiasDisplay.from_estimator needs a fitted binary "
                             f"classifier; got {type(estimator).__name__} with "
                             f"{len(classes)} classes.")
        proba, classes = predict_proba_of(estimator, X)
        check_rows(y, proba.shape[0])
        # the audit features are checked under their own name here: from_predictions calls
        # them X, which in this method is the model's input
        A = check_2d_features(audit_features, "audit_features")
        if A.shape[0] != proba.shape[0]:
            raise ValueError(f"audit_features has {A.shape[0]} rows but X has "
                             f"{proba.shape[0]}; they must describe the same samples.")
        with user_names({"y_true": "y", "y_proba": "the estimator's predict_proba(X)",
                         "X": "audit_features"}):
            return cls.from_predictions(y, proba, audit_features, feature=feature,
                                        group=group, kernel=kernel,
                                        feature_kernel=feature_kernel, standardize=standardize,
                                        leave_one_out=leave_one_out, labels=classes,
                                        random_state=random_state, ax=ax, trend=trend)
