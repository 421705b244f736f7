"""Loading the bundled RWKV World model: the verified build is recognised by
its digest and assembled without a second validation; anything else (one
byte changed, checksums made to fit) is validated as every model file is."""

from __future__ import annotations

import numpy as np
import pytest

import segkit
from segkit.engine import verify
from segkit.models.files import ModelFileError, read_model, write_model
from segkit.presets.maxmatch import rwkv
from segkit.presets.maxmatch.rwkv import BUNDLED_MODEL_SHA256, RWKVWorld, model_digest


@pytest.fixture(scope="module")
def built() -> RWKVWorld:
    """The bundled vocabulary built from its text, no cache involved."""
    return RWKVWorld._build(rwkv._decompress(rwkv._bundled_raw()), rwkv.BUNDLED_FILE)


def test_the_bundled_digest_is_that_of_a_fresh_build(built):
    config, arrays, blobs = built._model_state()
    assert not blobs
    assert model_digest(config, arrays) == BUNDLED_MODEL_SHA256, (
        "the automaton built from the bundled vocabulary changed: set BUNDLED_MODEL_SHA256 in "
        f"segkit/presets/maxmatch/rwkv.py to {model_digest(config, arrays)}")


def test_the_digest_sees_every_part(built):
    config, arrays, _ = built._model_state()
    base = model_digest(config, arrays)
    for name in arrays:
        changed = dict(arrays)
        a = np.array(arrays[name])
        a.reshape(-1)[a.size // 2] ^= 1
        changed[name] = a
        assert model_digest(config, changed) != base, name
    assert model_digest({**config, "unknown": 0}, arrays) != base
    assert model_digest(config, {k: v for k, v in arrays.items() if k != "tokens.keys"}) != base


def test_a_saved_bundled_model_loads_without_a_second_check(built, tmp_path, monkeypatch):
    path = tmp_path / "rwkv.segkit"
    built.save(path)

    def no_check(*args, **kwargs):
        raise AssertionError("the verified build was checked again")

    monkeypatch.setattr(verify, "check_and_relink", no_check)
    loaded = segkit.load(path)
    assert type(loaded) is RWKVWorld
    text = "Hello, 世界! 😀 \x00\xff"
    assert loaded.encode(text) == built.encode(text)
    assert loaded.encode_batch([text, "abc"], flat=True)[0].tolist() == built.encode(text) + built.encode("abc")
    assert loaded.decode(loaded.encode(text)) == text
    assert not loaded._packed.flags.writeable


def test_a_model_differing_in_one_value_is_validated(built, tmp_path):
    """A failure link changed, the file rewritten with valid checksums: not
    the digest of the verified build, so fully validated, and rejected."""
    config, arrays, blobs = built._model_state()
    packed = np.array(arrays["automaton.packed"])
    fails = packed[packed[2] : packed[3]].reshape(-1, 2)
    node = int(np.flatnonzero(fails[:, 0] > 0)[0])  # a node whose link is not the root
    packed[packed[2] + 2 * node] = 0  # link it to the root instead
    path = tmp_path / "changed.segkit"
    write_model(path, "RWKVWorld", config, {**arrays, "automaton.packed": packed}, blobs)
    loaded = read_model(path)
    assert model_digest(loaded.config, loaded.arrays) != BUNDLED_MODEL_SHA256
    with pytest.raises(ModelFileError, match="failure links or pops are not the ones its trie gives"):
        segkit.load(path)
