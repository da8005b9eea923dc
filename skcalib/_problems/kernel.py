"""The kernel problem: validated predictions, the resolved kernel and the pair term.

Every kernel error, test and estimator (``skce``, ``mmce``, ``ucme``, ``skce_test``,
``skce_ci``, ``ucme_test``, ``consistency_test``, the ``SKCE``/``UCME`` estimators, the
distribution recalibrators' SKCE objective) asks the same first question -- "class probabilities
or a predictive distribution?" -- and gets the one answer from :class:`KernelProblem`:

* :class:`KernelProblem` ``(y_true, y_pred, *, labels, pos_label, min_samples, random_state,
  n_mc_samples, y_pred_name, y_true_name, require_rows, accept_distributions)`` -- the one
  dispatch. Class
  probabilities (arrays or :class:`~skcalib.distributions.Categorical`) become
  :class:`~skcalib._validation.ClassificationData` (``data``); a predictive distribution keeps
  ``dist`` with its targets checked by :func:`skcalib._expectations.check_targets` (``y``), after
  refusing ``labels``/``pos_label`` (:func:`check_no_class_options`) and empty predictions; a
  frozen ``scipy.stats`` law becomes a distribution through
  :func:`~skcalib.distributions.as_distribution` first. Then

  - ``is_distribution``, ``n_samples``, ``predictions`` (the probabilities or the distribution);
  - ``rng`` -- the generator of ``random_state`` (:func:`~skcalib._validation.check_rng`),
    made on first use and kept, so that every consumer draws from one stream in call order;
  - ``resolve(kernel, ucme=False)`` -- the kernel with numeric length scales
    (:func:`skcalib._problems.kernel_resolution.resolve_prediction_kernel`: class probabilities
    get ``random_state`` itself, distributions the generator ``rng`` when seeded), kept as
    ``kernel``;
  - ``term(order=None)`` -- the pair term of :func:`skcalib.skce`
    (:mod:`skcalib._problems.terms`) on the samples in the given order (the Nyström test's
    random landmarks), with ``rng`` feeding the Monte-Carlo fallback of distributions;
  - ``preferred_chunk_size`` -- the tile side bounding the memory of distributions' per-pair
    covariance factors (None for class probabilities).

* :func:`is_regression_prediction` -- True for predictive distributions of real targets;
* :func:`check_no_class_options` -- ``labels``/``pos_label`` refused for distributions;
* :func:`prepare_term` -- ``(term, preferred chunk size)`` in one call.
"""

from .._expectations import check_targets
from .._validation import ClassificationData, check_labels_and_probabilities, check_rng
from ..distributions import Categorical, as_distribution, is_distribution
from .kernel_resolution import resolve_prediction_kernel
from .terms import classification_term, distribution_term, preferred_chunk_size

__all__ = ["KernelProblem", "check_no_class_options", "is_regression_prediction",
           "prepare_term"]


def is_regression_prediction(y_pred):
    """True for predictive distributions of real targets (not :class:`Categorical`)."""
    return is_distribution(y_pred) and not isinstance(y_pred, Categorical)


def _is_scipy_object(obj):
    """Whether ``obj`` comes from :mod:`scipy.stats` (a frozen law): not an array."""
    return not is_distribution(obj) and type(obj).__module__.startswith("scipy.stats")


def check_no_class_options(labels, pos_label, y_pred_name, y_pred):
    """``labels``/``pos_label`` mean nothing for predictive distributions: refuse them."""
    for name, value in (("labels", labels), ("pos_label", pos_label)):
        if value is not None:
            raise ValueError(
                f"{name} is only meaningful for class probabilities; {y_pred_name} is a "
                f"{type(y_pred).__name__} distribution (leave {name}=None)."
            )


class KernelProblem:
    """Validated ``(y_true, y_pred)`` of a kernel error: class probabilities or a predictive
    distribution (see the module docstring).

    Parameters
    ----------
    y_true : array-like
        Labels, or real targets of a distribution.
    y_pred : array-like or distribution
        Class probabilities (or a ``Categorical``), or a predictive distribution.
    labels, pos_label : optional
        Class options (a ``ValueError`` for distributions).
    min_samples : int, default=1
        Fewest samples of class probabilities.
    random_state : None, int, Generator or RandomState, default=None
        The median heuristics' subsampling and the Monte-Carlo fallback (through :attr:`rng`).
    n_mc_samples : int, default=100
        Draws per prediction of the Monte-Carlo fallback.
    y_pred_name, y_true_name : str
        The argument names of the messages (``"X"``/``"y"`` for the estimators).
    require_rows : bool, default=True
        Refuse an empty distribution as ``"<y_pred_name> is empty."``; False leaves it to
        :func:`~skcalib._expectations.check_targets` (the UCME's message).
    accept_distributions : bool, default=True
        False for class probabilities only (the MMCE): a distribution is refused by
        :func:`~skcalib._validation.check_labels_and_probabilities`.

    Attributes
    ----------
    data : ClassificationData or None
        The validated class probabilities.
    dist : distribution or None
        The predictive distribution.
    y : ndarray or None
        Its validated targets.
    n_samples : int
    kernel : TensorProductKernel or None
        The kernel resolved by :meth:`resolve`.
    """

    def __init__(self, y_true, y_pred, *, labels=None, pos_label=None, min_samples=1,
                 random_state=None, n_mc_samples=100, y_pred_name="y_pred",
                 y_true_name="y_true", require_rows=True, accept_distributions=True):
        self.random_state = random_state
        self.n_mc_samples = n_mc_samples
        self.kernel = None
        self._rng = None
        if accept_distributions and _is_scipy_object(y_pred):
            # a frozen scipy.stats law: the skcalib family of as_distribution (its message
            # for discrete or multivariate laws)
            y_pred = as_distribution(y_pred, y_pred_name)[0]
        if accept_distributions and is_regression_prediction(y_pred):
            check_no_class_options(labels, pos_label, y_pred_name, y_pred)
            if require_rows and y_pred.n_samples < 1:
                raise ValueError(f"{y_pred_name} is empty.")
            self.data = None
            self.dist = y_pred
            self.y = check_targets(y_true, y_pred, name=y_true_name, pred_name=y_pred_name)
            self.n_samples = y_pred.n_samples
        else:
            self.data = check_labels_and_probabilities(
                y_true, y_pred, labels=labels, pos_label=pos_label, min_samples=min_samples,
                prob_name=y_pred_name, label_name=y_true_name)
            self.dist = self.y = None
            self.n_samples = self.data.n_samples

    @property
    def is_distribution(self):
        """True for a predictive distribution, False for class probabilities."""
        return self.data is None

    @property
    def predictions(self):
        """The class probabilities (``data.probs``) or the distribution."""
        return self.dist if self.data is None else self.data.probs

    @property
    def rng(self):
        """``check_rng(random_state)``, made on first use and then kept."""
        if self._rng is None:
            self._rng = check_rng(self.random_state)
        return self._rng

    @property
    def preferred_chunk_size(self):
        """Tile side for distributions with full covariances; None otherwise."""
        return None if self.data is not None else preferred_chunk_size(self.dist)

    def resolve(self, kernel, *, ucme=False):
        """Resolve ``kernel`` on the predictions (``ucme=True``: the UCME's floor on a median
        length scale of class probabilities); the result is also kept as :attr:`kernel`."""
        if self.data is not None:
            random_state = self.random_state
        else:
            random_state = self.rng if self.random_state is not None else None
        self.kernel = resolve_prediction_kernel(kernel, self.predictions, random_state,
                                                ucme=ucme)
        return self.kernel

    def term(self, order=None):
        """The pair term of :func:`skcalib.skce` with the resolved kernel, on the samples in
        ``order`` (None: as given)."""
        if self.data is not None:
            data = self.data
            if order is not None:
                data = ClassificationData(data.y[order], data.probs[order], data.classes, None)
            return classification_term(data, self.kernel)
        dist, y = self.dist, self.y
        if order is not None:
            dist, y = dist[order], y[order]
        return distribution_term(dist, y, self.kernel, n_mc_samples=self.n_mc_samples,
                                 random_state=self.rng)


def prepare_term(y_true, y_pred, kernel, *, random_state=None, n_mc_samples=100):
    """Validate ``(y_true, y_pred)``, resolve ``kernel`` and build the pair term.

    Returns
    -------
    term : ResidualTerm or DistributionTerm
    chunk_size : int or None
        Preferred tile side (bounded memory for full covariances).
    """
    problem = KernelProblem(y_true, y_pred, random_state=random_state,
                            n_mc_samples=n_mc_samples)
    problem.resolve(kernel)
    return problem.term(), problem.preferred_chunk_size
