"""The shared floor: the problems that every upper package builds on.

``metrics``, ``stats``, ``recalibration``, ``estimation``, ``plotting`` and ``reporting`` all
ask the same questions of their inputs -- "class probabilities or a predictive distribution?",
"which kernel for these predictions?", "which pair term, in which chunks?", "which bins?" -- and
they get the one answer from here. Nothing in this package is public API; its modules are the
documented *internal* API (the architecture page of the documentation lists them), and they may
be imported by any package above it.

Modules (one line each, alphabetical):

* ``binned`` -- the binned errors of problems ``(Q, T)`` from per-cell sums.
* ``binning`` -- the uniform, quantile and median-variance binnings.
* ``modes`` -- the ``(Q, T)`` problems of each mode of class probabilities.
* ``reliability`` -- reliability-curve bins, binomial intervals and consistency bands.
* ``univariate`` -- checks of univariate predictive distributions (regression).
"""
