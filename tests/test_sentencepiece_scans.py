"""The scans that merge a short word (kernels.encode_rows) against the naive
reference and the peer, where their order matters: equal scores.

The scans pick the pair of lowest ``rank << 8 | position`` (SentencePiece's
best score, leftmost of equal scores).  Trained models seldom have equal
scores among merged pieces, so here a trained model's scores are rounded to
a few values: most pairs then tie, and words of repeated letters ("aaaa",
"abab") have several equal pairs at once, whose leftmost must win, through
a cold, warm and tiny word cache.
"""

from __future__ import annotations


import numpy as np
import pytest

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is not installed")
pytest.importorskip("google.protobuf", reason="protobuf is not installed")

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import segkit  # noqa: E402
from segkit.presets.sentencepiece import kernels as K  # noqa: E402

import spm_models  # noqa: E402
from spm_reference import ReferenceBPE  # noqa: E402


@pytest.fixture(scope="module")
def tied(tmp_path_factory) -> dict:
    """The "bytes" model (identity, byte fallback, user-defined symbols) with
    its normal pieces' scores rounded to multiples of 40."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    directory = tmp_path_factory.mktemp("spm_ties")
    proto = pb.ModelProto()
    proto.ParseFromString(spm_models.train("bytes", directory).read_bytes())
    for p in proto.pieces:
        if p.type == 1:
            p.score = float(round(p.score / 40) * 40)
    path = directory / "tied.model"
    path.write_bytes(proto.SerializeToString())
    model = segkit.SentencePieceBPE(path)
    scores = [model.score(i) for i in range(len(model)) if model.piece_type(i) == "NORMAL" and len(model.id_to_piece(i)) > 1]
    assert len(set(scores)) * 10 < len(scores)  # (ties everywhere)
    assert model._t.flags[K.F_SPLIT] != 0 and model._t.flags[K.F_FAST]  # word mode, the scans
    return {"model": model, "sp": spm.SentencePieceProcessor(model_file=str(path)), "ref": ReferenceBPE(str(path)),
            "path": path}


_SAMPLE_WORDS = sorted(set(" ".join(spm_models.sample_texts()).split()))
_PARTS = st.one_of(st.sampled_from(["a", "b", "e", "t", "h", "n", "s", "ab", "aa", "ee", "th", "北", "京", "😀",
                                    "\u0378", "<sep>", "[X]", "\u2581"]), st.sampled_from(_SAMPLE_WORDS))
_WORDS = st.lists(_PARTS, min_size=1, max_size=4).map("".join)
_TEXT = st.lists(st.tuples(_WORDS, st.sampled_from([" ", " ", "  ", ""])), max_size=6).map(
    lambda parts: "".join(w + s for w, s in parts))


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_TEXT)
def test_hypothesis_tied_scores_merge_leftmost_first(tied, text) -> None:
    model, sp, ref = tied["model"], tied["sp"], tied["ref"]
    expected = sp.encode(text)
    assert ref.encode(text) == expected  # (the reference and the peer agree on ties)
    assert model.encode(text) == expected
    assert model.encode(text) == expected  # (warm: from the cache)
    assert model.encode_batch([text, text]) == [expected, expected]


def test_tied_scores_on_the_sample_texts(tied) -> None:
    """Every text the model was trained on: words where a pair to the right
    has a lower id than a tied pair to its left (the leftmost must win)."""
    texts = spm_models.sample_texts()
    expected = tied["sp"].encode(texts)
    assert tied["model"].encode_batch(texts) == expected
    assert [tied["model"].encode(t) for t in texts] == expected


@pytest.mark.parametrize("rows", [2, 64])
def test_tied_scores_through_a_tiny_cache(tied, rows) -> None:
    model = segkit.SentencePieceBPE(tied["path"])
    model._one_cache = np.zeros(rows * K.CACHE_ROW, np.int32)
    model._one = None
    model._caches[:] = [np.zeros(rows * K.CACHE_ROW, np.int32)]
    sp = tied["sp"]
    words = ["a" * n for n in range(1, 12)] + ["ab" * n for n in range(1, 8)] + ["the", "then", "thee", "eeee"]
    texts = [" ".join(words[i:] + words[:i]) for i in range(len(words))]
    expected = sp.encode(texts)
    for rnd in range(2):
        assert [model.encode(t) for t in texts] == expected, rnd
        assert model.encode_batch(texts) == expected, rnd
