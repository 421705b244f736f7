"""Loading checks the stored failure links and pops in one pass
(:func:`segkit.engine.verify.stored_failure_holds`) instead of recomputing
them (issue 26, "Load").

The reference is the automaton's own reading of each node
(:meth:`segkit.engine.Automaton.failure`, the pairs the matching loop pops):
whatever :func:`check_keys_and_relink` accepts must read exactly as the
automaton built from the keys does, for every node; a file of this builder
is accepted by the one-pass check (no recomputation); a different but
equivalent layout of the pool is accepted too; past its budget the check
gives up (the caller then recomputes).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segkit.engine import kernels, verify
from segkit.engine.automaton import Automaton, EngineConfig, check_keys_and_relink, to_code_points
from segkit.engine.build import NO_TOKEN
from segkit.engine.arrays import full

CFG = EngineConfig(suffix_indicator="##", unknown="word", unk_id=0)


def _keys(tokens: list[str]):
    cps = to_code_points("".join(tokens))
    lengths = np.array([len(t) for t in tokens], dtype=np.int64)
    ends = np.cumsum(lengths)
    return cps, ends - lengths, ends, np.arange(len(tokens), dtype=np.int32)


def _readings(a: Automaton) -> list:
    """Every slot's (link, pops) as the matching loop reads them (unused
    slots and nodes without a link: the raw pair, which must be (-1, 0))."""
    out = []
    for s in range(a.trans.shape[0]):
        f = int(a.fails[s, 0])
        out.append(a.failure(s) if f >= 0 else (f, int(a.fails[s, 1])))
    return out


def _build(tokens: list[str]) -> Automaton:
    return Automaton.build(tokens, np.arange(len(tokens)), CFG)


def _stored_check(a: Automaton, budget: int) -> bool:
    cmap, trans, fails, pool, _ = kernels.unpack(a.packed)
    base, check = np.ascontiguousarray(trans[:, 0]), np.ascontiguousarray(trans[:, 1])
    status, bfs, depth, sym, _ = verify.trie_order(base, check, a.num_symbols)
    assert status == 0
    cps, starts, ends, ids = _keys(TOKENS)
    cont = np.array([t.startswith("##") and len(t) > 2 for t in TOKENS])
    roots = np.concatenate([np.zeros(len(TOKENS), np.int8), np.ones(int(cont.sum()), np.int8)])
    skip = np.concatenate([np.zeros(len(TOKENS), np.int64), np.full(int(cont.sum()), 2, np.int64)])
    tok = full(base.size, np.int32(NO_TOKEN), np.int32)
    st_, _ = verify.walk_keys(cps, np.concatenate([starts, starts[cont]]), np.concatenate([ends, ends[cont]]),
                              np.concatenate([ids, ids[cont]]), cmap, base, check, roots, skip, False, tok)
    assert st_ == 0
    return bool(verify.stored_failure_holds(base, check, sym, tok, depth, bfs, np.ascontiguousarray(fails).reshape(-1),
                                            np.ascontiguousarray(pool), 1, budget))


# Long failure chains and shared pops lists: "q" * k pops [q, ##q, ...].
TOKENS = ["[UNK]", "q", "##q", "qqqqqq", "un", "##aff", "##able", "affable", "a", "##a", "ab", "##b", "b", "abab"]


@pytest.fixture(scope="module")
def built() -> Automaton:
    return _build(TOKENS)


def test_a_file_of_this_builder_passes_the_one_pass_check(built):
    assert _stored_check(built, budget=10**9)
    cfg, nsym = built.config, built.num_symbols
    assert check_keys_and_relink(built.packed, cfg, nsym, _keys(TOKENS), source="t") is built.packed


def test_past_its_budget_the_check_gives_up_and_the_caller_recomputes(built):
    assert not _stored_check(built, budget=0)


def test_an_equivalent_layout_is_accepted_and_reads_the_same(built):
    """Every list moved to fresh headers and pairs at the end of the pool."""
    packed = built.packed.copy()
    cmap, trans, fails, pool, params = kernels.unpack(packed)
    extra = [0, 0]  # keep the pool's start; headers are appended after it
    new_refs = fails[:, 1].copy()
    pool_list = pool.tolist()
    for s in range(fails.shape[0]):
        ref = int(fails[s, 1])
        if ref > 0:
            cnt, at = pool_list[ref], pool_list[ref + 1]
            pairs = pool_list[at : at + 2 * cnt]
            h = len(pool_list) + len(extra)
            extra += [cnt, h + 2] + pairs
            new_refs[s] = h
    if not (new_refs != fails[:, 1]).any():
        pytest.skip("the automaton has no pops lists in the pool")
    new_pool = np.concatenate([pool, np.array(extra, np.int32)])
    moved = kernels.pack(cmap, trans, np.stack([fails[:, 0], new_refs], axis=1), new_pool, params)
    a = Automaton(moved, built.config, built.num_symbols)
    assert _readings(a) == _readings(built)
    assert check_keys_and_relink(moved, built.config, built.num_symbols, _keys(TOKENS), source="t") is moved


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_whatever_is_accepted_reads_exactly_as_the_built_automaton(built, data):
    packed = built.packed.copy()
    _, _, fails, pool, _ = kernels.unpack(packed)
    section = data.draw(st.sampled_from(["fails", "pool"]))
    target = fails.reshape(-1) if section == "fails" else pool
    if target.size == 0:
        return
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, target.size - 1))
        target[i] = data.draw(st.one_of(st.integers(-3, 40), st.sampled_from([-(2**31), 2**31 - 1, (int(target[i]) + 1 + 2**31) % 2**32 - 2**31])))
    try:
        got = check_keys_and_relink(packed, built.config, built.num_symbols, _keys(TOKENS), source="t")
    except ValueError:
        return
    assert _readings(Automaton(got, built.config, built.num_symbols)) == _readings(built)


def test_segmenting_with_the_accepted_automaton_matches_the_built_one(built):
    got = check_keys_and_relink(built.packed.copy(), built.config, built.num_symbols, _keys(TOKENS), source="t")
    a = Automaton(got, built.config, built.num_symbols)
    for text in ["qqqqqqqqq", "unaffable", "ababab", "abq", "x", "aaaa"]:
        assert a.segment_id_list(text) == built.segment_id_list(text)
