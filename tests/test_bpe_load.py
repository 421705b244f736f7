"""Loading a saved segkit.BPE fast: the interleaved certification against a
plain one, the fused filter fill against the table scan, and the decode
tables built on first use (after load and pickling, from many threads)."""

from __future__ import annotations

import pickle
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit.presets.bpe import layout as L
from segkit.presets.bpe import pairs as P
from segkit.presets.bpe import verify
from segkit.presets.bpe.tables import finish_tables, merge_table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import fuzz_bpe  # noqa: E402

VOCAB = {bytes([b]): b for b in range(256)} | {b"lo": 256, b"low": 257, b"er": 258, b"lower": 259, b"ow": 260}
MERGES = [(b"l", b"o"), (b"lo", b"w"), (b"e", b"r"), (b"low", b"er"), (b"o", b"w")]
SPECIALS = {"<|end|>": 261, "<|pad|>": 263}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    return fuzz_bpe.make_models(tmp_path_factory.mktemp("bpe-models"))


def _expected_bytes() -> dict[int, bytes]:
    """Every id's bytes, from the inputs (not from the model)."""
    out = {i: t for t, i in VOCAB.items()}
    out.update((i, s.encode()) for s, i in SPECIALS.items())
    return out


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bpe-load") / "tiny.segkit"
    segkit.BPE(VOCAB, MERGES, special_tokens=SPECIALS).save(path)
    return path


@pytest.mark.parametrize("how", ["load", "pickle"])
def test_decode_tables_are_built_on_first_use(saved, how):
    m = segkit.load(saved)
    if how == "pickle":
        m = pickle.loads(pickle.dumps(m))
    assert m._decoder is None  # a load does not build them
    expected = _expected_bytes()
    ids = sorted(expected)
    assert [m.decode_bytes([i]) for i in ids] == [expected[i] for i in ids]
    assert m.decode_bytes(ids) == b"".join(expected[i] for i in ids)
    assert m.n_vocab == 264
    with pytest.raises(ValueError, match="id 262 at position 1"):
        m.decode_bytes([97, 262])  # the hole between the special tokens
    ids2, offsets = m.encode_with_offsets("lower low")
    assert ids2 == [259, 32, 257] and offsets == [(0, 5), (5, 6), (6, 9)]


def test_decode_tables_first_build_from_many_threads(saved):
    expected = _expected_bytes()
    ids = sorted(expected)
    want = b"".join(expected[i] for i in ids)
    for _ in range(5):  # each round a fresh model, so the first use races
        m = segkit.load(saved)
        barrier = threading.Barrier(8)
        results, errors = [], []

        def run():
            try:
                barrier.wait()
                results.append(m.decode_bytes(ids))
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=run) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and results == [want] * 8
        data, start, end = m._dec
        assert start.shape == end.shape == (m.n_vocab,)


def _reference_fails(info: np.ndarray, split: dict, t: int) -> bool:
    """Test 3 of verify's module doc for token ``t``, in Python: BPE of its
    parts' bytes does not reach its split (``split``: pair -> priority)."""
    x, y = int(info[t, 2]), int(info[t, 3])
    while True:
        px, py = int(info[x, 1]), int(info[y, 1])
        if px > py:  # x was made last: undo it
            x = int(info[x, 3])
            p = split.get((x, y))
            if p is not None and p < px:
                return True
        else:
            if py < 0:
                return False
            y = int(info[y, 2])
            p = split.get((x, y))
            if p is not None and p <= py:
                return True


def _reference_first_bad(info: np.ndarray, lo: int = 0, hi: int | None = None) -> int:
    """The first token of ``lo .. hi - 1`` failing test 3, one after the other, or -1."""
    split = {(int(r[2]), int(r[3])): int(r[1]) for r in info if r[2] >= 0}
    for t in range(lo, info.shape[0] if hi is None else hi):
        if info[t, 2] >= 0 and _reference_fails(info, split, t):
            return t
    return -1


def _other_splits(arrays, limit: int) -> list[tuple[int, int, int]]:
    """``(t, a, b)``: token ``t`` has a split into reachable ``a, b`` other than its own."""
    info, tb, ts = arrays["info"], arrays["tok_bytes"], arrays["tok_start"]
    by_bytes = {tb[ts[i] : ts[i + 1]].tobytes(): i for i in range(ts.size - 1) if ts[i + 1] > ts[i]}
    ok = lambda i: info[i, 0] == 1 or info[i, 2] >= 0  # noqa: E731
    out = []
    for t in range(ts.size - 1):
        if info[t, 2] < 0:
            continue
        text = tb[ts[t] : ts[t + 1]].tobytes()
        for k in range(1, len(text)):
            a, b = by_bytes.get(text[:k]), by_bytes.get(text[k:])
            if a is not None and b is not None and ok(a) and ok(b) and (a, b) != (info[t, 2], info[t, 3]):
                out.append((t, a, b))
                if len(out) == limit:
                    return out
    return out


@pytest.fixture(scope="module")
def tiktoken_arrays():
    """GPT-2's stored arrays (a vocabulary with many tokens that have other splits)."""
    _, arrays = segkit.BPE.from_pretrained("gpt2")._state()
    return {k: np.array(v) for k, v in arrays.items()}


@pytest.fixture(scope="module")
def other_splits(tiktoken_arrays):
    return _other_splits(tiktoken_arrays, limit=300)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_interleaved_certification_reports_the_plain_walks_first_failure(tiktoken_arrays, other_splits, data):
    a = tiktoken_arrays
    choices = other_splits
    assert len(choices) == 300, "the test needs tokens with other splits"
    picked = data.draw(st.lists(st.sampled_from(choices), max_size=6, unique_by=lambda c: c[0]))
    info = a["info"].copy()
    for t, l, r in picked:
        info[t, 2], info[t, 3] = l, r
    n = info.shape[0]
    mtab = merge_table(np.zeros((0, 2), np.int32))
    assert verify.check_structure(a["tok_bytes"], a["tok_start"], info, mtab, False, 0, n) == (verify.OK, -1)
    tables = finish_tables(a["tok_bytes"], a["tok_start"], a["trans"], a["bsym"], info, a["lex"], True)
    model = tables.model
    lo = data.draw(st.integers(0, n))
    hi = data.draw(st.integers(lo, n))
    status, tok = verify.certify_splits(
        a["tok_bytes"], a["tok_start"], info, L.section(model, L.TRANS), a["bsym"], L.section(model, L.SLOT),
        L.section(model, L.PAIRS), L.section(model, L.FILTER), int(L.section(model, L.PARAMS)[L.P_FILTER_BITS]),
        mtab, False, lo, hi)
    first = _reference_first_bad(info, lo, hi)
    assert (status, tok) == ((verify.OK, -1) if first < 0 else (verify.NOT_BPE_SPLIT, first))


def test_some_other_split_fails_certification(tiktoken_arrays, other_splits):
    """The property test above would pass vacuously if no edit ever failed."""
    a = tiktoken_arrays
    fails = 0
    for t, l, r in other_splits[:40]:
        info = a["info"].copy()
        info[t, 2], info[t, 3] = l, r
        fails += _reference_first_bad(info) >= 0
    assert fails > 0


@pytest.mark.parametrize("name", ["merges", "tiktoken"])
def test_filter_filled_with_the_splits_is_the_table_scan(models, name):
    m = segkit.load(models[name])
    model = m._model
    bits = int(L.section(model, L.PARAMS)[L.P_FILTER_BITS])
    filt = L.section(model, L.FILTER)
    scanned = np.empty_like(filt)
    P.fill_filter(L.section(model, L.PAIRS), bits, scanned)
    assert np.count_nonzero(filt) > 0
    assert np.array_equal(filt, scanned)
