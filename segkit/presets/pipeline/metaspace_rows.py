"""The token rows of the SentencePiece-converted shapes in whole-batch
steps: the staged pipeline's results without a
:class:`~.normalized.NormalizedText` per part.

The shapes (what transformers writes from a SentencePiece BPE model, and
the older Hub form of Llama 2), with added tokens that are not
``normalized``:

* ``metaspace``: no normalizer, a ``Metaspace`` pre-tokenizer: spaces
  become ``rep``; ``rep`` goes first (``always``; ``first``: only in the
  part at the start of the text) unless the part starts with it; with
  ``split``, the part is cut before each ``rep``;
* ``prepend``: a ``Sequence[Prepend(rep), Replace(" ", rep)]`` normalizer
  and no pre-tokenizer: ``rep`` first in every part, spaces become ``rep``.

Either way the normalized part is ``rep`` (or not) followed by the part
with its spaces replaced, one character for one, so a normalized position
maps back by arithmetic: position ``k`` of a part that starts at ``a`` in
the text, with ``p`` characters put first, is character ``a + max(k - p, 0)``
(the character put first takes the span of the first one, as HF gives it).
The results are those of :meth:`.staged.StagedRows._rows`, checked equal
under hypothesis in ``tests/test_staged_pipeline.py``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["file_shape", "shape_rows"]


def file_shape(doc: dict) -> tuple | None:
    """``("metaspace", rep, scheme, split)``, ``("prepend", rep)`` or None,
    from a tokenizer.json's parsed JSON (read by the staged reader first)."""
    norm, pre = doc.get("normalizer"), doc.get("pre_tokenizer")
    if any(isinstance(a, dict) and a.get("normalized", not a.get("special", False)) for a in
           doc.get("added_tokens") or []):
        return None
    if norm is None and isinstance(pre, dict) and pre.get("type") == "Metaspace":
        rep = pre.get("replacement")
        scheme = pre.get("prepend_scheme", "always")
        if pre.get("add_prefix_space") is False:
            scheme = "never"
        return "metaspace", rep, scheme, pre.get("split", True)
    if pre is None and isinstance(norm, dict) and norm.get("type") == "Sequence":
        parts = norm.get("normalizers")
        if isinstance(parts, list) and len(parts) == 2 and parts[0].get("type") == "Prepend" and \
                parts[1] == {"type": "Replace", "pattern": {"String": " "}, "content": parts[0].get("prepend")} and \
                isinstance(parts[0].get("prepend"), str) and len(parts[0]["prepend"]) == 1:
            return "prepend", parts[0]["prepend"]
    return None


_KINDS = {"metaspace": 0, "prepend": 1}
_SCHEMES = {"always": 0, "first": 1, "never": 2}


def shape_rows(staged: Any, shape: tuple, texts: list) -> tuple[np.ndarray, np.ndarray]:
    """(4, n) int32 rows (ids, starts, ends, word index) and row splits of
    ``texts`` for a :class:`~.staged.StagedModel` of one of the shapes: in
    one compiled call when the model has one (``encode_shaped``), else in
    whole-batch NumPy steps around its ``encode_words``."""
    if hasattr(staged.model, "encode_shaped"):
        return _compiled(staged, shape, texts)
    return _steps(staged, shape, texts)


def _compiled(staged: Any, shape: tuple, texts: list) -> tuple[np.ndarray, np.ndarray]:
    from ..added_matches import find_matches

    find = staged._raw_find
    by_id = staged._by_id.__getitem__
    n = len(texts)
    text_splits = np.zeros(n + 1, dtype=np.int64)
    part_a: list[int] = []
    part_b: list[int] = []
    part_id: list[int] = []
    part_splits = np.zeros(n + 1, dtype=np.int64)
    at = 0
    for r, text in enumerate(texts):
        if type(text) is not str:
            raise TypeError(f"expected texts[{r}] as str, found {type(text).__name__}: {text!r:.80}")
        matches = find(text) if find is not None else None
        if matches:
            def token(i, a, b, at=at):
                if b > a:
                    part_a.append(at + a), part_b.append(at + b), part_id.append(i)

            def plain(a, b, at=at):
                if b > a:
                    part_a.append(at + a), part_b.append(at + b), part_id.append(-1)

            find_matches(text, matches, by_id, token, plain)
        elif text:
            part_a.append(at), part_b.append(at + len(text)), part_id.append(-1)
        at += len(text)
        text_splits[r + 1] = at
        part_splits[r + 1] = len(part_a)
    joined = texts[0] if n == 1 else "".join(texts)
    cps = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), "<u4").astype(np.int32)
    kind, rep = shape[0], shape[1]
    scheme, split = (shape[2], shape[3]) if kind == "metaspace" else ("always", False)
    return staged.model.encode_shaped(cps, text_splits, np.array(part_a, dtype=np.int64),
                                      np.array(part_b, dtype=np.int64), np.array(part_id, dtype=np.int64),
                                      part_splits, rep, _KINDS[kind], _SCHEMES[scheme], split)


def _steps(staged: Any, shape: tuple, texts: list) -> tuple[np.ndarray, np.ndarray]:
    from ..added_matches import find_matches

    kind, rep = shape[0], shape[1]
    scheme, split = (shape[2], shape[3]) if kind == "metaspace" else ("always", False)
    find = staged._raw_find
    by_id = staged._by_id.__getitem__
    words: list[str] = []
    # per item (an added token or a word), in order over all texts
    item_word = []  # 1: a word of the model, 0: an added token
    item_id = []  # the added token's id (words: 0)
    item_a = []  # added: its start; words: where the part starts in the text
    item_b = []  # added: its end; words: how many characters were put first
    item_off = []  # words: where the word starts in its normalized part
    item_index = []  # the item's index in its text (the word index)
    items_per_text = np.zeros(len(texts) + 1, dtype=np.int64)
    for r, text in enumerate(texts):
        if type(text) is not str:
            raise TypeError(f"expected texts[{r}] as str, found {type(text).__name__}: {text!r:.80}")
        parts: list[tuple[int, int, int]] = []  # (start, end, id or -1)
        matches = find(text) if find is not None else None
        if matches:
            find_matches(text, matches, by_id, lambda i, a, b: parts.append((a, b, i)) if b > a else None,
                         lambda a, b: parts.append((a, b, -1)) if b > a else None)
        elif text:
            parts.append((0, len(text), -1))
        index = 0
        for a, b, i in parts:
            if i >= 0:
                item_word.append(0), item_id.append(i), item_a.append(a), item_b.append(b), item_off.append(0)
                item_index.append(index)
                index += 1
                continue
            w = text[a:b].replace(" ", rep)
            p = 0
            if kind == "prepend" or (scheme == "always" or (scheme == "first" and a == 0)) and not w.startswith(rep):
                w = rep + w
                p = 1
            if split:
                cuts = [k for k in range(1, len(w)) if w[k] == rep]
                starts = [0, *cuts]
                ends = [*cuts, len(w)]
            else:
                starts, ends = [0], [len(w)]
            for s, e in zip(starts, ends):
                words.append(w[s:e])
                item_word.append(1), item_id.append(0), item_a.append(a), item_b.append(p), item_off.append(s)
                item_index.append(index)
                index += 1
        items_per_text[r + 1] = items_per_text[r] + index
    ids, starts, ends, splits = staged.model.encode_words(words)
    is_word = np.array(item_word, dtype=bool)
    counts = np.ones(is_word.size, dtype=np.int64)
    counts[is_word] = np.diff(splits)
    token_is_word = np.repeat(is_word, counts)
    n = int(counts.sum())
    out = np.empty((4, n), dtype=np.int32)
    a = np.array(item_a, dtype=np.int64)
    b = np.array(item_b, dtype=np.int64)
    out[3] = np.repeat(np.array(item_index, dtype=np.int64), counts)
    added = ~is_word
    out[0, ~token_is_word] = np.array(item_id, dtype=np.int64)[added]
    out[1, ~token_is_word] = a[added]
    out[2, ~token_is_word] = b[added]
    # words: normalized positions back to the text's characters
    word_of = np.repeat(np.arange(int(is_word.sum())), np.diff(splits))
    base = a[is_word][word_of]
    put_first = b[is_word][word_of]
    offset = np.array(item_off, dtype=np.int64)[is_word][word_of]
    out[0, token_is_word] = ids
    out[1, token_is_word] = base + np.maximum(offset + starts - put_first, 0)
    out[2, token_is_word] = base + np.maximum(offset + ends - put_first, 1)
    # row splits over tokens: the tokens of each text's items
    item_end = np.concatenate([[0], np.cumsum(counts)])
    return out, item_end[items_per_text]
