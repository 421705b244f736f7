"""Run every segkit benchmark and collect one summary table.

Each benchmark script runs as a subprocess with this interpreter and a time
limit; its console output goes to ``benchmarks/results/logs/<name>.log`` (and
to the screen), its figures to ``benchmarks/results/<name>.json``.  A script
that fails, times out or is missing is recorded as such and the others still
run; a peer library that is not installed is skipped by the script itself.
Only result files written during this run are used.

Writes ``benchmarks/results/summary.json`` and ``summary.md`` (figure,
measured, target, met?) and plots in ``docs/_static/``: ``throughput.png``
(WordPiece MB/s per system), ``chinese_throughput.png`` and ``models.png``
(load time, warm start and memory of saved models).

    python benchmarks/run_all.py            # everything (~20-30 min on 2 cores)
    python benchmarks/run_all.py --quick    # --quick to every script that has it
    python benchmarks/run_all.py --only bench_peers bench_models
    python benchmarks/run_all.py --summary-only   # rebuild the summary from existing results
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
LOG_DIR = RESULTS_DIR / "logs"
STATIC = REPO_ROOT / "docs" / "_static"

# name, script, supports --quick, results file stem, time limit in seconds
SCRIPTS: list[tuple[str, str, bool, str, int]] = [
    ("bench_wordpiece", "bench_wordpiece.py", True, "bench_wordpiece", 900),
    ("bench_latency", "bench_latency.py", True, "bench_latency", 900),
    ("bench_scaling", "bench_scaling.py", True, "bench_scaling", 900),
    ("bench_startup", "bench_startup.py", True, "bench_startup", 900),
    ("bench_peers", "bench_peers.py", True, "bench_peers", 900),
    ("bench_call", "bench_call.py", True, "bench_call", 600),
    ("bench_threads", "bench_threads.py", True, "bench_threads", 600),
    ("bench_models", "bench_models.py", True, "bench_models", 600),
    ("bench_chinese", "bench_chinese.py", True, "chinese", 900),
    ("eval_sighan", "eval_sighan.py", False, "sighan", 600),
    ("bench_train", "bench_train.py", True, "bench_train", 1800),
    ("bench_train_wordpiece", "bench_train_wordpiece.py", True, "bench_train_wordpiece", 900),
]

# TensorFlow's start-up chatter, kept in the log but not echoed to the screen
_NOISE = ("absl::InitializeLog", "cudart_stub.cc", "port.cc:153", "oneDNN custom operations",
          "Could not find cuda", "PyTorch was not found", "WARNING: All log messages before")  # fmt: skip


# ------------------------------------------------------------------ running
def run_script(name: str, script: str, args: list[str], timeout: int, quick: bool) -> dict[str, Any]:
    """Run one benchmark script; stream and log its output; never raise."""
    path = BENCH_DIR / script
    rec: dict[str, Any] = {"name": name, "script": script, "args": args, "timeout_s": timeout}
    if not path.is_file():
        print(f"SKIP {name}: {script} not found")
        rec.update(status="missing", seconds=0.0)
        return rec
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log_path = LOG_DIR / f"{name}{'.quick' if quick else ''}.log"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env["RAYON_NUM_THREADS"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    cmd = [sys.executable, str(path), *args]
    print(f"\n{'=' * 78}\n{name}: {' '.join([Path(sys.executable).name, 'benchmarks/' + script, *args])} "
          f"(time limit {timeout} s, log {log_path.relative_to(REPO_ROOT)})\n{'=' * 78}", flush=True)
    t0 = time.perf_counter()
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, cwd=str(REPO_ROOT), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", start_new_session=True)  # fmt: skip
        tail: list[str] = []

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                tail.append(line)
                del tail[:-30]
                if not any(s in line for s in _NOISE):
                    sys.stdout.write("  | " + line)
                    sys.stdout.flush()

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            code = proc.wait(timeout=timeout)
            status = "ok" if code == 0 else f"failed (exit {code})"
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the script and the children it started
            except ProcessLookupError:
                pass
            proc.wait()
            status = f"timeout after {timeout} s"
        reader.join(timeout=10)
    rec.update(status=status, seconds=time.perf_counter() - t0, log=str(log_path.relative_to(REPO_ROOT)))
    if status != "ok":
        rec["tail"] = "".join(tail[-15:])
        print(f"!! {name}: {status} (last lines of the log above; the other benchmarks still run)")
    else:
        print(f"-- {name}: done in {rec['seconds']:.0f} s")
    return rec


def results_path(stem: str, quick: bool) -> Path:
    if stem == "sighan":
        return RESULTS_DIR / "sighan.json"
    return RESULTS_DIR / f"{stem}{'.quick' if quick else ''}.json"


def load_results(stem: str, quick: bool, since: float | None) -> Any:
    """The script's results, or None when absent (or older than ``since``)."""
    path = results_path(stem, quick)
    if not path.is_file():
        return None
    if since is not None and path.stat().st_mtime < since:
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict) and "results" in data:
        return data["results"]
    return data


# ----------------------------------------------------------------- figures
def g(d: Any, *keys: Any, default: Any = None) -> Any:
    for k in keys:
        if isinstance(d, dict) and k in d:
            d = d[k]
        elif isinstance(d, list) and isinstance(k, int) and -len(d) <= k < len(d):
            d = d[k]
        else:
            return default
    return d


class Figures:
    """Rows of the summary table."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, source: str, figure: str, value: Any, fmt: Callable[[Any], str], target: str = "",
            met: bool | None = None) -> None:  # fmt: skip
        if value is None:
            self.rows.append({"source": source, "figure": figure, "measured": "n/a", "value": None,
                              "target": target, "met": None})  # fmt: skip
            return
        self.rows.append({"source": source, "figure": figure, "measured": fmt(value), "value": value,
                          "target": target, "met": met})  # fmt: skip

    def at_least(self, source: str, figure: str, value: Any, target: float, fmt=None, unit: str = "x") -> None:
        fmt = fmt or (lambda v: f"{v:.2f}{unit}")
        self.add(source, figure, value, fmt, f">= {target:g}{unit}", None if value is None else value >= target)

    def at_most(self, source: str, figure: str, value: Any, target: float, fmt, target_text: str) -> None:
        self.add(source, figure, value, fmt, target_text, None if value is None else value <= target)

    def info(self, source: str, figure: str, value: Any, fmt) -> None:
        self.add(source, figure, value, fmt, "", None)


def ms(v: float) -> str:
    return f"{v * 1e3:.1f} ms"


def sec(v: float) -> str:
    return f"{v:.2f} s"


def mibf(v: float) -> str:
    return f"{v:.1f} MiB"


def zero(F: Figures, source: str, figure: str, value: Any) -> None:
    F.add(source, figure, value, lambda v: f"{v:,}", "0", None if value is None else value == 0)


def collect(res: dict[str, Any]) -> Figures:
    F = Figures()
    # ---------------------------------------------------------- WordPiece
    r = res.get("bench_peers")
    if r is not None:
        src = "bench_peers"
        br = r.get("batched_ratios", {})
        F.at_least(src, "WordPiece end to end, segkit encode_batch vs TF Text tokenize_with_offsets (1 thread)",
                   g(br, "segkit encode_batch vs TF Text tokenize_with_offsets", "best_ratio"), 3)
        F.at_least(src, "WordPiece ids only, segkit segment_batch vs TF Text tokenize (1 thread)",
                   g(br, "segkit ids-only vs TF Text tokenize", "best_ratio"), 3)
        F.at_least(src, "WordPiece end to end, segkit encode_batch vs HF tokenizers encode_batch (1 thread)",
                   g(br, "segkit encode_batch vs HF encode_batch", "best_ratio"), 25)
        for k, v in br.items():
            if "transformers" in k or "naive" in k:
                F.info(src, k.replace("*", " (extrapolated per MB)"), g(v, "best_ratio"), lambda v: f"{v:.1f}x")
        b = r.get("batched", {})
        for name in ("segkit encode_batch", "TF Text tokenize_with_offsets", "HF tokenizers encode_batch"):
            F.info(src, f"throughput: {name}", g(b, name, "mb_per_s"), lambda v: f"{v:.2f} MB/s")
        wr = g(r, "words", "ratios", default={})
        F.info(src, "single words, segkit segment_batch vs TF Text (both batched)",
               g(wr, "segkit batched vs TF Text", "best_ratio"), lambda v: f"{v:.2f}x")
        F.info(src, "single words, segkit tokenize_word vs HF model.tokenize (per word)",
               g(wr, "segkit tokenize_word vs HF model.tokenize (both per word)", "best_ratio"), lambda v: f"{v:.2f}x")
        c = r.get("correctness", {})
        if "tf_text_parity" in c:
            p = c["tf_text_parity"]
            zero(F, src, f"flavour='tf_text' vs TF Text: texts with different ids ({p['texts']:,} texts)",
                 p.get("ids_mismatch_texts"))
            zero(F, src, "flavour='tf_text' vs TF Text: texts with different byte offsets",
                 p.get("offsets_mismatch_texts"))
            zero(F, src, f"flavour='tf_text' vs TF Text: single words that differ ({p.get('words', 0):,})",
                 p.get("word_mismatches"))
        if "transformers" in c:
            zero(F, src, "vs transformers BertTokenizerLegacy: texts that differ", c["transformers"]["ids_mismatch_texts"])
    r = res.get("bench_call")
    if r is not None:
        fig = r.get("figures", {})
        F.at_least("bench_call", "WordPiece.__call__ vs BertTokenizerFast.__call__, one sentence",
                   g(fig, "(a) one sentence, lists", "ratio"), 5)
        F.info("bench_call", "WordPiece.__call__ vs BertTokenizerFast.__call__, batches of 64 to numpy",
               g(fig, "(c) batches of 64, np", "ratio"), lambda v: f"{v:.1f}x")
        zero(F, "bench_call", "__call__ results differing from transformers", r.get("differing"))
    r = res.get("bench_wordpiece")
    if r is not None:
        src = "bench_wordpiece"
        F.at_least(src, "WordPiece encode_batch vs HF encode_batch", g(r, "batched_ratios",
                   "segkit encode_batch vs HF encode_batch", "best_ratio"), 25)  # fmt: skip
        F.at_least(src, "WordPiece one sentence per call, encode(t).ids vs HF encode(t).ids",
                   g(r, "per_sentence_ratios", "segkit encode(t).ids vs HF encode(t).ids", "best_ratio"), 7)
        zero(F, src, "ids differ from HF (texts, whole corpus)", g(r, "correctness", "ids_mismatches"))
        zero(F, src, "offsets differ from HF (texts)", g(r, "correctness", "offsets_mismatches"))
    r = res.get("bench_scaling")
    if r is not None:
        src = "bench_scaling"
        F.at_most(src, "linear time: kernel ns/char max/min over L=1e2..1e6 (pathological vocab)",
                  r.get("flatness_kernel"), 2.0, lambda v: f"{v:.2f}x", "<= 2x")
        zero(F, src, "scaling outputs that differ from the expected split", len(r.get("mismatches", [])))
    r = res.get("bench_startup")
    if r is not None:
        src = "bench_startup"
        F.at_most(src, "WordPiece(vocab.txt) build, multilingual (119,547 tokens)",
                  g(r, "build", "seconds", "WordPiece(path)"), 0.5, sec, "<= 0.5 s")
        F.at_most(src, "warm: import segkit (nothing compiled or loaded), median",
                  g(r, "warm", "import", "median"), 0.25, sec, "<= 0.25 s")
        F.at_most(src, 'warm: segkit tokenize "..." (whole process), median',
                  g(r, "warm", "tokenize", "median"), 0.5, sec, "<= 0.5 s")
        F.at_most(src, "warm: import + segkit.load(multilingual) + encode, median",
                  g(r, "warm", "load_encode", "median"), 0.35, sec, "<= 0.35 s")
        F.info(src, "  HF: import tokenizers + Tokenizer.from_file + encode, median",
               g(r, "warm", "hf", "median"), sec)
        F.at_most(src, "warm: import + ChineseMaxMatch() + first cut, median",
                  g(r, "warm", "chinese", "median"), 0.5, sec, "<= 0.5 s")
        F.info(src, "  jieba: import + initialize() + first lcut, median", g(r, "warm", "jieba", "median"), sec)
        in_ms = lambda v: f"{v:.1f} ms"  # noqa: E731 (the values are in ms already)
        F.at_most(src, "segkit.load, multilingual WordPiece (every check kept)",
                  g(r, "load", "load multilingual WordPiece"), 15.0, in_ms, "<= 15 ms")
        F.at_most(src, "segkit.load, Chinese default (bidirectional)",
                  g(r, "load", "load Chinese default (bidirectional)"), 30.0, in_ms, "<= 30 ms")
        F.at_most(src, "pickle round trip, multilingual WordPiece",
                  g(r, "load", "pickle round trip multilingual"), 20.0, in_ms, "<= 20 ms")
        for label in ("segkit tokenize", "segkit cut", "segkit tokenize --model rwkv-world",
                      "ChineseMaxMatch().cut (Python)"):
            F.at_most(src, f"cold (first run after pip install): {label}, median",
                      g(r, "cold", f"shipped: {label}", "median"), 2.0, sec, "<= 2 s")
    # ------------------------------------------------------------ threads
    r = res.get("bench_threads")
    if r is not None:
        src = "bench_threads"
        for key, label in (("wordpiece", "WordPiece encode_batch"), ("chinese", "ChineseMaxMatch cut_batch")):
            if key not in r:
                F.info(src, f"{label}: not measured", None, str)
                continue
            big = r[key]["large"]
            what = "whole corpus" if key == "wordpiece" else "pku+msr test"
            note = "" if big.get("chunks_with_2_threads", 2) > 1 else "; NOT split, 1 thread either way"
            ref = big.get("reference_speedup")
            if ref is not None:
                note += f"; machine's own 2-thread speedup then: {ref:.2f}x"
            F.at_least(src, f"{label}, {what} ({big['chars']:,} chars{note}), 2 threads vs 1", big["speedup"], 1.7)
            small = r[key]["small"]
            note = "" if small.get("chunks_with_2_threads", 2) > 1 else " (not split)"
            F.add(src, f"{label}, 1,000 texts{note}, 2 threads vs 1", small["speedup"], lambda v: f"{v:.2f}x",
                  "never slower (>= 0.95x)", small["target_met"])
            F.add(src, f"{label}: outputs of 1 and 2 threads equal", r[key].get("outputs_equal"), str, "True",
                  r[key].get("outputs_equal"))
    # ------------------------------------------------------------- models
    r = res.get("bench_models")
    if r is not None:
        src = "bench_models"
        names = {"wordpiece": "WordPiece multilingual", "chinese": "ChineseMaxMatch default"}
        sizes = r.get("file_sizes_bytes", {})
        for key, label in names.items():
            # The targets are for the multilingual WordPiece model; the
            # Chinese model's rows are for information.
            def judged(figure, value, target, fmt, text, key=key):
                if key == "wordpiece":
                    F.at_most(src, figure, value, target, fmt, text)
                else:
                    F.info(src, figure, value, fmt)

            judged(f"{label}: segkit.load", g(r, "load", key, "seconds"), 0.05, ms, "<= 50 ms")
            judged(f"{label}: pickle dumps+loads, model as built", g(r, "pickle", key, "seconds"), 0.05, ms,
                   "<= 50 ms")
            judged(f"{label}: pickle dumps+loads, model from segkit.load",
                   g(r, "pickle", key + "_loaded", "seconds"), 0.05, ms, "<= 50 ms")
            best = g(r, "warm_start", key, "best")
            split = (f" (import {best['import']:.2f} + load {best['load']:.3f} + first call {best['first_call']:.2f})"
                     if best else "")  # fmt: skip
            judged(f"{label}: warm start, fresh process{split}", g(best, "total"), 0.5, sec, "<= 0.5 s")
            judged(f"{label}: RSS added by load + first call", g(r, "memory", key, "best", "added_mib"),
                   15.0, mibf, "<= 15 MiB")
            F.info(src, f"{label}: of which private (RssAnon)", g(r, "memory", key, "best", "added_anon_mib"), mibf)
        floor = g(r, "numba_floor", "best")
        split = f" (import {floor['import']:.2f} + first call {floor['first_call']:.2f})" if floor else ""
        F.info(src, f"for comparison, any Numba program: warm start with one cached kernel{split}", g(floor, "total"),
               sec)
        for label, n in sizes.items():
            F.info(src, f"file size: {label}", n, lambda v: f"{v / 2**20:.2f} MiB")
        F.info(src, "jieba: RSS added by initialize + first lcut", g(r, "memory", "jieba", "best", "added_mib"), mibf)
        F.info(src, "HF Tokenizer.from_file(multilingual tokenizer.json): RSS added",
               g(r, "memory", "hf", "best", "added_mib"), mibf)
        for k, v in r.get("build_seconds", {}).items():
            F.info(src, f"build from scratch: {k}", v, sec)
    # ----------------------------------------------------------- training
    r = res.get("bench_train")
    if r is not None:
        src = "bench_train"
        rat = g(r, "BPE 32000 tokens", "ratios", default={})
        for peer, target in (("hf", 5.0), ("sentencepiece", 1.0)):
            if peer in rat:
                F.at_least(src, f"train_bpe 32k tokens vs {peer} (wall, median over rounds)", rat[peer]["wall"], target)
        for name, row in (r.get("counting_threads") or {}).items():
            F.info(src, f"{name}: counting 2 threads vs 1 (best of rounds; machine's sha256 "
                        f"{row['machine_reference_speedup']:.2f}x, load {row['loadavg']:.1f})",
                   row["speedup_best"], lambda v: f"{v:.2f}x")
            F.at_least(src, f"{name}: counting 2 threads vs 1, Amdahl from CPU times (serial = calling thread)",
                       row["speedup_predicted"], 1.6)
    r = res.get("bench_train_wordpiece")
    if r is not None:
        src = "bench_train_wordpiece"
        for vocab, row in (r.get("rows") or {}).items():
            F.at_least(src, f"train_wordpiece {vocab} tokens vs HF WordPieceTrainer", row.get("ratio"), 5.0)
    # ------------------------------------------------------------ Chinese
    r = res.get("bench_chinese")
    if r is not None:
        src = "bench_chinese"
        rat = g(r, "throughput", "ratios", default={})
        F.at_least(src, "ChineseMaxMatch cut_batch vs jieba lcut(HMM=False)",
                   g(rat, "jieba lcut(HMM=False) per line", "best_ratio"), 50)
        F.at_least(src, "ChineseMaxMatch cut_batch vs naive Python FMM", g(rat, "naive Python FMM per line", "best_ratio"),
                   30)
        s = g(r, "startup", "segkit", "best", "total")
        j = g(r, "startup", "jieba", "best", "total")
        F.add(src, "Chinese start-up, segkit (import + load + first cut)", s, sec,
              f"< jieba ({j:.2f} s)" if j else "< jieba", None if s is None or j is None else s < j)
        F.info(src, "Chinese dictionary RSS, segkit / jieba", g(r, "memory", "ratio_segkit_over_jieba"),
               lambda v: f"{v:.2f}")
        zero(F, src, "naive FMM vs segkit alnum_runs=False: differing lines", r.get("naive_vs_segkit_textbook_mismatches"))
    r = res.get("eval_sighan")
    if isinstance(r, list) and r:
        src = "eval_sighan"
        pku = [x for x in r if x.get("corpus") == "pku" and x.get("mode") == "forward" and not x.get("alnum_runs")]
        if pku:
            x = pku[0]
            base = {"R": 0.907, "P": 0.843, "F": 0.874}
            got = {k: x[k] for k in base}
            F.add(src, "pku, textbook forward MaxMatch (R, P, F) = SIGHAN 2005 official baseline",
                  got, lambda v: f"R {v['R']:.3f} P {v['P']:.3f} F {v['F']:.3f}", "R .907 P .843 F .874",
                  all(abs(got[k] - base[k]) < 5e-4 for k in base))
        for corpus in ("pku", "msr", "cityu", "as"):
            rows = [x for x in r if x.get("corpus") == corpus]
            if rows:
                b = max(rows, key=lambda x: x["F"])
                F.info(src, f"{corpus}: best F ({b['mode']}, alnum_runs={b['alnum_runs']})", b["F"], lambda v: f"{v:.3f}")
    return F


# ------------------------------------------------------------------ output
def markdown(F: Figures, runs: list[dict], quick: bool) -> str:
    lines = [f"# segkit benchmark summary{' (--quick)' if quick else ''}", "",
             f"Generated by `benchmarks/run_all.py` on {time.strftime('%Y-%m-%d %H:%M')}, "
             f"{os.cpu_count()} cores, load average at the end {os.getloadavg()[0]:.1f}. Ratios come from "
             "systems timed in the same process and the same interleaved rounds; absolute figures depend on "
             "the machine and its load.", "",
             "| figure | measured | target | met? | source |", "|---|---|---|---|---|"]  # fmt: skip
    for row in F.rows:
        met = {True: "yes", False: "**NO**", None: ""}[row["met"]]
        lines.append(f"| {row['figure']} | {row['measured']} | {row['target']} | {met} | {row['source']} |")
    lines += ["", "## Runs", "", "| script | status | seconds | log |", "|---|---|---|---|"]
    for r in runs:
        lines.append(f"| {r['name']} | {r['status']} | {r.get('seconds', 0):.0f} | {r.get('log', '')} |")
    return "\n".join(lines) + "\n"


def print_summary(F: Figures, runs: list[dict]) -> None:
    w_fig = min(120, max([len(r["figure"]) for r in F.rows] + [6]))
    w_meas = max([len(r["measured"]) for r in F.rows] + [8])
    w_tgt = max([len(r["target"]) for r in F.rows] + [6])
    print(f"\n{'=' * 78}\nSUMMARY\n{'=' * 78}")
    print(f"{'figure'.ljust(w_fig)}  {'measured'.ljust(w_meas)}  {'target'.ljust(w_tgt)}  met?")
    print(f"{'-' * w_fig}  {'-' * w_meas}  {'-' * w_tgt}  ----")
    for row in F.rows:
        met = {True: "yes", False: "NO", None: ""}[row["met"]]
        fig = row["figure"] if len(row["figure"]) <= w_fig else row["figure"][: w_fig - 1] + "~"
        print(f"{fig.ljust(w_fig)}  {row['measured'].ljust(w_meas)}  {row['target'].ljust(w_tgt)}  {met}")
    judged = [r for r in F.rows if r["met"] is not None]
    print(f"\ntargets met: {sum(r['met'] for r in judged)} of {len(judged)}")
    print("runs: " + "; ".join(f"{r['name']} {r['status']} ({r.get('seconds', 0):.0f} s)" for r in runs))


# ------------------------------------------------------------------- plots
def plots(res: dict[str, Any]) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP plots: matplotlib is not installed")
        return []
    STATIC.mkdir(parents=True, exist_ok=True)
    written = []

    def color(name: str) -> str:
        return "C0" if name.startswith("segkit") else "C1" if name.startswith("TF") else \
            "C2" if name.startswith("HF") else "C3" if "jieba" in name else "C7"  # fmt: skip

    peers = g(res, "bench_peers", "batched")
    if peers:
        items = sorted(peers.items(), key=lambda kv: kv[1]["mb_per_s"])
        fig, ax = plt.subplots(figsize=(8, 0.42 * len(items) + 1.4), dpi=120)
        names = [n.replace("*", " (extrapolated)") for n, _ in items]
        vals = [v["mb_per_s"] for _, v in items]
        ax.barh(names, vals, color=[color(n) for n in names])
        for y, v in enumerate(vals):
            ax.text(v * 1.05, y, f"{v:.2f}", va="center", fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("MB of UTF-8 input per second (log scale), one thread")
        corpus = g(res, "bench_peers", "corpus", default={})
        ax.set_title(f"WordPiece end to end, bert-base-multilingual-cased vocabulary\n{corpus.get('texts', 0):,} "
                     f"sentences in {corpus.get('languages', '?')} languages, one thread; ratios from one run",
                     fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_xlim(right=max(vals) * 3)
        ax.grid(True, axis="x", which="both", alpha=0.3)
        fig.tight_layout()
        out = STATIC / "throughput.png"
        fig.savefig(out)
        plt.close(fig)
        written.append(out)
    zh = g(res, "bench_chinese", "throughput", "chars_per_second")
    if zh:
        items = sorted(zh.items(), key=lambda kv: kv[1])
        fig, ax = plt.subplots(figsize=(7, 0.5 * len(items) + 1.3), dpi=120)
        ax.barh([n for n, _ in items], [v / 1e6 for _, v in items], color=[color(n) for n, _ in items])
        for y, (_, v) in enumerate(items):
            ax.text(v / 1e6 * 1.02, y, f"{v / 1e6:.2f}", va="center", fontsize=7)
        ax.set_xlabel("million characters per second, one thread")
        ax.set_title("Chinese word segmentation, SIGHAN 2005 pku + msr test text", fontsize=9)
        ax.tick_params(axis="y", labelsize=8)
        ax.set_xlim(right=max(v for _, v in items) / 1e6 * 1.2)
        ax.grid(True, axis="x", alpha=0.3)
        fig.tight_layout()
        out = STATIC / "chinese_throughput.png"
        fig.savefig(out)
        plt.close(fig)
        written.append(out)
    models = res.get("bench_models")
    if models:
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6), dpi=120)
        labels, load, warm = [], [], []
        for key, label in (("wordpiece", "WordPiece\nmultilingual"), ("chinese", "ChineseMaxMatch\ndefault")):
            if g(models, "load", key) and g(models, "warm_start", key):
                labels.append(label)
                load.append(models["load"][key]["seconds"] * 1e3)
                warm.append(models["warm_start"][key]["best"]["total"] * 1e3)
        x = range(len(labels))
        ax1.bar([i - 0.2 for i in x], load, 0.4, label="segkit.load (in process)", color="C0")
        ax1.bar([i + 0.2 for i in x], warm, 0.4, label="fresh process: import + load + first call", color="C9")
        ax1.axhline(50, color="C0", linestyle=":", linewidth=1)
        ax1.axhline(500, color="C9", linestyle=":", linewidth=1)
        ax1.set_yscale("log")
        ax1.set_xticks(list(x), labels, fontsize=8)
        ax1.set_ylabel("milliseconds (log); dotted: targets")
        ax1.set_ylim(top=max(warm + [500]) * 6)
        ax1.legend(fontsize=7, loc="upper left")
        ax1.set_title("loading a saved model", fontsize=9)
        mem = models.get("memory", {})
        mlabels = {"wordpiece": "segkit\nWordPiece", "chinese": "segkit\nChinese", "jieba": "jieba\ndictionary",
                   "hf": "HF tokenizer.json\n(multilingual)"}  # fmt: skip
        keys = [k for k in mlabels if k in mem]
        anon = [mem[k]["best"]["added_anon_mib"] for k in keys]
        filep = [mem[k]["best"]["added_file_mib"] for k in keys]
        ax2.bar([mlabels[k] for k in keys], anon, color="C0", label="private (RssAnon)")
        ax2.bar([mlabels[k] for k in keys], filep, bottom=anon, color="C9", label="mapped file pages (RssFile)")
        ax2.axhline(15, color="k", linestyle=":", linewidth=1)
        ax2.set_ylabel("MiB of RSS added (dotted: segkit target)")
        ax2.tick_params(axis="x", labelsize=7)
        ax2.set_ylim(top=max(a + f for a, f in zip(anon, filep)) * 1.25)
        ax2.legend(fontsize=7, loc="upper left")
        ax2.set_title("memory added by the loaded model (fresh process)", fontsize=9)
        fig.tight_layout()
        out = STATIC / "models.png"
        fig.savefig(out)
        plt.close(fig)
        written.append(out)
    for p in written:
        print(f"plot written to {p.relative_to(REPO_ROOT)}")
    return [str(p.relative_to(REPO_ROOT)) for p in written]


# -------------------------------------------------------------------- main
def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="pass --quick to every script that supports it")
    p.add_argument("--only", nargs="+", metavar="NAME", choices=[s[0] for s in SCRIPTS],
                   help="run only these benchmarks (the summary still uses every result file of this mode)")
    p.add_argument("--summary-only", action="store_true",
                   help="run nothing: rebuild the summary and plots from the existing result files")
    p.add_argument("--timeout", type=int, default=None, help="time limit per script in seconds (overrides defaults)")
    args = p.parse_args()

    runs: list[dict] = []
    started: dict[str, float] = {}
    for name, script, has_quick, stem, limit in SCRIPTS:
        if args.summary_only or (args.only and name not in args.only):
            continue
        extra = ["--quick"] if args.quick and has_quick else []
        started[name] = time.time() - 1
        runs.append(run_script(name, script, extra, args.timeout or limit, args.quick))

    res: dict[str, Any] = {}
    for name, _, has_quick, stem, _ in SCRIPTS:
        quick = args.quick and has_quick
        ran = next((r for r in runs if r["name"] == name), None)
        if ran is not None and ran["status"] != "ok":
            continue  # a failed run: do not report figures from an older file
        data = load_results(stem, quick, started.get(name))
        if data is not None:
            res[name] = data
    F = collect(res)
    written = plots(res)
    summary = {
        "quick": args.quick,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "python": sys.version.split()[0],
        "cpu_count": os.cpu_count(),
        "loadavg_end": os.getloadavg(),
        "runs": runs,
        "figures": F.rows,
        "plots": written,
        "targets_met": sum(1 for r in F.rows if r["met"] is True),
        "targets_judged": sum(1 for r in F.rows if r["met"] is not None),
    }
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    suffix = ".quick" if args.quick else ""
    (RESULTS_DIR / f"summary{suffix}.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    (RESULTS_DIR / f"summary{suffix}.md").write_text(markdown(F, runs, args.quick), encoding="utf-8")
    print_summary(F, runs)
    print(f"\nsummary written to benchmarks/results/summary{suffix}.json and summary{suffix}.md")
    return 0 if all(r["status"] in ("ok", "missing") for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
