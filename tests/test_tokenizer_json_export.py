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


def test_added_tokens_stay_out_of_the_model_vocabulary(tmp_path: Path) -> None:
    """Issue 27: ``save_tokenizer_json`` put added tokens into
    ``model.vocab``, where WordPiece matches them inside words: the reload
    gave ``lowe ##r`` for ``lower`` (in segkit and in HF) where the tokenizer
    gave ``low ##er``.  HF's own save keeps them out; so does segkit's now,
    and both reloads tokenize as the tokenizer does."""
    tokenizers = pytest.importorskip("tokenizers", reason="the peer HuggingFace tokenizers is not installed")
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


def _base_json(tmp_path: Path) -> dict:
    wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "c", "d", "e", "f"])
    path = tmp_path / "base.json"
    wp.save_tokenizer_json(path)
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("pad_id, pad_token", [(7, "[PAD]"), (0, "[PAD]"), (3, "<pad>"), (0, "<pad>")])
def test_tokenizer_json_pad_id_is_the_id_padding_uses(tmp_path: Path, pad_id: int, pad_token: str) -> None:
    """Issue 27: a tokenizer.json whose ``padding.pad_id`` is 7 padded with 0
    (segkit took the id of ``pad_token``); HF pads with ``pad_id`` whatever
    ``pad_token`` is (``enable_padding()`` writes 0 and ``"[PAD]"`` by
    default, whatever the vocabulary).  The ids are HF's now, and survive
    save_tokenizer_json, model files and pickles."""
    import pickle

    tokenizers = pytest.importorskip("tokenizers", reason="the peer HuggingFace tokenizers is not installed")
    data = _base_json(tmp_path)
    data["padding"] = {"strategy": {"Fixed": 8}, "direction": "Right", "pad_to_multiple_of": None, "pad_id": pad_id,
                       "pad_type_id": 0, "pad_token": pad_token}
    path = tmp_path / "pad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    wp = segkit.WordPiece.from_tokenizer_json(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    want = hf.encode("a b", "c").ids
    assert want[-1] == pad_id
    assert wp.encode("a b", "c").ids == want and wp.encode_batch([("a b", "c")])[0].ids == want
    wp.save_tokenizer_json(tmp_path / "again.json")
    assert tokenizers.Tokenizer.from_file(str(tmp_path / "again.json")).encode("a b", "c").ids == want
    assert segkit.WordPiece.from_tokenizer_json(tmp_path / "again.json").encode("a b", "c").ids == want
    wp.save(tmp_path / "m.segkit")
    assert segkit.load(tmp_path / "m.segkit").encode("a b", "c").ids == want
    assert pickle.loads(pickle.dumps(wp)).encode("a b", "c").ids == want


def test_tokenizer_json_pad_id_of_an_added_token_and_of_no_token(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="the peer HuggingFace tokenizers is not installed")
    wp = segkit.WordPiece.bert(["[UNK]", "[CLS]", "[SEP]", "a", "b"])
    wp.add_special_tokens(["[PAD]"])  # id 5, not in the vocabulary
    wp.enable_padding(length=6)
    assert wp.pad_id == 5 and wp.encode("a b").ids == [1, 3, 4, 2, 5, 5]
    path = tmp_path / "t.json"
    wp.save_tokenizer_json(path)
    assert tokenizers.Tokenizer.from_file(str(path)).encode("a b").ids == [1, 3, 4, 2, 5, 5]
    assert segkit.WordPiece.from_tokenizer_json(path).encode("a b").ids == [1, 3, 4, 2, 5, 5]
    data = json.loads(path.read_text(encoding="utf-8"))
    data["padding"]["pad_id"] = 99
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"t\.json: padding pad_id 99 is not the id of a token"):
        segkit.WordPiece.from_tokenizer_json(path)
    with pytest.raises(ValueError, match="pad_id 99 is not the id of a token"):
        wp.enable_padding(pad_id=99)


@pytest.mark.parametrize("which, i", [("cls", 40), ("cls", 8), ("sep", 2), ("cls", "2"), ("sep", None)])
def test_bert_processing_ids_other_than_the_tokens_are_refused(tmp_path: Path, which: str, i) -> None:
    """Issue 27: a BertProcessing ``cls`` of id 40 gave 2 (the vocabulary's
    id of ``[CLS]``) where HF emits 40.  segkit names every id by its
    vocabulary token, as it does for TemplateProcessing, so such a file is
    refused, naming the file, the token and both ids."""
    data = _base_json(tmp_path)
    post = {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}
    post[which] = [post[which][0], i]
    data["post_processor"] = post
    path = tmp_path / "bp.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    token = "[CLS]" if which == "cls" else "[SEP]"
    with pytest.raises(ValueError, match=rf"bp\.json: post_processor\.{which} gives token '\[{token[1:-1]}\]' id"):
        segkit.WordPiece.from_tokenizer_json(path)
    data["post_processor"] = {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert segkit.WordPiece.from_tokenizer_json(path).encode("a", "b").ids == [2, 4, 3, 5, 3]
