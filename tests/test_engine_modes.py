"""The preset-agnostic engine: configuration, unknown policies, direction,
boundary classes, batches, large ids and long keys, threads, pickling.

Expected values are worked out by hand or come from the naive reference.
"""

from __future__ import annotations

import pickle
import threading

import numpy as np
import pytest

import segkit
from segkit.engine import ISOLATED, SPACE, WORD
from reference import backward_maxmatch, forward_maxmatch, forward_maxmatch_word, split_by_classes


def build(keys, ids=None, classes=None, **config):
    ids = list(range(len(keys))) if ids is None else ids
    return segkit.Automaton.build(keys, ids, segkit.EngineConfig(**config), classes)


def triples(result):
    ids, st, en = result[:3]
    return list(zip(ids.tolist(), st.tolist(), en.tolist()))


def space_classes():
    classes = np.zeros(0x110000, dtype=np.uint8)
    classes[ord(" ")] = SPACE
    classes[ord("，")] = ISOLATED
    classes[ord("。")] = ISOLATED
    return classes


# ------------------------------------------------------------ configuration
def test_config_validation():
    assert (WORD, SPACE, ISOLATED) == (0, 1, 2)
    with pytest.raises(ValueError, match="unknown"):
        segkit.EngineConfig(unknown="skip")
    with pytest.raises(ValueError, match="direction"):
        segkit.EngineConfig(direction="sideways")
    with pytest.raises(ValueError, match="backward"):
        segkit.EngineConfig(direction="backward", suffix_indicator="##")
    with pytest.raises(ValueError, match="max_word_chars"):
        segkit.EngineConfig(max_word_chars=0)
    with pytest.raises(TypeError):
        segkit.EngineConfig(suffix_indicator=None)
    with pytest.raises(ValueError, match="one id per key"):
        segkit.Automaton.build(["a", "b"], [0], segkit.EngineConfig())


# ----------------------------------------------------------------- MaxMatch
CHINESE = {
    "研究": 1, "研究生": 2, "生命": 3, "命": 4, "起源": 5, "中国": 6, "中": 7, "国人": 8, "人": 9,
}


@pytest.mark.parametrize(
    "direction, text, expected",
    [
        ("forward", "研究生命起源", [(2, 0, 3), (4, 3, 4), (5, 4, 6)]),
        ("backward", "研究生命起源", [(1, 0, 2), (3, 2, 4), (5, 4, 6)]),
        ("forward", "中国人", [(6, 0, 2), (9, 2, 3)]),
        ("backward", "中国人", [(7, 0, 1), (8, 1, 3)]),
        # Unknown characters: "X" is in no key, "究" is in keys but no key by itself.
        ("forward", "X研究X究", [(-5, 0, 1), (1, 1, 3), (-5, 3, 4), (-5, 4, 5)]),
        ("backward", "X研究X究", [(-5, 0, 1), (1, 1, 3), (-5, 3, 4), (-5, 4, 5)]),
        ("forward", "", []),
    ],
)
def test_char_policy_by_hand(direction, text, expected):
    keys = list(CHINESE)
    auto = build(keys, list(CHINESE.values()), unknown="char", direction=direction, char_id=-5)
    assert triples(auto.segment(text)) == expected
    naive = forward_maxmatch if direction == "forward" else backward_maxmatch
    assert naive(text, CHINESE, -5) == expected


def test_char_id_default_is_minus_one():
    auto = build(["ab"], [7], unknown="char")
    assert auto.segment_ids("zabz").tolist() == [-1, 7, -1]


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_classes_split_words_in_both_directions(direction):
    keys = {"中国": 1, "中": 2, "国人": 3, "人": 4, "，": 5}
    auto = build(list(keys), list(keys.values()), space_classes(), unknown="char", direction=direction, char_id=0)
    text = "中国人 中国人，人中国。"
    naive = forward_maxmatch if direction == "forward" else backward_maxmatch
    expected = []
    for w, ws, _ in split_by_classes(text, space=" ", isolated="，。"):
        expected += [(i, ws + a, ws + b) for i, a, b in naive(w, keys, 0)]
    assert triples(auto.segment(text)) == expected
    # Hand check of the first word.
    first = (1, 0, 2) if direction == "forward" else (2, 0, 1)
    assert triples(auto.segment(text))[0] == first
    # The isolated "，" is a word even though it is glued to its neighbours,
    # and "。" (no key) is a one-character token; the space is dropped.
    assert (5, 7, 8) in expected and (0, 11, 12) in expected
    assert all(text[s:e] != " " for _, s, e in expected)
    # Without pre-tokenization the space and punctuation are ordinary characters.
    assert triples(auto.segment(text, pretokenize=False)) == naive(text, keys, 0)


@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize("offsets", [True, False])
def test_batch_with_empty_texts(direction, offsets):
    keys = {"ab": 1, "b": 2, "abc": 3, "c": 4}
    auto = build(list(keys), list(keys.values()), space_classes(), unknown="char", direction=direction, char_id=0)
    texts = ["", "abc", "", "", "ab c", "zz", ""]
    ids, st, en, rows = auto.segment_batch(texts, offsets=offsets)
    rows = rows.tolist()
    assert len(rows) == len(texts) + 1 and rows[0] == 0 and rows == sorted(rows)
    for k, t in enumerate(texts):
        single = auto.segment(t)
        a, b = rows[k], rows[k + 1]
        assert ids[a:b].tolist() == single[0].tolist(), (k, t)
        if offsets:
            assert st[a:b].tolist() == single[1].tolist() and en[a:b].tolist() == single[2].tolist(), (k, t)
    assert rows[1] - rows[0] == 0 and rows[-1] - rows[-2] == 0


def test_word_policy():
    keys = {"ab": 1, "abc": 2, "c": 3, "d": 4}
    auto = build(list(keys), list(keys.values()), space_classes(), unk_id=99, max_word_chars=4)
    enc = triples(auto.segment("abcd abx ab，dddd ddddd"))
    assert enc == [
        (2, 0, 3), (4, 3, 4),  # abc d
        (99, 5, 8),  # abx: unmatchable -> one unk for the word
        (1, 9, 11), (99, 11, 12), (4, 12, 13), (4, 13, 14), (4, 14, 15), (4, 15, 16),  # ab ， dddd
        (99, 17, 22),  # five characters > max_word_chars
    ]
    assert forward_maxmatch_word("abx", keys, 99) == [(99, 0, 3)]


def test_empty_keys_are_ignored():
    auto = build(["", "a", ""], [5, 6, 7], unknown="char", char_id=0)
    assert triples(auto.segment("ab")) == [(6, 0, 1), (0, 1, 2)]


# ------------------------------------------------- representation limits
def test_large_ids_survive():
    # Single pops are packed into the node when the id is small; large ids
    # take the other path.
    big = 2**23 + 5
    keys = {"a": big, "ab": 2**30, "abc": 3, "b": 2**31 - 1}
    auto = build(list(keys), list(keys.values()), unknown="char", char_id=2**31 - 2)
    text = "abababcbz"
    assert triples(auto.segment(text)) == forward_maxmatch(text, keys, 2**31 - 2)
    wp_keys = {"un": 2**23, "##aff": 2**23 - 1, "##able": 2**23 - 2, "unaffablex": 2**23 + 1}
    auto = build(list(wp_keys), list(wp_keys.values()), suffix_indicator="##", unk_id=2**24)
    assert auto.segment_ids("unaffable").tolist() == [2**23, 2**23 - 1, 2**23 - 2]
    assert auto.segment_ids("unaffabley").tolist() == [2**24]


@pytest.mark.parametrize("n", [255, 256, 300, 1000])
def test_pops_covering_many_characters(n):
    # A failure pop records how many characters it covers; long keys need
    # more than one byte for that.
    keys = {"a" * n: 1, "a": 2, "ab": 3}
    auto = build(list(keys), list(keys.values()), unknown="char", char_id=0)
    for text in ["a" * (n + 1), "a" * (n - 1) + "b", "a" * n + "ab", "a" * (2 * n + 3)]:
        assert triples(auto.segment(text)) == forward_maxmatch(text, keys, 0), len(text)
    wp = segkit.WordPiece(["[UNK]", "x" * n, "##y", "##" + "x" * n], max_input_chars_per_word=10 * n)
    enc = wp.encode("x" * n + "y" + "x" * n)
    assert enc.tokens == ["x" * n, "##y", "##" + "x" * n]
    assert enc.offsets == [(0, n), (n, n + 1), (n + 1, 2 * n + 1)]
    assert wp.tokenize("x" * (n + 1)) == ["[UNK]"]


def test_many_pops_in_one_failure():
    # F(v) with several tokens: "abcd..." where only one-character
    # continuations exist after a long literal prefix path.
    keys = ["[UNK]", "abcdefgh", "a", "##b", "##c", "##d", "##e", "##f", "##g"]
    wp = segkit.WordPiece(keys)
    assert wp.tokenize_word("abcdefgx") == ["[UNK]"]
    assert wp.tokenize_word("abcdefg") == ["a", "##b", "##c", "##d", "##e", "##f", "##g"]
    assert wp.encode("abcdefgh abcdefg").offsets == [(0, 8)] + [(9 + i, 10 + i) for i in range(7)]


def test_double_array_placement_retries_in_larger_arrays(monkeypatch):
    # The placement runs in arrays of a first-guess size and starts over in
    # larger ones when they run out; the result must not depend on that.
    from segkit.engine import build as engine_build

    keys = ["".join(w) for w in zip("abcdefghij" * 30, "bcdefghija" * 30, "kkklllmmmn" * 30)]
    keys = sorted(set(keys)) + ["a", "b", "ab", "abc" * 20, "x"]
    expected = build(keys, unknown="char", char_id=0)
    tries = []
    real_place, real_layout = engine_build._place, engine_build.place_double_array

    def counting_place(*args):
        tries.append(args[-1])
        return real_place(*args)

    monkeypatch.setattr(engine_build, "_place", counting_place)
    monkeypatch.setattr(engine_build, "place_double_array", lambda p, s, n, cap=None: real_layout(p, s, n, cap=4))
    small = build(keys, unknown="char", char_id=0)
    assert len(tries) > 2 and tries == sorted(tries)  # ran out of room, then grew
    assert np.array_equal(small.trans, expected.trans) and np.array_equal(small.fails, expected.fails)
    for text in ["abcabcabc" * 7 + "x", "kbjaxlm", "abc" * 21]:
        assert triples(small.segment(text)) == forward_maxmatch(text, dict(zip(keys, range(len(keys)))), 0)


# ------------------------------------------------------- threads, pickling
def test_threads_share_an_automaton(mbert):
    texts = [f"Thread {k} says: Tokenization über alles, 東京 {'x' * (k * 7 % 150)}!" for k in range(64)]
    expected = [mbert.encode(t) for t in texts]
    expected = [(e.ids, e.offsets) for e in expected]
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def worker(w):
        try:
            out = []
            for _ in range(20):
                for t in texts[w::4]:
                    e = mbert.encode(t)
                    out.append((e.ids, e.offsets))
                    assert mbert.encode_ids(t) == e.ids
            results[w] = out
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not errors, errors
    for w in range(4):
        assert results[w] == expected[w::4] * 20


def test_results_are_not_overwritten_by_later_calls(mbert):
    a = mbert.encode("first text here")
    ids_before, offsets_before = a.ids, a.offsets
    mbert.encode("a completely different and much longer second text " * 10)
    assert a.ids == ids_before and a.offsets == offsets_before
    raw = mbert.automaton.segment("first text here")
    copy = [x.copy() for x in raw]
    mbert.automaton.segment("zzz " * 100)
    assert all((x == y).all() for x, y in zip(raw, copy))


def test_automaton_pickles():
    keys = {"中国": 1, "中": 2, "国人": 3, "人": 4}
    auto = build(list(keys), list(keys.values()), space_classes(), unknown="char", direction="backward", char_id=0)
    clone = pickle.loads(pickle.dumps(auto))
    text = "中国人 人中国，中"
    assert triples(clone.segment(text)) == triples(auto.segment(text))
    assert clone.config == auto.config
