"""gmr_residual and gmr_error_ratio against the dense residual, including the
near-zero residual that needs the direct (blockwise) fallback."""

import numpy as np
import pytest
import scipy.sparse as sp

import sketchlab._residuals as residuals
from sketchlab import fast_gmr, gmr
from sketchlab import gmr_error_ratio, gmr_residual

from .reference import gmr_pinv, gmr_residual_dense
from .test_gmr import FORMS, as_form, problem

EPS64 = np.finfo(np.float64).eps


def consistent_problem(noise, seed=30, m=200, n=150, c=6, r=5):
    """A = C X0 R + noise * G: the optimal residual is about noise * sqrt(m n)."""
    g = np.random.default_rng(seed)
    C, X0, R = g.standard_normal((m, c)), g.standard_normal((c, r)), g.standard_normal((r, n))
    return C @ X0 @ R + noise * g.standard_normal((m, n)), C, X0, R


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_residual_matches_dense(form, dtype):
    A, C, R = problem(seed=31, dtype=dtype)
    X = np.random.default_rng(31).standard_normal((5, 4)).astype(dtype)
    for core in (X, gmr(A, C, R)):
        got = gmr_residual(as_form(A, form), C, core, R)
        assert isinstance(got, float)
        assert got == pytest.approx(gmr_residual_dense(A, C, core, R), rel=1e-12)


@pytest.mark.parametrize("shape", [(8, 50, 12, 4), (60, 6, 5, 9)])
def test_residual_with_rank_deficient_factors(shape):
    m, n, c, r = shape  # wide C or tall R
    A, C, R = problem(m, n, c, r, seed=32)
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
    A, C, R = problem(seed=33)
    X = np.ones((5, 4))
    Z = sp.csr_matrix(A.shape)
    assert gmr_residual(Z, C, np.zeros((5, 4)), R) == 0.0
    assert gmr_residual(Z, C, X, R) == pytest.approx(np.linalg.norm(C @ X @ R), rel=1e-12)
    assert gmr_residual(A, np.zeros_like(C), X, R) == pytest.approx(np.linalg.norm(A), rel=1e-12)


# ---- error ratio ------------------------------------------------------------------


@pytest.mark.parametrize("form", ["dense-F", "csr", "csr-unsorted-dup"])
def test_error_ratio_matches_direct_computation(form):
    A, C, R = problem(seed=34)
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
    A, C, R = problem(seed=35)
    for seed in range(5):
        X = fast_gmr(A, C, R, sketch_size=(20, 16), rng=seed)
        assert gmr_error_ratio(A, C, X, R) >= 0.0
    assert abs(gmr_error_ratio(A, C, gmr(A, C, R), R)) < 1e-14


def test_tiny_error_ratio_is_accurate():
    # X = X* + d D: residual^2 = best^2 + d^2 ||C D R||^2 exactly (the optimal
    # residual is orthogonal to every C Y R), so the ratio is known in closed
    # form far below the rounding of either residual
    A, C, R = problem(seed=36)
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
    A, C, R = problem(seed=38)
    Z = np.zeros(A.shape)
    assert gmr_error_ratio(Z, C, np.zeros((5, 4)), R) == 0.0
    assert gmr_error_ratio(Z, C, np.ones((5, 4)), R) == float("inf")
    assert gmr_error_ratio(A, C, np.ones((5, 4)), R, X_opt=np.ones((5, 4))) == 0.0


# ---- bad input ----------------------------------------------------------------------


A0, C0, R0 = problem(seed=39)
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
