"""The linear map (sketchlab._linear_map): every form of A passes the same
adjoint test against its dense form (pylops' ``dottest``), and the products
do not depend on the thread count."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import aslinearoperator
from sklearn.metrics.pairwise import rbf_kernel

import sketchlab as sl
from sketchlab._linear_map import LinearMap, as_linear_map, centered, from_checked

from ._support import on_one_and_two_threads


def _forms():
    """name -> (build the map, its dense form)."""
    gen = np.random.default_rng(3)
    D = gen.standard_normal((37, 23))
    S = sp.random(41, 29, density=0.2, format="csr", random_state=np.random.default_rng(4))
    X = gen.standard_normal((31, 4))
    K = rbf_kernel(X, gamma=0.3)
    forms = {
        "dense-c": (lambda: D, D),
        "dense-f": (lambda: np.asfortranarray(D), D),
        "dense-float32": (lambda: D.astype(np.float32), D.astype(np.float32)),
        "csr": (lambda: S, S.toarray()),
        "csc": (lambda: S.tocsc(), S.toarray()),
        "coo": (lambda: S.tocoo(), S.toarray()),
        "csr-float32": (lambda: S.astype(np.float32), S.toarray().astype(np.float32)),
        "linear-operator": (lambda: aslinearoperator(S), S.toarray()),
        "kernel-tiles": (lambda: as_linear_map(sl.RBFKernel(X, 0.3)), K),
        "kernel-recomputed": (lambda: as_linear_map(sl.RBFKernel(X, 0.3), cache_bytes=0), K),
        "transposed": (lambda: as_linear_map(D).T, D.T),
        "centered-dense": (lambda: centered(as_linear_map(D)), D - D.mean(axis=0)),
        "centered-csr": (lambda: centered(as_linear_map(S)), S.toarray() - S.toarray().mean(axis=0)),
    }
    try:
        import dask.array as da

        forms["dask"] = (lambda: da.from_array(D, chunks=(10, 12)), D)
    except ImportError:  # pragma: no cover - dask is in the test extra
        pass
    return forms


FORMS = _forms()


@pytest.mark.parametrize("name", sorted(FORMS))
def test_products_match_the_dense_form_and_pass_the_adjoint_test(name):
    build, dense = FORMS[name]
    A = as_linear_map(build(), scheduler="sync")
    m, n = dense.shape
    assert A.shape == (m, n)
    assert A.dtype == (np.float32 if dense.dtype == np.float32 else np.float64)
    tol = 1e-5 if A.dtype == np.float32 else 1e-12
    gen = np.random.default_rng(5)
    X, Y = gen.standard_normal((n, 3)), gen.standard_normal((m, 3))
    dense64 = dense.astype(np.float64)
    scale = np.abs(dense64).max() * max(m, n)
    np.testing.assert_allclose(A.matmat(X), dense64 @ X, atol=tol * scale * 10)
    np.testing.assert_allclose(A.rmatmat(Y), dense64.T @ Y, atol=tol * scale * 10)
    np.testing.assert_allclose(A.normal(X), dense64.T @ (dense64 @ X),
                               atol=tol * scale ** 2 * 10)
    # the adjoint test: <A x, y> = <x, A^T y>
    x, y = X[:, 0], Y[:, 0]
    assert A.matvec(x).shape == (m,) and A.rmatvec(y).shape == (n,)
    left, right = float(A.matvec(x) @ y), float(x @ A.rmatvec(y))
    assert abs(left - right) <= tol * 100 * (abs(left) + 1)
    assert A.matvecs == 3 + 3 + 6 + 2 + 2
    norm2 = A.frobenius2()
    if callable(norm2):  # a dask A sums it in its first pass
        norm2 = norm2()
    if norm2 is not None:
        np.testing.assert_allclose(norm2, np.sum(dense64 ** 2), rtol=1e-5)
    diag = A.diagonal()
    if diag is not None:
        np.testing.assert_allclose(diag, np.diagonal(dense64), rtol=1e-6, atol=1e-12)
    op = A.aslinearoperator()
    np.testing.assert_allclose(op @ x, dense64 @ x, atol=tol * scale * 10)


@pytest.mark.parametrize("name", ["dense-c", "csr", "linear-operator", "kernel-tiles"])
def test_products_write_into_a_given_block_of_any_layout(name):
    build, dense = FORMS[name]
    A = as_linear_map(build())
    m, n = dense.shape
    X = np.random.default_rng(6).standard_normal((n, 2))
    buf = np.full((m, 5), np.nan, order="F")
    out = buf[:, 1:3]
    got = A.matmat(X, out=out)
    assert np.shares_memory(got, buf)
    np.testing.assert_allclose(buf[:, 1:3], dense @ X, atol=1e-10)
    assert np.isnan(buf[:, [0, 3, 4]]).all()


def test_a_linear_map_is_returned_as_it_is_and_from_checked_skips_the_check():
    D = np.ones((4, 3))
    A = as_linear_map(D)
    assert as_linear_map(A) is A
    assert isinstance(from_checked(D), LinearMap) and from_checked(D).entries is D


@pytest.mark.parametrize("bad, error, match", [
    (np.array([[1.0, np.nan]]), ValueError, "NaN or Inf"),
    (np.array([["a"]], dtype=object), TypeError, "numeric"),
    (np.ones(3), ValueError, "2-D"),
])
def test_bad_input_is_refused_with_the_parameter_name(bad, error, match):
    with pytest.raises(error, match=match):
        as_linear_map(bad, "A")


def test_a_linear_operator_whose_products_are_bad_is_refused():
    from scipy.sparse.linalg import LinearOperator

    bad = LinearOperator((4, 3), matvec=lambda x: np.full(4, np.nan),
                         rmatvec=lambda y: np.zeros(3), dtype=np.float64)
    A = as_linear_map(bad)
    with pytest.raises(ValueError, match="not finite"):
        A.matmat(np.ones((3, 1)))
    wrong = LinearOperator((4, 3), matvec=lambda x: np.zeros(5), rmatvec=lambda y: np.zeros(3),
                           dtype=np.float64)
    with pytest.raises(ValueError, match="shape"):
        as_linear_map(wrong).matvec(np.ones(3))
    with pytest.raises(TypeError, match="real"):
        as_linear_map(LinearOperator((2, 2), matvec=lambda x: x, dtype=np.complex128))


@pytest.mark.kernels
@pytest.mark.parametrize("name", ["dense-c", "dense-f", "csr", "csc", "kernel-tiles"])
def test_products_are_the_same_for_any_thread_count(name):
    gen = np.random.default_rng(7)
    if name.startswith("dense"):  # more rows than a chunk: the chunked products
        A = gen.standard_normal((20000, 30))
        A = A if name == "dense-c" else np.asfortranarray(A)
    elif name.startswith("kernel"):
        A = sl.RBFKernel(gen.standard_normal((2300, 3)), 0.5)
    else:
        A = sp.random(20000, 300, density=0.02, format=name,
                      random_state=np.random.default_rng(8))
    def products():
        M = as_linear_map(A)
        X = np.random.default_rng(9).standard_normal((M.shape[1], 4))
        Y = np.random.default_rng(10).standard_normal((M.shape[0], 4))
        return M.matmat(X), M.rmatmat(Y), M.normal(X)

    got = on_one_and_two_threads(products)
    for a, b in zip(*got):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cache_mb", [64.0, 10.0, 0.0])  # tiles / some rows / none stored
def test_kernel_map_is_k_times_v(cache_mb):
    """A kernel's map: the lower block triangle in 2,048-row tiles when it
    fits (exactly symmetric), else the first rows stored and the others
    recomputed; K V to rounding, the same bits for 1 and 2 threads."""
    from sketchlab._kernel_matrices import kernel_oracle

    rng = np.random.default_rng(12)
    X = rng.standard_normal((2100, 6))
    V = rng.standard_normal((2100, 3))
    want = rbf_kernel(X, gamma=0.2) @ V
    def product():
        op = as_linear_map(kernel_oracle(X, "rbf", gamma=0.2), cache_bytes=cache_mb * 2**20)
        return op, op.matmat(V)

    (_, first), (op, second) = on_one_and_two_threads(product)
    got = [first, second]
    assert op.symmetric and op.psd
    assert (op.tiles is not None) == (cache_mb == 64.0)
    assert op.cached == {64.0: 2100, 10.0: 624, 0.0: 0}[cache_mb]
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_allclose(got[0], want, rtol=0, atol=1e-11 * np.abs(want).max())
    if op.tiles is not None:  # the stored diagonal blocks are exactly symmetric
        for (r0, r1), T in zip(op.spans, op.tiles):
            np.testing.assert_array_equal(T[:, r0:r1], T[:, r0:r1].T)


def test_scaled_and_astype_give_new_maps_of_the_entries():
    D = np.random.default_rng(1).standard_normal((5, 4))
    A = as_linear_map(D)
    assert A.astype(np.float64) is A
    np.testing.assert_array_equal(A.astype(np.float32).entries, D.astype(np.float32))
    np.testing.assert_array_equal(A.scaled(-3).entries, D / 8)
    S = as_linear_map(sp.csr_matrix(D))
    np.testing.assert_array_equal(S.scaled(5).entries.toarray(), D * 32)
    # a map known by its products: the products scaled (exactly)
    P = as_linear_map(aslinearoperator(D)).scaled(-2)
    X, Y = np.ones((4, 2)), np.ones((5, 3))
    np.testing.assert_array_equal(P.matmat(X), D @ X / 4)
    np.testing.assert_array_equal(P.rmatmat(Y), D.T @ Y / 4)
    np.testing.assert_array_equal(P.normal(X), D.T @ (D @ X) / 16)
    assert P.entries is None and P.shape == (5, 4)


def test_a_kernel_map_is_psd_only_where_its_formula_says_so():
    X = np.random.default_rng(0).standard_normal((40, 3))
    assert as_linear_map(sl.RBFKernel(X, 0.5)).psd is True
    assert as_linear_map(sl.PairwiseKernel(X, "linear")).psd is True
    assert as_linear_map(sl.PairwiseKernel(X, "sigmoid")).psd is False
    assert as_linear_map(sl.PairwiseKernel(X, "poly", coef0=-1.0)).psd is False
    assert as_linear_map(sl.PairwiseKernel(X, lambda a, b: a @ b.T)).psd is None
