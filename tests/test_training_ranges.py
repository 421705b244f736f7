"""Counting a training file in byte ranges (segkit.training.ranges, used by
segkit.scale.dask's trainers) gives the counts of the whole file.

The references are the single-process counters of the trainers
(``bpe._pretoken_counts``, ``wordpiece.count_corpus_words``) on the whole
file; the ranges are cut at every possible size, so boundaries land inside
multi-byte characters, whitespace runs, contractions and special tokens.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from segkit.training import ranges
from segkit.training.bpe import _pretoken_counts
from segkit.training.corpus import CorpusError
from segkit.training.wordpiece import count_corpus_words

ALPHABET = st.sampled_from(list("ab Z'9\n\t  ,.!é中文😀\u3000\u0301") + ["<s>", "'s", "\r\n", "  "])
TEXTS = st.lists(ALPHABET, max_size=60).map("".join)


def _bpe_dict(pieces) -> dict[bytes, int]:
    return dict(zip(ranges._pieces_as_bytes(pieces), pieces[2].tolist()))


def _words_dict(result) -> dict[str, int]:
    cps, starts, counts = result
    s = starts.tolist()
    return {
        cps[s[k] : s[k + 1]].astype(np.uint32).tobytes().decode("utf-32-le"): int(c) for k, c in enumerate(counts.tolist())
    }


def _write(tmp_path_factory, text: str) -> str:
    path = tmp_path_factory.mktemp("ranges") / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    return str(path)


@settings(max_examples=40, deadline=None)
@given(text=TEXTS, split=st.integers(1, 40), specials=st.sampled_from([(), ("<s>",)]))
def test_bpe_ranges_count_as_the_whole_file(tmp_path_factory, text, split, specials):
    path = _write(tmp_path_factory, text)
    plan = ranges.plan_ranges([path], split)
    parts = [ranges.count_bpe_range(p, a, b, specials) for p, a, b in plan]
    assert _bpe_dict(ranges.combine_bpe(parts)) == _pretoken_counts([Path(path)], specials)


@settings(max_examples=40, deadline=None)
@given(text=TEXTS, split=st.integers(1, 40), lowercase=st.booleans())
def test_wordpiece_ranges_count_as_the_whole_file(tmp_path_factory, text, split, lowercase):
    path = _write(tmp_path_factory, text)
    plan = ranges.plan_ranges([path], split)
    parts = [ranges.count_wordpiece_range(p, a, b, lowercase) for p, a, b in plan]
    assert _words_dict(ranges.combine_wordpiece(parts, lowercase)) == _words_dict(count_corpus_words(path, lowercase))


def test_ranges_tile_the_file(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("one two<s>three 'four' 中文 " * 40, encoding="utf-8")
    size = path.stat().st_size
    for split in (1, 7, 100, size, None):
        plan = ranges.plan_ranges([path], split)
        assert plan[0][1] == 0 and plan[-1][2] == size
        bpe = [(ranges.bpe_boundary(str(path), a, ["<s>"]), ranges.bpe_boundary(str(path), b, ["<s>"])) for _, a, b in plan]
        wp = [(ranges.wordpiece_boundary(str(path), a), ranges.wordpiece_boundary(str(path), b)) for _, a, b in plan]
        for cuts in (bpe, wp):
            assert all(cuts[i][1] == cuts[i + 1][0] for i in range(len(cuts) - 1))
            assert cuts[0][0] == 0 and cuts[-1][1] == size


def test_invalid_utf8_names_file_and_offset(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"abc def " * 10 + b"\xff tail")
    with pytest.raises(CorpusError, match=r"bad\.txt: not valid UTF-8 at byte offset 80"):
        for p, a, b in ranges.plan_ranges([path], 16):
            ranges.count_bpe_range(p, a, b)


def test_bad_paths(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        ranges.plan_ranges([tmp_path / "missing.txt"])
    with pytest.raises(IsADirectoryError):
        ranges.plan_ranges(tmp_path)
    with pytest.raises(ValueError, match="split_bytes must be a positive int"):
        ranges.plan_ranges([], 0)
