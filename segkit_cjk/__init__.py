"""segkit_cjk: Chinese word segmentation on the segkit engine.

A plugin package: it registers :class:`ChineseMaxMatch` in the entry-point
group ``segkit.plugins``, so ``segkit.ChineseMaxMatch`` resolves to it.
"""

from .segmenter import ChineseMaxMatch

__all__ = ["ChineseMaxMatch"]
