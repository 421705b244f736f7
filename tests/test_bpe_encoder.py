"""The BPE encode kernels against the tiny reference (tests/bpe_encode_reference.py)
on random vocabularies trained from random corpora, including vocabularies
whose priorities do not grow along merges (the heap path) and whose merge
order disagrees with rank-by-id."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bpe_encode_reference import encode_by_merges, encode_by_rank
from segkit.presets.bpe import layout
from segkit.presets.bpe.batch import encode_pieces
from segkit.presets.bpe.tables import build_tables
from segkit.training import train_bpe

_words = st.lists(st.text("abc", min_size=1, max_size=12), min_size=1, max_size=40).map(" ".join)
_corpus = st.lists(_words, min_size=1, max_size=6)
_piece = st.binary(max_size=40) | st.text("abc ", max_size=60).map(str.encode)


def _encode(tables, pieces: list[bytes]) -> list[list[int]]:
    data = b"".join(pieces)
    lens = np.array([len(p) for p in pieces], dtype=np.int64)
    ends = np.cumsum(lens)
    out = np.empty(max(len(data), 1), dtype=np.int32)
    ids = np.full(len(pieces), -1, dtype=np.int32)
    k, piece_ends = encode_pieces(np.frombuffer(data, np.uint8), ends - lens, ends, ids, tables.model, out)
    assert k >= 0
    bounds = [0] + piece_ends.tolist()
    return [out[bounds[i] : bounds[i + 1]].tolist() for i in range(len(pieces))]


def _trained(corpus, extra):
    r = train_bpe(corpus, 256 + extra, show_progress=False)
    tokens = [r.vocab[i] for i in range(len(r.vocab))]
    return tokens, r.merges


def _monotone(tables) -> bool:
    return bool(layout.section(tables.model, layout.PARAMS)[layout.P_MONOTONE])


@given(_corpus, st.integers(1, 80), st.lists(_piece, max_size=12))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_rank_semantics_on_trained_vocabularies(corpus, extra, pieces):
    tokens, _ = _trained(corpus, extra)
    ranks = {t: i for i, t in enumerate(tokens)}
    assume(len(ranks) == len(tokens))
    tables = build_tables(tokens, ranks=np.arange(len(tokens)), whole_any=True)
    pieces = pieces + [w.encode() for w in " ".join(corpus).split(" ")[:20]]
    assert _encode(tables, pieces) == [encode_by_rank(ranks, p) for p in pieces]


@given(_corpus, st.integers(1, 80), st.lists(_piece, max_size=12), st.booleans())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_merge_semantics_on_trained_vocabularies(corpus, extra, pieces, ignore_merges):
    tokens, merges = _trained(corpus, extra)
    vocab = {t: i for i, t in enumerate(tokens)}
    assume(len(vocab) == len(tokens))
    pairs = [(vocab[a], vocab[b]) for a, b in merges]
    tables = build_tables(tokens, merges=pairs, whole_any=ignore_merges)
    assert _monotone(tables)  # trained merges always are
    pieces = pieces + [w.encode() for w in " ".join(corpus).split(" ")[:20]]
    assert _encode(tables, pieces) == [encode_by_merges(vocab, merges, p, ignore_merges) for p in pieces]


@given(_corpus, st.integers(1, 80), st.lists(_piece, max_size=12), st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_rank_semantics_with_shuffled_ranks(corpus, extra, pieces, rnd):
    # Ranks no longer follow the merge order: tokens become unreachable,
    # priorities stop growing along merges, the heap path runs.
    tokens, _ = _trained(corpus, extra)
    assume(len(set(tokens)) == len(tokens))
    multi = list(range(256, len(tokens)))
    shuffled = multi[:]
    rnd.shuffle(shuffled)
    tokens = tokens[:256] + [tokens[i] for i in shuffled]
    ranks = {t: i for i, t in enumerate(tokens)}
    tables = build_tables(tokens, ranks=np.arange(len(tokens)), whole_any=True)
    pieces = pieces + [w.encode() for w in " ".join(corpus).split(" ")[:20]]
    assert _encode(tables, pieces) == [encode_by_rank(ranks, p) for p in pieces]


@given(_corpus, st.integers(1, 80), st.lists(_piece, max_size=12), st.randoms(use_true_random=False), st.booleans())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_merge_semantics_with_shuffled_merges(corpus, extra, pieces, rnd, ignore_merges):
    # A merge list in another order: a token can be made by a merge listed
    # after a merge that uses it.
    tokens, merges = _trained(corpus, extra)
    vocab = {t: i for i, t in enumerate(tokens)}
    assume(len(vocab) == len(tokens))
    merges = merges[:]
    rnd.shuffle(merges)
    pairs = [(vocab[a], vocab[b]) for a, b in merges]
    tables = build_tables(tokens, merges=pairs, whole_any=ignore_merges)
    pieces = pieces + [w.encode() for w in " ".join(corpus).split(" ")[:20]]
    assert _encode(tables, pieces) == [encode_by_merges(vocab, merges, p, ignore_merges) for p in pieces]


@given(_corpus, st.integers(2, 80), st.lists(_piece, max_size=12), st.randoms(use_true_random=False))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_merge_order_not_id_order(corpus, extra, pieces, rnd):
    # Ids shuffled among the merged tokens, merges kept in training order:
    # HuggingFace semantics follow the merges, not the ids.
    tokens, merges = _trained(corpus, extra)
    assume(len(set(tokens)) == len(tokens))
    multi = tokens[256:]
    rnd.shuffle(multi)
    tokens = tokens[:256] + multi
    vocab = {t: i for i, t in enumerate(tokens)}
    pairs = [(vocab[a], vocab[b]) for a, b in merges]
    tables = build_tables(tokens, merges=pairs, whole_any=False)
    assert _monotone(tables)
    pieces = pieces + [w.encode() for w in " ".join(corpus).split(" ")[:20]]
    assert _encode(tables, pieces) == [encode_by_merges(vocab, merges, p) for p in pieces]


def test_disagreeing_vocabulary_on_purpose():
    # "ab" is ranked after "abc" by id but merged first by the merge list.
    tokens = [bytes([i]) for i in range(256)] + [b"abc", b"bc", b"ab"]
    ids = {t: i for i, t in enumerate(tokens)}
    merges = [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c")]
    hf = build_tables(tokens, merges=[(ids[a], ids[b]) for a, b in merges], whole_any=False)
    tk = build_tables(tokens, ranks=np.arange(len(tokens)), whole_any=True)
    # HF: a+b first (merge 0), then ab+c: one token.  tiktoken: bc (rank 257)
    # before ab (rank 258), then a+bc = abc (rank 256).
    assert _encode(hf, [b"abcd"]) == [[256, ord("d")]] == [encode_by_merges(ids, merges, b"abcd")]
    assert _encode(tk, [b"xabc"]) == [[ord("x"), 256]] == [encode_by_rank(ids, b"xabc")]
    assert _encode(hf, [b"xbca"]) == [[ord("x"), 257, ord("a")]]
    # rank semantics: "abc" made from a+bc with rank below bc's: not monotone
    assert not _monotone(tk) and _monotone(hf)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 1000])
def test_runs_of_one_byte(n):
    rng = random.Random(n)
    corpus = ["".join(rng.choice("aab") for _ in range(rng.randint(1, 30))) for _ in range(200)]
    tokens, merges = _trained(corpus, 60)
    ranks = {t: i for i, t in enumerate(tokens)}
    tables = build_tables(tokens, ranks=np.arange(len(tokens)), whole_any=True)
    for piece in (b"a" * n, b"ab" * n, b"aab" * n):
        assert _encode(tables, [piece]) == [encode_by_rank(ranks, piece)]
