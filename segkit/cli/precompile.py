"""``segkit precompile``: compile every kernel the usual calls need, now.

The same run fills the wheel's ``segkit/runtime/compiled`` folder when the
package is built (``setup.py`` calls :func:`build`, with Numba compiling
for a generic CPU: see :mod:`segkit.runtime.kernel_cache`), so that the
first command after ``pip install .`` loads machine code instead of
compiling it.  Run by hand, it compiles into the usual cache for this
machine: after an upgrade of Numba, say, which makes earlier code unusable.

What is compiled is what the calls below compile: the public entry points
of every preset (WordPiece, ChineseMaxMatch, MaxMatch and RWKVWorld, BPE,
SentencePieceBPE on ``.model`` files made here), their Arrow paths where
pyarrow is importable, trainer and command, on tiny inputs, each twice where a
model can come from segkit's model cache (a model mapped from a file has
read-only arrays, which Numba compiles separately).  A call missing here
costs nothing but compiling at run time, with its notice.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

TEXTS = ["Hello, world! Fast WordPiece: 東京は日本の首都です. Привет, мир! naïve café", "a second text", ""]
CHINESE = ["研究生命起源", "我来到北京清华大学 abc 123", "", "他说: \"你好\"\n"]
CORPUS = ["the quick brown fox jumps over the lazy dog", "segkit tokenizes text for BERT, in linear time.",
          "Привет, мир! 東京は日本の首都です", "naïve café déjà vu"] * 25


def _wordpiece(folder: Path) -> None:
    import segkit

    for name in ("bert-base-uncased", "bert-base-multilingual-cased", "bert-base-chinese"):
        for _ in range(2):  # built, then mapped from the model cache
            try:
                wp = segkit.WordPiece.from_pretrained(name)
            except (KeyError, ValueError, OSError):
                break
            wp.tokenize(TEXTS[0])
            wp.encode_ids(TEXTS[0])
            wp.tokenize_word("unaffable")
            e = wp.encode(TEXTS[0])
            wp.decode(e.ids)
            wp.encode(TEXTS[0], TEXTS[1], max_length=16, truncation=True, stride=2)
            wp.encode(TEXTS[0], max_length=8, truncation=True, padding="max_length")
            wp.encode_batch(TEXTS)
            wp.encode_batch(TEXTS, padding=True).to_numpy()
            wp.encode_batch(TEXTS, max_length=8, truncation=True, stride=1, padding=True)
            wp.encode_pairs(TEXTS, TEXTS[::-1])
            wp(TEXTS, padding=True, truncation=True, max_length=16, return_tensors="np")
            wp(TEXTS[0])
            wp.decode_batch([e.ids, e.ids])
        path = folder / f"{name}.segkit"
        wp.save(path)
        loaded = segkit.load(path)
        loaded.encode(TEXTS[0])
        pickle.loads(pickle.dumps(loaded)).encode_batch(TEXTS)
        tj = folder / f"{name}.tokenizer.json"
        wp.save_tokenizer_json(tj)
        segkit.WordPiece.from_tokenizer_json(tj).encode(TEXTS[0])
    plain = segkit.WordPiece(["[UNK]", "un", "##aff", "##able", "a", "##b"])
    plain.tokenize("unaffable ab")
    plain.encode_batch(["unaffable", "ab"])
    plain.add_special_tokens([segkit.AddedToken("<eot>", lstrip=True)])
    plain.add_tokens(["hello"])
    plain.encode("un <eot> hello ab")
    plain.encode_batch(["un <eot> hello ab", "ab"])


def _chinese(folder: Path) -> None:
    import segkit

    for mode in ("forward", "backward", "bidirectional"):
        for keep in (False, True):
            for _ in range(2):  # built, then mapped from the model cache
                seg = segkit.ChineseMaxMatch(mode=mode, keep_whitespace=keep)
                for text in CHINESE:
                    seg.cut(text)
                    seg.lcut(text)
                    seg.tokenize(text)
                seg.cut_batch(CHINESE)
                seg.tokenize_batch(CHINESE)
    segkit.ChineseMaxMatch().cut_all(CHINESE[0])  # jieba's full mode (segkit cut -a)
    seg = segkit.ChineseMaxMatch(["研究", "生命", "起源"])
    seg.add_word("研究生")
    seg.cut("研究生命起源")
    seg.cut_all("研究生命起源")
    path = folder / "chinese.segkit"
    seg.save(path)
    segkit.load(path).cut_batch(CHINESE)


def _maxmatch(folder: Path) -> None:
    import segkit

    texts = ["Hello, 世界! 😀 naïve", "a second text", ""]
    for _ in range(2):  # built, then mapped from the model cache
        tok = segkit.RWKVWorld()
        for text in texts:
            ids = tok.encode(text)
            tok.tokenize(text)
            tok.encode_with_offsets(text)
            tok.decode(ids)
        tok.encode(texts[0].encode("utf-8"))
        tok.encode_batch(texts)
        tok.encode_batch([t.encode("utf-8") for t in texts])
        tok.encode_batch_with_offsets(texts)
        dec = tok.stream_decoder()
        for i in tok.encode("a😀"):
            dec.step(i)
    path = folder / "rwkv.segkit"
    tok.save(path)
    segkit.load(path).encode_batch(texts)
    for unit, direction, unknown in (("byte", "forward", "error"), ("byte", "backward", 0), ("char", "forward", 0),
                                     ("char", "backward", "error")):
        vocab = ["a", "aa", "b", "東京", "京", "東", "都", " "] if unit == "char" else \
            [bytes([b]) for b in range(256)] + [b"aa", "東京".encode()]
        mm = segkit.MaxMatch(vocab, unit=unit, direction=direction, unknown=unknown)
        for text in ("aab 東京都", ""):
            mm.encode(text)
            mm.tokenize(text)
            mm.encode_with_offsets(text)
        mm.encode_batch(["aab 東京都", "b"])
        mm.encode_batch_with_offsets(["aab 東京都", "b"])


def _bpe(folder: Path) -> None:
    import segkit

    long_text = (TEXTS[0] + " ") * 1000  # > 64 KB: the batch kernels' path for long single texts
    special = "hi<|endoftext|> there"
    # Each bundled vocabulary has its own compiled pre-tokenizer.
    for name in ("cl100k_base", "r50k_base", "o200k_base"):
        for _ in range(2):  # built, then mapped from the model cache
            enc = segkit.BPE.from_pretrained(name)
            for text in TEXTS:
                enc.encode(text)
                enc.encode_ordinary(text)
            enc.encode(special, allowed_special="all")
            enc.encode(special, disallowed_special=())
            enc.count(TEXTS[0])
            enc.encode_with_offsets(TEXTS[0])
            enc.encode_with_offsets(special, disallowed_special=())
            enc.encode_batch(TEXTS)
            enc.encode_batch(TEXTS, flat=True)
            enc.encode_batch([special, *TEXTS], allowed_special="all")
            enc.encode_ordinary_batch(TEXTS)
            enc.encode_ordinary_batch(TEXTS, flat=True)
            enc.encode(long_text)
            enc.encode_ordinary(long_text)
            ids = enc.encode(TEXTS[0])
            enc.decode(ids)
            enc.decode_bytes(ids)
            enc.decode_single_token_bytes(ids[0])
        path = folder / f"{name}.segkit"
        enc.save(path)
        loaded = segkit.load(path)
        loaded.decode(loaded.encode(TEXTS[0]))  # a loaded model's decode tables are made on first use
        again = pickle.loads(pickle.dumps(enc))
        again.decode(again.encode_batch(TEXTS)[0])
    vocab = {bytes([b]): b for b in range(256)} | {b"lo": 256, b"low": 257}
    own = segkit.BPE(vocab, [(b"l", b"o"), (b"lo", b"w")], special_tokens={"<|end|>": 258})
    own.encode("low lower<|end|>", allowed_special="all")
    own.encode_batch(["low lower", "low"])
    segkit.BPE(vocab, [(b"l", b"o"), (b"lo", b"w")], pattern=None).encode_batch(["low lower", "low"])
    # Patterns of the compiled subset (Llama 3's, with tiktoken's and HF's
    # semantics): the regex programs' batch kernels.
    from ..presets.bpe.pieces import COMPILED_MIN_ROWS

    llama3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
              r"\s*[\r\n]+|\s+(?!\S)|\s+")
    for merges_model in (segkit.BPE(vocab, [(b"l", b"o"), (b"lo", b"w")], pattern=llama3),):
        merges_model.encode_batch(TEXTS * COMPILED_MIN_ROWS)
        merges_model.encode_batch(TEXTS * COMPILED_MIN_ROWS, flat=True)
        for text in TEXTS:  # one text: the chain of programs in one call
            merges_model.encode(text)
    # The HF pipeline over a BPE (segkit.Tokenizer): one text in one call
    # (the fused kernel; the pieces path for special tokens), with and
    # without a template and options, and the batch rows.
    for _ in range(2):  # built, then mapped from the model cache
        tok = segkit.Tokenizer(segkit.BPE.from_pretrained("cl100k_base"), trim_offsets=True,
                               template={"single": "<|endoftext|> $A", "pair": "<|endoftext|> $A $B:1"})
        for text in (*TEXTS, special):
            tok.encode(text)
            tok.encode(text, add_special_tokens=False)
            tok.encode(text, max_length=8, truncation=True, padding="max_length")
            tok.encode(text, max_length=4, truncation=True, stride=1)
        tok.encode_batch(TEXTS, padding=True)
        tok.encode(TEXTS[0], TEXTS[1])
        tok(TEXTS, return_offsets_mapping=True)


# SentencePiece ``.model`` files, made here: ``segkit precompile`` runs
# where neither sentencepiece nor mistral_common is installed.  A protobuf
# message is its fields one after another, each a varint key
# ``number << 3 | wire type`` then the value: wire type 0 a varint (ints,
# bools, enums), 2 a varint length and the bytes (strings, bytes,
# sub-messages), 5 a little-endian float32.  The field numbers are
# sentencepiece_model.proto's (the ones segkit reads: .presets.sentencepiece.proto).
def _pb_varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # (a negative int32 is written as its 64-bit two's complement, as protobuf does)
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _pb_message(*fields: tuple[int, object]) -> bytes:
    """The message of ``(number, value)`` fields, in that order: an int or
    bool as a varint, a float as a float32, str (UTF-8) or bytes
    length-delimited (a sub-message is its bytes)."""
    import struct

    out = bytearray()
    for number, value in fields:
        if isinstance(value, (bool, int)):
            out += _pb_varint(number << 3 | 0) + _pb_varint(int(value))
        elif isinstance(value, float):
            out += _pb_varint(number << 3 | 5) + struct.pack("<f", value)
        else:
            raw = value.encode("utf-8") if isinstance(value, str) else bytes(value)
            out += _pb_varint(number << 3 | 2) + _pb_varint(len(raw)) + raw
    return bytes(out)


_SP_NORMAL, _SP_UNKNOWN, _SP_CONTROL, _SP_USER, _SP_UNUSED, _SP_BYTE = 1, 2, 3, 4, 5, 6  # SentencePiece.Type


def _sp_model(pieces: list[tuple[str, float, int]], *, byte_fallback: bool = False, suffix: bool = False,
              charsmap: bytes = b"", add_dummy_prefix: bool = True, remove_extra_whitespaces: bool = False,
              escape_whitespaces: bool = True) -> bytes:
    """A serialized ``ModelProto`` of a BPE model: ``pieces`` (piece, score,
    type), ``trainer_spec`` (model_type BPE, its options) and
    ``normalizer_spec`` (the charsmap and whitespace options)."""
    unk = next(i for i, p in enumerate(pieces) if p[2] == _SP_UNKNOWN)
    trainer = _pb_message((3, 2), (4, len(pieces)), (24, suffix), (35, byte_fallback),  # model_type: BPE
                          (40, unk), (41, 1), (42, 2), (43, -1))  # unk, bos, eos, pad ids
    normalizer = _pb_message((1, "tiny" if charsmap else "identity"), (2, charsmap), (3, add_dummy_prefix),
                             (4, remove_extra_whitespaces), (5, escape_whitespaces))
    return _pb_message(*((1, _pb_message((1, piece), (2, float(score)), (3, kind))) for piece, score, kind in pieces),
                       (2, trainer), (3, normalizer))


def _sp_charsmap(rules: dict[str, str]) -> bytes:
    """A precompiled charsmap (see :mod:`segkit.presets.pipeline.charsmap`)
    of ``rules`` (text -> replacement): a uint32 trie size, a Darts
    double-array trie of the texts' UTF-8 bytes, the replacements each ended
    by a NUL.  Laid out plainly: node ``i``'s children are at ``base ^ label``
    with ``base = 256 * (i + 1)``, its own block (the root is unit 0), and
    a node where a text ends has a leaf (label 0, at ``base``) holding the
    replacement's offset.  A unit: ``offset << 10 | has_leaf << 8 | label``
    (offset: the unit's index xor ``base``); a leaf: ``1 << 31 | value``."""
    import struct

    children: list[dict[int, int]] = [{}]
    labels = [0]
    values: list[int | None] = [None]
    strings = bytearray()
    for text, replacement in rules.items():
        node = 0
        for byte in text.encode("utf-8"):
            if byte not in children[node]:
                children[node][byte] = len(children)
                children.append({})
                labels.append(byte)
                values.append(None)
            node = children[node][byte]
        values[node] = len(strings)
        strings += replacement.encode("utf-8") + b"\0"
    units = [0] * (256 * (len(children) + 1))
    index = [0] * len(children)
    for i in range(len(children)):  # (a child's number is above its parent's: its index is known first)
        base = 256 * (i + 1)
        for label, child in children[i].items():
            index[child] = base ^ label
        if values[i] is not None:
            units[base] = 1 << 31 | values[i]
        units[index[i]] = (index[i] ^ base) << 10 | (values[i] is not None) << 8 | labels[i]
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + bytes(strings)


def _sp_pieces(letters: str, merged: list[str], *, user: tuple[str, ...] = (), unused: tuple[str, ...] = (),
               byte_pieces: bool = False) -> list[tuple[str, float, int]]:
    """``<unk>``, ``<s>``, ``</s>``, the byte pieces, user-defined symbols,
    then the merged pieces (scores falling: earlier merges first) and the
    single characters."""
    pieces = [("<unk>", 0.0, _SP_UNKNOWN), ("<s>", 0.0, _SP_CONTROL), ("</s>", 0.0, _SP_CONTROL)]
    if byte_pieces:
        pieces += [(f"<0x{b:02X}>", 0.0, _SP_BYTE) for b in range(256)]
    pieces += [(u, 0.0, _SP_USER) for u in user]
    pieces += [(m, -float(i), _SP_UNUSED if m in unused else _SP_NORMAL) for i, m in enumerate(merged)]
    pieces += [(c, -float(len(merged) + i), _SP_NORMAL) for i, c in enumerate(letters)]
    return pieces


#: Texts for the SentencePiece models: spaces in runs, a user-defined
#: symbol, a charsmap rule (ﬁ, Ａ), characters no piece has (byte fallback
#: or unk), a word longer than the word cache's short words, a control
#: piece's text.
SP_TEXTS = ["Hello world", "  hello   [INST] world  ", "ﬁne Ａ hold 東京 😀", "l" * 100 + " wow", "<s>", ""]


def sentencepiece_models() -> dict[str, bytes]:
    """The ``.model`` files :func:`_sentencepiece` runs, by name: each takes
    another path of the kernels (the word mode before or after ``▁``, the
    whole text, the span encoder) or of the normalizer."""
    letters = "\u2581Hdehlorw"
    merged = ["\u2581w", "\u2581wo", "ll", "he", "\u2581h", "\u2581he", "\u2581hell", "hell", "or", "\u2581wor",
              "\u2581worl", "\u2581world", "\u2581hello", "lo"]
    return {
        # Llama's and Mistral's kind: identity, byte fallback, a user-defined symbol, words cut before "▁"
        "bytes": _sp_model(_sp_pieces(letters, merged, user=("[INST]",), byte_pieces=True), byte_fallback=True),
        # unk, a charsmap, whitespace removed; "o▁w" and "fi" (whose "i" is no piece: the span encoder):
        # no word mode, the whole text merged
        "charsmap": _sp_model(_sp_pieces(letters + "Af", merged + ["o\u2581w", "fi", "fin"]),
                              charsmap=_sp_charsmap({"\ufb01": "fi", "\uff21": "A", "\u3000": " "}),
                              remove_extra_whitespaces=True),
        # UNUSED pieces (resegmented; the whole text), no dummy prefix
        "unused": _sp_model(_sp_pieces(letters, merged, unused=("\u2581wo", "ll"), byte_pieces=True),
                            byte_fallback=True, add_dummy_prefix=False),
        # whitespace as a suffix: words cut after "▁"
        "suffix": _sp_model(_sp_pieces(letters, ["o\u2581", "lo\u2581", "llo\u2581", "he", "hello\u2581", "ll"]),
                            suffix=True),
        # spaces not escaped (pieces with " ")
        "spaces": _sp_model(_sp_pieces(letters + " ", merged + [" w", "o "]), escape_whitespaces=False),
    }


def _sentencepiece(folder: Path) -> None:
    """segkit.SentencePieceBPE: the tables and the pair table made from a
    file, from bytes, from a saved model (its arrays read-only) and from a
    pickle; encode (one text in one call with the word cache; a long text
    by the batch kernel), encode_batch, decode."""
    import segkit

    long_text = " ".join(SP_TEXTS) * 1200  # > 16384 characters: encode runs the batch kernel
    for name, data in sentencepiece_models().items():
        path = folder / f"{name}.model"
        path.write_bytes(data)
        saved = folder / f"{name}.segkit"
        segkit.SentencePieceBPE(path).save(saved)
        for sp in (segkit.SentencePieceBPE(path), segkit.SentencePieceBPE.from_bytes(data), segkit.load(saved),
                   segkit.SentencePieceBPE.load(saved, verify=False), pickle.loads(pickle.dumps(segkit.load(saved)))):
            for text in SP_TEXTS:
                ids = sp.encode(text)
                sp.tokenize(text)
                sp.decode(ids)
                sp.decode(ids, skip_special_tokens=False)
            sp.encode(long_text)
            rows = sp.encode_batch(SP_TEXTS)
            sp.encode_batch(SP_TEXTS * 8, num_threads=2)
            sp.batch_decode(rows)
            try:
                sp.encode("a lone \ud800 surrogate")
            except ValueError:
                pass


def _training(folder: Path) -> None:
    import segkit

    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(CORPUS), encoding="utf-8")
    for source in (CORPUS, [corpus]):
        bpe = segkit.train_bpe(source, 300, special_tokens=["<|endoftext|>"], show_progress=False)
        bpe.save(folder / "bpe")
        bpe.to_tokenizer_json(folder / "bpe" / "tokenizer.json")
        bpe.encoder().encode_batch(CORPUS[:3], allowed_special="all")
        hf = segkit.BPE.from_tokenizer_json(folder / "bpe" / "tokenizer.json")  # HuggingFace semantics
        hf.encode(CORPUS[0])
        hf.encode_batch(CORPUS[:3])
        hf.encode_with_offsets(CORPUS[0])
        pipeline = segkit.Tokenizer.from_file(folder / "bpe" / "tokenizer.json")
        pipeline.encode(CORPUS[0])
        pipeline.encode(CORPUS[0] + "<|endoftext|>")
        pipeline.encode_batch(CORPUS[:3])
    # A Sequence of Splits (DeepSeek's kind): the chain of programs, one
    # text in one call and the batch steps, under BPE and the pipeline.
    data = json.loads((folder / "bpe" / "tokenizer.json").read_text(encoding="utf-8"))
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": r"\p{N}{1,3}"}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}]}
    (folder / "chain.json").write_text(json.dumps(data), encoding="utf-8")
    chain = segkit.BPE.from_tokenizer_json(folder / "chain.json")
    pipeline = segkit.Tokenizer.from_file(folder / "chain.json")
    for text in CORPUS[:4]:
        chain.encode(text)
        pipeline.encode(text)
    chain.encode_batch(CORPUS)
    pipeline.encode_batch(CORPUS)
    # A BPE over characters (SentencePiece-converted: Metaspace, byte
    # fallback): the staged pipeline's model kernel.
    letters = sorted(set("".join(CORPUS)) | {"\u2581"})
    vocab = {t: i for i, t in enumerate(["<unk>", *letters, *(f"<0x{b:02X}>" for b in range(256)), "\u2581t"])}
    staged = {"version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None,
              "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False},
              "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]},
              "model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": True, "fuse_unk": True,
                        "vocab": vocab, "merges": ["\u2581 t"]}}
    (folder / "staged.json").write_text(json.dumps(staged), encoding="utf-8")
    staged_tok = segkit.Tokenizer.from_file(folder / "staged.json")  # (the fused Metaspace shape)
    staged_tok.encode(CORPUS[0] + " \U0001F600")
    staged_tok.encode_batch(CORPUS)
    staged["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [staged["pre_tokenizer"], {"type": "Digits"}]}
    (folder / "staged.json").write_text(json.dumps(staged), encoding="utf-8")
    segkit.Tokenizer.from_file(folder / "staged.json").encode_batch(CORPUS)  # (stage by stage)
    for source in (CORPUS, [corpus]):
        segkit.train_wordpiece(source, 200, show_progress=False).encode(CORPUS[0])


def _arrow(folder: Path) -> None:
    """The Arrow paths (``encode_arrow``, ``cut_arrow``, ``tokenize_arrow``):
    their kernels see Arrow's buffers (offsets of both widths, null masks),
    which the list paths never pass.  Best run with pyarrow
    where this runs: not inside pip's isolated build environment, so a wheel
    built by ``pip install .`` runs them through :func:`_arrow_buffers`
    instead."""
    try:
        import pyarrow as pa
    except ImportError:
        _arrow_buffers()
        return
    import segkit

    texts = pa.array(TEXTS)
    large = texts.cast(pa.large_string())
    nulls = pa.array([TEXTS[0], None, ""])
    for name in ("bert-base-uncased", "bert-base-multilingual-cased", "bert-base-chinese"):
        for _ in range(2):  # built, then mapped from the model cache
            wp = segkit.WordPiece.from_pretrained(name)
            wp.encode_arrow(texts)
            wp.encode_arrow(large)
            wp.encode_arrow(texts, texts)
            wp.encode_arrow(nulls, null="empty")
            wp.encode_arrow(texts, offsets=False)
    zh = pa.array(CHINESE)
    for _ in range(2):
        seg = segkit.ChineseMaxMatch()
        seg.cut_arrow(zh)
        seg.tokenize_arrow(zh)
        seg.cut_arrow(zh.cast(pa.large_string()))
        seg.cut_arrow(pa.array([CHINESE[0], None]), null="empty")
    for _ in range(2):
        tok = segkit.RWKVWorld()
        tok.encode_arrow(texts)
        tok.encode_arrow(large)
        tok.encode_arrow(texts, offsets=True)
        tok.encode_arrow(nulls, null="empty")
    for name in ("cl100k_base", "r50k_base", "o200k_base"):
        for _ in range(2):
            enc = segkit.BPE.from_pretrained(name)
            enc.encode_arrow(texts)
            enc.encode_arrow(large)
            enc.encode_arrow(nulls, null="empty")


def _arrow_buffers() -> None:
    """The Arrow paths' kernels without pyarrow (a wheel built in pip's
    isolated environment): their inputs made with NumPy as Arrow's buffers
    are (:meth:`~segkit.scale.arrow.Utf8Rows.from_buffers`: writable values
    and offsets of both widths, validity masks) and run through each path
    up to where pyarrow would wrap the result."""
    import numpy as np

    import segkit
    from segkit.presets.maxmatch.arrow import _match
    from segkit.engine import utf8
    from segkit.scale.arrow import Utf8Rows, encode_arrow_batch
    from segkit_cjk.arrow import word_buffers

    def rows_of(texts, width, nulls=False):
        raw = [t.encode("utf-8") for t in texts]
        offs = np.zeros(len(raw) + 1, dtype=width)
        np.cumsum([len(r) for r in raw], out=offs[1:])
        data = np.frombuffer(bytearray(b"".join(raw)), np.uint8)  # (writable, as Arrow's buffers come)
        valid = np.ones(len(raw), np.uint8) if nulls else None
        if nulls:
            valid[-1] = 0
        return Utf8Rows.from_buffers(data, offs, valid), data, offs.astype(np.int64)

    variants = [(np.int32, False), (np.int64, False), (np.int32, True)]
    for name in ("bert-base-uncased", "bert-base-multilingual-cased", "bert-base-chinese"):
        for _ in range(2):  # built, then mapped from the model cache
            wp = segkit.WordPiece.from_pretrained(name)
            for width, nulls in variants:
                src = rows_of(TEXTS, width, nulls)[0]
                encode_arrow_batch(wp, src)
            encode_arrow_batch(wp, rows_of(TEXTS, np.int32)[0], rows_of(TEXTS, np.int32)[0])
    for _ in range(2):
        seg = segkit.ChineseMaxMatch()
        for width, nulls in variants:
            src = rows_of(CHINESE, width, nulls)[0]
            word_buffers(seg, src, None, False)
            word_buffers(seg, src, None, True)
    for _ in range(2):
        tok = segkit.RWKVWorld()
        _, data, bounds = rows_of(TEXTS, np.int32)
        _match(tok, data, bounds, None, False)
        out, rows = _match(tok, data, bounds, None, True)
        utf8.to_char_offsets(data, bounds, out[1], out[2], rows)
    for name in ("cl100k_base", "r50k_base", "o200k_base"):
        for _ in range(2):
            enc = segkit.BPE.from_pretrained(name)
            for width, nulls in variants:
                try:
                    enc.encode_arrow(rows_of(TEXTS, width, nulls)[0])
                except ImportError:  # (raised once the ids are made: the kernels have run)
                    pass


def _commands(folder: Path, main: Callable[[list[str]], int]) -> None:
    zh = folder / "zh.txt"
    zh.write_text("\n".join(CHINESE), encoding="utf-8")
    en = folder / "en.txt"
    en.write_text("\n".join(CORPUS), encoding="utf-8")
    runs = [
        ["tokenize", "segkit tokenizes text for BERT, in linear time."],
        ["tokenize", "--format", "ids", "--input", str(en)],
        ["tokenize", "--format", "json", "--pretrained", "bert-base-multilingual-cased", "x y"],
        ["encode", "--format", "json", "--max-length", "8", "--padding", "max_length", "--input", str(en)],
        ["tokenize", "--model", "rwkv-world", "Hello, 世界!"],
        ["tokenize", "--model", "rwkv-world", "--format", "json", "--input", str(en)],
        ["tokenize", "--model", "cl100k_base", "Hello, world! 東京"],
        ["tokenize", "--model", "cl100k_base", "--format", "json", "--input", str(en)],
        ["tokenize", "--model", "cl100k_base", "--format", "ids", "--input", str(en)],
        ["cut", str(zh)],
        ["cut", "--mode", "backward", "--keep-whitespace", str(zh)],
        ["cut", "--mode", "bidirectional", str(zh)],
        ["train", "bpe", "--vocab-size", "300", "--no-progress", str(en), "-o", str(folder / "cli-bpe")],
        ["train", "wordpiece", "--vocab-size", "200", "--quiet", str(en), "-o", str(folder / "cli-wp")],
    ]
    for argv in runs:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
            status = main(argv)
        if status:
            raise RuntimeError(f"segkit {' '.join(argv)}: exit status {status}: {err.getvalue()[-500:]}")


#: The calls of the Python API, by area (each gets a fresh folder); then
#: the commands' (:func:`_commands`).
EXERCISES: dict[str, Callable[[Path], None]] = {
    "wordpiece": _wordpiece,
    "chinese": _chinese,
    "maxmatch": _maxmatch,
    "bpe": _bpe,
    "sentencepiece": _sentencepiece,
    "training": _training,
    "arrow": _arrow,
}


#: The two halves of the exercises the build step runs at the same time,
#: one process each, when there are two cores (about equal compile times;
#: both write to the same folder, so a kernel one has compiled the other
#: loads).
HALVES = (("bpe", "chinese", "maxmatch", "sentencepiece"), ("wordpiece", "training", "arrow", "commands"))


def run(log: Callable[[str], None] | None = None, cli_main: Callable[[list[str]], int] | None = None,
        areas: tuple[str, ...] | None = None) -> dict:
    """Run every exercise (or those named in ``areas``) with a private,
    empty model cache (and the commands, through ``cli_main``, the
    ``segkit`` entry point); returns what was compiled and loaded
    (:data:`segkit.runtime.kernel_cache.STATS`)."""
    exercises = dict(EXERCISES)
    if cli_main is not None:
        exercises["commands"] = lambda folder: _commands(folder, cli_main)
    if areas is not None:
        unknown = sorted(set(areas) - set(exercises))
        if unknown:
            raise ValueError(f"unknown precompile areas {unknown}; expected some of {sorted(exercises)}")
        exercises = {k: v for k, v in exercises.items() if k in areas}
    saved = os.environ.get("SEGKIT_CACHE_DIR")
    with tempfile.TemporaryDirectory(prefix="segkit-precompile-") as tmp:
        os.environ["SEGKIT_CACHE_DIR"] = str(Path(tmp) / "models")
        try:
            for name, exercise in exercises.items():
                t0 = time.perf_counter()
                folder = Path(tmp) / name
                folder.mkdir()
                exercise(folder)
                if log:
                    log(f"{name}: {time.perf_counter() - t0:.1f} s")
        finally:
            if saved is None:
                os.environ.pop("SEGKIT_CACHE_DIR", None)
            else:
                os.environ["SEGKIT_CACHE_DIR"] = saved
    from ..runtime import kernel_cache

    return dict(kernel_cache.STATS)


#: What compiling everything for the wheel takes here (wall seconds, the
#: build's ``segkit precompile --into`` on 2 shared cores, 2026-12-01):
#: 84 s in two processes (119 s in one) at load average 0.1-1.4, about
#: twice that under load: the notice's estimate when no earlier build on
#: this machine says better.
MEASURED_BUILD_SECONDS = 120

#: Earlier builds kept in the user's kernel cache (least recently used go).
KEPT_BUILDS = 3


def sources_digest() -> str:
    """Digest of every Python file of the packages being built (segkit and
    its bundled plugin segkit_cjk), of the versions that compiled code
    depends on and of the machine: two builds with the same digest compile
    the same kernels to the same code."""
    import platform

    import llvmlite
    import numba
    import numpy

    from ..runtime.kernel_cache import SEGKIT_ROOT

    h = hashlib.sha256()
    h.update(json.dumps([numba.__version__, llvmlite.__version__, numpy.__version__, sys.version,
                         getattr(sys, "abiflags", ""), platform.machine(), numba.config.CPU_NAME]).encode())
    for top in (SEGKIT_ROOT, SEGKIT_ROOT.parent / "segkit_cjk"):
        if not top.is_dir():
            continue
        for path in sorted(top.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            h.update(path.relative_to(top.parent).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()[:32]


def _builds_root() -> Path | None:
    from ..runtime.kernel_cache import user_root

    root = user_root()
    return None if root is None else root / "builds"


def reuse_build(digest: str, out: Path, log: Callable[[str], None]) -> dict | None:
    """Copy the entries an earlier build of the same sources kept (see
    :func:`keep_build`) into ``out``; returns that build's manifest, or
    None when there is none or it cannot be trusted or is damaged (said)."""
    from ..runtime import kernel_cache, private_files

    root = _builds_root()
    if root is None:
        return None
    folder = root / digest
    if not folder.is_dir():
        return None
    problem = private_files.folder_problem(folder, "kept build folder")
    try:
        if problem is not None:
            raise private_files.UntrustedFile(problem)
        manifest = json.loads(private_files.read_private(folder / "manifest.json", "kept build manifest"))
        names = manifest["files"]
        if not isinstance(names, list) or not all(isinstance(n, str) and n.endswith(kernel_cache.SUFFIX)
                                                  and "/" not in n and not n.startswith(".") for n in names):
            raise ValueError("its list of files is not a list of entry names")
        entries = []
        for name in names:
            data = private_files.read_private(folder / name, "kept kernel entry")
            kernel_cache.entry_key(data)  # whole, or DamagedEntry
            entries.append((name, data))
    except (OSError, ValueError, KeyError, TypeError) as e:
        log(f"not reusing the kept build {folder}: {e}")
        return None
    for name, data in entries:
        private_files.write_private(out, name, data, mode=0o644)
    try:
        os.utime(folder)  # recently used: kept by the pruning
    except OSError:
        pass
    return manifest


def keep_build(digest: str, out: Path, manifest: dict, log: Callable[[str], None]) -> None:
    """Keep a copy of ``out``'s entries in the user's kernel cache
    (``builds/<digest>/``, private), for the next build of the same sources
    and for processes that import a checkout of them; at most
    :data:`KEPT_BUILDS` are kept."""
    import shutil

    from ..runtime import private_files

    root = _builds_root()
    if root is None:
        return
    problem = private_files.make_private_folder(root, "kept builds folder")
    if problem is not None:
        log(f"not keeping this build for the next one: {problem}")
        return
    try:
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=root))  # 0700
        for p in sorted(out.iterdir()):
            if p.suffix == ".nbk":
                private_files.write_private(tmp, p.name, p.read_bytes())
        private_files.write_private(tmp, "manifest.json", json.dumps(manifest, indent=1).encode())
        final = root / digest
        if final.exists():
            shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
    except OSError as e:
        log(f"not keeping this build for the next one: {e}")
        shutil.rmtree(tmp, ignore_errors=True)
        return
    now = time.time()
    kept = []
    for p in root.iterdir():
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if p.name.startswith(".tmp-"):
            if now - st.st_mtime > 3600:  # left by a build that died
                shutil.rmtree(p, ignore_errors=True)
        elif p.is_dir():
            kept.append((st.st_mtime, p))
    for _, p in sorted(kept, reverse=True)[KEPT_BUILDS:]:
        shutil.rmtree(p, ignore_errors=True)


def _estimate() -> int:
    """Seconds the compiling will take: what the last build kept here took,
    else :data:`MEASURED_BUILD_SECONDS`."""
    root = _builds_root()
    best = None
    try:
        for p in root.iterdir() if root is not None else ():
            try:
                m = json.loads((p / "manifest.json").read_text(encoding="utf-8"))
                secs = float(m["wall_seconds"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
            mtime = p.stat().st_mtime
            if best is None or mtime > best[0]:
                best = (mtime, secs)
    except OSError:
        pass
    return int(best[1]) if best else MEASURED_BUILD_SECONDS


def _jobs() -> int:
    env = os.environ.get("SEGKIT_PRECOMPILE_JOBS")
    if env and env.strip().isdigit():
        return max(1, int(env))
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return 2 if cores >= 2 else 1


def _run_halves(log: Callable[[str], None], cli_main: Callable[[list[str]], int] | None) -> dict:
    """:func:`run` on two cores: the second half of the exercises in a child
    process (same environment, same output folder), the first here."""
    import subprocess

    child = subprocess.Popen([sys.executable, "-m", "segkit", "precompile", "--into", os.environ["SEGKIT_JIT_WRITE"],
                              "--areas", ",".join(HALVES[1])], stdout=subprocess.DEVNULL)
    try:
        stats = run(log, cli_main, HALVES[0])
    except BaseException:
        child.kill()
        raise
    if child.wait() != 0:
        raise RuntimeError(f"the second precompile process ended with exit status {child.returncode}")
    return stats


def build(out: str | os.PathLike, cli_main: Callable[[list[str]], int] | None, reuse: bool = True,
          areas: tuple[str, ...] | None = None) -> dict:
    """Fill ``out`` with the compiled kernels of :func:`run` (the build step,
    ``segkit precompile --into OUT`` in a fresh interpreter with
    ``NUMBA_CPU_NAME=generic`` and ``SEGKIT_JIT_WRITE=OUT``: see setup.py).
    An earlier build of the same sources on this machine
    (:func:`sources_digest`) is copied instead (:func:`reuse_build`), and
    this one is kept for the next (:func:`keep_build`).  Writes
    ``out/manifest.json``."""
    import numba

    out = Path(out).resolve()
    if Path(os.environ.get("SEGKIT_JIT_WRITE", "")).resolve() != out:
        raise RuntimeError("set SEGKIT_JIT_WRITE to the output folder before starting the interpreter")

    def log(line: str) -> None:
        print(f"segkit precompile: {line}", file=sys.stderr, flush=True)

    if areas is not None:  # one half of a build on two cores (_run_halves): only compile
        run(log, cli_main, areas)
        return {}
    t0 = time.perf_counter()
    digest = sources_digest()
    kept = reuse_build(digest, out, log) if reuse else None
    if kept is not None:
        log(f"reused the {len(kept['files'])} compiled kernels of an earlier build of the same sources "
            f"(kept in {_builds_root()}; compiling them took {kept.get('wall_seconds', '?')} s then) "
            f"in {time.perf_counter() - t0:.1f} s")
        manifest = dict(kept, reused=True)
    else:
        minutes = max(1, round(_estimate() / 60))
        jobs = _jobs()
        log(f"compiling the kernels for a generic CPU, once per machine for these sources (about {minutes} "
            f"minute{'s' if minutes > 1 else ''} on 2 cores; SEGKIT_PRECOMPILE=0 skips it) ...")
        stats = _run_halves(log, cli_main) if jobs > 1 else run(log, cli_main)
        manifest = {
            "numba": numba.__version__, "python": list(sys.version_info[:2]), "cpu": numba.config.CPU_NAME,
            "kernels_compiled": stats["compiled"], "compile_seconds": round(stats["compile_seconds"], 1),
            "wall_seconds": round(time.perf_counter() - t0, 1), "sources": digest, "processes": jobs,
            "files": sorted(p.name for p in out.iterdir() if p.suffix == ".nbk"),
        }
        keep_build(digest, out, manifest, log)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return manifest


def add_parser(sub) -> None:
    """Add ``segkit precompile`` to the subparsers ``sub``."""
    p = sub.add_parser(
        "precompile", help="compile every kernel now (first-run compiling is otherwise done on first use)",
        description="Compile the kernels of every preset, trainer and command for this machine, into Numba's "
        "usual cache, so that no later call compiles. pip install does this for a generic CPU already; run it "
        "after upgrading Numba, or to get code tuned for this machine's CPU.",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="print nothing")
    p.add_argument("--into", metavar="DIR", help=argparse.SUPPRESS)  # the build step (setup.py)
    p.add_argument("--areas", help=argparse.SUPPRESS)  # one half of the build step on two cores


def main(args, cli_main: Callable[[list[str]], int]) -> int:
    """Run ``segkit precompile``: everything not compiled for this machine
    yet is compiled for it (the generic code in the package is not used).
    ``cli_main`` is the ``segkit`` entry point, for the commands' calls."""
    if args.into:
        build(args.into, cli_main, areas=tuple(args.areas.split(",")) if args.areas else None)
        return 0
    os.environ["SEGKIT_JIT_SHIPPED"] = "0"
    log = None if args.quiet else (lambda line: print(f"segkit precompile: {line}", file=sys.stderr, flush=True))
    t0 = time.perf_counter()
    stats = run(log, cli_main)
    if log:
        log(f"{stats['compiled']} kernels compiled, {stats['loaded']} already compiled, "
            f"{time.perf_counter() - t0:.1f} s in all")
    return 0
