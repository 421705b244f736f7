"""Compiled patterns kept in the model cache (``presets.bpe.program_cache``):
built once, read back equal, and any damaged or crafted entry refused
before the matcher sees it (the fuzz runs in a subprocess, so that a crash
counts as a failure)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import regex

from segkit.models.files import ModelFileError, write_model
from segkit.presets.bpe import program_cache
from segkit.presets.bpe.pieces import matches
from segkit.presets.bpe.published_patterns import DEEPSEEK_PATTERNS, LLAMA3_PATTERN
from segkit.presets.bpe.regex_kernels import OP_ATOMIC, OP_CUT, OP_JUMP
from segkit.presets.bpe.regex_program import compile_pattern

TEXTS = ["Hello world, 12345 and 你好世界!", "it's  \n\n a test\u0558x", "", "ab   \t\ncd 1.5e10"]
ATOMIC = r"(?>a|ab)c|(?>\p{N}{1,3})|\s+\z|\S"


def _spans(program, text):
    return program.spans(text).tolist()


@pytest.mark.parametrize("pattern, flavour", [(LLAMA3_PATTERN, "rust"), (DEEPSEEK_PATTERNS[2], "onig"),
                                              (ATOMIC, "regex")])
def test_built_once_then_read_back_equal(tmp_path, monkeypatch, pattern, flavour):
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(tmp_path))
    builds = []

    def build():
        builds.append(1)
        return compile_pattern.__wrapped__(pattern, False, flavour)

    first = program_cache.cached_program(pattern, False, flavour, build)
    again = program_cache.cached_program(pattern, False, flavour, build)
    assert builds == [1]
    assert len(list(tmp_path.glob("pattern-*.segkit"))) == 1
    for name in ("pages", "blocks", "code", "sets", "differs"):
        assert np.array_equal(getattr(first, name), getattr(again, name)), name
    rx = regex.compile(pattern)
    for text in TEXTS:
        assert _spans(again, text) == _spans(first, text)
        if flavour == "regex":
            assert _spans(again, text) == [list(s) for s in matches(rx, text)]


def test_a_pattern_outside_the_subset_is_not_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(tmp_path))
    assert program_cache.cached_program(r"(?<=a)b", False, "regex", lambda: None) is None
    assert not list(tmp_path.glob("pattern-*"))


def _write(path, program, **changes):
    parts = {"pages": program.pages, "blocks": program.blocks.view(np.int64), "code": program.code,
             "sets": program.sets.view(np.int64), "differs": program.differs}
    config = {"format": 1, "pattern": program.pattern, "multiline": program.multiline,
              "flavour": program.flavour, "first": int(program.first)}
    for k, v in changes.items():
        (parts if k in parts else config)[k] = v
    write_model(path, program_cache.PRESET_NAME, config, parts, {})


def _code_with(program, pc, row):
    code = program.code.copy()
    code[pc] = row
    return code


def test_crafted_entries_are_refused(tmp_path):
    p = compile_pattern(ATOMIC)
    ops = p.code[:, 0].tolist()
    atomic, cut = ops.index(OP_ATOMIC), ops.index(OP_CUT)
    jump = ops.index(OP_JUMP)
    bad = {
        "a jump backwards": dict(code=_code_with(p, jump, [OP_JUMP, 0, 0, 0])),
        "a jump into an atomic group": dict(code=_code_with(p, 0, [p.code[0, 0], atomic + 1, p.code[0, 2],
                                                                   p.code[0, 3]])),
        "a cut of no group": dict(code=_code_with(p, cut, [OP_CUT, cut - 1, 0, 0])),
        "an unknown instruction": dict(code=_code_with(p, 1, [42, 0, 0, 0])),
        "a set out of range": dict(code=_code_with(p, cut + 1, [0, p.sets.size, 1, 1])),
        "a page outside the blocks": dict(pages=np.full_like(p.pages, p.blocks.size)),
        "no final MATCH": dict(code=p.code[:-1].copy()),
        "a first set out of range": dict(first=p.sets.size),
        "blocks of the wrong type": dict(blocks=p.blocks.astype(np.int32)),
        "differs not rising": dict(differs=np.array([5, 3], dtype=np.int64)),
    }
    assert p.code[0, 0] == 2  # (a SPLIT first: the "jump into" case moves its first branch)
    for what, change in bad.items():
        path = tmp_path / "p.segkit"
        _write(path, p, **change)
        with pytest.raises(ModelFileError):
            program_cache.program_from_file(path, p.pattern, p.multiline, p.flavour)
            pytest.fail(f"{what}: accepted")
    _write(tmp_path / "p.segkit", p)
    with pytest.raises(ModelFileError, match="another pattern"):
        program_cache.program_from_file(tmp_path / "p.segkit", p.pattern + "|x", False, "regex")
    good = program_cache.program_from_file(tmp_path / "p.segkit", p.pattern, False, "regex")
    assert _spans(good, "abc ac 1234") == _spans(p, "abc ac 1234")


def test_a_damaged_entry_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(tmp_path))
    build = lambda: compile_pattern.__wrapped__(ATOMIC, False, "regex")  # noqa: E731
    program_cache.cached_program(ATOMIC, False, "regex", build)
    (entry,) = tmp_path.glob("pattern-*.segkit")
    raw = bytearray(entry.read_bytes())
    raw[-9] ^= 0xFF  # (in the data: the CRC fails)
    entry.write_bytes(bytes(raw))
    with pytest.warns(UserWarning, match="rebuilding a damaged model cache entry"):
        again = program_cache.cached_program(ATOMIC, False, "regex", build)
    assert _spans(again, "abc ac 1234") == _spans(build(), "abc ac 1234")


FUZZ = textwrap.dedent(r"""
    import random, sys
    import numpy as np
    from segkit.models.files import ModelFileError, write_model
    from segkit.presets.bpe import program_cache
    from segkit.presets.bpe.regex_program import compile_pattern

    folder = sys.argv[1]
    rng = random.Random(int(sys.argv[2]))
    patterns = [r"(?>a|ab)c|(?>\p{N}{1,3})|\s+\z|\S", r"\s+(?!\S)|\s+|[^\s\p{L}]?\p{L}+|\p{N}{1,3}", r"^a|b$|(?i:c)+"]
    texts = ["abc ac 1234  x\n", "aaa bbb\nccc", "", "\u0558" * 40]
    refused = ran = 0
    for case in range(int(sys.argv[3])):
        p = compile_pattern(rng.choice(patterns))
        code, pages, sets = p.code.copy(), p.pages.copy(), p.sets.copy()
        for _ in range(rng.randint(1, 3)):
            which = rng.random()
            if which < 0.7:
                code[rng.randrange(code.shape[0]), rng.randrange(4)] = rng.choice(
                    [-1, 0, 1, 2, 3, 7, 8, 9, 10, code.shape[0], rng.randrange(-3, code.shape[0] + 3)])
            elif which < 0.85:
                pages[rng.randrange(pages.size)] = rng.choice([-256, 256, p.blocks.size, 1])
            else:
                sets[rng.randrange(sets.size)] = np.uint64(rng.getrandbits(64))
        path = f"{folder}/p{case}.segkit"
        write_model(path, program_cache.PRESET_NAME, {"format": 1, "pattern": p.pattern, "multiline": False,
                    "flavour": "regex", "first": int(p.first)},
                    {"pages": pages, "blocks": p.blocks.view(np.int64), "code": code, "sets": sets.view(np.int64),
                     "differs": p.differs}, {})
        try:
            got = program_cache.program_from_file(path, p.pattern, False, "regex")
        except ModelFileError:
            refused += 1
            continue
        for t in texts:
            got.spans(t)
            got.spans_batch(np.frombuffer(t.encode("utf-32-le"), np.uint32), np.array([0, len(t)]))
        ran += 1
    print(refused, ran)
""")


def test_fuzzed_entries_load_and_run_or_are_refused(tmp_path):
    script = tmp_path / "fuzz.py"
    script.write_text(FUZZ)
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, str(script), str(tmp_path), "7", "400"], capture_output=True, text=True,
                          timeout=600, cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    refused, ran = map(int, proc.stdout.split())
    assert refused > 100 and ran > 20, (refused, ran)  # (both outcomes were exercised)
