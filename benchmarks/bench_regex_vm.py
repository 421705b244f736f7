"""The compiled pattern matcher (regex_program + regex_kernels) against :mod:`regex`.

For every published pre-tokenization pattern
(:data:`segkit.presets.bpe.published_patterns.PUBLISHED_PATTERNS`), on the
multilingual corpus (one thread, interleaved rounds, best time kept; MB/s
of UTF-8 input):

* ``kernel, batch``: :func:`~segkit.presets.bpe.regex_kernels.match_rows`
  over the joined code points of all texts (conversion not included);
* ``spans_batch from str list``: the same with the texts' conversion to
  code points and the output copy included;
* ``Program.spans per text``: one Python call per text;
* ``regex finditer per text``: ``[m.span() for m in rx.finditer(t)]``;
* ``pieces.matches per text``: the Rust-semantics loop segkit runs today;
* for the three tiktoken patterns, segkit's hand-written matcher
  (``split_batch``, UTF-8 bytes) for comparison.

The ratio printed is ``regex finditer / kernel, batch`` (and from a str
list).  Compile times (parsing plus the class table from :mod:`regex`)
are printed too.

Then scaling: single texts of long runs of one kind (spaces, upper-case
letters, marks, digits, newlines, ...) at 10^5 and 10^6 characters, the
kernel's nanoseconds per character for every pattern and the time ratio
10^6 / 10^5 (linear time: about 10), with regex finditer at 10^5.

    python benchmarks/bench_regex_vm.py [--quick] [--repeat N]
"""

from __future__ import annotations

import _common  # noqa: F401  (first: sys.path, RAYON_NUM_THREADS=1)

import time

import numpy as np

from _common import load_corpus, parse_args, print_table, save_results, time_rounds


def mbps(nbytes: int, seconds: float) -> float:
    return nbytes / seconds / 1e6


def main() -> None:
    import regex

    from segkit.presets.bpe.char_classes import class_table
    from segkit.presets.bpe.pieces import matches
    from segkit.presets.bpe.pretokenize import COMPILED_PATTERNS, NO_SPECIALS, encode_texts, split_batch
    from segkit.presets.bpe.published_patterns import PUBLISHED_PATTERNS
    from segkit.presets.bpe.regex_kernels import match_rows
    from segkit.presets.bpe.regex_program import compile_pattern

    args = parse_args(__doc__.splitlines()[0])
    texts, _, _ = load_corpus(normalize=False, stride=20 if args.quick else 4)
    nbytes = sum(len(t.encode()) for t in texts)
    joined = "".join(texts)
    cps = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    splits = np.cumsum([0] + [len(t) for t in texts]).astype(np.int64)
    buf, rs = encode_texts(texts)
    table = class_table()
    print(f"corpus: {len(texts)} texts, {nbytes / 1e6:.2f} MB of UTF-8, {len(cps)} code points")

    def from_strs(program):
        c = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        return program.spans_batch(c, np.cumsum([0] + [len(t) for t in texts]))

    rows = []
    results = {"bytes": nbytes, "texts": len(texts), "patterns": {}}
    for name, pattern in PUBLISHED_PATTERNS.items():
        compile_pattern.cache_clear()
        t0 = time.perf_counter()
        program = compile_pattern(pattern)
        compile_s = time.perf_counter() - t0
        rx = regex.compile(pattern)
        out = np.empty((len(cps) + len(texts), 2), dtype=np.int64)
        span_splits = np.empty(len(texts) + 1, dtype=np.int64)
        p = program

        systems = {
            "kernel, batch": lambda: match_rows(cps, splits, p.pages, p.blocks, p.code, p.sets, p.first, out,
                                                span_splits),
            "spans_batch from str list": lambda: from_strs(p),
            "Program.spans per text": lambda: [p.spans(t) for t in texts],
            "regex finditer per text": lambda: [[m.span() for m in rx.finditer(t)] for t in texts],
            "pieces.matches per text": lambda: [list(matches(rx, t)) for t in texts],
        }
        kind = COMPILED_PATTERNS.get(pattern)
        if kind is not None:
            systems["hand-written matcher, batch (bytes)"] = lambda: split_batch(kind, buf, rs, table, NO_SPECIALS)
        print(f"\n{name} (compiled in {compile_s * 1e3:.0f} ms, {len(p.code)} instructions, "
              f"{len(p.blocks) // 256} table blocks):")
        times = time_rounds(systems, repeat=args.repeat)
        best = {k: min(v) for k, v in times.items()}
        ref = best["regex finditer per text"]
        results["patterns"][name] = {"compile_ms": compile_s * 1e3, **{k: mbps(nbytes, v) for k, v in best.items()}}
        for k, v in best.items():
            rows.append([name, k, mbps(nbytes, v), ref / v])
    print_table(["pattern", "system", "MB/s", "x regex finditer"], rows,
                title=f"throughput on the corpus ({nbytes / 1e6:.1f} MB, {len(texts)} texts, one thread)")
    results["scaling"] = run_scaling(args)
    save_results("regex_vm", results, args)


def adversarial(n: int) -> dict[str, str]:
    import random

    rng = random.Random(7)
    return {
        "spaces": " " * n, "spaces, x": " " * (n - 1) + "x", "upper": "A" * n, "upper, digit": "A" * (n - 1) + "1",
        "marks": "\u0301" * n, "digits": "1" * n, "punctuation": "!" * n, "newlines": "\n" * n,
        "space newline": " \n" * (n // 2), "Aa": "Aa" * (n // 2), "cjk": "中" * n,
        "random bytes": bytes(rng.randrange(256) for _ in range(n)).decode("utf-8", "replace")[:n],
    }


def run_scaling(args) -> dict:
    import regex

    from segkit.presets.bpe.published_patterns import PUBLISHED_PATTERNS
    from segkit.presets.bpe.regex_program import compile_pattern

    sizes = (10**5, 10**6)
    texts = {n: adversarial(n) for n in sizes}
    out = {}
    rows = []
    for name, pattern in PUBLISHED_PATTERNS.items():
        p = compile_pattern(pattern)
        rx = regex.compile(pattern)
        worst = None
        for kind in texts[sizes[0]]:
            secs = {}
            for n in sizes:
                t = texts[n][kind]
                secs[n] = min(_timed(lambda: p.spans(t)) for _ in range(max(1, args.repeat // 2)))
            t = texts[sizes[0]][kind]
            rx_s = _timed(lambda: [m.span() for m in rx.finditer(t)])
            row = [name, kind, secs[sizes[0]] / sizes[0] * 1e9, secs[sizes[1]] / sizes[1] * 1e9,
                   secs[sizes[1]] / secs[sizes[0]], rx_s / sizes[0] * 1e9]
            out[f"{name}/{kind}"] = row[2:]
            if worst is None or row[3] > worst[3]:
                worst = row
        rows.append(worst)
    print_table(["pattern", "worst text", "ns/char 1e5", "ns/char 1e6", "1e6/1e5", "regex ns/char 1e5"], rows,
                title="scaling: the slowest run text per pattern (kernel via Program.spans)")
    return out


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
