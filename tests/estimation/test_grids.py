"""The paper's grids: defined in ``estimation/_grids.py``, public as
``skcalib.estimation.paper_grids``."""

import numpy as np

import skcalib.estimation as estimation
from skcalib.estimation import _grids


def test_public_name_is_the_module_function():
    assert estimation.paper_grids is _grids.paper_grids
    assert "paper_grids" in estimation.__all__


def test_paper_grids_in_the_cv_search():
    grids = estimation.paper_grids(400)
    names = {name: grid for name, _, grid in estimation.default_candidates(400, "top_label",
                                                                           grids="paper")}
    assert names["binning"] == grids["binning"]
    assert names["kronecker"] == grids["kronecker"]
    np.testing.assert_allclose(grids["kronecker"]["alpha"][0], np.sqrt(400) * 0.1)
    assert len(estimation.paper_grids(400, "canonical")["kronecker"]["alpha"]) == 18
