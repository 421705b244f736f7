"""segkit.RWKVWorld against the reference tokenizer
(``rwkv.rwkv_tokenizer.TRIE_TOKENIZER``, PyPI ``rwkv``) and ``pyrwkv-tokenizer``
(Rust), where installed: every text of the multilingual corpus, the
reference's own unit-test inputs (rebuilt here as ChatRWKV's
``tokenizer/rwkv_tokenizer.py`` makes them), hypothesis byte strings with
invalid UTF-8, and backward matching against the naive greedy matcher."""

from __future__ import annotations

import hashlib
import json
import lzma
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit.presets.maxmatch.rwkv import BUNDLED_FILE, BUNDLED_SHA256

from byte_reference import greedy_backward, greedy_forward

VOCABS = Path(__file__).resolve().parents[1] / "vocabularies"


@pytest.fixture(scope="module")
def tok() -> segkit.RWKVWorld:
    return segkit.RWKVWorld()


@pytest.fixture(scope="module")
def ref():
    """The reference tokenizer on the vocabulary file of its own package."""
    mod = pytest.importorskip("rwkv.rwkv_tokenizer", reason="rwkv (the reference RWKV tokenizer) is not installed")
    path = Path(mod.__file__).with_name("rwkv_vocab_v20230424.txt")
    if not path.is_file():
        pytest.skip(f"the rwkv package has no vocabulary file at {path}")
    return mod.TRIE_TOKENIZER(str(path))


@pytest.fixture(scope="module")
def corpus(shared_data) -> list[str]:
    with (shared_data / "corpus" / "multilingual.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line)["text"] for line in fh]


@pytest.fixture(scope="module")
def vocab_map(tok) -> dict[bytes, int]:
    return tok.get_vocab()


def test_bundled_file_is_the_published_one():
    raw = lzma.decompress((VOCABS / BUNDLED_FILE).read_bytes())
    assert hashlib.sha256(raw).hexdigest() == BUNDLED_SHA256
    assert raw.count(b"\n") == 65529


def test_vocabulary_is_the_references(tok, ref):
    assert {i: tok.id_to_token(i) for i in range(1, tok.vocab_size)} == ref.idx2token
    assert tok.id_to_token(0) is None and tok.vocab_size == 65530


# --------------------------------------------------------------- corpus
def test_every_corpus_text_matches_the_reference(tok, ref, corpus):
    for text in corpus:
        ids = tok.encode(text)
        assert ids == ref.encode(text), text
    flat, rows = tok.encode_batch(corpus, flat=True)
    lists = tok.encode_batch(corpus)
    for i, text in enumerate(corpus):
        want = tok.encode(text)
        assert flat[rows[i] : rows[i + 1]].tolist() == want == lists[i]
        assert tok.decode(want) == text


def test_every_corpus_text_matches_pyrwkv_tokenizer(tok, corpus):
    pyrwkv = pytest.importorskip("pyrwkv_tokenizer", reason="pyrwkv-tokenizer is not installed")
    other = pyrwkv.RWKVTokenizer()
    lists = tok.encode_batch(corpus, num_threads=2)
    for text, ids in zip(corpus, lists):
        assert list(other.encode(text)) == ids, text


def test_threads_offsets_and_arrow_agree_on_the_corpus(tok, corpus):
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    sample = corpus[::7]
    flat, rows = tok.encode_batch(sample, flat=True)
    flat2, rows2 = tok.encode_batch(sample, flat=True, num_threads=2)
    assert np.array_equal(flat, flat2) and np.array_equal(rows, rows2)
    ids, starts, ends, rows3 = tok.encode_batch_with_offsets(sample, num_threads=2)
    assert np.array_equal(ids, flat) and np.array_equal(rows3, rows)
    table = tok.encode_arrow(pa.chunked_array([pa.array(sample[:500]), pa.array(sample[500:])]), offsets=True)
    assert table.column("input_ids").to_pylist() == tok.encode_batch(sample)
    large = tok.encode_arrow(pa.array(sample, pa.large_string()), offsets=True, num_threads=2)
    assert large.column("offset_mapping").to_pylist() == table.column("offset_mapping").to_pylist()
    binary = tok.encode_arrow(pa.array([t.encode() for t in sample], pa.binary()), num_threads=2)
    assert binary.column("input_ids").to_pylist() == large.column("input_ids").to_pylist()
    spans = table.column("offset_mapping").to_pylist()
    for i, text in enumerate(sample[:300]):
        raw = text.encode()
        pieces = [tok.id_to_token(t) for t in tok.encode(text)]
        pos = 0
        for (s, e), piece in zip(spans[i], pieces):
            # A token covers characters s:e: its bytes lie in their UTF-8.
            assert raw.find(piece, len(text[:s].encode()), len(text[:e].encode())) >= 0
            pos += len(piece)
        assert list(zip(starts[rows[i] : rows[i + 1]].tolist(), ends[rows[i] : rows[i + 1]].tolist())) == \
            [tuple(x) for x in spans[i]]


def test_streaming_decode_gives_each_text_back(tok, corpus):
    dec = tok.stream_decoder()
    for text in corpus[::11]:
        parts = [dec.step(i) for i in tok.encode(text)]
        assert "".join(parts) + dec.flush() == text
        assert all(p == "" or text.startswith("".join(parts[: k + 1])) for k, p in enumerate(parts))


# ------------------------------------------------- the reference's unit test
def reference_unit_test_inputs(seed: int = 0) -> list[str]:
    """The inputs of the unit test in ChatRWKV's tokenizer/rwkv_tokenizer.py,
    rebuilt: random strings over five alphabets, runs of spaces, one random
    character repeated, and a UTF-8 stress text (boundary code points,
    Greek, replacement characters, noncharacters)."""
    rng = random.Random(seed)
    out = []
    alphabets = [["0", " "], ["0", "1"], ["0", "1", " "], ["0", "1", " ", "00", "11", "  ", "000", "111", "   "],
                 list("01 \n\r\t,.;!?:'\"-=你好")]
    for _ in range(500):
        out.append("".join(rng.choice(a) for a in alphabets for _ in range(256)))
    out += [" " * i for i in range(5000)]
    out += [chr(rng.randrange(0, 256)) * rng.randrange(1, 32) for _ in range(5000)]
    for _ in range(99999):
        c = chr(rng.randrange(256, 0x110000))
        if not 0xD800 <= ord(c) < 0xE000:  # the reference skips what cannot be encoded
            out.append(c * rng.randrange(1, 4))
    out.append(utf8_stress_text())
    return out


def utf8_stress_text() -> str:
    """A text in the manner of Markus Kuhn's UTF-8 decoder stress test (as
    text: malformed sequences are U+FFFD), built here."""
    lines = ["UTF-8 decoder capability and stress test", "-" * 40, ""]
    firsts = [0x00, 0x80, 0x800, 0x10000]
    lasts = [0x7F, 0x7FF, 0xFFFF, 0x10FFFF]
    others = [0xD7FF, 0xE000, 0xFFFD, 0x10FFFF, 0xFFFE, 0xFDD0, 0xFDEF, 0x1FFFE, 0x10FFFE]
    for name, cps in (("first", firsts), ("last", lasts), ("other", others)):
        for cp in cps:
            lines.append(f"{name} U-{cp:08X}: \"{chr(cp)}\"".ljust(78) + "|")
    lines.append("kosme: \"κόσμε\"".ljust(78) + "|")
    for n in range(1, 8):
        lines.append(f"{n} continuation bytes: \"{chr(0xFFFD) * n}\"".ljust(78) + "|")
    lines.append("\"" + " ".join([chr(0xFFFD)] * 32) + "\"")
    lines.append("THE END")
    return "\n".join(lines) + "\n"


def test_the_references_unit_test_inputs(tok, ref):
    texts = reference_unit_test_inputs()
    lists = tok.encode_batch(texts)
    for text, ids in zip(texts, lists):
        assert ids == ref.encode(text), repr(text[:80])
        assert tok.decode(ids) == text
    for text in texts[::50]:
        assert tok.encode(text) == ref.encode(text)


def malformed_utf8() -> list[bytes]:
    """The malformed sequences of a UTF-8 stress test, as bytes."""
    seqs = [bytes([b]) for b in range(0x80, 0xC0)]  # lone continuation bytes
    seqs += [bytes([b]) + b" " for b in range(0xC0, 0x100)]  # lone start bytes, impossible bytes
    seqs += [b"\xc0\xaf", b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf", b"\xf8\x80\x80\x80\xaf", b"\xc1\xbf"]  # overlong
    seqs += [b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xed\xa0\x80\xed\xb0\x80"]  # surrogates
    seqs += [b"\xe0\x80", b"\xf0\x80\x80", b"\xdf", b"\xef\xbf", b"\xf7\xbf\xbf"]  # last byte missing
    seqs += [b"\xf4\x90\x80\x80", b"\xfe\xfe\xff\xff", b"\x80" * 64]
    return seqs + [b"".join(seqs)]


def test_invalid_utf8_bytes_match_encode_bytes(tok, ref):
    for raw in malformed_utf8():
        ids = tok.encode(raw)
        assert ids == ref.encodeBytes(raw), raw
        assert tok.decode_bytes(ids) == raw


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300) | st.lists(st.sampled_from([b"\xe4", b"\xbd", b"\xa0", b"the", b" ", b"\xff", b"\x00",
                                                            b"\xf0\x9f", b"abc", b"\n\n"]), max_size=40).map(b"".join))
def test_any_bytes_match_encode_bytes(tok, ref, raw):
    ids = tok.encode(raw)
    assert ids == ref.encodeBytes(raw)
    assert tok.decode_bytes(ids) == raw
    assert tok.encode(bytearray(raw)) == ids and tok.encode(memoryview(raw)) == ids


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_any_text_matches_the_reference(tok, ref, text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        with pytest.raises(UnicodeEncodeError, match=f"position {e.start}"):
            tok.encode(text)
        return
    ids = tok.encode(text)
    assert ids == ref.encode(text)
    assert tok.decode(ids) == text
    assert tok.encode_batch([text, text]) == [ids, ids]


# ------------------------------------------------------------- backward
@pytest.fixture(scope="module")
def backward(vocab_map) -> segkit.MaxMatch:
    tokens = list(vocab_map)
    return segkit.MaxMatch(tokens, ids=[vocab_map[t] for t in tokens], direction="backward")


def test_backward_on_the_corpus_matches_the_naive_matcher(backward, vocab_map, corpus):
    sample = corpus[::97]  # the naive matcher tries up to 128 lengths a byte
    lists = backward.encode_batch(sample)
    for text, ids in zip(sample, lists):
        assert ids == [t for t, _, _ in greedy_backward(vocab_map, text.encode())]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200) | st.text(max_size=80).map(lambda t: t.encode("utf-8", "replace")))
def test_backward_and_forward_match_the_naive_matcher(tok, backward, vocab_map, raw):
    assert backward.encode(raw) == [t for t, _, _ in greedy_backward(vocab_map, raw)]
    assert tok.encode(raw) == [t for t, _, _ in greedy_forward(vocab_map, raw)]


# ------------------------------------------------------------- the rest
def test_lone_surrogates_name_their_position(tok):
    with pytest.raises(UnicodeEncodeError, match="position 3: surrogates not allowed"):
        tok.encode("abc\udc80def")
    with pytest.raises(UnicodeEncodeError, match=r"position 0: surrogates not allowed \(text 2 of the batch\)"):
        tok.encode_batch(["a", "b", "\ud800"])
    with pytest.raises(UnicodeEncodeError, match="position 1"):
        tok.encode_with_offsets("x\ud800")
    long = "a" * 10000 + "\ud800"  # longer than the one-text scratch
    with pytest.raises(UnicodeEncodeError, match="position 10000"):
        tok.encode(long)


def test_save_load_and_pickle_give_the_same_tokenizer(tok, tmp_path):
    path = tmp_path / "rwkv.segkit"
    tok.save(path)
    loaded = segkit.load(path)
    again = pickle.loads(pickle.dumps(tok))
    assert type(loaded) is type(again) is segkit.RWKVWorld
    text = "Löwe 老虎 🐅 tiger\n\n"
    assert loaded.encode(text) == again.encode(text) == tok.encode(text)
    assert loaded.decode(tok.encode(text)) == text


def test_a_file_in_the_format_builds_the_same_tokenizer(tok, shared_data):
    other = segkit.RWKVWorld(shared_data / "vocab" / "rwkv_vocab_v20230424.txt")
    text = "Hello, wonderful 世界 😀\t!"
    assert other.encode(text) == tok.encode(text)


def test_decode_errors(tok):
    with pytest.raises(ValueError, match="id 0 at position 1 has no token"):
        tok.decode([33, 0])
    with pytest.raises(ValueError, match="id 70000 at position 0"):
        tok.decode_bytes([70000])
    with pytest.raises(ValueError, match="id -1 at position 0"):
        tok.decode([-1])
    cut = tok.encode("😀")[:1]
    with pytest.raises(UnicodeDecodeError):
        tok.decode(cut)
    assert tok.decode(cut, errors="replace") == "\ufffd"
