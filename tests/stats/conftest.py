"""Fixtures shared by the tests of :mod:`skcalib.stats`."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def data():
    """Three-class probabilities ``p``, labels ``y`` drawn from them and a feature ``x``
    (200 samples, seed 0): a calibrated model."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet([1, 1, 1], size=200)
    y = (rng.random(200)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    x = rng.normal(size=200)
    return y, p, x
