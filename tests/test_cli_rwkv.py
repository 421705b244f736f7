"""``segkit tokenize --model rwkv-world`` (and a saved MaxMatch model file):
ids from the reference tokenizer where installed, tokens as UTF-8 with
``\\x`` escapes where they cut a character, JSON with character offsets."""

from __future__ import annotations

import json

import pytest

import segkit
from segkit.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ids_are_the_references(capsys):
    ref = pytest.importorskip("rwkv.rwkv_tokenizer", reason="rwkv (the reference RWKV tokenizer) is not installed")
    from pathlib import Path

    tok = ref.TRIE_TOKENIZER(str(Path(ref.__file__).with_name("rwkv_vocab_v20230424.txt")))
    texts = ["Hello, 世界! 😀", "  two  spaces\tand a tab"]
    code, out, err = run(capsys, "tokenize", "--model", "rwkv-world", "--format", "ids", *texts)
    assert code == 0, err
    assert [list(map(int, line.split())) for line in out.splitlines()] == [tok.encode(t) for t in texts]


def test_tokens_and_json(capsys):
    code, out, _ = run(capsys, "tokenize", "--model", "rwkv-world", "a😀")
    assert code == 0 and out == "a \\xf0\\x9f \\x98 \\x80\n"
    code, out, _ = run(capsys, "tokenize", "--model", "rwkv-world", "-f", "json", "a😀")
    record = json.loads(out)
    assert record["text"] == "a😀" and record["offsets"] == [[0, 1], [1, 2], [1, 2], [1, 2]]
    assert record["tokens"] == ["a", "\\xf0\\x9f", "\\x98", "\\x80"]


def test_a_saved_maxmatch_model_and_errors(capsys, tmp_path):
    path = tmp_path / "mm.segkit"
    segkit.MaxMatch([b"ab", b"a", b"b"]).save(path)
    code, out, _ = run(capsys, "tokenize", "--model", str(path), "-f", "ids", "abba")
    assert code == 0 and out == "0 2 1\n"
    code, _, err = run(capsys, "tokenize", "--model", str(path), "abc")
    assert code == 2 and "no token matches byte 0x63" in err
    code, _, err = run(capsys, "encode", "--model", "rwkv-world", "x")
    assert code == 2 and "use 'segkit tokenize'" in err
