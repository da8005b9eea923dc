"""Batched predictive distributions: the predictions of probabilistic regressors (and classifiers).

A distribution object holds ``n_samples`` predictions of one family -- row ``i`` is the predictive
distribution of sample ``i`` -- and is immutable (its arrays are read-only copies). Every family

* validates its parameters (a ``ValueError`` naming the parameter for non-finite values, negative or
  zero scales, covariances that are not symmetric positive semi-definite, mixture weights that are
  negative or do not sum to one; a ``TypeError`` for strings, complex numbers or booleans, which
  numpy would otherwise convert silently),
* draws samples (``sample(random_state=..., size=...)``; ``size`` and the ``tempered`` factor are
  validated before anything is drawn or built),
* knows its 2-Wasserstein distance to another member of its family
  (:func:`wasserstein_distance`, :func:`pairwise_wasserstein`),
* for the univariate families (Normal, Laplace, mixtures of them, Empirical, Quantiles,
  ScipyDistribution and Recalibrated), has a cumulative
  distribution function ``cdf`` and a quantile function ``ppf`` (the other families raise a
  ``TypeError``: probability integral transforms and quantiles are univariate),
* and, for the kernel calibration errors, the closed-form kernel expectations
  ``E k(Z, y)`` and ``E k(Z, Z')`` (registered by each family module with
  :mod:`skcalib._expectations`, Monte Carlo otherwise; see :meth:`Normal.expected_kernel`).

Families
--------
:class:`Normal`
    ``N(loc, scale**2)``; ``scale`` is the standard deviation (``scale = 0``, a point prediction, is
    allowed: it is the one-dimensional case of a singular covariance).
:class:`MultivariateNormal`
    ``N(mean, cov)`` on ``R^d`` with full ``(n, d, d)``, diagonal ``(n, d)`` or spherical ``(n,)``
    covariances (positive semi-definite).
:class:`Laplace`
    Density ``exp(-|y - loc| / scale) / (2 scale)``, ``scale > 0``.
:class:`Mixture`
    ``sum_k weights[:, k] * components[k]``, components of one family (e.g. a deep ensemble).
:class:`Categorical`
    Class probabilities, so that classification goes through the same door.
:class:`Empirical`
    Draws or an ensemble's member predictions ``(n, m)`` with optional weights: step CDF,
    plug-in and fair CRPS, exact W2 and exact Gaussian/exponential kernel expectations (double
    sums over the draws); atoms, so ``pit(..., random_state=)`` randomises within them.
:class:`Quantiles`
    Predicted quantiles ``(n, q)`` at ``levels``: the quantile function interpolated linearly,
    with linear tails (a mixture of uniforms, bounded support); exact CDF, moments, density,
    CRPS (and the quantile-score approximation), W2 and Gaussian/exponential kernel
    expectations.
:class:`ScipyDistribution`
    A frozen continuous ``scipy.stats`` law with one parameter set per row (gamma, Student's
    t, log-normal, ...): scipy's CDF, quantiles, density, moments and sampling; CRPS and W2 by
    quantile quadrature, kernel expectations by Monte Carlo.
:class:`Recalibrated`
    A univariate prediction whose CDF is mapped by a monotone piecewise-linear ``R`` of
    ``[0, 1]`` (quantile recalibration); it has ``cdf``, ``ppf``, ``log_pdf``, sampling, moments,
    a CRPS and Wasserstein distances (its kernel expectations are Monte Carlo).

2-Wasserstein distances
-----------------------
* Normal: ``W2^2 = (m - m')^2 + (s - s')^2``; Laplace: ``(m - m')^2 + 2 (b - b')^2`` (Gelbrich).
* MultivariateNormal: the Bures formula
  ``|m - m'|^2 + tr(S + S' - 2 (S'^{1/2} S S'^{1/2})^{1/2})``; for commuting covariances
  (spherical, diagonal, or full ones that share eigenvectors) this is
  ``|m - m'|^2 + ||S^{1/2} - S'^{1/2}||_F^2``, a Euclidean distance between embeddings.
* Mixture: the mixture Wasserstein distance ``MW2`` of Widmann et al. (2021, Eq. D.2) with the
  components' W2 as ground cost, by exact optimal transport (closed forms for two components,
  a vectorised transportation simplex otherwise; see :class:`Mixture`).
* Categorical: with the discrete metric ``1{y != y'}`` on classes, ``W2 = sqrt(TV(p, p'))``.
* Empirical: ``int_0^1 (Q(u) - Q'(u))^2 du`` of the step quantile functions, exact (merged
  breakpoints; equal weights: the sorted draws' root-mean-square difference, an embedding).
* Quantiles: the same integral of the piecewise-linear quantile functions, exact (a quadratic
  form in the knots: an embedding per set of levels; the union of levels otherwise).
* ScipyDistribution: the same integral by a 256-node Gauss--Legendre rule.
* Recalibrated: ``W2^2 = int_0^1 (G^{-1}(tau) - G'^{-1}(tau))^2 dtau``. With a Normal or Laplace
  base, rows are ``m + s Q(tau)`` for one standardised quantile function ``Q`` per map, and
  ``W2^2 = (mean - mean')^2 + (sd - sd')^2 + 2 s s' (sigma sigma' - cov(Q, Q'))`` (0 for the last
  term when the maps agree: a Euclidean embedding), with the moments of ``Q`` by a composite
  Gauss-Legendre rule that has a panel per piece of the maps and dyadic panels toward the
  singular ends (accurate to about 1e-13); other bases (mixtures) by the quantiles of every row
  on such a rule thinned to 128 panels of 4 nodes (exact to about 1e-9 for maps of up to 128
  pieces; about 1e-3 relative for maps of hundreds of knots, whose kinks then fall inside
  panels).

Modules
-------
One module per family -- its class and its closed forms (kernel expectations registered with
:mod:`skcalib._expectations`, CRPS, temperature optimum, sampling):
``_normal`` (Normal), ``_laplace`` (Laplace), ``_multivariate_normal`` (MultivariateNormal),
``_categorical`` (Categorical), ``_mixture`` (Mixture), ``_recalibrated`` (Recalibrated),
``_empirical`` (Empirical), ``_quantiles`` (Quantiles),
``_scipy`` (ScipyDistribution);
``_base`` holds the base class, the shared checks, the Wasserstein functions and
``concatenate``; ``_adapters`` holds ``as_distribution``; ``_transport`` the exact optimal
transport of the mixture Wasserstein distance. See "How to add a distribution family" in the
architecture page.
"""

from ._adapters import as_distribution
# private names other packages import from here (Distribution, moment_unit,
# _crps_quantile_quadrature): they stay importable from the package's top
from ._base import (Distribution, _crps_quantile_quadrature, concatenate,  # noqa: F401
                    is_distribution, moment_unit, pairwise_wasserstein, wasserstein_distance)
from ._categorical import Categorical
from ._empirical import Empirical
from ._laplace import Laplace
from ._mixture import Mixture
from ._multivariate_normal import MultivariateNormal
from ._normal import Normal
from ._quantiles import Quantiles
from ._recalibrated import Recalibrated
from ._scipy import ScipyDistribution

__all__ = [
    "Normal",
    "MultivariateNormal",
    "Laplace",
    "Mixture",
    "Categorical",
    "Recalibrated",
    "Empirical",
    "Quantiles",
    "wasserstein_distance",
    "pairwise_wasserstein",
    "is_distribution",
    "concatenate",
    "as_distribution",
    "ScipyDistribution",
]



def _present_here(obj):
    """Give ``obj`` (and the methods a public class defines) this package's name as its module:
    the path they had when the package was one module, so that pickles
    (``skcalib.distributions.Normal``), the API pages and the doctests (collected from here)
    are unchanged."""
    obj.__module__ = __name__
    for attr in vars(obj).values() if isinstance(obj, type) else ():
        for f in (attr, getattr(attr, "__func__", None), getattr(attr, "fget", None)):
            if callable(f) and getattr(f, "__module__", "").startswith(__name__ + "."):
                f.__module__ = __name__


for _name in __all__:
    _present_here(globals()[_name])
del _name
