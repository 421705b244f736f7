"""Start-up: the first call after install (cold), later processes (warm), and model loading.

Every figure but the loads comes from fresh interpreters (subprocesses), as
the median of ``--repeat`` runs (at least 5), with the peers measured in the
same run; the load average is printed with each part.

(build) ``WordPiece(vocab_path)`` of the 119,547-token multilingual
    vocabulary in this process, model cache off, best of ``--repeat``
    (target <= 0.5 s), also split into ``Vocabulary.load`` and the
    automaton build.
(warm) The package as it is in this checkout (``PYTHONPATH``), Numba's
    cache and segkit's model cache populated by one unmeasured run first:
    * ``import segkit`` (nothing compiled or loaded; targets <= 0.25 s), and
      ``python -X importtime`` of it, the largest imports listed;
    * ``segkit tokenize "..."``: the whole process (target <= 0.5 s);
    * import + ``segkit.load`` of the multilingual WordPiece model (saved to
      a temporary file) + ``encode`` of one sentence (target <= 0.35 s), next
      to HF ``tokenizers``: import + ``Tokenizer.from_file`` of its
      tokenizer.json + ``encode``;
    * import + ``ChineseMaxMatch()`` + first ``cut`` (target <= 0.5 s), next
      to jieba: import + ``initialize()`` + first ``lcut``;
    * the floor any Numba program pays: interpreter, ``import numpy``,
      ``import numba``.
(load) In this process, median of 20 after a warm-up: ``segkit.load`` of the
    multilingual model (target <= 15 ms, every check kept), of the Chinese
    default model (<= 30 ms), of RWKV World, and a pickle round trip of the
    multilingual model (<= 20 ms).
(cold) ``--cold``: builds a wheel of this checkout (``pip wheel``, which
    compiles the kernels for a generic CPU; or ``--wheel PATH``), installs it
    into a fresh virtual environment, and runs each command there with an
    empty Numba cache (``NUMBA_CACHE_DIR``) and an empty model cache
    (``SEGKIT_CACHE_DIR``): the first ``segkit tokenize "..."``, ``segkit
    cut FILE``, ``segkit tokenize --model rwkv-world "..."``, ``segkit
    tokenize --model cl100k_base "..."`` (BPE), Python's
    ``ChineseMaxMatch().cut`` (targets <= 2 s each), and ``segkit train
    bpe|wordpiece`` on 2 MB of the multilingual corpus, with the time until
    its progress bar first moves (standard error on a pseudo-terminal;
    target <= 3 s).  ``--unshipped`` also runs each once without the
    compiled kernels of the wheel (``SEGKIT_JIT_SHIPPED=0``: everything
    compiled at run time, as before), for comparison.  Each run reports how
    many kernels it compiled (``SEGKIT_JIT_REPORT``).

Run from the repository root:
``python benchmarks/bench_startup.py [--quick] [--repeat N] [--parts build,warm,load,cold] [--cold] [--wheel PATH]
[--unshipped]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import argparse
import fcntl
import json
import os
import pickle
import pty
import re
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

SAMPLE = "Hello, world! Fast WordPiece tokenization: 東京は日本の首都です. Привет, мир!"
ZH_SAMPLE = "我来到北京清华大学研究生命起源"
TARGETS = {"build": 0.5, "import": 0.25, "tokenize": 0.5, "load_encode": 0.35, "chinese": 0.5, "cold": 2.0, "bar": 3.0,
           "load_ms": 15.0, "load_zh_ms": 30.0, "pickle_ms": 20.0}
HF_JSON = C.DATA_DIR / "vocab" / "bert-base-multilingual-cased.tokenizer.json"


def loadavg() -> str:
    try:
        return "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "?"


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def timed_child(argv: list[str], env: dict, repeat: int, cwd: str | None = None) -> dict:
    """Median wall time of ``repeat`` runs of ``argv`` (one unmeasured run
    first); the last run's stdout (a JSON line, if any) is parsed."""
    out = None

    def once() -> float:
        nonlocal out
        t0 = time.perf_counter()
        proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=900)
        wall = time.perf_counter() - t0
        if proc.returncode:
            raise RuntimeError(f"{' '.join(argv)[:200]} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        lines = proc.stdout.strip().splitlines()
        try:
            out = json.loads(lines[-1]) if lines else None
        except ValueError:
            out = None
        return wall

    once()
    walls = [once() for _ in range(repeat)]
    return {"median": median(walls), "runs": walls, "inner": out}


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "NUMBA_CACHE_DIR")}
    env.update(extra)
    return env


# ------------------------------------------------------------------- warm
def warm(args, results: dict) -> None:
    print(f"\n(warm) fresh interpreters, caches populated, median of {args.repeat} (load {loadavg()})")
    py = sys.executable
    repo = str(C.REPO_ROOT)
    tmp = Path(tempfile.mkdtemp(prefix="segkit-bench-startup-"))
    env = _env(PYTHONPATH=repo, SEGKIT_CACHE_DIR=str(tmp / "models"))
    import segkit

    model = tmp / "multilingual.segkit"
    segkit.WordPiece.from_pretrained("bert-base-multilingual-cased").save(model)
    rows = []
    res: dict = {}

    def row(key: str, label: str, argv: list[str], target: float | None = None) -> None:
        r = timed_child(argv, env, args.repeat, cwd=repo)
        res[key] = r
        verdict = "" if target is None else f"target <= {target:g} s: {C.verdict(r['median'], target, at_least=False)}"
        inner = r["inner"] or {}
        detail = ", ".join(f"{k} {v:.3f}" for k, v in inner.items() if isinstance(v, float))
        rows.append([label, r["median"], min(r["runs"]), detail, verdict])
        print(f"  {label}: {r['median']:.3f} s (min {min(r['runs']):.3f}) {verdict}", flush=True)

    t = "import time; t0 = time.perf_counter(); "
    row("python", "python -c pass", [py, "-c", "pass"])
    row("numpy", "import numpy", [py, "-c", "import numpy"])
    row("numba", "import numba (the floor of any Numba program)", [py, "-c", "import numba"])
    row("import", "import segkit", [py, "-c", t + "import segkit, sys, json; print(json.dumps({'import': time.perf_counter() - t0, "
                                       "'numba_loaded': float('numba' in sys.modules)}))"], TARGETS["import"])
    row("tokenize", 'segkit tokenize "..." (process)', [py, "-m", "segkit", "tokenize", SAMPLE], TARGETS["tokenize"])
    row("tokenize_bpe", 'segkit tokenize --model cl100k_base "..." (process)',
        [py, "-m", "segkit", "tokenize", "--model", "cl100k_base", SAMPLE])
    row("load_encode", "import + segkit.load(multilingual) + encode",
        [py, "-c", t + f"import segkit, json; m = segkit.load({str(model)!r}); t1 = time.perf_counter(); "
         f"m.encode({SAMPLE!r}); t2 = time.perf_counter(); "
         "print(json.dumps({'in_child': t2 - t0, 'load_part': t1 - t0, 'encode': t2 - t1}))"], TARGETS["load_encode"])
    if HF_JSON.is_file() and C.import_tokenizers() is not None:
        row("hf", "HF: import tokenizers + Tokenizer.from_file + encode",
            [py, "-c", t + f"from tokenizers import Tokenizer; tok = Tokenizer.from_file({str(HF_JSON)!r}); "
             f"tok.encode({SAMPLE!r}); import json; print(json.dumps({{'in_child': time.perf_counter() - t0}}))"])
    row("chinese", "import + ChineseMaxMatch() + first cut",
        [py, "-c", t + f"import segkit, json; s = segkit.ChineseMaxMatch(); s.cut({ZH_SAMPLE!r}); "
         "print(json.dumps({'in_child': time.perf_counter() - t0}))"], TARGETS["chinese"])
    try:
        import jieba  # noqa: F401

        row("jieba", "jieba: import + initialize() + first lcut",
            [py, "-c", t + "import logging, jieba, json; jieba.setLogLevel(logging.WARNING); jieba.initialize(); "
             f"jieba.lcut({ZH_SAMPLE!r}); print(json.dumps({{'in_child': time.perf_counter() - t0}}))"])
    except ImportError:
        print("  SKIP jieba: not installed")
    C.print_table(["figure", "median s", "min s", "inside the child", "target"], rows)

    # python -X importtime: the largest cumulative imports of ``import segkit``
    proc = subprocess.run([py, "-X", "importtime", "-c", "import segkit"], env=env, capture_output=True, text=True)
    entries = []
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m:
            entries.append((int(m.group(2)), int(m.group(1)), len(m.group(3)) // 2, m.group(4)))
    top = sorted(entries, reverse=True)[:12]
    print("  python -X importtime -c 'import segkit' (cumulative us, self us, module), largest:")
    for cum, own, depth, name in top:
        print(f"    {cum:8d} {own:8d}  {'  ' * depth}{name}")
    res["importtime_top"] = top
    res["load_average"] = loadavg()
    results["warm"] = res
    shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------ build
def build(args, results: dict) -> None:
    """``WordPiece(vocab_path)`` in this process with the model cache off:
    reading the vocabulary and building the automaton (target <= 0.5 s)."""
    import segkit

    saved = os.environ.get("SEGKIT_CACHE_DIR")
    os.environ["SEGKIT_CACHE_DIR"] = "off"
    try:
        path = C.MULTILINGUAL_VOCAB
        print(f"\n(build) in this process, {path.name}, best of {args.repeat} after one warm-up (load {loadavg()})")
        loaded = segkit.Vocabulary.load(path)
        best = C.best_of(
            {
                "WordPiece(path)": lambda: segkit.WordPiece(path),
                "Vocabulary.load(path)": lambda: segkit.Vocabulary.load(path),
                "WordPiece(Vocabulary) = automaton build": lambda: segkit.WordPiece(loaded),
            },
            repeat=args.repeat,
        )
    finally:
        if saved is None:
            os.environ.pop("SEGKIT_CACHE_DIR", None)
        else:
            os.environ["SEGKIT_CACHE_DIR"] = saved
    C.print_table(["step", "best s"], [[n, v] for n, v in best.items()])
    b = best["WordPiece(path)"]
    print(f"  WordPiece construction: {b:.3f} s (target <= {TARGETS['build']:g} s: "
          f"{C.verdict(b, TARGETS['build'], at_least=False)})")
    results["build"] = {"seconds": best, "load_average": loadavg()}


# ------------------------------------------------------------------- load
def loads(args, results: dict) -> None:
    import segkit

    print(f"\n(load) in this process, median of 20 after a warm-up (load {loadavg()})")
    tmp = Path(tempfile.mkdtemp(prefix="segkit-bench-load-"))
    os.environ["SEGKIT_CACHE_DIR"] = str(tmp / "models")
    models = {
        "multilingual WordPiece": (segkit.WordPiece.from_pretrained("bert-base-multilingual-cased"), TARGETS["load_ms"]),
        "bert-base-uncased WordPiece": (segkit.WordPiece.from_pretrained("bert-base-uncased"), TARGETS["load_ms"]),
        "Chinese default (bidirectional)": (segkit.ChineseMaxMatch(), TARGETS["load_zh_ms"]),
        "Chinese forward": (segkit.ChineseMaxMatch(mode="forward"), TARGETS["load_zh_ms"]),
        "RWKV World": (segkit.RWKVWorld(), None),
    }
    rows = []
    res = {}

    def med(fn, n=20):
        """Median and min wall ms, and median CPU ms (all threads of the
        process: steadier than wall time on a loaded machine)."""
        fn()
        ts, cs = [], []
        for _ in range(n):
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
            cs.append(time.process_time() - c0)
        return median(ts) * 1e3, min(ts) * 1e3, median(cs) * 1e3

    for name, (model, target) in models.items():
        if hasattr(model, "cut"):
            model.cut(ZH_SAMPLE)
        path = tmp / (re.sub(r"\W+", "_", name) + ".segkit")
        model.save(path)
        m, b, c = med(lambda: segkit.load(path))
        res[f"load {name}"] = m
        res[f"load {name} (cpu)"] = c
        rows.append([f"segkit.load: {name}", m, b, c,
                     "" if target is None else f"<= {target:g} ms: {C.verdict(m, target, at_least=False)}"])
    wp = segkit.load(tmp / "multilingual_WordPiece.segkit")
    m, b, c = med(lambda: pickle.loads(pickle.dumps(wp)))
    res["pickle round trip multilingual"] = m
    res["pickle round trip multilingual (cpu)"] = c
    rows.append(["pickle round trip: multilingual (loaded)", m, b, c,
                 f"<= {TARGETS['pickle_ms']:g} ms: {C.verdict(m, TARGETS['pickle_ms'], at_least=False)}"])
    C.print_table(["figure", "median ms", "min ms", "median CPU ms", "target"], rows)
    res["load_average"] = loadavg()
    results["load"] = res
    shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------- cold
_BAR = re.compile(rb"\|\s*([0-9.]+)([kMGT]?)\w*/")  # tqdm's "| 241k/2.00M" (or "| 12/30")


def _run_pty(argv: list[str], env: dict, timeout: float = 900) -> tuple[float, float | None, int, str]:
    """Run with standard error on a pseudo-terminal; returns (wall, seconds
    until a progress bar first shows a count above 0, exit status, stderr)."""
    master, slave = pty.openpty()
    # A terminal of 100 columns: tqdm draws nothing on a terminal of width 0.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    t0 = time.perf_counter()
    # cwd: a folder without a segkit package (python -c puts the current
    # folder first on sys.path, which in a checkout would shadow the install).
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=slave, cwd=tempfile.gettempdir())
    os.close(slave)
    moved = None
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:
                data = b""
            if not data:
                break
            seen += data
            if moved is None:
                for m in _BAR.finditer(seen[-4096:]):
                    if float(m.group(1)) > 0:
                        moved = time.perf_counter() - t0
                        break
        elif proc.poll() is not None:
            break
        if time.perf_counter() - t0 > timeout:
            proc.kill()
            break
    proc.wait()
    os.close(master)
    return time.perf_counter() - t0, moved, proc.returncode, seen.decode("utf-8", "replace")


def cold(args, results: dict) -> None:
    C.require_data()  # the training commands read 2 MB of the shared corpus
    tmp = Path(tempfile.mkdtemp(prefix="segkit-bench-cold-"))
    wheel = Path(args.wheel) if args.wheel else None
    if wheel is None:
        print(f"\n(cold) building a wheel of {C.REPO_ROOT} (pip wheel: the build compiles the kernels) ...", flush=True)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp / "wheel"),
                        str(C.REPO_ROOT)], check=True)
        wheel = next((tmp / "wheel").glob("segkit-*.whl"))
        print(f"  built {wheel.name} ({wheel.stat().st_size / 1e6:.2f} MB) in {time.perf_counter() - t0:.0f} s")
    venv = tmp / "venv"
    # Without PYTHONPATH: a checkout on it (with the segkit.egg-info a build
    # leaves there) makes pip think segkit is installed, and skip the wheel.
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=clean)
    vpy = str(venv / "bin" / "python")
    t0 = time.perf_counter()
    subprocess.run([vpy, "-m", "pip", "install", "-q", str(wheel)], check=True, env=clean)
    if not (venv / "bin" / "segkit").is_file():
        raise SystemExit(f"pip did not install {wheel.name} into {venv}")
    print(f"  installed into a fresh venv in {time.perf_counter() - t0:.0f} s")
    corpus = tmp / "corpus-2mb.txt"
    with C.CORPUS.open(encoding="utf-8") as f, corpus.open("w", encoding="utf-8") as out:
        n = 0
        for line in f:
            text = json.loads(line)["text"].replace("\n", " ") + "\n"
            out.write(text)
            n += len(text.encode("utf-8"))
            if n >= 2_000_000:
                break
    zh = tmp / "zh.txt"
    zh.write_text("研究生命起源\n我来到北京清华大学\n", encoding="utf-8")
    seg = str(venv / "bin" / "segkit")
    commands = {
        "segkit tokenize": ([seg, "tokenize", "segkit tokenizes text for BERT, in linear time."], TARGETS["cold"]),
        "segkit cut": ([seg, "cut", str(zh)], TARGETS["cold"]),
        "segkit tokenize --model rwkv-world": ([seg, "tokenize", "--model", "rwkv-world", "Hello, 世界!"],
                                               TARGETS["cold"]),
        "segkit tokenize --model cl100k_base": ([seg, "tokenize", "--model", "cl100k_base", "Hello, world!"],
                                                TARGETS["cold"]),
        "ChineseMaxMatch().cut (Python)": ([vpy, "-c", "import segkit; segkit.ChineseMaxMatch().cut('研究生命起源')"],
                                           TARGETS["cold"]),
        "segkit train bpe, 2 MB": ([seg, "train", "bpe", "--vocab-size", "8000", str(corpus), "-o", str(tmp / "bpe")],
                                   None),
        "segkit train wordpiece, 2 MB": ([seg, "train", "wordpiece", str(corpus), "-o", str(tmp / "wp")], None),
    }
    print(f"\n(cold) first command after pip install: empty Numba and model caches each run, median of "
          f"{args.repeat} (load {loadavg()})")
    rows = []
    res: dict = {"wheel": wheel.name, "wheel_bytes": wheel.stat().st_size}
    modes = [("shipped", {})] + ([("unshipped", {"SEGKIT_JIT_SHIPPED": "0"})] if args.unshipped else [])
    for mode, extra in modes:
        for label, (argv, target) in commands.items():
            walls, bars, compiled = [], [], []
            for _ in range(args.repeat if mode == "shipped" else 1):
                with tempfile.TemporaryDirectory(prefix="segkit-cold-") as d:
                    env = _env(NUMBA_CACHE_DIR=str(Path(d) / "numba"), SEGKIT_CACHE_DIR=str(Path(d) / "models"),
                               SEGKIT_JIT_REPORT="1", **extra)
                    env.pop("PYTHONPATH", None)
                    wall, moved, status, err = _run_pty(argv, env)
                if status:
                    raise RuntimeError(f"{label} failed ({status}):\n{err[-2000:]}")
                walls.append(wall)
                if moved is not None:
                    bars.append(moved)
                m = re.search(r"(\d+) compiled here", err)
                compiled.append(int(m.group(1)) if m else -1)
            r = {"median": median(walls), "runs": walls, "bar_moves": bars, "compiled_at_run_time": compiled}
            res[f"{mode}: {label}"] = r
            if target is not None:
                verdict = f"<= {target:g} s: {C.verdict(r['median'], target, at_least=False)}"
            elif bars:
                verdict = (f"bar moves after {median(bars):.2f} s (<= {TARGETS['bar']:g} s: "
                           f"{C.verdict(median(bars), TARGETS['bar'], at_least=False)})")
            else:
                verdict = "no moving bar seen"
            rows.append([f"{mode}: {label}", r["median"], min(walls), max(compiled), verdict])
            print(f"  {mode}: {label}: {r['median']:.2f} s, compiled at run time: {compiled}; {verdict}", flush=True)
    C.print_table(["first run after install", "median s", "min s", "kernels compiled", "target"], rows)
    res["load_average"] = loadavg()
    results["cold"] = res
    shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="5 runs per figure (the minimum), warm and load only")
    p.add_argument("--repeat", type=int, default=None, help="runs per figure, median kept (default 7, at least 5)")
    p.add_argument("--parts", default=None,
                   help="comma-separated: build, warm, load, cold (default build,warm,load; --cold adds cold)")
    p.add_argument("--cold", action="store_true", help="also the cold part (builds and installs a wheel: minutes)")
    p.add_argument("--wheel", default=None, help="cold part: install this wheel instead of building one")
    p.add_argument("--unshipped", action="store_true", help="cold part: also once without the wheel's compiled kernels")
    args = p.parse_args()
    args.repeat = max(5, args.repeat or (5 if args.quick else 7))
    parts = set((args.parts or "build,warm,load" + (",cold" if args.cold or args.wheel else "")).split(","))
    results: dict = {}
    print(f"load average at start: {loadavg()}; {os.cpu_count()} CPUs")
    if "build" in parts:
        build(args, results)
    if "warm" in parts:
        warm(args, results)
    if "load" in parts:
        loads(args, results)
    if "cold" in parts:
        cold(args, results)
    print(f"\nload average at end: {loadavg()}")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    for part in results.values():
        part["measured_at"] = stamp
    # Parts not run this time keep their last measurement (each says when).
    previous = C.RESULTS_DIR / f"bench_startup{'.quick' if args.quick else ''}.json"
    try:
        kept = json.loads(previous.read_text(encoding="utf-8")).get("results", {})
    except (OSError, ValueError):
        kept = {}
    C.save_results("bench_startup", {**{k: v for k, v in kept.items() if k not in results}, **results}, args)


if __name__ == "__main__":
    main()
