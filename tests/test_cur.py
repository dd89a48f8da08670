"""CUR decomposition and the selections it shares with the kernel landmarks."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import sketchlab as sl
from sketchlab._cur import CUR_CORES
from sketchlab._selection import CUR_SELECTIONS, LANDMARKS

from ._support import base_dense, unsorted_duplicates
from .reference import numpy_pinv


def rank5(m=120, n=90, seed=0):
    gen = np.random.default_rng(seed)
    return gen.standard_normal((m, 5)) @ gen.standard_normal((5, n))


@pytest.mark.parametrize("select", CUR_SELECTIONS)
@pytest.mark.parametrize("core", CUR_CORES)
@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
def test_rank_five_matrix_is_recovered_exactly(select, core, fmt):
    A = rank5()
    X = {"dense": A, "csr": sp.csr_matrix(A), "csc": sp.csc_matrix(A)}[fmt]
    d = sl.cur(X, 10, select=select, core=core, rng=1)
    assert d.columns.size == 10 and d.rows.size == 10
    assert np.unique(d.columns).size == 10 and np.unique(d.rows).size == 10
    np.testing.assert_allclose(d.toarray(), A, rtol=0, atol=1e-10 * np.abs(A).max())
    assert d.error(X) <= 1e-10 * np.linalg.norm(A)


def test_columns_and_rows_are_real_and_stay_sparse():
    A = sp.random(400, 300, density=0.05, format="csr", random_state=2)
    d = sl.cur(A, 20, 15, rng=0)
    assert sp.issparse(d.C) and d.C.format == "csc" and sp.issparse(d.R) and d.R.format == "csr"
    np.testing.assert_array_equal(d.C.toarray(), A[:, d.columns].toarray())
    np.testing.assert_array_equal(d.R.toarray(), A[d.rows].toarray())
    assert d.U.shape == (20, 15) and d.shape == (400, 300)
    dense = d.toarray()
    np.testing.assert_allclose(d.error(A), np.linalg.norm(A.toarray() - dense), rtol=1e-10)
    op = d.aslinearoperator()
    x = np.random.default_rng(3).standard_normal(300)
    np.testing.assert_allclose(op @ x, dense @ x, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(op.T @ np.ones(400), dense.T @ np.ones(400), rtol=1e-10,
                               atol=1e-12)


def test_cores_against_their_definitions():
    gen = np.random.default_rng(4)
    A = rank5(200, 150) + 0.1 * gen.standard_normal((200, 150))
    exact = sl.cur(A, 12, core="exact", rng=5)
    C, R = exact.C, exact.R
    np.testing.assert_allclose(exact.U, numpy_pinv(C) @ A @ numpy_pinv(R), rtol=1e-8,
                               atol=1e-10)
    cross = sl.cur(A, 12, k=5, core="cross", rng=5)
    W = A[np.ix_(cross.rows, cross.columns)]
    u, s, vt = np.linalg.svd(W)
    W5 = (u[:, :5] * s[:5]) @ vt[:5]  # the rank-k truncation of the intersection
    np.testing.assert_allclose(cross.U, numpy_pinv(W5), rtol=1e-8, atol=1e-10)
    # the full pseudo-inverse amplifies the noise beyond rank k
    full = np.linalg.norm(A - cross.C @ numpy_pinv(W) @ cross.R)
    assert cross.error(A) < full
    fast = sl.cur(A, 12, core="fast", rng=5)
    assert fast.error(A) <= 1.1 * exact.error(A)  # a = 10: error ratio well below 0.1


def test_estimate_and_checks():
    A = rank5() + 0.01 * np.random.default_rng(6).standard_normal((120, 90))
    d = sl.cur(A, 10, rng=0, estimate_error=True)
    assert 0.5 < d.error_estimate.value / d.error(A) < 2
    with pytest.raises(ValueError, match=r"c must be an int in \[1, 90\]"):
        sl.cur(A, 91)
    with pytest.raises(ValueError, match=r"r must be an int in \[1, 120\]"):
        sl.cur(A, 10, 0)
    with pytest.raises(ValueError, match="select must be one of"):
        sl.cur(A, 10, select="random")
    with pytest.raises(ValueError, match="core must be one of"):
        sl.cur(A, 10, core="slow")
    with pytest.raises(ValueError, match=r"A must have shape \(120, 90\)"):
        d.error(A[:10])


@pytest.mark.parametrize("select", ["approx-leverage", "uniform", "deim"])
@pytest.mark.parametrize("core", ["fast", "cross"])
def test_the_plan_through_sketch_states_is_cur(select, core):
    """CUR's plan run pass by pass through SketchState updates (as a stream or
    the dask front runs it) gives cur's decomposition: same indices, and the
    core and estimate to rounding (the explicit formula for the fast core)."""
    from sketchlab._cur import cur_plan

    gen = np.random.default_rng(8)
    A = rank5(150, 110) + 0.05 * gen.standard_normal((150, 110))
    want = sl.cur(A, 12, 9, select=select, core=core, rng=4, estimate_error=True)
    plan = cur_plan(A.shape, 12, 9, select=select, core=core, rng=4, estimate_error=True)
    first = plan.selection_sketches()
    arrays = None
    if first is not None:
        arrays = sl.SketchState(A.shape, first).update(A).finalize()
    columns, rows = plan.choose(arrays)
    np.testing.assert_array_equal(columns, want.columns)
    np.testing.assert_array_equal(rows, want.rows)
    sketches = plan.gather_sketches(columns, rows)
    assert set(sketches) == {"C", "R", "probe"} | ({"core"} if core == "fast" else set())
    state = sl.SketchState(A.shape, sketches)
    for i0 in range(0, 150, 40):  # row blocks, as a stream
        state.update(A[i0:i0 + 40], (i0, 0))
    parts = state.finalize()
    np.testing.assert_array_equal(parts["C"], A[:, columns])
    np.testing.assert_array_equal(parts["R"], A[rows])
    got = plan.recover(parts, columns, rows, norm=state.norm)
    if core == "fast":  # (S_C C)^+ (S_C A S_R^T) (R S_R^T)^+, dense
        S_C, S_R = (S.toarray() for S in sketches["core"])
        C, R = A[:, columns], A[rows]
        explicit = numpy_pinv(S_C @ C) @ (S_C @ A @ S_R.T) @ numpy_pinv(R @ S_R.T)
        np.testing.assert_allclose(got.U, explicit, rtol=1e-8, atol=1e-10 * np.abs(explicit).max())
    np.testing.assert_allclose(got.U, want.U, rtol=1e-10, atol=1e-12 * np.abs(want.U).max())
    assert got.error_estimate.value == pytest.approx(want.error_estimate.value, rel=1e-10)


def test_fast_core_sizes_are_checked_as_fast_gmr_checks_them():
    A = rank5()
    with pytest.raises(ValueError, match=r"sketch_size\[0\] \(s_c\) must be an int in \[1, 120\]"):
        sl.cur(A, 10, sketch_size=(121, 20))
    with pytest.warns(sl.UnderdeterminedSketchWarning):
        sl.cur(A, 10, sketch_size=5, rng=0)
    assert sl.cur(A, 10, core="cross", sketch_size=10**6, rng=0).U.shape == (10, 10)


def test_selection_is_deterministic_given_rng():
    A = sp.random(300, 200, density=0.05, format="csr", random_state=7)
    for select in CUR_SELECTIONS:
        d1, d2 = sl.cur(A, 15, select=select, rng=3), sl.cur(A, 15, select=select, rng=3)
        np.testing.assert_array_equal(d1.columns, d2.columns)
        np.testing.assert_array_equal(d1.rows, d2.rows)


# ---- kernel landmarks -------------------------------------------------------------


def clusters(n=5000, seed=0):
    """5,000 points at 6 locations, 95% at one, 1% at each other: a rank-6 kernel."""
    gen = np.random.default_rng(seed)
    locations = gen.standard_normal((6, 3)) * 3
    label = np.concatenate([np.zeros(n - 250, int), np.repeat(np.arange(1, 6), 50)])
    return locations[label]


def test_rpcholesky_nystrom_is_exact_on_a_rank_six_kernel():
    X = clusters()
    for seed in range(5):
        K = sl.RBFKernel(X, gamma=0.5)
        approx = sl.nystrom(K, 10, landmarks="rpcholesky", rng=seed)
        assert approx.error(K) <= 1e-8
        assert approx.n_evaluated <= (10 + 1) * 5000 + 10 ** 3
    uniform = [sl.nystrom(sl.RBFKernel(X, gamma=0.5), 10, rng=seed).error(
        sl.RBFKernel(X, gamma=0.5)) for seed in range(5)]
    assert min(uniform) > 0.01  # uniform landmarks miss the small clusters


@pytest.mark.parametrize("landmarks", LANDMARKS)
@pytest.mark.parametrize("method", ["nystrom", "fast", "faster", "optimal"])
def test_every_method_takes_every_landmark_kind(landmarks, method):
    X = np.random.default_rng(1).standard_normal((300, 3))
    K = sl.RBFKernel(X, gamma=0.5)
    call = {"nystrom": lambda: sl.nystrom(K, 15, landmarks=landmarks, rng=0),
            "fast": lambda: sl.fast_spsd(K, 15, 60, landmarks=landmarks, rng=0),
            "faster": lambda: sl.faster_spsd(K, 15, 60, landmarks=landmarks, rng=0),
            "optimal": lambda: sl.optimal_spsd(K, 15, landmarks=landmarks, rng=0)}[method]
    approx = call()
    assert np.unique(approx.columns).size == 15
    np.testing.assert_allclose(approx.C, K.toarray()[:, approx.columns], rtol=0, atol=1e-12)
    assert approx.n_evaluated == K.n_evaluated - 300 * 300  # every entry counted
    # rpcholesky evaluates the b x b blocks of its candidate pivots (b <= c,
    # at most c blocks)
    selection = {"uniform": 0, "rpcholesky": 15 ** 3, "ridge-leverage": 300 * 15}[landmarks]
    base = {"nystrom": 300 * 15, "fast": 300 * 15 + 60 ** 2, "faster": 300 * 15 + 60 ** 2,
            "optimal": 300 * 15 + 300 ** 2}[method]
    assert base <= approx.n_evaluated <= base + selection
    with pytest.raises(ValueError, match="landmarks must be one of"):
        sl.nystrom(K, 5, landmarks="kmeans")


# ---- from the fuzz suite (tests/test_fuzz.py): the bugs it found, every option once --


@pytest.mark.kernels  # from the fuzz suite: reaches the compiled loops
@pytest.mark.parametrize("select", ["approx-leverage", "deim", "pivoted-qr", "leverage"])
@pytest.mark.parametrize("e", [-1000, -600, 600])
def test_cur_selection_at_extreme_scales(select, e):
    """cur on a matrix scaled by 2**-1000 or 2**+-600 picks the columns and rows
    it picks unscaled (the sketches' Gram matrices used to under- or overflow:
    select='deim' raised IndexError, 'approx-leverage' chose others), and its
    reconstruction scales with A."""
    A = base_dense((6, 5))
    want = sl.cur(A, 2, select=select, rng=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warnings on the way either
        got = sl.cur(2.0**e * A, 2, select=select, rng=4)
    assert np.array_equal(got.columns, want.columns) and np.array_equal(got.rows, want.rows)
    assert np.allclose(np.ldexp(got.toarray(), -e), want.toarray(), rtol=0,
                       atol=1e-12 * np.abs(A).max())


@pytest.mark.kernels  # from the fuzz suite: reaches the compiled loops
@pytest.mark.parametrize("core", ["fast", "exact", "cross"])
@pytest.mark.parametrize("select", ["approx-leverage", "leverage", "uniform", "deim",
                                    "pivoted-qr"])
def test_cur_every_select_and_core(select, core):
    """An unsorted CSC with duplicates gives the dense answer; C and R are
    A's columns and rows."""
    D = base_dense((9, 7), 5)
    A = unsorted_duplicates(sp.csc_matrix(D))
    got = sl.cur(A, 3, select=select, core=core, rng=1, estimate_error=True)
    want = sl.cur(D, 3, select=select, core=core, rng=1, estimate_error=True)
    assert np.array_equal(got.columns, want.columns) and np.array_equal(got.rows, want.rows)
    C = got.C.toarray() if sp.issparse(got.C) else got.C
    R = got.R.toarray() if sp.issparse(got.R) else got.R
    assert np.allclose(C, D[:, got.columns]) and np.allclose(R, D[got.rows])
    assert np.allclose(got.toarray(), C @ got.U @ R, atol=1e-12)
    assert np.allclose(got.toarray(), want.toarray(), rtol=1e-8, atol=1e-10)
    assert np.isclose(got.error_estimate.value, want.error_estimate.value, rtol=1e-8)
