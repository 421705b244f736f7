"""The ``segkit`` command interrupted (Ctrl-C) or writing where it cannot:
run in subprocesses, since signals, pipes and exit statuses are the point
(issue 17)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and /dev/full")

SAMPLE = Path(__file__).resolve().parent / "data" / "multilingual-sample.jsonl"

# The CLI, with a marker on stderr each time a batch goes to encode_batch,
# so that the test can time its signal.
CLI = r"""
import sys
from segkit.presets.wordpiece import WordPiece
encode_batch = WordPiece.encode_batch
def marked(self, *args, **kwargs):
    sys.stderr.write("BATCH\n")
    sys.stderr.flush()
    return encode_batch(self, *args, **kwargs)
WordPiece.encode_batch = marked
import segkit.cli, segkit.cli.tokenize
lines = segkit.cli.tokenize.lines
def reading(paths):
    sys.stderr.write("READING\n")  # main has installed its SIGINT handler
    sys.stderr.flush()
    yield from lines(paths)
segkit.cli.tokenize.lines = reading
sys.exit(segkit.cli.main(sys.argv[1:]))
"""


def make_input(path: Path, lines: int) -> Path:
    texts = [json.loads(line)["text"].replace("\r", " ") for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(lines):
            fh.write(texts[i % len(texts)] + "\n")
    return path


def default_sigint() -> None:
    """In a child, before it runs Python: SIGINT back to its default, so that
    Python installs its handler even when the suite was started with SIGINT
    ignored (``nohup``, ``&`` in a script), which children inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*argv, **kwargs) -> subprocess.Popen:
    kwargs.setdefault("stdout", subprocess.PIPE)
    return subprocess.Popen([sys.executable, "-c", CLI, *argv], stderr=subprocess.PIPE, preexec_fn=default_sigint,
                            **kwargs)


def wait_for(proc: subprocess.Popen, marker: bytes) -> None:
    while True:
        line = proc.stderr.readline()
        assert line, "the command ended early"
        if line == marker + b"\n":
            return


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[bytes, bytes]:
    """The rest of stdout and stderr (through the buffered readers, which
    may already hold some of it; communicate() would skip that), then wait."""
    out = proc.stdout.read() if proc.stdout else b""
    err = proc.stderr.read()
    proc.wait(timeout=timeout)
    return out, err


def messages(err: bytes) -> list[str]:
    return [line for line in err.decode("utf-8").splitlines() if line not in ("BATCH", "READING")]


def check_interrupted(proc, out: bytes, err: bytes) -> int:
    """Exit 130, one line on stderr, complete lines on stdout; returns the
    number of texts written."""
    assert proc.returncode == 130, err
    (message,) = messages(err)
    assert message.startswith("segkit: interrupted after "), message
    written = int(message.split()[3])
    assert out.count(b"\n") == written
    assert out == b"" or out.endswith(b"\n")
    return written


@pytest.fixture(scope="module")
def warm_model():
    # Build bert-base-uncased into this session's model cache once, so the
    # subprocesses only map it (SEGKIT_CACHE_DIR is inherited).
    import segkit

    segkit.WordPiece.from_pretrained("bert-base-uncased")


def test_ctrl_c_during_a_long_compiled_call(tmp_path, warm_model):
    # One batch of 100,000 texts: the signal lands inside encode_batch (its
    # compiled call runs for about a second); it must surface as a clean
    # interrupt once the call returns, not as "SystemError ... returned a
    # result with an exception set".
    path = make_input(tmp_path / "in.txt", 100_000)
    proc = start("tokenize", "-i", str(path), "--batch-size", "100000")
    wait_for(proc, b"BATCH")
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = finish(proc)
    assert b"SystemError" not in err and b"Traceback" not in err
    assert check_interrupted(proc, out, err) in (0, 100_000)


def test_ctrl_c_while_output_is_blocked_keeps_whole_lines(tmp_path, warm_model):
    # The first batch's output (about 700 kB) is being written into a pipe
    # that holds 64 kB and that nobody reads yet, when the signal comes: the
    # batch is still written whole (not cut where the pipe was full), then
    # the command stops with 130.
    path = make_input(tmp_path / "in.txt", 20_000)
    proc = start("tokenize", "-i", str(path), "--batch-size", "5000")
    first = proc.stdout.read(1)  # the write of batch 1 has begun (the reader may buffer more)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = finish(proc)
    assert check_interrupted(proc, first + out, err) == 5000


def test_ctrl_c_while_reading_stdin(warm_model):
    proc = start("tokenize", stdin=subprocess.PIPE)
    proc.stdin.write(b"hello world\n")
    proc.stdin.flush()
    wait_for(proc, b"READING")
    time.sleep(0.5)  # the command waits for more lines (a batch, or the end)
    proc.send_signal(signal.SIGINT)
    out, err = finish(proc)
    assert check_interrupted(proc, out, err) == 0


def test_broken_pipe_is_one_error_line(tmp_path, warm_model):
    path = make_input(tmp_path / "in.txt", 20_000)
    proc = start("tokenize", "-i", str(path), "--batch-size", "1000")
    assert proc.stdout.read(100)
    proc.stdout.close()  # like `| head -c 100`
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert proc.returncode == 2, err
    (message,) = messages(err)
    assert message.startswith("segkit: error: cannot write the output") and "broken pipe" in message


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("lines", [1, 20_000])
def test_full_disk_is_one_error_line(tmp_path, warm_model, lines):
    path = make_input(tmp_path / "in.txt", lines)
    with open("/dev/full", "wb") as full:
        proc = start("tokenize", "-i", str(path), stdout=full)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    (message,) = messages(err)
    assert message == "segkit: error: cannot write the output: No space left on device"


@pytest.mark.parametrize("trainer", ["bpe", "wordpiece"])
def test_ctrl_c_during_training_is_exit_130_and_writes_nothing(tmp_path, trainer):
    # One long pre-token: Ctrl-C during training used to kill the command
    # with SIGSEGV (issue 27).  Training runs off the main thread now; the
    # command stops within the grace the work gets (0.5 s), with status 130.
    # The work must outlast the 3 s before the signal with kernels loaded
    # from the cache (1,000,000 characters of WordPiece took 3.8 s in all).
    corpus = tmp_path / "long.txt"
    corpus.write_text("ab" * 2_000_000 + "c" * 2_000_000 if trainer == "bpe" else "a" * 4_000_000, encoding="utf-8")
    out_dir = tmp_path / "out"
    size = "5000" if trainer == "bpe" else "200"
    proc = subprocess.Popen([sys.executable, "-m", "segkit", "train", trainer, str(corpus), "-o", str(out_dir),
                             "--vocab-size", size, "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=default_sigint)
    time.sleep(3.0)  # started (imports take about a second) and training
    if proc.poll() is not None:
        pytest.fail(f"training ended before the signal: {proc.returncode} {proc.stderr.read()!r}")
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.decode("utf-8").splitlines() == ["segkit: interrupted; nothing was written"]
    assert time.monotonic() - sent < 15  # the process, interpreter shutdown included
    assert not out_dir.exists() or not any(out_dir.iterdir())


@pytest.mark.parametrize("trainer", ["bpe", "wordpiece"])
def test_ctrl_c_while_the_files_are_written_leaves_the_folder_as_it_was(tmp_path, monkeypatch, capsys, trainer):
    # The Ctrl-C of the test above can land after training, while the files
    # are being written: the command still says "nothing was written", so
    # nothing of this run may reach the output folder.
    import segkit.cli
    from segkit.presets.wordpiece import WordPiece
    from segkit.training.bpe import TrainedBPE

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower newest widest\n" * 50, encoding="utf-8")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "kept.txt").write_text("a file from before", encoding="utf-8")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    # the last file each trainer writes
    if trainer == "bpe":
        monkeypatch.setattr(TrainedBPE, "to_tokenizer_json", interrupted)
    else:
        monkeypatch.setattr(WordPiece, "save", interrupted)
    code = segkit.cli.main(["train", trainer, str(corpus), "-o", str(out_dir), "--vocab-size", "300", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 130, err
    assert err.splitlines() == ["segkit: interrupted; nothing was written"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "out"]  # no staging folder left
    assert sorted(p.name for p in out_dir.iterdir()) == ["kept.txt"]


def test_staged_output_moves_every_file_or_none(tmp_path):
    from segkit.cli.io import staged_output

    out = tmp_path / "deep" / "out"
    with pytest.raises(OSError):
        with staged_output(out) as stage:
            (stage / "a.txt").write_text("a", encoding="utf-8")
            raise OSError("disk full")
    assert not out.exists()
    with staged_output(out) as stage:
        (stage / "a.txt").write_text("a", encoding="utf-8")
        (stage / "b.txt").write_text("b", encoding="utf-8")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt", "b.txt"]
    assert [p.name for p in out.parent.iterdir()] == ["out"]
