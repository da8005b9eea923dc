"""The train / validate / test pipeline of Gruber & Bach (Sec. 3.2) as one estimator."""

import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import KFold, ParameterGrid, check_cv, train_test_split
from sklearn.utils.validation import check_is_fitted

from .._validation import (check_labels_and_probabilities, check_option, check_scalar_param,
                           user_stacklevel)
from ..metrics._binned import resolve_mode
from ._base import MODES, CalibrationEstimatorMixin, calibration_risk
from ._binning import BinnedCalibrationEstimator
from ._kde import KDECalibrationEstimator
from ._kernel_ridge import KernelRidgeCalibrationEstimator


class GridBoundaryWarning(UserWarning):
    """The selected hyperparameter lies at the end of its grid (the grid may be too narrow)."""


def default_candidates(n_train, mode, n_components=None, random_state=None):
    """Every family with the paper's grids (App. B) for ``n_train`` training samples per fold.

    Binning (uniform, 5 to 100 bins) for the scalar notions, KDE (20 bandwidths), and kernel
    ridge regression, Kronecker and two-step (RBF, gamma = 1/2, the paper's ridge grids).
    """
    from . import paper_grids

    grids = paper_grids(n_train, "canonical" if mode == "canonical" else "top_label")
    out = []
    if mode != "canonical":
        out.append(("binning", BinnedCalibrationEstimator(), grids["binning"]))
    out.append(("kde", KDECalibrationEstimator(), grids["kde"]))
    for method in ("kronecker", "two_step"):
        est = KernelRidgeCalibrationEstimator(method=method, n_components=n_components,
                                              random_state=random_state)
        out.append((method, est, grids[method]))
    return out


def _normalise_candidates(candidates):
    """``[(name, estimator, grid)]`` from a list of (estimator, grid) / (name, estimator, grid)
    tuples or a dict ``name -> (estimator, grid)``."""
    if isinstance(candidates, dict):
        candidates = [(name, *pair) for name, pair in candidates.items()]
    out, names = [], set()
    for item in candidates:
        if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
            raise ValueError("estimators_and_grids must hold (estimator, param_grid) or (name, "
                             f"estimator, param_grid) tuples; got {item!r}.")
        name, est, grid = item if len(item) == 3 else (None, *item)
        if not isinstance(est, CalibrationEstimatorMixin):
            raise TypeError("every candidate must be a calibration estimation function of "
                            f"skcalib.estimation; got {type(est).__name__}.")
        if name is None:
            name = type(est).__name__
            base, i = name, 2
            while name in names:
                name, i = f"{base}_{i}", i + 1
        if name in names:
            raise ValueError(f"candidate name {name!r} is used twice.")
        names.add(name)
        out.append((name, est, {} if grid is None else grid))
    if not out:
        raise ValueError("estimators_and_grids is empty.")
    return out


def _fold_task(candidates, P, y, classes, mode, train, val, P_test):
    """Fit every candidate on ``train``; return its validation risks and, per test sample,
    ``h(p, p)`` (arrays of shapes ``(n_params,)`` and ``(n_params, n_test)`` per candidate).

    Kernel-ridge candidates are fitted once per setting of their other parameters and evaluated
    for the whole ``alpha`` grid on the same eigendecomposition.
    """
    risks, estimates = [], []
    Ptr, ytr, Pva, yva = P[train], y[train], P[val], y[val]
    spectra = {}  # one decomposition per kernel setting, shared by every method and alpha
    for name, est, params_list in candidates:
        if isinstance(est, KernelRidgeCalibrationEstimator):
            groups = {}
            for i, params in enumerate(params_list):
                rest = {k: v for k, v in params.items() if k != "alpha"}
                groups.setdefault(repr(sorted(rest.items())), (rest, []))[1].append(i)
            r = np.empty(len(params_list))
            e = np.empty((len(params_list), P_test.shape[0]))
            for rest, idx in groups.values():
                alphas = [params_list[i].get("alpha", est.alpha) for i in idx]
                model = clone(est).set_params(**rest, alpha=alphas[0], mode=mode, labels=classes)
                setting = {k: v for k, v in model.get_params().items()
                           if k not in ("alpha", "method")}
                key = repr(sorted(setting.items(), key=lambda kv: kv[0]))
                if key in spectra:
                    model = spectra[key]._sharing_fit(alpha=alphas[0], method=model.method)
                else:
                    model = spectra.setdefault(key, model.fit(Ptr, ytr))
                r[idx] = model.risk_path(Pva, yva, alphas)
                e[idx] = model.transform_path(P_test, alphas)
            risks.append(r)
            estimates.append(e)
            continue
        r, e = [], []
        for params in params_list:
            model = clone(est).set_params(**params, mode=mode, labels=classes).fit(Ptr, ytr)
            r.append(calibration_risk(yva, Pva, model))
            e.append(model.transform(P_test)[:, 0])
        risks.append(np.array(r))
        estimates.append(np.array(e))
    return risks, estimates


class CalibrationErrorCV(BaseEstimator):
    """Estimate a squared calibration error with cross-validated estimator choice (Gruber & Bach).

    The pipeline of the paper (Sec. 3.2):

    1. a random split of ``(X, y)`` into a tuning part and a test part (``test_size``);
    2. ``cv``-fold cross-validation on the tuning part: every candidate -- each estimation
       function family with each point of its grid -- is fitted on the training folds and its
       :func:`calibration_risk` measured on the held-out fold;
    3. selection of the candidate with the smallest mean held-out risk, **across families**;
    4. the estimate: the mean over the test part of ``h(p, p)``, averaged over the ``cv`` fold
       models of the selected candidate (a fold ensemble: nothing is refitted on the whole tuning
       part), with the standard error across the fold models.

    The test part is used only for the final estimate: its risk is never computed, since choosing
    an estimator by its test risk would bias the estimate, as choosing a classifier by its test
    accuracy biases the reported accuracy (Gruber & Bach, remark in Sec. 3.2).

    Parameters
    ----------
    estimators_and_grids : list or dict, default=None
        Candidates: ``(estimator, param_grid)`` or ``(name, estimator, param_grid)`` tuples, or a
        dict ``name -> (estimator, param_grid)``; ``param_grid`` as in
        :class:`~sklearn.model_selection.GridSearchCV` (a dict or a list of dicts). ``None``: every
        family with the paper's grids for the training-fold size (binning for the scalar notions,
        KDE, Kronecker and two-step kernel ridge regression; see :func:`default_candidates`). The
        ``mode`` and ``labels`` of every candidate are set by this estimator.
    test_size : float, default=0.2
        Fraction of the samples held out for the final estimate.
    cv : int or cross-validation splitter, default=5
        Folds of the tuning part; an int means shuffled ``KFold`` (seeded by ``random_state``).
    mode : {"auto", "binary", "top_label", "classwise", "canonical"}, default="auto"
        The notion of calibration, common to every candidate (risks of different notions are not
        comparable).
    n_components : int, default=None
        Nystrom rank of the default kernel-ridge candidates (``None``: exact).
    labels : array-like, default=None
        All class labels (default: those in ``y``).
    random_state : None or int, default=None
        Seeds the split, the folds and the Nystrom landmarks.
    n_jobs : int, default=None
        Folds processed in parallel (joblib).

    Attributes
    ----------
    calibration_error_ : float
        The estimate of the **squared** calibration error (can be negative; never clipped).
    standard_error_ : float
        Standard error across the fold models' estimates on the test part (``ddof=1``, as the
        paper's error bars). It reflects the variation between fold models only.
    sampling_standard_error_ : float
        Standard error of the ensemble estimate over the test samples (sd of the per-sample
        ``h(p_i, p_i)`` over ``sqrt(n_test)``). The estimate never uses the test labels, so this
        covers which predictions land in the test part; ``standard_error_`` understates the
        randomness of the tuning labels, since the fold models share most of their training
        data: see ``total_standard_error_``.
    total_standard_error_ : float
        An error bar for comparing the estimate with a truth: the sampling standard error and
        the variance of the fold ensemble over tuning samples, estimated from the fold models'
        spread corrected for the overlap ``fold_overlap_`` of their training sets (their
        correlation is taken to be that overlap). On the simulations of
        :mod:`skcalib.datasets` the standardised errors have sd close to 1 with it (about 2.7
        with ``standard_error_`` and the sampling error alone).
    fold_overlap_ : float
        Mean overlap fraction of two folds' training sets (3/4 for 5-fold cross-validation).
    fold_estimates_ : ndarray of shape (n_folds,)
    cv_results_ : dict of arrays
        One entry per candidate: ``"family"``, ``"params"``, ``"split<k>_risk"``, ``"mean_risk"``,
        ``"std_risk"``, ``"se_risk"``, ``"rank_risk"``, ``"split<k>_estimate"``,
        ``"mean_estimate"``, ``"se_estimate"`` (the fold models' test estimates of every
        candidate, for reporting; they play no part in the selection).
    best_index_ : int
    best_family_ : str
    best_params_ : dict
    best_estimator_ : estimator
        The selected candidate with its parameters, ``mode`` and ``labels`` (unfitted: the
        estimate comes from its fold models; fit it to use it on new data).
    mode_ : str
    classes_ : ndarray
    n_train_ : int
        Training-fold size of the first fold (the ``n`` of the paper's grids).
    n_splits_ : int
    tune_indices_, test_indices_ : ndarray
        The split of the rows of ``X`` (the folds are ``cv`` applied to the tuning rows in this
        order).

    Examples
    --------
    >>> from skcalib.datasets import make_dirichlet_calibration
    >>> from skcalib.estimation import (BinnedCalibrationEstimator, CalibrationErrorCV,
    ...                                 KernelRidgeCalibrationEstimator)
    >>> P, y = make_dirichlet_calibration(1000, random_state=0)
    >>> cv = CalibrationErrorCV([(BinnedCalibrationEstimator(), {"n_bins": [5, 10, 20]}),
    ...                          (KernelRidgeCalibrationEstimator(method="two_step"),
    ...                           {"alpha": [1e-6, 1e-4, 1e-2]})],
    ...                         mode="top_label", random_state=0).fit(P, y)
    >>> len(cv.cv_results_["mean_risk"]), cv.best_family_ in ("BinnedCalibrationEstimator",
    ...                                                       "KernelRidgeCalibrationEstimator")
    (6, True)
    """

    def __init__(self, estimators_and_grids=None, *, test_size=0.2, cv=5, mode="auto",
                 n_components=None, labels=None, random_state=None, n_jobs=None):
        self.estimators_and_grids = estimators_and_grids
        self.test_size = test_size
        self.cv = cv
        self.mode = mode
        self.n_components = n_components
        self.labels = labels
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Split, cross-validate every candidate, select, and estimate on the test part.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_classes) or (n_samples,)
            Predicted probabilities of the model whose calibration is estimated.
        y : array-like of shape (n_samples,)
            True labels.

        Returns
        -------
        self
        """
        check_option(self.mode, "mode", MODES)
        check_scalar_param(self.test_size, "test_size", kind="real", min_val=0,
                           include_min=False, max_val=1)
        if not self.test_size < 1:
            raise ValueError(f"test_size must be < 1; got {self.test_size!r}.")
        check_scalar_param(self.n_components, "n_components", min_val=1, allow_none=True)
        data = check_labels_and_probabilities(y, X, labels=self.labels, prob_name="X",
                                              label_name="y", min_samples=4)
        P, yi, classes = data.probs, data.y, data.classes
        mode = resolve_mode(self.mode, classes.size)
        idx_tune, idx_test = train_test_split(np.arange(data.n_samples), test_size=self.test_size,
                                              random_state=self.random_state)
        cv = (KFold(self.cv, shuffle=True, random_state=self.random_state)
              if isinstance(self.cv, int) and not isinstance(self.cv, bool) else check_cv(self.cv))
        Ptune, ytune = P[idx_tune], yi[idx_tune]
        splits = list(cv.split(Ptune, ytune))
        if len(splits) < 2:
            raise ValueError("cv must produce at least 2 folds (the standard errors need them).")
        n_train = len(splits[0][0])
        if self.estimators_and_grids is None:
            candidates = default_candidates(n_train, mode, self.n_components, self.random_state)
        else:
            candidates = _normalise_candidates(self.estimators_and_grids)
        expanded = [(name, est, list(ParameterGrid(grid))) for name, est, grid in candidates]
        labels_idx = np.arange(classes.size)
        results = Parallel(n_jobs=self.n_jobs)(
            delayed(_fold_task)(expanded, Ptune, ytune, labels_idx, mode, train, val,
                                P[idx_test])
            for train, val in splits)
        self._store_results(expanded, results, mode)
        self._total_standard_error([train for train, _ in splits])
        self.mode_, self.classes_, self.n_train_ = mode, classes, n_train
        self.tune_indices_, self.test_indices_ = idx_tune, idx_test
        self.n_splits_ = len(splits)
        self.n_test_ = len(idx_test)
        self._check_boundary(expanded)
        return self

    def _store_results(self, expanded, results, mode):
        K = len(results)
        risks = np.array([np.concatenate(r) for r, _ in results])  # (K, n_candidates)
        diags = np.array([np.vstack(e) for _, e in results])  # (K, n_candidates, n_test)
        ests = diags.mean(axis=2)
        families, params = [], []
        for name, _, plist in expanded:
            families += [name] * len(plist)
            params += plist
        mean = risks.mean(axis=0)
        std = risks.std(axis=0, ddof=1)
        res = {"family": np.array(families, dtype=object),
               "params": np.array(params, dtype=object)}
        for k in range(K):
            res[f"split{k}_risk"] = risks[k]
        res["mean_risk"], res["std_risk"], res["se_risk"] = mean, std, std / np.sqrt(K)
        order = np.argsort(mean, kind="stable")
        rank = np.empty(mean.size, dtype=int)
        rank[order] = np.arange(1, mean.size + 1)
        res["rank_risk"] = rank
        for k in range(K):
            res[f"split{k}_estimate"] = ests[k]
        res["mean_estimate"] = ests.mean(axis=0)
        res["se_estimate"] = ests.std(axis=0, ddof=1) / np.sqrt(K)
        self.cv_results_ = res
        best = int(order[0])
        self.best_index_ = best
        self.best_family_ = families[best]
        self.best_params_ = dict(params[best])
        est = dict((name, e) for name, e, _ in expanded)[families[best]]
        self.best_estimator_ = clone(est).set_params(**self.best_params_, mode=mode,
                                                     labels=self.labels)
        self.fold_estimates_ = ests[:, best]
        self.calibration_error_ = float(res["mean_estimate"][best])
        self.standard_error_ = float(res["se_estimate"][best])
        ensemble = diags[:, best].mean(axis=0)  # the fold ensemble's h(p_i, p_i) per test sample
        self.sampling_standard_error_ = float(ensemble.std(ddof=1) / np.sqrt(ensemble.size))

    def _total_standard_error(self, trains):
        """Error bar of the estimate including the randomness of the tuning labels.

        The fold models share most of their training data, so their spread underestimates the
        variance of one model fitted on fresh data. Treating their correlation as the overlap
        ``rho`` of their training sets (exact for means of the training data; Nadeau and Bengio's
        correction of resampled variances rests on the same idea), one fold model has variance
        ``s_f^2 / (1 - rho)`` and the ensemble of ``K`` of them
        ``s_f^2 (rho + (1 - rho) / K) / (1 - rho)``, with ``s_f`` the sd of the fold estimates.
        Added in quadrature to the sampling standard error of the test part.
        """
        K = len(trains)
        sizes = np.array([len(t) for t in trains], dtype=float)
        overlaps = [np.intersect1d(trains[i], trains[j]).size / np.sqrt(sizes[i] * sizes[j])
                    for i in range(K) for j in range(i + 1, K)]
        rho = float(np.mean(overlaps))
        sf2 = float(np.var(self.fold_estimates_, ddof=1))
        model_var = sf2 * (rho + (1.0 - rho) / K) / (1.0 - rho) if rho < 1 else np.inf
        self.fold_overlap_ = rho
        self.total_standard_error_ = float(np.sqrt(self.sampling_standard_error_ ** 2
                                                   + model_var))

    def _check_boundary(self, expanded):
        for name, _, plist in expanded:
            if name != self.best_family_:
                continue
            for key, value in self.best_params_.items():
                values = sorted({p[key] for p in plist if key in p},
                                key=lambda v: (isinstance(v, str), v))
                if len(values) > 2 and value in (values[0], values[-1]) and not isinstance(
                        value, str):
                    warnings.warn(
                        f"the selected {key}={value!r} of {name} is at the end of its grid "
                        f"[{values[0]!r}, ..., {values[-1]!r}]; consider extending the grid.",
                        GridBoundaryWarning, stacklevel=user_stacklevel())

    def summary(self):
        """The selection table as text: every candidate's mean held-out risk (with its SE and
        ``100 sqrt(risk)`` as the paper reports it) and test estimate, best first."""
        check_is_fitted(self)
        r = self.cv_results_
        lines = [f"{'rank':>4}  {'family':<32} {'params':<28} {'risk':>10} {'se':>9} "
                 f"{'100sqrt':>8} {'estimate':>10} {'se':>9}"]
        for i in np.argsort(r["rank_risk"], kind="stable"):
            params = ", ".join(f"{k}={_short(v)}" for k, v in r["params"][i].items())
            lines.append(f"{r['rank_risk'][i]:>4}  {r['family'][i]:<32} {params:<28} "
                         f"{r['mean_risk'][i]:>10.6f} {r['se_risk'][i]:>9.2e} "
                         f"{100 * np.sqrt(max(r['mean_risk'][i], 0.0)):>8.3f} "
                         f"{r['mean_estimate'][i]:>10.6f} {r['se_estimate'][i]:>9.2e}")
        return "\n".join(lines)


def _short(v):
    return f"{v:.3g}" if isinstance(v, float) else repr(v)
