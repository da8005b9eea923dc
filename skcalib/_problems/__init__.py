"""The shared floor: the problems that every upper package builds on.

``metrics``, ``stats``, ``recalibration``, ``estimation``, ``plotting`` and ``reporting`` all
ask the same questions of their inputs -- "class probabilities or a predictive distribution?",
"which kernel for these predictions?", "which pair term, in which chunks?", "which bins?" -- and
they get the one answer from here. Nothing in this package is public API; its modules are the
documented *internal* API (the architecture page of the documentation lists them), and they may
be imported by any package above it.

Modules (one line each, alphabetical):

* ``estimates`` -- SKCE-type estimates of a pair term: options, weights, estimate, shares.
* ``kernel`` -- the kernel problem: the one classes/distribution dispatch, kernel, pair term.
* ``kernel_resolution`` -- which kernel for these predictions (median, UCME floor, Dask chunks).
* ``terms`` -- pair terms of the pairwise engine (residual, distribution, product kernels).
* ``ucme`` -- the UCME's witness: test locations and witness rows, classes and distributions.
"""
