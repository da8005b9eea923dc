"""Smooth calibration errors: the smooth ECE and the integrated calibration index (ICI).

* :func:`smooth_ece` -- Blasiok and Nakkiran (2023): the residuals ``y - p`` are smoothed by a
  Gaussian kernel *on the probability scale, reflected at 0 and 1*, and the smooth ECE at
  bandwidth ``sigma`` is ``smECE_sigma = int_0^1 |(1/W) sum_i w_i K_sigma(t, p_i) (y_i - p_i)| dt``.
  The automatic bandwidth is the fixed point ``smECE_sigma = sigma`` (unique: ``smECE_sigma`` does
  not increase with ``sigma``), found by Brent's method on the bracket ``[1e-4, 1]``.
  :func:`smooth_reliability_curve` returns the smoothed reliability curve the error integrates.
* :func:`integrated_calibration_index` -- Austin and Steyerberg (2019): a lowess-type local
  polynomial regression of the outcome on the prediction gives a calibration curve ``c(p)``; ICI is
  the (weighted) mean of ``|c(p_i) - p_i|`` over the samples, E50 its median, E90 its 90th
  percentile and Emax its maximum.

Computation
-----------
The reflected kernel is ``K(t, s) = sum_m phi_sigma(t - s - 2m) + phi_sigma(t + s - 2m)`` (every
image, not only the first reflection). Its action on the data is computed on a uniform grid of
``M + 1`` points of ``[0, 1]``: every sample's weight is split linearly between its two grid
neighbours (two ``bincount`` passes over the data), and the reflected convolution is a circular
convolution of the even extension (period 2) with the wrapped Gaussian, whose Fourier coefficients
``exp(-pi^2 k^2 sigma^2 / 2)`` are exact -- one real FFT of length ``2M`` per bandwidth. The grid
step is at most ``sigma / 40`` (``M`` a power of two, at most ``2**20``), so the linear binning
changes the result by a relative ``1e-4`` or less; the integral over ``t`` is the trapezoid rule on
the grid.

The lowess curve of the ICI is fitted at ``n_grid`` evaluation points placed at equally spaced
order statistics of the predictions (so that their density follows the data's, as the local
bandwidth does), and interpolated linearly at every sample; with fewer distinct predictions than
evaluation points it is fitted at every distinct prediction (exact). Each fit uses the nearest
``floor(frac * n)`` samples (tricube weights on ``|p - p0| / h``, ``h`` the distance to the
farthest of them); the cost is ``O(n_grid * frac * n)``, and the default ``n_grid`` grows like
``1 / frac`` so that it stays ``O(n)``.
"""

import functools
from typing import NamedTuple

import numpy as np
from scipy import optimize

from .._problems.modes import binary_problem
from .._validation import (
    check_option,
    check_scalar_param,
)

__all__ = ["smooth_ece", "smooth_reliability_curve", "integrated_calibration_index",
           "SmoothReliabilityCurve", "ICIResult"]

_MIN_BANDWIDTH = 1e-4
_MAX_GRID = 2**20
_STEPS_PER_SIGMA = 40
#: At most ``_MAX_DEFAULT_POINTS + 1`` points in a curve whose ``n_points`` is not given.
_MAX_DEFAULT_POINTS = 2**12
#: Robustness iterations of the lowess curve: each is a full refit; Cleveland's 2 to 3 suffice.
_MAX_ROBUST_ITERS = 100


# --------------------------------------------------------------------------------------------
# Smooth ECE.


def _grid_size(sigma):
    m = 1024
    while m < _MAX_GRID and m * sigma < _STEPS_PER_SIGMA:
        m *= 2
    return m


@functools.lru_cache(maxsize=1)  # one bandwidth per band: 8 MB at most held
def _wrapped_kernel(m, sigma):
    """The circular kernel ``h`` (length ``2M``) whose convolution with the even extension is the
    reflected smoothing: ``irfft`` of the gain of :meth:`_Binned.smooth` (read-only, cached for
    the repeated curves of a bootstrap band at one bandwidth)."""
    k = np.arange(m + 1, dtype=np.float64)
    h = np.fft.irfft(m * np.exp(-0.5 * (np.pi * sigma * k) ** 2), n=2 * m)
    h.flags.writeable = False
    return h


class _Binned:
    """Weights and residuals split linearly onto the grid ``j / M``, with the even extension's
    spectrum, ready for the reflected convolution at any bandwidth."""

    def __init__(self, p, r, w, m):
        self.m = m
        pos = p * m
        j = np.minimum(np.floor(pos).astype(np.intp), m - 1)
        frac = pos - j
        hi = w * frac
        lo = w - hi
        self.total = float(w.sum())
        # The occupied grid cells and their sums (sparse: the dense grid of M + 1 points is built
        # only for the FFT, which small data at a tiny bandwidth do not need).
        self.occupied, cell = np.unique(np.concatenate([j, j + 1]), return_inverse=True)
        self.values = []
        for v in (None, r):
            a = lo if v is None else lo * v
            b = hi if v is None else hi * v
            self.values.append(np.bincount(cell, weights=np.concatenate([a, b]),
                                           minlength=self.occupied.size))
        self._spectra = {}
        self.k = np.arange(m + 1, dtype=np.float64)

    def _spectrum(self, which):
        if which not in self._spectra:
            grid = np.zeros(self.m + 1)
            grid[self.occupied] = self.values[which]
            ext = np.concatenate([grid, grid[-2:0:-1]])
            ext[0] *= 2.0  # a mass at 0 (or 1) is its own reflection
            ext[self.m] *= 2.0
            self._spectra[which] = np.fft.rfft(ext)
        return self._spectra[which]

    def smooth(self, sigma, which):
        """``sum_i w_i K_sigma(t_j, p_i) v_i / W`` on the grid ``t_j = j / M`` (``which=0``:
        ``v = 1``, the density; ``1``: the residuals)."""
        gain = self.m * np.exp(-0.5 * (np.pi * sigma * self.k) ** 2)
        out = np.fft.irfft(self._spectrum(which) * gain, n=2 * self.m)[: self.m + 1]
        return out / self.total

    def direct_is_cheaper(self, n_at):
        """Whether :meth:`smooth_at` at ``n_at`` points costs less than the FFTs of
        :meth:`smooth` (few occupied grid cells on a fine grid: small data at a tiny bandwidth)."""
        return self.occupied.size * n_at <= 4 * self.m

    def smooth_at(self, sigma, which, at):
        """:meth:`smooth` at the grid indices ``at`` only, by the direct sum over the occupied
        cells ``q``: ``sum_q grid_q (h[(i - q) mod 2M] + h[(i + q) mod 2M]) / W`` (the same
        circular convolution of the even extension, term by term)."""
        h = _wrapped_kernel(self.m, float(sigma))
        q = self.occupied
        i = np.asarray(at, dtype=np.intp)[:, None]
        two_m = 2 * self.m
        kern = h[(i - q) % two_m] + h[(i + q) % two_m]
        return kern @ self.values[which] / self.total

    def error(self, sigma):
        g = np.abs(self.smooth(sigma, 1))
        return float((g.sum() - 0.5 * (g[0] + g[-1])) / self.m)


def _fixed_point(p, r, w):
    """The bandwidth ``sigma`` with ``smECE_sigma = sigma`` (``_MIN_BANDWIDTH`` if the error is
    below it there), and the binned data at a grid fine enough for it."""
    m = _grid_size(0.02)
    while True:
        binned = _Binned(p, r, w, m)
        g_lo = binned.error(_MIN_BANDWIDTH) - _MIN_BANDWIDTH
        if g_lo <= 0:
            sigma = _MIN_BANDWIDTH
        else:
            sigma = optimize.brentq(lambda s: binned.error(s) - s, _MIN_BANDWIDTH, 1.0,
                                    xtol=1e-12, rtol=1e-10)
        need = _grid_size(sigma)
        if need <= m:
            return sigma, binned
        m = need


def _check_bandwidth(bandwidth):
    if isinstance(bandwidth, str):
        check_option(bandwidth, "bandwidth", ("auto",))
        return None
    check_scalar_param(bandwidth, "bandwidth", kind="real", min_val=_MIN_BANDWIDTH, max_val=1.0)
    return float(bandwidth)


def _smooth(y_true, y_proba, bandwidth, mode, labels, pos_label, sample_weight):
    sigma = _check_bandwidth(bandwidth)
    p, y, w = binary_problem(y_true, y_proba, mode=mode, labels=labels, pos_label=pos_label,
                             sample_weight=sample_weight)
    r = y - p
    if sigma is None:
        sigma, binned = _fixed_point(p, r, w)
    else:
        binned = _Binned(p, r, w, _grid_size(sigma))
    return sigma, binned, p, w


def smooth_ece(y_true, y_proba, *, bandwidth="auto", return_bandwidth=False, mode="auto",
               labels=None, pos_label=None, sample_weight=None):
    """Smooth expected calibration error (smECE) of Blasiok and Nakkiran (2023).

    The residuals ``y_i - p_i`` are smoothed by a Gaussian kernel of bandwidth ``sigma`` on the
    probability scale, reflected at 0 and 1 (so that no mass leaves ``[0, 1]``), and the smooth
    ECE is the area under the absolute smoothed residual::

        smECE_sigma = int_0^1 | sum_i w_i K_sigma(t, p_i) (y_i - p_i) / sum_i w_i | dt,

    which equals ``int |r(t)| d(t) dt`` for the smoothed reliability gap ``r`` and the smoothed
    density ``d`` of :func:`smooth_reliability_curve`. With ``bandwidth="auto"`` (the paper's
    definition, and the default) ``sigma`` is the unique fixed point ``smECE_sigma = sigma``. Unlike
    the binned ECE, the result is continuous in the predictions and needs no bins; it is a
    consistent estimator of a calibration error that is within a constant factor of the distance
    to calibration.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels (any hashable, sortable values).
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: P(``pos_label``) for a binary problem, or one column per class
        (columns in the order of the sorted ``labels``).
    bandwidth : "auto" or float, default="auto"
        ``"auto"``: the fixed point ``smECE_sigma = sigma`` (found to a relative ``1e-10``; at
        least ``1e-4``). A float in ``[1e-4, 1]``: the kernel's standard deviation ``sigma``.
    return_bandwidth : bool, default=False
        Also return the bandwidth used.
    mode : {"auto", "binary", "top_label"}, default="auto"
        ``"binary"``: P(``pos_label``) against its indicator. ``"top_label"``: the confidence
        ``max_k p_k`` against the correctness of the top label (a tie among ``m`` top classes
        counts ``1/m`` for each), as the paper does for multiclass models. ``"auto"``:
        ``"binary"`` for two classes, ``"top_label"`` otherwise.
    labels : array-like, default=None
        All class labels (default: those present in ``y_true``).
    pos_label : label, default=None
        Positive class for a one-column ``y_proba`` and for ``mode="binary"``; default: the
        greater label.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights (only their ratios matter).

    Returns
    -------
    smece : float
        The smooth ECE, in ``[0, 1]``.
    bandwidth : float
        The bandwidth ``sigma`` used; only if ``return_bandwidth=True``.

    See Also
    --------
    smooth_reliability_curve : The smoothed reliability curve and density.
    integrated_calibration_index : Lowess-based calibration error (ICI).

    Notes
    -----
    The kernel is the full reflected Gaussian ``sum_m phi(t - s - 2m) + phi(t + s - 2m)``; the
    published package ``relplot`` keeps only the first reflection, discretises on a coarser grid
    and stops its bandwidth bisection at a resolution of ``2**-10`` (returning the upper end), so
    its values differ from these in the third decimal -- and by more, relatively, for
    well-calibrated large samples, whose fixed point is itself of the order of ``2**-10``
    (for ``10**6`` calibrated predictions the fixed point is near 0.003 and the two values
    differ by about 5 to 15 per cent). Some packages smooth on the logit scale, which is not the
    paper's definition. Computation: linear binning on a grid of step at most ``sigma / 40``
    and an FFT convolution (see the module docstring), ``O(n)`` in the number of samples.

    References
    ----------
    J. Blasiok and P. Nakkiran, "Smooth ECE: Principled reliability diagrams via kernel
    smoothing", ICLR 2024 (arXiv:2309.12236, 2023).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import smooth_ece
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(5000)
    >>> y = (rng.random(5000) < p ** 2).astype(int)   # over-confident in the positive class
    >>> value, sigma = smooth_ece(y, p, return_bandwidth=True)
    >>> bool(0.1 < value < 0.2), bool(abs(value - sigma) < 1e-8)
    (True, True)
    """
    if not isinstance(return_bandwidth, (bool, np.bool_)):
        raise TypeError(f"return_bandwidth must be True or False; got {return_bandwidth!r}.")
    sigma, binned, _, _ = _smooth(y_true, y_proba, bandwidth, mode, labels, pos_label,
                                  sample_weight)
    value = binned.error(sigma)
    if return_bandwidth:
        return value, sigma
    return value


class SmoothReliabilityCurve(NamedTuple):
    """The smoothed reliability curve of :func:`smooth_reliability_curve`.

    Parameters
    ----------
    grid : ndarray of shape (n_points,)
        Evaluation points ``t`` in ``[0, 1]``.
    frequency : ndarray of shape (n_points,)
        Smoothed observed frequency ``sum_i K(t, p_i) w_i y_i / sum_i K(t, p_i) w_i``; NaN where
        the density is below ``1e-10`` times its maximum (no sample within many bandwidths, where
        the ratio would be round-off).
    mean_predicted : ndarray of shape (n_points,)
        Smoothed mean prediction ``sum_i K(t, p_i) w_i p_i / sum_i K(t, p_i) w_i`` (close to
        ``t`` where the data are dense); NaN where ``frequency`` is.
    density : ndarray of shape (n_points,)
        Smoothed density of the predictions (reflected-kernel KDE, integrates to 1 on
        ``[0, 1]``; 0 where ``frequency`` is NaN).
    bandwidth : float
        The kernel bandwidth ``sigma``.
    """

    grid: np.ndarray
    frequency: np.ndarray
    mean_predicted: np.ndarray
    density: np.ndarray
    bandwidth: float


def smooth_reliability_curve(y_true, y_proba, *, bandwidth="auto", n_points=None, mode="auto",
                             labels=None, pos_label=None, sample_weight=None):
    """The smoothed reliability curve of the smooth ECE (Blasiok and Nakkiran 2023).

    At every ``t`` in ``[0, 1]``: the kernel-smoothed observed frequency, the kernel-smoothed
    mean prediction and the smoothed density of the predictions, with the reflected Gaussian
    kernel of :func:`smooth_ece`. The smooth ECE is
    ``int |frequency - mean_predicted| * density dt`` over the curve.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels (any hashable, sortable values).
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: P(``pos_label``) for a binary problem, or one column per class.
    bandwidth : "auto" or float, default="auto"
        As in :func:`smooth_ece` (``"auto"``: the smooth ECE's fixed point).
    n_points : int, default=None
        Number of evenly spaced evaluation points in ``[0, 1]`` (at least 2, at most
        ``2**20 + 1``); default: the internal grid (``1 + 2**k`` points, step at most
        ``bandwidth / 40``), thinned to its ``4097`` points ``j / 4096`` when it is finer (the
        bandwidth is then below about 0.01).
    mode : {"auto", "binary", "top_label"}, default="auto"
        As in :func:`smooth_ece`.
    labels : array-like, default=None
        All class labels (default: those present in ``y_true``).
    pos_label : label, default=None
        Positive class for a one-column ``y_proba`` and for ``mode="binary"``.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights (only their ratios matter).

    Returns
    -------
    SmoothReliabilityCurve
        Named tuple ``(grid, frequency, mean_predicted, density, bandwidth)``.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import smooth_reliability_curve
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(2000)
    >>> y = (rng.random(2000) < p).astype(int)
    >>> curve = smooth_reliability_curve(y, p, bandwidth=0.05, n_points=11)
    >>> curve.grid.shape, bool(np.abs(curve.frequency - curve.grid).max() < 0.1)
    ((11,), True)
    """
    check_scalar_param(n_points, "n_points", kind="int", min_val=2, max_val=_MAX_GRID + 1,
                       allow_none=True)
    sigma, binned, p, w = _smooth(y_true, y_proba, bandwidth, mode, labels, pos_label,
                                  sample_weight)
    m = binned.m
    # The grid indices the curve needs: the neighbours of every requested point, or the whole
    # internal grid thinned to at most _MAX_DEFAULT_POINTS + 1 points (both are powers of two,
    # so the thinned points are exact grid points).
    if n_points is not None:
        grid = np.linspace(0.0, 1.0, n_points)
        lo = np.minimum(np.floor(grid * m).astype(np.intp), m - 1)
        at = np.unique(np.concatenate([lo, lo + 1]))
    else:
        at = np.arange(0, m + 1, max(1, m // _MAX_DEFAULT_POINTS))
    pred_binned = _Binned(p, p, w, m)  # the smoothed predictions: the predictions binned alike
    if binned.direct_is_cheaper(at.size):
        dens = binned.smooth_at(sigma, 0, at)
        resid = binned.smooth_at(sigma, 1, at)
        pred = pred_binned.smooth_at(sigma, 1, at)
        peak = dens.max()
    else:
        full = binned.smooth(sigma, 0)
        peak = full.max()
        dens = full[at]
        resid = binned.smooth(sigma, 1)[at]
        pred = pred_binned.smooth(sigma, 1)[at]
    t = at / m
    # FFT round-off is ~1e-16 of the maximum: far from every sample the ratios are noise
    seen = dens > 1e-10 * peak
    dens = np.where(seen, dens, 0.0)
    safe = np.where(seen, dens, 1.0)
    mean_pred = np.where(seen, pred / safe, np.nan)
    freq = np.where(seen, (pred + resid) / safe, np.nan)
    if n_points is not None:
        freq, mean_pred, dens = (np.interp(grid, t, a) for a in (freq, mean_pred, dens))
        t = grid
    return SmoothReliabilityCurve(t, freq, mean_pred, dens, float(sigma))


# --------------------------------------------------------------------------------------------
# Lowess and the integrated calibration index.


def _windows(x, at, q):
    """Half-width ``h`` of the neighbourhood of the ``q`` nearest points of sorted ``x`` around
    each point of ``at`` (vectorised bisection on the window's left end)."""
    n = x.size
    lo = np.zeros(at.size, dtype=np.intp)
    hi = np.full(at.size, n - q, dtype=np.intp)
    while np.any(lo < hi):
        mid = (lo + hi) // 2
        # move right while the point entering on the right is closer than the one leaving
        right = x[np.minimum(mid + q, n - 1)] - at < at - x[mid]
        right &= mid + q < n
        lo = np.where(right, mid + 1, lo)
        hi = np.where(right, hi, mid)
    return np.maximum(at - x[lo], x[lo + q - 1] - at)


def _local_fit(x, y, w, at, q, degree):
    """Local polynomial (degree 1 or 2) fits at the points ``at`` with tricube weights on the
    ``q`` nearest neighbours; ``x`` sorted, ``w`` None for unit weights. A few vectorised passes
    over each neighbourhood (a Python loop over the evaluation points only)."""
    h = _windows(x, at, q)
    left = np.searchsorted(x, at - h, side="right")
    right = np.searchsorted(x, at + h, side="left")
    out = np.empty(at.size)
    n_mom = 2 * degree + 1
    for g in range(at.size):
        a0 = at[g]
        if h[g] > 0:
            sl = slice(left[g], right[g])
            u = x[sl] - a0
            u *= 1.0 / h[g]
            t = np.abs(u)
            t *= t
            t *= np.abs(u)
            np.subtract(1.0, t, out=t)
            ww = t * t
            ww *= t
            if w is not None:
                ww *= w[sl]
        else:  # q or more samples at a0: their weighted mean
            sl = slice(np.searchsorted(x, a0, side="left"), np.searchsorted(x, a0, side="right"))
            u = np.zeros(sl.stop - sl.start)
            ww = np.ones_like(u) if w is None else w[sl]
        V = np.empty((n_mom, u.size))
        V[0] = ww
        for k in range(1, n_mom):
            np.multiply(V[k - 1], u, out=V[k])
        S = V.sum(axis=1)
        T = V[: degree + 1] @ y[sl]
        if not S[0] > 0:
            out[g] = np.nan
            continue
        fit = T[0] / S[0]
        det1 = S[0] * S[2] - S[1] * S[1]
        if det1 > 1e-12 * S[0] * S[0]:
            fit = (S[2] * T[0] - S[1] * T[1]) / det1
            if degree == 2:
                A = np.array([[S[0], S[1], S[2]], [S[1], S[2], S[3]], [S[2], S[3], S[4]]])
                if np.linalg.cond(A) < 1e10:
                    fit = np.linalg.solve(A, T)[0]
        out[g] = fit
    return out


def lowess_curve(x, y, w, *, frac, degree, robust_iters, n_grid):
    """Lowess fit of ``y`` on ``x`` evaluated at every sample (``x`` sorted ascending)."""
    n = x.size
    q = min(n, max(int(np.floor(frac * n + 1e-10)), degree + 1))
    ux = np.unique(x)
    if ux.size <= n_grid:
        at = ux
    else:
        at = np.unique(x[np.round(np.linspace(0, n - 1, n_grid)).astype(np.intp)])
    rw = None if np.all(w == 1.0) else w
    for it in range(robust_iters + 1):
        fit_at = _local_fit(x, y, rw, at, q, degree)
        fitted = np.interp(x, at, fit_at)
        if it == robust_iters:
            break
        res = np.abs(y - fitted)
        s = np.median(res)
        if not s > 1e-12 * max(np.mean(res), 1e-300):
            break
        b = np.clip(res / (6.0 * s), 0.0, 1.0)
        rw = w * (1.0 - b * b) ** 2
    return fitted


def _weighted_quantile(values, w, level):
    """Quantile with plotting positions ``(S_k - w_k) / (S_n - w_n)`` of the sorted values
    (``S`` the cumulative weights): R's and NumPy's default (type 7) for equal weights."""
    keep = w > 0
    v, w = values[keep], w[keep]
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    if v.size == 1:
        return float(v[0])
    cw = np.cumsum(w)
    pos = (cw - w) / (cw[-1] - w[-1])
    return float(np.interp(level, pos, v))


class ICIResult(NamedTuple):
    """The four calibration indices of :func:`integrated_calibration_index`.

    Parameters
    ----------
    ici : float
        Weighted mean of ``|c(p_i) - p_i|``.
    e50 : float
        Its median.
    e90 : float
        Its 90th percentile.
    emax : float
        Its maximum.
    """

    ici: float
    e50: float
    e90: float
    emax: float


_STATISTICS = ("ici", "e50", "e90", "emax", "all")


def integrated_calibration_index(y_true, y_proba, *, statistic="ici", frac=0.75, degree=2,
                                 robust_iters=0, n_grid="auto", mode="auto", labels=None,
                                 pos_label=None, sample_weight=None):
    """Integrated calibration index (ICI), E50, E90 and Emax of Austin and Steyerberg (2019).

    A local polynomial regression (lowess/loess) of the outcome on the predicted probability
    gives a smooth calibration curve ``c``; the absolute differences ``|c(p_i) - p_i|`` at the
    samples' predictions are averaged (ICI), or summarised by their median (E50), 90th
    percentile (E90) or maximum (Emax).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels (any hashable, sortable values).
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: P(``pos_label``) for a binary problem, or one column per class.
    statistic : {"ici", "e50", "e90", "emax", "all"}, default="ici"
        The index returned; ``"all"`` returns the four in an :class:`ICIResult`.
    frac : float, default=0.75
        Span: the share of the samples in each local fit (the ``floor(frac * n)`` nearest
        predictions), in ``(0, 1]``. 0.75 is R's ``loess`` default used by Austin and Steyerberg.
    degree : {1, 2}, default=2
        Degree of the local polynomial: 2 is R's ``loess`` (Austin and Steyerberg), 1 is
        Cleveland's ``lowess`` (R ``lowess``, statsmodels).
    robust_iters : int, default=0
        Robustness iterations (bisquare reweighting of large residuals, Cleveland 1979). 0 is the
        ``loess`` default ``family="gaussian"`` of Austin and Steyerberg; statsmodels' ``lowess``
        uses 3. With a 0/1 outcome the robustness iterations down-weight the minority class and
        can change the indices by a factor 2 to 3. At most 100.
    n_grid : "auto" or int, default="auto"
        Number of points at which the curve is fitted (at equally spaced order statistics of the
        predictions) before linear interpolation at every sample; ``"auto"`` is
        ``clip(50 / frac, 50, 2000)``. With at most ``n_grid`` distinct predictions the curve is
        fitted at each of them (exact).
    mode : {"auto", "binary", "top_label"}, default="auto"
        As in :func:`smooth_ece` (``"top_label"``: confidence against the correctness of the top
        label).
    labels : array-like, default=None
        All class labels (default: those present in ``y_true``).
    pos_label : label, default=None
        Positive class for a one-column ``y_proba`` and for ``mode="binary"``.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights: they multiply the tricube weights of the local fits and weight the
        average and the quantiles (plotting positions ``(S_k - w_k) / (S_n - w_n)`` of the
        cumulative weights, NumPy's and R's default quantile for equal weights). Neighbourhoods
        count samples of positive weight.

    Returns
    -------
    float or ICIResult
        The requested index, or ``ICIResult(ici, e50, e90, emax)`` for ``statistic="all"``.

    Notes
    -----
    The smoother is written on NumPy. With the defaults it is R's
    ``loess(y ~ p, control = loess.control(surface = "direct"))`` (degree 2, span 0.75, no
    robustness iterations; equal to rounding, tested); R's default ``surface = "interpolate"``,
    which Austin and Steyerberg's code used, interpolates the fit from a k-d tree and differs by a
    relative ``1e-3`` (ICI) to a few ``1e-2`` (E50). With ``degree=1, robust_iters=3`` it is
    statsmodels' ``lowess(y, p, frac, it=3, delta=0)``. The curve is not
    clipped to ``[0, 1]`` (as in the paper). The choice of smoother matters: state ``frac``,
    ``degree`` and ``robust_iters`` when reporting an ICI.

    References
    ----------
    P. C. Austin and E. W. Steyerberg, "The Integrated Calibration Index (ICI) and related metrics
    for quantifying the calibration of logistic regression models", Statistics in Medicine 38
    (2019), 4051-4065.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import integrated_calibration_index
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(2000)
    >>> y = (rng.random(2000) < p ** 2).astype(int)
    >>> res = integrated_calibration_index(y, p, statistic="all")
    >>> bool(res.e50 <= res.e90 <= res.emax), bool(0.1 < res.ici < 0.25)
    (True, True)
    """
    check_option(statistic, "statistic", _STATISTICS)
    check_scalar_param(frac, "frac", kind="real", min_val=0.0, max_val=1.0, include_min=False)
    check_scalar_param(degree, "degree", kind="int", min_val=1, max_val=2)
    check_scalar_param(robust_iters, "robust_iters", kind="int", min_val=0,
                       max_val=_MAX_ROBUST_ITERS)
    if isinstance(n_grid, str):
        check_option(n_grid, "n_grid", ("auto",))
        n_grid = int(np.clip(np.ceil(50.0 / frac), 50, 2000))
    else:
        check_scalar_param(n_grid, "n_grid", kind="int", min_val=2)
    p, y, w = binary_problem(y_true, y_proba, mode=mode, labels=labels, pos_label=pos_label,
                             sample_weight=sample_weight)
    keep = w > 0
    if not np.all(keep):
        p, y, w = p[keep], y[keep], w[keep]
    order = np.argsort(p, kind="stable")
    x, yy, ww = p[order], y[order], w[order]
    fitted = lowess_curve(x, yy, ww, frac=float(frac), degree=int(degree),
                          robust_iters=int(robust_iters), n_grid=n_grid)
    a = np.abs(fitted - x)
    ici = float(ww @ a / ww.sum())
    if statistic == "ici":
        return ici
    if statistic == "emax":
        return float(a.max())
    if statistic == "e50":
        return _weighted_quantile(a, ww, 0.5)
    if statistic == "e90":
        return _weighted_quantile(a, ww, 0.9)
    return ICIResult(ici, _weighted_quantile(a, ww, 0.5), _weighted_quantile(a, ww, 0.9),
                     float(a.max()))
