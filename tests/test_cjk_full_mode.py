"""``ChineseMaxMatch.cut_all``: jieba's full mode.

Checked against the naive reference (:func:`cjk_reference.full_mode`,
written from jieba's description) on hypothesis dictionaries and texts,
with words added and deleted; and against jieba 0.42.1 itself (skipped when
it is not installed) with the default dictionary on hypothesis strings, the
bundled multilingual sample and, when ``../shared`` is there, the SIGHAN
2005 pku and msr test texts.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import cjk_reference as ref
import segkit

SIGHAN = Path(__file__).resolve().parents[2] / "shared" / "data" / "sighan2005"
SAMPLE = Path(__file__).parent / "data" / "multilingual-sample.jsonl"

CHARS = "中文研究生命起源北京大学清华abxZ39.%+#&-_，。!？ \t\r\n\u3000\x1c𠀀ａ"
words_st = st.lists(st.text(alphabet=CHARS.replace(" ", "").replace("\t", "").replace("\r", "").replace("\n", "")
                                   .replace("\u3000", "").replace("\x1c", ""), min_size=1, max_size=4),
                    max_size=25)
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _clean(words):
    # whitespace never matches (ChineseMaxMatch refuses such words): Python's \s as jieba's
    return [w for w in words if not any(c.isspace() for c in w)]


@SETTINGS
@given(words_st, st.text(alphabet=CHARS, max_size=40), st.booleans())
@example(["3G", "3GP"], "x3GPy", True)  # jieba glues x and y, which are not adjacent
@example(["B超", "AA制"], "AB超C AA制", False)
@example([], "，。 \r\n\r\r\nab", True)
def test_matches_the_reference(words, text, keep):
    words = _clean(words)
    seg = segkit.ChineseMaxMatch(words, keep_whitespace=keep)
    assert seg.cut_all(text) == ref.full_mode(text, words, keep)


@SETTINGS
@given(words_st, words_st, st.data(), st.text(alphabet=CHARS, max_size=40))
def test_added_and_deleted_words_count(base, added, data, text):
    base, added = _clean(base), _clean(added)
    seg = segkit.ChineseMaxMatch(base)
    seg.cut_all("北京")  # tables of the first state made: the changes must make new ones
    seg.add_words(added)
    gone = data.draw(st.lists(st.sampled_from(base + added), max_size=4)) if base + added else []
    for w in gone:
        seg.del_word(w)
    now = [w for w in dict.fromkeys(base + added) if w not in set(gone)]
    assert seg.cut_all(text) == ref.full_mode(text, now, False)
    assert segkit.ChineseMaxMatch(now).cut_all(text) == seg.cut_all(text)


def test_independent_of_mode_and_alnum_runs():
    words = ["研究", "研究生", "生命", "命", "起源"]
    text = "研究生命起源 abc3.5%"
    results = {tuple(segkit.ChineseMaxMatch(words, mode=m, alnum_runs=a).cut_all(text))
               for m in ("forward", "backward", "bidirectional") for a in (True, False)}
    assert results == {("研究", "研究生", "生命", "起源", "abc3", ".", "5", "%")}


def test_bad_text():
    seg = segkit.ChineseMaxMatch(["北京"])
    with pytest.raises(TypeError, match="expected text as str, found bytes"):
        seg.cut_all(b"\xe5\x8c\x97")
    with pytest.raises(ValueError, match="surrogate"):
        seg.cut_all("北\ud800京")
    assert seg.cut_all("") == []


def test_long_text_is_linear_in_output():
    seg = segkit.ChineseMaxMatch(["北京", "北京大学", "大学", "学生"])
    text = "北京大学生，" * 20_000
    got = seg.cut_all(text)
    assert got[:5] == ["北京", "北京大学", "大学", "学生", "，"]
    assert len(got) == 5 * 20_000


# --------------------------------------------------------------- vs jieba
def _jieba():
    jieba = pytest.importorskip("jieba", reason="jieba (the test extra) not installed")
    jieba.setLogLevel(logging.WARNING)
    return jieba


_SEG: dict = {}


def _default(keep: bool = True):
    if keep not in _SEG:
        _SEG[keep] = segkit.ChineseMaxMatch(keep_whitespace=keep)
    return _SEG[keep]


def _jieba_full(jieba, text, keep=True):
    return [w for w in jieba.cut(text, cut_all=True) if w and (keep or not w.isspace())]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["北京大学", "清华大学", "B超", "T恤", "3G", "C++", "AA制", "\r\n"]),
                          st.text(alphabet=CHARS), st.text()), max_size=8).map("".join))
@example("我来到北京清华大学，你好 world!  B超和T恤 x3GPy 3.5% C++ \r\n再见。")
def test_matches_jieba_on_strings(text):
    jieba = _jieba()
    assert _default().cut_all(text) == _jieba_full(jieba, text)


def test_matches_jieba_on_the_multilingual_sample():
    jieba = _jieba()
    lines = [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    for keep in (True, False):
        seg = _default(keep)
        for text in lines:
            assert seg.cut_all(text) == _jieba_full(jieba, text, keep), text


def test_matches_jieba_after_add_and_del_word():
    jieba = _jieba()
    tok = jieba.Tokenizer()
    seg = segkit.ChineseMaxMatch()
    text = "他在中国科学院计算技术研究所读研究生命科学，吃了一顿火锅。"
    for w in ["计算技术研究所", "读研", "顿火"]:
        tok.add_word(w)
        seg.add_word(w)
    for w in ["研究生", "火锅", "中国"]:
        tok.del_word(w)
        seg.del_word(w)
    expected = [w for w in tok.cut(text, cut_all=True) if w]
    assert "计算技术研究所" in expected and "研究生" not in expected
    assert seg.cut_all(text) == expected


@pytest.mark.parametrize("name", ["pku_test.utf8", "msr_test.utf8"])
def test_matches_jieba_on_sighan(name):
    jieba = _jieba()
    path = SIGHAN / name
    if not path.is_file():
        pytest.skip(f"SIGHAN 2005 data not found at {path} (../shared is not part of segkit)")
    lines = path.read_text(encoding="utf-8").splitlines()
    seg = _default(False)
    n = 0
    for line in lines:
        expected = _jieba_full(jieba, line, False)
        assert seg.cut_all(line) == expected, line
        n += len(expected)
    assert n > 100_000
