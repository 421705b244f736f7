"""Cold ``segkit cut``: a new process each time (issue 33).

Each line runs ``python -m segkit cut`` on one short line of stdin in a
fresh interpreter and reports its wall time, and when anything appears on
stderr, how long after the start the first line came (a slow first step
must say so, never pause silently for more than 1 s):

* the model cache built (segkit's own cache: later runs): target <= 2 s;
* an empty model cache (``SEGKIT_CACHE_DIR`` a fresh folder: a first run
  builds the default dictionary's automata, with a notice), then again;
* ``--userdict`` with a 60,000-word file (folded into the dictionary and
  cached under both files' bytes), first and second run;
* ``--userdict`` with a 500-word file (kept beside the cached dictionary).

Set ``SEGKIT_JIT_SHIPPED`` as installed users have precompiled kernels.
Run from the repository root: ``python benchmarks/bench_cjk_cold.py``.
"""

from __future__ import annotations

import _common as C  # first: sys.path

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEXT = "我来到北京清华大学自定义词5号\n"


def run(env: dict, *args: str) -> tuple[float, float | None]:
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "segkit", "cut", *args], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True, cwd=C.REPO_ROOT)
    p.stdin.write(TEXT)
    p.stdin.close()
    first = None
    for _ in p.stderr:
        if first is None:
            first = time.perf_counter() - t
    p.wait()
    return time.perf_counter() - t, first


def show(what: str, result: tuple[float, float | None]) -> None:
    total, first = result
    note = "" if first is None else f", first stderr line after {first:.2f} s"
    print(f"{what}: {total:.2f} s{note}", flush=True)


def main() -> None:
    env = dict(os.environ)
    run(env)  # the user's model cache built
    for i in range(3):
        show(f"model cache built, run {i + 1}", run(env))
    with tempfile.TemporaryDirectory() as tmp:
        empty = dict(env, SEGKIT_CACHE_DIR=str(Path(tmp) / "cache"))
        show("model cache empty", run(empty))
        show("same cache, next run", run(empty))
        big = Path(tmp) / "user60k.txt"
        big.write_text("".join(f"自定义词{i}号 3 n\n" for i in range(60000)), encoding="utf-8")
        small = Path(tmp) / "user500.txt"
        small.write_text("".join(f"自定义词{i}号 3 n\n" for i in range(500)), encoding="utf-8")
        show("--userdict 60k words, first run", run(empty, "--userdict", str(big)))
        show("--userdict 60k words, next run", run(empty, "--userdict", str(big)))
        show("--userdict 500 words", run(empty, "--userdict", str(small)))


if __name__ == "__main__":
    main()
