"""A report's sections and its overall verdict tell one story (Holm-adjusted p-values)."""

import numpy as np
import pytest

from skcalib import calibration_report
from skcalib.reporting import ReportRow, ReportSection
from skcalib.reporting._verdicts import combine_tests as _combine_tests
from skcalib.stats import adjust_pvalues


FAST = {"n_resamples": 20}


# -- 2. one story: sections and the overall verdict ----------------------------------------------

def _sections(p_ece):
    rows = {"binned": ReportRow("ECE", 0.05, pvalue=p_ece, note="p: consistency test"),
            "kernel": ReportRow("SKCE", 1e-3, 0.0, 2e-3, pvalue=0.5, note="unbiased"),
            "logistic": ReportRow("likelihood-ratio test", 1.0, pvalue=0.6, note="chi2(2)")}
    return [ReportSection(key, key, [row], "Miscalibrated: the ECE is large."
                          if key == "binned" else "No evidence of miscalibration.")
            for key, row in rows.items()]


def test_a_section_that_rejects_alone_shows_its_adjusted_pvalue_and_why_it_is_left_out():
    sections = _sections(0.026)
    tests = [("SKCE test", 0.5, "kernel", "SKCE"),
             ("ECE consistency test", 0.026, "binned", "ECE"),
             ("logistic calibration test", 0.6, "logistic", "likelihood-ratio test")]
    overall = _combine_tests(sections, tests, 0.05, 100)
    binned = sections[0]
    assert overall.startswith("No evidence of miscalibration")
    assert adjust_pvalues([0.5, 0.026, 0.6])[1] == pytest.approx(0.078)
    # the section no longer says plainly "Miscalibrated:", and gives the adjusted p-value
    assert binned.verdict.startswith("Miscalibrated on this test alone:")
    assert "Holm), p = 0.078, not below 0.05" in binned.verdict
    assert "the overall verdict does not count this one" in binned.verdict
    assert binned["ECE"].note.endswith("Holm-adjusted over 3 tests: 0.078")
    for section in sections:  # every counted test shows its adjusted p-value
        assert "Holm-adjusted over 3 tests" in section.rows[0].note


def test_a_section_that_rejects_after_adjustment_says_so():
    sections = _sections(0.004)
    tests = [("SKCE test", 0.5, "kernel", "SKCE"),
             ("ECE consistency test", 0.004, "binned", "ECE")]
    overall = _combine_tests(sections, tests, 0.05, 100)
    assert overall.startswith("Evidence of miscalibration")
    assert sections[0].verdict.startswith("Miscalibrated: ")
    assert sections[0].verdict.endswith("Holm), p = 0.008: still below 0.05.")


def test_real_report_sections_agree_with_the_overall_verdict():
    """On a report, a section verdict starting "Miscalibrated:" is one whose test the overall
    verdict counts; each test row carries its adjusted p-value."""
    for seed in range(4):
        rng = np.random.default_rng(seed)
        p = rng.uniform(0.05, 0.95, 150)
        y = (rng.random(150) < np.clip(p + 0.08, 0, 1)).astype(int)
        report = calibration_report(p, y=y, **FAST)
        evidence = report.verdict.startswith("Evidence")
        for key, metric in (("binned", "ECE"), ("kernel", "SKCE")):
            section = report[key]
            assert "Holm-adjusted over 3 tests" in section[metric].note
            if section.verdict.startswith("Miscalibrated:"):
                assert evidence, (seed, key)
