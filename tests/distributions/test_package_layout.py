"""The distributions package keeps the face of the former single module: public names, their
module path (pickles, API pages, doctests), and the closed forms each family registers."""

import pickle

import numpy as np
import pytest

import skcalib
import skcalib.distributions as D
from skcalib import _expectations
from skcalib.kernels import ExponentialKernel, GaussianKernel

PUBLIC = ["Normal", "MultivariateNormal", "Laplace", "Mixture", "Categorical", "Recalibrated",
          "Empirical",
          "Quantiles",
          "wasserstein_distance", "pairwise_wasserstein", "is_distribution", "concatenate",
          "as_distribution",
          "ScipyDistribution"]


def test_public_names_and_their_module_path():
    assert D.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(D, name).__module__ == "skcalib.distributions", name
    # methods a public class defines present themselves there too (doctests are collected once)
    assert D.Normal.cdf.__module__ == "skcalib.distributions"
    assert D.Mixture.ppf.__module__ == "skcalib.distributions"


@pytest.mark.parametrize("dist", [
    D.Normal([0.0, 1.0], [1.0, 2.0]),
    D.Mixture([0.5, 0.5], [D.Laplace([0.0], [1.0]), D.Laplace([1.0], [2.0])]),
    D.Recalibrated(D.Normal([0.0], [1.0]), [0.0, 0.5, 1.0], [0.0, 0.3, 1.0]),
    D.Categorical([[0.2, 0.8]], classes=["a", "b"]),
])
def test_pickles_name_the_package_and_round_trip(dist):
    blob = pickle.dumps(dist)
    assert b"skcalib.distributions\x94" in blob
    assert b"skcalib.distributions._" not in blob
    back = pickle.loads(blob)
    assert type(back) is type(dist) and repr(back) == repr(dist)
    assert np.array_equal(back.sample(random_state=0), dist.sample(random_state=0))


def test_each_family_registers_its_closed_forms():
    registered = {(cls.__name__, kernel.__name__) for cls, kernel in _expectations._CLOSED_FORMS}
    assert {("Normal", "GaussianKernel"), ("Normal", "ExponentialKernel"),
            ("Laplace", "ExponentialKernel"), ("MultivariateNormal", "GaussianKernel"),
            ("MultivariateNormal", "ExponentialKernel"), ("Mixture", "GaussianKernel"),
            ("Mixture", "ExponentialKernel")} <= registered
    assert ("Laplace", "GaussianKernel") not in registered      # Monte Carlo
    laplace = D.Laplace([0.0, 1.0], [1.0, 2.0])
    assert _expectations.has_closed_form(laplace, ExponentialKernel(1.0))
    assert not _expectations.has_closed_form(laplace, GaussianKernel(1.0))
    assert not _expectations.has_closed_form(D.Recalibrated(laplace, [0, 1], [0, 1]),
                                             ExponentialKernel(1.0))


def test_top_level_names_unchanged():
    for name in ("Normal", "Laplace", "MultivariateNormal", "Mixture", "Categorical"):
        assert not hasattr(skcalib, name) or getattr(skcalib, name) is getattr(D, name)
    assert skcalib.distributions is D
