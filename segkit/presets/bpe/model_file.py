"""The ``.segkit`` file of a :class:`segkit.BPE`: what it stores and how a
loaded one is checked.

A file holds the vocabulary (token bytes; the merge list of a merges-based
model), the engine's double array, every token's split and the byte order
of the tokens, plus the settings (mode, pattern, special or added tokens,
normalizer).  :func:`from_state` checks every value the kernels trust,
rebuilds the derived tables in linear passes and certifies the splits
(:mod:`~segkit.presets.bpe.verify`), so that any byte string loads as a
model that encodes exactly as the one built from its vocabulary, or raises
:class:`~segkit.ModelFileError`.
"""

from __future__ import annotations

import numpy as np

from ..base import ModelFileError
from . import layout as L
from .inputs import check_dense, check_id, check_specials
from .pieces import utf8

MODES = ("tiktoken", "merges", "tokenizer.json", "tekken")


def from_state(cls, config: dict, arrays: dict, source: str, certify: bool):
    from . import verify
    from .files import HFAdded
    from .tables import finish_tables, merge_table, splits

    def bad(what: str) -> ValueError:
        if certify:  # a file: the error segkit.load raises
            return ModelFileError(f"{source}: invalid BPE model: {what}")
        return ValueError(f"{source}: invalid BPE model: {what}")

    if not isinstance(config, dict) or config.get("format") != 1:
        raise bad(f"unknown format {config.get('format') if isinstance(config, dict) else config!r}")
    mode = config.get("mode")
    if mode not in MODES:
        raise bad(f"unknown mode {mode!r}")
    pattern = config.get("pattern")
    if isinstance(pattern, list):  # a chain of patterns (a Sequence of Splits)
        if not pattern or not all(isinstance(p, str) for p in pattern) or not config.get("gaps") is True:
            raise bad("pattern is a list that is not a non-empty chain of strings with gaps")
        pattern = tuple(pattern)
    elif pattern is not None and not isinstance(pattern, str):
        raise bad("pattern is not a string or a list of strings")
    for key in ("gaps", "whole_any"):
        if not isinstance(config.get(key), bool):
            raise bad(f"{key} is not true or false")
    normalizer = config.get("normalizer")
    if normalizer not in (None, "NFC", "NFD", "NFKC", "NFKD"):
        raise bad(f"unknown normalizer {normalizer!r}")
    name = config.get("name")
    if name is not None and not isinstance(name, str):
        raise bad("name is not a string")

    def arr(key, dtype, ndim):
        a = arrays.get(key)
        if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != ndim:
            raise bad(f"array {key!r} must be {ndim}-d {np.dtype(dtype)}")
        return np.ascontiguousarray(a)

    tok_bytes = arr("tok_bytes", np.uint8, 1)
    tok_start = arr("tok_start", np.int64, 1)
    trans = arr("trans", np.int32, 2)
    bsym = arr("bsym", np.int32, 1)
    info = arr("info", np.int32, 2)
    lex = arr("lex", np.int32, 1)
    merges = arr("merges", np.int32, 2)
    n = tok_start.size - 1
    if n < 1 or tok_start[0] != 0 or tok_start[-1] != tok_bytes.size or np.any(np.diff(tok_start) < 0):
        raise bad("token offsets do not split the token bytes")
    if info.shape != (n, 4):
        raise bad(f"split table of shape {info.shape}, expected ({n}, 4)")
    if merges.shape[1:] != (2,) or (merges.size and (merges.min() < 0 or merges.max() >= n)):
        raise bad("merges must be pairs of token ids")
    if mode in ("tiktoken", "tekken") and merges.size:
        raise bad("a tiktoken model has no merge list")
    problem = verify.check_trie(trans, bsym)
    if problem:
        raise bad(problem)
    lengths = np.diff(tok_start)
    singles = np.flatnonzero(lengths == 1)
    present = np.zeros(256, dtype=bool)
    present[tok_bytes[tok_start[singles]]] = True
    needed = np.flatnonzero(~present)
    needed = needed[(needed < 0xC0) | ((needed > 0xC1) & (needed < 0xF5))]
    if needed.size:
        raise bad(f"byte {int(needed[0]):#04x} is not a token")

    specials = config.get("special_tokens")
    strings = config.get("strings")
    added_raw = config.get("added_tokens")
    if not isinstance(specials, dict) or not isinstance(strings, dict) or not isinstance(added_raw, list):
        raise bad("special_tokens, strings or added_tokens has the wrong type")
    try:
        specials = check_specials(specials, n)
        if any(i < n and lengths[i] for i in specials.values()):
            raise ValueError("a special token has the id of a token")
        str_ids = {}
        for k, s in strings.items():
            i = check_id(int(k) if isinstance(k, str) and k.isdigit() else k, "a string's id")
            if not isinstance(s, str) or (i < n and lengths[i]):
                raise ValueError(f"string {s!r:.40} at id {i}")
            utf8(s)
            str_ids[i] = s
        added = []
        for a in added_raw:
            if not isinstance(a, dict) or set(a) != {"id", "content", "single_word", "lstrip", "rstrip", "normalized",
                                                     "special"}:
                raise ValueError(f"added token {a!r:.80}")
            if not isinstance(a["content"], str) or not a["content"] or not all(
                    isinstance(a[k], bool) for k in ("single_word", "lstrip", "rstrip", "normalized", "special")):
                raise ValueError(f"added token {a!r:.80}")
            utf8(a["content"])
            added.append(HFAdded(check_id(a["id"], "an added token's id"), a["content"], a["single_word"],
                                 a["lstrip"], a["rstrip"], a["normalized"], a["special"]))
        # before anything is allocated by id (decoding tables): dense ids only
        check_dense([(s, i) for i, s in str_ids.items()], n, "string")
        check_dense([(a.content, a.id) for a in added], n + len(str_ids), "added token")
    except (TypeError, ValueError) as e:
        raise bad(str(e)) from None
    if (added and mode != "tokenizer.json") or (str_ids and mode not in ("tokenizer.json", "tekken")):
        raise bad("added tokens or strings in a model that is not from a tokenizer.json")
    if specials and mode == "tokenizer.json":
        raise bad("special tokens in a model from a tokenizer.json")

    use_merges = mode not in ("tiktoken", "tekken")
    mtab = merge_table(merges if use_merges else np.zeros((0, 2), np.int32))
    # Structure first (ids in range, parts shorter): finish_tables trusts it.
    status, tok = verify.check_structure(tok_bytes, tok_start, info, mtab, use_merges, 0, n)
    if status != verify.OK:
        raise bad(f"token {tok}: {verify.MESSAGES[status]}")
    try:
        tables = finish_tables(tok_bytes, tok_start, trans, bsym, info, lex, config["whole_any"])
    except (ValueError, IndexError) as e:
        raise bad(str(e)) from None
    if certify:
        if tables.non_monotone >= 0:
            # Splits that the pair test cannot certify: recompute them (the
            # stored double array was checked above and is kept).
            byte_tok = np.full(256, -1, dtype=np.int32)
            byte_tok[tok_bytes[tok_start[singles]]] = singles
            fresh = splits(tok_bytes, tok_start, byte_tok,
                           np.zeros(0, np.int32) if use_merges else np.arange(n, dtype=np.int32), mtab, use_merges)
            if not np.array_equal(fresh, info):
                raise bad("the stored splits are not the ones BPE gives")
        else:
            model = tables.model
            status, tok = verify.certify_splits(
                tok_bytes, tok_start, info, L.section(model, L.TRANS), bsym, L.section(model, L.SLOT),
                L.section(model, L.PAIRS), L.section(model, L.FILTER), int(L.section(model, L.PARAMS)[L.P_FILTER_BITS]),
                mtab, use_merges, 0, n)
            if status != verify.OK:
                raise bad(f"token {tok}: {verify.MESSAGES[status]}")
    prefix_at = config.get("prefix_at")  # (absent: no leading space put in)
    n_patterns = len(pattern) if isinstance(pattern, tuple) else 0 if pattern is None else 1
    if prefix_at is not None and not (type(prefix_at) is int and 0 <= prefix_at <= n_patterns
                                      and mode == "tokenizer.json" and config["gaps"]):
        raise bad(f"prefix_at {prefix_at!r} is not the place of a leading space in the patterns")
    obj = cls.__new__(cls)
    obj._assemble(mode, tables, merges, pattern, specials, whole_any=config["whole_any"], added=added,
                  normalizer=normalizer, strings=str_ids, name=name, gaps=config["gaps"], prefix_at=prefix_at)
    template = config.get("template")  # (absent in files written before templates: none)
    if template is not None:
        if mode != "tokenizer.json" or not (isinstance(template, list) and len(template) == 2 and all(
                isinstance(part, list) and all(type(i) is int and 0 <= i < obj._n_ids for i in part)
                for part in template)):
            raise bad("template is not two lists of ids of the model (a tokenizer.json's)")
        obj._set_template(template[0], template[1])
    roles = config.get("roles", {})  # (absent: none)
    if not (isinstance(roles, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in roles.items())):
        raise bad("roles is not an object of role -> token")
    try:
        obj._set_roles(roles, source)
    except ValueError as e:
        raise bad(str(e)) from None
    return obj
