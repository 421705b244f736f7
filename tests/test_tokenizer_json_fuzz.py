"""tokenizer.json's post-processing fields, fuzzed: any values in
``post_processor``, ``truncation`` and ``padding`` give a working tokenizer
or a ValueError naming the file, never another exception, a crash or a hang.

The fields are the ones this reader learnt last (templates in HF's syntax,
truncation and padding directions, stride, ``pad_type_id``).  The checks
run in a subprocess, so that a crash in compiled code fails the test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from hypothesis import given, settings, strategies as st, HealthCheck
import segkit

base = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##b", "b"])
path = sys.argv[2]
base.save_tokenizer_json(path)
good = json.load(open(path, encoding="utf-8"))

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**40), st.floats(allow_nan=True),
                    st.sampled_from(["", "A", "B", "$A", "$B:1", "[CLS]", "[SEP]", "x", "left", "right",
                                     "longest_first", "only_second", "BatchLongest", "Fixed",
                                     "TemplateProcessing", "BertProcessing", "RobertaProcessing"]))
values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=4),
                                                   st.dictionaries(st.sampled_from(
                                                       ["type", "single", "pair", "special_tokens", "id", "ids",
                                                        "tokens", "type_id", "SpecialToken", "Sequence",
                                                        "max_length", "stride", "strategy", "direction",
                                                        "pad_id", "pad_type_id", "pad_token", "pad_to_multiple_of",
                                                        "Fixed", "sep", "cls"]), c, max_size=5)), max_leaves=12)

def mutate(doc, where, draw_value, at):
    # Replace the value at a path inside doc[where] (or doc[where] itself).
    if not at or not isinstance(doc.get(where), (dict, list)):
        doc[where] = draw_value
        return doc
    node = doc[where]
    for step in at[:-1]:
        if isinstance(node, dict) and node:
            node = node[sorted(node)[step % len(node)]]
        elif isinstance(node, list) and node:
            node = node[step % len(node)]
        else:
            break
    if isinstance(node, dict) and node:
        node[sorted(node)[at[-1] % len(node)]] = draw_value
    elif isinstance(node, list) and node:
        node[at[-1] % len(node)] = draw_value
    return doc

@settings(max_examples=int(sys.argv[3]), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["post_processor", "truncation", "padding"]), values, st.lists(st.integers(0, 9), max_size=4))
def check(where, value, at):
    doc = json.loads(json.dumps(good))
    if where != "post_processor" and doc.get(where) is None:
        doc[where] = {"max_length": 8, "stride": 0, "strategy": "LongestFirst", "direction": "Right"} \
            if where == "truncation" else {"strategy": "BatchLongest", "direction": "Right", "pad_id": 0,
                                           "pad_type_id": 0, "pad_token": "[PAD]", "pad_to_multiple_of": None}
    doc = mutate(doc, where, value, at)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh)
    try:
        wp = segkit.WordPiece.from_tokenizer_json(path)
    except ValueError as e:
        assert path in str(e), e
        return
    for call in (lambda: wp.encode("a ab b"), lambda: wp.encode("a ab b", "b a"),
                 lambda: wp.encode_batch(["a", "ab b a b"])):
        try:
            call()
        except ValueError as e:
            # A file's stride that does not fit where a text must be cut
            # (HF panics there): the library's error, naming the stride.
            assert "stride=" in str(e), e

check()
print("ok")
"""


def test_tokenizer_json_post_processing_fields_any_values(tmp_path):
    run = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(REPO), str(tmp_path / "tokenizer.json"), "300"],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), (
        f"exit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-4000:]}"
    )


def test_a_files_stride_is_checked_where_a_text_is_cut_as_hf_does(tmp_path):
    """A tokenizer.json whose truncation stride (7) exceeds max_length (8)
    minus the template's special tokens: HF loads it and encodes what fits,
    and fails only where a text must be cut; so does segkit (with a
    ValueError where HF panics).  Found by the fuzz above."""
    import json

    import pytest

    tokenizers = pytest.importorskip("tokenizers", reason="the peer HuggingFace tokenizers is not installed")
    import segkit

    path = tmp_path / "tokenizer.json"
    segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##b", "b"]).save_tokenizer_json(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["truncation"] = {"max_length": 8, "stride": 7, "strategy": "LongestFirst", "direction": "Right"}
    path.write_text(json.dumps(doc), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(path))
    wp = segkit.WordPiece.from_tokenizer_json(path)
    assert wp.encode("a ab b").ids == hf.encode("a ab b").ids == [2, 4, 4, 5, 6, 3]
    with pytest.raises(ValueError, match="stride=7"):
        wp.encode("a a a a a a a a a a a")


def test_a_files_max_length_below_the_special_tokens_truncates_nothing_as_hf(tmp_path):
    """A tokenizer.json whose truncation max_length is below the template's
    special tokens: HF truncates nothing (the subtraction wraps around), and
    so does segkit.  Found by the fuzz above (max_length 0)."""
    import json

    import pytest

    tokenizers = pytest.importorskip("tokenizers", reason="the peer HuggingFace tokenizers is not installed")
    import segkit

    path = tmp_path / "tokenizer.json"
    segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##b", "b"]).save_tokenizer_json(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    for max_length in (0, 1, 2, 3):
        doc["truncation"] = {"max_length": max_length, "stride": 0, "strategy": "LongestFirst", "direction": "Right"}
        path.write_text(json.dumps(doc), encoding="utf-8")
        hf = tokenizers.Tokenizer.from_file(str(path))
        wp = segkit.WordPiece.from_tokenizer_json(path)
        for args in (("a ab b",), ("a ab b", "b a")):
            assert wp.encode(*args).ids == hf.encode(*args).ids, (max_length, args)
