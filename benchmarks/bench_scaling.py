"""Linear scaling on a pathological vocabulary: time per character vs word length.

Vocabulary: ``[UNK]``, ``a``, ``aa``, ..., ``a``*20 and ``##a`` .. ``##``+``a``*20.
Input: one word ``"a" * L`` for L = 10^2 .. 10^6 (no pre-tokenization).

Greedy longest-match-first from the end of the word (the original BERT
algorithm) tries every end position before it finds a 20-character piece, so
its work grows much faster than L; LinMaxMatch reads each character a bounded
number of times (amortized), so its time per character should be flat.

Systems
-------
* ``segkit tokenize_word`` -- one call per word (includes a fixed per-call cost);
* ``segkit kernel (amortized)`` -- ``automaton.segment_batch`` over copies of the
  word totalling ~10^6 characters (``pretokenize=False``, ids only), which
  spreads the fixed per-call cost so the per-character cost shows;
* ``naive Python`` -- written here: for each start, try ends from the end of the
  word down to start+1 (BERT's reference loop);
* ``HF tokenizers`` -- ``tokenizer.model.tokenize(word)`` with
  ``max_input_chars_per_word=10**7``.

segkit's lengths are timed in the same interleaved rounds (best of at least
7).  A peer is skipped at a length where its time, extrapolated from the
previous lengths, would exceed ~20 s.  Writes a log-log plot to docs/_static/scaling.png.

Second part: one text, normalization on
---------------------------------------
One realistic text of L = 10^2 .. 10^7 characters (the multilingual corpus
joined by spaces and repeated as needed; the bundled sample of it without
``../shared/data``) through the normalizing paths:
``WordPiece.from_pretrained("bert-base-uncased")`` ``encode`` and
``encode_batch`` (lowercasing, accent stripping, control characters, special
tokens, offsets mapped back), the ``tf_text`` flavour (UTF-8 byte offsets)
and ``ChineseMaxMatch().cut``.  Each (path, L) runs in a fresh subprocess
that warms up, then reports its best time per call and its peak resident
memory over its baseline (``VmHWM`` - ``VmRSS`` from ``/proc/self/status``:
Numba's allocations are invisible to tracemalloc).  Linear means ns/char
and bytes/char flat in L; bytes/char is shown from L = 10^5 (below, a
call's peak is a few pages, mostly per-thread scratch kept from call to
call).  Short texts are timed over distinct texts of L characters covering
10^6 characters (the same short text over and over would be learnt by the
branch predictor).  Linux only (``/proc``).

Run from the repository root: ``python benchmarks/bench_scaling.py [--quick]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import math
import time
from pathlib import Path

import segkit

MAX_PIECE = 20
TIME_CAP = 20.0  # seconds per call beyond which a system is not run
TARGET_FLAT = 2.0  # max/min of segkit's ns/char across lengths
PLOT = C.REPO_ROOT / "docs" / "_static" / "scaling.png"


def pathological_vocab() -> list[str]:
    return ["[UNK]"] + ["a" * k for k in range(1, MAX_PIECE + 1)] + ["##" + "a" * k for k in range(1, MAX_PIECE + 1)]


def naive_wordpiece(word: str, vocab: dict[str, int], unk_id: int, prefix: str = "##") -> list[int]:
    """Greedy longest-match-first as in BERT's reference code: at each start,
    try every end from the end of the word down to start + 1."""
    ids: list[int] = []
    start, n = 0, len(word)
    while start < n:
        end = n
        found = -1
        while start < end:
            piece = word[start:end]
            if start > 0:
                piece = prefix + piece
            tid = vocab.get(piece)
            if tid is not None:
                found = tid
                break
            end -= 1
        if found < 0:
            return [unk_id]
        ids.append(found)
        start = end
    return ids


def predicted(history: list[tuple[int, float]], length: int) -> float:
    """Seconds for ``length`` extrapolated from measured (length, seconds)
    (the last two points' slope on a log-log scale; cubic from one point)."""
    if not history:
        return 0.0
    (l1, t1) = history[-1]
    k = 3.0
    if len(history) >= 2:
        l0, t0 = history[-2]
        if t0 > 0 and t1 > 0:
            k = max(1.0, math.log(t1 / t0) / math.log(l1 / l0))
    return t1 * (length / l1) ** k


def measure_point(fns: dict, repeat: int, *, warmup: bool = True) -> dict[str, float]:
    """Best seconds per call of each function at one length.

    With ``warmup``, each is first called once untimed (Numba may load or
    compile a kernel on a first call).  Then each is called once, timed, for
    calibration: a function slower than 2 s keeps that single time; the
    others are timed in ``repeat`` interleaved rounds of enough calls for
    ~50 ms each, keeping the best.
    """
    if warmup:
        for fn in fns.values():
            fn()
    first = {}
    for name, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        first[name] = time.perf_counter() - t0
    fast = {n: fn for n, fn in fns.items() if first[n] <= 2.0}
    out = {n: first[n] for n in fns if n not in fast}
    if fast:
        number = {n: max(1, int(0.05 / max(first[n], 1e-7))) for n in fast}
        times = C.time_rounds(fast, repeat=repeat, warmup=0, number=number, verbose=False)
        out.update({n: min(min(ts), first[n]) for n, ts in times.items()})
    return out


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0])
    lengths = [10**2, 10**3, 10**4, 10**5] if args.quick else [10**2, 10**3, 10**4, 10**5, 10**6]
    tokenizers = C.import_tokenizers()

    vocab_list = pathological_vocab()
    vocab = {t: i for i, t in enumerate(vocab_list)}
    wp = segkit.WordPiece(vocab_list, max_input_chars_per_word=10**7)
    wp.tokenize_word("aaa")  # load or compile the kernels before anything is timed
    wp.automaton.segment_batch(["aaa"], offsets=False, pretokenize=False)
    unk = vocab["[UNK]"]
    tok = None
    if tokenizers is not None:
        from tokenizers import Tokenizer, models

        tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", continuing_subword_prefix="##",
                                         max_input_chars_per_word=10**7))

    def seg_amortized(word: str):
        copies = max(1, 10**6 // len(word))
        batch = [word] * copies
        return lambda: wp.automaton.segment_batch(batch, offsets=False, pretokenize=False)

    systems = {
        "segkit tokenize_word": lambda w: (lambda: wp.tokenize_word(w)),
        "segkit kernel (amortized)": seg_amortized,
        "naive Python": lambda w: (lambda: naive_wordpiece(w, vocab, unk)),
    }
    if tok is not None:
        systems["HF tokenizers"] = lambda w: (lambda: tok.model.tokenize(w))

    print(f"vocabulary: [UNK], a..a*{MAX_PIECE}, ##a..##a*{MAX_PIECE}; words 'a'*L; "
          f"cap ~{TIME_CAP:.0f} s per call")

    ns_char: dict[str, dict[int, float | None]] = {n: {} for n in systems}
    mismatches: list[str] = []

    def chars_timed(name: str, L: int) -> int:
        return L * max(1, 10**6 // L) if name == "segkit kernel (amortized)" else L

    def check(name: str, L: int) -> None:
        """Every system must give the expected greedy split a*20, ##a*20, ..."""
        word = "a" * L
        expected = [MAX_PIECE if i == 0 else 2 * MAX_PIECE for i in range(L // MAX_PIECE)]
        rem = L % MAX_PIECE
        if rem:
            expected.append(rem if L < MAX_PIECE else MAX_PIECE + rem)
        if name == "segkit tokenize_word":
            got = [vocab[t] for t in wp.tokenize_word(word)]
        elif name == "segkit kernel (amortized)":
            got = wp.automaton.segment_batch([word], offsets=False, pretokenize=False)[0].tolist()
        elif name == "naive Python":
            got = naive_wordpiece(word, vocab, unk)
        else:
            got = [t.id for t in tok.model.tokenize(word)]
        if got != expected:
            mismatches.append(f"{name} L={L}: {len(got)} tokens, first {got[:5]}, expected {expected[:5]}")

    # segkit: every length in the same interleaved rounds, so that a burst of
    # outside load does not masquerade as non-linearity.
    seg_names = [n for n in systems if n.startswith("segkit")]
    fns = {(n, L): systems[n]("a" * L) for L in lengths for n in seg_names}
    fns["call"] = lambda: wp.tokenize_word("a")  # the fixed cost of one call
    print(f"segkit, all lengths interleaved, best of {max(7, args.repeat)} rounds ...", flush=True)
    secs = measure_point(fns, max(7, args.repeat))
    t_call = secs.pop("call")
    print(f"segkit fixed cost per tokenize_word call (word 'a'): {t_call * 1e6:.2f} us")
    for (n, L), sec in secs.items():
        ns_char[n][L] = sec / chars_timed(n, L) * 1e9
        check(n, L)

    # peers: length by length, until the extrapolated time exceeds the cap
    for n in [n for n in systems if n not in seg_names]:
        history: list[tuple[int, float]] = []
        line = []
        for L in lengths:
            guess = predicted(history, L)
            if guess > TIME_CAP:
                ns_char[n][L] = None
                line.append(f"L={L:,} skipped (~{guess:,.0f} s predicted)")
                continue
            sec = measure_point({n: systems[n]("a" * L)}, args.repeat, warmup=False)[n]
            history.append((L, sec))
            ns_char[n][L] = sec / L * 1e9
            line.append(f"L={L:,} {sec:.3g}s")
            check(n, L)
        print(f"{n}: " + "; ".join(line), flush=True)

    names = list(systems)
    rows = [[L] + [ns_char[n].get(L) for n in names] for L in lengths]
    C.print_table(["L (chars)"] + [f"{n} ns/char" for n in names], rows,
                  title="time per character (best of repetitions; '-' = skipped, over the time cap)")

    def flatness(name: str) -> float:
        vals = [v for v in ns_char[name].values() if v is not None]
        return max(vals) / min(vals)

    f_kernel = flatness("segkit kernel (amortized)")
    f_call = flatness("segkit tokenize_word")
    big = [ns_char["segkit tokenize_word"][L] for L in lengths if L >= 1000]
    f_call_big = max(big) / min(big)
    print(f"\nsegkit kernel (amortized) ns/char max/min over L=1e2..1e{int(math.log10(lengths[-1]))}: "
          f"{f_kernel:.2f}x  (target flat within {TARGET_FLAT:.0f}x: "
          f"{C.verdict(f_kernel, TARGET_FLAT, at_least=False)})")
    print(f"segkit tokenize_word ns/char max/min, all L: {f_call:.2f}x "
          f"(includes the fixed {t_call * 1e6:.1f} us per call, which dominates at L=100); "
          f"L >= 1000: {f_call_big:.2f}x")
    for n in names:
        if n.startswith("segkit"):
            continue
        common = [L for L in lengths if ns_char[n].get(L) is not None]
        if common:
            L = common[-1]
            print(f"at L={L:,}: {n} {ns_char[n][L]:,.0f} ns/char = "
                  f"{ns_char[n][L] / ns_char['segkit tokenize_word'][L]:,.0f}x segkit tokenize_word")
    print(f"correctness (all systems vs the expected split a*20, ##a*20, ...): "
          f"{'all equal' if not mismatches else f'{len(mismatches)} MISMATCHES'}")
    for m in mismatches:
        print("  " + m)

    plotted = plot(lengths, ns_char, t_call)
    C.save_results(
        "bench_scaling",
        {
            "lengths": lengths,
            "ns_per_char": {n: {str(L): v for L, v in d.items()} for n, d in ns_char.items()},
            "segkit_call_overhead_us": t_call * 1e6,
            "flatness_kernel": f_kernel,
            "flatness_tokenize_word": f_call,
            "flatness_tokenize_word_L_ge_1000": f_call_big,
            "target_flat": TARGET_FLAT,
            "mismatches": mismatches,
            "plot": str(plotted) if plotted else None,
            "normalized_one_text": normalized_curve(args),
        },
        args,
    )


# ------------------------------------------------- one text, normalization on
SAMPLE = C.REPO_ROOT / "tests" / "data" / "multilingual-sample.jsonl"
LINEAR_PATHS = ("encode", "encode_batch", "tf_text encode", "chinese cut")
#: bytes/char is reported from this length on: below, a call's peak is a
#: few pages and mostly scratch segkit keeps per thread from call to call.
MEMORY_FROM = 10**5

_CURVE_CHILD = r"""
import ctypes, gc, json, random, sys, time
sys.path.insert(0, {root!r})
import segkit

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024

path, n = {path!r}, {n}
with open({corpus!r}, encoding="utf-8") as fh:
    lines = [json.loads(line)["text"] for line in fh if line.strip()]
random.Random(0).shuffle(lines)  # every length sees the same mix of languages
unit = " ".join(lines)
lines = None
# Timed: distinct texts of n characters covering at least 10^6 characters,
# so that a short text is not the same few sentences over and over (the
# branch predictor would learn them); memory: the first of them.
count = max(1, 10**6 // n)
texts = [(unit * ((count * n) // len(unit) + 1))[i * n : (i + 1) * n] for i in range(count)]
unit = None
if path == "chinese cut":
    fn = segkit.ChineseMaxMatch().cut
elif path == "tf_text encode":
    fn = segkit.WordPiece.bert({root!r} + "/vocabularies/bert-base-uncased.txt", flavour="tf_text").encode
else:
    wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
    fn = wp.encode if path == "encode" else (lambda t: wp.encode_batch([t]))
fn(texts[0][:1000])
fn(texts[0][:70000])  # every kernel loaded, the long-text paths included
gc.collect()
try:
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # baseline: memory in use, not kept by the allocator
except (OSError, AttributeError):
    pass
base = status("VmRSS")
try:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # peak := now (else it includes the warm-up's: lenient)
except OSError:
    pass
result = fn(texts[0])
peak = status("VmHWM") - base
result = None
best = float("inf")
for _ in range(5):
    t0 = time.perf_counter()
    for t in texts:
        result = fn(t)
    best = min(best, (time.perf_counter() - t0) / count)
    result = None
print(json.dumps({{"peak_bytes": peak, "seconds": best, "texts": count}}))
"""


def normalized_curve(args) -> dict | None:
    """ns/char and bytes/char of one text of 10^2 .. 10^7 characters with
    BERT normalization, each (path, length) in its own subprocess."""
    if not Path("/proc/self/status").is_file():
        print("SKIP one-text curve: peak memory is read from /proc/self/status (Linux only)")
        return None
    corpus = C.CORPUS if C.CORPUS.is_file() else SAMPLE
    lengths = [10**k for k in range(2, 7 if args.quick else 8)]
    print(f"\none text of L characters, normalization on (bert-base-uncased; text: {corpus.name} shuffled, joined); "
          "a subprocess per path and length ...", flush=True)
    figures: dict[str, dict[int, dict]] = {p: {} for p in LINEAR_PATHS}
    for L in lengths:
        for path in LINEAR_PATHS:
            code = _CURVE_CHILD.format(root=str(C.REPO_ROOT), path=path, n=L, corpus=str(corpus))
            r = C.run_child(code)
            figures[path][L] = {"ns_per_char": r["seconds"] / L * 1e9, "bytes_per_char": r["peak_bytes"] / L,
                                "peak_mb": r["peak_bytes"] / 1e6, "seconds": r["seconds"]}
        print(f"  L={L:,}: " + "; ".join(
            f"{p} {figures[p][L]['seconds'] * 1e3:.3g} ms, {figures[p][L]['peak_mb']:.1f} MB" for p in LINEAR_PATHS),
            flush=True)
    rows = []
    for L in lengths:
        row: list = [L]
        for p in LINEAR_PATHS:
            f = figures[p][L]
            row += [f["ns_per_char"], f["bytes_per_char"] if L >= MEMORY_FROM else None]
        rows.append(row)
    headers = ["L (chars)"] + [f"{p} {u}" for p in LINEAR_PATHS for u in ("ns/char", "B/char")]
    C.print_table(headers, rows, title="one text, normalization on: time and peak memory per character "
                  f"(B/char from L={MEMORY_FROM:,}; '-' = below)")
    flat = {}
    for p in LINEAR_PATHS:
        ns = [figures[p][L]["ns_per_char"] for L in lengths if L >= 10**3]
        mem = [figures[p][L]["bytes_per_char"] for L in lengths if L >= MEMORY_FROM]
        flat[p] = {"ns_per_char_max_over_min_L_ge_1000": max(ns) / min(ns),
                   "bytes_per_char_max_over_min": max(mem) / max(min(mem), 1e-9)}
        print(f"{p}: ns/char max/min (L >= 1,000) {flat[p]['ns_per_char_max_over_min_L_ge_1000']:.2f}x; "
              f"bytes/char max/min (L >= {MEMORY_FROM:,}) {flat[p]['bytes_per_char_max_over_min']:.2f}x "
              f"(target flat within {TARGET_FLAT:.0f}x: "
              f"{C.verdict(max(flat[p].values()), TARGET_FLAT, at_least=False)})")
    return {
        "lengths": lengths,
        "text": corpus.name,
        "paths": {p: {str(L): f for L, f in d.items()} for p, d in figures.items()},
        "flatness": flat,
        "memory_from": MEMORY_FROM,
    }


def plot(lengths, ns_char, t_call):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP plot: matplotlib is not installed")
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    styles = {
        "segkit tokenize_word": dict(marker="o", color="C0"),
        "segkit kernel (amortized)": dict(marker="s", color="C0", linestyle="--"),
        "naive Python": dict(marker="^", color="C3"),
        "HF tokenizers": dict(marker="D", color="C1"),
    }
    for name, d in ns_char.items():
        pts = [(L, v) for L, v in d.items() if v is not None]
        if pts:
            xs, ys = zip(*pts)
            ax.plot(xs, ys, label=name, **styles.get(name, {}))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("word length L (characters), word = 'a' * L")
    ax.set_ylabel("time per character (ns)")
    ax.set_title("WordPiece on a pathological vocabulary (a..a*20, ##a..##a*20)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PLOT)
    plt.close(fig)
    print(f"plot written to {PLOT.relative_to(C.REPO_ROOT)}")
    return PLOT


if __name__ == "__main__":
    main()
