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
Loading parses JSON and maps arrays with numpy: nothing is unpickled or
executed, and a file that is truncated, corrupted or of a newer format
version raises :class:`ModelFileError` naming the problem.
"""

from __future__ import annotations

import json
import mmap
import os
import secrets
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np

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


def read_model(path: str | os.PathLike, *, verify: bool = True) -> LoadedModel:
    """Map a model file; arrays are read-only views of the mapping.

    Parameters
    ----------
    verify
        Check the CRC-32 of the data section (reads the whole file once; a
        few milliseconds for a BERT vocabulary).  The header is always checked.
    """
    path = Path(path)
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"model file not found: {path}") from None
    with fh:
        size = os.fstat(fh.fileno()).st_size
        if size < _PREFIX.size:
            raise ModelFileError(f"{path}: not a segkit model file ({size} bytes, too short for the header)")
        mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    magic, version, hlen, hcrc, dcrc = _PREFIX.unpack_from(mm, 0)
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
    header_raw = mm[_PREFIX.size : hend]
    if zlib.crc32(header_raw) != hcrc:
        raise ModelFileError(f"{path}: corrupted header (checksum mismatch)")
    try:
        header = json.loads(header_raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelFileError(f"{path}: unreadable header ({e})") from None
    data_start = hend + _pad(hend)
    data_nbytes = int(header.get("data_nbytes", -1))
    if data_start + data_nbytes > size or data_nbytes < 0:
        raise ModelFileError(
            f"{path}: truncated (data section needs {data_start + data_nbytes} bytes, file has {size})"
        )
    if verify and zlib.crc32(memoryview(mm)[data_start : data_start + data_nbytes]) != dcrc:
        raise ModelFileError(f"{path}: corrupted data (checksum mismatch)")
    arrays: dict[str, np.ndarray] = {}
    blobs: dict[str, memoryview] = {}
    for name, e in header["entries"].items():
        start = data_start + int(e["offset"])
        nbytes = int(e["nbytes"])
        if start + nbytes > data_start + data_nbytes:
            raise ModelFileError(f"{path}: entry {name!r} lies outside the data section")
        if e["kind"] == "array":
            if e["dtype"] not in _DTYPES:
                raise ModelFileError(f"{path}: entry {name!r} has unsupported dtype {e['dtype']!r}")
            dt = np.dtype(e["dtype"])
            shape = tuple(int(x) for x in e["shape"])
            if int(np.prod(shape, dtype=np.int64)) * dt.itemsize != nbytes:
                raise ModelFileError(f"{path}: entry {name!r}: shape {shape} does not match {nbytes} bytes")
            arr = np.frombuffer(mm, dtype=dt, count=nbytes // dt.itemsize, offset=start).reshape(shape)
            arrays[name] = arr
        else:
            blobs[name] = memoryview(mm)[start : start + nbytes]
    return LoadedModel(header["preset"], header["config"], arrays, blobs, path)
