"""A/B of two checkouts of segkit on the same machine, interleaved.

Runs the same small workloads with two source trees (``--a`` and ``--b``,
each put first on ``PYTHONPATH`` of a fresh subprocess), alternating A and B
round after round so that both see the same machine load, and prints the
ratio of B's median time to A's for each workload (below 1: B is faster).
Used to check that a change of structure left the speed alone, e.g.::

    git worktree add /tmp/before <commit>
    python benchmarks/ab_trees.py --a /tmp/before --b . --rounds 7

Workloads (each timed inside its subprocess, after a warm-up call, so
start-up and compilation are not counted):

``e2e_batch``
    ``WordPiece.from_pretrained("bert-base-uncased").encode_batch`` on the
    bundled multilingual sample, one thread.
``one_call``
    ``encode(text).ids`` on each sentence of the sample, one call per text.
``chinese``
    ``ChineseMaxMatch(mode=...).cut_batch`` on Chinese text (forward and
    bidirectional).
``train``
    ``train_bpe`` on the sample, 1,000 tokens.
``load``
    ``segkit.load`` of a saved multilingual WordPiece model.
``bpe_one_call`` / ``bpe_batch``
    ``BPE.from_pretrained("cl100k_base")``: ``encode_ordinary`` per text,
    and ``encode_ordinary_batch`` of the sample, one thread.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAMPLE = HERE.parent / "tests" / "data" / "multilingual-sample.jsonl"

WORKLOAD = r'''
import json, sys, time, os, tempfile
import segkit
name, sample, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
texts = [json.loads(l)["text"] for l in open(sample, encoding="utf-8")]
def best(f, n=reps):
    f()
    times = []
    for _ in range(n):
        t0 = time.perf_counter(); f(); times.append(time.perf_counter() - t0)
    return min(times)
if name == "e2e_batch":
    wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
    big = texts * 20
    t = best(lambda: wp.encode_batch(big))
elif name == "one_call":
    wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
    many = texts * 10
    t = best(lambda: [wp.encode(x).ids for x in many])
elif name.startswith("chinese"):
    mode = name.split("_", 1)[1]
    seg = segkit.ChineseMaxMatch(mode=mode)
    zh = [x for x in texts if any("\u4e00" <= c <= "\u9fff" for c in x)] * 500
    t = best(lambda: seg.cut_batch(zh))
elif name == "train":
    t = best(lambda: segkit.train_bpe(texts * 40, 2000, show_progress=False), n=max(1, reps // 2))
elif name == "bpe_one_call":
    enc = segkit.BPE.from_pretrained("cl100k_base")
    many = texts * 10
    t = best(lambda: [enc.encode_ordinary(x) for x in many])
elif name == "bpe_batch":
    enc = segkit.BPE.from_pretrained("cl100k_base")
    big = texts * 20
    t = best(lambda: enc.encode_ordinary_batch(big, num_threads=1))
elif name == "load":
    path = os.path.join(tempfile.mkdtemp(), "m.segkit")
    segkit.WordPiece.from_pretrained("bert-base-multilingual-cased").save(path)
    t = best(lambda: segkit.load(path), n=reps * 3)
print(json.dumps({"seconds": t}))
'''

NAMES = ["e2e_batch", "one_call", "chinese_forward", "chinese_bidirectional", "train", "load", "bpe_one_call",
         "bpe_batch"]


def run(tree: Path, name: str, reps: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", WORKLOAD, name, str(SAMPLE), str(reps)], env=env, cwd=tempfile.gettempdir(),
                         capture_output=True, text=True, timeout=1800)
    if out.returncode:
        raise SystemExit(f"{name} failed in {tree}:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", required=True, type=Path, help="the reference tree")
    p.add_argument("--b", required=True, type=Path, help="the tree compared with it")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=5, help="timed repetitions inside each subprocess (best taken)")
    p.add_argument("--only", default=",".join(NAMES), help="comma-separated workloads")
    args = p.parse_args()
    names = args.only.split(",")
    times = {n: {"a": [], "b": []} for n in names}
    for r in range(args.rounds):
        for n in names:
            order = ("a", "b") if r % 2 == 0 else ("b", "a")
            for side in order:
                times[n][side].append(run(getattr(args, side).resolve(), n, args.reps))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"A = {args.a}, B = {args.b}; {args.rounds} interleaved rounds, load average {load:.1f}")
    print(f"{'workload':24} {'A median s':>11} {'B median s':>11} {'B/A':>6}  (rounds B/A: min..max)")
    for n in names:
        a, b = statistics.median(times[n]["a"]), statistics.median(times[n]["b"])
        per = [y / x for x, y in zip(times[n]["a"], times[n]["b"])]
        print(f"{n:24} {a:11.4f} {b:11.4f} {b / a:6.3f}  ({min(per):.2f}..{max(per):.2f})")


if __name__ == "__main__":
    main()
