"""Issue 21 for the report, the command line and the demo: what a newcomer sees.

Bad arguments of :func:`skcalib.calibration_report` are refused up front; a section and the
overall verdict tell one story (Holm); every printed estimate lies in its printed interval;
``mode`` is spelled as ``mode=`` accepts it; the command line suggests the closest option and
names an empty Parquet folder; the demo prints a short summary with a command that runs from the
user's shell and a glossary that exists; the README's command line runs as written.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import skcalib
from skcalib import calibration_error, calibration_report
from skcalib._cli import main
from skcalib.reporting import ReportRow, ReportSection
from skcalib.reporting._verdicts import combine_tests as _combine_tests
from skcalib.stats import adjust_pvalues

ROOT = pathlib.Path(__file__).resolve().parent.parent
FAST = {"n_resamples": 20}


@pytest.fixture(scope="module")
def binary():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.1, 0.9, 60)
    y = (rng.random(60) < p).astype(int)
    return p, y


# -- 1. every argument checked up front --------------------------------------------------------

BAD = {
    "confidence_level": [float("nan"), float("inf"), -float("inf"), "0.9", "abc", 0, 1, -0.5,
                         1.5, None, True, [0.9]],
    "n_bins": [float("nan"), float("inf"), "15", 0, -3, 2.5, None, True],
    "n_resamples": [float("nan"), float("inf"), "100", 0, 19, -5, 2.5, None, True],
    "random_state": [float("nan"), float("inf"), "0", -1, 2.5, True, [0]],
    "n_jobs": [float("nan"), float("inf"), "2", 0, 2.5, True],
    "task": [float("nan"), "classify", "", None, 1],
    "name": [float("nan"), 1, ["a"]],
    "labels": [float("nan"), "ab", [0], 3],
    "sample_weight": [float("nan"), np.ones(60)],
}


@pytest.mark.parametrize("argument,value",
                         [(a, v) for a, values in BAD.items() for v in values],
                         ids=lambda x: repr(x)[:20])
def test_bad_arguments_are_refused_naming_them(binary, argument, value):
    p, y = binary
    kwargs = {"n_resamples": 20, argument: value}
    with pytest.raises((ValueError, TypeError), match=argument):
        calibration_report(p, y=y, **kwargs)


def test_nan_confidence_level_is_refused_like_everywhere_else(binary):
    """It crashed while formatting ('cannot convert float NaN to integer')."""
    p, y = binary
    with pytest.raises(ValueError, match="confidence_level must be finite"):
        calibration_report(p, y=y, confidence_level=float("nan"), n_resamples=20)
    with pytest.raises(ValueError, match="confidence_level must be finite"):
        skcalib.reliability_curve(y, p, confidence_level=float("nan"))


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


def test_adjust_pvalues_is_holm_and_bonferroni():
    p = np.array([0.01, 0.04, 0.03, 0.2])
    order = np.argsort(p)
    holm = np.maximum.accumulate(np.minimum(1, (4 - np.arange(4)) * p[order]))
    expected = np.empty(4)
    expected[order] = holm
    np.testing.assert_allclose(adjust_pvalues(p), expected)
    np.testing.assert_allclose(adjust_pvalues(p, method="bonferroni"), np.minimum(1, 4 * p))
    with pytest.raises(ValueError, match="method must be one of .* Did you mean 'holm'"):
        adjust_pvalues(p, method="hlom")
    for bad in ([0.1, float("nan")], [1.5], [], [[0.1]]):
        with pytest.raises(ValueError, match="pvalues"):
            adjust_pvalues(bad)
    with pytest.raises(TypeError, match="pvalues"):
        adjust_pvalues(["a", "b"])


def test_reporting_imports_no_private_module_of_stats():
    paths = sorted((ROOT / "skcalib" / "reporting").glob("*.py"))
    assert len(paths) > 1  # (the package's modules)
    for path in paths:  # neither stats' private modules nor any other package's
        assert not re.search(r"from \.\.\w+\._", path.read_text()), path.name


# -- 2. every printed estimate lies in its printed interval ------------------------------------

def _rows_with_intervals(report):
    return [(s.key, r) for s in report.sections for r in s.rows
            if r.lower is not None and r.upper is not None]


def test_skce_estimate_is_inside_its_interval_with_the_block_estimator(monkeypatch):
    """At n > LARGE_N the block estimate of a calibrated model was printed negative (-4e-05)
    beside its interval [0, 6.86e-05]."""
    from skcalib.reporting import _kernel_section

    monkeypatch.setattr(_kernel_section, "LARGE_N", 100)
    negative = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        p = rng.uniform(0.1, 0.9, 400)
        y = (rng.random(400) < p).astype(int)
        report = calibration_report(p, y=y, random_state=seed, **FAST)
        row = report["kernel"]["SKCE"]
        assert row.lower <= row.value <= row.upper
        if "shown as 0" in row.note:
            negative += 1
            assert row.value == 0.0 and "unbiased estimate -" in row.note
        for key, r in _rows_with_intervals(report):
            assert r.lower <= r.value <= r.upper, (key, r)
    assert negative  # the case of the issue did occur


def test_every_interval_contains_its_estimate_in_classification_and_regression():
    from skcalib.distributions import Normal

    rng = np.random.default_rng(2)
    P = rng.dirichlet([1, 1, 1], 200)
    y = (P.cumsum(1) > rng.random((200, 1))).argmax(1)
    mean = rng.normal(size=150)
    reports = [calibration_report(P, y=y, **FAST),
               calibration_report(Normal(mean, np.ones(150)), y=mean + rng.normal(size=150),
                                  **FAST)]
    for report in reports:
        rows = _rows_with_intervals(report)
        assert rows
        for key, r in rows:
            assert r.lower <= r.value <= r.upper, (key, r)


# -- 3. mode spelled one way -------------------------------------------------------------------

def test_mode_is_printed_as_mode_accepts_it(binary):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(1)
    P = rng.dirichlet([1, 1, 1], 100)
    y = (P.cumsum(1) > rng.random((100, 1))).argmax(1)
    report = calibration_report(P, y=y, **FAST)
    mode = re.search(r'mode="(\w+)"', report["binned"].title).group(1)
    assert mode == "top_label"
    calibration_error(y, P, mode=mode)  # accepted
    outputs = [str(report), report.to_html(), report.to_frame().to_string(),
               str(report.to_dict())]
    fig = report.plot()
    outputs.append(fig.axes[0].get_title())
    plt.close(fig)
    assert 'mode="top_label"' in outputs[-1]
    for text in outputs:
        assert "top-label" not in text


def test_report_default_bin_count_is_15():
    import inspect

    assert inspect.signature(calibration_report).parameters["n_bins"].default == 15
    assert inspect.signature(calibration_error).parameters["n_bins"].default == 15


# -- 5. the command line: empty folders, mistyped options ---------------------------------------

def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_empty_folder_says_it_holds_no_parquet_files(capsys, tmp_path):
    folder = tmp_path / "predictions"
    (folder / "_meta").mkdir(parents=True)
    (folder / "_SUCCESS").write_text("")
    code, out, err = _run(capsys, "report", folder, "--target", "y", "--proba-cols", "p")
    assert code == 2 and out == ""
    assert f"the folder {folder} holds no Parquet files" in err


@pytest.mark.parametrize("argv,suggestion", [
    (["report", "x.csv", "--target", "y", "--proba-cols", "p", "--nbins", "3"], "'--n-bins'"),
    (["report", "x.csv", "--target", "y", "--proba-col", "p", "--n_resamples", "50"],
     "'--n-resamples'"),
    (["report", "x.csv", "--target", "y", "--proba-cols", "p", "--confidence-levle=0.9"],
     "'--confidence-level'"),
    (["demo", "--quik"], "'--quick'"),
    (["demo", "--output_dir", "x"], "'--output-dir'"),
    (["reprot", "x.csv"], "'report'"),
    (["dmeo"], "'demo'"),
])
def test_mistyped_options_and_commands_get_did_you_mean(capsys, argv, suggestion):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert f"Did you mean {suggestion}?" in err
    assert "usage: skcalib" in err


def test_unknown_option_without_a_close_match_gets_no_suggestion(capsys):
    code, _, err = _run(capsys, "demo", "--zzzzzz")
    assert code == 2 and "unrecognized arguments: --zzzzzz" in err
    assert "Did you mean" not in err


# -- 6. the demo: a short summary, files, the glossary, a command that runs ----------------------

@pytest.fixture(scope="module")
def quick_demo(tmp_path_factory):
    import contextlib
    import io

    folder = tmp_path_factory.mktemp("demo") / "skcalib-demo"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["demo", "--quick", "--output-dir", str(folder)])
    assert code == 0
    return out.getvalue(), folder


def test_demo_prints_a_short_summary_without_undefined_terms(quick_demo):
    out, folder = quick_demo
    lines = out.splitlines()
    assert len(lines) <= 40
    # (the last line is the command, with the output folder's path)
    assert max(len(line) for line in lines[:-1] if "Files in" not in line) <= 110
    text = "\n".join(line for line in lines if not line.startswith("Terms"))  # (the glossary)
    for jargon in ("Holm", "CORP", "MCB", "fixed point", "span", "no finite fit",
                   "intercept [", "Calibration report for"):
        assert jargon not in text, jargon
    # what was measured, the verdicts, what recalibration did, where the files are
    assert "miscalibrated, over-confident" in out
    assert "temperature (T = " in out and "best of" in out
    assert "Only temperature scaling keeps every predicted class" in out
    assert f"Files in {folder}" in out


def test_demo_writes_full_reports_as_text_and_html(quick_demo):
    _, folder = quick_demo
    for stem in ("digits_gaussian_nb", "diabetes_gaussian_process"):
        text = (folder / f"{stem}_report.txt").read_text(encoding="utf-8")
        assert text.startswith("Calibration report for")
        assert "Recalibrators fitted on one half" in text
        assert "Before and after recalibration" in text
        page = (folder / f"{stem}_report.html").read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>") and "Calibration report for" in page
    text = (folder / "digits_gaussian_nb_report.txt").read_text(encoding="utf-8")
    assert "Temperature scaling divides the logits by one number T" in text


def test_demo_links_a_glossary_that_exists_and_explains_its_terms(quick_demo):
    out, _ = quick_demo
    line = next(line for line in out.splitlines() if line.startswith("Terms"))
    path = line.split(": ", 1)[1].strip()
    assert path.endswith("glossary.rst") or path.endswith("glossary.html")
    assert os.path.isfile(path)
    glossary = (ROOT / "docs" / "glossary.rst").read_text(encoding="utf-8")
    for term in ("Holm", "MCB", "DSC", "UNC", "smECE", "bandwidth", "loess", "span",
                 "no finite fit", "PIT", "CRPS", "SKCE", "ECE if calibrated",
                 "keeps the predicted class", "top_label"):
        assert term in glossary, term
    for page in ("user_guide.rst", "index.rst"):
        if "glossary" in (ROOT / "docs" / page).read_text(encoding="utf-8"):
            break
    else:
        raise AssertionError("docs/glossary.rst is in no toctree")


def _fresh_shell_env(tmp_path):
    """A shell as a new user opens it: no virtual environment on the PATH. PYTHONPATH points
    at this checkout, so that the installed command runs the code under test."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT),
            "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "LANG": "C.UTF-8"}


@pytest.mark.skipif(sys.platform == "win32" or shutil.which("bash") is None,
                    reason="needs a POSIX shell")
def test_demo_command_runs_in_a_fresh_shell(quick_demo, tmp_path):
    """The demo's "command line on a saved file" works where the user is: `skcalib` is not on
    the PATH of a shell without the virtual environment (the issue: command not found)."""
    out, _ = quick_demo
    lines = out.splitlines()
    command = lines[lines.index("The command line on a saved file:") + 1].strip()
    assert " report " in command and "--target y" in command
    result = subprocess.run(["bash", "-c", command + " --n-resamples 20"], cwd=os.getcwd(),
                            env=_fresh_shell_env(tmp_path), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Calibration report for digits_gaussian_nb_predictions.csv" in result.stdout


def test_skcalib_command_is_the_script_beside_this_python(monkeypatch, tmp_path):
    from skcalib._cli._demo import skcalib_command

    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("")
    script = bin_dir / "skcalib"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert skcalib_command() == os.path.join("venv", "bin", "skcalib")  # not on the PATH
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    assert skcalib_command() == "skcalib"  # an activated environment
    script.unlink()
    assert skcalib_command() == f"{os.path.join('venv', 'bin', 'python')} -m skcalib"


# -- 4. the README's command line, as written, in a fresh shell ---------------------------------

def _readme_shell_block():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.S)
    block = next(b for b in blocks if "skcalib report" in b)
    return [line for line in block.splitlines() if line.strip()]


def test_readme_command_line_block_activates_the_environment_first():
    lines = _readme_shell_block()
    assert lines[0] == ". .venv/bin/activate"
    assert all(line.startswith("skcalib report ") for line in lines[1:])


@pytest.mark.skipif(sys.platform == "win32" or shutil.which("bash") is None,
                    reason="needs a POSIX shell")
def test_readme_command_line_runs_as_written_after_the_demo(quick_demo, tmp_path):
    """`make demo` leaves a .venv with skcalib installed and ./skcalib-demo/ with predictions;
    the README's block then runs as written in a plain shell. The test's own environment plays
    the part of .venv (it has the `skcalib` script when skcalib is installed in it)."""
    venv = pathlib.Path(sys.prefix)
    if not (venv / "bin" / "activate").is_file() or not (venv / "bin" / "skcalib").is_file():
        pytest.skip("the test environment is not a virtual environment with skcalib installed")
    _, demo_folder = quick_demo
    work = tmp_path / "checkout"
    work.mkdir()
    (work / ".venv").symlink_to(venv)
    shutil.copytree(demo_folder, work / "skcalib-demo")
    script = "set -e\n" + "\n".join(
        line + (" --n-resamples 20" if line.startswith("skcalib report") else "")
        for line in _readme_shell_block())
    result = subprocess.run(["bash", "-c", script], cwd=work, env=_fresh_shell_env(tmp_path),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("Calibration report for") == 2
    assert (work / "report.html").is_file() and (work / "report.png").is_file()
    # and without activating, the command is indeed not found: the line is needed
    bare = subprocess.run(["bash", "-c", "skcalib --version"], cwd=work,
                          env=_fresh_shell_env(tmp_path), capture_output=True, text=True)
    assert bare.returncode == 127


def test_readme_says_which_recalibrators_keep_the_predicted_class():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "The predicted class (or mean) never\n  changes" not in text
    assert "Only\n  temperature scaling keeps every predicted class" in text
