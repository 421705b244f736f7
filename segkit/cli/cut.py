"""``segkit cut``: Chinese word segmentation from the command line, like
``python -m jieba``.

One output line per text argument or input line (empty lines included), the
words joined by the delimiter (``" / "`` as jieba's, ``-d`` alone: a space).
Texts come from the arguments (``segkit cut 研究生命起源``), else from files
(``-i FILE``; an argument naming an existing file is read as that file, as
``python -m jieba FILE`` and earlier versions of segkit read it), else from
standard input; errors, Ctrl-C and closed pipes are handled as in every
subcommand (:mod:`segkit.cli.io`).  jieba's options ``-d``, ``-D``, ``-u``
``-q`` and ``-a`` (full mode: every dictionary word, overlapping, see
:meth:`ChineseMaxMatch.cut_all`) keep their meanings; ``-n`` is accepted
(there is no HMM to turn off); ``-p`` is refused as not supported.
"""

from __future__ import annotations

import os
import sys
from typing import Iterator, Sequence

from .io import (CliError, InputError, Output, batches, check_inputs, check_texts_utf8, lines, os_message,
                 reading_stdin_note, shown_path, stdin_stream)

#: Lines per compiled call.
BATCH_LINES = 4096

#: Compile time of the segmenting kernels on a small machine (2 cores), for
#: the notice printed when they have to be compiled in a process.
COMPILE_SECONDS = 10


def add_parser(sub) -> None:
    """Add the ``cut`` subcommand to the ``segkit`` subparsers ``sub``."""
    p = sub.add_parser(
        "cut",
        help="Chinese word segmentation (MaxMatch), one output line per text or input line, like python -m jieba",
        description="Segment Chinese text with ChineseMaxMatch and its default dictionary (jieba's): one output "
        "line per text argument or input line, the words joined by DELIM.  jieba's command-line options "
        "-d, -D, -u, -q and -a mean what they mean there; -n is accepted (segkit has no HMM, so it always cuts "
        "as jieba's -n does: only dictionary words and single characters); -p is not supported.",
        epilog="Texts come from the arguments, else from --input files, else from standard input.  An argument "
        "that names an existing file is read as that file (as python -m jieba FILE reads it), and one written "
        "as a path in an existing folder (dir/missing.txt) is reported as a missing file; '-' is standard "
        "input.",
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
    p.add_argument("-D", "--dict", metavar="DICT", default=None,
                   help="use DICT (word list or jieba format) as the dictionary instead of the default one")
    p.add_argument("-u", "--userdict", "--user-dict", metavar="FILE", action="append", default=[],
                   help="add the words of FILE (word list or jieba format) to the dictionary (repeatable)")
    p.add_argument("--keep-whitespace", action="store_true", help="keep whitespace inside a line as tokens, as jieba does")
    p.add_argument("-i", "--input", metavar="FILE", action="append", default=[],
                   help="read lines from FILE (repeatable; '-' is standard input)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no notices or progress bar on standard error (errors are still reported)")
    p.add_argument("-n", "--no-hmm", action="store_true",
                   help="accepted for jieba's users: segkit has no HMM and never guesses words outside the "
                   "dictionary, so cutting is always as with jieba's -n")
    p.add_argument("-a", "--cut-all", action="store_true",
                   help="jieba's full mode: every dictionary word found in the text, overlapping, as python -m "
                   "jieba -a lists them (--mode then plays no part)")
    p.add_argument("-p", "--pos", metavar="DELIM", nargs="?", const="_", default=None,
                   help="not supported (jieba's part-of-speech tags)")
    p.add_argument("texts", nargs="*", metavar="TEXT",
                   help="texts to cut (an existing file's name is read as that file; '-' is standard input)")


#: Options of python -m jieba that segkit cut refuses, with why.
UNSUPPORTED = {
    "pos": "-p/--pos (jieba's part-of-speech tags: segkit's dictionary has no tags)",
}


def _sources(args) -> tuple[list[str], list[str]]:
    """``(texts, paths)``: the text arguments and the files to read (both
    never non-empty together)."""
    texts, paths = [], list(args.input)
    for t in args.texts:
        if t == "-" or os.path.isfile(t) or _meant_as_file(t):
            paths.append(t)  # (a missing one is then reported as such)
        else:
            texts.append(t)
    if texts and paths:
        raise CliError("give texts as arguments, or files (with --input, or as arguments), not both")
    return texts, paths


def _meant_as_file(arg: str) -> bool:
    """Whether an argument that names no file was still meant as one: it
    is a path (it holds a folder separator) in an existing folder, as
    ``data/missing.txt`` is and ``北京/上海`` (no folder ``北京``) is not."""
    if not any(sep and sep in arg for sep in (os.sep, os.altsep)):
        return False
    folder = os.path.dirname(os.path.expanduser(arg))
    return os.path.isdir(folder or ".") and arg.strip() == arg and not any(c.isspace() for c in arg)


def run(args, out: Output) -> int:
    """Run ``segkit cut`` with parsed ``args``, writing to ``out`` (with
    ``-q``, no notice: not the dictionary build's, not the compile's)."""
    from ..runtime.notices import silenced

    with silenced(args.quiet):
        return _run(args, out)


def _run(args, out: Output) -> int:
    from ..models.vocabulary import VocabularyError

    for dest, why in UNSUPPORTED.items():
        if getattr(args, dest) not in (False, None):
            raise CliError(f"not supported: {why}")
    try:
        args.delimiter.encode("utf-8")
    except UnicodeEncodeError:  # bytes of the command line that are not UTF-8 (kept as surrogates)
        raise CliError(f"--delimiter must be UTF-8 text, found the bytes {os.fsencode(args.delimiter)!r}") from None
    out.check_open()
    texts, paths = _sources(args)
    check_texts_utf8(texts)
    check_inputs(paths)
    if not texts and not paths:
        paths = ["-"]
    if "-" in paths:
        stdin_stream()  # closed: an error now, before the dictionary loads
        if not args.quiet and not args.input and not args.texts:
            reading_stdin_note()
    from ..runtime.regular_files import check_regular

    for option, path in [("--dict", args.dict)] + [("--userdict", u) for u in args.userdict]:
        if path is None:
            continue
        if not os.path.exists(path):
            raise CliError(f"{option} {shown_path(path)}: not found")
        # A FIFO or a device is refused before the dictionary builds (seconds, with a notice).
        check_regular(path, "dictionary", lambda message, option=option: CliError(f"{option} {message}"))
    seg = _segmenter(args, VocabularyError)
    delim = args.delimiter
    quiet = args.quiet
    if paths and "-" not in paths and not quiet and sys.stderr.isatty():  # kernels ready before the bar starts
        from ..runtime import jit

        jit.prepare([lambda: seg.cut_all("中文 abc") if args.cut_all else seg.cut_batch(["中文 abc"])],
                    COMPILE_SECONDS)
    progress = None if quiet or texts else _progress(paths)
    source = iter(texts) if texts else _counted(lines(paths), progress)
    try:
        for batch in batches(source, BATCH_LINES):
            with out.sigint_deferred():
                words = [seg.cut_all(t) for t in batch] if args.cut_all else seg.cut_batch(batch)
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

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            seg = segkit.ChineseMaxMatch(args.dict, mode=args.mode, keep_whitespace=args.keep_whitespace)
        except OSError as e:
            raise CliError(f"--dict {os_message(e)}") from None
        except (ValueError, VocabularyError) as e:
            raise CliError(f"--dict {e}") from None
        for path in args.userdict:
            try:
                seg.load_userdict(path)
            except OSError as e:
                raise CliError(f"--userdict {os_message(e)}") from None
            except (ValueError, VocabularyError) as e:
                raise CliError(f"--userdict {e}") from None
    if not args.quiet:
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
