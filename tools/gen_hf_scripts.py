"""Measure HuggingFace tokenizers' ``UnicodeScripts`` script classes into
segkit/presets/pipeline/hf_scripts.json.

HF's ``UnicodeScripts`` pre-tokenizer cuts a text where the script changes,
with its own table (a SentencePiece-derived one, older than Python's
Unicode data), folded as its ``fixed_script`` folds it: Hiragana, Katakana
and U+30FC are Han, U+0020 is ``Any``, and a code point the table does not
list is ``Any`` too.  ``Any`` never starts a part and is left out of the
comparison (a part's leading ``Any`` characters are dropped).  Only the
partition of the code points matters, so this measures the classes (which
code points split from which), not their names; each class is recorded
with its first code point as its representative.

Everything is measured through ``pre_tokenize_str`` (a boundary before
``c`` in ``r + c`` means ``c`` is not ``Any`` and not in ``r``'s class):

1. ``"a" + c`` for every code point (surrogates aside), then ``"中" + c``
   for those with no boundary: no boundary either time means ``Any``;
2. all the other code points in order, in one string: the boundaries cut
   it into runs of one class each;
3. each run's first code point against the representatives found so far
   (``r1 + c + r2 + c + ...`` in one string): the class whose
   representative does not split from it, else a new class.

Class 0 is ``Any``; the others are numbered in the order of their first
code point.  Surrogates (which HF cannot receive) are recorded as ``Any``.
Run from the repository root with HF tokenizers installed::

    python tools/gen_hf_scripts.py           # write the file
    python tools/gen_hf_scripts.py --check   # compare with the file only

:func:`measure` is what ``tests/test_unicode_scripts.py`` re-runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "segkit" / "presets" / "pipeline" / "hf_scripts.json"
N = 0x110000
SURROGATES = (0xD800, 0xE000)


def _starts(pre, s: str) -> np.ndarray:
    """The character offsets where HF's parts of ``s`` start."""
    return np.fromiter((o[0] for _, o in pre.pre_tokenize_str(s)), dtype=np.int64)


def _split_after(pre, ref: str, cps: np.ndarray) -> np.ndarray:
    """Per code point of ``cps``: whether ``ref + c`` has a boundary before ``c``
    (one string ``ref c ref c ...``: ``c`` sits at odd offsets)."""
    s = "".join(ref + chr(c) for c in cps.tolist())
    b = np.zeros(2 * len(cps) + 1, dtype=bool)
    b[_starts(pre, s)] = True
    return b[1::2][: len(cps)]


def measure(pre=None) -> np.ndarray:
    """The class (0: ``Any``) of every code point, as HF's UnicodeScripts has it."""
    if pre is None:
        from tokenizers.pre_tokenizers import UnicodeScripts

        pre = UnicodeScripts()
    cps = np.r_[0 : SURROGATES[0], SURROGATES[1] : N]
    table = np.zeros(N, dtype=np.int32)
    # 1. Any: neither "a" nor "中" splits from it
    maybe = cps[~_split_after(pre, "a", cps)]
    any_ = maybe[~_split_after(pre, "\u4e2d", maybe)]
    known = np.ones(N, dtype=bool)
    known[any_] = False
    known[SURROGATES[0] : SURROGATES[1]] = False
    rest = np.flatnonzero(known)
    # 2. runs of one class among the rest, in code point order
    cut = np.zeros(len(rest) + 1, dtype=bool)
    cut[_starts(pre, "".join(map(chr, rest.tolist())))] = True
    cut[0] = True
    heads = np.flatnonzero(cut[: len(rest)])
    # 3. a class for each run
    reps: list[int] = []
    run_class = np.zeros(len(heads), dtype=np.int32)
    for j, h in enumerate(heads.tolist()):
        c = int(rest[h])
        k = 0
        if reps:  # r1 c r2 c ...: c at odd offsets, after each representative
            s = "".join(chr(r) + chr(c) for r in reps)
            b = np.zeros(len(s) + 1, dtype=bool)
            b[_starts(pre, s)] = True
            same = np.flatnonzero(~b[1::2][: len(reps)])
            if len(same) > 1:
                raise AssertionError(f"U+{c:04X} joins {len(same)} classes: not a partition")
            k = int(same[0]) + 1 if len(same) else 0
        if not k:
            reps.append(c)
            k = len(reps)
        run_class[j] = k
    ends = np.r_[heads[1:], len(rest)]
    table[rest] = np.repeat(run_class, ends - heads)
    return table


def encode(table: np.ndarray) -> dict:
    """The file's form: the code points where the class changes, and the class from there on."""
    change = np.flatnonzero(np.r_[True, table[1:] != table[:-1]])
    reps = [int(np.flatnonzero(table == k)[0]) for k in range(1, int(table.max()) + 1)]
    return {"starts": change.tolist(), "classes": table[change].tolist(), "representatives": reps}


def decode(data: dict) -> np.ndarray:
    """The table of a file's ``starts`` and ``classes``."""
    starts = np.asarray(data["starts"], dtype=np.int64)
    return np.repeat(np.asarray(data["classes"], dtype=np.uint8), np.diff(np.r_[starts, N]))


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--check", action="store_true", help="compare with the file, do not write it")
    check = args.parse_args(argv).check
    import tokenizers

    t0 = time.perf_counter()
    table = measure()
    took = time.perf_counter() - t0
    body = encode(table)
    if check:
        ours = decode(json.loads(OUT.read_text(encoding="utf-8")))
        bad = np.flatnonzero(ours != table)
        print(f"{len(bad)} code points differ" + (f", first U+{bad[0]:04X}" if len(bad) else ""))
        return int(bool(len(bad)))
    data = {
        "source": f"measured from HuggingFace tokenizers {tokenizers.__version__} "
                  f"(pre_tokenizers.UnicodeScripts.pre_tokenize_str) by tools/gen_hf_scripts.py",
        "regenerate": "python tools/gen_hf_scripts.py (from the repository root, tokenizers installed)",
        "tokenizers": tokenizers.__version__,
        "format": "class of code point c: classes[i] for the last i with starts[i] <= c; class 0 is Any "
                  "(U+0020, code points HF's table does not list, and the surrogates, not measured); "
                  "class k > 0 first appears at representatives[k - 1]",
        **body,
    }
    OUT.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {int(table.max())} classes, {len(body['starts'])} runs, "
          f"{int((table == 0).sum())} Any code points, measured in {took:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
