"""HF's ``UnicodeScripts`` pre-tokenizer in the staged pipeline
(:func:`segkit.presets.pipeline.pre_tokenizers.unicode_scripts`) against
HF ``tokenizers``, the reference:

* the script table (``hf_scripts.json``) is HF's on every code point:
  measured again from HF by ``tools/gen_hf_scripts.py``, and, independently
  of that tool, probe strings over every code point give HF's parts;
* tokenizer.json files that hypothesis builds (UnicodeScripts alone or in a
  Sequence, a normalizer or none, a WordLevel or a trained BPE model) over
  texts mixing scripts, spaces, marks, emoji and unassigned code points
  give HF's ids, tokens, offsets, word ids;
* the table is package data with its provenance, read only when a file
  uses UnicodeScripts, without ``tokenizers``.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit.presets.pipeline import pre_tokenizers as pre_mod
from segkit.presets.pipeline.normalized import NormalizedText

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")

from test_staged_pipeline import _fields, _hf_fields  # noqa: E402 (after the skip)

ROOT = Path(__file__).resolve().parents[1]
TOOL = ROOT / "tools" / "gen_hf_scripts.py"
CPS = np.r_[0:0xD800, 0xE000:0x110000]


def _tool():
    spec = importlib.util.spec_from_file_location("gen_hf_scripts", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _canonical(table: np.ndarray) -> np.ndarray:
    """The partition, its classes numbered by first code point (so that two
    tables with the same classes under other numbers are equal)."""
    _, first, inverse = np.unique(table, return_index=True, return_inverse=True)
    return np.argsort(np.argsort(first))[inverse]


# ------------------------------------------------------------------ the table
def test_the_table_is_hf_on_every_code_point() -> None:
    ours = pre_mod.script_classes()
    theirs = _tool().measure(tokenizers.pre_tokenizers.UnicodeScripts())
    any_differs = np.flatnonzero((ours[CPS] == 0) != (theirs[CPS] == 0))
    assert not len(any_differs), f"Any or not: {len(any_differs)} code points differ, first U+{CPS[any_differs[0]]:04X}"
    classes_differ = np.flatnonzero(_canonical(ours[CPS]) != _canonical(theirs[CPS]))
    assert not len(classes_differ), f"the classes differ, first at U+{CPS[classes_differ[0]]:04X}"


def _parts(text: str) -> list:
    return [(p.starts[0], p.ends[-1]) for p in pre_mod.unicode_scripts(NormalizedText.of(text))]


def _first_difference(text: str) -> str:
    ours = _parts(text)
    theirs = [o for _, o in tokenizers.pre_tokenizers.UnicodeScripts().pre_tokenize_str(text)]
    if ours == theirs:
        return ""
    i = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    at = (ours + theirs)[i][0] if i < max(len(ours), len(theirs)) else 0
    return f"part {i}: ours {ours[i:i + 2]}, HF {theirs[i:i + 2]}, text {text[max(0, at - 3):at + 4]!r}"


def test_probes_over_every_code_point_give_hf_parts() -> None:
    """HF's parts of these strings pin the partition, whatever the tool does:
    ``r + c`` splits iff ``c`` is not Any and not in ``r``'s class.

    * ``"a" + c`` and ``"中" + c``: which code points are Any (neither splits);
    * ``r + c``, ``r`` the representative of ``c``'s class: each code point is
      in the class of its representative;
    * every pair of representatives: the classes are different;
    * all code points in order, and the representatives among Any code points."""
    table = pre_mod.script_classes()
    classes, first = np.unique(table[CPS], return_index=True)
    reps = CPS[first[classes != 0]].tolist()
    own = np.full(256, ord("a"))  # (Any: "a")
    own[classes[classes != 0]] = reps
    own = own[table[CPS]]
    probes = {
        "after a": "".join("a" + chr(c) for c in CPS.tolist()),
        "after Han": "".join("\u4e2d" + chr(c) for c in CPS.tolist()),
        "after its class": "".join(chr(r) + chr(c) for r, c in zip(own.tolist(), CPS.tolist())),
        "pairs": "".join(chr(r) + chr(s) for r in reps for s in reps),
        "in order": "".join(map(chr, CPS.tolist())),
        "amid Any": "".join(chr(r) + " \u0378\U000E0080" for r in reps),
    }
    bad = {name: d for name, text in probes.items() if (d := _first_difference(text))}
    assert not bad, bad


@pytest.mark.parametrize("text, parts", [
    ("\u3069\u3053\u3067\u751f\u308c\u3002Yes", ["\u3069\u3053\u3067\u751f\u308c", "\u3002", "Yes"]),
    ("Apples are \u308a\u3093\u3054 \u6797\u6a8e", ["Apples are ", "\u308a\u3093\u3054 \u6797\u6a8e"]),
    ("  lead", ["lead"]), ("   ", []), ("", []), ("a1-b", ["a", "1-", "b"]), ("e\u0301", ["e", "\u0301"]),
    ("\u30a2\u30fc\u3042\u4e2d", ["\u30a2\u30fc\u3042\u4e2d"]), ("a\u0378b", ["a\u0378b"]),
    ("\u0378 a", ["a"]), ("a\u3000b", ["a", "\u3000", "b"]), ("\u0434 \U0001F600!", ["\u0434 ", "\U0001F600!"]),
])
def test_hf_examples(text: str, parts: list) -> None:
    got = [p.text for p in pre_mod.unicode_scripts(NormalizedText.of(text))]
    assert got == parts == [s for s, _ in tokenizers.pre_tokenizers.UnicodeScripts().pre_tokenize_str(text)]


# ------------------------------------------------------------------ whole files
#: Pieces of text: Latin, Han, Hiragana, Katakana (and U+30FC), Cyrillic,
#: Arabic, Greek, Hangul, Thai, digits, punctuation, spaces, combining marks
#: (Inherited), emoji (with a modifier and a joiner), private use, unassigned.
PIECES = ["a", "b", "Zo", "\u00e9", "\u4e2d", "\u6797\u6a8e", "\u308a", "\u3093", "\u30a2", "\u30fc", "\u0434",
          "\u0416", "\u0628", "\u0639", "\u03a9", "\ud55c", "\u0e01", "1", "7", "\u0661", "\uff11", ".", "!", "-",
          "\u3001", "\u3002", "\u00bf", " ", "  ", "\t", "\n", "\u3000", "\u00a0", "\u0301", "\u0316", "\u064b",
          "\u200d", "\U0001F600", "\U0001F44D\U0001F3FD", "\ue000", "\u0378", "\U000E0080", "\U0010FFFF",
          "\u2581", "\uff21"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


def _p(kind: str):
    p = tokenizers.pre_tokenizers
    return {"scripts": p.UnicodeScripts, "whitespace": p.Whitespace, "split": p.WhitespaceSplit,
            "digits": lambda: p.Digits(True), "punct": p.Punctuation, "bert": p.BertPreTokenizer,
            "metaspace": lambda: p.Metaspace("\u2581", "always", True), "char": lambda: p.CharDelimiterSplit("-"),
            }[kind]()


PRE = st.sampled_from([["scripts"], ["whitespace", "scripts"], ["scripts", "whitespace"], ["split", "scripts"],
                       ["scripts", "digits"], ["bert", "scripts"], ["scripts", "punct"], ["metaspace", "scripts"],
                       ["char", "scripts"], ["scripts", "scripts"]])
NORM = st.sampled_from([None, "NFD", "NFKC", "Lowercase"])


def _build(pres: list, norm: str | None, model: str, texts: list, data) -> "tokenizers.Tokenizer":
    pre = tokenizers.pre_tokenizers.Sequence([_p(k) for k in pres]) if len(pres) > 1 else _p(pres[0])
    normalizer = getattr(tokenizers.normalizers, norm)() if norm else None
    if model == "wordlevel":  # words: some of HF's own parts, so that some hit
        probe = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
        probe.pre_tokenizer = pre
        if normalizer is not None:
            probe.normalizer = normalizer
        parts = sorted({s for t in texts for s in probe.encode(t).tokens} - {"[UNK]"})
        words = data.draw(st.lists(st.sampled_from(parts), unique=True)) if parts else []
        tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(
            {w: i for i, w in enumerate(["[UNK]"] + words)}, unk_token="[UNK]"))
    else:
        tok = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>", fuse_unk=data.draw(st.booleans())))
    tok.pre_tokenizer = pre
    if normalizer is not None:
        tok.normalizer = normalizer
    if model == "bpe":  # trained on the texts, its alphabet cut short: some characters are <unk>
        trainer = tokenizers.trainers.BpeTrainer(vocab_size=data.draw(st.integers(20, 120)), special_tokens=["<unk>"],
                                                 limit_alphabet=data.draw(st.integers(5, 40)), show_progress=False)
        tok.train_from_iterator(texts + PIECES, trainer)
    return tok


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(pres=PRE, norm=NORM, model=st.sampled_from(["wordlevel", "bpe"]), texts=st.lists(TEXT, min_size=1, max_size=4),
       data=st.data())
def test_files_equal_hf(tmp_path_factory, pres, norm, model, texts, data) -> None:
    tok = _build(pres, norm, model, texts, data)
    path = tmp_path_factory.mktemp("scripts") / "tokenizer.json"
    tok.save(str(path))
    theirs = tokenizers.Tokenizer.from_str(path.read_text(encoding="utf-8"))
    ours = segkit.Tokenizer.from_file(path)
    for t in texts:
        assert _fields(ours.encode(t)) == _hf_fields(theirs.encode(t), theirs), (t, pres, norm, model)
    assert [_fields(e) for e in ours.encode_batch(texts)] == [_hf_fields(e, theirs) for e in theirs.encode_batch(texts)]
    a, b = texts[0], texts[-1]
    assert _fields(ours.encode(a, b)) == _hf_fields(theirs.encode(a, b), theirs)


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    """A file with UnicodeScripts alone and a WordLevel of a few words: ours, HF's."""
    vocab = {w: i for i, w in enumerate(["[UNK]", "a", "ab ", "\u4e2d", "\u3042\u30a2", "1", "!", "\u0301"])}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.UnicodeScripts()
    path = tmp_path_factory.mktemp("alone") / "tokenizer.json"
    tok.save(str(path))
    return segkit.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(texts=st.lists(st.lists(st.characters(exclude_categories=["Cs"]) | st.sampled_from(PIECES + ["ab ", "1!"]),
                              max_size=12).map("".join), min_size=1, max_size=4))
def test_any_code_points_equal_hf(alone, texts) -> None:
    ours, theirs = alone
    for t in texts:
        assert _fields(ours.encode(t)) == _hf_fields(theirs.encode(t), theirs), t


# ------------------------------------------------------------------ data, loading
def test_the_table_is_package_data_with_provenance() -> None:
    data = json.loads(pre_mod._SCRIPTS.read_text(encoding="utf-8"))
    assert data["source"].startswith("measured from HuggingFace tokenizers ") and data["tokenizers"] in data["source"]
    assert "tools/gen_hf_scripts.py" in data["source"] and "tools/gen_hf_scripts.py" in data["regenerate"]
    assert TOOL.is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pre_mod._SCRIPTS.name in config["tool"]["setuptools"]["package-data"]["segkit.presets.pipeline"]


def test_the_table_is_read_only_for_a_file_that_uses_it(tmp_path: Path) -> None:
    def doc(pre):
        return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
                "pre_tokenizer": pre, "post_processor": None, "decoder": None,
                "model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 1}, "unk_token": "[UNK]"}}
    (tmp_path / "plain.json").write_text(json.dumps(doc({"type": "Whitespace"})), encoding="utf-8")
    (tmp_path / "scripts.json").write_text(json.dumps(doc({"type": "UnicodeScripts"})), encoding="utf-8")
    script = (
        "import json, sys, segkit\n"
        "from segkit.presets.pipeline import pre_tokenizers as p\n"
        "t = segkit.Tokenizer.from_file(sys.argv[1] + '/plain.json'); t.encode('a b')\n"
        "before = p.script_classes.cache_info().currsize\n"
        "t = segkit.Tokenizer.from_file(sys.argv[1] + '/scripts.json')\n"
        "print(json.dumps([before, p.script_classes.cache_info().currsize, t.encode('a\\u4e2d').tokens,"
        " 'tokenizers' in sys.modules]))\n")
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout) == [0, 1, ["a", "[UNK]"], False]


def test_the_refusal_names_unicode_scripts_among_those_read(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None,
                                "decoder": None, "pre_tokenizer": {"type": "FixedLength", "length": 5},
                                "model": {"type": "WordLevel", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}}),
                    encoding="utf-8")
    with pytest.raises(ValueError, match=r"CharDelimiterSplit and UnicodeScripts; found \"FixedLength\""):
        segkit.Tokenizer.from_file(path)
