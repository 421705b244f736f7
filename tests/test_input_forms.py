"""Pre-tokenized input and batches mixing texts and pairs, against HF
``tokenizers`` (``encode(..., is_pretokenized=True)``, ``encode_batch``
with tuples, lists and numpy rows) on the multilingual sample.

The peer is ``tokenizers.BertWordPieceTokenizer`` on the bundled
vocabularies (no shared data needed); skips with a reason without
``tokenizers``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit

SAMPLE = Path(__file__).resolve().parent / "data" / "multilingual-sample.jsonl"
VOCABS = Path(__file__).resolve().parents[1] / "vocabularies"
FIELDS = ("ids", "type_ids", "attention_mask", "special_tokens_mask", "offsets", "word_ids", "sequence_ids",
          "n_sequences", "tokens")


@pytest.fixture(scope="module")
def texts() -> list[str]:
    with SAMPLE.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


@pytest.fixture(scope="module", params=[("bert-base-uncased", True), ("bert-base-multilingual-cased", False)],
                ids=["uncased", "cased"])
def pair(request):
    """(segkit, HF) tokenizers on the same bundled vocabulary and settings."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (HuggingFace tokenizers is the peer)")
    name, lower = request.param
    path = str(VOCABS / f"{name}.txt")
    hf = tokenizers.BertWordPieceTokenizer(path, lowercase=lower)._tokenizer  # (the Tokenizer: all of HF's options)
    return segkit.WordPiece.bert(path, lowercase=lower), hf


def _reset(hf) -> None:
    hf.no_padding()
    hf.no_truncation()


def assert_same(mine, theirs, top: bool = True) -> None:
    mine, theirs = list(mine), list(theirs)
    assert len(mine) == len(theirs)
    for i, (a, b) in enumerate(zip(mine, theirs)):
        for f in FIELDS:
            assert getattr(a, f) == getattr(b, f), (i, f)
        if top:  # (HF's overflowing encodings of a pair have overflowing of their own; transformers reads one level)
            assert_same(a.overflowing, b.overflowing, top=False)


def test_pretokenized_batch_matches_hf(pair, texts) -> None:
    wp, hf = pair
    _reset(hf)
    # words as a user's pre-tokenizer gives them: split on single spaces
    # (so some words are empty or hold other whitespace), punctuation kept
    words = [t.split(" ") for t in texts]
    assert_same(wp.encode_batch(words, is_pretokenized=True), hf.encode_batch(words, is_pretokenized=True))
    pairs = [(words[i], words[-1 - i]) for i in range(len(words))]
    assert_same(wp.encode_batch(pairs, is_pretokenized=True), hf.encode_batch(pairs, is_pretokenized=True))
    for opts, hf_set in (
        (dict(add_special_tokens=False), None),
        (dict(truncation=True, max_length=20, padding=True), lambda: (hf.enable_truncation(20), hf.enable_padding())),
    ):
        _reset(hf)
        if hf_set:
            hf_set()
        assert_same(
            wp.encode_batch(pairs, is_pretokenized=True, **opts),
            hf.encode_batch(pairs, is_pretokenized=True, add_special_tokens=opts.get("add_special_tokens", True)),
        )
    _reset(hf)


def test_pretokenized_encode_matches_hf(pair, texts) -> None:
    wp, hf = pair
    _reset(hf)
    for i in range(0, len(texts), 7):
        words = texts[i].split()
        assert_same([wp.encode(words, is_pretokenized=True)], [hf.encode(words, is_pretokenized=True)])
        other = tuple(texts[i - 1].split())
        assert_same([wp.encode(words, other, is_pretokenized=True)], [hf.encode(words, other, is_pretokenized=True)])
    arr = np.array(texts[0].split(), dtype=object)
    assert_same([wp.encode(arr, is_pretokenized=True)], [hf.encode(arr, is_pretokenized=True)])
    # A fixed-width numpy str array: HF reads its buffer as UTF-8 (offsets
    # span the NUL padding; non-ASCII words raise); segkit reads the words.
    arr = np.array(["no", "i", "am"])
    assert wp.encode(arr, is_pretokenized=True).ids == hf.encode(arr, is_pretokenized=True).ids
    assert wp.encode(arr, is_pretokenized=True).offsets == hf.encode(list(arr), is_pretokenized=True).offsets
    assert_same([wp.encode([], is_pretokenized=True)], [hf.encode([], is_pretokenized=True)])


def test_pretokenized_offsets_and_words_by_hand() -> None:
    wp = segkit.WordPiece.bert(["[UNK]", "[CLS]", "[SEP]", "hello", ",", "don", "'", "t", "wo", "##r", "ld"])
    e = wp.encode(["Hello,", "wor ld", "don't"], is_pretokenized=True)
    assert e.tokens == ["[CLS]", "hello", ",", "wo", "##r", "ld", "don", "'", "t", "[SEP]"]
    # offsets within each word; word index = the word's index in the list
    assert e.offsets == [(0, 0), (0, 5), (5, 6), (0, 2), (2, 3), (4, 6), (0, 3), (3, 4), (4, 5), (0, 0)]
    assert e.word_ids == [None, 0, 0, 1, 1, 1, 2, 2, 2, None]


def _mixed(texts: list[str], kinds: list[int]) -> list:
    """Items of every form HF's encode_batch reads: str, tuple, list, numpy row."""
    out = []
    for i, k in enumerate(kinds):
        a, b = texts[i % len(texts)], texts[(7 * i + 3) % len(texts)]
        out.append([a, (a, b), [a, b], np.array([a, b])][k])
    return out


def test_mixed_batch_matches_hf(pair, texts) -> None:
    wp, hf = pair
    _reset(hf)
    items = _mixed(texts, [i % 4 for i in range(len(texts))])
    assert_same(wp.encode_batch(items), hf.encode_batch(items))
    matrix = np.array(texts[:60]).reshape(30, 2)  # rows of a 2-D array are pairs
    assert_same(wp.encode_batch(matrix), hf.encode_batch(matrix))
    assert_same(wp.encode_batch(list(matrix) + texts[:3]), hf.encode_batch(list(matrix) + texts[:3]))
    # a list of two str is a pair; pre-tokenized, it is one text of two words
    assert_same(wp.encode_batch([["a b", "c"]]), hf.encode_batch([["a b", "c"]]))
    assert_same(wp.encode_batch([["a b", "c"]], is_pretokenized=True), hf.encode_batch([["a b", "c"]], is_pretokenized=True))
    # mixed pre-tokenized: word lists and pairs of them (tuple, list, 2-D array)
    words = [t.split() for t in texts[:40]]
    items = [words[i] if i % 3 == 0 else (words[i], words[i - 1]) if i % 3 == 1 else [words[i], words[i - 2]]
             for i in range(40)]
    items.append(np.array([["x", "y"], ["z", "w"]], dtype=object))
    assert_same(wp.encode_batch(items, is_pretokenized=True), hf.encode_batch(items, is_pretokenized=True))


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    kinds=st.lists(st.integers(0, 3), min_size=1, max_size=12),
    max_length=st.none() | st.integers(3, 40),
    strategy=st.sampled_from(["longest_first", "only_first", "only_second"]),
    padding=st.sampled_from([False, "longest", "max_length"]),
    multiple=st.none() | st.integers(1, 9),
    special=st.booleans(),
    stride=st.sampled_from([0, 0, 1, 3]),
    sides=st.sampled_from([("right", "right"), ("left", "right"), ("right", "left"), ("left", "left")]),
)
def test_mixed_batch_with_options_matches_hf(pair, texts, kinds, max_length, strategy, padding, multiple, special,
                                             stride, sides):
    wp, hf = pair
    _reset(hf)
    items = _mixed(texts, kinds)
    if padding == "longest" or (padding == "max_length" and max_length is not None):
        hf.enable_padding(length=max_length if padding == "max_length" else None, pad_to_multiple_of=multiple,
                          direction=sides[1])
    try:
        if max_length is not None:  # (a stride too large for max_length raises here)
            hf.enable_truncation(max_length, strategy=strategy, stride=stride, direction=sides[0])
        theirs = hf.encode_batch(items, add_special_tokens=special)
    except BaseException as e:  # noqa: BLE001 (HF raises a bare Exception, or panics)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        theirs = e
    opts = dict(add_special_tokens=special, truncation=strategy if max_length is not None else False,
                max_length=max_length, pad_to_multiple_of=multiple, stride=stride, truncation_side=sides[0],
                padding_side=sides[1], padding=padding if (padding != "max_length" or max_length is not None) else False)
    if isinstance(theirs, BaseException):
        with pytest.raises(ValueError):
            wp.encode_batch(items, **opts)
    else:
        assert_same(wp.encode_batch(items, **opts), theirs)
    _reset(hf)


def test_bad_items_name_the_index() -> None:
    wp = segkit.WordPiece.bert(["[UNK]", "[CLS]", "[SEP]", "a"])
    with pytest.raises(TypeError, match="index 2"):
        wp.encode_batch(["a", ("a", "a"), ("a", "a", "a")])
    with pytest.raises(TypeError, match="second text of the pair at index 1"):
        wp.encode_batch(["a", ["a", 3]])
    with pytest.raises(TypeError, match="index 1 .*is_pretokenized"):
        wp.encode_batch([["a"], "a"], is_pretokenized=True)
    with pytest.raises(TypeError, match="first sequence of the pair at index 0"):
        wp.encode_batch([("a", ["a"])], is_pretokenized=True)
    with pytest.raises(TypeError, match="list of words"):
        wp.encode("a", is_pretokenized=True)
