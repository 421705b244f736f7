"""Longest match plus the pair test (segkit/presets/sentencepiece/longest.py)
against the peer and the naive reference.

By default the encoder runs on long words (more than kernels.SMALL_BYTES
bytes) and whole texts outside word mode, where the heap ran before; here
it is also forced onto every word (``flags[F_LONGEST] = 2``), so that the
corpus and hypothesis reach every branch: the trie's candidates, the pair
test's walk, the dead positions, user-defined symbols and characters
outside the vocabulary between runs, and the exact test of pieces whose
merges are not monotone (Mistral's runs of ``▁``, all of one score; and
models whose scores are edited here: rounded, so that most pairs tie, or
shuffled, so that parts outrank their pieces and many pieces cannot be
built at all).  The heap (``flags[F_LONGEST] = 0``) is checked on the same
inputs, so both paths stay tested.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is not installed")
pytest.importorskip("google.protobuf", reason="protobuf is not installed")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import segkit  # noqa: E402
from segkit.presets.sentencepiece import kernels as K  # noqa: E402
from segkit.presets.sentencepiece.tables import packed  # noqa: E402

import spm_models  # noqa: E402
from spm_reference import ReferenceBPE  # noqa: E402

MISTRAL = ("tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3",
           "mistral_instruct_tokenizer_241114.model.v7")
EDGES = ["", " ", "   ", " " * 40 + "x", "x" + " " * 70, "\u2581" * 50, "a" * 300, "ab" * 150, "aab" * 90,
         "ab北京<sep>[X]x[X][X]ab", "北京" * 40, "😀🤖 emoji 👩‍👩‍👧" * 5, "1234567890" * 9, "\x00\x01 \x7f",
         "[REFERENCE_DOC_1][/REF]x [INST] <s></s>", "Ω≈ç√∫ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \U0010fffd \ufeff" * 4, "e\u0301" * 40,
         "internationalization" * 6, "antidisestablishmentarianism" * 3, "\u0378\u0379" * 30]
TEXTS = spm_models.sample_texts() + EDGES


def _with(path: Path, mode: int) -> segkit.SentencePieceBPE:
    """The model of ``path`` with ``flags[F_LONGEST] = mode`` (0: the heap
    for long words; 2: longest match for every word)."""
    model = segkit.SentencePieceBPE(path)
    assert model._t.flags[K.F_LONGEST] == 1 or mode == 0
    model._t.flags[K.F_LONGEST] = mode
    model._args = packed(model._t)
    model._one = None
    return model


def _mistral(name: str) -> Path:
    mc = pytest.importorskip("mistral_common", reason="mistral_common is not installed")
    path = Path(mc.__file__).parent / "data" / name
    if not path.is_file():
        pytest.skip(f"{path} is not in this mistral_common")
    return path


def _edited(directory: Path, name: str) -> Path:
    """The "bytes" model with its normal pieces' scores rounded ("tied") or
    shuffled ("shuffled")."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(spm_models.train("bytes", directory).read_bytes())
    normal = [p for p in proto.pieces if p.type == 1 and len(p.piece) > 1]
    if name == "tied":
        for p in normal:
            p.score = float(round(p.score / 300) * 300)
    else:
        scores = [p.score for p in normal]
        random.Random(5).shuffle(scores)
        for p, s in zip(normal, scores):
            p.score = s
    path = directory / f"{name}.model"
    path.write_bytes(proto.SerializeToString())
    return path


@pytest.fixture(scope="module")
def paths(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("spm_longest")
    out = {name: spm_models.train(name, directory) for name in spm_models.OPTIONS}
    out["tied"] = _edited(directory, "tied")
    out["shuffled"] = _edited(directory, "shuffled")
    return out


LONGEST = ["nfkc", "bytes", "suffix", "spaces", "tied", "shuffled"]


def _path(paths: dict, name: str) -> Path:
    return paths[name] if name in paths else _mistral(name)


def test_which_models_take_the_longest_match(paths) -> None:
    """Decided at load: models on the id encoder without UNUSED pieces."""
    got = {name: int(segkit.SentencePieceBPE(p)._t.flags[K.F_LONGEST]) for name, p in paths.items()}
    assert got == {**{name: 1 for name in LONGEST}, "unused": 0, "nochar": 0}, got
    for name in MISTRAL:
        t = segkit.SentencePieceBPE(_mistral(name))._t
        assert t.flags[K.F_LONGEST] == 1
        info = t.tinfo[: 4 * len(t.pieces)].reshape(-1, 4)
        marked = [t.pieces[i] for i in np.nonzero(info[:, 0] & K.TINFO_MARKED)[0]]
        assert marked and all(set(p) == {"\u2581"} for p in marked), marked  # the runs of ▁, of one score
        assert (info[:, 0] != 0).sum() == (t.ptype == 1).sum()  # every normal piece can be built


def test_edited_models_reach_the_exact_pair_test(paths) -> None:
    """The edited scores make what they are meant to: pieces marked (their merges not
    monotone), and, shuffled, a few pieces that BPE of their own text never builds."""
    for name, least_marked, least_unbuilt in (("tied", 20, 0), ("shuffled", 50, 1)):
        t = segkit.SentencePieceBPE(paths[name])._t
        info = t.tinfo[: 4 * len(t.pieces)].reshape(-1, 4)
        normal = t.ptype == 1
        assert ((info[:, 0] & K.TINFO_MARKED) != 0).sum() >= least_marked, name
        assert (normal & (info[:, 0] == 0)).sum() >= least_unbuilt, name


@pytest.mark.parametrize("name", [*LONGEST, *MISTRAL])
def test_every_word_by_longest_match_matches_sentencepiece(paths, name) -> None:
    path = _path(paths, name)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    expected = [sp.encode(t) for t in TEXTS]
    for mode in (2, 1, 0):
        model = _with(path, mode)
        assert [model.encode(t) for t in TEXTS] == expected, mode
        assert model.encode_batch(TEXTS) == expected, mode
        assert model.encode(" ".join(TEXTS)) == sp.encode(" ".join(TEXTS)), mode  # one long text


@pytest.mark.parametrize("name", ["tied", "shuffled"])
def test_edited_scores_match_the_reference(paths, name) -> None:
    """The reference (BPE as defined) agrees with the peer on the edited
    models, and the longest match with both."""
    path = paths[name]
    ref, sp, model = ReferenceBPE(str(path)), spm.SentencePieceProcessor(model_file=str(path)), _with(path, 2)
    for text in TEXTS[::4] + EDGES:
        expected = sp.encode(text)
        assert ref.encode(text) == expected, text
        assert model.encode(text) == expected, text


_SAMPLE_WORDS = sorted(set(" ".join(spm_models.sample_texts()).split()))
_PARTS = st.one_of(st.sampled_from(["a", "b", "e", "t", "h", "n", "s", "ab", "aa", "ee", "th", "in", "北", "京",
                                    "😀", "\u0378", "<sep>", "[X]", "\u2581", " ", "  ", "7", "é", "ﬁ"]),
                   st.sampled_from(_SAMPLE_WORDS))
_TEXT = st.one_of(st.lists(_PARTS, max_size=12).map("".join), st.text(max_size=30))


@pytest.mark.parametrize("name", ["bytes", "tied", "shuffled", "nfkc", "suffix"])
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_TEXT)
def test_hypothesis_longest_match_against_the_reference(paths, name, text) -> None:
    text = text.encode("utf-8", "replace").decode("utf-8")
    key = ("models", name)
    cache = test_hypothesis_longest_match_against_the_reference.__dict__.setdefault("cache", {})
    if key not in cache:
        cache[key] = (_with(paths[name], 2), ReferenceBPE(str(paths[name])))
    model, ref = cache[key]
    expected = ref.encode(text)
    assert model.encode(text) == expected
    assert model.encode_batch([text, text + text]) == [expected, ref.encode(text + text)]


@pytest.mark.parametrize("name", MISTRAL)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_TEXT)
def test_hypothesis_longest_match_on_mistral(name, text) -> None:
    text = text.encode("utf-8", "replace").decode("utf-8")
    cache = test_hypothesis_longest_match_on_mistral.__dict__.setdefault("cache", {})
    if name not in cache:
        path = _mistral(name)
        cache[name] = (_with(path, 2), spm.SentencePieceProcessor(model_file=str(path)))
    model, sp = cache[name]
    assert model.encode(text) == sp.encode(text)


@pytest.mark.parametrize("name", MISTRAL)
def test_mistral_corpus_by_longest_match(shared_data, name) -> None:
    with open(shared_data / "corpus" / "multilingual.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    random.Random(7).shuffle(texts)
    texts = texts[:3000]
    path = _mistral(name)
    expected = spm.SentencePieceProcessor(model_file=str(path)).encode(texts)
    for mode in (2, 1):
        model = _with(path, mode)
        assert model.encode_batch(texts) == expected, mode
        assert [model.encode(t) for t in texts[:500]] == expected[:500], mode


def test_long_runs_by_both_paths(paths) -> None:
    """Long words (the longest match by default) against the heap and the peer."""
    rng = random.Random(3)
    texts = ["a" * 5000, "ab" * 3000, "aab" * 2000, " " * 3000 + "x", "北京" * 1000, "9" * 4000,
             "".join(rng.choice("abcdefgh") for _ in range(5000)), "the" * 2000, "\u2581" * 999]
    for name in ("bytes", "shuffled", "tied"):
        sp = spm.SentencePieceProcessor(model_file=str(paths[name]))
        expected = [sp.encode(t) for t in texts]
        for mode in (1, 0):
            assert _with(paths[name], mode).encode_batch(texts) == expected, (name, mode)
