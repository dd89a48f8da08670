"""gmr_residual, gmr_error_ratio and lowrank_residual against the dense
residual, including the near-zero residual that needs the direct (blockwise)
fallback and data whose squares overflow or underflow float64."""

import numpy as np
import pytest
import scipy.sparse as sp

import sketchlab as sl
import sketchlab._residuals as residuals
from sketchlab import fast_gmr, gmr
from sketchlab import gmr_error_ratio, gmr_residual, lowrank_residual

from .reference import gmr_pinv, gmr_residual_dense
from ._support import FORMS, as_form, gmr_problem

EPS64 = np.finfo(np.float64).eps


def consistent_problem(noise, seed=30, m=200, n=150, c=6, r=5):
    """A = C X0 R + noise * G: the optimal residual is about noise * sqrt(m n)."""
    g = np.random.default_rng(seed)
    C, X0, R = g.standard_normal((m, c)), g.standard_normal((c, r)), g.standard_normal((r, n))
    return C @ X0 @ R + noise * g.standard_normal((m, n)), C, X0, R


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_residual_matches_dense(form, dtype):
    A, C, R = gmr_problem(seed=31, dtype=dtype)
    X = np.random.default_rng(31).standard_normal((5, 4)).astype(dtype)
    for core in (X, gmr(A, C, R)):
        got = gmr_residual(as_form(A, form), C, core, R)
        assert isinstance(got, float)
        assert got == pytest.approx(gmr_residual_dense(A, C, core, R), rel=1e-12)


@pytest.mark.parametrize("shape", [(8, 50, 12, 4), (60, 6, 5, 9)])
def test_residual_with_rank_deficient_factors(shape):
    m, n, c, r = shape  # wide C or tall R
    A, C, R = gmr_problem(m, n, c, r, seed=32)
    X = np.random.default_rng(32).standard_normal((c, r))
    assert gmr_residual(A, C, X, R) == pytest.approx(gmr_residual_dense(A, C, X, R), rel=1e-12)


@pytest.mark.parametrize("form", ["dense-C", "csr", "csc"])
def test_near_zero_residual_uses_the_direct_fallback(form, monkeypatch):
    A, C, X0, R = consistent_problem(noise=1e-6)
    expected = gmr_residual_dense(A, C, X0, R)
    assert (expected / np.linalg.norm(A)) ** 2 < 1e-12  # far below the 1e-8 threshold
    assert gmr_residual(as_form(A, form), C, X0, R) == pytest.approx(expected, rel=1e-8)
    # several row blocks give the same result
    monkeypatch.setattr(residuals, "_BLOCK_ENTRIES", 1000)
    assert gmr_residual(as_form(A, form), C, X0, R) == pytest.approx(expected, rel=1e-8)
    # without the fallback the cancellation is visible: this case needs it
    monkeypatch.setattr(residuals, "_CANCELLATION_RTOL", 0.0)
    naive = gmr_residual(as_form(A, form), C, X0, R)
    assert abs(naive - expected) > 1e-5 * expected


def test_exact_fit_residual_is_at_rounding_level():
    A, C, X0, R = consistent_problem(noise=0.0)
    scale = np.linalg.norm(A)
    assert gmr_residual(A, C, X0, R) <= 1e-13 * scale
    assert gmr_residual(sp.csr_matrix(A), C, X0, R) <= 1e-13 * scale


def test_zero_and_empty_rows():
    A, C, R = gmr_problem(seed=33)
    X = np.ones((5, 4))
    Z = sp.csr_matrix(A.shape)
    assert gmr_residual(Z, C, np.zeros((5, 4)), R) == 0.0
    assert gmr_residual(Z, C, X, R) == pytest.approx(np.linalg.norm(C @ X @ R), rel=1e-12)
    assert gmr_residual(A, np.zeros_like(C), X, R) == pytest.approx(np.linalg.norm(A), rel=1e-12)


# ---- error ratio ------------------------------------------------------------------


@pytest.mark.parametrize("form", ["dense-F", "csr", "csr-unsorted-dup"])
def test_error_ratio_matches_direct_computation(form):
    A, C, R = gmr_problem(seed=34)
    X_opt = gmr_pinv(A, C, R, 60 * EPS64, 50 * EPS64)
    best = gmr_residual_dense(A, C, X_opt, R)
    g = np.random.default_rng(34)
    for scale in (1e-3, 1e-1, 10.0):
        X = X_opt + scale * g.standard_normal(X_opt.shape)
        expected = gmr_residual_dense(A, C, X, R) / best - 1
        assert gmr_error_ratio(as_form(A, form), C, X, R) == pytest.approx(expected, rel=1e-9)
        got = gmr_error_ratio(as_form(A, form), C, X, R, X_opt=X_opt)
        assert got == pytest.approx(expected, rel=1e-9)


def test_error_ratio_of_fast_gmr_is_nonnegative_and_of_gmr_is_zero():
    A, C, R = gmr_problem(seed=35)
    for seed in range(5):
        X = fast_gmr(A, C, R, sketch_size=(20, 16), rng=seed).X
        assert gmr_error_ratio(A, C, X, R) >= 0.0
    assert abs(gmr_error_ratio(A, C, gmr(A, C, R), R)) < 1e-14


def test_tiny_error_ratio_is_accurate():
    # X = X* + d D: residual^2 = best^2 + d^2 ||C D R||^2 exactly (the optimal
    # residual is orthogonal to every C Y R), so the ratio is known in closed
    # form far below the rounding of either residual
    A, C, R = gmr_problem(seed=36)
    X_opt = gmr(A, C, R)
    D = np.random.default_rng(36).standard_normal(X_opt.shape)
    best = gmr_residual_dense(A, C, X_opt, R)
    for d in (1e-4, 1e-8):
        t = (d * np.linalg.norm(C @ D @ R) / best) ** 2
        expected = t / (np.sqrt(1 + t) + 1)
        assert gmr_error_ratio(A, C, X_opt + d * D, R) == pytest.approx(expected, rel=1e-4)


def test_error_ratio_near_zero_optimal_residual():
    A, C, X0, R = consistent_problem(noise=1e-6)
    X_opt = gmr(A, C, R)
    X = X_opt + 1e-6 * np.random.default_rng(37).standard_normal(X_opt.shape)
    expected = gmr_residual_dense(A, C, X, R) / gmr_residual_dense(A, C, X_opt, R) - 1
    assert gmr_error_ratio(sp.csc_matrix(A), C, X, R) == pytest.approx(expected, rel=1e-6)


def test_error_ratio_when_the_optimal_residual_is_zero():
    A, C, R = gmr_problem(seed=38)
    Z = np.zeros(A.shape)
    assert gmr_error_ratio(Z, C, np.zeros((5, 4)), R) == 0.0
    assert gmr_error_ratio(Z, C, np.ones((5, 4)), R) == float("inf")
    assert gmr_error_ratio(A, C, np.ones((5, 4)), R, X_opt=np.ones((5, 4))) == 0.0


# ---- scale: squares that overflow or underflow -------------------------------------
# A norm scales with A and a ratio does not depend on A's scale.  Entries near
# 1e160 have squares above the float64 range, entries near 1e-170 squares below
# it; 1e+-300 put the entries themselves near the ends of the range.

SCALES = [1e-300, 1e-170, 1e-100, 1.0, 1e100, 1e160, 1e300]
# scales whose squares stay inside float64, so np.linalg.norm is a valid reference
SQUARE_SAFE = [1e-100, 1.0, 1e100]
SCALE_FORMS = ["dense-C", "dense-F", "csr", "csc", "csr-unsorted-dup"]


def dense_norm(D):
    """||D||_F of an explicit dense D, which may hold entries whose squares
    leave float64: divided by its largest magnitude first (numpy's norm
    squares the entries as they are)."""
    big = np.abs(D).max()
    return 0.0 if big == 0 else float(big * np.linalg.norm(D / big))


def scale_problem(seed=40, m=70, n=45, c=6, r=5, dtype=np.float64):
    """Sparse-ish A with an empty row and column, random C, R and X."""
    A, C, R = gmr_problem(m, n, c, r, seed=seed)
    X = np.random.default_rng(seed).standard_normal((c, r))
    return A.astype(dtype), C.astype(dtype), X.astype(dtype), R.astype(dtype)


@pytest.mark.parametrize("form", SCALE_FORMS)
@pytest.mark.parametrize("lam", SCALES)
def test_gmr_residual_scales_with_A(lam, form):
    A, C, X, R = scale_problem()
    base = gmr_residual(A, C, X, R)
    c = np.cbrt(lam)  # the scale spread over three factors: each within 2**+-128 or not
    for args in ((lam * A, lam * C, X, R), (lam * A, C, lam * X, R), (lam * A, C, X, lam * R),
                 (lam * A, c * C, c * X, c * R)):
        got = gmr_residual(as_form(args[0], form), *args[1:])
        assert got == pytest.approx(lam * base, rel=1e-12)
        assert got == pytest.approx(dense_norm(args[0] - args[1] @ args[2] @ args[3]), rel=1e-12)
        if lam in SQUARE_SAFE:
            assert got == pytest.approx(gmr_residual_dense(*args), rel=1e-12)


@pytest.mark.parametrize("form", SCALE_FORMS)
@pytest.mark.parametrize("lam", SCALES)
def test_gmr_error_ratio_does_not_depend_on_the_scale(lam, form):
    A, C, X, R = scale_problem()
    X_opt = gmr(A, C, R)
    for X1 in (X, X_opt + 1e-3 * X):
        base = gmr_error_ratio(A, C, X1, R)
        assert base > 0
        got = gmr_error_ratio(as_form(lam * A, form), lam * C, X1, R)
        assert got == pytest.approx(base, rel=1e-10)
        got = gmr_error_ratio(as_form(lam * A, form), C, lam * X1, R, X_opt=lam * X_opt)
        assert got == pytest.approx(base, rel=1e-10)


@pytest.mark.parametrize("form", ["dense-C", "csr", "csc"])
@pytest.mark.parametrize("k", [-1074, -997, -565, -300, 0, 300, 531, 990])
def test_power_of_two_scales_are_exact_on_every_path(k, form, monkeypatch):
    # integer data: A 2**k is exact even among the subnormal numbers (k = -1074),
    # so the residual must be 2**k times the unscaled one up to rounding, on
    # the expansion and on the direct fallback (near-zero residual) alike
    g = np.random.default_rng(41)
    C, X0, R = (np.round(4 * g.standard_normal(shape)) for shape in ((60, 4), (4, 3), (3, 40)))
    A = C @ X0 @ R
    A[A.nonzero()[0][:5], A.nonzero()[1][:5]] += 1.0  # a residual of 5 ulp-free units
    lam = np.ldexp(1.0, k)
    for X in (X0, X0 + 1.0):
        base = gmr_residual(as_form(A, form), C, X, R)
        got = gmr_residual(as_form(lam * A, form), lam * C, X, R)
        assert got == pytest.approx(np.ldexp(base, k), rel=4 * EPS64, abs=0)
    assert gmr_residual(A, C, X0, R) == pytest.approx(np.sqrt(5.0), rel=1e-8)
    # X sized so that C X R is small but A is not: A carries the scale alone
    got = gmr_residual(as_form(lam * A, form), C, lam * X0, R)
    assert got == pytest.approx(np.ldexp(np.sqrt(5.0), k), rel=1e-8)
    monkeypatch.setattr(residuals, "_CANCELLATION_RTOL", 0.0)  # expansion only
    assert gmr_error_ratio(lam * A, lam * C, X0 + 1.0, R) == pytest.approx(
        gmr_error_ratio(A, C, X0 + 1.0, R), rel=1e-12)


@pytest.mark.parametrize("form", ["dense-C", "csr"])
@pytest.mark.parametrize("lam", SCALES)
def test_near_zero_residual_scales_with_A(lam, form):
    # the direct fallback path: residual about 2e-7 of ||A||
    A, C, X0, R = consistent_problem(noise=1e-6)
    expected = gmr_residual_dense(A, C, X0, R)
    assert (expected / np.linalg.norm(A)) ** 2 < 1e-12
    got = gmr_residual(as_form(lam * A, form), lam * C, X0, R)
    # rounding lam * A moves the residual by about 1e-16 ||A|| (1e-9 of it),
    # and the direct computation keeps about as many digits
    assert got == pytest.approx(lam * expected, rel=1e-8)
    assert got == pytest.approx(dense_norm(lam * A - (lam * C) @ X0 @ R), rel=1e-8)
    X_opt = gmr(A, C, R)
    X = X_opt + 1e-8 * np.random.default_rng(42).standard_normal(X_opt.shape)
    ratio = gmr_error_ratio(A, C, X, R)
    assert gmr_error_ratio(as_form(lam * A, form), lam * C, X, R) == pytest.approx(ratio, rel=1e-6)


def test_extreme_core_with_ordinary_factors():
    # C X R near 1e300 (or near 1e-300) while A, C and R are ordinary
    A, C, X, R = scale_problem(seed=43)
    for big in (1e300, 1e-300, 1e200, 1e-200):
        D = A - C @ (big * X) @ R
        assert gmr_residual(A, C, big * X, R) == pytest.approx(dense_norm(D), rel=1e-12)
        assert gmr_residual(sp.csr_matrix(A), C, big * X, R) == pytest.approx(dense_norm(D),
                                                                            rel=1e-12)
    # a residual above the float64 range is reported as inf, not NaN
    assert gmr_residual(A, 1e200 * C, 1e200 * X, R) == float("inf")


@pytest.mark.parametrize("form", ["dense-C", "csr", "csc"])
@pytest.mark.parametrize("lam", [1e-30, 1.0, 1e30])
def test_float32_inputs_at_extreme_scales(lam, form):
    # the float32 data as given, in float64: squares of 1e30 overflow float32
    A, C, X, R = scale_problem(seed=44, dtype=np.float32)
    A, C = (lam * A).astype(np.float32), (lam * C).astype(np.float32)
    want = dense_norm(A.astype(np.float64) - C.astype(np.float64) @ X.astype(np.float64)
                      @ R.astype(np.float64))
    assert gmr_residual(as_form(A, form), C, X, R) == pytest.approx(want, rel=1e-12)
    X_opt = gmr(A.astype(np.float64), C.astype(np.float64), R.astype(np.float64))
    ratio = gmr_error_ratio(as_form(A, form), C, X, R, X_opt=X_opt)
    want_opt = dense_norm(A.astype(np.float64) - C.astype(np.float64) @ X_opt
                          @ R.astype(np.float64))
    assert ratio == pytest.approx(want / want_opt - 1, rel=1e-9)
    U, s, Vt = (f.astype(np.float32) for f in np.linalg.svd(A.astype(np.float64),
                                                            full_matrices=False))
    U, s, Vt = U[:, :4], s[:4], Vt[:4]
    want = dense_norm(A - (U.astype(np.float64) * s.astype(np.float64)) @ Vt.astype(np.float64))
    assert lowrank_residual(as_form(A, form), U, s, Vt) == pytest.approx(want, rel=1e-12)


def test_sparse_duplicates_that_sum_past_float64_are_rejected():
    big = np.finfo(np.float64).max
    A = sp.csr_matrix((np.array([big, big, 1.0]), np.array([0, 0, 1]), np.array([0, 2, 3])),
                      shape=(2, 2))
    C, R = np.ones((2, 1)), np.ones((1, 2))
    with pytest.raises(ValueError, match="A must not contain NaN or Inf"):
        gmr_residual(A, C, np.ones((1, 1)), R)
    with pytest.raises(ValueError, match="A must not contain NaN or Inf"):
        lowrank_residual(A, C, np.ones(1), R)


# ---- lowrank_residual at extreme scales -----------------------------------------------


def lowrank_problem(seed=45, m=70, n=45, q=4, noise=1.0):
    """A = rank-q signal + noise, and its top-q SVD factors."""
    g = np.random.default_rng(seed)
    A = g.standard_normal((m, q)) @ g.standard_normal((q, n)) + noise * g.standard_normal((m, n))
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    return A, U[:, :q], s[:q], Vt[:q]


@pytest.mark.parametrize("form", SCALE_FORMS)
@pytest.mark.parametrize("lam", SCALES)
def test_lowrank_residual_scales_with_A(lam, form):
    A, U, s, Vt = lowrank_problem()
    g = np.random.default_rng(46)
    general = (g.standard_normal(U.shape), g.standard_normal(s.shape), g.standard_normal(Vt.shape))
    for U1, s1, Vt1 in ((U, s, Vt), general):
        base = lowrank_residual(A, U1, s1, Vt1)
        c = np.cbrt(lam)
        for args in ((lam * U1, s1, Vt1), (U1, lam * s1, Vt1), (U1, s1, lam * Vt1),
                     (c * U1, c * s1, c * Vt1)):
            got = lowrank_residual(as_form(lam * A, form), *args)
            assert got == pytest.approx(lam * base, rel=1e-12)
            want = dense_norm(lam * A - (args[0] * args[1]) @ args[2])
            assert got == pytest.approx(want, rel=1e-12)
            if lam in SQUARE_SAFE:
                D = lam * A - (args[0] * args[1]) @ args[2]
                assert got == pytest.approx(float(np.linalg.norm(D)), rel=1e-12)


@pytest.mark.parametrize("form", ["dense-C", "csc"])
@pytest.mark.parametrize("lam", SCALES)
def test_lowrank_near_zero_residual_scales_with_A(lam, form, monkeypatch):
    calls = []
    direct = residuals._lowrank_direct
    monkeypatch.setattr(residuals, "_lowrank_direct", lambda *a: calls.append(1) or direct(*a))
    A, U, s, Vt = lowrank_problem(noise=1e-7)
    expected = float(np.linalg.norm(A - (U * s) @ Vt))
    got = lowrank_residual(as_form(lam * A, form), U, lam * s, Vt)
    assert calls  # the fallback ran
    assert got == pytest.approx(lam * expected, rel=1e-7)


def test_lowrank_extreme_weights_with_ordinary_factors():
    A, U, s, Vt = lowrank_problem(seed=47)
    for big in (1e300, 1e-300):
        want = dense_norm(A - (U * (big * s)) @ Vt)
        assert lowrank_residual(A, U, big * s, Vt) == pytest.approx(want, rel=1e-12)
    assert lowrank_residual(A, U, 0.0 * s, Vt) == pytest.approx(np.linalg.norm(A), rel=1e-12)
    assert lowrank_residual(np.zeros_like(A), U, s, Vt) == pytest.approx(np.sqrt(s @ s),
                                                                          rel=1e-12)


# ---- bad input ----------------------------------------------------------------------


A0, C0, R0 = gmr_problem(seed=39)
X0 = np.ones((5, 4))
BAD = [
    (dict(X=np.ones((4, 5))), ValueError,
     r"X must have shape \(C.shape\[1\], R.shape\[0\]\) = \(5, 4\), got \(4, 5\)"),
    (dict(X=np.full((5, 4), np.nan)), ValueError, "X must not contain NaN or Inf"),
    (dict(X=sp.csr_matrix(X0)), TypeError, "X must be a dense array"),
    (dict(X="X"), TypeError, "X must be an array"),
    (dict(X_opt=np.ones((5, 5))), ValueError, r"X_opt must have shape .* = \(5, 4\), got \(5, 5\)"),
    (dict(X_opt=np.full((5, 4), np.inf)), ValueError, "X_opt must not contain NaN or Inf"),
    (dict(A=A0[:, :-1]), ValueError, r"R must have A.shape\[1\] = 49 columns"),
    (dict(C=C0[:-2]), ValueError, r"C must have A.shape\[0\] = 60 rows, got C of shape \(58, 5\)"),
    (dict(A=np.where(A0 > 1, np.nan, A0)), ValueError, "A must not contain NaN or Inf"),
    (dict(R=R0.astype(complex)), TypeError, "R must have a real numeric dtype"),
]


@pytest.mark.parametrize("kwargs, exc, match", BAD)
def test_bad_input(kwargs, exc, match):
    args = dict(A=A0, C=C0, X=X0, R=R0)
    args.update({k: v for k, v in kwargs.items() if k != "X_opt"})
    with pytest.raises(exc, match=match):
        gmr_error_ratio(args["A"], args["C"], args["X"], args["R"], X_opt=kwargs.get("X_opt"))
    if "X_opt" not in kwargs:
        with pytest.raises(exc, match=match):
            gmr_residual(args["A"], args["C"], args["X"], args["R"])


# ---- against exact rational arithmetic at the bad-input harness's scales -----------


def _exact_residual(A, C, X, R):
    """||A - C X R||_F in exact rational arithmetic (Fractions), rounded once."""
    from fractions import Fraction
    import math

    F = np.vectorize(Fraction, otypes=[object])
    A, C, X, R = (F(np.asarray(M.toarray() if sp.issparse(M) else M)) for M in (A, C, X, R))
    D = A - C.dot(X).dot(R)
    total = sum((d * d for d in D.ravel()), Fraction(0))
    if total == 0:
        return 0.0
    e = (total.numerator.bit_length() - total.denominator.bit_length()) // 2
    return math.ldexp(math.sqrt(float(total / Fraction(2) ** (2 * e))), e)


@pytest.mark.parametrize("form", ["dense-C", "csr", "csc"])
@pytest.mark.parametrize("big", [1e200, 1e-170])
def test_entries_near_1e200_and_1e_170_against_exact_arithmetic(big, form):
    # the residual of data whose squares leave float64 (1e200 overflows,
    # 1e-170 underflows) while the residual itself is representable: every
    # factor at that scale, or at its inverse, with the others ordinary
    g = np.random.default_rng(45)
    A, C, X, R = (g.standard_normal(s) for s in ((9, 7), (9, 3), (3, 2), (2, 7)))
    A[2] = 0.0
    for scales in ((1, 1, 1, 1), (big, big, 1, 1), (big, 1, big, 1), (big, 1, 1, big),
                   (big, big, 1 / big, big), (1, big, 1 / big, 1), (big, 1, 1, 1), (1, 1, big, 1)):
        args = [s * M for s, M in zip(scales, (A, C, X, R))]
        want = _exact_residual(*args)
        assert 0 < want < np.inf
        got = gmr_residual(as_form(args[0], form), *args[1:])
        assert got == pytest.approx(want, rel=1e-12), scales


@pytest.mark.kernels  # the residuals' compiled loops
@pytest.mark.parametrize("scale", [1e-170, 1e160])
def test_residuals_do_not_depend_on_the_scale(scale):
    gen = np.random.default_rng(0)
    A, C, R = gen.standard_normal((40, 30)), gen.standard_normal((40, 3)), \
        gen.standard_normal((2, 30))
    X = sl.gmr(A, C, R) + 0.01
    base = sl.gmr_residual(A, C, X, R)
    assert sl.gmr_residual(A * scale, C, X * scale, R) == pytest.approx(base * scale, rel=1e-12)
    assert sl.gmr_error_ratio(A * scale, C, X * scale, R) == pytest.approx(
        sl.gmr_error_ratio(A, C, X, R), rel=1e-10)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    assert sl.lowrank_residual(A * scale, U[:, :3], s[:3] * scale, Vt[:3]) == pytest.approx(
        sl.lowrank_residual(A, U[:, :3], s[:3], Vt[:3]) * scale, rel=1e-12)
