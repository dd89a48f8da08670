"""Conjugate gradients, once: preconditioned, block right-hand sides, residual history.

The one conjugate-gradient iteration of the package (kernel ridge
regression, the refinement rounds of least squares, ridge regression).  The
columns of ``B`` are solved together, one product with the operator per
iteration for all of them, each column with its own step sizes (Hestenes
and Stiefel's CG on each column; not block CG, whose shared Krylov space
needs a rank-revealing step).  A column stops when its relative residual
``||b - A x|| / ||b||`` (by the recurrence) is at most ``tol``, or when its
curvature ``p^T A p`` or ``r^T M r`` is no longer positive (converged to
rounding, or the operator is not positive definite on it): it then keeps
its last iterate and costs nothing more.

Every rule is relative: the same iterates, to rounding, for the operator and
the right-hand sides scaled by any power of two (and by any factor, where no
value over- or underflows).

:class:`ConjugateGradients` is the iteration, one :meth:`step_once` at a
time (the caller decides when to stop: least squares checks its backward
error every few steps); :func:`pcg` runs it to ``tol`` or ``maxiter`` and
returns a :class:`CGResult`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ._config import safe_exponent

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["ConjugateGradients", "pcg", "CGResult"]


class CGResult(NamedTuple):
    """``X`` (n x t), ``history`` ((iterations + 1) x t relative residuals,
    the first row before the first step), ``iterations``, ``converged``
    (every column at or below tol)."""

    X: NDArray[np.floating]
    history: NDArray[np.floating]
    iterations: int
    converged: bool


def _col_dots(X, Y):
    return np.einsum("ij,ij->j", X, Y)


class ConjugateGradients:
    """Conjugate gradients on ``A X = B`` (A symmetric positive definite,
    given by ``matvec``), preconditioned by ``precond`` (``V -> M^-1 V``;
    None: none), from ``X0`` (default zero); ``matvec`` and ``precond``
    receive the active columns only.

    After construction and after every :meth:`step`: ``X`` (the iterates,
    n x t), ``step`` (what the last step added to X), ``residual`` (each
    column's relative residual ``||r|| / ||b||``, by the recurrence),
    ``active`` (the columns still iterating: residual above ``tol``, when
    given, and positive curvature so far), ``iterations``.

    ``indexed``: ``matvec`` and ``precond`` are called as ``f(V, columns)``,
    ``columns`` the indices (into B's columns) of the columns of V, for an
    operator or a preconditioner that differs from column to column (ridge
    regression's path: one shift per column)."""

    def __init__(self, matvec: Callable[..., Any], B: NDArray[np.floating], *,
                 precond: Callable[..., Any] | None = None, X0: Any = None,
                 tol: float | None = None, indexed: bool = False):
        t = B.shape[1]
        self.matvec: Callable[[Any, Any], Any]
        self.precond: Callable[[Any, Any], Any] | None
        if indexed:
            self.matvec, self.precond = matvec, precond
        else:  # the same calls, the column indices dropped
            self.matvec = lambda V, columns: matvec(V)
            self.precond = None if precond is None else \
                (lambda V, columns: precond(V))
        self.tol = tol
        everything = np.arange(t)
        # columns of B whose largest magnitude lies outside [2**-100, 2**100]
        # are scaled by a power of two (exact: the iterates are the exact
        # images of the unscaled ones) so that no dot product over- or
        # underflows; X and step give them back in B's scale
        top = np.max(np.abs(B), axis=0) if B.shape[0] else np.zeros(t)
        self.exps = np.array([safe_exponent(float(v)) for v in top], dtype=np.int64)
        if self.exps.any():
            B = np.ldexp(B, -self.exps).astype(B.dtype, copy=False)
            if X0 is not None:
                X0 = np.ldexp(X0, -self.exps).astype(B.dtype, copy=False)
        self._X = np.zeros_like(B) if X0 is None else np.array(X0, dtype=B.dtype)
        R = B.copy() if X0 is None else B - self.matvec(self._X, everything)
        bnorm = np.linalg.norm(B, axis=0)
        self.scale = np.where(bnorm > 0, bnorm, 1.0)
        self.residual = np.linalg.norm(R, axis=0) / self.scale
        self.active = np.ones(t, dtype=bool) if tol is None else self.residual > tol
        Z = R if self.precond is None else self.precond(R, everything)
        P, rz = Z.copy(), _col_dots(R, Z)
        # the active columns' iterates, residuals, directions and r^T z, kept
        # side by side (the arrays shrink when columns converge: no step
        # gathers or scatters columns); _X holds the others' final iterates
        self._cols, self._work = everything, (self._X, R, P, rz)
        if not self.active.all():
            self._shrink(self.active, everything)
        self._step = np.zeros_like(B)
        self._step_cols: NDArray[np.intp] | None = None  # None: every column's step
        self.iterations = 0

    def _shrink(self, keep, cols):
        """Keep the working columns ``cols[keep]`` (the others' iterates to _X)."""
        Xw, R, P, rz = self._work
        if Xw is not self._X:
            self._X[:, cols] = Xw
        self._cols = cols[keep]
        self._work = (Xw[:, keep], R[:, keep], P[:, keep], rz[keep])

    @property
    def X(self) -> NDArray[np.floating]:
        """The iterates (n x t), in B's scale."""
        Xw = self._work[0]
        if Xw is not self._X:
            self._X[:, self._cols] = Xw
        return self._X if not self.exps.any() else \
            np.ldexp(self._X, self.exps).astype(self._X.dtype, copy=False)

    @property
    def step(self) -> NDArray[np.floating]:
        """What the last step added to X, in B's scale."""
        step = self._step
        if self._step_cols is not None:  # the active columns' only: the rest did not move
            step = np.zeros_like(self._X)
            step[:, self._step_cols] = self._step
        return step if not self.exps.any() else \
            np.ldexp(step, self.exps).astype(step.dtype, copy=False)

    def step_once(self) -> bool:
        """One step on the active columns; False (and nothing done) when none
        is active."""
        cols = self._cols
        if cols.size == 0:
            return False
        X, R, P, rz = self._work
        AP = self.matvec(P, cols)
        pq = _col_dots(P, AP)
        ok = (pq > 0) & np.isfinite(pq) & (rz > 0)
        a = np.where(ok, rz / np.where(ok, pq, 1.0), 0.0)
        step = a * P
        X += step
        R -= a * AP
        self._step, self._step_cols = step, (None if cols.size == self._X.shape[1] else cols)
        self.residual[cols] = np.linalg.norm(R, axis=0) / self.scale[cols]
        keep = ok if self.tol is None else ok & (self.residual[cols] > self.tol)
        self.active[cols] = keep
        self.iterations += 1
        if not keep.all():
            self._shrink(keep, cols)
            X, R, P, rz = self._work
        if self._cols.size:  # the next direction
            Z = R if self.precond is None else self.precond(R, self._cols)
            rz_new = _col_dots(R, Z)
            P[...] = Z + (rz_new / rz) * P
            rz[...] = rz_new
        return True


def pcg(matvec: Callable[..., Any], B: NDArray[np.floating], *, tol: float,
        maxiter: int, precond: Callable[..., Any] | None = None,
        X0: Any = None, indexed: bool = False) -> CGResult:
    """Conjugate gradients until every column's relative residual is at
    most ``tol`` or ``maxiter`` steps were taken (``indexed``: as for
    :class:`ConjugateGradients`).  The caller warns when it did not converge
    (it knows what to advise)."""
    cg = ConjugateGradients(matvec, B, precond=precond, X0=X0, tol=tol, indexed=indexed)
    history = [cg.residual.copy()]
    while cg.iterations < maxiter and cg.step_once():
        history.append(cg.residual.copy())
    return CGResult(cg.X, np.array(history).reshape(-1, B.shape[1]), cg.iterations,
                    bool(np.all(cg.residual <= tol)))
