"""The hyperparameter grids of Gruber & Bach (App. B): :func:`paper_grids`."""

import numpy as np

from .._validation import check_option, check_scalar_param
from ._base import MODES

__all__ = ["paper_grids"]


def paper_grids(n_train, mode="top_label"):
    """The hyperparameter grids of Gruber & Bach (App. B) for ``n_train`` training samples.

    The kernel-ridge grids include the paper's factor ``sqrt(n_train)``; the estimators then
    scale ``alpha`` by ``n^2`` (Kronecker) or ``n`` (two-step) internally. They go with the
    paper's fixed RBF width ``gamma = 1/2``; :class:`CalibrationErrorCV` searches the width by
    default (:func:`default_candidates`) and uses these grids with ``estimators_and_grids="paper"``.

    Parameters
    ----------
    n_train : int
        Training samples per fold (``>= 1``).
    mode : {"top_label", "canonical", "binary", "classwise", "auto"}, default="top_label"
        ``"canonical"`` has its own kernel-ridge grids; the scalar notions (every other mode)
        share the top-label ones.

    Returns
    -------
    dict
        ``{"binning": {"n_bins": [...]}, "kde": {"bandwidth": [...]},
        "kronecker": {"alpha": [...]}, "two_step": {"alpha": [...]}}``.
    """
    check_scalar_param(n_train, "n_train", min_val=1)
    check_option(mode, "mode", MODES)
    r = np.sqrt(n_train)
    if mode == "canonical":
        kron = r * 10.0 ** (9 - np.arange(1, 19))
        two = r * 10.0 ** (4.5 - 0.5 * np.arange(1, 19))
    else:
        kron = r * 10.0 ** (1 - 2 * np.arange(1, 10))
        two = r * 10.0 ** (-np.arange(1, 10, dtype=float))
    return {
        "binning": {"n_bins": [5 * i for i in range(1, 21)]},
        "kde": {"bandwidth": np.concatenate([np.logspace(-5, -1, 15),
                                             np.linspace(0.2, 1.0, 5)]).tolist()},
        "kronecker": {"alpha": kron.tolist()},
        "two_step": {"alpha": two.tolist()},
    }
