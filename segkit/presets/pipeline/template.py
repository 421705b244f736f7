"""Post-processing templates in HuggingFace's ``TemplateProcessing`` syntax.

A template says where the special tokens go around the first sequence
(``$A``) and the second (``$B``), and the type id of every part:

* ``"[CLS] $A [SEP]"`` and ``"[CLS] $A [SEP] $B:1 [SEP]:1"``: BERT's;
* ``"<s> $A </s>"`` and ``"<s> $A </s> </s> $B </s>"``: RoBERTa's shape.

Pieces are separated by single spaces; ``$A`` (also ``$a``, ``$``), ``$B``
(``$b``) or a special token, each optionally followed by ``:type_id``
(default 0); ``$N`` for a number N is ``$A:N``, as in HuggingFace.

The canonical form, kept in a WordPiece's settings (JSON) and written to
``tokenizer.json`` as it is, is HuggingFace's: ``{"single": [pieces],
"pair": [pieces], "special_tokens": {name: [ids]}}`` with each piece
``{"SpecialToken": {"id": name, "type_id": t}}`` or ``{"Sequence": {"id":
"A" | "B", "type_id": t}}``.  A special token not in ``special_tokens`` is
the vocabulary token of that name.
"""

from __future__ import annotations

from typing import Any

#: Kinds of a template slot: a special token, the first sequence, the second.
K_SPECIAL, K_A, K_B = 0, 1, 2


def _parse_piece(text: str) -> dict:
    parts = text.split(":")
    if len(parts) > 2:
        raise ValueError(f"template piece {text!r}: expected NAME, $A, $B, optionally followed by :TYPE_ID")
    type_id = 0
    if len(parts) == 2:
        if not parts[1].isdigit() or not parts[1].isascii():
            raise ValueError(f"template piece {text!r}: the type id after ':' must be a non-negative integer")
        type_id = int(parts[1])
    name = parts[0]
    if name.startswith("$"):
        rest = name[1:]
        if rest in ("", "A", "a"):
            return {"Sequence": {"id": "A", "type_id": type_id}}
        if rest in ("B", "b"):
            return {"Sequence": {"id": "B", "type_id": type_id}}
        if rest.isdigit() and rest.isascii() and len(parts) == 1:
            return {"Sequence": {"id": "A", "type_id": int(rest)}}
        raise ValueError(f"template piece {text!r}: expected $A, $B or $N (N a type id)")
    if not name:
        raise ValueError(f"template piece {text!r}: empty special token name (pieces are separated by one space)")
    return {"SpecialToken": {"id": name, "type_id": type_id}}


def _pieces(value: Any, which: str) -> list:
    """A template (HF string syntax, a list of such pieces, or a list of
    canonical pieces) as a list of canonical pieces."""
    if isinstance(value, str):
        value = value.split(" ")
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"template {which} must be a string or a list of pieces, found {value!r:.80}")
    out = []
    for piece in value:
        if isinstance(piece, str):
            out.append(_parse_piece(piece))
            continue
        if not isinstance(piece, dict) or len(piece) != 1:
            raise ValueError(f"template {which}: a piece must be a string or a one-key object, found {piece!r:.80}")
        (kind, body), = piece.items()
        if kind not in ("SpecialToken", "Sequence") or not isinstance(body, dict) or "id" not in body:
            raise ValueError(f"template {which}: unknown piece {piece!r:.80}")
        t = body.get("type_id", 0)
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < 1 << 31:
            raise ValueError(f"template {which}: type_id must be a non-negative int, found {t!r:.60}")
        ident = body["id"]
        if kind == "Sequence" and ident not in ("A", "B"):
            raise ValueError(f"template {which}: sequence id must be 'A' or 'B', found {ident!r:.60}")
        if kind == "SpecialToken" and (not isinstance(ident, str) or not ident):
            raise ValueError(f"template {which}: special token id must be a non-empty string, found {ident!r:.60}")
        out.append({kind: {"id": ident, "type_id": t}})
    seqs = [p["Sequence"]["id"] for p in out if "Sequence" in p]
    if which == "single" and seqs not in (["A"], []):
        # (Without $A, as HF allows: the encoding is the template's special
        # tokens, the text's tokens are left out.)
        raise ValueError(f"the single template must hold $A at most once (and no $B), found {seqs}")
    if which == "pair" and sorted(seqs) != ["A", "B"]:
        raise ValueError(f"the pair template must hold $A and $B once each, found {seqs}")
    return out


def normalize_template(value: Any) -> Any:
    """None, ``"bert"``, or the canonical form of a template given as a dict
    ``{"single": ..., "pair": ... (optional), "special_tokens": ... (optional)}``
    (see the module docstring); ValueError for anything else.

    >>> normalize_template({"single": "<s> $A </s>"})["pair"]
    [{'Sequence': {'id': 'A', 'type_id': 0}}, {'Sequence': {'id': 'B', 'type_id': 1}}]
    """
    if value is None or value == "bert":
        return value
    if not isinstance(value, dict) or "single" not in value or not set(value) <= {"single", "pair", "special_tokens"}:
        raise ValueError(
            "template must be None, 'bert' or a dict with keys single, pair (optional), special_tokens (optional); "
            f"found {value!r:.100}"
        )
    single = _pieces(value["single"], "single")
    pair = _pieces(value["pair"] if value.get("pair") is not None else "$A:0 $B:1", "pair")
    specials = value.get("special_tokens") or {}
    if not isinstance(specials, dict):
        raise ValueError(f"template special_tokens must be a dict name -> id or ids, found {specials!r:.80}")
    canon: dict = {}
    for name, ids in specials.items():
        if isinstance(ids, dict):  # HF's {"id": name, "ids": [...], "tokens": [...]}
            tokens = ids.get("tokens")
            ids = ids.get("ids")
            # As HF (and tokenizer.json): one token per id.  The tokens must
            # also be the vocabulary's (checked with it: template_tokens).
            if tokens is not None and (not isinstance(tokens, (list, tuple)) or not isinstance(ids, (list, tuple))
                                       or len(tokens) != len(ids) or not all(isinstance(t, str) for t in tokens)):
                raise ValueError(f"template special token {name!r:.60}: ids {ids!r:.60} and tokens {tokens!r:.60} "
                                 "do not match (one token string per id)")
        if isinstance(ids, int) and not isinstance(ids, bool):
            ids = [ids]
        if (
            not isinstance(name, str)
            or not isinstance(ids, (list, tuple))
            or not ids
            or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 1 << 31 for i in ids)
        ):
            raise ValueError(f"template special token {name!r:.60}: expected an id or a list of ids, found {ids!r:.60}")
        canon[name] = list(ids)
    return {"single": single, "pair": pair, "special_tokens": canon}


def check_template_tokens(value: Any, vocab) -> None:
    """ValueError unless the ``"tokens"`` a template given in HF's form
    lists for its special tokens (``{"ids": [...], "tokens": [...]}``) are
    the vocabulary's tokens of those ids: segkit names every id by its
    vocabulary token (as ``from_tokenizer_json`` checks a file's)."""
    if not isinstance(value, dict) or not isinstance(value.get("special_tokens"), dict):
        return
    itos = vocab.id_to_token
    for name, spec in value["special_tokens"].items():
        if not isinstance(spec, dict) or spec.get("tokens") is None:
            continue
        for i, t in zip(spec["ids"], spec["tokens"]):
            own = itos[i] if 0 <= i < len(itos) else None
            if own != t:
                raise ValueError(f"template special token {name!r:.40}: id {i} is {own!r:.40} in the vocabulary, "
                                 f"not {t!r:.40}")


def bert_template(cls_token: str, sep_token: str) -> dict:
    """The canonical form of BERT's template."""
    return normalize_template({"single": [cls_token, "$A", sep_token],
                               "pair": [cls_token, "$A:0", sep_token, "$B:1", f"{sep_token}:1"]})


def template_slots(template: dict | None, vocab, which: str, add_special_tokens: bool = True, known=None) -> list:
    """``(kind, token id, type id)`` slots of the single or pair template
    (None: no template) for the kernel's option vector; ValueError naming a
    special token that is neither in ``special_tokens`` nor in ``vocab``,
    or an id past the vocabulary.  ``known``: ids of some names, already
    looked up."""
    if template is None:
        return [(K_A, 0, 0)] if which == "single" else [(K_A, 0, 0), (K_B, 0, 1)]
    out = []
    for piece in template[which]:
        if "Sequence" in piece:
            body = piece["Sequence"]
            out.append((K_A if body["id"] == "A" else K_B, 0, body["type_id"]))
            continue
        body = piece["SpecialToken"]
        if not add_special_tokens:
            continue
        name = body["id"]
        ids = template["special_tokens"].get(name)
        if ids is None:
            i = (known or {}).get(name)
            if i is None:
                i = vocab.id(name)
            if i is None and name in vocab.id_to_token:  # (an unpickled vocabulary may not find it by id())
                i = vocab.id_to_token.index(name)
            if i is None:
                raise ValueError(f"template token {name!r} is neither in the template's special_tokens nor in the vocabulary")
            ids = [i]
        for i in ids:
            if not vocab.has_id(i):
                raise ValueError(f"template token {name!r}: id {i} is not in the vocabulary")
            out.append((K_SPECIAL, i, body["type_id"]))
    return out


def template_to_strings(template: dict) -> tuple[str, str]:
    """The single and pair templates in HF's string syntax (for messages and docs)."""

    def one(pieces):
        parts = []
        for p in pieces:
            (kind, body), = p.items()
            name = "$" + body["id"] if kind == "Sequence" else body["id"]
            parts.append(f"{name}:{body['type_id']}")
        return " ".join(parts)

    return one(template["single"]), one(template["pair"])
