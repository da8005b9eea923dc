"""The rows of the scorer table of ``docs/scorers.rst``, computed from ``skcalib`` itself.

Pure Python (no Sphinx import), so that ``tests/docs/test_docs_build.py`` can check the table
against :func:`skcalib.get_scorer_names` without building the documentation. The Sphinx
directive that renders the rows is ``skcalib_docs.ScorerTableDirective``.

Every row is one scorer *object*: names that return the same metric with the same fixed
arguments (``neg_ece`` and ``neg_expected_calibration_error``) are aliases and share a row. The
wrapped function, the fixed keyword arguments and the sign are read from the scorer returned by
:func:`skcalib.get_scorer`, and the description is the summary line of the wrapped function's
docstring, so a new scorer appears in the table without anyone editing the page.
"""

import inspect

__all__ = ["ScorerRow", "scorer_rows", "scorer_table_rst"]


class ScorerRow:
    """One row of the scorer table.

    Attributes
    ----------
    names : list of str
        The scorer names (aliases) that give this scorer, the first one the longest.
    function : str
        Fully qualified public name of the wrapped function (``skcalib.calibration_error``).
    kwargs : dict
        Fixed keyword arguments the scorer passes to the function.
    negated : bool
        True if the score is minus the function's value (a lower-is-better metric), False if
        it is the value itself (a p-value, greater is better).
    summary : str
        Summary (first paragraph) of the function's docstring.
    """

    def __init__(self, names, function, kwargs, negated, summary):
        self.names = names
        self.function = function
        self.kwargs = kwargs
        self.negated = negated
        self.summary = summary

    def __repr__(self):
        return f"ScorerRow({self.names!r}, {self.function!r}, {self.kwargs!r}, {self.negated!r})"


def _public_name(func):
    """``skcalib.<name>`` or ``skcalib.<sub>.<name>``: the shortest public path of ``func``."""
    import skcalib

    name = func.__name__
    if getattr(skcalib, name, None) is func:
        return f"skcalib.{name}"
    for sub in ("metrics", "scorers", "stats", "estimation"):
        module = getattr(skcalib, sub, None)
        if module is not None and getattr(module, name, None) is func:
            return f"skcalib.{sub}.{name}"
    raise ValueError(f"the scored function {func.__module__}.{name} is not public in skcalib")


def _summary(doc):
    """The summary of a numpydoc docstring: its first paragraph, joined into one line."""
    paragraph = (doc or "").strip().split("\n\n")[0]
    return " ".join(line.strip() for line in paragraph.splitlines())


def _describe(scorer):
    """(function, kwargs, negated, summary) of a scorer returned by ``skcalib.get_scorer``."""
    import skcalib
    from skcalib.scorers import CalibrationScorer, KLCEScorer

    if isinstance(scorer, CalibrationScorer):
        func = scorer._score_func
        kwargs = dict(scorer._kwargs)
        negated = scorer._sign < 0
    elif isinstance(scorer, KLCEScorer):
        func = skcalib.klce
        kwargs = dict(scorer._kwargs)
        negated = scorer._sign < 0
    elif type(scorer).__name__ == "_RiskScorer":
        func = skcalib.estimation.calibration_risk
        kwargs = {}
        negated = True
    else:
        raise TypeError(f"unknown scorer type {type(scorer).__name__}: teach "
                        "docs/sphinxext/scorer_table.py how to describe it")
    return _public_name(func), kwargs, negated, _summary(inspect.getdoc(func))


def scorer_rows():
    """Rows of the scorer table, one per distinct scorer, covering every scorer name.

    Returns
    -------
    list of ScorerRow
        In the order of the first (sorted) name of each row.
    """
    import skcalib

    rows = {}
    for name in skcalib.get_scorer_names():
        function, kwargs, negated, summary = _describe(skcalib.get_scorer(name))
        key = (function, repr(sorted(kwargs.items())), negated)
        if key in rows:
            rows[key].names.append(name)
        else:
            rows[key] = ScorerRow([name], function, kwargs, negated, summary)
    for row in rows.values():
        row.names.sort(key=lambda n: (-len(n), n))
    return sorted(rows.values(), key=lambda row: row.names[0])


def _kwargs_rst(kwargs):
    return ", ".join(f"``{k}={v!r}``" for k, v in kwargs.items())


def scorer_table_rst():
    """The scorer table as reStructuredText (a ``list-table``).

    Returns
    -------
    list of str
        The lines of the table.
    """
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 32 30 38",
        "   :class: scorer-table",
        "",
        "   * - scorer name(s)",
        "     - score: \N{MINUS SIGN} f or f, with f (fixed arguments)",
        "     - what ``f`` computes",
    ]
    for row in scorer_rows():
        names = [f"| ``{name}``" for name in row.names]
        score = f":func:`~{row.function}`"
        if row.kwargs:
            score += f" ({_kwargs_rst(row.kwargs)})"
        score = f"\N{MINUS SIGN} {score}" if row.negated else f"{score}, a p-value"
        lines += [f"   * - {names[0]}"]
        lines += [f"       {name}" for name in names[1:]]
        lines += [
            f"     - {score}",
            f"     - {row.summary}",
        ]
    return lines
