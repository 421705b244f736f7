"""Pre-tokenization for BPE: segkit's compiled patterns against regex and tiktoken.

Sections (one process, interleaved rounds, best time kept; one thread):

1. Throughput on the multilingual corpus for GPT-2's (r50k), cl100k's and
   o200k's patterns: segkit's kernel over the whole batch, segkit from a
   list of str (encoding and output included), segkit one call per text
   (``split_row`` on ``text.encode()``, what an encoder's compiled
   one-text path runs, and the Python-level ``Pretokenizer.split``, which
   also builds a ``Pieces``), ``regex.findall`` per text, and tiktoken.  tiktoken does not expose its
   splitting alone, so it runs with a vocabulary of the 256 single bytes
   only: ``encode_ordinary`` is then its regex plus a byte lookup per byte
   of each piece (an upper bound on its pre-tokenization time).  Its
   ``encode_ordinary_batch`` is left out: with one thread it hands each
   text to a thread pool, which costs more than the text (about 1 MB/s).
2. Scaling: adversarial single texts (long runs of one character, of two
   alternating characters, CJK, random bytes decoded with replacement, ...)
   at 10^5, 10^6 and 10^7 characters; nanoseconds per byte and time ratios
   10^6/10^5 and 10^7/10^6 (linear time: about 10).  Expect a rise per
   byte (up to 3x) at the sizes where the text and the pieces stop fitting
   in the processor's caches, the same step a NumPy sum over the bytes
   shows.  regex and tiktoken at 10^5 and 10^6; tiktoken panics ("fails":
   its regex engine overflows the stack) on some of them.
3. One call per text: the cost of handing a text to compiled code as a str,
   bytes or a NumPy array (why an encoder's one-text path should pass
   ``text.encode()`` as bytes, not the str), and of returning arrays.
4. First use in a fresh process: import, building the class table from
   ``regex``, the first split (kernels loaded from Numba's cache).
5. The regex fallback: a pattern segkit does not compile (cl100k's, spelled
   differently) against the compiled one and against ``regex.findall``.

    python benchmarks/bench_pretokenize.py [--quick] [--repeat N]
"""

from __future__ import annotations

import _common  # noqa: F401  (first: sys.path, RAYON_NUM_THREADS=1)

import json
import random
import time

import numpy as np
from _common import CORPUS, parse_args, print_table, require_data, run_child, save_results, time_rounds

from segkit.presets.bpe.char_classes import class_table
from segkit.presets.bpe.pretokenize import (
    CL100K_PATTERN,
    O200K_PATTERN,
    R50K_PATTERN,
    Pretokenizer,
    encode_texts,
)
from segkit.presets.bpe.pretokenize_kernels import split_batch, split_row
from segkit.presets.bpe.special_tokens import NO_SPECIALS

PATTERNS = {"r50k (GPT-2)": R50K_PATTERN, "cl100k": CL100K_PATTERN, "o200k": O200K_PATTERN}


def load_texts(limit=None):
    texts = []
    with open(CORPUS, encoding="utf-8") as f:
        for line in f:
            texts.append(json.loads(line)["text"])
            if limit and len(texts) >= limit:
                break
    return texts


def byte_tiktoken(pattern):
    """tiktoken with the 256 single bytes as its only tokens, or None."""
    try:
        import tiktoken
    except ImportError:
        print("SKIP tiktoken: not installed")
        return None
    ranks = {bytes([b]): b for b in range(256)}
    return tiktoken.Encoding("bytes-only", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})


def mbps(nbytes, seconds):
    return nbytes / seconds / 1e6


# ------------------------------------------------------------------ 1. corpus throughput
def run_corpus(texts, args, results):
    import regex

    nbytes = sum(len(t.encode()) for t in texts)
    buf, rs = encode_texts(texts)
    table = class_table()
    out = {}
    rows = []
    for name, pattern in PATTERNS.items():
        pre = Pretokenizer(pattern)
        rx = regex.compile(pattern)
        ends = np.empty(max(map(len, texts)) * 4 + 16, np.int64)
        ids = np.empty(len(ends), np.int32)

        def per_text(kind=pre.kind, ends=ends, ids=ids):
            for t in texts:
                d = t.encode()
                split_row(kind, d, 0, len(d), table, NO_SPECIALS, ends, ids, 0)

        systems = {
            "segkit kernel, batch": lambda: split_batch(pre.kind, buf, rs, table, NO_SPECIALS),
            "segkit from str list": lambda: pre.split_batch(texts),
            "segkit split_row per text (bytes)": per_text,
            "segkit Pretokenizer.split per text": lambda: [pre.split(t) for t in texts],
            "regex.findall per text": lambda: [rx.findall(t) for t in texts],
        }
        tt = byte_tiktoken(pattern)
        if tt is not None:
            systems["tiktoken bytes-only, per text"] = lambda: [tt.encode_ordinary(t) for t in texts]
        print(f"\n{name}:")
        times = time_rounds(systems, repeat=args.repeat)
        best = {k: min(v) for k, v in times.items()}
        out[name] = {k: mbps(nbytes, v) for k, v in best.items()}
        for k, v in best.items():
            rows.append([name, k, mbps(nbytes, v), best["regex.findall per text"] / v])
    print_table(["pattern", "system", "MB/s", "x regex.findall"], rows,
                title=f"throughput on the corpus ({nbytes / 1e6:.1f} MB, {len(texts)} texts)")
    out["bytes"] = nbytes
    results["corpus"] = out


# ------------------------------------------------------------------ 2. scaling
def adversarial(n: int) -> dict[str, str]:
    rng = random.Random(7)
    raw = bytes(rng.randrange(256) for _ in range(n))
    return {
        "a * n": "a" * n,
        "A * n": "A" * n,
        "space * n": " " * n,
        "newline * n": "\n" * n,
        "spaces then x": " " * (n - 1) + "x",
        "newline, spaces, x": "\n" + " " * (n - 2) + "x",
        "'s * n/2": "'s" * (n // 2),
        "aA * n/2": "aA" * (n // 2),
        "a1 * n/2": "a1" * (n // 2),
        "ª then A * n": "ª" + "A" * (n - 2) + "!",
        "mark then A * n": "\u0301" + "A" * (n - 2) + "!",
        "1 * n": "1" * n,
        "CJK": "".join(chr(rng.randrange(0x4E00, 0xA000)) for _ in range(n)),
        "random bytes, replaced": raw.decode("utf-8", "replace")[:n],
    }


def run_scaling(args, results):
    import regex

    sizes = [10**5, 10**6] if args.quick else [10**5, 10**6, 10**7]
    peer_sizes = [10**5, 10**6]
    table = class_table()
    texts = {n: adversarial(n) for n in sizes}
    out = {}
    rows = []
    for pname, pattern in PATTERNS.items():
        pre = Pretokenizer(pattern)
        rx = regex.compile(pattern)
        tt = byte_tiktoken(pattern)
        for name in texts[sizes[0]]:
            rec = {}
            for n in sizes:
                buf, rs = encode_texts([texts[n][name]])
                split_batch(pre.kind, buf, rs, table, NO_SPECIALS)
                reps = max(1, args.repeat if n <= 10**6 else 2)
                rec[("segkit", n)] = min(_timed(lambda: split_batch(pre.kind, buf, rs, table, NO_SPECIALS))
                                         for _ in range(reps))
                if n in peer_sizes:
                    rec[("regex", n)] = _timed(lambda: rx.findall(texts[n][name]))
                    if tt is not None:
                        rec[("tiktoken", n)] = _timed_or_panic(lambda: tt.encode_ordinary(texts[n][name]))
            nbytes = {n: len(texts[n][name].encode()) for n in sizes}
            row = [pname, name]
            for n in sizes:
                row.append(rec[("segkit", n)] / nbytes[n] * 1e9)
            row += [rec[("segkit", sizes[i + 1])] / rec[("segkit", sizes[i])] for i in range(len(sizes) - 1)]
            row.append(rec[("regex", 10**6)] / rec[("regex", 10**5)])
            row.append(rec[("regex", 10**6)] / rec[("segkit", 10**6)])
            if tt is not None:
                t5, t6 = rec[("tiktoken", 10**5)], rec[("tiktoken", 10**6)]
                row.append(t6 / t5 if t5 and t6 else "fails")
                row.append(t6 / rec[("segkit", 10**6)] if t6 else "fails")
            rows.append(row)
            out[f"{pname} / {name}"] = {f"{k[0]} {k[1]}": v for k, v in rec.items()}
    headers = ["pattern", "input"] + [f"segkit ns/byte @{n:.0e}" for n in sizes]
    headers += [f"segkit {sizes[i + 1]:.0e}/{sizes[i]:.0e}" for i in range(len(sizes) - 1)]
    headers += ["regex 1e6/1e5", "regex/segkit @1e6", "tiktoken 1e6/1e5", "tiktoken/segkit @1e6"]
    print_table(headers[: len(rows[0])], rows, title="scaling on adversarial single texts (characters; time ratios)")
    results["scaling"] = out


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _timed_or_panic(fn) -> float | None:
    """Seconds, or None when tiktoken panics (its regex engine overflows its
    backtracking stack on some long pieces)."""
    try:
        return _timed(fn)
    except BaseException as e:  # pyo3's PanicException is a BaseException
        if type(e).__name__ != "PanicException":
            raise
        return None


# ------------------------------------------------------------------ 3. one call per text
def run_call_overhead(texts, args, results):
    from numba import njit

    @njit(nogil=True)
    def touch(x, out):
        out[0] = len(x)
        return 0

    out = np.zeros(1, np.int64)
    sample = texts[:2000]
    touch("a", out), touch("é", out), touch(b"a", out), touch(np.zeros(1, np.uint8), out)
    pre = Pretokenizer(CL100K_PATTERN)
    table = class_table()
    rs = {}

    ends = np.empty(max(map(len, sample)) * 4 + 16, np.int64)
    ids = np.empty(len(ends), np.int32)

    def row_bytes():
        for t in sample:
            d = t.encode()
            split_row(2, d, 0, len(d), table, NO_SPECIALS, ends, ids, 0)

    def row_array():
        for t in sample:
            d = np.frombuffer(t.encode(), np.uint8)
            split_row(2, d, 0, len(d), table, NO_SPECIALS, ends, ids, 0)

    def batch_of_one():
        for t in sample:
            d = np.frombuffer(t.encode(), np.uint8)
            split_batch(2, d, np.array([0, len(d)], np.int64), table, NO_SPECIALS)

    systems = {
        "numba call, str argument": lambda: [touch(t, out) for t in sample],
        "numba call, t.encode() as bytes": lambda: [touch(t.encode(), out) for t in sample],
        "numba call, t.encode() as array": lambda: [touch(np.frombuffer(t.encode(), np.uint8), out) for t in sample],
        "split_row (cl100k), bytes": row_bytes,
        "split_row (cl100k), array": row_array,
        "split_batch of one text (5 arrays returned)": batch_of_one,
        "Pretokenizer.split (returns Pieces)": lambda: [pre.split(t) for t in sample],
    }
    times = time_rounds(systems, repeat=args.repeat)
    rows = [[k, min(v) / len(sample) * 1e6] for k, v in times.items()]
    print_table(["per text", "µs"], rows, title=f"one call per text ({len(sample)} corpus texts)")
    rs.update({k: min(v) / len(sample) for k, v in times.items()})
    results["call_overhead_seconds"] = rs


# ------------------------------------------------------------------ 4. first use
def run_first_use(results):
    code = r"""
import json, time
t0 = time.perf_counter()
from segkit.presets.bpe.pretokenize import Pretokenizer, O200K_PATTERN
from segkit.presets.bpe.char_classes import class_table
t1 = time.perf_counter()
class_table()
t2 = time.perf_counter()
Pretokenizer(O200K_PATTERN).findall("warm up")
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "class_table": t2 - t1, "first_split": t3 - t2}))
"""
    run_child(code)  # Numba's cache filled
    runs = [run_child(code) for _ in range(3)]
    best = {k: min(r[k] for r in runs) for k in ("import", "class_table", "first_split", "wall")}
    print_table(["step", "ms"], [[k, v * 1e3] for k, v in best.items()],
                title="first use in a fresh process (best of 3; import includes segkit's package)")
    results["first_use_seconds"] = best


# ------------------------------------------------------------------ 5. the regex fallback
def run_fallback(texts, args, results):
    import regex

    nbytes = sum(len(t.encode()) for t in texts)
    same_meaning = f"(?:{CL100K_PATTERN})"
    compiled = Pretokenizer(CL100K_PATTERN)
    fallback = Pretokenizer(same_meaning)
    assert not fallback.compiled
    rx = regex.compile(CL100K_PATTERN)
    systems = {
        "compiled (cl100k)": lambda: compiled.split_batch(texts),
        "regex fallback (same pattern, other spelling)": lambda: fallback.split_batch(texts),
        "regex.findall per text": lambda: [rx.findall(t) for t in texts],
    }
    times = time_rounds(systems, repeat=args.repeat)
    best = {k: min(v) for k, v in times.items()}
    rows = [[k, mbps(nbytes, v), v / best["compiled (cl100k)"]] for k, v in best.items()]
    print_table(["system", "MB/s", "time x compiled"], rows, title="the regex fallback, batch of the corpus texts")
    results["fallback"] = {k: mbps(nbytes, v) for k, v in best.items()}


def main():
    args = parse_args(__doc__)
    require_data()
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
    texts = load_texts(5000 if args.quick else None)
    results = {}
    run_corpus(texts, args, results)
    run_fallback(texts[:20000], args, results)
    run_call_overhead(texts, args, results)
    run_scaling(args, results)
    run_first_use(results)
    print(f"\nload average: {open('/proc/loadavg').read().split()[:3]}")
    save_results("bench_pretokenize", results, args)


if __name__ == "__main__":
    main()
