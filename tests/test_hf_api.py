"""HF ``tokenizers`` API methods of :class:`segkit.WordPiece` other than
encoding: ``decode_batch``, ``get_vocab``, ``get_vocab_size``, against
``tokenizers`` on HF's ``tokenizer.json`` files (shared data set; skips with
a reason without it or without ``tokenizers``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import segkit

SAMPLE = Path(__file__).resolve().parent / "data" / "multilingual-sample.jsonl"
MODELS = ["bert-base-uncased", "bert-base-multilingual-cased"]


def _peer(shared_data: Path, model: str):
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (HuggingFace tokenizers is the peer)")
    return tokenizers.Tokenizer.from_file(str(shared_data / "vocab" / f"{model}.tokenizer.json"))


@pytest.mark.parametrize("model", MODELS)
def test_vocab_matches_hf(shared_data: Path, model: str) -> None:
    tok = _peer(shared_data, model)
    wp = segkit.WordPiece.from_tokenizer_json(shared_data / "vocab" / f"{model}.tokenizer.json")
    for added in (True, False):
        assert wp.get_vocab(with_added_tokens=added) == tok.get_vocab(with_added_tokens=added)
        assert wp.get_vocab_size(with_added_tokens=added) == tok.get_vocab_size(with_added_tokens=added)
    mine = wp.get_vocab()
    mine["[CLS]"] = -1  # a copy: changing it changes nothing
    assert wp.token_to_id("[CLS]") == tok.token_to_id("[CLS]")


@pytest.mark.parametrize("model", MODELS)
def test_decode_batch_matches_hf(shared_data: Path, model: str) -> None:
    tok = _peer(shared_data, model)
    wp = segkit.WordPiece.from_tokenizer_json(shared_data / "vocab" / f"{model}.tokenizer.json")
    with SAMPLE.open(encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    ids = [e.ids for e in tok.encode_batch(texts)]
    for skip in (True, False):
        assert wp.decode_batch(ids, skip_special_tokens=skip) == tok.decode_batch(ids, skip_special_tokens=skip)
    # rows of a padded matrix, as from to_numpy()
    matrix = wp.encode_batch(texts[:20], padding=True).to_numpy()["input_ids"]
    assert wp.decode_batch(matrix) == tok.decode_batch(matrix.tolist())


def test_decode_batch_by_hand() -> None:
    wp = segkit.WordPiece.bert(["[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "!"], lowercase=True)
    assert wp.decode_batch([[1, 3, 4, 5, 6, 2], []]) == ["unaffable!", ""]
    assert wp.decode_batch(np.array([[1, 3, 2]]), skip_special_tokens=False) == ["[CLS] un [SEP]"]
    with pytest.raises(TypeError, match="sequence of id sequences"):
        wp.decode_batch("un")
    with pytest.raises(IndexError, match="no token has id 99"):
        wp.decode_batch([[99]])
