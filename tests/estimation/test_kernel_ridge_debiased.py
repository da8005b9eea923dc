"""The debiased-estimate hook of kernel ridge: ``_residual_terms(k, Bt) -> (G, sq)``.

``G`` is the estimated residual at the query rows, a linear smoother ``G = W R`` of the training
residuals; ``sq`` its leave-own-pair-out square ``||W R||^2 - (W**2) ||R||^2`` (row-wise). Here
``W`` is built in closed form from the ``n x n`` kernel matrix (numpy only): two-step
``W = k(q)^T (K + alpha n I)^{-1}``; Kronecker the spectral filter ``d = 1 / sqrt(lam^2 +
alpha n^2)`` in the eigenbasis of ``K``. Nystrom: the same formulas on the Nystrom kernel.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skcalib.estimation import KernelRidgeCalibrationEstimator

MODES = ["binary", "top_label", "classwise", "canonical"]


def _data(n, C, seed, power=2.0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(C), size=n)
    Q = P ** power
    Q /= Q.sum(axis=1, keepdims=True)
    y = (rng.random((n, 1)) > Q.cumsum(axis=1)).sum(axis=1).clip(max=C - 1)
    return P, y


def _problems(P, y, mode):
    """``[(Q, T)]`` of the notion (no ties in continuous data)."""
    n, C = P.shape
    E = np.eye(C)[y]
    if mode == "binary":
        return [(P[:, [1]], E[:, [1]])]
    if mode == "top_label":
        return [(P.max(axis=1)[:, None], E[np.arange(n), P.argmax(axis=1)][:, None])]
    if mode == "classwise":
        return [(P[:, [k]], E[:, [k]]) for k in range(C)]
    return [(P, E)]


def _rbf(A, B, gamma):
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=-1))


def _weights(method, K, Kq, alpha):
    """``W`` (n_query x n_train) of the residual smoother on the kernel matrix ``K``."""
    n = K.shape[0]
    if method == "two_step":
        return np.linalg.solve(K + alpha * n * np.eye(n), Kq).T
    lam, V = np.linalg.eigh(K)
    lam = np.maximum(lam, 0.0)
    d = 1.0 / np.sqrt(lam ** 2 + alpha * n ** 2)
    return Kq.T @ (V * d) @ V.T


def _expected(method, Q, R, Qq, alpha, gamma, landmarks=None):
    K, Kq = _rbf(Q, Q, gamma), _rbf(Q, Qq, gamma)
    if landmarks is not None:  # the Nystrom kernel k_m(a)^T K_mm^+ k_m(b)
        Lm = Q[landmarks]
        pinv = np.linalg.pinv(_rbf(Lm, Lm, gamma), rcond=1e-12, hermitian=True)
        K = _rbf(Q, Lm, gamma) @ pinv @ _rbf(Lm, Q, gamma)
        Kq = _rbf(Q, Lm, gamma) @ pinv @ _rbf(Lm, Qq, gamma)
    W = _weights(method, K, Kq, alpha)
    G = W @ R
    sq = (G ** 2).sum(axis=1) - (W ** 2) @ (R ** 2).sum(axis=1)
    return G, sq


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["kronecker", "two_step"])
@pytest.mark.parametrize("alpha", [1e-1, 1e-3])
def test_residual_terms_equal_the_explicit_smoother(mode, method, alpha):
    C = 2 if mode == "binary" else 3
    Ptr, ytr = _data(30, C, 1)
    Pq, _ = _data(17, C, 2)
    est = KernelRidgeCalibrationEstimator(alpha=alpha, method=method, mode=mode).fit(Ptr, ytr)
    inputs = est._problem_inputs(Pq)
    probs = _problems(Ptr, ytr, mode)
    assert len(inputs) == len(probs)
    for k, ((Q, T), (Qq, _)) in enumerate(zip(probs, _problems(Pq, np.zeros(17, int), mode))):
        G, sq = est._residual_terms(k, inputs[k])
        G_bf, sq_bf = _expected(method, Q, Q - T, Qq, alpha, 0.5)
        scale = (G_bf ** 2).sum(axis=1).max()
        assert G.shape == G_bf.shape and sq.shape == (17,)
        assert_allclose(G, G_bf, rtol=0, atol=1e-10 * np.sqrt(scale))
        assert_allclose(sq, sq_bf, rtol=0, atol=1e-10 * scale)
        # the dropped own-pair terms are real: sq differs from ||G||^2
        assert np.all(sq < (G ** 2).sum(axis=1))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("method", ["kronecker", "two_step"])
def test_residual_terms_nystrom_equal_the_smoother_on_the_nystrom_kernel(mode, method):
    C = 2 if mode == "binary" else 3
    Ptr, ytr = _data(30, C, 3)
    Pq, _ = _data(13, C, 4)
    # a width for which the landmark matrices are well conditioned
    gamma = 5.0 if mode == "canonical" else 1000.0
    alpha, m = 1e-3, 12
    est = KernelRidgeCalibrationEstimator(alpha=alpha, method=method, mode=mode, gamma=gamma,
                                          n_components=m, random_state=5).fit(Ptr, ytr)
    inputs = est._problem_inputs(Pq)
    for k, ((Q, T), (Qq, _)) in enumerate(zip(_problems(Ptr, ytr, mode),
                                              _problems(Pq, np.zeros(13, int), mode))):
        idx = est.problems_[k].landmarks
        assert idx is not None and idx.size == m
        G, sq = est._residual_terms(k, inputs[k])
        G_bf, sq_bf = _expected(method, Q, Q - T, Qq, alpha, gamma, landmarks=idx)
        scale = (G_bf ** 2).sum(axis=1).max()
        assert_allclose(G, G_bf, rtol=0, atol=1e-10 * np.sqrt(scale))
        assert_allclose(sq, sq_bf, rtol=0, atol=1e-10 * scale)
        # a real approximation: the exact kernel's smoother differs
        G_ex, _ = _expected(method, Q, Q - T, Qq, alpha, gamma)
        assert np.abs(G_ex - G).max() > 1e-6 * np.sqrt(scale)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n_components", [None, 15])
def test_two_step_residual_is_the_plugin(mode, n_components):
    # two-step: h(p, p) = ||g(p)||^2 (transform), and G is the plug-in residual of the risk
    C = 2 if mode == "binary" else 3
    Ptr, ytr = _data(40, C, 5)
    Pq, _ = _data(25, C, 6)
    est = KernelRidgeCalibrationEstimator(alpha=1e-3, method="two_step", mode=mode,
                                          n_components=n_components, random_state=0)
    est.fit(Ptr, ytr)
    inputs = est._problem_inputs(Pq)
    total = np.zeros(25)
    for k, Bt in enumerate(inputs):
        G, _ = est._residual_terms(k, Bt)
        assert_allclose(G, est._plugin_residuals(k, Bt), rtol=1e-12, atol=1e-15)
        total += (G ** 2).sum(axis=1)
    assert_allclose(total, est.transform(Pq)[:, 0], rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("method", ["kronecker", "two_step"])
def test_residual_terms_follow_alpha_and_share_the_fit(method):
    Ptr, ytr = _data(40, 3, 7)
    Pq, _ = _data(20, 3, 8)
    est = KernelRidgeCalibrationEstimator(alpha=1e-3, method=method, mode="canonical")
    est.fit(Ptr, ytr)
    Bt = est._problem_inputs(Pq)[0]
    G1, sq1 = est._residual_terms(0, Bt)
    other = est.with_alpha(1e-1)
    G2, sq2 = other._residual_terms(0, Bt)
    fresh = KernelRidgeCalibrationEstimator(alpha=1e-1, method=method, mode="canonical")
    G3, sq3 = fresh.fit(Ptr, ytr)._residual_terms(0, fresh._problem_inputs(Pq)[0])
    assert_allclose(G2, G3, rtol=1e-10, atol=1e-14)
    assert_allclose(sq2, sq3, rtol=1e-10, atol=1e-14)
    assert not np.allclose(G1, G2)  # a larger ridge shrinks the residual
    assert np.abs(G2).sum() < np.abs(G1).sum()
    est.set_params(alpha=1e-1)
    assert_allclose(est._residual_terms(0, Bt)[1], sq2, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="alpha"):
        est.set_params(alpha=0.0)._residual_terms(0, Bt)


def test_kronecker_filter_is_the_diagonal_of_lt():
    # d d^T equals Kronecker's Lt on matching eigen-pairs and is below it elsewhere (AM-GM)
    Ptr, ytr = _data(30, 3, 9)
    est = KernelRidgeCalibrationEstimator(alpha=1e-3, mode="canonical").fit(Ptr, ytr)
    st = est.problems_[0]
    d = est._residual_filter(0)
    Lt = 1.0 / (np.multiply.outer(st.lam, st.lam) + 1e-3 * st.n ** 2)
    assert_allclose(d ** 2, np.diag(Lt), rtol=1e-12)
    assert np.all(np.outer(d, d) <= Lt * (1 + 1e-12))
