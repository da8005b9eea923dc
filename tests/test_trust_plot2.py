"""Issue 21 (sweep A7, A10, A11; docs): the Displays' keyword dicts, stored data and
``from_estimator`` errors name the caller's argument; the docs' command lines work as written
after ``make demo``; the docs spell the ``mode`` value ``top_label`` as ``mode=`` accepts it."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.linear_model import BayesianRidge, LogisticRegression  # noqa: E402

from skcalib import reliability_curve, smooth_reliability_curve  # noqa: E402
from skcalib.distributions import Normal  # noqa: E402
from skcalib.plotting import (  # noqa: E402
    IntervalCoverageDisplay,
    LocalCalibrationBiasDisplay,
    PITHistogramDisplay,
    QuantileCalibrationDisplay,
    ReliabilityDisplay,
    SmoothReliabilityDisplay,
)

DOCS = Path(__file__).resolve().parents[1] / "docs"


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


# --------------------------------------------------------------------------------------------
# A11: the stored data are checked before anything is drawn


def _reliability():
    y, p = _binary()
    return reliability_curve(y, p, n_bins=5)


BAD_DATA = [
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 6), np.ones(7), 30),
     r"^heights must have 5 entries"),
    (lambda: PITHistogramDisplay(np.array([0, .5, .2, .7, .9, 1]), np.ones(5), 30),
     r"^edges must be strictly increasing"),
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 6), -np.ones(5), 30), r"^heights .* >= 0"),
    (lambda: PITHistogramDisplay(np.linspace(0, 2, 6), np.ones(5), 30), r"^edges .*\[0, 1\]"),
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 6), np.ones(5), -3), r"^n_trials"),
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 3), np.ones(2), 30, band_low=np.ones(3),
                                 band_high=np.ones(3)), r"^band_low must have 2 entries"),
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 3), np.ones(2), 30, band_low=np.ones(2)),
     r"band_low and band_high must be given together"),
    (lambda: PITHistogramDisplay(np.linspace(0, 1, 3), ["1", "1"], 30), r"^heights must contain"),
    (lambda: IntervalCoverageDisplay(np.array([.5, .9]), np.ones(5), np.array([.3, .7]),
                                     np.array([.5, .9])), r"^coverage must have 2 entries"),
    (lambda: IntervalCoverageDisplay(np.array([.5]), np.array([.5, .6]), np.array([.3, .7]),
                                     np.array([.5, .9])), r"^coverage must have 1 entry "),
    (lambda: IntervalCoverageDisplay(np.array([.5, 1.5]), np.array([.5, .8]),
                                     np.array([.3, .7]), np.array([.5, .9])),
     r"^levels .* in \(0, 1\)"),
    (lambda: IntervalCoverageDisplay(np.array([.5, .9]), np.array([np.nan, .8]),
                                     np.array([.3, .7]), np.array([.5, .9])),
     r"^coverage must be finite"),
    (lambda: IntervalCoverageDisplay(np.array([.5, .9]), np.array([.5, .8]),
                                     np.array([.6, .7]), np.array([.5, .9])),
     r"^ci_low must not exceed ci_high"),
    (lambda: IntervalCoverageDisplay([.5], [.5], [.4], [.6], confidence_level=1.5),
     r"^confidence_level"),
    (lambda: QuantileCalibrationDisplay([0, .5, 1], [0, .5], 0.1),
     r"^observed must have 3 entries"),
    (lambda: QuantileCalibrationDisplay([0, .5, 1], [0, .5, 1], float("nan")),
     r"^miscalibration_area must be finite"),
    (lambda: QuantileCalibrationDisplay([0, 1, .5], [0, .5, 1], 0.1),
     r"^expected must be strictly increasing"),
    (lambda: QuantileCalibrationDisplay([0, .5, 1], [0, .5, 1], 0.1, proportion="quantil"),
     r"^proportion .*Did you mean 'quantile'"),
    (lambda: LocalCalibrationBiasDisplay(np.arange(5.0), np.zeros(4)),
     r"^bias must have 5 entries"),
    (lambda: LocalCalibrationBiasDisplay(np.arange(5.0), np.r_[np.nan, np.zeros(4)]),
     r"^bias must be finite"),
    (lambda: LocalCalibrationBiasDisplay(np.arange(5.0), np.zeros(5), np.zeros(3)),
     r"^groups must have shape \(5,\)"),
    (lambda: ReliabilityDisplay(_reliability(), confidence_level=1.5), r"^confidence_level"),
    (lambda: ReliabilityDisplay(_reliability(), band="clopper-pearson",
                                band_low=_reliability().ci_low + 2,
                                band_high=_reliability().ci_high), r"^band_low .*\[0, 1\]"),
    (lambda: SmoothReliabilityDisplay(smooth_reliability_curve(*_binary()), smece=np.nan),
     r"^smece must be finite"),
    (lambda: SmoothReliabilityDisplay(smooth_reliability_curve(*_binary()), band="bootstrap",
                                      band_low=np.zeros(3), band_high=np.ones(3)),
     r"^band_low must have \d+ entries \(one per grid point"),
    (lambda: SmoothReliabilityDisplay(smooth_reliability_curve(*_binary()), mode="top-label"),
     r"^mode .*Did you mean 'top_label'"),
    (lambda: SmoothReliabilityDisplay(_reliability()), r"^curve must be a SmoothReliabilityCurve"),
]


@pytest.mark.parametrize("index", range(len(BAD_DATA)))
def test_display_data_are_checked_at_plot_naming_the_parameter(index):
    make, match = BAD_DATA[index]
    display = make()  # the constructor stores only, as scikit-learn's Displays do
    plt.close("all")
    with pytest.raises((ValueError, TypeError), match=match):
        display.plot()
    assert not plt.get_fignums(), "nothing may be drawn before the data are checked"


def test_valid_stored_data_still_draw_and_keep_what_was_given():
    d = PITHistogramDisplay([0.0, 0.5, 1.0], [0.8, 1.2], 10).plot()
    np.testing.assert_allclose(d.bars_.get_data().values, [0.8, 1.2])
    c = IntervalCoverageDisplay([0.5, 0.9], [0.4, 0.95], [0.3, 0.9], [0.5, 0.99]).plot()
    np.testing.assert_allclose(c.line_.get_ydata(), [0.4, 0.95])
    q = QuantileCalibrationDisplay([0.0, 0.5, 1.0], [0.0, 0.7, 1.0], 0.1).plot()
    np.testing.assert_allclose(q.line_.get_ydata(), [0.0, 0.7, 1.0])


# --------------------------------------------------------------------------------------------
# A10: from_estimator names the caller's arguments


@pytest.fixture(scope="module")
def models():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + rng.normal(size=60) > 0).astype(int)
    return X, y, LogisticRegression().fit(X, y), BayesianRidge().fit(X, X[:, 0])


def test_local_bias_from_estimator_names_audit_features(models):
    X, y, clf, _ = models
    L = LocalCalibrationBiasDisplay
    with pytest.raises(ValueError, match=r"^audit_features has 10 rows but X has 60"):
        L.from_estimator(clf, X, y, audit_features=X[:10, :2])
    with pytest.raises(ValueError, match=r"^audit_features must contain numbers"):
        L.from_estimator(clf, X, y, audit_features=np.array(["a", "b"] * 30))
    with pytest.raises(ValueError, match=r"^y has 10 entries but X has 60 rows"):
        L.from_estimator(clf, X, y[:10], audit_features=X[:, :2])
    with pytest.raises(ValueError, match="feature=7 is out of range for audit_features"):
        L.from_estimator(clf, X, y, audit_features=X[:, :2], feature=7)


@pytest.mark.parametrize("cls", [ReliabilityDisplay, SmoothReliabilityDisplay])
def test_classification_from_estimator_names_y_and_X(models, cls):
    X, y, clf, _ = models
    with pytest.raises(ValueError, match=r"^y has 10 entries but X has 60 rows"):
        cls.from_estimator(clf, X, y[:10])
    with pytest.raises(ValueError, match=r"^y\b"):
        cls.from_estimator(clf, X, np.r_[None, y[1:]].astype(object))


@pytest.mark.parametrize("cls", [PITHistogramDisplay, QuantileCalibrationDisplay,
                                 IntervalCoverageDisplay])
def test_regression_from_estimator_names_y_and_X(models, cls):
    X, _, _, reg = models
    target = X[:, 0]
    with pytest.raises(ValueError, match=r"^y has 10 entries but X has 60 rows"):
        cls.from_estimator(reg, X, target[:10])
    with pytest.raises(ValueError, match=r"^y must be finite"):
        cls.from_estimator(reg, X, np.r_[np.nan, target[1:]])


# --------------------------------------------------------------------------------------------
# docs


def _sh_blocks(text):
    """The ``.. code-block:: sh`` blocks of an rst page, as lists of command lines."""
    blocks = []
    for m in re.finditer(r"\.\. code-block:: (?:sh|bash|console)\n\n((?:   .*\n|\n)+)", text):
        lines = [ln.strip() for ln in m.group(1).splitlines() if ln.strip()]
        blocks.append([ln for ln in lines if not ln.startswith("#")])
    return blocks


def test_docs_command_lines_activate_the_venv_before_a_bare_skcalib():
    # after make demo the command is in .venv/bin, not on the PATH: on every page, the first
    # command block that types a bare `skcalib` comes after (or itself has) the activation
    bare = []
    for page in sorted(DOCS.glob("*.rst")):
        activated = False
        for block in _sh_blocks(page.read_text(encoding="utf-8")):
            for line in block:
                if line.startswith((". .venv/bin/activate", "source .venv/bin/activate")):
                    activated = True
                if re.match(r"skcalib\b", line) and not activated:
                    bare.append(f"{page.name}: {line}")
    assert not bare, bare
    text = (DOCS / "getting_started.rst").read_text(encoding="utf-8")
    assert text.index(". .venv/bin/activate") < text.index("skcalib demo --output-dir")


def test_docs_spell_the_mode_value_as_mode_accepts_it():
    # "top-label" stays as the name of the notion (top-label calibration, confidence, ECE);
    # where a page lists the values of mode= it writes them as mode= spells them
    listing = re.compile(r"binary,? (?:or )?top-label(?:,| and| modes)", re.IGNORECASE)
    for page in sorted(DOCS.glob("*.rst")):
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert not listing.search(text), page.name
        assert 'mode="top-label"' not in text and "mode='top-label'" not in text, page.name
    glossary = (DOCS / "glossary.rst").read_text(encoding="utf-8")
    assert '``"top_label"``' in glossary
    readme = " ".join((DOCS.parent / "README.md").read_text(encoding="utf-8").split())
    assert "top-label, class-wise and canonical" not in readme
    assert "(binary, top-label" not in readme
    assert '`"top_label"`' in readme


def test_stored_names_are_checked_naming_their_parameter():
    with pytest.raises(TypeError, match="^feature_name must be a str"):
        LocalCalibrationBiasDisplay(np.arange(3.0), np.zeros(3), feature_name=3).plot()
    y, p = _binary()
    with pytest.raises(TypeError, match="^estimator_name must be a str"):
        ReliabilityDisplay(reliability_curve(y, p), estimator_name=1).plot()


def test_a_hand_made_smooth_curve_is_checked():
    c = smooth_reliability_curve(*_binary())
    bad = c._replace(frequency=c.frequency[:-1])
    with pytest.raises(ValueError, match=r"^curve.frequency must have \d+ entries"):
        SmoothReliabilityDisplay(bad).plot()
    with pytest.raises(ValueError, match=r"^curve.grid must be strictly increasing"):
        SmoothReliabilityDisplay(c._replace(grid=c.grid[::-1])).plot()


def test_rounding_errors_at_a_closed_bound_are_not_refused():
    one = 1.0 + 2.2e-16 * 4
    IntervalCoverageDisplay([0.5, 0.9], [0.5, one], [0.4, 0.8], [0.6, one]).plot()
    with pytest.raises(ValueError, match=r"^levels .* in \(0, 1\)"):
        IntervalCoverageDisplay([0.5, 1.0], [0.5, 1.0], [0.4, 0.8], [0.6, 1.0]).plot()
