"""Ridge regression by conjugate gradients with a randomized Nystrom preconditioner.

``min ||A x - b||^2 + alpha ||x||^2`` is solved through its normal equations
``(A^T A + alpha I) x = A^T b`` by the package's one conjugate-gradient
iteration (:mod:`sketchlab._cg`), on A's linear map
(:func:`sketchlab._linear_map.as_linear_map`: dense, CSR/CSC, a
``LinearOperator``, a centred map, dask chunks).  Three methods:

- ``"nystrom-pcg"`` (Frangella, Tropp and Udell 2023, "Randomized Nystrom
  preconditioning", SIMAX 44(2); arXiv 2110.02820): a randomized Nystrom
  approximation ``U diag(lam) U^T`` of ``H = A^T A`` from ``Y = H Omega``
  (Gaussian ``Omega``, d x l) gives the preconditioner
  ``P = U (diag(lam) + alpha I) U^T / (lam_l + alpha) + (I - U U^T)``
  (their eq. (5.3)), under which ``H + alpha I`` has condition number about
  ``(lam_l + alpha) / alpha`` (Theorem 5.1: a constant once ``l`` is about
  twice the effective dimension ``d_eff(alpha) = tr(H (H + alpha I)^-1)``).
  One sketch serves every ``alpha`` of a regularization path: only the
  diagonal ``(lam_l + alpha) / (lam + alpha)`` of ``P^-1`` in U's basis
  depends on alpha.
- ``"cg"``: plain conjugate gradients.
- ``"direct"``: the Cholesky factor of ``A^T A + alpha I`` (d x d formed:
  small d), with iterative refinement against the products with A.

``rank="auto"`` (the adaptive rank of the paper's Section 5.4, with a cost
rule): conjugate gradients first run 8 plain steps; a problem that needs no
preconditioner ends there, or is left to plain CG when the steps still to go
at the pace of the last four (an optimistic pace: CG slows down on a decaying
spectrum) cost less than two first sketches.  Otherwise the sketch starts at
rank 8 and doubles while the paper's criterion (the ratio ``lam_l / alpha``,
here at most 1: the preconditioned condition number at most 2) is not met
*and* the predicted saving in steps outweighs the price of the new sketch
columns and of the larger factorization.  Steps are predicted by CG's bound,
``sqrt(kappa) log(2 / reduction) / 2``, with ``kappa = (lam_l + alpha) /
(lam_d + alpha)`` under the preconditioner and ``(lam_9 + alpha) / (lam_d +
alpha)`` without (plain CG resolves a few outlying eigenvalues in as many
steps; an overestimate of both, whose ratio is what decides); the
eigenvalues are A^T A's as the sketch's reliable half (its first l / 2) and
the power law of their decay put them (the sketch's own last ones
underestimate them), ``lam_d`` where that law ends.  When the preconditioned iteration is not predicted to cost at
most 3/4 of the plain one (a flat spectrum: ``lam_1 ~ lam_l``), the plain
iteration goes on (``fell_back=True``).  The prices are counted in reads of
A's stored entries, under fixed constants per kind of map
(:data:`_BLOCK_COST`, :data:`_FLOPS_PER_READ`), never by timing, so the rank
and the answer are the same on any machine load and thread count.

Every rule is relative: A and b are brought into a safe range by powers of
two (exact), so the iterates are the same for A and b scaled by any power
of two; the iterations stop on the relative residual of the normal
equations ``||A^T b - (A^T A + alpha I) x|| / ||A^T b||``, checked at the
end against a freshly computed residual (and refined when rounding left it
above ``tol``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from ._cg import ConjugateGradients
from ._config import safe_exponent, serial_blas
from ._linalg import eigvalsh, gram_t, nystrom_eigh, spd_solver
from ._linear_map import CenteredMap, LinearMap, as_linear_map, into_safe_range
from ._results import result_type, warn_unconverged
from ._validation import as_generator, as_matrix, check_choice, check_int, check_tol

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    from ._validation import MatrixLike, RNGLike

__all__ = ["ridge", "ridge_on_map", "ridge_run", "RidgeResult", "METHODS", "NystromPreconditioner",
           "check_alphas", "check_rhs", "default_tol", "gram"]

METHODS = ("nystrom-pcg", "cg", "direct")

# rank="auto": plain CG steps before any sketch, the first rank, and the
# paper's criterion of a well-conditioned preconditioned system (lam_l / alpha)
_PROBE_STEPS = 8
_RANK_START = 8
_WELL_CONDITIONED = 1.0
# the cost model of rank="auto" (in reads of A's stored entries): a column of
# a block product costs this share of a product with one vector (BLAS 3 on a
# dense A, the compiled CSR loops, a map known only by its products) ...
_BLOCK_COST = {"dense": 0.1, "sparse": 0.5, "operator": 0.5}
# ... and a flop of the dense factorizations 1/32 of a read of A
_FLOPS_PER_READ = 32.0
# a sketch is taken only when the plain steps still to go (at the probe's
# pace) cost this many times the first sketch
_SKETCH_SHARE = 2.0
# the preconditioned steps must be predicted to cost at most this share of
# the plain ones (else plain CG goes on)
_CLEAR_GAIN = 0.75
# the sketch (Omega, Y and U, d x l each) holds at most this many entries each
_SKETCH_MAX_ENTRIES = 1 << 26
# "direct" forms the d x d matrix A^T A: at most this many columns
_DIRECT_MAX_COLUMNS = 1 << 14
# the probes of trace="probes"
_TRACE_PROBES = 8
# restarts from a freshly computed residual when rounding left it above tol
_REFINEMENTS = 2

if TYPE_CHECKING:
    class _RidgeFields(NamedTuple):
        x: NDArray[np.floating]

    class RidgeResult(_RidgeFields):
        residual: Any
        history: NDArray[np.floating]
        iterations: int
        converged: bool
        method: str
        rank: int
        fell_back: bool
        effective_dimension: Any
        matvecs: int

        def __new__(cls, x: NDArray[np.floating], *, residual: Any = ...,
                    history: NDArray[np.floating] = ..., iterations: int = ...,
                    converged: bool = ..., method: str = ..., rank: int = ...,
                    fell_back: bool = ..., effective_dimension: Any = ...,
                    matvecs: int = ...) -> RidgeResult: ...
else:
    RidgeResult = result_type(
        "RidgeResult", ("x",),
        {"residual": None, "history": None, "iterations": 0, "converged": False,
         "method": None, "rank": 0, "fell_back": False, "effective_dimension": None,
         "matvecs": 0},
        """The solution of a ridge regression: unpacks as ``x,`` (or ``res.x``).

        Attributes
        ----------
        x : ndarray of shape (d,), (d, k), (d, p) or (d, k, p)
            The solutions: one per column of b (k) and per value of alpha (p),
            in that order of axes; 1-D b and scalar alpha drop theirs.
        residual : float or ndarray of shape (k,), (p,) or (k, p)
            The relative residual of the normal equations
            ``||A^T b - (A^T A + alpha I) x|| / ||A^T b||`` of each solution,
            computed from the returned x (0 where ``A^T b = 0``).
        history : ndarray of shape (iterations + 1, k * p)
            The conjugate gradients' relative residuals (by their recurrence)
            after each step, the first row before the first, one column per
            solution (column ``j p + a``: column j of b with the a-th alpha);
            one row of ones for ``"direct"``.
        iterations : int
            Conjugate-gradient steps (each one product with ``A^T A``), 0 for
            ``"direct"``.
        converged : bool
            Whether every residual is at most ``tol``.
        method : str
            The method that ran: ``"nystrom-pcg"``, ``"cg"`` (asked for, or
            fallen back to) or ``"direct"``.
        rank : int
            The rank of the Nystrom preconditioner (0 when none was used).
        fell_back : bool
            True when ``rank="auto"`` found that a preconditioner would not
            pay (the spectrum too flat, or plain CG about done) and plain
            conjugate gradients finished the solve.
        effective_dimension : float, ndarray of shape (p,) or None
            The sketch's estimate of ``tr(A^T A (A^T A + alpha I)^-1)`` per
            alpha (the Nystrom eigenvalues, and the rest of ``||A||_F^2`` spread
            evenly over the other directions where it is known: an upper
            bound on the Nystrom part's share); None where no sketch
            preconditioned the solve.
        matvecs : int
            Products with A or A^T, each of one vector (a block of c columns
            counts c).
        """)


# -- checks ------------------------------------------------------------------


def check_alphas(alpha: Any, name: str = "alpha") -> tuple[NDArray[np.float64], bool]:
    """``(alphas, is_array)``: a number or a 1-D array of finite numbers >= 0."""
    if isinstance(alpha, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number >= 0 or a 1-D array of them, got {alpha!r}")
    try:
        values = np.asarray(alpha, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number >= 0 or a 1-D array of them, got "
                        f"{alpha!r}") from None
    if values.ndim > 1 or values.size == 0:
        raise ValueError(f"{name} must be a number >= 0 or a non-empty 1-D array of them, "
                         f"got {alpha!r}")
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        raise ValueError(f"{name} must be finite and >= 0, got {alpha!r}")
    return values.reshape(-1), values.ndim == 1


def _check_rank(rank):
    if isinstance(rank, str):
        if rank != "auto":
            raise ValueError(f"rank must be 'auto' or an int >= 1, got {rank!r}")
        return rank
    return check_int(rank, "rank", 1)


def default_tol(dtype: Any) -> float:
    """The default ``tol``: the square root of the dtype's machine epsilon
    (1.5e-8 in float64, 3.5e-4 in float32): within reach of the recurrence's
    rounding for condition numbers up to about ``1 / sqrt(eps)``."""
    return float(np.sqrt(np.finfo(dtype).eps))


# -- the cost model of rank="auto" ---------------------------------------------


class _Costs:
    """Prices in reads of A's stored entries (see the module's notes)."""

    def __init__(self, ops):
        m, d = ops.shape
        inner = getattr(ops, "inner", ops)  # a centred or scaled map: its matrix's
        A = inner.entries
        counted = inner.stored_entries() if hasattr(inner, "stored_entries") else None
        if A is not None and sp.issparse(A):
            self.reads, kind = float(max(A.nnz, 1)), "sparse"
        elif A is not None:
            self.reads, kind = float(m * d), "dense"
        elif counted is not None:  # dask chunks, counted in the first pass
            kind, self.reads = counted[0], float(max(counted[1], 1))
        else:
            self.reads, kind = float(m * d), "operator"
        self.block = _BLOCK_COST[kind]
        self.d = d

    def product(self, columns):
        """``A^T A`` times ``columns`` vectors, in one block."""
        return 2 * self.reads * (1 + self.block * (columns - 1)) if columns else 0.0

    def steps(self, counts, rank):
        """``counts[c]`` conjugate-gradient steps of the columns c in one
        block: each step a product with the active columns (a pass over A
        shared by them all, each active column's share beside it) and the
        preconditioner (U read twice per column)."""
        counts = np.asarray(counts, dtype=np.float64)
        if counts.size == 0:
            return 0.0
        shared = 2 * self.reads * (1 - self.block) * float(counts.max())
        return shared + float(counts.sum()) * (2 * self.reads * self.block
                                               + 2.0 * self.d * rank)

    def factorization(self, rank):
        """The Nystrom factorization at this rank (a d x l SVD and solve)."""
        return (10.0 * self.d * rank * rank + 10.0 * rank ** 3) / _FLOPS_PER_READ


class _Spectrum:
    """The eigenvalues of ``A^T A`` as the rank-l sketch sees them: its
    first ``ceil(l / 2)`` (Nystrom's reliable half), then a power law
    through them (the decay from eigenvalue l / 4 to l / 2), zero beyond d."""

    def __init__(self, lam, d):
        h = -(-lam.size // 2)
        self.head, self.d = lam[:h], d
        q = max(1, h // 2)
        ratio = lam[q - 1] / lam[h - 1] if lam[h - 1] > 0 else np.inf
        self.power = math.log2(ratio) / math.log2(h / q) if h > q and ratio < np.inf else \
            (0.0 if h == q else np.inf)

    def at(self, j):
        """The eigenvalues of 1-based indices j."""
        h = self.head.size
        tail = self.head[-1] * (h / np.maximum(j, h)) ** self.power if self.power < np.inf \
            else np.zeros(j.shape)
        out = np.where(j <= h, self.head[np.minimum(j, h) - 1], tail)
        return np.where(j <= self.d, out, 0.0)


# -- the preconditioner ----------------------------------------------------------


class NystromPreconditioner:
    """``V -> P^-1 V`` for the randomized Nystrom preconditioner of ``A^T A``
    (Frangella, Tropp and Udell 2023, eq. (5.4)), one shift per column:
    ``P^-1 = (lam_l + alpha) U diag(1 / (lam + alpha)) U^T + (I - U U^T)``.

    ``lam`` (l,) non-increasing and ``U`` (d x l) from :func:`nystrom_eigh`;
    eigenvalues at or below ``l eps lam_1`` count as zero.  For ``alpha = 0``
    the floor is the smallest nonzero ``lam`` (the null space of ``A^T A``
    is left alone: conjugate gradients never enter it)."""

    def __init__(self, lam, U, alphas, dtype):
        l = lam.size
        lam = np.where(lam > l * np.finfo(np.float64).eps * (lam[0] if l else 0.0), lam, 0.0)
        self.lam, self.rank = lam, l
        self.U = np.asarray(U, dtype=dtype)
        positive = lam[lam > 0]
        last = float(lam[-1]) if l else 0.0
        floors = np.where(alphas > 0, last, float(positive[-1]) if positive.size else 0.0)
        num = floors[None, :] + alphas[None, :]
        den = lam[:, None] + alphas[None, :]
        ratio = np.where((den > 0) & (lam[:, None] > 0), num / np.where(den > 0, den, 1.0), 1.0)
        self.factors = (ratio - 1.0).astype(dtype)  # l x c
        self.floors = floors

    def __call__(self, V, columns):
        W = self.U.T @ V
        W *= self.factors[:, columns]
        out = self.U @ W
        out += V
        return out


def _sketch_columns(ops, gen, count, dtype):
    Omega = gen.standard_normal((ops.shape[1], count)).astype(dtype, copy=False)
    return Omega, np.asarray(ops.normal(Omega), dtype=dtype)


# -- the solvers ----------------------------------------------------------------


class _Normal:
    """``(A^T A + alpha_c I) V`` for the columns ``columns`` of the problem."""

    def __init__(self, ops, alphas, dtype):
        self.ops, self.alphas, self.dtype = ops, alphas.astype(dtype), dtype

    def __call__(self, V, columns):
        W = np.asarray(self.ops.normal(V), dtype=self.dtype)
        W += self.alphas[columns] * V
        return W


def _direct(ops, G, alphas, tol, dtype):
    """Cholesky of ``A^T A + alpha I`` per distinct alpha (d x d formed),
    with up to two rounds of refinement against the products; ``(X, each
    column's relative residual)``."""
    m, d = ops.shape
    H = gram(ops)
    X = np.zeros_like(G)
    solvers = {}
    for value in np.unique(alphas):
        cols = np.flatnonzero(alphas == value)
        solvers[value] = (cols, spd_solver(H + value * np.eye(d)))
    matvec = _Normal(ops, alphas, dtype)
    every = np.arange(G.shape[1])
    R = G.copy()
    for round_ in range(1 + _REFINEMENTS):
        for cols, solve in solvers.values():
            X[:, cols] += np.asarray(solve(np.asarray(R[:, cols], dtype=np.float64)),
                                     dtype=dtype)
        R = G - matvec(X, every)
        rel = _relative(R, G)
        if np.all(rel <= tol):
            break
    return X, rel


def gram(ops: LinearMap) -> NDArray[np.float64]:
    """``A^T A`` as a dense float64 d x d matrix (from the entries where the
    map holds them, the centring of a :class:`CenteredMap` taken off
    exactly; else by products with blocks of the identity)."""
    m, d = ops.shape
    inner, mu = (ops.inner, ops.mu) if isinstance(ops, CenteredMap) else (ops, None)
    A = inner.entries
    if A is not None:
        if sp.issparse(A):
            H = np.asarray((A.T @ A).toarray(), dtype=np.float64)
        else:
            A64 = np.asarray(A, dtype=np.float64)
            H = gram_t(A64, A64)
        if mu is not None:  # (A - 1 mu^T)^T (A - 1 mu^T) = A^T A - m mu mu^T
            mu64 = mu.astype(np.float64)
            H -= m * np.outer(mu64, mu64)
        return (H + H.T) / 2
    H = np.empty((d, d))
    step = max(1, (1 << 22) // max(d, 1))
    for j0 in range(0, d, step):
        j1 = min(d, j0 + step)
        E = np.zeros((d, j1 - j0), dtype=ops.dtype)
        E[np.arange(j0, j1), np.arange(j1 - j0)] = 1
        H[:, j0:j1] = ops.normal(E)
    return (H + H.T) / 2


def _relative(R, G):
    gn = np.linalg.norm(G, axis=0)
    rn = np.linalg.norm(R, axis=0)
    return np.where(gn > 0, rn / np.where(gn > 0, gn, 1.0), 0.0)


class _Probe:
    """The plain steps of ``rank="auto"`` on the hardest columns: their
    iteration, their indices, whether they are all the columns, how many
    columns each stands for (in the prices), their residual history."""

    def __init__(self, cg, columns, everything, weight):
        self.cg, self.columns, self.everything, self.weight = cg, columns, everything, weight
        self.history = []


class _Run:
    """The conjugate-gradient solve of ``(A^T A + alpha_c I) X = G``: the
    plain probe, the sketch and its rank, the preconditioned iteration, the
    refinement rounds."""

    def __init__(self, ops, G, alphas, tol, maxiter, dtype):
        self.ops, self.G, self.alphas, self.tol = ops, G, alphas, tol
        self.maxiter, self.dtype = maxiter, dtype
        self.matvec = _Normal(ops, alphas, dtype)
        self.history = []
        self.iterations = 0
        self.pre = None
        self.rank = 0
        self.fell_back = False
        self.lam = None
        self.ops_trace = None

    def _iterate(self, cg, limit):
        while self.iterations < self.maxiter and cg.iterations < limit and cg.step_once():
            self.iterations += 1
            self.history.append(cg.residual.copy())

    def _probe(self):
        """Plain steps on the hardest columns (those of the smallest alpha:
        the others converge no slower), :data:`_PROBE_STEPS` of them; their
        residuals go into the history beside the others' first ones."""
        columns = np.flatnonzero(self.alphas == self.alphas.min())
        everything = columns.size == self.G.shape[1]
        cg = ConjugateGradients(lambda V, idx: self.matvec(V, columns[idx]),
                                self.G[:, columns], tol=self.tol, indexed=True)
        start = _relative(self.G, self.G)  # 1 per nonzero column (X = 0), 0 else
        probe = _Probe(cg, columns, everything, max(1, self.G.shape[1] // columns.size))

        def record():
            row = start.copy()
            row[columns] = cg.residual
            self.history.append(row)
            probe.history.append(cg.residual.copy())

        record()
        while (self.iterations < self.maxiter and cg.iterations < _PROBE_STEPS
               and cg.step_once()):
            self.iterations += 1
            record()
        return probe

    def start(self, X0=None, precond=None):
        """A conjugate-gradient iteration from X0 (the history's first row
        when it is the first)."""
        cg = ConjugateGradients(self.matvec, self.G, precond=precond, X0=X0, tol=self.tol,
                                indexed=True)
        if not self.history:
            self.history.append(cg.residual.copy())
        return cg

    def sketch(self, rank, gen, costs, probe):
        """The Nystrom factorization at ``rank`` (an int), or grown from 8
        (``"auto"``, ``probe`` the plain steps' :class:`_Probe`).  Returns the
        preconditioner, or None where it does not pay."""
        d = self.ops.shape[1]
        cap = max(1, min(d, _SKETCH_MAX_ENTRIES // max(d, 1)))
        auto = rank == "auto"
        l = min(_RANK_START if auto else rank, d if not auto else cap)
        Omega, Y = _sketch_columns(self.ops, gen, l, self.dtype)
        while True:
            lam, U = nystrom_eigh(Y, Omega)
            if lam.size < l:  # rounding dropped directions: their eigenvalues are zero
                U = np.hstack([U, np.zeros((d, l - lam.size))])
                lam = np.concatenate([lam, np.zeros(l - lam.size)])
            self.lam = lam
            if not auto:
                return NystromPreconditioner(lam, U, self.alphas, self.dtype)
            grow, pays = self._decide(lam, costs, probe, cap)
            if not grow:
                return NystromPreconditioner(lam, U, self.alphas, self.dtype) if pays else None
            new = min(2 * l, cap) - l
            Om2, Y2 = _sketch_columns(self.ops, gen, new, self.dtype)
            Omega, Y = np.hstack([Omega, Om2]), np.hstack([Y, Y2])
            l += new

    def _decide(self, lam, costs, probe, cap):
        """``(grow, pays)``: whether doubling the rank is predicted to pay,
        and whether the present preconditioner beats plain CG.

        Steps are predicted by CG's bound, ``sqrt(kappa) / 2`` times the log
        of the reduction still to make, with ``kappa = (lam_9 + alpha) /
        (lam_d + alpha)`` for plain CG (CG resolves a few outlying eigenvalues
        in as many steps: the probe's 8) and ``(lam_l + alpha) / (lam_d +
        alpha)`` under the preconditioner (the paper's estimate, with A^T A's
        ``lam_l`` rather than the sketch's last eigenvalue, which
        underestimates it): an overestimate of both, whose ratio is what
        matters.  The eigenvalues come from the sketch's reliable half and,
        beyond it, the power law of its decay (:class:`_Spectrum`); ``lam_d``
        is where that law ends (about 0 for a decaying spectrum)."""
        active = np.flatnonzero(probe.cg.active)
        alphas = self.alphas[probe.columns[active]]
        l = lam.size
        if not lam[0] > 0:
            return False, False
        reduction = np.log(2.0 * np.maximum(probe.cg.residual[active], self.tol) / self.tol)
        # every column priced as the probed (hardest) ones: a path's steps
        # share their passes over A
        reduction = np.tile(reduction, probe.weight)
        alphas = np.tile(alphas, probe.weight)
        d = self.ops.shape[1]
        spectrum = _Spectrum(lam, d)
        # the bottom of the spectrum: lam_d as the power law puts it (about 0
        # for a decaying spectrum, where alpha is the floor; well above alpha
        # for a flat one, where plain CG is fast whatever alpha)
        bottom = np.maximum(alphas + float(spectrum.at(np.array([d]))[0]),
                            1e-12 * float(lam[0]))

        def steps(top):
            return 0.5 * reduction * np.sqrt((top + alphas) / bottom)

        # the eigenvalues as the sketch's reliable half says they fall off (its
        # last ones underestimate A^T A's: the lam_32 of a rank-32 sketch of
        # the 1/j^2 spectrum is a quarter of the true one); plain CG deflates a
        # few outlying eigenvalues in as many steps (it has taken
        # _PROBE_STEPS): its condition number from the next one
        floor = float(spectrum.at(np.array([l]))[0])
        plain = costs.steps(steps(float(spectrum.at(np.array([_PROBE_STEPS + 1]))[0])), 0)
        now = costs.steps(steps(floor), l)
        # a clear gain (the predictions are rough; a tie goes to plain CG)
        pays = now < _CLEAR_GAIN * plain
        well = np.all(floor <= _WELL_CONDITIONED * alphas)
        if well or l >= cap:
            return False, pays
        l2 = min(2 * l, cap)
        floor2 = float(spectrum.at(np.array([l2]))[0])
        later = (costs.product(l2 - l) + costs.factorization(l2)
                 + costs.steps(steps(floor2), l2))
        return later < min(now, plain), pays

    def _worth_a_sketch(self, probe, costs):
        """Whether the plain steps still to go, at the pace of the last half
        of the probe (optimistic: CG slows down on a decaying spectrum),
        cost more than :data:`_SKETCH_SHARE` times the first sketch (which
        can save only a share of them): else plain CG finishes.  The
        condition number of the spectral model counts alpha as the floor of
        the spectrum; where A^T A's smallest eigenvalue lies far above alpha,
        the probe's pace is what shows the problem to be easy."""
        left = costs.steps(np.tile(self._plain_pace(probe), probe.weight), 0)
        l = min(_RANK_START, self.ops.shape[1])
        return left > _SKETCH_SHARE * (costs.product(l) + costs.factorization(l))

    def _plain_pace(self, probe):
        """Each active probed column's remaining plain steps at the pace of
        the last half of the probe's steps (their geometric mean)."""
        active = np.flatnonzero(probe.cg.active)
        hist = np.array(probe.history)[:, active]
        k = hist.shape[0] - 1
        rate = np.full(active.size, 0.999)
        if k:
            half = max(1, k // 2)
            with np.errstate(divide="ignore", invalid="ignore"):
                rate = (hist[-1] / hist[-1 - half]) ** (1.0 / half)
            rate = np.where(np.isfinite(rate) & (rate > 0), np.minimum(rate, 0.999), 0.999)
        reduction = np.minimum(self.tol / np.maximum(hist[-1], 1e-300), 1.0)
        return np.minimum(np.log(reduction) / np.log(rate), self.maxiter)

    def run(self, rank, gen, method):
        """Everything after the right-hand side; returns X and each
        column's relative residual, computed afresh."""
        costs = _Costs(self.ops)
        if method == "cg":
            cg = self.start()
            self._iterate(cg, self.maxiter)
        elif rank == "auto":
            probe = self._probe()
            cg = probe.cg
            if cg.active.any() and self.iterations < self.maxiter:
                if self._worth_a_sketch(probe, costs):
                    self.pre = self.sketch(rank, gen, costs, probe)
                if self.pre is None:  # plain CG about done, or a flat spectrum
                    self.fell_back = True
                if self.pre is not None or not probe.everything:
                    # every column, from where the probe got its own to
                    X0 = np.zeros_like(self.G)
                    X0[:, probe.columns] = cg.X
                    cg = self.start(X0, self.pre)
                    self.rank = self.pre.rank if self.pre is not None else 0
                self._iterate(cg, self.maxiter)
            elif not probe.everything:  # the probe solved the hardest: the rest plainly
                X0 = np.zeros_like(self.G)
                X0[:, probe.columns] = cg.X
                cg = self.start(X0)
                self._iterate(cg, self.maxiter)
        else:
            self.pre = self.sketch(rank, gen, costs, None)
            self.rank = self.pre.rank
            cg = self.start(None, self.pre)
            self._iterate(cg, self.maxiter)
        X = cg.X
        # refinement: restart from a freshly computed residual where rounding
        # left the true residual above tol
        every = np.arange(self.G.shape[1])
        rel = _relative(self.G - self.matvec(X, every), self.G)
        for _ in range(_REFINEMENTS):
            if np.all(rel <= self.tol) or self.iterations >= self.maxiter:
                break
            cg = self.start(X, self.pre)
            self._iterate(cg, self.maxiter)
            X = cg.X
            rel = _relative(self.G - self.matvec(X, every), self.G)
        return X, rel


def _effective_dimension(lam, alphas, trace, d):
    """``sum lam / (lam + alpha)`` plus the rest of the trace spread evenly
    over the other ``d - l`` directions (where the trace is known)."""
    if lam is None:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        head = np.sum(np.where(lam[:, None] > 0, lam[:, None] / (lam[:, None] + alphas), 0.0),
                      axis=0)
        rest = np.zeros_like(head)
        l = lam.size
        if trace is not None and d > l:
            tail = max(float(trace) - float(lam.sum()), 0.0) / (d - l)
            rest = np.where(tail > 0, (d - l) * tail / (tail + alphas), 0.0)
    return head + rest


# -- the driver ----------------------------------------------------------------


def ridge_run(ops: LinearMap, B: NDArray[np.floating], alphas: NDArray[np.float64], *,
              paired: bool = False, method: str = "nystrom-pcg", rank: Any = "auto",
              tol: float | None = None, maxiter: int | None = None, gen: Any = None,
              trace: str | None = None) -> RidgeResult:
    """The solve behind :func:`ridge` (and its dask front and the estimators)
    on a checked map ``ops`` (m x d) and a checked dense ``B`` (m x k): ``x``
    of shape (d, k * p) (alpha varying fastest) for every column of B with
    every alpha, or, with ``paired``, (d, k) with alpha ``alphas[j]`` for
    column j.

    ``trace``: how ``effective_dimension`` is computed: None (the sketch's
    estimate, or None without a sketch), ``"exact"`` (the eigenvalues of
    ``A^T A``, formed: small d) or ``"probes"`` (Girard and Hutchinson's
    estimate ``||z||^2 - alpha z^T (A^T A + alpha I)^-1 z`` averaged over
    :data:`_TRACE_PROBES` Rademacher vectors z, solved with the others:
    unbiased, whatever the sketch); not with ``paired``."""
    m, d = ops.shape
    dtype = np.dtype(np.float32) if ops.dtype == B.dtype == np.float32 else np.dtype(np.float64)
    if ops.dtype != dtype:
        try:
            ops = CenteredMap(ops.inner.astype(dtype), ops.mu) \
                if isinstance(ops, CenteredMap) else ops.astype(dtype)
        except TypeError:  # a map known by its products: its own dtype
            dtype = ops.dtype
    tol = default_tol(dtype) if tol is None else tol
    maxiter = 10 * d if maxiter is None else maxiter
    if method == "direct" and d > _DIRECT_MAX_COLUMNS:
        raise ValueError(f"method='direct' forms the {d} x {d} matrix A^T A: at most "
                         f"{_DIRECT_MAX_COLUMNS} columns, got {d}; use 'nystrom-pcg'")
    start = ops.matvecs
    with serial_blas():  # one BLAS thread: the same answer on any thread count
        scaled, ea = into_safe_range(ops)
        eb = safe_exponent(float(np.max(np.abs(B))) if B.size else 0.0)
        Bs = np.ldexp(B, -eb).astype(dtype, copy=False) if eb else B.astype(dtype, copy=False)
        k = Bs.shape[1]
        Gk = np.asarray(scaled.rmatmat(Bs), dtype=dtype)  # A^T b, d x k
        if paired:
            G, column_alphas = Gk, alphas
        else:  # column j p + a: column j of b with alphas[a]
            G, column_alphas = np.repeat(Gk, alphas.size, axis=1), np.tile(alphas, k)
        n_solutions = G.shape[1]
        if trace == "probes":  # probe i with alphas[a]: column k p + i p + a
            Z = gen.choice(np.array([-1.0, 1.0], dtype=dtype), size=(d, _TRACE_PROBES))
            G = np.hstack([G, np.repeat(Z, alphas.size, axis=1)])
            column_alphas = np.concatenate([column_alphas, np.tile(alphas, _TRACE_PROBES)])
        # alpha in the scaled problem (a value beyond float64 is as good as infinite)
        alphas_s = np.minimum(np.ldexp(column_alphas, -2 * ea), 1e300)
        run = _Run(scaled, G, alphas_s, tol, maxiter, dtype)
        if method == "direct":
            X, rel = _direct(scaled, G, alphas_s, tol, dtype)
        else:
            X, rel = run.run(rank, gen, method)
        path_s = np.minimum(np.ldexp(alphas, -2 * ea), 1e300)
        if trace == "probes":
            W = X[:, n_solutions:].reshape(d, _TRACE_PROBES, alphas.size)
            zw = np.einsum("ip,ipa->a", Z.astype(np.float64), W.astype(np.float64))
            deff = d - path_s * zw / _TRACE_PROBES
            X, rel, G = X[:, :n_solutions], rel[:n_solutions], G[:, :n_solutions]
        elif trace == "exact":
            w = np.maximum(eigvalsh(gram(scaled)), 0.0)
            deff = np.array([float(np.sum(w / (w + a))) if a > 0 else float(np.sum(w > 0))
                             for a in path_s])
        elif run.pre is not None:  # the sketch that preconditioned the solve
            total = scaled.frobenius2()
            total = total() if callable(total) else total  # a dask map's: after its first pass
            deff = _effective_dimension(run.lam, path_s if not paired else alphas_s, total, d)
        else:
            deff = None
    if eb - ea:
        X = np.ldexp(X, eb - ea).astype(dtype, copy=False)
    converged = bool(np.all(rel <= tol))
    used = "direct" if method == "direct" else \
        ("cg" if method == "cg" or run.fell_back or run.pre is None else "nystrom-pcg")
    if not converged:
        warn_unconverged(
            f"ridge (method={method!r}) stopped after {run.iterations} iterations at a relative "
            f"residual of the normal equations of {float(rel.max()):.3g} > tol={tol:.3g}; "
            "increase maxiter or alpha, or pass a larger rank")
    history = np.array(run.history) if run.history else np.ones((1, G.shape[1]))
    return RidgeResult(X, residual=rel, history=history, iterations=run.iterations,
                       converged=converged, method=used, rank=run.rank,
                       fell_back=run.fell_back, effective_dimension=deff,
                       matvecs=ops.matvecs - start)


def ridge(A: MatrixLike, b: ArrayLike, alpha: Any, *, method: str = "nystrom-pcg",
          rank: int | str = "auto", tol: float | None = None, maxiter: int | None = None,
          rng: RNGLike = None) -> RidgeResult:
    """Ridge regression ``min ||A x - b||^2 + alpha ||x||^2``, for one alpha or a path.

    Conjugate gradients on the normal equations ``(A^T A + alpha I) x =
    A^T b``, preconditioned by a randomized Nystrom approximation of ``A^T
    A`` whose rank grows until the preconditioned system is well conditioned
    (Frangella, Tropp and Udell 2023).  Several values of ``alpha`` (a
    regularization path) share one sketch and one iteration: their
    solutions come back as columns.

    Parameters
    ----------
    A : array_like, scipy.sparse matrix, LinearOperator or LinearMap, shape (m, d)
        Dense (C or F order), CSR/CSC (other sparse formats become CSR), a
        ``scipy.sparse.linalg.LinearOperator`` (its ``matmat`` and
        ``rmatmat`` are used) or a dask array (see :func:`sketchlab.dask.ridge`).
    b : array_like, shape (m,) or (m, k)
        One right-hand side, or k of them (solved together).
    alpha : float or array_like of shape (p,)
        The regularization, >= 0 (``alpha = 0`` is least squares through the
        normal equations, the minimum-norm solution for a rank-deficient A);
        an array of values is a path: every value with every column of b,
        from one sketch.
    method : {"nystrom-pcg", "cg", "direct"}, default "nystrom-pcg"
        ``"nystrom-pcg"``: conjugate gradients preconditioned by the Nystrom
        sketch; ``"cg"``: plain conjugate gradients; ``"direct"``: the
        Cholesky factor of ``A^T A + alpha I`` (forms the d x d matrix: d up
        to 16,384), with refinement.
    rank : "auto" or int, default "auto"
        The rank ``l`` of the Nystrom preconditioner.  ``"auto"``: 8 plain
        steps first (enough for a well-conditioned problem), then from 8,
        doubled while the preconditioned system is not yet well conditioned
        (``lam_l / alpha > 1``) and the predicted saving in steps outweighs
        the price of the larger sketch; plain CG goes on where a
        preconditioner would not pay (``fell_back``).  An int: that rank (at
        most d), no plain steps first.
    tol : float, optional
        Target relative residual of the normal equations, in (0, 1); default
        the square root of the machine epsilon of the working dtype (1.5e-8
        in float64).
    maxiter : int, optional
        Most conjugate-gradient steps in all (default 10 d).
    rng : None, int or numpy.random.Generator
        Seeds the sketch's Gaussian test matrix.

    Returns
    -------
    RidgeResult
        Unpacks as ``x,``; ``residual``, ``history``, ``iterations``,
        ``converged``, ``method``, ``rank``, ``fell_back``,
        ``effective_dimension`` and ``matvecs`` are attributes.

    Raises
    ------
    ValueError
        A or b empty, with NaN or Inf, of mismatched rows; alpha negative,
        not finite or not 1-D; a bad ``method``, ``rank``, ``tol``,
        ``maxiter``; ``"direct"`` with more than 16,384 columns.
    TypeError
        Non-numeric A or b, parameters of the wrong type.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        When a residual is above ``tol`` after ``maxiter`` steps.

    Notes
    -----
    Cost (``nnz`` stored entries of A, d columns, ``c = k p`` solutions, ``l``
    the rank): the sketch ``A^T A Omega`` (``l`` products in blocks, the
    compiled one-pass loops on a CSR A), its factorization (``O(d l^2)``),
    then per step one product with ``A^T A`` on the active columns and
    ``4 d l`` flops each for the preconditioner.  Memory: three d x l arrays
    (at most 2**26 entries each: the rank is capped there) and a few d x c.

    Guarantee (Frangella, Tropp and Udell 2023, Theorem 5.1): with ``l >= 2
    ceil(1.5 d_eff(alpha)) + 1`` the preconditioned condition number is at
    most 28 with probability at least ``1 - 3 / d``, so the steps no longer
    grow with the conditioning of A.

    Precision: float32 A and b are solved in float32 (x float32), any other
    combination in float64.  Every BLAS call runs on one thread and the
    compiled products do not depend on the thread count, so x is the same
    for any number of threads; the rank is chosen from counts, not timings.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, sketchlab
    >>> gen = np.random.default_rng(0)
    >>> A = sp.random(3000, 400, density=0.02, format="csr", random_state=0)
    >>> A = A @ sp.diags(1.0 / np.arange(1, 401))       # a decaying spectrum
    >>> b = gen.standard_normal(3000)
    >>> res = sketchlab.ridge(A, b, 1e-4, tol=1e-10, rng=0)
    >>> x_ref = np.linalg.solve((A.T @ A).toarray() + 1e-4 * np.eye(400), A.T @ b)
    >>> bool(np.allclose(res.x, x_ref, rtol=1e-6, atol=1e-8 * np.abs(x_ref).max()))
    True
    >>> res.converged, res.method
    (True, 'nystrom-pcg')
    >>> path = sketchlab.ridge(A, b, [1e-4, 1e-2, 1.0], tol=1e-10, rng=0)
    >>> path.x.shape
    (400, 3)
    """
    _check_scalars(alpha, method, rank, tol, maxiter, rng)  # before the O(nnz) checks of A
    return ridge_on_map(as_linear_map(A, "A"), b, alpha, method=method, rank=rank, tol=tol,
                        maxiter=maxiter, rng=rng)


def _check_scalars(alpha, method, rank, tol, maxiter, rng):
    check_choice(method, "method", METHODS)
    _check_rank(rank)
    check_tol(tol)
    if maxiter is not None:
        check_int(maxiter, "maxiter", 1)
    check_alphas(alpha)
    if not isinstance(rng, np.random.Generator):
        as_generator(rng, "rng")


def ridge_on_map(ops: LinearMap, b: ArrayLike, alpha: Any, *, method: str = "nystrom-pcg",
                 rank: int | str = "auto", tol: float | None = None,
                 maxiter: int | None = None, rng: RNGLike = None) -> RidgeResult:
    """:func:`ridge` of the linear map ``ops`` (checked: the dask front's
    :class:`~sketchlab.dask.ChunkMap`, or what :func:`as_linear_map`
    returned), with every check of the other arguments."""
    method = check_choice(method, "method", METHODS)
    rank = _check_rank(rank)
    tol = check_tol(tol)
    maxiter = None if maxiter is None else check_int(maxiter, "maxiter", 1)
    alphas, is_path = check_alphas(alpha)
    gen = as_generator(rng, "rng")
    m, d = ops.shape
    if m == 0 or d == 0:
        raise ValueError(f"A must have at least one row and one column, got shape {ops.shape}")
    B, vector = check_rhs(b, m)
    res = ridge_run(ops, B, alphas, method=method, rank=rank, tol=tol, maxiter=maxiter,
                    gen=gen)
    k, p = B.shape[1], alphas.size
    x = res.x.reshape(d, k, p)
    rel = np.asarray(res.residual).reshape(k, p)
    deff = res.effective_dimension
    if vector:
        x, rel = x[:, 0], rel[0]
    if not is_path:
        x, rel = x[..., 0], rel[..., 0]
        deff = None if deff is None else float(deff[0])
    return RidgeResult(x, residual=float(rel) if np.ndim(rel) == 0 else rel,
                       history=res.history, iterations=res.iterations,
                       converged=res.converged, method=res.method, rank=res.rank,
                       fell_back=res.fell_back, effective_dimension=deff,
                       matvecs=res.matvecs)


def check_rhs(b: Any, m: int) -> tuple[NDArray[np.floating], bool]:
    """``(B, vector)``: b checked (dense, finite, m rows, at least one
    column) as an m x k array, and whether it was 1-D."""
    b = as_matrix(b, "b", allow_1d=True, sparse=False)
    if b.shape[0] != m:
        raise ValueError(f"b must have {m} rows (the rows of A), got shape {b.shape}")
    if b.ndim == 2 and b.shape[1] == 0:
        raise ValueError(f"b must have at least one column, got shape {b.shape}")
    return b.reshape(m, -1), b.ndim == 1
