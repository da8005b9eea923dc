"""Reading predictions from CSV or Parquet files, and writing output files atomically.

Everything the command line reads goes through :func:`read_table`, which returns only the
columns it was asked for (a :class:`Table`), and through the column checks below, which turn bad
cells into a :class:`CLIError` naming the file, the column and the line (CSV) or row (Parquet).
Output files are written by :func:`write_files_atomically`: every file goes to a temporary file
in its target folder first, and all of them are renamed into place (``os.replace``) only after
every one was written, so that a failure leaves no partial or stale output behind.
"""

import argparse
import csv
import fnmatch
import gzip
import math
import os
import tempfile

import numpy as np

__all__ = [
    "CLIError",
    "Table",
    "read_table",
    "expand_columns",
    "numeric_column",
    "label_column",
    "canonical_labels",
    "check_output_path",
    "write_files_atomically",
    "option_type",
]

#: Cells read as missing values (besides the empty cell), case-insensitively.
MISSING = frozenset({"", "na", "n/a", "nan", "null", "none", "-nan"})

CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".tsv.gz", ".txt")
PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")


class CLIError(Exception):
    """A user error: printed as ``skcalib <command>: error: <message>``, exit status 2.

    Examples
    --------
    >>> str(CLIError("file 'x.csv' does not exist"))
    "file 'x.csv' does not exist"
    """


class Table:
    """Columns read from a file, with where each row came from.

    Parameters
    ----------
    path : str
        The file the columns were read from (used in messages).
    columns : dict of str to ndarray
        Column name to its values: an object array of ``str`` for CSV files, the column's own
        dtype for Parquet files.
    header : list of str
        Every column name of the file, in file order.
    lines : ndarray of int or None
        The line of the file of every row (CSV); None for Parquet (rows are numbered from 1).

    Examples
    --------
    >>> t = Table("p.csv", {"y": np.array(["1", "0"], dtype=object)}, ["y"], np.array([2, 3]))
    >>> t.n_rows, t.where(1)
    (2, 'line 3')
    """

    def __init__(self, path, columns, header, lines=None):
        self.path = path
        self.columns = columns
        self.header = list(header)
        self.lines = lines

    @property
    def n_rows(self):
        """Number of data rows."""
        return len(next(iter(self.columns.values()))) if self.columns else 0

    def where(self, row):
        """Where a row is in the file, for messages.

        Parameters
        ----------
        row : int
            0-based index of the data row.

        Returns
        -------
        str
            ``'line L'`` (CSV: the line of the file) or ``'row R'`` (Parquet, from 1).
        """
        if self.lines is not None:
            return f"line {int(self.lines[row])}"
        return f"row {int(row) + 1}"

    def column_error(self, name, message):
        """A :class:`CLIError` about a column of this file.

        Parameters
        ----------
        name : str
            The column.
        message : str
            What is wrong with it.

        Returns
        -------
        CLIError
            ``"column 'name' of path: message"``.
        """
        return CLIError(f"column {name!r} of {self.path}: {message}")


def option_type(convert, accept, expected):
    """An argparse ``type=`` for a number: ``convert(text)`` (``int``, ``float`` or another
    option type), refused unless ``accept(value)``, with the message ``expected EXPECTED; got
    'TEXT'`` (a usage error naming the option).

    Parameters
    ----------
    convert : callable
        Text to value; a ``ValueError`` is a refusal.
    accept : callable
        Value to bool.
    expected : str
        What is accepted, for the message (``"a positive integer"``).

    Returns
    -------
    callable

    Examples
    --------
    >>> positive = option_type(int, lambda v: v >= 1, "a positive integer")
    >>> positive("3")
    3
    >>> positive("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a positive integer; got '0'
    """
    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"expected {expected}; got {text!r}")
        return value

    return parse


def _kind(path):
    """``'csv'`` or ``'parquet'`` from the file name (a folder is a Parquet data set)."""
    lower = path.lower()
    if os.path.isdir(path) or lower.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if lower.endswith(CSV_SUFFIXES):
        return "csv"
    raise CLIError(f"cannot tell the format of {path!r} from its name: use a .csv (.csv.gz, "
                   f".tsv) file or a .parquet file (or a folder of Parquet files).")


def expand_columns(patterns, header, option):
    """Column names from names or shell-style patterns (``'p_*'``), in the order given.

    A pattern expands to the matching columns in file order. A pattern that matches nothing
    raises a :class:`CLIError` naming ``option`` and listing the file's columns (names are
    checked against the file by :func:`read_table`).

    Parameters
    ----------
    patterns : list of str
        Column names or patterns (``*``, ``?``, ``[...]``; a name of the file is taken as is).
    header : list of str
        The file's columns, in file order.
    option : str
        The option that gave the patterns (for messages).

    Returns
    -------
    list of str
        The column names.

    Examples
    --------
    >>> expand_columns(["p_*"], ["y", "p_0", "p_1"], "--proba-cols")
    ['p_0', 'p_1']
    """
    out = []
    for pattern in patterns:
        if any(c in pattern for c in "*?[") and pattern not in header:
            found = [name for name in header if fnmatch.fnmatchcase(name, pattern)]
            if not found:
                raise CLIError(f"{option}: the pattern {pattern!r} matches no column; the "
                               f"columns are {_listing(header)}.")
            out.extend(found)
        else:
            out.append(pattern)
    return out


def _listing(header, limit=20):
    names = ", ".join(repr(h) for h in header[:limit])
    return names + (f", ... ({len(header)} in all)" if len(header) > limit else "")


def _check_present(path, header, wanted):
    missing = [(option, name) for option, name in wanted if name not in header]
    if missing:
        what = "; ".join(f"{option} {name!r}" for option, name in missing)
        hint = ""
        if any("," in name and name not in header for _, name in missing):
            hint = " (give several columns separated by spaces, not commas)"
        raise CLIError(f"{path} has no column {what}; its columns are {_listing(header)}"
                       f"{hint}.")


def read_table(path, wanted):
    """Read the columns ``wanted`` from the CSV or Parquet file ``path``.

    Parameters
    ----------
    path : str
        A ``.csv``, ``.csv.gz`` or ``.tsv`` file (stdlib :mod:`csv`; header line required,
        delimiter detected among ``,``, ``;``, tab and ``|``), or a ``.parquet`` file or folder
        (needs pandas and pyarrow).
    wanted : list of (str, str or list of str)
        ``(option, column names)`` pairs: the columns to read and the option that named them
        (for messages). Names may be shell-style patterns (see :func:`expand_columns`).

    Returns
    -------
    table : Table
        The requested columns.
    resolved : list of list of str
        The column names of every entry of ``wanted`` after pattern expansion.

    Raises
    ------
    CLIError
        When the file does not exist, cannot be read, or lacks a requested column.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "p.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write("y,p\\n1,0.8\\n0,0.3\\n")
    >>> table, cols = read_table(path, [("--target", ["y"]), ("--proba-cols", ["p"])])
    >>> table.columns["p"].tolist(), table.where(0)
    (['0.8', '0.3'], 'line 2')
    """
    if not os.path.exists(path):
        raise CLIError(f"file {path!r} does not exist.")
    kind = _kind(path)
    if kind == "csv" and not os.path.isfile(path):
        raise CLIError(f"{path!r} is not a file.")
    header = _parquet_header(path) if kind == "parquet" else _csv_header(path)
    resolved = [expand_columns(names, header, option) for option, names in wanted]
    _check_present(path, header, [(option, name) for (option, _), names in zip(wanted, resolved)
                                  for name in names])
    needed = list(dict.fromkeys(name for names in resolved for name in names))
    if kind == "parquet":
        table = _read_parquet(path, needed, header)
    else:
        table = _read_csv(path, needed)
    if table.n_rows == 0:
        raise CLIError(f"{path} has a header but no data rows.")
    return table, resolved


def _open_text(path):
    opener = gzip.open if path.lower().endswith(".gz") else open
    return opener(path, "rt", encoding="utf-8-sig", newline="")


def _delimiter(path, first_line):
    if path.lower().endswith((".tsv", ".tsv.gz")):
        return "\t"
    counts = {d: first_line.count(d) for d in (",", ";", "\t", "|")}
    best = max(counts, key=counts.get)
    return best if counts[best] > 0 else ","


def _csv_header(path):
    try:
        with _open_text(path) as f:
            first = f.readline()
            if not first.strip():
                raise CLIError(f"{path} is empty (a header line with the column names is "
                               "needed).")
            row = next(csv.reader([first], delimiter=_delimiter(path, first)))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CLIError(f"cannot read {path}: {exc}") from None
    header = [name.strip() for name in row]
    duplicated = sorted({h for h in header if header.count(h) > 1})
    if duplicated:
        raise CLIError(f"{path} has duplicated column names: {_listing(duplicated)}.")
    return header


def _read_csv(path, needed):
    try:
        with _open_text(path) as f:
            first = f.readline()
            delimiter = _delimiter(path, first)
            header = [n.strip() for n in next(csv.reader([first], delimiter=delimiter))]
            index = [header.index(name) for name in needed]
            values = [[] for _ in needed]
            lines = []
            reader = csv.reader(f, delimiter=delimiter)
            for row in reader:
                if not row or (len(row) == 1 and not row[0].strip() and len(header) > 1):
                    continue  # blank line
                if len(row) != len(header):
                    raise CLIError(f"{path}: line {reader.line_num + 1} has {len(row)} fields, "
                                   f"the header has {len(header)}.")
                for vals, j in zip(values, index):
                    vals.append(row[j].strip())
                lines.append(reader.line_num + 1)  # + 1: the header line read above
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise CLIError(f"cannot read {path}: {exc}") from None
    columns = {name: np.array(vals, dtype=object) for name, vals in zip(needed, values)}
    return Table(path, columns, header, np.asarray(lines, dtype=np.int64))


def _parquet_modules():
    try:
        import pandas
        import pyarrow.parquet
    except ImportError:
        raise CLIError("reading Parquet files needs pandas and pyarrow: "
                       "pip install pandas pyarrow") from None
    return pandas, pyarrow.parquet


def _parquet_data_files(folder):
    """The files of a Parquet folder that pyarrow reads (names starting with ``_`` or ``.``,
    such as ``_SUCCESS`` or ``.crc`` files, are not data)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(("_", "."))]
        found += [os.path.join(root, f) for f in files if not f.startswith(("_", "."))]
    return found


def _parquet_header(path):
    if os.path.isdir(path) and not _parquet_data_files(path):
        raise CLIError(f"the folder {path} holds no Parquet files: give a .csv or .parquet "
                       "file, or a folder of .parquet files.")
    _, pq = _parquet_modules()
    try:
        if os.path.isdir(path):
            return list(pq.ParquetDataset(path).schema.names)
        return list(pq.read_schema(path).names)
    except Exception as exc:  # pyarrow raises its own error types for unreadable files
        raise CLIError(f"cannot read {path} as Parquet: {exc}") from None


def _read_parquet(path, needed, header):
    pandas, _ = _parquet_modules()
    try:
        frame = pandas.read_parquet(path, columns=needed, engine="pyarrow")
    except Exception as exc:
        raise CLIError(f"cannot read {path} as Parquet: {exc}") from None
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    columns = {}
    for name in needed:
        series = frame[name]
        if is_numeric_dtype(series.dtype) and not is_bool_dtype(series.dtype):
            # (nullable integer / float columns: their missing values become NaN)
            columns[name] = series.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            values = series.to_numpy(dtype=object)
            values[series.isna().to_numpy()] = None  # pd.NA, NaN, NaT: missing
            columns[name] = values
    return Table(path, columns, header, None)


def _to_float(cell):
    """A cell as a float: NaN for a missing value, None when it is not a number."""
    if isinstance(cell, str):
        text = cell.strip()
        if text.lower() in MISSING:
            return math.nan
        try:
            return float(text)
        except ValueError:
            return None
    if cell is None:
        return math.nan
    if isinstance(cell, (bool, np.bool_)):
        return None
    try:
        return float(cell)
    except (TypeError, ValueError):
        return None


def _fast_float(raw):
    """All cells converted at once when every one is a number (or ``nan``), else None."""
    if raw.dtype != object or not all(isinstance(c, str) for c in raw[:1]):
        return None
    try:
        return np.asarray(raw.astype(str), dtype=np.float64)
    except ValueError:
        return None


def numeric_column(table, name):
    """Column ``name`` as finite float64 values, or a :class:`CLIError` at the first bad cell.

    Missing cells (empty, ``NA``, ``nan``, ...), text that is not a number and infinite values
    are refused, with the line (CSV) or row (Parquet) of the first one.

    Parameters
    ----------
    table : Table
        The columns read from the file.
    name : str
        The column.

    Returns
    -------
    ndarray of shape (n_rows,)
        The values, float64.

    Examples
    --------
    >>> t = Table("p.csv", {"p": np.array(["0.5", "x"], dtype=object)}, ["p"], np.array([2, 3]))
    >>> numeric_column(t, "p")
    Traceback (most recent call last):
    ...
    skcalib._cli._io.CLIError: column 'p' of p.csv: non-numeric value 'x' on line 3.
    """
    raw = table.columns[name]
    if raw.dtype.kind in "fiu":
        values = raw.astype(np.float64)
    elif raw.dtype.kind == "b":
        raise table.column_error(name, "has boolean values; numbers are needed.")
    else:
        values = _fast_float(raw)
    if values is None:  # some cell is not a plain number: find the first bad one
        values = np.empty(raw.shape[0], dtype=np.float64)
        for i, cell in enumerate(raw):
            v = _to_float(cell)
            if v is None:
                raise table.column_error(name, f"non-numeric value {str(cell)!r} on "
                                               f"{table.where(i)}.")
            values[i] = v
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        i = bad[0]
        what = "a missing value (NaN)" if np.isnan(values[i]) else "an infinite value"
        more = f" (and {bad.size - 1} more)" if bad.size > 1 else ""
        raise table.column_error(name, f"{what} on {table.where(i)}{more}.")
    return values


def _canonical(cell):
    """A label as text: integral numbers without a decimal part (``1.0`` and ``1`` -> ``'1'``)."""
    if isinstance(cell, (bool, np.bool_)):
        return str(bool(cell))
    if isinstance(cell, (int, np.integer)):
        return str(int(cell))
    if isinstance(cell, (float, np.floating)):
        if math.isfinite(cell) and float(cell).is_integer():
            return str(int(cell))
        return repr(float(cell))
    text = str(cell).strip()
    try:
        number = float(text)
    except ValueError:
        return text
    if math.isfinite(number) and number.is_integer() and "_" not in text:
        return str(int(number))
    return text


def canonical_labels(cells):
    """Labels as text with integral numbers written alike (``'1.0'``, ``1`` -> ``'1'``).

    Parameters
    ----------
    cells : iterable
        Labels: text (CSV cells, ``--labels``) or values of any type (Parquet columns).

    Returns
    -------
    list of str

    Examples
    --------
    >>> canonical_labels(["1.0", 0, "cat"])
    ['1', '0', 'cat']
    """
    return [_canonical(c) for c in cells]


def typed_labels(texts):
    """Canonical label texts as an array: int64 when all are integers, else str.

    Examples
    --------
    >>> typed_labels(["1", "0"]).dtype.kind, typed_labels(["a", "1"]).dtype.kind
    ('i', 'U')
    """
    texts = list(texts)
    try:
        return np.array([int(t) for t in texts], dtype=np.int64)
    except ValueError:
        return np.array(texts, dtype=str)


def label_column(table, name):
    """Column ``name`` as canonical label texts; a :class:`CLIError` at a missing value.

    Parameters
    ----------
    table : Table
        The columns read from the file.
    name : str
        The target column.

    Returns
    -------
    ndarray of object, shape (n_rows,)
        The labels as text (see :func:`canonical_labels`).

    Examples
    --------
    >>> t = Table("p.csv", {"y": np.array(["1.0", "0"], dtype=object)}, ["y"], np.array([2, 3]))
    >>> label_column(t, "y").tolist()
    ['1', '0']
    """
    raw = table.columns[name]
    try:  # the distinct cells only (fast for long files)
        uniques, inverse = np.unique(raw, return_inverse=True)
    except TypeError:  # cells of mixed types (Parquet object columns)
        uniques, inverse = raw, np.arange(raw.shape[0])
    inverse = inverse.reshape(-1)
    texts = np.empty(len(uniques), dtype=object)
    missing = np.zeros(len(uniques), dtype=bool)
    for k, cell in enumerate(uniques):
        missing[k] = (cell is None
                      or (isinstance(cell, str) and cell.strip().lower() in MISSING)
                      or (isinstance(cell, (float, np.floating)) and math.isnan(cell)))
        texts[k] = None if missing[k] else _canonical(cell)
    if missing.any():
        i = int(np.flatnonzero(missing[inverse])[0])
        raise table.column_error(name, f"a missing target value on {table.where(i)}.")
    return texts[inverse]


def check_output_path(path, option, inputs=()):
    """Refuse an output path whose folder does not exist, a folder, or an input file.

    Parameters
    ----------
    path : str
        The output file.
    option : str
        The option that named it (for messages).
    inputs : sequence of str, default=()
        Files that must not be overwritten.

    Returns
    -------
    str
        ``path``.

    Examples
    --------
    >>> check_output_path("/nonexistent-folder/r.html", "--html")
    Traceback (most recent call last):
    ...
    skcalib._cli._io.CLIError: --html: the folder '/nonexistent-folder' does not exist.
    """
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CLIError(f"{option}: the folder {os.path.dirname(path) or '.'!r} does not exist.")
    if os.path.isdir(path):
        raise CLIError(f"{option}: {path!r} is a folder; give a file name.")
    for other in inputs:
        if os.path.exists(path) and os.path.exists(other) and os.path.samefile(path, other):
            raise CLIError(f"{option}: {path!r} is the input file; it would be overwritten.")
    return path


def write_files_atomically(files):
    """Write ``{path: bytes}``: all to temporary files first, then rename each into place.

    A temporary file lives in the folder of its target (so that ``os.replace`` is a rename on
    one file system); if any write fails, every temporary file is removed and no target is
    touched.

    Parameters
    ----------
    files : dict of str to bytes
        Target path to its content.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
    >>> write_files_atomically({path: b"hello"})
    >>> open(path, "rb").read()
    b'hello'
    """
    temps = {}
    umask = os.umask(0)
    os.umask(umask)
    try:
        for path, data in files.items():
            folder = os.path.dirname(os.path.abspath(path))
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.",
                                       suffix=".tmp")
            temps[path] = tmp
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; give the usual mode
        for path, tmp in temps.items():
            os.replace(tmp, path)
    except BaseException:
        for tmp in temps.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise
