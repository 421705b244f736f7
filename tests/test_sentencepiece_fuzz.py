"""SentencePiece ``.model`` bytes, fuzzed (tools/fuzz_sentencepiece.py): any
mutation of a trained model loads as a model that behaves like one or
raises ModelFileError naming the file; never another exception, a crash or
a hang (each file is checked in a worker subprocess, with a timeout)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("sentencepiece", reason="sentencepiece is not installed")
pytest.importorskip("google.protobuf", reason="protobuf is not installed")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import fuzz_sentencepiece  # noqa: E402


def test_mutated_models_load_or_raise_the_loaders_error(tmp_path) -> None:
    failures: list[str] = []
    counts = fuzz_sentencepiece.run(300, seed=31, folder=tmp_path, timeout=300, log=failures.append)
    assert counts["tried"] == 300
    assert counts["crash"] == counts["hang"] == counts["error"] == 0, failures
    # the mutations reach both outcomes (else the test proves little)
    assert counts["rejected"] > 20 and counts["loaded"] > 20, counts


def test_mutate_changes_the_bytes() -> None:
    import random

    rng = random.Random(0)
    raw = bytes(range(256)) * 4
    assert sum(fuzz_sentencepiece.mutate(raw, rng) != raw for _ in range(50)) >= 45
