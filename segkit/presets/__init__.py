"""Presets: tokenizers built on the engine."""
