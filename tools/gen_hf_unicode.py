"""Measure HuggingFace tokenizers' per-character BERT behaviour into data.

HF's ``BertNormalizer`` and ``BertPreTokenizer`` classify characters with
Unicode 8.0 tables (older than Python's ``unicodedata`` and the ``regex``
module), so segkit's HF flavour uses these measured tables instead:

* ``punctuation``: characters BertPreTokenizer makes words of their own;
* ``control``: characters ``clean_text`` deletes;
* ``strip``: what ``strip_accents`` turns each character into (NFD, then
  nonspacing marks dropped), where that is not the character itself
  (Hangul syllables excepted: their decomposition is arithmetic);
* ``lower``: what ``lowercase`` turns each character into, where it changes.

Every code point is probed on its own (``"a" + c + "b"`` for the
classifications).  Run from the repository root with HF tokenizers
installed; writes segkit/presets/wordpiece/hf_unicode.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import tokenizers
from tokenizers import normalizers, pre_tokenizers

OUT = Path(__file__).resolve().parents[1] / "segkit" / "presets" / "wordpiece" / "hf_unicode.json"


def ranges(cps: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for c in cps:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def main() -> int:
    pre = pre_tokenizers.BertPreTokenizer()
    clean = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    strip = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False)
    lower = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=True)
    punct, control = [], []
    strip_map: dict[str, str] = {}
    lower_map: dict[str, str] = {}
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        words = [w for w, _ in pre.pre_tokenize_str("a" + c + "b")]
        if words == ["a", c, "b"]:
            punct.append(cp)
        if clean.normalize_str("a" + c + "b") == "ab":
            control.append(cp)
        if not 0xAC00 <= cp <= 0xD7A3:
            s = strip.normalize_str(c)
            if s != c:
                strip_map[str(cp)] = s
        low = lower.normalize_str(c)
        if low != c:
            lower_map[str(cp)] = low
    data = {
        "source": f"measured from HuggingFace tokenizers {tokenizers.__version__} by tools/gen_hf_unicode.py",
        "punctuation": ranges(punct),
        "control": ranges(control),
        "strip": strip_map,
        "lower": lower_map,
    }
    OUT.write_text(json.dumps(data, ensure_ascii=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(punct)} punctuation, {len(control)} control, {len(strip_map)} strip, {len(lower_map)} lower")
    return 0


if __name__ == "__main__":
    sys.exit(main())
