"""``reporting`` imports no private module of another package (stricter than the house count,
which allows a short list)."""

import pathlib
import re


ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_reporting_imports_no_private_module_of_another_package():
    paths = sorted((ROOT / "skcalib" / "reporting").glob("*.py"))
    assert len(paths) > 1  # (the package's modules)
    for path in paths:  # neither stats' private modules nor any other package's
        assert not re.search(r"from \.\.\w+\._", path.read_text()), path.name
