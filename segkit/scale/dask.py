"""segkit on Dask: encode and segment DataFrame columns, train vocabularies.

Needs the extra ``segkit[dask]`` (``dask[dataframe]``, ``distributed``,
``pyarrow``); nothing else in segkit imports Dask.

:func:`encode` and :func:`cut` add Arrow-backed columns to a Dask DataFrame,
one compiled call per partition over the partition's Arrow column (no Python
object per token). They work with any Dask scheduler; with a
``distributed`` client the model is scattered to every worker once
(``broadcast=True``) instead of travelling with every partition. On any
scheduler a worker process unpickles a given model once: models are cached
per process under the checksum of their pickled form.

:func:`train_bpe` and :func:`train_wordpiece` count pre-tokens or words on the
workers (one task per file or per byte range of a file), add the counts up in
a tree of tasks, and merge on the client; the result is the one
:func:`segkit.train_bpe` / :func:`segkit.train_wordpiece` give on the same
files.

>>> import dask.dataframe as dd, pandas as pd, segkit
>>> import segkit.scale.dask as sd
>>> wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
>>> frame = dd.from_pandas(pd.DataFrame({"text": ["Hello world!", "Dask it"]}), npartitions=2)
>>> out = sd.encode(frame, wp).compute(scheduler="sync")
>>> out["input_ids"].tolist()
[[101, 7592, 2088, 999, 102], [101, 8695, 2243, 2009, 102]]
>>> str(out["input_ids"].dtype)
'list<item: int32>[pyarrow]'
"""

from __future__ import annotations

from functools import partial
from typing import Any, Sequence

import dask
import dask.dataframe as dd
import pandas as pd
import pyarrow as pa

from .shipping import _LOADS, Shipped as _Shipped  # noqa: F401  (_LOADS: for tests)
from ..runtime import interrupts
from ..training import ranges as _ranges

__all__ = ["encode", "cut", "train_bpe", "train_wordpiece"]


# ------------------------------------------------------------ model shipping
def _client():
    """The distributed client computations go to, or None."""
    try:
        from distributed import default_client
    except ImportError:
        return None
    try:
        return default_client()
    except ValueError:
        return None


def _ship(model: Any):
    """What a partition task takes as the model: a future of the model
    scattered to every worker, or (other schedulers) the model itself."""
    shipped = _Shipped(model)
    client = _client()
    if client is None:
        return shipped
    return client.scatter(shipped, broadcast=True, hash=True)


# ------------------------------------------------------------ encode / cut
def _arrow_column(series: pd.Series, name: str):
    arr = series.array
    if hasattr(arr, "__arrow_array__"):
        return arr.__arrow_array__()
    try:
        return pa.array(series, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise TypeError(f"column {name!r} must hold strings, found values of dtype {series.dtype}: {e}") from None


def _with_columns(part: pd.DataFrame, table) -> pd.DataFrame:
    out = part.copy(deep=False)
    for name, col in zip(table.column_names, table.columns):
        out[name] = pd.Series(pd.arrays.ArrowExtensionArray(col), index=part.index, name=name)
    return out


def _check_free(frame_columns, new: Sequence[str]) -> None:
    taken = [c for c in new if c in frame_columns]
    if taken:
        raise ValueError(f"the frame already has columns {taken}: rename them or drop them before encoding")


def _encode_partition(part: pd.DataFrame, shipped: _Shipped, column: str, pair_column, kwargs: dict) -> pd.DataFrame:
    texts = _arrow_column(part[column], column)
    pairs = None if pair_column is None else _arrow_column(part[pair_column], pair_column)
    return _with_columns(part, shipped.model.encode_arrow(texts, pairs, **kwargs))


def _cut_partition(part: pd.DataFrame, shipped: _Shipped, column: str, out: str, kwargs: dict) -> pd.DataFrame:
    tokens = shipped.model.cut_arrow(_arrow_column(part[column], column), **kwargs)
    return _with_columns(part, pa.table({out: tokens}))


def _empty_with(frame, schema) -> pd.DataFrame:
    """The frame's meta with empty Arrow columns of ``schema`` added."""
    _check_free(frame.columns, schema.names)
    meta = frame._meta.copy(deep=False)
    for field in schema:
        meta[field.name] = pd.Series([], dtype=pd.ArrowDtype(field.type), index=meta.index)
    return meta


def _check_column(frame, column: str, what: str = "column") -> None:
    if not isinstance(frame, dd.DataFrame):
        raise TypeError(f"frame must be a dask.dataframe.DataFrame, found {type(frame).__name__}")
    if column not in frame.columns:
        raise KeyError(f"{what} {column!r} is not in the frame, whose columns are {list(frame.columns)}")


def _check_model(model: Any, method: str, what: str, expected: str) -> None:
    if not callable(getattr(model, method, None)):
        raise TypeError(f"{what} must be {expected} (anything with {method}), found {type(model).__name__}")


def encode(frame: dd.DataFrame, tokenizer: Any, *, column: str = "text", pair_column: str | None = None,
           **encode_kwargs: Any) -> dd.DataFrame:
    """``frame`` with the encoding of ``frame[column]`` added as columns.

    Parameters
    ----------
    frame
        A Dask DataFrame with a column of strings (object, ``string`` or
        Arrow dtype).
    tokenizer
        A :class:`segkit.WordPiece` (anything with ``encode_arrow``).
    column, pair_column
        The texts, and optionally the second sequences of pairs.
    **encode_kwargs
        Passed to ``tokenizer.encode_arrow`` (``add_special_tokens``,
        truncation, padding, ``null=...``).

    Returns
    -------
    dask.dataframe.DataFrame
        Lazy; the columns of :meth:`segkit.WordPiece.encode_arrow`
        (``input_ids``, ``token_type_ids``, ``attention_mask``,
        ``special_tokens_mask``, ``offset_mapping``) as pandas
        ``ArrowDtype`` columns after the frame's own. Write it with
        ``to_parquet`` to keep it Arrow end to end.
    """
    _check_column(frame, column)
    if pair_column is not None:
        _check_column(frame, pair_column, "pair_column")
    _check_model(tokenizer, "encode_arrow", "tokenizer", "a segkit.WordPiece")
    sample = pa.array(["a"])
    schema = tokenizer.encode_arrow(sample, None if pair_column is None else sample, **encode_kwargs).schema
    meta = _empty_with(frame, schema)  # (bad settings fail here, before the model is shipped)
    shipped = _ship(tokenizer)
    return frame.map_partitions(_encode_partition, shipped, column, pair_column, encode_kwargs, meta=meta,
                                align_dataframes=False)


def cut(frame: dd.DataFrame, segmenter: Any, *, column: str = "text", out: str = "tokens",
        **cut_kwargs: Any) -> dd.DataFrame:
    """``frame`` with the words of ``frame[column]`` added as column ``out``.

    ``segmenter`` is a :class:`segkit_cjk.ChineseMaxMatch` (anything with
    ``cut_arrow``); the new column is ``list<string>`` (pandas
    ``ArrowDtype``).
    """
    _check_column(frame, column)
    _check_free(frame.columns, [out])
    _check_model(segmenter, "cut_arrow", "segmenter", "a segkit_cjk.ChineseMaxMatch")
    meta = _empty_with(frame, pa.schema([(out, segmenter.cut_arrow(pa.array(["a"]), **cut_kwargs).type)]))
    shipped = _ship(segmenter)
    return frame.map_partitions(_cut_partition, shipped, column, out, cut_kwargs, meta=meta, align_dataframes=False)


# ------------------------------------------------------------ training
def _tree(parts: list, combine, fan_in: int = 8):
    """A delayed sum of ``parts``: ``combine`` over groups of ``fan_in``."""
    while len(parts) > 1:
        parts = [dask.delayed(combine, pure=False)(parts[i : i + fan_in]) for i in range(0, len(parts), fan_in)]
    return parts[0]


@interrupts.interruptible()
def train_bpe(paths, vocab_size: int, special_tokens: Sequence[str] = (), *, pattern: str | None = None,
              errors: str = "strict", split_bytes: int | None = _ranges.SPLIT_BYTES,
              show_progress: bool | None = None):
    """:func:`segkit.train_bpe` with the counting on Dask workers.

    Each file (a path or a list of paths) is counted in byte ranges of about
    ``split_bytes`` (None: one task per file; always so with a custom
    ``pattern``), one task each; the counts are added up on the workers and
    the merges run here. The result equals ``segkit.train_bpe(paths, ...)``
    (as a list of :class:`pathlib.Path`, each file one document).
    """
    from ..training.bpe import _show_progress, train_bpe as local_train
    from ..training.corpus import check_special_tokens

    specials = check_special_tokens(special_tokens)
    local_train([], vocab_size, specials, pattern=pattern, errors=errors, show_progress=False)  # checks the settings
    plan = _ranges.plan_ranges(paths, split_bytes if pattern is None else None)
    parts = [dask.delayed(_ranges.count_bpe_range, pure=False)(p, a, b, specials, pattern, errors) for p, a, b in plan]
    (pieces,) = dask.compute(_tree(parts, _ranges.combine_bpe))
    return _ranges.train_bpe_from_pieces(pieces, vocab_size, specials, pattern, _show_progress(show_progress))


@interrupts.interruptible()
def train_wordpiece(paths, vocab_size: int = 30522, *, lowercase: bool = True,
                    special_tokens: Sequence[str] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
                    min_frequency: int = 0, limit_alphabet: int | None = None, suffix_indicator: str = "##",
                    split_bytes: int | None = _ranges.SPLIT_BYTES, show_progress: bool | None = None):
    """:func:`segkit.train_wordpiece` with the word counting on Dask workers
    (one task per file or byte range of about ``split_bytes``); the merges
    run here. Returns the :class:`segkit.WordPiece` that
    ``segkit.train_wordpiece(paths, ...)`` returns."""
    from ..training.bpe import _show_progress
    from ..training.wordpiece import _check_args, _wordpiece_from_counts

    specials = _check_args(vocab_size, special_tokens, min_frequency, limit_alphabet, suffix_indicator, None)
    plan = _ranges.plan_ranges(paths, split_bytes)
    lc = bool(lowercase)
    parts = [dask.delayed(_ranges.count_wordpiece_range, pure=False)(p, a, b, lc) for p, a, b in plan]
    (counts,) = dask.compute(_tree(parts, partial(_ranges.combine_wordpiece, lowercase=lc)))
    return _wordpiece_from_counts(*counts, vocab_size, lc, specials, min_frequency, limit_alphabet,
                                  suffix_indicator, _show_progress(show_progress))
