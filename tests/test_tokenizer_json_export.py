"""``WordPiece.save_tokenizer_json``: HF ``tokenizers`` loads the file and
gives segkit's ids, offsets and type ids on raw text; with
``from_tokenizer_json`` it is a round trip both ways.  Needs ``tokenizers``
(skips with a reason without it); the HF-file round trip also needs the
shared data set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import segkit

SAMPLE = Path(__file__).resolve().parent / "data" / "multilingual-sample.jsonl"


def _texts() -> list[str]:
    with SAMPLE.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def _same(wp: segkit.WordPiece, tok, texts: list[str]) -> None:
    pairs = list(zip(texts[::5], texts[2::5]))
    for text in texts:
        a, b = wp.encode(text), tok.encode(text)
        assert (a.ids, a.offsets, a.type_ids) == (b.ids, b.offsets, b.type_ids), text
    for x, y in pairs:
        a, b = wp.encode(x, y), tok.encode(x, y)
        assert (a.ids, a.offsets, a.type_ids, a.attention_mask) == (b.ids, b.offsets, b.type_ids, b.attention_mask)


@pytest.mark.parametrize("name", ["bert-base-uncased", "bert-base-multilingual-cased", "bert-base-chinese"])
def test_hf_loads_exported_bundled_models(tmp_path: Path, name: str) -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (HuggingFace tokenizers loads the exported file)")
    wp = segkit.WordPiece.from_pretrained(name)
    path = tmp_path / "tokenizer.json"
    wp.save_tokenizer_json(path)
    tok = tokenizers.Tokenizer.from_file(str(path))
    _same(wp, tok, _texts())
    assert tok.decode(tok.encode("Hello there").ids) == wp.decode(wp.encode("Hello there").ids)
    back = segkit.WordPiece.from_tokenizer_json(path)
    assert back.get_vocab() == wp.get_vocab()
    assert [back.encode(t).ids for t in _texts()] == [wp.encode(t).ids for t in _texts()]


def test_defaults_travel(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (HuggingFace tokenizers loads the exported file)")
    wp = segkit.WordPiece.bert(
        segkit.WordPiece.from_pretrained("bert-base-uncased").vocab.tokens,
        lowercase=True,
        truncation={"max_length": 12, "strategy": "longest_first"},
        padding={"length": 16, "pad_to_multiple_of": None},
    )
    path = tmp_path / "tokenizer.json"
    wp.save_tokenizer_json(path)
    tok = tokenizers.Tokenizer.from_file(str(path))
    texts = _texts()[:60]
    for t in texts:
        a, b = wp.encode(t), tok.encode(t)
        assert len(a.ids) == 16 and (a.ids, a.attention_mask, a.offsets) == (b.ids, b.attention_mask, b.offsets)
    back = segkit.WordPiece.from_tokenizer_json(path)
    assert back.truncation == {"max_length": 12, "strategy": "longest_first", "stride": 0, "direction": "right"}
    assert back.padding == {"length": 16, "pad_to_multiple_of": None, "direction": "right", "pad_type_id": 0}


def test_hf_file_round_trip(shared_data: Path, tmp_path: Path) -> None:
    """HF file -> segkit -> file -> segkit and HF: the same tokenizer."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (HuggingFace tokenizers is the peer)")
    src = shared_data / "vocab" / "bert-base-multilingual-cased.tokenizer.json"
    wp = segkit.WordPiece.from_tokenizer_json(src)
    path = tmp_path / "tokenizer.json"
    wp.save_tokenizer_json(path)
    _same(wp, tokenizers.Tokenizer.from_file(str(path)), _texts())
    _same(segkit.WordPiece.from_tokenizer_json(path), tokenizers.Tokenizer.from_file(str(src)), _texts())


def test_settings_hf_cannot_reproduce(tmp_path: Path) -> None:
    vocab = ["[UNK]", "[CLS]", "[SEP]", "a"]
    with pytest.raises(ValueError, match="flavour 'tf_text' has no HuggingFace equivalent"):
        segkit.WordPiece.bert(vocab, lowercase=True, flavour="tf_text").save_tokenizer_json(tmp_path / "t.json")
    with pytest.raises(ValueError, match="cjk='bert'"):
        segkit.WordPiece.bert(vocab, lowercase=True, cjk="bert").save_tokenizer_json(tmp_path / "t.json")
    assert not list(tmp_path.iterdir())  # nothing half-written
