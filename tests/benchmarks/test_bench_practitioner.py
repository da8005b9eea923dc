"""``benchmarks/bench_practitioner.py`` runs (small n, one repetition) without the peer packages,
times every toolbox metric (no line is ``missing`` or ``error``), and its peer-child protocol
works with an interpreter that has no peers."""

import importlib.util
import io
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

_PATH = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "bench_practitioner.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_practitioner", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(*args):
    env = {k: v for k, v in os.environ.items() if k != "SKCALIB_PEER_PYTHON"}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.run([sys.executable, str(_PATH), "--n", "3000", "--repeat", "1", *args],
                          capture_output=True, text=True, timeout=300, env=env)


def test_runs_without_peers_and_times_every_metric():
    proc = _run()
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "no --peer-python given" in out and "SUMMARY" in out
    lines = out.splitlines()
    assert not [ln for ln in lines if " missing " in ln or " error " in ln], out[-3000:]
    # every skcalib line got a verdict, and scikit-learn's peers always run
    assert "0 missing/error" in out
    assert "vs sklearn.calibration_curve" in out and "vs sklearn.log_loss" in out
    assert "vs relplot.smECE" in out  # listed as skipped when not installed
    # the peer values printed next to skcalib's agree for scikit-learn's log loss
    row = next(ln for ln in lines if "vs sklearn.log_loss " in ln)
    mine, theirs = (float(v) for v in row.split("values")[1].split("/"))
    assert mine == pytest.approx(theirs, rel=1e-12)


def test_peer_server_protocol(bench, monkeypatch, tmp_path):
    # the project's interpreter has no peers: the server announces none and quits cleanly
    d = bench.make_data(500)
    server = bench.PeerServer(sys.executable, d)
    try:
        assert server.info["numpy"] == np.__version__ and isinstance(server.peers, set)
    finally:
        server.close()
    assert server._proc.returncode == 0
    # a request runs the named call once and answers with its time and value (here a fake peer)
    monkeypatch.setattr(bench, "peer_calls", lambda d: {"fake.mean": lambda: d["p"].mean()})
    for k in ("p", "y", "mu", "sigma", "yr"):
        np.save(tmp_path / f"{k}.npy", d[k])
    monkeypatch.setattr(sys, "stdin", io.StringIO("fake.mean\nquit\n"))
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    bench.peer_server(str(tmp_path))
    hello, answer = (json.loads(line) for line in out.getvalue().splitlines())
    assert hello["peers"] == ["fake.mean"]
    assert answer["value"] == pytest.approx(d["p"].mean()) and answer["time"] >= 0


def test_data_and_helpers(bench):
    d = bench.make_data(20000, seed=1)
    # calibrated binary data: the mean outcome matches the mean prediction
    assert abs(d["y"].mean() - d["p"].mean()) < 4 * np.sqrt(0.25 / 20000)
    assert d["P"].shape == (20000, bench.N_CLASSES)
    assert np.allclose(d["P"].sum(axis=1), 1)
    z = (d["yr"] - d["mu"]) / d["sigma"]
    assert abs(z.mean()) < 0.05 and abs(z.std() - 1) < 0.05
    assert bench.as_float(0.5) == 0.5
    assert bench.as_float((np.array([0.25, 1.0]), np.array([0.0]))) == 0.25
    assert bench.as_float(object()) is None
