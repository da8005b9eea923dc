"""The house counts of ``tools/house_counts.py``: the package stays within its ceilings, and the
counting functions count what their docstrings say (checked on small synthetic packages).

The script is imported by path (``tools/`` is not a package).
"""

import importlib.util
import pathlib
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def house():
    path = ROOT / "tools" / "house_counts.py"
    spec = importlib.util.spec_from_file_location("house_counts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(root, files):
    """Write ``{relative path: source}`` under ``root`` (sources dedented)."""
    for rel, source in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")


# --------------------------------------------------------------------------------------------
# The package within its ceilings


def test_the_script_counts_the_real_package(house):
    assert house.PACKAGE_DIR == ROOT / "skcalib"
    names = house.modules()
    assert "skcalib" in names and "skcalib.metrics" in names and "skcalib._validation" in names


def test_private_cross_package_imports_are_allowed_and_few(house):
    imports = house.private_cross_imports()
    unlisted = [f"{a}:{line} imports {b}" for a, b, line in imports
                if (a, b) not in house.ALLOWED_PRIVATE_IMPORTS]
    assert not unlisted, "\n".join(unlisted)
    assert len(imports) <= house.MAX_PRIVATE_IMPORTS


def test_no_module_over_the_line_ceiling(house):
    assert house.long_modules() == []


def test_no_function_over_the_code_line_ceiling(house):
    assert house.long_functions() == []


def test_the_allow_list_gives_a_reason_for_every_entry(house):
    for (importer, imported), reason in house.ALLOWED_PRIVATE_IMPORTS.items():
        assert importer.startswith("skcalib") and imported.startswith("skcalib")
        assert isinstance(reason, str) and reason.strip(), (importer, imported)


# --------------------------------------------------------------------------------------------
# The counting functions, on synthetic sources


def test_function_code_lines_count_only_code(house, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent('''\
        import functools


        @functools.lru_cache
        def documented(a,
                       b):
            """A docstring
            of three lines.
            """
            # a comment-only line

            x = a + b  # a comment after code is code
            text = """a string
            of two lines"""

            def nested():
                return x
            return x, text, nested


        class C:
            def method(self):
                """One-line docstring."""
                pass

            async def coroutine(self):
                # only a comment
                return 1
        '''), encoding="utf-8")
    counted = {name: n for name, line, n in house.function_code_lines(path)}
    # documented: the two lines of its signature, x = ..., the two lines of the string, the
    # nested def and its return, the final return: 8 (not its decorator, docstring, comment or
    # blank lines); nested: its def and its return.
    assert counted == {"documented": 8, "documented.nested": 2, "C.method": 2,
                       "C.coroutine": 2}
    lines = {name: line for name, line, n in house.function_code_lines(path)}
    assert lines["documented"] == 5 and lines["C.method"] == 22


def test_long_functions_and_modules_use_their_ceilings(house, tmp_path, monkeypatch):
    pkg = tmp_path / "skcalib"
    _write(pkg, {
        "__init__.py": "",
        "small.py": "def f():\n    return 1\n",
        "big.py": "def g():\n" + "".join(f"    x{i} = {i}\n" for i in range(6)) + "    return 0\n",
    })
    monkeypatch.setattr(house, "PACKAGE_DIR", pkg)
    monkeypatch.setattr(house, "MAX_FUNCTION_CODE_LINES", 7)
    monkeypatch.setattr(house, "MAX_MODULE_LINES", 7)
    assert house.long_functions() == [("skcalib/big.py:1", "g", 8)]
    assert house.long_modules() == [("skcalib/big.py", 8)]
    monkeypatch.setattr(house, "MAX_FUNCTION_CODE_LINES", 8)
    monkeypatch.setattr(house, "MAX_MODULE_LINES", 8)
    assert house.long_functions() == [] and house.long_modules() == []


def test_private_cross_package_imports_count_only_another_packages_private_modules(
        house, tmp_path, monkeypatch):
    pkg = tmp_path / "skcalib"
    _write(pkg, {
        "__init__.py": "",
        "_validation.py": "def check():\n    pass\n",
        "_problems/__init__.py": "",
        "_problems/kernel.py": "def problem():\n    pass\n",
        "metrics/__init__.py": "from ._kernel import skce\n",
        "metrics/_kernel.py": "def skce():\n    pass\n",
        "metrics/_binned.py": """\
            from ._kernel import skce                   # own package: no
            from skcalib.metrics._kernel import skce    # own package, absolute: no
            """,
        "stats/__init__.py": "",
        "stats/_skce.py": """\
            from .._validation import check             # top-level private module: no
            from .._problems.kernel import problem      # the shared floor: no
            from ..metrics import skce                  # public name: no
            from ..metrics._kernel import skce as s     # another package's private module: yes


            def late():
                import skcalib.metrics._kernel          # function level: yes
                from skcalib.metrics import _kernel     # the module as a name: yes
                return _kernel
            """,
        "stats/sub/__init__.py": "from ...metrics import _kernel  # from a subpackage: yes\n",
        "reporting.py": "from .stats._skce import late  # a top-level module: yes\n",
    })
    monkeypatch.setattr(house, "PACKAGE_DIR", pkg)
    found = house.private_cross_imports()
    assert found == [
        ("skcalib.reporting", "skcalib.stats._skce", 1),
        ("skcalib.stats._skce", "skcalib.metrics._kernel", 4),
        ("skcalib.stats._skce", "skcalib.metrics._kernel", 8),
        ("skcalib.stats._skce", "skcalib.metrics._kernel", 9),
        ("skcalib.stats.sub", "skcalib.metrics._kernel", 1),
    ]


def test_owner_of_private(house):
    assert house.owner_of_private("skcalib.metrics._kernel") == "skcalib.metrics"
    assert house.owner_of_private("skcalib.stats._skce.inner") == "skcalib.stats"
    assert house.owner_of_private("skcalib.metrics") is None
    assert house.owner_of_private("skcalib._validation") is None
    assert house.owner_of_private("skcalib._problems.kernel") is None
