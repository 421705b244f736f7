"""Corpus scale: Arrow in and out, HF datasets, Dask.

Sections (``--only arrow,datasets,dask,memory``; all by default):

``arrow``
    ``WordPiece.encode_arrow`` on a pyarrow string column against
    ``encode_batch(texts).to_arrow()`` on the same texts as a list of str
    (the list already made), and against the path without segkit's Arrow
    input: ``column.to_pylist()`` + ``encode_batch`` + ``to_arrow``.  Also
    ``ChineseMaxMatch.cut_arrow`` against ``cut_batch``.
``datasets``
    ``datasets.Dataset.map(batched=True)`` adding the columns input_ids,
    token_type_ids, attention_mask, special_tokens_mask and offset_mapping:
    with ``WordPiece.as_datasets_map`` against the same map with
    transformers' ``PreTrainedTokenizerFast`` loaded from the
    ``tokenizer.json`` segkit writes (the same tokenizer), one thread each.
``dask``
    ``segkit.scale.dask.encode(...).to_parquet(...)`` on the corpus repeated 8
    times (16 Parquet files), a LocalCluster of 2 worker processes against
    one of 1 (one thread each; the clusters' own overhead counts).
``memory``
    Peak RSS of each of 2 workers while encoding one generated Parquet file
    of 1 GB of text (and of 0.25 GB) in row groups of 16 MB: the growth
    follows the partition size, not the file size.

Every figure is a ratio of systems timed in the same process on the same
input (best of interleaved rounds), printed with the load average.

    python benchmarks/bench_scale.py                 # all sections
    python benchmarks/bench_scale.py --only arrow --quick

Results: ``benchmarks/results/bench_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as common  # noqa: E402  (sets up sys.path and RAYON_NUM_THREADS first)

import segkit  # noqa: E402


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def cpu_rounds(systems: dict, repeat: int) -> dict[str, list[float]]:
    """CPU seconds of the calling thread per call, interleaved rounds
    (for one-thread systems)."""
    times: dict[str, list[float]] = {n: [] for n in systems}
    names = list(systems)
    for r in range(repeat):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            t = time.thread_time()
            systems[n]()
            times[n].append(time.thread_time() - t)
    return times


def corpus_texts(args) -> list[str]:
    texts, _, _ = common.load_corpus(normalize=False, stride=4 if args.quick else 1)
    return texts


# ------------------------------------------------------------------- arrow
def section_arrow(args, results: dict) -> None:
    try:
        import pyarrow as pa
    except ImportError:
        print("SKIP arrow: pyarrow is not installed (pip install pyarrow)")
        return
    texts = corpus_texts(args)
    col = pa.array(texts)
    mb = col.nbytes / 1e6
    wp = segkit.WordPiece.from_pretrained("bert-base-multilingual-cased")
    out: dict = {"texts": len(texts), "arrow_mb": round(mb, 1)}
    for threads in (1, 2):
        print(f"\n== arrow: WordPiece (bert-base-multilingual-cased), {len(texts)} texts, {mb:.1f} MB, "
              f"{threads} thread(s)")
        systems = {
            "encode_arrow": lambda: wp.encode_arrow(col, num_threads=threads),
            "encode_batch+to_arrow": lambda: wp.encode_batch(texts, num_threads=threads).to_arrow(),
            "to_pylist+encode_batch+to_arrow": lambda: wp.encode_batch(col.to_pylist(), num_threads=threads).to_arrow(),
        }
        times = common.time_rounds(systems, repeat=args.repeat)
        best = {k: min(v) for k, v in times.items()}
        r1 = common.median_ratio(times, "encode_batch+to_arrow", "encode_arrow")
        r2 = common.median_ratio(times, "to_pylist+encode_batch+to_arrow", "encode_arrow")
        la = loadavg()
        common.print_table(["system", "best s", "MB/s"], [[k, v, mb / v] for k, v in best.items()])
        print(f"encode_arrow vs encode_batch+to_arrow (list of str already made): {r1:.2f}x; "
              f"vs to_pylist+encode_batch+to_arrow: {r2:.2f}x  (loadavg {la})")
        out[f"wordpiece_{threads}t"] = {"best_s": best, "ratio_vs_list": r1, "ratio_vs_to_pylist": r2, "loadavg": la}
        if threads == 1:
            # On one thread all the work is the calling thread's: its CPU
            # time is far less disturbed by other processes than wall time.
            cpu = cpu_rounds(systems, args.repeat)
            c1 = common.median_ratio(cpu, "encode_batch+to_arrow", "encode_arrow")
            c2 = common.median_ratio(cpu, "to_pylist+encode_batch+to_arrow", "encode_arrow")
            print(f"same, by the thread's CPU time: {c1:.2f}x; {c2:.2f}x  (loadavg {loadavg()})")
            out["wordpiece_1t"].update({"cpu_best_s": {k: min(v) for k, v in cpu.items()},
                                        "cpu_ratio_vs_list": c1, "cpu_ratio_vs_to_pylist": c2})

    from segkit_cjk import ChineseMaxMatch

    zh = [t for t in texts if any("\u4e00" <= c <= "\u9fff" for c in t)] * (1 if args.quick else 4)
    zcol = pa.array(zh)
    seg = ChineseMaxMatch()
    print(f"\n== arrow: ChineseMaxMatch (default dictionary), {len(zh)} texts with ideographs, {zcol.nbytes / 1e6:.1f} MB")
    systems = {
        "cut_arrow": lambda: seg.cut_arrow(zcol),
        "cut_batch": lambda: seg.cut_batch(zh),
        "to_pylist+cut_batch+pa.array": lambda: pa.array(seg.cut_batch(zcol.to_pylist())),
    }
    times = common.time_rounds(systems, repeat=args.repeat)
    r1 = common.median_ratio(times, "cut_batch", "cut_arrow")
    r2 = common.median_ratio(times, "to_pylist+cut_batch+pa.array", "cut_arrow")
    la = loadavg()
    print(f"cut_arrow vs cut_batch (Python lists out): {r1:.2f}x; vs to_pylist+cut_batch+pa.array: {r2:.2f}x  "
          f"(loadavg {la})")
    out["chinese"] = {"best_s": {k: min(v) for k, v in times.items()}, "ratio_vs_cut_batch": r1,
                      "ratio_vs_to_pylist": r2, "loadavg": la}
    results["arrow"] = out


# ---------------------------------------------------------------- datasets
def section_datasets(args, results: dict) -> None:
    try:
        import datasets
        import transformers
    except ImportError as e:
        print(f"SKIP datasets: {e.name} is not installed (pip install datasets transformers)")
        return
    datasets.disable_progress_bars()
    texts = corpus_texts(args)
    ds = datasets.Dataset.from_dict({"text": texts})
    wp = segkit.WordPiece.from_pretrained("bert-base-multilingual-cased")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "tokenizer.json")
        wp.save_tokenizer_json(path)
        hf = transformers.PreTrainedTokenizerFast(tokenizer_file=path)

    def hf_fn(batch):
        return hf(batch["text"], return_token_type_ids=True, return_attention_mask=True,
                  return_special_tokens_mask=True, return_offsets_mapping=True)

    ours_fn = wp.as_datasets_map("text")
    common_kw = {"batched": True, "keep_in_memory": True, "load_from_cache_file": False}
    out: dict = {"texts": len(texts)}
    for batch_size in (1000, 10000):
        print(f"\n== datasets.map, {len(texts)} texts, batch_size={batch_size}, 1 thread each")
        systems = {
            "segkit": lambda: ds.map(ours_fn, batch_size=batch_size, **common_kw),
            "hf_fast": lambda: ds.map(hf_fn, batch_size=batch_size, **common_kw),
        }
        # one check that both maps give the same columns and values
        if batch_size == 1000:
            a, b = systems["segkit"](), systems["hf_fast"]()
            same = sorted(a.column_names) == sorted(b.column_names) and a["input_ids"][:200] == b["input_ids"][:200]
            print(f"same columns and ids (first 200 rows): {same}")
        times = common.time_rounds(systems, repeat=max(2, args.repeat - 2))
        r = common.median_ratio(times, "hf_fast", "segkit")
        la = loadavg()
        common.print_table(["system", "best s"], [[k, min(v)] for k, v in times.items()])
        print(f"datasets.map: segkit {r:.1f}x faster than HF fast tokenizer  (target >= 10x; loadavg {la})")
        out[f"batch_{batch_size}"] = {"best_s": {k: min(v) for k, v in times.items()}, "ratio": r, "loadavg": la}
    results["datasets"] = out


# -------------------------------------------------------------------- dask
def _dask_modules():
    try:
        import dask.dataframe as dd
        import distributed
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        return None, f"{e.name} is not installed (pip install 'segkit[dask]')"
    return (dd, distributed, pa, pq), None


def _write_parquet(texts: list[str], directory: Path, files: int, row_groups_per_file: int = 1) -> float:
    """``texts`` as ``files`` Parquet files (column ``text``); returns the text MB."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    n = len(texts)
    total = 0
    for i in range(files):
        part = pa.table({"text": pa.array(texts[i * n // files : (i + 1) * n // files], pa.string())})
        total += part.nbytes
        rows = max(1, -(-part.num_rows // row_groups_per_file))
        pq.write_table(part, directory / f"part.{i:04d}.parquet", row_group_size=rows)
    return total / 1e6


def _cluster(distributed, n: int):
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)
    cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0",
                                       silence_logs=40, memory_limit=0)
    return cluster, distributed.Client(cluster, set_as_default=False)


def _autogroup() -> bool:
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def section_dask(args, results: dict) -> None:
    """2 Dask workers vs 1: ``segkit.scale.dask.encode(...).to_parquet(...)`` on
    the corpus repeated 8 times in 16 Parquet files."""
    mods, why = _dask_modules()
    if mods is None:
        print(f"SKIP dask: {why}")
        return
    dd, distributed, pa, pq = mods
    import shutil
    import time

    import segkit.scale.dask as sd

    texts = corpus_texts(args) * (2 if args.quick else 8)
    wp = segkit.WordPiece.from_pretrained("bert-base-multilingual-cased")
    tmp = Path(tempfile.mkdtemp(prefix="segkit-bench-dask-"))
    try:
        mb = _write_parquet(texts, tmp / "in", 16)
        print(f"\n== dask: encode {len(texts)} texts ({mb:.0f} MB of text, 16 Parquet files) -> to_parquet, "
              f"LocalCluster processes, 1 thread per worker")
        clusters = {n: _cluster(distributed, n) for n in (1, 2)}
        try:
            busy: dict = {1: [], 2: []}  # per round: (wall s, seconds of task compute per worker)

            def job(n: int):
                client = clusters[n][1]
                out = tmp / f"out{n}"
                shutil.rmtree(out, ignore_errors=True)
                t0 = time.perf_counter()
                with client.as_current(), distributed.get_task_stream(client) as ts:
                    sd.encode(dd.read_parquet(str(tmp / "in")), wp).to_parquet(str(out), write_index=False)
                per_worker: dict = {}
                for task in ts.data:
                    spent = sum(s["stop"] - s["start"] for s in task["startstops"] if s["action"] == "compute")
                    per_worker[task["worker"]] = per_worker.get(task["worker"], 0.0) + spent
                busy[n].append((time.perf_counter() - t0, sorted(per_worker.values())))

            systems = {"1 worker": lambda: job(1), "2 workers": lambda: job(2)}
            times = common.time_rounds(systems, repeat=max(2, args.repeat - 2))
            r = common.median_ratio(times, "1 worker", "2 workers")
            la = loadavg()
            best = {k: min(v) for k, v in times.items()}
            common.print_table(["system", "best s", "MB/s"], [[k, v, mb / v] for k, v in best.items()])
            rows = pq.ParquetDataset(str(tmp / "out2")).read(columns=["input_ids"]).num_rows
            loads = {w: [round(t * 1000, 1) for _, t in ts] for n in clusters
                     for w, ts in clusters[n][1].run(lambda: __import__("importlib").import_module("segkit.scale.shipping")._LOADS).items()}
            print(f"model loads per worker (ms, measured in the worker): {loads}")
            print(f"rows written: {rows} of {len(texts)}")
            print(f"dask encode+to_parquet: 2 workers {r:.2f}x faster than 1 (target >= 1.7x on 2 cores; "
                  f"loadavg {la}; cores {os.cpu_count()})")
            # What the cluster costs, whatever the load: the share of the wall time
            # each worker spent computing tasks (1.0: no overhead at all).
            for n in (1, 2):
                wall, per = busy[n][-1]
                print(f"  {n} worker(s), last round: {wall:.1f} s wall, task compute per worker "
                      f"{[round(x, 1) for x in per]} s -> busy {sum(per) / (n * wall):.0%}")
            if _autogroup() and os.getloadavg()[0] > (os.cpu_count() or 1):
                print("  note: the kernel groups a session's processes for CPU sharing (sched_autogroup) and the "
                      "machine is loaded: a second worker process of this session gets no more CPU, only a "
                      "split of the same share; the ratio is meaningful on an idle machine only")
            results["dask"] = {"texts": len(texts), "text_mb": round(mb, 1), "files": 16, "best_s": best,
                               "ratio_2_vs_1": r, "rows_ok": rows == len(texts), "model_loads_ms": loads,
                               "wall_and_task_seconds": busy, "autogroup": _autogroup(),
                               "loadavg": la}
        finally:
            for cluster, client in clusters.values():
                client.close()
                cluster.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM: not ru_maxrss, which after fork+exec
    also counts the parent's RSS at the fork)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def section_memory(args, results: dict) -> None:
    """Peak memory per worker while encoding a generated Parquet file of
    1 GB of text (and of a quarter of it: the peak must not follow the file
    size), row groups of a fixed size read as one partition each."""
    mods, why = _dask_modules()
    if mods is None:
        print(f"SKIP memory: {why}")
        return
    dd, distributed, pa, pq = mods
    import shutil
    import time

    import pandas as pd

    import segkit.scale.dask as sd

    base = corpus_texts(args)
    base_mb = sum(map(len, (t.encode("utf-8") for t in base))) / 1e6
    wp = segkit.WordPiece.from_pretrained("bert-base-multilingual-cased")
    group_mb = 16.0
    sizes_gb = (0.0625, 0.25) if args.quick else (0.25, 1.0)
    out: dict = {"row_group_text_mb": group_mb}
    for gb in sizes_gb:
        tmp = Path(tempfile.mkdtemp(prefix="segkit-bench-mem-"))
        try:
            reps = max(1, round(gb * 1000 / base_mb))
            groups = max(1, round(reps * base_mb / group_mb))
            mb = _write_parquet(base * reps, tmp / "in", 1, row_groups_per_file=groups)
            frame = dd.read_parquet(str(tmp / "in"), split_row_groups=True)
            print(f"\n== memory: encode one Parquet file of {mb:.0f} MB of text ({groups} row groups of about "
                  f"{mb / groups:.0f} MB, {frame.npartitions} partitions) -> to_parquet, 2 workers")
            cluster, client = _cluster(distributed, 2)
            try:
                with client.as_current():
                    # start: the model loaded and the kernels compiled on every worker
                    sd.encode(dd.from_pandas(pd.DataFrame({"text": ["warm up"] * 4}), npartitions=2), wp).compute()
                    before = client.run(_rss_mb)
                    t0 = time.perf_counter()
                    sd.encode(frame, wp).to_parquet(str(tmp / "out"), write_index=False)
                    seconds = time.perf_counter() - t0
                    peak = client.run(_peak_rss_mb)
            finally:
                client.close()
                cluster.close()
            la = loadavg()
            rows = [[w.rsplit(":", 1)[-1], before[w], peak[w], peak[w] - before[w]] for w in sorted(peak)]
            common.print_table(["worker port", "RSS before MB", "peak RSS MB", "peak - before MB"], rows)
            part_mb = mb / groups
            worst = max(peak[w] - before[w] for w in peak)
            print(f"{mb:.0f} MB in {seconds:.1f} s; worst growth {worst:.0f} MB = {worst / part_mb:.1f}x the "
                  f"partition's {part_mb:.0f} MB of text ({worst / mb:.2f}x the file)  (loadavg {la})")
            out[f"{gb}gb"] = {"text_mb": round(mb, 1), "partitions": groups, "partition_text_mb": round(part_mb, 1),
                              "seconds": seconds, "rss_before_mb": before, "peak_rss_mb": peak,
                              "worst_growth_mb": worst, "loadavg": la}
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    results["memory"] = out


SECTIONS = {
    "arrow": section_arrow,
    "datasets": section_datasets,
    "dask": section_dask,
    "memory": section_memory,
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {sorted(SECTIONS)}")
    p.add_argument("--quick", action="store_true", help="a quarter of the corpus, fewer rounds")
    p.add_argument("--repeat", type=int, default=None, help="rounds per system (default 5, 3 with --quick)")
    args = p.parse_args()
    if args.repeat is None:
        args.repeat = 3 if args.quick else 5
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        p.error(f"unknown sections {unknown}; choose from {sorted(SECTIONS)}")
    common.require_data()
    # Sections not run keep their figures from the previous results file.
    results: dict = {}
    previous = common.RESULTS_DIR / f"bench_scale{'.quick' if args.quick else ''}.json"
    if previous.is_file():
        try:
            results = json.loads(previous.read_text(encoding="utf-8")).get("results", {})
        except ValueError:
            results = {}
    for name in chosen:
        results.pop(name, None)
        SECTIONS[name](args, results)
    common.save_results("bench_scale", results, args)


if __name__ == "__main__":
    main()
