"""Fixtures shared by the tests of :mod:`skcalib.reporting`."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def binary():
    """Binary probabilities ``p`` in [0.1, 0.9] and labels ``y`` drawn from them (60 samples)."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.1, 0.9, 60)
    y = (rng.random(60) < p).astype(int)
    return p, y
