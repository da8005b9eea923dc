"""The README says which recalibrators keep the predicted class."""

import pathlib


ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_readme_says_which_recalibrators_keep_the_predicted_class():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "The predicted class (or mean) never\n  changes" not in text
    assert "Only\n  temperature scaling keeps every predicted class" in text
