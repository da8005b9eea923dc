"""The Displays' keyword dicts passed to matplotlib: unknown keys, non-dicts and bad values are
named; user keys override the defaults; band keywords without a band warn."""

import warnings

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skcalib.distributions import Normal  # noqa: E402
from skcalib.plotting import (  # noqa: E402
    IntervalCoverageDisplay,
    LocalCalibrationBiasDisplay,
    PITHistogramDisplay,
    QuantileCalibrationDisplay,
    ReliabilityDisplay,
    SmoothReliabilityDisplay,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _binary(n=200, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    return (rng.random(n) < p).astype(int), p


def _regression(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n), Normal(np.zeros(n), np.ones(n))


# --------------------------------------------------------------------------------------------
# A7: the keyword dicts passed to matplotlib


def _kwargs_calls():
    y, p = _binary()
    yr, d = _regression()
    return [
        ("bar_kwargs", lambda kw: ReliabilityDisplay.from_predictions(y, p, bar_kwargs=kw)),
        ("band_kwargs", lambda kw: ReliabilityDisplay.from_predictions(y, p, band_kwargs=kw)),
        ("kwargs", lambda kw: ReliabilityDisplay.from_predictions(y, p, **kw)),
        ("band_kwargs", lambda kw: SmoothReliabilityDisplay.from_predictions(
            y, p, band="consistency", n_resamples=10, random_state=0, band_kwargs=kw)),
        ("kwargs", lambda kw: SmoothReliabilityDisplay.from_predictions(y, p, **kw)),
        ("hist_kwargs", lambda kw: PITHistogramDisplay.from_predictions(yr, d, hist_kwargs=kw)),
        ("line_kwargs", lambda kw: QuantileCalibrationDisplay.from_predictions(
            yr, d, line_kwargs=kw)),
        ("errorbar_kwargs", lambda kw: IntervalCoverageDisplay.from_predictions(
            yr, d, errorbar_kwargs=kw)),
        ("scatter_kwargs", lambda kw: LocalCalibrationBiasDisplay(p, p - 0.5).plot(
            scatter_kwargs=kw)),
        ("line_kwargs", lambda kw: LocalCalibrationBiasDisplay(p, p - 0.5).plot(
            line_kwargs=kw)),
    ]


@pytest.mark.parametrize("index", range(10))
def test_unknown_matplotlib_key_is_a_type_error_naming_the_argument_and_key(index):
    name, call = _kwargs_calls()[index]
    with pytest.raises(TypeError, match=rf"^{name} has a key .*'bogus'"):
        call({"bogus": 1})


@pytest.mark.parametrize("index", range(10))
def test_non_dict_kwargs_are_refused_naming_the_argument(index):
    name, call = _kwargs_calls()[index]
    if name == "kwargs":
        pytest.skip("**kwargs is always a dict")
    for bad in ("red", [("color", "red")]):
        with pytest.raises(TypeError, match=rf"^{name} must be a dict"):
            call(bad)


def test_bad_matplotlib_value_names_the_argument():
    y, p = _binary()
    with pytest.raises(ValueError, match="^bar_kwargs: .*color"):
        ReliabilityDisplay.from_predictions(y, p, bar_kwargs={"color": "no-such-colour"})


def test_user_keys_override_the_displays_defaults_without_a_clash():
    y, p = _binary()
    d = ReliabilityDisplay.from_predictions(y, p, label="mine", bar_kwargs={"width": 0.01})
    assert d.line_.get_label() == "mine"
    assert all(abs(bar.get_width() - 0.01) < 1e-12 for bar in d.bars_)
    yr, dist = _regression()
    h = PITHistogramDisplay.from_predictions(yr, dist, hist_kwargs={"label": "pit"})
    assert h.bars_.get_label() == "pit"


def test_band_kwargs_without_a_band_warn():
    # refusing would break a call that switches band off and keeps its styling; a silent
    # no-op hides a mistake: a UserWarning naming band_kwargs and the reason
    y, p = _binary()
    with pytest.warns(UserWarning,
                      match=r"band_kwargs is ignored: no band is drawn \(band=None\)"):
        SmoothReliabilityDisplay.from_predictions(y, p, band_kwargs={"color": "red"})
    with pytest.warns(UserWarning, match="band_kwargs is ignored"):
        ReliabilityDisplay.from_predictions(y, p, band=None, band_kwargs={"color": "red"})
    with pytest.warns(UserWarning, match=r"bar_kwargs is ignored.*show_counts=False"):
        ReliabilityDisplay.from_predictions(y, p, show_counts=False, bar_kwargs={"alpha": 1})
    with pytest.warns(UserWarning, match=r"line_kwargs is ignored.*trend=False"):
        LocalCalibrationBiasDisplay(p, p - 0.5).plot(trend=False, line_kwargs={"lw": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SmoothReliabilityDisplay.from_predictions(y, p, band_kwargs={})
        SmoothReliabilityDisplay.from_predictions(y, p)
