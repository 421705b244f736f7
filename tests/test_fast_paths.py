"""The fast paths of the normalization pass and of batches with BERT's
template, against slow references.

* ``_rewrite_simple`` (a text whose characters each stay one character is
  copied without source spans, its offsets not mapped back) and the general
  pass it hands over to: checked against a per-character Python rewrite
  built on ``unicodedata`` (shares nothing with segkit's tables), followed by
  the reference WordPiece of ``tests/reference.py``.
* ``encode_batch`` of single texts with the template and nothing else to
  do: the matching pass writes ``[CLS]``/``[SEP]`` itself; every field must
  equal what the post-processing pass gives and what ``encode`` gives.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit
from reference import wordpiece_text

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "multilingual-sample.jsonl"
SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[MASK]", "[PAD]"]
VOCAB = SPECIALS + ["a", "ab", "##b", "##a", "e", "##e", "ae", "σ", "##σ", "[", "]", "北", "x", "##x", "ß", "##ß"]
# Characters on which Unicode 8.0 (HF's tables) and Python's unicodedata
# agree: ASCII (upper and lower), accented letters, a final sigma, sharp s,
# a combining accent, CJK, controls and format characters, spaces.
ALPHABET = "abAB eE[]#xX北\u00e9\u00c9\u00e1\u00c4\u03a3\u03c3\u00df\u0301\x00\x07\u200b\ufffd\t\n\u3000CLSEPMAKUN"
FIELDS = ("ids", "offsets", "type_ids", "attention_mask", "special_tokens_mask", "word_ids", "sequence_ids", "tokens")


def _reference_rewrite(ch: str, lowercase: bool, strip: bool) -> str:
    """BertNormalizer on one character (clean_text on), straight from
    ``unicodedata``: delete NUL, U+FFFD and Cc/Cf except tab, LF, CR; then
    strip accents (NFD, drop Mn) and lowercase."""
    if ch in "\x00\ufffd" or (ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf")):
        return ""
    if strip:
        ch = "".join(c for c in unicodedata.normalize("NFD", ch) if unicodedata.category(c) != "Mn")
    return ch.lower() if lowercase else ch


def _reference(text: str, lowercase: bool, strip: bool) -> list[tuple[str, int, int]]:
    """Tokens with original offsets: special tokens found leftmost-longest in
    the raw text, every other stretch rewritten character by character and
    WordPieced; offsets mapped back through each character's origin."""
    out = []
    i = 0
    seg_start = 0

    def flush(a: int, b: int) -> None:
        chars, origin = [], []
        for p in range(a, b):
            for c in _reference_rewrite(text[p], lowercase, strip):
                chars.append(c)
                origin.append(p)
        for tok, s, e in wordpiece_text("".join(chars), VOCAB):
            out.append((tok, origin[s], origin[e - 1] + 1))

    while i < len(text):
        hit = next((s for s in sorted(SPECIALS, key=len, reverse=True) if text.startswith(s, i)), None)
        if hit is None:
            i += 1
            continue
        flush(seg_start, i)
        out.append((hit, i, i + len(hit)))
        i += len(hit)
        seg_start = i
    flush(seg_start, len(text))
    return out


@pytest.fixture(scope="module", params=[(True, True), (False, False), (True, False)], ids=["uncased", "cased", "lower-only"])
def normalizing(request):
    lowercase, strip = request.param
    return segkit.WordPiece(VOCAB, lowercase=lowercase, strip_accents=strip, clean_text=True), lowercase, strip


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.text(alphabet=ALPHABET, max_size=40), max_size=6))
def test_rewrite_paths_match_reference(normalizing, texts):
    wp, lowercase, strip = normalizing
    batch = wp.encode_batch(texts, add_special_tokens=False)
    for text, enc in zip(texts, batch):
        expected = _reference(text, lowercase, strip)
        got = list(zip(enc.tokens, *zip(*enc.offsets))) if len(enc) else []
        assert got == expected, text
        single = wp.encode(text)  # the single-text kernel, same fast paths
        assert (single.ids, single.offsets) == (enc.ids, enc.offsets)


def test_long_texts_through_the_window_match_reference():
    """Texts longer than the rewrite window (65,536 characters), with and
    without a character that needs the general pass."""
    wp = segkit.WordPiece(VOCAB, lowercase=True, clean_text=True)
    texts = ["Ab " * 30_000, "ab " * 25_000 + "\u00c9\x00e [CLS]" + "AB " * 5000]
    for text, enc in zip(texts, wp.encode_batch(texts, add_special_tokens=False)):
        assert list(zip(enc.tokens, *zip(*enc.offsets))) == _reference(text, True, True)


def _fields(enc) -> tuple:
    return tuple(getattr(enc, f) for f in FIELDS)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.text(alphabet=ALPHABET, max_size=30), max_size=6))
def test_template_batch_equals_post_processing(texts):
    wp = segkit.WordPiece.bert(VOCAB, lowercase=True)
    fused = wp.encode_batch(texts)
    post = wp.encode_batch(texts, truncation=True, max_length=10**6)  # through the post-processing pass
    assert [_fields(e) for e in fused] == [_fields(e) for e in post] == [_fields(wp.encode(t)) for t in texts]
    opts = dict(return_special_tokens_mask=True, return_offsets=True, return_word_ids=True)
    a, b = fused.to_numpy(**opts), post.to_numpy(**opts)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_template_batch_on_threads_equals_one_thread():
    wp = segkit.WordPiece.bert(ROOT / "vocabularies" / "bert-base-multilingual-cased.txt", lowercase=False)
    texts = [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line] * 40
    one = wp.encode_batch(texts)
    two = wp.encode_batch(texts, num_threads=2)
    post = wp.encode_batch(texts, truncation=True, max_length=10**6)
    assert one.ids == two.ids == post.ids
    opts = dict(return_special_tokens_mask=True, return_offsets=True, return_word_ids=True)
    a, b, c = one.to_numpy(**opts), two.to_numpy(**opts), post.to_numpy(**opts)
    assert all(np.array_equal(a[k], b[k]) and np.array_equal(a[k], c[k]) for k in a)
    assert one[0].tokens[0] == "[CLS]" and one[0].tokens[-1] == "[SEP]"


@settings(max_examples=200, deadline=None)
@given(text=st.one_of(st.text(max_size=60), st.text(alphabet=ALPHABET + "\ud800\udfff\U0001f600\u4e00", max_size=60)))
def test_single_kernel_reads_str_as_code_points(text):
    """encode_single given the str itself (reads_str(): Numba reads its 1-, 2-
    or 4-byte characters) equals it given the code point array."""
    from segkit.engine.rewrite import SCRATCH_ROWS, reads_str
    from segkit.presets.pipeline.postprocess import N_ROWS
    from segkit.presets.wordpiece.single import encode_single

    if not reads_str():
        pytest.skip("this Numba version has no compiled str reading; arrays are used")
    wp = segkit.WordPiece.bert(VOCAB, lowercase=True)
    opts = wp._post.options(False)
    results = []
    # (the kernel reads any str; lone surrogates, which the public calls
    # refuse, are kept here to cover Numba's 2-byte strings that hold them)
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    for arg in (text, cps):
        scratch = np.zeros((SCRATCH_ROWS + N_ROWS, 2), np.int32)
        while True:
            n = encode_single(arg, wp._matcher.packed, wp._matcher.rewrite, opts, scratch)
            if n >= 0:
                break
            scratch = np.zeros((SCRATCH_ROWS + N_ROWS, -n + 2), np.int32)
        results.append(scratch[SCRATCH_ROWS:, :n].tolist())
    assert results[0] == results[1]
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert wp.encode(type("S", (str,), {})(text)).ids == wp.encode(text).ids  # a str subclass too
