"""ChineseMaxMatch.cut_arrow / tokenize_arrow against cut_batch / tokenize_batch."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from segkit_cjk import ChineseMaxMatch

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (segkit[arrow])")

SIGHAN = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "sighan2005"


@pytest.fixture(scope="module")
def sample_texts(multilingual_sample) -> list[str]:
    extra = ["", " ", "北京大学 PKU 3.5% 好\r\n  ", "𠀋𠀋北京", "ａｂｃ１２３北京"]
    return [row["text"] for row in multilingual_sample] + extra


def sample_words(texts: list[str]) -> list[str]:
    """A small dictionary: every 2- and 3-character run of CJK ideographs of the Chinese-ish texts."""
    words = set()
    for t in texts:
        for n in (2, 3):
            for i in range(len(t) - n + 1):
                w = t[i : i + n]
                if all("\u4e00" <= c <= "\u9fff" for c in w):
                    words.add(w)
    return sorted(words)[:3000]


@pytest.fixture(scope="module")
def segmenters(sample_texts):
    words = sample_words(sample_texts)
    return [
        ChineseMaxMatch(words),
        ChineseMaxMatch(words, mode="backward", alnum_runs=False),
        ChineseMaxMatch(words, mode="bidirectional"),
        ChineseMaxMatch(words, keep_whitespace=True),
    ]


def test_cut_arrow_equals_cut_batch(segmenters, sample_texts):
    arr = pa.array(sample_texts)
    for seg in segmenters:
        got = seg.cut_arrow(arr)
        assert got.type == pa.list_(pa.string())
        assert got.to_pylist() == seg.cut_batch(sample_texts), seg


def test_tokenize_arrow_equals_tokenize_batch(segmenters, sample_texts):
    arr = pa.chunked_array([sample_texts[:100], sample_texts[100:]])
    for seg in segmenters:
        table = seg.tokenize_arrow(arr)
        assert table.column_names == ["tokens", "offsets"]
        expected = seg.tokenize_batch(sample_texts)
        assert table.column("tokens").to_pylist() == [[w for w, _, _ in row] for row in expected]
        assert table.column("offsets").to_pylist() == [[[s, e] for _, s, e in row] for row in expected]


def test_cut_arrow_threads_and_slices(segmenters, sample_texts):
    seg = segmenters[2]
    texts = sample_texts * 30
    col = pa.array(["x"] + texts, pa.large_string()).slice(1)
    assert seg.cut_arrow(col, num_threads=2).to_pylist() == seg.cut_batch(texts)
    table = seg.tokenize_arrow(col, num_threads=2)
    assert table.column("offsets").to_pylist()[-3] == [[s, e] for _, s, e in seg.tokenize_batch(texts[-3:])[0]]


def test_cut_arrow_nulls(segmenters):
    seg = segmenters[0]
    arr = pa.array(["北京", None, "大学"])
    with pytest.raises(ValueError, match="texts: row 1 is null"):
        seg.cut_arrow(arr)
    assert seg.cut_arrow(arr, null="empty").to_pylist() == [seg.cut("北京"), [], seg.cut("大学")]


CJKISH = st.text(st.one_of(st.sampled_from("北京大学生好 a1.%\u3000\n"), st.characters(exclude_categories=("Cs",))),
                 max_size=20)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(CJKISH, max_size=8))
def test_cut_arrow_random(texts):
    seg = _RANDOM_SEG
    arr = pa.array(texts, pa.string())
    assert seg.cut_arrow(arr).to_pylist() == seg.cut_batch(texts)
    assert seg.tokenize_arrow(arr).column("offsets").to_pylist() == [
        [[s, e] for _, s, e in row] for row in seg.tokenize_batch(texts)
    ]


_RANDOM_SEG = ChineseMaxMatch(["北京", "大学", "北京大学", "学生", "大学生"], mode="bidirectional")


@pytest.mark.skipif(not SIGHAN.is_dir(), reason=f"SIGHAN 2005 data not found at {SIGHAN} (shared data)")
@pytest.mark.parametrize("corpus", ["pku", "msr"])
def test_cut_arrow_sighan(corpus):
    words = [w.strip() for w in (SIGHAN / f"{corpus}_training_words.utf8").read_text("utf-8-sig").splitlines()]
    seg = ChineseMaxMatch([w for w in words if w and not any(c.isspace() for c in w)])
    lines = (SIGHAN / f"{corpus}_test.utf8").read_text("utf-8-sig").splitlines()
    assert seg.cut_arrow(pa.array(lines)).to_pylist() == seg.cut_batch(lines)
