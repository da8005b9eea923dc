"""Every script in ``examples/`` runs to completion as plain Python."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
EXAMPLES = sorted(EXAMPLES_DIR.glob("*.py"))


def test_examples_exist():
    assert EXAMPLES, f"no example scripts found in {EXAMPLES_DIR}"


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script, tmp_path):
    env = dict(os.environ)
    env["MPLBACKEND"] = "Agg"
    # Figures go to tempfile.mkdtemp(): keep them inside pytest's temporary directory.
    env["TMPDIR"] = str(tmp_path)
    # One BLAS/OpenMP thread: small problems only get slower with more, and much slower when
    # other processes compete for the cores (e.g. a parallel test run).
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a guard against a hang, not a speed check (a loaded machine took > 120 s)
    )
    assert proc.returncode == 0, (
        f"{script.name} exited with {proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}"
        f"\n--- stderr ---\n{proc.stderr[-4000:]}"
    )
