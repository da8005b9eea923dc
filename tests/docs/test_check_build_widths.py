"""``docs/check_build.py`` finds code lines and tables cut off at the right edge; wide pages have
the whole width."""

import os
import re


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# --------------------------------------------------------------------------------------------
# Stale content: the tie rule, the recalibrator family


def _read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


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
