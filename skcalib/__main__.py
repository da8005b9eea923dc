"""Command line: ``python -m skcalib demo``.

The demo fits a classifier on a dataset that ships with scikit-learn and prints its calibration
errors on a held-out split, before and after nothing more than choosing a different model -- the
main job of the package: one number for "how miscalibrated", several ways -- and, beside the
SKCE, the p-value of the SKCE test of "the model is calibrated" (:func:`skcalib.stats.skce_test`).
"""

import argparse
import sys


def _demo(args):
    import numpy as np
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from . import calibration_error, mmce, ucme
    from .stats import skce_test

    X, y = load_digits(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.5, random_state=args.random_state, stratify=y
    )
    models = {
        "logistic regression": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "gaussian naive Bayes": GaussianNB(),
        "random forest": RandomForestClassifier(n_estimators=100, random_state=args.random_state),
    }
    print(f"digits: {X_train.shape[0]} training and {X_test.shape[0]} test samples, "
          f"{len(np.unique(y))} classes\n")
    header = (f"{'model':<22}{'accuracy':>9}{'ECE':>8}{'L2-CE':>8}{'MCE':>8}{'classw.':>8}"
              f"{'SKCE':>11}{'p-value':>9}{'MMCE':>8}{'UCME':>10}")
    print(header)
    print("-" * len(header))
    for name, model in models.items():
        model.fit(X_train, y_train)
        P = model.predict_proba(X_test)
        labels = model.classes_
        acc = float(np.mean(labels[P.argmax(axis=1)] == y_test))
        row = [
            calibration_error(y_test, P, labels=labels),
            calibration_error(y_test, P, norm="l2", labels=labels),
            calibration_error(y_test, P, norm="max", labels=labels),
            calibration_error(y_test, P, mode="classwise", labels=labels),
        ]
        # The bootstrap test (1000 resamples) of the unbiased SKCE; its estimate is skce(...).
        test = skce_test(y_test, P, labels=labels, method="bootstrap",
                         random_state=args.random_state)
        m = mmce(y_test, P, labels=labels)
        u = ucme(y_test, P, labels=labels, random_state=args.random_state)
        print(f"{name:<22}{acc:>9.3f}" + "".join(f"{v:>8.4f}" for v in row)
              + f"{test.estimate:>11.2e}{test.pvalue:>9.3f}{m:>8.4f}{u:>10.2e}")
    print("\nECE/L2-CE/MCE: top-label, 15 equal-width bins; classw.: class-wise ECE;")
    print("SKCE: unbiased squared kernel calibration error (Gaussian kernel, median heuristic);")
    print("  unbiased, so it is negative about half of the time on a calibrated model (by design,")
    print("  not a bug); compare it with its sampling noise, not with 0: the p-value does.")
    print("p-value: skcalib.stats.skce_test (bootstrap, 1000 resamples): the probability that a")
    print("  calibrated model gives an SKCE at least this large; below 0.05 is evidence of")
    print("  miscalibration, a large value means the data do not show any (not proof of")
    print("  calibration); 0.001 = 1/(1 + 1000) is the smallest value 1000 resamples can give.")
    print("MMCE: Kumar et al. 2018; UCME: squared mean embedding at 10 random test locations.")
    return 0


def main(argv=None):
    """Entry point of ``python -m skcalib`` and the ``skcalib`` script."""
    parser = argparse.ArgumentParser(prog="skcalib", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="fit classifiers on a bundled dataset and print their "
                                       "calibration errors")
    demo.add_argument("--random-state", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "demo":
        return _demo(args)
    parser.print_help()
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
