"""Added tokens: strings matched in the text before WordPiece, as HuggingFace's
``AddedVocabulary`` does.

An :class:`AddedToken` is found wherever it occurs in the text and becomes one
token (one word) of its own; the text between added tokens goes through the
usual compiled pass.  HuggingFace's rules, reproduced here:

* tokens with ``normalized=False`` are matched first, on the raw text; then
  each remaining piece is normalized and the tokens with ``normalized=True``
  (their content normalized the same way) are matched on it;
* matches are leftmost-longest and do not overlap; a match that fails its
  ``single_word`` test is dropped (the search does not restart inside it);
* ``single_word``: the match must not have a word character (``\\w``) right
  before or after it (within its piece);
* ``lstrip`` / ``rstrip``: the whitespace before / after the match (within
  its piece, not before the end of the previous match) belongs to the token
  (its offsets include it);
* a token already in the vocabulary keeps its id; others get new ids after
  the vocabulary, in the order added;
* each added token is a word of its own: word ids count the pieces' words
  and the added tokens in text order.

The splitting is Python around one compiled search per text
(:class:`segkit.engine.literals.LiteralSearch`: leftmost-longest, linear in
the text however long the tokens) and runs only on texts where an added
token occurs: one scan of the joined batch finds them.  The pieces between tokens are matched
as one batch by the compiled pass, and a compiled loop stitches the added
tokens back in.
Nothing here runs for a tokenizer without added tokens.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Iterable

import numpy as np

from ...runtime.jit import kernel

from ...runtime import interrupts
from ...runtime.surrogates import check_text
from ..added_matches import find_matches
from ..added_matches import spaces as _spaces

#: HuggingFace BertNormalizer's CJK ranges (``handle_chinese_chars``).
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
        (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))




#: Limits for added tokens read from files (a crafted file must not exhaust memory).
MAX_ADDED_TOKENS = 1 << 20
MAX_ADDED_CHARS = 1 << 24


class AddedToken:
    """A string to match in the text before WordPiece (HF ``tokenizers.AddedToken``).

    Parameters
    ----------
    content
        The string.  Empty (the default, as HF's ``AddedToken()``): a token
        that ``add_tokens`` ignores.
    single_word
        Match only where no word character is right before or after it.
    lstrip, rstrip
        The whitespace before / after a match belongs to the token.
    normalized
        Match on the normalized text (the content normalized likewise)
        rather than on the raw text.  None (default): True, except for
        special tokens (``special=True`` or added by
        :meth:`segkit.WordPiece.add_special_tokens`).
    special
        A special token: ``decode(skip_special_tokens=True)`` drops it.
        :meth:`segkit.WordPiece.add_special_tokens` sets it on the tokens it
        is given, as HF does (``normalized``, if not given, then reads False).

    Examples
    --------
    >>> AddedToken("[NEW]", lstrip=True)
    AddedToken("[NEW]", rstrip=False, lstrip=True, single_word=False, normalized=True, special=False)
    """

    __slots__ = ("content", "single_word", "lstrip", "rstrip", "_normalized", "special")

    def __init__(self, content: str = "", single_word: bool = False, lstrip: bool = False, rstrip: bool = False,
                 normalized: bool | None = None, special: bool = False) -> None:
        if not isinstance(content, str):
            raise TypeError(f"AddedToken content must be a str, found {type(content).__name__} {content!r:.60}")
        for name, v in (("single_word", single_word), ("lstrip", lstrip), ("rstrip", rstrip), ("special", special)):
            if not isinstance(v, bool):
                raise TypeError(f"AddedToken {name} must be True or False, found {v!r:.60}")
        if normalized is not None and not isinstance(normalized, bool):
            raise TypeError(f"AddedToken normalized must be True, False or None, found {normalized!r:.60}")
        self.content = content
        self.single_word = single_word
        self.lstrip = lstrip
        self.rstrip = rstrip
        self._normalized = normalized
        self.special = special

    @property
    def normalized(self) -> bool:
        return (not self.special) if self._normalized is None else self._normalized

    def _key(self) -> tuple:
        return (self.content, self.single_word, self.lstrip, self.rstrip, self.normalized, self.special)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AddedToken) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self.content)

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        # HF's, character for character (the content as it is, in double quotes).
        return (f'AddedToken("{self.content}", rstrip={self.rstrip}, lstrip={self.lstrip}, '
                f"single_word={self.single_word}, normalized={self.normalized}, special={self.special})")

    def __reduce__(self):
        return (AddedToken, (self.content, self.single_word, self.lstrip, self.rstrip, self._normalized, self.special))


def _resolved(tok: AddedToken, special: bool | None) -> AddedToken:
    """``tok`` with ``normalized`` fixed (and ``special`` forced when given)."""
    sp = tok.special if special is None else special
    norm = (not sp) if tok._normalized is None else tok._normalized
    return AddedToken(tok.content, tok.single_word, tok.lstrip, tok.rstrip, norm, sp)


# ------------------------------------------------------------ normalization
@lru_cache(maxsize=None)
def normalization_table(clean_text: bool, strip_accents: bool, lowercase: bool, chinese: bool) -> dict[int, str | None]:
    """``str.translate`` table of HF's BertNormalizer (what each changed
    character becomes; None: deleted)."""
    from .hf_tables import hf_mapping, hf_mask

    table: dict[int, str | None] = dict(hf_mapping(strip_accents, lowercase)) if (strip_accents or lowercase) else {}
    if clean_text:
        for cp in np.flatnonzero(hf_mask("control")).tolist():
            table[cp] = None
        for ch in _spaces():
            if ch != " " and table.get(ord(ch), ch) is not None:
                table[ord(ch)] = " "
    if chinese:
        for a, b in _CJK:
            for cp in range(a, b + 1):
                table[cp] = f" {chr(cp)} "
    return table


class _Vectorised:
    """A ``str.translate`` table as arrays: each code point's output length,
    its single output character, or its place in a pool of longer outputs."""

    def __init__(self, table: dict) -> None:
        self.length = np.ones(0x110000, dtype=np.int64)
        self.single = np.arange(0x110000, dtype=np.uint32)
        self.pool_start = np.zeros(0x110000, dtype=np.int64)
        pool: list[int] = []
        for cp, out in table.items():
            out = out or ""
            self.length[cp] = len(out)
            if len(out) == 1:
                self.single[cp] = ord(out)
            elif out:
                self.pool_start[cp] = len(pool)
                pool.extend(map(ord, out))
        self.pool = np.asarray(pool, dtype=np.uint32)

    def apply(self, cps: np.ndarray) -> np.ndarray:
        """The normalized code points of ``cps``."""
        lens = self.length[cps]
        if (lens == 1).all():
            return self.single[cps]
        starts = np.cumsum(lens) - lens
        out = np.empty(int(lens.sum()), dtype=np.uint32)
        one = lens == 1
        out[starts[one]] = self.single[cps[one]]
        multi = np.flatnonzero(lens > 1)
        if multi.size:
            ml = lens[multi]
            ramp = np.arange(int(ml.sum()), dtype=np.int64) - np.repeat(np.cumsum(ml) - ml, ml)
            out[np.repeat(starts[multi], ml) + ramp] = self.pool[np.repeat(self.pool_start[cps[multi]], ml) + ramp]
        return out


_VECTORISED: dict = {}


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


#: Up to this many strings, texts are searched with ``str.find`` (a fast
#: substring search) once per string rather than with the alternation.
_FIND_STRINGS = 16


def _matching_texts(strings: list[str], search, joined: str, seps: list[int], cps=None) -> list[int]:
    """Indices of the texts (joined, their separators at ``seps``) that
    contain one of ``strings`` (``search``: their
    :class:`~segkit.engine.literals.LiteralSearch`; ``cps``: the code points
    of ``joined``, if already made).  A few strings: one ``str.find`` per
    such text and string (a fast substring search); more: one compiled
    search of the whole batch."""
    from bisect import bisect_left

    if len(strings) > _FIND_STRINGS:
        starts = search.find_code_points(_code_points(joined) if cps is None else cps)[0]
        return np.unique(np.searchsorted(np.asarray(seps, dtype=np.int64), starts)).tolist()
    hits = []
    for needle in strings:
        find = joined.find
        pos = find(needle)
        while pos >= 0:
            k = bisect_left(seps, pos)
            hits.append(k)
            if k >= len(seps):
                break
            pos = find(needle, seps[k] + 1)
    return hits


class AddedVocabulary:
    """The added tokens of one tokenizer and their splitter.

    ``tokens``: id -> :class:`AddedToken` (with ``normalized`` resolved), in
    the order added; ``vocab_size``: ids from here on are new.
    """

    def __init__(self, vocab, table: dict, vocab_size: int, key=None) -> None:
        self._vocab = vocab
        self._table = table
        self._key = key  # identifies the table (its arrays are shared)
        self.vocab_size = vocab_size
        self.tokens: dict[int, AddedToken] = {}
        self.ids: dict[str, int] = {}
        self.sticky_special: set[str] = set()  # contents ever added as special (HF never unmarks one)
        # id -> normalized content of tokens added as normalized=True (as
        # HF's cache: kept when the token is re-added with normalized=False).
        self.norm_cache: dict[int, str] = {}
        self._refresh()

    def copy(self) -> "AddedVocabulary":
        new = AddedVocabulary(self._vocab, self._table, self.vocab_size, self._key)
        new.tokens = dict(self.tokens)
        new.ids = dict(self.ids)
        new.sticky_special = set(self.sticky_special)
        new.norm_cache = dict(self.norm_cache)
        new._refresh()
        return new

    # -------------------------------------------------------------- adding
    def token_to_id(self, content: str) -> int | None:
        i = self.ids.get(content)
        return self._vocab.id(content) if i is None else i

    def add(self, tokens: Iterable, special: bool | None) -> int:
        """Add tokens (str or :class:`AddedToken`) as HF ``add_tokens`` does;
        the number of tokens that were new or changed."""
        items = []
        for i, t in enumerate(tokens):
            if isinstance(t, str):
                t = AddedToken(t, special=bool(special))
            elif not isinstance(t, AddedToken):
                raise TypeError(f"added token {i}: expected str or AddedToken, found {type(t).__name__} {t!r:.60}")
            items.append(_resolved(t, special))
        if self.tokens:
            top = max(self.tokens)
            next_id = top + 1 if top >= self.vocab_size else self.vocab_size
        else:
            next_id = self.vocab_size
        added = 0
        for tok in items:
            if not tok.content:
                continue
            old = self.ids.get(tok.content)
            if old is not None and self.tokens.get(old) == tok:
                continue
            new_id = self.token_to_id(tok.content)
            if new_id is None:
                new_id = next_id
                next_id += 1
            if tok.normalized:
                normed = self.normalize(tok.content)
                if normed != tok.content:
                    self.norm_cache[new_id] = normed
            self.ids[tok.content] = new_id
            self.tokens[new_id] = tok
            added += 1
        self._refresh()
        return added

    def normalize(self, text: str) -> str:
        return text.translate(self._table)

    # ----------------------------------------------------------- splitting
    def _refresh(self) -> None:
        raw: dict[str, int] = {}
        norm: dict[str, int] = {}
        for i, tok in self.tokens.items():
            if tok.normalized:
                pat = self.norm_cache.get(i, tok.content)
                if pat:  # (a content the normalizer deletes entirely never matches)
                    norm.setdefault(pat, i)
            else:
                raw.setdefault(tok.content, i)
        self._raw = raw
        self._norm = norm
        self._raw_search = _searcher(raw)
        self._norm_search = _searcher(norm)
        self.special_ids = frozenset(i for i, t in self.tokens.items() if t.special)
        used = {c for s in list(raw) + list(norm) for c in s}
        # Joins a batch for the search of candidate texts (None: every text is one).
        self._sep = next((c for c in ("\ufdd0", "\ufdd1", "\ufdd2", "\ufdd3", "\U0010fffe") if c not in used), None)

    def _find(self, sentence: str, search, out: list, plain: Callable, cps=None) -> None:
        """HF ``find_matches`` over ``sentence`` (``cps``: its code points,
        if already made): ``out`` gets ``(id, start, end)`` for tokens and
        ``plain(start, end)`` is called for the text between them.
        ``search``: ``(LiteralSearch, ids of its strings)``."""
        finder, ids = search
        starts, stops, which = finder.find_code_points(_code_points(sentence) if cps is None else cps)
        matches = zip(starts.tolist(), stops.tolist(), [ids[k] for k in which.tolist()])
        find_matches(sentence, matches, self.tokens.__getitem__, lambda i, a, b: out.append((i, a, b)), plain)

    def matched(self, text: str) -> dict[tuple[int, int, int], str]:
        """``{(id, start, end): string}`` of the added tokens :meth:`split`
        finds in ``text``: the text each matched as HF's encoding holds it
        (the raw text for a ``normalized=False`` token, the normalized text
        for the others: BERT's spaces around CJK characters included),
        white space it took included (:attr:`segkit.Encoding.tokens`)."""
        strings: dict[tuple[int, int, int], str] = {}
        self.split(text, strings)
        return strings

    def split(self, text: str, strings: dict | None = None) -> list[tuple[int, int, int]]:
        """The pieces of ``text``: ``(id, start, end)`` for added tokens and
        ``(-1, start, end)`` for the text between (character offsets);
        ``strings``, if given, gets what :meth:`matched` gives."""
        pieces: list[tuple[int, int, int]] = []
        if self._raw_search is not None:
            found: list = []

            def raw_plain(a: int, b: int) -> None:
                found.append((-1, a, b))

            self._find(text, self._raw_search, found, raw_plain)
            seq = found
            if strings is not None:
                strings.update(((i, a, b), text[a:b]) for i, a, b in found if i >= 0)
        else:
            seq = [(-1, 0, len(text))] if text else []
        if self._norm_search is None:
            return seq
        for i, a, b in seq:
            if i >= 0:
                pieces.append((i, a, b))
                continue
            piece = text[a:b]
            normed = self.normalize(piece)
            normed_cps = _code_points(normed)
            if not self._norm_search[0].find_code_points(normed_cps)[0].size:
                pieces.append((-1, a, b))
                continue
            # Where each normalized character comes from (HF aligns the
            # characters a normalizer adds with the one they replace).
            lens = self._vectorised().length[_code_points(piece)]
            origin = np.repeat(np.arange(len(piece), dtype=np.int64), lens) + a
            out: list = []

            def norm_plain(s: int, e: int, out=out, origin=origin) -> None:
                out.append((-1, int(origin[s]), int(origin[e - 1]) + 1))

            self._find(normed, self._norm_search, out, norm_plain, normed_cps)
            for j, s, e in out:
                if j >= 0:
                    pieces.append((j, int(origin[s]), int(origin[e - 1]) + 1))
                    if strings is not None:
                        strings[pieces[-1]] = normed[s:e]
                else:
                    pieces.append((j, s, e))
        return pieces

    def _vectorised(self) -> _Vectorised:
        v = _VECTORISED.get(self._key) if self._key is not None else None
        if v is None:
            v = _Vectorised(self._table)
            if self._key is not None:
                _VECTORISED[self._key] = v
        return v

    def candidates(self, texts: list[str]) -> np.ndarray:
        """Indices of the texts where some added token occurs: one scan of
        the joined batch per pattern (the normalized one on the batch
        normalized with numpy)."""
        n = len(texts)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        sep = self._sep
        if sep is None:
            return np.arange(n, dtype=np.int64)
        joined = sep.join(texts)
        hits = np.zeros(n, dtype=bool)
        if self._raw_search is not None:
            lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
            seps = (np.cumsum(lengths + 1) - 1)[:-1].tolist()
            hits[_matching_texts(list(self._raw), self._raw_search[0], joined, seps)] = True
        if self._norm_search is not None:
            normed = self._vectorised().apply(_code_points(joined))
            seps = np.flatnonzero(normed == ord(sep)).tolist()
            if len(seps) != n - 1:  # a text holds the separator: look at every text
                return np.arange(n, dtype=np.int64)
            text = normed.tobytes().decode("utf-32-le", "surrogatepass")
            hits[_matching_texts(list(self._norm), self._norm_search[0], text, seps, normed)] = True
        return np.flatnonzero(hits)


def _searcher(strings: dict[str, int]):
    """``(LiteralSearch of the strings, their ids)``, or None for no strings."""
    if not strings:
        return None
    from ...engine.literals import LiteralSearch

    return LiteralSearch(list(strings)), list(strings.values())


# ---------------------------------------------------------------- segmenting
def segment_with_added(added: AddedVocabulary, texts: list[str], segment_plain: Callable):
    """``(tokens (4, n), row splits)`` of ``texts`` as the compiled pass
    gives them, with the added tokens split out: the pieces between added
    tokens are segmented by ``segment_plain`` (one batch), then offsets
    are shifted and word ids renumbered with numpy."""
    for k, t in enumerate(texts):
        if type(t) is not str:
            raise TypeError(f"the text at index {k} is {type(t).__name__} {t!r:.60}; expected str")
    n = len(texts)
    cand = added.candidates(texts).tolist()
    if not cand:  # no added token occurs: the batch as it is
        return segment_plain(texts)
    # Items: each text without an added token is one plain piece; the
    # others are split (plain pieces, id -1, and added tokens).
    c_text: list[int] = []
    c_sub: list[int] = []
    c_id: list[int] = []
    c_start: list[int] = []
    c_end: list[int] = []
    c_str: list = []
    for t in cand:
        text = texts[t]
        for j, (i, a, b) in enumerate(added.split(text)):
            c_text.append(t)
            c_sub.append(j)
            c_id.append(i)
            c_start.append(a)
            c_end.append(b)
            c_str.append(text[a:b] if i < 0 else None)
    is_cand = np.zeros(n, dtype=bool)
    is_cand[cand] = True
    others = np.flatnonzero(~is_cand)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    m = others.size
    item_text = np.concatenate([others, np.asarray(c_text, dtype=np.int64)])
    item_sub = np.concatenate([np.zeros(m, dtype=np.int64), np.asarray(c_sub, dtype=np.int64)])
    order = np.lexsort((item_sub, item_text))
    item_id = np.concatenate([np.full(m, -1, dtype=np.int64), np.asarray(c_id, dtype=np.int64)])[order]
    item_start = np.concatenate([np.zeros(m, dtype=np.int64), np.asarray(c_start, dtype=np.int64)])[order]
    item_end = np.concatenate([lengths[others], np.asarray(c_end, dtype=np.int64)])[order]
    strings = [texts[t] for t in others.tolist()] + c_str
    plain_texts = [strings[k] for k in order[item_id < 0].tolist()]
    tok, rows = segment_plain(plain_texts)
    return stitch(tok, rows, item_text[order], item_id, item_start, item_end, n)


@interrupts.interruptible("tok")
def stitch(tok, rows, item_text, item_id, item_start, item_end, n_texts: int):
    """Merge the tokens of the plain pieces (``tok``/``rows``, in order)
    with the added tokens into one ``(4, n)`` array per the items' order
    (sorted by text): offsets shifted by each piece's start, word ids
    counted on across the pieces and added tokens of a text."""
    return _stitch(np.ascontiguousarray(tok), rows.astype(np.int64), item_text.astype(np.int64),
                   item_id.astype(np.int64), item_start.astype(np.int64), item_end.astype(np.int64), n_texts)


@kernel
def _stitch(tok, rows, item_text, item_id, item_start, item_end, n_texts):
    n_items = item_id.size
    total = 0
    p = 0
    for k in range(n_items):
        if item_id[k] < 0:
            total += rows[p + 1] - rows[p]
            p += 1
        else:
            total += 1
    out = np.empty((4, total), np.int32)
    out_rows = np.zeros(n_texts + 1, np.int64)
    j = 0
    p = 0
    prev = -1
    base = 0
    for k in range(n_items):
        t = item_text[k]
        if t != prev:
            base = 0
            prev = t
        if item_id[k] < 0:
            a = rows[p]
            b = rows[p + 1]
            p += 1
            s = item_start[k]
            for q in range(a, b):
                out[0, j] = tok[0, q]
                out[1, j] = tok[1, q] + s
                out[2, j] = tok[2, q] + s
                out[3, j] = tok[3, q] + base
                j += 1
            if b > a:
                base += tok[3, b - 1] + 1
        else:
            out[0, j] = item_id[k]
            out[1, j] = item_start[k]
            out[2, j] = item_end[k]
            out[3, j] = base
            j += 1
            base += 1
        out_rows[t + 1] = j
    for t in range(n_texts):  # texts without items (none in practice) end where the previous one does
        if out_rows[t + 1] < out_rows[t]:
            out_rows[t + 1] = out_rows[t]
    return out, out_rows


# ------------------------------------------------------- the WordPiece side
def added_vocabulary_for(wp) -> AddedVocabulary:
    """A new added vocabulary for ``wp``, holding its special tokens (as
    HF's BERT tokenizers hold them: special, not normalized)."""
    s = wp._stages.settings  # (its flavour and normalization settings never change)
    if s["flavour"] != "hf":
        raise ValueError(f"added tokens need flavour 'hf' (HuggingFace's rules), this tokenizer has {s['flavour']!r}")
    if s["cjk"] != "hf" and s["handle_chinese_chars"]:
        raise ValueError("added tokens need cjk='hf' (HuggingFace's CJK ranges), this tokenizer has cjk='bert'")
    strip = s["lowercase"] if s["strip_accents"] is None else bool(s["strip_accents"])
    table = normalization_table(s["clean_text"], strip, s["lowercase"], s["handle_chinese_chars"])
    av = AddedVocabulary(wp.vocab, table, wp.vocab.size, (s["clean_text"], strip, s["lowercase"], s["handle_chinese_chars"]))
    av.add([AddedToken(t, special=True) for t in wp.special_token_list], True)
    av.sticky_special = set(wp.special_token_list)
    return av


def add_tokens(wp, tokens, special: bool | None) -> int:
    """``wp.add_tokens`` / ``wp.add_special_tokens``: the number added."""
    if isinstance(tokens, (str, bytes, bytearray, AddedToken)):
        raise TypeError("add_tokens expects a list of str or AddedToken, found a single "
                        f"{type(tokens).__name__}; wrap it in a list")
    try:
        tokens = list(tokens)
    except TypeError:
        raise TypeError(f"add_tokens expects a list of str or AddedToken, found {type(tokens).__name__}") from None
    for i, t in enumerate(tokens):  # (a lone surrogate: segkit.runtime.surrogates)
        content = t.content if isinstance(t, AddedToken) else t
        if isinstance(content, str):
            check_text(content, f"added token {i} ({content!r:.40})")
    if special:
        # HF marks the caller's AddedToken objects special (whether or not
        # they are then added); a normalized flag not given then reads False.
        for t in tokens:
            if isinstance(t, AddedToken):
                t.special = True
    with wp._lock:  # (one change at a time: none is lost)
        st = wp._stages
        av = added_vocabulary_for(wp) if st.added is None else st.added.copy()
        n = av.add(tokens, special)
        av.sticky_special.update(t.content for t in av.tokens.values() if t.special)
        wp._stages = with_added(wp, st, av)  # published whole (see segkit.presets.pipeline.stages)
    return n


def install(wp, av: AddedVocabulary) -> None:
    """Make ``av`` the added vocabulary of ``wp`` (one new state)."""
    with wp._lock:
        wp._stages = with_added(wp, wp._stages, av)


def with_added(wp, st, av: AddedVocabulary):
    """The state ``st`` of ``wp`` with the added vocabulary ``av``: its
    matching stage splits the added tokens out first (:class:`AddedMatcher`),
    its results and decoder name tokens by the extended id -> token list."""
    from .decoding import Decoder

    itos = list(wp.vocab.id_to_token)
    top = max(av.tokens, default=-1) + 1
    if top > len(itos):
        itos.extend([None] * (top - len(itos)))
    for i, tok in av.tokens.items():
        itos[i] = av.norm_cache.get(i, tok.content)  # what HF's id_to_token gives
    # HF's decode drops a token whose string is a special token's content.
    skip = {i for i in map(wp.vocab.id, av.sticky_special) if i is not None and i not in av.tokens}
    skip.update(i for i in av.tokens if itos[i] in av.sticky_special)
    skip = frozenset(skip)
    return st.but(added=av, names=itos, matcher=AddedMatcher(st.plain_matcher, av),
                  decoder=Decoder(_Names(itos, len(wp.vocab), len(av.tokens)), wp.suffix_indicator, skip))


class _Names:
    """id -> token of a vocabulary with added tokens, as the decoder reads it."""

    def __init__(self, itos: list, n_vocab: int, n_added: int) -> None:
        self.itos = itos
        self.what = f"vocabulary of {n_vocab} tokens and {n_added} added"

    def token(self, i: int) -> str:
        t = self.itos[i] if 0 <= i < len(self.itos) else None
        if t is None:
            raise IndexError(f"no token has id {i} ({self.what})")
        return t

    def __len__(self) -> int:
        return sum(t is not None for t in self.itos)


class AddedMatcher:
    """The matching stage of a tokenizer with added tokens: the added tokens
    are split out of the texts, the rest goes through ``base`` (a
    :class:`~segkit.presets.wordpiece.matching.Matcher`) as one batch."""

    def __init__(self, base, added: AddedVocabulary) -> None:
        self.base = base
        self.added = added
        self.packed = base.packed
        self.rewrite = base.rewrite
        self.byte_offsets = base.byte_offsets

    def segment(self, texts, num_threads: int | None = None):
        return segment_with_added(self.added, list(texts), lambda ts: self.base.segment(ts, num_threads))

    def segment_parts(self, texts, num_threads: int | None = None):
        return [self.segment(texts, num_threads)], 1

    def segment_one(self, text: str) -> np.ndarray:
        return self.segment([text])[0]

    def encode_one(self, text: str, opts: np.ndarray, post) -> np.ndarray:
        tok, rows = self.segment([text])
        if post.is_plain(opts):
            return tok, None
        out, _, ovf = post.apply(tok, rows, 1, False, opts)
        return out, post.first_overflow(ovf)


def get_vocab(wp, with_added_tokens: bool, st=None) -> dict[str, int]:
    added = (wp._stages if st is None else st).added
    vocab = {t: i for i, t in enumerate(wp.vocab.id_to_token) if t is not None}
    if with_added_tokens and added is not None:
        vocab.update(added.ids)
    return vocab


def token_to_id(wp, token: str) -> int | None:
    added = wp._stages.added
    return wp.vocab.id(token) if added is None else added.token_to_id(token)


def id_to_token(wp, i: int) -> str | None:
    st = wp._stages
    if st.added is None:
        return wp.vocab.token(i)
    return st.decoder.vocab.token(i)


def replay_added(wp, rows: list, plain: bool, source: str) -> None:
    """The added tokens of a ``tokenizer.json`` (``rows``: ``[id, content,
    single_word, lstrip, rstrip, normalized, special]`` in file order), as
    HF's loader installs them: each added in turn (``add_special_tokens``
    for a special one, ``add_tokens`` otherwise), which gives a token of the
    vocabulary its vocabulary id and the others the next free ids; the ids
    in the file are not used, only compared (HF logs a warning for each
    that differs; here one ``UserWarning`` names them, with the file).
    ``plain``: every token is a special token of the vocabulary, matched on
    the raw text with no flags, which the compiled pass handles by itself
    (its ``special_tokens`` setting): no added vocabulary is installed."""
    if len(rows) > MAX_ADDED_TOKENS:
        raise ValueError(f"{source}: {len(rows)} added tokens, more than the limit of {MAX_ADDED_TOKENS}")
    if sum(len(r[1]) for r in rows) > MAX_ADDED_CHARS:
        raise ValueError(f"{source}: the added tokens hold more than {MAX_ADDED_CHARS} characters")
    if not plain:
        av = added_vocabulary_for(wp)
        av.tokens, av.ids, av.norm_cache = {}, {}, {}
        # (One call: each token carries its own flags, special included, and
        # ids are given in order as HF gives them one call per token.)
        av.add([AddedToken(c, sw, ls, rs, nm, sp) for _, c, sw, ls, rs, nm, sp in rows], None)
        av.sticky_special = {r[1] for r in rows if r[6] and r[1]}
        install(wp, av)
    lookup = wp.token_to_id
    moved = [(r[1], r[0], lookup(r[1])) for r in rows if lookup(r[1]) != r[0]]
    if moved:
        import warnings

        shown = ", ".join(f"{c!r:.40} (id {i} in the file, {'none' if got is None else got} here)"
                          for c, i, got in moved[:3])
        more = f" and {len(moved) - 3} more" if len(moved) > 3 else ""
        warnings.warn(f"{source}: {len(moved)} added token(s) do not get the id the file gives them, as in "
                      f"HuggingFace tokenizers (which assigns added tokens their ids when it loads a file): "
                      f"{shown}{more}", UserWarning, stacklevel=3)


# ----------------------------------------------------------- stored state
def added_state(st) -> list | None:
    """The added tokens of the state ``st`` (a WordPiece's ``_stages``) as
    JSON (model files, pickles): ``[[id, content, single_word, lstrip,
    rstrip, normalized, special], ...]`` in the order added, then the
    contents of every token ever added as special."""
    av = st.added
    if av is None:
        return None
    rows = [[i, t.content, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special] for i, t in av.tokens.items()]
    return [rows, sorted(av.sticky_special)]


def restore_added(wp, state, source: str = "model") -> None:
    """Install the added tokens of :func:`added_state` (from a file: every
    value checked; ValueError naming what is wrong)."""
    if state is None:  # (a tokenizer is made without added tokens)
        return
    if not isinstance(state, list) or len(state) != 2 or not all(isinstance(x, list) for x in state):
        raise ValueError(f"{source}: added_tokens must be a list [tokens, special contents], found {state!r:.80}")
    rows, sticky = state
    if len(rows) > MAX_ADDED_TOKENS:
        raise ValueError(f"{source}: {len(rows)} added tokens, more than the limit of {MAX_ADDED_TOKENS}")
    av = added_vocabulary_for(wp)
    av.tokens, av.ids, av.norm_cache = {}, {}, {}
    chars = 0
    for k, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != 7:
            raise ValueError(f"{source}: added token {k} must be [id, content, single_word, lstrip, rstrip, "
                             f"normalized, special], found {row!r:.80}")
        i, content = row[0], row[1]
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < (1 << 31) - 1:
            raise ValueError(f"{source}: added token {k} has id {i!r:.60}, expected an int in [0, 2**31 - 1)")
        if not isinstance(content, str) or not content:
            raise ValueError(f"{source}: added token {k} has content {content!r:.60}, expected a non-empty str")
        if not all(isinstance(f, bool) for f in row[2:]):
            raise ValueError(f"{source}: added token {k} ({content!r:.40}) has flags {row[2:]!r:.80}, expected true/false")
        chars += len(content)
        if chars > MAX_ADDED_CHARS:
            raise ValueError(f"{source}: the added tokens hold more than {MAX_ADDED_CHARS} characters")
        own = wp.vocab.id(content)
        if own is not None and own != i:
            raise ValueError(f"{source}: added token {content!r:.40} has id {i}, but the vocabulary gives it id {own}")
        if own is None and i < wp.vocab.size:
            raise ValueError(f"{source}: added token {content!r:.40} has id {i}, which the vocabulary uses "
                             f"(ids of new tokens start at {wp.vocab.size})")
        if i in av.tokens or content in av.ids:
            raise ValueError(f"{source}: added token {content!r:.40} (id {i}) is listed twice")
        tok = av.tokens[i] = AddedToken(content, *row[2:])
        av.ids[content] = i
        if tok.normalized and av.normalize(content) != content:
            av.norm_cache[i] = av.normalize(content)
    if not all(isinstance(c, str) for c in sticky):
        raise ValueError(f"{source}: the special contents of the added tokens must be strings")
    if av.tokens:
        # Tables are indexed by id (install): ids must be dense, as a
        # vocabulary's are (segkit.models.vocabulary.check_ids).
        from ...models.vocabulary import SPARSE_FACTOR, SPARSE_SLACK

        top = max(av.tokens)
        n = wp.vocab.size + len(av.tokens)
        if top > n * SPARSE_FACTOR + SPARSE_SLACK:
            raise ValueError(f"{source}: added token {av.tokens[top].content!r:.40} has id {top}, but there are only "
                             f"{n} tokens; ids must be dense enough to index tables (at most {SPARSE_FACTOR} x "
                             f"tokens + {SPARSE_SLACK})")
    av._refresh()
    av.sticky_special = set(sticky)
    install(wp, av)
