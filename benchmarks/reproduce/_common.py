"""Helpers shared by the scripts of ``benchmarks/reproduce/`` (not part of skcalib).

Every script reproduces one result of a paper skcalib implements: it simulates the paper's
experiment with skcalib's public API, prints the paper's number beside skcalib's with the
Monte-Carlo standard error of the difference, and draws the paper's figure to a PNG file.
"""

import argparse
import contextlib
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

#: Where the figures go unless ``--output-dir`` says otherwise (ignored by git).
DEFAULT_OUTPUT_DIR = Path(__file__).resolve().parent / "output"

#: ``|ours - paper| / se`` above this is reported as a difference beyond Monte-Carlo error.
Z_FLAG = 3.0


def make_parser(description, *, reps, quick_reps):
    """The options every script shares: ``--quick``, ``--reps``, ``--output-dir``,
    ``--random-state``."""
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help=f"reduced run of well under a minute ({quick_reps} replications and "
                             "smaller settings; rough numbers)")
    parser.add_argument("--reps", type=_positive_int, default=None,
                        help=f"simulated data sets per setting (default {reps}; "
                             f"{quick_reps} with --quick)")
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT_DIR,
                        help="folder of the figure (created if missing; default %(default)s)")
    parser.add_argument("--random-state", type=int, default=0,
                        help="seed of all simulations (default %(default)s)")
    parser.set_defaults(_reps_default=reps, _quick_reps=quick_reps)
    return parser


def parse(parser, argv):
    """Parse ``argv`` and resolve ``reps`` from ``--quick``."""
    args = parser.parse_args(argv)
    if args.reps is None:
        args.reps = args._quick_reps if args.quick else args._reps_default
    return args


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def int_list(text):
    """``"4,16,64"`` -> ``[4, 16, 64]`` (an argparse type)."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got {text!r}")
    return values


def seeds(random_state, *keys, reps):
    """``reps`` independent generators for the setting ``keys`` (same data for every method)."""
    children = np.random.SeedSequence([random_state, *keys]).spawn(reps)
    return [np.random.default_rng(child) for child in children]


@contextlib.contextmanager
def single_threaded_blas():
    """BLAS limited to one thread: the pairwise tiles are small and the cores are shared."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


class Timer:
    """Wall time of a ``with`` block, in ``seconds``."""

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._start
        return False


# ------------------------------------------------------------------------------------------------
# Monte-Carlo standard errors


def rate_se(rate, reps):
    """Binomial standard error of a rejection rate from ``reps`` data sets."""
    return math.sqrt(max(rate * (1.0 - rate), 0.0) / reps)


def mean_se(values):
    values = np.asarray(values, dtype=float)
    return float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.nan


def var_se(values):
    """Standard error of the sample variance (ddof=1), from the fourth central moment."""
    values = np.asarray(values, dtype=float)
    n = values.size
    if n < 4:
        return math.nan
    centred = values - values.mean()
    m2 = np.mean(centred ** 2)
    m4 = np.mean(centred ** 4)
    return float(math.sqrt(max(m4 - m2 ** 2 * (n - 3) / (n - 1), 0.0) / n))


def z_score(ours, paper, se):
    """``(ours - paper) / se``; NaN when undefined."""
    if paper is None or not np.isfinite(paper) or not np.isfinite(ours):
        return math.nan
    if se > 0:
        return (ours - paper) / se
    return 0.0 if ours == paper else math.inf


def flag(z):
    """``"*"`` when the difference is beyond Monte-Carlo error (``|z| > Z_FLAG``)."""
    return "*" if abs(z) > Z_FLAG else " "  # NaN compares False


def summarize(zs):
    """Print how many comparisons differ by more than ``Z_FLAG`` standard errors; return it."""
    z = np.array([v for v in zs if not (isinstance(v, float) and math.isnan(v))], dtype=float)
    beyond = int(np.sum(np.abs(z) > Z_FLAG))
    chance = z.size * math.erfc(Z_FLAG / math.sqrt(2.0))
    finite = np.abs(z[np.isfinite(z)])
    print(f"\n{z.size} comparisons with the paper: {beyond} beyond {Z_FLAG:g} standard errors "
          f"(about {chance:.1f} expected by chance); max |z| = "
          f"{finite.max() if finite.size else math.nan:.1f}")
    return beyond


def fmt(value, spec=".3g"):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return format(value, spec)


def print_table(header, rows, file=None):
    """Plain fixed-width table (columns sized to their contents)."""
    file = file or sys.stdout
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(cells[0], widths))
    print(line, file=file)
    print("  ".join("-" * w for w in widths), file=file)
    for row in cells[1:]:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)), file=file)


# ------------------------------------------------------------------------------------------------
# Figures


def pyplot():
    """matplotlib.pyplot with the non-interactive Agg backend."""
    import matplotlib

    if os.environ.get("MPLBACKEND") is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, output_dir, name):
    """Write ``fig`` to ``output_dir / name`` (PNG) and close it; return the path."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / name
    fig.savefig(path, format="png", dpi=110, bbox_inches="tight")
    pyplot().close(fig)
    return path


def footer(args, seconds, paths):
    print(f"\nreplications per setting: {args.reps}; random_state={args.random_state}; "
          f"run time {seconds:.1f} s")
    for path in paths:
        print(f"figure: {path}")
    print(f"'*' marks |skcalib - paper| > {Z_FLAG:g} Monte-Carlo standard errors "
          "(the se column: of the difference, both studies' simulation noise).")
    if args.reps < 30:
        print(f"note: with {args.reps} replications the standard errors themselves are "
              "unreliable; use the default --reps (or --quick) to compare with the paper.")
