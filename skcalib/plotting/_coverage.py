"""The coverage of a regressor's central prediction intervals (:class:`IntervalCoverageDisplay`)."""

import numpy as np

from ._base import (check_display_array, check_display_number, check_kwargs, check_name,
                    diagonal, draw_with, estimator_name, get_axes, user_names)
from ._regression import (DEFAULT_COVERAGE_LEVELS, ESTIMATOR_NAMES, bounds_coverage_data,
                          check_bounds_params, check_coverage_params, coverage_data,
                          finish_legend, regression_prediction)

__all__ = ["IntervalCoverageDisplay"]


class IntervalCoverageDisplay:
    """Observed coverage of a regressor's central prediction intervals against their nominal
    levels, with a Clopper--Pearson interval per level.

    The central interval at level ``p`` runs from the predicted ``(1 - p) / 2``- to the
    ``(1 + p) / 2``-quantile; the observed coverage is the fraction of targets inside it
    (:func:`skcalib.interval_coverage`). A calibrated model lies on the diagonal; below it the
    intervals are too narrow (over-confident), above it too wide. The error bars are the
    Clopper--Pearson intervals of each observed fraction (the number of trials is the number of
    samples, or the total frequency weight), so a diagonal outside a bar is more than sampling
    noise at that level. The coverages at several levels come from the same samples and are
    dependent.

    Build it with :meth:`from_predictions` or :meth:`from_estimator` from predictive
    distributions, or with :meth:`from_bounds` from the lower and upper bounds of prediction
    intervals (conformal or quantile-regression intervals, one or several levels).
    The constructor only stores its arguments (as scikit-learn's Displays do); :meth:`plot`
    checks them before drawing and refuses bad data (lengths that disagree, NaN, unsorted
    edges, levels outside (0, 1), ...) with a ``ValueError`` naming the parameter.

    Parameters
    ----------
    levels : ndarray of shape (n_levels,)
        Nominal levels (x-axis).
    coverage : ndarray of shape (n_levels,)
        Observed coverage (y-axis).
    ci_low, ci_high : ndarray of shape (n_levels,)
        Ends of the Clopper--Pearson interval of each coverage.
    confidence_level : float, default=0.95
        Their coverage.
    n_trials : float, default=None
        Number of samples (or total frequency weight) behind each coverage.
    name : str, default=None
        Legend name of the model.

    Attributes
    ----------
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        Its figure.
    errorbar_ : matplotlib ErrorbarContainer
        Points, connecting line and error bars.
    line_ : matplotlib Line2D
        The points and their connecting line (``errorbar_.lines[0]``).
    diagonal_ : matplotlib Line2D
        The diagonal (one per axis).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Normal
    >>> from skcalib.plotting import IntervalCoverageDisplay
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=400)
    >>> display = IntervalCoverageDisplay.from_predictions(
    ...     y, Normal(np.zeros(400), np.full(400, 0.5)), levels=[0.5, 0.9], name="too narrow")
    >>> display.coverage.round(3), bool(np.all(display.ci_high < display.levels))
    (array([0.24 , 0.592]), True)
    """

    def __init__(self, levels, coverage, ci_low, ci_high, *, confidence_level=0.95,
                 n_trials=None, name=None):
        self.levels = levels
        self.coverage = coverage
        self.ci_low = ci_low
        self.ci_high = ci_high
        self.confidence_level = confidence_level
        self.n_trials = n_trials
        self.name = name

    def plot(self, ax=None, *, name=None, errorbar_kwargs=None):
        """Draw the coverages with their intervals, and the diagonal, on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None. Pass the same axes for several models.
        name : str, default=None
            Legend name; ``self.name`` if None.
        errorbar_kwargs : dict, default=None
            Passed to ``ax.errorbar``.

        Returns
        -------
        IntervalCoverageDisplay
            ``self``, with ``ax_``, ``figure_``, ``errorbar_``, ``line_`` and ``diagonal_``.
        """
        name = check_name(name)
        errorbar_kwargs = check_kwargs(errorbar_kwargs, "errorbar_kwargs")
        levels = check_display_array(self.levels, "levels", min_size=1, low=0.0, high=1.0,
                                     low_open=True, high_open=True)
        size_of = "one per level"
        coverage, ci_low, ci_high = (
            check_display_array(v, n, size=levels.size, size_of=size_of, low=0.0, high=1.0)
            for v, n in ((self.coverage, "coverage"), (self.ci_low, "ci_low"),
                         (self.ci_high, "ci_high")))
        if np.any(ci_low > ci_high):
            raise ValueError("ci_low must not exceed ci_high.")
        check_display_number(self.confidence_level, "confidence_level", low=0.0, high=1.0,
                             low_open=True, high_open=True)
        check_display_number(self.n_trials, "n_trials", low=0.0, low_open=True,
                             allow_inf=True, allow_none=True)
        check_name(self.name)
        _, ax = get_axes(ax)
        name = name if name is not None else self.name
        kwargs = {"marker": "o", "markersize": 4, "capsize": 3, "linewidth": 1.5, "label": name}
        self.diagonal_ = diagonal(ax)
        yerr = np.vstack([coverage - ci_low, ci_high - coverage])
        kwargs["yerr"] = np.maximum(yerr, 0.0)
        self.errorbar_ = draw_with(ax.errorbar, (levels, coverage), kwargs, errorbar_kwargs,
                                   "errorbar_kwargs")
        self.line_ = self.errorbar_.lines[0]
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 1.0)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel("Nominal level of the central prediction interval")
        ax.set_ylabel("Observed coverage")
        finish_legend(ax, loc="best", fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_pred, *, levels=DEFAULT_COVERAGE_LEVELS,
                         confidence_level=0.95, sample_weight=None, name=None, ax=None,
                         errorbar_kwargs=None):
        """Observed coverage of the central prediction intervals of predictions.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Real targets.
        y_pred : Distribution or array-like of shape (n_samples, 2)
            Univariate predictive distributions (Normal, Laplace, a Mixture of them,
            Recalibrated, draws or ensemble members as ``Empirical``, predicted quantiles as
            ``Quantiles``, ...), or predicted means and standard deviations (read as Normal).
        levels : array-like of shape (n_levels,), default=(0.1, 0.2, ..., 0.9, 0.95, 0.99)
            Nominal levels in (0, 1).
        confidence_level : float, default=0.95
            Coverage of the Clopper--Pearson intervals, in (0, 1).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights: weighted coverages, and the total weight as the number of trials
            of the intervals.
        name : str, default=None
            Legend name of the model.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None.
        errorbar_kwargs : dict, default=None
            Passed to ``ax.errorbar``.

        Returns
        -------
        IntervalCoverageDisplay
        """
        lv, confidence_level = check_coverage_params(levels, confidence_level, name, ax,
                                                      errorbar_kwargs)
        coverage, low, high, n_trials = coverage_data(
            y_true, y_pred, lv, confidence_level=confidence_level, sample_weight=sample_weight)
        display = cls(lv.astype(np.float64), coverage, low, high,
                      confidence_level=confidence_level, n_trials=n_trials, name=name)
        return display.plot(ax=ax, errorbar_kwargs=errorbar_kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, levels=DEFAULT_COVERAGE_LEVELS,
                       confidence_level=0.95, sample_weight=None, name=None, ax=None,
                       errorbar_kwargs=None):
        """Observed coverage of a fitted regressor's central prediction intervals on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted regressor
            With ``predict(X, return_std=True)`` or ``predict_distribution(X)``.
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Real targets.
        levels, confidence_level, sample_weight
            As in :meth:`from_predictions`.
        name : str, default=None
            Legend name; the estimator's class name if None.
        ax, errorbar_kwargs
            As in :meth:`from_predictions`.

        Returns
        -------
        IntervalCoverageDisplay

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.linear_model import BayesianRidge
        >>> from skcalib.plotting import IntervalCoverageDisplay
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = BayesianRidge().fit(X[:300], y[:300])
        >>> display = IntervalCoverageDisplay.from_estimator(model, X[300:], y[300:],
        ...                                                  levels=[0.5, 0.9])
        >>> display.coverage.round(3)
        array([0.549, 0.908])
        """
        name = estimator_name(estimator, name)
        check_coverage_params(levels, confidence_level, name, ax, errorbar_kwargs)
        dist = regression_prediction(estimator, X, y)
        with user_names(ESTIMATOR_NAMES):
            return cls.from_predictions(y, dist, levels=levels, confidence_level=confidence_level,
                                        sample_weight=sample_weight, name=name, ax=ax,
                                        errorbar_kwargs=errorbar_kwargs)

    @classmethod
    def from_bounds(cls, y_true, y_interval, *, level=None, confidence_level=0.95,
                    sample_weight=None, name=None, ax=None, errorbar_kwargs=None):
        """Observed coverage of prediction intervals given by their lower and upper bounds.

        The coverage at each level is :func:`skcalib.interval_bounds_coverage` (the fraction of
        targets with ``lower <= y <= upper``), with its Clopper--Pearson interval, drawn against
        the nominal level as :meth:`from_predictions` draws central intervals. Here an
        ``(n_samples, 2)`` array always holds ``[lower, upper]`` (in :meth:`from_predictions`
        it holds ``[mean, std]`` of normal predictions).

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Real targets.
        y_interval : array-like of shape (n_samples, 2) or dict
            Bounds ``[lower, upper]`` of one interval per sample at the nominal level
            ``level``, or a dict ``{level: (n_samples, 2) array}`` of intervals at several
            levels (one point per level).
        level : float, default=None
            Nominal coverage in (0, 1) of the intervals of an array ``y_interval``; required
            for an array, None for a dict (its keys are the levels).
        confidence_level : float, default=0.95
            Coverage of the Clopper--Pearson intervals, in (0, 1).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights: weighted coverages, and the total weight as the number of trials
            of the intervals.
        name : str, default=None
            Legend name of the model.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None.
        errorbar_kwargs : dict, default=None
            Passed to ``ax.errorbar``.

        Returns
        -------
        IntervalCoverageDisplay

        Raises
        ------
        TypeError
            If ``level`` is missing for an array or given with a dict.

        Examples
        --------
        >>> import numpy as np
        >>> from skcalib.plotting import IntervalCoverageDisplay
        >>> rng = np.random.default_rng(0)
        >>> y = rng.normal(size=400)
        >>> bounds = {0.5: np.tile([-0.674, 0.674], (400, 1)),
        ...           0.9: np.tile([-1.645, 1.645], (400, 1))}
        >>> display = IntervalCoverageDisplay.from_bounds(y, bounds, name="N(0, 1) intervals")
        >>> display.levels, display.coverage.round(3)
        (array([0.5, 0.9]), array([0.5  , 0.922]))
        """
        level, confidence_level = check_bounds_params(y_interval, level, confidence_level, name,
                                                      ax, errorbar_kwargs)
        levels, coverage, low, high, n_trials = bounds_coverage_data(
            y_true, y_interval, level, confidence_level=confidence_level,
            sample_weight=sample_weight)
        display = cls(levels, coverage, low, high, confidence_level=confidence_level,
                      n_trials=n_trials, name=name)
        return display.plot(ax=ax, errorbar_kwargs=errorbar_kwargs)
