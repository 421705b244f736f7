"""Corpus scale: Arrow in and out, HF datasets (and, later, Dask / Spark).

Sections (``--only arrow,datasets``; all by default):

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

Every figure is a ratio of systems timed in the same process on the same
input (best of interleaved rounds), printed with the load average.

    python benchmarks/bench_scale.py                 # all sections
    python benchmarks/bench_scale.py --only arrow --quick

Results: ``benchmarks/results/bench_scale.json``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as common  # noqa: E402  (sets up sys.path and RAYON_NUM_THREADS first)

import segkit  # noqa: E402


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


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


SECTIONS = {
    "arrow": section_arrow,
    "datasets": section_datasets,
    # h-dask: "dask", "spark" sections go here
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
    results: dict = {}
    for name in chosen:
        SECTIONS[name](args, results)
    common.save_results("bench_scale", results, args)


if __name__ == "__main__":
    main()
