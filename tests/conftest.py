"""Shared test fixtures."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(scope="module")
def single_threaded_blas():
    """BLAS limited to one thread for a module (apply with ``pytestmark``).

    The matrices of the estimation tests are small (n <= 3000): a multi-threaded BLAS only adds
    synchronisation, which on a busy 2-core machine made those modules 3-5x slower. Results do
    not depend on it. Module scope, so that module-scoped data fixtures run inside it too.
    """
    with threadpool_limits(limits=1, user_api="blas"):
        yield
