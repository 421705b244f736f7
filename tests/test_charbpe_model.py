"""segkit.presets.charbpe: HuggingFace ``tokenizers``' BPE model over
characters, against a naive reference written here and against
``tokenizers.models.BPE`` itself (through ``tokenizers.Tokenizer`` with no
normalizer or pre-tokenizer, one word per ``encode``)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segkit.presets.charbpe import CharBPE
from segkit.presets.charbpe import kernels as K

HAS_HF = importlib.util.find_spec("tokenizers") is not None

OPTIONS = ("unk_token", "byte_fallback", "fuse_unk", "ignore_merges", "continuing_subword_prefix",
           "end_of_word_suffix")


# ---------------------------------------------------------------- reference
class UnkMissing(Exception):
    """The reference needed the unknown token and the vocabulary has none."""


def reference_encode(vocab: dict[str, int], merges: list[tuple[str, str]], word: str, *, unk_token=None,
                     byte_fallback=False, fuse_unk=False, ignore_merges=False, continuing_subword_prefix=None,
                     end_of_word_suffix=None) -> list[tuple[int, int, int]]:
    """(id, start, end) per token of ``word``, written from HF's description
    with nothing clever: the naive merge loop, and HF's offset conversion
    spelt out (byte offsets -> normalized alignments -> characters)."""
    prefix, suffix = continuing_subword_prefix, end_of_word_suffix
    cut = len(prefix.encode()) if prefix else 0
    table = {}
    for rank, (a, b) in enumerate(merges):
        new = (a.encode() + b.encode()[cut:]).decode()
        table[(vocab[a], vocab[b])] = (rank, vocab[new])  # a pair given again: the last one counts
    if word == "":
        return []
    raw = word.encode("utf-8", "surrogatepass")
    if ignore_merges and word in vocab:
        symbols = [(vocab[word], len(raw))]
    else:
        symbols = []  # (id, length in bytes as HF counts it)
        pending = None
        for i, ch in enumerate(word):
            s = ch
            if i > 0 and prefix is not None:
                s = prefix + s
            if i == len(word) - 1 and suffix is not None:
                s = s + suffix
            n = len(ch.encode("utf-8", "surrogatepass"))
            if s in vocab:
                if pending:
                    symbols.append(pending)
                    pending = None
                symbols.append((vocab[s], n))
                continue
            if byte_fallback:
                names = [f"<0x{c:02X}>" for c in s.encode("utf-8", "surrogatepass")]
                if all(x in vocab for x in names):
                    symbols += [(vocab[x], 1) for x in names]
                    continue
            if unk_token is not None:
                if unk_token not in vocab:
                    raise UnkMissing(unk_token)
                if pending and fuse_unk:
                    pending = (pending[0], pending[1] + n)
                    continue
                if pending:
                    symbols.append(pending)
                pending = (vocab[unk_token], n)
        if pending:
            symbols.append(pending)
        while True:
            found = [(table[(x[0], y[0])][0], i) for i, (x, y) in enumerate(zip(symbols, symbols[1:]))
                     if (x[0], y[0]) in table]
            if not found:
                break
            _, i = min(found)
            x, y = symbols[i], symbols[i + 1]
            symbols[i : i + 2] = [(table[(x[0], y[0])][1], x[1] + y[1])]
    # Byte offsets (running sums of the lengths), then tokenizers' conversion.
    align = []
    char_of = {}
    at = 0
    for c, ch in enumerate(word):
        n = len(ch.encode("utf-8", "surrogatepass"))
        align += [(at, at + n)] * n
        for j in range(n):
            char_of[at + j] = c
        at += n
    out = []
    pos = 0
    for t, n in symbols:
        b0, b1 = pos, pos + n
        pos = b1
        if b1 <= len(raw):  # NormalizedString.convert_offsets (Normalized -> Original)
            b0, b1 = align[b0][0], align[b1 - 1][1]
        if b0 in char_of:  # BytesToCharOffsetConverter.convert
            start = char_of[b0]
            if b1 in char_of:
                end = char_of[b1]
            else:
                end = char_of.get(b1 - 1, start + 1) + 1
            b0, b1 = start, end
        out.append((t, b0, b1))
    return out


def hf_encode(vocab, merges, words, **options):
    """Per word: HF's list of (id, start, end), or "unk" when it raises for
    the missing unknown token; "build" when the model cannot be built."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    options = {k: v for k, v in options.items() if v is not None}  # its unk_token=None is a TypeError
    try:
        tok = tokenizers.Tokenizer(tokenizers.models.BPE(vocab, merges, **options))
    except BaseException as e:  # noqa: BLE001 - PanicException is a BaseException
        if isinstance(e, (KeyboardInterrupt, SystemExit, TypeError)):
            raise
        return "build"
    out = []
    for word in words:
        try:
            enc = tok.encode(word)
        except Exception as e:  # noqa: BLE001
            assert "not found in the vocabulary" in str(e), e
            out.append("unk")
            continue
        out.append([(i, s, e) for i, (s, e) in zip(enc.ids, enc.offsets)])
    return out


def ours(bpe: CharBPE, words: list[str]) -> list[list[tuple[int, int, int]]]:
    ids, starts, ends, splits = bpe.encode_words(words)
    assert ids.dtype == np.int32 and starts.dtype == np.int32 and ends.dtype == np.int32
    assert splits.dtype == np.int64 and splits.shape == (len(words) + 1,) and splits[0] == 0
    assert splits[-1] == ids.size == starts.size == ends.size
    return [list(zip(ids[a:b].tolist(), starts[a:b].tolist(), ends[a:b].tolist()))
            for a, b in zip(splits[:-1], splits[1:])]


def ours_per_word(bpe: CharBPE, words: list[str]):
    """As :func:`ours`, word by word, with "unk" where it raises for the
    missing unknown token."""
    out = []
    for w in words:
        try:
            out.append(ours(bpe, [w])[0])
        except ValueError as e:
            assert "is not in the vocabulary" in str(e)
            out.append("unk")
    return out


def reference_per_word(vocab, merges, words, **options):
    out = []
    for w in words:
        try:
            out.append(reference_encode(vocab, merges, w, **options))
        except UnkMissing:
            out.append("unk")
    return out


# --------------------------------------------------------------- generators
ALPHABET = "ab#é😀"
EXTRA = "xz\n"  # never in the vocabulary as characters


def _merged(a: str, b: str, cut: int) -> str | None:
    raw = b.encode()
    if len(raw) < cut:
        return None
    try:
        return a + raw[cut:].decode()
    except UnicodeDecodeError:
        return None


@st.composite
def models(draw, shared_ids: bool = False):
    """(vocab, merges, options): a consistent random model (every merge's
    parts and result are tokens) with random options."""
    prefix = draw(st.sampled_from([None, None, "##", "é", ""]))
    suffix = draw(st.sampled_from([None, None, "</w>", "😀"]))
    unk = draw(st.sampled_from([None, "<unk>", "<unk>", "<unk>", "u"]))
    options = dict(unk_token=unk, byte_fallback=draw(st.booleans()), fuse_unk=draw(st.booleans()),
                   ignore_merges=draw(st.booleans()), continuing_subword_prefix=prefix, end_of_word_suffix=suffix)
    tokens: list[str] = []

    def add(s: str) -> None:
        if s not in tokens:
            tokens.append(s)

    for ch in ALPHABET:
        for spelt in (ch, (prefix or "") + ch, ch + (suffix or ""), (prefix or "") + ch + (suffix or "")):
            if draw(st.integers(0, 2)):
                add(spelt)
    if options["byte_fallback"] or draw(st.booleans()):
        needed = sorted(set((ALPHABET + EXTRA + (prefix or "") + (suffix or "")).encode()))
        for b in needed:
            if draw(st.integers(0, 4)):
                add(f"<0x{b:02X}>")
    if unk is not None and draw(st.integers(0, 5)):
        add(unk)
    cut = len(prefix.encode()) if prefix else 0
    merges: list[tuple[str, str]] = []
    if tokens:
        for _ in range(draw(st.integers(0, 14))):
            a = draw(st.sampled_from(tokens))
            b = draw(st.sampled_from(tokens))
            new = _merged(a, b, cut)
            if new is None:
                continue
            add(new)
            merges.append((a, b))
        if merges and draw(st.booleans()):  # a pair listed again (its last rank counts)
            merges.append(draw(st.sampled_from(merges)))
    if shared_ids:
        ids = draw(st.lists(st.integers(0, max(1, len(tokens) // 2)), min_size=len(tokens), max_size=len(tokens)))
    else:
        ids = draw(st.permutations(range(len(tokens))))
        offset = draw(st.sampled_from([0, 0, 7, 1000]))
        ids = [i + offset for i in ids]
    vocab = dict(zip(tokens, ids))
    return vocab, merges, options


@st.composite
def words_for(draw, vocab):
    keys = sorted(vocab)
    text = st.text(alphabet=ALPHABET + EXTRA, max_size=9)
    one = st.one_of(text, st.sampled_from(keys), text) if keys else text
    return draw(st.lists(one, max_size=6))


# -------------------------------------------------------------------- tests
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_models_match_reference_and_hf(data):
    vocab, merges, options = data.draw(models())
    words = data.draw(words_for(vocab))
    bpe = CharBPE(vocab, merges, **options)
    expected = reference_per_word(vocab, merges, words, **options)
    got = ours_per_word(bpe, words)
    assert got == expected
    if "unk" not in got:
        assert ours(bpe, words) == got  # one batch = the words one at a time
    if HAS_HF:
        assert hf_encode(vocab, merges, words, **options) == got


@pytest.mark.skipif(not HAS_HF, reason="tokenizers is not installed")
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_models_with_shared_ids_match_hf(data):
    """Two tokens may share an id (HF keys merges by ids, as segkit does)."""
    vocab, merges, options = data.draw(models(shared_ids=True))
    words = data.draw(words_for(vocab))
    assert ours_per_word(CharBPE(vocab, merges, **options), words) == hf_encode(vocab, merges, words, **options)


def test_a_rank_decides():
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}
    assert ours(CharBPE(vocab, [("a", "b"), ("b", "c")]), ["abc"]) == [[(3, 0, 2), (2, 2, 3)]]
    assert ours(CharBPE(vocab, [("b", "c"), ("a", "b")]), ["abc"]) == [[(0, 0, 1), (4, 1, 3)]]
    # Equal ranks: the leftmost pair.
    assert ours(CharBPE({"a": 0, "aa": 1}, [("a", "a")]), ["aaa"]) == [[(1, 0, 2), (0, 2, 3)]]


def test_stale_pairs_are_not_merged():
    """(a, b) is queued first but b merges with c before: (a, bc), of a
    later rank than (bc, d), must wait."""
    vocab = {t: i for i, t in enumerate(["a", "b", "c", "d", "bc", "ab", "bcd", "abc"])}
    merges = [("b", "c"), ("a", "b"), ("bc", "d"), ("a", "bc")]
    expected = [[(0, 0, 1), (6, 1, 4)], [(7, 0, 3)]]
    assert ours(CharBPE(vocab, merges), ["abcd", "abc"]) == expected
    assert [reference_encode(vocab, merges, w) for w in ["abcd", "abc"]] == expected
    if HAS_HF:
        assert hf_encode(vocab, merges, ["abcd", "abc"]) == expected


def test_merge_listed_twice_keeps_its_last_rank():
    vocab = {"a": 1, "b": 2, "c": 3, "ab": 4, "bc": 5}
    merges = [("a", "b"), ("b", "c"), ("a", "b")]
    assert ours(CharBPE(vocab, merges), ["abc"]) == [[(1, 0, 1), (5, 1, 3)]]
    if HAS_HF:
        assert hf_encode(vocab, merges, ["abc"]) == [[(1, 0, 1), (5, 1, 3)]]


def test_empty_batch_and_empty_words():
    bpe = CharBPE({"a": 0, "": 1}, [], ignore_merges=True)
    ids, starts, ends, splits = bpe.encode_words([])
    assert ids.size == starts.size == ends.size == 0 and splits.tolist() == [0]
    assert ours(bpe, ["", "a", "", ""]) == [[], [(0, 0, 1)], [], []]


def _doubling_model(levels: int):
    vocab = {"a" * (1 << j): j for j in range(levels + 1)}
    merges = [("a" * (1 << j), "a" * (1 << j)) for j in range(levels)]
    return vocab, merges


def _doubling_expected(n: int, levels: int):
    """Merges (t, t) level by level, each level left to right."""
    sizes = [1] * n
    for j in range(levels):
        t = 1 << j
        out = []
        i = 0
        while i < len(sizes):
            if sizes[i] == t and i + 1 < len(sizes) and sizes[i + 1] == t:
                out.append(2 * t)
                i += 2
            else:
                out.append(sizes[i])
                i += 1
        sizes = out
    toks = []
    at = 0
    for s in sizes:
        toks.append((s.bit_length() - 1, at, at + s))
        at += s
    return toks


@pytest.mark.parametrize("n", [10**4, 10**5])
def test_long_word_of_one_char(n):
    vocab, merges = _doubling_model(17)
    word = "a" * n
    got = ours(CharBPE(vocab, merges), [word, word[:999]])
    assert got == [_doubling_expected(n, 17), _doubling_expected(999, 17)]
    if HAS_HF:
        assert hf_encode(vocab, merges, [word]) == got[:1]


def test_long_word_of_mixed_chars_matches_hf():
    pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    vocab = {c: i for i, c in enumerate("abcd")}
    merges = []
    for a, b in [("a", "b"), ("c", "d"), ("ab", "cd"), ("b", "c"), ("abcd", "abcd"), ("d", "a"), ("bc", "da")]:
        vocab.setdefault(a + b, len(vocab))
        merges.append((a, b))
    rng = np.random.default_rng(5)
    word = "".join(rng.choice(list("abcd"), 50_000))
    assert ours(CharBPE(vocab, merges), [word]) == hf_encode(vocab, merges, [word])


@pytest.mark.parametrize("options", [
    dict(unk_token="<unk>", byte_fallback=True, fuse_unk=True),  # Llama 2, Mistral 7B
    dict(unk_token="<unk>", byte_fallback=True, ignore_merges=True),
    dict(unk_token="<unk>", continuing_subword_prefix="##", end_of_word_suffix="</w>"),
])
def test_trained_model_on_multilingual_text_matches_hf(options):
    """A BPE trained by ``tokenizers`` on the bundled multilingual sample
    (a small alphabet: many unknown characters), whole lines as one word
    (Llama 2's legacy files have no pre-tokenizer) and their pieces."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed")
    import json
    from pathlib import Path

    lines = [json.loads(x)["text"].replace(" ", "\u2581")
             for x in (Path(__file__).parent / "data" / "multilingual-sample.jsonl").read_text("utf-8").splitlines()]
    affixes = {k: v for k, v in options.items() if k in ("continuing_subword_prefix", "end_of_word_suffix")}
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=1500, limit_alphabet=300, special_tokens=["<unk>"],
                                             show_progress=False, **affixes)
    tok = tokenizers.Tokenizer(tokenizers.models.BPE(unk_token="<unk>", **affixes))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Split("\u2581", "merged_with_next")
    tok.train_from_iterator(lines[:200], trainer)
    model = json.loads(tok.to_str())["model"]
    vocab = model["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    assert len(merges) > 500
    pieces = [p for line in lines for p in line.split("\u2581") if p]
    words = lines + pieces
    got = ours(CharBPE(vocab, merges, **options), words)
    assert got == hf_encode(vocab, merges, words, **options)
    assert sum(len(g) for g in got) < sum(map(len, words))  # merges happened


def test_byte_fallback_of_a_four_byte_emoji():
    vocab = {"<unk>": 0, "a": 1}
    vocab.update({f"<0x{b:02X}>": 10 + b for b in range(256)})
    bpe = CharBPE(vocab, [], unk_token="<unk>", byte_fallback=True)
    emoji = [10 + b for b in "😀".encode()]
    assert ours(bpe, ["😀", "a😀a"]) == [
        [(t, 0, 1) for t in emoji],
        [(1, 0, 1)] + [(t, 1, 2) for t in emoji] + [(1, 2, 3)],
    ]
    # One byte missing: the character is unknown.
    del vocab["<0x80>"]
    assert ours(CharBPE(vocab, [], unk_token="<unk>", byte_fallback=True), ["a😀"]) == [[(1, 0, 1), (0, 1, 2)]]
    if HAS_HF:
        assert hf_encode(vocab, [], ["a😀"], unk_token="<unk>", byte_fallback=True) == [[(1, 0, 1), (0, 1, 2)]]


def test_unknown_characters_fused_or_not():
    vocab = {"<unk>": 0, "a": 1, "b": 2}
    words = ["xxaxyzb", "x"]
    assert ours(CharBPE(vocab, [], unk_token="<unk>"), words) == [
        [(0, 0, 1), (0, 1, 2), (1, 2, 3), (0, 3, 4), (0, 4, 5), (0, 5, 6), (2, 6, 7)], [(0, 0, 1)]]
    assert ours(CharBPE(vocab, [], unk_token="<unk>", fuse_unk=True), words) == [
        [(0, 0, 2), (1, 2, 3), (0, 3, 6), (2, 6, 7)], [(0, 0, 1)]]


def test_hf_quirks():
    """Behaviours of HF's model that are not what one would guess, kept."""
    # No unk_token: unknown characters are dropped, and the offsets after
    # them are shifted (HF counts only the symbols' bytes).
    assert ours(CharBPE({"a": 1, "b": 2, "ab": 3}, [("a", "b")]), ["xaxbx", "é"]) == [[(3, 0, 2)], []]
    # A pending unk comes after the byte tokens of a later character.
    vocab = {"<unk>": 0, "<0x61>": 7, "b": 2}
    assert ours(CharBPE(vocab, [], unk_token="<unk>", byte_fallback=True), ["xab"]) == \
        [[(7, 0, 1), (0, 1, 2), (2, 2, 3)]]
    # Byte fallback spells the affixes too, one byte per symbol: the offsets
    # run past the word and keep HF's values.
    vocab = {"<unk>": 0, "a": 1, "##a": 2}
    vocab.update({f"<0x{b:02X}>": 10 + b for b in range(256)})
    bpe = CharBPE(vocab, [], unk_token="<unk>", byte_fallback=True, continuing_subword_prefix="##")
    assert ours(bpe, ["aéa"]) == [[(1, 0, 1), (10 + 0x23, 1, 2), (10 + 0x23, 1, 2), (10 + 0xC3, 2, 3),
                                   (10 + 0xA9, 4, 5), (2, 5, 6)]]
    if HAS_HF:
        assert hf_encode({"a": 1, "b": 2, "ab": 3}, [("a", "b")], ["xaxbx", "é"]) == [[(3, 0, 2)], []]
        assert hf_encode(vocab, [], ["aéa"], unk_token="<unk>", byte_fallback=True,
                         continuing_subword_prefix="##") == ours(bpe, ["aéa"])


def test_prefix_and_suffix():
    # HF's own test (test_bpe_with_continuing_subword_prefix).
    vocab = {"a": 0, "##b": 1, "##c": 2, "ab": 3, "abc": 4}
    bpe = CharBPE(vocab, [("a", "##b"), ("ab", "##c")], unk_token="[UNK]", continuing_subword_prefix="##")
    assert ours(bpe, ["ab", "abc"]) == [[(3, 0, 2)], [(4, 0, 3)]]
    vocab = {"a": 0, "b": 1, "b</w>": 2, "a</w>": 3, "ab</w>": 4}
    bpe = CharBPE(vocab, [("a", "b</w>")], end_of_word_suffix="</w>")
    assert ours(bpe, ["ab", "a", "ba"]) == [[(4, 0, 2)], [(3, 0, 1)], [(1, 0, 1), (3, 1, 2)]]


def test_ignore_merges():
    vocab = {"a": 0, "b": 1, "ab": 2, "ba": 3, "aba": 4}
    merges = [("a", "b")]
    assert ours(CharBPE(vocab, merges, ignore_merges=True), ["aba", "ba", "bab"]) == [
        [(4, 0, 3)], [(3, 0, 2)], [(1, 0, 1), (2, 1, 3)]]
    assert ours(CharBPE(vocab, merges), ["aba", "ba"]) == [[(2, 0, 2), (0, 2, 3)], [(1, 0, 1), (0, 1, 2)]]


def test_unk_token_missing_from_the_vocabulary():
    bpe = CharBPE({"a": 0}, [], unk_token="<unk>")
    assert ours(bpe, ["aa"]) == [[(0, 0, 1), (0, 1, 2)]]
    with pytest.raises(ValueError, match=r"words\[1\]: 'ax' needs the unknown token, but unk_token '<unk>'"):
        bpe.encode_words(["a", "ax"])
    if HAS_HF:
        assert hf_encode({"a": 0}, [], ["aa", "ax"], unk_token="<unk>") == [[(0, 0, 1), (0, 1, 2)], "unk"]


@pytest.mark.parametrize("merges, options, message, hf", [
    ([("a", "b"), ("a", "c")], {}, r"merges\[1\]: \('a', 'c'\): token 'c' is not in the vocabulary", True),
    ([("d", "a")], {}, r"merges\[0\]: \('d', 'a'\): token 'd' is not in the vocabulary", True),
    ([("b", "a")], {}, r"merges\[0\]: \('b', 'a'\): the merged token 'ba' is not in the vocabulary", True),
    # HF panics (the right part is shorter than the prefix).
    ([("a", "b")], {"continuing_subword_prefix": "##"}, r"merges\[0\]: \('a', 'b'\): 'b' does not start with a whole",
     True),
    # HF cuts inside 'é' and fails on the invalid UTF-8 of its own error
    # message (under pytest the process aborts): not asked.
    ([("a", "é")], {"continuing_subword_prefix": "#"}, r"merges\[0\]: \('a', 'é'\): 'é' does not start with a whole",
     False),
])
def test_bad_merges(merges, options, message, hf):
    vocab = {"a": 0, "b": 1, "ab": 2, "é": 3}
    with pytest.raises(ValueError, match=message):
        CharBPE(vocab, merges, **options)
    if HAS_HF and hf:
        assert hf_encode(vocab, merges, ["ab"], **options) == "build"


def test_prefix_cut_is_in_bytes_whatever_they_are():
    # HF drops the prefix's length in bytes from the right part, prefix or not.
    vocab = {"a": 0, "xyz": 1, "az": 2, "##y": 3}
    bpe = CharBPE(vocab, [("a", "xyz")], continuing_subword_prefix="##")
    assert bpe._pairs.reshape(-1, 4)[bpe._pairs.reshape(-1, 4)[:, 0] == 0].tolist() == [[0, 1, 0, 2]]


def test_bad_vocab_and_options():
    with pytest.raises(ValueError, match=r"vocab\['a'\]: expected an id in 0 \.\. 2147483647, found -1"):
        CharBPE({"a": -1}, [])
    with pytest.raises(ValueError, match=r"found 2147483648"):
        CharBPE({"a": 2**31}, [])
    with pytest.raises(TypeError, match=r"vocab\['a'\]: expected an int id, found str"):
        CharBPE({"a": "1"}, [])
    with pytest.raises(TypeError, match=r"vocab\['a'\]: expected an int id, found bool"):
        CharBPE({"a": True}, [])
    with pytest.raises(TypeError, match=r"expected str tokens, found int"):
        CharBPE({1: 1}, [])
    with pytest.raises(TypeError, match=r"merges\[0\]: expected a \(left, right\) pair of str, found 'a b'"):
        CharBPE({"a": 0, "b": 1, "ab": 2}, ["a b"])
    with pytest.raises(ValueError, match=r"dropout: expected None or 0 .* found 0\.1"):
        CharBPE({"a": 0}, [], dropout=0.1)
    assert ours(CharBPE({"a": 0}, [], dropout=0.0), ["a"]) == [[(0, 0, 1)]]
    assert ours(CharBPE({"a": np.int64(3)}, []), ["a"]) == [[(3, 0, 1)]]
    with pytest.raises(TypeError, match="unk_token: expected a str or None"):
        CharBPE({"a": 0}, [], unk_token=0)
    with pytest.raises(TypeError, match="byte_fallback: expected True or False"):
        CharBPE({"a": 0}, [], byte_fallback="yes")
    bpe = CharBPE({"a": 0}, [])
    with pytest.raises(TypeError, match="found int at index 1"):
        bpe.encode_words(["a", 3])
    with pytest.raises(TypeError, match="found one str"):
        bpe.encode_words("a")


def test_lone_surrogates_do_not_crash():
    vocab = {"<unk>": 0, "a": 1}
    vocab.update({f"<0x{b:02X}>": 10 + b for b in range(256)})
    assert ours(CharBPE(vocab, [], unk_token="<unk>"), ["a\udc80a"]) == [[(1, 0, 1), (0, 1, 2), (1, 2, 3)]]
    assert ours(CharBPE(vocab, [], byte_fallback=True), ["\udc80"]) == [[(10 + 0xED, 0, 1), (10 + 0xB2, 0, 1),
                                                                         (10 + 0x80, 0, 1)]]


def test_kernel_status_names_the_word():
    bpe = CharBPE({"a": 0}, [], unk_token="<unk>")
    cps = np.array([97, 120], np.int32)
    status, *_ = K.encode_batch(cps, np.array([0, 1, 2], np.int64), bpe._cptab, bpe._pairs, bpe._wbuf, bpe._woff,
                                bpe._whash, bpe._byte_tok, bpe._pre, bpe._suf, bpe._flags)
    assert status == 1
