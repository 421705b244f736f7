"""What a transformers user types, on a preset: the names of
``transformers.PreTrainedTokenizerFast`` over a small contract.

A preset that mixes in :class:`TransformersNames` provides

``id_to_token(id) -> str | None``, ``token_to_id(token) -> int | None``
    the vocabulary, added tokens included;
``get_vocab_size(with_added_tokens) -> int``
    its size, with or without the added tokens;
``decode(ids, skip_special_tokens=...) -> str``
    text from ids, as HF ``tokenizers``' decoder gives it;
``_special_token(role) -> str | None``
    the token that plays ``role`` (``"unk"``, ``"cls"``, ``"sep"``,
    ``"pad"``, ``"mask"``, ``"bos"``, ``"eos"``), or None;
``_special_ids() -> set[int]``
    the ids ``skip_special_tokens`` drops;

and gets transformers' ``vocab_size``, ``len()``, ``convert_ids_to_tokens``,
``convert_tokens_to_ids``, ``batch_decode``, the ``*_token`` and
``*_token_id`` attributes, with transformers' defaults (``batch_decode``
keeps special tokens unless ``skip_special_tokens=True``, as transformers
does, where HF ``tokenizers``' ``decode`` drops them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

ROLES = ("unk", "cls", "sep", "pad", "mask", "bos", "eos")

# transformers' ``clean_up_tokenization``: spaces before punctuation and in
# English contractions, in this order.
_CLEAN_UP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
             (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def clean_up_tokenization(text: str) -> str:
    """transformers' ``clean_up_tokenization`` of decoded text.

    >>> clean_up_tokenization("hello , world ! don ' t")
    "hello, world! don't"
    """
    for a, b in _CLEAN_UP:
        text = text.replace(a, b)
    return text


def _ids_of(ids: Any, what: str) -> list[int] | int:
    """An id, or a list of ids, from an int, a sequence, a numpy array or a
    torch tensor (transformers accepts them all)."""
    if hasattr(ids, "tolist") and not isinstance(ids, (list, tuple)):
        ids = ids.tolist()
    if isinstance(ids, bool):
        raise TypeError(f"{what} must be an int or a sequence of ints, found bool {ids!r}")
    if isinstance(ids, int):
        return ids
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise TypeError(f"{what} must be an int or a sequence of ints, found {type(ids).__name__} {ids!r:.40}")
    out = list(ids)
    for i in out:
        if isinstance(i, bool) or not isinstance(i, int):
            raise TypeError(f"{what} must hold ints, found {type(i).__name__} {i!r:.40}")
    return out


class TransformersNames:
    """transformers' tokenizer names over the contract in the module doc."""

    #: transformers' ``clean_up_tokenization_spaces`` (its default since
    #: 4.45 for tokenizers built from files; a folder's
    #: ``tokenizer_config.json`` may set it).
    clean_up_tokenization_spaces: bool = False

    # -- the contract (a preset defines these) ------------------------------
    def _special_token(self, role: str) -> str | None:  # pragma: no cover - each preset defines it
        raise NotImplementedError

    def _special_ids(self) -> set[int]:  # pragma: no cover - each preset defines it
        raise NotImplementedError

    # -- sizes ---------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """The vocabulary's size without added tokens (transformers' ``vocab_size``)."""
        return self.get_vocab_size(with_added_tokens=False)

    def __len__(self) -> int:
        """The vocabulary's size with the added tokens (transformers' ``len(tokenizer)``)."""
        return self.get_vocab_size(with_added_tokens=True)

    # -- tokens and ids ------------------------------------------------------
    def convert_ids_to_tokens(self, ids: int | Sequence[int], skip_special_tokens: bool = False):
        """The token of an id, or the tokens of a list of ids (None for an id
        that has none), as transformers' ``convert_ids_to_tokens``."""
        got = _ids_of(ids, "ids")
        if isinstance(got, int):
            return self.id_to_token(got)
        drop = self._role_ids() if skip_special_tokens else ()
        return [self.id_to_token(i) for i in got if i not in drop]

    def _role_ids(self) -> set[int]:
        """The ids ``convert_ids_to_tokens(skip_special_tokens=True)`` drops:
        transformers' ``all_special_ids``, the ids of the role tokens (a
        preset whose special tokens all have roles: :meth:`_special_ids`)."""
        return self._special_ids()

    def convert_tokens_to_ids(self, tokens: str | Sequence[str]):
        """The id of a token, or the ids of a list of tokens, the unknown
        token's id for one not in the vocabulary (None without one), as
        transformers' ``convert_tokens_to_ids``."""
        if tokens is None:
            return None
        if isinstance(tokens, str):
            return self._token_id_or_unk(tokens)
        if not isinstance(tokens, Iterable):
            raise TypeError(f"tokens must be a str or a sequence of str, found {type(tokens).__name__}")
        out = []
        for t in tokens:
            if not isinstance(t, str):
                raise TypeError(f"tokens must hold str, found {type(t).__name__} {t!r:.40}")
            out.append(self._token_id_or_unk(t))
        return out

    def _token_id_or_unk(self, token: str) -> int | None:
        i = self.token_to_id(token)
        return self.unk_token_id if i is None else i

    # -- decoding ------------------------------------------------------------
    def batch_decode(self, sequences: Any, skip_special_tokens: bool = False,
                     clean_up_tokenization_spaces: bool | None = None) -> list[str]:
        """Text of each id sequence, as transformers' ``batch_decode``
        (special tokens kept unless ``skip_special_tokens=True``).

        ``sequences``: lists of ids, a 2-d numpy array or torch tensor."""
        if hasattr(sequences, "tolist") and not isinstance(sequences, (list, tuple)):
            sequences = sequences.tolist()
        if isinstance(sequences, (str, bytes)) or not isinstance(sequences, Iterable):
            raise TypeError(f"sequences must be a list of id lists, found {type(sequences).__name__}")
        clean = self.clean_up_tokenization_spaces if clean_up_tokenization_spaces is None \
            else clean_up_tokenization_spaces
        out = []
        for seq in sequences:
            got = _ids_of(seq, "each sequence")
            text = self.decode([got] if isinstance(got, int) else got, skip_special_tokens=skip_special_tokens)
            out.append(clean_up_tokenization(text) if clean else text)
        return out


class _RoleToken:
    """``<role>_token``: the preset's token for the role.  A non-data
    descriptor, so that a preset that keeps the token as an attribute of
    its own (WordPiece's ``unk_token``, ``cls_token``, ...) keeps it."""

    def __init__(self, role: str) -> None:
        self.role = role
        self.__doc__ = f"The {role} token (None without one), as transformers' ``{role}_token``."

    def __get__(self, obj, owner=None):
        return self if obj is None else obj._special_token(self.role)


def _role_id(role: str) -> property:
    def token_id(self) -> int | None:
        t = self._special_token(role)
        return None if t is None else self.token_to_id(t)

    token_id.__name__ = f"{role}_token_id"
    token_id.__doc__ = f"The id of the {role} token (None without one), as transformers' ``{role}_token_id``."
    return property(token_id)


for _role in ROLES:
    setattr(TransformersNames, f"{_role}_token", _RoleToken(_role))
    setattr(TransformersNames, f"{_role}_token_id", _role_id(_role))
del _role
