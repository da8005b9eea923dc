"""One call for the main calibration numbers of a model, with their uncertainty and a verdict.

:func:`calibration_report` takes a fitted model and its inputs, or its predictions, and the
targets, and returns a :class:`CalibrationReport`: sections of numbers (each with its interval
and p-value where one exists), each computed by the function of :mod:`skcalib.metrics` or
:mod:`skcalib.stats` that defines it, and a verdict sentence per section written from the tests.
The report prints as an aligned table (``str``), renders in notebooks (``_repr_html_``), converts
to a dictionary or a pandas DataFrame and draws its figures (``plot``) with the Displays of
:mod:`skcalib.plotting`.

Null hypothesis of every test: *the model is calibrated*. A small p-value is evidence of
miscalibration; a large one means that the data do not show it, which is not proof of
calibration.
"""

import base64
import html
import io
import math
import textwrap

import numpy as np
from sklearn.exceptions import NotFittedError

from ._expectations import check_targets
from ._predictions import predict_distribution
from ._validation import (
    check_confidence_level,
    check_labels_and_probabilities,
    check_n_bins,
    check_n_jobs,
    check_n_resamples,
    check_option,
    check_random_state_param,
)
from .distributions import Categorical, as_distribution, is_distribution
from .metrics import (
    brier_score,
    calibration_error,
    corp_decomposition,
    crps,
    integrated_calibration_index,
    interval_coverage,
    log_score,
    miscalibration_area,
    nll,
    pit,
    quantile_calibration_error,
    reliability_curve,
    smooth_ece,
)
from .stats import (adjust_pvalues, consistency_test, logistic_calibration, pit_test, skce_ci,
                    skce_test)

__all__ = ["calibration_report", "CalibrationReport", "ReportSection", "ReportRow"]

#: Bins with fewer samples than this are flagged in the binned section (their frequency is too
#: noisy to read: a Clopper-Pearson 95% interval of a bin of 10 samples is about 0.6 wide).
SMALL_BIN = 10

#: Nominal levels of the central prediction intervals whose coverage is reported.
COVERAGE_LEVELS = (0.5, 0.8, 0.9, 0.95)

_TASKS = ("auto", "classification", "regression")

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

#: Smallest number of predictions a report accepts.
MIN_SAMPLES = 3


# ------------------------------------------------------------------------------------------
# the report objects


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
        level = f"{_fmt_level(self.confidence_level)} interval"
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
                            else f"[{_fmt(row.lower)}, {_fmt(row.upper)}]")
                pval = "" if row.pvalue is None else _fmt_p(row.pvalue)
                line = f"  {row.metric:<{name_w}}  {_fmt(row.value):>10}  {interval:^20}  {pval:>8}"
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
            from ._optional import pyplot

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
        level = esc(f"{_fmt_level(self.confidence_level)} interval")
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
                            else f"[{_fmt(row.lower)}, {_fmt(row.upper)}]")
                pval = "" if row.pvalue is None else _fmt_p(row.pvalue)
                small = row.pvalue is not None and row.pvalue < self.alpha
                pcell = f'<td class="small">{esc(pval)}</td>' if small else f"<td>{esc(pval)}</td>"
                parts.append(
                    f'<tr><td class="l">{esc(row.metric)}</td><td>{esc(_fmt(row.value))}</td>'
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
        from ._optional import pyplot

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
            self.displays_ = _plot_classification(figure, self._data, self.name)
        else:
            self.displays_ = _plot_regression(figure, self._data, self.name)
        # fixed margins (room for the Displays' twin axes): cheaper than tight_layout
        figure.subplots_adjust(left=0.06, right=0.94, bottom=0.12, top=0.9, wspace=0.42)
        return figure


# ------------------------------------------------------------------------------------------
# the function


def calibration_report(estimator_or_predictions, X=None, y=None, *, task="auto", labels=None,
                       n_bins=15, confidence_level=0.95, n_resamples=1000, random_state=0,
                       n_jobs=None, sample_weight=None, name=None):
    """The main calibration numbers of a model, with their uncertainty and a verdict per section.

    Classifiers (class probabilities) get: accuracy and mean confidence; the binned errors (ECE
    with the p-value of the consistency test and the ECE a calibrated model would show on the
    same predictions, MCE with the size of its bin, class-wise ECE); the smooth errors (smECE,
    ICI); the SKCE with its test and interval; the Brier score and log loss with their CORP
    decompositions; the calibration slope and intercept. Probabilistic regressors (predictive
    distributions) get: the SKCE with its test and interval; NLL and CRPS; the PIT test; the
    coverage of central intervals; the quantile calibration error and miscalibration area.

    Parameters
    ----------
    estimator_or_predictions : fitted estimator, array-like or distribution
        A fitted classifier (``predict_proba(X)``) or probabilistic regressor (its predictive
        distribution by :func:`skcalib.scorers.predict_distribution`), with its inputs ``X``; or
        the predictions themselves: class probabilities (``(n,)`` P(positive) or ``(n, 2)`` for
        a binary problem, ``(n, n_classes)``) or a :mod:`skcalib.distributions` object. An
        ``(n, 2)`` array is read as binary probabilities unless ``task="regression"``, which
        reads it as ``[mean, std]`` of normal predictions.
    X : array-like, default=None
        The model's inputs, when an estimator is given (must be None for predictions).
    y : array-like of shape (n_samples,)
        The true labels or targets (required; pass it by keyword with predictions).
    task : {"auto", "classification", "regression"}, default="auto"
        ``"auto"``: classification for class probabilities, a ``Categorical`` or a model with
        ``predict_proba``; regression for other distributions and models.
    labels : array-like, default=None
        All class labels (default: the model's ``classes_``, else those present in ``y``).
    n_bins : int, default=15
        Equal-width bins of the binned errors and the reliability diagram.
    confidence_level : float, default=0.95
        Level of every interval; the verdicts test at ``1 - confidence_level``.
    n_resamples : int, default=1000
        Resamples of the SKCE bootstrap test and of the ECE consistency test (at least 20).
        Above ``reporting.LARGE_N`` (20,000) samples the SKCE section uses the block estimator
        with blocks of about ``sqrt(n)`` samples and its asymptotic block test and interval
        (``O(n^1.5)`` work instead of ``O(n^2)``); a 4-class report on 300,000 predictions takes
        about 12 s, most of it drawing the consistency test's labels.
    random_state : None, int, Generator or RandomState, default=0
        Seeds the resampling tests and the kernels' median heuristics: equal seeds give equal
        reports.
    n_jobs : int, default=None
        Parallel jobs of the resampling tests (results do not depend on it).
    sample_weight : None
        Not supported: the SKCE test and interval, the consistency test and the PIT test assume
        unweighted independent samples, so a weighted report would mix weighted and unweighted
        numbers. Anything but None raises a ``ValueError``; repeat rows to express frequency
        weights, or call the metric functions, which take ``sample_weight``.
    name : str, default=None
        Name of the model in the report (default: the estimator's class name, or
        ``"predictions"``).

    Returns
    -------
    CalibrationReport
        Its ``sections`` (``report["kernel"]["SKCE"].pvalue``), ``verdict``, ``str()``,
        ``to_html()``, ``to_dict()``, ``to_frame()`` and ``plot()``.

    Raises
    ------
    ValueError
        If ``y`` is missing, ``X`` is missing for an estimator (or given with predictions), the
        shapes disagree, the inputs have missing values or probabilities are invalid.
    TypeError
        If ``estimator_or_predictions`` is neither an estimator nor predictions.

    See Also
    --------
    skcalib.stats.skce_test, skcalib.stats.consistency_test, skcalib.stats.logistic_calibration,
    skcalib.stats.pit_test : The tests behind the verdicts.

    Notes
    -----
    Every number is the value of a public function called on the same data with the report's
    settings (:func:`skcalib.calibration_error`, :func:`skcalib.stats.skce_test`, ...; the
    accuracy's and the coverages' intervals and tests are :func:`scipy.stats.binomtest`). The
    verdicts test at level ``alpha = 1 - confidence_level``: the one-vs-rest logistic fits of a
    multiclass problem are combined by Holm's correction and the four coverage levels by
    Bonferroni's. The section verdicts test each at ``alpha``; the overall verdict combines the
    report's tests by Holm's step-down adjustment (so a calibrated model is flagged with
    probability at most ``alpha``) and lists every test that rejects after it.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import calibration_report
    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=1000)
    >>> y = (rng.random(1000) < 1 / (1 + np.exp(-z))).astype(int)
    >>> overconfident = 1 / (1 + np.exp(-2 * z))  # logits twice too large
    >>> report = calibration_report(overconfident, y=y, n_resamples=200)
    >>> report.verdict.startswith("Evidence of miscalibration")
    True
    >>> print(report["logistic"].verdict)  # doctest: +ELLIPSIS
    Miscalibrated: the model is over-confident (calibration slope 0.418 [0.34, 0.496]); ...
    """
    # parameters first, before any work
    task = check_option(task, "task", _TASKS)
    n_bins = check_n_bins(n_bins)
    confidence_level = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples, "n_resamples", min_val=20)
    random_state = check_random_state_param(random_state)
    n_jobs = check_n_jobs(n_jobs)
    if sample_weight is not None:
        raise ValueError(
            "sample_weight is not supported by calibration_report: the SKCE test and interval, "
            "the consistency test and the PIT test assume unweighted independent samples. Repeat "
            "rows to express frequency weights, or call the metric functions (which take "
            "sample_weight) directly.")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str or None; got {type(name).__name__}.")
    obj = estimator_or_predictions
    is_estimator = _is_estimator(obj)
    if not is_estimator and X is not None:
        raise ValueError("X must be None when estimator_or_predictions holds predictions "
                         "(X is the model's inputs, for an estimator); pass the targets as "
                         "y=..., e.g. calibration_report(y_proba, y=y_true).")
    if y is None:
        raise ValueError("y (the true labels or targets) is required: calibration_report("
                         "estimator, X, y) or calibration_report(predictions, y=y).")
    if is_estimator:
        if X is None:
            raise ValueError(f"X is required when estimator_or_predictions is an estimator "
                             f"({type(obj).__name__}): the report predicts on X.")
        name = name if name is not None else _estimator_name(obj)
        if task == "auto":
            task = "classification" if hasattr(obj, "predict_proba") else "regression"
        if task == "classification":
            if not hasattr(obj, "predict_proba"):
                raise TypeError(f"task='classification' needs a classifier with predict_proba; "
                                f"{type(obj).__name__} has none.")
            classes = getattr(obj, "classes_", None)
            if classes is None:
                raise NotFittedError(f"{type(obj).__name__} is not fitted (it has no classes_).")
            predictions = np.asarray(obj.predict_proba(X))
            if labels is not None and not np.array_equal(np.sort(np.asarray(labels)),
                                                         np.sort(np.asarray(classes))):
                raise ValueError(f"labels must be the classes of the estimator "
                                 f"({list(classes)}) or None; got {list(labels)}.")
            labels = np.asarray(classes)
        else:
            predictions = predict_distribution(obj, X)
    else:
        if obj is None:
            raise ValueError("estimator_or_predictions must be a fitted estimator, class "
                             "probabilities or a skcalib distribution; got None.")
        name = name if name is not None else "predictions"
        predictions = obj
        if task == "auto":
            task = ("regression" if is_distribution(obj) and not isinstance(obj, Categorical)
                    else "classification")

    settings = dict(n_bins=n_bins, confidence_level=confidence_level, n_resamples=n_resamples,
                    random_state=random_state, n_jobs=n_jobs)
    if task == "classification":
        return _classification_report(predictions, y, labels, name, **settings)
    if labels is not None:
        raise ValueError("labels is for classification; regression reports take no labels.")
    return _regression_report(predictions, y, name, **settings)


# ------------------------------------------------------------------------------------------
# classification


def _classification_report(predictions, y, labels, name, *, n_bins, confidence_level,
                           n_resamples, random_state, n_jobs):
    from scipy.stats import binomtest

    if is_distribution(predictions) and not isinstance(predictions, Categorical):
        raise TypeError(f"task='classification' needs class probabilities; got a "
                        f"{type(predictions).__name__} distribution (use task='regression').")
    if isinstance(predictions, Categorical):
        if labels is None:
            labels = predictions.classes
        predictions = predictions.probs
    data = check_labels_and_probabilities(y, predictions, labels=labels, min_samples=2,
                                          prob_name="estimator_or_predictions", label_name="y")
    classes = data.classes
    P = np.array(data.probs)  # (n, C) float64, column j for classes[j]
    y_arr = np.asarray(classes)[data.y]
    n, n_classes = P.shape
    _check_n_samples(n)
    alpha = 1.0 - confidence_level
    level = _fmt_level(confidence_level)
    common = dict(labels=classes)
    sections = []

    # accuracy --------------------------------------------------------------------------------
    # on the encoded labels: scikit-learn's accuracy_score refuses an object array of labels
    n_correct = int(np.count_nonzero(np.asarray(data.y) == np.argmax(P, axis=1)))
    accuracy = n_correct / n
    acc_ci = binomtest(n_correct, n).proportion_ci(confidence_level, method="exact")
    confidence = float(np.mean(np.max(P, axis=1)))
    rows = [ReportRow("accuracy", accuracy, acc_ci.low, acc_ci.high,
                      note="Clopper-Pearson interval"),
            ReportRow("mean confidence", confidence, note="mean largest probability")]
    if confidence > acc_ci.high:
        verdict = (f"Over-confident on average: the mean confidence {_fmt(confidence)} is above "
                   f"the accuracy {_fmt(accuracy)} and its {level} interval "
                   f"[{_fmt(acc_ci.low)}, {_fmt(acc_ci.high)}].")
    elif confidence < acc_ci.low:
        verdict = (f"Under-confident on average: the mean confidence {_fmt(confidence)} is below "
                   f"the accuracy {_fmt(accuracy)} and its {level} interval "
                   f"[{_fmt(acc_ci.low)}, {_fmt(acc_ci.high)}].")
    else:
        verdict = (f"The mean confidence {_fmt(confidence)} lies within the {level} interval of "
                   f"the accuracy [{_fmt(acc_ci.low)}, {_fmt(acc_ci.high)}] (n = {n}).")
    sections.append(ReportSection("accuracy", "Accuracy and confidence", rows, verdict))

    # binned errors ---------------------------------------------------------------------------
    mode = "binary" if n_classes == 2 else "top_label"  # (as calibration_error's mode= spells it)
    ece = calibration_error(y_arr, P, n_bins=n_bins, **common)
    ece_test = consistency_test(calibration_error, y_arr, P, n_resamples=n_resamples,
                                metric_kwargs={"n_bins": n_bins}, random_state=random_state,
                                n_jobs=n_jobs, **common)
    null = ece_test.null_distribution
    null_lo, null_hi = np.quantile(null, [alpha / 2, 1 - alpha / 2])
    mce = calibration_error(y_arr, P, n_bins=n_bins, norm="max", **common)
    curve = reliability_curve(y_arr, P, n_bins=n_bins, confidence_level=confidence_level,
                              **common)
    gaps = np.abs(curve.prob_true - curve.prob_pred)
    worst = int(np.argmax(gaps))
    worst_count = int(curve.counts[worst])
    n_small = int(np.sum(curve.counts < SMALL_BIN))
    rows = [
        ReportRow("ECE", ece, pvalue=ece_test.pvalue,
                  note="p: consistency test"),
        ReportRow("ECE if calibrated", float(np.mean(null)), null_lo, null_hi,
                  note=f"simulated: mean, central {level}"),
        ReportRow("MCE", mce, note="largest bin gap"),
        ReportRow("MCE bin size", worst_count,
                  note="worst bin: too few to read" if worst_count < SMALL_BIN else ""),
        ReportRow("bins used", len(curve.counts),
                  note=f"non-empty; {n_small} with < {SMALL_BIN} samples"),
    ]
    if n_classes > 2:
        rows.append(ReportRow("class-wise ECE", calibration_error(
            y_arr, P, n_bins=n_bins, mode="classwise", **common),
            note="mean one-vs-rest ECE"))
    if ece_test.pvalue < alpha:
        verdict = (f"Miscalibrated: the ECE of {_fmt(ece)} is larger than a calibrated model "
                   f"gives on these predictions ({_fmt(np.mean(null))} on average, "
                   f"{_fmt(null_hi)} at most in {_pct(1 - alpha / 2)} of simulations; "
                   f"consistency test {_p_phrase(ece_test.pvalue, n_resamples)}, n = {n}).")
    else:
        verdict = (f"No evidence of miscalibration: the ECE of {_fmt(ece)} is within what a "
                   f"calibrated model gives on these predictions ({_fmt(np.mean(null))} on "
                   f"average; consistency test {_p_phrase(ece_test.pvalue, n_resamples)}, "
                   f"n = {n}). Binned errors are biased upwards, so an ECE is never 0.")
    if worst_count < SMALL_BIN:
        verdict += (f" The MCE ({_fmt(mce)}) comes from a bin of {worst_count} "
                    f"sample{'s' if worst_count != 1 else ''}: too few to read.")
    elif n_small:
        verdict += (f" {n_small} of the {len(curve.counts)} non-empty bins hold fewer than "
                    f"{SMALL_BIN} samples.")
    title = f'Binned errors (mode="{mode}", {n_bins} equal-width bins)'
    sections.append(ReportSection("binned", title, rows, verdict))

    # smooth errors ---------------------------------------------------------------------------
    smece, bandwidth = smooth_ece(y_arr, P, return_bandwidth=True, **common)
    ici = integrated_calibration_index(y_arr, P, **common)
    bandwidth_note = f"smoothing bandwidth {_fmt(bandwidth)}"
    if math.isclose(bandwidth, smece, rel_tol=1e-6):  # the automatic bandwidth: not a typo
        bandwidth_note += " (chosen equal to the smECE: see the glossary)"
    rows = [ReportRow("smECE", smece, note=bandwidth_note),
            ReportRow("ICI", ici, note="mean gap of a loess-smoothed curve (span 0.75)")]
    verdict = (f"The smoothed reliability curve is on average {_fmt(smece)} (smECE) and "
               f"{_fmt(ici)} (ICI) away from the diagonal. These errors are descriptive; the "
               f"tests of the other sections say whether the gap exceeds the noise.")
    sections.append(ReportSection("smooth", f'Smooth errors (mode="{mode}")', rows, verdict))

    # kernel test -------------------------------------------------------------------------------
    sections.append(_kernel_section(y_arr, P, common, n, confidence_level, n_resamples,
                                    random_state, n_jobs))

    # proper scores -----------------------------------------------------------------------------
    brier = brier_score(y_arr, P, **common)
    corp = corp_decomposition(y_arr, P, **common)
    logloss = log_score(y_arr, P, **common)
    rows = [ReportRow("Brier score", brier),
            ReportRow("Brier miscalibration", corp.mcb,
                      note="MCB: what recalibration could remove; 0 if calibrated"),
            ReportRow("Brier discrimination", corp.dsc,
                      note="DSC: how well the predictions sort the outcomes"),
            ReportRow("Brier uncertainty", corp.unc,
                      note="UNC: score of always predicting the class frequencies"),
            ReportRow("log loss", logloss,
                      note="" if n_classes == 2 else "not decomposed for more than 2 classes")]
    if n_classes == 2:
        corp_log = corp_decomposition(y_arr, P, score="log", **common)
        rows += [ReportRow("log loss miscalibration", corp_log.mcb, note="MCB"),
                 ReportRow("log loss discrimination", corp_log.dsc, note="DSC"),
                 ReportRow("log loss uncertainty", corp_log.unc, note="UNC")]
    share = corp.mcb / brier if brier > 0 else 0.0
    verdict = (f"Score = MCB - DSC + UNC (CORP decomposition). Miscalibration accounts for "
               f"{_pct(share)} of the Brier score (MCB {_fmt(corp.mcb)} of {_fmt(brier)}); "
               f"discrimination DSC {_fmt(corp.dsc)} against uncertainty {_fmt(corp.unc)}. MCB is "
               f"the score that isotonic recalibration would remove on these data (an "
               f"optimistic, in-sample figure). Lower scores are better.")
    sections.append(ReportSection("scores", "Proper scores (lower is better) and their "
                                  "decomposition", rows, verdict))

    # logistic calibration ------------------------------------------------------------------------
    sections.append(_logistic_section(y_arr, P, common, classes, confidence_level))

    tests = [("SKCE test", sections[3]["SKCE"].pvalue, "kernel", "SKCE"),
             ("ECE consistency test", ece_test.pvalue, "binned", "ECE")]
    lr = _find_row(sections[-1], "likelihood-ratio test")
    if lr is not None:
        tests.append(("logistic calibration test", lr.pvalue, "logistic",
                      "likelihood-ratio test"))
    verdict = _combine_tests(sections, tests, alpha, n)
    data = {"y": y_arr, "probs": P, "classes": np.asarray(classes), "n_bins": n_bins,
            "confidence_level": confidence_level}
    return CalibrationReport(task="classification", sections=sections, verdict=verdict,
                             n_samples=n, name=name, confidence_level=confidence_level,
                             data=data)


#: Above this many samples the kernel section uses the block estimator with blocks of about
#: sqrt(n) samples (O(n^1.5) pair terms, one pass for estimate, p-value and interval) instead of
#: the unbiased U-statistic, whose interval needs all n^2 pairs.
LARGE_N = 20_000


def _kernel_section(y, pred, common, n, confidence_level, n_resamples, random_state, n_jobs):
    alpha = 1.0 - confidence_level
    if n > LARGE_N:
        test = skce_test(y, pred, method="block", block_size="sqrt", random_state=random_state,
                         n_jobs=n_jobs, **common)
        low, high = test.confidence_interval(confidence_level)
        note = "block estimator, blocks of ~sqrt(n); p: block test"
    else:
        test = skce_test(y, pred, n_resamples=n_resamples, random_state=random_state,
                         n_jobs=n_jobs, **common)
        ci = skce_ci(y, pred, confidence_level=confidence_level, random_state=random_state,
                     n_jobs=n_jobs, **common)
        low, high = ci.confidence_interval
        note = f"unbiased estimate; p: {test.method} test"
    # The SKCE is a squared error (>= 0) and its interval is cut at 0; the unbiased estimate can
    # be negative (near calibration, about half of the time). It is shown cut at 0 too, so that
    # the interval contains the number printed beside it, and the note gives its own value.
    estimate = max(float(test.estimate), 0.0)
    if test.estimate < 0:
        note += (f"; unbiased estimate {_fmt(test.estimate)} shown as 0 (the SKCE is >= 0, "
                 f"its interval is cut at 0 alike)")
    rows = [ReportRow("SKCE", estimate, low, high, test.pvalue, note=note)]
    p = _p_phrase(test.pvalue, test.n_resamples)
    if test.pvalue < alpha:
        verdict = (f"Miscalibrated: the SKCE test rejects calibration ({p}, n = {n}); SKCE "
                   f"{_fmt(estimate)} [{_fmt(low)}, {_fmt(high)}].")
        if low <= 0:
            verdict += (" The normal interval is conservative near calibration, so it can "
                        "reach 0 when the test rejects.")
    else:
        verdict = (f"No evidence of miscalibration (SKCE test {p}, n = {n}). A large p-value "
                   f"is not proof of calibration: the SKCE is at most {_fmt(high)} at the "
                   f"{_fmt_level(confidence_level)} level.")
    return ReportSection("kernel", "Kernel calibration test (SKCE)", rows, verdict)


def _logistic_section(y, P, common, classes, confidence_level):
    alpha = 1.0 - confidence_level
    level = _fmt_level(confidence_level)
    title = "Logistic calibration (slope and intercept)"
    if P.shape[1] == 2:
        try:
            res = logistic_calibration(y, P, confidence_level=confidence_level, **common)
        except ValueError as exc:
            return ReportSection("logistic", title, [], f"Not available: {exc}")
        rows = [
            ReportRow("calibration slope", res.slope, *res.slope_ci,
                      note="1 if calibrated; < 1 over-confident"),
            ReportRow("calibration intercept", res.calibration_in_the_large,
                      *res.calibration_in_the_large_ci, note="slope fixed at 1; 0 if calibrated"),
            ReportRow("likelihood-ratio test", res.statistic, pvalue=res.pvalue,
                      note="chi2(2): (intercept, slope) = (0, 1)")]
        return ReportSection("logistic", title, rows,
                             _logistic_verdict([(None, res)], res.pvalue, alpha, level))

    # one-vs-rest, one binary fit per class (as logistic_calibration does), so that a class
    # whose fit does not exist (separated, or absent from y) leaves the others reported
    fits, failed = [], []
    for k, label in enumerate(classes):
        try:
            fits.append((label, logistic_calibration((y == label).astype(int), P[:, k],
                                                     confidence_level=confidence_level)))
        except ValueError as exc:
            failed.append((label, str(exc)))
    if not fits:
        return ReportSection("logistic", title, [],
                             f"Not available for any class: {failed[0][1]}")
    adjusted = _holm([r.pvalue for _, r in fits])
    rows = []
    for (label, r), p_adj in zip(fits, adjusted):
        rows.append(ReportRow(f"slope [{label}]", r.slope, *r.slope_ci, pvalue=p_adj,
                              note="one-vs-rest; p: LR test, Holm"))
    for label, r in fits:
        rows.append(ReportRow(f"intercept [{label}]", r.calibration_in_the_large,
                              *r.calibration_in_the_large_ci, note="slope fixed at 1"))
    best = int(np.argmin(adjusted))
    pvalue = float(adjusted[best])
    rows.append(ReportRow("likelihood-ratio test", fits[best][1].statistic, pvalue=pvalue,
                          note=f"{len(fits)} classes (Holm)"))
    verdict = _logistic_verdict(fits, pvalue, alpha, level)
    if failed:
        verdict += (f" Left out: class{'es' if len(failed) > 1 else ''} "
                    f"{', '.join(str(c) for c, _ in failed)}, whose logistic fit has no finite "
                    f"solution (the predictions separate the class from the others perfectly, "
                    f"or the class is absent).")
    return ReportSection("logistic", title, rows, verdict)


def _logistic_verdict(fits, pvalue, alpha, level):
    """Verdict of the logistic calibration: ``fits`` is ``[(label or None, result)]``."""
    p_text = f"likelihood-ratio test {_p_phrase(pvalue)}"
    if pvalue >= alpha:
        if fits[0][0] is None:
            r = fits[0][1]
            citl = r.calibration_in_the_large_ci
            text = (f"The joint test of slope and intercept does not reject ({p_text}; "
                    f"calibration slope {_fmt_ci(r.slope, r.slope_ci)}, calibration intercept "
                    f"{_fmt_ci(r.calibration_in_the_large, citl)}).")
            # the joint 2-df test can miss a shift that the 1-parameter interval shows
            if citl.low > 0 or citl.high < 0:
                way = "under-predicts" if citl.low > 0 else "over-predicts"
                return (text + f" But the calibration intercept's {level} interval excludes "
                        f"0: on its own it says the model {way} the events on average.")
            if r.slope_ci.low > 1 or r.slope_ci.high < 1:
                way = "under-confident" if r.slope_ci.low > 1 else "over-confident"
                return (text + f" But the calibration slope's {level} interval excludes 1: on "
                        f"its own it says the model is {way}.")
            return (text.replace("The joint test of slope and intercept does not reject",
                                 "No evidence of miscalibration in slope or intercept")
                    + " This is not proof of calibration.")
        return (f"No evidence of miscalibration in slope or intercept for any class "
                f"({p_text}, Holm-adjusted). This is not proof of calibration.")
    over = [(c, r) for c, r in fits if r.slope_ci.high < 1]
    under = [(c, r) for c, r in fits if r.slope_ci.low > 1]
    low_events = [(c, r) for c, r in fits if r.calibration_in_the_large_ci.low > 0]
    high_events = [(c, r) for c, r in fits if r.calibration_in_the_large_ci.high < 0]
    parts = []
    if fits[0][0] is None:  # binary: the numbers themselves
        r = fits[0][1]
        if over:
            parts.append(f"over-confident (calibration slope {_fmt_ci(r.slope, r.slope_ci)})")
        if under:
            parts.append(f"under-confident (calibration slope {_fmt_ci(r.slope, r.slope_ci)})")
        citl = _fmt_ci(r.calibration_in_the_large, r.calibration_in_the_large_ci)
        if low_events:
            parts.append(f"under-predicts the events on average (calibration intercept {citl})")
        if high_events:
            parts.append(f"over-predicts the events on average (calibration intercept {citl})")
    else:  # multiclass: which classes, and the range of their slopes
        def classes_text(group):
            return ", ".join(str(c) for c, _ in group)

        def slopes_text(group):
            if len(group) == 1:
                c, r = group[0]
                return f"class {c}: slope {_fmt_ci(r.slope, r.slope_ci)}"
            slopes = [r.slope for _, r in group]
            return (f"{len(group)} of {len(fits)} classes, slopes {_fmt(min(slopes))} to "
                    f"{_fmt(max(slopes))}")

        if over:
            parts.append(f"over-confident ({slopes_text(over)})")
        if under:
            parts.append(f"under-confident ({slopes_text(under)})")
        if low_events:
            parts.append(f"under-predicts class{'es' if len(low_events) > 1 else ''} "
                         f"{classes_text(low_events)} on average")
        if high_events:
            parts.append(f"over-predicts class{'es' if len(high_events) > 1 else ''} "
                         f"{classes_text(high_events)} on average")
        p_text += ", Holm-adjusted"
    if parts:
        return f"Miscalibrated: the model is {_join(parts)}; {p_text}."
    return (f"Miscalibrated: the logistic recalibration model departs from (intercept, slope) = "
            f"(0, 1) ({p_text}), although no {level} interval alone excludes its calibrated "
            f"value.")


def _holm(pvalues):
    """Holm's step-down adjusted p-values, in the input order."""
    return adjust_pvalues(pvalues, method="holm")


def _fmt_ci(value, ci):
    return f"{_fmt(value)} [{_fmt(ci.low)}, {_fmt(ci.high)}]"


# ------------------------------------------------------------------------------------------
# regression


def _regression_report(predictions, y, name, *, n_bins, confidence_level, n_resamples,
                       random_state, n_jobs):
    from scipy.stats import binomtest, norm

    if isinstance(predictions, Categorical):
        raise TypeError("task='regression' needs a predictive distribution of real targets; "
                        "got a Categorical (use task='classification').")
    dist, _ = as_distribution(predictions, name="estimator_or_predictions")
    y_arr = check_targets(y, dist, name="y")
    n = dist.n_samples
    _check_n_samples(n)
    alpha = 1.0 - confidence_level
    z = float(norm.ppf(1 - alpha / 2))
    univariate = dist.dim is None
    sections = [_kernel_section(y_arr, dist, {}, n, confidence_level, n_resamples, random_state,
                                n_jobs)]

    # proper scores -----------------------------------------------------------------------------
    # a score that the metric refuses (point predictions have no density; a value beyond the
    # float range) is shown as n/a with the metric's reason, never as inf
    try:
        rows = [ReportRow("NLL", nll(y_arr, dist), note="mean negative log density")]
    except ValueError as exc:
        rows = [ReportRow("NLL", None, note=f"n/a: {exc}")]
    if univariate:
        try:
            scores = crps(y_arr, dist, reduction="none")
        except ValueError as exc:
            rows.append(ReportRow("CRPS", None, note=f"n/a: {exc}"))
        else:
            top = float(np.max(np.abs(scores))) or 1.0  # mean and spread in units of the largest
            mean = float(np.mean(scores / top)) * top
            half = z * float(np.std(scores / top, ddof=1)) / math.sqrt(n) * top
            low, high = (mean - half, mean + half) if math.isfinite(half) else (None, None)
            rows.append(ReportRow("CRPS", crps(y_arr, dist), low, high,
                                  note="mean; normal interval"))
    verdict = ("Lower is better; the scores compare models on the same data and mix "
               "calibration with sharpness, so they are no test of calibration.")
    sections.append(ReportSection("scores", "Proper scores", rows, verdict))
    tests = [("SKCE test", sections[0]["SKCE"].pvalue, "kernel", "SKCE")]

    if univariate:
        # PIT -------------------------------------------------------------------------------------
        u = pit(y_arr, dist)
        ks = pit_test(y_arr, dist, method="ks")
        mean_pit = float(np.mean(u))
        z_mean = (mean_pit - 0.5) / math.sqrt(1.0 / (12.0 * n))
        p_mean = float(2 * norm.sf(abs(z_mean)))
        tails = float(np.mean((u < 0.05) | (u > 0.95)))
        rows = [ReportRow("KS statistic", ks.statistic, pvalue=ks.pvalue,
                          note="Kolmogorov-Smirnov test of uniformity"),
                ReportRow("mean PIT", mean_pit, pvalue=p_mean,
                          note="0.5 if calibrated"),
                ReportRow("PIT in outer 10%", tails,
                          note="below 0.05 or above 0.95; 0.1 if calibrated")]
        if ks.pvalue < alpha:
            verdict = (f"Miscalibrated: the PIT values are not uniform (KS test "
                       f"{_p_phrase(ks.pvalue)}, n = {n}).")
            if tails > 0.1 and p_mean >= alpha:
                verdict += (f" {_pct(tails)} of them fall in the outer 10%: the predictive "
                            f"distributions are too narrow (over-confident).")
            elif tails < 0.1 and p_mean >= alpha:
                verdict += (f" Only {_pct(tails)} of them fall in the outer 10%: the predictive "
                            f"distributions are too wide (under-confident).")
        else:
            verdict = (f"No evidence of non-uniform PIT values (KS test {_p_phrase(ks.pvalue)}, "
                       f"n = {n}); this is not proof of calibration.")
        if p_mean < alpha:
            side = "above" if mean_pit > 0.5 else "below"
            verdict += (f" The targets tend to fall {side} the predicted medians (mean PIT "
                        f"{_fmt(mean_pit)}, {_p_phrase(p_mean)}): the predictions are biased "
                        f"{'low' if mean_pit > 0.5 else 'high'}.")
        sections.append(ReportSection("pit", "Probability integral transform (PIT)", rows,
                                      verdict))
        tests.append(("PIT test", ks.pvalue, "pit", "KS statistic"))

        # coverage ------------------------------------------------------------------------------
        coverage = np.atleast_1d(interval_coverage(y_arr, dist, levels=COVERAGE_LEVELS))
        m = len(COVERAGE_LEVELS)
        rows, narrow, wide, adjusted = [], [], [], []
        for lev, cov in zip(COVERAGE_LEVELS, coverage):
            k = int(round(cov * n))
            bt = binomtest(k, n, p=lev)
            ci = bt.proportion_ci(confidence_level, method="exact")
            rows.append(ReportRow(f"coverage {_pct(lev)}", cov, ci.low, ci.high, bt.pvalue,
                                  note="p: binomial test"))
            p_adj = min(1.0, m * bt.pvalue)  # Bonferroni over the levels
            adjusted.append(p_adj)
            if p_adj < alpha:
                (narrow if cov < lev else wide).append((lev, cov, ci, p_adj))

        def cite(flagged):  # the clearest level; the 90% interval among equals
            lev, cov, ci, _ = min(flagged, key=lambda t: (t[3], abs(t[0] - 0.9)))
            return (f"the central {_pct(lev)} intervals cover {_pct(cov)} [{_pct(ci.low)}, "
                    f"{_pct(ci.high)}] of the targets")

        if narrow and not wide:
            verdict = f"Intervals too narrow (over-confident): {cite(narrow)}."
        elif wide and not narrow:
            verdict = f"Intervals too wide (under-confident): {cite(wide)}."
        elif narrow and wide:
            verdict = ("Miscalibrated intervals: some levels cover too few targets ("
                       + ", ".join(_pct(t[0]) for t in narrow) + "), others too many ("
                       + ", ".join(_pct(t[0]) for t in wide) + ").")
        else:
            verdict = (f"Coverage consistent with the nominal levels (binomial tests at "
                       f"{', '.join(_pct(v) for v in COVERAGE_LEVELS)}, Bonferroni-adjusted: "
                       f"all p >= {_fmt(alpha)}).")
        tests.append(("coverage test", min(adjusted), "coverage", None))
        sections.append(ReportSection("coverage", "Interval coverage", rows, verdict))

        # quantile calibration -----------------------------------------------------------------
        qce = quantile_calibration_error(y_arr, dist)
        area = miscalibration_area(y_arr, dist)
        rows = [ReportRow("quantile calibration error", qce,
                          note="99 quantile levels"),
                ReportRow("miscalibration area", area,
                          note="area to the diagonal")]
        verdict = (f"The observed proportions below the predicted quantiles differ from the "
                   f"nominal ones by {_fmt(qce)} on average (miscalibration area "
                   f"{_fmt(area)}); descriptive: the PIT test says whether this exceeds the "
                   f"noise.")
        sections.append(ReportSection("quantile", "Quantile calibration", rows, verdict))

    verdict = _combine_tests(sections, tests, alpha, n)
    if not univariate:
        verdict += (" PIT, coverage and quantile calibration are defined for univariate "
                    "predictions only and are left out.")
    data = {"y": y_arr, "y_pred": dist, "n_bins": n_bins, "confidence_level": confidence_level,
            "univariate": univariate}
    return CalibrationReport(task="regression", sections=sections, verdict=verdict,
                             n_samples=n, name=name, confidence_level=confidence_level,
                             data=data)


# ------------------------------------------------------------------------------------------
# plots


def _plot_classification(figure, data, name):
    from .plotting import ReliabilityDisplay, SmoothReliabilityDisplay

    y, P, classes = data["y"], data["probs"], data["classes"]
    ax1, ax2 = figure.subplots(1, 2)
    reliability = ReliabilityDisplay.from_predictions(
        y, P, labels=classes, n_bins=data["n_bins"], band="clopper-pearson",
        confidence_level=data["confidence_level"], name=name, ax=ax1)
    mode = reliability.curves[0].mode  # (spelled as mode= accepts it)
    ax1.set_title(f'Reliability diagram (mode="{mode}", {data["n_bins"]} bins)')
    smooth = SmoothReliabilityDisplay.from_predictions(y, P, labels=classes, name=name, ax=ax2)
    ax2.set_title("Smooth reliability diagram")
    return [reliability, smooth]


def _plot_regression(figure, data, name):
    y, dist = data["y"], data["y_pred"]
    if not data["univariate"]:
        ax = figure.subplots(1, 1)
        ax.text(0.5, 0.5, "PIT, quantile and coverage plots need univariate predictions",
                ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return []
    from .plotting import IntervalCoverageDisplay, PITHistogramDisplay, QuantileCalibrationDisplay

    ax1, ax2, ax3 = figure.subplots(1, 3)
    bins = int(min(20, max(5, len(y) // 10)))
    pit_display = PITHistogramDisplay.from_predictions(
        y, dist, bins=bins, confidence_level=data["confidence_level"], name=name, ax=ax1)
    ax1.set_title("PIT histogram")
    quantile = QuantileCalibrationDisplay.from_predictions(y, dist, name=name, ax=ax2)
    ax2.set_title("Quantile calibration")
    coverage = IntervalCoverageDisplay.from_predictions(
        y, dist, confidence_level=data["confidence_level"], name=name, ax=ax3)
    ax3.set_title("Interval coverage")
    return [pit_display, quantile, coverage]


# ------------------------------------------------------------------------------------------
# helpers


def _is_estimator(obj):
    if obj is None or is_distribution(obj) or isinstance(obj, (np.ndarray, list, tuple)):
        return False
    if hasattr(obj, "__array__") or hasattr(obj, "iloc"):  # DataFrame, Series, array-likes
        return False
    if hasattr(obj, "predict_proba") or hasattr(obj, "predict") or hasattr(
            obj, "predict_distribution"):
        return True
    raise TypeError("estimator_or_predictions must be a fitted estimator (with predict_proba or "
                    "predict), class probabilities or a skcalib distribution; got "
                    f"{type(obj).__name__}.")


def _check_n_samples(n):
    if n < MIN_SAMPLES:
        raise ValueError(f"a calibration report needs at least {MIN_SAMPLES} samples (the SKCE "
                         f"interval's variance needs 3); got {n}.")


def _estimator_name(estimator):
    steps = getattr(estimator, "steps", None)
    if steps:
        estimator = steps[-1][1]
    return type(estimator).__name__


def _find_row(section, metric):
    for row in section.rows:
        if row.metric == metric:
            return row
    return None


def _combine_tests(sections, tests, alpha, n):
    """The overall verdict from ``tests`` (``[(name, pvalue, section key, metric or None)]``),
    and each test's Holm-adjusted p-value written into its section (the row's note and the
    verdict), so that a section and the overall verdict tell one story: a section whose test
    rejects on its own but not after the adjustment says so, and why the overall verdict leaves
    it out."""
    m = len(tests)
    if m > 1:
        adjusted = _holm([t[1] for t in tests])
        by_key = {section.key: section for section in sections}
        for (name, p, key, metric), a in zip(tests, adjusted):
            section = by_key[key]
            row = _find_row(section, metric) if metric is not None else None
            if row is not None:
                row.note += f"; Holm-adjusted over {m} tests: {_fmt_p(a)}"
            adjusted_text = f"Adjusted for the report's {m} tests (Holm), {_p_phrase(a)}"
            if p < alpha <= a:
                if section.verdict.startswith("Miscalibrated:"):
                    section.verdict = ("Miscalibrated on this test alone:"
                                       + section.verdict[len("Miscalibrated:"):])
                section.verdict += (f" {adjusted_text}, not below {_fmt(alpha)}: with {m} "
                                    f"tests a p-value this small is expected by chance more "
                                    f"often than {_fmt(alpha)}, so the overall "
                                    f"verdict does not count this one.")
            elif p < alpha:
                section.verdict += f" {adjusted_text}: still below {_fmt(alpha)}."
    return _overall_verdict([(t[0], t[1]) for t in tests], alpha, n)


def _overall_verdict(tests, alpha, n):
    """The report's first sentence. The sections' tests are combined by Holm's step-down
    adjustment, so that a calibrated model gets "evidence of miscalibration" with probability
    at most ``alpha`` (each test alone is at level ``alpha``: without the adjustment three tests
    would give about 10 % false alarms at ``alpha = 0.05``)."""
    adjusted = _holm([p for _, p in tests])
    m = len(tests)
    rejecting = [(name, p, a) for (name, p), a in zip(tests, adjusted) if a < alpha]
    listed = ", ".join(f"{name} {_p_phrase(p)}" for name, p in tests)
    holm = f"Holm-adjusted over the report's {m} tests" if m > 1 else "one test"
    if rejecting:
        which = _join([f"the {name} ({_p_phrase(p)}, adjusted {_p_phrase(a)[2:]})"
                       for name, p, a in rejecting])
        verb = "rejects" if len(rejecting) == 1 else "reject"
        return (f"Evidence of miscalibration at level {_fmt(alpha)} ({holm}): {which} {verb} "
                f"calibration (n = {n}). Recalibration (skcalib.recalibration) may help; "
                f"see the sections for the direction.")
    alone = [name for name, p in tests if p < alpha]
    caveat = ""
    if alone:
        caveat = (f" On its own the {_join(alone)} would reject at {_fmt(alpha)}; with "
                  f"{m} tests such a result is expected by chance more often than "
                  f"{_fmt(alpha)}.")
    return (f"No evidence of miscalibration at level {_fmt(alpha)} ({holm}; {listed}; "
            f"n = {n}).{caveat} A large p-value is not proof of calibration: small samples "
            f"rarely reject.")


def _join(items):
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _float_or_none(x):
    if x is None:
        return None
    return float(x)


def _nan_if_none(x):
    return np.nan if x is None else x


def _fmt(x):
    """Compact number: 3 significant digits, scientific outside [1e-3, 1e5)."""
    if x is None:
        return ""
    x = float(x)
    if x == 0 or not np.isfinite(x):
        return f"{x:g}"
    if float(x).is_integer() and abs(x) < 1e9:
        return str(int(x))
    if 1e3 <= abs(x) < 1e5:
        return f"{x:.0f}"
    if 1e-3 <= abs(x) < 1e3:
        return f"{x:.3g}"
    return f"{x:.3g}"


def _fmt_p(p):
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _p_phrase(p, n_resamples=None):
    if p < 0.001:
        text = "p < 0.001"
    else:
        text = f"p = {p:.2g}" if p < 0.1 else f"p = {p:.2f}"
    if n_resamples is not None and p <= 1.0 / (1 + n_resamples) + 1e-12:
        text += f", the smallest {n_resamples} resamples can give"
    return text


def _pct(x):
    value = 100 * float(x)
    return f"{value:.0f}%" if abs(value - round(value)) < 0.05 else f"{value:.1f}%"


def _fmt_level(confidence_level):
    return _pct(confidence_level)
