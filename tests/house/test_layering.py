"""Imports flow one way: every skcalib module imports only modules of its own or a lower layer.

The imports of every module are read from its source (``ast``, so imports inside functions count
too, and nothing is executed). Each module is placed in a layer by the table below (longest
matching prefix); an import of a higher layer, a module missing from the table, or a cycle among
the modules fails.
"""

import importlib.util
import pathlib

import pytest


def _load_house_counts():
    """``tools/house_counts.py`` (not a package): its import reader serves both checks."""
    path = pathlib.Path(__file__).resolve().parents[2] / "tools" / "house_counts.py"
    spec = importlib.util.spec_from_file_location("house_counts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOUSE = _load_house_counts()

#: Layers, bottom first. A module may import modules of its own layer or of lower ones only.
#: A name covers the module and its submodules; ``package.*`` covers the submodules only (an
#: exact name wins over it).
#: ``_expectations`` (closed-form kernel expectations, target checks) sits between kernels and
#: distributions, so that ``distributions.expected_kernel`` needs nothing from ``metrics``.
#: ``_predictions`` (a fitted model's predictive distribution) sits just above distributions, so
#: that the scorers and the recalibration meta-estimators both import it from below. The
#: recalibrators sit below the estimation functions (both fit temperatures with the solvers of
#: the _problems floor).
LAYERS = [
    # _estimator_checks: the reasons for the expected failures of scikit-learn's estimator
    # checks; it imports nothing from skcalib
    # _sklearn_compat: the only module that may import scikit-learn's private helpers (wrapped)
    # _optional: optional dependencies (matplotlib) imported on first use
    # _params: the checks of scalar parameters, re-exported by the _validation gate
    ("skcalib._validation", "skcalib._params", "skcalib._estimator_checks",
     "skcalib._sklearn_compat", "skcalib._optional"),
    ("skcalib.kernels",),
    ("skcalib._expectations",),
    ("skcalib.distributions",),
    ("skcalib._predictions",),
    # _dask: chunk-by-chunk reductions of Dask arrays (mergeable per-bin / per-block sums)
    ("skcalib._pairwise", "skcalib._dask"),
    # _problems: the shared floor of every upper package -- validated predictions, resolved
    # kernels, pair terms, the UCME witness, the local (KLCE) problem, the binnings
    ("skcalib._problems",),
    ("skcalib.metrics", "skcalib.datasets"),
    ("skcalib.stats",),
    ("skcalib.recalibration",),
    ("skcalib.estimation",),
    ("skcalib.scorers",),
    ("skcalib.plotting",),
    # reporting: calibration_report (numbers from metrics/stats, figures from plotting)
    ("skcalib.reporting",),
    # _cli: the command line behind ``skcalib`` / ``python -m skcalib``
    ("skcalib.__main__", "skcalib._cli", "skcalib"),
]

LAYER_OF = {name: level for level, names in enumerate(LAYERS) for name in names}


MODULES = HOUSE.modules()


def layer(module):
    """Layer of ``module``: its own entry, else that of its nearest listed parent package
    (``parent.*`` before ``parent``)."""
    if module in LAYER_OF:
        return LAYER_OF[module]
    parts = module.split(".")
    for k in range(len(parts) - 1, 0, -1):
        parent = ".".join(parts[:k])
        for name in (parent + ".*", parent):
            if name in LAYER_OF:
                return LAYER_OF[name]
    return None


def imports_in(source, module, is_package=False):
    """The skcalib modules imported anywhere in ``source`` (the text of ``module``), with lines
    (the reader of ``tools/house_counts.py``)."""
    return HOUSE.imports_in(source, module, is_package, MODULES)


def skcalib_imports(module):
    """The skcalib modules that ``module`` imports anywhere in its source, with line numbers."""
    path = MODULES[module]
    return imports_in(path.read_text(encoding="utf-8"), module, path.name == "__init__.py")


def test_table_covers_every_module():
    missing = sorted(m for m in MODULES if layer(m) is None)
    assert not missing, f"modules without a layer in tests/house/test_layering.py: {missing}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_go_down(module):
    own = layer(module)
    if own is None:
        pytest.fail(f"{module} has no layer in the table")
    upward = [f"{target} (layer {layer(target)}) at line {line}"
              for target, line in skcalib_imports(module)
              if layer(target) is None or layer(target) > own]
    assert not upward, f"{module} (layer {own}) imports upward: {upward}"


def test_no_import_cycles():
    """No strongly connected component of the module import graph has two members (Tarjan).

    A module's imports of its own parent packages are left out: a submodule reading a name of its
    package's ``__init__`` inside a function (``_cli._demo`` uses ``skcalib.brier_score``)
    runs after the package has been imported, so it cannot form an import-time cycle."""
    graph = {m: {t for t, _ in skcalib_imports(m) if t != m and not m.startswith(t + ".")}
             for m in MODULES}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles among skcalib modules: {cycles}"


def test_kernels_and_distributions_one_way():
    """``distributions`` may import ``kernels`` (through ``_expectations``); never the reverse."""
    assert all(not t.startswith("skcalib.distributions")
               for t, _ in skcalib_imports("skcalib.kernels"))
    assert all(not t.startswith(("skcalib.distributions", "skcalib.metrics"))
               for t, _ in skcalib_imports("skcalib._expectations"))


def test_checker_sees_every_kind_of_import():
    """The checker itself: relative (one and two levels), absolute and function-local imports,
    and ``from package import submodule`` resolved to the submodule."""
    source = ("import numpy\nfrom . import kernels\nimport skcalib.metrics._kernel\n"
              "from .._pairwise import u_statistic\n"
              "def f():\n    from ..distributions import Normal\n"
              "    from . import _binned, no_such_module\n")
    found = imports_in(source, "skcalib.metrics._binned")
    # ``from . import kernels`` inside skcalib.metrics is a name of the package, not a module
    assert sorted(t for t, _ in found) == [
        "skcalib._pairwise", "skcalib.distributions", "skcalib.metrics", "skcalib.metrics",
        "skcalib.metrics._binned", "skcalib.metrics._kernel"]
    assert dict(found)["skcalib.distributions"] == 6
    package_found = imports_in("from . import kernels\nfrom .metrics import skce\n", "skcalib",
                               is_package=True)
    assert sorted(t for t, _ in package_found) == ["skcalib.kernels", "skcalib.metrics"]
    # a lower module importing a higher one is what the layering test flags
    assert layer("skcalib.distributions") > layer("skcalib._validation")
    assert layer("skcalib.metrics._kernel") == layer("skcalib.metrics")
    # the whole recalibration package below estimation, predict_distribution below both
    assert layer("skcalib.recalibration._new") < layer("skcalib.estimation._cv")
    assert layer("skcalib.recalibration._meta") == layer("skcalib.recalibration")
    assert layer("skcalib._predictions") < layer("skcalib.recalibration") < layer("skcalib.scorers")
