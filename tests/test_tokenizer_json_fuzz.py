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
    wp.encode("a ab b")
    wp.encode("a ab b", "b a")
    wp.encode_batch(["a", "ab b a b"])

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
