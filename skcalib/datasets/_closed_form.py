"""Classification: two simulations whose squared calibration errors have closed forms.

``make_shrinkage_calibration`` (multi-class, overconfident predictions whose truth is shrunk
towards the uniform distribution), its population errors ``shrinkage_calibration_errors``, and
``make_smoothstep_calibration`` (binary, underconfident predictions whose truth is the smoothstep
``3c^2 - 2c^3``). The package re-exports them with their constants.
"""

import math
from fractions import Fraction

import numpy as np

from .._validation import check_rng, check_scalar_param
from ._common import _categorical, _check_bool


def _check_shrinkage(n_classes, strength):
    check_scalar_param(n_classes, "n_classes", min_val=2)
    check_scalar_param(strength, "strength", kind="real", min_val=0.0, max_val=1.0)
    return int(n_classes), float(strength)


def make_shrinkage_calibration(n_samples=1000, n_classes=10, *, strength=0.5, random_state=None,
                               return_truth=False):
    """Overconfident multi-class predictions whose calibration errors are known in closed form.

    The predictions are uniform on the probability simplex, ``f ~ Dir(1, ..., 1)``, and the
    labels are drawn from the predictions shrunk towards the uniform distribution ``u``:
    ``y ~ Categorical(pi(f))`` with

        pi(f) = (1 - strength) * f + strength / n_classes,

    so the predictions are overconfident (the truth is closer to uniform than ``f``) unless
    ``strength = 0`` (calibrated). The calibration function is known exactly, and so are the
    squared calibration errors of every notion (:func:`shrinkage_calibration_errors`,
    :data:`SHRINKAGE_CALIBRATION_ERRORS` at the defaults): the canonical and the class-wise error
    are ``strength**2 * (C - 1) / (C (C + 1))`` and the top-label error is
    ``strength**2 * E[(max f - 1/C)^2]``, ``C = n_classes``.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of samples, ``>= 1``.
    n_classes : int, default=10
        Number of classes, ``>= 2``.
    strength : float, default=0.5
        Weight of the uniform distribution in the truth, in ``[0, 1]``: 0 gives calibrated
        predictions, 1 labels drawn uniformly whatever the prediction.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.
    return_truth : bool, default=False
        Also return the calibration function ``pi(f)`` at the predictions.

    Returns
    -------
    y_proba : ndarray of shape (n_samples, n_classes)
        The predictions ``f``.
    y : ndarray of shape (n_samples,)
        Labels in ``{0, ..., n_classes - 1}``.
    true_prob : ndarray of shape (n_samples, n_classes)
        Only if ``return_truth``: ``P(Y | f) = pi(f)``.

    See Also
    --------
    shrinkage_calibration_errors : The population squared calibration errors.
    squared_calibration_errors : Per-sample canonical errors ``||f - pi(f)||^2``; their mean is
        the sample truth of a data set.
    make_dirichlet_calibration : Underconfident predictions (Gruber & Bach's simulation), whose
        errors are known only by Monte Carlo.

    Notes
    -----
    The draws are, in this order, ``n_samples * n_classes`` standard exponentials (row by row),
    each row divided by its sum to give ``f``, and ``n_samples`` uniforms ``u``; the label is the
    first class whose cumulative probability ``pi_1 + ... + pi_k`` exceeds ``u``.

    The conditional probability of each class depends on the prediction of that class only,
    ``P(Y = k | f_k) = (1 - strength) f_k + strength / C``, and that of the predicted class on
    the confidence only, ``P(Y = argmax f | max f) = (1 - strength) max f + strength / C``: the
    class-wise and top-label calibration functions are these, without any smoothing.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.datasets import make_shrinkage_calibration, squared_calibration_errors
    >>> from skcalib.datasets import SHRINKAGE_CALIBRATION_ERRORS
    >>> f, y = make_shrinkage_calibration(5, random_state=0)
    >>> f.shape, y.shape, bool(np.allclose(f.sum(axis=1), 1.0))
    ((5, 10), (5,), True)
    >>> f, y, pi = make_shrinkage_calibration(100_000, random_state=0, return_truth=True)
    >>> round(float(squared_calibration_errors(f, pi).mean()), 4)  # exact value 0.25 * 9 / 110
    0.0205
    >>> round(SHRINKAGE_CALIBRATION_ERRORS["canonical"], 6)
    0.020455
    """
    check_scalar_param(n_samples, "n_samples", min_val=1)
    d, s = _check_shrinkage(n_classes, strength)
    return_truth = _check_bool(return_truth, "return_truth")
    rng = check_rng(random_state)
    e = rng.standard_exponential((int(n_samples), d))
    f = e / e.sum(axis=1, keepdims=True)
    pi = (1.0 - s) * f + s / d
    y = _categorical(rng, pi)
    return (f, y, pi) if return_truth else (f, y)


def shrinkage_calibration_errors(n_classes=10, strength=0.5):
    """Population squared calibration errors of :func:`make_shrinkage_calibration`, exactly.

    With ``C = n_classes``, ``s = strength``, ``u`` the uniform distribution and
    ``M = max f`` the confidence, the error of the model is ``f - pi(f) = s (f - u)``, so

    * ``"canonical"``: ``E||f - pi(f)||^2 = s^2 E||f - u||^2 = s^2 (C - 1) / (C (C + 1))``, the
      sum of the variances ``(C - 1) / (C^2 (C + 1))`` of the coordinates of ``Dir(1, ..., 1)``;
    * ``"classwise"``: ``sum_k E[(f_k - P(Y = k | f_k))^2]``, summed over the classes; the same
      value, as ``P(Y = k | f) = (1 - s) f_k + s / C`` depends on ``f_k`` only;
    * ``"top_label"``: ``E[(M - P(Y = argmax f | M))^2] = s^2 E[(M - 1/C)^2]``, as
      ``P(Y = argmax f | f) = (1 - s) M + s / C`` depends on ``M`` only; with the harmonic sums
      ``H = sum_{k <= C} 1/k`` and ``H2 = sum_{k <= C} 1/k^2``, ``E[M] = H / C`` and
      ``E[M^2] = (H^2 + H2) / (C (C + 1))`` (Rényi's representation of the largest uniform
      spacing, ``M = sum_k D_k / k`` with ``D ~ Dir(1, ..., 1)``), so
      ``E[(M - 1/C)^2] = (C H2 - H^2) / (C^2 (C + 1)) + (H - 1)^2 / C^2``
      (its variance plus its squared mean).

    The notions are those of :func:`dirichlet_calibration_errors` and
    :data:`DIRICHLET_CALIBRATION_ERRORS`. For two classes ``M ~ U(1/2, 1)`` and the three values
    are ``s^2 / 6``, ``s^2 / 6`` and ``s^2 / 12``.

    Parameters
    ----------
    n_classes : int, default=10
        Number of classes, ``>= 2``, as in :func:`make_shrinkage_calibration`.
    strength : float, default=0.5
        Weight of the uniform distribution in the truth, in ``[0, 1]``, as in
        :func:`make_shrinkage_calibration`.

    Returns
    -------
    dict
        ``{"canonical", "top_label", "classwise"}`` to floats (squared errors).

    See Also
    --------
    make_shrinkage_calibration : The model.
    SHRINKAGE_CALIBRATION_ERRORS : The values at the defaults.

    Examples
    --------
    >>> from skcalib.datasets import shrinkage_calibration_errors
    >>> errors = shrinkage_calibration_errors(2, strength=1.0)
    >>> [round(errors[k] * 12, 12) for k in ("canonical", "top_label", "classwise")]
    [2.0, 1.0, 2.0]
    >>> shrinkage_calibration_errors(5, strength=0.0)["top_label"]
    0.0
    """
    d, s = _check_shrinkage(n_classes, strength)
    s2 = Fraction(s) ** 2  # the float strength is a binary rational: exact
    centred = Fraction(d - 1, d * (d + 1))
    top = _top_label_moment(d)
    return {"canonical": float(s2 * centred), "top_label": float(s2 * top),
            "classwise": float(s2 * centred)}


#: Largest number of classes whose top-label moment is summed in exact rational arithmetic
#: (20 ms at 1,000 classes; beyond, the denominators of the harmonic sums grow like e^C).
_EXACT_MAX_CLASSES = 1000


def _top_label_moment(d, exact=None):
    """``E[(max f - 1/d)^2]`` for ``f ~ Dir(1_d)``: a ``Fraction`` (exact) for
    ``d <= _EXACT_MAX_CLASSES``, else a float from compensated sums (relative error ~1e-15)."""
    exact = d <= _EXACT_MAX_CLASSES if exact is None else exact
    if exact:
        h = sum(Fraction(1, k) for k in range(1, d + 1))
        h2 = sum(Fraction(1, k * k) for k in range(1, d + 1))
        return (d * h2 - h * h) / (d * d * (d + 1)) + (h - 1) ** 2 / (d * d)
    h = math.fsum(1.0 / k for k in range(1, d + 1))
    h2 = math.fsum(1.0 / (k * k) for k in range(1, d + 1))
    return (d * h2 - h * h) / (d * d * (d + 1)) + (h - 1.0) ** 2 / (d * d)


def make_smoothstep_calibration(n_samples=1000, *, random_state=None, return_truth=False):
    """Underconfident binary predictions with an analytic squared calibration error of 1/210.

    ``c ~ U(0, 1)`` is the predicted probability of class 1 and
    ``Y | c ~ Bernoulli(3 c**2 - 2 c**3)``: the calibration function is the smoothstep
    ``pi(c) = 3c^2 - 2c^3``, which is further from 1/2 than ``c`` on both sides (the predictions are
    underconfident), and the squared (binary, class-1) calibration error is
    ``E[(c - pi(c))^2] = int_0^1 c^2 (1 - c)^2 (1 - 2c)^2 dc = 1/210``
    (:data:`SMOOTHSTEP_CALIBRATION_ERROR`). Seen as a two-class canonical problem,
    ``p = (1 - c, c)``, both coordinates carry the same error and ``CCE_2^2 = 2/210``; the
    class-wise error summed over the two classes is ``2/210`` as well.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of samples, ``>= 1``.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState, default=None
        Seed or generator of the draws.
    return_truth : bool, default=False
        Also return the calibration function ``3c^2 - 2c^3`` at the predictions.

    Returns
    -------
    y_proba : ndarray of shape (n_samples,)
        ``c``, the predicted probability of class 1.
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    true_prob : ndarray of shape (n_samples,)
        Only if ``return_truth``: ``P(Y = 1 | c) = 3c^2 - 2c^3``.

    See Also
    --------
    make_binary_squared_calibration : An asymmetric binary model (truth ``c**2``, error 1/30).
    squared_calibration_errors : Per-sample errors ``(c - pi(c))^2``; their mean is the sample
        truth of a data set.

    Notes
    -----
    The draws are, in this order, the ``n_samples`` uniforms ``c`` and ``n_samples`` uniforms
    ``u``; ``y = 1`` where ``u < 3c^2 - 2c^3``.

    The top-label notion (confidence ``m = max(c, 1 - c)`` against ``1{Y = argmax}``) is a
    different problem, but here its error has the same value: the smoothstep is symmetric,
    ``pi(1 - c) = 1 - pi(c)``, so ``P(Y = argmax | c) = pi(m)`` and, as the error
    ``g(c) = c - pi(c)`` satisfies ``g(1 - c) = -g(c)``, ``E[(m - pi(m))^2] = 1/210``. (In
    :func:`make_binary_squared_calibration`, whose truth ``c**2`` is not symmetric, the top-label
    error differs from the binary one.)

    Examples
    --------
    >>> from skcalib.datasets import make_smoothstep_calibration, SMOOTHSTEP_CALIBRATION_ERROR
    >>> c, y = make_smoothstep_calibration(5, random_state=0)
    >>> c.shape, sorted(set(y.tolist()) | {0, 1})
    ((5,), [0, 1])
    >>> round(SMOOTHSTEP_CALIBRATION_ERROR * 210, 12)
    1.0
    >>> c, y, pi = make_smoothstep_calibration(100_000, random_state=0, return_truth=True)
    >>> round(float(((c - pi) ** 2).mean()) * 210, 1)
    1.0
    """
    check_scalar_param(n_samples, "n_samples", min_val=1)
    return_truth = _check_bool(return_truth, "return_truth")
    rng = check_rng(random_state)
    n = int(n_samples)
    c = rng.random(n)
    pi = c * c * (3.0 - 2.0 * c)
    y = (rng.random(n) < pi).astype(np.int64)
    return (c, y, pi) if return_truth else (c, y)
