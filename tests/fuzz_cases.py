"""Corrupt and odd inputs for tests/test_fuzz.py, the public calls they are
fed to, and the runner that executes those calls in a child process.

A case is a string ``"family|call|variant|cls"``; :func:`build_case` turns it
into a :class:`Case` in any process, so the parent only sends names to the
child and the child reports one JSON line per case (printed and flushed
before the next case starts: if a case kills the child, every case before it
is already reported, and :func:`run_cases` starts a new child after it).

What a case must do (``Case.expect``):

- ``"error"``: raise ValueError or TypeError whose message names
  ``Case.param`` (a corrupt index array, NaN, a bad size);
- ``"valid"``: return the reference (unsorted or duplicate indices, odd
  index dtypes: the matrix is well defined);
- ``"either"``: one of the two (inputs that are unusual but readable, such
  as data arrays longer than the indices, that a library may refuse).

The reference is the same call on the dense float64 matrix the input
stands for (for the operators: the operator built densely from its
definition by ``tests/reference.py``, times that matrix); where scipy itself
defines what a mutated object means (a DIA offset moved out of the matrix),
it is scipy's own ``toarray()`` of the object.
"""

import dataclasses
import json
import os
import pickle
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from sketchlab._registry import make_sketch

from . import _kinds
from ._support import base_dense, compare
from ._support import sketch_state as _state
from .reference import dense_of

REPO = Path(__file__).resolve().parents[1]

# the child's address-space limit: an allocation that a bug makes huge fails
# with MemoryError instead of swapping a machine shared with other jobs
CHILD_MEMORY = 4 << 30

M, N = 7, 5  # the shape of the matrix fed to the calls
FORMATS = ("csr", "csc", "coo", "bsr", "lil", "dok", "dia")


# ---------------------------------------------------------------------------
# Matrices
# ---------------------------------------------------------------------------


def as_format(D, fmt, cls="m"):
    """``D`` in scipy format ``fmt`` ("m": the matrix class, "a": the array
    class) or dense ("C"/"F")."""
    if fmt in ("C", "F"):
        return np.array(D, order=fmt)
    kind = "_matrix" if cls == "m" else "_array"
    if fmt == "bsr":
        return getattr(sp, "bsr" + kind)(D, blocksize=(1, 1) if min(D.shape) < 2 else None)
    return getattr(sp, fmt + kind)(D)


def _pick(arr, gen):
    """A stored position of ``arr`` (the middle one, or a random one)."""
    n = arr.shape[0]
    return n // 2 if gen is None else int(gen.integers(0, n))


def _fresh(A):
    """A with its arrays copied, so a mutation touches no other object."""
    A = A.copy()
    for name in ("indices", "indptr", "data", "row", "col", "offsets"):
        if hasattr(A, name) and isinstance(getattr(A, name), np.ndarray):
            setattr(A, name, getattr(A, name).copy())
    return A


# Each corruption: fmt of the object it starts from, what the call must do,
# and f(A, gen) -> the corrupted object (A is a fresh valid copy).  ``ref``:
# "D" (the dense matrix the input stands for) or "scipy" (scipy's toarray()).


@dataclasses.dataclass(frozen=True)
class Corruption:
    name: str
    fmt: str
    expect: str
    fn: object
    ref: str = "D"
    # words an error message must not contain (a claim that is false of the input)
    false_claims: tuple = ()


def _set(name, value_fn, dtype=None):
    def f(A, gen):
        arr = getattr(A, name)
        if dtype is not None:
            arr = arr.astype(dtype)
        arr[_pick(arr, gen)] = value_fn(A)
        setattr(A, name, arr)
        return A
    return f


def _outer_dim(A):
    """Length of the vectors the indices point into: columns of CSR, rows of CSC."""
    return A.shape[1] if A.format == "csr" else A.shape[0]


def _indptr_decreasing(A, gen):
    p = A.indptr.copy()
    i = int(np.argmax(np.diff(p) > 0))  # a nonempty vector: make its start pass its end
    p[i] = p[i + 1] + 1
    A.indptr = p
    return A


def _indptr_start(A, gen):
    A.indptr = A.indptr.copy()
    A.indptr[0] = 1
    return A


def _indptr_neg(A, gen):
    A.indptr = A.indptr.copy()
    A.indptr[1:] -= A.indptr[-1] + 1  # all negative, still non-decreasing after [0]
    A.indptr[0] = 0
    return A


def _unsorted(A, gen):
    """Reverse the stored order within every row (CSR) or column (CSC)."""
    A.sort_indices()
    for i in range(A.indptr.shape[0] - 1):
        lo, hi = A.indptr[i], A.indptr[i + 1]
        A.indices[lo:hi] = A.indices[lo:hi][::-1].copy()
        A.data[lo:hi] = A.data[lo:hi][::-1].copy()
    A.has_sorted_indices = False
    return A


def _duplicates(A, gen):
    """Each stored entry split into two (0.25 and 0.75 of it), the halves far apart."""
    A.sort_indices()
    indptr, indices, data = A.indptr, A.indices, A.data
    counts = np.diff(indptr)
    new_indptr = np.concatenate(([0], np.cumsum(2 * counts))).astype(indptr.dtype)
    new_indices = np.empty(2 * indices.shape[0], indices.dtype)
    new_data = np.empty(2 * data.shape[0], data.dtype)
    for i in range(counts.shape[0]):
        lo, hi = indptr[i], indptr[i + 1]
        k = hi - lo
        o = 2 * lo
        new_indices[o:o + k] = indices[lo:hi]
        new_indices[o + k:o + 2 * k] = indices[lo:hi][::-1]
        new_data[o:o + k] = 0.25 * data[lo:hi]
        new_data[o + k:o + 2 * k] = 0.75 * data[lo:hi][::-1]
    B = type(A)((new_data, new_indices, new_indptr), shape=A.shape)
    return B


def _stale_sorted(A, gen):
    """has_sorted_indices computed (True) and cached, then the indices reversed."""
    A.sort_indices()
    assert A.has_sorted_indices
    for i in range(A.indptr.shape[0] - 1):
        lo, hi = A.indptr[i], A.indptr[i + 1]
        A.indices[lo:hi] = A.indices[lo:hi][::-1].copy()
        A.data[lo:hi] = A.data[lo:hi][::-1].copy()
    return A


def _astype(name, dtype):
    def f(A, gen):
        setattr(A, name, getattr(A, name).astype(dtype))
        return A
    return f


def _strided(name):
    def f(A, gen):
        arr = getattr(A, name)
        setattr(A, name, np.repeat(arr, 2)[::2])
        assert not getattr(A, name).flags.c_contiguous or arr.shape[0] <= 1
        return A
    return f


def _read_only(A, gen):
    for name in ("indices", "indptr", "data"):
        getattr(A, name).flags.writeable = False
    return A


def _append(name, value_fn):
    def f(A, gen):
        arr = getattr(A, name)
        setattr(A, name, np.append(arr, np.array([value_fn(A)], dtype=arr.dtype)))
        return A
    return f


def _truncate(name):
    def f(A, gen):
        setattr(A, name, getattr(A, name)[:-1])
        return A
    return f


def _reshape2d(name):
    def f(A, gen):
        setattr(A, name, getattr(A, name).reshape(-1, 1))
        return A
    return f


def _replace(name, value_fn):
    def f(A, gen):
        setattr(A, name, value_fn(getattr(A, name)))
        return A
    return f


def _arrays_long(A, gen):
    """indices and data longer than indptr[-1] (scipy's nnz): entries past
    the end are not part of the matrix (scipy's check_format allows them,
    prune() drops them)."""
    A.indices = np.append(A.indices, np.array([0, 1], dtype=A.indices.dtype))
    A.data = np.append(A.data, [100.0, -50.0])
    return A


def _explicit_zeros(A, gen):
    """Every zero of the matrix also stored, as an explicit 0 (the matrix is unchanged)."""
    coo = A.tocoo()
    rows, cols = np.nonzero(A.toarray() == 0)
    B = sp.coo_matrix((np.concatenate((coo.data, np.zeros(rows.shape[0]))),
                       (np.concatenate((coo.row, rows)), np.concatenate((coo.col, cols)))),
                      shape=A.shape)
    return type(A)(B.asformat(A.format))


def _all_zero(A, gen):
    return type(A)(A.shape, dtype=A.dtype)


def _nan(A, gen):
    A.data[_pick(A.data, gen)] = np.nan
    return A


def _inf(A, gen):
    A.data[_pick(A.data, gen)] = -np.inf
    return A


def _compressed():
    """Corruptions of the CSR/CSC arrays that the compiled loops index with."""
    out = []
    for fmt in ("csr", "csc"):
        c = [
            Corruption("index_huge", fmt, "error", _set("indices", lambda A: 10**9)),
            Corruption("index_negative", fmt, "error", _set("indices", lambda A: -1)),
            Corruption("index_at_dim", fmt, "error", _set("indices", _outer_dim)),
            Corruption("index_int64_huge", fmt, "error",
                       _set("indices", lambda A: 2**62, np.int64)),
            Corruption("index_uint64_huge", fmt, "error",
                       _set("indices", lambda A: 2**63 + 5, np.uint64)),
            Corruption("index_int8_negative", fmt, "error",
                       _set("indices", lambda A: -128, np.int8)),
            Corruption("indptr_start", fmt, "error", _indptr_start),
            Corruption("indptr_negative", fmt, "error", _indptr_neg),
            Corruption("indptr_decreasing", fmt, "error", _indptr_decreasing),
            Corruption("indptr_past_end", fmt, "error",
                       _set("indptr", lambda A: A.indptr[-1] + 3)),
            Corruption("indptr_uint64_huge", fmt, "error",
                       _set("indptr", lambda A: 2**64 - 1, np.uint64)),
            Corruption("indptr_short", fmt, "error", _truncate("indptr")),
            Corruption("indptr_long", fmt, "error", _append("indptr", lambda A: A.indptr[-1])),
            Corruption("indices_float", fmt, "error", _astype("indices", np.float64)),
            Corruption("indptr_float", fmt, "error", _astype("indptr", np.float64)),
            Corruption("indices_bool", fmt, "error", _astype("indices", np.bool_)),
            Corruption("indices_2d", fmt, "error", _reshape2d("indices")),
            Corruption("data_2d", fmt, "error", _reshape2d("data")),
            Corruption("data_short", fmt, "error", _truncate("data")),
            Corruption("indices_short", fmt, "error", _truncate("indices")),
            Corruption("indptr_list", fmt, "error", _replace("indptr", list)),
            Corruption("indices_none", fmt, "error", _replace("indices", lambda a: None)),
            Corruption("data_complex", fmt, "error", _astype("data", np.complex128)),
            Corruption("data_object", fmt, "error", _astype("data", object)),
            Corruption("data_str", fmt, "error", _astype("data", str)),
            Corruption("data_nan", fmt, "error", _nan),
            Corruption("data_inf", fmt, "error", _inf),
            # readable inputs that a library may refuse
            Corruption("data_long", fmt, "either", _append("data", lambda A: 7.0)),
            Corruption("indices_long", fmt, "either", _append("indices", lambda A: 0)),
            Corruption("indices_bigendian", fmt, "either", _astype("indices", ">i4")),
            Corruption("indptr_bigendian", fmt, "either", _astype("indptr", ">i8")),
            Corruption("data_float16", fmt, "either", _astype("data", np.float16),
                       ref="float16"),
            Corruption("data_longdouble", fmt, "either", _astype("data", np.longdouble)),
            # well-defined matrices: the result must be right
            Corruption("unsorted", fmt, "valid", _unsorted),
            Corruption("duplicates", fmt, "valid", _duplicates),
            Corruption("stale_sorted_flag", fmt, "valid", _stale_sorted),
            Corruption("arrays_long", fmt, "valid", _arrays_long),
            Corruption("explicit_zeros", fmt, "valid", _explicit_zeros),
            Corruption("all_zero", fmt, "valid", _all_zero, ref="zero"),
            Corruption("index_int8", fmt, "valid", _astype("indices", np.int8)),
            Corruption("indptr_uint64", fmt, "either", _astype("indptr", np.uint64)),
            Corruption("indices_int16_indptr_int8", fmt, "valid",
                       lambda A, g: _astype("indptr", np.int8)(
                           _astype("indices", np.int16)(A, g), g)),
            Corruption("indices_strided", fmt, "valid", _strided("indices")),
            Corruption("data_strided", fmt, "valid", _strided("data")),
            Corruption("read_only", fmt, "valid", _read_only),
        ]
        out += c
    return out


def _coo_set(name, value):
    def f(A, gen):
        arr = getattr(A, name).copy()
        arr[_pick(arr, gen)] = value
        setattr(A, name, arr)
        return A
    return f


def _coo_duplicates(A, gen):
    return type(A)((np.concatenate((0.5 * A.data, 0.5 * A.data[::-1])),
                    (np.concatenate((A.row, A.row[::-1])), np.concatenate((A.col, A.col[::-1])))),
                   shape=A.shape)


def _coo_unsorted(A, gen):
    return type(A)((A.data[::-1].copy(), (A.row[::-1].copy(), A.col[::-1].copy())), shape=A.shape)


def _bsr_block_shape(A, gen):
    """Data blocks of twice the rows: the blocksize (scipy derives it from the
    data) no longer matches indptr, nor divides the shape."""
    A.data = np.concatenate([A.data, A.data], axis=1)
    return A


def _lil_rows(value):
    def f(A, gen):
        A.rows[0] = [value]
        A.data[0] = [1.5]
        return A
    return f


def _lil_mismatch(A, gen):
    """Row 0 lists three columns but holds one value."""
    A.rows[0] = [0, 1, 2]
    A.data[0] = [1.5]
    return A


def _lil_unsorted(A, gen):
    for i in range(A.shape[0]):
        A.rows[i] = A.rows[i][::-1]
        A.data[i] = A.data[i][::-1]
    return A


def _dok_key(key):
    def f(A, gen):
        dict.__setitem__(A, key, 1.5)  # bypasses DOK's own index check
        return A
    return f


def _dia_offset(value):
    def f(A, gen):
        A.offsets = A.offsets.copy()
        A.offsets[0] = value
        return A
    return f


def _dia_data(slicer):
    def f(A, gen):
        A.data = A.data[slicer].copy()
        return A
    return f


def _dia_duplicate_offset(A, gen):
    A.offsets = A.offsets.copy()
    A.offsets[-1] = A.offsets[0]
    return A


def _others():
    """Corruptions of the formats sketchlab converts (COO, BSR, LIL, DOK, DIA)."""
    big = 10**9
    return [
        Corruption("coo_row_huge", "coo", "error", _coo_set("row", big)),
        Corruption("coo_col_negative", "coo", "error", _coo_set("col", -1)),
        Corruption("coo_row_float", "coo", "error",
                   lambda A, g: (setattr(A, "coords", (A.row.astype(np.float64), A.col)), A)[1]),
        Corruption("coo_row_short", "coo", "error", _truncate("row")),
        Corruption("coo_data_nan", "coo", "error", _nan),
        Corruption("coo_duplicates", "coo", "valid", _coo_duplicates),
        Corruption("coo_unsorted", "coo", "valid", _coo_unsorted),
        Corruption("bsr_index_huge", "bsr", "error", _set("indices", lambda A: big)),
        Corruption("bsr_indptr_decreasing", "bsr", "error", _indptr_decreasing),
        Corruption("bsr_data_short", "bsr", "error", _truncate("data")),
        Corruption("bsr_block_shape", "bsr", "error", _bsr_block_shape),
        Corruption("bsr_data_nan", "bsr", "error",
                   lambda A, g: (A.data.__setitem__((0, 0, 0), np.nan), A)[1]),
        Corruption("lil_index_huge", "lil", "error", _lil_rows(big)),
        Corruption("lil_index_negative", "lil", "error", _lil_rows(-big)),
        # the matrix holds no NaN, though scipy's tocsr may leave one in its
        # uninitialized values: an error that says so is as wrong as a result
        Corruption("lil_rows_data_mismatch", "lil", "error", _lil_mismatch,
                   false_claims=("NaN",)),
        Corruption("lil_unsorted", "lil", "valid", _lil_unsorted),
        Corruption("dok_key_huge", "dok", "either", _dok_key((big, 0)), ref="scipy"),
        Corruption("dok_key_negative", "dok", "either", _dok_key((-big, 0)), ref="scipy"),
        Corruption("dia_offset_huge", "dia", "either", _dia_offset(big), ref="scipy"),
        Corruption("dia_offset_negative", "dia", "either", _dia_offset(-big), ref="scipy"),
        Corruption("dia_offset_duplicate", "dia", "either", _dia_duplicate_offset, ref="scipy"),
        Corruption("dia_data_narrow", "dia", "either", _dia_data(np.s_[:, :1]), ref="scipy"),
        Corruption("dia_data_fewer_rows", "dia", "either", _dia_data(np.s_[:1]), ref="scipy"),
        Corruption("dia_data_wide", "dia", "either",
                   lambda A, g: (setattr(A, "data", np.pad(A.data, ((0, 0), (0, 40)))), A)[1],
                   ref="scipy"),
    ]


CORRUPTIONS = {c.fmt + ":" + c.name if c.fmt in ("csr", "csc") else c.name: c
               for c in _compressed() + _others()}


def corrupt_input(corruption, shape, cls, seed=None, base_seed=0):
    """(object, reference dense or None) for a corruption of the base matrix
    of ``shape``; ``seed`` picks a random position (None: the middle one)."""
    c = CORRUPTIONS[corruption]
    D = base_dense(shape, base_seed)
    gen = None if seed is None else np.random.default_rng(seed)
    valid = _fresh(as_format(D, c.fmt, cls))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's SparseEfficiencyWarning, ...
        A = c.fn(_fresh(valid), gen)
    if c.ref == "D":
        ref = D
    elif c.ref == "zero":
        ref = np.zeros(shape)
    elif c.ref == "float16":  # the values the object holds
        ref = D.astype(np.float16).astype(np.float64)
    else:
        ref = "scipy"
    return A, ref


# ---------------------------------------------------------------------------
# Calls: the public API with the matrix in one role
# ---------------------------------------------------------------------------


def _extras():
    """The operators the grid adds to the registered kinds: sampling without
    replacement, a composition and an index selection (not kinds of the
    registry)."""
    import sketchlab as sl

    def composed(s, d, rng):
        return sl.compose(sl.GaussianSketch(s, s + 2, rng=rng), sl.OSNAP(s + 2, d, rng=rng + 1))

    def selection(s, d, rng):
        return sl.IndexSelection(np.arange(s) * 7 % d, d)

    return {
        "uniform_noreplace": lambda s, d, rng: sl.UniformSampler(min(s, d), d, replace=False,
                                                                 rng=rng),
        "composed": composed,
        "selection": selection,
    }


KINDS = _kinds.KINDS + ("uniform_noreplace", "composed", "selection")
"""Every registered kind (tests/_kinds.py reads the registry) and the grid's extras."""


def make_op(kind, s, d, rng):
    """The operator of a name of :data:`KINDS`, of shape (at most) ``(s, d)``."""
    extras = _extras()
    if kind in extras:
        return extras[kind](s, d, rng)
    params = {}
    if kind == "srht":  # at most the padded dimension
        s = min(s, 1 << max(0, (d - 1).bit_length()))
    if kind == "osnap":
        params["nnz_per_col"] = min(2, s)
    if _kinds.REGISTRY[kind].needs_scores:
        params["scores"] = np.linspace(1.0, 2.0, d)
    return make_sketch(kind, s, d, rng=rng, **params)


dense_op = dense_of
"""The operator as a dense matrix, from its definition (tests/reference.py)."""


def abs_op(S):
    """The entrywise bound of the operator's magnitudes that rounding errors
    scale with: |S|, and for a composition |outer| |inner| (the product of
    the factors' magnitudes: G H may cancel to ~0 where G (H X) rounds at
    eps |G| |H| |X|)."""
    import sketchlab as sl

    if isinstance(S, sl.ComposedSketch):
        return abs_op(S.outer) @ abs_op(S.inner)
    return np.abs(dense_op(S))


@dataclasses.dataclass
class Call:
    """``run(X)`` -> list of arrays, with X in a role of ``shape``; ``ref(D)``
    the same for the dense reference D (default: ``run(D)``); ``param``:
    the name an error message must contain."""
    shape: tuple
    param: str
    run: object
    ref: object = None
    dtype_follows: bool = True  # float32 input gives float32 output
    sparse_ok: bool = True  # False: a sparse input may be refused (naming param)
    zero_ok: bool = True  # False: an all-zero input may be refused (naming param)


def _arrays(result):
    """A result as a list of arrays to compare."""
    import sketchlab as sl

    if isinstance(result, (sl.SVDResult, sl.GMRResult)):  # the fields, then the estimate
        estimate = result.error_estimate
        return _arrays(tuple(result)) + ([] if estimate is None else _arrays(estimate))
    if isinstance(result, (tuple, list)):
        out = []
        for r in result:
            out += _arrays(r)
        return out
    if isinstance(result, (sl.SPSDApproximation, sl.CURDecomposition)):
        return [result.toarray()]
    if isinstance(result, sl.ErrorEstimate):
        return [np.array([result.value, result.low, result.high])]
    if sp.issparse(result):
        return [result.toarray()]
    return [np.asarray(result)]


def _svd_product(res):
    U, s, Vt = res
    estimate = res.error_estimate
    return [(U * s) @ Vt, s] + ([] if estimate is None else _arrays(estimate))


def _operator_calls():
    import sketchlab as sl

    calls = {}
    m, n = M, N
    for kind in KINDS:
        def left(X, kind=kind):
            return [make_op(kind, 3, m, 11) @ X]

        def left_ref(D, kind=kind):
            return [dense_op(make_op(kind, 3, m, 11)) @ D]

        def right(X, kind=kind):
            return [X @ make_op(kind, 3, n, 12).T]

        def right_ref(D, kind=kind):
            return [D @ dense_op(make_op(kind, 3, n, 12)).T]

        calls[f"left:{kind}"] = Call((m, n), "A", left, left_ref)
        calls[f"right:{kind}"] = Call((m, n), "A", right, right_ref)

    def block(X):
        """S.apply on rows [2, 2 + m) of a longer input, added onto a
        column slice of a larger array."""
        S = sl.CountSketch(4, m + 3, rng=13)
        big = np.ones((4, n + 2), dtype=_out_dtype(X))
        S.apply(X, axis=0, offset=2, out=big[:, 1:1 + n], accumulate=True)
        return [big]

    def block_ref(D):
        S = sl.CountSketch(4, m + 3, rng=13)
        big = np.ones((4, n + 2))
        big[:, 1:1 + n] += dense_op(S)[:, 2:2 + m] @ D
        return [big]

    calls["apply_block_out"] = Call((m, n), "A", block, block_ref)

    def right_block(X):
        S = sl.GaussianSketch(3, n + 4, rng=14)
        out = np.zeros((m, 3), dtype=_out_dtype(X), order="F")
        return [S.apply(X, axis=1, offset=4, out=out)]

    def right_block_ref(D):
        return [D @ dense_op(sl.GaussianSketch(3, n + 4, rng=14))[:, 4:].T]

    calls["apply_axis1_offset_out"] = Call((m, n), "A", right_block, right_block_ref)

    def many(X):
        S = sl.OSNAP(4, m, nnz_per_col=2, rng=15)
        return S.apply_many([base_dense((m, 2), 9), X])

    def many_ref(D):
        S = dense_op(sl.OSNAP(4, m, nnz_per_col=2, rng=15))
        return [S @ base_dense((m, 2), 9), S @ D]

    calls["apply_many"] = Call((m, n), "arrays[1]", many, many_ref)

    def both(X):
        S1, S2 = sl.CountSketch(3, m + 1, rng=16), sl.SRHT(4, n + 2, rng=17)
        out = np.full((3, 4), 2.0, dtype=_out_dtype(X))
        return [sl.sketch_both(S1, X, S2, offsets=(1, 2), out=out, accumulate=True)]

    def both_ref(D):
        S1 = dense_op(sl.CountSketch(3, m + 1, rng=16))
        S2 = dense_op(sl.SRHT(4, n + 2, rng=17))
        return [2.0 + S1[:, 1:1 + m] @ D @ S2[:, 2:2 + n].T]

    calls["sketch_both_offsets_out"] = Call((m, n), "A", both, both_ref)

    def both_composed(X):
        S1 = sl.compose(sl.GaussianSketch(2, 4, rng=18), sl.CountSketch(4, m, rng=19))
        S2 = sl.UniformSampler(3, n, rng=20)
        return [sl.sketch_both(S1, X, S2)]

    def both_composed_ref(D):
        S1 = sl.compose(sl.GaussianSketch(2, 4, rng=18), sl.CountSketch(4, m, rng=19))
        return [dense_op(S1) @ D @ dense_op(sl.UniformSampler(3, n, rng=20)).T]

    calls["sketch_both_composed"] = Call((m, n), "A", both_composed, both_composed_ref)

    def transpose(X):  # S^T Y: Y dense (s x k); a sparse Y is refused
        return [sl.CountSketch(m, 9, rng=21).T @ X]

    def transpose_ref(D):
        return [dense_op(sl.CountSketch(m, 9, rng=21)).T @ D]

    calls["transpose"] = Call((m, n), "Y", transpose, transpose_ref, dtype_follows=False,
                              sparse_ok=False)

    def linop(X):
        return [sl.OSNAP(3, m, rng=22).aslinearoperator() @ X]

    def linop_ref(D):
        return [dense_op(sl.OSNAP(3, m, rng=22)) @ D]

    calls["aslinearoperator"] = Call((m, n), "A", linop, linop_ref, dtype_follows=False)

    def pickled(X):
        S = pickle.loads(pickle.dumps(sl.UniformSampler(4, m, replace=False, rng=23)))
        return [S @ X]

    def pickled_ref(D):
        return [dense_op(sl.UniformSampler(4, m, replace=False, rng=23)) @ D]

    calls["pickled_operator"] = Call((m, n), "A", pickled, pickled_ref)

    def from_matrix(X):
        S = sl.LeverageScoreSampler.from_matrix(X, 4, rng=24)
        return [S.probabilities, S @ base_dense((m, 2), 9)]

    def from_matrix_ref(D):
        S = sl.LeverageScoreSampler.from_matrix(D, 4, rng=24)
        return [S.probabilities, dense_op(S) @ base_dense((m, 2), 9)]

    calls["leverage_from_matrix"] = Call((m, n), "A", from_matrix, from_matrix_ref,
                                         dtype_follows=False, zero_ok=False)
    return calls


def _out_dtype(X):
    dtype = getattr(X, "dtype", np.float64)
    return np.float32 if dtype == np.float32 else np.float64


def _algorithm_calls():
    import sketchlab as sl

    m, n = M, N
    C = base_dense((m, 2), 31)
    R = base_dense((2, n), 32)
    Xc = base_dense((2, 2), 33)
    U = np.linalg.qr(base_dense((m, 2), 34))[0]
    Vt = np.linalg.qr(base_dense((n, 2), 35))[0].T
    calls = {
        "leverage_scores": Call((m, n), "A", lambda X: [sl.leverage_scores(X)],
                                dtype_follows=False),
        "leverage_scores_k_sketch": Call(
            (m, n), "A",
            lambda X: [sl.leverage_scores(X, axis=1, k=2, method="sketch", rng=0)],
            dtype_follows=False),
        "gmr": Call((m, n), "A", lambda X: [sl.gmr(X, C, R)]),
        "gmr_C": Call((m, 2), "C", lambda X: [sl.gmr(base_dense((m, n)), X, R)]),
        "gmr_R": Call((2, n), "R", lambda X: [sl.gmr(base_dense((m, n)), C, X)]),
        "fast_gmr": Call((m, n), "A", lambda X: [sl.fast_gmr(X, C, R, sketch_size=(5, 4),
                                                             rng=0).X]),
        "fast_gmr_C": Call((m, 2), "C", lambda X: [sl.fast_gmr(base_dense((m, n)), X, R,
                                                               sketch_size=(5, 4), rng=0).X]),
        "fast_gmr_R_gaussian": Call(
            (2, n), "R", lambda X: [sl.fast_gmr(base_dense((m, n)), C, X, sketch_size=(5, 4),
                                                sketch="gaussian", rng=0).X]),
        "fast_gmr_estimate": Call(
            (m, n), "A", lambda X: _arrays(sl.fast_gmr(X, C, R, sketch_size=(5, 4), rng=0,
                                                       estimate_error=True)),
            dtype_follows=False),
        "fast_gmr_tol": Call((m, n), "A", lambda X: [sl.fast_gmr(X, C, R, tol=0.5, rng=0).X]),
        "gmr_residual": Call((m, n), "A", lambda X: [sl.gmr_residual(X, C, Xc, R)],
                             dtype_follows=False),
        "gmr_error_ratio": Call((m, n), "A", lambda X: [sl.gmr_error_ratio(X, C, Xc, R)],
                                dtype_follows=False),
        "lowrank_residual": Call((m, n), "A",
                                 lambda X: [sl.lowrank_residual(X, U, np.array([2.0, 1.0]), Vt)],
                                 dtype_follows=False),
        "fast_sp_svd": Call((m, n), "A",
                            lambda X: _svd_product(sl.fast_sp_svd(X, 2, rng=0))),
        "fast_sp_svd_blocks_estimate": Call(
            (m, n), "A", lambda X: _svd_product(sl.fast_sp_svd(X, 2, block_size=2, rng=0,
                                                               estimate_error=True)),
            dtype_follows=False),
        "practical_sp_svd_rows": Call(
            (m, n), "A", lambda X: _svd_product(sl.practical_sp_svd(X, 2, axis=0, block_size=3,
                                                                    rng=0))),
        "three_sketch_svd_tol": Call(
            (m, n), "A", lambda X: _svd_product(sl.three_sketch_svd(X, 2, tol=0.9, rng=0)),
            dtype_follows=False),
        "fast_sp_svd_stream": Call(
            (m, 3), "block 1",
            lambda X: _svd_product(sl.fast_sp_svd(
                iter([base_dense((m, n))[:, :2], X]), 2, shape=(m, 5), rng=0)),
            lambda D: _svd_product(sl.fast_sp_svd(
                np.hstack([base_dense((m, n))[:, :2], D]), 2, rng=0)),
            dtype_follows=False),
        "cur": Call((m, n), "A", lambda X: [sl.cur(X, 2, rng=0).toarray()]),
        "cur_deim_exact": Call((m, n), "A", lambda X: [sl.cur(X, 2, select="deim",
                                                              core="exact", rng=0).toarray()]),
        "rbf_nystrom": Call((m, n), "X", lambda X: [sl.nystrom(sl.RBFKernel(X, 0.3), 3,
                                                                rng=0).toarray()]),
        "rbf_faster_spsd": Call(
            (m, n), "X", lambda X: [sl.faster_spsd(sl.RBFKernel(X, 0.3), 3, 5,
                                                   landmarks="rpcholesky", rng=0).toarray()]),
        "sketch_state": Call((m, n), "block", _state_update, _state_update),
        "krylov_svd": Call((m, n), "A", lambda X: _svd_product(sl.krylov_svd(X, 2, rng=0)),
                           dtype_follows=False),
        "lstsq": Call((m, n), "A", lambda X: [sl.lstsq(X, base_dense((m, 1), 36)[:, 0], rng=0).x],
                      dtype_follows=False, zero_ok=False),
        "randomized_truncated_svd_fit": Call((m, n), "X|sklearn", _rtsvd_fit,
                                             dtype_follows=False),
        "sketched_kernel_ridge_fit": Call((m, n), "X|sklearn", _krr_fit, dtype_follows=False),
        "sketched_nystroem_fit": Call((m, n), "X|sklearn", _nystroem_fit, dtype_follows=False),
        "sketched_nystroem_transform": Call((m, n), "X|sklearn", _nystroem_transform),
        "single_pass_svd_fit": Call((m, n), "X|sklearn", _sp_fit, dtype_follows=False),
        "single_pass_svd_partial_fit": Call((m, n), "X|sklearn", _sp_partial_fit, dtype_follows=False),
        "single_pass_svd_transform": Call((m, n), "X|sklearn", _sp_transform),
        "dask_sketch": Call((m, n), "A chunk", _dask_call("sketch"), _dask_ref("sketch"),
                            dtype_follows=False),
        "dask_sketch_both": Call((m, n), "A chunk", _dask_call("sketch_both"),
                                 _dask_ref("sketch_both"), dtype_follows=False),
        "dask_sketch_state": Call((m, n), "A chunk", _dask_call("sketch_state"),
                                  _dask_ref("sketch_state"), dtype_follows=False),
        "dask_fast_sp_svd": Call((m, n), "A chunk", _dask_call("fast_sp_svd"),
                                 _dask_ref("fast_sp_svd"), dtype_follows=False),
    }
    return calls


def _state_update(X):
    state = _state((M + 2, N))
    state.update(base_dense((2, N), 40), (0, 0))
    state.update(X, (2, 0))
    return [state["range"], state["co-range"], state["core"], np.array([state.squared_norm])]


def _nystroem_fit(X):
    import sketchlab as sl

    est = sl.SketchedNystroem(gamma=0.3, n_components=3, sketch_size=5, random_state=0).fit(X)
    return [est.transform(base_dense((M, N), 41))]


_FITTED = {}


def _fitted(name):
    """An estimator fitted once per process on valid data (transform does
    not change it)."""
    import sketchlab as sl

    if name not in _FITTED:
        if name == "nystroem":
            est = sl.SketchedNystroem(gamma=0.3, n_components=3, sketch_size=5, random_state=0)
            _FITTED[name] = est.fit(base_dense((M, N), 41))
        else:
            _FITTED[name] = sl.SinglePassSVD(n_components=2, random_state=0).fit(
                base_dense((M, N), 43))
    return _FITTED[name]


def _nystroem_transform(X):
    return [_fitted("nystroem").transform(X)]


def _rtsvd_fit(X):
    import sketchlab as sl

    est = sl.RandomizedTruncatedSVD(n_components=2, random_state=0).fit(X)
    # V S^2 V^T, not V V^T: a rank-deficient X leaves a component with a zero
    # singular value undetermined (any direction of the null space)
    s, V = est.singular_values_, est.components_.T
    return [s, (V * s**2) @ V.T]


def _krr_fit(X):
    import sketchlab as sl

    y = base_dense((X.shape[0], 1), 37)[:, 0]
    est = sl.SketchedKernelRidge(n_components=3, gamma=0.5, random_state=0).fit(X, y)
    return [est.predict(base_dense((2, X.shape[1]), 38))]


def _sp_fit(X):
    import sketchlab as sl

    est = sl.SinglePassSVD(n_components=2, random_state=0).fit(X)
    return [est.singular_values_, est.components_.T @ est.components_]


def _sp_partial_fit(X):
    """The reported crash: partial_fit with a corrupt batch, after a valid one."""
    import sketchlab as sl

    est = sl.SinglePassSVD(n_components=2, random_state=0)
    est.partial_fit(base_dense((3, N), 42))
    est.partial_fit(X)
    return [est.singular_values_, est.components_.T @ est.components_]


def _sp_transform(X):
    return [_fitted("single_pass").transform(X)]


# dask: rows [0, 3) of A in one chunk, rows [3, 7) (the input under test) in another


def _dask_array(top, bottom):
    import dask.array as da

    def load(block_info=None):
        return top if block_info[None]["chunk-location"][0] == 0 else bottom

    meta = bottom[:0] if not sp.issparse(bottom) else sp.csr_matrix((0, 0))
    return da.map_blocks(load, chunks=((3, M - 3), (N,)), dtype=np.float64, meta=meta)


def _dask_call(what):
    def run(X):
        import sketchlab as sl
        import sketchlab.dask as sld

        top = base_dense((3, N), 44)
        A = _dask_array(top, X)
        if what == "sketch":
            return [sld.sketch(sl.OSNAP(4, M, rng=1), A, scheduler="sync")]
        if what == "sketch_both":
            return [sld.sketch_both(sl.CountSketch(4, M, rng=1), A, sl.GaussianSketch(3, N, rng=2),
                                    scheduler="sync")]
        if what == "sketch_state":
            state = sld.sketch_state(A, _state((M, N))._specs, scheduler="sync")
            return [state["range"], state["co-range"], state["core"]]
        return _svd_product(sld.fast_sp_svd(A, 2, rng=0, scheduler="sync"))
    return run


def _dask_ref(what):
    def ref(D):
        import sketchlab as sl

        full = np.vstack([base_dense((3, N), 44), D])
        if what == "sketch":
            return [sl.OSNAP(4, M, rng=1) @ full]
        if what == "sketch_both":
            return [sl.sketch_both(sl.CountSketch(4, M, rng=1), full,
                                   sl.GaussianSketch(3, N, rng=2))]
        if what == "sketch_state":
            state = _state((M, N)).update(full)
            return [state["range"], state["co-range"], state["core"]]
        return _svd_product(sl.fast_sp_svd(full, 2, rng=0))
    return ref


_CALLS = None


def calls():
    global _CALLS
    if _CALLS is None:
        _CALLS = {**_operator_calls(), **_algorithm_calls()}
    return _CALLS


def call_shape(name):
    """Shape of the input of call ``name`` (without building the calls)."""
    if name in ("gmr_C", "fast_gmr_C"):
        return (M, 2)
    if name in ("gmr_R", "fast_gmr_R_gaussian"):
        return (2, N)
    if name == "fast_sp_svd_stream":
        return (M, 3)
    if name == "dask_sketch" or name.startswith("dask_"):
        return (M - 3, N)
    return (M, N)


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    id: str
    expect: str  # "error", "valid" or "either"
    param: str
    run: object  # () -> list of arrays
    ref: object  # () -> list of arrays
    tol: float = 1e-9  # max difference, relative to the reference's largest entry
    false_claims: tuple = ()


def build_case(case_id):
    """The case named ``case_id``:

    - ``corrupt|CALL|CORRUPTION|CLS[|SEED]``: CALL fed the corrupted matrix;
    - ``huge|WHAT``: huge dimensions with few nonzeros;
    - ``size|WHAT|VALUE``: a size or seed argument with a bad (or odd but
      valid) value.
    """
    family, _, rest = case_id.partition("|")
    if family == "corrupt":
        parts = rest.split("|")
        name, corruption, cls = parts[:3]
        seed = int(parts[3]) if len(parts) > 3 else None
        call = calls()[name]
        shape = call_shape(name)
        A, ref = corrupt_input(corruption, shape, cls, seed)
        expect = CORRUPTIONS[corruption].expect
        if expect == "valid" and not call.sparse_ok:
            expect = "either"
        if expect == "valid" and not call.zero_ok and CORRUPTIONS[corruption].ref == "zero":
            expect = "either"  # e.g. no leverage scores to sample by

        def reference(A=A, ref=ref, call=call):
            D = A.toarray() if isinstance(ref, str) else ref
            D = np.asarray(D, dtype=np.float64)
            return (call.ref or call.run)(D)

        tol = 1e-9 if name.startswith(("left:", "right:", "apply", "sketch_both", "transpose",
                                       "pickled", "dask_sketch")) else 1e-6
        return Case(case_id, expect, call.param, lambda: call.run(A), reference, tol,
                    CORRUPTIONS[corruption].false_claims)
    if family == "huge":
        return _huge_case(case_id, rest)
    if family == "size":
        return _size_case(case_id, rest)
    if case_id == "crash|segfault":  # checks the runner: a child that dies
        import ctypes
        return Case(case_id, "error", "-", lambda: ctypes.string_at(0), None)
    raise KeyError(case_id)


def corrupt_ids(calls_, corruptions, classes=("m",), seeds=(None,)):
    out = []
    for call in calls_:
        for c in corruptions:
            for cls in classes:
                for seed in seeds:
                    out.append(f"corrupt|{call}|{c}|{cls}" + ("" if seed is None else f"|{seed}"))
    return out


# -- huge dimensions ----------------------------------------------------------

HUGE = 2**31 - 1


def _tall(d, n=2, fmt="csc"):
    """A d x n sparse matrix with three nonzeros (rows 0, 5, d - 1)."""
    rows = np.array([0, 5, d - 1], dtype=np.int64)
    cols = np.array([0, 1, 1], dtype=np.int64)
    A = sp.csc_matrix((np.array([1.0, 2.0, 3.0]), (rows, cols)), shape=(d, n))
    return A if fmt == "csc" else A.tocsr()


def hashing_columns(s, p, seed, js):
    """Columns ``js`` of OSNAP(s, d, p, seed) (CountSketch for p = 1) as an
    (s, len(js)) dense array, from the definition (as tests/reference.py's
    osnap_dense, restricted to the given columns)."""
    from sketchlab import _hash

    key = _hash.derive_key(seed, _hash.STREAM_HASHING)
    out = np.zeros((s, len(js)))
    for c, j in enumerate(js):
        for b in range(p):
            h = _hash.hash64_np(key, np.array([j * p + b], dtype=np.uint64))
            lo, hi = (b * s) // p, ((b + 1) * s) // p
            row = lo + int(_hash.bucket_np(h, hi - lo)[0])
            out[row, c] = _hash.sign_np(h)[0] / np.sqrt(p)
    return out


def _huge_case(case_id, what):
    """Huge input dimensions: an O(nnz) kind must sketch a matrix of 2**31 - 1
    rows with three nonzeros (or refuse it with a ValueError), within the
    child's 4 GiB."""
    import sketchlab as sl

    d = HUGE
    js = [0, 5, d - 1]
    vals = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 3.0]])  # rows 0, 5, d - 1 of the input
    if what == "countsketch_left":
        S = sl.CountSketch(5, d, rng=0)
        return Case(case_id, "either", "A", lambda: [S @ _tall(d)],
                    lambda: [hashing_columns(5, 1, S.seed, js) @ vals])
    if what == "osnap_right":
        S = sl.OSNAP(8, d, nnz_per_col=2, rng=0)
        return Case(case_id, "either", "A", lambda: [_tall(d, fmt="csc").T @ S.T],
                    lambda: [vals.T @ hashing_columns(8, 2, S.seed, js).T])
    if what == "countsketch_sketch_both":
        S = sl.CountSketch(5, d, rng=0)
        T = sl.CountSketch(2, 2, rng=1)
        return Case(case_id, "either", "A", lambda: [sl.sketch_both(S, _tall(d), T)],
                    lambda: [hashing_columns(5, 1, S.seed, js) @ vals
                             @ hashing_columns(2, 1, T.seed, [0, 1]).T])
    if what == "uniform_left":
        S = sl.UniformSampler(5, d, rng=0)

        def ref():
            D = np.zeros((5, 2))
            for t, i in enumerate(S.indices):
                if i in js:
                    D[t] = S.weights[t] * vals[js.index(i)]
            return [D]
        return Case(case_id, "either", "A", lambda: [S @ _tall(d)], ref)
    if what == "countsketch_block_offset":
        # a 3-row block at the very end of a huge input
        S = sl.CountSketch(4, d, rng=0)
        X = np.arange(6.0).reshape(3, 2)
        return Case(case_id, "either", "A", lambda: [S.apply(X, axis=0, offset=d - 3)],
                    lambda: [hashing_columns(4, 1, S.seed, [d - 3, d - 2, d - 1]) @ X])
    if what == "toarray":
        return Case(case_id, "error", "toarray", lambda: [sl.CountSketch(5, d, rng=0).toarray()],
                    None)
    if what == "input_dim_2_31":
        return Case(case_id, "error", "input_dim", lambda: [sl.CountSketch(5, 2**31, rng=0)],
                    None)
    if what == "sketch_size_2_30_plus":
        return Case(case_id, "error", "sketch_size",
                    lambda: [sl.OSNAP(2**30 + 1, 10, rng=0)], None)
    if what == "shape_2_40_csc":
        # 2**40 rows, 3 nonzeros: the sketch must refuse the dimension
        A = sp.csc_matrix((np.ones(2), np.array([0, 2**40 - 1]), np.array([0, 1, 2])),
                          shape=(2**40, 2))
        return Case(case_id, "error", "A",
                    lambda: [sl.CountSketch(3, HUGE, rng=0) @ A], None)
    if what == "fast_sp_svd_2_40":
        A = sp.csc_matrix((np.ones(2), np.array([0, 2**40 - 1]), np.array([0, 1, 2])),
                          shape=(2**40, 2))
        return Case(case_id, "error", "A", lambda: [sl.fast_sp_svd(A, 1, rng=0)], None)
    raise KeyError(case_id)


HUGE_CASES = ("countsketch_left", "osnap_right", "countsketch_sketch_both", "uniform_left",
              "countsketch_block_offset", "toarray", "input_dim_2_31", "sketch_size_2_30_plus",
              "shape_2_40_csc", "fast_sp_svd_2_40")


# -- sizes and seeds ----------------------------------------------------------

BAD_SIZES = {
    "zero": 0, "negative": -1, "too_large": "too_large", "2**31": 2**31, "2**63": 2**63,
    "true": True, "float_2.0": 2.0, "float_2.5": 2.5, "np_float64": np.float64(2.0),
    "np_0d_float": np.array(2.0), "np_1d": np.array([2]), "str": "2", "nan": float("nan"),
}
ODD_VALID_SIZES = {"np_int64": np.int64(2), "np_0d_int": np.array(2), "np_uint8": np.uint8(2)}


def _sized_calls():
    """name -> (param named in errors, the bound that "too_large" exceeds by
    one (None: 2**31), f(value) -> list of arrays[, {value name: the valid
    value it is documented to act as}])."""
    import sketchlab as sl

    m, n = 9, 6
    A = base_dense((m, n), 50)
    C, R = base_dense((m, 2), 51), base_dense((2, n), 52)
    K = np.exp(-0.3 * ((A[:, None, :] - A[None, :, :]) ** 2).sum(-1))
    RBF = lambda: sl.RBFKernel(A, 0.3)  # noqa: E731 - a fresh oracle per call
    return {
        "CountSketch.sketch_size": ("sketch_size", None,
                                    lambda v: [sl.CountSketch(v, m, rng=0) @ A]),
        "OSNAP.nnz_per_col": ("nnz_per_col", 5,
                              lambda v: [sl.OSNAP(5, m, nnz_per_col=v, rng=0) @ A]),
        "GaussianSketch.input_dim": ("input_dim", None,
                                     lambda v: [sl.GaussianSketch(3, v, rng=0).toarray()]),
        "SRHT.sketch_size": ("sketch_size", 16, lambda v: [sl.SRHT(v, m, rng=0) @ A]),
        "UniformSampler.noreplace": ("sketch_size", m,
                                     lambda v: [sl.UniformSampler(v, m, replace=False, rng=0) @ A]),
        "apply.offset": ("offset", m, lambda v: [sl.CountSketch(3, m + 3, rng=0).apply(
            A, offset=v)], {"zero": 0}),
        "leverage_scores.k": ("k", n, lambda v: [sl.leverage_scores(A, k=v)]),
        "fast_gmr.sketch_size": ("sketch_size", None,
                                 lambda v: [sl.fast_gmr(A, C, R, sketch_size=v, rng=0).X]),
        "fast_gmr.n_probes": ("n_probes", None, lambda v: _arrays(sl.fast_gmr(
            A, C, R, sketch_size=5, rng=0, estimate_error=True, n_probes=v))),
        "fast_sp_svd.k": ("k", n, lambda v: _svd_product(sl.fast_sp_svd(A, v, rng=0))),
        "fast_sp_svd.c": ("c", n, lambda v: _svd_product(sl.fast_sp_svd(A, 1, c=v, rng=0))),
        "fast_sp_svd.s_r": ("s_r", n, lambda v: _svd_product(sl.fast_sp_svd(
            A, 1, c=2, r=2, s_r=v, rng=0))),
        "fast_sp_svd.block_size": ("block_size", None, lambda v: _svd_product(
            sl.fast_sp_svd(A, 2, block_size=v, rng=0)),
            {"too_large": None, "2**31": None, "2**63": None}),  # one block: all of A
        "fast_sp_svd.rank": ("rank", 4, lambda v: _svd_product(sl.fast_sp_svd(A, 2, rank=v,
                                                                              rng=0))),
        "practical_sp_svd.r": ("r", m, lambda v: _svd_product(sl.practical_sp_svd(
            A, 1, c=2, r=v, rng=0))),
        "three_sketch_svd.s_c": ("s_c", m, lambda v: _svd_product(sl.three_sketch_svd(
            A, 1, c=2, s_c=v, rng=0))),
        "cur.c": ("c", n, lambda v: [sl.cur(A, v, rng=0).toarray()]),
        "cur.r": ("r", m, lambda v: [sl.cur(A, 2, r=v, rng=0).toarray()]),
        "nystrom.c": ("c", m, lambda v: [sl.nystrom(RBF(), v, rng=0).toarray()]),
        "fast_spsd.s": ("s", m, lambda v: [sl.fast_spsd(RBF(), 2, v, rng=0).toarray()]),
        "faster_spsd.c_dense_K": ("c", m, lambda v: [sl.faster_spsd(K, v, 6, rng=0).toarray()]),
        "optimal_spsd.c": ("c", m, lambda v: [sl.optimal_spsd(RBF(), v, landmarks="ridge-leverage",
                                                              rng=0).toarray()]),
        "eta.k": ("k", m, lambda v: [np.array(sl.eta(K, v, rng=0))]),
        "SketchedNystroem.n_components": ("n_components", None, lambda v: [
            sl.SketchedNystroem(n_components=v, random_state=0).fit_transform(A)],
            {"too_large": m, "2**31": m, "2**63": m}),  # clipped to n_samples, with a warning
        "SinglePassSVD.n_components": ("n_components", n, lambda v: [
            sl.SinglePassSVD(n_components=v, random_state=0).fit(A).singular_values_]),
        "dask.fast_sp_svd.k": ("k", n, lambda v: _svd_product(_dask_svd(A, v))),
    }


def _dask_svd(A, k):
    import dask.array as da
    import sketchlab.dask as sld

    return sld.fast_sp_svd(da.from_array(A, chunks=(4, 6)), k, rng=0, scheduler="sync")


BAD_SEEDS = {
    "negative": -1, "2**64": 2**64, "float": 1.5, "str": "0", "true": True, "list": [1, 2],
    "np_neg": np.int64(-1), "np_0d_float": np.array(1.0), "object": object(),
}
ODD_VALID_SEEDS = {"np_uint64_max": np.uint64(2**64 - 1), "np_0d_int": np.array(3),
                   "generator": "generator", "random_state": "random_state"}
# numpy's own default_rng takes these; refusing them (naming the parameter) is fine too
EITHER_SEEDS = ("np_0d_int",)


def _seeded_calls():
    import sketchlab as sl

    m, n = 9, 6
    A = base_dense((m, n), 60)
    C, R = base_dense((m, 2), 61), base_dense((2, n), 62)
    return {
        "CountSketch": ("rng", lambda r: [sl.CountSketch(3, m, rng=r) @ A]),
        "UniformSampler.noreplace": ("rng", lambda r: [sl.UniformSampler(3, m, replace=False,
                                                                         rng=r) @ A]),
        "fast_gmr": ("rng", lambda r: [sl.fast_gmr(A, C, R, sketch_size=5, rng=r).X]),
        "fast_sp_svd": ("rng", lambda r: _svd_product(sl.fast_sp_svd(A, 2, rng=r))),
        "faster_spsd": ("rng", lambda r: [sl.faster_spsd(sl.RBFKernel(A, 0.3), 2, 5,
                                                         rng=r).toarray()]),
        "cur": ("rng", lambda r: [sl.cur(A, 2, rng=r).toarray()]),
        "leverage_scores_sketch": ("rng", lambda r: [sl.leverage_scores(A, k=2, method="sketch",
                                                                        rng=r)]),
        "SinglePassSVD": ("random_state", lambda r: [sl.SinglePassSVD(
            n_components=2, random_state=r).fit(A).singular_values_]),
        "SketchedNystroem": ("random_state", lambda r: [sl.SketchedNystroem(
            n_components=3, random_state=r).fit_transform(A)]),
    }


def _seed_value(name):
    if name == "generator":
        return np.random.default_rng(5)
    if name == "random_state":
        return np.random.RandomState(5)
    return {**BAD_SEEDS, **ODD_VALID_SEEDS}[name]


def _size_case(case_id, rest):
    what, value_name = rest.split("|")
    if what.startswith("rng:"):
        param, fn = _seeded_calls()[what[4:]]
        value = _seed_value(value_name)
        if value_name in BAD_SEEDS:
            return Case(case_id, "error", param, lambda: fn(value), None)
        if value_name in ("generator", "random_state"):
            # a generator is advanced: the reference is a second one of the same seed
            return Case(case_id, "valid", param, lambda: fn(value),
                        lambda: fn(_seed_value(value_name)))
        expect = "either" if value_name in EITHER_SEEDS else "valid"
        return Case(case_id, expect, param, lambda: fn(value), lambda: fn(int(value)))
    param, bound, fn, *valid = _sized_calls()[what]
    valid = valid[0] if valid else {}
    if value_name in ODD_VALID_SIZES:
        value = ODD_VALID_SIZES[value_name]
        return Case(case_id, "valid", param, lambda: fn(value), lambda: fn(int(value)))
    value = BAD_SIZES[value_name]
    if value == "too_large":
        value = (2**31 if bound is None else bound) + 1
    if value_name in valid:
        return Case(case_id, "valid", param, lambda: fn(value),
                    lambda: fn(valid[value_name]))
    return Case(case_id, "error", param, lambda: fn(value), None)


def size_ids(whats=None, values=None):
    import_free = list(_SIZED_NAMES) if whats is None else whats
    vals = list(BAD_SIZES) + list(ODD_VALID_SIZES) if values is None else values
    return [f"size|{w}|{v}" for w in import_free for v in vals]


def seed_ids(whats=None, values=None):
    names = list(_SEEDED_NAMES) if whats is None else whats
    vals = list(BAD_SEEDS) + list(ODD_VALID_SEEDS) if values is None else values
    return [f"size|rng:{w}|{v}" for w in names for v in vals]


_SIZED_NAMES = (
    "CountSketch.sketch_size", "OSNAP.nnz_per_col", "GaussianSketch.input_dim",
    "SRHT.sketch_size", "UniformSampler.noreplace", "apply.offset", "leverage_scores.k",
    "fast_gmr.sketch_size", "fast_gmr.n_probes", "fast_sp_svd.k", "fast_sp_svd.c",
    "fast_sp_svd.s_r", "fast_sp_svd.block_size", "fast_sp_svd.rank", "practical_sp_svd.r",
    "three_sketch_svd.s_c", "cur.c", "cur.r", "nystrom.c", "fast_spsd.s",
    "faster_spsd.c_dense_K", "optimal_spsd.c", "eta.k", "SketchedNystroem.n_components",
    "SinglePassSVD.n_components", "dask.fast_sp_svd.k",
)
_SEEDED_NAMES = ("CountSketch", "UniformSampler.noreplace", "fast_gmr", "fast_sp_svd",
                 "faster_spsd", "cur", "leverage_scores_sketch", "SinglePassSVD",
                 "SketchedNystroem")


# ---------------------------------------------------------------------------
# Judging one outcome
# ---------------------------------------------------------------------------


# scikit-learn's input validation (validate_data) words its messages its own
# way; an estimator's X is its only data argument, so these are clear enough
SKLEARN_MESSAGES = ("Complex data not supported", "Expected 2D array", "could not convert",
                    "dtype='numeric' is not compatible")


def names(message, param):
    """True when ``message`` names ``param`` as a word (``A`` in "A.indptr
    must ...", not in "Array").  ``"X|sklearn"``: X of an estimator, whose
    messages may also be scikit-learn's own (SKLEARN_MESSAGES, "... required
    by SinglePassSVD.")."""
    param, _, sklearn = param.partition("|")
    if sklearn and (message.startswith(SKLEARN_MESSAGES)
                    or re.search(r"required by (SinglePassSVD|SketchedNystroem)\.", message)):
        return True
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(param)}(?![A-Za-z0-9_])", message) is not None


def execute(case):
    """Run ``case`` here; returns the JSON-able outcome."""
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = _arrays(case.run())
    except Exception as exc:  # judged by the parent: which type, which words
        return {"id": case.id, "outcome": "error", "type": type(exc).__name__,
                "message": str(exc)[:400], "seconds": time.perf_counter() - t0}
    if case.ref is None:
        return {"id": case.id, "outcome": "returned", "seconds": time.perf_counter() - t0}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = _arrays(case.ref())
    except Exception as exc:
        return {"id": case.id, "outcome": "reference_failed", "type": type(exc).__name__,
                "message": str(exc)[:400]}
    diff, why = compare(got, want)
    return {"id": case.id, "outcome": "ok" if diff <= case.tol else "wrong", "diff": diff,
            "why": why, "seconds": time.perf_counter() - t0}


def judge(case, outcome):
    """None when ``outcome`` is what ``case`` must do, else what is wrong."""
    expect, param = case.expect, case.param
    kind = outcome.get("outcome")
    if kind == "crash":
        return f"the process died: {outcome.get('detail')}"
    if kind == "setup_failed":
        return f"the case could not be built: {outcome['type']}: {outcome['message']}"
    if kind == "error":
        if expect == "valid":
            return f"raised {outcome['type']}: {outcome['message']} (the input is valid)"
        if outcome["type"] not in ("ValueError", "TypeError"):
            return f"raised {outcome['type']} (want ValueError/TypeError): {outcome['message']}"
        if not names(outcome["message"], param):
            return f"{outcome['type']} does not name {param!r}: {outcome['message']}"
        for claim in case.false_claims:
            if claim in outcome["message"]:
                return f"the error claims {claim!r}, false of this input: {outcome['message']}"
        return None
    if kind == "returned":
        return "returned instead of raising" if expect == "error" else None
    if kind == "reference_failed":
        return f"the reference failed: {outcome['type']}: {outcome['message']}"
    if expect == "error":
        return f"returned ({kind}, diff {outcome.get('diff')}) instead of raising"
    if kind == "wrong":
        return f"silently wrong: max relative difference {outcome['diff']:.3g} {outcome['why']}"
    return None


# ---------------------------------------------------------------------------
# The child process
# ---------------------------------------------------------------------------


def child_main():
    """Read case ids (JSON list) from stdin, print one JSON outcome per line."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))
    ids = json.loads(sys.stdin.read())
    for case_id in ids:
        print(json.dumps({"id": case_id, "outcome": "started"}), flush=True)
        try:
            case = build_case(case_id)
            outcome = execute(case)
            outcome["expect"] = case.expect
            outcome["param"] = case.param
        except Exception as exc:
            outcome = {"id": case_id, "outcome": "setup_failed", "type": type(exc).__name__,
                       "message": str(exc)[:400]}
        print(json.dumps(outcome), flush=True)


def run_cases(ids, timeout=600, workers=1):
    """Outcome of every case id, each run in a child process (one child for
    all, a new one after a case that kills its child or times out).

    ``workers > 1`` splits the ids into that many interleaved shares, each
    run by its own sequence of children at the same time (the cases are
    independent; the long grid uses the machine's cores this way)."""
    ids = list(ids)
    workers = max(1, min(int(workers), len(ids)))
    if workers > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(workers) as pool:
            parts = pool.map(lambda k: _run_cases_serial(ids[k::workers], timeout),
                             range(workers))
            results = {}
            for part in parts:
                results.update(part)
        return results
    return _run_cases_serial(ids, timeout)


def _run_cases_serial(ids, timeout):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("PYTHONFAULTHANDLER", "1")
    results = {}
    todo = list(ids)
    deadline = time.monotonic() + timeout
    while todo:
        left = max(5.0, deadline - time.monotonic())
        proc = subprocess.Popen(
            [sys.executable, "-c", "import tests.fuzz_cases as f; f.child_main()"],
            cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        try:
            out, err = proc.communicate(json.dumps(todo), timeout=left)
            timed_out = False
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            timed_out = True
        started = None
        for line in out.splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if rec.get("outcome") == "started":
                started = rec["id"]
            else:
                results[rec["id"]] = rec
                started = None
        done = [i for i in todo if i in results]
        if started is not None:  # the child died (or hung) inside this case
            how = "timed out" if timed_out else f"return code {proc.returncode}"
            results[started] = {"id": started, "outcome": "crash",
                                "detail": f"{how}; stderr: {err[-1500:]}"}
        elif len(done) < len(todo):  # died before starting a case: report and stop
            for i in todo:
                results.setdefault(i, {"id": i, "outcome": "crash",
                                       "detail": f"child failed: rc {proc.returncode}: "
                                                 f"{err[-1500:]}"})
        todo = [i for i in todo if i not in results]
    return results
