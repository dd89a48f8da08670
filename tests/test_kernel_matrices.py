"""PairwiseKernel and kernel_oracle: every kernel of sklearn's
PAIRWISE_KERNEL_FUNCTIONS against sklearn's pairwise_kernels on the full
dense float64 matrix, dense and sparse X, float32 and float64; counting,
parameters and defaults as sklearn's Nystroem takes them, and bad input."""

import sys

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import KERNEL_PARAMS, PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels

import sketchlab as sl
from sketchlab import _kernel_matrices as km
from sketchlab._kernel_matrices import PairwiseKernel, kernel_oracle

from ._support import kernel_points

KERNELS = sorted(PAIRWISE_KERNEL_FUNCTIONS)
# parameters away from the defaults, for the kernels that take them
PARAMS = {
    "chi2": dict(gamma=0.7),
    "poly": dict(gamma=0.2, degree=2, coef0=0.5),
    "polynomial": dict(gamma=0.3, degree=4, coef0=-0.25),
    "rbf": dict(gamma=0.4),
    "laplacian": dict(gamma=0.6),
    "sigmoid": dict(gamma=0.05, coef0=-0.3),
}
RTOL = {np.float64: 1e-12, np.float32: 2e-6}


def close(block, want, dtype):
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(block, want, rtol=RTOL[dtype], atol=RTOL[dtype] * scale)


def test_kernel_table_is_sklearns():
    assert set(km._KERNEL_PARAMS) == set(PAIRWISE_KERNEL_FUNCTIONS)
    for name, params in km._KERNEL_PARAMS.items():
        assert set(params) == set(KERNEL_PARAMS[name]), name


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("explicit", [False, True])
@pytest.mark.parametrize("kernel", KERNELS)
def test_blocks_equal_sklearn(kernel, explicit, form, dtype):
    params = PARAMS.get(kernel, {}) if explicit else {}
    X = kernel_points(30, 6, dtype, seed=1, nonnegative=kernel in km._CHI2, empty=2)
    ref = pairwise_kernels(X.astype(np.float64), metric=kernel, **params)
    K = PairwiseKernel(sp.csr_matrix(X) if form == "csr" else X, kernel, **params)
    assert K.shape == (30, 30) and K.dtype == dtype
    rng = np.random.default_rng(2)
    rows, cols = rng.integers(-30, 30, 17), rng.integers(0, 30, 9)
    count = 0
    for key in [(rows, cols), (slice(None), cols), (slice(4, 20), slice(None)),
                (slice(None, None, 4), rows), (np.arange(30), np.arange(30))]:
        block = K[key]
        assert block.dtype == dtype and block.flags.c_contiguous
        close(block, ref[key[0]][:, key[1]], dtype)
        count += block.size
    assert K.n_evaluated == count
    close(K.toarray(), ref, dtype)
    Y = kernel_points(8, 6, dtype, seed=3, nonnegative=kernel in km._CHI2, empty=2)
    want = pairwise_kernels(Y.astype(np.float64), X[cols].astype(np.float64), metric=kernel,
                            **params)
    for Yf in (Y, sp.csr_matrix(Y)):
        out = K.cross(Yf, cols)
        assert out.dtype == dtype
        close(out, want, dtype)
    assert K.n_evaluated == count + 900 + 2 * 8 * 9


def with_duplicates(X):
    """The same matrix as CSR arrays with each entry split in two, unsorted."""
    coo = sp.coo_matrix(X)
    rows, cols = np.tile(coo.row, 2), np.tile(coo.col, 2)
    data = np.concatenate([coo.data / 2, coo.data - coo.data / 2])
    order = np.lexsort((np.random.default_rng(0).random(rows.size), rows))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=X.shape[0]))])
    A = sp.csr_matrix((data[order], cols[order], indptr), shape=X.shape)
    assert not A.has_canonical_format
    return A


@pytest.mark.parametrize("form", ["dense", "csr", "csr-duplicates"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_diagonal_and_its_count(kernel, form):
    params = PARAMS.get(kernel, {})
    X = kernel_points(12, 4, np.float64, seed=4, nonnegative=kernel in km._CHI2, empty=2)
    Xf = {"dense": X, "csr": sp.csr_matrix(X), "csr-duplicates": with_duplicates(X)}[form]
    K = PairwiseKernel(Xf, kernel, **params)
    close(K.toarray(), pairwise_kernels(X, metric=kernel, **params), np.float64)
    K.reset_count()
    diag = K.diagonal()
    close(diag, np.diagonal(pairwise_kernels(X, metric=kernel, **params)), np.float64)
    known = kernel in ("rbf", "laplacian", "chi2", "additive_chi2")
    assert K.n_evaluated == (0 if known else 12)


def test_default_parameters_are_sklearns():
    X = kernel_points(10, 4, np.float64, seed=5, nonnegative=True, empty=2)
    assert PairwiseKernel(X).params == {"gamma": 0.25}
    assert PairwiseKernel(X, "poly").params == {"gamma": 0.25, "degree": 3.0, "coef0": 1.0}
    assert PairwiseKernel(X, "sigmoid").params == {"gamma": 0.25, "coef0": 1.0}
    assert PairwiseKernel(X, "laplacian").params == {"gamma": 0.25}
    assert PairwiseKernel(X, "chi2").params == {"gamma": 1.0}
    assert PairwiseKernel(X, "cosine").params == {}
    for kernel in KERNELS:  # sklearn's own defaults give the same matrix
        np.testing.assert_allclose(PairwiseKernel(X, kernel).toarray(),
                                   pairwise_kernels(X, metric=kernel), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("form", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rbf_is_rbfkernel(form, dtype):
    X = kernel_points(25, 5, dtype, seed=6, empty=2)
    Xf = sp.csr_matrix(X) if form == "csr" else X
    P, R = PairwiseKernel(Xf, gamma=0.3), sl.RBFKernel(Xf, 0.3)
    np.testing.assert_array_equal(P.toarray(), R.toarray())
    Y = kernel_points(6, 5, dtype, seed=7, empty=2)
    np.testing.assert_array_equal(P.cross(Y, [1, 4]), R.cross(Y, [1, 4]))
    np.testing.assert_array_equal(P.diagonal(), R.diagonal())
    assert P.n_evaluated == R.n_evaluated == 625 + 12
    # far from the origin too: the RBF path's cancellation guard
    Z = np.array([[1e9], [1e9 + 0.5], [1e9 + 1.0]])
    np.testing.assert_allclose(PairwiseKernel(Z, gamma=1.0)[0], np.exp([0.0, -0.25, -1.0]),
                               rtol=1e-15)


@pytest.mark.parametrize("kind", ["rbf", "rbf-csr", "rbf-f32", "laplacian", "far"])
def test_rows_into_is_indexing(kind):
    """``rows_into(rows, out)`` writes ``K[rows, :]`` into out (computed in
    place for dense float64 RBF points) and counts the entries."""
    dtype = np.float32 if kind == "rbf-f32" else np.float64
    X = kernel_points(40, 5, dtype, seed=8, empty=2)
    if kind == "far":  # the cancellation guard's exact recomputation, in place
        X = X + 1e9
    Xf = sp.csr_matrix(X) if kind == "rbf-csr" else X
    K = (PairwiseKernel(Xf, "laplacian", gamma=0.3) if kind == "laplacian"
         else sl.RBFKernel(Xf, 0.3))
    rows = np.array([3, 0, 39, 3])
    out = np.full((4, 40), np.nan, dtype=K.dtype)
    K.rows_into(rows, out)
    assert K.n_evaluated == 160
    np.testing.assert_array_equal(out, K[rows, :])
    # a Fortran-ordered array's transposed block, as RPCholesky passes it
    F = np.zeros((40, 6), order="F", dtype=K.dtype)
    K.rows_into(rows, F[:, 1:5].T)
    np.testing.assert_array_equal(F[:, 1:5], K[:, rows])
    assert not F[:, [0, 5]].any()


def test_kernel_oracle():
    X = kernel_points(9, 3, np.float64, seed=8, empty=2)
    K = kernel_oracle(X)
    assert type(K) is sl.RBFKernel and K.gamma == pytest.approx(1 / 3)
    assert type(kernel_oracle(X, "rbf", kernel_params={"gamma": 0.2})) is sl.RBFKernel
    assert kernel_oracle(X, "rbf", kernel_params={"gamma": 0.2}).gamma == 0.2
    for kernel in ("linear", "poly", "cosine"):
        K = kernel_oracle(X, kernel, gamma=0.5, degree=2, coef0=0.0)
        assert type(K) is PairwiseKernel
        want = pairwise_kernels(X, metric=kernel, filter_params=True, gamma=0.5, degree=2,
                                coef0=0.0)
        np.testing.assert_allclose(K.toarray(), want, rtol=1e-12, atol=1e-12)
    # rbf with gamma = 0 (allowed by sklearn): a matrix of ones
    K = kernel_oracle(X, "rbf", gamma=0)
    assert type(K) is PairwiseKernel
    np.testing.assert_array_equal(K.toarray(), np.ones((9, 9)))
    with pytest.raises(ValueError, match="gamma must be a finite number >= 0"):
        kernel_oracle(X, "rbf", gamma=-1.0)


def test_explicit_parameters_win_and_others_are_ignored():
    # as sklearn's Nystroem: gamma/degree/coef0 override kernel_params, and a
    # kernel ignores the ones it does not take
    X = kernel_points(8, 3, np.float64, seed=9, empty=2)
    K = PairwiseKernel(X, "poly", gamma=0.5, kernel_params={"gamma": 2.0, "degree": 2})
    assert K.params == {"gamma": 0.5, "degree": 2.0, "coef0": 1.0}
    assert PairwiseKernel(X, "linear", gamma=0.5, degree=2, coef0=3).params == {}
    assert PairwiseKernel(X, "sigmoid", degree=7).params == {"gamma": 1 / 3, "coef0": 1.0}


def test_callable_kernel():
    def kernel(x, y, width=1.0):
        return float(np.exp(-np.abs(np.asarray(x) - np.asarray(y)).sum() / width))

    X = kernel_points(7, 3, np.float64, seed=10, empty=2)
    want = pairwise_kernels(X, metric=kernel, width=2.0)
    for Xf in (X, sp.csr_matrix(X)):
        def sparse_ok(x, y, width=1.0):  # sklearn passes sparse rows of sparse points
            x, y = (v.toarray().ravel() if sp.issparse(v) else v for v in (x, y))
            return kernel(x, y, width)

        K = PairwiseKernel(Xf, sparse_ok, kernel_params={"width": 2.0})
        np.testing.assert_allclose(K.toarray(), want, rtol=1e-14)
        np.testing.assert_allclose(K[[0, 3], 1:4], want[[0, 3]][:, 1:4], rtol=1e-14)
        np.testing.assert_allclose(K.diagonal(), np.diagonal(want), rtol=1e-14)
        np.testing.assert_allclose(K.cross(X[:2], [6]), want[:2, [6]], rtol=1e-14)
        assert K.n_evaluated == 49 + 6 + 7 + 2
        assert K.params == {"width": 2.0}
    with pytest.raises(ValueError, match="gamma applies to the named kernels only"):
        PairwiseKernel(X, kernel, gamma=0.1)
    with pytest.raises(ValueError, match="coef0 applies to the named kernels only"):
        PairwiseKernel(X, kernel, coef0=0.0)


@pytest.mark.parametrize("kernel", ["chi2", "additive_chi2"])
def test_chi2_on_sparse_points_in_tiles(kernel, monkeypatch):
    # sklearn's chi2 kernels take dense points only; the oracle densifies the
    # selected rows in tiles (here 2 rows of 6 features each)
    monkeypatch.setattr(km, "DENSIFY_MAX_ENTRIES", 12)
    X = kernel_points(11, 6, np.float64, seed=11, nonnegative=True, density=0.3, empty=2)
    ref = pairwise_kernels(X, metric=kernel)
    K = PairwiseKernel(sp.csr_matrix(X), kernel)
    close(K.toarray(), ref, np.float64)
    close(K[[3, 1, 10], 2:9], ref[[3, 1, 10]][:, 2:9], np.float64)
    Y = kernel_points(5, 6, np.float64, seed=12, nonnegative=True, density=0.3, empty=2)
    close(K.cross(sp.csr_matrix(Y)), pairwise_kernels(Y, X, metric=kernel), np.float64)


def test_row_blocks_cover_the_matrix():
    X = kernel_points(13, 3, np.float64, seed=13, empty=2)
    K = PairwiseKernel(X, "laplacian", gamma=0.5)
    ref = pairwise_kernels(X, metric="laplacian", gamma=0.5)
    blocks = list(K.row_blocks(block_rows=5))
    assert [i0 for i0, _ in blocks] == [0, 5, 10]
    close(np.vstack([b for _, b in blocks]), ref, np.float64)
    assert K.n_evaluated == 169


def test_exported():
    assert "PairwiseKernel" in sl.__all__ and sl.PairwiseKernel is PairwiseKernel
    X = kernel_points(4, 2, np.float64, seed=14, empty=2)
    assert repr(PairwiseKernel(X, "poly", degree=2)) == (
        "PairwiseKernel(<dense 4x2 float64>, 'poly', gamma=0.5, degree=2.0, coef0=1.0)")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(kernel="gaussian"), ValueError, r"kernel must be one of \['additive_chi2'"),
        (dict(kernel=3), TypeError, "kernel must be one of .* or a callable, got 3"),
        (dict(kernel="precomputed"), ValueError, "kernel='precomputed' has no points"),
        (dict(kernel="rbf", gamma=-0.5), ValueError, "gamma must be a finite number >= 0"),
        (dict(kernel="rbf", gamma=np.inf), ValueError, "gamma must be a finite number"),
        (dict(kernel="rbf", gamma="big"), TypeError, "gamma must be a real number, got 'big'"),
        (dict(kernel="rbf", gamma=True), TypeError, "gamma must be a real number"),
        (dict(kernel="laplacian", gamma=0), ValueError, "gamma must be a finite number > 0"),
        (dict(kernel="chi2", gamma=0.0), ValueError, "gamma must be a finite number > 0"),
        (dict(kernel="poly", degree=0.5), ValueError, "degree must be a finite number >= 1"),
        (dict(kernel="poly", coef0=np.nan), ValueError, "coef0 must be a finite number"),
        (dict(kernel="sigmoid", kernel_params={"coef0": None, "gamma": -1}), ValueError,
         "gamma must be a finite number >= 0, got -1"),
        (dict(kernel="rbf", kernel_params={"gama": 0.1}), ValueError,
         r"kernel_params has 'gama', which the 'rbf' kernel does not take \(it takes \['gamma'\]"),
        (dict(kernel="linear", kernel_params={"gamma": 0.1}), ValueError,
         "the 'linear' kernel does not take .it takes no parameters"),
        (dict(kernel="rbf", kernel_params=[("gamma", 1.0)]), TypeError,
         "kernel_params must be a dict or None, got list"),
    ],
)
def test_bad_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        PairwiseKernel(np.ones((3, 2)), **kwargs)


def test_bad_points():
    with pytest.raises(ValueError, match="X must not contain NaN or Inf"):
        PairwiseKernel(np.array([[0.0, np.nan]]), "linear")
    with pytest.raises(ValueError, match="at least one row"):
        PairwiseKernel(np.ones((0, 3)), "cosine")
    with pytest.raises(TypeError, match="numeric"):
        PairwiseKernel(np.array([["a"]], dtype=object), "linear")
    with pytest.raises(ValueError, match="X must be non-negative for the 'chi2' kernel, got a "
                                         "minimum of -1.0"):
        PairwiseKernel(sp.csr_matrix(np.array([[0.0, -1.0]])), "chi2")
    K = PairwiseKernel(np.ones((3, 2)), "additive_chi2")
    with pytest.raises(ValueError, match="Y must be non-negative for the 'additive_chi2'"):
        K.cross(-np.ones((1, 2)))
    with pytest.raises(ValueError, match="Y must have 2 columns"):
        K.cross(np.ones((1, 3)))
    with pytest.raises(IndexError, match="row index 3 is out of bounds"):
        K[3, 0]
    assert K.n_evaluated == 0


def test_without_sklearn(monkeypatch):
    # a None entry in sys.modules makes the import fail as if not installed
    monkeypatch.setitem(sys.modules, "sklearn.metrics.pairwise", None)
    X = kernel_points(6, 2, np.float64, seed=15, empty=2)
    with pytest.raises(ImportError, match=r"pip install 'sketchlab\[sklearn\]'"):
        PairwiseKernel(X, "linear")
    K = PairwiseKernel(X, "rbf")  # the RBF path needs no sklearn
    np.testing.assert_array_equal(K.toarray(), sl.RBFKernel(X, 0.5).toarray())
