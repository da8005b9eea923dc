"""The one-dimensional problems of temperature scaling, shared by recalibration and estimation.

``recalibration`` (:class:`~skcalib.recalibration.TemperatureScaling`,
:class:`~skcalib.recalibration.DistributionTemperatureScaling`) and ``estimation``
(:class:`~skcalib.estimation.TemperatureCalibrationEstimator`) fit a temperature with these:

* :func:`scores_to_logits` -- the ``(n, C)`` logits of a classifier's 1-D or 2-D scores
  (logits, or probabilities turned into ``log(clip(p, eps, 1))``);
* :func:`nll_inverse_temperature` -- the exact multinomial NLL optimum over the inverse
  temperature ``beta`` (a convex problem in ``beta``), by safeguarded Newton steps inside a
  bracket that always contains the root of the derivative (:class:`SoftmaxMoments` evaluates the
  derivatives; ``beta`` stays in ``[BETA_MIN, BETA_MAX]``);
* :func:`minimize_log_temperature` -- any other objective (the SKCE, the NLL of a mixture, an
  estimation risk): a coarse grid over ``log T`` (:data:`LOG_T_GRID`, or :func:`window_around` a
  temperature) followed by bounded Brent refinement around the best grid point, because those
  objectives need not be convex.
"""

import warnings

import numpy as np
from scipy import optimize
from sklearn.exceptions import ConvergenceWarning

from .._pairwise import _blas_single_thread
from .._validation import user_stacklevel

#: Inverse temperatures are kept in ``[BETA_MIN, BETA_MAX]``; ``BETA_MIN`` is used when the scores
#: carry no information (the NLL is smallest for uniform probabilities). Separated data, whose NLL
#: has no minimiser either, get the temperature of :func:`_separated_inverse_temperature`.
BETA_MIN, BETA_MAX = 1e-10, 1e10

#: Rows per tile: tiles of about 2**15 scores stay in the L2 cache.
_TILE = 2 ** 15


def _tiles(n, C):
    step = max(1, _TILE // max(C, 1))
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


class SoftmaxMoments:
    """Weighted NLL of ``softmax(beta * L)`` and its first two derivatives in ``beta``.

    ``L`` is shifted so that every row's maximum is 0; the softmax and the NLL are invariant to
    such shifts, every exponent is then ``<= 0`` (no overflow for any ``beta >= 0``), and the
    moments below do not cancel when a row's mass concentrates on its largest score.

    ``d/dbeta NLL = sum_i w_i (E_i[l] - l_{i,y_i})`` and
    ``d^2/dbeta^2 NLL = sum_i w_i Var_i[l]`` (moments under ``softmax(beta * l_i)``), so the NLL
    is convex in ``beta``.
    """

    def __init__(self, L, y_idx, weights):
        L = np.asarray(L, dtype=np.float64)
        self.L = L - L.max(axis=1, keepdims=True)
        self.w = weights / weights.sum()
        self.wy = float(self.w @ self.L[np.arange(L.shape[0]), y_idx])
        self.tiles = _tiles(*L.shape)
        self.n_evaluations = 0

    def derivatives(self, beta):
        """``(NLL'(beta), NLL''(beta))``."""
        self.n_evaluations += 1
        g = h = 0.0
        buf = np.empty((self.tiles[0][1] - self.tiles[0][0], self.L.shape[1]))
        buf2 = np.empty_like(buf)
        for lo, hi in self.tiles:
            Lt = self.L[lo:hi]
            E = np.multiply(Lt, beta, out=buf[: hi - lo])
            np.exp(E, out=E)
            s = E.sum(axis=1)
            EL = np.multiply(E, Lt, out=buf2[: hi - lo])
            m1 = EL.sum(axis=1) / s
            m2 = np.einsum("ij,ij->i", EL, Lt) / s
            wt = self.w[lo:hi]
            g += wt @ m1
            h += wt @ np.maximum(m2 - m1 * m1, 0.0)
        return g - self.wy, h

    def nll(self, beta):
        """Weighted mean NLL at ``beta``."""
        total = 0.0
        for lo, hi in self.tiles:
            Lt = self.L[lo:hi]
            total += self.w[lo:hi] @ np.log(np.exp(beta * Lt).sum(axis=1))
        return total - beta * self.wy

    def limits(self):
        """``NLL'(0)`` and ``lim NLL'(beta)`` as ``beta -> inf``."""
        g0 = float(self.w @ self.L.mean(axis=1)) - self.wy
        return g0, -self.wy


def _separated_inverse_temperature(problem, n_samples):
    """Inverse temperature for separated fitting data, where the NLL has no minimiser.

    The NLL falls towards its infimum as ``beta -> inf``, and the maximum-likelihood model says
    that the classifier is never wrong -- which on new data costs ``beta`` times the margin of every
    error. Having seen ``n`` correct predictions out of ``n``, Laplace's rule of succession
    estimates the accuracy as ``(n + 1) / (n + 2)``; calibration asks the mean top-label
    confidence to equal the accuracy, so ``beta`` solves
    ``sum_i w_i max_c softmax(beta l_i)_c = (n + 1) / (n + 2)``. The mean confidence is
    increasing in ``beta`` (from ``1 / C`` at 0), so the root is unique. ``n`` is ``n_samples``:
    the sum of the sample weights, so that integer weights count as repetitions (scikit-learn's
    convention for ``sample_weight``).

    Rows whose label ties with other classes at the maximum count as correct with probability
    ``1 / k`` (``k`` tied classes), as in :func:`skcalib._validation.top_label`; the confidence
    then tends to the accuracy ``a = sum_i w_i / k_i`` and the target is
    ``a - (a - 1 / C) C / ((C - 1) (n + 2))``: always inside ``(1 / C, a)``, and exactly
    ``(n + 1) / (n + 2)`` when there are no ties.

    Returns
    -------
    beta : float
    target : float
        The mean confidence reached.
    n : float
    """
    L, w = problem.L, problem.w            # rows shifted to maximum 0; weights summing to 1
    C = L.shape[1]
    n = float(n_samples)
    acc = float(w @ (1.0 / (L == 0.0).sum(axis=1)))
    target = acc - (acc - 1.0 / C) * C / ((C - 1) * (n + 2.0))  # acc for n = inf

    def excess(log_beta):
        # the top-label confidence of a row is 1 / sum_c exp(beta l_c), as its maximum is 0
        E = np.exp(np.exp(log_beta) * L)
        return float(w @ (1.0 / E.sum(axis=1))) - target

    lo, hi = np.log(BETA_MIN), np.log(BETA_MAX)
    if not excess(lo) < 0:
        return BETA_MIN, target, n
    if not excess(hi) > 0:
        return BETA_MAX, target, n
    log_beta = optimize.brentq(excess, lo, hi, xtol=1e-12, rtol=1e-12)
    return float(np.exp(log_beta)), target, n


#: Above this many rows, the search starts from the optimum of an evenly strided subsample.
_WARM_START_ROWS = 4096


def _warm_start(L, y_idx, weights, max_iter):
    """Starting point: the optimum on every ``k``-th row, or 1.0 for small or degenerate data.

    It is usually within a few percent of the full optimum, so that three Newton steps on all
    rows reach rounding level instead of six or seven from ``beta = 1``.
    """
    rows = np.flatnonzero(weights > 0)  # zero-weight rows say nothing about the optimum
    if rows.size < 4 * _WARM_START_ROWS:
        return 1.0
    rows = rows[::rows.size // _WARM_START_ROWS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        beta, _ = nll_inverse_temperature(L[rows], y_idx[rows], weights[rows], max_iter=max_iter)
    return beta if BETA_MIN < beta < BETA_MAX else 1.0


def nll_inverse_temperature(L, y_idx, weights, *, max_iter=100, n_samples=None):
    """Exact minimiser of the weighted multinomial NLL of ``softmax(beta * L)`` over ``beta > 0``.

    When the scores separate the data (every label has the largest score) the NLL has no
    minimiser; ``beta`` then comes from :func:`_separated_inverse_temperature`, with
    ``n_samples`` the number of samples it assumes (default: ``weights.sum()``; pass the sum of
    the original weights when ``weights`` were rescaled).

    Newton steps on the derivative, safeguarded by a bracket ``[a, b]`` with
    ``NLL'(a) < 0 < NLL'(b)``: a step leaving the bracket is replaced by bisection (geometric
    while the bracket spans more than a factor 4, which finds the scale of ``beta`` in a few
    steps). Convergence is declared when a Newton step changes ``beta`` by less than 1e-9
    relative: Newton's method converges quadratically, so the step taken is then exact to about
    1e-18 relative (times the ratio ``beta f3 / 2 f2`` of the third and second derivatives).

    Returns
    -------
    beta : float
    n_iter : int
    """
    # The weighted sums are dot products; threaded BLAS only adds synchronisation to them (and
    # stalls when another process holds a core), so BLAS runs single-threaded here.
    if n_samples is None:
        n_samples = float(np.sum(weights))
    with _blas_single_thread():
        return _inverse_temperature_newton(L, y_idx, weights, max_iter, n_samples)


def _inverse_temperature_newton(L, y_idx, weights, max_iter, n_samples):
    """The safeguarded Newton search of :func:`nll_inverse_temperature` on ``NLL'(beta)``."""
    problem = SoftmaxMoments(L, y_idx, weights)
    g0, ginf = problem.limits()
    if not g0 < 0:
        warnings.warn(
            "the scores carry no information about the labels (the NLL is smallest for uniform "
            f"probabilities); the inverse temperature is set to its lower bound {BETA_MIN:g}.",
            ConvergenceWarning, stacklevel=user_stacklevel())
        return BETA_MIN, 0
    if not ginf > 0:
        beta, target, n = _separated_inverse_temperature(problem, n_samples)
        warnings.warn(
            "the scores separate the fitting data: every sample's label has the largest score, "
            "so the NLL has no minimiser (it keeps falling as the temperature goes to 0, which "
            "would make every prediction certain). The temperature is instead set so that the "
            "mean confidence on the fitting data is Laplace's estimate of the accuracy, "
            f"(n + 1) / (n + 2) = {target:.4g} for n = {n:.4g} samples: T = {1.0 / beta:.4g}. "
            "Fit the temperature on more held-out data (a model rarely separates a large "
            "calibration set), e.g. cross-fitted with RecalibratedClassifier.",
            ConvergenceWarning, stacklevel=user_stacklevel())
        return beta, 0
    a, b = 0.0, np.inf
    beta = _warm_start(L, y_idx, weights, max_iter)
    for it in range(1, max_iter + 1):
        g, h = problem.derivatives(beta)
        if g == 0.0:
            return beta, it
        if g < 0:
            a = beta
        else:
            b = beta
        step = -g / h if h > 0 else np.nan
        cand = beta + step
        if not (a < cand < b):
            if np.isinf(b):
                cand = 4.0 * beta
            elif a > 0 and b > 4.0 * a:
                cand = np.sqrt(a * b)
            else:
                cand = 0.5 * (a + b)
            if cand > BETA_MAX:
                warnings.warn(
                    f"the NLL optimum lies beyond the largest inverse temperature {BETA_MAX:g}; "
                    "it is clipped there.", ConvergenceWarning, stacklevel=user_stacklevel())
                return BETA_MAX, it
        elif abs(step) <= 1e-9 * beta:
            # Newton's error after this step is about kappa * (step / beta)**2 relative, with
            # kappa = beta |f3| / (2 f2) from the third and second derivatives: far below 1e-10.
            return cand, it
        if np.isfinite(b) and b - a <= 4e-16 * b:
            return 0.5 * (a + b), it
        beta = cand
    warnings.warn(f"the temperature search did not converge in {max_iter} iterations.",
                  ConvergenceWarning, stacklevel=user_stacklevel())
    return beta, max_iter


def scores_to_logits(S, kind, eps):
    """``(n, C)`` logits of 1-D or 2-D scores of the given kind (``"logits"`` or ``"proba"``).

    * 1-D logits are log-odds ``z`` of the positive class: logits ``(0, z)``, so that
      ``softmax(beta * logits)`` is ``sigmoid(beta * z)``.
    * Probabilities become ``log(clip(p, eps, 1))`` (1-D: ``(log(1 - p), log p)``).
    """
    if kind == "logits":
        return np.column_stack([np.zeros_like(S), S]) if S.ndim == 1 else S
    P = np.column_stack([1.0 - S, S]) if S.ndim == 1 else S
    return np.log(np.clip(P, eps, 1.0))


#: The grid of the generic search: log T over [log 1e-3, log 1e3].
LOG_T_GRID = np.linspace(np.log(1e-3), np.log(1e3), 31)


def window_around(T, factor=10.0, n_points=21):
    """A ``log T`` grid over ``[T / factor, T * factor]``."""
    return np.log(T) + np.linspace(-np.log(factor), np.log(factor), n_points)


def minimize_log_temperature(objective, grid=LOG_T_GRID, *, what="objective"):
    """Minimise ``objective(T)`` over ``T = exp(u)``, ``u`` in ``[grid[0], grid[-1]]``.

    Every grid point is evaluated; Brent's bounded method then refines the minimum between the
    neighbours of the best one (to 1e-10 in ``log T``). A minimum at the end of the grid issues a
    ``ConvergenceWarning``.

    Returns
    -------
    T : float
    value : float
        ``objective(T)``.
    """
    values = np.array([objective(np.exp(u)) for u in grid])
    if not np.any(np.isfinite(values)):
        raise ValueError(f"the {what} is not finite at any temperature in "
                         f"[{np.exp(grid[0]):g}, {np.exp(grid[-1]):g}].")
    values = np.where(np.isfinite(values), values, np.inf)
    k = int(np.argmin(values))
    if k in (0, grid.size - 1):
        warnings.warn(
            f"the {what} is smallest at the end of the temperature range "
            f"[{np.exp(grid[0]):g}, {np.exp(grid[-1]):g}]; the temperature is clipped there.",
            ConvergenceWarning, stacklevel=user_stacklevel())
        return float(np.exp(grid[k])), float(values[k])
    res = optimize.minimize_scalar(lambda u: objective(np.exp(u)), method="bounded",
                                   bounds=(grid[k - 1], grid[k + 1]),
                                   options={"xatol": 1e-10})
    if res.fun <= values[k]:
        return float(np.exp(res.x)), float(res.fun)
    return float(np.exp(grid[k])), float(values[k])
