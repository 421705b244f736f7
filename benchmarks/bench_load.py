"""``segkit.load`` time of saved models, warm, in one process (issue 17).

Saves ``WordPiece.from_pretrained("bert-base-multilingual-cased")`` and the
default ``ChineseMaxMatch()`` (forward and bidirectional) to temporary files
(the model cache pointed at an empty temporary folder), loads each a few
times untimed, then ``--repeat`` times timed, and prints the median and
minimum.  Run it from another checkout (copy the script) to measure another
version of segkit: ``_common`` puts the script's repository first on
``sys.path``.

Target: the multilingual model loads in at most 50 ms (median).

    python benchmarks/bench_load.py --repeat 25
"""

from __future__ import annotations

import _common  # noqa: F401  (sys.path: this checkout first)

import argparse
import os
import statistics
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=25)
    ap.add_argument("--chinese", action=argparse.BooleanOptionalAction, default=True)
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="segkit-bench-load-")
    os.environ["SEGKIT_CACHE_DIR"] = os.path.join(folder, "cache")
    import segkit

    models = {"mbert": lambda: segkit.WordPiece.from_pretrained("bert-base-multilingual-cased")}
    if args.chinese:
        models["chinese-forward"] = lambda: segkit.ChineseMaxMatch(mode="forward")
        models["chinese-bidirectional"] = lambda: segkit.ChineseMaxMatch(mode="bidirectional")
    print(f"segkit from {os.path.dirname(segkit.__file__)}; load average {os.getloadavg()[0]:.1f}")
    for name, make in models.items():
        obj = make()
        if hasattr(obj, "cut"):
            obj.cut("研究生命起源")  # builds the automata the file will hold
        path = os.path.join(folder, f"{name}.segkit")
        obj.save(path)
        for _ in range(3):
            segkit.load(path)
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            segkit.load(path)
            times.append(time.perf_counter() - t)
        print(f"{name:22s} {os.path.getsize(path) / 2**20:6.1f} MiB  load median {statistics.median(times) * 1e3:7.1f} ms"
              f"  min {min(times) * 1e3:7.1f} ms  ({args.repeat} warm loads)")


if __name__ == "__main__":
    main()
