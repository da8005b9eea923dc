"""Displays: what is drawn (artists and their data), rendered headless to PNG."""

import io

import numpy as np
import pytest
from numpy.testing import assert_allclose

matplotlib = pytest.importorskip("matplotlib")  # the ``plot`` extra; installed by ``make test``
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skcalib import local_calibration_bias  # noqa: E402
from skcalib.plotting import LocalCalibrationBiasDisplay  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _audit(n=200, seed=0):
    rng = np.random.default_rng(seed)
    age = rng.uniform(20, 70, n)
    sex = rng.integers(2, size=n)
    p = rng.uniform(0.2, 0.8, n)
    y = (rng.random(n) < np.clip(p + 0.15 * (age < 40) - 0.1 * sex, 0, 1)).astype(int)
    return y, p, np.column_stack([age, sex])


def test_points_trends_and_zero_line_per_group():
    y, p, A = _audit()
    disp = LocalCalibrationBiasDisplay.from_predictions(y, p, A, feature=0, group=1)
    bias = local_calibration_bias(y, p, A, leave_one_out=True)
    assert set(disp.scatters_) == {0, 1} and set(disp.lines_) == {0, 1}
    for g in (0, 1):
        mask = A[:, 1] == g
        assert_allclose(disp.scatters_[g].get_offsets(), np.column_stack([A[mask, 0], bias[mask]]))
        xs, ys = disp.lines_[g].get_data()
        assert xs.min() == pytest.approx(A[:, 0].min()) and xs.max() == pytest.approx(A[:, 0].max())
        assert np.all(np.isfinite(ys))
    zero = [line for line in disp.ax_.get_lines() if np.all(np.asarray(line.get_ydata()) == 0)]
    assert len(zero) == 1
    assert disp.ax_.get_xlabel() == "feature 0"
    assert disp.ax_.get_ylabel() == "Local calibration bias"
    assert [t.get_text() for t in disp.ax_.get_legend().get_texts()] == ["0.0", "1.0"]
    buf = io.BytesIO()
    disp.figure_.savefig(buf, format="png")
    assert buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


def test_dataframe_columns_estimator_and_existing_axes():
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    y, p, A = _audit(seed=1)
    df = pd.DataFrame(A, columns=["age", "sex"])
    disp = LocalCalibrationBiasDisplay.from_predictions(y, p, df, feature="age", group="sex",
                                                        trend=False)
    assert disp.ax_.get_xlabel() == "age" and disp.lines_ == {}
    fig, ax = plt.subplots()
    model = LogisticRegression().fit(A, y)
    disp = LocalCalibrationBiasDisplay.from_estimator(model, A, y, audit_features=df,
                                                      feature="age", ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig
    bias = local_calibration_bias(y, model.predict_proba(A), A, leave_one_out=True)
    assert_allclose(disp.scatters_[0].get_offsets()[:, 1], bias)


def test_errors():
    y, p, A = _audit(seed=2)
    with pytest.raises(ValueError, match="feature=5 is out of range"):
        LocalCalibrationBiasDisplay.from_predictions(y, p, A, feature=5)
    with pytest.raises(ValueError, match="feature must be an integer column position"):
        LocalCalibrationBiasDisplay.from_predictions(y, p, A, feature="age")
    with pytest.raises(ValueError, match=r"group has shape \(3,\)"):
        LocalCalibrationBiasDisplay.from_predictions(y, p, A, group=[1, 2, 3])
    P3 = np.random.default_rng(0).dirichlet([1, 1, 1], size=200)
    with pytest.raises(ValueError, match="binary problems"):
        LocalCalibrationBiasDisplay.from_predictions(np.arange(200) % 3, P3, A)
    with pytest.raises(TypeError, match="trend must be True or False"):
        LocalCalibrationBiasDisplay(A[:, 0], np.zeros(200)).plot(trend="yes")
