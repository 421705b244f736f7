"""What a new user meets first on the command line (issue 27, "First five
minutes"): one interface for both trainers, errors in the command line's
words, the subcommand's usage for a bad option, descriptions, a note when
``segkit tokenize`` waits for standard input on a terminal, and the Chinese
segmenter's default mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import segkit
from segkit.cli import main

REPO = Path(__file__).resolve().parents[1]


def _run(*argv: str, stdin=None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "segkit", *argv], stdin=stdin, capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=str(REPO))


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("low lower newest widest\nHello world, hello there.\n" * 5, encoding="utf-8")
    return path


@pytest.mark.parametrize("trainer,size,specials", [("bpe", "270", ["<s>", "</s>"]), ("wordpiece", "60", ["[UNK]", "<s>"])])
def test_both_trainers_take_the_same_options(trainer, size, specials, corpus, tmp_path, capsys):
    out = tmp_path / trainer
    argv = ["train", trainer, "--vocab-size", size, "--special", specials[0], "--special", specials[1],
            "--threads", "2", "--errors", "replace", "--no-progress", str(corpus), "-o", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    tokenizer = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    added = [t["content"] for t in tokenizer["added_tokens"]]
    assert added[:2] == specials, added
    assert main(["train", trainer, "--vocab-size", size, "-q", str(corpus), "-o", str(out)]) == 0  # --quiet too


def test_train_wordpiece_writes_a_tokenizer_json_that_hf_loads(corpus, tmp_path, capsys):
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (it loads the output)")
    out = tmp_path / "wp"
    assert main(["train", "wordpiece", "--vocab-size", "60", "-q", str(corpus), "-o", str(out)]) == 0
    ours = segkit.load(out / "wordpiece.segkit")
    theirs = tokenizers.Tokenizer.from_file(str(out / "tokenizer.json"))
    for text in ["Hello world", "newest lower, LOW!", "unseen words here"]:
        assert theirs.encode(text).ids == ours.encode(text).ids


def test_a_binary_file_names_the_option_not_the_argument(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine text \xc3( more")
    for trainer, size in (("bpe", "270"), ("wordpiece", "60")):
        assert main(["train", trainer, "--vocab-size", size, "-q", str(bad), "-o", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err
        assert "--errors replace" in err and "errors=" not in err, err


def test_a_bad_size_names_the_option(corpus, tmp_path, capsys):
    assert main(["train", "bpe", "--vocab-size", "100", "-q", str(corpus), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("segkit: error: ") and "--vocab-size" in err and "vocab_size" not in err, err


def test_an_empty_training_file_warns(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    assert main(["train", "bpe", "--vocab-size", "300", "-q", str(empty), "-o", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    assert f"segkit: warning: {empty} is empty" in err
    assert "holds no text" in err


def test_a_bad_option_prints_the_subcommands_usage(corpus, tmp_path):
    proc = _run("train", "bpe", "--vocab-size", "300", str(corpus), "-o", str(tmp_path / "o"), "--bogus")
    assert proc.returncode == 2
    assert "usage: segkit train bpe" in proc.stderr and "unrecognized arguments: --bogus" in proc.stderr, proc.stderr
    proc = _run("cut", "--bogus")
    assert "usage: segkit cut" in proc.stderr, proc.stderr


def test_help_describes_the_tool_and_every_command():
    top = _run("--help").stdout
    assert "MaxMatch" in top and "Chinese" in top and "training" in top
    for argv in (("tokenize",), ("encode",), ("cut",), ("train",), ("train", "bpe"), ("train", "wordpiece")):
        proc = _run(*argv, "--help")
        assert proc.returncode == 0
        usage, _, rest = proc.stdout.partition("\n\n")
        description = rest.split("\n\n")[0]
        assert description and not description.startswith(("positional", "options")), (argv, proc.stdout[:400])


def test_python_dash_m_segkit_runs_the_command():
    proc = _run("tokenize", "Hello, world!")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "hello , world !\n"


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("command", ["tokenize", "cut"])
def test_reading_a_terminal_says_so(command):
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "segkit", command], stdin=follower, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=str(REPO))
        os.write(leader, b"hello\n\x04")  # a line, then Ctrl-D
        out, err = proc.communicate(timeout=300)
    finally:
        os.close(leader)
        os.close(follower)
    assert b"reading texts from standard input" in err, err
    assert proc.returncode == 0, err


def test_no_note_when_standard_input_is_a_pipe():
    proc = _run("tokenize", stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and "reading texts" not in proc.stderr


def test_chinese_default_is_bidirectional(capsys):
    assert segkit.ChineseMaxMatch().mode == "bidirectional"
    assert segkit.ChineseMaxMatch().cut("研究生命起源") == ["研究", "生命", "起源"]
    import io

    stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO("研究生命起源\n".encode("utf-8")))
    try:
        assert main(["cut"]) == 0
    finally:
        sys.stdin = stdin
    assert capsys.readouterr().out == "研究 / 生命 / 起源\n"
