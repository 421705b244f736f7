"""Compiled pre-tokenization programs kept in segkit's model cache.

Compiling a pattern reads its character classes over all of Unicode
(:mod:`.regex_program`): 0.1-0.3 s for one of today's patterns, most of the
time it takes to load a cached Llama 3 or DeepSeek model.  The program it
makes depends only on the pattern, ``multiline``, the flavour, the installed
:mod:`regex` and segkit's code, so it is stored once in the model cache
(:mod:`segkit.models.cache`: a private folder, entries owned by the user,
written atomically, CRC-checked) under a key made of exactly those.

An entry is checked before use (:func:`program_from_file`): every value the
matcher trusts lies in range, every jump goes forward, each ``CUT`` closes
the atomic group that opens before it, so that a damaged or planted entry
is refused (the cache then compiles again) and never reaches the kernel.

>>> from segkit.presets.bpe.regex_program import compile_pattern
>>> p = compile_pattern(r"\\p{L}+|\\s+")
>>> check_program(p.pattern, p.multiline, p.flavour, p.pages, p.blocks, p.code, p.sets, p.first, p.differs)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .regex_kernels import (OP_ATOMIC, OP_BEGIN, OP_CUT, OP_END, OP_JUMP, OP_LOOK, OP_MATCH, OP_RUN,
                            OP_RUN_POSSESSIVE, OP_SPLIT)

#: The name of the entries in the model file format.
PRESET_NAME = "BPEProgram"
N_PAGES = 0x110000 >> 8


class _Entry:
    """What the model cache stores: ``save(path)`` writes the program."""

    def __init__(self, program: Any) -> None:
        self.program = program

    def save(self, path) -> None:
        from ...models.files import write_model

        p = self.program
        config = {"format": 1, "pattern": p.pattern, "multiline": p.multiline, "flavour": p.flavour,
                  "first": int(p.first)}
        arrays = {"pages": p.pages, "blocks": p.blocks.view(np.int64), "code": p.code, "sets": p.sets.view(np.int64),
                  "differs": p.differs}  # (the file format stores no uint64: the bits as int64)
        write_model(path, PRESET_NAME, config, arrays, {})


def check_program(pattern, multiline, flavour, pages, blocks, code, sets, first, differs) -> None:
    """Raise ValueError unless the arrays are a program the matcher can run
    safely (see the module docstring)."""
    from ...runtime.unicode_flavours import FLAVOURS

    if not isinstance(pattern, str) or not isinstance(multiline, bool) or flavour not in FLAVOURS:
        raise ValueError("pattern, multiline or flavour has the wrong type")
    for name, a, dtype, ndim in (("pages", pages, np.int32, 1), ("blocks", blocks, np.uint64, 1),
                                 ("code", code, np.int64, 2), ("sets", sets, np.uint64, 1),
                                 ("differs", differs, np.int64, 1)):
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != ndim:
            raise ValueError(f"array {name} must be {ndim}-d {np.dtype(dtype)}")
    if pages.size != N_PAGES or blocks.size == 0 or blocks.size % 256:
        raise ValueError("the class table has the wrong shape")
    if pages.min() < 0 or pages.max() > blocks.size - 256 or np.any(pages % 256):
        raise ValueError("a page of the class table lies outside its blocks")
    if sets.size == 0 or type(first) is not int or not -1 <= first < sets.size:
        raise ValueError("the first-character set is out of range")
    if differs.size and (differs[0] < 0 or differs[-1] >= 0x110000 or np.any(np.diff(differs) <= 0)):
        raise ValueError("differs is not a rising list of code points")
    n = code.shape[0]
    if code.shape[1:] != (4,) or n == 0 or code[n - 1, 0] != OP_MATCH:
        raise ValueError("the code does not end in MATCH")
    rows = code.tolist()
    groups = [(r[1], pc) for pc, r in enumerate(rows) if r[0] == OP_CUT]  # (start, cut) as the CUTs claim
    opened: list[int] = []  # atomic groups open at this instruction
    for pc, (op, a, b, c) in enumerate(rows):
        ok = True
        if op in (OP_RUN, OP_RUN_POSSESSIVE):
            ok = 0 <= a < sets.size and b >= 0 and (c == -1 or c >= b)
        elif op == OP_SPLIT:
            ok = pc < a <= n - 1 and pc < b <= n - 1 and -1 <= c < sets.size
        elif op == OP_JUMP:
            ok = pc < a <= n - 1
        elif op == OP_LOOK:
            ok = 0 <= a < sets.size and b in (0, 1)
        elif op == OP_BEGIN:
            ok = a in (0, 1)
        elif op == OP_END:
            ok = a in (0, 1, 2)
        elif op == OP_ATOMIC:
            opened.append(pc)
        elif op == OP_CUT:
            ok = bool(opened) and opened.pop() == a
        elif op != OP_MATCH:
            ok = False
        if ok and op in (OP_SPLIT, OP_JUMP):
            # a jump may leave an atomic group (ATOMIC at start, CUT at cut),
            # never land inside one from outside
            for t in ((a, b) if op == OP_SPLIT else (a,)):
                ok = ok and not any(start < t <= cut and not start < pc <= cut for start, cut in groups)
        if not ok:
            raise ValueError(f"instruction {pc} {[op, a, b, c]} is not valid")
    if opened:
        raise ValueError("an atomic group is not closed")


def program_from_file(path, pattern: str, multiline: bool, flavour: str):
    """The program stored at ``path`` for exactly these arguments; raises
    :class:`~segkit.models.files.ModelFileError` for anything else."""
    from ...models.files import ModelFileError, read_model
    from .regex_program import Program

    loaded = read_model(path)
    cfg, arrays = loaded.config, loaded.arrays
    if loaded.preset != PRESET_NAME or cfg.get("format") != 1:
        raise ModelFileError(f"{path}: not a compiled pattern")
    if (cfg.get("pattern"), cfg.get("multiline"), cfg.get("flavour")) != (pattern, multiline, flavour):
        raise ModelFileError(f"{path}: holds the program of another pattern")
    parts = [arrays.get(k) for k in ("pages", "blocks", "code", "sets")]
    for i in (1, 3):  # (stored as int64)
        if isinstance(parts[i], np.ndarray) and parts[i].dtype == np.int64 and parts[i].ndim == 1:
            parts[i] = parts[i].view(np.uint64)
    differs = arrays.get("differs")
    try:
        check_program(pattern, multiline, flavour, *parts, cfg.get("first"), differs)
    except ValueError as e:
        raise ModelFileError(f"{path}: invalid compiled pattern: {e}") from None
    parts = [np.ascontiguousarray(a) for a in parts + [differs]]
    for a in parts:
        a.setflags(write=False)
    pages, blocks, code, sets, differs = parts
    return Program(pattern, multiline, pages, blocks, code, sets, cfg["first"], flavour, differs)


def cached_program(pattern: str, multiline: bool, flavour: str, build):
    """``build()`` (a Program, or None outside the subset: not stored), or
    the program stored before for the same arguments."""
    import regex

    from ...models.cache import cache_key, cached

    outside: list = []

    def make():
        program = build()
        if program is None:
            outside.append(True)
            raise _NotStored
        return _Entry(program)

    key = cache_key("pattern", {"pattern": pattern, "multiline": multiline, "flavour": flavour,
                                "regex": getattr(regex, "__version__", "")}, b"")
    try:
        got = cached(key, make, lambda p: _Entry(program_from_file(p, pattern, multiline, flavour)))
    except _NotStored:
        return None
    return got.program


class _NotStored(Exception):
    """The pattern is outside the subset: nothing to store."""
