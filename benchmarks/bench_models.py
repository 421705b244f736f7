"""Saved models: file sizes, load time, pickling, warm start and memory.

Two models are saved to temporary files (segkit's model cache is pointed at
an empty temporary folder, ``SEGKIT_CACHE_DIR``, so nothing is reused from
earlier runs): ``WordPiece.from_pretrained("bert-base-multilingual-cased")``
(119,547 tokens, BERT normalization and template) and the default
``ChineseMaxMatch()`` (jieba's dictionary, 349,045 words, forward mode).

(a) file sizes, next to the sources they replace (vocab.txt, HF
    tokenizer.json, jieba's dict.txt, the bundled marisa-trie dictionary).
(b) ``segkit.load(path)`` in this process, best of 10 (target <= 50 ms);
    also with ``verify=False`` (no checksum pass), and
    ``from_pretrained`` / ``ChineseMaxMatch()`` served from the model cache.
(c) pickle round trip ``pickle.loads(pickle.dumps(model))``, best of 10
    (target <= 50 ms), with the pickled size; for the model as built (first
    ``from_pretrained`` with an empty cache) and as returned by ``segkit.load``
    (what ``from_pretrained`` returns once the cache holds the model).
(d) warm start of a fresh interpreter: ``import segkit`` + ``segkit.load(file)``
    + one ``encode`` / ``cut`` of a sentence, timed inside the child from just
    before ``import segkit``; best of 5 after one unmeasured run (which fills
    numba's kernel cache if needed); target <= 0.5 s.
    Also, for comparison, the floor of any Numba program: a fresh
    interpreter importing NumPy and Numba and calling one cached five-line
    kernel (best of 5 after one unmeasured run).
(e) memory: resident set size (``VmRSS`` of ``/proc/self/status``) that the
    loaded model adds, in a fresh interpreter: measured after ``import
    segkit`` and after a tiny saved model of the same kind has been loaded
    and used (so numba's runtime and the compiled kernels are counted
    separately), then after ``load`` + first call; target <= 15 MiB.  Also
    split into private (``RssAnon``) and file-backed pages (``RssFile``: the
    memory-mapped model file, shared and reclaimable), and with
    ``load(verify=False)`` (no checksum pass over the file).  Peers,
    each in a fresh interpreter: jieba (``initialize()`` + first ``lcut``
    after ``import jieba``) and HF ``Tokenizer.from_file(tokenizer.json)`` +
    first ``encode`` (after ``import tokenizers``).  Min of 2 runs.
(f) build from scratch, in this process, best of 3: ``WordPiece(vocab.txt)``
    and ``ChineseMaxMatch(words)`` of the default dictionary's 349,045 words
    (plus its first ``cut``, which builds the automaton).

Results: ``benchmarks/results/bench_models.json``.
Run from the repository root: ``python benchmarks/bench_models.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import os
import pickle
import tempfile
import time
from pathlib import Path

TARGET_LOAD = 0.050
TARGET_PICKLE = 0.050
TARGET_WARM = 0.5
TARGET_RSS_MIB = 15.0
WP_SAMPLE = "Hello, world! Fast WordPiece tokenization: 東京は日本の首都です. Привет, мир!"
ZH_SAMPLE = "他说：“iPhone 15 的售价是7999元，比去年上涨了3.5%。”我来到北京清华大学。"
HF_JSON = C.DATA_DIR / "vocab" / "bert-base-multilingual-cased.tokenizer.json"
JIEBA_DICT = C.DATA_DIR / "dict" / "jieba-dict.txt"

WARM_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {repo!r})
import segkit
t1 = time.perf_counter()
m = segkit.load({path!r})
t2 = time.perf_counter()
out = m.{call}({sample!r})
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "load": t2 - t1, "first_call": t3 - t2, "module": segkit.__file__,
                  "model": type(m).__name__, "n": len(out)}}))
"""

#: The floor any Numba program has: a module with one five-line cached
#: kernel, imported and called in a fresh interpreter (the kernel's file is
#: written to a temporary folder, whose __pycache__ then holds its cache).
FLOOR_KERNEL = """
from numba import njit


@njit(cache=True, nogil=True)
def total(a):
    s = 0
    for i in range(a.size):
        s += a[i]
    return s
"""

FLOOR_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import numba
t1 = time.perf_counter()
sys.path.insert(0, {folder!r})
from floor_kernel import total
total(np.arange(3, dtype=np.int32))
t2 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "first_call": t2 - t1, "numba": numba.__version__}}))
"""

MEMORY_CHILD = r"""
import json, sys
sys.path.insert(0, {repo!r})

def rss_kib():
    # VmRSS = RssAnon (private memory) + RssFile (mapped file pages) + RssShmem
    out = {{}}
    with open("/proc/self/status") as f:
        for line in f:
            key = line.split(":")[0]
            if key in ("VmRSS", "RssAnon", "RssFile"):
                out[key] = int(line.split()[1])
    if "VmRSS" not in out:
        raise RuntimeError("no VmRSS in /proc/self/status")
    return out

which = {which!r}
start = rss_kib()
if which in ("wordpiece", "chinese"):
    import segkit
    after_import = rss_kib()
    call = "encode" if which == "wordpiece" else "cut"
    sample = {wp_sample!r} if which == "wordpiece" else {zh_sample!r}
    tiny = segkit.load({tiny!r})        # numba runtime + the kernels the big model will use
    getattr(tiny, call)(sample)
    del tiny
    runtime = rss_kib()
    m = segkit.load({path!r}, verify={verify!r})
    after_load = rss_kib()
    getattr(m, call)(sample)
    loaded = rss_kib()
    for i in range(3):
        getattr(m, call)(sample)
    again = rss_kib()
elif which == "jieba":
    import logging
    import jieba
    jieba.setLogLevel(logging.WARNING)
    after_import = runtime = rss_kib()
    jieba.initialize()
    after_load = rss_kib()
    jieba.lcut({zh_sample!r}, HMM=False)
    loaded = again = rss_kib()
elif which == "hf":
    import tokenizers
    after_import = runtime = rss_kib()
    tok = tokenizers.Tokenizer.from_file({hf_json!r})
    after_load = rss_kib()
    tok.encode({wp_sample!r})
    loaded = again = rss_kib()
print(json.dumps({{"start": start, "after_import": after_import, "runtime": runtime, "after_load": after_load,
                  "loaded": loaded, "again": again}}))
"""


def mib(n: float) -> float:
    return n / 2**20


def output(model, m: dict):
    """What a model gives for its sample (ids and offsets, or words)."""
    if m["call"] == "encode":
        e = model.encode(m["sample"])
        return e.ids, e.offsets
    return model.cut(m["sample"])


def best_time(fn, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=10, quick_repeat=5)
    n_child = 3 if args.quick else 5
    n_build = 2 if args.quick else 3
    tmp = tempfile.TemporaryDirectory(prefix="segkit-bench-models-")
    root = Path(tmp.name)
    os.environ["SEGKIT_CACHE_DIR"] = str(root / "cache")  # empty: nothing reused from earlier runs
    env = dict(os.environ)
    import segkit

    results: dict = {"targets": {"load_s": TARGET_LOAD, "pickle_s": TARGET_PICKLE, "warm_start_s": TARGET_WARM,
                                 "rss_mib": TARGET_RSS_MIB}}  # fmt: skip
    models: dict = {}
    t0 = time.perf_counter()
    wp = segkit.WordPiece.from_pretrained("bert-base-multilingual-cased")
    t_wp = time.perf_counter() - t0
    wp.encode(WP_SAMPLE)
    models["wordpiece"] = {"obj": wp, "path": root / "multilingual-cased.segkit", "call": "encode",
                           "sample": WP_SAMPLE, "label": "WordPiece bert-base-multilingual-cased"}  # fmt: skip
    print(f"WordPiece.from_pretrained('bert-base-multilingual-cased') with an empty cache: {t_wp:.2f}s")
    zh = None
    try:
        cls = segkit.ChineseMaxMatch
    except AttributeError as e:
        print(f"SKIP ChineseMaxMatch: plugin not available ({e})")
    else:
        t0 = time.perf_counter()
        zh = cls()
        zh.cut(ZH_SAMPLE)
        print(f"ChineseMaxMatch() (default dictionary) with an empty cache: {time.perf_counter() - t0:.2f}s")
        models["chinese"] = {"obj": zh, "path": root / "chinese-default.segkit", "call": "cut",
                             "sample": ZH_SAMPLE, "label": "ChineseMaxMatch default (forward)"}  # fmt: skip
    for m in models.values():
        m["obj"].save(m["path"])
        m["size"] = m["path"].stat().st_size
    # tiny models of the same kinds, for the memory baseline
    tiny_wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##b"], lowercase=False)
    tiny_wp.save(root / "tiny-wp.segkit")
    if zh is not None:
        tiny_zh = segkit.ChineseMaxMatch(["研究"])
        tiny_zh.cut(ZH_SAMPLE)
        tiny_zh.save(root / "tiny-zh.segkit")

    # -------------------------------------------------------------- (a) sizes
    print("\n(a) file sizes")
    rows = [[m["label"] + " .segkit", mib(m["size"])] for m in models.values()]
    others = {
        "bert-base-multilingual-cased vocab.txt": C.MULTILINGUAL_VOCAB,
        "HF tokenizer.json (multilingual cased)": HF_JSON,
        "jieba dict.txt": JIEBA_DICT,
        "segkit bundled jieba-dict.marisa": C.VOCAB_DIR / "jieba-dict.marisa",
    }
    sizes = {m["label"]: m["size"] for m in models.values()}
    for label, path in others.items():
        if path.is_file():
            rows.append([label, mib(path.stat().st_size)])
            sizes[label] = path.stat().st_size
    C.print_table(["file", "MiB"], rows)
    results["file_sizes_bytes"] = sizes

    # --------------------------------------------------------------- (b) load
    print(f"\n(b) segkit.load(path) in this process, best of {args.repeat} (after one untimed load)")
    load_res = {}
    rows = []
    for key, m in models.items():
        t = best_time(lambda: segkit.load(m["path"]), args.repeat)
        tnv = best_time(lambda: segkit.load(m["path"], verify=False), args.repeat)
        loaded = segkit.load(m["path"])
        same = output(loaded, m) == output(m["obj"], m)
        load_res[key] = {"seconds": t, "seconds_no_verify": tnv, "target": TARGET_LOAD, "target_met": t <= TARGET_LOAD,
                         "same_output": bool(same)}  # fmt: skip
        rows.append([m["label"], t * 1e3, tnv * 1e3, C.verdict(t, TARGET_LOAD, at_least=False), same])
    t_pre = best_time(lambda: segkit.WordPiece.from_pretrained("bert-base-multilingual-cased"), args.repeat)
    rows.append(["WordPiece.from_pretrained (from the model cache)", t_pre * 1e3, None, None, None])
    load_res["from_pretrained_cached_seconds"] = t_pre
    if zh is not None:
        t_zh = best_time(lambda: segkit.ChineseMaxMatch(), args.repeat)
        rows.append(["ChineseMaxMatch() (from the model cache)", t_zh * 1e3, None, None, None])
        load_res["chinese_default_cached_seconds"] = t_zh
    C.print_table(["model", "load ms", "verify=False ms", f"<= {TARGET_LOAD * 1e3:.0f} ms", "same output"], rows)
    results["load"] = load_res

    # ------------------------------------------------------------- (c) pickle
    print(f"\n(c) pickle round trip pickle.loads(pickle.dumps(model)), best of {args.repeat}")
    pk = {}
    rows = []
    cases = []
    for key, m in models.items():
        cases.append((key, m, m["obj"], m["label"] + " (as built)"))
        cases.append((key + "_loaded", m, segkit.load(m["path"]), m["label"] + " (from segkit.load)"))
    for key, m, obj, label in cases:
        t = best_time(lambda: pickle.loads(pickle.dumps(obj)), args.repeat)
        td = best_time(lambda: pickle.dumps(obj), args.repeat)
        blob = pickle.dumps(obj)
        back = pickle.loads(blob)
        same = output(back, m) == output(obj, m)
        pk[key] = {"seconds": t, "dumps_seconds": td, "bytes": len(blob), "target": TARGET_PICKLE,
                   "target_met": t <= TARGET_PICKLE, "same_output": bool(same)}  # fmt: skip
        rows.append([label, t * 1e3, td * 1e3, mib(len(blob)), C.verdict(t, TARGET_PICKLE, at_least=False),
                     same])  # fmt: skip
    C.print_table(["model", "dumps+loads ms", "dumps ms", "pickled MiB", f"<= {TARGET_PICKLE * 1e3:.0f} ms",
                   "same output"], rows)  # fmt: skip
    results["pickle"] = pk

    # --------------------------------------------------------- (d) warm start
    print(f"\n(d) warm start in a fresh interpreter: import segkit + segkit.load + first call "
          f"(one unmeasured run, then best of {n_child})")
    warm = {}
    for key, m in models.items():
        code = WARM_CHILD.format(repo=str(C.REPO_ROOT), path=str(m["path"]), call=m["call"], sample=m["sample"])
        first = C.run_child(code, env)
        runs = [C.run_child(code, env) for _ in range(n_child)]
        for r in runs + [first]:
            r["total"] = r["import"] + r["load"] + r["first_call"]
        b = min(runs, key=lambda r: r["total"])
        met = b["total"] <= TARGET_WARM
        warm[key] = {"best": b, "runs": runs, "unmeasured_first_run": first, "target": TARGET_WARM,
                     "target_met": met}  # fmt: skip
        print(f"  {m['label']}: import {b['import']:.3f}s + load {b['load']:.3f}s + first {m['call']} "
              f"{b['first_call']:.3f}s = {b['total']:.3f}s (target <= {TARGET_WARM}s: "
              f"{'MET' if met else 'NOT MET'}); child wall time incl. interpreter start {b['wall']:.2f}s; "
              f"all runs: {', '.join('%.3f' % r['total'] for r in runs)}")
    results["warm_start"] = warm
    folder = root / "numba-floor"
    folder.mkdir()
    (folder / "floor_kernel.py").write_text(FLOOR_KERNEL)
    code = FLOOR_CHILD.format(folder=str(folder))
    C.run_child(code, env)  # unmeasured: compiles the kernel into its cache
    runs = [C.run_child(code, env) for _ in range(n_child)]
    for r in runs:
        r["total"] = r["import"] + r["first_call"]
    b = min(runs, key=lambda r: r["total"])
    results["numba_floor"] = {"best": b, "runs": runs}
    print(f"  for comparison, any Numba program (numba {b['numba']}): import numpy + numba {b['import']:.3f}s + "
          f"first call of one cached five-line kernel {b['first_call']:.3f}s = {b['total']:.3f}s; "
          f"all runs: {', '.join('%.3f' % r['total'] for r in runs)}")

    # ------------------------------------------------------------- (e) memory
    print("\n(e) memory added, VmRSS in a fresh interpreter (min of 2 runs)")
    fmt = dict(repo=str(C.REPO_ROOT), wp_sample=WP_SAMPLE, zh_sample=ZH_SAMPLE, hf_json=str(HF_JSON))
    cases = {}
    for key in ("wordpiece", "chinese"):
        if key in models:
            tiny = str(root / ("tiny-wp.segkit" if key == "wordpiece" else "tiny-zh.segkit"))
            cases[key] = dict(which=key, path=str(models[key]["path"]), tiny=tiny, verify=True)
            cases[key + ", verify=False"] = dict(which=key, path=str(models[key]["path"]), tiny=tiny, verify=False)
    try:
        import jieba  # noqa: F401

        cases["jieba"] = dict(which="jieba", path="", tiny="", verify=True)
    except ImportError:
        print("  SKIP jieba: not installed (pip install jieba)")
    if HF_JSON.is_file() and C.import_tokenizers() is not None:
        cases["hf"] = dict(which="hf", path="", tiny="", verify=True)
    elif not HF_JSON.is_file():
        print(f"  SKIP HF tokenizers memory: {HF_JSON} not found")
    labels = {"wordpiece": "segkit WordPiece multilingual-cased: load + first encode",
              "chinese": "segkit ChineseMaxMatch default: load + first cut",
              "jieba": "jieba: initialize + first lcut",
              "hf": "HF Tokenizer.from_file(tokenizer.json) + first encode"}  # fmt: skip
    memory = {}
    rows = []
    for key, case in cases.items():
        code = MEMORY_CHILD.format(**fmt, **case)
        try:
            rs = [C.run_child(code, env) for _ in range(2)]
        except RuntimeError as e:
            print(f"  {key}: FAILED: {e}")
            continue
        for r in rs:
            r["added_mib"] = (r["loaded"]["VmRSS"] - r["runtime"]["VmRSS"]) / 1024
            r["added_anon_mib"] = (r["loaded"]["RssAnon"] - r["runtime"]["RssAnon"]) / 1024
            r["added_file_mib"] = (r["loaded"]["RssFile"] - r["runtime"]["RssFile"]) / 1024
            r["load_only_mib"] = (r["after_load"]["VmRSS"] - r["runtime"]["VmRSS"]) / 1024
            r["import_mib"] = (r["after_import"]["VmRSS"] - r["start"]["VmRSS"]) / 1024
            r["kernels_mib"] = (r["runtime"]["VmRSS"] - r["after_import"]["VmRSS"]) / 1024
        b = min(rs, key=lambda r: r["added_mib"])
        segkit_model = case["which"] in ("wordpiece", "chinese")
        memory[key] = {"best": b, "runs": rs}
        if segkit_model:
            memory[key].update(target_mib=TARGET_RSS_MIB, target_met=b["added_mib"] <= TARGET_RSS_MIB)
        label = labels[case["which"]] + (" (verify=False)" if not case["verify"] else "")
        rows.append([label, b["import_mib"], b["kernels_mib"] if segkit_model else None, b["added_mib"],
                     b["load_only_mib"], b["added_anon_mib"], b["added_file_mib"], b["loaded"]["VmRSS"] / 1024,
                     C.verdict(b["added_mib"], TARGET_RSS_MIB, at_least=False) if segkit_model else None])  # fmt: skip
    C.print_table(["model", "import MiB", "runtime+kernels MiB", "model adds MiB", "of which by load", "anon",
                   "of which file pages", "process MiB", f"<= {TARGET_RSS_MIB:g} MiB"], rows)  # fmt: skip
    print("  (model adds = load + first call; 'by load' = before the first call; anon = private memory; file pages =\n"
          "   pages of mapped files, e.g. the memory-mapped model, shared and reclaimable)")
    results["memory"] = memory

    # -------------------------------------------------------------- (f) build
    print(f"\n(f) build from scratch in this process, best of {n_build} (after one untimed build)")
    build = {}
    os.environ["SEGKIT_CACHE_DIR"] = "off"  # WordPiece(path) would map the cached model otherwise
    t = best_time(lambda: segkit.WordPiece(C.MULTILINGUAL_VOCAB), n_build)
    build["WordPiece(vocab.txt)"] = t
    if zh is not None:
        from segkit_cjk.default import default_words

        words = default_words()

        def build_zh():
            s = segkit.ChineseMaxMatch(words)
            s.cut(ZH_SAMPLE)

        build[f"ChineseMaxMatch(words) + first cut ({len(words):,} words)"] = best_time(build_zh, n_build)
    rows = [[k, v] for k, v in build.items()]
    C.print_table(["build", "best s"], rows)
    if "wordpiece" in load_res:
        print(f"  WordPiece: segkit.load is {t / load_res['wordpiece']['seconds']:.0f}x faster than the build")
    if zh is not None and "chinese" in load_res:
        tb = build[f"ChineseMaxMatch(words) + first cut ({len(words):,} words)"]
        print(f"  ChineseMaxMatch: segkit.load is {tb / load_res['chinese']['seconds']:.0f}x faster than the build")
    results["build_seconds"] = build

    print("\nsummary")
    for key, m in models.items():
        parts = [f"file {mib(m['size']):.1f} MiB", f"load {load_res[key]['seconds'] * 1e3:.1f} ms",
                 f"pickle {pk[key]['seconds'] * 1e3:.1f} ms as built / {pk[key + '_loaded']['seconds'] * 1e3:.1f} ms "
                 f"from segkit.load", f"warm start {warm[key]['best']['total']:.3f} s"]
        if key in memory:
            parts.append(f"RSS +{memory[key]['best']['added_mib']:.1f} MiB")
        print(f"  {m['label']}: " + ", ".join(parts))
    C.save_results("bench_models", results, args)
    tmp.cleanup()


if __name__ == "__main__":
    main()
