"""segkit.BPE stays linear in time and memory on one long piece.

Inputs that make merge-based encoders quadratic (one pre-token with no
whitespace: a run of one character, two alternating characters, CJK,
random bytes decoded with replacement) and running text, at 10^5 and 10^6
characters.  A subprocess measures its own peak resident set and the CPU
time of its thread around each call (as tests/test_linear_memory.py does:
peak memory of Numba's allocations is invisible to tracemalloc, and CPU
time does not count waiting for a core on a loaded machine).  Memory is
measured on the flat output (NumPy ids), time on ``encode_ordinary``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "tests" / "data" / "multilingual-sample.jsonl"
SMALL, LARGE = 100_000, 1_000_000
MAX_GROWTH = 2.0  # bytes per character, large over small
FLOOR = 8.0  # bytes per character below which the small figure is not trusted
MAX_TIME_RATIO = 40.0  # 10 is linear; a quadratic path gives 100

_CHILD = r"""
import ctypes, gc, json, random, sys, time
sys.path.insert(0, sys.argv[1])
import segkit

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise RuntimeError(key)

try:
    _trim = ctypes.CDLL("libc.so.6").malloc_trim
except (OSError, AttributeError):
    _trim = None

def measure(fn, text, repeat):
    gc.collect()
    if _trim is not None:
        _trim(0)
    base = status("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        result = fn(text)
        best = min(best, time.thread_time() - t0)
        result = None
    return status("VmHWM") - base, best

sample = " ".join(json.loads(line)["text"] for line in open(sys.argv[2], encoding="utf-8") if line.strip())
small, large = int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(25)
noise = bytes(rng.randrange(256) for _ in range(20000)).decode("utf-8", "replace")
noise = "".join(noise.split())
units = {"run": "a", "alternating": "ab", "cjk": "中文字", "random": noise, "text": sample}
enc = segkit.BPE.from_pretrained("cl100k_base")
results = {}
for name, unit in units.items():
    def text_of(n, unit=unit):
        return (unit * (n // len(unit) + 1))[:n]
    flat = lambda t: enc.encode_ordinary_batch([t], flat=True)
    for fn in (enc.encode_ordinary, flat):
        fn(text_of(1000))
        fn(text_of(70_000))
    # memory: the flat arrays (a list of ids is one Python int per id on top)
    m1, _ = measure(flat, text_of(small), 3)
    m2, _ = measure(flat, text_of(large), 2)
    _, t1 = measure(enc.encode_ordinary, text_of(small), 5)
    _, t2 = measure(enc.encode_ordinary, text_of(large), 3)
    results[name] = {"small_bytes": m1, "large_bytes": m2, "small_s": t1, "large_s": t2}
print(json.dumps(results))
"""

NAMES = ["run", "alternating", "cjk", "random", "text"]


@pytest.fixture(scope="module")
def figures() -> dict:
    if not Path("/proc/self/status").is_file():
        pytest.skip("peak memory is read from /proc/self/status (Linux only)")
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(REPO), str(SAMPLE), str(SMALL), str(LARGE)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"measuring subprocess failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", NAMES)
def test_memory_linear(figures, name):
    f = figures[name]
    small = max(f["small_bytes"] / SMALL, FLOOR)
    large = f["large_bytes"] / LARGE
    assert large <= MAX_GROWTH * small, f"{name}: {large:.1f} bytes/char at {LARGE:,} vs {small:.1f} at {SMALL:,}"


@pytest.mark.parametrize("name", NAMES)
def test_time_linear(figures, name):
    f = figures[name]
    ratio = f["large_s"] / max(f["small_s"], 1e-4)
    assert ratio <= MAX_TIME_RATIO, f"{name}: {ratio:.0f}x the time for 10x the text"
