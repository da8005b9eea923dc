"""The project's files: one source for the version, the packaging metadata, license, changelog,
citation, and CI building the docs after the tests."""

import os
import re
from importlib import metadata

import pytest

import skcalib


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


def test_ci_builds_the_docs_after_the_tests():
    lines = [line.strip() for line in _read(".ci", "run").splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert "set -euo pipefail" in lines
    assert lines.index("make test") < lines.index("make docs")
    makefile = _read("Makefile")
    docs_target = makefile.split("\ndocs:", 1)[1].split("\n\n", 1)[0]
    assert "-W" in docs_target and "check_build.py" in docs_target
