"""Issue 21, what a newcomer sees: the figures' layout (the count axis label beside its ticks,
legends above the histograms, the smooth curve faint where it is not supported), one default bin
count, one source for the version, and the packaging metadata."""

import os
import re
import sys
from importlib import metadata

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import skcalib  # noqa: E402
from skcalib import calibration_error  # noqa: E402
from skcalib.plotting import ReliabilityDisplay, SmoothReliabilityDisplay  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _binary(n=600, seed=0, power=1.0):
    rng = np.random.default_rng(seed)
    p = rng.random(n)
    y = (rng.random(n) < p ** power).astype(int)
    return y, p


def _multiclass(n=900, k=3, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(k, 0.7), n)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)
    return y, P


def _extent(artist, renderer):
    return artist.get_window_extent(renderer)


def _overlap(a, b):
    """True if two display-space boxes share an area (touching edges do not count)."""
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


# --------------------------------------------------------------------------------------------
# Figures


def _row_of_two(draw_left, draw_right):
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    left = draw_left(axes[0])
    right = draw_right(axes[1])
    fig.tight_layout()
    fig.canvas.draw()
    return fig, axes, left, right


def _twin_label_checks(fig, twin, neighbour, renderer):
    label = _extent(twin.yaxis.label, renderer)
    # inside the figure
    fig_box = fig.bbox
    assert fig_box.x0 <= label.x0 and label.x1 <= fig_box.x1
    assert fig_box.y0 <= label.y0 and label.y1 <= fig_box.y1
    # beside its ticks: the label's middle lies within the height spanned by the tick labels
    ticks = [_extent(t, renderer) for t in twin.get_yticklabels() if t.get_text()]
    assert ticks
    low, high = min(t.y0 for t in ticks), max(t.y1 for t in ticks)
    middle = 0.5 * (label.y0 + label.y1)
    assert low - 1 <= middle <= high + 1, (label, low, high)
    # and right of its tick labels, close to them (not half a panel away)
    assert label.x0 >= max(t.x1 for t in ticks) - 1
    assert label.x0 - max(t.x1 for t in ticks) < 30
    if neighbour is not None:
        # not on the neighbouring panel's own axis label or tick labels
        assert not _overlap(label, _extent(neighbour.yaxis.label, renderer))
        for t in neighbour.get_yticklabels():
            if t.get_text():
                assert not _overlap(label, _extent(t, renderer))


def test_count_label_sits_by_its_ticks_and_clear_of_the_next_panel():
    y, P = _multiclass(n=1500)
    fig, axes, left, right = _row_of_two(
        lambda ax: ReliabilityDisplay.from_predictions(y, P, n_bins=10, name="a", ax=ax),
        lambda ax: SmoothReliabilityDisplay.from_predictions(y, P, name="a", ax=ax))
    renderer = fig.canvas.get_renderer()
    assert left.counts_ax_.get_ylabel() == "Count"
    _twin_label_checks(fig, left.counts_ax_, axes[1], renderer)
    _twin_label_checks(fig, right.density_ax_, None, renderer)


def test_twin_label_of_a_single_default_figure_is_inside_it():
    y, p = _binary(n=2000)
    for d, twin in [(ReliabilityDisplay.from_predictions(y, p), "counts_ax_"),
                    (SmoothReliabilityDisplay.from_predictions(y, p), "density_ax_")]:
        d.figure_.canvas.draw()
        _twin_label_checks(d.figure_, getattr(d, twin), None, d.figure_.canvas.get_renderer())


def _bar_extents(bars, renderer):
    return [_extent(b, renderer) for b in bars if b.get_height() > 0]


@pytest.mark.parametrize("power", [0.3, 0.5, 1.0, 2.0, 4.0])
def test_legend_does_not_cover_the_count_histogram(power):
    # an under-confident model (curve above the diagonal) left "best" the lower right corner,
    # over the bars of the twin axis, which "best" does not see
    y, p = _binary(n=3000, power=power, seed=3)
    d = ReliabilityDisplay.from_predictions(y, p, name="a model with a long name", n_bins=10)
    ReliabilityDisplay.from_predictions(y, p ** 1.3, name="another model", n_bins=10,
                                        ax=d.ax_, band="consistency", random_state=0,
                                        n_resamples=50)
    d.figure_.canvas.draw()
    renderer = d.figure_.canvas.get_renderer()
    legend = _extent(d.ax_.get_legend(), renderer)
    for bars in d.count_bars_:
        for bar in _bar_extents(bars, renderer):
            assert not _overlap(legend, bar), (legend, bar)
    # the same for the density of the smooth diagram
    s = SmoothReliabilityDisplay.from_predictions(y, p, name="a model with a long name")
    s.figure_.canvas.draw()
    renderer = s.figure_.canvas.get_renderer()
    legend = _extent(s.ax_.get_legend(), renderer)
    top = s.density_ax_.transData.transform((0.0, float(np.max(s.curve.density))))[1]
    assert legend.y0 >= top - 1


def test_legend_placed_above_the_histogram_still_avoids_the_curve():
    y, p = _binary(n=3000, power=0.4, seed=1)
    d = ReliabilityDisplay.from_predictions(y, p, name="m", band=None)
    d.figure_.canvas.draw()
    renderer = d.figure_.canvas.get_renderer()
    legend = _extent(d.ax_.get_legend(), renderer)
    xy = d.ax_.transData.transform(np.column_stack([d.line_.get_xdata(), d.line_.get_ydata()]))
    inside = ((xy[:, 0] > legend.x0) & (xy[:, 0] < legend.x1) & (xy[:, 1] > legend.y0)
              & (xy[:, 1] < legend.y1))
    assert not inside.any()


def test_without_counts_the_legend_may_use_the_whole_plot():
    y, p = _binary(n=500)
    d = ReliabilityDisplay.from_predictions(y, p, show_counts=False)
    assert d.ax_.get_legend().get_bbox_to_anchor().bounds == pytest.approx(d.ax_.bbox.bounds)


def test_smooth_curve_is_faint_where_fewer_than_five_predictions_support_it():
    """Where fewer than 5 predictions lie within one bandwidth the curve swings from 0 to 1 on a
    handful of samples: the curve (line_) is not drawn there, only a faint thin line."""
    rng = np.random.default_rng(7)
    p = np.concatenate([rng.uniform(0.6, 1.0, 400), [0.05, 0.1, 0.3]])
    y = (rng.random(p.size) < p).astype(int)
    y[-3:] = [1, 0, 1]      # the isolated points pull the curve up and down
    d = SmoothReliabilityDisplay.from_predictions(y, p, bandwidth=0.03, n_points=201,
                                                  name="m")
    c = d.curve
    sparse = p.size * c.density * 2 * c.bandwidth < 5
    assert sparse.any() and (~sparse).any()
    drawn = np.asarray(d.line_.get_ydata(), dtype=float)
    assert np.isnan(drawn[sparse]).all()
    np.testing.assert_array_equal(drawn[~sparse], c.frequency[~sparse])
    faint = np.asarray(d.unsupported_.get_ydata(), dtype=float)
    np.testing.assert_array_equal(faint[sparse], c.frequency[sparse])
    assert d.unsupported_.get_alpha() <= 0.3
    assert d.unsupported_.get_linewidth() < d.line_.get_linewidth()
    assert d.unsupported_.get_color() == d.line_.get_color()
    # the faint part is not in the legend; the curve's entry is
    texts = [t.get_text() for t in d.ax_.get_legend().get_texts()]
    assert sum(t.startswith("m (smECE") for t in texts) == 1
    # the two parts meet: every supported point next to a sparse one is on both lines
    edge = ~sparse & (np.r_[sparse[1:], False] | np.r_[False, sparse[:-1]])
    np.testing.assert_array_equal(faint[edge], c.frequency[edge])


def test_smooth_curve_fully_supported_has_no_faint_part():
    y, p = _binary(n=4000, seed=2)
    d = SmoothReliabilityDisplay.from_predictions(y, p, bandwidth=0.05)
    assert d.unsupported_ is None and d.sparse_ is None
    np.testing.assert_array_equal(d.line_.get_ydata(), d.curve.frequency)
    # a Display built without n_samples does not mask anything
    bare = SmoothReliabilityDisplay(d.curve).plot()
    assert bare.unsupported_ is None
    np.testing.assert_array_equal(bare.line_.get_ydata(), d.curve.frequency)


# --------------------------------------------------------------------------------------------
# One default bin count


def _default(func, name):
    import inspect

    return inspect.signature(func).parameters[name].default


def test_one_default_bin_count_for_the_error_the_report_and_the_diagrams():
    from skcalib.reporting import calibration_report

    n_bins = _default(calibration_error, "n_bins")
    assert n_bins == 15
    assert _default(calibration_report, "n_bins") == n_bins
    assert _default(ReliabilityDisplay.from_predictions, "n_bins") == n_bins
    assert _default(ReliabilityDisplay.from_estimator, "n_bins") == n_bins
    y, p = _binary(n=3000)
    d = ReliabilityDisplay.from_predictions(y, p, band=None)
    assert len(d.counts) == n_bins
    # the diagram's count-weighted gap is the default binned error
    gap = np.average(np.abs(d.prob_true - d.prob_pred), weights=d.counts)
    assert gap == pytest.approx(calibration_error(y, p), rel=1e-12)


# --------------------------------------------------------------------------------------------
# Packaging: one version, metadata, license, changelog, citation


def _pyproject():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _source_version():
    """``__version__`` as written in skcalib/__init__.py (what setuptools reads statically)."""
    import ast

    with open(os.path.join(ROOT, "skcalib", "__init__.py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    values = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
              and any(getattr(t, "id", None) == "__version__" for t in node.targets)
              and isinstance(node.value, ast.Constant)]
    assert len(values) == 1, "skcalib/__init__.py must assign __version__ once, to a literal"
    return values[0]


def test_version_has_one_source():
    project = _pyproject()["project"]
    assert "version" not in project and "version" in project.get("dynamic", [])
    dynamic = _pyproject()["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "skcalib.__version__"}
    assert skcalib.__version__ == _source_version()


def test_version_equals_the_installed_metadata():
    installed = metadata.version("skcalib")
    assert skcalib.__version__ == installed
    from packaging.version import Version

    Version(installed)  # a valid PEP 440 version


def test_pyproject_metadata():
    data = _pyproject()
    requires = data["build-system"]["requires"]
    setuptools_req = [r for r in requires if r.replace(" ", "").startswith("setuptools")]
    assert setuptools_req, requires
    match = re.fullmatch(r"setuptools>=(\d+)(\.\d+)*", setuptools_req[0].replace(" ", ""))
    assert match and int(match.group(1)) >= 77  # the SPDX license expression (PEP 639)
    project = data["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
    # PEP 639: no license classifier beside an SPDX expression (setuptools refuses both)
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]
    assert project["authors"] and all(a.get("name") for a in project["authors"])
    assert "urls" not in project  # no public home yet: no invented addresses
    # the Python versions of the classifiers start at requires-python
    low = re.fullmatch(r">=\s*3\.(\d+)", project["requires-python"]).group(1)
    minors = sorted(int(c.rsplit(".", 1)[1]) for c in project["classifiers"]
                    if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert minors and minors[0] == int(low)
    assert "Programming Language :: Python :: 3" in project["classifiers"]
    # a small extra for reading Parquet files with the command line
    parquet = project["optional-dependencies"]["parquet"]
    names = sorted(re.split(r"[<>=!~\[ ]", r, maxsplit=1)[0] for r in parquet)
    assert names == ["pandas", "pyarrow"]


def test_editable_install_uses_a_path_file_not_the_warning_finder():
    # setuptools installs a flat layout whose root is mapped explicitly ({"": "."}) by a .pth
    # file; otherwise by a meta-path finder whose "Editable installation" warning pip prints
    tool = _pyproject()["tool"]["setuptools"]
    assert tool["package-dir"] == {"": "."}
    assert tool["packages"]["find"]["include"] == ["skcalib*"]


def test_readme_points_command_line_users_to_the_parquet_extra():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert "pip install 'skcalib[parquet]'" in readme
    # not to the whole Dask stack for reading a Parquet file
    assert "Parquet needs pandas and pyarrow, e.g.\n`pip install 'skcalib[dask]'`" not in readme


def test_license_file():
    with open(os.path.join(ROOT, "LICENSE"), encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("BSD 3-Clause License")
    assert "the skcalib developers" in text
    assert "Neither the name of the copyright holder" in text


def test_changelog_keeps_a_changelog():
    with open(os.path.join(ROOT, "CHANGELOG.md"), encoding="utf-8") as f:
        text = f.read()
    assert text.startswith("# Changelog")
    assert "keepachangelog.com" in text
    assert re.search(r"^## \[Unreleased\]", text, flags=re.M)
    assert skcalib.__version__ in text
    for section in ("### Added", "### Changed", "### Fixed"):
        assert section in text


def test_citation_file_cites_the_four_papers():
    yaml = pytest.importorskip("yaml")
    with open(os.path.join(ROOT, "CITATION.cff"), encoding="utf-8") as f:
        cff = yaml.safe_load(f)
    assert cff["cff-version"] == "1.2.0"
    assert cff["message"] and cff["title"] and cff["authors"]
    assert cff["license"] == _pyproject()["project"]["license"]
    assert str(cff["version"]) == skcalib.__version__
    titles = [ref["title"].lower() for ref in cff["references"]]
    for words in ("calibration tests in multi-class classification",
                  "calibration tests beyond classification",
                  "optimizing estimators of squared calibration errors",
                  "i-trustworthy models"):
        assert any(words in t for t in titles), words
    for ref in cff["references"]:
        assert ref["type"] and ref["authors"]
        assert all(a.get("family-names") for a in ref["authors"])


# --------------------------------------------------------------------------------------------
# Stale content: the tie rule, the recalibrator family


def _read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def test_tie_rule_is_stated_wherever_top_label_correctness_is_defined():
    errors = _read("docs", "errors.rst")
    # the modes table and the MMCE section define correctness by the tie rule, not by argmax
    assert "correctness :math:`1\\{y = \\arg\\max_k p_k\\}` (Guo" not in errors
    assert "correctness :math:`1\\{y \\in A\\} / |A|`" in errors
    assert "**Tied maxima.**" in errors and "uniform draw among them" in errors
    assert "c_i = 1\\{y_i \\in A_i\\}" in errors
    doc = skcalib.mmce.__doc__
    assert "uniform draw among the tied classes" in doc and "1{y in A} / |A|" in doc
    from skcalib.metrics import _binned

    assert "1{y in A} / |A|" in _binned.__doc__


def test_tie_rule_as_stated():
    # two rows tied between classes 0 and 1: the true class 0 counts 1/2, the class 2 counts 0
    P = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    y = np.array([0, 2, 2])
    c = np.array([0.5, 0.0, 1.0])
    r = P.max(axis=1)
    ece = calibration_error(y, P, n_bins=1, mode="top_label", labels=[0, 1, 2])
    assert ece == pytest.approx(abs(np.mean(c) - np.mean(r)), abs=1e-15)
    # MMCE^2 (biased, V-statistic) with the default kernel exp(-|r - r'| / 0.4)
    K = np.exp(-np.abs(r[:, None] - r[None, :]) / 0.4)
    value = np.mean(np.outer(c - r, c - r) * K)
    assert skcalib.mmce(y, P, squared=True, labels=[0, 1, 2]) == pytest.approx(value, rel=1e-12)


def test_docs_present_the_whole_recalibrator_family():
    from skcalib import recalibration

    recal = _read("docs", "recalibration.rst")
    landing = _read("docs", "index.rst")
    api = _read("docs", "api.rst")
    assert "provides one such map" not in recal
    for name in ("Platt scaling", "Dirichlet", "isotonic", "Venn--Abers", "quantile"):
        assert name in recal.split("Temperature scaling of classifiers")[0], name
        assert name in landing.split("and shows it with")[0], name
    for name in recalibration.__all__:
        assert f":class:`{name}`" in recal, name
        assert re.search(rf"^   {name}$", api, flags=re.M), name


# --------------------------------------------------------------------------------------------
# docs/check_build.py: code lines and tables cut off at the right edge


def _check_build():
    import importlib.util

    path = os.path.join(ROOT, "docs", "check_build.py")
    spec = importlib.util.spec_from_file_location("skcalib_docs_check_build_trust", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_BOTH = ('<div class="bd-sidebar-primary bd-sidebar"></div>'
         '<div class="bd-sidebar-secondary bd-toc"></div>')
_NONE = '<div class="bd-sidebar-primary bd-sidebar hide-on-wide"></div>'


def _page(sidebars, body):
    return f"<html><body>{sidebars}<article>{body}</article></body></html>"


def _code_block(width):
    return ('<div class="highlight"><pre>short line\n' + "x" * width + "\n</pre></div>")


def _table(words, kind="code"):
    cells = "".join(
        f'<td><code class="docutils literal"><span class="pre">{w}</span></code></td>'
        if kind == "code" else f"<td>{w}</td>" for w in words)
    return f'<table class="table"><tbody><tr>{cells}</tr></tbody></table>'


def test_check_build_finds_code_lines_longer_than_their_block():
    cb = _check_build()
    # beside both sidebars a block shows 69 characters at 1280 px; without sidebars 102
    assert cb.layout_problems("a.html", _page(_BOTH, _code_block(69)), wrap_pre=False,
                              code_breaks=False) == []
    problems = cb.layout_problems("a.html", _page(_BOTH, _code_block(90)), wrap_pre=False,
                                  code_breaks=False)
    assert len(problems) == 1 and "cut off at the right edge" in problems[0]
    assert "longest: 90" in problems[0]
    assert cb.layout_problems("a.html", _page(_NONE, _code_block(90)), wrap_pre=False,
                              code_breaks=False) == []
    # a stylesheet that wraps code blocks leaves nothing cut off
    assert cb.layout_problems("a.html", _page(_BOTH, _code_block(300)), wrap_pre=True,
                              code_breaks=False) == []


def test_check_build_finds_tables_wider_than_the_content_area():
    cb = _check_build()
    names = ["stats.spiegelhalter_test()", "stats.hosmer_lemeshow_test()",
             "neg_integrated_calibration_index", "stats.consistency_test()"]
    wide = _page(_BOTH, _table(names))
    problems = cb.layout_problems("m.html", wide, wrap_pre=True, code_breaks=False)
    assert len(problems) == 1 and "scroll bar" in problems[0]
    # code allowed to break in cells, or the page's whole width, and the table fits
    assert cb.layout_problems("m.html", wide, wrap_pre=True, code_breaks=True) == []
    assert cb.layout_problems("m.html", _page(_NONE, _table(names[:3])), wrap_pre=True,
                              code_breaks=False) == []
    # long plain words count too, code breaking or not
    words = ["calibration" * 2] * 4
    assert cb.layout_problems("m.html", _page(_BOTH, _table(words, kind="text")),
                              wrap_pre=True, code_breaks=True)
    # the HTML output of an example (an estimator's repr) scrolls in its own box: ignored
    boxed = _page(_BOTH, '<div class="output_subarea">' + _table(names) + "</div>")
    assert cb.layout_problems("g.html", boxed, wrap_pre=True, code_breaks=False) == []


def test_check_build_reads_the_site_stylesheet(tmp_path):
    cb = _check_build()
    css = _read("docs", "_static", "skcalib.css")
    assert cb.wraps_code_blocks(css) and cb.breaks_code_in_tables(css)
    assert not cb.wraps_code_blocks("pre { color: red; }")
    assert not cb.breaks_code_in_tables("table td { overflow-wrap: anywhere; }")
    # find_problems reports a too-long line of a site whose stylesheet does not wrap
    root = tmp_path / "html"
    (root / "_static").mkdir(parents=True)
    (root / "_static" / "skcalib.css").write_text("body { color: black; }")
    (root / "index.html").write_text(_page(_BOTH, _code_block(120)))
    problems = cb.find_problems(str(root))
    assert any("index.html" in p and "cut off" in p for p in problems)
    (root / "_static" / "skcalib.css").write_text(css)
    assert not any("cut off" in p for p in cb.find_problems(str(root)))


def test_wide_pages_have_the_whole_width():
    conf = _read("docs", "conf.py")
    for page in ("metrics", "recalibration", "scorers"):
        assert re.search(rf'"{re.escape(page)}": \[\]', conf), page
    # the gallery's pages, one by one (a second wildcard beside "**" is a theme warning)
    assert conf.count("**dict.fromkeys(GALLERY_PAGES, [])") == 2
    assert '"auto_examples/plot_*"' not in conf


def test_ci_builds_the_docs_after_the_tests():
    lines = [line.strip() for line in _read(".ci", "run").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert "set -euo pipefail" in lines
    assert lines.index("make test") < lines.index("make docs")
    makefile = _read("Makefile")
    docs_target = makefile.split("\ndocs:", 1)[1].split("\n\n", 1)[0]
    assert "-W" in docs_target and "check_build.py" in docs_target


def test_readme_gives_durations_and_explains_the_expected_failures():
    readme = _read("README.md")
    section = readme.split("How long they take", 1)[1].split("## What is here", 1)[0]
    for target in ("`make demo`", "`make test`", "`make docs`"):
        assert re.search(re.escape(target) + r"[^.]*\b(minute|minutes|s)\b", section), target
    assert "xfailed" in section and "_estimator_checks.py" in section
    assert "parametrize_with_checks" in section
    # the count it gives is the count of the expected failures that the suite marks
    from skcalib._estimator_checks import EXPECTED_FAILED_CHECKS

    assert "about 600" in section and EXPECTED_FAILED_CHECKS
