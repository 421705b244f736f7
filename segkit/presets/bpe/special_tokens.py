"""Special tokens in text, with tiktoken's ``allowed_special`` / ``disallowed_special``.

tiktoken's ``Encoding.encode(text, allowed_special=..., disallowed_special=...)``:

1. ``"all"`` as ``allowed_special`` means every special token;
   ``"all"`` as ``disallowed_special`` (the default) means every special
   token that is not allowed.  Disallowed strings need not be special
   tokens.
2. If any disallowed string occurs anywhere in the text, even inside an
   allowed special token, ``ValueError`` (raised before anything is
   encoded).
3. The text is split at allowed special tokens, leftmost first; text
   between them is pre-tokenized as a text of its own (``$`` and
   ``(?!\\S)`` see the special token as the end); special tokens that are
   neither allowed nor disallowed are ordinary text.

Overlapping special tokens: tiktoken searches with one alternation of all
special tokens in the order of a Rust hash map, so where two start at the
same position, which one it finds is arbitrary, and if that one is not
allowed, the allowed one starting there is not found either.  segkit takes
the **longest allowed** token at the leftmost position.  The two agree
whenever no two special tokens start at one position of the text, which is
always the case for tiktoken's own encodings (none of their special tokens
is a prefix of another).

Compiled matching
    :func:`SpecialTokens.plan` packs the allowed and disallowed strings of one
    call into one int64 array, bucketed by first byte (longest first).
    :func:`next_special` scans UTF-8 bytes for the leftmost allowed match,
    raising nothing but reporting the first disallowed occurrence it passes
    (including inside the match it returns).  A valid UTF-8 needle matches
    valid UTF-8 only at character boundaries, so bytes need no decoding.
    Cost: one table read per byte, plus a comparison with the tokens of a
    byte's bucket where one starts (bounded by the total length of the
    special tokens sharing a first byte: about 80 bytes for cl100k).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
from ...runtime.jit import kernel

ALLOWED = 1
DISALLOWED = 2

# pack layout: [n, has_disallowed, bucket starts (257), index (4 per token:
# offset of its bytes, length, id, role), bytes (one per slot)]
_BUCKETS = 2
_INDEX = _BUCKETS + 257

#: a plan with no special tokens (``encode_ordinary``)
NO_SPECIALS = np.zeros(_INDEX, dtype=np.int64)
NO_SPECIALS.setflags(write=False)


def pack_plan(strings: Mapping[str, tuple[int, int]]) -> np.ndarray:
    """Pack ``{string: (id, role)}`` (role :data:`ALLOWED` or :data:`DISALLOWED`)
    into the int64 array :func:`next_special` reads."""
    items = []
    for s, (tid, role) in strings.items():
        raw = _utf8(s, "special token")
        items.append((raw[0], -len(raw), raw, int(tid), int(role)))
    items.sort(key=lambda x: (x[0], x[1]))
    n = len(items)
    total = sum(len(x[2]) for x in items)
    pack = np.zeros(_INDEX + 4 * n + total, dtype=np.int64)
    pack[0] = n
    pack[1] = any(x[4] == DISALLOWED for x in items)
    firsts = np.array([x[0] for x in items], dtype=np.int64)
    pack[_BUCKETS : _BUCKETS + 257] = np.searchsorted(firsts, np.arange(257), side="left")
    off = _INDEX + 4 * n
    for k, (_, _, raw, tid, role) in enumerate(items):
        pack[_INDEX + 4 * k : _INDEX + 4 * k + 4] = (off, len(raw), tid, role)
        pack[off : off + len(raw)] = np.frombuffer(raw, dtype=np.uint8)
        off += len(raw)
    pack.setflags(write=False)
    return pack


def _utf8(s, what: str) -> bytes:
    if not isinstance(s, str):
        raise TypeError(f"a {what} must be a str, found {type(s).__name__} {s!r}")
    if not s:
        raise ValueError(f"a {what} must be a non-empty string, found ''")
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"the {what} {s!r} has a lone surrogate at position {e.start}: not valid UTF-8") from None


@kernel(inline="always")
def _token_at(buf, i, end, pack, t):
    """Whether token ``t`` of ``pack`` occurs at byte ``i`` (its first byte is known equal)."""
    x = _INDEX + 4 * t
    off = pack[x]
    ln = pack[x + 1]
    if i + ln > end:
        return False
    for j in range(1, ln):
        if buf[i + j] != pack[off + j]:
            return False
    return True


@kernel
def _disallowed_inside(buf, lo, hi, end, pack):
    """Position and token index of the first disallowed string starting in
    ``buf[lo:hi]`` (may run past ``hi``), or (-1, -1)."""
    for i in range(lo, hi):
        b = np.int64(buf[i])
        for t in range(pack[_BUCKETS + b], pack[_BUCKETS + b + 1]):
            if pack[_INDEX + 4 * t + 3] == DISALLOWED and _token_at(buf, i, end, pack, t):
                return i, t
    return -1, -1


@kernel
def next_special(buf, i, end, pack):
    """The leftmost allowed special token in ``buf[i:end]`` (longest where
    several start at one position): ``(start, end, t)``, ``t`` its index in
    ``pack`` (its id is :func:`token_id`).  ``t == -1``: none (``start ==
    end == end``).  ``t <= -2``: a disallowed string, token ``-2 - t``,
    starts at ``start`` (the first one, left to right).
    """
    if pack[0] == 0:
        return end, end, -1
    while i < end:
        b = np.int64(buf[i])
        lo = pack[_BUCKETS + b]
        hi = pack[_BUCKETS + b + 1]
        if lo < hi:
            best = -1
            for t in range(lo, hi):
                if _token_at(buf, i, end, pack, t):
                    if pack[_INDEX + 4 * t + 3] == DISALLOWED:
                        return i, i, -2 - t
                    if best < 0:
                        best = t
            if best >= 0:
                e = i + pack[_INDEX + 4 * best + 1]
                if pack[1] != 0:  # tiktoken also looks for disallowed strings inside
                    d, t = _disallowed_inside(buf, i + 1, e, end, pack)
                    if d >= 0:
                        return d, d, -2 - t
                return i, e, best
        i += 1
    return end, end, -1


@kernel(inline="always")
def token_id(pack, t):
    """Id of token index ``t`` of ``pack``."""
    return pack[_INDEX + 4 * t + 2]


def token_string(pack: np.ndarray, t: int) -> str:
    """The string of token index ``t`` of ``pack`` (for error messages)."""
    off, ln = int(pack[_INDEX + 4 * t]), int(pack[_INDEX + 4 * t + 1])
    return pack[off : off + ln].astype(np.uint8).tobytes().decode("utf-8")


def disallowed_error(token: str, position: int, text_index: int | None = None) -> ValueError:
    """The ValueError for a disallowed special token found in a text."""
    where = "the text" if text_index is None else f"text {text_index}"
    return ValueError(
        f"{where} contains the special token {token!r} at position {position}, which disallowed_special "
        f"forbids: pass allowed_special={{{token!r}}} (or allowed_special='all') to encode it as a special "
        f"token, or leave it out of disallowed_special (disallowed_special=() checks nothing) to encode it "
        f"as ordinary text"
    )


class SpecialTokens:
    """A tokenizer's special tokens, and the matching plan of each call.

    Parameters
    ----------
    tokens
        ``{string: id}``: the special tokens (non-empty strings).

    Examples
    --------
    >>> sp = SpecialTokens({"<|endoftext|>": 100257, "<|fim_prefix|>": 100258})
    >>> sp.split("a<|endoftext|>b", allowed_special="all")
    [('a', -1), ('<|endoftext|>', 100257), ('b', -1)]
    >>> sp.split("a<|endoftext|>b", disallowed_special=())
    [('a<|endoftext|>b', -1)]
    >>> sp.split("a<|endoftext|>b")
    Traceback (most recent call last):
    ...
    ValueError: the text contains the special token '<|endoftext|>' at position 1, which disallowed_special forbids: ...
    """

    def __init__(self, tokens: Mapping[str, int]) -> None:
        if not isinstance(tokens, Mapping):
            raise TypeError(f"special tokens must be a mapping of str to int id, found {type(tokens).__name__}")
        self.tokens: dict[str, int] = {}
        for s, tid in tokens.items():
            _utf8(s, "special token")
            if isinstance(tid, bool) or not isinstance(tid, (int, np.integer)) or tid < 0:
                raise ValueError(f"the id of special token {s!r} must be a non-negative int, found {tid!r}")
            self.tokens[s] = int(tid)
        self._plans: dict[tuple, np.ndarray] = {}

    def __repr__(self) -> str:
        return f"SpecialTokens({self.tokens!r})"

    def plan(
        self,
        allowed_special: str | Collection[str] = (),
        disallowed_special: str | Collection[str] = "all",
    ) -> np.ndarray:
        """The packed plan for one call with tiktoken's arguments (cached).

        ``allowed_special``: ``"all"`` or a collection of special tokens to
        encode as such (other strings in it are ignored, as tiktoken does).
        ``disallowed_special``: ``"all"`` (every special token not allowed)
        or a collection of strings whose presence is a ValueError.
        """
        key = (_key(allowed_special, "allowed_special"), _key(disallowed_special, "disallowed_special"))
        plan = self._plans.get(key)
        if plan is None:
            allowed = set(self.tokens) if key[0] == "all" else key[0] & self.tokens.keys()
            disallowed = (set(self.tokens) - allowed) if key[1] == "all" else key[1]
            strings = {s: (self.tokens[s], ALLOWED) for s in allowed}
            strings.update((s, (self.tokens.get(s, -1), DISALLOWED)) for s in disallowed)
            plan = pack_plan(strings) if strings else NO_SPECIALS
            if len(self._plans) >= 64:
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def split(
        self,
        text: str,
        allowed_special: str | Collection[str] = (),
        disallowed_special: str | Collection[str] = "all",
    ) -> list[tuple[str, int]]:
        """``text`` cut at its allowed special tokens: ``(string, id)`` pairs,
        id -1 for ordinary text (a plain-Python view, for tests and tools)."""
        plan = self.plan(allowed_special, disallowed_special)
        data = _utf8(text, "text") if text else b""
        buf = np.frombuffer(data, dtype=np.uint8)
        out: list[tuple[str, int]] = []
        p = 0
        while True:
            s, e, t = (int(x) for x in next_special(buf, p, len(buf), plan))
            if t <= -2:
                raise disallowed_error(token_string(plan, -2 - t), len(data[:s].decode("utf-8")))
            if s > p:
                out.append((data[p:s].decode("utf-8"), -1))
            if t < 0:
                return out
            out.append((data[s:e].decode("utf-8"), int(token_id(plan, t))))
            p = e


def _key(arg, name: str):
    if isinstance(arg, str):
        if arg != "all":
            raise ValueError(f"{name} must be 'all' or a collection of strings, found the string {arg!r}")
        return "all"
    try:
        key = frozenset(arg)
    except TypeError:
        raise TypeError(f"{name} must be 'all' or a collection of strings, found {type(arg).__name__}") from None
    for s in key:
        if name == "disallowed_special":
            _utf8(s, "string in disallowed_special")
        elif not isinstance(s, str):
            raise TypeError(f"{name} must hold strings, found {type(s).__name__} {s!r}")
    return key
