"""segkit.MaxMatch against the naive greedy matcher (``tests/byte_reference.py``,
which works on bytes and on str alike) on random vocabularies that are not
prefix-closed and lack single bytes or characters; its options, errors,
files, pickles, threads, Arrow and tokenizer.json reading."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit import VocabularyError
from segkit.presets.maxmatch import DuplicateTokenWarning

from byte_reference import char_span, greedy

_BYTES = b"ab\x00\xff" + "é".encode() + "你".encode()
_CHARS = "abé你😀 "
byte_tokens = st.lists(st.binary(min_size=1, max_size=5).map(lambda b: bytes(_BYTES[x % len(_BYTES)] for x in b)),
                       min_size=1, max_size=20, unique=True)
char_tokens = st.lists(st.text(alphabet=_CHARS, min_size=1, max_size=4), min_size=1, max_size=20, unique=True)
byte_texts = st.lists(st.sampled_from(list(_BYTES)) | st.integers(0, 255), max_size=50).map(bytes)
str_texts = st.text(alphabet=_CHARS + "x", max_size=30)
UNK = 999


def _ref(tokens, text, direction="forward", ids=None):
    ids = ids or list(range(len(tokens)))
    return greedy(dict(zip(tokens, ids)), text, direction, UNK)


@settings(max_examples=200, deadline=None)
@given(byte_tokens, st.lists(byte_texts | str_texts, min_size=1, max_size=5), st.sampled_from(["forward", "backward"]))
def test_bytes_match_the_naive_matcher(tokens, texts, direction):
    ids = [3 * i + 1 for i in range(len(tokens))]  # ids other than positions
    mm = segkit.MaxMatch(tokens, ids=ids, direction=direction, unknown=UNK)
    for text in texts:
        raw = text.encode() if isinstance(text, str) else text
        want = _ref(tokens, raw, direction, ids)
        assert mm.encode(text) == [t for t, _, _ in want]
        got_ids, spans = mm.encode_with_offsets(text)
        assert got_ids == [t for t, _, _ in want]
        if isinstance(text, str):
            assert spans == [char_span(text, s, e) for _, s, e in want]
        else:
            assert spans == [(s, e) for _, s, e in want]
        if UNK not in got_ids:
            assert mm.decode_bytes(got_ids) == raw
            assert b"".join(mm.tokenize(text)) == raw
    lists = mm.encode_batch(texts)
    assert lists == [mm.encode(t) for t in texts]
    flat, rows = mm.encode_batch(texts, flat=True)
    assert flat.dtype == np.int32 and rows.dtype == np.int64
    assert [flat[a:b].tolist() for a, b in zip(rows[:-1], rows[1:])] == lists
    i2, s2, e2, r2 = mm.encode_batch_with_offsets(texts)
    assert i2.tolist() == flat.tolist() and r2.tolist() == rows.tolist()
    assert [list(zip(s2[a:b].tolist(), e2[a:b].tolist())) for a, b in zip(rows[:-1], rows[1:])] == \
        [mm.encode_with_offsets(t)[1] for t in texts]


@settings(max_examples=200, deadline=None)
@given(char_tokens, st.lists(str_texts, min_size=1, max_size=5), st.sampled_from(["forward", "backward"]))
def test_characters_match_the_naive_matcher(tokens, texts, direction):
    mm = segkit.MaxMatch(tokens, unit="char", direction=direction, unknown=UNK)
    for text in texts:
        want = _ref(tokens, text, direction)
        assert mm.encode(text) == [t for t, _, _ in want]
        assert mm.encode_with_offsets(text) == ([t for t, _, _ in want], [(s, e) for _, s, e in want])
        if UNK not in mm.encode(text):
            assert mm.decode(mm.encode(text)) == text and "".join(mm.tokenize(text)) == text
    assert mm.encode_batch(texts) == [mm.encode(t) for t in texts]


def test_unknown_error_names_the_byte_and_offset():
    mm = segkit.MaxMatch([b"a", b"ab"])
    with pytest.raises(ValueError, match=r"no token matches byte 0x63 \('c'\) at byte 3 \(character 3\) of the text"):
        mm.encode("abac")
    with pytest.raises(ValueError, match=r"byte 0xc3 at byte 1 \(character 1\) of text 1 of the batch"):
        mm.encode_batch(["ab", "aé"])
    with pytest.raises(ValueError, match=r"byte 0xff at byte 2 of the text"):
        mm.encode(b"ab\xff")
    with pytest.raises(ValueError, match=r"byte 0x7a"):
        mm.encode_with_offsets("z")
    chars = segkit.MaxMatch(["a", "ab"], unit="char")
    with pytest.raises(ValueError, match=r"character 'é' \(U\+00E9\) at character 2 of the text"):
        chars.encode("abé")
    backward = segkit.MaxMatch([b"a", b"ab"], direction="backward")
    with pytest.raises(ValueError, match=r"byte 0x63 \('c'\) at byte 0"):
        backward.encode("cab")


def test_unknown_id_is_one_token_per_byte_or_character():
    assert segkit.MaxMatch([b"a"], unknown=7).encode("aé") == [0, 7, 7]
    assert segkit.MaxMatch(["a"], unit="char", unknown=7).encode("aé") == [0, 7]
    # An unknown id may be a token of its own.
    mm = segkit.MaxMatch(["<unk>", "a"], unknown=0)
    assert mm.encode("ba") == [0, 1] and mm.decode([0]) == "<unk>"


def test_duplicates_warn_and_the_higher_id_is_matched():
    with pytest.warns(DuplicateTokenWarning, match="1 token appears more than once"):
        mm = segkit.MaxMatch(["a", b"a", "b"], ids=[5, 2, 3])
    assert mm.encode("ab") == [5, 3] and mm.decode([2, 5]) == "aa"
    assert mm.token_to_id("a") == 5 and mm.id_to_token(2) == b"a"


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(tokens=[]), VocabularyError, "no tokens"),
    (dict(tokens=[b"a", b""]), VocabularyError, "position 1 is empty"),
    (dict(tokens=[b"a", 3]), VocabularyError, "position 1 is int"),
    (dict(tokens=[b"a"], unit="char"), VocabularyError, "unit='char' takes str"),
    (dict(tokens=["a", "b"], ids=[1, 1]), VocabularyError, "id 1 is given twice"),
    (dict(tokens=["a", "b"], ids=[0, -1]), VocabularyError, "expected a non-negative int"),
    (dict(tokens=["a", "b"], ids=[0]), VocabularyError, "2 tokens but 1 ids"),
    (dict(tokens=["a"], ids=[1.0]), VocabularyError, "expected an int"),
    (dict(tokens=["\ud800"]), VocabularyError, "lone surrogate"),
    (dict(tokens=["a"], unit="word"), ValueError, "unit must be"),
    (dict(tokens=["a"], direction="both"), ValueError, "direction must be"),
    (dict(tokens=["a"], unknown="skip"), ValueError, "unknown must be"),
    (dict(tokens=["a"], unknown=-2), ValueError, "unknown must be"),
    (dict(tokens="abc"), TypeError, "single str"),
])
def test_bad_arguments_are_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        segkit.MaxMatch(**kwargs)


def test_bad_texts_and_ids_are_named():
    mm = segkit.MaxMatch([b"a"])
    with pytest.raises(TypeError, match="expected text as str or bytes, found int"):
        mm.encode(5)
    with pytest.raises(TypeError, match="sequence of texts"):
        mm.encode_batch("aaa")
    with pytest.raises(TypeError, match="at index 1"):
        mm.encode_batch([b"a", 3])
    with pytest.raises(TypeError, match="expected text as str"):
        segkit.MaxMatch(["a"], unit="char").encode(b"a")
    with pytest.raises(ValueError, match="id 4 at position 1 has no token"):
        mm.decode([0, 4])
    with pytest.raises(TypeError, match="found str 'x' at position 0"):
        mm.decode(["x"])
    assert mm.decode(np.array([0, 0])) == "aa"
    assert mm.encode_batch(np.array(["a", "aa"])) == [[0], [0, 0]] and mm.encode_batch([]) == []
    ids, rows = mm.encode_batch([], flat=True)
    assert ids.size == 0 and rows.tolist() == [0]


def test_long_texts_and_threads_agree():
    mm = segkit.MaxMatch([b"ab", b"aba", b"b", b"a", "é".encode()], direction="backward")
    text = "abaé" * 30000  # beyond the one-text scratch
    want = [t for t, _, _ in _ref([b"ab", b"aba", b"b", b"a", "é".encode()], text.encode(), "backward")]
    assert mm.encode(text) == want
    batch = [text[: i * 97] for i in range(300)]
    one, rows1 = mm.encode_batch(batch, flat=True)
    two, rows2 = mm.encode_batch(batch, flat=True, num_threads=2)
    assert np.array_equal(one, two) and np.array_equal(rows1, rows2)


@pytest.mark.parametrize("kwargs, texts", [
    (dict(tokens=[b"a", b"ab", b"\xff"], direction="backward"), ["abab", b"ab\xff", ""]),
    (dict(tokens=["東京", "京都", "東"], unit="char", unknown=5), ["東京都", "京都東x"]),
    (dict(tokens=[b"a", b"b"], ids=[4, 9], unknown=2), ["abz", "ba"]),
])
def test_save_load_and_pickle(kwargs, texts, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mm = segkit.MaxMatch(**kwargs)
        path = tmp_path / "mm.segkit"
        mm.save(path)
        loaded = segkit.load(path)
    again = pickle.loads(pickle.dumps(mm))
    want = [t for t in mm.encode_batch(texts)]
    assert want == [[t for t, _, _ in _ref(kwargs["tokens"], x.encode() if isinstance(x, str) and mm.unit == "byte"
                                            else x, mm.direction, kwargs.get("ids"))] for x in texts] \
        or mm.unknown != "error"
    for m in (loaded, again):
        assert type(m) is segkit.MaxMatch and repr(m) == repr(mm)
        assert m.encode_batch(texts) == want
        assert [m.encode(t) for t in texts] == want


def test_a_duplicate_token_survives_saving(tmp_path):
    with pytest.warns(DuplicateTokenWarning):
        mm = segkit.MaxMatch([b"a", b"a", b"b"])
    mm.save(tmp_path / "d.segkit")
    loaded = segkit.load(tmp_path / "d.segkit")
    assert loaded.encode("ab") == [1, 2] and loaded.decode([0, 1]) == "aa"


def test_stream_decoder_emits_complete_characters():
    mm = segkit.MaxMatch([bytes([b]) for b in range(256)])
    text = "aé你😀z"
    dec = mm.stream_decoder()
    out = [dec.step(i) for i in mm.encode(text)]
    assert out == ["a", "", "é", "", "", "你", "", "", "", "😀", "z"]
    assert dec.flush() == ""
    assert dec.feed(mm.encode("é😀")[:3]) == "é" and dec.pending == b"\xf0"
    with pytest.raises(UnicodeDecodeError):
        dec.flush()
    rep = mm.stream_decoder(errors="replace")
    assert rep.feed([0xFF, 0x61]) == "\ufffda"
    with pytest.raises(ValueError, match="id 300 has no token"):
        rep.step(300)


# --------------------------------------------------------------- Arrow
def test_arrow_columns():
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    mm = segkit.MaxMatch([b"a", b"ab", "é".encode(), b"\xff"])
    texts = ["abé", "", "aab"]
    table = mm.encode_arrow(pa.array(texts), offsets=True)
    assert table.column("input_ids").to_pylist() == mm.encode_batch(texts)
    assert table.column("offset_mapping").to_pylist() == [[list(p) for p in mm.encode_with_offsets(t)[1]]
                                                          for t in texts]
    binary = mm.encode_arrow(pa.array([b"ab\xff", None], pa.large_binary()), null="empty", offsets=True)
    assert binary.to_pylist() == [{"input_ids": [1, 3], "offset_mapping": [[0, 2], [2, 3]]},
                                  {"input_ids": [], "offset_mapping": []}]
    with pytest.raises(ValueError, match="row 1 is null"):
        mm.encode_arrow(pa.array(["a", None]))
    with pytest.raises(ValueError, match="no token matches byte 0x7a"):
        mm.encode_arrow(pa.array(["a", "z"]))
    with pytest.raises(TypeError, match="string or binary"):
        mm.encode_arrow(pa.array([1, 2]))
    # A null slot that spans bytes (allowed by Arrow) reads as empty.
    arr = pa.Array.from_buffers(pa.string(), 2, [pa.py_buffer(np.packbits([1, 0], bitorder="little")),
                                                 pa.py_buffer(np.array([0, 1, 3], np.int32)), pa.py_buffer(b"aab")],
                                null_count=1)
    assert mm.encode_arrow(arr, null="empty").column("input_ids").to_pylist() == [[0], []]
    chars = segkit.MaxMatch(["東京", "都"], unit="char", unknown=9)
    assert chars.encode_arrow(pa.array(["東京都x"])).column("input_ids").to_pylist() == [[0, 1, 9]]


# ------------------------------------------------------ tokenizer.json
def gpt2_byte_alphabet() -> dict[str, int]:
    """GPT-2's byte <-> character table, built here independently."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    table = {chr(b): b for b in printable}
    extra = 0
    for b in range(256):
        if b not in printable:
            table[chr(256 + extra)] = b
            extra += 1
    return table


def test_gpt_neox_vocabulary_matches_the_naive_matcher(shared_data):
    path = shared_data / "vocab" / "gpt-neox-20b.tokenizer.json"
    mm = segkit.MaxMatch.from_tokenizer_json(path)
    alphabet = gpt2_byte_alphabet()
    vocab = {bytes(alphabet[c] for c in t): i for t, i in json.loads(path.read_text())["model"]["vocab"].items()}
    with (shared_data / "corpus" / "multilingual-1000.jsonl").open() as fh:
        texts = [json.loads(line)["text"] for line in fh][:300]
    for text, ids in zip(texts, mm.encode_batch(texts)):
        assert ids == [t for t, _, _ in greedy(vocab, text.encode())]
        assert mm.decode(ids) == text
    assert mm.encode("<|endoftext|>") == [0]  # a model-vocabulary special token matches its spelling


def test_wordpiece_vocabulary_uses_its_unk(shared_data):
    mm = segkit.MaxMatch.from_tokenizer_json(shared_data / "vocab" / "bert-base-uncased.tokenizer.json")
    assert mm.unknown == 100
    assert mm.tokenize("hello") == [b"hello"]
    assert mm.encode("Z") == [100]  # no token starts with an uppercase Z


def test_small_tokenizer_json_files(tmp_path):
    def write(obj) -> str:
        p = tmp_path / "t.json"
        p.write_text(json.dumps(obj))
        return str(p)

    fallback = {"model": {"type": "BPE", "byte_fallback": True, "unk_token": "<unk>",
                          "vocab": {"<unk>": 0, "<0x0A>": 1, "<0xE4>": 2, "ab": 3, "a": 4, "▁b": 5}}}
    mm = segkit.MaxMatch.from_tokenizer_json(write(fallback))
    assert mm.encode("ab\n▁bc") == [3, 1, 5, 0] and mm.id_to_token(2) == b"\xe4"
    unigram = {"model": {"type": "Unigram", "unk_id": 1, "vocab": [["x", -1.0], ["<unk>", 0.0], ["xy", -2.0]]}}
    assert segkit.MaxMatch.from_tokenizer_json(write(unigram)).encode("xyxz") == [2, 0, 1]
    level = {"model": {"type": "BPE", "vocab": {"Ġa": 0, "a": 1}}, "pre_tokenizer": {
        "type": "Sequence", "pretokenizers": [{"type": "Split"}, {"type": "ByteLevel"}]}}
    assert segkit.MaxMatch.from_tokenizer_json(write(level), unknown=9).encode(" a a!") == [0, 0, 9]
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError, match="broken.json: not a JSON file"):
        segkit.MaxMatch.from_tokenizer_json(tmp_path / "broken.json")
    with pytest.raises(ValueError, match="no 'model' object"):
        segkit.MaxMatch.from_tokenizer_json(write({"x": 1}))
    with pytest.raises(ValueError, match="not a character of the byte-level alphabet"):
        segkit.MaxMatch.from_tokenizer_json(write({"model": {"vocab": {"é€": 0}}, "decoder": {"type": "ByteLevel"}}))
    with pytest.raises(ValueError, match="expected str -> int"):
        segkit.MaxMatch.from_tokenizer_json(write({"model": {"vocab": {"a": "0"}}}))


def test_one_tokenizer_shared_by_threads():
    from threads import run_in_threads

    mm = segkit.MaxMatch([bytes([b]) for b in range(256)] + [b"ab", b"abab", "你好".encode(), b"\xe4\xbd"])
    texts = [("ab" * k + "你好" * (k % 5) + "x" * (k % 3)) for k in range(200)] + ["a" * 5000]
    vocab = mm.get_vocab()
    want = [[t for t, _, _ in greedy(vocab, s.encode())] for s in texts]
    errors = []

    def work(k: int) -> None:
        for _ in range(5):
            for s, w in zip(texts[k::4], want[k::4]):
                if mm.encode(s) != w or mm.encode_with_offsets(s)[0] != w:
                    errors.append(s)

    run_in_threads(work, 4)
    assert not errors
