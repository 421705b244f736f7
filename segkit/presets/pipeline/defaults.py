"""HF ``Tokenizer``'s default truncation and padding, written once for every
preset of the shared pipeline (:class:`segkit.WordPiece` and
:class:`segkit.Tokenizer`).

A class that mixes :class:`DefaultOptions` in gives ``_set_post(**changes)``:
new settings (``truncation``, ``padding``, ``pad_token``), checked, the
post-processing stage rebuilt and published under its lock, and
``_stages`` (the current state, whose ``post`` resolves option vectors).
"""

from __future__ import annotations


class DefaultOptions:
    """``enable_truncation``, ``no_truncation``, ``no_padding`` and
    ``pad_type_id`` over ``_set_post`` (see the module documentation);
    ``enable_padding`` is the preset's (its default pad token)."""

    def enable_truncation(self, max_length: int, stride: int = 0, strategy: str = "longest_first",
                          direction: str = "right") -> None:
        """Set the default truncation of :meth:`encode` and
        :meth:`encode_batch` (HF ``Tokenizer.enable_truncation``; saved with
        the tokenizer and in ``tokenizer.json``).  As HF, a stride that does
        not fit the length is refused at once, and the old default stays.

        >>> import segkit
        >>> wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b"])
        >>> wp.enable_truncation(4, stride=1)
        >>> e = wp.encode("a b a")
        >>> e.tokens, [o.tokens for o in e.overflowing]
        (['[CLS]', 'a', 'b', '[SEP]'], [['[CLS]', 'b', 'a', '[SEP]']])
        """
        old = self._stages.settings["truncation"]
        self._set_post(truncation={"max_length": max_length, "strategy": strategy, "stride": stride,
                                   "direction": direction})
        try:
            self._stages.post.options(False, stride=stride)
        except ValueError:
            self._set_post(truncation=old)
            raise

    def no_truncation(self) -> None:
        """No default truncation (HF ``Tokenizer.no_truncation``)."""
        self._set_post(truncation=None)

    def no_padding(self) -> None:
        """No default padding (HF ``Tokenizer.no_padding``)."""
        self._set_post(padding=None)

    @property
    def pad_type_id(self) -> int:
        """Type id of padding tokens (set with ``enable_padding``)."""
        return int((self._stages.settings["padding"] or {}).get("pad_type_id") or 0)
