"""Every reader of a file the user names refuses what is not a regular file
before opening it (issue 27): a FIFO blocked ``from_tokenizer_json``,
``load_userdict`` and ``ChineseMaxMatch(path)``; ``/dev/zero`` was read until
MemoryError (3.8 GB); ``train_bpe("/dev/zero")`` ran forever.  One helper,
:mod:`segkit.runtime.regular_files`, as :func:`segkit.load` already did.

The readers run in a subprocess with a timeout and an address-space limit:
a hang or a blow-up fails the test instead of stalling the suite."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from segkit.runtime.regular_files import check_regular, open_regular, read_regular

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, /dev/zero and resource limits")

REPO = Path(__file__).resolve().parents[1]

READERS = {
    "WordPiece.from_tokenizer_json": ("segkit.WordPiece.from_tokenizer_json(p)", "ValueError", "tokenizer.json"),
    "WordPiece(path)": ("segkit.WordPiece(p)", "VocabularyError", "vocabulary"),
    "Vocabulary.load": ("segkit.Vocabulary.load(p)", "VocabularyError", "vocabulary"),
    "ChineseMaxMatch(path)": ("segkit.ChineseMaxMatch(p)", "VocabularyError", "dictionary"),
    "load_userdict": ("segkit.ChineseMaxMatch(['北京']).load_userdict(p)", "VocabularyError", "dictionary"),
    "segkit.load": ("segkit.load(p)", "ModelFileError", "segkit model"),
    "train_bpe(path)": ("segkit.train_bpe(p, 300)", "CorpusError", "training"),
    "train_bpe([Path])": ("segkit.train_bpe([Path(p)], 300)", "CorpusError", "training"),
    "train_wordpiece(path)": ("segkit.train_wordpiece(p, 300)", "CorpusError", "training"),
    "train_wordpiece([Path])": ("segkit.train_wordpiece([Path(p)], 300)", "CorpusError", "training"),
    "train_wordpiece(docs and a path)": ("segkit.train_wordpiece(['some text', Path(p)], 300)", "CorpusError",
                                         "training"),
    "MaxMatch.from_tokenizer_json": ("segkit.MaxMatch.from_tokenizer_json(p)", "ValueError", "tokenizer.json"),
    "RWKVWorld(path)": ("segkit.RWKVWorld(p)", "VocabularyError", "RWKV vocabulary"),
    # issue 32: these two blocked on a FIFO and read /dev/zero until memory ran out
    "BPE.from_tiktoken": ("segkit.BPE.from_tiktoken(p, pattern=None)", "BPEFileError", "tiktoken vocabulary"),
    "BPE.from_tokenizer_json": ("segkit.BPE.from_tokenizer_json(p)", "BPEFileError", "tokenizer.json"),
    "dask.train_bpe": ("__import__('segkit.dask').dask.train_bpe([p], 300)", "CorpusError", "training"),
    "dask.train_wordpiece": ("__import__('segkit.dask').dask.train_wordpiece([p], 300)", "CorpusError", "training"),
}

CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from pathlib import Path
import segkit
p = sys.argv[1]
for name, call in {calls!r}:
    try:
        eval(call)
        print(name, "|", "loaded")
    except Exception as e:
        print(name, "|", type(e).__name__, "|", e)
"""


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> dict[str, dict[str, tuple[str, str]]]:
    """reader -> kind of file -> (exception name, message), from one child per kind."""
    calls = [(name, call) for name, (call, _, _) in READERS.items()]
    if any(name.startswith("dask.") for name, _ in calls):
        if importlib.util.find_spec("dask") is None:
            calls = [c for c in calls if not c[0].startswith("dask.")]
    files = {}
    if hasattr(os, "mkfifo"):
        fifo = tmp_path_factory.mktemp("fifo") / "pipe"
        os.mkfifo(fifo)
        files["FIFO"] = str(fifo)
    if os.path.exists("/dev/zero"):
        files["/dev/zero"] = "/dev/zero"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for kind, path in files.items():
        r = subprocess.run([sys.executable, "-c", CHILD.format(calls=calls), path], capture_output=True, text=True,
                           timeout=300, env=env)
        assert r.returncode == 0, r.stderr[-3000:]
        for line in r.stdout.splitlines():
            name, exc, *message = [x.strip() for x in line.split("|", 2)]
            out.setdefault(name, {})[kind] = (exc, message[0] if message else "")
    return out


KINDS = {"FIFO": "a FIFO (named pipe), not a regular file", "/dev/zero": "a character device, not a regular file"}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_refused_before_it_is_opened(outcomes, reader, kind):
    if reader not in outcomes:
        pytest.skip("dask is not installed")
    if kind not in outcomes[reader]:
        pytest.skip(f"no {kind} on this system")
    exc, message = outcomes[reader][kind]
    _, expected_exc, what = READERS[reader]
    assert exc == expected_exc, (exc, message)
    assert KINDS[kind] in message and f"expected a {what} file" in message, message


def test_the_helper(tmp_path):
    regular = tmp_path / "f.txt"
    regular.write_bytes(b"abc")
    assert read_regular(regular, "test", ValueError) == b"abc"
    with open_regular(regular, "test", ValueError) as fh:
        assert fh.read() == b"abc"
    assert check_regular(str(regular), "test", ValueError).st_size == 3
    with pytest.raises(FileNotFoundError, match="test file not found: .*missing"):
        check_regular(tmp_path / "missing", "test", ValueError)
    with pytest.raises(ValueError, match="a directory, not a regular file; expected a test file"):
        read_regular(tmp_path, "test", ValueError)
    with pytest.raises(ValueError, match="cannot be read"):
        check_regular("bad\0path", "test", ValueError)
    link = tmp_path / "link"
    link.symlink_to(regular)
    assert read_regular(link, "test", ValueError) == b"abc"  # a link to a regular file is fine
