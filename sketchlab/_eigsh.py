"""Eigenpairs of a symmetric matrix by randomized block Krylov iteration:
:func:`eigsh`, with each pair's residual.

Block Lanczos with full reorthogonalization, thick restarts and
Rayleigh-Ritz extraction (Golub and Underwood 1977; the thick restart of Wu
and Simon 2000, in its block form, Zhou and Saad 2008), from a Gaussian
start block, on the basis of :mod:`sketchlab._krylov`
(:class:`~sketchlab._linalg.GrowingBasis`: block Gram-Schmidt, CholeskyQR2,
fresh random directions in place of rounding noise).  For a PSD A the
Nystrom form of the same Krylov space (Tropp and Webber 2023, NysBKI) is
returned where its eigenvalues, which like the Ritz values are lower bounds
of A's, are larger.

The relation kept: ``A Q_d = Q_s H`` for the ``d`` basis columns already
multiplied by A (``Q_d``), all ``s`` columns (``Q_s``: ``Q_d`` and the
block not yet multiplied), and the s x d coefficient matrix ``H`` (every
coefficient of every orthogonalization).  Its top d x d part is
``Q_d^T A Q_d``, whose eigenpairs ``(theta, y)`` are the Ritz pairs, and
the pair ``(theta, Q_d y)`` has the residual ``||H[d:s] y||`` (the rows of
the block not yet multiplied): known after every pass, up to rounding.  A
thick restart keeps the wanted Ritz vectors and the block not yet
multiplied; the relation holds on, with ``H`` diagonal (the Ritz values)
and coupled to that block only.

The answer's residuals ``||A v - lambda v||`` are computed from one more
product with A (counted in ``passes``), not taken from the recurrence.

Determinism: the start block and fresh directions come from ``rng``; the
products are the linear map's (the same for any thread count), the large
products with the basis run in fixed row chunks, and the driver holds one
BLAS thread.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ._config import serial_blas
from ._engine.reductions import largest_magnitude, squared_frobenius
from ._engine.threads import tall_mul
from ._krylov_basis import GrowingBasis
from ._linalg import cholesky, eigh, exponent_of_largest, lower_inverse, svd
from ._linear_map import LinearMap, as_linear_map
from ._results import result_type, warn_unconverged
from ._validation import as_generator, check_choice, check_int, check_tol

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from ._validation import MatrixLike

__all__ = ["eigsh", "EigshResult", "eigsh_run", "WHICH"]

WHICH = ("LM", "LA", "SA")
# Bound on the passes over A when neither passes= nor convergence stops earlier.
_DEFAULT_MAX_PASSES = 1000
# The basis (columns beyond the wanted ones): k + max(k, 20) + 2 b, thick
# restarts keeping k + (D - k) / 4 Ritz vectors (the best of the shapes tried
# on a 10-nearest-neighbour graph of 20,000 images, k = 10 and 50)
_EXTRA = 20
_KEEP_FRACTION = 4
# The basis may not exceed this many bytes (k None: the pairs found grow it).
_BASIS_BYTES = 1 << 30
# Two Ritz values closer than max(_CLUSTER, 10 tol) ||A|| count as one
# cluster (a repeated eigenvalue, up to the residuals).
_CLUSTER = 1e-6
# Default block for a sparse A whose products cost less than the
# orthogonalization: 2, the smallest block that sees a repeated eigenvalue.
_SPARSE_BLOCK = 2
# Entries: ||A - A^T||_F <= _ASYMMETRY eps ||A||_F.
_ASYMMETRY = 1000
# Times the tolerance is tightened when the residuals computed at the end
# miss it although the recurrence's met it (rounding), before giving up.
_RECHECKS = 3

if TYPE_CHECKING:
    class _EigshFields(NamedTuple):
        w: NDArray[np.floating]
        V: NDArray[np.floating]

    class EigshResult(_EigshFields):
        residuals: NDArray[np.floating]
        passes: int
        converged: bool
        norm: float
        extraction: str

        def __new__(cls, w: NDArray[np.floating], V: NDArray[np.floating], *,
                    residuals: NDArray[np.floating] = ..., passes: int = ...,
                    converged: bool = ..., norm: float = ...,
                    extraction: str = ...) -> EigshResult: ...

else:
    EigshResult = result_type(
        "EigshResult", ("w", "V"),
        {"residuals": None, "passes": None, "converged": None, "norm": None,
         "extraction": None},
        """Eigenpairs of a symmetric matrix: unpacks as ``w, V`` (scipy's
        ``eigsh`` order: ascending eigenvalues).

        Attributes
        ----------
        w : ndarray of shape (k,)
            The eigenvalues, ascending.
        V : ndarray of shape (n, k)
            The eigenvectors (orthonormal columns), ``V[:, i]`` for ``w[i]``.
        residuals : ndarray of shape (k,)
            ``||A V[:, i] - w[i] V[:, i]||``, computed from a product with A
            (float64).
        passes : int
            Products with A made (each a pass over A), the last one for the
            residuals included.
        converged : bool
            Whether every residual is at most ``tol * norm``.
        norm : float
            The estimate of ``||A||_2`` that ``tol`` is relative to: the
            largest magnitude of a Ritz value, never above ``||A||_2``.
        extraction : str
            ``"rayleigh-ritz"`` or ``"nystrom"`` (a PSD A, where the Nystrom
            form's eigenvalues were larger).
        """)


# ---------------------------------------------------------------------------
# The iteration
# ---------------------------------------------------------------------------


class _Lanczos:
    """Block Lanczos on a GrowingBasis: ``A Q_d = Q_s H`` (module docstring)."""

    def __init__(self, ops, block, gen, capacity, exponent):
        n = ops.shape[0]
        self.ops, self.n, self.gen = ops, n, gen
        self.dtype = ops.dtype
        self.basis = GrowingBasis(n, self.dtype, capacity)
        self.H = np.zeros((capacity, capacity))
        self.done = 0
        self.local: Any = None  # (columns, coefficients) the next block is known to have
        self.products = 0
        self.exponent = exponent  # the entries were scaled by 2**-exponent
        self.w_exp: int | None = None  # the products by 2**-w_exp (set at the first)
        self.first = None  # Q_1^T A Q_1, for the symmetry check
        self.basis.extend(gen.standard_normal((n, block)).astype(self.dtype, copy=False), gen)

    @property
    def size(self):
        return self.basis.size

    @property
    def width(self):
        """Columns not yet multiplied (the next block)."""
        return self.basis.size - self.done

    def _put(self, rows, cols, X):
        need = max(rows.stop, cols.stop)
        if need > self.H.shape[0]:
            H = np.zeros((max(need, 2 * self.H.shape[0]),) * 2)
            H[:self.H.shape[0], :self.H.shape[1]] = self.H
            self.H = H
        self.H[rows, cols] = X

    def step(self):
        """One pass over A: ``A`` times the block not yet multiplied,
        orthogonalized into the next block."""
        cols = slice(self.done, self.size)
        W = self.ops.matmat(self.basis.Q[:, cols], out=self.basis.reserve(cols.stop - cols.start))
        self.products += 1
        if self.w_exp is None:
            # keep the squares of the products in range (an operator whose
            # products lie near 1e300 or 1e-300): scaled by a power of two, exactly
            top = float(np.max(np.abs(W))) if W.size else 0.0
            if not math.isfinite(top):
                raise ValueError("A's products are not finite (overflow): scale A down")
            self.w_exp = exponent_of_largest(top)
        if self.w_exp:
            W[...] = np.ldexp(W, -self.w_exp)
        C, R = self.basis.extend(W, self.gen, self.local)
        old = C.shape[0]
        if self.first is None:
            self.first = C[cols].copy()
        self._put(slice(0, old), cols, C)
        self._put(slice(old, self.size), cols, R)
        self.done = old
        self.local = (cols, R.T.copy())
        return R.shape[0]

    @property
    def total_exponent(self):
        """The answer's scale: A was multiplied by ``2**-total_exponent``."""
        return self.exponent + (self.w_exp or 0)

    def ritz(self):
        """``theta, Y, coupling``: the Ritz values (ascending) and vectors
        (coordinates in Q_d), and the rows of H of the block not yet
        multiplied."""
        d = self.done
        M = self.H[:d, :d]
        theta, Y = eigh((M + M.T) / 2)
        return theta, Y, self.H[d:self.size, :d]

    def restart(self, theta, Y, keep):
        """Thick restart: the Ritz vectors ``keep`` (indices) and the block not
        yet multiplied stay."""
        d, s = self.done, self.size
        Yk = np.ascontiguousarray(Y[:, keep])
        S = self.H[d:s, :d] @ Yk  # rows of the block, on the kept Ritz vectors
        self.basis.compress(Yk, d)
        m = len(keep)
        self.H = np.zeros_like(self.H)
        self.H[:m, :m] = np.diag(theta[keep])
        self.H[m:m + s - d, :m] = S
        self.done = m
        self.local = (slice(0, m), S.T.copy())

    def vectors(self, Y, columns):
        """``Q[:, :columns] Y`` (the dtype of A)."""
        return tall_mul(self.basis.Q[:, :columns], np.ascontiguousarray(Y))


def _order(theta, which):
    """Indices of the Ritz values, the wanted end first."""
    if which == "LA":
        return np.argsort(-theta, kind="stable")
    if which == "SA":
        return np.argsort(theta, kind="stable")
    return np.argsort(-np.abs(theta), kind="stable")


def _beyond(theta, which, threshold):
    """Which Ritz values lie beyond ``threshold`` (>= 0) at the wanted end."""
    if which == "LA":
        return theta >= threshold
    if which == "SA":
        return theta <= -threshold
    return np.abs(theta) >= threshold


def _largest_cluster(values, width):
    """The most of ``values`` within ``width`` of one another."""
    v = np.sort(values)
    best, lo = 0, 0
    for hi in range(v.shape[0]):
        while v[hi] - v[lo] > width:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def _basis_columns(n, wanted, block, spare=0):
    """The basis size D: ``k + max(k, 20, 3 b) + 2 b`` (room for several
    blocks between restarts however wide the block), up to four times that where
    a product with a column costs as much as orthogonalizing ``spare``
    columns (a larger basis: fewer passes for more orthogonalization)."""
    least = wanted + max(wanted, _EXTRA, 3 * block) + 2 * block
    return min(n, max(least, min(spare, 4 * least)))


def sparse_products(ops: LinearMap) -> bool:
    """Whether A's products are those of a sparse matrix (cheap beside the
    orthogonalization): a CSR/CSC A, or a map that says so in its
    ``sparse_entries`` (the dask map of sparse chunks)."""
    entries = ops.entries
    if entries is not None:
        return sp.issparse(entries)
    return bool(getattr(ops, "sparse_entries", False))


def product_cost(ops: LinearMap) -> int:
    """What a product with one column costs, in columns of orthogonalization
    (``4 n`` flops each), as far as it enlarges the basis: 0 for sparse
    products and for a LinearOperator (unknown), ``n / 2`` for a dense A and
    for maps without entries (kernels, dense dask chunks), or what a map
    declares in its ``product_columns`` (RandomizedPCA's Gram map)."""
    declared = getattr(ops, "product_columns", None)
    if declared is not None:
        return int(declared)
    if sparse_products(ops) or hasattr(ops, "operator"):
        return 0
    return ops.shape[0] // 2


def _nystrom(run, norm, eps):
    """Eigenpairs of the Nystrom form ``(A Q_d) (Q_d^T A Q_d)^+ (A Q_d)^T`` of
    the same space, shifted by ``nu`` for stability (Tropp and Webber):
    ``lam, U`` descending, U in the coordinates of Q_s; None when
    ``Q_d^T A Q_d + nu I`` is not positive definite (A is not PSD)."""
    d, s = run.done, run.size
    nu = eps * math.sqrt(run.n) * norm
    M = run.H[:d, :d]
    M = (M + M.T) / 2 + nu * np.eye(d)
    try:
        L = cholesky(M)
    except np.linalg.LinAlgError:
        return None
    Linv = lower_inverse(L)
    if Linv is None:
        return None
    B = run.H[:s, :d].copy()
    B[:d] += nu * np.eye(d)
    U, sig, _ = svd(B @ Linv.T)
    return sig * sig - nu, U


def eigsh_core(ops: LinearMap, *, k: int | None, which: str, tol: float | None,
               passes: int | None, block: int, psd: bool, gen: np.random.Generator,
               check_first: bool, exponent: int = 0, spare: int = 0,
               max_passes: int = _DEFAULT_MAX_PASSES) -> dict[str, Any]:
    """The iteration, parameters checked (in-memory and dask fronts).
    Returns a dict: w (ascending, scaled back), V, residuals, passes,
    converged, norm, extraction, met (tol, or the default, met)."""
    n = ops.shape[0]
    dtype = ops.dtype
    eps = float(np.finfo(dtype).eps)
    fixed = passes is not None and tol is None
    goal = tol if tol is not None else math.sqrt(eps)
    budget = passes if passes is not None else max_passes
    b = block
    wanted = k if k is not None else min(n, _EXTRA)
    D = _basis_columns(n, wanted, b, spare)
    run = _Lanczos(ops, b, gen, D + b, exponent)
    try:
        norm = 0.0
        factor = 1.0  # the recurrence's residuals must be below goal * factor
        rechecks = 0
        last_check = 0
        answer = None
        use_nystrom = psd and which in ("LM", "LA")
        while True:
            whole = run.width == 0  # the basis spans an invariant subspace (all of R^n)
            if not whole and run.products < budget - 1:
                added = run.step()
                if run.products == 1 and check_first:
                    _check_first_block(run.first, eps, n)
                last = added == 0
            else:
                last = True
            # the projected eigenproblem (about 10 d^3 flops) at most a tenth of
            # the passes' work (4 n b (d + spare) flops each) since the last one
            d = run.done
            due = run.products - last_check >= max(1, -(-25 * d ** 3 // (n * b * (d + spare + 1))))
            room = run.size + run.width <= D or run.size >= n
            if not (last or due or not room):
                continue
            last_check = run.products
            theta, Y, coupling = run.ritz()
            if theta.size:
                norm = max(norm, float(np.max(np.abs(theta))))
            order = _order(theta, which)
            if k is None:
                count = int(np.count_nonzero(_beyond(theta, which, goal * norm)))
                watch = order[:min(count + 1, theta.size)]  # the first pair below the threshold too
                pick = order[:count]
                wanted = max(count + 1, 1)
                D_new = _basis_columns(n, wanted, b, spare)
                if D_new * n * np.dtype(dtype).itemsize > _BASIS_BYTES and not last:
                    last = True  # no room for more pairs: stop here, unconverged
                    budget = 0
                D = max(D, D_new)
            else:
                pick = watch = order[:min(k, theta.size)]
            est = np.linalg.norm(coupling @ Y[:, watch], axis=0) if coupling.size \
                else np.zeros(watch.size)
            enough = k is None or pick.size >= k
            settled = enough and bool(np.all(est <= goal * factor * norm))
            if settled and not fixed:
                width = max(_CLUSTER, 10 * goal) * norm
                cluster = _largest_cluster(theta[pick], width) if pick.size else 0
                if cluster >= b and b < n and not last and run.products < budget - 2:
                    # as many equal values as the block has columns: more copies
                    # may hide (the Krylov space of b vectors meets an eigenspace
                    # in at most b dimensions, and a copy it lacks is not seen in
                    # the residuals).  Start again with a block larger than the
                    # cluster (krylov_svd's rule); the passes of both runs count.
                    again = eigsh_core(
                        ops, k=k, which=which, tol=tol,
                        passes=None if passes is None else passes - run.products,
                        block=min(n, max(2 * b, cluster + 2)), psd=psd, gen=gen,
                        check_first=False, exponent=run.exponent, spare=spare,
                        max_passes=max_passes - run.products)
                    again["passes"] += run.products
                    return again
            if (settled and not fixed) or last or run.products >= budget - 1:
                if not enough:
                    raise ValueError(
                        f"the Krylov space holds {pick.size} pairs after {run.products} passes, "
                        f"fewer than k={k}: pass more passes= or a larger block_size=")
                answer = _finish(run, theta, Y, pick, norm, eps, use_nystrom)
                met = bool(np.all(answer["residuals"] <= goal * answer["norm"]))
                if met or fixed or last or run.products >= budget - 1 or rechecks >= _RECHECKS:
                    answer["met"] = met
                    break
                # the computed residuals miss what the recurrence's met (rounding):
                # ask the recurrence for less, and go on
                rechecks += 1
                worst = float(np.max(answer["residuals"] / (goal * answer["norm"])))
                factor /= 2 * worst
                use_nystrom = use_nystrom and answer["extraction"] == "rayleigh-ritz"
                continue
            if not room:
                keep_count = min(run.done, wanted + (D - wanted) // _KEEP_FRACTION,
                                 max(wanted, D - 2 * run.width))
                run.restart(theta, Y, order[:keep_count])
        answer["passes"] = run.products
        answer["converged"] = answer["met"]
        return answer
    finally:
        run.basis.close()  # the buffer back to the workspace


def _finish(run, theta, Y, pick, norm, eps, use_nystrom):
    """The answer: Rayleigh-Ritz pairs (or Nystrom's), their residuals from one
    more product with A."""
    w, Z, columns = theta[pick], Y[:, pick], run.done
    extraction = "rayleigh-ritz"
    if use_nystrom and pick.size:
        got = _nystrom(run, norm, eps)
        if got is not None:
            lam, U = got
            m = pick.size
            margin = 16 * eps * m * norm
            if lam.size >= m and float(np.sum(lam[:m])) > float(np.sum(w)) + margin:
                w, Z, columns = lam[:m], U[:, :m], run.size
                extraction = "nystrom"
    V = run.vectors(Z, columns) if w.size else np.zeros((run.n, 0), dtype=run.dtype)
    # each vector's sign fixed (its largest entry positive): the same vectors
    # whatever the order of the products' partial sums (dask chunks)
    if w.size:
        top = np.abs(V).argmax(axis=0)
        V *= np.where(V[top, np.arange(V.shape[1])] < 0, -1, 1).astype(V.dtype)
    scale = run.total_exponent
    if w.size:
        AV = run.ops.matmat(V)
        run.products += 1
        if run.w_exp:
            AV = np.ldexp(AV, -run.w_exp)
        R = AV - V * w.astype(run.dtype)
        residuals = np.linalg.norm(R.astype(np.float64), axis=0)
    else:
        residuals = np.zeros(0)
    ascending = np.argsort(w, kind="stable")
    return dict(w=np.ldexp(w[ascending], scale).astype(run.dtype), V=V[:, ascending],
                residuals=np.ldexp(residuals[ascending], scale), norm=math.ldexp(norm, scale),
                extraction=extraction, met=False)


def _check_first_block(C, eps, n):
    """A map without entries: ``Q_1^T A Q_1`` (from the first pass) must be
    symmetric to within rounding."""
    total = float(np.linalg.norm(C))
    if total == 0.0:
        return
    asym = float(np.linalg.norm(C - C.T)) / total
    allowed = max(math.sqrt(eps), 64 * eps * math.sqrt(n))
    if asym > allowed:
        raise ValueError(
            f"A must be symmetric: its first block of products gives Q^T A Q with relative "
            f"asymmetry {asym:.3g} (allowed {allowed:.3g})")


def check_symmetric_entries(A: Any, name: str = "A") -> None:
    """``||A - A^T||_F <= 1000 eps ||A||_F`` for a dense or sparse A (by row
    blocks for a dense one: no copy of A)."""
    eps = float(np.finfo(A.dtype).eps) if A.dtype.kind == "f" else float(np.finfo(float).eps)
    total = squared_frobenius(A)
    if sp.issparse(A):
        diff = squared_frobenius((A - A.T).tocsr())
    else:
        diff = 0.0
        step = max(1, (1 << 22) // max(1, A.shape[0]))
        for i in range(0, A.shape[0], step):
            block = np.asarray(A[i:i + step], dtype=np.float64) - \
                np.asarray(A[:, i:i + step], dtype=np.float64).T
            diff += float(np.sum(block * block))
    if not diff <= (_ASYMMETRY * eps) ** 2 * total:
        rel = math.sqrt(diff / total) if total > 0 else math.inf
        raise ValueError(
            f"{name} must be symmetric: ||{name} - {name}^T||_F / ||{name}||_F = {rel:.3g} "
            f"(allowed {_ASYMMETRY * eps:.3g}); symmetrize it, e.g. ({name} + {name}.T) / 2")


def default_block(ops: LinearMap, k: int | None) -> int:
    """2 for sparse products, which cost less than the orthogonalization of
    their result (the smallest block that sees a repeated eigenvalue);
    otherwise ``k // 2`` within [8, 32]: products by dense blocks cost about
    one pass each where they are memory-bound."""
    n = ops.shape[0]
    if sparse_products(ops):
        return min(n, _SPARSE_BLOCK)
    kk = k if k is not None else _EXTRA
    return min(n, max(8, min(32, kk // 2)))


def check_parameters(n, k, which, tol, passes, block_size, psd):
    """The parameters of :func:`eigsh`, checked."""
    if k is not None:
        k = check_int(k, "k", 1, n)
    which = check_choice(which, "which", WHICH)
    tol = check_tol(tol)
    if k is None and tol is None:
        raise ValueError("give k (the number of eigenpairs) or tol (every pair down to "
                         "tol ||A||_2), got neither")
    if passes is not None:
        passes = check_int(passes, "passes", 2)
    if block_size is not None:
        block_size = check_int(block_size, "block_size", 1, n)
    if psd is not None and not isinstance(psd, (bool, np.bool_)):
        raise TypeError(f"psd must be None, True or False, got {psd!r}")
    return k, which, tol, passes, block_size, psd


def eigsh_run(ops: LinearMap, k, *, which, tol, passes, block_size, psd, rng) -> EigshResult:
    """:func:`eigsh` on a checked LinearMap (the in-memory and dask fronts)."""
    m, n = ops.shape
    if m != n:
        raise ValueError(f"A must be square, got shape {ops.shape}")
    if n == 0:
        raise ValueError("A must have at least one row, got shape (0, 0)")
    k, which, tol, passes, block_size, psd = check_parameters(n, k, which, tol, passes,
                                                              block_size, psd)
    b = block_size if block_size is not None else default_block(ops, k)
    if passes is not None and k is not None and b * (passes - 1) < k:
        raise ValueError(
            f"passes={passes} with block_size={b} gives at most {b * (passes - 1)} pairs "
            f"(one pass computes the residuals), fewer than k={k}")
    gen = as_generator(rng)
    psd_known = bool(psd) if psd is not None else bool(ops.psd)
    exponent = 0
    entries = ops.entries
    check_first = not ops.symmetric
    if entries is not None:
        if not ops.symmetric:
            check_symmetric_entries(entries)
            check_first = False
        e = exponent_of_largest(largest_magnitude(entries))
        if e:
            ops = ops.scaled(-e)
            exponent = e
    with serial_blas():
        out = eigsh_core(ops, k=k, which=which, tol=tol, passes=passes, block=b,
                         psd=psd_known, gen=gen, check_first=check_first, exponent=exponent,
                         spare=product_cost(ops))
    if not out["converged"] and not (passes is not None and tol is None):
        goal = tol if tol is not None else math.sqrt(float(np.finfo(ops.dtype).eps))
        worst = float(np.max(out["residuals"])) / out["norm"] if out["norm"] else 0.0
        warn_unconverged(
            f"eigsh: the largest residual is {worst:.3g} ||A||_2 after {out['passes']} passes "
            f"over A, above tol={goal:.3g}; pass a larger passes= (or block_size=)")
    return EigshResult(out["w"], out["V"], residuals=out["residuals"], passes=out["passes"],
                       converged=out["converged"], norm=out["norm"],
                       extraction=out["extraction"])


def eigsh(A: MatrixLike | LinearMap, k: int | None = None, *, which: str = "LM",
          tol: float | None = None, passes: int | None = None, block_size: int | None = None,
          psd: bool | None = None, rng: None | int | np.random.Generator = None) -> EigshResult:
    """Eigenpairs of a symmetric matrix by randomized block Krylov iteration.

    The k eigenvalues of the wanted end of the spectrum and their
    eigenvectors, each pair with its residual ``||A v - lambda v||``
    computed from a product with A.  Block Lanczos from a Gaussian start
    block, its basis reorthogonalized in full and restarted thickly (the
    wanted Ritz vectors kept), Rayleigh-Ritz extraction; for a PSD A the
    Nystrom form of the same space where it is more accurate.  Repeated
    eigenvalues come with all their copies: when as many equal values as
    the block has columns come out (a block of b vectors meets an
    eigenspace in at most b dimensions), the iteration starts again with a
    block wider than them, the passes of both runs counted.

    Parameters
    ----------
    A : array_like, scipy.sparse matrix, LinearOperator or kernel oracle, shape (n, n)
        Symmetric.  Dense or CSR/CSC (checked: ``||A - A^T||_F <= 1000 eps
        ||A||_F``, else ValueError), a scipy ``LinearOperator`` (only
        ``matmat`` is used; its first block of products must be symmetric
        to rounding, else ValueError: an asymmetry below that check acts as
        a perturbation of the residuals' size), or a kernel oracle such as
        :class:`~sketchlab.RBFKernel` (symmetric and PSD, its entries stored
        where they fit 4 GiB).  float32 stays float32; every other real dtype
        computes in float64.
    k : int, optional
        The number of eigenpairs, ``1 <= k <= n``.  Without k (``tol``
        required), every pair whose eigenvalue lies beyond ``tol ||A||_2``
        at the wanted end (``|lambda|`` for "LM", ``lambda`` for "LA",
        ``-lambda`` for "SA"): the iteration goes on until the first pair
        below that size has converged too.
    which : {"LM", "LA", "SA"}, default "LM"
        Largest magnitude, largest algebraic, smallest algebraic (scipy's).
    tol : float in (0, 1), optional
        Every returned pair satisfies ``||A v - lambda v|| <= tol ||A||_2``
        (``||A||_2`` estimated from below by the largest Ritz value in
        magnitude, so the test is stricter than asked).  Default
        ``sqrt(eps)``: 1.5e-8 in float64, 3.5e-4 in float32 (the eigenvalues
        of well separated pairs then have errors near ``eps ||A||``).
    passes : int, optional
        Bound on the products with A (each a pass over A; the last computes
        the residuals), at least 2.  Without ``tol``, exactly this many are
        made and the answer after them returned (``converged`` says whether
        it met the default tolerance; no warning).  Default: until ``tol``
        is met, at most 1000.
    block_size : int, optional
        Vectors per block.  Default 2 for a sparse A (its products cost less
        than their orthogonalization; 2 is the smallest block that sees a
        repeated eigenvalue); otherwise ``k // 2`` within [8, 32] (products
        by dense blocks cost about one pass each).  The basis holds ``D = k +
        max(k, 20) + 2 block_size`` columns (up to four times as many for a
        dense A, where a product costs more than orthogonalizing n / 2
        columns), restarted to keep ``k + (D - k) / 4`` Ritz vectors.
    psd : bool, optional
        Whether A is positive semidefinite (default: as the input says: True
        for a kernel oracle, else unknown and not used).  For a PSD A with
        ``which`` "LM" or "LA", the Nystrom form ``(A Q)(Q^T A Q)^+(A Q)^T``
        of the basis Q is extracted as well, and returned when its top k
        eigenvalues (lower bounds of A's, as the Ritz values are) sum to
        more.
    rng : None, int or numpy.random.Generator
        Seeds the start block (and the fresh directions).

    Returns
    -------
    EigshResult
        ``w, V = res``: w (k,) ascending, V (n, k) orthonormal columns, each
        with its largest entry positive.
        ``res.residuals`` (k,): ``||A V[:, i] - w[i] V[:, i]||``;
        ``res.passes``; ``res.converged`` (every residual within ``tol
        res.norm``); ``res.norm`` (the estimate of ``||A||_2``);
        ``res.extraction``.

    Raises
    ------
    ValueError
        A not square or not symmetric, k outside [1, n], neither k nor tol,
        ``which`` not one of "LM", "LA", "SA", passes < 2 or too few for k
        pairs with the block size.
    TypeError
        A not numeric, psd not a bool.

    Warns
    -----
    ConvergenceWarning
        (scikit-learn's) When ``tol`` (or the default) was not met within
        the passes (``converged`` is then False).

    Notes
    -----
    Each pass multiplies A by the block not yet multiplied and
    orthogonalizes the result against the whole basis (the recurrence's
    known coefficients first, block classical Gram-Schmidt once or twice,
    CholeskyQR2); every coefficient is kept, so that ``A Q_d = Q_s H``
    holds to rounding and the Ritz pairs' residuals are known after every
    pass from H's last rows.  When the basis is full, a thick restart keeps
    the ``k + (D - k) / 4`` best Ritz vectors and the last block (Wu and
    Simon 2000).  Cost per pass: the product with ``b`` vectors plus ``4 n
    D b`` for the orthogonalization; the projected eigenproblem (D x D) is
    solved when the basis is full or about once per ``D^2 / (n b)`` passes.

    Compared with scipy's ``eigsh`` (ARPACK, one vector at a time): a block
    of vectors per pass (fewer passes, BLAS 3 products), repeated
    eigenvalues found with their multiplicity, residuals returned; and with
    ``lobpcg``: no preconditioner needed, and the iteration is the
    Krylov space's best (Rayleigh-Ritz over the whole basis).

    The same results for any number of threads (the products with A and
    with the basis sum in a fixed order, every other BLAS call on one
    thread); for a LinearOperator, as deterministic as its products.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, sketchlab
    >>> A = sp.diags([np.arange(1.0, 101.0)], [0], format="csr")
    >>> w, V = sketchlab.eigsh(A, 3, rng=0)
    >>> w
    array([ 98.,  99., 100.])
    >>> res = sketchlab.eigsh(A, 3, which="SA", tol=1e-10, rng=0)
    >>> res.w, bool(np.all(res.residuals <= 1e-10 * 100)), res.converged
    (array([1., 2., 3.]), True, True)
    """
    ops = as_linear_map(A)
    return eigsh_run(ops, k, which=which, tol=tol, passes=passes, block_size=block_size,
                     psd=psd, rng=rng)
