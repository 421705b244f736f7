"""``segkit tokenize --model cl100k_base``: byte-level BPE on the command line.

``--model`` names a bundled BPE vocabulary (``gpt2``, ``r50k_base``,
``cl100k_base``, ``o200k_base``) or a saved :class:`segkit.BPE` model file
(see :mod:`segkit.cli.models`).
Tokens are printed in GPT-2's byte-level spelling (``Ġworld`` for
``b" world"``), as HuggingFace shows byte-level vocabularies: a token may
hold part of a character, and a space inside a token would be ambiguous in
space-separated output.  Special tokens in the text are ordinary text
unless ``--allowed-special`` names them (``all``, or a comma list): the
default, ``none``, is tiktoken's ``encode_ordinary``, so that a file that
happens to hold ``<|endoftext|>`` is encoded as it reads instead of failing
(tiktoken's ``encode`` refuses it by default) or gaining a control token.
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


def allowed_special(bpe, value: str):
    """What ``--allowed-special VALUE`` means for ``bpe``: None (special
    tokens are ordinary text), ``"all"``, or a set of special tokens."""
    if value == "none":
        return None
    tokenizer_json = bpe._mode == "tokenizer.json"
    known = sorted(bpe.special_tokens)
    if value == "all":
        return "all"
    if tokenizer_json:
        raise CliError("--allowed-special: a model from a tokenizer.json matches all its added tokens (all) or "
                       f"none (none), found {value!r}")
    wanted = [t for t in value.split(",") if t]
    unknown = [t for t in wanted if t not in bpe.special_tokens]
    if unknown or not wanted:
        raise CliError(f"--allowed-special: {', '.join(map(repr, unknown)) or repr(value)} is not a special token "
                       f"of this model; expected all, none or a comma list of: {', '.join(known) or '(none)'}")
    return set(wanted)


def run(bpe, args, out: Output) -> int:
    """Tokenize with a :class:`segkit.BPE`."""
    from .token_text import gpt2_byte_map, id_table, spelled_table, table_lines

    if args.command != "tokenize":
        raise CliError(f"'segkit {args.command}' is for WordPiece models; use 'segkit tokenize' with a BPE model")
    allowed = allowed_special(bpe, getattr(args, "allowed_special", "none"))
    if not args.texts and not args.input:
        reading_stdin_note()
    texts: Iterable = args.texts if args.texts else lines(args.input or ["-"])

    def encode_flat(batch):
        if allowed is None:
            return bpe.encode_ordinary_batch(batch, flat=True)
        if bpe._mode == "tokenizer.json":
            return bpe.encode_batch(batch, flat=True)
        return bpe.encode_batch(batch, flat=True, allowed_special=allowed, disallowed_special=())

    table = None  # every id's output bytes, made on first use
    try:
        for batch in batches(texts, args.batch_size):
            with out.sigint_deferred():
                ids, rows = encode_flat(batch)
            if args.format != "json":
                if table is None:
                    data, start, end = bpe._dec
                    table = id_table(start.size) if args.format == "ids" else \
                        spelled_table(data, start, end, gpt2_byte_map())
                out.write_bytes(table_lines(ids, rows, table), len(batch))
                continue
            written = []
            for t, text in enumerate(batch):
                row = ids[rows[t]:rows[t + 1]].tolist()
                tokens = [byte_level(bpe.decode_single_token_bytes(i)) for i in row]
                if bpe._mode == "tokenizer.json":
                    _, offsets = bpe.encode_with_offsets(text)
                else:
                    _, offsets = bpe.encode_with_offsets(text, allowed_special=allowed or (),
                                                         disallowed_special=())
                written.append(json.dumps({"text": text, "ids": row, "tokens": tokens, "offsets": offsets},
                                          ensure_ascii=False) + "\n")
            out.write(written)
    except InputError as e:
        if not out.texts:
            raise
        raise CliError(f"{e}; the output holds the results of the {out.texts} texts before it") from None
    except ValueError as e:
        raise CliError(str(e)) from None
    return 0
