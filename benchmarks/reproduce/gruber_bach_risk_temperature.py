"""Gruber & Bach, Section 5.1, Figure 1: the calibration estimation risk versus temperature.

The paper's simulation (:func:`skcalib.datasets.make_dirichlet_calibration`): ``d = 5`` classes,
``n = 500`` samples, true probabilities ``P ~ Dir(0.04 * 1_5)``, labels ``Y ~ Cat(P)`` and
underconfident predictions ``f = softmax(0.3 log P)``, so that the calibration function is known:
``P = softmax((10/3) log f)``. The parametric family of calibration estimation functions

    h_sim(theta)(p, p') = <p - softmax((10/3) theta log p), p' - softmax((10/3) theta log p')>

(:class:`skcalib.estimation.TemperatureCalibrationEstimator` with ``temperature = 0.3 / theta``;
``theta = 0`` maps every prediction to the uniform vector, given as a matrix) is scored by the
empirical MSE risk of :func:`skcalib.estimation.calibration_risk` (the U-statistic of Eq. 20,
canonical calibration) on each of ``--reps`` data sets (default 1000; the paper: 100). The figure
shows the mean and standard deviation of the risk across data sets as a function of ``theta``; the
paper's claim is that the risk is minimised at ``theta = 1``, the true calibration function.

The paper gives the figure only, without numbers. The numbers printed as ``reference`` come from
the independent re-simulation in the skcalib spec sheet of the paper (section 4.1; NumPy, 100
data sets): means and standard deviations of the risk on a grid of ``theta``, and the paired
check that ``R(theta = 1) < R(theta)`` on every data set for ``theta in {0.3, 0.5, 2, 3}``.

Run ``python benchmarks/reproduce/gruber_bach_risk_temperature.py [--quick] [--reps R]
[--n-samples 500] [--output-dir DIR] [--random-state S]``.
"""

import math

import numpy as np

import _common as C  # benchmarks/reproduce/ (the script's folder) is on sys.path

from skcalib.datasets import (DIRICHLET_CALIBRATION_ERRORS, make_dirichlet_calibration,
                              squared_calibration_errors)
from skcalib.estimation import TemperatureCalibrationEstimator, calibration_risk

D, POWER = 5, 0.3
PAPER_REPS = 100

#: The spec sheet's re-simulation: theta -> (mean, sd) of the empirical risk, n = 500, 100 reps.
REFERENCE = {0.0: (0.05697, 0.00192), 0.3: (0.00983, 0.00099), 0.5: (0.00943, 0.00100),
             0.75: (0.00895, 0.00103), 0.9: (0.00885, 0.00106), 1.0: (0.00883, 0.00108),
             1.1: (0.00884, 0.00110), 1.25: (0.00891, 0.00114), 1.5: (0.00908, 0.00119),
             2.0: (0.00948, 0.00128), 3.0: (0.01020, 0.00142)}
#: Population values of the spec sheet: R(h*) and R(0).
POPULATION = {"R(h*) (theta = 1)": 0.00867, "R(0) (theta = 0.3)": 0.00968}
PAIRED_THETAS = (0.3, 0.5, 2.0, 3.0)


def theta_grid(quick):
    fine = np.round(np.linspace(0.0, 3.0, 16 if quick else 31), 4)
    return np.array(sorted(set(fine.tolist()) | set(REFERENCE)))


def risk(y, f, theta):
    """Empirical risk of ``h_sim(theta)`` on ``(y, f)`` (canonical calibration)."""
    if theta == 0.0:
        # softmax(0 * log p) is the uniform vector: h(p, p') = <p - u, p' - u>
        r = f - 1.0 / D
        return calibration_risk(y, f, r @ r.T, mode="canonical", labels=np.arange(D))
    est = TemperatureCalibrationEstimator(temperature=POWER / theta, mode="canonical",
                                          labels=np.arange(D)).fit(f, y)
    return calibration_risk(y, f, est)


def run(thetas, n_samples, reps, random_state):
    risks = np.empty((reps, thetas.size))
    truth = np.empty(reps)
    for r, rng in enumerate(C.seeds(random_state, n_samples, reps=reps)):
        f, y, P = make_dirichlet_calibration(n_samples, D, power=POWER, random_state=rng,
                                             return_truth=True)
        truth[r] = squared_calibration_errors(f, P).mean()
        for t, theta in enumerate(thetas):
            risks[r, t] = risk(y, f, theta)
    return risks, truth


def report(thetas, risks, truth, reps, n_samples):
    mean, sd = risks.mean(axis=0), risks.std(axis=0, ddof=1)
    rows = []
    out = {}
    for t, theta in enumerate(thetas):
        ref = REFERENCE.get(float(theta))
        se = math.nan
        z = math.nan
        if ref is not None:
            se = math.sqrt(sd[t] ** 2 / reps + ref[1] ** 2 / PAPER_REPS)
            z = C.z_score(mean[t], ref[0], se)
            rows.append([f"{theta:g}", C.fmt(ref[0], ".5f"), C.fmt(ref[1], ".5f"),
                         C.fmt(mean[t], ".5f"), C.fmt(sd[t], ".5f"), C.fmt(se, ".5f"),
                         C.fmt(z, "+.1f") + C.flag(z)])
        out[float(theta)] = {"mean": float(mean[t]), "sd": float(sd[t]), "reference": ref,
                             "se": se, "z": z}
    print(f"Empirical calibration estimation risk of h_sim(theta), n = {n_samples}, {reps} data "
          "sets (Gruber & Bach, Sec. 5.1, Fig. 1)\n")
    C.print_table(["theta", "ref. mean", "ref. sd", "skcalib mean", "skcalib sd", "se", "z"], rows)
    C.summarize([v["z"] for v in out.values()])

    best = thetas[np.argmin(mean)]
    per_rep = thetas[np.argmin(risks, axis=1)]
    i1 = int(np.flatnonzero(thetas == 1.0)[0])
    print(f"\nargmin over theta of the mean risk: paper 1 (the true calibration function), "
          f"skcalib {best:g}")
    values, counts = np.unique(per_rep, return_counts=True)
    print("argmin per data set: " + ", ".join(f"theta={v:g}: {c}" for v, c in zip(values, counts)))
    paired = {}
    for theta in PAIRED_THETAS:
        t = int(np.flatnonzero(thetas == theta)[0])
        paired[theta] = int(np.sum(risks[:, i1] < risks[:, t]))
    print("paired R(1) < R(theta) on the same data set: reference 100 of 100 for each theta; "
          "skcalib " + ", ".join(f"theta={k:g}: {v} of {reps}" for k, v in paired.items()))
    print(f"\nmean sample truth CCE_2^2 = mean ||f - P||^2: skcalib {truth.mean():.5f} "
          f"(population {DIRICHLET_CALIBRATION_ERRORS['canonical']:.5f}); population risks of the "
          "spec sheet: " + ", ".join(f"{k} = {v}" for k, v in POPULATION.items()))
    return {"table": out, "argmin": float(best), "paired": paired}


def figure(thetas, risks, output_dir):
    plt = C.pyplot()
    mean, sd = risks.mean(axis=0), risks.std(axis=0, ddof=1)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, zoom in zip(axes, (False, True)):
        keep = (thetas >= 0.25) if zoom else np.ones(thetas.size, bool)
        ax.plot(thetas[keep], mean[keep], "o-", color="C0", ms=3, label="skcalib: mean")
        ax.fill_between(thetas[keep], (mean - sd)[keep], (mean + sd)[keep], color="C0",
                        alpha=0.25, label="skcalib: mean +/- sd")
        ref = np.array([k for k in sorted(REFERENCE) if keep[np.flatnonzero(thetas == k)[0]]])
        ax.errorbar(ref, [REFERENCE[k][0] for k in ref], yerr=[REFERENCE[k][1] for k in ref],
                    fmt="x", color="k", capsize=3, label="reference re-simulation: mean +/- sd")
        ax.axvline(1.0, color="red", lw=1.2, label="theta = 1 (true calibration function)")
        ax.set_xlabel("theta (temperature parameter of h_sim)")
        ax.set_ylabel("empirical risk R(h_sim(theta))")
        ax.set_title("zoom: theta >= 0.25" if zoom else "all theta")
    axes[0].legend(fontsize=8)
    fig.suptitle("Calibration estimation risk versus temperature (Gruber & Bach, Sec. 5.1, Fig. 1)",
                 fontsize=10)
    fig.tight_layout()
    return C.save_figure(fig, output_dir, "gruber_bach_risk_temperature.png")


def main(argv=None):
    # 1000 data sets (the paper: 100) resolve the mean risk to 1e-4 in about 30 s
    parser = C.make_parser(__doc__.split("\n")[0], reps=1000, quick_reps=100)
    parser.add_argument("--n-samples", type=int, default=500,
                        help="samples per data set (default %(default)s, the paper's)")
    args = C.parse(parser, argv)
    thetas = theta_grid(args.quick)
    with C.Timer() as total, C.single_threaded_blas():
        risks, truth = run(thetas, args.n_samples, args.reps, args.random_state)
        summary = report(thetas, risks, truth, args.reps, args.n_samples)
        path = figure(thetas, risks, args.output_dir)
    C.footer(args, total.seconds, [path])
    return {"thetas": thetas, "risks": risks, **summary, "figures": [path],
            "seconds": total.seconds}


if __name__ == "__main__":
    main()
