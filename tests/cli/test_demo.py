"""``skcalib demo``: a short summary, full reports as text and HTML, a glossary that exists, a
command that runs from the user's shell; the README's command line runs as written after it."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from skcalib._cli import main


ROOT = pathlib.Path(__file__).resolve().parents[2]


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
