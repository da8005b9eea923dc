"""The recalibrator family side by side (issue 15, items 5 and 6).

Run with ``.venv/bin/python benchmarks/bench_recalibrators.py [--repeat 3] [--n 100000]
[--peer-python /tmp/peers/bin/python] [--quick]`` (or ``make bench``). Same conventions as the
other scripts of this directory (a plain script that always exits with status 0; times are the
minimum and median of ``--repeat`` rounds, the calls that are compared take turns; a missed
target is a ``FAIL`` line and shows in the closing summary).

1. **Which method to use** -- one table per problem: every method of
   :mod:`skcalib.recalibration` (by its ``recalibrator=`` name), fitted on a calibration split
   and scored on a test split: top-label ECE (15 equal-width bins), smooth ECE, the SKCE
   test's p-value (:func:`skcalib.stats.skce_test`, Gaussian kernel, small p: miscalibration
   detected), log loss, Brier score, the change in accuracy against the uncalibrated model and
   the fit time. Problems:

   * scikit-learn's shipped data (``load_digits``, ``load_breast_cancer``, ``load_wine``) and
     ``make_classification`` with three classifiers (Gaussian naive Bayes: overconfident; a
     random forest: underconfident; an RBF support vector machine: decision values, not
     probabilities), split 50 / 25 / 25 into training, calibration and test sets (stratified,
     fixed seed). The calibration sets are small (45 samples for wine): a realistic regime in
     which the flexible methods overfit;
   * synthetic scores with miscalibration of known form: labels drawn from ``softmax(L)`` and the
     model reporting ``T * L`` (overconfident by a temperature, ``T = 2.5``), ``L + b`` (a
     per-class bias), or, binary, a beta-shaped distortion ``sigmoid(a log p - b log(1 - p) +
     c)`` of probabilities ``p``. The method able to represent the distortion should win.

2. **Fit time at n = 100,000 x 10 classes** (logits), every method against the issue's targets
   (<= 1 s; matrix and Dirichlet scaling <= 5 s) and its predict time, side by side with
   scikit-learn's ``CalibratedClassifierCV(FrozenEstimator(...), method="sigmoid" | "isotonic" |
   "temperature")`` on the same scores (a frozen "model" whose ``decision_function`` returns
   them), and binary (n = 100,000) with the peer packages where they install: ``betacal``
   (``BetaCalibration``), ``venn_abers`` (``VennAbersCalibrator``); ``dirichletcal`` (its source
   distribution does not build) and ``netcal`` (needs torch) were not measured. Peers run in this
   process if importable, else with ``--peer-python PATH`` in a child process on the same data
   (the pattern of ``bench_practitioner.py``, whose timing helpers this script reuses); they never
   enter skcalib's environment.
"""

import argparse
import contextlib
import json
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_practitioner import PeerServer, fmt, interleaved, timed  # noqa: E402 (shared helpers)

SEED = 20261125
N_TIME = 100_000
N_CLASSES = 10
TARGET_S = 1.0
TARGET_SLOW_S = 5.0
SLOW = ("matrix", "dirichlet")
NAMES = ("temperature", "platt", "beta", "vector", "matrix", "dirichlet", "isotonic",
         "histogram", "scaling_binning", "venn_abers")


def recalibrator(name):
    """A fresh instance of the method registered under ``name`` (None if it is not there)."""
    from skcalib.recalibration._registry import CLASSIFIER_RECALIBRATORS, recalibrator_class

    try:
        cls = recalibrator_class(name, CLASSIFIER_RECALIBRATORS)
    except ValueError:
        return None
    est = cls()
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


# --------------------------------------------------------------------------------------------
# 1. Quality


def softmax(L):
    E = np.exp(L - L.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def draw(P, rng):
    return np.minimum((rng.random((len(P), 1)) > np.cumsum(P, axis=1)).sum(axis=1),
                      P.shape[1] - 1)


def synthetic_problems(n_cal=2000, n_test=10000, seed=SEED):
    """name -> (kind, S_cal, y_cal, S_test, y_test) with the miscalibration of known form."""
    rng = np.random.default_rng(seed)
    out = {}
    n = n_cal + n_test
    L = 1.5 * rng.normal(size=(n, 4))
    y = draw(softmax(L), rng)
    out["synthetic: temperature 2.5 (4 cl.)"] = ("logits", 2.5 * L, y)
    L = 1.5 * rng.normal(size=(n, 4))
    b = np.array([1.2, -0.8, 0.0, 0.4])
    y = draw(softmax(L + b), rng)
    out["synthetic: class bias (4 cl.)"] = ("logits", L, y)
    p = rng.beta(1.0, 1.0, size=n)
    p = np.clip(p, 1e-6, 1 - 1e-6)
    q = 1.0 / (1.0 + np.exp(-(0.3 * np.log(p) - 2.0 * np.log1p(-p) + 0.5)))
    y = (rng.random(n) < q).astype(int)
    out["synthetic: beta distortion (binary)"] = ("proba", p, y)
    return {k: (kind, S[:n_cal], yy[:n_cal], S[n_cal:], yy[n_cal:])
            for k, (kind, S, yy) in out.items()}


def real_problems(seed=SEED, quick=False):
    """name -> (kind, S_cal, y_cal, S_test, y_test): a classifier's scores on shipped data."""
    from sklearn.datasets import (load_breast_cancer, load_digits, load_wine,
                                  make_classification)
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    data = {"digits": load_digits(return_X_y=True),
            "breast_cancer": load_breast_cancer(return_X_y=True),
            "wine": load_wine(return_X_y=True),
            "make_classification": make_classification(
                n_samples=6000, n_features=20, n_informative=8, n_classes=3,
                random_state=seed % 2**31)}
    models = {"GaussianNB": (lambda: GaussianNB(), "predict_proba"),
              "RandomForest": (lambda: RandomForestClassifier(
                  n_estimators=50 if quick else 200, random_state=0, n_jobs=1), "predict_proba"),
              "SVC": (lambda: make_pipeline(StandardScaler(), SVC()), "decision_function")}
    out = {}
    for dname, (X, y) in data.items():
        X_tr, X_rest, y_tr, y_rest = train_test_split(X, y, test_size=0.5, stratify=y,
                                                      random_state=0)
        X_cal, X_te, y_cal, y_te = train_test_split(X_rest, y_rest, test_size=0.5,
                                                    stratify=y_rest, random_state=0)
        for mname, (make, method) in models.items():
            clf = make().fit(X_tr, y_tr)
            kind = "logits" if method == "decision_function" else "proba"
            S_cal, S_te = getattr(clf, method)(X_cal), getattr(clf, method)(X_te)
            # (SVC's multiclass decision_function is an ovr vote, used as scores "logits")
            out[f"{dname} / {mname}"] = (kind, S_cal, y_cal, S_te, y_te)
    return out


def uncalibrated_proba(kind, S):
    from skcalib._problems.temperature import scores_to_logits

    return softmax(scores_to_logits(np.asarray(S, dtype=float), kind, 1e-12))


def scores(y, P, seed=SEED):
    """ECE, smooth ECE, SKCE p-value, log loss, Brier and accuracy of probabilities P."""
    import skcalib
    from skcalib.stats import skce_test

    labels = np.arange(P.shape[1])
    P = np.clip(P, 0.0, 1.0)
    P = P / P.sum(axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {"ece": skcalib.calibration_error(y, P, labels=labels),
               "smece": skcalib.smooth_ece(y, P, labels=labels),
               "skce_p": skce_test(y, P, labels=labels, random_state=seed).pvalue,
               "logloss": skcalib.log_score(y, P, labels=labels),
               "brier": skcalib.brier_score(y, P, labels=labels),
               "acc": float(np.mean(np.argmax(P, axis=1) == y))}
    return {k: float(v) for k, v in out.items()}


def quality(problems, names=NAMES, file=sys.stdout):
    """Print one table per problem; return ``{problem: {method: scores}}``."""
    from sklearn.base import clone

    results = {}
    header = (f"  {'method':<16}{'ECE':>8}{'smECE':>8}{'SKCE p':>8}{'logloss':>9}{'Brier':>8}"
              f"{'d acc':>8}{'fit':>11}")
    for pname, (kind, S_cal, y_cal, S_te, y_te) in problems.items():
        print(f"\n{pname}  (calibration n = {len(y_cal)}, test n = {len(y_te)}, "
              f"{kind})", file=file)
        print(header, file=file)
        C = max(int(y_cal.max()), int(y_te.max())) + 1
        labels = np.arange(C)
        P0 = uncalibrated_proba(kind, S_te)
        base = scores(y_te, P0)
        rows = {"uncalibrated": dict(base, fit=None)}
        for name in names:
            est = recalibrator(name)
            if est is None:
                rows[name] = None
                continue
            est = clone(est).set_params(input=kind)
            if "labels" in est.get_params():
                est.set_params(labels=labels)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    est.fit(S_cal, y_cal)
                    t = time.perf_counter() - t0
                    P = est.predict_proba(S_te)
            except Exception as exc:  # noqa: BLE001 - reported in the table, not fatal
                rows[name] = f"{type(exc).__name__}: {str(exc)[:60]}"
                continue
            rows[name] = dict(scores(y_te, P), fit=t)
        for name, r in rows.items():
            if r is None:
                print(f"  {name:<16}  (not available)", file=file)
            elif isinstance(r, str):
                print(f"  {name:<16}  error: {r}", file=file)
            else:
                print(f"  {name:<16}{r['ece']:8.4f}{r['smece']:8.4f}{r['skce_p']:8.3f}"
                      f"{r['logloss']:9.4f}{r['brier']:8.4f}{r['acc'] - base['acc']:+8.3f}"
                      f"{fmt(r['fit']) if r['fit'] is not None else '-':>11}", file=file)
        ok = {k: v for k, v in rows.items() if isinstance(v, dict) and k != "uncalibrated"}
        if ok:
            best = min(ok, key=lambda k: ok[k]["logloss"])
            print(f"  best log loss: {best}", file=file)
        results[pname] = rows
    return results


# --------------------------------------------------------------------------------------------
# 2. Fit time at n = 100,000 x 10 classes, against scikit-learn and the peers


def timing_data(n, seed=SEED):
    rng = np.random.default_rng(seed)
    L = 1.5 * rng.normal(size=(n, N_CLASSES))
    y = draw(softmax(L / 2.0), rng)  # overconfident by T = 2
    z = 2.0 * rng.normal(size=n)
    yb = (rng.random(n) < 1.0 / (1.0 + np.exp(-z / 2.0))).astype(np.int64)
    return {"L": L, "y": y, "z": z, "yb": yb,
            "pb": 1.0 / (1.0 + np.exp(-z))}


def _frozen_scores(n_classes):
    """A fitted 'model' whose decision_function returns its input: scikit-learn's calibrators
    then fit on exactly the scores skcalib's do."""
    from sklearn.base import BaseEstimator, ClassifierMixin

    class Scores(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            self.classes_ = np.arange(n_classes)
            return self

        def decision_function(self, X):
            return X[:, 0] if n_classes == 2 else X

        def predict(self, X):
            S = self.decision_function(X)
            return (S > 0).astype(int) if S.ndim == 1 else np.argmax(S, axis=1)

    from sklearn.frozen import FrozenEstimator

    return FrozenEstimator(Scores().fit(None, None))


def sklearn_calls(d):
    """name -> (fit callable) of scikit-learn's CalibratedClassifierCV on the same scores."""
    import sklearn
    from sklearn.calibration import CalibratedClassifierCV

    calls = {}
    for method in ("sigmoid", "isotonic", "temperature"):
        for nc, X, y in ((N_CLASSES, d["L"], d["y"]), (2, d["z"][:, None], d["yb"])):
            est = CalibratedClassifierCV(_frozen_scores(nc), method=method)
            calls[f"sklearn {sklearn.__version__} {method} ({nc} cl.)"] = (
                lambda est=est, X=X, y=y: est.fit(X, y))
    return calls


def peer_calls(d):
    """name -> zero-argument fit callable of every importable peer (binary data)."""
    calls = {}
    p, y = d["pb"], d["yb"]
    try:
        from betacal import BetaCalibration

        calls["betacal.BetaCalibration(abm)"] = (
            lambda: BetaCalibration(parameters="abm").fit(p.reshape(-1, 1), y))
    except Exception:  # noqa: BLE001 - any import failure means "not installed"
        pass
    try:
        from venn_abers import VennAbers

        P2 = np.column_stack([1 - p, p])

        def va():
            cal = VennAbers()
            cal.fit(P2, y)  # inductive VA: the isotonic fits are done at predict time
            return cal.predict_proba(P2[:1000])

        calls["venn_abers.VennAbers (fit + 1000 predictions)"] = va
    except Exception:  # noqa: BLE001
        pass
    return calls


def peer_server(data_dir):
    """Child mode: load the data, announce the peers (one JSON line), time one call per request."""
    d = {k: np.load(os.path.join(data_dir, f"{k}.npy")) for k in ("pb", "yb")}
    calls = peer_calls(d)
    print(json.dumps({"python": sys.version.split()[0], "peers": sorted(calls)}), flush=True)
    for line in sys.stdin:
        name = line.strip()
        if name == "quit":
            break
        try:
            with contextlib.redirect_stdout(sys.stderr):
                t = timed(calls[name])()
        except Exception as exc:  # noqa: BLE001 - reported by the parent
            t = None
            print(f"{name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        print(json.dumps({"time": t}), flush=True)


# skcalib method -> the scikit-learn / peer lines it is compared with
COMPARE = {"temperature": ["temperature (10 cl.)", "temperature (2 cl.)"], "platt": ["sigmoid (10 cl.)",
                                                               "sigmoid (2 cl.)"],
           "isotonic": ["isotonic (10 cl.)", "isotonic (2 cl.)"],
           "beta": ["betacal.BetaCalibration(abm)"],
           "venn_abers": ["venn_abers.VennAbers (fit + 1000 predictions)"]}


BINARY_COMPARED = ("temperature", "platt", "beta", "isotonic", "venn_abers")


def compare_lines(comps, times, med):
    for (label, _), t in zip(comps, times):
        pm = float(np.nanmedian(t)) if np.isfinite(t).any() else float("nan")
        if not np.isfinite(pm):
            print(f"    vs {label:<54}  failed (see stderr)")
            continue
        print(f"    vs {label:<54}{fmt(min(t)):>11}{fmt(pm):>11}   skcalib/other "
              f"{med / pm:.2f}", flush=True)


def timing(n, repeat, peer_python=None, only=None):
    """Fit and predict time of every method at n x 10 classes (and binary where compared)."""
    d = timing_data(n)
    rows = []
    skl = sklearn_calls(d)
    peers = peer_calls(d)
    child = None
    wanted = {p for v in COMPARE.values() for p in v if not p.endswith("cl.)")}
    if peer_python and not wanted <= set(peers):
        try:
            child = PeerServer(peer_python, d, keys=("pb", "yb"), script=__file__)
            print(f"  peers in a child process (Python {child.info['python']}): "
                  f"{', '.join(sorted(child.peers)) or 'none'}")
        except (OSError, RuntimeError) as exc:
            print(f"  ({exc}; the peer lines are skipped)")
    elif not set(peers):
        print("  betacal / venn_abers not importable here and no --peer-python: peer lines "
              "skipped (scikit-learn's always run).")
    print(f"\n  {'call':<58}{'min':>11}{'median':>11}{'target':>8}")
    for name in (NAMES if only is None else [m for m in NAMES if m in only]):
        est = recalibrator(name)
        if est is None:
            print(f"  {name:<58}  (not available)")
            continue
        target = TARGET_SLOW_S if name in SLOW else TARGET_S
        fitted = []

        def fit(est=est, X=d["L"], y=d["y"]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fitted[:] = [est.set_params(input="logits").fit(X, y)]

        multi, binary = [], []
        for key in COMPARE.get(name, []):
            if key.endswith("cl.)"):
                for k in (k for k in skl if k.endswith(key)):
                    (binary if key.endswith("(2 cl.)") else multi).append((k, timed(skl[k])))
            elif key in peers:
                binary.append((key, timed(peers[key])))
            elif child is not None and key in child.peers:
                binary.append((key + " (child)", child.timer(key)))
        times = interleaved([timed(fit)] + [c[1] for c in multi], repeat)
        med = float(np.median(times[0]))
        status = "ok" if med <= target else "FAIL"
        print(f"  {name + ' fit (10 cl.)':<58}{fmt(min(times[0])):>11}{fmt(med):>11}"
              f"{target:7.0f}s  {status}", flush=True)
        rows.append((f"{name} fit n={n} x {N_CLASSES}: {med:.3f} s (<= {target:.0f} s)", status))
        compare_lines(multi, times[1:], med)
        est_fitted = fitted[0]
        pt = interleaved([timed(lambda: est_fitted.predict_proba(d["L"]))], repeat)[0]
        print(f"  {name + ' predict_proba (10 cl.)':<58}{fmt(min(pt)):>11}"
              f"{fmt(float(np.median(pt))):>11}")
        if name in BINARY_COMPARED:
            est_b = recalibrator(name).set_params(input="proba" if name in ("beta", "venn_abers")
                                                  else "logits")
            xb = d["pb"] if name in ("beta", "venn_abers") else d["z"]

            def fit_b():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est_b.fit(xb, d["yb"])
                    if name == "venn_abers":
                        est_b.predict_proba(xb[:1000])

            bt = interleaved([timed(fit_b)] + [c[1] for c in binary], repeat)
            bmed = float(np.median(bt[0]))
            label = name + (" fit + 1000 predictions" if name == "venn_abers" else " fit")
            print(f"  {label + ' (binary)':<58}{fmt(min(bt[0])):>11}{fmt(bmed):>11}")
            compare_lines(binary, bt[1:], bmed)
    if child is not None:
        child.close()
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--n", type=int, default=N_TIME)
    parser.add_argument("--quick", action="store_true",
                        help="fewer data sets and trees (a smoke run)")
    parser.add_argument("--peer-python", default=os.environ.get("SKCALIB_PEER_PYTHON"))
    parser.add_argument("--peer-server", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--only", default=None,
                        help="comma-separated method names to time (default: all)")
    args = parser.parse_args(argv)
    if args.peer_server is not None:
        peer_server(args.peer_server)
        return 0
    t0 = time.perf_counter()
    rows = []
    if not args.skip_quality:
        print("1. Quality of every method (test split; d acc = accuracy change)")
        problems = synthetic_problems()
        problems.update(real_problems(quick=args.quick))
        quality(problems)
    if not args.skip_timing:
        print(f"\n2. Fit time at n = {args.n:,} x {N_CLASSES} classes "
              f"(targets: {TARGET_S:.0f} s; matrix and Dirichlet {TARGET_SLOW_S:.0f} s)")
        rows = timing(args.n, args.repeat, args.peer_python,
                      None if args.only is None else args.only.split(","))
    print(f"\nSummary ({time.perf_counter() - t0:.0f} s)")
    for text, status in rows:
        print(f"  {status:<5}{text}")
    if not rows:
        print("  (no timed targets)")
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)
