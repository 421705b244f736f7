"""The ``segkit`` command line, one module per subcommand (see ``main``)."""

from .command import main

__all__ = ["main"]
