"""WordPiece training: segkit.train_wordpiece vs HuggingFace WordPieceTrainer.

Same process, same input, one thread each (``RAYON_NUM_THREADS=1`` is set
before ``tokenizers`` is imported): the texts of
``../shared/data/corpus/multilingual.jsonl`` (10.8 MB) as documents, BERT
normalization (lowercase) + BertPreTokenizer, 5 special tokens, at 8,000 and
30,000 tokens.  Each system is warmed up once, then timed over interleaved
rounds; the best time of each is kept and the ratio printed (target: segkit
>= 5x HF).  The vocabularies are compared too (set difference; at 30,000 HF
itself differs from run to run, see docs/training_wordpiece.rst).

Run from the repository root: ``python benchmarks/bench_train_wordpiece.py [--quick]``
(``--quick``: 8,000 tokens only, 2 rounds).
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import json

from segkit.training import train_wordpiece

TARGET = 5.0
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def hf_trainer(tokenizers, texts, vocab_size):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    def run():
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False)
        tok.train_from_iterator(texts, trainer)
        return tok.get_vocab()

    return run


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=3, quick_repeat=2)
    C.require_data()
    tokenizers = C.import_tokenizers()
    with open(C.CORPUS, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    mb = C.utf8_bytes(texts) / 1e6
    print(f"corpus: {len(texts)} documents, {mb:.1f} MB of UTF-8")
    results = {"corpus_mb": mb, "rows": {}}
    rows = []
    for vocab_size in (8000,) if args.quick else (8000, 30000):
        systems = {"segkit": lambda n=vocab_size: train_wordpiece(texts, n, show_progress=False)}
        if tokenizers is not None:
            systems["hf"] = hf_trainer(tokenizers, texts, vocab_size)
        print(f"\nvocab_size {vocab_size}")
        times = C.time_rounds(systems, repeat=args.repeat)
        best = {n: min(t) for n, t in times.items()}
        row = {"segkit_s": best["segkit"]}
        if "hf" in best:
            ours = set(systems["segkit"]().vocab.tokens)
            theirs = set(systems["hf"]())
            row.update(
                hf_s=best["hf"],
                ratio=best["hf"] / best["segkit"],
                median_ratio=C.median_ratio(times, "hf", "segkit"),
                tokens_only_segkit=len(ours - theirs),
                tokens_only_hf=len(theirs - ours),
            )
            rows.append(
                [vocab_size, best["segkit"], best["hf"], row["ratio"], row["median_ratio"],
                 f"{len(ours - theirs)}/{len(theirs - ours)}", C.verdict(row["ratio"], TARGET, at_least=True)]
            )
        results["rows"][vocab_size] = row
    if rows:
        C.print_table(
            ["vocab", "segkit s", "HF s", "HF/segkit", "median", "only ours/only HF", f">= {TARGET}x"],
            rows,
            title="train_wordpiece vs HF WordPieceTrainer (best of rounds, 1 thread)",
        )
    # counting on 1 vs 2 threads: python benchmarks/bench_train.py --only threads (both trainers)
    C.save_results("bench_train_wordpiece", results, args)


if __name__ == "__main__":
    main()
