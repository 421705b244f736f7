"""WordPiece against its peers: segkit vs TensorFlow Text, HuggingFace tokenizers,
transformers' pure-Python BERT tokenizer and a naive Python WordPiece.

Everything runs on one thread in this process (``RAYON_NUM_THREADS=1`` for
HuggingFace, TensorFlow's intra- and inter-op pools set to one thread before
any op runs), on the same input, in interleaved rounds; the best time of each
system is kept and the ratios come from the same run.

Input: the whole multilingual corpus (``../shared/data/corpus/multilingual.jsonl``,
83,385 sentences, 53 languages), shuffled with a fixed seed, normalized once up
front with HF ``BertNormalizer(lowercase=False, strip_accents=False)``; vocabulary
``vocabularies/bert-base-multilingual-cased.txt`` (119,547 tokens).  No system
normalizes while timed.

(a) end to end, batched (pre-tokenization + WordPiece), MB/s of UTF-8 input:
    * segkit ``WordPiece(path, special_tokens=[]).encode_batch(texts)`` (ids and
      character offsets) and the ids-only engine call
      ``wp.automaton.segment_batch(texts, offsets=False)``; also
      ``flavour="tf_text"`` (byte offsets, as TF gives) and batches of 1,000;
    * TF Text ``FastWordpieceTokenizer(no_pretokenization=False)``:
      ``tokenize`` (ids) and ``tokenize_with_offsets``, on one ``tf.constant``
      of all texts (built before timing; one extra row includes building it)
      and on batches of 1,000 texts;
    * HF ``tokenizers``: ``models.WordPiece`` + ``BertPreTokenizer``, ``encode_batch``;
    * transformers' pure-Python ``BertTokenizerLegacy`` (``tokenize`` +
      ``convert_tokens_to_ids`` per text) and a naive Python greedy
      WordPiece (written here: BERT's reference loop), both timed on a subset
      of 2,000 texts and extrapolated per MB (marked ``*`` in the table).
    Targets: segkit >= 3x TF Text (the faster of TF's one-call and batched
    modes) and >= 25x HF ``encode_batch``.
(b) single words (no pre-tokenization), on the corpus' words: segkit
    ``automaton.segment_batch(words, pretokenize=False)`` and ``tokenize_word``
    per word, TF Text ``no_pretokenization=True`` ``tokenize``, HF
    ``tokenizer.model.tokenize`` per word.
(c) correctness: segkit ``flavour="tf_text"`` ids and byte offsets vs TF Text
    (all texts, and the single words), segkit vs HF ``encode_batch`` ids and
    offsets, and segkit vs transformers and the naive WordPiece on the subset.

A peer that is not installed is skipped with a message.  Results:
``benchmarks/results/bench_peers.json``.

Run from the repository root: ``python benchmarks/bench_peers.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # before tensorflow is imported

import random
import time
import unicodedata
import warnings

import numpy as np

import segkit

SEED = 20240607
TARGET_TF = 3.0
TARGET_HF = 25.0
BATCH = 1_000
MAX_CHARS = 100  # BERT's max_input_chars_per_word (TF: max_bytes_per_word)


# ------------------------------------------------------------------ peers
def import_tf():
    """(tensorflow, tensorflow_text) limited to one thread, or None."""
    try:
        import tensorflow as tf
    except ImportError:
        print("SKIP TensorFlow Text: tensorflow is not installed (pip install tensorflow tensorflow-text)")
        return None
    try:
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError as e:  # already initialized: report, carry on
        print(f"WARNING: could not limit TensorFlow to one thread: {e}")
    try:
        import tensorflow_text as tft
    except ImportError:
        print("SKIP TensorFlow Text: tensorflow_text is not installed (pip install tensorflow-text)")
        return None
    return tf, tft


def import_legacy_bert():
    """transformers' pure-Python BERT tokenizer class, or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import transformers
    except ImportError:
        print("SKIP transformers: not installed (pip install transformers)")
        return None
    cls = getattr(transformers, "BertTokenizerLegacy", None)
    if cls is None:
        from transformers.models.bert import tokenization_bert

        cls = tokenization_bert.BertTokenizer
        # transformers < 5: BertTokenizer is the pure-Python one; in 5.x it is
        # backed by the Rust library, which would not be the pure-Python peer.
        if any("TokenizersBackend" in k.__name__ or "Fast" in k.__name__ for k in cls.__mro__):
            print("SKIP transformers pure-Python BERT tokenizer: not found in this version")
            return None
    return cls


def vocab_tokens() -> list[str]:
    lines = C.MULTILINGUAL_VOCAB.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


# -------------------------------------------------- naive Python WordPiece
_ASCII_PUNCT = frozenset(range(33, 48)) | frozenset(range(58, 65)) | frozenset(range(91, 97)) | frozenset(range(123, 127))


def _char_class(ch: str) -> int:
    """0 word character, 1 whitespace, 2 a word by itself (punctuation, CJK)."""
    if ch in C._WHITE_SPACE:
        return 1
    cp = ord(ch)
    if cp in _ASCII_PUNCT or unicodedata.category(ch).startswith("P"):
        return 2
    for lo, hi in C._CJK_RANGES:
        if lo <= cp <= hi:
            return 2
    return 0


class NaiveWordPiece:
    """BERT's reference algorithm in plain Python: split on whitespace,
    isolate punctuation and CJK ideographs, then per word greedy
    longest-match-first trying every end from the end of the word."""

    def __init__(self, vocab: dict[str, int], unk_id: int, prefix: str = "##", max_chars: int = MAX_CHARS):
        self.vocab, self.unk_id, self.prefix, self.max_chars = vocab, unk_id, prefix, max_chars
        self._classes: dict[str, int] = {}

    def words(self, text: str) -> list[str]:
        classes = self._classes
        out: list[str] = []
        cur: list[str] = []
        for ch in text:
            k = classes.get(ch)
            if k is None:
                k = classes[ch] = _char_class(ch)
            if k == 0:
                cur.append(ch)
                continue
            if cur:
                out.append("".join(cur))
                cur = []
            if k == 2:
                out.append(ch)
        if cur:
            out.append("".join(cur))
        return out

    def word_ids(self, word: str) -> list[int]:
        n = len(word)
        if n > self.max_chars:
            return [self.unk_id]
        vocab, prefix = self.vocab, self.prefix
        ids: list[int] = []
        start = 0
        while start < n:
            end = n
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else prefix + word[start:end]
                found = vocab.get(piece)
                if found is not None:
                    break
                end -= 1
            if found is None:
                return [self.unk_id]
            ids.append(found)
            start = end
        return ids

    def ids(self, text: str) -> list[int]:
        out: list[int] = []
        for w in self.words(text):
            out.extend(self.word_ids(w))
        return out


# ------------------------------------------------------------------ helpers
def ragged_flat(rt) -> tuple[np.ndarray, np.ndarray]:
    return rt.flat_values.numpy(), rt.row_splits.numpy()


def first_diff(a: list, b: list) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def ratio_line(label: str, times: dict, slow: str, fast: str, target: float | None = None) -> dict | None:
    if slow not in times or fast not in times:
        return None
    r = min(times[slow]) / min(times[fast])
    m = C.median_ratio(times, slow, fast)
    extra = f"   (target >= {target:g}x: {C.verdict(r, target, at_least=True)})" if target else ""
    print(f"  {label}: {r:.2f}x [median of rounds {m:.2f}x]{extra}")
    out = {"best_ratio": r, "median_round_ratio": m, "slow": slow, "fast": fast}
    if target:
        out.update(target=target, target_met=r >= target)
    return out


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=4, quick_repeat=2)
    C.require_data()
    t0 = time.perf_counter()
    texts, langs, how = C.load_corpus()
    order = list(range(len(texts)))
    random.Random(SEED).shuffle(order)
    texts = [texts[i] for i in order]
    langs = [langs[i] for i in order]
    if args.quick:
        texts, langs = texts[: len(texts) // 8], langs[: len(langs) // 8]
    n_sub = 500 if args.quick else 2_000
    n_words = 60_000 if args.quick else 400_000
    t_load = time.perf_counter() - t0
    nbytes = C.utf8_bytes(texts)
    nchars = sum(map(len, texts))
    print(f"corpus: {C.CORPUS.name}, shuffled (seed {SEED}){', first 1/8 (--quick)' if args.quick else ''}: "
          f"{len(texts):,} texts, {len(set(langs))} languages, {nchars:,} chars, {nbytes / 1e6:.2f} MB UTF-8")
    print(f"normalized with: {how} (load + normalize {t_load:.1f}s, not timed)")
    print(f"vocabulary: {C.MULTILINGUAL_VOCAB.name}; best of {args.repeat} interleaved rounds after one warm-up; "
          f"one thread everywhere (RAYON_NUM_THREADS={os.environ['RAYON_NUM_THREADS']}, TF intra/inter-op 1)")

    tokenizers = C.import_tokenizers()
    tfmods = import_tf()
    legacy_cls = import_legacy_bert()
    vocab = C.hf_vocab(C.MULTILINGUAL_VOCAB)
    tokens = vocab_tokens()

    t0 = time.perf_counter()
    wp = segkit.WordPiece(C.MULTILINGUAL_VOCAB, special_tokens=[])
    wp_tf = segkit.WordPiece(C.MULTILINGUAL_VOCAB, flavour="tf_text", special_tokens=[])
    print(f"segkit: two WordPiece built in {time.perf_counter() - t0:.2f}s")
    wp.encode_batch(texts[:2])
    wp_tf.encode_batch(texts[:2])
    wp.automaton.segment_batch(texts[:2], offsets=False)

    tf = tft = tf_tok = tf_word = None
    if tfmods is not None:
        tf, tft = tfmods
        t0 = time.perf_counter()
        common = dict(vocab=tokens, suffix_indicator="##", max_bytes_per_word=MAX_CHARS, token_out_type=tf.int64,
                      unknown_token="[UNK]")
        tf_tok = tft.FastWordpieceTokenizer(no_pretokenization=False, **common)
        tf_word = tft.FastWordpieceTokenizer(no_pretokenization=True, **common)
        print(f"TF Text {tft.__version__} (tensorflow {tf.__version__}): two FastWordpieceTokenizer built in "
              f"{time.perf_counter() - t0:.2f}s")
    hf = None
    if tokenizers is not None:
        from bench_wordpiece import build_hf

        hf = build_hf(tokenizers)
        print(f"HF tokenizers {tokenizers.__version__}: models.WordPiece + BertPreTokenizer")
    legacy = None
    if legacy_cls is not None:
        import transformers

        legacy = legacy_cls(str(C.MULTILINGUAL_VOCAB), do_lower_case=False, tokenize_chinese_chars=True)
        print(f"transformers {transformers.__version__}: {legacy_cls.__module__}.{legacy_cls.__name__} "
              f"(pure Python; {type(legacy.wordpiece_tokenizer).__name__})")
    naive = NaiveWordPiece(vocab, vocab["[UNK]"])

    results: dict = {
        "corpus": {"texts": len(texts), "chars": nchars, "utf8_bytes": nbytes, "normalized_with": how,
                   "shuffle_seed": SEED, "languages": len(set(langs))},
        "targets": {"vs_tf_text": TARGET_TF, "vs_hf": TARGET_HF},
        "versions": {},
    }
    if tfmods:
        results["versions"].update(tensorflow=tf.__version__, tensorflow_text=tft.__version__)
    if tokenizers:
        results["versions"]["tokenizers"] = tokenizers.__version__
    if legacy is not None:
        results["versions"]["transformers"] = transformers.__version__

    # ------------------------------------------------------------ (a) batched
    sub = texts[:n_sub]
    sub_bytes = C.utf8_bytes(sub)
    batches = [texts[i : i + BATCH] for i in range(0, len(texts), BATCH)]
    systems: dict = {
        "segkit encode_batch": lambda: wp.encode_batch(texts),
        "segkit ids-only segment_batch": lambda: wp.automaton.segment_batch(texts, offsets=False),
        "segkit encode_batch, flavour tf_text": lambda: wp_tf.encode_batch(texts),
        f"segkit encode_batch, batches of {BATCH:,}": lambda: [wp.encode_batch(b) for b in batches],
    }
    if tf_tok is not None:
        whole = tf.constant(texts)
        tf_batches = [tf.constant(b) for b in batches]
        systems.update({
            "TF Text tokenize (ids)": lambda: tf_tok.tokenize(whole),
            "TF Text tokenize_with_offsets": lambda: tf_tok.tokenize_with_offsets(whole),
            f"TF Text tokenize, batches of {BATCH:,}": lambda: [tf_tok.tokenize(b) for b in tf_batches],
            f"TF Text tokenize_with_offsets, batches of {BATCH:,}":
                lambda: [tf_tok.tokenize_with_offsets(b) for b in tf_batches],
            "TF Text tokenize incl. tf.constant(texts)": lambda: tf_tok.tokenize(tf.constant(texts)),
        })  # fmt: skip
    if hf is not None:
        systems["HF tokenizers encode_batch"] = lambda: hf.encode_batch(texts, add_special_tokens=False)
    extrapolated = set()
    if legacy is not None:
        name = f"transformers BertTokenizerLegacy* ({n_sub:,} texts)"
        systems[name] = lambda: [legacy.convert_tokens_to_ids(legacy.tokenize(t)) for t in sub]
        extrapolated.add(name)
    name = f"naive Python WordPiece* ({n_sub:,} texts)"
    systems[name] = lambda: [naive.ids(t) for t in sub]
    extrapolated.add(name)

    print(f"\n(a) end to end, batched, one thread ({len(systems)} systems; * = timed on the first {n_sub:,} "
          f"texts, {sub_bytes / 1e6:.3f} MB, and extrapolated per MB)")
    times = C.time_rounds(systems, repeat=args.repeat)
    best = {n: min(ts) for n, ts in times.items()}
    size = {n: (sub_bytes if n in extrapolated else nbytes) for n in systems}
    mbs = {n: size[n] / best[n] / 1e6 for n in systems}
    seg_mbs = mbs["segkit encode_batch"]
    C.print_table(
        ["system", "best s", "MB/s", "segkit encode_batch is x faster"],
        [[n, best[n], mbs[n], seg_mbs / mbs[n]] for n in systems],
        title="throughput, UTF-8 MB of input per second (ratios from this run)",
    )
    # Ratios of MB/s (the extrapolated rows were timed on fewer bytes).
    norm_times = {n: [t / size[n] * nbytes for t in ts] for n, ts in times.items()}
    results["batched"] = {
        n: {"seconds": best[n], "mb_per_s": mbs[n], "utf8_bytes": size[n], "extrapolated": n in extrapolated,
            "rounds": times[n]}
        for n in systems
    }  # fmt: skip
    print("\nspeedups: ratio of best times per MB [median of per-round ratios]")
    ratios: dict = {}
    if tf_tok is not None:
        tf_off = min(("TF Text tokenize_with_offsets", f"TF Text tokenize_with_offsets, batches of {BATCH:,}"),
                     key=lambda n: best[n])
        tf_ids = min(("TF Text tokenize (ids)", f"TF Text tokenize, batches of {BATCH:,}"), key=lambda n: best[n])
        ratios["segkit encode_batch vs TF Text tokenize_with_offsets"] = ratio_line(
            f"segkit encode_batch vs {tf_off} (TF's faster mode)", norm_times, tf_off, "segkit encode_batch",
            TARGET_TF)
        ratios["segkit ids-only vs TF Text tokenize"] = ratio_line(
            f"segkit ids-only vs {tf_ids} (TF's faster mode)", norm_times, tf_ids, "segkit ids-only segment_batch",
            TARGET_TF)
        ratios["segkit tf_text flavour vs TF Text tokenize_with_offsets"] = ratio_line(
            f"segkit encode_batch flavour tf_text (byte offsets) vs {tf_off}", norm_times, tf_off,
            "segkit encode_batch, flavour tf_text")
        ratios["batches of 1,000: segkit encode_batch vs TF tokenize_with_offsets"] = ratio_line(
            f"batches of {BATCH:,}: segkit encode_batch vs TF tokenize_with_offsets", norm_times,
            f"TF Text tokenize_with_offsets, batches of {BATCH:,}", f"segkit encode_batch, batches of {BATCH:,}")
    if hf is not None:
        ratios["segkit encode_batch vs HF encode_batch"] = ratio_line(
            "segkit encode_batch vs HF tokenizers encode_batch", norm_times, "HF tokenizers encode_batch",
            "segkit encode_batch", TARGET_HF)
        ratios["segkit ids-only vs HF encode_batch"] = ratio_line(
            "segkit ids-only vs HF tokenizers encode_batch", norm_times, "HF tokenizers encode_batch",
            "segkit ids-only segment_batch")
    for n in sorted(extrapolated):
        ratios[f"segkit encode_batch vs {n}"] = ratio_line(f"segkit encode_batch vs {n}", norm_times, n,
                                                           "segkit encode_batch")
    results["batched_ratios"] = {k: v for k, v in ratios.items() if v is not None}

    # ------------------------------------------------------- (b) single words
    words: list[str] = []
    for t in texts:
        words.extend(naive.words(t))
        if len(words) >= n_words:
            break
    words = words[:n_words]
    wbytes = C.utf8_bytes(words)
    print(f"\n(b) single words, no pre-tokenization: the first {len(words):,} words of the shuffled corpus "
          f"({wbytes / 1e6:.2f} MB, {wbytes / len(words):.1f} bytes/word)")
    wsys: dict = {
        "segkit segment_batch(words, pretokenize=False)":
            lambda: wp.automaton.segment_batch(words, offsets=False, pretokenize=False),
        "segkit tokenize_word per word": lambda: [wp.tokenize_word(w) for w in words],
    }  # fmt: skip
    if tf_word is not None:
        wconst = tf.constant(words)
        wsys["TF Text no_pretokenization tokenize(words)"] = lambda: tf_word.tokenize(wconst)
    if hf is not None:
        model = hf.model
        wsys["HF tokenizer.model.tokenize per word"] = lambda: [model.tokenize(w) for w in words]
    wsys["naive Python word_ids per word"] = lambda: [naive.word_ids(w) for w in words]
    wtimes = C.time_rounds(wsys, repeat=args.repeat)
    wbest = {n: min(ts) for n, ts in wtimes.items()}
    ref = wbest["segkit segment_batch(words, pretokenize=False)"]
    C.print_table(
        ["system", "best s", "MB/s", "ns/word", "segkit batched is x faster"],
        [[n, s, wbytes / s / 1e6, s / len(words) * 1e9, s / ref] for n, s in wbest.items()],
        title="single-word WordPiece (ratios from this run)",
    )
    results["words"] = {
        "count": len(words),
        "utf8_bytes": wbytes,
        "systems": {n: {"seconds": s, "mb_per_s": wbytes / s / 1e6, "ns_per_word": s / len(words) * 1e9}
                    for n, s in wbest.items()},
    }  # fmt: skip
    wr = {}
    if tf_word is not None:
        wr["segkit batched vs TF Text"] = ratio_line(
            "segkit segment_batch vs TF Text (both batched)", wtimes, "TF Text no_pretokenization tokenize(words)",
            "segkit segment_batch(words, pretokenize=False)")
    if hf is not None:
        wr["segkit tokenize_word vs HF model.tokenize (both per word)"] = ratio_line(
            "segkit tokenize_word vs HF model.tokenize (both one Python call per word)", wtimes,
            "HF tokenizer.model.tokenize per word", "segkit tokenize_word per word")
        wr["segkit batched vs HF model.tokenize"] = ratio_line(
            "segkit segment_batch vs HF model.tokenize per word", wtimes, "HF tokenizer.model.tokenize per word",
            "segkit segment_batch(words, pretokenize=False)")
    results["words"]["ratios"] = {k: v for k, v in wr.items() if v is not None}

    # ------------------------------------------------------- (c) correctness
    print("\n(c) correctness")
    corr: dict = {}
    if tf_tok is not None:
        ours = wp_tf.encode_batch(texts)
        ids_t, st_t, en_t = tf_tok.tokenize_with_offsets(tf.constant(texts))
        tid, trows = ragged_flat(ids_t)
        tst, ten = st_t.flat_values.numpy(), en_t.flat_values.numpy()
        orows = ours.row_splits
        bad_ids, bad_off = [], []
        for i in range(len(texts)):
            a, b, c, d = orows[i], orows[i + 1], trows[i], trows[i + 1]
            if b - a != d - c or not np.array_equal(ours.ids_flat[a:b], tid[c:d]):
                bad_ids.append(i)
            elif not (np.array_equal(ours._data[1][a:b], tst[c:d]) and np.array_equal(ours._data[2][a:b], ten[c:d])):
                bad_off.append(i)
        print(f"segkit flavour='tf_text' vs TF Text tokenize_with_offsets, {len(texts):,} texts "
              f"({int(orows[-1]):,} tokens): ids differ in {len(bad_ids)} texts, byte offsets (ids equal) in "
              f"{len(bad_off)}")
        examples = []
        for i in (bad_ids + bad_off)[:5]:
            a, b, c, d = orows[i], orows[i + 1], trows[i], trows[i + 1]
            ol, tl = ours.ids_flat[a:b].tolist(), tid[c:d].tolist()
            k = first_diff(ol, tl) if i in bad_ids else first_diff(
                list(zip(ours._data[1][a:b].tolist(), ours._data[2][a:b].tolist())),
                list(zip(tst[c:d].tolist(), ten[c:d].tolist())))
            print(f"  text {i} [{langs[i]}] {texts[i][:70]!r}: first difference at token {k}: segkit "
                  f"{[wp_tf.vocab.token(x) for x in ol[k:k + 3]]} vs TF {[wp_tf.vocab.token(x) for x in tl[k:k + 3]]}")
            examples.append({"text_index": i, "lang": langs[i], "text": texts[i][:200], "token": k})
        # single words
        ws = wp_tf.automaton.segment_batch(words, offsets=False, pretokenize=False)
        wt = ragged_flat(tf_word.tokenize(tf.constant(words)))
        wbad = int(sum(1 for i in range(len(words))
                       if not np.array_equal(ws[0][ws[3][i]:ws[3][i + 1]], wt[0][wt[1][i]:wt[1][i + 1]])))  # fmt: skip
        print(f"segkit flavour='tf_text' segment_batch(words, pretokenize=False) vs TF no_pretokenization: "
              f"{wbad} of {len(words):,} words differ")
        corr["tf_text_parity"] = {"texts": len(texts), "tokens": int(orows[-1]), "ids_mismatch_texts": len(bad_ids),
                                  "offsets_mismatch_texts": len(bad_off), "examples": examples,
                                  "words": len(words), "word_mismatches": wbad}  # fmt: skip
    seg = wp.encode_batch(texts)
    seg_ids = seg.ids
    if hf is not None:
        theirs = hf.encode_batch(texts, add_special_tokens=False)
        bad = sum(seg_ids[i] != theirs[i].ids for i in range(len(texts)))
        bad_off = sum(seg[i].offsets != theirs[i].offsets for i in range(len(texts)))
        print(f"segkit vs HF tokenizers encode_batch, {len(texts):,} texts: ids differ in {bad}, offsets in {bad_off}")
        corr["hf"] = {"ids_mismatch_texts": bad, "offsets_mismatch_texts": bad_off}
    naive_bad = [i for i in range(n_sub) if naive.ids(sub[i]) != seg_ids[i]]
    print(f"segkit vs naive Python WordPiece, {n_sub:,} texts: {len(naive_bad)} differ")
    corr["naive"] = {"texts": n_sub, "ids_mismatch_texts": len(naive_bad)}
    if legacy is not None:
        leg_bad = [i for i in range(n_sub) if legacy.convert_tokens_to_ids(legacy.tokenize(sub[i])) != seg_ids[i]]
        print(f"segkit vs transformers {legacy_cls.__name__}, {n_sub:,} texts: {len(leg_bad)} differ")
        for i in leg_bad[:3]:
            a = wp.tokenize(sub[i])
            b = legacy.tokenize(sub[i])
            k = first_diff(a, b)
            print(f"  text {i} [{langs[i]}]: segkit {a[k:k + 4]} vs transformers {b[k:k + 4]}")
        corr["transformers"] = {"texts": n_sub, "ids_mismatch_texts": len(leg_bad)}
    results["correctness"] = corr

    print("\nsummary (one thread, same run)")
    for key, r in results["batched_ratios"].items():
        if r and "target" in r:
            print(f"  {key}: {r['best_ratio']:.2f}x (target >= {r['target']:g}x: "
                  f"{'MET' if r['target_met'] else 'NOT MET'})")
    C.save_results("bench_peers", results, args)


if __name__ == "__main__":
    main()
