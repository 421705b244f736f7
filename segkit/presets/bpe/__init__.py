"""Byte-level BPE (issue 25): pre-tokenization (:mod:`.pretokenize`); the encoder is added beside it."""
