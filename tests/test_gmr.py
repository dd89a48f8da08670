"""Exact and fast generalized matrix regression (Algorithm 1, Theorems 1-2).

gmr against numpy's pinv formula; fast_gmr against the formula with every
operator materialized (``S.toarray()``), for every kind and input form; the
symmetric/PSD projections (Proposition 1); the 1/a^2 error decay on madelon;
every error path.
"""

import warnings

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import sketchlab as sl
from sketchlab import (
    UnderdeterminedSketchWarning,
    fast_gmr,
    gmr,
    project_psd,
    project_symmetric,
)
from sketchlab import gmr_error_ratio, gmr_residual

from ._kinds import KINDS as REGISTERED
from ._kinds import SPLITTABLE
from ._kinds import gmr_pair as operators
from ._support import FORMS, as_form, base_dense, gmr_problem, rel_err
from .reference import fast_gmr_explicit, gmr_pinv

EPS64 = np.finfo(np.float64).eps
KINDS = list(REGISTERED)  # every registered kind (tests/_kinds.py reads the registry)


# ---- exact GMR ----------------------------------------------------------------


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("shape", [(60, 50, 5, 4), (8, 50, 12, 4), (60, 6, 5, 9), (30, 30, 30, 30)])
def test_gmr_matches_pinv_formula(form, shape):
    m, n, c, r = shape  # includes wide C (c > m) and tall R (r > n): rank-deficient
    A, C, R = gmr_problem(m, n, c, r, seed=1)
    X = gmr(as_form(A, form), C, R)
    ref = gmr_pinv(A, C, R, max(m, c) * EPS64, max(n, r) * EPS64)
    assert X.shape == (c, r) and X.dtype == np.float64
    np.testing.assert_allclose(X, ref, rtol=0, atol=1e-10 * np.abs(ref).max())


@pytest.mark.parametrize("form", ["dense-C", "csr"])
def test_gmr_rank_deficient_has_pseudo_inverse_semantics(form):
    g = np.random.default_rng(2)
    m, n, c, r = 40, 35, 6, 5
    A = g.standard_normal((m, n))
    C = g.standard_normal((m, 3)) @ g.standard_normal((3, c))  # rank 3
    R = g.standard_normal((r, 2)) @ g.standard_normal((2, n))  # rank 2
    C[:, 4] = 0.0
    for rtol in (None, 1e-9):
        X = gmr(as_form(A, form), C, R, rtol=rtol)
        rc = max(m, c) * EPS64 if rtol is None else rtol
        rr = max(n, r) * EPS64 if rtol is None else rtol
        ref = gmr_pinv(A, C, R, rc, rr)
        np.testing.assert_allclose(X, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    # the minimum-norm minimizer: no component in the null spaces of C and R^T
    _, _, Vc = np.linalg.svd(C)
    _, _, Vr = np.linalg.svd(R.T)
    assert np.abs(Vc[3:] @ X).max() < 1e-10 * np.abs(X).max()
    assert np.abs(X @ Vr[2:].T).max() < 1e-10 * np.abs(X).max()


@pytest.mark.parametrize("trcon", [True, False], ids=["trcon", "no-trcon"])
@pytest.mark.parametrize("cond", [1.0, 1e3, 1e5, 1e8, 1e14, np.inf])
def test_solve_core_same_answer_by_cholesky_qr_or_svd(cond, trcon, monkeypatch):
    """The core takes the Cholesky QR only for factors clearly of full rank,
    and gives the truncated-SVD answer (the pseudo-inverse formula) at every
    condition number, rank-deficient factors included; the same with scipy's
    LAPACK trcon and without it (scipy 1.10 lacks it)."""
    import scipy.linalg.lapack

    from sketchlab._linalg import cholesky_qr, solve_core

    if not trcon:
        monkeypatch.delattr(scipy.linalg.lapack, "dtrcon", raising=False)

    g = np.random.default_rng(7)
    p, c = 300, 20
    U, _ = np.linalg.qr(g.standard_normal((p, c)))
    V, _ = np.linalg.qr(g.standard_normal((c, c)))
    s = np.logspace(0, -np.log10(cond), c) if np.isfinite(cond) else np.r_[np.ones(c - 3),
                                                                            np.zeros(3)]
    L = (U * s) @ V.T
    M = g.standard_normal((p, 50))
    Rr = g.standard_normal((15, 50))
    qr = cholesky_qr(L)
    assert (qr is not None) == (cond <= 1e5)
    if qr is not None:
        Q, T = qr
        np.testing.assert_allclose(Q.T @ Q, np.eye(c), atol=1e-13)
        np.testing.assert_allclose(Q @ T, L, atol=1e-13)
        assert np.allclose(T, np.triu(T))
    X = solve_core(L, M, Rr)
    ref = gmr_pinv(M, L, Rr, max(L.shape) * EPS64, max(Rr.shape) * EPS64)
    # the Cholesky QR loses about eps cond (backward stable once Q is
    # orthonormal); the SVD path, taken for the others, matches pinv to rounding
    tol = 1e-13 * cond if qr is not None else 1e-10
    np.testing.assert_allclose(X, ref, rtol=0, atol=tol * np.abs(ref).max())
    assert cholesky_qr(np.full((30, 3), np.inf)) is None
    assert cholesky_qr(g.standard_normal((3, 5))) is None  # wide


def test_gmr_zero_factors_and_zero_A():
    A, C, R = gmr_problem(seed=3)
    assert np.array_equal(gmr(A, np.zeros_like(C), R), np.zeros((5, 4)))
    assert np.array_equal(gmr(A, C, np.zeros_like(R)), np.zeros((5, 4)))
    assert np.array_equal(gmr(sp.csr_matrix(A.shape), C, R), np.zeros((5, 4)))


def test_gmr_recovers_exact_core_and_accepts_sparse_factors():
    g = np.random.default_rng(4)
    C, X0, R = g.standard_normal((50, 4)), g.standard_normal((4, 3)), g.standard_normal((3, 40))
    X = gmr(C @ X0 @ R, sp.csc_matrix(C), sp.csr_matrix(R))
    np.testing.assert_allclose(X, X0, rtol=1e-10, atol=1e-10)


def test_gmr_float32():
    A, C, R = gmr_problem(seed=5, dtype=np.float32)
    X = gmr(sp.csr_matrix(A), C, R)
    assert X.dtype == np.float32
    assert rel_err(X, gmr_pinv(A, C, R, 1e-6, 1e-6)) < 1e-5
    assert gmr(A, C.astype(np.float64), R).dtype == np.float64
    assert gmr(A.astype(np.int64), C, R).dtype == np.float64


# ---- fast GMR against the explicit formula ---------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("form", FORMS)
def test_fast_gmr_equals_explicit_formula(kind, form):
    A, C, R = gmr_problem(seed=6)
    S_C, S_R = operators(kind, 20, 16, C, R, seed=7)
    X = fast_gmr(as_form(A, form), C, R, sketch=(S_C, S_R)).X
    ref = fast_gmr_explicit(A, C, R, S_C.toarray(), S_R.toarray(), 20 * EPS64, 16 * EPS64)
    assert X.shape == (5, 4) and X.dtype == np.float64
    np.testing.assert_allclose(X, ref, rtol=0, atol=1e-10 * np.abs(ref).max())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("form", ["dense-C", "csr"])
def test_fast_gmr_float32_equals_explicit_formula(kind, form):
    A, C, R = gmr_problem(seed=8, dtype=np.float32)
    S_C, S_R = operators(kind, 20, 16, C, R, seed=9)
    X = fast_gmr(as_form(A, form), C, R, sketch=(S_C, S_R)).X
    ref = fast_gmr_explicit(A, C, R, S_C.toarray(), S_R.toarray(), 1e-6, 1e-6)
    assert X.dtype == np.float32
    assert rel_err(X, ref) < 1e-4


@pytest.mark.parametrize("kind", sl.SKETCH_KINDS)
def test_fast_gmr_kind_name_draws_S_C_then_S_R_from_rng(kind):
    A, C, R = gmr_problem(seed=10)
    A = sp.csr_matrix(A)
    X = fast_gmr(A, C, R, sketch_size=(20, 16), sketch=kind, rng=11).X
    S_C, S_R = operators(kind, 20, 16, C, R, seed=11)
    assert np.array_equal(X, fast_gmr(A, C, R, sketch=(S_C, S_R)).X)
    # deterministic given rng, different for another seed; a Generator works too
    assert np.array_equal(X, fast_gmr(A, C, R, sketch_size=(20, 16), sketch=kind, rng=11).X)
    assert not np.allclose(X, fast_gmr(A, C, R, sketch_size=(20, 16), sketch=kind, rng=12).X)
    X_gen = fast_gmr(A, C, R, sketch_size=(20, 16), sketch=kind, rng=np.random.default_rng(11)).X
    assert np.array_equal(X, X_gen)


@given(
    kind=st.sampled_from(KINDS),
    form=st.sampled_from(FORMS),
    shape=st.tuples(*[st.integers(1, 12)] * 4),
    sizes=st.tuples(st.integers(1, 16), st.integers(1, 16)),
    density=st.sampled_from([0.0, 0.2, 1.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_hypothesis_fast_gmr_and_residual_match_references(kind, form, shape, sizes, density,
                                                           seed):
    m, n, c, r = shape
    g = np.random.default_rng(seed)
    A = g.standard_normal((m, n)) * (g.random((m, n)) < density)
    C, R = g.standard_normal((m, c)), g.standard_normal((r, n))
    s_c, s_r = sizes
    if kind == "srht":
        s_c, s_r = min(s_c, 1 << (m - 1).bit_length()), min(s_r, 1 << (n - 1).bit_length())
    S_C, S_R = operators(kind, s_c, s_r, C, R, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnderdeterminedSketchWarning)
        X = fast_gmr(as_form(A, form), C, R, sketch=(S_C, S_R)).X
    ref = fast_gmr_explicit(A, C, R, S_C.toarray(), S_R.toarray(),
                            max(s_c, c) * EPS64, max(r, s_r) * EPS64)
    scale = max(np.abs(ref).max(), 1e-300)
    # pseudo-inverses of ill-conditioned small factors amplify rounding
    cond = np.linalg.cond(S_C.toarray() @ C) * np.linalg.cond(R @ S_R.toarray().T)
    if cond < 1e6:
        np.testing.assert_allclose(X, ref, rtol=0, atol=1e-12 * cond * scale)
    X_opt = gmr(as_form(A, form), C, R)
    np.testing.assert_allclose(X_opt, gmr_pinv(A, C, R, max(m, c) * EPS64, max(n, r) * EPS64),
                               rtol=0, atol=1e-8 * max(np.abs(X_opt).max(), 1e-300))
    expected = np.linalg.norm(A - C @ X @ R)
    assert gmr_residual(as_form(A, form), C, X, R) == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_fast_gmr_sketch_size_forms():
    A, C, R = gmr_problem(seed=13)
    X = fast_gmr(A, C, R, sketch_size=18, rng=0).X
    assert np.array_equal(X, fast_gmr(A, C, R, sketch_size=(18, 18), rng=0).X)
    assert np.array_equal(X, fast_gmr(A, C, R, sketch_size=np.array([18, 18]), rng=0).X)
    S_C, S_R = operators("countsketch", 18, 18, C, R, seed=0)
    for size in (None, 18, (18, 18), [18, 18]):
        assert np.array_equal(X, fast_gmr(A, C, R, sketch=(S_C, S_R), sketch_size=size).X)
    assert np.array_equal(X, fast_gmr(A, C, R, sketch_size=np.array(18), rng=0).X)
    # a sketch as large as A is no cheaper than gmr: sizes are capped at the
    # dimensions (at the power of two above them for SRHT)
    m, n = A.shape
    for kind in ("countsketch", "gaussian", "uniform"):
        assert fast_gmr(A, C, R, sketch_size=(m, n), sketch=kind, rng=0).X.shape == (5, 4)
        with pytest.raises(ValueError, match=rf"sketch_size\[0\] \(s_c\) must be an int in \[1, {m}\]"):
            fast_gmr(A, C, R, sketch_size=(m + 1, n), sketch=kind, rng=0)
    assert fast_gmr(A, C, R, sketch_size=(64, 64), sketch="srht", rng=0).X.shape == (5, 4)


@pytest.mark.parametrize("form", ["dense-C", "csc", "csr-unsorted-dup"])
def test_fast_gmr_keeping_every_row_equals_gmr(form):
    A, C, R = gmr_problem(seed=14)
    m, n = A.shape
    S_C = sl.UniformSampler(m, m, replace=False, rng=0)
    S_R = sl.UniformSampler(n, n, replace=False, rng=1)
    assert np.array_equal(S_C.weights, np.ones(m)) and np.array_equal(S_C.indices, np.arange(m))
    X = fast_gmr(as_form(A, form), C, R, sketch=(S_C, S_R)).X
    ref = gmr(A, C, R)
    np.testing.assert_allclose(X, ref, rtol=0, atol=1e-10 * np.abs(ref).max())


def test_fast_gmr_is_exact_for_a_consistent_problem():
    # A = C X0 R exactly: any sketch keeping S_C C and R S_R^T full rank recovers X0
    g = np.random.default_rng(15)
    C, X0, R = g.standard_normal((300, 5)), g.standard_normal((5, 4)), g.standard_normal((4, 200))
    for kind in sl.SKETCH_KINDS:
        X = fast_gmr(C @ X0 @ R, C, R, sketch_size=(40, 40), sketch=kind, rng=0).X
        np.testing.assert_allclose(X, X0, rtol=0, atol=1e-9 * np.abs(X0).max())


def test_fast_gmr_leverage_on_zero_factor_and_zero_A():
    A, C, R = gmr_problem(seed=16)
    X = fast_gmr(A, np.zeros_like(C), R, sketch_size=(20, 16), sketch="leverage", rng=0).X
    assert np.array_equal(X, np.zeros((5, 4)))
    X = fast_gmr(sp.csr_matrix(A.shape), C, R, sketch_size=(20, 16), rng=0).X
    assert np.array_equal(X, np.zeros((5, 4)))


def test_fast_gmr_bitwise_identical_for_one_and_two_threads():
    A, C, R = gmr_problem(m=300, n=250, density=0.1, seed=17)
    A = sp.csr_matrix(A)
    before = numba.get_num_threads()
    try:
        results = []
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            results.append(fast_gmr(A, C, R, sketch_size=(40, 40), rng=3).X)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(results[0], results[1])


def test_underdetermined_sketch_warns_and_returns_the_minimum_norm_solution():
    A, C, R = gmr_problem(seed=18)
    S_C, S_R = operators("gaussian", 3, 16, C, R, seed=0)
    with pytest.warns(UnderdeterminedSketchWarning, match=r"\(s_c, s_r\) = \(3, 16\)"):
        X = fast_gmr(A, C, R, sketch=(S_C, S_R)).X
    ref = fast_gmr_explicit(A, C, R, S_C.toarray(), S_R.toarray(), 5 * EPS64, 16 * EPS64)
    np.testing.assert_allclose(X, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
    with pytest.warns(UnderdeterminedSketchWarning):
        fast_gmr(A, C, R, sketch_size=(20, 3), rng=0)
    assert issubclass(UnderdeterminedSketchWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast_gmr(A, C, R, sketch_size=(5, 4), sketch="gaussian", rng=0)  # s = c, r: no warning


# ---- structure (Theorem 2) and the projections (Proposition 1) ---------------------


def spsd_problem(seed, n=80, rank=60, c=10):
    g = np.random.default_rng(seed)
    Z = g.standard_normal((n, rank))
    A = Z @ Z.T
    cols = g.choice(n, size=c, replace=False)
    return A, A[:, cols]


def test_projections_return_symmetric_and_psd_matrices():
    g = np.random.default_rng(19)
    for _ in range(20):
        X = g.standard_normal((7, 7))
        S = project_symmetric(X)
        P = project_psd(X)
        assert np.array_equal(S, S.T) and np.array_equal(P, P.T)
        w = np.linalg.eigvalsh(P)
        assert w.min() >= -1e-12 * max(1.0, w.max())
        # the nearest PSD matrix: eigenvalues of the symmetric part clipped at zero
        ws, V = np.linalg.eigh((X + X.T) / 2)
        np.testing.assert_allclose(P, (V * np.maximum(ws, 0)) @ V.T, atol=1e-12)
    assert project_psd(np.eye(3, dtype=np.float32)).dtype == np.float32


@pytest.mark.parametrize("kind", ["countsketch", "leverage", "gaussian"])
def test_psd_projection_never_moves_away_from_X_opt(kind):
    # Proposition 1: X* = C^+ A (C^+)^T is PSD for an SPSD A, and the PSD cone
    # (and the symmetric matrices) are closed convex sets
    for seed in range(8):
        A, C = spsd_problem(seed)
        X_opt = gmr(A, C, C.T)
        assert np.linalg.eigvalsh((X_opt + X_opt.T) / 2).min() > -1e-8 * np.abs(X_opt).max()
        X = fast_gmr(A, C, C.T, sketch_size=25, sketch=kind, rng=seed).X
        X_sym = fast_gmr(A, C, C.T, sketch_size=25, sketch=kind, rng=seed, structure="symmetric").X
        X_psd = fast_gmr(A, C, C.T, sketch_size=25, sketch=kind, rng=seed, structure="psd").X
        np.testing.assert_array_equal(X_sym, project_symmetric(X))
        np.testing.assert_allclose(X_psd, project_psd(X), rtol=0, atol=1e-12 * np.abs(X).max())
        assert np.array_equal(X_psd, X_psd.T)
        assert np.linalg.eigvalsh(X_psd).min() >= -1e-10 * np.abs(X_psd).max()
        d = np.linalg.norm(X - X_opt)
        assert np.linalg.norm(X_sym - X_opt) <= d * (1 + 1e-12)
        assert np.linalg.norm(X_psd - X_opt) <= d * (1 + 1e-12)


def test_psd_projection_never_increases_residual_for_orthonormal_C():
    # with orthonormal columns, ||A - C X C^T||_F^2 = const + ||X - X*||_F^2,
    # so Proposition 1 carries over to the residual itself
    for seed in range(8):
        A, C = spsd_problem(seed + 100)
        Q = np.linalg.qr(C)[0]
        X = fast_gmr(A, Q, Q.T, sketch_size=20, rng=seed).X
        X_psd = fast_gmr(A, Q, Q.T, sketch_size=20, rng=seed, structure="psd").X
        assert gmr_residual(A, Q, X_psd, Q.T) <= gmr_residual(A, Q, X, Q.T) * (1 + 1e-12)
        assert gmr_error_ratio(A, Q, X_psd, Q.T) <= gmr_error_ratio(A, Q, X, Q.T) + 1e-12


def test_structure_accepts_sparse_square_A_and_float32():
    A, C = spsd_problem(20)
    X = fast_gmr(sp.csr_matrix(A), C, C.T, sketch_size=30, rng=0, structure="psd").X
    assert np.array_equal(X, X.T)
    X32 = fast_gmr(A.astype(np.float32), C.astype(np.float32), C.T.astype(np.float32),
                   sketch_size=30, rng=0, structure="symmetric").X
    assert X32.dtype == np.float32 and np.array_equal(X32, X32.T)


# ---- accuracy on real data: error ratio ~ alpha / a^2 (Theorem 1, Figure glsr) -------


@pytest.mark.slow
def test_madelon_error_ratio_decays_like_one_over_a_squared(load_libsvm):
    A = load_libsvm("madelon.xz")[0].toarray()
    m, n = A.shape
    c = r = 20
    a_values = np.arange(2, 13)
    ratios = np.empty((10, a_values.size))
    for seed in range(10):
        g = np.random.default_rng(seed)
        C = A @ g.standard_normal((n, c))  # C = A G_C
        R = g.standard_normal((r, m)) @ A  # R = G_R A
        X_opt = gmr(A, C, R)
        for k, a in enumerate(a_values):
            X = fast_gmr(A, C, R, sketch_size=(a * c, a * r), sketch="gaussian", rng=g).X
            ratios[seed, k] = gmr_error_ratio(A, C, X, R, X_opt)
    mean = ratios.mean(axis=0)
    slope = np.polyfit(np.log(a_values), np.log(mean), 1)[0]
    assert mean[a_values == 10][0] <= 0.05
    assert -2.5 <= slope <= -1.5


# ---- bad input ----------------------------------------------------------------------


A0, C0, R0 = gmr_problem(seed=21)


def bad(**replace):
    """(A, C, R) of a valid problem with some of them replaced."""
    return tuple(replace.get(name, value) for name, value in zip("ACR", (A0, C0, R0)))


def with_value(X, value, sparse=False):
    X = X.copy()
    X[1, 2] = value
    return sp.csr_matrix(X) if sparse else X


BAD_INPUTS = [
    (dict(A=with_value(A0, np.nan)), ValueError, "A must not contain NaN or Inf"),
    (dict(A=with_value(A0, np.inf, sparse=True)), ValueError, "A must not contain NaN or Inf"),
    (dict(C=with_value(C0, np.nan)), ValueError, "C must not contain NaN or Inf"),
    (dict(R=with_value(R0, -np.inf)), ValueError, "R must not contain NaN or Inf"),
    (dict(A="matrix"), TypeError, "A must be an array"),
    (dict(A=A0.astype(object)), TypeError, "A must be numeric"),
    (dict(C=C0.astype(complex)), TypeError, "C must have a real numeric dtype"),
    (dict(R=None), TypeError, "R must be an array"),
    (dict(C=C0[:-1]), ValueError, r"C must have A.shape\[0\] = 60 rows, got C of shape \(59, 5\)"),
    (dict(R=R0[:, :-1]), ValueError, r"R must have A.shape\[1\] = 50 columns, got R of shape"),
    (dict(C=C0[:, :0]), ValueError, r"C must not have an empty dimension, got shape \(60, 0\)"),
    (dict(A=np.zeros((0, 50)), C=C0[:0]), ValueError, "A must not have an empty dimension"),
    (dict(A=A0[0]), ValueError, "A must be 2-D"),
]


@pytest.mark.parametrize("func", [gmr, fast_gmr])
@pytest.mark.parametrize("kwargs, exc, match", BAD_INPUTS)
def test_bad_arrays(func, kwargs, exc, match):
    extra = {} if func is gmr else {"sketch_size": 10, "rng": 0}
    with pytest.raises(exc, match=match):
        func(*bad(**kwargs), **extra)


@pytest.mark.parametrize("func", [gmr, fast_gmr])
@pytest.mark.parametrize("rtol, exc", [(-1e-3, ValueError), (1.0, ValueError), (np.nan, ValueError),
                                       ("1e-3", TypeError), (True, TypeError)])
def test_bad_rtol(func, rtol, exc):
    extra = {} if func is gmr else {"sketch_size": 10, "rng": 0}
    with pytest.raises(exc, match="rtol must be"):
        func(A0, C0, R0, rtol=rtol, **extra)


S_C0 = sl.CountSketch(20, 60, rng=0)
S_R0 = sl.CountSketch(16, 50, rng=1)
SIZE = r"sketch_size\[0\] \(s_c\) must be an int"
BAD_SKETCHES = [
    (dict(sketch_size=0), ValueError, SIZE + r" in \[1, 60\], got 0"),
    (dict(sketch_size=(10, -1)), ValueError,
     r"sketch_size\[1\] \(s_r\) must be an int in \[1, 50\]"),
    (dict(sketch_size=(61, 10)), ValueError, SIZE + r" in \[1, 60\], got 61"),
    (dict(sketch_size=(10, 10, 10)), ValueError, "sketch_size must be an int or a pair"),
    (dict(sketch_size=2.5), TypeError, SIZE),
    (dict(sketch_size=(65, 10), sketch="srht"), ValueError, SIZE + r" in \[1, 64\], got 65"),
    (dict(sketch_size=10, sketch="hashing"), ValueError, r"sketch must be one of \['countsketch'"),
    (dict(sketch_size=10, sketch=5), TypeError, "sketch must be a kind name"),
    (dict(sketch=(S_C0,)), TypeError, "sketch must be a kind name"),
    (dict(sketch=(S_C0, "countsketch")), TypeError,
     r"sketch\[1\] \(S_R\) must be a SketchOperator"),
    (dict(sketch=(S_R0, S_R0)), ValueError,
     r"sketch\[0\] \(S_C\) must have input_dim = A.shape\[0\] = 60, "
     r"got an operator of shape \(16, 50\)"),
    (dict(sketch=(S_C0, S_C0)), ValueError,
     r"sketch\[1\] \(S_R\) must have input_dim = A.shape\[1\]"),
    (dict(sketch=(S_C0, S_R0), sketch_size=(20, 15)), ValueError,
     r"sketch_size must agree with the operators' sizes \(20, 16\)"),
    (dict(sketch=(S_C0, S_R0), sketch_size=20), ValueError, "sketch_size must agree"),
    (dict(sketch_size=10, structure="spd"), ValueError,
     "structure must be None, 'symmetric' or 'psd'"),
    (dict(sketch_size=10, structure=np.array([1])), ValueError, "structure must be None"),
    (dict(sketch_size=10, structure="psd"), ValueError,
     r"needs a square A, got A of shape \(60, 50\)"),
]


@pytest.mark.parametrize("kind", ["countsketch", "gaussian", "srht", "leverage"])
def test_default_sketch_size_is_the_papers_a_10_capped_at_A(kind):
    """Without sketch_size, (s_c, s_r) = (10 c, 10 r) capped at (m, n): the
    same X as with those sizes given, and the sizes on the result."""
    gen = np.random.default_rng(3)
    for (m, n), (c, r) in [((400, 300), (5, 4)), ((400, 30), (5, 4)), ((40, 300), (6, 2))]:
        A = gen.standard_normal((m, n))
        C, R = A @ gen.standard_normal((n, c)), gen.standard_normal((r, m)) @ A
        want = (min(m, 10 * c), min(n, 10 * r))
        res = fast_gmr(A, C, R, sketch=kind, rng=4)
        assert res.sketch_size == want
        np.testing.assert_array_equal(
            res.X, fast_gmr(A, C, R, sketch_size=want, sketch=kind, rng=4).X)
    # and the default gives a good answer: error ratio near the paper's 0.05
    A = (gen.standard_normal((600, 30)) * np.geomspace(10, 1, 30)) @ gen.standard_normal(
        (30, 500)) + 0.3 * gen.standard_normal((600, 500))
    C, R = A @ gen.standard_normal((500, 10)), gen.standard_normal((10, 600)) @ A
    ratios = [sl.gmr_error_ratio(A, C, fast_gmr(A, C, R, sketch=kind, rng=seed).X, R)
              for seed in range(5)]
    assert np.median(ratios) < 0.1, ratios


@pytest.mark.parametrize("kwargs, exc, match", BAD_SKETCHES)
def test_bad_sketch_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fast_gmr(A0, C0, R0, **kwargs)


def test_structure_needs_C_equal_R_transpose():
    A, C = spsd_problem(22)
    with pytest.raises(ValueError, match=r"needs C = R\^T, got C of shape \(80, 10\) and R"):
        fast_gmr(A, C, C[:, :9].T, sketch_size=20, structure="psd")
    R = C.T.copy()
    R[0, 0] += 1e-3
    with pytest.raises(ValueError, match=r"needs C = R\^T, got \|\|C - R\^T\|\|_F = 0.001"):
        fast_gmr(A, C, R, sketch_size=20, structure="symmetric")
    R = C.T * (1 + 1e-15)  # rounding-level differences are accepted
    assert fast_gmr(A, C, R, sketch_size=20, structure="symmetric", rng=0).X.shape == (10, 10)


@pytest.mark.parametrize("func", [project_symmetric, project_psd])
def test_bad_projection_input(func):
    with pytest.raises(ValueError, match=r"X must be square, got shape \(2, 3\)"):
        func(np.ones((2, 3)))
    with pytest.raises(ValueError, match="X must not contain NaN or Inf"):
        func(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(TypeError, match="X must be a dense array"):
        func(sp.eye(3, format="csr"))
    with pytest.raises(TypeError, match="X must be numeric"):
        func(np.array([[None]]))


@pytest.mark.kernels  # the sketches' compiled loops
def test_sketch_size_as_a_numpy_int_and_huge():
    A, C, R = np.ones((30, 20)), np.ones((30, 2)), np.ones((2, 20))
    X1 = sl.fast_gmr(A, C, R, sketch_size=np.array(20), rng=0).X
    assert X1.shape == (2, 2)
    with pytest.raises(ValueError, match=r"sketch_size\[0\] \(s_c\) must be an int in \[1, 30\]"):
        sl.fast_gmr(A, C, R, sketch_size=10**9)


# ---- from the fuzz suite (tests/test_fuzz.py): the bugs it found, every option once --


@pytest.mark.kernels  # from the fuzz suite: reaches the compiled loops
@pytest.mark.parametrize("problem", ["exact_fit", "small"])
def test_fast_gmr_tol_with_zero_residual(problem):
    """An exact fit (or a probe estimate below the excess) used to divide by zero."""
    if problem == "exact_fit":  # A = C X R
        gen = np.random.default_rng(1)
        C, R = gen.standard_normal((50, 3)), gen.standard_normal((4, 40))
        A = C @ gen.standard_normal((3, 4)) @ R
    else:  # the 7 x 5 matrix of the child cases
        A, C, R = base_dense((7, 5)), base_dense((7, 2), 31), base_dense((2, 5), 32)
    X = sl.fast_gmr(A, C, R, tol=0.5, rng=0).X
    assert sl.gmr_error_ratio(A, C, X, R) <= 1.5


@pytest.mark.kernels  # from the fuzz suite: reaches the compiled loops
@pytest.mark.parametrize("kind", SPLITTABLE)
def test_fast_gmr_tol_meets_its_target(kind):
    """The fixed-accuracy path on a problem with a residual (where it works)."""
    gen = np.random.default_rng(1)
    C, R = gen.standard_normal((300, 3)), gen.standard_normal((4, 200))
    A = C @ gen.standard_normal((3, 4)) @ R + 0.3 * gen.standard_normal((300, 200))
    A_sparse = sp.csr_matrix(A)
    X = sl.fast_gmr(A_sparse, C, R, tol=0.2, sketch=kind, rng=2).X
    assert np.allclose(X, sl.fast_gmr(A, C, R, tol=0.2, sketch=kind, rng=2).X, rtol=1e-8)
    assert sl.gmr_error_ratio(A, C, X, R) <= 0.2 * 3  # an estimate: allow a safety factor


@pytest.mark.kernels  # from the fuzz suite: reaches the compiled loops
def test_fast_gmr_sketch_size_above_dimension_is_refused_by_name():
    """The docstring said larger sizes were accepted; they are refused, and it says so."""
    A, C, R = base_dense((7, 5)), base_dense((7, 2), 1), base_dense((2, 5), 2)
    with pytest.raises(ValueError, match=r"sketch_size\[1\] \(s_r\)"):
        sl.fast_gmr(A, C, R, sketch_size=(7, 6), sketch="countsketch", rng=0)
