"""float32 class probabilities: rows renormalised once, accepted by the scorers, the report and
the consistency test."""

import numpy as np
import pytest

import skcalib
from skcalib import stats


def _float32_model():
    from sklearn.linear_model import LogisticRegression
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3)).astype(np.float32)
    y = np.arange(200) % 3
    return LogisticRegression().fit(X, y), X, y


def test_float32_rows_are_renormalised_once():
    from skcalib._validation import check_labels_and_probabilities
    model, X, y = _float32_model()
    P = model.predict_proba(X)
    assert P.dtype == np.float32
    data = check_labels_and_probabilities(y, P)
    assert np.max(np.abs(data.probs.sum(axis=1) - 1.0)) < 1e-15
    # the float64 copy passes the float64 check again: what a scorer or the report does
    check_labels_and_probabilities(y, np.asarray(data.probs))
    rng = np.random.default_rng(1)
    exact = rng.dirichlet(np.ones(3), 200)  # float64 input is never renormalised
    given = exact.copy()  # the check may return exact itself: compare with a copy
    np.testing.assert_array_equal(check_labels_and_probabilities(y, exact).probs, given)


@pytest.mark.parametrize("name", ["neg_ece", "neg_skce", "neg_mmce", "neg_brier_score",
                                  "neg_smooth_ece",
                                  "skce_pvalue"])
def test_scorers_accept_a_float32_classifier(name):
    model, X, y = _float32_model()
    score = skcalib.get_scorer(name)(model, X, y)
    assert np.isfinite(score)


def test_report_and_consistency_test_accept_a_float32_classifier():
    model, X, y = _float32_model()
    report = skcalib.calibration_report(model, X, y=y)
    assert len(report.to_frame()) > 0
    res = stats.consistency_test(skcalib.calibration_error, y, model.predict_proba(X),
                                 n_resamples=99, random_state=0)
    assert 0.0 < res.pvalue <= 1.0
