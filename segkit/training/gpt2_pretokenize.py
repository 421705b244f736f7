"""GPT-2's pre-tokenizer for the trainer: now shared with the BPE encoder.

The compiled matcher, its character table and the chunk-boundary rule live in
:mod:`segkit.presets.bpe.pretokenize` (and its kernel modules); the trainer
imports them from there.  These names stay importable from here.

>>> pretokenize("I'm here  now!!")
['I', "'m", ' here', ' ', ' now', '!!']
"""

from __future__ import annotations

from ..presets.bpe.char_classes import class_table as char_classes
from ..presets.bpe.pretokenize import GPT2_PATTERN, Pretokenizer
from ..presets.bpe.pretokenize_kernels import gpt2_match_end as match_end
from ..presets.bpe.pretokenize_kernels import gpt2_safe_cut as _safe_cut  # noqa: F401 (re-exported)

__all__ = ["GPT2_PATTERN", "char_classes", "match_end", "pretokenize"]


def pretokenize(text: str) -> list[str]:
    """The GPT-2 pre-tokens of ``text`` (compiled; equal to
    ``regex.findall(GPT2_PATTERN, text)``).

    >>> pretokenize("héllo wörld 123  ")
    ['héllo', ' wörld', ' 123', '  ']
    """
    return Pretokenizer(GPT2_PATTERN).findall(text)
