"""What the README tells a newcomer: the Parquet extra, how long the make targets take and why
some checks are expected failures."""

import os
import re


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_readme_points_command_line_users_to_the_parquet_extra():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert "pip install 'skcalib[parquet]'" in readme
    # not to the whole Dask stack for reading a Parquet file
    assert "Parquet needs pandas and pyarrow, e.g.\n`pip install 'skcalib[dask]'`" not in readme


# --------------------------------------------------------------------------------------------
# Stale content: the tie rule, the recalibrator family


def _read(*parts):
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as f:
        return f.read()


def test_readme_gives_durations_and_explains_the_expected_failures():
    readme = _read("README.md")
    section = readme.split("How long they take", 1)[1].split("## What is here", 1)[0]
    for target in ("`make demo`", "`make test`", "`make docs`"):
        assert re.search(re.escape(target) + r"[^.]*\b(minute|minutes|s)\b", section), target
    assert "xfailed" in section and "_estimator_checks.py" in section
    assert "parametrize_with_checks" in section
    # the count it gives is the count of the expected failures that the suite marks
    from skcalib._estimator_checks import EXPECTED_FAILED_CHECKS

    assert "about 600" in section and EXPECTED_FAILED_CHECKS
