"""``python -m segkit``: the ``segkit`` command."""

from .cli import main

raise SystemExit(main())
