"""Measure the character classes of HF tokenizers (Oniguruma) and tiktoken
(the Rust regex crate) into segkit/runtime/unicode_flavours.json.

Every code point (surrogates aside) is run through the peer's own regex
engine, one class item at a time:

* HF: ``tokenizers.pre_tokenizers.Split(Regex(item), "removed")`` over one
  string of all code points; the matched code points are those no returned
  piece covers;
* tiktoken: an ``Encoding`` whose pattern is the item and whose ranks are
  the 256 bytes: tiktoken encodes only what the pattern matches, so the
  decoded ids are the matched code points.

The file stores the differences from the installed ``regex`` module (see
:mod:`segkit.runtime.unicode_flavours` for the model) and checks the model:
after it, every measured atom of the published patterns must be exact.
Run from the repository root with tokenizers and tiktoken installed::

    python tools/gen_unicode_flavours.py          # write the file
    python tools/gen_unicode_flavours.py --check  # compare only
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np
import regex

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from segkit.runtime.unicode import N_CODE_POINTS, property_mask  # noqa: E402

OUT = ROOT / "segkit" / "runtime" / "unicode_flavours.json"
CPS = np.r_[0:0xD800, 0xE000:N_CODE_POINTS]
ALL = "".join(map(chr, CPS))

GENERAL_CATEGORIES = ["L", "LC", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No", "P",
                      "Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "S", "Sm", "Sc", "Sk", "So", "Z", "Zs", "Zl", "Zp",
                      "C", "Cc", "Cf", "Co", "Cn"]
#: Class items measured (in the form segkit.runtime.unicode_flavours parses them to).
ITEMS = [rf"\p{{{g}}}" for g in GENERAL_CATEGORIES] + [r"\s", r"\w", r"\d", "."] + [
    rf"\p{{{s}}}" for s in ("Han", "Latin", "Greek", "Cyrillic", "Arabic", "Hebrew", "Hiragana", "Katakana",
                            "Hangul", "Thai", "Devanagari", "Common", "Inherited", "White_Space", "Alphabetic")]
#: The leaves: one general category per code point.
LEAVES = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf",
          "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn"]


def ranges(cps) -> list[list[int]]:
    out: list[list[int]] = []
    for c in map(int, cps):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def full(sub: np.ndarray) -> np.ndarray:
    m = np.zeros(N_CODE_POINTS, dtype=bool)
    m[CPS] = sub
    return m


class HF:
    name = "onig"

    def __init__(self) -> None:
        import tokenizers
        from tokenizers import Regex, pre_tokenizers

        self.version = tokenizers.__version__
        self.source = f"HuggingFace tokenizers {tokenizers.__version__} (Oniguruma, through the onig crate)"
        self._split = lambda p: pre_tokenizers.Split(Regex(p), behavior="removed")

    def mask(self, pattern: str, text: str = ALL, cps: np.ndarray = CPS) -> np.ndarray:
        m = np.ones(len(text), dtype=bool)
        for _, (a, b) in self._split(pattern).pre_tokenize_str(text):
            m[a:b] = False
        out = np.zeros(N_CODE_POINTS, dtype=bool)
        out[cps] = m
        return out


class Tiktoken:
    name = "rust"

    def __init__(self) -> None:
        import tiktoken

        self.tiktoken = tiktoken
        self.source = f"tiktoken {tiktoken.__version__} (the Rust regex crate, through fancy-regex)"
        self.ranks = {bytes([b]): b for b in range(256)}

    def mask(self, pattern: str, text: str = ALL, cps: np.ndarray = CPS) -> np.ndarray:
        enc = self.tiktoken.Encoding("probe", pat_str=pattern, mergeable_ranks=self.ranks, special_tokens={})
        out = np.zeros(N_CODE_POINTS, dtype=bool)
        for i in range(0, len(text), 1 << 16):
            got = bytes(enc.encode_ordinary(text[i : i + (1 << 16)])).decode("utf-8")
            out[np.frombuffer(got.encode("utf-32-le"), dtype=np.uint32)] = True
        return out


def regex_mask(pattern: str) -> np.ndarray:
    m = property_mask.__wrapped__(pattern).copy()
    m[0xD800:0xE000] = False
    return m


def leaf_codes(masks: dict) -> np.ndarray:
    codes = np.full(N_CODE_POINTS, -1, dtype=np.int64)
    for k, g in enumerate(LEAVES):
        codes[masks[g]] = k
    return codes


def case_classes(peer, candidates: np.ndarray) -> dict[int, frozenset]:
    """The peer's ``(?i:c)`` for every candidate code point, over the
    candidates (one apart: a character folding to two, such as U+FB06
    to "st", must not match two neighbours)."""
    text = "\x01".join(map(chr, candidates))
    spaced = np.full(2 * len(candidates) - 1, 1, dtype=np.int64)
    spaced[::2] = candidates
    candidates = spaced
    out = {}
    for c in candidates.tolist():
        if peer is not None:
            m = peer.mask(rf"(?i:\x{{{c:X}}})", text, candidates)
        else:
            m = _regex_on(f"(?i:{regex.escape(chr(c))})", text, candidates)
        out[c] = frozenset(np.flatnonzero(m).tolist())
    return out


def _regex_on(pattern: str, text: str, cps: np.ndarray) -> np.ndarray:
    out = np.zeros(N_CODE_POINTS, dtype=bool)
    for m in regex.finditer(pattern, text):
        out[cps[m.start()]] = True
    return out


def measure(peer) -> dict:
    print(f"{peer.name}: {peer.source}", flush=True)
    t0 = time.time()
    peer_leaf = {g: peer.mask(rf"\p{{{g}}}") for g in LEAVES}
    rx_leaf = {g: regex_mask(rf"\p{{{g}}}") for g in LEAVES}
    unassigned = peer_leaf["Cn"] & ~rx_leaf["Cn"]
    if (rx_leaf["Cn"] & ~peer_leaf["Cn"])[CPS].any():
        raise SystemExit("the peer assigns code points the regex module does not: the model does not hold")
    pc, rc = leaf_codes(peer_leaf), leaf_codes(rx_leaf)
    # each item on its own and in a class (Oniguruma's [\w] is not its \w)
    keys = ITEMS + [f"[{i}]" for i in ITEMS if i != "."]
    peer_items = {item: peer.mask(item) for item in keys}
    rx_items = {item: regex_mask(item) for item in keys}
    # case: candidates are the code points with a case partner in either engine
    cand = set()
    for c in CPS.tolist():
        others = {x for x in (chr(c).lower(), chr(c).upper(), chr(c).casefold()) if x != chr(c)}
        if others:
            cand.add(c)
            cand.update(ord(x) for x in others if len(x) == 1)
    cand |= set(np.flatnonzero(regex_mask(r"(?i:\p{Lu})") | regex_mask(r"\p{Lt}")).tolist())
    cand = sorted(cand)
    cand = np.array(cand, dtype=np.int64)
    outside = np.zeros(N_CODE_POINTS, dtype=bool)
    spans = ranges(cand)
    for k in range(0, len(spans), 100):  # (Oniguruma takes a limited number of ranges in a class)
        part = "".join(rf"\x{{{a:X}}}-\x{{{b:X}}}" for a, b in spans[k : k + 100])
        outside |= peer.mask(f"(?i:[{part}])")
    outside &= ~full(np.isin(CPS, cand))
    if outside.any():
        raise SystemExit(f"case partners outside the candidates: {np.flatnonzero(outside)[:10]}")
    peer_case = case_classes(peer, cand)
    rx_case = case_classes(None, cand)
    classes = sorted({tuple(sorted(v)) for v in peer_case.values() if len(v) > 1})
    icase_differs = sorted(c for c in cand.tolist() if peer_case[c] != rx_case[c] and not unassigned[c])
    # recategorized: assigned to both, another category; proxy: the nearest code point the regex
    # module sees with the peer's category and the same measured items, caseless when it is
    changed = np.flatnonzero((pc != rc) & ~unassigned & (pc >= 0))
    changed = changed[(changed < 0xD800) | (changed > 0xDFFF)]
    rec = []
    for c in changed.tolist():
        want = [peer_items[i][c] for i in ITEMS]
        caseless = len(peer_case.get(c, {c})) <= 1
        ok = (rc == pc[c]) & ~unassigned
        ok[changed] = False
        for p in sorted(np.flatnonzero(ok).tolist(), key=lambda p: abs(p - c)):
            if [rx_items[i][p] for i in ITEMS] == want and (not caseless or len(rx_case.get(p, {p})) <= 1):
                rec.append([c, p])
                break
        else:
            raise SystemExit(f"no proxy for U+{c:04X}")
    # residuals per item after the model
    items = {}
    for item in keys:
        model = rx_items[item].copy()
        model[unassigned] = rx_items[item][0x0378]
        for c, p in rec:
            model[c] = rx_items[item][p]
        flips = np.flatnonzero((model != peer_items[item])[: N_CODE_POINTS])
        flips = flips[(flips < 0xD800) | (flips > 0xDFFF)]
        items[item] = ranges(flips)
        if flips.size:
            print(f"  {item}: {flips.size} code points beyond the model: {[hex(x) for x in flips[:8]]}")
    # (?i:...) on properties: on their own, and in a class
    closes = not np.array_equal(peer.mask(r"(?i:\p{Lu})"), peer_items[r"\p{Lu}"])
    closes_in_class = not np.array_equal(peer.mask(r"(?i:[\p{Lu}])"), peer_items[r"[\p{Lu}]"])
    print(f"  {int(unassigned.sum())} unassigned, {len(rec)} recategorized {rec}, {len(classes)} case classes, "
          f"{len(icase_differs)} case differences, (?i:) closes properties: {closes}, in a class: {closes_in_class} ({time.time() - t0:.0f} s)")
    return {
        "source": peer.source,
        "regex_module": regex.__version__,
        "measured": datetime.date.today().isoformat(),
        "script": "tools/gen_unicode_flavours.py",
        "unassigned": ranges(np.flatnonzero(unassigned)),
        "recategorized": rec,
        "items": {k: v for k, v in items.items() if v},
        "case_classes": [list(k) for k in classes],
        "icase_differs": icase_differs,
        "icase_properties": closes,
        "icase_properties_in_class": closes_in_class,
    }


def check(peer, atoms) -> int:
    """Atoms whose segkit mask differs from the peer's (0 expected)."""
    from segkit.runtime.unicode_flavours import atom_mask

    bad = 0
    for text, icase in atoms:
        got = atom_mask(text, icase, peer.name).copy()
        got[0xD800:0xE000] = False
        want = peer.mask(f"(?i:{text})" if icase else text)
        n = int((got != want).sum())
        if n:
            bad += 1
            print(f"  {peer.name} {text!r} icase={icase}: {n} code points differ, "
                  f"{[hex(x) for x in np.flatnonzero(got != want)[:8]]}")
    return bad


def atoms_to_check() -> list[tuple[str, bool]]:
    from segkit.presets.bpe.files import HF_BYTE_LEVEL_PATTERN
    from segkit.presets.bpe.published_patterns import PUBLISHED_PATTERNS
    from segkit.presets.bpe.regex_program import _atoms, _Parser

    keys: dict = {}
    for p in list(PUBLISHED_PATTERNS.values()) + [HF_BYTE_LEVEL_PATTERN]:
        for q in p if isinstance(p, tuple) else (p,):
            _atoms(_Parser(q).parse(), keys)
    extra = [r"\w", r"\W", r"\d", r"\D", r"\S", ".", r"[^\p{L}]", r"\P{L}", r"\p{P}", r"\p{S}", r"\p{Lo}",
             r"[\x{1FA70}-\x{1FAFF}]", r"[^\x{1FA70}-\x{1FAFF}\s]", r"[\w\-]", r"[x\w]", r"\p{Han}", r"[\W]",
             r"[^\w]", r"[\p{L}\d_]"]
    for t in extra:
        keys.setdefault((t, False), 0)
    for t in (r"[a-z]", r"[^a-z]", r"\p{Lu}", r"\p{Ll}", r"[\p{Lu}x]", "k", r"\w", r"[^\p{L}]", r"\P{Ll}", r"[\p{Lu}]",
              r"\W"):
        keys.setdefault((t, True), 0)
    return list(keys)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare the stored file with the peers, write nothing")
    args = ap.parse_args()
    peers = [HF(), Tiktoken()]
    if not args.check:
        data = {p.name: measure(p) for p in peers}
        OUT.write_text(json.dumps(data, ensure_ascii=True, separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")
        from segkit.runtime import unicode_flavours

        unicode_flavours._data.cache_clear()
        unicode_flavours.table.cache_clear()
        unicode_flavours.substitution.cache_clear()
    atoms = atoms_to_check()
    bad = sum(check(p, atoms) for p in peers)
    print(f"{len(atoms)} atoms checked against each peer: {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
