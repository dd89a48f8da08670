"""The engine (sketchlab._engine) against numpy and scipy: the products of
the iterative solvers, the counting-sort transpose, the BLAS calls in fixed
row chunks and page faulting; each the same for one thread and two.  (The
operators' loops are tested in test_operators.py, the kernel blocks in
test_rbf.py, the input checks in test_entry_check.py.)"""

import math

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from sketchlab._engine.products import CSRNormal, csr_times_dense, csr_transpose
from sketchlab._engine.reductions import frobenius_parts, largest_magnitude, squared_frobenius
from sketchlab._engine.threads import fault_in, tall_mul, tall_tmul


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("k", [1, 3])
def test_csr_normal_against_dense(dtype, k):
    rng = np.random.default_rng(40)
    dense = rng.standard_normal((9000, 37)).astype(dtype)
    dense[rng.random(dense.shape) < 0.7] = 0  # empty rows and sparse rows
    dense[100:200] = 0
    A = sp.csr_matrix(dense)
    normal = CSRNormal(A)
    Z = rng.standard_normal((37, k)).astype(dtype)
    ref = dense.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    before = numba.get_num_threads()
    got = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            got.append(normal(Z))
            want = ref.T @ (ref @ Z)
            assert got[-1].dtype == dtype and got[-1].shape == want.shape
            assert np.abs(got[-1] - want).max() <= tol * np.abs(want).max()
            assert np.abs(csr_times_dense(A, Z) - ref @ Z).max() <= tol * np.abs(ref @ Z).max()
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(got[0], got[1])


@pytest.mark.parametrize("shape, density", [((9000, 37), 0.3), ((40, 300000), 1e-3),
                                            ((5, 7), 0.3), ((0, 4), 0.5), ((6, 0), 0.5)])
def test_csr_transpose_is_scipys(shape, density):
    """The parallel counting-sort transpose gives the canonical CSR of X^T,
    the same arrays as scipy's, for one and two threads; from rows with
    unsorted column indices too."""
    X = sp.random(*shape, density=density, format="csr", random_state=41)
    ref = X.T.tocsr()
    before = numba.get_num_threads()
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            T = csr_transpose(X)
            assert T.shape == ref.shape and T.has_sorted_indices
            for name in ("indptr", "indices", "data"):
                assert np.array_equal(getattr(T, name), getattr(ref, name))
    finally:
        numba.set_num_threads(before)
    if X.nnz > 1:  # a row's entries reversed: the same matrix
        Y = X.copy()
        row = int(np.argmax(np.diff(Y.indptr)))
        lo, hi = Y.indptr[row], Y.indptr[row + 1]
        Y.indices[lo:hi] = Y.indices[lo:hi][::-1].copy()
        Y.data[lo:hi] = Y.data[lo:hi][::-1].copy()
        Y.has_sorted_indices = False
        assert np.array_equal(csr_transpose(Y).toarray(), X.T.toarray())


@pytest.mark.parametrize("rows", [3000, (1 << 21) + 700])  # serial / on all threads
def test_fault_in_writes_one_entry_per_page(rows):
    a = np.ones((rows, 4), order="F")
    fault_in(a[:, 1:3])
    flat = a[:, 1:3].reshape(-1, order="F")
    assert np.count_nonzero(flat == 0) == -(-flat.size // 512)
    assert flat[::512].max() == 0
    assert (a[:, [0, 3]] == 1).all()
    fault_in(a[::2])  # not contiguous: left as it is
    assert np.count_nonzero(a == 0) == -(-flat.size // 512)


@pytest.mark.parametrize("rows_per_chunk", [7, 2048])
def test_tall_products_in_chunks(rows_per_chunk):
    """tall_mul and tall_tmul: the products to rounding, the same bits for
    one thread and two."""
    rng = np.random.default_rng(9)
    Q = np.asfortranarray(rng.standard_normal((5000, 40)))
    M, Y = rng.standard_normal((40, 6)), rng.standard_normal((5000, 6))
    before = numba.get_num_threads()
    got = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            got.append((tall_mul(Q, M, rows_per_chunk),
                        tall_tmul(Q, Y, rows_per_chunk)))
    finally:
        numba.set_num_threads(before)
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(got[0][0], Q @ M, rtol=1e-13, atol=1e-12)
    np.testing.assert_allclose(got[0][1], Q.T @ Y, rtol=1e-13, atol=1e-11)


@pytest.mark.parametrize("scale", [1.0, 1e-200, 1e200])
def test_reductions_of_any_scale(scale):
    A = np.random.default_rng(3).standard_normal((300, 40)) * scale
    S = sp.csr_matrix(np.where(np.abs(A) > scale, A, 0.0))
    for M, dense in ((A, A), (S, S.toarray())):
        e, ssq = frobenius_parts(M)  # ||M||_F^2 = 2**(2 e) ssq, whatever the scale
        np.testing.assert_allclose(math.ldexp(ssq, 2 * e) / scale / scale if scale == 1.0
                                   else ssq * (2.0 ** e / scale) ** 2,
                                   np.sum((dense / scale) ** 2), rtol=1e-12)
        if scale == 1.0:
            np.testing.assert_allclose(squared_frobenius(M), np.sum(dense ** 2), rtol=1e-12)
        assert largest_magnitude(M) == np.abs(dense).max()
    assert largest_magnitude(np.zeros((0, 3))) == 0.0


def test_the_workspace_recycles_and_releases():
    from sketchlab._engine import workspace

    workspace.release()
    A, recycled = workspace.take((1000, 30), np.float64)
    assert not recycled and A.flags.f_contiguous and A.shape == (1000, 30)
    A[...] = 1.0
    workspace.give(A)
    assert workspace.held_bytes() >= 240_000
    B, recycled = workspace.take((500, 20), np.float32)  # smaller: the same memory
    assert recycled and B.shape == (500, 20) and B.dtype == np.float32
    assert np.shares_memory(A, B)
    workspace.give(B)
    assert workspace.release() >= 240_000 and workspace.held_bytes() == 0


def test_a_repeated_krylov_call_allocates_no_new_basis(monkeypatch):
    import sketchlab as sl
    from sketchlab._engine import workspace

    A = np.random.default_rng(0).standard_normal((2000, 300))
    sl.release_workspace()
    first = sl.krylov_svd(A, 5, rng=0)
    held = workspace.held_bytes()
    assert held > 0
    fresh = []
    real_take = workspace.take

    def counting_take(shape, dtype):
        out, recycled = real_take(shape, dtype)
        fresh.append(not recycled)
        return out, recycled

    monkeypatch.setattr(workspace, "take", counting_take)
    again = sl.krylov_svd(A, 5, rng=0)
    assert fresh and not any(fresh)  # every basis buffer came from the workspace
    np.testing.assert_array_equal(again.s, first.s)
    assert workspace.held_bytes() == held
    assert sl.release_workspace() == held


@pytest.mark.kernels
def test_chunked_products_have_the_same_bits_for_1_2_and_4_threads():
    """The products with a tall matrix in fixed row chunks (the Krylov bases',
    a dense A's, the kernel ridge factor's): the same bits whatever the
    number of threads (4 on a 2-core machine: oversubscribed, still the same
    chunks), in a fresh interpreter that allows 4."""
    from ._support import run_isolated

    code, out, err = run_isolated("""
        import hashlib, numba, numpy as np
        from sketchlab._config import serial_blas
        from sketchlab._engine.threads import sub_mul, tall_mul, tall_tmul
        gen = np.random.default_rng(5)
        B = np.asfortranarray(gen.standard_normal((30000, 60)))
        Y = np.asfortranarray(gen.standard_normal((30000, 7)))
        D = gen.standard_normal((60, 7))
        M = gen.standard_normal((60, 9))
        digests = []
        for threads in (1, 2, 4):
            numba.set_num_threads(threads)
            with serial_blas():
                Z = Y.copy(order="F")
                sub_mul(Z, B, D)
                parts = (tall_mul(B, M), tall_tmul(B, Y), Z)
            digests.append(hashlib.sha256(b"".join(np.ascontiguousarray(p).tobytes()
                                                   for p in parts)).hexdigest())
        print(len(set(digests)), numba.get_num_threads())
    """, env={"NUMBA_NUM_THREADS": "4"})
    assert code == 0, err[-2000:]
    assert out.split() == ["1", "4"]
