"""Training benchmarks: segkit's trainers against their peers.

Rows (one process, interleaved rounds, best time kept; 1 thread everywhere):

* ``train_bpe`` vs HF ``BpeTrainer`` (ByteLevel pre-tokenizer) and
  SentencePiece's BPE trainer, 32,000 tokens on the multilingual corpus
  (texts as documents). Targets: HF / segkit >= 5, SentencePiece / segkit > 1.
* the seed's incremental method in plain Python (benchmarks/bpe_seed_python.py)
  against ``train_bpe`` at a small vocabulary (it takes minutes at 32k), with
  the time split into counting and merging.

Then: counting time for the corpus repeated 1x, 4x, 16x (linear?) and with 2
threads; counting on 1 vs 2 threads for both trainers, documents and a file
(best of interleaved rounds, with CPU times for Amdahl's law and the
machine's own 2-thread speed-up at the time); peak memory (separate processes) of segkit and HF on the 32k job;
with ``--big``, a generated 1 GB file trained with 2 threads (peak memory vs
the 10 MB file). ``--check-pretokenizer`` compares the compiled GPT-2
pre-tokenizer with ``regex`` on every text of the corpus.

To add a row, write a function returning a :class:`Row` and append it in
:func:`rows`.

    python benchmarks/bench_train.py [--quick] [--repeat N] [--big] [--check-pretokenizer] [--only threads]
"""

from __future__ import annotations

import _common  # noqa: F401  (first: sys.path, RAYON_NUM_THREADS=1)

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from _common import CORPUS, REPO_ROOT, print_table, require_data, run_child, save_results

VOCAB_SIZE = 32000


@dataclass
class Row:
    """One comparison: segkit and its peers on the same input."""

    name: str
    segkit: Callable[[], Any]
    peers: dict[str, Callable[[], Any]]
    targets: dict[str, float] = field(default_factory=dict)  # peer -> least peer/segkit time ratio


def load_texts(limit: int | None = None) -> list[str]:
    texts = []
    with open(CORPUS, encoding="utf-8") as f:
        for line in f:
            texts.append(json.loads(line)["text"])
            if limit and len(texts) >= limit:
                break
    return texts


# ---------------------------------------------------------------- the rows
def bpe_row(texts: list[str], vocab_size: int) -> Row:
    import segkit

    def ours():
        return segkit.train_bpe(texts, vocab_size, num_threads=1, show_progress=False)

    peers: dict[str, Callable[[], Any]] = {}
    targets: dict[str, float] = {}
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        def hf():
            tok = Tokenizer(models.BPE())
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
            tr = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False,
                                     initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
            tok.train_from_iterator(texts, tr)
            return tok

        peers["HF BpeTrainer"] = hf
        targets["HF BpeTrainer"] = 5.0
    except ImportError:
        print("SKIP HF tokenizers: not installed")
    try:
        import sentencepiece as spm

        def sp():
            spm.SentencePieceTrainer.train(
                sentence_iterator=iter(texts), model_writer=io.BytesIO(), model_type="bpe",
                vocab_size=vocab_size, num_threads=1, hard_vocab_limit=False, minloglevel=2,
            )

        peers["SentencePiece BPE"] = sp
        targets["SentencePiece BPE"] = 1.0
    except ImportError:
        print("SKIP sentencepiece: not installed (pip install sentencepiece)")
    return Row(f"BPE {vocab_size} tokens", ours, peers, targets)


def rows(texts: list[str], args) -> list[Row]:
    return [bpe_row(texts, VOCAB_SIZE)]


def _timed_rounds(systems, repeat, warmup):
    """Wall and CPU seconds (process_time: all threads of this process) of each
    system per round; the order rotates from round to round."""
    names = list(systems)
    for n in names:
        for _ in range(warmup):
            systems[n]()
    wall = {n: [] for n in names}
    cpu = {n: [] for n in names}
    for r in range(repeat):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            t0, c0 = time.perf_counter(), time.process_time()
            systems[n]()
            wall[n].append(time.perf_counter() - t0)
            cpu[n].append(time.process_time() - c0)
        print(f"  round {r + 1}/{repeat}: " + ", ".join(f"{n} {wall[n][-1]:.3g}s (cpu {cpu[n][-1]:.3g}s)" for n in names),
              flush=True)
    return wall, cpu


def run_rows(texts, args, results):
    for row in rows(texts, args):
        print(f"\n== {row.name}")
        systems = {"segkit": row.segkit, **row.peers}
        wall, cpu = _timed_rounds(systems, args.repeat, 0 if args.quick else 1)
        table = [["segkit", min(wall["segkit"]), min(cpu["segkit"]), 1.0, 1.0, "", ""]]
        out = {"wall_seconds": wall, "cpu_seconds": cpu, "ratios": {}}
        for peer in row.peers:
            rw = statistics.median(p / s for p, s in zip(wall[peer], wall["segkit"]))
            rc = statistics.median(p / s for p, s in zip(cpu[peer], cpu["segkit"]))
            target = row.targets.get(peer)
            verdict = "" if target is None else ("MET" if rw >= target else "NOT MET")
            out["ratios"][peer] = {"wall": rw, "cpu": rc, "target": target, "verdict_wall": verdict}
            table.append([peer, min(wall[peer]), min(cpu[peer]), rw, rc, f">= {target:g}" if target else "", verdict])
        print_table(["system", "best wall s", "best cpu s", "x segkit wall", "x segkit cpu", "target", "(wall)"],
                    table, title=f"{row.name} (ratios: median over rounds)")
        results[row.name] = out


# ------------------------------------------------- the seed's plain method
def run_plain(texts, args, results):
    import segkit
    from bpe_seed_python import train as plain_train

    merges = 150 if args.quick else 400
    vocab = 256 + merges
    print(f"\n== seed's method in plain Python vs train_bpe, {merges} merges")
    t = time.perf_counter()
    plain_merges, p_count, p_merge = plain_train(texts, vocab)
    p_total = time.perf_counter() - t
    segkit.train_bpe(texts[:100], 300, show_progress=False)  # compiled code loaded
    t = time.perf_counter()
    r = segkit.train_bpe(texts, vocab, show_progress=False)
    s_total = time.perf_counter() - t
    same = plain_merges == r.merges
    table = [
        ["plain Python (seed)", p_count, p_merge, p_total],
        ["segkit", r.stats["count_seconds"], r.stats["merge_seconds"], s_total],
        ["ratio", p_count / r.stats["count_seconds"], p_merge / r.stats["merge_seconds"], p_total / s_total],
    ]
    print_table(["system", "counting s", "merging s", "total s"], table,
                title=f"seed's method, {merges} merges (same merges: {same})")
    full = segkit.train_bpe(texts, VOCAB_SIZE, show_progress=False).stats
    print(f"segkit at {VOCAB_SIZE} tokens: counting {full['count_seconds']:.2f} s, merging {full['merge_seconds']:.2f} s "
          f"({full['unique_pretokens']} distinct pre-tokens of {full['pretokens']}; {full['occurrences_merged']} "
          f"occurrences merged, {full['word_visits']} index entries read, {full['heap_pops']} heap pops)")
    results["seed_plain_python"] = {"merges": merges, "same_merges": same, "plain": [p_count, p_merge, p_total],
                                    "segkit": [r.stats["count_seconds"], r.stats["merge_seconds"], s_total],
                                    "segkit_32k_stats": full}


# ------------------------------------------------------------- scaling
def run_scaling(texts, args, results):
    from segkit.training.bpe import _count, char_classes
    from segkit.presets.bpe.pretokenize import GPT2_PATTERN

    char_classes()
    _count(texts[:100], [], GPT2_PATTERN, 1, "strict", None)
    _count(texts[:100], [], GPT2_PATTERN, 2, "strict", None)
    size = sum(len(t.encode()) for t in texts)
    reps = (1, 2, 4) if args.quick else (1, 4, 16)
    table = []
    out = {}
    for k in reps:
        data = texts * k
        best = {}
        for threads in ((1, 2) if k == reps[-1] else (1,)):
            ts = []
            for _ in range(2 if args.quick else 3):
                t = time.perf_counter()
                _count(data, [], GPT2_PATTERN, threads, "strict", None)
                ts.append(time.perf_counter() - t)
            best[threads] = min(ts)
        row = [f"{k}x ({size * k / 1e6:.0f} MB)", best[1], size * k / best[1] / 1e6]
        row.append(best[1] / best[2] if 2 in best else None)
        table.append(row)
        out[k] = {"seconds_1_thread": best[1], "seconds_2_threads": best.get(2)}
    print_table(["corpus", "count s (1 thread)", "MB/s", "2 threads speed-up"], table,
                title="counting pre-tokens: linear in corpus size?")
    results["counting_scaling"] = out


# ------------------------------------------------------------- threads
def _sha_reference(seconds: float):
    """Two GIL-free jobs (sha256, ~``seconds`` each) one after the other or on
    two threads: the parallel speed-up the machine offers at the moment."""
    import hashlib
    import threading

    data = b"\x5a" * (1 << 22)
    t0 = time.perf_counter()
    hashlib.sha256(data).digest()
    data = b"\x5a" * max(1 << 20, int(len(data) * seconds / max(time.perf_counter() - t0, 1e-6)))

    def run(n):
        if n == 1:
            hashlib.sha256(data).digest(), hashlib.sha256(data).digest()
            return
        ts = [threading.Thread(target=lambda: hashlib.sha256(data).digest()) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    return run


def run_threads(texts, args, results):
    """Counting (pre-tokens for BPE, words for WordPiece), documents in
    memory and the same text as a file, on 1 vs 2 threads: interleaved
    rounds, the ratio of the best times.  A machine shared with other jobs
    depresses that ratio, so each row also gives CPU times: the calling
    thread's (handing out work, concatenating: the serial part S) and the
    whole process's (C1 on 1 thread, C2 on 2), from which Amdahl's law
    predicts the 2-core speed-up C1 / (S + (C2 - S) / 2) (C2 - C1 is the
    threads' extra work, but also grows with the load: cache misses), and
    C1 / (S + (C1 - S) / 2) from the serial part alone; two sha256 jobs on
    1 vs 2 threads, timed in the same rounds, show what the machine offered."""
    from segkit.training.bpe import _count
    from segkit.presets.bpe.pretokenize import GPT2_PATTERN
    from segkit.training.wordpiece import count_corpus_words

    data = texts * (1 if args.quick else 2)
    mb = sum(len(t.encode()) for t in data) / 1e6
    tmp = tempfile.TemporaryDirectory(dir=args.tmpdir)
    path = Path(tmp.name) / "corpus.txt"
    path.write_text("\n".join(data), encoding="utf-8")
    systems = {
        "train_bpe, documents": lambda n: _count(data, [], GPT2_PATTERN, n, "strict", None),
        "train_bpe, file": lambda n: _count(path, [], GPT2_PATTERN, n, "strict", None),
        "train_wordpiece, documents": lambda n: count_corpus_words(data, True, False, n),
        "train_wordpiece, file": lambda n: count_corpus_words(path, True, False, n),
    }
    rounds = args.threads_rounds or (3 if args.quick else 7)
    print(f"\n== counting on 1 vs 2 threads, {mb:.0f} MB, {rounds} interleaved rounds; "
          f"load average {os.getloadavg()[0]:.2f}")
    table = []
    out = {}
    for name, run in systems.items():
        run(1), run(2)  # compiled code loaded, tables' first growth paid
        ref = _sha_reference(0.1)
        wall = {1: [], 2: []}
        main_cpu = {1: [], 2: []}
        cpu = {1: [], 2: []}
        ref_wall = {1: [], 2: []}
        for r in range(rounds):
            for n in ((1, 2) if r % 2 == 0 else (2, 1)):
                t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
                run(n)
                wall[n].append(time.perf_counter() - t0)
                cpu[n].append(time.process_time() - c0)
                main_cpu[n].append(time.thread_time() - m0)
                t0 = time.perf_counter()
                ref(n)
                ref_wall[n].append(time.perf_counter() - t0)
        best = {n: min(wall[n]) for n in wall}
        c1 = min(cpu[1])
        serial = min(main_cpu[2])
        c2 = min(cpu[2])
        predicted = c1 / (serial + max(c2 - serial, 0.0) / 2)
        bound = c1 / (serial + (c1 - serial) / 2)  # the serial part alone
        machine = min(ref_wall[1]) / min(ref_wall[2])
        load = os.getloadavg()[0]
        table.append([name, best[1], best[2], best[1] / best[2], machine, c1, c2, serial, predicted, bound, load])
        out[name] = {"mb": mb, "wall": wall, "cpu": cpu, "main_thread_cpu": main_cpu, "speedup_best": best[1] / best[2],
                     "machine_reference_speedup": machine, "speedup_predicted": predicted,
                     "speedup_bound_serial_only": bound, "loadavg": load}
        print(f"  {name}: 1 thread {[round(x, 3) for x in wall[1]]}, 2 threads {[round(x, 3) for x in wall[2]]}; "
              f"sha256 reference {machine:.2f}x; load {load:.2f}", flush=True)
    tmp.cleanup()
    print_table(["counting", "1 thread s", "2 threads s", "speed-up (best)", "machine's (sha256)", "cpu s, 1 thread",
                 "cpu s, 2 threads", "serial cpu s", "Amdahl (C1, C2, S)", "Amdahl (S only)", "load avg"], table,
                title=f"counting {mb:.0f} MB on 1 vs 2 threads (best of {rounds} interleaved rounds; "
                      "serial = the calling thread's CPU)")
    results["counting_threads"] = out


# -------------------------------------------------------------- memory
_MEM = """
def _hwm_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
def _rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
def _reset_peak():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
"""

_CHILD_SEGKIT = _MEM + """
import json, sys, time
sys.path.insert(0, {root!r})
import segkit
from pathlib import Path
corpus = {corpus}
segkit.train_bpe(["warm up"], 300, show_progress=False)
base = _rss_mb()
_reset_peak()
t = time.perf_counter()
r = segkit.train_bpe(corpus, {vocab}, num_threads={threads}, show_progress=False)
print(json.dumps(dict(peak_mb=_hwm_mb(), base_mb=base,
                      seconds=time.perf_counter() - t, stats=r.stats, merges=len(r.merges))))
"""

_CHILD_HF = _MEM + """
import json, os, time
os.environ["RAYON_NUM_THREADS"] = "1"
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
texts = [json.loads(l)["text"] for l in open({path!r}, encoding="utf-8")]
base = _rss_mb()
_reset_peak()
tok = Tokenizer(models.BPE())
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tr = trainers.BpeTrainer(vocab_size={vocab}, show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
t = time.perf_counter()
tok.train_from_iterator(texts, tr)
print(json.dumps(dict(peak_mb=_hwm_mb(), base_mb=base, seconds=time.perf_counter() - t)))
"""

_TEXTS_EXPR = "[__import__('json').loads(l)['text'] for l in open({path!r}, encoding='utf-8')]"


def run_memory(args, results):
    print("\n== peak memory (separate processes; VmHWM reset after loading the texts and the code)")
    ours = run_child(_CHILD_SEGKIT.format(root=str(REPO_ROOT), corpus=_TEXTS_EXPR.format(path=str(CORPUS)),
                                          vocab=VOCAB_SIZE, threads=1))
    table = [["segkit train_bpe", ours["base_mb"], ours["peak_mb"], ours["peak_mb"] - ours["base_mb"]]]
    out = {"segkit": ours}
    try:
        import tokenizers  # noqa: F401

        hf = run_child(_CHILD_HF.format(path=str(CORPUS), vocab=VOCAB_SIZE))
        table.append(["HF BpeTrainer", hf["base_mb"], hf["peak_mb"], hf["peak_mb"] - hf["base_mb"]])
        out["hf"] = hf
    except ImportError:
        pass
    print_table(["system", "before training MB", "peak while training MB", "growth MB"], table, title=f"peak memory, {VOCAB_SIZE} tokens")
    results["memory"] = out


def run_big(args, results):
    texts = load_texts()
    blob = ("\n".join(texts) + "\n").encode("utf-8")
    gb = 1 << 30
    reps = max(1, gb // len(blob))
    with tempfile.TemporaryDirectory(dir=args.tmpdir) as d:
        small = Path(d) / "corpus-1x.txt"
        big = Path(d) / "corpus-big.txt"
        small.write_bytes(blob)
        with open(big, "wb") as f:
            for _ in range(reps):
                f.write(blob)
        print(f"\n== a {big.stat().st_size / 1e9:.2f} GB file ({reps} copies of the corpus) vs the 1x file, 2 threads")
        table = []
        out = {}
        for name, path in (("1x file", small), ("big file", big)):
            r = run_child(_CHILD_SEGKIT.format(root=str(REPO_ROOT), corpus=f"Path({str(path)!r})",
                                               vocab=VOCAB_SIZE, threads=2), timeout=3600)
            size = path.stat().st_size
            table.append([name, size / 1e6, r["seconds"], r["stats"]["count_seconds"], r["peak_mb"],
                          r["stats"]["unique_pretokens"]])
            out[name] = dict(r, size=size)
        print_table(["input", "MB", "train s", "count s", "peak MB", "distinct pre-tokens"], table,
                    title="memory is bounded by the counts, not the file size")
        results["big_file"] = out


def check_pretokenizer(texts, results):
    import regex

    from segkit.presets.bpe.pretokenize import GPT2_PATTERN, Pretokenizer

    pretokenize = Pretokenizer(GPT2_PATTERN).findall
    rx = regex.compile(GPT2_PATTERN)
    bad = [i for i, t in enumerate(texts) if pretokenize(t) != rx.findall(t)]
    whole = "\n".join(texts)
    same_whole = pretokenize(whole) == rx.findall(whole)
    print(f"\n== compiled GPT-2 pre-tokenizer vs regex: {len(texts) - len(bad)}/{len(texts)} texts identical; "
          f"the whole corpus as one string identical: {same_whole}")
    results["pretokenizer_check"] = {"texts": len(texts), "different": bad[:20], "whole_identical": same_whole}


def plot(results):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP plot: matplotlib not installed")
        return
    name = f"BPE {VOCAB_SIZE} tokens"
    if name not in results:
        return
    best = {k: min(v) for k, v in results[name]["wall_seconds"].items()}
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    ax = axes[0]
    labels = list(best)
    ax.barh(labels, [best[k] for k in labels], color=["tab:green"] + ["tab:gray"] * (len(labels) - 1))
    ax.set_xlabel("seconds (best of rounds, 1 thread)")
    ax.set_title(f"training BPE, {VOCAB_SIZE} tokens, 10.7 MB")
    ax.invert_yaxis()
    sc = results.get("counting_scaling")
    if sc:
        ax = axes[1]
        ks = sorted(sc, key=int)
        ax.plot([int(k) for k in ks], [sc[k]["seconds_1_thread"] for k in ks], "o-", label="1 thread")
        two = [(int(k), sc[k]["seconds_2_threads"]) for k in ks if sc[k]["seconds_2_threads"]]
        if two:
            ax.plot(*zip(*two), "s", label="2 threads")
        ax.set_xlabel("corpus copies")
        ax.set_ylabel("counting seconds")
        ax.set_title("counting pre-tokens scales linearly")
        ax.legend()
    fig.tight_layout()
    path = REPO_ROOT / "docs" / "_static" / "train_bpe.png"
    fig.savefig(path, dpi=110)
    print(f"plot written to {path.relative_to(REPO_ROOT)}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer rounds, smaller scaling and plain-Python runs")
    p.add_argument("--repeat", type=int, default=None, help="rounds per row (default 3, 1 with --quick)")
    p.add_argument("--big", action="store_true", help="also train on a generated 1 GB file (minutes, 1 GB of disk)")
    p.add_argument("--tmpdir", default=None, help="where to write the 1 GB file (and the counting file)")
    p.add_argument("--threads-rounds", type=int, default=None, help="rounds of the 1 vs 2 threads comparison (default 7)")
    p.add_argument("--check-pretokenizer", action="store_true", help="compare the compiled pre-tokenizer with regex")
    p.add_argument("--only", choices=("rows", "plain", "scaling", "threads", "memory"), action="append",
                   help="run only these sections (repeatable)")
    args = p.parse_args()
    if args.repeat is None:
        args.repeat = 1 if args.quick else 3
    require_data()
    texts = load_texts()
    print(f"corpus: {CORPUS.name}, {len(texts)} texts, {sum(len(t.encode()) for t in texts) / 1e6:.1f} MB; "
          f"machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    import segkit

    segkit.train_bpe(texts[:200], 400, show_progress=False)  # load the compiled code
    results: dict[str, Any] = {"load_average_start": os.getloadavg()}
    only = set(args.only or ("rows", "plain", "scaling", "threads", "memory"))
    if args.check_pretokenizer:
        check_pretokenizer(texts, results)
    if "rows" in only:
        run_rows(texts, args, results)
    if "plain" in only:
        run_plain(texts, args, results)
    if "scaling" in only:
        run_scaling(texts, args, results)
    if "threads" in only:
        run_threads(texts, args, results)
    if "memory" in only:
        run_memory(args, results)
    if args.big:
        run_big(args, results)
    results["load_average_end"] = os.getloadavg()
    if args.only or args.big and not args.only:
        # a partial run updates the sections it ran in the saved results
        from _common import RESULTS_DIR

        saved = RESULTS_DIR / f"bench_train{'.quick' if args.quick else ''}.json"
        if saved.is_file():
            old = json.loads(saved.read_text(encoding="utf-8")).get("results", {})
            results = {**old, **results}
    plot(results)
    save_results("bench_train", results, args)


if __name__ == "__main__":
    main()
