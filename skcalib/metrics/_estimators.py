'''Calibration errors as scikit-learn estimators.

``fit(X, y)`` learns the data-dependent parts of an error on one sample (bin edges, kernel length
scales from the median heuristic, UCME test locations); ``error(X, y)`` evaluates the error on
another sample with those parts fixed, ``score(X, y)`` is its negation (greater is better), and
``transform(X, y)`` returns each sample's share of the error (an ``(n_samples, 1)`` array whose
mean -- weighted mean, with ``sample_weight`` -- is the error). ``X`` is a matrix of predicted
probabilities: one column per class in the order of ``classes_``, or a single column
P(``pos_label``) for binary problems. :class:`SKCE` and :class:`UCME` also take predictive
distributions (:mod:`skcalib.distributions`) as ``X`` with real targets ``y``, as the functions
:func:`skcalib.skce` and :func:`skcalib.ucme` do.

Every method takes ``sample_weight``. ``error``, ``score`` and ``transform`` compute the weighted
errors of the functions (see :func:`skcalib.skce`); ``fit`` validates the weights, but the learned
parts (bin edges, median-heuristic length scales, test locations) are computed unweighted.

The estimators compute exactly what the functions of :mod:`skcalib.metrics` compute -- both call
the same private helpers. Parameters are validated at the start of every ``fit``, ``error``,
``score`` and ``transform``.
'''

import re

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._expectations import check_targets
from .._problems import estimates, terms, ucme
from .._problems.kernel import KernelProblem, is_regression_prediction
from .._problems.kernel_resolution import (
    check_mmce_kernel,
    resolve_kernel,
    resolve_ucme_kernel,
)
from .._sklearn_compat import check_feature_names
from .._validation import (
    _check_prob_array,
    check_labels_and_probabilities,
    check_rng,
    check_sample_weight,
)
from ..distributions import Categorical
from .._problems.binned import binned_errors, check_binned_params, finalize
from .._problems.binning import make_binning
from .._problems.modes import make_problems, resolve_mode
from . import _kernel


def _n_columns(X):
    """Columns of ``X`` as ``fit`` sees them; bad ``X`` (None, scalars, dicts, ragged lists)
    raises the same error as in ``fit``."""
    if isinstance(X, Categorical):
        return int(X.probs.shape[1])
    P = _check_prob_array(X, "X")
    return 1 if P.ndim == 1 else int(P.shape[1])


class _CalibrationErrorBase(TransformerMixin, BaseEstimator):
    """Shared plumbing: parameter checks, validation against the classes seen in ``fit``."""

    _min_samples = 1
    _accepts_distributions = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.positive_only = True
        return tags

    def _check_params(self):  # pragma: no cover - overridden
        pass

    def get_feature_names_out(self, input_features=None):
        """Name of the one column of :meth:`transform`, each sample's share of the error.

        With ``set_output(transform="pandas")`` the shares come as a one-column DataFrame.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored (the output column does not depend on the input columns).

        Returns
        -------
        ndarray of shape (1,), dtype object
            ``["<estimator>_share"]``, e.g. ``["skce_share"]`` or
            ``["calibration_error_share"]``.
        """
        check_is_fitted(self)
        name = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", type(self).__name__).lower()
        return np.asarray([f"{name}_share"], dtype=object)

    def _check_weights(self, sample_weight, n_samples):
        return check_sample_weight(sample_weight, n_samples, rescale=True)

    def _check_y(self, y):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None "
                "(y holds the true labels)."
            )

    def _check_distribution_input(self, X):
        """True if ``X`` is a predictive distribution (estimators that accept them), else False;
        a ``TypeError`` for distributions passed to a classification-only estimator."""
        if not is_regression_prediction(X):
            return False
        if not self._accepts_distributions:
            raise TypeError(
                f"X is a {type(X).__name__} distribution; {type(self).__name__} needs predicted "
                "class probabilities (SKCE and UCME accept predictive distributions)."
            )
        if X.n_samples < 1:
            raise ValueError("X is empty; at least 1 sample needed.")
        return True

    def _validate_fit(self, X, y, sample_weight=None):
        """Check ``(X, y, sample_weight)`` at ``fit`` (after ``_check_params`` and ``_check_y``,
        which every ``fit`` calls first); set ``classes_`` and ``n_features_in_``. Returns
        ``(data, weights)``."""
        data = check_labels_and_probabilities(
            y, X, labels=self.labels, pos_label=self.pos_label, min_samples=self._min_samples,
            prob_name="X", label_name="y",
        )
        w = self._check_weights(sample_weight, data.n_samples)
        self.__dict__.pop("target_shape_", None)
        self.classes_ = data.classes
        self.n_features_in_ = _n_columns(X)
        check_feature_names(self, X, reset=True)
        return data, w

    def _fit_distribution(self, X, y, sample_weight=None):
        """``fit`` on predictive distributions (:class:`SKCE`, :class:`UCME`): check the real
        targets and the weights, set ``target_shape_`` and resolve ``kernel_`` as
        :func:`skcalib.skce` does. Returns the generator made from ``random_state``, which drew
        the kernel's median subsample (if seeded) and draws anything after it."""
        problem = KernelProblem(y, X, labels=self.labels, pos_label=self.pos_label,
                                random_state=self.random_state, y_pred_name="X",
                                y_true_name="y", require_rows=False)
        self._check_weights(sample_weight, X.n_samples)
        self.__dict__.pop("classes_", None)
        self.__dict__.pop("n_features_in_", None)
        check_feature_names(self, X, reset=True)  # (distributions have none)
        self.target_shape_ = X.target_shape
        self.kernel_ = problem.resolve(self.kernel)
        return problem.rng

    def _validate(self, X, y, sample_weight=None, min_samples=1):
        """Check the parameters and ``(X, y, sample_weight)`` after ``fit``, with the messages of
        ``fit``. Returns ``(data, weights)``; ``data`` is the validated targets for distributions.
        """
        self._check_params()
        check_is_fitted(self)
        self._check_y(y)
        fitted_on_dist = hasattr(self, "target_shape_")
        if self._check_distribution_input(X):
            if not fitted_on_dist:
                raise TypeError(
                    f"X is a {type(X).__name__} distribution, but {type(self).__name__} was fitted "
                    "on class probabilities."
                )
            if X.target_shape != self.target_shape_:
                raise ValueError(
                    f"X has targets of shape {X.target_shape}, but {type(self).__name__} was "
                    f"fitted on targets of shape {self.target_shape_}."
                )
            y = check_targets(y, X, name="y")
            if X.n_samples < min_samples:
                raise ValueError(f"this estimator needs at least {min_samples} samples; got "
                                 f"{X.n_samples} in X and y.")
            return y, self._check_weights(sample_weight, X.n_samples)
        if fitted_on_dist:
            raise TypeError(
                f"{type(self).__name__} was fitted on predictive distributions; X must be a "
                f"distribution of the same kind, got {type(X).__name__}."
            )
        check_feature_names(self, X, reset=False)
        n_cols = _n_columns(X)
        if n_cols != self.n_features_in_:
            raise ValueError(
                f"X has {n_cols} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        data = check_labels_and_probabilities(
            y, X, labels=self.classes_, pos_label=self.pos_label,
            min_samples=max(min_samples, self._min_samples), prob_name="X", label_name="y",
        )
        return data, self._check_weights(sample_weight, data.n_samples)

    def score(self, X, y, sample_weight=None):
        """Negated calibration error of ``(X, y)`` with the fitted parameters (greater is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1), or a distribution
            Predicted probabilities (predictive distributions for :class:`SKCE` and
            :class:`UCME` fitted on distributions).
        y : array-like of shape (n_samples,) or (n_samples, d)
            True labels (real targets for distributions).
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights, as in :meth:`error`.

        Returns
        -------
        float
        """
        return -self.error(X, y, sample_weight=sample_weight)

    def fit_transform(self, X, y=None, sample_weight=None):
        """Fit on ``(X, y)`` and return each sample's share of the error on the same data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1), or a distribution
            Predicted probabilities (or predictive distributions, see :meth:`fit`).
        y : array-like of shape (n_samples,) or (n_samples, d)
            True labels (real targets for distributions).
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to :meth:`fit` and :meth:`transform`.

        Returns
        -------
        ndarray of shape (n_samples, 1)
        """
        return self.fit(X, y, sample_weight=sample_weight).transform(
            X, y, sample_weight=sample_weight)


class CalibrationError(_CalibrationErrorBase):
    """Binned calibration error (ECE, L2, MCE) with bins learned in ``fit``.

    See :func:`skcalib.calibration_error` for the definitions; this estimator fits the bin edges
    (``strategy="quantile"`` or ``"median_variance"``) on one sample and evaluates the error on
    others.

    Parameters
    ----------
    norm : {"l1", "l2", "max"}, default="l1"
        ECE, L2 calibration error or MCE.
    squared : bool, default=False
        Report the squared L2 error (``norm="l2"`` only).
    n_bins : int, default=15
        Bins per coordinate (``"uniform"``, ``"quantile"``) or the largest number of bins
        (``"median_variance"``).
    strategy : {"uniform", "quantile", "median_variance"}, default="uniform"
        Equal-width, equal-mass (edges learned in ``fit``) or median-variance bins (learned in
        ``fit``).
    mode : {"auto", "binary", "top_label", "classwise", "canonical"}, default="auto"
        Which calibration notion; see :func:`skcalib.calibration_error`.
    debias : bool, default=False
        Kumar et al.'s debiased squared L2 error (``norm="l2"`` only).
    labels : array-like, default=None
        All class labels (default: those present in ``y`` at ``fit``).
    pos_label : label, default=None
        Positive class of a one-column binary ``X`` and of ``mode="binary"``.
    min_bin_size : int, default=1
        Smallest bin of ``strategy="median_variance"``.

    Attributes
    ----------
    classes_ : ndarray
        Class labels, sorted; column ``j`` of ``X`` belongs to ``classes_[j]``.
    mode_ : str
        The resolved mode.
    binnings_ : list
        The fitted binning of every problem (one per class for ``mode="classwise"``).
    n_features_in_ : int
        Number of columns of ``X`` at ``fit``.

    Notes
    -----
    ``transform`` returns each sample's share: its bin's gap (``"l1"``), squared gap (``"l2"``, so
    that the shares average to the *squared* error) or gap (``"max"``, whose maximum is the error).
    With ``sample_weight`` the bins' gaps are weighted, as in :func:`skcalib.calibration_error`,
    and the shares' weighted mean is the error.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import CalibrationError
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000); y = (rng.uniform(size=1000) < p).astype(int)
    >>> est = CalibrationError(strategy="quantile", n_bins=10).fit(p[:500, None], y[:500])
    >>> err = est.error(p[500:, None], y[500:])
    >>> bool(0 <= err < 0.1)
    True
    """

    def __init__(self, norm="l1", *, squared=False, n_bins=15, strategy="uniform", mode="auto",
                 debias=False, labels=None, pos_label=None, min_bin_size=1):
        self.norm = norm
        self.squared = squared
        self.n_bins = n_bins
        self.strategy = strategy
        self.mode = mode
        self.debias = debias
        self.labels = labels
        self.pos_label = pos_label
        self.min_bin_size = min_bin_size

    def _check_params(self):
        check_binned_params(self.norm, self.squared, self.n_bins, self.strategy, self.mode,
                            self.debias, self.min_bin_size)

    def _check_weights(self, sample_weight, n_samples):
        # The same weights as skcalib.calibration_error (frequency weights for debias=True).
        return check_sample_weight(sample_weight, n_samples)

    def fit(self, X, y, sample_weight=None):
        """Learn the bins on ``(X, y)`` (edges depend on ``X`` only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
            Predicted probabilities.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Validated (length, finite, non-negative); the bin edges are learned unweighted.

        Returns
        -------
        self
        """
        self._check_params()
        self._check_y(y)
        data, _ = self._validate_fit(X, y, sample_weight)
        self.mode_ = resolve_mode(self.mode, data.n_classes)
        problems = make_problems(data, self.mode_, self.pos_label)
        self.binnings_ = [
            make_binning(self.strategy, self.n_bins, self.min_bin_size).fit(Q)
            for Q, _ in problems
        ]
        return self

    def _compute(self, X, y, sample_weight=None, shares=False):
        data, w = self._validate(X, y, sample_weight)
        problems = make_problems(data, self.mode_, self.pos_label)
        return binned_errors(problems, self.binnings_, self.norm, self.debias, w,
                             shares=shares)

    def error(self, X, y, sample_weight=None):
        """The calibration error of ``(X, y)`` with the fitted bins.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
            Predicted probabilities.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights, as in :func:`skcalib.calibration_error`.

        Returns
        -------
        float
        """
        value, _ = self._compute(X, y, sample_weight)
        return finalize(value, self.norm, self.squared)

    def transform(self, X, y=None, sample_weight=None):
        """Each sample's share of the error (see Notes), shape ``(n_samples, 1)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
            Predicted probabilities.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights; the shares' weighted mean is the (squared, for ``"l2"``) error.

        Returns
        -------
        ndarray of shape (n_samples, 1)
        """
        _, shares = self._compute(X, y, sample_weight, shares=True)
        return shares[:, None]


class _KernelErrorBase(_CalibrationErrorBase):
    """SKCE-type errors: a pair term on the pairwise engine."""

    _min_samples = 1

    def _check_weights(self, sample_weight, n_samples):
        return estimates.check_weights(sample_weight, n_samples, self.estimator, self.block_size)

    def _term(self, data):  # pragma: no cover - overridden
        raise NotImplementedError

    def _term_and_weights(self, X, y, sample_weight):
        data, w = self._validate(X, y, sample_weight,
                                 min_samples=estimates.min_samples(self.estimator))
        n = data.shape[0] if isinstance(data, np.ndarray) else data.n_samples
        estimates.check_estimator_option(self.estimator, self.block_size, n)
        term, chunk = self._term(X, data)
        return term, w, self.chunk_size or chunk

    def _raw_error(self, X, y, sample_weight):
        term, w, chunk = self._term_and_weights(X, y, sample_weight)
        return estimates.estimate(term, self.estimator, self.block_size, sample_weight=w,
                                chunk_size=chunk, n_jobs=self.n_jobs)

    def transform(self, X, y=None, sample_weight=None):
        """Each sample's share of the (squared) estimate, shape ``(n_samples, 1)``.

        For the unbiased estimator the share of sample ``i`` is ``sum_{j != i} h_ij / (n - 1)``, for
        the biased one ``sum_j h_ij / n``, for the block estimator the sample's within-block sum
        scaled so that the shares average to the estimate (0 for the dropped incomplete block).
        With ``sample_weight`` the shares' weighted mean is the weighted estimate (see
        ``skcalib._problems.estimates.contributions`` for the formulas).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1), or a distribution
            Predicted probabilities (or predictive distributions, :class:`SKCE` only).
        y : array-like of shape (n_samples,) or (n_samples, d)
            True labels (real targets for distributions).
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        ndarray of shape (n_samples, 1)
        """
        term, w, chunk = self._term_and_weights(X, y, sample_weight)
        return estimates.contributions(term, self.estimator, self.block_size, sample_weight=w,
                                     chunk_size=chunk, n_jobs=self.n_jobs)[:, None]


class SKCE(_KernelErrorBase):
    """Squared kernel calibration error as an estimator (see :func:`skcalib.skce`).

    ``fit`` resolves the median-heuristic length scales on the training predictions; ``error`` and
    ``score`` evaluate the SKCE of other samples with that kernel. ``X`` is a matrix of class
    probabilities or a predictive distribution (:mod:`skcalib.distributions`; then ``y`` holds
    real targets), as for :func:`skcalib.skce`.

    Parameters
    ----------
    kernel : Kernel or TensorProductKernel, default=None
        ``None`` is ``GaussianKernel("median") ⊗ DeltaKernel()`` for class probabilities and
        ``WassersteinKernel("median") ⊗ GaussianKernel("median")`` for distributions (see
        :func:`skcalib.skce`).
    estimator : {"unbiased", "biased", "block"}, default="unbiased"
        Unbiased U-statistic, biased V-statistic or block estimator.
    block_size : int, default=2
        Block size of the block estimator (an integer ``>= 2``).
    labels : array-like, default=None
        All class labels (default: those present in ``y`` at ``fit``); class probabilities only.
    pos_label : label, default=None
        Positive class of a one-column binary ``X``; class probabilities only.
    random_state : None, int or Generator, default=None
        Subsampling of the median heuristic; Monte-Carlo draws of distributions without
        closed-form kernel expectations.
    n_mc_samples : int, default=100
        Draws per prediction of the Monte-Carlo fallback (distributions only).
    chunk_size : int, default=None
        Tile side of the pairwise engine (memory ``O(n * chunk_size)``).
    n_jobs : int, default=None
        Parallel jobs (joblib); results do not depend on it.

    Attributes
    ----------
    kernel_ : TensorProductKernel
        The kernel with numeric length scales.
    classes_ : ndarray
        Class labels, sorted (class-probability input only).
    n_features_in_ : int
        Number of columns of ``X`` at ``fit`` (class-probability input only).
    target_shape_ : tuple
        Shape of one target, ``()`` for univariate distributions (distribution input only).

    See Also
    --------
    skcalib.skce : The SKCE as a function.
    skcalib.stats.skce_test : A p-value for "the model is calibrated", with the SKCE as statistic.
    skcalib.stats.skce_ci : A confidence interval for the SKCE.

    Notes
    -----
    The error has no unit, and the unbiased estimate is negative about half of the time on a
    calibrated model. To read it against its sampling noise, test it:
    ``skcalib.stats.skce_test(y, X, kernel=est.kernel_)`` returns the same estimate with a p-value
    under "the model is calibrated" -- a small p-value (say below 0.05) is evidence of
    miscalibration, a large one means the data do not show miscalibration.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import SKCE
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=200)
    >>> y = np.array([rng.choice(3, p=p) for p in P])
    >>> est = SKCE().fit(P[:100], y[:100])
    >>> bool(abs(est.error(P[100:], y[100:])) < 0.05)
    True

    The p-value beside the error (same kernel, same estimate):

    >>> from skcalib.stats import skce_test
    >>> res = skce_test(y[100:], P[100:], kernel=est.kernel_, random_state=0)
    >>> bool(np.isclose(res.estimate, est.error(P[100:], y[100:]))), bool(res.pvalue > 0.05)
    (True, True)

    Normal predictive distributions of a regressor:

    >>> from skcalib.distributions import Normal
    >>> mu = rng.normal(size=200); t = mu + rng.normal(size=200)
    >>> est = SKCE().fit(Normal(mu[:100], 1.0), t[:100])
    >>> bool(abs(est.error(Normal(mu[100:], 1.0), t[100:])) < 0.05)
    True
    """

    _accepts_distributions = True

    def __init__(self, kernel=None, *, estimator="unbiased", block_size=2, labels=None,
                 pos_label=None, random_state=None, n_mc_samples=100, chunk_size=None,
                 n_jobs=None):
        self.kernel = kernel
        self.estimator = estimator
        self.block_size = block_size
        self.labels = labels
        self.pos_label = pos_label
        self.random_state = random_state
        self.n_mc_samples = n_mc_samples
        self.chunk_size = chunk_size
        self.n_jobs = n_jobs

    def _check_params(self):
        estimates.check_kernel_params(
            estimator=self.estimator, block_size=self.block_size, random_state=self.random_state,
            n_mc_samples=self.n_mc_samples, chunk_size=self.chunk_size, n_jobs=self.n_jobs)

    def fit(self, X, y, sample_weight=None):
        """Resolve the kernel's length scales on the predictions ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1), or a distribution
            Predicted probabilities, or predictive distributions.
        y : array-like of shape (n_samples,) or (n_samples, d)
            True labels (real targets for distributions).
        sample_weight : array-like of shape (n_samples,), default=None
            Validated; the median heuristic is unweighted.

        Returns
        -------
        self
        """
        self._check_params()
        self._check_y(y)
        if self._check_distribution_input(X):
            self._fit_distribution(X, y, sample_weight)
            return self
        data, _ = self._validate_fit(X, y, sample_weight)
        self.kernel_ = resolve_kernel(self.kernel, data.probs, self.random_state)
        return self

    def _term(self, X, data):
        if isinstance(data, np.ndarray):  # distributions: data holds the targets
            term = terms.distribution_term(
                X, data, self.kernel_, n_mc_samples=self.n_mc_samples,
                random_state=check_rng(self.random_state))
            return term, terms.preferred_chunk_size(X)
        return terms.classification_term(data, self.kernel_), None

    def error(self, X, y, sample_weight=None):
        """SKCE estimate of ``(X, y)`` with the fitted kernel.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1), or a distribution
            Predicted probabilities, or predictive distributions if fitted on them.
        y : array-like of shape (n_samples,) or (n_samples, d)
            True labels (real targets for distributions).
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights: the weighted U-statistic
            ``sum_{i != j} w_i w_j h_ij / sum_{i != j} w_i w_j`` (unbiased), V-statistic
            ``sum_{i, j} w_i w_j h_ij / (sum_i w_i)**2`` (biased) or block statistic of
            :func:`skcalib.skce`.

        Returns
        -------
        float
        """
        return self._raw_error(X, y, sample_weight)


class MMCE(_KernelErrorBase):
    """Maximum mean calibration error as an estimator (see :func:`skcalib.mmce`).

    Classification only, as the function.

    Parameters
    ----------
    kernel : GaussianKernel or ExponentialKernel, default=None
        Kernel on top-label confidences; ``None`` is ``ExponentialKernel(0.4)``.
    estimator : {"biased", "unbiased", "block"}, default="biased"
        Biased V-statistic (Kumar et al.), unbiased U-statistic or block estimator.
    squared : bool, default=False
        Return ``MMCE**2``; ``squared=False`` requires ``estimator="biased"``. Must be a bool.
    block_size : int, default=2
        Block size of the block estimator (an integer ``>= 2``).
    labels : array-like, default=None
        All class labels (default: those present in ``y`` at ``fit``).
    pos_label : label, default=None
        Positive class of a one-column binary ``X``.
    random_state : None, int or Generator, default=None
        Subsampling of the median heuristic (a ``"median"`` length scale only).
    chunk_size : int, default=None
        Tile side of the pairwise engine.
    n_jobs : int, default=None
        Parallel jobs (joblib); results do not depend on it.

    Attributes
    ----------
    kernel_ : Kernel
        The kernel with a numeric length scale.
    classes_ : ndarray
        Class labels, sorted.
    n_features_in_ : int
        Number of columns of ``X`` at ``fit``.

    Notes
    -----
    ``transform`` returns shares of ``MMCE**2``.

    Examples
    --------
    >>> from skcalib import MMCE
    >>> P = [[.9, .1], [.2, .8], [.6, .4], [.3, .7]]
    >>> est = MMCE().fit(P, [0, 1, 1, 1])
    >>> round(est.error(P, [0, 1, 1, 1]), 4) >= 0
    True
    """

    def __init__(self, kernel=None, *, estimator="biased", squared=False, block_size=2,
                 labels=None, pos_label=None, random_state=None, chunk_size=None, n_jobs=None):
        self.kernel = kernel
        self.estimator = estimator
        self.squared = squared
        self.block_size = block_size
        self.labels = labels
        self.pos_label = pos_label
        self.random_state = random_state
        self.chunk_size = chunk_size
        self.n_jobs = n_jobs

    def _check_params(self):
        estimates.check_kernel_params(
            estimator=self.estimator, block_size=self.block_size, random_state=self.random_state,
            chunk_size=self.chunk_size, n_jobs=self.n_jobs)
        _kernel.check_squared(self.squared, self.estimator, "MMCE")
        return check_mmce_kernel(self.kernel)

    def fit(self, X, y, sample_weight=None):
        """Resolve the kernel's length scale on the confidences of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
            Predicted probabilities.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Validated; the median heuristic is unweighted.

        Returns
        -------
        self
        """
        k = self._check_params()
        self._check_y(y)
        self._check_distribution_input(X)
        data, _ = self._validate_fit(X, y, sample_weight)
        self.kernel_ = k.resolve(data.probs.max(axis=1)[:, None], random_state=self.random_state)
        return self

    def _term(self, X, data):
        return terms.mmce_term(data, self.kernel_), None

    def error(self, X, y, sample_weight=None):
        """MMCE (or its square) of ``(X, y)`` with the fitted kernel.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
            Predicted probabilities.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights: the weighted statistics of :func:`skcalib.mmce`.

        Returns
        -------
        float
        """
        value = self._raw_error(X, y, sample_weight)
        return _kernel.finish_squared(value, self.squared, self.estimator, "MMCE")


class UCME(_CalibrationErrorBase):
    """Squared unnormalised calibration mean embedding as an estimator (see :func:`skcalib.ucme`).

    ``fit`` resolves the kernel's length scales and, unless given, draws the test locations.
    ``X`` is a matrix of class probabilities or a predictive distribution (then ``y`` holds real
    targets), as for :func:`skcalib.ucme`.

    Parameters
    ----------
    kernel : Kernel or TensorProductKernel, default=None
        ``None`` is ``GaussianKernel("median") ⊗ DeltaKernel()`` for class probabilities and
        ``WassersteinKernel("median") ⊗ GaussianKernel("median")`` for distributions. For class
        probabilities a ``"median"`` length scale is at least 0.2 (see :func:`skcalib.ucme`).
    test_predictions : array-like of shape (J, n_classes) or (J,), or a distribution, default=None
        Predictions of the test locations (same encoding or family as ``X``). ``fit`` stores a
        copy: changing the array afterwards does not change the fitted estimator.
    test_targets : array-like of shape (J,) or (J, d), default=None
        Labels (real targets) of the test locations. If both are None, ``n_test_locations``
        locations are drawn in ``fit`` (see :func:`skcalib.ucme`).
    n_test_locations : int, default=10
        Number of drawn test locations (an integer in ``[1, 10**4]``).
    labels : array-like, default=None
        All class labels (default: those present in ``y`` at ``fit``); class probabilities only.
    pos_label : label, default=None
        Positive class of a one-column binary ``X``; class probabilities only.
    random_state : None, int, Generator or RandomState, default=None
        Draws the test locations; also subsamples the median heuristic (None: a deterministic
        subsample) and draws the Monte-Carlo samples of the fallback.
    n_mc_samples : int, default=100
        Draws per prediction of the Monte-Carlo fallback (distributions only).
    chunk_size : int, default=None
        Rows per chunk (memory ``O(chunk_size * J)``).

    Attributes
    ----------
    kernel_ : TensorProductKernel
        The kernel with numeric length scales.
    test_predictions_ : ndarray of shape (J, n_classes), or a distribution
        The test locations' predictions (a copy).
    test_targets_ : ndarray of shape (J,) or (J, d)
        Labels (values of ``classes_``) or real targets of the test locations.
    test_class_indices_ : ndarray of shape (J,)
        Column indices of ``test_targets_`` in ``classes_`` (class-probability input only).
    classes_ : ndarray
        Class labels, sorted (class-probability input only).
    n_features_in_ : int
        Number of columns of ``X`` at ``fit`` (class-probability input only).
    target_shape_ : tuple
        Shape of one target, ``()`` for univariate distributions (distribution input only).

    See Also
    --------
    skcalib.ucme : The UCME as a function.
    skcalib.stats.ucme_test : A p-value for "the model is calibrated" (Hotelling's test on the
        same witness, chi-squared with ``J`` degrees of freedom).

    Notes
    -----
    The error has no unit. ``skcalib.stats.ucme_test(y, X, kernel=est.kernel_,
    test_predictions=est.test_predictions_, test_targets=est.test_targets_)`` returns the same
    estimate with a p-value under "the model is calibrated": a small p-value (say below 0.05) is
    evidence of miscalibration, a large one means the data do not show miscalibration. The test's
    chi-squared approximation needs many more samples than test locations.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib import UCME
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=400)
    >>> y = np.array([rng.choice(3, p=p) for p in P])
    >>> est = UCME(random_state=0).fit(P[:200], y[:200])
    >>> est.test_predictions_.shape
    (10, 3)

    The p-value beside the error (same kernel and test locations, same estimate):

    >>> from skcalib.stats import ucme_test
    >>> res = ucme_test(y[200:], P[200:], kernel=est.kernel_,
    ...                 test_predictions=est.test_predictions_, test_targets=est.test_targets_)
    >>> bool(np.isclose(res.estimate, est.error(P[200:], y[200:]))), bool(res.pvalue > 0.05)
    (True, True)
    """

    _accepts_distributions = True

    def __init__(self, kernel=None, *, test_predictions=None, test_targets=None,
                 n_test_locations=10, labels=None, pos_label=None, random_state=None,
                 n_mc_samples=100, chunk_size=None):
        self.kernel = kernel
        self.test_predictions = test_predictions
        self.test_targets = test_targets
        self.n_test_locations = n_test_locations
        self.labels = labels
        self.pos_label = pos_label
        self.random_state = random_state
        self.n_mc_samples = n_mc_samples
        self.chunk_size = chunk_size

    def _check_params(self):
        ucme.check_ucme_params(
            n_test_locations=self.n_test_locations, random_state=self.random_state,
            n_mc_samples=self.n_mc_samples, chunk_size=self.chunk_size)

    def fit(self, X, y, sample_weight=None):
        """Resolve the kernel and the test locations.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1), or a distribution
            Predicted probabilities, or predictive distributions.
        y : array-like of shape (n_samples,) or (n_samples, d)
            True labels (real targets for distributions).
        sample_weight : array-like of shape (n_samples,), default=None
            Validated; the kernel and the test locations are learned unweighted.

        Returns
        -------
        self
        """
        self._check_params()
        self._check_y(y)
        if self._check_distribution_input(X):
            # As in skcalib.ucme: the kernel first, then the test locations, from one generator.
            rng = self._fit_distribution(X, y, sample_weight)
            P, ty = ucme.resolve_distribution_test_locations(
                X, self.test_predictions, self.test_targets, self.n_test_locations, rng,
                name="X")
            self.__dict__.pop("test_class_indices_", None)
            self.test_predictions_ = P
            self.test_targets_ = ty
            return self
        data, _ = self._validate_fit(X, y, sample_weight)
        rng = check_rng(self.random_state)
        P, ty = ucme.resolve_test_locations(data, self.test_predictions, self.test_targets,
                                               self.n_test_locations, self.pos_label, rng)
        # As in skcalib.ucme: the median heuristic gets random_state itself (None: deterministic).
        self.kernel_ = resolve_ucme_kernel(self.kernel, data.probs, self.random_state)
        # Copies: the fitted state must not be a view of the caller's test_predictions.
        self.test_predictions_ = np.array(P, dtype=np.float64, copy=True)
        self.test_class_indices_ = np.array(ty, copy=True)
        self.test_targets_ = data.classes[ty]
        return self

    def _values(self, X, y, sample_weight, contributions):
        data, w = self._validate(X, y, sample_weight)
        if isinstance(data, np.ndarray):  # distributions: data holds the targets
            value, contrib = ucme.ucme_distribution_value(
                X, data, self.kernel_, self.test_predictions_, self.test_targets_,
                n_mc_samples=self.n_mc_samples, random_state=check_rng(self.random_state),
                chunk_size=self.chunk_size, sample_weight=w, contributions=contributions)
            return contrib if contributions else value
        if contributions:
            return ucme.ucme_values(data, self.kernel_, self.test_predictions_,
                                       self.test_class_indices_, chunk_size=self.chunk_size,
                                       sample_weight=w)[1]
        return ucme.ucme_value(data, self.kernel_, self.test_predictions_,
                                  self.test_class_indices_, chunk_size=self.chunk_size,
                                  sample_weight=w)

    def error(self, X, y, sample_weight=None):
        """UCME² of ``(X, y)`` at the fitted test locations.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1), or a distribution
            Predicted probabilities, or predictive distributions if fitted on them.
        y : array-like of shape (n_samples,) or (n_samples, d)
            True labels (real targets for distributions).
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights: the mean witness is ``sum_i w_i W_ij / sum_i w_i`` (integer weights
            equal repeated rows).

        Returns
        -------
        float
        """
        return self._values(X, y, sample_weight, contributions=False)

    def transform(self, X, y=None, sample_weight=None):
        """Each sample's share of UCME², shape ``(n_samples, 1)``.

        Sample ``i`` gets ``1/J sum_j W_ij * mean_k W_kj`` with the witness values ``W`` (the
        weighted mean over ``k`` with ``sample_weight``; the shares' weighted mean is UCME²).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1), or a distribution
            Predicted probabilities, or predictive distributions if fitted on them.
        y : array-like of shape (n_samples,) or (n_samples, d)
            True labels (real targets for distributions).
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        ndarray of shape (n_samples, 1)
        """
        return self._values(X, y, sample_weight, contributions=True)[:, None]
