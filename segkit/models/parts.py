"""The parts every preset stores: vocabularies and automata, validated on load.

A preset's ``_model_state`` stores its vocabulary with
:func:`vocabulary_state` and each automaton with :func:`automaton_arrays`;
its ``_from_model`` reads them back with :func:`vocabulary_from_state` and
:func:`automaton_from_arrays`, which check every value the compiled kernels
trust (see ``docs/saving.rst``).
"""

from __future__ import annotations

import json

import numpy as np

from ..engine.automaton import Automaton, automaton_from_state, automaton_state, to_code_points
from .vocabulary import Vocabulary


def vocabulary_state(vocab: Vocabulary, prefix: str = "vocab") -> tuple[dict, dict]:
    """Arrays and blobs that store a vocabulary (marisa-trie + id maps + tokens)."""
    trie, mid_to_id, id_to_mid = vocab.to_marisa()
    arrays = {f"{prefix}.mid_to_id": mid_to_id, f"{prefix}.id_to_mid": id_to_mid}
    blobs = {f"{prefix}.marisa": trie.tobytes()}
    tokens = vocab.tokens_blob()
    if tokens is not None:
        blobs[f"{prefix}.tokens"] = tokens
    else:  # a token holds a newline: the list as JSON (load never parses the trie)
        blobs[f"{prefix}.tokens_json"] = json.dumps(vocab.id_to_token, ensure_ascii=False).encode("utf-8")
    return arrays, blobs


def vocabulary_from_state(arrays: dict, blobs: dict, prefix: str = "vocab", source: str = "model", *,
                          with_code_points: bool = False) -> Vocabulary:
    """The vocabulary stored by :func:`vocabulary_state`, validated.

    The marisa-trie blob is never parsed (its reader trusts its input): the
    vocabulary is restored from the stored token list, whose UTF-8 and
    size are checked here, and from the id maps, checked against each other.
    ``with_code_points`` (for :func:`vocabulary_and_keys`): return
    ``(vocabulary, (code points, newline positions))`` of the token list
    when the vocabulary comes from one.
    """
    mid_to_id = arrays[f"{prefix}.mid_to_id"]
    id_to_mid = arrays[f"{prefix}.id_to_mid"]

    def bad(what: str) -> ValueError:
        return ValueError(f"{source}: invalid vocabulary: {what}")

    for name, arr in (("mid_to_id", mid_to_id), ("id_to_mid", id_to_mid)):
        if not isinstance(arr, np.ndarray) or arr.dtype != np.int32 or arr.ndim != 1:
            raise bad(f"{name} must be a 1-d int32 array")
    n_keys, size = mid_to_id.size, id_to_mid.size
    if n_keys:
        if mid_to_id.min() < 0 or mid_to_id.max() >= size:
            raise bad("an id of the token map lies outside the vocabulary")
        if (np.bincount(mid_to_id, minlength=size) > 1).any():
            raise bad("two tokens share an id")
    if size and (id_to_mid.min() < -1 or id_to_mid.max() >= n_keys):
        raise bad("an id maps to a token that does not exist")
    if n_keys and not np.array_equal(id_to_mid[mid_to_id], np.arange(n_keys, dtype=np.int32)):
        raise bad("the two id maps do not agree")
    blob = blobs.get(f"{prefix}.tokens")
    if blob is None:
        if f"{prefix}.tokens_json" in blobs:
            return _vocabulary_from_json(bytes(blobs[f"{prefix}.tokens_json"]), mid_to_id, id_to_mid, bad)
        raise bad("no token list (written by an older segkit for a vocabulary whose tokens contain newlines); "
                  "build the model again and save it")
    raw = bytes(blob)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise bad(f"token list is not UTF-8 (byte {raw[e.start]:#04x} at offset {e.start})") from None
    if with_code_points:
        # The keys' code points, read once here for vocabulary_keys.
        cps = to_code_points(text, "token list")
        breaks = np.flatnonzero(cps == 10)
        n_tokens = breaks.size + 1
    else:
        n_tokens = raw.count(b"\n") + 1
    del text
    if n_tokens != max(size, 1):
        raise bad(f"token list holds {n_tokens} tokens, expected {size}")
    # Copies: nothing keeps the file's buffer alive once load returns.
    vocab = Vocabulary.from_marisa(None, np.array(mid_to_id), np.array(id_to_mid), raw)
    return (vocab, (cps, breaks)) if with_code_points else vocab


def vocabulary_and_keys(arrays: dict, blobs: dict, prefix: str = "vocab", source: str = "model"):
    """``(vocabulary, keys)``: :func:`vocabulary_from_state` and
    :func:`vocabulary_keys` of it, with the token list decoded once."""
    got = vocabulary_from_state(arrays, blobs, prefix, source, with_code_points=True)
    if isinstance(got, tuple):
        vocab, cps = got
        return vocab, vocabulary_keys(vocab, _code_points=cps)
    return got, vocabulary_keys(got)


def _vocabulary_from_json(raw: bytes, mid_to_id: np.ndarray, id_to_mid: np.ndarray, bad) -> Vocabulary:
    try:
        by_id = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise bad(f"unreadable token list ({type(e).__name__})") from None
    if not isinstance(by_id, list) or len(by_id) != id_to_mid.size:
        raise bad(f"token list is not a list of {id_to_mid.size} tokens")
    present = id_to_mid >= 0
    for t, p in zip(by_id, present.tolist()):
        if not (isinstance(t, str) if p else t is None):
            raise bad(f"token list holds {t!r:.60} where the id maps expect {'a token' if p else 'none'}")
    ids = np.sort(mid_to_id).tolist()
    vocab = Vocabulary([by_id[i] for i in ids], ids)
    vocab._by_id = by_id  # every id decodes to its token, duplicates too
    return vocab


def valid_id_mask(vocab: Vocabulary, *, minus_one: bool = False) -> np.ndarray:
    """``mask[i + 1]``: whether id ``i`` (from -1 on) has a token in ``vocab``
    (or, for -1, whether ``minus_one``), for :func:`automaton_from_arrays`."""
    if vocab._id_to_mid is not None:  # the form load gives: no token list needed
        present = vocab._id_to_mid >= 0
    else:
        present = np.fromiter((t is not None for t in vocab.id_to_token), dtype=bool, count=vocab.size)
    mask = np.empty(present.size + 1, dtype=bool)
    mask[0] = minus_one
    mask[1:] = present
    return mask


def automaton_arrays(a: Automaton, prefix: str) -> tuple[dict, dict]:
    config, arrays = automaton_state(a)
    return config, {f"{prefix}.{k}": v for k, v in arrays.items()}


def automaton_from_arrays(
    config: dict, arrays: dict, prefix: str, source: str, valid_ids: np.ndarray | None = None, keys=None,
    classes: np.ndarray | None = None,
) -> Automaton:
    """The automaton stored under ``prefix``, validated (see
    :func:`segkit.engine.automaton.validate_packed`); ``valid_ids`` from
    :func:`valid_id_mask`, ``keys`` from :func:`vocabulary_keys` and the
    preset's boundary ``classes`` (then the automaton must be the one built
    from them; see
    :func:`segkit.engine.automaton.check_keys_and_relink`)."""
    if not isinstance(config, dict):
        raise ValueError(f"{source}: automaton {prefix!r}: configuration is not an object")
    sub = {k[len(prefix) + 1 :]: v for k, v in arrays.items() if k.startswith(prefix + ".")}
    return automaton_from_state(config, sub, source=source, valid_ids=valid_ids, keys=keys, classes=classes)


def vocabulary_keys(vocab: Vocabulary, *, _code_points=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The keys :meth:`Automaton.build` is given for ``vocab`` (its distinct,
    non-empty tokens with their ids) as ``(code points, starts, ends, ids)``,
    read from a loaded vocabulary's token list without building its mapping
    (``_code_points``: that list's code points and newline positions, when
    :func:`vocabulary_and_keys` has them)."""
    blob = vocab._blob if vocab._tokens is None else None
    if blob is not None:
        if _code_points is None:
            cps = to_code_points(bytes(blob).decode("utf-8"))
            breaks = np.flatnonzero(cps == 10)
        else:
            cps, breaks = _code_points
        mid_to_id, id_to_mid = vocab._mid_to_id, vocab._id_to_mid
        n = id_to_mid.size
        chosen = id_to_mid >= 0
        chosen[chosen] = mid_to_id[id_to_mid[chosen]] == np.flatnonzero(chosen)
    else:
        by_id = vocab.id_to_token
        n = len(by_id)
        chosen = np.zeros(n, dtype=bool)
        chosen[vocab.ids] = True
        cps = to_code_points("\n".join(t or "" for t in by_id))
        lengths = np.fromiter((len(t or "") for t in by_id), dtype=np.int64, count=n)
        breaks = np.cumsum(lengths + 1)[:-1] - 1
    starts = np.concatenate([[0], breaks + 1]).astype(np.int64)
    ends = np.concatenate([breaks, [cps.size]]).astype(np.int64)
    if starts.size != n:
        raise ValueError(f"token list holds {starts.size} tokens, expected {n}")
    keep = chosen & (ends > starts)
    return cps, starts[keep], ends[keep], np.flatnonzero(keep)
