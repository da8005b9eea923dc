"""Resampling tests of calibration for any metric: the conditional Monte-Carlo test and
Bröcker--Smith consistency resampling.

Both simulate the null hypothesis "the model is calibrated" by drawing synthetic targets from the
predictions themselves (``Y* ~ P``), recompute the metric on every synthetic data set, and compare
the observed value with these draws:

* ``"conditional"`` keeps the predictions and draws ``Y*_i ~ P_{X_i}``. Under the null, given the
  predictions, the targets are independent with ``Y_i ~ P_{X_i}``, so the observed metric and the
  simulated ones are exchangeable and the p-value ``(1 + #{T* >= T}) / (1 + B)`` is exact in finite
  samples. This test is an extension, not from the papers (which discuss consistency resampling
  only).
* ``"consistency"`` (Bröcker and Smith 2007; Vaicenavicius et al. 2019) first resamples the
  predictions with replacement, then draws ``Y*_j ~ P*_j``. It approximates the unconditional null
  and is *not* exact: duplicated predictions change estimators that group samples (binned ECE)
  and the test can be badly anti-conservative (Widmann et al. 2019).
"""

import inspect
import math
from collections.abc import Mapping

import numpy as np
from joblib import Parallel, delayed

from .._problems.kernel import KernelProblem
from .._problems.kernel_resolution import check_mmce_kernel, resolve_prediction_kernel
from .._problems.ucme import draw_distribution_test_locations, draw_test_locations
from .._validation import (
    check_bool,
    check_labels_and_probabilities,
    check_n_jobs,
    check_n_resamples,
    check_option,
    check_random_state_param,
    check_rng,
    MAX_TEST_LOCATIONS,
    pos_index,
)
from ..distributions import Categorical
from ..metrics import calibration_error, mmce, skce, ucme
from .._problems.binned import FixedPredictionErrors
from ._result import CalibrationTestResult, resampling_pvalue

__all__ = ["consistency_test"]

_METHODS = ("conditional", "consistency")
_NAMED_METRICS = {"ece": calibration_error, "skce": skce, "mmce": mmce, "ucme": ucme}
_CLASSIFICATION_ONLY = ("ece", "mmce")
#: Options of calibration_error that the fixed-prediction evaluator handles.
_FIXED_PREDICTION_OPTIONS = {"norm", "squared", "n_bins", "strategy", "mode", "debias",
                             "pos_label", "min_bin_size"}
#: Resamples per batch are capped so that a batch's label draws hold about this many numbers.
_DRAW_BUDGET = 1 << 21
#: Largest number of resamples per batch (the unit of parallel work and of seeding).
_MAX_BATCH = 100


# --------------------------------------------------------------------------------------------
# Label sampling


def sample_labels(probs, rng, size=None):
    """Draw class indices ``Y_i ~ Categorical(probs[i])`` by inverse CDF, all at once.

    Parameters
    ----------
    probs : ndarray of shape (..., n_classes)
        Probabilities (rows need not sum exactly to 1: each row's total is its scale).
    rng : numpy.random.Generator
        Source of the uniforms.
    size : int, default=None
        Independent draws of every row: the result gets a leading axis of this length.

    Returns
    -------
    ndarray of int
        Of shape ``probs.shape[:-1]``, or ``(size,) + probs.shape[:-1]``.

    Notes
    -----
    With ``u`` uniform on ``(0, total]``, the class is the number of cumulative sums ``< u``:
    class ``k`` is drawn iff ``cdf[k-1] < u <= cdf[k]``, so classes of probability 0 are never
    drawn. Memory ``O(size * n * n_classes)``.
    """
    return _sample_from_cdf(np.cumsum(probs, axis=-1), rng, size)


def _sample_from_cdf(cdf, rng, size=None):
    """:func:`sample_labels` for precomputed cumulative sums ``cdf`` (..., n_classes)."""
    shape = cdf.shape[:-1] if size is None else (int(size),) + cdf.shape[:-1]
    u = 1.0 - rng.random(shape)  # in (0, 1]
    u *= cdf[..., -1]
    codes = np.count_nonzero(cdf < u[..., None], axis=-1)
    np.minimum(codes, cdf.shape[-1] - 1, out=codes)
    return codes


# --------------------------------------------------------------------------------------------
# Validation and the problem


def _accepts(func, name):
    """True if ``func`` has a parameter called ``name`` (not through ``**kwargs``)."""
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    p = params.get(name)
    return p is not None and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        inspect.Parameter.KEYWORD_ONLY)


def _check_metric(metric):
    if isinstance(metric, str):
        if metric not in _NAMED_METRICS:
            raise ValueError(
                f"metric must be a callable or one of {sorted(_NAMED_METRICS)}; got {metric!r}."
            )
        return metric
    if not callable(metric):
        raise TypeError(
            f"metric must be a callable metric(y_true, y_pred, **kwargs) -> float or one of "
            f"{sorted(_NAMED_METRICS)}; got {metric!r} of type {type(metric).__name__}."
        )
    return metric


def _check_metric_kwargs(metric_kwargs):
    if metric_kwargs is None:
        return {}
    if not isinstance(metric_kwargs, Mapping):
        raise TypeError(f"metric_kwargs must be None or a dict; got {metric_kwargs!r} of type "
                        f"{type(metric_kwargs).__name__}.")
    kwargs = dict(metric_kwargs)
    for key in kwargs:
        if not isinstance(key, str):
            raise TypeError(f"metric_kwargs keys must be strings; got {key!r}.")
    for key in ("labels", "pos_label"):
        if key in kwargs:
            raise ValueError(
                f"metric_kwargs must not contain {key!r}: pass {key}= to consistency_test, which "
                "forwards it to the metric."
            )
    return kwargs


def _as_value(value, what):
    """The metric's return value as a finite float (``ValueError``/``TypeError`` naming metric)."""
    if isinstance(value, (bool, np.bool_, str, bytes, complex, np.complexfloating)):
        raise TypeError(f"metric must return a real number; got {value!r} on {what}.")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"metric must return a real number; got {value!r} on {what}.") from None
    if arr.size != 1:
        raise TypeError(f"metric must return a scalar; got an array of shape {arr.shape} on "
                        f"{what}.")
    v = float(arr.reshape(()))
    if not math.isfinite(v):
        raise ValueError(f"metric returned {v!r} on {what}; the test needs finite values.")
    return v


class _ResamplingProblem:
    """The resampling problem of :func:`consistency_test`: the validated data (the dispatch of
    :class:`~skcalib._problems.kernel.KernelProblem`), the metric with its fixed keyword
    arguments, and the samplers of synthetic targets.

    Picklable (it is sent to joblib workers); ``evaluate(rng, M, method)`` returns the metric on
    ``M`` synthetic data sets drawn from the predictions.
    """

    def __init__(self, metric, y_true, y_pred, labels, pos_label, metric_kwargs, seed):
        problem = KernelProblem(y_true, y_pred, labels=labels, pos_label=pos_label)
        self.regression = problem.is_distribution
        self.n_samples = problem.n_samples
        self.data = data = problem.data
        if self.regression:
            self.dist, self.y = problem.dist, problem.y
        else:
            # The layout the metric is called with: as the user gave y_pred.
            if isinstance(y_pred, Categorical):
                self.layout = "categorical"
            elif data.n_classes == 2 and np.ndim(y_pred) >= 1 and (
                    np.ndim(y_pred) == 1 or np.shape(y_pred)[1] == 1):
                self.layout = "column"
            else:
                self.layout = "matrix"
            self.pos = pos_index(data.classes, pos_label)
            self.y = data.classes[data.y]
            self.cdf = np.cumsum(data.probs, axis=1)

        kwargs = dict(metric_kwargs)
        n = self.n_samples
        w = kwargs.get("sample_weight")
        self.sample_weight = None
        if w is not None:
            w = np.asarray(w)
            if w.ndim != 1 or w.shape[0] != n:
                raise ValueError(
                    f"metric_kwargs['sample_weight'] must have shape ({n},); got {w.shape}.")
            self.sample_weight = w
            del kwargs["sample_weight"]

        if isinstance(metric, str):
            if metric in _CLASSIFICATION_ONLY and self.regression:
                raise ValueError(
                    f"metric={metric!r} needs class probabilities; y_pred is a "
                    f"{type(y_pred).__name__} distribution (use 'skce' or 'ucme')."
                )
            kwargs = self._fix_named(metric, kwargs, seed)
            self.func = _NAMED_METRICS[metric]
        else:
            self.func = metric
        if not self.regression:
            if _accepts(self.func, "labels"):
                kwargs["labels"] = self.data.classes
            if _accepts(self.func, "pos_label"):
                if self.layout == "column":
                    kwargs["pos_label"] = self.data.classes[self.pos]
                elif pos_label is not None:
                    kwargs["pos_label"] = pos_label
        self.kwargs = kwargs
        self.fast = self._fixed_prediction_errors()

    def _fixed_prediction_errors(self):
        """For the binned error, the evaluator that reuses everything label-free across the
        conditional test's label draws (:class:`~skcalib._problems.binned.FixedPredictionErrors`);
        None for other metrics."""
        if self.regression or self.func is not calibration_error:
            return None
        options = {k: v for k, v in self.kwargs.items() if k != "labels"}
        if not set(options) <= _FIXED_PREDICTION_OPTIONS:
            return None
        data = check_labels_and_probabilities(
            self.y, self._predictions(None), labels=self.kwargs.get("labels"),
            pos_label=self.kwargs.get("pos_label"), sample_weight=self.sample_weight)
        if not np.array_equal(data.classes, self.data.classes):  # pragma: no cover - defensive
            return None
        return FixedPredictionErrors(data, **options)

    def _fix_named(self, name, kwargs, seed):
        """Resolve the data-dependent parts of a named metric once, on the observed data: the
        median-heuristic kernels, the UCME's random test locations, and the seed of the
        Monte-Carlo fallback (so that the statistic is one fixed function of the data)."""
        if name == "ece":
            return kwargs
        if "random_state" not in kwargs or kwargs["random_state"] is None:
            kwargs["random_state"] = seed
        rs = kwargs["random_state"]
        check_random_state_param(rs, "metric_kwargs['random_state']")
        if isinstance(rs, (np.random.Generator, np.random.RandomState)):
            # A generator would be advanced by every evaluation: freeze one integer seed.
            rs = kwargs["random_state"] = int(check_rng(rs).integers(2**32))
        if name == "mmce":
            k = check_mmce_kernel(kwargs.get("kernel"))
            conf = self.data.probs.max(axis=1)[:, None]
            kwargs["kernel"] = k.resolve(conf, random_state=rs)
            return kwargs
        # The UCME's own rule for class probabilities (a floor on the median heuristic).
        predictions = self.dist if self.regression else self.data.probs
        kwargs["kernel"] = resolve_prediction_kernel(kwargs.get("kernel"), predictions, rs,
                                                     ucme=name == "ucme")
        if name == "ucme" and kwargs.get("test_predictions") is None \
                and kwargs.get("test_targets") is None:
            J = check_n_resamples(kwargs.get("n_test_locations", 10),
                                  "metric_kwargs['n_test_locations']",
                                  max_val=MAX_TEST_LOCATIONS)
            if self.regression:
                tP, ty = draw_distribution_test_locations(self.dist, J, check_rng(rs))
            else:
                tP, yi = draw_test_locations(J, self.data.n_classes, rs)
                ty = self.data.classes[yi]
            kwargs["test_predictions"], kwargs["test_targets"] = tP, ty
        return kwargs

    # -- the predictions the metric sees, for rows ``idx`` (None: all, in order)

    def _predictions(self, idx):
        if self.regression:
            return self.dist if idx is None else self.dist[idx]
        P = self.data.probs if idx is None else self.data.probs[idx]
        if self.layout == "column":
            return P[:, self.pos]
        if self.layout == "categorical":
            return Categorical(P, self.data.classes)
        return P

    def _call(self, y, pred, idx, what):
        kwargs = self.kwargs
        if self.sample_weight is not None:
            kwargs = dict(kwargs, sample_weight=self.sample_weight if idx is None
                          else self.sample_weight[idx])
        return _as_value(self.func(y, pred, **kwargs), what)

    def observed(self):
        return self._call(self.y, self._predictions(None), None, "the observed data")

    def evaluate(self, rng, M, method):
        """The metric on ``M`` synthetic data sets (targets drawn from the predictions)."""
        n = self.n_samples
        out = np.empty(M)
        if method == "conditional":
            if self.fast is not None:
                return self.fast.values(_sample_from_cdf(self.cdf, rng, size=M))
            pred = self._predictions(None)
            if self.regression:
                Y = self.dist.sample(random_state=rng, size=M)
            else:
                Y = self.data.classes[_sample_from_cdf(self.cdf, rng, size=M)]
            for b in range(M):
                out[b] = self._call(Y[b], pred, None, f"a synthetic data set ({method!r})")
            return out
        idx = rng.integers(n, size=(M, n))
        if not self.regression:
            Y = self.data.classes[_sample_from_cdf(self.cdf[idx], rng)]
        for b in range(M):
            pred = self._predictions(idx[b])
            y = pred.sample(random_state=rng) if self.regression else Y[b]
            out[b] = self._call(y, pred, idx[b], f"a synthetic data set ({method!r})")
        return out

    def batch_size(self):
        width = 1 if self.regression else self.data.n_classes
        return int(max(1, min(_MAX_BATCH, _DRAW_BUDGET // max(1, self.n_samples * width))))


def _run_batch(problem, rng, M, method):
    return problem.evaluate(rng, M, method)


# --------------------------------------------------------------------------------------------
# The test


def consistency_test(metric, y_true, y_pred, *, method="conditional", n_resamples=1000,
                     labels=None, pos_label=None, add_one=True, metric_kwargs=None,
                     random_state=None, n_jobs=None):
    """Test calibration with any metric by simulating calibrated targets from the predictions.

    Under the null hypothesis "the model is calibrated", the target of every sample is a draw
    from its prediction. The test therefore draws synthetic targets from the predictions,
    recomputes the metric on each synthetic data set, and reports how often a calibrated model
    gives a value at least as large as the observed one. It works for any calibration metric --
    the binned ECE included, which has no tractable null distribution of its own -- for class
    probabilities and for predictive distributions.

    Parameters
    ----------
    metric : callable or {"ece", "skce", "mmce", "ucme"}
        The test statistic, larger meaning more miscalibrated: a callable
        ``metric(y_true, y_pred, **kwargs) -> float`` (``y_true`` and ``y_pred`` passed
        positionally), or the name of one of skcalib's metrics: ``"ece"`` is
        :func:`skcalib.calibration_error` with its defaults (binary ECE for two classes,
        top-label ECE otherwise), ``"skce"``, ``"mmce"`` and ``"ucme"`` are :func:`skcalib.skce`
        (unbiased), :func:`skcalib.mmce` and :func:`skcalib.ucme`. For the names, the
        data-dependent parts are resolved *once*, on the observed data, and reused on every
        synthetic data set, so that the statistic is one fixed function of the data: the
        ``"median"`` length scales of the kernels (on the observed predictions), the UCME's random
        test locations, and the seed of the Monte-Carlo fallback for distributions without a
        closed form. A callable is evaluated as given: fix such parameters yourself (numeric length
        scales, fixed test locations, an integer ``random_state``), or the simulated values vary
        for reasons other than the targets.
    y_true : array-like of shape (n_samples,) or (n_samples, d)
        Labels (any hashable, sortable values) for class probabilities; real targets for
        predictive distributions (vectors for
        :class:`~skcalib.distributions.MultivariateNormal`).
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes), or a distribution
        Predicted probabilities (one column per class in the order of the sorted ``labels``, or
        P(``pos_label``) of a binary problem), a
        :class:`~skcalib.distributions.Categorical`, or predictive distributions of
        :mod:`skcalib.distributions` (``Normal``, ``MultivariateNormal``, ``Laplace``,
        ``Mixture``). Class probabilities are passed to the metric in the layout given (a
        one-column binary input as a 1-D P(positive) array, a ``Categorical`` as a
        ``Categorical``), always with every class.
    method : {"conditional", "consistency"}, default="conditional"
        * ``"conditional"``: keep the predictions and draw ``Y*_i ~ P_{X_i}``. Exact in finite
          samples: for a calibrated model, ``P(pvalue <= alpha) <= alpha`` for every ``n``
          (the predictions are conditioned on and the observed data are exchangeable with the
          synthetic ones). Not from the papers (see Notes).
        * ``"consistency"``: Bröcker--Smith consistency resampling: draw the predictions with
          replacement, ``P*_j = P_{X_{I_j}}``, then ``Y*_j ~ P*_j``. An approximation of the
          unconditional null, and anti-conservative with the binned ECE (see Notes).
    n_resamples : int, default=1000
        Number ``B`` of synthetic data sets, an integer in ``[1, 10**7]`` (larger values are
        refused before any work).
    labels : array-like, default=None
        All class labels (default: those in ``y_true``); forwarded to the metric if it has a
        ``labels`` parameter, so that a synthetic data set missing a class keeps every class.
        Class probabilities only.
    pos_label : label, default=None
        Positive class of a one-column binary ``y_pred`` (default: the greater label); forwarded
        to the metric if it has a ``pos_label`` parameter. Class probabilities only.
    add_one : bool, default=True
        p-value ``(1 + #{T* >= T}) / (1 + B)`` (never 0, exact for ``"conditional"``); ``False``
        gives ``#{T* >= T} / B`` as Bröcker and Smith and the papers' code compute it.
    metric_kwargs : dict, default=None
        Keyword arguments of every call of ``metric`` (not ``labels`` or ``pos_label``). A
        ``"sample_weight"`` array travels with its rows: resampled with the predictions for
        ``"consistency"``.
    random_state : None, int, Generator or RandomState, default=None
        Seeds the synthetic targets and resampling (and, for named metrics, the median
        heuristic's subsampling, the UCME's test locations and the Monte-Carlo fallback, unless
        ``metric_kwargs`` gives a ``random_state``). Equal seeds give equal results.
    n_jobs : int, default=None
        Parallel jobs (joblib's default backend, processes, unless changed with
        ``joblib.parallel_backend``) over batches of at most 100 resamples. Each batch has its
        own random stream spawned from ``random_state`` and the batches do not depend on
        ``n_jobs``, so neither do the results.

    Returns
    -------
    CalibrationTestResult
        ``statistic`` and ``estimate``: the metric on the observed data; ``pvalue``;
        ``method``; ``n_samples``; ``n_resamples``; ``null_distribution``: the ``B`` simulated
        values of the metric. It has no confidence interval.

    See Also
    --------
    skce_test : Tests on the SKCE with analytic or bootstrap nulls.
    skcalib.calibration_error : The binned calibration errors.

    Notes
    -----
    How to read the p-value: it is the fraction of data sets simulated from a *calibrated*
    version of the model (same predictions, targets drawn from them) whose metric is at least as
    large as the observed one. A small p-value (say below 0.05) is evidence of miscalibration; a
    large one means that the data do not show miscalibration, not that the model is calibrated.
    With ``B`` resamples the smallest possible p-value is ``1 / (B + 1)``.

    The conditional test is exact for every statistic (given the predictions, the targets of a
    calibrated model are independent draws ``Y_i ~ P_{X_i}``, exactly as the synthetic ones). It
    is labelled as an extension: the papers discuss consistency resampling only (Widmann et al.
    2019 use it with the ECE; the 2021 paper mentions it and does not use it). It needs a sampler
    for each prediction (every family of :mod:`skcalib.distributions` has one).

    Known flaw of consistency resampling: resampling *with replacement* duplicates predictions,
    and duplicated predictions share bins, which lowers the binned ECE of the synthetic data sets.
    With many classes and fine bins (each sample alone in its bin) the simulated values fall
    systematically below the observed ECE of a *calibrated* model, and the test rejects far too
    often: Widmann et al. (2019) report a type-I error of 1.0 at every level for the canonical ECE
    with 10 bins per class on 10-class Dirichlet(0.1) predictions (n = 250); skcalib's tests
    reproduce it (``metric_kwargs={"mode": "canonical", "n_bins": 10}``). The size of the effect
    depends on the statistic: with the default top-label ECE, whose bins hold many samples, it is
    much smaller. ``method="conditional"`` has no such flaw and is the default.

    References
    ----------
    J. Bröcker, L. A. Smith. Increasing the reliability of reliability diagrams. Weather and
    Forecasting, 2007.
    J. Vaicenavicius et al. Evaluating model calibration in classification. AISTATS 2019.
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests in multi-class classification: a
    unifying framework. NeurIPS 2019. -- Calibration tests beyond classification. ICLR 2021.

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import consistency_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=200)
    >>> y = (rng.uniform(size=200) < p).astype(int)  # calibrated: y drawn from p
    >>> res = consistency_test("ece", y, p, n_resamples=199, random_state=0)
    >>> res.pvalue > 0.05
    True
    >>> y_bad = (rng.uniform(size=200) < p ** 2).astype(int)  # overconfident in class 1
    >>> res = consistency_test("ece", y_bad, p, n_resamples=199, random_state=0)
    >>> res.pvalue < 0.05
    True
    >>> res.null_distribution.shape
    (199,)

    Any callable works, here calibration in the large, ``|mean(y) - mean(p)|``:

    >>> in_the_large = lambda y, p: abs(np.mean(y) - np.mean(p))
    >>> consistency_test(in_the_large, y_bad, p, n_resamples=199, random_state=0).pvalue < 0.05
    True
    """
    metric = _check_metric(metric)
    check_option(method, "method", _METHODS)
    B = check_n_resamples(n_resamples)
    check_bool(add_one, "add_one")
    kwargs = _check_metric_kwargs(metric_kwargs)
    check_random_state_param(random_state)
    check_n_jobs(n_jobs)

    rng = check_rng(random_state)
    metric_seed = int(rng.integers(2**32))
    problem = _ResamplingProblem(metric, y_true, y_pred, labels, pos_label, kwargs, metric_seed)
    statistic = problem.observed()

    size = problem.batch_size()
    counts = [min(size, B - s) for s in range(0, B, size)]
    # One independent stream per batch; the batches do not depend on n_jobs.
    streams = rng.spawn(len(counts))
    if n_jobs is None or n_jobs == 1 or len(counts) == 1:
        parts = [_run_batch(problem, g, M, method) for g, M in zip(streams, counts)]
    else:
        parts = Parallel(n_jobs=n_jobs)(delayed(_run_batch)(problem, g, M, method)
                                        for g, M in zip(streams, counts))
    null = np.concatenate(parts)
    pvalue = resampling_pvalue(null, statistic, add_one=add_one)
    return CalibrationTestResult(statistic=statistic, pvalue=pvalue, estimate=statistic,
                                 method=method, n_samples=problem.n_samples, n_resamples=B,
                                 null_distribution=null)
