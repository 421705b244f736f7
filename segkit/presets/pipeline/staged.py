"""Any tokenizer.json pipeline, stage by stage, as HF ``tokenizers`` runs
it: added tokens, normalizer, pre-tokenizer, then a model over the parts.

:class:`StagedModel` is the model contract :class:`segkit.Tokenizer` reads
(vocabulary, decoding, special tokens, token rows) for pipelines that no
preset fuses into one pass: SentencePiece-converted files (Metaspace,
``Prepend``/``Replace`` normalizers, byte fallback), and any combination
of the components :mod:`.normalizers`, :mod:`.pre_tokenizers` and
:mod:`.decoders` read.  The model itself is any *words model*: an object
with ``encode_words(words) -> (ids, starts, ends, splits)`` (int32 ids,
character offsets in each word, int64 splits per word), a whole batch of
parts in one call; the preset that reads the file's ``model`` gives it.

Per text, HF's order (``AddedVocabulary::extract_and_normalize``, then
``pre_tokenize`` and the model):

1. the added tokens that are not ``normalized`` are found in the text as
   given (HF's ``single_word``/``lstrip``/``rstrip`` rules,
   :mod:`segkit.presets.added_matches`);
2. every other part is normalized on its own, and the ``normalized``
   added tokens are found in it;
3. every part that is not an added token is pre-tokenized; the model
   encodes each resulting part; offsets go back to the original text
   through the parts' alignments (:mod:`.normalized`); a token's word
   index is the index of its part (added tokens count as parts).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Callable

import numpy as np

from .normalized import NormalizedText
from .options import PostProcessor


class AddedToken:
    """One entry of a tokenizer.json's ``added_tokens`` (HF's flags)."""

    __slots__ = ("content", "id", "special", "normalized", "lstrip", "rstrip", "single_word")

    def __init__(self, content: str, id: int, special: bool, normalized: bool, lstrip: bool, rstrip: bool,
                 single_word: bool) -> None:
        self.content, self.id, self.special = content, id, special
        self.normalized, self.lstrip, self.rstrip, self.single_word = normalized, lstrip, rstrip, single_word

    def __repr__(self) -> str:
        return f"AddedToken({self.content!r}, id={self.id}, special={self.special})"


def _searcher(contents: dict[str, int]) -> Callable[[str], list] | None:
    """Leftmost-longest matches ``(start, stop, id)`` of the contents (HF's
    Aho-Corasick, ``LeftmostLongest``)."""
    if not contents:
        return None
    rx = re.compile("|".join(re.escape(c) for c in sorted(contents, key=lambda c: (-len(c), c))))

    def find(text: str) -> list:
        return [(m.start(), m.end(), contents[m.group()]) for m in rx.finditer(text)]

    return find


class StagedModel:
    """A tokenizer.json's pipeline over a words model (see the module
    documentation).

    Parameters
    ----------
    model
        The words model (``encode_words``).
    vocab
        The model's ``{token: id}``.
    added
        The file's added tokens.
    normalizer, pre_tokenizer
        From :func:`.normalizers.read_normalizer` and
        :func:`.pre_tokenizers.read_pre_tokenizer` (None: none).
    decoder
        From :func:`.decoders.read_decoder`.
    source
        The file, for messages.
    rebuild
        ``(function, args)`` that makes this model again (pickling).
    trim_prefix
        With offsets trimmed (:meth:`rows`), the first token of a text keeps
        one leading space (the post-processor's ``add_prefix_space``).
    shape
        One of the SentencePiece-converted shapes that
        :mod:`.metaspace_rows` runs in whole-batch steps, or None.
    """

    _mode = None  # (not a segkit.BPE)

    def __init__(self, model: Any, vocab: dict[str, int], added: Sequence[AddedToken],
                 normalizer: Callable | None, pre_tokenizer: Callable | None, decoder: Callable[[list], str],
                 source: str, rebuild: tuple | None = None, trim_prefix: bool = False,
                 shape: tuple | None = None) -> None:
        self.model = model
        self._vocab = dict(vocab)
        self._added = list(added)
        self._added_ids = frozenset(a.id for a in self._added)
        self._normalizer = normalizer
        self._pre = pre_tokenizer
        self._decoder = decoder
        self._source = source
        self._rebuild = rebuild
        self._trim_prefix = trim_prefix
        self._shape = shape
        self._roles: dict[str, str] = {}
        size = max(self._vocab.values(), default=-1) + 1
        names: list[str | None] = [None] * size
        for t, i in self._vocab.items():
            names[i] = t
        self._model_size = len(self._vocab)
        by_content: dict[str, AddedToken] = {}
        for a in self._added:
            by_content[a.content] = a
            if a.id >= len(names):
                names.extend([None] * (a.id + 1 - len(names)))
            names[a.id] = a.content  # (HF: the added vocabulary first)
        self._names = names
        self._by_content = by_content
        self._by_id = {a.id: a for a in self._added}
        self._special = {a.id for a in self._added if a.special}
        self._raw_find = _searcher({a.content: a.id for a in self._added if not a.normalized})
        normalized: dict[str, int] = {}
        for a in self._added:
            if a.normalized:
                key = a.content
                if normalizer is not None:
                    t = NormalizedText.of(key)
                    normalizer(t)
                    key = t.text
                    names[a.id] = key  # (HF: a normalized token reads as it is matched)
                if key:
                    normalized[key] = a.id
        self._norm_find = _searcher(normalized)

    # ------------------------------------------------------ vocabulary
    def token_to_id(self, token: str) -> int | None:
        a = self._by_content.get(token)
        return a.id if a is not None else self._vocab.get(token)

    def id_to_token(self, i: int) -> str | None:
        return self._names[i] if 0 <= i < len(self._names) else None

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        if not with_added_tokens:
            return self._model_size
        return self._model_size + sum(1 for a in self._added if a.content not in self._vocab)

    def _special_ids(self) -> set[int]:
        return set(self._special)

    def _set_roles(self, roles: dict, source: str) -> None:
        self._roles = dict(roles)

    def _special_token(self, role: str) -> str | None:
        return self._roles.get(role)

    # --------------------------------------------------------- decoding
    def decode(self, ids, errors: str = "replace", skip_special_tokens: bool = False) -> str:
        tokens = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
                raise TypeError(f"decode: expected ids as ints, found {type(i).__name__}: {i!r:.60}")
            t = self.id_to_token(int(i))
            if t is None or (skip_special_tokens and int(i) in self._special and t == self._by_id[int(i)].content):
                continue
            tokens.append(t)
        return self._decoder(tokens)

    # ----------------------------------------------------------- parts
    def parts(self, text: str) -> list[tuple[NormalizedText, int | None]]:
        """The parts of ``text`` in order: ``(part, id)``, ``id`` an added
        token's, or None for a part the model encodes."""
        from ..added_matches import find_matches

        out: list[tuple[NormalizedText, int | None]] = []
        by_id = self._by_id.__getitem__

        def split_on(t: NormalizedText, find) -> list[tuple[NormalizedText, int | None]]:
            if find is None:
                return [(t, None)]
            got: list = []
            matches = find(t.text)
            if not matches:
                return [(t, None)]
            find_matches(t.text, matches, by_id,
                         lambda i, a, b: got.append((t.slice(a, b), i)) if b > a else None,
                         lambda a, b: got.append((t.slice(a, b), None)) if b > a else None)
            return got

        first = split_on(NormalizedText.of(text), self._raw_find)
        for part, i in first:
            if i is not None:
                out.append((part, i))
                continue
            if self._normalizer is not None:
                self._normalizer(part)
            if not part.text:
                continue
            # HF slices the normalized part again (even with nothing to split
            # off): its shift becomes where its first character comes from,
            # which Metaspace's prepend_scheme "first" reads.
            out.extend(split_on(part.slice(0, len(part.text)), self._norm_find))
        return out

    def matched(self, text: str) -> dict[tuple[int, int, int], str]:
        """``{(id, start, end): string}`` of the added tokens matched in
        ``text``: offsets in ``text``, and the text each matched as HF's
        encoding holds it (normalized for a ``normalized`` token, white
        space it took included: :attr:`segkit.Encoding.tokens`)."""
        out: dict[tuple[int, int, int], str] = {}
        for part, i in self.parts(text):
            if i is not None:
                out[(i, *part.original_span(0, len(part.text)))] = part.text
        return out

    def model_names(self) -> dict[int, str]:
        """``{id: string}`` of the ids an added token took from the model's
        vocabulary under another name: what HF's encoding shows where the
        model (not a match) gives such an id."""
        strings = {i: t for t, i in self._vocab.items()}
        return {a.id: strings[a.id] for a in self._added if a.id in strings and strings[a.id] != self._names[a.id]}

    def items(self, text: str) -> list[tuple[NormalizedText, int | None]]:
        """The parts of ``text`` after pre-tokenization, in order: ``(part,
        id)``, ``id`` an added token's, or None for a part the model encodes
        (empty parts left out)."""
        items: list = []
        for part, i in self.parts(text):
            if i is not None:
                items.append((part, i))
                continue
            pieces = self._pre(part) if self._pre is not None else [part]
            items.extend((p, None) for p in pieces if p.text)
        return items

    def rows(self, trim_offsets: bool = False) -> "StagedRows":
        """The matching stage; ``trim_offsets``: HF ByteLevel's (the spaces
        at a token's ends left out of its offsets)."""
        return StagedRows(self, trim_offsets)

    def __reduce__(self):
        if self._rebuild is None:
            raise TypeError("this StagedModel was built in code and cannot be pickled")
        return self._rebuild

    def __repr__(self) -> str:
        return f"StagedModel({type(self.model).__name__}, {self._model_size} tokens, from {self._source})"


class PieceFirstTrim(PostProcessor):
    """The post-processing stage of a file whose ByteLevel trims offsets and
    adds a prefix space (``trim_offsets`` with ``add_prefix_space``).

    HF trims each encoding that truncation makes (the kept piece and every
    overflowing one) as a text of its own: the first token of each sequence
    in a piece keeps one leading space.  The matching stage trimmed every
    token of the text but its first; after truncation, the first token of
    each piece whose single leading space was trimmed gets it back
    (RoBERTa question answering reads these offsets in every window).

    ``matcher`` is the :class:`StagedRows` that made the rows (its token
    strings' space counts)."""

    def __init__(self, *args, matcher: "StagedRows", **kw) -> None:
        super().__init__(*args, **kw)
        self._matcher = matcher

    def apply(self, tok: np.ndarray, rows: np.ndarray, n: int, paired: bool, opts: np.ndarray):
        from .postprocess import O_MODE

        out, out_rows, ovf = super().apply(tok, rows, n, paired, opts)
        if opts[O_MODE] == 0 or tok.shape[1] == 0:
            return out, out_rows, ovf
        # The same post-processing over each token's index: where every
        # token of every piece came from.
        index = tok.copy()
        index[1] = index[2] = np.arange(tok.shape[1], dtype=index.dtype)
        iout, _, iovf = super().apply(index, rows, n, paired, opts)
        text_first = set(rows[:-1].tolist())
        self._give_back(out, out_rows, iout, tok, text_first)
        self._give_back(ovf[0], ovf[1], iovf[0], tok, text_first)
        return out, out_rows, ovf

    def _give_back(self, data: np.ndarray, splits: np.ndarray, index: np.ndarray, tok: np.ndarray,
                   text_first: set) -> None:
        m = self._matcher
        added = m.staged._added_ids
        seq = data[7]
        for p in range(splits.size - 1):
            a, b = int(splits[p]), int(splits[p + 1])
            for q in (0, 1):
                at = np.flatnonzero(seq[a:b] == q)
                if not at.size:
                    continue
                k = a + int(at[0])
                j = int(index[4, k])
                i = int(data[0, k])
                ts, te = int(data[4, k]), int(data[5, k])
                if j in text_first or ts == 0 or i in added or m._space_counts(i)[0] != 1:
                    continue  # (kept its space when matched, or none to give back)
                data[4, k] = ts - 1
                data[5, k] = ts - 1 if te == ts else te  # (a token of one space: HF's empty span before it)


class StagedRows:
    """:class:`StagedModel` as the pipeline's matching stage: (4, n) int32
    rows ``ids, starts, ends, word index`` and row splits."""

    def __init__(self, staged: StagedModel, trim_offsets: bool = False) -> None:
        self.staged = staged
        self.trim_offsets = trim_offsets
        self._spaces: dict[int, tuple[int, int]] = {}

    def _space_counts(self, i: int) -> tuple[int, int]:
        """Leading and trailing spaces of token ``i``'s string."""
        got = self._spaces.get(i)
        if got is None:
            got = self._spaces[i] = self._count(self.staged.id_to_token(i) or "")
        return got

    @staticmethod
    def _count(t: str) -> tuple[int, int]:
        """Leading and trailing spaces of a token string (``Ġ`` or white space)."""
        from ..added_matches import spaces

        ws = spaces()
        n = len(t)
        lead = 0
        while lead < n and (t[lead] == "\u0120" or t[lead] in ws):
            lead += 1
        trail = 0
        while trail < n and (t[n - 1 - trail] == "\u0120" or t[n - 1 - trail] in ws):
            trail += 1
        return lead, trail

    def encode_one(self, text: str, opts: np.ndarray, post):
        return None  # no one-call path: the rows go through the shared post-processing

    def ids_one(self, text: str) -> None:
        return None  # no id-only path either

    def segment_one(self, text: str) -> np.ndarray:
        return self.segment([text])[0]

    def segment(self, texts: Sequence[str], num_threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        return self._rows(list(texts))

    def segment_parts(self, texts: Sequence[str], num_threads: int | None = None, template=None):
        return [self._rows(list(texts))], 1

    def _rows(self, texts: list) -> tuple[np.ndarray, np.ndarray]:
        st = self.staged
        if st._shape is not None and not self.trim_offsets:
            from .metaspace_rows import shape_rows

            return shape_rows(st, st._shape, texts)
        return self._staged_rows(texts)

    def _staged_rows(self, texts: list) -> tuple[np.ndarray, np.ndarray]:
        """The rows, stage by stage (any pipeline): Python per text and per
        character of its parts, whole-array steps per token."""
        st = self.staged
        words: list[str] = []
        flat_s: list[int] = []  # the parts' characters' spans, joined
        flat_e: list[int] = []
        word_base: list[int] = []
        item_word: list[bool] = []  # per item (an added token or a part the model encodes), in order
        item_id: list[int] = []
        item_a: list[int] = []
        item_b: list[int] = []
        item_index: list[int] = []
        items_per_text = np.zeros(len(texts) + 1, dtype=np.int64)
        matched: list[tuple[int, int]] = []  # per added token: its spaces (trim_offsets)
        for k, t in enumerate(texts):
            if type(t) is not str:
                raise TypeError(f"expected texts[{k}] as str, found {type(t).__name__}: {t!r:.80}")
            items = st.items(t)
            for index, (part, i) in enumerate(items):
                item_index.append(index)
                if i is not None:
                    a, b = part.original_span(0, len(part.text))
                    item_word.append(False), item_id.append(i), item_a.append(a), item_b.append(b)
                    if self.trim_offsets:  # (HF trims an added token as the text it matched)
                        matched.append(self._count(part.text))
                    continue
                item_word.append(True), item_id.append(0), item_a.append(0), item_b.append(len(part.text))
                word_base.append(len(flat_s))
                words.append(part.text)
                flat_s.extend(part.starts)
                flat_e.extend(part.ends)
            items_per_text[k + 1] = items_per_text[k] + len(items)
        ids, starts, ends, splits = st.model.encode_words(words)
        is_word = np.array(item_word, dtype=bool)
        counts = np.ones(is_word.size, dtype=np.int64)
        counts[is_word] = np.diff(splits)
        token_is_word = np.repeat(is_word, counts)
        out = np.empty((4, int(counts.sum())), dtype=np.int32)
        out[3] = np.repeat(np.array(item_index, dtype=np.int64), counts)
        added = ~is_word
        out[0, ~token_is_word] = np.array(item_id, dtype=np.int64)[added]
        out[1, ~token_is_word] = np.array(item_a, dtype=np.int64)[added]
        out[2, ~token_is_word] = np.array(item_b, dtype=np.int64)[added]
        word_of = np.repeat(np.arange(len(words)), np.diff(splits))
        base = np.array(word_base, dtype=np.int64)[word_of]
        last = np.array(item_b, dtype=np.int64)[is_word][word_of] - 1  # (HF's offsets of affix bytes may run past it)
        fs, fe = np.array(flat_s, dtype=np.int64), np.array(flat_e, dtype=np.int64)
        out[0, token_is_word] = ids
        out[1, token_is_word] = fs[base + np.minimum(starts, last)] if ids.size else []
        out[2, token_is_word] = fe[base + np.clip(ends.astype(np.int64) - 1, 0, last)] if ids.size else []
        item_end = np.concatenate([[0], np.cumsum(counts)])
        row_splits = item_end[items_per_text]
        if self.trim_offsets:
            where = np.flatnonzero(~token_is_word)
            self._trim(out, row_splits, dict(zip(where.tolist(), matched)))
        return out, row_splits

    def _trim(self, out: np.ndarray, row_splits: np.ndarray, matched: dict) -> None:
        """HF's ``process_offsets`` (ByteLevel's ``trim_offsets``), per text."""
        keep_one = self.staged._trim_prefix
        for r in range(row_splits.size - 1):
            for j in range(int(row_splits[r]), int(row_splits[r + 1])):
                lead, trail = matched[j] if j in matched else self._space_counts(int(out[0, j]))
                if not lead and not trail:
                    continue
                a, b = int(out[1, j]), int(out[2, j])
                if lead:
                    if (j == row_splits[r] or a == 0) and keep_one and lead == 1:
                        lead = 0
                    a = min(a + lead, b)
                if trail and b >= trail:
                    b = max(b - trail, a)
                out[1, j], out[2, j] = a, b
