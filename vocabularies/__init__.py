"""Bundled vocabularies (installed as ``segkit.vocabularies``); see README.md."""
