"""Post-processing of a WordPiece: the caller's options (special tokens,
truncation, padding, overflow), resolved against the tokenizer's defaults
into the int64 option vector that the compiled kernels of
:mod:`segkit.presets.pipeline.postprocess` read.

Vectors are cached per distinct set of keyword values, so that the
one-sentence path costs one dict lookup.
"""

from __future__ import annotations

import numpy as np

from ...runtime import interrupts
from .postprocess import (
    MAX_PAD_LENGTH,
    E_STRIDE,
    O_MODE,
    O_NSLOTS,
    O_PAD_LEFT,
    O_PAD_TO,
    O_SLOTS,
    O_STRIDE,
    K_A,
    TRUNCATION,
    assemble,
    options_vector,
)
from .template import bert_template, template_slots

SIDES = ("right", "left")


#: Lengths a call pads to (and strides, multiples) are below this: rows of
#: more tokens could not be allocated anyway.
MAX_LENGTH = (1 << 31) - 1


def _length(name: str, value, minimum: int = 0):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not minimum <= value <= MAX_LENGTH:
        raise ValueError(f"{name} must be an int from {minimum} to 2**31 - 1, found {value!r:.60}")
    return int(value)


class PostProcessor:
    """The template, truncation and padding of a WordPiece.

    Parameters
    ----------
    slots
        ``{(pair, add_special_tokens): [(kind, token id, type id), ...]}``
        for the four combinations (see
        :func:`segkit.presets.pipeline.template.template_slots`).
    truncation, padding
        The tokenizer's defaults (dicts as the settings hold them) or None.
    pad_id
        Id of the padding token.
    ovf_seq_types
        Overflowing pieces take their sequence index as type id (HF
        ``TemplateProcessing``); False: their template slot's.

    Examples
    --------
    >>> from segkit.presets.pipeline.postprocess import K_A, K_B, K_SPECIAL, O_BUDGET, O_PAD_TO, O_SLOTS
    >>> bert = [(K_SPECIAL, 2, 0), (K_A, 0, 0), (K_SPECIAL, 3, 0)]
    >>> slots = {(False, True): bert, (False, False): [(K_A, 0, 0)],
    ...          (True, True): bert + [(K_B, 0, 1), (K_SPECIAL, 3, 1)], (True, False): [(K_A, 0, 0), (K_B, 0, 1)]}
    >>> post = PostProcessor(slots, {"max_length": 8, "stride": 2}, None, pad_id=0)
    >>> opts = post.options(True)  # a pair, the tokenizer's defaults
    >>> int(opts[O_BUDGET]), int(opts[O_PAD_TO])  # 8 - 3 special tokens; no padding
    (5, -1)
    >>> opts[O_SLOTS:].reshape(-1, 3).tolist()  # (kind, token id, type id) per slot
    [[0, 2, 0], [1, 0, 0], [0, 3, 0], [2, 0, 1], [0, 3, 1]]
    """

    def __init__(self, slots: dict, truncation, padding, pad_id: int, ovf_seq_types: bool = True) -> None:
        self.slots = slots
        self.truncation = truncation
        self.padding = padding
        self.pad_id = pad_id
        self.ovf_seq_types = ovf_seq_types
        #: Option vectors by the keyword values of the call (and pair or not).
        self.cache: dict = {}
        self._single_defaults = None
        self._plain_defaults = None

    @property
    def single_defaults(self) -> np.ndarray:
        """The option vector of one text with every keyword left to its default."""
        opts = self._single_defaults
        if opts is None:
            opts = self._single_defaults = self.options(False)
        return opts

    @property
    def plain_defaults(self) -> bool:
        """:meth:`is_plain` of :attr:`single_defaults` (asked per call)."""
        plain = self._plain_defaults
        if plain is None:
            plain = self._plain_defaults = self.is_plain(self.single_defaults)
        return plain

    @classmethod
    def from_settings(cls, s: dict, vocab, derived: tuple) -> "PostProcessor":
        """The post-processing stage a WordPiece's settings imply
        (``derived``: :func:`~segkit.presets.wordpiece.settings.derived_ids`)."""
        template = s["template"]
        if template == "bert":
            template = bert_template(s["cls_token"], s["sep_token"])
        known = {s["sep_token"]: derived[4], s["cls_token"]: derived[3]}
        slots = {(pair, add): template_slots(template, vocab, "pair" if pair else "single", add, known)
                 for pair in (False, True) for add in (False, True)}
        return cls(slots, s["truncation"], s["padding"], derived[2])

    def options(
        self,
        pair: bool,
        add_special_tokens: bool = True,
        max_length=None,
        truncation=None,
        padding=None,
        pad_to_multiple_of=None,
        stride=None,
        truncation_side=None,
        padding_side=None,
        overflow: bool = True,
    ) -> np.ndarray:
        """The read-only option vector of a call (``encode``'s keywords;
        None: the tokenizer's default), checked and cached."""
        key = (pair, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of, stride,
               truncation_side, padding_side, overflow)
        try:
            opts = self.cache.get(key)
        except TypeError:  # an unhashable argument: resolved (and rejected) below
            opts = key = None
        if opts is not None:
            return opts
        opts = self._resolve(*(key or (pair, add_special_tokens, max_length, truncation, padding,
                                       pad_to_multiple_of, stride, truncation_side, padding_side, overflow)))
        if key is not None and len(self.cache) < 256:
            self.cache[key] = opts
        return opts

    def _resolve(self, pair, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of, stride,
                 truncation_side, padding_side, overflow) -> np.ndarray:
        for name, value in (("max_length", max_length), ("stride", stride), ("pad_to_multiple_of", pad_to_multiple_of)):
            if value is not None and not isinstance(value, (int, np.integer)):
                raise TypeError(f"{name} must be None or an int, found {type(value).__name__} {value!r:.40}")
        slots = self.slots[(bool(pair), bool(add_special_tokens))]
        nspec = sum(1 for s in slots if s[0] == 0)
        tdef = self.truncation or {}
        pdef = self.padding or {}
        if truncation is None:
            truncation = tdef.get("strategy", "longest_first") if tdef else False
        if truncation is True:
            truncation = "longest_first"
        if padding is None:
            padding = ("max_length" if pdef.get("length") else "longest") if pdef else False
        if padding is True:
            padding = "longest"
        # An explicit max_length serves truncation and padding; otherwise each
        # takes its own default length (tokenizer.json may set both).
        pad_length = max_length if max_length is not None else pdef.get("length")
        if max_length is None and truncation:
            max_length = tdef.get("max_length")
            if isinstance(max_length, (int, np.integer)) and not isinstance(max_length, bool) and max_length < nspec:
                # The tokenizer's own max_length (a tokenizer.json's) below
                # the template's special tokens: HF subtracts them in
                # unsigned arithmetic, which wraps around, and truncates
                # nothing.  (One asked for in the call is refused below.)
                truncation = False
        if pad_to_multiple_of is None:
            pad_to_multiple_of = pdef.get("pad_to_multiple_of") or 0
        mult = _length("pad_to_multiple_of", pad_to_multiple_of)
        if mult > MAX_PAD_LENGTH:
            raise ValueError(f"pad_to_multiple_of must be at most {MAX_PAD_LENGTH} (a padded length), found {mult}")
        stride_asked = stride is not None  # in this call, not a default of the tokenizer's
        if stride is None:
            stride = tdef.get("stride", 0)
        stride = _length("stride", stride)
        if truncation_side is None:
            truncation_side = tdef.get("direction", "right")
        if padding_side is None:
            padding_side = pdef.get("direction", "right")
        for name, side in (("truncation_side", truncation_side), ("padding_side", padding_side)):
            if side not in SIDES:
                raise ValueError(f"{name} must be 'right' or 'left', found {side!r:.60}")
        mode = 0
        budget = 0
        if truncation is not False:
            if not isinstance(truncation, str) or truncation not in TRUNCATION:
                raise ValueError(f"truncation must be True, False or one of {sorted(TRUNCATION)}, found {truncation!r}")
            if max_length is None:
                raise ValueError("truncation needs max_length")
            if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)) or max_length < nspec:
                raise ValueError(
                    f"max_length={max_length!r} is smaller than the {nspec} special tokens the template "
                    f"adds to {'a pair' if pair else 'a text'}"
                )
            mode = TRUNCATION[truncation]
            # (a max_length past any text's length truncates nothing: it is
            # kept within the int64 option vector)
            budget = min(int(max_length), 1 << 62) - nspec
            # As HF's enable_truncation: a stride asked for in the call must
            # fit in max_length minus the special tokens of a single text.
            # A tokenizer's own stride (a tokenizer.json's truncation) is
            # checked only where a text is cut, as HF does: the kernel
            # refuses the cut (a text that fits encodes).
            single = sum(1 for s in self.slots[(False, True)] if s[0] == 0)
            if stride_asked and max_length >= single and stride > max_length - single:
                raise ValueError(
                    f"stride={stride} must not exceed max_length minus the template's special tokens "
                    f"({max_length} - {single})"
                )
        if padding is False:
            pad_to = -1
        elif padding == "longest":
            pad_to = 0
        elif padding == "max_length":
            if not pad_length:
                raise ValueError("padding='max_length' needs max_length")
            pad_to = _length("max_length", pad_length)
            if pad_to > MAX_PAD_LENGTH:
                raise ValueError(f"padding='max_length' pads to at most {MAX_PAD_LENGTH} tokens, found "
                                 f"max_length={pad_to}")
        else:
            raise ValueError(f"padding must be True, False, 'longest' or 'max_length', found {padding!r}")
        if not pair and not any(slot[0] == K_A for slot in slots):
            # A single template without $A (HF allows it): the encoding is its
            # special tokens, the text's tokens left out (and so never
            # overflowing), as truncating the text to nothing gives.
            mode, budget, stride, overflow = TRUNCATION["longest_first"], 0, 0, False
        return options_vector(
            slots, budget=budget, mode=mode, stride=stride, trunc_left=truncation_side == "left", pad_to=pad_to,
            mult=mult, pad_id=self.pad_id, pad_type_id=int(pdef.get("pad_type_id") or 0),
            pad_left=padding_side == "left", overflow=overflow, ovf_seq_types=self.ovf_seq_types,
        )

    @staticmethod
    def is_plain(opts: np.ndarray) -> bool:
        """Nothing to do for a single text: the matched tokens are the result."""
        return (opts[O_NSLOTS] == 1 and opts[O_SLOTS] == K_A and opts[O_SLOTS + 2] == 0 and opts[O_MODE] == 0
                and opts[O_PAD_TO] < 0)

    @staticmethod
    def padding_side(opts: np.ndarray) -> str:
        return "left" if opts[O_PAD_LEFT] else "right"

    @interrupts.interruptible("tok")
    def apply(self, tok: np.ndarray, rows: np.ndarray, n: int, paired: bool, opts: np.ndarray):
        """``(out, out_rows, overflow)``: the (8, m) encodings of ``n`` texts
        or pairs from their matched tokens (``paired``: rows ``0:n`` are the
        first texts, rows ``n:2n`` the second ones), and their overflowing
        encodings ``(data, row splits, text -> encodings splits)``."""
        out, out_rows, ovf, ovf_rows, ovf_texts, bad, status = assemble(tok, rows, n, paired, opts)
        if bad >= 0:
            if status == E_STRIDE:
                raise ValueError(
                    f"text {bad}: stride={int(opts[O_STRIDE])} must be smaller than the length a sequence is "
                    "truncated to (max_length minus the special tokens, shared between the texts of a pair)"
                )
            raise ValueError(
                f"text {bad}: cannot truncate as asked: the sequence to truncate is too short "
                "for max_length with the other sequence and the special tokens"
            )
        return out, out_rows, (ovf, ovf_rows, ovf_texts)

    @staticmethod
    def first_overflow(ovf):
        """The overflow of a one-text batch as :class:`~segkit.Encoding` takes it."""
        data, rows, texts = ovf
        return (data, rows, 0, int(texts[1])) if texts[1] > 0 else None
