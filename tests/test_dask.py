"""sketchlab.dask against the in-memory functions: sketches and single-pass SVDs
of dask arrays with dense and sparse chunks, chunked along rows, columns or
both, on the threaded, process and distributed schedulers; each chunk read
once (counted by the chunk loader); bad input rejected before any task runs."""

import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import sketchlab as sl
import sketchlab.dask as sldask

from ._chunks import counted_chunk, counted_matrix, reads
from ._kinds import KINDS, SVD
from ._kinds import make as operator

M, N = 240, 180
CHUNKINGS = {
    "rows": (60, N),
    "cols": (M, 50),
    "grid": ((70, 100, 70), (40, 90, 50)),
}
FORMATS = ["dense", "csr", "csc"]
# the bar: equal to the in-memory result to 1e-10 relative (float64)
TOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-4}
# wall-clock bound of one call on a cluster or a process pool
TIMEOUT = 120


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def matrix(fmt, dtype=np.float64, seed=0):
    """A 240 x 180 test matrix: low rank plus noise (dense), or 5% nonzeros."""
    gen = np.random.default_rng(seed)
    if fmt == "dense":
        X = (gen.standard_normal((M, 12)) * np.geomspace(10, 1, 12)) @ gen.standard_normal((12, N))
        return (X + 0.1 * gen.standard_normal((M, N))).astype(dtype)
    X = sp.random(M, N, density=0.05, format=fmt, random_state=seed, dtype=np.float64)
    X.data -= 0.5
    return X.astype(dtype)


def lazy(X, chunks):
    """X as a dask array whose chunks are slices of X (sparse chunks stay sparse)."""
    return da.from_array(X, chunks=chunks, asarray=False)


def assert_close(got, want, dtype=np.float64):
    """Same shape and dtype, and max |got - want| <= tol * max |want|."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype == np.dtype(dtype)
    scale = np.abs(want).max(initial=0.0)
    assert np.abs(got - want).max(initial=0.0) <= TOL[np.dtype(dtype)] * scale


def assert_same_svd(got, want, dtype=np.float64):
    """Same singular values, and the same singular vectors up to a joint sign
    per pair (LAPACK may flip u_i and v_i together for a tiny perturbation)."""
    (U, s, Vt), (U0, s0, Vt0) = got, want
    assert_close(s, s0, dtype)
    signs = np.where(np.einsum("ij,ij->j", U, U0) < 0, -1, 1).astype(U.dtype)
    assert_close(U * signs, U0, dtype)
    assert_close(Vt * signs[:, None], Vt0, dtype)


def svd_pair(method, A, X, **kw):
    """(dask result, in-memory result) of one SVD method with the same rng."""
    name = {"fast": "fast_sp_svd", "practical": "practical_sp_svd",
            "three": "three_sketch_svd"}[method]
    k = kw.pop("k", 6)
    got = getattr(sldask, name)(A, k, rng=3, **kw)
    kw.pop("scheduler", None)
    return got, getattr(sl, name)(X, k, rng=3, **kw)


def bounded(func, *args, **kwargs):
    """func(*args, **kwargs), failing the test after TIMEOUT seconds."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(func, *args, **kwargs).result(timeout=TIMEOUT)


# ---------------------------------------------------------------------------
# Schedulers: a two-process cluster on loopback and a pool of two processes,
# each started once for the module
# ---------------------------------------------------------------------------


@contextlib.contextmanager
def local_cluster(n_workers, logs=logging.ERROR):
    """A client of a LocalCluster of ``n_workers`` single-threaded worker
    processes on loopback (closed on exit)."""
    with dask.config.set({"distributed.comm.timeouts.connect": "60s"}):
        cluster = distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None, silence_logs=logs,
        )
        client = distributed.Client(cluster, set_as_default=False, timeout="60s")
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="module")
def client():
    with local_cluster(2) as client:
        yield client


@pytest.fixture(scope="module")
def process_pool():
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as pool:
        yield pool


# a pool of processes and a cluster are long-profile work (SKETCHLAB_XSLOW=1)
@pytest.fixture(params=["sync", "threads",
                        pytest.param("processes", marks=pytest.mark.slow),
                        pytest.param("distributed", marks=pytest.mark.slow),
                        pytest.param("address", marks=pytest.mark.slow)])
def scheduler(request):
    """A ``scheduler=`` value for each way of running; the processes scheduler
    uses the module's pool, "address" connects to the cluster by its address."""
    if request.param == "processes":
        pool = request.getfixturevalue("process_pool")
        with dask.config.set(pool=pool):
            yield "processes"
        return
    if request.param == "distributed":
        yield request.getfixturevalue("client")
        return
    if request.param == "address":
        yield request.getfixturevalue("client").scheduler.address
        return
    yield request.param


# ---------------------------------------------------------------------------
# Equality with the in-memory functions
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize(
    "kind", KINDS
)
def test_sketch_matches_in_memory(kind, axis, fmt, chunking):
    X = matrix(fmt)
    S = operator(kind, 20, X.shape[axis], seed=1)
    got = sldask.sketch(S, lazy(X, CHUNKINGS[chunking]), axis=axis)
    assert isinstance(got, np.ndarray)
    assert_close(got, S.apply(X, axis=axis))


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kinds", [("countsketch", "countsketch"), ("osnap", "gaussian"),
                                   ("srht", "uniform"), ("osnap-gaussian", "leverage")])
def test_sketch_both_matches_in_memory(kinds, fmt, chunking):
    X = matrix(fmt)
    S1, S2 = operator(kinds[0], 24, M, seed=1), operator(kinds[1], 16, N, seed=2)
    got = sldask.sketch_both(S1, lazy(X, CHUNKINGS[chunking]), S2)
    assert_close(got, sl.sketch_both(S1, X, S2))


@pytest.mark.parametrize("chunking", CHUNKINGS)
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("method", ["fast", "practical", "three"])
def test_svd_matches_in_memory(method, fmt, chunking):
    X = matrix(fmt)
    got, want = svd_pair(method, lazy(X, CHUNKINGS[chunking]), X)
    assert_same_svd(got, want)


@pytest.mark.parametrize("kind", SVD)
def test_svd_sketch_kinds(kind):
    X = matrix("csr")
    A = lazy(X, CHUNKINGS["grid"])
    for method in ("fast", "three"):
        got, want = svd_pair(method, A, X, range_sketch=kind, core_sketch=kind, c=10, r=12,
                             s_c=40, s_r=36, rank=6)
        assert got[1].shape == (6,)
        assert_same_svd(got, want)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_float32_stays_float32(fmt):
    X = matrix(fmt, np.float32)
    A = lazy(X, CHUNKINGS["grid"])
    assert A.dtype == np.float32
    S = operator("countsketch", 20, M, seed=1)
    assert_close(sldask.sketch(S, A), S @ X, np.float32)
    got, want = svd_pair("fast", A, X)
    assert_same_svd(got, want, np.float32)


def test_other_sparse_chunk_types():
    # sparse array classes, and formats other than CSR/CSC (converted to CSR)
    X = matrix("csr")
    S1, S2 = operator("osnap", 24, M, seed=1), operator("countsketch", 16, N, seed=2)
    coo = lazy(X, CHUNKINGS["grid"]).map_blocks(lambda b: b.tocoo(), dtype=X.dtype,
                                                 meta=sp.coo_matrix((0, 0)))
    for A in (lazy(sp.csr_array(X), CHUNKINGS["grid"]), coo):
        assert_close(sldask.sketch_both(S1, A, S2), sl.sketch_both(S1, X, S2))
        got, want = svd_pair("fast", A, X)
        assert_same_svd(got, want)


def test_chunks_of_another_dtype_follow_the_array_dtype():
    # chunks are cast to the dtype the array declares, as one matrix would be
    X = matrix("dense")
    A = da.from_array(X, chunks=(60, N)).astype(np.int64)
    S = operator("osnap", 20, M, seed=1)
    assert_close(sldask.sketch(S, A), S @ X.astype(np.int64).astype(np.float64))


def test_empty_chunk_and_single_chunk():
    X = matrix("csr")
    S1, S2 = operator("osnap", 20, M, seed=1), operator("gaussian", 10, N, seed=2)
    for chunks in (((100, 0, 140), (60, 0, 120)), (M, N)):
        A = lazy(X, chunks)
        assert_close(sldask.sketch(S1, A), S1 @ X)
        assert_close(sldask.sketch(S2, A, axis=1), S2.apply(X, axis=1))
        assert_close(sldask.sketch_both(S1, A, S2), sl.sketch_both(S1, X, S2))
        got, want = svd_pair("fast", A, X)
        assert_same_svd(got, want)


def test_vector_input():
    x = np.random.default_rng(0).standard_normal(M)
    S = operator("osnap", 20, M, seed=1)
    for axis in (0, 1):
        got = sldask.sketch(S, da.from_array(x, chunks=70), axis=axis)
        assert_close(got, S.apply(x, axis=axis))


def test_non_dask_input_runs_in_memory():
    X = matrix("csr")
    S1, S2 = operator("countsketch", 20, M, seed=1), operator("countsketch", 10, N, seed=2)
    assert np.array_equal(sldask.sketch(S1, X), S1 @ X)
    assert np.array_equal(sldask.sketch(S2, X.toarray(), axis=1), S2.apply(X.toarray(), axis=1))
    assert np.array_equal(sldask.sketch_both(S1, X, S2), sl.sketch_both(S1, X, S2))
    for method in ("fast", "practical", "three"):
        got, want = svd_pair(method, X, X, block_size=50)
        for g, w in zip(got, want):
            assert np.array_equal(g, w)
    blocks = (X[:, j:j + 60] for j in range(0, N, 60))
    got = sldask.fast_sp_svd(blocks, 6, shape=X.shape, rng=3)
    assert_same_svd(got, sl.fast_sp_svd(X, 6, rng=3))


# ---------------------------------------------------------------------------
# Schedulers: the same numbers everywhere
# ---------------------------------------------------------------------------


def run_all(X, A, scheduler):
    """Sketches and SVDs of A on ``scheduler``, in a dict."""
    S0, S1 = operator("countsketch", 24, M, seed=1), operator("osnap", 16, N, seed=2)
    return {
        "sketch0": sldask.sketch(S0, A, axis=0, scheduler=scheduler),
        "sketch1": sldask.sketch(S1, A, axis=1, scheduler=scheduler),
        "both": sldask.sketch_both(S0, A, S1, scheduler=scheduler),
        "fast": sldask.fast_sp_svd(A, 6, rng=3, scheduler=scheduler),
        "three": sldask.three_sketch_svd(A, 6, rng=3, scheduler=scheduler),
    }


@pytest.fixture(scope="module")
def sync_results():
    X = matrix("csr")
    return run_all(X, lazy(X, CHUNKINGS["grid"]), "sync")


def test_schedulers_agree(scheduler, sync_results):
    X = matrix("csr")
    A = lazy(X, CHUNKINGS["grid"])
    got = bounded(run_all, X, A, scheduler)
    S0, S1 = operator("countsketch", 24, M, seed=1), operator("osnap", 16, N, seed=2)
    assert_close(got["sketch0"], S0 @ X)
    assert_close(got["sketch1"], S1.apply(X, axis=1))
    assert_close(got["both"], sl.sketch_both(S0, X, S1))
    assert_same_svd(got["fast"], sl.fast_sp_svd(X, 6, rng=3))
    assert_same_svd(got["three"], sl.three_sketch_svd(X, 6, rng=3))
    # fixed reduction trees and thread-count-independent kernels: the
    # sketches are the same bits on every scheduler (the SVDs too: the same
    # LAPACK calls on the same sketches)
    for key, value in got.items():
        want = sync_results[key]
        for g, w in zip(*((value, want) if key in ("fast", "three") else ((value,), (want,)))):
            np.testing.assert_array_equal(g, w, err_msg=key)


def on_current(client, func, *args, **kwargs):
    # as_current() holds for the calling thread only
    with client.as_current():
        return func(*args, **kwargs)


@pytest.mark.slow  # a cluster or a subprocess
def test_active_client_is_used(client, tmp_path):
    A, X = counted_matrix(tmp_path, ((100, 140), (90, 90)))
    got = bounded(on_current, client, sldask.fast_sp_svd, A, 6, rng=3)
    assert_same_svd(got, sl.fast_sp_svd(X, 6, rng=3))
    workers = set(map(str, client.run(os.getpid).values()))
    pids = {pid for chunk in reads(tmp_path).values() for pid in chunk}
    assert pids and pids <= workers and str(os.getpid()) not in pids


# ---------------------------------------------------------------------------
# One read per chunk
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["fast", "practical", "three"])
def test_each_chunk_read_once(method, scheduler, tmp_path):
    chunks = ((60, 90, 90), (50, 80, 50))
    A, X = counted_matrix(tmp_path, chunks)
    got, want = bounded(svd_pair, method, A, X, scheduler=scheduler)
    assert_same_svd(got, want)
    found = reads(tmp_path)
    counts = {name: len(pids) for name, pids in found.items()}
    assert len(counts) == 9 and set(counts.values()) == {1}, counts
    if scheduler not in ("sync", "threads"):  # read by other processes
        assert str(os.getpid()) not in {pid for pids in found.values() for pid in pids}


@pytest.mark.slow  # a cluster or a subprocess
def test_sketch_both_reads_each_chunk_once(client, tmp_path):
    A, X = counted_matrix(tmp_path, ((120, 120), (60, 60, 60)), fmt="dense")
    S1, S2 = operator("countsketch", 24, M, seed=1), operator("countsketch", 16, N, seed=2)
    got = bounded(sldask.sketch_both, S1, A, S2, scheduler=client)
    assert_close(got, sl.sketch_both(S1, X, S2))
    assert sorted(len(pids) for pids in reads(tmp_path).values()) == [1] * 6


# ---------------------------------------------------------------------------
# Bad input: rejected before any chunk is read
# ---------------------------------------------------------------------------


def test_bad_input_before_any_task(tmp_path):
    A, _ = counted_matrix(tmp_path, ((60,) * 4, (90, 90)))
    S = operator("countsketch", 20, M, seed=1)
    with pytest.raises(ValueError, match=r"A.shape\[1\] must equal S.input_dim = 240, got A of"):
        sldask.sketch(S, A, axis=1)
    with pytest.raises(ValueError, match=r"A.shape must be \(S1.input_dim, S2.input_dim\)"):
        sldask.sketch_both(S, A, S)
    with pytest.raises(TypeError, match="S must be a SketchOperator, got ndarray"):
        sldask.sketch(np.eye(M), A)
    with pytest.raises(TypeError, match="S2 must be a SketchOperator"):
        sldask.sketch_both(S, A, None)
    with pytest.raises(ValueError, match="axis must be 0 or 1, got 2"):
        sldask.sketch(S, A, axis=2)
    with pytest.raises(ValueError, match="k must be an int in"):
        sldask.fast_sp_svd(A, N + 1)
    with pytest.raises(ValueError, match=r"s_c must be an int in \[c, m\]"):
        sldask.three_sketch_svd(A, 4, c=10, s_c=5)
    with pytest.raises(ValueError, match="range_sketch must be one of"):
        sldask.practical_sp_svd(A, 4, range_sketch="nope")
    with pytest.raises(ValueError, match="block_size applies to an in-memory A"):
        sldask.fast_sp_svd(A, 4, block_size=10)
    with pytest.raises(ValueError, match=r"does not match A.shape=\(240, 180\)"):
        sldask.fast_sp_svd(A, 4, shape=(240, 181))
    with pytest.raises(ValueError, match="rank must be an int in"):
        sldask.fast_sp_svd(A, 4, rank=100)
    with pytest.raises(ValueError, match="must be 2-D"):
        sldask.fast_sp_svd(A[None], 4)
    with pytest.raises(TypeError, match="real numeric dtype"):
        sldask.sketch(S, A.astype(np.complex128))
    assert reads(tmp_path) == {}


def test_unknown_chunk_sizes():
    x = da.from_array(np.arange(1.0, 241.0), chunks=60)
    A = da.stack([x, x], axis=1)
    A = A[A[:, 0] > 100]  # rows depend on the data
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        sldask.sketch(operator("countsketch", 20, 140, seed=1), A)


def nan_chunk(block_info=None):
    (i0, i1), (j0, j1) = block_info[None]["array-location"]
    X = np.ones((i1 - i0, j1 - j0))
    if i0 > 0 and j0 > 0:
        X[0, 0] = np.nan
    return X


def short_chunk(block_info=None):
    (i0, i1), (j0, j1) = block_info[None]["array-location"]
    return np.ones((i1 - i0 - (i0 > 0), j1 - j0))


@pytest.mark.slow  # a cluster or a subprocess
def test_bad_chunks_raise_from_their_task(client):
    A = da.map_blocks(nan_chunk, chunks=((100, 140), (90, 90)), dtype=np.float64)
    with pytest.raises(ValueError, match=r"A chunk \(1, 1\) must not contain NaN or Inf"):
        bounded(sldask.fast_sp_svd, A, 4, scheduler=client)
    B = da.map_blocks(short_chunk, chunks=((100, 140), (180,)), dtype=np.float64)
    S = operator("countsketch", 20, M, seed=1)
    with pytest.raises(ValueError, match=r"A chunk \(1, 0\) has shape \(139, 180\), but the "
                                         r"chunks of A say \(140, 180\)"):
        sldask.sketch(S, B, scheduler="sync")


# ---------------------------------------------------------------------------
# Numba's workqueue threading layer
# ---------------------------------------------------------------------------


@pytest.mark.slow  # a cluster or a subprocess
def test_threaded_scheduler_on_the_workqueue_layer():
    # the workqueue layer aborts the process when two threads launch parallel
    # kernels at once; tasks serialize their kernels on it
    script = textwrap.dedent("""
        import dask, numba, numpy as np, dask.array as da, sketchlab, sketchlab.dask
        X = np.random.default_rng(0).standard_normal((40000, 40))
        A = da.from_array(X, chunks=(2500, 40))
        S = sketchlab.CountSketch(30, 40000, rng=0)
        with dask.config.set(num_workers=4):
            for _ in range(5):
                got = sketchlab.dask.sketch(S, A, scheduler="threads")
        assert numba.threading_layer() == "workqueue", numba.threading_layer()
        assert np.allclose(got, S @ X)
    """)
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("select", ["approx-leverage", "uniform", "deim", "pivoted-qr"])
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_cur_equals_the_in_memory_decomposition(select, fmt):
    gen = np.random.default_rng(0)
    X = gen.standard_normal((300, 5)) @ gen.standard_normal((5, 200))
    X += 0.01 * gen.standard_normal(X.shape)
    Xf = X if fmt == "dense" else sp.csr_matrix(X)
    A = da.from_array(Xf, chunks=(100, 80), asarray=False)
    got = sldask.cur(A, 10, select=select, rng=1, scheduler="sync", estimate_error=True)
    want = sl.cur(Xf, 10, select=select, rng=1, estimate_error=True)
    np.testing.assert_array_equal(got.columns, want.columns)
    np.testing.assert_array_equal(got.rows, want.rows)
    np.testing.assert_allclose(got.U, want.U, rtol=1e-10, atol=1e-12 * np.abs(want.U).max())
    assert got.error_estimate.value == pytest.approx(want.error_estimate.value, rel=1e-10)
    cross = sldask.cur(A, 10, select=select, core="cross", rng=1, scheduler="sync")
    np.testing.assert_allclose(cross.toarray(), sl.cur(Xf, 10, select=select, core="cross",
                                                       rng=1).toarray(), rtol=1e-9, atol=1e-9)


def test_cur_rejects_what_needs_more_passes():
    A = da.ones((40, 30), chunks=(20, 15))
    with pytest.raises(ValueError, match="select='leverage'"):
        sldask.cur(A, 5, select="leverage", scheduler="sync")
    with pytest.raises(ValueError, match="core='exact'"):
        sldask.cur(A, 5, core="exact", scheduler="sync")


@pytest.mark.slow  # starts a two-process cluster
def test_module_example_on_a_cluster():
    # the module docstring's example as written, with the lines the default
    # doctest run skips (the cluster) run too
    import doctest

    test = doctest.DocTestParser().get_doctest(sldask.__doc__, {}, "sketchlab.dask", None, 0)
    for example in test.examples:
        example.options.pop(doctest.SKIP, None)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert sum("LocalCluster(" in e.source for e in test.examples) == 1
# ---------------------------------------------------------------------------
# A pass survives the loss of a worker
# ---------------------------------------------------------------------------


def dying_chunk(counter_dir, kill_after, block_info=None):
    """``counted_chunk`` (dense), slowed down, whose read kills its own worker
    process once, when ``kill_after`` chunks have been read: the first read
    to remove the ticket file "kill" dies (os._exit), in the middle of the
    pass; its task and what the dead worker held run again elsewhere."""
    import time

    counter_dir = Path(counter_dir)
    done = sum(1 for p in counter_dir.iterdir() if p.name != "kill")
    if done >= kill_after:
        try:
            (counter_dir / "kill").unlink()
        except FileNotFoundError:
            pass
        else:
            os._exit(1)
    if (counter_dir / "kill").exists():  # slowed down until the kill: it lands mid-pass
        time.sleep(0.05)
    return counted_chunk(counter_dir, "dense", 7, block_info)


@pytest.mark.slow
def test_fast_sp_svd_survives_the_loss_of_a_worker(tmp_path):
    """Kill one of a LocalCluster's workers in the middle of
    ``sketchlab.dask.fast_sp_svd``: the result is the same, bit for bit, as
    without the fault (the same tasks give the same partial sketches, summed
    in the same fixed trees), and equals the in-memory one to rounding."""
    chunks = ((60,) * 4, (45,) * 4)  # 16 chunks
    _, X = counted_matrix(tmp_path / "unused", chunks, fmt="dense")

    def run(client, folder, kill_after):
        folder.mkdir()
        if kill_after is not None:
            (folder / "kill").touch()
        A = da.map_blocks(dying_chunk, chunks=chunks, dtype=np.float64,
                          meta=np.empty((0, 0)), counter_dir=str(folder),
                          kill_after=kill_after if kill_after is not None else 10**9)
        res = sldask.fast_sp_svd(A, 6, rng=3, estimate_error=True, scheduler=client)
        return res, folder

    with local_cluster(3, logging.CRITICAL) as client:
        clean, _ = bounded(run, client, tmp_path / "clean", None)
        faulty, folder = bounded(run, client, tmp_path / "faulty", 6)
    assert not (folder / "kill").exists()  # a worker did die, after 6 chunks
    assert len(reads(folder)) == 16
    for got, want in zip(faulty, clean):
        assert np.array_equal(got, want)
    assert faulty.error_estimate == clean.error_estimate
    assert_same_svd(faulty, sl.fast_sp_svd(X, 6, rng=3))


# ---------------------------------------------------------------------------
# Least squares and ridge regression: the in-memory answers, a pass per product
# ---------------------------------------------------------------------------

SOLVER_CHUNKS = {
    "rows": ((60,) * 4, (N,)),
    "grid": ((70, 100, 70), (40, 90, 50)),
}


def decaying_columns(X):
    """X (in memory) with column j scaled by 1 / (j + 1) (an ill-conditioned
    problem)."""
    scale = 1.0 / np.arange(1, X.shape[1] + 1)
    return X * scale if not sp.issparse(X) else (X @ sp.diags(scale)).asformat(X.format)


@pytest.mark.parametrize("chunking", sorted(SOLVER_CHUNKS))
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_lstsq_matches_in_memory(fmt, chunking, tmp_path):
    A, X = counted_matrix(tmp_path, SOLVER_CHUNKS[chunking], fmt=fmt)
    b = np.random.default_rng(1).standard_normal((M, 2))
    for method in ("fossils", "spir", "blendenpik"):
        got = sldask.lstsq(A, b, method=method, sketch_size=6 * N, rng=3, scheduler="sync")
        want = sl.lstsq(X, b, method=method, sketch_size=6 * N, rng=3)
        assert_close(got.x, want.x)
        assert got.converged == want.converged and got.rank == want.rank
        assert got.backward_error <= max(10 * want.backward_error, 1e-15)
    # damping, one right-hand side
    got = sldask.lstsq(A, b[:, 0], damp=0.5, sketch_size=6 * N, rng=3, scheduler="sync")
    assert_close(got.x, sl.lstsq(X, b[:, 0], damp=0.5, sketch_size=6 * N, rng=3).x)


@pytest.mark.parametrize("chunking", sorted(SOLVER_CHUNKS))
@pytest.mark.parametrize("fmt", ["dense", "csr"])
def test_ridge_matches_in_memory(fmt, chunking, tmp_path):
    _, X = counted_matrix(tmp_path, SOLVER_CHUNKS[chunking], fmt=fmt)
    X = decaying_columns(X)
    A = lazy(X, SOLVER_CHUNKS[chunking])
    b = np.random.default_rng(2).standard_normal(M)
    for method, alpha in [("nystrom-pcg", 1e-4), ("nystrom-pcg", [1e-4, 1e-2, 1.0]),
                          ("cg", 1e-2), ("direct", 1e-3)]:
        got = sldask.ridge(A, b, alpha, method=method, tol=1e-13, rng=3, scheduler="sync")
        want = sl.ridge(X, b, alpha, method=method, tol=1e-13, rng=3)
        assert_close(got.x, want.x)
        assert got.rank == want.rank and got.method == want.method


def test_each_step_reads_each_chunk_once(tmp_path):
    """The sketch is one pass, and so is each product ``A^T A z`` (a graph of
    two stages): every chunk read as many times as the map made passes."""
    A, X = counted_matrix(tmp_path, SOLVER_CHUNKS["grid"], fmt="csr")
    b = np.random.default_rng(3).standard_normal(M)
    ops = sldask.chunk_map(A, "threads")
    with pytest.warns(sl.ConvergenceWarning):
        res = sl._ridge.ridge_on_map(ops, b, 1e-2, method="cg", tol=1e-12, maxiter=7)
    counts = {name: len(pids) for name, pids in reads(tmp_path).items()}
    assert len(counts) == 9 and set(counts.values()) == {ops.count}, (counts, ops.count)
    # A^T b, a probe of A's scale, 7 steps, the final residual
    assert ops.count == res.iterations + 3 and res.iterations == 7


def test_solver_fronts_check_before_any_task(tmp_path):
    A, _ = counted_matrix(tmp_path, SOLVER_CHUNKS["rows"])
    b = np.ones(M)
    with pytest.raises(ValueError, match="b must have 240 rows"):
        sldask.lstsq(A, b[:-1])
    with pytest.raises(ValueError, match="alpha must be finite and >= 0"):
        sldask.ridge(A, b, -1.0)
    with pytest.raises(ValueError, match="method"):
        sldask.ridge(A, b, 1.0, method="lsqr")
    with pytest.raises(ValueError, match="must be tall"):
        sldask.lstsq(A.T, np.ones(N))
    with pytest.raises(ValueError, match="b must have 240 rows"):
        sldask.ridge(A, b[:-1], 1.0)
    assert reads(tmp_path) == {}
    # not a dask array: the in-memory function
    X = np.random.default_rng(0).standard_normal((50, 5))
    np.testing.assert_array_equal(sldask.ridge(X, np.ones(50), 1.0, rng=0).x,
                                  sl.ridge(X, np.ones(50), 1.0, rng=0).x)


@pytest.mark.slow  # a cluster
def test_persisted_arrays_under_a_client(client):
    """The chunks of a persisted array are keys outside the graph of a pass
    (their data on the workers): the tasks read the data, not the keys."""
    X = matrix("dense")
    b = np.random.default_rng(4).standard_normal(M)
    A = client.persist(da.from_array(X, chunks=(60, 90)))
    S = operator("countsketch", 30, M, seed=1)
    assert_close(bounded(sldask.sketch, S, A, scheduler=client), S @ X)
    got = bounded(sldask.krylov_svd, A, 4, passes=4, rng=0, scheduler=client)
    assert_same_svd(got, sl.krylov_svd(X, 4, passes=4, rng=0))
    got = bounded(sldask.lstsq, A, b, sketch_size=6 * N, rng=3, scheduler=client)
    assert_close(got.x, sl.lstsq(X, b, sketch_size=6 * N, rng=3).x)
    got = bounded(sldask.ridge, A, b, [1e-2, 1.0], tol=1e-13, rng=3, scheduler=client)
    assert_close(got.x, sl.ridge(X, b, [1e-2, 1.0], tol=1e-13, rng=3).x)
    Xs = matrix("csr")
    As = client.persist(da.from_array(Xs, chunks=(60, 90), asarray=False))
    got = bounded(sldask.ridge, As, b, 1e-2, tol=1e-13, rng=3, scheduler=client)
    assert_close(got.x, sl.ridge(Xs, b, 1e-2, tol=1e-13, rng=3).x)


@pytest.mark.slow
def test_solvers_survive_the_loss_of_a_worker(tmp_path):
    """Kill one of a LocalCluster's workers in the middle of the first pass of
    ``lstsq`` and of ``ridge``: the same answer, bit for bit, as without the
    fault on the same cluster (not the synchronous scheduler's: a worker's
    BLAS may round a dense chunk's product differently), and the in-memory
    answer to rounding."""
    chunks = ((60,) * 4, (90, 90))
    _, X = counted_matrix(tmp_path / "unused", chunks, fmt="dense")
    b = np.random.default_rng(5).standard_normal(M)
    solvers = {"lstsq": (sldask.lstsq, sl.lstsq, dict(sketch_size=6 * N, rng=3)),
               "ridge": (sldask.ridge, sl.ridge, dict(alpha=[1e-3, 1.0], tol=1e-12, rng=3))}

    def run(solver, scheduler, folder, kill_after):
        folder.mkdir()
        if kill_after is not None:
            (folder / "kill").touch()
        A = da.map_blocks(dying_chunk, chunks=chunks, dtype=np.float64,
                          meta=np.empty((0, 0)), counter_dir=str(folder),
                          kill_after=kill_after if kill_after is not None else 10**9)
        front, _, kwargs = solvers[solver]
        return front(A, b, scheduler=scheduler, **kwargs), folder

    with local_cluster(3, logging.CRITICAL) as client:
        runs = {name: (bounded(run, name, client, tmp_path / f"clean-{name}", None)[0],
                       *bounded(run, name, client, tmp_path / f"faulty-{name}", 4))
                for name in solvers}
    for name, (clean, got, folder) in runs.items():
        assert not (folder / "kill").exists(), name  # a worker did die, after 4 chunk reads
        assert np.array_equal(got.x, clean.x), name
        _, in_memory, kwargs = solvers[name]
        assert_close(got.x, in_memory(X, b, **kwargs).x)
