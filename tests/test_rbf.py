"""RBFKernel: blocks against sklearn's rbf_kernel and explicit differences,
counting, indexing, the array oracle and bad input."""

import math

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics.pairwise import rbf_kernel

import sketchlab as sl
from sketchlab._engine import kernels as rbf_module
from sketchlab._kernel_matrices import as_kernel

from ._support import FORMS, as_form, kernel_points
from .reference import rbf_dense

TOL = {np.float64: 1e-12, np.float32: 2e-6}


@pytest.fixture(params=["densify", "csr-rows", "csr-kernel", "no-copies"])
def sparse_path(request, monkeypatch):
    """Run the sparse cases through each Gram route: dense copies and BLAS,
    sparse rows against dense columns, the sparse product, and (no dense
    copies allowed) scipy's product of sparse and dense points."""
    if request.param == "no-copies":
        monkeypatch.setattr(rbf_module, "DENSIFY_MAX_ENTRIES", 0)
    if request.param == "densify":
        monkeypatch.setattr(rbf_module, "_CSR_ROWS_MAX_DENSITY", 0.0)
    if request.param == "csr-rows":
        monkeypatch.setattr(rbf_module, "_CSR_ROWS_MAX_DENSITY", 2.0)
    if request.param == "csr-kernel":
        monkeypatch.setattr(rbf_module, "_DENSIFY_MIN_DENSITY", 2.0)
    return request.param


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("form", FORMS)
def test_blocks_equal_sklearn(form, dtype, sparse_path):
    X = kernel_points(40, 7, dtype, seed=1, density=0.6, repeat=(3, 1))
    gamma = 0.3
    K = sl.RBFKernel(as_form(X, form), gamma)
    ref = rbf_kernel(X.astype(np.float64), gamma=gamma)
    rng = np.random.default_rng(2)
    rows, cols = rng.integers(0, 40, 25), rng.integers(0, 40, 13)
    keys = [(rows, cols), (slice(None), cols), (slice(5, 30), slice(None)),
            (slice(None, None, 3), rows), (np.arange(40), np.arange(40))]
    for key in keys:
        block = K[key]
        assert block.dtype == dtype
        want = ref[key[0]][:, key[1]]
        np.testing.assert_allclose(block, want, rtol=0, atol=TOL[dtype])
    full = K.toarray()
    np.testing.assert_allclose(full, rbf_dense(X, gamma), rtol=0, atol=TOL[dtype])
    assert np.all(np.diagonal(full) == 1.0)  # exactly
    assert abs(full[1, 3] - 1.0) <= TOL[dtype]  # repeated point, clamped distance


@given(
    n=st.integers(1, 12),
    d=st.integers(1, 6),
    density=st.sampled_from([0.0, 0.3, 1.0]),
    sparse=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_blocks_equal_explicit_differences(n, d, density, sparse, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < density)
    gamma = float(rng.uniform(0.01, 2.0))
    K = sl.RBFKernel(sp.csr_matrix(X) if sparse else X, gamma)
    rows = rng.integers(-n, n, rng.integers(0, 2 * n + 1))
    cols = rng.integers(0, n, rng.integers(0, 2 * n + 1))
    block = K[rows, cols]
    assert block.shape == (rows.size, cols.size)
    ref = rbf_dense(X, gamma)
    np.testing.assert_allclose(block, ref[rows][:, cols], rtol=0, atol=1e-12)
    assert K.n_evaluated == rows.size * cols.size


def test_csr_kernel_on_real_sparse_data(load_libsvm, monkeypatch):
    X, _ = load_libsvm("dna.scale.xz")
    K = sl.RBFKernel(X, 0.04)
    rows = np.arange(0, 2000, 7)
    cols = np.arange(3, 2000, 11)
    want = rbf_kernel(X[rows], X[cols], gamma=0.04)
    np.testing.assert_allclose(K[rows, cols], want, rtol=0, atol=1e-12)
    for name, value in [("_CSR_ROWS_MAX_DENSITY", 0.0),  # dense copies and BLAS
                        ("_DENSIFY_MIN_DENSITY", 2.0)]:  # the sparse product
        monkeypatch.setattr(rbf_module, name, value)
        np.testing.assert_allclose(K[rows, cols], want, rtol=0, atol=1e-12)


def test_index_forms_and_shapes():
    X = kernel_points(10, 3, np.float64, seed=3, density=1.0, repeat=(3, 1))
    K = sl.RBFKernel(X, 0.5)
    ref = rbf_dense(X, 0.5)
    assert K.shape == (10, 10) and K.ndim == 2 and K.dtype == np.float64
    assert K[2, 5] == pytest.approx(ref[2, 5], abs=1e-14)
    np.testing.assert_allclose(K[2], ref[2], atol=1e-14)
    np.testing.assert_allclose(K[:, -1], ref[:, 9], atol=1e-14)
    np.testing.assert_allclose(K[[-1, 0], 4:6], ref[[9, 0]][:, 4:6], atol=1e-14)
    mask = np.arange(10) % 3 == 0
    np.testing.assert_allclose(K[mask, mask], ref[np.ix_(mask, mask)], atol=1e-14)
    np.testing.assert_allclose(K[::-2, [1]], ref[::-2][:, [1]], atol=1e-14)
    assert K[[], :].shape == (0, 10) and K[5:2, 1:3].shape == (0, 2)
    assert K[np.array([], dtype=np.int64), []].shape == (0, 0)


def test_counting_and_reset():
    X = kernel_points(20, 4, np.float64, seed=4, density=1.0, repeat=(3, 1))
    K = sl.RBFKernel(X, 1.0)
    assert K.n_evaluated == 0
    K[:, [1, 2, 3]]
    K[4, 5]
    K[[1, 1, 1], [2, 2]]
    assert K.n_evaluated == 20 * 3 + 1 + 6
    np.testing.assert_array_equal(K.diagonal(), np.ones(20))
    assert K.n_evaluated == 67  # the RBF diagonal is known, not evaluated
    K.cross(np.zeros((5, 4)), [0, 1])
    assert K.n_evaluated == 77
    assert K.reset_count() == 77 and K.n_evaluated == 0
    K.toarray()
    assert K.n_evaluated == 400
    blocks = list(K.row_blocks(block_rows=6))
    assert [b.shape for _, b in blocks] == [(6, 20), (6, 20), (6, 20), (2, 20)]
    assert [i0 for i0, _ in blocks] == [0, 6, 12, 18]
    assert K.n_evaluated == 800


@pytest.mark.parametrize("xform", ["dense", "csr"])
@pytest.mark.parametrize("yform", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cross_equals_sklearn(xform, yform, dtype, sparse_path):
    X = kernel_points(15, 5, dtype, seed=5, density=0.5, repeat=(3, 1))
    Y = kernel_points(9, 5, dtype, seed=6, density=0.5, repeat=(3, 1))
    K = sl.RBFKernel(sp.csr_matrix(X) if xform == "csr" else X, 0.7)
    cols = np.array([0, 4, 14, 4])
    out = K.cross(sp.csr_matrix(Y) if yform == "csr" else Y, cols)
    assert out.dtype == dtype
    want = rbf_kernel(Y.astype(np.float64), X[cols].astype(np.float64), gamma=0.7)
    np.testing.assert_allclose(out, want, rtol=0, atol=TOL[dtype])
    with pytest.raises(ValueError, match="Y must have 5 columns"):
        K.cross(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="Y must not contain NaN"):
        K.cross(np.full((2, 5), np.nan))


def test_same_bits_for_one_and_two_threads(sparse_path):
    X = kernel_points(300, 20, np.float64, seed=7, density=0.3, repeat=(3, 1))
    Xs = sp.csr_matrix(X)
    rows = np.random.default_rng(8).integers(0, 300, 200)
    old = numba.get_num_threads()
    results = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            results.append((sl.RBFKernel(X, 0.1)[rows, :], sl.RBFKernel(Xs, 0.1)[rows, :]))
    finally:
        numba.set_num_threads(old)
    for a, b in zip(results[0], results[1]):
        np.testing.assert_array_equal(a, b)


def test_array_oracle_wraps_and_counts():
    X = kernel_points(12, 3, np.float64, seed=9, density=1.0, repeat=(3, 1))
    Kd = rbf_dense(X, 0.4)
    K = as_kernel(Kd)
    assert as_kernel(K) is K
    np.testing.assert_array_equal(K[[1, 2], 3:5], Kd[[1, 2]][:, 3:5])
    np.testing.assert_array_equal(K.diagonal(), np.diagonal(Kd))
    assert K.n_evaluated == 4 + 12  # a precomputed diagonal is read, so counted
    K32 = as_kernel(Kd.astype(np.float32))
    assert K32.dtype == np.float32 and K32[:, :].dtype == np.float32


def test_array_oracle_rejects_bad_matrices():
    Kd = rbf_dense(kernel_points(6, 2, np.float64, seed=10, density=1.0, repeat=(3, 1)), 1.0)
    with pytest.raises(ValueError, match="K must be a square matrix"):
        as_kernel(Kd[:, :4])
    bad = Kd.copy()
    bad[0, 1] += 1e-3
    with pytest.raises(ValueError, match="K must be symmetric"):
        as_kernel(bad)
    bad[0, 1] = np.nan
    with pytest.raises(ValueError, match="K must not contain NaN"):
        as_kernel(bad)
    with pytest.raises(TypeError, match="K must be a kernel oracle"):
        as_kernel(sp.csr_matrix(Kd))
    with pytest.raises(ValueError, match="K must be 2-D"):
        as_kernel(np.ones(3))
    with pytest.raises(TypeError, match="numeric"):
        as_kernel(np.array([["a"]], dtype=object))


@pytest.mark.parametrize("gamma", [0, -1.0, np.inf, np.nan])
def test_bad_gamma(gamma):
    with pytest.raises(ValueError, match="gamma must be a finite number > 0"):
        sl.RBFKernel(np.ones((3, 2)), gamma)


def test_bad_points_and_indices():
    with pytest.raises(TypeError, match="gamma must be a positive number"):
        sl.RBFKernel(np.ones((3, 2)), "big")
    with pytest.raises(ValueError, match="X must not contain NaN or Inf"):
        sl.RBFKernel(np.array([[0.0, np.inf]]), 1.0)
    with pytest.raises(ValueError, match="X must not contain NaN or Inf"):
        sl.RBFKernel(sp.csr_matrix(np.array([[0.0, np.nan]])), 1.0)
    with pytest.raises(ValueError, match="at least one row"):
        sl.RBFKernel(np.ones((0, 3)), 1.0)
    with pytest.raises(ValueError, match="X must be 2-D"):
        sl.RBFKernel(np.ones(3), 1.0)
    K = sl.RBFKernel(np.ones((4, 2)), 1.0)
    with pytest.raises(IndexError, match="row index 4 is out of bounds"):
        K[4, 0]
    with pytest.raises(IndexError, match="column index -5 is out of bounds"):
        K[0, [0, -5]]
    with pytest.raises(IndexError, match="1-D array of ints"):
        K[[0.5], 0]
    with pytest.raises(IndexError, match="boolean index must have shape"):
        K[np.array([True, False]), 0]
    with pytest.raises(IndexError, match="1 or 2 indices"):
        K[0, 0, 0]
    assert K.n_evaluated == 0


# ---- extreme scales and offsets ---------------------------------------------
# ||x||^2 + ||y||^2 - 2 x.y cancels when points lie far from the origin next to
# their spread, and overflows (or underflows) at extreme scales.  The reference
# takes the explicit differences x_i - y_j in float64 (exact for nearby values)
# and divides them by the known scale before squaring, so that it neither
# cancels nor overflows.


def rbf_scaled_reference(X, Y, gamma, scale):
    X = np.asarray(sp.csr_matrix(X).toarray() if sp.issparse(X) else X, dtype=np.float64)
    Y = np.asarray(sp.csr_matrix(Y).toarray() if sp.issparse(Y) else Y, dtype=np.float64)
    diff = (X[:, None, :] - Y[None, :, :]) / scale
    return np.exp(-((gamma * scale) * scale) * np.einsum("ijk,ijk->ij", diff, diff))


def offset_points(n, d, scale, offset, seed, dtype=np.float64):
    """Points scale * (offset + z), z standard normal, one repeated."""
    rng = np.random.default_rng(seed)
    X = scale * (offset + rng.standard_normal((n, d)))
    X[3 % n] = X[1 % n]
    return X.astype(dtype)


def check_kernel_values(block, want, atol):
    assert not np.isnan(block).any()
    assert block.min() >= 0.0 and block.max() <= 1.0
    np.testing.assert_allclose(block, want, rtol=0, atol=atol)


def test_far_from_origin_is_not_all_ones():
    # the case that gave a matrix of ones: every distance lost to cancellation
    want = np.exp(-np.array([[0.0, 0.25, 1.0], [0.25, 0.0, 0.25], [1.0, 0.25, 0.0]]))
    X = np.array([[1e9], [1e9 + 0.5], [1e9 + 1.0]])
    for form in (X, sp.csr_matrix(X)):
        K = sl.RBFKernel(form, gamma=1.0)
        np.testing.assert_allclose(K.toarray(), want, rtol=1e-15, atol=0)
        np.testing.assert_allclose(K.cross(X - 0.25), np.exp(-np.array(
            [[0.0625, 0.5625, 1.5625], [0.0625, 0.0625, 0.5625], [0.5625, 0.0625, 0.0625]])),
            rtol=1e-15, atol=0)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("scale", [1e-150, 1e-100, 1e-20, 1.0, 1e20, 1e100, 1e150])
@pytest.mark.parametrize("offset", [0.0, 1e3, 1e6, 1e12])
def test_extreme_scales_and_offsets(scale, offset, form, sparse_path):
    X = offset_points(20, 4, scale, offset, seed=11)
    Y = offset_points(7, 4, scale, offset, seed=12)
    gamma = 0.3 / scale**2  # values of exp(-0.3 |z_i - z_j|^2): neither 0 nor 1
    Xf = sp.csr_matrix(X) if form == "csr" else X
    K = sl.RBFKernel(Xf, gamma)
    full = K.toarray()
    check_kernel_values(full, rbf_scaled_reference(X, X, gamma, scale), 1e-12)
    assert np.all(np.diagonal(full) == 1.0)
    assert full[1, 3] == 1.0  # a repeated point, off the diagonal
    rows, cols = [0, 5, 19, 3], [2, 3, 3, 17, 1]
    # a few ulps, not bit equality: the block and the whole matrix take the
    # Gram products x_i . x_j through BLAS (GEMM, or scipy's sparse-dense
    # product) on operands of different shapes, and OpenBLAS's kernels
    # (Haswell, SkylakeX, ...) block and round those sums differently
    check_kernel_values(K[rows, cols], full[np.ix_(rows, cols)], 4 * np.finfo(np.float64).eps)
    for Yf in (Y, sp.csr_matrix(Y)):
        check_kernel_values(K.cross(Yf, cols), rbf_scaled_reference(Y, X[cols], gamma, scale),
                            1e-12)
    assert K.n_evaluated == 400 + 20 + 2 * 7 * 5


@pytest.mark.parametrize("scale", [1e-30, 1.0, 1e30])
@pytest.mark.parametrize("offset", [0.0, 1e3, 1e6])
def test_extreme_scales_float32(scale, offset):
    X = offset_points(15, 3, scale, offset, seed=13, dtype=np.float32)
    gamma = 0.5 / (float(np.std(X.astype(np.float64) - X.astype(np.float64).mean(0))) ** 2)
    ref = rbf_scaled_reference(X, X, gamma, scale)
    for form in (X, sp.csr_matrix(X)):
        K = sl.RBFKernel(form, gamma)
        block = K.toarray()
        assert block.dtype == np.float32
        check_kernel_values(block, ref, 2e-6)
        assert np.all(np.diagonal(block) == 1.0)


def test_near_duplicates_at_moderate_scale():
    # no offset to center away: two points 1e-7 apart among unit-size points,
    # with a gamma that makes their entry neither 0 nor 1
    rng = np.random.default_rng(14)
    X = rng.standard_normal((30, 8))
    X[7] = X[2] + 1e-7 * rng.standard_normal(8)
    gamma = 1.0 / float(np.sum((X[7] - X[2]) ** 2))
    for form in (X, sp.csr_matrix(X)):
        K = sl.RBFKernel(form, gamma)
        check_kernel_values(K[[2, 7], [7, 2]], rbf_scaled_reference(X[[2, 7]], X[[7, 2]],
                                                                     gamma, 1.0), 1e-12)
        assert K[2, 7] == pytest.approx(np.exp(-1.0), rel=1e-9)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("form", ["dense", "csr"])
def test_no_nan_at_the_ends_of_the_float_range(form):
    big = np.finfo(np.float64).max
    X = np.array([[big, 0.0], [-big, 0.0], [big, 1e-150], [1e-300, -1e-310], [0.0, 0.0]])
    cases = [
        (5e-324, None),  # the smallest gamma: distances near 2 * max give exp(-huge) = 0
        (1e300, 1e-150),  # huge points that differ by 1e-150: exp(-1e300 * 1e-300)
        (big, None),
    ]
    for gamma, _ in cases:
        K = sl.RBFKernel(sp.csr_matrix(X) if form == "csr" else X, gamma)
        full = K.toarray()
        assert not np.isnan(full).any() and full.min() >= 0 and full.max() <= 1
        assert np.all(np.diagonal(full) == 1.0)
        assert full[0, 1] == 0.0  # the difference overflows: the distance is beyond 2**1024
        cross = K.cross(np.array([[big, 5e-151], [-1e300, 1e300]]))
        assert not np.isnan(cross).any() and cross.min() >= 0 and cross.max() <= 1
    K = sl.RBFKernel(X, 1e300)
    assert K[0, 2] == pytest.approx(np.exp(-1.0), rel=1e-14)
    assert K.cross(np.array([[big, 5e-151]]), [0])[0, 0] == pytest.approx(
        np.exp(-0.25), rel=1e-14)
    # tiny points: 1e-300 and 0 differ by sqrt(1e-600 + 1e-620); with gamma at
    # the top of the range the value is exp(-big * 1e-600) = 1
    assert K[3, 4] == 1.0
    K = sl.RBFKernel(np.array([[1e-154], [3e-154], [0.0]]), 2.5e307)
    np.testing.assert_allclose(K[0], np.exp(-2.5e307 * np.array([0.0, 4e-308, 1e-308])),
                               rtol=1e-13)
    # new points far outside the oracle's scale (they overflow in its frame)
    for Xf in (np.array([[1e-150], [2e-150]]), sp.csr_matrix([[1e-150], [2e-150]])):
        K = sl.RBFKernel(Xf, 1e300)
        for Y in (np.array([[3e-150], [1e300], [-big]]), sp.csr_matrix([[3e-150], [1e300]])):
            got = K.cross(Y)
            np.testing.assert_allclose(got[0], np.exp([-4.0, -1.0]), rtol=1e-14)
            assert np.all(got[1:] == 0.0)


@pytest.mark.filterwarnings("error::RuntimeWarning")
@given(
    n=st.integers(2, 10),
    d=st.integers(1, 5),
    log_scale=st.integers(-150, 150),
    log_offset=st.integers(0, 12),
    sparse=st.booleans(),
    density=st.sampled_from([0.5, 1.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_extreme_scales_property(n, d, log_scale, log_offset, sparse, density, seed):
    rng = np.random.default_rng(seed)
    scale, offset = 10.0**log_scale, 10.0**log_offset * rng.choice([-1.0, 0.0, 1.0])
    Z = rng.standard_normal((n, d)) * (rng.random((n, d)) < density)
    X = scale * (offset + Z)
    Y = scale * (offset + rng.standard_normal((3, d)))
    gamma = float(rng.uniform(0.05, 2.0)) / scale**2
    K = sl.RBFKernel(sp.csr_matrix(X) if sparse else X, gamma)
    full = K.toarray()
    check_kernel_values(full, rbf_scaled_reference(X, X, gamma, scale), 1e-12)
    assert np.all(np.diagonal(full) == 1.0)
    check_kernel_values(K.cross(sp.csr_matrix(Y) if sparse else Y),
                        rbf_scaled_reference(Y, X, gamma, scale), 1e-12)
    assert K.n_evaluated == n * n + 3 * n


def test_sparse_points_stay_sparse():
    # sparse X far from the origin (one feature near 1e8) is not centered,
    # which would densify it: the exact recomputation gives its entries
    rng = np.random.default_rng(15)
    X = sp.random(60, 200, density=0.02, random_state=16, format="lil")
    X[:, 7] = 1e8 + rng.standard_normal((60, 1))
    X = X.tocsr()
    K = sl.RBFKernel(X, 0.5)
    assert sp.issparse(K._points.X) and K._points.center is None
    check_kernel_values(K.toarray(), rbf_scaled_reference(X, X, 0.5, 1.0), 1e-12)
    Y = sp.csr_matrix(offset_points(5, 200, 1.0, 0.0, seed=17))
    check_kernel_values(K.cross(Y), rbf_scaled_reference(Y, X, 0.5, 1.0), 1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_points_stored_densely_are_centered(dtype):
    # a CSR matrix holding every entry (as LIBSVM files of dense data load):
    # its dense copy is no larger, so it is centered like dense points, and
    # new points too (dense, or sparse and as full)
    X = offset_points(40, 6, 1.0, 1e6, seed=18, dtype=dtype)
    Y = offset_points(9, 6, 1.0, 1e6, seed=19, dtype=dtype)
    K = sl.RBFKernel(sp.csr_matrix(X), 0.2)
    assert K._points.center is not None and not sp.issparse(K._points.X)
    assert repr(K) == f"RBFKernel(<sparse 40x6 {np.dtype(dtype)}>, gamma=0.2)"
    tol = TOL[dtype]
    check_kernel_values(K.toarray(), rbf_scaled_reference(X, X, 0.2, 1.0), tol)
    for Yf in (Y, sp.csr_matrix(Y)):
        check_kernel_values(K.cross(Yf, [0, 39]), rbf_scaled_reference(Y, X[[0, 39]], 0.2, 1.0),
                            tol)


def test_exact_kernels_on_marked_entries():
    # the recomputation kernels alone: only entries marked -1 are written, a
    # difference that overflows gives 0, a zero one 1, tiny and huge ones
    # are scaled before squaring
    from sketchlab._engine._jit.rbf import rbf_exact_csr, rbf_exact_dense

    big = np.finfo(np.float64).max
    XA = np.array([[big, 0.0], [1e-200, 3e-200], [1e160, 0.0]])
    XB = np.array([[-big, 0.0], [1e-200, 3e-200], [0.0, 0.0], [1e160, 2e159]])
    rows, cols = np.arange(3, dtype=np.int64), np.arange(4, dtype=np.int64)
    gamma = 1e-320  # subnormal: gamma ||x - y||^2 of order 1 needs ||x - y|| near 1e160
    m, e = np.frexp(gamma)
    g1, g2 = (gamma * 1e160) * 1e160, (gamma * 2e159) * 2e159
    want = np.array([
        [0.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 1.0, np.exp(-(g1 + g2))],  # exp(-gamma 1e-399) = 1
        [0.0, np.exp(-g1), np.exp(-g1), np.exp(-g2)],
    ])
    for form in ("dense", "csr"):
        out = np.full((3, 4), -1.0)
        out[1, 0] = 0.5  # not marked: left alone
        if form == "dense":
            rbf_exact_dense(XA, rows, XB, cols, np.array([0, 1, 2]), float(m), int(e), out)
        else:
            A, B = sp.csr_matrix(XA), sp.csr_matrix(XB)
            rbf_exact_csr(A.indptr, A.indices, A.data, rows, B.indptr, B.indices, B.data, cols,
                          np.array([0, 1, 2]), float(m), int(e), out)
        expected = want.copy()
        expected[1, 0] = 0.5
        np.testing.assert_allclose(out, expected, rtol=1e-13, atol=0)


@pytest.mark.parametrize("empty", [[0], [2], [3, 4], [0, 4], [0, 1, 2, 3, 4]])
def test_sparse_empty_rows_anywhere(empty, sparse_path):
    X = kernel_points(5, 4, np.float64, seed=20, density=1.0, repeat=(3, 1))
    X[empty] = 0.0
    K = sl.RBFKernel(sp.csr_matrix(X), 0.4)
    np.testing.assert_allclose(K.toarray(), rbf_dense(X, 0.4), rtol=0, atol=1e-14)
    np.testing.assert_allclose(K.cross(sp.csr_matrix(X[::-1])), rbf_dense(X[::-1], 0.4, X),
                               rtol=0, atol=1e-14)


def test_vectorized_exp_within_one_ulp_of_libm():
    # the kernels' exp(-x) (range reduction and a polynomial, vectorized)
    # against numpy's (libm's) over [0, 745] and beyond; marks (-1) are kept
    from sketchlab._engine._jit.rbf import exp_neg

    rng = np.random.default_rng(21)
    E = np.concatenate([
        np.linspace(0.0, 745.2, 200_001), rng.random(50_000) * 2.0, rng.exponential(30.0, 50_000),
        np.ldexp(1.0, -np.arange(1075)),
        [np.log(2) / 2, np.nextafter(np.log(2) / 2, 1.0), 708.0, np.nextafter(708.0, 1e3), 708.4,
         709.0, 745.13, 746.0, 1e10, np.inf, -1.0],
    ])
    out = np.empty((2, E.size))
    exp_neg(np.vstack([E, E[::-1]]), out)
    for values, got in ((E, out[0]), (E[::-1], out[1])):
        marks = values < 0
        assert np.all(got[marks] == -1.0)
        # libm's exp (math.exp), not numpy's: numpy 1.24's AVX-512 exp is itself
        # up to 2 ulps off on machines that have those instructions
        want = np.array([math.exp(-v) for v in values[~marks].tolist()])
        ulps = np.abs(got[~marks] - want) / np.spacing(np.maximum(want, 5e-324))
        assert ulps.max() <= 1.0
    assert out[0, 0] == 1.0 and out[0, -2] == 0.0  # exp(-0) and exp(-inf) exactly


@pytest.mark.parametrize("form", ["dense", "csr"])
def test_integer_points_far_from_origin_give_the_same_entry_in_any_block(form):
    # integer features near 480 (as madelon's): centered on a rounded mean,
    # the centered points and their Gram products stay exact, so an entry is
    # the same whichever block computes it
    rng = np.random.default_rng(22)
    X = np.round(480 + 40 * rng.standard_normal((120, 30)))
    K = sl.RBFKernel(sp.csr_matrix(X) if form == "csr" else X, 1e-4)
    assert K._points.center is not None
    full = K.toarray()
    cols = rng.choice(120, 17, replace=False)
    np.testing.assert_array_equal(K[:, cols], full[:, cols])
    np.testing.assert_array_equal(K[np.ix_(cols)[0], cols], full[np.ix_(cols, cols)])
    np.testing.assert_array_equal(K.cross(X[:9], cols), full[:9][:, cols])
    check_kernel_values(full, rbf_scaled_reference(X, X, 1e-4, 1.0), 1e-13)


def test_rbf_kernel_far_from_the_origin():
    X = np.array([[1e9], [1e9 + 0.5], [1e9 + 1]])
    K = sl.RBFKernel(X, gamma=1.0).toarray()
    np.testing.assert_allclose(K[0], [1.0, np.exp(-0.25), np.exp(-1.0)], rtol=1e-14)
    K = sl.RBFKernel(np.array([[1e160], [2e160]]), gamma=1e-320).toarray()
    assert np.isfinite(K).all()


@pytest.mark.parametrize("shape", [(1, 1), (70, 130), (300, 65)])
def test_transpose_into_a_strided_block(shape):
    """The tiled transpose of the symmetric Gram's mirror, into a block of a
    larger array (as _symmetric_gram writes it), for edge tiles too."""
    from sketchlab._engine._jit.rbf import transpose_into

    src = np.random.default_rng(2).standard_normal(shape)
    big = np.zeros((shape[1] + 9, shape[0] + 5))
    transpose_into(src, big[4:4 + shape[1], 2:2 + shape[0]])
    np.testing.assert_array_equal(big[4:4 + shape[1], 2:2 + shape[0]], src.T)
    assert np.count_nonzero(big) == np.count_nonzero(src)
