"""Every sketching operator against its dense reference, on every input form.

kind x {dense C/F, csr, csc, unsorted csr with duplicates, empty rows, sparse
array classes, int64 indices} x {float32, float64} x {left, right, two-sided,
block}.
"""

import pickle
import time

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import sketchlab as sl

from ._kinds import ALL, ONE_PASS, SIZED, make
from ._support import random_matrix, run_isolated, unsorted_duplicates
from .reference import dense_of, leverage_dense

SCORES = np.abs(np.random.default_rng(7).standard_normal(23)) + np.r_[np.zeros(3), np.ones(20)]


KINDS = list(ALL)  # every registered kind and its variants (tests/_kinds.py)


def forms(A):
    """The input forms of one matrix: name -> (object, dense equivalent)."""
    D = A.toarray()
    csr = A.tocsr()
    unsorted = unsorted_duplicates(csr)
    out = {
        "dense_c": np.ascontiguousarray(D),
        "dense_f": np.asfortranarray(D),
        "csr": csr,
        "csc": A.tocsc(),
        "csr_unsorted_dup": unsorted,
        "csr_array": sp.csr_array(csr),
        "csc_array_int64": _int64(sp.csc_array(A.tocsc())),
    }
    return out, D


def _int64(M):
    M.indices = M.indices.astype(np.int64)
    M.indptr = M.indptr.astype(np.int64)
    return M


def random_sparse(m, n, density, seed, dtype, empty_rows=True):
    A = sp.random(m, n, density=density, format="csr", random_state=seed, dtype=np.float64)
    A = A.tolil()
    if empty_rows and m > 3:
        A[1, :] = 0  # empty rows and an empty column
        A[m - 2, :] = 0
        A[:, 0] = 0
    return A.tocsr().astype(dtype)


def tol(dtype):
    return dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("kind", KINDS)
def test_toarray_matches_reference(kind):
    S = make(kind, 7, 23, seed=3)
    np.testing.assert_allclose(S.toarray(), dense_of(S), rtol=1e-12, atol=1e-12)
    assert S.shape == (7, 23)


@pytest.fixture(params=["default", "many-chunks", "no-streaming"])
def kernel_regime(request, monkeypatch):
    """Drive every kernel path on small inputs: the streaming kernels with one
    chunk (default for small work), with many chunks, and the kernels that
    own output rows (used when chunk buffers would be too large)."""
    from sketchlab._engine import operators

    if request.param == "many-chunks":
        monkeypatch.setattr(operators, "_MIN_CHUNK_NNZ", 7)
    elif request.param == "no-streaming":
        monkeypatch.setattr(operators, "_MAX_CHUNK_BYTES", 0)
    return request.param


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_left_right_both_every_form(kind, dtype, kernel_regime):
    m, n = 23, 19
    S1 = make(kind, 7, m, seed=11)
    S2 = make(kind, 5, n, seed=12)
    D1, D2 = dense_of(S1), dense_of(S2)
    A = random_sparse(m, n, 0.3, seed=1, dtype=dtype)
    inputs, D = forms(A)
    for name, X in inputs.items():
        left = S1 @ X
        assert left.dtype == dtype, name
        np.testing.assert_allclose(left, D1 @ D, **tol(dtype), err_msg=name)
        right = S2.apply(X, axis=1)
        assert right.dtype == dtype, name
        np.testing.assert_allclose(right, D @ D2.T, **tol(dtype), err_msg=name)
        both = sl.sketch_both(S1, X, S2)
        assert both.dtype == dtype and both.shape == (7, 5), name
        np.testing.assert_allclose(both, D1 @ D @ D2.T, **tol(dtype), err_msg=name)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("axis", [0, 1])
def test_blocks_sum_to_full(kind, axis, kernel_regime):
    m, n = 29, 17
    d = m if axis == 0 else n
    S = make(kind, 6, d, seed=5)
    D = dense_of(S)
    A = random_sparse(m, n, 0.4, seed=2, dtype=np.float64)
    for X in (A, A.tocsc(), A.toarray(), np.asfortranarray(A.toarray())):
        total = 0
        for lo, hi in [(0, 4), (4, 5), (5, d - 3), (d - 3, d)]:
            block = X[lo:hi] if axis == 0 else X[:, lo:hi]
            part = S.apply(block, axis=axis, offset=lo)
            ref = D[:, lo:hi] @ A.toarray()[lo:hi] if axis == 0 else A.toarray()[:, lo:hi] @ D[:, lo:hi].T
            np.testing.assert_allclose(part, ref, rtol=1e-10, atol=1e-12)
            total = total + part
        np.testing.assert_allclose(total, S.apply(X, axis=axis), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ONE_PASS)  # the hashing and sampling kinds
def test_hashing_and_sampling_blocks_are_bitwise_exact(kind):
    # the tables of a block are exactly the corresponding columns of the full tables
    S = make(kind, 8, 40, seed=9)
    X = random_sparse(40, 6, 0.5, seed=4, dtype=np.float64, empty_rows=False)
    full = S @ X.toarray()
    parts = [S.apply(X[lo:hi].toarray(), offset=lo) for lo, hi in [(0, 13), (13, 40)]]
    np.testing.assert_array_equal(S._columns(13, 40).T, S.toarray()[:, 13:])
    np.testing.assert_allclose(parts[0] + parts[1], full, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("kind", ONE_PASS)  # the hashing and sampling kinds
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_right_csc_in_place(kind, dtype):
    # the single-pass SVDs add A_block S_block^T into an F-ordered C in place
    S = make(kind, 6, 30, seed=3)
    A = random_sparse(25, 11, 0.4, seed=8, dtype=dtype).tocsc()
    out = np.asfortranarray(np.random.default_rng(1).standard_normal((25, 6)).astype(dtype))
    expected = out + A.toarray() @ dense_of(S)[:, 7:18].T
    before = out.__array_interface__["data"][0]
    result = S.apply(A, axis=1, offset=7, out=out, accumulate=True)
    assert result is out
    assert out.__array_interface__["data"][0] == before and out.dtype == dtype
    np.testing.assert_allclose(out, expected, **tol(dtype))


@pytest.mark.parametrize("kind", KINDS)
def test_two_sided_blocks(kind, kernel_regime):
    m, n = 21, 18
    S1, S2 = make(kind, 5, m, seed=1), make(kind, 4, n, seed=2)
    A = random_sparse(m, n, 0.4, seed=3, dtype=np.float64)
    D = A.toarray()
    total = np.zeros((5, 4))
    for i0, i1 in [(0, 8), (8, m)]:
        for j0, j1 in [(0, 11), (11, n)]:
            total += sl.sketch_both(S1, A[i0:i1][:, j0:j1], S2, offsets=(i0, j0))
    np.testing.assert_allclose(total, dense_of(S1) @ D @ dense_of(S2).T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("k1", KINDS)
@pytest.mark.parametrize("k2", ["countsketch", "gaussian", "srht", "leverage"])
def test_two_sided_mixed_kinds(k1, k2):
    A = random_sparse(16, 24, 0.3, seed=8, dtype=np.float64)
    S1, S2 = make(k1, 4, 16, seed=3), make(k2, 6, 24, seed=4)
    ref = dense_of(S1) @ A.toarray() @ dense_of(S2).T
    for X in (A, A.tocsc(), A.toarray()):
        np.testing.assert_allclose(sl.sketch_both(S1, X, S2), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_matmul_forms_and_vectors(kind):
    S = make(kind, 6, 20, seed=21)
    D = dense_of(S)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(20)
    np.testing.assert_allclose(S @ x, D @ x, rtol=1e-10, atol=1e-12)
    B = rng.standard_normal((3, 20))
    np.testing.assert_allclose(B @ S.T, B @ D.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sp.csr_matrix(B) @ S.T, B @ D.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sp.csr_array(B) @ S.T, B @ D.T, rtol=1e-10, atol=1e-12)
    y = rng.standard_normal(6)
    np.testing.assert_allclose(S.T @ y, D.T @ y, rtol=1e-10, atol=1e-12)
    L = S.aslinearoperator()
    np.testing.assert_allclose(L @ x, D @ x, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(L.rmatvec(y), D.T @ y, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(L.matmat(B.T), D @ B.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(S.T.toarray(), D.T, rtol=1e-12)


def test_operators_are_values():
    assert sl.CountSketch(5, 9, rng=1) == sl.CountSketch(5, 9, rng=1)
    assert sl.CountSketch(5, 9, rng=1) != sl.CountSketch(5, 9, rng=2)
    assert len({sl.OSNAP(5, 9, rng=1), sl.OSNAP(5, 9, rng=1)}) == 1
    assert "CountSketch(5, 9" in repr(sl.CountSketch(5, 9, rng=1))
    gen = np.random.default_rng(0)
    a, b = sl.GaussianSketch(3, 4, rng=gen), sl.GaussianSketch(3, 4, rng=gen)
    assert a != b  # a Generator is advanced
    again = np.random.default_rng(0)
    assert sl.GaussianSketch(3, 4, rng=again) == a
    assert sl.CountSketch(3, 4, rng=np.random.RandomState(0)).shape == (3, 4)


def test_uniform_without_replacement_keeping_every_row_is_identity():
    S = sl.UniformSampler(12, 12, replace=False, rng=4)
    np.testing.assert_array_equal(S.toarray(), np.eye(12))


def test_leverage_from_scores_and_from_matrix():
    S = sl.LeverageScoreSampler(9, scores=SCORES, rng=3)
    np.testing.assert_allclose(S.toarray(), leverage_dense(9, SCORES, S.seed), rtol=1e-12)
    assert set(S.indices.tolist()).isdisjoint({0, 1, 2})  # zero scores are never drawn
    A = np.random.default_rng(1).standard_normal((30, 4))
    A[5] = 0.0
    S = sl.LeverageScoreSampler.from_matrix(A, 50, axis=0, rng=2)
    assert S.shape == (50, 30) and 5 not in S.indices
    np.testing.assert_allclose(S.probabilities, sl.leverage_scores(A) / 4, rtol=1e-12)
    assert sl.LeverageScoreSampler.from_matrix(A, 3, axis=1, rng=2).shape == (3, 4)


def test_float32_stays_float32_and_other_dtypes_become_float64():
    S = sl.CountSketch(4, 10, rng=0)
    A = np.arange(30).reshape(10, 3)
    assert (S @ A).dtype == np.float64
    assert (S @ A.astype(np.float32)).dtype == np.float32
    assert (S @ A.astype(np.float16)).dtype == np.float64
    np.testing.assert_allclose(S @ (A > 5), dense_of(S) @ (A > 5))
    coo = sp.coo_matrix(A.astype(float))
    np.testing.assert_allclose(S @ coo, dense_of(S) @ A)  # other formats are converted


def test_all_zero_and_empty_inputs():
    S1, S2 = sl.CountSketch(4, 10, rng=0), sl.SRHT(3, 7, rng=0)
    Z = sp.csr_matrix((10, 7))
    np.testing.assert_array_equal(sl.sketch_both(S1, Z, S2), np.zeros((4, 3)))
    np.testing.assert_array_equal(S1 @ np.zeros((10, 0)), np.zeros((4, 0)))
    np.testing.assert_array_equal(S2.apply(np.zeros((0, 7)), axis=1), np.zeros((0, 3)))
    np.testing.assert_array_equal(S1.apply(np.zeros((0, 5)), offset=10), np.zeros((4, 5)))


def test_composition_matches_product():
    G, T = sl.GaussianSketch(4, 9, rng=1), sl.OSNAP(9, 30, nnz_per_col=2, rng=2)
    S = sl.compose(G, T)
    assert S.shape == (4, 30)
    assert sl.compose(sl.GaussianSketch(2, 4, rng=0), S).shape == (2, 30)
    np.testing.assert_allclose(S.toarray(), dense_of(G) @ dense_of(T), rtol=1e-12)
    A = random_sparse(30, 12, 0.3, seed=0, dtype=np.float64)
    np.testing.assert_allclose(S @ A, dense_of(G) @ dense_of(T) @ A.toarray(), rtol=1e-10)
    nested = sl.compose(sl.GaussianSketch(2, 4, rng=0), S)
    np.testing.assert_allclose(
        sl.sketch_both(nested, A, sl.CountSketch(3, 12, rng=5)),
        dense_of(nested) @ A.toarray() @ dense_of(sl.CountSketch(3, 12, rng=5)).T,
        rtol=1e-10,
    )


@pytest.mark.parametrize("kind", ONE_PASS)  # the hashing and sampling kinds
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("accumulate", [False, True])
def test_right_csr_into_f_ordered_out_in_place(kind, dtype, accumulate, monkeypatch):
    """The range sketch of a single-pass SVD: a CSR block's columns
    sketched into an F-ordered running C.  The loop writes C's columns in
    place (no row pieces, no transposing copy) and gives the dense product."""
    from sketchlab._operators import _tables as operators

    S = make(kind, 6, 30, seed=3)
    A = random_sparse(40, 11, 0.4, seed=8, dtype=dtype)
    out = np.asfortranarray(np.random.default_rng(1).standard_normal((40, 6)).astype(dtype))
    expected = (out if accumulate else 0) + A.toarray() @ dense_of(S)[:, 7:18].T
    monkeypatch.setattr(operators, "_deliver", None)  # any copy would fail
    result = S.apply(A, axis=1, offset=7, out=out, accumulate=accumulate)
    assert result is out and out.flags.f_contiguous and out.dtype == dtype
    np.testing.assert_allclose(out, expected, **tol(dtype))


@pytest.mark.parametrize("inner_kind", ["countsketch", "osnap"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("axis", [0, 1])
def test_composition_in_one_pass_over_sparse_input(inner_kind, fmt, axis, monkeypatch):
    """A small Gaussian over a hashing sketch, applied to a sparse A into a
    running sketch too small to hold the inner sketch beside it (the error
    estimates' probes, fast_sp_svd's default range sketch), runs as one
    compiled pass along A's stored rows, and across them where that is
    cheaper than the two steps in pieces; it gives the product
    of the two operators, in blocks with offsets and onto a running sketch,
    and the same as the two-step product (which runs without an out)."""
    from sketchlab._engine._jit import apply as K

    d, free = 300, 800  # free * 24 above the two steps' budget for out (6 x 800)
    inner = (sl.CountSketch(24, d, rng=2) if inner_kind == "countsketch"
             else sl.OSNAP(24, d, nnz_per_col=3, rng=2))
    S = sl.compose(sl.GaussianSketch(6, 24, rng=1), inner)
    D = dense_of(S.outer) @ dense_of(S.inner)
    A = random_sparse(d, free, 0.05, seed=3, dtype=np.float64)
    X = (A if axis == 0 else A.T).asformat(fmt)  # d along `axis`
    Xd = X.toarray()
    want = D @ Xd if axis == 0 else Xd @ D.T
    calls = []
    for name in ("left_csr_chunks_hash_dense", "right_csr_dense"):
        kernel = getattr(K, name)
        monkeypatch.setattr(K, name, lambda *a, kernel=kernel: calls.append(1) or kernel(*a))
    np.testing.assert_allclose(S.apply(X, axis=axis), want, rtol=1e-12, atol=1e-12)
    out = np.ones_like(want)
    for lo in range(0, d, 128):  # blocks along the sketched dimension, with offsets
        block = X[lo:lo + 128] if axis == 0 else X[:, lo:lo + 128]
        S.apply(block.asformat(fmt), axis=axis, offset=lo, out=out, accumulate=True)
    np.testing.assert_allclose(out, 1.0 + want, rtol=1e-12, atol=1e-12)
    out_f = np.asfortranarray(np.zeros_like(want))  # an output with strided rows
    S.apply(X, axis=axis, out=out_f)
    np.testing.assert_allclose(out_f, want, rtol=1e-12, atol=1e-12)
    # the three blocks and out_f in one pass (not the call without out), except
    # across A's stored rows where the two steps in pieces are the cheaper
    # (a CountSketch inner: one scatter per entry against s multiply-adds)
    along_rows = (axis == 0) == (fmt == "csr")
    assert len(calls) == (4 if along_rows or not S._pieces_pay() else 0)
    monkeypatch.setattr(sl.ComposedSketch, "_apply_fused", lambda *a: None)
    out_f[...] = 0.0
    S.apply(X, axis=axis, out=out_f)
    np.testing.assert_allclose(out_f, want, rtol=1e-12, atol=1e-12)


@given(
    kind=st.sampled_from(KINDS),
    m=st.integers(1, 40),
    n=st.integers(1, 30),
    s1=st.integers(1, 12),
    s2=st.integers(1, 12),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32),
    fmt=st.sampled_from(["csr", "csc", "dense_c", "dense_f"]),
)
def test_hypothesis_shapes(kind, m, n, s1, s2, density, seed, fmt):
    if kind == "uniform-noreplace":
        s1, s2 = min(s1, m), min(s2, n)
    if kind == "srht":
        s1 = min(s1, 1 << max(0, (m - 1).bit_length()))
        s2 = min(s2, 1 << max(0, (n - 1).bit_length()))
    S1, S2 = make(kind, s1, m, seed % 1000), make(kind, s2, n, seed % 1000 + 1)
    A = sp.random(m, n, density=density, format="csr", random_state=seed % 2**31)
    X = {"csr": A, "csc": A.tocsc(), "dense_c": A.toarray(),
         "dense_f": np.asfortranarray(A.toarray())}[fmt]
    D1, D2, D = dense_of(S1), dense_of(S2), A.toarray()
    np.testing.assert_allclose(S1 @ X, D1 @ D, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(S2.apply(X, axis=1), D @ D2.T, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(sl.sketch_both(S1, X, S2), D1 @ D @ D2.T, rtol=1e-9, atol=1e-10)


# ---- statistics: E[S^T S] = I and subspace embedding --------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_expected_gram_is_identity(kind):
    # mean of S^T S over N independent operators: each entry of S^T S has mean
    # I and a per-draw standard deviation of at most ~sqrt(2 d / s) for every
    # kind here (samplers: d/s for a diagonal entry), so the mean deviates by
    # more than 6 sqrt(2 d / (s N)) with negligible probability.
    # (leverage sampling: identity on the support of the scores)
    s, d, N = 8, 10, 400
    total = np.zeros((d, d))
    for seed in range(N):
        S = make(kind, s, d, seed=1000 + seed)
        D = S.toarray()
        total += D.T @ D
    mean = total / N
    expected = np.eye(d)
    if kind == "leverage":
        expected = np.diag((S.probabilities > 0).astype(float))
        assert expected.sum() < d
    bound = 6 * np.sqrt(2 * d / (s * N))
    assert np.abs(mean - expected).max() < bound
    if kind in ("countsketch", "osnap"):  # unit-norm columns: exact diagonal
        np.testing.assert_allclose(np.diag(mean), 1.0, rtol=1e-12)


@pytest.mark.parametrize(
    "kind, s", [("countsketch", 1600), ("osnap", 400), ("gaussian", 200), ("srht", 200),
                ("leverage", 400), ("osnap-gaussian", 200)]
)
def test_subspace_embedding(kind, s):
    # ||S U x|| within (1 +- eps) ||x|| for an orthonormal basis U (k = 5):
    # sizes of the order of the paper's Table "property" give eps < 0.5 here
    n, k = 2048, 5
    U, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((n, k)))
    for seed in range(10):
        if kind == "leverage":
            S = sl.LeverageScoreSampler.from_matrix(U, s, rng=seed)
        else:
            S = make(kind, s, n, seed=seed)
        sv = np.linalg.svd(S @ U, compute_uv=False)
        assert 0.5 < sv.min() and sv.max() < 1.5, (kind, seed, sv)


# ---- leverage scores ---------------------------------------------------------


def test_leverage_scores_full_rank_and_axis():
    A = np.random.default_rng(3).standard_normal((40, 6))
    U = np.linalg.svd(A, full_matrices=False)[0]
    np.testing.assert_allclose(sl.leverage_scores(A), (U**2).sum(1), rtol=1e-10)
    np.testing.assert_allclose(sl.leverage_scores(A.T, axis=1), (U**2).sum(1), rtol=1e-10)
    np.testing.assert_allclose(sl.leverage_scores(sp.csr_matrix(A)), (U**2).sum(1), rtol=1e-10)
    np.testing.assert_allclose(sl.leverage_scores(A, axis=1), np.ones(6), rtol=1e-10)


def test_leverage_scores_rank_deficient_and_zero():
    rng = np.random.default_rng(4)
    A = rng.standard_normal((30, 3)) @ rng.standard_normal((3, 8))  # rank 3
    scores = sl.leverage_scores(A)
    np.testing.assert_allclose(scores.sum(), 3.0, rtol=1e-10)
    assert scores.min() >= 0 and scores.max() <= 1 + 1e-12
    np.testing.assert_array_equal(sl.leverage_scores(np.zeros((5, 2))), np.zeros(5))


# ---- bad input -----------------------------------------------------------------


@pytest.mark.parametrize(
    "factory, exc, match",
    [
        (lambda: sl.CountSketch(0, 5), ValueError, "sketch_size"),
        (lambda: sl.CountSketch(-3, 5), ValueError, "sketch_size"),
        (lambda: sl.CountSketch(2.5, 5), TypeError, "sketch_size"),
        (lambda: sl.CountSketch(True, 5), TypeError, "sketch_size"),
        (lambda: sl.CountSketch(3, 0), ValueError, "input_dim"),
        (lambda: sl.CountSketch(3, 2**40), ValueError, "input_dim"),
        (lambda: sl.CountSketch(3, 5, rng=-1), ValueError, "rng"),
        (lambda: sl.CountSketch(3, 5, rng="seed"), TypeError, "rng"),
        (lambda: sl.OSNAP(3, 5, nnz_per_col=4), ValueError, "nnz_per_col"),
        (lambda: sl.SRHT(9, 8), ValueError, "sketch_size"),
        (lambda: sl.UniformSampler(6, 5, replace=False), ValueError, "sketch_size"),
        (lambda: sl.LeverageScoreSampler(3, scores=[1.0, -1.0]), ValueError, "scores"),
        (lambda: sl.LeverageScoreSampler(3, scores=[np.nan, 1.0]), ValueError, "scores"),
        (lambda: sl.LeverageScoreSampler(3, scores=[0.0, 0.0]), ValueError, "scores"),
        (lambda: sl.LeverageScoreSampler(3, 4, scores=[1.0, 1.0]), ValueError, "scores"),
        (lambda: sl.LeverageScoreSampler(3, scores=[]), ValueError, "scores"),
        (lambda: sl.LeverageScoreSampler(3, scores=["a"]), TypeError, "scores"),
        (lambda: sl.compose(sl.GaussianSketch(2, 4), sl.OSNAP(5, 9)), ValueError, "input_dim"),
        (lambda: sl.compose(np.eye(2), sl.OSNAP(2, 9)), TypeError, "operators"),
        (lambda: sl.make_sketch("fourier", 2, 4), ValueError, "kind"),
        (lambda: sl.make_sketch("leverage", 2, 4), ValueError, "scores"),
    ],
)
def test_bad_construction(factory, exc, match):
    with pytest.raises(exc, match=match):
        factory()


def test_bad_application():
    S = sl.CountSketch(3, 6, rng=0)
    with pytest.raises(ValueError, match="input_dim 6"):
        S @ np.ones((5, 2))
    with pytest.raises(ValueError, match="A.shape\\[1\\]"):
        S.apply(np.ones((2, 5)), axis=1)
    with pytest.raises(ValueError, match="axis"):
        S.apply(np.ones((6, 2)), axis=2)
    with pytest.raises(ValueError, match="NaN or Inf"):
        S @ np.array([[1.0], [np.nan], [0], [0], [0], [0]])
    with pytest.raises(ValueError, match="NaN or Inf"):
        S @ sp.csr_matrix(np.array([[np.inf]] + [[0.0]] * 5))
    with pytest.raises(TypeError, match="numeric"):
        S @ np.array([["a"]] * 6)
    with pytest.raises(TypeError, match="real numeric"):
        S @ (np.ones((6, 1)) * 1j)
    with pytest.raises(ValueError, match="2-D"):
        S @ np.ones((6, 2, 2))
    with pytest.raises(ValueError, match="exceeds"):
        S.apply(np.ones((4, 2)), offset=3)
    with pytest.raises(ValueError, match="offset"):
        S.apply(np.ones((4, 2)), offset=-1)
    with pytest.raises(TypeError, match="S2"):
        sl.sketch_both(S, np.ones((6, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="A.shape\\[1\\]"):
        sl.sketch_both(S, np.ones((6, 2)), sl.CountSketch(2, 3))
    with pytest.raises(TypeError, match="offsets"):
        sl.sketch_both(S, np.ones((6, 3)), sl.CountSketch(2, 3), offsets=5)
    with pytest.raises(TypeError, match="dask|array"):
        S @ None
    # non-finite values are accepted only when the caller opts out explicitly
    out = S.apply(np.full((6, 1), np.inf), check_finite=False)
    assert not np.isfinite(out).all()


@pytest.mark.parametrize("kind", KINDS)
def test_pickle_roundtrip_is_small_and_equal(kind):
    import pickle

    S = make(kind, 6, 5000, seed=2)
    x = np.random.default_rng(0).standard_normal(5000)
    y = S @ x  # fills the table cache of the hashing kinds
    blob = pickle.dumps(S)
    T = pickle.loads(blob)
    assert T == S
    np.testing.assert_array_equal(T @ x, y)
    if kind not in ("leverage",):  # a leverage sampler carries its probabilities (O(d))
        assert len(blob) < 4000


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("right", ["uniform", "countsketch", "osnap"])
def test_corrupt_sparse_arrays_give_errors_not_crashes(fmt, right, kernel_regime):
    # with two hashing kinds the two-sided kernel checks the indices as it
    # reads them; every other path checks them first
    S1 = sl.CountSketch(3, 6, rng=0)
    S2 = make(right, 2, 6, seed=1)

    def fresh():
        return sp.random(6, 6, density=0.5, format=fmt, random_state=0)

    corruptions = {
        "at_bound": lambda M: M.indices.__setitem__(0, 6),
        "far_outside": lambda M: M.indices.__setitem__(0, 600),
        "negative": lambda M: M.indices.__setitem__(1, -1),
        "indptr": lambda M: M.indptr.__setitem__(3, M.indptr[-1] + 5),
        "decreasing": lambda M: M.indptr.__setitem__(2, M.indptr[3] + 1),
    }
    for name, corrupt in corruptions.items():
        M = fresh()
        corrupt(M)
        for call in (
            lambda: S1 @ M,
            lambda: S1.apply(M.T, axis=1),
            lambda: sl.sketch_both(S1, M, S2),
            lambda: sl.sketch_both(S1, M, S2, check_finite=False),
        ):
            with pytest.raises(ValueError, match="indices|indptr"):
                call()


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("kinds", [("countsketch", "countsketch"), ("osnap", "countsketch"),
                                   ("countsketch", "uniform"), ("gaussian", "osnap")])
def test_two_sided_rejects_nonfinite_values(fmt, kinds, kernel_regime):
    S1, S2 = make(kinds[0], 3, 9, seed=0), make(kinds[1], 2, 7, seed=1)
    for bad in (np.nan, np.inf, -np.inf):
        A = random_sparse(9, 7, 0.5, seed=3, dtype=np.float64).asformat(fmt)
        A.data[A.nnz // 2] = bad
        with pytest.raises(ValueError, match="NaN or Inf"):
            sl.sketch_both(S1, A, S2)
        with pytest.raises(ValueError, match="NaN or Inf"):
            sl.fast_gmr(A, np.ones((9, 2)), np.ones((2, 7)), sketch=(S1, S2))
        M = sl.sketch_both(S1, A, S2, check_finite=False)  # allowed: computed as given
        assert M.shape == (3, 2)


def test_two_sided_overflow_is_not_mistaken_for_bad_input():
    # finite values whose sum overflows: an infinite result, as numpy gives, no error
    S2 = next(S for S in (sl.CountSketch(1, 2, rng=seed) for seed in range(50))
              if S.toarray()[0, 0] == S.toarray()[0, 1])
    S1 = sl.CountSketch(1, 1, rng=0)
    A = sp.csr_matrix(np.array([[1e308, 1e308]]))
    with np.errstate(over="ignore"):
        expected = S1.toarray() @ A.toarray() @ S2.toarray().T
    assert np.isinf(expected).all()
    np.testing.assert_array_equal(sl.sketch_both(S1, A, S2), expected)


def test_two_sided_ignores_values_outside_the_pointer_range():
    # entries past indptr[-1] are not part of the matrix (scipy ignores them too)
    A = sp.csr_matrix((np.array([1.0, 2.0, np.nan]), np.array([0, 1, 99]), np.array([0, 1, 2])),
                      shape=(2, 3))
    S1, S2 = sl.CountSketch(2, 2, rng=0), sl.CountSketch(2, 3, rng=1)
    expected = S1.toarray() @ np.array([[1.0, 0, 0], [0, 2.0, 0]]) @ S2.toarray().T
    np.testing.assert_allclose(sl.sketch_both(S1, A, S2), expected)


@pytest.mark.parametrize("axis", [0, 1])
def test_dense_kind_applies_one_generation_to_several_arrays(axis):
    # fast_gmr sketches C and A with the same Gaussian S, generated once
    S = sl.GaussianSketch(5, 40, rng=3)
    D = np.random.default_rng(0).standard_normal((40, 7) if axis == 0 else (7, 40))
    X = random_sparse(*D.shape, 0.3, seed=1, dtype=np.float32)
    together = S.apply_many([D, X], axis)
    for array, result in zip([D, X], together):
        alone = S.apply(array, axis)
        assert result.dtype == alone.dtype
        np.testing.assert_array_equal(result, alone)


@pytest.mark.parametrize("array", [False, True])
def test_views_of_sparse_input_keep_its_index_arrays(array):
    """The transposes and row slices the loops take of a validated sparse A
    (CSC as the CSR of A^T, row pieces of a CSR) are views on A's own arrays:
    scipy's constructor would read int64 indices through and copy them to
    int32 (6 ms per view on debian-tfidf)."""
    from sketchlab._operators._base import _rows, _transpose

    A = random_sparse(12, 9, 0.4, seed=4, dtype=np.float64)
    A = _int64(sp.csr_array(A) if array else sp.csr_matrix(A))
    T = _transpose(A)
    assert T.format == "csc" and T.shape == (9, 12)
    assert type(T).__name__ == ("csc_array" if array else "csc_matrix")
    assert T.indices is A.indices and T.indptr is A.indptr and T.data is A.data
    np.testing.assert_array_equal(T.toarray(), A.toarray().T)
    np.testing.assert_array_equal(_transpose(T).toarray(), A.toarray())
    R = _rows(A, 3, 8)
    assert R.indices.dtype == np.int64 and np.shares_memory(R.indices, A.indices)
    np.testing.assert_array_equal(R.toarray(), A.toarray()[3:8])


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("kinds", [("countsketch", "countsketch"), ("uniform", "osnap"),
                                   ("leverage", "uniform")])
def test_gather_loops_with_prefetch_match_the_dense_product(kinds, index_dtype, monkeypatch):
    """The loops that gather rows of A in a left table's order prefetch the
    rows a few steps ahead: rows longer than a cache line, empty rows, a
    table whose last rows have nothing ahead of them, both index dtypes, and
    a dense A all give the dense product."""
    from sketchlab._engine import operators

    monkeypatch.setattr(operators, "_MAX_CHUNK_BYTES", 0)  # the gathering loops
    m, n = 61, 47
    A = random_sparse(m, n, 0.5, seed=7, dtype=np.float64)  # ~23 entries per row
    A.indices = A.indices.astype(index_dtype)
    A.indptr = A.indptr.astype(index_dtype)
    D = A.toarray()
    S1, S2 = make(kinds[0], 9, m, seed=1), make(kinds[1], 6, n, seed=2)
    D1, D2 = dense_of(S1), dense_of(S2)
    np.testing.assert_allclose(S1 @ A, D1 @ D, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(S1 @ D, D1 @ D, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sl.sketch_both(S1, A, S2), D1 @ D @ D2.T, rtol=1e-12,
                               atol=1e-12)


def test_prefetch_hint_reaches_the_machine_code():
    """``_jit.prefetch.prefetch`` compiles to the CPU's prefetch instruction
    (where the CPU has one) and leaves the values alone."""
    import platform

    from numba import njit

    from sketchlab._engine._jit.prefetch import prefetch

    @njit
    def total(a):
        s = 0.0
        for i in range(a.shape[0]):
            if i + 8 < a.shape[0]:
                prefetch(a, i + 8)
            s += a[i]
        return s

    a = np.arange(100.0)
    assert total(a) == a.sum()
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert "prefetcht0" in "".join(total.inspect_asm().values())


@pytest.mark.parametrize("fits", [2, 3, 5])
def test_sparse_left_sketch_streams_only_into_four_or_more_buffers(fits, monkeypatch):
    """A sparse A streams into per-chunk buffers only when four or more fit
    the budget (fewer, larger buffers lost to the gathering loop); a dense A
    with short rows streams from two on.  Every path gives the dense product."""
    from sketchlab._engine import operators
    from sketchlab._engine._jit import apply as K

    S = sl.CountSketch(6, 61, rng=1)
    A = random_sparse(61, 47, 0.5, seed=7, dtype=np.float64)
    D = A.toarray()
    monkeypatch.setattr(operators, "_MIN_CHUNK_NNZ", 7)  # work for 8 chunks
    monkeypatch.setattr(operators, "_MAX_CHUNK_BYTES", fits * 6 * 47 * 8)
    calls = []
    for name in ("left_csr", "left_csr_chunks_hash", "left_dense_chunks_hash"):
        kernel = getattr(K, name)
        monkeypatch.setattr(K, name, lambda *a, k=kernel, n=name: calls.append(n) or k(*a))
    np.testing.assert_allclose(S @ A, dense_of(S) @ D, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(S @ D, dense_of(S) @ D, rtol=1e-12, atol=1e-12)
    sparse_loop = "left_csr_chunks_hash" if fits >= 4 else "left_csr"
    assert calls == [sparse_loop, "left_dense_chunks_hash"]


# ---- reported failures: crashes, silently wrong answers, slow errors -------------------


def test_indptr_must_start_at_zero():
    X = sp.random(30, 40, density=0.2, format="csr", random_state=0)
    bad = X.copy()
    bad.indptr[0] = 2
    with pytest.raises(ValueError, match=r"A.indptr must start at 0, got indptr\[0\] = 2"):
        bad @ sl.SRHT(5, 40, rng=0).T
    with pytest.raises(ValueError, match="must start at 0"):
        sl.SRHT(5, 30, rng=0) @ bad
    csc = X.tocsc()
    csc.indptr[0] = 1
    with pytest.raises(ValueError, match="must start at 0"):
        sl.GaussianSketch(5, 30, rng=0) @ csc


def test_hashing_sketch_sizes_fit_the_packed_codes():
    with pytest.raises(ValueError, match=r"sketch_size must be <= 2\*\*30"):
        sl.CountSketch(2**31 - 1, 64, rng=0)
    S = sl.CountSketch(2**30, 64, rng=0)  # the largest: rows stay non-negative
    rows = S.tosparse("coo").row
    assert rows.min() >= 0 and rows.max() < 2**30


def test_leverage_sampler_with_huge_scores():
    S = sl.LeverageScoreSampler(5, scores=np.full(10, 1e308), rng=0)
    assert np.isfinite(S.weights).all() and np.allclose(S.probabilities, 0.1)


def test_operators_compare_equal_across_processes_and_stay_read_only():
    code = """
        import pickle, sys, numpy as np, sketchlab as sl
        S = sl.LeverageScoreSampler(4, scores=np.arange(1.0, 9.0), rng=3)
        sys.stdout.write(pickle.dumps(S).hex())
    """
    _, out, err = run_isolated(code)
    other = pickle.loads(bytes.fromhex(out))
    here = sl.LeverageScoreSampler(4, scores=np.arange(1.0, 9.0), rng=3)
    assert other == here and hash(other) == hash(here)
    for obj in (other, pickle.loads(pickle.dumps(sl.UniformSampler(3, 9, rng=0))),
                pickle.loads(pickle.dumps(sl.SRHT(4, 9, rng=0)))):
        arrays = [getattr(obj, name) for name in ("indices", "weights", "probabilities",
                                                  "sampled_rows") if hasattr(obj, name)]
        assert arrays and not any(a.flags.writeable for a in arrays)


@pytest.mark.parametrize("kind", SIZED)
def test_transpose_products_keep_float32(kind):
    S = make(kind, 4, 16, 0)
    y = np.ones(4, dtype=np.float32)
    assert (S.T @ y).dtype == np.float32
    assert (S.T @ np.ones((4, 2), dtype=np.float32)).dtype == np.float32


def test_clear_errors_fast():
    X = sp.random(20, 10, density=0.3, format="csr", random_state=0)
    bad = X.copy()
    bad.indices = bad.indices.astype(np.float64)
    with pytest.raises(TypeError, match="A.indices must be a 1-D integer array"):
        sl.CountSketch(4, 20, rng=0) @ bad
    S = sl.CountSketch(4, 20, rng=0)
    with pytest.raises(TypeError, match="S.T @ T of two operators is not supported"):
        S.T @ S
    start = time.perf_counter()
    with pytest.raises(ValueError, match="toarray"):
        sl.CountSketch(8, 2**31 - 1, rng=0).toarray()
    assert time.perf_counter() - start < 1.0  # before any hashing


# ---- application into and onto out, apply_many, sketch_both, index selection ----------


@pytest.mark.parametrize("kind", SIZED)
@pytest.mark.parametrize("fmt", ["C", "F", "csr", "csc"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("order", ["C", "F", "slice"])
def test_apply_into_and_onto_out(kind, fmt, axis, order):
    d, other = 40, 23
    S = make(kind, 7, d, 1)
    A, D = random_matrix(fmt, *((d, other) if axis == 0 else (other, d)), seed=2)
    Sd = dense_of(S)
    want = Sd @ D if axis == 0 else D @ Sd.T
    shape = want.shape
    base = np.random.default_rng(3).standard_normal((shape[0] + 4, shape[1] + 3))
    if order == "slice":  # a window of a larger array: neither C- nor F-contiguous
        out = base[2:2 + shape[0], 1:1 + shape[1]]
    else:
        out = np.array(base[:shape[0], :shape[1]], order=order)
    before = out.copy()
    assert S.apply(A, axis=axis, out=out, accumulate=True) is out
    np.testing.assert_allclose(out, before + want, rtol=1e-12, atol=1e-12)
    assert S.apply(A, axis=axis, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    if order == "slice":  # the rest of the larger array is untouched
        mask = np.ones(base.shape, bool)
        mask[2:2 + shape[0], 1:1 + shape[1]] = False
        np.testing.assert_array_equal(base[mask],
                                      np.random.default_rng(3).standard_normal(base.shape)[mask])


@pytest.mark.parametrize("kind", SIZED)
def test_apply_out_is_bitwise_the_plain_result_for_hashing_and_sampling(kind):
    S = make(kind, 9, 60, 4)
    A = sp.random(60, 30, density=0.2, format="csr", random_state=5)
    out = np.empty((9, 30))
    S.apply(A, out=out)
    if kind in ("countsketch", "osnap", "uniform"):
        assert np.array_equal(out, S @ A)
    else:
        np.testing.assert_allclose(out, S @ A, rtol=1e-13, atol=1e-13)


def test_apply_out_is_checked():
    S = sl.CountSketch(5, 20, rng=0)
    A = np.ones((20, 3))
    with pytest.raises(ValueError, match=r"out must have shape \(5, 3\)"):
        S.apply(A, out=np.empty((5, 4)))
    with pytest.raises(ValueError, match="out must have dtype float64"):
        S.apply(A, out=np.empty((5, 3), dtype=np.float32))
    with pytest.raises(TypeError, match="out must be a numpy.ndarray"):
        S.apply(A, out=[[0.0] * 3] * 5)
    frozen = np.empty((5, 3))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="out must be writable"):
        S.apply(A, out=frozen)


@pytest.mark.parametrize("kind", SIZED)
@pytest.mark.parametrize("axis", [0, 1])
def test_apply_many_equals_apply_bit_for_bit(kind, axis):
    S = make(kind, 6, 50, 7)
    X1, _ = random_matrix("C", *((50, 8) if axis == 0 else (8, 50)), seed=8)
    X2, _ = random_matrix("csr", *((50, 5) if axis == 0 else (5, 50)), seed=9, dtype=np.float32)
    together = S.apply_many([X1, X2], axis, offset=None)
    for X, got in zip([X1, X2], together):
        alone = S.apply(X, axis)
        assert got.dtype == alone.dtype
        np.testing.assert_array_equal(got, alone)
    with pytest.raises(ValueError, match=r"arrays\[1\].shape\[0\] = 49 differs"):
        S.apply_many([np.ones((50, 2)), np.ones((49, 2))])


@pytest.mark.parametrize("fmt", ["C", "csr", "csc"])
def test_sketch_both_into_and_onto_out(fmt):
    S1, S2 = sl.CountSketch(6, 30, rng=1), sl.OSNAP(5, 20, rng=2)
    A, D = random_matrix(fmt, 30, 20, seed=3)
    want = dense_of(S1) @ D @ dense_of(S2).T
    out = np.asfortranarray(np.ones((6, 5)))
    assert sl.sketch_both(S1, A, S2, out=out, accumulate=True) is out
    np.testing.assert_allclose(out, 1.0 + want, rtol=1e-12, atol=1e-12)


def test_index_selection_gathers_rows_and_columns():
    A = np.arange(20.0).reshape(4, 5)
    P = sl.IndexSelection([3, 1, 1], 4)
    np.testing.assert_array_equal(P @ A, A[[3, 1, 1]])
    Q = sl.IndexSelection([4, 0], 5)
    np.testing.assert_array_equal(A @ Q.T, A[:, [4, 0]])
    np.testing.assert_array_equal(Q @ sp.csr_matrix(A.T), A.T[[4, 0]])
    assert P == sl.IndexSelection(np.array([3, 1, 1]), 4) and P != sl.IndexSelection([3, 1], 4)
    with pytest.raises(ValueError, match=r"indices must lie in \[0, 4\)"):
        sl.IndexSelection([4], 4)
    with pytest.raises(ValueError, match="indices must be a non-empty 1-D array of ints"):
        sl.IndexSelection([0.5], 4)


def test_pickled_sampler_stays_read_only():
    sampler = pickle.loads(pickle.dumps(sl.LeverageScoreSampler(5, scores=np.arange(1.0, 9.0),
                                                                rng=1)))
    assert not sampler.indices.flags.writeable and not sampler.probabilities.flags.writeable


# ---- from the fuzz suite (tests/test_fuzz.py): the bugs it found, every option once --


@pytest.mark.parametrize("how", ["gaussian_left", "gaussian_right", "srht_block",
                                 "composed_sparse"])
def test_dense_kinds_empty_free_dimension(how):
    """An empty result, as the other kinds give (was a BLAS 'unexpected array size')."""
    if how == "gaussian_left":
        assert (sl.GaussianSketch(2, 3, rng=0) @ np.zeros((3, 0))).shape == (2, 0)
    elif how == "gaussian_right":
        assert (np.zeros((0, 3)) @ sl.GaussianSketch(2, 3, rng=0).T).shape == (0, 2)
    elif how == "srht_block":
        assert sl.SRHT(2, 4, rng=0).apply(np.zeros((3, 0)), offset=0).shape == (2, 0)
    else:
        T = sl.compose(sl.GaussianSketch(2, 3, rng=0), sl.CountSketch(3, 4, rng=1))
        assert (sp.csr_matrix((0, 4)) @ T.T).shape == (0, 2)


@pytest.mark.parametrize("s1, s2, order", [(1, 3, "C"), (3, 1, "C"), (2, 2, "F")])
def test_sketch_both_accumulate_csc_into_fortran_out(s1, s2, order):
    """Added once (a CSC A into an F-ordered out used to add S1 A S2^T twice)."""
    A = sp.random(4, 5, density=0.5, format="csc", random_state=0)
    S1, S2 = sl.CountSketch(s1, 4, rng=1), sl.CountSketch(s2, 5, rng=2)
    out = np.zeros((s1, s2), order=order)
    sl.sketch_both(S1, A, S2, out=out, accumulate=True)
    assert np.allclose(out, dense_of(S1) @ A.toarray() @ dense_of(S2).T)
