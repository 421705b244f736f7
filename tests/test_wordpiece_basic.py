"""The WordPiece preset's public surface: construction, encode/decode, batches, CLI.

Expected outputs for the bundled BERT vocabularies were produced by
HuggingFace ``tokenizers`` (``models.WordPiece`` + ``BertPreTokenizer``), an
independent implementation, and are hard-coded here; ids that are not
hard-coded are looked up in the vocabulary file directly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import segkit
from segkit.cli import main

REPO = Path(__file__).resolve().parents[1]
BUNDLED_VOCABS = REPO / "vocabularies"

SMALL = ["[UNK]", "un", "##aff", "##able", "!", "a", "##b", ","]


# -------------------------------------------------------------- construction
def test_constructor_from_list():
    wp = segkit.WordPiece(SMALL)
    assert wp.tokenize("unaffable!") == ["un", "##aff", "##able", "!"]
    assert wp.encode("unaffable!").ids == [1, 2, 3, 4]
    assert wp.unk_id == 0
    assert len(wp.vocab) == len(SMALL)
    assert isinstance(wp.vocab, segkit.Vocabulary)
    assert isinstance(wp.automaton, segkit.Automaton)


@pytest.mark.parametrize("as_str", [True, False])
def test_constructor_from_path(tmp_path, as_str):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(SMALL) + "\n", encoding="utf-8")
    wp = segkit.WordPiece(str(path) if as_str else path)
    assert wp.encode("unaffable!").ids == [1, 2, 3, 4]
    assert len(wp.vocab) == len(SMALL)  # the final newline adds no token


def test_constructor_from_path_without_final_newline(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(SMALL), encoding="utf-8")
    assert segkit.WordPiece(path).encode("ab,").ids == [5, 6, 7]


def test_constructor_from_mapping_with_sparse_ids():
    mapping = {"[UNK]": 50, "un": 7, "##aff": 3, "##able": 1000, "!": 0}
    wp = segkit.WordPiece(mapping)
    enc = wp.encode("unaffable! xyz")
    assert enc.ids == [7, 3, 1000, 0, 50]
    assert enc.tokens == ["un", "##aff", "##able", "!", "[UNK]"]
    assert wp.unk_id == 50
    assert wp.decode(enc.ids) == "unaffable!"  # [UNK] is a special token: skipped
    assert wp.decode(enc.ids, skip_special_tokens=False) == "unaffable! [UNK]"
    assert wp.token_to_id("##able") == 1000 and wp.token_to_id("nope") is None
    assert wp.id_to_token(3) == "##aff"
    with pytest.raises(IndexError):
        wp.id_to_token(4)  # unused id


def test_constructor_from_vocabulary_and_tuple():
    v = segkit.Vocabulary.load(SMALL)
    for source in (v, tuple(SMALL)):
        expected = ["un", "##aff", "##able", "a", "##b", ",", "[UNK]"]
        assert segkit.WordPiece(source).tokenize("unaffable ab, x") == expected


def test_constructor_options():
    wp = segkit.WordPiece(["<unk>", "un", "@@aff", "@@able"], suffix_indicator="@@", unk_token="<unk>")
    assert wp.tokenize("unaffable unable") == ["un", "@@aff", "@@able", "un", "@@able"]
    assert wp.tokenize("xunable") == ["<unk>"]
    short = segkit.WordPiece(SMALL, max_input_chars_per_word=8)
    assert short.tokenize("unaffable unaff") == ["[UNK]", "un", "##aff"]  # 9 chars > 8
    assert segkit.WordPiece(SMALL, max_input_chars_per_word=9).tokenize("unaffable") == ["un", "##aff", "##able"]
    r = repr(segkit.WordPiece(SMALL))
    assert "WordPiece(" in r and "vocab_size=8" in r


def test_cjk_option():
    tokens = ["[UNK]", "a", "中", "##中", "\U0002B820", "##a"]
    text = "a中a \U0002B820a"
    # U+2B820 is an ideograph for Google's ranges only: with "hf" it is an
    # ordinary word character.
    assert segkit.WordPiece(tokens).tokenize(text) == ["a", "中", "a", "\U0002B820", "##a"]
    assert segkit.WordPiece(tokens, cjk="hf").tokenize(text) == ["a", "中", "a", "\U0002B820", "##a"]
    assert segkit.WordPiece(tokens, cjk="bert").tokenize(text) == ["a", "中", "a", "\U0002B820", "a"]
    no_cjk = segkit.WordPiece(tokens, handle_chinese_chars=False)
    assert no_cjk.tokenize(text) == ["a", "##中", "##a", "\U0002B820", "##a"]
    assert segkit.WordPiece(["[UNK]", "a"], handle_chinese_chars=False).tokenize("a中a") == ["[UNK]"]
    assert segkit.WordPiece(["[UNK]", "a"]).encode("a中a").offsets == [(0, 1), (1, 2), (2, 3)]
    with pytest.raises(ValueError, match="cjk"):
        segkit.WordPiece(tokens, cjk="chinese")


def test_special_tokens_are_kept_whole():
    tokens = ["[UNK]", "[CLS]", "[", "##UN", "##K", "]", "a"]
    wp = segkit.WordPiece(tokens)  # default: [PAD] [UNK] [CLS] [SEP] [MASK] that are in the vocabulary
    enc = wp.encode("a[UNK] [CLS]a")
    assert enc.tokens == ["a", "[UNK]", "[CLS]", "a"]
    assert enc.offsets == [(0, 1), (1, 6), (7, 12), (12, 13)]
    plain = segkit.WordPiece(tokens, special_tokens=[])
    assert plain.tokenize("a[UNK]") == ["a", "[", "[UNK]", "]"]


# ------------------------------------------------------- known outputs (HF)
def test_bert_base_uncased_example():
    wp = segkit.WordPiece(BUNDLED_VOCABS / "bert-base-uncased.txt")
    enc = wp.encode("unaffable tokenization, hello world!")
    assert enc.tokens == ["una", "##ffa", "##ble", "token", "##ization", ",", "hello", "world", "!"]
    assert enc.ids == [14477, 20961, 3468, 19204, 3989, 1010, 7592, 2088, 999]
    assert enc.offsets == [(0, 3), (3, 6), (6, 9), (10, 15), (15, 22), (22, 23), (24, 29), (30, 35), (35, 36)]
    assert wp.tokenize("Hello") == ["[UNK]"]  # no lowercasing: segkit does not normalize


def test_multilingual_examples(mbert, mbert_tokens):
    enc = mbert.encode("Hello, world! Tokenization is fun.")
    assert enc.tokens == ["Hello", ",", "world", "!", "To", "##ken", "##ization", "is", "fun", "."]
    assert enc.ids == [31178, 117, 11356, 106, 11469, 11062, 19980, 10124, 41807, 119]
    assert enc.offsets == [
        (0, 5), (5, 6), (7, 12), (12, 13), (14, 16), (16, 19), (19, 26), (27, 29), (30, 33), (33, 34)
    ]
    enc = mbert.encode("Straße 東京 naïve 😀")
    # CJK ideographs are words of their own (HF does this in its normalizer).
    assert enc.tokens == ["Straße", "東", "京", "na", "##ï", "##ve", "[UNK]"]
    assert enc.ids == [17241, mbert_tokens.index("東"), mbert_tokens.index("京"), 10132, 27514, 10612, 100]
    assert enc.offsets == [(0, 6), (7, 8), (8, 9), (10, 12), (12, 13), (13, 15), (16, 17)]


def test_bert_base_chinese_example():
    tokens = (BUNDLED_VOCABS / "bert-base-chinese.txt").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(tokens) == 21128  # U+2028 inside tokens must not split lines
    wp = segkit.WordPiece(BUNDLED_VOCABS / "bert-base-chinese.txt")
    assert len(wp.vocab) == 21128
    text = "我爱北京天安门。"
    assert wp.tokenize(text) == list(text)
    assert wp.encode(text).ids == [tokens.index(c) for c in text]
    assert wp.encode(text).ids[-1] == 511
    # Lines 343 and 13502 are "\u2028" and "##\u2028": trailing whitespace is
    # stripped as HF tokenizers' WordPiece.from_file does (a blank token, and
    # "##"); transformers' slow BertTokenizer keeps it (docs/bad_input.rst).
    assert tokens[343] == "\u2028" and tokens[13502] == "##\u2028"
    assert wp.token_to_id("\u2028") is None and wp.vocab.token(343) == ""
    assert wp.token_to_id("##") == 13502


# ---------------------------------------------------------------- encodings
SENTENCES = [
    "Hello, world! Tokenization is fun.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "日本語の文章も、ちゃんと分割されます。",
    "  leading and trailing spaces\t\n",
    "emoji 😀 and astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 letters",
    "",
    "a" * 150 + " short",
    "¿Qué tal? «Bien» — gracias…",
]


@pytest.mark.parametrize("text", SENTENCES)
def test_tokens_offsets_consistency(mbert, text):
    enc = mbert.encode(text)
    n = len(enc)
    assert len(enc.ids) == len(enc.tokens) == len(enc.offsets) == n
    assert enc.ids_array.dtype == np.int32 and enc.ids_array.tolist() == enc.ids
    assert enc.offsets_array.shape == (n, 2) and [tuple(r) for r in enc.offsets_array.tolist()] == enc.offsets
    assert mbert.tokenize(text) == enc.tokens
    assert mbert.encode_ids(text) == enc.ids
    assert [mbert.id_to_token(i) for i in enc.ids] == enc.tokens
    prev_end = 0
    for tok, (s, e) in zip(enc.tokens, enc.offsets):
        assert prev_end <= s < e <= len(text)
        piece = text[s:e]
        assert not any(c.isspace() for c in piece)
        if tok != "[UNK]":
            # In text, "#" is punctuation, so "##x" tokens are always continuations.
            assert piece == (tok[2:] if tok.startswith("##") else tok)
        prev_end = e
    assert "Encoding(" in repr(enc)


def test_long_word_is_one_unk(mbert):
    enc = mbert.encode("a" * 150 + " short")
    assert enc.tokens == ["[UNK]", "short"]
    assert enc.offsets == [(0, 150), (151, 156)]
    assert mbert.tokenize("a" * 100) != ["[UNK]"]  # exactly the limit is still tokenized


def test_decode(mbert):
    # As HuggingFace's WordPiece decoder (expected values checked against
    # tokenizers' decoders.WordPiece): continuation pieces attach, other
    # tokens get a space, special tokens are skipped, and " ." " ," " !"
    # " ?" are cleaned up per token.
    wp = segkit.WordPiece(SMALL + ["[CLS]", "[SEP]", "'", "s", "it"])
    assert wp.decode(wp.encode("unaffable !").ids) == "unaffable!"
    assert wp.decode([1, 2, 3, 4]) == "unaffable!"
    assert wp.decode([1, 2, 3, 4], cleanup=False) == "unaffable !"
    assert wp.decode([5, 7, 5, 6]) == "a, ab"
    assert wp.decode([5, 7, 5, 6], cleanup=False) == "a , ab"
    assert wp.decode([12, 10, 11]) == "it ' s"  # cleanup is per token, as in HF: "'" and "s" stay apart
    assert wp.decode([]) == ""
    assert wp.decode([2, 1]) == "##aff un"  # a leading continuation keeps its indicator
    assert wp.decode(np.array([5, 6], dtype=np.int32)) == "ab"
    assert wp.decode([8, 1, 2, 9, 0]) == "unaff"  # [CLS] [SEP] [UNK] skipped
    assert wp.decode([8, 1, 2, 9, 0], skip_special_tokens=False) == "[CLS] unaff [SEP] [UNK]"
    assert mbert.decode(mbert.encode("Tokenization is fun").ids) == "Tokenization is fun"
    empty = segkit.WordPiece(["[UNK]", "ab", "c"], suffix_indicator="")
    assert empty.tokenize("abc") == ["ab", "c"]
    assert empty.decode(empty.encode("abc").ids) == "ab c"


def test_decode_unknown_id():
    # docs/bad_input.rst: "decode and Vocabulary.token raise IndexError for an
    # id that no token has".
    wp = segkit.WordPiece(SMALL)
    with pytest.raises(IndexError):
        wp.vocab.token(99)
    with pytest.raises(IndexError):
        wp.decode([1, 99])


# -------------------------------------------------------------------- batch
def test_encode_batch_is_a_sequence(mbert):
    texts = SENTENCES
    batch = mbert.encode_batch(texts)
    singles = [mbert.encode(t) for t in texts]
    assert isinstance(batch, Sequence)
    assert len(batch) == len(texts)
    for k in range(len(texts)):
        assert batch[k].ids == singles[k].ids
        assert batch[k].offsets == singles[k].offsets
        assert batch[k].tokens == singles[k].tokens
        assert batch[-len(texts) + k].ids == singles[k].ids
    assert batch[-1].ids == singles[-1].ids
    with pytest.raises(IndexError):
        batch[len(texts)]
    with pytest.raises(IndexError):
        batch[-len(texts) - 1]
    assert [e.ids for e in batch[1:4]] == [e.ids for e in singles[1:4]]
    assert [e.ids for e in batch[::-2]] == [e.ids for e in singles[::-2]]
    assert batch[5:2] == []
    assert [e.offsets for e in batch] == [e.offsets for e in singles]
    assert batch.ids == [e.ids for e in singles]
    rows = batch.row_splits.tolist()
    assert rows[0] == 0 and rows[-1] == batch.ids_flat.size == sum(len(e) for e in singles)
    assert np.concatenate([e.ids_array for e in singles]).tolist() == batch.ids_flat.tolist()
    assert "BatchEncoding(" in repr(batch)


def test_encode_batch_edge_cases(mbert):
    assert len(mbert.encode_batch([])) == 0
    assert mbert.encode_batch([]).ids == []
    b = mbert.encode_batch(["", "", "Hello"])
    assert b.ids == [[], [], [31178]] and b[2].offsets == [(0, 5)]
    assert mbert.encode_batch(("Hello", "world")).ids == [[31178], [11356]]
    with pytest.raises(TypeError, match="single str"):
        mbert.encode_batch("Hello")


# ---------------------------------------------------------------------- CLI
MBERT = ["--pretrained", "bert-base-multilingual-cased"]
CLI_VOCAB = SMALL + ["[CLS]", "[SEP]"]


@pytest.fixture(autouse=False)
def cli_env(monkeypatch, tmp_path):
    """Keep segkit's model cache inside the test's temporary folder."""
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def run_cli(argv, capsys):
    """Run ``segkit`` in-process; returns (exit status, stdout, stderr)."""
    try:
        code = main(argv)
    except SystemExit as e:  # status as the interpreter would report it
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=sys.stderr)
            code = 1
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_tokens(cli_env, capsys):
    code, out, err = run_cli(["tokenize", *MBERT, "Hello, world!", "Tokenization is fun."], capsys)
    assert code == 0, err
    assert out.splitlines() == ["Hello , world !", "To ##ken ##ization is fun ."]


def test_cli_ids(cli_env, capsys):
    code, out, _ = run_cli(["tokenize", *MBERT, "--format", "ids", "Hello, world!"], capsys)
    assert code == 0
    assert out == "31178 117 11356 106\n"


def test_cli_json(cli_env, capsys, mbert_tokens):
    code, out, _ = run_cli(["tokenize", *MBERT, "-f", "json", "Hello, world!", "日本"], capsys)
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[0] == {
        "text": "Hello, world!",
        "ids": [31178, 117, 11356, 106],
        "tokens": ["Hello", ",", "world", "!"],
        "offsets": [[0, 5], [5, 6], [7, 12], [12, 13]],
    }
    assert rows[1]["text"] == "日本" and rows[1]["tokens"] == ["日", "本"]
    assert rows[1]["ids"] == [mbert_tokens.index("日"), mbert_tokens.index("本")]
    assert rows[1]["offsets"] == [[0, 1], [1, 2]]


def test_cli_input_file_and_vocab(cli_env, capsys):
    vocab = cli_env / "vocab.txt"
    vocab.write_text("\n".join(CLI_VOCAB) + "\n", encoding="utf-8")
    inp = cli_env / "in.txt"
    inp.write_bytes("unaffable!\r\n\r\nab, zz\nlast".encode("utf-8"))
    argv = ["tokenize", "--vocab", str(vocab), "--cased", "--input", str(inp), "--batch-size", "2"]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert out.split("\n") == ["un ##aff ##able !", "", "a ##b , [UNK]", "[UNK]", ""]


def test_cli_input_file_lines(cli_env, capsys):
    inp = cli_env / "in.txt"
    inp.write_text("Hello\nworld\n", encoding="utf-8")
    code, out, _ = run_cli(["tokenize", *MBERT, "-f", "ids", "-i", str(inp)], capsys)
    assert code == 0
    assert out == "31178\n11356\n"


def test_cli_pretrained_uncased(cli_env, capsys):
    code, out, _ = run_cli(["tokenize", "--pretrained", "bert-base-uncased", "Unaffable"], capsys)
    assert code == 0 and out == "una ##ffa ##ble\n"  # lowercased by the bundled model's pipeline


def test_cli_unknown_pretrained(cli_env, capsys):
    code, out, err = run_cli(["tokenize", "--pretrained", "bert-huge-klingon", "x"], capsys)
    assert code == 2
    assert out == ""
    assert "bert-huge-klingon" in err and "bert-base-uncased" in err  # lists the known names


def test_cli_missing_vocab_file(cli_env, capsys):
    missing = cli_env / "nope.txt"
    code, out, err = run_cli(["tokenize", "--vocab", str(missing), "x"], capsys)
    assert code == 2
    assert out == "" and str(missing) in err and "segkit: error" in err


def test_cli_vocab_without_unk(cli_env, capsys):
    vocab = cli_env / "vocab.txt"
    vocab.write_text("a\nb\n[CLS]\n[SEP]\n", encoding="utf-8")
    code, _, err = run_cli(["tokenize", "--vocab", str(vocab), "x"], capsys)
    assert code == 2 and "[UNK]" in err


def test_cli_missing_input_file(cli_env, capsys):
    missing = cli_env / "missing-input.txt"
    code, out, err = run_cli(["tokenize", *MBERT, "--input", str(missing)], capsys)
    assert code == 2
    assert "input file not found" in err and str(missing) in err


def test_cli_input_not_utf8(cli_env, capsys):
    bad = cli_env / "latin1.txt"
    bad.write_bytes(b"fine\ncaf\xe9\n")
    code, _, err = run_cli(["tokenize", *MBERT, "--input", str(bad)], capsys)
    assert code == 2
    assert "line 2" in err and "UTF-8" in err


def test_cli_texts_and_input_conflict(cli_env, capsys):
    inp = cli_env / "in.txt"
    inp.write_text("x\n", encoding="utf-8")
    code, _, err = run_cli(["tokenize", *MBERT, "--input", str(inp), "text"], capsys)
    assert code == 2 and "not both" in err


def test_cli_subprocess_exit_status(cli_env):
    env = dict(os.environ, PYTHONPATH=str(REPO), SEGKIT_CACHE_DIR=str(cli_env / "cache"))
    ok = subprocess.run(
        [sys.executable, "-m", "segkit", "tokenize", *MBERT, "Hello, world!"],
        capture_output=True, text=True, timeout=240, cwd=cli_env, env=env,
    )
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == "Hello , world !\n"
    bad = subprocess.run(
        [sys.executable, "-m", "segkit", "tokenize", *MBERT, "--input", str(cli_env / "missing.txt")],
        capture_output=True, text=True, timeout=240, cwd=cli_env, env=env,
    )
    assert bad.returncode == 2  # like every other CLI error
    assert "input file not found" in bad.stderr
