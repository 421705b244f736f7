"""Chinese word segmentation: segkit's ChineseMaxMatch against jieba and a naive Python MaxMatch.

Input: the SIGHAN 2005 pku and msr test texts (``../shared/data/sighan2005``,
``pku_test.utf8`` + ``msr_test.utf8``), each line stripped, empty lines left
out.  Everything runs on one thread; segkit uses its default dictionary
(jieba's 349,045 words), forward mode (the default, bidirectional, does
both directions and is timed too, for information), ``alnum_runs=True``.

(a) throughput, characters per second, best of N interleaved rounds:
    segkit ``cut_batch(lines)`` (and, for information, with
    ``keep_whitespace=True``) vs jieba ``lcut(line, HMM=False)`` per line
    (after ``jieba.initialize()``), target ratio >= 50; full mode, segkit
    ``cut_all(line)`` vs jieba ``lcut(line, cut_all=True)`` per line (the
    words checked equal first, jieba's empty strings left out); and vs a naive
    Python forward MaxMatch over the same word set (for each position, try
    the longest window first, a set lookup per candidate), target >= 30.
    The naive matcher's output is checked against segkit with
    ``alnum_runs=False`` (the textbook algorithm), line by line.  Each
    round times about a second of every system: segkit's calls are
    repeated within a round (``cut_batch`` 40 times, ``cut`` per line 10
    times, averaged), as jieba's and the naive matcher's loops over the
    lines take a second or more.  Timing one 20 ms call per round instead
    would let the best round catch a lucky moment of a shared machine that
    a one-second run of the peer averages out.
(b) start-up, in a fresh interpreter: ``import`` + default dictionary +
    first cut for segkit (after one unmeasured run, so segkit's model cache
    and numba's kernel cache exist) vs ``import jieba`` +
    ``jieba.initialize()`` + first ``lcut`` (jieba's own cache file exists
    after its unmeasured run too); target: segkit below jieba.
(c) memory: resident set size (``VmRSS`` of ``/proc/self/status``) added by
    the loaded default segmenter (load + first cut, measured after
    ``import segkit`` and after a one-word segmenter has loaded numba's
    runtime and the compiled kernels, which are reported separately) vs
    added by jieba's initialized dictionary (after ``import jieba``:
    ``initialize()`` + first ``lcut``), each in a fresh interpreter.

Results go to ``benchmarks/results/chinese.json``.

Run from the repository root: ``python benchmarks/bench_chinese.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import json
import os
import sys
import tempfile
import time

TARGET_JIEBA = 50.0
TARGET_NAIVE = 30.0
SIGHAN = C.DATA_DIR / "sighan2005"
FILES = ("pku_test.utf8", "msr_test.utf8")
#: segkit calls per round, so that each round times about a second of
#: every system (see the module docstring).
SEGKIT_BATCH_CALLS = 40
SEGKIT_LINE_CALLS = 10
SAMPLE = "他说：“iPhone 15 的售价是7999元，比去年上涨了3.5%。”我来到北京清华大学。"

# ------------------------------------------------------------------ children
SEGKIT_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {repo!r})
import segkit
seg_cls = segkit.ChineseMaxMatch  # imports segkit_cjk
t1 = time.perf_counter()
seg = seg_cls()
t2 = time.perf_counter()
words = seg.cut({sample!r})
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "load": t2 - t1, "first_cut": t3 - t2, "module": segkit.__file__,
                  "nwords": len(words)}}))
"""

JIEBA_CHILD = r"""
import json, logging, time
t0 = time.perf_counter()
import jieba
t1 = time.perf_counter()
jieba.setLogLevel(logging.WARNING)
jieba.initialize()
t2 = time.perf_counter()
words = jieba.lcut({sample!r}, HMM=False)
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "load": t2 - t1, "first_cut": t3 - t2, "module": jieba.__file__,
                  "nwords": len(words)}}))
"""

MEMORY_CHILD = r"""
import json, logging, sys
sys.path.insert(0, {repo!r})

def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")

lines = json.loads(open({lines_path!r}, encoding="utf-8").read())
base = rss_kib()
if {which!r} == "segkit":
    import segkit
    cls = segkit.ChineseMaxMatch
    after_import = rss_kib()
    # numba's runtime and the compiled kernels, with a one-word dictionary
    tiny = cls(["研究"])
    tiny.cut({sample!r})
    tiny.cut_batch(lines[:10])
    del tiny
    runtime = rss_kib()
    seg = cls()
    seg.cut({sample!r})
    loaded = rss_kib()
    seg.cut_batch(lines)
else:
    import jieba
    jieba.setLogLevel(logging.WARNING)
    after_import = rss_kib()
    runtime = after_import
    jieba.initialize()
    jieba.lcut({sample!r}, HMM=False)
    loaded = rss_kib()
    for line in lines:
        jieba.lcut(line, HMM=False)
after_all = rss_kib()
print(json.dumps({{"start_kib": base, "after_import_kib": after_import, "runtime_kib": runtime, "loaded_kib": loaded,
                  "after_segmenting_kib": after_all}}))
"""


# --------------------------------------------------------------------- naive
def naive_fmm(words: set[str], max_len: int):
    """Textbook forward MaxMatch in pure Python: at each position try the
    ``max_len`` window, then shorter ones, with a set lookup each; a
    character that starts no word is a word of its own."""

    def cut(line: str) -> list[str]:
        out = []
        for chunk in line.split():
            i, n = 0, len(chunk)
            while i < n:
                for j in range(min(n, i + max_len), i, -1):
                    if j == i + 1 or chunk[i:j] in words:
                        out.append(chunk[i:j])
                        i = j
                        break
        return out

    return cut


def read_lines() -> list[str]:
    lines: list[str] = []
    for name in FILES:
        path = SIGHAN / name
        if not path.is_file():
            sys.exit(
                f"benchmark data not found: {path}\nThis benchmark needs the SIGHAN 2005 test files in the shared "
                f"data folder beside the checkout ({C.DATA_DIR}); they are not bundled with segkit."
            )
        text = path.read_bytes().decode("utf-8").lstrip("\ufeff")
        lines.extend(line.strip() for line in text.split("\n"))
    return [line for line in lines if line]


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=5, quick_repeat=3)
    try:
        import jieba
    except ImportError:
        sys.exit("jieba is not installed (pip install jieba); it is the peer this benchmark compares with")
    import logging

    jieba.setLogLevel(logging.WARNING)
    import segkit

    lines = read_lines()
    if args.quick:
        lines = lines[::3]
    nchars = sum(map(len, lines))
    results: dict = {"input": {"files": list(FILES), "lines": len(lines), "chars": nchars,
                               "utf8_bytes": C.utf8_bytes(lines)}}  # fmt: skip
    print(f"input: {' + '.join(FILES)}: {len(lines):,} lines, {nchars:,} characters")

    # ------------------------------------------------------- (a) throughput
    cache = tempfile.TemporaryDirectory(prefix="segkit-bench-cache-")
    os.environ["SEGKIT_CACHE_DIR"] = cache.name  # the children inherit it
    t0 = time.perf_counter()
    both = segkit.ChineseMaxMatch()
    print(f"segkit default segmenter built in {time.perf_counter() - t0:.2f}s (first use, empty cache)")
    seg = segkit.ChineseMaxMatch(mode="forward")
    textbook = segkit.ChineseMaxMatch(mode="forward", alnum_runs=False)
    keep = segkit.ChineseMaxMatch(mode="forward", keep_whitespace=True)
    words = set(seg.words)
    max_len = max(map(len, words))
    naive = naive_fmm(words, max_len)
    jieba.initialize()

    # correctness of the comparison: naive == segkit textbook
    full_mismatches = sum(seg.cut_all(line) != [w for w in jieba.lcut(line, cut_all=True) if w and not w.isspace()]
                          for line in lines)
    print(f"segkit cut_all vs jieba lcut(cut_all=True): {full_mismatches} differing lines of {len(lines):,}")
    results["full_mode_mismatches"] = full_mismatches
    naive_out = [naive(line) for line in lines]
    mismatches = sum(a != b for a, b in zip(naive_out, textbook.cut_batch(lines)))
    print(f"naive Python FMM vs segkit alnum_runs=False: {mismatches} differing lines of {len(lines):,}")
    results["naive_vs_segkit_textbook_mismatches"] = mismatches

    print(f"\n(a) throughput, one thread, best of {args.repeat} interleaved rounds (segkit: seconds per call,"
          f" averaged over {SEGKIT_BATCH_CALLS} / {SEGKIT_LINE_CALLS} calls a round)")
    systems = {
        "segkit cut_batch": lambda: seg.cut_batch(lines),
        "segkit cut per line": lambda: [seg.cut(line) for line in lines],
        "segkit cut_batch keep_whitespace": lambda: keep.cut_batch(lines),
        "segkit cut_batch bidirectional": lambda: both.cut_batch(lines),
        "jieba lcut(HMM=False) per line": lambda: [jieba.lcut(line, HMM=False) for line in lines],
        "naive Python FMM per line": lambda: [naive(line) for line in lines],
        "segkit cut_all per line": lambda: [seg.cut_all(line) for line in lines],
        "jieba lcut(cut_all=True) per line": lambda: [jieba.lcut(line, cut_all=True) for line in lines],
    }
    calls = {"segkit cut_batch": SEGKIT_BATCH_CALLS, "segkit cut per line": SEGKIT_LINE_CALLS,
             "segkit cut_all per line": SEGKIT_LINE_CALLS, "segkit cut_batch bidirectional": SEGKIT_BATCH_CALLS,
             "segkit cut_batch keep_whitespace": SEGKIT_BATCH_CALLS}
    times = C.time_rounds(systems, repeat=args.repeat, number={n: calls.get(n, 1) for n in systems})
    best = {n: min(ts) for n, ts in times.items()}
    C.print_table(
        ["system", "best s", "M chars/s"],
        [[n, s, nchars / s / 1e6] for n, s in best.items()],
    )
    ratios = {}
    for peer, target in (("jieba lcut(HMM=False) per line", TARGET_JIEBA), ("naive Python FMM per line", TARGET_NAIVE)):
        r = best[peer] / best["segkit cut_batch"]
        med = C.median_ratio(times, peer, "segkit cut_batch")
        ratios[peer] = {"best_ratio": r, "median_round_ratio": med, "target": target, "target_met": r >= target}
        print(f"  segkit cut_batch vs {peer}: {r:.1f}x (median of rounds {med:.1f}x; target >= {target:g}x: "
              f"{C.verdict(r, target, at_least=True)})")
    r_line = best["jieba lcut(HMM=False) per line"] / best["segkit cut per line"]
    print(f"  (per-line segkit cut vs jieba, for information: {r_line:.1f}x)")
    r_full = best["jieba lcut(cut_all=True) per line"] / best["segkit cut_all per line"]
    print(f"  full mode, segkit cut_all vs jieba lcut(cut_all=True), per line: {r_full:.1f}x")
    r_keep = best["segkit cut_batch keep_whitespace"] / best["segkit cut_batch"]
    print(f"  (cut_batch with keep_whitespace=True / without, for information: {r_keep:.2f})")
    results["throughput"] = {
        "seconds": best,
        "chars_per_second": {n: nchars / s for n, s in best.items()},
        "all_rounds": times,
        "ratios": ratios,
        "per_line_cut_vs_jieba": r_line,
        "full_mode_cut_all_vs_jieba": r_full,
        "keep_whitespace_over_default": r_keep,
        "naive_max_window": max_len,
    }

    # ---------------------------------------------------------- (b) start-up
    n_start = 3
    print(f"\n(b) start-up in a fresh interpreter (one unmeasured run each, then best of {n_start})")
    env = dict(os.environ)
    env["SEGKIT_CACHE_DIR"] = cache.name
    seg_code = SEGKIT_CHILD.format(repo=str(C.REPO_ROOT), sample=SAMPLE)
    jieba_code = JIEBA_CHILD.format(sample=SAMPLE)
    warm = {"segkit": C.run_child(seg_code, env), "jieba": C.run_child(jieba_code, env)}
    runs: dict[str, list[dict]] = {"segkit": [], "jieba": []}
    for _ in range(n_start):
        runs["segkit"].append(C.run_child(seg_code, env))
        runs["jieba"].append(C.run_child(jieba_code, env))
    startup = {}
    for name, rs in runs.items():
        for r in rs:
            r["total"] = r["import"] + r["load"] + r["first_cut"]
        b = min(rs, key=lambda r: r["total"])
        startup[name] = {"best": b, "runs": rs, "unmeasured_first_run": warm[name]}
        print(f"  {name:6}: import {b['import']:.3f}s + load {b['load']:.3f}s + first cut {b['first_cut']:.3f}s "
              f"= {b['total']:.3f}s   (child wall time incl. interpreter start {b['wall']:.2f}s)")
    s_tot, j_tot = startup["segkit"]["best"]["total"], startup["jieba"]["best"]["total"]
    met = s_tot < j_tot
    print(f"  segkit / jieba start-up: {s_tot / j_tot:.2f} (target: segkit below jieba: {'MET' if met else 'NOT MET'})")
    startup["target_met"] = met
    startup["ratio_segkit_over_jieba"] = s_tot / j_tot
    results["startup"] = startup

    # ------------------------------------------------------------ (c) memory
    print("\n(c) memory: VmRSS in a fresh interpreter (min of 2 runs)")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump(lines, fh, ensure_ascii=False)
        lines_path = fh.name
    memory = {}
    try:
        for which in ("segkit", "jieba"):
            code = MEMORY_CHILD.format(repo=str(C.REPO_ROOT), which=which, sample=SAMPLE, lines_path=lines_path)
            rs = [C.run_child(code, env) for _ in range(2)]
            for r in rs:
                r["added_by_dictionary_mib"] = (r["loaded_kib"] - r["runtime_kib"]) / 1024
                r["kernels_mib"] = (r["runtime_kib"] - r["after_import_kib"]) / 1024
                r["import_mib"] = (r["after_import_kib"] - r["start_kib"]) / 1024
                r["after_segmenting_mib"] = (r["after_segmenting_kib"] - r["after_import_kib"]) / 1024
            b = min(rs, key=lambda r: r["added_by_dictionary_mib"])
            memory[which] = {"best": b, "runs": rs}
            kernels = f"numba runtime + compiled kernels +{b['kernels_mib']:.1f} MiB; " if which == "segkit" else ""
            print(f"  {which:6}: import +{b['import_mib']:.1f} MiB; {kernels}"
                  f"dictionary loaded + first cut +{b['added_by_dictionary_mib']:.1f} MiB; after segmenting the input "
                  f"+{b['after_segmenting_mib']:.1f} MiB over the import (total RSS {b['after_segmenting_kib'] / 1024:.0f} MiB)")
    finally:
        os.unlink(lines_path)
    s_mem = memory["segkit"]["best"]["added_by_dictionary_mib"]
    j_mem = memory["jieba"]["best"]["added_by_dictionary_mib"]
    print(f"  dictionary RSS, segkit / jieba: {s_mem:.1f} / {j_mem:.1f} MiB = {s_mem / j_mem:.2f}")
    memory["ratio_segkit_over_jieba"] = s_mem / j_mem
    results["memory"] = memory

    print("\nsummary")
    for peer, r in ratios.items():
        print(f"  speed vs {peer}: {r['best_ratio']:.1f}x (target >= {r['target']:g}x: "
              f"{'MET' if r['target_met'] else 'NOT MET'})")
    print(f"  start-up: segkit {s_tot:.3f}s vs jieba {j_tot:.3f}s (target segkit < jieba: {'MET' if met else 'NOT MET'})")
    print(f"  dictionary memory: segkit +{s_mem:.1f} MiB vs jieba +{j_mem:.1f} MiB; whole process after "
          f"segmenting: segkit {memory['segkit']['best']['after_segmenting_kib'] / 1024:.0f} MiB vs jieba "
          f"{memory['jieba']['best']['after_segmenting_kib'] / 1024:.0f} MiB")
    C.save_results("chinese", results, args)
    cache.cleanup()


if __name__ == "__main__":
    main()
