"""segkit.SentencePieceBPE stays near-linear in time and linear in memory
on one long text (the merge heap is O(n log n), all buffers O(n)).

A subprocess trains a small byte-fallback model (tests/spm_models.py) and
measures, around ``encode`` of 10^5 and 10^6 characters (a run of one
letter, two alternating letters, CJK, random letters and spaces), the CPU
time of its thread and the growth of its peak resident set, as
tests/test_bpe_linear.py does for segkit.BPE.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sentencepiece", reason="sentencepiece is not installed")
pytest.importorskip("google.protobuf", reason="protobuf is not installed")

REPO = Path(__file__).resolve().parents[1]
MAX_TIME_RATIO = 25.0  # 10 is linear, n log n gives ~12; quadratic 100
MAX_BYTES_PER_CHAR = 400.0  # peak growth per character of the 10^6 input

_CHILD = r"""
import json, random, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/tests")
import segkit, spm_models

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024

model = segkit.SentencePieceBPE(spm_models.train("bytes", Path(tempfile.mkdtemp())))
model.encode("warm up " * 100)
rng = random.Random(0)
makers = {"one": lambda n: "a" * n, "two": lambda n: "ab" * (n // 2), "cjk": lambda n: "北京" * (n // 2),
          "random": lambda n: "".join(rng.choice("abcdefgh  ") for _ in range(n))}
out = {}
for name, make in makers.items():
    small, large = make(100_000), make(1_000_000)
    times = []
    for text in (small, large):
        best = float("inf")
        for _ in range(2):
            t0 = time.thread_time(); ids = model.encode(text); best = min(best, time.thread_time() - t0)
        times.append(best)
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = status("VmRSS")
    model.encode(large)
    peak = status("VmHWM")
    out[name] = {"ratio": times[1] / max(times[0], 1e-4), "small": times[0], "large": times[1],
                 "bytes_per_char": max(0, peak - base) / len(large), "n_ids": len(ids)}
print(json.dumps(out))
"""


def test_time_and_memory_grow_linearly() -> None:
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(REPO)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    for name, r in got.items():
        assert r["ratio"] < MAX_TIME_RATIO, (name, r)
        assert r["bytes_per_char"] < MAX_BYTES_PER_CHAR, (name, r)
        assert r["n_ids"] > 0, (name, r)
