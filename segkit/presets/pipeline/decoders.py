"""HF ``tokenizers``' decoders, read from a tokenizer.json: tokens (strings)
in, text out.

Read here: ``Sequence``, ``Replace`` (String or Regex), ``ByteLevel``, ``ByteFallback``,
``Fuse``, ``Strip``, ``Metaspace``, ``WordPiece`` and ``BPEDecoder``.
Each runs HF's ``decode_chain`` (tokens to tokens); the text is the last
tokens joined.  With no decoder, tokens are joined with spaces.

>>> dec = read_decoder({"type": "Sequence", "decoders": [
...     {"type": "Replace", "pattern": {"String": "\\u2581"}, "content": " "},
...     {"type": "ByteFallback"}, {"type": "Fuse"},
...     {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}, "tokenizer.json")
>>> dec(["\\u2581Hi", "\\u2581", "<0xE2>", "<0x82>", "<0xAC>", "!"])
'Hi €!'
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .normalizers import bad, read_pattern, read_steps, shown

Chain = Callable[[list], list]

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>\Z")


def _byte_fallback(tokens: list) -> list:
    out: list[str] = []
    run = bytearray()

    def flush() -> None:
        if run:
            try:
                out.append(run.decode("utf-8"))
            except UnicodeDecodeError:
                out.extend(["\ufffd"] * len(run))
            run.clear()

    for t in tokens:
        m = _BYTE_TOKEN.match(t) if len(t) == 6 else None
        if m:
            run.append(int(m.group(1), 16))
        else:
            flush()
            out.append(t)
    flush()
    return out


def _byte_level(tokens: list) -> list:
    """HF's ``ByteLevel`` decoder: the bytes the tokens' characters stand
    for (a token with a character outside the alphabet: its UTF-8), as
    UTF-8 with U+FFFD for what is not."""
    from ...runtime.byte_level import byte_decoder

    table = byte_decoder()
    out = bytearray()
    for t in tokens:
        try:
            out += bytes(table[c] for c in t)
        except KeyError:
            out += t.encode("utf-8", "surrogatepass")
    return [out.decode("utf-8", "replace")]


def _strip(content: str, start: int, stop: int) -> Chain:
    def chain(tokens: list) -> list:
        out = []
        for t in tokens:
            a = 0
            for i in range(min(start, len(t))):
                if t[i] != content:
                    break
                a = i + 1
            b = len(t)
            for i in range(min(stop, len(t))):
                j = len(t) - i - 1
                if t[j] != content:
                    break
                b = j
            out.append(t[a:b] if a < b else "")
        return out

    return chain


def _metaspace(rep: str, scheme: str) -> Chain:
    def chain(tokens: list) -> list:
        out = []
        for i, t in enumerate(tokens):
            if i == 0 and scheme != "never":
                out.append(t.replace(rep, ""))
            else:
                out.append(t.replace(rep, " "))
        return out

    return chain


def _wordpiece(prefix: str, cleanup: bool) -> Chain:
    def chain(tokens: list) -> list:
        out = []
        for i, t in enumerate(tokens):
            if i != 0:
                t = t[len(prefix):] if t.startswith(prefix) else " " + t
            if cleanup:
                t = _cleanup(t)
            out.append(t)
        return out

    return chain


def _cleanup(s: str) -> str:
    """HF's ``cleanup`` (``clean_up_tokenization_spaces``)."""
    for a, b in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
                 (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        s = s.replace(a, b)
    return s


def _bpe_decoder(suffix: str) -> Chain:
    def chain(tokens: list) -> list:
        n = len(tokens)
        return [t.replace(suffix, "" if i == n - 1 else " ") for i, t in enumerate(tokens)]

    return chain


def _int(spec: dict, key: str, source: str, where: str) -> int:
    v = spec.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise bad(source, f"{where}.{key}", f"expected a non-negative integer, found {shown(v)}")
    return v


def read_chain(spec: Any, source: str, where: str) -> Chain:
    if not isinstance(spec, dict):
        raise bad(source, where, f"expected an object, found {shown(spec)}")
    kind = spec.get("type")
    if kind == "Sequence":
        steps = read_steps(spec, "decoders", read_chain, source, where)

        def sequence(tokens: list) -> list:
            for step in steps:
                tokens = step(tokens)
            return tokens

        return sequence
    if kind == "Replace":
        find, _ = read_pattern(spec.get("pattern"), source, f"{where}.pattern")
        content = spec.get("content")
        if not isinstance(content, str):
            raise bad(source, f"{where}.content", f"expected a string, found {shown(content)}")

        def replace(tokens: list) -> list:
            out = []
            for t in tokens:
                pieces, last = [], 0
                for a, b in find(t):
                    pieces.append(t[last:a])
                    pieces.append(content)
                    last = b
                pieces.append(t[last:])
                out.append("".join(pieces))
            return out

        return replace
    if kind == "ByteFallback":
        return _byte_fallback
    if kind == "ByteLevel":
        return _byte_level
    if kind == "Fuse":
        return lambda tokens: ["".join(tokens)]
    if kind == "Strip":
        content = spec.get("content")
        if not isinstance(content, str) or len(content) != 1:
            raise bad(source, f"{where}.content", f"expected one character, found {shown(content)}")
        return _strip(content, _int(spec, "start", source, where), _int(spec, "stop", source, where))
    if kind == "Metaspace":
        rep = spec.get("replacement")
        if not isinstance(rep, str) or len(rep) != 1:
            raise bad(source, f"{where}.replacement", f"expected one character, found {shown(rep)}")
        scheme = spec.get("prepend_scheme", "always")
        if spec.get("add_prefix_space") is False:
            scheme = "never"
        if scheme not in ("always", "first", "never"):
            raise bad(source, f"{where}.prepend_scheme", f"expected 'always', 'first' or 'never', found "
                      f"{shown(scheme)}")
        return _metaspace(rep, scheme)
    if kind == "WordPiece":
        prefix = spec.get("prefix", "##")
        cleanup = spec.get("cleanup", True)
        if not isinstance(prefix, str) or not isinstance(cleanup, bool):
            raise bad(source, where, f"expected a string prefix and a boolean cleanup, found {shown(spec)}")
        return _wordpiece(prefix, cleanup)
    if kind == "BPEDecoder":
        suffix = spec.get("suffix", "</w>")
        if not isinstance(suffix, str):
            raise bad(source, f"{where}.suffix", f"expected a string, found {shown(suffix)}")
        return _bpe_decoder(suffix)
    raise bad(source, f"{where}.type", "this pipeline runs the decoders Sequence, Replace, ByteLevel, ByteFallback, "
              "Fuse, Strip, "
              f"Metaspace, WordPiece and BPEDecoder; found {shown(kind)}")


def read_decoder(spec: Any, source: str, where: str = "decoder") -> Callable[[list], str]:
    """``tokens -> text`` for a tokenizer.json's ``decoder`` (null: tokens
    joined with spaces, as HF does)."""
    if spec is None:
        return " ".join
    chain = read_chain(spec, source, where)
    return lambda tokens: "".join(chain(list(tokens)))
