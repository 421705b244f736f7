"""The ``.segkit`` model file: one file, loaded by memory-mapping, no code.

Layout (all integers little-endian)::

    0   8 bytes   magic  b"SEGKIT\\n\\x00"
    8   uint32    format version
    12  uint32    header length H
    16  uint32    CRC-32 of the header
    20  uint32    CRC-32 of the data section
    24  H bytes   header: UTF-8 JSON
    ... zero padding to a multiple of 64
    data section: every array and blob at a 64-byte aligned offset

The JSON header holds the preset name, its configuration, and for each array
its dtype, shape, offset and size (offsets relative to the data section).
Loading reads the file into memory once and views arrays into that copy
with numpy: nothing is unpickled or executed, every header field is checked,
and a file that is truncated, corrupted, malformed or of a newer format
version raises :class:`ModelFileError` naming the problem.  The presets then
validate what the arrays hold (:mod:`segkit.models.saving`).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ..runtime.regular_files import open_regular

MAGIC = b"SEGKIT\n\x00"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIIII")
_ALIGN = 64
_DTYPES = {"<i4", "<i8", "<u4", "|u1", "|i1", "<u2", "<i2"}


class ModelFileError(ValueError):
    """A model file cannot be loaded; the message names the file and the problem."""


def _pad(n: int) -> int:
    return (-n) % _ALIGN


def write_model(
    path: str | os.PathLike,
    preset: str,
    config: dict[str, Any],
    arrays: dict[str, np.ndarray],
    blobs: dict[str, bytes] | None = None,
) -> None:
    """Write a model file atomically (to a temporary name, then renamed)."""
    blobs = blobs or {}
    entries: dict[str, Any] = {}
    chunks: list[bytes] = []
    offset = 0
    for name, arr in arrays.items():
        arr = np.ascontiguousarray(arr)
        dt = arr.dtype.newbyteorder("<") if arr.dtype.byteorder == ">" else arr.dtype
        arr = arr.astype(dt, copy=False)
        if dt.str not in _DTYPES:
            raise TypeError(f"array {name!r}: dtype {dt} cannot be stored")
        raw = arr.tobytes()
        entries[name] = {"kind": "array", "dtype": dt.str, "shape": list(arr.shape), "offset": offset, "nbytes": len(raw)}
        chunks.append(raw + b"\0" * _pad(len(raw)))
        offset += len(raw) + _pad(len(raw))
    for name, raw in blobs.items():
        entries[name] = {"kind": "blob", "offset": offset, "nbytes": len(raw)}
        chunks.append(bytes(raw) + b"\0" * _pad(len(raw)))
        offset += len(raw) + _pad(len(raw))
    data = b"".join(chunks)
    header = json.dumps(
        {"preset": preset, "config": config, "entries": entries, "data_nbytes": len(data)},
        ensure_ascii=False,
        sort_keys=True,
    ).encode("utf-8")
    prefix = _PREFIX.pack(MAGIC, FORMAT_VERSION, len(header), zlib.crc32(header), zlib.crc32(data))
    head = prefix + header
    head += b"\0" * _pad(len(head))
    path = Path(path)
    # A fresh name opened with O_EXCL|O_NOFOLLOW: a file or link planted at
    # a predictable name (in a shared folder) is never written through.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    while True:
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with open(fd, "wb") as fh:
            fh.write(head)
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            tmp.unlink()


class LoadedModel:
    """What :func:`read_model` returns: preset name, config, arrays, blobs."""

    __slots__ = ("preset", "config", "arrays", "blobs", "path")

    def __init__(self, preset: str, config: dict, arrays: dict, blobs: dict, path: Path):
        self.preset = preset
        self.config = config
        self.arrays = arrays
        self.blobs = blobs
        self.path = path


def _read_all(path: Path) -> np.ndarray:
    """The bytes of a regular file, copied into a read-only uint8 array.

    A directory, FIFO, device or socket is refused before it is opened (a
    FIFO would block the open until a writer appears).  The file is read,
    not mapped: the kernels then never see bytes that change after they were
    validated, and truncating or rewriting the file under a running process
    cannot crash it (a mapping would give SIGBUS past a truncated end).
    """
    with open_regular(path, "segkit model", ModelFileError) as fh:
        st = os.fstat(fh.fileno())
        size = st.st_size
        buf = np.empty(size, dtype=np.uint8)
        view = memoryview(buf)
        got = 0
        while got < size:
            n = fh.readinto(view[got:])
            if not n:
                raise ModelFileError(f"{path}: truncated while being read ({got} of {size} bytes)")
            got += n
    buf.setflags(write=False)
    return buf


def _int_field(value: object, what: str, path: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelFileError(f"{path}: header field {what} must be a non-negative int, found {value!r:.80}")
    return value


def read_model(path: str | os.PathLike, *, verify: bool = True) -> LoadedModel:
    """Read a model file; arrays are read-only views of one in-memory copy.

    Everything the header says is checked (types, offsets, sizes, dtypes),
    so that any byte string either gives arrays and blobs that lie inside
    the data section or raises :class:`ModelFileError`.  What the arrays
    hold is the preset's to validate.

    Parameters
    ----------
    verify
        Check the CRC-32 of the data section (a few milliseconds for a BERT
        vocabulary).  The header is always checked.
    """
    path = Path(path)
    buf = _read_all(path)
    size = buf.size
    if size < _PREFIX.size:
        raise ModelFileError(f"{path}: not a segkit model file ({size} bytes, too short for the header)")
    magic, version, hlen, hcrc, dcrc = _PREFIX.unpack_from(buf, 0)
    if magic != MAGIC:
        raise ModelFileError(f"{path}: not a segkit model file (bad magic bytes {magic!r})")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: model file format version {version} is newer than this segkit supports "
            f"({FORMAT_VERSION}); upgrade segkit"
        )
    if version < 1:
        raise ModelFileError(f"{path}: invalid model file format version {version}")
    hend = _PREFIX.size + hlen
    if hend > size:
        raise ModelFileError(f"{path}: truncated (header needs {hend} bytes, file has {size})")
    header_raw = buf[_PREFIX.size : hend].tobytes()
    if zlib.crc32(header_raw) != hcrc:
        raise ModelFileError(f"{path}: corrupted header (checksum mismatch)")
    try:
        header = json.loads(header_raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ModelFileError(f"{path}: unreadable header ({type(e).__name__}: {str(e)[:200]})") from None
    if not isinstance(header, dict):
        raise ModelFileError(f"{path}: header is a JSON {type(header).__name__}, expected an object")
    preset, config, entries = header.get("preset"), header.get("config"), header.get("entries")
    if not isinstance(preset, str) or not isinstance(config, dict) or not isinstance(entries, dict):
        raise ModelFileError(f"{path}: header lacks a preset name, a config object or an entries object")
    data_start = hend + _pad(hend)
    data_nbytes = _int_field(header.get("data_nbytes"), "data_nbytes", path)
    if data_start + data_nbytes > size:
        raise ModelFileError(
            f"{path}: truncated (data section needs {data_start + data_nbytes} bytes, file has {size})"
        )
    if verify and zlib.crc32(buf[data_start : data_start + data_nbytes]) != dcrc:
        raise ModelFileError(f"{path}: corrupted data (checksum mismatch)")
    arrays: dict[str, np.ndarray] = {}
    blobs: dict[str, memoryview] = {}
    for name, e in entries.items():
        if not isinstance(e, dict) or e.get("kind") not in ("array", "blob"):
            raise ModelFileError(f"{path}: entry {name!r} is not an array or blob description")
        offset = _int_field(e.get("offset"), f"{name}.offset", path)
        nbytes = _int_field(e.get("nbytes"), f"{name}.nbytes", path)
        if offset % _ALIGN or offset + nbytes > data_nbytes:
            raise ModelFileError(f"{path}: entry {name!r} lies outside the data section or is not aligned")
        start = data_start + offset
        if e["kind"] == "array":
            dtype, shape = e.get("dtype"), e.get("shape")
            if not isinstance(dtype, str) or dtype not in _DTYPES:
                raise ModelFileError(f"{path}: entry {name!r} has unsupported dtype {dtype!r:.80}")
            if not isinstance(shape, list) or len(shape) > 8:
                raise ModelFileError(f"{path}: entry {name!r} has shape {shape!r:.80}, expected a list of sizes")
            shape = tuple(_int_field(x, f"{name}.shape", path) for x in shape)
            dt = np.dtype(dtype)
            if math.prod(shape) * dt.itemsize != nbytes:
                raise ModelFileError(f"{path}: entry {name!r}: shape {shape} does not match {nbytes} bytes")
            arrays[name] = buf[start : start + nbytes].view(dt).reshape(shape)
        else:
            blobs[name] = memoryview(buf[start : start + nbytes])
    return LoadedModel(preset, config, arrays, blobs, path)
