"""Check that ``ChineseMaxMatch(keep_whitespace=True)`` makes whitespace
tokens exactly where jieba (``lcut(text, HMM=False)``) makes them, on the
SIGHAN 2005 pku and msr texts: test texts, gold segmentations and training
word lists (``../shared/data/sighan2005``).

Each file is checked line by line (with its line endings, ``"\\r\\n"``
kept) and as one string, in every mode.  A token is a whitespace token
when it is made of Python ``\\s`` characters only; the check compares the
list of ``(offset, token)`` of those tokens, and that ``"".join`` of
segkit's tokens gives the text back.  The other tokens are not compared
(jieba picks the most probable path of its word DAG, segkit the longest
match).  Too slow for the test suite (jieba takes about a minute on all
of it); ``tests/test_cjk_whitespace.py`` runs the two test texts.

Run from the repository root: ``python tools/check_jieba_whitespace.py``.
Prints one line per file and mode; exits 1 on any difference.
"""

from __future__ import annotations

import logging
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SIGHAN = ROOT.parent / "shared" / "data" / "sighan2005"
FILES = [f"{c}_{k}.utf8" for c in ("pku", "msr") for k in ("test", "test_gold", "training_words")]
SPACE_TOKEN = re.compile(r"\s+")


def whitespace_tokens(tokens) -> list[tuple[int, str]]:
    out = []
    pos = 0
    for w in tokens:
        if SPACE_TOKEN.fullmatch(w):
            out.append((pos, w))
        pos += len(w)
    return out


def main() -> int:
    import jieba

    import segkit

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    failures = 0
    for name in FILES:
        with open(SIGHAN / name, encoding="utf-8", newline="") as fh:
            text = fh.read()
        lines = text.splitlines(keepends=True)
        t0 = time.perf_counter()
        expected_lines = [whitespace_tokens(jieba.lcut(line, HMM=False)) for line in lines]
        expected_whole = whitespace_tokens(jieba.lcut(text, HMM=False))
        t_jieba = time.perf_counter() - t0
        n_ws = sum(map(len, expected_lines))
        for mode in ("forward", "backward", "bidirectional"):
            seg = segkit.ChineseMaxMatch(mode=mode, keep_whitespace=True)
            got_lines = seg.cut_batch(lines)
            got_whole = seg.cut(text)
            bad = [i for i, (g, e) in enumerate(zip(got_lines, expected_lines)) if whitespace_tokens(g) != e]
            bad += [i for i, (g, line) in enumerate(zip(got_lines, lines)) if "".join(g) != line]
            whole_ok = whitespace_tokens(got_whole) == expected_whole and "".join(got_whole) == text
            ok = not bad and whole_ok
            failures += not ok
            print(
                f"{name:28s} {mode:13s} {len(text):>9,} chars {len(lines):>7,} lines {n_ws:>8,} whitespace tokens: "
                f"{'same as jieba' if ok else f'DIFFERENT (lines {bad[:5]}, whole file ok: {whole_ok})'}"
                f"  (jieba {t_jieba:.1f}s)"
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
