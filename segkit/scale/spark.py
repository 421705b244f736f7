"""segkit on Spark: encode a string column with ``DataFrame.mapInArrow``.

Needs the extra ``segkit[spark]`` (``pyspark``, ``pyarrow``) and a Java
runtime for Spark (see ``docs/corpus_scale.rst``). Each Arrow record batch
Spark hands to a Python worker is encoded by one compiled call
(:meth:`segkit.WordPiece.encode_arrow`); the model travels inside the
function (Spark broadcasts large functions) and a Python worker process
unpickles it once (:mod:`segkit.scale.shipping`).

Spark has no fixed-size lists: ``offset_mapping`` is ``array<array<int>>``
(pairs) on the Spark side. The other columns are ``array<int>``.

Examples
--------
.. code-block:: python

    import segkit, segkit.scale.spark
    wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
    df = spark.read.parquet("texts.parquet")
    encoded = segkit.scale.spark.encode(df, wp, column="text", truncation=True, max_length=128)
    # or, spelled out:
    udf = segkit.scale.spark.encode_udf(wp, column="text", truncation=True, max_length=128)
    encoded = df.mapInArrow(udf, segkit.scale.spark.output_schema(df.schema, wp))
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pyarrow as pa

from .shipping import Shipped

__all__ = ["encode_udf", "output_schema", "encode"]


def _spark_type(t: "pa.DataType") -> "pa.DataType":
    """An Arrow type Spark reads: fixed-size lists become lists."""
    if pa.types.is_fixed_size_list(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_spark_type(t.value_type))
    return t


def _encoding_schema(tokenizer: Any, pairs: bool, encode_kwargs: dict) -> "pa.Schema":
    sample = pa.array(["a"])
    table = tokenizer.encode_arrow(sample, sample if pairs else None, **encode_kwargs)
    return pa.schema([(f.name, _spark_type(f.type)) for f in table.schema])


def _check_names(column: Any, pair_column: Any) -> None:
    if not isinstance(column, str):
        raise TypeError(f"column must be a column name as str, found {type(column).__name__} {column!r:.60}")
    if pair_column is not None and not isinstance(pair_column, str):
        raise TypeError(f"pair_column must be a column name as str or None, found {type(pair_column).__name__} "
                        f"{pair_column!r:.60}")


def encode_udf(tokenizer: Any, *, column: str = "text", pair_column: str | None = None,
               **encode_kwargs: Any) -> Callable[[Iterator["pa.RecordBatch"]], Iterator["pa.RecordBatch"]]:
    """A function for ``DataFrame.mapInArrow``: each record batch with the
    encoding of ``column`` (and ``pair_column``) appended as columns.

    ``encode_kwargs`` go to :meth:`segkit.WordPiece.encode_arrow`
    (truncation, padding, ``null="empty"``, ...). Pass
    :func:`output_schema` as the schema (or call :func:`encode`).
    """
    _check_names(column, pair_column)
    if not callable(getattr(tokenizer, "encode_arrow", None)):
        raise TypeError(f"tokenizer must be a segkit.WordPiece (anything with encode_arrow), "
                        f"found {type(tokenizer).__name__}")
    schema = _encoding_schema(tokenizer, pair_column is not None, encode_kwargs)
    shipped = Shipped(tokenizer)
    wanted = [column] if pair_column is None else [column, pair_column]

    def encode_batches(batches: Iterator["pa.RecordBatch"]) -> Iterator["pa.RecordBatch"]:
        model = shipped.model
        for batch in batches:
            names = batch.schema.names
            for name in wanted:
                if name not in names:
                    raise KeyError(f"column {name!r} is not in the batch, whose columns are {names}")
            taken = [n for n in schema.names if n in names]
            if taken:
                raise ValueError(f"the frame already has columns {taken}: rename them or drop them before encoding")
            texts = batch.column(column)
            pairs = None if pair_column is None else batch.column(pair_column)
            table = model.encode_arrow(texts, pairs, **encode_kwargs)
            arrays = list(batch.columns)
            for field in schema:
                arrays.append(table.column(field.name).cast(field.type).combine_chunks())
            yield pa.RecordBatch.from_arrays(arrays, names=names + schema.names)

    return encode_batches


def output_schema(input_schema: Any, tokenizer: Any, *, pair_column: str | None = None,
                  **encode_kwargs: Any):
    """The Spark schema of ``input_schema`` (a ``pyspark.sql.types.StructType``)
    with the encoding columns appended: ``array<int>`` each,
    ``offset_mapping`` ``array<array<int>>``."""
    from pyspark.sql.types import ArrayType, IntegerType, StructField, StructType

    fields = list(input_schema.fields)
    for f in _encoding_schema(tokenizer, pair_column is not None, encode_kwargs):
        depth = 0
        t = f.type
        while pa.types.is_list(t):
            depth += 1
            t = t.value_type
        st = IntegerType()
        for _ in range(depth):
            st = ArrayType(st, containsNull=False)
        fields.append(StructField(f.name, st, nullable=False))
    return StructType(fields)


def encode(frame: Any, tokenizer: Any, *, column: str = "text", pair_column: str | None = None,
           **encode_kwargs: Any):
    """``frame`` (a Spark DataFrame) with the encoding of ``column`` appended
    (``frame.mapInArrow(encode_udf(...), output_schema(...))``)."""
    if column not in frame.columns:
        raise KeyError(f"column {column!r} is not in the frame, whose columns are {frame.columns}")
    udf = encode_udf(tokenizer, column=column, pair_column=pair_column, **encode_kwargs)
    return frame.mapInArrow(udf, output_schema(frame.schema, tokenizer, pair_column=pair_column, **encode_kwargs))
