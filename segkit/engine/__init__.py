"""The MaxMatch engine: automaton construction and the compiled matching pass.

Presets (WordPiece, Chinese MaxMatch, third-party plugins) configure it with
keys, a suffix indicator, boundary classes, a direction and an unknown
policy.  See :class:`Automaton` and :class:`EngineConfig`.

This package is part of the plugin API (with :mod:`segkit.presets.base`):

* :class:`Automaton`, :class:`EngineConfig`, :func:`to_code_points`,
  :func:`join_code_points`;
* the boundary classes :data:`WORD`, :data:`SPACE`, :data:`ISOLATED`;
* for a plugin's own compiled code: :func:`segment_text_into` (the matching
  pass over one text, callable from Numba), :data:`LOOKAHEAD` (its flag for
  prefetching), :func:`prefetch` (a Numba intrinsic) and
  :func:`resolve_entry` (a kernel's compiled entry point, for per-text hot
  paths);
* every key starting at a position (not only the longest):
  :func:`key_table` (the keys' nodes, made once) and :func:`key_ends`
  (callable from Numba; see :mod:`segkit.engine.prefixes`);
* :func:`kernel`, the decorator for a plugin's compiled functions (Numba's
  ``njit`` with segkit's caching: see :mod:`segkit.runtime.jit`).
"""

from .automaton import Automaton, EngineConfig, join_code_points, to_code_points
from .charmap import ISOLATED, SPACE, WORD
from .dispatch import resolve_entry
from .kernels import LOOKAHEAD, segment_text_into
from .intrinsics import prefetch
from .prefixes import key_ends, key_table
from ..runtime.jit import kernel

__all__ = [
    "Automaton", "EngineConfig", "WORD", "SPACE", "ISOLATED", "to_code_points", "join_code_points",
    "segment_text_into", "LOOKAHEAD", "prefetch", "resolve_entry", "kernel",
    "key_table", "key_ends",
]
