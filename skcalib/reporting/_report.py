"""The report objects and their renderings: :class:`ReportRow`, :class:`ReportSection` and
:class:`CalibrationReport`, which prints as an aligned table (``str``), renders as HTML
(``to_html``, ``_repr_html_``), converts to a dictionary or a DataFrame and draws its figures
(``plot``, through :mod:`._figures`).

The sections are built by :mod:`._classification` and :mod:`._regression`; this module only holds
and shows them. ``find_row`` looks a row up by name without raising (the sections' builders and
the verdicts use it).
"""

import base64
import html
import io
import textwrap

import numpy as np

from .._optional import pyplot
from ._figures import plot_classification, plot_regression
from ._format import fmt, fmt_level, fmt_p

__all__ = ["ReportRow", "ReportSection", "CalibrationReport", "find_row", "GLOSSARY", "FOOTER"]

#: Style of the HTML report (scoped to its ``div``; no external resources).
_CSS = (".skcalib-report{font-family:sans-serif;font-size:13px;max-width:64em}"
        ".skcalib-report table{border-collapse:collapse;margin-bottom:4px}"
        ".skcalib-report th,.skcalib-report td{padding:2px 8px;text-align:right;"
        "border-bottom:1px solid #ddd;font-variant-numeric:tabular-nums}"
        ".skcalib-report .l{text-align:left}"
        ".skcalib-report td.small{font-weight:bold;color:#b00}"
        ".skcalib-report .section-verdict{font-style:italic;margin-top:2px}"
        ".skcalib-report .footer{color:#555}")

#: Where the report's terms (ECE, SKCE, Holm, CORP, PIT, ...) are explained; printed at its end.
GLOSSARY = "the glossary of skcalib's documentation (docs/glossary.rst)"

#: The report's last lines: how to read a p-value, and where the terms are explained.
FOOTER = ("p-values test the null hypothesis that the model is calibrated: a small one is "
          "evidence of miscalibration, a large one is not proof of calibration. Terms (ECE, "
          f"SKCE, Holm, CORP, smECE, ICI, PIT, CRPS, ...) are explained in {GLOSSARY}.")


class ReportRow:
    """One number of a report: its value, interval and p-value.

    Parameters
    ----------
    metric : str
        Name of the number, e.g. ``"ECE"`` (unique within its section).
    value : float
        The number.
    lower, upper : float or None, default=None
        The interval (its kind is stated in ``note``), or None.
    pvalue : float or None, default=None
        The p-value of the test attached to the number, or None.
    note : str, default=""
        Where the number comes from, or what to watch out for.

    Examples
    --------
    >>> from skcalib.reporting import ReportRow
    >>> row = ReportRow("ECE", 0.031, pvalue=0.2, note="15 bins")
    >>> row.value, row.lower, row.pvalue
    (0.031, None, 0.2)
    """

    __slots__ = ("metric", "value", "lower", "upper", "pvalue", "note")

    def __init__(self, metric, value, lower=None, upper=None, pvalue=None, note=""):
        self.metric = str(metric)
        self.value = _float_or_none(value)
        self.lower = _float_or_none(lower)
        self.upper = _float_or_none(upper)
        self.pvalue = _float_or_none(pvalue)
        self.note = str(note)

    def to_dict(self):
        """The row as a dictionary.

        Returns
        -------
        dict
            ``metric``, ``value``, ``lower``, ``upper``, ``pvalue`` and ``note``.
        """
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self):
        return (f"ReportRow({self.metric!r}, {self.value!r}, lower={self.lower!r}, "
                f"upper={self.upper!r}, pvalue={self.pvalue!r})")


class ReportSection:
    """A section of a report: a title, its rows and a verdict sentence.

    Parameters
    ----------
    key : str
        Short identifier (``"binned"``, ``"smooth"``, ``"kernel"``, ``"scores"``, ...).
    title : str
        Heading of the section.
    rows : list of ReportRow
        Its numbers.
    verdict : str
        One or two sentences about what the numbers say.

    Examples
    --------
    >>> from skcalib.reporting import ReportRow, ReportSection
    >>> s = ReportSection("kernel", "Kernel test", [ReportRow("SKCE", 1e-4, pvalue=0.4)], "Fine.")
    >>> s["SKCE"].pvalue
    0.4
    """

    def __init__(self, key, title, rows, verdict):
        self.key = key
        self.title = title
        self.rows = list(rows)
        self.verdict = verdict

    def __getitem__(self, metric):
        for row in self.rows:
            if row.metric == metric:
                return row
        raise KeyError(f"section {self.key!r} has no metric {metric!r}; it has "
                       f"{[r.metric for r in self.rows]}.")

    def __iter__(self):
        return iter(self.rows)

    def __len__(self):
        return len(self.rows)

    def to_dict(self):
        """The section as a dictionary.

        Returns
        -------
        dict
            ``key``, ``title``, ``verdict`` and ``rows`` (a list of :meth:`ReportRow.to_dict`).
        """
        return {"key": self.key, "title": self.title, "verdict": self.verdict,
                "rows": [row.to_dict() for row in self.rows]}

    def __repr__(self):
        return f"ReportSection({self.key!r}, {len(self.rows)} rows)"


class CalibrationReport:
    """The calibration report of a model: sections of numbers with intervals, p-values and
    verdicts. Made by :func:`calibration_report`.

    Parameters
    ----------
    task : {"classification", "regression"}
        The kind of predictions.
    sections : list of ReportSection
        The sections, in display order.
    verdict : str
        The overall verdict, from all the tests of the report.
    n_samples : int
        Number of predictions.
    name : str
        Name of the model (its class name, or "predictions").
    confidence_level : float
        Level of the intervals.
    data : dict
        What :meth:`plot` needs (targets, predictions and settings).

    Attributes
    ----------
    alpha : float
        ``1 - confidence_level``, the level the verdicts test at.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import calibration_report
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(0.05, 0.95, size=500)
    >>> y = (rng.random(500) < p).astype(int)  # calibrated: y drawn from p
    >>> report = calibration_report(p, y=y, n_resamples=200)
    >>> report.task, [s.key for s in report.sections]
    ('classification', ['accuracy', 'binned', 'smooth', 'kernel', 'scores', 'logistic'])
    >>> report["kernel"]["SKCE"].pvalue > 0.05
    True
    """

    def __init__(self, *, task, sections, verdict, n_samples, name, confidence_level, data):
        self.task = task
        self.sections = list(sections)
        self.verdict = verdict
        self.n_samples = int(n_samples)
        self.name = name
        self.confidence_level = float(confidence_level)
        self.alpha = 1.0 - self.confidence_level
        self._data = data
        self.displays_ = []

    # access -------------------------------------------------------------------------------
    def __getitem__(self, key):
        for section in self.sections:
            if section.key == key:
                return section
        raise KeyError(f"the report has no section {key!r}; it has "
                       f"{[s.key for s in self.sections]}.")

    def _header(self):
        data = self._data
        if self.task == "classification":
            what = f"{len(data['classes'])} classes"
            if len(data["classes"]) == 2:  # the sign of intercepts and biases depends on it
                what += f" (positive class: {data['classes'][1]})"
        else:
            what = f"{type(data['y_pred']).__name__} predictive distributions"
        return (f"Calibration report for {self.name}: {self.task}, {self.n_samples} samples, "
                f"{what}")

    # conversions --------------------------------------------------------------------------
    def to_dict(self):
        """The report as a dictionary of plain Python values (JSON-serialisable).

        Returns
        -------
        dict
            ``task``, ``name``, ``n_samples``, ``confidence_level``, ``verdict`` and
            ``sections`` (a list of ``{"key", "title", "verdict", "rows"}``, every row a dict
            with ``metric``, ``value``, ``lower``, ``upper``, ``pvalue``, ``note``).

        Examples
        --------
        >>> import json
        >>> from skcalib import calibration_report
        >>> d = calibration_report([0.2, 0.7, 0.4, 0.9, 0.1, 0.6], y=[0, 1, 1, 1, 0, 0],
        ...                        n_resamples=50).to_dict()
        >>> d["task"], d["sections"][0]["rows"][0]["metric"]
        ('classification', 'accuracy')
        >>> isinstance(json.dumps(d), str)
        True
        """
        return {"task": self.task, "name": self.name, "n_samples": self.n_samples,
                "confidence_level": self.confidence_level, "verdict": self.verdict,
                "sections": [s.to_dict() for s in self.sections]}

    def to_frame(self):
        """The numbers as a pandas DataFrame, one row per number.

        Returns
        -------
        pandas.DataFrame
            Columns ``section``, ``metric``, ``value``, ``lower``, ``upper``, ``pvalue`` (NaN
            where a number has no interval or p-value) and ``note``.

        Raises
        ------
        ImportError
            If pandas is not installed.

        Examples
        --------
        >>> from skcalib import calibration_report
        >>> report = calibration_report([0.2, 0.7, 0.4, 0.9, 0.1, 0.6], y=[0, 1, 1, 1, 0, 0],
        ...                             n_resamples=50)
        >>> frame = report.to_frame()
        >>> list(frame.columns)
        ['section', 'metric', 'value', 'lower', 'upper', 'pvalue', 'note']
        """
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - exercised without pandas only
            raise ImportError("CalibrationReport.to_frame needs pandas: pip install pandas "
                              "(or use to_dict()).") from exc
        records = []
        for section in self.sections:
            for row in section.rows:
                records.append({
                    "section": section.key, "metric": row.metric,
                    "value": _nan_if_none(row.value), "lower": _nan_if_none(row.lower),
                    "upper": _nan_if_none(row.upper), "pvalue": _nan_if_none(row.pvalue),
                    "note": row.note})
        return pd.DataFrame.from_records(
            records, columns=["section", "metric", "value", "lower", "upper", "pvalue", "note"])

    def __str__(self):
        level = f"{fmt_level(self.confidence_level)} interval"
        width = 92
        lines = [self._header(), "=" * len(self._header())]
        lines += textwrap.wrap("Verdict: " + self.verdict, width)
        name_w = max((len(r.metric) for s in self.sections for r in s.rows), default=0)
        name_w = max(name_w, len("metric"))
        for section in self.sections:
            lines += ["", section.title, "-" * len(section.title)]
            if section.rows:  # (a section that could not be computed has only its verdict)
                lines.append(f"  {'metric':<{name_w}}  {'value':>10}  {level:^20}  "
                             f"{'p-value':>8}")
            for row in section.rows:
                interval = ("" if row.lower is None and row.upper is None
                            else f"[{fmt(row.lower)}, {fmt(row.upper)}]")
                pval = "" if row.pvalue is None else fmt_p(row.pvalue)
                line = f"  {row.metric:<{name_w}}  {fmt(row.value):>10}  {interval:^20}  {pval:>8}"
                if row.note:
                    line += f"  {row.note}"
                lines.append(line.rstrip())
            lines += textwrap.wrap(section.verdict, width, initial_indent="  => ",
                                   subsequent_indent="     ")
        lines += ["", textwrap.fill(FOOTER, width)]
        return "\n".join(lines)

    def __repr__(self):
        return (f"<CalibrationReport {self.task}, {self.n_samples} samples, "
                f"{len(self.sections)} sections>")

    def to_html(self, *, include_plot=False):
        """The report as a self-contained HTML document (inline style, no network resources).

        Parameters
        ----------
        include_plot : bool, default=False
            Embed the figure of :meth:`plot` as a PNG data URI (needs matplotlib).

        Returns
        -------
        str
            A complete HTML document.

        Examples
        --------
        >>> from skcalib import calibration_report
        >>> report = calibration_report([0.2, 0.7, 0.4, 0.9, 0.1, 0.6], y=[0, 1, 1, 1, 0, 0],
        ...                             n_resamples=50)
        >>> page = report.to_html()
        >>> page.startswith("<!DOCTYPE html>"), "http" in page
        (True, False)
        """
        if not isinstance(include_plot, (bool, np.bool_)):
            raise TypeError(f"include_plot must be True or False; got {include_plot!r}.")
        figure = ""
        if include_plot:
            fig = self.plot()
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
            pyplot().close(fig)
            encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
            figure = (f'<img alt="calibration figures" style="max-width:100%" '
                      f'src="data:image/png;base64,{encoded}">')
        title = html.escape(self._header())
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{title}</title></head><body>{self._html_body(figure)}</body></html>\n")

    def _repr_html_(self):
        return self._html_body("")

    def _html_body(self, figure):
        esc = html.escape
        level = esc(f"{fmt_level(self.confidence_level)} interval")
        parts = [f"<style>{_CSS}</style>", '<div class="skcalib-report">',
                 f"<h3>{esc(self._header())}</h3>",
                 f'<p class="verdict"><strong>Verdict:</strong> {esc(self.verdict)}</p>']
        for section in self.sections:
            parts.append(f"<h4>{esc(section.title)}</h4>")
            if section.rows:
                parts.append("<table>")
                parts.append(f'<tr><th class="l">metric</th><th>value</th><th>{level}</th>'
                             f'<th>p-value</th><th class="l">note</th></tr>')
            for row in section.rows:
                interval = ("" if row.lower is None and row.upper is None
                            else f"[{fmt(row.lower)}, {fmt(row.upper)}]")
                pval = "" if row.pvalue is None else fmt_p(row.pvalue)
                small = row.pvalue is not None and row.pvalue < self.alpha
                pcell = f'<td class="small">{esc(pval)}</td>' if small else f"<td>{esc(pval)}</td>"
                parts.append(
                    f'<tr><td class="l">{esc(row.metric)}</td><td>{esc(fmt(row.value))}</td>'
                    f'<td>{esc(interval)}</td>{pcell}<td class="l">{esc(row.note)}</td></tr>')
            if section.rows:
                parts.append("</table>")
            parts.append(f'<p class="section-verdict">{esc(section.verdict)}</p>')
        parts.append(figure)
        parts.append(f'<p class="footer">{esc(FOOTER)}</p></div>')
        return "\n".join(parts)

    # figures ------------------------------------------------------------------------------
    def plot(self, figure=None):
        """Draw the report's figures: reliability diagram and smooth reliability curve
        (classification), or PIT histogram, quantile-calibration curve and interval coverage
        (regression), side by side.

        Parameters
        ----------
        figure : matplotlib Figure, default=None
            The figure to draw into (it is cleared first); a new one when None.

        Returns
        -------
        matplotlib.figure.Figure
            The figure: one panel per Display (:class:`~skcalib.plotting.ReliabilityDisplay`
            and :class:`~skcalib.plotting.SmoothReliabilityDisplay`, or
            :class:`~skcalib.plotting.PITHistogramDisplay`,
            :class:`~skcalib.plotting.QuantileCalibrationDisplay` and
            :class:`~skcalib.plotting.IntervalCoverageDisplay`), plus the Displays' twin axes.
            The Displays are kept in the report's ``displays_``.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> from skcalib import calibration_report
        >>> report = calibration_report([0.2, 0.7, 0.4, 0.9, 0.1, 0.6], y=[0, 1, 1, 1, 0, 0],
        ...                             n_resamples=50)
        >>> fig = report.plot()
        >>> [type(d).__name__ for d in report.displays_]
        ['ReliabilityDisplay', 'SmoothReliabilityDisplay']
        """
        plt = pyplot()
        if figure is None:
            n_panels = 2 if self.task == "classification" else 3
            figure = plt.figure(figsize=(5.0 * n_panels, 4.6))
        else:
            from matplotlib.figure import Figure

            if not isinstance(figure, Figure):
                raise TypeError("figure must be a matplotlib Figure or None; got "
                                f"{type(figure).__name__}.")
            figure.clear()
        if self.task == "classification":
            self.displays_ = plot_classification(figure, self._data, self.name)
        else:
            self.displays_ = plot_regression(figure, self._data, self.name)
        # fixed margins (room for the Displays' twin axes): cheaper than tight_layout
        figure.subplots_adjust(left=0.06, right=0.94, bottom=0.12, top=0.9, wspace=0.42)
        return figure


def find_row(section, metric):
    """The row of ``section`` named ``metric``, or None."""
    for row in section.rows:
        if row.metric == metric:
            return row
    return None


def _float_or_none(x):
    if x is None:
        return None
    return float(x)


def _nan_if_none(x):
    return np.nan if x is None else x
