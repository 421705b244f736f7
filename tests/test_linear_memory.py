"""Memory and time stay linear in the length of one text, with normalization.

One text of n characters must cost O(n) memory and time on every path: a
normalizing WordPiece (``from_pretrained``: lowercasing, accents, control
characters, special tokens), a single text and a batch, character and
UTF-8 byte offsets (``flavour="tf_text"``), a text that grows under
normalization (Hangul syllables decompose into two or three jamo), and
Chinese word segmentation.  Before the fix one 10^6-character text took
3.1 GB (the rewrite pass doubled its text buffer on every refill of its
offset buffers: quadratic).

Peak memory is only visible from outside Numba's allocator (tracemalloc
does not see it), so a subprocess measures its own peak resident set
(``VmHWM``, reset through ``/proc/self/clear_refs`` where the kernel allows
it) around each call, after a warm-up that loads the compiled kernels.
The figures are the process's own, so other load on the machine does not
change them; times are the best of a few calls, in CPU time of the calling
thread (``time.thread_time``; every path measured runs on that thread), so
that waiting for a core on a loaded machine does not count (wall-clock
ratios reached 76-96 at load average 11-16).  A path that returns Python
objects (Chinese ``cut``: one ``str`` per word) counts at least the size of
what it returned: Python's allocator reuses memory freed by the warm-up,
which made the small text's peak look too small where pyarrow was not
imported (15.7 against 61.7 bytes/char, a fresh ``.[test]`` venv).
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
#: bytes/char of the large text over those of the small one (linear: about 1).
MAX_GROWTH = 2.0
#: floor of the small text's bytes/char (a near-zero small figure must not
#: make a ratio of noise).
FLOOR = 8.0
#: time of the large text over the small one's.  Linear is 10 in principle,
#: 15-25 measured (the small text's memory stays in cache and is reused, the
#: large one's is fresh pages); before the fix 100-180, rising with the
#: length.
MAX_TIME_RATIO = 60.0

_CHILD = r"""
import ctypes, gc, json, sys, time
sys.path.insert(0, sys.argv[1])
import segkit

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    raise RuntimeError(key + " not in /proc/self/status")

try:
    _libc = ctypes.CDLL("libc.so.6")
    _trim = _libc.malloc_trim
    # A fixed mmap threshold (M_MMAP_THRESHOLD, -3): every large array is
    # mapped and unmapped on its own, so a freed one never stays in the
    # heap for the next call to reuse unseen (glibc's dynamic threshold
    # let the small text's peak hide in the warm-up's memory).
    _libc.mallopt(-3, 128 * 1024)
except (OSError, AttributeError):
    _trim = None

def settle():
    # Freed memory goes back to the system, so that the baseline is what
    # is in use, not what the allocator keeps for later.
    gc.collect()
    if _trim is not None:
        _trim(0)

def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:  # no reset: the peak may include the warm-up's (lenient)
        pass

def output_size(result):
    # What the result itself holds (a list of Python objects, for the paths
    # that return one): a floor of the peak that does not depend on how
    # much freed memory Python's allocator kept from the warm-up and reuses.
    if isinstance(result, list):
        return sys.getsizeof(result) + sum(output_size(x) for x in result)
    if isinstance(result, (str, bytes, int, tuple)):
        return sys.getsizeof(result)
    return 0

def measure(fn, text, repeat):
    settle()
    base = status("VmRSS")
    reset_peak()
    best, out = float("inf"), 0
    for _ in range(repeat):
        t0 = time.thread_time()
        result = fn(text)
        best = min(best, time.thread_time() - t0)
        out = max(out, output_size(result))
        result = None
    return max(status("VmHWM") - base, out), best

sample = " ".join(json.loads(line)["text"] for line in open(sys.argv[2], encoding="utf-8") if line.strip())
small, large = int(sys.argv[3]), int(sys.argv[4])

def text_of(unit, n):
    return (unit * (n // len(unit) + 1))[:n]

wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
tf = segkit.WordPiece.bert(sys.argv[1] + "/vocabularies/bert-base-uncased.txt", flavour="tf_text")
zh = segkit.ChineseMaxMatch()
paths = {
    "encode": (wp.encode, sample),
    "encode_batch": (lambda t: wp.encode_batch([t, t[: len(t) // 2]]), sample),
    "encode expanding": (wp.encode, "\ubc95\uc744 \u00c9T\u00c9 \x01[CLS]"),
    "tf_text encode": (tf.encode, sample),
    "chinese cut": (zh.cut, sample),
    "__call__ with overflow": (lambda t: wp(t, truncation=True, max_length=128, stride=16,
                                            return_overflowing_tokens=True), sample),
}
added = segkit.WordPiece.from_pretrained("bert-base-uncased")
added.add_tokens(["<x>", segkit.AddedToken("the", single_word=True)])
paths["added tokens encode"] = (added.encode, sample + " <x> ")
try:
    import pyarrow as pa
except ImportError:  # the Arrow paths are measured where pyarrow is installed
    pa = None
if pa is not None:
    # Arrow's own pool keeps freed memory for reuse, which would hide the
    # small text's peak behind the warm-up's; the system allocator does not.
    pa.set_memory_pool(pa.system_memory_pool())
    paths["encode_arrow"] = (lambda t: wp.encode_arrow(pa.array([t, t[: len(t) // 2]])), sample)
results = {}
for name, (fn, unit) in paths.items():
    fn(text_of(unit, 1000))
    fn(text_of(unit, 70_000))  # the long-text path too (kernels loaded)
    m1, t1 = measure(fn, text_of(unit, small), 5)
    m2, t2 = measure(fn, text_of(unit, large), 3)
    results[name] = {"small_bytes": m1, "large_bytes": m2, "small_s": t1, "large_s": t2}
print(json.dumps(results))
"""


def _measure() -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(REPO), str(SAMPLE), str(SMALL), str(LARGE)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"measuring subprocess failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def figures() -> dict:
    if not Path("/proc/self/status").is_file():
        pytest.skip("peak memory is read from /proc/self/status (Linux only)")
    return _measure()


PATHS = ["encode", "encode_batch", "encode expanding", "tf_text encode", "chinese cut", "__call__ with overflow",
         "added tokens encode", "encode_arrow"]


def _figure(figures: dict, path: str) -> dict:
    if path not in figures:
        pytest.skip(f"{path}: needs pyarrow, which is not installed")
    return figures[path]


@pytest.mark.parametrize("path", PATHS)
def test_peak_memory_linear_in_text_length(figures, path):
    f = _figure(figures, path)
    per_char_small = max(f["small_bytes"] / SMALL, FLOOR)
    per_char_large = f["large_bytes"] / LARGE
    assert per_char_large <= MAX_GROWTH * per_char_small, (
        f"{path}: {per_char_large:.1f} bytes/char for {LARGE:,} characters against {per_char_small:.1f} for "
        f"{SMALL:,} (peak {f['large_bytes'] / 1e6:.1f} MB vs {f['small_bytes'] / 1e6:.1f} MB): not linear"
    )


@pytest.mark.parametrize("path", PATHS)
def test_time_linear_in_text_length(figures, path):
    f = _figure(figures, path)
    ratio = f["large_s"] / f["small_s"]
    assert ratio <= MAX_TIME_RATIO, (
        f"{path}: {f['large_s'] * 1e3:.1f} ms for {LARGE:,} characters, {f['small_s'] * 1e3:.2f} ms for "
        f"{SMALL:,}: {ratio:.0f}x for 10x the text"
    )
