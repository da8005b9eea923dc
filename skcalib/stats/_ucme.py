"""The calibration-mean-embedding (CME) test: Hotelling's statistic on the UCME's witness.

For test locations ``T_1, ..., T_J`` each sample has a witness row
``Z_i = (k(T_j, (P_i, Y_i)) - E_{Z ~ P_i} k(T_j, (P_i, Z)))_j`` in ``R^J`` (the rows whose mean
gives :func:`skcalib.ucme`). Under calibration ``E Z_i = 0``, and with the sample mean ``z`` and
covariance ``S`` (denominator ``n - 1``) the statistic ``Q = n z^T S^-1 z`` is asymptotically
``chi2_J`` (Widmann, Lindsten and Zachariah 2021, Appendix C.3; Chwialkowski et al. 2015).

The witness rows come from the same chunk generator as :func:`skcalib.ucme`
(:func:`skcalib._problems.ucme.ucme_witness_chunks`). The mean and the centred cross-products
are accumulated over the chunks as the triangular factor of a streaming (TSQR) QR decomposition of
``[1, W]``, which is backward stable (no ``E[x^2] - E[x]^2`` cancellation) and needs no ``S^-1``:
memory is ``O(J^2 + chunk_size * J)`` and no ``n x J`` matrix is held.
"""

import numpy as np
from scipy import linalg
from scipy import stats as _sps

from .. import _pairwise
from .._problems.ucme import check_ucme_params, ucme_witness_chunks
from ..distributions import is_distribution
from ._result import CalibrationTestResult

__all__ = ["ucme_test"]

#: A witness column whose centred norm is at most ``ZERO_VARIANCE_RTOL`` times its norm is treated
#: as constant (its variance is rounding noise): ``sd_j <= ~1e-10 * rms_j``.
ZERO_VARIANCE_RTOL = 1e-10
#: The witnesses' covariance is treated as singular when the reciprocal condition number of its
#: Cholesky factor on the correlation scale (the square root of the correlation matrix's
#: ``lambda_min / lambda_max``) is at most ``RCOND``. The statistic is computed to a relative
#: accuracy of about ``eps / rcond``, so ``RCOND = 1e-8`` keeps it to ~1e-8 or better.
RCOND = 1e-8


class _WitnessQR:
    """Streaming QR (TSQR) of ``[1, W - c]`` for witness rows ``W`` arriving in chunks, with the
    shift ``c`` the first chunk's mean: memory ``O(J^2)`` for the state and ``O(chunk J)`` per
    chunk.

    The triangular factor ``[[r0, m^T], [0, U]]`` of ``[1, W - c]`` holds everything the
    Hotelling statistic needs: ``m = (W - c)^T 1 / r0`` (``r0 = +-sqrt(n)``, so the mean is
    ``z = c + m / r0``) and ``U^T U = (W - c)^T (I - 1 1^T / n) (W - c) = (n - 1) S``, the
    centred cross-products. Each chunk is folded in by one Householder QR of the stacked
    ``[R; 1, W_chunk - c]``, which is backward stable: there is no ``E[x^2] - E[x]^2``
    cancellation (the shift keeps a large common offset out of it as well), and the statistic
    comes out with a relative error of order ``eps * cond(U)`` (``cond(U) = sqrt(cond(S))``)
    instead of ``eps * cond(S)`` from forming and inverting ``S``.
    """

    def __init__(self, J):
        self.n = 0
        self.R = np.zeros((0, J + 1))
        self.shift = None

    def update(self, W):
        W = np.asarray(W, dtype=np.float64)
        if W.shape[0] == 0:
            return
        if self.shift is None:
            self.shift = W.mean(axis=0)
        A = np.empty((W.shape[0], W.shape[1] + 1))
        A[:, 0] = 1.0
        np.subtract(W, self.shift, out=A[:, 1:])
        self.R = np.linalg.qr(np.vstack([self.R, A]), mode="r")
        self.n += W.shape[0]

    def tap(self, chunks):
        """Pass the chunks through, folding each into the factorisation on the way."""
        for a, W in chunks:
            self.update(W)
            yield a, W

    def mean(self):
        """The mean witness ``z``."""
        return self.shift + self.R[0, 1:] / self.R[0, 0]

    def statistic(self):
        """``Q = n z^T S^-1 z = (n - 1) ||U^-T (sqrt(n) z)||^2``, after checking that ``S`` is
        invertible (a ``ValueError`` otherwise)."""
        n = self.n
        J = self.R.shape[1] - 1
        root_n_z = np.sqrt(n) * self.mean()
        U = np.triu(self.R[1:, 1:])
        centred = np.linalg.norm(U, axis=0)  # sqrt((n - 1) S_jj)
        total = np.hypot(centred, root_n_z)  # ||W_j||, the norm of the raw column
        constant = np.flatnonzero(centred <= ZERO_VARIANCE_RTOL * total)
        if constant.size:
            zero = [int(j) for j in constant if total[j] == 0.0]
            detail = (f"identically zero at test location(s) {zero}" if zero else
                      f"constant at test location(s) {[int(j) for j in constant]}")
            raise ValueError(
                f"the covariance of the J={J} witnesses is singular: the witness is {detail} "
                "(e.g. a test location far from every prediction, or whose target no prediction "
                "can produce), so the Hotelling statistic is undefined. Choose other "
                "test_predictions/test_targets (or another random_state), or a kernel with a "
                "larger length scale."
            )
        # The correlation scale: the statistic is invariant to rescaling the witnesses.
        Us = U / centred
        sv = np.linalg.svd(Us, compute_uv=False)
        if not sv[-1] > RCOND * sv[0]:
            raise ValueError(
                f"the covariance of the J={J} witnesses is singular or ill-conditioned (the "
                f"correlation matrix's lambda_min / lambda_max is {(sv[-1] / sv[0]) ** 2:.3g}, "
                f"tolerance {RCOND ** 2:g}): some test locations carry (almost) the same "
                "information, e.g. repeated or nearly equal test locations, more test locations "
                "than distinct predictions, or many test locations for two classes (whose "
                "witnesses vary along one dimension). Use fewer or other test locations."
            )
        v = linalg.solve_triangular(Us, root_n_z / centred, trans="T")
        return float((n - 1) * np.dot(v, v))


def _default_locations(y_pred, labels):
    """10 test locations, 5 for binary class probabilities (see ``n_test_locations``)."""
    if is_distribution(y_pred):
        classes = getattr(y_pred, "classes", None)  # Categorical: class probabilities
        return 5 if classes is not None and len(classes) == 2 else 10
    if labels is not None and np.size(labels) > 2:
        return 10
    shape = np.shape(y_pred)
    return 5 if len(shape) == 1 or (len(shape) == 2 and shape[1] <= 2) else 10


def ucme_test(y_true, y_pred, *, kernel=None, test_predictions=None, test_targets=None,
              n_test_locations=None, labels=None, pos_label=None, random_state=None,
              n_mc_samples=100, chunk_size=None):
    """Test calibration with the calibration mean embedding (CME): a Hotelling chi-squared test.

    Each sample ``i`` gives a witness row ``Z_i`` in ``R^J`` at ``J`` test locations
    ``T_j = (t_j, t^Y_j)``, ``Z_ij = k(T_j, (P_i, Y_i)) - E_{Z ~ P_i} k(T_j, (P_i, Z))``; for a
    tensor-product kernel ``Z_ij = k_P(t_j, P_i) [k_Y(t^Y_j, Y_i) - E_{Z ~ P_i} k_Y(t^Y_j, Z)]``.
    Under calibration the witnesses have mean zero, and the statistic
    ``Q = n z^T S^-1 z`` (``z`` the mean of the rows, ``S`` their covariance with denominator
    ``n - 1``) is asymptotically ``chi2`` with ``J`` degrees of freedom (Widmann, Lindsten and
    Zachariah 2021, Appendix C.3; Chwialkowski et al. 2015). The test costs ``O(n J)`` kernel
    evaluations and ``O(n J^2)`` flops, for class probabilities and for every family of
    predictive distributions.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, d)
        Labels, or real targets for distribution predictions (see :func:`skcalib.skce`).
    y_pred : array-like of shape (n_samples,) or (n_samples, n_classes), or a distribution
        Predicted probabilities or predictive distributions (see :func:`skcalib.skce`).
    kernel : Kernel or TensorProductKernel, default=None
        As in :func:`skcalib.ucme` (median heuristics computed once, on all samples). For class
        probabilities a ``"median"`` length scale of the kernel on predictions is at least 0.2:
        when most predictions are (almost) 0 or 1 (naive Bayes, boosted trees) the median of
        the distances between predictions is tiny, no randomly drawn test location is near any
        prediction and the witnesses' covariance would be singular (with the floor the test
        runs; see Notes for its size on such predictions).
    test_predictions : array-like of shape (J,) or (J, n_classes), or a distribution, default=None
        Predictions of the test locations (same encoding or family as ``y_pred``); given together
        with ``test_targets``.
    test_targets : array-like of shape (J,) or (J, d), default=None
        Labels (targets) of the test locations. If both are None, ``n_test_locations`` locations
        are drawn with ``random_state`` exactly as :func:`skcalib.ucme` draws them.
    n_test_locations : int, default=None
        Number of drawn test locations ``J``. None is 10, or 5 for binary class probabilities:
        there the witnesses are functions of one probability and 10 Gaussian bumps on ``[0, 1]``
        are almost always collinear (the covariance is then singular to working precision and
        the test raises). The test needs ``n_samples > J``.
    labels : array-like, default=None
        All class labels (class probabilities only; see :func:`skcalib.skce`).
    pos_label : label, default=None
        Positive class of a one-column binary ``y_pred``.
    random_state : None, int or Generator, default=None
        Draws the test locations, subsamples the median heuristic, and draws the Monte-Carlo
        samples of the fallback, as in :func:`skcalib.ucme`: equal seeds give equal results, and
        ``estimate`` equals ``skcalib.ucme(...)`` with the same arguments.
    n_mc_samples : int, default=100
        Draws per prediction of the Monte-Carlo fallback (see :func:`skcalib.skce`).
    chunk_size : int, default=None
        Rows per chunk (memory ``O(J^2 + chunk_size * J)``; no ``n x J`` matrix is held).

    Returns
    -------
    CalibrationTestResult
        ``statistic`` is ``Q``, ``pvalue`` is ``chi2.sf(Q, J)``, ``estimate`` is the squared UCME
        (``||z||^2 / J``, the value of :func:`skcalib.ucme`), ``method="hotelling"``, ``df=J``;
        no null distribution is simulated (``n_resamples`` and ``null_distribution`` are None)
        and there is no confidence interval.

    Raises
    ------
    ValueError
        If ``n_samples <= J`` (the covariance of ``J`` witnesses from at most ``J`` samples is
        singular), or if the covariance is singular or ill-conditioned for ``n_samples > J``: a
        witness column that is constant (standard deviation at most about ``1e-10`` times its
        root mean square; e.g. identically zero), or a correlation matrix of the witnesses whose
        smallest eigenvalue is at most ``1e-16`` times its largest (e.g. repeated test
        locations; the statistic is computed to a relative accuracy of about ``1e-16`` divided
        by the square root of that ratio). No numbers are returned from a singular matrix.

    See Also
    --------
    skcalib.ucme : The squared UCME.
    skce_test : Tests on the SKCE (better calibrated at small samples).

    Notes
    -----
    How to read the p-value: it is (asymptotically) the probability that a *calibrated* model
    gives a statistic at least as large as the observed one. A small p-value (say below 0.05) is
    evidence of miscalibration; a large one means the data do not show miscalibration at these
    test locations (not that the model is calibrated). The test locations are random unless
    given, so the p-value depends on ``random_state``.

    The chi-squared limit is reached much more slowly than the SKCE tests' nulls (Widmann et al.
    2021, Section 6.2 and Figs. 10-11): with an estimated covariance the statistic's law at small
    ``n`` is heavier-tailed (for Gaussian witnesses ``(n - 1) J / (n - J) F_{J, n - J}``), so
    the test rejects a calibrated model too often unless ``n`` is large compared with ``J``.
    Prefer :func:`skce_test` at small sample sizes.

    The chi-squared limit needs many samples whose witness is not (almost) zero, and samples
    predicted (almost) 0 or 1 contribute next to nothing to the witness of a calibrated model:
    on naive Bayes' predictions for scikit-learn's breast-cancer data (285 test samples, two
    thirds predicted within 1e-12 of 0 or 1) with labels *drawn from the predictions*
    (calibrated), the test at 0.05 rejected 25% of the time with the default 5 test locations
    (400 draws). For such sharp predictions use the exact conditional test
    ``consistency_test("ucme", y_true, y_pred)`` (the same kind of kernel and test locations):
    it rejected the naive-Bayes model itself on all of 10 train/test splits (p = 0.005 with 199
    resamples).

    For two classes the witnesses vary along one dimension of predictions, and the witnesses of
    many test locations are nearly collinear: with the Gaussian kernel and 10 test locations the
    covariance is singular to working precision (a ``ValueError``); use about 3 to 5 test
    locations for binary problems.

    References
    ----------
    D. Widmann, F. Lindsten, D. Zachariah. Calibration tests beyond classification. ICLR 2021.
    K. Chwialkowski, A. Ramdas, D. Sejdinovic, A. Gretton. Fast two-sample testing with analytic
    representations of probability measures. NeurIPS 2015.
    J. Demmel, L. Grigori, M. Hoemmen, J. Langou. Communication-optimal parallel and sequential
    QR and LU factorizations. SIAM J. Sci. Comput. 2012 (the streaming "TSQR").

    Examples
    --------
    >>> import numpy as np
    >>> from skcalib.stats import ucme_test
    >>> rng = np.random.default_rng(0)
    >>> p = rng.dirichlet([1, 1, 1], size=500)
    >>> y = np.array([rng.choice(3, p=row) for row in p])  # calibrated: y drawn from p
    >>> res = ucme_test(y, p, n_test_locations=5, random_state=3)
    >>> res.method, res.df
    ('hotelling', 5)
    >>> res.pvalue > 0.05
    True
    >>> y_bad = np.zeros(500, dtype=int)  # always class 0: miscalibrated
    >>> ucme_test(y_bad, p, n_test_locations=5, labels=[0, 1, 2], random_state=0).pvalue < 1e-6
    True
    """
    if n_test_locations is None:
        n_test_locations = _default_locations(y_pred, labels)
    check_ucme_params(n_test_locations=n_test_locations, random_state=random_state,
                      n_mc_samples=n_mc_samples, chunk_size=chunk_size)
    chunks, n, J, _ = ucme_witness_chunks(
        y_true, y_pred, kernel=kernel, test_predictions=test_predictions,
        test_targets=test_targets, n_test_locations=n_test_locations, labels=labels,
        pos_label=pos_label, random_state=random_state, n_mc_samples=n_mc_samples,
        chunk_size=chunk_size,
    )
    if n <= J:
        source = ("n_test_locations" if test_predictions is None and test_targets is None
                  else "the number of test_predictions")
        raise ValueError(
            f"the covariance of the J={J} witnesses is singular when n_samples <= J: got "
            f"n_samples={n} and J={J} ({source}). The CME test needs more samples than test "
            "locations (and many more for the chi-squared approximation); use fewer test "
            "locations or more samples."
        )
    qr = _WitnessQR(J)
    estimate, _ = _pairwise.witness_statistic(qr.tap(chunks), n, J, contributions=False)
    Q = qr.statistic()
    return CalibrationTestResult(statistic=Q, pvalue=_sps.chi2.sf(Q, J), estimate=estimate,
                                 method="hotelling", n_samples=n, df=J)
