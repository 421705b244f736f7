"""``segkit tokenize --model cl100k_base``: MB/s of text through the command
line, token strings and ids (best of ``--repeat``; one RWKV World row), against
``encode_ordinary_batch`` alone (texts already in memory) and the
per-token Python join the command used before (issue 33: 0.5 MB/s).

The input is English text (``../shared/data/corpus/en.txt`` when present,
else a bundled vocabulary's words) repeated to ``--mb`` MB, once as lines of
about 100 bytes and once as a single line.  The command runs in this process
(:func:`segkit.cli.main`) with standard output sent to /dev/null, so the
figures are encoding plus formatting plus writing, without start-up.

    python benchmarks/bench_cli_output.py            # 20 MB
    python benchmarks/bench_cli_output.py --mb 5
"""

from __future__ import annotations

import _common  # noqa: F401  (first: the checkout on sys.path)

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def sample_text(mb: float) -> str:
    en = _common.BENCH_DIR.parent.parent / "shared" / "data" / "corpus" / "en.txt"
    if en.is_file():
        base = en.read_text(encoding="utf-8").replace("\n", " ")
    else:
        base = (_common.BENCH_DIR.parent / "vocabularies" / "bert-base-uncased.txt").read_text(encoding="utf-8")
        base = " ".join(w for w in base.split() if w.isalpha())
    n = int(mb * 1e6)
    return (base * (n // len(base) + 1))[:n]


def cli_seconds(argv: list[str]) -> float:
    from segkit.cli import main

    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        t = time.perf_counter()
        code = main(argv)
        elapsed = time.perf_counter() - t
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
    assert code == 0, code
    return elapsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, default=20.0, help="MB of text (default 20)")
    p.add_argument("--repeat", type=int, default=3, help="best of N runs of each (default 3)")
    args = p.parse_args()
    import segkit
    from segkit.cli.tokenize_bpe import byte_level

    text = sample_text(args.mb)
    enc = segkit.BPE.from_pretrained("cl100k_base")
    folder = Path(tempfile.mkdtemp())
    cut = 100
    lines = []
    i = 0
    while i < len(text):  # lines of about 100 characters, cut at a space
        j = text.find(" ", i + cut)
        j = len(text) if j < 0 else j
        lines.append(text[i:j])
        i = j + 1
    (folder / "lines.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "one.txt").write_text(text + "\n", encoding="utf-8")
    mb = len(text.encode("utf-8")) / 1e6
    enc.encode_ordinary_batch(["warm up"])
    cli_seconds(["tokenize", "--model", "cl100k_base", "warm up"])
    rows = []
    for name in ("lines", "one"):
        path = folder / f"{name}.txt"
        texts = lines if name == "lines" else [text]
        t_enc = t_tok = t_ids = float("inf")
        for _ in range(args.repeat):  # interleaved, best of each
            t = time.perf_counter()
            enc.encode_ordinary_batch(texts, flat=True)
            t_enc = min(t_enc, time.perf_counter() - t)
            t_tok = min(t_tok, cli_seconds(["tokenize", "--model", "cl100k_base", "-i", str(path)]))
            t_ids = min(t_ids, cli_seconds(["tokenize", "--model", "cl100k_base", "-f", "ids", "-i", str(path)]))
        # the per-token join the command used before, on a tenth of the text
        part = texts[: max(1, len(texts) // 10)] if name == "lines" else [text[: len(text) // 10]]
        part_mb = sum(len(s.encode("utf-8")) for s in part) / 1e6
        t = time.perf_counter()
        for ids in enc.encode_ordinary_batch(part):
            " ".join(byte_level(enc.decode_single_token_bytes(i)) for i in ids)
        t_old = time.perf_counter() - t
        rows.append((f"{name} ({'~100 B lines' if name == 'lines' else 'one line'})", mb / t_enc, mb / t_tok,
                     mb / t_ids, part_mb / t_old, t_old / part_mb * mb / t_tok))
    path = folder / "lines.txt"
    t_rwkv = min(cli_seconds(["tokenize", "--model", "rwkv-world", "-i", str(path)]) for _ in range(args.repeat))
    rows.append(("lines, --model rwkv-world", "-", mb / t_rwkv, "-", "-", "-"))
    _common.print_table(
        ["input", "encode MB/s", "CLI tokens MB/s", "CLI ids MB/s", "old join MB/s", "tokens speed-up"], rows,
        title=f"segkit tokenize --model cl100k_base, {mb:.1f} MB of English (goal: CLI tokens >= 20 MB/s)",
    )
    print(f"load average {os.getloadavg()[0]:.1f}", file=sys.stderr)


if __name__ == "__main__":
    main()
