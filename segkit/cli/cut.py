"""``segkit cut``: Chinese word segmentation from the command line, like
``python -m jieba``.

One output line per input line (empty lines included), the words joined by
the delimiter (``" / "`` as jieba's, ``-d`` alone: a space).  Input from
files, else standard input; errors, Ctrl-C and closed pipes are handled as
in every subcommand (:mod:`segkit.cli.io`).
"""

from __future__ import annotations

import os
import sys
from typing import Iterator, Sequence

from .io import CliError, InputError, Output, batches, lines, os_message, reading_stdin_note

#: Lines per compiled call.
BATCH_LINES = 4096

#: Compile time of the segmenting kernels on a small machine (2 cores), for
#: the notice printed when they have to be compiled in a process.
COMPILE_SECONDS = 10


def add_parser(sub) -> None:
    """Add the ``cut`` subcommand to the ``segkit`` subparsers ``sub``."""
    p = sub.add_parser(
        "cut",
        help="Chinese word segmentation (MaxMatch), one output line per input line, like python -m jieba",
        description="Segment Chinese text with ChineseMaxMatch and its default dictionary (jieba's): one output "
        "line per input line, the words joined by DELIM.",
        epilog="Reads standard input when no FILE is given.",
    )
    p.add_argument(
        "-d",
        "--delimiter",
        metavar="DELIM",
        default=" / ",
        nargs="?",
        const=" ",
        help="put DELIM between words instead of ' / '; a space if -d is given without DELIM (as python -m jieba)",
    )
    p.add_argument("--mode", choices=("forward", "backward", "bidirectional"), default="bidirectional",
                   help="MaxMatch direction (default bidirectional: the best F1 on the four SIGHAN 2005 corpora)")
    p.add_argument("--userdict", metavar="FILE", action="append", default=[], help="add the words of FILE (word list or jieba format; repeatable)")
    p.add_argument("--keep-whitespace", action="store_true", help="keep whitespace inside a line as tokens, as jieba does")
    p.add_argument("files", nargs="*", metavar="FILE", help="input files ('-' is standard input)")


def run(args, out: Output) -> int:
    """Run ``segkit cut`` with parsed ``args``, writing to ``out``."""
    from ..models.vocabulary import VocabularyError

    try:
        args.delimiter.encode("utf-8")
    except UnicodeEncodeError:  # bytes of the command line that are not UTF-8 (kept as surrogates)
        raise CliError(f"--delimiter must be UTF-8 text, found the bytes {os.fsencode(args.delimiter)!r}") from None
    paths = args.files or ["-"]
    if not args.files:
        reading_stdin_note()
    for p in paths:  # every file is checked before the dictionary loads and any output is written
        if p != "-" and not os.path.isfile(p):
            if os.path.isdir(p):
                raise CliError(f"input is a directory, not a file: {p}")
            if not os.path.exists(p):
                raise CliError(f"input file not found: {p}")
    seg = _segmenter(args, VocabularyError)
    delim = args.delimiter
    if "-" not in paths and sys.stderr.isatty():  # kernels compiled (or loaded) before the bar starts
        from ..runtime import jit

        jit.prepare([lambda: seg.cut_batch(["中文 abc"])], COMPILE_SECONDS)
    progress = _progress(paths)
    try:
        for batch in batches(_counted(lines(paths), progress), BATCH_LINES):
            with out.sigint_deferred():
                words = seg.cut_batch(batch)
            out.write([delim.join(w) + "\n" for w in words])
    except InputError as e:
        if not out.texts:
            raise
        raise CliError(f"{e}; the output holds the {out.texts} lines before it") from None
    finally:
        if progress is not None:
            progress.close()
    return 0


def _segmenter(args, VocabularyError):
    import warnings

    import segkit

    seg = segkit.ChineseMaxMatch(mode=args.mode, keep_whitespace=args.keep_whitespace)
    for path in args.userdict:
        if not os.path.exists(path):
            raise CliError(f"--userdict {path}: not found")
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                seg.load_userdict(path)
        except OSError as e:
            raise CliError(f"--userdict {os_message(e)}") from None
        except (ValueError, VocabularyError) as e:
            raise CliError(f"--userdict {e}") from None
        for w in caught:
            print(f"segkit: warning: {w.message}", file=sys.stderr)
    return seg


def _progress(paths: Sequence[str]):
    """A tqdm bar over the files' bytes when standard error is a terminal
    and every input is a file, else None."""
    if "-" in paths or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    total = sum(os.path.getsize(p) for p in paths)
    return tqdm(total=total, unit="B", unit_scale=True, file=sys.stderr, desc="segkit cut")


def _counted(lines: Iterator[str], progress) -> Iterator[str]:
    """``lines``, advancing ``progress`` by each line's UTF-8 size plus
    its newline (a lower bound: ``\\r`` endings and byte order marks are
    not counted), and to the total once all are read."""
    if progress is None:
        yield from lines
        return
    done = 0
    for line in lines:
        done += len(line.encode("utf-8", "surrogatepass")) + 1
        if done >= 1 << 20:
            progress.update(done)
            done = 0
        yield line
    progress.update(max(done, progress.total - progress.n))
