"""``segkit cut``: Chinese segmentation on the command line, like ``python -m jieba``.

Mostly in-process through :func:`segkit.cli.command.main` (output read with
``capsys``); two subprocess tests check the real streams and exit statuses.
Expected words are written out by hand (jieba's dictionary, which is
segkit's default, has 来到, 北京, 清华大学, 研究生, 研究, 生命, 起源).
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from segkit.cli import main

SAMPLE = "我来到北京清华大学\n\n研究生命起源\r\n  他说 hello  world \n"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "in.txt"
    path.write_bytes(SAMPLE.encode("utf-8"))
    return path


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


def test_cut_file_one_line_per_line(capsys, sample) -> None:
    code, out, err = run(capsys, "cut", str(sample))
    assert code == 0, err
    assert out == "我 / 来到 / 北京 / 清华大学\n\n研究 / 生命 / 起源\n他 / 说 / hello / world\n"


def test_cut_stdin_and_several_files(capsys, monkeypatch, sample) -> None:
    _stdin(monkeypatch, "北京\n清华大学".encode("utf-8"))  # no final newline
    code, out, err = run(capsys, "cut")
    assert (code, out) == (0, "北京\n清华大学\n"), err
    _stdin(monkeypatch, "北京\n".encode("utf-8"))
    code, out, err = run(capsys, "cut", str(sample), "-", str(sample))
    assert code == 0, err
    assert out.split("\n")[4:6] == ["北京", "我 / 来到 / 北京 / 清华大学"]
    assert out.count("\n") == 9


def test_cut_delimiter(capsys, sample) -> None:
    code, out, _ = run(capsys, "cut", "-d", "|", str(sample))
    assert out.splitlines()[0] == "我|来到|北京|清华大学"
    code, out, _ = run(capsys, "cut", str(sample), "-d")  # -d alone: a space, as python -m jieba
    assert out.splitlines()[0] == "我 来到 北京 清华大学"
    code, out, _ = run(capsys, "cut", "--delimiter=", str(sample))
    assert out.splitlines()[0] == "我来到北京清华大学"


def test_cut_modes(capsys, sample) -> None:
    code, out, _ = run(capsys, "cut", "--mode", "forward", "-d", "/", str(sample))
    assert out.splitlines()[2] == "研究生/命/起源"  # the longest word first
    code, out, _ = run(capsys, "cut", "--mode", "backward", "-d", "/", str(sample))
    assert out.splitlines()[2] == "研究/生命/起源"
    code, out, _ = run(capsys, "cut", "--mode", "bidirectional", "-d", "/", str(sample))
    assert out.splitlines()[2] == "研究/生命/起源"  # three words each; fewer one-character words
    with pytest.raises(SystemExit) as exc:  # argparse's own error: status 2
        main(["cut", "--mode", "sideways", str(sample)])
    assert exc.value.code == 2 and "invalid choice: 'sideways'" in capsys.readouterr().err


def test_cut_keep_whitespace(capsys, sample) -> None:
    code, out, _ = run(capsys, "cut", "--keep-whitespace", "-d", "|", str(sample))
    assert code == 0
    assert out.split("\n")[3] == " | |他|说| |hello| | |world| "
    # the line endings are not part of the line, with or without the option
    assert out.split("\n")[2] == "研究|生命|起源"


def test_cut_userdict(capsys, sample, tmp_path) -> None:
    code, out, _ = run(capsys, "cut", "-d", "/", str(sample))
    assert out.splitlines()[3] == "他/说/hello/world"
    user = tmp_path / "user.txt"
    user.write_text("他说 20 v\nhello\n", encoding="utf-8")
    code, out, err = run(capsys, "cut", "--userdict", str(user), "-d", "/", str(sample))
    assert code == 0, err
    assert out.splitlines()[3] == "他说/hello/world"


def test_cut_errors(capsys, sample, tmp_path) -> None:
    code, out, err = run(capsys, "cut", "--userdict", str(tmp_path / "missing.txt"), str(sample))
    assert (code, out) == (2, "")
    assert err == f"segkit: error: --userdict {tmp_path / 'missing.txt'}: not found\n"
    bad = tmp_path / "bad.txt"
    bad.write_bytes("北京\n".encode("utf-8") + b"\xff\xfe\n")
    code, out, err = run(capsys, "cut", "--userdict", str(bad), str(sample))
    assert code == 2 and out == ""
    assert err.startswith("segkit: error: --userdict ") and "line 2" in err and "UTF-8" in err
    code, out, err = run(capsys, "cut", str(tmp_path / "nope.txt"))
    assert (code, out, err) == (2, "", f"segkit: error: input file not found: {tmp_path / 'nope.txt'}\n")
    code, out, err = run(capsys, "cut", str(tmp_path))
    assert code == 2 and "is a directory" in err


def test_cut_bad_utf8_line_keeps_the_lines_before(capsys, tmp_path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes("北京\n清华大学\n".encode("utf-8") + b"ab\xc3(\n" + "北京\n".encode("utf-8"))
    code, out, err = run(capsys, "cut", str(path))
    assert code == 2
    assert out == "北京\n清华大学\n"
    assert err == (
        f"segkit: error: {path}: line 3: not valid UTF-8 (byte 0xc3 at column 3); "
        "the output holds the 2 lines before it\n"
    )


def test_cut_help_lists_the_command(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "cut" in capsys.readouterr().out


def _cli(*argv: str, stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "segkit", *argv], input=stdin, capture_output=True, timeout=300
    )


def test_cut_subprocess_stdin() -> None:
    proc = _cli("cut", "-d", " | ", stdin="我来到北京清华大学\r\n\n北京\n".encode("utf-8"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode("utf-8") == "我 | 来到 | 北京 | 清华大学\n\n北京\n"
    assert proc.stderr == b""  # no progress bar: not a terminal, and stdin


def test_cut_subprocess_bad_input() -> None:
    proc = _cli("cut", stdin=b"\xe5\x8c\x97\xe4\xba\xac\n\x80\n")
    assert proc.returncode == 2
    assert proc.stdout.decode("utf-8") == "北京\n"
    assert proc.stderr.decode() == (
        "segkit: error: <stdin>: line 2: not valid UTF-8 (byte 0x80 at column 1); the output holds the 1 lines before it\n"
    )


def test_cut_progress_bar_on_a_terminal(capsys, monkeypatch, sample) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, out, err = run(capsys, "cut", str(sample))
    assert code == 0 and out.count("\n") == 4
    assert "segkit cut" in err and "100%" in err  # tqdm's bar over the file's bytes
    _stdin(monkeypatch, "北京\n".encode("utf-8"))
    code, out, err = run(capsys, "cut")
    assert (code, out, err) == (0, "北京\n", "")  # no bar on standard input


def test_cut_subprocess_reader_closes_the_pipe(tmp_path) -> None:
    path = tmp_path / "big.txt"
    path.write_text("我来到北京清华大学\n" * 200_000, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "segkit", "cut", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout.readline().decode("utf-8") == "我 / 来到 / 北京 / 清华大学\n"
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 2
    assert err == "segkit: error: cannot write the output: the reader closed it (broken pipe)\n"
