"""Malformed vocabularies and unusual text (see docs/bad_input.rst)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import segkit
from reference import wordpiece_text

UNK = "[UNK]"


def write(tmp_path, data: bytes, name: str = "vocab.txt"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# ----------------------------------------------------------- vocabularies
def test_duplicate_tokens_error_names_both_lines(tmp_path):
    path = write(tmp_path, b"[UNK]\nhello\nworld\nhello\n")
    with pytest.raises(segkit.VocabularyError) as e:
        segkit.WordPiece(path)
    msg = str(e.value)
    assert "hello" in msg and "2" in msg and "4" in msg and "vocab.txt" in msg
    assert "lines 2 and 4" in msg
    with pytest.raises(segkit.VocabularyError):
        segkit.Vocabulary.load(path)
    assert issubclass(segkit.VocabularyError, ValueError)


def test_duplicate_tokens_in_a_list_name_the_ids():
    with pytest.raises(segkit.VocabularyError, match="ids 1 and 3"):
        segkit.WordPiece([UNK, "a", "b", "a"])


@pytest.mark.parametrize("policy, expected_id", [("first", 1), ("last", 3)])
def test_duplicate_tokens_first_last(tmp_path, policy, expected_id):
    path = write(tmp_path, b"[UNK]\nhello\nworld\nhello\n")
    wp = segkit.WordPiece(path, duplicates=policy)
    assert wp.encode("hello world").ids == [expected_id, 2]
    assert wp.token_to_id("hello") == expected_id
    # Both occurrences still decode to the token.
    assert wp.id_to_token(1) == "hello" and wp.id_to_token(3) == "hello"
    assert wp.decode([1, 3]) == "hello hello"
    v = segkit.Vocabulary.load(path, duplicates=policy)
    assert v.id("hello") == expected_id and v.token(1) == v.token(3) == "hello"


def test_duplicates_option_is_checked():
    with pytest.raises(ValueError, match="duplicates"):
        segkit.WordPiece([UNK, "a"], duplicates="keep")


def test_blank_line_keeps_its_id_and_never_matches(tmp_path):
    path = write(tmp_path, b"[UNK]\n\na\n##b\n")
    wp = segkit.WordPiece(path)
    assert len(wp.vocab) == 4
    assert wp.token_to_id("a") == 2 and wp.token_to_id("##b") == 3
    assert wp.encode("ab a").ids == [2, 3, 2]
    assert wp.tokenize("") == [] and wp.tokenize_word("") == []
    assert wp.tokenize("x") == [UNK]


def test_several_blank_lines_are_not_duplicates(tmp_path):
    # docs/bad_input.rst: "A blank line ... keeps its id, so the ids of the
    # following lines do not shift, but it can never match anything."  That
    # holds for every blank line, not only the first.
    path = write(tmp_path, b"[UNK]\n\na\n\n##b\n")
    wp = segkit.WordPiece(path)
    assert len(wp.vocab) == 5
    assert wp.token_to_id("a") == 2 and wp.token_to_id("##b") == 4
    assert wp.encode("ab a").ids == [2, 4, 2]
    assert wp.tokenize("") == [] and wp.tokenize_word("") == []
    assert wp.tokenize("x") == [UNK]


def test_bom_is_dropped(tmp_path):
    path = write(tmp_path, b"\xef\xbb\xbf[UNK]\nhello\n")
    wp = segkit.WordPiece(path)  # would fail if the BOM stayed on "[UNK]"
    assert wp.unk_id == 0 and wp.id_to_token(0) == UNK
    assert wp.encode("hello").ids == [1]


def test_crlf_line_endings(tmp_path):
    path = write(tmp_path, b"[UNK]\r\nhello\r\n##s\r\n")
    wp = segkit.WordPiece(path)
    assert wp.vocab.tokens == [UNK, "hello", "##s"]
    assert wp.encode("hellos").ids == [1, 2]


def test_trailing_whitespace_is_stripped_like_hf(tmp_path):
    # HF's WordPiece.from_file trims trailing Unicode White_Space from each
    # line (Rust's trim_end) and keeps leading whitespace; so does segkit.
    lines = ["[UNK]", "hello  ", " world", "a\t", "b\u3000", "c\u00a0", "e\x0b", "f\x0c", "g\x1c", "h\u0085",
             "i\u2028", "j\r", "k\r\r", "##s \t"]
    path = write(tmp_path, ("\n".join(lines) + "\n").encode("utf-8"))
    v = segkit.Vocabulary.load(path)
    expected = ["[UNK]", "hello", " world", "a", "b", "c", "e", "f", "g\x1c", "h", "i", "j", "k", "##s"]
    assert v.tokens == expected
    assert segkit.WordPiece(path).encode("hellos", add_special_tokens=False).ids == [1, 13]
    try:
        from tokenizers.models import WordPiece as HFWordPiece
    except ImportError:
        return
    assert HFWordPiece.read_file(str(path)) == v.to_dict()


def test_whitespace_only_line_is_blank_and_stripping_can_make_duplicates(tmp_path):
    path = write(tmp_path, b"[UNK]\n  \nhello\nhello \n")
    with pytest.raises(segkit.VocabularyError, match="duplicate token 'hello'.*lines 3 and 4"):
        segkit.Vocabulary.load(path)
    v = segkit.Vocabulary.load(path, duplicates="last")  # HF: the last line wins
    assert v.id("hello") == 3 and v.token(1) == "" and v.token(2) == "hello"


@pytest.mark.parametrize("big", [2**31, 3 * 10**9, 2**63])
def test_huge_id_is_refused_before_allocating(big, tmp_path):
    import json
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(segkit.VocabularyError, match=f"has id {big}, which does not fit int32"):
            segkit.Vocabulary.load({"[UNK]": 0, "x": big})
        with pytest.raises(segkit.VocabularyError, match="does not fit int32"):
            segkit.Vocabulary(["[UNK]", "x"], [0, big])
        data = {"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "x": big}, "unk_token": "[UNK]"},
                "normalizer": None, "pre_tokenizer": {"type": "BertPreTokenizer"}}
        path = tmp_path / "t.json"
        path.write_text(json.dumps(data))
        with pytest.raises(segkit.VocabularyError, match=f"{path}: .*does not fit int32"):
            segkit.WordPiece.from_tokenizer_json(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 << 20


def test_sparse_ids_are_refused_dense_enough_accepted():
    with pytest.raises(segkit.VocabularyError, match="has id 10000000, but there are only 2 tokens"):
        segkit.Vocabulary.load({"[UNK]": 0, "x": 10_000_000})
    v = segkit.Vocabulary.load({"[UNK]": 0, "x": 1000})  # gaps are fine
    assert v.size == 1001 and v.token(1000) == "x"
    with pytest.raises(segkit.VocabularyError, match="has id -3"):
        segkit.Vocabulary(["a", "b"], [0, -3])


def test_other_line_separators_are_token_characters(tmp_path):
    # Inside a line they are token characters; at its end, whitespace that
    # is stripped (see the test above).
    path = write(tmp_path, "[UNK]\nx\u2028y\n##\u2028z\na\n".encode("utf-8"))
    wp = segkit.WordPiece(path)
    assert wp.token_to_id("x\u2028y") == 1 and wp.token_to_id("##\u2028z") == 2 and wp.token_to_id("a") == 3


def test_missing_unk_token_is_a_clear_error():
    with pytest.raises(ValueError) as e:
        segkit.WordPiece(["a", "b"])
    assert "[UNK]" in str(e.value) and "unk_token" in str(e.value)
    with pytest.raises(ValueError, match="<unk>"):
        segkit.WordPiece(["a", "[UNK]"], unk_token="<unk>")
    assert segkit.WordPiece(["a", "<unk>"], unk_token="<unk>").tokenize("a b") == ["a", "<unk>"]


def test_non_utf8_file_names_the_line(tmp_path):
    path = write(tmp_path, b"[UNK]\nok\ncaf\xe9\nfine\n")
    with pytest.raises(segkit.VocabularyError) as e:
        segkit.WordPiece(path)
    msg = str(e.value)
    assert "line 3" in msg and "vocab.txt" in msg and "UTF-8" in msg


def test_missing_vocab_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        segkit.WordPiece(tmp_path / "nope.txt")
    with pytest.raises(segkit.VocabularyError, match="directory"):
        segkit.WordPiece(tmp_path)


def test_bad_vocabulary_sources():
    with pytest.raises(segkit.VocabularyError):
        segkit.WordPiece([UNK, 3])
    with pytest.raises(segkit.VocabularyError):
        segkit.WordPiece({UNK: 0, "a": -1})
    with pytest.raises(segkit.VocabularyError):
        segkit.WordPiece({UNK: 0, "a": 0})
    with pytest.raises(TypeError):
        segkit.WordPiece(42)


# ------------------------------------------------------------------- text
def test_lone_surrogates_are_refused_where_they_come_in(mbert):
    """One rule (docs/bad_input.rst, segkit/runtime/surrogates.py): UTF-8
    cannot encode a lone surrogate, so no text, pair, batch item or token
    may hold one; the error names the argument and the character."""
    text = "ab\ud800cd ok \udfff"
    where = r"lone surrogate U\+D800 at character 2"
    for call in (mbert.encode, mbert.tokenize, mbert.encode_ids, mbert):
        with pytest.raises(ValueError, match="^text: " + where):
            call(text)
    with pytest.raises(ValueError, match="^pair: " + where):
        mbert.encode("ok", text)
    with pytest.raises(ValueError, match=r"^texts\[1\]: " + where):
        mbert.encode_batch(["fine", text])
    with pytest.raises(ValueError, match=r"^texts\[1\]: lone surrogate U\+D83D at character 0"):
        mbert(["fine", "\ud83d"], padding=True)  # half of an emoji is no emoji
    with pytest.raises(segkit.VocabularyError, match=r"vocabulary token 2 .*lone surrogate U\+D800 at character 2"):
        segkit.WordPiece([UNK, "a", "##\ud800"])
    with pytest.raises(ValueError, match=r"^suffix_indicator: lone surrogate"):
        segkit.WordPiece([UNK, "a"], suffix_indicator="\udc80")
    with pytest.raises(ValueError, match=r"^added token 0 .*lone surrogate"):
        mbert.add_tokens(["x\udfff"])
    # paired surrogates written as one character are fine
    assert mbert.encode("ok \U0001F600").tokens == ["ok", UNK]


def test_nul_and_control_characters():
    tokens = [UNK, "a", "##\x00", "##b", "c"]
    wp = segkit.WordPiece(tokens)
    for text in ["a\x00b", "a\x00b c", "\x00", "a\x01b", "c\x00", "\x00\x00 c"]:
        enc = wp.encode(text)
        spans = wordpiece_text(text, set(tokens))
        assert (enc.tokens, enc.offsets) == ([t for t, _, _ in spans], [(s, e) for _, s, e in spans]), repr(text)
    assert wp.tokenize("a\x00b") == ["a", "##\x00", "##b"]
    assert wp.encode("a\x01b c").offsets == [(0, 3), (4, 5)]


def test_nul_in_multilingual(mbert):
    enc = mbert.encode("a\x00b c")
    assert enc.tokens == [UNK, "c"] and enc.offsets == [(0, 3), (4, 5)]


def test_empty_and_blank_text(mbert):
    assert mbert.tokenize("") == []
    assert mbert.encode("").ids == [] and mbert.encode("").offsets == []
    assert mbert.tokenize("  \t\n\u3000\u2028 ") == []
    assert mbert.tokenize_word("") == []
    assert mbert.encode_batch([""]).ids == [[]]
    assert mbert.encode_ids("") == []


def test_ten_megabyte_word_is_fast_and_unk(mbert):
    word = "a" * 10_000_000
    t0 = time.perf_counter()
    enc = mbert.encode(word)
    elapsed = time.perf_counter() - t0
    assert enc.tokens == [UNK] and enc.offsets == [(0, 10_000_000)]
    assert elapsed < 20, f"10 MB word took {elapsed:.1f} s"
    t0 = time.perf_counter()
    assert mbert.encode_ids("x " + word + " y") == [mbert.token_to_id("x"), mbert.unk_id, mbert.token_to_id("y")]
    assert time.perf_counter() - t0 < 20


@pytest.fixture(scope="module")
def pathological():
    # a, aa, ..., a*20 and their continuations: the original algorithm
    # restarts its scan from the end of the word for every piece.
    tokens = [UNK] + ["a" * k for k in range(1, 21)] + ["##" + "a" * k for k in range(1, 21)]
    return segkit.WordPiece(tokens, max_input_chars_per_word=10_000_000)


def test_one_megabyte_word_on_pathological_vocab(pathological, with_timeout):
    wp = pathological
    n = 1_000_000
    t0 = time.perf_counter()
    enc = with_timeout(lambda: wp.encode("a" * n), 60)
    elapsed = time.perf_counter() - t0
    first, cont = wp.token_to_id("a" * 20), wp.token_to_id("##" + "a" * 20)
    ids = enc.ids_array
    assert ids.size == n // 20
    assert ids[0] == first and (ids[1:] == cont).all()
    offsets = enc.offsets_array
    assert offsets[0].tolist() == [0, 20] and offsets[-1].tolist() == [n - 20, n]
    assert elapsed < 20, f"1 MB word took {elapsed:.1f} s"


def test_one_megabyte_word_failing_at_the_end(pathological, with_timeout):
    # The failure is discovered only at the last character; the whole word
    # becomes one unk and the tokens emitted so far are dropped.
    wp = pathological
    n = 1_000_000
    t0 = time.perf_counter()
    enc = with_timeout(lambda: wp.encode("a" * n + "b a"), 60)
    assert enc.tokens == [UNK, "a"] and enc.offsets == [(0, n + 1), (n + 2, n + 3)]
    assert with_timeout(lambda: wp.tokenize_word("a" * n + "b"), 60) == [UNK]
    assert time.perf_counter() - t0 < 30
    # 1 000 003 characters: 50 000 pieces of 20, then "aaa" as one piece.
    assert wp.encode_ids("a" * (n + 3))[-1] == wp.token_to_id("##aaa")


@pytest.mark.parametrize("bad", [b"abc", None, 42, ["a"], 3.5])
def test_non_str_text_raises_type_error(mbert, bad):
    with pytest.raises(TypeError):
        mbert.tokenize(bad)
    with pytest.raises(TypeError):
        mbert.encode(bad)
    with pytest.raises(TypeError):
        mbert.encode_ids(bad)
    with pytest.raises(TypeError):
        mbert.tokenize_word(bad)
    with pytest.raises(TypeError):
        mbert.encode_batch(["ok", bad])


def test_batch_type_error_names_the_index(mbert, monkeypatch):
    with pytest.raises(TypeError, match="index 2"):
        mbert.encode_batch(["a", "b", b"c"])
    import segkit.runtime.threads as par

    monkeypatch.setattr(par, "MIN_CHARS_PER_THREAD", 10)  # force a split over threads
    with pytest.raises(TypeError, match="the text at index 300 is NoneType"):
        mbert.encode_batch(["a b c"] * 300 + [None] + ["d"] * 50, num_threads=2)
    with pytest.raises(TypeError, match="single str"):
        mbert.encode_batch("abc")


def test_join_code_points_rejects_lengths_that_do_not_fit() -> None:
    """Wrong lengths would send the kernels outside the text: a clear error."""
    import numpy as np

    from segkit.engine import join_code_points

    cps, bounds = join_code_points(["ab", "c"], np.array([2, 1]))
    assert bounds.tolist() == [0, 2, 3] and cps.size == 3
    with pytest.raises(ValueError, match="lengths do not fit"):
        join_code_points(["ab", "c"], np.array([2, 2]))
    with pytest.raises(ValueError, match="lengths do not fit"):
        join_code_points(["ab", "c"], np.array([4, -1]))


def test_large_texts_convert_to_the_same_code_points() -> None:
    """Large texts are converted by NumPy, small ones by the UTF-32 codec:
    same code points (astral characters, trailing NULs), the same array type,
    and the same error for a lone surrogate, at the same position."""
    import numpy as np

    from segkit.engine import automaton

    n = automaton._NUMPY_CONVERSION
    for tail in ("", "\0\0", "\U0001F600\0", "\ud83d", "\udfff x"):
        text = ("ab\u00e9\u4e2d " * n)[: n + 3] + tail
        if "\ud83d" in tail or "\udfff" in tail:
            for t in (text, "x" * (n + 3) + tail):  # non-ASCII and ASCII-only heads
                with pytest.raises(ValueError, match=f"lone surrogate U\\+{ord(tail[0]):04X} at character {n + 3}"):
                    automaton.to_code_points(t)
            with pytest.raises(ValueError, match="at character 1"):
                automaton.to_code_points("a" + tail)
            continue
        got = automaton.to_code_points(text)
        expected = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        assert got.dtype == np.uint32 and got.flags.c_contiguous and not got.flags.writeable
        assert np.array_equal(got, expected)
        small = automaton.to_code_points(text[:100])
        assert np.array_equal(small, expected[:100]) and not small.flags.writeable


def test_segment_code_points_rejects_a_bad_out_array():
    from segkit.engine import Automaton, EngineConfig, join_code_points

    auto = Automaton.build(["ab", "c"], [0, 1], EngineConfig(unknown="char", char_id=-1))
    cps, bounds = join_code_points(["abc"])
    for bad in (np.empty((3, 10), np.int32), np.empty((4, 10), np.int64), np.empty((10, 4), np.int32).T, [[0] * 10] * 4):
        with pytest.raises(ValueError, match="shape \\(4, m\\)"):
            auto.segment_code_points(cps, bounds, out=bad)
    out, rows = auto.segment_code_points(cps, bounds, out=np.empty((4, 2), np.int32))  # too small: grows
    assert out[0].tolist() == [0, 1] and rows.tolist() == [0, 2]


# ------------------------------------------- any bytes to the text loaders
def _bytes_loaders():
    from segkit_cjk.dictionary import read_dictionary

    return {
        "vocab.txt": lambda p: segkit.Vocabulary.load(p, duplicates="first"),
        "tokenizer.json": segkit.WordPiece.from_tokenizer_json,
        "user.dict": read_dictionary,
    }


def _fuzz_bytes():
    from hypothesis import strategies as st

    pieces = st.sampled_from(
        [b"[UNK]", b"\n", b"\r\n", b" ", b"\t", b"\xef\xbb\xbf", b"\xe9", b"\xff", b"##", b"a", b"5", b"n",
         "北京".encode(), "\u3000".encode(), "\u2028".encode(), b'{"model": ', b'"vocab"', b"{", b"}", b"[", b"]",
         b":", b",", b"null", b"1e9", b"2147483648", b'"WordPiece"', b'"type"']
    )
    return st.lists(pieces, max_size=30).map(b"".join) | st.binary(max_size=64)


def test_text_loaders_take_any_bytes(tmp_path):
    # Any bytes give a result or the loader's own error (ValueError or a
    # subclass, naming the file), never another exception.
    import warnings

    from hypothesis import given, settings

    loaders = _bytes_loaders()

    @settings(max_examples=150, deadline=None)
    @given(_fuzz_bytes())
    def check(data):
        for name, load in loaders.items():
            path = tmp_path / name
            path.write_bytes(data)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    load(path)
                except ValueError as e:
                    assert name in str(e) or "vocabulary" in str(e), (name, data, e)

    check()


@pytest.mark.parametrize("name", ["max_length", "stride", "pad_to_multiple_of"])
def test_non_int_lengths_are_type_errors_naming_the_argument(name):
    # An unhashable or non-int length is refused by name, on every path
    # (encode's cached fast path looked it up before checking it).
    wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a"])
    for call in (lambda: wp.encode("a", **{name: [3]}), lambda: wp.encode("a", "a", **{name: "3"}),
                 lambda: wp.encode_batch(["a", "a a"], **{name: [3]})):
        with pytest.raises(TypeError, match=name):
            call()


# ------------------------------------------- exceptions that were not ours
def test_huge_lengths_are_the_librarys_errors_or_nothing_to_truncate():
    # max_length=2**70 was "OverflowError: Python int too large to convert
    # to C long"; a truncation length past any text's truncates nothing, and
    # a length to pad to must fit int32 (a ValueError naming it).
    wp = segkit.WordPiece.bert(["[PAD]", UNK, "[CLS]", "[SEP]", "a", "b"])
    expected = wp.encode("a b").ids
    for big in (2**31, 2**63, 2**70):
        assert wp.encode("a b", max_length=big, truncation=True).ids == expected
        assert wp.encode_batch(["a b"], max_length=big, truncation=True).ids == [expected]
        assert wp("a b", max_length=big, truncation=True)["input_ids"] == expected
        for call in (lambda: wp.encode("a b", padding="max_length", max_length=big),
                     lambda: wp(["a b"], padding="max_length", max_length=big)):
            with pytest.raises(ValueError, match="max_length must be an int from 0 to 2\\*\\*31 - 1"):
                call()
        with pytest.raises(ValueError, match="stride"):
            wp.encode("a b", max_length=3, truncation=True, stride=big)
        with pytest.raises(ValueError, match="pad_to_multiple_of"):
            wp.encode("a b", padding="max_length", max_length=4, pad_to_multiple_of=big)


@pytest.mark.parametrize("value", [[True], {"only_first": 1}, ["longest_first"], set()])
def test_truncation_of_the_wrong_type_is_a_value_error_naming_it(value):
    # [True] was "TypeError: unhashable type: 'list'"
    wp = segkit.WordPiece.bert(["[PAD]", UNK, "[CLS]", "[SEP]", "a"])
    for call in (lambda: wp.encode("a", truncation=value, max_length=3),
                 lambda: wp.encode_batch(["a"], truncation=value, max_length=3),
                 lambda: wp("a", truncation=value, max_length=3)):
        with pytest.raises(ValueError, match="truncation must be"):
            call()


@pytest.mark.parametrize("depth", [990, 5_000, 100_000])
@pytest.mark.parametrize("where", ["root", "model", "normalizer"])
def test_a_tokenizer_json_nested_too_deeply(tmp_path, depth, where):
    # 10**5 levels of [ were a RecursionError from the json parser; a value
    # just shallow enough to parse must not be one while it is described.
    nested = "[" * depth + "]" * depth
    body = {"root": nested,
            "model": '{"model": {"type": "WordPiece", "vocab": ' + nested + "}}",
            "normalizer": '{"model": {"type": "WordPiece", "vocab": {"[UNK]": 0}, "unk_token": "[UNK]"}, '
                          '"normalizer": ' + nested + "}"}[where]
    path = tmp_path / "tokenizer.json"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(ValueError, match=str(path.name)) as e:
        segkit.WordPiece.from_tokenizer_json(path)
    assert not isinstance(e.value, RecursionError)


def test_padding_targets_that_would_take_gigabytes_are_refused(tmp_path):
    # Found by tests/test_tokenizer_json_fuzz.py: pad_to_multiple_of=442157569
    # padded a 5-token text to 442 million positions (a 24.7 GiB array).
    import json

    from segkit.presets.pipeline.postprocess import MAX_PAD_LENGTH

    wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a"])
    with pytest.raises(ValueError, match="pad_to_multiple_of must be at most"):
        wp.encode("a", padding=True, pad_to_multiple_of=442_157_569)
    with pytest.raises(ValueError, match="max_length=33554432"):
        wp.encode_batch(["a"], padding="max_length", max_length=2 * MAX_PAD_LENGTH)
    assert len(wp.encode("a", padding="max_length", max_length=1024).ids) == 1024  # ordinary lengths still pad
    path = tmp_path / "tokenizer.json"
    wp.save_tokenizer_json(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["padding"] = {"strategy": "BatchLongest", "direction": "Right", "pad_id": 0, "pad_type_id": 0,
                      "pad_token": "[PAD]", "pad_to_multiple_of": 442_157_569}
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match=r"tokenizer\.json.*pad_to_multiple_of must be at most"):
        segkit.WordPiece.from_tokenizer_json(path)
