"""Estimation benchmarks of skcalib: the canonical kernel-ridge pipeline against the reference.

Run with ``.venv/bin/python benchmarks/bench_estimation.py`` (or ``make bench``). As in the other
scripts, the machine may be shared and noisy: the measured call and its baseline take turns in the
same run (alternating order), min and median are printed, and the targets check the minima. Here
the ratio is a *speed-up*: reference time / skcalib time.

Targets (performance item of the estimation issue)
--------------------------------------------------
The pipeline under test is Gruber & Bach's (Sec. 3.2) canonical Kronecker kernel-ridge pipeline::

    CalibrationErrorCV([("kkr", KernelRidgeCalibrationEstimator(method="kronecker"),
                         {"alpha": alphas})],
                       mode="canonical", cv=5, test_size=0.2, random_state=0).fit(P, y)

with C = 10 classes and 9 ridge values: every other value of the paper's canonical Kronecker grid,
``paper_grids(n_train, "canonical")["kronecker"]["alpha"][::2]`` = sqrt(n_train) x {1e8, 1e6, ...,
1e-8} (n_train = training-fold size), so that the 9 values span the paper's whole range.

1. n = 4,000: at least 20 x faster than the *reference algorithm* as the paper's code runs it --
   written in this script: the same split and folds, and for every fold and every ridge value a
   fresh RBF kernel matrix, a fresh ``np.linalg.eigh``, ``G = Delta^T Delta``,
   ``C = Q (Lt * Q^T G Q) Q^T`` (Eq. 29, n^3 work), the validation ``H = K_tv^T C K_tv`` (Eq. 31),
   the U-statistic risk over i != j (Eq. 30) and the test diagonal; selection by mean risk,
   fold-ensemble estimate. The reference also checks skcalib: same selected alpha, same estimate to
   1e-8 relative (a target line).
2. Low rank (Nystrom, ``n_components=m``, m = 500): the estimate within 1e-3 of the exact pipeline's
   at n = 4,000, and n = 10,000 (CIFAR's test-set size) end to end in <= 60 s (absolute).

``--reference`` chooses how the reference is timed:

* ``unit`` (default; the script then takes ~6.5 min on a quiet 2-core machine): one full (fold,
  alpha) unit of the reference is timed in every round, interleaved with the skcalib pipeline, and
  the reference time is **extrapolated** as 45 x the fastest unit (all 45 units have the same
  shapes). The reference's selection and estimate then come from the same formulas evaluated
  with one ``np.linalg.eigh`` per fold (``eigh`` is deterministic, so the values are those of the
  fresh-eigh reference); every timed unit's own risk and estimate are checked against them.
* ``full``: the whole reference (45 fresh eigendecompositions) is run and **measured** once,
  between two skcalib runs; the extrapolation is printed as well. Several minutes at n = 4,000.
* ``skip``: no reference (no speed-up or agreement lines).

Lines marked ``info``: skcalib's eigensolver (scipy ``driver="evd"``) against the reference's
``np.linalg.eigh``; the exact pipeline and the reference unit with BLAS limited to one thread
(``threadpoolctl``; interleaved with the rest); single runs with one BLAS thread of kkr and ukkr in
one pipeline and of the Nystrom pipeline with ranks 200, 500 and 1000 at n = 4,000 (their errors)
and 1000 at n = 10,000; the Nystrom pipeline (m = 500, default threads) against the reference
at n = 4,000; n = 10,000 with ``n_jobs=2`` and with one BLAS thread (interleaved with the
target run); ``--eigh-10k`` times one exact eigendecomposition of a 6,400 x 6,400 kernel matrix
(one exact fold at n = 10,000). The exact pipeline at n = 4,000 is always profiled (cProfile, top
costs, one BLAS thread; this run also gives the printed values and is not timed).

3. The default search against the paper's grids (issue 24, item 3): ``CalibrationErrorCV()``
   (four kernel widths, ``n_components="auto"`` for kernel ridge) takes at most 1.5 x the time of
   ``CalibrationErrorCV("paper")`` on the same data, ``make_dirichlet_calibration(2000,
   random_state=0)``, top-label and canonical: the median of ``--ratio-rounds`` (>= 3) alternating
   rounds of each, printed as the ratio of the medians (and the median of the per-round ratios).
   The automatic low rank must agree with the exact default search within 0.1 of the reported
   standard error, for the plug-in estimate (``calibration_error_``, in units of
   ``total_standard_error_``) and for the cross-fitted one-step estimate of the best kernel-ridge
   candidate (in units of its own standard error), on several seeds and n.
   ``--section default`` runs this part only.

The script always exits with status 0: it is a report, not a test.
"""

import argparse
import os
import statistics
import sys
import time
import warnings

import numpy as np
from scipy import linalg
from sklearn.model_selection import KFold, train_test_split
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_foundation import environment_line, print_summary, profile_call, SpeedupReport, timed, verdict  # noqa: E402
from bench_regression import interleaved_times  # noqa: E402


from skcalib.datasets import make_dirichlet_calibration  # noqa: E402
from skcalib.estimation import (CalibrationErrorCV, KernelRidgeCalibrationEstimator,  # noqa: E402
                                cross_fit_calibration_error, paper_grids)

SEED = 20261123
N_EXACT, N_BIG, C = 4_000, 10_000, 10
GAMMA = 0.5            # the paper's RBF kernel exp(-gamma ||p - p'||^2) on probability vectors
N_FOLDS, TEST_SIZE, CV_SEED = 5, 0.2, 0
CONCENTRATION, POWER = 0.04, 0.3

LOWRANK_M = 500                # the Nystrom rank of the targets
LOWRANK_INFO_M = (200, 1000)   # other ranks, for information

TARGET_SPEEDUP = 20.0
TARGET_AGREEMENT = 1e-8        # relative difference of skcalib's and the reference's estimate
TARGET_LOWRANK_ERROR = 1e-3    # |estimate(Nystrom) - estimate(exact)| at n = 4,000
TARGET_BIG_SECONDS = 60.0      # n = 10,000, Nystrom, end to end

N_RATIO = 2_000                # section 3: default search vs the paper's grids
TARGET_DEFAULT_RATIO = 1.5     # default time / paper time (medians)
TARGET_AUTO_SE = 0.1           # |auto - exact| in units of the reported standard error
AGREEMENT_CASES = ((2_000, 0), (1_000, 1), (1_000, 2))  # (n, seed) of the agreement lines


# --------------------------------------------------------------------------------------------
# Data


def _make_dirichlet_fallback(n, d, concentration, power, seed):
    """The Dirichlet simulation (Gruber & Bach, Sec. 5.1) generalised to ``d`` classes, sampled in
    log space (spec pitfall P13); the same draws, in the same order, as
    ``skcalib.datasets.make_dirichlet_calibration``."""
    rng = np.random.default_rng(seed)
    log_g = np.log(rng.standard_gamma(concentration + 1.0, size=(n, d)))
    log_g += np.log(1.0 - rng.random((n, d))) / concentration

    def log_softmax(z):
        top = z.max(axis=1, keepdims=True)
        return z - (top + np.log(np.exp(z - top).sum(axis=1, keepdims=True)))

    log_p = log_softmax(log_g)
    f, P = np.exp(log_softmax(power * log_p)), np.exp(log_p)
    u = rng.random(n)
    y = np.minimum((np.cumsum(P, axis=1) <= u[:, None]).sum(axis=1), d - 1)
    return f, y, P


def make_data(n, d=C, seed=SEED):
    """``(f, y, P, source)``: predictions ``f = softmax(0.3 log P)``, labels ``y ~ P``,
    ``P ~ Dir(0.04)``."""
    try:
        from skcalib.datasets import make_dirichlet_calibration
    except ImportError:
        return _make_dirichlet_fallback(n, d, CONCENTRATION, POWER, seed) + ("script",)
    f, y, P = make_dirichlet_calibration(n, d, concentration=CONCENTRATION, power=POWER,
                                         random_state=seed, return_truth=True)
    return f, y, P, "skcalib.datasets.make_dirichlet_calibration"


def kronecker_alphas(n_train):
    """The 9 ridge values: every other value of the paper's canonical Kronecker grid."""
    return paper_grids(n_train, "canonical")["kronecker"]["alpha"][::2]


def two_step_alphas(n_train):
    return paper_grids(n_train, "canonical")["two_step"]["alpha"][::2]


def splits_of(n):
    """``(idx_tune, idx_test, [(train, val)])`` exactly as ``CalibrationErrorCV.fit`` makes them
    (``train``/``val`` index the whole data set here)."""
    idx_tune, idx_test = train_test_split(np.arange(n), test_size=TEST_SIZE, random_state=CV_SEED)
    folds = KFold(N_FOLDS, shuffle=True, random_state=CV_SEED).split(idx_tune)
    return idx_tune, idx_test, [(idx_tune[tr], idx_tune[va]) for tr, va in folds]


def pipeline(alphas, n_components=None, two_step=None, n_jobs=None):
    """The pipeline under test (a fresh, unfitted ``CalibrationErrorCV``)."""
    cands = [("kkr", KernelRidgeCalibrationEstimator(method="kronecker",
                                                     n_components=n_components,
                                                     random_state=0 if n_components else None),
              {"alpha": alphas})]
    if two_step is not None:
        cands.append(("ukkr", KernelRidgeCalibrationEstimator(method="two_step"),
                      {"alpha": two_step}))
    return CalibrationErrorCV(cands, mode="canonical", cv=N_FOLDS, test_size=TEST_SIZE,
                              random_state=CV_SEED, n_jobs=n_jobs)


def fit_quiet(est, f, y):
    """``est.fit(f, y)`` with the GridBoundaryWarning silenced (it is reported once, separately)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(f, y)


def one_blas_thread(fn):
    def run():
        with threadpool_limits(1, user_api="blas"):
            return fn()
    return run


# --------------------------------------------------------------------------------------------
# The reference algorithm (Gruber & Bach, Eqs. 28-31), as the paper's code runs it


def rbf(A, B, gamma=GAMMA):
    """``exp(-gamma ||a - b||^2)`` for the rows of ``A`` and ``B``."""
    d2 = (A * A).sum(axis=1)[:, None] + (B * B).sum(axis=1)[None, :] - 2.0 * (A @ B.T)
    np.maximum(d2, 0.0, out=d2)
    d2 *= -gamma
    return np.exp(d2, out=d2)


def residuals(f, y):
    """``Delta^T``: one row ``f_i - e_{y_i}`` per sample."""
    R = f.copy()
    R[np.arange(f.shape[0]), y] -= 1.0
    return R


def u_risk(Rv, H):
    """Eq. 30: ``1/(n'(n'-1)) sum_{i != j} (<r_i, r_j> - H_ij)^2``."""
    D = Rv @ Rv.T
    D -= H
    np.fill_diagonal(D, 0.0)
    n = Rv.shape[0]
    return float(np.einsum("ij,ij->", D, D) / (n * (n - 1.0)))


def reference_unit(f, R, tr, va, te, alpha, clock=None):
    """One (fold, ridge value) of the reference: fresh kernel matrix and eigendecomposition and the
    n^3 coefficient matrix of Eq. 29. Returns ``(validation risk, test diagonal h(p, p))``;
    ``clock`` (a dict), if given, receives the time of the ``eigh`` and of everything else."""
    t0 = time.perf_counter()
    Xtr, Rtr = f[tr], R[tr]
    n = Xtr.shape[0]
    K = rbf(Xtr, Xtr)
    t1 = time.perf_counter()
    lam, Q = np.linalg.eigh(K)
    t2 = time.perf_counter()
    np.maximum(lam, 0.0, out=lam)           # spec P8: rounding leaves tiny negative eigenvalues
    G = Rtr @ Rtr.T                         # n x n, G_ij = <r_i, r_j>
    M = Q.T @ G @ Q
    Lt = 1.0 / (np.multiply.outer(lam, lam) + alpha * n * n)
    Cm = Q @ (Lt * M) @ Q.T                 # Eq. 29: h(p, p') = k(p)^T Cm k(p')
    Ktv = rbf(Xtr, f[va])
    H = Ktv.T @ Cm @ Ktv                    # Eq. 31
    risk = u_risk(R[va], H)                 # Eq. 30
    Kte = rbf(Xtr, f[te])
    diag = np.einsum("ij,ij->j", Kte, Cm @ Kte)
    if clock is not None:
        clock["eigh"] = t2 - t1
        clock["rest"] = (time.perf_counter() - t0) - (t2 - t1)
    return risk, diag


def reference_full(f, y, alphas):
    """The whole reference pipeline: every fold x every ridge value with a fresh eigh.

    Returns ``(risks (K, A), test diagonals (K, A, n_te), wall time, unit clocks)``."""
    R = residuals(f, y)
    _, te, folds = splits_of(f.shape[0])
    risks = np.empty((len(folds), len(alphas)))
    diags = np.empty((len(folds), len(alphas), te.size))
    clocks = []
    t0 = time.perf_counter()
    for k, (tr, va) in enumerate(folds):
        for a, alpha in enumerate(alphas):
            clock = {}
            risks[k, a], diags[k, a] = reference_unit(f, R, tr, va, te, alpha, clock)
            clocks.append(clock)
    return risks, diags, time.perf_counter() - t0, clocks


def reference_values(f, y, alphas):
    """The reference's numbers with one ``np.linalg.eigh`` per fold: the same formulas, with
    ``H = B^T (Lt * M) B`` for ``B = Q^T K_tv`` (algebraically Eq. 31 with ``Cm`` expanded).
    Also returns the eigenvalues of the first fold (for the numerical rank)."""
    R = residuals(f, y)
    _, te, folds = splits_of(f.shape[0])
    risks = np.empty((len(folds), len(alphas)))
    diags = np.empty((len(folds), len(alphas), te.size))
    lam0 = None
    for k, (tr, va) in enumerate(folds):
        Xtr, n = f[tr], tr.size
        lam, Q = np.linalg.eigh(rbf(Xtr, Xtr))
        np.maximum(lam, 0.0, out=lam)
        lam0 = lam if lam0 is None else lam0
        S = Q.T @ R[tr]
        M = S @ S.T                           # Q^T G Q
        Bv, Bt = Q.T @ rbf(Xtr, f[va]), Q.T @ rbf(Xtr, f[te])
        for a, alpha in enumerate(alphas):
            W = M / (np.multiply.outer(lam, lam) + alpha * n * n)
            risks[k, a] = u_risk(R[va], Bv.T @ (W @ Bv))
            diags[k, a] = np.einsum("ij,ij->j", Bt, W @ Bt)
    return risks, diags, lam0


def select(risks, diags):
    """Selection by mean validation risk; fold-ensemble estimate and its fold standard error."""
    best = int(np.argmin(risks.mean(axis=0)))
    fold_est = diags[:, best].mean(axis=1)
    return best, float(fold_est.mean()), float(fold_est.std(ddof=1) / np.sqrt(fold_est.size))


# --------------------------------------------------------------------------------------------
# Reporting


def nystrom_rank(f, y, m):
    """Rank kept by the Nystrom approximation on the first training fold (eigenvalues of the
    landmark kernel matrix above skcalib's relative floor)."""
    _, _, folds = splits_of(f.shape[0])
    tr = folds[0][0]
    est = KernelRidgeCalibrationEstimator(method="kronecker", n_components=m, random_state=0,
                                          mode="canonical", labels=np.arange(C)).fit(f[tr], y[tr])
    return est.problems_[0].lam.size


# --------------------------------------------------------------------------------------------
# 1. Exact pipeline, n = 4,000, against the reference


def fmt_times(ts):
    return ", ".join(f"{t:.2f}" for t in ts) + " s"


def bench_exact(rep, args):
    n = args.n_exact
    f, y, P, source = make_data(n)
    _, te, folds = splits_of(n)
    n_train = folds[0][0].size
    alphas = kronecker_alphas(n_train)
    print(f"  data: {source}(n={n}, n_classes={C}, concentration={CONCENTRATION:g}, "
          f"power={POWER:g}, seed {SEED}); accuracy {np.mean(f.argmax(1) == y):.3f}, "
          f"true CCE_2^2 on the test split {np.mean(((f - P) ** 2).sum(1)[te]):.5f}")
    print(f"  split: {n - te.size} tuning ({n_train} train / {folds[0][1].size} validation per "
          f"fold), {te.size} test; 9 ridge values sqrt({n_train}) x 1e8, 1e6, ..., 1e-8 "
          f"(every other value of paper_grids(n_train, 'canonical')['kronecker']['alpha'])\n",
          flush=True)

    # The values run, profiled (cProfile adds nothing measurable to these BLAS-bound calls), with
    # one BLAS thread: on a shared machine the split of the time is then that of the work, not
    # of BLAS threads waiting for a core.
    holder = {}

    def values_run():
        with threadpool_limits(1, user_api="blas"), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            holder["cv"] = pipeline(alphas).fit(f, y)
        holder["warnings"] = [str(w.message) for w in caught]

    t0 = time.perf_counter()
    profile_call(values_run, f"the exact pipeline, n={n}, 1 BLAS thread (the values run)",
                 top=15)
    t_profiled = time.perf_counter() - t0
    print(f"  (profiled run: {t_profiled:.1f} s wall)\n", flush=True)
    cv = holder["cv"]

    # The timed rounds: skcalib and one reference unit, each with the default BLAS threads and
    # with BLAS limited to one thread, and skcalib's eigensolver on one fold's kernel matrix.
    R = residuals(f, y)
    unit_log = []

    def unit_run(threads=None):
        def run():
            r = len(unit_log)
            k, a = r % N_FOLDS, (4 * r) % len(alphas)
            tr, va = folds[k]
            clock = {}
            with threadpool_limits(threads, user_api="blas"):
                t = time.perf_counter()
                risk, diag = reference_unit(f, R, tr, va, te, alphas[a], clock)
                dt = time.perf_counter() - t
            unit_log.append((k, a, risk, diag, clock, threads))
            return dt
        return run

    K0 = rbf(f[folds[0][0]], f[folds[0][0]])
    evd = timed(lambda: linalg.eigh(K0, driver="evd", check_finite=False))
    run_sk = timed(lambda: fit_quiet(pipeline(alphas), f, y))
    run_sk1 = one_blas_thread(run_sk)

    ref = None
    t_units1 = None
    if args.reference == "full":
        t_sk, t_sk1 = [run_sk()], [run_sk1()]
        print("  running the full reference (45 fresh eigendecompositions), measured once ...",
              flush=True)
        risks_ref, diags_ref, t_ref_full, clocks = reference_full(f, y, alphas)
        t_sk1.append(run_sk1())
        t_sk.append(run_sk())
        t_units = [c["eigh"] + c["rest"] for c in clocks]
        t_eigh_ref = [c["eigh"] for c in clocks]
        t_evd = [evd()]
        ref = (risks_ref, diags_ref)
        lam0 = None
    elif args.reference == "unit":
        t_sk, t_sk1, t_units, t_units1, t_evd = interleaved_times(
            [run_sk, run_sk1, unit_run(), unit_run(1), evd], args.repeat)
        t_eigh_ref = [u[4]["eigh"] for u in unit_log if u[5] is None]
        with threadpool_limits(1, user_api="blas"):  # untimed
            risks_ref, diags_ref, lam0 = reference_values(f, y, alphas)
        ref = (risks_ref, diags_ref)
    else:
        t_sk, t_sk1 = interleaved_times([run_sk, run_sk1], args.repeat)
        t_evd = t_eigh_ref = None

    rep.header()
    n_units = N_FOLDS * len(alphas)
    ok_speed = None
    if args.reference == "full":
        ok_speed = t_ref_full / min(t_sk) >= TARGET_SPEEDUP
        rep.line(f"1. kkr pipeline n={n} vs reference (MEASURED, once)", t_sk, [t_ref_full],
                 f">= {TARGET_SPEEDUP:g}x", verdict(ok_speed))
        rep.line(f"1. ... vs reference extrapolated ({n_units} x fastest unit)", t_sk,
                 [n_units * min(t_units)])
    elif args.reference == "unit":
        ok_speed = n_units * min(t_units) / min(t_sk) >= TARGET_SPEEDUP
        rep.line(f"1. kkr pipeline n={n} vs reference (EXTRAPOLATED)", t_sk,
                 [n_units * t for t in t_units], f">= {TARGET_SPEEDUP:g}x", verdict(ok_speed))
    else:
        rep.line(f"1. kkr pipeline n={n} (reference skipped)", t_sk)
    rep.line("1. ... skcalib with BLAS limited to 1 thread", t_sk1, t_sk)
    print(f"     each run: skcalib {fmt_times(t_sk)}; with 1 BLAS thread {fmt_times(t_sk1)}")
    if t_units1 is not None:
        rep.line("1. ... both with 1 BLAS thread, vs reference (EXTRAP.)", t_sk1,
                 [n_units * t for t in t_units1])
    if t_evd is not None:
        rep.line(f"1. eigh n={n_train}: scipy evd (skcalib) vs np.linalg.eigh", t_evd, t_eigh_ref)
        rest = [t - e for t, e in zip(t_units, t_eigh_ref)]
        print(f"\n  reference unit (one fold x one ridge value): min {min(t_units):.2f} s = "
              f"np.linalg.eigh {min(t_eigh_ref):.2f} s + the rest {min(rest):.2f} s (kernel "
              f"matrices, four n x n x n GEMMs for Q (Lt * Q^T G Q) Q^T, and n^2 (n_val + n_test) "
              f"for H and the test diagonal)")
        if t_units1 is not None:
            e1 = [u[4]["eigh"] for u in unit_log if u[5] == 1]
            print(f"  with 1 BLAS thread: min {min(t_units1):.2f} s = np.linalg.eigh "
                  f"{min(e1):.2f} s + the rest {min(t - e for t, e in zip(t_units1, e1)):.2f} s")
        print(f"  reference total: {n_units} units; extrapolated {n_units * min(t_units):.1f} s"
              + (f", measured {t_ref_full:.1f} s (np.linalg.eigh {sum(t_eigh_ref):.1f} s, the "
                 f"rest {sum(rest):.1f} s; units {min(t_units):.2f} to {max(t_units):.2f} s, "
                 f"median {statistics.median(t_units):.2f} s)"
                 if args.reference == "full" else " (not run)"), flush=True)

    # Agreement with the reference, and the values of the run.
    ok_agree = None
    if ref is not None:
        risks_ref, diags_ref = ref
        best_ref, est_ref, se_ref = select(risks_ref, diags_ref)
        sk_risks = cv.cv_results_["mean_risk"]
        sk_est = cv.cv_results_["mean_estimate"]
        rel = abs(cv.calibration_error_ - est_ref) / abs(est_ref)
        ok_agree = best_ref == cv.best_index_ and rel <= TARGET_AGREEMENT
        rep.value_line("1. skcalib vs reference: same alpha, estimate (rel.)",
                       f"{'same alpha' if best_ref == cv.best_index_ else 'OTHER ALPHA'}, "
                       f"{rel:.2e}", f"<= {TARGET_AGREEMENT:g}", verdict(ok_agree))
        risk_rel = np.max(np.abs(sk_risks - risks_ref.mean(0)) / risks_ref.mean(0))
        est_abs = np.max(np.abs(sk_est - diags_ref.mean(axis=(0, 2))))
        print(f"\n  selected alpha: skcalib {alphas[cv.best_index_]:.6g} (index {cv.best_index_})"
              f"   reference {alphas[best_ref]:.6g} (index {best_ref})")
        print(f"  estimate:       skcalib {cv.calibration_error_:.15g} +- "
              f"{cv.standard_error_:.3g}   reference {est_ref:.15g} +- {se_ref:.3g}")
        print(f"  over the whole grid: max relative difference of the mean risks {risk_rel:.2e}, "
              f"max absolute difference of the mean estimates {est_abs:.2e}")
        if args.reference == "unit":
            worst = 0.0
            for k, a, risk, diag, *_ in unit_log:
                worst = max(worst, abs(risk - risks_ref[k, a]) / risks_ref[k, a],
                            abs(diag.mean() - diags_ref[k, a].mean())
                            / max(abs(diags_ref[k, a].mean()), 1e-300))
            print(f"  the {len(unit_log)} timed fresh-eigh units (fold, alpha index) "
                  f"{[(k, a) for k, a, *_ in unit_log]} agree with the per-fold-eigh values to "
                  f"{worst:.2e} (relative; risk and test estimate)")
        lam = lam0
        if lam is not None:
            print(f"  kernel matrix of fold 0 (n={n_train}): lambda_max {lam.max():.1f}; "
                  + ", ".join(f"{np.sum(lam > r * lam.max())} eigenvalues > {r:g} lambda_max"
                              for r in (1e-6, 1e-9, 1e-12)))

    print(f"\n  CalibrationErrorCV (exact): best {cv.best_family_} {cv.best_params_}, "
          f"calibration_error_ {cv.calibration_error_:.6f}, standard_error_ "
          f"{cv.standard_error_:.2e} (folds), sampling_standard_error_ "
          f"{cv.sampling_standard_error_:.2e} (test samples)")
    for w in holder["warnings"]:
        print(f"  warning: {w}")
    print("\n" + cv.summary() + "\n", flush=True)

    # kkr and ukkr in one pipeline (information).
    if not args.no_ukkr:
        ua = two_step_alphas(n_train)
        t = time.perf_counter()
        with threadpool_limits(1, user_api="blas"):
            cv2 = fit_quiet(pipeline(alphas, two_step=ua), f, y)
        rep.line("1. kkr + ukkr (9 + 9 alphas), 1 BLAS thread, vs kkr", [time.perf_counter() - t],
                 t_sk1)
        print(f"\n  kkr + ukkr: best {cv2.best_family_} {cv2.best_params_}, estimate "
              f"{cv2.calibration_error_:.6f}; ukkr's best mean risk "
              f"{cv2.cv_results_['mean_risk'][len(alphas):].min():.6f} vs kkr's "
              f"{cv2.cv_results_['mean_risk'][:len(alphas)].min():.6f}\n", flush=True)
    t_ref = {"full": lambda: t_ref_full, "unit": lambda: n_units * min(t_units),
             "skip": lambda: None}[args.reference]()
    return f, y, cv, alphas, t_sk1, t_ref


# --------------------------------------------------------------------------------------------
# 2. Low rank (Nystrom): error at n = 4,000, time at n = 10,000


def bench_lowrank(rep, args, f, y, cv_exact, alphas, t_exact1, t_ref):
    exact = cv_exact.calibration_error_
    n = f.shape[0]
    ok_err = None
    for m in sorted({LOWRANK_M, *LOWRANK_INFO_M}):
        t = time.perf_counter()
        with threadpool_limits(1, user_api="blas"):
            cvm = fit_quiet(pipeline(alphas, n_components=m), f, y)
        dt = time.perf_counter() - t
        err = abs(cvm.calibration_error_ - exact)
        rank = nystrom_rank(f, y, m)
        rep.line(f"2. Nystrom m={m} n={n}, 1 BLAS thread, vs exact", [dt], t_exact1)
        what = f"2. |estimate(m={m}) - estimate(exact)|, n={n}"
        if m == LOWRANK_M:
            ok_err = err <= TARGET_LOWRANK_ERROR
            rep.value_line(what, f"{err:.2e}", f"<= {TARGET_LOWRANK_ERROR:g}", verdict(ok_err))
            if t_ref is not None:
                t_def = timed(lambda: fit_quiet(pipeline(alphas, n_components=m), f, y))()
                rep.line(f"2. Nystrom m={m} n={n} (default threads) vs reference", [t_def],
                         [t_ref])
        else:
            rep.value_line(what, f"{err:.2e}")
        print(f"     m={m}: rank kept {rank}, estimate {cvm.calibration_error_:.8f} (exact "
              f"{exact:.8f}), selected alpha {cvm.best_params_['alpha']:.3g} "
              f"({'same' if cvm.best_index_ == cv_exact.best_index_ else 'OTHER'} as exact), "
              f"best mean risk {cvm.cv_results_['mean_risk'].min():.6f} (exact "
              f"{cv_exact.cv_results_['mean_risk'].min():.6f})", flush=True)
    print()

    nb = args.n_big
    fb, yb, Pb, _ = make_data(nb, seed=SEED + 1)
    _, teb, foldsb = splits_of(nb)
    nb_train = foldsb[0][0].size
    ab = kronecker_alphas(nb_train)
    print(f"  n={nb}: {nb - teb.size} tuning ({nb_train} train / {foldsb[0][1].size} validation "
          f"per fold), {teb.size} test; alphas sqrt({nb_train}) x 1e8, ..., 1e-8; true CCE_2^2 on "
          f"the test split {np.mean(((fb - Pb) ** 2).sum(1)[teb]):.5f}", flush=True)
    res = {}

    def big(m, n_jobs=None):
        def run():
            res[(m, n_jobs)] = fit_quiet(pipeline(ab, n_components=m, n_jobs=n_jobs), fb, yb)
        return timed(run)

    t_big, t_big1, t_big2 = interleaved_times(
        [big(LOWRANK_M), one_blas_thread(big(LOWRANK_M)), big(LOWRANK_M, n_jobs=2)],
        args.repeat)
    ok_big = min(t_big) <= TARGET_BIG_SECONDS
    rep.line(f"2. Nystrom m={LOWRANK_M} pipeline n={nb}, end to end", t_big, None,
             f"<= {TARGET_BIG_SECONDS:g}s", verdict(ok_big))
    rep.line("2. ... with BLAS limited to 1 thread", t_big1, t_big)
    rep.line("2. ... with n_jobs=2 (folds in 2 processes)", t_big2, t_big)
    print(f"     each run: default {fmt_times(t_big)}; 1 BLAS thread {fmt_times(t_big1)}; "
          f"n_jobs=2 {fmt_times(t_big2)}")
    extra = [m for m in LOWRANK_INFO_M if m > LOWRANK_M]
    for m in extra:
        t_m = one_blas_thread(big(m))()
        rep.line(f"2. Nystrom m={m} n={nb}, 1 BLAS thread (1 run)", [t_m], t_big1)
    for (m, nj), c in sorted(res.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        print(f"     m={m}{'' if nj is None else f', n_jobs={nj}'}: estimate "
              f"{c.calibration_error_:.8f} +- {c.standard_error_:.1e} (folds) +- "
              f"{c.sampling_standard_error_:.1e} (samples), alpha {c.best_params_['alpha']:.3g}")
    if args.profile or not ok_big:
        profile_call(lambda: fit_quiet(pipeline(ab, n_components=LOWRANK_M), fb, yb),
                     f"the Nystrom m={LOWRANK_M} pipeline, n={nb}", top=12)

    if args.eigh_10k:
        Xtr = fb[foldsb[0][0]]
        K = rbf(Xtr, Xtr)
        t_np = timed(lambda: np.linalg.eigh(K))()
        t_evd = timed(lambda: linalg.eigh(K, driver="evd", check_finite=False))()
        rep.line(f"2. one exact eigh n={nb_train}: scipy evd (1 run)", [t_evd])
        rep.line(f"2. one exact eigh n={nb_train}: np.linalg.eigh (1 run)", [t_np])
        print(f"  (the exact pipeline at n={nb} needs {N_FOLDS} such eigendecompositions, "
              f">= {N_FOLDS * min(t_evd, t_np):.0f} s, plus {N_FOLDS * len(ab)} ridge values x "
              f"n^2 (n_val + n_test) GEMM work)")
    print(flush=True)
    return ok_err, ok_big


# --------------------------------------------------------------------------------------------
# 3. The default search (automatic low rank) against the paper's grids


def best_kernel_ridge(cv):
    """The kernel-ridge candidate of ``cv`` with the smallest mean held-out risk (unfitted)."""
    res = cv.cv_results_
    is_krr = np.isin(res["family"], ("kronecker", "two_step"))
    i = int(np.flatnonzero(is_krr)[np.argmin(res["mean_risk"][is_krr])])
    n_components = "auto" if cv.n_components is None else cv.n_components
    return KernelRidgeCalibrationEstimator(method=res["family"][i], n_components=n_components,
                                           random_state=0, mode=cv.mode_, labels=cv.classes_,
                                           **res["params"][i])


def cross_fit_one_step(cv, P, y):
    """The cross-fitted one-step estimate ``mean(2 g(Q).R - sq)`` of ``cv``'s best kernel-ridge
    candidate on the tuning rows (each scored by the fold model not trained on it) and its
    standard error."""
    res = cross_fit_calibration_error(best_kernel_ridge(cv), P[cv.tune_indices_],
                                      y[cv.tune_indices_],
                                      cv=KFold(cv.n_splits_, shuffle=True, random_state=0))
    return res.estimate, res.standard_error


def bench_default_vs_paper(rep, args):
    ok = True
    for mode in ("top_label", "canonical"):
        P, y = make_dirichlet_calibration(N_RATIO, random_state=0)
        res = {}

        def run(grids):
            def fit():
                res[grids] = fit_quiet(CalibrationErrorCV(None if grids == "default" else grids,
                                                          mode=mode, random_state=0), P, y)
            return timed(fit)

        t_def, t_pap = interleaved_times([run("default"), run("paper")], args.ratio_rounds)
        ratio = statistics.median(t_def) / statistics.median(t_pap)
        per_round = statistics.median([d / p for d, p in zip(t_def, t_pap)])
        good = ratio <= TARGET_DEFAULT_RATIO
        ok &= good
        rep.line(f"3. default search n={N_RATIO} {mode} vs paper grids", t_def, t_pap)
        rep.value_line(f"3. default / paper time (medians), {mode}",
                       f"{ratio:.2f} (per-round median {per_round:.2f}, {len(t_def)} rounds)",
                       f"<= {TARGET_DEFAULT_RATIO:g}", verdict(good))
        for grids, cv in res.items():
            print(f"     {grids}: best {cv.best_family_} {cv.best_params_}, estimate "
                  f"{cv.calibration_error_:.6f} +- {cv.total_standard_error_:.2e}", flush=True)
    if args.skip_agreement:
        return ok
    for mode in ("top_label", "canonical"):
        for n, seed in AGREEMENT_CASES:
            P, y = make_dirichlet_calibration(n, random_state=seed)
            auto = fit_quiet(CalibrationErrorCV(mode=mode, random_state=0), P, y)
            exact = fit_quiet(CalibrationErrorCV(mode=mode, random_state=0,
                                                 n_components=10 ** 9), P, y)
            d_plug = abs(auto.calibration_error_ - exact.calibration_error_) \
                / exact.total_standard_error_
            a, e = cross_fit_one_step(auto, P, y), cross_fit_one_step(exact, P, y)
            d_one = abs(a[0] - e[0]) / e[1]
            good = max(d_plug, d_one) <= TARGET_AUTO_SE
            ok &= good
            rep.value_line(f"3. |auto - exact| / SE, {mode} n={n} seed {seed}",
                           f"plug-in {d_plug:.2g}, one-step {d_one:.2g}",
                           f"<= {TARGET_AUTO_SE:g}", verdict(good))
            ranks = _auto_ranks(auto, P, y)
            print(f"     selected: auto {auto.best_family_} {auto.best_params_}, exact "
                  f"{exact.best_family_} {exact.best_params_}; automatic ranks (first fold, "
                  f"gamma: rank) {ranks}", flush=True)
    return ok


def _auto_ranks(cv, P, y):
    """``n_components_`` of the default kernel-ridge candidate per width on the first fold."""
    Pt, yt = P[cv.tune_indices_], y[cv.tune_indices_]
    train = next(iter(KFold(cv.n_splits_, shuffle=True, random_state=0).split(Pt)))[0]
    out = {}
    for gamma in (0.5, 2.0, 8.0, 32.0):
        est = KernelRidgeCalibrationEstimator(gamma=gamma, n_components="auto", mode=cv.mode_,
                                              labels=cv.classes_).fit(Pt[train], yt[train])
        out[gamma] = est.n_components_.tolist()
    return out


# --------------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2,
                        help="rounds of the interleaved timings; min and median are reported "
                             "(default 2)")
    parser.add_argument("--reference", choices=("unit", "full", "skip"), default="unit",
                        help="time one reference unit per round and extrapolate x 45 (default), "
                             "run and measure the whole reference once, or skip it")
    parser.add_argument("--skip-reference", dest="reference", action="store_const",
                        const="skip", help="same as --reference skip")
    parser.add_argument("--eigh-10k", action="store_true",
                        help="also time one exact eigendecomposition of a fold at n = 10,000")
    parser.add_argument("--no-ukkr", action="store_true",
                        help="skip the kkr + ukkr pipeline (information only)")
    parser.add_argument("--profile", action="store_true",
                        help="also profile the n = 10,000 Nystrom pipeline when it passes")
    parser.add_argument("--section", choices=("all", "default"), default="all",
                        help="all sections, or only 3. (the default search vs the paper's grids)")
    parser.add_argument("--ratio-rounds", type=int, default=3,
                        help="alternating rounds of section 3's timings (default 3)")
    parser.add_argument("--skip-agreement", action="store_true",
                        help="section 3 without the auto-rank agreement lines")
    parser.add_argument("--n-exact", type=int, default=N_EXACT, help=argparse.SUPPRESS)
    parser.add_argument("--n-big", type=int, default=N_BIG, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    t_start = time.perf_counter()
    print(environment_line())
    print(f"times: {args.repeat} rounds, measured calls and baselines interleaved; speedup = "
          f"baseline min / skcalib min, s(med) = of the medians; reference: {args.reference}\n",
          flush=True)
    rep = SpeedupReport(width=54, seconds=True)

    if args.section == "all":
        print("1. Exact Kronecker kernel-ridge pipeline against the reference algorithm")
        f, y, cv, alphas, t_exact1, t_ref = bench_exact(rep, args)
        print("2. Low rank (Nystrom)")
        rep.header()
        bench_lowrank(rep, args, f, y, cv, alphas, t_exact1, t_ref)
    print("3. The default search (automatic low rank) against the paper's grids")
    rep.header()
    bench_default_vs_paper(rep, args)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    print_summary(rep, t_start)
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)
