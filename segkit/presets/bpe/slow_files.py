"""Reading GPT-2's "slow tokenizer" files: ``vocab.json`` + ``merges.txt``.

The format segkit writes (:meth:`segkit.training.bpe.TrainedBPE.save`) and
that GPT-2, RoBERTa and many byte-level BPE models ship:

- ``vocab.json``: a JSON object of token -> id, each token a string of
  GPT-2's byte alphabet (:func:`segkit.presets.bpe.files.byte_decoder`);
- ``merges.txt``: one merge a line, two tokens separated by one space
  (``"Ġ t"``), in priority order; a line starting with ``#version`` is
  skipped (the first line, usually: ``#version: 0.2``).

The semantics are those of HuggingFace ``tokenizers``'
``models.BPE.from_file(vocab, merges)`` with a ``ByteLevel``
pre-tokenizer (``add_prefix_space=False``) and decoder, plus the special
tokens ``transformers.GPT2TokenizerFast(vocab_file=..., merges_file=...)``
adds: ``<|endoftext|>`` (its default ``unk``/``bos``/``eos`` token), or the
ones the folder's ``tokenizer_config.json`` / ``special_tokens_map.json`` /
``added_tokens.json`` name.  A merges.txt is read line by line as
``tokenizers`` reads it: a line that is not exactly two tokens separated by
one space (a blank line too; ``tokenizers`` refuses it) is an error naming
the line.

Both files are untrusted: every problem is a
:class:`~segkit.presets.bpe.files.BPEFileError` naming the file and the line
(merges.txt) or the key (vocab.json); only regular files are read.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ...runtime.regular_files import read_regular
from ...runtime.surrogates import first_surrogate
from .files import BPEFileError, TokenizerJSON, byte_level_bytes, read_tokenizer_json, shortened_number

__all__ = ["read_vocab_merges", "read_vocab", "read_merges", "folder_added_tokens", "looks_like_vocab_json", "looks_like_merges_txt", "GPT2_SPECIAL_TOKENS"]

#: The special tokens GPT2TokenizerFast adds when nothing else is said (its
#: default unk_token, bos_token and eos_token).
GPT2_SPECIAL_TOKENS = ("<|endoftext|>",)

#: Largest id HuggingFace accepts (a u32) that segkit runs (an int32).
_MAX_ID = (1 << 31) - 2

_SPECIAL_KEYS = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def _decode(path: Path, raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BPEFileError(f"{path}: {what} is not UTF-8 (byte {e.start})") from None


def read_vocab(path: str | os.PathLike) -> dict[str, int]:
    """The token -> id object of a ``vocab.json``, checked: a JSON object
    whose values are ids (integers 0 <= id < 2**31 - 1) and whose keys hold
    no lone surrogate.

    Raises
    ------
    BPEFileError
        Naming the file and the key.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "vocab.json")
    >>> _ = open(p, "w").write('{"a": 0, "b": "1"}')
    >>> read_vocab(p)
    Traceback (most recent call last):
    ...
    segkit.presets.bpe.files.BPEFileError: ...vocab.json: key 'b': expected an id (an integer 0 <= id < 2**31 - 1), found '1'
    """
    path = Path(path)
    text = _decode(path, read_regular(path, "vocab.json", BPEFileError), "the file")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise BPEFileError(f"{path}: not valid JSON ({str(e)[:200]})") from None
    if not isinstance(data, dict):
        raise BPEFileError(f"{path}: a vocab.json is a JSON object of token -> id; found {type(data).__name__}")
    for s, i in data.items():
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i <= _MAX_ID:
            shown = shortened_number(str(i)) if isinstance(i, int) and not isinstance(i, bool) else f"{i!r:.60}"
            raise BPEFileError(f"{path}: key {s!r:.80}: expected an id (an integer 0 <= id < 2**31 - 1), "
                               f"found {shown}")
        at = first_surrogate(s)
        if at >= 0:
            raise BPEFileError(f"{path}: key {s!r:.80}: holds a lone surrogate U+{ord(s[at]):04X}, which has no UTF-8")
    return data


def read_merges(path: str | os.PathLike, vocab: dict[str, int]) -> list[tuple[str, str]]:
    """The merges of a ``merges.txt`` as token pairs, each checked against
    ``vocab``: both tokens and their concatenation are tokens of it, and both
    are byte-level tokens.  Lines starting with ``#version`` are skipped;
    lines end with ``\\n`` (or ``\\r\\n``).

    Raises
    ------
    BPEFileError
        Naming the file and the line.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "merges.txt")
    >>> _ = open(p, "w").write("#version: 0.2\\na b\\na c\\n")
    >>> read_merges(p, {"a": 0, "b": 1, "c": 2, "ab": 3})
    Traceback (most recent call last):
    ...
    segkit.presets.bpe.files.BPEFileError: ...merges.txt: line 3: merge 'a' 'c' makes 'ac', which is not in the vocabulary
    """
    path = Path(path)
    text = _decode(path, read_regular(path, "merges.txt", BPEFileError), "the file")
    lines = text.split("\n")
    if lines and lines[-1] == "":  # the newline ending the last line
        lines.pop()
    merges: list[tuple[str, str]] = []
    byte_level: dict[str, bool] = {}
    for lineno, line in enumerate(lines, 1):
        if line.endswith("\r"):
            line = line[:-1]
        if line.startswith("#version"):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            what = "a blank line" if not line.strip() else f"{line[:80]!r}"
            raise BPEFileError(f"{path}: line {lineno}: expected two tokens separated by one space ('a b'), "
                               f"found {what}")
        a, b = parts
        for tok in (a, b):
            if tok not in vocab:
                raise BPEFileError(f"{path}: line {lineno}: token {tok!r:.80} is not in the vocabulary")
        if a + b not in vocab:
            raise BPEFileError(f"{path}: line {lineno}: merge {a!r:.60} {b!r:.60} makes {a + b!r:.80}, which is not "
                               "in the vocabulary")
        for tok in (a, b):
            ok = byte_level.get(tok)
            if ok is None:
                ok = byte_level[tok] = bool(byte_level_bytes(tok))
            if not ok:
                raise BPEFileError(f"{path}: line {lineno}: token {tok!r:.80} is not a byte-level token (it holds a "
                                   "character outside GPT-2's byte alphabet)")
        merges.append((a, b))
    return merges


def _json_config(path: Path) -> object:
    try:
        return json.loads(_decode(path, read_regular(path, path.name, BPEFileError), "the file"))
    except (ValueError, RecursionError) as e:
        if isinstance(e, BPEFileError):
            raise
        raise BPEFileError(f"{path}: not valid JSON ({str(e)[:200]})") from None


def _token_text(path: Path, key: str, value: object) -> str | None:
    """A special token of a config file: a string, or an AddedToken object
    (``{"content": ...}``); null is none."""
    if value is None:
        return None
    if isinstance(value, dict):
        value = value.get("content")
    if not isinstance(value, str):
        raise BPEFileError(f"{path}: {key}: expected a token (a string or an object with 'content'), found "
                           f"{json.dumps(value)[:80]}")
    return value


def folder_added_tokens(folder: str | os.PathLike) -> list[dict]:
    """The added tokens of a GPT-2 model folder as transformers adds them,
    in order (each a tokenizer.json ``added_tokens`` entry): those of
    ``tokenizer_config.json``'s ``added_tokens_decoder`` (by id, with their
    flags); then the special tokens named by ``tokenizer_config.json`` and
    ``special_tokens_map.json`` (which wins) -- ``<|endoftext|>`` as
    unk/bos/eos unless they name others -- and their
    ``additional_special_tokens``; then the tokens of ``added_tokens.json``
    (by id).  With none of these files: ``<|endoftext|>``.

    >>> import tempfile
    >>> [e["content"] for e in folder_added_tokens(tempfile.mkdtemp())]
    ['<|endoftext|>']
    """
    folder = Path(folder)
    named: dict[str, str | None] = {k: None for k in _SPECIAL_KEYS}
    named.update({k: GPT2_SPECIAL_TOKENS[0] for k in ("bos_token", "eos_token", "unk_token")})
    extra: list[str] = []
    entries: dict[str, dict] = {}
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        p = folder / name
        if not p.exists():
            continue
        cfg = _json_config(p)
        if not isinstance(cfg, dict):
            raise BPEFileError(f"{p}: expected a JSON object, found {type(cfg).__name__}")
        decoder = cfg.get("added_tokens_decoder")
        if decoder is not None:
            if not isinstance(decoder, dict):
                raise BPEFileError(f"{p}: added_tokens_decoder: expected an object of id -> token, found "
                                   f"{json.dumps(decoder)[:80]}")
            keyed = []
            for k, v in decoder.items():
                if not k.isdigit() or len(k) > 10:
                    raise BPEFileError(f"{p}: added_tokens_decoder: key {k!r:.40} is not an id")
                keyed.append((int(k), k, v))
            for i, k, v in sorted(keyed):
                t = _token_text(p, f"added_tokens_decoder[{k!r}]", v)
                flags = {f: v[f] for f in ("single_word", "lstrip", "rstrip", "normalized", "special")
                         if isinstance(v, dict) and f in v}
                if t:
                    entries.setdefault(t, {"id": i, "content": t, "special": True, **flags})
        for key in _SPECIAL_KEYS:
            if key in cfg:
                named[key] = _token_text(p, key, cfg[key])
        more = cfg.get("additional_special_tokens")
        if more is not None:
            if not isinstance(more, list):
                raise BPEFileError(f"{p}: additional_special_tokens: expected a list, found {json.dumps(more)[:80]}")
            extra += [t for k, v in enumerate(more) if (t := _token_text(p, f"additional_special_tokens[{k}]", v))]
    for t in [*named.values(), *extra]:
        if t:
            entries.setdefault(t, {"id": 0, "content": t, "special": True, "normalized": False})
    p = folder / "added_tokens.json"
    if p.exists():
        cfg = _json_config(p)
        if not isinstance(cfg, dict):
            raise BPEFileError(f"{p}: expected a JSON object of token -> id, found {type(cfg).__name__}")
        for s, i in cfg.items():
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i <= _MAX_ID:
                raise BPEFileError(f"{p}: key {s!r:.80}: expected an id, found {i!r:.60}")
        for s, i in sorted(cfg.items(), key=lambda kv: kv[1]):
            if s:
                entries.setdefault(s, {"id": i, "content": s, "special": False, "normalized": True})
    return list(entries.values())


def read_vocab_merges(vocab_path: str | os.PathLike, merges_path: str | os.PathLike,
                      special_tokens: list[str] | tuple[str, ...] | None = None) -> TokenizerJSON:
    """What :class:`segkit.BPE` runs of a ``vocab.json`` + ``merges.txt``
    pair (see the module documentation), as a
    :class:`~segkit.presets.bpe.files.TokenizerJSON`.

    Parameters
    ----------
    vocab_path, merges_path
        The two files.
    special_tokens
        The special tokens matched in text before BPE (each gets its id in
        vocab.json, or the next free id).  None: the ones
        ``GPT2TokenizerFast`` adds, read from the vocab.json's folder
        (``tokenizer_config.json``, ``special_tokens_map.json``,
        ``added_tokens.json``), else ``<|endoftext|>``.

    Raises
    ------
    BPEFileError
        A file is unreadable: the message names the file and the line or key.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> _ = open(os.path.join(d, "vocab.json"), "w").write('{"a": 0, "b": 1, "ab": 2, "<|endoftext|>": 3}')
    >>> _ = open(os.path.join(d, "merges.txt"), "w").write("#version: 0.2\\na b\\n")
    >>> spec = read_vocab_merges(os.path.join(d, "vocab.json"), os.path.join(d, "merges.txt"))
    >>> spec.tokens, spec.merges, [(a.content, a.id) for a in spec.added]
    ([b'a', b'b', b'ab', b'<|endoftext|>'], [(0, 1)], [('<|endoftext|>', 3)])
    """
    vocab_path, merges_path = Path(vocab_path), Path(merges_path)
    vocab = read_vocab(vocab_path)
    merges = read_merges(merges_path, vocab)
    if special_tokens is None:
        entries = folder_added_tokens(vocab_path.parent)
    else:
        if isinstance(special_tokens, str) or not all(isinstance(t, str) for t in special_tokens):
            raise TypeError(f"special_tokens must be a list of str, found {special_tokens!r:.80}")
        entries = [{"id": 0, "content": t, "special": True, "normalized": False} for t in special_tokens]
    for e in entries:  # (the id HF gives it: read_tokenizer_json works it out)
        e["id"] = vocab.get(e["content"], e["id"])
    doc = {
        "model": {"type": "BPE", "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "decoder": {"type": "ByteLevel"},
        "added_tokens": entries,
    }
    import warnings

    with warnings.catch_warnings():  # (the ids added tokens get are HF's, whatever added_tokens.json says)
        warnings.simplefilter("ignore")
        try:
            return read_tokenizer_json(vocab_path, data=doc)
        except BPEFileError as e:  # named by a JSON path of the tokenizer.json this pair stands for
            text = str(e)
            key = re.match(re.escape(f"{vocab_path}: model.vocab[") + r"(.*?)\]: ", text)
            if key:  # a key of vocab.json
                raise BPEFileError(f"{vocab_path}: key {key.group(1)}: {text[key.end():]}") from None
            raise BPEFileError(f"{text} (read from {vocab_path.name} and {merges_path.name})") from None


def looks_like_vocab_json(head: bytes) -> bool:
    """Whether the first bytes of a file look like a vocab.json: a JSON
    object whose first value is an integer (``{"!": 0, ...``).

    >>> looks_like_vocab_json(b'{"!": 0, "\\"": 1'), looks_like_vocab_json(b'{"version": "1.0"')
    (True, False)
    """
    return re.match(rb'\s*\{\s*(?:\}|"(?:[^"\\]|\\.)*"\s*:\s*[0-9])', head) is not None


def looks_like_merges_txt(head: bytes) -> bool:
    """Whether the first bytes of a file look like a merges.txt: an optional
    ``#version`` line, then lines of two tokens separated by one space.

    >>> looks_like_merges_txt(b"#version: 0.2\\n\\xc4\\xa0 t\\nh e\\n"), looks_like_merges_txt(b"[PAD]\\n[UNK]\\n")
    (True, False)
    """
    lines = head.split(b"\n")
    if len(lines) > 1:
        lines = lines[:-1]  # the last may be cut short
    lines = [ln.rstrip(b"\r") for ln in lines if ln.strip()]
    if lines and lines[0].startswith(b"#version"):
        lines = lines[1:]
    return bool(lines) and all(len(ln.split(b" ")) == 2 and all(ln.split(b" ")) for ln in lines[:32])
