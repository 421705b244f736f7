"""HF ``Tokenizer``'s state, as methods of :class:`~segkit.WordPiece`: the
default padding (``enable_padding``; truncation and the rest are shared,
:mod:`..pipeline.defaults`) and the vocabulary with its added tokens (``add_tokens``,
``get_vocab``, ``token_to_id``, ...).  Each method checks its arguments and
rebuilds the stage it changes (:class:`~.options.PostProcessor` or
:class:`~.added_tokens.AddedMatcher`)."""

from __future__ import annotations

from collections.abc import Sequence

from . import added_tokens as _added
from ...results.encoding import _itos
from ..pipeline.defaults import DefaultOptions
from ..pipeline.options import PostProcessor
from .settings import check_post_settings, derived_ids


class TokenizerState(DefaultOptions):
    """Mixin of :class:`~segkit.WordPiece` (see the module documentation;
    the truncation and padding defaults every preset shares come from
    :class:`~..pipeline.defaults.DefaultOptions`)."""

    # ------------------------------------------------------- defaults
    def enable_padding(
        self,
        direction: str = "right",
        pad_id: int | None = None,
        pad_type_id: int = 0,
        pad_token: str | None = None,
        length: int | None = None,
        pad_to_multiple_of: int | None = None,
    ) -> None:
        """Set the default padding (HF ``Tokenizer.enable_padding``):
        ``length`` None pads a batch to its longest encoding.  ``pad_token``
        must be in the vocabulary or an added token (default: the
        tokenizer's); padding uses its id, or ``pad_id`` when given (the id of
        any token, added ones included: HF pads with ``pad_id`` whatever
        ``pad_token`` is; the tokens of padding are then those of ``pad_id``).

        >>> import segkit
        >>> wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"])
        >>> wp.enable_padding(direction="left", pad_type_id=1, length=6)
        >>> e = wp.encode("a b")
        >>> e.ids, e.type_ids, wp.pad_type_id
        ([0, 0, 2, 4, 5, 3], [1, 1, 0, 0, 0, 0], 1)
        """
        token = self.pad_token if pad_token is None else pad_token
        found = self.token_to_id(token) if isinstance(token, str) else None
        if found is None:
            raise ValueError(f"pad_token {token!r:.60} is not in the vocabulary or the added tokens")
        padding = {"length": length, "pad_to_multiple_of": pad_to_multiple_of, "direction": direction,
                   "pad_type_id": pad_type_id}
        pad_id = found if pad_id is None else pad_id
        if pad_id != self.vocab.id(token):  # (the settings name the id only when the token's is not it)
            padding["pad_id"] = pad_id
        self._set_post(pad_token=token, padding=padding)

    def _set_post(self, **changes) -> None:
        """New post-processing defaults: checked, then the stage rebuilt and
        published with the rest of the state (one new state, under the lock)."""
        with self._lock:
            st = self._stages
            settings = dict(st.settings, **changes)
            check_post_settings(settings)
            derived = st.derived
            if settings["pad_token"] != st.settings["pad_token"] or settings["padding"] != st.settings["padding"]:
                derived = derived_ids(settings, self.vocab)
            self._check_pad_id(derived[2], settings, st.names)
            post = PostProcessor.from_settings(settings, self.vocab, derived)
            post.options(False)  # the defaults resolve (ValueError otherwise)
            post.options(True)
            self._stages = st.but(settings=settings, derived=derived, post=post)

    def _check_pad_id(self, pad_id: int, settings: dict, names=None) -> None:
        """ValueError unless ``padding["pad_id"]`` (when set) is the id of a
        token, of the vocabulary or an added one (``names``: id -> token,
        default the current state's)."""
        if (settings["padding"] or {}).get("pad_id") is None:
            return
        itos = _itos(self._stages.names if names is None else names)
        if not 0 <= pad_id < len(itos) or itos[pad_id] is None:
            raise ValueError(f"padding pad_id {pad_id} is not the id of a token (the vocabulary and the added "
                             f"tokens have {len(itos)} ids)")

    # ------------------------------------------------------------ vocabulary
    def add_tokens(self, tokens: Sequence) -> int:
        """Add tokens matched in the text before WordPiece, as HF
        ``Tokenizer.add_tokens``: each item a str (normalized, not special)
        or a :class:`segkit.AddedToken` (``single_word``, ``lstrip``,
        ``rstrip``, ``normalized``, ``special``).  A token in the vocabulary
        keeps its id; new ones get ids after it.  Returns how many were new
        or changed.  See :mod:`segkit.presets.wordpiece.added_tokens` for the rules.

        >>> import segkit
        >>> wp = segkit.WordPiece.bert(["[UNK]", "[CLS]", "[SEP]", "hello", "world"])
        >>> wp.add_tokens(["<new>", "hello"])
        2
        >>> wp.encode("Hello<NEW>world").tokens
        ['[CLS]', 'hello', '<new>', 'world', '[SEP]']
        >>> wp.token_to_id("<new>"), wp.get_vocab_size(), wp.get_vocab_size(with_added_tokens=False)
        (5, 6, 5)
        """
        return _added.add_tokens(self, tokens, None)

    def add_special_tokens(self, tokens: Sequence) -> int:
        """:meth:`add_tokens` for special tokens (HF ``add_special_tokens``):
        matched on the raw text unless the :class:`~segkit.AddedToken` says
        ``normalized=True``, and dropped by ``decode(skip_special_tokens=True)``.

        >>> import segkit
        >>> wp = segkit.WordPiece.bert(["[UNK]", "[CLS]", "[SEP]", "hi"])
        >>> wp.add_special_tokens(["<eot>"])
        1
        >>> e = wp.encode("hi<eot>")
        >>> e.tokens, wp.decode(e.ids), wp.decode(e.ids, skip_special_tokens=False)
        (['[CLS]', 'hi', '<eot>', '[SEP]'], 'hi', '[CLS] hi <eot> [SEP]')
        """
        return _added.add_tokens(self, tokens, True)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        """The vocabulary as a new ``{token: id}`` dict (HF ``get_vocab``),
        with the added tokens unless ``with_added_tokens=False``.

        >>> import segkit
        >>> segkit.WordPiece(["[UNK]", "un", "##able"]).get_vocab()
        {'[UNK]': 0, 'un': 1, '##able': 2}
        """
        return _added.get_vocab(self, with_added_tokens)

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """Number of tokens (HF ``get_vocab_size``): with the added tokens
        that are not in the vocabulary unless ``with_added_tokens=False``.

        >>> import segkit
        >>> segkit.WordPiece(["[UNK]", "un", "##able"]).get_vocab_size()
        3
        """
        st = self._stages
        if with_added_tokens and st.added is not None:
            return len(_added.get_vocab(self, True, st))
        return len(self.vocab)

    def token_to_id(self, token: str) -> int | None:
        """Id of ``token`` (an added token's or the vocabulary's) or None."""
        return _added.token_to_id(self, token)

    def id_to_token(self, id: int) -> str:
        """Token of ``id`` (an added token's normalized content, as HF)."""
        return _added.id_to_token(self, id)
