"""WordPiece (BERT) preset."""

from .preset import WordPiece

__all__ = ["WordPiece"]
