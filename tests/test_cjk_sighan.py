"""ChineseMaxMatch on the SIGHAN 2005 bakeoff test sets (shared data, not bundled).

* With ``alnum_runs=False`` (the textbook algorithm) and each corpus's own
  training word list as the dictionary, forward and backward output equals
  the naive reference (tests/cjk_reference.py) line by line, on all four
  test sets (pku, msr, cityu, as).
* Textbook forward MaxMatch on pku, scored with benchmarks/sighan_score.py,
  reproduces the official baseline of the bakeoff (the release's
  ``mwseg.pl`` scored by the official ``score`` script).

Skipped when ``../shared/data/sighan2005`` (beside the checkout) is absent.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import cjk_reference as ref
from segkit_cjk import ChineseMaxMatch

REPO = Path(__file__).resolve().parents[1]
SIGHAN = REPO.parent / "shared" / "data" / "sighan2005"
CORPORA = ("pku", "msr", "cityu", "as")

pytestmark = pytest.mark.skipif(
    not SIGHAN.is_dir(), reason=f"SIGHAN 2005 data not found at {SIGHAN} (shared data beside the checkout)"
)


def read_lines(path: Path) -> list[str]:
    """Lines of a bakeoff file: UTF-8, BOM dropped, CRLF or LF, no final empty line."""
    text = path.read_bytes().decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class Corpus:
    def __init__(self, name: str) -> None:
        self.name = name
        #: the word list as the official scorer reads it (stripped lines)
        self.words = [w.strip() for w in read_lines(SIGHAN / f"{name}_training_words.utf8") if w.strip()]
        self.lexicon = ref.Lexicon(self.words)
        self.test = read_lines(SIGHAN / f"{name}_test.utf8")
        self.gold = read_lines(SIGHAN / f"{name}_test_gold.utf8")

    def segmenter_words(self) -> list[str]:
        # cityu's list has one entry with an ideographic space ("Phang\u3000Nga").
        # Whitespace always separates words, so such an entry can never match
        # (the reference, which gets the full list, shows this) and
        # ChineseMaxMatch rejects it: leave it out of the segmenter's dictionary.
        return [w for w in self.words if not any(c in ref.WHITE_SPACE for c in w)]


_CACHE: dict[str, Corpus] = {}


@pytest.fixture(scope="module", params=CORPORA)
def corpus(request) -> Corpus:
    if request.param not in _CACHE:
        _CACHE[request.param] = Corpus(request.param)
    return _CACHE[request.param]


@pytest.fixture(scope="module")
def sighan_score():
    """benchmarks/sighan_score.py, imported by path."""
    path = REPO / "benchmarks" / "sighan_score.py"
    spec = importlib.util.spec_from_file_location("segkit_bench_sighan_score", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_files_as_documented(corpus):
    # line counts of ../shared/data/README.md: a changed file would make
    # the comparisons below meaningless
    expected = {"pku": (55303, 1945), "msr": (88119, 3985), "cityu": (69085, 1493), "as": (141338, 14432)}
    assert (len(set(corpus.words)), len(corpus.test)) == expected[corpus.name]
    assert len(corpus.gold) == len(corpus.test)


@pytest.mark.parametrize("mode", ["forward", "backward"])
def test_textbook_maxmatch_equals_reference(corpus, mode):
    seg = ChineseMaxMatch(corpus.segmenter_words(), mode=mode, alnum_runs=False)
    got = seg.tokenize_batch(corpus.test)
    mismatches = []
    for i, line in enumerate(corpus.test):
        expected = ref.tokenize(line, corpus.lexicon, mode, alnum_runs=False)
        if got[i] != expected:
            mismatches.append((i + 1, line, got[i], expected))
    assert not mismatches, (
        f"{corpus.name} {mode}: {len(mismatches)} of {len(corpus.test)} lines differ; first: "
        f"line {mismatches[0][0]} {mismatches[0][1]!r}\n got      {mismatches[0][2]}\n expected {mismatches[0][3]}"
    )


def test_bidirectional_chooses_between_forward_and_backward(corpus):
    """Bidirectional output (alnum runs on) equals the reference's choice."""
    seg = ChineseMaxMatch(corpus.segmenter_words(), mode="bidirectional")
    got = seg.cut_batch(corpus.test)
    expected = [ref.cut(line, corpus.lexicon, "bidirectional", alnum_runs=True) for line in corpus.test]
    bad = [i for i in range(len(got)) if got[i] != expected[i]]
    assert not bad, f"{corpus.name}: {len(bad)} lines differ, first line {bad[0] + 1}"


#: Forward textbook MaxMatch with each corpus's word list, from
#: ../shared/data/README.md (computed there by an independent implementation
#: that removes whitespace from the test lines before segmenting):
#: (gold words, system words, correctly segmented gold words).  msr's
#: correct count is left out: the README's scorer counts by character
#: offsets, sighan_score aligns the 16 msr lines whose gold and test text
#: differ like the official script does.
README_COUNTS = {
    "pku": (104372, 112281, 94641),
    "msr": (106873, 111480, None),
    "cityu": (40936, 44340, 37176),
    "as": (122610, 129365, 111765),
}


def test_forward_counts_as_documented(corpus, sighan_score):
    seg = ChineseMaxMatch(corpus.segmenter_words(), mode="forward", alnum_runs=False)
    joined = ["".join(line.split()) for line in corpus.test]
    sc = sighan_score.score(corpus.gold, seg.cut_batch(joined), set(corpus.words))
    gold, system, correct = README_COUNTS[corpus.name]
    assert (sc.gold_words, sc.system_words) == (gold, system)
    if correct is not None:
        assert sc.correct_gold == correct


def test_pku_official_baseline(sighan_score):
    """Textbook forward MaxMatch on pku = the bakeoff's official baseline."""
    pku = _CACHE.get("pku") or Corpus("pku")
    seg = ChineseMaxMatch(pku.words, mode="forward", alnum_runs=False)
    sc = sighan_score.score(pku.gold, seg.cut_batch(pku.test), set(pku.words))
    assert (sc.gold_words, sc.system_words, sc.correct_gold) == (104372, 112281, 94641)
    row = sc.row()
    assert {k: row[k] for k in ("R", "P", "F", "OOV", "R_oov", "R_iv")} == {
        "R": 0.907,
        "P": 0.843,
        "F": 0.874,
        "OOV": 0.058,
        "R_oov": 0.069,
        "R_iv": 0.958,
    }
