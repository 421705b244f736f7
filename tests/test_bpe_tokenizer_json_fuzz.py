"""BPE tokenizer.json files, fuzzed: any value in ``pre_tokenizer``
(chains of Splits, ByteLevel's ``add_prefix_space``), ``post_processor``
(templates), ``normalizer`` and ``added_tokens``, and any byte flipped in
the file, gives a working tokenizer or the loader's error naming the file
(a ValueError: ``BPEFileError``), never another exception, a crash or a
hang.  The checks run in a subprocess, so that a crash in compiled code
fails the test."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_SCRIPT = r"""
import json, random, sys
sys.path.insert(0, sys.argv[1])
from hypothesis import given, settings, strategies as st, HealthCheck
import segkit
from segkit.training import train_bpe

path = sys.argv[2]
train_bpe(["hello world 123 中文 low lower", "ab ab ab"], 300, ["<s>", "</s>"], show_progress=False).to_tokenizer_json(path)
good = json.load(open(path, encoding="utf-8"))
ids = {a["content"]: a["id"] for a in good["added_tokens"]}
good["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
    {"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": False},
    {"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated", "invert": False},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}]}
good["post_processor"] = {"type": "Sequence", "processors": [
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
    {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                              {"Sequence": {"id": "A", "type_id": 0}}],
     "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
     "special_tokens": {"<s>": {"id": "<s>", "ids": [ids["<s>"]], "tokens": ["<s>"]}}}]}

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**40), st.floats(allow_nan=True),
                    st.sampled_from(["", "A", "B", "<s>", "</s>", "x", "Isolated", "Removed", "Split", "ByteLevel",
                                     "Sequence", "Regex", "String", "(", "\\d+", "a*", "^", "$", "NFC",
                                     "TemplateProcessing", "RobertaProcessing", "BertProcessing"]))
values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.sampled_from(
    ["type", "pretokenizers", "processors", "pattern", "Regex", "String", "behavior", "invert", "add_prefix_space",
     "use_regex", "single", "pair", "special_tokens", "id", "ids", "tokens", "type_id", "SpecialToken", "Sequence",
     "sep", "cls", "content", "special", "normalized", "lstrip", "rstrip", "single_word"]), c, max_size=5)),
    max_leaves=12)

def mutate(doc, where, value, at):
    if not at or not isinstance(doc.get(where), (dict, list)):
        doc[where] = value
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
        node[sorted(node)[at[-1] % len(node)]] = value
    elif isinstance(node, list) and node:
        node[at[-1] % len(node)] = value
    return doc

def exercise(raw: bytes):
    with open(path, "wb") as fh:
        fh.write(raw)
    try:
        enc = segkit.BPE.from_tokenizer_json(path)
    except ValueError as e:
        assert path in str(e), e
        return
    for text in ("hello world", "a1234 中文<s>b", "", " x\n"):
        ids = enc.encode(text)
        assert enc.encode_batch([text]) == [ids]
        assert enc.count(text) == len(ids)
        enc.decode(ids)
        enc.encode(text, add_special_tokens=False)

@settings(max_examples=int(sys.argv[3]), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["pre_tokenizer", "post_processor", "normalizer", "added_tokens"]), values,
       st.lists(st.integers(0, 9), max_size=4))
def fields(where, value, at):
    doc = mutate(json.loads(json.dumps(good)), where, value, at)
    exercise(json.dumps(doc).encode("utf-8"))

fields()
raw = json.dumps(good).encode("utf-8")
rng = random.Random(5)
for _ in range(int(sys.argv[3])):
    b = bytearray(raw)
    for _ in range(rng.randint(1, 4)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    exercise(bytes(b))
print("ok")
"""


def test_bpe_tokenizer_json_any_values_and_bytes(tmp_path):
    run = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(REPO), str(tmp_path / "tokenizer.json"), "600"],
        capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), (
        f"exit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-4000:]}"
    )
