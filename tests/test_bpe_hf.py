"""segkit.BPE against HuggingFace tokenizers: GPT-NeoX-20B's tokenizer.json
on the whole corpus and on hypothesis text, and every tokenizer.json that
train_bpe writes (hypothesis: train, then encode with both)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import segkit
from segkit.presets.bpe.files import BPEFileError
from segkit.training import train_bpe

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")


@pytest.fixture(scope="module")
def neox(shared_data):
    path = shared_data / "vocab" / "gpt-neox-20b.tokenizer.json"
    return segkit.BPE.from_tokenizer_json(path), tokenizers.Tokenizer.from_file(str(path))


@pytest.fixture(scope="module")
def corpus(shared_data):
    with open(shared_data / "corpus" / "multilingual.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def test_neox_whole_corpus(neox, corpus):
    enc, ref = neox
    ids, rows = enc.encode_batch(corpus, flat=True)
    flat, bounds = ids.tolist(), rows.tolist()
    expected = [e.ids for e in ref.encode_batch(corpus)]
    bad = [i for i, e in enumerate(expected) if flat[bounds[i] : bounds[i + 1]] != e]
    assert not bad, f"{len(bad)} texts differ, first: {corpus[bad[0]]!r:.200}"


_bits = st.sampled_from(
    [" ", "  ", "     ", " " * 30, "\t", "\n", "\r\n", "'s", "'LL", "a", "Hello", "123", "é", "e\u0301", "Å", "ﬁ",
     "Ω", "中文", "😀", "👨‍👩‍👧", "<|endoftext|>", "<|padding|>", "<|", "!", "...", "\u00a0", "\u3000"]
)
# Every category, unassigned code points included: segkit's tables for a
# tokenizer.json are HF's (Oniguruma's, measured: tests/test_unicode_flavours.py),
# so a code point Oniguruma does not know yet (U+0558, U+1F6D8) is cut as HF cuts it.
_new = st.sampled_from(["\u0558", "\u0561", "\U00011de0", "\u05c8", "\U0001f6d8", "\u0295", "\U0001fa70",
                        "\U0001f6dc", "\u0378"])
_char = st.one_of(st.characters(), _new)
_text = st.one_of(st.text(alphabet=_char, max_size=60), st.lists(st.one_of(_bits, _char), max_size=30).map("".join))


@given(_text)
@settings(max_examples=300, deadline=None)
def test_neox_hypothesis(neox, text):
    enc, ref = neox
    assume(not any(0xD800 <= ord(c) < 0xE000 for c in text))
    assert enc.encode(text) == ref.encode(text).ids


_words = st.lists(st.sampled_from(["a", "b", "ab", "ba", "é", "中", " ", "  ", "'s", "1", "23", "!", "\n", "<s>",
                                   "<|endoftext|>"]), max_size=40).map("".join)
_docs = st.lists(_words, min_size=1, max_size=6)
_PATTERNS = [None, r"\p{L}+|\p{N}|\s+|[^\s\p{L}\p{N}]+", r"[ab]+|."]


@given(_docs, st.integers(256, 330), st.lists(st.sampled_from(["<|endoftext|>", "<s>", "</s>"]), unique=True,
                                               max_size=2), st.sampled_from(_PATTERNS), st.lists(_words, max_size=8))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_trained_tokenizer_json(tmp_path, docs, size, specials, pattern, texts):
    trained = train_bpe(docs, size + len(specials), specials, pattern=pattern, show_progress=False)
    assume(len(set(trained.vocab.values())) == len(trained.vocab))  # two merges making the same bytes
    path = tmp_path / "tokenizer.json"
    trained.to_tokenizer_json(path)
    ref = tokenizers.Tokenizer.from_file(str(path))
    enc = segkit.BPE.from_tokenizer_json(path)
    direct = trained.encoder()
    for text in texts + docs:
        expected = ref.encode(text).ids
        assert enc.encode(text) == expected
        assert direct.encode(text, allowed_special="all") == expected
        assert enc.decode(expected) == ref.decode(expected, skip_special_tokens=False)


def _json(tmp_path, **changes):
    trained = train_bpe(["abc abd"], 260, show_progress=False)
    path = tmp_path / "t.json"
    trained.to_tokenizer_json(path)
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if key.startswith("model."):
            data["model"][key[6:]] = value
        else:
            data[key] = value
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("change, component", [
    ({"model.type": "WordPiece"}, "model.type"),
    ({"model.dropout": 0.1}, "model.dropout"),
    ({"model.continuing_subword_prefix": "##"}, "model.continuing_subword_prefix"),
    ({"normalizer": {"type": "Lowercase"}}, "normalizer"),
    ({"pre_tokenizer": {"type": "Whitespace"}}, "pre_tokenizer"),
    ({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": "yes"}}, "add_prefix_space"),
    ({"post_processor": {"type": "TemplateProcessing", "single": [], "pair": [], "special_tokens": {}}},
     "post_processor: the pair template"),
    ({"post_processor": {"type": "ElectraProcessing"}}, "post_processor"),
    ({"decoder": {"type": "WordPiece"}}, "decoder"),
    ({"model.merges": ["a zz"]}, "model.merges[0]"),
    ({"model.vocab": {"a": "x"}}, "model.vocab"),
])
def test_unsupported_components_are_named(tmp_path, change, component):
    with pytest.raises(BPEFileError, match=component.replace(".", r"\.").replace("[", r"\[")):
        segkit.BPE.from_tokenizer_json(_json(tmp_path, **change))


def test_not_json(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(b"{not json")
    with pytest.raises(BPEFileError, match="not valid JSON"):
        segkit.BPE.from_tokenizer_json(path)


def test_hf_mode_rejects_tiktoken_arguments(neox):
    enc, _ = neox
    with pytest.raises(ValueError, match="tokenizer.json"):
        enc.encode("a", allowed_special="all")
    assert enc.encode_ordinary("<|endoftext|>") != enc.encode("<|endoftext|>")
