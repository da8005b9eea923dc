"""Local calibration on audit features: the kernel local calibration error (KLCE) and the local
calibration bias (Vashistha and Farahi, "I-trustworthy models").

A classifier is *locally calibrated* on audit features ``X`` (age, sex, a region -- features the
model may never have seen) if ``P(Y = 1 | X = x, p(Z) = a) = a`` for every ``x`` and ``a``. The
kernel local calibration error measures the violation with a product kernel
``k(p, p') l(x, x')`` on predictions and audit features:

    KLCE^2 = E[(Y - p) k(p, p') l(X, X') (Y' - p')]        (binary, Eq. 3 of the paper)

with the U-statistic ``1/(n(n-1)) sum_{i != j} e_i k_ij l_ij e_j`` (Eq. 4) as estimator. It is the
SKCE with the feature kernel folded into the kernel on predictions, so it runs on the same
pairwise engine (:class:`~skcalib._problems.terms.ResidualTerm` with a product kernel); with a
constant feature kernel it *is* the (scalar-residual) SKCE. The validated problem (residuals,
standardised features, kernels) is :class:`skcalib._problems.local.LocalProblem`.
"""

import numpy as np

from .. import _pairwise
from .._validation import (
    check_2d_features,
    check_bool,
    check_labels_and_probabilities,
    check_option,
    pos_index,
)
from .._problems.estimates import check_estimator_option, check_kernel_params, check_weights, \
    estimate
from .._problems.local import LocalProblem, standardize_features

__all__ = ["klce", "local_calibration_bias"]

_NORMALIZATIONS = ("unbiased", "kite")


def klce(y_true, y_proba, X, *, kernel=None, feature_kernel=None, estimator="unbiased",
         block_size=2, normalization="unbiased", standardize=True, multiclass="vector",
         labels=None, pos_label=None, sample_weight=None, random_state=None, chunk_size=None,
         n_jobs=None):
    """Squared kernel local calibration error (KLCE) of a classifier on audit features ``X``.

    ``KLCE^2 = E[(Y - p) k(p, p') l(X, X') (Y' - p')]`` measures how far a binary classifier is
    from being calibrated *within* every neighbourhood of the audit features ``X`` (Vashistha and
    Farahi): a model can be calibrated on average and still be systematically wrong for a group.
    ``X`` need not be the model's inputs (protected attributes it never saw are the typical case).
    It is zero if the model is locally calibrated, and only then for characteristic kernels.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: P(``pos_label``) for a binary problem, or one column per class in
        the order of ``labels`` (sorted).
    X : array-like of shape (n_samples, n_features)
        Audit features (1-D input is one feature).
    kernel : GaussianKernel or ExponentialKernel, default=None
        Kernel ``k`` on predictions: on the positive-class probability for binary problems and
        one-vs-rest, on the probability vectors for the vector form. None is
        ``GaussianKernel("median")``. The paper's RBF "width" ``w`` (``exp(-d^2 / w^2)``, scikit-
        learn's ``gamma = 1 / w^2``) is ``GaussianKernel(length_scale=w / sqrt(2))``.
    feature_kernel : GaussianKernel or ExponentialKernel, default=None
        Kernel ``l`` on the (standardised, see ``standardize``) audit features. None is
        ``GaussianKernel("median")``.
    estimator : {"unbiased", "biased", "block"}, default="unbiased"
        The U-statistic ``1/(n(n-1)) sum_{i != j} h_ij`` (the paper's Eq. 4; can be negative), the
        V-statistic ``1/n^2 sum_{i, j} h_ij`` (``>= 0``), or the block estimator of
        :func:`skcalib.skce` (linear time for a fixed ``block_size``), with
        ``h_ij = e_i^T e_j k(p_i, p_j) l(x_i, x_j)``.
    block_size : int, default=2
        Block size of the block estimator.
    normalization : {"unbiased", "kite"}, default="unbiased"
        ``"kite"`` divides ``sum_{i != j} h_ij`` by ``(n - 1)/n * sum_{i, j} k_ij l_ij`` instead of
        ``n (n - 1)``: the normalisation of the authors' code (KiTE ``ELCE2``), which every KLCE
        value in the paper's figures and tables uses (a kernel-weighted mean of ``e_i e_j``,
        larger than Eq. 4 by ``n^2 / sum_{i, j} k_ij l_ij``). Needs ``estimator="unbiased"`` and
        no ``sample_weight``. P-values do not depend on it.
    standardize : bool, default=True
        Scale every audit feature to zero mean and unit variance before the feature kernel
        (constant features are centred only), so that ``"median"`` and explicit length scales
        act on comparable units. The paper does not standardise; pass False to reproduce it.
    multiclass : {"vector", "one_vs_rest"}, default="vector"
        For more than two classes: the vector form ``(e_y - p)^T (e_y' - p') k(p, p') l(x, x')``
        (a float), or the binary KLCE of every class against the rest (an array). Binary problems
        always use the scalar residual ``1{y = pos_label} - p``.
    labels : array-like, default=None
        All class labels (default: those present in ``y_true``).
    pos_label : label, default=None
        Positive class of a binary problem (default: the greater label).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights: the weighted statistics of :func:`skcalib.skce`.
    random_state : None, int or Generator, default=None
        Subsampling of the median heuristics (more than ``max_samples`` rows).
    chunk_size : int, default=None
        Tile side of the pairwise engine (memory ``O(n * chunk_size)``, never ``n x n``).
    n_jobs : int, default=None
        Parallel jobs (joblib threads). Results do not depend on it.

    Returns
    -------
    float or ndarray of shape (n_classes,)
        The estimate of ``KLCE^2`` (an array per class for ``multiclass="one_vs_rest"``).

    See Also
    --------
    skcalib.stats.klce_test : Test of "the model is locally calibrated".
    local_calibration_bias : Where the model is locally biased, and in which direction.
    skcalib.skce : The global error (the KLCE with a constant feature kernel).

    Notes
    -----
    With a constant feature kernel (``l = 1``) the binary KLCE is the SKCE in its scalar-residual
    form, which is half the one-hot SKCE of Widmann et al. with the kernel ``k ⊗ delta``.

    References
    ----------
    R. Vashistha, A. Farahi. I-trustworthy models. A framework for trustworthiness evaluation of
    probabilistic classifiers. AISTATS 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import klce
    >>> from skcalib.kernels import GaussianKernel
    >>> y = [1, 0, 1, 0, 1]
    >>> p = [0.8, 0.3, 0.6, 0.1, 0.4]
    >>> X = [0, 1, 0, 1, 0.5]
    >>> k = GaussianKernel(0.5 / np.sqrt(2))  # the paper's width 0.5 on probabilities
    >>> l = GaussianKernel(1.0 / np.sqrt(2))  # width 1.0 on the feature
    >>> round(klce(y, p, X, kernel=k, feature_kernel=l, standardize=False), 7)
    0.0089633
    """
    check_kernel_params(estimator=estimator, block_size=block_size, random_state=random_state,
                        chunk_size=chunk_size, n_jobs=n_jobs)
    check_option(normalization, "normalization", _NORMALIZATIONS)
    if normalization == "kite" and (estimator != "unbiased" or sample_weight is not None):
        raise ValueError(
            "normalization='kite' reproduces the authors' code: it needs estimator='unbiased' "
            f"and no sample_weight; got estimator={estimator!r}"
            + (" and sample_weight" if sample_weight is not None else "") + "."
        )
    problem = LocalProblem(y_true, y_proba, X, kernel=kernel, feature_kernel=feature_kernel,
                           standardize=standardize, multiclass=multiclass, labels=labels,
                           pos_label=pos_label, random_state=random_state,
                           min_samples=1 if estimator == "biased" else 2)
    n = problem.n_samples
    check_estimator_option(estimator, block_size, n)
    w = check_weights(sample_weight, n, estimator, block_size)
    values = []
    for index in range(len(problem.parts)):
        value = estimate(problem.term(index), estimator, block_size, sample_weight=w,
                         chunk_size=chunk_size, n_jobs=n_jobs)
        if normalization == "kite":
            total = _pairwise.pair_sum(problem.kernel_term(index), include_diagonal=True,
                                       chunk_size=chunk_size, n_jobs=n_jobs)
            value = value * n * n / total
        values.append(value)
    if multiclass == "one_vs_rest" and not problem.binary:
        return np.asarray(values)
    return float(values[0])


def local_calibration_bias(y_true, y_proba, X, X_eval=None, y_proba_eval=None, *, kernel=None,
                           feature_kernel=None, standardize=True, leave_one_out=False,
                           labels=None, pos_label=None, random_state=None, chunk_size=None):
    """Local calibration bias: the kernel-weighted mean residual around each evaluation point.

    ``LCB(x', p') = sum_i (y_i - p_i) k(p_i, p') l(x_i, x') / sum_i k(p_i, p') l(x_i, x')``
    (Vashistha and Farahi, Eq. 7): a Nadaraya--Watson smoother of the residuals in the joint
    space of predictions and audit features. **Positive** values mean events happen more often than
    predicted near that point (the model *underestimates* the risk there), negative values that it
    overestimates it. ``p' + LCB`` is an individual-level correction of the prediction.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True labels of the reference data.
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities of the reference data.
    X : array-like of shape (n_samples, n_features)
        Audit features of the reference data.
    X_eval : array-like of shape (n_eval, n_features), default=None
        Audit features of the evaluation points; None evaluates at the reference points.
    y_proba_eval : array-like of shape (n_eval,) or (n_eval, n_classes), default=None
        Predicted probabilities at the evaluation points (same encoding as ``y_proba``); required
        with ``X_eval``.
    kernel : GaussianKernel or ExponentialKernel, default=None
        Kernel on the positive-class (per-class) probability; see :func:`klce`.
    feature_kernel : GaussianKernel or ExponentialKernel, default=None
        Kernel on the audit features; see :func:`klce`.
    standardize : bool, default=True
        Standardise the audit features with the reference data's means and standard deviations.
    leave_one_out : bool, default=False
        At the reference points, leave each point's own residual out of its average (advisable:
        otherwise a narrow kernel returns each point's own residual). Only without ``X_eval``.
    labels : array-like, default=None
        All class labels.
    pos_label : label, default=None
        Positive class of a binary problem.
    random_state : None, int or Generator, default=None
        Subsampling of the median heuristics.
    chunk_size : int, default=None
        Evaluation points per chunk (memory ``O(chunk_size * n_samples)``).

    Returns
    -------
    ndarray of shape (n_eval,) or (n_eval, n_classes)
        The signed bias of the positive class (binary), or of every class (one-vs-rest).

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import local_calibration_bias
    >>> from skcalib.kernels import GaussianKernel
    >>> y, p, X = [1, 0, 1, 0, 1], [0.8, 0.3, 0.6, 0.1, 0.4], [0, 1, 0, 1, 0.5]
    >>> lcb = local_calibration_bias(y, p, X, kernel=GaussianKernel(0.5 / np.sqrt(2)),
    ...                              feature_kernel=GaussianKernel(1.0 / np.sqrt(2)),
    ...                              standardize=False)
    >>> np.round(lcb, 5)
    array([0.30265, 0.06466, 0.30198, 0.0135 , 0.19869])
    """
    check_bool(leave_one_out, "leave_one_out")
    problem = LocalProblem(y_true, y_proba, X, kernel=kernel, feature_kernel=feature_kernel,
                           standardize=standardize, multiclass="one_vs_rest", labels=labels,
                           pos_label=pos_label, random_state=random_state)
    T = _pairwise._chunk_size(chunk_size)
    n = problem.n_samples
    if X_eval is None:
        if y_proba_eval is not None:
            raise ValueError("y_proba_eval is only meaningful with X_eval.")
        eval_parts = [Pk for _, Pk in problem.parts]
        Xe = problem.X
        m = n
    else:
        if leave_one_out:
            raise ValueError("leave_one_out=True applies to the reference points only; "
                             "leave X_eval=None.")
        if y_proba_eval is None:
            raise ValueError("X_eval needs y_proba_eval: the bias depends on the predictions too.")
        Xe = check_2d_features(X_eval, "X_eval")
        if Xe.shape[1] != problem.X_raw.shape[1]:
            raise ValueError(f"X_eval has {Xe.shape[1]} features; X has "
                             f"{problem.X_raw.shape[1]}.")
        if problem.standardize:
            Xe = standardize_features(Xe, problem.X_raw)
        m = Xe.shape[0]
        edata = check_labels_and_probabilities(
            np.full(m, problem.data.classes[0]), y_proba_eval, labels=problem.data.classes,
            pos_label=pos_label, prob_name="y_proba_eval")
        if problem.binary:
            c = pos_index(problem.data.classes, pos_label)
            eval_parts = [edata.probs[:, c:c + 1]]
        else:
            eval_parts = [edata.probs[:, c:c + 1] for c in range(edata.n_classes)]
    out = np.empty((m, len(problem.parts)))
    for index, (R, _) in enumerate(problem.parts):
        prep = problem.prepared(index)
        prep_e = prep if X_eval is None else prep.like(eval_parts[index], Xe)
        e = R[:, 0]
        for s in range(0, m, T):
            a = slice(s, min(s + T, m))
            K = prep_e.block(a, slice(0, n), prep)
            num = K @ e
            den = K.sum(axis=1)
            if leave_one_out:
                rows = np.arange(a.start, a.stop)
                num -= K[rows - s, rows] * e[rows]
                den -= K[rows - s, rows]
            with np.errstate(invalid="ignore", divide="ignore"):
                out[a, index] = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    return out[:, 0] if problem.binary else out
