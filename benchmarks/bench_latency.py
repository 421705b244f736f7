"""Speed where users feel it: one sentence per call, and raw batches, vs HF.

Both sides are built from the same HuggingFace ``tokenizer.json``
(``../shared/data/vocab/<model>.tokenizer.json``) for bert-base-uncased and
bert-base-multilingual-cased; HF ``tokenizers`` runs on one thread
(``RAYON_NUM_THREADS=1``), in this process, timed in interleaved rounds.

(a) one sentence per call, raw text, full BERT pipeline (normalizer,
    pre-tokenizer, WordPiece, ``[CLS]``/``[SEP]`` template):
    ``WordPiece.from_tokenizer_json(path).encode(t)`` vs
    ``Tokenizer.from_file(path).encode(t)``, each with and without reading
    ``.ids``, over a sample of the raw corpus (every k-th line: every
    language).  Target: >= 7x.
(b) one sentence per call, pre-normalized text (the model's own
    ``BertNormalizer`` applied once, untimed), only the WordPiece model and
    the BERT pre-tokenizer on both sides: ``WordPiece(vocab)`` (no
    normalization, no template) vs an HF ``Tokenizer(models.WordPiece)`` with
    ``BertPreTokenizer``.  Target: >= 7x.
(c) batched, raw text, full pipeline, the whole corpus in one call:
    ``WordPiece.from_pretrained(name).encode_batch(texts)`` vs HF
    ``encode_batch(texts)``.  Target: >= 25x.

Every figure is a ratio of best times (with the median of per-round ratios
in brackets); the load average is printed before and after.  ``--clock cpu``
times CPU time of the process (HF's worker thread included) instead of
elapsed time: on a machine shared with other work, time spent waiting for
a core then does not count.  Outputs (ids
and offsets) of both sides are compared on the timed input.

Run from the repository root:
``python benchmarks/bench_latency.py [--quick] [--repeat N] [--models uncased,multilingual] [--parts abc]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import argparse
import os
import time

import segkit

TARGET_SENTENCE = 7.0
TARGET_BATCH = 25.0
MODELS = {"uncased": "bert-base-uncased", "multilingual": "bert-base-multilingual-cased"}


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


CLOCK = time.perf_counter


def time_rounds(systems: dict, repeat: int) -> dict:
    """Seconds per call of each system in each round (one warm-up call each;
    the order rotates from round to round), on :data:`CLOCK`."""
    names = list(systems)
    for n in names:
        systems[n]()
    times: dict = {n: [] for n in names}
    for r in range(repeat):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            t0 = CLOCK()
            systems[n]()
            times[n].append(CLOCK() - t0)
    return times


def ratio(times: dict, slow: str, fast: str) -> tuple[float, float]:
    return min(times[slow]) / min(times[fast]), C.median_ratio(times, slow, fast)


def per_sentence(systems: dict, sample: list[str], repeat: int) -> dict:
    """Time loops over ``sample`` (one call per sentence)."""
    loops = {}
    for name, fn in systems.items():
        def loop(fn=fn):
            for t in sample:
                fn(t)
        loops[name] = loop
    return time_rounds(loops, repeat)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer sentences, a quarter of the corpus batched")
    p.add_argument("--repeat", type=int, default=None, help="rounds (best kept); default 5, 3 with --quick")
    p.add_argument("--models", default="uncased,multilingual", help="comma-separated: uncased, multilingual")
    p.add_argument("--parts", default="abc", help="which parts to run (letters a, b, c)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="wall: elapsed time; cpu: CPU time of the process (steadier on a loaded machine)")
    args = p.parse_args()
    global CLOCK
    CLOCK = time.perf_counter if args.clock == "wall" else time.process_time
    repeat = args.repeat or (3 if args.quick else 5)
    tokenizers = C.import_tokenizers()
    if tokenizers is None:
        return
    from tokenizers import Tokenizer, models, pre_tokenizers

    C.require_data()
    raw, _, _ = C.load_corpus(normalize=False)
    n_sent = 4_000 if args.quick else 20_000
    step = max(1, len(raw) // n_sent)
    sample = raw[::step][:n_sent]
    batch = raw[::4] if args.quick else raw
    print(f"loadavg at start: {loadavg()}; RAYON_NUM_THREADS={os.environ['RAYON_NUM_THREADS']}; "
          f"tokenizers {tokenizers.__version__}; best of {repeat} interleaved rounds; {args.clock} clock")
    print(f"one-sentence sample: {len(sample):,} sentences of the raw corpus (1 line in {step}), "
          f"{sum(map(len, sample)) / len(sample):.0f} chars on average")
    results: dict = {"sentences": len(sample), "batch_texts": len(batch)}
    summary = []
    for key in args.models.split(","):
        name = MODELS[key.strip()]
        path = C.DATA_DIR / "vocab" / f"{name}.tokenizer.json"
        hf = Tokenizer.from_file(str(path))
        res: dict = {}
        results[name] = res
        print(f"\n=== {name} ({path.name}) ===")
        if "a" in args.parts:
            wp = segkit.WordPiece.from_tokenizer_json(path)
            wp.encode("warm up")
            bad = sum(wp.encode(t).ids != hf.encode(t).ids for t in sample)
            bad_off = sum(wp.encode(t).offsets != hf.encode(t).offsets for t in sample[:2000])
            times = per_sentence({
                "segkit encode(t).ids": lambda t: wp.encode(t).ids,
                "HF encode(t).ids": lambda t: hf.encode(t).ids,
                "segkit encode(t)": wp.encode,
                "HF encode(t)": hf.encode,
            }, sample, repeat)
            r1 = ratio(times, "HF encode(t).ids", "segkit encode(t).ids")
            r2 = ratio(times, "HF encode(t)", "segkit encode(t)")
            us = {n: min(v) / len(sample) * 1e6 for n, v in times.items()}
            print(f"(a) raw, full pipeline, one sentence/call: "
                  + ", ".join(f"{n} {u:.2f} us" for n, u in us.items()))
            print(f"    encode(t).ids {r1[0]:.2f}x [{r1[1]:.2f}x]; encode(t) {r2[0]:.2f}x [{r2[1]:.2f}x]"
                  f"  (target >= {TARGET_SENTENCE:g}x: {C.verdict(r1[0], TARGET_SENTENCE, at_least=True)})"
                  f"; ids mismatches {bad}/{len(sample)}, offsets mismatches {bad_off}/2000; load {loadavg()}")
            res["raw_sentence"] = {"us": us, "ratio_ids": r1, "ratio_encode": r2, "mismatches": bad}
            summary.append((name, "(a) raw one sentence, encode(t).ids", r1, TARGET_SENTENCE))
        if "b" in args.parts:
            norm = hf.normalizer
            pre = [norm.normalize_str(t) for t in sample]
            vocab_path = C.DATA_DIR / "vocab" / f"{name}.txt"
            wp = segkit.WordPiece(vocab_path)
            wp.encode("warm up")
            hfm = Tokenizer(models.WordPiece(C.hf_vocab(vocab_path), unk_token="[UNK]",
                                             continuing_subword_prefix="##", max_input_chars_per_word=100))
            hfm.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
            bad = sum(wp.encode(t).ids != hfm.encode(t).ids for t in pre)
            times = per_sentence({
                "segkit encode(t).ids": lambda t: wp.encode(t).ids,
                "HF encode(t).ids": lambda t: hfm.encode(t).ids,
                "segkit encode(t)": wp.encode,
                "HF encode(t)": hfm.encode,
            }, pre, repeat)
            r1 = ratio(times, "HF encode(t).ids", "segkit encode(t).ids")
            r2 = ratio(times, "HF encode(t)", "segkit encode(t)")
            us = {n: min(v) / len(pre) * 1e6 for n, v in times.items()}
            print(f"(b) pre-normalized, WordPiece + BertPreTokenizer only, one sentence/call: "
                  + ", ".join(f"{n} {u:.2f} us" for n, u in us.items()))
            print(f"    encode(t).ids {r1[0]:.2f}x [{r1[1]:.2f}x]; encode(t) {r2[0]:.2f}x [{r2[1]:.2f}x]"
                  f"  (target >= {TARGET_SENTENCE:g}x: {C.verdict(r1[0], TARGET_SENTENCE, at_least=True)})"
                  f"; ids mismatches {bad}/{len(pre)}; load {loadavg()}")
            res["prenormalized_sentence"] = {"us": us, "ratio_ids": r1, "ratio_encode": r2, "mismatches": bad}
            summary.append((name, "(b) pre-normalized one sentence, encode(t).ids", r1, TARGET_SENTENCE))
        if "c" in args.parts:
            wp = segkit.WordPiece.from_pretrained(name)
            wp.encode_batch(batch[:100])
            ours = wp.encode_batch(batch)
            theirs = hf.encode_batch(batch)
            bad = sum(a != b.ids for a, b in zip(ours.ids, theirs))
            del ours, theirs
            nbytes = C.utf8_bytes(batch)
            times = time_rounds({
                "segkit encode_batch": lambda: wp.encode_batch(batch),
                "HF encode_batch": lambda: hf.encode_batch(batch),
            }, max(2, repeat - 2))
            r = ratio(times, "HF encode_batch", "segkit encode_batch")
            mbs = {n: nbytes / min(v) / 1e6 for n, v in times.items()}
            print(f"(c) raw, full pipeline, batched ({len(batch):,} texts, {nbytes / 1e6:.1f} MB): "
                  + ", ".join(f"{n} {m:.1f} MB/s" for n, m in mbs.items()))
            print(f"    encode_batch {r[0]:.1f}x [{r[1]:.1f}x]  (target >= {TARGET_BATCH:g}x: "
                  f"{C.verdict(r[0], TARGET_BATCH, at_least=True)}); ids mismatches {bad}/{len(batch)}; "
                  f"load {loadavg()}")
            res["raw_batch"] = {"mb_per_s": mbs, "ratio": r, "mismatches": bad}
            summary.append((name, "(c) raw batched encode_batch", r, TARGET_BATCH))
    print(f"\nsummary (ratio of best times [median of per-round ratios]); loadavg at end: {loadavg()}")
    for name, what, r, target in summary:
        print(f"  {name:30s} {what:48s} {r[0]:6.2f}x [{r[1]:6.2f}x]  target >= {target:g}x: "
              f"{C.verdict(r[0], target, at_least=True)}")
    results["loadavg_end"] = loadavg()
    C.save_results("bench_latency", results, args)


if __name__ == "__main__":
    main()
