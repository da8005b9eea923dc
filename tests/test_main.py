"""The command line demo (``python -m skcalib demo``) prints a p-value beside the SKCE."""

import contextlib
import io

import numpy as np
import pytest

import skcalib
import skcalib.stats
from skcalib.__main__ import main


@pytest.fixture(scope="module")
def demo_run():
    """Run the demo once, recording every call of ``skcalib.stats.skce_test`` it makes."""
    calls = []
    original = skcalib.stats.skce_test

    def recording(y_true, y_pred, **kwargs):
        result = original(y_true, y_pred, **kwargs)
        calls.append((np.array(y_true), np.array(y_pred), kwargs, result))
        return result

    mp = pytest.MonkeyPatch()
    mp.setattr(skcalib.stats, "skce_test", recording)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            code = main(["demo", "--random-state", "0"])
    finally:
        mp.undo()
    return code, out.getvalue(), calls


def _rows(text):
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("model"))
    rows = []
    for line in lines[header + 2:]:
        if not line.strip():
            break
        rows.append(line)
    return lines[header], rows


def test_demo_prints_a_pvalue_column(demo_run):
    code, text, calls = demo_run
    assert code == 0
    header, rows = _rows(text)
    cols = header.split()
    assert "p-value" in cols and cols.index("p-value") == cols.index("SKCE") + 1
    assert len(rows) == 3 and len(calls) == 3
    # one sentence on how to read it
    assert "below 0.05 is evidence of" in text and "calibrated model gives an SKCE" in text
    assert "coming" not in text


def test_demo_pvalue_and_skce_are_those_of_the_test(demo_run):
    _, text, calls = demo_run
    _, rows = _rows(text)
    for line, (y, P, kwargs, result) in zip(rows, calls):
        fields = line.split()
        skce_printed, p_printed = float(fields[-4]), float(fields[-3])
        assert kwargs["method"] == "bootstrap" and kwargs["random_state"] == 0
        assert result.n_resamples == 1000
        # the SKCE column is the unbiased SKCE of skcalib.skce (an independent code path) ...
        expected = skcalib.skce(y, P, labels=kwargs["labels"])
        assert skce_printed == pytest.approx(expected, rel=5e-3)
        # ... and the p-value column the test's p-value, a Monte-Carlo p-value >= 1/1001
        assert p_printed == pytest.approx(result.pvalue, abs=5e-4)
        assert 1.0 / 1001.0 <= result.pvalue <= 1.0


def test_demo_rejects_the_naive_bayes_model(demo_run):
    # Gaussian naive Bayes is badly calibrated on digits (ECE ~ 0.16): the test must see it.
    _, text, _ = demo_run
    _, rows = _rows(text)
    nb = next(line for line in rows if line.startswith("gaussian naive Bayes"))
    assert float(nb.split()[-3]) < 0.01
