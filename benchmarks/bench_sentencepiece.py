"""segkit.SentencePieceBPE against sentencepiece and kitoken, one thread.

On the shuffled multilingual corpus (``../shared/data/corpus/multilingual.jsonl``)
with Mistral's v3 model from mistral_common (``--model`` for another file):

1. one call per text: segkit ``encode``, sentencepiece ``encode``, kitoken
   ``encode``;
2. batched: segkit ``encode_batch``, sentencepiece ``encode(list,
   num_threads=1)``, kitoken ``encode_all`` (RAYON_NUM_THREADS=1);
3. worst case: a run of one letter, and random letters and spaces, of
   10^5 and 10^6 characters: time per character as the size grows 10x
   (linear: ~1x) for each system; memory is checked by
   tests/test_sentencepiece_linear.py.

Times are CPU time of the process (``process_time``), interleaved rounds,
best round kept; read the **ratios**.  Ids are checked equal first.
segkit keeps a bounded cache of words' ids across calls: its plain rows
reuse the words of earlier rounds, its "cold" rows start each round with
empty caches, its "steady" rows with caches filled by other texts of the
corpus (what a long stream of new texts sees).

Usage::

    python benchmarks/bench_sentencepiece.py [--texts 20000] [--rounds 3] [--model PATH]
"""

from __future__ import annotations

import _common  # noqa: F401  (first: sys.path, RAYON_NUM_THREADS)

import argparse
import json
import random
import time
from pathlib import Path

from _common import DATA_DIR, require_data

import segkit


def _mistral_v3() -> Path:
    import mistral_common

    return Path(mistral_common.__file__).parent / "data" / "mistral_instruct_tokenizer_240323.model.v3"


def _best(fns: dict, rounds: int) -> dict:
    """Best CPU time of each function; a ``(setup, fn)`` pair runs
    ``setup()`` untimed before each timed ``fn()``."""
    best = {k: float("inf") for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            if isinstance(fn, tuple):
                fn[0]()
                fn = fn[1]
            t0 = time.process_time()
            fn()
            best[k] = min(best[k], time.process_time() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--model", type=Path, default=None)
    args = ap.parse_args()
    require_data()
    import sentencepiece as spm

    path = args.model or _mistral_v3()
    with open(DATA_DIR / "corpus" / "multilingual.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    random.Random(0).shuffle(texts)
    others = texts[args.texts : args.texts + 4 * args.texts]  # (warm the word cache on texts not timed)
    texts = texts[: args.texts]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    ours = segkit.SentencePieceBPE(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    systems = {"segkit": ours, "sentencepiece": sp}
    try:
        import kitoken

        kt = kitoken.Kitoken.from_file(str(path))
        systems["kitoken"] = kt
    except ImportError:
        kt = None
        print("kitoken is not installed: skipped")
    expected = sp.encode(texts)
    assert ours.encode_batch(texts) == expected, "segkit differs from sentencepiece"
    if kt is not None:
        same = sum(a == b for a, b in zip(kt.encode_all(texts), expected))
        print(f"kitoken equals sentencepiece on {same}/{len(texts)} texts")
    print(f"{path.name}: {len(texts)} texts, {mb:.2f} MB UTF-8, best of {args.rounds} rounds (CPU time)")

    # segkit keeps a bounded cache of words' ids across calls, so repeated
    # rounds over the same texts find every word cached.  Two more rows
    # say what a new stream gives: "cold", the caches emptied before each
    # round; "steady", emptied and then filled by 4x as many other texts of
    # the corpus (untimed) before each round.
    def cold() -> None:
        ours._clear_caches()

    def steady_calls() -> None:
        ours._clear_caches()
        for t in others:
            ours.encode(t)

    def steady_batch() -> None:
        ours._clear_caches()
        ours.encode_batch(others)

    def one_by_one() -> None:
        for t in texts:
            ours.encode(t)

    calls = {"segkit": one_by_one, "segkit cold": (cold, one_by_one), "segkit steady": (steady_calls, one_by_one),
             "sentencepiece": lambda: [sp.encode(t) for t in texts]}
    batch = {"segkit": lambda: ours.encode_batch(texts), "segkit cold": (cold, lambda: ours.encode_batch(texts)),
             "segkit steady": (steady_batch, lambda: ours.encode_batch(texts)),
             "sentencepiece": lambda: sp.encode(texts, num_threads=1)}
    if kt is not None:
        calls["kitoken"] = lambda: [kt.encode(t) for t in texts]
        batch["kitoken"] = lambda: kt.encode_all(texts)
    for title, fns in (("one call per text", calls), ("batched", batch)):
        best = _best(fns, args.rounds)
        print(f"\n{title}:")
        for k, t in best.items():
            print(f"  {k:14s} {t * 1000:9.1f} ms  {mb / t:7.2f} MB/s  segkit is {t / best['segkit']:5.2f}x faster"
                  f"  (cold {t / best['segkit cold']:5.2f}x, steady {t / best['segkit steady']:5.2f}x)")

    print("\nworst case (time per character, 10^6 over 10^5; linear ~1.0):")
    rng = random.Random(1)
    inputs = {"one letter": lambda n: "a" * n,
              "random letters": lambda n: "".join(rng.choice("abcdefgh   ") for _ in range(n))}
    for name, make in inputs.items():
        small, large = make(10**5), make(10**6)
        assert ours.encode(large) == sp.encode(large)
        row = []
        for k, fn in (("segkit", ours.encode), ("sentencepiece", sp.encode)) + ((("kitoken", kt.encode),) if kt else ()):
            ts = _best({"s": lambda: fn(small)}, 2)["s"]
            tl = _best({"l": lambda: fn(large)}, 1)["l"]
            row.append(f"{k} {tl * 1000:.0f} ms ({tl / ts / 10:.2f}x)")
        print(f"  {name:15s} " + ", ".join(row))


if __name__ == "__main__":
    main()
