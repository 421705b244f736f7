"""Post-processing of a WordPiece: the caller's options (special tokens,
truncation, padding), resolved against the tokenizer's defaults, and
applied by the compiled kernel of :mod:`segkit.wordpiece.postprocess`.

A batch's options are resolved once per call into :class:`Resolved`; a
single text's become a read-only int64 option vector, cached per distinct
set of keyword values, that the one-call kernel
(:func:`~segkit.wordpiece.postprocess.encode_single`) reads.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .postprocess import N_OPTIONS, O_BUDGET, O_CLS, O_MODE, O_MULT, O_PAD_ID, O_PAD_TO, O_SEP, O_TEMPLATE
from .postprocess import TRUNCATION, assemble


class Resolved(NamedTuple):
    """Post-processing options of one call, resolved."""

    plain: bool  #: nothing to do: the matched tokens are the result
    template: bool  #: add the template's special tokens
    budget: int  #: tokens left for the text(s) after truncation
    mode: int  #: truncation strategy (0: none; see ``TRUNCATION``)
    pad_to: int  #: -1: no padding, 0: to the longest, else that length
    mult: int  #: pad to a multiple of this (0: no rounding)


class PostProcessor:
    """The template, truncation and padding of a WordPiece.

    Parameters
    ----------
    template
        The template's name (``"bert"``) or None.
    truncation, padding
        The tokenizer's defaults (dicts as the settings hold them) or None.
    cls_id, sep_id, pad_id
        Ids of the template and padding tokens (None: not in the vocabulary).
    cls_token, sep_token
        Their strings (for error messages).
    """

    def __init__(self, template, truncation, padding, cls_id, sep_id, pad_id, cls_token, sep_token) -> None:
        self.template = template
        self.truncation = truncation
        self.padding = padding
        self.cls_id = cls_id
        self.sep_id = sep_id
        self.pad_id = pad_id
        self.cls_token = cls_token
        self.sep_token = sep_token
        #: Option vectors of single texts, by the keyword values of the call.
        self.cache: dict = {}

    def resolve(self, pair: bool, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of) -> Resolved:
        """The options of a call (``encode``'s keywords; None: the
        tokenizer's default), checked."""
        template = self.template == "bert" and add_special_tokens
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
        if pad_to_multiple_of is None:
            pad_to_multiple_of = pdef.get("pad_to_multiple_of") or 0
        nspec = (3 if pair else 2) if template else 0
        mode = 0
        budget = 0
        if truncation:
            if truncation not in TRUNCATION:
                raise ValueError(f"truncation must be True, False or one of {sorted(TRUNCATION)}, found {truncation!r}")
            if max_length is None:
                raise ValueError("truncation needs max_length")
            if not isinstance(max_length, int) or max_length < nspec:
                raise ValueError(
                    f"max_length={max_length!r} is smaller than the {nspec} special tokens the template "
                    f"adds to {'a pair' if pair else 'a text'}"
                )
            mode = TRUNCATION[truncation]
            budget = max_length - nspec
        if padding is False or padding is None:
            pad_to = -1
        elif padding == "longest":
            pad_to = 0
        elif padding == "max_length":
            if not pad_length:
                raise ValueError("padding='max_length' needs max_length")
            pad_to = int(pad_length)
        else:
            raise ValueError(f"padding must be True, False, 'longest' or 'max_length', found {padding!r}")
        if template and (self.cls_id is None or self.sep_id is None):
            raise ValueError(f"the template needs {self.cls_token!r} and {self.sep_token!r} in the vocabulary")
        plain = not template and mode == 0 and pad_to == -1 and not pair
        return Resolved(plain, template, budget, mode, pad_to, int(pad_to_multiple_of or 0))

    def single(self, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of) -> np.ndarray:
        """The read-only option vector of a single text (cached; the caller
        looks in :attr:`cache` first, by the same key)."""
        key = (add_special_tokens, max_length, truncation, padding, pad_to_multiple_of)
        cache = self.cache
        opts = cache.get(key)
        if opts is None:
            r = self.resolve(False, add_special_tokens, max_length, truncation, padding, pad_to_multiple_of)
            opts = np.zeros(N_OPTIONS, dtype=np.int64)
            opts[O_TEMPLATE] = r.template
            opts[O_CLS] = self.cls_id or 0
            opts[O_SEP] = self.sep_id or 0
            opts[O_BUDGET] = r.budget
            opts[O_MODE] = r.mode
            opts[O_PAD_TO] = r.pad_to
            opts[O_MULT] = r.mult
            opts[O_PAD_ID] = self.pad_id
            opts.setflags(write=False)
            if len(cache) < 64:
                cache[key] = opts
        return opts

    def apply(self, tok: np.ndarray, rows: np.ndarray, n: int, paired: bool, r: Resolved):
        """``(out, out_rows)``: the (7, m) encodings of ``n`` texts or pairs
        from their matched tokens (``paired``: rows ``0:n`` are the first
        texts, rows ``n:2n`` the second ones)."""
        out, out_rows, status = assemble(
            tok, rows, n, paired, r.template, self.cls_id or 0, self.sep_id or 0, r.budget, r.mode, r.pad_to, r.mult,
            self.pad_id,
        )
        if status >= 0:
            raise ValueError(
                f"text {status}: cannot truncate as asked: the sequence to truncate is too short "
                "for max_length with the other sequence and the special tokens"
            )
        return out, out_rows

    def apply_options(self, tok: np.ndarray, rows: np.ndarray, opts: np.ndarray) -> np.ndarray:
        """The (7, m) encoding of one text under the option vector ``opts``
        (for texts too long for the one-call kernel)."""
        r = Resolved(False, bool(opts[O_TEMPLATE]), int(opts[O_BUDGET]), int(opts[O_MODE]), int(opts[O_PAD_TO]),
                     int(opts[O_MULT]))
        return self.apply(tok, rows, 1, False, r)[0]
