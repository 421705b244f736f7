"""``segkit tokenize --model <BPE>``: bundled names and saved BPE models."""

from __future__ import annotations

import json

import segkit
from segkit.cli.command import main


def test_tokenize_ids_with_a_bundled_name(capsys):
    assert main(["tokenize", "--model", "cl100k_base", "--format", "ids", "hello world", "a<|endoftext|>"]) == 0
    out = capsys.readouterr().out.splitlines()
    enc = segkit.BPE.from_pretrained("cl100k_base")
    assert out == [" ".join(map(str, enc.encode("hello world"))),
                   " ".join(map(str, enc.encode("a<|endoftext|>", disallowed_special=())))]


def test_tokenize_tokens_are_byte_level(capsys):
    assert main(["tokenize", "--model", "gpt2", "Hello world"]) == 0
    assert capsys.readouterr().out == "Hello Ġworld\n"


def test_tokenize_json_and_a_saved_model(tmp_path, capsys):
    path = tmp_path / "o200k.segkit"
    segkit.BPE.from_pretrained("o200k_base").save(path)
    assert main(["tokenize", "--model", str(path), "--format", "json", "a cat"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record == {"text": "a cat", "ids": [64, 9059], "tokens": ["a", "Ġcat"], "offsets": [[0, 1], [1, 5]]}


def test_input_file(tmp_path, capsys):
    f = tmp_path / "in.txt"
    f.write_text("one\ntwo three\n", encoding="utf-8")
    assert main(["tokenize", "--model", "cl100k_base", "-f", "ids", "--input", str(f)]) == 0
    enc = segkit.BPE.from_pretrained("cl100k_base")
    assert capsys.readouterr().out.splitlines() == [" ".join(map(str, enc.encode(t))) for t in ("one", "two three")]


def test_encode_is_for_wordpiece(capsys):
    assert main(["encode", "--model", "cl100k_base", "x"]) == 2
    assert "WordPiece" in capsys.readouterr().err
