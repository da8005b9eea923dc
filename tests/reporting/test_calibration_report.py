"""calibration_report: every number equals the function it comes from, the verdicts follow the
data, and the report converts (str, HTML, dict, DataFrame) and draws (plot) what it holds."""

import html
import io
import json
import math
import sys
import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy.stats import binomtest, norm  # noqa: E402
from sklearn.linear_model import BayesianRidge, LogisticRegression  # noqa: E402

import skcalib  # noqa: E402
from skcalib import (  # noqa: E402
    brier_score,
    calibration_error,
    calibration_report,
    corp_decomposition,
    crps,
    integrated_calibration_index,
    interval_coverage,
    log_score,
    miscalibration_area,
    nll,
    pit,
    quantile_calibration_curve,
    quantile_calibration_error,
    reliability_curve,
    smooth_ece,
    smooth_reliability_curve,
)
from skcalib.distributions import Categorical, Normal  # noqa: E402
from skcalib.reporting import CalibrationReport  # noqa: E402
from skcalib.scorers import predict_distribution  # noqa: E402
from skcalib.stats import (  # noqa: E402
    consistency_test,
    logistic_calibration,
    pit_test,
    skce_ci,
    skce_test,
)

B = 100  # resamples of the tests in this file (fast; the numbers are compared, not their power)
SEED = 3


def _binary(n, slope, seed):
    rng = np.random.default_rng(seed)
    z = rng.normal(scale=1.5, size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    return y, 1 / (1 + np.exp(-slope * z))


@pytest.fixture(scope="module")
def calibrated():
    y, p = _binary(400, 1.0, 0)
    return y, p, calibration_report(p, y=y, n_resamples=B, random_state=SEED)


@pytest.fixture(scope="module")
def overconfident():
    y, p = _binary(400, 2.5, 1)
    return y, p, calibration_report(p, y=y, n_resamples=B, random_state=SEED)


@pytest.fixture(scope="module")
def multiclass():
    rng = np.random.default_rng(2)
    P = rng.dirichlet([1.0, 1.0, 1.0], size=300)
    y = np.array(["a", "b", "c"])[(rng.random((300, 1)) > P.cumsum(axis=1)).sum(axis=1)]
    return y, P, calibration_report(P, y=y, n_resamples=B, random_state=SEED)


def _regression(n, scale, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    return y, Normal(mu - shift, np.full(n, scale))


@pytest.fixture(scope="module")
def regression():
    y, dist = _regression(300, 1.0, 4)
    return y, dist, calibration_report(dist, y=y, n_resamples=B, random_state=SEED)


@pytest.fixture(scope="module")
def narrow():
    y, dist = _regression(300, 0.5, 5)
    return y, dist, calibration_report(dist, y=y, n_resamples=B, random_state=SEED)


# ------------------------------------------------------------------------------------------
# every number equals its function


def test_classification_numbers_equal_their_functions(calibrated):
    y, p, report = calibrated
    alpha = 0.05
    assert report.task == "classification" and report.n_samples == 400
    assert [s.key for s in report.sections] == ["accuracy", "binned", "smooth", "kernel",
                                                 "scores", "logistic"]
    acc = report["accuracy"]
    accuracy = np.mean((p > 0.5) == (y == 1))
    ci = binomtest(int(round(accuracy * 400)), 400).proportion_ci(0.95, method="exact")
    assert acc["accuracy"].value == pytest.approx(accuracy, abs=1e-15)
    assert (acc["accuracy"].lower, acc["accuracy"].upper) == (ci.low, ci.high)
    assert acc["mean confidence"].value == pytest.approx(np.mean(np.maximum(p, 1 - p)))

    binned = report["binned"]
    assert binned["ECE"].value == calibration_error(y, p, n_bins=15)
    ct = consistency_test(calibration_error, y, p, n_resamples=B, random_state=SEED,
                          metric_kwargs={"n_bins": 15})
    assert binned["ECE"].pvalue == ct.pvalue
    assert binned["ECE if calibrated"].value == pytest.approx(np.mean(ct.null_distribution))
    lo, hi = np.quantile(ct.null_distribution, [alpha / 2, 1 - alpha / 2])
    assert (binned["ECE if calibrated"].lower, binned["ECE if calibrated"].upper) == (lo, hi)
    assert binned["MCE"].value == calibration_error(y, p, n_bins=15, norm="max")
    # the worst bin, found by brute force over 15 right-closed equal-width bins
    bins = np.maximum(np.ceil(p * 15).astype(int), 1)
    gaps = {b: abs(np.mean(y[bins == b]) - np.mean(p[bins == b])) for b in np.unique(bins)}
    worst = max(gaps, key=gaps.get)
    assert binned["MCE"].value == pytest.approx(gaps[worst])
    assert binned["MCE bin size"].value == np.sum(bins == worst)
    assert binned["bins used"].value == len(gaps)
    with pytest.raises(KeyError, match="class-wise ECE"):
        binned["class-wise ECE"]  # binary: no class-wise row

    smooth = report["smooth"]
    assert smooth["smECE"].value == smooth_ece(y, p)
    assert smooth["ICI"].value == integrated_calibration_index(y, p)

    kernel = report["kernel"]["SKCE"]
    test = skce_test(y, p, n_resamples=B, random_state=SEED)
    interval = skce_ci(y, p, random_state=SEED)
    assert (kernel.value, kernel.pvalue) == (max(test.estimate, 0.0), test.pvalue)  # cut at 0 like its interval
    assert (kernel.lower, kernel.upper) == tuple(interval.confidence_interval)

    scores = report["scores"]
    corp = corp_decomposition(y, p)
    corp_log = corp_decomposition(y, p, score="log")
    assert scores["Brier score"].value == pytest.approx(brier_score(y, p), abs=1e-15)
    assert scores["Brier miscalibration"].value == pytest.approx(corp.mcb, abs=1e-15)
    assert scores["Brier discrimination"].value == pytest.approx(corp.dsc, abs=1e-15)
    assert scores["Brier uncertainty"].value == pytest.approx(corp.unc, abs=1e-15)
    assert scores["log loss"].value == pytest.approx(log_score(y, p), abs=1e-14)
    assert scores["log loss miscalibration"].value == pytest.approx(corp_log.mcb, abs=1e-14)
    assert scores["log loss discrimination"].value == pytest.approx(corp_log.dsc, abs=1e-14)

    logistic = report["logistic"]
    lc = logistic_calibration(y, p)
    assert logistic["calibration slope"].value == pytest.approx(lc.slope, rel=1e-12)
    assert logistic["calibration slope"].lower == pytest.approx(lc.slope_ci.low, rel=1e-12)
    assert logistic["calibration slope"].upper == pytest.approx(lc.slope_ci.high, rel=1e-12)
    assert logistic["calibration intercept"].value == pytest.approx(
        lc.calibration_in_the_large, abs=1e-12)
    assert logistic["likelihood-ratio test"].pvalue == pytest.approx(lc.pvalue, rel=1e-9)


def test_multiclass_numbers_equal_their_functions(multiclass):
    y, P, report = multiclass
    binned = report["binned"]
    assert binned["ECE"].value == calibration_error(y, P, n_bins=15)
    assert binned["class-wise ECE"].value == calibration_error(y, P, n_bins=15,
                                                               mode="classwise")
    curve = reliability_curve(y, P, n_bins=15)
    worst = np.argmax(np.abs(curve.prob_true - curve.prob_pred))
    assert binned["MCE bin size"].value == curve.counts[worst]
    assert report["smooth"]["smECE"].value == smooth_ece(y, P)
    assert report["kernel"]["SKCE"].pvalue == skce_test(y, P, n_resamples=B,
                                                        random_state=SEED).pvalue
    assert report["scores"]["Brier miscalibration"].value == pytest.approx(
        corp_decomposition(y, P).mcb, abs=1e-15)
    with pytest.raises(KeyError):
        report["scores"]["log loss miscalibration"]  # multiclass log scores do not decompose
    ovr = logistic_calibration(y, P)
    logistic = report["logistic"]
    for k, label in enumerate("abc"):
        row = logistic[f"slope [{label}]"]
        assert row.value == pytest.approx(ovr.per_class[k].slope, rel=1e-12)
        assert row.pvalue == pytest.approx(ovr.pvalues_adjusted[k], rel=1e-9)
        assert logistic[f"intercept [{label}]"].lower == pytest.approx(
            ovr.per_class[k].calibration_in_the_large_ci.low, abs=1e-12)
    assert logistic["likelihood-ratio test"].pvalue == pytest.approx(ovr.pvalue, rel=1e-9)


def test_a_separated_class_is_left_out_of_the_logistic_section():
    rng = np.random.default_rng(18)
    y = rng.integers(0, 3, size=200)
    P = np.zeros((200, 3))
    P[y == 2, 2] = 0.9  # class 2 perfectly separated: no finite slope
    P[y == 2, :2] = 0.05
    rest = y != 2
    P[rest, :2] = rng.dirichlet([2.0, 2.0], size=rest.sum()) * 0.9
    P[rest, 2] = 0.1
    report = calibration_report(P, y=y, n_resamples=B, random_state=SEED)
    logistic = report["logistic"]
    assert "Left out: class 2, whose logistic fit has no finite solution" in logistic.verdict
    with pytest.raises(KeyError):
        logistic["slope [2]"]
    with pytest.raises(ValueError):
        logistic_calibration(y, P)  # the one-vs-rest call fails as a whole
    fits = [logistic_calibration((y == k).astype(int), P[:, k]) for k in (0, 1)]
    raw = sorted(f.pvalue for f in fits)
    holm = np.maximum.accumulate([min(1, 2 * raw[0]), min(1, raw[1])])
    for k, fit in enumerate(fits):
        row = logistic[f"slope [{k}]"]
        assert row.value == fit.slope and (row.lower, row.upper) == tuple(fit.slope_ci)
        assert row.pvalue == pytest.approx(holm[int(fit.pvalue != raw[0])])
    assert logistic["likelihood-ratio test"].pvalue == pytest.approx(holm[0])
    assert logistic["likelihood-ratio test"].note.startswith("2 classes (Holm)")


def test_regression_numbers_equal_their_functions(regression):
    y, dist, report = regression
    assert report.task == "regression"
    assert [s.key for s in report.sections] == ["kernel", "scores", "pit", "coverage",
                                                 "quantile"]
    test = skce_test(y, dist, n_resamples=B, random_state=SEED)
    row = report["kernel"]["SKCE"]
    assert (row.value, row.pvalue) == (max(test.estimate, 0.0), test.pvalue)
    assert (row.lower, row.upper) == tuple(skce_ci(y, dist, random_state=SEED))
    assert report["scores"]["NLL"].value == nll(y, dist)
    per_sample = crps(y, dist, reduction="none")
    half = norm.ppf(0.975) * per_sample.std(ddof=1) / math.sqrt(300)
    row = report["scores"]["CRPS"]
    assert row.value == crps(y, dist)
    assert (row.lower, row.upper) == pytest.approx((per_sample.mean() - half,
                                                    per_sample.mean() + half))
    ks = pit_test(y, dist)
    u = pit(y, dist)
    assert (report["pit"]["KS statistic"].value, report["pit"]["KS statistic"].pvalue) == (
        ks.statistic, ks.pvalue)
    mean_row = report["pit"]["mean PIT"]
    assert mean_row.value == pytest.approx(u.mean())
    assert mean_row.pvalue == pytest.approx(2 * norm.sf(abs(u.mean() - 0.5) * math.sqrt(12 * 300)))
    assert report["pit"]["PIT in outer 10%"].value == np.mean((u < 0.05) | (u > 0.95))
    coverage = interval_coverage(y, dist, levels=(0.5, 0.8, 0.9, 0.95))
    for level, cov in zip((50, 80, 90, 95), coverage):
        row = report["coverage"][f"coverage {level}%"]
        inside = int(np.sum(np.abs(2 * u - 1) <= level / 100))  # independent count
        bt = binomtest(inside, 300, p=level / 100)
        assert row.value == cov == inside / 300
        assert row.pvalue == bt.pvalue
        assert (row.lower, row.upper) == tuple(bt.proportion_ci(0.95, method="exact"))
    assert report["quantile"]["quantile calibration error"].value == \
        quantile_calibration_error(y, dist)
    assert report["quantile"]["miscalibration area"].value == miscalibration_area(y, dist)


# ------------------------------------------------------------------------------------------
# verdicts follow the data


def test_verdicts_of_a_calibrated_classifier(calibrated):
    _, _, report = calibrated
    assert report.verdict.startswith("No evidence of miscalibration at level 0.05")
    assert "not proof of calibration" in report.verdict
    p = report["kernel"]["SKCE"].pvalue
    assert p >= 0.05
    assert report["kernel"].verdict.startswith(
        f"No evidence of miscalibration (SKCE test p = {p:.2f}, n = 400).")
    assert report["binned"].verdict.startswith("No evidence of miscalibration")
    assert report["logistic"].verdict.startswith("No evidence of miscalibration")


def test_verdicts_of_an_overconfident_classifier(overconfident):
    _, _, report = overconfident
    assert report.verdict.startswith("Evidence of miscalibration at level 0.05")
    assert report["kernel"]["SKCE"].pvalue == 1 / (1 + B)  # the smallest B resamples give
    assert "the SKCE test (p = 0.0099, adjusted = 0.02)" in report.verdict
    assert report["kernel"].verdict.startswith("Miscalibrated: the SKCE test rejects")
    slope = report["logistic"]["calibration slope"]
    assert slope.upper < 1
    assert report["logistic"].verdict.startswith(
        f"Miscalibrated: the model is over-confident (calibration slope {slope.value:.3g} "
        f"[{slope.lower:.3g}, {slope.upper:.3g}]")
    assert report["accuracy"].verdict.startswith("Over-confident on average")
    assert report["binned"].verdict.startswith("Miscalibrated: the ECE of")


def test_under_confident_and_biased_classifiers_are_named():
    y, p = _binary(400, 0.4, 6)
    report = calibration_report(p, y=y, n_resamples=B, random_state=SEED)
    assert "under-confident (calibration slope" in report["logistic"].verdict
    assert report["accuracy"].verdict.startswith("Under-confident on average")
    # events under-predicted: shift the logits down
    rng = np.random.default_rng(7)
    z = rng.normal(size=400)
    y = (rng.random(400) < 1 / (1 + np.exp(-z))).astype(int)
    low = 1 / (1 + np.exp(-(z - 1.0)))
    report = calibration_report(low, y=y, n_resamples=B, random_state=SEED)
    assert "under-predicts the events on average" in report["logistic"].verdict


def test_a_worst_bin_of_one_sample_is_flagged():
    rng = np.random.default_rng(8)
    p = rng.uniform(0.2, 0.6, size=300)
    y = (rng.random(300) < p).astype(int)
    p[0], y[0] = 0.97, 0  # one lone, wrong, confident prediction in the top bin
    report = calibration_report(p, y=y, n_resamples=B, random_state=SEED)
    binned = report["binned"]
    assert binned["MCE"].value == pytest.approx(0.97)
    assert binned["MCE bin size"].value == 1
    assert "too few to read" in binned["MCE bin size"].note
    assert "comes from a bin of 1 sample: too few to read" in binned.verdict


def test_regression_verdicts(regression, narrow):
    _, _, ok = regression
    assert ok.verdict.startswith("No evidence of miscalibration")
    assert ok["coverage"].verdict.startswith("Coverage consistent with the nominal levels")
    assert ok["pit"].verdict.startswith("No evidence of non-uniform PIT values")
    _, _, bad = narrow
    assert bad.verdict.startswith("Evidence of miscalibration")
    assert "the PIT test (p < 0.001, adjusted < 0.001)" in bad.verdict
    assert "the coverage test (p < 0.001, adjusted < 0.001)" in bad.verdict  # Bonferroni over the four levels
    assert bad["coverage"].verdict.startswith("Intervals too narrow (over-confident)")
    assert "too narrow (over-confident)" in bad["pit"].verdict
    y, wide = _regression(300, 2.5, 9)
    report = calibration_report(wide, y=y, n_resamples=B, random_state=SEED)
    assert report["coverage"].verdict.startswith("Intervals too wide (under-confident)")
    assert "too wide (under-confident)" in report["pit"].verdict
    y, biased = _regression(300, 1.0, 10, shift=0.6)
    report = calibration_report(biased, y=y, n_resamples=B, random_state=SEED)
    assert "the predictions are biased low" in report["pit"].verdict


# ------------------------------------------------------------------------------------------
# inputs: estimators and predictions give the same report


def _numbers(report):
    d = report.to_dict()
    d.pop("name")
    return d


def test_estimator_and_predictions_give_the_same_report():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 3))
    y = np.where(rng.random(300) < 1 / (1 + np.exp(-X @ [1.0, -1.0, 0.5])), "yes", "no")
    clf = LogisticRegression().fit(X, y)
    from_model = calibration_report(clf, X, y, n_resamples=B, random_state=SEED)
    assert from_model.name == "LogisticRegression"
    P = clf.predict_proba(X)
    from_proba = calibration_report(P, y=y, n_resamples=B, random_state=SEED)
    assert from_proba.name == "predictions"
    assert _numbers(from_model) == _numbers(from_proba)
    # one column P(positive) and a Categorical give the same numbers as two columns
    assert _numbers(calibration_report(P[:, 1], y=y, n_resamples=B, random_state=SEED)) == \
        _numbers(from_proba)
    cat = Categorical(P, classes=clf.classes_)
    assert _numbers(calibration_report(cat, y=y, n_resamples=B, random_state=SEED)) == \
        _numbers(from_proba)

    t = X @ [1.0, 2.0, 0.0] + rng.normal(size=300)
    reg = BayesianRidge().fit(X, t)
    from_model = calibration_report(reg, X, t, n_resamples=B, random_state=SEED, name="BR")
    assert from_model.name == "BR" and from_model.task == "regression"
    dist = predict_distribution(reg, X)
    assert _numbers(from_model) == _numbers(
        calibration_report(dist, y=t, n_resamples=B, random_state=SEED))
    mean_std = np.column_stack([dist.loc, dist.scale])
    assert _numbers(from_model) == _numbers(calibration_report(
        mean_std, y=t, task="regression", n_resamples=B, random_state=SEED))


def test_an_n_by_2_array_is_binary_unless_task_is_regression():
    rng = np.random.default_rng(12)
    P = rng.dirichlet([1.0, 1.0], size=50)
    y = (rng.random(50) < P[:, 1]).astype(int)
    assert calibration_report(P, y=y, n_resamples=B).task == "classification"
    report = calibration_report(P, y=y.astype(float), task="regression", n_resamples=B)
    assert report.task == "regression"
    assert report["scores"]["NLL"].value == nll(y.astype(float), Normal(P[:, 0], P[:, 1]))


def test_inputs_are_not_mutated_and_reports_are_reproducible():
    y, p = _binary(200, 1.0, 13)
    y0, p0 = y.copy(), p.copy()
    a = calibration_report(p, y=y, n_resamples=B, random_state=5)
    b = calibration_report(p, y=y, n_resamples=B, random_state=5)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(p, p0)
    assert a.to_dict() == b.to_dict()
    c = calibration_report(p, y=y, n_resamples=B, random_state=6)
    assert c["kernel"]["SKCE"].pvalue != a["kernel"]["SKCE"].pvalue or \
        c["binned"]["ECE"].pvalue != a["binned"]["ECE"].pvalue


# ------------------------------------------------------------------------------------------
# conversions


def test_to_dict_and_to_frame(multiclass):
    _, _, report = multiclass
    d = report.to_dict()
    assert json.loads(json.dumps(d)) == d  # plain, JSON-serialisable values
    assert d["verdict"] == report.verdict and d["n_samples"] == 300
    assert [s["key"] for s in d["sections"]] == [s.key for s in report.sections]
    assert d["sections"][3]["rows"][0] == report["kernel"]["SKCE"].to_dict()
    frame = report.to_frame()
    assert list(frame.columns) == ["section", "metric", "value", "lower", "upper", "pvalue",
                                   "note"]
    assert len(frame) == sum(len(s) for s in report.sections)
    for section in report.sections:
        for row in section:
            rec = frame[(frame.section == section.key) & (frame.metric == row.metric)]
            assert len(rec) == 1
            for col in ("value", "lower", "upper", "pvalue"):
                got, want = rec[col].iloc[0], getattr(row, col)
                assert (math.isnan(got) and want is None) or got == want


def test_to_frame_without_pandas_says_how_to_install(calibrated, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        calibrated[2].to_frame()


def test_str_is_an_aligned_table_with_the_verdicts(multiclass):
    _, _, report = multiclass
    text = str(report)
    lines = text.splitlines()
    assert lines[0] == ("Calibration report for predictions: classification, 300 samples, "
                        "3 classes")
    assert "Verdict: " + report.verdict[:40] in text
    for section in report.sections:
        start = lines.index(section.title)
        header = lines[start + 2]
        value_end = header.index("value") + len("value")
        pvalue_end = header.index("p-value") + len("p-value")
        for k, row in enumerate(section.rows):
            line = lines[start + 3 + k]
            assert line.startswith("  " + row.metric + " ")
            value = line[:value_end].split()[-1]  # right-aligned under "value"
            assert float(value) == pytest.approx(row.value, rel=5e-3, abs=1e-12)
            if row.pvalue is not None:
                cell = line[:pvalue_end].split()[-1]
                assert cell == ("<0.001" if row.pvalue < 0.001 else f"{row.pvalue:.3f}")
        first_verdict_line = lines[start + 3 + len(section.rows)]
        assert first_verdict_line.startswith("  => " + section.verdict.split()[0])
    assert max(len(line) for line in lines if not line.startswith("  ")) <= 92


def test_html_is_self_contained(overconfident):
    _, _, report = overconfident
    page = report.to_html()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "http://" not in page and "https://" not in page and "<script" not in page
    for section in report.sections:
        assert f"<h4>{html.escape(section.title)}</h4>" in page  # (mode="...": quotes)
        for row in section:
            assert f">{row.metric}</td>" in page
    assert report["kernel"].verdict.replace("=", "=")[:30] in page
    fragment = report._repr_html_()
    assert "<html" not in fragment and fragment.startswith("<style>.skcalib-report")
    assert fragment in page
    # p-values below alpha are highlighted, the others not
    rows = [row for section in report.sections for row in section]
    assert page.count('<td class="small">') >= 3  # SKCE, ECE and likelihood-ratio tests
    assert page.count('<td class="small">') == sum(
        row.pvalue is not None and row.pvalue < 0.05 for row in rows)
    with_plot = report.to_html(include_plot=True)
    assert with_plot.count('src="data:image/png;base64,') == 1
    assert "http://" not in with_plot and "https://" not in with_plot
    plt.close("all")
    # names are escaped
    y, p = _binary(60, 1.0, 14)
    named = calibration_report(p, y=y, n_resamples=B, name="<b>&model")
    assert "&lt;b&gt;&amp;model" in named.to_html() and "<b>&model" not in named.to_html()


# ------------------------------------------------------------------------------------------
# plots


def test_classification_plot_draws_the_displays(calibrated):
    y, p, report = calibrated
    fig = report.plot()
    reliability, smooth = report.displays_
    assert type(reliability).__name__ == "ReliabilityDisplay"
    assert type(smooth).__name__ == "SmoothReliabilityDisplay"
    assert reliability.figure_ is fig and smooth.figure_ is fig
    assert reliability.ax_ is not smooth.ax_
    curve = reliability_curve(y, p, n_bins=15)
    np.testing.assert_allclose(reliability.line_.get_xdata(), curve.prob_pred)
    np.testing.assert_allclose(reliability.line_.get_ydata(), curve.prob_true)
    np.testing.assert_array_equal([b.get_height() for b in reliability.bars_], curve.counts)
    sm = smooth_reliability_curve(y, p)
    np.testing.assert_allclose(smooth.line_.get_ydata(), sm.frequency, equal_nan=True)
    assert reliability.line_.get_label() == "predictions"
    fig.savefig(io.BytesIO(), format="png")
    # drawing into a given figure clears it first
    again = report.plot(figure=fig)
    assert again is fig
    assert {id(ax) for ax in fig.axes} >= {id(report.displays_[0].ax_),
                                           id(report.displays_[1].ax_)}
    assert reliability.ax_ not in fig.axes
    with pytest.raises(TypeError, match="figure"):
        report.plot(figure=fig.axes[0])
    plt.close("all")


def test_regression_plot_draws_the_displays(narrow):
    y, dist, report = narrow
    fig = report.plot()
    pit_display, quantile, coverage = report.displays_
    assert [type(d).__name__ for d in report.displays_] == [
        "PITHistogramDisplay", "QuantileCalibrationDisplay", "IntervalCoverageDisplay"]
    assert len({id(d.ax_) for d in report.displays_}) == 3
    heights, edges = np.histogram(pit(y, dist), bins=20, range=(0, 1), density=True)
    np.testing.assert_allclose(pit_display.heights, heights)
    np.testing.assert_allclose(pit_display.bars_.get_data().values, heights)
    expected, observed = quantile_calibration_curve(y, dist, quantiles=np.linspace(0, 1, 101))
    np.testing.assert_allclose(quantile.line_.get_xdata(), expected)
    np.testing.assert_allclose(quantile.line_.get_ydata(), observed)
    np.testing.assert_allclose(coverage.line_.get_ydata(),
                               interval_coverage(y, dist, levels=coverage.levels))
    fig.savefig(io.BytesIO(), format="png")
    plt.close("all")


# ------------------------------------------------------------------------------------------
# errors


def test_error_paths():
    y, p = _binary(50, 1.0, 15)
    clf = LogisticRegression().fit(p[:, None], y)
    with pytest.raises(ValueError, match=r"y \(the true labels or targets\) is required"):
        calibration_report(p)
    with pytest.raises(ValueError, match="X is required"):
        calibration_report(clf, y=y)
    with pytest.raises(ValueError, match="X must be None"):
        calibration_report(p, y)  # y passed positionally lands in X
    with pytest.raises(ValueError, match="task"):
        calibration_report(p, y=y, task="ranking")
    with pytest.raises(ValueError, match="sample_weight"):
        calibration_report(p, y=y, sample_weight=np.ones(50))
    with pytest.raises(ValueError, match="estimator_or_predictions|y"):
        calibration_report(p[:40], y=y)
    with pytest.raises(ValueError, match="finite|NaN|nan|missing"):
        calibration_report(np.where(np.arange(50) == 3, np.nan, p), y=y)
    with pytest.raises(ValueError, match="y"):
        calibration_report(Normal(np.zeros(50), 1.0), y=np.where(np.arange(50) == 3, np.nan, 0.0))
    with pytest.raises(ValueError, match="y"):
        calibration_report(Normal(np.zeros(50), 1.0), y=np.zeros(49))
    with pytest.raises(TypeError, match="task='classification' needs class probabilities"):
        calibration_report(Normal(np.zeros(50), 1.0), y=np.zeros(50), task="classification")
    with pytest.raises(TypeError, match="estimator_or_predictions"):
        calibration_report("model", y=y)
    with pytest.raises(ValueError, match="n_resamples"):
        calibration_report(p, y=y, n_resamples=5)
    with pytest.raises(ValueError, match="confidence_level"):
        calibration_report(p, y=y, confidence_level=1.0)
    with pytest.raises(ValueError, match="labels"):
        calibration_report(Normal(np.zeros(50), 1.0), y=np.zeros(50), labels=[0, 1])
    with pytest.raises(ValueError, match="labels must be the classes"):
        calibration_report(clf, p[:, None], y, labels=[0, 2])
    with pytest.raises(TypeError, match="name"):
        calibration_report(p, y=y, name=3)
    with pytest.raises(ValueError, match="probabilit|estimator_or_predictions"):
        calibration_report(p * 2, y=y)
    with pytest.raises(ValueError, match="at least 3 samples"):
        calibration_report(p[:2], y=y[:2])
    with pytest.raises(ValueError, match="at least 3 samples"):
        calibration_report(Normal(np.zeros(2), 1.0), y=np.zeros(2))
    with pytest.raises(TypeError, match="Categorical"):
        calibration_report(Categorical(np.full((50, 2), 0.5), classes=[0, 1]), y=y,
                           task="regression")


def test_lazy_public_names():
    assert skcalib.calibration_report is calibration_report
    assert skcalib.CalibrationReport is CalibrationReport
    assert {"calibration_report", "CalibrationReport", "reporting"} <= set(skcalib.__all__)


@pytest.mark.slow
def test_a_report_on_1000_predictions_takes_at_most_3_seconds():
    rng = np.random.default_rng(16)
    P = rng.dirichlet([1.0] * 4, size=1000)
    y = (rng.random((1000, 1)) > P.cumsum(axis=1)).sum(axis=1)
    calibration_report(P[:50], y=y[:50], n_resamples=20)  # imports
    start = time.perf_counter()
    calibration_report(P, y=y)
    assert time.perf_counter() - start < 3.0
    y, dist = _regression(1000, 1.0, 17)
    start = time.perf_counter()
    calibration_report(dist, y=y)
    assert time.perf_counter() - start < 3.0


def test_large_n_uses_the_block_estimator_in_one_pass(monkeypatch):
    """Above reporting.LARGE_N samples the kernel section switches from the unbiased
    U-statistic (n^2 pairs for its interval) to the block estimator with blocks of ~sqrt(n):
    its estimate, p-value and normal interval are those of skce_test(method="block")."""
    from skcalib.reporting import _kernel_section

    monkeypatch.setattr(_kernel_section, "LARGE_N", 100)
    rng = np.random.default_rng(1)
    P = rng.dirichlet([1, 1, 1], size=400)
    y = (P.cumsum(axis=1) > rng.random((400, 1))).argmax(axis=1)
    report = skcalib.calibration_report(P, y=y, n_resamples=50)
    row = report["kernel"]["SKCE"]
    ref = skce_test(y, P, method="block", block_size="sqrt", random_state=0, labels=[0, 1, 2])
    assert row.value == max(ref.estimate, 0.0) and row.pvalue == ref.pvalue
    assert (row.lower, row.upper) == tuple(ref.confidence_interval(0.95))
    assert "block" in row.note


def test_overall_verdict_adjusts_for_the_number_of_tests():
    """The first sentence combines the sections' tests by Holm: p = 0.03 alone rejects at 0.05,
    among three tests it does not (adjusted 0.09); 0.01 among three does (adjusted 0.03)."""
    from skcalib.reporting._verdicts import overall_verdict as _overall_verdict

    three = [("SKCE test", 0.03), ("PIT test", 0.5), ("coverage test", 0.6)]
    text = _overall_verdict(three, 0.05, 100)
    assert text.startswith("No evidence of miscalibration at level 0.05 (Holm-adjusted over "
                           "the report's 3 tests")
    assert "On its own the SKCE test would reject" in text
    text = _overall_verdict([("SKCE test", 0.01)] + three[1:], 0.05, 100)
    assert text.startswith("Evidence of miscalibration") and "adjusted = 0.03" in text
    assert "PIT test" not in text


@pytest.mark.slow
def test_overall_false_alarm_rate_of_calibrated_models_is_at_most_alpha():
    """Over 300 calibrated binary data sets the overall verdict says "Evidence of
    miscalibration" at most at the level (binomial 99 % upper bound of 0.05 at n = 300)."""
    rng = np.random.default_rng(20)
    alarms = 0
    for _ in range(300):
        p = rng.uniform(0.05, 0.95, 200)
        y = (rng.random(200) < p).astype(int)
        report = skcalib.calibration_report(p, y=y, n_resamples=100,
                                            random_state=int(rng.integers(2**31)))
        alarms += report.verdict.startswith("Evidence")
    assert alarms / 300 <= 0.085


def test_logistic_verdict_does_not_contradict_its_intercept_interval():
    """The README's predictions: the joint (slope, intercept) test gives p = 0.08, while the
    calibration intercept's interval excludes 0. The verdict must not say "no evidence" there."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)
    P = LogisticRegression(max_iter=5000).fit(X_train, y_train).predict_proba(X_test)
    report = calibration_report(P, y=y_test, n_resamples=50)
    section = report["logistic"]
    assert section["likelihood-ratio test"].pvalue > 0.05
    assert section["calibration intercept"].lower > 0
    assert not section.verdict.startswith("No evidence")
    assert "excludes 0" in section.verdict and "under-predicts" in section.verdict


def test_binary_header_names_the_positive_class():
    rng = np.random.default_rng(3)
    p = rng.uniform(0.1, 0.9, 100)
    y = np.where(rng.random(100) < p, "yes", "no")
    report = calibration_report(p, y=y, n_resamples=20)
    assert "2 classes (positive class: yes)" in str(report).splitlines()[0]
    assert "positive class: yes" in report.to_html()


def test_smece_note_explains_why_the_bandwidth_equals_it(overconfident):
    _, _, report = overconfident
    row = report["smooth"]["smECE"]
    assert row.note.endswith("(chosen equal to the smECE: see the glossary)")


def test_a_section_that_cannot_be_computed_shows_no_empty_table():
    """Separated outcomes: the logistic fit has no finite slope; its section keeps the reason
    and prints no table header in text or HTML."""
    p = np.r_[np.full(50, 0.2), np.full(50, 0.8)]
    y = np.r_[np.zeros(50, int), np.ones(50, int)]
    report = calibration_report(p, y=y, n_resamples=20)
    assert report["logistic"].rows == [] and "separated" in report["logistic"].verdict
    text = str(report)
    block = text[text.index("Logistic calibration"):]
    assert "metric" not in block.splitlines()[2]
    html_text = report.to_html()
    section = html_text[html_text.index("Logistic calibration"):]
    before_verdict = section[:section.index("section-verdict")]
    assert "<table" not in before_verdict


def test_multiclass_log_loss_says_why_it_is_not_decomposed(multiclass):
    _, _, report = multiclass
    assert report["scores"]["log loss"].note == "not decomposed for more than 2 classes"


def test_header_underline_spans_the_header(multiclass):
    _, _, report = multiclass
    first, second = str(report).splitlines()[:2]
    assert second == "=" * len(first)
