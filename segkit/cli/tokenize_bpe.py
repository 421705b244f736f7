"""``segkit tokenize --model cl100k_base``: byte-level BPE on the command line.

``--model`` names a bundled BPE vocabulary (``gpt2``, ``r50k_base``,
``cl100k_base``, ``o200k_base``) or a saved :class:`segkit.BPE` model file.
Tokens are printed in GPT-2's byte-level spelling (``Ġworld`` for
``b" world"``), as HuggingFace shows byte-level vocabularies: a token may
hold part of a character, and a space inside a token would be ambiguous in
space-separated output.  Special tokens in the text are ordinary text.
"""

from __future__ import annotations

import json
from typing import Iterable

from .io import CliError, InputError, Output, batches, lines, reading_stdin_note


def is_bpe_name(name: str) -> bool:
    """Whether ``name`` is a bundled BPE vocabulary."""
    from ..presets.bpe.encodings import ENCODING_NAMES

    return name in ENCODING_NAMES


def byte_level(token: bytes) -> str:
    """GPT-2's byte-level spelling of a token (``b" world"`` -> ``"Ġworld"``)."""
    table = _encoder_table()
    return "".join(table[b] for b in token)


_TABLE: list = []


def _encoder_table() -> list:
    if not _TABLE:
        from ..presets.bpe.files import byte_decoder

        inv = [""] * 256
        for c, b in byte_decoder().items():
            inv[b] = c
        _TABLE.extend(inv)
    return _TABLE


def run(bpe, args, out: Output) -> int:
    """Tokenize with a :class:`segkit.BPE`."""
    if args.command != "tokenize":
        raise CliError(f"'segkit {args.command}' is for WordPiece models; use 'segkit tokenize' with a BPE model")
    if args.batch_size < 1:
        raise CliError(f"--batch-size must be at least 1, found {args.batch_size}")
    if args.texts and args.input:
        raise CliError("give texts as arguments or with --input, not both")
    if not args.texts and not args.input:
        reading_stdin_note()
    texts: Iterable = args.texts if args.texts else lines(args.input or ["-"])
    try:
        for batch in batches(texts, args.batch_size):
            with out.sigint_deferred():
                ids_rows = bpe.encode_ordinary_batch(batch)
            written = []
            for text, ids in zip(batch, ids_rows):
                if args.format == "ids":
                    written.append(" ".join(map(str, ids)) + "\n")
                    continue
                tokens = [byte_level(bpe.decode_single_token_bytes(i)) for i in ids]
                if args.format == "tokens":
                    written.append(" ".join(tokens) + "\n")
                else:
                    _, offsets = bpe.encode_with_offsets(text, disallowed_special=()) \
                        if bpe._mode != "tokenizer.json" else bpe.encode_with_offsets(text)
                    written.append(json.dumps({"text": text, "ids": ids, "tokens": tokens, "offsets": offsets},
                                              ensure_ascii=False) + "\n")
            out.write(written)
    except InputError as e:
        if not out.texts:
            raise
        raise CliError(f"{e}; the output holds the results of the {out.texts} texts before it") from None
    except ValueError as e:
        raise CliError(str(e)) from None
    return 0
