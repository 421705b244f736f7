"""Python lists of existing objects, built by one compiled pass.

A batch result is one list per text of objects that mostly exist already:
a segmenter keeps one string per word it has returned.  Built in Python,
that takes a gather into an object array, ``tolist()`` and a slice per
text, each of which walks every item and counts its reference (pku+msr:
210,000 words, 8-9 ms).  :func:`lists_of` builds the same lists in one
pass of compiled code that calls CPython's C API directly (``PyList_New``,
``Py_IncRef``, ``PyList_SetItem``; 3 ms for pku+msr).

Objects are given by address (``id(obj)`` in CPython).  The caller must
keep every object of ``table`` and ``extra`` alive during the call (each
list then holds its own reference) and must hold the GIL: these functions
are compiled without ``nogil``.  Every index is checked against its table,
so a wrong index raises instead of reading a stray address.
"""

from __future__ import annotations

import threading

import numpy as np

from . import jit
from .jit import intrinsic, kernel

# The intrinsics' typers and code generators run when a kernel compiles:
# Numba and llvmlite are imported there, not when this module is.


def _obj():
    """LLVM's ``i8*``, the type of a ``PyObject *``."""
    from llvmlite import ir

    return ir.IntType(8).as_pointer()


def _api(builder, name: str, result, arguments):
    """Declare the C API function ``name`` in the module being built."""
    from llvmlite import ir
    from numba.core import cgutils

    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(result, arguments), name)


def _maker(name: str):
    """An intrinsic ``make(n)`` calling the C API function ``name`` that
    takes a ``Py_ssize_t`` and returns a new object (``PyList_New``,
    ``PyTuple_New``, ``PyLong_FromSsize_t``): its address, 0 when it failed
    (with an exception set)."""

    @intrinsic
    def make(typingctx, n):
        from numba import types

        if not isinstance(n, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            ssize = context.get_value_type(types.intp)
            fn = _api(builder, name, _obj(), [ssize])
            value = context.cast(builder, args[0], signature.args[0], types.intp)
            return builder.ptrtoint(builder.call(fn, [value]), ssize)

        return types.intp(n), codegen

    return make


_new_list = _maker("PyList_New")
_new_tuple = _maker("PyTuple_New")
_new_int = _maker("PyLong_FromSsize_t")


def _setter(name: str):
    """An intrinsic ``set(container, index, item)`` calling ``name``
    (``PyList_SetItem``/``PyTuple_SetItem``: it takes over the reference to
    ``item``); returns its int result (0: done)."""

    @intrinsic
    def setter(typingctx, container, index, item):
        from llvmlite import ir
        from numba import types

        def codegen(context, builder, signature, args):
            ssize = context.get_value_type(types.intp)
            obj = _obj()
            fn = _api(builder, name, ir.IntType(32), [obj, ssize, obj])
            c, i, x = (context.cast(builder, a, t, types.intp) for a, t in zip(args, signature.args))
            return builder.call(fn, [builder.inttoptr(c, obj), i, builder.inttoptr(x, obj)])

        return types.int32(types.intp, types.intp, types.intp), codegen

    return setter


_set_list_item = _setter("PyList_SetItem")
_set_tuple_item = _setter("PyTuple_SetItem")


def _on_object(name: str):
    """An intrinsic ``f(address)`` calling the void C API function ``name``
    on an object (``Py_IncRef``/``Py_DecRef``)."""

    @intrinsic
    def call(typingctx, address):
        from llvmlite import ir
        from numba import types

        def codegen(context, builder, signature, args):
            fn = _api(builder, name, ir.VoidType(), [_obj()])
            a = context.cast(builder, args[0], signature.args[0], types.intp)
            builder.call(fn, [builder.inttoptr(a, _obj())])
            return context.get_dummy_value()

        return types.void(types.intp), codegen

    return call


_incref = _on_object("Py_IncRef")
_decref = _on_object("Py_DecRef")


@intrinsic
def _clear_error(typingctx):
    """``PyErr_Clear()``: drop the exception a failed C API call set (the
    caller raises its own)."""
    from llvmlite import ir
    from numba import types

    def codegen(context, builder, signature, args):
        builder.call(_api(builder, "PyErr_Clear", ir.VoidType(), []), [])
        return context.get_dummy_value()

    return types.void(), codegen


#: Numba's type of a new reference to a Python object, made by compiled
#: code with the C API and returned to its Python caller as that object (see
#: :func:`as_new_ref`); ``new_ref`` is its instance.  Both are made when
#: Numba loads (a subclass of ``numba.types.Opaque``, which this module
#: cannot import at import time), as module globals that pickle by name.
NewRefType = new_ref = None


@jit.on_load
def _make_new_ref_type() -> None:
    global NewRefType, new_ref
    from numba.core import types
    from numba.extending import box, models, register_model

    def __init__(self) -> None:
        types.Opaque.__init__(self, name="NewRef")

    NewRefType = type("NewRefType", (types.Opaque,), {"__init__": __init__, "__module__": __name__,
                                                       "__qualname__": "NewRefType", "__doc__": "See new_ref."})
    new_ref = NewRefType()
    register_model(NewRefType)(models.OpaqueModel)

    @box(NewRefType)
    def _box_new_ref(typ, val, c):
        # The compiled function owns a reference to the object: handed over
        # as the call's result (NULL, with an exception set, raises it).
        return val


@intrinsic
def as_new_ref(typingctx, address):
    """``address`` (an owned reference from ``PyList_New`` and the like, or
    0 with a Python exception set) as the compiled function's result: its
    caller receives the object itself (or the exception), with no holder
    list to fill and read back."""
    from numba import types

    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[0], signature.args[0], types.intp)
        return builder.inttoptr(value, _obj())

    return new_ref(address), codegen


#: What :func:`_fill` puts in the lists: objects, ``(object, start, end)``
#: tuples, or ints.
_OBJECTS, _TRIPLES, _INTS = 0, 1, 2

#: Codes the compiled builders return instead of an address.
_OUT_OF_MEMORY = -1
_BAD_INDEX = -2


@kernel(nogil=False)
def _fill(outer, rows, table, index, extra, starts, ends, kind, ints):
    """Set item ``t`` of the list at ``outer`` to a new list of the items
    ``index[rows[t]:rows[t + 1]]``, for every ``t`` (without ``rows``: item
    0 to a list of all of ``index``).  Item ``k`` is the object at address
    ``table[k]``, or ``extra[-1 - k]`` for a negative ``k``; with ``kind``
    :data:`_TRIPLES`, a tuple ``(that object, starts[w], ends[w])``; with
    :data:`_INTS`, the int ``k`` itself.  An int ``v`` below ``ints.size``
    is the object at ``ints[v]`` (ints made once and shared: most offsets
    and ids are small, and sharing them saves allocating an int per use).
    Returns 0, or :data:`_OUT_OF_MEMORY` / :data:`_BAD_INDEX` for
    the row that failed (the rows made before it stay in ``outer``; nothing
    else is left allocated and no exception is set).

    The per-item work is written out in this one loop: a helper taking
    the arrays would count references to them on every item (4x slower).
    """
    n_rows = rows.size - 1 if rows.size else 1
    for t in range(n_rows):
        a = rows[t] if rows.size else 0
        b = rows[t + 1] if rows.size else index.size
        row = _new_list(b - a)
        if row == 0:
            _clear_error()
            return _OUT_OF_MEMORY
        for w in range(a, b):
            k = np.int64(index[w])
            if kind == _INTS:
                if 0 <= k < ints.size:
                    p = ints[k]
                    _incref(p)
                else:
                    p = _new_int(k)
                    if p == 0:
                        _decref(row)
                        _clear_error()
                        return _OUT_OF_MEMORY
                _set_list_item(row, w - a, p)
                continue
            p = 0
            if k >= 0:
                if k < table.size:
                    p = table[k]
            elif -1 - k < extra.size:
                p = extra[-1 - k]
            if p == 0:  # outside its table, or an empty slot
                _decref(row)  # (its items not set yet are NULL, which it allows)
                return _BAD_INDEX
            _incref(p)
            if kind == _TRIPLES:
                item = _new_tuple(3)
                # (start, end and the ints above written out alike: see the docstring)
                v = np.int64(starts[w])
                if 0 <= v < ints.size:
                    start = ints[v]
                    _incref(start)
                else:
                    start = _new_int(v)
                v = np.int64(ends[w])
                if 0 <= v < ints.size:
                    end = ints[v]
                    _incref(end)
                else:
                    end = _new_int(v)
                if item == 0 or start == 0 or end == 0:
                    _decref(p)
                    for made in (item, start, end, row):
                        if made != 0:
                            _decref(made)
                    _clear_error()
                    return _OUT_OF_MEMORY
                _set_tuple_item(item, 0, p)
                _set_tuple_item(item, 1, start)
                _set_tuple_item(item, 2, end)
                p = item
            _set_list_item(row, w - a, p)
        _set_list_item(outer, t, row)
    return 0


#: An empty table (no objects to refer to).
NO_OBJECTS = np.zeros(0, np.int64)
_NO_OFFSETS = np.zeros(0, np.int32)
_ONE_ROW = np.zeros(0, np.int64)  # (no rows: one row of all items)

#: Offsets below this share one int object each (0.5 MiB, made on first use).
SHARED_OFFSETS = 1 << 14
#: The most ints shared (ids of the largest vocabularies; 5 MiB).
MAX_SHARED_INTS = 1 << 17
_ints_made: list[int] = []  # the shared ints, kept alive; it only grows
_ints_addr = NO_OBJECTS
_ints_lock = threading.Lock()


def _shared_ints(n: int) -> np.ndarray:
    """Addresses of the shared ints ``0 .. m - 1``, ``m >= min(n,``
    :data:`MAX_SHARED_INTS` ``)``: the ints are made the first time they
    are asked for, and kept."""
    global _ints_addr
    n = min(n, MAX_SHARED_INTS)
    addr = _ints_addr
    if addr.size < n:
        with _ints_lock:
            addr = _ints_addr
            if addr.size < n:
                have = len(_ints_made)
                _ints_made.extend(range(have, n))
                grown = np.empty(n, np.int64)
                grown[:have] = addr
                grown[have:] = np.fromiter(map(id, _ints_made[have:]), np.int64, n - have)
                _ints_addr = addr = grown
    return addr


def _built(n_rows: int, rows, table, index, extra, starts, ends, kind, ints) -> list:
    """The list of ``n_rows`` lists that :func:`_fill` builds, or the error
    it returned, raised."""
    outer = [None] * n_rows
    code = _fill(id(outer), rows, table, index, extra, starts, ends, kind, ints)
    if code == _OUT_OF_MEMORY:
        raise MemoryError(f"out of memory building {n_rows:,} result lists")
    if code == _BAD_INDEX:
        raise IndexError("an item index is outside its table of object addresses (an internal error: please report it)")
    return outer


def lists_of(table: np.ndarray, index: np.ndarray, rows: np.ndarray, extra: np.ndarray = NO_OBJECTS) -> list[list]:
    """One list per row: ``[[obj(index[w]) for w in range(rows[t], rows[t + 1])] ...]``.

    ``obj(k)`` is the object at address ``table[k]``, or ``extra[-1 - k]``
    for a negative ``k`` (int64 arrays of ``id()`` values; 0 marks an empty
    slot, an error to refer to).  ``index`` is an integer array, ``rows``
    non-decreasing int64 splits of it.  The caller keeps the objects alive
    during the call and holds the GIL.

    >>> words = ["a", "b"]
    >>> table = np.array([id(w) for w in words], np.int64)
    >>> lists_of(table, np.array([1, 0, -1], np.int32), np.array([0, 2, 3]), np.array([id("c")], np.int64))
    [['b', 'a'], ['c']]
    """
    return _built(rows.size - 1, rows, table, index, extra, _NO_OFFSETS, _NO_OFFSETS, _OBJECTS, NO_OBJECTS)


def triples_of(
    table: np.ndarray, index: np.ndarray, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray,
    extra: np.ndarray = NO_OBJECTS,
) -> list[list[tuple]]:
    """:func:`lists_of` with tuples ``(obj(index[w]), starts[w], ends[w])``.

    >>> table = np.array([id("hi")], np.int64)
    >>> triples_of(table, np.array([0, 0]), np.array([0, 3]), np.array([2, 5]), np.array([0, 1, 2]))
    [[('hi', 0, 2)], [('hi', 3, 5)]]
    """
    return _built(rows.size - 1, rows, table, index, extra, starts, ends, _TRIPLES, _shared_ints(SHARED_OFFSETS))


def list_of(table: np.ndarray, index: np.ndarray, extra: np.ndarray = NO_OBJECTS) -> list:
    """:func:`lists_of` for one row: ``[obj(k) for k in index]``.

    >>> list_of(np.array([id("x")], np.int64), np.array([0, 0]))
    ['x', 'x']
    """
    return _built(1, _ONE_ROW, table, index, extra, _NO_OFFSETS, _NO_OFFSETS, _OBJECTS, NO_OBJECTS)[0]


def triple_list_of(table: np.ndarray, index: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                   extra: np.ndarray = NO_OBJECTS) -> list[tuple]:
    """:func:`triples_of` for one row: ``[(obj(k), start, end) ...]``.

    >>> triple_list_of(np.array([id("x")], np.int64), np.array([0]), np.array([4]), np.array([5]))
    [('x', 4, 5)]
    """
    return _built(1, _ONE_ROW, table, index, extra, starts, ends, _TRIPLES, _shared_ints(SHARED_OFFSETS))[0]


def int_lists_of(values: np.ndarray, rows: np.ndarray) -> list[list[int]]:
    """One list of ints per row: ``[values[rows[t]:rows[t + 1]].tolist() ...]``.

    Ints below :data:`MAX_SHARED_INTS` are shared objects, made once (as far
    as a call has at least as many values as ints still to make): a batch's
    token ids then cost a reference each, not a new int each.

    >>> int_lists_of(np.array([7, 0, 2**40]), np.array([0, 1, 3]))
    [[7], [0, 1099511627776]]
    """
    ints = _shared_ints(min(int(values.max()) + 1, values.size) if values.size else 0)
    return _built(rows.size - 1, rows, NO_OBJECTS, values, NO_OBJECTS, _NO_OFFSETS, _NO_OFFSETS, _INTS, ints)
