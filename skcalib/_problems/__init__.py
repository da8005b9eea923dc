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
* ``estimates`` -- SKCE-type estimates of a pair term: options, weights, estimate, shares.
* ``kernel_resolution`` -- which kernel for these predictions (median, UCME floor, Dask chunks).
* ``kernel`` -- the kernel problem: the one classes/distribution dispatch, kernel, pair term.
* ``local`` -- the local (KLCE) problem: residuals, audit features, product-kernel pair terms.
* ``modes`` -- the ``(Q, T)`` problems of each mode of class probabilities.
* ``reliability`` -- reliability-curve bins, binomial intervals and consistency bands.
* ``temperature`` -- the 1-D temperature problems (exact NLL optimum, ``log T`` search), logits.
* ``terms`` -- pair terms of the pairwise engine (residual, distribution, product kernels).
* ``ucme`` -- the UCME's witness: test locations and witness rows, classes and distributions.
* ``univariate`` -- checks of univariate predictive distributions (regression).
"""
