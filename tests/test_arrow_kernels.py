"""The Arrow paths run the list paths' compiled kernels (no second Numba
specialization on a first ``encode_arrow``), and ``segkit precompile`` can
run them without pyarrow (a wheel's isolated build has none)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import segkit
from segkit.runtime.jit import dispatcher_of

REPO = Path(__file__).resolve().parents[1]
TEXTS = ["Hello world, a test.", "naïve café ünïcode", "", "x" * 50]


def _signatures(module: str, name: str) -> int:
    import importlib

    return len(dispatcher_of(getattr(importlib.import_module(module), name)).signatures)


@pytest.mark.parametrize("make, call, kernels", [
    (lambda: segkit.WordPiece.from_pretrained("bert-base-uncased"), "encode_arrow",
     [("segkit.engine.rewrite", "segment_batch_rewritten")]),
    (lambda: segkit.BPE.from_pretrained("cl100k_base"), "encode_arrow",
     [("segkit.presets.bpe.pretokenize_kernels", "split_batch"),
      ("segkit.presets.bpe.backtrack", "encode_pieces")]),
    (lambda: segkit.ChineseMaxMatch(), "cut_arrow", [("segkit.engine.kernels", "segment_batch")]),
])
def test_an_arrow_call_adds_no_specialization_to_the_list_paths_kernels(make, call, kernels):
    pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (segkit[arrow])")
    tok = make()
    texts = TEXTS if call != "cut_arrow" else ["研究生命起源", "我来到北京清华大学", ""]
    (tok.cut_batch if call == "cut_arrow" else tok.encode_batch)(texts)
    before = [_signatures(*k) for k in kernels]
    got = getattr(tok, call)(pa.array(texts))
    assert [_signatures(*k) for k in kernels] == before, kernels
    if call == "encode_arrow" and isinstance(tok, segkit.BPE):
        assert got.to_pylist() == tok.encode_batch(texts)


def test_utf8_rows_from_numpy_buffers_decode_as_str_does():
    from segkit.scale.arrow import Utf8Rows

    raw = [t.encode() for t in TEXTS]
    for width in (np.int32, np.int64):
        offs = np.concatenate([[0], np.cumsum([len(r) for r in raw])]).astype(width)
        rows = Utf8Rows.from_buffers(np.frombuffer(bytearray(b"".join(raw)), np.uint8), offs,
                                     np.array([1, 0, 1, 1], np.uint8))
        cps, bounds = rows.decode(0, len(TEXTS))
        text = cps.astype(np.uint32).tobytes().decode("utf-32-le")
        got = [text[bounds[i]:bounds[i + 1]] for i in range(len(TEXTS))]
        assert got == [TEXTS[0], "", TEXTS[2], TEXTS[3]]  # the null row reads as empty
        assert not cps.flags.writeable  # (as the code points of a str are: one specialization)
    with pytest.raises(ValueError, match="offsets: expected a 1-d int32 or int64 array, found float64"):
        Utf8Rows.from_buffers(np.zeros(3, np.uint8), np.zeros(2))
    with pytest.raises(ValueError, match="valid: expected 1 values"):
        Utf8Rows.from_buffers(np.zeros(3, np.uint8), np.array([0, 3], np.int32), np.ones(2, np.uint8))


_NO_PYARROW = r"""
import sys
sys.modules["pyarrow"] = None  # as in pip's isolated build environment
sys.path.insert(0, sys.argv[1])
import numpy as np, segkit
from segkit.scale.arrow import Utf8Rows, encode_arrow_batch
texts = ["Hello world, a test.", "naïve café", ""]
raw = [t.encode() for t in texts]
offs = np.concatenate([[0], np.cumsum([len(r) for r in raw])]).astype(np.int32)
rows = Utf8Rows.from_buffers(np.frombuffer(bytearray(b"".join(raw)), np.uint8), offs)
wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
assert [e.ids for e in encode_arrow_batch(wp, rows)] == [e.ids for e in wp.encode_batch(texts)]
try:
    segkit.BPE.from_pretrained("cl100k_base").encode_arrow(rows)
except ImportError as e:
    assert "pyarrow" in str(e), e
else:
    raise AssertionError("encode_arrow gave a result without pyarrow")
print("ok")
"""


def test_the_arrow_paths_run_up_to_the_result_without_pyarrow():
    run = subprocess.run([sys.executable, "-c", _NO_PYARROW, str(REPO)], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-3000:]
