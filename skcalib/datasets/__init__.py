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
* :func:`make_shrinkage_calibration` -- overconfident predictions ``f ~ Dir(1, ..., 1)`` (10
  classes by default) with labels drawn from ``f`` shrunk towards the uniform distribution, whose
  canonical, top-label and class-wise errors :func:`shrinkage_calibration_errors` gives in closed
  form (:data:`SHRINKAGE_CALIBRATION_ERRORS` at the defaults);
* :func:`make_smoothstep_calibration` -- underconfident binary predictions ``c ~ U(0, 1)`` with
  labels ``Bernoulli(3c^2 - 2c^3)``, whose squared calibration error is exactly
  :data:`SMOOTHSTEP_CALIBRATION_ERROR` ``= 1/210``;

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

from ._audit import make_audit_data
from ._closed_form import (make_shrinkage_calibration, make_smoothstep_calibration,
                           shrinkage_calibration_errors)
from ._dirichlet_predictions import make_dirichlet_predictions
from ._gruber_bach import (dirichlet_calibration_errors, make_binary_squared_calibration,
                           make_dirichlet_calibration, squared_calibration_errors)
from ._regression import (gaussian_predictions_skce, make_gaussian_predictions,
                          make_heteroscedastic_regression, make_ols_predictions)

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
    "SHRINKAGE_CALIBRATION_ERRORS",
    "SMOOTHSTEP_CALIBRATION_ERROR",
    "make_shrinkage_calibration",
    "shrinkage_calibration_errors",
    "make_smoothstep_calibration",
]

# The documented constants are defined here, in the module the API pages document, so that the
# documentation reads their ``#:`` comments.

#: Exact SKCE of the miscalibrated synthetic Gaussian model (:func:`make_gaussian_predictions`
#: with ``calibrated=False``) for the kernel ``exp(-W2(p, p')) * exp(-||y - y'||^2 / 2)``, keyed by
#: ``n_dims``: the two settings of Widmann et al. (2021, Appendix A.2), by 2-D quadrature.
GAUSSIAN_PREDICTIONS_SKCE = {1: 0.1107737017737, 10: 0.0595975411300}

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

#: Exact squared calibration errors of :func:`make_shrinkage_calibration` with its defaults (10
#: classes, strength 0.5), keyed by notion as :data:`DIRICHLET_CALIBRATION_ERRORS`:
#: ``"canonical"`` and ``"classwise"`` (summed over the classes) ``0.25 * 9/110``, and
#: ``"top_label"`` ``0.25 * 1381181/31752000`` (:func:`shrinkage_calibration_errors`).
SHRINKAGE_CALIBRATION_ERRORS = shrinkage_calibration_errors(10, 0.5)

#: Exact squared (binary, class-1) calibration error of :func:`make_smoothstep_calibration`:
#: ``int_0^1 (c - 3c^2 + 2c^3)^2 dc = 1/210``. As a two-class canonical problem the error is
#: twice this, ``2/210``; the top-label error is ``1/210`` too (the model is symmetric).
SMOOTHSTEP_CALIBRATION_ERROR = 1.0 / 210.0
