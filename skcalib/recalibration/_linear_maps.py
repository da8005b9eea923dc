"""Vector, matrix and Dirichlet scaling: multinomial logistic maps of a classifier's scores.

All three learn ``softmax(x W^T + b)`` from features ``x`` of the scores by minimising the
(sample-weighted) mean negative log-likelihood plus a penalty:

* :class:`VectorScaling` -- ``x`` are the logits, ``W`` is diagonal (Guo et al. 2017);
* :class:`MatrixScaling` -- ``x`` are the logits, ``W`` is a full matrix (Guo et al. 2017);
* :class:`DirichletCalibration` -- ``x`` are the log-probabilities, ``W`` is a full matrix
  (Kull et al. 2019).

The objective is convex in ``(W, b)``; it is minimised by Newton's method with the exact
analytic Hessian (``C (C + 1)`` parameters at most, so the Newton system is small), an Armijo
line search and a pseudo-inverse for the directions the softmax ignores, started at the identity
map ``W = I, b = 0`` -- for large ``n`` from the optimum on a strided subsample, and reusing a
Hessian while it keeps the convergence fast. The fitted optimum zeroes the gradient to ``tol``
relative to its value at the identity map. Features whose largest magnitude is beyond 1e4 or
below 1e-4 (logits of 1e300 or 1e-300) are first divided by it, and the start is the identity
map of the rescaled features: the same objective and optimum, without overflow.
"""

import warnings

import numpy as np
from scipy.linalg import blas
from scipy.special import log_softmax
from sklearn.exceptions import ConvergenceWarning

from .._pairwise import _blas_single_thread
from .._validation import check_option, check_scalar_param, user_stacklevel
from ._base import LogitMapRecalibrator

__all__ = ["VectorScaling", "MatrixScaling", "DirichletCalibration"]

_REGULARIZATIONS = ("odir", "l2")


class _LinearProblem:
    """Penalised weighted mean NLL of ``softmax(X W^T + b)``, its gradient and Hessian products.

    ``theta`` is ``(diag(W), b)`` (``diagonal=True``) or ``(W.ravel(), b)``. Penalty weights
    ``pw`` (one per parameter) give ``sum_j pw_j theta_j^2``.
    """

    def __init__(self, X, y_idx, w, diagonal, pw):
        self.X = X
        self.n, self.C = X.shape
        self.y = y_idx
        self.w = w  # sums to 1
        self.diagonal = diagonal
        self.pw = pw
        self._E = np.empty((self.n, self.C))
        self._key = None

    def unpack(self, theta):
        C = self.C
        if self.diagonal:
            return theta[:C], theta[C:]
        return theta[:C * C].reshape(C, C), theta[C * C:]

    def logits(self, theta, X=None):
        W, b = self.unpack(theta)
        X = self.X if X is None else X
        return (X * W if self.diagonal else X @ W.T) + b

    def _state(self, theta):
        """``(NLL, P)`` at ``theta`` (cached for the last ``theta``)."""
        if self._key is None or not np.array_equal(self._key, theta):
            Z = self.logits(theta)
            Z -= Z.max(axis=1, keepdims=True)
            np.exp(Z, out=self._E)
            s = self._E.sum(axis=1)
            rows = np.arange(self.n)
            self._nll = float(self.w @ (np.log(s) - Z[rows, self.y]))
            self._P = self._E / s[:, None]
            self._key = theta.copy()
        return self._nll, self._P

    def _back(self, G):
        """Parameter gradient of ``sum_i <G_i, z_i>``."""
        gW = (G * self.X).sum(axis=0) if self.diagonal else (G.T @ self.X).ravel()
        return np.concatenate([gW, G.sum(axis=0)])

    def fun_grad(self, theta):
        nll, P = self._state(theta)
        G = P * self.w[:, None]
        G[np.arange(self.n), self.y] -= self.w
        return nll + float(self.pw @ theta ** 2), self._back(G) + 2.0 * self.pw * theta

    def hessp(self, theta, v):
        """Hessian-vector product (used by the tests against the full Hessian)."""
        _, P = self._state(theta)
        dZ = self.logits(v)
        Pd = P * dZ
        Hz = (Pd - P * Pd.sum(axis=1, keepdims=True)) * self.w[:, None]
        return self._back(Hz) + 2.0 * self.pw * v

    def hessian(self, theta):
        """The full Hessian: ``sum_i w_i (diag(p_i) - p_i p_i^T)`` on the features' products.

        With ``x~ = (x, 1)``, the entry of ``(W_kj, W_lm)`` is
        ``sum_i w_i p_ik (delta_kl - p_il) x~_ij x~_im``: a diagonal-in-``(k, l)`` part and a
        Gram matrix of the rows ``p_i (x) x~_i`` (one matrix product of ``n x C (C + 1)``).
        """
        _, P = self._state(theta)
        X, w, n, C = self.X, self.w, self.n, self.C
        wP = P * w[:, None]
        if self.diagonal:
            PX = P * X
            wPX = wP * X
            Haa = np.diag((wPX * X).sum(axis=0)) - wPX.T @ PX
            Hab = np.diag(wPX.sum(axis=0)) - wPX.T @ P
            Hbb = np.diag(wP.sum(axis=0)) - wP.T @ P
            H = np.block([[Haa, Hab], [Hab.T, Hbb]])
        else:
            Xt = np.empty((n, C + 1))
            Xt[:, :C] = X
            Xt[:, C] = 1.0
            U = (P[:, :, None] * Xt[:, None, :]).reshape(n, C * (C + 1))
            U *= np.sqrt(w)[:, None]
            G = _gram(U).reshape(C, C + 1, C, C + 1)
            G *= -1.0
            for k in range(C):
                G[k, :, k, :] += (Xt * wP[:, k:k + 1]).T @ Xt
            # reorder (class, feature) pairs as theta: W entries first, then intercepts
            Gw = G[:, :C, :, :C].reshape(C * C, C * C)
            Gwb = G[:, :C, :, C].reshape(C * C, C)
            Gb = G[:, C, :, C]
            H = np.block([[Gw, Gwb], [Gwb.T, Gb]])
        H[np.diag_indices_from(H)] += 2.0 * self.pw
        return H


def _gram(U):
    """``U^T U`` by the symmetric rank-k update (half the work of a general product)."""
    A = blas.dsyrk(1.0, U, trans=1)  # upper triangle of U^T U (U is C-ordered: U^T is F-ordered)
    iu = np.triu_indices_from(A, 1)
    A.T[iu] = A[iu]
    return A


def _multinomial_newton(problem, theta, *, tol, max_iter, target=None):
    """The penalised multinomial logistic NLL of ``problem`` (a :class:`_LinearProblem`) by damped
    Newton's method with the exact Hessian and an Armijo backtracking line search.

    The Hessian is singular along the directions that leave the probabilities unchanged (the
    same vector added to every class's row of ``(W, b)``) unless a penalty covers them; the
    gradient is orthogonal to those directions, and the step is the minimum-norm solution
    (pseudo-inverse from the eigendecomposition). A Hessian is reused while it keeps dividing
    the gradient norm by 20 or more per step (near the optimum it changes little, and one
    Hessian costs ``C + 1`` gradients). Stops when the gradient norm is below ``target``
    (default: ``tol`` times its initial norm).

    Returns ``(theta, f, grad_norm, n_iter, converged)``.
    """
    f, g = problem.fun_grad(theta)
    if target is None:
        target = tol * float(np.linalg.norm(g))
    fresh, V, ev = False, None, None
    for it in range(1, max_iter + 1):
        gn = float(np.linalg.norm(g))
        if gn <= target or gn == 0.0:
            return theta, f, gn, it - 1, True
        if not fresh:
            ev, V = np.linalg.eigh(problem.hessian(theta))
            fresh = True
        keep = ev > ev[-1] * 1e-13
        step = -(V[:, keep] @ ((V[:, keep].T @ g) / ev[keep]))
        slope = float(g @ step)
        if not slope < 0:  # pragma: no cover - rounding only
            step, slope = -g, -gn * gn
        if -slope <= 1e-12 * max(1.0, abs(f)):
            # Within rounding of the optimum, where f no longer resolves progress: the full
            # Newton step (quadratically convergent here), kept only if it shrinks the gradient.
            fc, gc = problem.fun_grad(theta + step)
            gcn = float(np.linalg.norm(gc))
            if not gcn < gn:
                return theta, f, gn, it, True
            theta, f, g = theta + step, fc, gc
            if gcn > 0.5 * gn:
                # not even linear progress from an exact Newton step: the gradient is at the
                # level of its rounding error, which a relative tol cannot see
                return theta, f, gcn, it, True
            fresh = gcn <= 0.05 * gn
            continue
        t = 1.0
        while True:
            cand = theta + t * step
            fc, gc = problem.fun_grad(cand)
            if fc <= f + 1e-4 * t * slope or t < 1e-10:
                break
            t *= 0.5
        if not fc < f:  # no decrease at rounding level: as good as it gets
            return theta, f, gn, it, gn <= 1e3 * target
        theta, f, g = cand, fc, gc
        # keep the Hessian only after a full step that shrank the gradient well
        fresh = t == 1.0 and np.linalg.norm(gc) <= 0.05 * gn
    gn = float(np.linalg.norm(g))
    return theta, f, gn, max_iter, gn <= target


#: Above this many rows, Newton's method starts from the optimum on an evenly strided subsample.
_WARM_START_ROWS = 8192

#: Features (logits or log-probabilities) whose largest magnitude is outside this interval are
#: divided by it for the solver (see ``_fit_single_thread``).
_UNSCALED_RANGE = (1e-4, 1e4)


class _LinearMapRecalibrator(LogitMapRecalibrator):
    """Shared fit and prediction of the three maps (subclasses set the class attributes)."""

    _diagonal = False
    _log_proba_features = False

    def __init__(self, input="auto", *, regularization="odir", reg_lambda=0.0, reg_mu=None,
                 labels=None, eps=1e-12, max_iter=200, tol=1e-10):
        self.input = input
        self.regularization = regularization
        self.reg_lambda = reg_lambda
        self.reg_mu = reg_mu
        self.labels = labels
        self.eps = eps
        self.max_iter = max_iter
        self.tol = tol

    def _check_own_params(self):
        check_option(self.regularization, "regularization", _REGULARIZATIONS)
        check_scalar_param(self.reg_lambda, "reg_lambda", kind="real", min_val=0)
        check_scalar_param(self.reg_mu, "reg_mu", kind="real", min_val=0, allow_none=True)
        check_scalar_param(self.max_iter, "max_iter", min_val=1)
        check_scalar_param(self.tol, "tol", kind="real", min_val=0, include_min=False)

    def _features(self, L):
        if self._log_proba_features and self.input_ == "logits":
            return log_softmax(L, axis=1)
        return np.asarray(L, dtype=np.float64)

    def _penalty_weights(self, C):
        """One weight per parameter: ``sum_j pw_j theta_j^2`` is the penalty."""
        lam = float(self.reg_lambda)
        mu = lam if self.reg_mu is None else float(self.reg_mu)
        n_w = C if self._diagonal else C * C
        if self.regularization == "l2":
            return np.full(n_w + C, lam)
        pw_W = np.zeros((C, C))
        if C > 1 and not self._diagonal:
            pw_W[~np.eye(C, dtype=bool)] = lam / (C * (C - 1))
        pw_W = pw_W.ravel() if not self._diagonal else np.zeros(C)
        return np.concatenate([pw_W, np.full(C, mu / C)])

    def _fit_scores(self, S, L, y_idx, n_classes, w):
        # The matrix products have an inner dimension of C or C + 1: threaded BLAS only adds
        # synchronisation to them (measured 2-5x slower on a loaded 2-core machine).
        with _blas_single_thread():
            self._fit_single_thread(L, y_idx, w)

    def _fit_single_thread(self, L, y_idx, w):
        X = self._features(L)
        n, C = X.shape
        weights = np.ones(n) if w is None else w / w.max()
        weights = weights / weights.sum()
        pw = self._penalty_weights(C)
        # Features of extreme magnitude (logits of 1e300 overflow the Hessian's products; those
        # of 1e-300 leave W's curvature below the pseudo-inverse's cutoff): the problem is
        # solved on X / s, whose coefficients W s give the same logits (the penalty on W becomes
        # pw / s**2 on W s, the same objective), started at W s = I.
        s = float(np.max(np.abs(X))) if X.size else 0.0
        s = s if (s > _UNSCALED_RANGE[1] or 0 < s < _UNSCALED_RANGE[0]) else 1.0
        if s != 1.0:
            X = X / s
            n_w = pw.size - C
            pw = pw.copy()
            pw[:n_w] = pw[:n_w] / s / s
        problem = _LinearProblem(X, y_idx, weights, self._diagonal, pw)
        W0 = np.ones(C) if self._diagonal else np.eye(C).ravel()
        theta0 = np.concatenate([W0, np.zeros(C)])
        target = self.tol * float(np.linalg.norm(problem.fun_grad(theta0)[1]))
        rows = np.flatnonzero(weights > 0)
        if rows.size >= 4 * _WARM_START_ROWS:
            # start from the optimum on a subsample: usually within sampling error of the full
            # optimum, so that two or three Newton steps on all rows finish the job
            rows = rows[::rows.size // _WARM_START_ROWS]
            sub = _LinearProblem(X[rows], y_idx[rows], weights[rows] / weights[rows].sum(),
                                 self._diagonal, pw)
            theta_s = _multinomial_newton(sub, theta0, tol=1e-6, max_iter=self.max_iter)[0]
            if problem.fun_grad(theta_s)[0] < problem.fun_grad(theta0)[0]:
                theta0 = theta_s
        theta, f, grad, n_iter, converged = _multinomial_newton(
            problem, theta0, tol=self.tol, max_iter=self.max_iter, target=target)
        W, b = problem.unpack(theta)
        self.coef_ = np.array(W) / s
        self.intercept_ = np.array(b)
        self.n_iter_ = n_iter
        self.objective_ = float(f)
        if not np.all(np.isfinite(theta)):  # pragma: no cover - defensive
            raise FloatingPointError("the solver produced non-finite parameters.")
        # Separated data: the fitted map puts every fitting sample's label strictly on top,
        # and some parameters are unpenalised, along which the NLL may keep falling.
        Z = problem.logits(theta)
        # the gap between the two largest recalibrated logits of a typical sample (scale-free;
        # only read to explain a fit that did not converge)
        typical_margin = 0.0
        if not converged and C > 1:
            top2 = np.partition(Z, -2, axis=1)[:, -2:]
            typical_margin = float(np.median((top2[:, 1] - top2[:, 0])[weights > 0]))
        zy = Z[np.arange(n), y_idx]
        Z[np.arange(n), y_idx] = -np.inf
        separated = bool(np.all((zy > Z.max(axis=1))[weights > 0]))
        if separated and np.any(pw == 0):
            warnings.warn(
                f"{type(self).__name__}: the fitted map ranks every fitting sample's label first "
                "(separated data), so the NLL may have no minimiser along the unpenalised "
                "parameters and the fitted map is arbitrarily confident (the solver stopped "
                f"after {self.n_iter_} iterations). Use regularization='l2' with reg_lambda > 0, "
                "or fit on more held-out data.", ConvergenceWarning, stacklevel=user_stacklevel())
        elif not converged and typical_margin > 20.0:
            misranked = int(np.sum((zy <= Z.max(axis=1))[weights > 0]))
            warnings.warn(
                f"{type(self).__name__}: the solver did not converge in {self.max_iter} "
                "iterations, with the map growing ever more confident (the typical sample's "
                f"top two recalibrated logits are {typical_margin:.3g} apart): the data are "
                f"nearly separated ({misranked} of "
                f"{int(np.sum(weights > 0))} fitting samples do not rank their label first), so "
                "the NLL's minimiser is an almost arbitrarily confident map. Use "
                "regularization='l2' with reg_lambda > 0, or fit on more held-out data.",
                ConvergenceWarning, stacklevel=user_stacklevel())
        elif not converged:
            warnings.warn(
                f"{type(self).__name__}: the solver did not converge in {self.max_iter} "
                f"iterations (gradient norm {grad:.3g}); increase max_iter.",
                ConvergenceWarning, stacklevel=user_stacklevel())

    def _logits(self, L):
        """The recalibrated logits ``x W^T + b`` of the features ``x`` of ``L``."""
        X = self._features(L)
        if self._diagonal:
            return X * self.coef_ + self.intercept_
        return X @ self.coef_.T + self.intercept_


_PARAMS_DOC = """
    Parameters
    ----------
    input : {{"auto", "logits", "proba"}}, default="auto"
        What ``X`` holds. ``"logits"``: real scores (a binary 1-D score is the log-odds of
        ``classes_[1]``). ``"proba"``: probabilities, whose logarithms ``log(clip(p, eps, 1))``
        are used. ``"auto"``: probabilities if every value is in ``[0, 1]`` and (for several
        columns) every row sums to one, logits otherwise (with a warning when at most 10% of the
        rows keep ``X`` from being probabilities); the decision is stored in ``input_``.
    regularization : {{"odir", "l2"}}, default="odir"
        ``"odir"`` (Kull et al. 2019): ``reg_lambda / (C (C - 1))`` times the sum of the squared
        off-diagonal entries of ``W`` plus ``reg_mu / C`` times the sum of the squared
        intercepts; the diagonal is not penalised. ``"l2"``: ``reg_lambda`` times the sum of the
        squares of every parameter (``W`` and ``b``), shrinking towards ``W = 0, b = 0``.
        {odir_note}
    reg_lambda : float, default=0.0
        Weight of the penalty on ``W`` (``"odir"``: off-diagonal entries; ``"l2"``: everything).
        The penalty is added to the *mean* NLL, so its effect does not grow with ``n``.
    reg_mu : float, default=None
        Weight of the intercept penalty of ``"odir"`` (None: ``reg_lambda``). Ignored by ``"l2"``.
    labels : array-like, default=None
        All class labels, one per column of ``X``, when some are absent from the fitting ``y``.
    eps : float, default=1e-12
        Probabilities are clipped to ``[eps, 1]`` before taking logarithms.
    max_iter : int, default=200
        Maximum number of Newton iterations on all samples.
    tol : float, default=1e-10
        The solver stops when the gradient norm falls below ``tol`` times its norm at the
        identity map.

    Attributes
    ----------
    coef_ : ndarray of shape {coef_shape}
        ``W`` ({coef_what}).
    intercept_ : ndarray of shape (n_classes,)
        ``b``.
    objective_ : float
        The penalised weighted mean NLL at the optimum.
    classes_ : ndarray of shape (n_classes,)
    input_ : str
        ``"logits"`` or ``"proba"``: the kind of ``X`` seen in ``fit``.
    n_features_in_ : int
        Number of score columns (1 for 1-D binary scores).
    n_iter_ : int
        Newton iterations on all samples (after the warm start on a subsample for large
        ``n``).
"""

_SEPARATION_DOC = """
    **Separated and tiny fitting sets.** When the map can rank every fitting sample's label first
    (which is likely with few samples per parameter), the unpenalised NLL has no minimiser: it
    keeps falling as the map grows more confident. ``fit`` then stops where the gradient falls
    below ``tol`` (relative) or the objective no longer decreases in floating point, with finite
    but arbitrarily confident parameters, and issues a ``ConvergenceWarning`` when the fitted map
    ranks every (positively weighted) fitting label first while some parameter is unpenalised
    (``"odir"`` never penalises the diagonal). ``regularization="l2"`` with ``reg_lambda > 0`` makes the objective strongly
    convex, so the fit is unique and finite on any data, without a warning.
"""


class VectorScaling(_LinearMapRecalibrator):
    __doc__ = """Vector scaling: ``softmax(a * logits + b)`` with one scale and one shift per class.

    ``X`` holds a classifier's scores, one column per class of ``classes_`` (or one column for a
    binary problem). ``fit`` learns ``a`` and ``b`` (``2 C`` parameters) by minimising the
    weighted mean NLL plus a penalty with Newton's method started at ``a = 1, b = 0`` (the
    scores unchanged); the objective is convex. Unlike temperature scaling, the
    map can change the arg-max.
    """ + _SEPARATION_DOC + _PARAMS_DOC.format(
        odir_note="For vector scaling ``W`` is diagonal, so ``\"odir\"`` penalises only ``b``.",
        coef_shape="(n_classes,)", coef_what="the diagonal scales ``a``") + """
    See Also
    --------
    TemperatureScaling : one scale shared by every class.
    MatrixScaling, DirichletCalibration : a full matrix ``W``.

    References
    ----------
    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger. On calibration of modern neural networks.
    ICML 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.recalibration import VectorScaling
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(3000, 3))
    >>> P = np.exp(2.0 * logits + [0.5, 0.0, -0.5])   # the truth: a = 2, b = (0.5, 0, -0.5)
    >>> P /= P.sum(axis=1, keepdims=True)
    >>> y = (rng.random((3000, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=2)
    >>> vs = VectorScaling().fit(logits, y)
    >>> np.round(vs.coef_, 1)
    array([2. , 2.1, 2.1])
    >>> vs.predict_proba(logits).shape
    (3000, 3)
    """
    _diagonal = True


class MatrixScaling(_LinearMapRecalibrator):
    __doc__ = """Matrix scaling: ``softmax(logits W^T + b)`` with a full ``C x C`` matrix ``W``.

    ``X`` holds a classifier's scores, one column per class of ``classes_`` (or one column for a
    binary problem). ``fit`` learns ``W`` and ``b`` (``C (C + 1)`` parameters) by minimising the
    weighted mean NLL plus a penalty with Newton's method started at the identity map; the
    objective is convex. For probability input the features are ``log p``, which makes
    matrix scaling of probabilities the same model as :class:`DirichletCalibration`.
    """ + _SEPARATION_DOC + _PARAMS_DOC.format(
        odir_note="", coef_shape="(n_classes, n_classes)",
        coef_what="row ``k`` gives class ``k``'s recalibrated logit") + """
    See Also
    --------
    VectorScaling : diagonal ``W``.
    DirichletCalibration : the same map on log-probabilities.

    References
    ----------
    C. Guo, G. Pleiss, Y. Sun, K. Q. Weinberger. On calibration of modern neural networks.
    ICML 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.recalibration import MatrixScaling
    >>> rng = np.random.default_rng(0)
    >>> logits = rng.normal(size=(3000, 3))
    >>> ms = MatrixScaling(regularization="l2", reg_lambda=1e-3).fit(logits, logits.argmax(1))
    >>> ms.coef_.shape, ms.intercept_.shape
    ((3, 3), (3,))
    """


class DirichletCalibration(_LinearMapRecalibrator):
    __doc__ = """Dirichlet calibration (Kull et al. 2019): ``softmax(log(p) W^T + b)``.

    ``X`` holds a classifier's probabilities (or logits, turned into log-probabilities by a
    log-softmax), one column per class of ``classes_`` or one column for a binary problem.
    ``fit`` learns ``W`` and ``b`` by minimising the weighted mean NLL plus a penalty -- the
    paper's ODIR (off-diagonal and intercept) regularisation by default, or L2 -- with
    Newton's method started at the identity map (the probabilities unchanged). The
    objective is convex; unregularised, the model is multinomial logistic regression on the
    log-probabilities. For binary problems it is the full beta calibration map.
    """ + _SEPARATION_DOC + _PARAMS_DOC.format(
        odir_note="", coef_shape="(n_classes, n_classes)",
        coef_what="row ``k`` gives class ``k``'s recalibrated logit") + """
    See Also
    --------
    MatrixScaling : the same map on logits.
    TemperatureScaling, VectorScaling : fewer parameters.

    References
    ----------
    M. Kull, M. Perello-Nieto, M. Kangsepp, T. Silva Filho, H. Song, P. Flach. Beyond temperature
    scaling: obtaining well-calibrated multiclass probabilities with Dirichlet calibration.
    NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.recalibration import DirichletCalibration
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet([1.0, 1.0, 1.0], size=3000)
    >>> y = (rng.random((3000, 1)) > P.cumsum(axis=1)).sum(axis=1).clip(max=2)  # calibrated
    >>> dc = DirichletCalibration(reg_lambda=1e-3).fit(P, y)
    >>> bool(np.abs(dc.coef_ - np.eye(3)).max() < 0.2)
    True
    """
    _log_proba_features = True
