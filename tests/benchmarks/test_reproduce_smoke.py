"""Smoke tests of the paper reproductions in ``benchmarks/reproduce/`` (issue 16, item 5).

Each script's ``main`` runs at a tiny size: it must print the paper's number beside skcalib's on
the same line, write its figure as a PNG file, and draw both the paper's and skcalib's numbers in
that figure. The numbers of a tiny run are not meaningful; the full runs are documented in
``benchmarks/reproduce/README.md``. Two checks test the scripts' definitions against brute force.
"""

import importlib
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

REPRODUCE = Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce"
sys.path.insert(0, str(REPRODUCE))

common = importlib.import_module("_common")


def _load(name):
    return importlib.import_module(name)


@pytest.fixture
def drawn(monkeypatch):
    """The (x, y) data of every line of every figure the scripts save."""
    lines = []
    original = common.save_figure

    def record(fig, output_dir, name):
        for ax in fig.axes:
            for line in ax.get_lines():
                lines.append((np.asarray(line.get_xdata(), float),
                              np.asarray(line.get_ydata(), float)))
        return original(fig, output_dir, name)

    monkeypatch.setattr(common, "save_figure", record)
    return lines


def _has_line(lines, y, x=None):
    y = np.asarray(y, float)
    return any(ly.shape == y.shape and np.allclose(ly, y, equal_nan=True)
               and (x is None or np.allclose(lx, x)) for lx, ly in lines)


def _check_png(out, tmp_path, name):
    (path,) = out["figures"]
    assert path == tmp_path / name
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def _line_with(text, *needles):
    """The printed line that contains every needle (exactly one such line)."""
    found = [line for line in text.splitlines() if all(n in line.split() for n in needles)]
    assert len(found) == 1, (needles, found)
    return found[0]


def test_iclr2021_estimator_errors(tmp_path, capsys, drawn):
    mod = _load("iclr2021_estimator_errors")
    out = mod.main(["--reps", "4", "--sizes", "4,16", "--dims", "1",
                    "--output-dir", str(tmp_path)])
    text = capsys.readouterr().out
    res = out["results"]
    assert len(res) == 2 * 2 * len(mod.ESTIMATORS)
    cell = res["uncalibrated", 1, 16, "B=2"]
    line = _line_with(text, "uncalibrated", "16", "B=2")
    assert common.fmt(4.06e-2) in line.split()                      # the paper's |err|
    assert common.fmt(cell["mean_abs_error"]) in line.split()       # skcalib's
    assert common.fmt(2.47e-3) in line.split() and common.fmt(cell["variance"]) in line.split()
    _check_png(out, tmp_path, "iclr2021_estimator_errors.png")
    ours = [res["calibrated", 1, n, "biased"]["mean_abs_error"] for n in (4, 16)]
    assert _has_line(drawn, ours, [4, 16])
    assert _has_line(drawn, [2.33e-3, 6.13e-4], [4, 16])
    # the biased estimator of a calibrated model is >= 0: its |error| is its mean
    assert res["calibrated", 1, 4, "biased"]["mean_abs_error"] == pytest.approx(
        res["calibrated", 1, 4, "biased"]["mean"])
    with pytest.raises(SystemExit):
        mod.main(["--dims", "3", "--output-dir", str(tmp_path / "never")])
    assert not (tmp_path / "never").exists()


def test_iclr2021_test_errors(tmp_path, capsys, drawn):
    mod = _load("iclr2021_test_errors")
    out = mod.main(["--reps", "3", "--sizes", "4,32", "--dims", "1", "--n-resamples", "50",
                    "--output-dir", str(tmp_path)])
    text = capsys.readouterr().out
    res = out["results"]
    # n = 4 <= J: every CME test is refused, and said so
    assert math.isnan(res["calibrated", 1, 4, "CME"]["error"])
    assert "3 of 3 refused" in _line_with(text, "calibrated", "4", "CME")
    cell = res["uncalibrated", 1, 4, "B=2"]
    line = _line_with(text, "uncalibrated", "4", "B=2")
    assert "0.648" in line.split() and f"{cell['error']:.3f}" in line.split()
    assert np.all((cell["pvalues"] >= 0) & (cell["pvalues"] <= 1))
    assert cell["error"] == np.mean(cell["pvalues"] >= 0.05)
    _check_png(out, tmp_path, "iclr2021_test_errors.png")
    assert _has_line(drawn, [res["calibrated", 1, n, "B=2"]["error"] for n in (4, 32)], [4, 32])
    assert _has_line(drawn, [0.128], [4])  # the paper's, at the sizes it has


def test_neurips2019_dirichlet_tests(tmp_path, capsys, drawn):
    mod = _load("neurips2019_dirichlet_tests")
    out = mod.main(["--reps", "2", "--n-resamples", "50", "--n-resamples-c", "9",
                    "--output-dir", str(tmp_path)])
    text = capsys.readouterr().out
    err = out["errors"]
    line = _line_with(text, "A_l", "M3", "0.05")
    assert "0.8141" in line.split() and f"{err['A_l', 'M3', 0.05]:.4f}" in line.split()
    line = _line_with(text, "SKCE_uq", "M2")
    assert "0.096551" in line.split()
    assert f"{out['estimates']['SKCE_uq', 'M2'].mean():.5g}" in line.split()
    # type I is P(p <= alpha) on M1, type II P(p > alpha) on M2 and M3
    p1, p3 = out["pvalues"]["A_uq", "M1"], out["pvalues"]["A_uq", "M3"]
    assert err["A_uq", "M1", 0.5] == np.mean(p1 <= 0.5)
    assert err["A_uq", "M3", 0.5] == np.mean(p3 > 0.5)
    _check_png(out, tmp_path, "neurips2019_dirichlet_tests.png")
    # the paper's A_l type-II errors on M3, at its four levels
    assert _has_line(drawn, [0.9519, 0.8141, 0.6896, 0.2054], [0.01, 0.05, 0.1, 0.5])
    assert _has_line(drawn, [0.0, 1.0], [0.0, 1.0])  # the diagonal of the M1 panel


def test_gruber_bach_risk_temperature(tmp_path, capsys, drawn):
    mod = _load("gruber_bach_risk_temperature")
    out = mod.main(["--reps", "2", "--n-samples", "60", "--quick",
                    "--output-dir", str(tmp_path)])
    text = capsys.readouterr().out
    t1 = out["table"][1.0]
    (line,) = [line for line in text.splitlines() if line.split()[:1] == ["1"]]
    assert "0.00883" in line.split() and f"{t1['mean']:.5f}" in line.split()
    assert "argmin over theta of the mean risk: paper 1" in text
    _check_png(out, tmp_path, "gruber_bach_risk_temperature.png")
    assert _has_line(drawn, out["risks"].mean(axis=0), out["thetas"])


def test_gruber_bach_family_brute_force():
    # h_sim(theta) = <p - softmax((10/3) theta log p), ...>: theta = 0.3 is h = 0, theta = 1 the
    # true calibration function; the risk is the U-statistic over i != j (Eq. 20)
    from skcalib.datasets import make_dirichlet_calibration

    mod = _load("gruber_bach_risk_temperature")
    f, y, P = make_dirichlet_calibration(40, 5, random_state=3, return_truth=True)
    R = f - np.eye(5)[y]
    T = R @ R.T
    off = ~np.eye(40, dtype=bool)
    for theta, g in [(0.3, f), (1.0, P), (0.0, np.full_like(f, 0.2))]:
        D = f - g
        expected = np.mean(((T - D @ D.T) ** 2)[off])
        assert mod.risk(y, f, theta) == pytest.approx(expected, rel=1e-6, abs=1e-12)


def test_itrustworthy_type2(tmp_path, capsys, drawn):
    mod = _load("itrustworthy_type2")
    out = mod.main(["--reps", "2", "--sizes", "100", "--dims", "10,20", "--n-resamples", "30",
                    "--conditional", "--output-dir", str(tmp_path)])
    text = capsys.readouterr().out
    res = out["results"]
    line = _line_with(text, "100", "20", "permutation")
    assert "0.770" in line.split() and f"{res[100, 20, 'permutation']['error']:.3f}" in line.split()
    assert "not in the paper" in _line_with(text, "100", "20", "conditional")
    _check_png(out, tmp_path, "itrustworthy_type2.png")
    assert _has_line(drawn, [res[100, d, "permutation"]["error"] for d in (10, 20)], [10, 20])
    assert _has_line(drawn, mod.PAPER[100], mod.PAPER_DIMS)
    # the model leaves out the last feature; labels follow all of them
    x, y, f = mod.simulate(5, 3, np.random.default_rng(0))
    assert np.allclose(f, 1 / (1 + np.exp(-x[:, :2].sum(axis=1))))
