"""Reading BPE vocabularies: tiktoken's ``.tiktoken`` files and HuggingFace
``tokenizer.json`` files (byte-level BPE).

Both readers treat their input as untrusted: every problem is a
:class:`BPEFileError` (a :class:`segkit.VocabularyError`) naming the file,
the line (or JSON path) and what was found, and nothing in a file is
executed.  Only regular files are read (a FIFO, a device or a directory is
refused before it is opened: :mod:`segkit.runtime.regular_files`).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import unicodedata
import warnings
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from ...models.vocabulary import VocabularyError
from ...runtime.byte_level import byte_decoder
from ...runtime.regular_files import open_regular, read_regular
from ...runtime.surrogates import first_surrogate

#: A .tiktoken file larger than this (uncompressed) is refused: the largest in
#: use (o200k_base) is 3.6 MB.
MAX_TIKTOKEN_BYTES = 1 << 28


class BPEFileError(VocabularyError):
    """A vocabulary file cannot be read; the message names the file and the
    problem.  A :class:`segkit.VocabularyError` (so a :class:`ValueError`):
    ``except segkit.VocabularyError`` catches it."""


#: Longest decimal number read as a rank or an id: anything longer is far
#: beyond int32 (and past 4,300 digits Python refuses to convert it).
MAX_DIGITS = 18


def shortened_number(digits: str) -> str:
    """A long run of digits as shown in a message: its first 20 digits and
    how many there are."""
    return digits if len(digits) <= 24 else f"{digits[:20]}... ({len(digits):,} digits)"


def _gunzip(path, raw: bytes) -> bytes:
    """All the members of gzip data (as :func:`gzip.open` reads them: pigz,
    bgzip and ``cat a.gz b.gz`` write several), with the size limit; zero
    bytes after the last member are padding (``gzip`` skips them too);
    anything else after it, or a member cut short, is an error."""
    out = bytearray()
    rest = raw
    members = 0
    while True:
        d = zlib.decompressobj(wbits=31)
        try:
            out += d.decompress(rest, MAX_TIKTOKEN_BYTES + 1 - len(out))
        except zlib.error as e:
            raise BPEFileError(f"{path}: damaged gzip data in member {members + 1} ({e})") from None
        if len(out) > MAX_TIKTOKEN_BYTES or d.unconsumed_tail:
            raise BPEFileError(f"{path}: more than {MAX_TIKTOKEN_BYTES} bytes once decompressed")
        if not d.eof:
            raise BPEFileError(f"{path}: damaged gzip data: member {members + 1} is cut short (the file ends "
                               f"after {len(raw)} bytes)")
        members += 1
        rest = d.unused_data.lstrip(b"\0")
        at = len(raw) - len(rest)
        if not rest:
            return bytes(out)
        if rest[:2] != b"\x1f\x8b":
            raise BPEFileError(f"{path}: {len(rest)} bytes after the gzip data (from byte {at}, which is "
                               f"{rest[0]:#04x}) are not gzip data; expected the end of the file or another "
                               "gzip member")


def _read_maybe_gzip(path: Path) -> bytes:
    with open_regular(path, "tiktoken vocabulary", BPEFileError) as fh:
        raw = fh.read(MAX_TIKTOKEN_BYTES + 1)
    if raw[:2] == b"\x1f\x8b":
        return _gunzip(path, raw)
    if len(raw) > MAX_TIKTOKEN_BYTES:
        raise BPEFileError(f"{path}: larger than {MAX_TIKTOKEN_BYTES} bytes")
    return raw


def read_tiktoken(path: str | os.PathLike) -> list[bytes]:
    """The tokens of a ``.tiktoken`` file (gzipped or not), indexed by rank.

    Each non-empty line is ``<base64 of the token's bytes> <rank>``; the
    ranks must be exactly 0, 1, ..., n-1 (in any order) and no token may
    appear twice.

    Raises
    ------
    BPEFileError
        Naming the line: bad base64, an empty token, a missing or
        non-integer rank, a duplicate rank or token, a gap in the ranks.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "v.tiktoken")
    >>> _ = open(p, "w").write("YQ== 0\\nYg== 1\\nYWI= 3\\n")
    >>> read_tiktoken(p)
    Traceback (most recent call last):
    ...
    segkit.presets.bpe.files.BPEFileError: ...v.tiktoken: line 3: rank 3 leaves a gap: rank 2 is missing (ranks must be 0, 1, 2, ... without gaps)
    """
    path = Path(path)
    data = _read_maybe_gzip(path)
    tokens: dict[int, bytes] = {}
    line_of_rank: dict[int, int] = {}
    line_of_token: dict[bytes, int] = {}
    for lineno, line in enumerate(data.split(b"\n"), 1):
        line = line.rstrip(b"\r")
        if not line.strip():
            continue
        fields = line.split()
        where = f"{path}: line {lineno}"
        if len(fields) != 2:
            shown = line[:80].decode("utf-8", "replace")
            if len(fields) == 1 and line[:1].isspace():
                raise BPEFileError(f"{where}: an empty token (no base64 before the rank {shown.strip()!r})")
            if len(fields) == 1:
                raise BPEFileError(f"{where}: the rank is missing (expected '<base64> <rank>', found {shown!r})")
            raise BPEFileError(f"{where}: expected '<base64> <rank>', found {shown!r}")
        b64, rank_text = fields
        try:
            token = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            raise BPEFileError(f"{where}: bad base64 {b64[:80].decode('utf-8', 'replace')!r}") from None
        if not token:
            raise BPEFileError(f"{where}: an empty token")
        if not rank_text.isdigit():
            raise BPEFileError(f"{where}: the rank must be a non-negative integer, found "
                               f"{rank_text[:40].decode('utf-8', 'replace')!r}")
        if len(rank_text) > MAX_DIGITS:
            raise BPEFileError(f"{where}: rank {shortened_number(rank_text.decode())} is too large (ranks are "
                               "0, 1, 2, ... up to the number of tokens)")
        rank = int(rank_text)
        if rank in line_of_rank:
            raise BPEFileError(f"{where}: rank {rank} is already given on line {line_of_rank[rank]}")
        if token in line_of_token:
            raise BPEFileError(f"{where}: token {token!r} is already given on line {line_of_token[token]}")
        line_of_rank[rank] = lineno
        line_of_token[token] = lineno
        tokens[rank] = token
    n = len(tokens)
    if n == 0:
        raise BPEFileError(f"{path}: no tokens")
    if max(tokens) != n - 1:
        missing = next(r for r in range(n) if r not in tokens)
        above = min(r for r in tokens if r > missing)
        raise BPEFileError(f"{path}: line {line_of_rank[above]}: rank {above} leaves a gap: rank {missing} is "
                           "missing (ranks must be 0, 1, 2, ... without gaps)")
    return [tokens[r] for r in range(n)]


# ------------------------------------------------------------- tokenizer.json
@lru_cache(maxsize=1)
def _byte_level_translation() -> dict[int, int]:
    """A ``str.translate`` table from GPT-2's byte alphabet to the bytes'
    code points (0-255), every other character below 256 to U+FFFF (which
    then fails to encode as Latin-1, as any character above 255 does)."""
    table = {c: 0xFFFF for c in range(256)}
    table.update((ord(ch), b) for ch, b in byte_decoder().items())
    return table


@lru_cache(maxsize=1)
def _byte_level_spelling() -> dict[int, int]:
    """A ``bytes.decode("latin-1").translate`` table: byte -> its GPT-2
    stand-in character (the inverse of :func:`byte_decoder`)."""
    return {b: ord(c) for c, b in byte_decoder().items()}


def byte_level_string(token: bytes) -> str:
    """GPT-2's byte-level spelling of a token, as tokenizer.json files write
    it (``b" world"`` -> ``"Ġworld"``).

    >>> byte_level_string(b" world")
    'Ġworld'
    """
    return token.decode("latin-1").translate(_byte_level_spelling())


def byte_level_bytes(token: str) -> bytes | None:
    """The bytes a byte-level token string stands for, or None when it holds
    a character outside GPT-2's byte alphabet."""
    table = byte_decoder()
    try:
        return bytes(table[c] for c in token)
    except KeyError:
        return None


#: Pre-tokenization pattern of HF's ByteLevel (use_regex=True): GPT-2's.
HF_BYTE_LEVEL_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

_NORMALIZERS = {"NFC", "NFD", "NFKC", "NFKD"}


@dataclass
class HFAdded:
    """One entry of ``added_tokens`` (HF ``AddedToken``)."""

    id: int
    content: str
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = True
    special: bool = False


@dataclass
class TokenizerJSON:
    """What segkit runs of a tokenizer.json: see :func:`read_tokenizer_json`."""

    tokens: list  # bytes (or None) per id: the model's byte-level vocabulary
    strings: dict  # id -> str for vocabulary entries that are not byte-level (decoded as UTF-8)
    merges: list  # (id, id) pairs in order
    pattern: str | tuple[str, ...] | None  # pre-tokenization regex, or a chain of them (None: one piece)
    normalizer: str | None  # "NFC", "NFD", "NFKC", "NFKD" or None
    ignore_merges: bool = False
    added: list = field(default_factory=list)  # HFAdded
    # The ids the post-processor puts before and after a text's
    # (TemplateProcessing, RobertaProcessing, BertProcessing); None: none.
    template: tuple[list[int], list[int]] | None = None
    # ByteLevel's add_prefix_space: after how many of the patterns a piece
    # gets a leading space (see RegexSplitter); None: never.
    prefix_at: int | None = None


def _bad(path, where: str, what: str) -> BPEFileError:
    return BPEFileError(f"{path}: {where}: {what}")


def _typed(path, where: str, value, kind, what: str):
    if isinstance(value, bool) and kind is not bool:
        raise _bad(path, where, f"expected {what}, found {value!r}")
    if not isinstance(value, kind):
        raise _bad(path, where, f"expected {what}, found {type(value).__name__} {str(value)[:60]!r}")
    return value


def _flag(path, obj: dict, key: str, where: str, default: bool) -> bool:
    v = obj.get(key, default)
    if v is None:
        return default
    return _typed(path, f"{where}.{key}", v, bool, "true or false")


def _normalizer(path, spec) -> str | None:
    if spec is None:
        return None
    _typed(path, "normalizer", spec, dict, "an object or null")
    kind = spec.get("type")
    if isinstance(kind, str) and kind in _NORMALIZERS:
        return kind
    if kind == "Sequence":
        parts = spec.get("normalizers")
        _typed(path, "normalizer.normalizers", parts, list, "a list")
        if not parts:
            return None
        if len(parts) == 1:
            return _normalizer(path, parts[0])
    raise _bad(path, "normalizer", f"segkit.BPE runs the normalizers NFC, NFD, NFKC and NFKD (or none); found "
                                   f"{json.dumps(spec)[:120]}")


def _byte_level(path, spec: dict, where: str) -> tuple[bool, bool]:
    """Check a ByteLevel pre-tokenizer; returns its ``(use_regex,
    add_prefix_space)``."""
    return _flag(path, spec, "use_regex", where, True), _flag(path, spec, "add_prefix_space", where, False)


def _split_regex(path, split, sw: str) -> str:
    """The regex of one Split pre-tokenizer (``sw``: its JSON path),
    checked: a String pattern is escaped; only Isolated, not inverted."""
    import regex as _re

    pat = split.get("pattern")
    _typed(path, f"{sw}.pattern", pat, dict, "an object")
    if "Regex" in pat:
        regex_text = _typed(path, f"{sw}.pattern.Regex", pat["Regex"], str, "a string")
    elif "String" in pat:
        regex_text = _re.escape(_typed(path, f"{sw}.pattern.String", pat["String"], str, "a string"))
    else:
        raise _bad(path, f"{sw}.pattern", f"expected Regex or String, found {json.dumps(pat)[:80]}")
    if split.get("behavior") != "Isolated":
        raise _bad(path, f"{sw}.behavior", f"segkit.BPE runs Split with behavior Isolated, found "
                                           f"{split.get('behavior')!r}")
    if _flag(path, split, "invert", sw, False):
        raise _bad(path, f"{sw}.invert", "segkit.BPE runs Split with invert=false, found true")
    try:
        _re.compile(regex_text)
    except Exception as e:  # regex.error
        raise _bad(path, f"{sw}.pattern.Regex", f"not a valid regular expression: {e}") from None
    return regex_text


def _pre_tokenizer(path, spec) -> tuple[str | tuple[str, ...] | None, int | None]:
    """The pre-tokenization of a byte-level BPE file: ``(pattern,
    prefix_at)``.  The pattern is one regex (str), a chain of regexes each
    splitting the pieces of the one before (a tuple: HF's Sequence of Split
    pre-tokenizers, DeepSeek's three), or None; ``prefix_at`` (ByteLevel's
    ``add_prefix_space``) is how many of the chain's patterns split before
    each piece is given a leading space if it has none (None: never)."""
    where = "pre_tokenizer"
    if spec is None:
        raise _bad(path, where, "segkit.BPE needs a ByteLevel pre-tokenizer (byte-level BPE), found null")
    _typed(path, where, spec, dict, "an object")
    kind = spec.get("type")
    if kind == "ByteLevel":
        use_regex, prefix = _byte_level(path, spec, where)
        return (HF_BYTE_LEVEL_PATTERN if use_regex else None), (0 if prefix else None)
    if kind == "Sequence":
        parts = _typed(path, f"{where}.pretokenizers", spec.get("pretokenizers"), list, "a list")
        if parts and all(isinstance(p, dict) for p in parts) and parts[-1].get("type") == "ByteLevel" \
                and all(p.get("type") == "Split" for p in parts[:-1]):
            chain = [_split_regex(path, p, f"{where}.pretokenizers[{k}]") for k, p in enumerate(parts[:-1])]
            use_regex, prefix = _byte_level(path, parts[-1], f"{where}.pretokenizers[{len(parts) - 1}]")
            prefix_at = len(chain) if prefix else None
            if use_regex:
                chain.append(HF_BYTE_LEVEL_PATTERN)  # its regex splits the pieces of the splits before
            if not chain:
                return None, prefix_at
            return (chain[0] if len(chain) == 1 else tuple(chain)), prefix_at
    raise _bad(path, where, "segkit.BPE runs a ByteLevel pre-tokenizer, or a Sequence of Split pre-tokenizers "
                            f"(Regex or String, Isolated) ending with a ByteLevel; found {json.dumps(spec)[:160]}")


def _special_ids(path, where: str, value, ids: dict[str, int], added: list) -> list[int]:
    """The ids of a post-processor's special token ``[name, id]`` (Roberta,
    Bert), checked against the vocabulary and the added tokens."""
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
            and type(value[1]) is int):
        raise _bad(path, where, f"expected [token, id], found {json.dumps(value)[:80]}")
    name, i = value
    known = {a.content: a.id for a in added}
    if ids.get(name, known.get(name)) != i:
        raise _bad(path, where, f"{name!r} has id {ids.get(name, known.get(name))} in the file's vocabulary and "
                                f"added tokens, not {i}")
    return [i]


def _template(path, where: str, spec: dict, ids: dict[str, int], added: list) -> tuple[list[int], list[int]]:
    """The ids before and after the text of a TemplateProcessing's ``single``."""
    from ..pipeline.template import _pieces

    try:
        single = _pieces(spec.get("single"), "single")
        _pieces(spec.get("pair", ["$A", "$B"]), "pair")
    except ValueError as e:
        raise _bad(path, where, str(e)) from None
    table = spec.get("special_tokens", {})
    _typed(path, f"{where}.special_tokens", table, dict, "an object")
    before: list[int] = []
    after: list[int] = []
    seen_a = False
    for piece in single:
        if "Sequence" in piece:
            seen_a = True
            continue
        name = piece["SpecialToken"]["id"]
        entry = table.get(name)
        w = f"{where}.special_tokens[{name!r}]"
        if not isinstance(entry, dict):
            raise _bad(path, w, f"the template's special token {name!r} is not in special_tokens")
        got = entry.get("ids")
        if not isinstance(got, list) or not got or not all(type(i) is int and 0 <= i < (1 << 31) - 1 for i in got):
            raise _bad(path, f"{w}.ids", f"expected a non-empty list of ids, found {json.dumps(got)[:80]}")
        (after if seen_a else before).extend(got)
    if not seen_a:
        raise _bad(path, f"{where}.single", "segkit.BPE runs templates whose single sequence holds $A; found none")
    return before, after


def _post_processor(path, spec, ids: dict[str, int], added: list, where: str = "post_processor"):
    """What a post-processor adds to a text's ids: ``(before, after)`` or
    None.  ByteLevel adds nothing (its ``trim_offsets`` concerns offsets);
    TemplateProcessing, RobertaProcessing and BertProcessing add their
    special tokens around the text; a Sequence, what its parts add."""
    if spec is None:
        return None
    _typed(path, where, spec, dict, "an object or null")
    kind = spec.get("type")
    if kind == "ByteLevel":
        return None
    if kind == "TemplateProcessing":
        return _template(path, where, spec, ids, added)
    if kind in ("RobertaProcessing", "BertProcessing"):
        cls_ = _special_ids(path, f"{where}.cls", spec.get("cls"), ids, added)
        sep = _special_ids(path, f"{where}.sep", spec.get("sep"), ids, added)
        return cls_, sep
    if kind == "Sequence":
        parts = _typed(path, f"{where}.processors", spec.get("processors"), list, "a list")
        found = [r for k, p in enumerate(parts)
                 if (r := _post_processor(path, p, ids, added, f"{where}.processors[{k}]")) is not None]
        if len(found) > 1:
            raise _bad(path, where, "two post-processors that add special tokens: segkit.BPE runs one")
        return found[0] if found else None
    raise _bad(path, where, "segkit.BPE runs the post-processors ByteLevel, TemplateProcessing, RobertaProcessing, "
                            f"BertProcessing and Sequence of them; found {json.dumps(spec)[:160]}")


def _components(path, data: dict) -> None:
    dec = data.get("decoder")
    if dec is not None and not (isinstance(dec, dict) and dec.get("type") == "ByteLevel"):
        raise _bad(path, "decoder", f"segkit.BPE decodes byte-level tokens (ByteLevel decoder); found "
                                    f"{json.dumps(dec)[:160]}")
    for key in ("truncation", "padding"):
        if data.get(key) is not None:
            raise _bad(path, key, f"segkit.BPE does not truncate or pad; found {json.dumps(data[key])[:120]}")


def _model(path, model) -> tuple[dict, list, bool]:
    _typed(path, "model", model, dict, "an object")
    kind = model.get("type", "BPE" if "merges" in model else None)
    if kind != "BPE":
        raise _bad(path, "model.type", f"segkit.BPE reads BPE models, found {kind!r}")
    dropout = model.get("dropout")
    if dropout not in (None, 0, 0.0):
        raise _bad(path, "model.dropout", f"segkit.BPE is deterministic (dropout null or 0), found {dropout!r}")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key) not in (None, ""):
            raise _bad(path, f"model.{key}", f"segkit.BPE runs byte-level BPE without one, found {model[key]!r}")
    vocab = _typed(path, "model.vocab", model.get("vocab"), dict, "an object of token -> id")
    merges = _typed(path, "model.merges", model.get("merges"), list, "a list")
    ignore = _flag(path, model, "ignore_merges", "model", False)
    return vocab, merges, ignore


def _no_surrogate(path, where: str, text: str, what: str) -> None:
    """A lone surrogate (a ``"\\ud800"`` escape: JSON allows it, UTF-8 has
    no form for it) is an error naming the JSON path."""
    at = first_surrogate(text)
    if at >= 0:
        raise _bad(path, where, f"{what} holds a lone surrogate U+{ord(text[at]):04X} at character {at}, which "
                                "has no UTF-8")


def _added_tokens(path, entries, ids: dict[str, int]) -> list[HFAdded]:
    """The ``added_tokens`` with the ids HuggingFace ``tokenizers`` gives them
    (``Tokenizer.from_str`` adds them in file order, as ``add_tokens``): a
    content that is a token of the model vocabulary has the model's id; one
    already added keeps its id (the later entry's options win); any other
    is the next free id, ``max(len(model.vocab), largest id given so far + 1)``
    (a content of the model vocabulary does not count, whatever its id),
    whatever id the file gives it; an empty content is skipped.  A file
    whose new ids would be ids of the model vocabulary (which has gaps) is
    refused: HF would give two tokens one id."""
    out: dict[str, HFAdded] = {}
    renumbered = None
    vocab_size = len(ids)
    taken = set(ids.values())
    top = -1  # the largest id given to a content not in model.vocab
    for k, entry in enumerate(_typed(path, "added_tokens", entries or [], list, "a list")):
        w = f"added_tokens[{k}]"
        _typed(path, w, entry, dict, "an object")
        content = _typed(path, f"{w}.content", entry.get("content"), str, "a string")
        _no_surrogate(path, f"{w}.content", content, "the content")
        i = entry.get("id")
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < (1 << 31) - 1:
            raise _bad(path, f"{w}.id", f"expected an id, found {i!r}")
        flags = (_flag(path, entry, "single_word", w, False), _flag(path, entry, "lstrip", w, False),
                 _flag(path, entry, "rstrip", w, False), _flag(path, entry, "normalized", w, True),
                 _flag(path, entry, "special", w, False))
        if not content:
            continue
        if content in ids:
            given = ids[content]
        elif content in out:
            given = out[content].id
        else:
            given = top = max(vocab_size, top + 1)
            if given in taken:
                raise _bad(path, f"{w}.id", f"HuggingFace gives added token {content!r:.60} id {given} (the next "
                                            f"id after the model's {vocab_size} tokens and the tokens added "
                                            f"before it, whatever the file says: {i}), which is the id of a token "
                                            "of model.vocab; the file is inconsistent")
        if given != i and renumbered is None:
            renumbered = (w, content, i, given)
        taken.add(given)
        out[content] = HFAdded(given, content, *flags)
    if renumbered is not None:
        w, content, i, given = renumbered
        warnings.warn(f"{path}: {w}: added token {content!r:.60} has id {i} in the file; it gets id {given}, "
                      "as HuggingFace tokenizers gives it (the next free id)", stacklevel=4)
    return list(out.values())


def read_tokenizer_json(path: str | os.PathLike, raw: bytes | None = None, data: dict | None = None) -> TokenizerJSON:
    """The parts of a HuggingFace tokenizer.json that :class:`segkit.BPE` runs.

    Supported: model BPE (no dropout, no subword prefix/suffix; ``ignore_merges``
    honoured), pre-tokenizer ByteLevel or Sequence[Split(Regex or String,
    Isolated), ..., ByteLevel] (``add_prefix_space`` either way),
    normalizer none or NFC/NFD/NFKC/NFKD, post-processor none, ByteLevel,
    TemplateProcessing, RobertaProcessing, BertProcessing or a Sequence of
    them, decoder none or ByteLevel, and ``added_tokens``.  Anything else is a
    :class:`BPEFileError` naming the component.
    """
    path = Path(path)
    if data is None:  # (``raw``: the file's bytes, ``data`` its JSON, when the caller has them)
        if raw is None:
            raw = read_regular(path, "tokenizer.json", BPEFileError)  # a FIFO would block, /dev/zero fill memory
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise BPEFileError(f"{path}: not UTF-8 (byte {e.start})") from None
        except (ValueError, RecursionError) as e:
            raise BPEFileError(f"{path}: not valid JSON ({e})") from None
    _typed(path, "top level", data, dict, "an object")
    vocab, merges_raw, ignore = _model(path, data.get("model"))
    pattern, prefix_at = _pre_tokenizer(path, data.get("pre_tokenizer"))
    normalizer = _normalizer(path, data.get("normalizer"))
    _components(path, data)

    ids: dict[str, int] = vocab
    values = list(vocab.values())
    if first_surrogate("".join(vocab)) >= 0 or not all(type(i) is int for i in values) \
            or (values and not 0 <= min(values) <= max(values) < (1 << 31) - 1):
        ids = {}  # one of them is bad: find it, and name it
        for s, i in vocab.items():
            _no_surrogate(path, f"model.vocab[{s!r:.60}]", s, "the token")
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < (1 << 31) - 1:
                raise _bad(path, f"model.vocab[{s!r}]", f"expected an id (0 <= id < 2**31 - 1), found {i!r}")
    top = max(values, default=-1)
    if top > 16 * len(ids) + 1024:
        raise _bad(path, "model.vocab", f"ids up to {top} for {len(ids)} tokens: too sparse")
    added = _added_tokens(path, data.get("added_tokens", []), ids)
    tokens: list = [None] * (top + 1)
    strings: dict[int, str] = {}
    table = _byte_level_translation()
    for s, i in ids.items():
        try:
            b = s.translate(table).encode("latin-1")
        except UnicodeEncodeError:  # a character outside GPT-2's byte alphabet
            b = b""
        if not b:
            strings[i] = s
            continue
        if tokens[i] is not None:
            raise _bad(path, f"model.vocab[{s!r}]", f"id {i} is also the id of another token")
        tokens[i] = b
    merges = _merge_ids(merges_raw, ids, tokens)
    if merges is None:  # one of them is bad: find it, and name it
        merges = _checked_merges(path, merges_raw, ids, tokens)
    template = _post_processor(path, data.get("post_processor"), ids, added)
    if template is not None:
        known = set(ids.values()) | {a.id for a in added}
        for i in template[0] + template[1]:
            if i not in known:
                raise _bad(path, "post_processor", f"special token id {i} is no id of the vocabulary or the "
                                                   "added tokens")
    return TokenizerJSON(tokens, strings, merges, pattern, normalizer, ignore, added, template, prefix_at)


def _merge_ids(merges_raw: list, ids: dict[str, int], tokens: list) -> list[tuple[int, int]] | None:
    """The id pairs of well-formed merges (``"a b"`` or ``[a, b]`` of
    byte-level tokens whose concatenation is a token), or None if any is
    not (:func:`_checked_merges` then names it)."""
    try:
        parts = [m.split(" ") if type(m) is str else m for m in merges_raw]
        pairs = [(ids[a], ids[b]) for a, b in parts]
        if not all(type(a) is str and type(b) is str and a + b in ids for a, b in parts):
            return None
    except (KeyError, ValueError, TypeError, AttributeError):
        return None
    if pairs:
        byte_level = np.fromiter((t is not None for t in tokens), np.bool_, len(tokens))
        if not byte_level[np.asarray(pairs, dtype=np.int64)].all():
            return None
    return pairs


def _checked_merges(path, merges_raw: list, ids: dict[str, int], tokens: list) -> list[tuple[int, int]]:
    merges: list[tuple[int, int]] = []
    for k, m in enumerate(merges_raw):
        w = f"model.merges[{k}]"
        if isinstance(m, str):
            parts = m.split(" ")
        elif isinstance(m, list):
            parts = m
        else:
            raise _bad(path, w, f"expected 'a b' or [a, b], found {type(m).__name__}")
        if len(parts) != 2 or not all(isinstance(p, str) for p in parts):
            raise _bad(path, w, f"expected two tokens, found {str(m)[:80]!r}")
        a, b = parts
        for part in (a, b, a + b):
            if part not in ids:
                raise _bad(path, w, f"{part!r} is not in the vocabulary")
        if tokens[ids[a]] is None or tokens[ids[b]] is None:
            raise _bad(path, w, f"merge {a!r} {b!r} of tokens that are not byte-level")
        merges.append((ids[a], ids[b]))
    return merges


def normalize(form: str | None, text: str) -> str:
    """``text`` through a tokenizer.json normalizer (see :func:`read_tokenizer_json`)."""
    return text if form is None else unicodedata.normalize(form, text)
