"""Options several subcommands share, and errors said in the command line's
words.

The trainers take the same options under the same names (``--special``,
``--threads``, ``--errors``, ``--progress/--no-progress``), and an error
raised by the Python API naming an argument (``vocab_size``, or
``errors='replace'``) is reported with the option a user of the command
line typed (``--vocab-size``, ``--errors replace``).
"""

from __future__ import annotations

import argparse
import re

#: Python argument -> command-line option, for messages.
OPTION_NAMES = {
    "vocab_size": "--vocab-size",
    "min_frequency": "--min-frequency",
    "limit_alphabet": "--limit-alphabet",
    "num_threads": "--threads",
    "special_tokens": "--special",
    "max_length": "--max-length",
    "batch_size": "--batch-size",
    "show_progress": "--progress",
}

_ERRORS_REPLACE = re.compile(r"""errors\s*=\s*['"]replace['"]""")
_NAMES = re.compile(r"(?<![\w-])(" + "|".join(OPTION_NAMES) + r")(?!\w)")


def cli_words(message: str) -> str:
    """``message`` with the Python API's argument names replaced by options.

    >>> cli_words("vocab_size must be at least 256, found 3; pass errors='replace' to substitute U+FFFD")
    '--vocab-size must be at least 256, found 3; pass --errors replace to substitute U+FFFD'
    """
    message = _ERRORS_REPLACE.sub("--errors replace", message)
    return _NAMES.sub(lambda m: OPTION_NAMES[m.group(1)], message)


def progress_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None,
        help="progress bars on stderr (default: when stderr is a terminal)",
    )


def trainer_options(p: argparse.ArgumentParser, *, special_default: list[str], special_help: str) -> None:
    """The options every ``segkit train`` command takes."""
    p.add_argument("files", nargs="+", metavar="FILE", help="UTF-8 text files")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="folder to write to (created if needed)")
    p.add_argument("--special", action="append", default=None, metavar="TOKEN",
                   help=f"a special token (repeatable; {special_help})")
    p.add_argument("--threads", type=int, default=1, metavar="N", help="threads for counting (default 1)")
    p.add_argument("--errors", choices=("strict", "replace"), default="strict",
                   help="invalid UTF-8: stop with an error (default) or replace it with U+FFFD")
    progress_flag(p)
    p.add_argument("--quiet", "-q", dest="progress", action="store_false", help="no progress bars (= --no-progress)")
    p.set_defaults(special_default=special_default)


def special_tokens(args: argparse.Namespace) -> list[str]:
    """The ``--special`` tokens given, else the command's default."""
    return list(args.special_default) if args.special is None else list(args.special)
