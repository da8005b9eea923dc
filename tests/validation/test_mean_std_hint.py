"""A ``[mean, std]`` array with real targets gets a hint pointing to ``Normal``; class labels do not."""

import numpy as np
import pytest

from skcalib import metrics, stats


@pytest.mark.parametrize("func", [
    metrics.skce, metrics.ucme, stats.skce_test, stats.ucme_test, metrics.mmce,
    lambda y, p: stats.consistency_test("skce", y, p, n_resamples=20)])
def test_mean_std_array_with_real_targets_points_to_normal(func):
    rng = np.random.default_rng(0)
    y = rng.normal(size=30)
    A = np.column_stack([rng.normal(size=30), rng.uniform(1.0, 2.0, size=30)])
    with pytest.raises(ValueError, match=r"Normal\(mean, std\)"):
        func(y, A)


def test_no_normal_hint_for_class_labels():
    P = np.array([[0.2, 1.8], [0.6, 0.4]])
    with pytest.raises(ValueError) as info:
        metrics.skce(np.array([0, 1]), P)
    assert "Normal(" not in str(info.value)
