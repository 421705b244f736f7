"""The rest of tiktoken's Encoding API on segkit.BPE, each call checked
against tiktoken 0.14 itself: tiktoken's own encoding constructors
(``tiktoken.get_encoding``) run offline from a cache folder holding the
shared copies of its files under the names it looks for, and check the
sha256 it expects; p50k_base's file is r50k_base's plus its 24 runs of
spaces, written here and accepted by that check.  Also encode_bytes
against tiktoken's ``_encode_bytes`` on random bytes, and the surrogate
repair of the tiktoken-facing models."""

from __future__ import annotations

import base64
import gzip
import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit
from segkit.presets.bpe import encodings

tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is not installed")

URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
NAMES = ["r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony"]


@pytest.fixture(scope="module")
def tiktoken_offline(shared_data, tmp_path_factory):
    """tiktoken's registry, reading its files from a local cache folder."""
    folder = tmp_path_factory.mktemp("tiktoken-cache")
    vocab = shared_data / "vocab"
    raw = {"r50k_base": (vocab / "gpt2.tiktoken").read_bytes(),
           "cl100k_base": gzip.decompress((vocab / "cl100k_base.tiktoken.gz").read_bytes()),
           "o200k_base": gzip.decompress((vocab / "o200k_base.tiktoken.gz").read_bytes())}
    # p50k_base: the runs of 2..25 spaces at ranks 50257..50280 (tiktoken checks the sha256)
    raw["p50k_base"] = raw["r50k_base"] + b"".join(
        base64.b64encode(b" " * n) + b" %d\n" % (50255 + n) for n in range(2, 26))
    for name, data in raw.items():
        (folder / hashlib.sha1(URL.format(name).encode()).hexdigest()).write_bytes(data)
    mp = pytest.MonkeyPatch()
    mp.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    yield tiktoken
    mp.undo()


@pytest.fixture(scope="module", params=NAMES)
def pair(request, tiktoken_offline):
    return segkit.BPE.from_pretrained(request.param), tiktoken_offline.get_encoding(request.param)


@pytest.fixture(scope="module")
def cl100k(tiktoken_offline):
    return segkit.BPE.from_pretrained("cl100k_base"), tiktoken_offline.get_encoding("cl100k_base")


def test_p50k_is_tiktokens_file():
    # the derivation is checked against the hash tiktoken checks
    tokens, digest = encodings._derived_tokens("p50k_base")
    assert digest == "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"
    assert len(tokens) == 50281 and tokens[50256] is None and tokens[50280] == b" " * 25


def test_vocabulary_facts(pair):
    enc, ref = pair
    assert enc.name == ref.name
    assert enc.n_vocab == ref.n_vocab
    assert enc.max_token_value == ref.max_token_value
    assert enc.special_tokens_set == ref.special_tokens_set
    assert enc.eot_token == ref.eot_token
    assert enc.token_byte_values() == ref.token_byte_values()
    specials = sorted(set(ref._special_tokens.values()))
    for i in specials + [0, 1, 255, 256, 1000, ref.max_token_value - len(specials)]:
        assert enc.is_special_token(i) == ref.is_special_token(i), i


def test_encode_single_token(pair):
    enc, ref = pair
    values = ref.token_byte_values()
    for b in values[::997] + [values[-1]]:
        assert enc.encode_single_token(b) == ref.encode_single_token(b)
    for s in sorted(ref.special_tokens_set)[:50]:
        assert enc.encode_single_token(s) == ref.encode_single_token(s)
    for missing in (b"hello world, this is not one token", "\u0fff" * 9):
        with pytest.raises(KeyError):
            ref.encode_single_token(missing)
        with pytest.raises(KeyError):
            enc.encode_single_token(missing)


def test_decoding_calls(pair, multilingual_sample):
    enc, ref = pair
    texts = [row["text"] for row in multilingual_sample[::10]]
    batch = [ref.encode(t) for t in texts]
    assert [enc.encode(t) for t in texts] == batch
    assert enc.decode_batch(batch) == ref.decode_batch(batch)
    assert enc.decode_bytes_batch(batch) == ref.decode_bytes_batch(batch)
    for ids in batch:
        assert enc.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)
        assert enc.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
        got = enc.encode_to_numpy(texts[0])
        assert got.dtype == np.uint32 and got.tolist() == ref.encode_to_numpy(texts[0]).tolist()
    # special tokens (one each, with text around)
    eot = ref.eot_token
    ids = ref.encode("ab") + [eot] + ref.encode(" 日本")
    assert enc.decode_with_offsets(ids) == ref.decode_with_offsets(ids)
    assert enc.decode_tokens_bytes(ids) == ref.decode_tokens_bytes(ids)


def test_decode_with_offsets_inside_characters(cl100k):
    enc, ref = cl100k
    ids = enc.encode("日本語 😀!")
    for k in range(len(ids) + 1):
        try:
            expected = ref.decode_with_offsets(ids[:k])
        except UnicodeDecodeError:
            with pytest.raises(UnicodeDecodeError):
                enc.decode_with_offsets(ids[:k])
            continue
        assert enc.decode_with_offsets(ids[:k]) == expected


def test_unknown_ids_are_key_errors(cl100k):
    enc, ref = cl100k
    for call in ("decode_single_token_bytes", "decode_tokens_bytes", "decode_bytes"):
        arg = 100256 if call == "decode_single_token_bytes" else [100256]
        with pytest.raises(KeyError):
            getattr(ref, call)(arg)
        with pytest.raises(KeyError, match="100256"):
            getattr(enc, call)(arg)
        with pytest.raises(ValueError):  # segkit's argument errors are ValueErrors too
            getattr(enc, call)(arg)


def test_harmony_shares_an_id(tiktoken_offline):
    # o200k_harmony gives <|endofprompt|> and <|reserved_200018|> the same id
    enc, ref = segkit.BPE.from_pretrained("o200k_harmony"), tiktoken_offline.get_encoding("o200k_harmony")
    for s in ("<|endofprompt|>", "<|reserved_200018|>"):
        assert enc.encode(s, allowed_special="all") == ref.encode(s, allowed_special="all") == [200018]
    assert ref.decode([200018]) in ("<|endofprompt|>", "<|reserved_200018|>")
    assert enc.decode([200018]) in ("<|endofprompt|>", "<|reserved_200018|>")
    text = "<|start|>user<|message|>hi<|end|>"
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")


def test_names_and_models(tiktoken_offline):
    assert segkit.list_encoding_names() == tiktoken.list_encoding_names()
    assert segkit.BPE.from_pretrained("gpt2").name == "gpt2"
    assert segkit.BPE.from_pretrained("r50k_base").name == "r50k_base"
    models = list(tiktoken.model.MODEL_TO_ENCODING) + [
        "gpt-4o-2024-05-13", "gpt-4-0314", "gpt-oss-120b", "ft:gpt-4o:org", "gpt-5-mini", "o3-pro", "gpt-4.1-nano",
        "gpt-35-turbo-16k", "chatgpt-4o-latest", "o4-mini-high"]
    for m in models:
        assert encodings.encoding_name_for_model(m) == tiktoken.encoding_name_for_model(m), m
    for m in ("llama-3", "", "gpt"):
        with pytest.raises(KeyError):
            tiktoken.encoding_name_for_model(m)
        with pytest.raises(KeyError, match="from_pretrained"):
            segkit.encoding_for_model(m)
    assert segkit.encoding_for_model("gpt-3.5-turbo").name == "cl100k_base"
    assert segkit.encoding_for_model("gpt2").name == "gpt2"


# ------------------------------------------------------------------ surrogates
_surrogates = st.sampled_from(["\ud800", "\udfff", "\ud83d\ude00", "\ude00\ud83d", "\ud83d", "\ufeff", "\ufffd"])
_mixed = st.lists(st.one_of(_surrogates, st.text(max_size=6), st.sampled_from(["<|endoftext|>", " ", "\n"])),
                  max_size=12).map("".join)


@given(_mixed)
@settings(max_examples=300, deadline=None)
def test_surrogates_repaired_as_tiktoken(cl100k, text):
    enc, ref = cl100k
    assert enc.encode_ordinary(text) == ref.encode_ordinary(text)
    assert enc.encode(text, allowed_special="all") == ref.encode(text, allowed_special="all")
    assert enc.encode(text, disallowed_special=()) == ref.encode(text, disallowed_special=())
    assert enc.encode_batch([text, "x"], disallowed_special=()) == ref.encode_batch([text, "x"],
                                                                                   disallowed_special=())
    assert enc.encode_ordinary_batch([text, text]) == ref.encode_ordinary_batch([text, text])
    assert enc.count(text, disallowed_special=()) == len(ref.encode(text, disallowed_special=()))
    try:
        expected = ref.encode(text)
    except ValueError:
        with pytest.raises(ValueError):
            enc.encode(text)
    else:
        assert enc.encode(text) == expected


def test_surrogates_examples(cl100k):
    enc, ref = cl100k
    assert enc.encode("\ud83d\ude00") == ref.encode("\ud83d\ude00") == enc.encode("😀")
    assert enc.encode("a\ud800b") == ref.encode("a\ud800b") == enc.encode("a\ufffdb")
    # where tiktoken does not repair, neither does segkit
    for call in ("encode_to_numpy", "encode_single_token"):
        with pytest.raises(ValueError):
            getattr(ref, call)("a\ud800")
        with pytest.raises(ValueError, match="lone surrogate"):
            getattr(enc, call)("a\ud800")
    with pytest.raises(ValueError, match="lone surrogate"):
        enc.encode_with_offsets("a\ud800")


def test_other_models_keep_refusing_surrogates(shared_data):
    hf = segkit.BPE.from_tokenizer_json(shared_data / "vocab" / "gpt-neox-20b.tokenizer.json")
    vocab = {bytes([i]): i for i in range(256)}
    merges_model = segkit.BPE(vocab, [])
    for model in (hf, merges_model):
        for call in (model.encode, model.encode_ordinary, lambda t: model.encode_batch([t])):
            with pytest.raises(ValueError, match="lone surrogate"):
                call("ab\ud800")


# ------------------------------------------------------------------ encode_bytes
_pieces = st.one_of(st.binary(max_size=8), st.text(max_size=8).map(lambda s: s.encode("utf-8", "replace")),
                    st.sampled_from([b" ", b"  ", b"\n", b"\t \n", b"\xe4\xb8", b"\xf0\x9f\x98", b"\x80", b"\xff",
                                     b"hello", b" world", b"123", b"'s"]))
_bytes = st.one_of(st.binary(max_size=60), st.lists(_pieces, max_size=12).map(b"".join))


@pytest.fixture(scope="module", params=["r50k_base", "cl100k_base", "o200k_base"])
def byte_pair(request, tiktoken_offline):
    return segkit.BPE.from_pretrained(request.param), tiktoken_offline.get_encoding(request.param)


@given(_bytes)
@settings(max_examples=300, deadline=None)
def test_encode_bytes_equals_tiktoken(byte_pair, data):
    enc, ref = byte_pair
    assert enc.encode_bytes(data) == ref._encode_bytes(data)
    assert enc.decode_bytes(enc.encode_bytes(data)) == data


def test_encode_bytes_cases(cl100k):
    enc, ref = cl100k
    cases = [b"", b"\xff", b"hello \xe4\xb8", b"hello   \n\n \xe4", b"\n \n\xff", b"a" * 300 + b"\xff" + b"b" * 300,
             "日本語".encode()[:-1], b"<|endoftext|>\xff", b"x\xffy z w", b" \t\n" * 50 + b"\x80"]
    for data in cases:
        assert enc.encode_bytes(data) == ref._encode_bytes(data), data
    assert enc.encode_bytes(bytearray(b"hi\xff")) == ref._encode_bytes(b"hi\xff")
    with pytest.raises(TypeError, match="bytes"):
        enc.encode_bytes("text")


def test_encode_bytes_missing_byte(shared_data):
    # a vocabulary may lack the bytes that never occur in UTF-8 (GPT-NeoX's does)
    byte_set = [b for b in range(256) if not (b in (0xC0, 0xC1) or b >= 0xF5)]
    vocab = {bytes([b]): i for i, b in enumerate(byte_set)}
    vocab[b"ab"] = len(vocab)
    model = segkit.BPE(vocab, [(b"a", b"b")])
    assert model.encode_bytes(b"ab\x80") == [vocab[b"ab"], vocab[b"\x80"]]
    with pytest.raises(ValueError, match="byte 0xff at position 3 is not a token"):
        model.encode_bytes(b"abc\xff")
    # a tokenizer.json model that normalizes its text cannot take other bytes
    hf = segkit.BPE.from_tokenizer_json(shared_data / "vocab" / "gpt-neox-20b.tokenizer.json")
    assert hf.encode_bytes("héllo".encode()) == hf.encode_ordinary("héllo")
    with pytest.raises(ValueError, match="normalizes"):
        hf.encode_bytes(b"abc\xff")
