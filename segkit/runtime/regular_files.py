"""Opening a file a user named: regular files only.

Every reader of a user's file (vocabularies, dictionaries, ``tokenizer.json``,
model files, training corpora) goes through :func:`open_regular`, so that a
FIFO, a device such as ``/dev/zero``, a socket or a directory is refused
*before* it is opened, with a message naming the path and what it is: a FIFO
would block the ``open`` until a writer appears, and a device would be read
until memory runs out.  The file is opened without blocking and checked
again through its descriptor, so a regular file swapped for a FIFO between
the check and the open is refused too.

>>> import os, tempfile
>>> fifo = os.path.join(tempfile.mkdtemp(), "pipe")
>>> os.mkfifo(fifo)
>>> open_regular(fifo, "vocabulary", ValueError)
Traceback (most recent call last):
...
ValueError: ...pipe: a FIFO (named pipe), not a regular file; expected a vocabulary file
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO, Callable

__all__ = ["check_regular", "open_regular", "read_regular", "write_new_file"]

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def _refuse(path, mode: int, what: str, error: Callable[[str], Exception]) -> Exception:
    kind = _kind(mode)
    tail = "" if kind == "not a regular file" else ", not a regular file"
    return error(f"{path}: {kind}{tail}; expected a {what} file")


def check_regular(path: str | os.PathLike, what: str, error: Callable[[str], Exception]) -> os.stat_result:
    """The ``os.stat`` of ``path`` if it is a regular file (symbolic links
    followed).  Raises FileNotFoundError naming ``what`` when there is no
    file, else ``error(message)`` for anything that is not a regular file or
    cannot be examined."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} file not found: {path}") from None
    except (OSError, ValueError) as e:  # ValueError: an embedded NUL, a lone surrogate
        raise error(f"{what} file {path}: cannot be read ({getattr(e, 'strerror', None) or e})") from None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, st.st_mode, what, error)
    return st


def open_regular(path: str | os.PathLike, what: str, error: Callable[[str], Exception]) -> BinaryIO:
    """``path`` opened for reading in binary mode, after
    :func:`check_regular`; the open never blocks, and the descriptor is
    checked again."""
    check_regular(path, what, error)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} file not found: {path}") from None
    except OSError as e:
        raise error(f"{path}: cannot be read ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # replaced between the check and the open
            raise _refuse(path, st.st_mode, what, error)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike, what: str, error: Callable[[str], Exception]) -> bytes:
    """All the bytes of a regular file (see :func:`open_regular`)."""
    with open_regular(path, what, error) as fh:
        return fh.read()


def write_new_file(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a new file in the same folder,
    created with mode 0666 less the umask (as ``open`` gives), then renamed
    over ``path``; nothing is left behind on failure."""
    folder, name = os.path.split(os.fspath(path))
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
