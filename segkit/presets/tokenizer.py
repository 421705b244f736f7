"""``segkit.Tokenizer``: HF ``tokenizers``' ``Tokenizer`` API over any model.

A :class:`Tokenizer` assembles the shared pipeline around a preset that
supplies only its own stage, the tokens of texts as (4, n) rows (see
:mod:`.pipeline.encoder`): today a :class:`segkit.BPE` (through
:class:`segkit.presets.bpe.rows.BPERows`).  What it adds is the pipeline's:
the template (``TemplateProcessing``, ``BertProcessing``,
``RobertaProcessing``), truncation with overflow, padding,
:class:`~segkit.Encoding` / :class:`~segkit.BatchEncoding`, transformers'
``__call__``, Arrow output and decoding.

:meth:`Tokenizer.from_file` reads any tokenizer.json (a model folder too);
a WordPiece file gives a :class:`segkit.WordPiece`, which has this API of
its own (the same :class:`~.pipeline.encoder.HFEncoder`).
"""

from __future__ import annotations

import os
import threading
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..results.encoding import Encoding
from .transformers_names import TransformersNames
from .pipeline.call import VERY_LARGE_INTEGER
from .pipeline.defaults import DefaultOptions
from .pipeline.encoder import HFEncoder
from .pipeline.options import PostProcessor
from .pipeline.postprocess import MAX_PAD_LENGTH, TRUNCATION
from .pipeline.stages import Stages
from .pipeline.template import normalize_template, template_slots


def _spaces_of(model: Any):
    """How a segkit.BPE's normalizer (a Unicode normal form) writes one
    white-space character (None: as it is): what a ``normalized`` added
    token's token string holds."""
    form = getattr(model, "_normalizer", None)
    if isinstance(form, str):  # (segkit.BPE: a Unicode normal form)
        import unicodedata

        return lambda c: unicodedata.normalize(form, c)
    return None


class _Names:
    """The vocabulary as :func:`~.pipeline.template.template_slots` and the
    transformers call read it (``id``, ``has_id``, ``id_to_token``)."""

    def __init__(self, tok: "Tokenizer") -> None:
        self._tok = tok

    def id(self, token: str) -> int | None:
        return self._tok.token_to_id(token) if isinstance(token, str) else None

    def has_id(self, i: int) -> bool:
        return 0 <= i < len(self.id_to_token) and self.id_to_token[i] is not None

    @property
    def id_to_token(self) -> list:
        return self._tok._names


def _check_truncation(t) -> None:
    if t is None:
        return
    if not isinstance(t, dict) or not set(t) <= {"max_length", "strategy", "stride", "direction"}:
        raise ValueError(f"truncation must be None or a dict with keys max_length, strategy, stride, direction; "
                         f"found {t!r:.80}")
    if t.get("strategy", "longest_first") not in TRUNCATION:
        raise ValueError(f"truncation strategy must be one of {sorted(TRUNCATION)}, found {t.get('strategy')!r:.60}")
    if t.get("direction", "right") not in ("right", "left"):
        raise ValueError(f"truncation direction must be 'right' or 'left', found {t.get('direction')!r:.60}")
    for key in ("max_length", "stride"):
        m = t.get(key)
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < 1 << 31):
            raise ValueError(f"truncation {key} must be a non-negative int or None, found {m!r:.60}")


def _check_padding(p) -> None:
    if p is None:
        return
    if not isinstance(p, dict) or not set(p) <= {"length", "pad_to_multiple_of", "direction", "pad_type_id",
                                                 "pad_id", "pad_token"}:
        raise ValueError("padding must be None or a dict with keys length, pad_to_multiple_of, direction, "
                         f"pad_type_id, pad_id, pad_token; found {p!r:.80}")
    if p.get("direction", "right") not in ("right", "left"):
        raise ValueError(f"padding direction must be 'right' or 'left', found {p.get('direction')!r:.60}")
    for key in ("length", "pad_to_multiple_of", "pad_type_id", "pad_id"):
        m = p.get(key)
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < 1 << 31):
            raise ValueError(f"padding {key} must be a non-negative int or None, found {m!r:.60}")
        if key in ("length", "pad_to_multiple_of") and m is not None and m > MAX_PAD_LENGTH:
            raise ValueError(f"padding {key} must be at most {MAX_PAD_LENGTH} (a padded length), found {m}")


class Tokenizer(HFEncoder, DefaultOptions, TransformersNames):
    """HF ``tokenizers.Tokenizer``'s API (and transformers' call) over a model.

    Parameters
    ----------
    model
        A :class:`segkit.BPE` (from a tokenizer.json, a tiktoken file, a
        Tekken file or vocab.json + merges.txt).
    template
        What :meth:`encode` puts around a text and a pair: None, or a dict
        in HF's ``TemplateProcessing`` syntax (``{"single": "<s> $A",
        "pair": "<s> $A $B:1", "special_tokens": {name: id}}``).
    truncation, padding
        Defaults, as HF ``Tokenizer.truncation`` / ``padding`` (dicts, or None).
    trim_offsets
        Leave spaces at a token's ends out of its offsets (HF ByteLevel's
        ``trim_offsets``).
    model_max_length
        What transformers' ``truncation=True`` and ``padding="max_length"``
        cut or pad to without ``max_length``.
    overflow_type_ids
        The type ids of overflowing pieces: ``"sequence"`` (their sequence's
        index, as HF's TemplateProcessing) or ``"template"`` (their slot's,
        as BertProcessing and RobertaProcessing).

    Examples
    --------
    >>> import segkit
    >>> tok = segkit.Tokenizer(segkit.BPE.from_pretrained("cl100k_base"),
    ...                        template={"single": "<|endoftext|> $A", "pair": "<|endoftext|> $A $B:1"})
    >>> e = tok.encode("hello world")
    >>> e.ids, e.tokens, e.offsets
    ([100257, 15339, 1917], ['<|endoftext|>', 'hello', 'Ġworld'], [(0, 0), (0, 5), (5, 11)])
    >>> tok.encode_batch(["a", "b c"], padding=True).to_numpy()["input_ids"].tolist()  # (pad id 0: HF's default)
    [[100257, 64, 0], [100257, 65, 272]]
    """

    model_max_length: int = VERY_LARGE_INTEGER
    model_input_names: tuple = ("input_ids", "attention_mask")

    def __init__(self, model: Any, *, template: dict | None = None, truncation: dict | None = None,
                 padding: dict | None = None, trim_offsets: bool = False,
                 model_max_length: int | None = None, overflow_type_ids: str = "sequence") -> None:
        from .bpe import BPE
        from .bpe.rows import BPERows
        from .pipeline.staged import StagedModel

        if not isinstance(model, (BPE, StagedModel)):
            raise TypeError(f"Tokenizer: model must be a segkit.BPE or a tokenizer.json's staged pipeline (a "
                            f"WordPiece is a tokenizer of its own), found {type(model).__name__}")
        if overflow_type_ids not in ("sequence", "template"):
            raise ValueError(f"Tokenizer: overflow_type_ids must be 'sequence' or 'template', found "
                             f"{overflow_type_ids!r:.60}")
        self._ovf_types = overflow_type_ids
        if not isinstance(trim_offsets, bool):
            raise TypeError(f"Tokenizer: trim_offsets must be a bool, found {type(trim_offsets).__name__}")
        self.model = model
        self._lock = threading.Lock()
        self._trim = trim_offsets
        self._matcher = BPERows(model, trim_offsets) if isinstance(model, BPE) else model.rows(trim_offsets)
        self.__names = None
        if model_max_length is not None:
            if isinstance(model_max_length, bool) or not isinstance(model_max_length, int) or model_max_length < 0:
                raise ValueError(f"model_max_length must be a non-negative int, found {model_max_length!r:.60}")
            self.model_max_length = model_max_length
        self._template = normalize_template(template)
        if self._template == "bert":
            raise ValueError("Tokenizer: template 'bert' names BERT's tokens; give the template itself "
                             "({'single': '[CLS] $A [SEP]', ...})")
        self._stages = self._build({"template": self._template, "truncation": truncation, "padding": padding})

    # ----------------------------------------------------------- loading
    @classmethod
    def from_file(cls, path: str | os.PathLike) -> Any:
        """The tokenizer a tokenizer.json (or a model folder) holds, with its
        post-processor, truncation and padding, and the folder's
        ``model_max_length`` (a WordPiece file gives a :class:`segkit.WordPiece`).

        >>> import segkit, pathlib
        >>> path = pathlib.Path(segkit.__file__).parent / "vocabularies" / "gpt-neox-20b.tokenizer.json"
        >>> tok = segkit.Tokenizer.from_file(path)  # doctest: +SKIP
        """
        from .loader import tokenizer_json_parts

        return tokenizer_json_parts(Path(os.fspath(path)), cls)

    @classmethod
    def from_pretrained(cls, name_or_path: str | os.PathLike) -> Any:
        """:meth:`from_file` of a folder or file, or a bundled BPE name
        (``"cl100k_base"``: no template)."""
        p = Path(os.fspath(name_or_path))
        if p.exists():
            return cls.from_file(p)
        from .loader import from_pretrained

        found = from_pretrained(name_or_path)
        return found if not hasattr(found, "_mode") else cls(found)

    # ------------------------------------------------------------ stages
    @property
    def _names(self) -> list:
        """id -> token (HF's token strings: byte-level spellings)."""
        if self.__names is None:
            m = self.model
            self.__names = [m.id_to_token(i) for i in range(m.get_vocab_size())]
        return self.__names

    def _build(self, settings: dict) -> Stages:
        _check_truncation(settings["truncation"])
        _check_padding(settings["padding"])
        padding = settings["padding"]
        pad_token = (padding or {}).get("pad_token") or self._special_token("pad")
        pad_id = (padding or {}).get("pad_id")
        if pad_id is None:
            pad_id = (self.token_to_id(pad_token) if pad_token is not None else None) or 0
        settings = dict(settings, pad_token=pad_token)
        names = _Names(self)
        slots = {(pair, add): template_slots(self._template, names, "pair" if pair else "single", add)
                 for pair in (False, True) for add in (False, True)}
        post_padding = None if padding is None else {k: v for k, v in padding.items() if k != "pad_token"}
        args = (slots, settings["truncation"], post_padding, pad_id, self._ovf_types == "sequence")
        m = self._matcher
        if getattr(m, "trim_offsets", False) and getattr(getattr(m, "staged", None), "_trim_prefix", False):
            from .pipeline.staged import PieceFirstTrim

            post = PieceFirstTrim(*args, matcher=m)  # (HF trims each piece truncation makes as a text)
        else:
            post = PostProcessor(*args)
        post.options(False)
        post.options(True)
        return Stages(settings, (None, None, pad_id, None, None), self._matcher, self._matcher, post, None,
                      _LazyNames(self), None)

    def _encode_fast(self, st: Stages, text: str, opts: np.ndarray) -> Encoding | None:
        """One text in one compiled call where the model allows it
        (:meth:`segkit.presets.bpe.rows.BPERows.encode_one`), else None."""
        # (the ids alone, rows made when first read, are the shared
        # encoder's first try: Stages.ids_only)
        got = st.matcher.encode_one(text, opts, st.post)
        if got is None:
            return None
        return Encoding(got[0], st.names, 1, got[1])

    @cached_property
    def _strip_map(self) -> dict | None:  # (the model's added tokens never change: made once, then an attribute)
        return self._strip_tokens() or None

    def _strip_tokens(self) -> Any:
        strip = self.__dict__.get("_strip")
        if strip is None:
            m = self.model
            added = getattr(m, "_added_list", None) or getattr(m, "_added", None) or []
            if hasattr(m, "matched"):
                # A staged file: each text's matches again, with the strings
                # its own stages made (a normalizer's text around a
                # normalized token, e.g. under Prepend, is not guessed).
                from ..results.encoding import MatchedStrings

                took = [a.id for a in added if a.lstrip or a.rstrip]
                names = m.model_names()
                strip = self._strip = MatchedStrings(m.matched, took, names) if took or names else {}
                return strip
            from .added_matches import word

            spaces = _spaces_of(m)
            strip = self._strip = {
                a.id: (bool(a.lstrip), bool(a.rstrip), spaces if a.normalized else None,
                       word().match if getattr(a, "single_word", False) else None)
                for a in added if a.lstrip or a.rstrip}
        return strip

    def _set_roles(self, roles: dict, source: str) -> None:
        """The tokens of transformers' roles (``{"pad": "<pad>", ...}``,
        see :func:`~.pipeline.folder_config.role_tokens`), padding's token included."""
        self.model._set_roles(roles, source)
        self._set_post()

    def _set_post(self, **changes) -> None:
        with self._lock:
            st = self._stages
            self._stages = self._build(dict(st.settings, **changes))

    # ------------------------------------------------------- HF's state
    @property
    def truncation(self) -> dict | None:
        """The default truncation (HF ``Tokenizer.truncation``)."""
        t = self._stages.settings["truncation"]
        return None if t is None else {"max_length": t.get("max_length"), "stride": t.get("stride", 0),
                                       "strategy": t.get("strategy", "longest_first"),
                                       "direction": t.get("direction", "right")}

    @property
    def padding(self) -> dict | None:
        """The default padding (HF ``Tokenizer.padding``)."""
        p = self._stages.settings["padding"]
        if p is None:
            return None
        st = self._stages
        return {"length": p.get("length"), "pad_to_multiple_of": p.get("pad_to_multiple_of"),
                "pad_id": st.pad_id, "pad_token": p.get("pad_token") or "[PAD]",
                "pad_type_id": p.get("pad_type_id", 0), "direction": p.get("direction", "right")}

    def enable_padding(self, direction: str = "right", pad_id: int | None = None, pad_type_id: int = 0,
                       pad_token: str | None = None, length: int | None = None,
                       pad_to_multiple_of: int | None = None) -> None:
        """Set the default padding (HF ``Tokenizer.enable_padding``): with
        ``pad_id``, or the id of ``pad_token``."""
        if pad_id is None:
            if pad_token is None or self.token_to_id(pad_token) is None:
                raise ValueError(f"enable_padding: pad_token {pad_token!r:.60} is not in the vocabulary (give pad_id)")
            pad_id = self.token_to_id(pad_token)
        self._set_post(padding={"direction": direction, "pad_id": pad_id, "pad_type_id": pad_type_id,
                           "pad_token": pad_token, "length": length, "pad_to_multiple_of": pad_to_multiple_of})

    @property
    def vocab(self) -> _Names:
        return _Names(self)

    # ------------------------------------------------------- vocabulary
    def token_to_id(self, token: str) -> int | None:
        """Id of ``token`` (HF's spelling), or None."""
        return self.model.token_to_id(token)

    def id_to_token(self, id: int) -> str | None:
        """Token of ``id`` (HF's spelling), or None."""
        return self.model.id_to_token(id)

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return self.model.get_vocab_size(with_added_tokens)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        """``{token: id}`` (HF ``get_vocab``)."""
        names = self._names
        return {t: i for i, t in enumerate(names) if t is not None}

    def _special_token(self, role: str) -> str | None:
        return getattr(self.model, "_special_token", lambda r: None)(role)

    def _special_ids(self) -> set[int]:
        return self.model._special_ids()

    # -------------------------------------------------------- decoding
    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """Text of ``ids`` (HF ``Tokenizer.decode``: special tokens left out
        unless ``skip_special_tokens=False``; invalid UTF-8 as U+FFFD)."""
        if isinstance(ids, np.ndarray):
            ids = ids.tolist()
        return self.model.decode(ids, errors="replace", skip_special_tokens=skip_special_tokens)

    def decode_batch(self, sequences, skip_special_tokens: bool = True) -> list[str]:
        """:meth:`decode` of each sequence (HF ``Tokenizer.decode_batch``)."""
        return [self.decode(s, skip_special_tokens) for s in sequences]

    # ------------------------------------------------------------- saving
    _source_doc: dict | None = None  # the tokenizer.json it was read from (set by from_file)

    def save_pretrained(self, folder: str | os.PathLike) -> list[str]:
        """Write a folder that transformers' ``AutoTokenizer.from_pretrained``
        and :meth:`from_file` load: ``tokenizer.json`` (the file this
        tokenizer was read from, with its current truncation and padding),
        ``tokenizer_config.json`` (``model_max_length``, the role tokens)
        and ``special_tokens_map.json``.  Returns the paths written.

        A tokenizer built here over a :class:`segkit.BPE` (from a tiktoken
        file, say) writes the BPE's tokenizer.json
        (:meth:`segkit.BPE.save_pretrained`) with this tokenizer's
        template, ``trim_offsets``, truncation and padding.

        >>> import json, tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> doc = {"model": {"type": "WordLevel", "vocab": {"a": 0, "[UNK]": 1}, "unk_token": "[UNK]"},
        ...        "pre_tokenizer": {"type": "WhitespaceSplit"}, "added_tokens": [], "normalizer": None,
        ...        "post_processor": None, "decoder": None, "truncation": None, "padding": None}
        >>> _ = (folder / "tokenizer.json").write_text(json.dumps(doc))
        >>> tok = Tokenizer.from_file(folder / "tokenizer.json")
        >>> tok.enable_truncation(2)
        >>> out = pathlib.Path(tempfile.mkdtemp())
        >>> [pathlib.Path(p).name for p in tok.save_pretrained(out)]
        ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json']
        >>> Tokenizer.from_file(out).encode("a b a").ids
        [0, 1]
        """
        from .pipeline.folder_config import ROLES, write_folder

        source = self._source_doc
        if source is None:  # (built over a BPE: ValueError for another model, or what HF cannot say)
            from .bpe.to_tokenizer_json import tokenizer_json_of

            source = tokenizer_json_of(self.model, template=self._template, trim_offsets=self._trim)
        doc = dict(source, truncation=_hf_truncation(self.truncation), padding=_hf_padding(self.padding))
        roles = {f"{r}_token": self._special_token(r) for r in ROLES}
        roles = {k: v for k, v in roles.items() if v is not None}
        mml = None if self.model_max_length == VERY_LARGE_INTEGER else self.model_max_length
        return write_folder(folder, doc, roles, mml)

    # ----------------------------------------------------------- pickling
    def __reduce__(self):
        st = self._stages.settings
        return (_rebuild, (self.model, self._template, st["truncation"], st["padding"], self._trim,
                           self.model_max_length, self._ovf_types, self._source_doc))

    def __repr__(self) -> str:
        return f"Tokenizer(model={self.model!r}, template={'yes' if self._template else None}, " \
               f"trim_offsets={self._trim})"


class _LazyNames:
    """id -> token, made on first use (a 200k vocabulary's strings are only
    needed when tokens are asked for)."""

    def __init__(self, tok: Tokenizer) -> None:
        self._tok = tok

    def __getitem__(self, i):
        return self._tok._names[i]

    def __len__(self) -> int:
        return len(self._tok._names)

    def __iter__(self):
        return iter(self._tok._names)


def _rebuild(model, template, truncation, padding, trim, mml, ovf_types, source_doc=None):
    tok = Tokenizer(model, template=template, truncation=truncation, padding=padding, trim_offsets=trim,
                    model_max_length=None if mml == VERY_LARGE_INTEGER else mml, overflow_type_ids=ovf_types)
    tok._source_doc = source_doc
    return tok


def _hf_truncation(t: dict | None) -> dict | None:
    """:attr:`Tokenizer.truncation` as tokenizer.json writes it."""
    if t is None:
        return None
    return {"direction": "Left" if t["direction"] == "left" else "Right", "max_length": t["max_length"],
            "strategy": {"longest_first": "LongestFirst", "only_first": "OnlyFirst",
                         "only_second": "OnlySecond"}[t["strategy"]], "stride": t["stride"]}


def _hf_padding(p: dict | None) -> dict | None:
    """:attr:`Tokenizer.padding` as tokenizer.json writes it."""
    if p is None:
        return None
    return {"strategy": {"Fixed": p["length"]} if p["length"] is not None else "BatchLongest",
            "direction": "Left" if p["direction"] == "left" else "Right",
            "pad_to_multiple_of": p["pad_to_multiple_of"], "pad_id": p["pad_id"], "pad_type_id": p["pad_type_id"],
            "pad_token": p["pad_token"]}


__all__ = ["Tokenizer", "Encoding"]
