"""The folds of the estimation package: one seed per fit, the ``cv`` check and the splitter.

Shared by :class:`~skcalib.estimation.CalibrationErrorCV` and
:func:`~skcalib.estimation.cross_fit_calibration_error`: an int ``cv`` means shuffled ``KFold``
seeded by the fit's seed, anything else goes through scikit-learn's ``check_cv``.
"""

from numbers import Integral

import numpy as np
from sklearn.model_selection import KFold, check_cv

from .._validation import check_scalar_param


def seed_of(random_state):
    """One integer seed (or None) for the split, the folds and the candidates' landmarks.

    A ``Generator`` or ``RandomState`` gives one draw, so that every part of one ``fit`` uses the
    same seed, whatever ``n_jobs``.
    """
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2 ** 32))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    return random_state


def check_cv_param(cv):
    if isinstance(cv, Integral) and not isinstance(cv, (bool, np.bool_)):
        check_scalar_param(cv, "cv", min_val=2)
    elif isinstance(cv, (bool, np.bool_, str, bytes, dict, float)) or cv is None or not (
            hasattr(cv, "split") or hasattr(cv, "__iter__")):
        raise TypeError(f"cv must be an int >= 2, a cross-validation splitter or an iterable of "
                        f"(train, test) splits; got {cv!r}.")


def splitter(cv, seed):
    """The splitter of a checked ``cv``: shuffled ``KFold(cv)`` seeded by ``seed`` for an int."""
    if isinstance(cv, Integral) and not isinstance(cv, (bool, np.bool_)):
        return KFold(cv, shuffle=True, random_state=seed)
    return check_cv(cv)
