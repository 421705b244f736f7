"""segkit's Unicode normalizers (:mod:`segkit.presets.pipeline.unicode_forms`:
NFC, NFD, NFKC, NFKD, BertNormalizer, Precompiled) against HF ``tokenizers``'
own: the normalized text and, for every normalized character, the span of the
original text it stands for.

HF's reference: a ``PreTokenizedString`` normalized by the HF normalizer,
split into single characters, read with ``get_splits(offset_referential=
"original", offset_type="char")``; segkit's: a ``NormalizedText`` after the
normalizer (its ``text`` and per character ``(starts, ends)``).

Code points.  Every code point but the surrogates (which a Python ``str``
cannot hand to HF) is tried, in order and in hypothesis' texts; none is left
out of the normalization forms, BertNormalizer's cleaning, Chinese characters
and accents, or Precompiled, although Python 3.11's Unicode (14.0) and HF's
crates (9.0 for the normalization forms and StripAccents' marks, 8.0 for
BertNormalizer's categories) disagree on characters assigned since:
unicode_forms corrects for those.  Only lowercasing leaves some out: HF
lowercases (Rust's newer Unicode) 55 characters that Unicode 14.0 does not
assign, where Python's ``str.lower`` leaves them; those (computed here, as
the code points whose HF ``Lowercase`` differs from ``str.lower``) are not
drawn where a lowercase step runs.
"""

from __future__ import annotations

import io
import itertools
import unicodedata
from functools import lru_cache

import pytest

T = pytest.importorskip("tokenizers", reason="HF tokenizers is not installed")
from hypothesis import HealthCheck, example, given, settings, strategies as st  # noqa: E402
from tokenizers import normalizers as N  # noqa: E402

from segkit.presets.pipeline.normalized import NormalizedText  # noqa: E402
from segkit.presets.pipeline.normalizers import read_normalizer  # noqa: E402
from segkit.presets.pipeline.unicode_forms import (  # noqa: E402
    FORMS, bert_normalizer, is_combining_mark, nf_items, nf_normalizer, precompiled)

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
CHUNK = 1 << 15

# ------------------------------------------------------------------ helpers


def hf_spans(norm, text: str) -> tuple[str, list[tuple[int, int]]]:
    """HF's normalized text and the original span of each of its characters."""
    pts = T.PreTokenizedString(text)
    pts.normalize(lambda ns: norm.normalize(ns))
    pts.split(lambda i, ns: ns.split(T.Regex(r"[\s\S]"), "isolated"))
    splits = pts.get_splits(offset_referential="original", offset_type="char")
    return "".join(s for s, _, _ in splits), [tuple(o) for _, o, _ in splits]


def our_spans(norm, text: str) -> tuple[str, list[tuple[int, int]]]:
    t = NormalizedText.of(text)
    norm(t)
    assert len(t.starts) == len(t.ends) == len(t.text), "NormalizedText out of step with its text"
    return t.text, list(zip(t.starts, t.ends))


def check(hf_norm, ours, text: str, what: str = "") -> None:
    """Assert segkit's result is HF's, naming the first difference."""
    want = hf_spans(hf_norm, text)
    got = our_spans(ours, text)
    if got == want:
        return
    (wt, ws), (gt, gs) = want, got
    i = next((i for i in range(min(len(wt), len(gt))) if wt[i] != gt[i] or ws[i] != gs[i]), min(len(wt), len(gt)))
    lo = max(0, i - 3)
    raise AssertionError(
        f"{what}: on {text[:80]!r}{'...' if len(text) > 80 else ''}: first difference at normalized char {i}:\n"
        f"  HF:     {wt[lo:i + 4]!r} {ws[lo:i + 4]}\n  segkit: {gt[lo:i + 4]!r} {gs[lo:i + 4]}\n"
        f"  (lengths: HF {len(wt)}, segkit {len(gt)})")


def check_chunks(hf_norm, ours, text: str, what: str) -> None:
    for i in range(0, len(text), CHUNK):
        check(hf_norm, ours, text[i:i + CHUNK], f"{what}, code points from U+{ord(text[i]):04X}")


@lru_cache(maxsize=1)
def every_code_point() -> str:
    return "".join(map(chr, itertools.chain(range(0xD800), range(0xE000, 0x110000))))


@lru_cache(maxsize=1)
def lowercase_disagrees() -> frozenset:
    """Code points HF's Lowercase maps otherwise than Python's ``str.lower``."""
    low = N.Lowercase()
    bad = frozenset(c for c in every_code_point() if low.normalize_str(c) != c.lower())
    assert all(unicodedata.category(c) == "Cn" for c in bad), \
        f"expected HF and Python to lowercase every assigned character alike, found {sorted(bad)[:10]}"
    return bad


def lowercasable() -> str:
    bad = lowercase_disagrees()
    return "".join(c for c in every_code_point() if c not in bad)


def hf_form(form: str):
    return getattr(N, form)()


# Characters that stress normalization (hypothesis draws from them and from
# every other code point).
STRESS = list(
    # combining marks of many classes (230 above, 220 below, 202, 216, 240,
    # 1, 7, 8, 9, Hebrew 10-26, Thai, Tibetan, Arabic, ideographic 218-228)
    "\u0300\u0301\u0302\u0303\u0308\u030a\u030c\u0316\u0323\u0327\u0328\u031b\u0345\u0334\u0338"
    "\u093c\u094d\u3099\u309a\u05b0\u05b4\u05bc\u05c1\u05c2\u0e48\u0e38\u0f71\u0f72\u0f74\u0f80"
    "\u0f73\u0f75\u0f81\u064b\u0651\u0670\u302a\u302b\u302e\u1dce\u20d0\u20e3\u0344\u0340\u0341"
    "\u0343\u0374\u0387"
    # bases and precomposed letters
    "aeiouAEOUCcnsSzZ\u00e9\u00c5\u212b\u1ec7\u01d6\u1e08\u1e69\u0390\u03b1\u03c9\u03a9\u2126\u1f80"
    "\u00df\u0130\u0131\u017f\u1e9b\u00c7\u0958\u0929\u09cb\u0b4b\u0b47\u0b3e\u0b57\u09c7\u09be"
    "\u0cca\u0cc6\u0cc2\u0cd5\u0dda\u0dd9\u0dca\u1b3b\u1b35\u0915\u0937\u3046\u304b\u30ab\u30a6"
    # Hangul: syllables LV and LVT, jamo L, V, T (T_BASE U+11A7 itself), old jamo, compatibility jamo
    "\uac00\uac01\ud7a3\ub098\u1100\u1112\u1161\u1175\u11a7\u11a8\u11c2\u1113\u3131\u314f"
    # compatibility characters
    "\ufb01\ufb03\u2460\u2474\u2488\uff76\uff9e\uff9f\uff21\uff41\u337f\u3231\u00b2\u00bd\u2103"
    "\u216b\ufdfa\ufe35\u1e9e\u01c4\u01c5\u2002\u00aa\u2153\u3392\u32ff\u1d40\u02b0\u0149"
    # CJK, compatibility ideographs (singletons), supplementary ideographs
    "\u4e2d\u6587\u3400\u9fff\uf900\ufa6c\u3005\u3000"
    # emoji, ZWJ sequences, modifiers, flags, variation selectors
    "\U0001f600\U0001f44d\U0001f3fd\u200d\U0001f468\U0001f469\U0001f1eb\U0001f1f7\u2764\ufe0f\ufe0e"
    # controls and format characters, white space of all kinds
    "\x00\x01\x08\x0b\x0c\x1e\x1f\x7f\x85\x9f\u00ad\u200b\u200c\u200e\u2028\u2029\u2060\ufeff\ufffd"
    " \t\n\r\u00a0\u1680\u2000\u2007\u200a\u202f\u205f\u2581\ue000\U000f0000"
    # assigned after Unicode 9.0 (8.0): the crates do not know them
    "\u1ac0\u08d3\u0898\u1df9\u1dfa\u0eba\u0d3b\u32ff\U00011938\U00011935\U00011930\U0001e130"
    "\u0890\u08e2\U00013430\u1734\u1cf2\u1cf7\u08d4\U0001fbf0\ua7f2"
    # unassigned
    "\u0378\U0001e0ff\U000e01f0"
) + ["\U0001d400", "\U0002f800", "\U0002fa1d"]


def texts(alphabet: list[str] = STRESS, exclude: frozenset = frozenset(), max_size: int = 30):
    """Texts of pieces of ``alphabet`` and of any other code point but the
    surrogates and ``exclude``."""
    pieces = st.one_of(st.sampled_from([c for c in alphabet if c not in exclude]),
                       st.characters(blacklist_categories=("Cs",)).filter(lambda c: c not in exclude))
    return st.lists(pieces, max_size=max_size).map("".join)


FIXED = [
    "", "a", "e\u0301", "\u00e9", "e\u0301\u0316x", "e\u0316\u0301", "\u00e9\u0323", "a\u0328\u0301\u0323b",
    "\u1100\u1161\u11a8", "\uac00\u11a8", "\uac00\u11a7", "\u1100\u1161\u11a7", "\uac01\u11a8", "\u1100\u1100\u1161",
    "\ufb01", "\u2460\u2461", "\uff76\uff9e", "\u30ab\u3099", "\u0344\u0301", "\u0f73\u0f71", "\u212b\u2126",
    "\u0b47\u0b3e\u0b57", "\u09c7\u09be", "A\u0301\u0301\u0301", "s\u0323\u0307", "\u1e9b\u0323",
    "\u03b1\u0345\u0313\u0301", "\ufdfa!", "\u3392x", "\U0001f468\u200d\U0001f469", "x\u0301\u00e9\u0301y",
    "\u0301\u0301a", "\u0301", "a\u0301\u1ac0\u0301", "\U00011935\U00011930", "\u0958\u093c", "\u0338=",
    "\u2260", "\u00c7\u0301", "C\u0327\u0301", "C\u0301\u0327",
]


# ------------------------------------------------------- normalization forms
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("text", FIXED)
def test_fixed_examples(form: str, text: str) -> None:
    check(hf_form(form), nf_normalizer(form), text, form)


def test_known_hf_alignments() -> None:
    """What HF gives, written out (so that these hold without HF too)."""
    # a reordered mark takes the span of the position it lands on; a mark
    # composed past one left between loses its span
    assert our_spans(nf_normalizer("NFD"), "\u00e9\u0323") == ("e\u0323\u0301", [(0, 1), (1, 2), (1, 2)])
    assert our_spans(nf_normalizer("NFC"), "e\u0301\u0316x") == ("\u00e9\u0316x", [(0, 1), (2, 3), (3, 4)])
    assert nf_items("\u1100\u1161\u11a8", "NFC") == [("\uac01", -2)]
    assert nf_items("\ufb01", "NFKC") == [("f", 0), ("i", 1)]
    # U+11938 = U+11935 U+11930 since Unicode 13: HF's Unicode 9.0 neither
    # composes nor decomposes it
    assert nf_items("\U00011938", "NFD") == [("\U00011938", 0)]
    assert nf_items("\U00011935\U00011930", "NFC") == [("\U00011935", 0), ("\U00011930", 0)]


@pytest.mark.parametrize("form", FORMS)
def test_every_code_point_in_order(form: str) -> None:
    """All code points, in order: each one's decomposition, and the runs of
    combining marks of a block reordered and composed together."""
    check_chunks(hf_form(form), nf_normalizer(form), every_code_point(), form)


@lru_cache(maxsize=1)
def interesting() -> str:
    """Code points with a decomposition or a combining class (in Python's
    data), the Hangul syllables and jamo, each after ``a`` and before a
    class-1 mark (which shows the class HF gives it) and a newline."""
    cs = [c for c in every_code_point()
          if unicodedata.decomposition(c) or unicodedata.combining(c)
          or 0xAC00 <= ord(c) < 0xD7A4 or 0x1100 <= ord(c) < 0x1200]
    return "".join(f"a{c}\u0334\n" for c in cs)


@pytest.mark.parametrize("form", FORMS)
def test_every_decomposable_or_combining_character_alone(form: str) -> None:
    check_chunks(hf_form(form), nf_normalizer(form), interesting(), form)


@pytest.mark.parametrize("form", FORMS)
@SETTINGS
@given(text=texts())
def test_hypothesis_forms(form: str, text: str) -> None:
    check(hf_form(form), nf_normalizer(form), text, form)


@pytest.mark.parametrize("form", FORMS)
@SETTINGS
@given(text=texts(max_size=8).map(lambda s: s * 3))
def test_hypothesis_forms_twice_normalized(form: str, text: str) -> None:
    """A form applied to a text it already changed (HF's alignments then
    compose)."""
    def twice(t: NormalizedText) -> None:
        nf_normalizer(form)(t)
        nf_normalizer(form)(t)

    check(N.Sequence([hf_form(form), hf_form(form)]), twice, text, form + " twice")


# ----------------------------------------------------------------- sequences
def _lower(t: NormalizedText) -> None:
    t.map_chars(str.lower)


def _strip_accents(t: NormalizedText) -> None:
    t.keep(lambda c: not is_combining_mark(c))


SEQUENCES = {
    "NFD StripAccents Lowercase": ([N.NFD(), N.StripAccents(), N.Lowercase()],
                                   [nf_normalizer("NFD"), _strip_accents, _lower]),
    "NFKC Lowercase": ([N.NFKC(), N.Lowercase()], [nf_normalizer("NFKC"), _lower]),
    "NFKD StripAccents NFC": ([N.NFKD(), N.StripAccents(), N.NFC()],
                              [nf_normalizer("NFKD"), _strip_accents, nf_normalizer("NFC")]),
    "NFC NFKD": ([N.NFC(), N.NFKD()], [nf_normalizer("NFC"), nf_normalizer("NFKD")]),
    "Bert NFC": ([N.BertNormalizer(), N.NFC()], [bert_normalizer(), nf_normalizer("NFC")]),
    # segkit's own readers between the forms
    "NFKC Replace Prepend Strip": (
        [N.NFKC(), N.Replace(" ", "\u2581"), N.Prepend("\u2581"), N.Strip()],
        [nf_normalizer("NFKC"), read_normalizer({"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}, "t"),
         read_normalizer({"type": "Prepend", "prepend": "\u2581"}, "t"), read_normalizer({"type": "Strip"}, "t")]),
}


def _chain(steps):
    def run(t: NormalizedText) -> None:
        for step in steps:
            step(t)

    return run


@pytest.mark.parametrize("name", SEQUENCES)
@SETTINGS
@given(text=texts(exclude=lowercase_disagrees()))
@example(text="\u1e9b\u0323 \u00c5\ufb01 \u4e2dX")
def test_hypothesis_sequences(name: str, text: str) -> None:
    hf_steps, ours = SEQUENCES[name]
    check(N.Sequence(hf_steps), _chain(ours), text, name)


def test_strip_accents_marks_of_every_code_point() -> None:
    """StripAccents (with is_combining_mark) after NFD, over every code point."""
    check_chunks(N.Sequence([N.NFD(), N.StripAccents()]), _chain([nf_normalizer("NFD"), _strip_accents]),
                 every_code_point(), "NFD StripAccents")


# ------------------------------------------------------------ BertNormalizer
BERT_OPTIONS = list(itertools.product([True, False], [True, False], [None, True, False], [True, False]))


def hf_bert(options):
    ct, ch, sa, lc = options
    return N.BertNormalizer(clean_text=ct, handle_chinese_chars=ch, strip_accents=sa, lowercase=lc)


@pytest.mark.parametrize("options", [(True, False, False, False), (False, False, True, False), (True, True, None, True)],
                         ids=str)
def test_bert_every_code_point(options) -> None:
    check_chunks(hf_bert(options), bert_normalizer(*options), lowercasable(), f"BertNormalizer{options}")


@pytest.mark.parametrize("options", BERT_OPTIONS, ids=str)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=texts(exclude=lowercase_disagrees()))
@example(text="\x00A\u00c9\ufffd\u4e2d\u6587\t\n\u3000\u200b\u0301\u00adb\U00020000x\u1734\u08e2")
def test_hypothesis_bert(options, text: str) -> None:
    check(hf_bert(options), bert_normalizer(*options), text, f"BertNormalizer{options}")


def test_bert_known_alignments() -> None:
    # the spaces around a Chinese character take its span; strip_accents
    # follows lowercase when it is None
    assert our_spans(bert_normalizer(False, True, False, False), "a\u4e2d") == \
        ("a \u4e2d ", [(0, 1), (1, 2), (1, 2), (1, 2)])
    assert our_spans(bert_normalizer(False, False, None, True), "\u00c9") == ("e", [(0, 1)])
    assert our_spans(bert_normalizer(False, False, None, False), "\u00c9") == ("\u00c9", [(0, 1)])


# --------------------------------------------------------------- Precompiled
#: A charsmap of our own rules (source code points -> target), for the cases
#: the built-in ones do not show: a rule removing characters (also at the
#: start), a rule on a prefix of a cluster, rules longer than a character.
CUSTOM_RULES = {"1E": "", "78": "", "FB01": "66 69", "65 301": "45", "61 301": "62 63 64", "2460": "31",
                "2122": "54 4D", "4E2D 6587": "7E", "E9": "65 301 301", "1100 1161": "41"}


class Charsmaps(dict):
    def __repr__(self) -> str:
        return f"Charsmaps({', '.join(self)})"


@pytest.fixture(scope="module")
def charsmaps(tmp_path_factory) -> dict[str, bytes]:
    """Charsmaps built by SentencePiece: nmt_nfkc, nfkc_cf and the custom rules."""
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece is not installed")
    pytest.importorskip("google.protobuf", reason="protobuf is not installed")
    from sentencepiece import sentencepiece_model_pb2 as pb

    tsv = tmp_path_factory.mktemp("rules") / "rules.tsv"
    tsv.write_text("".join(f"{k}\t{v}\n" for k, v in CUSTOM_RULES.items()), encoding="utf-8")
    out = Charsmaps()
    for name, option in [("nmt_nfkc", {"normalization_rule_name": "nmt_nfkc"}),
                         ("nfkc_cf", {"normalization_rule_name": "nfkc_cf"}),
                         ("custom", {"normalization_rule_tsv": str(tsv)})]:
        writer = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(["hello world", "abc def"] * 20), model_writer=writer,
                                       model_type="char", vocab_size=20, hard_vocab_limit=False, num_threads=1,
                                       minloglevel=2, **option)
        proto = pb.ModelProto()
        proto.ParseFromString(writer.getvalue())
        out[name] = proto.normalizer_spec.precompiled_charsmap
        assert out[name], f"expected a charsmap for {name}, found none"
    return out


@pytest.mark.parametrize("name", ["nmt_nfkc", "nfkc_cf"])
def test_precompiled_every_code_point_in_order(charsmaps, name: str) -> None:
    cm = charsmaps[name]
    check_chunks(N.Precompiled(cm), precompiled(cm), every_code_point(), f"Precompiled {name}")


PRECOMPILED_FIXED = ["\x1eab", "x\x1eab", "xx", "\x1e\x1ex", "\ufb01\u0301x", "e\u0301\u0323", "e\u0301\u0323\u0308",
                     "a\u0301", "\u4e2d\u6587", "\u2122x", "\u00e9", "\u1100\u1161", "\uac00", "a\x1e\x1eb\u2460",
                     "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f1eb\U0001f1f7\U0001f1eb", "\r\n\u0301",
                     "\u0915\u094d\u0937", "\uff76\uff9e", "\u2474\u00bd \u3000x"]


@pytest.mark.parametrize("name", ["nmt_nfkc", "nfkc_cf", "custom"])
@pytest.mark.parametrize("text", PRECOMPILED_FIXED)
def test_precompiled_fixed_examples(charsmaps, name: str, text: str) -> None:
    cm = charsmaps[name]
    check(N.Precompiled(cm), precompiled(cm), text, f"Precompiled {name}")


def test_precompiled_known_alignments(charsmaps) -> None:
    run = precompiled(charsmaps["custom"])
    # a removed first character shifts the spans of those after
    assert our_spans(run, "\x1eab") == ("ab", [(0, 1), (1, 2)])
    # an empty replacement removes after the last character produced
    assert our_spans(run, "\u2122x") == ("TM", [(0, 1), (1, 2)])
    # the shortest rule on a prefix of a short cluster replaces the cluster
    assert our_spans(run, "e\u0301\u0323") == ("E", [(0, 1)])
    assert our_spans(run, "\ufb01\u0301") == ("fi", [(0, 1), (1, 2)])
    # clusters of 6 bytes or more go character by character
    assert our_spans(run, "e\u0301\u0323\u0308")[0] == "e\u0301\u0323\u0308"


@pytest.mark.parametrize("name", ["nmt_nfkc", "nfkc_cf", "custom"])
@SETTINGS
@given(text=texts(STRESS + ["x", "\u2122", "\u00e9", "\u1100\u1161", "e\u0301\u0323"]))
def test_hypothesis_precompiled(charsmaps, name: str, text: str) -> None:
    cm = charsmaps[name]
    check(N.Precompiled(cm), precompiled(cm), text, f"Precompiled {name}")


# -------------------------------------------------------------------- errors
def test_errors_name_what_was_expected_and_found() -> None:
    with pytest.raises(ValueError, match=r"form must be one of NFC, NFD, NFKC, NFKD, found 'NFX'"):
        nf_items("a", "NFX")
    with pytest.raises(ValueError, match=r"found 'nfc'"):
        nf_normalizer("nfc")
    with pytest.raises(TypeError, match=r"text must be a str, found bytes"):
        nf_items(b"a", "NFC")
    with pytest.raises(TypeError, match=r"BertNormalizer strip_accents: expected true, false or None, found 1"):
        bert_normalizer(True, True, 1, True)
    with pytest.raises(TypeError, match=r"BertNormalizer lowercase: expected true or false, found 'yes'"):
        bert_normalizer(True, True, None, "yes")
    with pytest.raises(ValueError, match=r"expected a charsmap, found none"):
        precompiled(b"")
    with pytest.raises(TypeError, match=r"expected bytes, found str"):
        precompiled("AAAA")
    with pytest.raises(ValueError, match=r"precompiled_charsmap"):
        precompiled(b"\x10\x00\x00\x00abc")
