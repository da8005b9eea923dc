"""The Categorical family: class probabilities, so that classification goes through the same door.

Its kernel expectations have no closed form here (Monte Carlo); its W2 with the discrete metric
is ``sqrt(TV(p, p'))``.
"""

import numpy as np

from .._validation import _check_no_missing, renormalise_low_precision, row_sum_tolerance
from ._base import Distribution, _check_temperature, _float_array, _read_only_float_copy


def _check_classes(classes, n_classes):
    """Class labels of a Categorical: one per column, unique, no missing values (None, NaN), and
    of one comparable type (numpy would turn ``["a", 1]`` into the strings ``"a", "1"``)."""
    if isinstance(classes, (str, bytes)):
        raise TypeError(f"classes must be an array-like of labels; got a {type(classes).__name__}.")
    try:
        arr = np.asarray(classes)
    except (TypeError, ValueError):
        raise ValueError("classes must be a one-dimensional array-like of labels.") from None
    if arr.shape != (n_classes,):
        raise ValueError(f"classes must have one label per column ({n_classes}); got "
                         f"shape {arr.shape}.")
    if arr.dtype.kind in "US" and not isinstance(classes, np.ndarray):
        if not all(isinstance(v, (str, bytes, np.str_, np.bytes_)) for v in classes):
            raise ValueError("classes mixes strings with other types (e.g. numbers); use one "
                             "type of label.")
    if arr.dtype.kind == "c":
        raise TypeError("classes must not be complex numbers.")
    _check_no_missing(arr, "classes")
    try:
        unique = np.unique(arr)
    except TypeError:
        raise ValueError("classes must be labels of one comparable type (e.g. all strings or all "
                         "numbers).") from None
    if unique.size != arr.size:
        raise ValueError("classes must be unique.")
    arr = arr.copy()
    arr.setflags(write=False)
    return arr


class Categorical(Distribution):
    """Batch of categorical distributions: the predicted class probabilities of a classifier.

    Parameters
    ----------
    probs : array-like of shape (n_samples, n_classes)
        Rows in ``[0, 1]`` summing to one (within ``sqrt(eps)`` of the input dtype).
    classes : array-like of shape (n_classes,), default=None
        Label of each column (default ``0, ..., n_classes - 1``): unique, of one type, no
        missing values.

    Notes
    -----
    Every classification metric accepts a ``Categorical`` in place of the probability matrix
    (its ``classes`` become the default ``labels``).

    Examples
    --------
    >>> from skcalib.distributions import Categorical
    >>> p = Categorical([[0.9, 0.1], [0.2, 0.8]], classes=["no", "yes"])
    >>> p.sample(random_state=0).shape
    (2,)
    """

    _family = "categorical"  # dispatch key of skcalib._expectations (no import cycle)
    dim = None

    def __init__(self, probs, classes=None):
        P = _float_array(probs, "probs", ndim=(2,))
        if P.shape[1] < 2:
            raise ValueError(f"probs must have at least 2 columns; got {P.shape[1]}.")
        if np.any(P < 0) or np.any(P > 1):
            raise ValueError("probs must be in [0, 1].")
        in_dtype = np.asarray(probs).dtype if hasattr(probs, "dtype") else np.float64
        if np.any(np.abs(P.sum(axis=1) - 1.0) > row_sum_tolerance(in_dtype)):
            raise ValueError("the rows of probs must sum to 1.")
        P = renormalise_low_precision(P, in_dtype)
        if classes is None:
            classes = np.arange(P.shape[1])
        self.probs = _read_only_float_copy(P)
        self.classes = _check_classes(classes, P.shape[1])
        self.n_samples = P.shape[0]
        self._freeze()

    def _take(self, rows):
        return Categorical(self.probs[rows], self.classes)

    @classmethod
    def _concatenate(cls, dists):
        if any(not np.array_equal(d.classes, dists[0].classes) for d in dists):
            raise ValueError("can only concatenate Categorical batches with the same classes.")
        return Categorical(np.concatenate([d.probs for d in dists]), dists[0].classes)

    def _check_family_details(self, other, name):
        if not (self.classes.shape == other.classes.shape
                and np.array_equal(self.classes, other.classes)):
            raise ValueError(f"{name} is a categorical distribution over different classes.")

    def _draw(self, rng, m):
        cdf = np.cumsum(self.probs, axis=1)
        u = rng.uniform(size=(m, self.n_samples, 1)) * cdf[:, -1:]
        idx = np.minimum((u > cdf).sum(axis=2), self.probs.shape[1] - 1)
        return self.classes[idx]

    def tempered(self, temperature):
        """Temperature scaling (Guo et al. 2017): probabilities ``proportional to probs**(1/T)``.

        Zero probabilities stay zero; the arg-max is unchanged.

        Parameters
        ----------
        temperature : float
            Positive finite temperature ``T`` (``T > 1`` widens, ``T < 1`` sharpens).

        Returns
        -------
        Categorical
            A new batch; ``self`` is unchanged.
        """
        T = _check_temperature(temperature)
        with np.errstate(divide="ignore"):
            z = np.log(self.probs) / T
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return Categorical(e / e.sum(axis=1, keepdims=True), self.classes)

    def _w2_squared(self, i, other, j):
        if not np.array_equal(self.classes, other.classes):
            raise ValueError("categorical distributions over different classes.")
        return 0.5 * np.abs(self.probs[i] - other.probs[j]).sum(axis=-1)
