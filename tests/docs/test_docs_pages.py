"""The documentation pages: command lines activate the environment before a bare ``skcalib``; the
``mode`` value is spelled as ``mode=`` accepts it."""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


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
