"""``segkit train wordpiece``: train a WordPiece vocabulary from files.

``segkit train wordpiece --vocab-size 30000 corpus.txt more.txt -o out/``
writes ``out/vocab.txt`` (one token per line, id = line number - 1),
``out/tokenizer.json`` (HuggingFace ``tokenizers`` and transformers load it)
and ``out/wordpiece.segkit`` (the ready tokenizer, for :func:`segkit.load` or
``segkit tokenize --model``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .io import staged_output
from .options import special_tokens, trainer_options

MODEL_FILE = "wordpiece.segkit"
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def add_parser(train_sub) -> None:
    """Add the ``wordpiece`` command to the ``train`` subparsers."""
    p = train_sub.add_parser(
        "wordpiece", help="train a WordPiece (BERT) vocabulary",
        description="Train a WordPiece vocabulary on FILEs with BERT's normalization and pre-tokenization "
        "(HuggingFace WordPieceTrainer's rules) and write vocab.txt, tokenizer.json and "
        f"{MODEL_FILE} (a ready segkit tokenizer) to DIR.",
    )
    p.add_argument("--vocab-size", type=int, default=30522, metavar="N",
                   help="tokens wanted, special tokens included (default 30522)")
    trainer_options(p, special_default=BERT_SPECIALS,
                    special_help="default: " + " ".join(BERT_SPECIALS) + "; given once, it replaces them")
    p.add_argument("--cased", action="store_true", help="keep case and accents (default: lowercase and strip accents)")
    p.add_argument("--min-frequency", type=int, default=0, metavar="N", help="stop when the best pair occurs fewer times")
    p.add_argument("--limit-alphabet", type=int, default=None, metavar="N", help="keep only the N most frequent characters")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..training.wordpiece import train_wordpiece

    out = Path(args.output)
    specials = special_tokens(args)
    # vocab.txt holds one token per line, and readers strip trailing
    # whitespace: a special token it cannot give back is refused here,
    # before training (the Python API writes such tokens to tokenizer.json
    # and model files, which hold any token).
    from ..models.vocabulary import vocab_txt_problem

    for k, t in enumerate(specials):
        problem = vocab_txt_problem(t, first=k == 0)
        if problem:
            raise ValueError(
                f"special token {t!r} cannot be written to vocab.txt: {problem}; use other special tokens, or "
                "train with segkit.train_wordpiece(...) in Python and save with save_tokenizer_json() or save()"
            )
    # errors are reported by segkit.cli.train.run, as for every trainer
    wp = train_wordpiece(
        [Path(f) for f in args.files],
        args.vocab_size,
        lowercase=not args.cased,
        special_tokens=specials,
        min_frequency=args.min_frequency,
        limit_alphabet=args.limit_alphabet,
        num_threads=args.threads,
        show_progress=args.progress,
        errors=args.errors,
    )
    with staged_output(out) as stage:
        (stage / "vocab.txt").write_text("".join(t + "\n" for t in wp.vocab.tokens), encoding="utf-8")
        wp.save_tokenizer_json(stage / "tokenizer.json")
        wp.save(stage / MODEL_FILE)
    print(f"{len(wp.vocab)} tokens written to {out}/{{vocab.txt, tokenizer.json, {MODEL_FILE}}}", file=sys.stderr)
    return 0
