"""Results: what a preset's call returns.

:class:`~segkit.Encoding` and :class:`~segkit.BatchEncoding` hold token rows
as NumPy arrays and turn them into Python lists, tensors or Arrow columns
only when asked for.
"""

from .encoding import BatchEncoding, Encoding

__all__ = ["Encoding", "BatchEncoding"]
