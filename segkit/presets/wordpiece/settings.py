"""A WordPiece's settings: their checks, and what they imply for the engine.

The settings (:data:`SETTINGS`), with the vocabulary, define a WordPiece
and are what a model file stores.  This module checks them (the
constructor's and a file's alike) and derives from them everything the
stages are built from: the engine configuration and boundary classes of the
automaton, the ids of the special, template and padding tokens, and the
normalization table of the compiled pass.
"""

from __future__ import annotations

import numpy as np

from ...engine import EngineConfig
from ...engine.rewrite import build_rewrite_table, pack_rewrite
from ...models.vocabulary import Vocabulary
from ...runtime.surrogates import check_text
from .normalization import bert_rewrite_table
from ..pipeline.postprocess import MAX_PAD_LENGTH, TRUNCATION
from ..pipeline.template import normalize_template, template_slots

_SIDES = ("right", "left")
from .pretokenize import bert_classes

#: Special tokens of BERT vocabularies: never split when they occur in text.
BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

#: Settings that, with the vocabulary, define a WordPiece (saved in model files).
SETTINGS = (
    "suffix_indicator",
    "unk_token",
    "max_input_chars_per_word",
    "cjk",
    "lowercase",
    "strip_accents",
    "clean_text",
    "handle_chinese_chars",
    "special_tokens",
    "template",
    "cls_token",
    "sep_token",
    "pad_token",
    "truncation",
    "padding",
    "flavour",
)

#: The settings a WordPiece's methods change (``enable_truncation``,
#: ``enable_padding``, ...): part of its published state
#: (:mod:`~segkit.presets.pipeline.stages`), not attributes of their own.
CHANGEABLE = ("truncation", "padding", "pad_token")


# ------------------------------------------------------------------ checks
def check_setting_types(s: dict) -> None:
    """Types of the settings a model file stores (the constructor's
    arguments are checked by their use; a file's are checked here)."""
    for key in ("suffix_indicator", "unk_token", "cls_token", "sep_token", "pad_token", "cjk", "flavour"):
        if not isinstance(s[key], str):
            raise ValueError(f"setting {key} must be a str, found {s[key]!r:.80}")
    for key in ("lowercase", "clean_text", "handle_chinese_chars"):
        if not isinstance(s[key], bool):
            raise ValueError(f"setting {key} must be True or False, found {s[key]!r:.80}")
    if s["strip_accents"] is not None and not isinstance(s["strip_accents"], bool):
        raise ValueError(f"setting strip_accents must be True, False or None, found {s['strip_accents']!r:.80}")
    try:
        ok = normalize_template(s["template"]) == s["template"]
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"setting template must be None, 'bert' or a template in canonical form, found {s['template']!r:.80}")
    if s["special_tokens"] is not None and not isinstance(s["special_tokens"], list):
        raise ValueError(f"setting special_tokens must be a list or None, found {s['special_tokens']!r:.80}")


def check_post_settings(s: dict) -> None:
    """``truncation`` and ``padding`` settings: None or dicts of the keys
    :class:`PostProcessor` reads, with values it accepts."""
    t = s["truncation"]
    if t is not None:
        if not isinstance(t, dict) or not set(t) <= {"max_length", "strategy", "stride", "direction"}:
            raise ValueError(
                f"truncation must be None or a dict with keys max_length, strategy, stride, direction; found {t!r:.80}"
            )
        if t.get("strategy", "longest_first") not in TRUNCATION:
            raise ValueError(f"truncation strategy must be one of {sorted(TRUNCATION)}, found {t.get('strategy')!r:.80}")
        if t.get("direction", "right") not in _SIDES:
            raise ValueError(f"truncation direction must be 'right' or 'left', found {t.get('direction')!r:.80}")
        for key in ("max_length", "stride"):
            m = t.get(key)
            if m is not None and (isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < 1 << 31):
                raise ValueError(f"truncation {key} must be a non-negative int or None, found {m!r:.80}")
    p = s["padding"]
    if p is not None:
        if not isinstance(p, dict) or not set(p) <= {"length", "pad_to_multiple_of", "direction", "pad_type_id", "pad_id"}:
            raise ValueError(
                "padding must be None or a dict with keys length, pad_to_multiple_of, direction, pad_type_id, "
                f"pad_id; found {p!r:.80}"
            )
        if p.get("direction", "right") not in _SIDES:
            raise ValueError(f"padding direction must be 'right' or 'left', found {p.get('direction')!r:.80}")
        for key in ("length", "pad_to_multiple_of", "pad_type_id", "pad_id"):
            m = p.get(key)
            if m is not None and (isinstance(m, bool) or not isinstance(m, int) or not 0 <= m < 1 << 31):
                raise ValueError(f"padding {key} must be a non-negative int or None, found {m!r:.80}")
            if key in ("length", "pad_to_multiple_of") and m is not None and m > MAX_PAD_LENGTH:
                raise ValueError(f"padding {key} must be at most {MAX_PAD_LENGTH} (a padded length), found {m}")


def check_settings(s: dict, vocab: Vocabulary) -> None:
    """The settings' values, and the tokens they name against ``vocab``."""
    for key in ("suffix_indicator", "unk_token", "cls_token", "sep_token", "pad_token", "cjk", "flavour"):
        if not isinstance(s[key], str):
            raise TypeError(f"{key} must be a str, found {type(s[key]).__name__} {s[key]!r:.60}")
    check_text(s["suffix_indicator"], "suffix_indicator")
    if vocab.id(s["unk_token"]) is None:
        raise ValueError(
            f"unk_token {s['unk_token']!r} is not in the vocabulary ({len(vocab)} tokens); "
            "pass the vocabulary's unknown token as unk_token="
        )
    m = s["max_input_chars_per_word"]
    if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m < 1 << 31:
        raise ValueError(f"max_input_chars_per_word must be an int from 1 to 2**31 - 1, found {m!r:.60}")
    if s["flavour"] not in ("hf", "tf_text"):
        raise ValueError(f"flavour must be 'hf' or 'tf_text', found {s['flavour']!r}")
    if s["cjk"] not in ("hf", "bert"):
        raise ValueError(f"cjk must be 'hf' or 'bert', found {s['cjk']!r}")
    if s["template"] == "bert":
        for key in ("cls_token", "sep_token"):
            if vocab.id(s[key]) is None:
                raise ValueError(f"{key} {s[key]!r} is not in the vocabulary; the 'bert' template needs it")
    elif s["template"] is not None:
        for which in ("single", "pair"):
            template_slots(s["template"], vocab, which)
    for t in s["special_tokens"] or ():
        if not isinstance(t, str) or not t:
            raise ValueError(f"special tokens must be non-empty strings, found {t!r}")
        if vocab.id(t) is None:
            raise ValueError(f"special token {t!r} is not in the vocabulary")
    check_post_settings(s)


# ------------------------------------------------------------- derivations
def boundary_classes(s: dict) -> np.ndarray:
    """The boundary class of every code point the settings imply."""
    tf = s["flavour"] == "tf_text"
    return bert_classes(("bert" if tf else s["cjk"]) if s["handle_chinese_chars"] else None, "current" if tf else "hf")


def engine_config(s: dict, vocab: Vocabulary) -> EngineConfig:
    """The engine configuration the settings imply."""
    tf = s["flavour"] == "tf_text"
    m = s["max_input_chars_per_word"]
    return EngineConfig(
        suffix_indicator=s["suffix_indicator"],
        unknown="word",
        unk_id=vocab.id(s["unk_token"]),
        max_word_chars=None if tf else m,
        max_word_bytes=m if tf else None,
    )


def derived_ids(s: dict, vocab: Vocabulary) -> tuple:
    """``(special tokens, their ids, pad id, cls id, sep id)``, looked up
    once (pickles carry them, so unpickling needs no vocabulary lookup)."""
    if s["special_tokens"] is None:
        specials = [t for t in BERT_SPECIAL_TOKENS if t in vocab]
    else:
        specials = list(s["special_tokens"])
    return (specials, [vocab.id(t) for t in specials], pad_id_of(s, vocab),
            vocab.id(s["cls_token"]), vocab.id(s["sep_token"]))


def pad_id_of(s: dict, vocab: Vocabulary) -> int:
    """The id padding uses: ``padding["pad_id"]`` when set (HF pads with
    its ``pad_id`` whatever ``pad_token`` says), else the id of ``pad_token``
    (0 when it is not in the vocabulary, as HF's default pad_id)."""
    explicit = (s["padding"] or {}).get("pad_id")
    if explicit is not None:
        return explicit
    pad = vocab.id(s["pad_token"])
    return 0 if pad is None else pad


_IDENTITY = None


def _identity_table():
    global _IDENTITY
    if _IDENTITY is None:
        _IDENTITY = build_rewrite_table({})
    return _IDENTITY


def packed_rewrite(s: dict, specials: list, special_ids: list) -> np.ndarray:
    """The read-only normalization table of the compiled pass (BERT's
    normalization as configured, the special tokens kept whole)."""
    lowercase = s["lowercase"]
    strip = lowercase if s["strip_accents"] is None else bool(s["strip_accents"])
    tables = "current" if s["flavour"] == "tf_text" else "hf"
    # An identity table when nothing is normalized: every text then goes
    # through the same compiled path (one to compile, not two).
    table = bert_rewrite_table(s["clean_text"], strip, lowercase, tables) or _identity_table()
    rewrite = pack_rewrite(table[0], table[1], specials, list(special_ids))
    rewrite.setflags(write=False)
    return rewrite
