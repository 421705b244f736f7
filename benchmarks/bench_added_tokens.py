"""encode_batch with a few added tokens: segkit vs HF tokenizers (issue 19).

Both load bert-base-multilingual-cased's ``tokenizer.json`` and get the same
added tokens (normalized and raw, special and not, with lstrip / rstrip /
single_word); the input is the raw multilingual corpus with added tokens
inserted into every tenth text (plus ``"the"``, an added token that occurs
in most English texts).  Timed, one thread: the whole corpus in batches of
1,000 texts, ``encode_batch(...)`` and its ids on both sides; segkit
without added tokens for reference.  Checks on the way that the ids are
identical.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

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
)

import segkit  # noqa: E402

ADDED = [
    dict(content="covid19"),
    dict(content="[NEW]", lstrip=True),
    dict(content="the", single_word=True),
    dict(content="東京都", rstrip=True),
]
SPECIAL = [dict(content="<eot>", lstrip=True, rstrip=True), dict(content="<|sep|>")]


def main() -> int:
    args = parse_args(__doc__, default_repeat=3, quick_repeat=2)
    tokenizers = import_tokenizers()
    if tokenizers is None:
        print("HF tokenizers is not installed: nothing to compare against (pip install tokenizers)")
        return 0
    path = DATA_DIR / "vocab" / "bert-base-multilingual-cased.tokenizer.json"
    texts, _, _ = load_corpus(normalize=False, stride=4 if args.quick else 1)
    rng = random.Random(19)
    contents = [s["content"] for s in ADDED + SPECIAL]
    texts = [
        t if k % 10 else (lambda i: t[:i] + " " + rng.choice(contents) + " " + t[i:])(rng.randrange(len(t) + 1))
        for k, t in enumerate(texts)
    ]
    mb = utf8_bytes(texts) / 1e6
    hf = tokenizers.Tokenizer.from_file(str(path))
    hf.add_tokens([tokenizers.AddedToken(s["content"], **{k: v for k, v in s.items() if k != "content"}) for s in ADDED])
    hf.add_special_tokens([tokenizers.AddedToken(s["content"], **{k: v for k, v in s.items() if k != "content"})
                           for s in SPECIAL])
    plain = segkit.WordPiece.from_tokenizer_json(path)
    wp = segkit.WordPiece.from_tokenizer_json(path)
    wp.add_tokens([segkit.AddedToken(**s) for s in ADDED])
    wp.add_special_tokens([segkit.AddedToken(**s) for s in SPECIAL])
    with_token = sum(any(c in t for c in contents) for t in texts)
    print(f"raw corpus: {len(texts):,} texts ({with_token:,} with an added token's string), {mb:.2f} MB UTF-8; "
          f"load {os.getloadavg()}")
    batches = [texts[i : i + 1000] for i in range(0, len(texts), 1000)]
    mism = sum(a.ids != b.ids for bt in batches[::10] for a, b in zip(wp.encode_batch(bt), hf.encode_batch(bt)))
    print(f"texts compared: {sum(len(b) for b in batches[::10]):,}, differing: {mism}")

    def seg():
        for b in batches:
            wp.encode_batch(b).ids

    def seg_plain():
        for b in batches:
            plain.encode_batch(b).ids

    def hf_batch():
        for b in batches:
            [e.ids for e in hf.encode_batch(b)]

    t = time_rounds({"segkit": seg, "segkit, no added tokens": seg_plain, "HF": hf_batch}, repeat=args.repeat)
    r = min(t["HF"]) / min(t["segkit"])
    rows = [[k, min(v), mb / min(v), min(t["HF"]) / min(v)] for k, v in t.items()]
    print_table(["system", "best (s)", "MB/s", "speedup vs HF"], rows)
    print(f"\nencode_batch with added tokens vs HF: {r:.1f}x [median {median_ratio(t, 'HF', 'segkit'):.1f}x]; "
          f"cost of the added tokens: {min(t['segkit']) / min(t['segkit, no added tokens']):.2f}x segkit's time; "
          f"load {os.getloadavg()}")
    save_results("bench_added_tokens", {"ratio_vs_hf": r, "mb_s": {k: mb / min(v) for k, v in t.items()},
                                        "differing_texts": mism}, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
