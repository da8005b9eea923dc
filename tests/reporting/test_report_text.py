"""The report's text: ``mode`` spelled as ``mode=`` accepts it; the default bin count."""

import re

import numpy as np

from skcalib import calibration_error, calibration_report


FAST = {"n_resamples": 20}


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
