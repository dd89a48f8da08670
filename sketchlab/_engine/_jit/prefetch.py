"""Software prefetch for the loops that gather rows of A in an order of their
own (a left table's CSR: the rows that one output row needs).

Those rows lie anywhere in A, so every row costs a few cache misses that the
hardware prefetcher cannot foresee: such a loop runs several times slower than
the same loop over a copy of A whose rows are stored in the gathered order.
Asking for the row ``_AHEAD`` steps on (and for its index pointer twice as far
on) while the current one is scattered recovers most of that (compare.py's
sketch_both rows at s = 1000 measure it).  A prefetch is only a hint: it never faults, changes no value, and
the loops give bit-for-bit the same results with or without it.
"""

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

# rows of the gathered sequence fetched ahead of the one being read (their
# index pointers twice as far); 2-8 measured alike on debian-tfidf
_AHEAD = 4
_LINE = 8  # 8-byte entries per 64-byte cache line (4-byte arrays get two hints per line)


@intrinsic
def prefetch(typingctx, arr, i):
    """Hint the CPU to bring ``arr[i]`` of a 1-D array (any layout) into
    cache (LLVM's ``llvm.prefetch``, read, high locality); the caller keeps
    ``i`` inside ``arr``."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(i, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        array = context.make_array(sig.args[0])(context, builder, args[0])
        index = context.cast(builder, args[1], sig.args[1], types.intp)
        # numba's own address arithmetic (strides included), no bounds check
        item = cgutils.get_item_pointer(context, builder, sig.args[0], array, [index])
        address = builder.bitcast(item, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        hint = builder.module.declare_intrinsic(
            "llvm.prefetch",
            fnty=ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32]),
        )
        # (address, read, locality 3 = keep in all levels, data cache)
        builder.call(hint, [address, ir.Constant(i32, 0), ir.Constant(i32, 3),
                            ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(arr, i), codegen


@njit(inline="always")
def prefetch_csr_row(s_idx, k, end, a_ptr, a_idx, a_val):
    """Before reading row ``s_idx[k]`` of the CSR arrays of A: prefetch the
    stored entries of row ``s_idx[k + _AHEAD]`` and the index pointer of row
    ``s_idx[k + 2 _AHEAD]`` (positions past ``end`` are skipped)."""
    if k + 2 * _AHEAD < end:
        prefetch(a_ptr, s_idx[k + 2 * _AHEAD])
    if k + _AHEAD < end:
        i = s_idx[k + _AHEAD]
        for q in range(a_ptr[i], a_ptr[i + 1], _LINE):
            prefetch(a_idx, q)
            prefetch(a_val, q)


@njit(inline="always")
def prefetch_dense_row(s_idx, k, end, a):
    """Before reading row ``s_idx[k]`` of a C-ordered A: prefetch row
    ``s_idx[k + _AHEAD]``."""
    if k + _AHEAD < end:
        row = a[s_idx[k + _AHEAD]]
        for j in range(0, row.shape[0], _LINE):
            prefetch(row, j)
