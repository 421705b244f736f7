"""SentencePiece-converted tokenizer.json files (Metaspace, a BPE over
characters with byte fallback): ``segkit.Tokenizer`` against HF
``tokenizers`` on the same file.

The files are the ones transformers' ``LlamaTokenizer`` writes today from
mistral-common's SentencePiece models (v1, the Llama 2 vocabulary; v3),
and the older Hub form of Llama 2 (``Prepend`` + ``Replace`` normalizers,
no pre-tokenizer) made from v1's.  segkit runs them in one compiled call
per batch (``segkit/presets/charbpe/kernels.py::shape_rows``).

Per call (``encode(t).ids``, one text at a time) and batched (the slice in
one ``encode_batch``), one thread (HF with ``RAYON_NUM_THREADS=1``), in
interleaved rounds on a slice of the multilingual corpus.  Before timing,
ids and offsets of every text are checked equal to HF's.

Needs transformers, sentencepiece and mistral-common (to write the files)
and tokenizers.  Run from the repository root:
``python benchmarks/bench_sp_converted.py [--quick] [--repeat N]``.
"""

from __future__ import annotations

import _common as C  # first: sys.path and RAYON_NUM_THREADS

import json
import os
import shutil
import statistics
import tempfile
from pathlib import Path

import segkit


def _files(folder: Path) -> list[tuple[str, Path]]:
    try:
        import mistral_common
        import transformers
    except ImportError as e:
        raise SystemExit(f"this benchmark writes its files with transformers from mistral-common's models: {e}")
    data = Path(mistral_common.__file__).parent / "data"
    out = []
    for name, model in (("mistral v1 (Llama 2)", "tokenizer.model.v1"),
                        ("mistral v3", "mistral_instruct_tokenizer_240323.model.v3")):
        src = folder / model
        src.mkdir()
        shutil.copy(data / model, src / "tokenizer.model")
        tok = transformers.LlamaTokenizer.from_pretrained(str(src), legacy=False)
        path = folder / f"{model}.json"
        tok._tokenizer.save(str(path))
        out.append((name, path))
    doc = json.loads(out[0][1].read_text(encoding="utf-8"))
    doc["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"}, {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]}
    doc["pre_tokenizer"] = None
    hub = folder / "llama2-hub.json"
    hub.write_text(json.dumps(doc), encoding="utf-8")
    out.append(("Llama 2 Hub form", hub))
    return out


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=15, quick_repeat=7)
    tokenizers = C.import_tokenizers()
    if tokenizers is None:
        raise SystemExit("this benchmark compares with HF tokenizers: pip install tokenizers")
    texts, _, _ = C.load_corpus(normalize=False, stride=83 if args.quick else 28)
    nbytes = C.utf8_bytes(texts)
    print(f"{len(texts)} texts, {nbytes:,} bytes; load {os.getloadavg()[0]:.2f}")
    rows, results = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in _files(Path(tmp)):
            ours = segkit.from_pretrained(path)
            hf = tokenizers.Tokenizer.from_file(str(path))
            for t, r in zip(texts, hf.encode_batch(texts)):
                e = ours.encode(t)
                if e.ids != r.ids or e.offsets != r.offsets:
                    raise SystemExit(f"{name}: ids or offsets differ from HF on {t!r:.80}")
            per_call = C.time_rounds({
                "segkit": lambda: [ours.encode(t).ids for t in texts],
                "HF": lambda: [hf.encode(t).ids for t in texts],
            }, repeat=args.repeat, verbose=False)
            batched = C.time_rounds({
                "segkit": lambda: ours.encode_batch(texts),
                "HF": lambda: hf.encode_batch(texts),
            }, repeat=args.repeat, verbose=False)
            us = {k: statistics.median(v) / len(texts) * 1e6 for k, v in per_call.items()}
            mbs = {k: nbytes / statistics.median(v) / 1e6 for k, v in batched.items()}
            call = C.median_ratio(per_call, "HF", "segkit")
            batch = C.median_ratio(batched, "HF", "segkit")
            rows.append([name, us["segkit"], us["HF"], call, mbs["segkit"], mbs["HF"], batch])
            results[name] = {"per_call_us": us, "batch_mb_s": mbs, "per_call_hf_over_segkit": call,
                             "batch_hf_over_segkit": batch, "texts": len(texts)}
    C.print_table(["file", "segkit µs/text", "HF µs/text", "per call HF/segkit", "segkit batch MB/s",
                   "HF batch MB/s", "batch HF/segkit"], rows,
                  title="ids and offsets checked equal to HF first; one thread")
    print(f"load {os.getloadavg()[0]:.2f}")
    C.save_results("sp_converted", results, args)


if __name__ == "__main__":
    main()
