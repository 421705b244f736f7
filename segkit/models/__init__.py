"""Model files and what they hold.

``files``
    The ``.segkit`` file format: a checked JSON header and raw arrays.
``saving``
    :func:`segkit.load` and the shared parts every preset stores
    (vocabularies, automata), validated on load.
``cache``
    The on-disk cache of built models.
``vocabulary``
    :class:`segkit.Vocabulary`: token <-> id tables, plain or marisa-trie.
``bundled``
    Where the bundled vocabularies are, installed or in a checkout.
"""
