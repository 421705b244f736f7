"""What a WordPiece's methods change, as one state published at once.

``add_tokens``, ``add_special_tokens``, ``enable_truncation``,
``enable_padding`` (and their ``no_`` forms) change several stages of a
:class:`~segkit.WordPiece` together: its settings, the ids they imply, the
matching stage (with or without added tokens), the post-processing stage,
the id -> token names and the decoder.  A change builds a new
:class:`Stages` from the current one and publishes it as one attribute
(``WordPiece._stages``, under the tokenizer's lock, so that two changes do
not lose one another); a call reads that attribute once and uses only what
it holds.  So a call made while another thread changes the tokenizer sees
the tokenizer before the change or after it, whole.

(They were attributes of the tokenizer, set one after the other: a call
could find no added tokens, then use the new matching stage, and fail with
``AttributeError: 'AddedMatcher' object has no attribute '_match'`` or a
``TypeError`` about ``segment_parts()``; or take ids from one state and
names from the other.)
"""

from __future__ import annotations


class Stages:
    """One state of a WordPiece's changeable parts (never changed once published).

    Attributes
    ----------
    settings
        The settings (:data:`~segkit.presets.wordpiece.settings.SETTINGS`).
    derived
        :func:`~segkit.presets.wordpiece.settings.derived_ids` of them:
        ``(special tokens, their ids, pad id, cls id, sep id)``.
    matcher, plain_matcher
        The matching stage, and the one without added tokens (the same when
        there are none).
    post
        The post-processing stage (:class:`~.options.PostProcessor`).
    added
        The added vocabulary (:class:`~.added_tokens.AddedVocabulary`) or None.
    names
        id -> token for results (the vocabulary, or a list with the added tokens).
    decoder
        The decoder (:class:`~.decoding.Decoder`).
    """

    __slots__ = ("settings", "derived", "matcher", "plain_matcher", "post", "added", "names", "decoder", "ids_only")

    #: The parts a state is made of (``ids_only`` is derived from them).
    FIELDS = ("settings", "derived", "matcher", "plain_matcher", "post", "added", "names", "decoder")

    def __init__(self, settings: dict, derived: tuple, matcher, plain_matcher, post, added, names, decoder) -> None:
        self.settings = settings
        self.derived = derived
        self.matcher = matcher
        self.plain_matcher = plain_matcher
        self.post = post
        self.added = added
        self.names = names
        self.decoder = decoder
        #: ``(matcher.ids_one, names, opts, post)`` when one text with every
        #: default gets no post-processing and the matcher has an id-only
        #: path (the per-call ``encode(t).ids`` of a BPE), else None.
        self.ids_only = None
        ids_one = getattr(matcher, "ids_one", None)
        if ids_one is not None and post.plain_defaults:
            self.ids_only = (ids_one, names, post.single_defaults, post)

    def but(self, **changes) -> "Stages":
        """A new state: this one with ``changes``."""
        parts = {k: getattr(self, k) for k in self.FIELDS}
        parts.update(changes)
        return Stages(**parts)

    @property
    def pad_id(self) -> int:
        return self.derived[2]
