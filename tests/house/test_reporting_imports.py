"""``reporting`` imports no private module of ``stats``."""

import pathlib
import re


ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_reporting_imports_no_private_module_of_stats():
    source = (ROOT / "skcalib" / "reporting.py").read_text()
    assert not re.search(r"from \.stats\._", source)
