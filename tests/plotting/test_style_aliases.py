"""The Displays take matplotlib's aliases (``lw``, ``ls``, ``c``, ...) safely.

A Display merges its default style with the user's keyword arguments through one function,
:func:`skcalib.plotting._base.merge_style`: a user's alias replaces the default's long name and a
long name replaces a default alias, so that ``ReliabilityDisplay.from_predictions(y, p, lw=2)``
draws a line 2 points wide (it raised matplotlib's ``Got both 'linewidth' and 'lw'``), and a user
who gives an alias *and* its long name gets a ``TypeError`` naming both.

The helper is tested on every alias, both ways; every public Display of
:mod:`skcalib.plotting` (enumerated, so that a new Display must be added to ``DRAW``) draws with
``lw=``, ``ls=`` and ``c=`` and shows the requested width, style and colour; and every keyword
dict of every Display takes the aliases.
"""

import inspect
import warnings

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.artist import ArtistInspector  # noqa: E402
from matplotlib.collections import Collection, LineCollection  # noqa: E402
from matplotlib.colors import same_color, to_rgb, to_rgba  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from skcalib import plotting  # noqa: E402
from skcalib.distributions import Normal  # noqa: E402
from skcalib.plotting._base import (  # noqa: E402
    STYLE_ALIASES,
    draw_with,
    merge_style,
    style_properties,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------------------------
# the helper


def test_the_alias_table_is_matplotlibs():
    # every short alias matplotlib defines for lines, patches and collections, and no other
    # (the collections' plurals -- linewidths, ... -- and dashes are parameters of their own)
    expected = {}
    for cls in (Line2D, Patch, Collection):
        for long, aliases in ArtistInspector(cls).aliasd.items():
            for alias in aliases:
                if not alias.startswith(long) and alias not in ("dashes", "transOffset"):
                    expected[alias] = long
    assert STYLE_ALIASES == expected
    for alias in ("lw", "ls", "c", "ec", "fc", "mec", "mfc", "ms", "aa"):
        assert alias in STYLE_ALIASES


@pytest.mark.parametrize("alias", sorted(STYLE_ALIASES))
def test_a_user_alias_replaces_the_default_long_name(alias):
    long = STYLE_ALIASES[alias]
    defaults = {long: "default", "zorder": 3}
    user = {alias: "user"}
    assert merge_style(defaults, user) == {"zorder": 3, long: "user"}
    assert defaults == {long: "default", "zorder": 3} and user == {alias: "user"}  # unchanged


@pytest.mark.parametrize("alias", sorted(STYLE_ALIASES))
def test_a_user_long_name_replaces_the_default_alias(alias):
    long = STYLE_ALIASES[alias]
    assert merge_style({alias: "default", "zorder": 3}, {long: "user"}) == \
        {"zorder": 3, long: "user"}


@pytest.mark.parametrize("alias", sorted(STYLE_ALIASES))
def test_the_same_spelling_replaces_the_default(alias):
    long = STYLE_ALIASES[alias]
    assert merge_style({long: 1}, {long: 2}) == {long: 2}
    assert merge_style({alias: 1}, {alias: 2}) == {long: 2}


@pytest.mark.parametrize("alias", sorted(STYLE_ALIASES))
@pytest.mark.parametrize("alias_first", [True, False])
def test_an_alias_and_its_long_name_together_are_refused_naming_both(alias, alias_first):
    long = STYLE_ALIASES[alias]
    user = {alias: 1, long: 2} if alias_first else {long: 2, alias: 1}
    first, second = (alias, long) if alias_first else (long, alias)
    with pytest.raises(TypeError, match=rf"^band_kwargs has both '{first}' and '{second}', "
                                        rf"which are the same matplotlib property \({long}\)"):
        merge_style({}, user, "band_kwargs")


def test_other_keys_pass_through_and_as_given_keeps_the_spelling():
    assert merge_style({"label": "a", "alpha": 0.5}, {"label": "b", "gid": "g"}) == \
        {"label": "b", "alpha": 0.5, "gid": "g"}
    # scatter's c may be values to colour-map: kept as c, and it replaces the default colour
    assert merge_style({"color": "C0", "s": 8}, {"c": [1, 2]}, as_given=("c",)) == \
        {"s": 8, "c": [1, 2]}
    assert style_properties({"lw": 1, "fc": "r", "alpha": 1}) == \
        {"linewidth", "facecolor", "alpha"}


def test_draw_with_names_the_users_key_when_matplotlib_refuses_its_long_name():
    # a Patch has no marker: mfcalt (passed as markerfacecoloralt) is named as the user wrote it
    fig, ax = plt.subplots()
    with pytest.raises(TypeError, match=r"^hist_kwargs has a key .*'mfcalt'"):
        draw_with(ax.stairs, ([1.0], [0.0, 1.0]), {"linewidth": 1}, {"mfcalt": "red"},
                  "hist_kwargs")
    with pytest.raises(TypeError, match="^hist_kwargs has both 'lw' and 'linewidth'"):
        draw_with(ax.stairs, ([1.0], [0.0, 1.0]), {}, {"lw": 1, "linewidth": 2},
                  "hist_kwargs")


# --------------------------------------------------------------------------------------------
# every Display


def _binary(n=300, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    return (rng.random(n) < p).astype(int), p


def _regression(n=100, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), Normal(np.zeros(n), np.ones(n))


def _reliability(style):
    y, p = _binary()
    return plotting.ReliabilityDisplay.from_predictions(y, p, **style).line_


def _smooth(style):
    y, p = _binary()
    return plotting.SmoothReliabilityDisplay.from_predictions(y, p, **style).line_


def _pit(style):
    y, d = _regression()
    return plotting.PITHistogramDisplay.from_predictions(y, d, histtype="step",
                                                         hist_kwargs=style).bars_


def _quantile(style):
    y, d = _regression()
    return plotting.QuantileCalibrationDisplay.from_predictions(y, d, line_kwargs=style).line_


def _coverage(style):
    y, d = _regression()
    return plotting.IntervalCoverageDisplay.from_predictions(y, d,
                                                             errorbar_kwargs=style).line_


def _local(style):
    _, p = _binary()
    return plotting.LocalCalibrationBiasDisplay(p, p - 0.5).plot(line_kwargs=style).lines_[0]


#: Display -> how to draw it with a style and get the artist that style applies to.
DRAW = {
    "ReliabilityDisplay": _reliability,
    "SmoothReliabilityDisplay": _smooth,
    "PITHistogramDisplay": _pit,
    "QuantileCalibrationDisplay": _quantile,
    "IntervalCoverageDisplay": _coverage,
    "LocalCalibrationBiasDisplay": _local,
}

DISPLAYS = sorted(name for name in plotting.__all__
                  if inspect.isclass(getattr(plotting, name)) and name.endswith("Display"))


def test_every_public_display_is_covered():
    assert DISPLAYS, "no Display found in skcalib.plotting"
    assert sorted(DRAW) == DISPLAYS, "add the new Display to DRAW"


def _linestyle(artist, ls, lw):
    """``artist``'s line style is ``ls`` (a collection stores dashes scaled by its width)."""
    if isinstance(artist, Collection):
        return artist.get_linestyle() == LineCollection([], linestyle=ls,
                                                        linewidth=lw).get_linestyle()
    return artist.get_linestyle() == ls


def _color(artist):
    """The colour ``c=`` sets: a line's colour, a bar's face, a collection's or outline's edge."""
    if isinstance(artist, Line2D):
        return artist.get_color()
    if isinstance(artist, Patch) and artist.get_fill():
        return artist.get_facecolor()
    return artist.get_edgecolor()


def _is_color(artist, color):
    """``artist``'s colour is ``color`` (its alpha aside: the Displays make bars translucent)."""
    return same_color(to_rgb(np.atleast_2d(to_rgba(_color(artist)))[0]), color)


@pytest.mark.parametrize("name", DISPLAYS)
def test_each_display_draws_with_lw_ls_and_c(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning either
        artist = DRAW[name]({"lw": 3.5, "ls": "--", "c": "tab:red"})
    assert float(np.ravel(artist.get_linewidth())[0]) == 3.5
    assert _linestyle(artist, "--", 3.5)
    assert _is_color(artist, "tab:red")


@pytest.mark.parametrize("name", DISPLAYS)
def test_each_display_takes_the_long_names_too_and_refuses_both(name):
    artist = DRAW[name]({"linewidth": 2.5, "linestyle": ":", "color": "tab:green"})
    assert float(np.ravel(artist.get_linewidth())[0]) == 2.5
    assert _linestyle(artist, ":", 2.5)
    assert _is_color(artist, "tab:green")
    with pytest.raises(TypeError, match="has both 'lw' and 'linewidth'"):
        DRAW[name]({"lw": 1, "linewidth": 2})


# --------------------------------------------------------------------------------------------
# every keyword dict of every Display


def _kwargs_calls():
    y, p = _binary()
    yr, d = _regression()
    R, S = plotting.ReliabilityDisplay, plotting.SmoothReliabilityDisplay
    return {
        "Reliability bar_kwargs": lambda kw: R.from_predictions(y, p, bar_kwargs=kw).bars_[0],
        "Reliability band_kwargs": lambda kw: R.from_predictions(y, p, band_kwargs=kw).band_,
        "Reliability consistency band_kwargs": lambda kw: R.from_predictions(
            y, p, band="consistency", n_resamples=20, random_state=0, band_kwargs=kw).band_,
        "Smooth band_kwargs": lambda kw: S.from_predictions(
            y, p, band="consistency", n_resamples=10, random_state=0, band_kwargs=kw).band_,
        "PIT bar hist_kwargs": lambda kw: plotting.PITHistogramDisplay.from_predictions(
            yr, d, hist_kwargs=kw).bars_,
        "Local scatter_kwargs": lambda kw: plotting.LocalCalibrationBiasDisplay(
            p, p - 0.5).plot(scatter_kwargs=kw).scatters_[0],
    }


@pytest.mark.parametrize("which", sorted(_kwargs_calls()))
def test_every_keyword_dict_takes_the_aliases(which):
    artist = _kwargs_calls()[which]({"lw": 2.5, "ls": "--", "c": "tab:red", "alpha": 1.0})
    assert float(np.ravel(artist.get_linewidth())[0]) == 2.5
    assert _linestyle(artist, "--", 2.5)
    assert _is_color(artist, "tab:red")


def test_patch_aliases_fc_and_ec():
    artist = _kwargs_calls()["PIT bar hist_kwargs"]({"fc": "tab:blue", "ec": "tab:orange"})
    # given by alias, the colours are the user's (not made translucent or opaque by the Display)
    assert same_color(artist.get_facecolor(), "tab:blue")
    assert same_color(artist.get_edgecolor(), "tab:orange")
    bars = _kwargs_calls()["Reliability bar_kwargs"]({"fc": "tab:blue", "ec": "tab:orange"})
    assert same_color(to_rgb(bars.get_facecolor()), "tab:blue")  # translucent by default
    assert same_color(to_rgb(bars.get_edgecolor()), "tab:orange")


def test_marker_aliases_on_a_line():
    y, p = _binary()
    line = plotting.ReliabilityDisplay.from_predictions(y, p, ms=9, mec="k", mfc="w",
                                                        mew=2).line_
    assert line.get_markersize() == 9 and line.get_markeredgewidth() == 2
    assert same_color(line.get_markeredgecolor(), "k")
    assert same_color(line.get_markerfacecolor(), "w")


def test_the_faint_part_of_the_smooth_curve_keeps_the_style_and_stays_faint():
    # few predictions above 0.8: the curve is drawn faintly there
    rng = np.random.default_rng(1)
    p = np.r_[rng.uniform(0.0, 0.6, 400), [0.95, 0.97]]
    y = (rng.random(p.size) < p).astype(int)
    d = plotting.SmoothReliabilityDisplay.from_predictions(y, p, lw=4, ls="--", c="tab:red")
    assert d.unsupported_ is not None
    assert d.unsupported_.get_linewidth() == 1 and d.unsupported_.get_linestyle() == "--"
    assert same_color(d.unsupported_.get_color(), "tab:red")
    assert d.unsupported_.get_alpha() == 0.3


def test_scatter_c_may_still_be_values_to_colour_map():
    _, p = _binary(50)
    d = plotting.LocalCalibrationBiasDisplay(p, p - 0.5).plot(
        trend=False, scatter_kwargs={"c": p, "cmap": "viridis"})
    assert np.array_equal(d.scatters_[0].get_array(), p)
