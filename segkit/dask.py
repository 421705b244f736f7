"""Dask jobs (public module; the code is in :mod:`segkit.scale.dask`).

Needs the extra ``segkit[dask]``.  See :doc:`/corpus_scale`.
"""

from .scale.dask import cut, encode, train_bpe, train_wordpiece

__all__ = ["encode", "cut", "train_bpe", "train_wordpiece"]
