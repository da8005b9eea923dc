"""Tests of the documentation's build checks, without running Sphinx.

``docs/check_build.py`` is tested on tiny fake build folders (one good site, then one defect at a
time); ``docs/sphinxext/scorer_table.py`` -- the generator of the scorer table of
``docs/scorers.rst`` -- against :func:`skcalib.get_scorer_names` and the scorers themselves; the
gallery hooks of ``docs/sphinxext/skcalib_docs.py``; and the snippets of
``docs/getting_started.rst``, which must run and print the numbers their comments state.
"""

import importlib.util
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import skcalib  # noqa: E402

DOCS = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "docs")


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


check_build = _load("skcalib_docs_check_build", os.path.join(DOCS, "check_build.py"))
scorer_table = _load("skcalib_docs_scorer_table", os.path.join(DOCS, "sphinxext",
                                                                "scorer_table.py"))

PNG = b"\x89PNG\r\n\x1a\n"

INDEX = """<!DOCTYPE html><html><head>
<link rel="stylesheet" href="_static/theme.css">
<script src="_static/mathjax/tex-chtml.js" defer></script>
</head><body><p>\\(x^2\\)</p>
<a href="https://example.org/paper.pdf">a link is not a load</a>
<img src="_images/logo.png" srcset="_images/logo.png 1x, _images/logo.png 2x">
</body></html>"""

EXAMPLE = """<!DOCTYPE html><html><head>
<link rel="stylesheet" href="../_static/theme.css">
</head><body>
<img src="../_images/sphx_glr_plot_a_001.png" alt="figure">
<img src="../_images/sphx_glr_plot_a_002.png" alt="figure">
</body></html>"""

GALLERY_INDEX = """<html><body>
<img src="../_images/sphx_glr_plot_a_thumb.png"></body></html>"""


def _write(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(content, bytes) else "w"
    with open(path, mode) as f:
        f.write(content)


@pytest.fixture
def site(tmp_path):
    """A minimal good site: MathJax local, a gallery page with two existing PNG figures."""
    root = str(tmp_path / "html")
    _write(os.path.join(root, "index.html"), INDEX)
    _write(os.path.join(root, "auto_examples", "index.html"), GALLERY_INDEX)
    _write(os.path.join(root, "auto_examples", "plot_a.html"), EXAMPLE)
    _write(os.path.join(root, "_static", "theme.css"),
           "@font-face { font-family: x; src: url('../fonts/x.woff2'); }\nbody { color: red; }")
    _write(os.path.join(root, "_static", "mathjax", "tex-chtml.js"), "/* MathJax */")
    for name in ("logo.png", "sphx_glr_plot_a_001.png", "sphx_glr_plot_a_002.png",
                 "sphx_glr_plot_a_thumb.png"):
        _write(os.path.join(root, "_images", name), PNG)
    return root


def _edit(root, page, old, new):
    path = os.path.join(root, page)
    with open(path) as f:
        text = f.read()
    assert old in text
    with open(path, "w") as f:
        f.write(text.replace(old, new))


def test_good_site_passes(site, capsys):
    assert check_build.find_problems(site) == []
    assert check_build.main([site]) == 0
    assert "is fine" in capsys.readouterr().out


@pytest.mark.parametrize("tag, url", [
    ('<script src="{}"></script>', "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"),
    ('<script src="{}"></script>', "http://code.jquery.com/jquery.js"),
    ('<script src="{}"></script>', "//cdn.example.com/x.js"),
    ('<link rel="stylesheet" href="{}">', "https://fonts.googleapis.com/css?family=Lato"),
    ('<link rel="preconnect" href="{}">', "https://fonts.gstatic.com"),
    ('<link rel="preload" as="font" href="{}">', "https://cdn.example.com/font.woff2"),
    ('<img src="{}">', "https://img.shields.io/badge.svg"),
])
def test_network_loads_fail(site, tag, url, capsys):
    _edit(site, "index.html", "</head>", tag.format(url) + "</head>")
    problems = check_build.find_problems(site)
    assert len(problems) == 1
    assert "index.html" in problems[0] and url in problems[0]
    assert check_build.main([site]) == 1
    assert url in capsys.readouterr().err


def test_remote_font_in_css_fails(site):
    _write(os.path.join(site, "_static", "fonts.css"),
           "@font-face { src: url(https://fonts.gstatic.com/s/lato.woff2) format('woff2'); }")
    problems = check_build.find_problems(site)
    assert len(problems) == 1
    assert "fonts.css" in problems[0] and "fonts.gstatic.com" in problems[0]


def test_remote_import_in_style_block_fails(site):
    _edit(site, "index.html", "</head>",
          '<style>@import url("https://cdn.example.com/a.css");</style></head>')
    problems = check_build.find_problems(site)
    assert problems == ["index.html: a <style> block loads https://cdn.example.com/a.css from "
                        "the network."]


def test_missing_gallery_image_fails(site):
    os.remove(os.path.join(site, "_images", "sphx_glr_plot_a_002.png"))
    problems = check_build.find_problems(site)
    assert len(problems) == 1
    assert "sphx_glr_plot_a_002.png" in problems[0] and "auto_examples/plot_a.html" in problems[0]


def test_gallery_without_figures_fails(site):
    # The gallery index keeps its thumbnail: only the example pages' figures count.
    _edit(site, "auto_examples/plot_a.html", '<img src="../_images/sphx_glr_plot_a_001.png" '
          'alt="figure">\n<img src="../_images/sphx_glr_plot_a_002.png" alt="figure">', "")
    problems = check_build.find_problems(site)
    assert len(problems) == 1
    assert "reference no PNG image" in problems[0]


def test_no_gallery_fails(site):
    os.remove(os.path.join(site, "auto_examples", "plot_a.html"))
    problems = check_build.find_problems(site)
    assert len(problems) == 1 and "no gallery example page" in problems[0]


def test_mathjax_not_loaded_fails(site):
    _edit(site, "index.html", '<script src="_static/mathjax/tex-chtml.js" defer></script>', "")
    problems = check_build.find_problems(site)
    assert len(problems) == 1 and "MathJax" in problems[0]


def test_mathjax_file_missing_fails(site):
    os.remove(os.path.join(site, "_static", "mathjax", "tex-chtml.js"))
    problems = check_build.find_problems(site)
    assert len(problems) == 1
    assert "_static/mathjax/tex-chtml.js" in problems[0] and "not in the build" in problems[0]


def test_not_a_build_folder(tmp_path):
    assert "not a folder" in check_build.find_problems(str(tmp_path / "missing"))[0]
    assert "no HTML page" in check_build.find_problems(str(tmp_path))[0]
    assert check_build.main([str(tmp_path)]) == 1


# --------------------------------------------------------------------------------------------
# the scorer table


def test_scorer_table_covers_every_scorer_once():
    rows = scorer_table.scorer_rows()
    names = [name for row in rows for name in row.names]
    assert sorted(names) == sorted(skcalib.get_scorer_names())
    assert len(names) == len(set(names))
    text = "\n".join(scorer_table.scorer_table_rst())
    for name in skcalib.get_scorer_names():
        assert f"``{name}``" in text
    # aliases share a row: the long and the short name of the ECE
    (ece_row,) = [row for row in rows if "neg_ece" in row.names]
    assert set(ece_row.names) == {"neg_ece", "neg_expected_calibration_error",
                                  "neg_l1_calibration_error"}
    assert ece_row.function == "skcalib.calibration_error" and ece_row.kwargs == {"norm": "l1"}


def test_scorer_table_signs_and_functions_match_the_scorers():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    X, y = make_classification(n_samples=120, n_features=5, random_state=0)
    model = LogisticRegression().fit(X, y)
    P = model.predict_proba(X)
    checked = 0
    for row in scorer_table.scorer_rows():
        # the sign: negated errors are neg_ names, p-values are not
        for name in row.names:
            assert name.startswith("neg_") == row.negated
        module, _, attr = row.function.rpartition(".")
        func = getattr(sys.modules[module] if module in sys.modules
                       else importlib.import_module(module), attr)
        if row.function in ("skcalib.calibration_error", "skcalib.brier_score",
                            "skcalib.log_score", "skcalib.smooth_ece", "skcalib.mmce",
                            "skcalib.scorers.spiegelhalter_pvalue"):
            expected = func(y, P, labels=model.classes_, **row.kwargs)
            sign = -1 if row.negated else 1
            for name in row.names:
                assert skcalib.get_scorer(name)(model, X, y) == pytest.approx(sign * expected)
                checked += 1
    assert checked >= 12



# --------------------------------------------------------------------------------------------
# the gallery hooks


def _docs_ext():
    sys.path.insert(0, os.path.join(DOCS, "sphinxext"))
    try:
        return _load("skcalib_docs_ext", os.path.join(DOCS, "sphinxext", "skcalib_docs.py"))
    finally:
        sys.path.remove(os.path.join(DOCS, "sphinxext"))


def test_gallery_order():
    ext = _docs_ext()
    examples = sorted(name for name in os.listdir(os.path.join(os.path.dirname(DOCS), "examples"))
                      if name.startswith("plot_") and name.endswith(".py"))
    # every example named in the order exists (a renamed example would silently move to the end)
    assert set(ext.FIRST_EXAMPLES) <= set(examples)
    order = sorted(examples + ["plot_zz_new.py", "plot_aa_new.py"], key=ext.example_sort_key)
    assert order[:len(ext.FIRST_EXAMPLES)] == list(ext.FIRST_EXAMPLES)
    assert order[-2:] == ["plot_aa_new.py", "plot_zz_new.py"]
    key = ext.ExampleOrder("examples")
    assert key("/a/b/plot_classifier_calibration.py") == (0, "plot_classifier_calibration.py")


# --------------------------------------------------------------------------------------------
# the getting-started page: its snippets run, and the numbers in their comments are true


def _python_blocks(rst):
    """The Python snippets of an rst page (``.. plot::`` and ``.. code-block:: python``)."""
    import re

    pattern = re.compile(r"^\.\. (?:plot::|code-block:: python)[^\n]*\n"  # the directive
                         r"((?:   :[^\n]*\n(?:         [^\n]*\n)*)*)\n"  # its options
                         r"((?:(?:   [^\n]*)?\n)+)", re.MULTILINE)  # the indented body
    return ["\n".join(line[3:] for line in m.group(2).splitlines())
            for m in pattern.finditer(rst)]


def test_getting_started_snippets_run_and_their_numbers_are_true(capsys):
    import re

    import matplotlib.pyplot as plt

    with open(os.path.join(DOCS, "getting_started.rst"), encoding="utf-8") as f:
        blocks = _python_blocks(f.read())
    assert len(blocks) >= 4  # report, test, recalibration, model search
    namespace = {}
    claims = 0
    for block in blocks:
        exec(compile(block, "getting_started.rst", "exec"), namespace)
        # print(EXPR)   # 0.007: ... -- the documented value of EXPR, to its decimals
        for expr, number in re.findall(r"print\((.+)\)\s+#\s*(\d+\.\d+)", block):
            decimals = len(number.split(".")[1])
            assert round(float(eval(expr, namespace)), decimals) == float(number), expr
            claims += 1
    plt.close("all")
    capsys.readouterr()
    assert claims >= 2
    assert isinstance(namespace["report"], skcalib.reporting.CalibrationReport)
    # "lower ECE" after recalibration
    ece = skcalib.calibration_error
    y_test, P, P_new = namespace["y_test"], namespace["P"], namespace["P_new"]
    assert ece(y_test, P_new) < ece(y_test, P)
    # the model search scored every fold (a failing scorer would give NaN)
    for key in ("test_ece", "test_skce_pvalue", "test_log_loss"):
        assert not any(math.isnan(v) for v in namespace["scores"][key]), key
