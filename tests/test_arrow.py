"""Arrow in and out (segkit.scale.arrow): ``BatchEncoding.to_arrow`` and
``WordPiece.encode_arrow`` against tables built from Python lists."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import segkit

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (segkit[arrow])")

INT_COLUMNS = ("input_ids", "token_type_ids", "attention_mask", "special_tokens_mask")


def reference_table(batch) -> "pa.Table":
    """The table to_arrow must give, made from each Encoding's Python lists."""
    encs = list(batch)
    cols = {
        "input_ids": [e.ids for e in encs],
        "token_type_ids": [e.type_ids for e in encs],
        "attention_mask": [e.attention_mask for e in encs],
        "special_tokens_mask": [e.special_tokens_mask for e in encs],
    }
    arrays = {k: pa.array(v, type=pa.list_(pa.int32())) for k, v in cols.items()}
    arrays["offset_mapping"] = pa.array(
        [[list(o) for o in e.offsets] for e in encs], type=pa.list_(pa.list_(pa.int32(), 2))
    )
    return pa.table(arrays)


@pytest.fixture(scope="module")
def sample_texts(multilingual_sample) -> list[str]:
    return [row["text"] for row in multilingual_sample]


@pytest.fixture(scope="module")
def uncased():
    return segkit.WordPiece.from_pretrained("bert-base-uncased")


@pytest.fixture(scope="module")
def tf_text(mbert_vocab_path):
    return segkit.WordPiece.bert(mbert_vocab_path, lowercase=False, flavour="tf_text", cjk="bert")


OPTION_SETS = [
    {},
    {"add_special_tokens": False},
    {"max_length": 12, "truncation": True},
    {"max_length": 16, "truncation": "only_first", "padding": "max_length"},
    {"padding": True, "pad_to_multiple_of": 8},
]


# ------------------------------------------------------------------ to_arrow
def test_to_arrow_equals_python_lists(uncased, sample_texts):
    for opts in OPTION_SETS:
        batch = uncased.encode_batch(sample_texts, **opts)
        assert batch.to_arrow().equals(reference_table(batch)), opts
    plain = segkit.WordPiece(segkit.models.bundled.bundled_vocabulary("bert-base-uncased"))
    batch = plain.encode_batch(sample_texts)
    assert batch.to_arrow().equals(reference_table(batch))
    assert batch.to_arrow(offsets=False).column_names == list(INT_COLUMNS)


def test_to_arrow_values_are_the_batch_rows(uncased, sample_texts):
    """Zero copy: the values buffers of the int columns are rows of the batch's array."""
    batch = uncased.encode_batch(sample_texts, padding=True)  # the full layout: every column is a row
    data = batch._data
    assert data.shape[0] >= len(INT_COLUMNS)
    table = batch.to_arrow()
    for i, name in enumerate(INT_COLUMNS):
        chunk = table.column(name).chunk(0)
        assert chunk.values.buffers()[1].address == data[i].ctypes.data, name
    # The short layout (BERT's template put by the matching pass): the ids are its first row.
    short = uncased.encode_batch(sample_texts)
    assert short._data.shape[0] == 4
    ids = short.to_arrow().column("input_ids").chunk(0)
    assert ids.values.buffers()[1].address == short._data[0].ctypes.data


def test_to_arrow_of_thread_parts(uncased, sample_texts):
    """A batch matched on several threads keeps one chunk per thread's part."""
    texts = sample_texts * 40  # enough characters to be split over threads
    batch = uncased.encode_batch(texts, add_special_tokens=False, num_threads=2)
    table = batch.to_arrow()
    if batch._parts is not None:
        assert table.column("input_ids").num_chunks == len(batch._parts)
    assert table.equals(reference_table(batch))
    assert table.num_rows == len(texts)


def test_to_arrow_empty_batch(uncased):
    table = uncased.encode_batch([]).to_arrow()
    assert table.num_rows == 0 and table.column_names == [*INT_COLUMNS, "offset_mapping"]


# -------------------------------------------------------------- encode_arrow
def test_encode_arrow_equals_encode_batch_on_sample(uncased, mbert, tf_text, sample_texts):
    arr = pa.array(sample_texts)
    for wp in (uncased, mbert, tf_text):
        for opts in OPTION_SETS:
            expected = wp.encode_batch(sample_texts, **opts).to_arrow()
            assert wp.encode_arrow(arr, **opts).equals(expected), (wp, opts)


def test_encode_arrow_tf_text_offsets_are_bytes(tf_text):
    table = tf_text.encode_arrow(pa.array(["é a"]), add_special_tokens=False)
    assert table.column("offset_mapping").to_pylist() == [[[0, 2], [3, 4]]]


def test_encode_arrow_pairs(uncased, sample_texts):
    firsts, seconds = sample_texts, sample_texts[::-1]
    pair_options = [o for o in OPTION_SETS if o.get("truncation") != "only_first"]
    pair_options.append({"max_length": 40, "truncation": "longest_first", "padding": "max_length"})
    for opts in pair_options:
        expected = uncased.encode_batch(list(zip(firsts, seconds)), **opts).to_arrow()
        got = uncased.encode_arrow(pa.array(firsts), pa.chunked_array([seconds[:7], seconds[7:]]), **opts)
        assert got.equals(expected), opts
    with pytest.raises(ValueError, match="3 texts but 2 pairs"):
        uncased.encode_arrow(pa.array(["a", "b", "c"]), pa.array(["a", "b"]))


def test_encode_arrow_input_kinds(uncased, sample_texts):
    """Sliced, chunked, large_string, pandas and list input give the same table."""
    texts = sample_texts[:120]
    expected = uncased.encode_batch(texts[5:100]).to_arrow()
    whole = pa.array(texts)
    kinds = {
        "slice": whole.slice(5, 95),
        "large slice": pa.array(texts, pa.large_string()).slice(5, 95),
        "chunked": pa.chunked_array([whole.slice(5, 10), whole.slice(15, 0), whole.slice(15, 85)]),
        "list": texts[5:100],
        "numpy": np.array(texts[5:100], dtype=object),
        "dictionary": pa.array(texts[5:100]).dictionary_encode(),
    }
    pd = pytest.importorskip("pandas", reason="pandas is not installed (the pandas input kinds)")
    kinds["pandas arrow"] = pd.Series(texts[5:100], dtype=pd.ArrowDtype(pa.string()))
    kinds["pandas object"] = pd.Series(texts[5:100])
    for name, col in kinds.items():
        assert uncased.encode_arrow(col).equals(expected), name


def test_encode_arrow_threads(uncased, sample_texts):
    texts = sample_texts * 40
    arr = pa.chunked_array([texts[:5000], texts[5000:]])
    for opts in ({"add_special_tokens": False}, {"max_length": 10, "truncation": True}):
        expected = uncased.encode_batch(texts, **opts).to_arrow()
        got = uncased.encode_arrow(arr, num_threads=2, **opts)
        assert got.combine_chunks().equals(expected.combine_chunks()), opts


def test_encode_arrow_nulls(uncased):
    arr = pa.chunked_array([["a b", "c"], ["d", None, "e"]])
    with pytest.raises(ValueError, match=r"texts: row 3 is null"):
        uncased.encode_arrow(arr)
    with pytest.raises(ValueError, match=r"pairs: row 1 is null"):
        uncased.encode_arrow(pa.array(["x", "y"]), pa.array(["x", None]))
    got = uncased.encode_arrow(arr, null="empty")
    assert got.equals(uncased.encode_batch(["a b", "c", "d", "", "e"]).to_arrow())
    with pytest.raises(ValueError, match="null must be"):
        uncased.encode_arrow(arr, null="skip")


def _string_array(data: bytes, offsets: list[int]):
    return pa.Array.from_buffers(
        pa.string(), len(offsets) - 1, [None, pa.py_buffer(np.array(offsets, np.int32)), pa.py_buffer(data)]
    )


@pytest.mark.parametrize(
    "data",
    [b"ok\xff", b"ok\xc3", b"ok\xc0\x80", b"ok\xe0\x80\x80", b"ok\xed\xa0\x80", b"ok\xf4\x90\x80\x80", b"ok\x80"],
)
def test_encode_arrow_invalid_utf8(uncased, data):
    arr = _string_array(b"fine" + data, [0, 4, 4 + len(data)])
    with pytest.raises(ValueError, match=r"texts: row 1: invalid UTF-8 at byte 2"):
        uncased.encode_arrow(arr)


def test_encode_arrow_bad_offsets(uncased):
    with pytest.raises(ValueError, match=r"row 1: its offsets \(3, 2\)"):
        uncased.encode_arrow(_string_array(b"abcdef", [0, 3, 2, 6]))
    with pytest.raises(ValueError, match="offsets"):  # (pyarrow itself may refuse to build this one)
        uncased.encode_arrow(_string_array(b"abcdef", [0, 9]))
    with pytest.raises(ValueError, match=r"texts: row 1: its offsets \(2, 1\)"):
        uncased.encode_arrow(_string_array(b"abcdef", [0, 1, 2, 1, 6]).slice(1))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=8), st.text(max_size=4).map(lambda t: t.encode("utf-8", "surrogatepass"))),
                max_size=6))
def test_utf8_decoder_against_python(pieces):
    """The compiled decoder accepts exactly what Python's strict UTF-8
    decoder accepts, with the same code points."""
    from segkit.scale.arrow import Utf8Rows

    data = b"".join(pieces)
    arr = _string_array(data, [0, len(data)])
    try:
        expected = [ord(c) for c in data.decode("utf-8")]
    except UnicodeDecodeError as e:
        with pytest.raises(ValueError, match=f"texts: row 0: invalid UTF-8 at byte {e.start}"):
            Utf8Rows([arr]).decode(0, 1)
        return
    cps, bounds = Utf8Rows([arr]).decode(0, 1)
    assert cps.tolist() == expected and bounds.tolist() == [0, len(expected)]


def test_encode_arrow_huge_offsets_allocate_nothing(uncased):
    """Offsets claiming 2 GB over a 6-byte buffer: an error, not a 8 GB allocation."""
    offsets = np.array([0, 3, (1 << 31) - 1, 6], np.int32)
    arr = pa.StringArray.from_buffers(3, pa.py_buffer(offsets), pa.py_buffer(b"abcdef"))
    with pytest.raises(ValueError, match=r"texts: row 1: its offsets \(3, 2147483647\)"):
        uncased.encode_arrow(arr.slice(0, 2))


def test_encode_arrow_rejects_other_types(uncased):
    with pytest.raises(TypeError, match="expected an Arrow string column, found type int64"):
        uncased.encode_arrow(pa.array([1, 2]))
    with pytest.raises(TypeError, match="single str"):
        uncased.encode_arrow("a text")
    with pytest.raises(TypeError, match="expected texts as str"):
        uncased.encode_arrow(["a", 3])


ASTRAL = st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF, exclude_categories=("Cs",))
TEXT = st.text(st.one_of(st.characters(exclude_categories=("Cs",)), ASTRAL, st.sampled_from(" ab,.中é")), max_size=30)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.one_of(TEXT, st.none()), max_size=12), cut=st.integers(0, 12), start=st.integers(0, 3),
       large=st.booleans())
def test_encode_arrow_random_strings(uncased, texts, cut, start, large):
    """Random texts (astral, empty, null) in two chunks of a sliced array."""
    kind = pa.large_string() if large else pa.string()
    whole = pa.array([None, "pad"] * start + texts, type=kind)
    cut = min(cut, len(texts))
    col = pa.chunked_array([whole.slice(2 * start, cut), whole.slice(2 * start + cut)], type=kind)
    expected = uncased.encode_batch(["" if t is None else t for t in texts]).to_arrow()
    assert uncased.encode_arrow(col, null="empty").combine_chunks().equals(expected.combine_chunks())
    if None in texts:
        with pytest.raises(ValueError, match=f"texts: row {texts.index(None)} is null"):
            uncased.encode_arrow(col)


def test_encode_arrow_whole_corpus(shared_data, mbert):
    with (shared_data / "corpus" / "multilingual.jsonl").open(encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    expected = mbert.encode_batch(texts).to_arrow()
    got = mbert.encode_arrow(pa.chunked_array([texts[:30000], texts[30000:]], type=pa.large_string()))
    assert got.equals(expected)
