"""ChineseMaxMatch against the naive reference (tests/cjk_reference.py) on random inputs.

Dictionaries and texts are drawn over tiny alphabets, so that words overlap
and forward, backward and bidirectional results often differ.  The
alphabets mix CJK ideographs, characters outside the BMP, ASCII and
full-width letters, digits, points and percent signs (the alnum-run
merging), Unicode whitespace, characters that look like whitespace but are
not Unicode ``White_Space``, characters of other scripts, and characters no
dictionary contains.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import cjk_reference as ref
import segkit

MODES = ("forward", "backward", "bidirectional")

#: Characters dictionary words are made of: CJK ideographs, U+20000 and
#: U+1D518 (4-byte UTF-8, outside the BMP), ASCII and full-width letters,
#: digits, points and percent signs, and a punctuation mark.
WORD_ALPHABET = "中文研究生命起源𠀀𝔘abZ19.%ａＡ１９．％，"
#: Extra text characters: Unicode White_Space (space, tab, newline, NBSP,
#: ideographic space, line separator, thin space), characters that are not
#: White_Space although some libraries treat them as spaces (U+001C, which
#: str.isspace() accepts; zero-width space U+200B; U+180E), a Cyrillic
#: letter, a Latin letter with diacritic, a combining mark, a CJK ideograph,
#: an emoji and NUL, none of which any dictionary contains.  (No lone
#: surrogate: every entry point refuses them, see tests/test_bad_input.py.)
TEXT_EXTRA = " \t\n\u00a0\u3000\u2028\u2009\u001c\u200b\u180eжé\u0301龍😀zx0\x00"

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def cases(draw):
    # A few characters per example, so that words share prefixes and suffixes.
    sub = draw(st.lists(st.sampled_from(WORD_ALPHABET), min_size=1, max_size=6, unique=True))
    sub = "".join(sub)
    word = st.text(alphabet=sub, min_size=1, max_size=5)
    words = draw(st.lists(st.one_of(word, st.just("")), min_size=0, max_size=12))
    text_alphabet = sub + draw(st.text(alphabet=TEXT_EXTRA, min_size=0, max_size=4))
    # Texts are built from dictionary words and single characters, so that
    # long matches are frequent.
    piece = st.one_of(st.sampled_from(words) if words else st.nothing(), st.text(alphabet=text_alphabet, max_size=3))
    text = st.lists(piece, max_size=10).map("".join)
    texts = draw(st.lists(text, min_size=1, max_size=5))
    return words, texts


def _check(words: list[str], texts: list[str]) -> None:
    lex = ref.Lexicon(words)
    for mode in MODES:
        for alnum in (True, False):
            seg = segkit.ChineseMaxMatch(words, mode=mode, alnum_runs=alnum)
            expected = [ref.tokenize(t, lex, mode, alnum) for t in texts]
            got = [seg.tokenize(t) for t in texts]
            for t, g, e in zip(texts, got, expected):
                assert g == e, f"mode={mode} alnum_runs={alnum} text={t!r}"
                # offsets point into the text; nothing but whitespace is dropped
                assert all(t[s:e_] == w and e_ > s for w, s, e_ in g)
                assert "".join(w for w, _, _ in g) == "".join(c for c in t if c not in ref.WHITE_SPACE)
            assert [seg.cut(t) for t in texts] == [[w for w, _, _ in e] for e in expected]
            assert seg.cut_batch(texts) == [[w for w, _, _ in e] for e in expected]
            assert seg.tokenize_batch(texts) == expected
            assert seg.tokenize_batch(texts) == got
            assert seg.cut_batch(texts) == [[w for w, _, _ in e] for e in expected]
            # Prefetching ahead (on by default only for large dictionaries)
            # must not change a result; it needs a batch longer than its reach.
            _prefetch_ahead(seg)
            assert seg.tokenize_batch(texts * 12) == expected * 12


def _prefetch_ahead(seg) -> None:
    for automaton in seg._snapshot(seg._directions()):
        automaton.lookahead = True


@SETTINGS
@given(cases())
@example((["研究", "研究生", "生命", "命", "起源"], ["研究生命起源", "研究 生命起源"]))
@example((["ab", "bc", "中文"], ["abc", "a1.5%b", "x% 1a% ａ％ ａ1％", "1.2.3 1..2 3%% ４．５％ a.1 1.a", "中文ab𠀀𝔘"]))
@example((["1.5", "%"], ["11.55%", "1.5%", "x1.5y"]))
@example(([], ["", " ", "\u3000\u2028", "𠀀 𝔘\u200b中", "a\u001cb"]))
@example((["𠀀𝔘", "𝔘𠀀", "𠀀"], ["𠀀𝔘𠀀𝔘𠀀", "𝔘𠀀𝔘"]))
@example((["ab", "b", "abc", "c"], ["abc"]))  # stretch choice: 1 word vs 1 word
def test_all_modes_match_reference(case):
    words, texts = case
    _check(words, texts)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.data())
def test_added_words_equal_a_fresh_build(case, data):
    """add_word after segmenting behaves like building with the union of words."""
    words, texts = case
    extra = data.draw(st.lists(st.text(alphabet="中文研究生命ab1.%𠀀", min_size=1, max_size=4), max_size=4))
    for mode in MODES:
        seg = segkit.ChineseMaxMatch(words, mode=mode)
        seg.cut_batch(texts)  # build the automata before the update
        for w in extra:
            seg.add_word(w)
        lex = ref.Lexicon(words + extra)
        assert seg.cut_batch(texts) == [ref.cut(t, lex, mode) for t in texts]
        assert set(seg.words) == {w for w in words + extra if w}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.data())
def test_added_and_deleted_words_equal_a_fresh_build(case, data):
    """Any sequence of add_word / del_word (with segmenting in between, so
    that the base automata exist and the changes are kept beside them,
    see segkit_cjk._overlay) gives what a segmenter built from the
    resulting words gives, in every mode and option, and what the
    reference gives."""
    words, texts = case
    pieces = st.text(alphabet="中文研究生命起源ab1.%𠀀", min_size=1, max_size=4)
    known = [w for w in words if w]
    ops = data.draw(st.lists(st.tuples(st.booleans(), st.one_of(pieces, st.sampled_from(known) if known else pieces),
                                       st.booleans()), max_size=8))
    mode = data.draw(st.sampled_from(MODES))
    alnum, ws = data.draw(st.booleans()), data.draw(st.booleans())
    seg = segkit.ChineseMaxMatch(words, mode=mode, alnum_runs=alnum, keep_whitespace=ws)
    current = dict.fromkeys(known)
    seg.cut_batch(texts)
    for add, w, segment_now in ops:
        if add:
            seg.add_word(w)
            current[w] = None
        else:
            seg.del_word(w)
            current.pop(w, None)
        if segment_now:
            seg.cut_batch(texts)
    assert seg.words == list(current)
    fresh = segkit.ChineseMaxMatch(list(current), mode=mode, alnum_runs=alnum, keep_whitespace=ws)
    assert seg.tokenize_batch(texts) == fresh.tokenize_batch(texts)
    assert [seg.cut(t) for t in texts] == [fresh.cut(t) for t in texts]
    if not ws:
        lex = ref.Lexicon(list(current))
        assert seg.tokenize_batch(texts) == [ref.tokenize(t, lex, mode, alnum) for t in texts]
    assert seg.tokenize_batch(texts * 12, num_threads=2) == fresh.tokenize_batch(texts) * 12


@pytest.mark.parametrize("mode", MODES)
def test_many_added_words_fold_into_a_new_base(mode, monkeypatch):
    """Past a threshold the added words are folded into the base (one
    rebuild); results stay those of a fresh build."""
    from segkit_cjk import segmenter

    monkeypatch.setattr(segmenter, "FOLD_WORDS", 3)
    words = ["研究", "研究生", "生命", "命", "起源"]
    seg = segkit.ChineseMaxMatch(words, mode=mode)
    seg.cut("研究生命起源")
    seg.del_word("研究生")
    for w in ["命起", "源头", "究生", "生命起"]:
        seg.add_word(w)
    assert not seg._dict.changed  # folded
    final = ["研究", "生命", "命", "起源", "命起", "源头", "究生", "生命起"]
    assert seg.words == final
    text = "研究生命起源头 究生命起"
    assert seg.tokenize(text) == segkit.ChineseMaxMatch(final, mode=mode).tokenize(text)


def test_reference_known_answers():
    """The reference itself, on hand-checked examples."""
    words = ["研究", "研究生", "生命", "命", "起源"]
    assert ref.cut("研究生命起源", words, "forward", False) == ["研究生", "命", "起源"]
    assert ref.cut("研究生命起源", words, "backward", False) == ["研究", "生命", "起源"]
    assert ref.cut("研究生命起源", words, "bidirectional", False) == ["研究", "生命", "起源"]
    assert ref.cut(" a b\u3000中 ", [], "forward", False) == ["a", "b", "中"]
    assert ref.cut("ab 3.5% x1.2.3y", [], "forward", True) == ["ab", "3.5%", "x1.2.3y"]
    assert ref.cut("1..2 3%% ．5", [], "forward", True) == ["1", ".", ".", "2", "3%", "%", "．", "5"]
    # forward: 中国人 | 民; backward: 中 | 国人民 -> 2 words each, 1 single each: backward
    assert ref.cut("中国人民", ["中国人", "国人民"], "bidirectional", False) == ["中", "国人民"]
    # forward 2 words, backward 3 words -> forward
    assert ref.cut("abcd", ["abc", "bcd", "d", "ab", "cd", "a"], "forward", False) == ["abc", "d"]
    assert ref.cut("abcd", ["abc", "bcd", "d", "ab", "cd", "a"], "backward", False) == ["a", "bcd"]
    assert ref.cut("abcde", ["abc", "de", "cde", "a", "b"], "bidirectional", False) == ["abc", "de"]
    assert ref.cut("abcde", ["abc", "de", "cde", "a", "b"], "backward", False) == ["a", "b", "cde"]


@pytest.mark.parametrize("mode", MODES)
def test_long_random_text(mode):
    """One longer text over a dense dictionary (many overlapping words)."""
    import random

    rng = random.Random(20240521)
    alphabet = "中文研究生命起源𠀀a1.%"
    words = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(300)})
    text = "".join(rng.choice(alphabet + " ") for _ in range(20000))
    for alnum in (True, False):
        seg = segkit.ChineseMaxMatch(words, mode=mode, alnum_runs=alnum)
        expected = ref.tokenize(text, words, mode, alnum)
        assert seg.tokenize(text) == expected
        _prefetch_ahead(seg)
        assert seg.tokenize(text) == expected


def test_changes_are_folded_in_after_enough_text(monkeypatch):
    """Once a state with changes has segmented FOLD_CHARS characters plus
    FOLD_CHARS_PER_WORD per base word (here 10 + 2 * 5), the changes are
    folded into a new base; results do not change."""
    from segkit_cjk import segmenter

    monkeypatch.setattr(segmenter, "FOLD_CHARS", 10)
    monkeypatch.setattr(segmenter, "FOLD_CHARS_PER_WORD", 2)
    seg = segkit.ChineseMaxMatch(["研究", "研究生", "生命", "命", "起源"])
    seg.add_word("命起")
    seg.del_word("研究生")
    texts = ["研究生命起源", "命起源 研究生"]
    expected = segkit.ChineseMaxMatch(["研究", "生命", "命", "起源", "命起"]).cut_batch(texts)
    assert seg.cut_batch(texts) == expected and seg._dict.changed
    assert seg.cut_batch(texts * 3) == expected * 3
    assert not seg._dict.changed and seg.cut_batch(texts) == expected


def test_a_larger_dictionary_keeps_its_changes_apart_longer(monkeypatch):
    """The fold threshold grows with the base (a rebuild costs more): with
    50 base words it is 10 + 2 * 50 = 110 characters."""
    from segkit_cjk import segmenter

    monkeypatch.setattr(segmenter, "FOLD_CHARS", 10)
    monkeypatch.setattr(segmenter, "FOLD_CHARS_PER_WORD", 2)
    base = ["研究", "研究生", "生命", "命", "起源"] + [f"词{i}" for i in range(45)]
    seg = segkit.ChineseMaxMatch(base)
    seg.add_word("命起")
    texts = ["研究生命起源", "命起源 研究生"]  # 13 characters
    expected = segkit.ChineseMaxMatch(base + ["命起"]).cut_batch(texts)
    for _ in range(8):  # 104 characters: not yet
        assert seg.cut_batch(texts) == expected and seg._dict.changed
    assert seg.cut_batch(texts) == expected  # 117 > 110: folded at this call
    assert not seg._dict.changed
