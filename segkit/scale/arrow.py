"""Apache Arrow in and out: string columns in, encoding columns out.

Everything here needs ``pyarrow`` (``pip install "segkit[arrow]"``), which
is imported only when one of these functions runs.

In: :class:`Utf8Rows` reads the buffers of a pyarrow ``StringArray`` or
``LargeStringArray`` (sliced or not, or each chunk of a ``ChunkedArray``)
where they are: a compiled pass (:func:`_decode_rows`) checks the offsets,
validates the UTF-8 and writes the code points the engine matches, a block
of rows at a time.  No Python ``str`` is made per row.

Out: :func:`batch_to_arrow` builds a ``pyarrow.Table`` from the flat arrays
of a :class:`~segkit.results.encoding.BatchEncoding`.  What is copied:

* the values of ``input_ids`` (and, for batches made with a template,
  truncation or padding, ``token_type_ids``, ``attention_mask``,
  ``special_tokens_mask``) are rows of the batch's (7, n) int32 array:
  Arrow's values buffers *are* those rows, nothing is copied;
* plain batches (no template, truncation or padding) hold no type ids or
  masks: one array of zeros (shared by both zero columns) and one of ones
  are made;
* the list offsets are the batch's int64 row splits cast to int32 (one
  copy of ``texts + 1`` integers; ``large_list`` with the int64 splits as
  they are when a batch has 2**31 tokens or more);
* ``offset_mapping`` interleaves starts and ends (one copy of 2 int32 per
  token);
* a batch matched by several threads stays in its per-thread parts: the
  table's columns are chunked arrays with one chunk per part (no join).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from ..runtime.jit import kernel

from ..engine.kernels import token_rows
from ..runtime.interrupts import bind, checkpoint
from ..runtime.surrogates import check_texts

#: Rows decoded and matched at a time: a block's code points stay in cache
#: for the matching (512 measured at least as fast as 256..4096 on the corpus).
BLOCK_ROWS = 512

_NULL_MODES = ("error", "empty")

_INT32_MAX = (1 << 31) - 1


def _pa():
    try:
        import pyarrow
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError('this needs pyarrow: pip install "segkit[arrow]" (or pip install pyarrow)') from None
    return pyarrow


# ----------------------------------------------------------------- input
@kernel
def _decode_rows(data, offs, valid, r0, r1, cps, k, bounds, j):
    """Code points of rows ``r0:r1`` of one string array, appended to
    ``cps`` from ``k`` on; ``bounds[j + 1 + i]`` gets the end of row
    ``r0 + i``.  ``data``: the UTF-8 values buffer (uint8), ``offs``: the
    row offsets into it (``offs[r]:offs[r + 1]`` is row ``r``), ``valid``:
    empty, or 0 for the rows to read as empty (nulls).  Returns ``(k, -1,
    0)``, or ``(k, row, kind)`` at the first bad row: kind 1 for offsets
    that do not fit the buffer, 2 for invalid UTF-8 (overlong forms,
    surrogates, code points beyond U+10FFFF and truncated sequences
    included), with ``k`` the position of the bad byte in the row."""
    nd = data.size
    cap = cps.size
    check_valid = valid.size > 0
    for r in range(r0, r1):
        a = np.int64(offs[r])
        b = np.int64(offs[r + 1])
        if a < 0 or b < a or b > nd or k + (b - a) > cap:
            return k, r, 1
        if check_valid and valid[r] == 0:
            bounds[j + 1 + r - r0] = k
            continue
        # (one branch per character, its bytes checked in the condition:
        # measured faster than decoding the length first, and than reading
        # 8 ASCII bytes at a time, on the multilingual corpus)
        i = a
        while i < b:
            c = np.uint32(data[i])
            if c < 0x80:
                cps[k] = c
                k += 1
                i += 1
            elif c >= 0xC2 and c < 0xE0 and i + 1 < b and (data[i + 1] & 0xC0) == 0x80:
                cps[k] = ((c & 0x1F) << 6) | (np.uint32(data[i + 1]) & 0x3F)
                k += 1
                i += 2
            elif c >= 0xE0 and c < 0xF0 and i + 2 < b and (data[i + 1] & 0xC0) == 0x80 and (data[i + 2] & 0xC0) == 0x80:
                x = ((c & 0x0F) << 12) | ((np.uint32(data[i + 1]) & 0x3F) << 6) | (np.uint32(data[i + 2]) & 0x3F)
                if x < 0x800 or (x >= 0xD800 and x <= 0xDFFF):
                    return i - a, r, 2
                cps[k] = x
                k += 1
                i += 3
            elif (c >= 0xF0 and c < 0xF5 and i + 3 < b and (data[i + 1] & 0xC0) == 0x80
                  and (data[i + 2] & 0xC0) == 0x80 and (data[i + 3] & 0xC0) == 0x80):
                x = (((c & 0x07) << 18) | ((np.uint32(data[i + 1]) & 0x3F) << 12)
                     | ((np.uint32(data[i + 2]) & 0x3F) << 6) | (np.uint32(data[i + 3]) & 0x3F))
                if x < 0x10000 or x > 0x10FFFF:
                    return i - a, r, 2
                cps[k] = x
                k += 1
                i += 4
            else:
                return i - a, r, 2
        bounds[j + 1 + r - r0] = k
    return k, -1, 0


def readonly(a: np.ndarray) -> np.ndarray:
    """A read-only view of ``a``.  Arrow's buffers come out writable, the
    UTF-8 of a str (``np.frombuffer(bytes)``) read-only: Numba compiles a
    kernel once per such flag, so the Arrow paths hand the kernels read-only
    views and reuse the list paths' compiled kernels instead of compiling a
    second specialization of each on their first call."""
    v = a.view()
    v.flags.writeable = False
    return v


class Utf8Rows:
    """The rows of Arrow string arrays, read where they are.

    Parameters
    ----------
    chunks : list
        pyarrow ``StringArray`` / ``LargeStringArray`` chunks, in row order.
    what : str
        How error messages name the column (``"texts"``, ``"pairs"``).
    null : str
        ``"error"``: a null row raises ValueError naming it; ``"empty"``: it
        reads as an empty text.
    """

    def __init__(self, chunks: list, what: str = "texts", null: str = "error") -> None:
        if null not in _NULL_MODES:
            raise ValueError(f"null must be 'error' or 'empty', found {null!r}")
        self.what = what
        self._chunks = []  # (data uint8, offsets (sliced to the chunk), valid uint8 or empty)
        starts = [0]
        for arr in chunks:
            n = len(arr)
            if n == 0:
                continue
            validity, obuf, dbuf = arr.buffers()[:3]
            width = 8 if arr.type.id == _pa().large_string().id else 4
            odt = np.int64 if width == 8 else np.int32
            if obuf is None or obuf.size < (arr.offset + n + 1) * width:
                raise ValueError(f"{what}: the offsets buffer of a chunk holds "
                                 f"{0 if obuf is None else obuf.size // width} offsets, "
                                 f"{arr.offset + n + 1} expected")
            offs = np.frombuffer(obuf, dtype=odt, count=arr.offset + n + 1)[arr.offset :]
            data = readonly(np.frombuffer(dbuf, dtype=np.uint8) if dbuf is not None and dbuf.size
                            else np.zeros(0, np.uint8))
            offs = readonly(offs)
            valid = np.zeros(0, np.uint8)
            if validity is not None and arr.null_count:
                mask = arr.is_valid().to_numpy(zero_copy_only=False)
                if null == "error":
                    row = starts[-1] + int(np.argmin(mask))
                    raise ValueError(f"{what}: row {row} is null; pass null='empty' to read nulls as empty texts")
                valid = mask.view(np.uint8)
            self._chunks.append((data, offs, valid))
            starts.append(starts[-1] + n)
        self._starts = np.array(starts, dtype=np.int64)
        self.n = int(starts[-1])

    @classmethod
    def of(cls, texts: Any, what: str = "texts", null: str = "error") -> "Utf8Rows":
        """Rows of a pyarrow array or chunked array of strings, a pandas
        Series (Arrow-backed ones are read without conversion) or, for
        convenience, a sequence of str (converted by pyarrow); rows given as
        a ``Utf8Rows`` are returned as they are."""
        if isinstance(texts, Utf8Rows):
            return texts
        return cls(string_chunks(texts, what), what, null)

    @classmethod
    def from_buffers(cls, data: np.ndarray, offsets: np.ndarray, valid: np.ndarray | None = None,
                     what: str = "texts") -> "Utf8Rows":
        """Rows of one Arrow-style string chunk given as NumPy arrays: the
        UTF-8 ``data`` (uint8), ``offsets`` (int32 or int64, rows + 1) and
        ``valid`` (uint8 per row, 0 where a row is null, read as empty).
        ``segkit precompile`` drives the Arrow paths' kernels with these
        where pyarrow is not installed (a wheel's build).

        >>> import numpy as np
        >>> rows = Utf8Rows.from_buffers(np.frombuffer(b"abc", np.uint8), np.array([0, 1, 3], np.int32))
        >>> cps, bounds = rows.decode(0, 2)
        >>> cps.tolist(), bounds.tolist()
        ([97, 98, 99], [0, 1, 3])
        """
        offs = np.asarray(offsets)
        if offs.dtype not in (np.int32, np.int64) or offs.ndim != 1 or offs.size < 1:
            raise ValueError(f"offsets: expected a 1-d int32 or int64 array, found {offs.dtype} of shape {offs.shape}")
        obj = cls.__new__(cls)
        obj.what = what
        n = offs.size - 1
        mask = np.zeros(0, np.uint8) if valid is None else np.ascontiguousarray(valid, dtype=np.uint8)
        if mask.size not in (0, n):
            raise ValueError(f"valid: expected {n} values (one per row), found {mask.size}")
        obj._chunks = [(readonly(np.ascontiguousarray(data, dtype=np.uint8)), readonly(offs), mask)] if n else []
        obj._starts = np.array([0, n] if n else [0], dtype=np.int64)
        obj.n = n
        return obj

    def __len__(self) -> int:
        return self.n

    def concat(self, other: "Utf8Rows") -> "Utf8Rows":
        """These rows, then ``other``'s (error messages name each by its own column)."""
        obj = Utf8Rows.__new__(Utf8Rows)
        obj.what = self.what
        obj._chunks = self._chunks + other._chunks
        obj._starts = np.concatenate([self._starts, other._starts[1:] + self.n])
        obj.n = self.n + other.n
        obj._parts = (self, other)
        return obj

    def _name(self, row: int) -> str:
        parts = getattr(self, "_parts", None)
        if parts is not None and row >= parts[0].n:
            return f"{parts[1].what}: row {row - parts[0].n}"
        return f"{parts[0].what if parts else self.what}: row {row}"

    def nbytes(self, a: int, b: int) -> int:
        """UTF-8 bytes of rows ``a:b`` (an upper bound on their characters;
        offsets that do not fit their buffer are reported by :meth:`decode`)."""
        total = 0
        for c in range(int(np.searchsorted(self._starts, a, "right")) - 1, len(self._chunks)):
            s = int(self._starts[c])
            if s >= b:
                break
            data, offs, _ = self._chunks[c]
            lo, hi = max(a - s, 0), min(b - s, offs.size - 1)
            # (no more than the buffer holds, whatever the offsets say: the
            # rows that fit it have at most that many characters)
            total += min(max(int(offs[hi]) - int(offs[lo]), 0), data.size)
        return total

    def byte_profile(self) -> np.ndarray:
        """Cumulative UTF-8 bytes of the rows (n + 1 values, non-decreasing),
        to cut the rows into runs of about equal bytes."""
        out = [np.zeros(1, np.int64)]
        base = 0
        for data, offs, _ in self._chunks:
            o = np.maximum.accumulate(offs[1:].astype(np.int64) - int(offs[0]))
            out.append(o + base)
            base += int(o[-1]) if o.size else 0
        return np.concatenate(out)

    def decode(self, a: int, b: int, buf: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Code points (uint32) and bounds (int64, from 0) of rows ``a:b``,
        as :func:`segkit.engine.join_code_points` gives them for a list of str.
        The code points are written to ``buf`` when it is large enough
        (a view of it is returned)."""
        need = max(self.nbytes(a, b), 0)
        cps = buf if buf is not None and buf.size >= need else np.empty(need, np.uint32)
        bounds = np.empty(b - a + 1, np.int64)
        bounds[0] = 0
        k = 0
        c = int(np.searchsorted(self._starts, a, "right")) - 1
        while a < b:
            data, offs, valid = self._chunks[c]
            s = int(self._starts[c])
            e = min(b, int(self._starts[c + 1]))
            j = int(bounds.size - 1 - (b - a))
            k, bad, kind = _decode_rows(data, offs, valid, a - s, e - s, cps, k, bounds, j)
            if bad >= 0:
                where = self._name(s + bad)
                if kind == 1:
                    raise ValueError(f"{where}: its offsets ({int(offs[bad])}, {int(offs[bad + 1])}) do not fit "
                                     f"the chunk's values buffer of {data.size} bytes")
                raise ValueError(f"{where}: invalid UTF-8 at byte {k} of the row")
            a = e
            c += 1
        return readonly(cps[:k]), bounds  # (as join_code_points' code points are: see readonly)


def string_chunks(texts: Any, what: str = "texts") -> list:
    """``texts`` as a list of pyarrow string / large_string arrays (no copy
    for those; other string-like Arrow types are cast)."""
    pa = _pa()
    if isinstance(texts, str):
        raise TypeError(f"{what}: expected a column of texts, found a single str")
    if not isinstance(texts, (pa.Array, pa.ChunkedArray)):
        if hasattr(texts, "__arrow_array__") or type(texts).__module__.startswith("pandas"):
            arr = getattr(texts, "array", texts)  # a Series: its ExtensionArray (Arrow-backed: no copy)
            try:
                texts = pa.array(arr)
            except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
                raise TypeError(f"{what}: cannot read the pandas column as strings ({e})") from None
        else:
            if isinstance(texts, Mapping) or not isinstance(texts, (Sequence, np.ndarray)):
                raise TypeError(f"{what}: expected a pyarrow string array, a pandas Series or a sequence of str, "
                                f"found {type(texts).__name__}")
            try:
                texts = pa.array(list(texts) if not isinstance(texts, (list, np.ndarray)) else texts, type=pa.string())
            except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
                raise TypeError(f"{what}: expected texts as str ({e})") from None
            except UnicodeEncodeError:  # a lone surrogate: Arrow strings are UTF-8 (segkit.runtime.surrogates)
                check_texts(texts, what)
                raise
    chunks = texts.chunks if isinstance(texts, pa.ChunkedArray) else [texts]
    out = []
    for arr in chunks:
        t = arr.type
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            out.append(arr)
        elif pa.types.is_null(t):
            out.append(arr.cast(pa.string()))
        elif (pa.types.is_dictionary(t) and (pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type))) \
                or getattr(pa.types, "is_string_view", lambda _: False)(t):
            out.append(arr.cast(pa.large_string()))
        else:
            raise TypeError(f"{what}: expected an Arrow string column, found type {t}")
    return out


# ------------------------------------------------------------- WordPiece
def _segment_run(wp, src: Utf8Rows, a: int, b: int, ends=None, matcher=None):
    """(4, n) tokens and row splits of rows ``a:b``, matched a block of rows
    at a time by the WordPiece's matching stage
    (:class:`segkit.presets.wordpiece.matching.Matcher`), as it matches lists of str."""
    matcher = wp._stages.matcher if matcher is None else matcher
    n = b - a
    rows = np.empty(n + 1, dtype=np.int64)
    rows[0] = 0
    out = None
    k = 0
    buf = np.empty(0, np.uint32)  # one code point buffer for all blocks (grown when a block needs more)
    for s in range(a, b, BLOCK_ROWS):
        checkpoint()  # a cancelled call stops between blocks (segkit.interrupts)
        e = min(s + BLOCK_ROWS, b)
        need = src.nbytes(s, e)
        if buf.size < need:
            buf = np.empty(max(need, 2 * buf.size), np.uint32)
        cps, bounds = src.decode(s, e, buf)
        if out is None:  # room for all rows if they are alike (grown if not)
            out = token_rows(cps.size * (n // BLOCK_ROWS + 1) * 5 // 4)
        out, k = matcher._match(cps, bounds, out, k, rows[s - a :], ends)
    if out is None:
        out = token_rows(0)
    return out[:, :k], rows


def _segment_parts(wp, src: Utf8Rows, num_threads, template=None, matcher=None):
    """``(parts, threads used)`` as ``Matcher.segment_parts`` gives for a list
    of str (``template``: the ids it puts around each text, or None)."""
    from ..runtime.threads import MIN_CHARS_PER_THREAD, _pool, resolve_threads

    ends = None if template is None else (np.int64(template[0]), np.int64(template[1]))
    n = resolve_threads(num_threads)
    count = len(src)
    if n > 1 and count > 1:
        cum = src.byte_profile()
        total = int(cum[-1])
        n = min(n, max(1, total // MIN_CHARS_PER_THREAD), count)
    if n <= 1 or count <= 1:
        return [_segment_run(wp, src, 0, count, ends, matcher)], 1
    k = max(n, min(n * 4, total // (2 * MIN_CHARS_PER_THREAD), count))
    cuts = np.searchsorted(cum, (np.arange(1, k) * total) // k, side="right")
    cuts = sorted(set([0, *np.minimum(cuts, count).tolist(), count]))
    jobs = list(zip(cuts[:-1], cuts[1:]))
    return list(_pool(n).map(bind(lambda ab: _segment_run(wp, src, ab[0], ab[1], ends, matcher)), jobs)), n


def encode_arrow_batch(
    wp,
    texts: Any,
    pairs: Any = None,
    *,
    null: str = "error",
    add_special_tokens: bool = True,
    max_length: int | None = None,
    truncation: bool | str | None = None,
    padding: bool | str | None = None,
    pad_to_multiple_of: int | None = None,
    stride: int = 0,
    truncation_side: str | None = None,
    padding_side: str | None = None,
    num_threads: int | None = None,
):
    """The :class:`~segkit.results.encoding.BatchEncoding` of an Arrow string column
    (and of a parallel column of pairs), as ``wp.encode_batch`` gives for
    the same texts as str."""
    src = Utf8Rows.of(texts, "texts", null)
    paired = pairs is not None
    n = len(src)
    if paired:
        second = Utf8Rows.of(pairs, "pairs", null)
        if len(second) != n:
            raise ValueError(f"encode_arrow: {n} texts but {len(second)} pairs; the columns must match")
        src = src.concat(second)
    st = wp._stages  # one state for the whole call
    opts = st.post.options(paired, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of, stride,
                            truncation_side, padding_side)
    if st.added is not None:
        # Added tokens are split out of the texts in Python
        # (segkit/wordpiece/added_tokens.py), so the rows become str here.
        parts, used = st.matcher.segment_parts(_as_strs(src), num_threads)
        fused = None
    else:
        # Single texts with BERT's template and nothing else to do: the
        # matching pass puts [CLS] and [SEP] around each row, as in encode_batch.
        fused = None if paired else wp._fused_template(st, opts)
        parts, used = _segment_parts(wp, src, num_threads, fused, st.matcher)
    return wp._batch_result(st, parts, used, n, paired, opts, fused is not None)


def _as_strs(src: Utf8Rows) -> list:
    """The rows of ``src`` as str (one decode of the whole column)."""
    cps, bounds = src.decode(0, len(src))
    text = cps.astype(np.uint32, copy=False).tobytes().decode("utf-32-le")
    b = bounds.tolist()
    return [text[b[i]:b[i + 1]] for i in range(len(b) - 1)]


# ----------------------------------------------------------------- output
def _int32_values(pa, row: np.ndarray):
    row = np.ascontiguousarray(row, dtype=np.int32)  # (a view when it is a row of the batch's array)
    return pa.Array.from_buffers(pa.int32(), row.size, [None, pa.py_buffer(row)])


def _list_of(pa, splits: np.ndarray, values):
    """A list array over ``values`` with the batch's row splits."""
    n = splits.size - 1
    if int(splits[-1]) <= _INT32_MAX:
        offs = splits.astype(np.int32)
        return pa.Array.from_buffers(pa.list_(values.type), n, [None, pa.py_buffer(offs)], children=[values])
    offs = np.ascontiguousarray(splits, dtype=np.int64)
    return pa.Array.from_buffers(pa.large_list(values.type), n, [None, pa.py_buffer(offs)], children=[values])


def _piece_columns(pa, data: np.ndarray, splits: np.ndarray, offsets: bool) -> dict:
    m = data.shape[1]
    if data.shape[0] >= 7:  # the full layout (rows as segkit.presets.pipeline.postprocess.FIELDS)
        ids, types, attn, special, starts, ends = (data[i] for i in range(6))
    else:  # short: ids, starts, ends, words; type ids and masks implied (see segkit.results.encoding._rows)
        ids, starts, ends = data[0], data[1], data[2]
        types = np.zeros(m, np.int32)
        attn = np.ones(m, np.int32)
        # Tokens without a word are the template's (BERT's [CLS]/[SEP] put by the matching pass).
        special = (data[3] < 0).view(np.int8).astype(np.int32)
    cols = {}
    for name, row in (("input_ids", ids), ("token_type_ids", types), ("attention_mask", attn),
                      ("special_tokens_mask", special)):
        cols[name] = _list_of(pa, splits, _int32_values(pa, row))
    if offsets:
        cols["offset_mapping"] = offset_lists(starts, ends, splits)
    return cols


def batch_to_arrow(batch, *, offsets: bool = True):
    """See :meth:`segkit.BatchEncoding.to_arrow`."""
    pa = _pa()
    pieces = [_piece_columns(pa, data, splits, offsets) for _, data, splits in batch._pieces()]
    names = list(pieces[0])
    if len(pieces) == 1:
        return pa.Table.from_arrays([pieces[0][k] for k in names], names=names)
    return pa.Table.from_arrays([pa.chunked_array([p[k] for p in pieces]) for k in names], names=names)


# ------------------------------------------------- token strings as Arrow
@kernel(inline="always")
def _utf8_len(x):
    return 1 + (x >= 0x80) + (x >= 0x800) + (x >= 0x10000)


@kernel
def _spans_to_utf8(cps, bounds, starts, ends, rows):
    """UTF-8 bytes of the spans ``starts[w]:ends[w]`` (code points of text
    ``t``, relative to ``bounds[t]``; the spans of text ``t`` are
    ``rows[t]:rows[t + 1]``), one after the other: ``(values, offsets)``
    with ``offsets`` (int64, spans + 1) into ``values`` (uint8).  Two
    passes: sizes, then bytes; no object per span.  Code points are
    assumed not to be surrogates (they come from valid UTF-8 or str)."""
    nw = starts.size
    offs = np.empty(nw + 1, np.int64)
    offs[0] = 0
    total = 0
    for t in range(rows.size - 1):
        base = bounds[t]
        for w in range(rows[t], rows[t + 1]):
            for i in range(base + starts[w], base + ends[w]):
                total += _utf8_len(cps[i])
            offs[w + 1] = total
    values = np.empty(total, np.uint8)
    p = 0
    for t in range(rows.size - 1):
        base = bounds[t]
        for w in range(rows[t], rows[t + 1]):
            for i in range(base + starts[w], base + ends[w]):
                x = np.uint32(cps[i])
                if x < 0x80:
                    values[p] = x
                    p += 1
                elif x < 0x800:
                    values[p] = 0xC0 | (x >> 6)
                    values[p + 1] = 0x80 | (x & 0x3F)
                    p += 2
                elif x < 0x10000:
                    values[p] = 0xE0 | (x >> 12)
                    values[p + 1] = 0x80 | ((x >> 6) & 0x3F)
                    values[p + 2] = 0x80 | (x & 0x3F)
                    p += 3
                else:
                    values[p] = 0xF0 | (x >> 18)
                    values[p + 1] = 0x80 | ((x >> 12) & 0x3F)
                    values[p + 2] = 0x80 | ((x >> 6) & 0x3F)
                    values[p + 3] = 0x80 | (x & 0x3F)
                    p += 4
    return values, offs


def string_lists(values: np.ndarray, offsets: np.ndarray, rows: np.ndarray):
    """A ``list<string>`` array: strings ``values[offsets[w]:offsets[w + 1]]``
    (UTF-8), list ``t`` holding strings ``rows[t]:rows[t + 1]``.  The buffers
    are used as they are (int64 offsets cast to int32 when they fit; else
    ``large_string``)."""
    pa = _pa()
    if int(offsets[-1]) <= _INT32_MAX:
        stype, soffs = pa.string(), offsets.astype(np.int32)
    else:
        stype, soffs = pa.large_string(), np.ascontiguousarray(offsets, np.int64)
    strings = pa.Array.from_buffers(stype, soffs.size - 1, [None, pa.py_buffer(soffs), pa.py_buffer(values)])
    return _list_of(pa, rows, strings)


def offset_lists(starts: np.ndarray, ends: np.ndarray, rows: np.ndarray):
    """A ``list<fixed_size_list<int32, 2>>`` array of ``(start, end)`` pairs
    (one copy, interleaving), list ``t`` holding pairs ``rows[t]:rows[t + 1]``."""
    pa = _pa()
    pairs = np.empty((starts.size, 2), np.int32)
    pairs[:, 0] = starts
    pairs[:, 1] = ends
    fixed = pa.Array.from_buffers(pa.list_(pa.int32(), 2), starts.size, [None], children=[_int32_values(pa, pairs.reshape(-1))])
    return _list_of(pa, rows, fixed)


# ------------------------------------------------------------ HF datasets
def datasets_map_function(
    wp,
    column: str = "text",
    pair_column: str | None = None,
    *,
    remove_columns: Any = (),
    null: str = "error",
    offsets: bool = True,
    **encode_kwargs: Any,
):
    """See :meth:`segkit.WordPiece.as_datasets_map`."""
    if isinstance(remove_columns, str):
        remove_columns = [remove_columns]
    drop = set(remove_columns)
    _pa()

    def encode(batch):
        # datasets passes a LazyBatch (default format: its Arrow table is
        # read, no column is turned into Python objects) or, with
        # .with_format("arrow"), a pyarrow.Table
        table = getattr(batch, "pa_table", batch)
        if not hasattr(table, "column"):
            if isinstance(batch, Mapping):  # a batch of another kind: lists out (slower, still correct)
                pairs = batch[pair_column] if pair_column is not None else None
                enc = encode_arrow_batch(wp, batch[column], pairs, null=null, **encode_kwargs).to_arrow(offsets=offsets)
                return {name: enc.column(name).to_pylist() for name in enc.column_names}
            raise TypeError(f"expected a datasets batch or a pyarrow.Table, found {type(batch).__name__}")
        pairs = table.column(pair_column) if pair_column is not None else None
        enc = encode_arrow_batch(wp, table.column(column), pairs, null=null, **encode_kwargs).to_arrow(offsets=offsets)
        kept = [name for name in table.column_names if name not in drop and name not in enc.column_names]
        out = table.select(kept)
        for name in enc.column_names:
            out = out.append_column(name, enc.column(name))
        return out

    return encode
