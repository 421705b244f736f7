"""HF datasets: Dataset.map with WordPiece.as_datasets_map, against
encode_batch and against the same map with HF's fast tokenizer."""

from __future__ import annotations

import pytest

import segkit

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (segkit[arrow])")
datasets = pytest.importorskip("datasets", reason="HF datasets is not installed (pip install datasets)")

COLUMNS = ["input_ids", "token_type_ids", "attention_mask", "special_tokens_mask", "offset_mapping"]


@pytest.fixture(scope="module", autouse=True)
def _quiet():
    datasets.disable_progress_bars()
    yield
    datasets.enable_progress_bars()


@pytest.fixture(scope="module")
def uncased():
    return segkit.WordPiece.from_pretrained("bert-base-uncased")


@pytest.fixture(scope="module")
def dataset(multilingual_sample):
    texts = [row["text"] for row in multilingual_sample]
    return datasets.Dataset.from_dict({"text": texts, "pair": texts[::-1], "n": list(range(len(texts)))})


def test_map_adds_encode_batch_columns(uncased, dataset):
    texts = dataset["text"][:]
    expected = uncased.encode_batch(texts, max_length=32, truncation=True).to_arrow()
    for ds in (dataset, dataset.with_format("arrow")):
        out = ds.map(uncased.as_datasets_map("text", max_length=32, truncation=True), batched=True, batch_size=64)
        assert out.column_names == ["text", "pair", "n", *COLUMNS]
        table = out.with_format("arrow")[:]
        for name in COLUMNS:
            assert table.column(name).to_pylist() == expected.column(name).to_pylist(), name
        assert table.column("n").to_pylist() == list(range(len(texts)))


def test_map_pairs_and_remove_columns(uncased, dataset):
    texts, pairs = dataset["text"][:], dataset["pair"][:]
    fn = uncased.as_datasets_map("text", "pair", remove_columns=["text", "pair"], offsets=False, padding="max_length",
                                 max_length=48, truncation=True)
    out = dataset.map(fn, batched=True, batch_size=100)
    assert out.column_names == ["n", *COLUMNS[:4]]
    expected = uncased.encode_batch(list(zip(texts, pairs)), padding="max_length", max_length=48, truncation=True)
    assert out["input_ids"][:] == expected.ids


def test_map_function_on_a_plain_dict(uncased):
    """A batch that is neither datasets' nor a table (another caller): lists out."""
    fn = uncased.as_datasets_map("text")
    out = fn({"text": ["a b", "c"]})
    assert out["input_ids"] == uncased.encode_batch(["a b", "c"]).ids
    with pytest.raises(TypeError, match="expected a datasets batch or a pyarrow.Table"):
        fn(["a b"])


def test_map_null_rows(uncased):
    ds = datasets.Dataset.from_dict({"text": ["a b", None]})
    with pytest.raises(ValueError, match="texts: row 1 is null"):
        ds.map(uncased.as_datasets_map("text"), batched=True)
    out = ds.map(uncased.as_datasets_map("text", null="empty"), batched=True)
    assert out["input_ids"][1] == [101, 102]


def test_map_equals_hf_fast_tokenizer_map(uncased, dataset, tmp_path):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    path = tmp_path / "tokenizer.json"
    uncased.save_tokenizer_json(path)
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))

    def hf_map(batch):
        return hf(batch["text"], return_special_tokens_mask=True, return_offsets_mapping=True, return_token_type_ids=True,
                  return_attention_mask=True,
                  max_length=40, truncation=True)

    ours = dataset.map(uncased.as_datasets_map("text", max_length=40, truncation=True), batched=True)
    theirs = dataset.map(hf_map, batched=True)
    for name in COLUMNS:
        a = ours.with_format("arrow")[:].column(name).to_pylist()
        b = theirs.with_format("arrow")[:].column(name).to_pylist()
        assert a == [[list(x) for x in row] for row in b] if name == "offset_mapping" else a == b, name
