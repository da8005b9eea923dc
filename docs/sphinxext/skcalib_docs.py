"""Sphinx helpers of the skcalib documentation (loaded by ``docs/conf.py``).

Importable without Sphinx (``tests/docs/test_docs_build.py`` tests the gallery hooks); Sphinx
itself is imported by :func:`setup` only.

* ``.. skcalib-scorer-table::`` -- the table of every scorer of :func:`skcalib.get_scorer_names`,
  generated at build time by :mod:`scorer_table`, so it cannot go stale.
* :class:`ExampleOrder`, :func:`example_sort_key` -- the order of the examples in the gallery
  and in the thumbnail grids (``minigallery``): the introductory ones first, the rest by name.
* :func:`mathjax_static_dir` -- the folder of the MathJax files shipped by the
  ``sphinx-mathjax-offline`` package, added to ``html_static_path`` so that MathJax is served
  from the built site (``_static/mathjax/``), never from the network.
"""

import importlib.metadata
import os

from scorer_table import scorer_table_rst

#: Examples shown first in the gallery, in this order; the others follow by file name.
FIRST_EXAMPLES = (
    "plot_classifier_calibration.py",
    "plot_calibration_tests.py",
    "plot_recalibration.py",
    "plot_recalibrators.py",
    "plot_toolbox_classification.py",
    "plot_local_calibration.py",
    "plot_regression_calibration.py",
    "plot_toolbox_regression.py",
    "plot_regression_forms.py",
    "plot_estimation.py",
)


class ExampleOrder:
    """sphinx-gallery ``within_subsection_order`` key: :data:`FIRST_EXAMPLES`, then by name."""

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __call__(self, filename):
        name = os.path.basename(filename)
        rank = FIRST_EXAMPLES.index(name) if name in FIRST_EXAMPLES else len(FIRST_EXAMPLES)
        return (rank, name)

    def __repr__(self):  # sphinx-gallery caches the configuration by its repr
        return f"<{type(self).__name__}>"


def example_sort_key(path):
    """sphinx-gallery ``minigallery_sort_order`` key: the order of :class:`ExampleOrder`.

    Parameters
    ----------
    path : str
        Path of an example script.

    Returns
    -------
    tuple
        ``(rank in FIRST_EXAMPLES, file name)``.
    """
    return ExampleOrder(None)(path)


def mathjax_static_dir():
    """Folder holding ``mathjax/tex-chtml.js`` (from the ``sphinx-mathjax-offline`` package).

    Returns
    -------
    str
        Absolute path of the package's ``static`` folder, whose ``mathjax`` subfolder is copied
        into the site's ``_static``.
    """
    try:
        dist = importlib.metadata.distribution("sphinx-mathjax-offline")
    except importlib.metadata.PackageNotFoundError:
        raise RuntimeError(
            "the docs need MathJax served locally: pip install -e '.[docs]' "
            "(package sphinx-mathjax-offline)") from None
    path = os.path.abspath(str(dist.locate_file("sphinx-mathjax-offline/static")))
    if not os.path.isfile(os.path.join(path, "mathjax", "tex-chtml.js")):
        raise RuntimeError(f"no mathjax/tex-chtml.js under {path}")
    return path


def _scorer_table_directive():
    """The ``skcalib-scorer-table`` directive class (Sphinx is imported only when building)."""
    from docutils import nodes
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective
    from sphinx.util.nodes import nested_parse_with_titles

    class ScorerTableDirective(SphinxDirective):
        """``.. skcalib-scorer-table::``: the table of skcalib's scorers."""

        has_content = False

        def run(self):
            container = nodes.container()
            lines = StringList(scorer_table_rst(), source="<skcalib-scorer-table>")
            nested_parse_with_titles(self.state, lines, container)
            return container.children

    return ScorerTableDirective


def setup(app):
    app.add_directive("skcalib-scorer-table", _scorer_table_directive())
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
