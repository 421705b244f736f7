"""``segkit train bpe``: byte-level BPE from text files.

``segkit train bpe --vocab-size 32000 --special "<|endoftext|>" corpus.txt -o out/``
writes ``out/vocab.json``, ``out/merges.txt`` (GPT-2's format) and
``out/tokenizer.json`` (HuggingFace).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .options import special_tokens, trainer_options


def add_parser(train_sub) -> None:
    """Add the ``bpe`` command to the ``train`` subparsers."""
    p = train_sub.add_parser(
        "bpe", help="train byte-level BPE (GPT-2 pre-tokenization)",
        description="Train byte-level BPE on FILEs (each file is one document) and write vocab.json, "
        "merges.txt (GPT-2 format) and tokenizer.json (HuggingFace) to DIR.",
    )
    p.add_argument("--vocab-size", type=int, required=True, metavar="N", help="256 + special tokens + merges")
    trainer_options(p, special_default=[], special_help="splits the text, never merged, ids 256, 257, ...")
    p.add_argument("--pattern", default=None, help="pre-tokenization regex (default: GPT-2's)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..training.bpe import train_bpe
    from .io import staged_output

    result = train_bpe(
        [Path(f) for f in args.files], args.vocab_size, special_tokens(args), pattern=args.pattern,
        num_threads=args.threads, show_progress=args.progress, errors=args.errors,
    )
    out = Path(args.output)
    with staged_output(out) as stage:
        result.save(stage)
        result.to_tokenizer_json(stage / "tokenizer.json")
    print(f"{len(result.vocab)} tokens ({len(result.merges)} merges) written to {out}/"
          "{vocab.json, merges.txt, tokenizer.json}", file=sys.stderr)
    return 0
