"""Changing the Chinese dictionary: jieba-style ``add_word`` / ``del_word`` loops.

jieba users loop over ``add_word``.  segkit once rebuilt the whole default
dictionary (349,045 words) per change: 200 calls took 73 s, the next cut
another 3.3 s (issue 33).  Changes are now kept beside the built automata
(:mod:`segkit_cjk._overlay`).  Measured here, in one process, after the
default segmenter (bidirectional, the CLI's mode) is loaded and has cut once:

(a) 200 ``add_word`` calls then one ``cut``: target <= 1 s in all;
(b) 200 ``del_word`` calls (words of the dictionary) then one ``cut``;
(c) ``load_userdict`` of a 200-line jieba-format file then one ``cut``;
(d) what the changes cost a cut afterwards: ``cut_batch`` of the SIGHAN pku
    test lines (when ``../shared/data`` is there, else a built text) with
    the 200 added words vs without, and the one rebuild that folding them
    into the dictionary would cost instead (``_dict.folded()``, both
    directions), which is what each change cost before (a state folds its
    changes in once it has corrected about that much: ``FOLD_CHARS`` plus
    ``FOLD_CHARS_PER_WORD`` per dictionary word, see segkit_cjk.segmenter);
(e) jieba, when installed: 200 ``add_word`` then ``lcut`` (after
    ``initialize()``), for comparison.

Run from the repository root: ``python benchmarks/bench_cjk_changes.py``.
"""

from __future__ import annotations

import _common as C  # first: sys.path

import logging
import tempfile
import time
from pathlib import Path

TARGET = 1.0
SAMPLE = "他说：“iPhone 15 的售价是7999元，比去年上涨了3.5%。”我来到北京清华大学。新词七号和云计算都在这里。"


def added_words() -> list[str]:
    # New words (not in jieba's dictionary) made of common characters.
    return [f"新词{chr(0x4E00 + 37 * i % 20000)}{i}号" for i in range(200)]


def lines() -> list[str]:
    path = C.DATA_DIR / "sighan2005" / "pku_test.utf8"
    if path.is_file():
        return [s for s in (x.strip() for x in path.read_text(encoding="utf-8").splitlines()) if s]
    return [SAMPLE] * 2000


def main() -> None:
    import segkit

    t0 = time.perf_counter()
    seg = segkit.ChineseMaxMatch()
    seg.cut(SAMPLE)
    print(f"load + first cut (not counted): {time.perf_counter() - t0:.2f} s")
    words = added_words()

    t = time.perf_counter()
    for w in words:
        seg.add_word(w)
    t_add = time.perf_counter() - t
    got = seg.cut(SAMPLE + words[7])
    t_all = time.perf_counter() - t
    assert words[7] in got, got
    print(f"(a) add_word x200: {t_add * 1000:.1f} ms, then cut: {(t_all - t_add) * 1000:.1f} ms; "
          f"in all {t_all:.3f} s (target <= {TARGET} s: {'ok' if t_all <= TARGET else 'MISSED'})")

    text = lines()
    seg.cut_batch(text)
    t = time.perf_counter()
    for _ in range(3):
        seg.cut_batch(text)
    with_changes = (time.perf_counter() - t) / 3

    plain = segkit.ChineseMaxMatch()
    gone = [w for w in plain.words[1000:201000:1000]][:200]
    t = time.perf_counter()
    for w in gone:
        plain.del_word(w)
    plain.cut(SAMPLE)
    print(f"(b) del_word x200 then cut: {time.perf_counter() - t:.3f} s")

    fresh = segkit.ChineseMaxMatch()
    fresh.cut(SAMPLE)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "userdict.txt"
        path.write_text("".join(f"{w} {i + 3} n\n" for i, w in enumerate(words)), encoding="utf-8")
        t = time.perf_counter()
        fresh.load_userdict(path)
        fresh.cut(SAMPLE)
        print(f"(c) load_userdict (200 lines) then cut: {time.perf_counter() - t:.3f} s")

    fresh = segkit.ChineseMaxMatch()
    fresh.cut_batch(text)
    t = time.perf_counter()
    for _ in range(3):
        fresh.cut_batch(text)
    without = (time.perf_counter() - t) / 3
    state = seg._dict
    t = time.perf_counter()
    folded = state.folded()
    seg._snapshot(seg._directions(), folded)
    rebuild = time.perf_counter() - t
    n = sum(map(len, text))
    print(f"(d) cut_batch of {len(text)} lines ({n / 1e6:.2f} M chars): {with_changes * 1000:.1f} ms with the 200 "
          f"added words kept apart, {without * 1000:.1f} ms without (x{with_changes / without:.2f}); folding them "
          f"in (one rebuild, what every change cost before): {rebuild:.2f} s")

    try:
        import jieba
    except ImportError:
        print("(e) jieba is not installed")
        return
    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    t = time.perf_counter()
    for w in words:
        jieba.add_word(w)
    jieba.lcut(SAMPLE, HMM=False)
    print(f"(e) jieba add_word x200 then lcut: {time.perf_counter() - t:.3f} s")


if __name__ == "__main__":
    main()
