"""CUR decompositions A ~ C U R: ``sketchlab.cur`` against a CUR built from
scipy's interpolative decompositions (``scipy.linalg.interpolative``).

The peer takes c columns from a randomized column ID of A and r rows from a
randomized column ID of A^T (Martinsson, Rokhlin, Tygert; scipy's
``interp_decomp`` with ``rand=True``), then the exact core ``C^+ A R^+``.
sketchlab's selections and cores are the other parameter values; c = r = 40
(4k for the selections' target rank k = 10).  ``track_error_ratio`` is
``||A - C U R||_F / ||A - A_k||_F``, ``||A - A_k||_F`` computed once per data
set (dense SVD, or ARPACK's top k on sparse data).
"""

import numpy as np
import scipy.linalg as sla
import scipy.linalg.interpolative as sli
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import sketchlab as sl

from . import common

if common.QUICK:
    DATA = ["dense 2000x500", "csr 20000x10000"]
else:
    DATA = ["dense madelon", "dense 16384x1000", "csr debian-tfidf"]
METHODS = [
    "cur approx-leverage fast", "cur approx-leverage exact", "cur uniform fast",
    "cur deim exact", "cur pivoted-qr exact", "scipy interpolative ID + exact core",
]  # fmt: skip
C_KEPT = 40  # c = r
K = 10


def best_rank_residual(A, k=K):
    """``||A - A_k||_F``: from all singular values (dense) or ARPACK's top k (sparse)."""
    if sp.issparse(A):
        top = spla.svds(A, k=k, return_singular_vectors=False, random_state=0)
        return float(np.sqrt(max(sp.linalg.norm(A) ** 2 - np.sum(top**2), 0.0)))
    return float(np.sqrt(np.sum(sla.svdvals(A, check_finite=False)[k:] ** 2)))


def interpolative_cur(A, c, r, seed=0):
    """(columns, rows, U): randomized column IDs of A and A^T, then ``C^+ A R^+``."""
    gen = np.random.default_rng(seed)
    operator = spla.aslinearoperator(A) if sp.issparse(A) else A
    columns = np.sort(sli.interp_decomp(operator, c, rand=True, rng=gen)[0][:c])
    transposed = operator.T if sp.issparse(A) else A.T
    rows = np.sort(sli.interp_decomp(transposed, r, rand=True, rng=gen)[0][:r])
    C = A[:, columns]
    R = A[rows]
    C, R = (C.toarray(), R.toarray()) if sp.issparse(A) else (C, R)
    AR = np.asarray((A @ np.linalg.pinv(R)))  # A R^+, m x r
    return columns, rows, np.linalg.pinv(C) @ AR


class CUR:
    params = [DATA, METHODS]
    param_names = ["data", "method"]
    timeout = 600

    def setup(self, data, method):
        common.require("cur")
        self.A = common.load(data)
        if method.startswith("cur "):
            _, select, core = method.split()
            self.run = lambda: sl.cur(self.A, C_KEPT, k=K, select=select, core=core, rng=0)
        else:
            self.run = lambda: interpolative_cur(self.A, C_KEPT, C_KEPT)
        self.run()  # compiles or loads the kernels

    def time_cur(self, data, method):
        self.run()

    def peakmem_cur(self, data, method):
        self.run()

    def track_error_ratio(self, data, method):
        result = self.run()
        if isinstance(result, tuple):
            columns, rows, U = result
            error = sl.gmr_residual(self.A, self.A[:, columns], U, self.A[rows])
        else:
            error = result.error(self.A)
        if data not in _OPTIMA:
            _OPTIMA[data] = best_rank_residual(self.A)
        return error / _OPTIMA[data]

    track_error_ratio.unit = "ratio"


_OPTIMA = {}  # ||A - A_k||_F per data label, once per process


CLAIMS_C = 50 if common.QUICK else 100  # c = r of the two CUR targets
CLAIMS = ["core fast", "core exact", "cur approx-leverage fast", "cur approx-leverage exact",
          "cur leverage fast"]


class CURClaims:
    """The two CUR targets at c = r = 100 (50 in the quick profile), k = 10, on the text
    matrix: the fast core (``fast_gmr`` on the C and R of one approx-leverage selection,
    sketch size 10 c) against the exact core (``gmr``) on the same columns and rows
    ("core ..."), and whole ``cur`` calls with approximate against exact leverage scores
    ("cur <select> <core>").  ``track_error`` is ``||A - C U R||_F`` of the call."""

    params = [[common.TEXT], CLAIMS]
    param_names = ["data", "what"]
    timeout = 600

    def setup(self, data, what):
        common.require("cur")
        A = self.A = common.load(data)
        c = CLAIMS_C
        if what.startswith("core"):
            chosen = sl.cur(A, c, k=K, select="approx-leverage", core="cross", rng=0)
            s_c, s_r = min(A.shape[0], 10 * c), min(A.shape[1], 10 * c)
            self.C, self.R = chosen.C, chosen.R
            if what == "core fast":
                self.run = lambda: sl.fast_gmr(A, self.C, self.R, sketch_size=(s_c, s_r),
                                               rng=1).X
            else:
                self.run = lambda: sl.gmr(A, self.C, self.R)
        else:
            _, select, core = what.split()
            self.run = lambda: sl.cur(A, c, k=K, select=select, core=core, rng=0)
        self.run()  # compiles or loads the kernels

    def time_run(self, data, what):
        self.run()

    def track_error(self, data, what):
        result = self.run()
        if what.startswith("core"):
            return sl.gmr_residual(self.A, self.C, result, self.R)
        return result.error(self.A)

    track_error.unit = "||A - C U R||_F"


# ---- compare.py's rows (section "gmr": the CUR targets) ----------------------------------


def _claim(what, method="time_run"):
    return common.Call(CURClaims, (common.TEXT, what), method)


_WHERE = f"c = r = {CLAIMS_C}, k = {K}"
TARGETS = [
    common.Target(
        "gmr", f"cur core ({_WHERE}, approx-leverage): fast",
        [_claim("core fast"), _claim("core exact")], "ratio", 10, 'core="exact"',
        why="the Fast GMR core (fast_gmr on cur's C and R, sketch size 10 c) against the exact "
        "core C^+ A R^+ (gmr) on the same columns and rows: the paper's first application, "
        "where Algorithm 1 saves the product with A."),
    common.Target(
        "gmr", "  cur fast core error / exact core error - 1",
        [_claim("core fast", "track_error"), _claim("core exact", "track_error")], "value",
        0.02, combine=lambda v, _: v[0] / v[1] - 1,
        why="the fast core's ||A - C U R||_F within 2% of the exact core's."),
    common.Target(
        "gmr", f"cur ({_WHERE}, approx-leverage, core fast)",
        [_claim("cur approx-leverage fast"), _claim("cur approx-leverage exact")], "ratio",
        None, 'whole call, core="exact"'),
    common.Target(
        "gmr", f"cur ({_WHERE}, approx-leverage, core fast)",
        [_claim("cur approx-leverage fast"), _claim("cur leverage fast")], "ratio", 5,
        'select="leverage"',
        why='the whole cur call with approximate leverage scores (sketched, O(nnz(A))) against '
        'select="leverage" (exact rank-k scores from ARPACK\'s top k singular vectors), same '
        "core: the approximation must pay for itself."),
]
