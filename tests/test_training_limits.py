"""Trainers whose memory or time grew with the wrong thing (issue 27):
``vocab_size`` rather than the corpus, the length of the longest word times a
reservation, the square of the number of special tokens, a Python call per
byte when a Dask range boundary is far away, and ``num_threads`` without a
bound.  Where a blow-up or a hang is what is tested, the call runs in a
subprocess under an address-space limit and a timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import segkit
from segkit.runtime.threads import MAX_THREADS

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="resource limits")

REPO = Path(__file__).resolve().parents[1]
DOCS = ["low lower newest widest"] * 20


def run_limited(code: str, limit_mb: int, timeout: float = 300) -> str:
    """Run ``code`` in a child limited to ``limit_mb`` of address space;
    its standard output (it must exit 0)."""
    child = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({limit_mb} << 20, {limit_mb} << 20))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", child + textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


# ------------------------------------------------------------- vocab_size
def test_vocab_size_far_beyond_the_corpus_costs_what_the_corpus_needs():
    # train_wordpiece(DOCS, 10**8) peaked at 8.4 GB and train_bpe at 5.5 GB
    # (HF: 146 MB); 2**40 ran out of memory, 2**63 said "negative dimensions",
    # 2**64 aborted inside malloc.  Now they run in 1.5 GB of address space
    # and give what vocab_size=10**4 gives.
    out = run_limited(f"""
        import segkit
        docs = {DOCS!r}
        for v in (10**8, 2**40, 2**63, 2**64):
            print(len(segkit.train_bpe(docs, v, show_progress=False).merges),
                  len(segkit.train_wordpiece(docs, v, show_progress=False).vocab))
    """, limit_mb=1500)
    merges = len(segkit.train_bpe(DOCS, 10**4, show_progress=False).merges)
    tokens = len(segkit.train_wordpiece(DOCS, 10**4, show_progress=False).vocab)
    assert out.splitlines() == [f"{merges} {tokens}"] * 4, out


def test_min_frequency_beyond_any_count():
    # 2**70 leaked a Numba TypingError; any value above every pair's count
    # stops before the first merge, as 10**6 does.
    big = segkit.train_wordpiece(DOCS, 100, min_frequency=2**70, show_progress=False).vocab.tokens
    assert big == segkit.train_wordpiece(DOCS, 100, min_frequency=10**6, show_progress=False).vocab.tokens
    assert len(big) < len(segkit.train_wordpiece(DOCS, 100, show_progress=False).vocab.tokens)


def test_one_long_word_costs_bytes_per_character_not_hundreds():
    # A word of n characters reserved room for n new pairs (8 int64 each, and
    # a hash table) and n list blocks of 67 int64 at every merge step: 850
    # bytes of address space per character (3 million random letters needed
    # 2.8 GB).  Now about 30: the whole run fits in 1.2 GB.
    out = run_limited("""
        import numpy as np, segkit
        rng = np.random.default_rng(1)
        word = "".join(map(chr, rng.integers(97, 123, 3_000_000)))
        print(len(segkit.train_wordpiece([word], 200, show_progress=False).vocab))
    """, limit_mb=1200)
    assert out.strip() == "200"


def test_one_long_word_trains_as_the_reference():
    # the tighter reservations must not change what long words train into
    from collections import Counter

    from wordpiece_trainer_reference import reference_train, word_arrays

    from segkit.training import wordpiece as W

    rng = np.random.default_rng(7)
    for word in ("a" * 3000, "ab" * 1500, "".join(map(chr, rng.integers(97, 100, 3000)))):
        counts = Counter({word: 1, "ab": 50, "ba": 3})
        for size in (12, 60):
            expected = reference_train(counts, size, ["[UNK]"])
            assert W.train_from_word_counts(*word_arrays(counts), size, ["[UNK]"], 0, None, "##") == expected


# ---------------------------------------------------------- special tokens
def test_many_special_tokens_are_checked_in_linear_time():
    # The duplicate check compared every token with every earlier one:
    # 40,000 special tokens took 39 s, 100,000 more than a minute.  A hang
    # guard, not a benchmark: 200,000 must take far less than the timeout.
    out = run_limited("""
        from segkit.training.corpus import check_special_tokens
        tokens = [f"<tok{i}>" for i in range(200_000)]
        print(len(check_special_tokens(tokens)))
        try:
            check_special_tokens(tokens + ["<tok5>"])
        except ValueError as e:
            print(e)
    """, limit_mb=1500, timeout=60)
    assert out.splitlines() == ["200000", "special token 200000 ('<tok5>') is given twice"]


# ------------------------------------------------------- Dask range ends
def test_a_range_boundary_far_away_is_found_in_a_few_reads(tmp_path, monkeypatch):
    # Text without GPT-2 cut points (one letter repeated, CJK ideographs):
    # the boundary after a nominal range end is the end of the file.  The
    # search called the compiled cut rule once per byte (4 MB of "a" in 250 kB
    # ranges: 40 s); now one compiled pass per window, the window doubling.
    from segkit.training import ranges

    reads = []
    real = ranges._read
    monkeypatch.setattr(ranges, "_read", lambda f, pos, n: reads.append(n) or real(f, pos, n))
    for text in ("a" * 1_000_000, "中" * 400_000):
        path = tmp_path / "one-run.txt"
        path.write_text(text, encoding="utf-8")
        size = path.stat().st_size
        reads.clear()
        assert ranges.bpe_boundary(str(path), 250_000) == size
        assert len(reads) <= 12, len(reads)
        reads.clear()
        assert ranges.wordpiece_boundary(str(path), 250_000) == size
        assert len(reads) <= 12, len(reads)
    # and the boundaries are still the right ones where cuts exist
    path.write_text("aaaa bbbb cc" * 2000, encoding="utf-8")
    data = path.read_bytes()
    for pos in (1, 5, 4093, 4096, 4099, 20_000):
        cut = ranges.bpe_boundary(str(path), pos)
        assert cut >= pos and data[cut - 1 : cut] != data[cut : cut + 1], (pos, cut)


def test_dask_training_on_text_without_cut_points_equals_local(tmp_path):
    dask = pytest.importorskip("dask", reason="dask is not installed")
    import segkit.dask as sd
    from segkit.training.ranges import plan_ranges

    path = tmp_path / "a.txt"
    path.write_text("a" * 300_000 + " b" * 1000, encoding="utf-8")
    assert len(plan_ranges([str(path)], 50_000)) == 7
    with dask.config.set(scheduler="sync"):
        got = sd.train_bpe([str(path)], 300, split_bytes=50_000, show_progress=False)
    assert got.merges == segkit.train_bpe([path], 300, show_progress=False).merges


# ------------------------------------------------------------ num_threads
@pytest.mark.parametrize("call", [
    lambda n: segkit.train_bpe(DOCS, 300, num_threads=n, show_progress=False),
    lambda n: segkit.train_wordpiece(DOCS, 100, num_threads=n, show_progress=False),
    lambda n: segkit.WordPiece(["[UNK]", "a"]).encode_batch(["a"], num_threads=n),
    lambda n: segkit.ChineseMaxMatch(["北京"]).cut_batch(["北京"], num_threads=n),
], ids=["train_bpe", "train_wordpiece", "encode_batch", "cut_batch"])
def test_num_threads_has_one_bound_everywhere(call):
    # 10**4 counting threads ended in MemoryError; the bound is checked
    # before anything is allocated, by one function.
    with pytest.raises(ValueError, match=f"num_threads must be at most {MAX_THREADS}, found 10000"):
        call(10_000)
    with pytest.raises(TypeError, match="num_threads must be an int, found str"):
        call("2")
    call(MAX_THREADS)  # the bound itself is fine (the batch is small: few are used)
