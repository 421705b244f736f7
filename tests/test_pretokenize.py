"""The compiled pre-tokenizers (segkit.presets.bpe.pretokenize) against ``regex``.

The reference is the ``regex`` package running the very same pattern string:
``regex.findall(pattern, text)``.  Every compiled pattern is compared under
hypothesis (all Unicode categories, and a pool of the characters the patterns
treat specially), on adversarial runs, and on the whole shared corpus.

Lone surrogates have no UTF-8 form: they are a ValueError naming the position
(tiktoken replaces them with U+FFFD); the generated texts exclude them and
``test_lone_surrogate_is_an_error`` checks the error.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segkit.presets.bpe import char_classes as cc
from segkit.presets.bpe.pretokenize import (
    CL100K_PATTERN,
    COMPILED_PATTERNS,
    GPT2_ORIGINAL_PATTERN,
    GPT2_PATTERN,
    LLAMA3_PATTERN,
    O200K_PATTERN,
    QWEN2_PATTERN,
    R50K_PATTERN,
    TIKTOKEN_PATTERNS,
    Pretokenizer,
    check_buffer,
    encode_texts,
    pattern_kind,
)
from segkit.presets.bpe.pretokenize_kernels import (KIND_CL100K, KIND_GPT2, KIND_LLAMA3, KIND_O200K, KIND_QWEN2,
                                                    KIND_REGEX)

PATTERNS = [GPT2_PATTERN, R50K_PATTERN, GPT2_ORIGINAL_PATTERN, CL100K_PATTERN, O200K_PATTERN, LLAMA3_PATTERN,
            QWEN2_PATTERN]
PATTERN_IDS = ["gpt2", "r50k", "gpt2-original", "cl100k", "o200k", "llama3", "qwen2"]
THREE = [R50K_PATTERN, CL100K_PATTERN, O200K_PATTERN]
THREE_IDS = ["r50k", "cl100k", "o200k"]

# Characters the patterns treat differently, one or a few of each kind.
_POOL = [
    # letters: Ll, Lu, Lt, Lm, Lo (and a long s, which folds to s)
    "a", "z", "A", "Z", "ß", "é", "É", "ǅ", "ǈ", "ʰ", "ˮ", "ª", "中", "文", "ｱ", "ſ", "İ", "ı", "Σ", "σ", "ς", "𝐀",
    # marks: Mn, Mc, Me, variation selectors (BMP and plane 14)
    "\u0301", "\u0308", "\u0903", "\u20dd", "\ufe0f", "\U000e0100",
    # numbers: Nd, Nl, No
    "0", "1", "9", "٣", "Ⅻ", "½", "𝟘", "²",
    # white space (regex's \s) and look-alikes that are not \s
    " ", "\t", "\n", "\r", "\x0b", "\x0c", "\x85", "\xa0", "\u1680", "\u2000", "\u200a", "\u2028", "\u2029",
    "\u202f", "\u205f", "\u3000", "\x1c", "\x1f", "\u200b", "\u200d", "\ufeff", "\u180e",
    # punctuation, symbols, others
    "'", "’", "/", '"', "!", "?", ".", "-", "_", "$", "€", "…", "<", "|", ">", "\x00", "\ue000", "\u0378",
    "\U0010ffff", "\ufffd",
    # emoji: with joiners, skin tones, flags, keycaps
    "😀", "👨\u200d👩\u200d👧", "👍🏽", "🇫🇷", "1\ufe0f\u20e3", "❤\ufe0f",
    # contractions in both cases, and near misses
    "'s", "'S", "'ſ", "'t", "'T", "'m", "'M", "'d", "'D", "'ll", "'LL", "'lL", "'Ll", "'ve", "'VE", "'vE",
    "'re", "'RE", "'rE", "'l", "'v", "'r", "'x", "''",
    # runs
    "\r\n", "\n\n", " \n", "\t\n", "  ", "   ", "\n ", "123", "1234", "abc", "ABC", "AbC", "aBc",
]
_tricky = st.lists(st.sampled_from(_POOL), max_size=40).map("".join)
_any = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=60)
_texts = st.one_of(_tricky, _any)
# For peers with their own regex engines (HF's Oniguruma, tiktoken's Rust
# regex): their tables (flavour "onig", "rust") know an older Unicode than the
# regex package: code points only the regex package knows are cut their way.
_peer_texts = st.one_of(_tricky, st.text(alphabet=st.one_of(
    st.characters(exclude_categories=["Cs"]), st.sampled_from(["\u0558", "\U00011de0", "\U0001f6d8", "\u0295"])),
    max_size=60))


def regex_pieces(pattern: str, text: str) -> list[str]:
    return regex.findall(pattern, text)


# ------------------------------------------------------------------ patterns
def test_patterns_are_tiktokens():
    tiktoken_ext = pytest.importorskip("tiktoken_ext.openai_public", reason="tiktoken is not installed")
    assert tiktoken_ext.r50k_pat_str == R50K_PATTERN
    assert TIKTOKEN_PATTERNS["gpt2"] == R50K_PATTERN
    # cl100k and o200k are built from the download at call time: read the source
    import inspect

    source = inspect.getsource(tiktoken_ext)
    assert CL100K_PATTERN in source
    for part in O200K_PATTERN.split("|"):
        assert part in source


def test_pattern_kinds():
    assert [pattern_kind(p) for p in PATTERNS] == [KIND_GPT2] * 3 + [KIND_CL100K, KIND_O200K, KIND_LLAMA3, KIND_QWEN2]
    assert pattern_kind(GPT2_PATTERN + "|x") == KIND_REGEX
    assert set(COMPILED_PATTERNS) == set(PATTERNS)
    with pytest.raises(TypeError, match="must be a str"):
        pattern_kind(b"x")


def test_bad_pattern_names_itself():
    with pytest.raises(ValueError, match=r"pattern '\(' is not a valid regex"):
        Pretokenizer("(")


# ------------------------------------------------------------------ classes
def _regex_mask(cls: str) -> np.ndarray:
    """Code points matched by a one-character class, character by character."""
    text = cc.all_code_points()
    mask = np.zeros(cc.N_CODE_POINTS, dtype=bool)
    idx = np.fromiter((m.start() for m in regex.finditer(cls, text)), dtype=np.int64)
    mask[idx] = True
    return mask


def test_class_table_matches_regex_classes():
    codes = cc.classes_of(cc.class_table(), np.arange(cc.N_CODE_POINTS))
    group = codes & cc.GROUP_MASK
    assert np.array_equal(group == cc.G_LETTER, _regex_mask(r"\p{L}"))
    assert np.array_equal(group == cc.G_NUMBER, _regex_mask(r"\p{N}"))
    assert np.array_equal(group == cc.G_SPACE, _regex_mask(r"\s"))
    assert np.array_equal(codes == cc.MARK, _regex_mask(r"\p{M}"))
    upper = ((cc.UPPER_BITS >> codes.astype(np.int64)) & 1) == 1
    lower = ((cc.LOWER_BITS >> codes.astype(np.int64)) & 1) == 1
    assert np.array_equal(upper, _regex_mask(r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"))
    assert np.array_equal(lower, _regex_mask(r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"))


def test_class_table_is_compact_and_read_only():
    table = cc.class_table()
    assert table.dtype == np.uint8 and table.nbytes < 100_000
    assert not table.flags.writeable
    assert table[0] == 0  # page 0 is block 0: code points < 256 need one read


def test_case_insensitive_letters_are_what_the_matchers_fold():
    """The matchers fold ASCII letters and U+017F (long s) only: check that
    this is all regex's (?i) folds to the contraction letters."""
    text = cc.all_code_points()
    for letter in "sdmtlvre":
        found = {m.group() for m in regex.finditer(f"(?i:{letter})", text)}
        expected = {letter, letter.upper()} | ({"\u017f"} if letter == "s" else set())
        assert found == expected, letter


# ------------------------------------------------------------------ equality with regex
@pytest.mark.parametrize("pattern", PATTERNS, ids=PATTERN_IDS)
@given(text=_texts)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_compiled_equals_regex(pattern, text):
    assert Pretokenizer(pattern).findall(text) == regex_pieces(pattern, text)


@pytest.mark.parametrize("pattern", PATTERNS, ids=PATTERN_IDS)
def test_examples(pattern):
    texts = [
        "",
        " ",
        "I'm HERE 'S 'ſ  \n\n x\r\n  \t y  ",
        "Hello\u0301world ABCdef ǅx ʰa \u0301\u0301 e\u0301 1234567 !!!\n/ /x  ",
        "ABC'LL DEF's HTTPServer's iPhone",
        "ªAAAA!",
        "\u0301AAA!",
        "x \u0301AAA'S",
        "a\n  ",
        "a \n \n b\n",
        "x  \u3000\xa0y",
    ]
    pre = Pretokenizer(pattern)
    for text in texts:
        assert pre.findall(text) == regex_pieces(pattern, text), repr(text)


def _adversarial(n: int) -> list[str]:
    rng = random.Random(25)
    one = ["a", "A", " ", "\n", "\r\n", "1", "!", "ª", "\u0301", "中", "'", "'s", "\u3000", "😀", "\x85"]
    two = ["aA", "a ", " a", " \n", "\n ", "1a", "'s", "ªA", "\u0301A", "A\u0301", "a1", " !", "!\n", "\r ", "s'"]
    out = [c * (n // len(c)) for c in one]
    out += [c * (n // len(c)) for c in two]
    out.append("".join(chr(rng.randrange(0x4E00, 0xA000)) for _ in range(n)))  # CJK
    raw = bytes(rng.randrange(256) for _ in range(n))
    out.append(raw.decode("utf-8", "replace"))  # random bytes decoded with replacement
    out.append("A" * n + "a")  # U*W+ backtracking over a long run
    out.append(" " * n + "x")
    out.append("\n" + " " * n + "x")
    return out


@pytest.mark.parametrize("pattern", THREE, ids=THREE_IDS)
def test_adversarial_runs(pattern):
    """Correctness (not speed: see benchmarks/bench_pretokenize.py) on long runs."""
    pre = Pretokenizer(pattern)
    texts = _adversarial(20_000)
    pieces = pre.split_batch(texts)
    for row, text in enumerate(texts):
        assert pieces.strings(row) == regex_pieces(pattern, text), repr(text[:20])


# ------------------------------------------------------------------ batches
@pytest.mark.parametrize("pattern", THREE, ids=THREE_IDS)
@given(texts=st.lists(_texts, max_size=8))
@settings(max_examples=150, deadline=None)
def test_batch_rows_equal_single_texts(pattern, texts):
    pre = Pretokenizer(pattern)
    pieces = pre.split_batch(texts)
    assert pieces.row_splits.tolist()[0] == 0 and len(pieces.row_splits) == len(texts) + 1
    assert np.all(pieces.ids == -1)
    _, rs = encode_texts(texts)
    for row, text in enumerate(texts):
        assert pieces.strings(row) == regex_pieces(pattern, text)
        lo, hi = pieces.row_splits[row], pieces.row_splits[row + 1]
        # pieces tile the row
        bounds = [rs[row]] + pieces.ends[lo:hi].tolist()
        assert pieces.starts[lo:hi].tolist() == bounds[:-1] and bounds[-1] == rs[row + 1]


def test_output_grows_past_its_first_guess():
    text = "a1" * 50_000  # one piece per byte, GPT-2: 4x the first guess
    pieces = Pretokenizer(GPT2_PATTERN).split_batch([text, "x", text])
    assert pieces.row_splits.tolist() == [0, 100_000, 100_001, 200_001]
    assert pieces.strings(2) == regex_pieces(GPT2_PATTERN, text)


def test_split_buffer_checks_its_input():
    pre = Pretokenizer(CL100K_PATTERN)
    buf, rs = encode_texts(["héllo", "wörld"])
    assert pre.split_buffer(buf, rs).strings(1) == regex_pieces(CL100K_PATTERN, "wörld")
    with pytest.raises(ValueError, match="not valid UTF-8: byte 1"):
        check_buffer(np.frombuffer(b"a\xffb", np.uint8), np.array([0, 3]))
    with pytest.raises(ValueError, match="cuts a character in two at byte 2"):
        check_buffer(buf, np.array([0, 2, len(buf)]))
    with pytest.raises(ValueError, match="must rise"):
        check_buffer(buf, np.array([0, 5, 3]))
    with pytest.raises(ValueError, match="must rise"):
        check_buffer(buf, np.array([0, len(buf) + 1]))
    with pytest.raises(TypeError, match="uint8"):
        check_buffer(np.zeros(3, np.int32), np.array([0, 3]))
    with pytest.raises(TypeError, match="single str"):
        encode_texts("abc")
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str"):
        encode_texts(["a", b"b"])


def test_lone_surrogate_is_an_error():
    pre = Pretokenizer(O200K_PATTERN)
    with pytest.raises(ValueError, match=r"lone surrogate '\\ud800' at position 2"):
        pre.findall("ab\ud800c")
    with pytest.raises(ValueError, match=r"texts\[1\] has a lone surrogate '\\udfff' at position 0"):
        pre.split_batch(["ok", "\udfff"])


def test_pickles_as_its_pattern():
    import pickle

    pre = pickle.loads(pickle.dumps(Pretokenizer(O200K_PATTERN)))
    assert pre == Pretokenizer(O200K_PATTERN) and pre.kind == KIND_O200K


# ------------------------------------------------------------------ the regex fallback
_CUSTOM = [r"\w+|\s+", r"\p{L}+", r".", r"\s*", r"[aeiou]+|(?i:'S)", r"\X", r"(?s).{1,3}"]


@pytest.mark.parametrize("pattern", _CUSTOM)
@given(texts=st.lists(_texts, max_size=5))
@settings(max_examples=100, deadline=None)
def test_fallback_equals_regex_finditer(pattern, texts):
    pre = Pretokenizer(pattern)
    assert not pre.compiled
    pieces = pre.split_batch(texts)
    for row, text in enumerate(texts):
        assert pieces.strings(row) == [m.group() for m in regex.finditer(pattern, text) if m.group()]


# ------------------------------------------------------------------ the shared corpus
def _corpus_texts(shared_data, name: str = "multilingual.jsonl") -> list[str]:
    with open(shared_data / "corpus" / name, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


@pytest.mark.slow
@pytest.mark.parametrize("pattern", THREE, ids=THREE_IDS)
def test_whole_corpus(shared_data, pattern):
    texts = _corpus_texts(shared_data)
    pieces = Pretokenizer(pattern).split_batch(texts)
    rx = regex.compile(pattern)
    bad = [row for row, text in enumerate(texts) if pieces.strings(row) != rx.findall(text)]
    assert not bad, f"{len(bad)} texts differ, first: {texts[bad[0]]!r}"
    whole = "\n".join(texts)  # and as one text: every boundary between sentences
    assert Pretokenizer(pattern).findall(whole) == rx.findall(whole)


def test_sample_of_the_corpus(multilingual_sample):
    texts = [rec["text"] for rec in multilingual_sample]
    for pattern in THREE:
        pieces = Pretokenizer(pattern).split_batch(texts)
        for row, text in enumerate(texts):
            assert pieces.strings(row) == regex_pieces(pattern, text)


# ------------------------------------------------------------------ the per-text kernel
def test_split_row_takes_bytes():
    """An encoder's one-text path hands Numba ``bytes`` (cheaper than an array)."""
    from segkit.presets.bpe.pretokenize_kernels import DONE, split_row
    from segkit.presets.bpe.special_tokens import NO_SPECIALS

    text = "héllo  wörld 123 'S\n\n"
    data = text.encode()
    ends = np.empty(len(data), np.int64)
    ids = np.empty(len(data), np.int32)
    status, p, n, _ = split_row(KIND_CL100K, data, 0, len(data), cc.class_table(), NO_SPECIALS, ends, ids, 0)
    assert (status, p) == (DONE, len(data))
    bounds = [0] + ends[:n].tolist()
    assert [data[a:b].decode() for a, b in zip(bounds, bounds[1:])] == regex_pieces(CL100K_PATTERN, text)


@pytest.mark.parametrize("pattern", THREE + [r"\w+|\W"], ids=THREE_IDS + ["regex"])
@given(text=_texts, room=st.integers(1, 5), data=st.data())
@settings(max_examples=150, deadline=None)
def test_split_row_goes_on_where_it_stopped(pattern, text, room, data):
    """A full output stops the kernel mid-text; going on gives the same pieces."""
    from segkit.presets.bpe.pretokenize_kernels import DONE, FULL, split_row
    from segkit.presets.bpe.special_tokens import SpecialTokens

    specials = {"<|x|>": 7, "é": 8, "  ": 9}
    text = "".join(data.draw(st.lists(st.sampled_from([text, *specials]), max_size=4), label="parts"))
    plan = SpecialTokens(specials).plan("all")
    pre = Pretokenizer(pattern)
    whole = pre.split(text, plan)
    buf = np.frombuffer(text.encode(), np.uint8)
    table = cc.class_table()
    got_ends, got_ids = [], []
    p, status = 0, FULL
    while status == FULL:
        ends = np.empty(room, np.int64)
        ids = np.empty(room, np.int32)
        status, p, n, _ = split_row(pre.kind, buf, p, len(buf), table, plan, ends, ids, 0)
        got_ends += ends[:n].tolist()
        got_ids += ids[:n].tolist()
    assert status == DONE
    if pre.compiled:
        assert got_ends == whole.ends.tolist() and got_ids == whole.ids.tolist()
    else:  # the stretches between special tokens, before regex splits them
        assert [e for e, i in zip(got_ends, got_ids) if i >= 0] == [
            e for e, i in zip(whole.ends.tolist(), whole.ids.tolist()) if i >= 0
        ]


def test_long_single_text_takes_the_batch_path():
    text = "ab cd\n" * 20_000  # > 64 KB
    assert Pretokenizer(O200K_PATTERN).findall(text) == regex_pieces(O200K_PATTERN, text)


# ------------------------------------------------------------------ HF's ByteLevel
def _char_spans(pieces, text):
    byte_to_char = {0: 0}
    pos = 0
    for i, ch in enumerate(text):
        pos += len(ch.encode())
        byte_to_char[pos] = i + 1
    return [(byte_to_char[s], byte_to_char[e]) for s, e in zip(pieces.starts.tolist(), pieces.ends.tolist())]


@given(text=_peer_texts)
@settings(max_examples=300, deadline=None)
def test_hf_bytelevel_cuts_like_the_compiled_gpt2_pattern(text):
    """HF's ByteLevel pre-tokenizer (its own regex engine, Oniguruma) cuts
    where the compiled GPT-2 matcher does: a tokenizer.json with ByteLevel
    can run compiled."""
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers", reason="tokenizers is not installed")
    hf = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True).pre_tokenize_str(text)
    assert _char_spans(Pretokenizer(GPT2_ORIGINAL_PATTERN, "onig").split(text), text) == [span for _, span in hf]
