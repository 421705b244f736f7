"""``segkit tokenize`` and ``segkit encode``: WordPiece over texts or files.

``segkit tokenize "Hello, world!"`` prints the WordPiece tokens of the text
with the bundled default model (bert-base-uncased); ``segkit encode --format
json --max-length 128 --input corpus.txt`` encodes a file, one text per line,
with special tokens, truncation and offsets.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Iterable

from .io import CliError, InputError, Output, batches, lines, os_message, reading_stdin_note, zip_strict

DEFAULT_PRETRAINED = "bert-base-uncased"

#: Models ``--model`` takes by name (when no file has that name):
#: name -> (module, class), built with no arguments.
NAMED_MODELS = {
    "rwkv-world": ("segkit.presets.maxmatch", "RWKVWorld"),
}


def add_parsers(sub) -> None:
    """Add ``tokenize`` and ``encode`` to the ``segkit`` parser."""
    from ..models.bundled import BUNDLED_VOCABULARIES

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
    src.add_argument("--model", metavar="PATH|NAME",
                     help=f"a model file written by segkit's save(), or a named model: {', '.join(NAMED_MODELS)}, "
                     "gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base, o200k_harmony "
                     "(byte-level: tokenize only; tokens are printed as "
                     "UTF-8 with \\x escapes where they cut a character, BPE tokens in GPT-2's byte-level "
                     "spelling)")
    common.add_argument("--cased", action="store_true", help="with --vocab: do not lowercase or strip accents")
    common.add_argument("--input", "-i", metavar="FILE", action="append", default=[], help="read texts from FILE, one per line (repeatable; '-' is stdin)")
    common.add_argument("--format", "-f", choices=("tokens", "ids", "json"), default="tokens", help="space-separated tokens, ids, or JSON lines with offsets")
    common.add_argument("--batch-size", type=int, default=4096, help="texts per compiled call when reading files")
    sub.add_parser(
        "tokenize", parents=[common], help="tokenize (normalize, pre-tokenize, WordPiece; no special tokens)",
        description="WordPiece-tokenize texts (BERT's normalization and pre-tokenization; no special tokens) "
        "with a bundled model (default bert-base-uncased), a vocab.txt, a tokenizer.json or a saved segkit "
        "model.  Texts come from the arguments, else from --input files, else from standard input, one per line.",
    )
    enc = sub.add_parser(
        "encode", parents=[common], help="encode for a model: special tokens, truncation, padding, type ids",
        description="Encode texts (or pairs, with --pair-input) for a BERT-style model: the tokens of 'segkit "
        "tokenize' plus the template's special tokens, truncation and padding; --format json adds type ids, "
        "attention masks and offsets.  Texts come as for 'segkit tokenize'.",
    )
    enc.add_argument("--pair-input", metavar="FILE", help="second texts of pairs, one per line (parallel to the texts)")
    enc.add_argument("--max-length", type=int, help="truncate (longest first) and/or pad to this length")
    enc.add_argument("--padding", choices=("longest", "max_length"), help="pad within each batch")


def load_tokenizer(args):
    from ..models.saving import load
    from ..presets.wordpiece import WordPiece

    if args.model:
        from .tokenize_bpe import is_bpe_name

        if is_bpe_name(args.model) and not os.path.exists(args.model):
            from ..presets.bpe import BPE

            return BPE.from_pretrained(args.model)
        named = NAMED_MODELS.get(args.model)
        if named is not None and not os.path.exists(args.model):
            import importlib

            return getattr(importlib.import_module(named[0]), named[1])()
        model = load(args.model)
        if _is_maxmatch(model) or type(model).__name__ == "BPE":
            return model
        if not isinstance(model, WordPiece):
            raise CliError(
                f"{args.model}: is a {type(model).__name__} model; tokenize and encode need a WordPiece model"
            )
        return model
    if args.tokenizer_json:
        return WordPiece.from_tokenizer_json(args.tokenizer_json)
    if args.vocab:
        return WordPiece.bert(args.vocab, lowercase=not args.cased)
    return WordPiece.from_pretrained(args.pretrained or DEFAULT_PRETRAINED)


def run(args, out: Output) -> int:
    """``segkit tokenize`` and ``segkit encode``."""
    from ..models.files import ModelFileError
    from ..models.vocabulary import VocabularyError

    try:
        wp = load_tokenizer(args)
    except OSError as e:
        raise CliError(os_message(e)) from None
    except (ValueError, VocabularyError, ModelFileError) as e:
        raise CliError(str(e)) from None
    if args.batch_size < 1:
        raise CliError(f"--batch-size must be at least 1, found {args.batch_size}")
    if args.texts and args.input:
        raise CliError("give texts as arguments or with --input, not both")
    encode = args.command == "encode"
    if type(wp).__name__ == "BPE":
        from . import tokenize_bpe

        return tokenize_bpe.run(wp, args, out)
    if _is_maxmatch(wp):
        if encode:
            raise CliError(f"{type(wp).__name__} has no special tokens, truncation or padding: use 'segkit tokenize'")
        return _run_maxmatch(args, out, wp)
    if not args.texts and not args.input:
        reading_stdin_note()
    texts: Iterable = args.texts if args.texts else lines(args.input or ["-"])
    if encode and args.pair_input:
        texts = zip_strict(texts, lines([args.pair_input]))
    progress = None
    if args.input and sys.stderr.isatty():
        from tqdm import tqdm

        progress = tqdm(unit=" texts", file=sys.stderr)
    itos = wp.vocab.id_to_token
    try:
        for batch in batches(texts, args.batch_size):
            with out.sigint_deferred():
                if encode:
                    enc = wp.encode_batch(
                        batch,
                        max_length=args.max_length,
                        truncation=args.max_length is not None,
                        padding=args.padding or False,
                    )
                else:
                    enc = wp.encode_batch(batch, add_special_tokens=False)
            written = []
            for item, e in zip(batch, enc):
                ids = e.ids
                if args.format == "tokens":
                    written.append(" ".join(itos[i] for i in ids) + "\n")
                elif args.format == "ids":
                    written.append(" ".join(map(str, ids)) + "\n")
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
                    written.append(json.dumps(record, ensure_ascii=False) + "\n")
            out.write(written)
            if progress is not None:
                progress.update(len(batch))
    except InputError as e:
        if not out.texts:
            raise
        raise CliError(f"{e}; the output holds the results of the {out.texts} texts before it") from None
    except ValueError as e:
        raise CliError(str(e)) from None
    finally:
        if progress is not None:
            progress.close()
    return 0


def _is_maxmatch(model) -> bool:
    from ..presets.maxmatch import MaxMatch

    return isinstance(model, MaxMatch)


def _shown(token) -> str:
    """A token as text: str as it is, bytes as UTF-8 with ``\\xNN`` where
    they are not whole characters."""
    return token if isinstance(token, str) else token.decode("utf-8", "backslashreplace")


def _run_maxmatch(args, out: Output, tok) -> int:
    """``segkit tokenize`` with a :class:`segkit.MaxMatch` (RWKV World):
    the whole line is matched, no special tokens."""
    if not args.texts and not args.input:
        reading_stdin_note()
    texts: Iterable = args.texts if args.texts else lines(args.input or ["-"])
    by_id = tok._table.by_id
    try:
        for batch in batches(texts, args.batch_size):
            with out.sigint_deferred():
                if args.format == "json":
                    ids, starts, ends, rows = tok.encode_batch_with_offsets(batch)
                    ids, starts, ends, rows = ids.tolist(), starts.tolist(), ends.tolist(), rows.tolist()
                    lists = [ids[a:b] for a, b in zip(rows[:-1], rows[1:])]
                else:
                    lists = tok.encode_batch(batch)
            written = []
            for t, item in enumerate(batch):
                row = lists[t]
                if args.format == "tokens":
                    written.append(" ".join(_shown(by_id[i]) if by_id[i] is not None else f"<{i}>" for i in row) + "\n")
                elif args.format == "ids":
                    written.append(" ".join(map(str, row)) + "\n")
                else:
                    a, b = rows[t], rows[t + 1]
                    record = {"text": item, "ids": row,
                              "tokens": [_shown(by_id[i]) if by_id[i] is not None else None for i in row],
                              "offsets": [list(p) for p in zip(starts[a:b], ends[a:b])]}
                    written.append(json.dumps(record, ensure_ascii=False) + "\n")
            out.write(written)
    except InputError as e:
        if not out.texts:
            raise
        raise CliError(f"{e}; the output holds the results of the {out.texts} texts before it") from None
    except ValueError as e:
        raise CliError(str(e)) from None
    return 0
