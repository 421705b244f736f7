"""Same-process A/B of the engine against another commit: does a change make
the code point path slower?

The other commit's ``segkit`` is extracted (``git archive``) to a temporary
folder and imported beside this checkout's under the name ``segkit_base``
(its own Numba cache, no model cache), and both run
``WordPiece.from_pretrained(MODEL).encode_batch`` on the same input in
interleaved rounds.  Printed: the best time of each, and the median over
rounds of the per-round ratio (this checkout / base: below 1 is faster).

Usage::

    python benchmarks/ab_engine.py --base main --rounds 15
    python benchmarks/ab_engine.py --base c2965cf --model bert-base-multilingual-cased
"""

from __future__ import annotations

import _common  # noqa: F401  (sys.path, one thread for peers)

import argparse
import importlib.util
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from _common import CORPUS, REPO_ROOT


def load_base(ref: str, folder: Path):
    """Import ``segkit`` of commit ``ref`` as the package ``segkit_base``."""
    raw = subprocess.run(["git", "-C", str(REPO_ROOT), "archive", ref, "segkit", "vocabularies"],
                         check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        tar.extractall(folder, filter="data")
    pkg = folder / "segkit"
    spec = importlib.util.spec_from_file_location("segkit_base", pkg / "__init__.py",
                                                  submodule_search_locations=[str(pkg)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules["segkit_base"] = mod
    spec.loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="main", help="commit or branch to compare with (default main)")
    ap.add_argument("--model", default="bert-base-uncased")
    ap.add_argument("--rounds", type=int, default=11)
    args = ap.parse_args()
    os.environ["SEGKIT_CACHE_DIR"] = "off"
    import segkit

    texts = [json.loads(line)["text"] for line in CORPUS.open(encoding="utf-8")]
    with tempfile.TemporaryDirectory(prefix="segkit-ab-") as tmp:
        base = load_base(args.base, Path(tmp))
        systems = {
            "this checkout": segkit.WordPiece.from_pretrained(args.model),
            f"base {args.base}": base.WordPiece.from_pretrained(args.model),
        }
        outs = {name: tok.encode_batch(texts) for name, tok in systems.items()}  # warm up (compiles)
        a, b = outs.values()
        assert all(x.ids == y.ids for x, y in zip(a, b)), "the two versions disagree"
        times: dict[str, list[float]] = {name: [] for name in systems}
        names = list(systems)
        for r in range(args.rounds):
            for name in names[r % 2 :] + names[: r % 2]:
                t0 = time.perf_counter()
                systems[name].encode_batch(texts)
                times[name].append(time.perf_counter() - t0)
        ratios = [x / y for x, y in zip(*times.values())]
        mb = sum(len(t.encode()) for t in texts) / 1e6
        for name in names:
            print(f"{name:>24}: best {min(times[name]) * 1e3:8.1f} ms  ({mb / min(times[name]):6.1f} MB/s)")
        print(f"{'ratio this/base':>24}: median {statistics.median(ratios):.3f} over {args.rounds} rounds "
              f"(min {min(ratios):.3f}, max {max(ratios):.3f}); best/best {min(times[names[0]]) / min(times[names[1]]):.3f}")
        print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
