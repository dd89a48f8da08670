"""Bucket/sign tables of CountSketch and OSNAP, computed from the hash.

Column ``j`` of an OSNAP with ``p`` nonzeros per column has one nonzero in
each of ``p`` row blocks ``[floor(b s / p), floor((b + 1) s / p))``; its row
within block ``b`` and its sign come from ``hash64(key, j p + b)``.  CountSketch
is the case ``p = 1``.
"""

import numpy as np
from numba import njit, prange

from .._config import JIT, PJIT
from .._hash import bucket_of, hash64, sign_of


@njit(**PJIT)
def hashing_columns(key, s, p, j0, b, rows, vals):
    """CSC table of columns ``[j0, j0 + b)``: entries of local column ``jj``
    are ``rows[jj p : (jj + 1) p]`` and ``vals[...]`` (``+-1/sqrt(p)``)."""
    scale = 1.0 / np.sqrt(p)
    key = np.uint64(key)
    up = np.uint64(p)
    for jj in prange(b):
        base = np.uint64(j0 + jj) * up
        for blk in range(p):
            h = hash64(key, base + np.uint64(blk))
            lo = (blk * s) // p
            hi = ((blk + 1) * s) // p
            rows[jj * p + blk] = lo + bucket_of(h, hi - lo)
            vals[jj * p + blk] = sign_of(h) * scale


@njit(**JIT)
def transpose_table(col_ptr, col_idx, col_val, row_ptr, row_idx, row_val, cursor):
    """Counting sort of a CSC table into CSR (``row_ptr`` zeroed on entry,
    ``cursor`` scratch of the number of rows); columns stay in increasing
    order within each row."""
    ncols = col_ptr.shape[0] - 1
    nrows = row_ptr.shape[0] - 1
    for k in range(col_ptr[ncols]):
        row_ptr[col_idx[k] + 1] += 1
    for r in range(nrows):
        row_ptr[r + 1] += row_ptr[r]
        cursor[r] = row_ptr[r]
    for jj in range(ncols):
        for k in range(col_ptr[jj], col_ptr[jj + 1]):
            r = col_idx[k]
            pos = cursor[r]
            row_idx[pos] = jj
            row_val[pos] = col_val[k]
            cursor[r] = pos + 1
