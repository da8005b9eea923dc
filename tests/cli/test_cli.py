"""The command line: ``skcalib report`` on CSV / Parquet files, ``skcalib demo``, ``--version``.

``main(argv)`` runs in-process (its exit status is returned); one test runs
``python -m skcalib --version`` in a subprocess. Numbers are checked against
:func:`skcalib.calibration_report` called directly on the same predictions (and, for the demo,
against the metric functions on the predictions it saves); every error path is checked for its
exit status, its message on standard error, and that no output file was written.
"""

import matplotlib

matplotlib.use("Agg")

import os  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import skcalib  # noqa: E402
import skcalib.__main__  # noqa: E402
from skcalib import calibration_report  # noqa: E402
from skcalib._cli import Progress, main  # noqa: E402
from skcalib._cli._io import write_files_atomically  # noqa: E402
from skcalib.distributions import Normal  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FAST = ["--n-resamples", "20"]  # the report's smallest number of resamples: fast tests


# -- helpers -----------------------------------------------------------------------------------

def write_csv(path, header, columns):
    """A CSV file with full-precision floats (``repr``) and the cells as given otherwise."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(",".join(header) + "\n")
        for row in zip(*columns):
            f.write(",".join(repr(v) if isinstance(v, float) else str(v) for v in row) + "\n")
    return str(path)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def direct(predictions, y, name, **kwargs):
    """What ``skcalib report`` must print: the report of the same predictions, plus newline."""
    kwargs.setdefault("n_resamples", 20)
    return str(calibration_report(predictions, y=y, name=name, **kwargs)) + "\n"


@pytest.fixture(scope="module")
def three_class():
    """120 samples, 3 classes; labels drawn from the predictions (calibrated)."""
    rng = np.random.default_rng(0)
    P = rng.dirichlet([2.0, 2.0, 2.0], size=120)
    y = np.array([rng.choice(3, p=p) for p in P])
    return P, y


@pytest.fixture
def cls_csv(tmp_path, three_class):
    P, y = three_class
    return write_csv(tmp_path / "preds.csv", ["id", "y", "p_0", "p_1", "p_2"],
                     [list(range(len(y))), y.tolist()] + [P[:, j].tolist() for j in range(3)])


@pytest.fixture(scope="module")
def normal_predictions():
    rng = np.random.default_rng(1)
    mean = rng.normal(size=80)
    std = rng.uniform(0.5, 2.0, size=80)
    y = mean + 1.5 * std * rng.normal(size=80)  # too narrow: miscalibrated
    return mean, std, y


@pytest.fixture
def reg_csv(tmp_path, normal_predictions):
    mean, std, y = normal_predictions
    return write_csv(tmp_path / "reg.csv", ["target", "mu", "sigma"],
                     [y.tolist(), mean.tolist(), std.tolist()])


# -- entry points, version and help -----------------------------------------------------------

def test_python_m_skcalib_version_in_a_subprocess():
    done = subprocess.run([sys.executable, "-m", "skcalib", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.strip() == f"skcalib {skcalib.__version__}"


def test_main_module_is_a_thin_entry():
    assert skcalib.__main__.main is main


@pytest.mark.parametrize("argv", [["--version"], ["report", "--version"], ["demo", "--version"]])
def test_version_everywhere(capsys, argv):
    code, out, _ = run(capsys, *argv)
    assert code == 0 and out.strip() == f"skcalib {skcalib.__version__}"


@pytest.mark.parametrize("argv, usage", [
    (["--help"], "usage: skcalib [-h]"),
    (["report", "--help"], "usage: skcalib report"),
    (["demo", "--help"], "usage: skcalib demo"),
    ([], "usage: skcalib [-h]"),  # no subcommand: the help, not the demo
])
def test_help(capsys, argv, usage):
    code, out, _ = run(capsys, *argv)
    assert code == 0 and out.startswith(usage)
    if argv and argv[0] == "report":
        for option in ("--target", "--proba-cols", "--mean-col", "--std-col", "--labels",
                       "--html", "--plot", "--n-bins", "--random-state", "--verbose"):
            assert option in out
    if not argv:
        assert "report" in out and "demo" in out


def test_unknown_command_is_a_usage_error(capsys):
    code, _, err = run(capsys, "frobnicate")
    assert code == 2 and "invalid choice" in err


def test_progress_only_when_verbose(capsys):
    Progress("report", verbose=False)("step")
    assert capsys.readouterr().err == ""
    Progress("report", verbose=False)("note", always=True)
    assert capsys.readouterr().err == "note\n"
    Progress("report", verbose=True)("step")
    assert re.fullmatch(r"\[\s*\d+\.\d s\] step\n", capsys.readouterr().err)


# -- report: the numbers ----------------------------------------------------------------------

def test_report_csv_is_calibration_report(capsys, cls_csv, three_class):
    P, y = three_class
    code, out, err = run(capsys, "report", cls_csv, "--target", "y", "--proba-cols", "p_0",
                         "p_1", "p_2", "--n-bins", "7", "--random-state", "3",
                         "--confidence-level", "0.9", *FAST)
    assert code == 0 and err == ""
    expected = direct(P, y, "preds.csv", labels=np.arange(3), n_bins=7, random_state=3,
                      confidence_level=0.9)
    assert out == expected
    # the options reached the report: the defaults give another one
    assert out != direct(P, y, "preds.csv", labels=np.arange(3))


def test_report_column_pattern(capsys, cls_csv, three_class):
    P, y = three_class
    code, out, _ = run(capsys, "report", cls_csv, "--target", "y", "--proba-cols", "p_*", *FAST)
    assert code == 0 and out == direct(P, y, "preds.csv", labels=np.arange(3))


def test_report_verbose_shows_progress(capsys, cls_csv):
    code, _, err = run(capsys, "report", cls_csv, "--target", "y", "--proba-cols", "p_*",
                       "--verbose", *FAST)
    assert code == 0
    assert "reading" in err and "read 120 rows" in err and "computing the calibration" in err


def test_report_labels_give_the_class_of_each_column(capsys, tmp_path, three_class):
    # string classes, columns in a non-sorted order, names that are not the labels
    P, y = three_class
    names = np.array(["cat", "dog", "emu"])
    order = [2, 0, 1]  # file columns: emu, cat, dog
    path = write_csv(tmp_path / "animals.csv", ["label", "first", "second", "third"],
                     [names[y].tolist()] + [P[:, j].tolist() for j in order])
    code, out, _ = run(capsys, "report", path, "--target", "label", "--proba-cols", "first",
                       "second", "third", "--labels", "emu", "cat", "dog", *FAST)
    assert code == 0
    assert out == direct(P, names[y], "animals.csv", labels=names)
    # without --labels: the sorted target values, with a note on standard error
    code, out2, err = run(capsys, "report", path, "--target", "label", "--proba-cols", "first",
                          "second", "third", *FAST)
    assert code == 0 and "note:" in err and "--labels" in err
    assert out2 == direct(P[:, order], names[y], "animals.csv", labels=names)


def test_report_column_names_are_the_labels(capsys, tmp_path, three_class):
    P, y = three_class
    names = np.array(["cat", "dog", "emu"])
    order = [1, 2, 0]
    path = write_csv(tmp_path / "named.csv", ["y"] + [f"proba_{names[j]}" for j in order],
                     [names[y].tolist()] + [P[:, j].tolist() for j in order])
    code, out, err = run(capsys, "report", path, "--target", "y", "--proba-cols", "proba_*",
                         *FAST)
    assert code == 0 and err == ""
    assert out == direct(P, names[y], "named.csv", labels=names)


def test_report_one_column_is_the_positive_class(capsys, tmp_path):
    rng = np.random.default_rng(2)
    p = rng.uniform(0.05, 0.95, size=150)
    y = np.where(rng.random(150) < p, "yes", "no")
    expected = direct(p, y, "binary.csv", labels=["no", "yes"])
    path = write_csv(tmp_path / "binary.csv", ["y", "p_yes"], [y.tolist(), p.tolist()])
    code, out, _ = run(capsys, "report", path, "--target", "y", "--proba-cols", "p_yes", *FAST)
    assert code == 0 and out == expected
    # a column holding P(no): --labels yes no (negative first, then the positive class)
    path = write_csv(tmp_path / "binary.csv", ["y", "p_no"], [y.tolist(), (1 - p).tolist()])
    code, out, _ = run(capsys, "report", path, "--target", "y", "--proba-cols", "p_no",
                       "--labels", "yes", "no", *FAST)
    assert code == 0 and out == expected
    # without --labels, the column's name says whose probability it holds
    code, out, err = run(capsys, "report", path, "--target", "y", "--proba-cols", "p_no", *FAST)
    assert code == 0 and out == expected and "note" not in err
    # a name that names no class: read as P(greater value), and said so on stderr
    path = write_csv(tmp_path / "binary.csv", ["y", "score"], [y.tolist(), p.tolist()])
    code, out, err = run(capsys, "report", path, "--target", "y", "--proba-cols", "score", *FAST)
    assert code == 0 and out == expected and "P(y = yes)" in err and "--labels" in err


@pytest.mark.parametrize("name, delimiter", [("semicolons.csv", ";"), ("tabs.tsv", "\t"),
                                             ("zipped.csv.gz", ",")])
def test_report_csv_dialects(capsys, tmp_path, three_class, name, delimiter):
    import gzip

    P, y = three_class
    lines = [delimiter.join(["y", "p_0", "p_1", "p_2"])]
    lines += [delimiter.join([str(label)] + [repr(float(v)) for v in row])
              for label, row in zip(y, P)]
    text = "\n".join(lines) + "\n\n"  # (a blank last line is skipped)
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)
    code, out, err = run(capsys, "report", path, "--target", "y", "--proba-cols", "p_*", *FAST)
    assert err == "" and code == 0
    assert out == direct(P, y, name, labels=np.arange(3))


def test_report_integer_labels_whatever_their_spelling(capsys, tmp_path):
    rng = np.random.default_rng(4)
    p = rng.uniform(0.1, 0.9, size=60)
    y = (rng.random(60) < p).astype(int)
    path = write_csv(tmp_path / "floats.csv", ["y", "p"], [[f"{v}.0" for v in y], p.tolist()])
    code, out, _ = run(capsys, "report", path, "--target", "y", "--proba-cols", "p",
                       "--labels", "0", "1", *FAST)
    assert code == 0 and out == direct(p, y, "floats.csv", labels=[0, 1])


def test_report_rounded_probabilities_are_renormalised(capsys, tmp_path, three_class):
    P, y = three_class
    R = np.round(P, 3)
    assert np.abs(R.sum(axis=1) - 1).max() > 1e-6  # the rounding shows
    path = write_csv(tmp_path / "rounded.csv", ["y", "a", "b", "c"],
                     [y.tolist()] + [R[:, j].tolist() for j in range(3)])
    code, out, _ = run(capsys, "report", path, "--target", "y", "--proba-cols", "a", "b", "c",
                       "--labels", "0", "1", "2", *FAST)
    assert code == 0
    assert out == direct(R / R.sum(axis=1, keepdims=True), y, "rounded.csv",
                         labels=np.arange(3))
    code, _, err = run(capsys, "report", path, "--target", "y", "--proba-cols", "a", "b", "c",
                       "--labels", "0", "1", "2", "--sum-tolerance", "1e-9", *FAST)
    assert code == 2 and "sum to" in err and "--sum-tolerance" in err


def test_report_normal_predictions(capsys, reg_csv, normal_predictions):
    mean, std, y = normal_predictions
    code, out, _ = run(capsys, "report", reg_csv, "--target", "target", "--mean-col", "mu",
                       "--std-col", "sigma", *FAST)
    assert code == 0
    assert out == direct(Normal(mean, std), y, "reg.csv")
    assert "regression" in out and "PIT" in out


def test_report_parquet_round_trip(capsys, tmp_path, three_class, normal_predictions):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    P, y = three_class
    frame = pd.DataFrame({"y": y, **{f"p_{j}": P[:, j] for j in range(3)}})
    path = tmp_path / "preds.parquet"
    frame.to_parquet(path)
    code, out, _ = run(capsys, "report", path, "--target", "y", "--proba-cols", "p_*", *FAST)
    assert code == 0 and out == direct(P, y, "preds.parquet", labels=np.arange(3))
    mean, std, yr = normal_predictions
    path = tmp_path / "reg.parquet"
    pd.DataFrame({"t": yr, "m": mean, "s": std}).to_parquet(path)
    code, out, _ = run(capsys, "report", path, "--target", "t", "--mean-col", "m", "--std-col",
                       "s", *FAST)
    assert code == 0 and out == direct(Normal(mean, std), yr, "reg.parquet")


def test_report_parquet_missing_values(capsys, tmp_path, three_class):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    P, y = three_class
    frame = pd.DataFrame({"y": pd.Series(np.array(["a", "b", "c"])[y], dtype="string"),
                          "p_a": pd.Series(P[:, 0], dtype="Float64"), "p_b": P[:, 1],
                          "p_c": P[:, 2]})
    with_na = frame.copy()
    with_na.loc[3, "p_a"] = pd.NA  # a nullable float column
    with_na.to_parquet(tmp_path / "na.parquet")
    code, _, err = run(capsys, "report", tmp_path / "na.parquet", "--target", "y",
                       "--proba-cols", "p_*", *FAST)
    assert code == 2 and "column 'p_a' of" in err and "a missing value (NaN) on row 4" in err
    with_na = frame.copy()
    with_na.loc[5, "y"] = pd.NA
    with_na.to_parquet(tmp_path / "na_target.parquet")
    code, _, err = run(capsys, "report", tmp_path / "na_target.parquet", "--target", "y",
                       "--proba-cols", "p_*", *FAST)
    assert code == 2 and "column 'y' of" in err and "a missing target value on row 6" in err
    # a string target and a nullable column without missing values are fine
    frame.to_parquet(tmp_path / "ok.parquet")
    code, out, _ = run(capsys, "report", tmp_path / "ok.parquet", "--target", "y",
                       "--proba-cols", "p_*", *FAST)
    assert code == 0
    assert out == direct(P, np.array(["a", "b", "c"])[y], "ok.parquet", labels=["a", "b", "c"])


def test_report_parquet_needs_pyarrow(capsys, tmp_path, monkeypatch):
    path = tmp_path / "preds.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    code, _, err = run(capsys, "report", path, "--target", "y", "--proba-cols", "p")
    assert code == 2 and "needs pandas and pyarrow" in err and "pip install" in err


# -- report: the files --------------------------------------------------------------------------

def test_report_writes_html_and_png(capsys, tmp_path, cls_csv, three_class):
    P, y = three_class
    html_path, png_path = tmp_path / "out.html", tmp_path / "out.png"
    code, out, err = run(capsys, "report", cls_csv, "--target", "y", "--proba-cols", "p_*",
                         "--html", html_path, "--plot", png_path, *FAST)
    assert code == 0
    assert f"wrote {html_path}" in err and f"wrote {png_path}" in err
    data = png_path.read_bytes()
    assert data.startswith(PNG_MAGIC)
    image = matplotlib.image.imread(png_path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    page = html_path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    # the report's own page, with its figure embedded
    report = calibration_report(P, y=y, labels=np.arange(3), n_resamples=20, name="preds.csv")
    figure = re.compile(r'<img alt="calibration figures"[^>]*src="data:image/png;base64,[^"]+">')
    assert len(figure.findall(page)) == 1
    assert figure.sub("", page) == report.to_html()
    # the numbers of the printed report are in the page
    for metric in ("ECE", "SKCE", "Brier score"):
        line = next(line for line in out.splitlines() if line.strip().startswith(metric + " "))
        value = line.split()[len(metric.split())]
        assert f">{value}<" in page
    assert sorted(os.listdir(tmp_path)) == ["out.html", "out.png", "preds.csv"]  # no temp files


def test_report_plot_format_from_extension(capsys, tmp_path, cls_csv):
    svg = tmp_path / "fig.svg"
    code, _, _ = run(capsys, "report", cls_csv, "--target", "y", "--proba-cols", "p_*",
                     "--plot", svg, *FAST)
    assert code == 0
    text = svg.read_text(encoding="utf-8")
    assert "<svg" in text[:1000]


def test_report_replaces_existing_outputs_only_on_success(capsys, tmp_path, cls_csv,
                                                            monkeypatch):
    html_path, png_path = tmp_path / "out.html", tmp_path / "out.png"
    html_path.write_text("old page")

    def broken_plot(self, figure=None):
        raise RuntimeError("drawing failed")

    monkeypatch.setattr(skcalib.reporting.CalibrationReport, "plot", broken_plot)
    with pytest.raises(RuntimeError, match="drawing failed"):
        main(["report", cls_csv, "--target", "y", "--proba-cols", "p_*", "--html",
              str(html_path), "--plot", str(png_path), *FAST])
    # the HTML page was already rendered, but nothing was written: the old page is intact
    assert html_path.read_text() == "old page" and not png_path.exists()
    assert sorted(os.listdir(tmp_path)) == ["out.html", "preds.csv"]


def test_write_files_atomically_writes_all_or_nothing(tmp_path):
    first = tmp_path / "a.txt"
    with pytest.raises(OSError):
        write_files_atomically({str(first): b"a", str(tmp_path / "missing" / "b.txt"): b"b"})
    assert os.listdir(tmp_path) == []  # neither the first file nor its temporary file
    write_files_atomically({str(first): b"a", str(tmp_path / "b.txt"): b"b"})
    assert first.read_bytes() == b"a" and (tmp_path / "b.txt").read_bytes() == b"b"
    umask = os.umask(0)
    os.umask(umask)
    assert first.stat().st_mode & 0o777 == 0o666 & ~umask  # not the 0600 of a temporary file
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt"]


# -- report: errors ---------------------------------------------------------------------------

HEADER = ["y", "p_0", "p_1", "p_2"]
GOOD = [["0", "0.2", "0.3", "0.5"], ["1", "0.1", "0.8", "0.1"], ["2", "0.3", "0.3", "0.4"],
        ["1", "0.25", "0.5", "0.25"]]


def _rows_with(row, col, value):
    rows = [list(r) for r in GOOD]
    rows[row][col] = value
    return rows


CLS = ["--target", "y", "--proba-cols", "p_0", "p_1", "p_2"]
REG = ["--target", "t", "--mean-col", "m", "--std-col", "s"]
REG_HEADER = ["t", "m", "s"]
REG_GOOD = [["1.0", "0.5", "1.0"], ["2.0", "1.5", "0.5"], ["-1", "0.0", "2.0"]]

ERRORS = {
    # name: (header, rows, options, message)
    "missing file": (None, None, CLS, "does not exist"),
    "unknown format": ("xlsx", None, CLS, "cannot tell the format"),
    "missing target": (HEADER, GOOD, ["--target", "label", "--proba-cols", "p_0", "p_1",
                                      "p_2"], "has no column --target 'label'"),
    "missing proba column": (HEADER, GOOD, ["--target", "y", "--proba-cols", "p_0", "p_9"],
                             "has no column --proba-cols 'p_9'"),
    "pattern matches nothing": (HEADER, GOOD, ["--target", "y", "--proba-cols", "q_*"],
                                "the pattern 'q_*' matches no column"),
    "empty cell": (HEADER, _rows_with(2, 2, ""), CLS,
                   "column 'p_1' of {path}: a missing value (NaN) on line 4"),
    "NA cell": (HEADER, _rows_with(0, 1, "NA"), CLS,
                "column 'p_0' of {path}: a missing value (NaN) on line 2"),
    "non-numeric": (HEADER, _rows_with(1, 3, "abc"), CLS,
                    "column 'p_2' of {path}: non-numeric value 'abc' on line 3"),
    "infinite": (HEADER, _rows_with(1, 3, "inf"), CLS, "an infinite value on line 3"),
    "above one": (HEADER, _rows_with(3, 2, "1.2"), CLS,
                  "column 'p_1' of {path}: probability 1.2 outside [0, 1] on line 5"),
    "negative": (HEADER, _rows_with(0, 1, "-0.1"), CLS, "probability -0.1 outside [0, 1]"),
    "row sum": (HEADER, _rows_with(1, 2, "0.7"), CLS,
                "the probability columns p_0, p_1, p_2 of {path} sum to 0.9 on line 3, not 1"),
    "unknown target value": (HEADER, _rows_with(1, 0, "5"), CLS + ["--labels", "0", "1", "2"],
                             "the target column 'y' has values '5' that are not among "
                             "--labels"),
    "target values do not match the columns": (
        HEADER, _rows_with(1, 0, "5"), CLS,
        "cannot match the 3 probability columns to the 4 distinct values of the target "
        "column 'y'"),
    "labels count": (HEADER, GOOD, CLS + ["--labels", "0", "1"],
                     "--labels has 2 labels for 3 probability columns"),
    "repeated labels": (HEADER, GOOD, CLS + ["--labels", "0", "1", "1"],
                        "--labels has repeated labels"),
    "one column, three classes": (HEADER, GOOD, ["--target", "y", "--proba-cols", "p_0"],
                                  "has 3 classes ('0', '1', '2') but there is one "
                                  "probability column"),
    "one column, one class": (HEADER, [["a", "0.2", "0.3", "0.5"]] * 2,
                              ["--target", "y", "--proba-cols", "p_0"],
                              "the one value 'a'"),
    "missing target value": (HEADER, _rows_with(2, 0, ""), CLS,
                             "column 'y' of {path}: a missing target value on line 4"),
    "first missing target value": (HEADER, [["0", "0.2", "0.3", "0.5"],
                                            ["NA", "0.1", "0.8", "0.1"],
                                            ["", "0.3", "0.3", "0.4"]], CLS,
                                   "a missing target value on line 3"),
    "column twice": (HEADER, GOOD, ["--target", "y", "--proba-cols", "p_0", "p_0"],
                     "--proba-cols names a column twice"),
    "target as probability": (HEADER, GOOD, ["--target", "y", "--proba-cols", "y", "p_0"],
                              "the target column 'y' is also given in --proba-cols"),
    "ragged row": (HEADER, GOOD + [["1", "0.5", "0.5"]], CLS,
                   "line 6 has 3 fields, the header has 4"),
    "header only": (HEADER, [], CLS, "has a header but no data rows"),
    "empty file": ([], [], CLS, "is empty"),
    "duplicated column names": (["y", "p", "p"], [["0", "0.5", "0.5"]],
                                ["--target", "y", "--proba-cols", "p"],
                                "duplicated column names: 'p'"),
    "std zero": (REG_HEADER, [["1.0", "0.5", "1.0"], ["2.0", "1.5", "0"]], REG,
                 "column 's' of {path}: standard deviation 0 on line 3; --std-col needs "
                 "positive values"),
    "std negative": (REG_HEADER, [["1.0", "0.5", "-2"]], REG, "standard deviation -2 on line 2"),
    "regression target not numeric": (REG_HEADER, REG_GOOD + [["big", "1", "1"]], REG,
                                       "column 't' of {path}: non-numeric value 'big' on "
                                       "line 5"),
    "proba and mean": (HEADER, GOOD, CLS + ["--mean-col", "p_0", "--std-col", "p_1"],
                       "--proba-cols and --mean-col/--std-col are mutually exclusive"),
    "mean without std": (REG_HEADER, REG_GOOD, ["--target", "t", "--mean-col", "m"],
                         "--mean-col needs --std-col too"),
    "std without mean": (REG_HEADER, REG_GOOD, ["--target", "t", "--std-col", "s"],
                         "--std-col needs --mean-col too"),
    "no predictions": (REG_HEADER, REG_GOOD, ["--target", "t"], "give the predictions"),
    "labels for regression": (REG_HEADER, REG_GOOD, REG + ["--labels", "a", "b"],
                              "--labels applies to --proba-cols only"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_report_errors(capsys, tmp_path, case):
    header, rows, options, message = ERRORS[case]
    if header is None:
        path = str(tmp_path / "nowhere.csv")
    elif header == "xlsx":
        path = str(tmp_path / "preds.xlsx")
        open(path, "w").close()
    else:
        path = str(tmp_path / "preds.csv")
        with open(path, "w") as f:
            if header:
                f.write(",".join(header) + "\n")
            for row in rows:
                f.write(",".join(row) + "\n")
    before = set(os.listdir(tmp_path))
    html_path, png_path = tmp_path / "out.html", tmp_path / "out.png"
    code, out, err = run(capsys, "report", path, *options, "--html", html_path, "--plot",
                         png_path, *FAST)
    assert code == 2 and out == ""
    assert err.startswith("skcalib report: error: ")
    assert message.format(path=path) in err
    assert not html_path.exists() and not png_path.exists()
    assert set(os.listdir(tmp_path)) == before


@pytest.mark.parametrize("outputs, message", [
    (["--html", "{dir}/missing/out.html"], "--html: the folder '{dir}/missing' does not exist"),
    (["--plot", "{dir}/missing/out.png"], "--plot: the folder '{dir}/missing' does not exist"),
    (["--html", "{dir}/same.png", "--plot", "{dir}/same.png"],
     "--html and --plot name the same file"),
    (["--html", "{input}"], "--html: '{input}' is the input file"),
    (["--plot", "{dir}"], "--plot: '{dir}' is a folder"),
    (["--plot", "{dir}/figure.xyz"], "--plot: cannot tell a figure format from"),
])
def test_report_output_errors(capsys, tmp_path, cls_csv, outputs, message):
    fill = {"dir": str(tmp_path), "input": cls_csv}
    before = {p: os.path.getmtime(os.path.join(tmp_path, p)) for p in os.listdir(tmp_path)}
    code, _, err = run(capsys, "report", cls_csv, "--target", "y", "--proba-cols", "p_*",
                       *[o.format(**fill) for o in outputs], *FAST)
    assert code == 2 and message.format(**fill) in err
    after = {p: os.path.getmtime(os.path.join(tmp_path, p)) for p in os.listdir(tmp_path)}
    assert after == before  # nothing written, the input untouched


@pytest.mark.parametrize("option", [
    ["--n-bins", "0"], ["--n-resamples", "10"], ["--random-state", "-1"],
    ["--sum-tolerance", "2"], ["--confidence-level", "1"], ["--n-bins", "many"],
])
def test_report_bad_option_values_are_usage_errors(capsys, cls_csv, option):
    code, out, err = run(capsys, "report", cls_csv, "--target", "y", "--proba-cols", "p_*",
                         *option)
    assert code == 2 and out == "" and "usage: skcalib report" in err and option[0] in err


def test_report_plot_needs_matplotlib(capsys, tmp_path, cls_csv, monkeypatch):
    import skcalib._cli._report as report_module

    monkeypatch.setattr(report_module, "_has_matplotlib", lambda: False)
    code, _, err = run(capsys, "report", cls_csv, "--target", "y", "--proba-cols", "p_*",
                       "--plot", tmp_path / "fig.png", *FAST)
    assert code == 2 and "--plot needs matplotlib" in err
    assert not (tmp_path / "fig.png").exists()


def test_closed_pipe_is_exit_status_1(capsys, cls_csv, monkeypatch):
    import skcalib._cli._report as report_module

    def closed(args, progress):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(report_module, "run", closed)
    assert main(["report", cls_csv, "--target", "y", "--proba-cols", "p_*"]) == 1


def test_report_target_is_required(capsys, cls_csv):
    code, _, err = run(capsys, "report", cls_csv, "--proba-cols", "p_*")
    assert code == 2 and "--target" in err


# -- demo ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("demo") / "figures"
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["demo", "--quick", "--verbose", "--output-dir", str(folder)])
    return code, out.getvalue(), err.getvalue(), folder


def _table_row(text, label):
    """The cells of row ``label`` in the before/after table of a model's report file."""
    start = text.index("Before and after recalibration")
    for line in text[start:].splitlines():
        if line.startswith(label):
            return re.split(r"\s{2,}", line.strip())
    raise AssertionError(f"no row {label!r}")


def test_demo_writes_figures_and_predictions(demo_run):
    code, out, _, folder = demo_run
    assert code == 0
    files = set(os.listdir(folder))
    expected = {"digits_gaussian_nb_report.png", "digits_gaussian_nb_reliability.png",
                "digits_gaussian_nb_predictions.csv", "diabetes_gaussian_process_report.png",
                "diabetes_gaussian_process_pit.png", "diabetes_gaussian_process_quantiles.png",
                "diabetes_gaussian_process_predictions.csv"}
    expected |= {"digits_gaussian_nb_report.txt", "digits_gaussian_nb_report.html",
                 "diabetes_gaussian_process_report.txt", "diabetes_gaussian_process_report.html",
                 "next_steps.txt"}
    assert expected <= files
    for name in files:
        if name.endswith(".png"):
            assert (folder / name).read_bytes()[:8] == PNG_MAGIC
    # the kinds of file are listed with what they hold
    for pattern in ("*_report.txt, *_report.html", "*.png", "*_predictions.csv",
                    "next_steps.txt"):
        assert pattern in out
    assert str(folder) in out


def test_demo_prints_reports_tables_and_next_steps(demo_run):
    _, out, _, folder = demo_run
    # the full reports are in files, a classifier's and a regressor's, text and HTML
    for stem in ("digits_gaussian_nb", "diabetes_gaussian_process"):
        assert (folder / f"{stem}_report.txt").read_text().startswith("Calibration report for")
        assert "Calibration report for" in (folder / f"{stem}_report.html").read_text()
    assert "Calibration report for" not in out
    assert "SKCE p-value" in out and "PIT p-value" in out
    assert "temperature (T = " in out and "temperature (variance x " in out
    steps = (folder / "next_steps.txt").read_text()
    assert "Next steps, on your own data" in steps
    assert " report my_predictions.csv --target y --proba-cols" in steps
    assert "--mean-col mean --std-col std" in steps


def test_demo_table_is_the_metrics_of_the_saved_predictions(demo_run):
    # recomputed from the CSV file the demo wrote, by the metric functions themselves
    _, out, _, folder = demo_run
    rows = np.genfromtxt(folder / "digits_gaussian_nb_predictions.csv", delimiter=",",
                         names=True)
    y = rows["y"].astype(int)
    P = np.column_stack([rows[f"p_{c}"] for c in range(10)])
    text = (folder / "digits_gaussian_nb_report.txt").read_text()
    cells = _table_row(text, "none")
    assert float(cells[2]) == pytest.approx(skcalib.calibration_error(y, P, labels=np.arange(10)),
                                            abs=5e-5)
    assert float(cells[3]) == pytest.approx(skcalib.brier_score(y, P, labels=np.arange(10)),
                                            abs=5e-5)
    pvalue = skcalib.stats.skce_test(y, P, labels=np.arange(10), method="bootstrap",
                                     n_resamples=100, random_state=0).pvalue
    assert cells[5] == ("<0.001" if pvalue < 0.001 else f"{pvalue:.3f}")
    # naive Bayes is badly calibrated on digits: the test rejects it
    assert pvalue < 0.05
    # the best recalibrator of the family was chosen by the held-out Brier score printed above
    listing = text[text.index("Brier score on the other half"):].split("\n\n")[0]
    scores = re.findall(r"(\w+) (\d\.\d{4})", listing)
    # every method but matrix scaling, which is Dirichlet calibration on probabilities
    recal = skcalib.recalibration
    assert len(scores) == len(recal.method_names(recal.CLASSIFIER_RECALIBRATORS)) - 1
    assert [float(s) for _, s in scores] == sorted(float(s) for _, s in scores)
    best = scores[0][0]
    assert f"{best}, best of" in text and f"{best}, best of" in out


def test_demo_next_command_runs(capsys, demo_run):
    _, out, _, _ = demo_run
    line = next(line.strip() for line in out.splitlines()
                if " report " in line and "predictions.csv --target" in line
                and "my_predictions" not in line)
    argv = shlex.split(line)
    argv = argv[argv.index("report") + 1:]
    code, report, _ = run(capsys, "report", *argv, *FAST)
    assert code == 0 and "Calibration report for digits_gaussian_nb_predictions.csv" in report


def test_demo_verbose_progress(demo_run):
    _, _, err, _ = demo_run
    assert "fitting Gaussian naive Bayes" in err and "candidate isotonic" in err
    assert re.search(r"\[\s*\d+\.\d s\]", err)


def test_demo_output_dir_must_be_a_folder(capsys, tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    code, _, err = run(capsys, "demo", "--quick", "--output-dir", path)
    assert code == 2 and "is not a folder" in err


def test_demo_next_steps_code_keeps_targets_in_row_order(demo_run, tmp_path):
    """Step 1's classifier lines, run with a pandas Series whose index is shuffled (as after
    train_test_split of a DataFrame), must put each target beside its own predictions."""
    import pandas
    _, _, _, folder = demo_run
    out = (folder / "next_steps.txt").read_text()
    step = out[out.index("1. Save your model's"):out.index("2. Report on them")]
    lines = [line.split("#")[0].strip() for line in step.splitlines()[1:]]
    classifier = [line for line in lines if line.startswith(("P =", "frame"))][:2]
    assert "predict_proba" in classifier[0]

    class Model:
        classes_ = np.array([0, 1])

        def predict_proba(self, X):
            return np.column_stack([1 - X[:, 0], X[:, 0]])

    X_test = np.array([[0.1], [0.9], [0.8]])
    y_test = pandas.Series([0, 1, 1], index=[7, 3, 11])
    namespace = {"model": Model(), "X_test": X_test, "y_test": y_test, "pandas": pandas,
                 "numpy": np}
    exec("\n".join(classifier + [line for line in lines if line.startswith("frame[")]),
         namespace)
    assert namespace["frame"]["y"].tolist() == [0, 1, 1]


def test_demo_lists_dirichlet_once_for_probability_models(demo_run):
    """Naive Bayes has no decision_function: matrix scaling of its log-probabilities is
    Dirichlet calibration, so only one of the two is fitted and listed."""
    _, _, _, folder = demo_run
    text = (folder / "digits_gaussian_nb_report.txt").read_text()
    family = text[text.index("Recalibrators fitted on"):text.index("Before and after")]
    assert "dirichlet" in family and "matrix" not in family


def test_report_comma_separated_columns_get_a_hint(capsys, cls_csv):
    code, _, err = run(capsys, "report", cls_csv, "--target", "y", "--proba-cols", "p_a,p_b")
    assert code == 2 and "separated by spaces, not commas" in err
