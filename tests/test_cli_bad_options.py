"""Command-line options out of range and files that are not regular files
(issue 27, "Exceptions that are not the library's" and "Hangs"): one line
``segkit: error: ...`` naming the option, exit status 2, never a traceback,
never a hang or a memory blow-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from segkit.cli import main

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def corpus(tmp_path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("low lower newest widest\nHello world, hello there.\n" * 5, encoding="utf-8")
    return path


def _error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    (line,) = err.strip().splitlines()
    assert line.startswith("segkit: error: "), line
    return line


@pytest.mark.parametrize("argv,option", [
    (["train", "bpe", "--vocab-size", "300", "--threads", "100000"], "--threads must be at most 256"),
    (["train", "wordpiece", "--threads", "100000"], "--threads must be at most 256"),
    (["train", "wordpiece", "--threads", "0"], "--threads must be a positive int"),
])
def test_threads_out_of_range(argv, option, corpus, tmp_path, capsys):
    assert main([*argv, str(corpus), "-o", str(tmp_path / "o")]) == 2
    assert option in _error_line(capsys)


@pytest.mark.parametrize("trainer", ["bpe", "wordpiece"])
@pytest.mark.parametrize("size", ["1e8", "2**40", "ten"])
def test_a_vocab_size_that_is_not_an_int(trainer, size, corpus, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", trainer, "--vocab-size", size, str(corpus), "-o", str(tmp_path / "o")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"argument --vocab-size: invalid int value: '{size}'" in err


@pytest.mark.parametrize("trainer,expected", [("bpe", 256 + 40), ("wordpiece", 5 + 40)])
@pytest.mark.parametrize("size", [str(2**40), str(2**63), str(2**64)])
def test_a_huge_vocab_size_trains_what_the_corpus_gives(trainer, expected, size, corpus, tmp_path, capsys):
    # (2**40 used to end in MemoryError, 2**63 in "negative dimensions",
    # 2**64 in an abort inside malloc)
    out = tmp_path / "o"
    assert main(["train", trainer, "--vocab-size", size, "-q", str(corpus), "-o", str(out)]) == 0, capsys.readouterr()
    names = {"bpe": "vocab.json", "wordpiece": "vocab.txt"}
    assert (out / names[trainer]).is_file()
    assert "tokens" in capsys.readouterr().err


def test_a_huge_min_frequency(corpus, tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["train", "wordpiece", "--min-frequency", str(2**70), "-q", str(corpus), "-o", str(out)]) == 0
    tokens = (out / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    # no merge is frequent enough: only special tokens and characters
    assert all(len(t.removeprefix("##")) <= 1 or t.startswith("[") for t in tokens), tokens


def test_a_delimiter_that_is_not_utf8(tmp_path):
    # A byte that is not UTF-8 on the command line reaches Python as a lone
    # surrogate; writing it failed with UnicodeEncodeError after the input
    # was read.
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "segkit", "cut", "-d", os.fsdecode(b"\xff")], input="研究生命\n",
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == "segkit: error: --delimiter must be UTF-8 text, found the bytes b'\\xff'\n"


# ------------------------------------------------------ not regular files
NOT_REGULAR = [("fifo", "a FIFO (named pipe), not a regular file"),
               ("/dev/zero", "a character device, not a regular file")]


@pytest.fixture
def special_file(request, tmp_path) -> tuple[str, str]:
    kind, what = request.param
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs on this platform")
        path = tmp_path / "pipe"
        os.mkfifo(path)
        return str(path), what
    if not os.path.exists(kind):
        pytest.skip(f"no {kind} on this system")
    return kind, what


@pytest.mark.parametrize("special_file", NOT_REGULAR, indirect=True, ids=["fifo", "dev-zero"])
@pytest.mark.parametrize("argv", [
    ["train", "bpe", "--vocab-size", "300", "{path}", "-o", "{out}"],
    ["train", "wordpiece", "{path}", "-o", "{out}"],
    ["cut", "--userdict", "{path}"],
    ["tokenize", "--vocab", "{path}"],
], ids=["train-bpe", "train-wordpiece", "cut-userdict", "tokenize-vocab"])
def test_a_fifo_or_device_is_refused_before_it_is_read(special_file, argv, tmp_path):
    # `segkit train bpe /dev/zero` ran forever; `train wordpiece /dev/zero`
    # ended in a MemoryError traceback; a FIFO blocked.  Run with a memory
    # limit and a timeout: a hang or a blow-up fails the test.
    path, what = special_file
    argv = [a.format(path=path, out=tmp_path / "o") for a in argv]
    code = ("import resource, sys\nresource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
            "from segkit.cli import main\nsys.exit(main(sys.argv[1:]))")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", code, *argv], input="hello\n", capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("segkit: error: ") and path in line and what in line, line
