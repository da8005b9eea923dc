"""Smoke test of ``benchmarks/bench_regression_forms.py`` at tiny sizes (no timing asserted):
every line is printed with a verdict and the stored peer multiples are used as stated."""

import importlib.util
import pathlib
import sys

import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_regression_forms.py"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(_PATH.parent))
    try:
        spec = importlib.util.spec_from_file_location("bench_regression_forms", _PATH)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(_PATH.parent))
    return module


def test_sections_run_and_report_verdicts(bench, capsys):
    rep = bench.Report()
    bench.bench_skce(rep, 30, 4, 1, before=True)
    bench.bench_crps(rep, 500, 10, 1)
    rows = dict(rep.rows)
    assert rows["1. skce Empirical n=30 m=4 vs exp floor"] in ("PASS", "FAIL")
    assert rows["1. skce generic double sums (before) vs exp floor"] == "info"
    for label in ("plug-in", "fair"):
        per_sort = bench.PEER_PER_SORT[label][1]
        assert rows[f"2. crps {label} vs peer (stored {per_sort:.2f} sorts)"] in ("PASS", "FAIL")
    out = capsys.readouterr().out
    assert "machine-relative" in out and "tracemalloc peak" in out
    # the factorised tile was restored after the "before" line
    assert bench._empirical._FACTORED_SPREAD > 0


def test_exp_floor_counts_values(bench, monkeypatch):
    calls = []
    real = bench.np.exp

    def counting(x, out=None):
        calls.append(x.size)
        return real(x, out=out)

    monkeypatch.setattr(bench, "EXP_CHUNK", 7)
    run = bench.exp_floor(30)
    monkeypatch.setattr(bench.np, "exp", counting)
    run()
    assert calls == [7, 7, 7, 7, 2]
