"""The model vocabulary of a HuggingFace ``tokenizer.json``, as byte strings,
for :meth:`segkit.MaxMatch.from_tokenizer_json` ("longest-prefix inference"
over another tokenizer's vocabulary, Uzan et al., ACL 2024).

Only ``model.vocab`` is read (BPE, WordPiece and WordLevel: a token -> id
mapping; Unigram: a list of ``[piece, score]``, ids by position), all of
it: a special token of the model vocabulary (``<|endoftext|>``, ``[UNK]``)
matches its own spelling in the text.  Added tokens that are not in the
model vocabulary are not read.

Tokens become bytes as the tokenizer spells them:

* byte-level tokenizers (a ``ByteLevel`` pre-tokenizer or decoder, as
  GPT-2's) write each byte as one character of a 256-character alphabet
  (printable Latin-1 characters stand for themselves, the other bytes for
  U+0100 onwards, in byte order); tokens are mapped back to those bytes;
* with ``byte_fallback`` (SentencePiece-style BPE), ``<0xHH>`` is byte HH;
* any other token is its UTF-8, as spelled (WordPiece's ``##`` and
  SentencePiece's ``▁`` included: the whole text is matched, with no
  pre-tokenization).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ...runtime.regular_files import read_regular

__all__ = ["byte_level_alphabet", "read_model_vocabulary"]

_FALLBACK = re.compile(r"<0x([0-9A-Fa-f]{2})>\Z")


def byte_level_alphabet() -> dict[str, int]:
    """character -> byte of the byte-level alphabet (GPT-2's).

    >>> a = byte_level_alphabet()
    >>> a["a"], a["Ġ"], a["Ċ"], len(a)
    (97, 32, 10, 256)
    """
    from ...runtime.byte_level import byte_decoder

    return dict(byte_decoder())


def _types(node) -> list[str]:
    """The ``type`` of a component and of those in a ``Sequence`` of them."""
    if not isinstance(node, dict):
        return []
    out = [node.get("type")]
    for key in ("pretokenizers", "decoders", "normalizers", "processors"):
        for sub in node.get(key) or []:
            out += _types(sub)
    return out


def read_model_vocabulary(path: str | os.PathLike) -> tuple[list[bytes], list[int], int | None]:
    """``(tokens, ids, unk_id)`` of the model of a tokenizer.json (see the
    module doc); ValueError naming the file and what is wrong."""
    path = Path(path)
    raw = read_regular(path, "tokenizer.json", ValueError)  # a regular file only (segkit.runtime.regular_files)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ValueError(f"{path}: not a JSON file ({type(e).__name__}: {str(e)[:200]})") from None
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict):
        raise ValueError(f"{path}: no 'model' object: not a HuggingFace tokenizer.json")
    kind = model.get("type")
    vocab = model.get("vocab")
    if isinstance(vocab, dict):
        pairs = list(vocab.items())
    elif isinstance(vocab, list) and (kind == "Unigram" or kind is None):
        pairs = []
        for i, entry in enumerate(vocab):
            if not isinstance(entry, list) or not entry or not isinstance(entry[0], str):
                raise ValueError(f"{path}: model.vocab[{i}] is {entry!r:.60}, expected [piece, score]")
            pairs.append((entry[0], i))
    else:
        raise ValueError(f"{path}: model.vocab is {type(vocab).__name__}, expected a token -> id object "
                         "(or a Unigram list)")
    for t, i in pairs:
        if not isinstance(t, str) or isinstance(i, bool) or not isinstance(i, int):
            raise ValueError(f"{path}: model.vocab maps {t!r:.60} to {i!r:.40}, expected str -> int")
    byte_level = "ByteLevel" in _types(data.get("pre_tokenizer")) + _types(data.get("decoder"))
    fallback = bool(model.get("byte_fallback"))
    alphabet = byte_level_alphabet() if byte_level else None
    tokens: list[bytes] = []
    ids: list[int] = []
    for t, i in pairs:
        if fallback and (m := _FALLBACK.match(t)):
            raw = bytes([int(m.group(1), 16)])
        elif alphabet is not None:
            try:
                raw = bytes(alphabet[c] for c in t)
            except KeyError as e:
                raise ValueError(f"{path}: token {t!r:.60} (id {i}) has {e.args[0]!r}, which is not a character of "
                                 "the byte-level alphabet") from None
        else:
            raw = t.encode("utf-8", "surrogatepass")
        if raw:
            tokens.append(raw)
            ids.append(i)
    unk = None
    if kind == "Unigram" and isinstance(model.get("unk_id"), int):
        unk = model["unk_id"]
    elif isinstance(model.get("unk_token"), str) and isinstance(vocab, dict):
        unk = vocab.get(model["unk_token"])
    return tokens, ids, unk
