"""``segkit train ...``: the training commands of the command line.

``segkit train bpe --vocab-size 32000 --special "<|endoftext|>" corpus.txt -o out/``
trains byte-level BPE on the files and writes ``out/vocab.json``,
``out/merges.txt`` and ``out/tokenizer.json``.

Each trainer is a module of its own (``train_bpe``, ``train_wordpiece``)
with ``add_parser(train_sub)``, which adds its sub-command with a ``func``
default: a function of the parsed arguments returning the exit status.
"""

from __future__ import annotations

import argparse
import sys


def add_train_commands(sub: "argparse._SubParsersAction") -> None:
    """Add ``train`` and its sub-commands to the ``segkit`` parser."""
    train = sub.add_parser("train", help="train a vocabulary from text files",
                           description="Train a vocabulary from text files: byte-level BPE or WordPiece.")
    train_sub = train.add_subparsers(dest="trainer", required=True)
    from . import train_bpe, train_wordpiece

    train_bpe.add_parser(train_sub)
    train_wordpiece.add_parser(train_sub)


def run(args: argparse.Namespace) -> int:
    """Run a parsed ``segkit train ...`` command; errors print ``segkit: error: ...`` and return 2."""
    import os

    from ..training.corpus import CorpusError
    from .io import one_line
    from .options import cli_words

    files = [f for f in args.files if os.path.isfile(f)]
    empty = [f for f in files if os.path.getsize(f) == 0]
    for f in empty:
        print(f"segkit: warning: {f} is empty", file=sys.stderr)
    if empty and len(empty) == len(args.files):
        print("segkit: warning: the input holds no text: the vocabulary will hold only the initial tokens",
              file=sys.stderr)
    from .io import check_output_folder

    check_output_folder(args.output, probe=True)  # before training, not after
    try:
        return args.func(args)
    except MemoryError:
        print("segkit: error: not enough memory for this training run (a smaller --vocab-size or fewer "
              "--threads need less)", file=sys.stderr)
        return 2
    except (OSError, ValueError, TypeError, OverflowError, CorpusError) as e:
        print(f"segkit: error: {one_line(cli_words(str(e)))}", file=sys.stderr)
        return 2
