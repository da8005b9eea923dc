"""Beyond one machine: Dask.

(a) The resampling tests, the cross-validated estimators and the cross-fitted recalibration run
on a local ``distributed`` cluster through ``joblib.parallel_backend("dask")``, giving exactly
the ``n_jobs=1`` results (and the cluster's task stream shows that the work ran there).

(b) The binned errors, the reliability-curve data and the block SKCE reduce Dask arrays chunk
by chunk (:mod:`skcalib._dask`): equal to the in-memory results on several chunkings, a Parquet
data set included, and no task ever holds more than one chunk.
"""

import sys

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import skcalib
from skcalib import calibration_error, reliability_curve, skce
from skcalib.datasets import make_dirichlet_calibration
from skcalib.kernels import GaussianKernel

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
joblib = pytest.importorskip("joblib")

FIELDS = ("prob_pred", "prob_true", "counts", "weight_sums", "ci_low", "ci_high", "bin_lower",
          "bin_upper", "bin_index")
N = 6000


@pytest.fixture(scope="module")
def data():
    P, y = make_dirichlet_calibration(N, n_classes=3, random_state=0)
    w = np.random.default_rng(1).uniform(0.0, 3.0, size=N)
    w[:1000] = 0.0  # a whole chunk of zero weights (chunks of 1000 below)
    return y, P, w


@pytest.fixture(autouse=True)
def local_scheduler():
    """The chunked metrics on the local threaded scheduler (a live ``distributed`` client can
    leave ``scheduler="dask.distributed"`` in dask's configuration behind); the cluster tests
    pass the client explicitly."""
    with dask.config.set(scheduler="threads"):
        yield


def _dask(y, P, w, rows):
    return (da.from_array(y, chunks=rows), da.from_array(P, chunks=(rows, 1)),
            None if w is None else da.from_array(w, chunks=rows))


# --------------------------------------------------------------------------------------------
# (a) joblib's dask backend on a local cluster


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    # Not the default scheduler: the chunked metrics below use the local threaded one, except
    # where a test asks for the cluster.
    c = distributed.Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


def _on_cluster(client, fn):
    """``fn()`` under joblib's dask backend, and the number of tasks the cluster ran."""
    with joblib.parallel_backend("dask", client=client), \
            distributed.get_task_stream(client) as ts:
        out = fn()
    return out, len(ts.data)


def test_resampling_tests_on_cluster_equal_n_jobs_1(client):
    from skcalib import stats

    P, y = make_dirichlet_calibration(240, n_classes=3, random_state=2)
    X = np.random.default_rng(3).normal(size=(240, 2))
    calls = {
        "bootstrap": lambda nj: stats.skce_test(y, P, method="bootstrap", n_resamples=100,
                                                random_state=0, chunk_size=64, n_jobs=nj),
        "gamma": lambda nj: stats.skce_test(y, P, method="gamma", chunk_size=64, n_jobs=nj),
        "klce": lambda nj: stats.klce_test(y, P, X, n_resamples=50, random_state=0,
                                           chunk_size=64, n_jobs=nj),
        "consistency": lambda nj: stats.consistency_test("ece", y, P, n_resamples=250,
                                                         random_state=0, n_jobs=nj),
    }
    for name, call in calls.items():
        ref = call(1)
        got, n_tasks = _on_cluster(client, lambda: call(2))
        assert n_tasks > 1, name
        assert got.statistic == ref.statistic, name
        assert got.pvalue == ref.pvalue, name
        if ref.null_distribution is not None:
            assert_array_equal(got.null_distribution, ref.null_distribution)


def test_cross_validation_on_cluster_equal_n_jobs_1(client):
    from sklearn.model_selection import GridSearchCV

    from skcalib.estimation import BinnedCalibrationEstimator, CalibrationErrorCV

    P, y = make_dirichlet_calibration(300, n_classes=3, random_state=4)
    cands = [(BinnedCalibrationEstimator(), {"n_bins": [4, 8, 16]})]
    ref = CalibrationErrorCV(cands, mode="top_label", random_state=0, n_jobs=1).fit(P, y)
    got, n_tasks = _on_cluster(client, lambda: CalibrationErrorCV(
        cands, mode="top_label", random_state=0, n_jobs=2).fit(P, y))
    assert n_tasks > 1  # the folds ran on the workers (joblib may batch them)
    assert got.calibration_error_ == ref.calibration_error_
    assert got.best_params_ == ref.best_params_
    assert_array_equal(got.cv_results_["mean_risk"], ref.cv_results_["mean_risk"])
    assert_array_equal(got.fold_estimates_, ref.fold_estimates_)

    def grid(nj):
        return GridSearchCV(BinnedCalibrationEstimator(mode="top_label"),
                            {"n_bins": [4, 8, 16]}, cv=3, n_jobs=nj).fit(P, y)

    ref = grid(1)
    got, n_tasks = _on_cluster(client, lambda: grid(2))
    assert n_tasks > 1
    assert_array_equal(got.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"])
    assert got.best_params_ == ref.best_params_

    # cross-fitted recalibration: one fold model and recalibrator per task
    from sklearn.linear_model import LogisticRegression

    from skcalib.recalibration import RecalibratedClassifier

    X = np.random.default_rng(5).normal(size=(300, 4))
    yb = (X[:, 0] + np.random.default_rng(6).normal(size=300) > 0).astype(int)

    def recal(nj):
        return RecalibratedClassifier(LogisticRegression(), cv=3, n_jobs=nj).fit(X, yb)

    ref = recal(1).predict_proba(X)
    got, n_tasks = _on_cluster(client, lambda: recal(2).predict_proba(X))
    assert n_tasks > 1
    assert_array_equal(got, ref)


def test_chunked_metrics_run_on_the_cluster(client, data):
    y, P, _ = data
    with dask.config.set(scheduler=client), distributed.get_task_stream(client) as ts:
        got = calibration_error(*_dask(y, P, None, 1500)[:2])
    assert len(ts.data) >= 4  # the chunk tasks ran on the workers
    assert_allclose(got, calibration_error(y, P), rtol=1e-12)


# --------------------------------------------------------------------------------------------
# (b) chunked reductions against the in-memory results

BINNED = [
    dict(),
    dict(norm="l2"),
    dict(norm="max"),
    dict(mode="classwise", norm="l2", debias=True),
    dict(mode="canonical", n_bins=4),
    dict(mode="canonical", n_bins=10**6),  # sparse cells: global keys, never renumbered per chunk
    dict(mode="canonical", n_bins=2**21, norm="max"),  # cells as tuples (3 * 21 bits > 62)
    dict(norm="l2", squared=True, debias=True, weighted=True),
    dict(mode="classwise", weighted=True),
]


@pytest.mark.parametrize("rows", [1000, 1777, (2500, 500, 3000)])
def test_calibration_error_chunked_equals_in_memory(data, rows):
    y, P, w = data
    for kw in BINNED:
        kw = dict(kw)
        weighted = kw.pop("weighted", False)
        ref = calibration_error(y, P, sample_weight=w if weighted else None, **kw)
        got = calibration_error(*_dask(y, P, w if weighted else None, rows)[:2],
                                sample_weight=_dask(y, P, w, rows)[2] if weighted else None,
                                **kw)
        assert isinstance(got, float)
        assert_allclose(got, ref, rtol=1e-12, atol=1e-15, err_msg=str(kw))


def test_calibration_error_binary_one_column_and_numpy_labels(data):
    y, P, w = data
    yb = (y == 0).astype(int)
    p = P[:, 0]
    for kw in (dict(), dict(pos_label=0), dict(labels=[0, 1], norm="max")):
        ref = calibration_error(yb, p, **kw)
        # labels in memory, probabilities chunked (wrapped to the same chunks)
        got = calibration_error(yb, da.from_array(p, chunks=700), **kw)
        assert_allclose(got, ref, rtol=1e-12)


@pytest.mark.parametrize("rows", [1000, 2222])
def test_reliability_curve_chunked_equals_in_memory(data, rows):
    y, P, w = data
    for kw, weighted in [(dict(), False), (dict(mode="classwise", min_bin_size=30), False),
                         (dict(interval="wilson", n_bins=20), True), (dict(n_bins=10**9), False)]:
        ref = reliability_curve(y, P, sample_weight=w if weighted else None, **kw)
        dy, dP, dw = _dask(y, P, w, rows)
        got = reliability_curve(dy, dP, sample_weight=dw if weighted else None, **kw)
        refs, gots = (ref, got) if isinstance(ref, list) else ([ref], [got])
        assert len(gots) == len(refs)
        for a, b in zip(refs, gots):
            assert (a.label, a.mode, len(a)) == (b.label, b.mode, len(b))
            for f in FIELDS:
                assert_allclose(getattr(b, f), getattr(a, f), rtol=1e-11, atol=1e-14,
                                err_msg=f"{kw} {f}")
            assert b.counts.dtype == np.int64 and b.bin_index.dtype == np.int64


@pytest.mark.parametrize("B,rows", [(2, 1000), (10, (2000, 1000, 3000)), (50, 1500)])
def test_block_skce_chunk_aligned_equals_in_memory(data, B, rows):
    y, P, w = data
    dy, dP, dw = _dask(y, P, w, rows)
    kws = [dict()] if B != 10 else [dict(kernel=GaussianKernel(0.2)), dict(random_state=5)]
    for kw in kws:
        ref = skce(y, P, estimator="block", block_size=B, **kw)
        assert_allclose(skce(dy, dP, estimator="block", block_size=B, **kw), ref, rtol=1e-12)
    ref = skce(y, P, estimator="block", block_size=B, sample_weight=w)
    got = skce(dy, dP, estimator="block", block_size=B, sample_weight=dw)
    assert_allclose(got, ref, rtol=1e-12)


def test_block_test_chunked_equals_in_memory(data):
    from skcalib import stats

    y, P, _ = data
    dy, dP, _ = _dask(y, P, None, (1200, 2400, 2400))
    for B in (2, 12):
        ref = stats.skce_test(y, P, method="block", block_size=B)
        got = stats.skce_test(dy, dP, method="block", block_size=B)
        for f in ("statistic", "pvalue", "estimate", "standard_error"):
            assert_allclose(getattr(got, f), getattr(ref, f), rtol=1e-9, err_msg=f)
        assert (got.method, got.n_samples) == ("block", N)
    with pytest.raises(ValueError, match="method='bootstrap'"):
        stats.skce_test(dy, dP, method="bootstrap")


def test_block_skce_blocks_stay_inside_chunks(data):
    """Chunks whose lengths are not multiples of the block size: every chunk forms its own
    blocks and drops its last ``len mod B`` rows; checked against the block statistics of each
    chunk computed in memory with the length scale of the whole data set."""
    from skcalib import _pairwise
    from skcalib._validation import check_labels_and_probabilities
    from skcalib._problems.kernel_resolution import resolve_kernel
    from skcalib._problems.terms import classification_term

    y, P, _ = data
    B, rows = 7, (1000, 1234, 1766, 2000)
    got = skce(*_dask(y, P, None, rows)[:2], estimator="block", block_size=B)
    k = resolve_kernel(None, check_labels_and_probabilities(y, P).probs)
    values, start = [], 0
    for r in rows:
        chunk = check_labels_and_probabilities(y[start:start + r], P[start:start + r],
                                               labels=[0, 1, 2])
        values.append(_pairwise.block_statistics(classification_term(chunk, k), B))
        start += r
    values = np.concatenate(values)
    assert values.size == sum(r // B for r in rows) < N // B
    assert_allclose(got, values.mean(), rtol=1e-12)
    assert got != skce(y, P, estimator="block", block_size=B)


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # dask's Parquet reader on pandas 3
def test_parquet_data_set(tmp_path, data):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    dd = pytest.importorskip("dask.dataframe")
    y, P, w = data
    frame = pd.DataFrame({"y": y, "p0": P[:, 0], "p1": P[:, 1], "p2": P[:, 2], "w": w})
    dd.from_pandas(frame, npartitions=4, sort=False).to_parquet(tmp_path / "preds")
    arr = dd.read_parquet(tmp_path / "preds").to_dask_array(lengths=True)
    assert arr.numblocks[0] == 4 and arr.chunks[0] == (1500,) * 4
    dy, dP, dw = arr[:, 0], arr[:, 1:4], arr[:, 4]
    assert_allclose(calibration_error(dy, dP, norm="l2", sample_weight=dw),
                    calibration_error(y, P, norm="l2", sample_weight=w), rtol=1e-12)
    a, b = reliability_curve(y, P), reliability_curve(dy, dP)
    for f in FIELDS:
        assert_allclose(getattr(b, f), getattr(a, f), rtol=1e-12, atol=1e-15)
    # blocks of 10 divide the partitions of 1500 rows
    assert_allclose(skce(dy, dP, estimator="block", block_size=10),
                    skce(y, P, estimator="block", block_size=10), rtol=1e-12)
    # a Dask Series is accepted as it is (converted with lengths=True)
    frame_d = dd.read_parquet(tmp_path / "preds")
    assert_allclose(calibration_error(frame_d["y"], dP), calibration_error(y, P), rtol=1e-12)


def test_no_task_holds_more_than_a_chunk(data):
    """The reduction never concatenates chunks: every array a task returns is at most one
    chunk of ``y_proba`` (the largest input block), and the summaries are tiny."""
    from dask.callbacks import Callback

    y, P, _ = data
    dy, dP, _ = _dask(y, P, None, 500)
    chunk_bytes = 500 * 3 * 8
    largest = []

    class Sizes(Callback):
        def _posttask(self, key, result, dsk, state, worker_id):
            largest.append(getattr(result, "nbytes", 0))

    with Sizes():
        calibration_error(dy, dP, mode="classwise")
        reliability_curve(dy, dP)
        skce(dy, dP, estimator="block", kernel=GaussianKernel(0.3))
    assert len(largest) > 3 * 12
    assert 0 < max(largest) <= chunk_bytes < P.nbytes


# --------------------------------------------------------------------------------------------
# Errors, inputs, and Dask staying optional


def test_errors_name_the_argument(data):
    y, P, w = data
    dy, dP, dw = _dask(y, P, w, 1000)
    with pytest.raises(ValueError, match="strategy='quantile'"):
        calibration_error(dy, dP, strategy="quantile")
    with pytest.raises(ValueError, match="strategy='quantile'"):
        reliability_curve(dy, dP, strategy="quantile")
    with pytest.raises(ValueError, match="estimator='unbiased'"):
        skce(dy, dP)
    with pytest.raises(ValueError, match="y_true and y_proba have inconsistent lengths"):
        calibration_error(dy[:-1], dP)
    with pytest.raises(ValueError, match="sample_weight and y_proba"):
        calibration_error(dy, dP, sample_weight=dw[:10])
    bad = P.copy()
    bad[4321, 0] = np.nan  # in the fifth chunk only
    with pytest.raises(ValueError, match="y_proba"):
        calibration_error(dy, da.from_array(bad, chunks=(1000, 3)))
    neg = w.copy()
    neg[5555] = -1.0
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        calibration_error(dy, dP, sample_weight=da.from_array(neg, chunks=1000))
    with pytest.raises(ValueError, match="sample_weight must have a positive sum"):
        calibration_error(dy, dP, sample_weight=da.zeros(N, chunks=1000))
    with pytest.raises(ValueError, match="block_size=2000 exceeds"):
        skce(dy, dP, estimator="block", block_size=2000)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        calibration_error(dy[dy >= 0], dP)
    with pytest.raises(ValueError, match="labels has 2 classes"):
        calibration_error(dy, dP, labels=[0, 1])
    # inputs are not changed; nothing is computed on invalid options
    assert np.isfinite(P).all()


def test_dask_not_needed(monkeypatch):
    """Dask stays optional: no skcalib module imports dask at import time (only inside the
    functions of ``skcalib._dask`` that run on Dask input), and the metrics work on NumPy input
    when ``import dask`` fails."""
    import pathlib
    import re

    pattern = re.compile(r"^(\s*)(import|from)\s+(dask|distributed)\b", re.MULTILINE)
    found = []
    for path in pathlib.Path(skcalib.__file__).parent.rglob("*.py"):
        for m in pattern.finditer(path.read_text()):
            found.append((path.name, m.group(1) != ""))  # (file, indented: inside a function)
    assert found and all(indented and name == "_dask.py" for name, indented in found), found
    monkeypatch.setitem(sys.modules, "dask", None)  # any "import dask" now fails
    with pytest.raises(ImportError):
        import dask.array  # noqa: F401
    p = np.linspace(0.05, 0.95, 40)
    y = (np.arange(40) % 3 == 0).astype(int)
    assert calibration_error(y, p) == calibration_error(list(y), list(p)) > 0
    assert len(reliability_curve(y, p)) == 15  # the default n_bins, as calibration_error's
    assert skce(y, p, estimator="block") != 0
    assert not skcalib._dask.is_dask_collection(p)
