"""The command line names an empty Parquet folder and suggests the closest option or command."""

import pytest

from skcalib._cli import main


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
