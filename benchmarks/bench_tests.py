"""Benchmarks of the SKCE hypothesis tests (``skcalib.stats.skce_test``), issue 12 item 6.

Run with ``.venv/bin/python benchmarks/bench_tests.py [--quick] [--repeat 5] [--profile]`` (or
``make bench``). Same conventions as ``bench_foundation.py`` and ``bench_regression.py``: a plain
script that always exits with status 0; the measured calls and their baselines take turns in the
same run (alternating order), every time is repeated and printed as the minimum and the median;
ratios are median/median (``r(med)``) and min/min (``ratio``); a missed target is a ``FAIL`` line
(followed by a cProfile summary of the call) and shows in the closing summary.

Data (fixed seed), both calibrated: classification with 10 classes, predictions drawn from
Dirichlet(0.1, ..., 0.1) and labels drawn from them; Normal regression with ``mu ~ U(0, 1)``,
``sigma = 0.1 + 0.05 U(0, 1)`` and ``y ~ N(mu, sigma)`` (the data of ``bench_regression.py``).
Default kernels (median heuristic) throughout.

Targets (issue 12)
------------------
1. ``skce_test(method="bootstrap")``, n = 2,000, 1,000 resamples: <= 3 s (median), with
   ``n_jobs=None`` and ``n_jobs=2``. For information, ratios against one evaluation of the unbiased
   statistic (``skcalib.skce``) and against the dense baseline: ``H`` built as an ``n x n`` matrix
   (``skcalib._pairwise.dense_matrix``) and one quadratic form ``c^T H c`` per resample in a Python
   loop (the approach of the existing binary-only numpy package), run with BLAS on one thread (its
   faster setting on a loaded 2-core machine: a memory-bound matrix-vector product per resample).
   The script checks that the dense loop, run on skcalib's own resampling counts, reproduces the
   bootstrap statistic and null distribution (to 1e-9 relative).
2. Bootstrap at n = 20,000 with 200 resamples: seconds (and the ratio to one ``skce``), and its
   peak memory in a fresh subprocess (max of the ``tracemalloc`` peak and the ``ru_maxrss``
   increase) <= 25% of one ``n x n`` float64 matrix (3.2 GB), i.e. no ``n x n`` matrix (not even
   a float16 one). The design's ``O(n (M + chunk))`` is printed next to it.
3. Block tests at n = 1,000,000 (``block_size=2`` and ``"sqrt"``): <= 1 s (median); memory O(n):
   peak memory at n = 1,000,000 over that at 250,000 <= 5 (O(n) gives 4).
4. Nyström spectral test at n = 100,000 (``n_landmarks=500`` and 200): <= 1.5 x one evaluation of
   ``skcalib.skce`` on the same data (median ratio).
5. For information: ``"gamma"``, the exact ``"spectral"`` and the Nyström test at n = 2,000, with
   their p-values on the same data.
6. (Issue 13) ``klce_test`` with 1,000 resamples at n = 2,000: <= 3 s, for every null.
7. (Issue 22) ``ucme_test`` on a calibrated Dirichlet model, n = 500, 3 classes, 5 test locations,
   a fixed Gaussian kernel: <= 4 x one evaluation of the statistic ``skcalib.ucme`` with the same
   kernel and locations (median ratio). It replaces a wall-clock bound of the fast test suite (200
   such tests within 10 s).

Lines marked ``1 BLAS thread`` run the call inside ``threadpoolctl.threadpool_limits(1, "blas")``:
the spectral tests' ``eigh``/``eigvalsh`` run with the default BLAS threads, and on a loaded
2-core machine two OpenBLAS threads make them many times slower (see the README).

Run time: 8-10 minutes on a shared 2-core machine (the regression SKCE at n = 100,000 takes
40-50 s a call, and item 4 needs three of them); ``--quick`` takes 2-3 minutes; ``--only 15``
runs items 1 and 5 only (about a minute).

``--quick`` divides the sizes of items 2-4 (20,000 -> 5,000; 10^6 -> 2 10^5 with 5 10^4 for the
memory ratio; 100,000 -> 20,000) with the same target numbers, except item 4, which is ``info``
there: at n = 20,000 the Nyström overhead (``O(n m^2)`` flops and two ``m x m``
eigendecompositions) is not yet small against the ``O(n^2)`` statistic.
"""

import argparse
import gc
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_foundation import MB, environment_line, print_summary, profile_call, timed  # noqa: E402
from bench_regression import make_regression  # noqa: E402

import skcalib  # noqa: E402
from skcalib import _pairwise  # noqa: E402
from skcalib.stats import _skce  # noqa: E402
from skcalib.stats import klce_test, skce_test, ucme_test  # noqa: E402

SEED = 20261125
N_CLASSES = 10
ALPHA = 0.1

BOOT_N, BOOT_M = 2_000, 1_000
BIG_BOOT_N, BIG_BOOT_M = 20_000, 200
BLOCK_N, BLOCK_SMALL_N = 1_000_000, 250_000
NYS_N = 100_000
LANDMARKS = (500, 200)

TARGET_BOOT_S = 3.0
TARGET_BOOT_MEM_FRACTION = 0.25
TARGET_BLOCK_S = 1.0
TARGET_BLOCK_MEM_RATIO = 5.0
TARGET_NYS_RATIO = 1.5


def make_classification(n, seed=SEED):
    """10-class predictions ~ Dirichlet(0.1), labels drawn from them (a calibrated model)."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(N_CLASSES, ALPHA), size=n)
    cum = np.cumsum(P, axis=1)
    u = rng.random(n)
    y = (u[:, None] > cum).sum(axis=1)
    np.minimum(y, N_CLASSES - 1, out=y)  # u beyond a row sum rounded below 1
    return y, P


def make(family, n):
    return make_classification(n) if family == "cls" else make_regression(n, seed=SEED)


# --------------------------------------------------------------------------------------------
# Timing and reporting


def interleaved_times(runs, repeat, budget=None, min_rounds=3):
    """Every time of each callable in ``runs`` (each returns its own time in s), run in turn in
    alternating order; with a ``budget`` (s) no further round starts once it is spent and at
    least ``min_rounds`` rounds are done."""
    times = [[] for _ in runs]
    order = list(range(len(runs)))
    t_start = time.perf_counter()
    for r in range(repeat):
        if budget is not None and r >= min_rounds and time.perf_counter() - t_start > budget:
            break
        for k in (order if r % 2 == 0 else order[::-1]):
            gc.collect()
            times[k].append(runs[k]())
    return times


def fmt_time(v):
    if v is None:
        return "-"
    if v >= 10.0:
        return f"{v:8.1f}s"
    if v >= 1.0:
        return f"{v:8.2f}s"
    return f"{v * 1e3:7.0f}ms" if v >= 0.1 else f"{v * 1e3:7.1f}ms"


class Report:
    """Result lines: min and median time, baseline median, ratios of the minima and medians."""

    WIDTH = 56
    HEADER = (f"{'what':<{WIDTH}} {'min':>9} {'median':>9} {'base med':>9} {'ratio':>7} "
              f"{'r(med)':>7} {'rounds':>6} {'target':>11}  result")

    def __init__(self):
        self.rows = []

    def header(self):
        print(self.HEADER)
        print("-" * len(self.HEADER), flush=True)

    def line(self, what, ts, base=None, target="-", status="info"):
        """``ts``, ``base``: lists of times (s). Returns the ratio of the medians (or None)."""
        tmin, tmed = min(ts), statistics.median(ts)
        if base is None:
            bmed = r_min = r_med = None
        else:
            bmed = statistics.median(base)
            r_min, r_med = tmin / min(base), tmed / bmed
        rs = (lambda r: "-" if r is None else f"{r:6.2f}x")
        row = (f"{what:<{self.WIDTH}} {fmt_time(tmin):>9} {fmt_time(tmed):>9} "
               f"{fmt_time(bmed):>9} {rs(r_min):>7} {rs(r_med):>7} {len(ts):>6} "
               f"{target:>11}  {status}")
        self.rows.append((what, status))
        print(row, flush=True)
        return r_med

    def text_line(self, what, text, target="-", status="info"):
        row = f"{what:<{self.WIDTH}} {text:>51} {target:>11}  {status}"
        self.rows.append((what, status))
        print(row, flush=True)


def verdict(ok):
    return "PASS" if ok else "FAIL"


# --------------------------------------------------------------------------------------------
# Memory, in a fresh interpreter


def memory_child(spec):
    """Runs in a fresh interpreter: peak memory of one ``skce_test`` call, printed as JSON.

    ``spec`` is ``family:n:method:option`` (option: the block size or the number of resamples).
    The data are made first; the measured call runs once with ``tracemalloc`` on, and the
    ``ru_maxrss`` increase over that call is recorded too."""
    family, n, method, option = spec.split(":")
    n = int(n)
    y, pred = make(family, n)
    if method == "block":
        kwargs = dict(method="block", block_size=option if option == "sqrt" else int(option))
    else:
        kwargs = dict(method="bootstrap", n_resamples=int(option), random_state=0)
    gc.collect()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    tracemalloc.start()
    res = skce_test(y, pred, **kwargs)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    data_mb = (y.nbytes + (pred.nbytes if family == "cls" else 2 * 8 * n)) / MB
    print(json.dumps({"rss_delta_mb": (rss1 - rss0) / 1024.0, "tracemalloc_peak_mb": peak / MB,
                      "data_mb": data_mb, "pvalue": res.pvalue}))


def run_memory_child(spec):
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--memory-child", spec],
        check=True, capture_output=True, text=True,
    )
    mem = json.loads(out.stdout.strip().splitlines()[-1])
    mem["peak_mb"] = max(mem["rss_delta_mb"], mem["tracemalloc_peak_mb"])
    return mem


# --------------------------------------------------------------------------------------------
# 1. Bootstrap, n = 2,000, 1,000 resamples, against the dense n x n baseline


def pair_term(y, pred, random_state=0):
    """The pair term of ``skce_test`` (same kernel resolution, default kernel)."""
    return _skce._kernel_problem(y, pred, None, None, None, random_state, 100).term()


def dense_bootstrap(term, n_resamples, rng=None, counts=None):
    """The baseline: ``H`` as a dense ``n x n`` matrix and, per resample, multinomial counts
    ``c`` and the quadratic form ``c^T H c`` in a Python loop; returns ``(T, null)`` with the
    Arcones--Giné statistic ``T = n/(n-1) U - V`` and ``T* = (n/(n-1) (c^T H c - c.h_diag)
    - 2 c^T H 1) / n^2``. ``counts`` (M x n) replaces the draws (for the agreement check)."""
    H = _pairwise.dense_matrix(term)
    n = H.shape[0]
    d = H.diagonal().copy()
    r = H.sum(axis=1)
    total = float(r.sum())
    U = (total - float(d.sum())) / (n * (n - 1.0))
    T = n / (n - 1.0) * U - total / (n * float(n))
    null = np.empty(n_resamples)
    for m in range(n_resamples):
        if counts is None:
            c = np.bincount(rng.integers(n, size=n), minlength=n).astype(np.float64)
        else:
            c = counts[m]
        null[m] = (n / (n - 1.0) * (c @ (H @ c) - c @ d) - 2.0 * (c @ r)) / (n * float(n))
    return T, null


def check_bootstrap_agreement(family, y, pred, seed):
    """The dense loop on skcalib's own counts (same generator, same draws) must give skcalib's
    null distribution and statistic. Returns the largest relative difference."""
    res = skce_test(y, pred, method="bootstrap", n_resamples=BOOT_M, random_state=seed)
    # skce_test's order: the problem (kernel resolution may draw from its generator), the pair
    # term, then the counts from the same generator.
    problem = _skce._kernel_problem(y, pred, None, None, None, seed, 100)
    term = problem.term()
    counts = _skce._draw_counts(problem.rng, BOOT_M, term.n_samples)
    T, null = dense_bootstrap(term, BOOT_M, counts=counts)
    scale = float(np.max(np.abs(null)))
    diff = max(float(np.max(np.abs(null - res.null_distribution))) / scale,
               abs(T - res.statistic) / scale)
    return diff, res


def bench_bootstrap(rep, repeat, profile):
    results = {}
    for family in ("cls", "reg"):
        label = "classification C=10" if family == "cls" else "Normal regression"
        y, pred = make(family, BOOT_N)
        diff, res = check_bootstrap_agreement(family, y, pred, 0)
        skce_value = skcalib.skce(y, pred, random_state=0)
        print(f"  [{label}] dense loop on skcalib's counts vs skce_test null: max rel. diff "
              f"{diff:.1e}; statistic {res.statistic:.4g}, p = {res.pvalue:.3f}; "
              f"estimate - skce() = {res.estimate - skce_value:.1e}", flush=True)
        if diff > 1e-9:
            print(f"  WARNING: the bootstrap null differs from the dense loop by {diff:.1e}")
        results[f"agree_{family}"] = diff <= 1e-9

        term = pair_term(y, pred, 0)
        calls = {
            "skce": lambda: skcalib.skce(y, pred, random_state=0),
            "skce2": lambda: skcalib.skce(y, pred, random_state=0, n_jobs=2),
            "boot": lambda: skce_test(y, pred, method="bootstrap", n_resamples=BOOT_M,
                                      random_state=0),
            "boot2": lambda: skce_test(y, pred, method="bootstrap", n_resamples=BOOT_M,
                                       random_state=0, n_jobs=2),
            "dense": one_blas_thread(lambda: dense_bootstrap(pair_term(y, pred, 0), BOOT_M,
                                                             rng=np.random.default_rng(0))),
            "dense_H": lambda: _pairwise.dense_matrix(term),
        }
        for fn in calls.values():  # warm-up
            fn()
        names = list(calls)
        t = dict(zip(names, interleaved_times([timed(calls[k]) for k in names], repeat,
                                               budget=45.0)))
        tag = f"1. bootstrap n=2000 M=1000 {family}"
        ok1 = statistics.median(t["boot"]) <= TARGET_BOOT_S
        ok2 = statistics.median(t["boot2"]) <= TARGET_BOOT_S
        results[f"boot_{family}"] = ok1 and ok2
        rep.line(f"{tag} (absolute)", t["boot"], target=f"<= {TARGET_BOOT_S:g} s",
                 status=verdict(ok1))
        rep.line(f"{tag} n_jobs=2 (absolute)", t["boot2"], target=f"<= {TARGET_BOOT_S:g} s",
                 status=verdict(ok2))
        rep.line(f"{tag} vs skce()", t["boot"], t["skce"])
        rep.line(f"{tag} n_jobs=2 vs skce(n_jobs=2)", t["boot2"], t["skce2"])
        rep.line(f"{tag} n_jobs=2 vs n_jobs=None", t["boot2"], t["boot"])
        rep.line(f"{tag} dense baseline (absolute)", t["dense"])
        rep.line(f"{tag} vs dense baseline", t["boot"], t["dense"])
        rep.line(f"{tag} dense: building H alone", t["dense_H"], t["dense"])
        if profile or not (ok1 and ok2):
            profile_call(calls["boot"], f"bootstrap, {label}, n={BOOT_N}")
    return results


# --------------------------------------------------------------------------------------------
# 2. Bootstrap, n = 20,000, 200 resamples: time and memory


def bench_big_bootstrap(rep, n, repeat, profile):
    results = {}
    nxn_mb = n * float(n) * 8 / MB
    limit = TARGET_BOOT_MEM_FRACTION * nxn_mb
    for family in ("cls", "reg"):
        y, pred = make(family, n)
        calls = [lambda: skcalib.skce(y, pred, random_state=0),
                 lambda: skce_test(y, pred, method="bootstrap", n_resamples=BIG_BOOT_M,
                                   random_state=0)]
        t_skce, t_boot = interleaved_times([timed(c) for c in calls], repeat, budget=30.0,
                                           min_rounds=1 if family == "reg" else 2)
        tag = f"2. bootstrap n={n} M={BIG_BOOT_M} {family}"
        rep.line(f"{tag} (absolute)", t_boot)
        rep.line(f"{tag} vs skce()", t_boot, t_skce)
        if profile:
            profile_call(calls[1], tag)
        mem = run_memory_child(f"{family}:{n}:bootstrap:{BIG_BOOT_M}")
        ok = mem["peak_mb"] <= limit
        results[f"mem_{family}"] = ok
        model_mb = n * (BIG_BOOT_M + _pairwise.DEFAULT_CHUNK_SIZE) * 8 / MB
        rep.text_line(f"{tag} peak memory",
                      f"{mem['peak_mb']:.0f} MB (tm {mem['tracemalloc_peak_mb']:.0f}, rss "
                      f"+{mem['rss_delta_mb']:.0f}); n(M+T)8 B = {model_mb:.0f}, n x n = "
                      f"{nxn_mb:.0f}",
                      f"<= {limit:.0f} MB", verdict(ok))
    return results


# --------------------------------------------------------------------------------------------
# 3. Block tests, n = 10^6: time and O(n) memory


def bench_block(rep, n, small_n, repeat, profile):
    results = {}
    for family in ("cls", "reg"):
        y, pred = make(family, n)
        calls = {
            "skce_block2": lambda: skcalib.skce(y, pred, estimator="block", block_size=2),
            "test2": lambda: skce_test(y, pred, method="block", block_size=2),
            "test_sqrt": lambda: skce_test(y, pred, method="block", block_size="sqrt"),
            "test_sqrt_jobs2": lambda: skce_test(y, pred, method="block", block_size="sqrt",
                                                 n_jobs=2),
        }
        calls["skce_block2"]()  # warm-up
        calls["test2"]()
        names = list(calls)
        t = dict(zip(names, interleaved_times([timed(calls[k]) for k in names], repeat,
                                               budget=40.0, min_rounds=2)))
        B = max(2, math.isqrt(n))
        tag = f"3. block n={n} {family}"
        for key, what in (("test2", "B=2"), ("test_sqrt", f"B=sqrt={B}"),
                          ("test_sqrt_jobs2", "B=sqrt n_jobs=2")):
            ok = statistics.median(t[key]) <= TARGET_BLOCK_S
            results[f"{key}_{family}"] = ok
            rep.line(f"{tag} {what} (absolute)", t[key], target=f"<= {TARGET_BLOCK_S:g} s",
                     status=verdict(ok))
            if (profile or not ok) and key != "test_sqrt_jobs2":  # threads: cProfile sees sleep
                profile_call(calls[key], f"{tag} {what}")
        rep.line(f"{tag} B=2 vs skce(block, B=2)", t["test2"], t["skce_block2"])
        rep.line(f"{tag} B=sqrt vs B=2", t["test_sqrt"], t["test2"])
        n_pairs = (n // B) * B * (B - 1) / 2
        print(f"  [{family}] B=sqrt: {n // B} blocks x {B * (B - 1) // 2} unordered pairs = "
              f"{n_pairs:.3g} pair terms; {1e9 * statistics.median(t['test_sqrt']) / n_pairs:.1f}"
              f" ns per pair term (median, n_jobs=None)", flush=True)
        for bs in ("2", "sqrt"):
            m_small = run_memory_child(f"{family}:{small_n}:block:{bs}")
            m_big = run_memory_child(f"{family}:{n}:block:{bs}")
            ratio = m_big["peak_mb"] / m_small["peak_mb"]
            ok = ratio <= TARGET_BLOCK_MEM_RATIO
            results[f"mem_{bs}_{family}"] = ok
            rep.text_line(
                f"3. block B={bs} {family} peak memory n={n} / n={small_n}",
                f"{m_big['peak_mb']:.0f} MB / {m_small['peak_mb']:.0f} MB = {ratio:.2f} "
                f"(data {m_big['data_mb']:.0f} MB)",
                f"<= {TARGET_BLOCK_MEM_RATIO:g}", verdict(ok))
    return results


# --------------------------------------------------------------------------------------------
# 4. Nyström spectral test, n = 100,000


def bench_nystrom(rep, n, repeat, profile, quick=False):
    results = {}
    for family in ("cls", "reg"):
        y, pred = make(family, n)
        calls = {"skce": lambda: skcalib.skce(y, pred, random_state=0)}
        for m in LANDMARKS:
            calls[f"nys{m}"] = (lambda m=m: skce_test(y, pred, method="spectral", n_landmarks=m,
                                                      random_state=0))
        if family == "cls":  # the suggested fix: the m x m eigendecompositions on one thread
            calls["nys500_1"] = one_blas_thread(calls[f"nys{LANDMARKS[0]}"])
        names = list(calls)
        if family == "cls":
            t = interleaved_times([timed(calls[k]) for k in names], repeat, budget=60.0,
                                  min_rounds=2)
        else:  # about a minute per call: one round
            t = interleaved_times([timed(calls[k]) for k in names], 1)
        t = dict(zip(names, t))
        tag = f"4. Nystrom n={n} {family}"
        rep.line(f"4. skce() unbiased n={n} {family} (absolute)", t["skce"])
        for m in LANDMARKS:
            r = statistics.median(t[f"nys{m}"]) / statistics.median(t["skce"])
            ok = r <= TARGET_NYS_RATIO
            results[f"nys{m}_{family}"] = ok
            rep.line(f"{tag} m={m} vs skce()", t[f"nys{m}"], t["skce"],
                     target="-" if quick else f"<= {TARGET_NYS_RATIO:g}x med",
                     status="info" if quick else verdict(ok))
            if (profile or not (ok or quick)) and family == "cls":
                profile_call(calls[f"nys{m}"], f"{tag} m={m}")
        if "nys500_1" in t:
            rep.line(f"{tag} m={LANDMARKS[0]} 1 BLAS thr vs skce()", t["nys500_1"],
                     t["skce"])
    return results


# --------------------------------------------------------------------------------------------
# 5. Gamma and exact spectral, n = 2,000


def bench_small(rep, repeat):
    for family in ("cls", "reg"):
        y, pred = make(family, BOOT_N)
        calls = {
            "skce": lambda: skcalib.skce(y, pred, random_state=0),
            "gamma": lambda: skce_test(y, pred, method="gamma", random_state=0),
            "spectral": lambda: skce_test(y, pred, method="spectral", random_state=0),
            "nys500": lambda: skce_test(y, pred, method="spectral", n_landmarks=500,
                                        random_state=0),
            "boot": lambda: skce_test(y, pred, method="bootstrap", random_state=0),
            "spectral_1": one_blas_thread(lambda: skce_test(y, pred, method="spectral",
                                                            random_state=0)),
            "nys500_1": one_blas_thread(lambda: skce_test(y, pred, method="spectral",
                                                          n_landmarks=500, random_state=0)),
        }
        res = {k: calls[k]() for k in names_of(calls)}  # warm-up, and the p-values
        names = list(calls)
        t = dict(zip(names, interleaved_times([timed(calls[k]) for k in names], repeat,
                                               budget=30.0)))
        tag = f"5. n={BOOT_N} {family}"
        rep.line(f"{tag} gamma vs skce()", t["gamma"], t["skce"])
        rep.line(f"{tag} exact spectral vs skce()", t["spectral"], t["skce"])
        rep.line(f"{tag} Nystrom m=500 vs skce()", t["nys500"], t["skce"])
        rep.line(f"{tag} exact spectral, 1 BLAS thread, vs skce()", t["spectral_1"], t["skce"])
        rep.line(f"{tag} Nystrom m=500, BLAS 1 thread, vs skce()", t["nys500_1"], t["skce"])
        rep.line(f"{tag} exact spectral, BLAS 1 thread vs default", t["spectral_1"],
                 t["spectral"])
        print(f"  [{family}] p-values (calibrated data): bootstrap {res['boot'].pvalue:.3f}, "
              f"gamma {res['gamma'].pvalue:.3f}, exact spectral {res['spectral'].pvalue:.3f}, "
              f"Nystrom m=500 {res['nys500'].pvalue:.3f}; eigenvalue sums exact "
              f"{res['spectral'].eigenvalues.sum():.4g}, Nystrom "
              f"{res['nys500'].eigenvalues.sum():.4g}", flush=True)


KLCE_N = 2_000


def bench_klce(rep, repeat):
    """Item 6 (issue 13): the KLCE test with 1,000 resamples at n = 2,000 (target <= 3 s), for
    every null, against one evaluation of the statistic ``skcalib.klce`` on the same data."""
    rng = np.random.default_rng(SEED)
    X = rng.normal(size=(KLCE_N, 3))
    p = 1.0 / (1.0 + np.exp(-X[:, 0]))
    y = (rng.random(KLCE_N) < p).astype(int)
    calls = {"klce": lambda: skcalib.klce(y, p, X, random_state=0)}
    for method in ("conditional", "bootstrap", "permutation"):
        calls[method] = (lambda m=method: klce_test(y, p, X, method=m, n_resamples=1000,
                                                    random_state=0))
    calls["conditional n_jobs=2"] = lambda: klce_test(y, p, X, n_resamples=1000,
                                                      random_state=0, n_jobs=2)
    for f in calls.values():  # warm-up
        f()
    names = list(calls)
    t = dict(zip(names, interleaved_times([timed(calls[k]) for k in names], repeat,
                                           budget=30.0)))
    for name in names[1:]:
        med = statistics.median(t[name])
        rep.line(f"6. klce_test {name}, n={KLCE_N}, 1000 resamples vs klce()", t[name],
                 t["klce"], target="<= 3 s", status=verdict(med <= 3.0))


UCME_N, UCME_CLASSES, UCME_LOCATIONS = 500, 3, 5
TARGET_UCME_RATIO = 4.0


def bench_ucme(rep, repeat):
    """Item 7 (issue 22): ``ucme_test`` against one evaluation of its statistic ``skcalib.ucme``
    (same kernel, labels and test locations) on a calibrated Dirichlet model."""
    from skcalib.kernels import GaussianKernel

    rng = np.random.default_rng(SEED)
    P = rng.dirichlet(np.ones(UCME_CLASSES), size=UCME_N)
    y = np.minimum((rng.random(UCME_N)[:, None] > np.cumsum(P, axis=1)).sum(axis=1),
                   UCME_CLASSES - 1)
    kw = dict(kernel=GaussianKernel(0.5), n_test_locations=UCME_LOCATIONS,
              labels=list(range(UCME_CLASSES)), random_state=0)
    calls = {"ucme": lambda: skcalib.ucme(y, P, **kw), "ucme_test": lambda: ucme_test(y, P, **kw)}
    for f in calls.values():  # warm-up
        f()
    names = list(calls)
    t = dict(zip(names, interleaved_times([timed(calls[k]) for k in names], max(repeat, 20),
                                           budget=10.0)))
    ratio = statistics.median(t["ucme_test"]) / statistics.median(t["ucme"])
    rep.line(f"7. ucme_test n={UCME_N}, C={UCME_CLASSES}, J={UCME_LOCATIONS} vs ucme()",
             t["ucme_test"], t["ucme"], target=f"<= {TARGET_UCME_RATIO:g}x",
             status=verdict(ratio <= TARGET_UCME_RATIO))


def names_of(calls):
    return [k for k in calls if k in ("gamma", "spectral", "nys500", "boot")]


def one_blas_thread(fn):
    """``fn`` with BLAS limited to one thread (``threadpoolctl``)."""
    def run():
        with threadpool_limits(1, user_api="blas"):
            return fn()
    return run


# --------------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5,
                        help="rounds per timing (fewer past a section's time budget; default 5)")
    parser.add_argument("--quick", action="store_true",
                        help="smaller sizes for items 2-4 (about a minute)")
    parser.add_argument("--profile", action="store_true",
                        help="print a cProfile summary of every measured test call")
    parser.add_argument("--only", default="1234567",
                        help="items to run, e.g. '14' (default all)")
    parser.add_argument("--memory-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.memory_child is not None:
        memory_child(args.memory_child)
        return 0

    if args.quick:
        big_boot_n, block_n, block_small_n, nys_n = 5_000, 200_000, 50_000, 20_000
    else:
        big_boot_n, block_n, block_small_n, nys_n = BIG_BOOT_N, BLOCK_N, BLOCK_SMALL_N, NYS_N

    t_start = time.perf_counter()
    print(environment_line())
    print(f"times: up to {args.repeat} rounds, measured calls and baselines interleaved; "
          f"ratio = min/min, r(med) = median/median; base med = the baseline's median\n")
    rep = Report()
    rep.header()
    if "1" in args.only:
        bench_bootstrap(rep, args.repeat, args.profile)
    if "2" in args.only:
        bench_big_bootstrap(rep, big_boot_n, args.repeat, args.profile)
    if "3" in args.only:
        bench_block(rep, block_n, block_small_n, args.repeat, args.profile)
    if "4" in args.only:
        bench_nystrom(rep, nys_n, args.repeat, args.profile, quick=args.quick)
    if "5" in args.only:
        bench_small(rep, args.repeat)
    if "6" in args.only:
        bench_klce(rep, args.repeat)
    if "7" in args.only:
        bench_ucme(rep, args.repeat)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    print_summary(rep, t_start)
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)
