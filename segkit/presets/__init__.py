"""Presets: tokenization schemes assembled on the engine.

``base``
    :class:`~segkit.presets.base.Preset`, the base every preset (built-in or
    plugin) derives from, and the helpers a plugin may use.
``registry``
    Preset classes by name (built-ins and the ``segkit.plugins`` entry-point
    group), for :func:`segkit.load` and ``segkit.<Name>``.
``wordpiece``
    :class:`segkit.WordPiece` (BERT), one module per pipeline stage.
``bpe``
    :class:`segkit.BPE` (byte-level BPE: tiktoken, HuggingFace, trained),
    one module per algorithm.
``maxmatch``
    :class:`segkit.MaxMatch` (greedy longest match over bytes or
    characters) and :class:`segkit.RWKVWorld`.
``sentencepiece``
    :class:`segkit.SentencePieceBPE` (SentencePiece ``.model`` files of
    type BPE, read without protobuf).
``bpe``
    Byte-level BPE: pre-tokenization (tiktoken's patterns compiled, special
    tokens) in :mod:`segkit.presets.bpe.pretokenize`; the encoder beside it.
"""
