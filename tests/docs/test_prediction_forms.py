"""The section "What form do your predictions take?" of docs/errors.rst: its snippets run and
print what they say, in order, in one namespace.

A snippet introduced by a paragraph saying "once merged" uses a name of issue 23 that another
branch adds (the fair CRPS, the randomised PIT, the pinball loss, the interval coverage test,
scipy.stats laws, quantile recalibration of the new forms); it runs as soon as the feature is
there and is skipped, by name, until then. Every such snippet must be listed in ``PENDING`` with
the check of its feature, so a new one cannot be skipped silently.
"""

import doctest
import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import skcalib

ROOT = Path(__file__).resolve().parents[2]
HEADING = "What form do your predictions take?"


def _section():
    text = (ROOT / "docs" / "errors.rst").read_text(encoding="utf-8")
    start = text.index(HEADING)
    # up to the next subsection heading (a line of ~ under a title)
    nxt = re.search(r"\n([^\n]+)\n~{4,}\n", text[start + len(HEADING) + 40:])
    return text[start:start + len(HEADING) + 40 + nxt.start()]


def _last_paragraph(lines):
    paragraphs = "\n".join(lines).strip().split("\n\n")
    return paragraphs[-1]


def _blocks(section):
    """``[(paragraph before, doctest source)]``: each run of ``>>>`` lines with their
    outputs, and the paragraph that introduces it."""
    out, prose, block = [], [], []
    for line in section.splitlines():
        if line.startswith((">>>", "...")) or (block and line.strip()):
            block.append(line)
        else:
            if block:
                out.append((_last_paragraph(prose), "\n".join(block) + "\n"))
                prose, block = [], []
            prose.append(line)
    if block:
        out.append((_last_paragraph(prose), "\n".join(block) + "\n"))
    return out


def _accepts(func, name):
    return name in inspect.signature(func).parameters


def _scipy_laws():
    from scipy import stats

    try:
        skcalib.distributions.as_distribution(stats.norm(np.zeros(2), 1.0))
    except (TypeError, ValueError):
        return False
    return True


def _recalibrates_empirical():
    from skcalib.distributions import Empirical
    from skcalib.recalibration import QuantileRecalibration

    d = Empirical(np.arange(12.0).reshape(4, 3))
    try:
        QuantileRecalibration().fit(d, np.arange(4.0)).transform(d)
    except TypeError:
        return False
    return True


#: a token of each pending snippet -> whether its feature exists on this tree
PENDING = {
    'estimator="fair"': lambda: _accepts(skcalib.crps, "estimator")
    and _accepts(skcalib.pit, "random_state"),
    "pinball_loss": lambda: hasattr(skcalib, "pinball_loss"),
    "interval_coverage_test": lambda: hasattr(skcalib.stats, "interval_coverage_test"),
    "as_distribution(stats.norm": _scipy_laws,
    "QuantileRecalibration().fit(biased": _recalibrates_empirical,
}


def test_the_section_exists_with_its_table_and_snippets():
    section = _section()
    for form in ("Empirical", "Quantiles", "return_std=True", "scipy.stats", "[lower, upper]"):
        assert form in section, form
    blocks = _blocks(section)
    assert len(blocks) >= 8
    pending = [src for prose, src in blocks if "once merged" in prose.lower()]
    for src in pending:  # every pending snippet has the check of its feature
        assert any(token in src for token in PENDING), src


def _run_snippets():
    """Run the snippets in order in one namespace; the pending ones whose feature is missing
    are left out. Returns the tokens of those left out."""
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs, missing = {}, []
    for k, (prose, src) in enumerate(_blocks(_section())):
        if "once merged" in prose.lower():
            token = next(t for t in PENDING if t in src)
            if not PENDING[token]():
                missing.append(token)
                continue
        test = parser.get_doctest(src, globs, f"prediction-forms[{k}]", "errors.rst", 0)
        result = runner.run(test, clear_globs=False)
        assert result.failed == 0, f"snippet {k} failed:\n{src}"
        globs = test.globs  # (a DocTest runs on a copy of the namespace it is given)
    return missing


def test_the_snippets_run_and_print_what_they_say():
    _run_snippets()


def test_every_pending_snippet_has_its_feature():
    missing = [token for token, available in PENDING.items() if not available()]
    if missing:
        pytest.skip(f"features not on this tree yet (issue 23 branches): {missing}")
