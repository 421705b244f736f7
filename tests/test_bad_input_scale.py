"""Bad arguments to the corpus-scale entry points fail at once with an
error naming what was expected and what was found."""

from __future__ import annotations

import pytest

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (segkit.scale.spark needs pyarrow (segkit[spark]))")

import segkit  # noqa: E402
import segkit.scale.spark as ss  # noqa: E402

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##b"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"column": 3}, "column must be a column name as str, found int 3"),
        ({"pair_column": ["b"]}, r"pair_column must be a column name as str or None, found list \['b'\]"),
    ],
)
def test_encode_udf_rejects_column_names_that_are_not_str(kwargs, message):
    # Before: accepted, and the first record batch failed on a worker.
    with pytest.raises(TypeError, match=message):
        ss.encode_udf(segkit.WordPiece(VOCAB), **kwargs)


def test_encode_udf_names_a_missing_pair_column():
    udf = ss.encode_udf(segkit.WordPiece(VOCAB), column="a", pair_column="b")
    batch = pa.RecordBatch.from_pydict({"a": ["ab"]})
    with pytest.raises(KeyError, match=r"column 'b' is not in the batch, whose columns are \['a'\]"):
        list(udf(iter([batch])))


def test_encode_udf_still_encodes_pairs():
    udf = ss.encode_udf(segkit.WordPiece(VOCAB), column="a", pair_column="b", add_special_tokens=False)
    (out,) = udf(iter([pa.RecordBatch.from_pydict({"a": ["ab"], "b": ["a"]})]))
    assert out.column("input_ids").to_pylist() == [[4, 5, 4]]
    assert out.column("token_type_ids").to_pylist() == [[0, 0, 1]]


def test_encode_udf_rejects_a_tokenizer_without_encode_arrow():
    with pytest.raises(TypeError, match="tokenizer must be a segkit.WordPiece .*found str"):
        ss.encode_udf("bert-base-uncased")


@pytest.mark.parametrize("entry, method", [("encode", "tokenizer must be a segkit.WordPiece"),
                                           ("cut", "segmenter must be a segkit_cjk.ChineseMaxMatch")])
def test_dask_entry_points_reject_a_model_of_the_wrong_kind(entry, method):
    pytest.importorskip("dask.dataframe", reason="dask.dataframe is not installed (segkit.scale.dask needs dask[dataframe])")
    pytest.importorskip("distributed", reason="distributed is not installed (segkit.scale.dask needs distributed)")
    import dask.dataframe as dd
    import pandas as pd

    import segkit.scale.dask as sd

    frame = dd.from_pandas(pd.DataFrame({"text": ["ab"]}), npartitions=1)
    with pytest.raises(TypeError, match=f"{method} .*found object"):
        getattr(sd, entry)(frame, object())


def test_arrow_entry_points_refuse_what_is_not_a_column():
    # A dict was read as its keys, an int failed inside list(); both are
    # now a TypeError naming what was expected and what was found.
    pytest.importorskip("pyarrow", reason="pyarrow is not installed (the Arrow entry points need pyarrow)")
    import segkit
    from segkit_cjk import ChineseMaxMatch

    wp = segkit.WordPiece(["[UNK]", "a"])
    seg = ChineseMaxMatch()
    for bad in ({"a": 1}, 5, None):
        for call in (lambda: wp.encode_arrow(bad), lambda: seg.cut_arrow(bad), lambda: seg.tokenize_arrow(bad)):
            with pytest.raises(TypeError, match="expected a pyarrow string array"):
                call()
