"""Invalid input to the distribution objects raises a ValueError/TypeError naming the argument,
before anything is drawn or computed; valid input is never modified."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skcalib.distributions import (
    Categorical,
    Laplace,
    Mixture,
    MultivariateNormal,
    Normal,
    pairwise_wasserstein,
    wasserstein_distance,
)


def _families():
    n = Normal([0.0, 1.0], [1.0, 2.0])
    return {
        "normal": n,
        "laplace": Laplace([0.0, 1.0], [1.0, 2.0]),
        "mvn": MultivariateNormal([[0.0, 1.0], [1.0, 0.0]], [[1.0, 2.0], [0.5, 1.0]]),
        "mixture": Mixture([0.3, 0.7], [n, Normal([2.0, -1.0], [0.5, 1.0])]),
        "categorical": Categorical([[0.2, 0.8], [0.6, 0.4]], classes=["a", "b"]),
    }


FAMILIES = list(_families())


# --------------------------------------------------------------------------------------------
# parameters: numpy would silently convert strings, drop imaginary parts, read booleans as 0/1

BAD_PARAMETERS = [
    (lambda: Normal(["1", "2"], [1, 1]), TypeError, "loc"),
    (lambda: Normal([1 + 2j], [1]), TypeError, "loc must be real"),
    (lambda: Normal([1.0], [1 + 0j]), TypeError, "scale must be real"),
    (lambda: Normal([True, False], 1.0), TypeError, "loc"),
    (lambda: Normal([0.0], ["1"]), TypeError, "scale"),
    (lambda: Normal(np.array([1.0, "a"], dtype=object), 1.0), TypeError, "loc"),
    (lambda: Normal(np.array([1.0, None], dtype=object), 1.0), TypeError, "loc"),
    (lambda: Normal([[0.0], [1.0, 2.0]], 1.0), ValueError, "loc"),
    (lambda: Laplace(["0"], [1.0]), TypeError, "loc"),
    (lambda: Laplace([0.0], [True]), TypeError, "scale"),
    (lambda: MultivariateNormal([["1", "2"]], 1.0), TypeError, "mean"),
    (lambda: MultivariateNormal([[1.0, 2.0]], [[1 + 1j, 1.0]]), TypeError, "cov"),
    (lambda: MultivariateNormal([[1.0, 2.0]], True), TypeError, "cov"),
    (lambda: Mixture([True, False], [Normal([0.0], 1.0), Normal([1.0], 1.0)]), TypeError,
     "weights"),
    (lambda: Mixture(["0.5", "0.5"], [Normal([0.0], 1.0), Normal([1.0], 1.0)]), TypeError,
     "weights"),
    (lambda: Categorical([["0.5", "0.5"]]), TypeError, "probs"),
    (lambda: Categorical([[True, False]]), TypeError, "probs"),
    (lambda: Categorical([[0.5, 0.5 + 0j]]), TypeError, "probs"),
]


@pytest.mark.parametrize("make, exc, match", BAD_PARAMETERS)
def test_parameters_of_the_wrong_type_are_refused(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_numeric_parameters_of_any_real_type_are_accepted():
    ref = Normal([0.0, 2.0], [1.0, 3.0])
    for loc, scale in [([0, 2], [1, 3]), (np.array([0, 2], dtype=np.int32), np.float32([1, 3])),
                       (np.array([0, 2.0], dtype=object), np.array([1, 3], dtype=np.uint8))]:
        p = Normal(loc, scale)
        assert_array_equal(p.loc, ref.loc)
        assert_array_equal(p.scale, ref.scale)


# --------------------------------------------------------------------------------------------
# categorical classes

@pytest.mark.parametrize("classes, exc, match", [
    (["a", 1], ValueError, "classes mixes strings"),
    ([0.0, np.nan], ValueError, "classes contains NaN"),
    ([None, 1], ValueError, "classes contains missing"),
    (np.array(["a", 1], dtype=object), ValueError, "classes must be labels of one comparable"),
    ([[0, 1]], ValueError, "classes must have one label per column"),
    ([1, 1], ValueError, "classes must be unique"),
    ("ab", TypeError, "classes"),
    ([1j, 2j], TypeError, "classes"),
])
def test_categorical_classes_are_validated(classes, exc, match):
    with pytest.raises(exc, match=match):
        Categorical([[0.5, 0.5]], classes=classes)


def test_valid_categorical_classes_are_kept_read_only():
    for classes in (["no", "yes"], np.array([3, 7]), [False, True], (0.5, 1.5)):
        src = np.array(classes)
        p = Categorical([[0.1, 0.9]], classes=classes)
        assert_array_equal(p.classes, src)
        assert not p.classes.flags.writeable
        assert_array_equal(p[0].classes, src)


# --------------------------------------------------------------------------------------------
# sampling and temperature scaling: checked before anything is drawn or built

@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("size, exc", [(-1, ValueError), (0, ValueError), (2.5, TypeError),
                                       ("3", TypeError), (True, TypeError),
                                       (np.float64(2.0), TypeError), ([2], TypeError)])
def test_sample_size_is_validated_before_drawing(family, size, exc):
    p = _families()[family]
    rng = np.random.default_rng(0)
    with pytest.raises(exc, match="size"):
        p.sample(random_state=rng, size=size)
    # nothing was drawn from the generator
    assert rng.random() == np.random.default_rng(0).random()


@pytest.mark.parametrize("family", FAMILIES)
def test_sample_accepts_numpy_integer_sizes(family):
    p = _families()[family]
    a = p.sample(random_state=3, size=np.int64(4))
    b = p.sample(random_state=3, size=4)
    assert a.shape[:2] == (4, 2)
    assert_array_equal(a, b)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("T, exc", [(0, ValueError), (-1.0, ValueError), (np.nan, ValueError),
                                    (np.inf, ValueError), ("2", TypeError), (True, TypeError),
                                    (None, TypeError), ([2.0], TypeError), (1 + 0j, TypeError)])
def test_tempering_factor_is_validated(family, T, exc):
    with pytest.raises(exc, match="temperature"):
        _families()[family].tempered(T)


@pytest.mark.parametrize("family", FAMILIES)
def test_tempering_accepts_numpy_scalars(family):
    p = _families()[family]
    ref = p.tempered(2.0)
    for T in (2, np.float32(2.0), np.int64(2), np.array(2.0)):
        q = p.tempered(T)
        for name in ("loc", "scale", "cov", "probs", "weights"):
            if hasattr(ref, name):
                assert_allclose(getattr(q, name), getattr(ref, name), rtol=1e-7)


# --------------------------------------------------------------------------------------------
# other entry points

def test_indexing_with_a_single_bool_is_refused():
    p = Normal([0.0, 1.0], [1.0, 1.0])
    with pytest.raises(TypeError, match="single bool"):
        p[True]
    assert len(p[np.array([True, False])]) == 1


def test_wasserstein_functions_refuse_non_distributions():
    p = Normal([0.0, 1.0], [1.0, 1.0])
    with pytest.raises(TypeError, match="p must be a skcalib distribution"):
        pairwise_wasserstein("x")
    with pytest.raises(TypeError, match="q must be a skcalib distribution"):
        pairwise_wasserstein(p, [[0.0, 1.0]])
    with pytest.raises(TypeError, match="q must be a skcalib distribution"):
        wasserstein_distance(p, np.zeros(2))
    with pytest.raises(TypeError, match="p must be a skcalib distribution"):
        wasserstein_distance("x", "x")


@pytest.mark.parametrize("family", ["normal", "laplace"])
def test_log_pdf_validates_targets(family):
    p = _families()[family]
    with pytest.raises(ValueError, match=r"y must have shape \(2,\)"):
        p.log_pdf([0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="y must be finite"):
        p.log_pdf([np.nan, 1.0])
    with pytest.raises(TypeError, match="y"):
        p.log_pdf(["0", "1"])
    assert_allclose(p.log_pdf(0.5), p.log_pdf([0.5, 0.5]))


def test_mvn_log_pdf_validates_targets():
    p = _families()["mvn"]
    with pytest.raises(ValueError, match="y must have shape"):
        p.log_pdf([[0.0, 1.0]])
    with pytest.raises(ValueError, match="y must be finite"):
        p.log_pdf([[0.0, np.inf], [0.0, 0.0]])


def test_read_only_inputs_are_accepted_and_never_modified():
    loc, scale = np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.5, 2.0])
    W = np.array([[0.2, 0.3, 0.5], [0.5, 0.25, 0.25], [1 / 3, 1 / 3, 1 / 3]])
    for a in (loc, scale, W):
        a.flags.writeable = False
    comps = [Normal(loc, scale), Normal(loc + 1, scale), Normal(loc - 1, 2 * scale)]
    mix = Mixture(W, comps)
    mix.sample(random_state=0, size=3)
    pairwise_wasserstein(mix)
    mix.tempered(1.5).log_pdf(loc)
    assert_array_equal(loc, [0.0, 1.0, 2.0])
    assert_array_equal(scale, [1.0, 0.5, 2.0])
    assert_array_equal(W[0], [0.2, 0.3, 0.5])


def test_expected_kernel_targets_must_be_real_numbers():
    from skcalib.kernels import GaussianKernel

    p = Normal([0.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="y must contain numbers; got strings"):
        p.expected_kernel(GaussianKernel(1.0), ["0.5", "1.5"])
    with pytest.raises(ValueError, match="y must contain real numbers"):
        p.expected_kernel(GaussianKernel(1.0), [0.5 + 1j, 1.5])
    assert_allclose(p.expected_kernel(GaussianKernel(1.0), [0.5, 1.5]),
                    p.expected_kernel(GaussianKernel(1.0), np.array([0.5, 1.5])))
