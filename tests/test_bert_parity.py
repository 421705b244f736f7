"""End-to-end BERT parity with HuggingFace ``tokenizers``, on RAW text.

segkit's :class:`segkit.WordPiece` does BERT's whole pipeline (normalization,
special tokens kept whole, pre-tokenization, WordPiece, the ``[CLS] A [SEP]
B [SEP]`` template, truncation and padding).  This module compares it with
HF ``tokenizers`` on every sentence of the shared multilingual corpus
(``../shared/data/corpus/multilingual.jsonl``, 83k sentences in 53
languages), given exactly as stored (nothing is normalized beforehand).

Tokenizers compared
-------------------
* ``bert-base-uncased`` and ``bert-base-multilingual-cased``: HF loads the
  shared ``tokenizer.json``; segkit is built twice, with
  ``WordPiece.from_pretrained(name)`` (the bundled vocabulary) and with
  ``WordPiece.from_tokenizer_json(same file)``.
* ``bert-base-chinese``: HF is ``BertWordPieceTokenizer(vocab, lowercase=True)``
  over the shared vocab.txt, read here by splitting on ``"\\n"`` only (two
  tokens contain U+2028, which HF's own file reader treats as a line break,
  shifting ids); segkit is ``WordPiece.from_pretrained("bert-base-chinese")``.

Fields compared for every encoding: ids, type ids, attention mask, special
tokens mask, offsets and word ids.

Cost
----
HF alone needs about 20 s per model for the whole corpus on a busy 2-core
machine, so the corpus is used as follows:

* single texts, no truncation or padding: EVERY sentence;
* pairs (sentence ``i`` with sentence ``i + 1``), truncation to 32 with
  padding to 32, and padding to the longest of each batch (batches of 64):
  a deterministic subset of 10,000 sentences (``random.Random(2021)``);
* decode parity: 3,000 sentences of that subset.

Everything skips with a reason when HF ``tokenizers`` or the shared data
set is absent.
"""

from __future__ import annotations

import json
import random
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

import segkit

tokenizers = pytest.importorskip(
    "tokenizers", reason="HuggingFace tokenizers is not installed (pip install tokenizers)"
)
from tokenizers import BertWordPieceTokenizer, Tokenizer  # noqa: E402

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CORPUS = SHARED_DATA / "corpus" / "multilingual.jsonl"
VOCAB_DIR = SHARED_DATA / "vocab"

SUBSET_SIZE = 10_000
SUBSET_SEED = 2021
DECODE_SIZE = 3_000
BATCH = 64  # batch size for "pad to the longest in the batch"
MAX_LENGTH = 32

UNCASED = "bert-base-uncased"
MBERT = "bert-base-multilingual-cased"
CHINESE = "bert-base-chinese"

# (model name, how segkit is built)
SEGKIT_VARIANTS = [
    (UNCASED, "from_pretrained"),
    (UNCASED, "from_tokenizer_json"),
    (MBERT, "from_pretrained"),
    (MBERT, "from_tokenizer_json"),
    (CHINESE, "from_pretrained"),
]
VARIANT_IDS = [f"{m}-{how}" for m, how in SEGKIT_VARIANTS]

FIELDS = ("ids", "type_ids", "attention_mask", "special_tokens_mask", "offsets", "word_ids")


# ------------------------------------------------------------------ data
def _need_shared() -> None:
    if not CORPUS.is_file() or not VOCAB_DIR.is_dir():
        pytest.skip(f"shared data set not found at {SHARED_DATA}")


@lru_cache(maxsize=None)
def corpus() -> tuple[str, ...]:
    with CORPUS.open(encoding="utf-8") as fh:
        return tuple(json.loads(line)["text"] for line in fh)


@lru_cache(maxsize=None)
def subset_indices() -> tuple[int, ...]:
    """A deterministic sample of sentence indices (each has a successor for pairs)."""
    n = len(corpus())
    return tuple(sorted(random.Random(SUBSET_SEED).sample(range(n - 1), min(SUBSET_SIZE, n - 1))))


def subset_texts() -> list[str]:
    texts = corpus()
    return [texts[i] for i in subset_indices()]


def subset_pairs() -> list[tuple[str, str]]:
    texts = corpus()
    return [(texts[i], texts[i + 1]) for i in subset_indices()]


def read_vocab_lines(path: Path) -> list[str]:
    """vocab.txt tokens, split on "\\n" only (U+2028 occurs inside tokens)."""
    tokens = path.read_text(encoding="utf-8").split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    return tokens


# ------------------------------------------------------------ tokenizers
def hf_tokenizer(model: str) -> Tokenizer:
    """A fresh HF tokenizer (callers enable truncation/padding on it)."""
    _need_shared()
    if model == CHINESE:
        tokens = read_vocab_lines(VOCAB_DIR / "bert-base-chinese.txt")
        vocab = {t: i for i, t in enumerate(tokens)}
        assert len(vocab) == len(tokens), "duplicate tokens in bert-base-chinese.txt"
        return BertWordPieceTokenizer(vocab, lowercase=True)._tokenizer
    return Tokenizer.from_file(str(VOCAB_DIR / f"{model}.tokenizer.json"))


@lru_cache(maxsize=None)
def segkit_tokenizer(model: str, how: str) -> segkit.WordPiece:
    _need_shared()
    if how == "from_pretrained":
        return segkit.WordPiece.from_pretrained(model)
    return segkit.WordPiece.from_tokenizer_json(VOCAB_DIR / f"{model}.tokenizer.json")


# ------------------------------------------------------------- encoding
# Configurations: name -> (pairs?, truncate and pad to MAX_LENGTH?, pad to the longest per batch?)
CONFIGS = {
    "single": (False, False, False),
    "pair": (True, False, False),
    "single-trunc32-pad32": (False, True, False),
    "pair-trunc32-pad32": (True, True, False),
    "single-pad-longest": (False, False, True),
    "pair-pad-longest": (True, False, True),
}


def config_inputs(config: str) -> list:
    paired, _, _ = CONFIGS[config]
    if config == "single":
        return list(corpus())
    return subset_pairs() if paired else subset_texts()


def _chunks(items: list, size: int):
    for a in range(0, len(items), size):
        yield items[a : a + size]


def rows(enc) -> tuple:
    """The compared fields of an HF or segkit encoding (same attribute names)."""
    return (enc.ids, enc.type_ids, enc.attention_mask, enc.special_tokens_mask, enc.offsets, enc.word_ids)


def hf_encode(tok: Tokenizer, config: str, inputs: list) -> list:
    """HF encodings of ``inputs`` under ``config`` (HF objects, compact)."""
    _, trunc, longest = CONFIGS[config]
    if trunc:
        tok.enable_truncation(MAX_LENGTH)
        tok.enable_padding(length=MAX_LENGTH)
    if longest:
        tok.enable_padding()
        out = []
        for chunk in _chunks(inputs, BATCH):
            out.extend(tok.encode_batch(chunk))
        return out
    return tok.encode_batch(inputs)


def sk_encode(wp: segkit.WordPiece, config: str, inputs: list) -> list:
    """segkit encodings of ``inputs`` under ``config``."""
    _, trunc, longest = CONFIGS[config]
    if longest:
        out = []
        for chunk in _chunks(inputs, BATCH):
            out.extend(wp.encode_batch(chunk, padding=True))
        return out
    if trunc:
        return list(wp.encode_batch(inputs, max_length=MAX_LENGTH, truncation=True, padding="max_length"))
    return list(wp.encode_batch(inputs))


def first_mismatches(hf, sks: list) -> list[list[int]]:
    """For each segkit result in ``sks``: indices where it differs from HF.

    Compared one encoding at a time (nothing big is materialized) and HF's
    fields are read once for all segkit results.
    """
    bad: list[list[int]] = [[] for _ in sks]
    for sk in sks:
        assert len(sk) == len(hf), f"HF returned {len(hf)} encodings, segkit {len(sk)}"
    for k, h in enumerate(hf):
        hr = rows(h)
        for v, sk in enumerate(sks):
            if rows(sk[k]) != hr:
                bad[v].append(k)
    return bad


def describe(inputs, hf, sk, bad: list[int], show: int = 3) -> str:
    """A report of the first ``show`` mismatching encodings."""
    lines = [f"{len(bad)} of {len(inputs)} encodings differ from HF; first {min(show, len(bad))}:"]
    for k in bad[:show]:
        lines.append(f"- #{k}: {inputs[k]!r:.200}")
        for name, hv, sv in zip(FIELDS, rows(hf[k]), rows(sk[k])):
            if hv != sv:
                j = next((j for j, (a, b) in enumerate(zip(hv, sv)) if a != b), min(len(hv), len(sv)))
                lines.append(
                    f"    {name} (len HF {len(hv)}, segkit {len(sv)}) first differs at {j}: "
                    f"HF {hv[max(0, j - 2):j + 4]} vs segkit {sv[max(0, j - 2):j + 4]}"
                )
    return "\n".join(lines)


def assert_same(inputs, hf, sk) -> None:
    (bad,) = first_mismatches(hf, [sk])
    assert not bad, describe(inputs, hf, sk, bad)


# ------------------------------------------------------------------ tests
MODELS = [UNCASED, MBERT, CHINESE]


def variants(model: str) -> list[str]:
    return [how for m, how in SEGKIT_VARIANTS if m == model]


CHUNK = 4096  # inputs compared at a time (bounds memory; HF's encodings are large)


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("model", MODELS)
def test_corpus_parity(model: str, config: str) -> None:
    """Every field of every encoding equals HF's, for each way of building
    segkit's tokenizer (full corpus for ``single``, the 10,000-sentence
    subset for the other configurations)."""
    _need_shared()
    inputs = config_inputs(config)
    tok = hf_tokenizer(model)
    hows = variants(model)
    wps = [segkit_tokenizer(model, how) for how in hows]
    n_bad = [0] * len(hows)
    reports: list[list[str]] = [[] for _ in hows]
    lengths: set[int] = set()
    for start in range(0, len(inputs), CHUNK):
        chunk = inputs[start : start + CHUNK]
        hf = hf_encode(tok, config, chunk)
        sks = [sk_encode(wp, config, chunk) for wp in wps]
        for v, (sk, bad) in enumerate(zip(sks, first_mismatches(hf, sks))):
            if bad and len(reports[v]) < 2:
                reports[v].append(describe(chunk, hf, sk, bad).replace("- #", f"- chunk at {start}, #"))
            n_bad[v] += len(bad)
            lengths.update(len(e) for e in sk)
    failures = [
        f"segkit WordPiece.{how}({model!r}): {n} of {len(inputs)} encodings differ\n" + "\n".join(rep)
        for how, n, rep in zip(hows, n_bad, reports)
        if n
    ]
    assert not failures, "\n".join(failures)
    if CONFIGS[config][1]:  # truncated and padded: every row is exactly MAX_LENGTH long
        assert lengths == {MAX_LENGTH}


def test_corpus_is_not_trivial() -> None:
    """Guard: the comparisons above see real, varied input."""
    _need_shared()
    texts = corpus()
    assert len(texts) > 80_000
    assert len(subset_indices()) == SUBSET_SIZE
    # Truncation to 32 must actually bite on part of the subset.
    wp = segkit_tokenizer(MBERT, "from_pretrained")
    lengths = [len(e) for e in wp.encode_batch(subset_texts())]
    assert sum(n > MAX_LENGTH for n in lengths) > 1000
    assert sum(n < MAX_LENGTH for n in lengths) > 1000


@lru_cache(maxsize=None)
def decode_inputs(model: str) -> tuple:
    """HF's ids of 3,000 pairs: the decoders are compared independently of the encoders."""
    return tuple(e.ids for e in hf_tokenizer(model).encode_batch(subset_pairs()[:DECODE_SIZE]))


@pytest.mark.parametrize("skip_special_tokens", [True, False])
@pytest.mark.parametrize("model,how", SEGKIT_VARIANTS, ids=VARIANT_IDS)
def test_decode_parity(model: str, how: str, skip_special_tokens: bool) -> None:
    """``decode`` equals HF's ``decode`` (WordPiece decoder with cleanup) on
    the ids of 3,000 sentence pairs (template tokens included)."""
    _need_shared()
    wp = segkit_tokenizer(model, how)
    tok = hf_tokenizer(model)
    ids = list(decode_inputs(model))
    # Also unknown tokens, specials in the middle and a lone continuation piece.
    unk, cls_, sep, mask = (tok.token_to_id(t) for t in ("[UNK]", "[CLS]", "[SEP]", "[MASK]"))
    ids.append([mask, unk, cls_, sep])
    ids.append([tok.token_to_id("##s"), unk, tok.token_to_id("##s"), mask, tok.token_to_id(",")])
    ids.append([])
    hf = tok.decode_batch(ids, skip_special_tokens=skip_special_tokens)
    bad = []
    for k, seq in enumerate(ids):
        got = wp.decode(seq, skip_special_tokens=skip_special_tokens)
        if got != hf[k]:
            bad.append(f"#{k} {seq[:12]}: HF {hf[k]!r:.120} vs segkit {got!r:.120}")
    assert not bad, f"{len(bad)} of {len(ids)} decodes differ; first: " + "\n".join(bad[:3])


SPECIAL_TEXTS = [
    "[MASK]",
    "[CLS]x",
    "a[SEP]b",
    "[UNK]",
    "The [MASK] sat on the mat.",
    "[PAD][PAD] [SEP][CLS]",
    "[mask] [Mask] [ MASK ]",  # not special: lowercase or split
    "x[MASK]y [MASK]ing ##[UNK]##",
    "Grüße [MASK] aus Köln",
    "你好[MASK]世界",
]


@pytest.mark.parametrize("model,how", SEGKIT_VARIANTS, ids=VARIANT_IDS)
def test_special_tokens_in_text(model: str, how: str) -> None:
    """Special tokens written in the text are kept whole, as in HF: every field
    equal, alone and in pairs, and the specials really come out as one token."""
    _need_shared()
    wp = segkit_tokenizer(model, how)
    tok = hf_tokenizer(model)
    inputs: list = list(SPECIAL_TEXTS)
    hf = tok.encode_batch(inputs)
    sk = list(wp.encode_batch(inputs))
    assert_same(inputs, hf, sk)
    pairs = list(zip(SPECIAL_TEXTS, reversed(SPECIAL_TEXTS)))
    hf = tok.encode_batch(pairs)
    sk = list(wp.encode_batch(pairs))
    assert_same(pairs, hf, sk)
    # Independent check of the meaning: "[MASK]" alone is [CLS] [MASK] [SEP].
    ids = wp.encode("[MASK]").ids
    assert ids == [tok.token_to_id("[CLS]"), tok.token_to_id("[MASK]"), tok.token_to_id("[SEP]")]
    assert wp.encode("a[SEP]b").tokens[1:-1] == ["a", "[SEP]", "b"]


@pytest.mark.parametrize("model,how", SEGKIT_VARIANTS, ids=VARIANT_IDS)
def test_to_numpy_matches_hf_padding(model: str, how: str) -> None:
    """``BatchEncoding.to_numpy()`` gives HF's padded matrices, for segkit
    batches padded by ``encode_batch(padding=True)`` and unpadded ones."""
    _need_shared()
    wp = segkit_tokenizer(model, how)
    tok = hf_tokenizer(model)
    tok.enable_padding()
    checked = 0
    for inputs in (subset_texts()[:200], subset_pairs()[200:400], ["", "x"], [("a", "")]):
        hf = tok.encode_batch(inputs)
        want = {
            "input_ids": np.array([e.ids for e in hf], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in hf], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in hf], dtype=np.int64),
            "special_tokens_mask": np.array([e.special_tokens_mask for e in hf], dtype=np.int64),
            "offset_mapping": np.array([e.offsets for e in hf], dtype=np.int64).reshape(len(hf), -1, 2),
            "word_ids": np.array([[-1 if w is None else w for w in e.word_ids] for e in hf], dtype=np.int64),
        }
        for padding in (True, False):
            got = wp.encode_batch(inputs, padding=padding).to_numpy(
                return_special_tokens_mask=True, return_offsets=True, return_word_ids=True
            )
            assert set(got) == set(want)
            for key in want:
                assert got[key].dtype == np.int64
                assert got[key].shape == want[key].shape, (key, padding, got[key].shape, want[key].shape)
                diff = np.argwhere(got[key] != want[key])
                assert diff.size == 0, f"{key} (padding={padding}) differs at {diff[:5].tolist()}"
                checked += 1
    assert checked == 4 * 2 * 6
