"""MaxMatch.encode's one-text call (``segkit.presets.maxmatch.one_text``):
the compiled call returns the list itself; ids beyond the shared ints,
surrogates, both directions and the length at which long texts take the
batch path, against the naive greedy matcher (``tests/byte_reference.py``)."""

from __future__ import annotations

import gc
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit
from segkit.presets.maxmatch.preset import _ONE_TEXT
from segkit.runtime.boxing import MAX_SHARED_INTS

from byte_reference import greedy

TOKENS = [b"a", b"ab", b"abc", b"b", "é".encode(), b"\xc3", "你好".encode()]
IDS = [3 * i + 1 for i in range(len(TOKENS))]
UNK = 2**31 - 2  # beyond the shared ints (a new int each time)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="abcé你好x", max_size=40), st.sampled_from(["forward", "backward"]))
def test_an_id_beyond_the_shared_ints_and_the_naive_matcher(text, direction):
    assert UNK >= MAX_SHARED_INTS
    mm = segkit.MaxMatch(TOKENS, ids=IDS, direction=direction, unknown=UNK)
    want = [t for t, _, _ in greedy(dict(zip(TOKENS, IDS)), text.encode(), direction, UNK)]
    got = mm.encode(text)
    assert type(got) is list and got == want
    assert got == mm.encode(text.encode())  # the bytes path agrees


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_texts_around_the_one_call_limit(direction):
    mm = segkit.MaxMatch(TOKENS, direction=direction, unknown=99)
    vocab = dict(zip(TOKENS, range(len(TOKENS))))
    for n in (_ONE_TEXT - 1, _ONE_TEXT, _ONE_TEXT + 1):
        text = ("abcé你好x" * n)[:n]
        assert mm.encode(text) == [t for t, _, _ in greedy(vocab, text.encode(), direction, 99)]


def test_each_call_gives_a_new_list_and_keeps_reference_counts():
    mm = segkit.MaxMatch(TOKENS)
    first = mm.encode("abcab")
    first.append("changed")
    assert mm.encode("abcab") == [2, 1]
    one = mm.encode("a")[0]
    gc.collect()
    before = sys.getrefcount(one)
    lists = [mm.encode("aaaa") for _ in range(1000)]
    assert sys.getrefcount(one) == before + 4000
    del lists
    assert sys.getrefcount(one) == before


@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize("text, position", [("\ud800", 0), ("ab\udfff", 2), ("é你\ud83dx", 2)])
def test_lone_surrogates_are_named_in_both_directions(direction, text, position):
    mm = segkit.MaxMatch(TOKENS, direction=direction, unknown=9)
    for _ in range(2):  # the first call resolves the compiled entry, the second uses it
        with pytest.raises(UnicodeEncodeError, match=f"position {position}"):
            mm.encode(text)
