"""The synthetic Gaussian models and the regression data of Widmann et al. (2021)."""

import functools
import math

import numpy as np
from scipy import integrate

from .._validation import check_rng, check_scalar_param
from ..distributions import MultivariateNormal, Normal
from ._common import _check_bool

#: Standard deviation of every coordinate of the synthetic Gaussian predictions.
_PRED_SD = 0.1
_PRED_VAR = 0.01
#: Mean of the first target coordinate of the miscalibrated synthetic model.
_SHIFTED_MEAN = 0.1


def make_gaussian_predictions(n_samples=100, *, n_dims=1, calibrated=True, random_state=None):
    """Normal predictions and targets of the synthetic Gaussian models of Widmann et al. (2021).

    For every sample a scalar ``c ~ U(0, 1)`` is drawn and the prediction is
    ``N(c * 1_d, 0.1**2 * I_d)``. The targets are drawn from the predictions (a calibrated model),
    or, if ``calibrated=False``, from the predictions with the first coordinate replaced by
    ``N(0.1, 0.1**2)`` (a model that is miscalibrated in that coordinate).

    Parameters
    ----------
    n_samples : int, default=100
        Number of predictions and targets, ``>= 1``.
    n_dims : int, default=1
        Dimension ``d >= 1`` of the targets.
    calibrated : bool, default=True
        Draw the targets from the predictions (True) or from the miscalibrated model (False).
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.

    Returns
    -------
    predictions : Normal or MultivariateNormal
        ``Normal(c, 0.1)`` if ``n_dims == 1``, else a spherical
        ``MultivariateNormal(c[:, None] * ones(d), full(n_samples, 0.01))``.
    y : ndarray of shape (n_samples,) or (n_samples, n_dims)
        The targets; one-dimensional if ``n_dims == 1``.

    See Also
    --------
    gaussian_predictions_skce : The exact SKCE of this model.

    Notes
    -----
    The draws are, in this order, ``c`` (``n_samples`` uniforms) and a standard normal matrix
    ``E`` of shape ``(n_samples, n_dims)``; the targets are ``c + 0.1 * E`` and, for the
    miscalibrated model, column 0 is ``0.1 + 0.1 * E[:, 0]``. Hence the calibrated and the
    miscalibrated model drawn with the same seed share the predictions and all but the first
    target coordinate.

    The 2-Wasserstein distance between two predictions is ``sqrt(d) * |c - c'|`` (equal
    covariances). The paper's experiments use ``d`` in {1, 10}.

    References
    ----------
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests beyond classification. ICLR 2021,
    Appendix A.2.

    Examples
    --------
    >>> from skcalib.datasets import make_gaussian_predictions, gaussian_predictions_skce
    >>> predictions, y = make_gaussian_predictions(1000, calibrated=False, random_state=0)
    >>> type(predictions).__name__, y.shape
    ('Normal', (1000,))
    >>> from skcalib import skce
    >>> from skcalib.kernels import GaussianKernel, WassersteinKernel, tensor
    >>> kernel = tensor(WassersteinKernel(1.0), GaussianKernel(1.0))
    >>> estimate = skce(y, predictions, kernel=kernel)  # unbiased; standard error about 0.006
    >>> abs(estimate - gaussian_predictions_skce(1)) < 0.03
    True
    >>> predictions, y = make_gaussian_predictions(5, n_dims=3, random_state=0)
    >>> predictions.dim, y.shape
    (3, (5, 3))
    """
    check_scalar_param(n_samples, "n_samples", min_val=1)
    check_scalar_param(n_dims, "n_dims", min_val=1)
    calibrated = _check_bool(calibrated, "calibrated")
    rng = check_rng(random_state)
    n, d = int(n_samples), int(n_dims)

    c = rng.uniform(0.0, 1.0, size=n)
    E = rng.standard_normal((n, d))
    y = c[:, None] + _PRED_SD * E
    if not calibrated:
        y[:, 0] = _SHIFTED_MEAN + _PRED_SD * E[:, 0]
    if d == 1:
        return Normal(c, _PRED_SD), y[:, 0]
    mean = c[:, None] * np.ones(d)
    return MultivariateNormal(mean, np.full(n, _PRED_VAR)), y


def gaussian_predictions_skce(n_dims=1, *, calibrated=False):
    r"""Exact SKCE of the synthetic Gaussian model of :func:`make_gaussian_predictions`.

    The kernel is the one of the paper's experiments,
    ``k((p, y), (p', y')) = exp(-W2(p, p')) * exp(-||y - y'||^2 / 2)``, i.e.
    ``tensor(WassersteinKernel(1.0), GaussianKernel(1.0))`` in :mod:`skcalib.kernels`.

    Parameters
    ----------
    n_dims : int, default=1
        Dimension ``d >= 1`` of the targets.
    calibrated : bool, default=False
        The calibrated model (SKCE 0) or the model miscalibrated in its first coordinate.

    Returns
    -------
    float
        The squared kernel calibration error: 0.0 for the calibrated model; for the
        miscalibrated model 0.1107737017737 (``d = 1``) and 0.0595975411300 (``d = 10``), the
        values in :data:`GAUSSIAN_PREDICTIONS_SKCE`.

    See Also
    --------
    make_gaussian_predictions : Draws from the model.

    Notes
    -----
    With ``c, c' ~ U(0, 1)`` independent and ``a = 2 (1 + 2 * 0.1**2) = 2.04``,
    the expectation of the SKCE kernel ``h`` over the miscalibrated model is

    .. math::

        \mathrm{SKCE} = \int_0^1\!\!\int_0^1 e^{-\sqrt d |c - c'|}\, 1.02^{-d/2}\,
        e^{-(d - 1)(c - c')^2 / a}\Big[1 - e^{-(c - 0.1)^2 / a} - e^{-(c' - 0.1)^2 / a}
        + e^{-(c - c')^2 / a}\Big]\,\mathrm dc\,\mathrm dc'.

    Coordinates 2..d are calibrated and contribute only the factor
    ``1.02**(-1/2) * exp(-(c - c')**2 / a)`` each; the bracket is the first coordinate's term. The
    integrand has a kink along the diagonal ``c = c'``, so the square is split there. Both
    triangles contribute equally (the integrand is symmetric); the triangle ``c' <= c`` is
    integrated in the coordinates ``u = c - c'`` (outer) and ``c`` (inner, from ``u`` to 1) with
    :func:`scipy.integrate.dblquad` (absolute tolerance 1e-14, relative 1e-13). Results are
    cached per ``n_dims``.

    References
    ----------
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests beyond classification. ICLR 2021,
    Appendix A.2 (where the ground truth was estimated by simulation).

    Examples
    --------
    >>> from skcalib.datasets import gaussian_predictions_skce
    >>> round(gaussian_predictions_skce(1), 12)
    0.110773701774
    >>> round(gaussian_predictions_skce(10), 12)
    0.05959754113
    >>> gaussian_predictions_skce(10, calibrated=True)
    0.0
    """
    check_scalar_param(n_dims, "n_dims", min_val=1)
    calibrated = _check_bool(calibrated, "calibrated")
    if calibrated:
        return 0.0
    return _miscalibrated_skce(int(n_dims))


@functools.lru_cache(maxsize=None)
def _miscalibrated_skce(d):
    a = 2.0 * (1.0 + 2.0 * _PRED_VAR)  # 2.04
    root_d = math.sqrt(d)
    m = _SHIFTED_MEAN

    def integrand(c, u):  # u = c - c' >= 0
        return math.exp(-root_d * u - (d - 1) * u * u / a) * (
            1.0 - math.exp(-(c - m) ** 2 / a) - math.exp(-(c - u - m) ** 2 / a)
            + math.exp(-u * u / a)
        )

    value, _ = integrate.dblquad(integrand, 0.0, 1.0, lambda u: u, 1.0,
                                 epsabs=1e-14, epsrel=1e-13)
    return float(2.0 * (1.0 + 2.0 * _PRED_VAR) ** (-d / 2) * value)


def make_heteroscedastic_regression(n_samples=100, *, noise=0.15, random_state=None):
    """Heteroscedastic one-dimensional regression data (Fig. 1 of Widmann et al. 2021).

    ``X ~ U[-1, 1]`` and ``y = sin(pi X) + |1 + X| * eps`` with ``eps ~ N(0, noise**2)``, so that
    the conditional law of ``y`` given ``X = x`` is ``N(sin(pi x), (noise * |1 + x|)**2)``.

    Parameters
    ----------
    n_samples : int, default=100
        Number of samples, ``>= 1``.
    noise : float, default=0.15
        Standard deviation of ``eps``, ``>= 0``.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.

    Returns
    -------
    X : ndarray of shape (n_samples, 1)
        Features.
    y : ndarray of shape (n_samples,)
        Targets.

    See Also
    --------
    make_ols_predictions : A miscalibrated model fitted to these data.

    Notes
    -----
    The draws are, in this order, the ``n_samples`` uniforms of ``X`` and the ``n_samples``
    standard normals of ``eps / noise``.

    References
    ----------
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests beyond classification. ICLR 2021,
    Appendix A.1.

    F. K. Gustafsson, M. Danelljan, T. B. Schön. Evaluating scalable Bayesian deep learning
    methods for robust computer vision. CVPR Workshops 2020.

    Examples
    --------
    >>> from skcalib.datasets import make_heteroscedastic_regression
    >>> X, y = make_heteroscedastic_regression(50, random_state=0)
    >>> X.shape, y.shape
    ((50, 1), (50,))
    >>> bool(X.min() >= -1 and X.max() <= 1)
    True
    """
    check_scalar_param(n_samples, "n_samples", min_val=1)
    check_scalar_param(noise, "noise", kind="real", min_val=0.0)
    rng = check_rng(random_state)
    n = int(n_samples)
    x = rng.uniform(-1.0, 1.0, size=n)
    eps = float(noise) * rng.standard_normal(n)
    y = np.sin(np.pi * x) + np.abs(1.0 + x) * eps
    return x[:, None], y


def make_ols_predictions(n_train=100, n_test=50, *, random_state=None):
    """Normal predictions of ordinary least squares on heteroscedastic data (Widmann et al. 2021).

    A line ``b0 + b1 x`` is fitted by ordinary least squares
    (:class:`sklearn.linear_model.LinearRegression`) to ``n_train`` samples of
    :func:`make_heteroscedastic_regression`; the predictions for ``n_test`` fresh samples are the
    homoscedastic normals ``N(b0 + b1 x, sigma**2)``, where ``sigma`` is the standard deviation of
    the training residuals (``ddof=1``). The true conditional law is
    ``N(sin(pi x), (0.15 |1 + x|)**2)``: the predictions are miscalibrated, although their PIT
    values look roughly uniform (they "look quantile-calibrated").

    Parameters
    ----------
    n_train : int, default=100
        Training samples, ``>= 3``.
    n_test : int, default=50
        Test samples (predictions returned), ``>= 1``.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.

    Returns
    -------
    predictions : Normal
        ``n_test`` predictions with a common scale ``sigma``.
    y_test : ndarray of shape (n_test,)
        The test targets.

    See Also
    --------
    make_heteroscedastic_regression : The data.

    Notes
    -----
    The training and the test set are, in this order, two calls of
    :func:`make_heteroscedastic_regression` (with ``noise=0.15``) on the generator made from
    ``random_state``; the test features can be recovered by repeating these calls.

    The paper uses 100 training and 50 test samples and rejects calibration with the bootstrap
    test of the unbiased SKCE for the kernel ``exp(-W2(p, p')) * exp(-(y - y')**2 / 2)``.

    References
    ----------
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests beyond classification. ICLR 2021,
    Fig. 1 and Appendix A.1.

    Examples
    --------
    >>> from skcalib.datasets import make_ols_predictions
    >>> predictions, y_test = make_ols_predictions(random_state=0)
    >>> type(predictions).__name__, len(predictions), y_test.shape
    ('Normal', 50, (50,))
    >>> import numpy as np
    >>> bool(np.all(predictions.scale == predictions.scale[0]))  # homoscedastic
    True
    """
    check_scalar_param(n_train, "n_train", min_val=3)
    check_scalar_param(n_test, "n_test", min_val=1)
    rng = check_rng(random_state)
    from sklearn.linear_model import LinearRegression

    X_train, y_train = make_heteroscedastic_regression(int(n_train), random_state=rng)
    X_test, y_test = make_heteroscedastic_regression(int(n_test), random_state=rng)
    model = LinearRegression().fit(X_train, y_train)
    sigma = float(np.std(y_train - model.predict(X_train), ddof=1))
    return Normal(model.predict(X_test), sigma), y_test
