"""The kernel floor's internal API (skcalib._problems.kernel and its neighbours), tested directly:
the one dispatch "class probabilities or a predictive distribution?", the resolved kernel, the
pair term (reordered or not), chunking and the random state."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skcalib import skce, ucme
from skcalib._pairwise import u_statistic
from skcalib._problems.estimates import estimate
from skcalib._problems.kernel import (
    KernelProblem,
    check_no_class_options,
    is_regression_prediction,
    prepare_term,
)
from skcalib._problems.kernel_resolution import (
    UCME_MIN_LENGTH_SCALE,
    resolve_prediction_kernel,
)
from skcalib._problems.terms import DistributionTerm, ResidualTerm
from skcalib._problems.ucme import ucme_witness_chunks
from skcalib._validation import ClassificationData
from skcalib.distributions import Categorical, Laplace, Mixture, MultivariateNormal, Normal
from skcalib.kernels import (
    ExponentialKernel,
    GaussianKernel,
    TensorProductKernel,
    WassersteinKernel,
    tensor,
)

RNG = np.random.default_rng(0)
N = 40
PROBS = RNG.dirichlet([1.0, 1.0, 1.0], size=N)
LABELS = np.array([RNG.choice(3, p=p) for p in PROBS])
MU = RNG.normal(size=N)
TARGETS = MU + RNG.normal(size=N)


def _families():
    """Every family of predictive distributions of real targets, with matching targets."""
    cov = np.stack([np.eye(2) * (1.0 + 0.1 * i) for i in range(N)])
    means2 = np.column_stack([MU, -MU])
    return {
        "Normal": (Normal(MU, 1.0 + 0.1 * np.abs(MU)), TARGETS),
        "Laplace": (Laplace(MU, 1.0), TARGETS),
        "MultivariateNormal": (MultivariateNormal(means2, cov), means2 + 0.5),
        "Mixture": (Mixture([0.3, 0.7], [Normal(MU, 1.0), Normal(MU + 1.0, 2.0)]), TARGETS),
    }


FAMILIES = _families()


# --------------------------------------------------------------------------------------------
# the dispatch


@pytest.mark.parametrize("y_pred", [PROBS, Categorical(PROBS, [0, 1, 2])],
                         ids=["array", "Categorical"])
def test_class_probabilities_become_classification_data(y_pred):
    problem = KernelProblem(LABELS, y_pred)
    assert not problem.is_distribution
    assert isinstance(problem.data, ClassificationData)
    assert problem.dist is None and problem.y is None
    assert problem.n_samples == N
    assert_allclose(problem.predictions, PROBS)
    assert problem.preferred_chunk_size is None


def test_binary_column_goes_through_the_class_validation():
    problem = KernelProblem(["a", "b", "b"], [0.2, 0.7, 0.9], pos_label="b")
    assert_array_equal(problem.data.classes, ["a", "b"])
    assert_allclose(problem.data.probs[:, 1], [0.2, 0.7, 0.9])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_distribution_family_keeps_the_distribution_and_checked_targets(family):
    dist, y = FAMILIES[family]
    assert is_regression_prediction(dist)
    problem = KernelProblem(y, dist)
    assert problem.is_distribution
    assert problem.data is None
    assert problem.dist is dist
    assert problem.predictions is dist
    assert problem.y.dtype == np.float64 and problem.y.shape == np.shape(y)
    assert problem.n_samples == N


def test_categorical_is_not_a_regression_prediction():
    assert not is_regression_prediction(Categorical(PROBS, [0, 1, 2]))
    assert not is_regression_prediction(PROBS)


def test_full_covariances_prefer_smaller_tiles():
    A = RNG.normal(size=(N, 3, 3))
    cov = A @ np.swapaxes(A, 1, 2) + 3 * np.eye(3)
    problem = KernelProblem(np.zeros((N, 3)), MultivariateNormal(np.zeros((N, 3)), cov))
    assert isinstance(problem.preferred_chunk_size, int)


@pytest.mark.parametrize("option", ["labels", "pos_label"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_class_options_are_refused_for_distributions(family, option):
    dist, y = FAMILIES[family]
    with pytest.raises(ValueError, match=f"{option} is only meaningful for class probabilities; "
                                         f"y_pred is a {type(dist).__name__} distribution"):
        KernelProblem(y, dist, **{option: 1})
    with pytest.raises(ValueError, match=f"{option} is only meaningful.*X is a"):
        KernelProblem(y, dist, y_pred_name="X", **{option: 1})


def test_check_no_class_options_accepts_none():
    check_no_class_options(None, None, "y_pred", Normal(0.0, 1.0))


def test_empty_distributions_are_refused():
    empty = Normal(np.zeros(0), np.ones(0))
    with pytest.raises(ValueError, match=r"^y_pred is empty\.$"):
        KernelProblem(np.zeros(0), empty)
    with pytest.raises(ValueError, match=r"y_pred is empty: found a Normal with 0 sample"):
        KernelProblem(np.zeros(0), empty, require_rows=False)


def test_targets_are_checked_with_the_given_names():
    dist, _ = FAMILIES["Normal"]
    with pytest.raises(ValueError, match="y"):
        KernelProblem(np.zeros(N + 1), dist, y_true_name="y", y_pred_name="X")
    with pytest.raises(ValueError, match="y_true must contain numbers"):
        KernelProblem(np.array(["a"] * N), dist)


def test_classes_only_problems_refuse_distributions():
    with pytest.raises(TypeError, match="needs predicted class probabilities"):
        KernelProblem(TARGETS, FAMILIES["Normal"][0], accept_distributions=False)


# --------------------------------------------------------------------------------------------
# the resolved kernel and the pair term


def test_class_probabilities_get_the_default_kernel_of_skce():
    problem = KernelProblem(LABELS, PROBS)
    k = problem.resolve(None)
    assert k is problem.kernel
    assert isinstance(k, TensorProductKernel)
    assert isinstance(k.pred_kernel, GaussianKernel)
    assert isinstance(k.pred_kernel.length_scale, float)
    term = problem.term()
    assert isinstance(term, ResidualTerm)
    assert estimate(term, "unbiased") == skce(LABELS, PROBS)
    assert estimate(term, "biased") == skce(LABELS, PROBS, estimator="biased")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_skce_from_the_problem_equals_the_public_skce(family):
    dist, y = FAMILIES[family]
    problem = KernelProblem(y, dist, random_state=3, n_mc_samples=10)
    k = problem.resolve(None)
    assert isinstance(k.pred_kernel, WassersteinKernel)
    expected_target = ExponentialKernel if family == "Laplace" else GaussianKernel
    assert isinstance(k.target_kernel, expected_target)
    term = problem.term()
    assert isinstance(term, DistributionTerm)
    value = u_statistic(term, chunk_size=problem.preferred_chunk_size)
    assert value == skce(y, dist, random_state=3, n_mc_samples=10)


def test_prepare_term_is_the_problem_in_one_call():
    dist, y = FAMILIES["Normal"]
    kernel = tensor(WassersteinKernel("median"), GaussianKernel("median"))
    term, chunk = prepare_term(y, dist, kernel, random_state=0)
    assert chunk is None
    assert u_statistic(term) == skce(y, dist, kernel=kernel, random_state=0)


def test_the_ucme_floor_applies_to_median_length_scales_only():
    # most predictions (almost) equal: a tiny median distance (naive Bayes-like)
    p0 = np.concatenate([1e-3 * RNG.uniform(size=N - 5), RNG.uniform(size=5)])
    sharp = np.column_stack([1.0 - p0, p0])
    problem = KernelProblem(p0 > 0.5, sharp)
    assert problem.resolve(None).pred_kernel.length_scale < UCME_MIN_LENGTH_SCALE
    assert problem.resolve(None, ucme=True).pred_kernel.length_scale == UCME_MIN_LENGTH_SCALE
    assert problem.resolve(GaussianKernel(0.01), ucme=True).pred_kernel.length_scale == 0.01
    # the problem's resolution is the module's one entry point
    k = resolve_prediction_kernel(None, problem.predictions, None, ucme=True)
    assert k.pred_kernel.length_scale == UCME_MIN_LENGTH_SCALE


def test_wrong_kernels_are_refused_for_each_kind_of_prediction():
    with pytest.raises(TypeError, match="WassersteinKernel acts on predictive distributions"):
        KernelProblem(LABELS, PROBS).resolve(WassersteinKernel())
    dist, y = FAMILIES["Normal"]
    with pytest.raises(TypeError, match="prediction kernel must be a WassersteinKernel"):
        KernelProblem(y, dist).resolve(tensor(GaussianKernel(), GaussianKernel()))


# --------------------------------------------------------------------------------------------
# reordering and the random state


def _terms_equal(t1, t2, n):
    a = slice(0, n)
    assert_allclose(t1.block(a, a), t2.block(a, a), rtol=1e-13, atol=1e-15)
    assert_allclose(t1.diag(a), t2.diag(a), rtol=1e-13, atol=1e-15)


def test_term_of_an_order_is_the_term_of_reordered_class_probabilities():
    order = RNG.permutation(N)
    problem = KernelProblem(LABELS, PROBS)
    problem.resolve(GaussianKernel(0.3))
    other = KernelProblem(LABELS[order], PROBS[order])
    other.resolve(GaussianKernel(0.3))
    _terms_equal(problem.term(order), other.term(), N)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_term_of_an_order_is_the_term_of_reordered_distributions(family):
    dist, y = FAMILIES[family]
    order = RNG.permutation(N)
    kernel = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
    problem = KernelProblem(y, dist, random_state=0)
    problem.resolve(kernel)
    other = KernelProblem(y[order], dist[order], random_state=0)
    other.resolve(kernel)
    _terms_equal(problem.term(order), other.term(), N)


def test_the_generator_is_made_once_and_only_when_used():
    rs = np.random.RandomState(0)
    state = rs.get_state()[1].copy()
    problem = KernelProblem(LABELS, PROBS, random_state=rs)
    problem.resolve(None)  # n <= max_samples: no subsample drawn
    assert_array_equal(rs.get_state()[1], state)  # no generator made yet
    rng = problem.rng
    assert problem.rng is rng
    assert not np.array_equal(rs.get_state()[1], state)  # check_rng seeded it from rs
    gen = np.random.default_rng(1)
    assert KernelProblem(LABELS, PROBS, random_state=gen).rng is gen


def test_ucme_witness_chunks_is_the_public_ucme():
    for y, pred in [(LABELS, PROBS), FAMILIES["Normal"][::-1]]:
        chunks, n, J, w = ucme_witness_chunks(y, pred, random_state=2, n_test_locations=4)
        assert (n, J, w) == (N, 4, None)
        W = np.vstack([block for _, block in chunks])
        assert W.shape == (N, 4)
        assert_allclose(np.mean(np.mean(W, axis=0) ** 2),
                        ucme(y, pred, random_state=2, n_test_locations=4), rtol=1e-12)
