"""The shared floor: the problems that every upper package builds on.

``metrics``, ``stats``, ``recalibration``, ``estimation``, ``plotting`` and ``reporting`` all
ask the same questions of their inputs -- "class probabilities or a predictive distribution?",
"which kernel for these predictions?", "which pair term, in which chunks?", "which bins?" -- and
they get the one answer from here. Nothing in this package is public API; its modules are the
documented *internal* API (the architecture page of the documentation lists them), and they may
be imported by any package above it.

* ``temperature`` -- the 1-D temperature problems (exact NLL optimum, ``log T`` search), logits.
"""
