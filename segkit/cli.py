"""The ``segkit`` command line.

Examples
--------
``segkit tokenize "Hello, world!"`` prints the WordPiece tokens of the text
with the bundled default model (bert-base-uncased); ``segkit encode --format
json --max-length 128 --input corpus.txt`` encodes a file, one text per line,
with special tokens, truncation and offsets.  ``segkit cut corpus.txt``
segments Chinese text like ``python -m jieba`` (see :mod:`segkit.cli_cut`).
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import contextmanager
from typing import Iterable, Iterator, Sequence

DEFAULT_PRETRAINED = "bert-base-uncased"


def _build_parser() -> argparse.ArgumentParser:
    from . import __version__
    from .resources import BUNDLED_VOCABULARIES

    parser = argparse.ArgumentParser(prog="segkit", description="Linear-time MaxMatch (WordPiece) tokenization for BERT.")
    parser.add_argument("--version", action="version", version=f"segkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("texts", nargs="*", help="texts (default: read lines from --input, else stdin)")
    src = common.add_mutually_exclusive_group()
    src.add_argument(
        "--pretrained",
        metavar="NAME",
        help=f"a bundled model: {', '.join(sorted(BUNDLED_VOCABULARIES))} (default {DEFAULT_PRETRAINED})",
    )
    src.add_argument("--vocab", metavar="PATH", help="a vocab.txt (one token per line), used with BERT's pipeline")
    src.add_argument("--tokenizer-json", metavar="PATH", help="a HuggingFace tokenizer.json with a WordPiece model")
    src.add_argument("--model", metavar="PATH", help="a model file written by segkit's save()")
    common.add_argument("--cased", action="store_true", help="with --vocab: do not lowercase or strip accents")
    common.add_argument("--input", "-i", metavar="FILE", action="append", default=[], help="read texts from FILE, one per line (repeatable; '-' is stdin)")
    common.add_argument("--format", "-f", choices=("tokens", "ids", "json"), default="tokens", help="space-separated tokens, ids, or JSON lines with offsets")
    common.add_argument("--batch-size", type=int, default=4096, help="texts per compiled call when reading files")
    sub.add_parser("tokenize", parents=[common], help="tokenize (normalize, pre-tokenize, WordPiece; no special tokens)")
    enc = sub.add_parser("encode", parents=[common], help="encode for a model: special tokens, truncation, padding, type ids")
    enc.add_argument("--pair-input", metavar="FILE", help="second texts of pairs, one per line (parallel to the texts)")
    enc.add_argument("--max-length", type=int, help="truncate (longest first) and/or pad to this length")
    enc.add_argument("--padding", choices=("longest", "max_length"), help="pad within each batch")
    from . import cli_cut
    from .training.cli import add_train_commands

    cli_cut.add_parser(sub)
    add_train_commands(sub)  # segkit train bpe|...
    return parser


def _load_tokenizer(args):
    from .models import load
    from .wordpiece import WordPiece

    if args.model:
        model = load(args.model)
        if not isinstance(model, WordPiece):
            raise _CliError(
                f"{args.model}: is a {type(model).__name__} model; tokenize and encode need a WordPiece model"
            )
        return model
    if args.tokenizer_json:
        return WordPiece.from_tokenizer_json(args.tokenizer_json)
    if args.vocab:
        return WordPiece.bert(args.vocab, lowercase=not args.cased)
    return WordPiece.from_pretrained(args.pretrained or DEFAULT_PRETRAINED)


class _CliError(Exception):
    """A problem reported as ``segkit: error: ...`` with exit status 2."""


class _InputError(_CliError):
    pass


def _os_message(e: OSError) -> str:
    """``path: reason`` for an OSError (its own message when it has one)."""
    if e.strerror and e.filename is not None:
        return f"{e.filename}: {e.strerror}"
    return str(e) or type(e).__name__


def _lines(paths: Sequence[str]) -> Iterator[str]:
    for p in paths:
        if p == "-":
            stream = sys.stdin.buffer
            name = "<stdin>"
        else:
            try:
                stream = open(p, "rb")
            except FileNotFoundError:
                raise _InputError(f"input file not found: {p}") from None
            except IsADirectoryError:
                raise _InputError(f"input is a directory, not a file: {p}") from None
            except OSError as e:
                raise _InputError(f"cannot read input file {_os_message(e)}") from None
            name = p
        try:
            lineno = 0
            while True:
                try:
                    raw = stream.readline()
                except OSError as e:
                    raise _InputError(f"{name}: cannot read after line {lineno}: {_os_message(e)}") from None
                if not raw:
                    break
                lineno += 1
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise _InputError(
                        f"{name}: line {lineno}: not valid UTF-8 (byte {raw[e.start]:#04x} at column {e.start + 1})"
                    ) from None
                if lineno == 1:
                    line = line.lstrip("\ufeff")
                yield line.rstrip("\n").rstrip("\r")
        finally:
            if stream is not sys.stdin.buffer:
                stream.close()


def _batches(items: Iterable[str], size: int) -> Iterator[list[str]]:
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
        except _InputError:
            if batch:
                yield batch
            raise
        batch.append(x)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class _Output:
    """Writes whole batches of lines to standard output, and holds off Ctrl-C
    where it would do harm.

    SIGINT is deferred (see :meth:`sigint_deferred`) while a batch is being
    written, so the output always ends with a complete line, and during a
    batch's compiled call: Numba code cannot be interrupted anyway, and a
    KeyboardInterrupt raised while Numba boxes its result would surface as
    ``SystemError: ... returned a result with an exception set``.  The
    interrupt is raised as soon as the deferred section ends.  A write that
    fails (a closed pipe, a full disk) becomes a :class:`_CliError`.
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

    def write(self, lines: list[str]) -> None:
        """Write ``lines`` (UTF-8) completely.  To a file descriptor this is
        an ``os.write`` loop: CPython's buffered writer can drop the rest of
        a write that a signal interrupted part-way on a pipe."""
        import os

        data = "".join(lines)
        with self.sigint_deferred():
            try:
                fd = self._fd()
                if fd is None:
                    self.stream.write(data)
                    self.stream.flush()
                else:
                    view = memoryview(data.encode("utf-8"))
                    while view:
                        view = view[os.write(fd, view) :]
            except BrokenPipeError:
                raise _CliError("cannot write the output: the reader closed it (broken pipe)") from None
            except OSError as e:
                raise _CliError(f"cannot write the output: {e.strerror or e}") from None
            self.texts += len(lines)


def _interrupted(e: BaseException) -> bool:
    """Whether ``e`` is a KeyboardInterrupt, or the SystemError that a
    compiled call turns one into (raised while it boxed its result)."""
    while e is not None:
        if isinstance(e, KeyboardInterrupt):
            return True
        if not isinstance(e, SystemError):
            return False
        e = e.__cause__ or e.__context__
    return False


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``segkit`` command.

    Returns the exit status: 0, 2 for any error (reported as ``segkit:
    error: ...`` on standard error, never a traceback), 130 when
    interrupted (Ctrl-C; the output then ends with a complete line).
    """
    import signal
    import threading

    args = _build_parser().parse_args(argv)
    out = _Output(sys.stdout)
    handler = None
    if threading.current_thread() is threading.main_thread():
        handler = signal.signal(signal.SIGINT, out.on_sigint)
    try:
        try:
            if args.command == "cut":
                from . import cli_cut

                return cli_cut.run(args, out, sys.modules[__name__])
            if args.command == "train":
                from .training.cli import run

                return run(args)
            return _tokenize_or_encode(args, out)
        except SystemError as e:  # Ctrl-C while a compiled call (e.g. a build) boxed its result
            if _interrupted(e):
                raise KeyboardInterrupt from None
            raise
    except KeyboardInterrupt:
        print(f"segkit: interrupted after {out.texts} text{'' if out.texts == 1 else 's'}", file=sys.stderr)
        return 130
    except _CliError as e:
        print(f"segkit: error: {e}", file=sys.stderr)
        return 2
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
        _quiet_stdout_if_broken()


def _quiet_stdout_if_broken() -> None:
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


def _tokenize_or_encode(args, out: _Output) -> int:
    """``segkit tokenize`` and ``segkit encode``."""
    from .storage import ModelFileError
    from .vocab import VocabularyError

    try:
        wp = _load_tokenizer(args)
    except OSError as e:
        raise _CliError(_os_message(e)) from None
    except (ValueError, VocabularyError, ModelFileError) as e:
        raise _CliError(str(e)) from None
    if args.batch_size < 1:
        raise _CliError(f"--batch-size must be at least 1, found {args.batch_size}")
    if args.texts and args.input:
        raise _CliError("give texts as arguments or with --input, not both")
    encode = args.command == "encode"
    texts: Iterable = args.texts if args.texts else _lines(args.input or ["-"])
    if encode and args.pair_input:
        texts = _zip_strict(texts, _lines([args.pair_input]))
    progress = None
    if args.input and sys.stderr.isatty():
        from tqdm import tqdm

        progress = tqdm(unit=" texts", file=sys.stderr)
    itos = wp.vocab.id_to_token
    try:
        for batch in _batches(texts, args.batch_size):
            with out.sigint_deferred():
                if encode:
                    enc = wp.encode_batch(
                        batch,
                        max_length=args.max_length,
                        truncation=args.max_length is not None,
                        padding=args.padding or False,
                    )
                else:
                    enc = wp.encode_batch(batch, add_special_tokens=False)
            lines = []
            for item, e in zip(batch, enc):
                ids = e.ids
                if args.format == "tokens":
                    lines.append(" ".join(itos[i] for i in ids) + "\n")
                elif args.format == "ids":
                    lines.append(" ".join(map(str, ids)) + "\n")
                else:
                    record = {"text": item} if isinstance(item, str) else {"text": item[0], "pair": item[1]}
                    record.update(ids=ids, tokens=e.tokens, offsets=e.offsets)
                    if encode:
                        record.update(
                            type_ids=e.type_ids,
                            attention_mask=e.attention_mask,
                            special_tokens_mask=e.special_tokens_mask,
                            word_ids=e.word_ids,
                        )
                    lines.append(json.dumps(record, ensure_ascii=False) + "\n")
            out.write(lines)
            if progress is not None:
                progress.update(len(batch))
    except _InputError as e:
        if not out.texts:
            raise
        raise _CliError(f"{e}; the output holds the results of the {out.texts} texts before it") from None
    except ValueError as e:
        raise _CliError(str(e)) from None
    finally:
        if progress is not None:
            progress.close()
    return 0


def _zip_strict(a: Iterable[str], b: Iterable[str]) -> Iterator[tuple[str, str]]:
    ia, ib = iter(a), iter(b)
    n = 0
    while True:
        x = next(ia, None)
        y = next(ib, None)
        if x is None and y is None:
            return
        if x is None or y is None:
            raise _InputError(f"--pair-input has {'more' if x is None else 'fewer'} lines than the texts (after line {n})")
        n += 1
        yield x, y


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
