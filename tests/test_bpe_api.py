"""segkit.BPE's API: batches (lists, flat arrays, threads, Arrow), offsets,
count, decoding, special-token arguments, lone surrogates, and the errors of
from_tiktoken / BPE(vocab, merges) / from_pretrained."""

from __future__ import annotations

import base64
import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit
from segkit.presets.bpe.files import BPEFileError

TEXTS = ["hello world", "", "  \n\n x", "naïve café 東京 😀👍🏽", "a" * 500, "I'll pay $1234.50!", "<|endoftext|>"]


@pytest.fixture(scope="module")
def enc():
    return segkit.BPE.from_pretrained("cl100k_base")


def test_batch_forms_agree(enc):
    lists = enc.encode_ordinary_batch(TEXTS)
    assert lists == [enc.encode_ordinary(t) for t in TEXTS]
    ids, rows = enc.encode_ordinary_batch(TEXTS, flat=True)
    assert ids.dtype == np.int32 and rows.dtype == np.int64 and rows.size == len(TEXTS) + 1
    assert [ids[rows[i] : rows[i + 1]].tolist() for i in range(len(TEXTS))] == lists
    assert enc.encode_ordinary_batch(TEXTS * 50, num_threads=2) == lists * 50
    assert enc.encode_batch(TEXTS, allowed_special="all") == [enc.encode(t, allowed_special="all") for t in TEXTS]
    assert [enc.count(t, disallowed_special=()) for t in TEXTS] == [len(x) for x in lists]


def test_encode_arrow(enc):
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    col = pa.chunked_array([pa.array(TEXTS[:3]), pa.array(TEXTS[3:], type=pa.string())])
    assert enc.encode_arrow(col, disallowed_special=()).to_pylist() == enc.encode_batch(TEXTS, disallowed_special=())
    assert enc.encode_arrow(pa.array(["a", None]), null="empty").to_pylist() == [enc.encode("a"), []]
    with pytest.raises(ValueError, match="row 1 is null"):
        enc.encode_arrow(pa.array(["a", None]))


@given(st.text(max_size=60))
@settings(max_examples=200, deadline=None)
def test_offsets_cover_the_text(enc, text):
    if any(0xD800 <= ord(c) < 0xE000 for c in text):
        return
    ids, offsets = enc.encode_with_offsets(text, disallowed_special=())
    assert ids == enc.encode(text, disallowed_special=())
    data = text.encode("utf-8")
    pos = 0
    for i, (s, e) in zip(ids, offsets):
        tok = enc.decode_single_token_bytes(i)
        # the token's bytes lie within the characters its offsets span
        assert 0 <= s < e <= len(text)
        assert tok in text[s:e].encode("utf-8")
        pos += len(tok)
    assert pos == len(data)
    assert enc.decode(ids) == text


def test_decode_errors(enc):
    assert enc.decode_bytes([]) == b""
    assert enc.decode([15339, 100257]) == "hello<|endoftext|>"
    for bad in ([100256], [-1], [10**9]):
        with pytest.raises(ValueError, match="not a token"):
            enc.decode(bad)
    assert enc.decode([9080, 22656, 45918]) == "日本\ufffd"  # a partial character
    assert enc.n_vocab == 100277


def test_lone_surrogate(enc):
    # a model from tiktoken's files repairs surrogates as tiktoken does
    # (tests/test_bpe_tiktoken_api.py compares with tiktoken) ...
    assert enc.encode("ab\ud800c") == enc.encode("ab\ufffdc")
    assert enc.encode_batch(["ok", "x\udfff"]) == [enc.encode("ok"), enc.encode("x\ufffd")]
    # ... a merges-based model names the position
    merges_model = segkit.BPE({bytes([i]): i for i in range(256)}, [])
    with pytest.raises(ValueError, match="lone surrogate '\\\\ud800' at position 2"):
        merges_model.encode("ab\ud800c")
    with pytest.raises(ValueError, match="text 1 has a lone surrogate"):
        merges_model.encode_batch(["ok", "x\udfff"])


def test_special_token_arguments(enc):
    text = "a<|endoftext|>b<|fim_prefix|>"
    with pytest.raises(ValueError, match="<\\|endoftext\\|>"):
        enc.encode(text)
    assert enc.encode(text, allowed_special={"<|endoftext|>", "<|fim_prefix|>"}) == \
        enc.encode(text, allowed_special="all")
    assert 100257 in enc.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=())
    assert 100257 not in enc.encode(text, disallowed_special=())
    with pytest.raises(ValueError, match="'all'"):
        enc.encode("x", allowed_special="some")
    assert enc.special_tokens["<|endoftext|>"] == 100257


def test_unknown_pretrained_name():
    with pytest.raises(ValueError, match="known names: cl100k_base, gpt2, o200k_base, o200k_harmony, p50k_base, p50k_edit, r50k_base"):
        segkit.BPE.from_pretrained("p50k")


def _write(tmp_path, lines, gz=False):
    raw = "".join(line + "\n" for line in lines).encode()
    path = tmp_path / ("v.tiktoken.gz" if gz else "v.tiktoken")
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


BASE = [f"{_b64(bytes([i]))} {i}" for i in range(256)]


@pytest.mark.parametrize("lines, message", [
    (BASE + ["!!notbase64 256"], "line 257: bad base64"),
    (BASE + [_b64(b"ab")], "line 257: the rank is missing"),
    (BASE + [f"{_b64(b'ab')} x1"], "line 257: the rank must be a non-negative integer"),
    (BASE + [f"{_b64(b'ab')} 5"], "line 257: rank 5 is already given on line 6"),
    (BASE + [f"{_b64(b'ab')} 257"], "line 257: rank 257 leaves a gap: rank 256 is missing"),
    (BASE + [f"{_b64(b'a')} 256"], "line 257: token b'a' is already given on line 98"),
    (BASE + [f"{_b64(b'')} 256"], "line 257: an empty token"),
    (BASE[:10] + BASE[11:] + [f"{_b64(b'ab')} 10"], "lacks 1 of the single bytes"),
])
def test_bad_tiktoken_files(tmp_path, lines, message):
    with pytest.raises((BPEFileError, ValueError), match=message.replace("(", r"\(").replace(")", r"\)")):
        segkit.BPE.from_tiktoken(_write(tmp_path, lines), pattern=r"\S+|\s+")


def test_gzipped_tiktoken(tmp_path):
    lines = BASE + [f"{_b64(b'ab')} 256"]
    plain = segkit.BPE.from_tiktoken(_write(tmp_path, lines), pattern=None)
    packed = segkit.BPE.from_tiktoken(_write(tmp_path, lines, gz=True), pattern=None)
    assert plain.encode("xabab") == packed.encode("xabab") == [ord("x"), 256, 256]
    bad = tmp_path / "bad.gz"
    bad.write_bytes(gzip.compress(b"x")[:-5])
    with pytest.raises(BPEFileError, match="gzip"):
        segkit.BPE.from_tiktoken(bad, pattern=None)


def test_constructor_errors():
    vocab = {bytes([i]): i for i in range(256)}
    with pytest.raises(ValueError, match="not a token of vocab"):
        segkit.BPE(vocab, [(b"a", b"b")])
    with pytest.raises(ValueError, match="two ids"):
        segkit.BPE({**{i: t for t, i in vocab.items()}, 300: b"a"}, [])
    with pytest.raises(ValueError, match="already taken"):
        segkit.BPE(vocab, [], special_tokens={"<s>": 5})
    with pytest.raises(TypeError, match="pair of bytes"):
        segkit.BPE(vocab, [("a", "b")])
    with pytest.raises(ValueError, match="regular expression"):
        segkit.BPE(vocab, [], pattern="(")


@pytest.mark.parametrize("threads", [1, 2])
def test_disallowed_special_late_in_a_large_batch(enc, threads):
    # the pre-tokenizer used to read piece ends it had not returned (a crash)
    texts = ["hello"] * 100_000 + ["a<|endoftext|>"]
    with pytest.raises(ValueError, match="text 100000 contains the special token"):
        enc.encode_batch(texts, num_threads=threads)


def test_single_texts_take_the_fused_compiled_path(enc):
    # The fused single-text kernel is chosen from the model; choosing it by
    # comparing kernel objects failed once kernels became stand-ins rebound
    # when Numba loads, and every encode() took the slow general path
    # (correct, so only this check and the benchmarks saw it).
    import pickle

    text = "Hello, world! 東京"
    for model in (enc, pickle.loads(pickle.dumps(enc))):
        assert model._fast
        ids = model.encode_ordinary(text)
        assert model._entry is not None  # resolved once, then called directly
        assert model.encode_ordinary(text) == ids == model.encode(text)
