"""Generalized matrix regression end to end: ``fast_gmr`` (Algorithm 1) against
exact ``gmr`` and the plain numpy/scipy QR solution, at c = r = 20 (SPEC 7's
sizes) and c = r = 100 (``GMRLargeRank``), sketch sizes a c and a r with
a = 10 (capped at m and n); the solver "fast_gmr countsketch estimate_error"
is the CountSketch call with ``estimate_error=True`` (its estimate discarded),
timed beside the plain one.

C = A G_C and R = G_R A with Gaussian G (the paper's GMR experiment).  The
solver is a parameter, so asv shows ours and the peers side by side for each
data set; ``track_error_ratio`` is ``||A - C X R||_F / ||A - C X* R||_F - 1``.
"""

import numpy as np
import scipy.linalg as sla

import sketchlab as sl

from . import common

if common.QUICK:
    DATA = ["dense 2000x500", "csr 20000x10000"]
else:
    DATA = ["dense madelon", "dense 16384x1000", "csr 52396x25252", "csr debian-tfidf"]
SOLVERS = [
    "fast_gmr countsketch",
    "fast_gmr countsketch estimate_error",
    "fast_gmr gaussian",
    "gmr",
    "plain QR (scipy)",
]
RANK = 20  # c = r
RANK_LARGE = 100
A_FACTOR = 10  # s_c = a c, s_r = a r


def plain_qr_solution(A, C, R):
    """``X* = C^+ A R^+`` with numpy/scipy only: thin QRs of C and R^T and one
    product with A (``T_C^{-1} Q_C^T A Q_R T_R^{-T}``, full-rank C and R)."""
    Q_C, T_C = sla.qr(C, mode="economic", check_finite=False)
    Q_R, T_R = sla.qr(R.T, mode="economic", check_finite=False)
    B = Q_C.T @ np.asarray(A @ Q_R)
    Y = sla.solve_triangular(T_C, B, check_finite=False)
    return sla.solve_triangular(T_R, Y.T, check_finite=False).T


def gmr_problem(A, rank=RANK, seed=0):
    """(C, R) = (A G_C, G_R A), C-ordered."""
    gen = np.random.default_rng(seed)
    m, n = A.shape
    C = np.ascontiguousarray(A @ gen.standard_normal((n, rank)))
    R = np.ascontiguousarray((A.T @ gen.standard_normal((m, rank))).T)
    return C, R


def solver(name, sketch_size=A_FACTOR * RANK):
    """A function ``(A, C, R) -> X`` for a solver name; ``sketch_size`` an int
    or a pair (s_c, s_r)."""
    if name.endswith("estimate_error"):
        fast = solver(name.rsplit(" ", 1)[0], sketch_size)
        return lambda A, C, R: fast(A, C, R, estimate_error=True)
    if name.startswith("fast_gmr"):
        kind = name.split()[1]
        return lambda A, C, R, **more: sl.fast_gmr(
            A, C, R, sketch_size=sketch_size, sketch=kind, rng=0, **more
        ).X
    if name == "gmr":
        return sl.gmr
    return plain_qr_solution


class GMR:
    params = [DATA, SOLVERS]
    param_names = ["data", "solver"]
    timeout = 600
    rank = RANK

    def setup(self, data, name):
        common.require("gmr", "fast_gmr", "gmr_error_ratio")
        if name.endswith("estimate_error"):
            common.require("ErrorEstimate")
        self.A = common.load(data)
        m, n = self.A.shape
        self.C, self.R = gmr_problem(self.A, self.rank)
        self.solve = solver(name, (min(m, A_FACTOR * self.rank), min(n, A_FACTOR * self.rank)))
        self.solve(self.A, self.C, self.R)  # compiles or loads the kernels

    def time_solve(self, data, name):
        self.solve(self.A, self.C, self.R)

    def peakmem_solve(self, data, name):
        self.solve(self.A, self.C, self.R)

    def track_error_ratio(self, data, name):
        X = self.solve(self.A, self.C, self.R)
        return sl.gmr_error_ratio(self.A, self.C, X, self.R)

    track_error_ratio.unit = "ratio"


class GMRLargeRank(GMR):
    """The same solvers at c = r = 100 (sketch sizes 1000, capped at m and n),
    where the plain QR solution's product of A with c columns weighs more."""

    rank = RANK_LARGE


# ---- compare.py's rows (section "gmr"; the CUR rows are in bench_cur) --------------------


def _solve(cls, solver, method="time_solve"):
    return common.Call(cls, (common.TEXT, solver), method)


TARGETS = []
for _cls, _qr_bound in ((GMR, 12), (GMRLargeRank, 25)):
    _rank = _cls.rank
    _fast = _solve(_cls, "fast_gmr countsketch")
    _what = f"fast_gmr (c = r = {_rank}, a = {A_FACTOR}, CountSketch)"
    TARGETS += [
        common.Target("gmr", _what, [_fast, _solve(_cls, "gmr")], "ratio", None, "gmr"),
        common.Target(
            "gmr", _what, [_fast, _solve(_cls, "plain QR (scipy)")], "ratio", _qr_bound,
            "plain QR (scipy)",
            why=f"fast_gmr at c = r = {_rank}, s_c = s_r = a c (Algorithm 1: one pass over A, "
            "then a small solve) against scipy's solution of the same problem, C^+ A R^+ by "
            "thin QRs of C and R^T and one product of A with Q_R (m n c work): the sketch's "
            "point, growing with c."),
        common.Target(
            "gmr", f"  fast_gmr estimate_error=True / plain (c = {_rank})",
            [_solve(_cls, "fast_gmr countsketch estimate_error"), _fast], "slowdown", 1.25,
            "plain",
            why="the same fast_gmr call with estimate_error=True (Gaussian probes through "
            "CountSketches of A's rows and columns, Phi A Theta^T: one more pass over the "
            "nonzeros of A into a small buffer) against the plain call: an error bar beside the "
            "answer should cost at most a quarter more."),
    ]
TARGETS += [
    common.Target(
        "gmr", "gmr / plain QR solution", [_solve(GMR, "gmr"), _solve(GMR, "plain QR (scipy)")],
        "slowdown", 1.5, "plain QR (scipy)",
        why="our exact gmr against the same scipy QR solution: the exact reference must not be "
        "slower than the code a user would write (round one)."),
    common.Target(
        "gmr", "  fast_gmr error ratio", [_solve(GMR, "fast_gmr countsketch",
                                                 "track_error_ratio")], "value", 0.1,
        why="||A - C X R||_F / ||A - C X* R||_F - 1 of the timed fast_gmr call: the paper's "
        "Figure 1 has it near 0.05 or less at a = 10."),
]
