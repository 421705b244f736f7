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
    tokenizers = pytest.importorskip("tokenizers", reason="HuggingFace tokenizers loads the exported file")
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
    tokenizers = pytest.importorskip("tokenizers", reason="HuggingFace tokenizers loads the exported file")
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
    tokenizers = pytest.importorskip("tokenizers", reason="HuggingFace tokenizers is the peer")
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


def test_added_tokens_stay_out_of_the_model_vocabulary(tmp_path: Path) -> None:
    """Issue 27: ``save_tokenizer_json`` put added tokens into
    ``model.vocab``, where WordPiece matches them inside words: the reload
    gave ``lowe ##r`` for ``lower`` (in segkit and in HF) where the tokenizer
    gave ``low ##er``.  HF's own save keeps them out; so does segkit's now,
    and both reloads tokenize as the tokenizer does."""
    tokenizers = pytest.importorskip("tokenizers", reason="compares with HuggingFace tokenizers' own save")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "l", "o", "w", "e", "r", "##o", "##w", "##e", "##r", "low", "##er"]
    wp = segkit.WordPiece.bert(vocab)
    wp.add_tokens([segkit.AddedToken("lowe", single_word=True), "newtok"])
    wp.add_special_tokens(["<eot>"])
    path = tmp_path / "t.json"
    wp.save_tokenizer_json(path)
    texts = ["lower", "lowe lower", "a lowe.", "newtok<eot>lowest", "lowerlowe"]
    want = [wp.encode(t) for t in texts]
    assert want[0].tokens == ["[CLS]", "low", "##er", "[SEP]"]
    again = segkit.WordPiece.from_tokenizer_json(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    for t, w in zip(texts, want):
        a, h = again.encode(t), hf.encode(t)
        assert (a.tokens, a.ids, a.offsets) == (w.tokens, w.ids, w.offsets), t
        assert (h.tokens, h.ids, h.offsets) == (w.tokens, w.ids, w.offsets), t
    # The same tokenizer built and saved by HF: the same model vocabulary and added tokens.
    from tokenizers import AddedToken, Tokenizer, models, normalizers, pre_tokenizers

    ref = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    ref.normalizer = normalizers.BertNormalizer()
    ref.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    ref.add_special_tokens(["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    ref.add_tokens([AddedToken("lowe", single_word=True), "newtok"])
    ref.add_special_tokens(["<eot>"])
    ref.save(str(tmp_path / "hf.json"))
    ours, theirs = (json.loads(p.read_text(encoding="utf-8")) for p in (path, tmp_path / "hf.json"))
    assert ours["model"]["vocab"] == theirs["model"]["vocab"]
    assert ours["added_tokens"] == theirs["added_tokens"]
    assert wp.get_vocab() == hf.get_vocab() == ref.get_vocab()
