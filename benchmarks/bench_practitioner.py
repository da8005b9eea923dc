"""Benchmarks of the practitioner's toolbox (issue 14 item 8): every new metric and test at
n = 1,000,000, side by side with the peer packages where they are installed.

Run with ``.venv/bin/python benchmarks/bench_practitioner.py [--repeat 5] [--n 1000000]
[--peer-python /tmp/peers/bin/python] [--profile]`` (or ``make bench``). Same conventions as the
other scripts of this directory: a plain script that always exits with status 0; every time is
repeated (``--repeat``, default 5, at least 3 past a section's time budget) and printed as the
minimum and the median; the measured call and its baseline take turns in the same run
(alternating order); a missed target is a ``FAIL`` line (followed by a cProfile summary of the
call) and shows in the closing summary.

Data (fixed seed), all calibrated: binary predictions ``p ~ Beta(2, 2)`` with ``y ~ Bernoulli(p)``;
10-class predictions ``~ Dirichlet(1)`` with labels drawn from them (top-label reliability curve,
multiclass Brier and log scores); Normal regression predictions ``mu ~ N(0, 1)``,
``sigma = 0.5 + U(0, 1)``, ``y ~ N(mu, sigma)``.

Targets (issue 14 item 8)
-------------------------
* every metric and test at n = 1,000,000: median time <= 1 s; the lowess-based
  ``integrated_calibration_index`` <= 3 s;
* where a peer implementation exists: at least as fast (median ratio skcalib / peer <= 1).

Columns: ``min`` and ``median`` of the call, ``base`` the median of the baseline -- one
``np.sort`` of n float64 values (a copy), the cost of a single O(n log n) pass, measured in the
same run, interleaved with every call -- and ``x sort`` the ratio median/median, the machine-
independent size of each call (in "sorts of the data"). Peer lines print the peer's median and
``skcalib/peer``.

Peers. scikit-learn (``calibration_curve``, ``brier_score_loss``, ``log_loss``) is a dependency
of skcalib and always runs. ``relplot`` (smooth ECE), ``uncertainty_toolbox`` (miscalibration
area, CRPS, NLL) and ``properscoring`` (CRPS) are imported in this process if installed, else --
with ``--peer-python PATH`` (or the environment variable ``SKCALIB_PEER_PYTHON``) -- run by
that interpreter in a child process on the same data (saved to a temporary directory), one call
per request, so that the peer's calls and skcalib's still take turns (the child reports its own
wall time of each call, without the inter-process overhead). Without either, the peer lines
say ``not installed`` and are skipped. The peers never enter skcalib's environment. Every peer
line also prints the peer's value next to skcalib's (they agree where the definitions agree; the
docstring of each skcalib function states the convention where they differ).

A metric that is not in skcalib (yet) prints a ``missing`` line instead of failing.
"""

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

SEED = 20261125
N = 1_000_000
N_CLASSES = 10
TARGET_S = 1.0
TARGET_LOWESS_S = 3.0
BUDGET_S = 20.0  # per line: no further round once spent (and at least 3 rounds done)


# --------------------------------------------------------------------------------------------
# Data


def make_data(n, seed=SEED):
    """Binary, 10-class and Normal-regression data of one fixed seed (see the module docstring)."""
    rng = np.random.default_rng(seed)
    p = rng.beta(2.0, 2.0, size=n)
    y = (rng.random(n) < p).astype(np.int64)
    P = rng.dirichlet(np.ones(N_CLASSES), size=n)
    u = rng.random(n)
    yc = np.minimum((u[:, None] > np.cumsum(P, axis=1)).sum(axis=1), N_CLASSES - 1)
    mu = rng.normal(size=n)
    sigma = 0.5 + rng.random(n)
    yr = mu + sigma * rng.normal(size=n)
    return {"p": p, "y": y, "P": P, "yc": yc, "mu": mu, "sigma": sigma, "yr": yr}


# --------------------------------------------------------------------------------------------
# Timing


def interleaved(runs, repeat, budget=BUDGET_S):
    """All times of each callable of ``runs`` (each returns its own time), run in turn in
    alternating order, ``repeat`` rounds (at least 3, then stop once ``budget`` s are spent)."""
    times = [[] for _ in runs]
    order = list(range(len(runs)))
    t0 = time.perf_counter()
    for r in range(repeat):
        if r >= 3 and time.perf_counter() - t0 > budget:
            break
        for k in (order if r % 2 == 0 else order[::-1]):
            gc.collect()
            times[k].append(runs[k]())
    return times


def timed(fn, out=None):
    """A callable that runs ``fn`` once, stores its value in ``out[0]`` and returns the time."""
    def run():
        t0 = time.perf_counter()
        value = fn()
        elapsed = time.perf_counter() - t0
        if out is not None:
            out[:] = [value]
        return elapsed
    return run


def sort_baseline(x):
    return timed(lambda: np.sort(x))


def as_float(value):
    """A comparable number from a metric's return value: a float, the p-value or score of a
    result object, the first observed frequency of a reliability curve, the first element of a
    tuple or array (None if there is none)."""
    try:
        for attr in ("pvalue", "score", "prob_true"):
            if hasattr(value, attr):
                return float(np.ravel(getattr(value, attr))[0])
        if isinstance(value, tuple):
            value = value[0]
        return float(np.ravel(np.asarray(value, dtype=float))[0])
    except (TypeError, ValueError, IndexError):
        return None


# --------------------------------------------------------------------------------------------
# Peers (in this process or in a child interpreter)


def peer_calls(d):
    """name -> zero-argument callable of every importable peer (name: 'package.function')."""
    calls = {}
    try:
        import relplot

        calls["relplot.smECE"] = lambda: relplot.smECE(d["p"], d["y"])
    except Exception:  # noqa: BLE001 - any import failure means "not installed"
        pass
    try:
        import uncertainty_toolbox as uct

        calls["uncertainty_toolbox.miscalibration_area"] = (
            lambda: uct.miscalibration_area(d["mu"], d["sigma"], d["yr"]))
        calls["uncertainty_toolbox.crps_gaussian"] = (
            lambda: uct.crps_gaussian(d["mu"], d["sigma"], d["yr"]))
        calls["uncertainty_toolbox.nll_gaussian"] = (
            lambda: uct.nll_gaussian(d["mu"], d["sigma"], d["yr"]))
    except Exception:  # noqa: BLE001
        pass
    try:
        import properscoring

        calls["properscoring.crps_gaussian"] = (
            lambda: properscoring.crps_gaussian(d["yr"], d["mu"], d["sigma"]).mean())
    except Exception:  # noqa: BLE001
        pass
    return calls


def peer_server(data_dir):
    """Child mode (run by the peers' interpreter): load the saved data, announce the importable
    peers as one JSON line, then run the peer named on each line of stdin once and answer with its
    time and value (JSON), until ``quit``."""
    d = {k: np.load(os.path.join(data_dir, f"{k}.npy")) for k in ("p", "y", "mu", "sigma", "yr")}
    calls = peer_calls(d)
    print(json.dumps({"python": sys.version.split()[0], "numpy": np.__version__,
                      "peers": sorted(calls)}), flush=True)
    for line in sys.stdin:
        name = line.strip()
        if name == "quit":
            break
        gc.collect()
        val = [None]
        t = timed(calls[name], val)()
        print(json.dumps({"time": t, "value": as_float(val[0])}), flush=True)


class PeerServer:
    """The peers' interpreter as a child process that runs one peer call per request, so that its
    calls take turns with skcalib's in this process (the same interleaving as everywhere else)."""

    def __init__(self, python, d, keys=("p", "y", "mu", "sigma", "yr"), script=__file__):
        # ``script --peer-server DIR`` is the child (this file's, or another benchmark's that
        # shares this server with its own peers and arrays ``keys`` of ``d``).
        self._tmp = tempfile.TemporaryDirectory()
        for k in keys:
            np.save(os.path.join(self._tmp.name, f"{k}.npy"), d[k])
        self._proc = subprocess.Popen([python, os.path.abspath(script), "--peer-server",
                                       self._tmp.name], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self._proc.stdout.readline()
        if not line:
            err = self._proc.stderr.read().strip().splitlines()[-1:]
            self.close()
            raise RuntimeError(f"the peer interpreter {python} failed: {err}")
        self.info = json.loads(line)
        self.peers = set(self.info["peers"])
        self.values = {}

    def timer(self, name):
        """A callable that runs peer ``name`` once in the child and returns the child's time."""
        def run():
            self._proc.stdin.write(name + "\n")
            self._proc.stdin.flush()
            answer = json.loads(self._proc.stdout.readline())
            self.values[name] = answer.get("value")
            return float("nan") if answer["time"] is None else answer["time"]
        return run

    def close(self):
        if self._proc.poll() is None:
            try:
                self._proc.stdin.write("quit\n")
                self._proc.stdin.flush()
                self._proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
        self._tmp.cleanup()


# --------------------------------------------------------------------------------------------
# The skcalib calls


def skcalib_calls(d):
    """(label, module, function name, call, target seconds, peer names) of every metric."""
    p, y, P, yc, yr = d["p"], d["y"], d["P"], d["yc"], d["yr"]
    from skcalib.distributions import Normal

    dist = Normal(d["mu"], d["sigma"])
    ms = np.column_stack([d["mu"], d["sigma"]])
    T, L = TARGET_S, TARGET_LOWESS_S
    M, S = "skcalib", "skcalib.stats"
    return [
        ("reliability_curve binary uniform", M, "reliability_curve",
         lambda f: f(y, p), T, ["sklearn.calibration_curve"]),
        ("reliability_curve binary quantile", M, "reliability_curve",
         lambda f: f(y, p, strategy="quantile"), T, ["sklearn.calibration_curve(quantile)"]),
        ("reliability_curve top_label C=10", M, "reliability_curve",
         lambda f: f(yc, P, mode="top_label"), T, []),
        ("smooth_ece (automatic bandwidth)", M, "smooth_ece", lambda f: f(y, p), T,
         ["relplot.smECE"]),
        ("smooth_reliability_curve", M, "smooth_reliability_curve", lambda f: f(y, p), T, []),
        ("integrated_calibration_index (lowess)", M, "integrated_calibration_index",
         lambda f: f(y, p), L, []),
        ("ecce_test ks", S, "ecce_test", lambda f: f(y, p), T, []),
        ("ecce_test kuiper", S, "ecce_test", lambda f: f(y, p, statistic="kuiper"), T, []),
        ("brier_score binary", M, "brier_score", lambda f: f(y, p), T,
         ["sklearn.brier_score_loss"]),
        ("brier_score C=10", M, "brier_score", lambda f: f(yc, P), T,
         ["sklearn.brier_score_loss(C=10)"]),
        ("log_score binary", M, "log_score", lambda f: f(y, p), T, ["sklearn.log_loss"]),
        ("log_score C=10", M, "log_score", lambda f: f(yc, P), T, ["sklearn.log_loss(C=10)"]),
        ("murphy_decomposition binary", M, "murphy_decomposition", lambda f: f(y, p), T, []),
        ("corp_decomposition brier", M, "corp_decomposition", lambda f: f(y, p), T, []),
        ("corp_decomposition log", M, "corp_decomposition",
         lambda f: f(y, p, score="log"), T, []),
        ("spiegelhalter_test", S, "spiegelhalter_test", lambda f: f(y, p), T, []),
        ("hosmer_lemeshow_test", S, "hosmer_lemeshow_test", lambda f: f(y, p), T, []),
        ("logistic_calibration", S, "logistic_calibration", lambda f: f(y, p), T, []),
        ("pit Normal", M, "pit", lambda f: f(yr, dist), T, []),
        ("pit_test ks", S, "pit_test", lambda f: f(yr, dist, method="ks"), T, []),
        ("pit_test cvm", S, "pit_test", lambda f: f(yr, dist, method="cvm"), T, []),
        ("pit_test ad", S, "pit_test", lambda f: f(yr, dist, method="ad"), T, []),
        ("crps Normal", M, "crps", lambda f: f(yr, dist), T,
         ["uncertainty_toolbox.crps_gaussian", "properscoring.crps_gaussian"]),
        ("crps (n, 2) [mean, std]", M, "crps", lambda f: f(yr, ms), T, []),
        ("interval_coverage", M, "interval_coverage", lambda f: f(yr, dist), T, []),
        ("interval_coverage_error", M, "interval_coverage_error", lambda f: f(yr, dist), T, []),
        ("quantile_calibration_error", M, "quantile_calibration_error",
         lambda f: f(yr, dist), T, []),
        ("miscalibration_area (exact, quantile)", M, "miscalibration_area",
         lambda f: f(yr, dist), T, []),
        ("miscalibration_area (uct's convention)", M, "miscalibration_area",
         lambda f: f(yr, dist, proportion="interval", quantiles=np.linspace(0, 1, 100)),
         T, ["uncertainty_toolbox.miscalibration_area"]),
        ("ence", M, "ence", lambda f: f(yr, dist), T, []),
        ("uce", M, "uce", lambda f: f(yr, dist), T, []),
        ("nll Normal", M, "nll", lambda f: f(yr, dist), T, ["uncertainty_toolbox.nll_gaussian"]),
    ]


def sklearn_peers(d):
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import brier_score_loss, log_loss

    p, y, P, yc = d["p"], d["y"], d["P"], d["yc"]
    return {
        "sklearn.calibration_curve": lambda: calibration_curve(y, p, n_bins=10),
        "sklearn.calibration_curve(quantile)": (
            lambda: calibration_curve(y, p, n_bins=10, strategy="quantile")),
        "sklearn.brier_score_loss": lambda: brier_score_loss(y, p),
        "sklearn.brier_score_loss(C=10)": lambda: brier_score_loss(yc, P),
        "sklearn.log_loss": lambda: log_loss(y, p),
        "sklearn.log_loss(C=10)": lambda: log_loss(yc, P),
    }


# --------------------------------------------------------------------------------------------


def fmt(t):
    return "-" if t is None else f"{t * 1e3:9.1f}ms"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n", type=int, default=N)
    parser.add_argument("--profile", action="store_true",
                        help="print a cProfile summary for every target, not only failing ones")
    parser.add_argument("--peer-python", default=os.environ.get("SKCALIB_PEER_PYTHON"),
                        help="interpreter with the peer packages (run as a child process)")
    parser.add_argument("--only", default=None, help="run only lines containing this text")
    parser.add_argument("--peer-server", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peer_server is not None:
        peer_server(args.peer_server)
        return 0

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import importlib

    from bench_foundation import environment_line, profile_call

    t_start = time.perf_counter()
    print(environment_line())
    d = make_data(args.n)
    print(f"n = {args.n:,}; repeat = {args.repeat}; times: min and median; base = median of one "
          "np.sort of n float64 (same run); x sort = median / base\n")

    in_process = peer_calls(d)
    peers = dict(sklearn_peers(d))
    peers.update(in_process)
    child = None
    wanted = {"relplot.smECE", "uncertainty_toolbox.miscalibration_area",
              "uncertainty_toolbox.crps_gaussian", "uncertainty_toolbox.nll_gaussian",
              "properscoring.crps_gaussian"}
    if args.peer_python and not wanted <= set(in_process):
        print(f"peers not importable here: timing them with {args.peer_python} in a child "
              "process on the same data ...")
        try:
            child = PeerServer(args.peer_python, d)
        except (OSError, RuntimeError) as exc:
            print(f"  ({exc}; the peer lines are skipped)")
        else:
            print(f"  child: Python {child.info['python']}, numpy {child.info['numpy']}; peers: "
                  f"{', '.join(sorted(child.peers)) or 'none'}\n")
    elif not wanted <= set(in_process):
        print("peers relplot / uncertainty_toolbox / properscoring not installed here and no "
              "--peer-python given: their lines are skipped (scikit-learn's always run).\n")

    header = (f"{'what':<44} {'min':>11} {'median':>11} {'base':>11} {'x sort':>7} "
              f"{'target':>8}  result")
    print(header)
    rows = []
    modules = {}
    for label, modname, fname, call, target, peer_names in skcalib_calls(d):
        if args.only and args.only not in label:
            continue
        mod = modules.setdefault(modname, importlib.import_module(modname))
        func = getattr(mod, fname, None)
        if func is None:
            print(f"{label:<44} {'missing':>11}   ({modname}.{fname} is not in skcalib)")
            rows.append((label, "MISSING"))
            continue
        val = [None]
        try:
            t, base = interleaved([timed(lambda: call(func), val), sort_baseline(d["p"])],
                                  args.repeat)
        except Exception as exc:  # noqa: BLE001 - report, go on
            print(f"{label:<44} {'error':>11}   {type(exc).__name__}: {exc}")
            rows.append((label, "ERROR"))
            continue
        med, bmed = statistics.median(t), statistics.median(base)
        ok = med <= target
        status = "PASS" if ok else "FAIL"
        print(f"{label:<44} {fmt(min(t)):>11} {fmt(med):>11} {fmt(bmed):>11} "
              f"{med / bmed:6.1f}x {'<=' + format(target, 'g') + ' s':>8}  {status}", flush=True)
        rows.append((f"{label}: {med:.3f} s (<= {target:g} s)", status))
        if not ok or args.profile:
            profile_call(lambda: call(func), label)
        mine = as_float(val[0])
        for pname in peer_names:
            if pname in peers:
                pval = [None]
                pt, pt_self = interleaved([timed(peers[pname], pval),
                                           timed(lambda: call(func))], args.repeat)
                pmed, smed = statistics.median(pt), statistics.median(pt_self)
                pstatus = "PASS" if smed <= pmed else "FAIL"
                print(f"  vs {pname:<40} {fmt(min(pt)):>11} {fmt(pmed):>11}   skcalib/peer "
                      f"{smed / pmed:5.2f}  {pstatus}   values {mine!r} / "
                      f"{as_float(pval[0])!r}", flush=True)
                rows.append((f"  {label} vs {pname}: skcalib/peer {smed / pmed:.2f} (<= 1)",
                             pstatus))
            elif child is not None and pname in child.peers:
                pt, pt_self = interleaved([child.timer(pname), timed(lambda: call(func))],
                                          args.repeat)
                pmed, smed = statistics.median(pt), statistics.median(pt_self)
                pstatus = "PASS" if smed <= pmed else "FAIL"
                print(f"  vs {pname:<40} {fmt(min(pt)):>11} {fmt(pmed):>11}   skcalib/peer "
                      f"{smed / pmed:5.2f}  {pstatus}   values {mine!r} / "
                      f"{child.values.get(pname)!r}   (peer in a child process)", flush=True)
                rows.append((f"  {label} vs {pname} (child): skcalib/peer {smed / pmed:.2f} "
                             "(<= 1)", pstatus))
            else:
                print(f"  vs {pname:<40} not installed (skipped)")
    if child is not None:
        child.close()
    print_summary_rows(rows, t_start)
    return 0


def print_summary_rows(rows, t_start):
    targets = [r for r in rows if r[1] in ("PASS", "FAIL")]
    n_fail = sum(s == "FAIL" for _, s in targets)
    other = [r for r in rows if r[1] not in ("PASS", "FAIL")]
    print(f"\nSUMMARY: {len(targets) - n_fail}/{len(targets)} targets met, {len(other)} "
          f"missing/error (total {time.perf_counter() - t_start:.0f} s)")
    for what, status in rows:
        print(f"  {status:<7}  {what}")


if __name__ == "__main__":
    sys.exit(main())
