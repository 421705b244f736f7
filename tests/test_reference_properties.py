"""segkit against the naive reference (tests/reference.py) on random inputs.

Vocabularies are small (a few tokens, or a few hundred for the tests of
the failure tables) and drawn over tiny alphabets that contain the
characters that have caused trouble in LinMaxMatch implementations: the
characters of the suffix indicator, punctuation, a space, multi-byte BMP
characters and an astral character.  Each example builds one tokenizer.
The engine is also checked directly (``segkit.Automaton``) against naive
forward/backward maximum matching.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import segkit
from segkit.engine import ISOLATED, SPACE
from reference import (
    BERT_CJK,
    HF_CJK,
    backward_maxmatch,
    forward_maxmatch,
    forward_maxmatch_word,
    naive_failure,
    split_by_classes,
    trie_nodes,
    wordpiece_text,
    wordpiece_word,
)

UNK = "[UNK]"
SUFFIXES = ["##", "", "#", "xx", "ab", "<s>"]
#: Characters of vocabulary tokens: "#" and "." are punctuation, " " is a
#: space, "é" and "中" are two- and three-byte BMP characters ("中" is a CJK
#: ideograph), "𝔘" is outside the BMP.
TOKEN_ALPHABET = "ab#x. é中𝔘"
#: Text adds an unseen letter, ASCII and CJK punctuation, a non-ASCII space
#: and U+2B820 (a CJK ideograph for Google's ranges, not for HuggingFace's).
TEXT_EXTRA = "z(。\u3000\U0002B820"
CJK = {"hf": HF_CJK, "bert": BERT_CJK, None: ()}

SETTINGS = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@st.composite
def wordpiece_cases(draw):
    sfx = draw(st.sampled_from(SUFFIXES))
    alphabet = "".join(sorted(set(TOKEN_ALPHABET) | set(sfx)))
    # Each vocabulary uses a few characters only (plus the indicator's), so
    # that tokens overlap and long matches and failure chains are frequent.
    sub = draw(st.lists(st.sampled_from(alphabet), min_size=1, max_size=4, unique=True))
    sub = "".join(sorted(set(sub) | set(sfx)))
    char = st.sampled_from(sub)
    piece = st.text(alphabet=sub, min_size=1, max_size=4)
    token = st.one_of(
        char, char.map(lambda p: sfx + p), piece, piece.map(lambda p: sfx + p), st.just(sfx), st.just("")
    )
    tokens = draw(st.lists(token, min_size=2, max_size=16, unique=True))
    if draw(st.booleans()):
        # Every single character, as a word start and as a continuation: then
        # every word over ``sub`` is tokenizable and results are long.
        tokens += [t for c in sub for t in (c, sfx + c) if t not in tokens]
        tokens = list(dict.fromkeys(tokens))
    if UNK not in tokens:
        tokens.insert(draw(st.integers(0, len(tokens))), UNK)
    max_chars = draw(st.sampled_from([100, 100, 100, 100, 3, 6]))
    cjk = draw(st.sampled_from(["hf", "hf", "bert", None]))
    # [UNK] is a special token by default (kept whole in text, which makes
    # segkit take its normalization pass); [] takes the direct path.
    specials = draw(st.sampled_from([None, []]))
    return sfx, tokens, max_chars, (cjk, specials), sub, alphabet


def _chunks(tokens, sfx, sub, alphabet):
    """Inputs glued from vocabulary pieces, so that multi-piece results are
    frequent: a word-start piece (any token, or random characters) followed
    by continuation pieces (tokens with the indicator stripped, or random
    characters); random characters come mostly from the vocabulary's own
    characters ``sub``, sometimes from the wider ``alphabet``."""
    starts = sorted(t for t in tokens if t and t != UNK) or ["a"]
    conts = sorted({t[len(sfx):] for t in tokens if len(t) > len(sfx) and t.startswith(sfx)} - {UNK}) or ["a"]
    noise = st.one_of(
        st.text(alphabet=sub, min_size=1, max_size=2),
        st.text(alphabet=sub, min_size=1, max_size=2),
        st.text(alphabet=alphabet, min_size=1, max_size=2),
    )
    first = st.one_of(st.sampled_from(starts), st.sampled_from(starts), noise)
    rest = st.lists(st.one_of(st.sampled_from(conts), st.sampled_from(conts), noise), max_size=5)
    word = st.tuples(first, rest).map(lambda fr: fr[0] + "".join(fr[1]))
    return st.one_of(word, word, st.text(alphabet=sub, max_size=6))


def _spans_to_ids(spans, index):
    return [index[t] for t, _, _ in spans], [(a, b) for _, a, b in spans]


@SETTINGS
@given(case=wordpiece_cases(), data=st.data())
def test_wordpiece_matches_reference(case, data):
    sfx, tokens, max_chars, (cjk, specials), sub, alphabet = case
    options = {"cjk": cjk} if cjk else {"handle_chinese_chars": False}
    wp = segkit.WordPiece(
        tokens, suffix_indicator=sfx, max_input_chars_per_word=max_chars, special_tokens=specials, **options
    )
    vocab = set(tokens)
    index = {t: i for i, t in enumerate(tokens)}

    # One word, no pre-tokenization (spaces and punctuation are ordinary characters).
    words = data.draw(st.lists(_chunks(tokens, sfx, sub, alphabet), min_size=1, max_size=4), label="words")
    for w in words:
        assert wp.tokenize_word(w) == wordpiece_word(w, vocab, sfx, UNK, max_chars), w

    # Text: pre-tokenization + WordPiece, with ids and offsets.
    text_chunks = _chunks(tokens, sfx, sub + " .(", alphabet + TEXT_EXTRA)
    texts = data.draw(st.lists(text_chunks, min_size=1, max_size=4), label="texts")
    expected = []
    for t in texts:
        spans = wordpiece_text(t, vocab, sfx, UNK, max_chars, CJK[cjk])
        ids, offsets = _spans_to_ids(spans, index)
        expected.append((ids, offsets))
        assert wp.tokenize(t) == [tok for tok, _, _ in spans], t
        enc = wp.encode(t)
        assert (enc.ids, enc.offsets) == (ids, offsets), t
        assert wp.encode_ids(t) == ids, t
        assert enc.tokens == [tok for tok, _, _ in spans]

    batch = wp.encode_batch(texts)
    assert len(batch) == len(texts)
    assert [(e.ids, e.offsets) for e in batch] == expected
    assert batch.ids == [ids for ids, _ in expected]


@st.composite
def medium_cases(draw):
    """A few hundred tokens over three letters: many nodes with long failure
    pop lists, so the automaton's internal tables grow during construction."""
    sfx = draw(st.sampled_from(["##", "", "b"]))
    piece = st.text(alphabet="abc", min_size=1, max_size=7)
    starts = draw(st.lists(piece, min_size=50, max_size=300, unique=True))
    conts = draw(st.lists(piece, min_size=50, max_size=300, unique=True))
    tokens = list(dict.fromkeys([UNK] + starts + [sfx + c for c in conts]))
    return sfx, tokens


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=medium_cases(), words=st.lists(st.text(alphabet="abcd", max_size=40), min_size=5, max_size=30))
def test_wordpiece_medium_vocabularies(case, words):
    sfx, tokens = case
    wp = segkit.WordPiece(tokens, suffix_indicator=sfx)
    vocab = set(tokens)
    got = [wp.tokenize_word(w) for w in words]
    assert got == [wordpiece_word(w, vocab, sfx) for w in words]
    text = " ".join(words)
    spans = wordpiece_text(text, vocab, sfx)
    enc = wp.encode(text)
    assert enc.tokens == [t for t, _, _ in spans]
    assert enc.offsets == [(a, b) for _, a, b in spans]


def check_failure_table(wp: segkit.WordPiece, tokens, sfx) -> int:
    """Every node's (f(v), F(v)) against Definition 1; returns the node count."""
    auto = wp.automaton
    vocab = {t for t in tokens if t}
    ids = {t: i for i, t in enumerate(tokens)}
    word_nodes, cont_nodes = trie_nodes(vocab, sfx)
    checked = 0
    for continuation, nodes in ((False, word_nodes), (True, cont_nodes)):
        for chi in sorted(nodes):
            slot = auto.node(chi, continuation=continuation)
            assert slot >= 0, (chi, continuation)
            rest, pops = naive_failure(chi, continuation, vocab, sfx, cont_nodes)
            expected_f = -1 if rest is None else auto.node(rest, continuation=True)
            expected = (expected_f, [(ids[t], n) for t, n in pops])
            assert auto.failure(slot) == expected, (chi, continuation, rest, pops)
            checked += 1
    return checked


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=medium_cases())
def test_failure_links_and_pops_match_definition(case):
    sfx, tokens = case
    wp = segkit.WordPiece(tokens, suffix_indicator=sfx)
    assert check_failure_table(wp, tokens, sfx) > len(tokens)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=wordpiece_cases())
def test_failure_links_and_pops_small_vocabularies(case):
    sfx, tokens, _max_chars, _cjk, _sub, _alphabet = case
    wp = segkit.WordPiece(tokens, suffix_indicator=sfx)
    check_failure_table(wp, tokens, sfx)


# ----------------------------------------------------------- explicit traps
def test_trap_suffix_indicator_made_of_token_characters():
    # Reading "xx" from the start of a word must not land in the continuation
    # state: "xxx" is x + (xx)xx.
    tokens = ["x", "xxxx", UNK]
    wp = segkit.WordPiece(tokens, suffix_indicator="xx")
    assert wordpiece_word("xxx", set(tokens), "xx") == ["x", "xxxx"]
    assert wp.tokenize_word("xxx") == ["x", "xxxx"]
    assert wp.encode("xxx").offsets == [(0, 1), (1, 3)]
    for w in ["x", "xx", "xxxx", "xxxxx", "xxxxxxx", "xxxxxxxxx"]:
        assert wp.tokenize_word(w) == wordpiece_word(w, set(tokens), "xx"), w
    assert wp.tokenize_word("xx") == [UNK]  # x, then "xx"+"x" is not a token


@pytest.mark.parametrize("tokens", [["[UNK]"], ["[UNK]", "("], ["[UNK]", "(", "##q"], ["[UNK]", "q("]])
def test_trap_punctuation_then_unknown_terminates(tokens, with_timeout):
    wp = segkit.WordPiece(tokens)
    for text in ["(q", "(q(", "q(", "((q", "(q q(", "(", "q"]:
        got = with_timeout(lambda: wp.encode(text), 30)
        spans = wordpiece_text(text, set(tokens))
        assert (got.tokens, got.offsets) == ([t for t, _, _ in spans], [(a, b) for _, a, b in spans]), text
        assert with_timeout(lambda: wp.tokenize_word(text), 30) == wordpiece_word(text, set(tokens)), text


def test_trap_punctuation_then_unknown_exact():
    wp = segkit.WordPiece(["[UNK]", "("])
    enc = wp.encode("(q")
    assert enc.tokens == ["(", "[UNK]"]
    assert enc.offsets == [(0, 1), (1, 2)]


@pytest.mark.parametrize(
    "tokens, word, expected",
    [
        # The word is exactly the suffix indicator.
        (["[UNK]", "a", "##a"], "##", ["[UNK]"]),
        (["[UNK]", "##", "a", "##a"], "##", ["##"]),
        (["[UNK]", "#", "###"], "##", ["#", "###"]),
        (["[UNK]", "#"], "##", ["[UNK]"]),
        # The indicator itself is a token: it never serves as an empty continuation.
        (["[UNK]", "##", "a", "##a"], "a##", ["[UNK]"]),
        (["[UNK]", "##", "a", "##a"], "##a", ["##a"]),
        (["[UNK]", "##", "a", "##a"], "aa", ["a", "##a"]),
        (["[UNK]", "##", "a", "####"], "a##", ["a", "####"]),
        (["[UNK]", "##", "####"], "####", ["####"]),
        (["[UNK]", "##", "###"], "####", ["###", "###"]),
        # A literal "##..." word matches tokens that start with the indicator.
        (["[UNK]", "##b", "##c"], "##bc", ["##b", "##c"]),
        (["[UNK]", "##b", "##c"], "##b##c", ["[UNK]"]),
    ],
)
def test_trap_words_made_of_the_indicator(tokens, word, expected):
    assert wordpiece_word(word, set(tokens)) == expected  # the oracle agrees with the hand result
    wp = segkit.WordPiece(tokens)
    assert wp.tokenize_word(word) == expected


@pytest.mark.parametrize("sfx", SUFFIXES)
def test_trap_vocab_contains_the_indicator(sfx):
    tokens = [UNK, "a", "b", sfx + "a", sfx + "b", sfx, sfx + sfx]
    tokens = list(dict.fromkeys(t for t in tokens if t))  # "" and duplicates out
    wp = segkit.WordPiece(tokens, suffix_indicator=sfx)
    vocab = set(tokens)
    for w in ["a", "ab", "ba", sfx, sfx + sfx, sfx + sfx + sfx, "a" + sfx, sfx + "a", "a" + sfx + "b", "abab"]:
        assert wp.tokenize_word(w) == wordpiece_word(w, vocab, sfx), (sfx, w)


# ------------------------------------------------------------ engine direct
ENGINE_ALPHABET = "abé中𝔘 ."
ENGINE_TEXT_ALPHABET = ENGINE_ALPHABET + "z"  # z is never in a key
CHAR_ID = 1000
UNK_ID = 999


@st.composite
def engine_cases(draw):
    sub = "".join(draw(st.lists(st.sampled_from(ENGINE_ALPHABET), min_size=1, max_size=4, unique=True)))
    keys = draw(st.lists(st.text(alphabet=sub, min_size=1, max_size=4), min_size=1, max_size=12, unique=True))
    if draw(st.booleans()):
        keys += [c for c in sub if c not in keys]
    # Distinct ids, not in key order.
    ids = draw(st.permutations(list(range(3, 3 + len(keys)))))
    use_classes = draw(st.booleans())
    return keys, list(ids), use_classes, sub


def _classes():
    classes = np.zeros(0x110000, dtype=np.uint8)
    classes[ord(" ")] = SPACE
    classes[ord(".")] = ISOLATED
    return classes


_CLASSES = _classes()


def _by_words(text, use_classes, fn):
    """Apply a whole-text reference to each word of the generic pre-tokenizer."""
    if not use_classes:
        return fn(text)
    out = []
    for word, ws, _ in split_by_classes(text, space=" ", isolated="."):
        out.extend((i, ws + a, ws + b) for i, a, b in fn(word))
    return out


def _check_engine(auto, texts, expected_fn, use_classes):
    for t in texts:
        exp = _by_words(t, use_classes, expected_fn)
        ids, st_, en = auto.segment(t)
        assert ids.dtype == np.int32 and st_.dtype == np.int32 and en.dtype == np.int32
        got = list(zip(ids.tolist(), st_.tolist(), en.tolist()))
        assert got == exp, t
        assert auto.segment_ids(t).tolist() == [i for i, _, _ in exp], t
        # Without pre-tokenization the whole text is one word.
        got_word = list(zip(*(a.tolist() for a in auto.segment(t, pretokenize=False))))
        assert got_word == expected_fn(t), t
    # Batches with and without prefetching ahead (which must not change a
    # result; it reads ahead only in batches longer than its distance).
    for lookahead in (False, True):
        auto.lookahead = lookahead
        for batch in (texts, texts * 12):
            ids, st_, en, rows = auto.segment_batch(batch)
            rows = rows.tolist()
            exp_all = [_by_words(t, use_classes, expected_fn) for t in batch]
            assert rows[0] == 0 and len(rows) == len(batch) + 1
            for k, exp in enumerate(exp_all):
                a, b = rows[k], rows[k + 1]
                assert list(zip(ids[a:b].tolist(), st_[a:b].tolist(), en[a:b].tolist())) == exp, batch[k]
            ids2, none1, none2, rows2 = auto.segment_batch(batch, offsets=False)
            assert none1 is None and none2 is None
            assert ids2.tolist() == ids.tolist() and rows2.tolist() == rows


ENGINE_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _texts(keys, sub):
    chunk = st.one_of(
        st.sampled_from(keys),
        st.sampled_from(keys),
        st.text(alphabet=sub, max_size=3),
        st.text(alphabet=ENGINE_TEXT_ALPHABET, max_size=2),
    )
    return st.lists(st.lists(chunk, max_size=6).map("".join), min_size=1, max_size=4)


@ENGINE_SETTINGS
@given(case=engine_cases(), direction=st.sampled_from(["forward", "backward"]), data=st.data())
@example(case=(["ab", "b", "abc"], [3, 4, 5], False, "abc"), direction="forward", data=None)
@example(case=(["ab", "b", "abc"], [3, 4, 5], False, "abc"), direction="backward", data=None)
def test_engine_char_policy_matches_naive_maxmatch(case, direction, data):
    keys, ids, use_classes, _sub = case
    config = segkit.EngineConfig(unknown="char", direction=direction, char_id=CHAR_ID)
    auto = segkit.Automaton.build(keys, ids, config, _CLASSES if use_classes else None)
    index = dict(zip(keys, ids))
    naive = forward_maxmatch if direction == "forward" else backward_maxmatch
    if data is None:
        texts = ["abcab", "zabz", "babc", "", "abc.ab b"]
    else:
        texts = data.draw(_texts(keys, _sub), label="texts")
    _check_engine(auto, texts, lambda t: naive(t, index, CHAR_ID), use_classes)


@ENGINE_SETTINGS
@given(case=engine_cases(), max_chars=st.sampled_from([None, None, 2, 5]), data=st.data())
def test_engine_word_policy_matches_naive_maxmatch(case, max_chars, data):
    keys, ids, use_classes, _sub = case
    config = segkit.EngineConfig(unknown="word", unk_id=UNK_ID, max_word_chars=max_chars)
    auto = segkit.Automaton.build(keys, ids, config, _CLASSES if use_classes else None)
    index = dict(zip(keys, ids))
    texts = data.draw(_texts(keys, _sub), label="texts")
    _check_engine(auto, texts, lambda t: forward_maxmatch_word(t, index, UNK_ID, max_chars), use_classes)


def test_naive_references_on_known_cases():
    # The oracle itself, on cases worked out by hand.
    keys = {"ab": 1, "abc": 2, "bc": 3, "c": 4, "cd": 5}
    assert forward_maxmatch("abcd", keys, 0) == [(2, 0, 3), (0, 3, 4)]
    assert backward_maxmatch("abcd", keys, 0) == [(1, 0, 2), (5, 2, 4)]
    assert forward_maxmatch_word("abcd", keys, 9) == [(9, 0, 4)]
    assert forward_maxmatch_word("abcc", keys, 9) == [(2, 0, 3), (4, 3, 4)]
    assert forward_maxmatch_word("abcc", keys, 9, max_chars=3) == [(9, 0, 4)]
    assert forward_maxmatch_word("", keys, 9) == []
    assert wordpiece_text("un aff!", {"un", "aff", "!", "##f"}) == [
        ("un", 0, 2), ("aff", 3, 6), ("!", 6, 7)
    ]
    assert wordpiece_text("中文x", {"中", "x"}) == [("中", 0, 1), ("[UNK]", 1, 2), ("x", 2, 3)]
    assert wordpiece_text("中文x", {"中", "x"}, cjk_ranges=()) == [("[UNK]", 0, 3)]


@st.composite
def repeated_run_cases(draw):
    """Keys of long runs of one or two letters (``aaaab``, ``##bbbb``...):
    nodes whose pops lists extend their parent's, share its pairs or copy
    them (issue 27: the pops of ``"q" * n`` took n**2 / 2 pairs)."""
    sfx = draw(st.sampled_from(["##", "", "b"]))
    run = st.builds(lambda a, n, b, m: a * n + b * m, st.sampled_from("abc"), st.integers(1, 30),
                    st.sampled_from("abc"), st.integers(0, 4))
    starts = draw(st.lists(run, min_size=1, max_size=12, unique=True))
    conts = draw(st.lists(st.one_of(run, st.sampled_from("abc")), min_size=1, max_size=12, unique=True))
    tokens = list(dict.fromkeys([UNK] + starts + [sfx + c for c in conts]))
    return sfx, tokens


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=repeated_run_cases(), words=st.lists(st.text(alphabet="abc", max_size=70), min_size=1, max_size=12))
def test_pops_of_repeated_runs_match_definition_and_survive_the_checks(case, words):
    """Against Definition 1 and the reference WordPiece; the pool passes the
    structural check of files without keys (prefix sums over shared
    pairs) and a model file round trip keeps it as it is."""
    import tempfile
    from pathlib import Path

    from segkit.engine.automaton import automaton_from_state, automaton_state

    sfx, tokens = case
    wp = segkit.WordPiece(tokens, suffix_indicator=sfx, max_input_chars_per_word=1000)
    check_failure_table(wp, tokens, sfx)
    vocab = set(tokens)
    assert [wp.tokenize_word(w) for w in words] == [wordpiece_word(w, vocab, sfx, max_chars=1000) for w in words]
    config, arrays = automaton_state(wp.automaton)
    ids = np.ones(len(tokens) + 1, dtype=bool)
    again = automaton_from_state(config, {"packed": np.array(arrays["packed"])}, valid_ids=ids)
    assert np.array_equal(again.packed, wp.automaton.packed)
    path = Path(tempfile.mkdtemp()) / "m.segkit"
    wp.save(path)
    assert np.array_equal(segkit.load(path).automaton.packed, wp.automaton.packed)
