"""Parity with HuggingFace ``tokenizers`` (an independent WordPiece).

HF's BERT pipeline is ``BertNormalizer`` (cleaning, CJK padding, optional
lowercasing) + ``BertPreTokenizer`` + ``models.WordPiece``.  segkit does no
normalization, so it is compared in two ways:

* both get text already normalized by ``BertNormalizer(lowercase=False,
  strip_accents=False)`` and HF runs without a normalizer;
* both get the raw text, HF with a normalizer that only pads CJK ideographs
  (``clean_text=False``): this checks that segkit's own CJK isolation equals
  HF's, and HF's offsets then refer to the raw text as segkit's do.

Ids and offsets must be equal for every sentence.  The full corpus needs
the shared data set; the bundled sample (tests/data) always runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import segkit

tokenizers = pytest.importorskip(
    "tokenizers", reason="HuggingFace tokenizers is not installed (pip install '.[test]')"
)
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MAX_CHARS = 100
#: segkit keeps these whole when they are in the vocabulary (as the
#: ``added_tokens`` of BERT's tokenizer.json files do in HF).
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def hf_wordpiece(vocab_path: Path, normalizer=None) -> Tokenizer:
    tokens = vocab_path.read_text(encoding="utf-8").split("\n")
    if tokens and tokens[-1] == "":
        tokens.pop()
    vocab = {t: i for i, t in enumerate(tokens)}
    assert len(vocab) == len(tokens), f"{vocab_path} has duplicate tokens"
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=MAX_CHARS))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    tok.add_special_tokens([t for t in SPECIAL if t in vocab])
    if normalizer is not None:
        tok.normalizer = normalizer
    return tok


def bert_normalized(texts, lowercase=False):
    norm = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=lowercase)
    return [norm.normalize_str(t) for t in texts]


def cjk_padding_only():
    return normalizers.BertNormalizer(
        clean_text=False, handle_chinese_chars=True, strip_accents=False, lowercase=False
    )


def assert_same(texts, meta, hf_tok: Tokenizer, wp: segkit.WordPiece, show: int = 5):
    """Ids and offsets of every text equal; the message shows the first mismatches."""
    hf = hf_tok.encode_batch(texts, add_special_tokens=False)
    sk = wp.encode_batch(texts)
    assert len(hf) == len(sk) == len(texts)
    bad = []
    for k, (h, s) in enumerate(zip(hf, sk)):
        h_off = [tuple(o) for o in h.offsets]
        if h.ids != s.ids or h_off != s.offsets:
            bad.append(k)
    if bad:
        itos = wp.vocab.id_to_token
        lines = [f"{len(bad)} of {len(texts)} texts differ from HF tokenizers; first {min(show, len(bad))}:"]
        for k in bad[:show]:
            h, s = hf[k], sk[k]
            s_tokens = [itos[i] if 0 <= i < len(itos) else f"<no token for id {i}>" for i in s.ids]
            h_rows = list(zip(h.tokens, h.ids, [tuple(o) for o in h.offsets]))
            s_rows = list(zip(s_tokens, s.ids, s.offsets))
            j = next((j for j, (a, b) in enumerate(zip(h_rows, s_rows)) if a != b), min(len(h_rows), len(s_rows)))
            lines.append(f"- #{k} {meta[k]} {texts[k][:120]!r}")
            lines.append(f"    first difference at token {j}: HF {h_rows[j:j + 4]} vs segkit {s_rows[j:j + 4]}")
        pytest.fail("\n".join(lines))
    return sum(len(s) for s in sk)


def load_jsonl(path: Path):
    with path.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    texts = [r["text"] for r in rows]
    meta = [f"[{r['lang']}, {r['treebank']}]" for r in rows]
    return texts, meta


# ------------------------------------------------------------ bundled sample
@pytest.fixture(scope="module")
def sample():
    return load_jsonl(REPO / "tests" / "data" / "multilingual-sample.jsonl")


def test_sample_is_intact(sample):
    texts, meta = sample
    assert len(texts) == 300
    assert len({m.split(",")[0] for m in meta}) == 53


def test_sample_parity_normalized(sample, mbert, mbert_vocab_path):
    texts, meta = sample
    normalized = bert_normalized(texts)
    n_tokens = assert_same(normalized, meta, hf_wordpiece(mbert_vocab_path), mbert)
    assert n_tokens > 5000  # the comparison did compare something


def test_sample_parity_raw_text_cjk(sample, mbert, mbert_vocab_path):
    texts, meta = sample
    assert_same(texts, meta, hf_wordpiece(mbert_vocab_path, cjk_padding_only()), mbert)


def test_sample_parity_uncased(sample):
    # The uncased vocabulary with lowercasing and accent stripping done by HF's normalizer.
    path = REPO / "vocabularies" / "bert-base-uncased.txt"
    texts, meta = sample
    normalized = bert_normalized(texts, lowercase=True)
    assert_same(normalized, meta, hf_wordpiece(path), segkit.WordPiece(path))


def test_sample_decode_parity(sample, mbert, mbert_vocab_path):
    texts, _ = sample
    hf = hf_wordpiece(mbert_vocab_path)
    normalized = bert_normalized(texts)
    bad = []
    for t, e in zip(normalized, mbert.encode_batch(normalized)):
        for skip in (True, False):
            want = hf.decode(e.ids, skip_special_tokens=skip)
            got = mbert.decode(e.ids, skip_special_tokens=skip)
            if got != want:
                bad.append((t[:80], skip, want[:80], got[:80]))
    assert not bad, f"{len(bad)} decodes differ from HF, first: {bad[:3]}"


def test_sample_parity_chinese(sample):
    path = REPO / "vocabularies" / "bert-base-chinese.txt"
    texts, meta = sample
    normalized = bert_normalized(texts)
    assert_same(normalized, meta, hf_wordpiece(path), segkit.WordPiece(path))


def test_parity_on_tricky_strings(mbert, mbert_vocab_path):
    texts = [
        "",
        "   ",
        "Hello,world!!",
        "a" * 100,
        "a" * 101,
        "x" * 100 + "!" + "y" * 3,
        "##a ## #",
        "[UNK] [CLS]",
        "naïve café Zürich",
        "日本語テキスト、中文字符串。",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀👍🏽 \U0002B820\U0002B920",
        "tab\tnewline\nnbsp\u00a0ideographic\u3000end",
        "«quotes» „Anführung“ ‘single’ — dash – …",
        "٣٤٥ العربية، فارسی‌زبان",
        "\u200b\u200d\ufeff zero width",
    ]
    meta = ["[tricky]"] * len(texts)
    normalized = bert_normalized(texts)
    assert_same(normalized, meta, hf_wordpiece(mbert_vocab_path), mbert)
    assert_same(texts, meta, hf_wordpiece(mbert_vocab_path, cjk_padding_only()), mbert)


# ---------------------------------------------------------- full shared corpus
@pytest.fixture(scope="module")
def corpus(shared_data):
    path = shared_data / "corpus" / "multilingual.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return load_jsonl(path)


@pytest.fixture(scope="module")
def shared_mbert(shared_data):
    path = shared_data / "vocab" / "bert-base-multilingual-cased.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return path, segkit.WordPiece(path)


@pytest.mark.slow
def test_corpus_parity_normalized(corpus, shared_mbert):
    texts, meta = corpus
    path, wp = shared_mbert
    assert len(texts) == 83385
    normalized = bert_normalized(texts)
    n_tokens = assert_same(normalized, meta, hf_wordpiece(path), wp)
    assert n_tokens > 1_000_000


@pytest.mark.slow
def test_corpus_parity_uncased(corpus, shared_data):
    path = shared_data / "vocab" / "bert-base-uncased.txt"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    texts, meta = corpus
    normalized = bert_normalized(texts, lowercase=True)
    assert_same(normalized, meta, hf_wordpiece(path), segkit.WordPiece(path))


@pytest.mark.slow
def test_corpus_parity_raw_text_cjk(corpus, shared_mbert):
    texts, meta = corpus
    path, wp = shared_mbert
    assert_same(texts, meta, hf_wordpiece(path, cjk_padding_only()), wp)
