"""``ChineseMaxMatch(keep_whitespace=True)``, ``lcut`` and ``del_word``.

With ``keep_whitespace=True`` every character is in exactly one token and
whitespace becomes tokens where jieba (``HMM=False``) makes them.  Checked
against:

* a naive reference (:mod:`cjk_reference` for the words, plus the rule
  written out below for the whitespace between them), on hypothesis
  strings, in every mode, single and batch;
* jieba itself (skipped when it is not installed): the whitespace tokens
  and their positions on hypothesis strings and on the SIGHAN 2005 pku and
  msr test texts (``tools/check_jieba_whitespace.py`` runs the training
  texts too).  The other tokens may differ: jieba picks the most probable
  path of a word DAG, segkit the longest match.
"""

from __future__ import annotations

import pickle
import re
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import cjk_reference as ref
import segkit

MODES = ("forward", "backward", "bidirectional")
SIGHAN = Path(__file__).resolve().parents[2] / "shared" / "data" / "sighan2005"

#: Every Unicode White_Space character, the four characters Python's ``\s``
#: adds (U+001C-U+001F), and characters that are not whitespace at all
#: (zero-width space, U+180E, NUL; no lone surrogate: every entry point
#: refuses them, see tests/test_bad_input.py).
SPACES = "".join(sorted(ref.WHITE_SPACE)) + "\x1c\x1d\x1e\x1f" + "\u200b\u180e\x00"
WORD_CHARS = "中文研究生命起源北京大学𠀀abZ19.%ａ１．，-_+#&"

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def reference(text: str, words, mode: str, alnum: bool) -> list[tuple[str, int, int]]:
    """The expected tokens, written from the specification: the reference
    tokens, and each character between them a token of its own, except
    ``"\\r"`` directly followed by ``"\\n"``, which is one token."""
    out = []
    pos = 0
    for s, e in [*ref.segment(text, words, mode, alnum), (len(text), len(text))]:
        while pos < s:
            step = 2 if text.startswith("\r\n", pos) and pos + 2 <= s else 1
            out.append((text[pos : pos + step], pos, pos + step))
            pos += step
        if e > s:
            out.append((text[s:e], s, e))
        pos = e
    return out


@st.composite
def cases(draw):
    sub = "".join(draw(st.lists(st.sampled_from(WORD_CHARS), min_size=1, max_size=6, unique=True)))
    words = draw(st.lists(st.text(alphabet=sub, min_size=1, max_size=4), max_size=10))
    spaces = st.one_of(st.just("\r\n"), st.text(alphabet=SPACES, min_size=1, max_size=3))
    piece = st.one_of(st.sampled_from(words) if words else st.nothing(), st.text(alphabet=sub, max_size=3), spaces)
    texts = draw(st.lists(st.lists(piece, max_size=10).map("".join), min_size=1, max_size=4))
    return words, texts


def _check(words, texts) -> None:
    lex = ref.Lexicon(words)
    for mode in MODES:
        for alnum in (True, False):
            seg = segkit.ChineseMaxMatch(words, mode=mode, alnum_runs=alnum, keep_whitespace=True)
            expected = [reference(t, lex, mode, alnum) for t in texts]
            for t, e in zip(texts, expected):
                got = seg.tokenize(t)
                assert got == e, f"mode={mode} alnum_runs={alnum} text={t!r}"
                assert "".join(seg.cut(t)) == t
                assert seg.lcut(t) == [w for w, _, _ in e]
                # offsets: contiguous, covering the text, pointing at the words
                assert [s for _, s, _ in got] == ([0] + [x for _, _, x in got])[: len(got)]
                assert all(t[s:x] == w and x > s for w, s, x in got)
            assert seg.tokenize_batch(texts) == expected
            assert seg.cut_batch(texts) == [[w for w, _, _ in e] for e in expected]
            assert seg.cut_batch(texts * 9, num_threads=2) == [[w for w, _, _ in e] for e in expected] * 9


@SETTINGS
@given(cases())
@example((["北京", "大学"], ["  北京\r\n\r\r\n大学 \t\u3000", "", " ", "\r", "\n\r\n", "hello world 3. 5 1.5%"]))
@example(([], ["a\x1cb\u200bc\u2028\u2029\x85d"]))
def test_keep_whitespace_matches_reference(case):
    words, texts = case
    _check(words, texts)


def test_join_is_the_text_for_any_string():
    seg = segkit.ChineseMaxMatch(["北京", "ab", "1.5"], keep_whitespace=True)

    @settings(max_examples=200, deadline=None)
    @given(st.text())
    def check(t):
        assert "".join(seg.cut(t)) == t
        assert "".join(seg.cut_batch([t, t])[1]) == t
        assert "".join(w for w, _, _ in seg.tokenize_batch([t])[0]) == t

    check()


def test_long_text_takes_the_batch_path():
    seg = segkit.ChineseMaxMatch(["北京", "大学"], keep_whitespace=True)
    text = "北京 大学\r\n" * 5000  # longer than MAX_ONE_CHARS: cut() goes through the batch path
    words = seg.cut(text)
    assert "".join(words) == text
    assert words[:5] == ["北京", " ", "大学", "\r\n", "北京"]


def test_default_drops_whitespace_and_repr():
    seg = segkit.ChineseMaxMatch(["北京"])
    assert seg.keep_whitespace is False
    assert seg.cut(" 北京 \r\n") == ["北京"]
    assert "keep_whitespace" not in repr(seg)
    assert "keep_whitespace=True" in repr(segkit.ChineseMaxMatch(["北京"], keep_whitespace=True))
    with pytest.raises(TypeError, match="keep_whitespace must be True or False, found 'yes'"):
        segkit.ChineseMaxMatch(["北京"], keep_whitespace="yes")


@pytest.mark.parametrize("mode", MODES)
def test_keep_whitespace_survives_pickle_and_save(tmp_path, mode):
    seg = segkit.ChineseMaxMatch(["北京", "大学"], mode=mode, keep_whitespace=True)
    text = " 北京  大学\r\n"
    expected = [" ", "北京", " ", " ", "大学", "\r\n"]
    assert seg.cut(text) == expected
    again = pickle.loads(pickle.dumps(seg))
    assert again.keep_whitespace is True and again.cut(text) == expected
    seg.save(tmp_path / "m.segkit")
    loaded = segkit.load(tmp_path / "m.segkit")
    assert loaded.keep_whitespace is True and loaded.mode == mode and loaded.cut(text) == expected
    plain = segkit.ChineseMaxMatch(["北京", "大学"], mode=mode)
    plain.save(tmp_path / "p.segkit")
    assert segkit.load(tmp_path / "p.segkit").cut(text) == ["北京", "大学"]


def test_default_dictionary_with_keep_whitespace():
    seg = segkit.ChineseMaxMatch(keep_whitespace=True)
    assert seg.cut("我来到 北京清华大学\n") == ["我", "来到", " ", "北京", "清华大学", "\n"]


# ------------------------------------------------------------------ del_word
def test_del_word():
    seg = segkit.ChineseMaxMatch(["北京", "大学", "北京大学"])
    assert seg.cut("北京大学") == ["北京大学"]
    seg.del_word("北京大学")
    assert seg.cut("北京大学") == ["北京", "大学"]
    assert seg.cut_batch(["北京大学"]) == [["北京", "大学"]]
    assert "北京大学" not in seg.words and len(seg.words) == 2
    seg.del_word("北京大学")  # gone already: ignored, as jieba ignores it
    seg.del_word("从来没有")
    seg.del_word("")
    assert seg.words == ["北京", "大学"]
    seg.add_word("北京大学")  # and back
    assert seg.cut("北京大学") == ["北京大学"]
    with pytest.raises(TypeError, match="del_word: expected a word as str, found int"):
        seg.del_word(3)


def test_del_word_default_dictionary_and_save(tmp_path):
    seg = segkit.ChineseMaxMatch()
    assert "清华大学" in seg.cut("清华大学")
    n = len(seg.words)
    seg.del_word("清华大学")
    assert seg.cut("清华大学") == ["清华", "大学"]
    assert len(seg.words) == n - 1
    seg.save(tmp_path / "d.segkit")
    assert segkit.load(tmp_path / "d.segkit").cut("清华大学") == ["清华", "大学"]
    assert pickle.loads(pickle.dumps(seg)).cut("清华大学") == ["清华", "大学"]
    assert segkit.ChineseMaxMatch().cut("清华大学") == ["清华大学"]  # other segmenters keep it


def test_del_word_while_segmenting():
    """Calls running while words are removed and added back see one
    dictionary state or the other, never a mix (as with add_word)."""
    seg = segkit.ChineseMaxMatch(["北京", "大学", "北京大学"])
    texts = ["北京大学"] * 200
    allowed = ([["北京大学"]] * 200, [["北京", "大学"]] * 200)
    errors = []

    def reader():
        for _ in range(30):
            got = seg.cut_batch(texts)
            if got not in allowed:
                errors.append(got[:3])

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for th in threads:
        th.start()
    for _ in range(30):
        seg.del_word("北京大学")
        seg.add_word("北京大学")
    for th in threads:
        th.join()
    assert not errors


def test_del_word_matches_jieba_on_absent_words():
    jieba = pytest.importorskip("jieba", reason="jieba (the test extra) not installed")
    tok = jieba.Tokenizer()
    tok.del_word("这个词肯定不在词典里")  # jieba raises nothing either
    assert "这个词肯定不在词典里" not in tok.lcut("这个词肯定不在词典里", HMM=False)


# --------------------------------------------------------------- vs jieba
def _jieba():
    jieba = pytest.importorskip("jieba", reason="jieba (the test extra) not installed")
    import logging

    jieba.setLogLevel(logging.WARNING)
    return jieba


_SPACE_TOKEN = re.compile(r"\s+")


def whitespace_tokens(tokens) -> list[tuple[int, str]]:
    """``(offset, token)`` of the tokens made of whitespace (Python's ``\\s``)."""
    out = []
    pos = 0
    for w in tokens:
        if _SPACE_TOKEN.fullmatch(w):
            out.append((pos, w))
        pos += len(w)
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.just("\r\n"), st.text(alphabet=SPACES + "中文北京大学abc123.%-_+#&，。"), st.text()), max_size=8).map("".join))
@example("  hello world\t3. 5\r\n\r\r\n\u3000北京\u00a0\x1c\x85 ")
def test_whitespace_tokens_match_jieba(text):
    jieba = _jieba()
    seg = _default_keep()
    expected = whitespace_tokens(jieba.lcut(text, HMM=False))
    got = seg.cut(text)
    assert "".join(got) == text
    assert whitespace_tokens(got) == expected


_SEG = []


def _default_keep():
    if not _SEG:
        _SEG.append(segkit.ChineseMaxMatch(keep_whitespace=True))
    return _SEG[0]


@pytest.mark.parametrize("name", ["pku_test.utf8", "msr_test.utf8"])
def test_whitespace_tokens_match_jieba_on_sighan(name):
    jieba = _jieba()
    path = SIGHAN / name
    if not path.is_file():
        pytest.skip(f"SIGHAN 2005 data not found at {path} (../shared is not part of segkit)")
    with open(path, encoding="utf-8", newline="") as fh:  # keep its "\r\n" endings
        lines = fh.read().splitlines(keepends=True)
    assert any(line.endswith("\r\n") for line in lines)
    seg = _default_keep()
    got = seg.cut_batch(lines)
    n_spaces = 0
    for line, words in zip(lines, got):
        assert "".join(words) == line
        expected = whitespace_tokens(jieba.lcut(line, HMM=False))
        assert whitespace_tokens(words) == expected, line
        n_spaces += len(expected)
    assert n_spaces >= len(lines)  # every line ends with a newline token at least


def test_a_bad_keep_whitespace_in_a_model_file_is_the_loaders_error(tmp_path):
    from segkit.models.files import ModelFileError

    seg = segkit.ChineseMaxMatch(["北京"])
    config, arrays, blobs = seg._model_state()
    seg._model_state = lambda: ({**config, "keep_whitespace": "yes"}, arrays, blobs)
    seg.save(tmp_path / "bad.segkit")
    with pytest.raises(ModelFileError, match="keep_whitespace must be True or False, found 'yes'"):
        segkit.load(tmp_path / "bad.segkit")
