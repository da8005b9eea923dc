"""The report of the new forms of regression predictions: draws and ensembles (``Empirical``)
and predicted quantiles (``Quantiles``).

Every section that applies to a family is computed, and each number is the value of the public
function the report names (called here on the same data); a section the family cannot fill
(the NLL of draws, which have no density; the kernel test of a family without a Wasserstein
distance) stays in the report with the reason in words, never a bare "n/a".
"""

import numpy as np
import pytest
from scipy import stats as st

from skcalib import calibration_report, crps, miscalibration_area, pit, quantile_calibration_error
from skcalib.distributions import Empirical, Normal, Quantiles
from skcalib.reporting import _regression
from skcalib.stats import coverage_test, pit_test, skce_test

N, FAST = 150, {"n_resamples": 50}
LEVELS = np.array([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95])


def _data(seed=0, n=N):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    sigma = rng.uniform(0.5, 1.5, n)
    return mu, sigma, mu + sigma * rng.normal(size=n), rng


def _ensemble(mu, sigma, rng, m=30, scale=1.0):
    """m draws from each true predictive (scaled by ``scale``: too narrow for < 1)."""
    return Empirical(mu[:, None] + scale * sigma[:, None] * rng.normal(size=(mu.size, m)))


def _quantiles(mu, sigma, scale=1.0):
    return Quantiles(mu[:, None] + scale * sigma[:, None] * st.norm.ppf(LEVELS), LEVELS)


def _notes(report):
    return [row.note for s in report.sections for row in s.rows]


def test_empirical_report_runs_every_section_with_the_public_values():
    mu, sigma, y, rng = _data(0)
    ens = _ensemble(mu, sigma, rng)
    report = calibration_report(ens, y=y, **FAST)
    assert [s.key for s in report.sections] == ["kernel", "scores", "pit", "coverage", "quantile"]
    test = skce_test(y, ens, n_resamples=50, random_state=0)
    assert report["kernel"]["SKCE"].pvalue == pytest.approx(test.pvalue)
    assert report["scores"]["CRPS"].value == pytest.approx(crps(y, ens))
    assert report["pit"]["KS statistic"].value == pytest.approx(pit_test(y, ens).statistic)
    assert report["pit"]["mean PIT"].value == pytest.approx(np.mean(pit(y, ens)))
    for level in (0.5, 0.8, 0.9, 0.95):
        row = report["coverage"][f"coverage {round(100 * level)}%"]
        assert row.value == pytest.approx(coverage_test(y, ens, level=level).statistic)
    assert report["quantile"]["quantile calibration error"].value == pytest.approx(
        quantile_calibration_error(y, ens))
    assert report["quantile"]["miscalibration area"].value == pytest.approx(
        miscalibration_area(y, ens))
    # a calibrated ensemble of 30 draws: no test rejects
    assert report.verdict.startswith("No evidence of miscalibration"), report.verdict
    assert "Empirical predictive distributions" in str(report)


def test_empirical_nll_is_explained_in_words():
    mu, sigma, y, rng = _data(1)
    report = calibration_report(_ensemble(mu, sigma, rng, m=30), y=y, **FAST)
    row = report["scores"]["NLL"]
    assert row.value is None
    assert row.note.startswith("not defined: Empirical predictions have no probability density")
    assert "finite set of points" in row.note and "CRPS" in row.note
    assert not any(note.startswith("n/a") for note in _notes(report))
    # the empty NLL renders as an empty cell in every form
    assert report.to_dict()["sections"][1]["rows"][0]["value"] is None
    assert "no probability density" in report.to_html()


def test_few_draws_are_explained_in_the_coverage_verdict():
    # 10 draws: a target like one more draw is outside all of them with probability 2/11, so
    # the 90% and 95% intervals cannot reach their levels; the verdict says so in words
    mu, sigma, y, rng = _data(10)
    report = calibration_report(_ensemble(mu, sigma, rng, m=10), y=y, **FAST)
    verdict = report["coverage"].verdict
    assert "Each prediction has 10 draws" in verdict and "2/11 (18.2%)" in verdict
    assert "about 81.8%" in verdict
    # enough draws for the 95% level (m >= 39): no note
    report = calibration_report(_ensemble(mu, sigma, rng, m=40), y=y, **FAST)
    assert "draws:" not in report["coverage"].verdict


def test_too_narrow_ensemble_is_flagged():
    mu, sigma, y, rng = _data(2)
    report = calibration_report(_ensemble(mu, sigma, rng, scale=0.5), y=y, **FAST)
    assert report.verdict.startswith("Evidence of miscalibration"), report.verdict
    assert report["coverage"].verdict.startswith("Intervals too narrow")


def test_quantiles_report_runs_every_section_it_can():
    mu, sigma, y, _ = _data(3)
    q = _quantiles(mu, sigma)
    report = calibration_report(q, y=y, **FAST)
    assert [s.key for s in report.sections] == ["kernel", "scores", "pit", "coverage", "quantile"]
    assert report["scores"]["CRPS"].value == pytest.approx(crps(y, q))
    assert report["pit"]["KS statistic"].value == pytest.approx(pit_test(y, q).statistic)
    assert report["quantile"]["miscalibration area"].value == pytest.approx(
        miscalibration_area(y, q))
    # the kernel section: computed where the family has a Wasserstein distance, else the reason
    kernel = report["kernel"]
    if _regression._has_wasserstein(q):
        assert kernel["SKCE"].pvalue == pytest.approx(
            skce_test(y, q, n_resamples=50, random_state=0).pvalue)
    else:
        assert kernel.rows == [] and kernel.verdict.startswith("Not computed: ")
    # the NLL: a value, or the reason in words (no density; targets outside the support)
    nll_row = report["scores"]["NLL"]
    assert nll_row.value is not None or nll_row.note.startswith(
        ("not defined: Quantiles", "infinite: "))
    assert not any(note.startswith("n/a") for note in _notes(report))
    assert not report.verdict.startswith("Evidence"), report.verdict


def test_targets_outside_bounded_support_are_explained(monkeypatch):
    # quantiles with linear tails have a bounded support: a target beyond it has density 0, so
    # the NLL is infinite (the metric refuses it); the note says so and counts the targets
    mu, sigma, y, _ = _data(9)
    q = _quantiles(mu, sigma, scale=0.5)
    low, high = q.ppf(0.0), q.ppf(1.0)
    outside = int(np.sum((y < low) | (y > high)))
    assert outside > 0

    def refusing_nll(y_true, y_pred, **kwargs):
        raise ValueError("the NLL of y_true under y_pred is not a finite number")

    monkeypatch.setattr(_regression, "nll", refusing_nll)
    monkeypatch.setattr(type(q), "log_pdf", lambda self, y: np.zeros(self.n_samples),
                        raising=False)
    row = _regression._scores_section(y, q, True, 0.95)["NLL"]
    assert row.value is None
    assert row.note.startswith(f"infinite: {outside} of the {N} targets fall outside the range "
                               "their Quantiles predictions allow")
    # unbounded families keep the metric's own reason
    row = _regression._scores_section(y, Normal(mu, sigma), True, 0.95)["NLL"]
    assert row.note == "n/a: the NLL of y_true under y_pred is not a finite number"


def test_too_wide_quantiles_are_flagged():
    mu, sigma, y, _ = _data(4)
    report = calibration_report(_quantiles(mu, sigma, scale=2.0), y=y, **FAST)
    assert report.verdict.startswith("Evidence of miscalibration"), report.verdict
    assert report["coverage"].verdict.startswith("Intervals too wide")


def test_kernel_section_without_wasserstein_says_why(monkeypatch):
    # a family without a Wasserstein distance between predictions: no SKCE row, the reason in
    # words, and the overall verdict counts the other two tests only
    monkeypatch.setattr(_regression, "_has_wasserstein", lambda dist: False)
    mu, sigma, y, _ = _data(5)
    report = calibration_report(Normal(mu, sigma), y=y, **FAST)
    kernel = report["kernel"]
    assert kernel.rows == []
    assert kernel.verdict.startswith("Not computed: the kernel calibration test compares")
    assert "Normal predictions" in kernel.verdict
    assert "over the report's 2 tests" in report.verdict
    text = str(report)
    assert "Kernel calibration test (SKCE)" in text and "Not computed" in text


def test_has_wasserstein_of_the_families():
    mu, sigma, _, rng = _data(6, n=5)
    assert _regression._has_wasserstein(Normal(mu, sigma))
    assert _regression._has_wasserstein(_ensemble(mu, sigma, rng, m=4))


class _EnsembleModel:
    """A fitted 'ensemble' whose predictive distribution is its members' predictions."""

    def __init__(self, shifts):
        self.shifts = np.asarray(shifts, dtype=float)

    def predict(self, X):
        return np.asarray(X, dtype=float)[:, 0]

    def predict_distribution(self, X):
        return Empirical(self.predict(X)[:, None] + self.shifts)


def test_report_of_an_estimator_with_empirical_predictions():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(100, 2))
    y = X[:, 0] + rng.normal(size=100)
    model = _EnsembleModel(st.norm.ppf((np.arange(20) + 0.5) / 20))
    report = calibration_report(model, X, y, **FAST)
    assert report.name == "_EnsembleModel"
    direct = calibration_report(model.predict_distribution(X), y=y, name="_EnsembleModel", **FAST)
    assert str(report) == str(direct)


def test_report_figures_of_the_new_forms():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    mu, sigma, y, rng = _data(8, n=120)
    for pred in (_ensemble(mu, sigma, rng, m=40), _quantiles(mu, sigma)):
        report = calibration_report(pred, y=y, **FAST)
        fig = report.plot()
        assert [type(d).__name__ for d in report.displays_] == [
            "PITHistogramDisplay", "QuantileCalibrationDisplay", "IntervalCoverageDisplay"]
        np.testing.assert_allclose(report.displays_[2].coverage[[4, 8]],
                                   [coverage_test(y, pred, level=lv).statistic
                                    for lv in (0.5, 0.9)])
        plt.close(fig)
