"""Tekken (Mistral's tekken_240911.json) in segkit against segkit's
cl100k_base and against mistral_common's Tekkenizer, one thread, same
process, interleaved rounds (best kept), on a shuffled stride of the
multilingual corpus (raw text, not normalized).

Tekken's pattern has no hand-written matcher (GPT-2's, cl100k's and
o200k's have): it runs as a compiled regex program, one text in one call
with the encoder (``BPE._chain_ids``), batches in whole-batch steps, so
the ratio to cl100k_base is what the general matcher costs against a
hand-written one.  Tekkenizer is tiktoken underneath (Rust, its own regex),
plus a Python list comprehension adding the id offset.

Usage::

    python benchmarks/bench_tekken.py --quick     # ~30 s
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_corpus, parse_args, print_table, time_rounds, utf8_bytes  # noqa: E402


def main() -> int:
    args = parse_args(__doc__)
    try:
        import mistral_common
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    except ImportError:
        print("mistral_common is not installed: nothing to compare with")
        return 0
    import segkit

    path = Path(mistral_common.__file__).parent / "data" / "tekken_240911.json"
    texts, _, _ = load_corpus(normalize=False, stride=20 if args.quick else 5)
    random.Random(31).shuffle(texts)
    mb = utf8_bytes(texts) / 1e6
    tek = segkit.BPE.from_tekken(path)
    cl = segkit.BPE.from_pretrained("cl100k_base")
    ref = Tekkenizer.from_file(path)
    assert [tek.encode(t) for t in texts[:200]] == [ref.encode(t, bos=False, eos=False) for t in texts[:200]]

    systems = {
        "segkit Tekken, per call": lambda: [tek.encode(t) for t in texts],
        "segkit Tekken, batch": lambda: tek.encode_batch(texts, num_threads=1, flat=True),
        "segkit cl100k_base, per call": lambda: [cl.encode(t) for t in texts],
        "segkit cl100k_base, batch": lambda: cl.encode_batch(texts, num_threads=1, flat=True),
        "Tekkenizer (mistral_common), per call": lambda: [ref.encode(t, bos=False, eos=False) for t in texts],
    }
    times = {n: min(ts) for n, ts in time_rounds(systems, repeat=args.repeat).items()}
    ref_t = times["Tekkenizer (mistral_common), per call"]
    rows = [[n, f"{mb / t:.2f}", f"{ref_t / t:.2f}x", f"{times['segkit cl100k_base, per call'] / t:.2f}x"]
            for n, t in times.items()]
    print_table(["system", "MB/s", "vs Tekkenizer", "vs segkit cl100k per call"], rows,
                title=f"{len(texts)} texts, {mb:.2f} MB, one thread")
    print(f"segkit Tekken / Tekkenizer per call: {ref_t / times['segkit Tekken, per call']:.2f}x; "
          f"segkit Tekken / segkit cl100k_base per call: "
          f"{times['segkit cl100k_base, per call'] / times['segkit Tekken, per call']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
