"""``segkit train ...``: the training commands of the command line.

``segkit train bpe --vocab-size 32000 --special "<|endoftext|>" corpus.txt -o out/``
trains byte-level BPE on the files and writes ``out/vocab.json``,
``out/merges.txt`` and ``out/tokenizer.json``.

To add a trainer, write ``_add_<name>(train_sub)`` that adds a sub-command
whose ``func`` default is a function of the parsed arguments returning the
exit status, and call it from :func:`add_train_commands`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_train_commands(sub: "argparse._SubParsersAction") -> None:
    """Add ``train`` and its sub-commands to the ``segkit`` parser."""
    train = sub.add_parser("train", help="train a vocabulary from text files")
    train_sub = train.add_subparsers(dest="trainer", required=True)
    _add_bpe(train_sub)
    from .cli_wordpiece import add_parser as _add_wordpiece

    _add_wordpiece(train_sub)


def _progress_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None,
        help="progress bars on stderr (default: when stderr is a terminal)",
    )


def _add_bpe(train_sub) -> None:
    p = train_sub.add_parser(
        "bpe", help="byte-level BPE (GPT-2 pre-tokenization)",
        description="Train byte-level BPE on FILEs (each file is one document) and write vocab.json, "
        "merges.txt (GPT-2 format) and tokenizer.json (HuggingFace) to DIR.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files")
    p.add_argument("--vocab-size", type=int, required=True, metavar="N", help="256 + special tokens + merges")
    p.add_argument("--special", action="append", default=[], metavar="TOKEN",
                   help="a special token (repeatable): splits the text, never merged, ids 256, 257, ...")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write the files to")
    p.add_argument("--pattern", default=None, help="pre-tokenization regex (default: GPT-2's)")
    p.add_argument("--threads", type=int, default=1, help="threads for counting (default 1)")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict",
                   help="invalid UTF-8: stop with an error (default) or replace with U+FFFD")
    _progress_flag(p)
    p.set_defaults(func=_run_bpe)


def _run_bpe(args: argparse.Namespace) -> int:
    from .bpe import train_bpe

    result = train_bpe(
        [Path(f) for f in args.files], args.vocab_size, args.special, pattern=args.pattern,
        num_threads=args.threads, show_progress=args.progress, errors=args.errors,
    )
    out = Path(args.output)
    result.save(out)
    result.to_tokenizer_json(out / "tokenizer.json")
    print(f"{len(result.vocab)} tokens ({len(result.merges)} merges) written to {out}/"
          "{vocab.json, merges.txt, tokenizer.json}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run a parsed ``segkit train ...`` command; errors print ``segkit: error: ...`` and return 2."""
    from .corpus import CorpusError

    try:
        return args.func(args)
    except (OSError, ValueError, TypeError, CorpusError) as e:
        print(f"segkit: error: {e}", file=sys.stderr)
        return 2
