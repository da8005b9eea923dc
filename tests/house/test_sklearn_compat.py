"""scikit-learn's private helpers are imported by ``skcalib/_sklearn_compat.py`` only, and each
wrapper there agrees with its fallback."""

import ast
import pathlib

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn
from numpy.testing import assert_array_equal
from sklearn.linear_model import LogisticRegression

import skcalib
from skcalib import _sklearn_compat as compat
from skcalib.recalibration import TemperatureScaling


pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _score_frame(n=300, C=3, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(C), size=n)
    y = (rng.random((n, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=C - 1)
    return pd.DataFrame(P, columns=[f"p{k}" for k in range(C)]), y


# ---------------------------------------------------------------------------------------------
# 4. scikit-learn's private helpers: wrapped in one module, each tested here

SKCALIB_DIR = pathlib.Path(skcalib.__file__).resolve().parent


def _private_sklearn_imports(path):
    """``(line, what)`` of every import of a private scikit-learn name or module in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "sklearn" and any(p.startswith("_") for p in parts[1:]):
                    found.append((node.lineno, alias.name))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != "sklearn":
                continue
            if any(p.startswith("_") for p in parts[1:]):
                found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not (
                node.attr.startswith("__")):
            # sklearn.utils._x written out in the code
            base, chain = node.value, [node.attr]
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id == "sklearn":
                found.append((node.lineno, ".".join(["sklearn"] + chain[::-1])))
    return found


def test_the_private_import_finder_finds_them(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("from sklearn.utils import _safe_indexing, check_array\n"
                   "from sklearn.utils._tags import Tags\n"
                   "import sklearn.utils._testing\n"
                   "import sklearn\nx = sklearn.utils._param_validation\n"
                   "from sklearn.utils.validation import check_is_fitted\n"
                   "from sklearn import __version__\n")
    assert [w for _, w in _private_sklearn_imports(src)] == [
        "sklearn.utils._safe_indexing", "sklearn.utils._tags", "sklearn.utils._testing",
        "sklearn.utils._param_validation"]


def test_only_the_compat_module_imports_private_sklearn_names():
    offenders = {}
    for path in sorted(SKCALIB_DIR.rglob("*.py")):
        if path.name == "_sklearn_compat.py" and path.parent == SKCALIB_DIR:
            continue
        found = _private_sklearn_imports(path)
        if found:
            offenders[str(path.relative_to(SKCALIB_DIR))] = found
    assert not offenders, ("private scikit-learn names imported outside "
                           f"skcalib/_sklearn_compat.py: {offenders}")
    assert _private_sklearn_imports(SKCALIB_DIR / "_sklearn_compat.py")  # they are wrapped there


def test_routing_enabled_follows_the_config():
    from sklearn.utils.metadata_routing import _routing_enabled

    assert compat.routing_enabled() is False
    with sklearn.config_context(enable_metadata_routing=True):
        assert compat.routing_enabled() is True
        assert _routing_enabled() is True
    assert compat.routing_enabled() is _routing_enabled() is False


def _containers():
    A = np.arange(12.0).reshape(6, 2)
    return [A, A.tolist(), pd.DataFrame(A, columns=["a", "b"]), pd.Series(A[:, 0]),
            sp.csr_matrix(A), sp.coo_matrix(A), A[:, 0]]


@pytest.mark.parametrize("impl", [compat.num_samples, compat._num_samples_fallback])
def test_num_samples(impl):
    for X in _containers():
        assert impl(X) == 6
    for bad in (3.0, np.float64(2.0), LogisticRegression()):
        with pytest.raises(TypeError):
            impl(bad)


def _as_array(X):
    if sp.issparse(X):
        return X.toarray()
    return np.asarray(X)


@pytest.mark.parametrize("impl", [compat.safe_indexing, compat._safe_indexing_fallback])
def test_safe_indexing(impl):
    idx = np.array([4, 0, 2])
    mask = np.array([True, False, True, False, False, True])
    for X in _containers():
        if sp.issparse(X) and X.format == "coo":
            continue  # (scikit-learn does not index COO matrices; check_method_params converts)
        rows = impl(X, idx)
        assert type(rows) is type(X) or sp.issparse(X)
        assert_array_equal(_as_array(rows), _as_array(X)[idx])
        assert_array_equal(_as_array(impl(X, mask)), _as_array(X)[mask])
        if hasattr(X, "iloc"):  # pandas keeps the index
            assert list(rows.index) == [4, 0, 2]
    X = _containers()[0]
    assert impl(X, None) is X


@pytest.mark.parametrize("impl", [compat.check_method_params,
                                  compat._check_method_params_fallback])
def test_check_method_params(impl):
    X = np.zeros((6, 2))
    w = np.arange(6.0)
    groups = list("aabbcc")
    params = {"sample_weight": w, "groups": groups, "C": 1.0, "other": np.arange(3),
              "weights_df": pd.Series(w), "sparse": sp.csr_matrix(np.eye(6)), "none": None}
    out = impl(X, params, indices=[5, 1])
    assert_array_equal(out["sample_weight"], [5.0, 1.0])
    assert list(out["groups"]) == ["c", "a"]
    assert out["C"] == 1.0 and out["none"] is None
    assert_array_equal(out["other"], np.arange(3))  # not per-sample: passed through
    assert_array_equal(np.asarray(out["weights_df"]), [5.0, 1.0])
    assert_array_equal(out["sparse"].toarray(), np.eye(6)[[5, 1]])
    assert_array_equal(w, np.arange(6.0))  # not mutated


def test_compat_wrappers_agree_with_their_fallbacks():
    """On the installed scikit-learn, each wrapper is scikit-learn's helper; its fallback (for
    a release without it) gives the same results."""
    from sklearn.utils import _safe_indexing
    from sklearn.utils.validation import _check_method_params, _num_samples

    assert compat._sk_safe_indexing is _safe_indexing
    assert compat._sk_num_samples is _num_samples
    assert compat._sk_check_method_params is _check_method_params


def test_check_feature_names():
    X, y = _score_frame()
    est = TemperatureScaling()
    compat.check_feature_names(est, X, reset=True)
    assert list(est.feature_names_in_) == ["p0", "p1", "p2"]
    compat.check_feature_names(est, X, reset=False)
    with pytest.raises(ValueError, match="feature names"):
        compat.check_feature_names(est, X[["p1", "p0", "p2"]], reset=False)
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        compat.check_feature_names(est, X.to_numpy(), reset=False)
    compat.check_feature_names(est, X.to_numpy()[:, 0], reset=True)  # 1-D scores: no error
    assert not hasattr(est, "feature_names_in_")
