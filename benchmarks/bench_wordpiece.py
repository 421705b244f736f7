"""WordPiece throughput: segkit vs HuggingFace tokenizers, one thread, same process.

Input: the whole multilingual corpus (``../shared/data/corpus/multilingual.jsonl``),
normalized once up front like BERT-cased input (so neither side normalizes
while timed); vocabulary: bert-base-multilingual-cased (119,547 tokens).

(a) batched, end to end: ``WordPiece.encode_batch(texts)`` and the ids-only
    engine call ``wp.automaton.segment_batch(texts, offsets=False)`` vs HF
    ``Tokenizer.encode_batch`` (models.WordPiece + BertPreTokenizer, no
    normalizer, no special tokens), in MB/s of UTF-8 input.  Extra rows: the
    same with the ids turned into Python lists on both sides, and HF
    ``encode_batch_fast`` (no offsets) when available.
(b) one sentence per call: ``wp.encode(text).ids`` and ``wp.encode_ids(text)``
    vs HF ``tok.encode(text).ids``, in microseconds per sentence.
(c) correctness: ids (and offsets) of both systems compared text by text.

Run from the repository root: ``python benchmarks/bench_wordpiece.py [--quick]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import os
import time

import segkit

TARGET_BATCH = 25.0  # segkit encode_batch >= 25x HF encode_batch
TARGET_SENTENCE = 7.0  # segkit encode(t).ids >= 7x HF encode(t).ids


def build_hf(tokenizers):
    """HF WordPiece tokenizer on the same vocabulary, without normalizer."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = C.hf_vocab(C.MULTILINGUAL_VOCAB)
    tok = Tokenizer(
        models.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##", max_input_chars_per_word=100)
    )
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


def minimal_repro(wp, tok, text: str):
    """The first pre-tokenized word of ``text`` on which the two disagree."""
    for word, _ in tok.pre_tokenizer.pre_tokenize_str(text):
        ours = wp.tokenize_word(word)
        theirs = [t.value for t in tok.model.tokenize(word)]
        if ours != theirs:
            return word, ours, theirs
    return None


def report_ratios(times: dict, pairs: list, target: float) -> dict:
    """Print speedups (ratio of best times, and the median of the per-round
    ratios); the first pair is judged against ``target``."""
    out = {}
    print("\nspeedups: ratio of best times [median of per-round ratios]")
    width = max(len(p[0]) for p in pairs) + 1
    for k, (label, slow, fast) in enumerate(pairs):
        if slow not in times or fast not in times:
            continue
        r = min(times[slow]) / min(times[fast])
        m = C.median_ratio(times, slow, fast)
        extra = f"   (target >= {target:g}x: {C.verdict(r, target, at_least=True)})" if k == 0 else ""
        print(f"  {(label + ':').ljust(width)} {r:6.1f}x [{m:5.1f}x]{extra}")
        out[label] = {"best_ratio": r, "median_round_ratio": m}
        if k == 0:
            out["target"] = target
            out["target_met"] = r >= target
    return out


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=5, quick_repeat=2)
    C.require_data()
    stride = 8 if args.quick else 1
    n_sentences = 5_000 if args.quick else 20_000

    tokenizers = C.import_tokenizers()
    t0 = time.perf_counter()
    texts, langs, how = C.load_corpus(stride=stride)
    t_load = time.perf_counter() - t0
    nbytes = C.utf8_bytes(texts)
    nchars = sum(map(len, texts))
    print(f"corpus: {C.CORPUS} ({'every 8th line, ' if args.quick else ''}{len(texts):,} texts, "
          f"{len(set(langs))} languages, {nchars:,} chars, {nbytes / 1e6:.2f} MB UTF-8)")
    print(f"normalized with: {how} (load + normalize {t_load:.1f}s, not timed below)")
    print(f"vocabulary: {C.MULTILINGUAL_VOCAB.name}; repetitions: best of {args.repeat} "
          f"(interleaved, after one warm-up call each); RAYON_NUM_THREADS={os.environ['RAYON_NUM_THREADS']}")

    t0 = time.perf_counter()
    wp = segkit.WordPiece(C.MULTILINGUAL_VOCAB)
    print(f"segkit WordPiece built in {time.perf_counter() - t0:.2f}s")
    wp.encode("warm up")  # load or compile the kernels before anything is timed
    tok = build_hf(tokenizers) if tokenizers is not None else None
    results: dict = {
        "corpus": {"texts": len(texts), "chars": nchars, "utf8_bytes": nbytes, "normalized_with": how},
        "targets": {"batch_speedup": TARGET_BATCH, "sentence_speedup": TARGET_SENTENCE},
    }

    # ------------------------------------------------------------ (a) batched
    print("\n(a) batched, one thread, whole input in one call")
    systems = {
        "segkit encode_batch": lambda: wp.encode_batch(texts),
        "segkit segment_batch ids-only": lambda: wp.automaton.segment_batch(texts, offsets=False),
        "segkit encode_batch + .ids lists": lambda: wp.encode_batch(texts).ids,
    }
    if tok is not None:
        systems["HF encode_batch"] = lambda: tok.encode_batch(texts, add_special_tokens=False)
        systems["HF encode_batch + .ids lists"] = lambda: [
            e.ids for e in tok.encode_batch(texts, add_special_tokens=False)
        ]
        if hasattr(tok, "encode_batch_fast"):
            systems["HF encode_batch_fast (no offsets)"] = lambda: tok.encode_batch_fast(
                texts, add_special_tokens=False
            )
        else:
            print("  (HF encode_batch_fast not available in this tokenizers version: row skipped)")
    times = C.time_rounds(systems, repeat=args.repeat)
    best = {n: min(ts) for n, ts in times.items()}
    hf_ref = best.get("HF encode_batch")
    rows = [[n, sec, nbytes / sec / 1e6, (hf_ref / sec) if hf_ref else None] for n, sec in best.items()]
    C.print_table(["system", "best s", "MB/s", "speedup vs HF encode_batch"], rows,
                  title="batched throughput (UTF-8 MB of input per second; ratios from this run)")
    results["batched"] = {n: {"seconds": s, "mb_per_s": nbytes / s / 1e6} for n, s in best.items()}
    if hf_ref:
        pairs = [
            ("segkit encode_batch vs HF encode_batch", "HF encode_batch", "segkit encode_batch"),
            ("segkit segment_batch ids-only vs HF encode_batch", "HF encode_batch", "segkit segment_batch ids-only"),
            ("ids as Python lists on both sides", "HF encode_batch + .ids lists", "segkit encode_batch + .ids lists"),
            ("segkit ids-only vs HF encode_batch_fast", "HF encode_batch_fast (no offsets)",
             "segkit segment_batch ids-only"),
        ]
        results["batched_ratios"] = report_ratios(times, pairs, TARGET_BATCH)

    # ------------------------------------------------------- (b) per sentence
    step = max(1, len(texts) // n_sentences)
    sample = texts[::step][:n_sentences]
    sb = C.utf8_bytes(sample)
    print(f"\n(b) one sentence per call: {len(sample):,} sentences (1 text in {step}, "
          f"{sum(map(len, sample)) / len(sample):.0f} chars on average)")

    def seg_encode():
        for t in sample:
            wp.encode(t).ids

    def seg_encode_ids():
        for t in sample:
            wp.encode_ids(t)

    systems = {"segkit encode(t).ids": seg_encode, "segkit encode_ids(t)": seg_encode_ids}
    if tok is not None:
        def hf_encode():
            for t in sample:
                tok.encode(t, add_special_tokens=False).ids

        systems["HF encode(t).ids"] = hf_encode
    times = C.time_rounds(systems, repeat=args.repeat)
    best = {n: min(ts) for n, ts in times.items()}
    hf_ref = best.get("HF encode(t).ids")
    rows = [
        [n, s / len(sample) * 1e6, sb / s / 1e6, (hf_ref / s) if hf_ref else None] for n, s in best.items()
    ]
    C.print_table(["system", "us/sentence", "MB/s", "speedup vs HF encode"], rows,
                  title="per-sentence latency (ratios from this run)")
    results["per_sentence"] = {
        "sentences": len(sample),
        "us_per_sentence": {n: s / len(sample) * 1e6 for n, s in best.items()},
    }
    if hf_ref:
        pairs = [
            ("segkit encode(t).ids vs HF encode(t).ids", "HF encode(t).ids", "segkit encode(t).ids"),
            ("segkit encode_ids(t) vs HF encode(t).ids", "HF encode(t).ids", "segkit encode_ids(t)"),
        ]
        results["per_sentence_ratios"] = report_ratios(times, pairs, TARGET_SENTENCE)

    # ------------------------------------------------------- (c) correctness
    print("\n(c) correctness")
    ours = wp.encode_batch(texts)
    ours_ids = ours.ids
    sample_idx = range(0, len(texts), step)[:n_sentences]
    single = sum(wp.encode_ids(texts[i]) != ours_ids[i] for i in sample_idx)
    print(f"segkit encode_ids(t) vs encode_batch ids, {len(sample):,} texts: {single} mismatches")
    corr = {"encode_ids_vs_batch_mismatches": single}
    if tok is not None:
        theirs = tok.encode_batch(texts, add_special_tokens=False)
        bad_ids = [i for i in range(len(texts)) if ours_ids[i] != theirs[i].ids]
        bad_off = [i for i in range(len(texts)) if ours[i].offsets != theirs[i].offsets]
        ntok = int(ours.row_splits[-1])
        print(f"ids vs HF, {len(texts):,} texts ({ntok:,} tokens): {len(bad_ids)} texts differ")
        print(f"offsets vs HF: {len(bad_off)} texts differ")
        corr.update(ids_mismatches=len(bad_ids), offsets_mismatches=len(bad_off), tokens=ntok)
        examples = []
        for i in bad_ids[:5]:
            rep = minimal_repro(wp, tok, texts[i])
            print(f"  line {i * stride + 1} [{langs[i]}] {texts[i][:80]!r}")
            if rep:
                word, a, b = rep
                print(f"    minimal: tokenize_word({word!r}) -> segkit {a} vs HF {b}")
                examples.append({"line": i * stride + 1, "lang": langs[i], "word": word, "segkit": a, "hf": b})
        for i in [j for j in bad_off if j not in set(bad_ids)][:3]:
            print(f"  offsets, line {i * stride + 1} [{langs[i]}] {texts[i][:80]!r}: "
                  f"segkit {ours[i].offsets[:6]} vs HF {theirs[i].offsets[:6]}")
        corr["examples"] = examples
    results["correctness"] = corr
    C.save_results("bench_wordpiece", results, args)


if __name__ == "__main__":
    main()
