"""The SIGHAN 2005 bakeoff scorer, re-implemented.

Per line, gold and system words are compared as character spans over the
line with whitespace removed; a word is correct when the same span is in
both.  Where the two lines do not have the same characters (a few msr lines
whose gold moved an opening quote to the previous line), the line is aligned
as the official script does: a longest common subsequence of the two word
sequences (what ``diff`` finds), and the words on it are correct.

OOV words are gold words not in the training word list; OOV recall and IV
recall count per token.  See ``../shared/data/sighan2005/README`` for the
official procedure this follows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence


def split_words(line: str) -> list[str]:
    """Words of a segmented line: U+3000 counts as a space, CR is dropped."""
    return line.replace("\u3000", " ").replace("\r", "").replace("\ufeff", "").split()


def _spans(words: Sequence[str]) -> list[tuple[int, int]]:
    out, pos = [], 0
    for w in words:
        out.append((pos, pos + len(w)))
        pos += len(w)
    return out


def _lcs_flags(a: Sequence[str], b: Sequence[str]) -> tuple[list[bool], list[bool]]:
    n, m = len(a), len(b)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        ai, row, nxt = a[i], dp[i], dp[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = nxt[j + 1] + 1 if ai == b[j] else max(nxt[j], row[j + 1])
    fa, fb = [False] * n, [False] * m
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            fa[i] = fb[j] = True
            i += 1
            j += 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    return fa, fb


@dataclass
class Score:
    """Totals and rates of one evaluation."""

    gold_words: int = 0
    system_words: int = 0
    correct_gold: int = 0
    correct_system: int = 0
    oov_words: int = 0
    oov_correct: int = 0
    iv_correct: int = 0

    @property
    def recall(self) -> float:
        return self.correct_gold / self.gold_words if self.gold_words else 0.0

    @property
    def precision(self) -> float:
        return self.correct_system / self.system_words if self.system_words else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def oov_rate(self) -> float:
        return self.oov_words / self.gold_words if self.gold_words else 0.0

    @property
    def oov_recall(self) -> float:
        return self.oov_correct / self.oov_words if self.oov_words else 0.0

    @property
    def iv_recall(self) -> float:
        iv = self.gold_words - self.oov_words
        return self.iv_correct / iv if iv else 0.0

    def row(self) -> dict[str, float]:
        return {
            "R": round(self.recall, 3),
            "P": round(self.precision, 3),
            "F": round(self.f1, 3),
            "OOV": round(self.oov_rate, 3),
            "R_oov": round(self.oov_recall, 3),
            "R_iv": round(self.iv_recall, 3),
        }


def score(gold_lines: Iterable[str], system: Iterable[Sequence[str]], dictionary: set[str]) -> Score:
    """Score system words (one word list per line) against gold lines."""
    s = Score()
    for gold_line, sys_words in zip(gold_lines, system):
        gold = split_words(gold_line)
        if not gold:
            continue
        sys_words = [w for w in sys_words if w.strip()]
        s.gold_words += len(gold)
        s.system_words += len(sys_words)
        if "".join(gold) == "".join(sys_words):
            sys_spans = set(_spans(sys_words))
            gflags = [sp in sys_spans for sp in _spans(gold)]
            s.correct_system += sum(gflags)
        else:
            gflags, sflags = _lcs_flags(gold, sys_words)
            s.correct_system += sum(sflags)
        for w, ok in zip(gold, gflags):
            s.correct_gold += ok
            if w in dictionary:
                s.iv_correct += ok
            else:
                s.oov_words += 1
                s.oov_correct += ok
    return s
