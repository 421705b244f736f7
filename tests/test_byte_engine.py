"""The engine's byte alphabet against the naive greedy matcher
(``tests/byte_reference.py``): forward and backward, ids and offsets, one
text and batches, bytes and ``str`` input, vocabularies that are not
prefix-closed and lack single bytes; and its validation on load."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segkit.engine import Automaton, EngineConfig
from segkit.engine.automaton import automaton_from_state, automaton_state, validate_packed

from byte_reference import char_span, greedy

# A small alphabet makes long matches, shared prefixes and failures likely;
# the multi-byte characters give partial UTF-8 tokens.
_ALPHABET = b"ab\x00\xff" + "é".encode() + "你".encode()
_byte_strings = st.binary(min_size=1, max_size=6).map(lambda b: bytes(_ALPHABET[x % len(_ALPHABET)] for x in b))
vocabularies = st.lists(_byte_strings, min_size=1, max_size=25, unique=True)
texts = st.lists(st.sampled_from(list(_ALPHABET)) | st.integers(0, 255), max_size=60).map(bytes)
str_texts = st.text(alphabet="ab\x00é你😀ÿ", max_size=40)

UNKNOWN = -1


def build(vocab: list[bytes], direction: str = "forward", unknown: str = "char") -> Automaton:
    cfg = EngineConfig(alphabet="byte", unknown=unknown, char_id=UNKNOWN, unk_id=UNKNOWN, direction=direction)
    return Automaton.build(vocab, np.arange(len(vocab)), cfg)


def expected(vocab: list[bytes], text: bytes, direction: str) -> list[tuple[int, int, int]]:
    return greedy({t: i for i, t in enumerate(vocab)}, text, direction, UNKNOWN)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(vocabularies, st.lists(texts, min_size=1, max_size=6), st.sampled_from(["forward", "backward"]))
def test_byte_engine_is_greedy_longest_match(vocab, batch, direction):
    a = build(vocab, direction)
    want = [expected(vocab, t, direction) for t in batch]
    for text, w in zip(batch, want):
        assert a.segment_id_list(text) == [x[0] for x in w]
        ids, s, e = a.segment(text)
        assert list(zip(ids.tolist(), s.tolist(), e.tolist())) == w
    ids, s, e, rows = a.segment_batch(batch)
    got = list(zip(ids.tolist(), s.tolist(), e.tolist()))
    assert [got[rows[i] : rows[i + 1]] for i in range(len(batch))] == want
    ids, _, _, rows2 = a.segment_batch(batch, offsets=False)
    assert ids.tolist() == [x[0] for w in want for x in w] and rows2.tolist() == rows.tolist()
    # Prefetching ahead (large automata) never changes a result.
    a.lookahead = True
    out, rows3 = a.segment_code_points(*_joined(batch))
    assert out[0].tolist() == ids.tolist() and rows3.tolist() == rows.tolist()


def _joined(batch: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    bounds = np.cumsum([0] + [len(t) for t in batch]).astype(np.int64)
    return np.frombuffer(b"".join(batch), np.uint8), bounds


@settings(max_examples=200, deadline=None)
@given(vocabularies, st.lists(str_texts, min_size=1, max_size=5), st.sampled_from(["forward", "backward"]))
def test_str_input_is_matched_as_its_utf8(vocab, batch, direction):
    a = build(vocab, direction)
    for text in batch:
        w = expected(vocab, text.encode(), direction)
        assert a.segment_id_list(text) == [x[0] for x in w]
        rows = a.segment_rows(text)
        assert rows[1:3].T.tolist() == [[s, e] for _, s, e in w]
        crow = a.segment_rows(text, char_offsets=True)
        assert crow[0].tolist() == [x[0] for x in w]
        assert crow[1:3].T.tolist() == [list(char_span(text, s, e)) for _, s, e in w]
    ids, s, e, rows = a.segment_batch(batch, char_offsets=True)
    for i, text in enumerate(batch):
        w = expected(vocab, text.encode(), direction)
        got = list(zip(ids.tolist(), s.tolist(), e.tolist()))[rows[i] : rows[i + 1]]
        assert got == [(t, *char_span(text, a_, b_)) for t, a_, b_ in w]
    ids2, _, _, rows2 = a.segment_batch(batch, offsets=False)
    assert ids2.tolist() == ids.tolist() and rows2.tolist() == rows.tolist()
    bs, be = a.segment_batch(batch)[1:3]  # byte offsets
    assert list(zip(bs.tolist(), be.tolist())) == [
        (s_, e_) for text in batch for _, s_, e_ in expected(vocab, text.encode(), direction)
    ]


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_a_batch_of_many_blocks_with_growing_output(direction):
    # More texts than one block (2,048), outputs grown several times, and
    # texts of every storage width of str.
    vocab = [b"a", b"ab", b"bab", "é".encode(), "你好".encode(), b"\xf0"]
    a = build(vocab, direction)
    batch = ["ab" * (i % 7) + "é你好😀" * (i % 3) + "\u00ff" * (i % 2) for i in range(5000)] + ["b" * 100000]
    ids, s, e, rows = a.segment_batch(batch, char_offsets=True)
    assert rows.size == len(batch) + 1
    for i in (0, 1, 2, 2047, 2048, 4095, 4096, 4999):
        w = expected(vocab, batch[i].encode(), direction)
        got = list(zip(ids.tolist(), s.tolist(), e.tolist()))[rows[i] : rows[i + 1]]
        assert got == [(t, *char_span(batch[i], x, y)) for t, x, y in w]
    last = list(zip(ids.tolist(), s.tolist(), e.tolist()))[rows[-2] :]
    assert last == expected(vocab, batch[-1].encode(), direction)  # "b": one byte, one character a token
    ids2, _, _, rows2 = a.segment_batch(batch, offsets=False)
    assert ids2.tolist() == ids.tolist() and rows2.tolist() == rows.tolist()


@settings(max_examples=100, deadline=None)
@given(vocabularies, texts)
def test_word_policy_makes_an_unmatchable_text_one_unknown(vocab, text):
    a = build(vocab, unknown="word")
    w = expected(vocab, text, "forward")
    if any(t == UNKNOWN for t, _, _ in w):
        w = [(UNKNOWN, 0, len(text))]
    ids, s, e = a.segment(text)
    assert list(zip(ids.tolist(), s.tolist(), e.tolist())) == w


def test_overshoot_example_from_the_seed():
    # Keys aa and aaaa (the seed's example, plus the single byte): a walk
    # reading "aaa" must back off to "aa" and go on from the third "a".
    a = build([b"a", b"aa", b"aaaa"])
    for n in range(12):
        text = b"a" * n
        assert a.segment_id_list(text) == [x[0] for x in expected([b"a", b"aa", b"aaaa"], text, "forward")]
    assert a.segment_id_list(b"aaaaaaa") == [2, 1, 0]


def test_lone_surrogate_names_its_position():
    a = build([b"a"])
    with pytest.raises(UnicodeEncodeError, match="position 2"):
        a.segment_id_list("aa\ud800a")
    with pytest.raises(UnicodeEncodeError, match="position 1"):
        a.segment_rows("a\udfff")
    with pytest.raises(UnicodeEncodeError, match=r"position 0: surrogates not allowed \(text 1 of the batch\)"):
        a.segment_batch(["aa", "\ud800"])


def test_wrong_dtype_is_refused():
    a = build([b"a"])
    with pytest.raises(TypeError, match="uint8"):
        a.segment_code_points(np.zeros(3, np.uint32), np.array([0, 3]))
    cp = Automaton.build(["a"], [0], EngineConfig())
    with pytest.raises(TypeError, match="uint32"):
        cp.segment_code_points(np.zeros(3, np.uint8), np.array([0, 3]))


def test_config_checks():
    with pytest.raises(ValueError, match="alphabet"):
        EngineConfig(alphabet="bits")
    with pytest.raises(ValueError, match="max_word_bytes"):
        EngineConfig(alphabet="byte", max_word_bytes=10)
    with pytest.raises(TypeError, match="bytes or str"):
        Automaton.build([b"a", 3], [0, 1], EngineConfig(alphabet="byte"))
    with pytest.raises(ValueError, match="surrogate"):
        Automaton.build([b"a", "\ud800"], [0, 1], EngineConfig(alphabet="byte"))


# ------------------------------------------------------------- persistence
def _keys(vocab: list[bytes]):
    lengths = np.array([len(t) for t in vocab], dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.frombuffer(b"".join(vocab), np.uint8), ends - lengths, ends, np.arange(len(vocab), dtype=np.int32)


@settings(max_examples=50, deadline=None)
@given(vocabularies, st.sampled_from(["forward", "backward"]), st.sampled_from(["char", "word"]), texts)
def test_state_round_trips_through_validation(vocab, direction, unknown, text):
    a = build(vocab, direction, unknown)
    config, arrays = automaton_state(a)
    assert config["alphabet"] == "byte"
    valid = np.ones(len(vocab) + 1, dtype=bool)
    b = automaton_from_state(config, arrays, keys=_keys(vocab), valid_ids=valid)
    c = automaton_from_state(config, arrays, valid_ids=valid)  # structural check only
    d = pickle.loads(pickle.dumps(a))
    want = a.segment_id_list(text)
    assert b.segment_id_list(text) == c.segment_id_list(text) == d.segment_id_list(text) == want
    assert d.config == a.config


def test_validation_rejects_a_byte_automaton_that_lies():
    vocab = [b"a", b"ab", b"abc", b"\xff"]
    a = build(vocab)
    config, arrays = automaton_state(a)
    keys = _keys(vocab)
    # Another vocabulary than the trie holds.
    other = _keys([b"a", b"ab", b"abd", b"\xff"])
    with pytest.raises(ValueError, match="missing from the trie"):
        automaton_from_state(config, arrays, keys=other)
    # A char map where the byte alphabet has none, or another symbol count.
    with pytest.raises(ValueError, match="256 symbols and no character map"):
        automaton_from_state(dict(config, num_symbols=255), arrays, keys=keys)
    with pytest.raises(ValueError, match="256 symbols and no character map"):
        validate_packed(arrays["packed"], EngineConfig(alphabet="byte", unknown="char"), 200)
    # The same arrays read as a code point automaton.
    with pytest.raises(ValueError, match="character map has the wrong size"):
        automaton_from_state({k: v for k, v in config.items() if k != "alphabet"}, arrays)
    # A failure link pointing to its own node.
    packed = arrays["packed"].copy()
    cmap, trans, fails, pool, params = __import__("segkit.engine.kernels", fromlist=["unpack"]).unpack(packed)
    v = a.node(b"abc")
    fails[v, 0] = v
    with pytest.raises(ValueError, match="shallower"):
        automaton_from_state(config, {"packed": packed})
    with pytest.raises(ValueError, match="failure links or pops are not the ones"):
        automaton_from_state(config, {"packed": packed}, keys=keys)
