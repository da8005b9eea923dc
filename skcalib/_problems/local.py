"""The local calibration problem (KLCE, Vashistha and Farahi): validated labels, probabilities and
audit features, the residuals, the standardised features and the product kernel
``k(p, p') l(x, x')`` on the pairwise engine.

Internal API (used by ``metrics`` and ``stats``):

* :class:`LocalProblem` -- ``(y_true, y_proba, X)`` validated: ``parts`` (residuals and the rows
  the prediction kernel acts on; one per class for one-vs-rest), the resolved kernels,
  ``prepared(index)`` (the product kernel), ``term(index)`` (the KLCE's pair term) and
  ``kernel_term(index)`` (the kernel alone, for the null draws and the "kite" normalisation);
* :func:`standardize_features` -- audit features scaled with a reference's means and standard
  deviations (constant columns centred only);
* :func:`check_stationary` -- the kernel options of the local error (None is the median-heuristic
  Gaussian kernel);
* :data:`MULTICLASS` -- the ``multiclass`` options.
"""

import numpy as np

from .._validation import (
    check_2d_features,
    check_bool,
    check_labels_and_probabilities,
    check_option,
    pos_index,
)
from ..kernels import ExponentialKernel, GaussianKernel
from .terms import ProductPrepared, ResidualTerm

__all__ = ["MULTICLASS", "LocalProblem", "check_stationary", "standardize_features"]

#: The ``multiclass`` options of the local calibration error.
MULTICLASS = ("vector", "one_vs_rest")


def check_stationary(kernel, name):
    """``kernel`` (a Gaussian or exponential kernel; None is ``GaussianKernel("median")``), or a
    ``TypeError`` naming ``name``."""
    if kernel is None:
        return GaussianKernel("median")
    if not isinstance(kernel, (GaussianKernel, ExponentialKernel)):
        raise TypeError(
            f"{name} must be None, a GaussianKernel or an ExponentialKernel; got {kernel!r}."
        )
    return kernel


def standardize_features(X, reference=None):
    """``(X - mean) / std`` with the reference's column means and standard deviations (constant
    columns are centred only)."""
    ref = X if reference is None else reference
    mean = ref.mean(axis=0)
    std = ref.std(axis=0)
    std[~(std > 0)] = 1.0
    return (X - mean) / std


class LocalProblem:
    """Validated ``(y_true, y_proba, X)`` for the local calibration error: residuals, the rows the
    prediction kernel acts on, standardised audit features and the resolved kernels.

    ``parts`` lists ``(R, P)`` pairs: one for the binary and vector forms, one per class for
    one-vs-rest (``R`` residuals of shape ``(n, r)``, ``P`` the prediction rows of the kernel).
    """

    def __init__(self, y_true, y_proba, X, *, kernel=None, feature_kernel=None, standardize=True,
                 multiclass="vector", labels=None, pos_label=None, random_state=None,
                 min_samples=1):
        check_option(multiclass, "multiclass", MULTICLASS)
        self.standardize = check_bool(standardize, "standardize")
        kernel = check_stationary(kernel, "kernel")
        feature_kernel = check_stationary(feature_kernel, "feature_kernel")
        data = check_labels_and_probabilities(y_true, y_proba, labels=labels,
                                              pos_label=pos_label, min_samples=min_samples,
                                              prob_name="y_proba")
        n = data.n_samples
        X = check_2d_features(X, "X")
        if X.shape[0] != n:
            raise ValueError(f"X has {X.shape[0]} rows but y_true has {n} samples.")
        self.data = data
        self.n_samples = n
        self.X_raw = X
        self.X = standardize_features(X) if self.standardize else X
        self.feature_kernel = feature_kernel.resolve(self.X, random_state=random_state)
        self.binary = data.n_classes == 2
        P = data.probs
        onehot = np.zeros_like(P)
        onehot[np.arange(n), data.y] = 1.0
        if self.binary:
            c = pos_index(data.classes, pos_label)
            self.parts = [((onehot[:, c] - P[:, c])[:, None], P[:, c:c + 1].copy())]
        elif multiclass == "vector":
            self.parts = [(onehot - P, P)]
        else:
            self.parts = [((onehot[:, c] - P[:, c])[:, None], P[:, c:c + 1].copy())
                          for c in range(data.n_classes)]
        self.kernels = [kernel.resolve(Pk, random_state=random_state) for _, Pk in self.parts]
        self._features = self.feature_kernel._prepare(self.X)

    def prepared(self, index):
        """The product kernel ``k(p_i, p_j) l(x_i, x_j)`` of part ``index``."""
        Pk = self.parts[index][1]
        return ProductPrepared(self.kernels[index]._prepare(Pk), self._features)

    def term(self, index):
        """Pair term ``h_ij = e_i^T e_j k(p_i, p_j) l(x_i, x_j)`` of part ``index``."""
        return ResidualTerm(self.prepared(index), self.parts[index][0])

    def kernel_term(self, index):
        """Pair term ``h_ij = k(p_i, p_j) l(x_i, x_j)`` (the kernel alone) of part ``index``."""
        return ResidualTerm(self.prepared(index), np.ones((self.n_samples, 1)))
