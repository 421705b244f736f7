"""A tokenizer.json's ``post_processor`` as the shared pipeline runs it:
the template (in segkit's canonical form, :mod:`.template`) and ByteLevel's
``trim_offsets``.

* ``TemplateProcessing``: its ``single`` and ``pair`` and its
  ``special_tokens``;
* ``BertProcessing``: ``[CLS] $A [SEP]`` and ``[CLS] $A [SEP] $B:1 [SEP]:1``
  with its ``cls`` and ``sep`` ``[token, id]``;
* ``RobertaProcessing``: ``<s> $A </s>`` and ``<s> $A </s> </s> $B </s>``
  (type ids 0 throughout, as HF), and its ``trim_offsets``;
* ``ByteLevel``: no template; its ``trim_offsets``;
* ``Sequence``: its parts (at most one with a template).

Errors are ValueErrors naming the file and the JSON path.
"""

from __future__ import annotations

import json
from typing import Any

from .template import normalize_template


def _bad(path, where: str, what: str) -> ValueError:
    return ValueError(f"{path}: {where}: {what}")


def _pair_of(path, spec: dict, key: str, where: str) -> tuple[str, int]:
    v = spec.get(key)
    if not (isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], int)
            and not isinstance(v[1], bool) and 0 <= v[1] < 1 << 31):
        raise _bad(path, f"{where}.{key}", f"expected [token, id], found {json.dumps(v)[:80]}")
    return v[0], v[1]


def read_post_processor(path, spec: Any, where: str = "post_processor") -> tuple[dict | None, bool, str]:
    """``(template or None, trim_offsets, overflow_type_ids)`` of a
    post-processor (see the module documentation): ``overflow_type_ids`` is
    ``"sequence"`` for TemplateProcessing (HF retypes only the kept part:
    overflow pieces get their sequence's index) and ``"template"`` for
    Bert/RobertaProcessing (every piece gets its slot's type id)."""
    if spec is None:
        return None, False, "sequence"
    if not isinstance(spec, dict):
        raise _bad(path, where, f"expected an object or null, found {type(spec).__name__}")
    kind = spec.get("type")
    trim = spec.get("trim_offsets", False)
    if not isinstance(trim, bool):
        raise _bad(path, f"{where}.trim_offsets", f"expected true or false, found {json.dumps(trim)[:40]}")
    if kind == "ByteLevel":
        return None, trim, "sequence"
    if kind == "TemplateProcessing":
        try:
            return normalize_template({"single": spec.get("single"), "pair": spec.get("pair"),
                                       "special_tokens": spec.get("special_tokens") or {}}), False, "sequence"
        except ValueError as e:
            raise _bad(path, where, str(e)) from None
    if kind in ("BertProcessing", "RobertaProcessing"):
        cls_tok, cls_id = _pair_of(path, spec, "cls", where)
        sep_tok, sep_id = _pair_of(path, spec, "sep", where)
        names = {cls_tok: [cls_id], sep_tok: [sep_id]}
        if cls_tok == sep_tok and cls_id != sep_id:
            raise _bad(path, where, f"cls and sep are both {cls_tok!r:.40} with ids {cls_id} and {sep_id}")
        if kind == "BertProcessing":
            t = {"single": f"{cls_tok} $A {sep_tok}", "pair": f"{cls_tok} $A {sep_tok} $B:1 {sep_tok}:1"}
        else:
            t = {"single": f"{cls_tok} $A {sep_tok}", "pair": f"{cls_tok} $A {sep_tok} {sep_tok} $B:0 {sep_tok}"}
        t["special_tokens"] = names
        return normalize_template(t), kind == "RobertaProcessing" and trim, "template"
    if kind == "Sequence":
        parts = spec.get("processors")
        if not isinstance(parts, list):
            raise _bad(path, f"{where}.processors", f"expected a list, found {json.dumps(parts)[:60]}")
        template, trim, types = None, False, "sequence"
        for k, p in enumerate(parts):
            t, tr, ty = read_post_processor(path, p, f"{where}.processors[{k}]")
            if t is not None:
                if template is not None:
                    raise _bad(path, where, "two post-processors that add special tokens; segkit runs one")
                template, types = t, ty
            trim = trim or tr
        return template, trim, types
    raise _bad(path, where, "segkit runs the post-processors TemplateProcessing, BertProcessing, RobertaProcessing, "
                            f"ByteLevel and Sequence of them; found {json.dumps(spec)[:160]}")
