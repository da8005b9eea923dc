"""Vashistha & Farahi, I-trustworthy models, Section 5.3, Fig. 3: type-II error of the KLCE test.

The paper's simulation: features ``x ~ N(0, I_d)``, labels
``y ~ Bernoulli(sigmoid(x_1 + ... + x_d))`` and the tested model
``f = sigmoid(x_1 + ... + x_{d-1})``, which ignores the last feature; the test looks at the
full ``x`` ("one does not know along which dimension the model is miscalibrated").
:func:`skcalib.stats.klce_test` is run as in the authors' notebook: permutation null with 1000
permutations (``method="permutation"``), RBF kernels of width 5 on the probabilities
and on the raw (unstandardised) features -- ``exp(-d^2 / 25)``, i.e.
``GaussianKernel(length_scale=5 / sqrt(2))`` -- and the p-value ``#{T* >= T} / 1000``. The type-II
error is the fraction of ``--reps`` data sets (default 400; the paper: 1000) with ``p > 0.05``, for
``d in {10, 20, 30, 40, 50}`` and ``N in {100, 500, 1000}`` (the paper plots 500 and 1000; its
notebook also ran 100).

With ``--conditional`` the script also runs skcalib's default null (``method="conditional"``:
labels redrawn from the predictions), which is not in the paper: it is the exact null of
"calibrated given the predictions and ``x``" (the permutation null is approximate: residual
variances ``f (1 - f)`` differ between samples). The two nulls have different power.

Run ``python benchmarks/reproduce/itrustworthy_type2.py [--quick] [--reps R] [--dims 10,20,30]
[--sizes 100,500,1000] [--n-resamples 1000] [--conditional] [--output-dir DIR]
[--random-state S]``.
"""

import math

import numpy as np

import _common as C  # benchmarks/reproduce/ (the script's folder) is on sys.path

from skcalib.kernels import GaussianKernel
from skcalib.stats import klce_test

ALPHA = 0.05
WIDTH = 5.0
PAPER_REPS = 1000
#: The paper's type-II errors (notebook output; the skcalib spec sheet of the paper, 5.3),
#: for d = 10, 20, 30, 40, 50.
PAPER_DIMS = (10, 20, 30, 40, 50)
PAPER = {1000: (0.000, 0.001, 0.012, 0.051, 0.150),
         500: (0.006, 0.069, 0.242, 0.426, 0.534),
         100: (0.595, 0.770, 0.851, 0.877, 0.896)}


def kernel():
    """The paper's RBF kernel of width 5: ``exp(-d^2 / 5^2)``."""
    return GaussianKernel(WIDTH / math.sqrt(2.0))


def simulate(n, d, rng):
    x = rng.standard_normal((n, d))
    s = x[:, :-1].sum(axis=1)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(s + x[:, -1])))).astype(np.int64)
    f = 1.0 / (1.0 + np.exp(-s))
    return x, y, f


def run(sizes, dims, reps, n_resamples, methods, random_state):
    results = {}
    for n in sizes:
        for d in dims:
            p = np.empty((reps, len(methods)))
            with C.Timer() as t:
                for r, rng in enumerate(C.seeds(random_state, n, d, reps=reps)):
                    x, y, f = simulate(n, d, rng)
                    for m, method in enumerate(methods):
                        p[r, m] = klce_test(y, f, x, kernel=kernel(), feature_kernel=kernel(),
                                            method=method, n_resamples=n_resamples,
                                            standardize=False, add_one=False,
                                            random_state=rng).pvalue
            for m, method in enumerate(methods):
                results[n, d, method] = {"error": float(np.mean(p[:, m] > ALPHA)),
                                         "pvalues": p[:, m].copy(), "seconds": t.seconds}
    return results


def report(results, reps):
    rows = []
    for (n, d, method), res in results.items():
        paper = PAPER[n][PAPER_DIMS.index(d)] if (n in PAPER and d in PAPER_DIMS
                                                  and method == "permutation") else None
        ours = res["error"]
        se = z = math.nan
        if paper is not None:
            pooled = (ours * reps + paper * PAPER_REPS) / (reps + PAPER_REPS)
            se = math.sqrt(pooled * (1 - pooled) * (1 / reps + 1 / PAPER_REPS))
            z = C.z_score(ours, paper, se)
        res.update(paper=paper, se=se, z=z)
        rows.append([n, d, method, C.fmt(paper, ".3f"), C.fmt(ours, ".3f"), C.fmt(se, ".3f"),
                     C.fmt(z, "+.1f") + C.flag(z),
                     "" if method == "permutation" else "not in the paper"])
    print(f"Type-II error of the KLCE test at alpha = {ALPHA} (I-trustworthy models, Fig. 3)\n")
    C.print_table(["N", "d", "null", "paper", "skcalib", "se", "z", "note"], rows)
    C.summarize([r["z"] for r in results.values()])


def figure(results, output_dir):
    plt = C.pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    sizes = sorted({n for (n, _, _) in results})
    methods = list(dict.fromkeys(m for (_, _, m) in results))
    for i, n in enumerate(sizes):
        for method in methods:
            dims = sorted(d for (nn, d, m) in results if nn == n and m == method)
            err = np.array([results[n, d, method]["error"] for d in dims])
            se = np.sqrt(err * (1 - err) / len(results[n, dims[0], method]["pvalues"]))
            ax.errorbar(dims, err, yerr=2 * se, fmt="o-" if method == "permutation" else "s:",
                        color=f"C{i}", capsize=3,
                        label=f"N = {n}, skcalib ({method})")
        if n in PAPER:
            ax.plot(PAPER_DIMS, PAPER[n], "x--", color=f"C{i}", alpha=0.7, ms=8,
                    label=f"N = {n}, paper")
    ax.set_xlabel("dimension of x")
    ax.set_ylabel("type-II error")
    ax.set_ylim(-0.03, 1.03)
    ax.legend(fontsize=7)
    ax.set_title("KLCE test, type-II error vs dim(x) (Vashistha & Farahi, Fig. 3)", fontsize=10)
    fig.tight_layout()
    return C.save_figure(fig, output_dir, "itrustworthy_type2.png")


def main(argv=None):
    parser = C.make_parser(__doc__.split("\n")[0], reps=400, quick_reps=50)
    parser.add_argument("--sizes", type=C.int_list, default=None,
                        help="sample sizes N (default 100,500,1000; 100,500 with --quick)")
    parser.add_argument("--dims", type=C.int_list, default=list(PAPER_DIMS),
                        help="dimensions of x, each >= 2 (default %(default)s)")
    parser.add_argument("--n-resamples", type=int, default=1000,
                        help="permutations of the null (default %(default)s, the paper's)")
    parser.add_argument("--conditional", action="store_true",
                        help="also run skcalib's conditional null (not in the paper)")
    args = C.parse(parser, argv)
    if args.sizes is None:
        args.sizes = [100, 500] if args.quick else [100, 500, 1000]
    if min(args.dims) < 2:
        parser.error("--dims: the model leaves out one of at least two features")
    methods = ["permutation"] + (["conditional"] if args.conditional else [])
    with C.Timer() as total, C.single_threaded_blas():
        results = run(args.sizes, args.dims, args.reps, args.n_resamples, methods,
                      args.random_state)
        report(results, args.reps)
        path = figure(results, args.output_dir)
    C.footer(args, total.seconds, [path])
    return {"results": results, "figures": [path], "seconds": total.seconds}


if __name__ == "__main__":
    main()
