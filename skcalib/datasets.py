"""Synthetic data sets and predictive models with known calibration properties.

The generators reproduce the experiments of Widmann, Lindsten and Zachariah (ICLR 2021):

* :func:`make_gaussian_predictions` -- the synthetic Gaussian models of their Appendix A.2, either
  calibrated or miscalibrated in one coordinate;
* :func:`gaussian_predictions_skce` -- the exact SKCE of that model for the paper's kernel, a ground
  truth for estimators (:data:`GAUSSIAN_PREDICTIONS_SKCE` holds the two documented values);
* :func:`make_heteroscedastic_regression` -- the heteroscedastic regression data of their Fig. 1;
* :func:`make_ols_predictions` -- homoscedastic Normal predictions of ordinary least squares on
  those data: they look quantile-calibrated but are not calibrated.

and classification models with known calibration functions, for the estimators of squared
calibration errors of Gruber & Bach (:mod:`skcalib.estimation`):

* :func:`make_dirichlet_calibration` -- the simulation of their Sec. 5.1 (Dirichlet true
  probabilities, sampled in log space, and underconfident predictions ``softmax(0.3 log P)``),
  with the true probabilities; :func:`squared_calibration_errors` gives each sample's canonical
  error, :func:`dirichlet_calibration_errors` the population errors of every notion, and
  :data:`DIRICHLET_CALIBRATION_ERRORS` their values at the paper's parameters;
* :func:`make_binary_squared_calibration` -- binary predictions ``c ~ U(0, 1)`` with labels
  ``Bernoulli(c**2)``, whose squared calibration error is exactly
  :data:`BINARY_SQUARED_CALIBRATION_ERROR` ``= 1/30``;

and the Dirichlet models M1--M3 of Widmann, Lindsten and Zachariah (NeurIPS 2019), on which the
calibration tests of :mod:`skcalib.stats` are checked:

* :func:`make_dirichlet_predictions` -- predictions ``g ~ Dir(alpha)`` with labels drawn from
  ``g`` (calibrated) or, with probability ``pi``, from a fixed distribution;

and an audit data set for local calibration (Vashistha and Farahi):

* :func:`make_audit_data` -- model inputs, binary labels and audit features (age, group) that
  shift the risk locally by a known amount while leaving it unchanged on average.

Every generator takes ``random_state`` (None, an int, a ``numpy.random.Generator`` or a
``RandomState``) and returns the same data for the same seed.
"""

import functools
import math

import numpy as np
from scipy import integrate

from ._validation import check_probability_array, check_rng, check_scalar_param
from .distributions import MultivariateNormal, Normal

__all__ = [
    "GAUSSIAN_PREDICTIONS_SKCE",
    "make_gaussian_predictions",
    "gaussian_predictions_skce",
    "make_heteroscedastic_regression",
    "make_ols_predictions",
    "DIRICHLET_CALIBRATION_ACCURACY",
    "DIRICHLET_CALIBRATION_ERRORS",
    "DIRICHLET_CALIBRATION_ERRORS_SE",
    "BINARY_SQUARED_CALIBRATION_ERROR",
    "make_dirichlet_calibration",
    "dirichlet_calibration_errors",
    "squared_calibration_errors",
    "make_binary_squared_calibration",
    "make_dirichlet_predictions",
    "make_audit_data",
]

#: Standard deviation of every coordinate of the synthetic Gaussian predictions.
_PRED_SD = 0.1
_PRED_VAR = 0.01
#: Mean of the first target coordinate of the miscalibrated synthetic model.
_SHIFTED_MEAN = 0.1

#: Exact SKCE of the miscalibrated synthetic Gaussian model (:func:`make_gaussian_predictions`
#: with ``calibrated=False``) for the kernel ``exp(-W2(p, p')) * exp(-||y - y'||^2 / 2)``, keyed by
#: ``n_dims``: the two settings of Widmann et al. (2021, Appendix A.2), by 2-D quadrature.
GAUSSIAN_PREDICTIONS_SKCE = {1: 0.1107737017737, 10: 0.0595975411300}


def _check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool; got {value!r} of type {type(value).__name__}.")
    return bool(value)


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


# ------------------------------------------------------------------------------------------------
# Classification: the simulation of Gruber & Bach and an analytic binary model
# ------------------------------------------------------------------------------------------------

#: Population squared calibration errors of :func:`make_dirichlet_calibration` with its default
#: parameters (5 classes, concentration 0.04, power 0.3), keyed by notion: ``"canonical"``
#: (``E||f - P||^2``), ``"top_label"`` (``E[(c - E[max P | c])^2]``, ``c = max f``) and
#: ``"classwise"`` (``sum_k E[(f_k - P(Y = k | f_k))^2]``, summed over the classes). Computed by
#: :func:`dirichlet_calibration_errors` with ``n_samples=10**8`` and ``random_state=0``; the
#: Monte-Carlo standard errors are 3e-6 to 6e-6 (:data:`DIRICHLET_CALIBRATION_ERRORS_SE`).
DIRICHLET_CALIBRATION_ERRORS = {"canonical": 0.063303, "top_label": 0.036169,
                                "classwise": 0.052702}

#: Monte-Carlo standard errors of :data:`DIRICHLET_CALIBRATION_ERRORS` and of
#: :data:`DIRICHLET_CALIBRATION_ACCURACY` (batch means of 10 batches of 1e7 samples).
DIRICHLET_CALIBRATION_ERRORS_SE = {"canonical": 4.9e-6, "top_label": 2.9e-6, "classwise": 5.8e-6,
                                   "accuracy": 1.1e-5}

#: Population accuracy ``E[max P]`` of :func:`make_dirichlet_calibration` with its defaults
#: (:func:`dirichlet_calibration_errors`, 1e8 samples).
DIRICHLET_CALIBRATION_ACCURACY = 0.905981

#: Exact squared (binary, class-1) calibration error of :func:`make_binary_squared_calibration`:
#: ``E[(c - c^2)^2] = 1/3 - 1/2 + 1/5 = 1/30``. As a two-class canonical problem
#: (``p = (1 - c, c)``) the error is twice this, ``2/30``.
BINARY_SQUARED_CALIBRATION_ERROR = 1.0 / 30.0

#: Batches of :func:`dirichlet_calibration_errors` (its standard errors are batch-means ones).
_TRUTH_BATCHES = 10


def _check_real_positive(value, name):
    check_scalar_param(value, name, kind="real", min_val=0.0, include_min=False)
    return float(value)


def _dirichlet_log_probabilities(rng, n, d, concentration):
    """``log P`` for ``n`` draws of ``Dir(concentration * 1_d)``, sampled in log space.

    ``log G = log Gamma(a + 1) + log(U) / a`` is the logarithm of a ``Gamma(a)`` variable
    (Marsaglia & Tsang's boosting), with ``U ~ U(0, 1]``; ``log P = log G - logsumexp(log G)``.
    """
    with np.errstate(all="ignore"):
        log_g = np.log(rng.standard_gamma(concentration + 1.0, size=(n, d)))
        log_g += np.log(1.0 - rng.random((n, d))) / concentration  # 1 - U in (0, 1]
        top = log_g.max(axis=1, keepdims=True)
        log_p = log_g - (top + np.log(np.exp(log_g - top).sum(axis=1, keepdims=True)))
    if not np.all(np.isfinite(log_p)):
        raise ValueError(f"concentration={concentration!r} is too small: the log-probabilities "
                         "overflow in float64.")
    return log_p


def _log_softmax(z):
    top = z.max(axis=1, keepdims=True)
    return z - (top + np.log(np.exp(z - top).sum(axis=1, keepdims=True)))


def _dirichlet_model(rng, n, d, concentration, power):
    """``(f, P)`` of the simulation: ``f = softmax(power * log P)``, computed from ``log P``."""
    log_p = _dirichlet_log_probabilities(rng, n, d, concentration)
    with np.errstate(all="ignore"):
        log_f = _log_softmax(power * log_p)
    if not np.all(np.isfinite(log_f)):
        raise ValueError(f"power={power!r} is too large: the predictions overflow in float64.")
    return np.exp(log_f), np.exp(log_p)


def _categorical(rng, P):
    """One label per row of the probability matrix ``P`` (inverse CDF of one uniform per row)."""
    u = rng.random(P.shape[0])
    y = (np.cumsum(P, axis=1) <= u[:, None]).sum(axis=1)
    return np.minimum(y, P.shape[1] - 1)


def make_dirichlet_calibration(n_samples=500, n_classes=5, *, concentration=0.04, power=0.3,
                               random_state=None, return_truth=False):
    """Miscalibrated multi-class predictions with known calibration (Gruber & Bach, Sec. 5.1).

    The simulation of Gruber & Bach: true probabilities ``P ~ Dir(concentration * 1_d)``,
    labels ``y ~ Categorical(P)`` and predictions ``f = softmax(power * log P)``, i.e. ``f``
    proportional to ``P**power``. The predictions are a bijection of ``P``, so the calibration
    function is known exactly: ``P(Y | f) = P = softmax(log f / power)``. With ``power < 1`` the
    predictions are underconfident, with ``power > 1`` overconfident, and ``power = 1`` gives
    calibrated predictions (``f = P``).

    Parameters
    ----------
    n_samples : int, default=500
        Number of samples, ``>= 1`` (the paper's 500).
    n_classes : int, default=5
        Number of classes ``d >= 2`` (the paper's 5).
    concentration : float, default=0.04
        Concentration ``alpha > 0`` of the symmetric Dirichlet distribution (the paper's 0.04,
        chosen for an accuracy of about 90%).
    power : float, default=0.3
        Exponent ``> 0`` of the predictions (the paper's 3/10); the paper's temperature family
        ``h_sim(theta)`` recovers the truth at ``theta = 1``, i.e. temperature ``power``.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.
    return_truth : bool, default=False
        Also return the true probabilities ``P``.

    Returns
    -------
    y_proba : ndarray of shape (n_samples, n_classes)
        The predictions ``f``; rows sum to one. At the defaults no entry is zero: an entry
        underflows only where ``power * log P < -745``, and ``log P > -1000`` at concentration
        0.04.
    y : ndarray of shape (n_samples,)
        Labels in ``0, ..., n_classes - 1``.
    true_prob : ndarray of shape (n_samples, n_classes)
        Only if ``return_truth``: ``P``, which is the calibration function ``P(Y | f)`` at
        ``y_proba``. :func:`squared_calibration_errors` gives each sample's canonical error.

    See Also
    --------
    dirichlet_calibration_errors : Population calibration errors of the model.
    squared_calibration_errors : Per-sample canonical errors ``||f - P||^2``.
    make_binary_squared_calibration : A binary model with an analytic calibration error.

    Notes
    -----
    **Sampling in log space.** For small concentrations ``numpy.random.Generator.dirichlet``
    returns exact zeros (about 3% of the entries at ``alpha = 0.04``), and ``log 0`` breaks
    ``f = softmax(power * log P)``. Here ``log G_k = log Gamma(alpha + 1) + log(U_k) / alpha``
    (the logarithm of a ``Gamma(alpha)`` variable, ``U_k ~ U(0, 1]``), ``log P = log G -
    logsumexp(log G)`` and ``f`` is computed from ``log P``: ``f`` has no zeros, and ``P``
    underflows to 0 only where ``log P < -745``, which needs about ``U_k < exp(-745 alpha)``: a
    probability of 1e-13 per entry at the default concentration, but of 6e-4 at 0.01.

    The draws are, in this order, the ``n_samples x n_classes`` gamma variables (shape
    ``alpha + 1``), the ``n_samples x n_classes`` uniforms ``U`` and one uniform per sample for the
    label (inverse of the cumulative sum of ``P``).

    **Ground truth at the defaults** (:data:`DIRICHLET_CALIBRATION_ERRORS` and
    :data:`DIRICHLET_CALIBRATION_ACCURACY`, from 1e8 Monte-Carlo samples with standard errors of
    3e-6 to 1.1e-5; the accuracy is ``E[max P]`` because ``argmax f = argmax P``):

    ====================================================  ========
    accuracy ``E[max P]``                                  0.90598
    canonical ``CCE_2^2 = E||f - P||^2``                   0.063303
    top-label ``TCE_2^2 = E[(c - E[max P | c])^2]``        0.036169
    class-wise ``sum_k E[(f_k - E[P_k | f_k])^2]``         0.052702
    ====================================================  ========

    (The paper does not state these values; they agree with those of an independent
    re-implementation: 0.906, 0.0633, 0.0362 and 0.0527.) The mean top-label confidence is
    0.740: the predictions are underconfident.

    Only the canonical error has an exact per-sample value (``||f_i - P_i||^2``, see
    :func:`squared_calibration_errors`): the top-label and the class-wise calibration functions
    condition on one coordinate of ``f`` and are not ``max P`` or ``P_k``. Their values are
    population values; :func:`dirichlet_calibration_errors` computes them for other parameters.

    References
    ----------
    S. G. Gruber, F. Bach. Optimizing estimators of squared calibration errors in
    classification. Section 5.1.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.datasets import make_dirichlet_calibration, squared_calibration_errors
    >>> y_proba, y, P = make_dirichlet_calibration(random_state=0, return_truth=True)
    >>> y_proba.shape, y.shape, P.shape
    ((500, 5), (500,), (500, 5))
    >>> bool(np.all(y_proba > 0)), bool(np.allclose(y_proba.sum(axis=1), 1.0))
    (True, True)
    >>> float(np.mean(y_proba.argmax(axis=1) == y))  # accuracy; population value 0.906
    0.902
    >>> round(float(squared_calibration_errors(y_proba, P).mean()), 4)  # CCE_2^2; population 0.0633
    0.0624

    The truth is the temperature-scaled prediction with temperature ``power``:

    >>> from scipy.special import softmax
    >>> bool(np.allclose(softmax(np.log(y_proba) / 0.3, axis=1), P))
    True
    """
    check_scalar_param(n_samples, "n_samples", min_val=1)
    check_scalar_param(n_classes, "n_classes", min_val=2)
    concentration = _check_real_positive(concentration, "concentration")
    power = _check_real_positive(power, "power")
    return_truth = _check_bool(return_truth, "return_truth")
    rng = check_rng(random_state)
    f, P = _dirichlet_model(rng, int(n_samples), int(n_classes), concentration, power)
    y = _categorical(rng, P)
    return (f, y, P) if return_truth else (f, y)


def squared_calibration_errors(y_proba, true_prob):
    """Each sample's squared distance between the prediction and the calibration function.

    ``||f_i - pi(f_i)||^2`` for probability matrices (the per-sample canonical error, whose mean
    estimates ``CCE_2^2``), or ``(c_i - pi(c_i))^2`` for one-dimensional binary probabilities
    ``c = P(class 1)`` (the per-sample binary error; the two-column canonical error is twice it).
    ``true_prob`` is the true calibration function at the predictions, as returned by
    :func:`make_dirichlet_calibration` and :func:`make_binary_squared_calibration` with
    ``return_truth=True``. The mean over a data set is the *sample* truth of that data set.

    Parameters
    ----------
    y_proba : array-like of shape (n_samples, n_classes) or (n_samples,)
        Predicted probabilities, checked as every metric checks them: in ``[0, 1]``, rows of a
        matrix summing to one.
    true_prob : array-like of the same shape
        True conditional probabilities ``P(Y | f)`` at the predictions (the same checks).

    Returns
    -------
    ndarray of shape (n_samples,)

    Examples
    --------
    >>> from skcalib.datasets import make_binary_squared_calibration, squared_calibration_errors
    >>> c, y, pi = make_binary_squared_calibration(100_000, random_state=0, return_truth=True)
    >>> round(float(squared_calibration_errors(c, pi).mean()), 4)  # exact value 1/30 = 0.03333
    0.0334
    >>> squared_calibration_errors([[0.5, 0.5]], [[1.0, 0.0]])
    array([0.5])
    """
    f = check_probability_array(y_proba, "y_proba")
    p = check_probability_array(true_prob, "true_prob")
    if f.shape != p.shape:
        raise ValueError(f"y_proba and true_prob must have the same shape, (n_samples,) or "
                         f"(n_samples, n_classes); got {f.shape} and {p.shape}.")
    diff = f - p
    return diff * diff if diff.ndim == 1 else np.einsum("ij,ij->i", diff, diff)


def _neighbour_pair_terms(c, target):
    """``(c_i - t_i)(c_j - t_j)`` for disjoint pairs of neighbours in the order of ``c``.

    Given the ``c`` values the targets are independent, so each term has expectation
    ``g(c_i) g(c_j)`` with ``g(c) = c - E[t | c]``, i.e. ``g(c)^2`` up to
    ``-(g(c_i) - g(c_j))^2 / 2``: a squared calibration error without binning or smoothing bias
    beyond the spacing of neighbours.
    """
    r = (c - target)[np.argsort(c, kind="stable")]
    m = r.size // 2
    return r[0:2 * m:2] * r[1:2 * m:2]


def dirichlet_calibration_errors(n_classes=5, *, concentration=0.04, power=0.3,
                                 n_samples=1_000_000, random_state=0, return_se=False):
    """Population calibration errors of :func:`make_dirichlet_calibration`, by Monte Carlo.

    Draws ``n_samples`` predictions ``f`` with their true probabilities ``P`` and returns

    * ``"canonical"``: ``E||f - P||^2`` (``CCE_2^2``; the mean of the exact per-sample errors);
    * ``"top_label"``: ``E[(c - E[max P | c])^2]`` with ``c = max f`` (``TCE_2^2``);
    * ``"classwise"``: ``sum_k E[(f_k - E[P_k | f_k])^2]`` (``CWCE_2^2``, summed over classes);
    * ``"accuracy"``: ``E[max P]`` (the accuracy of ``argmax f``).

    The conditional expectations of the top-label and the class-wise notions have no closed form.
    Instead of binning, the samples are sorted by the conditioning variable ``s`` (``c`` or
    ``f_k``) and split into disjoint pairs of neighbours; given the ``s`` values the targets
    ``t`` (``max P`` or ``P_k``) are independent, so ``(s_i - t_i)(s_j - t_j)`` has expectation
    ``g(s_i) g(s_j)`` with ``g(s) = s - E[t | s]`` -- the squared error up to the tiny
    ``-(g(s_i) - g(s_j))^2 / 2`` of neighbours, a bias of the order of the squared spacing
    ``1/n_samples^2``, whereas a binned estimate has biases from the bin widths and from the noise
    of the bin means. (At the defaults, binning 1e6 samples into 200 or 1000 equal-mass bins
    agrees with it to 1e-5.)

    Parameters
    ----------
    n_classes : int, default=5
        Number of classes, as in :func:`make_dirichlet_calibration`.
    concentration : float, default=0.04
        Dirichlet concentration of the true probabilities, as in
        :func:`make_dirichlet_calibration`.
    power : float, default=0.3
        Exponent turning the true probabilities into the predictions, as in
        :func:`make_dirichlet_calibration`.
    n_samples : int, default=1_000_000
        Monte-Carlo samples, ``>= 20``; the standard errors are ``0.03 / sqrt(n_samples)``
        (top-label) to ``0.06 / sqrt(n_samples)`` (class-wise) at the defaults, and 1e6 samples
        take 2 to 3 s.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=0
        Seed or generator of the draws.
    return_se : bool, default=False
        Also return the standard errors (batch means over 10 independent batches).

    Returns
    -------
    errors : dict
        ``{"canonical", "top_label", "classwise", "accuracy"}`` to floats.
    se : dict
        Only if ``return_se``: the standard errors, with the same keys.

    See Also
    --------
    make_dirichlet_calibration : The model.
    DIRICHLET_CALIBRATION_ERRORS : The values at the defaults from 1e8 samples.

    Examples
    --------
    >>> from skcalib.datasets import dirichlet_calibration_errors, DIRICHLET_CALIBRATION_ERRORS
    >>> errors, se = dirichlet_calibration_errors(n_samples=200_000, return_se=True)
    >>> sorted(errors)
    ['accuracy', 'canonical', 'classwise', 'top_label']
    >>> all(abs(errors[k] - DIRICHLET_CALIBRATION_ERRORS[k]) < 5 * se[k]
    ...     for k in DIRICHLET_CALIBRATION_ERRORS)
    True
    >>> errors = dirichlet_calibration_errors(3, power=1.0, n_samples=1000)  # calibrated: f = P
    >>> errors["canonical"] < 1e-25
    True
    """
    check_scalar_param(n_classes, "n_classes", min_val=2)
    concentration = _check_real_positive(concentration, "concentration")
    power = _check_real_positive(power, "power")
    check_scalar_param(n_samples, "n_samples", min_val=2 * _TRUTH_BATCHES)
    return_se = _check_bool(return_se, "return_se")
    rng = check_rng(random_state)
    d = int(n_classes)
    sizes = np.diff(np.linspace(0, int(n_samples), _TRUTH_BATCHES + 1).astype(np.int64))
    keys = ("canonical", "top_label", "classwise", "accuracy")
    batches = {k: [] for k in keys}
    for n in sizes:
        f, P = _dirichlet_model(rng, int(n), d, concentration, power)
        rows = np.arange(f.shape[0])
        pred = f.argmax(axis=1)
        batches["canonical"].append(squared_calibration_errors(f, P).mean())
        batches["top_label"].append(_neighbour_pair_terms(f[rows, pred], P[rows, pred]).mean())
        batches["classwise"].append(sum(_neighbour_pair_terms(f[:, k], P[:, k]).mean()
                                        for k in range(d)))
        batches["accuracy"].append(P[rows, pred].mean())
    weights = sizes / sizes.sum()
    errors = {k: float(np.dot(weights, batches[k])) for k in keys}
    if not return_se:
        return errors
    se = {k: float(np.std(batches[k], ddof=1) / math.sqrt(_TRUTH_BATCHES)) for k in keys}
    return errors, se


def make_binary_squared_calibration(n_samples=1000, *, random_state=None, return_truth=False):
    """Binary predictions with an analytic squared calibration error of exactly 1/30.

    ``c ~ U(0, 1)`` is the predicted probability of class 1 and ``Y | c ~ Bernoulli(c**2)``: the
    calibration function is ``pi(c) = c**2`` and the squared (binary, class-1) calibration error
    is ``E[(c - c**2)**2] = 1/3 - 1/2 + 1/5 = 1/30``
    (:data:`BINARY_SQUARED_CALIBRATION_ERROR`). Seen as a two-class canonical problem,
    ``p = (1 - c, c)``, both coordinates carry the same error and ``CCE_2^2 = 2/30``.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of samples, ``>= 1``.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.
    return_truth : bool, default=False
        Also return the calibration function ``c**2`` at the predictions.

    Returns
    -------
    y_proba : ndarray of shape (n_samples,)
        ``c``, the predicted probability of class 1.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    true_prob : ndarray of shape (n_samples,)
        Only if ``return_truth``: ``P(Y = 1 | c) = c**2``.

    See Also
    --------
    squared_calibration_errors : Per-sample errors ``(c - c**2)**2``; their mean is the sample
        truth of a data set.

    Notes
    -----
    The draws are, in this order, the ``n_samples`` uniforms ``c`` and ``n_samples`` uniforms
    ``u``; ``y = 1`` where ``u < c**2``. The model is the case S2 of the skcalib specification of
    Gruber & Bach's estimators (not in the paper). The top-label version (confidence
    ``max(c, 1 - c)``) has a different error.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.datasets import make_binary_squared_calibration
    >>> from skcalib.datasets import BINARY_SQUARED_CALIBRATION_ERROR
    >>> c, y = make_binary_squared_calibration(5, random_state=0)
    >>> c.shape, sorted(set(y.tolist()) | {0, 1})
    ((5,), [0, 1])
    >>> round(BINARY_SQUARED_CALIBRATION_ERROR * 30, 12)
    1.0
    >>> c, y = make_binary_squared_calibration(100_000, random_state=0)
    >>> round(float(y.mean()), 2)  # E[c^2] = 1/3
    0.33
    """
    check_scalar_param(n_samples, "n_samples", min_val=1)
    return_truth = _check_bool(return_truth, "return_truth")
    rng = check_rng(random_state)
    n = int(n_samples)
    c = rng.random(n)
    pi = c * c
    y = (rng.random(n) < pi).astype(np.int64)
    return (c, y, pi) if return_truth else (c, y)


# ------------------------------------------------------------------------------------------------
# Classification: the Dirichlet models of Widmann et al. (2019)
# ------------------------------------------------------------------------------------------------

_DIRICHLET_TARGETS = ("first", "uniform")


def _check_dirichlet_target(target, m):
    """``target`` ("first", "uniform" or a probability vector of length ``m``) -> ``beta``."""
    if isinstance(target, str):
        if target not in _DIRICHLET_TARGETS:
            raise ValueError(f"target must be 'first', 'uniform' or an array of {m} "
                             f"probabilities; got {target!r}.")
        if target == "first":
            beta = np.zeros(m)
            beta[0] = 1.0
            return beta
        return np.full(m, 1.0 / m)
    try:
        beta = np.array(target, dtype=np.float64)  # a copy: the input is never modified
    except (TypeError, ValueError):
        raise TypeError(f"target must be 'first', 'uniform' or an array of {m} probabilities; "
                        f"got {target!r}.") from None
    if beta.shape != (m,):
        raise ValueError(f"target must have shape ({m},) (n_classes); got shape {beta.shape}.")
    if not np.all(np.isfinite(beta)) or np.any(beta < 0):
        raise ValueError("target must contain finite, non-negative probabilities.")
    if abs(math.fsum(beta) - 1.0) > 1e-8:
        raise ValueError(f"target must sum to 1; its entries sum to {math.fsum(beta)!r}.")
    return beta / math.fsum(beta)


def make_dirichlet_predictions(n_samples=250, n_classes=10, *, concentration=0.1,
                               miscalibration=0.0, target="first", random_state=None):
    """Dirichlet predictions and labels of the generative models of Widmann et al. (2019).

    Each prediction is ``g ~ Dir(concentration * 1_m)``. With probability ``pi =
    miscalibration`` the label is drawn from ``Categorical(beta)``, otherwise from
    ``Categorical(g)``: ``P(Y = y | g) = pi * beta_y + (1 - pi) * g_y``, so the model is
    calibrated if and only if ``pi = 0`` (or ``g = beta``). The paper's three models, with
    ``n_samples=250``, ``n_classes=10`` and ``concentration=0.1``, are

    * **M1** (calibrated): ``miscalibration=0``;
    * **M2**: ``miscalibration=0.5``, ``target="first"`` (``beta = e_1``);
    * **M3**: ``miscalibration=1``, ``target="uniform"`` (``beta = 1/m``).

    Parameters
    ----------
    n_samples : int, default=250
        Number of samples, ``>= 1`` (the paper's 250).
    n_classes : int, default=10
        Number of classes ``m >= 2`` (the paper's 10).
    concentration : float, default=0.1
        Concentration ``alpha > 0`` of the symmetric Dirichlet distribution of the predictions
        (the paper's 0.1; ``1`` gives uniform predictions).
    miscalibration : float, default=0.0
        Probability ``pi`` in ``[0, 1]`` that a label is drawn from ``Categorical(beta)`` instead
        of from the prediction.
    target : {"first", "uniform"} or array-like of shape (n_classes,), default="first"
        The label distribution ``beta`` of the miscalibrated part: ``e_1`` (always class 0),
        uniform, or given probabilities (non-negative, summing to 1).
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.

    Returns
    -------
    y_proba : ndarray of shape (n_samples, n_classes)
        The predictions ``g``; rows sum to one.
    y : ndarray of shape (n_samples,)
        Labels in ``0, ..., n_classes - 1``.

    See Also
    --------
    make_dirichlet_calibration : The simulation of Gruber & Bach (known calibration function).
    make_gaussian_predictions : The Gaussian regression models of Widmann et al. (2021).

    Notes
    -----
    The label is drawn in one step from ``Categorical(pi * beta + (1 - pi) * g)`` (inverse CDF of
    one uniform per sample), which has the law of the paper's two-step draw.

    The predictions are sampled in log space as in :func:`make_dirichlet_calibration`, so that
    small concentrations do not give rows of exact zeros (which
    ``numpy.random.Generator.dirichlet`` can return). The draws are, in this order, the
    ``n_samples x n_classes`` gamma variables, the ``n_samples x n_classes`` uniforms of the
    predictions and one uniform per sample for the label.

    The paper's analytic ECE (total variation) of the model is ``pi (m - 1) / m`` for
    ``beta = e_1`` (M2: 0.45) and 0.7106418012 for M3; its squared kernel calibration errors
    (exponential kernel on the TV distance with the median heuristic) are about 0.0963 (M2) and
    0.0151 (M3).

    References
    ----------
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests in multi-class classification: a
    unifying framework. NeurIPS 2019, Section 7 and Appendix J.2.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.datasets import make_dirichlet_predictions
    >>> y_proba, y = make_dirichlet_predictions(random_state=0)  # M1: calibrated
    >>> y_proba.shape, y.shape
    ((250, 10), (250,))
    >>> bool(np.allclose(y_proba.sum(axis=1), 1.0))
    True
    >>> _, y = make_dirichlet_predictions(100_000, miscalibration=0.5, random_state=0)  # M2
    >>> round(float(np.mean(y == 0)), 2)  # 0.5 * 1 + 0.5 * 1/10
    0.55
    """
    check_scalar_param(n_samples, "n_samples", min_val=1)
    check_scalar_param(n_classes, "n_classes", min_val=2)
    concentration = _check_real_positive(concentration, "concentration")
    check_scalar_param(miscalibration, "miscalibration", kind="real", min_val=0.0, max_val=1.0)
    pi = float(miscalibration)
    n, m = int(n_samples), int(n_classes)
    beta = _check_dirichlet_target(target, m)
    rng = check_rng(random_state)
    g = np.exp(_dirichlet_log_probabilities(rng, n, m, concentration))
    g /= g.sum(axis=1, keepdims=True)
    y = _categorical(rng, pi * beta[None, :] + (1.0 - pi) * g)
    return g, y


#: Logit shifts of :func:`make_audit_data` per unit ``local_bias``: ages 30-40 at higher risk,
#: group 1 aged 55 or more at lower risk, both centred so that the mean shift is zero.
_AUDIT_COEF = np.array([1.0, -0.8, 0.6, -0.4, 0.3, -0.2])


def _audit_shift(age, group):
    """``s(age, group) = 1{30 <= age < 40} - 1{group = 1, age >= 55}``, minus its mean 0.05 under
    ``age ~ U(20, 70)``, ``group ~ Bernoulli(1/2)`` (0.2 - 0.5 * 0.3)."""
    return (((age >= 30) & (age < 40)).astype(np.float64)
            - ((group == 1) & (age >= 55)).astype(np.float64) - 0.05)


def make_audit_data(n_samples=2000, *, n_features=4, local_bias=1.0, random_state=None):
    """A binary risk model's inputs, labels and audit features with a known local bias.

    The model inputs are ``Z ~ N(0, I)`` (``n_features`` columns); the audit features are an age
    ``~ U(20, 70)`` and a group ``~ Bernoulli(1/2)``, independent of ``Z`` and *not* model inputs.
    The true risk is

        P(Y = 1 | Z, age, group) = sigmoid(Z beta + local_bias * s(age, group)),

    ``s = 1{30 <= age < 40} - 1{group = 1 and age >= 55} - 0.05``: people aged 30-40 are at higher
    risk, and group-1 people aged 55 or more at lower risk, than their inputs say; ``s`` has mean
    zero. A model fitted on ``Z`` alone (the situation of an audit) can be well calibrated on
    average and still systematically wrong in these groups: the local calibration bias is
    positive (risk underestimated) for ages 30-40 and negative for group 1 above 55.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of samples, ``>= 1``.
    n_features : int, default=4
        Number of model inputs, between 1 and 6 (coefficients ``beta = (1, -0.8, 0.6, -0.4, 0.3,
        -0.2)[:n_features]``).
    local_bias : float, default=1.0
        Size of the local shift on the logit scale (``0`` gives a model that is locally
        calibrated given ``Z``).
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        Model inputs ``Z``.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    audit : ndarray of shape (n_samples, 2)
        Audit features: age (years) and group (0 or 1).
    proba : ndarray of shape (n_samples,)
        The true ``P(Y = 1 | Z, age, group)``.

    See Also
    --------
    skcalib.klce : The local calibration error on audit features.
    skcalib.local_calibration_bias : The bias near each sample.

    Examples
    --------
    >>> from skcalib.datasets import make_audit_data
    >>> X, y, audit, proba = make_audit_data(1000, random_state=0)
    >>> X.shape, y.shape, audit.shape
    ((1000, 4), (1000,), (1000, 2))
    >>> bool(20 <= audit[:, 0].min() and audit[:, 0].max() <= 70)
    True
    """
    check_scalar_param(n_samples, "n_samples", min_val=1)
    check_scalar_param(n_features, "n_features", min_val=1, max_val=_AUDIT_COEF.size)
    check_scalar_param(local_bias, "local_bias", kind="real")
    rng = check_rng(random_state)
    n, p = int(n_samples), int(n_features)
    Z = rng.standard_normal((n, p))
    age = rng.uniform(20.0, 70.0, size=n)
    group = (rng.random(n) < 0.5).astype(np.int64)
    logit = Z @ _AUDIT_COEF[:p] + float(local_bias) * _audit_shift(age, group)
    proba = 1.0 / (1.0 + np.exp(-logit))
    y = (rng.random(n) < proba).astype(np.int64)
    return Z, y, np.column_stack([age, group.astype(np.float64)]), proba
