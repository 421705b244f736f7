"""One loader for every tokenizer file people bring:
:func:`segkit.from_pretrained` and :func:`segkit.from_tokenizer_json`.

A name is a bundled model's (BERT WordPiece, tiktoken BPE, RWKV World)
unless it is written as a path (it holds a folder separator or starts with
``.``).  A path is recognised by its content, never by its name:

=====================================  ======================================
what the file or folder holds          what it gives
=====================================  ======================================
segkit's model file (``save()``)       :func:`segkit.load`
``tokenizer.json`` (a JSON object      the preset of its model: WordPiece
with ``model``)                        (:class:`segkit.WordPiece`), BPE
                                       (:class:`segkit.BPE`)
lines of ``base64 rank`` (tiktoken;    :meth:`segkit.BPE.from_tiktoken`
gzip-compressed too)
lines of ``id literal length`` (the    :class:`segkit.RWKVWorld`
RWKV World vocabulary format)
a Mistral Tekken ``.json``             :meth:`segkit.BPE.from_tekken`
a SentencePiece ``.model`` (protobuf)  :class:`segkit.SentencePieceBPE`
a JSON object of token -> id           :meth:`segkit.BPE.from_vocab_merges`
(GPT-2's ``vocab.json``) with a        (``GPT2TokenizerFast``'s semantics)
``merges.txt`` next to it, or that
``merges.txt`` (lines of ``a b``,
an optional ``#version`` line)
one token per line (``vocab.txt``)     :meth:`segkit.WordPiece.from_pretrained`
                                       (BERT's pipeline)
a folder                               its ``tokenizer.json`` (with
                                       ``tokenizer_config.json``), else its
                                       ``vocab.txt``, ``tokenizer.model``,
                                       ``tekken.json``, or ``vocab.json`` +
                                       ``merges.txt``
=====================================  ======================================

Anything else raises ValueError naming the file and what was found.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path
from typing import Any

from ..models.bundled import written_as_a_path
from ..runtime.regular_files import open_regular

#: Bytes read to recognise a file.
_SNIFF = 4096

_TIKTOKEN_LINE = re.compile(rb"^[A-Za-z0-9+/]+={0,2} [0-9]+\r?$")
_RWKV_LINE = re.compile(rb"^[0-9]+ (?:b?'|b?\")")


def bundled_names() -> dict[str, str]:
    """Every bundled name -> the preset it gives."""
    from ..models.bundled import BUNDLED_VOCABULARIES
    from .bpe.encodings import list_encoding_names

    names = {n: "WordPiece" for n in BUNDLED_VOCABULARIES}
    names.update({n: "BPE" for n in list_encoding_names()})
    names["rwkv-world"] = "RWKVWorld"
    return names


def _from_name(name: str) -> Any:
    kind = bundled_names()[name]
    if kind == "WordPiece":
        from .wordpiece import WordPiece

        return WordPiece.from_pretrained(name)
    if kind == "BPE":
        from .bpe import BPE

        return BPE.from_pretrained(name)
    from .maxmatch import RWKVWorld

    return RWKVWorld()


def from_pretrained(name_or_path: str | os.PathLike) -> Any:
    """The tokenizer a bundled name, a file or a HF model folder holds,
    recognised by content (see the module documentation).

    >>> import segkit
    >>> segkit.from_pretrained("cl100k_base").encode("hello world")
    [15339, 1917]
    >>> segkit.from_pretrained("bert-base-uncased").tokenize("Hello!")
    ['hello', '!']
    """
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise TypeError(f"from_pretrained: name_or_path must be a bundled name or a path, found "
                        f"{type(name_or_path).__name__}")
    text = os.fspath(name_or_path)
    if isinstance(text, bytes):
        raise TypeError("from_pretrained: name_or_path must be a str or a path, found bytes")
    if isinstance(name_or_path, str) and not written_as_a_path(text) and text in bundled_names():
        return _from_name(text)
    path = Path(text)
    if path.is_dir():
        return _from_folder(path)
    if not path.exists():
        known = ", ".join(sorted(bundled_names()))
        raise ValueError(f"from_pretrained: {text!r} is neither a bundled name ({known}) nor an existing file "
                         "or folder")
    return _from_file(path)


def from_tokenizer_json(path: str | os.PathLike) -> Any:
    """The tokenizer of a HF ``tokenizer.json`` (or of a model folder's), as
    the preset of its model (``WordPiece`` or ``BPE``; a Tekken file too)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"from_tokenizer_json: path must be a str or a path, found {type(path).__name__}")
    p = Path(os.fspath(path))
    if p.is_dir():
        if not (p / "tokenizer.json").exists():
            raise ValueError(f"{p}: a model folder needs a tokenizer.json to be read by from_tokenizer_json")
        return _from_folder(p)
    raw = _read_json_file(p)
    hit = _cached_bpe(p, raw)
    return hit if hit is not None else _tokenizer_json(p, _model_type(p, raw))


def _from_folder(path: Path) -> Any:
    if (path / "tokenizer.json").exists():
        raw = _read_json_file(path / "tokenizer.json")
        hit = _cached_bpe(path / "tokenizer.json", raw)
        if hit is not None:
            return _with_roles(hit, path)
        found = _model_type(path / "tokenizer.json", raw)
        if found[0] == "WordPiece":
            from .wordpiece import WordPiece

            return WordPiece.from_tokenizer_json(path)
        from .pipeline.file_kinds import is_byte_level

        if found[0] == "WordLevel" or found[0] == "BPE" and not is_byte_level(found[2]):  # staged, with the folder's config
            from .registry import load as registered

            return tokenizer_json_parts(path, registered("Tokenizer"), found)
        return _with_roles(_tokenizer_json(path / "tokenizer.json", found), path)
    if (path / "vocab.txt").exists():
        from .wordpiece import WordPiece

        return WordPiece.from_pretrained(path)
    if (path / "tokenizer.model").exists():
        return _from_file(path / "tokenizer.model")
    if (path / "tekken.json").exists():
        return _from_file(path / "tekken.json")
    if (path / "vocab.json").exists() and (path / "merges.txt").exists():
        from .bpe import BPE

        return _with_roles(BPE.from_vocab_merges(path / "vocab.json", path / "merges.txt"), path)
    raise ValueError(f"{path}: a model folder needs a tokenizer.json, a vocab.txt, a tokenizer.model, a tekken.json "
                     "or a vocab.json with a merges.txt; found none")


def _with_roles(tok: Any, folder: Path) -> Any:
    """``tok`` with the role tokens (bos, eos, pad, ...) the folder's
    tokenizer_config.json and special_tokens_map.json name, for a BPE
    (WordPiece reads its folder itself)."""
    from .bpe import BPE

    if isinstance(tok, BPE):
        from .pipeline.folder_config import role_tokens

        tok._set_roles(role_tokens(folder), str(folder))
    return tok


def _head(path: Path) -> bytes:
    with open_regular(path, "tokenizer", ValueError) as fh:
        head = fh.read(_SNIFF)
    if head[:2] == b"\x1f\x8b":  # gzip: recognise what it holds
        try:
            with gzip.open(path, "rb") as fh:
                head = fh.read(_SNIFF)
        except (OSError, EOFError) as e:
            raise ValueError(f"{path}: not a readable gzip file ({e})") from None
    return head


def _read_json_file(path: Path) -> bytes:
    from ..runtime.regular_files import read_regular

    return read_regular(path, "tokenizer.json", ValueError)


def _cached_bpe(path: Path, raw: bytes) -> Any:
    """The :class:`segkit.BPE` built before from a tokenizer.json of these
    bytes, from segkit's model cache, or None (then the file is parsed).
    Only a file that built into a BPE has such an entry, so a hit is what
    the steps below would give."""
    from .bpe.preset import CACHE_BYTES

    if len(raw) < CACHE_BYTES:
        return None
    from .bpe import BPE

    return BPE._json_cached(path, raw)


def _model_type(path: Path, raw: bytes | None = None) -> tuple[str, bytes, Any]:
    """``(kind, raw, doc)``: the ``model.type`` of a tokenizer.json (older
    files leave it out: then the model's keys tell), or ``"Tekken"``, with
    the file's bytes (``raw``, read here when not given) and its parsed JSON
    (read once, handed on)."""
    if raw is None:
        raw = _read_json_file(path)
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ValueError(f"{path}: not a JSON file ({type(e).__name__}: {str(e)[:200]})") from None
    from .bpe.tekken import is_tekken_data

    if is_tekken_data(doc):
        return "Tekken", raw, doc
    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, dict):
        raise ValueError(f"{path}: expected a tokenizer.json (a JSON object with a 'model' object), found "
                         f"{type(doc).__name__ if not isinstance(doc, dict) else 'no model'}")
    kind = model.get("type")
    if kind is None:
        kind = "BPE" if "merges" in model else "WordPiece" if "continuing_subword_prefix" in model else None
    if kind is None and isinstance(model.get("vocab"), dict) and "unk_token" in model:
        kind = "WordLevel"
    if kind not in ("WordPiece", "BPE", "WordLevel"):
        raise ValueError(f"{path}: model.type {kind!r} is not supported yet; expected 'WordPiece', 'BPE' or "
                         "'WordLevel'")
    return kind, raw, doc


def _tokenizer_json(path: Path, found: tuple[str, bytes, Any]) -> Any:
    kind, raw, doc = found
    if kind == "Tekken":
        from .bpe import BPE

        return BPE.from_tekken(path)
    if kind == "WordPiece":
        from .wordpiece import WordPiece

        return WordPiece.from_tokenizer_json(path)
    from .pipeline.file_kinds import is_byte_level

    if kind == "WordLevel" or not is_byte_level(doc):  # BPE over characters (SentencePiece-converted), WordLevel: staged
        from .registry import load as registered

        return tokenizer_json_parts(path, registered("Tokenizer"), found)
    from .bpe import BPE
    from .bpe.files import BPEFileError

    try:
        return BPE._from_json(path, raw, doc)
    except BPEFileError as e:  # a component segkit.BPE does not fuse: the staged pipeline, if it reads it
        first = e
    from .registry import load as registered

    return tokenizer_json_parts(path, registered("Tokenizer"), found, staged_after=first)


def _from_file(path: Path) -> Any:
    from ..models.files import MAGIC

    head = _head(path)
    if head.startswith(MAGIC):
        from ..models.saving import load

        return load(path)
    from .bpe.slow_files import looks_like_merges_txt, looks_like_vocab_json

    if looks_like_vocab_json(head):  # {"token": id, ...}: GPT-2's vocab.json, read with its merges.txt
        merges = path.parent / "merges.txt"
        if not merges.exists():
            raise ValueError(f"{path}: a vocab.json (a JSON object of token -> id) is read with the merges.txt next "
                             f"to it, and there is no {merges}")
        from .bpe import BPE

        return BPE.from_vocab_merges(path, merges)
    if re.match(rb"\s*(?:\{|\[\s*[-0-9\"\[\]{])", head):  # a JSON object or array (a vocab.txt's "[PAD]" is not)
        raw = _read_json_file(path)
        hit = _cached_bpe(path, raw)
        return hit if hit is not None else _tokenizer_json(path, _model_type(path, raw))
    lines = [line for line in head.split(b"\n")[:-1] if line.strip()][:8] or [head]
    if all(_TIKTOKEN_LINE.match(line) for line in lines):
        return _tiktoken(path)
    if all(_RWKV_LINE.match(line) for line in lines):
        from .maxmatch import RWKVWorld

        return RWKVWorld(path)
    if head[:1] == b"\x0a":  # protobuf field 1 (pieces), length-delimited: a SentencePiece model
        from .sentencepiece import SentencePieceBPE

        return SentencePieceBPE.from_file(path)
    if looks_like_merges_txt(head) and (path.parent / "vocab.json").exists():  # GPT-2's merges.txt
        from .bpe import BPE

        return BPE.from_vocab_merges(path.parent / "vocab.json", path)
    if b"\x00" in head:
        raise ValueError(f"{path}: not a tokenizer file segkit reads (binary content); expected a tokenizer.json, "
                         "a tiktoken file, an RWKV vocabulary, a Tekken or SentencePiece model, a vocab.txt or a segkit model file")
    from .wordpiece import WordPiece

    try:
        return WordPiece.from_pretrained(path)  # one token per line: a vocab.txt
    except ValueError as e:
        if str(path) in str(e):
            raise
        raise type(e)(f"{path}: read as a vocab.txt (one token per line): {e}") from None


def _tiktoken(path: Path) -> Any:
    """A tiktoken file holds ranks, not its pattern or special tokens: a file
    with the content of a known encoding gets that encoding's; another one
    needs them from the caller."""
    import hashlib

    from ..runtime.regular_files import read_regular
    from .bpe import BPE
    from .bpe.pretrained import PRETRAINED

    raw = read_regular(path, "tiktoken", ValueError)
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise ValueError(f"{path}: not a readable gzip file ({e})") from None
    digest = hashlib.sha256(raw).hexdigest()
    for name, (_, sha, _pattern, _specials) in PRETRAINED.items():
        if sha == digest:
            return BPE.from_pretrained(name)
    from .bpe.known_files import KNOWN_FILES, NAMED_FILES

    if digest in KNOWN_FILES:
        name, pattern, specials = KNOWN_FILES[digest]
        return BPE.from_tiktoken(path, pattern=pattern, special_tokens=specials(), name=name)
    if digest in NAMED_FILES:
        raise ValueError(f"{path}: {NAMED_FILES[digest]}: a tiktoken file holds no pattern or special tokens; use "
                         "segkit.BPE.from_tiktoken(path, pattern=..., special_tokens=...)")
    raise ValueError(f"{path}: a tiktoken file of no known encoding holds no pre-tokenization pattern or special "
                     "tokens; use segkit.BPE.from_tiktoken(path, pattern=..., special_tokens=...)")


def tokenizer_json_parts(path: Path, tokenizer_class: Any, found: tuple | None = None,
                         staged_after: Exception | None = None) -> Any:
    """:meth:`segkit.Tokenizer.from_file`: the pipeline a tokenizer.json (or a
    model folder's) describes around its model: a :class:`segkit.WordPiece`
    for a WordPiece file (a pipeline of its own), else a
    :class:`segkit.Tokenizer` over the :class:`segkit.BPE` of the file, with
    its post-processor, truncation and padding, and the folder's
    ``model_max_length`` and role tokens."""
    folder = None
    if path.is_dir():
        folder = path
        path = path / "tokenizer.json"
        if not path.exists():
            raise ValueError(f"{folder}: a model folder needs a tokenizer.json to be read by Tokenizer.from_file")
    kind, raw, doc = found or _model_type(path)
    if kind == "WordPiece":
        from .wordpiece import WordPiece

        return WordPiece.from_tokenizer_json(folder or path)
    from .bpe import BPE
    from .pipeline.file_kinds import byte_level_prefix, is_byte_level, trim_prefix
    from .pipeline.post_processors import read_post_processor

    if kind == "Tekken":
        return tokenizer_class(BPE.from_tekken(path))
    template, trim, types = read_post_processor(path, doc.get("post_processor"))
    options = {key: doc.get(key) for key in ("truncation", "padding")}
    if kind == "WordLevel":
        from .wordlevel.tokenizer_json import read_staged

        bpe = read_staged(str(path), raw, doc)
    else:
        bpe = None
        # (a post-processor that trims offsets but keeps the first token's
        # space: the staged path, which knows the first token of each piece)
        fused = not byte_level_prefix(doc) and not (trim and trim_prefix(doc.get("post_processor")))
        if is_byte_level(doc) and fused and staged_after is None:
            from .bpe.files import BPEFileError

            try:
                bpe = BPE._from_json(path, raw, dict(doc, truncation=None, padding=None))
            except BPEFileError as e:  # a component segkit.BPE does not fuse (a Split that removes, ...)
                staged_after = e
        if bpe is None:  # BPE over characters, a space kept first (no offsets in segkit.BPE), or what BPE refused
            from .charbpe.tokenizer_json import read_staged

            try:
                bpe = read_staged(str(path), raw, doc)
            except ValueError as e:
                if staged_after is not None and str(path) in str(staged_after):
                    raise ValueError(f"{e} (segkit.BPE refused it too: {staged_after})") from None
                raise
    mml = None
    if folder is not None:
        from .pipeline.folder_config import read_config, role_tokens

        bpe._set_roles(role_tokens(folder), str(folder))
        m = read_config(folder).get("model_max_length")
        mml = m if isinstance(m, int) and not isinstance(m, bool) and 0 <= m < 1 << 62 else None
    padding = options["padding"]
    if padding is not None:
        if not isinstance(padding, dict):
            raise ValueError(f"{path}: padding: expected an object or null, found {type(padding).__name__}")
        strategy = padding.get("strategy")
        length = strategy.get("Fixed") if isinstance(strategy, dict) else None
        padding = {"length": length, "pad_to_multiple_of": padding.get("pad_to_multiple_of"),
                   "direction": {"Left": "left"}.get(padding.get("direction"), "right"),
                   "pad_id": padding.get("pad_id"), "pad_type_id": padding.get("pad_type_id", 0),
                   "pad_token": padding.get("pad_token")}
    truncation = options["truncation"]
    if truncation is not None:
        if not isinstance(truncation, dict):
            raise ValueError(f"{path}: truncation: expected an object or null, found {type(truncation).__name__}")
        truncation = {"max_length": truncation.get("max_length"), "stride": truncation.get("stride", 0),
                      "strategy": {"LongestFirst": "longest_first", "OnlyFirst": "only_first",
                                   "OnlySecond": "only_second"}.get(truncation.get("strategy"), "longest_first"),
                      "direction": {"Left": "left"}.get(truncation.get("direction"), "right")}
    try:
        tok = tokenizer_class(bpe, template=template, truncation=truncation, padding=padding, trim_offsets=trim,
                              model_max_length=mml, overflow_type_ids=types)  # (after the roles: padding's token may be the folder's)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{path}: {e}") from None
    tok._source_doc = doc  # (what save_pretrained writes back)
    return tok
