"""The UCME's witness (Widmann et al. 2021, Appendix C): test locations and witness rows.

For test locations ``T_j = (t_j, t^Y_j)`` each sample has the witness row
``W_ij = k_P(t_j, P_i) [k_Y(t^Y_j, Y_i) - E_{Z ~ P_i} k_Y(t^Y_j, Z)]``; the UCME is the mean
witness' squared norm over ``J`` (:func:`skcalib._pairwise.witness_statistic`) and the CME test
(:func:`skcalib.stats.ucme_test`) Hotelling's statistic on the rows.

* :func:`check_ucme_params` -- the UCME's options, validated before any work;
* :func:`ucme_witness_chunks` -- validate ``(y_true, y_pred)`` through
  :class:`~skcalib._problems.kernel.KernelProblem`, resolve the test locations and the kernel
  (the UCME's floor on a median length scale of class probabilities), and return the row chunks
  of the witness; shared by :func:`skcalib.ucme` and :func:`skcalib.stats.ucme_test`;
* class probabilities: :func:`draw_test_locations` (uniform Dirichlet predictions, uniform
  classes), :func:`check_test_locations`, :func:`resolve_test_locations`, and for validated data
  and a resolved kernel :func:`ucme_witness` (row chunks), :func:`ucme_values` (value and
  shares) and :func:`ucme_value` (value only, streaming);
* distributions: :func:`draw_distribution_test_locations` (predictions chosen among the data's,
  one target drawn from each), :func:`resolve_distribution_test_locations`,
  :func:`ucme_distribution_witness` and :func:`ucme_distribution_value`.
"""

import warnings

import numpy as np

from .. import _pairwise
from .._expectations import check_targets, target_ops
from .._validation import (
    check_labels_and_probabilities,
    check_n_resamples,
    check_random_state_param,
    check_rng,
    check_scalar_param,
    MAX_MC_SAMPLES,
    MAX_TEST_LOCATIONS,
)
from .estimates import check_weights
from .kernel import KernelProblem
from .terms import class_residuals, preferred_chunk_size

__all__ = ["check_test_locations", "check_ucme_params", "draw_distribution_test_locations",
           "draw_test_locations", "resolve_distribution_test_locations",
           "resolve_test_locations", "ucme_distribution_value", "ucme_distribution_witness",
           "ucme_value", "ucme_values", "ucme_witness", "ucme_witness_chunks"]


def draw_test_locations(n_locations, n_classes, random_state=None):
    """Random test locations: predictions from Dirichlet(1, ..., 1), class indices uniform."""
    rng = check_rng(random_state)
    P = rng.dirichlet(np.ones(n_classes), size=n_locations)
    y = rng.integers(n_classes, size=n_locations)
    return P, y


def check_test_locations(test_predictions, test_targets, data, pos_label=None):
    """Validate given test locations against the classes of ``data``; targets -> class indices."""
    if test_predictions is None or test_targets is None:
        raise ValueError("test_predictions and test_targets must be given together.")
    tdata = check_labels_and_probabilities(
        test_targets, test_predictions, labels=data.classes, pos_label=pos_label,
        prob_name="test_predictions", label_name="test_targets",
    )
    return tdata.probs, tdata.y


def ucme_witness(data, kernel, test_P, test_y, *, chunk_size=None):
    """Per-sample witness values ``W[i, j] = k_pred(p_i, t_j) * ((e_{y_i} - p_i)^T K_Y)[t^Y_j]``.

    Returned as a generator of row chunks (memory ``O(chunk_size * J)``).
    """
    T = _pairwise._chunk_size(chunk_size)
    _, RK = class_residuals(data, kernel)
    prep = kernel.pred_kernel._prepare(data.probs)
    prep_t = prep.like(test_P)
    n = data.n_samples
    J = test_P.shape[0]
    for s in range(0, n, T):
        a = slice(s, min(s + T, n))
        Kt = prep.block(a, slice(0, J), prep_t)
        Kt *= RK[a][:, test_y]
        yield a, Kt


def ucme_values(data, kernel, test_P, test_y, *, chunk_size=None, sample_weight=None):
    """``(UCME^2, per-sample contributions)`` at the given test locations (the contributions'
    weighted mean is the value)."""
    chunks = ucme_witness(data, kernel, test_P, test_y, chunk_size=chunk_size)
    return _pairwise.witness_statistic(chunks, data.n_samples, test_P.shape[0],
                                       weights=sample_weight)


def ucme_value(data, kernel, test_P, test_y, *, chunk_size=None, sample_weight=None):
    """``UCME^2`` only, streaming over row chunks; the mean witness is weighted by
    ``sample_weight`` (``sum_i w_i W_ij / sum_i w_i``)."""
    chunks = ucme_witness(data, kernel, test_P, test_y, chunk_size=chunk_size)
    return _pairwise.witness_statistic(chunks, data.n_samples, test_P.shape[0],
                                       weights=sample_weight, contributions=False)[0]


def ucme_witness_chunks(y_true, y_pred, *, kernel=None, test_predictions=None,
                        test_targets=None, n_test_locations=10, labels=None, pos_label=None,
                        random_state=None, n_mc_samples=100, chunk_size=None,
                        sample_weight=None):
    """Validate the data of :func:`skcalib.ucme` (its options are checked by
    :func:`check_ucme_params`), resolve the test locations and the kernel, and return
    ``(chunks, n_samples, J, weights)``: a generator of row chunks ``(rows, W[rows])`` of the
    ``n x J`` witness matrix (class probabilities: :func:`ucme_witness`; distributions:
    :func:`ucme_distribution_witness`) and the validated ``sample_weight``. Shared by
    :func:`skcalib.ucme` and :func:`skcalib.stats.ucme_test`, so that both see the same witness
    for the same ``random_state``."""
    problem = KernelProblem(y_true, y_pred, labels=labels, pos_label=pos_label,
                            random_state=random_state, n_mc_samples=n_mc_samples,
                            require_rows=False)
    w = check_weights(sample_weight, problem.n_samples)
    if problem.is_distribution:
        # The kernel first, then the test locations, from one generator.
        k = problem.resolve(kernel)
        test_P, test_y = resolve_distribution_test_locations(
            problem.dist, test_predictions, test_targets, n_test_locations, problem.rng)
        chunks = ucme_distribution_witness(problem.dist, problem.y, k, test_P, test_y,
                                           n_mc_samples=n_mc_samples, random_state=problem.rng,
                                           chunk_size=chunk_size)
        return chunks, problem.n_samples, test_P.n_samples, w
    # The test locations first, then the kernel; both get random_state itself (a given
    # RandomState is advanced only when test locations are drawn).
    test_P, test_y = resolve_test_locations(problem.data, test_predictions, test_targets,
                                            n_test_locations, pos_label, random_state)
    k = problem.resolve(kernel, ucme=True)
    chunks = ucme_witness(problem.data, k, test_P, test_y, chunk_size=chunk_size)
    return chunks, problem.n_samples, test_P.shape[0], w


def check_ucme_params(*, n_test_locations=10, random_state=None, n_mc_samples=100,
                      chunk_size=None):
    """Validate the UCME's options before any work (whether or not the code path uses them)."""
    check_n_resamples(n_test_locations, "n_test_locations", max_val=MAX_TEST_LOCATIONS)
    check_random_state_param(random_state)
    check_n_resamples(n_mc_samples, "n_mc_samples", max_val=MAX_MC_SAMPLES)
    check_scalar_param(chunk_size, "chunk_size", min_val=1, allow_none=True)


def resolve_test_locations(data, test_predictions, test_targets, n_test_locations, pos_label,
                           random_state):
    """The UCME's test locations for class probabilities ``(P, class indices)``: drawn with
    ``random_state`` if both ``test_predictions`` and ``test_targets`` are None, else the given
    ones validated against the classes of ``data``."""
    if test_predictions is None and test_targets is None:
        check_n_resamples(n_test_locations, "n_test_locations", max_val=MAX_TEST_LOCATIONS)
        return draw_test_locations(n_test_locations, data.n_classes, random_state)
    return check_test_locations(test_predictions, test_targets, data, pos_label)


def draw_distribution_test_locations(dist, n_locations, random_state=None):
    """Test locations for the UCME of distribution predictions: ``J`` predictions chosen at random
    among the data's (without replacement when possible) and one target drawn from each."""
    rng = check_rng(random_state)
    n = dist.n_samples
    idx = rng.choice(n, n_locations, replace=n_locations > n)
    tP = dist[idx]
    return tP, tP.sample(random_state=rng)


def resolve_distribution_test_locations(y_pred, test_predictions, test_targets,
                                        n_test_locations, rng, name="y_pred"):
    """The UCME's test locations for distribution predictions: drawn with ``rng`` if both
    ``test_predictions`` and ``test_targets`` are None, else the validated given ones (copies, so
    that nothing keeps a view of the caller's arrays)."""
    if test_predictions is None and test_targets is None:
        check_scalar_param(n_test_locations, "n_test_locations", min_val=1)
        return draw_distribution_test_locations(y_pred, n_test_locations, rng)
    if test_predictions is None or test_targets is None:
        raise ValueError("test_predictions and test_targets must be given together.")
    if type(test_predictions) is not type(y_pred) or test_predictions.dim != y_pred.dim:
        raise TypeError(
            "test_predictions must be a distribution of the same family and dimension as "
            f"{name} ({type(y_pred).__name__}); got {test_predictions!r}."
        )
    test_P = test_predictions[np.arange(test_predictions.n_samples)]
    test_y = check_targets(test_targets, test_P, name="test_targets")
    return test_P, np.array(test_y, copy=True)


def ucme_distribution_witness(dist, y, kernel, test_P, test_y, *, n_mc_samples=100,
                              random_state=None, chunk_size=None):
    """Row chunks ``(rows, W[rows])`` of the witness matrix
    ``W[i, j] = k_P(p_i, t_j) [k_Y(t^Y_j, y_i) - e1(p_i, t^Y_j)]`` of distribution predictions, as
    a generator (memory ``O(chunk J)``); the target ops (and the Monte-Carlo fallback's draws) are
    made before it is returned."""
    ops = target_ops(dist, y, kernel.target_kernel, n_mc_samples=n_mc_samples,
                     random_state=random_state)
    prep = kernel.pred_kernel._prepare(dist)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prep_t = prep.like(test_P)
    tY = ops.targets(test_y)
    n, J = dist.n_samples, test_P.n_samples
    T = _pairwise._chunk_size(chunk_size or preferred_chunk_size(dist))
    return ((a, ops.witness(prep.log_block(a, slice(0, J), prep_t), a, tY))
            for a in (slice(s, min(s + T, n)) for s in range(0, n, T)))


def ucme_distribution_value(dist, y, kernel, test_P, test_y, *, n_mc_samples=100,
                            random_state=None, chunk_size=None, sample_weight=None,
                            contributions=True):
    """``UCME^2`` and per-sample contributions for distribution predictions (None, streaming in
    memory ``O(chunk J)``, if ``contributions=False``).

    With ``sample_weight`` the mean witness is ``sum_i w_i W_ij / sum_i w_i`` and the
    contributions' weighted mean is the value."""
    chunks = ucme_distribution_witness(dist, y, kernel, test_P, test_y, n_mc_samples=n_mc_samples,
                                       random_state=random_state, chunk_size=chunk_size)
    return _pairwise.witness_statistic(chunks, dist.n_samples, test_P.n_samples,
                                       weights=sample_weight, contributions=contributions)
