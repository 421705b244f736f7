"""Files only the current user can have written: the rules of segkit's caches.

A cache is read back by the process that trusts it (the model cache's files
are validated, the kernel cache's contain machine code that is run), so
another local user must not be able to put a file there or change one.
The rules, shared by :mod:`segkit.models.cache` and
:mod:`segkit.runtime.kernel_cache`:

* a file or folder read must be owned by the current user and writable by
  nobody else (no group or other write bit), checked on the opened
  descriptor (``fstat``), so that a file swapped between a check and the
  open is checked itself;
* every folder above a cache folder must be owned by the current user or by
  root and writable by nobody else, unless it has the sticky bit (``/tmp``):
  otherwise someone could rename the cache folder away and put theirs in
  its place;
* folders are created 0700 and files 0600 whatever the umask, each file
  through a fresh temporary name (``O_EXCL``, so a planted name or link is
  never written through) renamed into place, so that a reader never sees a
  half-written file.

Ownership is not checked where the platform has no user ids (Windows).

>>> import os, tempfile
>>> folder = os.path.join(tempfile.mkdtemp(), "a", "b")
>>> old = os.umask(0)
>>> problem = make_private_folder(folder)
>>> _ = write_private(folder, "x.bin", b"data")
>>> os.umask(old) == 0
True
>>> problem is None, oct(os.stat(folder).st_mode & 0o777), oct(os.stat(os.path.join(folder, "x.bin")).st_mode & 0o777)
(True, '0o700', '0o600')
>>> read_private(os.path.join(folder, "x.bin"))
b'data'
>>> os.chmod(os.path.join(folder, "x.bin"), 0o666)
>>> read_private(os.path.join(folder, "x.bin"))
Traceback (most recent call last):
...
segkit.runtime.private_files.UntrustedFile: ...x.bin is writable by other users (mode 666); run 'chmod go-w ...x.bin' to use it
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

__all__ = ["UntrustedFile", "current_uid", "unsafe_reason", "folder_problem", "make_private_folder",
           "read_private", "write_private"]


class UntrustedFile(OSError):
    """A file or folder that another user could have written."""


def current_uid() -> int | None:
    """The effective user id, or None where the platform has none."""
    geteuid = getattr(os, "geteuid", None)
    return None if geteuid is None else geteuid()


def unsafe_reason(st: os.stat_result, what: str, path: object, uid: int | None = None) -> str | None:
    """Why ``path`` (its stat ``st``) must not be trusted, or None: owned by
    another user than ``uid`` (default: the current one), or writable by the
    group or others."""
    if uid is None:
        uid = current_uid()
    if uid is not None and st.st_uid != uid:
        return f"{what} {path} is owned by user id {st.st_uid}, not by the current user ({uid})"
    if os.name == "posix" and st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):  # Windows reports 0o777
        return (f"{what} {path} is writable by other users (mode {stat.S_IMODE(st.st_mode):o}); "
                f"run 'chmod go-w {path}' to use it")
    return None


def _ancestor_problem(folder: Path, uid: int | None) -> str | None:
    """Why a folder above ``folder`` (its real path) lets someone else swap
    it, or None."""
    if os.name != "posix":
        return None
    real = Path(os.path.realpath(folder))
    for parent in real.parents:
        try:
            st = os.stat(parent)
        except OSError as e:
            return f"folder {parent} cannot be examined ({e.strerror})"
        if uid is not None and st.st_uid not in (uid, 0):
            return f"folder {parent} is owned by user id {st.st_uid}, neither the current user ({uid}) nor root"
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
            return (f"folder {parent} is writable by other users (mode {stat.S_IMODE(st.st_mode):o}) "
                    "without the sticky bit")
    return None


def folder_problem(folder: str | os.PathLike, what: str = "cache folder") -> str | None:
    """Why files in ``folder`` must not be trusted (see the module doc), or
    None; a missing folder is a problem too."""
    folder = Path(folder)
    uid = current_uid()
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as e:
        return f"{what} {folder} cannot be opened ({e.strerror})"
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    if not stat.S_ISDIR(st.st_mode):
        return f"{what} {folder} is not a folder"
    return unsafe_reason(st, what, folder, uid) or _ancestor_problem(folder, uid)


def make_private_folder(folder: str | os.PathLike, what: str = "cache folder") -> str | None:
    """Create ``folder`` and the missing folders above it, each 0700; return
    why it must not be used (:func:`folder_problem`), or None."""
    folder = Path(folder)
    missing = []
    p = folder
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    for p in reversed(missing):
        try:
            os.mkdir(p, 0o700)  # the umask can only remove bits: 0700 or less
        except FileExistsError:
            pass  # made meanwhile by another process: checked below
        except OSError as e:
            return f"{what} {folder} cannot be created ({e.strerror})"
    return folder_problem(folder, what)


def read_private(path: str | os.PathLike, what: str = "cache file", trusted: bool = False,
                 limit: int = 1 << 30) -> bytes:
    """The bytes of the regular file ``path``, opened without following a
    link; unless ``trusted``, it must be owned by the current user and
    writable by nobody else (:class:`UntrustedFile` otherwise).  The caller
    checks the folder (:func:`folder_problem`) once."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                 | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedFile(f"{what} {path} is not a regular file")
        if not trusted:
            problem = unsafe_reason(st, what, path)
            if problem is not None:
                raise UntrustedFile(problem)
        if st.st_size > limit:
            raise UntrustedFile(f"{what} {path} has {st.st_size} bytes, more than the {limit} expected at most")
        chunks = []
        left = st.st_size + 1  # one byte more: a file that grew is read to its end, up to the limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_private(folder: str | os.PathLike, name: str, data: bytes, mode: int = 0o600) -> Path:
    """Write ``data`` to ``folder/name`` atomically: a fresh temporary file
    (0600, ``O_EXCL``) in the same folder, set to ``mode``, renamed over
    the name.  Raises ``OSError`` (nothing is left behind)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name[:80]}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if mode != 0o600:
                os.fchmod(fh.fileno(), mode)
        target = Path(folder) / name
        os.replace(tmp, target)
        return target
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
