"""Saving, loading and pickling segkit.BPE; crafted files (certification of
the stored splits) and mutation fuzzing in a worker subprocess
(tools/fuzz_bpe.py)."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit.models.files import ModelFileError, read_model, write_model

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import fuzz_bpe  # noqa: E402


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    return fuzz_bpe.make_models(tmp_path_factory.mktemp("bpe-models"))


@pytest.fixture(scope="module")
def worker():
    w = fuzz_bpe.Worker(timeout=120)
    yield w
    w.close()


TEXTS = fuzz_bpe.TEXTS + ["hello world", "'s 'LL\n\n  x", "😀" * 30, "ab" * 200]


def _same(a: segkit.BPE, b: segkit.BPE) -> None:
    assert a.encode_ordinary_batch(TEXTS) == b.encode_ordinary_batch(TEXTS)
    assert a.special_tokens == b.special_tokens and a.n_vocab == b.n_vocab and a.pattern == b.pattern


@pytest.mark.parametrize("name", ["merges", "tiktoken", "json", "tekken"])
def test_round_trip(models, name, tmp_path):
    m = segkit.load(models[name])
    again = tmp_path / "again.segkit"
    m.save(again)
    _same(segkit.load(again), m)
    _same(pickle.loads(pickle.dumps(m)), m)


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_pretrained_round_trip(name, tmp_path):
    enc = segkit.BPE.from_pretrained(name)
    path = tmp_path / f"{name}.segkit"
    enc.save(path)
    loaded = segkit.load(path)
    _same(loaded, enc)
    assert loaded.encode("x<|endoftext|>", allowed_special="all") == enc.encode("x<|endoftext|>", allowed_special="all")
    assert pickle.loads(pickle.dumps(enc)).encode("hello world") == enc.encode("hello world")


def test_non_monotone_model_round_trips(tmp_path):
    # ranks not in merge order: the heap encoder; loading recomputes the splits
    tokens = [bytes([i]) for i in range(256)] + [b"abc", b"bc", b"ab"]
    ids = {t: i for i, t in enumerate(tokens)}
    path = tmp_path / "v.tiktoken"
    import base64

    path.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(tokens)))
    enc = segkit.BPE.from_tiktoken(path, pattern=r"\S+|\s+")
    assert enc._tables.non_monotone >= 0
    saved = tmp_path / "v.segkit"
    enc.save(saved)
    _same(segkit.load(saved), enc)
    assert segkit.load(saved).encode("xabc abcd") == enc.encode("xabc abcd") == [ord("x"), ids[b"abc"], 32,
                                                                                   ids[b"abc"], ord("d")]


def _forge(src: Path, dst: Path, edit) -> Path:
    m = read_model(src)
    arrays = {k: np.array(v) for k, v in m.arrays.items()}
    config = json.loads(json.dumps(m.config))
    edit(arrays, config)
    write_model(dst, m.preset, config, arrays, {k: bytes(v) for k, v in m.blobs.items()})
    return dst


def _token(models, name, text: bytes) -> int:
    m = segkit.load(models[name])
    tb, ts = m._tables.tok_bytes, m._tables.tok_start
    for i in range(ts.size - 1):
        if tb[ts[i] : ts[i + 1]].tobytes() == text:
            return i
    raise KeyError(text)


def _other_split(m: segkit.BPE):
    """A token with a split into two tokens BPE can output other than its own."""
    info, tb, ts = m._tables.info, m._tables.tok_bytes, m._tables.tok_start
    by_bytes = {tb[ts[i] : ts[i + 1]].tobytes(): i for i in range(ts.size - 1) if ts[i + 1] > ts[i]}
    ok = lambda i: info[i, 0] == 1 or info[i, 2] >= 0  # noqa: E731
    for t in range(ts.size - 1):
        if info[t, 2] < 0:
            continue
        text = tb[ts[t] : ts[t + 1]].tobytes()
        for k in range(1, len(text)):
            a, b = by_bytes.get(text[:k]), by_bytes.get(text[k:])
            if a is not None and b is not None and ok(a) and ok(b) and (a, b) != (info[t, 2], info[t, 3]):
                return t, a, b
    raise AssertionError("the test needs a token with two splits")


@pytest.mark.parametrize("name", ["merges", "tiktoken"])
def test_another_split_of_the_same_bytes_is_rejected(models, name, tmp_path):
    m = segkit.load(models[name])
    t, a, b = _other_split(m)
    l, r = int(m._tables.info[t, 2]), int(m._tables.info[t, 3])

    def edit(arrays, config):
        arrays["info"][t, 2] = a
        arrays["info"][t, 3] = b
        if name == "merges":  # keep the priority test passing: (a, b) takes the place of (l, r)
            merges = arrays["merges"]
            row = np.flatnonzero((merges[:, 0] == l) & (merges[:, 1] == r))[-1]
            merges[row] = (a, b)

    with pytest.raises(ModelFileError, match=f"token {t}:|stored splits are not the ones BPE gives"):
        segkit.load(_forge(models[name], tmp_path / "x.segkit", edit))


def test_reachable_token_stored_as_unreachable_is_rejected(models, tmp_path):
    m = segkit.load(models["tiktoken"])
    t = int(np.flatnonzero(m._tables.info[:, 2] >= 0)[-1])  # the last merge: nothing is made from it

    def edit(arrays, config):
        arrays["info"][t, 1:] = -1

    with pytest.raises(ModelFileError, match="BPE of its bytes ends in it"):
        segkit.load(_forge(models["tiktoken"], tmp_path / "x.segkit", edit))


@pytest.mark.parametrize("edit, message", [
    (lambda a, c: a["info"].__setitem__((300, 1), 5), "priority"),
    (lambda a, c: a["info"].__setitem__((97, 2), 98), "single byte"),
    (lambda a, c: a["info"].__setitem__((300, 0), 99), "length"),
    (lambda a, c: a["info"].__setitem__((300, 2), 10**6), "split"),
    (lambda a, c: a["trans"].__setitem__((5, 0), 10**7), "outside the double array"),
    (lambda a, c: a["bsym"].__setitem__(1, a["bsym"][2]), "share a symbol"),
    (lambda a, c: a["tok_start"].__setitem__(5, 10**6), "offsets"),
    (lambda a, c: c.__setitem__("mode", "sentencepiece"), "mode"),
    (lambda a, c: c.__setitem__("special_tokens", {"<|end|>": 97}), "special"),
])
def test_crafted_files_are_rejected(models, tmp_path, edit, message):
    with pytest.raises(ModelFileError, match=message):
        segkit.load(_forge(models["tiktoken"], tmp_path / "x.segkit", edit))


@pytest.mark.parametrize("name", ["merges", "tiktoken", "json", "tekken"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(rng=st.randoms(use_true_random=False))
def test_mutated_models_load_valid_or_raise(name, models, worker, tmp_path, rng):
    """Mutations with checksums recomputed, each loaded and exercised in the
    worker subprocess: rejected with ModelFileError, or loaded and behaving
    (no crash, hang, other exception or wrong output).  ``tools/fuzz_bpe.py``
    runs the same check on thousands of mutations."""
    import fuzz_models

    raw, note = fuzz_models.mutate(models[name].read_bytes(), rng)
    path = tmp_path / f"mutant-{name}.segkit"
    path.write_bytes(raw)
    verdict = worker.check(str(path), str(models[name]))
    assert verdict in ("rejected", "loaded", "loaded-differs"), f"{note}: {verdict}"


def test_worker_reports_a_crash(tmp_path):
    w = fuzz_bpe.Worker(timeout=60)
    try:
        w._start()
        w.proc.kill()
        w.proc.wait()
        assert w.check(str(tmp_path / "x.segkit")).startswith("crash")
    finally:
        w.close()
