"""Calibration errors as scikit-learn estimators.

``fit(P, y)`` learns the data-dependent parts of an error on one sample (bin edges, kernel length
scales from the median heuristic, UCME test locations); ``error(P, y)`` evaluates the error on
another sample with those parts fixed, ``score(P, y)`` is its negation (greater is better), and
``transform(P, y)`` returns each sample's share of the error (an ``(n_samples, 1)`` array whose
mean is the error). ``X`` is always a matrix of predicted probabilities: one column per class in
the order of ``classes_``, or a single column P(``pos_label``) for binary problems.

The estimators compute exactly what the functions of :mod:`skcalib.metrics` compute -- both call
the same private helpers.
"""

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._validation import check_labels_and_probabilities, check_option, check_rng
from . import _binned, _kernel


class _CalibrationErrorBase(TransformerMixin, BaseEstimator):
    """Shared plumbing: validation against the classes seen in ``fit``."""

    _min_samples = 1

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.positive_only = True
        return tags

    def _validate_fit(self, X, y):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None "
                "(y holds the true labels)."
            )
        data = check_labels_and_probabilities(
            y, X, labels=self.labels, pos_label=self.pos_label, min_samples=self._min_samples,
            prob_name="X", label_name="y",
        )
        self.classes_ = data.classes
        self.n_features_in_ = _n_columns(X)
        return data

    def _validate(self, X, y, sample_weight=None, min_samples=1):
        check_is_fitted(self, "classes_")
        if y is None:
            raise ValueError(f"{type(self).__name__} needs y (the true labels); got None.")
        n_cols = _n_columns(X)
        if n_cols != self.n_features_in_:
            raise ValueError(
                f"X has {n_cols} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        return check_labels_and_probabilities(
            y, X, labels=self.classes_, pos_label=self.pos_label, sample_weight=sample_weight,
            min_samples=max(min_samples, self._min_samples), prob_name="X", label_name="y",
        )

    def score(self, X, y, sample_weight=None):
        """Negated calibration error of ``(X, y)`` with the fitted parameters (greater is better).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
            Predicted probabilities.
        y : array-like of shape (n_samples,)
            True labels.
        sample_weight : array-like of shape (n_samples,), default=None
            Only :class:`CalibrationError` uses sample weights.

        Returns
        -------
        float
        """
        return -self.error(X, y, sample_weight=sample_weight)

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on ``(X, y)`` and return each sample's share of the error on the same data."""
        return self.fit(X, y, **fit_params).transform(X, y)


def _n_columns(X):
    shape = np.shape(X)
    return 1 if len(shape) == 1 else int(shape[1])


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

    Notes
    -----
    ``transform`` returns each sample's share: its bin's gap (``"l1"``), squared gap (``"l2"``, so
    that the shares average to the *squared* error) or gap (``"max"``, whose maximum is the error).

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
        _binned.check_binned_params(self.norm, self.squared, self.n_bins, self.strategy, self.mode,
                                    self.debias, self.min_bin_size)

    def fit(self, X, y):
        """Learn the bins on ``(X, y)`` (edges depend on ``X`` only).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        self._check_params()
        data = self._validate_fit(X, y)
        self.mode_ = _binned.resolve_mode(self.mode, data.n_classes)
        problems = _binned.make_problems(data, self.mode_, self.pos_label)
        self.binnings_ = [
            _binned.make_binning(self.strategy, self.n_bins, self.min_bin_size).fit(Q)
            for Q, _ in problems
        ]
        return self

    def _compute(self, X, y, sample_weight=None, shares=False):
        self._check_params()
        data = self._validate(X, y, sample_weight)
        problems = _binned.make_problems(data, self.mode_, self.pos_label)
        return _binned.binned_errors(problems, self.binnings_, self.norm, self.debias,
                                     data.sample_weight, shares=shares)

    def error(self, X, y, sample_weight=None):
        """The calibration error of ``(X, y)`` with the fitted bins.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        float
        """
        value, _ = self._compute(X, y, sample_weight)
        return _binned.finalize(value, self.norm, self.squared, self.debias)

    def transform(self, X, y=None):
        """Each sample's share of the error (see Notes), shape ``(n_samples, 1)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)

        Returns
        -------
        ndarray of shape (n_samples, 1)
        """
        _, shares = self._compute(X, y, shares=True)
        return shares[:, None]


class _KernelErrorBase(_CalibrationErrorBase):
    """SKCE-type errors: a pair term on the pairwise engine."""

    _min_samples = 1

    def _check_estimator(self, n):
        _kernel.check_estimator_option(self.estimator, self.block_size, n)

    def _term(self, data):  # pragma: no cover - overridden
        raise NotImplementedError

    def _value_and_term(self, X, y):
        check_option(self.estimator, "estimator", _kernel._ESTIMATORS)
        data = self._validate(X, y, min_samples=_kernel._min_samples(self.estimator))
        self._check_estimator(data.n_samples)
        return self._term(data)

    def _raw_error(self, X, y):
        term = self._value_and_term(X, y)
        return _kernel.estimate(term, self.estimator, self.block_size,
                                chunk_size=self.chunk_size, n_jobs=self.n_jobs)

    def transform(self, X, y=None):
        """Each sample's share of the (squared) estimate, shape ``(n_samples, 1)``.

        For the unbiased estimator the share of sample ``i`` is ``sum_{j != i} h_ij / (n - 1)``, for
        the biased one ``sum_j h_ij / n``, for the block estimator the sample's within-block sum
        scaled so that the shares average to the estimate (0 for the dropped incomplete block).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)

        Returns
        -------
        ndarray of shape (n_samples, 1)
        """
        term = self._value_and_term(X, y)
        return _kernel.contributions(term, self.estimator, self.block_size,
                                     chunk_size=self.chunk_size, n_jobs=self.n_jobs)[:, None]


class SKCE(_KernelErrorBase):
    """Squared kernel calibration error as an estimator (see :func:`skcalib.skce`).

    ``fit`` resolves the median-heuristic length scale on the training predictions; ``error`` and
    ``score`` evaluate the SKCE of other samples with that kernel.

    Parameters
    ----------
    kernel : Kernel or TensorProductKernel, default=None
        ``None`` is ``GaussianKernel("median") ⊗ DeltaKernel()``.
    estimator : {"unbiased", "biased", "block"}, default="unbiased"
    block_size : int, default=2
    labels : array-like, default=None
    pos_label : label, default=None
    random_state : None, int or Generator, default=None
        Subsampling of the median heuristic.
    chunk_size : int, default=None
    n_jobs : int, default=None

    Attributes
    ----------
    kernel_ : TensorProductKernel
        The kernel with numeric length scales.
    classes_ : ndarray
    n_features_in_ : int

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
    """

    def __init__(self, kernel=None, *, estimator="unbiased", block_size=2, labels=None,
                 pos_label=None, random_state=None, chunk_size=None, n_jobs=None):
        self.kernel = kernel
        self.estimator = estimator
        self.block_size = block_size
        self.labels = labels
        self.pos_label = pos_label
        self.random_state = random_state
        self.chunk_size = chunk_size
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Resolve the kernel's length scale on the predictions ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        check_option(self.estimator, "estimator", _kernel._ESTIMATORS)
        data = self._validate_fit(X, y)
        self.kernel_ = _kernel.resolve_kernel(self.kernel, data.probs, self.random_state)
        return self

    def _term(self, data):
        return _kernel.classification_term(data, self.kernel_)

    def error(self, X, y, sample_weight=None):
        """SKCE estimate of ``(X, y)`` with the fitted kernel (unweighted).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)
        sample_weight : None
            Not supported (kernel estimators are unweighted); must be None.

        Returns
        -------
        float
        """
        _no_weights(sample_weight, type(self).__name__)
        return self._raw_error(X, y)


class MMCE(_KernelErrorBase):
    """Maximum mean calibration error as an estimator (see :func:`skcalib.mmce`).

    Parameters
    ----------
    kernel : GaussianKernel or ExponentialKernel, default=None
        Kernel on top-label confidences; ``None`` is ``ExponentialKernel(0.4)``.
    estimator : {"biased", "unbiased", "block"}, default="biased"
    squared : bool, default=False
        ``squared=False`` requires ``estimator="biased"``.
    block_size, labels, pos_label, random_state, chunk_size, n_jobs
        As in :class:`SKCE`.

    Attributes
    ----------
    kernel_ : Kernel
    classes_ : ndarray
    n_features_in_ : int

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

    def fit(self, X, y):
        """Resolve the kernel's length scale on the confidences of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        check_option(self.estimator, "estimator", _kernel._ESTIMATORS)
        _kernel.check_squared(self.squared, self.estimator, "MMCE")
        k = _kernel.check_mmce_kernel(self.kernel)
        data = self._validate_fit(X, y)
        self.kernel_ = k.resolve(data.probs.max(axis=1)[:, None], random_state=self.random_state)
        return self

    def _term(self, data):
        return _kernel.mmce_term(data, self.kernel_)

    def error(self, X, y, sample_weight=None):
        """MMCE (or its square) of ``(X, y)`` with the fitted kernel.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)
        sample_weight : None
            Not supported; must be None.

        Returns
        -------
        float
        """
        _no_weights(sample_weight, type(self).__name__)
        value = self._raw_error(X, y)
        return _kernel.finish_squared(value, self.squared, self.estimator, "MMCE")


class UCME(_CalibrationErrorBase):
    """Squared unnormalised calibration mean embedding as an estimator (see :func:`skcalib.ucme`).

    ``fit`` resolves the kernel's length scale and, unless given, draws the test locations.

    Parameters
    ----------
    kernel : Kernel or TensorProductKernel, default=None
        ``None`` is ``GaussianKernel("median") ⊗ DeltaKernel()``.
    test_predictions : array-like of shape (J, n_classes) or (J,), default=None
        Predictions of the test locations (same encoding as ``X``).
    test_targets : array-like of shape (J,), default=None
        Labels of the test locations. If both are None, ``n_test_locations`` locations are drawn
        in ``fit``: predictions from the uniform Dirichlet distribution, labels uniformly.
    n_test_locations : int, default=10
        Number of drawn test locations.
    labels : array-like, default=None
        All class labels (default: those present in ``y`` at ``fit``).
    pos_label : label, default=None
        Positive class of a one-column binary ``X``.
    random_state : None, int, Generator or RandomState, default=None
        Draws the test locations; also subsamples the median heuristic (None: a deterministic
        subsample).
    chunk_size : int, default=None
        Rows per chunk (memory ``O(chunk_size * J)``).

    Attributes
    ----------
    kernel_ : TensorProductKernel
    test_predictions_ : ndarray of shape (J, n_classes)
    test_targets_ : ndarray of shape (J,)
        Labels (values of ``classes_``) of the test locations.
    test_class_indices_ : ndarray of shape (J,)
        Column indices of ``test_targets_`` in ``classes_``.
    classes_ : ndarray
    n_features_in_ : int

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
    """

    def __init__(self, kernel=None, *, test_predictions=None, test_targets=None,
                 n_test_locations=10, labels=None, pos_label=None, random_state=None,
                 chunk_size=None):
        self.kernel = kernel
        self.test_predictions = test_predictions
        self.test_targets = test_targets
        self.n_test_locations = n_test_locations
        self.labels = labels
        self.pos_label = pos_label
        self.random_state = random_state
        self.chunk_size = chunk_size

    def fit(self, X, y):
        """Resolve the kernel and the test locations.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        data = self._validate_fit(X, y)
        rng = check_rng(self.random_state)
        P, ty = _kernel.resolve_test_locations(data, self.test_predictions, self.test_targets,
                                               self.n_test_locations, self.pos_label, rng)
        # As in skcalib.ucme: the median heuristic gets random_state itself (None: deterministic).
        self.kernel_ = _kernel.resolve_kernel(self.kernel, data.probs, self.random_state)
        self.test_predictions_ = P
        self.test_class_indices_ = ty
        self.test_targets_ = data.classes[ty]
        return self

    def error(self, X, y, sample_weight=None):
        """UCME² of ``(X, y)`` at the fitted test locations.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)
        sample_weight : None
            Not supported; must be None.

        Returns
        -------
        float
        """
        _no_weights(sample_weight, type(self).__name__)
        data = self._validate(X, y)
        return _kernel.ucme_value(data, self.kernel_, self.test_predictions_, self.test_class_indices_,
                                  chunk_size=self.chunk_size)

    def transform(self, X, y=None):
        """Each sample's share of UCME², shape ``(n_samples, 1)``.

        Sample ``i`` gets ``1/J sum_j W_ij * mean_k W_kj`` with the witness values ``W``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples, 1)
        y : array-like of shape (n_samples,)

        Returns
        -------
        ndarray of shape (n_samples, 1)
        """
        data = self._validate(X, y)
        _, contrib = _kernel.ucme_values(data, self.kernel_, self.test_predictions_,
                                         self.test_class_indices_, chunk_size=self.chunk_size)
        return contrib[:, None]


def _no_weights(sample_weight, name):
    if sample_weight is not None:
        raise ValueError(f"{name} does not support sample_weight (kernel estimators are unweighted).")

