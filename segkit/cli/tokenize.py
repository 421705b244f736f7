"""``segkit tokenize`` and ``segkit encode``: a model's tokens of texts or files.

``segkit tokenize "Hello, world!"`` prints the WordPiece tokens of the text
with the bundled default model (bert-base-uncased); ``segkit tokenize --model
cl100k_base ...`` the BPE tokens (see :mod:`segkit.cli.models` for what
``--model`` takes); ``segkit encode --format
json --max-length 128 --input corpus.txt`` encodes a file, one text per line,
with special tokens, truncation and offsets.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Iterable

from .io import (CliError, InputError, Output, batches, check_inputs, check_texts_utf8, lines, os_message,
                 reading_stdin_note, shown_path, stdin_stream, zip_strict)

DEFAULT_PRETRAINED = "bert-base-uncased"


def add_parsers(sub) -> None:
    """Add ``tokenize`` and ``encode`` to the ``segkit`` parser."""
    from .models import bundled_names

    names = ", ".join(bundled_names())
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("texts", nargs="*", help="texts (default: read lines from --input, else stdin)")
    src = common.add_mutually_exclusive_group()
    src.add_argument("--model", "-m", metavar="NAME|PATH",
                     help=f"a bundled model by name: {names} (default {DEFAULT_PRETRAINED}); or any tokenizer "
                     "file or folder, recognised by its content: a HuggingFace tokenizer.json or model folder, "
                     "a tiktoken file, a SentencePiece .model, a Mistral Tekken .json, an RWKV vocabulary, a "
                     "vocab.txt, or a model file written by segkit's save().  A bundled name wins over a file of "
                     "that name in the current folder: write ./NAME for the file")
    src.add_argument("--pretrained", metavar="NAME",
                     help="the same as --model NAME (deprecated alias, kept for scripts that use it)")
    src.add_argument("--vocab", metavar="PATH", help="a vocab.txt (one token per line), used with BERT's pipeline")
    src.add_argument("--tokenizer-json", metavar="PATH",
                     help="a HuggingFace tokenizer.json (WordPiece or BPE model) or a model folder holding one")
    common.add_argument("--cased", action="store_true", help="with --vocab: do not lowercase or strip accents")
    common.add_argument("--input", "-i", metavar="FILE", action="append", default=[], help="read texts from FILE, one per line (repeatable; '-' is stdin)")
    common.add_argument("--format", "-f", choices=("tokens", "ids", "json"), default="tokens", help="space-separated tokens, ids, or JSON lines with offsets")
    common.add_argument("--batch-size", type=int, default=4096, help="texts per compiled call when reading files")
    tok = sub.add_parser(
        "tokenize", parents=[common], help="split texts into tokens (WordPiece, BPE, SentencePiece or RWKV World; no special tokens)",
        description="Split texts into the tokens of a model, one output line per text: a BERT WordPiece model "
        "(the default, bert-base-uncased: BERT's normalization and pre-tokenization, then WordPiece), a "
        "byte-level BPE encoding (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base, o200k_harmony: the pattern's pre-tokenization, "
        "then BPE, ids as tiktoken's; tokens printed in GPT-2's byte-level spelling, 'Ġworld' for ' world'), "
        "RWKV World (greedy longest match over bytes; tokens as UTF-8 with \\x escapes where they cut a "
        "character), or any tokenizer file or folder --model names (a tokenizer.json, a SentencePiece model: "
        "its pieces).  No special tokens are added.  Texts come from the "
        "arguments, else from --input files, else from standard input, one per line.",
    )
    tok.add_argument("--allowed-special", metavar="all|none|TOKEN,...", default="none",
                     help="BPE models: special tokens in the text encoded as special tokens (all, or a comma "
                     "list such as '<|endoftext|>'); the default none encodes them as ordinary text, as "
                     "tiktoken's encode_ordinary does")
    enc = sub.add_parser(
        "encode", parents=[common], help="encode for a BERT model: special tokens, truncation, padding, type ids",
        description="Encode texts (or pairs, with --pair-input) for a BERT-style WordPiece model: the tokens of "
        "'segkit tokenize' plus the template's special tokens, truncation and padding; --format json adds type "
        "ids, attention masks and offsets.  Texts come as for 'segkit tokenize'.",
    )
    enc.add_argument("--pair-input", metavar="FILE", help="second texts of pairs, one per line (parallel to the texts)")
    enc.add_argument("--max-length", type=int, help="truncate (longest first) and/or pad to this length")
    enc.add_argument("--padding", choices=("longest", "max_length"), help="pad within each batch")


def choose_model(args):
    """The model the arguments name, decided before anything loads."""
    from .models import ModelChoice, choose

    if args.model is not None:
        return choose(args.model, "--model")
    if args.pretrained is not None:
        return choose(args.pretrained, "--pretrained")
    if args.tokenizer_json is not None:
        return ModelChoice("tokenizer-json", args.tokenizer_json)
    if args.vocab is not None:
        return ModelChoice("vocab", args.vocab)
    return ModelChoice("bert", DEFAULT_PRETRAINED)


def load_tokenizer(args, choice=None):
    from ..presets.wordpiece import WordPiece
    from . import models

    choice = choice or choose_model(args)
    if choice.kind == "tokenizer-json":
        from ..presets.loader import from_tokenizer_json

        return from_tokenizer_json(choice.value)
    if choice.kind == "vocab":
        return WordPiece.bert(choice.value, lowercase=not args.cased)
    return models.load(choice)


def check_arguments(args) -> None:
    """Everything that can be checked without the model, so that a typo
    fails at once instead of after the model loads."""
    if args.batch_size < 1:
        raise CliError(f"--batch-size must be at least 1, found {args.batch_size}")
    if args.texts and args.input:
        raise CliError("give texts as arguments or with --input, not both")
    check_texts_utf8(args.texts)
    check_inputs(args.input)
    if getattr(args, "pair_input", None):
        check_inputs([args.pair_input], "--pair-input")
    if getattr(args, "max_length", None) is not None and args.max_length < 1:
        raise CliError(f"--max-length must be at least 1, found {args.max_length}")


def run(args, out: Output) -> int:
    """``segkit tokenize`` and ``segkit encode``."""
    from ..models.files import ModelFileError
    from ..models.vocabulary import VocabularyError

    out.check_open()
    check_arguments(args)
    choice = choose_model(args)
    note = None
    if args.model is not None or args.pretrained is not None:
        from .models import note_shadowed_file

        note = note_shadowed_file(choice)
    if note:
        print(note, file=sys.stderr)
    if not args.texts and not args.input:
        stdin_stream()  # closed: an error now, not after the model loads
    try:
        wp = load_tokenizer(args, choice)
    except OSError as e:
        raise CliError(os_message(e)) from None
    except (ValueError, VocabularyError, ModelFileError) as e:
        raise CliError(str(e)) from None
    encode = args.command == "encode"
    allowed = getattr(args, "allowed_special", "none")
    if type(wp).__name__ == "BPE":
        from . import tokenize_bpe

        return tokenize_bpe.run(wp, args, out)
    if allowed != "none":
        raise CliError(f"--allowed-special is for BPE models; {type(wp).__name__} has no such special tokens "
                       "in its text")
    if type(wp).__name__ == "SentencePieceBPE":
        if encode:
            raise CliError("a SentencePiece model has no template, truncation or padding here: use 'segkit tokenize'")
        return _run_sentencepiece(args, out, wp)
    if _is_maxmatch(wp):
        if encode:
            raise CliError(f"{type(wp).__name__} has no special tokens, truncation or padding: use 'segkit tokenize'")
        return _run_maxmatch(args, out, wp)
    from ..presets.tokenizer import Tokenizer
    from ..presets.wordpiece import WordPiece

    if not isinstance(wp, (WordPiece, Tokenizer)):  # (a Tokenizer: a tokenizer.json's staged pipeline)
        raise CliError(f"{shown_path(choice.value)}: is a {type(wp).__name__} model; tokenize and encode need a "
                       "WordPiece, BPE, MaxMatch or tokenizer.json model")
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


def _run_sentencepiece(args, out: Output, sp) -> int:
    """``segkit tokenize`` with a :class:`segkit.SentencePieceBPE`: pieces
    (``▁`` marks a space, as SentencePiece prints them), ids or JSON."""
    if not args.texts and not args.input:
        reading_stdin_note()
    texts: Iterable = args.texts if args.texts else lines(args.input or ["-"])
    piece = sp.id_to_piece
    try:
        for batch in batches(texts, args.batch_size):
            with out.sigint_deferred():
                lists = sp.encode_batch(batch)
            if args.format == "tokens":
                written = [" ".join(map(piece, row)) + "\n" for row in lists]
            elif args.format == "ids":
                written = [" ".join(map(str, row)) + "\n" for row in lists]
            else:
                written = [json.dumps({"text": t, "ids": row, "tokens": [piece(i) for i in row]},
                                      ensure_ascii=False) + "\n" for t, row in zip(batch, lists)]
            out.write(written)
    except InputError as e:
        if not out.texts:
            raise
        raise CliError(f"{e}; the output holds the results of the {out.texts} texts before it") from None
    return 0


def _run_maxmatch(args, out: Output, tok) -> int:
    """``segkit tokenize`` with a :class:`segkit.MaxMatch` (RWKV World):
    the whole line is matched, no special tokens."""
    if not args.texts and not args.input:
        reading_stdin_note()
    texts: Iterable = args.texts if args.texts else lines(args.input or ["-"])
    by_id = tok._table.by_id
    table = None  # every id's output bytes, made on first use (see token_text)
    try:
        for batch in batches(texts, args.batch_size):
            if args.format != "json":
                from .token_text import bytes_table, id_table, table_lines

                with out.sigint_deferred():
                    ids, rows = tok.encode_batch(batch, flat=True)
                if table is None:
                    table = id_table(len(by_id)) if args.format == "ids" else bytes_table(
                        [(_shown(t) if t is not None else f"<{i}>").encode("utf-8", "surrogateescape")
                         for i, t in enumerate(by_id)])
                out.write_bytes(table_lines(ids, rows, table), len(batch))
                continue
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
