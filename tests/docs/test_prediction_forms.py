"""The section "What form do your predictions take?" of docs/errors.rst: its snippets run and
print what they say, in order, in one namespace."""

import doctest
import re
from pathlib import Path


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


def test_the_section_exists_with_its_table_and_snippets():
    section = _section()
    for form in ("Empirical", "Quantiles", "return_std=True", "scipy.stats", "[lower, upper]"):
        assert form in section, form
    blocks = _blocks(section)
    assert len(blocks) >= 8
    for token in ('estimator="fair"', "random_state=0", "pinball_loss", "interval_coverage_test",
                  "as_distribution(stats.norm", "QuantileRecalibration().fit(biased",
                  "SpreadScaling().fit", "ConformalQuantileRecalibration().fit"):
        assert any(token in src for _, src in blocks), token


def test_the_snippets_run_and_print_what_they_say():
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    globs = {}
    for k, (_, src) in enumerate(_blocks(_section())):
        test = parser.get_doctest(src, globs, f"prediction-forms[{k}]", "errors.rst", 0)
        result = runner.run(test, clear_globs=False)
        assert result.failed == 0, f"snippet {k} failed:\n{src}"
        globs = test.globs  # (a DocTest runs on a copy of the namespace it is given)
