"""A software prefetch for compiled kernels: ``prefetch(array, index)``.

It asks the CPU to start loading the cache line that holds
``array[index]`` and returns at once; it never faults and never changes a
result.  A matching loop over an automaton much larger than a core's cache
waits on one cache miss after another, each depending on the state the
previous one produced.  Prefetching the transitions that a position *a few
characters ahead* will probably need (see :func:`segkit.engine.kernels.
_segment_range`) overlaps those misses with the work in between.

Numba has no prefetch of its own, so this emits LLVM's ``llvm.prefetch``
intrinsic (read, highest locality, data cache).
"""

from __future__ import annotations

from ..runtime.jit import intrinsic

#: ``llvm.prefetch`` arguments: a read, kept in all cache levels, of data.
_READ, _KEEP_IN_ALL_LEVELS, _DATA = 0, 3, 1


@intrinsic
def prefetch(typingctx, array, index):
    """Prefetch the cache line of ``array[index]``: an element of a 1-d
    array, or the start of row ``index`` of a 2-d C-contiguous one.  The
    index may be anything, even read from an unchecked file: a prefetch of
    an address out of bounds does nothing."""
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils

    if not (isinstance(array, types.Array) and array.ndim in (1, 2) and isinstance(index, types.Integer)):
        return None
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        arrayty, indexty = signature.args
        ary = context.make_array(arrayty)(context, builder, args[0])
        offset = context.cast(builder, args[1], indexty, types.intp)
        if arrayty.ndim == 2:
            offset = builder.mul(offset, builder.extract_value(ary.shape, 1))
        address = builder.gep(ary.data, [offset])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
        flags = [ir.Constant(i32, v) for v in (_READ, _KEEP_IN_ALL_LEVELS, _DATA)]
        builder.call(fn, [builder.bitcast(address, i8p), *flags])
        return context.get_dummy_value()

    return sig, codegen
