"""The local (KLCE) floor (``skcalib._problems.local``) against hand-built arrays and a dense
double loop."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skcalib._problems.local import LocalProblem, check_stationary, standardize_features
from skcalib.kernels import ExponentialKernel, GaussianKernel

Y = np.array([1, 0, 1, 0, 1, 1])
P = np.array([0.8, 0.3, 0.6, 0.1, 0.4, 0.7])
X = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 1.0], [1.0, 1.0], [0.5, 1.0], [0.2, 1.0]])


def test_standardize_features_centres_and_scales_with_the_reference():
    Z = standardize_features(X)
    assert_allclose(Z[:, 0], (X[:, 0] - X[:, 0].mean()) / X[:, 0].std())
    assert_array_equal(Z[:, 1], 0.0)  # a constant column is centred only
    ref = np.array([[0.0, 2.0], [2.0, 2.0]])
    assert_allclose(standardize_features(np.array([[1.0, 3.0]]), ref), [[0.0, 1.0]])


def test_check_stationary():
    assert isinstance(check_stationary(None, "kernel"), GaussianKernel)
    k = ExponentialKernel(0.5)
    assert check_stationary(k, "kernel") is k
    with pytest.raises(TypeError, match="^feature_kernel must be None"):
        check_stationary("rbf", "feature_kernel")


def _dense(k, l, A, B, XA, XB):
    """``k(a, b) l(x, x')`` by a double loop (Gaussian kernels ``exp(-|d|^2 / (2 s^2))``)."""
    return np.array([[np.exp(-np.sum((a - b) ** 2) / (2 * k ** 2))
                      * np.exp(-np.sum((xa - xb) ** 2) / (2 * l ** 2))
                      for b, xb in zip(B, XB)] for a, xa in zip(A, XA)])


def test_binary_problem_residuals_and_pair_terms_by_a_double_loop():
    problem = LocalProblem(Y, P, X, kernel=GaussianKernel(0.3), feature_kernel=GaussianKernel(0.7),
                           standardize=False)
    assert problem.binary and len(problem.parts) == 1
    R, Pk = problem.parts[0]
    assert_array_equal(R[:, 0], Y - P)
    assert_array_equal(Pk[:, 0], P)
    K = _dense(0.3, 0.7, P[:, None], P[:, None], X, X)
    n = len(Y)
    rows = np.arange(n)
    assert_allclose(problem.kernel_term(0).block(slice(0, n), slice(0, n)), K, rtol=1e-12)
    H = K * np.outer(Y - P, Y - P)
    assert_allclose(problem.term(0).block(slice(0, n), slice(0, n)), H, rtol=1e-12)
    assert_allclose(problem.term(0).diag(slice(0, n)), H[rows, rows], rtol=1e-12)


def test_multiclass_parts_and_standardised_features():
    y = np.array([0, 1, 2, 1, 0])
    P3 = np.array([[.6, .3, .1], [.2, .5, .3], [.1, .1, .8], [.3, .4, .3], [.5, .25, .25]])
    x = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    onehot = np.eye(3)[y]
    vector = LocalProblem(y, P3, x)
    ((R, Pk),) = vector.parts
    assert_allclose(R, onehot - P3)
    assert_array_equal(Pk, P3)
    assert_allclose(vector.X[:, 0], (x - x.mean()) / x.std())
    assert_array_equal(vector.X_raw[:, 0], x)
    ovr = LocalProblem(y, P3, x, multiclass="one_vs_rest", standardize=False)
    assert len(ovr.parts) == 3
    for c, (Rc, Pc) in enumerate(ovr.parts):
        assert_allclose(Rc[:, 0], onehot[:, c] - P3[:, c])
        assert_array_equal(Pc[:, 0], P3[:, c])
    assert_array_equal(ovr.X[:, 0], x)


def test_refusals():
    with pytest.raises(ValueError, match="X has 2 rows but y_true has 6 samples"):
        LocalProblem(Y, P, X[:2])
    with pytest.raises(ValueError, match="multiclass"):
        LocalProblem(Y, P, X, multiclass="ovo")
    with pytest.raises(TypeError, match="^kernel must be None"):
        LocalProblem(Y, P, X, kernel=1.0)
