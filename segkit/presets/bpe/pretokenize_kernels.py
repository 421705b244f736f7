"""Compiled matchers for the tiktoken pre-tokenization patterns, over UTF-8.

Idea
    Each pattern (:data:`~segkit.presets.bpe.pretokenize.GPT2_PATTERN`,
    ``CL100K_PATTERN``, ``O200K_PATTERN``) is a leftmost-first alternation.
    ``*_match_end(buf, p, end, table)`` returns the end of the match a
    backtracking engine (:mod:`regex`) finds at byte ``p`` of ``buf[:end]``,
    written out by hand: the alternatives in the pattern's order, each
    reduced to what its backtracking can produce (worked out in the comments
    of each matcher).  Matching the whole text is ``p = *_match_end(p)`` until
    ``p == end``: every pattern matches a non-empty string at every position
    (each has a one-character fallback), so the matches tile the text.

Invariant
    ``buf[p:end]`` is valid UTF-8 and ``p`` a character boundary; ``end`` is
    where the text ends for the pattern (``$`` and ``(?!\\S)`` see it as the
    end), so a segment between two special tokens is matched as a text of
    its own, as tiktoken does.

Cost
    Linear.  A match reads the run of one class it starts with, plus at most
    one more run; where a match ends before the end of what it read, the
    text it read and did not take is taken by the next one or two matches
    (which read it again): each byte is read a bounded number of times
    (at most three, o200k's ``[\\p{Lo}][\\p{Lu}]*`` case).  Backtracking of
    ``\\s+(?!\\S)`` and ``\\s*[\\r\\n]`` is resolved from the run's last
    character and last newline, without re-scanning.

Inlining
    The matchers and their per-run helpers are inlined by Numba
    (``inline="always"``): as calls (array arguments are reference-counted
    per call) the whole pass was 25-35% slower.  :func:`decode` and
    :func:`~.char_classes.char_class` are not: LLVM inlines them anyway
    (same speed, measured), while Numba's inlining retypes a function at
    every call site, which made the first compilation of the three matchers
    take 14 s of CPU instead of 4 s.  An encoder's own loops should each
    inline one ``*_match_end`` (a loop holding all three compiles several
    times longer).
"""

from __future__ import annotations

import numpy as np
from ...runtime.jit import kernel

from .char_classes import (
    G_LETTER,
    G_NUMBER,
    G_OTHER,
    G_SPACE,
    GROUP_MASK,
    LOWER_BITS,
    MARK,
    UPPER_BITS,
    char_class,
)
from .special_tokens import next_special, token_id

#: pattern kinds (the ``kind`` argument of :func:`split_row`)
KIND_REGEX = 0
KIND_GPT2 = 1
KIND_CL100K = 2
KIND_O200K = 3
#: Llama 3's pattern (cl100k's before tiktoken rewrote it: ``\s*[\r\n]+`` and
#: ``\s+`` where tiktoken 0.14 has ``\s++$``, ``\s*[\r\n]`` and ``\s``), and
#: Qwen2's (Llama 3's with single digits): cl100k's matcher with two settings.
KIND_LLAMA3 = 4
KIND_QWEN2 = 5


@kernel
def decode(buf, i):
    """Code point at byte ``i`` of valid UTF-8 and the index after it."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, i + 1
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(buf[i + 1]) & 0x3F), i + 2
    if b0 < 0xF0:
        return ((b0 & 0x0F) << 12) | ((np.int64(buf[i + 1]) & 0x3F) << 6) | (np.int64(buf[i + 2]) & 0x3F), i + 3
    return (
        ((b0 & 0x07) << 18)
        | ((np.int64(buf[i + 1]) & 0x3F) << 12)
        | ((np.int64(buf[i + 2]) & 0x3F) << 6)
        | (np.int64(buf[i + 3]) & 0x3F),
        i + 4,
    )


@kernel(inline="always")
def _group_run(buf, q, end, table, g):
    """End of the run of group ``g`` (letter, number, ...) starting at ``q``."""
    while q < end:
        c, q2 = decode(buf, q)
        if char_class(table, c) & GROUP_MASK != g:
            break
        q = q2
    return q


@kernel(inline="always")
def _space_run(buf, p, end, table):
    """Scan the white-space run at ``p``: (its end, start of its last
    character, end of its last ``\\r`` or ``\\n`` or -1)."""
    w = p
    last = p
    newline = np.int64(-1)
    while w < end:
        c, q = decode(buf, w)
        if char_class(table, c) & GROUP_MASK != G_SPACE:
            break
        if c == 10 or c == 13:
            newline = q
        last = w
        w = q
    return w, last, newline


# ------------------------------------------------------------------ GPT-2
@kernel(inline="always")
def gpt2_match_end(buf, p, end, table):
    """End of the match of ``'(?:[sdmt]|ll|ve|re)| ?\\p{L}+| ?\\p{N}+|
    ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+`` (GPT-2, r50k_base) at byte ``p``."""
    c, q = decode(buf, p)
    if c == 39 and q < end:  # '(?:[sdmt]|ll|ve|re), case-sensitive
        c1 = buf[q]
        if c1 == 115 or c1 == 100 or c1 == 109 or c1 == 116:
            return q + 1
        if q + 1 < end:
            c2 = buf[q + 1]
            if (c1 == 108 and c2 == 108) or (c1 == 118 and c2 == 101) or (c1 == 114 and c2 == 101):
                return q + 2
    if c == 32 and q < end:  # ' ?' then a run of one group
        c2, q2 = decode(buf, q)
        g2 = char_class(table, c2) & GROUP_MASK
        if g2 != G_SPACE:
            return _group_run(buf, q2, end, table, g2)
    else:
        g = char_class(table, c) & GROUP_MASK
        if g != G_SPACE:
            return _group_run(buf, q, end, table, g)
    # \s+(?!\S): the whole run at the end of the text, else all but its last
    # character (which then starts the next match); \s+: a run of one
    w, last, _ = _space_run(buf, p, end, table)
    if w == end:
        return end
    if last > p:
        return last
    return w


# ------------------------------------------------------------------ cl100k
@kernel(inline="always")
def _contraction_ci(buf, q, end):
    """End of ``(?i:[sdmt]|ll|ve|re)`` at ``q`` (the byte after an
    apostrophe), or -1.  Case-insensitive as :mod:`regex` folds: ``s`` also
    matches U+017F LATIN SMALL LETTER LONG S (bytes C5 BF)."""
    if q >= end:
        return -1
    c1 = buf[q] | 32  # ASCII lower case (only compared with letters)
    if c1 == 115 or c1 == 100 or c1 == 109 or c1 == 116:
        return q + 1
    if q + 1 < end:
        if buf[q] == 0xC5 and buf[q + 1] == 0xBF:
            return q + 2
        c2 = buf[q + 1] | 32
        if (c1 == 108 and c2 == 108) or (c1 == 118 and c2 == 101) or (c1 == 114 and c2 == 101):
            return q + 2
    return -1


@kernel(inline="always")
def _newline_run(buf, q, end):
    """End of ``[\\r\\n]*`` at ``q``."""
    while q < end and (buf[q] == 10 or buf[q] == 13):
        q += 1
    return q


@kernel(inline="always")
def cl100k_match_end(buf, p, end, table, digits, newline_first):
    """End of the match of cl100k_base's pattern at byte ``p``::

        '(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+
        | ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s

    (``digits`` 3, ``newline_first`` False), or of Llama 3's (``digits`` 3)
    and Qwen2's (``digits`` 1) with ``newline_first``::

        (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}
        | ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+

    The same pieces but for white space holding a newline at the end of a
    text: there ``\\s*[\\r\\n]+`` ends at the run's last newline (the
    spaces after it are the next piece), where ``\\s++$`` takes the whole
    run.  The other differences change nothing: the quantifiers that are
    not possessive cannot give back a character that lets a match go on
    (an optional prefix is never a letter; the other characters' run is
    never followed by one of them), and ``\\s+`` is reached only by a run
    of one character.
    """
    c, q = decode(buf, p)
    if c == 39:  # '(?i:[sdmt]|ll|ve|re)
        e = _contraction_ci(buf, q, end)
        if e >= 0:
            return e
    g = char_class(table, c) & GROUP_MASK
    if g == G_LETTER:  # \p{L}++ (no prefix)
        return _group_run(buf, q, end, table, G_LETTER)
    # [^\r\n\p{L}\p{N}]?+\p{L}++: a prefix (other or white space but \r \n)
    # then letters; the prefix cannot be a letter, so possessive changes nothing
    if g != G_NUMBER and c != 10 and c != 13 and q < end:
        c1, q1 = decode(buf, q)
        if char_class(table, c1) & GROUP_MASK == G_LETTER:
            return _group_run(buf, q1, end, table, G_LETTER)
    if g == G_NUMBER:  # \p{N}{1,3}+ (\p{N}: digits 1)
        n = 1
        while n < digits and q < end:
            c1, q1 = decode(buf, q)
            if char_class(table, c1) & GROUP_MASK != G_NUMBER:
                break
            q = q1
            n += 1
        return q
    #  ?[^\s\p{L}\p{N}]++[\r\n]*+
    if c == 32 and q < end:
        c1, q1 = decode(buf, q)
        if char_class(table, c1) & GROUP_MASK == G_OTHER:
            return _newline_run(buf, _group_run(buf, q1, end, table, G_OTHER), end)
    if g == G_OTHER:
        return _newline_run(buf, _group_run(buf, q, end, table, G_OTHER), end)
    # white space: \s++$ | \s*[\r\n] (backtracks to the run's last newline)
    # | \s+(?!\S) (all but the last character) | \s
    w, last, newline = _space_run(buf, p, end, table)
    if newline_first and newline >= 0:  # (Llama 3: \s*[\r\n]+ comes first)
        return newline
    if w == end:
        return end
    if newline >= 0:
        return newline
    if last > p:
        return last
    return w


# ------------------------------------------------------------------ o200k
@kernel(inline="always")
def _contraction_end(buf, e, end):
    """``e`` extended by ``(?i:'s|'t|'re|'ve|'m|'ll|'d)?`` (greedy)."""
    if e < end and buf[e] == 39:
        f = _contraction_ci(buf, e + 1, end)
        if f >= 0:
            return f
    return e


@kernel(inline="always")
def _upper_lower(buf, q, end, table):
    """``[U]*[W]+`` at ``q`` with backtracking, U = ``[\\p{Lu}\\p{Lt}\\p{Lm}
    \\p{Lo}\\p{M}]``, W = ``[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]``: returns (end of the
    match or -1, end of the U run at ``q``).

    ``U*`` takes the whole U run first; if a W character follows, ``W+``
    takes the W run from there.  Otherwise ``U*`` gives back characters
    until a W character (Lm, Lo or M: in both sets) is next: the last one
    in the run, and ``W+`` takes just it (what follows it in the run is Lu
    or Lt, not W).  No W at all: no match.
    """
    i = q
    last_w = np.int64(-1)  # end of the last W character inside the U run
    while i < end:
        c, j = decode(buf, i)
        k = char_class(table, c)
        if (UPPER_BITS >> k) & 1 == 0:
            if (LOWER_BITS >> k) & 1 != 0:  # an Ll after the U run: W+ from here
                while j < end:
                    c, j2 = decode(buf, j)
                    if (LOWER_BITS >> char_class(table, c)) & 1 == 0:
                        break
                    j = j2
                return j, i
            break
        if (LOWER_BITS >> k) & 1 != 0:
            last_w = j
        i = j
    return last_w, i


@kernel(inline="always")
def o200k_match_end(buf, p, end, table):
    """End of the match of o200k_base's pattern at byte ``p``::

        [^\\r\\n\\p{L}\\p{N}]?[U]*[W]+C?|[^\\r\\n\\p{L}\\p{N}]?[U]+[W]*C?|\\p{N}{1,3}
        | ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+

    U = ``[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]``, W = ``[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]``,
    C = ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``.  The first two alternatives try
    the optional prefix P = ``[^\\r\\n\\p{L}\\p{N}]`` first, then no prefix.
    """
    c, q = decode(buf, p)
    k = char_class(table, c)
    g = k & GROUP_MASK
    if g == G_LETTER:
        # no prefix (a letter is not P): U*W+ fails only on a run of Lu/Lt
        # with no W after it, which U+W* then takes whole
        e, u = _upper_lower(buf, p, end, table)
        if e < 0:
            e = u
        return _contraction_end(buf, e, end)
    if g != G_NUMBER and c != 10 and c != 13:  # c can be the prefix P
        e, u = _upper_lower(buf, q, end, table)
        if e >= 0:  # P U* W+
            return _contraction_end(buf, e, end)
        if k == MARK:
            # a mark is also U and W: without the prefix, U*W+ backtracks to
            # the mark alone (nothing after it in its U run is W)
            return _contraction_end(buf, q, end)
        if u > q:  # P U+ W* (the W* is empty: U*W+ found no W)
            return _contraction_end(buf, u, end)
    if g == G_NUMBER:  # \p{N}{1,3}
        n = 1
        while n < 3 and q < end:
            c1, q1 = decode(buf, q)
            if char_class(table, c1) & GROUP_MASK != G_NUMBER:
                break
            q = q1
            n += 1
        return q
    #  ?[^\s\p{L}\p{N}]+[\r\n/]*  (a mark is in [^\s\p{L}\p{N}])
    r = np.int64(-1)
    if c == 32 and q < end:
        c1, q1 = decode(buf, q)
        if char_class(table, c1) & GROUP_MASK == G_OTHER:
            r = _group_run(buf, q1, end, table, G_OTHER)
    elif g == G_OTHER:
        r = _group_run(buf, q, end, table, G_OTHER)
    if r >= 0:
        while r < end and (buf[r] == 10 or buf[r] == 13 or buf[r] == 47):
            r += 1
        return r
    # white space: \s*[\r\n]+ (backtracks to the run's last newline)
    # | \s+(?!\S) (all of a run at the end, else all but its last) | \s+
    w, last, newline = _space_run(buf, p, end, table)
    if newline >= 0:
        return newline
    if w == end:
        return end
    if last > p:
        return last
    return w


# ------------------------------------------------------------------ piece loops
# One loop per pattern, compiled apart: a function holding all three
# matchers inline took 33 s of CPU to compile, the three apart 14 s (now 4 s:
# see the note on inlining in the module docstring), and a call per stretch
# of text costs nothing next to the matching.
@kernel
def gpt2_pieces(buf, p, end, table, ends, ids, n):
    """Pieces of ``buf[p:end]`` (GPT-2) into ``ends``/``ids`` (-1) from ``n``
    on, until done or ``ends`` is full: returns (where it stopped, count)."""
    cap = len(ends)
    while p < end and n < cap:
        p = gpt2_match_end(buf, p, end, table)
        ends[n] = p
        ids[n] = -1
        n += 1
    return p, n


@kernel
def cl100k_pieces(buf, p, end, table, ends, ids, n, digits, newline_first):
    """:func:`gpt2_pieces` for cl100k_base (and Llama 3, Qwen2: see
    :func:`cl100k_match_end`)."""
    cap = len(ends)
    while p < end and n < cap:
        p = cl100k_match_end(buf, p, end, table, digits, newline_first)
        ends[n] = p
        ids[n] = -1
        n += 1
    return p, n


@kernel
def o200k_pieces(buf, p, end, table, ends, ids, n):
    """:func:`gpt2_pieces` for o200k_base."""
    cap = len(ends)
    while p < end and n < cap:
        p = o200k_match_end(buf, p, end, table)
        ends[n] = p
        ids[n] = -1
        n += 1
    return p, n


# ------------------------------------------------------------------ batches
DONE = 0
FULL = 1
DISALLOWED_FOUND = 2


@kernel
def split_row(kind, buf, p, end, table, plan, ends, ids, n):
    """Pieces of ``buf[p:end]`` (one text, or the rest of one), cut at the
    allowed special tokens of ``plan`` (:mod:`.special_tokens`) and
    pre-tokenized by ``kind`` between them (:data:`KIND_REGEX`: each stretch
    between special tokens is one piece, for :mod:`regex` to split).

    Writes piece ends to ``ends`` and ids to ``ids`` (-1 for text, the token
    id for a special token) from index ``n`` on.  Returns ``(status, p, n,
    t)``: :data:`DONE` (``p == end``); :data:`FULL` when ``ends`` is full,
    to go on from ``p`` with more room (``len(ends) - n >= end - p`` never
    fills: a piece holds at least one byte); :data:`DISALLOWED_FOUND`: the
    disallowed string ``t`` of ``plan`` starts at byte ``p``.  Going on from
    the middle looks for the next special token again from ``p``: nothing
    allowed starts between ``p`` and the one found before.

    ``buf`` may be a uint8 array or ``bytes`` (an encoder's one-text path:
    Numba takes bytes for less than an array costs to make).
    """
    cap = len(ends)
    while True:
        s, e, t = next_special(buf, p, end, plan)
        if t <= -2:
            return DISALLOWED_FOUND, s, n, -2 - t
        if p < s:
            if kind == KIND_GPT2:
                p, n = gpt2_pieces(buf, p, s, table, ends, ids, n)
            elif kind == KIND_CL100K:
                p, n = cl100k_pieces(buf, p, s, table, ends, ids, n, 3, False)
            elif kind == KIND_LLAMA3:
                p, n = cl100k_pieces(buf, p, s, table, ends, ids, n, 3, True)
            elif kind == KIND_QWEN2:
                p, n = cl100k_pieces(buf, p, s, table, ends, ids, n, 1, True)
            elif kind == KIND_O200K:
                p, n = o200k_pieces(buf, p, s, table, ends, ids, n)
            elif n < cap:  # KIND_REGEX: the stretch is one piece
                p = s
                ends[n] = p
                ids[n] = -1
                n += 1
            if p < s:
                return FULL, p, n, -1
        if t < 0:
            return DONE, p, n, -1
        if n == cap:
            return FULL, p, n, -1
        ends[n] = e
        ids[n] = token_id(plan, t)
        n += 1
        p = e


@kernel
def split_rows(kind, buf, row_splits, table, plan, ends, ids, piece_splits, state):
    """:func:`split_row` for the rows ``buf[row_splits[r]:row_splits[r + 1]]``
    from ``state = [row, byte, count]`` on, writing ``piece_splits[r + 1]``
    as each row is done.  Returns :data:`DONE`, :data:`FULL` (``state``
    says where to go on: grow the arrays and call again) or
    :data:`DISALLOWED_FOUND` with ``state = [row, byte, token index in
    plan]`` of a disallowed string."""
    nrows = len(row_splits) - 1
    row = state[0]
    p = state[1]
    n = state[2]
    while row < nrows:
        status, p, n, t = split_row(kind, buf, p, row_splits[row + 1], table, plan, ends, ids, n)
        if status == DISALLOWED_FOUND:
            state[0] = row
            state[1] = p
            state[2] = t
            return status
        if status == FULL:
            state[0] = row
            state[1] = p
            state[2] = n
            return status
        row += 1
        piece_splits[row] = n
        if row < nrows:
            p = row_splits[row]
    state[0] = row
    state[1] = p
    state[2] = n
    return DONE


@kernel
def piece_starts(row_splits, ends, piece_splits):
    """Start of every piece: the end of the one before, or its row's start."""
    starts = np.empty(len(ends), np.int64)
    for r in range(len(row_splits) - 1):
        prev = row_splits[r]
        for i in range(piece_splits[r], piece_splits[r + 1]):
            starts[i] = prev
            prev = ends[i]
    return starts


@kernel
def split_batch(kind, buf, row_splits, table, plan):
    """:func:`split_rows` over all rows, growing the output as needed:
    ``(status, state, starts, ends, ids, piece_splits)`` (see
    :func:`split_rows` for ``status`` and ``state``)."""
    nrows = len(row_splits) - 1
    piece_splits = np.zeros(nrows + 1, np.int64)
    state = np.zeros(3, np.int64)
    cap = 16 + nrows
    if nrows > 0:
        state[1] = row_splits[0]
        cap += (row_splits[nrows] - row_splits[0]) // 4
    ends = np.empty(cap, np.int64)
    ids = np.empty(cap, np.int32)
    status = split_rows(kind, buf, row_splits, table, plan, ends, ids, piece_splits, state)
    while status == FULL:
        cap *= 2
        grown = np.empty(cap, np.int64)
        grown[: len(ends)] = ends
        ends = grown
        grown_ids = np.empty(cap, np.int32)
        grown_ids[: len(ids)] = ids
        ids = grown_ids
        status = split_rows(kind, buf, row_splits, table, plan, ends, ids, piece_splits, state)
    if status != DONE:
        # (no pieces: piece_splits still counts the rows done before, whose
        # ends are not returned, so piece_starts must not read them)
        return status, state, np.zeros(0, np.int64), ends[:0].copy(), ids[:0].copy(), piece_splits
    n = state[2]
    ends = ends[:n].copy()
    ids = ids[:n].copy()
    return status, state, piece_starts(row_splits, ends, piece_splits), ends, ids, piece_splits


@kernel
def regex_layout(buf, seg_starts, seg_ends, seg_ids, seg_splits, counts, offsets):
    """Pieces from :mod:`regex` matches: stretch ``i`` of text (id -1) had
    ``counts[i]`` non-empty matches, whose start and end character offsets
    (from the stretch's start, rising) follow one another in ``offsets``;
    a special token (id >= 0) stays one piece.  Returns ``(starts, ends,
    ids, piece_splits)`` in bytes, walking each stretch's UTF-8 once."""
    n = len(seg_ends)
    total = 0
    for i in range(n):
        total += counts[i] if seg_ids[i] < 0 else 1
    starts = np.empty(total, np.int64)
    ends = np.empty(total, np.int64)
    ids = np.empty(total, np.int32)
    new_of = np.empty(n + 1, np.int64)  # first piece of each stretch
    k = 0
    j = 0
    for i in range(n):
        new_of[i] = k
        if seg_ids[i] >= 0:
            starts[k] = seg_starts[i]
            ends[k] = seg_ends[i]
            ids[k] = seg_ids[i]
            k += 1
            continue
        byte = seg_starts[i]
        char = 0
        for m in range(2 * counts[i]):
            target = offsets[j]
            j += 1
            while char < target:  # one character on (valid UTF-8)
                b0 = buf[byte]
                byte += 1 if b0 < 0x80 else (2 if b0 < 0xE0 else (3 if b0 < 0xF0 else 4))
                char += 1
            if m % 2 == 0:
                starts[k] = byte
            else:
                ends[k] = byte
                ids[k] = -1
                k += 1
    new_of[n] = k
    piece_splits = np.empty(len(seg_splits), np.int64)
    for r in range(len(seg_splits)):
        piece_splits[r] = new_of[seg_splits[r]]
    return starts, ends, ids, piece_splits


# ------------------------------------------------------------------ GPT-2 chunk boundaries
@kernel
def _prev_start(buf, i):
    """Byte index of the character that ends just before ``i``."""
    j = i - 1
    while (buf[j] & 0xC0) == 0x80:
        j -= 1
    return j


@kernel
def gpt2_safe_cut(buf, lo, hi, table):
    """Largest character boundary ``i`` with ``lo < i <= hi`` where a stream
    may be cut without changing GPT-2's matches, or -1 (the trainer cuts
    files into chunks there).

    Position ``i`` is safe when the character before it is not white space
    and not an apostrophe, and the character at ``i`` is of another group
    (letter / number / white space / other) than the one before.  Then the
    match holding character ``i - 1`` (a run of one group, or a contraction
    ending in a letter) ends at ``i`` whether or not the text goes on, and a
    match starts at ``i`` that does not depend on what came before (the
    pattern has no look-behind and every character is matched by some
    alternative).
    """
    i = hi
    if i < len(buf):  # move back to a character boundary
        while i > lo and (buf[i] & 0xC0) == 0x80:
            i -= 1
    else:
        i = len(buf)
        if i <= lo:
            return -1
        # the character at i is unknown: step back one so that both sides are known
        i = _prev_start(buf, i)
    while i > lo:
        c, _ = decode(buf, i)
        j = _prev_start(buf, i)
        if j < lo:
            return -1
        pc, _ = decode(buf, j)
        kp = char_class(table, pc) & GROUP_MASK
        if kp != G_SPACE and pc != 39 and char_class(table, c) & GROUP_MASK != kp:
            return i
        i = j
    return -1


@kernel
def gpt2_first_cut(buf, lo, hi, table):
    """Smallest character boundary ``i`` with ``lo <= i <= hi`` and ``0 < i
    < len(buf)`` where a stream may be cut (the rule of
    :func:`gpt2_safe_cut`), or -1: one forward pass, for finding the next cut
    far ahead (a Dask range boundary in text without one for megabytes)."""
    i = max(lo, 1)
    end = min(hi, len(buf) - 1)
    while i <= end:
        if (buf[i] & 0xC0) != 0x80:  # a character starts here
            c, _ = decode(buf, i)
            pc, _ = decode(buf, _prev_start(buf, i))
            kp = char_class(table, pc) & GROUP_MASK
            if kp != G_SPACE and pc != 39 and char_class(table, c) & GROUP_MASK != kp:
                return i
        i += 1
    return -1
