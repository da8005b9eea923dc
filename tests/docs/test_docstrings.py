"""numpydoc validation of the public API: every public function, class and method documents
each of its parameters and what it returns.

The checked codes (numpydoc's ``validate``): GL08 no docstring, SS01 no summary, PR01 a parameter
is not documented, PR02 a documented parameter does not exist, PR03 parameters out of order, PR07
a parameter has no description, PR10 missing space before the colon, RT01 no Returns section.
See Also / Examples / extended-summary sections (SA01, EX01, ES01) are encouraged, not required.
"""

import importlib
import inspect

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

CHECKS = ("GL08", "SS01", "PR01", "PR02", "PR03", "PR07", "PR10", "RT01")

MODULES = ["skcalib", "skcalib.recalibration", "skcalib.estimation", "skcalib.kernels",
           "skcalib.distributions", "skcalib.datasets", "skcalib.scorers", "skcalib.metrics"]
#: Optional modules checked once they exist (the hypothesis tests and plotting issues).
OPTIONAL_MODULES = ["skcalib.stats", "skcalib.plotting", "skcalib.reporting"]


def _public_objects():
    seen, names = set(), []
    modules = list(MODULES)
    for m in OPTIONAL_MODULES:
        try:
            importlib.import_module(m)
        except ImportError:
            continue
        modules.append(m)
    for m in modules:
        mod = importlib.import_module(m)
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.ismodule(obj) or not hasattr(obj, "__qualname__"):
                continue
            qual = f"{obj.__module__}.{obj.__qualname__}"
            if qual in seen:
                continue
            seen.add(qual)
            names.append(qual)
            if inspect.isclass(obj):
                # public methods skcalib defines (inherited scikit-learn ones are scikit-learn's)
                for klass in obj.__mro__:
                    if not klass.__module__.startswith("skcalib"):
                        continue
                    for attr_name, attr in vars(klass).items():
                        # classmethods (the Displays' from_predictions/from_estimator) are
                        # not callable in the class __dict__, but are public API
                        is_method = callable(attr) or isinstance(attr, (classmethod,
                                                                         staticmethod))
                        if attr_name.startswith("_") or not is_method:
                            continue
                        q = f"{qual}.{attr_name}"
                        if q not in seen:
                            seen.add(q)
                            names.append(q)
    return names


PUBLIC = _public_objects()


def test_the_public_api_is_collected():
    assert len(PUBLIC) > 80
    assert "skcalib.metrics._kernel.skce" in PUBLIC
    assert "skcalib.recalibration._temperature.TemperatureScaling.fit" in PUBLIC
    assert "skcalib.plotting._local.LocalCalibrationBiasDisplay.from_predictions" in PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_numpydoc_validation(name):
    result = numpydoc_validate.validate(name)
    errors = [f"{code}: {msg}" for code, msg in result["errors"] if code in CHECKS]
    assert not errors, f"{name}:\n" + "\n".join(errors)
