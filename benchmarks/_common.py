"""Shared helpers of the segkit benchmarks.

Import this module *first* in every benchmark script: it puts the repository
root at the front of ``sys.path`` (so the source tree is measured, not an
installed copy) and sets ``RAYON_NUM_THREADS=1`` before HuggingFace
``tokenizers`` can be imported, so every peer runs on one thread.

Contents
--------
* locating the shared data (``../shared/data`` beside the checkout) and
  loading the multilingual corpus, normalized like BERT-cased input;
* :func:`time_rounds` / :func:`best_of`: interleaved, repeated timing that
  keeps the best (minimum) time of each system, and :func:`median_ratio`, the
  median over rounds of the per-round ratio of two systems;
* :func:`print_table` and :func:`save_results` (JSON in
  ``benchmarks/results/<name>.json``).

Measurements are noisy on a shared machine; the figures that matter are the
*ratios* between systems measured in the same run on the same input.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

os.environ["RAYON_NUM_THREADS"] = "1"  # must precede any import of tokenizers
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

#: The shared data folder, beside the checkout (not bundled with segkit).
DATA_DIR = REPO_ROOT.parent / "shared" / "data"
CORPUS = DATA_DIR / "corpus" / "multilingual.jsonl"
VOCAB_DIR = REPO_ROOT / "vocabularies"
MULTILINGUAL_VOCAB = VOCAB_DIR / "bert-base-multilingual-cased.txt"
RESULTS_DIR = BENCH_DIR / "results"


# ----------------------------------------------------------------- arguments
def parse_args(description: str, *, default_repeat: int = 5, quick_repeat: int = 3) -> argparse.Namespace:
    """Common command line: ``--quick`` (a subset, fewer repetitions) and
    ``--repeat N`` (repetitions per system; the best is kept)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="run on a subset with fewer repetitions")
    p.add_argument(
        "--repeat",
        type=int,
        default=None,
        help=f"repetitions per system, best kept (default {default_repeat}, {quick_repeat} with --quick)",
    )
    args = p.parse_args()
    if args.repeat is None:
        args.repeat = quick_repeat if args.quick else default_repeat
    if args.repeat < 1:
        p.error("--repeat must be >= 1")
    return args


# ---------------------------------------------------------------------- peers
def import_tokenizers():
    """The HuggingFace ``tokenizers`` module, or None (with a printed message)."""
    try:
        import tokenizers
    except ImportError:
        print("SKIP HuggingFace tokenizers: not installed (pip install tokenizers)")
        return None
    return tokenizers


def hf_vocab(path: Path) -> dict[str, int]:
    """token -> id of a ``vocab.txt``, split on ``\\n`` only (id = line index;
    on a duplicate the first id wins, like segkit's ``duplicates="first"``)."""
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    vocab: dict[str, int] = {}
    for i, tok in enumerate(lines):
        vocab.setdefault(tok, i)
    return vocab


# ----------------------------------------------------------------------- data
def require_data() -> None:
    """Exit with a clear message when the shared corpus is absent."""
    if not CORPUS.is_file():
        sys.exit(
            f"benchmark data not found: {CORPUS}\n"
            f"These benchmarks need the shared data folder beside the checkout "
            f"({DATA_DIR}); it is not bundled with segkit."
        )


# BERT's notion of whitespace for cleaning: \t \n \r plus Unicode White_Space
# (what Rust's char::is_whitespace tests).
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
# Characters BERT's cleaning deletes (besides U+0000 and U+FFFD); unassigned
# code points (Cn) are kept, as HF does.
_CONTROL_CATEGORIES = frozenset(("Cc", "Cf", "Co", "Cs"))
# HF's CJK ranges (segkit's own table; this is input preparation, not a check).
from segkit.presets.wordpiece.pretokenize import HF_CJK_RANGES as _CJK_RANGES  # noqa: E402


def _fallback_normalize_char(c: str) -> str:
    cp = ord(c)
    if cp == 0 or cp == 0xFFFD or (c not in "\t\n\r" and unicodedata.category(c) in _CONTROL_CATEGORIES):
        return ""
    if c in _WHITE_SPACE:
        return " "
    for lo, hi in _CJK_RANGES:
        if lo <= cp <= hi:
            return f" {c} "
    return c


def fallback_normalize(text: str) -> str:
    """Pure-Python stand-in for HF ``BertNormalizer(clean_text=True,
    handle_chinese_chars=True, strip_accents=False, lowercase=False)``.

    Used only when ``tokenizers`` is not installed.  Clean text: U+0000,
    U+FFFD and every character of general category Cc, Cf, Co or Cs (except
    ``\\t\\n\\r``) is deleted, then whitespace (``\\t\\n\\r`` and Unicode
    White_Space) becomes a space; CJK ideographs (HF's ranges) are surrounded
    by spaces.  Checked against tokenizers 0.23 (Python 3.11): equal output
    on the whole corpus, and on every code point below U+30000 except 13
    format characters added in recent Unicode versions (e.g. U+0890).
    """
    return "".join(map(_fallback_normalize_char, text))


def load_corpus(
    *, normalize: bool = True, limit: int | None = None, stride: int = 1
) -> tuple[list[str], list[str], str]:
    """``(texts, langs, how_normalized)`` of the multilingual corpus.

    ``stride`` keeps every ``stride``-th line (a subset that still covers every
    language, since the file is grouped by language); ``limit`` caps the count
    after striding.  Texts are normalized with HF ``BertNormalizer(lowercase=False,
    strip_accents=False)`` when ``tokenizers`` is installed, else with
    :func:`fallback_normalize`.
    """
    require_data()
    texts: list[str] = []
    langs: list[str] = []
    with CORPUS.open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i % stride:
                continue
            rec = json.loads(line)
            texts.append(rec["text"])
            langs.append(rec["lang"])
            if limit is not None and len(texts) >= limit:
                break
    how = "none"
    if normalize:
        try:
            from tokenizers import normalizers
        except ImportError:
            how = "segkit benchmarks fallback (pure Python BertNormalizer stand-in)"
            texts = [fallback_normalize(t) for t in texts]
        else:
            norm = normalizers.BertNormalizer(
                clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False
            )
            how = "HF BertNormalizer(lowercase=False, strip_accents=False)"
            texts = [norm.normalize_str(t) for t in texts]
    return texts, langs, how


def run_child(code: str, env: dict[str, str] | None = None, timeout: float = 600) -> dict:
    """Run ``python -c code`` from the repository root; its last stdout line
    is a JSON object, returned with ``"wall"`` (seconds, interpreter start
    included) added.  RuntimeError with the end of stderr if it fails.

    The child may write bytecode caches (``PYTHONDONTWRITEBYTECODE`` is
    dropped from its environment): an installed package has them (pip
    compiles on install), and start-up figures should not include
    compiling every module from source on each run (about 40 ms for
    segkit when the variable is set, as on some CI machines).
    """
    env = dict(os.environ if env is None else env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=str(REPO_ROOT), capture_output=True, text=True, timeout=timeout
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"child process failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["wall"] = wall
    return out


def utf8_bytes(texts: Iterable[str]) -> int:
    """Total UTF-8 size of ``texts``."""
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)


# --------------------------------------------------------------------- timing
def _time_once(fn: Callable[[], Any], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def time_rounds(
    systems: dict[str, Callable[[], Any]],
    *,
    repeat: int = 5,
    warmup: int = 1,
    number: int | dict[str, int] = 1,
    verbose: bool = True,
) -> dict[str, list[float]]:
    """Seconds per call of each system in each of ``repeat`` rounds.

    Every system is first called ``warmup`` times; then ``repeat`` rounds are
    run, and in each round every system is timed once (``number`` calls,
    averaged), in an order that rotates from round to round, so that a burst
    of load from other processes hits all systems alike.
    """
    names = list(systems)
    per = {n: (number[n] if isinstance(number, dict) else number) for n in names}
    for n in names:
        for _ in range(warmup):
            systems[n]()
    times: dict[str, list[float]] = {n: [] for n in names}
    for r in range(repeat):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            times[n].append(_time_once(systems[n], per[n]))
        if verbose:
            print(f"  round {r + 1}/{repeat}: " + ", ".join(f"{n} {times[n][-1]:.4g}s" for n in names), flush=True)
    return times


def best_of(systems: dict[str, Callable[[], Any]], **kwargs: Any) -> dict[str, float]:
    """Best (minimum) seconds per call of each system over interleaved rounds
    (see :func:`time_rounds`): the least disturbed measurement."""
    return {n: min(ts) for n, ts in time_rounds(systems, **kwargs).items()}


def median_ratio(times: dict[str, list[float]], slow: str, fast: str) -> float:
    """Median over rounds of ``times[slow][r] / times[fast][r]``: a ratio of
    two systems timed moments apart, robust to load that changes between
    rounds."""
    return statistics.median(a / b for a, b in zip(times[slow], times[fast]))


def calls_for(fn: Callable[[], Any], target_seconds: float = 0.05, max_calls: int = 100_000) -> int:
    """How many calls of ``fn`` take about ``target_seconds`` (at least 1)."""
    t = _time_once(fn, 1)
    if t <= 0:
        return max_calls
    return max(1, min(max_calls, int(target_seconds / t)))


# --------------------------------------------------------------------- output
def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None) -> None:
    """Print an aligned plain-text table (numbers right-aligned)."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(_is_num(row[i]) or row[i] is None for row in rows) for i in range(len(headers))]
    if title:
        print(f"\n{title}")
    for j, row in enumerate(cells):
        print(
            "  ".join(
                c.rjust(w) if numeric[i] and j else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))
            ).rstrip()
        )
        if j == 0:
            print("  ".join("-" * w for w in widths))


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        if x != x or x in (float("inf"), float("-inf")):
            return str(x)
        if abs(x) >= 100:
            return f"{x:,.0f}"
        return f"{x:#.3g}"
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x:,}"
    return "-" if x is None else str(x)


def verdict(value: float, target: float, *, at_least: bool) -> str:
    """``"MET"`` / ``"NOT MET"`` for a target (``at_least``: value >= target)."""
    ok = value >= target if at_least else value <= target
    return "MET" if ok else "NOT MET"


def machine_info() -> dict[str, Any]:
    """Versions and machine facts recorded with every result."""
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "rayon_num_threads": os.environ.get("RAYON_NUM_THREADS"),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    try:
        info["loadavg"] = os.getloadavg()
    except OSError:
        pass
    for mod in ("segkit", "numba", "numpy", "tokenizers"):
        m = sys.modules.get(mod)
        if m is not None:
            info[mod] = getattr(m, "__version__", "?")
    return info


def save_results(name: str, results: dict[str, Any], args: argparse.Namespace | None = None) -> Path:
    """Write ``results`` (plus machine info) to ``benchmarks/results/<name>.json``
    (``<name>.quick.json`` for a ``--quick`` run, so it never replaces a full one)."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    quick = args is not None and getattr(args, "quick", False)
    path = RESULTS_DIR / f"{name}{'.quick' if quick else ''}.json"
    payload = {"benchmark": name, "machine": machine_info(), "results": results}
    if args is not None:
        payload["args"] = vars(args)
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False, default=_json_default) + "\n", encoding="utf-8")
    print(f"\nresults written to {path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path}")
    return path


def _json_default(o: Any) -> Any:
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
    except ImportError:
        pass
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
