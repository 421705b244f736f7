"""segkit.BPE against tiktoken 0.14: identical ids for gpt2 (r50k_base),
cl100k_base and o200k_base on the whole multilingual corpus, on
hypothesis-generated text and on adversarial pieces."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit
from segkit.presets.bpe import pretrained

tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is not installed")

NAMES = ["r50k_base", "cl100k_base", "o200k_base"]
FILES = {"r50k_base": "gpt2.tiktoken", "cl100k_base": "cl100k_base.tiktoken.gz", "o200k_base": "o200k_base.tiktoken.gz"}


def _ranks(path):
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return {base64.b64decode(t): int(r) for t, r in (line.split() for line in raw.splitlines() if line)}


@pytest.fixture(scope="module", params=NAMES)
def pair(request, shared_data):
    """(segkit, tiktoken) for one vocabulary; tiktoken reads the shared copy."""
    name = request.param
    _, _, pattern, specials = pretrained.PRETRAINED[name]
    ref = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=_ranks(shared_data / "vocab" / FILES[name]),
                            special_tokens=specials)
    return segkit.BPE.from_pretrained(name), ref


@pytest.fixture(scope="module")
def corpus(shared_data):
    with open(shared_data / "corpus" / "multilingual.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def test_bundled_files_are_the_shared_copies(shared_data):
    for name, (filename, digest, _, _) in pretrained.PRETRAINED.items():
        bundled = pretrained._checked_file(name)
        assert hashlib.sha256(gzip.decompress(bundled.read_bytes())).hexdigest() == digest
        shared = (shared_data / "vocab" / FILES[name]).read_bytes()
        if shared[:2] == b"\x1f\x8b":
            shared = gzip.decompress(shared)
        assert hashlib.sha256(shared).hexdigest() == digest


def test_gpt2_is_r50k_base():
    assert segkit.BPE.from_pretrained("gpt2").encode("hello world") == [31373, 995]


def test_whole_corpus(pair, corpus):
    enc, ref = pair
    ids, rows = enc.encode_ordinary_batch(corpus, flat=True)
    expected = ref.encode_ordinary_batch(corpus, num_threads=1)
    bounds = rows.tolist()
    flat = ids.tolist()
    bad = [i for i, e in enumerate(expected) if flat[bounds[i] : bounds[i + 1]] != e]
    assert not bad, f"{len(bad)} texts differ, first: {corpus[bad[0]]!r:.200}"


def test_corpus_one_call_per_text(pair, corpus):
    enc, ref = pair
    for text in corpus[::97]:
        assert enc.encode(text) == ref.encode(text)


_emoji = st.sampled_from(["👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "❤️", "🧑🏿‍🚀", "🇫🇷", "😀"])
_bits = st.sampled_from(
    ["'s", "'S", "'ll", "'LL", "'Ve", "'re", "'t", "'m", "'d", " ", "  ", "   ", "\t", "\n", "\r\n", "\n\n", " \n",
     "\u00a0", "\u3000", "1", "12", "123", "1234", "12345", "٣", "Ⅻ", "a", "A", "Hello", "HTTPServer", "é", "e\u0301",
     "ß", "中文", "日本語", "한국어", "עברית", "العربية", "ไทย", "!", "?!", "...", "$", "/", "//", ".\n", "<|endoftext|>",
     "<|endofprompt|>", "<|fim_prefix|>", "<|", "|>", "\x00", "\x1f", "\u200d", "\ufeff"]
)
# Every category, unassigned code points included: tiktoken files run with
# tiktoken's (Rust regex's) character classes, so a code point newer than its
# Unicode (U+3D000 is a letter to regex 2026.11, not to tiktoken 0.14) is cut as
# tiktoken cuts it.  Surrogates stay in: encode must repair them as tiktoken does.
_char = st.one_of(st.characters(), st.sampled_from(["\U0003d000", "\u0558", "\U00011de0", "\u05c8", "\u0295"]))
_text = st.one_of(
    st.text(alphabet=_char, max_size=80),
    st.lists(st.one_of(_bits, _emoji, _char), max_size=40).map("".join),
)


@given(_text)
@settings(max_examples=300, deadline=None)
def test_hypothesis_text(pair, text):
    enc, ref = pair
    if any(0xD800 <= ord(c) < 0xE000 for c in text):  # repaired as tiktoken does
        assert enc.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
        return
    assert enc.encode_ordinary(text) == ref.encode_ordinary(text)
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert enc.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
    assert enc.decode(enc.encode_ordinary(text)) == text


@given(_text, st.sets(st.sampled_from(["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>"])))
@settings(max_examples=100, deadline=None)
def test_disallowed_specials(pair, text, allowed):
    enc, ref = pair
    if any(0xD800 <= ord(c) < 0xE000 for c in text):
        return
    try:
        expected = ref.encode(text, allowed_special=allowed)
    except ValueError:
        with pytest.raises(ValueError, match="disallowed_special"):
            enc.encode(text, allowed_special=allowed)
        return
    assert enc.encode(text, allowed_special=allowed) == expected


def _adversarial():
    rng = random.Random(25)
    out = []
    for n in (1, 2, 3, 10, 100, 1000, 5000):
        out += ["a" * n, " " * n, "1" * n, "\n" * n, "!" * n, "ab" * n, "a " * n, "中" * n, "中文" * n, "😀" * n]
    for n in (10, 100, 1000, 5000):
        raw = bytes(rng.randrange(256) for _ in range(n))
        out.append(raw.decode("utf-8", "replace"))
        out.append("".join(chr(rng.choice([0x4E00 + rng.randrange(20000), 0x3040 + rng.randrange(90)])) for _ in range(n)))
        out.append("".join(rng.choice("ab") for _ in range(n)))
        out.append("".join(rng.choice(["a", "b", "ab", "ba", "aa"]) for _ in range(n)))
    return out


def test_adversarial_pieces(pair):
    enc, ref = pair
    for text in _adversarial():
        assert enc.encode_ordinary(text) == ref.encode_ordinary(text), repr(text[:40])
