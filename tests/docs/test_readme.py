"""The README's first example runs and prints what the README says it prints."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def _first_python_block():
    text = README.read_text(encoding="utf-8")
    match = re.search(r"```python\n(.*?)```", text, flags=re.S)
    assert match, "README.md has no python code block"
    return match.group(1)


def test_first_example_shows_a_pvalue_beside_the_error():
    code = _first_python_block()
    assert "skce_test" in code and "pvalue" in code
    # the output the README claims, written as a comment after the print
    claimed = [line[2:] for line in code.splitlines() if line.startswith("# ECE")]
    assert len(claimed) == 1
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {"__name__": "readme_example"})
    assert out.getvalue().strip() == claimed[0]


def test_readme_says_how_to_read_the_pvalue():
    text = README.read_text(encoding="utf-8")
    assert "probability that a *calibrated* model" in text
    assert "coming" not in text.lower().replace("becoming", "")


def test_report_example_runs_on_the_first_examples_predictions():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    report_block = next(b for b in blocks if "calibration_report" in b)
    namespace = {"__name__": "readme_example"}
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(compile(blocks[0], str(README), "exec"), namespace)
        exec(compile(report_block, str(README), "exec"), namespace)
    assert "Calibration report" in out.getvalue() and "SKCE" in out.getvalue()
    assert len(namespace["df"]) > 5
    plt.close(namespace["fig"])
