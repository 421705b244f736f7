"""Arrow in and out for :class:`segkit.MaxMatch` (pyarrow imported on use).

A string or binary column's values buffer already holds the bytes the byte
alphabet matches: each chunk is matched where it lies, its offsets (checked:
in order, inside the buffer) being the text boundaries.  Character
offsets of string columns come from the same bytes
(:func:`segkit.engine.utf8.to_char_offsets`).  ``unit="char"`` columns are
decoded to ``str`` first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...engine import utf8

_NULL_MODES = ("error", "empty")


def _pa():
    try:
        import pyarrow
    except ImportError:
        raise ImportError("Arrow input and output need pyarrow: pip install 'segkit[arrow]'") from None
    return pyarrow


def _chunks(pa, texts: Any) -> list:
    if isinstance(texts, (str, bytes)):
        raise TypeError(f"texts: expected a column of texts, found a single {type(texts).__name__}")
    if not isinstance(texts, (pa.Array, pa.ChunkedArray)):
        try:
            texts = pa.array(getattr(texts, "array", texts) if type(texts).__module__.startswith("pandas")
                             else list(texts))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as e:
            raise TypeError(f"texts: expected an Arrow string or binary column or a sequence of str/bytes ({e})") from None
    chunks = texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]
    out = []
    for arr in chunks:
        t = arr.type
        if pa.types.is_null(t):
            arr = arr.cast(pa.string())
        elif pa.types.is_dictionary(t) or getattr(pa.types, "is_string_view", lambda _: False)(t) \
                or getattr(pa.types, "is_binary_view", lambda _: False)(t):
            arr = arr.cast(pa.large_binary() if pa.types.is_binary(getattr(t, "value_type", t)) else pa.large_string())
        elif not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
                  or pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type)):
            raise TypeError(f"texts: expected an Arrow string or binary column, found type {t}")
        out.append(arr)
    return out


def _rows(pa, arr, first_row: int, null: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """``(data, bounds, is_string)`` of one chunk: its bytes and row
    boundaries (from 0), nulls read as empty texts."""
    n = len(arr)
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    is_string = pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)
    validity, obuf, dbuf = arr.buffers()[:3]
    width = 8 if large else 4
    if obuf is None or obuf.size < (arr.offset + n + 1) * width:
        raise ValueError(f"texts: the offsets buffer of a chunk is too short for its {n} rows")
    offs = np.frombuffer(obuf, dtype=np.int64 if large else np.int32, count=arr.offset + n + 1)[arr.offset :]
    data = np.frombuffer(dbuf, dtype=np.uint8) if dbuf is not None and dbuf.size else np.zeros(0, np.uint8)
    offs = offs.astype(np.int64)
    if (np.diff(offs) < 0).any() or offs[0] < 0 or offs[-1] > data.size:
        raise ValueError(f"texts: rows {first_row}..{first_row + n - 1}: offsets out of order or outside the "
                         f"values buffer of {data.size} bytes")
    if validity is not None and arr.null_count:
        valid = arr.is_valid().to_numpy(zero_copy_only=False)
        if null == "error":
            raise ValueError(f"texts: row {first_row + int(np.argmin(valid))} is null; pass null='empty' to read "
                             "nulls as empty texts")
        lengths = np.where(valid, np.diff(offs), 0)
        if (lengths != np.diff(offs)).any():  # null slots that span bytes: gather the rest
            keep = np.repeat(valid, np.diff(offs))
            data = data[offs[0] : offs[-1]][keep]
            bounds = np.concatenate([[0], np.cumsum(lengths)])
            return data, bounds, is_string
    return data[offs[0] : offs[-1]], offs - offs[0], is_string


def encode_arrow(tok, texts: Any, *, num_threads: int | None = None, null: str = "error", offsets: bool = False):
    """See :meth:`segkit.MaxMatch.encode_arrow`."""
    pa = _pa()
    if null not in _NULL_MODES:
        raise ValueError(f"null must be 'error' or 'empty', found {null!r}")
    chunks = _chunks(pa, texts)
    columns: dict[str, list] = {"input_ids": []}
    if offsets:
        columns["offset_mapping"] = []
    first = 0
    for arr in chunks:
        data, bounds, is_string = _rows(pa, arr, first, null)
        if tok.unit == "char":
            strs = arr.cast(pa.large_string()).fill_null("").to_pylist() if arr.null_count else arr.to_pylist()
            if not is_string:
                raise TypeError("texts: unit='char' matches characters: expected a string column, found binary")
            out, rows = tok._batch(strs, num_threads, offsets=True)
        else:
            out, rows = _match(tok, data, bounds, num_threads, offsets)
            if offsets and is_string:
                utf8.to_char_offsets(data, bounds, out[1], out[2], rows)
        if tok._check_unknown and out.shape[1] and int(out[0].min()) == -1:
            q = int(np.argmax(out[0] == -1))
            t = int(np.searchsorted(rows, q, side="right")) - 1
            text = data[bounds[t] : bounds[t + 1]].tobytes()
            tok._raise_unknown(text, first + t)
        columns["input_ids"].append(_list_of(pa, rows, _int32(pa, out[0])))
        if offsets:
            pairs = np.stack([out[1], out[2]], axis=1).ravel()
            inner = pa.FixedSizeListArray.from_arrays(_int32(pa, pairs), 2)
            columns["offset_mapping"].append(_list_of(pa, rows, inner))
        first += len(arr)
    names = list(columns)
    if len(chunks) == 1:
        return pa.Table.from_arrays([columns[k][0] for k in names], names=names)
    if not chunks:
        empty = {"input_ids": pa.array([], pa.list_(pa.int32()))}
        if offsets:
            empty["offset_mapping"] = pa.array([], pa.list_(pa.list_(pa.int32(), 2)))
        return pa.Table.from_arrays(list(empty.values()), names=list(empty))
    return pa.Table.from_arrays([pa.chunked_array(columns[k]) for k in names], names=names)


def _match(tok, data: np.ndarray, bounds: np.ndarray, num_threads, offsets: bool):
    """(rows of ids or ids/starts/ends, row splits) of the byte texts in
    ``data``, on up to ``num_threads`` threads."""
    from ...runtime.threads import concat_segments, map_code_point_chunks, resolve_threads

    a = tok._automaton

    def run(d, b):
        out, rows = a.segment_code_points(np.ascontiguousarray(d), b, offsets=offsets, pretokenize=False)
        return (out[:3] if offsets else out), rows

    return concat_segments(map_code_point_chunks(run, data, bounds, num_threads), resolve_threads(num_threads))


def _int32(pa, values: np.ndarray):
    values = np.ascontiguousarray(values, dtype=np.int32)
    return pa.Array.from_buffers(pa.int32(), values.size, [None, pa.py_buffer(values)])


def _list_of(pa, splits: np.ndarray, values):
    n = splits.size - 1
    if int(splits[-1]) < 2**31:
        return pa.Array.from_buffers(pa.list_(values.type), n, [None, pa.py_buffer(splits.astype(np.int32))],
                                     children=[values])
    return pa.Array.from_buffers(pa.large_list(values.type), n, [None, pa.py_buffer(np.ascontiguousarray(splits))],
                                 children=[values])
