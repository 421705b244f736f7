"""The ``segkit`` command: the parser and the entry point.

Each subcommand lives in a module of its own (``tokenize`` for ``tokenize``
and ``encode``, ``cut``, ``train`` for ``train bpe|wordpiece``); this module
assembles their parsers and runs the chosen one, turning every error into
``segkit: error: ...`` (exit status 2) and Ctrl-C into exit status 130.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .io import CliError, Output, interrupted, one_line, quiet_stdout_if_broken


def build_parser() -> argparse.ArgumentParser:
    from ..version import __version__
    from . import cut, precompile, tokenize, train

    parser = argparse.ArgumentParser(
        prog="segkit",
        description="Linear-time maximum-matching (MaxMatch) segmentation: WordPiece tokenization for BERT "
        "(ids identical to HuggingFace tokenizers), Chinese word segmentation, and vocabulary training.",
        epilog="Run 'segkit COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"segkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    tokenize.add_parsers(sub)
    cut.add_parser(sub)
    train.add_train_commands(sub)  # segkit train bpe|wordpiece
    precompile.add_parser(sub)
    return parser


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the subcommand ``args`` ran (``segkit train bpe``'s for
    ``args.command == "train"`` and ``args.trainer == "bpe"``)."""
    for dest in ("command", "trainer"):
        chosen = getattr(args, dest, None)
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if chosen is None or not actions or chosen not in actions[0].choices:
            break
        parser = actions[0].choices[chosen]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``segkit`` command.

    Returns the exit status: 0, 2 for any error (reported as ``segkit:
    error: ...`` on standard error, never a traceback), 130 when
    interrupted (Ctrl-C; the output then ends with a complete line).
    """
    import signal
    import threading

    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the subcommand's parser, with its usage
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    out = Output(sys.stdout)
    handler = None
    if threading.current_thread() is threading.main_thread():
        handler = signal.signal(signal.SIGINT, out.on_sigint)
    try:
        try:
            if args.command == "cut":
                from . import cut

                return cut.run(args, out)
            if args.command == "train":
                from . import train

                return train.run(args)
            if args.command == "precompile":
                from . import precompile

                return precompile.main(args, main)
            from . import tokenize

            return tokenize.run(args, out)
        except SystemError as e:  # Ctrl-C while a compiled call (e.g. a build) boxed its result
            if interrupted(e):
                raise KeyboardInterrupt from None
            raise
    except KeyboardInterrupt:
        if args.command == "train":  # (training writes its files only at the end)
            print("segkit: interrupted; nothing was written", file=sys.stderr)
        else:
            print(f"segkit: interrupted after {out.texts} text{'' if out.texts == 1 else 's'}", file=sys.stderr)
        return 130
    except CliError as e:
        print(f"segkit: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
        quiet_stdout_if_broken()



if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
