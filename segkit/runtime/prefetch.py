"""``prefetch(array, index)`` in a kernel: ask the CPU to bring an element's
cache line in, without waiting for it.

Idea: a loop whose iterations each start with a load from a random place
(a token's row found through another token) waits for memory once per
iteration; the iterations are independent, but a mispredicted branch in
one throws away the loads the processor had started for the next.  A
prefetch issued a few iterations ahead, at the top of the loop (before
any branch of the iteration), overlaps those waits.

Invariant: a prefetch never faults and changes no value, whatever address
it is given (LLVM's ``llvm.prefetch``), so it may be issued on an index
read from an unchecked file: no bounds check, no effect on results.

Cost: one instruction; none where the line is cached already.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, arr, index):
    """Prefetch ``arr[index]`` (a 1-d or 2-d C-contiguous array: for 2-d,
    the row ``index``) for reading, into all cache levels."""
    if not (isinstance(arr, types.Array) and arr.ndim in (1, 2) and isinstance(index, types.Integer)):
        return None
    sig = types.void(arr, index)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        i64 = ir.IntType(64)
        idx = context.cast(builder, args[1], signature.args[1], types.int64)
        # element offset of the row / element: index * (elements per row)
        per_row = ir.Constant(i64, 1)
        if aryty.ndim == 2:
            per_row = builder.extract_value(ary.shape, 1)
        data = builder.bitcast(ary.data, ir.IntType(8).as_pointer())
        itemsize = ir.Constant(i64, context.get_abi_sizeof(context.get_data_type(aryty.dtype)))
        offset = builder.mul(builder.mul(idx, per_row), itemsize)
        ptr = builder.gep(data, [offset])
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer(), i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        # read (0), high locality (3), data cache (1)
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen
