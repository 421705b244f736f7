"""HuggingFace ``tokenizers``' BPE model over characters (the model of
SentencePiece-converted ``tokenizer.json`` files: Llama 2, Mistral 7B,
Gemma), exact and compiled: :class:`CharBPE` (tables, checks) and
:mod:`.kernels` (a whole batch of words per call)."""

from .model import CharBPE

__all__ = ["CharBPE"]
