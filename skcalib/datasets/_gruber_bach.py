"""Classification: the simulation of Gruber & Bach and an analytic binary model."""

import math

import numpy as np

from .._validation import check_probability_array, check_rng, check_scalar_param
from ._common import _categorical, _check_bool, _check_real_positive, _dirichlet_log_probabilities

#: Batches of :func:`dirichlet_calibration_errors` (its standard errors are batch-means ones).
_TRUTH_BATCHES = 10


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
