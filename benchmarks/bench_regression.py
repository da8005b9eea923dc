"""Regression SKCE benchmarks (Normal predictions), as ratios against baselines of the same run.

Run with ``.venv/bin/python benchmarks/bench_regression.py`` (or ``make bench``). Same conventions
as ``bench_foundation.py``: the machine may be shared and noisy, so the measured calls and their
baselines take turns in the same run (alternating order), every time is repeated, and the minimum
and the median are printed; the time target checks the ratio of the medians.

Targets
-------
1. Unbiased SKCE of Normal predictions, n = 10,000, default kernel (``kernel=None``:
   ``WassersteinKernel("median") ⊗ GaussianKernel("median")``), heteroscedastic predictions:
   median time <= 2.5 x the median of the classification SKCE with 10 classes of the same n
   (``skce(y, P)``, P ~ Dirichlet(1_10), default kernel
   ``GaussianKernel("median") ⊗ DeltaKernel()``), the two alternating on their own for
   ``--target-repeat`` rounds (default 11) in the same run (issue 11).
2. Peak memory of the regression call with the paper's kernel
   ``tensor(WassersteinKernel(1.0), GaussianKernel(1.0))`` (Widmann et al. 2021's experiments)
   <= 200 MB (max of the ``tracemalloc`` peak and the ``ru_maxrss``
   increase, measured in a fresh subprocess, as in ``bench_foundation.py``).

For information (no target): the paper's kernel, the homoscedastic case (equal scales: a cheaper
closed form), ``n_jobs=2``, the biased estimator, ratios against the classification SKCE with the
total-variation exponential kernel of Widmann et al. (2019) and against one ``np.exp`` pass over
n(n-1)/2 float64 numbers, the number of exponentials per unordered pair (counted by wrapping
``np.exp`` and ``np.exp2``), and the block estimator (B = 2) at n = 10^6.

The script always exits with status 0: it is a report, not a test. A failed target is followed by a
cProfile summary of the call (``--profile`` prints it for every target).
"""

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_foundation import environment_line, make_data, MB, print_summary, profile_call, timed  # noqa: E402

import skcalib  # noqa: E402
from skcalib.distributions import Normal  # noqa: E402
from skcalib.kernels import (  # noqa: E402
    ExponentialKernel,
    GaussianKernel,
    WassersteinKernel,
    tensor,
)

SEED = 20241122
N = 10_000
N_CLASSES = 10
BIG_N = 1_000_000
HOMO_SCALE = 0.125  # the mean of the heteroscedastic scales 0.1 + 0.05 U(0, 1)

TARGET_RATIO = 2.5  # median / median, default kernels
TARGET_MB = 200.0


def paper_kernel():
    return tensor(WassersteinKernel(1.0), GaussianKernel(1.0))


def make_regression(n, seed=SEED, homoscedastic=False):
    """mu ~ U(0, 1), sigma = 0.1 + 0.05 U(0, 1) (or constant), y ~ N(mu, sigma): calibrated."""
    rng = np.random.default_rng(seed)
    mu = rng.random(n)
    sigma = np.full(n, HOMO_SCALE) if homoscedastic else 0.1 + 0.05 * rng.random(n)
    y = rng.normal(mu, sigma)
    return y, Normal(mu, sigma)


# --------------------------------------------------------------------------------------------
# Timing and reporting


def interleaved_times(runs, repeat, budget=None):
    """All times of each callable in ``runs`` (each returns its own time in s).

    As ``bench_foundation.interleaved_best``, but returns every repetition (for min and median):
    the callables run in turn, in alternating order; with a ``budget`` (s) no further round starts
    once it is spent and at least 3 rounds are done.
    """
    times = [[] for _ in runs]
    order = list(range(len(runs)))
    t_start = time.perf_counter()
    for r in range(repeat):
        if budget is not None and r >= 3 and time.perf_counter() - t_start > budget:
            break
        for k in (order if r % 2 == 0 else order[::-1]):
            gc.collect()
            times[k].append(runs[k]())
    return times


class Report:
    """Result lines in aligned columns: min and median time, baseline min, ratios of the minima
    and of the medians."""

    HEADER = (f"{'what':<50} {'min':>9} {'median':>9} {'base min':>9} {'ratio':>7} "
              f"{'r(med)':>7} {'target':>10}  result")

    def __init__(self):
        self.rows = []

    def line(self, what, ts, base=None, target="-", status="info", scale=1.0):
        """``ts``, ``base``: lists of times (s); ``scale`` multiplies the baseline."""
        def ms(v):
            return "-" if v is None else (f"{v * 1e3:7.0f}ms" if v >= 1.0 else f"{v * 1e3:7.1f}ms")

        tmin, tmed = min(ts), statistics.median(ts)
        if base is None:
            bmin = r_min = r_med = None
        else:
            bmin, bmed = scale * min(base), scale * statistics.median(base)
            r_min, r_med = tmin / bmin, tmed / bmed
        rs = (lambda r: "-" if r is None else f"{r:6.2f}x")
        row = (f"{what:<50} {ms(tmin):>9} {ms(tmed):>9} {ms(bmin):>9} {rs(r_min):>7} "
               f"{rs(r_med):>7} {target:>10}  {status}")
        self.rows.append((what, status))
        print(row, flush=True)
        return r_min

    def mem_line(self, what, mb, target_mb=None, status="info"):
        target = "-" if target_mb is None else f"<= {target_mb:.0f} MB"
        row = f"{what:<50} {mb:7.1f}MB {'':>9} {'':>9} {'':>7} {'':>7} {target:>10}  {status}"
        self.rows.append((what, status))
        print(row, flush=True)


def verdict(ok):
    return "PASS" if ok else "FAIL"


# --------------------------------------------------------------------------------------------
# Memory (fresh subprocess) and np.exp counting


def memory_child(n_jobs):
    """Runs in a fresh interpreter: peak memory of one regression skce call, printed as JSON."""
    y, dist = make_regression(N)
    k = paper_kernel()
    gc.collect()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    value = skcalib.skce(y, dist, kernel=k, n_jobs=n_jobs)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    gc.collect()
    tracemalloc.start()
    value2 = skcalib.skce(y, dist, kernel=k, n_jobs=n_jobs)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert value == value2
    print(json.dumps({"rss_delta_mb": (rss1 - rss0) / 1024.0,
                      "tracemalloc_peak_mb": peak / MB, "value": value}))


def run_memory_child(n_jobs):
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--memory-child", str(n_jobs)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def count_exp(fn):
    """``(result, number of float elements passed through np.exp or np.exp2)`` of one call of
    ``fn``.

    skcalib calls ``np.exp`` and ``np.exp2`` through the module attributes, so replacing them
    counts every call."""
    count = [0]
    real = {"exp": np.exp, "exp2": np.exp2}

    def counting(f):
        def wrapped(x, *args, **kwargs):
            out = f(x, *args, **kwargs)
            count[0] += np.size(out)
            return out
        return wrapped

    np.exp, np.exp2 = counting(real["exp"]), counting(real["exp2"])
    try:
        value = fn()
    finally:
        np.exp, np.exp2 = real["exp"], real["exp2"]
    return value, count[0]


# --------------------------------------------------------------------------------------------
# 1. Unbiased (and biased) SKCE, n = 10,000


def bench_unbiased(rep, repeat, profile, target_repeat=11):
    results = {}
    y, dist = make_regression(N)
    y_h, dist_h = make_regression(N, homoscedastic=True)
    y_c, P = make_data(N, N_CLASSES)
    k = paper_kernel()
    k_tv = ExponentialKernel("median", metric="tv")
    m = N * (N - 1) // 2

    calls = {
        "reg": lambda: skcalib.skce(y, dist, kernel=k),
        "reg_homo": lambda: skcalib.skce(y_h, dist_h, kernel=k),
        "reg_default": lambda: skcalib.skce(y, dist),
        "reg_jobs2": lambda: skcalib.skce(y, dist, kernel=k, n_jobs=2),
        "reg_biased": lambda: skcalib.skce(y, dist, kernel=k, estimator="biased"),
        "cls": lambda: skcalib.skce(y_c, P),
        "cls_tv": lambda: skcalib.skce(y_c, P, kernel=k_tv),
    }

    # One counted call of each (also the warm-up): np.exp elements per unordered pair.
    values, per_pair = {}, {}
    for name in ("reg", "reg_homo", "reg_default", "cls", "cls_tv"):
        values[name], c = count_exp(calls[name])
        per_pair[name] = c / m
    values["reg_jobs2"] = calls["reg_jobs2"]()
    values["reg_biased"] = calls["reg_biased"]()
    if values["reg_jobs2"] != values["reg"]:
        print(f"  note: regression skce with n_jobs=2 gave {values['reg_jobs2']!r}, "
              f"n_jobs=1 gave {values['reg']!r}")
    print("  exponentials per unordered pair (n(n-1)/2 pairs; counted by wrapping np.exp and "
          "np.exp2; the excess over 4 and 1 is the diagonal blocks, evaluated in full):")
    print(f"    regression: {per_pair['reg']:.3f} (heteroscedastic), "
          f"{per_pair['reg_homo']:.3f} (homoscedastic), "
          f"{per_pair['reg_default']:.3f} (default kernel) | classification: "
          f"{per_pair['cls']:.3f} (default), {per_pair['cls_tv']:.3f} (tv)\n",
          flush=True)

    # Memory in fresh interpreters (and before the 400 MB np.exp baseline array exists).
    print(Report.HEADER)
    print("-" * len(Report.HEADER), flush=True)
    mem = run_memory_child(None)
    peak = max(mem["rss_delta_mb"], mem["tracemalloc_peak_mb"])
    rep.mem_line("1. regression memory: tracemalloc peak", mem["tracemalloc_peak_mb"])
    rep.mem_line("1. regression memory: ru_maxrss delta", mem["rss_delta_mb"])
    results["memory"] = peak <= TARGET_MB
    rep.mem_line("1. regression peak memory (max of the two above)", peak, TARGET_MB,
                 verdict(results["memory"]))
    mem2 = run_memory_child(2)
    rep.mem_line("1. regression memory, n_jobs=2, max(tm, rss)",
                 max(mem2["rss_delta_mb"], mem2["tracemalloc_peak_mb"]))

    # Baselines: one np.exp over n(n-1)/2 float64 numbers, on 1 and on 2 threads.
    x = np.empty(m)
    np.random.default_rng(1).random(m, out=x)
    np.negative(x, out=x)  # keep the arguments in [-1, 0], like kernel exponents

    def timed_exp():
        t0 = time.perf_counter()
        np.exp(x, out=x)
        dt = time.perf_counter() - t0
        np.negative(x, out=x)
        return dt

    pool = ThreadPoolExecutor(2)
    halves = (slice(0, m // 2), slice(m // 2, m))

    def exp_2_threads():
        t0 = time.perf_counter()
        list(pool.map(lambda s: np.exp(x[s], out=x[s]), halves))
        dt = time.perf_counter() - t0
        np.negative(x, out=x)
        return dt

    # The target pair alone, more rounds (a shared machine: the median of many alternations).
    t_target = interleaved_times([timed(calls["reg_default"]), timed(calls["cls"])],
                                 target_repeat, budget=45.0)

    names = list(calls)
    runs = [timed(calls[nm]) for nm in names] + [timed_exp, exp_2_threads]
    all_times = interleaved_times(runs, repeat, budget=75.0)
    pool.shutdown()
    del x
    gc.collect()
    t = dict(zip(names + ["exp", "exp2"], all_times))

    ns = 1e9 * min(t["exp"]) / m
    print(f"  np.exp float64: {ns:.2f} ns/element (1 thread, min), "
          f"{len(t['exp'])} rounds\n", flush=True)

    med = statistics.median
    results["time"] = med(t_target[0]) / med(t_target[1]) <= TARGET_RATIO
    rep.line(f"1. regression default kernel vs classification ({len(t_target[0])})",
             t_target[0], t_target[1], f"<={TARGET_RATIO:g}x med", verdict(results["time"]))
    rep.line("1. the same, in the rounds below", t["reg_default"], t["cls"])
    rep.line("1. regression paper kernel vs classification", t["reg"], t["cls"])
    rep.line("1. regression vs classification, tv kernel", t["reg"], t["cls_tv"])
    rep.line("1. regression vs np.exp(n(n-1)/2)", t["reg"], t["exp"])
    rep.line("1. regression vs 4 x np.exp(n(n-1)/2) (exp floor)", t["reg"], t["exp"], scale=4.0)
    rep.line("1. classification (default) vs np.exp(n(n-1)/2)", t["cls"], t["exp"])
    rep.line("1. classification (tv) vs np.exp(n(n-1)/2)", t["cls_tv"], t["exp"])
    rep.line("1. regression homoscedastic vs classification", t["reg_homo"], t["cls"])
    rep.line("1. regression homoscedastic vs heteroscedastic", t["reg_homo"], t["reg"])
    rep.line("1. regression default kernel vs paper kernel", t["reg_default"], t["reg"])
    rep.line("1. regression n_jobs=2 vs n_jobs=1", t["reg_jobs2"], t["reg"])
    rep.line("1. np.exp 2 threads vs 1 thread (ideal n_jobs=2)", t["exp2"], t["exp"])
    rep.line("1. regression biased n=1e4 vs unbiased", t["reg_biased"], t["reg"])
    rep.line("1. regression biased vs classification", t["reg_biased"], t["cls"])

    if profile or not results["time"]:
        profile_call(calls["reg_default"], "skce(y, Normal(mu, sigma)), default kernel, n=1e4")
    return results, values


# --------------------------------------------------------------------------------------------
# 2. Block estimator, B = 2, n = 10^6


def bench_block(rep, repeat):
    y, dist = make_regression(BIG_N)
    y_c, P = make_data(BIG_N, N_CLASSES)
    k = paper_kernel()
    reg = lambda: skcalib.skce(y, dist, kernel=k, estimator="block", block_size=2)  # noqa: E731
    cls = lambda: skcalib.skce(y_c, P, estimator="block", block_size=2)  # noqa: E731
    value = reg()
    cls()
    half = np.random.default_rng(2).random(BIG_N // 2)
    half_neg = -half
    t_reg, t_cls, t_exp = interleaved_times(
        [timed(reg), timed(cls), timed(lambda: np.exp(half_neg, out=half))], repeat, budget=20.0)
    rep.line("2. regression block B=2 n=1e6 (absolute)", t_reg)
    rep.line("2. regression block B=2 vs classification B=2", t_reg, t_cls)
    rep.line("2. regression block B=2 vs np.exp(n/2)", t_reg, t_exp)
    return value


# --------------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5,
                        help="repetitions per timing; min and median are reported (default 5)")
    parser.add_argument("--target-repeat", type=int, default=11,
                        help="rounds of the time target's pair alone (default 11; fewer, >= 3, "
                             "past 45 s)")
    parser.add_argument("--profile", action="store_true",
                        help="print a cProfile summary of the regression call even if it passes")
    parser.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.memory_child is not None:
        memory_child(None if args.memory_child == "None" else int(args.memory_child))
        return 0

    t_start = time.perf_counter()
    print(environment_line())
    print(f"times: {args.repeat} runs (fewer, >= 3, past a section's time budget), measured calls "
          f"and baselines interleaved; ratio = min/min, r(med) = median/median\n")
    rep = Report()

    _, values = bench_unbiased(rep, args.repeat, args.profile, args.target_repeat)
    v_block = bench_block(rep, args.repeat)

    print(f"\nvalues: regression unbiased = {values['reg']:.6g} (homoscedastic "
          f"{values['reg_homo']:.6g}, default kernel {values['reg_default']:.6g}, biased "
          f"{values['reg_biased']:.6g}), block(2) n=1e6 = {v_block:.6g}; classification "
          f"unbiased = {values['cls']:.6g} (tv {values['cls_tv']:.6g})")
    print_summary(rep, t_start)
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)
