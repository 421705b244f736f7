"""Mistral's Tekken files (``tekken_*.json``): reading them, and decoding
as ``mistral_common``'s ``Tekkenizer`` does.

A Tekken file is tiktoken's byte-level BPE in JSON: ``vocab`` lists the
tokens in rank order (``{"rank", "token_bytes" (base64), "token_str"}``),
``config`` gives the pre-tokenization ``pattern``, ``default_vocab_size``
and ``default_num_special_tokens``, and ``special_tokens`` (optional up to
version v7) the control tokens.  Tekkenizer's rules, which segkit follows:

* the control tokens take ids ``0 .. num_special - 1``: those the file
  lists (in order; when it lists none and its version is v7 or older,
  Tekkenizer's twenty defaults ``<unk>``, ``<s>``, ``</s>``, ``[INST]``,
  ...), then fillers ``<SPECIAL_{i}>`` up to ``num_special``;
* the vocabulary is cut to its first ``default_vocab_size - num_special``
  tokens, and the token of rank ``r`` has id ``r + num_special``;
* text is encoded with no control token matched (a ``"<s>"`` in the text
  is ordinary text), and decoding drops control tokens (Tekkenizer's
  default ``SpecialTokenPolicy.IGNORE``), each run of ordinary tokens
  decoded on its own.

Every problem with a file is a :class:`~segkit.presets.bpe.files.BPEFileError`
naming the file and the JSON path (``vocab[12].token_bytes``,
``config.default_vocab_size``, ...).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .files import BPEFileError

#: Larger files are refused (the largest Mistral ships is 19 MB).
MAX_TEKKEN_BYTES = 1 << 28
#: More control tokens than this is refused (Mistral's files have 1000).
MAX_SPECIAL_TOKENS = 1 << 20

#: Tekkenizer's control tokens for files of version v7 or older that list none.
DEFAULT_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)


@dataclass
class TekkenSpec:
    """What :func:`read_tekken` reads: ``tokens[i]`` is the bytes of id
    ``i`` (None for the control tokens), ``specials[i]`` the string of
    control token ``i``."""

    tokens: list
    specials: list
    pattern: str
    version: str


def _bad(path, where: str, what: str) -> BPEFileError:
    return BPEFileError(f"{path}: {where}: {what}")


def _int(path, where: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(path, where, f"expected an integer, found {type(value).__name__} {str(value)[:60]!r}")
    if not low <= value <= high:
        raise _bad(path, where, f"expected {low} <= value <= {high}, found {value}")
    return value


def _str(path, where: str, value) -> str:
    if not isinstance(value, str):
        raise _bad(path, where, f"expected a string, found {type(value).__name__} {str(value)[:60]!r}")
    return value


def is_tekken_data(data: object) -> bool:
    """Whether parsed JSON looks like a Tekken file (a ``vocab`` list and a
    ``config`` object with a ``pattern``), as opposed to a HuggingFace
    tokenizer.json (which has a ``model``)."""
    return (isinstance(data, dict) and isinstance(data.get("vocab"), list) and isinstance(data.get("config"), dict)
            and "pattern" in data["config"] and "model" not in data)


def read_tekken(path: str | os.PathLike) -> TekkenSpec:
    """The vocabulary, control tokens and pattern of a Tekken file, checked.

    Raises
    ------
    BPEFileError
        Naming the JSON path of the first problem.

    Examples
    --------
    >>> import json, os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "tekken.json")
    >>> _ = open(p, "w").write(json.dumps({"config": {"pattern": ".", "default_vocab_size": 300,
    ...     "default_num_special_tokens": 3, "version": "v3"}, "vocab": []}))
    >>> read_tekken(p)
    Traceback (most recent call last):
    ...
    segkit.presets.bpe.files.BPEFileError: ...tekken.json: config.default_vocab_size: 300 ids need 297 vocabulary tokens after the 3 control tokens; vocab holds 0
    """
    from ...runtime.regular_files import read_regular

    path = Path(path)
    raw = read_regular(path, "Tekken", BPEFileError)
    if len(raw) > MAX_TEKKEN_BYTES:
        raise BPEFileError(f"{path}: larger than {MAX_TEKKEN_BYTES} bytes")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise BPEFileError(f"{path}: not UTF-8 (byte {e.start})") from None
    except (ValueError, RecursionError) as e:
        raise BPEFileError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise _bad(path, "top level", f"expected an object, found {type(data).__name__}")
    config = data.get("config")
    if not isinstance(config, dict):
        raise _bad(path, "config", f"expected an object, found {type(config).__name__}")
    pattern = _str(path, "config.pattern", config.get("pattern"))
    try:
        import regex

        empty = regex.compile(pattern).search("") is not None
    except Exception as e:  # regex.error, or a pattern too deep to compile
        raise _bad(path, "config.pattern", f"not a valid regular expression: {e}") from None
    if empty:
        raise _bad(path, "config.pattern", f"{pattern[:80]!r} matches the empty string (Tekkenizer, being "
                   "tiktoken, panics on an empty match); expected a pattern whose every match is non-empty")
    version = _str(path, "config.version", config.get("version"))
    if not (version[:1] == "v" and version[1:].isdigit() and version[1:].isascii()):
        raise _bad(path, "config.version", f"expected a version such as 'v3', found {version[:40]!r}")
    vocab = data.get("vocab")
    if not isinstance(vocab, list):
        raise _bad(path, "vocab", f"expected a list, found {type(vocab).__name__}")
    n_special = _int(path, "config.default_num_special_tokens", config.get("default_num_special_tokens"), 0,
                     MAX_SPECIAL_TOKENS)
    vocab_size = _int(path, "config.default_vocab_size", config.get("default_vocab_size"), 0, (1 << 31) - 2)
    inner = vocab_size - n_special
    if inner < 256 or inner > len(vocab):
        raise _bad(path, "config.default_vocab_size",
                   f"{vocab_size} ids need {inner} vocabulary tokens after the {n_special} control tokens; "
                   + (f"vocab holds {len(vocab)}" if inner > len(vocab) else "at least 256 (every byte) are needed"))

    listed = data.get("special_tokens")
    if listed is None:
        if int(version[1:]) > 7:
            raise _bad(path, "special_tokens", f"missing: a file of version {version} must list its control tokens")
        names = list(DEFAULT_SPECIAL_TOKENS)
        where_of = {k: f"special_tokens (the default {s!r})" for k, s in enumerate(names)}
    else:
        if not isinstance(listed, list):
            raise _bad(path, "special_tokens", f"expected a list, found {type(listed).__name__}")
        names = []
        where_of = {}
        for k, entry in enumerate(listed):
            w = f"special_tokens[{k}]"
            if not isinstance(entry, dict):
                raise _bad(path, w, f"expected an object, found {type(entry).__name__}")
            _int(path, f"{w}.rank", entry.get("rank"), k, k)
            s = _str(path, f"{w}.token_str", entry.get("token_str"))
            if not s:
                raise _bad(path, f"{w}.token_str", "an empty string")
            try:
                s.encode("utf-8")
            except UnicodeEncodeError as e:
                raise _bad(path, f"{w}.token_str", f"a lone surrogate at position {e.start}") from None
            names.append(s)
            where_of[k] = w
    if len(names) > n_special:
        listing = f"special_tokens lists {len(names)}" if listed is not None else \
            f"a file of version {version} without special_tokens has Tekkenizer's {len(names)} defaults"
        raise _bad(path, "config.default_num_special_tokens", f"{n_special} control tokens, but {listing}")
    names += [f"<SPECIAL_{i}>" for i in range(len(names), n_special)]
    first: dict[str, int] = {}
    for k, s in enumerate(names):
        if s in first:
            w = where_of.get(k, f"the filler <SPECIAL_{k}>")
            raise _bad(path, where_of.get(first[s], "special_tokens"), f"{s!r} is also the control token of {w}")
        first[s] = k

    tokens: list = [None] * n_special
    seen: dict[bytes, int] = {}
    for r in range(inner):
        entry = vocab[r]
        w = f"vocab[{r}]"
        if not isinstance(entry, dict):
            raise _bad(path, w, f"expected an object, found {type(entry).__name__}")
        if set(entry) != {"rank", "token_bytes", "token_str"}:
            raise _bad(path, w, f"expected the keys rank, token_bytes and token_str, found {sorted(entry)!r:.120}")
        _int(path, f"{w}.rank", entry["rank"], r, r)
        b64 = _str(path, f"{w}.token_bytes", entry["token_bytes"])
        try:
            tok = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            raise _bad(path, f"{w}.token_bytes", f"bad base64 {b64[:60]!r}") from None
        if not tok:
            raise _bad(path, f"{w}.token_bytes", "an empty token")
        if r < 256 and tok != bytes([r]):
            raise _bad(path, f"{w}.token_bytes", f"rank {r} must be the single byte {bytes([r])!r}, found {tok!r:.60}")
        if tok in seen:
            raise _bad(path, f"{w}.token_bytes", f"token {tok!r:.60} is also vocab[{seen[tok]}]")
        if entry["token_str"] is not None and not isinstance(entry["token_str"], str):
            raise _bad(path, f"{w}.token_str", f"expected a string or null, found {type(entry['token_str']).__name__}")
        seen[tok] = r
        tokens.append(tok)
    return TekkenSpec(tokens, names, pattern, version)


# ------------------------------------------------------------- decoding
def control_mask(enc) -> np.ndarray:
    """bool per id: the id is a control token (built once per model)."""
    mask = getattr(enc, "_control_mask", None)
    if mask is None:
        mask = np.zeros(enc._n_ids, dtype=bool)
        mask[list(enc._strings)] = True
        enc._control_mask = mask
    return mask


def _ids(ids) -> np.ndarray:
    if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
        raise TypeError(f"ids must be a sequence of ints, found {type(ids).__name__} {ids!r:.40}")
    arr = np.asarray(ids if isinstance(ids, np.ndarray) else list(ids))
    if arr.size and (arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"ids must be a sequence of ints, found {arr.dtype} of shape {arr.shape}")
    return arr.astype(np.int64).reshape(-1)


def runs(enc, ids) -> list[np.ndarray]:
    """The runs of ordinary tokens of ``ids`` between control tokens, as
    Tekkenizer decodes them (an id that is no token stays in, for
    ``decode_bytes`` to name)."""
    arr = _ids(ids)
    mask = control_mask(enc)
    inside = (arr >= 0) & (arr < mask.size)
    ctrl = np.zeros(arr.size, dtype=bool)
    ctrl[inside] = mask[arr[inside]]
    if not ctrl.any():
        return [arr] if arr.size else []
    keep = ~ctrl
    edges = np.flatnonzero(np.diff(np.concatenate([[False], keep, [False]]).astype(np.int8)))
    return [arr[a:b] for a, b in zip(edges[::2].tolist(), edges[1::2].tolist())]


def decode_bytes(enc, ids, gather) -> bytes:
    """The bytes of ``ids`` without the control tokens."""
    return b"".join(gather(r) for r in runs(enc, ids))


def decode(enc, ids, errors: str, gather) -> str:
    """Tekkenizer's ``decode``: control tokens dropped, each run of ordinary
    tokens decoded on its own."""
    return "".join(gather(r).decode("utf-8", errors) for r in runs(enc, ids))
