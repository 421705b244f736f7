"""``segkit.BPE``: byte-level BPE, exact and linear-time.

Three ways in, one encoder:

* :meth:`BPE.from_tiktoken` / :meth:`BPE.from_pretrained`: tiktoken's
  vocabularies and semantics (a pair merges when its concatenation is a
  token, lowest rank first; a piece that is a token is that token; special
  tokens with ``allowed_special`` / ``disallowed_special``);
* :meth:`BPE.from_tokenizer_json`: a HuggingFace tokenizer.json and its
  semantics (listed merges, lowest index first; the normalizer; added tokens
  matched before BPE, as ``Tokenizer.encode``);
* ``BPE(vocab, merges)`` (and ``TrainedBPE.encoder()``): merges in order,
  as HuggingFace, with tiktoken's special-token arguments.

How a piece is encoded: :mod:`~segkit.presets.bpe.backtrack`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from ...runtime import interrupts
from ..base import Preset
from .added import AddedTokens
from .batch import kernel_for, uses_backtrack
from .codec import char_offsets, gather_bytes, token_spans
from .files import BPEFileError, byte_level_bytes, byte_level_string, normalize, read_tiktoken, read_tokenizer_json
from .inputs import check_specials, interleave, renumbered, tokens_from_vocab, utf8_rows
from .model_file import MODES as _MODES, from_state
from .pieces import Pieces, RegexSplitter, make_plan, utf8
from .tables import VocabularyError, build_tables
from .tiktoken_api import TIKTOKEN_MODES, TiktokenAPI, UnknownTokenError
from ..transformers_names import TransformersNames

#: Single texts up to this many UTF-8 bytes go through the fused kernel on
#: per-thread scratch; longer ones through the batch kernels.
SCRATCH_BYTES = 1 << 16

#: tokenizer.json files of this size or more are kept in segkit's model
#: cache once built (smaller ones build in milliseconds).
CACHE_BYTES = 1 << 20

#: The model cache's kind and settings for a model built from a tokenizer.json.
_JSON_CACHE_KIND = "bpe-tokenizer-json"
_JSON_CACHE_SETTINGS = {"format": 1}

#: GPT-2's pattern (segkit's trainer default).
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

#: Whose character classes a model's pattern means
#: (:mod:`segkit.runtime.unicode_flavours`): a tokenizer.json's (and a
#: vocab.json + merges.txt pair's) those of HF tokenizers' Oniguruma, a
#: tiktoken file's (and a Tekken file's: mistral_common runs tiktoken)
#: those of tiktoken's Rust regex crate, segkit's own models the installed
#: :mod:`regex`'s.  Derived from the mode, so saved and cached models need
#: not record it.
FLAVOUR_OF_MODE = {"tokenizer.json": "onig", "tiktoken": "rust", "tekken": "rust", "merges": "regex"}



def around_rows(ids: np.ndarray, rows: np.ndarray, before: np.ndarray, after: np.ndarray):
    """``(ids, row_splits)`` with ``before`` put in front of every row and
    ``after`` behind it (a template's special tokens), in whole-array steps.

    >>> around_rows(np.array([5, 6, 7]), np.array([0, 2, 3]), np.array([1]), np.array([2, 3]))
    (array([1, 5, 6, 2, 3, 1, 7, 2, 3], dtype=int32), array([0, 5, 9]))
    """
    n = rows.size - 1
    nb, na = before.size, after.size
    lens = np.diff(rows)
    new_rows = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens + nb + na, out=new_rows[1:])
    out = np.empty(int(new_rows[-1]), dtype=np.int32)
    starts = new_rows[:-1]
    for k in range(nb):
        out[starts + k] = before[k]
    for k in range(na):
        out[new_rows[1:] - na + k] = after[k]
    # the text's own ids: each id moves by nb + (nb + na) * its row
    row_of = np.repeat(np.arange(n, dtype=np.int64), lens)
    out[np.arange(ids.size, dtype=np.int64) + nb + (nb + na) * row_of] = ids
    return out, new_rows


def _id_list(arr: np.ndarray, off: int, k: int) -> list[int]:
    """``arr[off:off + k]`` as a list; many ids as shared int objects (made
    once, :func:`segkit.presets.base.int_lists_of`) rather than a new int
    each (half the time of ``tolist`` for a long text)."""
    if k > 4096:
        from ..base import int_lists_of

        return int_lists_of(arr[off : off + k], np.array([0, k], dtype=np.int64))[0]
    return arr[off : off + k].tolist()


class BPE(TiktokenAPI, TransformersNames, Preset):
    """Byte-level BPE over a vocabulary and its merges (see the module doc).

    Parameters
    ----------
    vocab
        The tokens: a mapping bytes -> id or id -> bytes (as
        :attr:`segkit.TrainedBPE.vocab`), or a list of bytes; every single
        byte must be a token.
    merges
        Pairs of tokens (bytes, bytes), highest priority first; each pair's
        concatenation must be a token.
    pattern
        Pre-tokenization regular expression (default GPT-2's); None: no
        pre-tokenization (each text, between special tokens, is one piece).
        Text that no match covers forms pieces of its own, as in
        HuggingFace's ``Split`` (tiktoken drops it; :meth:`from_tiktoken`
        does too).
    special_tokens
        ``{string: id}``: strings matched in the text when allowed (see
        :meth:`encode`); their ids must not be ids of ``vocab``.
    ignore_merges
        A piece that is a token is that token (HuggingFace's option).

    Examples
    --------
    >>> import segkit
    >>> vocab = {bytes([b]): b for b in range(256)} | {b"lo": 256, b"low": 257}
    >>> bpe = segkit.BPE(vocab, [(b"l", b"o"), (b"lo", b"w")], special_tokens={"<|end|>": 258})
    >>> bpe.encode("low lower<|end|>", allowed_special="all")
    [257, 32, 257, 101, 114, 258]
    >>> bpe.decode([257, 32, 258])
    'low <|end|>'
    """

    def __init__(
        self,
        vocab: Mapping | Sequence,
        merges: Sequence[tuple[bytes, bytes]],
        *,
        pattern: str | None = GPT2_PATTERN,
        special_tokens: Mapping[str, int] | None = None,
        ignore_merges: bool = False,
    ) -> None:
        tokens = tokens_from_vocab(vocab)
        ids = {t: i for i, t in enumerate(tokens) if t is not None}
        pairs = []
        for k, m in enumerate(merges):
            if not (isinstance(m, (tuple, list)) and len(m) == 2 and all(isinstance(x, (bytes, bytearray)) for x in m)):
                raise TypeError(f"merges[{k}] must be a pair of bytes, found {m!r:.80}")
            a, b = bytes(m[0]), bytes(m[1])
            for part in (a, b, a + b):
                if part not in ids:
                    raise ValueError(f"merges[{k}] = ({a!r}, {b!r}): {part!r} is not a token of vocab")
            pairs.append((ids[a], ids[b]))
        if not isinstance(ignore_merges, bool):
            raise TypeError(f"ignore_merges must be True or False, found {ignore_merges!r}")
        specials = check_specials(special_tokens, len(tokens), ids.values())
        self._setup("merges", tokens, None, pairs, pattern, specials, whole_any=ignore_merges, gaps=True)

    # ------------------------------------------------------------ building
    def _setup(self, mode, tokens, ranks, merges, pattern, specials, *, whole_any, added=None, normalizer=None,
               strings=None, name=None, gaps=False, source="vocab", error=VocabularyError, prefix_at=None) -> None:
        """Build the tables from a token list and set everything up; a
        vocabulary BPE cannot use is ``error`` naming ``source``."""
        try:
            tables = build_tables(tokens, ranks=ranks, merges=merges, whole_any=whole_any)
        except VocabularyError as e:
            raise error(f"{source}: {e}") from None
        m = np.asarray(merges if merges is not None else [], dtype=np.int32).reshape(-1, 2)
        self._assemble(mode, tables, m, pattern, specials, whole_any=whole_any, added=added,
                       normalizer=normalizer, strings=strings, name=name, gaps=gaps, prefix_at=prefix_at)

    def _assemble(self, mode, tables, merges, pattern, specials, *, whole_any, added=None, normalizer=None,
                  strings=None, name=None, gaps=False, prefix_at=None) -> None:
        if mode not in _MODES:
            raise ValueError(f"unknown mode {mode!r}")
        if isinstance(pattern, list):
            pattern = tuple(pattern)
        if pattern is not None and not isinstance(pattern, str) and not (
                isinstance(pattern, tuple) and pattern and all(isinstance(p, str) for p in pattern)):
            raise TypeError(f"pattern must be a str, a tuple of str or None, found {type(pattern).__name__}")
        try:
            splitter = RegexSplitter(pattern, gaps, lines=mode == "tokenizer.json", prefix_at=prefix_at,
                                     flavour=FLAVOUR_OF_MODE[mode])
        except Exception as e:  # regex.error
            raise ValueError(f"pattern is not a valid regular expression: {e}") from None
        self._prefix_at = prefix_at
        self._mode = mode
        self._tables = tables
        self._model = tables.model
        self._kernel = kernel_for(tables.model)
        self._setup_fast(pattern, specials, mode)
        self._merges = merges
        self._pattern = pattern
        self._gaps = bool(gaps)
        self._splitter = splitter
        self._specials = dict(specials)
        self._added_list = list(added or [])
        self._added = AddedTokens(self._added_list, normalizer) if mode == "tokenizer.json" else None
        self._normalizer = normalizer
        self._strings = dict(strings or {})
        self._whole_any = bool(whole_any)
        self.name = name
        self._plans: dict = {}
        # Decoding (every id's bytes) is set up on first use: see _dec.
        n_tok = tables.tok_start.size - 1
        self._n_ids = max([n_tok] + [i + 1 for i in self._extra_strings()])
        self._decoder = None
        self._tok_len_cache = None
        self._post = None  # a tokenizer.json's template: (ids before, ids after) a text's ids
        self._roles: dict[str, str] = {}  # transformers' roles -> token (a model folder's)
        # One text through a chain of compiled patterns and the encoder in
        # one call (a pattern without a hand-written matcher): _chain_ids.
        self._chain = None
        if not self._fast and splitter._packed is not None and prefix_at is None:
            self._chain = (*splitter._packed, splitter.gaps)
        self._chain_entry = None
        self._special_re = None  # (tiktoken semantics: a special token's text in a call's text)
        if self._specials and mode != "tokenizer.json":
            import re

            self._special_re = re.compile("|".join(re.escape(t) for t in sorted(self._specials, key=len,
                                                                                   reverse=True)))

    def _set_template(self, before: Sequence[int], after: Sequence[int]) -> None:
        """The ids a tokenizer.json's post-processor puts around a text's
        (see :meth:`encode`'s ``add_special_tokens``)."""
        if before or after:
            self._post = (np.asarray(before, dtype=np.int32), np.asarray(after, dtype=np.int32))

    def _extra_strings(self) -> dict[int, bytes]:
        """The bytes of the ids that are no token of the tables: special and
        added tokens and other vocabulary strings, as UTF-8."""
        extra: dict[int, bytes] = {i: s.encode("utf-8") for i, s in self._strings.items()}
        extra.update((i, s.encode("utf-8")) for s, i in self._specials.items())
        for a in self._added_list:
            extra.setdefault(a.id, a.content.encode("utf-8"))
        tok_start = self._tables.tok_start
        n_tok = tok_start.size - 1
        return {i: b for i, b in extra.items() if i >= n_tok or tok_start[i + 1] == tok_start[i]}

    @property
    def _dec(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(bytes, start, end)``: id ``i`` decodes to ``bytes[start[i]:end[i]]``
        (tokens, then the other strings after the tokens' bytes).

        Built on first use (a load does not pay for it; it copies the
        tokens' bytes when there are special tokens) and published by one
        assignment of the finished tuple: a thread sees no table or a whole
        one; two threads that race both build the same tables."""
        dec = self._decoder
        if dec is None:
            tables = self._tables
            extra = self._extra_strings()
            n_tok = tables.tok_start.size - 1
            n_ids = self._n_ids
            lens = np.zeros(n_ids, dtype=np.int64)
            lens[:n_tok] = np.diff(tables.tok_start)
            chunks = [tables.tok_bytes]
            where = np.zeros(n_ids, dtype=np.int64)  # extra tokens go after the tokens' bytes
            pos = tables.tok_bytes.size
            for i in sorted(extra):
                lens[i] = len(extra[i])
                where[i] = pos
                pos += len(extra[i])
                chunks.append(np.frombuffer(extra[i], dtype=np.uint8))
            data = np.concatenate(chunks) if len(chunks) > 1 else tables.tok_bytes
            start = np.zeros(n_ids + 1, dtype=np.int64)
            start[: n_tok + 1] = tables.tok_start
            start = start[:-1].copy()
            if extra:
                start[list(extra)] = where[list(extra)]
            dec = self._decoder = (data, start, start + lens)
        return dec

    @property
    def _tok_len(self) -> np.ndarray:
        """int64 byte length of each token (offsets), built on first use."""
        lengths = self._tok_len_cache
        if lengths is None:
            lengths = self._tok_len_cache = np.diff(self._tables.tok_start).astype(np.int64)
        return lengths

    def _setup_fast(self, pattern, specials, mode) -> None:
        """The compiled paths: the pre-tokenizer of a compiled pattern, the
        special tokens' plans, per-thread scratch for single texts."""
        from .char_classes import class_table
        from .pretokenize import Pretokenizer, pattern_kind
        from .pretokenize_kernels import KIND_REGEX
        from .special_tokens import NO_SPECIALS, SpecialTokens

        # (a leading space put in: only the regex path inserts it)
        kind = pattern_kind(pattern) if isinstance(pattern, str) and self._prefix_at is None else KIND_REGEX
        flavour = FLAVOUR_OF_MODE[mode]
        self._pre = Pretokenizer(pattern, flavour) if kind != KIND_REGEX else None
        self._table = class_table(flavour) if self._pre is not None else None
        self._special = SpecialTokens(dict(specials)) if mode != "tokenizer.json" else None
        self._scratches: dict = {}
        # single texts: only the backtracking encoder has a fused path
        self._fast = self._pre is not None and uses_backtrack(self._model)
        self._no_specials = NO_SPECIALS
        self._entry = None  # the fused kernel's compiled entry point, once resolved
        self._sc_ordinary = self._scratch_for(NO_SPECIALS) if self._fast else None
        # encode_ordinary straight to the kernel (no normalizer to apply first)
        self._sc_direct = self._sc_ordinary if mode != "tokenizer.json" else None
        self._sc_default = self._scratch_for(self._special.plan()) if self._fast and self._special else None

    def _scratch_for(self, plan: np.ndarray):
        from .text import Scratch

        sc = self._scratches.get(id(plan))
        if sc is None or sc.plan is not plan:
            if len(self._scratches) > 8:
                self._scratches.clear()
            sc = self._scratches[id(plan)] = Scratch(self._pre.kind, plan)
        return sc

    def _fast_ids(self, text: str, plan: np.ndarray):
        """``(array, offset, k)``: the ids of one text are ``array[offset :
        offset + k]``, through the fused kernel (a compiled pattern, the
        backtracking encoder), or for a text longer than
        :data:`SCRATCH_BYTES` through the batch kernels (the scratch, 40
        bytes per byte of text, is kept per thread: it stays small)."""
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            return self._fast_ids(self._unpaired(text), plan)  # tiktoken's repair, or the error
        except AttributeError:
            raise TypeError(f"text must be a str, found {type(text).__name__}") from None
        if len(data) > SCRATCH_BYTES:
            ids = self._long_ids(data, plan)
            return ids, 0, ids.size
        arr, off, _ = self._scratch_for(plan).get(len(data))
        entry = self._entry
        if entry is None:
            from ...engine.dispatch import resolve_entry
            from .text import encode_text

            k, entry = resolve_entry(encode_text, data, self._model, arr, self._table)
            self._entry = entry
        else:
            k = entry(data, self._model, arr, self._table)
        if k < 0:
            if k == -1:  # pragma: no cover - only a model not built by build_tables
                raise RuntimeError("segkit.BPE: inconsistent tables")
            from .special_tokens import disallowed_error, token_string

            p = -2 - k
            raise disallowed_error(token_string(plan, int(arr[3])), len(data[:p].decode("utf-8")))
        return arr, off, k

    @interrupts.interruptible()
    def _long_ids(self, data: bytes, plan: np.ndarray) -> np.ndarray:
        """The ids of one long text (UTF-8) through the batch kernels, off
        the main thread (Ctrl-C: :mod:`segkit.runtime.interrupts`)."""
        buf = np.frombuffer(data, dtype=np.uint8)
        pieces = self._pre._split(buf, np.array([0, buf.size], dtype=np.int64), plan, single=True)
        return self._run(pieces)[0]

    @interrupts.interruptible("text")
    def _text_ids(self, text: str, plan, ordinary: bool) -> np.ndarray:
        """The ids of one text through the Python splitter and the batch
        kernels (off the main thread when the text is long)."""
        return self._run(self._pieces([text], plan, ordinary))[0]

    @classmethod
    @interrupts.interruptible(source="path")
    def from_tiktoken(
        cls, path: str | os.PathLike, *, pattern: str | None, special_tokens: Mapping[str, int] | None = None,
        name: str | None = None, _cache: bool = True,
    ) -> "BPE":
        """A tokenizer from a tiktoken vocabulary file (``.tiktoken``, or
        gzipped), with tiktoken's semantics.  A file of 1 MiB or more is
        built once and then read from segkit's model cache (keyed by its
        bytes, the pattern and the special tokens).

        Parameters
        ----------
        path
            The file: one ``<base64 token> <rank>`` per line, ranks 0..n-1.
        pattern
            The pre-tokenization pattern (tiktoken's ``pat_str``).
        special_tokens
            ``{string: id}`` (tiktoken's ``special_tokens``).

        Raises
        ------
        segkit.presets.bpe.files.BPEFileError
            The file is unreadable or not a vocabulary BPE can use (a
            :class:`segkit.VocabularyError`): the message names the file
            and the line.
        """
        shown = name or Path(path).name.split(".")[0]

        def build() -> "BPE":
            tokens = read_tiktoken(path)
            specials = check_specials(special_tokens, len(tokens), range(len(tokens)))
            obj = cls.__new__(cls)
            obj._setup("tiktoken", tokens, np.arange(len(tokens), dtype=np.int32), None, pattern, specials,
                       whole_any=True, name=shown, source=path, error=BPEFileError)
            return obj

        # Built once, then kept in segkit's model cache under the file's bytes
        # and the settings (Llama 3's file takes 1.5 s to read and build).
        from ...runtime.regular_files import read_regular

        raw = read_regular(Path(path), "tiktoken vocabulary", BPEFileError)  # (a FIFO would block)
        if not _cache or len(raw) < CACHE_BYTES or (special_tokens is not None and
                                                    not isinstance(special_tokens, Mapping)):
            return build()
        try:
            settings = {"format": 1, "pattern": pattern, "name": shown,
                        "special_tokens": None if special_tokens is None else sorted(special_tokens.items())}
        except TypeError:  # (keys or ids of mixed types: the build names the bad one)
            return build()
        obj = cls._cached("bpe-tiktoken", settings, raw, build)
        obj.name = shown
        return obj

    @classmethod
    @interrupts.interruptible(source="path")
    def from_tokenizer_json(cls, path: str | os.PathLike) -> "BPE":
        """A tokenizer from a HuggingFace ``tokenizer.json`` (byte-level BPE),
        with HuggingFace's semantics: :meth:`encode` applies the normalizer
        and matches all added tokens (special or not) before BPE, as
        ``tokenizers.Tokenizer.encode`` does.

        Raises
        ------
        segkit.presets.bpe.files.BPEFileError
            The file is unreadable or holds a component segkit does not run
            (a :class:`segkit.VocabularyError`; the message names the file
            and the JSON path).
        """
        from ...runtime.regular_files import read_regular

        raw = read_regular(Path(path), "tokenizer.json", BPEFileError)  # (a FIFO would block)
        hit = cls._json_cached(path, raw)
        if hit is not None:
            return hit
        _refuse_characters(path, raw)
        return cls._from_json(path, raw)

    @classmethod
    def _json_cached(cls, path: str | os.PathLike, raw: bytes) -> "BPE | None":
        """The model :meth:`_from_json` built before from these bytes, from
        segkit's model cache, or None: a hit skips parsing the file's JSON
        (DeepSeek's 6 MB take 0.1 s, more than loading its cached model)."""
        if len(raw) < CACHE_BYTES:
            return None
        obj = cls._cached_hit(_JSON_CACHE_KIND, _JSON_CACHE_SETTINGS, raw)
        if obj is not None:
            obj.name = Path(path).name
        return obj

    @classmethod
    @interrupts.interruptible()
    def _from_json(cls, path: str | os.PathLike, raw: bytes, doc: dict | None = None) -> "BPE":
        """:meth:`from_tokenizer_json` of the file's bytes ``raw`` (and its
        parsed JSON ``doc``, when the caller has it)."""

        def build() -> "BPE":
            spec = read_tokenizer_json(path, raw, doc)
            obj = cls.__new__(cls)
            obj._setup("tokenizer.json", spec.tokens, None, spec.merges, spec.pattern, {},
                       whole_any=spec.ignore_merges, added=spec.added, normalizer=spec.normalizer,
                       strings=spec.strings, name=Path(path).name, gaps=True, source=path, error=BPEFileError,
                       prefix_at=spec.prefix_at)
            if spec.template is not None:
                obj._set_template(*spec.template)
            return obj

        # Built once, then kept in segkit's model cache under the file's bytes
        # (a large file: DeepSeek's takes 0.5 s to read and build, its cached
        # model milliseconds to map and check).
        obj = cls._cached(_JSON_CACHE_KIND, _JSON_CACHE_SETTINGS, raw, build) if len(raw) >= CACHE_BYTES else build()
        obj.name = Path(path).name
        return obj

    @classmethod
    @interrupts.interruptible(source="vocab_path")
    def from_vocab_merges(cls, vocab_path: str | os.PathLike, merges_path: str | os.PathLike,
                          special_tokens: list[str] | None = None) -> "BPE":
        """A tokenizer from GPT-2's ``vocab.json`` + ``merges.txt``, with the
        semantics of ``transformers.GPT2TokenizerFast(vocab_file=...,
        merges_file=...)`` (HF ``BPE.from_file``, ByteLevel pre-tokenizer and
        decoder, ``<|endoftext|>`` or the folder's special tokens matched
        before BPE): see :mod:`~segkit.presets.bpe.slow_files`.

        Raises
        ------
        segkit.presets.bpe.files.BPEFileError
            A file is unreadable: the message names the file and the line
            (merges.txt) or the key (vocab.json).

        Examples
        --------
        >>> import segkit, tempfile
        >>> d = tempfile.mkdtemp()
        >>> segkit.train_bpe(["aaa bbb aaa"], 258, ["<|endoftext|>"]).save(d)
        >>> bpe = segkit.BPE.from_vocab_merges(f"{d}/vocab.json", f"{d}/merges.txt")
        >>> bpe.encode("aaa<|endoftext|>")
        [257, 97, 256]
        """
        from ...runtime.regular_files import read_regular
        from .slow_files import read_vocab_merges

        def build() -> "BPE":
            spec = read_vocab_merges(vocab_path, merges_path, special_tokens)
            obj = cls.__new__(cls)
            obj._setup("tokenizer.json", spec.tokens, None, spec.merges, spec.pattern, {},
                       whole_any=spec.ignore_merges, added=spec.added, normalizer=spec.normalizer,
                       strings=spec.strings, name=Path(vocab_path).parent.name or Path(vocab_path).name,
                       gaps=True, source=vocab_path, error=BPEFileError)
            return obj

        # A large pair is built once, then kept in segkit's model cache under
        # the bytes of both files and of the folder's files that add tokens.
        vocab = read_regular(Path(vocab_path), "vocab.json", BPEFileError)
        if len(vocab) < CACHE_BYTES:
            return build()
        folder = Path(vocab_path).parent
        source = [vocab, read_regular(Path(merges_path), "merges.txt", BPEFileError)]
        for extra in ("tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"):
            if (folder / extra).is_file():
                source.append(extra.encode() + read_regular(folder / extra, extra, BPEFileError))
        obj = cls._cached("bpe-vocab-merges", {"format": 1, "special_tokens": special_tokens},
                          b"\0\0".join(source), build)
        obj.name = Path(vocab_path).parent.name or Path(vocab_path).name
        return obj

    @classmethod
    def from_tekken(cls, path: str | os.PathLike) -> "BPE":
        """A tokenizer from a Mistral Tekken file (``tekken_*.json``), with
        ``mistral_common``'s ``Tekkenizer`` semantics: ids equal
        ``Tekkenizer.from_file(path).encode(text, bos=False, eos=False)``,
        control tokens (ids ``0 .. num_special - 1``, listed in
        :attr:`special_tokens`) are never matched in text, and decoding
        drops them (see :mod:`~segkit.presets.bpe.tekken`).

        Raises
        ------
        segkit.presets.bpe.files.BPEFileError
            The file is unreadable: the message names the JSON path.
        """
        from .tekken import read_tekken

        spec = read_tekken(path)
        obj = cls.__new__(cls)
        obj._setup("tekken", spec.tokens, np.arange(len(spec.tokens), dtype=np.int32), None, spec.pattern, {},
                   whole_any=True, strings=dict(enumerate(spec.specials)), name=Path(path).name.replace(".json", ""))
        return obj

    @classmethod
    def from_pretrained(cls, name: str) -> "BPE":
        """A bundled tiktoken vocabulary: ``"gpt2"`` (= ``"r50k_base"``),
        ``"cl100k_base"`` or ``"o200k_base"``, with tiktoken's patterns and
        special tokens.

        >>> import segkit
        >>> enc = segkit.BPE.from_pretrained("cl100k_base")
        >>> enc.encode("hello world")
        [15339, 1917]
        """
        from .encodings import load_encoding

        return load_encoding(cls, name)

    # ------------------------------------------------------------ properties
    @property
    def n_vocab(self) -> int:
        """One more than the largest id (tiktoken's ``n_vocab``)."""
        return self._n_ids

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special tokens (tiktoken semantics) or added tokens (tokenizer.json)."""
        if self._mode == "tokenizer.json":
            return {a.content: a.id for a in self._added_list}
        if self._mode == "tekken":  # the control tokens (never matched in text)
            return {s: i for i, s in self._strings.items()}
        return dict(self._specials)

    @property
    def pattern(self) -> str | tuple[str, ...] | None:
        """The pre-tokenization regex; a tuple for a chain (each pattern
        splits the pieces of the one before, as a tokenizer.json's Sequence
        of Split pre-tokenizers); None: each stretch is one piece."""
        return self._pattern

    def __repr__(self) -> str:
        return f"BPE({self.name or self._mode!r}, n_vocab={self._n_ids})"

    # ------------------------------------------------------------ encoding
    def _cplan(self, allowed_special, disallowed_special):
        """The compiled plan of a call (tiktoken's rules), for tiktoken and
        merges models."""
        if self._mode == "tokenizer.json":
            self._plan(allowed_special, disallowed_special)  # the error
        return self._special.plan(allowed_special, disallowed_special)

    def _plan(self, allowed_special, disallowed_special):
        if self._mode == "tokenizer.json":
            if not (allowed_special == () and disallowed_special == "all"):
                raise ValueError(
                    "allowed_special/disallowed_special are tiktoken's arguments; a tokenizer loaded from a "
                    "tokenizer.json matches its added tokens as HuggingFace does (use encode_ordinary to match none)"
                )
            return None
        try:
            key = (allowed_special if isinstance(allowed_special, str) else frozenset(allowed_special),
                   disallowed_special if isinstance(disallowed_special, str) else frozenset(disallowed_special))
        except TypeError:
            key = None
        plan = self._plans.get(key) if key is not None else None
        if plan is None:
            plan = make_plan(self._specials, allowed_special, disallowed_special)
            if key is not None:
                if len(self._plans) > 64:
                    self._plans.clear()
                self._plans[key] = plan
        return plan

    def _segments(self, text: str, plan, ordinary: bool, index: int | None) -> list[tuple[int, str]]:
        if not isinstance(text, str):
            where = "text" if index is None else f"texts[{index}]"
            raise TypeError(f"{where} must be a str, found {type(text).__name__}")
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # tiktoken's repair, or an error naming the position
                text = self._unpaired(text, index)
        if self._mode == "tokenizer.json":
            s = normalize(self._normalizer, text)
            if ordinary or not self._added.may_occur(text, s):  # (two C-speed searches)
                return [(-1, s)] if s else []
            return self._added.split(text)
        if ordinary:
            return [(-1, text)] if text else []
        return plan.segments(text, index)

    def _pieces(self, texts: Sequence[str], plan, ordinary: bool, first: int = 0) -> Pieces:
        rows = [self._segments(t, plan, ordinary, first + i if len(texts) > 1 else None) for i, t in enumerate(texts)]
        return self._splitter.pieces(rows, first)

    def _ordinary_rows(self, texts: list, first: int) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, row_splits)`` of already normalized texts with no added
        token (tokenizer.json models), compiled."""
        buf, rs = utf8_rows(texts, first)
        pieces = self._pre._split(buf, rs, self._no_specials)
        ids, piece_ends = self._run(pieces)
        return ids, self._row_splits(piece_ends, pieces.row_splits)

    def _compiled_pieces(self, texts: list, plan, ordinary: bool, first: int):
        """Pieces of texts by the compiled pre-tokenizer (None: this model's
        pattern is not compiled, or HF added tokens occur in a text)."""
        if self._pre is None:
            return None
        if self._mode == "tokenizer.json":
            if not ordinary and self._added:
                return None
            if self._normalizer is not None:
                for i, t in enumerate(texts):
                    if not isinstance(t, str):
                        raise TypeError(f"texts[{first + i}] must be a str, found {type(t).__name__}")
                texts = [normalize(self._normalizer, t) for t in texts]
            cplan = self._no_specials
        else:
            cplan = self._no_specials if ordinary else self._special.plan(*plan)
        try:
            buf, rs = utf8_rows(texts, first)
        except ValueError:  # a lone surrogate: tiktoken's repair, or the error
            if self._mode not in TIKTOKEN_MODES:
                raise
            buf, rs = utf8_rows([self._unpaired(t) if isinstance(t, str) else t for t in texts], first)
        try:
            return self._pre._split(buf, rs, cplan)
        except ValueError as e:  # a disallowed special token: name the text in the whole batch
            raise renumbered(e, first) from None

    def _run(self, pieces: Pieces) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, piece_ends)`` of pieces."""
        out = np.empty(max(pieces.data.size, 1), dtype=np.int32)
        k, piece_ends = self._kernel(pieces.data, pieces.starts, pieces.ends, pieces.ids, self._model, out)
        if k < 0:  # pragma: no cover - only a model not built by build_tables
            raise RuntimeError("segkit.BPE: inconsistent tables")
        return out[:k], piece_ends

    @staticmethod
    def _row_splits(piece_ends: np.ndarray, piece_rows: np.ndarray) -> np.ndarray:
        ends = np.concatenate([[0], piece_ends]).astype(np.int64)
        return ends[piece_rows]

    def encode(self, text: str, *, allowed_special: str | Iterable[str] = (),
               disallowed_special: str | Iterable[str] = "all", add_special_tokens: bool = True) -> list[int]:
        """Token ids of ``text``.

        tiktoken semantics (vocabularies from tiktoken files, ``BPE(vocab,
        merges)``): special tokens in ``allowed_special`` (``"all"``: every
        one) are encoded as such; any string of ``disallowed_special``
        (``"all"``: every special token not allowed) in the text is a
        ValueError naming it; other special tokens are ordinary text.
        A tokenizer from a tokenizer.json follows HuggingFace instead (its
        normalizer, then all added tokens matched before BPE) and takes
        neither argument; when the file's post-processor adds special
        tokens (``TemplateProcessing``, ``RobertaProcessing``,
        ``BertProcessing``: Llama 3's ``<|begin_of_text|>``, RoBERTa's
        ``<s> ... </s>``) they are added, as HF's ``encode`` does, unless
        ``add_special_tokens=False``.  A tokenizer with no such
        post-processor adds nothing either way.

        A lone surrogate in ``text`` is a ValueError naming its position:
        it has no UTF-8 form (tiktoken replaces it with U+FFFD, which
        changes the text without saying so).

        >>> import segkit
        >>> enc = segkit.BPE.from_pretrained("cl100k_base")
        >>> enc.encode("hi<|endoftext|>", allowed_special="all")
        [6151, 100257]
        """
        if self._post is not None and add_special_tokens:
            before, after = self._post
            return [*before.tolist(), *self.encode(text, add_special_tokens=False), *after.tolist()]
        sc = self._sc_default
        if sc is not None and allowed_special == () and disallowed_special == "all":
            # the default arguments: the path of encode_ordinary, with their plan
            try:
                data = text.encode()
                arr, off, cap = sc.local.got
            except (AttributeError, UnicodeEncodeError):
                return self._fast_list(text, sc)
            entry = self._entry
            if cap >= len(data) and entry is not None:
                k = entry(data, self._model, arr, self._table)
                if k >= 0:
                    return arr[off : off + k].tolist()
            return self._fast_list(text, sc)
        if self._fast:
            if self._mode != "tokenizer.json":
                if allowed_special == () and disallowed_special == "all":  # the default: its scratch kept
                    return self._fast_list(text, self._sc_default)
                plan = self._special.plan(allowed_special, disallowed_special)
                return self._fast_list(text, self._scratch_for(plan))
            self._plan(allowed_special, disallowed_special)  # (refuses tiktoken's arguments)
            if not isinstance(text, str):
                raise TypeError(f"text must be a str, found {type(text).__name__}")
            utf8(text)
            normed = normalize(self._normalizer, text)
            if not self._added.may_occur(text, normed):
                return self._fast_list(normed, self._sc_ordinary)
        if self._chain is not None and allowed_special == () and disallowed_special == "all":
            ids = self._chain_ids(text, False)
            if ids is not None:
                return ids
        return self._text_ids(text, self._plan(allowed_special, disallowed_special), False).tolist()

    def _chain_ids(self, text: str, ordinary: bool) -> list[int] | None:
        """The ids of one text by :func:`~.text.encode_chain_text`, or None
        where that path does not apply (a special or added token in the
        text, a long text, a lone surrogate, tiktoken's rules failing): the
        caller's path then encodes it, or names the problem."""
        if type(text) is not str:
            return None
        if self._mode == "tokenizer.json":
            normed = normalize(self._normalizer, text)
            if not ordinary and self._added.may_occur(text, normed):
                return None
            text = normed
        elif not ordinary and self._special_re is not None and self._special_re.search(text):
            return None
        try:
            cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
            buf = text.encode("utf-8")
        except UnicodeEncodeError:
            return None
        if len(buf) > SCRATCH_BYTES:
            return None
        entry = self._chain_entry
        if entry is None:
            from ...engine.dispatch import resolve_entry
            from .text import encode_chain_text

            (k, out), self._chain_entry = resolve_entry(encode_chain_text, cps, buf, *self._chain, self._model)
        else:
            k, out = entry(cps, buf, *self._chain, self._model)
        if k < 0:
            return None
        return out[:k].tolist()

    def _fast_list(self, text: str, sc) -> list[int]:
        """The ids of one text through the fused kernel, as a list (the hot
        path of :meth:`encode` and :meth:`encode_ordinary`: each line here
        costs a visible share of a short text's time)."""
        try:
            data = text.encode()
            arr, off, cap = sc.local.got
        except AttributeError:  # not a str, or this thread's first short text
            if not isinstance(text, str):
                raise TypeError(f"text must be a str, found {type(text).__name__}") from None
            return _id_list(*self._fast_ids(text, sc.plan))
        except UnicodeEncodeError:
            return self._fast_list(self._unpaired(text), sc)  # tiktoken's repair, or the error
        entry = self._entry
        if cap < len(data) or entry is None:  # first call, or a long text
            return _id_list(*self._fast_ids(text, sc.plan))
        k = entry(data, self._model, arr, self._table)
        if k < 0:
            arr, off, k = self._fast_ids(text, sc.plan)  # the error, raised
        return arr[off : off + k].tolist()

    def encode_ordinary(self, text: str) -> list[int]:
        """Token ids of ``text`` with no special or added token matched."""
        sc = self._sc_direct
        if sc is not None:
            # _fast_list written out (a Python call is a visible share of a
            # short text's time): bytes in, one compiled call, a slice out.
            try:
                data = text.encode()
                arr, off, cap = sc.local.got
            except (AttributeError, UnicodeEncodeError):
                return self._fast_list(text, sc)
            entry = self._entry
            if cap >= len(data) and entry is not None:
                k = entry(data, self._model, arr, self._table)
                if k >= 0:
                    return arr[off : off + k].tolist()
            return self._fast_list(text, sc)
        if self._fast:
            if self._mode == "tokenizer.json" and self._normalizer is not None:
                if not isinstance(text, str):
                    raise TypeError(f"text must be a str, found {type(text).__name__}")
                utf8(text)
                text = normalize(self._normalizer, text)
            return self._fast_list(text, self._sc_ordinary)
        if self._chain is not None:
            ids = self._chain_ids(text, True)
            if ids is not None:
                return ids
        return self._text_ids(text, None, True).tolist()

    def count(self, text: str, *, allowed_special: str | Iterable[str] = (),
              disallowed_special: str | Iterable[str] = "all", add_special_tokens: bool = True) -> int:
        """``len(self.encode(text, ...))`` without building the list."""
        if self._post is not None and add_special_tokens:
            extra = self._post[0].size + self._post[1].size
            return extra + self.count(text, allowed_special=allowed_special, disallowed_special=disallowed_special,
                                      add_special_tokens=False)
        if self._fast and self._mode != "tokenizer.json":
            return self._fast_ids(text, self._special.plan(allowed_special, disallowed_special))[2]
        return int(self._text_ids(text, self._plan(allowed_special, disallowed_special), False).size)

    @interrupts.interruptible("texts")
    def encode_batch(self, texts: Sequence[str], *, num_threads: int | None = None, flat: bool = False,
                     allowed_special: str | Iterable[str] = (), disallowed_special: str | Iterable[str] = "all",
                     add_special_tokens: bool = True):
        """Token ids of many texts: a list of id lists, or with ``flat=True``
        ``(ids, row_splits)`` NumPy arrays (the ids of text ``i`` are
        ``ids[row_splits[i]:row_splits[i + 1]]``); ``add_special_tokens``
        as in :meth:`encode`."""
        self._plan(allowed_special, disallowed_special)  # argument errors first
        if self._post is not None and add_special_tokens:
            ids, rows = self._batch(texts, (allowed_special, disallowed_special), False, num_threads, True)
            ids, rows = around_rows(ids, rows, *self._post)
            if flat:
                return ids, rows
            from ..base import int_lists_of

            return int_lists_of(ids, rows)
        return self._batch(texts, (allowed_special, disallowed_special), False, num_threads, flat)

    @interrupts.interruptible("texts")
    def encode_ordinary_batch(self, texts: Sequence[str], *, num_threads: int | None = None, flat: bool = False):
        """:meth:`encode_batch` with no special or added token matched."""
        return self._batch(texts, None, True, num_threads, flat)

    def _batch(self, texts, plan, ordinary, num_threads, flat):
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of str, found a single str (wrap it in a list)")
        if isinstance(texts, bytes) or not hasattr(texts, "__iter__"):
            raise TypeError(f"texts must be a sequence of str, found {type(texts).__name__} {texts!r:.40}")
        texts = list(texts)
        from ...runtime.threads import _pool, resolve_threads

        n = min(resolve_threads(num_threads), max(1, len(texts)))

        def encode_rows(rows: list, first: int):
            pieces = self._compiled_pieces(rows, plan, ordinary, first)
            if pieces is None:
                pieces = self._pieces(rows, None if ordinary else self._plan(*plan), ordinary, first)
            ids, piece_ends = self._run(pieces)
            return ids, self._row_splits(piece_ends, pieces.row_splits)

        def run(a: int, b: int):
            if self._mode != "tokenizer.json" or ordinary or not self._added or self._pre is None:
                return encode_rows(texts[a:b], a)
            # HF added tokens: the texts where one may occur go through the
            # Python splitter, the others (normalized) through the compiled path.
            chunk = texts[a:b]
            for i, t in enumerate(chunk):
                if not isinstance(t, str):
                    raise TypeError(f"texts[{a + i}] must be a str, found {type(t).__name__}")
            normed = [normalize(self._normalizer, t) for t in chunk]
            hit = np.fromiter((self._added.may_occur(t, s) for t, s in zip(chunk, normed)), bool, len(chunk))
            if not hit.any():
                return self._ordinary_rows(normed, a)
            plain = np.flatnonzero(~hit)
            special = np.flatnonzero(hit)
            ids_p, rows_p = self._ordinary_rows([normed[i] for i in plain.tolist()], a)
            pieces = self._pieces([chunk[i] for i in special.tolist()], self._plan(*plan), False, a)
            ids_s, piece_ends = self._run(pieces)
            rows_s = self._row_splits(piece_ends, pieces.row_splits)
            return interleave(len(chunk), plain, ids_p, rows_p, special, ids_s, rows_s)

        if n <= 1:
            ids, rows = run(0, len(texts))
        else:
            cuts = [len(texts) * i // n for i in range(n + 1)]
            parts = list(_pool(n).map(lambda i: run(cuts[i], cuts[i + 1]), range(n)))
            ids = np.concatenate([p[0] for p in parts])
            rows = [np.zeros(1, dtype=np.int64)]
            shift = 0
            for _, r in parts:
                rows.append(r[1:] + shift)
                shift += int(r[-1])
            rows = np.concatenate(rows)
        if flat:
            return ids, rows
        from ..base import int_lists_of

        return int_lists_of(ids, rows)

    def _buffer_batch(self, buf: np.ndarray, rs: np.ndarray, plan: tuple, num_threads) -> tuple[np.ndarray, np.ndarray]:
        """``(ids, row_splits)`` of the rows of a UTF-8 buffer (an Arrow
        column's), compiled, on up to ``num_threads`` threads."""
        from ...runtime.threads import _pool, resolve_threads

        cplan = self._special.plan(*plan)
        nrows = rs.size - 1
        n = min(resolve_threads(num_threads), max(1, nrows))

        def run(a: int, b: int):
            try:
                pieces = self._pre.split_buffer(buf[rs[a] : rs[b]], rs[a : b + 1] - rs[a], cplan)
            except ValueError as e:
                raise renumbered(e, a) from None
            ids, piece_ends = self._run(pieces)
            return ids, self._row_splits(piece_ends, pieces.row_splits)

        if n <= 1:
            return run(0, nrows)
        cuts = np.searchsorted(rs, np.arange(1, n) * rs[-1] // n).tolist()
        cuts = sorted(set([0, *[min(max(c, 0), nrows) for c in cuts], nrows]))
        parts = list(_pool(n).map(lambda i: run(cuts[i], cuts[i + 1]), range(len(cuts) - 1)))
        rows = [np.zeros(1, dtype=np.int64)]
        shift = 0
        for _, r in parts:
            rows.append(r[1:] + shift)
            shift += int(r[-1])
        return np.concatenate([p[0] for p in parts]), np.concatenate(rows)

    @interrupts.interruptible("text")
    def encode_with_offsets(self, text: str, *, allowed_special: str | Iterable[str] = (),
                            disallowed_special: str | Iterable[str] = "all") -> tuple[list[int], list[tuple[int, int]]]:
        """Token ids and their ``(start, end)`` character offsets in ``text``
        (for a tokenizer.json with a normalizer: in the normalized text).
        A token that starts inside a character (byte-level tokens can split
        one) starts at that character; one that ends inside a character
        ends after it.

        >>> import segkit
        >>> segkit.BPE.from_pretrained("cl100k_base").encode_with_offsets("a cat")
        ([64, 8415], [(0, 1), (1, 5)])
        """
        if self._prefix_at is not None:
            raise ValueError("encode_with_offsets: this tokenizer.json's ByteLevel puts a space before pieces "
                             "(add_prefix_space=true), which has no place in the text; offsets for it are not "
                             "supported yet (encode gives the ids)")
        if isinstance(text, str):
            utf8(text)  # offsets are into the text as given: a lone surrogate is an error
        pieces = self._pieces([text], self._plan(allowed_special, disallowed_special), False)
        ids, piece_ends = self._run(pieces)
        begin, end = token_spans(ids, piece_ends, pieces.starts, pieces.ends, pieces.ids, self._tok_len)
        cs, ce = char_offsets(pieces.data, begin, end, np.zeros(1, np.int64), np.zeros(ids.size, np.int64))
        return ids.tolist(), list(zip(cs.tolist(), ce.tolist()))

    @interrupts.interruptible("texts")
    def encode_arrow(self, texts: Any, *, null: str = "error", num_threads: int | None = None,
                     allowed_special: str | Iterable[str] = (), disallowed_special: str | Iterable[str] = "all",
                     add_special_tokens: bool = True):
        """:meth:`encode_batch` of an Arrow string column, as a
        ``pyarrow.ListArray`` of int32 ids (a ``LargeListArray`` past 2**31
        ids); needs pyarrow.

        ``texts``: a pyarrow ``StringArray``, ``LargeStringArray`` or
        ``ChunkedArray`` of them, a pandas Series, or a sequence of str.
        ``null="error"``: a null row raises ValueError naming it;
        ``"empty"``: it is encoded as an empty text.

        >>> import pyarrow as pa, segkit
        >>> segkit.BPE.from_pretrained("cl100k_base").encode_arrow(pa.array(["hello world", "a"])).to_pylist()
        [[15339, 1917], [64]]
        """
        from ..base import Utf8Rows, arrow_module

        rows = Utf8Rows.of(texts, null=null)
        self._plan(allowed_special, disallowed_special)  # argument errors first
        id_parts, split_parts, shift = [], [np.zeros(1, dtype=np.int64)], 0
        for data, offs, valid in rows._chunks:
            lo, hi = int(offs[0]), int(offs[-1])
            rs = offs.astype(np.int64) - lo
            nulls_empty = not valid.size or not np.any(np.diff(rs)[valid == 0])
            if self._pre is not None and self._mode != "tokenizer.json" and nulls_empty:
                # The column's UTF-8 buffer as it is (checked, not copied).
                ids, splits = self._buffer_batch(data[lo:hi], rs, (allowed_special, disallowed_special), num_threads)
            else:
                raw = data[lo:hi].tobytes()
                bounds = rs.tolist()
                try:
                    chunk = [raw[bounds[i] : bounds[i + 1]].decode("utf-8") for i in range(len(bounds) - 1)]
                except UnicodeDecodeError as e:
                    raise ValueError(f"texts: a row is not valid UTF-8 ({e.reason})") from None
                if valid.size:
                    chunk = [t if v else "" for t, v in zip(chunk, valid.tolist())]
                ids, splits = self._batch(chunk, (allowed_special, disallowed_special), False, num_threads, True)
            id_parts.append(ids)
            split_parts.append(splits[1:] + shift)
            shift += int(splits[-1])
        ids = np.concatenate(id_parts) if id_parts else np.zeros(0, dtype=np.int32)
        splits = np.concatenate(split_parts)
        if self._post is not None and add_special_tokens:
            ids, splits = around_rows(ids, splits, *self._post)
        pa = arrow_module()  # (after the kernels: segkit precompile runs them without pyarrow)
        if splits[-1] < 2**31:
            return pa.ListArray.from_arrays(pa.array(splits.astype(np.int32)), pa.array(ids))
        return pa.LargeListArray.from_arrays(pa.array(splits), pa.array(ids))

    # ------------------------------------------------------------ decoding
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of the tokens ``ids``; an id that is no token is a
        ValueError naming it and its position.

        >>> import segkit
        >>> segkit.BPE.from_pretrained("cl100k_base").decode_bytes([15339, 1917])
        b'hello world'
        """
        if self._mode == "tekken":  # control tokens decode to nothing, as in Tekkenizer
            from . import tekken

            return tekken.decode_bytes(self, ids, self._gather)
        return self._gather(ids)

    def _gather(self, ids: Iterable[int]) -> bytes:
        if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
            raise TypeError(f"ids must be a sequence of ints, found {type(ids).__name__} {ids!r:.40}")
        given = ids if isinstance(ids, np.ndarray) else list(ids)
        arr = np.asarray(given)
        if arr.size == 0:
            return b""
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            self._raise_not_ids(given, arr)
        data, start, end = self._dec
        if arr.size >= interrupts.OFFLOAD_CHARS:  # Ctrl-C: segkit.runtime.interrupts
            out, bad = interrupts.offload(gather_bytes, arr.astype(np.int64), start, end, data)
        else:
            try:
                out, bad = gather_bytes(arr.astype(np.int64), start, end, data)
            except SystemError as e:
                interrupts.reraise_signal(e)
                raise
        if bad >= 0:
            raise UnknownTokenError(f"id {int(arr[bad])} at position {bad} is not a token of this vocabulary "
                             f"(ids are below {self._n_ids})")
        return out.tobytes()

    def _raise_not_ids(self, given, arr: np.ndarray) -> None:
        """The error for ids NumPy made no integer array of: the first item
        that is not an int (TypeError) or the first int out of range (too
        large for int64, so NumPy made objects or floats of them:
        ValueError, with its value)."""
        if isinstance(given, list):
            for k, x in enumerate(given):
                if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
                    raise TypeError(f"ids must be ints, found {type(x).__name__} {x!r:.40} at position {k}")
                if not 0 <= x < self._n_ids:
                    raise UnknownTokenError(f"id {x} at position {k} is not a token of this vocabulary "
                                     f"(ids are below {self._n_ids})")
        raise TypeError(f"ids must be a sequence of ints, found {arr.dtype} of shape {arr.shape}")

    def decode(self, ids: Iterable[int], errors: str = "replace", skip_special_tokens: bool = False) -> str:
        """The text of the tokens ``ids`` (their bytes as UTF-8; ``errors`` as
        for :meth:`bytes.decode`, default ``"replace"`` as tiktoken; a Tekken
        model drops control tokens and decodes each run between them on its
        own, as Tekkenizer).  ``skip_special_tokens=True`` leaves out the
        special tokens (tiktoken's, a tokenizer.json's added tokens marked
        special), as transformers' ``decode`` does; the default keeps them,
        as tiktoken and transformers do."""
        if skip_special_tokens:
            drop = self._special_ids()
            ids = [i for i in ids if i not in drop]
        if self._mode == "tekken":
            from . import tekken

            return tekken.decode(self, ids, errors, self._gather)
        return self.decode_bytes(ids).decode("utf-8", errors)

    def decode_single_token_bytes(self, i: int) -> bytes:
        """The bytes of one token."""
        return self.decode_bytes([i])

    # ------------------------------------------- transformers' names
    # The contract of TransformersNames: vocab_size, len(), convert_ids_to_tokens,
    # convert_tokens_to_ids, batch_decode and the *_token(_id) names over these.
    def id_to_token(self, id: int) -> str | None:
        """The token string of an id, as a tokenizer.json spells it: a
        special or added token's content, else GPT-2's byte-level spelling
        of its bytes (``"Ġworld"``); None for an id that is no token."""
        special = self._id_names().get(id)
        if special is not None:
            return special
        tok_start = self._tables.tok_start
        if not isinstance(id, int) or isinstance(id, bool) or not 0 <= id < tok_start.size - 1 \
                or tok_start[id + 1] == tok_start[id]:
            return None
        return byte_level_string(self._tables.tok_bytes[tok_start[id] : tok_start[id + 1]].tobytes())

    def token_to_id(self, token: str) -> int | None:
        """The id of a token string (:meth:`id_to_token`'s inverse), or None."""
        if not isinstance(token, str):
            return None
        i = self._name_ids().get(token)
        if i is not None:
            return i
        raw = byte_level_bytes(token)
        if not raw:
            return None
        try:
            return self.encode_single_token(raw)
        except KeyError:
            return None

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        """The number of ids (:attr:`n_vocab`), or without the special and
        added tokens that are not tokens of the model's vocabulary (HF's
        ``get_vocab_size(with_added_tokens=False)``)."""
        if with_added_tokens:
            return self._n_ids
        base = self._tables.tok_start.size - 1
        model_strings = [i for i in self._strings if i not in self._id_names() or i < base]
        return max([base] + [i + 1 for i in model_strings])

    def _special_token(self, role: str) -> str | None:
        return self._roles.get(role)  # (a model folder's tokenizer_config.json says; a bare file has none)

    def _role_ids(self) -> set[int]:
        ids = (self.token_to_id(t) for t in self._roles.values())
        return {i for i in ids if i is not None}

    def _set_roles(self, roles: dict[str, str], where: str) -> None:
        """The tokens of transformers' roles (``{"bos": "<s>", ...}``, from
        a model folder: :func:`segkit.presets.pipeline.folder_config.role_tokens`);
        a token the tokenizer does not have is a ValueError naming ``where``."""
        for role, token in roles.items():
            if self.token_to_id(token) is None:
                raise ValueError(f"{where}: {role}_token {token!r:.60} is no token of the tokenizer")
        self._roles = dict(roles)

    def _special_ids(self) -> set[int]:
        if self._mode == "tokenizer.json":
            return {a.id for a in self._added_list if a.special}
        if self._mode == "tekken":
            return set(self._strings)
        return set(self._specials.values())

    def _id_names(self) -> dict[int, str]:
        names = self.__dict__.get("_names")
        if names is None:
            names = {i: s for i, s in self._strings.items()}
            names.update((i, s) for s, i in self.special_tokens.items())
            self.__dict__["_names"] = names
        return names

    def _name_ids(self) -> dict[str, int]:
        ids = self.__dict__.get("_ids_by_name")
        if ids is None:
            ids = {s: i for i, s in self._id_names().items()}
            self.__dict__["_ids_by_name"] = ids
        return ids

    # ------------------------------------------------------------ saving
    def _state(self) -> tuple[dict, dict]:
        """``(config, arrays)``: everything a saved model holds."""
        t = self._tables
        config = {
            "format": 1,
            "mode": self._mode,
            "pattern": list(self._pattern) if isinstance(self._pattern, tuple) else self._pattern,
            "gaps": self._gaps,
            "special_tokens": dict(self._specials),
            "added_tokens": [vars(a).copy() for a in self._added_list],
            "normalizer": self._normalizer,
            "strings": {str(i): s for i, s in self._strings.items()},
            "whole_any": self._whole_any,
            "name": self.name,
        }
        if self._post is not None:
            config["template"] = [self._post[0].tolist(), self._post[1].tolist()]
        if self._prefix_at is not None:
            config["prefix_at"] = self._prefix_at
        if self._roles:
            config["roles"] = dict(self._roles)
        arrays = {"tok_bytes": t.tok_bytes, "tok_start": t.tok_start, "trans": t.trans, "bsym": t.bsym,
                  "info": t.info, "lex": t.lex, "merges": self._merges}
        return config, arrays

    def _model_state(self):
        config, arrays = self._state()
        return config, arrays, {}

    @classmethod
    def _from_model(cls, config, arrays, blobs, source):
        """A BPE from a model file's parts, certified (see
        :mod:`~segkit.presets.bpe.verify`)."""
        return from_state(cls, config, arrays, source, certify=True)

    def save(self, path: str | os.PathLike) -> None:
        """Write the model to one file; :func:`segkit.load` reads it back
        (validated, in milliseconds: nothing is rebuilt).

        >>> import os, tempfile, segkit
        >>> enc = segkit.BPE.from_pretrained("gpt2")
        >>> path = os.path.join(tempfile.mkdtemp(), "gpt2.segkit")
        >>> enc.save(path)
        >>> segkit.load(path).encode("hello world")
        [31373, 995]
        """
        super().save(path)

    def save_pretrained(self, folder: str | os.PathLike) -> list[str]:
        """Write a HF model folder that transformers'
        ``AutoTokenizer.from_pretrained(folder)``, HF
        ``tokenizers.Tokenizer.from_file(folder / "tokenizer.json")`` and
        :func:`segkit.from_pretrained` load, with this BPE's ids.

        Parameters
        ----------
        folder
            Made if missing; the three files in it are replaced.

        Returns
        -------
        list of str
            The paths written: ``tokenizer.json`` (byte-level BPE, its
            merges derived from the ranks, the pattern as a ``Split``
            pre-tokenizer, the special tokens as added tokens with their
            ids: see :mod:`~segkit.presets.bpe.to_tokenizer_json`),
            ``tokenizer_config.json`` and ``special_tokens_map.json`` (the
            role tokens a model folder gave, such as ``eos_token``; none
            for a tiktoken file, which names no roles).

        Raises
        ------
        ValueError
            What a tokenizer.json cannot say: a pattern HF's regex engine
            (Oniguruma) cannot compile, a Tekken model, a special token
            spelled as another token (the message says which).

        Notes
        -----
        tiktoken semantics carry over: HF matches every special token in
        text (tiktoken's ``allowed_special="all"``) and looks a whole piece
        up before merging (``ignore_merges``).  A BPE read from a
        tokenizer.json is written from what segkit runs of it (vocabulary,
        merges, pre-tokenizer, normalizer, added tokens, the ids its
        post-processor adds), not as a copy of the file; a
        :class:`segkit.Tokenizer` read from one writes the file itself.

        Examples
        --------
        >>> import segkit, tempfile, pathlib
        >>> folder = tempfile.mkdtemp()
        >>> enc = segkit.BPE.from_pretrained("cl100k_base")
        >>> [pathlib.Path(p).name for p in enc.save_pretrained(folder)]
        ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']
        >>> segkit.from_pretrained(folder).encode("hello world<|endoftext|>")
        [15339, 1917, 100257]
        """
        from ..pipeline.folder_config import write_folder
        from .to_tokenizer_json import tokenizer_json_of

        roles = {f"{role}_token": token for role, token in self._roles.items()}
        return write_folder(folder, tokenizer_json_of(self), roles)

    def _parts(self) -> tuple:
        config, arrays = self._state()
        return config, {k: np.array(v) for k, v in arrays.items()}

    @classmethod
    def _from_parts(cls, config, arrays) -> "BPE":
        # A pickle runs whatever code it names, so it is trusted as code is:
        # the structural checks, not the certification of the splits.
        return from_state(cls, config, arrays, "pickled BPE", certify=False)


def _refuse_characters(path, raw: bytes) -> None:
    """A tokenizer.json whose BPE runs over characters (no ByteLevel: the
    SentencePiece-converted files) is not a byte-level BPE: say where it is read."""
    import json

    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return  # (the reader names what is wrong)
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict) or doc["model"].get("type", "BPE") != "BPE":
        return
    from ..pipeline.file_kinds import is_byte_level

    if not is_byte_level(doc):
        raise BPEFileError(f"{path}: a BPE over characters (no ByteLevel pre-tokenizer or decoder: a "
                           "SentencePiece-converted file, Metaspace or byte_fallback); segkit.BPE is byte-level. "
                           "Read it with segkit.from_pretrained(path) or segkit.Tokenizer.from_file(path)")
