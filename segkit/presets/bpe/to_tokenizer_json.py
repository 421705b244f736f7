"""A :class:`segkit.BPE` as a HuggingFace ``tokenizer.json`` (and a model
folder around it): what :meth:`segkit.BPE.save_pretrained` writes, and
:meth:`segkit.Tokenizer.save_pretrained` for a tokenizer built over a BPE
rather than read from a tokenizer.json.

HF ``tokenizers`` (and transformers) load the file and give segkit's ids.
The parts:

* ``model``: BPE over the byte-level vocabulary (GPT-2's byte alphabet,
  :mod:`segkit.runtime.byte_level`), with one merge per token BPE can make:
  its *split*, the last merge BPE makes on the token's own bytes
  (:mod:`~segkit.presets.bpe.splits`, already computed for the encoder),
  in order of priority (a tiktoken file's rank, a merge list's index).
  A token appears in a text's BPE only by its split, so these merges are
  exactly the ones BPE ever makes, and HF, merging by them, makes the same
  merges in the same order as tiktoken (which merges the adjacent pair
  whose concatenation has the lowest rank).  A token BPE cannot make gets
  no merge (HF would otherwise make it where tiktoken does not); it stays
  in the vocabulary.  Holes in the ids and byte tokens at any ranks need
  nothing special: the merges are ordered by priority, not by id.
  ``ignore_merges`` is tiktoken's whole-piece lookup (a piece that is a
  token is that token).
* ``pre_tokenizer``: ``Sequence[Split(Regex(pattern), Isolated), ...,
  ByteLevel(add_prefix_space, use_regex=false)]``, as transformers'
  ``TikTokenConverter`` writes it.
* ``added_tokens``: the special tokens (tiktoken's, or a tokenizer.json's
  added tokens with their options), with their ids.  HF gives an added
  token that is not in the model's vocabulary the next free id, whatever
  the file says (cl100k_base's ``<|endoftext|>`` is 100257, not the next
  id 100256), so where that would change an id the tokens are put in the
  model's vocabulary too, where HF finds them.
* ``decoder`` ByteLevel; ``post_processor`` ByteLevel (``trim_offsets``),
  with a ``TemplateProcessing`` for the ids a template puts around a text.

A tiktoken pattern is written as Oniguruma reads it the same way
(:func:`for_oniguruma`: its ``^`` and ``$``, its possessive intervals
such as cl100k_base's ``\\p{N}{1,3}+``).  Not representable
(ValueError, saying why): a pattern HF's regex engine (Oniguruma)
cannot compile, a tiktoken pattern that sets flags in a group, a special
token whose string is the byte-level spelling of another token, a Tekken
model (its control tokens are never matched in text; HF's added tokens
always are).  A
tiktoken pattern that leaves text unmatched differs on such text too:
segkit refuses it (tiktoken drops it), HF's Split keeps it as pieces of
their own (the bundled patterns match all text).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .files import HF_BYTE_LEVEL_PATTERN, byte_level_string
from .splits import LEFT, PRIO, RIGHT

#: ``tokenizer_json_of``'s default template: the one the BPE itself adds.
MODEL_TEMPLATE = "model"


def merges_by_priority(bpe) -> list[tuple[int, int]]:
    """The ``(left, right)`` ids of every token's split (the last merge BPE
    makes on the token's bytes), highest priority first: the merges under
    which HF's BPE makes the merges this BPE makes (see the module doc).

    >>> import segkit
    >>> vocab = {bytes([b]): b for b in range(256)} | {b"lo": 257, b"low": 256, b"ow": 258}
    >>> bpe = segkit.BPE(vocab, [(b"l", b"o"), (b"o", b"w"), (b"l", b"ow"), (b"lo", b"w")])
    >>> merges_by_priority(bpe)  # (l, ow) is never made: "low" comes from (lo, w)
    [(108, 111), (111, 119), (257, 119)]
    """
    info = bpe._tables.info
    made = np.flatnonzero(info[:, LEFT] >= 0)
    order = made[np.argsort(info[made, PRIO], kind="stable")]
    return list(zip(info[order, LEFT].tolist(), info[order, RIGHT].tolist()))


#: escapes of a fixed number of characters after the backslash (``\x41``,
#: ``\u0041``), others being one character or a ``{...}`` (``\p{L}``, ``\x{41}``)
_ESCAPE_LENGTH = {"x": 3, "u": 5, "U": 9}
_INTERVAL = re.compile(r"\{\d*(?:,\d*)?\}")


def _escape_end(pattern: str, i: int) -> int:
    """The end of the escape at ``pattern[i]`` (a backslash)."""
    kind = pattern[i + 1 : i + 2]
    if pattern[i + 2 : i + 3] == "{" and kind in "pPxNgku":
        close = pattern.find("}", i + 3)
        return len(pattern) if close < 0 else close + 1
    if kind in "pP":
        return i + 3
    return i + _ESCAPE_LENGTH.get(kind, 2)


def _class_end(pattern: str, i: int) -> int:
    """The end of the character class at ``pattern[i]`` (``[``), nested
    classes (``[[:alpha:]]``, ``[a&&[^b]]``) included."""
    j = i + 1
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":  # a ] first in a class is itself
        j += 1
    depth = 1
    while j < len(pattern) and depth:
        c = pattern[j]
        if c == "\\":
            j = _escape_end(pattern, j)
            continue
        depth += c == "["
        depth -= c == "]"
        j += 1
    return j


def for_oniguruma(pattern: str) -> str:
    r"""A tiktoken pattern (Rust's regex and fancy-regex, as segkit runs it)
    as Oniguruma, HF's regex engine, reads it the same way.

    * ``^`` and ``$`` outside a character class anchor the text there and
      lines in Oniguruma (Ruby's syntax): written ``\A`` and ``\z``;
    * a possessive interval ``X{n,m}+`` is, in Ruby's syntax, ``X{n,m}``
      repeated (cl100k_base's ``\p{N}{1,3}+`` would take all the digits
      at once): written as the atomic group ``(?>X{n,m})``.

    A group that sets the flags ``m`` or ``s`` (``(?m)``, ``(?s:``) is a
    ValueError: Oniguruma gives them other meanings.

    >>> for_oniguruma(r"\s++$|[$^]\$|^a|\p{N}{1,3}+|(?:ab){2}+")
    '\\s++\\z|[$^]\\$|\\Aa|(?>\\p{N}{1,3})|(?>(?:ab){2})'
    """
    out: list[str] = []
    atom = None  # where in out the last atom (what a quantifier repeats) starts
    groups: list[int] = []  # where in out each open group starts
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            j = _escape_end(pattern, i)
        elif c == "[":
            j = _class_end(pattern, i)
        elif c == "(":
            if pattern.startswith("(?", i):
                flags = re.match(r"[imsxu-]*", pattern[i + 2 :]).group()
                if "m" in flags or "s" in flags:
                    raise ValueError(f"save_pretrained: pattern {pattern!r:.200} sets the flags {flags!r} at {i}; "
                                     "HF tokenizers' regex engine (Oniguruma) gives them other meanings")
            groups.append(len(out))
            out.append(c)
            atom = None
            i += 1
            continue
        elif c == ")":
            out.append(c)
            atom = groups.pop() if groups else None
            i += 1
            continue
        elif c == "{" and _INTERVAL.match(pattern, i):
            j = _INTERVAL.match(pattern, i).end()
            if pattern[j : j + 1] == "+" and atom is not None:
                out[atom:] = ["(?>" + "".join(out[atom:]) + pattern[i:j] + ")"]
                j += 1
            else:
                out.append(pattern[i:j])
            atom = None
            i = j
            continue
        elif c in "^$":
            out.append("\\A" if c == "^" else "\\z")
            atom = None
            i += 1
            continue
        elif c in "*+?|":
            out.append(c)
            atom = None
            i += 1
            continue
        else:
            j = i + 1
        atom = len(out)
        out.append(pattern[i:j])
        i = j
    return "".join(out)


def check_pattern(pattern: str) -> None:
    """ValueError naming ``pattern`` when Oniguruma (HF's regex engine)
    cannot compile it (checked when ``tokenizers`` is installed)."""
    try:
        import tokenizers
    except ImportError:  # (nothing to check with: HF will say so when it loads the file)
        return
    try:
        tokenizers.Regex(pattern)
    except Exception as e:  # tokenizers raises Exception("Oniguruma error: ...")
        raise ValueError(f"save_pretrained: HF tokenizers' regex engine (Oniguruma) cannot compile the pattern "
                         f"{pattern!r:.200} ({e}); HF cannot load a tokenizer.json with it") from None


def _pre_tokenizer(bpe) -> dict:
    pattern = bpe._pattern
    chain = [] if pattern is None else [pattern] if isinstance(pattern, str) else list(pattern)
    prefix_at = bpe._prefix_at
    use_regex = False
    if prefix_at is not None and prefix_at < len(chain):
        # (from_tokenizer_json: ByteLevel(add_prefix_space, use_regex) after the Splits)
        if chain[prefix_at:] != [HF_BYTE_LEVEL_PATTERN]:
            raise ValueError("save_pretrained: a leading space put in before patterns other than ByteLevel's "
                             "has no HF pre-tokenizer")
        chain, use_regex = chain[:prefix_at], True
    if bpe._mode != "tokenizer.json":  # (a tokenizer.json's patterns are Oniguruma's already)
        chain = [for_oniguruma(p) for p in chain]
    for p in chain:
        check_pattern(p)
    byte_level = {"type": "ByteLevel", "add_prefix_space": prefix_at is not None, "trim_offsets": True,
                  "use_regex": use_regex}
    if not chain:
        return byte_level
    splits = [{"type": "Split", "pattern": {"Regex": p}, "behavior": "Isolated", "invert": False} for p in chain]
    return {"type": "Sequence", "pretokenizers": [*splits, byte_level]}


def _next_free_ids(vocab: dict[str, int], added: list[dict]) -> dict[str, int]:
    """The ids HF ``tokenizers`` gives ``added`` when it loads them over a
    model vocabulary ``vocab`` (``AddedVocabulary.add_tokens``, in file
    order): a token of the model's vocabulary has its id there, any other
    the next free one: ``len(vocab)``, or one past the last such new id
    (the tokens found in ``vocab`` do not count, whatever their ids)."""
    got: dict[str, int] = {}
    top = -1  # the largest id given to a token not in vocab
    for a in added:
        content = a["content"]
        if content in got:
            continue
        i = vocab.get(content)
        if i is None:
            i = top = max(len(vocab), top + 1)
        got[content] = i
    return got


def _added_tokens(bpe, vocab: dict[str, int]) -> list[dict]:
    """The added tokens (special tokens), in id order; those HF would
    renumber put in ``vocab`` too."""
    if bpe._mode == "tokenizer.json":
        added = [{"id": a.id, "content": a.content, "single_word": a.single_word, "lstrip": a.lstrip,
                  "rstrip": a.rstrip, "normalized": a.normalized, "special": a.special} for a in bpe._added_list]
    else:  # tiktoken's special tokens: matched anywhere, as they are
        added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": True} for s, i in bpe._specials.items()]
    added.sort(key=lambda a: a["id"])
    for a in added:
        own = vocab.get(a["content"])
        if own is not None and own != a["id"]:
            raise ValueError(f"save_pretrained: special token {a['content']!r:.60} (id {a['id']}) is also the "
                             f"byte-level spelling of token {own}; a tokenizer.json has one id per string")
    got = _next_free_ids(vocab, added)
    if any(got[a["content"]] != a["id"] for a in added):
        for a in added:
            vocab.setdefault(a["content"], a["id"])
    return added


def _template_processing(template: dict, name_of, id_of) -> dict:
    """HF ``TemplateProcessing`` of a canonical template (see
    :mod:`segkit.presets.pipeline.template`)."""
    specials = {}
    for which in ("single", "pair"):
        for piece in template[which]:
            name = piece.get("SpecialToken", {}).get("id")
            if name is not None and name not in specials:
                ids = template["special_tokens"].get(name) or [id_of(name)]
                if None in ids:
                    raise ValueError(f"save_pretrained: template token {name!r:.60} is no token of the vocabulary")
                specials[name] = {"id": name, "ids": list(ids), "tokens": [name_of(i) for i in ids]}
    return {"type": "TemplateProcessing", "single": template["single"], "pair": template["pair"],
            "special_tokens": specials}


def _model_template(bpe) -> dict | None:
    """The ids :meth:`segkit.BPE.encode` puts around a text (a
    tokenizer.json's post-processor) as a canonical template; the pair
    repeats them around the second text (the BPE keeps no pair template)."""
    if bpe._post is None:
        return None
    before = [bpe.id_to_token(i) for i in bpe._post[0].tolist()]
    after = [bpe.id_to_token(i) for i in bpe._post[1].tolist()]
    from ..pipeline.template import normalize_template

    return normalize_template({"single": [*before, "$A", *after],
                               "pair": [*before, "$A", *after, *(f"{t}:1" for t in before), "$B:1",
                                        *(f"{t}:1" for t in after)]})


def tokenizer_json_of(bpe, *, template: Any = MODEL_TEMPLATE, trim_offsets: bool = False) -> dict:
    """The ``tokenizer.json`` structure of ``bpe`` (see the module doc).

    ``template``: what the post-processor puts around a text, a canonical
    template (:func:`segkit.presets.pipeline.template.normalize_template`)
    or None; by default the BPE's own (a tokenizer.json's template).
    ``trim_offsets``: ByteLevel's (a :class:`segkit.Tokenizer`'s).
    ValueError for what HF cannot reproduce.

    >>> import segkit
    >>> doc = tokenizer_json_of(segkit.BPE.from_pretrained("gpt2"))
    >>> doc["model"]["merges"][:2], doc["added_tokens"][0]["content"]
    ([['Ġ', 't'], ['Ġ', 'a']], '<|endoftext|>')
    """
    if getattr(bpe, "_mode", None) is None or not hasattr(bpe, "_tables"):  # (not a segkit.BPE; no import of
        # .preset, which imports this module)
        raise ValueError(f"save_pretrained: a tokenizer.json is written for a segkit.BPE, found "
                         f"{type(bpe).__name__}")
    if bpe._mode == "tekken":
        raise ValueError("save_pretrained: a Tekken model's control tokens are never matched in text, HF's added "
                         "tokens always are; a tokenizer.json cannot say so")
    t = bpe._tables
    start = t.tok_start.tolist()
    data = t.tok_bytes.tobytes()
    names: dict[int, str] = {}  # id -> the model vocabulary's string
    for i in range(len(start) - 1):
        a, b = start[i], start[i + 1]
        if b > a:
            names[i] = byte_level_string(data[a:b])
    vocab = {s: i for i, s in names.items()}
    for i, s in sorted(bpe._strings.items()):  # (a tokenizer.json's entries that are not byte-level)
        if s in vocab and vocab[s] != i:
            raise ValueError(f"save_pretrained: vocabulary string {s!r:.60} has ids {vocab[s]} and {i}")
        vocab.setdefault(s, i)
        names.setdefault(i, s)
    merges = [[names[l], names[r]] for l, r in merges_by_priority(bpe)]
    added = _added_tokens(bpe, vocab)
    vocab = dict(sorted(vocab.items(), key=lambda kv: kv[1]))

    if template == MODEL_TEMPLATE:
        template = _model_template(bpe)
    byte_level_post = {"type": "ByteLevel", "add_prefix_space": bpe._prefix_at is not None,
                       "trim_offsets": bool(trim_offsets), "use_regex": True}
    if template is None:
        post = byte_level_post
    else:
        tp = _template_processing(template, bpe.id_to_token, bpe.token_to_id)
        post = tp if not trim_offsets else {"type": "Sequence", "processors": [byte_level_post, tp]}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None if bpe._normalizer is None else {"type": bpe._normalizer},
        "pre_tokenizer": _pre_tokenizer(bpe),
        "post_processor": post,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": bool(bpe._whole_any), "vocab": vocab, "merges": merges},
    }


