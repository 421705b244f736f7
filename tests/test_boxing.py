"""segkit.runtime.boxing: lists of existing objects built by compiled code.

Checked against plain Python list building on random tables, indices and
row splits, with every object's reference count checked afterwards (a
missing or extra reference would crash or leak much later), and on the
error paths, which must leave nothing allocated."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segkit.runtime.boxing import NO_OBJECTS, int_lists_of, list_of, lists_of, triple_list_of, triples_of


def addresses(objects) -> np.ndarray:
    return np.array([id(o) for o in objects], np.int64)


@st.composite
def cases(draw):
    """``(objects, extras, index, rows, starts, ends)``: distinct fresh
    strings, indices into either table (negative: ``extras``) and row splits."""
    n = draw(st.integers(0, 6))
    m = draw(st.integers(0, 4))
    objects = [f"obj-{i}-{draw(st.integers(0, 9))}" * 2 for i in range(n)]
    extras = [f"extra-{i}" * 2 for i in range(m)]
    choices = list(range(n)) + [-1 - j for j in range(m)]
    size = draw(st.integers(0, 20)) if choices else 0
    index = [draw(st.sampled_from(choices)) for _ in range(size)]
    cuts = sorted(draw(st.lists(st.integers(0, size), max_size=5)))
    rows = [0, *cuts, size]
    bound = st.one_of(st.integers(0, 20), st.integers(16380, 16390), st.integers(-(2**31), 2**31 - 1))
    starts = [draw(bound) for _ in range(size)]
    ends = [draw(bound) for _ in range(size)]
    return objects, extras, index, rows, starts, ends


def expected(objects, extras, index, rows, starts=None, ends=None):
    pick = [objects[k] if k >= 0 else extras[-1 - k] for k in index]
    if starts is not None:
        pick = list(zip(pick, starts, ends))
    return [pick[a:b] for a, b in zip(rows, rows[1:])]


@settings(max_examples=200, deadline=None)
@given(cases(), st.sampled_from([np.int32, np.int64]))
def test_lists_equal_python_and_count_references(case, dtype):
    objects, extras, index, rows, starts, ends = case
    everything = objects + extras
    before = [sys.getrefcount(o) for o in everything]
    table, extra = addresses(objects), addresses(extras) if extras else NO_OBJECTS
    idx, splits = np.array(index, dtype), np.array(rows, np.int64)
    got = lists_of(table, idx, splits, extra)
    want = expected(objects, extras, index, rows)
    assert got == want
    # each occurrence in a result is one reference, as in the Python lists
    uses = [sum(x is o for row in want for x in row) for o in everything]
    after = [sys.getrefcount(o) for o in everything]
    assert [a - b for a, b in zip(after, before)] == [2 * u for u in uses]
    del got, want
    assert [sys.getrefcount(o) for o in everything] == before

    got = triples_of(table, idx, np.array(starts, np.int32), np.array(ends, np.int32), splits, extra)
    assert got == expected(objects, extras, index, rows, starts, ends)
    assert all(type(x) is tuple and type(x[1]) is int for row in got for x in row)
    del got
    assert [sys.getrefcount(o) for o in everything] == before

    assert list_of(table, idx, extra) == [objects[k] if k >= 0 else extras[-1 - k] for k in index]
    assert triple_list_of(table, idx, np.array(starts, np.int64), np.array(ends, np.int64), extra) == \
        expected(objects, extras, index, [0, len(index)], starts, ends)[0]
    assert [sys.getrefcount(o) for o in everything] == before


def test_empty_inputs():
    assert lists_of(NO_OBJECTS, np.zeros(0, np.int32), np.zeros(1, np.int64)) == []
    assert lists_of(NO_OBJECTS, np.zeros(0, np.int32), np.zeros(4, np.int64)) == [[], [], []]
    assert list_of(NO_OBJECTS, np.zeros(0, np.int32)) == []
    no = np.zeros(0, np.int32)
    assert triple_list_of(NO_OBJECTS, no, no, no) == []


@pytest.mark.parametrize("bad", [[2], [3], [-1], [-2], [0, 1, 2]])
def test_bad_index_raises_and_leaks_nothing(bad):
    objects = ["one" * 3, "two" * 3]
    table = np.append(addresses(objects), 0)  # slot 2: empty
    before = [sys.getrefcount(o) for o in objects]
    with pytest.raises(IndexError, match="outside its table"):
        lists_of(table, np.array([0, 1, *bad], np.int32), np.array([0, 2, 2 + len(bad)]))
    with pytest.raises(IndexError, match="outside its table"):
        triples_of(table, np.array([0, *bad], np.int32), np.zeros(1 + len(bad), np.int32),
                   np.zeros(1 + len(bad), np.int32), np.array([0, 1 + len(bad)]))
    with pytest.raises(IndexError):
        list_of(table, np.array(bad, np.int32))
    assert [sys.getrefcount(o) for o in objects] == before


def test_out_of_memory_raises_memory_error():
    # A row of 2**60 items cannot be allocated: the C API's failure becomes
    # a MemoryError, with no exception left set behind it.
    with pytest.raises(MemoryError, match="out of memory"):
        lists_of(NO_OBJECTS, np.zeros(0, np.int32), np.array([0, 2**60], np.int64))
    assert lists_of(addresses(["x"]), np.zeros(1, np.int32), np.array([0, 1])) == [["x"]]


def test_results_are_ordinary_lists():
    words = ["alpha", "beta"]
    got = lists_of(addresses(words), np.array([1, 0, 1], np.int32), np.array([0, 1, 3]))
    assert type(got) is list and all(type(row) is list for row in got)
    got[1].append("gamma")  # mutable, resizable, and collected normally
    assert got == [["beta"], ["alpha", "beta", "gamma"]]
    assert got[1][0] is words[0]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(-5, 300), st.integers(0, 2**17 + 5), st.integers(-(2**31), 2**31 - 1))),
       st.data(), st.sampled_from([np.int32, np.int64]))
def test_int_lists_equal_tolist(values, data, dtype):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(values)), max_size=4)))
    rows = np.array([0, *cuts, len(values)], np.int64)
    flat = np.array(values, dtype)
    got = int_lists_of(flat, rows)
    assert got == [flat[a:b].tolist() for a, b in zip(rows[:-1], rows[1:])]
    assert all(type(v) is int for row in got for v in row)


def test_int_lists_share_their_ints():
    # A call with at least as many values as ints to make shares them all
    # from then on (up to MAX_SHARED_INTS); a small call makes its own.
    many = int_lists_of(np.arange(80_000, dtype=np.int32), np.array([0, 80_000]))[0]
    ids = np.array([1000, 1000, 70000], np.int32)
    first, second = int_lists_of(ids, np.array([0, 3])), int_lists_of(ids, np.array([0, 1, 3]))
    assert first[0][0] is first[0][1] is second[0][0] is many[1000]
    assert first[0][2] is second[1][1] is many[70000]
    shared = many[70000]
    before = sys.getrefcount(shared)
    third = int_lists_of(ids, np.array([0, 3]))
    during = sys.getrefcount(shared)
    del third
    assert (during - before, sys.getrefcount(shared)) == (1, before)  # one reference per use, given back
    big = int_lists_of(np.array([2**20, 2**20], np.int64), np.array([0, 2]))[0]
    assert big == [2**20, 2**20] and big[0] is not big[1]  # above the shared range
