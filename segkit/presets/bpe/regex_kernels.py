"""The matcher that runs a :class:`~.regex_program.Program` (Numba, GIL released).

:func:`match_rows` ``(cps, row_splits, pages, blocks, code, sets, first,
out, span_splits)`` writes the ``(start, end)`` spans of the matches of
every row of joined code points into ``out`` (offsets into ``cps``) and the
row splits over spans into ``span_splits``, and returns the number of spans.
``out`` needs ``len(cps) + rows`` entries at most (at most one match per
character, plus one empty match at the end of a row).

Search (the Rust iterators' rules, :func:`segkit.presets.bpe.pieces.matches`):
the leftmost position from the current one where the program matches;
after a match the search goes on at its end, an empty match moves it one
character on, and an empty match where the previous match ended is not
reported.  Each row is a text of its own: ``^``, ``$`` and the lookahead
see the row's ends.

Matching (:func:`match_at`) is backtracking with an explicit stack: a
``SPLIT`` pushes its second branch, a greedy run pushes itself with the
number of characters it took and gives one back each time it is popped.
Since every jump goes forward, the stack holds at most one entry per
instruction.  Work per start position is at most the product of the
lengths of the runs on one path (the programs have no loops), as for
:mod:`regex` with the same pattern.
"""

from __future__ import annotations

import numpy as np

from ...runtime.jit import kernel
#: The instructions of a program (see :mod:`.regex_program`, which emits them).
OP_RUN = 0
OP_RUN_POSSESSIVE = 1
OP_SPLIT = 2
OP_JUMP = 3
OP_LOOK = 4
OP_BEGIN = 5
OP_END = 6
OP_MATCH = 7
OP_ATOMIC = 8
OP_CUT = 9


@kernel
def atom_bits(pages, blocks, c):
    """Bit mask of the atoms code point ``c`` matches."""
    return blocks[np.int64(pages[c >> 8]) + (c & 255)]


@kernel
def match_at(cps, lo, hi, p, pages, blocks, code, sets, stack):
    """End of the match of the program starting at ``cps[p]`` in the row
    ``cps[lo:hi]``, or -1.  ``stack``: int64 ``(2 * len(code) + 1, 3)``
    scratch: backtracking entries from the bottom (at most one per
    instruction), the stack height at each atomic group's start from the
    top (row ``-1 - pc`` for the group's ``ATOMIC`` at ``pc``)."""
    pc = 0
    pos = p
    sp = 0
    zero = np.uint64(0)
    while True:
        op = code[pc, 0]
        ok = True
        if op == OP_RUN or op == OP_RUN_POSSESSIVE:
            m = sets[code[pc, 1]]
            mn = code[pc, 2]
            mx = code[pc, 3]
            limit = hi - pos
            if mx >= 0 and mx < limit:
                limit = mx
            k = 0
            while k < limit and (atom_bits(pages, blocks, cps[pos + k]) & m) != zero:
                k += 1
            if k < mn:
                ok = False
            else:
                if op == OP_RUN and k > mn:
                    stack[sp, 0] = pc
                    stack[sp, 1] = pos
                    stack[sp, 2] = k
                    sp += 1
                pos += k
                pc += 1
        elif op == OP_SPLIT:
            f = code[pc, 3]
            if f >= 0 and (pos >= hi or (atom_bits(pages, blocks, cps[pos]) & sets[f]) == zero):
                pc = code[pc, 2]
            else:
                stack[sp, 0] = code[pc, 2]
                stack[sp, 1] = pos
                stack[sp, 2] = -1
                sp += 1
                pc = code[pc, 1]
        elif op == OP_JUMP:
            pc = code[pc, 1]
        elif op == OP_LOOK:
            hit = pos < hi and (atom_bits(pages, blocks, cps[pos]) & sets[code[pc, 1]]) != zero
            if code[pc, 2] != 0:
                hit = not hit
            if hit:
                pc += 1
            else:
                ok = False
        elif op == OP_BEGIN:
            if pos == lo or (code[pc, 1] != 0 and cps[pos - 1] == 10):
                pc += 1
            else:
                ok = False
        elif op == OP_END:
            # regex's "$": the end, or before a newline that ends the text
            # (any newline with MULTILINE: a = 1); "\z": the end only (a = 2)
            if pos == hi or (code[pc, 1] != 2 and cps[pos] == 10 and (code[pc, 1] == 1 or pos == hi - 1)):
                pc += 1
            else:
                ok = False
        elif op == OP_ATOMIC:  # an atomic group starts: remember the stack's height
            stack[stack.shape[0] - 1 - pc, 0] = sp
            pc += 1
        elif op == OP_CUT:  # it matched: what it could try next is dropped
            mark = stack[stack.shape[0] - 1 - code[pc, 1], 0]
            if 0 <= mark <= sp:  # (always, in a program that compile_pattern made)
                sp = mark
            pc += 1
        else:  # OP_MATCH
            return pos
        if not ok:
            if sp == 0:
                return -1
            top = sp - 1
            k = stack[top, 2]
            if k < 0:  # the other branch of a SPLIT
                pc = stack[top, 0]
                pos = stack[top, 1]
                sp = top
            else:  # a greedy run gives one character back
                run = stack[top, 0]
                k -= 1
                pos = stack[top, 1] + k
                pc = run + 1
                if k <= code[run, 2]:  # at its minimum: nothing more to give back
                    sp = top
                else:
                    stack[top, 2] = k


@kernel
def match_row(cps, lo, hi, pages, blocks, code, sets, first, stack, out, n):
    """Write the matches of the row ``cps[lo:hi]`` into ``out`` from entry
    ``n`` on; return the new count."""
    zero = np.uint64(0)
    pos = lo
    last = np.int64(-1)
    while pos <= hi:
        s = pos
        e = np.int64(-1)
        while s <= hi:
            if first >= 0:
                fm = sets[first]
                while s < hi and (atom_bits(pages, blocks, cps[s]) & fm) == zero:
                    s += 1
                if s == hi:
                    break
            e = match_at(cps, lo, hi, s, pages, blocks, code, sets, stack)
            if e >= 0:
                break
            s += 1
        if e < 0:
            break
        if e == s:
            pos = e + 1
            if e == last:
                continue
        else:
            pos = e
        last = e
        out[n, 0] = s
        out[n, 1] = e
        n += 1
    return n


@kernel
def match_rows(cps, row_splits, pages, blocks, code, sets, first, out, span_splits):
    """Matches of every row (see the module docstring); returns their number."""
    stack = np.empty((2 * code.shape[0] + 1, 3), dtype=np.int64)
    n = np.int64(0)
    span_splits[0] = 0
    for r in range(row_splits.shape[0] - 1):
        n = match_row(cps, row_splits[r], row_splits[r + 1], pages, blocks, code, sets, first, stack, out, n)
        span_splits[r + 1] = n
    return n


@kernel
def chain_pieces(cps, pages_all, blocks_all, code_all, sets_all, meta, gaps):
    """The pieces of one text by a chain of programs, in one call.

    ``meta`` (int64, one row per program): the program's slices of the
    packed arrays, ``pages`` ``[0]:[1]``, ``code`` ``[2]:[3]``, ``sets``
    ``[4]:[5]``, and ``[6]`` its ``first`` (the pages hold offsets into
    ``blocks_all``).  Each program splits every piece of the one before as
    a text of its own: with ``gaps`` the matches and the text between them
    are pieces and an empty match only cuts (HuggingFace's Split,
    Isolated); without (tiktoken's rules, one program) the pieces are the
    matches, which must be non-empty and cover the text.

    Returns ``(k, starts, ends)``: ``k`` pieces as UTF-8 byte offsets, or
    ``k = -1`` where tiktoken's rules fail (the caller's regex path names
    the place).
    """
    n = cps.size
    bounds = np.empty(n + 2, np.int64)
    cuts = np.empty(n + 2, np.int64)
    spans = np.empty((n + 1, 2), np.int64)
    longest = 0
    for k in range(meta.shape[0]):
        if meta[k, 3] - meta[k, 2] > longest:
            longest = meta[k, 3] - meta[k, 2]
    stack = np.empty((2 * longest + 1, 3), dtype=np.int64)
    nb = 0
    if n:
        bounds[0] = 0
        bounds[1] = n
        nb = 2
    for k in range(meta.shape[0]):
        pages = pages_all[meta[k, 0] : meta[k, 1]]
        code = code_all[meta[k, 2] : meta[k, 3]]
        sets = sets_all[meta[k, 4] : meta[k, 5]]
        first = meta[k, 6]
        if not gaps:  # tiktoken: the matches, covering the text
            m = match_row(cps, np.int64(0), np.int64(n), pages, blocks_all, code, sets, first, stack, spans,
                          np.int64(0))
            p = 0
            for j in range(m):
                if spans[j, 0] != p or spans[j, 1] == p:
                    return -1, bounds[:0], bounds[:0]
                p = spans[j, 1]
                cuts[j] = spans[j, 0]
            if p != n:
                return -1, bounds[:0], bounds[:0]
            cuts[m] = n
            nc = m + 1 if n else 0
        else:
            nc = 0
            for j in range(nb - 1):
                a = bounds[j]
                b = bounds[j + 1]
                if nc == 0 or cuts[nc - 1] != a:
                    cuts[nc] = a
                    nc += 1
                m = match_row(cps, a, b, pages, blocks_all, code, sets, first, stack, spans, np.int64(0))
                for q in range(m):
                    for x in (spans[q, 0], spans[q, 1]):
                        if cuts[nc - 1] != x:
                            cuts[nc] = x
                            nc += 1
                if cuts[nc - 1] != b:
                    cuts[nc] = b
                    nc += 1
        bounds, cuts = cuts, bounds
        nb = nc
    # Character bounds to UTF-8 byte offsets, in one walk.
    k = max(nb - 1, 0)
    starts = np.empty(k, np.int64)
    ends = np.empty(k, np.int64)
    byte = 0
    c = 0
    for j in range(k):
        while c < bounds[j]:
            byte += 1 + (cps[c] >= 0x80) + (cps[c] >= 0x800) + (cps[c] >= 0x10000)
            c += 1
        starts[j] = byte
        while c < bounds[j + 1]:
            byte += 1 + (cps[c] >= 0x80) + (cps[c] >= 0x800) + (cps[c] >= 0x10000)
            c += 1
        ends[j] = byte
    return k, starts, ends
