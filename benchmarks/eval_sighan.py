"""Segment the SIGHAN 2005 test sets with segkit's Chinese MaxMatch and score them.

For each corpus (pku, msr, cityu, as), the training word list of that corpus
is the dictionary, and each mode (forward, backward, bidirectional) is run
with the textbook algorithm (``alnum_runs=False``) and with ``alnum_runs=True``.
Prints a table (also written to benchmarks/results/sighan.json and .md).

    python benchmarks/eval_sighan.py [--corpora pku msr] [--check-baseline]

``--check-baseline`` exits non-zero unless textbook forward MaxMatch on pku
reproduces the official baseline (R 0.907, P 0.843, F 0.874, OOV recall
0.069, IV recall 0.958).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from sighan_score import score  # noqa: E402

from segkit_cjk import ChineseMaxMatch  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "sighan2005"
CORPORA = ("pku", "msr", "cityu", "as")
MODES = ("forward", "backward", "bidirectional")
BASELINE = {"R": 0.907, "P": 0.843, "F": 0.874, "R_oov": 0.069, "R_iv": 0.958}


def read_lines(path: Path) -> list[str]:
    text = path.read_bytes().decode("utf-8").lstrip("\ufeff")
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "" and text.endswith("\n"):
        lines.pop()
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    ap.add_argument("--check-baseline", action="store_true")
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"SIGHAN data not found at {DATA} (it lives in ../shared/data beside the checkout)")
        return 2
    rows = []
    for corpus in args.corpora:
        dict_lines = read_lines(DATA / f"{corpus}_training_words.utf8")
        words = [w.strip() for w in dict_lines if w.strip()]
        dictionary = set(words)
        # Entries with whitespace inside (cityu has 'Phang\u3000Nga') can never
        # match, since whitespace separates words: the segmenter leaves them
        # out (it would warn); the scorer keeps them in the OOV dictionary.
        from segkit.runtime.unicode import white_space

        ws = white_space()
        words = [w for w in words if not any(ws[ord(c)] for c in w)]
        test = read_lines(DATA / f"{corpus}_test.utf8")
        gold = read_lines(DATA / f"{corpus}_test_gold.utf8")
        for alnum in (False, True):
            for mode in MODES:
                seg = ChineseMaxMatch(words, mode=mode, alnum_runs=alnum)
                t = time.perf_counter()
                out = seg.cut_batch(test)
                dt = time.perf_counter() - t
                sc = score(gold, out, dictionary)
                row = {"corpus": corpus, "mode": mode, "alnum_runs": alnum, **sc.row(), "seconds": round(dt, 3)}
                rows.append(row)
                print(
                    f"{corpus:6} {mode:13} alnum_runs={str(alnum):5}  R {row['R']:.3f}  P {row['P']:.3f}  "
                    f"F {row['F']:.3f}  OOV {row['OOV']:.3f}  R_oov {row['R_oov']:.3f}  R_iv {row['R_iv']:.3f}"
                )
    out_dir = ROOT / "benchmarks" / "results"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "sighan.json").write_text(json.dumps(rows, indent=1))
    md = ["| corpus | mode | alnum_runs | R | P | F | OOV rate | OOV recall | IV recall |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(
            f"| {r['corpus']} | {r['mode']} | {r['alnum_runs']} | {r['R']:.3f} | {r['P']:.3f} | {r['F']:.3f} | "
            f"{r['OOV']:.3f} | {r['R_oov']:.3f} | {r['R_iv']:.3f} |"
        )
    (out_dir / "sighan.md").write_text("\n".join(md) + "\n")
    if args.check_baseline:
        pku = [r for r in rows if r["corpus"] == "pku" and r["mode"] == "forward" and not r["alnum_runs"]]
        if not pku:
            print("--check-baseline needs pku")
            return 2
        got = {k: pku[0][k] for k in BASELINE}
        ok = got == BASELINE
        print(f"baseline {'reproduced' if ok else 'NOT reproduced'}: expected {BASELINE}, got {got}")
        return 0 if ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
