"""Exact optimal transport between batches of weight vectors: the mixture Wasserstein distance.

:func:`_transport_cost` (used by :meth:`Mixture._w2_squared`) is exact on every path: a
permutation search when the weights are equal and the numbers of components agree (up to
``_MAX_PERMUTATION_COMPONENTS``), closed forms when either side has two components, a batched
transportation simplex (certified optimal by its reduced costs) otherwise, and one sparse
linear program (HiGHS) for the rows the simplex leaves (never in practice).
"""

import itertools

import numpy as np
from scipy import optimize, sparse


_MAX_PERMUTATION_COMPONENTS = 6
_TRANSPORT_CHUNK = 16384


def _transport_cost(a, b, cost):
    """Exact optimal-transport cost ``min_w sum w_kl cost_kl`` for batches of weight vectors.

    ``a`` (n, M) and ``b`` (n, Mq) are the marginals (rows summing to one), ``cost`` (n, M, Mq).
    Every path is exact (no iterative approximation): one component on either side is a product
    coupling; uniform weights with equal counts are an assignment problem (Birkhoff), solved by
    enumerating permutations; two components on one side are a fractional knapsack (closed form
    after sorting); otherwise a batched transportation simplex runs to a certified optimum.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n, M, Mq = cost.shape
    if n == 0:
        return np.zeros(0)
    if M == 1 or Mq == 1:
        return np.einsum("nk,nl,nkl->n", a, b, cost)
    # Rows may sum to one only within sqrt(eps); transport needs equal masses.
    a = a / a.sum(axis=1, keepdims=True)
    b = b / b.sum(axis=1, keepdims=True)
    out = _transport_cost_normalised(a, b, cost)
    if M == Mq:
        # The identity plan is feasible where both sides have the same weights: its cost (0 for
        # identical rows) bounds the optimum, which the solvers reach only to within rounding
        # (a mixture's distance to itself would be ~1e-8 instead of 0).
        same = np.all(a == b, axis=1)
        if np.any(same):
            diag = np.einsum("nk,nkk->n", a[same], cost[same])
            out[same] = np.minimum(out[same], diag)
    return np.maximum(out, 0.0)


def _transport_cost_normalised(a, b, cost):
    """:func:`_transport_cost` for marginals that sum to one exactly."""
    n, M, Mq = cost.shape
    equal = (M == Mq and np.allclose(a, 1.0 / M, rtol=0, atol=1e-12)
             and np.allclose(b, 1.0 / M, rtol=0, atol=1e-12))
    if equal and M <= _MAX_PERMUTATION_COMPONENTS:
        # Birkhoff: with uniform weights an optimal plan is a permutation; enumerate them.
        best = np.full(n, np.inf)
        cols = np.arange(M)
        for perm in itertools.permutations(range(M)):
            np.minimum(best, cost[:, cols, perm].sum(axis=1), out=best)
        return best / M
    if M == 2:
        return _transport_two_rows(a, b, cost)
    if Mq == 2:
        return _transport_two_rows(b, a, np.swapaxes(cost, 1, 2))
    out = np.empty(n)
    for s in range(0, n, _TRANSPORT_CHUNK):
        sl = slice(s, s + _TRANSPORT_CHUNK)
        out[sl] = _transport_simplex(a[sl], b[sl], cost[sl])
    return out


def _transport_two_rows(a, b, cost):
    """Closed form for two sources: a fractional knapsack.

    With ``w`` the mass source 0 sends (``0 <= w_l <= b_l``, ``sum_l w_l = a_0``) and source 1
    the rest, the cost is ``sum_l cost_1l b_l + sum_l w_l (cost_0l - cost_1l)``: source 0 fills
    the targets in increasing order of ``cost_0l - cost_1l``. For 2 x 2 this is the closed form on
    the one-dimensional transport polytope (the end point chosen by the sign of
    ``cost_00 - cost_01 - cost_10 + cost_11``).
    """
    d = cost[:, 0, :] - cost[:, 1, :]
    order = np.argsort(d, axis=1, kind="stable")
    bs = np.take_along_axis(b, order, axis=1)
    before = np.cumsum(bs, axis=1) - bs
    w = np.clip(a[:, :1] - before, 0.0, bs)
    return (np.einsum("nl,nl->n", cost[:, 1, :], b)
            + np.einsum("nl,nl->n", w, np.take_along_axis(d, order, axis=1)))


def _transport_lp(a, b, cost):
    """The guard of :func:`_transport_simplex` (pairs not certified optimal after its iteration
    cap; never reached in the tests but by forcing it): one sparse linear program for the whole
    batch (block-diagonal marginal constraints, HiGHS), whose blocks are the separate transport
    problems; each block of the optimal plan is optimal for its pair."""
    n, M, Mq = cost.shape
    one = np.vstack([np.kron(np.eye(M), np.ones(Mq)), np.kron(np.ones(M), np.eye(Mq))])[:-1]
    A_eq = sparse.kron(sparse.identity(n, format="csr"), sparse.csr_matrix(one), format="csr")
    b_eq = np.concatenate([a, b[:, :-1]], axis=1).ravel()
    c = cost.reshape(-1)
    res = optimize.linprog(c, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    if res.status != 0:  # pragma: no cover - the (normalised) marginals always admit a plan
        raise RuntimeError(f"optimal transport failed: {res.message}")
    x = np.maximum(res.x, 0.0).reshape(n, M * Mq)
    return np.einsum("nk,nk->n", x, cost.reshape(n, M * Mq))


_SIMPLEX_DANTZIG_ITERATIONS = 50
_SIMPLEX_MAX_ITERATIONS = 500


def _transport_simplex(a, b, cost):
    """Batched transportation simplex (the network simplex on the bipartite graph), exact.

    Every pair starts from a least-cost basis (a spanning tree of the bipartite graph
    rows x columns with ``M + Mq - 1`` cells) and pivots until no reduced cost
    ``cost_kl - u_k - v_l`` is below ``-1e-12 * max|cost|``; that certifies optimality (by
    duality the cost is then within that tolerance of the optimum). The entering cell is the most
    negative reduced cost (Dantzig), switching to Bland's rule (first negative cell, first
    blocking cell) after a few dozen pivots so that degenerate pivots cannot cycle. Arrays keep
    the batch on the last axis and each step is vectorised over the pairs not yet optimal.
    """
    n, M, Mq = cost.shape
    K = M * Mq
    c = np.ascontiguousarray(np.moveaxis(cost.reshape(n, K), 0, -1))  # (K, n)
    x, basis = _least_cost_basis(a.T, b.T, c.reshape(M, Mq, n))
    x, basis = x.reshape(K, n), basis.reshape(K, n)
    tol = 1e-12 * np.abs(c).max(axis=0)
    out = np.empty(n)
    act = np.arange(n)
    for it in range(_SIMPLEX_MAX_ITERATIONS):
        u, v, parent, depth = _tree_potentials(basis.reshape(M, Mq, -1), c.reshape(M, Mq, -1))
        r = (c.reshape(M, Mq, -1) - u[:, None, :] - v[None, :, :]).reshape(K, -1)
        r[basis] = 0.0
        neg = r < -tol
        done = ~neg.any(axis=0)
        if np.any(done):
            out[act[done]] = np.einsum("kn,kn->n", x[:, done], c[:, done])
            keep = ~done
            act, x, basis, c, tol = act[keep], x[:, keep], basis[:, keep], c[:, keep], tol[keep]
            r, neg, parent, depth = r[:, keep], neg[:, keep], parent[:, keep], depth[:, keep]
            if act.size == 0:
                break
        m = act.size
        cols = np.arange(m)
        enter = r.argmin(axis=0) if it < _SIMPLEX_DANTZIG_ITERATIONS else neg.argmax(axis=0)
        p, q = np.divmod(enter, Mq)
        S = _cycle_signs(p, q, parent, depth, M, Mq).reshape(K, m)
        S[enter, cols] = 1.0
        blocking = np.where(S < 0, x, np.inf)
        leave = blocking.argmin(axis=0)  # the first blocking cell among ties (Bland)
        theta = blocking[leave, cols]
        x += theta * S
        x[leave, cols] = 0.0
        basis[enter, cols] = True
        basis[leave, cols] = False
    if act.size:  # Bland's rule terminates; a guard against rounding loops (tests force it)
        out[act] = _transport_lp(a[act], b[act], cost[act])
    return out


def _least_cost_basis(a, b, c):
    """Initial basic feasible plans by the least-cost rule: ``M + Mq - 1`` steps, each giving the
    cheapest open cell as much as its row and column allow and closing one line (both on the
    last step), so that the basic cells form a spanning tree. ``a`` (M, n), ``b`` (Mq, n),
    ``c`` (M, Mq, n)."""
    M, Mq, n = c.shape
    x = np.zeros((M, Mq, n))
    basis = np.zeros((M, Mq, n), dtype=bool)
    ra, rb = a.copy(), b.copy()
    open_r = np.ones((M, n), dtype=bool)
    open_c = np.ones((Mq, n), dtype=bool)
    cols = np.arange(n)
    for step in range(M + Mq - 1):
        masked = np.where(open_r[:, None, :] & open_c[None, :, :], c, np.inf).reshape(M * Mq, n)
        i, j = np.divmod(masked.argmin(axis=0), Mq)
        t = np.minimum(ra[i, cols], rb[j, cols])
        x[i, j, cols] = t
        basis[i, j, cols] = True
        ra[i, cols] -= t
        rb[j, cols] -= t
        row_min = ra[i, cols] <= 0.0
        more_r = open_r.sum(axis=0) > 1
        more_c = open_c.sum(axis=0) > 1
        close_r = (row_min & more_r) | ~more_c
        close_c = ~close_r | ~more_r
        open_r[i[close_r], cols[close_r]] = False
        open_c[j[close_c], cols[close_c]] = False
    return x, basis


def _tree_potentials(basis, c):
    """Dual potentials ``u_k + v_l = cost_kl`` on the basic cells (``u_0 = 0``) and the basis
    tree rooted at row 0: ``parent`` and ``depth`` of every node (rows ``0..M-1``, then
    columns ``M..M+Mq-1``). Batch on the last axis."""
    M, Mq, m = c.shape
    u = np.zeros((M, m))
    v = np.zeros((Mq, m))
    known_u = np.zeros((M, m), dtype=bool)
    known_u[0] = True
    known_v = np.zeros((Mq, m), dtype=bool)
    parent = np.full((M + Mq, m), -1, np.intp)
    depth = np.zeros((M + Mq, m), np.intp)
    for _ in range(M + Mq):  # one round per level of the tree at least
        for l in range(Mq):
            for k in range(M):
                new = basis[k, l] & known_u[k] & ~known_v[l]
                if new.any():
                    v[l] = np.where(new, c[k, l] - u[k], v[l])
                    parent[M + l] = np.where(new, k, parent[M + l])
                    depth[M + l] = np.where(new, depth[k] + 1, depth[M + l])
                    known_v[l] |= new
        for k in range(M):
            for l in range(Mq):
                new = basis[k, l] & known_v[l] & ~known_u[k]
                if new.any():
                    u[k] = np.where(new, c[k, l] - v[l], u[k])
                    parent[k] = np.where(new, M + l, parent[k])
                    depth[k] = np.where(new, depth[M + l] + 1, depth[k])
                    known_u[k] |= new
        if known_u.all() and known_v.all():
            return u, v, parent, depth
    # pragma: no cover - the least-cost rule and the pivots keep the basis a spanning tree
    raise RuntimeError("internal error: a transport basis is not a spanning tree.")


def _cycle_signs(p, q, parent, depth, M, Mq):
    """Signs (+1/-1) of the basic cells on the cycle that cell ``(p, q)`` closes in the tree.

    The cycle is the entering cell (+) followed by the tree path from column ``q`` back to row
    ``p``, whose cells alternate -, +, ..., - ; an edge is identified by its child node ``c``,
    and its sign is - when the distance from the path's end (``p`` or ``q``) to ``c`` is even.
    Batch on the last axis; returns ``(M, Mq, m)``."""
    m = p.size
    S = np.zeros((M, Mq, m))
    cols = np.arange(m)
    ends = (p, M + q)
    nodes = [p.copy(), M + q]
    for _ in range(M + Mq):
        same = nodes[0] == nodes[1]
        if same.all():
            break
        d0 = depth[nodes[0], cols]
        d1 = depth[nodes[1], cols]
        for side, move in ((0, (d0 >= d1) & ~same), (1, (d1 >= d0) & ~same)):
            idx = np.flatnonzero(move)
            child = nodes[side][idx]
            par = parent[child, idx]
            dist = depth[ends[side][idx], idx] - depth[child, idx]
            is_row = child < M
            k = np.where(is_row, child, par)
            l = np.where(is_row, par, child) - M
            S[k, l, idx] = np.where(dist % 2 == 0, -1.0, 1.0)
            nodes[side][idx] = par
    return S
