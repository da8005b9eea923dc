"""Content of the documentation pages: the tie rule of top-label correctness, the whole
recalibrator family."""

import os
import re

import numpy as np
import pytest

import skcalib
from skcalib import calibration_error


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# --------------------------------------------------------------------------------------------
# Stale content: the tie rule, the recalibrator family


def _read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def test_tie_rule_is_stated_wherever_top_label_correctness_is_defined():
    errors = _read("docs", "errors.rst")
    # the modes table and the MMCE section define correctness by the tie rule, not by argmax
    assert "correctness :math:`1\\{y = \\arg\\max_k p_k\\}` (Guo" not in errors
    assert "correctness :math:`1\\{y \\in A\\} / |A|`" in errors
    assert "**Tied maxima.**" in errors and "uniform draw among them" in errors
    assert "c_i = 1\\{y_i \\in A_i\\}" in errors
    doc = skcalib.mmce.__doc__
    assert "uniform draw among the tied classes" in doc and "1{y in A} / |A|" in doc
    from skcalib.metrics import _binned

    assert "1{y in A} / |A|" in _binned.__doc__


def test_tie_rule_as_stated():
    # two rows tied between classes 0 and 1: the true class 0 counts 1/2, the class 2 counts 0
    P = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    y = np.array([0, 2, 2])
    c = np.array([0.5, 0.0, 1.0])
    r = P.max(axis=1)
    ece = calibration_error(y, P, n_bins=1, mode="top_label", labels=[0, 1, 2])
    assert ece == pytest.approx(abs(np.mean(c) - np.mean(r)), abs=1e-15)
    # MMCE^2 (biased, V-statistic) with the default kernel exp(-|r - r'| / 0.4)
    K = np.exp(-np.abs(r[:, None] - r[None, :]) / 0.4)
    value = np.mean(np.outer(c - r, c - r) * K)
    assert skcalib.mmce(y, P, squared=True, labels=[0, 1, 2]) == pytest.approx(value, rel=1e-12)


def test_docs_present_the_whole_recalibrator_family():
    from skcalib import recalibration

    recal = _read("docs", "recalibration.rst")
    landing = _read("docs", "index.rst")
    api = _read("docs", "api.rst")
    assert "provides one such map" not in recal
    for name in ("Platt scaling", "Dirichlet", "isotonic", "Venn--Abers", "quantile"):
        assert name in recal.split("Temperature scaling of classifiers")[0], name
        assert name in landing.split("and shows it with")[0], name
    for name in recalibration.__all__:
        assert f":class:`{name}`" in recal, name
        assert re.search(rf"^   {name}$", api, flags=re.M), name
