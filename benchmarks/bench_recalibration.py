"""Recalibration benchmarks of skcalib: temperature scaling against scikit-learn, in the same run.

Run with ``.venv/bin/python benchmarks/bench_recalibration.py`` (or ``make bench``). As in
``bench_foundation.py`` and ``bench_regression.py``, the machine may be shared and noisy, so the
measured call and its baseline take turns in the same run (alternating order), every time is
repeated, and the minimum and the median are printed; the target checks the ratio of the minima.
Here the ratio is a *speed-up*: baseline time / skcalib time.

Target (item 7 of the recalibration issue)
------------------------------------------
``TemperatureScaling(input="logits").fit(L, y)`` on n = 100,000 logits with C = 100 classes:

* time: at least 3 x faster than
  ``CalibratedClassifierCV(FrozenEstimator(identity), method="temperature").fit(L, y)`` on the
  same logits (``identity`` is a fitted classifier whose ``decision_function`` returns its input);
* accuracy: the mean NLL at skcalib's temperature is no worse than at scikit-learn's (by at most
  1e-12 relative). Both NLLs -- and the distance of both inverse temperatures to the exact optimum,
  one Newton step ``|NLL'/NLL''| / beta`` -- are computed by one shared function of this script
  (``scipy.special.log_softmax`` / ``softmax``), not by either library.

For information (no target): scikit-learn's bare ``_TemperatureScaling().fit`` (its solver
without the ``cross_val_predict`` plumbing of ``CalibratedClassifierCV``; private API); the
binary case (n = 100,000 one-dimensional log-odds) against ``CalibratedClassifierCV``; and the
closed-form ``DistributionTemperatureScaling`` of Normal predictions (n = 10^6) against a generic
bounded ``scipy.optimize.minimize_scalar`` over ``log T`` of the Gaussian NLL.

**Quantile recalibration** (section 3b): ``QuantileRecalibration().fit`` on n = 100,000 Normal
predictions, ``transform`` of 100,000 others, their ``cdf`` at the targets and ``ppf(0.9)``,
against the same steps in bare numpy/SciPy (``ndtr`` of the standardised targets, a sort, the
empirical CDF by ``np.interp``, ``ndtri`` of the inverted map at 0.9). Target: speed-up at least
0.2, i.e. skcalib at most 5 x the bare steps (measured about 2 x; the test suite asserted the
same work under 1 s until the renovation moved wall-clock checks out of it).

Also for information: **separated calibration splits** (section 4). A logistic regression is
fitted on 1,000 samples of ``make_classification`` (2, 3 and 5 classes, 30 seeds); its logits,
scaled by 0.3, 1 and 3 (under-, well- and over-confident), are recalibrated on the first 10, 20 or
40 of the following samples, and the splits whose logits separate the labels (every label is the
arg-max: the NLL has no minimiser) are kept. The test NLL on 1,900 further samples is printed
(median over the splits) for skcalib's temperature (Laplace's rule, see the recalibration page),
scikit-learn's bare ``_TemperatureScaling`` (bounded search over ``log beta in [-10, 10]``), the
model's own logits (T = 1) and the best temperature for the test data.

The script always exits with status 0: it is a report, not a test. A failed target is followed by a
cProfile summary of skcalib's fit (``--profile`` prints it even when the targets pass).
"""

import argparse
import math
import os
import sys
import time

import numpy as np
from scipy import optimize, special
from scipy.special import log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV
from sklearn.frozen import FrozenEstimator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_foundation import environment_line, print_summary, profile_call, SpeedupReport, timed, verdict  # noqa: E402
from bench_regression import interleaved_times  # noqa: E402

from skcalib.distributions import Normal  # noqa: E402
from skcalib.recalibration import (  # noqa: E402
    DistributionTemperatureScaling,
    QuantileRecalibration,
    TemperatureScaling,
)

SEED = 20261122
N, C = 100_000, 100
T_TRUE = 2.5          # the model's logits are T_TRUE x the logits the labels are drawn from
SIGNAL = 4.0          # added to one random class's true logit per sample
BIN_N = 100_000
REG_N = 1_000_000
REG_T_TRUE = 2.0      # variance factor: y ~ N(mean, T_TRUE * std^2)
QR_N = 100_000        # quantile recalibration: fit on QR_N predictions, transform QR_N others

TARGET_SPEEDUP = 3.0
TARGET_QR_SPEEDUP = 0.2
TARGET_NLL_REL = 1e-12

CHUNK = 10_000        # rows per chunk of the shared NLL / derivative functions


# --------------------------------------------------------------------------------------------
# Data


def make_logits(n=N, n_classes=C, seed=SEED):
    """Overconfident logits ``L = T_TRUE * Z`` with labels drawn from ``softmax(Z) = softmax(L/T)``.

    ``Z`` is standard normal plus ``SIGNAL`` on one uniformly chosen class per row; the labels are
    drawn exactly by the Gumbel-max trick, ``argmax(Z + Gumbel)``.
    """
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, n_classes))
    Z[np.arange(n), rng.integers(n_classes, size=n)] += SIGNAL
    y = np.argmax(Z + rng.gumbel(size=(n, n_classes)), axis=1)
    Z *= T_TRUE
    return Z, y


def make_log_odds(n=BIN_N, seed=SEED + 1):
    """1-D log-odds ``z = T_TRUE * z0``, ``z0 ~ N(0, 2^2)``, labels ``y ~ Bernoulli(sigmoid(z0))``."""
    rng = np.random.default_rng(seed)
    z0 = 2.0 * rng.standard_normal(n)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-z0))).astype(np.int64)
    return T_TRUE * z0, y


def make_normal(n=REG_N, seed=SEED + 2):
    """``mean ~ N(0, 1)``, ``std = 0.5 + U(0, 1)``, ``y ~ N(mean, REG_T_TRUE * std^2)``."""
    rng = np.random.default_rng(seed)
    mean = rng.standard_normal(n)
    std = 0.5 + rng.random(n)
    y = mean + math.sqrt(REG_T_TRUE) * std * rng.standard_normal(n)
    return mean, std, y


class IdentityClassifier(ClassifierMixin, BaseEstimator):
    """A 'fitted model' whose scores are its input: hands the logits to ``CalibratedClassifierCV``.

    Multiclass: ``X`` is ``(n, C)`` logits. Binary: ``X`` is ``(n, 1)`` log-odds of ``classes_[1]``
    and ``decision_function`` returns them 1-D (scikit-learn's convention).
    """

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def decision_function(self, X):
        X = np.asarray(X)
        return X[:, 0] if self.classes_.size == 2 else X

    def predict_proba(self, X):
        X = np.asarray(X)
        if self.classes_.size == 2:
            p = 1.0 / (1.0 + np.exp(-X[:, 0]))
            return np.column_stack([1.0 - p, p])
        return softmax(X, axis=1)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


def sklearn_beta(cal):
    """Inverse temperature of a fitted ``CalibratedClassifierCV(..., method="temperature")``."""
    return float(cal.calibrated_classifiers_[0].calibrators[0].beta_)


# --------------------------------------------------------------------------------------------
# The shared, library-independent evaluation of both optima


def class_nll(L, y, beta):
    """Mean NLL of ``softmax(beta * L)`` (rows of ``L``: logits) at labels ``y``."""
    total = 0.0
    for lo in range(0, L.shape[0], CHUNK):
        ls = log_softmax(beta * L[lo:lo + CHUNK], axis=1)
        total += ls[np.arange(ls.shape[0]), y[lo:lo + CHUNK]].sum()
    return -total / L.shape[0]


def class_newton_distance(L, y, beta):
    """``(NLL'(beta), |NLL'/NLL''| / beta)``: the relative length of one Newton step to the optimum.

    ``NLL' = mean(E[l] - l_y)``, ``NLL'' = mean(Var[l])`` under ``softmax(beta * l)``.
    """
    g = h = 0.0
    for lo in range(0, L.shape[0], CHUNK):
        Lt = L[lo:lo + CHUNK]
        P = softmax(beta * Lt, axis=1)
        m1 = (P * Lt).sum(axis=1)
        m2 = (P * Lt * Lt).sum(axis=1)
        g += (m1 - Lt[np.arange(Lt.shape[0]), y[lo:lo + CHUNK]]).sum()
        h += (m2 - m1 * m1).sum()
    g /= L.shape[0]
    h /= L.shape[0]
    return g, abs(g / h) / beta


def gaussian_nll(mean, std, y, T):
    """Mean NLL of ``y`` under ``N(mean, T * std^2)``, written out in numpy."""
    r = (y - mean) / std
    return float(np.mean(0.5 * math.log(2.0 * math.pi * T) + np.log(std) + 0.5 * r * r / T))


def generic_normal_temperature(mean, std, y):
    """``T`` minimising :func:`gaussian_nll` by bounded Brent over ``log T`` in ``[-10, 10]``
    (scikit-learn's search for ``log beta``, with its ``xatol = 64 eps``)."""
    res = optimize.minimize_scalar(lambda u: gaussian_nll(mean, std, y, math.exp(u)),
                                   bounds=(-10.0, 10.0), method="bounded",
                                   options={"xatol": 64 * np.finfo(np.float64).eps})
    return math.exp(res.x), res.nfev


# --------------------------------------------------------------------------------------------
# Reporting


def one_blas_thread(fn):
    """``fn`` run with BLAS limited to one thread (threadpoolctl), as in ``bench_foundation.py``."""
    from threadpoolctl import threadpool_limits

    def run():
        with threadpool_limits(1, user_api="blas"):
            return fn()
    return run


def blas_note(t_default, t_one, what):
    """A note when BLAS multi-threading makes skcalib's call much slower than one BLAS thread."""
    if min(t_default) > 1.5 * min(t_one):
        print(f"  note: {what} is {min(t_default) / min(t_one):.1f}x faster (min) with BLAS "
              f"limited to one thread (threadpoolctl): its weighted sums are BLAS dot products "
              f"(ndarray @ ndarray) over long vectors -- all n rows, and whole tiles of "
              f"2**15 / C rows -- which OpenBLAS runs on several threads; they stall when "
              f"another process holds the second core.")


def count_derivative_passes(fn):
    """``(result, [rows of each NLL'/NLL'' evaluation])`` of one call of ``fn``.

    Wraps ``SoftmaxMoments.derivatives`` of skcalib's solver (one evaluation = one pass over the
    logits it was given: all n rows, or the subsample of the warm start)."""
    try:
        from skcalib._problems.temperature import SoftmaxMoments
    except ImportError:  # pragma: no cover - the solver moved; counting is informational
        return fn(), None
    rows = []
    real = SoftmaxMoments.derivatives

    def counting(self, beta):
        rows.append(self.L.shape[0])
        return real(self, beta)

    SoftmaxMoments.derivatives = counting
    try:
        value = fn()
    finally:
        SoftmaxMoments.derivatives = real
    return value, rows


# --------------------------------------------------------------------------------------------
# 1. Multiclass temperature scaling, n = 100,000, C = 100 (the target)


def bench_multiclass(rep, repeat, profile):
    L, y = make_logits()
    if np.unique(y).size != C:
        raise AssertionError("every class must occur in y (CalibratedClassifierCV's 5 folds)")
    identity = IdentityClassifier().fit(L, y)

    def ours():
        return TemperatureScaling(input="logits").fit(L, y)

    def theirs():
        return CalibratedClassifierCV(FrozenEstimator(identity), method="temperature").fit(L, y)

    try:
        from sklearn.calibration import _TemperatureScaling

        def theirs_bare():
            return _TemperatureScaling().fit(L, y)
    except ImportError:  # pragma: no cover - private API
        theirs_bare = None

    # One call of each (also the warm-up), for the fitted values.
    ts, passes = count_derivative_passes(ours)
    cal = theirs()
    beta_ours, beta_sk = ts.inverse_temperature_, sklearn_beta(cal)
    bare_beta = None if theirs_bare is None else float(theirs_bare().beta_)

    runs = [timed(ours), timed(theirs), timed(one_blas_thread(ours))]
    if theirs_bare:
        runs.append(timed(theirs_bare))
    times = interleaved_times(runs, repeat, budget=60.0)
    t_ours, t_sk, t_one = times[0], times[1], times[2]

    ok_time = min(t_sk) / min(t_ours) >= TARGET_SPEEDUP
    rep.line("1. TemperatureScaling n=1e5 C=100 vs CalibratedCV", t_ours, t_sk,
             f">= {TARGET_SPEEDUP:g}x", verdict(ok_time))
    if theirs_bare:
        rep.line("1. ... vs sklearn _TemperatureScaling (solver only)", t_ours, times[3])
    rep.line("1. ... skcalib with BLAS limited to 1 thread", t_one, t_sk)

    # Accuracy: one shared evaluation of both optima.
    nll_ours, nll_sk = class_nll(L, y, beta_ours), class_nll(L, y, beta_sk)
    g_ours, d_ours = class_newton_distance(L, y, beta_ours)
    g_sk, d_sk = class_newton_distance(L, y, beta_sk)
    rel = (nll_ours - nll_sk) / abs(nll_sk)
    ok_nll = rel <= TARGET_NLL_REL
    rep.value_line("1. NLL(skcalib) - NLL(sklearn), relative", f"{rel:+.3e}",
                   f"<= {TARGET_NLL_REL:g}", verdict(ok_nll))

    accuracy = float(np.mean(L.argmax(axis=1) == y))
    print(f"\n  data: n = {N}, C = {C}, logits = {T_TRUE:g} x (N(0, 1) + {SIGNAL:g} on one class), "
          f"labels from softmax(logits / {T_TRUE:g}); top-1 accuracy {accuracy:.4f}")
    print(f"  temperature:  skcalib {1.0 / beta_ours:.15g}   sklearn {1.0 / beta_sk:.15g}   "
          f"(relative difference {(beta_sk - beta_ours) / beta_ours:+.3e})")
    if bare_beta is not None and bare_beta != beta_sk:
        print(f"  (sklearn _TemperatureScaling alone: T = {1.0 / bare_beta:.15g})")
    print(f"  mean NLL:     skcalib {nll_ours:.17g}   sklearn {nll_sk:.17g}   "
          f"(difference {nll_ours - nll_sk:+.3e})")
    print(f"  NLL'(beta):   skcalib {g_ours:+.3e}   sklearn {g_sk:+.3e}")
    print(f"  distance to the exact optimum, |NLL'/NLL''| / beta (one Newton step): "
          f"skcalib {d_ours:.2e}   sklearn {d_sk:.2e}")
    if passes is not None:
        full = sum(r == N for r in passes)
        print(f"  skcalib: n_iter_ = {ts.n_iter_}; NLL'/NLL'' evaluations: {full} on all {N} rows, "
              f"{len(passes) - full} on the warm-start subsample "
              f"({min(passes) if len(passes) > full else 0} rows)")
    print(f"  {len(t_ours)} rounds; sklearn CalibratedClassifierCV min {min(t_sk):.3f} s "
          f"(5-fold cross_val_predict of the frozen identity + bounded Brent on log beta)",
          flush=True)
    blas_note(t_ours, t_one, "TemperatureScaling.fit")
    print(flush=True)

    if profile or not (ok_time and ok_nll):
        profile_call(ours, "TemperatureScaling(input='logits').fit(L, y), n=1e5, C=100")
    return ok_time and ok_nll


# --------------------------------------------------------------------------------------------
# 2. Binary log-odds, n = 100,000 (information)


def bench_binary(rep, repeat):
    z, y = make_log_odds()
    identity = IdentityClassifier().fit(z[:, None], y)

    def ours():
        return TemperatureScaling(input="logits").fit(z, y)

    def theirs():
        return CalibratedClassifierCV(FrozenEstimator(identity), method="temperature").fit(
            z[:, None], y)

    ts, cal = ours(), theirs()
    times = interleaved_times([timed(ours), timed(theirs), timed(one_blas_thread(ours))],
                              repeat, budget=20.0)
    rep.line("2. binary log-odds n=1e5 vs CalibratedCV", times[0], times[1])
    rep.line("2. ... skcalib with BLAS limited to 1 thread", times[2], times[1])
    # skcalib: sigmoid(beta z) = softmax(beta (0, z)); sklearn: softmax(beta_sk (-z, z)).
    beta_ours, beta_sk = ts.inverse_temperature_, 2.0 * sklearn_beta(cal)
    L2 = np.column_stack([np.zeros_like(z), z])
    nll_ours, nll_sk = class_nll(L2, y, beta_ours), class_nll(L2, y, beta_sk)
    _, d_ours = class_newton_distance(L2, y, beta_ours)
    _, d_sk = class_newton_distance(L2, y, beta_sk)
    rep.value_line("2. binary NLL(skcalib) - NLL(sklearn), relative",
                   f"{(nll_ours - nll_sk) / abs(nll_sk):+.3e}")
    print(f"\n  temperature (of the log-odds; sklearn's 1/(2 beta_)): skcalib {1 / beta_ours:.15g}"
          f"   sklearn {1 / beta_sk:.15g}   (relative difference "
          f"{(beta_sk - beta_ours) / beta_ours:+.3e}); n_iter_ = {ts.n_iter_}")
    print(f"  mean NLL: skcalib {nll_ours:.17g}   sklearn {nll_sk:.17g}; distance to the optimum "
          f"(Newton step / beta): skcalib {d_ours:.2e}   sklearn {d_sk:.2e}", flush=True)
    blas_note(times[0], times[2], "binary TemperatureScaling.fit")
    print(flush=True)


# --------------------------------------------------------------------------------------------
# 3. Normal predictions, n = 10^6 (information)


def bench_normal(rep, repeat):
    mean, std, y = make_normal()
    dist = Normal(mean, std)

    def ours():
        return DistributionTemperatureScaling().fit(dist, y)

    def generic():
        return generic_normal_temperature(mean, std, y)

    T_ours = ours().temperature_
    T_gen, nfev = generic()
    times = interleaved_times([timed(ours), timed(generic)], repeat, budget=30.0)
    rep.line("3. DistributionTS Normal n=1e6 vs minimize_scalar", times[0], times[1])
    nll_ours, nll_gen = gaussian_nll(mean, std, y, T_ours), gaussian_nll(mean, std, y, T_gen)
    # The exact optimum is mean(r^2), recomputed here independently of skcalib.
    r = (y - mean) / std
    T_exact = float(np.mean(r * r))
    rep.value_line("3. Normal NLL(skcalib) - NLL(generic), relative",
                   f"{(nll_ours - nll_gen) / abs(nll_gen):+.3e}")
    print(f"\n  T (variance factor, true {REG_T_TRUE:g}): skcalib {T_ours:.15g}   generic "
          f"{T_gen:.15g} ({nfev} NLL evaluations)   mean(r^2) {T_exact:.15g}")
    print(f"  relative difference from mean(r^2): skcalib {(T_ours - T_exact) / T_exact:+.2e}   "
          f"generic {(T_gen - T_exact) / T_exact:+.2e}\n", flush=True)


# --------------------------------------------------------------------------------------------
# 3b. Quantile recalibration of Normal predictions, n = 100,000


def make_quantile_data(n=QR_N, seed=SEED + 3):
    """A Normal model with std 1 and no bias; the truth is shifted by 0.5 with std 2 (``2 n``
    rows: the first half to fit on, the second to transform)."""
    rng = np.random.default_rng(seed)
    mean = rng.standard_normal(2 * n)
    y = mean + 0.5 + 2.0 * rng.standard_normal(2 * n)
    return mean, y


def bare_quantile_recalibration(mean, y, n=QR_N):
    """The steps of quantile recalibration in bare numpy/SciPy: the PIT values of the fit half,
    sorted, as an empirical CDF; the recalibrated CDF of the other half at its targets; the
    recalibrated 0.9 quantiles."""
    pit = np.sort(special.ndtr(y[:n] - mean[:n]))
    F = np.arange(1, n + 1) / n
    cdf = np.interp(special.ndtr(y[n:] - mean[n:]), pit, F)
    return cdf, mean[n:] + special.ndtri(np.interp(0.9, F, pit))


def bench_quantile(rep, repeat):
    mean, y = make_quantile_data()
    n = QR_N

    def ours():
        qr = QuantileRecalibration().fit(Normal(mean[:n], 1.0), y[:n])
        d = qr.transform(Normal(mean[n:], 1.0))
        return d.cdf(y[n:]), d.ppf(0.9)

    def bare():
        return bare_quantile_recalibration(mean, y)

    (cdf_ours, q_ours), (cdf_bare, q_bare) = ours(), bare()
    times = interleaved_times([timed(ours), timed(bare)], repeat, budget=20.0)
    speedup = min(times[1]) / min(times[0])
    rep.line("3b. QuantileRecalibration n=1e5 vs bare numpy", times[0], times[1],
             target=f">= {TARGET_QR_SPEEDUP:g}x", status=verdict(speedup >= TARGET_QR_SPEEDUP))
    print(f"\n  largest difference from the bare steps: cdf "
          f"{np.max(np.abs(cdf_ours - cdf_bare)):.1e}, 0.9 quantile "
          f"{np.max(np.abs(q_ours - q_bare)):.1e} (the same PIT values; the maps interpolate "
          f"them differently)\n", flush=True)


# --------------------------------------------------------------------------------------------
# 4. Separated calibration splits (information; no timing)


def bench_separated():
    import warnings

    from sklearn.datasets import make_classification
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    try:
        from sklearn.calibration import _TemperatureScaling
    except ImportError:  # pragma: no cover - private API
        _TemperatureScaling = None
    print("4. separated calibration splits: median test NLL (info)")
    for n_classes in (2, 3, 5):
        rows = {k: [] for k in (0.3, 1.0, 3.0)}
        for seed in range(30):
            X, y = make_classification(n_samples=3000, n_features=20, n_informative=6,
                                       n_classes=n_classes, n_clusters_per_class=1,
                                       class_sep=2.0, random_state=seed)
            with warnings.catch_warnings():  # lbfgs stops at max_iter on a few seeds: fine here
                warnings.simplefilter("ignore", ConvergenceWarning)
                clf = LogisticRegression(C=10.0).fit(X[:1000], y[:1000])

            def logits(Z):
                d = clf.decision_function(Z)
                return np.column_stack([-d / 2, d / 2]) if d.ndim == 1 else d

            L_all, L_test, y_test = logits(X[1000:1040]), logits(X[1100:]), y[1100:]
            for n_cal in (10, 20, 40):
                L, yc = L_all[:n_cal], y[1000:1000 + n_cal]
                if not np.all(L.argmax(axis=1) == yc) or np.unique(yc).size < n_classes:
                    continue
                for k, found in rows.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        b_ours = TemperatureScaling("logits").fit(k * L, yc).inverse_temperature_
                    b_sk = (np.nan if _TemperatureScaling is None
                            else float(_TemperatureScaling().fit(k * L, yc).beta_))
                    nll = [class_nll(k * L_test, y_test, b) for b in (b_ours, b_sk, 1.0)]
                    res = optimize.minimize_scalar(
                        lambda u: class_nll(k * L_test, y_test, np.exp(u)), bounds=(-8, 8),
                        method="bounded")
                    found.append(nll + [res.fun])
        for k, found in rows.items():
            med = np.median(np.array(found), axis=0)
            print(f"  C={n_classes} logits x{k:<3g} {len(found):3d} splits: skcalib {med[0]:.3f}"
                  f"   sklearn {med[1]:.3f}   T=1 {med[2]:.3f}   best T {med[3]:.3f}"
                  f"   (skcalib/best {med[0] / med[3]:.2f}, sklearn/skcalib "
                  f"{med[1] / med[0]:.1f})")
    print(flush=True)


# --------------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5,
                        help="repetitions per timing; min and median are reported (default 5)")
    parser.add_argument("--profile", action="store_true",
                        help="print a cProfile summary of skcalib's fit even if the target passes")
    args = parser.parse_args(argv)

    t_start = time.perf_counter()
    print(environment_line())
    print(f"times: {args.repeat} runs (fewer, >= 3, past a section's time budget), measured calls "
          f"and baselines interleaved; speedup = baseline min / skcalib min, s(med) = of the "
          f"medians\n")
    rep = SpeedupReport(width=52, seconds=False)
    rep.header()

    bench_multiclass(rep, args.repeat, args.profile)
    bench_binary(rep, args.repeat)
    bench_normal(rep, args.repeat)
    bench_quantile(rep, args.repeat)
    bench_separated()

    print_summary(rep, t_start)
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)
