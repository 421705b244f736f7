"""Parallel batches: ``num_threads=1`` vs ``num_threads=2`` for WordPiece and Chinese MaxMatch.

segkit's compiled kernels release the GIL, and ``encode_batch`` /
``cut_batch`` split a large batch into contiguous chunks run on a thread pool
(``segkit.runtime.threads``; a batch with fewer than ``MIN_CHARS_PER_THREAD``
characters per thread stays on one thread).

(a) WordPiece (``WordPiece(bert-base-multilingual-cased.txt, special_tokens=[])``):
    ``encode_batch(texts, num_threads=1)`` vs ``num_threads=2`` on the whole
    multilingual corpus (shuffled with a fixed seed, BERT-cased normalized up
    front), target: 2 threads >= 1.7x one thread; and on a batch of 1,000
    sentences, target: 2 threads never slower than one (judged with a 5 %
    tolerance for timing noise).
(b) ``ChineseMaxMatch()`` (default dictionary, forward): ``cut_batch(lines,
    num_threads=...)`` on the SIGHAN 2005 pku + msr test lines (stripped, empty
    lines left out), same two targets (the 1,000-line batch: the first 1,000
    lines); for information also on all four SIGHAN test sets.  The 1,000-text
    batches are timed in 3x as many rounds of ~0.1 s each.

For the large batches a reference is timed in the same rounds: two GIL-free
jobs (``hashlib.sha256`` of a buffer) one after the other vs on two threads,
i.e. the parallel speedup the machine gives at that moment; and the CPU time
per wall time of one 2-thread call (about 2 when both threads run at once).

Each pair is timed in interleaved rounds (best of N; the ratio of the best
times and the median of per-round ratios are printed).  The outputs of 1 and
2 threads are checked to be equal.  On a machine with one core, or one
loaded by other work, two threads cannot reach 1.7x: ``os.cpu_count()`` and
the load average are printed and saved with the results.

Results: ``benchmarks/results/bench_threads.json``.
Run from the repository root: ``python benchmarks/bench_threads.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import hashlib
import os
import random
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import segkit
from segkit.runtime import threads as parallel

SEED = 20240607
TARGET_LARGE = 1.7
TARGET_SMALL = 1.0
TOLERANCE = 0.95  # "never slower": t1 / t2 >= 0.95 (timing noise)
SMALL = 1_000
SIGHAN = C.DATA_DIR / "sighan2005"


def read_sighan(names: tuple[str, ...]) -> list[str]:
    lines: list[str] = []
    for name in names:
        path = SIGHAN / f"{name}_test.utf8"
        if not path.is_file():
            raise FileNotFoundError(path)
        text = path.read_bytes().decode("utf-8").lstrip("\ufeff")
        lines.extend(line.strip() for line in text.split("\n"))
    return [line for line in lines if line]


def threads_used(texts, n: int) -> int:
    """How many threads segkit.runtime.threads will spread ``texts`` over when asked for ``n``."""
    total = sum(map(len, texts))
    return max(1, min(n, total // parallel.MIN_CHARS_PER_THREAD, len(texts)))


_REF_POOL = ThreadPoolExecutor(2)


def reference_pair(seconds: float):
    """Two GIL-free jobs (hashlib.sha256 of a buffer, ~``seconds`` each), run one
    after the other or on two threads: the parallel speedup the machine
    offers right now, whatever else is running on it."""
    data = b"\x5a" * (1 << 22)
    t0 = time.perf_counter()
    hashlib.sha256(data).digest()
    per = time.perf_counter() - t0
    data = b"\x5a" * max(1 << 20, int(len(data) * seconds / max(per, 1e-6)))

    def job(_=None):
        return hashlib.sha256(data).digest()

    return (lambda: [job(), job()]), (lambda: list(_REF_POOL.map(job, range(2))))


def cpu_per_wall(fn) -> float:
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return (time.process_time() - c0) / (time.perf_counter() - w0)


def compare(label: str, one, two, texts, repeat: int, target: float, *, small: bool) -> dict:
    """Time one(…) vs two(…) interleaved; print and return the figures."""
    nchars = sum(map(len, texts))
    probe = time.perf_counter()
    one()
    t = time.perf_counter() - probe
    number = max(1, int(0.1 / max(t, 1e-6))) if small else 1
    systems = {"1 thread": one, "2 threads": two}
    if small:
        repeat *= 3  # cheap rounds; more of them tame the noise of a loaded machine
    else:
        # the machine's own parallel speedup, measured in the same rounds
        systems["reference, 2 jobs sequential"], systems["reference, 2 jobs on 2 threads"] = reference_pair(t / 2)
    times = C.time_rounds(systems, repeat=repeat, number=number, verbose=False)
    b1, b2 = min(times["1 thread"]), min(times["2 threads"])
    ratio = b1 / b2
    med = C.median_ratio(times, "1 thread", "2 threads")
    need = target * (TOLERANCE if small else 1.0)
    met = ratio >= need
    chunks = threads_used(texts, 2)
    ref = None
    if not small:
        ref = min(times["reference, 2 jobs sequential"]) / min(times["reference, 2 jobs on 2 threads"])
        cpu2 = cpu_per_wall(two)
    print(f"  {label}: {len(texts):,} texts, {nchars:,} chars (spread over {chunks} thread{'s' * (chunks > 1)} "
          f"with num_threads=2)")
    print(f"    1 thread {b1 * 1e3:.2f} ms, 2 threads {b2 * 1e3:.2f} ms (best of {repeat}"
          f"{f', {number} calls each' if number > 1 else ''}): speedup {ratio:.2f}x [median of rounds {med:.2f}x]"
          f"  target {'never slower (>= %.2fx)' % need if small else '>= %gx' % target}: "
          f"{'MET' if met else 'NOT MET'}")
    if ref is not None:
        print(f"    reference (two GIL-free hashlib jobs, same rounds): 2 threads give {ref:.2f}x on this machine now; "
              f"segkit reaches {ratio / ref:.0%} of that; CPU time / wall time of one 2-thread call: {cpu2:.2f}")
    if chunks < 2:
        print("    (num_threads=2 does not split this batch: both run the same code on one thread, so the ratio "
              "shows only timing noise)")
    return {"texts": len(texts), "chars": nchars, "chunks_with_2_threads": chunks, "calls_per_round": number,
            "repeat": repeat, "reference_speedup": ref, "cpu_per_wall_2_threads": None if small else cpu2,
            "seconds_1_thread": b1, "seconds_2_threads": b2, "speedup": ratio, "median_round_speedup": med,
            "target": target, "target_judged_at": need, "target_met": met,
            "rounds": times}  # fmt: skip


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=7, quick_repeat=3)
    C.require_data()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; "
          f"segkit.runtime.threads.MIN_CHARS_PER_THREAD = {parallel.MIN_CHARS_PER_THREAD:,}")
    results: dict = {"cpu_count": os.cpu_count(), "loadavg_start": os.getloadavg(),
                     "min_chars_per_thread": parallel.MIN_CHARS_PER_THREAD}  # fmt: skip

    # ---------------------------------------------------------- (a) WordPiece
    texts, _, how = C.load_corpus()
    random.Random(SEED).shuffle(texts)
    if args.quick:
        texts = texts[: len(texts) // 4]
    print(f"\n(a) WordPiece encode_batch, multilingual corpus shuffled (seed {SEED}), normalized with {how}")
    wp = segkit.WordPiece(C.MULTILINGUAL_VOCAB, special_tokens=[])
    small = texts[:SMALL]
    for batch in (small, texts):
        wp.encode_batch(batch, num_threads=1)
        wp.encode_batch(batch, num_threads=2)
    a1, a2 = wp.encode_batch(texts, num_threads=1), wp.encode_batch(texts, num_threads=2)
    same = np.array_equal(a1._data, a2._data) and np.array_equal(a1.row_splits, a2.row_splits)
    print(f"  outputs of 1 and 2 threads equal: {same}")
    wpr = {
        "large": compare("whole corpus", lambda: wp.encode_batch(texts, num_threads=1),
                         lambda: wp.encode_batch(texts, num_threads=2), texts, args.repeat, TARGET_LARGE, small=False),
        "small": compare(f"{SMALL:,} sentences", lambda: wp.encode_batch(small, num_threads=1),
                         lambda: wp.encode_batch(small, num_threads=2), small, args.repeat, TARGET_SMALL, small=True),
        "outputs_equal": bool(same),
    }  # fmt: skip
    results["wordpiece"] = wpr

    # ---------------------------------------------------- (b) ChineseMaxMatch
    try:
        seg = segkit.ChineseMaxMatch()
    except AttributeError as e:
        print(f"\nSKIP ChineseMaxMatch: plugin not available ({e})")
        seg = None
    try:
        lines = read_sighan(("pku", "msr"))
        all_lines = read_sighan(("pku", "msr", "cityu", "as"))
    except FileNotFoundError as e:
        print(f"\nSKIP ChineseMaxMatch: SIGHAN 2005 test file missing: {e}")
        seg = None
    if seg is not None:
        if args.quick:
            lines, all_lines = lines[::2], all_lines[::2]
        print("\n(b) ChineseMaxMatch() (default dictionary, forward) cut_batch, SIGHAN 2005 test lines")
        small = lines[:SMALL]
        for batch in (small, lines, all_lines):
            seg.cut_batch(batch, num_threads=1)
            seg.cut_batch(batch, num_threads=2)
        same = seg.cut_batch(all_lines, num_threads=1) == seg.cut_batch(all_lines, num_threads=2)
        print(f"  outputs of 1 and 2 threads equal: {same}")
        results["chinese"] = {
            "large": compare("pku + msr test", lambda: seg.cut_batch(lines, num_threads=1),
                             lambda: seg.cut_batch(lines, num_threads=2), lines, args.repeat, TARGET_LARGE,
                             small=False),
            "small": compare(f"first {SMALL:,} lines", lambda: seg.cut_batch(small, num_threads=1),
                             lambda: seg.cut_batch(small, num_threads=2), small, args.repeat, TARGET_SMALL,
                             small=True),
            "all_four_sets": compare("all four test sets (information)", lambda: seg.cut_batch(all_lines, num_threads=1),
                                     lambda: seg.cut_batch(all_lines, num_threads=2), all_lines, args.repeat,
                                     TARGET_LARGE, small=False),
            "outputs_equal": bool(same),
        }  # fmt: skip
        r = results["chinese"]["large"]
        if r["chunks_with_2_threads"] < 2:
            print(f"  note: pku + msr has {r['chars']:,} characters, below 2 x MIN_CHARS_PER_THREAD = "
                  f"{2 * parallel.MIN_CHARS_PER_THREAD:,}, so cut_batch(num_threads=2) stays on one thread")
    results["loadavg_end"] = os.getloadavg()
    C.save_results("bench_threads", results, args)


if __name__ == "__main__":
    main()
