"""Mutation fuzzing of segkit's SentencePiece ``.model`` reader (issue 31):
any byte string gives a model that behaves like one, or ModelFileError.

A small BPE model trained by ``sentencepiece`` (tests/spm_models.py) is
mutated (bytes flipped, set to 0x00/0x80/0xff, inserted, deleted, chunks
duplicated or cut, the file truncated) and each result is read with
``SentencePieceBPE.from_bytes`` in a *worker subprocess*, which then
encodes texts and decodes the ids: a crash or a hang (timeout) of the
worker is a failure, as is any exception but ModelFileError, an id outside
the vocabulary, or ``encode_batch`` disagreeing with ``encode``.  With
``--peer``, a mutated file that ``sentencepiece`` also loads must give its
ids (differences are counted, not fatal: the peer accepts some files it
then runs inconsistently).

Usage::

    python tools/fuzz_sentencepiece.py --mutations 2000 --seed 1 [--peer]

Prints the counts (tried, rejected, loaded, crashes, hangs, errors,
peer differences) and exits 1 if crashes, hangs or errors are non-zero.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ["Hello wonderful world 12345", "  spaced   out  ", "naïve café 東京 北京大学 😀!", "", "ab" * 200,
         "１２３ ｶﾀｶﾅ ﬁ", "<sep>[X]ab北京 x", "\t\n\u3000"]


def mutate(raw: bytes, rng: random.Random) -> bytes:
    b = bytearray(raw)
    for _ in range(rng.choice([1, 1, 1, 2, 3, 8])):
        if not b:
            break
        kind = rng.random()
        i = rng.randrange(len(b))
        if kind < 0.35:
            b[i] ^= 1 << rng.randrange(8)
        elif kind < 0.55:
            b[i] = rng.choice([0, 0x80, 0xFF, 0x7F, 0x01, 0x0A, 0x12])
        elif kind < 0.65:
            b.insert(i, rng.randrange(256))
        elif kind < 0.75:
            del b[i]
        elif kind < 0.85:
            j = min(len(b), i + rng.randrange(1, 64))
            b[i:i] = b[i:j]
        elif kind < 0.95:
            j = min(len(b), i + rng.randrange(1, 64))
            del b[i:j]
        else:
            del b[i:]
    return bytes(b)


def worker(peer: bool) -> None:
    """Read one request per line (path), answer one JSON line."""
    sys.path.insert(0, str(ROOT))
    import segkit
    from segkit import ModelFileError

    if peer:
        import sentencepiece as spm
    for line in sys.stdin:
        path = line.strip()
        data = Path(path).read_bytes()
        try:
            model = segkit.SentencePieceBPE.from_bytes(data, path)
        except ModelFileError as e:
            if path not in str(e):
                print(json.dumps({"result": "error", "why": f"message without the file: {e}"}), flush=True)
            else:
                print(json.dumps({"result": "rejected"}), flush=True)
            continue
        except Exception as e:  # noqa: BLE001 - the point of the check
            print(json.dumps({"result": "error", "why": f"{type(e).__name__}: {e}"}), flush=True)
            continue
        why = ""
        try:
            n = len(model)
            rows = [model.encode(t) for t in TEXTS]
            if model.encode_batch(TEXTS) != rows:
                why = "encode_batch differs from encode"
            for ids in rows:
                if any(not 0 <= i < n for i in ids):
                    why = f"id out of range in {ids[:10]}"
                model.decode(ids)
            model.decode(list(range(min(n, 300))))
            diff = 0
            if peer and not why:
                try:
                    sp = spm.SentencePieceProcessor(model_proto=data)
                except Exception:  # noqa: BLE001 - the peer refuses it: nothing to compare
                    sp = None
                if sp is not None:
                    for t, ids in zip(TEXTS, rows):
                        try:
                            if sp.encode(t) != ids:
                                diff = 1
                        except Exception:  # noqa: BLE001
                            pass
        except Exception as e:  # noqa: BLE001
            why = f"{type(e).__name__}: {e}"
        print(json.dumps({"result": "error", "why": why} if why else {"result": "loaded", "diff": diff}), flush=True)


class Worker:
    def __init__(self, timeout: float, peer: bool) -> None:
        self.timeout, self.peer = timeout, peer
        self.proc = None

    def _start(self) -> None:
        args = [sys.executable, __file__, "--worker"] + (["--peer"] if self.peer else [])
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def check(self, path: str) -> dict:
        import select

        if self.proc is None or self.proc.poll() is not None:
            self._start()
        self.proc.stdin.write(path + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        if not ready:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            return {"result": "hang"}
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            self.proc = None
            return {"result": "crash", "why": f"exit code {code}"}
        return json.loads(line)

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()


def run(n: int, seed: int, folder: Path, timeout: float = 120.0, peer: bool = False, log=print) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    import spm_models

    original = spm_models.train("bytes", folder).read_bytes()
    rng = random.Random(seed)
    counts = {"tried": 0, "rejected": 0, "loaded": 0, "crash": 0, "hang": 0, "error": 0, "peer_diff": 0}
    w = Worker(timeout, peer)
    try:
        for k in range(n):
            path = folder / f"m{k % 2}.model"
            path.write_bytes(mutate(original, rng))
            r = w.check(str(path))
            counts["tried"] += 1
            counts[r["result"]] += 1
            counts["peer_diff"] += r.get("diff", 0)
            if r["result"] in ("crash", "hang", "error"):
                keep = folder / f"failure-{k}.model"
                keep.write_bytes(path.read_bytes())
                log(f"{r['result']}: {r.get('why', '')} (kept as {keep})")
    finally:
        w.close()
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutations", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--peer", action="store_true", help="compare with sentencepiece where it loads the file")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.peer)
        return 0
    with tempfile.TemporaryDirectory() as d:
        counts = run(args.mutations, args.seed, Path(d), peer=args.peer)
    print(" ".join(f"{k}={v}" for k, v in counts.items()))
    return 1 if counts["crash"] or counts["hang"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
