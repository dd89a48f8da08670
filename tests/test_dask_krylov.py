"""sketchlab.dask.krylov_svd against the in-memory krylov_svd: dense and
sparse chunks along rows, columns or both, k, tol and fixed passes; each
pass reads each chunk once (counted by the chunk loader of tests/_chunks.py)."""

import importlib.util

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import sketchlab as sl
import sketchlab.dask as sldask

from ._chunks import counted_matrix, reads

CHUNKS = {
    "rows": ((60, 90, 90), (180,)),
    "cols": ((240,), (50, 80, 50)),
    "both": ((60, 90, 90), (50, 80, 50)),
}


def assert_same(got, want):
    assert got.passes == want.passes
    assert got.s.shape == want.s.shape
    np.testing.assert_allclose(got.s, want.s, rtol=1e-10, atol=1e-10 * want.s[0])
    for a, b in ((got.U, want.U), (got.Vt, want.Vt)):
        np.testing.assert_allclose(a, b, atol=1e-10)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("chunking", sorted(CHUNKS))
@pytest.mark.parametrize("kwargs", [dict(k=5, passes=6), dict(k=4), dict(tol=0.5)],
                         ids=["passes", "k", "tol"])
def test_same_as_in_memory(fmt, chunking, kwargs, tmp_path):
    A, X = counted_matrix(tmp_path, CHUNKS[chunking], fmt=fmt)
    got = sldask.krylov_svd(A, rng=3, estimate_error=True, scheduler="sync", **kwargs)
    want = sl.krylov_svd(X, rng=3, estimate_error=True, **kwargs)
    assert_same(got, want)
    assert got.error_estimate.value == pytest.approx(want.error_estimate.value, rel=1e-9)


def test_each_pass_reads_each_chunk_once(tmp_path):
    A, X = counted_matrix(tmp_path, CHUNKS["both"])
    got = sldask.krylov_svd(A, 3, passes=5, rng=0, scheduler="threads")
    assert got.passes == 5
    counts = {name: len(pids) for name, pids in reads(tmp_path).items()}
    assert len(counts) == 9 and set(counts.values()) == {5}, counts


def test_float32_chunks_and_in_memory_input():
    X = np.random.default_rng(0).standard_normal((120, 40)).astype(np.float32)
    got = sldask.krylov_svd(da.from_array(X, chunks=(50, 20)), 3, rng=1, scheduler="sync")
    assert got.s.dtype == np.float32
    want = sl.krylov_svd(X, 3, rng=1)
    np.testing.assert_allclose(got.s, want.s, rtol=1e-4)
    same = sldask.krylov_svd(X, 3, rng=1)  # not a dask array: in memory
    np.testing.assert_array_equal(same.s, want.s)


@pytest.mark.parametrize("kwargs, match", [
    (dict(), "give k"),
    (dict(k=0), "k must be"),
    (dict(k=3, block_size=0), "block_size must be"),
    (dict(k=3, tol=2.0), "tol must be"),
])
def test_bad_parameters_before_any_task(kwargs, match, tmp_path):
    A, _ = counted_matrix(tmp_path, CHUNKS["both"])
    with pytest.raises(ValueError, match=match):
        sldask.krylov_svd(A, **kwargs)
    assert reads(tmp_path) == {}


# ---------------------------------------------------------------------------
# eigsh over the chunks
# ---------------------------------------------------------------------------


def symmetric_chunks(fmt, chunks, seed=1):
    import scipy.sparse as sp

    gen = np.random.default_rng(seed)
    B = sp.random(240, 240, density=0.05, format="csr", random_state=gen)
    X = (B + B.T).tocsr()
    if fmt == "dense":
        X = X.toarray()
    return da.from_array(X, chunks=chunks, asarray=False), X


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("chunks", [(60, 240), (80, 120)], ids=["rows", "both"])
@pytest.mark.parametrize("kwargs", [dict(k=4), dict(k=3, which="SA", passes=20),
                                    dict(tol=0.3, which="LA")], ids=["k", "passes", "tol"])
def test_eigsh_same_as_in_memory(fmt, chunks, kwargs):
    A, X = symmetric_chunks(fmt, chunks)
    got = sldask.eigsh(A, rng=2, scheduler="sync", **kwargs)
    want = sl.eigsh(X, rng=2, **kwargs)
    assert got.passes == want.passes and got.extraction == want.extraction
    np.testing.assert_allclose(got.w, want.w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got.V, want.V, atol=1e-8)
    np.testing.assert_allclose(got.residuals, want.residuals, rtol=1e-6, atol=1e-12)


def test_eigsh_each_pass_reads_each_chunk_once(tmp_path):
    A, X = counted_matrix(tmp_path, ((60, 90, 90), (60, 90, 90)), fmt="dense")
    A = (A + A.T) / 2  # symmetric: its chunks read through the counted loader
    got = sldask.eigsh(A, 3, passes=4, block_size=4, rng=0, scheduler="sync")
    assert got.passes == 4
    counts = {name: len(pids) for name, pids in reads(tmp_path).items()}
    # one read of each chunk per pass (the loads shared by A and A.T in a pass);
    # dask before task_spec (2024.12) inlines from_array's loader into each use,
    # and a diagonal block of A + A.T uses its chunk twice
    old_dask = importlib.util.find_spec("dask.task_spec") is None
    want = {name: 8 if old_dask and name.split("-")[0] == name.split("-")[1] else 4
            for name in counts}
    assert len(counts) == 9 and counts == want, counts


def test_eigsh_nonsymmetric_chunks_are_refused():
    X = np.triu(np.random.default_rng(0).standard_normal((100, 100)))
    with pytest.raises(ValueError, match="symmetric"):
        sldask.eigsh(da.from_array(X, chunks=(50, 100)), 2, rng=0, scheduler="sync")
