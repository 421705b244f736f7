"""The machine's own 2-process ceiling for the Dask figure of bench_scale.py.

The same work as ``bench_scale.py --only dask`` (the multilingual corpus
repeated 8 times, 16 Parquet files, each read, encoded with
``WordPiece.encode_arrow`` and written back with pyarrow, text and encoding
columns as ``segkit.scale.dask.encode(...).to_parquet(...)`` writes them) without Dask or
any cluster: one forked process takes every file, against two forked
processes each taking every other file.  Prints the ratio per round and the
CPU split of one process (read / encode / to_arrow / write), so that the
Dask ratio can be read against what the hardware allows.

Run from the repository root: ``python benchmarks/bench_scale_floor.py [--repeat N]``
"""

from __future__ import annotations

import _common as C  # first: sys.path

import multiprocessing as mp
import os
import statistics
import tempfile
import time
from pathlib import Path


def _with_text(table, encoding):
    """The input's columns followed by the encoding's, as segkit.scale.dask.encode writes them."""
    for name in encoding.column_names:
        table = table.append_column(name, encoding.column(name))
    return table


def main() -> None:
    args = C.parse_args(__doc__.splitlines()[0], default_repeat=4, quick_repeat=2)
    C.require_data()
    import pyarrow as pa
    import pyarrow.parquet as pq

    import segkit
    from segkit.scale.arrow import encode_arrow_batch

    texts = C.load_corpus(normalize=False)[0] * 8
    n, parts = len(texts), 16
    tmp = Path(tempfile.mkdtemp(prefix="segkit-floor-"))
    for i in range(parts):
        pq.write_table(pa.table({"text": pa.array(texts[i * n // parts:(i + 1) * n // parts])}), tmp / f"in{i}.parquet")
    del texts
    wp = segkit.WordPiece.from_pretrained("bert-base-multilingual-cased")
    wp.encode_batch(["warm up"])

    split = dict.fromkeys(("read", "encode", "to_arrow", "write"), 0.0)
    for i in range(parts):
        c0 = time.process_time()
        t = pq.read_table(tmp / f"in{i}.parquet")
        c1 = time.process_time()
        b = encode_arrow_batch(wp, t.column("text"))
        c2 = time.process_time()
        tab = _with_text(t, b.to_arrow())
        c3 = time.process_time()
        pq.write_table(tab, tmp / f"out{i}.parquet")
        c4 = time.process_time()
        for k, v in zip(split, (c1 - c0, c2 - c1, c3 - c2, c4 - c3)):
            split[k] += v
    print("one process, CPU seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in split.items()), flush=True)

    def job(files):
        for i in files:
            t = pq.read_table(tmp / f"in{i}.parquet")
            pq.write_table(_with_text(t, wp.encode_arrow(t.column("text"))), tmp / f"out{i}.parquet")

    def run(k):
        t0 = time.perf_counter()
        procs = [mp.get_context("fork").Process(target=job, args=(list(range(j, parts, k)),)) for j in range(k)]
        for p in procs:
            p.start()
        for p in procs:
            p.join()
            if p.exitcode:
                raise SystemExit(f"a worker process failed (exit code {p.exitcode})")
        return time.perf_counter() - t0

    ratios, ones, twos = [], [], []
    for r in range(args.repeat):
        a, b = run(1), run(2)
        ones.append(a)
        twos.append(b)
        ratios.append(a / b)
        print(f"round {r + 1}/{args.repeat}: 1 process {a:.2f} s, 2 processes {b:.2f} s, {a / b:.2f}x; "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
    print(f"2 processes vs 1, no cluster: median {statistics.median(ratios):.2f}x, best against best "
          f"{min(ones) / min(twos):.2f}x; loadavg {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    C.save_results("bench_scale_floor", {"cpu_split_one_process_s": split, "one_s": ones, "two_s": twos,
                                          "ratios": ratios}, args)


if __name__ == "__main__":
    main()
