"""The MaxMatch engine: automaton construction and the compiled matching pass.

Presets (WordPiece, Chinese MaxMatch, third-party plugins) configure it with
keys, a suffix indicator, boundary classes, a direction and an unknown
policy.  See :class:`Automaton` and :class:`EngineConfig`.
"""

from .automaton import Automaton, EngineConfig, join_code_points, to_code_points
from .charmap import ISOLATED, SPACE, WORD

__all__ = ["Automaton", "EngineConfig", "WORD", "SPACE", "ISOLATED", "to_code_points", "join_code_points"]
