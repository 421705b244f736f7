"""Training on one long line: BPE and WordPiece stay linear (issue 33).

GPT-2's pre-tokenizer makes one piece of a Chinese line without spaces, so
a trainer that counts or merges a piece's pairs in time quadratic in its
length shows it here.  Input: ``../shared/data/corpus/zh.txt`` joined
(newlines removed) and repeated to N bytes, as ONE line; against
``en.txt`` repeated to the same N bytes (spaces: many short pieces).  For
each size, ``train_bpe`` (vocab 8000) and ``train_wordpiece`` (vocab 8000)
on one thread, after one small warm-up run (kernels loaded); prints the
seconds, the Chinese/English ratio and the growth exponent between sizes
(1.0 = linear).  Target: BPE on a 31 MB line within 2x of 31 MB of English.

Run from the repository root:
``python benchmarks/bench_train_long_line.py [--sizes 0.3,3,31]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path

import argparse
import math
import time


def text_of(name: str, n: int, one_line: bool) -> str:
    raw = (C.DATA_DIR / "corpus" / name).read_text(encoding="utf-8")
    if one_line:
        raw = raw.replace("\r", "").replace("\n", "")
    data = (raw * (n // len(raw.encode()) + 2)).encode()[:n]
    return data.decode("utf-8", "ignore")


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="0.3,3,31", help="megabytes, comma-separated")
    args = p.parse_args()
    C.require_data()
    import segkit

    sizes = [float(s) for s in args.sizes.split(",")]
    segkit.train_bpe(["warm up 你好世界"] * 3, 300, num_threads=1, show_progress=False)
    segkit.train_wordpiece(["warm up 你好世界"] * 3, 300, num_threads=1, show_progress=False)
    trainers = {
        "bpe": lambda t: segkit.train_bpe([t], 8000, num_threads=1, show_progress=False),
        "wordpiece": lambda t: segkit.train_wordpiece([t], 8000, num_threads=1, show_progress=False),
    }
    for name, train in trainers.items():
        prev = None
        for mb in sizes:
            n = int(mb * 1e6)
            zh = timed(lambda: train(text_of("zh.txt", n, True)))
            en = timed(lambda: train(text_of("en.txt", n, False)))
            growth = ""
            if prev is not None:
                growth = f", exponent {math.log(zh / prev[1]) / math.log(mb / prev[0]):.2f}"
            print(f"{name:9s} {mb:5.1f} MB: zh one line {zh:6.2f} s, en {en:6.2f} s, zh/en {zh / en:4.2f}{growth}",
                  flush=True)
            prev = (mb, zh)


if __name__ == "__main__":
    main()
