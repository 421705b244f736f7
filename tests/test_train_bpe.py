"""segkit.train_bpe against the naive reference trainer (tests/bpe_reference.py)."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe_reference import GPT2_PATTERN, pretoken_counts, train_bpe_reference
from segkit.training import corpus as corpus_mod
from segkit.training import CorpusError, train_bpe
from segkit.training import bpe as bpe_mod
from segkit.training.bpe import _pretoken_counts
from segkit.presets.bpe.pretokenize import GPT2_PATTERN as SEGKIT_GPT2, Pretokenizer

pretokenize = Pretokenizer(SEGKIT_GPT2).findall

SPECIALS = ["<|endoftext|>", "<s>", "</s>", "<|e"]

# text that stresses the pre-tokenizer: contractions, whitespace runs, non-ASCII, emoji, specials
_pieces = st.sampled_from(
    ["a", "b", "e", "s", "t", "st", "es", "low", "new", " ", "  ", "\n", "\t", "\r\n", "\u3000", "\xa0",
     "'", "'s", "'ll", "'ve", "'re", "'t", "'S", "1", "23", "!", "?!", ".", "é", "ß", "中", "文", "😀", "👍🏽",
     "\u0301", "\x1c", "<|endoftext|>", "<s>", "</s>", "<|e", "<"]
)
_text = st.one_of(st.lists(_pieces, max_size=30).map("".join), st.text(max_size=30))
_docs = st.lists(_text, max_size=8)


def _merges(documents, vocab_size, specials):
    return train_bpe(documents, vocab_size, specials, show_progress=False).merges


def test_pretokenizer_pattern_is_gpt2():
    assert SEGKIT_GPT2 == GPT2_PATTERN


@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_pretokenizer_matches_regex(text):
    assert pretokenize(text) == regex.findall(GPT2_PATTERN, text)


@given(st.lists(_pieces, max_size=60).map("".join))
@settings(max_examples=300, deadline=None)
def test_pretokenizer_matches_regex_on_tricky_text(text):
    assert pretokenize(text) == regex.findall(GPT2_PATTERN, text)


def test_pretokenizer_matches_regex_on_sample(multilingual_sample):
    for rec in multilingual_sample:
        assert pretokenize(rec["text"]) == regex.findall(GPT2_PATTERN, rec["text"])


@given(_docs, st.integers(256, 300), st.lists(st.sampled_from(SPECIALS), unique=True, max_size=3))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_merges_equal_reference_on_documents(docs, extra, specials):
    vocab_size = extra + len(specials)
    vocab, merges = train_bpe_reference(docs, vocab_size, specials)
    result = train_bpe(docs, vocab_size, specials, show_progress=False)
    assert result.merges == merges
    assert result.vocab == vocab


@given(_docs, st.integers(256, 300), st.integers(0, 6))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_merges_equal_reference_with_long_word_path(docs, vocab_size, long_from):
    # pre-tokens longer than _LONG_WORD bytes are merged position by position;
    # a tiny threshold sends most words of these small corpora down that path
    # (0: all of them), mixed with the word-level path in one merge loop
    _, merges = train_bpe_reference(docs, vocab_size, [])
    with mock.patch.object(bpe_mod, "_LONG_WORD", long_from):
        got = train_bpe(docs, vocab_size, show_progress=False).merges
    assert got == merges


def test_long_pretoken_merges_equal_reference():
    # one pre-token far above the threshold (letters only: a single GPT-2 match)
    rng = __import__("random").Random(7)
    word = "".join(rng.choice("abcab") for _ in range(3000))
    docs = [word, word[:1500], "x" + word[:400]]
    _, merges = train_bpe_reference(docs, 300, [])
    assert train_bpe(docs, 300, show_progress=False).merges == merges


@given(_text, st.integers(256, 300), st.lists(st.sampled_from(SPECIALS), unique=True, max_size=3),
       st.integers(1, 9))
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_merges_equal_reference_on_a_file(tmp_path_factory, text, extra, specials, chunk):
    path = tmp_path_factory.mktemp("bpe") / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    vocab_size = extra + len(specials)
    _, merges = train_bpe_reference([text], vocab_size, specials)
    with mock.patch.object(corpus_mod, "CHUNK_BYTES", chunk):  # tiny chunks: every boundary case of the carry
        got = train_bpe(path, vocab_size, specials, show_progress=False).merges
        got_list = train_bpe([path], vocab_size, specials, show_progress=False).merges
    assert got == merges
    assert got_list == merges


@pytest.mark.parametrize("threads", [1, 2])
def test_counting_table_grows_inside_a_batch(monkeypatch, threads):
    # a 4-slot table must grow many times inside one batch (the counting loop
    # stops when the table is half full and resumes where it stopped)
    docs = [" ".join(f"w{i}x{i % 7}" for i in range(j, j + 400)) + " é中" * (j % 3) for j in range(0, 4000, 400)]
    small = bpe_mod.K.new_table
    monkeypatch.setattr(bpe_mod.K, "new_table", lambda: small(capacity=4, arena=8))
    assert _pretoken_counts(docs, num_threads=threads) == dict(pretoken_counts(docs))


@given(st.lists(_pieces, max_size=200).map("".join), st.lists(st.sampled_from(SPECIALS), unique=True, max_size=3),
       st.integers(1, 16), st.integers(1, 2), st.integers(1, 24))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_file_counts_do_not_depend_on_chunks(tmp_path_factory, text, specials, chunk, threads, window):
    path = tmp_path_factory.mktemp("cnt") / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    # _CUT_WINDOW: how far back the cut may look
    with mock.patch.multiple(corpus_mod, CHUNK_BYTES=chunk, _CUT_WINDOW=window):
        got = _pretoken_counts(Path(path), specials, num_threads=threads)
    assert got == dict(pretoken_counts([text], specials))


_docs_or_surrogates = st.lists(st.one_of(_text, st.sampled_from(["a\ud800b", "\udfff", ""])), max_size=10)


@given(_docs_or_surrogates, st.lists(st.sampled_from(SPECIALS), unique=True, max_size=3), st.integers(1, 3),
       st.integers(1, 64))
@settings(max_examples=150, deadline=None)
def test_documents_on_threads_count_as_the_reference(docs, specials, threads, batch):
    """Documents handed out in small lists to 1-3 threads (each joins, encodes
    and splits its own; the tables are added up in parallel): the counts of
    the reference, lone surrogates replaced as one document at a time would."""
    with mock.patch.object(corpus_mod, "BATCH_BYTES", batch):
        got = _pretoken_counts(docs, specials, num_threads=threads, errors="replace")
        one = train_bpe(docs, 256 + len(specials) + 20, specials, show_progress=False, errors="replace").merges
        many = train_bpe(docs, 256 + len(specials) + 20, specials, num_threads=threads, show_progress=False,
                         errors="replace").merges
    fixed = [d.encode("utf-8", "replace").decode("utf-8") for d in docs]
    assert got == dict(pretoken_counts(fixed, specials))
    assert many == one


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threads_report_the_first_bad_document(monkeypatch, threads):
    monkeypatch.setattr(corpus_mod, "BATCH_BYTES", 4)
    docs = ["fine text"] * 20 + ["bad \ud800 one"] + ["more"] * 20 + [b"bytes"] + ["x \udc00"] * 5
    with pytest.raises(CorpusError, match=r"document 20: lone surrogate U\+D800 at character 4"):
        train_bpe(docs, 300, num_threads=threads, show_progress=False)
    with pytest.raises(CorpusError, match=r"document 41 must be a str, found bytes"):
        train_bpe(docs, 300, num_threads=threads, show_progress=False, errors="replace")


def test_seed_worked_example():
    # the seed's pre-token counts, one pre-token per document
    counts = {"low": 5, "lower": 2, "widest": 3, "newest": 6, "es": 2, "st": 2}
    docs = [w for w, c in counts.items() for _ in range(c)]
    result = train_bpe(docs, 256 + 2, show_progress=False)
    assert result.merges == [(b"s", b"t"), (b"e", b"st")]  # st and es tie at 11; ('s','t') > ('e','s')
    _, ref = train_bpe_reference(docs, 256 + 12)
    assert train_bpe(docs, 256 + 12, show_progress=False).merges == ref


def test_multilingual_sample_equals_reference(multilingual_sample):
    docs = [r["text"] for r in multilingual_sample]
    _, ref = train_bpe_reference(docs, 256 + 300, ["<|endoftext|>"])
    for threads in (1, 2):
        assert train_bpe(docs, 256 + 300, ["<|endoftext|>"], num_threads=threads, show_progress=False).merges == ref


def test_custom_pattern_equals_reference():
    docs = ["hello world, hello there", "abc abc abcd", "x"]
    pat = r"\w+|[^\w\s]+|\s+"
    _, ref = train_bpe_reference(docs, 256 + 20, pattern=pat)
    assert train_bpe(docs, 256 + 20, pattern=pat, show_progress=False).merges == ref


def test_custom_pattern_file_chunks(tmp_path):
    text = "hello world, hello there\nabc abc abcd x " * 20
    path = tmp_path / "c.txt"
    path.write_text(text, encoding="utf-8")
    pat = r"\w+|[^\w\s]+|\s+"
    _, ref = train_bpe_reference([text], 256 + 20, pattern=pat)
    with mock.patch.object(corpus_mod, "CHUNK_BYTES", 7):
        assert train_bpe(path, 256 + 20, pattern=pat, show_progress=False).merges == ref


# ---------------------------------------------------------------- results out
def test_vocab_layout_and_save(tmp_path):
    r = train_bpe(["the cat sat on the mat; the cat's hat"], 256 + 2 + 10, ["<|endoftext|>", "<pad>"],
                  show_progress=False)
    assert [r.vocab[i] for i in range(256)] == [bytes([i]) for i in range(256)]
    assert r.vocab[256] == b"<|endoftext|>" and r.vocab[257] == b"<pad>"
    assert len(r.merges) == 10
    for k, (a, b) in enumerate(r.merges):
        assert r.vocab[258 + k] == a + b
    r.save(tmp_path)
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    lines = (tmp_path / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("#version")
    assert len(lines) == 11 and len(vocab) == 268
    assert vocab["<|endoftext|>"] == 256 and vocab["Ġ"] == 32 and vocab["!"] == 33
    assert lines[1] == "Ġ c" or " " in lines[1]


def test_tokenizer_json_loads_in_hf(tmp_path):
    tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers not installed")
    docs = ["Hello world! Héllo wörld 😀", "the quick brown fox's tail", "中文 測試<|endoftext|>again"] * 5
    r = train_bpe(docs, 256 + 1 + 40, ["<|endoftext|>"], show_progress=False)
    path = tmp_path / "tokenizer.json"
    r.to_tokenizer_json(path)
    tok = tokenizers.Tokenizer.from_file(str(path))
    assert tok.get_vocab_size() == 256 + 1 + 40
    for d in docs:
        enc = tok.encode(d)
        assert tok.decode(enc.ids, skip_special_tokens=False) == d
    # every merge applies in HF just as made: the pre-tokens of the training text are single tokens
    # when their whole byte string was merged
    merged = {a + b for a, b in r.merges}
    for word in {w for d in docs for w in pretokenize(d.replace("<|endoftext|>", " "))}:
        if word.encode() in merged:
            assert len(tok.encode(word).ids) == 1
    assert tok.encode("x<|endoftext|>y").ids[1] == 256
    r.save(tmp_path / "gpt2")
    again = tokenizers.Tokenizer(
        tokenizers.models.BPE.from_file(str(tmp_path / "gpt2" / "vocab.json"), str(tmp_path / "gpt2" / "merges.txt"))
    )
    assert again.get_vocab_size() == 256 + 1 + 40


# ------------------------------------------------------------------ bad input
def test_vocab_size_too_small():
    with pytest.raises(ValueError, match="at least 256 \\+ 2"):
        train_bpe(["abc"], 257, ["<a>", "<b>"])


@pytest.mark.parametrize("specials,msg", [(["<a>", "<a>"], "twice"), (["<a>", ""], "empty")])
def test_bad_special_tokens(specials, msg):
    with pytest.raises(ValueError, match=msg):
        train_bpe(["abc"], 300, specials)


def test_empty_corpus_gives_base_vocabulary(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    for corpus in ([], [""], empty, ["<s>"]):
        r = train_bpe(corpus, 1000, ["<s>"], show_progress=False)
        assert r.merges == [] and len(r.vocab) == 257


def test_missing_file_is_named(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        train_bpe(missing, 300)
    present = tmp_path / "present.txt"
    present.write_text("abc", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        train_bpe([present, missing], 300)
    with pytest.raises(IsADirectoryError, match="directory"):
        train_bpe([present, tmp_path], 300)


_utf8ish = st.lists(st.one_of(st.text(max_size=3).map(lambda t: t.encode("utf-8")),
                              st.binary(max_size=3),
                              st.sampled_from([b"\xed\xa0\x80", b"\xe0\x80\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf",
                                               b"\xf0\x9f\x98", b"\xe2\x82", b"\xc3"])), max_size=12).map(b"".join)


@given(_utf8ish)
@settings(max_examples=500, deadline=None)
def test_utf8_check_agrees_with_python(data):
    bad, truncated = corpus_mod.utf8_check(np.frombuffer(data, np.uint8))
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        assert bad == e.start
        assert truncated == (e.reason == "unexpected end of data")
    else:
        assert (bad, truncated) == (-1, False)


@given(_utf8ish, st.integers(1, 9), st.integers(1, 2), st.integers(1, 12))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_file_bytes_checked_as_python_decodes(tmp_path_factory, data, chunk, threads, window):
    """Files are not decoded in Python unless invalid (the reading thread
    checks the last ``window`` bytes, for the cut; the counting threads the
    rest): the same error (file, offset, reason) or the same counts as
    decoding the whole file."""
    path = tmp_path_factory.mktemp("u8") / "f.txt"
    path.write_bytes(data)
    with mock.patch.multiple(corpus_mod, CHUNK_BYTES=chunk, _CUT_WINDOW=window):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            with pytest.raises(CorpusError, match=f"f.txt: not valid UTF-8 at byte offset {e.start} .*{e.reason}"):
                _pretoken_counts(path, num_threads=threads)
        else:
            assert _pretoken_counts(path, num_threads=threads) == dict(pretoken_counts([text]))


def test_invalid_utf8_names_file_and_offset(tmp_path):
    path = tmp_path / "bad.txt"
    data = "héllo wörld ".encode() * 100 + b"\xff\xfe" + b" more"
    path.write_bytes(data)
    bad = data.index(b"\xff")
    with mock.patch.object(corpus_mod, "CHUNK_BYTES", 5):  # the offset must be right across chunks
        with pytest.raises(CorpusError, match=f"bad.txt: not valid UTF-8 at byte offset {bad} "):
            train_bpe(path, 300, show_progress=False)
        r = train_bpe(path, 300, show_progress=False, errors="replace")
    _, ref = train_bpe_reference([data.decode("utf-8", "replace")], 300)
    assert r.merges == ref
    # a truncated character at the end of the file
    path.write_bytes(b"abc \xe4\xb8")
    with pytest.raises(CorpusError, match="byte offset 4"):
        train_bpe(path, 300, show_progress=False)


def test_documents_must_be_str():
    with pytest.raises(CorpusError, match="document 1 must be a str"):
        train_bpe(["a", b"b"], 300, show_progress=False)


# ------------------------------------------------------------- command line
def test_cli_train_bpe(tmp_path, capsys):
    from segkit.cli import main

    a = tmp_path / "a.txt"
    b = tmp_path / "b.txt"
    a.write_text("low lower widest newest<|endoftext|>newest", encoding="utf-8")
    b.write_text("héllo wörld, héllo!", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["train", "bpe", "--vocab-size", "280", "--special", "<|endoftext|>", str(a), str(b),
                 "-o", str(out), "--no-progress"]) == 0
    direct = train_bpe([a, b], 280, ["<|endoftext|>"], show_progress=False)
    merges = (out / "merges.txt").read_text(encoding="utf-8").splitlines()[1:]
    assert len(merges) == len(direct.merges) == 280 - 257
    vocab = json.loads((out / "vocab.json").read_text(encoding="utf-8"))
    assert vocab["<|endoftext|>"] == 256 and len(vocab) == 280
    assert json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))["model"]["type"] == "BPE"


@pytest.mark.parametrize("argv,msg", [
    (["--vocab-size", "100"], "at least 256"),
    (["--vocab-size", "300", "--special", "x", "--special", "x"], "twice"),
])
def test_cli_train_bpe_errors(tmp_path, capsys, argv, msg):
    from segkit.cli import main

    f = tmp_path / "a.txt"
    f.write_text("abc", encoding="utf-8")
    assert main(["train", "bpe", *argv, str(f), "-o", str(tmp_path / "o")]) == 2
    assert msg in capsys.readouterr().err
    assert main(["train", "bpe", "--vocab-size", "300", str(tmp_path / "missing.txt"), "-o", str(tmp_path)]) == 2
    assert "missing.txt" in capsys.readouterr().err


def test_progress_bars_over_bytes_and_merges(tmp_path, capsys):
    path = tmp_path / "c.txt"
    path.write_text("the cat sat on the mat " * 50, encoding="utf-8")
    r = train_bpe(path, 270, show_progress=True)
    err = capsys.readouterr().err
    assert "counting" in err and "merging" in err and f"{len(r.merges)}/14" in err
    train_bpe(path, 270, show_progress=False)
    assert capsys.readouterr().err == ""
