"""Throughput and peak memory of the chunked (Dask) metrics on a Parquet data set (issue 16,
item 6), against the in-memory NumPy path measured in the same run.

Run with ``.venv/bin/python benchmarks/bench_dask.py [--sizes 1e6,1e7] [--dask-only-sizes 1e8]
[--rows-per-file 1e6] [--dir /tmp/skcalib-bench-dask] [--keep]`` (needs the ``dask`` extra:
``pip install -e ".[dask]"``). A plain script that always exits with status 0.

Data (fixed seed): ``n`` rows of 3-class predictions ``p ~ Dirichlet(1, 1, 1)`` and labels drawn
from the sharpened, renormalised ``p**1.5`` (a mildly under-confident model, so the errors are
clearly non-zero), written as Parquet files of ``--rows-per-file`` rows each (columns ``y``
int64, ``p0 .. p2`` float64; 32 bytes a row) -- generated file by file, so writing never holds
more than one file either.

Every measurement runs in a fresh child process (so that its peak resident memory,
``ru_maxrss``, is its own) and reports the wall time from the files on disk to the number:

* ``numpy``: read the whole data set into memory (``pyarrow.parquet.read_table``), then call the
  metric on NumPy arrays; ``read s`` is the reading part of the wall time;
* ``dask``: ``dask.dataframe.read_parquet(dir).to_dask_array(lengths=True)`` and the same call
  on the Dask arrays, reduced chunk by chunk (one chunk per file) on dask's threaded
  scheduler (2 threads: the machine's 2 cores); reading the files is part of the reduction,
  ``read s`` is only the set-up (partition lengths).

The libraries are imported before the clock starts; ``base MB`` is the peak resident memory
after the imports, ``peak MB`` at the end (so ``peak - base`` is what the computation added).

Metrics (all with ``labels=[0, 1, 2]``, so that the Dask path needs no pass to find the
classes): ``ece`` -- ``calibration_error(y, P)`` (top-label, 15 uniform bins); ``skce_block`` --
``skce(y, P, estimator="block")`` (block size 2, the default Gaussian kernel with the median
heuristic, whose 1,000 rows the Dask path gathers in a separate pass); ``skce_block_fixed`` --
the same with ``GaussianKernel(0.1)`` (one pass). Throughput = rows / wall seconds. The values
of both paths are printed side by side (they agree up to rounding: the chunks of 10^6 rows are
multiples of the block size).
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time

import numpy as np

SEED = 20261125
N_CLASSES = 3
METRICS = ("ece", "skce_block", "skce_block_fixed")


def write_dataset(path, n, rows_per_file):
    """Parquet files of ``rows_per_file`` rows (the last one shorter), written one by one."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    stamp = os.path.join(path, f"_complete_{n}_{rows_per_file}")
    if os.path.exists(stamp):
        return False
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    for k, start in enumerate(range(0, n, rows_per_file)):
        m = min(rows_per_file, n - start)
        rng = np.random.default_rng([SEED, k])
        P = rng.dirichlet(np.ones(N_CLASSES), size=m)
        S = P ** 1.5
        S /= S.sum(axis=1, keepdims=True)
        y = (rng.random(m)[:, None] > np.cumsum(S, axis=1)).sum(axis=1)
        table = pa.table({"y": y.astype(np.int64),
                          **{f"p{c}": P[:, c] for c in range(N_CLASSES)}})
        pq.write_table(table, os.path.join(path, f"part-{k:05d}.parquet"), row_group_size=m)
    open(stamp, "w").close()
    return True


def call_metric(metric, y, P):
    import skcalib
    from skcalib.kernels import GaussianKernel

    labels = list(range(N_CLASSES))  # known classes: no pass over y_true to find them
    if metric == "ece":
        return skcalib.calibration_error(y, P, labels=labels)
    if metric == "skce_block":
        return skcalib.skce(y, P, estimator="block", labels=labels)
    return skcalib.skce(y, P, estimator="block", kernel=GaussianKernel(0.1), labels=labels)


def child(mode, path, metric):
    """One measurement in this (fresh) process; prints one JSON line. The libraries are
    imported before the clock starts; ``base_rss_mb`` is the peak resident memory then."""
    import dask
    import dask.dataframe as dd
    import pyarrow.parquet as pq

    import skcalib  # noqa: F401
    from skcalib.kernels import GaussianKernel  # noqa: F401

    out = {"mode": mode, "metric": metric,
           "base_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}
    t0 = time.perf_counter()
    if mode == "numpy":
        table = pq.read_table(path, columns=["y"] + [f"p{c}" for c in range(N_CLASSES)])
        y = table.column("y").to_numpy()
        P = np.column_stack([table.column(f"p{c}").to_numpy() for c in range(N_CLASSES)])
        del table
        t1 = time.perf_counter()
        value = call_metric(metric, y, P)
        out["read_s"] = t1 - t0
        out["n"] = int(y.shape[0])
    else:
        with dask.config.set(scheduler="threads", num_workers=2):
            arr = dd.read_parquet(path).to_dask_array(lengths=True)
            t1 = time.perf_counter()
            value = call_metric(metric, arr[:, 0], arr[:, 1:])
        out["lengths_s"] = t1 - t0
        out["n"] = int(arr.shape[0])
        out["chunks"] = len(arr.chunks[0])
    t2 = time.perf_counter()
    out["wall_s"] = t2 - t0
    out["metric_s"] = t2 - t1
    out["value"] = float(value)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps(out))


def run_child(mode, path, metric):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, path, metric]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        print(f"  {mode} {metric}: FAILED\n{res.stderr[-2000:]}")
        return None
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e6,1e7", help="sizes run on both paths")
    ap.add_argument("--dask-only-sizes", default="",
                    help="sizes run on the Dask path only (e.g. 1e8)")
    ap.add_argument("--rows-per-file", type=float, default=1e6)
    ap.add_argument("--dir", default="/tmp/skcalib-bench-dask")
    ap.add_argument("--metrics", default=",".join(METRICS))
    ap.add_argument("--keep", action="store_true", help="keep the Parquet files")
    ap.add_argument("--child", nargs=3, metavar=("MODE", "PATH", "METRIC"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    try:
        import dask  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        print(f"bench_dask: skipped ({exc}); install the dask extra: pip install -e '.[dask]'")
        return
    both = [int(float(s)) for s in args.sizes.split(",") if s]
    dask_only = [int(float(s)) for s in args.dask_only_sizes.split(",") if s]
    metrics = [m for m in args.metrics.split(",") if m]
    rpf = int(args.rows_per_file)
    print(f"load average {os.getloadavg()[0]:.1f} (2 cores, shared); rows per file {rpf:,}")
    header = (f"{'n':>12} {'metric':>17} {'path':>6} {'wall s':>8} {'rows/s':>11} "
              f"{'read s':>7} {'base MB':>8} {'peak MB':>8} {'value':>22}")
    print(header)
    print("-" * len(header))
    for n in sorted(set(both) | set(dask_only)):
        path = os.path.join(args.dir, f"n{n}")
        t = time.perf_counter()
        if write_dataset(path, n, rpf):
            print(f"  wrote {n:,} rows to {path} in {time.perf_counter() - t:.1f} s")
        for metric in metrics:
            modes = ["numpy", "dask"] if n in both else ["dask"]
            for mode in modes:
                r = run_child(mode, path, metric)
                if r is None:
                    continue
                read = r.get("read_s", r.get("lengths_s"))
                print(f"{n:>12,} {metric:>17} {mode:>6} {r['wall_s']:>8.2f} "
                      f"{n / r['wall_s']:>11,.0f} {read:>7.2f} {r['base_rss_mb']:>8.0f} "
                      f"{r['peak_rss_mb']:>8.0f} "
                      f"{r['value']:>22.17g}", flush=True)
        if not args.keep:
            shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    main()
