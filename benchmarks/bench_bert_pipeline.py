"""BERT's full pipeline on RAW text: segkit vs HF tokenizers (issue 3's figure).

Both load bert-base-multilingual-cased's ``tokenizer.json`` (BertNormalizer,
BertPreTokenizer, WordPiece, [CLS]/[SEP] template); the input is the raw
multilingual corpus (no pre-normalization).  Measured, one thread:

(a) batched: padding to the longest of each batch of 64 texts (set
    SEGKIT_BENCH_BATCH for another size) and model
    matrices (numpy int64 input_ids, token_type_ids, attention_mask) — segkit
    ``encode_batch(..., padding=True).to_numpy()`` vs HF ``encode_batch``
    with ``enable_padding()`` followed by ``np.array`` of the fields;
(b) one sentence per call: ``encode(t).ids`` on both.

Ratios come from the same interleaved rounds.  Targets: >= 15x batched,
>= 5x per sentence.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

from _common import (  # noqa: E402
    DATA_DIR,
    import_tokenizers,
    load_corpus,
    median_ratio,
    parse_args,
    print_table,
    save_results,
    time_rounds,
    utf8_bytes,
    verdict,
)

import segkit  # noqa: E402

BATCH = int(os.environ.get("SEGKIT_BENCH_BATCH", "64"))


def main() -> int:
    args = parse_args(__doc__, default_repeat=3, quick_repeat=2)
    tokenizers = import_tokenizers()
    if tokenizers is None:
        print("HF tokenizers is not installed: nothing to compare against (pip install tokenizers)")
        return 0
    path = DATA_DIR / "vocab" / "bert-base-multilingual-cased.tokenizer.json"
    texts, _, _ = load_corpus(normalize=False, stride=4 if args.quick else 1)
    mb = utf8_bytes(texts) / 1e6
    print(f"raw corpus: {len(texts):,} texts, {mb:.2f} MB UTF-8; tokenizer: {path.name}")
    hf = tokenizers.Tokenizer.from_file(str(path))
    hf_pad = tokenizers.Tokenizer.from_file(str(path))
    hf_pad.enable_padding()
    wp = segkit.WordPiece.from_tokenizer_json(path)
    batches = [texts[i : i + BATCH] for i in range(0, len(texts), BATCH)]

    def seg_batched():
        for b in batches:
            wp.encode_batch(b, padding=True).to_numpy()

    def hf_batched():
        for b in batches:
            enc = hf_pad.encode_batch(b)
            np.array([e.ids for e in enc], dtype=np.int64)
            np.array([e.type_ids for e in enc], dtype=np.int64)
            np.array([e.attention_mask for e in enc], dtype=np.int64)

    # Correctness on the way: identical padded matrices.
    mism = 0
    for b in batches[:: max(1, len(batches) // 200)]:
        m = wp.encode_batch(b, padding=True).to_numpy()
        enc = hf_pad.encode_batch(b)
        mism += not (
            np.array_equal(m["input_ids"], np.array([e.ids for e in enc]))
            and np.array_equal(m["attention_mask"], np.array([e.attention_mask for e in enc]))
            and np.array_equal(m["token_type_ids"], np.array([e.type_ids for e in enc]))
        )
    print(f"batches compared: {len(batches[:: max(1, len(batches) // 200)])}, differing: {mism}")

    print(f"\n(a) batched ({BATCH} texts per call) to padded numpy matrices")
    tb = time_rounds({"segkit": seg_batched, "HF": hf_batched}, repeat=args.repeat)
    single = texts[:: 4][: (5000 if args.quick else 20000)]

    def seg_single():
        for t in single:
            wp.encode(t).ids

    def hf_single():
        for t in single:
            hf.encode(t).ids

    print(f"\n(b) one sentence per call, {len(single):,} sentences")
    ts = time_rounds({"segkit": seg_single, "HF": hf_single}, repeat=args.repeat)
    rb = min(tb["HF"]) / min(tb["segkit"])
    rs = min(ts["HF"]) / min(ts["segkit"])
    rows = [
        ["batched: segkit", min(tb["segkit"]), mb / min(tb["segkit"]), rb],
        ["batched: HF", min(tb["HF"]), mb / min(tb["HF"]), 1.0],
        ["per sentence: segkit (us)", min(ts["segkit"]) / len(single) * 1e6, "", rs],
        ["per sentence: HF (us)", min(ts["HF"]) / len(single) * 1e6, "", 1.0],
    ]
    print_table(["system", "best", "MB/s", "speedup vs HF"], rows)
    print(
        f"\nfull pipeline batched vs HF: {rb:.1f}x [median {median_ratio(tb, 'HF', 'segkit'):.1f}x] "
        f"(target >= 15x: {verdict(rb, 15, at_least=True)})"
    )
    print(
        f"full pipeline per sentence vs HF: {rs:.1f}x [median {median_ratio(ts, 'HF', 'segkit'):.1f}x] "
        f"(target >= 5x: {verdict(rs, 5, at_least=True)})"
    )
    save_results(
        "bench_bert_pipeline" + ("" if BATCH == 64 else f"_batch{BATCH}"),
        {
            "batched_ratio": rb,
            "per_sentence_ratio": rs,
            "batched_mb_s": {"segkit": mb / min(tb["segkit"]), "HF": mb / min(tb["HF"])},
            "per_sentence_us": {k: min(v) / len(single) * 1e6 for k, v in ts.items()},
            "differing_batches": mism,
            "batch_size": BATCH,
        },
        args,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
