"""Going to transformers and back: the ``tokenizer.json`` that
``WordPiece.save_tokenizer_json`` writes loads in
``transformers.PreTrainedTokenizerFast(tokenizer_file=...)`` and gives
segkit's ids, offsets, type ids and masks on raw text (texts, pairs, padded
and truncated batches, decoding); and a file HF ``tokenizers`` wrote goes
HF -> segkit -> file -> HF unchanged in behaviour.  Needs ``transformers``
or ``tokenizers`` (each test skips with a reason without its peer); the
texts are the bundled multilingual sample, so no shared data is needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import segkit

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "data" / "multilingual-sample.jsonl"
VOCABULARIES = HERE.parent / "vocabularies"
SPECIALS = {"unk_token": "[UNK]", "pad_token": "[PAD]", "cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]"}


def _texts() -> list[str]:
    with SAMPLE.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


@pytest.fixture(scope="module")
def transformers():
    return pytest.importorskip("transformers", reason="transformers (which loads the exported tokenizer.json) is not installed")


@pytest.mark.parametrize("name", ["bert-base-uncased", "bert-base-multilingual-cased"])
def test_transformers_loads_exported_file(transformers, tmp_path: Path, name: str) -> None:
    wp = segkit.WordPiece.from_pretrained(name)
    path = tmp_path / "tokenizer.json"
    wp.save_tokenizer_json(path)
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path), **SPECIALS)
    texts = _texts()
    assert len(texts) == 300

    got = hf(texts, return_offsets_mapping=True, return_token_type_ids=True, return_special_tokens_mask=True)
    ours = wp.encode_batch(texts)
    for i, (t, e) in enumerate(zip(texts, ours)):
        assert got["input_ids"][i] == e.ids, t
        assert [tuple(o) for o in got["offset_mapping"][i]] == e.offsets, t
        assert got["token_type_ids"][i] == e.type_ids, t
        assert got["special_tokens_mask"][i] == e.special_tokens_mask, t
        assert got["attention_mask"][i] == e.attention_mask, t
    assert sum(len(e.ids) for e in ours) > 5000  # the sample really was tokenized

    # One text at a time, as a user calls it.
    for t in texts[::25]:
        assert hf(t)["input_ids"] == wp.encode(t).ids

    # Pairs.
    firsts, seconds = texts[0::2], texts[1::2]
    got = hf(firsts, seconds, return_token_type_ids=True)
    ours = wp.encode_batch(list(zip(firsts, seconds)))
    assert got["input_ids"] == ours.ids
    assert got["token_type_ids"] == [e.type_ids for e in ours]

    # A padded, truncated batch, pairs included.
    for batch in (texts[:40], list(zip(firsts[:40], seconds[:40]))):
        args = (batch,) if isinstance(batch[0], str) else ([a for a, _ in batch], [b for _, b in batch])
        got = hf(*args, padding=True, truncation=True, max_length=24, return_token_type_ids=True)
        ours = wp.encode_batch(batch, padding=True, truncation=True, max_length=24).to_numpy()
        assert got["input_ids"] == ours["input_ids"].tolist()
        assert got["attention_mask"] == ours["attention_mask"].tolist()
        assert got["token_type_ids"] == ours["token_type_ids"].tolist()
        assert max(len(r) for r in got["input_ids"]) == 24

    # Decoding.
    for t in texts[::10]:
        ids = wp.encode(t).ids
        assert hf.decode(ids, skip_special_tokens=True) == wp.decode(ids), t


def test_hf_file_to_segkit_and_back(tmp_path: Path) -> None:
    """A tokenizer.json written by HF tokenizers (no shared data: built from
    a bundled vocabulary) -> segkit -> tokenizer.json -> HF: both HF
    tokenizers and segkit give the same encodings on the sample, and the
    re-exported file has the same pipeline parts."""
    tokenizers = pytest.importorskip("tokenizers", reason="HuggingFace tokenizers (which writes the original file) is not installed")
    from tokenizers.implementations import BertWordPieceTokenizer

    src = tmp_path / "hf.json"
    original = BertWordPieceTokenizer(str(VOCABULARIES / "bert-base-multilingual-cased.txt"), lowercase=False)
    original.save(str(src))
    wp = segkit.WordPiece.from_tokenizer_json(src)
    out = tmp_path / "segkit.json"
    wp.save_tokenizer_json(out)
    before = tokenizers.Tokenizer.from_file(str(src))
    after = tokenizers.Tokenizer.from_file(str(out))
    texts = _texts()
    for t in texts:
        a, b, c = before.encode(t), after.encode(t), wp.encode(t)
        assert (a.ids, a.offsets, a.type_ids) == (b.ids, b.offsets, b.type_ids) == (c.ids, c.offsets, c.type_ids), t
    for x, y in zip(texts[::7], texts[3::7]):
        a, b = before.encode(x, y), after.encode(x, y)
        assert (a.ids, a.type_ids) == (b.ids, b.type_ids) == (wp.encode(x, y).ids, wp.encode(x, y).type_ids)
    j0, j1 = json.loads(src.read_text(encoding="utf-8")), json.loads(out.read_text(encoding="utf-8"))
    assert j1["model"]["vocab"] == j0["model"]["vocab"]
    for key in ("unk_token", "continuing_subword_prefix", "max_input_chars_per_word"):
        assert j1["model"][key] == j0["model"][key]
    for key in ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase"):
        assert j1["normalizer"][key] == j0["normalizer"][key]
    assert j1["pre_tokenizer"]["type"] == j0["pre_tokenizer"]["type"] == "BertPreTokenizer"
    # ... and segkit -> file -> segkit gives the same tokenizer again.
    again = segkit.WordPiece.from_tokenizer_json(out)
    assert again._settings == wp._settings and again.get_vocab() == wp.get_vocab()
