"""Checking what users give :class:`segkit.BPE` (vocabularies, special
tokens, texts) and laying batches out; errors name the argument, the text
and the position."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Iterable

import numpy as np

from .pieces import utf8


def check_id(x: Any, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= int(x) < (1 << 31) - 1:
        raise ValueError(f"{what} must be an int id (0 <= id < 2**31 - 1), found {x!r}")
    return int(x)


def tokens_from_vocab(vocab: Any) -> list:
    """``vocab`` as a list of bytes by id: a mapping bytes -> id, id -> bytes,
    or a sequence of bytes (id = position)."""
    if isinstance(vocab, Mapping):
        items = list(vocab.items())
        if items and isinstance(items[0][0], (bytes, bytearray)):
            pairs = [(check_id(i, f"the id of {t!r}"), t) for t, i in items]
        else:
            pairs = [(check_id(i, "a vocabulary id"), t) for i, t in items]
    elif isinstance(vocab, Sequence) and not isinstance(vocab, (str, bytes)):
        pairs = list(enumerate(vocab))
    else:
        raise TypeError(f"vocab must be a mapping (bytes -> id or id -> bytes) or a list of bytes, found "
                        f"{type(vocab).__name__}")
    top = max((i for i, _ in pairs), default=-1)
    if top > 16 * len(pairs) + 1024:
        raise ValueError(f"vocabulary ids go up to {top} for {len(pairs)} tokens: too sparse")
    tokens: list = [None] * (top + 1)
    seen: dict[bytes, int] = {}
    for i, t in pairs:
        if not isinstance(t, (bytes, bytearray)):
            raise TypeError(f"token {i} must be bytes, found {type(t).__name__} {t!r:.60}")
        t = bytes(t)
        if not t:
            raise ValueError(f"token {i} is empty")
        if tokens[i] is not None:
            raise ValueError(f"id {i} is given twice")
        if t in seen:
            raise ValueError(f"token {t!r} has two ids ({seen[t]} and {i}); segkit.BPE needs one id per byte string")
        seen[t] = i
        tokens[i] = t
    return tokens


def check_specials(special_tokens: Any, n_tokens: int, taken: Iterable[int] = ()) -> dict[str, int]:
    if special_tokens is None:
        return {}
    if not isinstance(special_tokens, Mapping):
        raise TypeError(f"special_tokens must be a mapping of str to id, found {type(special_tokens).__name__}")
    out: dict[str, int] = {}
    used = set(taken)
    for s, i in special_tokens.items():
        if not isinstance(s, str) or not s:
            raise ValueError(f"a special token must be a non-empty str, found {s!r}")
        utf8(s)
        i = check_id(i, f"the id of special token {s!r}")
        if i in used:
            raise ValueError(f"special token {s!r} has id {i}, which is already taken")
        out[s] = i  # two special tokens may share an id, as in tiktoken (o200k_harmony's 200018)
    check_dense(out.items(), n_tokens, "special token")
    return out


def check_dense(items: Iterable[tuple[str, int]], n_tokens: int, what: str) -> None:
    """ValueError unless the ids of ``items`` (string, id) are dense enough
    to index the decoding tables, which are allocated up to the largest id:
    at most ``SPARSE_FACTOR`` x ids + ``SPARSE_SLACK``, the rule of every
    vocabulary (:func:`segkit.models.vocabulary.check_ids`).  One id near
    2**31 would otherwise make the first ``decode`` allocate 48 GB."""
    from ...models.vocabulary import SPARSE_FACTOR, SPARSE_SLACK

    items = list(items)
    if not items:
        return
    s, top = max(items, key=lambda x: x[1])
    n = n_tokens + len(items)
    if top > n * SPARSE_FACTOR + SPARSE_SLACK:
        raise ValueError(f"{what} {s!r:.40} has id {top}, but there are only {n} tokens; ids must be dense "
                         f"enough to index tables (at most {SPARSE_FACTOR} x tokens + {SPARSE_SLACK})")


def renumbered(e: ValueError, first: int) -> ValueError:
    """The pre-tokenizer's error about "text N" of a part of a batch, about
    text ``N + first`` of the whole."""
    msg = str(e)
    if first and msg.startswith("text "):
        row, _, rest = msg[5:].partition(" ")
        if row.isdigit():
            return ValueError(f"text {int(row) + first} {rest}")
    return e


def interleave(n, a_rows, a_ids, a_splits, b_rows, b_ids, b_splits) -> tuple[np.ndarray, np.ndarray]:
    """The ids of ``n`` texts as one flat array and row splits, from two
    disjoint subsets of them (``a_rows`` / ``b_rows``: the texts' indices,
    each with its own flat ids and row splits)."""
    counts = np.zeros(n, dtype=np.int64)
    counts[a_rows] = np.diff(a_splits)
    counts[b_rows] = np.diff(b_splits)
    rows = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=rows[1:])
    ids = np.empty(int(rows[-1]), dtype=np.int32)
    for idx, part, splits in ((a_rows, a_ids, a_splits), (b_rows, b_ids, b_splits)):
        if part.size:
            # destination of every id: its text's start plus its place in the text
            within = np.arange(part.size, dtype=np.int64) - np.repeat(splits[:-1], np.diff(splits))
            ids[np.repeat(rows[idx], np.diff(splits)) + within] = part
    return ids, rows


def utf8_rows(texts: list, first: int) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 of ``texts`` as one buffer and row splits; a text that is
    not a str, or has a lone surrogate, is an error naming its index in the
    whole batch (``first`` + its index here)."""
    try:
        parts = [t.encode("utf-8") for t in texts]
    except (UnicodeEncodeError, AttributeError):
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"texts[{first + i}] must be a str, found {type(t).__name__}") from None
            utf8(t, first + i)
        raise
    splits = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts)), out=splits[1:])
    return np.frombuffer(b"".join(parts), dtype=np.uint8), splits
