"""``segkit.RWKVWorld``: the tokenizer of the RWKV World models.

Greedy longest match over the UTF-8 bytes of the text, left to right, with
no normalization, no pre-tokenization and no unknown input (all 256 single
bytes are tokens): exactly :class:`segkit.MaxMatch` with ``unit="byte"`` on
the vocabulary file ``rwkv_vocab_v20230424.txt`` (bundled, compressed with
xz; see ``vocabularies/README.md``) or any file in its format (read by
:mod:`.rwkv_file`).  The reference implementation is
``rwkv.rwkv_tokenizer.TRIE_TOKENIZER`` (PyPI ``rwkv``); the ids are the same.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from ...engine.automaton import trusted_automaton
from ...runtime import interrupts
from .preset import MaxMatch
from .rwkv_file import parse_rwkv_vocab, read_rwkv_vocab
from .tokens import TokenTable

__all__ = ["RWKVWorld", "BUNDLED_FILE", "BUNDLED_SHA256"]

#: The bundled vocabulary, in ``vocabularies/``.
BUNDLED_FILE = "rwkv_vocab_v20230424.txt.xz"
#: sha256 of the vocabulary file as published (after decompression).
BUNDLED_SHA256 = "e6dee3d4e31b4d5c40ac99508ac6c701ceef4bed681bf2167ce9a908552bca89"
#: :func:`model_digest` of the model this segkit builds from the bundled
#: vocabulary.  A model file holding exactly that model (segkit's model
#: cache, or a saved copy) is the verified build itself, so it loads
#: without checking its automaton against its tokens again (a few
#: milliseconds instead of ten).  ``tests/test_rwkv_world.py`` checks that
#: a fresh build still has this digest; a change to how automata are built
#: must update it (until then such files just load the slow way).
BUNDLED_MODEL_SHA256 = "ff45f3197d7231e9c1257209d088597b7acdbc7e988b3c5ffdcfc440ee1c810c"
#: How many ids the bundled vocabulary has (files of other sizes are not hashed).
_BUNDLED_IDS = 65530


class RWKVWorld(MaxMatch):
    """The RWKV World tokenizer (RWKV-4/5/6/7 "World" models).

    All methods are those of :class:`segkit.MaxMatch`.  Id 0 is the models'
    end-of-text token; it has no bytes (the file does not list it), so
    decoding it raises: drop it first.

    Parameters
    ----------
    path
        An RWKV vocabulary file (``ID LITERAL LENGTH`` lines; see
        :mod:`segkit.presets.maxmatch.rwkv_file`); default: the bundled
        ``rwkv_vocab_v20230424.txt``.  A large file is built once and kept
        in segkit's model cache (:mod:`segkit.models.cache`): later
        processes load it in milliseconds.

    Examples
    --------
    >>> import segkit
    >>> tok = segkit.RWKVWorld()
    >>> ids = tok.encode("Hello, 世界!")
    >>> ids
    [33155, 45, 33, 10267, 14610, 34]
    >>> tok.tokenize("Hello, 世界!")
    [b'Hello', b',', b' ', b'\\xe4\\xb8\\x96', b'\\xe7\\x95\\x8c', b'!']
    >>> tok.decode(ids)
    'Hello, 世界!'
    >>> tok.tokenize("😀")  # a character cut in three: a stream decoder waits for the rest
    [b'\\xf0\\x9f', b'\\x98', b'\\x80']
    >>> dec = tok.stream_decoder()
    >>> [dec.step(i) for i in tok.encode("a😀")]
    ['a', '', '', '😀']
    """

    @interrupts.interruptible()
    def __init__(self, path: str | os.PathLike | None = None) -> None:
        from ...models.cache import cacheable_file

        if path is None:
            raw = _bundled_raw()
            built = RWKVWorld._cached("rwkv-world", {"file": BUNDLED_FILE}, raw,
                                      lambda: RWKVWorld._build(_decompress(raw), BUNDLED_FILE))
        else:
            source = cacheable_file(path)
            if source is not None:
                built = RWKVWorld._cached("rwkv-world", {}, source, lambda: RWKVWorld._build(source, str(path)))
            else:
                tokens, ids = read_rwkv_vocab(path)
                built = RWKVWorld._from_tokens(tokens, ids, str(path))
        self.__dict__.update(built.__dict__)  # assembled already (a new object only for the constructor's sake)

    @classmethod
    def _build(cls, raw: bytes, source: str) -> "RWKVWorld":
        tokens, ids = parse_rwkv_vocab(raw, source)
        return cls._from_tokens(tokens, ids, source)

    @classmethod
    def _from_tokens(cls, tokens: list[bytes], ids: list[int], source: str) -> "RWKVWorld":
        obj = cls.__new__(cls)
        table = TokenTable.build(tokens, ids, "byte", source=source, warn_where=lambda k: f"line {k + 1}")
        obj._assemble(table, "byte", "forward", "error")
        return obj

    @classmethod
    def _from_model(cls, config: dict, arrays: dict, blobs: dict, source: str):
        if _is_bundled_model(config, arrays):
            return cls._from_verified(config, arrays, source)
        obj = super()._from_model(config, arrays, blobs, source)
        if (obj.unit, obj.direction, obj.unknown) != ("byte", "forward", "error"):
            raise ValueError(f"{source}: an RWKVWorld model matches bytes forward with unknown='error', found "
                             f"unit={obj.unit!r}, direction={obj.direction!r}, unknown={obj.unknown!r}")
        return obj

    @classmethod
    def _from_verified(cls, config: dict, arrays: dict, source: str) -> "RWKVWorld":
        """The model of arrays known to be the verified build of the bundled
        vocabulary (their digest says so): assembled as they are, with only
        the automaton's cheap layout check."""
        obj = cls.__new__(cls)
        table = TokenTable("byte", arrays["tokens.data"], arrays["tokens.ends"], arrays["tokens.keys"])
        automaton = trusted_automaton(config["automaton"], arrays["automaton.packed"], source=source)
        obj._assemble(table, "byte", "forward", "error", automaton)
        return obj

    def __repr__(self) -> str:
        return f"RWKVWorld(vocab_size={self.vocab_size})"

    def _no_token_note(self, token_id: int) -> str:
        if token_id == 0:
            return "; id 0 is the models' end-of-text token, which has no bytes: drop it before decoding"
        return ""


def model_digest(config: dict, arrays: dict) -> str:
    """sha256 of a model's configuration (as JSON) and arrays (names,
    little-endian dtypes, shapes and bytes): equal digests, equal models."""
    h = hashlib.sha256(json.dumps(config, sort_keys=True).encode("utf-8"))
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        dt = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
        h.update(json.dumps([name, dt.str, list(a.shape)]).encode("utf-8"))
        h.update(memoryview(a.astype(dt, copy=False)).cast("B"))
    return h.hexdigest()


def _is_bundled_model(config: dict, arrays: dict) -> bool:
    """Whether a model file's parts are exactly the bundled model (see
    :data:`BUNDLED_MODEL_SHA256`); files of another vocabulary size are
    not hashed."""
    ends = arrays.get("tokens.ends")
    if not isinstance(ends, np.ndarray) or ends.shape != (_BUNDLED_IDS,):
        return False
    if set(arrays) != {"automaton.packed", "tokens.data", "tokens.ends", "tokens.keys"}:
        return False
    try:
        return model_digest(config, arrays) == BUNDLED_MODEL_SHA256
    except (TypeError, ValueError):  # a config that is not JSON: not the bundled model
        return False


def _bundled_raw() -> bytes:
    """The bundled file's bytes: from the ``vocabularies/`` folder beside the
    package in a source checkout, else from the installed package."""
    from ...models.bundled import vocabularies_dir

    checkout = Path(__file__).resolve().parents[3] / "vocabularies" / BUNDLED_FILE
    path = checkout if checkout.is_file() else vocabularies_dir() / BUNDLED_FILE
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"the bundled RWKV vocabulary is missing at {path}; reinstall segkit") from None


def _decompress(raw: bytes) -> bytes:
    """The bundled file's text, checked against the published sha256."""
    try:
        import lzma
    except ImportError:  # pragma: no cover - Python built without liblzma
        raise RuntimeError("this Python has no lzma module, needed to read the bundled RWKV vocabulary "
                           f"({BUNDLED_FILE}); pass path= an uncompressed copy") from None
    text = lzma.decompress(raw)
    if hashlib.sha256(text).hexdigest() != BUNDLED_SHA256:
        raise ValueError(f"the bundled RWKV vocabulary {BUNDLED_FILE} is damaged (sha256 differs); reinstall segkit")
    return text
