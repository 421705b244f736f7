"""Shared fixtures for segkit's tests.

The team's shared data set (BERT vocabularies, the multilingual corpus) is
*not* bundled: it lives beside the checkout in ``../shared/data``.  Tests that
need it use the ``shared_data`` fixture, which skips with a reason when the
folder is absent.  Everything else runs on the bundled vocabularies
(``vocabularies/``) and the small sample in ``tests/data/``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

import segkit

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
TESTS_DATA = Path(__file__).resolve().parent / "data"
BUNDLED_VOCABS = REPO / "vocabularies"


@pytest.fixture(scope="session", autouse=True)
def _private_model_cache(tmp_path_factory):
    """Models built from large vocabulary files go to a cache of this test
    session, not the user's (``~/.cache/segkit``)."""
    patch = pytest.MonkeyPatch()
    patch.setenv("SEGKIT_CACHE_DIR", str(tmp_path_factory.mktemp("segkit-cache")))
    yield
    patch.undo()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder (``../shared/data`` beside the checkout), or skip."""
    if not (SHARED_DATA / "README.md").is_file():
        pytest.skip(f"shared data set not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def mbert_vocab_path() -> Path:
    """The bundled bert-base-multilingual-cased vocabulary."""
    path = BUNDLED_VOCABS / "bert-base-multilingual-cased.txt"
    assert path.is_file(), f"bundled vocabulary missing: {path}"
    return path


@pytest.fixture(scope="session")
def mbert_tokens(mbert_vocab_path: Path) -> list[str]:
    """Tokens of the bundled multilingual vocabulary, read independently of segkit."""
    return mbert_vocab_path.read_text(encoding="utf-8").split("\n")[:-1]


@pytest.fixture(scope="session")
def mbert(mbert_vocab_path: Path) -> segkit.WordPiece:
    """segkit's WordPiece on the bundled multilingual vocabulary (built once)."""
    return segkit.WordPiece(mbert_vocab_path)


@pytest.fixture(scope="session")
def multilingual_sample() -> list[dict[str, str]]:
    """The bundled sample of the multilingual corpus (``tests/data``)."""
    path = TESTS_DATA / "multilingual-sample.jsonl"
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def call_with_timeout(fn: Callable[[], Any], seconds: float) -> Any:
    """Run ``fn`` in a daemon thread; fail the test if it is not done in time.

    segkit's compiled kernels release the GIL, so a kernel stuck in a loop
    does not block the timer (the stuck thread is abandoned).
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as e:  # re-raised in the test thread
            box["error"] = e

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(seconds)
    if th.is_alive():
        pytest.fail(f"call did not finish within {seconds} s (non-terminating loop?)")
    if "error" in box:
        raise box["error"]
    return box["value"]


@pytest.fixture
def with_timeout() -> Callable[[Callable[[], Any], float], Any]:
    """``with_timeout(fn, seconds)``: see :func:`call_with_timeout`."""
    return call_with_timeout
