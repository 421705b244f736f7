"""``segkit train wordpiece``: train a WordPiece vocabulary from files.

``segkit train wordpiece --vocab-size 30000 corpus.txt more.txt -o out/``
writes ``out/vocab.txt`` (one token per line, id = line number - 1) and
``out/wordpiece.segkit`` (the ready tokenizer, for :func:`segkit.load` or
``segkit tokenize --model``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

MODEL_FILE = "wordpiece.segkit"


def add_parser(train_sub) -> None:
    """Add the ``wordpiece`` command to the ``train`` subparsers."""
    p = train_sub.add_parser("wordpiece", help="train a WordPiece (BERT) vocabulary")
    p.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files")
    p.add_argument("--vocab-size", type=int, default=30522, help="tokens wanted, special tokens included (default 30522)")
    p.add_argument("--cased", action="store_true", help="keep case and accents (default: lowercase and strip accents)")
    p.add_argument("--min-frequency", type=int, default=0, help="stop when the best pair occurs fewer times")
    p.add_argument("--limit-alphabet", type=int, default=None, help="keep only the N most frequent characters")
    p.add_argument("--special-tokens", default="[PAD],[UNK],[CLS],[SEP],[MASK]", help="comma-separated (default: BERT's)")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output folder (created if needed)")
    p.add_argument("--threads", type=int, default=1, help="threads for counting words (default 1)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .wordpiece import train_wordpiece

    out = Path(args.output)
    if out.exists() and not out.is_dir():
        print(f"segkit: error: output {out} exists and is not a folder", file=sys.stderr)
        return 2
    specials = [t for t in args.special_tokens.split(",")]
    # vocab.txt holds one token per line, and readers strip trailing
    # whitespace: a special token it cannot give back is refused here,
    # before training (the Python API writes such tokens to tokenizer.json
    # and model files, which hold any token).
    from ..vocab import vocab_txt_problem

    for k, t in enumerate(specials):
        problem = vocab_txt_problem(t, first=k == 0)
        if problem:
            raise ValueError(
                f"special token {t!r} cannot be written to vocab.txt: {problem}; use other special tokens, or "
                "train with segkit.train_wordpiece(...) in Python and save with save_tokenizer_json() or save()"
            )
    # errors are reported by segkit.training.cli.run, as for every trainer
    wp = train_wordpiece(
        [Path(f) for f in args.files],
        args.vocab_size,
        lowercase=not args.cased,
        special_tokens=specials,
        min_frequency=args.min_frequency,
        limit_alphabet=args.limit_alphabet,
        num_threads=args.threads,
        show_progress=False if args.quiet else None,
    )
    out.mkdir(parents=True, exist_ok=True)
    vocab = out / "vocab.txt"
    tmp = vocab.with_name(vocab.name + ".tmp")
    tmp.write_text("".join(t + "\n" for t in wp.vocab.tokens), encoding="utf-8")
    os.replace(tmp, vocab)
    wp.save(out / MODEL_FILE)
    print(f"{len(wp.vocab)} tokens: {vocab} and {out / MODEL_FILE}", file=sys.stderr)
    return 0
