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
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

_OBJ = ir.IntType(8).as_pointer()


def _api(builder, name: str, result, arguments):
    """Declare the C API function ``name`` in the module being built."""
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(result, arguments), name)


def _maker(name: str):
    """An intrinsic ``make(n)`` calling the C API function ``name`` that
    takes a ``Py_ssize_t`` and returns a new object (``PyList_New``,
    ``PyTuple_New``, ``PyLong_FromSsize_t``): its address, 0 when it failed
    (with an exception set)."""

    @intrinsic
    def make(typingctx, n):
        if not isinstance(n, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            ssize = context.get_value_type(types.intp)
            fn = _api(builder, name, _OBJ, [ssize])
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
        def codegen(context, builder, signature, args):
            ssize = context.get_value_type(types.intp)
            fn = _api(builder, name, ir.IntType(32), [_OBJ, ssize, _OBJ])
            c, i, x = (context.cast(builder, a, t, types.intp) for a, t in zip(args, signature.args))
            return builder.call(fn, [builder.inttoptr(c, _OBJ), i, builder.inttoptr(x, _OBJ)])

        return types.int32(types.intp, types.intp, types.intp), codegen

    return setter


_set_list_item = _setter("PyList_SetItem")
_set_tuple_item = _setter("PyTuple_SetItem")


def _on_object(name: str):
    """An intrinsic ``f(address)`` calling the void C API function ``name``
    on an object (``Py_IncRef``/``Py_DecRef``)."""

    @intrinsic
    def call(typingctx, address):
        def codegen(context, builder, signature, args):
            fn = _api(builder, name, ir.VoidType(), [_OBJ])
            a = context.cast(builder, args[0], signature.args[0], types.intp)
            builder.call(fn, [builder.inttoptr(a, _OBJ)])
            return context.get_dummy_value()

        return types.void(types.intp), codegen

    return call


_incref = _on_object("Py_IncRef")
_decref = _on_object("Py_DecRef")


@intrinsic
def _clear_error(typingctx):
    """``PyErr_Clear()``: drop the exception a failed C API call set (the
    caller raises its own)."""

    def codegen(context, builder, signature, args):
        builder.call(_api(builder, "PyErr_Clear", ir.VoidType(), []), [])
        return context.get_dummy_value()

    return types.void(), codegen


#: Codes the compiled builders return instead of an address.
_OUT_OF_MEMORY = -1
_BAD_INDEX = -2


@njit(cache=True)
def _fill(outer, rows, table, index, extra, starts, ends, triples, ints):
    """Set item ``t`` of the list at ``outer`` to a new list of the items
    ``index[rows[t]:rows[t + 1]]``, for every ``t`` (without ``rows``: item
    0 to a list of all of ``index``).  Item ``k`` is the object at address
    ``table[k]``, or ``extra[-1 - k]`` for a negative ``k``; with
    ``triples``, a tuple ``(that object, starts[w], ends[w])``, whose ints
    below ``ints.size`` are the objects at ``ints[v]`` (the ints made once:
    most offsets are small, and sharing them saves allocating two ints per
    item).  Returns 0, or :data:`_OUT_OF_MEMORY` / :data:`_BAD_INDEX` for
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
            if triples:
                item = _new_tuple(3)
                # (start and end written out alike: see the docstring)
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
SHARED_INTS = 1 << 14
_ints: tuple[list[int], np.ndarray] | None = None
_ints_lock = threading.Lock()


def _shared_ints() -> np.ndarray:
    """Addresses of the ints ``0 .. SHARED_INTS - 1``, kept alive here."""
    global _ints
    if _ints is None:
        with _ints_lock:
            if _ints is None:
                numbers = list(range(SHARED_INTS))
                _ints = numbers, np.fromiter(map(id, numbers), np.int64, SHARED_INTS)
    return _ints[1]


def _checked(outer: list, code: int) -> list:
    if code == _OUT_OF_MEMORY:
        raise MemoryError(f"out of memory building {len(outer):,} result lists")
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
    outer = [None] * (rows.size - 1)
    return _checked(outer, _fill(id(outer), rows, table, index, extra, _NO_OFFSETS, _NO_OFFSETS, False, NO_OBJECTS))


def triples_of(
    table: np.ndarray, index: np.ndarray, starts: np.ndarray, ends: np.ndarray, rows: np.ndarray,
    extra: np.ndarray = NO_OBJECTS,
) -> list[list[tuple]]:
    """:func:`lists_of` with tuples ``(obj(index[w]), starts[w], ends[w])``.

    >>> table = np.array([id("hi")], np.int64)
    >>> triples_of(table, np.array([0, 0]), np.array([0, 3]), np.array([2, 5]), np.array([0, 1, 2]))
    [[('hi', 0, 2)], [('hi', 3, 5)]]
    """
    outer = [None] * (rows.size - 1)
    return _checked(outer, _fill(id(outer), rows, table, index, extra, starts, ends, True, _shared_ints()))


def list_of(table: np.ndarray, index: np.ndarray, extra: np.ndarray = NO_OBJECTS) -> list:
    """:func:`lists_of` for one row: ``[obj(k) for k in index]``.

    >>> list_of(np.array([id("x")], np.int64), np.array([0, 0]))
    ['x', 'x']
    """
    outer = [None]
    return _checked(outer, _fill(id(outer), _ONE_ROW, table, index, extra, _NO_OFFSETS, _NO_OFFSETS, False, NO_OBJECTS))[0]


def triple_list_of(table: np.ndarray, index: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                   extra: np.ndarray = NO_OBJECTS) -> list[tuple]:
    """:func:`triples_of` for one row: ``[(obj(k), start, end) ...]``.

    >>> triple_list_of(np.array([id("x")], np.int64), np.array([0]), np.array([4]), np.array([5]))
    [('x', 4, 5)]
    """
    outer = [None]
    return _checked(outer, _fill(id(outer), _ONE_ROW, table, index, extra, starts, ends, True, _shared_ints()))[0]
