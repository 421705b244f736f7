"""``WordPiece.__call__`` against transformers' ``BertTokenizerFast.__call__``
(and ``PreTrainedTokenizerFast`` on HF's ``tokenizer.json``) on the
multilingual sample: the same keys, values, types and dtypes, or both
raise.  Skips with a reason without transformers; ``"pt"`` cases skip
without torch."""

from __future__ import annotations

import json
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit

transformers = pytest.importorskip("transformers", reason="transformers (the peer of WordPiece.__call__) is not installed")
try:
    import torch
except ImportError:  # "pt" cases skip
    torch = None

SAMPLE = Path(__file__).resolve().parent / "data" / "multilingual-sample.jsonl"
VOCABS = Path(__file__).resolve().parents[1] / "vocabularies"
with SAMPLE.open(encoding="utf-8") as _f:
    TEXTS = [json.loads(line)["text"] for line in _f]


def bert_fast(path: Path, lower: bool):
    """``BertTokenizerFast`` on a vocabulary file.  (transformers 5 ignores
    ``vocab_file=`` when called directly and needs ``vocab=``.)"""
    n = len(path.read_text(encoding="utf-8").split("\n")) - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = transformers.BertTokenizerFast(vocab_file=str(path), do_lower_case=lower)
        if len(tok) < n:
            tok = transformers.BertTokenizerFast(vocab=str(path), do_lower_case=lower)
    assert len(tok) == n
    return tok


@pytest.fixture(scope="module", params=[("bert-base-uncased", True), ("bert-base-multilingual-cased", False)],
                ids=["uncased", "cased"])
def both(request):
    name, lower = request.param
    path = VOCABS / f"{name}.txt"
    return segkit.WordPiece.bert(path, lowercase=lower), bert_fast(path, lower)


def run(tok, *args, **kwargs):
    """``tok(*args, **kwargs)`` or the exception it raised.  (transformers
    reads ``truncation_side`` from the tokenizer, not from the call.)"""
    side = kwargs.get("truncation_side")
    old = getattr(tok, "truncation_side", None)
    if side is not None and not isinstance(tok, segkit.WordPiece):
        tok.truncation_side = side
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return tok(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 (tokenizers raises a bare Exception, or panics)
            if isinstance(e, (KeyboardInterrupt, SystemExit)):
                raise
            return e
        finally:
            if side is not None and not isinstance(tok, segkit.WordPiece):
                tok.truncation_side = old


def same_value(a, b) -> bool:
    if isinstance(a, list):
        return type(b) is list and a == b
    if torch is not None and isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())
    assert isinstance(a, np.ndarray), type(a)
    if not (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape):
        return False
    if a.dtype == object:  # ragged rows
        return all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b)


def check(wp, hf, *args, **kwargs) -> None:
    theirs = run(hf, *args, **kwargs)
    mine = run(wp, *args, **kwargs)
    if isinstance(theirs, BaseException):  # (a panic of tokenizers is not an Exception)
        assert isinstance(mine, Exception), f"transformers raised {theirs!r}, segkit did not"
        return
    assert not isinstance(mine, BaseException), f"segkit raised {mine!r}"
    assert list(mine.keys()) == list(theirs.keys())
    for key in theirs:
        assert same_value(theirs[key], mine[key]), (key, str(theirs[key])[:200], str(mine[key])[:200])
        assert same_value(theirs[key], getattr(mine, key))


CASES = [
    ((TEXTS[5],), {}),
    ((TEXTS[:12],), {}),
    ((TEXTS[3], TEXTS[4]), {}),
    ((TEXTS[:12], TEXTS[12:24]), {}),
    ((TEXTS[3], ""), {}),  # an empty pair is no pair (transformers)
    ((TEXTS[:12],), dict(padding=True, return_tensors="np")),
    ((TEXTS[:12],), dict(return_tensors="np", return_offsets_mapping=True, return_length=True)),  # ragged
    ((TEXTS[:12],), dict(max_length=10)),  # max_length alone truncates
    ((TEXTS[:12],), dict(max_length=10, padding=True)),  # ... not with padding
    ((TEXTS[:12],), dict(truncation=True)),  # no model_max_length: no truncation
    ((TEXTS[:12],), dict(padding="max_length")),  # ... and no padding
    ((TEXTS[:12], TEXTS[40:52]), dict(max_length=24, truncation="only_second", padding="max_length")),
    ((TEXTS[:12], TEXTS[40:52]), dict(max_length=24, truncation="only_first")),
    ((TEXTS[:12],), dict(max_length=20, truncation=True, padding=True, pad_to_multiple_of=8)),
    ((TEXTS[:12],), dict(max_length=20, truncation=True, padding=True, pad_to_multiple_of=6)),  # error
    ((TEXTS[:12],), dict(padding="longest", pad_to_multiple_of=7, return_special_tokens_mask=True)),
    ((TEXTS[7],), dict(return_tensors="np", return_length=True, return_offsets_mapping=True)),
    ((TEXTS[7],), dict(return_length=True, return_offsets_mapping=True, return_special_tokens_mask=True)),
    ((TEXTS[7],), dict(add_special_tokens=False, return_token_type_ids=False, return_attention_mask=False)),
    ((TEXTS[7].split(),), dict(is_split_into_words=True, return_offsets_mapping=True)),
    (([t.split() for t in TEXTS[:9]],), dict(is_split_into_words=True, padding=True, return_tensors="np")),
    (([t.split() for t in TEXTS[:9]], [t.split() for t in TEXTS[9:18]]), dict(is_split_into_words=True)),
    (([],), {}),  # transformers: IndexError
    ((TEXTS[:3], TEXTS[:2]), {}),  # lengths differ
    ((TEXTS[:3], "x"), {}),
    ((3,), {}),
    ((TEXTS[:3],), dict(padding="sideways")),
    ((TEXTS[:3],), dict(truncation="middle", max_length=5)),
    # overflow, stride, sides
    ((TEXTS[:6],), dict(max_length=12, truncation=True, stride=3, return_overflowing_tokens=True)),
    ((TEXTS[:6],), dict(max_length=12, truncation=True, stride=3, return_overflowing_tokens=True, padding=True,
                        return_tensors="np", return_offsets_mapping=True, return_length=True)),
    ((TEXTS[5],), dict(max_length=10, stride=2, return_overflowing_tokens=True, return_offsets_mapping=True,
                       return_length=True, return_special_tokens_mask=True)),
    ((TEXTS[5],), dict(max_length=10, stride=2, return_overflowing_tokens=True, return_tensors="np")),
    ((TEXTS[:4], TEXTS[4:8]), dict(max_length=24, truncation="only_second", stride=2, return_overflowing_tokens=True)),
    ((TEXTS[:4], TEXTS[4:8]), dict(max_length=24, truncation="only_first", stride=2, return_overflowing_tokens=True)),
    ((TEXTS[:4], TEXTS[4:8]), dict(max_length=20, truncation=True, stride=1, return_overflowing_tokens=True)),
    ((TEXTS[:6],), dict(max_length=12, truncation=True, stride=10, return_overflowing_tokens=True)),  # too large
    ((TEXTS[:6],), dict(max_length=12, truncation=True, stride=4)),  # no overflow asked: none returned
    ((TEXTS[:6],), dict(max_length=12, truncation=True, truncation_side="left", return_overflowing_tokens=True)),
    ((TEXTS[:6],), dict(padding=True, padding_side="left", return_tensors="np", return_offsets_mapping=True)),
    ((TEXTS[:6], TEXTS[6:12]), dict(padding="max_length", max_length=64, padding_side="left", pad_to_multiple_of=16,
                                    truncation=True, truncation_side="left", return_special_tokens_mask=True)),
    ((TEXTS[:6],), dict(max_length=16, truncation=True, stride=3, return_overflowing_tokens=True, padding=True,
                        padding_side="left", truncation_side="left", return_tensors="np")),
    # issue 27: max_length below a pair's special tokens, with a stride:
    # transformers checks the stride against a single text's (and raises)
    ((TEXTS[3], TEXTS[4]), dict(max_length=2, truncation=True, stride=1)),
    ((TEXTS[:3], TEXTS[3:6]), dict(max_length=2, truncation="only_second", stride=2, return_overflowing_tokens=True)),
    ((TEXTS[3], TEXTS[4]), dict(max_length=1, truncation=True, stride=1)),  # 1 - 2 wraps: no check, no truncation
    ((TEXTS[3], TEXTS[4]), dict(max_length=2, truncation=True, stride=0)),
    # issue 27: padded length rounded up below the encoding's own length
    ((TEXTS[5],), dict(padding="max_length", max_length=7, pad_to_multiple_of=8)),
    ((TEXTS[5],), dict(padding="max_length", max_length=7, pad_to_multiple_of=8, return_tensors="np")),
]


@pytest.mark.parametrize("args, kwargs", CASES)
def test_call_matches_transformers(both, args, kwargs) -> None:
    check(*both, *args, **kwargs)


def test_torch_tensors_match(both) -> None:
    pytest.importorskip("torch", reason="PyTorch (needed for return_tensors='pt') is not installed")
    wp, hf = both
    check(wp, hf, TEXTS[:12], padding=True, return_tensors="pt", return_offsets_mapping=True, return_length=True)
    check(wp, hf, TEXTS[8], TEXTS[9], return_tensors="pt", return_special_tokens_mask=True)
    check(wp, hf, TEXTS[:12], return_tensors="pt")  # ragged: both raise
    out = wp(TEXTS[:4], padding=True, return_tensors="pt")
    assert out["input_ids"].dtype == torch.int64 and out.to("cpu") is out


def test_without_torch_pt_is_import_error(monkeypatch) -> None:
    wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a"])
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch fails
    with pytest.raises(ImportError, match="needs PyTorch"):
        wp("a", return_tensors="pt")
    assert wp("a", return_tensors="np")["input_ids"].tolist() == [[2, 4, 3]]


def test_model_max_length(both) -> None:
    wp, hf = both
    wp.model_max_length = hf.model_max_length = 16
    try:
        check(wp, hf, TEXTS[:12], truncation=True)
        check(wp, hf, TEXTS[:12], padding="max_length")
        check(wp, hf, TEXTS[:12], TEXTS[12:24], truncation="only_second", padding="max_length", return_tensors="np")
    finally:
        del wp.model_max_length
        hf.model_max_length = transformers.tokenization_utils_base.VERY_LARGE_INTEGER


def test_tokenizer_json_defaults_are_not_used(shared_data: Path) -> None:
    """From HF's tokenizer.json, against PreTrainedTokenizerFast; a default
    truncation saved in the file changes neither (the call decides)."""
    path = shared_data / "vocab" / "bert-base-multilingual-cased.tokenizer.json"
    wp = segkit.WordPiece.from_tokenizer_json(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = transformers.PreTrainedTokenizerFast(
            tokenizer_file=str(path), pad_token="[PAD]", model_input_names=["input_ids", "token_type_ids", "attention_mask"]
        )
    for args, kwargs in CASES[:22] + CASES[-13:]:
        check(wp, hf, *args, **kwargs)


def test_tokenizer_defaults_do_not_change_the_call(both) -> None:
    """transformers resets the backend's truncation and padding on every
    call: segkit's defaults (enable_truncation / enable_padding, or a
    tokenizer.json's) leave the call's result alone, except the padding
    side (transformers' padding_side attribute comes from the same file)."""
    wp, hf = both
    wp.enable_truncation(8, stride=2)
    wp.enable_padding(length=40, pad_to_multiple_of=16)
    try:
        for args, kwargs in CASES[:14]:
            check(wp, hf, *args, **kwargs)
    finally:
        wp.no_truncation()
        wp.no_padding()


def test_result_is_a_dict_with_attributes() -> None:
    wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"])
    out = wp(["a b", "b"], padding=True)
    assert isinstance(out, dict)
    assert out.input_ids is out["input_ids"] == [[2, 4, 5, 3], [2, 5, 3, 0]]
    assert out.tokens(1) == ["[CLS]", "b", "[SEP]", "[PAD]"] and out.word_ids(0) == [None, 0, 1, None]
    with pytest.raises(AttributeError):
        out.labels
    again = pickle.loads(pickle.dumps(out))
    assert again == out and again.tokens(0) == out.tokens(0)
    with pytest.raises(TypeError):
        wp("a", paddding=True)  # a misspelt argument is an error


# ------------------------------------------------------------- hypothesis
def _inputs(draw):
    kind = draw(st.sampled_from(["str", "list", "pair", "pairs", "words", "words_batch", "words_pairs"]))
    i = draw(st.integers(0, len(TEXTS) - 1))
    n = draw(st.integers(1, 6))
    batch = [TEXTS[(i + 17 * k) % len(TEXTS)] for k in range(n)]
    other = [TEXTS[(i + 31 * k + 5) % len(TEXTS)] for k in range(n)]
    if kind == "str":
        return (batch[0],), {}
    if kind == "list":
        return (batch,), {}
    if kind == "pair":
        return (batch[0], other[0]), {}
    if kind == "pairs":
        return (batch, other), {}
    if kind == "words":
        return (batch[0].split(),), {"is_split_into_words": True}
    if kind == "words_batch":
        return ([t.split() for t in batch],), {"is_split_into_words": True}
    return ([t.split() for t in batch], [t.split() for t in other]), {"is_split_into_words": True}


@st.composite
def calls(draw):
    args, kwargs = _inputs(draw)
    tensors = [None, "np"] + (["pt"] if torch is not None else [])
    kwargs.update(
        add_special_tokens=draw(st.booleans()),
        padding=draw(st.sampled_from([False, True, "longest", "max_length", "do_not_pad"])),
        truncation=draw(st.sampled_from([None, False, True, "longest_first", "only_first", "only_second", "do_not_truncate"])),
        max_length=draw(st.none() | st.integers(0, 48)),
        pad_to_multiple_of=draw(st.none() | st.integers(1, 9)),
        return_tensors=draw(st.sampled_from(tensors)),
        return_offsets_mapping=draw(st.booleans()),
        return_special_tokens_mask=draw(st.booleans()),
        return_attention_mask=draw(st.sampled_from([None, True, False])),
        return_token_type_ids=draw(st.sampled_from([None, True, False])),
        return_length=draw(st.booleans()),
        stride=draw(st.sampled_from([0, 0, 1, 2, 5])),
        return_overflowing_tokens=draw(st.booleans()),
        padding_side=draw(st.sampled_from([None, "right", "left"])),
        truncation_side=draw(st.sampled_from([None, "right", "left"])),
    )
    return args, kwargs


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(call=calls())
def test_argument_combinations_match_transformers(both, call) -> None:
    args, kwargs = call
    check(*both, *args, **kwargs)
