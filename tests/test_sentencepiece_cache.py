"""segkit.SentencePieceBPE's word mode and word cache never change ids.

In word mode (kernels.split_mode) the normalized text is cut before each
run of "▁" (or after it, for whitespace as suffix), each word is merged
alone, and short words' ids are kept in a bounded cache keyed by their
bytes (kernels.encode_rows).  These tests compare with the peer
(``SentencePieceProcessor.encode``) and the naive reference
(tests/spm_reference.py) where a cache bug would show: the same word in
different contexts and at the start of a text, a cache far smaller than
the words (every word evicts another: the 2-way sets' moves), user-defined
symbols inside and around words, byte fallback, unknown characters (a run
of them is one unk, across words too), long words (the heap, restarted
with more scratch), and threads sharing one model.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path

import numpy as np
import pytest

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is not installed")
pytest.importorskip("google.protobuf", reason="protobuf is not installed")

import segkit  # noqa: E402
from segkit.presets.sentencepiece import kernels as K  # noqa: E402

import spm_models  # noqa: E402
from spm_reference import ReferenceBPE  # noqa: E402

NAMES = ["bytes", "nfkc", "suffix", "nochar", "spaces"]  # the trained models in word mode


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("spm_cache")
    return {name: spm_models.train(name, directory) for name in NAMES + ["unused"]}


def _texts(seed: int = 5) -> list[str]:
    """Words of the sample in new contexts, user-defined symbols, unknown
    characters and long words."""
    rng = random.Random(seed)
    words = " ".join(spm_models.sample_texts()).split()
    extra = ["<sep>", "[X]", "ab", "北京", "\u0378", "\U000e0041", "😀", "\u2581", "  ", "a" * 90, "北京" * 40,
             "<sep>ab[X]", "x\u0378\u0378y", "\u0378 \u0378", "ab" * 40]
    texts = []
    for _ in range(300):
        k = rng.randint(0, 12)
        parts = [rng.choice(words) if rng.random() < 0.8 else rng.choice(extra) for _ in range(k)]
        seps = [rng.choice([" ", " ", " ", "  ", "", "\u2581", "\t"]) for _ in parts]
        texts.append("".join(p + s for p, s in zip(parts, seps)))
    # the same word first, after a space, after a user-defined symbol, repeated, alone
    for w in ["the", "ab", "北京", "\u0378", "a" * 30]:
        texts += [w, " " + w, w + " " + w, f"<sep>{w}", f"{w}<sep>{w}", f"[X] {w} {w}{w} {w}", w * 3, "  " + w + "  "]
    return texts


def _tiny(model: segkit.SentencePieceBPE, rows: int) -> None:
    """Give ``model`` caches of ``rows`` rows (both paths), emptied."""
    model._one_cache = np.zeros(rows * K.CACHE_ROW, np.int32)
    model._one = None  # (bound to the old cache: bind again)
    model._caches[:] = [np.zeros(rows * K.CACHE_ROW, np.int32)]


@pytest.mark.parametrize("name", NAMES)
def test_word_mode_is_on_and_ids_match_through_the_cache(trained, name) -> None:
    path = str(trained[name])
    model = segkit.SentencePieceBPE(path)
    assert model._t.flags[K.F_SPLIT] != 0
    sp = spm.SentencePieceProcessor(model_file=path)
    texts = _texts()
    expected = [sp.encode(t) for t in texts]
    for rnd in range(2):  # cold cache, then warm: the same words from the cache
        assert [model.encode(t) for t in texts] == expected, rnd
        assert model.encode_batch(texts) == expected, rnd
    assert model.encode_batch(texts[::-1], num_threads=2) == expected[::-1]
    assert int(np.count_nonzero(model._one_cache[:: K.CACHE_ROW])) > 50  # the cache was used


@pytest.mark.parametrize("name", ["bytes", "nfkc"])
def test_the_reference_agrees_on_the_cache_texts(trained, name) -> None:
    path = str(trained[name])
    model = segkit.SentencePieceBPE(path)
    ref = ReferenceBPE(path)
    for text in _texts(7)[::4]:
        assert model.encode(text) == ref.encode(text), text
        assert model.encode(text) == ref.encode(text), text  # (warm)


@pytest.mark.parametrize("rows", [2, 4, 64])
@pytest.mark.parametrize("name", ["bytes", "nfkc", "suffix"])
def test_a_cache_smaller_than_the_words_evicts_without_changing_ids(trained, name, rows) -> None:
    """Two rows: one set, so every new word moves the set's first word to
    the second row and drops the second's; the words keep coming back."""
    path = str(trained[name])
    model = segkit.SentencePieceBPE(path)
    _tiny(model, rows)
    sp = spm.SentencePieceProcessor(model_file=path)
    texts = _texts(11)
    expected = [sp.encode(t) for t in texts]
    for rnd in range(3):
        assert [model.encode(t) for t in texts] == expected, rnd
        assert model.encode_batch(texts) == expected, rnd
    assert int(np.count_nonzero(model._one_cache[:: K.CACHE_ROW])) == rows  # every row holds a word


def test_many_distinct_words_overflow_the_full_size_cache(trained) -> None:
    """More distinct short words than the cache has rows, twice over."""
    path = str(trained["bytes"])
    model = segkit.SentencePieceBPE(path)
    sp = spm.SentencePieceProcessor(model_file=path)
    rng = random.Random(3)
    letters = "abcdefghijklmnopqrstuvwxyz北京é"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 7))) for _ in range(2 * K.CACHE_ROWS)]
    texts = [" ".join(words[i : i + 50]) for i in range(0, len(words), 50)]
    expected = sp.encode(texts)
    assert [model.encode(t) for t in texts] == expected
    assert model.encode_batch(texts) == expected
    assert [model.encode(t) for t in texts[:200]] == expected[:200]  # (after the overflow)


def test_unknown_runs_are_one_unk_across_words(trained) -> None:
    """nfkc has no byte fallback: a run of unknown symbols is one unk, and a
    word's ids from the cache must not repeat it at a word's start."""
    path = str(trained["nfkc"])
    model = segkit.SentencePieceBPE(path)
    sp = spm.SentencePieceProcessor(model_file=path)
    unk = "\u0378"
    texts = [unk, unk * 3, f"{unk} {unk}", f"{unk}{unk} x{unk} {unk}y", f"a{unk}\u2581{unk}b", f"{unk}\u2581\u2581{unk}"] * 3
    expected = [sp.encode(t) for t in texts]
    assert any(model.unk_id in e for e in expected)
    assert [model.encode(t) for t in texts] == expected
    assert model.encode_batch(texts) == expected


def test_models_with_unused_pieces_merge_whole_texts(trained) -> None:
    """An UNUSED piece is resegmented by its last registration anywhere in
    the text, so such models never cut words (nor cache them)."""
    path = str(trained["unused"])
    model = segkit.SentencePieceBPE(path)
    assert model._t.flags[K.F_SPLIT] == 0 and model._one_cache.size == 0
    sp = spm.SentencePieceProcessor(model_file=path)
    texts = _texts(13)
    assert model.encode_batch(texts) == [sp.encode(t) for t in texts]


def test_threads_share_a_model(trained) -> None:
    """Per-call encodes (the cache used under the GIL) and batches (a cache
    each from the pool, without the GIL) at once, on one model."""
    path = str(trained["bytes"])
    model = segkit.SentencePieceBPE(path)
    sp = spm.SentencePieceProcessor(model_file=path)
    texts = _texts(17)
    expected = [sp.encode(t) for t in texts]
    failures: list[str] = []

    def work(i: int) -> None:
        for _ in range(3):
            if i % 2:
                got = [model.encode(t) for t in texts]
            else:
                got = model.encode_batch(texts, num_threads=2)
            if got != expected:
                failures.append(f"thread {i}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert len(model._caches) <= 4  # the pool stays bounded


def test_mistral_v3_word_mode() -> None:
    """Mistral's v3 model has pieces of several "▁" only ("▁▁", ...): cut
    before runs of "▁", not before each one."""
    mc = pytest.importorskip("mistral_common", reason="mistral_common is not installed")
    path = Path(mc.__file__).parent / "data" / "mistral_instruct_tokenizer_240323.model.v3"
    if not path.is_file():
        pytest.skip(f"{path} is not in this mistral_common")
    model = segkit.SentencePieceBPE(path)
    assert model._t.flags[K.F_SPLIT] == K.SPLIT_BEFORE
    sp = spm.SentencePieceProcessor(model_file=str(path))
    texts = ["a  b", "x" + " " * 17 + "y", "  lead", "trail   ", "[INST] hi [/INST]", "   "] + _texts(19)[:100]
    expected = [sp.encode(t) for t in texts]
    _tiny(model, 8)
    for _ in range(2):
        assert [model.encode(t) for t in texts] == expected
        assert model.encode_batch(texts) == expected
