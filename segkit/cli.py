"""The ``segkit`` command line.

Examples
--------
``segkit tokenize "Hello, world!"`` prints the WordPiece tokens of the text
with the bundled default vocabulary; ``segkit tokenize --format ids --input
corpus.txt`` tokenizes a file, one text per line.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Iterable, Iterator, Sequence

DEFAULT_PRETRAINED = "bert-base-multilingual-cased"


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .resources import BUNDLED_VOCABULARIES

    parser = argparse.ArgumentParser(prog="segkit", description="Linear-time MaxMatch (WordPiece) tokenization.")
    parser.add_argument("--version", action="version", version=f"segkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    tok = sub.add_parser("tokenize", help="tokenize texts given as arguments, on stdin or in files (one text per line)")
    tok.add_argument("texts", nargs="*", help="texts to tokenize (default: read lines from --input or stdin)")
    src = tok.add_mutually_exclusive_group()
    src.add_argument("--vocab", metavar="PATH", help="a vocab.txt file (one token per line)")
    src.add_argument(
        "--pretrained",
        metavar="NAME",
        help=f"a bundled vocabulary: {', '.join(sorted(BUNDLED_VOCABULARIES))} (default {DEFAULT_PRETRAINED})",
    )
    tok.add_argument("--input", "-i", metavar="FILE", action="append", default=[], help="read texts from FILE, one per line (repeatable; '-' is stdin)")
    tok.add_argument("--format", "-f", choices=("tokens", "ids", "json"), default="tokens", help="output: space-separated tokens, ids, or JSON lines with offsets")
    tok.add_argument("--suffix-indicator", default="##", help="continuation prefix of the vocabulary (default ##)")
    tok.add_argument("--unk-token", default="[UNK]", help="unknown token (default [UNK])")
    tok.add_argument("--batch-size", type=int, default=4096, help="texts per compiled call when reading files")
    return parser


class _InputError(Exception):
    pass


def _lines(paths: Sequence[str]) -> Iterator[str]:
    for p in paths:
        if p == "-":
            stream = sys.stdin.buffer
            name = "<stdin>"
        else:
            try:
                stream = open(p, "rb")
            except FileNotFoundError:
                raise _InputError(f"input file not found: {p}") from None
            except IsADirectoryError:
                raise _InputError(f"input is a directory, not a file: {p}") from None
            name = p
        try:
            for lineno, raw in enumerate(stream, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise _InputError(
                        f"{name}: line {lineno}: not valid UTF-8 (byte {raw[e.start]:#04x} at column {e.start + 1})"
                    ) from None
                if lineno == 1:
                    line = line.lstrip("\ufeff")
                yield line.rstrip("\n").rstrip("\r")
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()


def _batches(items: Iterable[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for x in items:
        batch.append(x)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``segkit`` command."""
    args = _build_parser().parse_args(argv)
    from .resources import bundled_vocabulary
    from .vocab import VocabularyError
    from .wordpiece import WordPiece

    try:
        vocab = args.vocab if args.vocab else bundled_vocabulary(args.pretrained or DEFAULT_PRETRAINED)
        wp = WordPiece(vocab, suffix_indicator=args.suffix_indicator, unk_token=args.unk_token)
    except (FileNotFoundError, ValueError, VocabularyError) as e:
        print(f"segkit: error: {e}", file=sys.stderr)
        return 2
    if args.batch_size < 1:
        print(f"segkit: error: --batch-size must be at least 1, found {args.batch_size}", file=sys.stderr)
        return 2
    if args.texts and args.input:
        print("segkit: error: give texts as arguments or with --input, not both", file=sys.stderr)
        return 2
    texts: Iterable[str] = args.texts if args.texts else _lines(args.input or ["-"])
    progress = None
    if args.input and sys.stderr.isatty():
        from tqdm import tqdm

        progress = tqdm(unit=" texts", file=sys.stderr)
    out = sys.stdout
    itos = wp.vocab.id_to_token
    try:
        for batch in _batches(texts, args.batch_size):
            enc = wp.encode_batch(batch)
            for text, e in zip(batch, enc):
                if args.format == "tokens":
                    out.write(" ".join(itos[i] for i in e.ids) + "\n")
                elif args.format == "ids":
                    out.write(" ".join(map(str, e.ids)) + "\n")
                else:
                    record = {"text": text, "ids": e.ids, "tokens": e.tokens, "offsets": e.offsets}
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            if progress is not None:
                progress.update(len(batch))
    except _InputError as e:
        print(f"segkit: error: {e}", file=sys.stderr)
        return 2
    if progress is not None:
        progress.close()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
