"""The quantile-calibration curve of a regressor's predictive distributions
(:class:`QuantileCalibrationDisplay`)."""

from .._validation import check_bool
from ._base import (check_display_array, check_display_number, check_display_option,
                    check_kwargs, check_name, diagonal, draw_with, estimator_name, get_axes,
                    user_names)
from ._regression import (ESTIMATOR_NAMES, check_band_arrays, check_quantile_params,
                          finish_legend, quantile_curve_data, regression_prediction, shared_band)

__all__ = ["QuantileCalibrationDisplay"]

_CURVE_BAND_GID = "skcalib-quantile-band"

_PROPORTION_LABELS = {
    "quantile": ("Expected proportion p (quantile level)",
                 "Observed proportion of targets below the p-quantile"),
    "interval": ("Expected proportion p (central interval level)",
                 "Observed proportion of targets inside the p-interval"),
}


class QuantileCalibrationDisplay:
    """The quantile-calibration curve of a regressor: observed against expected proportions.

    With ``proportion="quantile"`` (Kuleshov, Fenner and Ermon 2018) the observed proportion at
    ``p`` is the fraction of targets below their predicted ``p``-quantile; with ``"interval"``
    the fraction inside the central ``p``-interval (see
    :func:`skcalib.quantile_calibration_curve`). A calibrated model lies on the diagonal
    (dashed). The region between the curve and the diagonal is shaded, and the legend gives the
    miscalibration area (:func:`skcalib.miscalibration_area`, exact: computed from the sorted
    proportions, not from the drawn grid, with which it agrees to the grid's resolution). With
    ``band=`` a grey band shows where a calibrated model's curve falls with the given
    probability (see :func:`quantile_curve_band`).

    Build it with :meth:`from_predictions` or :meth:`from_estimator`.
    The constructor only stores its arguments (as scikit-learn's Displays do); :meth:`plot`
    checks them before drawing and refuses bad data (lengths that disagree, NaN, unsorted
    edges, levels outside (0, 1), ...) with a ``ValueError`` naming the parameter.

    Parameters
    ----------
    expected : ndarray of shape (n_quantiles,)
        Expected proportions (x-axis).
    observed : ndarray of shape (n_quantiles,)
        Observed proportions (y-axis).
    miscalibration_area : float
        The area between the curve and the diagonal.
    proportion : {"quantile", "interval"}, default="quantile"
        Which proportions the curve shows.
    band_low, band_high : ndarray of shape (n_quantiles,), default=None
        The band of a calibrated model's curve (None: no band).
    band : {"pointwise", "simultaneous"} or None, default=None
        How the band was made.
    confidence_level : float, default=0.95
        Its coverage.
    name : str, default=None
        Legend name of the model.

    Attributes
    ----------
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        Its figure.
    line_ : matplotlib Line2D
        The curve.
    fill_ : matplotlib PolyCollection or None
        The shaded area (None with ``fill=False``).
    band_ : matplotlib PolyCollection or None
        The band (shared by models with the same band on one axis).
    diagonal_ : matplotlib Line2D
        The diagonal (one per axis).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Normal
    >>> from skcalib.plotting import QuantileCalibrationDisplay
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=500)
    >>> display = QuantileCalibrationDisplay.from_predictions(
    ...     y, Normal(np.zeros(500), np.full(500, 2.0)), name="too wide")
    >>> display.line_.get_label()
    'too wide (miscalibration area 0.101)'
    """

    def __init__(self, expected, observed, miscalibration_area, *, proportion="quantile",
                 band_low=None, band_high=None, band=None, confidence_level=0.95, name=None):
        self.expected = expected
        self.observed = observed
        self.miscalibration_area = miscalibration_area
        self.proportion = proportion
        self.band_low = band_low
        self.band_high = band_high
        self.band = band
        self.confidence_level = confidence_level
        self.name = name

    def plot(self, ax=None, *, name=None, fill=True, line_kwargs=None):
        """Draw the curve, the diagonal and the shaded area on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None. Pass the same axes for several models.
        name : str, default=None
            Legend name; ``self.name`` if None.
        fill : bool, default=True
            Shade the region between the curve and the diagonal.
        line_kwargs : dict, default=None
            Passed to ``ax.plot`` for the curve.

        Returns
        -------
        QuantileCalibrationDisplay
            ``self``, with ``ax_``, ``figure_``, ``line_``, ``fill_``, ``band_`` and
            ``diagonal_``.
        """
        name = check_name(name)
        check_bool(fill, "fill")
        line_kwargs = check_kwargs(line_kwargs, "line_kwargs")
        expected = check_display_array(self.expected, "expected", min_size=1, low=0.0,
                                       high=1.0, increasing=True)
        size_of = "one per entry of expected"
        observed = check_display_array(self.observed, "observed", size=expected.size,
                                       size_of=size_of, low=0.0, high=1.0)
        area = check_display_number(self.miscalibration_area, "miscalibration_area", low=0.0)
        check_display_option(self.proportion, "proportion", ("quantile", "interval"))
        band_low, band_high = check_band_arrays(self, expected.size, size_of, high=1.0)
        check_name(self.name)
        _, ax = get_axes(ax)
        name = name if name is not None else self.name
        area = f"miscalibration area {area:.3f}"
        # a long name gets the area on a second line (one line would spill out of the axes)
        sep = "\n" if name is not None and len(name) + len(area) > 45 else " "
        kwargs = {"label": area if name is None else f"{name}{sep}({area})", "linewidth": 1.5}
        self.diagonal_ = diagonal(ax)
        self.band_ = None
        if band_low is not None:
            kind = "simultaneous" if self.band == "simultaneous" else "pointwise"

            def draw():
                return ax.fill_between(
                    expected, band_low, band_high, color="grey", alpha=0.2,
                    linewidth=0, label=f"{self.confidence_level:.0%} {kind} band if calibrated")

            self.band_ = shared_band(ax, _CURVE_BAND_GID, (expected, band_low, band_high),
                                      draw)
        (self.line_,) = draw_with(ax.plot, (expected, observed), kwargs, line_kwargs,
                                  "line_kwargs")
        self.fill_ = None
        if fill:
            self.fill_ = ax.fill_between(expected, expected, observed,
                                         color=self.line_.get_color(), alpha=0.2, linewidth=0)
        xlabel, ylabel = _PROPORTION_LABELS.get(self.proportion, _PROPORTION_LABELS["quantile"])
        ax.set_xlim(0.0, 1.0)
        ax.set_ylim(0.0, 1.0)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        finish_legend(ax, loc="best", fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_pred, *, quantiles=None, proportion="quantile",
                         band=None, confidence_level=0.95, sample_weight=None, name=None,
                         ax=None, fill=True, line_kwargs=None):
        """The quantile-calibration curve of predictions, with its miscalibration area.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Real targets.
        y_pred : Distribution or array-like of shape (n_samples, 2)
            Univariate predictive distributions (Normal, Laplace, a Mixture of them,
            Recalibrated, draws or ensemble members as ``Empirical``, predicted quantiles as
            ``Quantiles``, ...), or predicted means and standard deviations (read as Normal).
        quantiles : None, int or array-like of shape (n_quantiles,), default=None
            The expected proportions drawn: None for ``np.linspace(0, 1, 101)``, else as in
            :func:`skcalib.quantile_calibration_curve` (an integer ``m`` for
            ``np.linspace(0.01, 0.99, m)``, or increasing probabilities in ``[0, 1]``).
        proportion : {"quantile", "interval"}, default="quantile"
            Quantile (one-sided) or central-interval proportions, for the curve and the area.
        band : {"pointwise", "simultaneous"} or None, default=None
            Draw where a calibrated model's curve falls: binomial quantiles per point, or the
            Dvoretzky--Kiefer--Wolfowitz band for the whole curve (see
            :func:`quantile_curve_band`); None draws none.
        confidence_level : float, default=0.95
            Coverage of the band, in (0, 1).
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the proportions; for the band, frequency weights (the total weight is
            the number of trials).
        name : str, default=None
            Legend name of the model.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None.
        fill : bool, default=True
            Shade the region between the curve and the diagonal.
        line_kwargs : dict, default=None
            Passed to ``ax.plot`` for the curve.

        Returns
        -------
        QuantileCalibrationDisplay
        """
        grid, confidence_level = check_quantile_params(quantiles, proportion, band,
                                                        confidence_level, name, ax, fill,
                                                        line_kwargs)
        expected, observed, area, low, high = quantile_curve_data(
            y_true, y_pred, grid, proportion=proportion, band=band,
            confidence_level=confidence_level, sample_weight=sample_weight)
        display = cls(expected, observed, area, proportion=proportion, band_low=low,
                      band_high=high, band=band, confidence_level=confidence_level, name=name)
        return display.plot(ax=ax, fill=fill, line_kwargs=line_kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, quantiles=None, proportion="quantile",
                       band=None, confidence_level=0.95, sample_weight=None, name=None, ax=None,
                       fill=True, line_kwargs=None):
        """The quantile-calibration curve of a fitted regressor on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted regressor
            With ``predict(X, return_std=True)`` or ``predict_distribution(X)``.
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Real targets.
        quantiles, proportion, band, confidence_level, sample_weight
            As in :meth:`from_predictions`.
        name : str, default=None
            Legend name; the estimator's class name if None.
        ax, fill, line_kwargs
            As in :meth:`from_predictions`.

        Returns
        -------
        QuantileCalibrationDisplay

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.linear_model import BayesianRidge
        >>> from skcalib.plotting import QuantileCalibrationDisplay
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = BayesianRidge().fit(X[:300], y[:300])
        >>> display = QuantileCalibrationDisplay.from_estimator(model, X[300:], y[300:],
        ...                                                     proportion="interval")
        >>> display.line_.get_label()
        'BayesianRidge (miscalibration area 0.034)'
        """
        name = estimator_name(estimator, name)
        check_quantile_params(quantiles, proportion, band, confidence_level, name, ax, fill,
                               line_kwargs)
        dist = regression_prediction(estimator, X, y)
        with user_names(ESTIMATOR_NAMES):
            return cls.from_predictions(y, dist, quantiles=quantiles, proportion=proportion,
                                        band=band, confidence_level=confidence_level,
                                        sample_weight=sample_weight, name=name, ax=ax, fill=fill,
                                        line_kwargs=line_kwargs)
