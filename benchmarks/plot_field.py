"""Redraw ``docs/_static/field.png`` from ``bench_field.py``'s saved results.

Grouped bars: MB/s of every library on every workload, per call (top) and
batched (bottom), one thread, CPU time; segkit in blue, exact peers in
grey, peers whose ids differ from the reference hatched and marked "≠".

Usage::

    python benchmarks/plot_field.py [results.json] [--out PNG]

Default input: ``benchmarks/results/bench_field.json`` (else the ``.quick``
one).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
OUT = BENCH_DIR.parent / "docs" / "_static" / "field.png"
SYSTEMS = ["segkit", "tiktoken", "quicktok", "rs-bpe", "bpe-openai", "fastokens", "tokie", "kitoken",
           "HF tokenizers", "flash-tokenizer"]


def _default_input() -> Path:
    full = BENCH_DIR / "results" / "bench_field.json"
    return full if full.exists() else BENCH_DIR / "results" / "bench_field.quick.json"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("results", nargs="?", help="a bench_field JSON (default: the full run's, else --quick's)")
    p.add_argument("--out", default=str(OUT), help=f"the PNG to write (default {OUT})")
    args = p.parse_args(argv)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP plot: matplotlib is not installed")
        return
    path = Path(args.results) if args.results else _default_input()
    if not path.exists() and (BENCH_DIR / "results" / path).exists():
        path = BENCH_DIR / "results" / path
    payload = json.loads(path.read_text(encoding="utf-8"))
    res = payload["results"]
    workloads = [(n, r) for n, r in res["workloads"].items() if "per_call" in r]
    present = [s for s in SYSTEMS if any(s in r["per_call"]["MB/s"] for _, r in workloads)]
    colors = {s: c for s, c in zip(present[1:], plt.cm.tab10.colors[1:] + plt.cm.Set2.colors)}
    colors["segkit"] = "tab:blue"
    fig, axes = plt.subplots(2, 1, figsize=(12, 7.5), dpi=110, sharex=True)
    width = 0.85 / len(present)
    for ax, mode, title in ((axes[0], "per_call", "per call: one text in, ids out"),
                            (axes[1], "batch", "batched, one thread")):
        top = 0.0
        for j, s in enumerate(present):
            for i, (name, r) in enumerate(workloads):
                mbs = r[mode]["MB/s"].get(s)
                if mbs is None:
                    continue
                exact = r["segkit"]["exact"] if s == "segkit" else r["peers"].get(s, {}).get("exact", False)
                x = i + (j - (len(present) - 1) / 2) * width
                ax.bar(x, mbs, width, color=colors[s], hatch=None if exact else "///", edgecolor="white",
                       label=s if i == 0 or s not in ax.get_legend_handles_labels()[1] else None)
                label = (f"{mbs:.1f}" if mbs < 10 else f"{mbs:.0f}") + ("" if exact else "≠")
                ax.text(x, mbs, label, ha="center", va="bottom", fontsize=5.5, rotation=90)
                top = max(top, mbs)
        ax.set_ylim(0, top * 1.18)
        ax.set_ylabel("MB/s (higher is better)")
        ax.set_title(title, fontsize=9, loc="left")
    axes[1].set_xticks(range(len(workloads)), [n for n, _ in workloads], fontsize=8)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        h, lab = ax.get_legend_handles_labels()
        handles, labels = handles + h, labels + lab
    uniq = dict(zip(labels, handles))
    order = [s for s in present if s in uniq]
    m = payload.get("machine", {})
    fig.suptitle(f"bench_field: {res['rounds']} rounds of {res['slice_texts']:,} texts of the shuffled multilingual "
                 f"corpus, CPU time, one thread; ≠ hatched: ids differ from the reference; "
                 f"load average {res.get('loadavg_start', '?')} ({m.get('time', '')[:10]})", fontsize=8)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    legend = fig.legend([uniq[s] for s in order], order, loc="lower center", ncol=len(order), fontsize=7.5,
                        frameon=False)
    for patch in legend.get_patches():
        patch.set_hatch(None)  # the colour names the library; hatching marks "not exact" on a bar
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    print(f"plot written to {out}")


if __name__ == "__main__":
    main()
