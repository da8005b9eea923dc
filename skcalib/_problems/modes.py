"""The calibration notions of class probabilities as problems ``(Q, T)``.

A *problem* is a pair of float64 arrays of shape (n, d): ``Q`` the predicted probabilities that
are compared with ``T``, the matching outcomes. Every mode of the binned errors, the smooth errors,
the reliability curves and the calibration-estimation functions reads the data through it:

================  ==========================================  ===================================
mode              ``Q``                                       ``T``
================  ==========================================  ===================================
``"binary"``      ``P(pos_label)``                            ``1{y = pos_label}``
``"top_label"``   ``max_k p_k``                               ``1{y in A} / |A|`` (``A`` the argmax)
``"classwise"``   one problem per class ``k``: ``p_k``        ``1{y = k}``
``"canonical"``   ``p`` (the whole vector)                    ``e_y``
================  ==========================================  ===================================

Internal API:

* :data:`MODES` -- the ``mode`` options (``"auto"`` and the four above);
* :func:`resolve_mode` -- ``"auto"`` resolved (binary for two classes, else top-label);
* :func:`make_problems` -- the ``(Q, T)`` problems of a mode of validated ``ClassificationData``;
* :func:`binary_problem` -- validated ``(p, y, w)`` of the one binary problem of ``"binary"`` or
  ``"top_label"`` (the smooth ECE, the ECCE test and the smooth reliability display).
"""

import numpy as np

from .._validation import (
    check_labels_and_probabilities,
    check_option,
    pos_index,
    top_label,
)

__all__ = ["BINARY_MODES", "MODES", "binary_problem", "make_problems", "resolve_mode"]

#: The ``mode`` options of the binned errors.
MODES = ("auto", "binary", "top_label", "classwise", "canonical")
#: The ``mode`` options of :func:`binary_problem`.
BINARY_MODES = ("auto", "binary", "top_label")


def resolve_mode(mode, n_classes):
    """``mode`` with ``"auto"`` resolved for ``n_classes`` classes (``"binary"`` needs two)."""
    if mode == "auto":
        return "binary" if n_classes == 2 else "top_label"
    if mode == "binary" and n_classes != 2:
        raise ValueError(f"mode='binary' needs 2 classes; got {n_classes}.")
    return mode



def make_problems(data, mode, pos_label=None):
    """The (Q, T) pairs of a mode, as float64 arrays of shape (n, d)."""
    P, y = data.probs, data.y
    n = data.n_samples
    if mode == "binary":
        k = pos_index(data.classes, pos_label)
        return [(P[:, k:k + 1], (y == k).astype(np.float64)[:, None])]
    if mode == "top_label":
        conf, shares = top_label(P)
        return [(conf[:, None], shares[np.arange(n), y][:, None])]
    if mode == "classwise":
        return [(P[:, k:k + 1], (y == k).astype(np.float64)[:, None]) for k in range(P.shape[1])]
    T = np.zeros_like(P)
    T[np.arange(n), y] = 1.0
    return [(P, T)]



def binary_problem(y_true, y_proba, *, mode="auto", labels=None, pos_label=None,
                   sample_weight=None, rescale=True, prob_name="y_proba"):
    """Validated ``(p, y, w)`` float64 arrays of one binary problem: ``P(pos_label)`` and its
    indicator for ``mode="binary"``, the top-label confidence and correctness (the label-invariant
    tie share of :func:`skcalib._validation.top_label`) for ``"top_label"``. ``w`` is the sample
    weight (ones if None), divided by its maximum if ``rescale``."""
    check_option(mode, "mode", BINARY_MODES)
    data = check_labels_and_probabilities(y_true, y_proba, labels=labels, pos_label=pos_label,
                                          sample_weight=sample_weight, prob_name=prob_name)
    mode = resolve_mode(mode, data.probs.shape[1])
    ((Q, T),) = make_problems(data, mode, pos_label)
    p = np.ascontiguousarray(Q[:, 0], dtype=np.float64)
    y = np.ascontiguousarray(T[:, 0], dtype=np.float64)
    w = data.sample_weight
    if w is None:
        w = np.ones_like(p)
    elif rescale:
        w = w / w.max()
    return p, y, np.asarray(w, dtype=np.float64)

