"""The plain path of the rewrite pass: when a preset normalizes nothing, texts
without a special token are matched as they are (no rewrite, no mapping of
offsets back).  It must give exactly what the general path gives."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit
from segkit.engine.automaton import join_code_points, to_code_points
from segkit.engine.kernels import token_rows
from segkit.engine.rewrite import _IDENT, SCRATCH_ROWS, segment_batch_rewritten, segment_rewritten_into
from segkit.models.files import ModelFileError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "multilingual-sample.jsonl"
VOCAB = ["[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "ab", "##b", "##a", "[", "]", "x", "##x", "北"]


def _general(rw: np.ndarray) -> np.ndarray:
    """The same rewrite array with the plain path switched off."""
    out = rw.copy()
    out[_IDENT] = 0
    return out


def _sample() -> list[str]:
    return [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line]


def _run(cps, bounds, auto, rw):
    rows = np.zeros(bounds.size, dtype=np.int64)
    out, k = segment_batch_rewritten(cps, bounds, auto, rw, 3, token_rows(0), 0, rows, -1, -1)  # grown as needed
    return out[:, :k], rows


def _both_paths(wp: segkit.WordPiece, texts: list[str]):
    rw = wp._rewrite
    cps, bounds = join_code_points(texts)
    plain = _run(cps, bounds, wp._packed, rw)
    general = _run(cps, bounds, wp._packed, _general(rw))
    return plain, general


def test_identity_flag_set_only_without_normalization():
    assert segkit.WordPiece(VOCAB)._rewrite[_IDENT] == 1
    assert segkit.WordPiece(VOCAB, lowercase=True)._rewrite[_IDENT] == 0
    assert segkit.WordPiece(VOCAB, clean_text=True)._rewrite[_IDENT] == 0


def test_plain_path_equals_general_path_on_real_text():
    wp = segkit.WordPiece(ROOT / "vocabularies" / "bert-base-multilingual-cased.txt")
    texts = _sample() + ["[CLS] a [SEP]", "x[MASK]x [ab]", "[", "]", "", "  "]
    (po, pr), (go, gr) = _both_paths(wp, texts)
    assert np.array_equal(pr, gr)
    assert np.array_equal(po, go)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab x[]#北\u3000CLSEPMAK", max_size=30), max_size=8))
def test_plain_path_equals_general_path(texts):
    wp = segkit.WordPiece(VOCAB)
    (po, pr), (go, gr) = _both_paths(wp, texts)
    assert np.array_equal(pr, gr)
    assert np.array_equal(po, go)
    for text in texts:  # the single-text kernel, both paths, small scratch (grown)
        results = []
        for rw in (wp._rewrite, _general(wp._rewrite)):
            scratch = np.zeros((SCRATCH_ROWS, 2), np.int32)
            while True:
                k = segment_rewritten_into(to_code_points(text), wp._packed, rw, 3, scratch)
                if k >= 0:
                    break
                scratch = np.zeros((SCRATCH_ROWS, -k + 2), np.int32)
            results.append(scratch[:4, :k].copy())
        assert np.array_equal(results[0], results[1])


def test_forged_identity_flag_is_rejected(tmp_path):
    """A file claiming the plain path for a table that rewrites must not load
    (its texts would silently skip normalization)."""
    wp = segkit.WordPiece.bert(ROOT / "vocabularies" / "bert-base-uncased.txt")
    path = tmp_path / "m.segkit"
    wp.save(path)
    loaded = segkit.models.files.read_model(path)
    arrays = dict(loaded.arrays)
    rw = np.array(arrays["rewrite.packed"])
    assert rw[_IDENT] == 0
    rw[_IDENT] = 1
    arrays["rewrite.packed"] = rw
    bad = tmp_path / "forged.segkit"
    segkit.models.files.write_model(bad, loaded.preset, loaded.config, arrays, {k: bytes(v) for k, v in loaded.blobs.items()})
    with pytest.raises(ModelFileError, match="invalid"):
        segkit.load(bad)


@pytest.mark.parametrize("flavour", ["hf", "tf_text"])
def test_chunked_batch_equals_text_by_text(flavour, monkeypatch):
    """One thread converts and matches a batch block by block, appending to
    one output: small blocks (with the output outgrowing the first block's
    estimate) give exactly the per-text results."""
    from segkit.presets.wordpiece import matching

    wp = segkit.WordPiece(ROOT / "vocabularies" / "bert-base-multilingual-cased.txt", flavour=flavour, clean_text=True)
    texts = _sample()[:60] + ["", "x" * 500 + " [CLS] ab", "  "] + _sample()[60:90]
    expected = [(e.ids, e.offsets, e.word_ids) for e in (wp.encode(t) for t in texts)]
    monkeypatch.setattr(matching, "_BLOCK_TEXTS", 7)
    batch = wp.encode_batch(texts)
    got = [(e.ids, e.offsets, e.word_ids) for e in batch]
    assert got == expected
    # The batch's ids lists (one compiled pass, see segkit.runtime.boxing) are the
    # per-text ones, also in parts (threads) and with a template and padding.
    assert batch.ids == [ids for ids, _, _ in expected]
    from segkit.runtime import threads as parallel

    monkeypatch.setattr(parallel, "MIN_CHARS_PER_THREAD", 64)  # split even this small batch
    threaded = wp.encode_batch(texts, num_threads=2)
    assert threaded._parts is not None and threaded.ids == batch.ids
    padded = wp.encode_batch(texts, add_special_tokens=True, padding="longest")
    assert padded.ids == [e.ids for e in padded] and len({len(ids) for ids in padded.ids}) == 1
    tok, rows = wp._segment(texts)
    assert rows.size == len(texts) + 1 and rows[-1] == tok.shape[1]


# Texts that make the batch kernel grow its scratch mid-batch: longer than
# its first buffers (1,024 characters), and growing under normalization
# (a Hangul syllable decomposes into two or three jamo), so that the
# rewritten text outgrows buffers sized for the original.
GROWING = [
    "법을 " * 700,
    "x",
    "a" * 5000,
    "ÉTÉ [CLS] \x01" * 600 + "법" * 3000 + " 北京 ab",
    "",
    "\x01" * 3000,
    "ÀB 법률" * 2000,
]

# Texts longer than the batch kernel's window (WINDOW characters of
# rewritten text): cut at word boundaries, a window at a time, with words
# longer than half a window (the buffers grow, keeping the unfinished word),
# a word right after the first boundary, nothing but boundaries, nothing
# but deleted characters.
LONG = [
    "ÀB 법률, " * 16000,
    "x " + "a" * 150_000 + " [CLS] b",
    "법" * 70_000 + " b",
    ("É" * 40_000 + " ") * 3,
    ", " * 50_000,
    "\x01" * 100_000 + "ab",
    "[CLS]" * 30_000,
    "ab " * 40_000 + "c",
]


@pytest.mark.parametrize("texts", [GROWING, LONG, GROWING + LONG[:3]], ids=["growing", "long", "both"])
def test_growing_texts_batch_equals_single_kernel(texts):
    """The batch kernel, growing its buffers text after text and mid-text,
    and cutting long texts into windows, gives each text exactly what the
    single-text kernel gives with a scratch large enough from the start."""
    wp = segkit.WordPiece.bert(ROOT / "vocabularies" / "bert-base-uncased.txt")
    cps, bounds = join_code_points(texts)
    out, rows = _run(cps, bounds, wp._packed, wp._rewrite)
    for t, text in enumerate(texts):
        scratch = np.zeros((SCRATCH_ROWS, 3 * len(text) + 16), np.int32)
        k = segment_rewritten_into(to_code_points(text), wp._packed, wp._rewrite, 3, scratch)
        assert k >= 0
        assert np.array_equal(out[:, rows[t] : rows[t + 1]], scratch[:4, :k]), f"text {t}"


def test_long_growing_text_matches_hf(shared_data):
    """One text past the single-call limit (the batch path), growing under
    normalization, against HuggingFace's BERT pipeline: same ids, same
    offsets in the original text."""
    tokenizers = pytest.importorskip("tokenizers", reason="HuggingFace tokenizers is not installed")
    hf = tokenizers.Tokenizer.from_file(str(shared_data / "vocab" / "bert-base-uncased.tokenizer.json"))
    wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
    text = "".join(GROWING) * 3 + "".join(t[:20_000] for t in LONG)
    assert len(text) > 65536
    ours, theirs = wp.encode(text), hf.encode(text)
    assert ours.ids == theirs.ids
    assert ours.offsets == theirs.offsets
