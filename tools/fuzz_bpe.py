"""Mutation fuzzing of saved ``segkit.BPE`` models: a crafted file must load
as a model that behaves like a valid one, or raise ``ModelFileError``.

Three small models (one per way in: tiktoken ranks, a merge list, a
tokenizer.json with a normalizer and added tokens) are saved, mutated with
:func:`fuzz_models.mutate` (checksums recomputed) and loaded in a worker
subprocess, which then encodes texts and checks the output: every id
decodes, the tokens' bytes spell the text, the batch and single-text paths
agree, offsets lie in the text.  A crash, a hang or any exception other
than ``ModelFileError`` is a failure; a model that loads but encodes
differently from the original (``loaded-differs``) is a valid model of
other settings (a changed pattern, say), which certification guarantees
for the splits themselves.

Usage::

    python tools/fuzz_bpe.py --mutations 3000 --seed 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_models  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TEXTS = ["Hello, wonderful world! lower lowest", "aaaaaaaaaaaaaaaaab abababab", "", "   \n\t  x",
         "naïve café 東京 😀👍🏽 <|end|> <s>", "newest widest low low low", "1234567 12 ab'll 'S"]
CORPUS = ["low lower lowest newer newest wider widest aaaa abab hello world wonderful",
          "the quick brown fox 12345 ab'll ab's café naïve"] * 3


def make_models(folder: Path) -> dict[str, Path]:
    import segkit

    trained = segkit.train_bpe(CORPUS, 330, ["<|end|>"], show_progress=False)
    paths = {"merges": folder / "merges.segkit", "tiktoken": folder / "tiktoken.segkit",
             "json": folder / "json.segkit"}
    trained.encoder().save(paths["merges"])
    tokens = [trained.vocab[i] for i in sorted(trained.vocab) if i != 256]
    import base64

    tk = folder / "small.tiktoken"
    tk.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for r, t in enumerate(tokens)))
    segkit.BPE.from_tiktoken(tk, pattern=trained.pattern, special_tokens={"<|end|>": len(tokens)}).save(
        paths["tiktoken"])
    js = folder / "tokenizer.json"
    trained.to_tokenizer_json(js)
    data = json.loads(js.read_text())
    data["normalizer"] = {"type": "NFC"}
    data["added_tokens"].append({"id": 400, "content": "  ", "single_word": False, "lstrip": False,
                                 "rstrip": False, "normalized": True, "special": False})
    js.write_text(json.dumps(data))
    segkit.BPE.from_tokenizer_json(js).save(paths["json"])
    # a Tekken file: the same tokens after three control tokens
    tek = folder / "tekken.json"
    tek.write_text(json.dumps({
        "config": {"pattern": trained.pattern, "default_vocab_size": len(tokens) + 3,
                   "default_num_special_tokens": 3, "version": "v3"},
        "vocab": [{"rank": r, "token_bytes": base64.b64encode(t).decode(), "token_str": None}
                  for r, t in enumerate(tokens)],
        "special_tokens": [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(["<unk>", "<s>"])]}))
    paths["tekken"] = folder / "tekken.segkit"
    segkit.BPE.from_tekken(tek).save(paths["tekken"])
    return paths


_ORIGINALS: dict = {}


def _outputs(model) -> list:
    out = []
    for t in TEXTS:
        out.append(model.encode_ordinary(t))
        out.append(model.encode(t) if model._mode == "tokenizer.json" else model.encode(t, allowed_special="all"))
    return out


def check_model(path: str, original: str | None = None) -> str:
    import regex

    import segkit
    from segkit.models.files import ModelFileError

    try:
        model = segkit.load(path)
    except ModelFileError:
        return "rejected"
    assert isinstance(model, segkit.BPE), f"loaded a {type(model).__name__}"
    batch = model.encode_ordinary_batch(TEXTS)
    flat, rows = model.encode_ordinary_batch(TEXTS, flat=True)
    assert [flat[rows[i] : rows[i + 1]].tolist() for i in range(len(TEXTS))] == batch, "flat and lists disagree"
    for text, ids in zip(TEXTS, batch):
        assert ids == model.encode_ordinary(text), "encode_ordinary and the batch disagree"
        assert all(0 <= i < model.n_vocab for i in ids), "an id outside the vocabulary"
        if model._normalizer is None:
            # tiktoken drops text its pattern does not match; the other modes keep it
            spelled = text if model._gaps or model.pattern is None else \
                "".join(m.group() for m in regex.finditer(model.pattern, text))
            assert model.decode_bytes(ids) == spelled.encode("utf-8"), "the tokens do not spell the text"
        _, offsets = model.encode_with_offsets(text) if model._mode == "tokenizer.json" else \
            model.encode_with_offsets(text, disallowed_special=())
        assert all(0 <= s <= e <= len(text) + 8 for s, e in offsets), "offsets outside the text"
    if original:
        if original not in _ORIGINALS:
            _ORIGINALS[original] = _outputs(segkit.load(original))
        if _outputs(model) != _ORIGINALS[original]:
            return "loaded-differs"
    return "loaded"


def worker() -> None:
    os.environ.setdefault("SEGKIT_CACHE_DIR", "off")
    for line in sys.stdin:
        path, _, original = line.rstrip("\n").partition("\t")
        try:
            verdict = check_model(path, original or None)
        except AssertionError as e:
            verdict = f"wrong: {e}"
        except BaseException as e:  # noqa: BLE001 - every other exception is a finding
            verdict = f"exception: {type(e).__name__}: {str(e)[:300]}"
        sys.stdout.write(verdict.replace("\n", " ") + "\n")
        sys.stdout.flush()


class Worker(fuzz_models.Worker):
    """:class:`fuzz_models.Worker` running :func:`worker` of this module."""

    def _start(self) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import fuzz_bpe; fuzz_bpe.worker()",
             str(Path(__file__).resolve().parent)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mutations", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="segkit-fuzz-bpe-"))
    os.environ.setdefault("SEGKIT_CACHE_DIR", "off")
    sys.path.insert(0, str(ROOT))
    paths = make_models(folder)
    originals = {name: p.read_bytes() for name, p in paths.items()}
    rng = random.Random(args.seed)
    counts: dict[str, int] = {}
    w = Worker(args.timeout)
    t0 = time.perf_counter()
    try:
        for k in range(args.mutations):
            name = sorted(originals)[k % len(originals)]
            raw, note = fuzz_models.mutate(originals[name], rng)
            target = folder / f"mutant-{name}.segkit"
            target.write_bytes(raw)
            verdict = w.check(str(target), str(paths[name]))
            key = verdict.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
            if key not in ("rejected", "loaded", "loaded-differs"):
                keep = folder / f"finding-{k}-{name}.segkit"
                keep.write_bytes(raw)
                print(f"mutation {k} ({name}; {note}): {verdict}  [kept as {keep}]")
    finally:
        w.close()
    print(json.dumps(counts), f"in {time.perf_counter() - t0:.0f} s")
    return 1 if any(k not in ("rejected", "loaded", "loaded-differs") for k in counts) else 0


if __name__ == "__main__":
    sys.exit(main())
