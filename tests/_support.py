"""The tests' shared helpers: matrix makers, input forms, closeness measures
and the fresh-interpreter runner, one of each (the kinds and their builders
are in tests/_kinds.py, read from the registry; the dense references of the
operators and algorithms in tests/reference.py)."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]


# ---- a fresh interpreter ---------------------------------------------------------------


def run_isolated(code, timeout=300, env=None):
    """Run ``code`` (dedented) in a fresh interpreter from the repository root,
    with ``env`` added to this process's environment; its return code, stdout
    and stderr.  For crashes (a segfault must not take the test run with it),
    fresh JIT caches and thread counts."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO,
                          env=dict(os.environ, **(env or {})))
    return proc.returncode, proc.stdout, proc.stderr


def bad_sparse_index_output(estimator, call, index):
    """stdout of ``call`` run in a fresh interpreter (so that a crash fails
    one test, not the run) with ``from sketchlab import <estimator>``, where
    ``good`` is a valid 50 x 40 CSR matrix, ``X`` a copy with one column index
    set to ``index`` and ``Xc`` the CSC of ``good`` with one row index out of
    range the same way: the refusal's ValueError is printed.  Asserts that
    the interpreter survived."""
    code, out, err = run_isolated(f"""
        import scipy.sparse as sp
        from sketchlab import {estimator}
        good = sp.random(50, 40, density=0.3, format="csr", random_state=1)
        X = good.copy()
        X.indices[5] = {index}
        Xc = good.tocsc()
        Xc.indices[5] = {index} if {index} < 0 else 10**9
        try:
            {call}
        except ValueError as exc:
            print("ValueError:", exc)
    """)
    assert code == 0, err[-2000:]
    return out


# ---- matrices ----------------------------------------------------------------------------


def random_matrix(fmt, m, n, seed, dtype=np.float64):
    """An m x n matrix with about 30% nonzeros in format ``fmt`` ("C", "F",
    "csr" or "csc"), and the same as a dense array."""
    gen = np.random.default_rng(seed)
    D = gen.standard_normal((m, n)) * (gen.random((m, n)) < 0.3)
    D = D.astype(dtype)
    return {"C": D, "F": np.asfortranarray(D), "csr": sp.csr_matrix(D),
            "csc": sp.csc_matrix(D)}[fmt], D


def low_rank_plus_noise(m, n, rank, noise, seed):
    """A rank-``rank`` matrix with singular values spread over 10 ... 1, plus
    ``noise`` times a standard normal matrix."""
    gen = np.random.default_rng(seed)
    A = (gen.standard_normal((m, rank)) * np.geomspace(10, 1, rank)) @ gen.standard_normal(
        (rank, n)
    )
    return A + noise * gen.standard_normal((m, n))


def base_dense(shape, seed=0):
    """A dense float64 matrix with about 30% zeros off a strong diagonal (so
    that its nonzero columns are independent), an empty row and an empty
    column when there is room."""
    gen = np.random.default_rng([seed, *shape])
    D = gen.standard_normal(shape) + 2.0 * np.eye(*shape)
    D[gen.random(shape) < 0.3] = 0.0
    np.fill_diagonal(D, np.diag(D) + 3.0)
    if shape[0] > 4:
        D[shape[0] - 2] = 0.0  # an empty row
    if shape[1] > 4:
        D[:, shape[1] - 1] = 0.0  # an empty column
    return D


def kernel_points(n, d, dtype, seed, density=0.6, nonnegative=False, repeat=(5, 1),
                  empty=None):
    """n points in d dimensions, about ``density`` of the coordinates nonzero,
    with point ``repeat[0]`` a copy of point ``repeat[1]`` (a distance exactly
    0 off the diagonal) and, when ``empty`` is given, that point all zero
    (cosine: zero similarity); entrywise absolute values when ``nonnegative``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < density)
    if empty is not None:
        X[empty % n] = 0.0
    X[repeat[0] % n] = X[repeat[1] % n]
    return (np.abs(X) if nonnegative else X).astype(dtype)


def sketch_state(shape):
    """A SketchState of ``shape`` with a range, a co-range and a core sketch of
    four kinds."""
    import sketchlab as sl

    m, n = shape
    return sl.SketchState(shape, {
        "range": (None, sl.GaussianSketch(3, n, rng=1)),
        "co-range": (sl.CountSketch(4, m, rng=2), None),
        "core": (sl.OSNAP(5, m, rng=3), sl.SRHT(4, n, rng=4)),
    })


def gmr_problem(m=60, n=50, c=5, r=4, density=0.3, seed=0, dtype=np.float64):
    """A generalized matrix regression problem: a sparse-ish A (with an empty
    row and column), and random C, R."""
    g = np.random.default_rng(seed)
    A = g.standard_normal((m, n)) * (g.random((m, n)) < density)
    A[min(3, m - 1)] = 0.0
    A[:, min(7, n - 1)] = 0.0
    C = g.standard_normal((m, c))
    R = g.standard_normal((r, n))
    return A.astype(dtype), C.astype(dtype), R.astype(dtype)


# ---- input forms -------------------------------------------------------------------------


def unsorted_duplicates(A):
    """The compressed matrix ``A`` (CSR or CSC, matrix or array class) with the
    entries of every row (CSR) or column (CSC) in reverse order and each value
    split into two stored entries, a half and the rest (their sum is the
    value exactly), which scipy sums."""
    A = A.copy()
    A.sum_duplicates()
    indptr, indices, data = [0], [], []
    for i in range(A.indptr.shape[0] - 1):
        lo, hi = A.indptr[i], A.indptr[i + 1]
        idx = A.indices[lo:hi][::-1]
        vals = A.data[lo:hi][::-1]
        half = (vals * 0.5).astype(A.dtype)
        indices.extend(np.repeat(idx, 2))
        data.extend(np.stack([half, vals - half], axis=1).ravel())
        indptr.append(len(indices))
    out = type(A)((np.array(data, dtype=A.dtype), np.array(indices, dtype=A.indices.dtype),
                   np.array(indptr, dtype=A.indptr.dtype)), shape=A.shape)
    assert out.nnz == 0 or not out.has_canonical_format
    return out


FORMS = ["dense-C", "dense-F", "csr", "csc", "csr-unsorted-dup"]
"""The input forms of :func:`as_form`."""


def as_form(A, form):
    """The dense array ``A`` in one of the input forms of :data:`FORMS`."""
    if form == "dense-C":
        return np.ascontiguousarray(A)
    if form == "dense-F":
        return np.asfortranarray(A)
    if form == "csr":
        return sp.csr_matrix(A)
    if form == "csc":
        return sp.csc_array(A)
    if form == "csr-unsorted-dup":
        return unsorted_duplicates(sp.csr_matrix(A))
    raise ValueError(form)


# ---- closeness ---------------------------------------------------------------------------


def rel_err(X, Y):
    """||X - Y||_F / ||Y||_F, in float64."""
    return np.linalg.norm(np.asarray(X, dtype=np.float64) - Y) / np.linalg.norm(Y)


def compare(got, want):
    """Max difference of two lists of arrays, relative to the largest entry
    of the reference (inf on a shape mismatch or on non-finite entries where
    the reference has other values)."""
    if len(got) != len(want):
        return float("inf"), "different number of outputs"
    got = [np.asarray(g, dtype=np.float64) for g in got]
    want = [np.asarray(w, dtype=np.float64) for w in want]
    scale = max([np.abs(w[np.isfinite(w)]).max(initial=0.0) for w in want] + [1e-300])
    worst = 0.0
    for g, w in zip(got, want):
        if g.shape != w.shape:
            return float("inf"), f"shape {g.shape} != {w.shape}"
        finite = np.isfinite(w)
        if not np.array_equal(np.isfinite(g), finite) or not np.array_equal(g[~finite],
                                                                              w[~finite]):
            return float("inf"), "non-finite entries differ from the reference's"
        worst = max(worst, float(np.abs(g[finite] - w[finite]).max(initial=0.0) / scale))
    return worst, ""


def on_one_and_two_threads(call, *, blas=False):
    """``[call(), call()]``: on one Numba thread, then on two (where Numba
    has them), the BLAS threads limited alike with ``blas``; Numba's thread
    count restored after (the thread-count tests compare the two bit for bit)."""
    import contextlib

    import numba
    from threadpoolctl import threadpool_limits

    before = numba.get_num_threads()
    out = []
    try:
        for threads in (1, min(2, numba.config.NUMBA_NUM_THREADS)):
            numba.set_num_threads(threads)
            with threadpool_limits(limits=threads, user_api="blas") if blas \
                    else contextlib.nullcontext():
                out.append(call())
    finally:
        numba.set_num_threads(before)
    return out
