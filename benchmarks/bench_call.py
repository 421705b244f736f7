"""transformers' tokenizer call: ``WordPiece.__call__`` vs ``BertTokenizerFast.__call__``.

Both on the bundled bert-base-multilingual-cased vocabulary (cased BERT
pipeline, ``[CLS] ... [SEP]``), raw text of the multilingual corpus (the
bundled 300-sentence sample when the shared data is absent).  Measured in
one process, one thread, interleaved rounds:

(a) one sentence per call, default arguments: ``tok(text)`` (lists of
    ints), the issue's figure (target >= 5x);
(b) one sentence per call, ``return_tensors="np"``;
(c) batches of 64, ``padding=True, truncation=True, max_length=128,
    return_tensors="np"`` (and ``"pt"`` when torch is installed).

Results are checked equal on the way.  The load average is printed with
the figures: the machine is shared.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numpy as np  # noqa: E402

from _common import CORPUS, MULTILINGUAL_VOCAB, median_ratio, parse_args, print_table, save_results, time_rounds, verdict  # noqa: E402

import segkit  # noqa: E402

SAMPLE = ROOT / "tests" / "data" / "multilingual-sample.jsonl"


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split(" ")[0]
    except OSError:
        return "?"


def main() -> int:
    args = parse_args(__doc__, default_repeat=5, quick_repeat=3)
    try:
        import transformers
    except ImportError:
        print("SKIP: transformers is not installed (pip install transformers)")
        return 0
    try:
        import torch  # noqa: F401
    except ImportError:
        torch = None
    source = CORPUS if CORPUS.is_file() else SAMPLE
    with source.open(encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    n_single = 2000 if args.quick else 10000
    single = texts[:: max(1, len(texts) // n_single)][:n_single]
    batches = [texts[i : i + 64] for i in range(0, min(len(texts), 64 * (40 if args.quick else 200)), 64)]
    n_vocab = len(MULTILINGUAL_VOCAB.read_text(encoding="utf-8").split("\n")) - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hf = transformers.BertTokenizerFast(vocab_file=str(MULTILINGUAL_VOCAB), do_lower_case=False)
        if len(hf) < n_vocab:  # transformers 5 ignores vocab_file= here
            hf = transformers.BertTokenizerFast(vocab=str(MULTILINGUAL_VOCAB), do_lower_case=False)
    wp = segkit.WordPiece.bert(MULTILINGUAL_VOCAB, lowercase=False)
    print(f"texts: {source.name}; {len(single):,} single sentences, {len(batches)} batches of 64; "
          f"transformers {transformers.__version__}; load {loadavg()}")

    # Correctness on the way.
    bad = sum(wp(t) != hf(t) for t in single[:500])
    bad += sum(
        not np.array_equal(wp(b, padding=True, truncation=True, max_length=128, return_tensors="np")["input_ids"],
                           hf(b, padding=True, truncation=True, max_length=128, return_tensors="np")["input_ids"])
        for b in batches[:20]
    )
    print(f"differing results: {bad}")

    def loop(tok, **kw):
        def run():
            for t in single:
                tok(t, **kw)
        return run

    def loop_batches(tok, **kw):
        def run():
            for b in batches:
                tok(b, padding=True, truncation=True, max_length=128, **kw)
        return run

    figures = {}
    rows = []
    for label, kind, kw in (
        ("(a) one sentence, lists", "single", {}),
        ("(b) one sentence, np", "single", {"return_tensors": "np"}),
        ("(c) batches of 64, np", "batch", {"return_tensors": "np"}),
    ) + ((("(d) batches of 64, pt", "batch", {"return_tensors": "pt"}),) if torch is not None else ()):
        print(f"\n{label}  (load {loadavg()})")
        make = loop if kind == "single" else loop_batches
        ts = time_rounds({"segkit": make(wp, **kw), "transformers": make(hf, **kw)}, repeat=args.repeat)
        ratio = min(ts["transformers"]) / min(ts["segkit"])
        per = len(single) if kind == "single" else len(batches)
        unit = "us/sentence" if kind == "single" else "us/batch"
        figures[label] = {"ratio": ratio, "median_ratio": median_ratio(ts, "transformers", "segkit"),
                          unit: {k: min(v) / per * 1e6 for k, v in ts.items()}, "load": loadavg()}
        rows.append([label, min(ts["segkit"]) / per * 1e6, min(ts["transformers"]) / per * 1e6, ratio,
                     figures[label]["median_ratio"]])
    print_table(["call", "segkit us", "transformers us", "speedup", "median"], rows)
    r = figures["(a) one sentence, lists"]["ratio"]
    print(f"\n__call__ on one sentence vs BertTokenizerFast: {r:.1f}x (target >= 5x: {verdict(r, 5, at_least=True)}); "
          f"load {loadavg()}")
    save_results("bench_call", {"figures": figures, "differing": bad}, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
