"""Building a WordPiece is linear in its keys, even for a long key of one
repeated character (issue 27).

``WordPiece(["[UNK]", "q", "##q", "q" * n])`` gives the trie nodes of
``q * k`` the failure pops ``[q, ##q x (k - 1)]``: written out one list
per node they are ``n**2 / 2`` pairs (391 MB at n = 5,000, 3.25 GB at
20,000).  Lists now share their pairs (:func:`segkit.engine.build.compute_failure`).
The same key reaches the builder from a ``tokenizer.json``, and as an added
token it reaches the added-token search (a ``regex`` alternation took 7 s
to search 4,000 ``q`` in a text of 4,002 characters, and 25 s at 5,000;
now :class:`segkit.engine.literals.LiteralSearch`).

Each size is measured in a subprocess (peak resident set, ``VmHWM``, reset
between sizes where the kernel allows it) under an address-space limit, so
that a quadratic build fails with a MemoryError instead of taking the
machine's memory.  Times are CPU times of the calling thread.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segkit.engine.literals import LiteralSearch
from reference import leftmost_longest

REPO = Path(__file__).resolve().parents[1]
SIZES = (5_000, 10_000, 20_000, 40_000)

_CHILD = r"""
import json, os, resource, sys, tempfile, time
sys.path.insert(0, sys.argv[1])
import segkit

def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024

def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass

how = sys.argv[2]
sizes = json.loads(sys.argv[3])
# Warm up (compiled kernels loaded), then cap the address space: a build
# that needs gigabytes fails with MemoryError rather than taking them.
w = segkit.WordPiece(["[UNK]", "q", "##q", "qqq"])
w.add_tokens(["qqqq"])
w.tokenize("qqqq qq")
folder = tempfile.mkdtemp()
p = os.path.join(folder, "w.json")
w.save_tokenizer_json(p)
segkit.WordPiece.from_tokenizer_json(p)
cap = status("VmSize") + (1 << 30)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
out = {}
for n in sizes:
    key = "q" * n
    text = "q" * (n - 1) + " " + key + " q"
    if how == "json":
        segkit.WordPiece.bert(["[UNK]", "[CLS]", "[SEP]", "q", "##q", key]).save_tokenizer_json(p)
    reset_peak()
    base = status("VmRSS")
    t = time.thread_time()
    try:
        if how == "vocab":
            wp = segkit.WordPiece(["[UNK]", "q", "##q", key], max_input_chars_per_word=2 * n)
        elif how == "json":
            wp = segkit.WordPiece.from_tokenizer_json(p)
        else:
            wp = segkit.WordPiece(["[UNK]", "q", "##q"])
            wp.add_tokens([key])
        toks = wp.tokenize(text)
    except MemoryError:
        out[n] = "MemoryError"
        continue
    out[n] = [status("VmHWM") - base, time.thread_time() - t, toks[-2:], len(toks)]
    del wp
print(json.dumps(out))
"""


@pytest.mark.parametrize("how", ["vocab", "json", "added"])
def test_long_repeated_token_builds_in_linear_memory_and_time(how):
    run = subprocess.run([sys.executable, "-c", _CHILD, str(REPO), how, json.dumps(SIZES)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    got = {int(k): v for k, v in json.loads(run.stdout.strip().splitlines()[-1]).items()}
    failed = {n: v for n, v in got.items() if v == "MemoryError"}
    assert not failed, f"{how}: MemoryError under a 1 GiB cap at n = {sorted(failed)}"
    for n, (peak, _, last, count) in got.items():
        # "q" * (n - 1), the key, "q": the first is q ##q ... (n - 1 tokens)
        # when words may be that long, else [UNK] (BERT's 100 characters).
        expected = {"vocab": (["q" * n, "q"], n + 1), "json": (["[UNK]", "q"], 3), "added": (["q" * n, "q"], 3)}[how]
        assert (last, count) == expected, (how, n, last, count)
    peaks = {n: got[n][0] for n in SIZES}
    times = {n: got[n][1] for n in SIZES}
    # Linear: 8x the key costs well under 8x of what quadratic growth adds
    # (64x); the figures are a few MB, so a floor keeps noise from deciding.
    assert peaks[40_000] < 64 * 2**20 + 16 * max(peaks[5_000], 2**20), (how, peaks)
    assert times[40_000] < 0.5 + 30 * max(times[5_000], 0.01), (how, times)


# ------------------------------------------------- the search, against the reference
@settings(max_examples=300, deadline=None)
@given(st.lists(st.text("abc", min_size=1, max_size=6), min_size=1, max_size=8, unique=True),
       st.text("abcx", max_size=40))
def test_literal_search_is_leftmost_longest(strings, text):
    expected = [(a, b, strings.index(s)) for a, b, s in leftmost_longest(text, strings)]
    assert LiteralSearch(strings).find(text) == expected


def test_literal_search_long_repeated_string_and_other_scripts():
    rng = random.Random(3)
    strings = ["q" * 3000, "qq", "\U0001F600x", "日本", "本語"]
    text = "".join(rng.choice(["q" * rng.randint(1, 3100), "日本語", "\U0001F600x", " "]) for _ in range(30))
    expected = [(a, b, strings.index(s)) for a, b, s in leftmost_longest(text, strings)]
    assert LiteralSearch(strings).find(text) == expected


def test_literal_search_rejects_empty_or_repeated_strings():
    with pytest.raises(ValueError, match="non-empty"):
        LiteralSearch(["a", ""])
    with pytest.raises(ValueError, match="distinct"):
        LiteralSearch(["a", "a"])
    with pytest.raises(ValueError, match="at least one"):
        LiteralSearch([])
