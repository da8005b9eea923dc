"""The scalar-parameter checks (``skcalib._params``), re-exported by the ``_validation`` gate."""

import pytest

from skcalib import _params, _validation
from skcalib.stats import _result


def test_every_check_is_importable_from_the_gate():
    for name in _params.__all__:
        assert getattr(_validation, name) is getattr(_params, name), name


def test_the_gate_is_under_the_module_ceiling():
    import pathlib

    path = pathlib.Path(_validation.__file__)
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 1000


@pytest.mark.parametrize("level", [0.5, 0.95, 1 - 1e-12])
def test_confidence_level_alone(level):
    assert _params.check_confidence_level(level) == level


@pytest.mark.parametrize("bad, exc, match", [
    (0.0, ValueError, r"^confidence_level must be > 0"), (1.0, ValueError, r"must be < 1"),
    (True, TypeError, r"^confidence_level must be a real"), ("0.9", TypeError, r"real number"),
])
def test_confidence_level_refused(bad, exc, match):
    with pytest.raises(exc, match=match):
        _params.check_confidence_level(bad)


@pytest.mark.parametrize("alternative", _params.ALTERNATIVES)
def test_confidence_level_with_an_alternative(alternative):
    assert _params.check_confidence_level(0.9, alternative) == 0.9


@pytest.mark.parametrize("alternative", [None, "two_sided", 1])
def test_a_passed_alternative_is_checked(alternative):
    """None passed as the alternative is refused (as the results' intervals always did); the
    level is checked first."""
    with pytest.raises(ValueError, match=r"^alternative must be one of"):
        _params.check_confidence_level(0.9, alternative)
    with pytest.raises(ValueError, match=r"^confidence_level must be < 1"):
        _params.check_confidence_level(1.5, alternative)


def test_one_confidence_level_check():
    """The hypothesis tests' results use the gate's check (no twin in stats._result)."""
    assert _result.check_confidence_level is _validation.check_confidence_level
