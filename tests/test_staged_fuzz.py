"""tokenizer.json files read by the staged pipeline, fuzzed: any values in
``normalizer``, ``pre_tokenizer``, ``decoder``, ``model`` (vocab, merges and
its flags), ``added_tokens`` and ``post_processor`` give a working tokenizer
or a ValueError naming the file, never another exception, a crash or a hang.

The document mutated is a small SentencePiece-converted file (a BPE over
characters with ``<unk>``, ``<s>``, byte fallback tokens ``<0x00>`` ..
``<0xFF>``, letters and merges; Prepend + Replace normalizers, Metaspace +
Split pre-tokenizers, Replace/ByteFallback/Fuse/Strip decoders, a
TemplateProcessing post-processor).  A file that loads must encode (one
text, a pair, a batch) and decode its ids, or raise a ValueError.

The checks run in a subprocess, so that a crash in compiled code (Numba)
fails the test; each example has a watchdog (faulthandler), so that a hang
fails it too, and the document being checked is kept next to the file so
that the failure shows it.  The subprocess's address space is capped, so
that a file asking for a huge table fails with a MemoryError (a failure
here) instead of taking the machine's memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: examples of the fuzz run (a fixed number, a fixed seed)
EXAMPLES = 5000

_SCRIPT = r"""
import faulthandler, json, os, resource, sys
sys.path.insert(0, sys.argv[1])
path, examples, mode = sys.argv[2], int(sys.argv[3]), sys.argv[4]
current = path + ".current"
# A file asking for a huge table fails with a MemoryError (caught as a
# failure below) rather than taking the machine's memory.
resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
faulthandler.enable()

from hypothesis import HealthCheck, Phase, given, settings, strategies as st
import segkit


def good_doc():
    vocab = {"<unk>": 0, "<s>": 1}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for c in "abcdehilnorstw\u2581":
        vocab[c] = len(vocab)
    merges = []
    for a, b in [("h", "e"), ("l", "l"), ("he", "ll"), ("hell", "o"), ("\u2581", "t"), ("\u2581t", "he"),
                 ("o", "r"), ("w", "or")]:
        merges.append(f"{a} {b}")
        vocab.setdefault(a + b, len(vocab))
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [
            {"id": 1, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True},
            {"id": len(vocab), "content": "[X]", "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": False}],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": "\u2581"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "never", "split": False},
            {"type": "Split", "pattern": {"Regex": "\\d+"}, "behavior": "Isolated", "invert": False}]},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
            {"type": "ByteFallback"}, {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "ignore_merges": False,
                  "vocab": vocab, "merges": merges},
    }


GOOD = good_doc()
TEXTS = ["hello the world", "  ", "\U0001F600 x\U0001F600", "<s>hello<s> [X]b", "", "a1 23\tq\u0301"]

TYPE_NAMES = [
    # normalizers
    "Sequence", "Prepend", "Replace", "Lowercase", "Strip", "StripAccents", "NFC", "NFD", "NFKC", "NFKD",
    "BertNormalizer", "Precompiled", "Nmt",
    # pre-tokenizers
    "Metaspace", "ByteLevel", "Split", "Whitespace", "WhitespaceSplit", "Punctuation", "Digits",
    "BertPreTokenizer", "CharDelimiterSplit", "UnicodeScripts", "FixedLength",
    # decoders
    "ByteFallback", "Fuse", "WordPiece", "BPEDecoder", "CTC",
    # models, post-processors
    "BPE", "Unigram", "WordLevel", "TemplateProcessing", "BertProcessing", "RobertaProcessing",
    # enumerations
    "Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous", "always", "first", "never",
    "String", "Regex", "SpecialToken", "A", "B",
]
TOKENS = ["", " ", "\u2581", "<unk>", "<s>", "</s>", "[X]", "<0x41>", "<0xFF>", "<0x100>", "a", "h", "he", "hello",
          "h e", "he llo", "a b c", "x y", "a ", " a", "##", "</w>", "$A", "$B:1", "$A:x", "\\d+", "(", "[a-",
          "(?i)x", "\\p{L}+", "\U0001F600", "\ud800", "\x00", "e\u0301", "a" * 300]
INTS = [-2**63, -2**31, -1, 0, 1, 2, 3, 255, 256, 260, 2**31 - 1, 2**31, 2**32, 2**63, 2**64 + 5, 10**30]
KEYS = ["type", "normalizers", "pretokenizers", "decoders", "processors", "pattern", "String", "Regex", "content",
        "prepend", "replacement", "prepend_scheme", "split", "add_prefix_space", "behavior", "invert", "delimiter",
        "individual_digits", "use_regex", "trim_offsets", "strip_left", "strip_right", "start", "stop", "prefix",
        "cleanup", "suffix", "id", "ids", "tokens", "special", "normalized", "lstrip", "rstrip", "single_word",
        "single", "pair", "special_tokens", "SpecialToken", "Sequence", "type_id", "cls", "sep", "vocab",
        "merges", "unk_token", "byte_fallback", "fuse_unk", "ignore_merges", "continuing_subword_prefix",
        "end_of_word_suffix", "dropout"] + TOKENS[:12]

scalars = st.one_of(
    st.none(), st.booleans(), st.sampled_from(INTS), st.integers(-300, 300),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, -0.0, 0.5, 1.0, 1e308]),
    st.sampled_from(TYPE_NAMES), st.sampled_from(TOKENS), st.text(max_size=6))
values = st.recursive(scalars, lambda c: st.one_of(
    st.lists(c, max_size=4),
    st.dictionaries(st.sampled_from(KEYS), c, max_size=5),
    # something shaped like a component: a type and some of its keys
    st.builds(lambda t, rest: dict(rest, type=t), st.sampled_from(TYPE_NAMES),
              st.dictionaries(st.sampled_from(KEYS), c, max_size=4))), max_leaves=10)

# Components as the readers expect them (random parameters, patterns that
# match nothing, everything or the empty string): a file that still loads,
# so that what runs it is fuzzed too.
flag = st.booleans()
texts = st.sampled_from(TOKENS[:12]) | st.text(max_size=3)
char = st.sampled_from(["\u2581", " ", "a", "<", "\U0001F600"])
pattern = st.builds(lambda k, v: {k: v}, st.sampled_from(["String", "Regex"]),
                    st.sampled_from(["", " ", "\u2581", "a", "l+", "\\s*", "(?=e)", "$", "^", "\\d+", ".",
                                     "<s>", "\\X", "\\p{L}"]))
behavior = st.sampled_from(["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"])
scheme = st.sampled_from(["always", "first", "never"])
normalizers = st.recursive(st.one_of(
    st.fixed_dictionaries({"type": st.just("Prepend"), "prepend": texts}),
    st.fixed_dictionaries({"type": st.just("Replace"), "pattern": pattern, "content": texts}),
    st.fixed_dictionaries({"type": st.sampled_from(["Lowercase", "StripAccents"])}),
    st.fixed_dictionaries({"type": st.just("Strip"), "strip_left": flag, "strip_right": flag})),
    lambda c: st.fixed_dictionaries({"type": st.just("Sequence"), "normalizers": st.lists(c, max_size=3)}),
    max_leaves=4)
pre_tokenizers = st.recursive(st.one_of(
    st.fixed_dictionaries({"type": st.just("Metaspace"), "replacement": char, "prepend_scheme": scheme,
                           "split": flag}),
    st.fixed_dictionaries({"type": st.just("Split"), "pattern": pattern, "behavior": behavior, "invert": flag}),
    st.fixed_dictionaries({"type": st.sampled_from(["Whitespace", "WhitespaceSplit", "BertPreTokenizer",
                                                    "UnicodeScripts"])}),
    st.fixed_dictionaries({"type": st.just("Punctuation"), "behavior": behavior}),
    st.fixed_dictionaries({"type": st.just("Digits"), "individual_digits": flag}),
    st.fixed_dictionaries({"type": st.just("CharDelimiterSplit"), "delimiter": char})),
    lambda c: st.fixed_dictionaries({"type": st.just("Sequence"), "pretokenizers": st.lists(c, max_size=3)}),
    max_leaves=4)
decoders = st.recursive(st.one_of(
    st.fixed_dictionaries({"type": st.just("Replace"), "pattern": pattern, "content": texts}),
    st.fixed_dictionaries({"type": st.sampled_from(["ByteFallback", "Fuse"])}),
    st.fixed_dictionaries({"type": st.just("Strip"), "content": char, "start": st.integers(0, 3),
                           "stop": st.integers(0, 3)}),
    st.fixed_dictionaries({"type": st.just("Metaspace"), "replacement": char, "prepend_scheme": scheme}),
    st.fixed_dictionaries({"type": st.just("WordPiece"), "prefix": texts, "cleanup": flag}),
    st.fixed_dictionaries({"type": st.just("BPEDecoder"), "suffix": texts})),
    lambda c: st.fixed_dictionaries({"type": st.just("Sequence"), "decoders": st.lists(c, max_size=3)}),
    max_leaves=4)
added_token = st.fixed_dictionaries({
    "id": st.sampled_from([0, 1, 2, 100, 272, 281, 282, 300]), "content": texts.filter(bool), "special": flag,
    "normalized": flag, "lstrip": flag, "rstrip": flag, "single_word": flag})
components = st.one_of(normalizers, pre_tokenizers, decoders, added_token, st.lists(added_token, max_size=3))
values = values | components

TARGETS = [("normalizer",), ("pre_tokenizer",), ("decoder",), ("added_tokens",), ("post_processor",),
           ("model",), ("model", "vocab"), ("model", "merges")] + [
    ("model", k) for k in ("type", "unk_token", "byte_fallback", "fuse_unk", "ignore_merges",
                           "continuing_subword_prefix", "end_of_word_suffix", "dropout")]

mutation = st.tuples(st.sampled_from(TARGETS), st.lists(st.integers(0, 2**16), max_size=5),
                     st.sampled_from(["set", "set", "set", "delete", "add"]), st.sampled_from(KEYS), values)


def mutate(doc, target, at, op, key, value):
    # Change doc at target + a random path below it (the path's steps index
    # a dict's sorted keys or a list, modulo their size; it stops where the
    # document does): set the value there, delete it, or add key (a dict)
    # or the value (a list) next to it.
    parent, name = doc, target[0]
    for step in target[1:]:
        node = parent.get(name) if isinstance(parent, dict) else None
        if not isinstance(node, dict):
            break
        parent, name = node, step
    for step in at:
        if isinstance(parent, dict) and name not in parent:
            break
        node = parent[name]
        if isinstance(node, dict) and node:
            parent, name = node, sorted(node)[step % len(node)]
        elif isinstance(node, list) and node:
            parent, name = node, step % len(node)
        else:
            break
    if op == "set":
        parent[name] = value
    elif op == "delete":
        if isinstance(parent, dict):
            parent.pop(name, None)
        else:
            del parent[name]
    elif isinstance(parent, dict):
        parent[key] = value
    else:
        parent.insert(name, value)


def works_or_value_error(call):
    try:
        return call()
    except ValueError:
        return None


# One failure, shrunk (the self-test's: not shrunk, it fails at once).
@settings(max_examples=examples, deadline=None, derandomize=True, database=None, report_multiple_bugs=False,
          phases=[Phase.generate] if mode == "strict" else [Phase.generate, Phase.shrink],
          suppress_health_check=list(HealthCheck))
@given(st.lists(mutation, min_size=1, max_size=3))
def check(mutations):
    doc = json.loads(json.dumps(GOOD))
    for m in mutations:
        mutate(doc, *m)
    text = json.dumps(doc)  # (ASCII: a lone surrogate is written as its escape)
    for name in (path, current):
        with open(name, "w", encoding="utf-8") as fh:
            fh.write(text)
    faulthandler.dump_traceback_later(30, exit=True)  # a hang: the traceback, then exit 1
    try:
        try:
            tok = segkit.from_pretrained(path)
        except ValueError as e:
            assert path in str(e), f"a ValueError not naming the file: {e}"
            if mode == "strict":  # (the self-test: a file that does not load fails)
                raise AssertionError(f"strict: the file did not load: {e}") from None
            return
        for t in TEXTS:
            enc = works_or_value_error(lambda: tok.encode(t))
            if enc is not None:
                works_or_value_error(lambda: tok.decode(enc.ids))
                works_or_value_error(lambda: tok.decode(enc.ids, skip_special_tokens=False))
            works_or_value_error(lambda: tok.encode(t, TEXTS[0]))
        works_or_value_error(lambda: tok.encode_batch(TEXTS))
        works_or_value_error(lambda: tok.decode([0, 1, 2, 300, 2**31 - 1]))
    finally:
        faulthandler.cancel_dump_traceback_later()


# Files found by this fuzz (the mutations of GOOD that make them): each must
# load or raise a ValueError naming the file, as any other.
KNOWN = {
    "a vocabulary id of 2**31 - 1": [(("model", "vocab"), [0], "set", "", 2**31 - 1)],
    "an added token's id of 2**31 - 1": [(("added_tokens",), [1, 1], "set", "", 2**31 - 1)],
    "a Split's behavior []": [(("pre_tokenizer",), [0, 1, 0], "set", "", [])],
    "a Punctuation's behavior {}": [(("pre_tokenizer",), [], "set", "", {"type": "Punctuation", "behavior": {}})],
}

if mode == "known":
    import traceback
    failed = []
    for name, mutations in KNOWN.items():
        try:
            check.hypothesis.inner_test(mutations)
        except BaseException as e:
            failed.append(name)
            print(f"--- {name}: {mutations}", file=sys.stderr)
            traceback.print_exception(e, limit=-3, file=sys.stderr)
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")
else:
    check()
os.unlink(current)
print("ok")
"""


def _run(tmp_path: Path, examples: int, mode: str = "fuzz", timeout: float = 600) -> tuple[int, str]:
    path = tmp_path / "tokenizer.json"
    try:
        run = subprocess.run([sys.executable, "-c", _SCRIPT, str(REPO), str(path), str(examples), mode],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        code, out, err = "timeout", e.stdout or "", e.stderr or ""
        out, err = (s.decode(errors="replace") if isinstance(s, bytes) else s for s in (out, err))
    else:
        code, out, err = run.returncode, run.stdout, run.stderr
        if code == 0 and out.strip().endswith("ok"):
            return 0, ""
    last = Path(str(path) + ".current")
    shown = last.read_text(encoding="utf-8", errors="replace")[:3000] if last.exists() else "(none)"
    return (code if isinstance(code, int) else -1), (
        f"exit {code}\n--- stdout\n{out[-2000:]}\n--- stderr\n{err[-6000:]}\n"
        f"--- the document checked last (the culprit of a crash or a hang)\n{shown}")


def test_staged_files_with_any_values_load_and_run_or_raise_a_value_error(tmp_path):
    code, report = _run(tmp_path, EXAMPLES)
    assert code == 0, report


def test_the_files_this_fuzz_found_raise_a_value_error(tmp_path):
    """The files the fuzz above found (its ``KNOWN``), each run as a fuzz
    example: a MemoryError (a table as large as the largest id), or a
    TypeError (an unhashable value where a name is looked up), is a bug."""
    code, report = _run(tmp_path, 1, mode="known")
    assert code == 0, report


def test_the_fuzz_fails_where_its_expectation_does_not_hold(tmp_path):
    """The same script, expecting every mutated file to load: it must fail
    (most mutations make a bad file), showing hypothesis' failing example."""
    code, report = _run(tmp_path, 30, mode="strict")
    assert code != 0 and "strict: the file did not load" in report and "mutations=" in report, report


def test_merges_naming_a_token_not_in_the_vocabulary_are_a_value_error(tmp_path):
    """A known-bad file: a merge whose part is not a token.  The error names
    the file, the JSON path (model) and the merge."""
    import pytest

    import segkit

    path = tmp_path / "tokenizer.json"
    code = _SCRIPT.split("def good_doc():", 1)[1].split("\nGOOD = ", 1)[0]
    scope: dict = {}
    exec("def good_doc():" + code, scope)
    doc = scope["good_doc"]()
    doc["model"]["merges"].append("zz y")
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError) as e:
        segkit.from_pretrained(path)
    message = str(e.value)
    assert str(path) in message and "model" in message and "'zz'" in message, message
    # and the good document itself loads
    doc["model"]["merges"].pop()
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert segkit.from_pretrained(path).encode("hello").ids == [1, 272, 276]
