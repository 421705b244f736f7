"""A BPE as the matching stage of the shared HF pipeline: token rows.

The pipeline (:mod:`segkit.presets.pipeline`) asks a preset for tokens as
(4, n) int32 rows, ``ids, starts, ends, word index``, with character
offsets into the text as given, and row splits per text.  :class:`BPERows`
makes them from a :class:`segkit.BPE` in whole-batch steps, as HF
``tokenizers`` defines them for a byte-level BPE:

* a token's offsets cover the characters of its bytes (a token that starts
  inside a character starts at it; one that ends inside a character ends
  after it: byte-level tokens can split a character);
* its word index is the index of its pre-token (the piece of the
  pre-tokenizer, an added token being a piece of its own) in the text;
* with ``trim_offsets`` (the ByteLevel post-processor's), the spaces at
  the start and the end of a token are left out of its offsets (a token of
  spaces only becomes an empty span at its end);
* offsets are into the original text.  A normalizer (NFC, ...) that
  changes a text maps each character it writes back to the input as HF
  does (the normalization crate's changes applied as
  ``NormalizedString.transform`` applies them: a reordered mark takes the
  span of the place it lands on); where this process's Unicode writes
  another text than those tables, a run of characters that normalizes on
  its own maps its characters to the input characters they are, else to
  the run's first.

One call: the pieces (compiled or regex pre-tokenizer), BPE over all of
them, byte spans and their characters from compiled kernels; Python work
is per text (its length), never per token.
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Sequence

import numpy as np

from ...runtime.jit import kernel
from .codec import char_offsets, token_spans
from .files import normalize
from .single import ASCII_SLOT, PLAIN_SLOT, RES_ROWS, TRIM_SLOT


@kernel
def _trim_spaces(buf, begin, end, cs, ce, first_byte_of_row, row_of_token):
    """ByteLevel's ``trim_offsets``: the leading and trailing space bytes of
    each token (byte span ``begin:end`` of ``buf``) moved out of its
    character offsets ``cs:ce`` (spaces are one byte, one character)."""
    for t in range(begin.size):
        lead = 0
        b = begin[t]
        while b + lead < end[t] and buf[b + lead] == 0x20:
            lead += 1
        trail = 0
        while end[t] - 1 - trail >= b and buf[end[t] - 1 - trail] == 0x20:
            trail += 1
        if lead:
            cs[t] = min(cs[t] + lead, ce[t])
        if trail and ce[t] >= trail:
            ce[t] = max(ce[t] - trail, cs[t])


def _alignment(original: str, form: str) -> np.ndarray:
    """For each character ``normalize(form, original)`` writes, the index of
    the input character it maps back to (see the module documentation).

    The text is cut into runs that normalize on their own: a run grows
    while the next character is a combining mark or composes with it (a
    Hangul vowel after its consonant)."""
    out: list[int] = []
    i, n = 0, len(original)
    while i < n:
        j = i + 1
        written = unicodedata.normalize(form, original[i:j])
        while j < n:
            c = original[j]
            longer = unicodedata.normalize(form, original[i:j + 1])
            if not unicodedata.combining(c) and len(longer) == len(written) + len(unicodedata.normalize(form, c)):
                break
            written = longer
            j += 1
        # The first character written is the run's first; the later ones,
        # from the last, are the input characters they are (marks left as
        # they were: the last of equal ones, composition took the first),
        # else the run's first.
        later = [i] * (len(written) - 1)
        limit = j
        for k in range(len(written) - 1, 0, -1):
            found = original.rfind(written[k], i + 1, limit)
            if found >= 0:
                later[k - 1] = found
                limit = found
        out.append(i)
        out.extend(later)
        i = j
    return np.asarray(out, dtype=np.int64)


class BPERows:
    """The matching stage of a :class:`segkit.Tokenizer` over a BPE.

    Parameters
    ----------
    bpe
        The :class:`segkit.BPE` (a tokenizer.json's, or a tiktoken file's:
        then every special token is matched in the text, as HF does).
    trim_offsets
        The ByteLevel post-processor's ``trim_offsets``.
    """

    def __init__(self, bpe, trim_offsets: bool = False) -> None:
        self.bpe = bpe
        self.trim_offsets = trim_offsets
        hf = bpe._mode == "tokenizer.json"
        self._plan_args = ((), "all") if hf else ("all", ())
        self._form = bpe._normalizer if hf else None
        # The latency path (:mod:`.single`): a fused kernel, per-thread scratch.
        self._single = None
        self._no_single = bpe._prefix_at is not None
        self._ids_sc = None
        if bpe._fast and bpe._prefix_at is None:
            from .special_tokens import NO_SPECIALS
            from .text import Scratch

            self._single = Scratch(bpe._pre.kind, NO_SPECIALS if hf else bpe._special.plan("all", ()))
            # (the id-only kernel's scratch: the model's own for that plan)
            self._ids_sc = bpe._scratch_for(self._single.plan)
        self._local = threading.local()
        self._entry = None
        self._chain_entry = None

    def encode_one(self, text: str, opts: np.ndarray, post):
        """``(data, overflow)`` of one text with the option vector ``opts``
        in one compiled call (:mod:`.single`): the token rows when the
        options are plain, else the (8, n) encoding.  The model's fused
        kernel takes the text's bytes when it has one and no added token
        may occur in the text; otherwise the pre-tokenizer's pieces go to
        :func:`~.single.encode_pieces_rows`.  None where neither applies
        (a text that its normalizer changes, a long text, a lone
        surrogate, a str subclass): the caller takes the batch path."""
        if type(text) is not str or self._no_single:
            return None
        bpe = self.bpe
        if self._form is not None:
            if not text.isascii() and not unicodedata.is_normalized(self._form, text):
                return None
        try:
            data = text.encode()
        except UnicodeEncodeError:
            return None
        sc = self._single
        if sc is None or (bpe._added is not None and bpe._added.may_occur(text, text)):
            if sc is None and bpe._chain is not None:
                got = self._encode_chain(text, data, opts, post)
                if got is not None:
                    return got
            return self._encode_pieces(text, len(data), opts, post)
        try:
            arr, _, cap = sc.local.got
            res = self._local.res
        except AttributeError:
            arr, _, cap = sc.get(len(data))
            arr[TRIM_SLOT] = self.trim_offsets
            res = self._res(256)
        if cap < len(data):
            if len(data) > _SINGLE_BYTES:
                return None
            arr, _, cap = sc.get(len(data))
            arr[TRIM_SLOT] = self.trim_offsets
        arr[ASCII_SLOT] = len(data) == len(text)
        while True:
            entry = self._entry
            if entry is None:
                from ...engine.dispatch import resolve_entry
                from .single import encode_single_rows

                n, self._entry = resolve_entry(encode_single_rows, data, bpe._model, arr, bpe._table, opts, res)
            else:
                n = entry(data, bpe._model, arr, bpe._table, opts, res)
            if n >= 0:
                return (res[:4, :n] if arr[PLAIN_SLOT] else res[4:, :n]).copy(), None
            if n > -(1 << 40):  # too few columns: grow them
                res = self._res(max(-n, 2 * res.shape[1]))
                continue
            return self._settle(n, res, opts, post)

    def ids_one(self, text: str) -> list[int] | None:
        """The ids of one text for plain options (one sequence, no
        template, truncation or padding) through the model's id-only kernel,
        as :meth:`segkit.BPE.encode` makes them: the first row of what
        :meth:`plain_rows` gives, without the rows.  None where
        :meth:`encode_one` would not serve the text (the caller takes the
        rows path)."""
        if type(text) is not str or self._no_single:
            return None
        bpe = self.bpe
        if self._form is not None and not text.isascii() and not unicodedata.is_normalized(self._form, text):
            return None
        if bpe._added is not None and bpe._added.may_occur(text, text):
            return None
        sc = self._ids_sc
        if sc is None:
            if bpe._chain is None or len(text) > _SINGLE_BYTES:
                return None
            # (a tokenizer.json's: normalized and free of added tokens, checked
            # above, so not checked again; a tiktoken file's special tokens
            # are still searched for)
            return bpe._chain_ids(text, bpe._mode == "tokenizer.json")
        try:
            data = text.encode()
            arr, off, cap = sc.local.got
        except UnicodeEncodeError:
            return None
        except AttributeError:  # this thread's first text
            return None if len(text) > _SINGLE_BYTES else bpe._fast_list(text, sc)
        entry = bpe._entry
        if cap < len(data) or entry is None:
            return None if len(data) > _SINGLE_BYTES else bpe._fast_list(text, sc)
        k = entry(data, bpe._model, arr, bpe._table)
        return arr[off : off + k].tolist() if k >= 0 else None

    def plain_rows(self, text: str, opts: np.ndarray, post) -> np.ndarray:
        """The (4, n) rows of one text for plain options ``opts``."""
        got = self.encode_one(text, opts, post)
        return got[0] if got is not None else self.segment_one(text)

    def _res(self, columns: int) -> np.ndarray:
        res = self._local.res = np.zeros((RES_ROWS, columns), dtype=np.int32)
        return res

    def _state(self) -> np.ndarray:
        state = getattr(self._local, "state", None)
        if state is None:
            state = self._local.state = np.zeros(8, dtype=np.int64)
            state[TRIM_SLOT] = self.trim_offsets
        return state

    def _encode_chain(self, text: str, data: bytes, opts: np.ndarray, post):
        """:meth:`encode_one` through the model's chain of compiled patterns
        (:func:`~.single.encode_chain_rows`), for a text with no special or
        added token in it; None where it does not apply."""
        from .single import CHAIN_FAILED

        bpe = self.bpe
        if len(data) > _SINGLE_BYTES or (bpe._mode != "tokenizer.json" and bpe._special_re is not None
                                         and bpe._special_re.search(text)):
            return None
        if bpe._added is not None and bpe._added.may_occur(text, text):
            return None
        cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        state = self._state()
        state[ASCII_SLOT] = len(data) == len(text)
        res = getattr(self._local, "res", None)
        if res is None:
            res = self._res(256)
        while True:
            entry = self._chain_entry
            if entry is None:
                from ...engine.dispatch import resolve_entry
                from .single import encode_chain_rows

                n, self._chain_entry = resolve_entry(encode_chain_rows, cps, data, *bpe._chain, bpe._model, opts,
                                                     res, state)
            else:
                n = entry(cps, data, *bpe._chain, bpe._model, opts, res, state)
            if n >= 0:
                return (res[:4, :n] if state[PLAIN_SLOT] else res[4:, :n]).copy(), None
            if n == CHAIN_FAILED:
                return None
            if n > -(1 << 40):
                res = self._res(max(-n, 2 * res.shape[1]))
                continue
            return self._settle(n, res, opts, post)

    def _encode_pieces(self, text: str, nbytes: int, opts: np.ndarray, post):
        """:meth:`encode_one` through the pre-tokenizer's pieces."""
        from .single import encode_pieces_rows

        if nbytes > _SINGLE_BYTES:
            return None
        bpe = self.bpe
        pieces = bpe._compiled_pieces([text], self._plan_args, False, 0)
        if pieces is None:
            pieces = bpe._pieces([text], bpe._plan(*self._plan_args), False, 0)
        state = self._state()
        res = getattr(self._local, "res", None)
        if res is None:
            res = self._res(256)
        state[ASCII_SLOT] = nbytes == len(text)
        while True:
            n = encode_pieces_rows(pieces.data, pieces.starts, pieces.ends, pieces.ids, bpe._model, opts, res,
                                   state)
            if n >= 0:
                return (res[:4, :n] if state[PLAIN_SLOT] else res[4:, :n]).copy(), None
            if n > -(1 << 40):
                res = self._res(max(-n, 2 * res.shape[1]))
                continue
            return self._settle(n, res, opts, post)

    @staticmethod
    def _settle(n: int, res: np.ndarray, opts: np.ndarray, post):
        from ..pipeline.postprocess import SINGLE_CUT, SINGLE_FAILED
        from .single import DISALLOWED, INCONSISTENT

        if n == SINGLE_FAILED:
            raise ValueError("cannot truncate as asked: max_length leaves no room for the text")
        if n in (DISALLOWED, INCONSISTENT):  # pragma: no cover - plans allow every special; tables are built
            raise RuntimeError("segkit.Tokenizer: inconsistent tables")
        k = SINGLE_CUT - n
        out, _, ovf = post.apply(res[:4, :k].copy(), np.array([0, k], dtype=np.int64), 1, False, opts)
        return out, post.first_overflow(ovf)

    # The three entry points the shared pipeline calls.
    def segment_one(self, text: str) -> np.ndarray:
        return self.segment([text])[0]

    def segment(self, texts: Sequence[str], num_threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        return self._rows(list(texts))

    def segment_parts(self, texts: Sequence[str], num_threads: int | None = None, template=None):
        return [self._rows(list(texts))], 1

    def _rows(self, texts: list) -> tuple[np.ndarray, np.ndarray]:
        bpe = self.bpe
        for i, t in enumerate(texts):
            if type(t) is not str:
                raise TypeError(f"expected texts[{i}] as str, found {type(t).__name__}: {t!r:.80}")
        if bpe._prefix_at is not None:
            raise ValueError("this tokenizer.json's ByteLevel puts a space before pieces (add_prefix_space=true), "
                             "which has no place in the text: offsets for it are not supported yet (BPE.encode "
                             "gives the ids)")
        pieces = bpe._compiled_pieces(texts, self._plan_args, False, 0)
        if pieces is None:
            pieces = bpe._pieces(texts, bpe._plan(*self._plan_args), False, 0)
        ids, piece_ends = bpe._run(pieces)
        n = len(texts)
        token_rows = bpe._row_splits(piece_ends, pieces.row_splits)
        begin, end = token_spans(ids, piece_ends, pieces.starts, pieces.ends, pieces.ids, bpe._tok_len)
        written = [t if self._form is None or unicodedata.is_normalized(self._form, t) else
                   normalize(self._form, t) for t in texts]
        row_bytes = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.fromiter((len(t) if t.isascii() else len(t.encode("utf-8")) for t in written), np.int64, n),
                  out=row_bytes[1:])
        counts = np.diff(token_rows)
        row_of_token = np.repeat(np.arange(n, dtype=np.int64), counts)
        cs, ce = char_offsets(pieces.data, begin, end, row_bytes, row_of_token)
        if self.trim_offsets:
            _trim_spaces(pieces.data, begin, end, cs, ce, row_bytes, row_of_token)
        # Word index: the piece of each token, counted from the text's first piece.
        piece_of_token = np.repeat(np.arange(piece_ends.size, dtype=np.int64),
                                   np.diff(np.concatenate([[0], piece_ends]).astype(np.int64)))
        words = piece_of_token - np.repeat(pieces.row_splits[:-1], counts)
        for r in range(n):
            if written[r] is not texts[r]:  # the normalizer changed this text: back to its characters
                a, b = int(token_rows[r]), int(token_rows[r + 1])
                spans = _hf_spans(texts[r], self._form, written[r])
                if spans is not None:
                    cs[a:b], ce[a:b] = _back_spans(*spans, cs[a:b], ce[a:b], len(texts[r]))
                else:
                    align = _alignment(texts[r], self._form)
                    cs[a:b], ce[a:b] = _back(align, cs[a:b], ce[a:b], len(texts[r]))
        out = np.empty((4, ids.size), dtype=np.int32)
        out[0] = ids
        out[1] = cs
        out[2] = ce
        out[3] = words
        return out, token_rows


#: texts of more bytes than this take the batch path (the scratch is kept per thread)
_SINGLE_BYTES = 1 << 16


def _hf_spans(original: str, form: str, written: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The original span of each character ``written`` (``original`` under
    the normal form ``form``), as HF's alignments give them: the changes of
    the normalization crate (:func:`~segkit.presets.pipeline.unicode_forms.nf_items`,
    a mark that canonical ordering moves takes the span of the place it lands
    on) applied as ``NormalizedString.transform`` does.  None where those
    tables write another text than :mod:`unicodedata` (a character newer
    than the crate's Unicode): :func:`_alignment` maps it then."""
    from ..pipeline.normalized import NormalizedText
    from ..pipeline.unicode_forms import nf_items

    t = NormalizedText.of(original)
    t.transform(nf_items(original, form))
    if t.text != written:
        return None
    return np.asarray(t.starts, dtype=np.int64), np.asarray(t.ends, dtype=np.int64)


def _back_spans(starts: np.ndarray, ends: np.ndarray, cs: np.ndarray, ce: np.ndarray,
                length: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets in a normalized text mapped to the original's: from the start
    of the first character's span to the end of the last's (HF's
    ``convert_offsets``)."""
    m = starts.size
    if not m:
        return np.zeros_like(cs), np.zeros_like(ce)
    start = np.where(cs < m, starts[np.minimum(cs, m - 1)], length)
    last = np.where(ce > 0, ends[np.clip(ce - 1, 0, m - 1)], 0)
    return start, np.where(ce <= cs, start, last)


def _back(align: np.ndarray, cs: np.ndarray, ce: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets in a normalized text mapped to the original's characters."""
    m = align.size
    start = np.where(cs < m, align[np.minimum(cs, m - 1)], length) if m else np.zeros_like(cs)
    last = np.where(ce > 0, align[np.clip(ce - 1, 0, max(m - 1, 0))] + 1, 0) if m else np.zeros_like(ce)
    empty = ce <= cs
    return start, np.where(empty, start, last)
