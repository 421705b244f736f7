"""Loading a vocabulary with one very long token (issue 32 item 10): the
build and the load of the saved model must grow linearly with the token's
length.  Prints the times for a token of L and of 10 L bytes, their ratio
(about 10 when linear, about 100 when quadratic) and tiktoken's time for
the same file.

Usage: ``python benchmarks/bench_long_token.py [L]`` (default 25,600 bytes).
"""

from __future__ import annotations

import base64
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the source tree, not an installed copy
import segkit  # noqa: E402


def vocabulary(path: Path, length: int) -> dict[bytes, int]:
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, (b"ab" * length)[:length]: 257}
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))
    return ranks


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    base = int(sys.argv[1]) if len(sys.argv) > 1 else 25_600
    folder = Path(tempfile.mkdtemp())
    warm = folder / "warm.tiktoken"
    vocabulary(warm, 64)
    segkit.BPE.from_tiktoken(warm, pattern=None).save(folder / "warm.segkit")
    segkit.load(folder / "warm.segkit")  # kernels compiled or loaded before timing
    rows = {}
    for length in (base, 10 * base):
        path = folder / f"long{length}.tiktoken"
        ranks = vocabulary(path, length)
        build = timed(lambda: segkit.BPE.from_tiktoken(path, pattern=None).save(folder / "m.segkit"))
        load = timed(lambda: segkit.load(folder / "m.segkit"))
        try:
            import tiktoken

            peer = timed(lambda: tiktoken.Encoding("t", pat_str=r"\S+|\s+", mergeable_ranks=ranks,
                                                   special_tokens={}))
        except ImportError:
            peer = float("nan")
        rows[length] = (build, load, peer)
        print(f"token of {length:>9,} bytes: build+save {build:7.3f} s, load {load:7.3f} s, tiktoken {peer:7.3f} s")
    (b1, l1, _), (b2, l2, _) = rows[base], rows[10 * base]
    print(f"10x longer token: build x{b2 / b1:.1f}, load x{l2 / max(l1, 1e-9):.1f} (linear: about 10)")


if __name__ == "__main__":
    main()
