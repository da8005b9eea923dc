"""The recalibrator registry: names -> classes, readable in ``recalibration/_registry.py``."""

import ast
import pathlib

import pytest

import skcalib
from skcalib import recalibration
from skcalib.recalibration import _registry


def test_every_name_is_a_public_class():
    for registry in (_registry.CLASSIFIER_RECALIBRATORS, _registry.REGRESSOR_RECALIBRATORS):
        for name, cls in registry.items():
            assert isinstance(cls, type), name
            assert getattr(recalibration, cls.__name__) is cls
            assert cls.__name__ in recalibration.__all__


def test_the_registry_is_a_literal_dict_of_class_names():
    """Followable by reading: every value of the two registries is written as a class name (no
    module strings, no import_module), and skcalib never resolves a module by a string."""
    path = pathlib.Path(_registry.__file__)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    registries = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            registries[node.targets[0].id] = node.value
    assert set(registries) == {"CLASSIFIER_RECALIBRATORS", "REGRESSOR_RECALIBRATORS"}
    for name, node in registries.items():
        values = {ast.literal_eval(k): v.id for k, v in zip(node.keys, node.values)}
        registry = getattr(_registry, name)
        assert {k: cls.__name__ for k, cls in registry.items()} == values
    package = pathlib.Path(skcalib.__file__).parent
    for module in package.rglob("*.py"):
        if module.name == "__init__.py" and module.parent == package:
            continue  # the lazy submodules of ``skcalib`` itself (PEP 562)
        assert "import_module" not in module.read_text(encoding="utf-8"), module


def test_dirichlet_by_name_is_dirichlet_calibration():
    est = recalibration.RecalibratedClassifier(recalibrator="dirichlet")
    assert type(est._recalibrator_template()) is recalibration.DirichletCalibration
    assert _registry.recalibrator_class("dirichlet", _registry.CLASSIFIER_RECALIBRATORS) \
        is recalibration.DirichletCalibration


def test_the_command_line_reads_the_registry_from_the_package_top():
    assert recalibration.CLASSIFIER_RECALIBRATORS is _registry.CLASSIFIER_RECALIBRATORS
    assert recalibration.REGRESSOR_RECALIBRATORS is _registry.REGRESSOR_RECALIBRATORS
    assert recalibration.method_names is _registry.method_names
    for name in ("CLASSIFIER_RECALIBRATORS", "REGRESSOR_RECALIBRATORS", "method_names"):
        assert name not in recalibration.__all__  # internal: not public API


def test_a_mistyped_name_gets_a_suggestion():
    with pytest.raises(ValueError, match=r"Did you mean 'dirichlet'\?"):
        _registry.recalibrator_class("dirichlt", _registry.CLASSIFIER_RECALIBRATORS)


def test_the_hyperparameter_hook_is_not_sklearns_name():
    """Recalibrators check their own hyper-parameters in ``_check_own_params``; the name
    ``_check_method_params`` is scikit-learn's (fit parameters), reached through
    ``skcalib._sklearn_compat.check_method_params`` only."""
    for name in recalibration.__all__:
        cls = getattr(recalibration, name)
        assert not hasattr(cls, "_check_method_params"), name
    with pytest.raises(ValueError, match=r"^objective must be one of"):
        recalibration.TemperatureScaling(objective="brier")._check_own_params()
