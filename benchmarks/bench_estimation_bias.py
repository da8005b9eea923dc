"""Bias of CalibrationErrorCV's default against the known truths of skcalib's simulations.

Issue 11: the plug-in estimate of a squared calibration error (``CalibrationErrorCV(
estimate="plugin")``, the paper's; the default is now the debiased one-step, whose study is
``benchmarks/study_estimation.py``) is biased, and its standard errors do not cover the bias.
This script measures the plug-in: for
each sample size ``n`` and each simulation with a known truth it fits the default pipeline
(``estimators_and_grids=None``: the RBF width searched with the ridge) and the paper's grids
(``estimators_and_grids="paper"``: ``gamma = 1/2``) on ``--seeds`` independent data sets, and
prints

* ``truth``: the population value (``skcalib.datasets``);
* ``mean est``: the mean estimate over the data sets; ``bias`` = mean est - truth, with its
  standard error over the data sets (``se(bias)``, the sd of the estimates / sqrt(seeds));
* ``bias/SE``: the mean over data sets of (estimate - truth) / ``total_standard_error_`` --
  the bias in units of the error bar the pipeline reports;
* ``selected``: how often each family was selected; ``s/fit``: mean seconds per fit.

Simulations: ``make_dirichlet_calibration`` (Gruber & Bach Sec. 5.1, 5 classes) with its
canonical, top-label and class-wise truths (:data:`skcalib.datasets.DIRICHLET_CALIBRATION_ERRORS`),
and ``make_binary_squared_calibration`` (truth 1/30, binary notion). Data set ``s`` of size
``n`` uses ``random_state=s``, and the pipeline uses ``random_state=s`` too.

A plain script (exit status 0). Usage::

    .venv/bin/python benchmarks/bench_estimation_bias.py [--n 500 1000 2000] [--seeds 3]
        [--notions canonical top_label classwise binary] [--no-paper]
"""

import argparse
import os
import sys
import time
import warnings
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_foundation import environment_line  # noqa: E402

from skcalib.datasets import (BINARY_SQUARED_CALIBRATION_ERROR,  # noqa: E402
                              DIRICHLET_CALIBRATION_ERRORS, make_binary_squared_calibration,
                              make_dirichlet_calibration)
from skcalib.estimation import CalibrationErrorCV, GridBoundaryWarning  # noqa: E402

NOTIONS = ("canonical", "top_label", "classwise", "binary")


def simulate(notion, n, seed):
    """``(P, y, truth)`` of one data set."""
    if notion == "binary":
        c, y = make_binary_squared_calibration(n, random_state=seed)
        return c, y, BINARY_SQUARED_CALIBRATION_ERROR
    P, y = make_dirichlet_calibration(n, random_state=seed)
    return P, y, DIRICHLET_CALIBRATION_ERRORS[notion]


def run(notion, n, seed, grids):
    P, y, truth = simulate(notion, n, seed)
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", GridBoundaryWarning)
        cv = CalibrationErrorCV(grids, estimate="plugin", mode=notion,
                                random_state=seed).fit(P, y)
    seconds = time.perf_counter() - t
    boundary = sum(issubclass(w.category, GridBoundaryWarning) for w in caught)
    return {"est": cv.calibration_error_, "tse": cv.total_standard_error_, "truth": truth,
            "family": cv.best_family_, "params": cv.best_params_, "seconds": seconds,
            "boundary": boundary}


def summarise(rows):
    est = np.array([r["est"] for r in rows])
    truth = rows[0]["truth"]
    z = np.array([(r["est"] - truth) / r["tse"] for r in rows])
    se_bias = est.std(ddof=1) / np.sqrt(len(est)) if len(est) > 1 else float("nan")
    fams = Counter(r["family"] for r in rows)
    return {"truth": truth, "mean": est.mean(), "bias": est.mean() - truth, "se_bias": se_bias,
            "z": z.mean(), "z_all": z, "tse": np.mean([r["tse"] for r in rows]),
            "selected": ", ".join(f"{k} {v}" for k, v in fams.most_common()),
            "seconds": np.mean([r["seconds"] for r in rows]),
            "boundary": sum(r["boundary"] for r in rows)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--notions", nargs="+", choices=NOTIONS, default=list(NOTIONS))
    parser.add_argument("--no-paper", action="store_true", help="skip the paper-grid option")
    args = parser.parse_args(argv)
    print(environment_line())
    print(f"seeds per cell: {args.seeds}; CalibrationErrorCV(mode=notion, random_state=seed), "
          f"5 folds, test_size 0.2, exact kernel ridge, n_jobs=None\n")
    options = [("default", None)] + ([] if args.no_paper else [("paper", "paper")])
    header = (f"{'n':>5} {'notion':<10} {'grids':<8} {'truth':>8} {'mean est':>9} {'bias':>9} "
              f"{'se(bias)':>9} {'mean SE':>8} {'bias/SE':>8}  {'z per data set':<24} "
              f"{'s/fit':>6} {'edge':>4}  selected")
    print(header)
    print("-" * len(header))
    for n in args.n:
        for notion in args.notions:
            for label, grids in options:
                rows = [run(notion, n, seed, grids) for seed in range(args.seeds)]
                s = summarise(rows)
                zs = " ".join(f"{v:+.1f}" for v in s["z_all"])
                print(f"{n:>5} {notion:<10} {label:<8} {s['truth']:>8.5f} {s['mean']:>9.5f} "
                      f"{s['bias']:>+9.5f} {s['se_bias']:>9.5f} {s['tse']:>8.5f} "
                      f"{s['z']:>+8.2f}  {zs:<24} {s['seconds']:>6.1f} {s['boundary']:>4}  "
                      f"{s['selected']}", flush=True)
    print("\nedge: GridBoundaryWarnings over the data sets (selected value at the end of its "
          "grid).")


if __name__ == "__main__":
    main()
