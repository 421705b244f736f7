"""Navigation of an :class:`segkit.Encoding` (``sequence_ids``,
``token_to_chars``, ``word_to_tokens``, ``char_to_token``, ...) against
HuggingFace ``tokenizers``' ``Encoding`` on the bundled multilingual sample.

The peer is HF's ``bert-base-uncased`` / ``bert-base-multilingual-cased``
``tokenizer.json`` (shared data set); the test skips with a reason without
it or without ``tokenizers``.  Expected values of the small tests below are
written by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import segkit

SAMPLE = Path(__file__).resolve().parent / "data" / "multilingual-sample.jsonl"

# (add_special_tokens, max_length, truncation, padding)
SETTINGS = [
    (True, None, False, False),
    (False, None, False, False),
    (True, 12, "longest_first", "max_length"),
    (True, 16, "longest_first", False),
    (False, 7, "longest_first", False),
]


def _texts() -> list[str]:
    with SAMPLE.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def _hf(tok_json: Path, add_special: bool, max_length, truncation, padding):
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (HuggingFace tokenizers is the peer)")
    tok = tokenizers.Tokenizer.from_file(str(tok_json))
    tok.no_truncation()
    tok.no_padding()
    if truncation:
        tok.enable_truncation(max_length, strategy=truncation)
    if padding:
        tok.enable_padding(length=max_length, pad_id=0, pad_token="[PAD]")
    return tok


def _all_answers(e, n_chars: tuple[int, int]) -> dict:
    """Every navigation answer of ``e`` over every index worth asking."""
    n = len(e.ids)
    words = max([w for w in e.word_ids if w is not None], default=-1) + 3
    out = {
        "n_sequences": e.n_sequences,
        "sequence_ids": list(e.sequence_ids),
        "token_to_sequence": [e.token_to_sequence(i) for i in range(n + 2)],
        "token_to_chars": [e.token_to_chars(i) for i in range(n + 2)],
        "token_to_word": [e.token_to_word(i) for i in range(n + 2)],
    }
    for q in range(3):
        nc = n_chars[min(q, 1)] + 2
        out[f"word_to_tokens/{q}"] = [e.word_to_tokens(w, q) for w in range(words)]
        out[f"word_to_chars/{q}"] = [e.word_to_chars(w, q) for w in range(words)]
        out[f"char_to_token/{q}"] = [e.char_to_token(c, q) for c in range(nc)]
        out[f"char_to_word/{q}"] = [e.char_to_word(c, q) for c in range(nc)]
    return {k: [tuple(x) if isinstance(x, list) else x for x in v] if isinstance(v, list) else v for k, v in out.items()}


@pytest.mark.parametrize("model", ["bert-base-uncased", "bert-base-multilingual-cased"])
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: "-".join(map(str, s)))
def test_navigation_matches_hf(shared_data: Path, model: str, setting) -> None:
    add_special, max_length, truncation, padding = setting
    tok = _hf(shared_data / "vocab" / f"{model}.tokenizer.json", *setting)
    wp = segkit.WordPiece.from_pretrained(model)
    texts = _texts()
    # singles, then pairs of neighbouring texts (the sample mixes 53 languages)
    cases = [(t, None) for t in texts] + [(a, b) for a, b in zip(texts[::7], texts[3::7])]
    checked = 0
    for text, pair in cases:
        opts = dict(add_special_tokens=add_special, max_length=max_length, truncation=truncation, padding=padding)
        ours = wp.encode(text, pair, **opts)
        theirs = tok.encode(text, pair, add_special_tokens=add_special)
        assert ours.ids == theirs.ids, (text, pair)
        lengths = (len(text), len(pair) if pair is not None else len(text))
        got, want = _all_answers(ours, lengths), _all_answers(theirs, lengths)
        for key in want:
            assert got[key] == want[key], (key, text, pair, setting)
        checked += 1
    assert checked == len(cases) > 300


def test_batch_items_know_their_sequences() -> None:
    wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
    singles = wp.encode_batch(["a b", "c"])
    pairs = wp.encode_batch([("a b", "c"), ("d", "")])
    assert [e.n_sequences for e in singles] == [1, 1]
    assert [e.n_sequences for e in pairs] == [2, 2]
    # [CLS] a b [SEP] c [SEP] / [CLS] d [SEP] [SEP]
    assert pairs[0].sequence_ids == [None, 0, 0, None, 1, None]
    assert pairs[1].sequence_ids == [None, 0, None, None]
    assert pairs[1].char_to_token(0, sequence_index=1) is None  # the empty second text has no tokens
    assert pairs[0].char_to_token(0, sequence_index=1) == 4


def test_navigation_by_hand() -> None:
    wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
    e = wp.encode("Tokenizers  rock", max_length=8, padding="max_length")
    # [CLS] token ##izer ##s rock [SEP] [PAD] [PAD]
    assert e.tokens[:6] == ["[CLS]", "token", "##izer", "##s", "rock", "[SEP]"]
    assert e.sequence_ids == [None, 0, 0, 0, 0, None, None, None]
    assert e.word_to_tokens(0) == (1, 4) and e.word_to_chars(0) == (0, 10)
    assert e.word_to_tokens(1) == (4, 5) and e.word_to_chars(1) == (12, 16)
    assert e.word_to_tokens(2) is None
    assert [e.char_to_token(c) for c in (0, 5, 9, 10, 11, 12, 15, 16)] == [1, 2, 3, None, None, 4, 4, None]
    assert e.char_to_word(9) == 0 and e.char_to_word(11) is None
    assert e.token_to_chars(0) is None and e.token_to_chars(2) == (5, 9) and e.token_to_chars(99) is None
    assert e.token_to_word(3) == 0 and e.token_to_word(6) is None
    assert e.token_to_sequence(4) == 0 and e.token_to_sequence(5) is None


@pytest.mark.parametrize("bad", [-1, 1.5, "0", None, True])
def test_navigation_rejects_bad_indices(bad) -> None:
    e = segkit.WordPiece.from_pretrained("bert-base-uncased").encode("a b")
    for call in (e.token_to_chars, e.token_to_word, e.token_to_sequence, e.char_to_token, e.word_to_tokens):
        with pytest.raises(TypeError if not isinstance(bad, int) or isinstance(bad, bool) else ValueError):
            call(bad)
    with pytest.raises(ValueError, match="sequence_index must be >= 0, found -1"):
        e.char_to_token(0, -1)
