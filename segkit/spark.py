"""Spark jobs (public module; the code is in :mod:`segkit.scale.spark`).

Needs the extra ``segkit[spark]``.  See :doc:`/corpus_scale`.
"""

from .scale.spark import encode, encode_udf, output_schema

__all__ = ["encode", "encode_udf", "output_schema"]
