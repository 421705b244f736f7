"""HF ``tokenizers``' WordLevel model: each pre-tokenized part is one token
(its id, or the unknown token's), run in the staged pipeline
(:mod:`segkit.presets.pipeline.staged`)."""

from .model import WordLevel

__all__ = ["WordLevel"]
