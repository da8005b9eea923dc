"""Kernel ridge calibration estimation functions ``h_kkr`` and ``h_ukkr`` (Gruber & Bach, Sec. 4.2).

Both are computed in the eigenbasis of the training kernel matrix ``K = Q diag(lam) Q^T``, which
does not depend on the ridge: one decomposition per fit serves every ``alpha`` (``with_alpha``,
``risk_path``). With ``S = Q^T R`` (projected training residuals, ``n x m``) and
``B(p) = Q^T k(p)`` (projected kernel vector of a query):

* Kronecker KRR (Eq. 29): ``h(p, p') = B(p)^T (Lt * S S^T) B(p')`` with
  ``Lt_ij = 1 / (lam_i lam_j + alpha n^2)``; ``K (x) K`` is never formed. ``Lt`` is indefinite, so
  ``h(p, p)`` can be negative.
* Two-step KRR (Eq. 32): ``r(p) = B(p)^T diag(1 / (lam + alpha n)) S`` -- the kernel ridge
  prediction of the residual ``p - pi(p)`` -- and ``h(p, p') = <r(p), r(p')>`` (diagonal ``>= 0``).

With ``n_components = m`` the kernel is replaced by its Nystrom approximation on ``m`` training
points chosen at random: ``K ~ Phi Phi^T`` with ``Phi = K_nm U s^{-1/2}`` (``K_mm = U diag(s) U^T``),
whose eigenbasis comes from the thin SVD ``Phi = Q Sigma V^T`` (via a QR of ``Phi``) in
``O(n m^2)``; the formulas above
are then exact for the approximated kernel (every ``k(p)`` lies in the span of ``Q``).

Debiased estimates (``_residual_terms``). The estimated residual is the linear smoother
``g(p) = B(p)^T diag(d) S = sum_a w_a(p) R_a`` of the training residuals, with weights
``w(p) = Q diag(d) B(p)``; its leave-own-pair-out square is
``||g(p)||^2 - sum_a w_a(p)^2 ||R_a||^2 = ||g(p)||^2 - (d B)^T M (d B)`` with the ridge-free
``M = Q^T diag(||R_a||^2) Q`` (rank x rank, once per fit). Two-step: ``d = 1 / (lam + alpha n)``
(``g`` is the kernel ridge prediction of the residual). Kronecker KRR's ``h`` is not of plug-in
form; its debiased estimates use ``d = 1 / sqrt(lam^2 + alpha n^2)``, whose rank-one filter
``d d^T`` equals Kronecker's ``Lt`` on matching eigen-pairs ``i = j`` and lies below it elsewhere
(``lam_i lam_j <= (lam_i^2 + lam_j^2) / 2``, AM-GM): the residual function whose tensor square is
closest to Kronecker's fit without exceeding its filter.
"""

import numpy as np
from scipy import linalg
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from .._validation import (check_labels_and_probabilities, check_option,
                           check_random_state_param, check_rng, check_scalar_param)
from .._pairwise import _blas_single_thread
from ..kernels import ExponentialKernel, GaussianKernel
from ._base import _CalibrationEstimatorBase, _risk_sum, problems_of

_METHODS = ("kronecker", "two_step")
#: Relative eigenvalue floor of the Nystrom landmark kernel matrix (smaller ones are dropped).
_NYSTROM_RCOND = 1e-12
#: ``n_components="auto"``: the relative trace of the kernel matrix the low rank may drop.
_AUTO_TRACE_TOL = 1e-8
#: ``n_components="auto"``: pivoted-Cholesky (Nystrom) ranks up to this fraction of ``n``; beyond
#: it the exact eigendecomposition (truncated to the same trace tolerance) is cheaper.
_AUTO_MAX_FRACTION = 0.5
#: Query columns per tile when projecting kernel vectors.
_PROJECT_TILE = 2048


def _check_alphas(alphas):
    """``alphas`` as a 1-D float64 array of positive finite ridges (``ValueError`` naming it)."""
    if isinstance(alphas, (str, bytes, dict, set, frozenset)) or alphas is None:
        raise TypeError(f"alphas must be a 1-D array-like of positive numbers; got "
                        f"{type(alphas).__name__}.")
    try:
        a = np.asarray(alphas, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"alphas must be a 1-D array-like of positive numbers; got "
                        f"{alphas!r}.") from None
    if a.ndim != 1:
        raise ValueError(f"alphas must be one-dimensional; got an array of shape {a.shape}.")
    if a.size == 0 or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"alphas must be a non-empty sequence of positive finite numbers; got "
                         f"{alphas!r}.")
    return a


class _Spectral:
    """The ridge-free part of one fitted problem: eigenvalues, projected residuals, projector."""

    def __init__(self, prep, proj, lam, S, n, landmarks=None, basis=None, r2=None):
        self.prep, self.proj, self.lam, self.S, self.n = prep, proj, lam, S, n
        #: indices of the Nystrom landmarks among the training samples (None: exact)
        self.landmarks = landmarks
        # ingredients of residual_gram: the Nystrom factors (Qr, Ub) of the eigenbasis Qr @ Ub
        # (None: exact, the basis is proj^T) and the squared norms of the training residuals
        self._basis, self._r2 = basis, r2

    def residual_gram(self):
        """``M = Qe^T diag(||R_a||^2) Qe`` (rank x rank), ridge-free: computed on first use.

        ``Qe`` is the eigenbasis of the training kernel matrix (exact: its eigenvectors;
        Nystrom: the left singular vectors of ``Phi``); ``O(n rank^2)``.
        """
        if getattr(self, "_gram", None) is None:
            Qe = self.proj.T if self._basis is None else self._basis[0] @ self._basis[1]
            self._gram = Qe.T @ (self._r2[:, None] * Qe)
            self._basis = None  # the Nystrom factors are not kept once M is known
        return self._gram

    def products(self):
        """``S S^T`` and ``lam lam^T`` (rank x rank), ridge-free: computed once, on first use."""
        if getattr(self, "_products", None) is None:
            self._products = (self.S @ self.S.T, np.multiply.outer(self.lam, self.lam))
        return self._products

    def project(self, Q):
        """``B = Q^T k(Q_new)``: (rank x n_new), in tiles of query columns."""
        other = self.prep.like(Q)
        out = np.empty((self.proj.shape[0], Q.shape[0]))
        for lo in range(0, Q.shape[0], _PROJECT_TILE):
            hi = min(Q.shape[0], lo + _PROJECT_TILE)
            out[:, lo:hi] = self.proj @ self.prep.block(slice(None), slice(lo, hi), other)
        return out


def _spectral(kernel, Q, R, n_components, rng):
    """Eigen-decomposition (exact, Nystrom with ``n_components`` landmarks, or ``"auto"``)."""
    n = Q.shape[0]
    k = kernel.resolve(Q)
    if isinstance(n_components, str):  # "auto"
        prep = k._prepare(Q)
        K = prep.block(slice(None), slice(None))
        with _blas_single_thread():  # hundreds of small products: threads only stall
            pivots = _pivoted_cholesky(K, _AUTO_TRACE_TOL, int(_AUTO_MAX_FRACTION * n))
        if pivots is None:
            return _exact(prep, K, R, n, _AUTO_TRACE_TOL)
        idx = np.sort(pivots)
        return _nystrom(k._prepare(Q[idx]), K[idx][:, idx], K[:, idx], R, n, idx)
    if n_components is None or n_components >= n:
        prep = k._prepare(Q)
        return _exact(prep, prep.block(slice(None), slice(None)), R, n)
    idx = np.sort(rng.choice(n, size=n_components, replace=False))
    prep = k._prepare(Q[idx])
    Kmm = prep.block(slice(None), slice(None))
    Knm = prep.block(slice(None), slice(None), prep.like(Q)).T  # n x m
    return _nystrom(prep, Kmm, Knm, R, n, idx)


def _exact(prep, K, R, n, trace_tol=None):
    """All eigenpairs of ``K`` (overwritten); with ``trace_tol``, only the largest ones, the
    dropped eigenvalues summing to at most ``trace_tol * trace(K)``."""
    # divide and conquer ("evd"): on a quiet machine the fastest driver for all eigenpairs
    # (n = 2560: 1.96 s, numpy 2.1 s, MRRR 2.35 s)
    lam, V = linalg.eigh(K, driver="evd", check_finite=False, overwrite_a=True)
    np.maximum(lam, 0.0, out=lam)  # rounding leaves tiny negative eigenvalues
    if trace_tol is not None:  # lam is ascending: drop the longest head with a small sum
        drop = int(np.searchsorted(np.cumsum(lam), trace_tol * lam.sum(), side="right"))
        drop = min(drop, lam.size - 1)
        lam, V = lam[drop:], V[:, drop:]
    return _Spectral(prep, V.T, lam, V.T @ R, n, r2=_row_sq(R))


def _nystrom(prep, Kmm, Knm, R, n, idx):
    """Nystrom eigenbasis on the landmarks ``idx`` (``prep`` prepared on them)."""
    with _blas_single_thread():  # small factorisations stall with threaded BLAS under load
        s, U = np.linalg.eigh(Kmm)
    keep = s > _NYSTROM_RCOND * s.max()
    s, U = s[keep], U[:, keep]
    Phi = Knm @ (U / np.sqrt(s))
    # thin SVD Phi = Q diag(sig) V^T through a QR of the tall matrix (2-3x faster than gesdd on
    # n x m here, same accuracy); Q = Qr Ub is never formed: only Q^T R is needed
    Qr, Rr = np.linalg.qr(Phi)
    with _blas_single_thread():
        Ub, sig, Vt = np.linalg.svd(Rr)
    proj = (sig[:, None] * Vt) @ (U / np.sqrt(s)).T  # B(z) = proj @ k_m(z)
    return _Spectral(prep, proj, sig ** 2, Ub.T @ (Qr.T @ R), n, landmarks=idx,
                     basis=(Qr, Ub), r2=_row_sq(R))


def _pivoted_cholesky(K, tol, max_rank):
    """Pivots of the greedy (largest residual diagonal) partial Cholesky factorisation of ``K``
    until the trace of the residual ``K - K_nm K_mm^{-1} K_mn`` is at most ``tol * trace(K)``;
    None when that needs more than ``max_rank`` pivots, or (a cost cut-off only, the spectra
    decay roughly geometrically) when half of them leave more than ``sqrt(tol)`` of the trace.
    ``O(n rank^2)``."""
    n = K.shape[0]
    diag = np.diag(K).copy()
    total = diag.sum()
    target = tol * total
    L = np.empty((max(max_rank, 1), n))
    pivots = []
    for j in range(max_rank):
        rest = diag.sum()
        if rest <= target:
            return pivots
        if j == max_rank // 2 and rest > np.sqrt(tol) * total:
            return None
        p = int(np.argmax(diag))
        row = K[p] - L[:j, p] @ L[:j]
        row /= np.sqrt(diag[p])
        L[j] = row
        diag -= row * row
        diag[p] = 0.0
        np.maximum(diag, 0.0, out=diag)
        pivots.append(p)
    return pivots if diag.sum() <= target else None


def _row_sq(R):
    """Row-wise squared norms of ``R``."""
    return np.einsum("ij,ij->i", R, R)


class KernelRidgeCalibrationEstimator(_CalibrationEstimatorBase):
    """Kernel ridge regression calibration estimation functions (Gruber & Bach, Sec. 4.2).

    ``method="kronecker"`` (``h_kkr``) fits ``h`` by kernel ridge regression on all ``n^2`` pairs
    of training samples with the tensor-product kernel ``k (x) k`` and the pair targets
    ``<r_i, r_j>``, ``r_i = p_i - e_{y_i}`` (Eqs. 27-29; the ``i = j`` pairs are included, as in the
    paper). ``method="two_step"`` (``h_ukkr``) fits the residual ``p - pi(p)`` by vector-valued
    kernel ridge regression and plugs it into the inner product (Eq. 32).

    The ridge follows the paper's scaling with the number ``n`` of training samples: the regularised
    systems are ``K (x) K + alpha n^2 I`` (Kronecker: the loss averages over ``n^2`` pairs) and
    ``K + alpha n I`` (two-step). The paper's grids multiply ``alpha`` by ``sqrt(n)`` again
    (see :func:`skcalib.estimation.paper_grids`).

    Parameters
    ----------
    alpha : float, default=1e-3
        Ridge parameter (before the ``n^2`` or ``n`` scaling).
    kernel : "rbf" or Kernel, default="rbf"
        ``"rbf"``: ``exp(-gamma ||p - p'||^2)`` on the inputs of the notion (probability vectors,
        or scalars for top-label/binary/class-wise). A
        :class:`~skcalib.kernels.GaussianKernel` or :class:`~skcalib.kernels.ExponentialKernel`
        (a ``"median"`` length scale is resolved on the training inputs).
    gamma : float, default=0.5
        Inverse squared length scale of ``"rbf"`` (the paper's 1/2).
    method : {"kronecker", "two_step"}, default="kronecker"
    n_components : int or "auto", default=None
        ``None``: the exact eigendecomposition of the ``n x n`` kernel matrix (``O(n^3)``).
        An int ``m < n``: the Nystrom approximation on ``m`` random training points
        (``O(n m^2)``; see the module notes). ``"auto"``: the smallest rank whose approximation
        drops at most ``1e-8`` of the trace of the kernel matrix, found by a greedy pivoted
        Cholesky factorisation (Nystrom on the pivots, ``O(n m^2)``) when it needs at most
        ``n / 2`` pivots, else by the exact eigendecomposition truncated to that trace (the rank
        used is ``n_components_``).
    mode : {"auto", "binary", "top_label", "classwise", "canonical"}, default="auto"
    random_state : None, int, Generator or RandomState, default=None
        Choice of the Nystrom landmarks.
    labels : array-like, default=None
        All class labels, one per column of ``X`` (default: the labels present in ``y``); needed
        when a training set lacks a class.

    Attributes
    ----------
    classes_ : ndarray
    mode_ : str
    n_train_ : int
        ``n`` of the ridge scaling.
    problems_ : list
        Per problem: the eigenvalues, projected residuals and the projector of new points.
    n_components_ : ndarray of int
        Per problem, the rank of the eigenbasis used (``n`` for the exact decomposition).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.estimation import KernelRidgeCalibrationEstimator
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=300)
    >>> y = (rng.random((300, 1)) > P.cumsum(axis=1)).sum(axis=1)
    >>> est = KernelRidgeCalibrationEstimator(alpha=1e-4, mode="canonical").fit(P[:200], y[:200])
    >>> risks = est.risk_path(P[200:], y[200:], alphas=[1e-6, 1e-4, 1e-2])  # one eigh for all
    >>> len(risks)
    3
    """

    def __init__(self, alpha=1e-3, *, kernel="rbf", gamma=0.5, method="kronecker",
                 n_components=None, mode="auto", random_state=None, labels=None):
        self.alpha = alpha
        self.kernel = kernel
        self.gamma = gamma
        self.method = method
        self.n_components = n_components
        self.mode = mode
        self.labels = labels
        self.random_state = random_state

    def _check_params(self):
        super()._check_params()
        check_scalar_param(self.alpha, "alpha", kind="real", min_val=0, include_min=False)
        check_scalar_param(self.gamma, "gamma", kind="real", min_val=0, include_min=False)
        length_scale = 1.0 / np.sqrt(2.0 * float(self.gamma))
        if not (length_scale > 0 and np.isfinite(length_scale)):
            raise ValueError(f"gamma={self.gamma!r} is out of range: the length scale "
                             f"1 / sqrt(2 gamma) must be a positive finite number.")
        check_option(self.method, "method", _METHODS)
        if not (isinstance(self.n_components, str) and self.n_components == "auto"):
            check_scalar_param(self.n_components, "n_components", min_val=1, allow_none=True)
        check_random_state_param(self.random_state)
        if not (isinstance(self.kernel, (GaussianKernel, ExponentialKernel))
                or (isinstance(self.kernel, str) and self.kernel == "rbf")):
            raise ValueError(f"kernel must be 'rbf', a GaussianKernel or an ExponentialKernel; "
                             f"got {self.kernel!r}.")

    def _kernel(self):
        if isinstance(self.kernel, str):
            return GaussianKernel(length_scale=1.0 / np.sqrt(2.0 * self.gamma))
        return self.kernel

    def _fit_problems(self, problems):
        rng = check_rng(self.random_state)
        kernel = self._kernel()
        self.problems_ = [_spectral(kernel, Q, R, self.n_components, rng) for Q, R in problems]
        self.n_components_ = np.array([st.lam.size for st in self.problems_])
        self._coefs = None

    # -- the ridge-dependent part -----------------------------------------------------------

    def _coef(self, k, alpha=None):
        """Kronecker: the (rank x rank) matrix ``Lt * S S^T``; two-step: ``W`` (rank x m)."""
        alpha = self.alpha if alpha is None else alpha
        st = self.problems_[k]
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            if self.method == "kronecker":
                SS, LL = st.products()
                coef = SS / (LL + alpha * st.n ** 2)
            else:
                coef = st.S / (st.lam + alpha * st.n)[:, None]
        if not np.all(np.isfinite(coef)):
            raise ValueError(f"alpha={alpha!r} is too small: the regularised system is singular "
                             f"in floating point (the kernel matrix has zero eigenvalues); use a "
                             f"larger alpha.")
        return coef

    def _coefs_cached(self, k):
        """Coefficients for the current ``alpha`` (recomputed when ``set_params`` changed it)."""
        cache = getattr(self, "_coefs", None)
        if cache is None or cache[0] != self.alpha:
            check_scalar_param(self.alpha, "alpha", kind="real", min_val=0, include_min=False)
            cache = (self.alpha, [self._coef(j) for j in range(len(self.problems_))])
            self._coefs = cache
        return cache[1][k]

    # The per-problem inputs are the projected kernel vectors Bt = B(p)^T (n x rank): computed
    # once per call, so that the row tiles of calibration_risk do not re-project.

    def _problem_inputs(self, P):
        Qs = [Q for Q, _ in problems_of(P, None, self.classes_, self.mode_)]
        return [st.project(Q).T for st, Q in zip(self.problems_, Qs)]

    @staticmethod
    def _h(method, coef, Bt1, Bt2):
        if method == "kronecker":
            return Bt1 @ (coef @ Bt2.T)
        return (Bt1 @ coef) @ (Bt2 @ coef).T

    @staticmethod
    def _diag(method, coef, Bt):
        if method == "kronecker":
            return np.einsum("ij,ij->i", Bt, Bt @ coef)  # coef is symmetric
        Rh = Bt @ coef
        return np.einsum("ij,ij->i", Rh, Rh)

    def _pairwise_problem(self, k, Bt1, Bt2):
        return self._h(self.method, self._coefs_cached(k), Bt1, Bt2)

    def _diag_problem(self, k, Bt):
        return self._diag(self.method, self._coefs_cached(k), Bt)

    def _residual_filter(self, k, alpha=None):
        """``d`` of the residual smoother ``g(p) = B(p)^T diag(d) S`` (see the module notes)."""
        alpha = self.alpha if alpha is None else alpha
        st = self.problems_[k]
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            if self.method == "two_step":
                d = 1.0 / (st.lam + alpha * st.n)
            else:
                d = 1.0 / np.sqrt(st.lam ** 2 + alpha * st.n ** 2)
        if not np.all(np.isfinite(d)):
            raise ValueError(f"alpha={alpha!r} is too small: the regularised system is singular "
                             f"in floating point (the kernel matrix has zero eigenvalues); use a "
                             f"larger alpha.")
        return d

    def _residual_terms(self, k, Bt):
        """``(G, sq)``: the estimated residual at the rows of ``Bt`` and its leave-own-pair-out
        square (the debiased-estimate hook; see the module notes)."""
        G = self._residual_estimate(k, Bt)
        DB = Bt * self._residual_filter(k)
        M = self.problems_[k].residual_gram()
        sq = np.einsum("ij,ij->i", G, G) - np.einsum("ij,ij->i", DB @ M, DB)
        return G, sq

    def _residual_estimate(self, k, Bt):
        """``g_hat`` alone: ``B^T diag(d) S`` (see the module notes)."""
        check_scalar_param(self.alpha, "alpha", kind="real", min_val=0, include_min=False)
        return Bt @ (self._residual_filter(k)[:, None] * self.problems_[k].S)

    def _plugin_residuals(self, k, Bt):
        if self.method != "two_step":
            return None
        return Bt @ self._coefs_cached(k)

    # -- reuse across the ridge grid ---------------------------------------------------------

    def with_alpha(self, alpha):
        """A fitted copy with another ``alpha`` that shares this fit's eigendecomposition.

        Parameters
        ----------
        alpha : float
            The ridge of the copy (``> 0``).

        Returns
        -------
        KernelRidgeCalibrationEstimator
        """
        check_is_fitted(self)
        check_scalar_param(alpha, "alpha", kind="real", min_val=0, include_min=False)
        return self._sharing_fit(alpha=alpha)

    def _sharing_fit(self, **params):
        """A fitted copy with other ridge-only parameters (``alpha``, ``method``).

        The eigendecomposition does not depend on them, so the copy shares ``problems_``.
        """
        new = clone(self).set_params(**params)
        new._check_params()
        for attr in ("classes_", "mode_", "n_features_in_", "n_train_", "problems_",
                     "n_components_"):
            setattr(new, attr, getattr(self, attr))
        return new

    def risk_path(self, X, y, alphas):
        """Held-out calibration estimation risk for every ridge value in ``alphas``.

        The kernel vectors of ``X`` are projected once; each ``alpha`` then costs
        ``O(rank^2 n' + rank n'^2)`` (Kronecker) or ``O(rank n' m)`` (two-step) instead of a new
        eigendecomposition.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities (held-out data).
        y : array-like of shape (n_samples,)
            True labels.
        alphas : array-like of shape (n_alphas,)
            Positive ridge values.

        Returns
        -------
        ndarray of shape (len(alphas),)
        """
        check_is_fitted(self)
        self._check_params()
        alphas = _check_alphas(alphas)
        data = check_labels_and_probabilities(y, X, labels=self.classes_, min_samples=2,
                                              prob_name="X", label_name="y")
        residuals = [R for _, R in problems_of(data.probs, data.y, data.classes, self.mode_)]
        Bts = self._problem_inputs(data.probs)
        n = data.n_samples
        out = []
        for a in alphas:
            total = 0.0
            for k, R in enumerate(residuals):
                C = self._coef(k, float(a))
                if self.method == "two_step":
                    total += _risk_sum(R, None, plugin=Bts[k] @ C)
                else:
                    H = self._h(self.method, C, Bts[k], Bts[k])
                    total += _risk_sum(R, lambda lo, hi, H=H: H[lo:hi])
            out.append(total / (n * (n - 1.0)))
        return np.array(out)

    def transform_path(self, X, alphas):
        """:meth:`transform` (per-sample ``h(p, p)``) for every ridge value in ``alphas``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities.
        alphas : array-like of shape (n_alphas,)
            Positive ridge values.

        Returns
        -------
        ndarray of shape (len(alphas), n_samples)
        """
        check_is_fitted(self)
        alphas = _check_alphas(alphas)
        _, Bts = self._inputs(X)
        out = np.zeros((len(alphas), Bts[0].shape[0]))
        for i, a in enumerate(alphas):
            for k, Bt in enumerate(Bts):
                out[i] += self._diag(self.method, self._coef(k, float(a)), Bt)
        return out

    def calibration_error_path(self, X, alphas):
        """:meth:`calibration_error` for every ridge value in ``alphas`` (one projection).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities.
        alphas : array-like of shape (n_alphas,)
            Positive ridge values.

        Returns
        -------
        ndarray of shape (len(alphas),)
        """
        return self.transform_path(X, alphas).mean(axis=1)
