"""Single-pass SVDs (Fast SP-SVD, Algorithm 3; Tropp et al. 2017 and 2019) and
lowrank_residual: streaming against whole-matrix runs, against direct NumPy
implementations with the same sketches as dense matrices, exact recovery of
rank-k matrices, bad input, memory, and the paper's Figure "svd" (slow)."""

import math
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import sketchlab as sl
from sketchlab import _linalg as linalg_mod
from sketchlab import _svd as svd_mod

from ._kinds import SVD
from ._support import base_dense, low_rank_plus_noise
from .reference import (
    dense_of,
    fast_sp_svd_dense,
    lowrank_residual_dense,
    practical_sp_svd_dense,
    three_sketch_svd_dense,
)

METHODS = ["fast", "practical", "three"]
KINDS = list(SVD)  # the kinds the SVDs take, from the registry (tests/_kinds.py)


def run(method, A, k, kind="gaussian", **kw):
    """One of the three functions with comparable sizes (c = 2k, r = 3k), at
    the sketch rank 2k unless ``rank=`` says otherwise."""
    kw.setdefault("rank", 2 * k)
    if method == "fast":
        kw = {"c": 2 * k, "r": 3 * k, "s_c": 6 * k, "s_r": 8 * k, "core_sketch": kind, **kw}
        return sl.fast_sp_svd(A, k, range_sketch=kind, **kw)
    if method == "practical":
        return sl.practical_sp_svd(A, k, c=2 * k, r=3 * k, range_sketch=kind, **kw)
    kw = {"c": 2 * k, "r": 3 * k, "s_c": 6 * k, "s_r": 8 * k, "core_sketch": kind, **kw}
    return sl.three_sketch_svd(A, k, range_sketch=kind, **kw)


def sparse_matrix(m, n, density, seed, fmt="csr"):
    A = sp.random(m, n, density=density, format=fmt, random_state=seed)
    A.data = A.data - 0.5
    return A


def product(U, s, Vt):
    return (U * s) @ Vt


def assert_same_svd(got, want, rtol):
    U, s, Vt = got
    U0, s0, Vt0 = want
    assert U.shape == U0.shape and s.shape == s0.shape and Vt.shape == Vt0.shape
    scale = s0[0]
    np.testing.assert_allclose(s, s0, rtol=0, atol=rtol * scale)
    np.testing.assert_allclose(product(U, s, Vt), product(U0, s0, Vt0), rtol=0, atol=rtol * scale)


def column_blocks(A, widths):
    j = 0
    for w in widths:
        yield A[:, j:j + w]
        j += w


def row_blocks(A, heights):
    i = 0
    for h in heights:
        yield A[i:i + h]
        i += h


# ---- streaming equals the whole-matrix result ---------------------------------


@pytest.fixture(scope="module")
def dense_input():
    return low_rank_plus_noise(90, 70, 12, 0.1, seed=3)


@pytest.fixture(scope="module")
def sparse_input():
    return sparse_matrix(90, 70, 0.15, seed=4)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("fmt", ["C", "F", "csr", "csc"])
@pytest.mark.parametrize("axis", [0, 1])
def test_blocks_equal_whole_matrix(method, fmt, axis, dense_input, sparse_input):
    A = sparse_input.asformat(fmt) if fmt in ("csr", "csc") else np.asarray(dense_input, order=fmt)
    kind = "countsketch" if sp.issparse(A) else "osnap-gaussian"
    whole = run(method, A, 5, kind=kind, rng=11)
    for block_size in (9, 40):
        got = run(method, A, 5, kind=kind, rng=11, axis=axis, block_size=block_size)
        assert_same_svd(got, whole, 1e-10)
    sizes = [3, 30, 1, 0, 36] if axis == 1 else [50, 0, 1, 39]
    blocks = column_blocks(A, sizes) if axis == 1 else row_blocks(A, sizes)
    got = run(method, blocks, 5, kind=kind, rng=11, axis=axis, shape=A.shape)
    assert_same_svd(got, whole, 1e-10)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", KINDS)
def test_every_sketch_kind_streams(method, kind, dense_input):
    whole = run(method, dense_input, 4, kind=kind, rng=5)
    got = run(method, column_blocks(dense_input, [20, 20, 30]), 4, kind=kind, rng=5,
              shape=dense_input.shape)
    assert_same_svd(got, whole, 1e-10)
    got = run(method, row_blocks(dense_input, [45, 45]), 4, kind=kind, rng=5, axis=0,
              shape=dense_input.shape)
    assert_same_svd(got, whole, 1e-10)


def test_state_of_a_grid_of_blocks_adds_up(dense_input):
    """Partial states of the chunks of a 2-D grid, merged, give the one-pass result."""
    A = dense_input
    m, n = A.shape
    _, rank, sketches = svd_mod.svd_sketches(
        "fast", A.shape, 5, c=10, r=15, s_c=30, s_r=40, range_sketch="osnap-gaussian",
        core_sketch="osnap", rng=2)
    whole = sl.SketchState(A.shape, sketches)
    whole.update(A)
    merged = sl.SketchState(A.shape, sketches)
    for i0, i1 in [(0, 40), (40, m)]:
        for j0, j1 in [(0, 25), (25, 26), (26, n)]:
            part = sl.SketchState(A.shape, sketches)
            part.update(A[i0:i1, j0:j1], (i0, j0))
            merged.merge(part)
    for name in ("range", "co-range", "core"):
        np.testing.assert_allclose(merged[name], whole[name], rtol=0,
                                   atol=1e-12 * np.abs(whole[name]).max())
    assert_same_svd(svd_mod.svd_recover("fast", merged, rank),
                    sl.fast_sp_svd(A, 5, c=10, r=15, s_c=30, s_r=40, rng=2), 1e-10)


# ---- the direct NumPy implementations --------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sparse", [False, True])
def test_matches_direct_numpy_implementations(kind, sparse):
    A = sparse_matrix(64, 48, 0.2, seed=6) if sparse else low_rank_plus_noise(64, 48, 8, 0.05, 6)
    k, c, r, s_c, s_r = 4, 8, 12, 24, 30
    _, _, sketches = svd_mod.svd_sketches("fast", A.shape, k, c=c, r=r, s_c=s_c, s_r=s_r,
                                          range_sketch=kind, core_sketch=kind, rng=9)
    (_, Omega), (Psi, _), (S_C, S_R) = (sketches[name] for name in ("range", "co-range", "core"))
    Omega, Psi, S_C, S_R = (dense_of(op) for op in (Omega, Psi, S_C, S_R))
    got = sl.fast_sp_svd(A, k, c=c, r=r, s_c=s_c, s_r=s_r, range_sketch=kind, core_sketch=kind,
                         rng=9, rank=c)
    assert_same_svd(got, fast_sp_svd_dense(A, Omega, Psi, S_C, S_R), 1e-10)
    got = sl.three_sketch_svd(A, k, c=c, r=r, s_c=s_c, s_r=s_r, range_sketch=kind,
                              core_sketch=kind, rng=9, rank=c)
    assert_same_svd(got, three_sketch_svd_dense(A, Omega, Psi, S_C, S_R), 1e-10)
    got = sl.practical_sp_svd(A, k, c=c, r=r, range_sketch=kind, rng=9, rank=c)
    assert_same_svd(got, practical_sp_svd_dense(A, Omega, Psi), 1e-10)
    # the default is k components: the leading ones of the sketch-rank output
    U, s, Vt = sl.fast_sp_svd(A, k, c=c, r=r, s_c=s_c, s_r=s_r, range_sketch=kind,
                              core_sketch=kind, rng=9)
    assert U.shape == (64, k) and s.shape == (k,) and Vt.shape == (k, 48)
    U0, s0, Vt0 = fast_sp_svd_dense(A, Omega, Psi, S_C, S_R)
    assert_same_svd((U, s, Vt), (U0[:, :k], s0[:k], Vt0[:k]), 1e-10)


def test_fast_and_three_sketch_share_the_recovery_formula(dense_input):
    """Same sizes and kinds: Algorithm 3's N and the three-sketch core agree."""
    kw = dict(c=10, r=12, s_c=30, s_r=31, range_sketch="gaussian", core_sketch="gaussian", rng=1)
    assert_same_svd(sl.three_sketch_svd(dense_input, 5, **kw), sl.fast_sp_svd(dense_input, 5, **kw),
                    1e-10)


# ---- exact recovery of a rank-k matrix --------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", KINDS)
def test_rank_k_matrix_recovered(method, kind):
    k = 6
    A = low_rank_plus_noise(150, 110, k, 0.0, seed=8)
    U, s, Vt = run(method, A, k, kind=kind, rng=3)
    assert np.linalg.norm(A - product(U, s, Vt)) <= 1e-8 * np.linalg.norm(A)
    U, s, Vt = run(method, A, k, kind=kind, rng=3, rank=k)
    assert s.shape == (k,)
    assert np.linalg.norm(A - product(U, s, Vt)) <= 1e-8 * np.linalg.norm(A)
    np.testing.assert_allclose(s, np.linalg.svd(A, compute_uv=False)[:k], rtol=1e-8)


def _record_basis_qr(calls, cholesky_qr, args, kwargs):
    """cholesky_qr, recording the calls of the sketch bases (``finish=False``;
    the GMR core's own calls go through the same function)."""
    qr = cholesky_qr(*args, **kwargs)
    if kwargs.get("finish", True) is False:
        calls.append(qr)
    return qr


@pytest.mark.parametrize("method", METHODS)
def test_cholesky_qr_of_large_sketches(method, dense_input, monkeypatch):
    """Sketches beyond the cache take CholeskyQR2 where they are clearly of
    full rank (here: every sketch, by a threshold of 0): the same SVD as
    Householder's to rounding, and Householder's where a sketch is rank
    deficient (a rank-6 A, c = 12)."""
    kw = dict(kind="gaussian", rng=3, rank=5)
    want = run(method, dense_input, 5, **kw)
    calls = []
    cholesky_qr = linalg_mod.cholesky_qr
    monkeypatch.setattr(linalg_mod, "_CHOLQR_MIN_ENTRIES", 0)
    monkeypatch.setattr(linalg_mod, "cholesky_qr",
                        lambda *a, **k: _record_basis_qr(calls, cholesky_qr, a, k))
    U, s, Vt = run(method, dense_input, 5, **kw)
    assert_same_svd((U, s, Vt), want, 1e-10)
    assert calls and all(qr is not None for qr in calls)
    # the bases keep CholeskyQR2's last factor on the small side (Q = Q1 T2^-1
    # never formed): still orthonormal, and the error estimate and tol= agree
    # with Householder's bases
    assert all(len(qr) == 3 for qr in calls)
    for B in (U, Vt.T):
        np.testing.assert_allclose(B.T @ B, np.eye(B.shape[1]), atol=1e-13)
    est = run(method, dense_input, 5, **kw, estimate_error=True).error_estimate
    by_tol = run(method, dense_input, 5, estimate_error=True, tol=0.7, kind="gaussian", rng=3,
               rank=None)
    monkeypatch.setattr(linalg_mod, "_CHOLQR_MIN_ENTRIES", 1 << 40)
    monkeypatch.setattr(linalg_mod, "_CHOLQR_TALL_MIN_ENTRIES", 1 << 40)
    est_h = run(method, dense_input, 5, **kw, estimate_error=True).error_estimate
    by_tol_h = run(method, dense_input, 5, estimate_error=True, tol=0.7, kind="gaussian", rng=3,
               rank=None)
    assert est.value == pytest.approx(est_h.value, rel=1e-10)
    assert 1 < by_tol[1].shape[0] == by_tol_h[1].shape[0] < 10  # a rank inside the sketch rank
    assert by_tol.error_estimate.value == pytest.approx(by_tol_h.error_estimate.value,
                                                        rel=1e-10)
    monkeypatch.setattr(linalg_mod, "_CHOLQR_MIN_ENTRIES", 0)
    calls.clear()
    A = low_rank_plus_noise(150, 110, 6, 0.0, seed=8)
    U, s, Vt = run(method, A, 6, kind="gaussian", rng=3)
    assert any(qr is None for qr in calls)  # the range sketch: rank 6 of 13 columns
    assert np.linalg.norm(A - product(U, s, Vt)) <= 1e-8 * np.linalg.norm(A)


def test_factored_cholesky_qr_basis(monkeypatch):
    """A basis from CholeskyQR2 keeps its last factor T2 apart (Q = Q1 T2^-1):
    its sketches, products and lift are those of the explicit Q.  The sketch
    here has condition number 1e5, so Q1 alone is orthonormal only to about
    1e-6 and a forgotten T2^-1 fails."""
    gen = np.random.default_rng(5)
    m, n = 400, 12
    X = np.asfortranarray(np.linalg.qr(gen.standard_normal((m, n)))[0]
                          * np.geomspace(1, 1e-5, n) @ np.linalg.qr(gen.standard_normal((n, n)))[0])
    monkeypatch.setattr(linalg_mod, "_CHOLQR_MIN_ENTRIES", 0)
    basis, T = linalg_mod.sketch_basis(X.copy(order="F"), True, np.linalg.norm(X))
    assert basis.T2 is not None
    assert np.abs(basis.Q1.T @ basis.Q1 - np.eye(n)).max() > 1e-9
    Q = np.linalg.solve(basis.T2.T, basis.Q1.T).T  # Q1 T2^-1, explicitly
    np.testing.assert_allclose(Q.T @ Q, np.eye(n), atol=1e-13)
    np.testing.assert_allclose(Q @ T, X, atol=1e-13)
    S = sl.CountSketch(30, m, rng=1)
    np.testing.assert_allclose(basis.rows(S), S @ Q, atol=1e-13)
    Y = gen.standard_normal((5, m))
    np.testing.assert_allclose(basis.times(Y @ basis.Q1), Y @ Q, atol=1e-12)
    Z = gen.standard_normal((n, 4))
    np.testing.assert_allclose(basis.lift(Z), Q @ Z, atol=1e-13)
    monkeypatch.setattr(linalg_mod, "_CHOLQR_MIN_ENTRIES", 1 << 40)
    monkeypatch.setattr(linalg_mod, "_CHOLQR_TALL_MIN_ENTRIES", 1 << 40)
    householder, _ = linalg_mod.sketch_basis(X.copy(order="F"), True, np.linalg.norm(X))
    assert householder.T2 is None and householder.rows(S).shape == (30, n)


@pytest.mark.parametrize("narrow", [False, True])
@pytest.mark.parametrize("overwrite", [True, False])
def test_one_round_cholesky_qr_basis(monkeypatch, overwrite, narrow):
    """A well-conditioned sketch (condition number 3) needs one Cholesky
    pass: the basis is the sketch itself with the one factor, Q = X T^-1,
    orthonormal to working precision; its lift leaves a sketch the caller
    keeps (overwrite=False) untouched.  Condition number 20 takes the two
    passes, or Householder's QR for a sketch of few columns (``narrow``,
    where CholeskyQR2 does not pay)."""
    gen = np.random.default_rng(6)
    m, n = 500, 10
    U0 = np.linalg.qr(gen.standard_normal((m, n)))[0]
    W0 = np.linalg.qr(gen.standard_normal((n, n)))[0]
    if narrow:
        monkeypatch.setattr(linalg_mod, "_CHOLQR_MIN_ENTRIES", 1 << 40)
        monkeypatch.setattr(linalg_mod, "_CHOLQR_TALL_MIN_ENTRIES", 0)
        assert not linalg_mod._cholesky_qr_pays((m, n)) and linalg_mod._one_round_pays((m, n))
    else:
        monkeypatch.setattr(linalg_mod, "_CHOLQR_MIN_ENTRIES", 0)
    for cond, one_round in ((3.0, True), (20.0, False)):
        X = np.asfortranarray(U0 * np.geomspace(1, 1 / cond, n) @ W0)
        kept = X.copy(order="F")
        basis, T = linalg_mod.sketch_basis(X, overwrite, np.linalg.norm(X))
        if narrow and not one_round:  # Householder's
            assert basis.T2 is None
            np.testing.assert_allclose(basis.Q1.T @ basis.Q1, np.eye(n), atol=1e-14)
            np.testing.assert_allclose(basis.Q1 @ T, kept, atol=1e-14)
            continue
        assert basis.T2 is not None and np.array_equal(basis.Q1, kept) == one_round
        if one_round:  # no pass over X after its Gram matrix
            assert basis.Q1 is X
            np.testing.assert_array_equal(basis.T2, T)
            assert basis.spare == overwrite
        Q = np.linalg.solve(basis.T2.T, basis.Q1.T).T
        np.testing.assert_allclose(Q.T @ Q, np.eye(n), atol=1e-14)
        np.testing.assert_allclose(Q @ T, kept, atol=1e-14)
        S = sl.CountSketch(30, m, rng=1)
        np.testing.assert_allclose(basis.rows(S), S @ Q, atol=1e-13)
        Z = gen.standard_normal((n, 4))
        np.testing.assert_allclose(basis.lift(Z), Q @ Z, atol=1e-13)
        if not overwrite:
            np.testing.assert_array_equal(X, kept)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("e", [-900, 900])
def test_cholesky_qr_at_extreme_scales(method, e, dense_input, monkeypatch):
    """A scaled by 2**e (exact) through the CholeskyQR2 path: where ||A||_F
    is far from 1 the sketch is scanned and scaled before its Gram matrix
    is formed (no fallback to Householder's QR), so the SVD is the unscaled
    one times 2**e."""
    kw = dict(kind="gaussian", rng=3, rank=5)
    monkeypatch.setattr(linalg_mod, "_CHOLQR_MIN_ENTRIES", 0)
    want = run(method, dense_input, 5, **kw)
    calls = []
    cholesky_qr = linalg_mod.cholesky_qr
    monkeypatch.setattr(linalg_mod, "cholesky_qr",
                        lambda *a, **k: _record_basis_qr(calls, cholesky_qr, a, k))
    U, s, Vt = run(method, np.ldexp(dense_input, e), 5, **kw)
    assert calls and all(qr is not None for qr in calls)
    assert_same_svd((U, np.ldexp(s, -e), Vt), want, 1e-10)


@pytest.mark.parametrize("method", METHODS)
def test_sparse_rank_k_matrix_recovered(method):
    k = 5
    X = sparse_matrix(300, k, 0.5, seed=1)
    Y = sparse_matrix(k, 200, 0.3, seed=2)
    A = (X @ Y).tocsr()
    U, s, Vt = run(method, A, k, kind="countsketch", rng=4, axis=0, block_size=64)
    assert sl.lowrank_residual(A, U, s, Vt) <= 1e-8 * sp.linalg.norm(A)


@pytest.mark.parametrize("method", METHODS)
def test_outputs_are_an_svd(method, dense_input):
    U, s, Vt = run(method, dense_input, 5, rng=2)
    q = s.shape[0]
    np.testing.assert_allclose(U.T @ U, np.eye(q), atol=1e-12)
    np.testing.assert_allclose(Vt @ Vt.T, np.eye(q), atol=1e-12)
    assert (np.diff(s) <= 0).all() and (s >= 0).all()


@pytest.mark.parametrize("method", METHODS)
def test_float32_in_float32_out(method, dense_input):
    A32 = dense_input.astype(np.float32)
    U, s, Vt = run(method, A32, 5, rng=2)
    assert U.dtype == s.dtype == Vt.dtype == np.float32
    U0, s0, Vt0 = run(method, dense_input, 5, rng=2)
    np.testing.assert_allclose(product(U, s, Vt), product(U0, s0, Vt0), atol=1e-4 * s0[0])


@pytest.mark.parametrize("method", METHODS)
def test_zero_matrix_gives_zero_singular_values(method):
    U, s, Vt = run(method, sp.csr_matrix((40, 30)), 3, rng=0)
    assert np.all(s == 0)
    np.testing.assert_allclose(U.T @ U, np.eye(s.shape[0]), atol=1e-12)


def test_same_seed_same_result_and_defaults(dense_input):
    U, s, Vt = sl.fast_sp_svd(dense_input, 5, rng=7)
    U2, s2, Vt2 = sl.fast_sp_svd(dense_input, 5, rng=np.random.default_rng(7))
    assert s.shape == (5,)  # k components by default
    np.testing.assert_array_equal(s, s2)
    assert sl.fast_sp_svd(dense_input, 5, rng=7, rank=10)[1].shape == (10,)  # c = r = 2k
    assert sl.practical_sp_svd(dense_input, 5, rng=1, rank=11)[1].shape == (11,)  # c = 2k + 1
    assert sl.three_sketch_svd(dense_input, 5, rng=1, rank=21)[1].shape == (21,)  # c = 4k + 1


def test_size_rules():
    assert svd_mod.practical_sp_svd_sizes(60, 10) == (19, 41)
    assert svd_mod.practical_sp_svd_sizes(30, 10) == (10, 20)
    c, r, s_c, s_r = svd_mod.three_sketch_svd_sizes(40 * 2500 + 340**2, (2000, 500), 10)
    assert (c, s_c) == (76, 160)
    # k' (m + n) + s^2 stays within the budget, and s >= 2k' + 1
    assert c * 2500 + s_c**2 <= 40 * 2500 + 340**2 and s_c >= 2 * c + 1
    with pytest.raises(ValueError, match="below k"):
        svd_mod.three_sketch_svd_sizes(5 * 2500, (2000, 500), 10)


@pytest.mark.parametrize("method", METHODS)
def test_bit_identical_for_any_number_of_numba_threads(method):
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 Numba threads")
    # blocks above the size under which the kernels stay on one thread
    inputs = (low_rank_plus_noise(400, 300, 12, 0.1, seed=1), sparse_matrix(400, 300, 0.3, seed=2))
    before = numba.get_num_threads()
    outs = {}
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            outs[threads] = [run(method, A, 5, kind=kind, rng=1, block_size=150)
                             for A in inputs for kind in ("osnap-gaussian", "countsketch")]
    finally:
        numba.set_num_threads(before)
    for got, want in zip(outs[2], outs[1]):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


# ---- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize("func", [sl.fast_sp_svd, sl.practical_sp_svd, sl.three_sketch_svd])
def test_bad_blocks(func, dense_input):
    A = dense_input
    with pytest.raises(ValueError, match="empty iterable"):
        func(iter([]), 3, shape=A.shape)
    with pytest.raises(ValueError, match="hold 60 columns in total, but shape"):
        func(column_blocks(A, [30, 30]), 3, shape=A.shape)
    with pytest.raises(ValueError, match="more than shape"):
        func(column_blocks(A, [30, 30, 30]), 3, shape=(90, 50))
    with pytest.raises(ValueError, match="block 1 has 89 rows"):
        func(iter([A[:, :30], A[1:, 30:]]), 3, shape=A.shape)
    with pytest.raises(ValueError, match="block 0 has 70 columns, expected shape"):
        func(iter([A[:40], A[40:]]), 3, shape=(90, 71), axis=0)
    with pytest.raises(ValueError, match="shape=.* is required"):
        func(column_blocks(A, [70]), 3)
    with pytest.raises(ValueError, match="does not match"):
        func(A, 3, shape=(90, 71))
    bad = A.copy()
    bad[3, 40] = np.nan
    with pytest.raises(ValueError, match="block 1 must not contain NaN"):
        func(column_blocks(bad, [35, 35]), 3, shape=A.shape)
    with pytest.raises(ValueError, match="A must not contain NaN"):
        func(bad, 3)
    with pytest.raises(ValueError, match="block_size applies to a matrix"):
        func(column_blocks(A, [70]), 3, shape=A.shape, block_size=10)
    with pytest.raises(TypeError, match="shape must be a pair"):
        func(column_blocks(A, [70]), 3, shape=90)
    with pytest.raises(TypeError):
        func(12, 3, shape=(1, 1))
    with pytest.raises(ValueError, match="axis"):
        func(A, 3, axis=2)
    with pytest.raises(ValueError, match="range_sketch must be one of"):
        func(A, 3, range_sketch="uniform")
    with pytest.raises(ValueError, match="k must be an int in"):
        func(A, 71)


def test_bad_sizes(dense_input):
    A = dense_input
    with pytest.raises(ValueError, match="sketch sizes c = 4 and r = 8, got k = 5"):
        sl.fast_sp_svd(A, 5, c=4, r=8)
    with pytest.raises(ValueError, match=r"s_c must be an int in \[c, m\] = \[10, 90\]"):
        sl.fast_sp_svd(A, 5, c=10, r=10, s_c=9)
    with pytest.raises(ValueError, match=r"s_r must be an int in \[r, n\] = \[12, "):
        sl.three_sketch_svd(A, 5, c=10, r=12, s_r=11)
    with pytest.raises(ValueError, match="needs r >= c"):
        sl.practical_sp_svd(A, 5, c=12, r=10)
    with pytest.raises(ValueError, match="rank must be an int in"):
        sl.fast_sp_svd(A, 5, c=10, r=10, rank=11)
    with pytest.raises(ValueError, match="core_sketch must be one of"):
        sl.fast_sp_svd(A, 5, core_sketch="leverage")
    with pytest.raises(TypeError, match="c must be an int"):
        sl.fast_sp_svd(A, 5, c=10.5)


# ---- memory -------------------------------------------------------------------------


def _held_nbytes(obj, seen=None):
    """Bytes of the ndarrays an operator holds (its cached tables, etc.)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(_held_nbytes(x, seen) for x in obj)
    if isinstance(obj, sl.SketchOperator):
        return sum(_held_nbytes(v, seen) for v in vars(obj).values())
    slots = getattr(type(obj), "__slots__", ())
    return sum(_held_nbytes(getattr(obj, name, None), seen) for name in slots)


@pytest.mark.parametrize(("fmt", "range_sketch"), [
    ("dense", "osnap-gaussian"), ("csc", "osnap-gaussian"), ("csc", "countsketch"),
    ("csc", "osnap"),
])
@pytest.mark.parametrize("cholqr", [False, True])
def test_peak_memory_over_column_blocks(fmt, range_sketch, cholqr, monkeypatch):
    """SPEC 7: peak extra memory <= 1.5 x (C, R, M and the operators) + one block
    (hash range sketches add CSC blocks into C in place); also where the QRs
    of C and R^T are CholeskyQR2's (large sketches: in place, as Householder's)."""
    if cholqr:
        monkeypatch.setattr(linalg_mod, "_CHOLQR_MIN_ENTRIES", 0)
    m, n, width, k = 3000, 2000, 100, 10
    made = []
    svd_sketches = svd_mod.svd_sketches

    def recording(*args, **kwargs):
        result = svd_sketches(*args, **kwargs)
        made.append([op for pair in result[2].values() for op in pair if op is not None])
        return result

    monkeypatch.setattr(svd_mod, "svd_sketches", recording)

    def blocks():
        gen = np.random.default_rng(0)
        for _ in range(n // width):
            if fmt == "dense":
                yield gen.standard_normal((m, width))
            else:  # 200 nonzeros per column, built in CSC form directly
                step = m // 200  # one nonzero in each run of `step` rows
                rows = gen.integers(0, step, (width, 200)) + np.arange(0, m, step)
                indices = rows.astype(np.int32).ravel()
                del rows
                yield sp.csc_matrix((gen.standard_normal(width * 200), indices,
                                     np.arange(0, width * 200 + 1, 200, dtype=np.int32)),
                                    shape=(m, width))

    block_bytes = m * width * 8 if fmt == "dense" else width * 200 * 12 + (width + 1) * 4
    kw = dict(shape=(m, n), rng=0, range_sketch=range_sketch)
    sl.fast_sp_svd(blocks(), k, **kw)  # compile and warm up
    made.clear()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        U, s, Vt = sl.fast_sp_svd(blocks(), k, **kw)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    c = r = 2 * k
    s_c = s_r = math.ceil(3 * c * 2)
    sketches = 8 * (m * c + r * n + s_c * s_r)
    operators = sum(_held_nbytes(op) for op in made[0])
    bound = 1.5 * (sketches + operators) + block_bytes
    print(f"\n{fmt}: peak {peak / 1e6:.2f} MB, sketches {sketches / 1e6:.2f} MB, operators "
          f"{operators / 1e6:.2f} MB, block {block_bytes / 1e6:.2f} MB, bound {bound / 1e6:.2f} MB")
    assert U.shape == (m, k) and Vt.shape == (k, n)
    assert peak <= bound


# ---- lowrank_residual -----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["dense", "F", "csr", "csc", "coo"])
def test_lowrank_residual_matches_dense(fmt):
    gen = np.random.default_rng(0)
    A = sparse_matrix(80, 60, 0.2, seed=1)
    A = A.toarray() if fmt == "dense" else np.asfortranarray(A.toarray()) if fmt == "F" else (
        A.asformat(fmt))
    U, s, Vt = sl.fast_sp_svd(A, 5, rng=0)
    got = sl.lowrank_residual(A, U, s, Vt)
    assert got == pytest.approx(lowrank_residual_dense(A, U, s, Vt), rel=1e-12)
    # general factors: not orthonormal, signed weights
    U2, s2, Vt2 = gen.standard_normal((80, 4)), gen.standard_normal(4), gen.standard_normal((4, 60))
    got = sl.lowrank_residual(A, U2, s2, Vt2)
    assert got == pytest.approx(lowrank_residual_dense(A, U2, s2, Vt2), rel=1e-12)


def test_lowrank_residual_sums_duplicate_entries():
    A = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1]), np.array([0, 2, 3])),
                      shape=(2, 2))
    U, s, Vt = np.eye(2)[:, :1], np.array([0.5]), np.eye(2)[:1]
    assert sl.lowrank_residual(A, U, s, Vt) == pytest.approx(
        lowrank_residual_dense(A.toarray(), U, s, Vt), rel=1e-14)


@pytest.mark.parametrize("sparse", [False, True])
def test_lowrank_residual_cancellation_falls_back(sparse, monkeypatch):
    from sketchlab import _residuals as residuals

    calls = []
    direct = residuals._lowrank_direct
    monkeypatch.setattr(residuals, "_lowrank_direct",
                        lambda *a: calls.append(1) or direct(*a))
    A = low_rank_plus_noise(120, 90, 6, 0.0, seed=2)
    A += 1e-7 * sparse_matrix(120, 90, 0.1, seed=3).toarray()
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    U, s, Vt = U[:, :6], s[:6], Vt[:6]
    want = lowrank_residual_dense(A, U, s, Vt)
    assert want < 1e-6 * np.linalg.norm(A)  # the expansion alone would keep few digits
    got = sl.lowrank_residual(sp.csr_matrix(A) if sparse else A, U, s, Vt)
    assert calls and got == pytest.approx(want, rel=1e-8)
    calls.clear()
    sl.lowrank_residual(A, U[:, :3], s[:3], Vt[:3])
    assert not calls


def test_lowrank_residual_bad_input():
    A = np.ones((4, 3))
    with pytest.raises(ValueError, match=r"U must have shape \(A.shape\[0\], len\(s\)\)"):
        sl.lowrank_residual(A, np.ones((3, 2)), np.ones(2), np.ones((2, 3)))
    with pytest.raises(ValueError, match="Vt must have shape"):
        sl.lowrank_residual(A, np.ones((4, 2)), np.ones(2), np.ones((2, 4)))
    with pytest.raises(ValueError, match="s must be 1-D"):
        sl.lowrank_residual(A, np.ones((4, 2)), np.ones((2, 1)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="s must not contain NaN"):
        sl.lowrank_residual(A, np.ones((4, 1)), [np.nan], np.ones((1, 3)))
    with pytest.raises(ValueError, match="A must not contain NaN"):
        sl.lowrank_residual(np.full((4, 3), np.inf), np.ones((4, 1)), [1.0], np.ones((1, 3)))
    with pytest.raises(TypeError, match="U must be a dense array"):
        sl.lowrank_residual(A, sp.csr_matrix(np.ones((4, 1))), [1.0], np.ones((1, 3)))
    assert sl.lowrank_residual(np.zeros((4, 3)), np.zeros((4, 1)), [0.0], np.zeros((1, 3))) == 0.0


# ---- the paper's Figure "svd" ------------------------------------------------------------

SVD_GRID = (2, 3, 4, 6, 8)


def _best_rank_k_error(A, k):
    if sp.issparse(A):
        from scipy.sparse.linalg import svds

        top = svds(A, k=k, return_singular_vectors=False, tol=1e-10, random_state=0)
        norm2 = float(A.multiply(A).sum())
        return math.sqrt(norm2 - float((top**2).sum()))
    s = np.linalg.svd(A, compute_uv=False)
    return float(np.sqrt((s[k:] ** 2).sum()))


def svd_figure_rows(A, k=10, grid=SVD_GRID, seeds=range(10)):
    """Mean error ratio ||A - U S V^T||_F / ||A - A_k||_F - 1 of each method and x."""
    kind = "countsketch" if sp.issparse(A) else "gaussian"
    m, n = A.shape
    best = _best_rank_k_error(A, k)
    rows = []
    for x in grid:
        c = r = x * k // 2
        # capped at the dimensions, as the experiments' sizes (sketch sizes above them
        # are refused since round two)
        s_c = min(m, math.ceil(3 * c * math.sqrt(x)))
        s_r = min(n, math.ceil(3 * r * math.sqrt(x)))
        c_p, r_p = svd_mod.practical_sp_svd_sizes(c + r, k)
        sizes_3 = svd_mod.three_sketch_svd_sizes(m * c + n * r + s_c * s_r, (m, n), k)
        runs = {
            "fast": lambda seed: sl.fast_sp_svd(A, k, c=c, r=r, s_c=s_c, s_r=s_r, range_sketch=kind,
                                                core_sketch=kind, rng=seed),
            "practical": lambda seed: sl.practical_sp_svd(A, k, c=c_p, r=r_p, range_sketch=kind,
                                                          rng=seed),
            "practical c=r": lambda seed: sl.practical_sp_svd(A, k, c=c, r=r, range_sketch=kind,
                                                              rng=seed),
            "three-sketch": lambda seed: sl.three_sketch_svd(
                A, k, c=sizes_3[0], r=sizes_3[1], s_c=sizes_3[2], s_r=sizes_3[3],
                range_sketch=kind, core_sketch=kind, rng=seed),
        }
        for name, fn in runs.items():
            ratios = [sl.lowrank_residual(A, *fn(seed)) / best - 1 for seed in seeds]
            rows.append((x, name, float(np.mean(ratios))))
        rows.append((x, "sizes", (c, r, s_c, s_r, c_p, r_p, sizes_3)))
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("filename", ["madelon.xz", "dna.scale.xz", "mushrooms.xz",
                                      "debian-tfidf.svm.xz"])
def test_fast_sp_svd_beats_practical_on_real_data(filename, load_libsvm):
    X, _ = load_libsvm(filename)
    A = X.tocsr() if filename.startswith("debian") else X.toarray()
    rows = svd_figure_rows(A)
    table = {(x, name): v for x, name, v in rows}
    print(f"\n{filename} {A.shape}")
    for x in SVD_GRID:
        print(f"x={x}: " + ", ".join(f"{name} {table[x, name]:+.4f}" for name in
                                     ("fast", "practical", "practical c=r", "three-sketch"))
              + f"  sizes (c, r, s_c, s_r, c_p, r_p, three) = {table[x, 'sizes']}")
    for x in SVD_GRID:
        assert table[x, "fast"] < table[x, "practical"]
        assert table[x, "fast"] < table[x, "practical c=r"]


@pytest.mark.kernels  # the sketches' compiled loops
def test_fast_sp_svd_with_square_sketches_is_exact():
    A = np.random.default_rng(1).standard_normal((50, 40))
    for func in (sl.fast_sp_svd, sl.practical_sp_svd, sl.three_sketch_svd):
        for seed in range(5):
            U, s, Vt = func(A, 40, rng=seed)
            assert np.linalg.norm(A - (U * s) @ Vt) <= 1e-10 * np.linalg.norm(A)


def test_huge_sketch_sizes_are_refused_fast():
    with pytest.raises(ValueError, match=r"c must be an int in \[1, 40\]"):
        sl.practical_sp_svd(np.ones((50, 40)), 2, c=10**7, r=10**7)


# ---- from the fuzz suite (tests/test_fuzz.py): the bugs it found, every option once --


@pytest.mark.kernels  # from the fuzz suite: reaches the compiled loops
@pytest.mark.parametrize("name", ["fast_sp_svd", "practical_sp_svd", "three_sketch_svd"])
@pytest.mark.parametrize("e", [-1000, 1000])
def test_svd_precision_at_extreme_scales(name, e):
    """fast_sp_svd of a matrix scaled by 2**-1000 (entries near 1e-301) lost
    about 9 digits: the Householder QR of its range sketch squared entries
    near underflow.  Now every single-pass SVD is exact under scaling by a
    power of two, to rounding."""
    A = base_dense((6, 5), 0)
    f = getattr(sl, name)
    U, s, Vt = f(2.0**e * A, 2, rng=3)
    U1, s1, Vt1 = f(A, 2, rng=3)
    assert np.allclose(np.ldexp((U * s) @ Vt, -e), (U1 * s1) @ Vt1, rtol=0,
                       atol=1e-13 * s1.max())


@pytest.mark.kernels  # from the fuzz suite: reaches the compiled loops
@pytest.mark.parametrize("name, e", [("fast_sp_svd", -600), ("practical_sp_svd", -1000),
                                     ("practical_sp_svd", 600), ("three_sketch_svd", 1000)])
def test_extreme_scale_svd_tol(name, e):
    """tol= picks the same rank at any scale (||A||_F^2 used to under/overflow:
    tiny matrices got another rank, huge ones a broadcasting error)."""
    A = base_dense((8, 6), 1)
    f = getattr(sl, name)
    U, s, Vt = f(2.0**e * A, 2, tol=0.3, rng=3)
    U1, s1, Vt1 = f(A, 2, tol=0.3, rng=3)
    assert s.shape == s1.shape and np.allclose(np.ldexp(s, -e), s1, rtol=1e-8)
