"""The PIT histogram of a regressor's predictive distributions (:class:`PITHistogramDisplay`)."""

import numpy as np

from .._validation import check_option
from ._base import (check_display_array, check_display_number, check_kwargs, check_name,
                    draw_once, draw_with, estimator_name, get_axes, style_properties, user_names)
from ._regression import (ESTIMATOR_NAMES, check_band_arrays, check_pit_params, finish_legend,
                          pit_histogram_data, regression_prediction, shared_band)

__all__ = ["PITHistogramDisplay"]

_UNIFORM_GID = "skcalib-uniform-reference"
_BAND_GID = "skcalib-pit-band"


class PITHistogramDisplay:
    """Histogram of the probability integral transform (PIT) of a regressor's predictions.

    The PIT values ``F_i(y_i)`` (:func:`skcalib.pit`) of a calibrated model are uniform on
    ``[0, 1]`` (Dawid 1984): the histogram (as a density) is flat at 1, drawn as a dashed line.
    A hump in the middle means too wide predictive distributions, a U too narrow ones, a slope
    a biased mean. The grey band holds the bin heights that uniform PIT values produce with the
    given probability (binomial quantiles of the bin counts; see :func:`pit_histogram_band`), so
    a bar outside it is more than sampling noise. Test the uniformity formally with
    :func:`skcalib.stats.pit_test`.

    Build it with :meth:`from_predictions` or :meth:`from_estimator`.
    The constructor only stores its arguments (as scikit-learn's Displays do); :meth:`plot`
    checks them before drawing and refuses bad data (lengths that disagree, NaN, unsorted
    edges, levels outside (0, 1), ...) with a ``ValueError`` naming the parameter.

    Parameters
    ----------
    edges : ndarray of shape (n_bins + 1,)
        Bin edges on ``[0, 1]``.
    heights : ndarray of shape (n_bins,)
        Density of each bin: its (weighted) fraction of the PIT values divided by its width.
    n_trials : int or float
        Number of PIT values (the total weight with ``sample_weight``).
    band_low, band_high : ndarray of shape (n_bins,), default=None
        The band under uniformity (None: no band).
    band : {"pointwise", "simultaneous"} or None, default=None
        How the band was made.
    confidence_level : float, default=0.95
        Its coverage.
    pit_values : ndarray of shape (n_samples,), default=None
        The PIT values themselves (kept for inspection).
    name : str, default=None
        Legend name of the model.

    Attributes
    ----------
    ax_ : matplotlib Axes
        The axes drawn on.
    figure_ : matplotlib Figure
        Its figure.
    bars_ : matplotlib StepPatch
        The histogram (``bars_.get_data().values`` are the heights, ``.edges`` the edges).
    band_ : matplotlib PolyCollection or None
        The band (shared by models with the same band on one axis).
    line_ : matplotlib Line2D
        The uniform reference line at density 1 (one per axis).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.distributions import Normal
    >>> from skcalib.plotting import PITHistogramDisplay
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=500)
    >>> display = PITHistogramDisplay.from_predictions(y, Normal(np.zeros(500), np.ones(500)),
    ...                                                bins=10, name="N(0, 1)")
    >>> display.heights.shape, round(float(display.heights @ np.diff(display.edges)), 12)
    ((10,), 1.0)
    >>> bool(np.all((display.band_low <= display.heights) & (display.heights <= display.band_high)))
    True
    """

    def __init__(self, edges, heights, n_trials, *, band_low=None, band_high=None, band=None,
                 confidence_level=0.95, pit_values=None, name=None):
        self.edges = edges
        self.heights = heights
        self.n_trials = n_trials
        self.band_low = band_low
        self.band_high = band_high
        self.band = band
        self.confidence_level = confidence_level
        self.pit_values = pit_values
        self.name = name

    def plot(self, ax=None, *, name=None, histtype="bar", hist_kwargs=None):
        """Draw the histogram, the uniform reference line and the band on ``ax``.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None. Pass the same axes for several models.
        name : str, default=None
            Legend name; ``self.name`` if None.
        histtype : {"bar", "step"}, default="bar"
            Filled, translucent bars or an outline only (clearer for several models).
        hist_kwargs : dict, default=None
            Passed to ``ax.stairs`` (e.g. ``color``).

        Returns
        -------
        PITHistogramDisplay
            ``self``, with ``ax_``, ``figure_``, ``bars_``, ``band_`` and ``line_``.
        """
        name = check_name(name)
        check_option(histtype, "histtype", ("bar", "step"))
        hist_kwargs = check_kwargs(hist_kwargs, "hist_kwargs")
        edges = check_display_array(self.edges, "edges", min_size=2, low=0.0, high=1.0,
                                    increasing=True)
        n_bins = edges.size - 1
        heights = check_display_array(self.heights, "heights", size=n_bins,
                                      size_of="one per bin, one fewer than edges", low=0.0)
        check_display_number(self.n_trials, "n_trials", low=0.0, low_open=True, allow_inf=True)
        band_low, band_high = check_band_arrays(self, n_bins, "one per bin")
        check_name(self.name)
        _, ax = get_axes(ax)
        from matplotlib.colors import to_rgba

        label = name if name is not None else self.name
        if band_low is not None:
            lo = np.append(band_low, band_low[-1])
            hi = np.append(band_high, band_high[-1])
            kind = "simultaneous" if self.band == "simultaneous" else "pointwise"

            def draw():
                # hatched, not filled, and above the bars: a filled band under translucent
                # bars mixes into two shades per bar
                return ax.fill_between(
                    edges, lo, hi, step="post", facecolor="none", edgecolor="0.45",
                    hatch="////", linewidth=0, zorder=2.5,
                    label=f"{self.confidence_level:.0%} {kind} band if uniform")

            self.band_ = shared_band(ax, _BAND_GID, (edges, lo, hi), draw)
        else:
            self.band_ = None
        def uniform():
            return ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="Uniform")

        self.line_ = draw_once(ax, _UNIFORM_GID, uniform)
        fill = histtype == "bar"
        self.bars_ = draw_with(ax.stairs, (heights, edges),
                               {"linewidth": 1.5, "label": label, "fill": fill}, hist_kwargs,
                               "hist_kwargs")
        if fill:
            # the colour the cycle (or ``color``) gave: translucent inside, opaque outline
            color = self.bars_.get_facecolor()
            given = style_properties(hist_kwargs)  # an alias (fc=, ec=) counts as given
            if "facecolor" not in given and "alpha" not in given:
                self.bars_.set_facecolor(to_rgba(color, 0.35))
            if "edgecolor" not in given:
                self.bars_.set_edgecolor(to_rgba(color, 1.0))
        ax.set_xlim(0.0, 1.0)  # the y-axis autoscales (the bars' baseline keeps it at 0)
        ax.set_xlabel("PIT value")
        ax.set_ylabel("Density")
        finish_legend(ax, loc="best", fontsize="small")
        self.ax_ = ax
        self.figure_ = ax.figure
        return self

    @classmethod
    def from_predictions(cls, y_true, y_pred, *, bins=20, band="pointwise",
                         confidence_level=0.95, sample_weight=None, name=None, ax=None,
                         histtype="bar", hist_kwargs=None, random_state=None, ranks=False):
        """Histogram of the PIT values of predictions, with a band under uniformity.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
            Real targets.
        y_pred : Distribution or array-like of shape (n_samples, 2)
            Univariate predictive distributions (Normal, Laplace, a Mixture of them,
            Recalibrated, draws or ensemble members as ``Empirical``, predicted quantiles as
            ``Quantiles``, ...), or predicted means and standard deviations (read as Normal).
        bins : int or array-like of shape (n_bins + 1,), default=20
            Number of equal-width bins on ``[0, 1]``, or edges strictly increasing from 0 to 1.
            Bins are half-open ``[a, b)``, the last one closed.
        band : {"pointwise", "simultaneous"} or None, default="pointwise"
            The band of the bin heights under uniform PIT values: binomial quantiles per bin, or
            with a Bonferroni correction over the bins (see :func:`pit_histogram_band`); None
            draws none.
        confidence_level : float, default=0.95
            Coverage of the band, in (0, 1).
        sample_weight : array-like of shape (n_samples,), default=None
            Frequency weights: the heights are weighted fractions, and the band uses the total
            weight (rounded, at least 1) as the number of trials.
        name : str, default=None
            Legend name of the model.
        ax : matplotlib Axes, default=None
            Axes to draw on; a new figure if None.
        histtype : {"bar", "step"}, default="bar"
            Filled bars or an outline.
        hist_kwargs : dict, default=None
            Passed to ``ax.stairs``.
        random_state : None, int, Generator or RandomState, default=None
            Seed of the randomised PIT of targets that fall on an atom of their prediction (a
            draw of an ``Empirical``; see :func:`skcalib.pit`); continuous predictions use no
            random numbers.
        ranks : bool, default=False
            Draw the histogram of the randomised verification ranks of the targets among
            equal-weight draws (the rank histogram of ensembles; see :func:`skcalib.pit`).

        Returns
        -------
        PITHistogramDisplay
        """
        edges, confidence_level = check_pit_params(bins, band, confidence_level, name, ax,
                                                    histtype, hist_kwargs)
        heights, n_trials, low, high, u = pit_histogram_data(
            y_true, y_pred, edges, band=band, confidence_level=confidence_level,
            sample_weight=sample_weight, random_state=random_state, ranks=ranks)
        display = cls(edges, heights, n_trials, band_low=low, band_high=high, band=band,
                      confidence_level=confidence_level, pit_values=u, name=name)
        return display.plot(ax=ax, histtype=histtype, hist_kwargs=hist_kwargs)

    @classmethod
    def from_estimator(cls, estimator, X, y, *, bins=20, band="pointwise",
                       confidence_level=0.95, sample_weight=None, name=None, ax=None,
                       histtype="bar", hist_kwargs=None, random_state=None, ranks=False):
        """PIT histogram of a fitted regressor's predictive distributions on ``(X, y)``.

        Parameters
        ----------
        estimator : fitted regressor
            With ``predict(X, return_std=True)`` (e.g. ``BayesianRidge``,
            ``GaussianProcessRegressor``) or ``predict_distribution(X)``.
        X : array-like of shape (n_samples, n_features)
            Features.
        y : array-like of shape (n_samples,)
            Real targets.
        bins, band, confidence_level, sample_weight
            As in :meth:`from_predictions`.
        name : str, default=None
            Legend name; the estimator's class name if None.
        ax, histtype, hist_kwargs, random_state, ranks
            As in :meth:`from_predictions`.

        Returns
        -------
        PITHistogramDisplay

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.linear_model import BayesianRidge
        >>> from skcalib.plotting import PITHistogramDisplay
        >>> X, y = load_diabetes(return_X_y=True)
        >>> model = BayesianRidge().fit(X[:300], y[:300])
        >>> display = PITHistogramDisplay.from_estimator(model, X[300:], y[300:], bins=10)
        >>> display.bars_.get_label(), display.n_trials
        ('BayesianRidge', 142)
        """
        name = estimator_name(estimator, name)
        check_pit_params(bins, band, confidence_level, name, ax, histtype, hist_kwargs)
        dist = regression_prediction(estimator, X, y)
        with user_names(ESTIMATOR_NAMES):
            return cls.from_predictions(y, dist, bins=bins, band=band,
                                        confidence_level=confidence_level,
                                        sample_weight=sample_weight, name=name, ax=ax,
                                        histtype=histtype, hist_kwargs=hist_kwargs,
                                        random_state=random_state, ranks=ranks)
