"""A small reader of the protobuf wire format, for SentencePiece's
``ModelProto`` (``sentencepiece_model.proto``), with no protobuf library.

Only what a ``.model`` file uses is read: the message is described by a
*schema* (field number -> name, kind, repeated), fields that the schema
does not name are skipped (as protobuf does with unknown fields), and
every value is checked against its kind.  Any byte string gives a dict of
the fields found or a :class:`~segkit.models.files.ModelFileError` naming
the file, the field (``trainer_spec.model_type``) and what was found.

Wire format (protobuf's encoding documentation): a field is a varint
key ``number << 3 | wire_type``; wire type 0 is a varint, 1 eight bytes,
2 a varint length and that many bytes (strings, bytes, sub-messages),
5 four bytes; 3 and 4 (groups) are not used by this schema and refused.
A scalar field given twice keeps the last value, a sub-message given twice
is merged, as protobuf does.
"""

from __future__ import annotations

import struct
from typing import Any

from ...models.files import ModelFileError

_FLOAT = struct.Struct("<f")

# Kinds: "string" (UTF-8), "bytes", "int32", "uint64", "bool", "float",
# ("enum", {value: name}), or a nested schema (dict).
Schema = dict


def _varint(data: bytes, pos: int, end: int, source: str, where: str) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= end:
            raise ModelFileError(f"{source}: {where}: the file ends inside a varint (truncated or not a .model file)")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise ModelFileError(f"{source}: {where}: a varint longer than 10 bytes (not a .model file)")


def _signed32(v: int) -> int:
    v &= 0xFFFFFFFFFFFFFFFF
    if v >= 1 << 63:
        v -= 1 << 64
    if not -(1 << 31) <= v < 1 << 31:
        raise ValueError(v)
    return v


def parse(data: bytes, schema: Schema, source: str, where: str = "", start: int = 0, end: int | None = None) -> dict:
    """The fields of one message: ``{name: value}`` (a list for repeated
    fields), only those present.

    >>> parse(b"\\x08\\x02\\x12\\x01a", {1: ("n", "int32", False), 2: ("s", "string", True)}, "f")
    {'n': 2, 's': ['a']}
    """
    end = len(data) if end is None else end
    out: dict[str, Any] = {}
    pos = start
    prefix = f"{where}." if where else ""
    while pos < end:
        key, pos = _varint(data, pos, end, source, f"{where or 'ModelProto'} (a field key)")
        number, wire = key >> 3, key & 7
        spec = schema.get(number)
        name = f"{prefix}{spec[0]}" if spec else f"{prefix}field {number}"
        if number == 0:
            raise ModelFileError(f"{source}: {where or 'ModelProto'}: field number 0 (not a .model file)")
        if wire == 0:
            value, pos = _varint(data, pos, end, source, name)
        elif wire == 1:
            if pos + 8 > end:
                raise ModelFileError(f"{source}: {name}: the file ends inside an 8-byte value")
            value = data[pos : pos + 8]
            pos += 8
        elif wire == 2:
            n, pos = _varint(data, pos, end, source, name)
            if n > end - pos:
                raise ModelFileError(f"{source}: {name}: a length of {n} bytes, but only {end - pos} remain")
            value = (pos, pos + n)
            pos += n
        elif wire == 5:
            if pos + 4 > end:
                raise ModelFileError(f"{source}: {name}: the file ends inside a 4-byte value")
            value = data[pos : pos + 4]
            pos += 4
        else:
            raise ModelFileError(f"{source}: {name}: wire type {wire} (groups or invalid), which .model files do not use")
        if spec is None:
            continue
        field, kind, repeated = spec
        v = _convert(data, value, wire, kind, source, name)
        if repeated:
            out.setdefault(field, []).append(v)
        elif isinstance(kind, dict) and field in out:
            out[field].update(v)  # a message given twice is merged
        else:
            out[field] = v
    return out


_WIRE = {"string": 2, "bytes": 2, "int32": 0, "uint64": 0, "bool": 0, "float": 5}


def _convert(data: bytes, value: Any, wire: int, kind: Any, source: str, name: str) -> Any:
    expected = 2 if isinstance(kind, dict) else 0 if isinstance(kind, tuple) else _WIRE[kind]
    if wire != expected:
        raise ModelFileError(f"{source}: {name}: expected wire type {expected} for a {kind if isinstance(kind, str) else 'message' if isinstance(kind, dict) else 'enum'}, found {wire}")
    if isinstance(kind, dict):
        return parse(data, kind, source, name, value[0], value[1])
    if isinstance(kind, tuple):
        try:
            v = _signed32(value)
        except ValueError:
            raise ModelFileError(f"{source}: {name}: an enum value out of the int32 range: {value}") from None
        if v not in kind[1]:
            raise ModelFileError(f"{source}: {name}: expected one of {sorted(kind[1].items())}, found {v}")
        return kind[1][v]
    if kind == "string":
        raw = data[value[0] : value[1]]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ModelFileError(f"{source}: {name}: not UTF-8 ({e.reason} at byte {e.start}): {raw[:40]!r}") from None
    if kind == "bytes":
        return data[value[0] : value[1]]
    if kind == "int32":
        try:
            return _signed32(value)
        except ValueError:
            raise ModelFileError(f"{source}: {name}: expected an int32, found {value}") from None
    if kind == "uint64":
        return value & 0xFFFFFFFFFFFFFFFF
    if kind == "bool":
        return value != 0
    if kind == "float":
        return _FLOAT.unpack(value)[0]
    raise AssertionError(kind)


MODEL_TYPES = {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}
PIECE_TYPES = {1: "NORMAL", 2: "UNKNOWN", 3: "CONTROL", 4: "USER_DEFINED", 5: "UNUSED", 6: "BYTE"}

PIECE = {1: ("piece", "string", False), 2: ("score", "float", False), 3: ("type", ("enum", PIECE_TYPES), False)}

TRAINER_SPEC = {
    3: ("model_type", ("enum", MODEL_TYPES), False),
    4: ("vocab_size", "int32", False),
    21: ("split_by_unicode_script", "bool", False),
    23: ("split_by_number", "bool", False),
    22: ("split_by_whitespace", "bool", False),
    24: ("treat_whitespace_as_suffix", "bool", False),
    26: ("allow_whitespace_only_pieces", "bool", False),
    25: ("split_digits", "bool", False),
    35: ("byte_fallback", "bool", False),
    40: ("unk_id", "int32", False),
    41: ("bos_id", "int32", False),
    42: ("eos_id", "int32", False),
    43: ("pad_id", "int32", False),
    45: ("unk_piece", "string", False),
    46: ("bos_piece", "string", False),
    47: ("eos_piece", "string", False),
    48: ("pad_piece", "string", False),
    44: ("unk_surface", "string", False),
}

NORMALIZER_SPEC = {
    1: ("name", "string", False),
    2: ("precompiled_charsmap", "bytes", False),
    3: ("add_dummy_prefix", "bool", False),
    4: ("remove_extra_whitespaces", "bool", False),
    5: ("escape_whitespaces", "bool", False),
    6: ("normalization_rule_tsv", "string", False),
}

MODEL = {
    1: ("pieces", PIECE, True),
    2: ("trainer_spec", TRAINER_SPEC, False),
    3: ("normalizer_spec", NORMALIZER_SPEC, False),
    5: ("denormalizer_spec", NORMALIZER_SPEC, False),
}

#: proto2 defaults of the fields read (a field absent from the file has these)
TRAINER_DEFAULTS = {
    "model_type": "UNIGRAM", "vocab_size": 8000, "split_by_unicode_script": True, "split_by_number": True,
    "split_by_whitespace": True, "treat_whitespace_as_suffix": False, "allow_whitespace_only_pieces": False,
    "split_digits": False, "byte_fallback": False, "unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1,
    "unk_piece": "<unk>", "bos_piece": "<s>", "eos_piece": "</s>", "pad_piece": "<pad>", "unk_surface": " \u2047 ",
}
NORMALIZER_DEFAULTS = {
    "name": "", "precompiled_charsmap": b"", "add_dummy_prefix": True, "remove_extra_whitespaces": True,
    "escape_whitespaces": True, "normalization_rule_tsv": "",
}


def read_model_proto(data: bytes, source: str) -> dict:
    """``ModelProto`` as dicts with proto2's defaults filled in:
    ``pieces`` (list of ``{"piece", "score", "type"}``), ``trainer_spec``,
    ``normalizer_spec``, ``denormalizer_spec`` (None when absent)."""
    raw = parse(data, MODEL, source)
    pieces = []
    for i, p in enumerate(raw.get("pieces", [])):
        pieces.append({"piece": p.get("piece", ""), "score": p.get("score", 0.0), "type": p.get("type", "NORMAL")})
    trainer = {**TRAINER_DEFAULTS, **raw.get("trainer_spec", {})}
    normalizer = {**NORMALIZER_DEFAULTS, **raw.get("normalizer_spec", {})}
    denorm = raw.get("denormalizer_spec")
    return {
        "pieces": pieces,
        "trainer_spec": trainer,
        "normalizer_spec": normalizer,
        "denormalizer_spec": None if denorm is None else {**NORMALIZER_DEFAULTS, **denorm},
    }
