"""Widmann, Lindsten & Zachariah (ICLR 2021), App. A.2, Figs. 6-9: errors of SKCE estimators.

The synthetic Gaussian models of the paper: predictions ``N(c 1_d, 0.1^2 I_d)`` with
``c ~ U(0, 1)``; targets drawn from the prediction (calibrated) or with the first coordinate from
``N(0.1, 0.1^2)`` (uncalibrated); kernel ``exp(-W2(p, p')) exp(-|y - y'|^2 / 2)``. For
``d in {1, 10}`` and ``n in {4, 16, 64, 256, 1024}``, four estimators of the SKCE -- biased
(V-statistic), block ``B = 2``, block ``B = max(2, floor(sqrt n))`` and unbiased (``B = n``) --
are computed on ``--reps`` data sets each (the paper: 500), and their mean absolute error and
variance (ddof=1) are printed beside the paper's (its ``errors_*.csv``).

The ground truth is exact here (:data:`skcalib.datasets.GAUSSIAN_PREDICTIONS_SKCE`, 0.11077 and
0.05960 by quadrature; 0 for the calibrated model); the paper used the mean of an unbiased
estimator over 1000 data sets of 1000 samples, which differs by much less than the MC error.

Run ``python benchmarks/reproduce/iclr2021_estimator_errors.py [--quick] [--reps R]
[--sizes 4,16,64] [--dims 1,10] [--output-dir DIR] [--random-state S]``.
"""

import math

import numpy as np

import _common as C  # benchmarks/reproduce/ (the script's folder) is on sys.path

from skcalib import skce
from skcalib.datasets import GAUSSIAN_PREDICTIONS_SKCE, make_gaussian_predictions
from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor

PAPER_REPS = 500
ESTIMATORS = ("biased", "B=2", "B=sqrt(n)", "B=n")

#: The paper's data (``errors_*.csv``): (mean absolute error, variance) per estimator, keyed by
#: (model, d, n); from the skcalib spec sheet of the paper, section 6.2.
PAPER = {
    ("calibrated", 1, 4): [
        (2.33e-3, 5.41e-6), (3.22e-3, 2.14e-5), (3.29e-3, 2.35e-5), (1.84e-3, 8.08e-6)],
    ("calibrated", 1, 16): [
        (6.13e-4, 3.26e-7), (1.79e-3, 5.51e-6), (1.06e-3, 1.96e-6), (4.18e-4, 3.18e-7)],
    ("calibrated", 1, 64): [
        (1.61e-4, 2.08e-8), (8.23e-4, 1.12e-6), (3.42e-4, 1.86e-7), (9.96e-5, 1.93e-8)],
    ("calibrated", 1, 256): [
        (3.87e-5, 1.37e-9), (4.80e-4, 3.56e-7), (1.21e-4, 2.31e-8), (2.48e-5, 1.26e-9)],
    ("calibrated", 1, 1024): [
        (9.62e-6, 7.11e-11), (2.35e-4, 8.61e-8), (4.01e-5, 2.67e-9), (6.07e-6, 7.74e-11)],
    ("calibrated", 10, 4): [
        (2.36e-2, 3.94e-5), (6.15e-3, 8.18e-5), (5.94e-3, 8.45e-5), (4.10e-3, 2.94e-5)],
    ("calibrated", 10, 16): [
        (5.91e-3, 1.68e-6), (3.28e-3, 1.84e-5), (2.17e-3, 7.10e-6), (9.56e-4, 1.41e-6)],
    ("calibrated", 10, 64): [
        (1.47e-3, 9.23e-8), (1.82e-3, 5.35e-6), (6.66e-4, 7.01e-7), (2.32e-4, 8.77e-8)],
    ("calibrated", 10, 256): [
        (3.69e-4, 5.67e-9), (9.63e-4, 1.48e-6), (2.46e-4, 9.09e-8), (5.84e-5, 5.31e-9)],
    ("calibrated", 10, 1024): [
        (9.10e-5, 3.19e-10), (4.62e-4, 3.33e-7), (8.48e-5, 1.11e-8), (1.43e-5, 3.32e-10)],
    ("uncalibrated", 1, 4): [
        (7.51e-2, 9.96e-3), (7.88e-2, 9.83e-3), (8.11e-2, 1.03e-2), (7.14e-2, 8.21e-3)],
    ("uncalibrated", 1, 16): [
        (3.15e-2, 1.69e-3), (4.06e-2, 2.47e-3), (3.43e-2, 1.94e-3), (3.43e-2, 1.88e-3)],
    ("uncalibrated", 1, 64): [
        (1.59e-2, 3.95e-4), (1.94e-2, 6.00e-4), (1.74e-2, 4.57e-4), (1.69e-2, 4.38e-4)],
    ("uncalibrated", 1, 256): [
        (8.03e-3, 1.02e-4), (9.88e-3, 1.59e-4), (8.35e-3, 1.08e-4), (8.39e-3, 1.06e-4)],
    ("uncalibrated", 1, 1024): [
        (4.23e-3, 2.78e-5), (5.11e-3, 4.14e-5), (4.15e-3, 2.71e-5), (4.26e-3, 2.91e-5)],
    ("uncalibrated", 10, 4): [
        (6.05e-2, 4.29e-3), (5.44e-2, 4.98e-3), (5.67e-2, 5.49e-3), (4.34e-2, 3.36e-3)],
    ("uncalibrated", 10, 16): [
        (2.34e-2, 6.68e-4), (2.84e-2, 1.22e-3), (2.26e-2, 8.47e-4), (1.89e-2, 5.84e-4)],
    ("uncalibrated", 10, 64): [
        (1.03e-2, 1.54e-4), (1.34e-2, 2.90e-4), (1.03e-2, 1.73e-4), (9.95e-3, 1.51e-4)],
    ("uncalibrated", 10, 256): [
        (4.99e-3, 3.99e-5), (6.87e-3, 7.63e-5), (5.60e-3, 4.85e-5), (5.33e-3, 4.57e-5)],
    ("uncalibrated", 10, 1024): [
        (2.36e-3, 9.21e-6), (3.59e-3, 2.00e-5), (2.30e-3, 8.43e-6), (2.53e-3, 9.92e-6)],
}

#: The paper's minimum times in seconds (d = 1, Julia on a 3.6 GHz CPU), per estimator.
PAPER_TIMES = {4: (8.4e-7, 2.5e-7, 2.3e-7, 5.4e-7), 16: (1.2e-5, 1.3e-6, 2.2e-6, 1.1e-5),
               64: (1.8e-4, 3.4e-6, 2.0e-5, 1.8e-4), 256: (2.9e-3, 1.4e-5, 1.7e-4, 2.9e-3),
               1024: (4.7e-2, 5.6e-5, 1.4e-3, 4.7e-2)}

#: The paper's kernel exp(-W2(p, p')) exp(-|y - y'|^2 / 2).
KERNEL = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))


def estimator_kwargs(name, n):
    if name == "biased":
        return {"estimator": "biased"}
    if name == "B=2":
        return {"estimator": "block", "block_size": 2}
    if name == "B=sqrt(n)":
        return {"estimator": "block", "block_size": max(2, math.isqrt(n))}
    return {"estimator": "unbiased"}


def simulate(model, d, n, reps, random_state):
    """Estimates (reps x 4) and the minimum time of each estimator."""
    estimates = np.empty((reps, len(ESTIMATORS)))
    times = np.full(len(ESTIMATORS), np.inf)
    for r, rng in enumerate(C.seeds(random_state, d, n, model == "calibrated", reps=reps)):
        pred, y = make_gaussian_predictions(n, n_dims=d, calibrated=(model == "calibrated"),
                                            random_state=rng)
        for e, name in enumerate(ESTIMATORS):
            with C.Timer() as t:
                estimates[r, e] = skce(y, pred, kernel=KERNEL, **estimator_kwargs(name, n))
            times[e] = min(times[e], t.seconds)
    return estimates, times


def run(sizes, dims, reps, random_state):
    results = {}
    for model in ("calibrated", "uncalibrated"):
        for d in dims:
            truth = 0.0 if model == "calibrated" else GAUSSIAN_PREDICTIONS_SKCE[d]
            for n in sizes:
                est, times = simulate(model, d, n, reps, random_state)
                err = np.abs(est - truth)
                for e, name in enumerate(ESTIMATORS):
                    results[model, d, n, name] = {
                        "mean_abs_error": float(err[:, e].mean()),
                        "mean_abs_error_se": C.mean_se(err[:, e]),
                        "variance": float(est[:, e].var(ddof=1)),
                        "variance_se": C.var_se(est[:, e]),
                        "mean": float(est[:, e].mean()),
                        "time": float(times[e]),
                    }
    return results


def _se_difference(ours, se_ours, paper, reps):
    """Standard error of ``ours - paper``: skcalib's standard error, plus the paper's own, taken
    with the same relative size (``se / value``) at the paper's number of data sets."""
    if paper is None or not ours > 0:
        return se_ours
    se_paper = se_ours * (paper / ours) * math.sqrt(reps / PAPER_REPS)
    return math.sqrt(se_ours ** 2 + se_paper ** 2)


def report(results, reps):
    rows = []
    for (model, d, n, name), res in results.items():
        paper = PAPER.get((model, d, n))
        p_err, p_var = paper[ESTIMATORS.index(name)] if paper else (None, None)
        se_err = _se_difference(res["mean_abs_error"], res["mean_abs_error_se"], p_err, reps)
        se_var = _se_difference(res["variance"], res["variance_se"], p_var, reps)
        z_err = C.z_score(res["mean_abs_error"], p_err, se_err)
        z_var = C.z_score(res["variance"], p_var, se_var)
        rows.append([model, d, n, name, C.fmt(p_err), C.fmt(res["mean_abs_error"]),
                     C.fmt(se_err, ".2g"), C.fmt(z_err, "+.1f") + C.flag(z_err), C.fmt(p_var),
                     C.fmt(res["variance"]), C.fmt(se_var, ".2g"),
                     C.fmt(z_var, "+.1f") + C.flag(z_var)])
        res.update(paper_mean_abs_error=p_err, paper_variance=p_var, z_mean_abs_error=z_err,
                   z_variance=z_var)
    print("Mean absolute error and variance of the SKCE estimators (ICLR 2021, Figs. 6-9)\n")
    C.print_table(["model", "d", "n", "estimator", "paper |err|", "skcalib |err|", "se", "z",
                   "paper var", "skcalib var", "se", "z"], rows)
    C.summarize([r[k] for r in results.values() for k in ("z_mean_abs_error", "z_variance")])
    ns = sorted(n for (m, d, n, e) in results
                if (m, d, e) == ("calibrated", 1, "biased") and n in PAPER_TIMES)
    if ns:
        times = [[name] + [f"{PAPER_TIMES[n][e]:.1e} / "
                           f"{results['calibrated', 1, n, name]['time']:.1e}" for n in ns]
                 for e, name in enumerate(ESTIMATORS)]
        print("\nMinimum time per call in seconds, calibrated model, d = 1: paper (Julia, "
              "3.6 GHz) / skcalib (Python, includes input validation)\n")
        C.print_table(["estimator"] + [f"n={n}" for n in ns], times)


def figure(results, output_dir):
    plt = C.pyplot()
    panels = sorted({(m, d) for (m, d, _, _) in results},
                    key=lambda k: (k[0] != "calibrated", k[1]))
    fig, axes = plt.subplots(2, len(panels), figsize=(3.6 * len(panels), 6.4), squeeze=False)
    colors = dict(zip(ESTIMATORS, ["C0", "C1", "C2", "C3"]))
    for col, (model, d) in enumerate(panels):
        ns = sorted({n for (m, dd, n, _) in results if (m, dd) == (model, d)})
        for row, (key, label) in enumerate([("mean_abs_error", "mean absolute error"),
                                            ("variance", "variance")]):
            ax = axes[row, col]
            for e, name in enumerate(ESTIMATORS):
                ours = [results[model, d, n, name][key] for n in ns]
                ax.plot(ns, ours, "o-", color=colors[name], label=f"{name} (skcalib)")
                pn = [n for n in ns if (model, d, n) in PAPER]
                paper = [PAPER[model, d, n][e][row] for n in pn]
                ax.plot(pn, paper, "x--", color=colors[name], alpha=0.6, label=f"{name} (paper)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("number of samples n")
            ax.set_ylabel(label)
            ax.set_title(f"{model}, d = {d}")
    axes[0, 0].legend(fontsize=7, ncol=2)
    fig.suptitle("SKCE estimators on the Gaussian models (Widmann et al. 2021, Figs. 6-9): "
                 "skcalib (solid) vs paper (dashed)", fontsize=10)
    fig.tight_layout()
    return C.save_figure(fig, output_dir, "iclr2021_estimator_errors.png")


def main(argv=None):
    parser = C.make_parser(__doc__.split("\n")[0], reps=500, quick_reps=100)
    parser.add_argument("--sizes", type=C.int_list, default=None,
                        help="sample sizes (default 4,16,64,256,1024; 4,16,64,256 with --quick)")
    parser.add_argument("--dims", type=C.int_list, default=[1, 10],
                        help="dimensions d, each 1 or 10 (default %(default)s)")
    args = C.parse(parser, argv)
    if args.sizes is None:
        args.sizes = [4, 16, 64, 256] if args.quick else [4, 16, 64, 256, 1024]
    if not set(args.dims) <= {1, 10}:
        parser.error("--dims: the paper's (and the exact truth's) dimensions are 1 and 10")
    with C.Timer() as total, C.single_threaded_blas():
        results = run(args.sizes, args.dims, args.reps, args.random_state)
        report(results, args.reps)
        path = figure(results, args.output_dir)
    C.footer(args, total.seconds, [path])
    return {"results": results, "figures": [path], "seconds": total.seconds}


if __name__ == "__main__":
    main()
