"""The report renders byte for byte as it did before ``reporting`` became a package.

Seeded reports of every kind (binary and multiclass classification, string labels, a separated
class, normal and Laplace regression with too narrow, biased and calibrated predictions, a
multivariate regression, point predictions, a report above the block-estimator size) are rendered
as text (``str``), as HTML (``_repr_html_`` and ``to_html``) and as a dictionary, and compared
with the files in ``tests/reporting/golden/``, written by the code before the split. Nothing in
a report depends on the machine (no timings, no paths), so the comparison is exact for the text
and the HTML; the dictionary's floats are compared to 1e-12 relative (the last bits of a float
may move with the BLAS, the rendered digits do not).

Regenerate the files (only when a change of the output is intended) with
``PYTHONPATH=. python tests/reporting/test_golden_output.py`` (from the repository root).
"""

import json
import pathlib
import sys

import numpy as np
import pytest

from skcalib import calibration_report
from skcalib.distributions import Laplace, MultivariateNormal, Normal

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"
FAST = {"n_resamples": 50}


def _binary_overconfident():
    rng = np.random.default_rng(0)
    z = rng.normal(size=400)
    y = (rng.random(400) < 1 / (1 + np.exp(-z))).astype(int)
    return calibration_report(1 / (1 + np.exp(-2 * z)), y=y, **FAST)


def _binary_calibrated_strings():
    rng = np.random.default_rng(1)
    p = rng.uniform(0.05, 0.95, 300)
    y = np.where(rng.random(300) < p, "sick", "healthy")
    return calibration_report(np.column_stack([1 - p, p]), y=y, labels=["healthy", "sick"],
                              name="model", confidence_level=0.9, n_bins=10, **FAST)


def _multiclass():
    rng = np.random.default_rng(2)
    P = rng.dirichlet([1, 1, 1, 1], 300)
    y = (P.cumsum(1) > rng.random((300, 1))).argmax(1)
    sharp = P ** 2 / (P ** 2).sum(1, keepdims=True)  # over-confident
    return calibration_report(sharp, y=y, **FAST)


def _multiclass_separated():
    rng = np.random.default_rng(3)
    P = rng.dirichlet([2, 2, 2], 120)
    y = (P.cumsum(1) > rng.random((120, 1))).argmax(1)
    P[:, 2] = np.where(y == 2, 0.9, 0.0)  # class 2 separated from the others
    P /= P.sum(1, keepdims=True)
    return calibration_report(P, y=y, **FAST)


def _tiny():
    return calibration_report([0.2, 0.7, 0.4, 0.9, 0.1, 0.6], y=[0, 1, 1, 1, 0, 0], **FAST)


def _regression(scale, shift, seed, family=Normal, n=300):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    return calibration_report(family(mu - shift, np.full(n, scale)), y=y, **FAST)


def _multivariate():
    rng = np.random.default_rng(7)
    mean = rng.normal(size=(150, 2))
    y = mean + rng.normal(size=(150, 2))
    cov = np.tile(np.eye(2), (150, 1, 1))
    return calibration_report(MultivariateNormal(mean, cov), y=y, **FAST)


def _point_predictions():
    rng = np.random.default_rng(8)
    mu = rng.normal(size=100)
    return calibration_report(Normal(mu, np.zeros(100)), y=mu + rng.normal(size=100), **FAST)


def _mean_std_array():
    rng = np.random.default_rng(9)
    mu = rng.normal(size=200)
    y = mu + 1.3 * rng.normal(size=200)
    return calibration_report(np.column_stack([mu, np.ones(200)]), y=y, task="regression",
                              confidence_level=0.99, **FAST)


CASES = {
    "binary_overconfident": _binary_overconfident,
    "binary_calibrated_strings": _binary_calibrated_strings,
    "multiclass": _multiclass,
    "multiclass_separated": _multiclass_separated,
    "tiny": _tiny,
    "regression_calibrated": lambda: _regression(1.0, 0.0, 4),
    "regression_narrow": lambda: _regression(0.5, 0.0, 5),
    "regression_wide_biased": lambda: _regression(2.0, 0.4, 6, family=Laplace),
    "multivariate": _multivariate,
    "point_predictions": _point_predictions,
    "mean_std_array": _mean_std_array,
}


def _renderings(report):
    return {"txt": str(report), "html": report._repr_html_(),
            "page.html": report.to_html(),
            "json": json.dumps(report.to_dict(), indent=1, sort_keys=True) + "\n"}


def _assert_close(actual, expected, where):
    if isinstance(expected, dict):
        assert sorted(actual) == sorted(expected), where
        for key in expected:
            _assert_close(actual[key], expected[key], f"{where}.{key}")
    elif isinstance(expected, list):
        assert len(actual) == len(expected), where
        for k, (a, e) in enumerate(zip(actual, expected)):
            _assert_close(a, e, f"{where}[{k}]")
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=1e-12, abs=1e-300), where
    else:
        assert actual == expected, where


@pytest.mark.parametrize("case", sorted(CASES))
def test_report_renders_as_before(case):
    rendered = _renderings(CASES[case]())
    for kind in ("txt", "html", "page.html"):
        expected = (GOLDEN / f"{case}.{kind}").read_text(encoding="utf-8")
        assert rendered[kind] == expected, f"{case}.{kind} differs"
    expected = json.loads((GOLDEN / f"{case}.json").read_text(encoding="utf-8"))
    _assert_close(json.loads(rendered["json"]), expected, case)


if __name__ == "__main__":  # regenerate the golden files
    for name, make in CASES.items():
        for kind, text in _renderings(make()).items():
            (GOLDEN / f"{name}.{kind}").write_text(text, encoding="utf-8")
    sys.exit(0)
