"""The ``segkit`` command line.

Examples
--------
``segkit tokenize "Hello, world!"`` prints the WordPiece tokens of the text
with the bundled default model (bert-base-uncased); ``segkit encode --format
json --max-length 128 --input corpus.txt`` encodes a file, one text per line,
with special tokens, truncation and offsets.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Iterable, Iterator, Sequence

DEFAULT_PRETRAINED = "bert-base-uncased"


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .resources import BUNDLED_VOCABULARIES

    parser = argparse.ArgumentParser(prog="segkit", description="Linear-time MaxMatch (WordPiece) tokenization for BERT.")
    parser.add_argument("--version", action="version", version=f"segkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("texts", nargs="*", help="texts (default: read lines from --input, else stdin)")
    src = common.add_mutually_exclusive_group()
    src.add_argument(
        "--pretrained",
        metavar="NAME",
        help=f"a bundled model: {', '.join(sorted(BUNDLED_VOCABULARIES))} (default {DEFAULT_PRETRAINED})",
    )
    src.add_argument("--vocab", metavar="PATH", help="a vocab.txt (one token per line), used with BERT's pipeline")
    src.add_argument("--tokenizer-json", metavar="PATH", help="a HuggingFace tokenizer.json with a WordPiece model")
    src.add_argument("--model", metavar="PATH", help="a model file written by segkit's save()")
    common.add_argument("--cased", action="store_true", help="with --vocab: do not lowercase or strip accents")
    common.add_argument("--input", "-i", metavar="FILE", action="append", default=[], help="read texts from FILE, one per line (repeatable; '-' is stdin)")
    common.add_argument("--format", "-f", choices=("tokens", "ids", "json"), default="tokens", help="space-separated tokens, ids, or JSON lines with offsets")
    common.add_argument("--batch-size", type=int, default=4096, help="texts per compiled call when reading files")
    sub.add_parser("tokenize", parents=[common], help="tokenize (normalize, pre-tokenize, WordPiece; no special tokens)")
    enc = sub.add_parser("encode", parents=[common], help="encode for a model: special tokens, truncation, padding, type ids")
    enc.add_argument("--pair-input", metavar="FILE", help="second texts of pairs, one per line (parallel to the texts)")
    enc.add_argument("--max-length", type=int, help="truncate (longest first) and/or pad to this length")
    enc.add_argument("--padding", choices=("longest", "max_length"), help="pad within each batch")
    train = sub.add_parser("train", help="train a vocabulary from text files").add_subparsers(dest="kind", required=True)
    from .training.cli_wordpiece import add_parser as _add_train_wordpiece

    _add_train_wordpiece(train)
    return parser


def _load_tokenizer(args):
    from .models import load
    from .wordpiece import WordPiece

    if args.model:
        return load(args.model)
    if args.tokenizer_json:
        return WordPiece.from_tokenizer_json(args.tokenizer_json)
    if args.vocab:
        return WordPiece.bert(args.vocab, lowercase=not args.cased)
    return WordPiece.from_pretrained(args.pretrained or DEFAULT_PRETRAINED)


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
    if args.command == "train":
        return args.run(args)
    from .storage import ModelFileError
    from .vocab import VocabularyError

    try:
        wp = _load_tokenizer(args)
    except (FileNotFoundError, ValueError, VocabularyError, ModelFileError) as e:
        print(f"segkit: error: {e}", file=sys.stderr)
        return 2
    if args.batch_size < 1:
        print(f"segkit: error: --batch-size must be at least 1, found {args.batch_size}", file=sys.stderr)
        return 2
    if args.texts and args.input:
        print("segkit: error: give texts as arguments or with --input, not both", file=sys.stderr)
        return 2
    encode = args.command == "encode"
    texts: Iterable = args.texts if args.texts else _lines(args.input or ["-"])
    if encode and args.pair_input:
        texts = _zip_strict(texts, _lines([args.pair_input]))
    progress = None
    if args.input and sys.stderr.isatty():
        from tqdm import tqdm

        progress = tqdm(unit=" texts", file=sys.stderr)
    out = sys.stdout
    itos = wp.vocab.id_to_token
    try:
        for batch in _batches(texts, args.batch_size):
            if encode:
                enc = wp.encode_batch(
                    batch,
                    max_length=args.max_length,
                    truncation=args.max_length is not None,
                    padding=args.padding or False,
                )
            else:
                enc = wp.encode_batch(batch, add_special_tokens=False)
            for item, e in zip(batch, enc):
                ids = e.ids
                if args.format == "tokens":
                    out.write(" ".join(itos[i] for i in ids) + "\n")
                elif args.format == "ids":
                    out.write(" ".join(map(str, ids)) + "\n")
                else:
                    record = {"text": item} if isinstance(item, str) else {"text": item[0], "pair": item[1]}
                    record.update(ids=ids, tokens=e.tokens, offsets=e.offsets)
                    if encode:
                        record.update(
                            type_ids=e.type_ids,
                            attention_mask=e.attention_mask,
                            special_tokens_mask=e.special_tokens_mask,
                            word_ids=e.word_ids,
                        )
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
            if progress is not None:
                progress.update(len(batch))
    except (_InputError, ValueError) as e:
        print(f"segkit: error: {e}", file=sys.stderr)
        return 2
    finally:
        if progress is not None:
            progress.close()
    return 0


def _zip_strict(a: Iterable[str], b: Iterable[str]) -> Iterator[tuple[str, str]]:
    ia, ib = iter(a), iter(b)
    n = 0
    while True:
        x = next(ia, None)
        y = next(ib, None)
        if x is None and y is None:
            return
        if x is None or y is None:
            raise _InputError(f"--pair-input has {'more' if x is None else 'fewer'} lines than the texts (after line {n})")
        n += 1
        yield x, y


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
