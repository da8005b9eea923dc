"""``skcalib report``: the calibration report of predictions stored in a CSV or Parquet file.

The file holds one row per sample: the true target and either the predicted class
probabilities (``--proba-cols``, one column per class; one column is the probability of the
positive class of a binary problem) or a normal predictive distribution (``--mean-col`` and
``--std-col``). Every cell is checked before any computation, and a bad one stops the command
with a message naming the file, the column and the line (exit status 2). The report is
:func:`skcalib.calibration_report` of the predictions, printed as text; ``--html`` and ``--plot``
also save it, and are written only once everything has succeeded (atomically: a temporary file
in the same folder, renamed into place).
"""

import argparse
import io
import math
import os
from importlib.util import find_spec

import numpy as np

from ._io import (CLIError, canonical_labels, check_output_path, label_column, numeric_column,
                  option_type, read_table, typed_labels, write_files_atomically)

__all__ = ["add_parser", "run", "load_predictions"]

DESCRIPTION = """\
Print the calibration report of predictions stored in a CSV or Parquet file.

The file has one row per sample with the true target (--target) and either the predicted
probability of every class (--proba-cols, in the order of --labels; one column is the
probability of the positive class of a binary target) or the mean and standard deviation of a
normal predictive distribution (--mean-col and --std-col). Column names may be shell-style
patterns in quotes ('p_*').
"""

EPILOG = """\
examples:
  skcalib report predictions.csv --target y --proba-cols p_0 p_1 p_2
  skcalib report predictions.csv --target y --proba-cols 'p_*' --html report.html --plot report.png
  skcalib report predictions.parquet --target price --mean-col mean --std-col std

Class labels: --labels gives the class of each probability column, in order (with one column:
the negative class, then the positive class). Without it, the column names are the labels if
every target value is one of them (also after removing a common prefix such as 'p_'), else the
sorted distinct target values, when there are as many as columns (the order of scikit-learn's
predict_proba). Rows of probabilities must sum to 1 within --sum-tolerance (rounded values
pass; such rows are renormalised). Exit status 0 on success, 2 on a usage or data error (the
message on standard error names the file, column and line); nothing is written on failure.
"""


_positive_int = option_type(int, lambda v: v >= 1, "a positive integer")
_seed = option_type(int, lambda v: 0 <= v < 2**32, "an integer in [0, 2**32 - 1]")
_n_resamples = option_type(_positive_int, lambda v: v >= 20, "an integer >= 20")
_level = option_type(float, lambda v: 0 < v < 1, "a number in (0, 1)")
_tolerance = option_type(float, lambda v: 0 <= v < 1, "a number in [0, 1)")


def add_parser(subparsers, parents=()):
    """Add the ``report`` subcommand to ``subparsers`` (an argparse subparsers action).

    Parameters
    ----------
    subparsers : argparse subparsers action
        From ``ArgumentParser.add_subparsers``.
    parents : sequence of argparse.ArgumentParser, default=()
        Parsers whose options the subcommand shares (``--verbose``, ``--version``).

    Returns
    -------
    argparse.ArgumentParser
        The subcommand's parser.

    Examples
    --------
    >>> import argparse
    >>> sub = argparse.ArgumentParser(prog="skcalib").add_subparsers()
    >>> add_parser(sub).prog
    'skcalib report'
    """
    p = subparsers.add_parser(
        "report", parents=list(parents), help="calibration report of predictions in a CSV or "
        "Parquet file", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE",
                   help="predictions: .csv, .csv.gz, .tsv, or .parquet (file or folder; needs "
                        "pandas and pyarrow)")
    p.add_argument("--target", required=True, metavar="COL",
                   help="column of the true target (class labels, or real values)")
    cls = p.add_argument_group("class probabilities")
    cls.add_argument("--proba-cols", nargs="+", metavar="COL",
                     help="columns of the predicted probability of each class (one column: the "
                          "positive class of a binary target)")
    cls.add_argument("--labels", nargs="+", metavar="LABEL",
                     help="the class of each probability column, in order (one column: NEGATIVE "
                          "POSITIVE)")
    cls.add_argument("--sum-tolerance", type=_tolerance, default=5e-3, metavar="TOL",
                     help="largest accepted distance of a row sum from 1 (default: 0.005, "
                          "enough for values rounded to 3 decimals)")
    reg = p.add_argument_group("normal predictive distributions")
    reg.add_argument("--mean-col", metavar="COL", help="column of the predicted means")
    reg.add_argument("--std-col", metavar="COL",
                     help="column of the predicted standard deviations (> 0)")
    out = p.add_argument_group("output")
    out.add_argument("--html", metavar="PATH", help="also save the report as an HTML page")
    out.add_argument("--plot", metavar="PATH",
                     help="also save the report's figure (format from the extension: .png, "
                          ".svg, .pdf; needs matplotlib)")
    opt = p.add_argument_group("computation")
    opt.add_argument("--n-bins", type=_positive_int, default=15, metavar="N",
                     help="bins of the binned errors and reliability diagram (default: 15)")
    opt.add_argument("--n-resamples", type=_n_resamples, default=1000, metavar="N",
                     help="resamples of the tests and intervals, at least 20 (default: 1000)")
    opt.add_argument("--confidence-level", type=_level, default=0.95, metavar="LEVEL",
                     help="level of the intervals; the verdicts test at 1 - LEVEL "
                          "(default: 0.95)")
    opt.add_argument("--random-state", type=_seed, default=0, metavar="SEED",
                     help="seed of the resampling (default: 0)")
    p.set_defaults(run=run)
    return p


def _check_options(args):
    """The option combinations argparse cannot express, before anything is read."""
    proba = args.proba_cols is not None
    if proba and (args.mean_col is not None or args.std_col is not None):
        raise CLIError("--proba-cols and --mean-col/--std-col are mutually exclusive: give the "
                       "probability columns of a classifier or the mean and standard deviation "
                       "columns of a regressor.")
    if not proba:
        if args.mean_col is None and args.std_col is None:
            raise CLIError("give the predictions: --proba-cols (class probabilities) or "
                           "--mean-col and --std-col (normal predictive distributions).")
        if args.mean_col is None or args.std_col is None:
            given, other = (("--mean-col", "--std-col") if args.std_col is None
                            else ("--std-col", "--mean-col"))
            raise CLIError(f"{given} needs {other} too.")
        if args.labels is not None:
            raise CLIError("--labels applies to --proba-cols only (class labels), not to "
                           "--mean-col/--std-col.")
    if args.html is not None:
        check_output_path(args.html, "--html", [args.file])
    if args.plot is not None:
        check_output_path(args.plot, "--plot", [args.file])
        _plot_format(args.plot)
    if (args.html is not None and args.plot is not None
            and os.path.abspath(args.html) == os.path.abspath(args.plot)):
        raise CLIError("--html and --plot name the same file.")


def _plot_format(path):
    """The figure format of ``path`` from its extension, checked against matplotlib's."""
    if not _has_matplotlib():
        raise CLIError("--plot needs matplotlib: pip install 'skcalib[plot]'")
    from matplotlib.backend_bases import FigureCanvasBase

    fmt = os.path.splitext(path)[1].lstrip(".").lower()
    supported = FigureCanvasBase.get_supported_filetypes()
    if fmt not in supported:
        raise CLIError(f"--plot: cannot tell a figure format from {path!r}; use one of the "
                       f"extensions {', '.join('.' + f for f in sorted(supported))}.")
    return fmt


def _label_key(text):
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def _listing(values, limit=10):
    values = list(values)
    text = ", ".join(repr(v) for v in values[:limit])
    return text + (f", ... ({len(values)} in all)" if len(values) > limit else "")


def _single_column_class(column, pair):
    """The class of ``pair`` that the name of a lone probability column names (``p_benign``,
    ``prob_1``, ``benign``), or None."""
    names = [column] + [column[i + 1:] for i, c in enumerate(column) if c in "_-.: ="]
    for name in names:
        label = canonical_labels([name.strip(" )")])[0]
        if label in pair:
            return label
    return None


def _strip_common_prefix(names):
    """The names without their common prefix up to a separator (``p_0`` -> ``0``), or up to
    the digits (``p10``, ``p11`` -> ``10``, ``11``); the names themselves when there is none."""
    prefix = os.path.commonprefix(names)
    cut = max(prefix.rfind(c) for c in "_-.: ")
    if cut >= 0:
        prefix = prefix[:cut + 1]
    else:
        digit = next((i for i, c in enumerate(prefix) if c.isdigit()), len(prefix))
        prefix = prefix[:digit]
        if not all(n[len(prefix):len(prefix) + 1].isdigit() for n in names):
            return names
    if not prefix or any(len(n) == len(prefix) for n in names):
        return names
    return [n[len(prefix):] for n in names]


def class_labels(y, columns, given, target):
    """The class of every probability column, as canonical label texts, and a note or None.

    Parameters
    ----------
    y : array of str
        Canonical target labels.
    columns : list of str
        Names of the probability columns.
    given : list of str or None
        ``--labels``.
    target : str
        Name of the target column (for messages).

    Returns
    -------
    labels : list of str
        One label per probability column; two (negative, positive) for one column.
    note : str or None
        How the labels were matched, when it was a guess.

    Examples
    --------
    >>> import numpy as np
    >>> class_labels(np.array(["cat", "dog"]), ["p_cat", "p_dog"], None, "y")
    (['cat', 'dog'], None)
    >>> class_labels(np.array(["1", "0"]), ["p"], None, "y")
    (['0', '1'], None)
    """
    present = sorted(set(y.tolist()), key=_label_key)
    k = len(columns)
    note = None
    if given is not None:
        labels = canonical_labels(given)
        if len(set(labels)) != len(labels):
            raise CLIError(f"--labels has repeated labels: {_listing(labels)}.")
        if k == 1 and len(labels) != 2:
            raise CLIError("with one probability column (a binary target), --labels takes two "
                           "labels: the negative class, then the positive class whose "
                           f"probability the column holds; got {len(labels)}.")
        if k >= 2 and len(labels) != k:
            raise CLIError(f"--labels has {len(labels)} labels for {k} probability columns; "
                           "give the class of each column, in order.")
        where = "--labels"
    elif k == 1:
        pair = present if len(present) == 2 else (["0", "1"] if set(present) <= {"0", "1"}
                                                  else None)
        if pair is not None:
            named = _single_column_class(columns[0], pair)
            if named is not None:
                # the column names its class (p_benign, prob_1, 1): that class is positive
                labels = [pair[1 - pair.index(named)], named]
            else:
                labels = pair
            if named is None and pair != ["0", "1"]:  # (0/1 targets: P(1) by convention)
                note = (f"note: the probability column {columns[0]} is read as "
                        f"P({target} = {pair[1]}) (the greater of the target values "
                        f"{pair[0]!r}, {pair[1]!r}); pass --labels NEGATIVE POSITIVE to change "
                        "this.")
        elif len(present) == 1:
            raise CLIError(f"the target column {target!r} has the one value {present[0]!r}, so "
                           "the positive class of the probability column is unknown; pass "
                           "--labels NEGATIVE POSITIVE.")
        else:
            raise CLIError(f"the target column {target!r} has {len(present)} classes "
                           f"({_listing(present)}) but there is one probability column; give "
                           "one column per class with --proba-cols.")
        where = "the target values"
    else:
        labels = None
        for candidate in (canonical_labels(columns),
                          canonical_labels(_strip_common_prefix(list(columns)))):
            if len(set(candidate)) == k and set(present) <= set(candidate):
                labels = candidate
                break
        if labels is None:
            if len(present) != k:
                raise CLIError(
                    f"cannot match the {k} probability columns to the {len(present)} distinct "
                    f"values of the target column {target!r} ({_listing(present)}); pass "
                    "--labels with the class of each probability column, in order.")
            labels = present
            note = (f"note: the probability columns {', '.join(columns)} are read as the "
                    f"classes {', '.join(labels)} (the sorted target values); pass --labels to "
                    "change this.")
        where = "the probability columns' labels"
    unknown = [v for v in present if v not in labels]
    if unknown:
        raise CLIError(f"the target column {target!r} has values {_listing(unknown)} that are "
                       f"not among {where} ({_listing(labels)}).")
    return labels, note


def _probabilities(table, columns, tolerance):
    P = np.column_stack([numeric_column(table, c) for c in columns])
    bad = (P < 0.0) | (P > 1.0)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise table.column_error(columns[j], f"probability {P[i, j]:.6g} outside [0, 1] on "
                                             f"{table.where(i)}.")
    if P.shape[1] == 1:
        return P[:, 0]
    sums = P.sum(axis=1)
    off = np.abs(sums - 1.0)
    bad = np.flatnonzero(off > tolerance + 1e-12)  # (1e-12: the sum's own rounding)
    if bad.size:
        i = bad[0]
        more = f" (and {bad.size - 1} more rows)" if bad.size > 1 else ""
        raise CLIError(f"the probability columns {', '.join(columns)} of {table.path} sum to "
                       f"{sums[i]:.6g} on {table.where(i)}{more}, not 1 (within "
                       f"--sum-tolerance {tolerance:g}); is a class missing from "
                       "--proba-cols?")
    fix = off > math.sqrt(np.finfo(np.float64).eps)
    if fix.any():  # rounded values: renormalise those rows (others are passed unchanged)
        P = P.copy()
        P[fix] /= sums[fix, None]
    return P


def load_predictions(args):
    """The predictions and targets of ``args.file``, checked cell by cell.

    Every failure is a :class:`~skcalib._cli._io.CLIError` naming the file, the column and the
    line.

    Parameters
    ----------
    args : argparse.Namespace
        ``file``, ``target``, ``proba_cols``, ``labels`` and ``sum_tolerance``, or ``file``,
        ``target``, ``mean_col`` and ``std_col``.

    Returns
    -------
    predictions : ndarray or Normal
        Class probabilities, with the columns in the order of the sorted labels (a single
        column as the probability of the greater label, as skcalib reads one column), or a
        :class:`skcalib.distributions.Normal`.
    y : ndarray
        The targets (int64 labels when every label is an integer).
    labels : ndarray or None
        The sorted class labels; None for normal predictions.
    notes : list of str
        What was read, and how the columns were matched to labels when that was a guess.

    Examples
    --------
    >>> import argparse, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "p.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("y,p_yes\\nyes,0.8\\nno,0.4\\n")
    >>> args = argparse.Namespace(file=path, target="y", proba_cols=["p_yes"],
    ...                           labels=["yes", "no"], sum_tolerance=1e-3)
    >>> P, y, labels, notes = load_predictions(args)
    >>> P.round(2).tolist(), y.tolist(), labels.tolist()
    ([0.2, 0.6], ['yes', 'no'], ['no', 'yes'])
    """
    if args.proba_cols is not None:
        wanted = [("--target", [args.target]), ("--proba-cols", args.proba_cols)]
    else:
        wanted = [("--target", [args.target]), ("--mean-col", [args.mean_col]),
                  ("--std-col", [args.std_col])]
    table, resolved = read_table(args.file, wanted)
    notes = [f"read {table.n_rows} rows of {args.file}"]
    if args.proba_cols is not None:
        columns = resolved[1]
        if args.target in columns:
            raise CLIError(f"the target column {args.target!r} is also given in --proba-cols.")
        if len(set(columns)) != len(columns):
            raise CLIError(f"--proba-cols names a column twice: {_listing(columns)}.")
        y_text = label_column(table, args.target)
        labels, note = class_labels(np.asarray(y_text.tolist(), dtype=str), columns,
                                    args.labels, args.target)
        if note:
            notes.append(note)
        P = _probabilities(table, columns, args.sum_tolerance)
        typed = typed_labels(labels)
        lookup = dict(zip(labels, typed.tolist()))
        y = np.array([lookup[v] for v in y_text.tolist()], dtype=typed.dtype)
        # skcalib reads the columns in the order of the sorted labels, and one column as the
        # probability of the greater label: put the columns in that order.
        order = np.argsort(typed, kind="stable")
        if P.ndim == 1:
            if order[0] == 1:  # the column holds P(the smaller label)
                P = 1.0 - P
        else:
            P = P[:, order]
        return P, y, typed[order], notes
    from ..distributions import Normal

    y = numeric_column(table, args.target)
    mean = numeric_column(table, args.mean_col)
    std = numeric_column(table, args.std_col)
    bad = np.flatnonzero(std <= 0)
    if bad.size:
        i = bad[0]
        raise table.column_error(args.std_col, f"standard deviation {std[i]:.6g} on "
                                               f"{table.where(i)}; --std-col needs positive "
                                               "values.")
    return Normal(mean, std), y, None, notes


def _has_matplotlib():
    return find_spec("matplotlib") is not None


def _figure_bytes(report, path):
    fmt = _plot_format(path)
    import matplotlib.pyplot as plt

    fig = report.plot()
    try:
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, bbox_inches="tight", dpi=120)
    finally:
        plt.close(fig)
    return buffer.getvalue()


def run(args, progress):
    """Run ``skcalib report`` with the parsed ``args``; return the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.
    progress : callable
        ``progress(message, always=False)``: progress messages on standard error
        (:class:`skcalib._cli.Progress`).

    Returns
    -------
    int
        0; errors raise :class:`~skcalib._cli._io.CLIError` (exit status 2 in :func:`main`).

    Examples
    --------
    >>> from skcalib._cli import main
    >>> main(["report", "no-such-file.csv", "--target", "y", "--proba-cols", "p"])
    2
    """
    _check_options(args)
    progress(f"reading {args.file}")
    predictions, y, labels, notes = load_predictions(args)
    for note in notes:
        progress(note, always=note.startswith("note:"))
    from ..reporting import calibration_report

    kwargs = dict(n_bins=args.n_bins, n_resamples=args.n_resamples,
                  confidence_level=args.confidence_level, random_state=args.random_state,
                  name=os.path.basename(os.path.normpath(args.file)))
    if labels is not None:
        kwargs["labels"] = labels
    progress(f"computing the calibration report ({args.n_resamples} resamples)")
    try:
        report = calibration_report(predictions, y=y, **kwargs)
    except (ValueError, TypeError) as exc:
        raise CLIError(f"the predictions in {args.file} were refused: {exc}") from None
    text = str(report)
    files = {}
    if args.html is not None:
        progress("rendering the HTML page")
        files[args.html] = report.to_html(include_plot=_has_matplotlib()).encode("utf-8")
    if args.plot is not None:
        progress("drawing the figure")
        files[args.plot] = _figure_bytes(report, args.plot)
    if files:
        try:
            write_files_atomically(files)
        except OSError as exc:
            raise CLIError(f"cannot write the output: {exc}") from None
    print(text)
    for path in files:
        progress(f"wrote {path}", always=True)
    return 0
