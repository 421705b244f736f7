"""The ``flavour="tf_text"`` of :class:`segkit.WordPiece`: TensorFlow Text.

TF Text's ``FastWordpieceTokenizer`` (with its own pre-tokenization, i.e.
``no_pretokenization=False``) differs from HF ``tokenizers`` in three ways
that segkit reproduces with ``flavour="tf_text"``:

* offsets are UTF-8 **byte** offsets;
* the word length limit (``max_bytes_per_word``) counts **bytes**;
* CJK ideographs are Google's ranges (``0x2B820-0x2CEAF`` where HF has
  ``0x2B920-0x2CEAF``).

The first tests check these by hand on the bundled multilingual vocabulary.
The last compares with TF Text itself when ``tensorflow_text`` is importable
(it is not a test dependency; the test skips otherwise) on corpus sentences
normalized beforehand with HF's ``BertNormalizer(lowercase=False,
strip_accents=False)`` (TF's tokenizer does no normalization).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit
from segkit.engine.byte_offsets import to_byte_offsets

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
CORPUS = SHARED_DATA / "corpus" / "multilingual.jsonl"
MBERT_VOCAB = REPO / "vocabularies" / "bert-base-multilingual-cased.txt"
UNCASED_VOCAB = REPO / "vocabularies" / "bert-base-uncased.txt"

TF_SAMPLE = 5_000
TF_SEED = 7


@pytest.fixture(scope="module")
def tf_wp() -> segkit.WordPiece:
    """Multilingual cased, no normalization, TF Text flavour."""
    return segkit.WordPiece(MBERT_VOCAB, flavour="tf_text")


@pytest.fixture(scope="module")
def hf_wp() -> segkit.WordPiece:
    """The same, HF flavour."""
    return segkit.WordPiece(MBERT_VOCAB)


def piece(token: str) -> str:
    return token[2:] if token.startswith("##") else token


# ------------------------------------------------------------ offsets
def test_byte_offsets_by_hand(tf_wp: segkit.WordPiece, hf_wp: segkit.WordPiece) -> None:
    text = "Grüße, 世界! naïve"
    # bytes: G r ü(2) ß(2) e = 0..7, "," 7..8, " " 8..9, 世 9..12, 界 12..15, "!" 15..16,
    # " " 16..17, n a ï(2) v e = 17..23
    e = tf_wp.encode(text)
    raw = text.encode("utf-8")
    assert len(raw) == 23
    for tok, (s, t) in zip(e.tokens, e.offsets):
        assert raw[s:t].decode("utf-8") == piece(tok), (tok, s, t)
    by_token = dict(zip(e.tokens, e.offsets))
    assert by_token[","] == (7, 8)
    assert by_token["世"] == (9, 12)
    assert by_token["界"] == (12, 15)
    assert by_token["!"] == (15, 16)
    assert e.offsets[0][0] == 0 and e.offsets[-1][1] == 23
    # same tokens as the HF flavour, whose offsets are characters
    h = hf_wp.encode(text)
    assert h.ids == e.ids
    assert dict(zip(h.tokens, h.offsets))["世"] == (7, 8)
    assert [(len(text[:s].encode()), len(text[:t].encode())) for s, t in h.offsets] == e.offsets


def test_byte_offsets_with_normalization_and_template() -> None:
    """With BERT's pipeline, byte offsets still index the ORIGINAL text's
    bytes (deleted control characters included), per sequence of a pair."""
    wp = segkit.WordPiece.bert(MBERT_VOCAB, lowercase=False, flavour="tf_text")
    text, pair = "\x00Öl\u200b für 東京", "ça va\ufffd?"
    e = wp.encode(text, pair)
    assert e.tokens[0] == "[CLS]" and e.tokens[-1] == "[SEP]"
    raws = (text.encode("utf-8"), pair.encode("utf-8"))
    seen = 0
    for tok, (s, t), typ, special in zip(e.tokens, e.offsets, e.type_ids, e.special_tokens_mask):
        if special:
            assert (s, t) == (0, 0)
            continue
        span = raws[typ][s:t].decode("utf-8")
        # the only normalization is the deletion of NUL, ZWSP and U+FFFD
        assert span.replace("\x00", "").replace("\u200b", "").replace("\ufffd", "") == piece(tok)
        seen += 1
    assert seen >= 6
    start = len("\x00Öl\u200b für ".encode())
    assert dict(zip(e.tokens, e.offsets))["東"] == (start, start + 3)


def test_batch_byte_offsets_equal_single(tf_wp: segkit.WordPiece) -> None:
    texts = ["ab", "é" * 3, "", "日本 語", "x y"]
    batch = tf_wp.encode_batch(texts)
    for text, e in zip(texts, batch):
        assert e.offsets == tf_wp.encode(text).offsets
        assert all(t <= len(text.encode()) for _, t in e.offsets)


# --------------------------------------------------------- word limit
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12), min_size=1, max_size=5),
    st.randoms(use_true_random=False),
)
def test_byte_offset_conversion_against_encode(texts: list[str], rnd) -> None:
    """The compiled conversion against ``len(text[:i].encode())``, for spans
    in order and out of order (the cursor restarts)."""
    cps = np.array([ord(c) for c in "".join(texts)], dtype=np.uint32)
    bounds = np.cumsum([0] + [len(t) for t in texts]).astype(np.int64)
    cols, rows = [], [0]
    for t in texts:
        for _ in range(rnd.randint(0, 4)):
            a = rnd.randint(0, len(t))
            cols.append((a, rnd.randint(a, len(t))))
        if rnd.random() < 0.7:  # mostly in order, as the engine emits them
            cols[rows[-1] :] = sorted(cols[rows[-1] :])
        rows.append(len(cols))
    out = np.zeros((4, len(cols)), dtype=np.int32)
    out[1:3] = np.array(cols, dtype=np.int32).reshape(-1, 2).T
    to_byte_offsets(cps, bounds, out, np.array(rows, dtype=np.int64))
    want = []
    for ti, t in enumerate(texts):
        want += [(len(t[:a].encode()), len(t[:b].encode())) for a, b in cols[rows[ti] : rows[ti + 1]]]
    assert list(zip(out[1].tolist(), out[2].tolist())) == want


def test_word_limit_counts_bytes(tf_wp: segkit.WordPiece, hf_wp: segkit.WordPiece) -> None:
    unk = tf_wp.unk_id
    long_word = "é" * 60  # 60 characters, 120 bytes
    e = tf_wp.encode(long_word)
    assert e.ids == [unk] and e.offsets == [(0, 120)]
    e = hf_wp.encode(long_word)  # 60 characters <= 100: tokenized
    assert unk not in e.ids and e.offsets[0][0] == 0 and e.offsets[-1][1] == 60
    ok = "é" * 50  # exactly 100 bytes
    e = tf_wp.encode(ok)
    assert unk not in e.ids and e.offsets[0][0] == 0 and e.offsets[-1][1] == 100
    assert e.ids == hf_wp.encode(ok).ids
    # the limit applies per word: a long word between short ones
    e = tf_wp.encode(f"a {long_word} b")
    assert e.ids == [tf_wp.token_to_id("a"), unk, tf_wp.token_to_id("b")]
    assert e.offsets == [(0, 1), (2, 122), (123, 124)]
    # ASCII: bytes = characters, both flavours agree
    for n, want_unk in ((100, False), (101, True)):
        for wp in (tf_wp, hf_wp):
            assert (wp.encode("x" * n).ids == [unk]) is want_unk, (wp.flavour, n)


def test_word_limit_setting_is_bytes(tmp_path: Path) -> None:
    vocab = ["[UNK]", "é", "##é", "a", "##a"]
    wp = segkit.WordPiece(vocab, max_input_chars_per_word=4, flavour="tf_text")
    assert wp.tokenize("éé") == ["é", "##é"]  # 4 bytes
    assert wp.tokenize("ééa") == ["[UNK]"]  # 5 bytes
    assert wp.tokenize("aaaa") == ["a", "##a", "##a", "##a"]
    hf = segkit.WordPiece(vocab, max_input_chars_per_word=4)
    assert hf.tokenize("ééa") == ["é", "##é", "##a"]  # 3 characters


# ---------------------------------------------------------------- CJK
def test_google_cjk_range(tf_wp: segkit.WordPiece, hf_wp: segkit.WordPiece) -> None:
    text = "x\U0002b820y"  # in Google's range (0x2B820-), not in HF's (0x2B920-)
    x, y, unk = tf_wp.token_to_id("x"), tf_wp.token_to_id("y"), tf_wp.unk_id
    e = tf_wp.encode(text)
    assert e.ids == [x, unk, y]
    assert e.offsets == [(0, 1), (1, 5), (5, 6)]  # a 4-byte character
    e = hf_wp.encode(text)
    assert e.ids == [unk] and e.offsets == [(0, 3)]  # one word
    # U+2B920 is in both ranges
    assert tf_wp.encode("x\U0002b920y").ids == [x, unk, y]
    assert hf_wp.encode("x\U0002b920y").ids == [x, unk, y]
    # cjk="bert" gives Google's range with character offsets
    bert = segkit.WordPiece(MBERT_VOCAB, cjk="bert")
    assert bert.encode(text).offsets == [(0, 1), (1, 2), (2, 3)]


def test_flavour_validation() -> None:
    with pytest.raises(ValueError, match="flavour"):
        segkit.WordPiece(["[UNK]", "a"], flavour="tensorflow")


def test_flavour_survives_save_and_pickle(tmp_path: Path, tf_wp: segkit.WordPiece) -> None:
    import pickle

    text = "é" * 60 + " Grüße x\U0002b820y"
    want = (tf_wp.encode(text).ids, tf_wp.encode(text).offsets)
    path = tmp_path / "tf.segkit"
    tf_wp.save(path)
    for wp in (segkit.load(path), pickle.loads(pickle.dumps(tf_wp))):
        assert wp.flavour == "tf_text"
        assert (wp.encode(text).ids, wp.encode(text).offsets) == want


# ------------------------------------------------------- TF Text itself
@pytest.fixture(scope="module")
def tf_modules():
    try:
        import tensorflow as tf
        import tensorflow_text
    except ImportError:
        pytest.skip("tensorflow-text not installed")
    return tf, tensorflow_text


@pytest.mark.parametrize(
    "vocab_path,lowercase", [(MBERT_VOCAB, False), (UNCASED_VOCAB, True)], ids=["mbert", "uncased"]
)
def test_matches_tensorflow_text(tf_modules, vocab_path: Path, lowercase: bool) -> None:
    """ids and byte offsets equal TF Text's ``FastWordpieceTokenizer`` on
    5,000 corpus sentences (a deterministic sample), normalized beforehand
    with HF's BertNormalizer (for the uncased vocabulary: lowercased and
    stripped of accents)."""
    tokenizers = pytest.importorskip(
        "tokenizers", reason="HuggingFace tokenizers is not installed (it normalizes the input)"
    )
    if not CORPUS.is_file():
        pytest.skip(f"shared data set not found at {SHARED_DATA}")
    tf, tf_text = tf_modules
    with CORPUS.open(encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    texts = [texts[i] for i in sorted(random.Random(TF_SEED).sample(range(len(texts)), TF_SAMPLE))]
    norm = tokenizers.normalizers.BertNormalizer(lowercase=lowercase, strip_accents=lowercase)
    texts = [norm.normalize_str(t) for t in texts]
    texts += ["é" * 50, "é" * 51 + " x", "x\U0002b820y", "Grüße, 世界!", ""]

    tokens = vocab_path.read_text(encoding="utf-8").split("\n")[:-1]
    tf_tok = tf_text.FastWordpieceTokenizer(
        vocab=tokens,
        suffix_indicator="##",
        max_bytes_per_word=100,
        token_out_type=tf.int64,
        unknown_token="[UNK]",
        no_pretokenization=False,
    )
    ids, starts, ends = tf_tok.tokenize_with_offsets(tf.constant(texts))
    ids, starts, ends = ids.to_list(), starts.to_list(), ends.to_list()
    wp = segkit.WordPiece(vocab_path, flavour="tf_text")
    bad = []
    for k, e in enumerate(wp.encode_batch(texts)):
        want = (ids[k], list(zip(starts[k], ends[k])))
        if (e.ids, e.offsets) != want:
            bad.append(f"#{k} {texts[k]!r:.100}: TF {list(zip(*want))[:8]} vs segkit {list(zip(e.ids, e.offsets))[:8]}")
    assert not bad, f"{len(bad)} of {len(texts)} differ from TF Text; first:\n" + "\n".join(bad[:3])
    assert sum(len(x) for x in ids) > 50_000
