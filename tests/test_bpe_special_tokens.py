"""Special tokens (segkit.presets.bpe.special_tokens) against a plain reference
and against tiktoken itself; pre-tokenization between them.

The reference below is tiktoken's rule written out on ``str``: a disallowed
string anywhere in the text is a ValueError naming the leftmost one; the text
is cut at allowed special tokens, leftmost first, longest where several
start at one position (tiktoken's choice there is arbitrary: see the module
docstring of ``special_tokens``).
"""

from __future__ import annotations

import base64
import gzip
import json

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from segkit.presets.bpe.pretokenize import (
    CL100K_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    R50K_PATTERN,
    Pretokenizer,
)
from segkit.presets.bpe.special_tokens import NO_SPECIALS, SpecialTokens


def reference_split(text, specials, allowed, disallowed):
    allowed = set(specials) if allowed == "all" else set(allowed) & set(specials)
    disallowed = set(specials) - allowed if disallowed == "all" else set(disallowed)
    hits = [(text.find(s), -len(s), s) for s in disallowed if s in text]
    if hits:
        pos, _, token = min(hits)
        raise ValueError(token, pos)
    out, i, seg = [], 0, 0
    while i < len(text):
        found = [s for s in allowed if text.startswith(s, i)]
        if found:
            best = max(found, key=len)
            if seg < i:
                out.append((text[seg:i], -1))
            out.append((best, specials[best]))
            i += len(best)
            seg = i
        else:
            i += 1
    if seg < len(text):
        out.append((text[seg:], -1))
    return out


_SPECIAL_POOL = ["<|a|>", "<|a", "a|>", "<|ab|>", "<", "<<", "<<<", "é", "中文", "\n\n", "b", "<|endoftext|>"]
_specials = st.lists(st.sampled_from(_SPECIAL_POOL), min_size=1, max_size=6, unique=True).map(
    lambda ss: {s: 1000 + i for i, s in enumerate(ss)}
)
_text = st.lists(st.sampled_from(_SPECIAL_POOL + ["x", " ", "a", "|", ">", "é", "\n", "文"]), max_size=25).map("".join)


def _choice(specials, data, name):
    kind = data.draw(st.sampled_from(["all", "subset", "empty"]), label=name)
    if kind == "all":
        return "all"
    if kind == "empty":
        return ()
    pool = sorted(specials) + (["x", "zz"] if name == "disallowed" else ["not a special"])
    return set(data.draw(st.lists(st.sampled_from(pool), unique=True), label=name))


@given(specials=_specials, text=_text, data=st.data())
@settings(max_examples=500, deadline=None)
def test_split_equals_reference(specials, text, data):
    allowed = _choice(specials, data, "allowed")
    disallowed = _choice(specials, data, "disallowed")
    sp = SpecialTokens(specials)
    try:
        expected = reference_split(text, specials, allowed, disallowed)
    except ValueError as e:
        token, pos = e.args
        with pytest.raises(ValueError) as info:
            sp.split(text, allowed, disallowed)
        assert f"special token {token!r} at position {pos}," in str(info.value)
        return
    assert sp.split(text, allowed, disallowed) == expected


@pytest.mark.parametrize(
    "pattern", [GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN, r"\w+|\s+"], ids=["gpt2", "cl100k", "o200k", "regex"]
)
@given(specials=_specials, texts=st.lists(_text, max_size=5), data=st.data())
@settings(max_examples=100, deadline=None)
def test_pieces_between_special_tokens(pattern, specials, texts, data):
    """Text between special tokens is pre-tokenized as a text of its own."""
    allowed = _choice(specials, data, "allowed")
    sp = SpecialTokens(specials)
    pre = Pretokenizer(pattern)
    plan = sp.plan(allowed, ())
    pieces = pre.split_batch(texts, plan)
    for row, text in enumerate(texts):
        expected = []
        for part, tid in reference_split(text, specials, allowed, ()):
            if tid >= 0:
                expected.append((part, tid))
            else:
                expected += [(m.group(), -1) for m in regex.finditer(pattern, part) if m.group()]
        lo, hi = pieces.row_splits[row], pieces.row_splits[row + 1]
        assert list(zip(pieces.strings(row), pieces.ids[lo:hi].tolist())) == expected


def test_disallowed_inside_an_allowed_token_is_found():
    sp = SpecialTokens({"<|ab|>": 1, "b": 2})
    with pytest.raises(ValueError, match="special token 'b' at position 4"):
        sp.split("x<|ab|>", allowed_special={"<|ab|>"})  # tiktoken searches the whole text
    assert sp.split("x<|ab|>", allowed_special={"<|ab|>"}, disallowed_special=()) == [("x", -1), ("<|ab|>", 1)]


def test_disallowed_strings_need_not_be_special_tokens():
    sp = SpecialTokens({"<|endoftext|>": 7})
    with pytest.raises(ValueError, match="special token 'foo' at position 2"):
        sp.split("a foo", disallowed_special={"foo"})
    pre = Pretokenizer(CL100K_PATTERN)
    with pytest.raises(ValueError, match="text 1 contains the special token 'foo' at position 1"):
        pre.split_batch(["ok", "éfoo"], sp.plan((), {"foo"}))


def test_longest_allowed_wins_at_one_position():
    sp = SpecialTokens({"<|a": 1, "<|a|>": 2, "a|>": 3})
    assert sp.split("<|a|>", "all") == [("<|a|>", 2)]
    assert sp.split("<|a|>", {"<|a", "a|>"}, ()) == [("<|a", 1), ("|>", -1)]
    assert sp.split("<|a|>", {"a|>"}, ()) == [("<|", -1), ("a|>", 3)]


def test_arguments_are_checked():
    sp = SpecialTokens({"<|endoftext|>": 7})
    with pytest.raises(ValueError, match="allowed_special must be 'all' or a collection"):
        sp.plan("none")
    with pytest.raises(TypeError, match="allowed_special must hold strings"):
        sp.plan({1})
    with pytest.raises(TypeError, match="disallowed_special must be 'all' or a collection"):
        sp.plan((), 3)
    with pytest.raises(ValueError, match="non-empty string"):
        sp.plan((), {""})
    with pytest.raises(ValueError, match="non-empty string"):
        SpecialTokens({"": 1})
    with pytest.raises(ValueError, match="must be a non-negative int"):
        SpecialTokens({"<s>": -1})
    with pytest.raises(ValueError, match="lone surrogate"):
        SpecialTokens({"<\ud800>": 1})
    with pytest.raises(TypeError, match="mapping"):
        SpecialTokens(["<s>"])
    assert sp.plan("all") is sp.plan("all")  # plans are cached
    assert sp.plan((), ()) is NO_SPECIALS


# ------------------------------------------------------------------ tiktoken itself
_ENCODINGS = {
    "gpt2": ("gpt2.tiktoken", R50K_PATTERN, {"<|endoftext|>": 50256}),
    "cl100k_base": (
        "cl100k_base.tiktoken.gz",
        CL100K_PATTERN,
        {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
         "<|endofprompt|>": 100276},
    ),
    "o200k_base": ("o200k_base.tiktoken.gz", O200K_PATTERN, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
}
_encoders: dict = {}


def _tiktoken(shared_data, name):
    tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is not installed")
    if name not in _encoders:
        fname, pattern, specials = _ENCODINGS[name]
        path = shared_data / "vocab" / fname
        opener = gzip.open if fname.endswith(".gz") else open
        with opener(path, "rb") as f:
            ranks = {base64.b64decode(tok): int(rank) for tok, rank in (line.split() for line in f if line.strip())}
        _encoders[name] = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
    return _encoders[name]


def _ids_from_pieces(enc, pieces, row=0):
    lo, hi = pieces.row_splits[row], pieces.row_splits[row + 1]
    out = []
    for s, e, tid in zip(pieces.starts[lo:hi].tolist(), pieces.ends[lo:hi].tolist(), pieces.ids[lo:hi].tolist()):
        out += [tid] if tid >= 0 else enc._encode_single_piece(pieces.data[s:e].tobytes())
    return out


_tt_text = st.one_of(
    # Characters of every category but surrogates, unassigned ones included:
    # tiktoken files run with tiktoken's (Rust regex's) character classes, so a
    # code point newer than its Unicode (U+3D000, U+0558) is cut as tiktoken cuts it.
    st.text(alphabet=st.one_of(st.characters(exclude_categories=["Cs"]),
                               st.sampled_from(["\U0003d000", "\u0558", "\U00011de0", "\u0295"])), max_size=40),
    st.lists(
        st.sampled_from(["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|endof", "a", "B", "'S", "'ll",
                         " ", "  ", "\n", "\r\n", "1234", "é", "e\u0301", "中文", "👨\u200d👩\u200d👧", "!", "/"]),
        max_size=20,
    ).map("".join),
)


@pytest.mark.parametrize("name", list(_ENCODINGS))
@given(text=_tt_text, allowed=st.sampled_from(["all", (), {"<|endoftext|>"}]),
       disallowed=st.sampled_from(["all", ()]))
@settings(max_examples=200, deadline=None)
def test_same_ids_as_tiktoken(shared_data, name, text, allowed, disallowed):
    """Pieces and special tokens, encoded piece by piece by tiktoken, give
    tiktoken's own ids; a disallowed special token fails in both."""
    enc = _tiktoken(shared_data, name)
    _, pattern, specials = _ENCODINGS[name]
    plan = SpecialTokens(specials).plan(allowed, disallowed)
    try:
        expected = enc.encode(text, allowed_special=allowed if allowed == "all" else set(allowed),
                              disallowed_special=disallowed)
    except ValueError:
        with pytest.raises(ValueError, match="disallowed_special forbids"):
            Pretokenizer(pattern).split(text, plan)
        return
    assert _ids_from_pieces(enc, Pretokenizer(pattern).split(text, plan)) == expected


@pytest.mark.parametrize("name", list(_ENCODINGS))
def test_same_ids_as_tiktoken_on_the_corpus_sample(shared_data, name):
    enc = _tiktoken(shared_data, name)
    _, pattern, _ = _ENCODINGS[name]
    with open(shared_data / "corpus" / "multilingual-1000.jsonl", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    pieces = Pretokenizer(pattern).split_batch(texts)
    expected = enc.encode_ordinary_batch(texts, num_threads=1)
    for row in range(len(texts)):
        assert _ids_from_pieces(enc, pieces, row) == expected[row]
    assert np.all(pieces.ids == -1)
