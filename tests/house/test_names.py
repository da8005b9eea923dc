"""Names that say what they are: no two helpers of different meanings share a name."""

import ast
import collections
import pathlib

import skcalib

PACKAGE = pathlib.Path(skcalib.__file__).parent


def _definitions():
    """``{function name: [module path, ...]}`` for every ``def`` in skcalib (methods included)."""
    found = collections.defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[node.name].append(str(path.relative_to(PACKAGE)))
    return found


def test_no_generic_newton():
    """The Newton solvers are named for what they solve (the inverse temperature, the
    multinomial and the binary logistic NLL), not three ``_newton``\\ s."""
    found = _definitions()
    assert "_newton" not in found
    for name in ("_inverse_temperature_newton", "_multinomial_newton",
                 "_scaled_logistic_newton"):
        assert len(found[name]) == 1, name


def test_one_confidence_level_check():
    assert _definitions()["check_confidence_level"] == ["_params.py"]


def test_method_params_is_sklearns_name_only():
    """``_check_method_params`` is scikit-learn's helper; skcalib names only its wrapper's
    fallback after it."""
    assert "_check_method_params" not in _definitions()
