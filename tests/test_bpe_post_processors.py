"""tokenizer.json post-processors that add special tokens around a text
(TemplateProcessing: Llama 3's ``<|begin_of_text|>``; RobertaProcessing;
BertProcessing; Sequences with ByteLevel), against HuggingFace tokenizers.

* Any template: a trained tokenizer.json given a hypothesis-drawn
  post-processor; ``encode``, ``encode_batch`` (lists and flat), ``count``
  and ``add_special_tokens=False`` against ``Tokenizer.encode``.
* Llama 3 as the Hub ships it: the ``llama-models`` package's tiktoken file
  (Meta's licence: read where it is installed, never bundled), converted by
  transformers' ``TikTokenConverter``, with its special tokens and the
  post-processor of meta-llama's tokenizer.json.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit.training import train_bpe

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers (HuggingFace) is not installed")

SAMPLE = Path(__file__).parent / "data" / "multilingual-sample.jsonl"
SPECIALS = ["<s>", "</s>", "<|end|>"]


def _special(name: str, type_id: int = 0) -> dict:
    return {"SpecialToken": {"id": name, "type_id": type_id}}


_A = {"Sequence": {"id": "A", "type_id": 0}}
_B = {"Sequence": {"id": "B", "type_id": 1}}


def _trained(tmp_path: Path) -> tuple[dict, dict]:
    trained = train_bpe(["hello world, low lower lowest " * 3, "新しい 中文 123"], 320, SPECIALS, show_progress=False)
    path = tmp_path / "tokenizer.json"
    trained.to_tokenizer_json(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    ids = {a["content"]: a["id"] for a in data["added_tokens"]}
    return data, ids


def _processor(kind: str, before: list[str], after: list[str], ids: dict) -> dict:
    if kind == "Roberta":
        return {"type": "RobertaProcessing", "sep": ["</s>", ids["</s>"]], "cls": ["<s>", ids["<s>"]],
                "trim_offsets": True, "add_prefix_space": False}
    if kind == "Bert":
        return {"type": "BertProcessing", "sep": ["</s>", ids["</s>"]], "cls": ["<s>", ids["<s>"]]}
    names = sorted(set(before + after))
    return {"type": "TemplateProcessing", "single": [*map(_special, before), _A, *map(_special, after)],
            "pair": [*map(_special, before), _A, _B, *map(_special, after)],
            "special_tokens": {n: {"id": n, "ids": [ids[n]], "tokens": [n]} for n in names}}


_texts = st.lists(st.lists(st.sampled_from(["hello", " world", "low", "er", "中文", " ", "1", "<s>", "</s>",
                                            "<|end|>", "\n", "!"]), max_size=12).map("".join), min_size=1, max_size=6)


@given(st.sampled_from(["Template", "Roberta", "Bert"]), st.lists(st.sampled_from(SPECIALS), max_size=2),
       st.lists(st.sampled_from(SPECIALS), max_size=2), st.booleans(), _texts)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
def test_any_post_processor_matches_hf(tmp_path, kind, before, after, in_sequence, texts):
    data, ids = _trained(tmp_path)
    post = _processor(kind, before, after, ids)
    if in_sequence:
        post = {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True}, post]}
    data["post_processor"] = post
    path = tmp_path / "post.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    ref = tokenizers.Tokenizer.from_file(str(path))
    enc = segkit.BPE.from_tokenizer_json(path)
    expected = [e.ids for e in ref.encode_batch(texts)]
    plain = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
    assert [enc.encode(t) for t in texts] == expected
    assert enc.encode_batch(texts) == expected
    ids_flat, rows = enc.encode_batch(texts, flat=True)
    assert [ids_flat[a:b].tolist() for a, b in zip(rows[:-1], rows[1:])] == expected
    assert [enc.count(t) for t in texts] == [len(e) for e in expected]
    assert [enc.encode(t, add_special_tokens=False) for t in texts] == plain
    assert enc.encode_batch(texts, add_special_tokens=False) == plain
    for e in expected:
        assert enc.decode(e) == ref.decode(e, skip_special_tokens=False)


def test_template_survives_save_and_pickle(tmp_path):
    data, ids = _trained(tmp_path)
    data["post_processor"] = _processor("Template", ["<s>"], ["</s>", "<|end|>"], ids)
    path = tmp_path / "post.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    enc = segkit.BPE.from_tokenizer_json(path)
    expected = tokenizers.Tokenizer.from_file(str(path)).encode("hello world").ids
    assert enc.encode("hello world") == expected and expected[0] == ids["<s>"]
    enc.save(tmp_path / "m.segkit")
    for copy in (segkit.load(tmp_path / "m.segkit"), pickle.loads(pickle.dumps(enc))):
        assert copy.encode("hello world") == expected


def test_arrow_adds_the_template_too(tmp_path):
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    data, ids = _trained(tmp_path)
    data["post_processor"] = _processor("Roberta", [], [], ids)
    path = tmp_path / "post.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    enc = segkit.BPE.from_tokenizer_json(path)
    texts = ["hello world", "", "中文"]
    assert enc.encode_arrow(pa.array(texts)).to_pylist() == enc.encode_batch(texts)
    assert enc.encode_arrow(pa.array(texts), add_special_tokens=False).to_pylist() == enc.encode_batch(
        texts, add_special_tokens=False)


@pytest.mark.parametrize("post,match", [
    ({"type": "TemplateProcessing", "single": [_special("<x>"), _A], "pair": [_A, _B], "special_tokens": {}},
     r"post_processor\.special_tokens\['<x>'\].*not in special_tokens"),
    ({"type": "RobertaProcessing", "sep": ["</s>", 5], "cls": ["<s>", 0]}, r"post_processor\.sep.*'</s>' has id"),
    ({"type": "Sequence", "processors": [{"type": "BertProcessing", "sep": ["</s>", -1], "cls": ["<s>", 0]}]},
     r"post_processor\.processors\[0\]\.cls: .<s>. has id"),
    ({"type": "TemplateProcessing", "single": [_special("<s>")], "pair": [_A, _B],
      "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}}}, r"single.*\$A"),
    ({"type": "ElectraProcessing"}, r"post_processor: segkit\.BPE runs the post-processors"),
])
def test_bad_post_processors_are_named(tmp_path, post, match):
    data, ids = _trained(tmp_path)
    if post["type"] == "RobertaProcessing":
        post = {**post, "sep": ["</s>", ids["</s>"] + 1], "cls": ["<s>", ids["<s>"]]}
    data["post_processor"] = post
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(segkit.VocabularyError, match=match):
        segkit.BPE.from_tokenizer_json(path)


# ------------------------------------------------------------- Llama 3
@pytest.fixture(scope="module")
def llama3(tmp_path_factory):
    pytest.importorskip("transformers", reason="transformers is not installed (its TikTokenConverter writes the file)")
    try:
        import llama_models
        from llama_models.llama3.tokenizer import Tokenizer as Llama3
    except ImportError:
        pytest.skip("llama-models is not installed (it ships Llama 3's tokenizer file)")
    from transformers.convert_slow_tokenizer import TikTokenConverter

    model = Path(llama_models.__file__).parent / "llama3" / "tokenizer.model"
    reference = Llama3.get_instance()
    specials = sorted(reference.special_tokens, key=reference.special_tokens.get)
    tok = TikTokenConverter(vocab_file=str(model), pattern=Llama3.pat_str).converted()
    tok.add_special_tokens([tokenizers.AddedToken(s, special=True, normalized=False) for s in specials])
    path = tmp_path_factory.mktemp("llama3") / "tokenizer.json"
    tok.save(str(path))
    data = json.loads(path.read_text(encoding="utf-8"))
    bos = "<|begin_of_text|>"
    data["post_processor"] = {"type": "Sequence", "processors": [  # as in meta-llama's tokenizer.json
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        {"type": "TemplateProcessing", "single": [_special(bos), _A],
         "pair": [_special(bos), _A, _special(bos, 1), _B],
         "special_tokens": {bos: {"id": bos, "ids": [reference.special_tokens[bos]], "tokens": [bos]}}}]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return segkit.from_pretrained(path), tokenizers.Tokenizer.from_file(str(path)), reference


def test_llama3_hub_file_adds_begin_of_text(llama3):
    enc, ref, meta = llama3
    texts = [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    texts += ["<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"]
    expected = [e.ids for e in ref.encode_batch(texts)]
    assert enc.encode_batch(texts) == expected
    assert [enc.encode(t) for t in texts[:40]] == expected[:40]
    # Meta's own tokenizer, with bos and the special tokens allowed, agrees
    assert [meta.encode(t, bos=True, eos=False, allowed_special="all") for t in texts[:40]] == expected[:40]
    assert enc.encode(texts[0], add_special_tokens=False) == expected[0][1:]
