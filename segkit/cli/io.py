"""What every subcommand shares: reading lines, batching, writing output,
Ctrl-C, and errors reported as ``segkit: error: ...``."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator, Sequence


class CliError(Exception):
    """A problem reported as ``segkit: error: ...`` with exit status 2."""


class InputError(CliError):
    pass


def os_message(e: OSError) -> str:
    """``path: reason`` for an OSError (its own message when it has one)."""
    if e.strerror and e.filename is not None:
        return f"{e.filename}: {e.strerror}"
    return str(e) or type(e).__name__


#: The longest input line read, in bytes: a longer one is an error naming
#: the file and the line, not a MemoryError (``--input /dev/zero``).
MAX_LINE_BYTES = 256 << 20


def shown_path(path: str) -> str:
    """``path`` as it is when it is printable text, else quoted, with
    Python's escapes for a newline or any other control character and
    ``\\xNN`` for a byte that is not UTF-8, so that an error about it stays
    on one line and shows what is there.

    >>> print(shown_path("in.txt"), shown_path("a\\nb.txt"), shown_path("caf\\udce9.txt"))
    in.txt 'a\\nb.txt' 'caf\\xe9.txt'
    """
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if text == path and path.isprintable():
        return path
    return "'" + "".join(c if c.isprintable() else repr(c)[1:-1] for c in text) + "'"


def one_line(message: str) -> str:
    """``message`` with line breaks and other control characters escaped
    (``\\n``), so that an error naming a path that holds one stays one line.

    >>> print(one_line("vocabulary file not found: a\\nb.txt"))
    vocabulary file not found: a\\nb.txt
    """
    if message.isprintable():
        return message
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def stdin_stream():
    """The binary standard input, or an InputError when it is closed."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise InputError("standard input is closed; give texts as arguments or files with --input FILE")
    return stream


def check_inputs(paths: Sequence[str], option: str = "--input") -> None:
    """Refuse a missing input file or a folder before anything is loaded."""
    for p in paths:
        if p == "-":
            continue
        if not os.path.exists(p):
            raise InputError(f"input file not found: {shown_path(p)}")
        if os.path.isdir(p):
            raise InputError(f"input is a directory, not a file: {shown_path(p)}")
        if not os.access(p, os.R_OK):
            raise InputError(f"cannot read input file {shown_path(p)}: permission denied")


def check_texts_utf8(texts: Sequence[str]) -> None:
    """Refuse a text argument holding bytes that are not UTF-8 (Python gets
    them as lone surrogates), naming the argument and the byte."""
    for k, t in enumerate(texts, 1):
        try:
            t.encode("utf-8")
        except UnicodeEncodeError as e:
            raw = t.encode("utf-8", "surrogateescape")
            col = len(t[: e.start].encode("utf-8", "surrogateescape")) + 1
            raise CliError(f"text argument {k} is not valid UTF-8 (byte {raw[col - 1]:#04x} at byte {col}): "
                           f"{shown_path(t)}") from None


def lines(paths: Sequence[str]) -> Iterator[str]:
    for p in paths:
        if p == "-":
            stream = stdin_stream()
            name = "<stdin>"
        else:
            try:
                stream = open(p, "rb")
            except FileNotFoundError:
                raise InputError(f"input file not found: {shown_path(p)}") from None
            except IsADirectoryError:
                raise InputError(f"input is a directory, not a file: {shown_path(p)}") from None
            except OSError as e:
                raise InputError(f"cannot read input file {shown_path(p)}: {e.strerror or e}") from None
            name = shown_path(p)
        try:
            lineno = 0
            while True:
                try:
                    raw = stream.readline(MAX_LINE_BYTES + 1)
                except MemoryError:
                    raise InputError(f"{name}: line {lineno + 1}: not enough memory to read it") from None
                except OSError as e:
                    raise InputError(f"{name}: cannot read after line {lineno}: {e.strerror or e}") from None
                if not raw:
                    break
                lineno += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise InputError(f"{name}: line {lineno} is longer than {MAX_LINE_BYTES >> 20} MiB "
                                     "(the longest line segkit reads; is it a text file?)")
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise InputError(
                        f"{name}: line {lineno}: not valid UTF-8 (byte {raw[e.start]:#04x} at column {e.start + 1})"
                    ) from None
                if lineno == 1:
                    line = line.lstrip("\ufeff")
                yield line.rstrip("\n").rstrip("\r")
        finally:
            if name != "<stdin>":
                stream.close()


def batches(items: Iterable[str], size: int) -> Iterator[list[str]]:
    """Lists of ``size`` items.  When reading an item fails, the items read
    before it are yielded first, so that their results are written and the
    error can say exactly which texts the output holds."""
    batch: list[str] = []
    it = iter(items)
    while True:
        try:
            x = next(it)
        except StopIteration:
            break
        except InputError:
            if batch:
                yield batch
            raise
        batch.append(x)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class Output:
    """Writes whole batches of lines to standard output, and holds off Ctrl-C
    where it would do harm.

    SIGINT is deferred (see :meth:`sigint_deferred`) while a batch is being
    written, so the output always ends with a complete line, and during a
    batch's compiled call: Numba code cannot be interrupted anyway, and a
    KeyboardInterrupt raised while Numba boxes its result would surface as
    ``SystemError: ... returned a result with an exception set``.  The
    interrupt is raised as soon as the deferred section ends.  A write that
    fails (a closed pipe, a full disk) becomes a :class:`CliError`.
    """

    def __init__(self, stream):
        self.stream = stream
        self.texts = 0  # texts whose results were written
        self._defer = 0
        self._pending = False

    def on_sigint(self, signum, frame) -> None:
        if self._defer:
            self._pending = True
        else:
            raise KeyboardInterrupt

    @contextmanager
    def sigint_deferred(self) -> Iterator[None]:
        self._defer += 1
        try:
            yield
        finally:
            self._defer -= 1
            if not self._defer and self._pending:
                self._pending = False
                raise KeyboardInterrupt

    def _fd(self) -> int | None:
        """The file descriptor of the real standard output, else None."""
        if self.stream is None or self.stream is not sys.__stdout__:
            return None
        try:
            fd = self.stream.fileno()
            self.stream.flush()
        except (AttributeError, OSError, ValueError):
            return None
        return fd

    def check_open(self) -> None:
        """A CliError when standard output is closed (``>&-``), checked
        before any work is done."""
        if self.stream is None:
            raise CliError("standard output is closed, so the results cannot be written; "
                           "redirect it to a file or /dev/null")

    def write(self, lines: list[str]) -> None:
        """Write ``lines`` (UTF-8) completely."""
        self.write_bytes("".join(lines), len(lines))

    def write_bytes(self, data: "bytes | str", texts: int) -> None:
        """Write ``data`` (the UTF-8 output of ``texts`` texts) completely.
        To a file descriptor this is an ``os.write`` loop: CPython's buffered
        writer can drop the rest of a write that a signal interrupted
        part-way on a pipe."""
        self.check_open()
        with self.sigint_deferred():
            try:
                fd = self._fd()
                if fd is None:
                    if isinstance(data, str):
                        self.stream.write(data)
                    else:
                        buffer = getattr(self.stream, "buffer", None)
                        if buffer is not None:
                            self.stream.flush()
                            buffer.write(data)
                            buffer.flush()
                        else:
                            self.stream.write(data.decode("utf-8"))
                    self.stream.flush()
                else:
                    view = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
                    while view:
                        view = view[os.write(fd, view) :]
            except BrokenPipeError:
                raise CliError("cannot write the output: the reader closed it (broken pipe)") from None
            except OSError as e:
                raise CliError(f"cannot write the output: {e.strerror or e}") from None
            self.texts += texts


def interrupted(e: BaseException) -> bool:
    """Whether ``e`` is a KeyboardInterrupt, or the SystemError that a
    compiled call turns one into (raised while it boxed its result)."""
    while e is not None:
        if isinstance(e, KeyboardInterrupt):
            return True
        if not isinstance(e, SystemError):
            return False
        e = e.__cause__ or e.__context__
    return False


def quiet_stdout_if_broken() -> None:
    """After a failed write to the real standard output, point it at
    /dev/null: Python's final flush would otherwise fail again and print a
    second error."""
    import os

    if sys.stdout is not sys.__stdout__ or sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass


def zip_strict(a: Iterable[str], b: Iterable[str]) -> Iterator[tuple[str, str]]:
    ia, ib = iter(a), iter(b)
    n = 0
    while True:
        x = next(ia, None)
        y = next(ib, None)
        if x is None and y is None:
            return
        if x is None or y is None:
            raise InputError(f"--pair-input has {'more' if x is None else 'fewer'} lines than the texts (after line {n})")
        n += 1
        yield x, y


def reading_stdin_note(what: str = "texts") -> None:
    """Say on stderr that ``what`` is read from standard input, when it is a
    terminal (a user who typed the command alone would otherwise see it wait
    in silence)."""
    try:
        interactive = sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if interactive:
        print(f"segkit: reading {what} from standard input, one per line (end with Ctrl-D; "
              "or give texts as arguments or files with --input FILE, or --help)", file=sys.stderr)


def check_output_folder(out: "os.PathLike[str] | str", probe: bool = False) -> None:
    """Refuse an output folder that cannot be one, before any work: it
    exists and is not a folder, or a parent of it is a file."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise CliError(f"-o {shown_path(str(out))}: exists and is not a folder; the output is a folder of files "
                       "(give a new or existing folder)")
    for parent in [out, *out.parents]:
        if parent.exists():
            if not parent.is_dir():
                raise CliError(f"-o {shown_path(str(out))}: {shown_path(str(parent))} is a file, not a folder")
            break
    else:
        return
    if probe:  # a folder can be made there (a read-only place, /proc): said before the work, not after
        import tempfile

        try:
            os.rmdir(tempfile.mkdtemp(prefix=".segkit-probe-", dir=parent))
        except OSError as e:
            raise CliError(f"-o {shown_path(str(out))}: cannot write there "
                           f"({e.strerror or type(e).__name__})") from None


@contextmanager
def staged_output(out: os.PathLike[str] | str) -> Iterator[Path]:
    """A folder to write a command's output files into, all or nothing.

    The files are written into a hidden folder beside ``out`` and moved into
    ``out`` only once every one of them is complete, so that a Ctrl-C or an
    error while writing leaves ``out`` as it was (the training commands say
    "nothing was written", and that stays true).  A Ctrl-C during the moves
    themselves (a few renames) is held until they are done: the output is
    then complete and the command ends normally.
    """
    import shutil
    import signal
    import tempfile
    import threading

    out = Path(out)
    check_output_folder(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    except OSError as e:
        raise CliError(f"-o {shown_path(str(out))}: cannot create the output folder there "
                       f"({e.strerror or type(e).__name__})") from None
    try:
        yield stage
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CliError(f"-o {shown_path(str(out))}: cannot create the output folder "
                           f"({e.strerror or type(e).__name__}); nothing was written") from None
        held: list[int] = []
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum)) if main else None
        try:
            for f in sorted(stage.iterdir()):
                os.replace(f, out / f.name)
        finally:
            if main:
                signal.signal(signal.SIGINT, previous)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
