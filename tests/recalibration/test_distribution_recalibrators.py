"""The distribution recalibrators share ``predict`` and ``score``."""

import numpy as np
import pytest


def test_the_distribution_recalibrators_share_predict_and_score():
    from skcalib.distributions import Normal
    from skcalib.recalibration import (DistributionIdentityRecalibration,
                                       DistributionTemperatureScaling, QuantileRecalibration)
    from skcalib.recalibration._distribution import DistributionRecalibratorMixin
    rng = np.random.default_rng(0)
    mu = rng.normal(size=200)
    y = mu + 2.0 * rng.normal(size=200)
    dist = Normal(mu, np.ones(200))
    for cls in (DistributionIdentityRecalibration, DistributionTemperatureScaling,
                QuantileRecalibration):
        assert cls.predict is DistributionRecalibratorMixin.predict
        assert cls.score is DistributionRecalibratorMixin.score
        est = cls().fit(dist, y)
        out = est.predict_distribution(dist)
        assert est.score(dist, y) == pytest.approx(float(np.mean(out.log_pdf(y))), rel=1e-12)
        mean, std = est.predict(dist, return_std=True)
        np.testing.assert_allclose(mean, out.mean)
        np.testing.assert_allclose(std, np.sqrt(out.variance))
    # the identity's score is the unchanged predictions' mean log density (it had no score)
    ident = DistributionIdentityRecalibration().fit(dist, y)
    assert ident.score(dist, y) == pytest.approx(float(np.mean(dist.log_pdf(y))), rel=1e-12)
