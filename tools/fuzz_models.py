"""Mutation fuzzing of ``segkit.load`` (issue 17): crafted model files must
load as a model that behaves like a valid one, or raise ``ModelFileError``.

Saved models (a WordPiece and a bidirectional Chinese segmenter, small so
that a mutation is checked in milliseconds) are mutated, their checksums
recomputed (anyone can recompute a CRC), and each mutated file is loaded in
a *worker subprocess* that then runs texts through it and checks the
output: a crash kills the worker, a hang trips a timeout, and both count as
failures, as does any exception other than ``ModelFileError``.

A model that loads must behave like a valid model:

* WordPiece (no normalization): every token id has a token, offsets lie in
  the text, in order, and a token that is not ``[UNK]`` or a special token
  spells the text it covers (``##`` stripped for a continuation);
* Chinese: ``"".join(cut(text))`` is the text without its whitespace, the
  tokens' offsets spell them, and ``cut_batch`` agrees with ``cut``;
* MaxMatch (a byte automaton with every single byte, and a backward
  character one with an unknown id): every id has a token (or is the
  unknown id), the tokens' offsets tile the text and each token spells
  what it covers, ``encode_batch`` agrees with ``encode``.

Mutations: int32 elements of arrays set to boundary, random or nearby
values (mostly in the automaton), byte flips anywhere in the data section
(blobs too), and edits of the JSON header (a value replaced by one of
another type or range, a key removed).

Usage (the long run of the issue; the test suite runs a few dozen)::

    python tools/fuzz_models.py --mutations 10000 --seed 1

It prints the counts of mutations tried, rejected (``ModelFileError``),
loaded (and checked), crashes, hangs and other exceptions, and exits 1 if
any of the last three is non-zero.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREFIX = struct.Struct("<8sIIII")
ALIGN = 64

WP_TEXTS = [
    "Hello, wonderful world! unaffable [CLS]x",
    "the quick brown fox jumps over the lazy dog 12345",
    "unbelievable ##ab abc, a.b.c [MASK] [SEP]",
    "   ",
    "",
    "x" * 300,
    "naïve café ÀÉÎ résumé 東京 北京大学",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
]
MM_TEXTS = [
    "hello wonderful world 12345",
    "naïve café 東京 北京大学 😀!",
    "",
    "xxxxxxxxxxxxxxxxxxxx" * 10,
    b"\xff\xfe\x00 bytes \xe4\xbd",
]
ZH_TEXTS = [
    "研究生命起源 in Peking 3.5% ab",
    "北京大学生前来应聘",
    "",
    "  \t ",
    "他说的确实在理，我们的研究生命科学。",
    "中华人民共和国成立了 iPhone12 测试",
    "研" * 300,
]


# ---------------------------------------------------------------- models
def wordpiece_tokens() -> list[str]:
    """A small vocabulary: specials, characters, words and pieces."""
    words = ["hello", "world", "wonder", "##ful", "un", "##aff", "##able", "the", "quick", "brown", "fox",
             "jump", "##s", "over", "lazy", "dog", "123", "##45", "##4", "##5", "believ", "##ab", "##le",
             "abc", "##bc", "super", "##cal", "##if", "##rag", "##il", "##istic", "anti", "##dis", "##est",
             "##ab", "##lish", "##ment", "##arian", "##ism", "na", "##ïve", "caf", "##é", "rés", "##um",
             "東", "京", "北", "大学", "x", "##x", "##xx", "##xxx"]
    chars = sorted(set("".join(WP_TEXTS) + "abcdefghijklmnopqrstuvwxyz0123456789"))
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    for t in words + chars + ["##" + c for c in chars if not c.isspace()]:
        if t.strip() and t not in tokens:
            tokens.append(t)
    return tokens


def chinese_words() -> list[str]:
    return ["研究", "研究生", "生命", "起源", "北京", "北京大学", "大学", "大学生", "学生", "生前", "前来",
            "应聘", "他", "说", "的确", "确实", "实在", "在理", "我们", "科学", "中华", "人民", "共和国",
            "中华人民共和国", "成立", "测试", "研研", "研研研研研"]


def maxmatch_tokens() -> list[bytes]:
    """Every single byte, then words and pieces (some cutting characters)."""
    words = ["hello", " world", "wonder", "ful", "wo", "123", "45", "xx", "xxxx", "東京", "北京", "大学", "café",
             " 東", "naï"]
    return [bytes([b]) for b in range(256)] + [w.encode() for w in words] + [b"\xe4\xbd", b"\xf0\x9f\x98"]


def make_models(folder: Path) -> dict[str, Path]:
    """Save the fuzzed models in ``folder``; name -> path."""
    import segkit

    paths = {"wordpiece": folder / "wordpiece.segkit", "chinese": folder / "chinese.segkit",
             "maxmatch": folder / "maxmatch.segkit", "maxmatch-char": folder / "maxmatch-char.segkit"}
    segkit.WordPiece(wordpiece_tokens()).save(paths["wordpiece"])
    segkit.ChineseMaxMatch(chinese_words(), mode="bidirectional").save(paths["chinese"])
    segkit.MaxMatch(maxmatch_tokens()).save(paths["maxmatch"])
    segkit.MaxMatch(chinese_words() + ["a", "b", "ab", "北京大"], unit="char", direction="backward",
                    unknown=0).save(paths["maxmatch-char"])
    return paths


# ------------------------------------------------------------- mutation
def split_file(raw: bytes) -> tuple[int, dict, int]:
    """``(version, header, data_start)`` of a well-formed file."""
    _, version, hlen, _, _ = PREFIX.unpack_from(raw, 0)
    header = json.loads(raw[PREFIX.size : PREFIX.size + hlen])
    hend = PREFIX.size + hlen
    return version, header, hend + (-hend) % ALIGN


def assemble(version: int, header_raw: bytes, data: bytes) -> bytes:
    """A file with valid checksums around any header bytes and data."""
    head = PREFIX.pack(b"SEGKIT\n\x00", version, len(header_raw), zlib.crc32(header_raw), zlib.crc32(data))
    head += header_raw
    head += b"\0" * ((-len(head)) % ALIGN)
    return head + data


_ODD_VALUES = [0, 1, -1, -2, 2, 3, 255, 256, 257, -255, -256, 2**23 - 2, 2**23, 2**30, 2**31 - 1, -(2**31),
               10**7, 8388606]
_JSON_VALUES = [None, True, False, 0, -1, -5, 1, 2, 255, 2**31, 10**300, 1.5, float("1e308"), "", "x", "char",
                "backward", "word", [], [1], {}, {"a": 1}, "##", "[UNK]", "bidirectional"]


def _paths(obj, prefix=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


def mutate(raw: bytes, rng: random.Random) -> tuple[bytes, str]:
    """One mutated file (checksums recomputed) and a description of the change."""
    version, header, data_start = split_file(raw)
    data = bytearray(raw[data_start:])
    entries = json.loads(json.dumps(header["entries"]))  # as written, whatever header edits do
    notes = []
    for _ in range(1 if rng.random() < 0.8 else rng.randint(2, 5)):
        kind = rng.random()
        if kind < 0.72:
            # An int32 element of an array (automata mostly).
            names = [n for n, e in entries.items() if e["kind"] == "array" and e["dtype"] == "<i4" and e["nbytes"]]
            weights = [8 if "packed" in n and not n.startswith("rewrite") else 1 for n in names]
            name = rng.choices(names, weights)[0]
            e = entries[name]
            n = e["nbytes"] // 4
            i = rng.randrange(n)
            if "packed" in name and not name.startswith("rewrite") and n > 8 and rng.random() < 0.9:
                # A section chosen uniformly (char map pages and blocks,
                # transitions, failure links and pops, pool, parameters):
                # the char map would otherwise take most mutations.
                bounds = list(struct.unpack_from("<6i", data, e["offset"]))
                bounds.insert(1, bounds[0] + 4352)
                parts = [(a, b) for a, b in zip(bounds, bounds[1:]) if 0 <= a < b <= n]
                if parts:
                    a, b = rng.choice(parts)
                    i = rng.randrange(a, b)
            at = e["offset"] + 4 * i
            old = struct.unpack_from("<i", data, at)[0]
            r = rng.random()
            if r < 0.35:
                new = rng.choice(_ODD_VALUES)
            elif r < 0.6:
                new = old + rng.choice([-3, -2, -1, 1, 2, 3, 256, -256])
            elif r < 0.8:
                j = rng.randrange(n)
                new = struct.unpack_from("<i", data, e["offset"] + 4 * j)[0]
            else:
                new = rng.randrange(-(2**31), 2**31)
            new = (new + 2**31) % 2**32 - 2**31
            struct.pack_into("<i", data, at, new)
            notes.append(f"{name}[{i}]: {old} -> {new}")
        elif kind < 0.85:
            at = rng.randrange(len(data))
            bit = 1 << rng.randrange(8)
            data[at] ^= bit
            owner = next((n for n, e in entries.items() if e["offset"] <= at < e["offset"] + e["nbytes"]), "padding")
            notes.append(f"byte {at} ({owner}) ^= {bit:#x}")
        else:
            paths = [p for p in _paths(header) if p[0] != "data_nbytes" or rng.random() < 0.2]
            path = rng.choice(paths)
            obj = header
            for k in path[:-1]:
                obj = obj[k]
            if rng.random() < 0.2 and isinstance(obj, dict):
                del obj[path[-1]]
                notes.append(f"header {'/'.join(map(str, path))} removed")
            else:
                value = rng.choice(_JSON_VALUES)
                obj[path[-1]] = value
                notes.append(f"header {'/'.join(map(str, path))} = {value!r:.40}")
    header_raw = json.dumps(header, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return assemble(version, header_raw, bytes(data)), "; ".join(notes)


# ------------------------------------------------------------- checking
_ORIGINALS: dict[str, object] = {}


def check_model(path: str, original: str | None = None) -> str:
    """Load ``path`` and exercise what loaded: ``"rejected"`` (ModelFileError)
    or ``"loaded"`` (``"loaded-differs"`` when its output differs from the
    model at ``original``: a valid model, e.g. with other settings);
    AssertionError when a loaded model misbehaves; any other exception
    propagates (a failure)."""
    import segkit
    from segkit.models.files import ModelFileError

    try:
        model = segkit.load(path)
    except ModelFileError:
        return "rejected"
    if isinstance(model, segkit.WordPiece):
        _check_wordpiece(model)
    elif isinstance(model, segkit.MaxMatch):
        _check_maxmatch(model)
    else:
        _check_chinese(model)
    if original:
        if original not in _ORIGINALS:
            _ORIGINALS[original] = _outputs(segkit.load(original))
        if _outputs(model) != _ORIGINALS[original]:
            return "loaded-differs"
    return "loaded"


def _outputs(model) -> list:
    import segkit

    if isinstance(model, segkit.WordPiece):
        return [(e.ids, e.offsets) for e in model.encode_batch(WP_TEXTS)] + [model.tokenize(t) for t in WP_TEXTS]
    if isinstance(model, segkit.MaxMatch):
        texts = _mm_texts(model)
        try:
            return [model.encode_batch(texts), [model.encode_with_offsets(t) for t in texts]]
        except ValueError as e:  # a valid model lacking some byte (unknown="error")
            return [str(e)]
    return [model.cut_batch(ZH_TEXTS), model.tokenize_batch(ZH_TEXTS)]


def _check_wordpiece(wp) -> None:
    itos = wp.vocab.id_to_token
    specials = set(wp.special_token_list) | {wp.unk_token}
    batch = wp.encode_batch(WP_TEXTS)
    for text, enc in zip(WP_TEXTS, batch):
        assert enc.ids == wp.encode(text).ids, "encode and encode_batch disagree"
        assert wp.tokenize(text) == [itos[i] for i in enc.ids]
        prev = 0
        for i, (s, e) in zip(enc.ids, enc.offsets):
            tok = itos[i]
            assert isinstance(tok, str), f"id {i} has no token"
            assert prev <= s < e <= len(text), f"offsets {(s, e)} out of order or outside the text"
            prev = e
            if tok not in specials:
                piece = tok[2:] if tok.startswith("##") else tok
                assert text[s:e] == piece, f"token {tok!r} covers {text[s:e]!r}"
        wp.decode(enc.ids)
    for word in ("unaffable", "x" * 150, "abc"):
        assert all(isinstance(t, str) for t in wp.tokenize_word(word))


def _mm_texts(model) -> list:
    return [t for t in MM_TEXTS if isinstance(t, str) or model.unit == "byte"]


def _check_maxmatch(mm) -> None:
    texts = _mm_texts(mm)
    try:
        lists = mm.encode_batch(texts)
    except ValueError as e:
        assert "no token matches" in str(e), f"encode_batch raised {e}"
        return
    for text, ids in zip(texts, lists):
        assert mm.encode(text) == ids, "encode and encode_batch disagree"
        got, spans = mm.encode_with_offsets(text)
        assert got == ids, "encode and encode_with_offsets disagree"
        raw = text.encode() if isinstance(text, str) else text
        pos = 0
        for i, (s, e) in zip(ids, spans):
            tok = mm.id_to_token(i)
            assert tok is not None or i == mm.unknown, f"id {i} has no token"
            assert 0 <= s < e <= len(text) and s >= (pos if mm.unit == "char" or not isinstance(text, str) else 0), \
                f"offsets {(s, e)} out of order or outside the text"
            if mm.unit == "char":
                assert s == pos, "offsets do not tile the text"
                pos = e
                if i != mm.unknown:
                    assert text[s:e] == tok, f"token {tok!r} covers {text[s:e]!r}"
            elif not isinstance(text, str):
                assert s == pos and raw[s:e] == tok, f"token {tok!r} covers {raw[s:e]!r}"
                pos = e
        if mm.unknown not in ids:
            assert mm.decode_bytes(ids) == raw, "the tokens do not spell the text"


def _check_chinese(seg) -> None:
    batch = seg.cut_batch(ZH_TEXTS)
    toks = seg.tokenize_batch(ZH_TEXTS)
    for text, words, triples in zip(ZH_TEXTS, batch, toks):
        assert words == seg.cut(text), "cut and cut_batch disagree"
        assert "".join(words) == "".join(text.split()), "the words do not spell the text"
        for w, s, e in triples:
            assert text[s:e] == w, f"word {w!r} has offsets {(s, e)}"


def worker() -> None:
    """Check the files named on stdin, one per line; answer a verdict line each."""
    os.environ.setdefault("SEGKIT_CACHE_DIR", "off")
    for line in sys.stdin:
        path, _, original = line.rstrip("\n").partition("\t")
        try:
            verdict = check_model(path, original or None)
        except AssertionError as e:
            verdict = f"wrong: {e}"
        except BaseException as e:  # noqa: BLE001 - every other exception is a finding
            verdict = f"exception: {type(e).__name__}: {str(e)[:300]}"
        sys.stdout.write(verdict.replace("\n", " ") + "\n")
        sys.stdout.flush()


class Worker:
    """A subprocess running :func:`worker`; restarted after a crash or hang."""

    def __init__(self, timeout: float = 60.0):
        self.timeout = timeout
        self.proc = None

    def _start(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import fuzz_models; fuzz_models.worker()",
             str(Path(__file__).resolve().parent)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )

    def check(self, path: str, original: str = "") -> str:
        """The verdict on one file: ``rejected``, ``loaded``,
        ``loaded-differs`` (from the model at ``original``), ``wrong: ...``,
        ``exception: ...``, ``crash: <signal or code>`` or ``hang``."""
        if self.proc is None:
            self._start()
        proc = self.proc
        try:
            proc.stdin.write(f"{path}\t{original}\n")
            proc.stdin.flush()
        except BrokenPipeError:
            pass
        ready, _, _ = select.select([proc.stdout], [], [], self.timeout)
        line = proc.stdout.readline() if ready else None
        if line:
            return line.rstrip("\n")
        if line is None:
            proc.kill()
            proc.wait()
            self.proc = None
            return "hang"
        code = proc.wait()
        self.proc = None
        return f"crash: exit {code}"

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
            self.proc = None


def run(n: int, seed: int, folder: Path, timeout: float = 60.0, log=print) -> dict[str, int]:
    """Fuzz both models with ``n`` mutations in all; counts by outcome."""
    paths = make_models(folder)
    originals = {name: p.read_bytes() for name, p in paths.items()}
    rng = random.Random(seed)
    counts = {"mutations": 0, "rejected": 0, "loaded": 0, "loaded-differs": 0, "wrong": 0, "exception": 0,
              "crash": 0, "hang": 0}
    differs = 0
    w = Worker(timeout)
    try:
        for k in range(n):
            name = sorted(originals)[k % len(originals)]
            raw, note = mutate(originals[name], rng)
            target = folder / f"mutant-{name}.segkit"
            target.write_bytes(raw)
            verdict = w.check(str(target), str(paths[name]))
            key = verdict.split(":")[0]
            counts["mutations"] += 1
            counts[key] = counts.get(key, 0) + 1
            if key == "loaded-differs" and differs < 20:
                differs += 1
                log(f"mutation {k} ({name}; {note}): loads as a model with other output")
            if key not in ("rejected", "loaded", "loaded-differs"):
                keep = folder / f"finding-{k}-{name}.segkit"
                keep.write_bytes(raw)
                log(f"mutation {k} ({name}; {note}): {verdict}  [kept as {keep}]")
    finally:
        w.close()
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutations", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds one file may take before it counts as a hang")
    ap.add_argument("--keep", help="folder for the models and any findings (default: a temporary one)")
    args = ap.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="segkit-fuzz-"))
    folder.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SEGKIT_CACHE_DIR", "off")
    sys.path.insert(0, str(ROOT))
    t0 = time.perf_counter()
    counts = run(args.mutations, args.seed, folder, args.timeout)
    took = time.perf_counter() - t0
    print(json.dumps(counts))
    print(f"{counts['mutations']} mutations in {took:.0f} s: {counts['rejected']} rejected with ModelFileError, "
          f"{counts['loaded'] + counts['loaded-differs']} loaded and behaved ({counts['loaded-differs']} of them with "
          f"output other than the original's); wrong output {counts['wrong']}, other exceptions "
          f"{counts['exception']}, crashes {counts['crash']}, hangs {counts['hang']}")
    return 1 if counts["wrong"] or counts["exception"] or counts["crash"] or counts["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
