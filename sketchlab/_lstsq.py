"""Least squares to full accuracy from a sketch: sketch-and-precondition.

A sketch ``S A`` (``d x n``, ``d`` a small multiple of ``n``) of a tall ``A``
gives, through its thin SVD ``S A = U diag(s) V^T``, the preconditioner
``P = V diag(1/s)``: ``A P`` has condition number ``(1 + eps) / (1 - eps)``
for a subspace embedding of distortion ``eps``.  Four solvers share it:

- ``"sketch-and-solve"``: ``x = argmin ||S (A x - b)||`` (no iteration; a
  ``(1 + eps)``-optimal residual, a forward error that grows with the
  condition number);
- ``"blendenpik"``: LSQR on ``A P`` started at the sketch-and-solve answer
  (Avron, Maymounkov and Toledo 2010, with the warm start of Meier,
  Nakatsukasa, Townsend and Webb 2024, who showed it is not backward stable);
- ``"spir"``: sketch-and-precondition with iterative refinement (Epperly,
  Meier and Nakatsukasa 2024): two rounds of conjugate gradients on the
  preconditioned normal equations of the correction, each started from a
  freshly computed residual ``b - A x``;
- ``"fossils"``: the same two refinement rounds with Polyak's heavy-ball
  iteration, damping ``(1 - n/d)^2`` and momentum ``n/d`` (the same paper's
  FOSSILS), backward stable.

Notation in the code: ``V``, ``s`` the sketch's right singular vectors and
singular values, ``sreg = sqrt(s^2 + reg^2)`` (FOSSILS's regularization of a
sketch whose condition number exceeds ``1 / (30 eps)``), ``c`` the
preconditioned gradient, ``dy`` the correction in preconditioned coordinates
(``dx = V (dy / sreg)``).

Everything that decides ``x`` runs on one BLAS thread or in Numba loops whose
result does not depend on the thread count, so ``x`` is bit for bit the same
for any number of threads.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ._cg import ConjugateGradients
from ._config import safe_exponent, serial_blas
from ._linalg import numerical_rank, qr_r, svd
from ._operators import SketchOperator
from ._linear_map import as_linear_map, into_safe_range
from ._results import result_type, warn_unconverged
from ._validation import (
    Checked,
    as_matrix,
    check_choice,
    check_int,
    check_random_state,
    check_sketchable,
    check_tol,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from ._validation import MatrixLike, RNGLike

__all__ = ["lstsq", "lstsq_by_passes", "sketch_preconditioner", "LstsqResult",
           "SketchPreconditioner", "METHODS"]

METHODS = ("fossils", "spir", "blendenpik", "sketch-and-solve")

# Epperly, Meier and Nakatsukasa's defaults: a sparse sign embedding with 8
# nonzeros per column (OSNAP.embedding_params) and d = 12 n rows ...
_SKETCH_FACTOR = 12
# ... but a sketch of at most a quarter of A's stored entries, down to
# d = 4 n (Blendenpik's ratio), so that it never outweighs A: a CSR A of
# 1e6 x 1000 with 1e7 nonzeros (118 MiB) would get a 96 MiB sketch at 12 n
_MIN_SKETCH_FACTOR = 4
_SKETCH_SHARE = 0.25
_SMALL_SKETCH = 1 << 20  # entries of a sketch too small to matter: always 12 n
# rows of A sketched at a time, times the sketch's nonzeros per column
_SKETCH_BLOCK_ENTRIES = 1 << 17
# refinement rounds of FOSSILS and SPIR: two (the paper's), up to four
# when the second stalls above tol
_MAX_ROUNDS = 4
# the backward error is estimated every this many inner iterations of the last refinement round
_CHECK_EVERY = 5
_DEFAULT_MAXITER = 200

if TYPE_CHECKING:
    # What type checkers see: the fields as a NamedTuple, the extras as
    # attributes (at run time the classes come from result_type, below).
    class _LstsqFields(NamedTuple):
        x: NDArray[np.floating]
        residual_norm: Any

    class LstsqResult(_LstsqFields):
        backward_error: float
        iterations: int
        converged: bool
        method: str
        sketch_size: int
        rank: int

        def __new__(cls, x: NDArray[np.floating], residual_norm: Any, *,
                    backward_error: float = ..., iterations: int = ..., converged: bool = ...,
                    method: str = ..., sketch_size: int = ..., rank: int = ...
                    ) -> LstsqResult: ...

    class _PreconditionerFields(NamedTuple):
        AP: Any
        P: Any

    class SketchPreconditioner(_PreconditionerFields):
        singular_values: NDArray[np.floating]
        rank: int
        sketch_size: int

        def __new__(cls, AP: Any, P: Any, *, singular_values: NDArray[np.floating] = ...,
                    rank: int = ..., sketch_size: int = ...) -> SketchPreconditioner: ...

else:
    LstsqResult = result_type(
        "LstsqResult", ("x", "residual_norm"),
        {"backward_error": None, "iterations": 0, "converged": False, "method": None,
         "sketch_size": None, "rank": None},
        """The solution of a least-squares problem: unpacks as ``x, residual_norm``.

        Attributes
        ----------
        x : ndarray of shape (n,) or (n, k)
            The solution (one column per column of b).
        residual_norm : float or ndarray of shape (k,)
            ``||b - A x||_2`` (per column of b; the damping term is not included),
            computed from the returned ``x``.
        backward_error : float
            The Karlson-Walden estimate of the relative backward error
            ``min ||dA||_F / ||A||_F`` over the ``dA`` for which ``x`` solves the
            problem with ``A + dA`` exactly (the largest over the columns of b),
            computed with the sketch's singular values and vectors in place of
            A's; within a small constant factor of the true value (Karlson and
            Walden 1997; Epperly, Meier and Nakatsukasa 2024, Section 5).
        iterations : int
            Inner iterations (each one product with A and one with A^T), summed
            over the refinement rounds; 0 for ``"sketch-and-solve"``; for
            ``"blendenpik"`` the most LSQR iterations over the columns of b.
        converged : bool
            Whether ``backward_error`` reached ``tol``.
        method : str
            The method used.
        sketch_size : int
            The rows ``d`` of the sketch.
        rank : int
            The numerical rank found in the sketch (``n`` unless A is numerically
            rank deficient).
        """)

    SketchPreconditioner = result_type(
        "SketchPreconditioner", ("AP", "P"),
        {"singular_values": None, "rank": None, "sketch_size": None},
        """A sketch-based right preconditioner: unpacks as ``AP, P``.

        Attributes
        ----------
        AP : scipy.sparse.linalg.LinearOperator of shape (m, r), or (m + n, r) with damping
            ``A P`` (``[A; damp I] P`` when ``damp > 0``), with condition number
            close to 1; hand it to ``scipy.sparse.linalg.lsqr`` or ``lsmr``.
        P : scipy.sparse.linalg.LinearOperator of shape (n, r)
            Maps the solution ``y`` of ``min ||A P y - b||`` to ``x = P y``.
        singular_values : ndarray of shape (r,)
            The sketch's singular values (estimates of A's within the embedding's
            distortion).
        rank : int
            ``r``, the numerical rank of the sketch.
        sketch_size : int
            The rows ``d`` of the sketch.
        """)


@dataclass
class _Problem:
    """A validated problem: A (m x n, as its linear map ``ops``), ``B``
    (m x k), in the working dtype, both scaled by powers of two into a range
    where no square over- or underflows (``x = 2**x_exp x'`` and
    ``r = 2**r_exp r'`` map the scaled problem's answers back, exactly)."""

    ops: Any  # the LinearMap of A
    B: np.ndarray
    vector: bool  # b was 1-D
    damp: float
    x_exp: int = 0
    r_exp: int = 0

    @property
    def A(self):
        return self.ops.entries

    @property
    def shape(self):
        return self.ops.shape

    @property
    def dtype(self):
        return self.ops.dtype


@dataclass
class _Sketched:
    """What the sketch gives: the preconditioner and the sketch-and-solve answer."""

    V: np.ndarray  # n x n right singular vectors of the (augmented) sketch
    s: np.ndarray  # n singular values, non-increasing
    rank: int
    reg: float  # FOSSILS's regularization (0 for a sketch of moderate condition)
    x0: np.ndarray  # n x k sketch-and-solve solution
    sketch_size: int

    @property
    def Vr(self):
        return self.V[:, :self.rank]

    @property
    def sreg(self):
        s = self.s[:self.rank]
        return np.sqrt(s * s + self.reg * self.reg) if self.reg else s


# -- validation ---------------------------------------------------------------


def _check_damp(damp):
    if isinstance(damp, (bool, np.bool_)) or not isinstance(damp, numbers.Real):
        raise TypeError(f"damp must be a real number >= 0, got {damp!r}")
    value = float(damp)
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"damp must be a finite number >= 0, got {damp!r}")
    return value


def _check_matrix(A):
    """The linear map of a checked, tall, non-empty A with entries."""
    ops = as_linear_map(A, "A")
    m, n = ops.shape
    if ops.entries is None:
        raise TypeError(
            f"A must be a dense array or a scipy.sparse matrix (sketching needs its entries), "
            f"got {type(A).__name__}; for an operator given only by its products use "
            "scipy.sparse.linalg.lsqr or lsmr (with sketchlab.sketch_preconditioner of a "
            "matrix that approximates it)")
    if m == 0 or n == 0:
        raise ValueError(f"A must have at least one row and one column, got shape {ops.shape}")
    if m < n:
        raise ValueError(
            f"A must be tall (rows >= columns) for a sketched least-squares solve, got shape "
            f"{ops.shape}; for an underdetermined system use scipy.linalg.lstsq or "
            "scipy.sparse.linalg.lsqr (minimum-norm solution)"
        )
    check_sketchable(ops.shape, "A")
    return ops


def _check_problem(A, b, damp):
    ops = _check_matrix(A)
    m, n = ops.shape
    b = as_matrix(b, "b", allow_1d=True, sparse=False)
    if b.shape[0] != m:
        raise ValueError(f"b must have {m} rows (A has shape {ops.shape}), got shape {b.shape}")
    if b.ndim == 2 and b.shape[1] == 0:
        raise ValueError(f"b must have at least one column, got shape {b.shape}")
    dtype = np.dtype(np.float32) if ops.dtype == b.dtype == np.float32 else np.dtype(np.float64)
    ops = ops.astype(dtype)
    B = np.ascontiguousarray(b.reshape(m, -1), dtype=dtype)
    damp = _check_damp(damp)
    # A and b brought into the solvers' safe range by powers of two (exact),
    # x and the residual scaled back: the same answer from 1e-300 to 1e300
    ops, ea = into_safe_range(ops)
    eb = safe_exponent(float(np.max(np.abs(B))) if B.size else 0.0)
    if ea:
        damp = math.ldexp(damp, -ea)
    if eb:
        B = np.ldexp(B, -eb).astype(dtype, copy=False)
    return _Problem(ops, B, b.ndim == 1, damp, x_exp=eb - ea, r_exp=eb)


def default_sketch_size(entries, n):
    """``12 n``, or less (down to ``4 n``) when a sketch that large (more than
    ``2**20`` entries) would exceed a quarter of the ``entries`` A stores."""
    full = _SKETCH_FACTOR * n
    if full * n <= _SMALL_SKETCH:
        return full
    fits = int(_SKETCH_SHARE * entries) // n
    return max(_MIN_SKETCH_FACTOR * n, min(full, fits))


def _check_sketch(sketch, sketch_size, m, n, A_entries):
    """(kind name or operator, sketch size)."""
    from ._registry import kinds_with

    if isinstance(sketch, SketchOperator):
        if sketch.input_dim != m:
            raise ValueError(f"sketch must have input_dim {m} (the rows of A), got "
                             f"{sketch.input_dim}")
        if sketch_size is not None and check_int(sketch_size, "sketch_size") != sketch.sketch_size:
            raise ValueError(f"sketch_size {sketch_size!r} disagrees with the operator's "
                             f"sketch_size {sketch.sketch_size}")
        size = sketch.sketch_size
    else:
        if sketch is None:
            sketch = "osnap"
        # the kinds built from sizes alone (a sampler on scores needs A's scores)
        check_choice(sketch, "sketch", kinds_with(gmr=True, needs_scores=False))
        size = default_sketch_size(A_entries, n) if sketch_size is None else sketch_size
    size = check_int(size, "sketch_size", n, 2**30)
    return sketch, size


def _entries(A):
    return int(A.nnz) if sp.issparse(A) else A.shape[0] * A.shape[1]


def _check_maxiter(maxiter):
    return _DEFAULT_MAXITER if maxiter is None else check_int(maxiter, "maxiter", 1)


def _col_norms(X):
    return np.sqrt(np.einsum("ij,ij->j", X, X))


# -- the sketch ----------------------------------------------------------------


def _make_operator(sketch, size, m, seed):
    """The operator, or one of the kind as a subspace embedding (OSNAP: 8
    nonzeros per column; the class says: ``embedding_params``)."""
    from ._registry import make_sketch, operator_class

    if isinstance(sketch, SketchOperator):
        return sketch
    return make_sketch(sketch, size, m, rng=seed,
                       **operator_class(sketch).embedding_params(size))


def _sketch(problem, S, with_rhs=True):
    """The sketch's SVD and (``with_rhs``) the sketch-and-solve solution:
    :func:`_factor` of the sketch of A's rows in memory."""
    return _factor(problem, _sketch_rows(problem, S, with_rhs), S.sketch_size, with_rhs)


def _sketch_rows(problem, S, with_rhs=True):
    """``S [A, b]`` (d x (n + k); ``S A`` without ``with_rhs``) of an A in
    memory, in row blocks."""
    A, B = problem.A, problem.B
    m, n = A.shape
    dtype = problem.dtype
    k = B.shape[1] if with_rhs else 0
    d = S.sketch_size
    # S [A, b] in row blocks of A: the operator's tables then exist for one
    # block at a time (for all of A they would take some 28 bytes per row and
    # nonzero per column), and the loops write the row-major sketch directly
    SAB = np.zeros((d, n + k), dtype=dtype)
    step = max(1, _SKETCH_BLOCK_ENTRIES // max(1, getattr(S, "nnz_per_col", 1)))
    if sp.issparse(A) and A.format == "csc":  # row slices of CSC read all of A
        step = m
    for r0 in range(0, m, step):
        r1 = min(m, r0 + step)
        block = A[r0:r1]
        if with_rhs:  # [A_block, b_block]: one set of tables (the hashing) for both
            if sp.issparse(block):
                block = sp.hstack([block, sp.csr_matrix(B[r0:r1])], format=block.format)
            else:
                block = np.hstack([block, B[r0:r1]])
        # rows of the checked A and b: no second check
        S.apply(Checked(block), 0, offset=r0, out=SAB[:, :block.shape[1]], accumulate=True)
    return SAB


def _factor(problem, SAB, d, with_rhs=True):
    """The sketch's SVD and (``with_rhs``) the sketch-and-solve solution from
    ``SAB = S [A, b]``.

    The QR of ``[S A, S b]`` (``[S A; damp I]`` with damping) gives at once
    ``R`` (n x n) and ``Q^T S b`` (its last k columns); the SVD of the small
    ``R`` gives the preconditioner.
    """
    damp, dtype = problem.damp, problem.dtype
    n = problem.shape[1]
    k = SAB.shape[1] - n
    # LAPACK's QR wants column-major: one copy (with the damping rows), then in place
    M = np.zeros((d + (n if damp else 0), n + k), dtype=dtype, order="F")
    M[:d] = SAB
    del SAB
    if damp:
        M[d + np.arange(n), np.arange(n)] = damp
    R = qr_r(M, overwrite=True)
    del M
    if R.shape[0] < n + k:  # fewer sketch rows than n + k: pad the triangle
        R = np.vstack([R, np.zeros((n + k - R.shape[0], n + k), dtype=dtype)])
    Ur, s, Vt = svd(R[:n, :n])
    eps = np.finfo(dtype).eps
    # rank: the one rank rule, with scipy.linalg.lstsq's cutoff (eps s_max)
    rank = numerical_rank(s, eps)
    if rank == 0:
        raise ValueError("A is zero (its sketch has no nonzero singular value)")
    reg = 0.0
    if s[0] / s[rank - 1] > 1.0 / (30 * eps):
        reg = float(10 * np.linalg.norm(s) * eps)
    V = np.ascontiguousarray(Vt.T)
    x0 = np.zeros((n, k), dtype=dtype)
    if with_rhs:
        Z = Ur[:, :rank].T @ R[:n, n:]
        x0 = V[:, :rank] @ (Z / s[:rank, None])
    return _Sketched(V, s, rank, reg, x0, d)


# -- the backward error ----------------------------------------------------------


def _backward_error(problem, sk, X, Rres, AtR, normA):
    """Karlson-Walden estimates (relative to ||A||_F), one per column.

    ``Rres`` is ``b - A x``, ``AtR`` the gradient ``A^T r - damp^2 x`` of the
    (augmented) problem; the sketch's SVD stands in for A's.
    """
    damp = problem.damp
    rnorm2 = np.einsum("ij,ij->j", Rres, Rres)
    xnorm2 = np.einsum("ij,ij->j", X, X)
    if damp:
        rnorm2 = rnorm2 + damp * damp * xnorm2
    rnorm = np.sqrt(rnorm2)
    xnorm = np.sqrt(xnorm2)
    G = sk.V.T @ AtR
    out = np.empty(X.shape[1])
    for j in range(X.shape[1]):
        gnorm = float(np.linalg.norm(G[:, j]))
        if gnorm == 0.0:
            out[j] = 0.0
        elif xnorm[j] == 0.0 or rnorm[j] == 0.0:
            out[j] = np.inf if xnorm[j] == 0.0 else 0.0
        else:
            omega = rnorm[j] / xnorm[j]
            s = sk.s.astype(np.float64)
            out[j] = np.linalg.norm(G[:, j] / np.sqrt(s * s + omega * omega)) / xnorm[j]
    return out / normA


def _gradient(problem, X, Rres):
    G = problem.ops.rmatmat(Rres)
    if problem.damp:
        G -= (problem.damp * problem.damp) * X
    return G


# -- the solvers -----------------------------------------------------------------


class _Refinement:
    """The rounds of iterative refinement shared by FOSSILS and SPIR."""

    def __init__(self, problem, sk, tol, maxiter, normA):
        self.problem, self.sk, self.tol = problem, sk, tol
        self.maxiter, self.normA = maxiter, normA
        self.Vr, self.sreg = sk.Vr, sk.sreg
        self.shift = problem.damp ** 2 + sk.reg ** 2
        self.iterations = 0

    def to_x(self, dy):
        return self.Vr @ (dy / self.sreg[:, None])

    def matvec(self, dy):
        """``M dy``, M = D V^T (A^T A + (damp^2 + reg^2) I) V D, D = diag(1 / sreg)."""
        Z = self.to_x(dy)
        W = self.problem.ops.normal(Z)
        if self.shift:
            W += self.shift * Z
        return (self.Vr.T @ W) / self.sreg[:, None]

    def state(self, X):
        """(residual, gradient, backward error) at X."""
        Rres = self.problem.B - self.problem.ops.matmat(X)
        G = _gradient(self.problem, X, Rres)
        be = _backward_error(self.problem, self.sk, X, Rres, G, self.normA)
        return Rres, G, be

    def run(self, inner, X):
        """Refinement rounds from X: the first ends on the paper's step rule,
        the later ones on the backward error (at ``tol``, or when it stops
        halving); a third or fourth round runs only when the second stalls
        above ``tol`` (a fresh residual lowers the floor of the next)."""
        sk = self.sk
        Rres, G, be = self.state(X)
        s_max, s_min = float(sk.s[0]), float(sk.sreg[-1])
        eps = np.finfo(self.problem.dtype).eps
        for round_ in range(_MAX_ROUNDS):
            if be.max() <= self.tol or self.iterations >= self.maxiter:
                break
            first = round_ == 0
            c = (self.Vr.T @ (G - sk.reg ** 2 * X)) / self.sreg[:, None]
            # first round: stop once the steps are below what the next
            # round's fresh residual can resolve (the paper's rule)
            xn, rn = _col_norms(X), _col_norms(Rres)
            small = eps * (s_max * xn + 0.04 * (s_max / s_min) * rn)
            dy, best, at_check = None, None, False
            for step_count, (dy, step) in enumerate(inner(self, c), start=1):
                self.iterations += 1
                at_check = not first and step_count % _CHECK_EVERY == 0
                if at_check:
                    trial = X + self.to_x(dy)
                    checked = (trial, *self.state(trial))
                    now = checked[3].max()
                    # done at the target, or when 5 more steps (which shrink
                    # the error some 100-fold) no longer halve the estimate:
                    # rounding in the residual bounds it from below there
                    stalled = best is not None and now > 0.5 * best[3].max()
                    if best is None or now < best[3].max():
                        best = checked
                    if now <= self.tol or stalled:
                        break
                if self.iterations >= self.maxiter:
                    break
                if first and np.all(_col_norms(step) <= small):
                    break
            if dy is None:
                break
            if not at_check:  # the last iterate was not checked yet
                trial = X + self.to_x(dy)
                checked = (trial, *self.state(trial))
                if best is None or checked[3].max() < best[3].max():
                    best = checked
            X, Rres, G, be = best
        return X, Rres, be


def _heavy_ball(ref, c):
    """Polyak's heavy ball on M dy = c from dy = c (FOSSILS's inner solver)."""
    beta = ref.sk.rank / ref.sk.sketch_size  # momentum
    alpha = (1.0 - beta) ** 2  # damping
    dy = c.copy()
    previous = c.copy()
    first = None
    while True:
        step = alpha * (c - ref.matvec(dy)) + beta * (dy - previous)
        size = float(np.max(_col_norms(step)))
        first = size if first is None else first
        if size > 100 * first:
            # growing steps: the sketch distorts more than n / d predicts and
            # the fixed parameters diverge; conjugate gradients need none
            yield from _conjugate_gradients(ref, c)
            return
        previous = dy
        dy = dy + step
        yield dy, step


def _conjugate_gradients(ref, c):
    """Conjugate gradients on M dy = c from dy = c, each column on its own (SPIR)."""
    cg = ConjugateGradients(ref.matvec, c, X0=c)
    while cg.step_once():
        yield cg.X, cg.step


def _operators(problem, sk):
    """``(A P, P)`` as LinearOperators (``[A; damp I] P`` with damping)."""
    from scipy.sparse.linalg import LinearOperator

    damp, dtype, ops = problem.damp, problem.dtype, problem.ops
    m, n = problem.shape
    Vr, sreg = sk.Vr, sk.s[:sk.rank]
    r = sk.rank

    def p_mat(Y):
        return Vr @ (Y / sreg[:, None])

    def pt_mat(X):
        return (Vr.T @ X) / sreg[:, None]

    def ap_mat(Y):
        X = p_mat(Y.reshape(r, -1))
        AX = ops.matmat(X)  # the map's products hold one BLAS thread themselves
        return np.vstack([AX, damp * X]) if damp else AX

    def ap_rmat(U):
        U = U.reshape(U.shape[0], -1)
        G = ops.rmatmat(U[:m])
        if damp:
            G = G + damp * U[m:]
        return pt_mat(G)

    rows = m + n if damp else m
    AP = LinearOperator((rows, r), matvec=ap_mat, rmatvec=ap_rmat, matmat=ap_mat,
                        rmatmat=ap_rmat, dtype=dtype)
    P = LinearOperator((n, r), matvec=lambda y: p_mat(y.reshape(r, -1)),
                       rmatvec=lambda x: pt_mat(x.reshape(n, -1)),
                       matmat=p_mat, rmatmat=pt_mat, dtype=dtype)
    return AP, P


def _blendenpik(problem, sk, tol, maxiter):
    """LSQR on A P from the sketch-and-solve solution, column by column."""
    from scipy.sparse.linalg import lsqr

    AP, P = _operators(problem, sk)
    X = sk.x0.copy()
    m, n = problem.shape
    Rres = problem.B - problem.ops.matmat(X)
    if problem.damp:
        Rres = np.vstack([Rres, -problem.damp * X])
    iterations = 0
    for j in range(X.shape[1]):
        out = lsqr(AP, Rres[:, j], atol=tol, btol=tol, iter_lim=maxiter)
        X[:, j] += P.matvec(out[0]).ravel()
        iterations = max(iterations, int(out[2]))
    return X, iterations


# -- public functions ----------------------------------------------------------------


def lstsq(A: MatrixLike, b: ArrayLike, *, damp: float = 0.0, method: str = "fossils",
          sketch: str | SketchOperator | None = None, sketch_size: int | None = None,
          tol: float | None = None, maxiter: int | None = None,
          rng: RNGLike = None) -> LstsqResult:
    """Least squares ``min ||A x - b||^2 + damp^2 ||x||^2`` for a tall A, by sketching.

    The sketch ``S A`` of a sparse sign embedding gives a preconditioner
    (``P = V diag(1/s)`` from the sketch's SVD); FOSSILS (default) and SPIR
    then reach the accuracy of a QR-based solver (backward stable) in a few
    dozen products with A and A^T.

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (m, n), m >= n
        Dense (C or F order) or CSR/CSC (other sparse formats are converted
        to CSR).
    b : array_like, shape (m,) or (m, k)
        One right-hand side, or k of them (solved together: one pass over A
        serves every column).
    damp : float, default 0
        Tikhonov damping: solves the augmented problem
        ``min ||[A; damp I] x - [b; 0]||`` (scipy's ``lsqr`` convention).
    method : {"fossils", "spir", "blendenpik", "sketch-and-solve"}
        ``"fossils"``: FOSSILS (heavy-ball iterations with iterative
        refinement, two rounds); ``"spir"``: sketch-and-precondition with
        iterative refinement (conjugate gradients, two rounds);
        ``"blendenpik"``: the classical sketch-and-precondition, LSQR on
        ``A P`` warm-started at the sketch-and-solve answer (fast, but its
        backward error grows with the condition number);
        ``"sketch-and-solve"``: ``argmin ||S (A x - b)||`` only.
    sketch : str or SketchOperator, optional
        A kind of ``sketchlab.SKETCH_KINDS`` (default ``"osnap"`` with 8
        nonzeros per column, the sparse sign embedding of the papers), or an
        operator of shape ``(d, m)``.
    sketch_size : int, optional
        Rows ``d`` of the sketch, in ``[n, 2**30]``; default ``12 n``
        (Epperly, Meier and Nakatsukasa's choice: the heavy ball converges at
        the rate ``sqrt(n / d)`` per iteration), reduced down to ``4 n``
        where ``12 n^2`` would exceed a quarter of A's stored entries (so
        that the sketch, ``d x n`` dense, stays well below A's size).
    tol : float, optional
        Target relative backward error in (0, 1); default the machine epsilon
        of the working dtype.  The iterations stop once the Karlson-Walden
        estimate reaches it (checked every 5 iterations of the last refinement round).
    maxiter : int, optional
        Most inner iterations in all (default 200); for ``"blendenpik"`` the
        LSQR iteration limit of each column.
    rng : None, int or numpy.random.Generator
        Seed of the sketch.

    Returns
    -------
    LstsqResult
        Unpacks as ``x, residual_norm``; ``backward_error``, ``iterations``,
        ``converged``, ``method``, ``sketch_size`` and ``rank`` are
        attributes.

    Raises
    ------
    ValueError
        A wide A (m < n), an empty A, b with a different number of rows,
        NaN or Inf in A or b, an A that is zero, a bad ``method``, ``damp``,
        ``sketch``, ``sketch_size``, ``tol`` or ``maxiter``.
    TypeError
        Non-numeric A or b, or parameters of the wrong type.

    Notes
    -----
    Cost: one sketch (``O(8 nnz(A))``), a QR of the ``d x (n + k)`` sketch
    and an SVD of its ``n x n`` triangle (``O(d n^2)``), then one pass over
    A per inner iteration (``A^T (A z)`` for a C-ordered dense or a CSR A;
    two passes for CSC or F-ordered A) and two per refinement round and
    backward-error check.  Memory besides A: two copies of the ``d x n``
    sketch at its peak, and a few ``m x k`` and ``n x k`` blocks.

    Precision: float32 A and b are solved in float32 (x is float32, backward
    stable to float32's epsilon); any other combination in float64 (a
    float32 A is converted when b is not float32).

    Rank: singular values of the sketch at or below ``eps * s_max`` are
    treated as zero (the cutoff of ``scipy.linalg.lstsq``); the solution is
    then sought in the span of the remaining right singular vectors, which
    gives the minimum-norm solution (``rank`` says how many were kept).  A
    sketch condition number above ``1 / (30 eps)`` is regularized as
    FOSSILS does (the final rounds of refinement undo it).

    The Karlson-Walden estimate ``backward_error`` is
    ``||(V diag(s^2 + w^2) V^T)^{-1/2} A^T r|| / (||x|| ||A||_F)`` with
    ``w = ||r|| / ||x||`` and the sketch's ``s``, ``V`` in place of A's.

    Determinism: the sketch is the same on any thread count, and every BLAS
    call runs on one thread, so ``x`` is bit for bit identical for any
    number of Numba or BLAS threads (on one machine and BLAS build).

    References: Epperly, Meier and Nakatsukasa, "Fast randomized
    least-squares solvers can be just as accurate and stable as classical
    direct solvers" (2024); Meier, Nakatsukasa, Townsend and Webb, "Are
    sketch-and-precondition least squares solvers numerically stable?"
    (2024); Avron, Maymounkov and Toledo, "Blendenpik" (2010).

    Examples
    --------
    >>> import numpy as np, sketchlab, scipy.linalg
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((2000, 20)) * np.logspace(0, 8, 20)
    >>> b = rng.standard_normal(2000)
    >>> x, rnorm = sketchlab.lstsq(A, b, rng=0)
    >>> x_ref = scipy.linalg.lstsq(A, b)[0]
    >>> bool(np.allclose(x, x_ref, rtol=1e-6, atol=0))
    True
    >>> res = sketchlab.lstsq(A, b, rng=0)
    >>> res.converged, res.backward_error < 1e-14
    (True, True)
    """
    # the scalar parameters first, then the O(nnz) checks of A and b
    method = check_choice(method, "method", METHODS)
    _check_damp(damp)
    tol = check_tol(tol)
    maxiter = _check_maxiter(maxiter)
    seed = check_random_state(rng)
    problem = _check_problem(A, b, damp)
    m, n = problem.shape
    sketch, size = _check_sketch(sketch, sketch_size, m, n, _entries(problem.A))
    S = _make_operator(sketch, size, m, seed)
    with serial_blas():
        sk = _sketch(problem, S)
    return _solve(problem, sk, method, tol, maxiter, size)


def lstsq_by_passes(ops: Any, b: ArrayLike, sketch_pass: Any, *, damp: float = 0.0,
                    method: str = "fossils", sketch: str | SketchOperator | None = None,
                    sketch_size: int | None = None, tol: float | None = None,
                    maxiter: int | None = None, rng: RNGLike = None) -> LstsqResult:
    """:func:`lstsq` of an A known by its linear map ``ops`` (its products)
    and one pass ``sketch_pass(S, B)`` that returns ``S [A, B]``: the dask
    front's.  The same checks, operator, draws and iterations as
    :func:`lstsq` (the same answer, to the rounding of the products, for
    the same ``rng`` and ``sketch_size``); the default sketch size counts A
    as dense (its stored entries are not known before a pass).  A is scaled
    (by a power of two, exactly) when its sketch's entries lie outside the
    safe range."""
    method = check_choice(method, "method", METHODS)
    damp = _check_damp(damp)
    tol = check_tol(tol)
    maxiter = _check_maxiter(maxiter)
    seed = check_random_state(rng)
    m, n = ops.shape
    if m == 0 or n == 0:
        raise ValueError(f"A must have at least one row and one column, got shape {ops.shape}")
    if m < n:
        raise ValueError(f"A must be tall (rows >= columns) for a sketched least-squares "
                         f"solve, got shape {ops.shape}")
    check_sketchable(ops.shape, "A")
    b = as_matrix(b, "b", allow_1d=True, sparse=False)
    if b.shape[0] != m:
        raise ValueError(f"b must have {m} rows (A has shape {ops.shape}), got shape {b.shape}")
    if b.ndim == 2 and b.shape[1] == 0:
        raise ValueError(f"b must have at least one column, got shape {b.shape}")
    dtype = np.dtype(np.float32) if ops.dtype == b.dtype == np.float32 else np.dtype(np.float64)
    B = np.ascontiguousarray(b.reshape(m, -1), dtype=dtype)
    sketch, size = _check_sketch(sketch, sketch_size, m, n, m * n)
    S = _make_operator(sketch, size, m, seed)
    eb = safe_exponent(float(np.max(np.abs(B))) if B.size else 0.0)
    if eb:
        B = np.ldexp(B, -eb).astype(dtype, copy=False)
    SAB = np.asarray(sketch_pass(S, B), dtype=dtype)
    ea = safe_exponent(float(np.max(np.abs(SAB[:, :n]))) if SAB.size else 0.0)
    if ea:  # exact: the sketch is linear in A
        SAB[:, :n] = np.ldexp(SAB[:, :n], -ea)
        ops, damp = ops.scaled(-ea), math.ldexp(damp, -ea)
    problem = _Problem(ops, B, b.ndim == 1, damp, x_exp=eb - ea, r_exp=eb)
    with serial_blas():
        sk = _factor(problem, SAB, size)
    return _solve(problem, sk, method, tol, maxiter, size)


def _solve(problem, sk, method, tol, maxiter, size):
    """Everything after the sketch's factorization: the iterations, the
    scaling back, the warning, the result."""
    tol = float(np.finfo(problem.dtype).eps) if tol is None else tol
    with serial_blas():
        normA = float(np.linalg.norm(sk.s))  # ||S A||_F, within the distortion of ||A||_F
        X, iterations = sk.x0, 0
        if method in ("fossils", "spir"):
            ref = _Refinement(problem, sk, tol, maxiter, normA)
            inner = _heavy_ball if method == "fossils" else _conjugate_gradients
            X, Rres, be = ref.run(inner, X)
            iterations = ref.iterations
        else:
            if method == "blendenpik":
                X, iterations = _blendenpik(problem, sk, tol, maxiter)
            Rres = problem.B - problem.ops.matmat(X)
            be = _backward_error(problem, sk, X, Rres, _gradient(problem, X, Rres), normA)
        rnorm = _col_norms(Rres)
    if problem.x_exp:
        X = np.ldexp(X, problem.x_exp).astype(problem.dtype, copy=False)
    if problem.r_exp:
        rnorm = np.ldexp(rnorm, problem.r_exp).astype(rnorm.dtype, copy=False)
    x = X[:, 0] if problem.vector else X
    residual = float(rnorm[0]) if problem.vector else rnorm
    be_max = float(be.max())
    converged = bool(be_max <= tol)
    if not converged and method != "sketch-and-solve":
        warn_unconverged(
            f"lstsq (method={method!r}) stopped after {iterations} iterations at a backward "
            f"error of {be_max:.3g} > tol={tol:.3g}; increase maxiter or sketch_size "
            f"(now {size}; the default is 12 n)")
    return LstsqResult(x, residual, backward_error=be_max, iterations=int(iterations),
                       converged=converged, method=method, sketch_size=size, rank=sk.rank)


def sketch_preconditioner(A: MatrixLike, *, damp: float = 0.0,
                          sketch: str | SketchOperator | None = None,
                          sketch_size: int | None = None,
                          rng: RNGLike = None) -> SketchPreconditioner:
    """A right preconditioner of a tall A from its sketch, for scipy's ``lsqr`` / ``lsmr``.

    ``P = V diag(1/s)`` from the thin SVD ``S A = U diag(s) V^T`` of a sparse
    sign sketch; ``A P`` then has condition number close to 1, so LSQR or
    LSMR on ``A P`` converge in a few dozen iterations whatever the
    condition number of A.  Solve ``y = lsqr(AP, b)`` and map back
    ``x = P @ y``.  (This is Blendenpik / LSRN style sketch-and-precondition;
    for the backward-stable solvers see :func:`lstsq`.)

    Parameters
    ----------
    A : array_like or scipy.sparse matrix, shape (m, n), m >= n
    damp : float, default 0
        With ``damp > 0``, ``AP`` is ``[A; damp I] P`` of shape
        ``(m + n, r)``: pass ``b`` padded with n zeros.
    sketch, sketch_size, rng
        As in :func:`lstsq` (default: OSNAP, 8 nonzeros per column,
        ``d = 12 n``, less for a sparse A with few nonzeros per column).

    Returns
    -------
    SketchPreconditioner
        Unpacks as ``AP, P`` (``scipy.sparse.linalg.LinearOperator``);
        ``singular_values``, ``rank``, ``sketch_size`` are attributes.
        ``AP`` holds a reference to A.

    Raises
    ------
    ValueError, TypeError
        As :func:`lstsq` for A and the sketch parameters.

    Notes
    -----
    Cost: the sketch (``O(8 nnz(A))``), a QR of the ``d x n`` sketch and an
    SVD of ``n x n``.  Singular values at or below ``eps s_max`` are dropped
    (``r < n``): LSQR then returns the minimum-norm solution.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, sketchlab
    >>> from scipy.sparse.linalg import lsqr
    >>> A = sp.random(5000, 50, density=0.05, format="csr", random_state=0)
    >>> A = A @ sp.diags(np.logspace(0, 6, 50))      # condition number ~1e6
    >>> b = np.random.default_rng(0).standard_normal(5000)
    >>> AP, P = sketchlab.sketch_preconditioner(A, rng=0)
    >>> y, istop, itn = lsqr(AP, b, atol=1e-14, btol=1e-14)[:3]
    >>> x = P @ y
    >>> itn < 40
    True
    >>> r = b - A @ x
    >>> bool(np.linalg.norm(A.T @ r) < 1e-8 * np.linalg.norm(b) * sp.linalg.norm(A))
    True
    """
    damp = _check_damp(damp)
    seed = check_random_state(rng)
    ops = _check_matrix(A)
    m, n = ops.shape
    problem = _Problem(ops, np.zeros((m, 0), dtype=ops.dtype), False, damp)
    sketch, size = _check_sketch(sketch, sketch_size, m, n, _entries(problem.A))
    S = _make_operator(sketch, size, m, seed)
    with serial_blas():
        sk = _sketch(problem, S, with_rhs=False)
    AP, P = _operators(problem, sk)
    return SketchPreconditioner(AP, P, singular_values=sk.s[:sk.rank].copy(), rank=sk.rank,
                                sketch_size=size)
