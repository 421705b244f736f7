"""The input forms of HF ``Tokenizer.encode`` / ``encode_batch``: texts,
pairs (tuples, lists, rows of a 2-D numpy array), batches mixing both, and
pre-tokenized input (a list of words per text).

HuggingFace ``tokenizers`` reads a batch item in this order (and so does
:func:`split_batch`):

- without ``is_pretokenized``: a ``str`` is a text; a tuple of two ``str``
  is a pair; any other sequence of length 2 (a list, a numpy row) whose
  items are ``str`` is a pair; anything else is a TypeError.  So
  ``["a", "b"]`` is a pair.
- with ``is_pretokenized``: a list, a tuple or a 1-D numpy array of ``str``
  is one pre-tokenized text (its words); else a tuple or any sequence of
  two such word sequences is a pair.  So ``["a", "b"]`` is one text of
  two words, and a ``str`` item is a TypeError.

Pre-tokenized words are each normalized, pre-tokenized and matched as a
text of their own (as HF does): offsets are relative to the word, and the
word index of every token is the index of its word in the list.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

_SEQ = (list, tuple, np.ndarray)


def _text_error(where: str, item: object) -> TypeError:
    return TypeError(
        f"encode_batch: the item at index {where} is {type(item).__name__} {item!r:.60}; expected a text (str) "
        "or a pair of texts (a tuple, a list or a numpy row of two str)"
    )


def _words_error(where: str, item: object) -> TypeError:
    return TypeError(
        f"encode_batch: the item at index {where} is {type(item).__name__} {item!r:.60}; with is_pretokenized=True "
        "expected a list of words (a list, tuple or 1-D numpy array of str) or a pair of them"
    )


def as_words(x: object) -> list | None:
    """``x`` as a list of words if it is a pre-tokenized sequence (a list,
    tuple or 1-D numpy array of str), else None."""
    if isinstance(x, np.ndarray):
        if x.ndim != 1 or x.dtype.kind not in "UO":
            return None
        x = x.tolist()
    elif not isinstance(x, (list, tuple)):
        return None
    for w in x:
        if not isinstance(w, str):
            return None
    return x if type(x) is list else list(x)


def _text_item(i: int, item: object):
    """A text (str) or a pair ``(str, str)`` by HF's rules, else TypeError."""
    if isinstance(item, str):
        return item
    if isinstance(item, _SEQ) and len(item) == 2 and (not isinstance(item, np.ndarray) or item.ndim == 1):
        a, b = item[0], item[1]
        for j, part in enumerate((a, b)):
            if not isinstance(part, str):
                raise TypeError(
                    f"encode_batch: the {'second' if j else 'first'} text of the pair at index {i} is "
                    f"{type(part).__name__} {part!r:.60}; expected str"
                )
        return (str(a), str(b))
    if isinstance(item, _SEQ):
        raise _text_error(f"{i}", item)
    raise TypeError(f"encode_batch: the text at index {i} is {type(item).__name__} {item!r:.60}; expected str")


def _words_item(i: int, item: object):
    """A word list or a pair of word lists by HF's rules, else TypeError."""
    words = as_words(item)
    if words is not None:
        return words
    if isinstance(item, _SEQ) and len(item) == 2:
        pair = []
        for j in (0, 1):
            w = as_words(item[j])
            if w is None:
                raise TypeError(
                    f"encode_batch: the {'second' if j else 'first'} sequence of the pair at index {i} is "
                    f"{type(item[j]).__name__} {item[j]!r:.60}; with is_pretokenized=True expected a list of words "
                    "(a list, tuple or 1-D numpy array of str)"
                )
            pair.append(w)
        return tuple(pair)
    raise _words_error(f"{i}", item)


def split_batch(texts: list, is_pretokenized: bool):
    """``(firsts, seconds, is_pair)`` of a batch by HF's rules.

    ``seconds`` is None when no item is a pair; ``is_pair`` is None unless
    the batch mixes texts and pairs (then a bool array, and ``seconds`` has
    an entry only for the pairs).  Raises TypeError naming the first item
    that is neither."""
    items = [(_words_item if is_pretokenized else _text_item)(i, t) for i, t in enumerate(texts)]
    pair = np.fromiter((type(x) is tuple for x in items), dtype=bool, count=len(items))
    if not pair.any():
        return items, None, None
    if pair.all():
        return [x[0] for x in items], [x[1] for x in items], None
    return [x[0] if p else x for x, p in zip(items, pair)], [x[1] for x, p in zip(items, pair) if p], pair


def segment_words(st, seqs: list, num_threads: int | None = None):
    """The matching stage of the state ``st`` (a WordPiece's ``_stages``) on
    pre-tokenized texts (lists of words): ``(tokens, row splits)`` per
    text, each word segmented as a text of its own (offsets relative to the
    word), word index = index of the word."""
    counts = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    words = list(chain.from_iterable(seqs))
    tok, wrows = st.matcher.segment(words, num_threads)
    first_word = np.zeros(len(seqs) + 1, dtype=np.int64)
    np.cumsum(counts, out=first_word[1:])
    local = np.arange(len(words), dtype=np.int64) - np.repeat(first_word[:-1], counts)
    tok = np.array(tok, copy=True) if not tok.flags.writeable else tok
    tok[3] = np.repeat(local, np.diff(wrows))
    return tok, np.ascontiguousarray(wrows[first_word])


# ------------------------------------------------------------ mixed batches
def _full(data: np.ndarray) -> np.ndarray:
    """The full layout of an encoding array (plain results have 4 rows)."""
    from ...results.encoding import _FULL, _rows

    return data if data.shape[0] == _FULL else np.stack(_rows(data))


def merge_batches(parts: list, order: np.ndarray):
    """Rows of several ``(data, row_splits)`` batches in another order.

    ``order[t]`` is the index, in the concatenation of the parts' rows, of
    output row ``t``.  Returns ``(data, row_splits)``; no Python loop over
    rows or tokens."""
    datas = [_full(d) for d, _ in parts]
    data = np.concatenate(datas, axis=1) if len(datas) > 1 else datas[0]
    starts, lens = [], []
    base = 0
    for d, s in parts:
        starts.append(s[:-1] + base)
        lens.append(np.diff(s))
        base += d.shape[1]
    starts = np.concatenate(starts)[order]
    lens = np.concatenate(lens)[order]
    splits = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(lens, out=splits[1:])
    idx = np.repeat(starts - splits[:-1], lens) + np.arange(splits[-1], dtype=np.int64)
    return data[:, idx], splits


def pad_rows(data: np.ndarray, splits: np.ndarray, target: int, pad_id: int, left: bool = False, pad_type_id: int = 0):
    """Rows shorter than ``target`` padded to it (pad id, type
    ``pad_type_id``, attention 0, special 1, offsets (0, 0), no word, no
    sequence), on the right or the left."""
    lens = np.diff(splits)
    new = np.maximum(lens, target)
    out_splits = np.zeros(lens.size + 1, dtype=np.int64)
    np.cumsum(new, out=out_splits[1:])
    out = np.empty((data.shape[0], int(out_splits[-1])), dtype=np.int32)
    for r, v in enumerate((pad_id, pad_type_id, 0, 1, 0, 0, -1, -1)[: data.shape[0]]):
        out[r] = v
    shift = out_splits[:-1] + ((new - lens) if left else 0) - splits[:-1]
    dest = np.repeat(shift, lens) + np.arange(int(splits[-1]), dtype=np.int64)
    out[:, dest] = data
    return out, out_splits


def encode_mixed(wp, st, items: list, is_pair: np.ndarray, is_pretokenized: bool, options: dict[str, Any]):
    """A batch mixing texts and pairs: each kind encoded as a batch of its
    own (unpadded), rows put back in order (overflowing encodings too),
    then padded together as one batch would be (all with the state ``st``)."""
    from ...results.encoding import BatchEncoding
    from .postprocess import O_MULT, O_PAD_LEFT, O_PAD_TO, O_PAD_TYPE

    padding = options.pop("padding", None)
    # The padding the options resolve to (as for a batch of single texts).
    opts = st.post.options(False, options["add_special_tokens"], options["max_length"], False, padding,
                            options["pad_to_multiple_of"], None, None, options["padding_side"])
    singles = np.flatnonzero(~is_pair)
    pairs = np.flatnonzero(is_pair)
    groups = [wp._encode_batch(st, [items[i] for i in sel.tolist()], padding=False, is_pretokenized=is_pretokenized,
                               **options) for sel in (singles, pairs)]
    order = np.empty(len(items), dtype=np.int64)
    order[singles] = np.arange(singles.size)
    order[pairs] = singles.size + np.arange(pairs.size)
    data, splits = merge_batches([(g._data, g.row_splits) for g in groups], order)
    overflow = None
    if any(g._ovf is not None for g in groups):
        # Overflowing encodings of text t: rows texts[t]:texts[t + 1] of its group's overflow batch.
        o_parts, o_first, o_count, base = [], [], [], 0
        for g in groups:
            n = len(g)
            if g._ovf is None:
                o_parts.append((np.empty((8, 0), np.int32), np.zeros(1, np.int64)))
                o_first.append(np.full(n, base, np.int64))
                o_count.append(np.zeros(n, np.int64))
                continue
            odata, orows, otexts = g._ovf
            o_parts.append((odata, orows))
            o_first.append(otexts[:-1] + base)
            o_count.append(np.diff(otexts))
            base += orows.size - 1
        first = np.concatenate(o_first)[order]
        count = np.concatenate(o_count)[order]
        texts = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum(count, out=texts[1:])
        o_order = np.repeat(first - texts[:-1], count) + np.arange(int(texts[-1]), dtype=np.int64)
        odata, orows = merge_batches(o_parts, o_order)
        overflow = [odata, orows, texts]
    target = int(opts[O_PAD_TO])
    if target >= 0:
        if target == 0:  # the longest kept encoding
            target = int(np.diff(splits).max()) if len(items) else 0
        mult = int(opts[O_MULT])
        if mult > 1 and target % mult:
            target += mult - target % mult
        left = bool(opts[O_PAD_LEFT])
        data, splits = pad_rows(data, splits, target, st.pad_id, left, int(opts[O_PAD_TYPE]))
        if overflow is not None:
            overflow[:2] = pad_rows(overflow[0], overflow[1], target, st.pad_id, left, int(opts[O_PAD_TYPE]))
    return BatchEncoding(data, splits, st.names, st.pad_id, np.where(is_pair, 2, 1),
                         overflow=None if overflow is None else tuple(overflow),
                         pad_type_id=int(opts[O_PAD_TYPE]), padding_side="left" if opts[O_PAD_LEFT] else "right")
