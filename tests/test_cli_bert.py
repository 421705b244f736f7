"""The ``segkit`` command line with BERT models: ``tokenize`` and ``encode``.

Runs :func:`segkit.cli.command.main` in-process and reads its output with
``capsys``.  Expected ids come from the bundled bert-base-uncased vocabulary
file, read here independently of segkit (id = line number).
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import pytest

import segkit
from segkit.cli import main

REPO = Path(__file__).resolve().parents[1]
UNCASED_VOCAB = REPO / "vocabularies" / "bert-base-uncased.txt"


@pytest.fixture(scope="module")
def uncased_ids() -> dict[str, int]:
    tokens = UNCASED_VOCAB.read_text(encoding="utf-8").split("\n")[:-1]
    return {t: i for i, t in enumerate(tokens)}


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def json_lines(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]


# ------------------------------------------------------------- tokenize
def test_tokenize_default_model_lowercases(capsys) -> None:
    code, out, err = run(capsys, "tokenize", "Hello, WORLD!", "Naïve CAFÉ")
    assert code == 0, err
    assert out == "hello , world !\nnaive cafe\n"


def test_tokenize_ids_and_json(capsys, uncased_ids) -> None:
    code, out, _ = run(capsys, "tokenize", "--format", "ids", "Hello, WORLD!")
    assert code == 0
    assert out.split() == [str(uncased_ids[t]) for t in ("hello", ",", "world", "!")]
    code, out, _ = run(capsys, "tokenize", "-f", "json", "Hello, WORLD!")
    (rec,) = json_lines(out)
    assert rec["text"] == "Hello, WORLD!"
    assert rec["tokens"] == ["hello", ",", "world", "!"]  # no special tokens
    assert rec["offsets"] == [[0, 5], [5, 6], [7, 12], [12, 13]]
    assert "type_ids" not in rec


def test_tokenize_pretrained_cased(capsys) -> None:
    code, out, _ = run(capsys, "tokenize", "--pretrained", "bert-base-multilingual-cased", "Hello WORLD")
    assert code == 0
    pieces = out.split()
    assert "".join(p.removeprefix("##") for p in pieces) == "HelloWORLD"
    assert pieces[0].startswith("H")


def test_tokenize_reads_files_and_stdin(capsys, monkeypatch, tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes("\ufeffFirst LINE\r\nsecond\n\nthird".encode("utf-8"))
    code, out, err = run(capsys, "tokenize", "-i", str(path))
    assert code == 0, err
    assert out == "first line\nsecond\n\nthird\n"  # BOM and CR dropped, empty line kept
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("From STANDARD Input\n".encode("utf-8"))))
    code, out, _ = run(capsys, "tokenize")
    assert code == 0 and out == "from standard input\n"


def test_tokenize_small_batches_same_output(capsys, tmp_path: Path) -> None:
    lines = [f"Line {i}: some TEXT, here." for i in range(25)]
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _, big, _ = run(capsys, "tokenize", "-i", str(path))
    _, small, _ = run(capsys, "tokenize", "-i", str(path), "--batch-size", "4")
    assert big == small and len(big.splitlines()) == 25


# --------------------------------------------------------------- encode
def test_encode_json_max_length_padding(capsys, uncased_ids) -> None:
    code, out, err = run(
        capsys, "encode", "--format", "json", "--max-length", "8", "--padding", "max_length",
        "Hello world", "one two three four five six seven eight nine",
    )
    assert code == 0, err
    short, long_ = json_lines(out)
    cls, sep, pad = uncased_ids["[CLS]"], uncased_ids["[SEP]"], uncased_ids["[PAD]"]
    assert short["ids"] == [cls, uncased_ids["hello"], uncased_ids["world"], sep, pad, pad, pad, pad]
    assert short["attention_mask"] == [1, 1, 1, 1, 0, 0, 0, 0]
    assert short["special_tokens_mask"] == [1, 0, 0, 1, 1, 1, 1, 1]
    assert short["type_ids"] == [0] * 8
    assert short["word_ids"] == [None, 0, 1, None, None, None, None, None]
    assert short["offsets"][:4] == [[0, 0], [0, 5], [6, 11], [0, 0]]
    assert long_["tokens"] == ["[CLS]", "one", "two", "three", "four", "five", "six", "[SEP]"]
    assert long_["attention_mask"] == [1] * 8


def test_encode_padding_longest_and_no_truncation(capsys) -> None:
    code, out, _ = run(capsys, "encode", "-f", "json", "--padding", "longest", "a", "a b c")
    assert code == 0
    first, second = json_lines(out)
    assert len(first["ids"]) == len(second["ids"]) == 5
    assert first["tokens"] == ["[CLS]", "a", "[SEP]", "[PAD]", "[PAD]"]
    # without --max-length nothing is truncated
    code, out, _ = run(capsys, "encode", " ".join(["word"] * 600))
    assert code == 0 and len(out.split()) == 602


def test_encode_pair_input(capsys, tmp_path: Path, uncased_ids) -> None:
    first = tmp_path / "a.txt"
    second = tmp_path / "b.txt"
    first.write_text("First line\nSecond\n", encoding="utf-8")
    second.write_text("pair one\npair two\n", encoding="utf-8")
    code, out, err = run(capsys, "encode", "-f", "json", "-i", str(first), "--pair-input", str(second))
    assert code == 0, err
    a, b = json_lines(out)
    assert (a["text"], a["pair"]) == ("First line", "pair one")
    assert a["tokens"] == ["[CLS]", "first", "line", "[SEP]", "pair", "one", "[SEP]"]
    assert a["type_ids"] == [0, 0, 0, 0, 1, 1, 1]
    assert a["offsets"][4:6] == [[0, 4], [5, 8]]  # offsets into the pair text
    assert b["tokens"] == ["[CLS]", "second", "[SEP]", "pair", "two", "[SEP]"]
    code, out, _ = run(
        capsys, "encode", "-f", "ids", "-i", str(first), "--pair-input", str(second), "--max-length", "5"
    )
    cls, sep = uncased_ids["[CLS]"], uncased_ids["[SEP]"]
    assert [line.split() for line in out.splitlines()] == [
        [str(cls), str(uncased_ids["first"]), str(sep), str(uncased_ids["pair"]), str(sep)],
        [str(cls), str(uncased_ids["second"]), str(sep), str(uncased_ids["pair"]), str(sep)],
    ]


def test_encode_pair_input_length_mismatch(capsys, tmp_path: Path) -> None:
    first = tmp_path / "a.txt"
    second = tmp_path / "b.txt"
    first.write_text("one\ntwo\n", encoding="utf-8")
    second.write_text("only one\n", encoding="utf-8")
    code, _, err = run(capsys, "encode", "-i", str(first), "--pair-input", str(second))
    assert code == 2
    assert "--pair-input" in err and "fewer" in err


TINY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "Hello", "hello", "world", "##s", "!"]


def _tiny_tokenizer_json(lowercase: bool) -> dict:
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for i, t in enumerate(TINY_VOCAB[:5])
        ],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": lowercase},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": {t: i for i, t in enumerate(TINY_VOCAB)}},
    }


def test_tokenizer_json_option(capsys, tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(_tiny_tokenizer_json(lowercase=False)), encoding="utf-8")
    code, out, err = run(capsys, "tokenize", "--tokenizer-json", str(path), "Hello worlds!", "HELLO")
    assert code == 0, err
    assert out == "Hello world ##s !\n[UNK]\n"
    code, out, _ = run(capsys, "encode", "--tokenizer-json", str(path), "-f", "ids", "Hello [MASK]")
    assert out.split() == ["2", "5", "4", "3"]


def test_model_option(capsys, tmp_path: Path) -> None:
    path = tmp_path / "tiny.segkit"
    segkit.WordPiece.bert(TINY_VOCAB, lowercase=False).save(path)
    code, out, err = run(capsys, "encode", "--model", str(path), "Hello worlds!")
    assert code == 0, err
    assert out == "[CLS] Hello world ##s ! [SEP]\n"


def test_vocab_option_cased_and_uncased(capsys, tmp_path: Path) -> None:
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(TINY_VOCAB) + "\n", encoding="utf-8")
    _, out, _ = run(capsys, "tokenize", "--vocab", str(path), "HELLO Worlds")
    assert out == "hello world ##s\n"
    _, out, _ = run(capsys, "tokenize", "--vocab", str(path), "--cased", "Hello Worlds")
    assert out == "Hello [UNK]\n"


# ---------------------------------------------------------------- errors
def test_error_missing_input_file(capsys, tmp_path: Path) -> None:
    code, out, err = run(capsys, "tokenize", "-i", str(tmp_path / "missing.txt"))
    assert code == 2
    assert "missing.txt" in err and "not found" in err


def test_error_unknown_pretrained_name(capsys) -> None:
    code, _, err = run(capsys, "tokenize", "--pretrained", "bert-large-cased", "x")
    assert code == 2
    assert "bert-large-cased" in err and "bert-base-uncased" in err


def test_error_non_utf8_input_names_the_line(capsys, tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"fine\nalso fine\ncaf\xe9\n")
    code, _, err = run(capsys, "tokenize", "-i", str(path))
    assert code == 2
    assert "latin1.txt" in err and "line 3" in err and "UTF-8" in err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["tokenize", "--tokenizer-json", "MISSING/tokenizer.json", "x"], "tokenizer.json"),
        (["tokenize", "--model", "MISSING/model.segkit", "x"], "model.segkit"),
        (["tokenize", "--vocab", "MISSING/vocab.txt", "x"], "vocab.txt"),
        (["encode", "--max-length", "1", "a b"], "special tokens"),
        (["tokenize", "--batch-size", "0", "x"], "batch-size"),
    ],
)
def test_errors_exit_2(capsys, tmp_path: Path, argv: list[str], needle: str) -> None:
    argv = [a.replace("MISSING", str(tmp_path / "missing")) for a in argv]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("segkit: error:") and needle in err


def test_error_texts_and_input_together(capsys, tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("x\n", encoding="utf-8")
    code, _, err = run(capsys, "tokenize", "-i", str(path), "text")
    assert code == 2 and "not both" in err


def test_error_bad_tokenizer_json(capsys, tmp_path: Path) -> None:
    data = _tiny_tokenizer_json(lowercase=True)
    data["model"]["type"] = "BPE"
    path = tmp_path / "bpe.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = run(capsys, "tokenize", "--tokenizer-json", str(path), "x")
    assert code == 2 and "BPE" in err


def test_argparse_errors_exit_2(capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["encode", "--padding", "sideways", "x"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2


# ------------------------------------------- hardening (issue 17, section 5)
def _deny(path_part: str, real_open):
    def fake_open(file, *args, **kwargs):
        if path_part in str(file):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    return fake_open


def test_error_unreadable_input_file(capsys, monkeypatch, tmp_path: Path) -> None:
    path = tmp_path / "secret.txt"
    path.write_text("x\n", encoding="utf-8")
    monkeypatch.setattr("segkit.cli.io.open", _deny("secret.txt", open), raising=False)
    code, out, err = run(capsys, "tokenize", "-i", str(path))
    assert code == 2 and out == ""
    assert err == f"segkit: error: cannot read input file {path}: Permission denied\n"


def test_error_unreadable_model_file(capsys, monkeypatch, tmp_path: Path) -> None:
    path = tmp_path / "m.segkit"
    segkit.WordPiece(["[UNK]", "a"]).save(path)
    # segkit.load reads the file with os.open (running as root, chmod cannot deny it)
    monkeypatch.setattr("segkit.models.files.os.open", _deny("m.segkit", os.open))
    code, _, err = run(capsys, "tokenize", "--model", str(path), "x")
    assert code == 2 and err == f"segkit: error: {path}: cannot be read (Permission denied)\n"


def test_error_model_is_a_directory(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "tokenize", "--model", str(tmp_path), "x")
    assert code == 2 and err.startswith("segkit: error:") and str(tmp_path) in err
    assert "Traceback" not in err and len(err.splitlines()) == 1


def test_error_model_is_chinese(capsys, tmp_path: Path) -> None:
    from segkit_cjk import ChineseMaxMatch

    path = tmp_path / "zh.segkit"
    ChineseMaxMatch(["北京"]).save(path)
    code, _, err = run(capsys, "tokenize", "--model", str(path), "x")
    assert code == 2
    assert err == f"segkit: error: {path}: is a ChineseMaxMatch model; tokenize and encode need a WordPiece, BPE, MaxMatch or tokenizer.json model\n"


def test_error_tokenizer_json_wrong_types(capsys, tmp_path: Path) -> None:
    data = _tiny_tokenizer_json(lowercase=True)
    data["normalizer"] = ["BertNormalizer"]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = run(capsys, "tokenize", "--tokenizer-json", str(path), "x")
    assert code == 2 and err.startswith("segkit: error:") and "'normalizer' must be an object" in err


def test_error_bad_utf8_late_says_what_was_written(capsys, tmp_path: Path) -> None:
    # Line 10,001 is not UTF-8; batches of 4096: the output holds the
    # results of exactly the 10,000 lines before it, and the error says so.
    path = tmp_path / "in.txt"
    path.write_bytes(b"hello world\n" * 10_000 + b"caf\xe9\n" + b"more\n")
    code, out, err = run(capsys, "tokenize", "-i", str(path))
    assert code == 2
    assert out == "hello world\n" * 10_000
    assert err == (
        f"segkit: error: {path}: line 10001: not valid UTF-8 (byte 0xe9 at column 4); "
        "the output holds the results of the 10000 texts before it\n"
    )
