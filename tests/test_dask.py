"""segkit.scale.dask on a real local cluster (two worker processes), and the
process-safety rules that make it work: importing segkit starts no thread,
a fork after import (and after use) tokenizes, a shipped model loads fast.

One cluster serves the whole module (starting one costs seconds). The
expected values come from the single-process API (``encode_batch``,
``cut``, ``train_bpe``, ``train_wordpiece``) on the same texts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("pyarrow", reason="pyarrow is not installed (segkit.scale.dask needs pyarrow (pip install 'segkit[dask]'))")
pytest.importorskip("pandas", reason="pandas is not installed (segkit.scale.dask needs pandas (pip install 'segkit[dask]'))")
pytest.importorskip("dask.dataframe", reason="dask.dataframe is not installed (segkit.scale.dask needs dask[dataframe] (pip install 'segkit[dask]'))")
distributed = pytest.importorskip("distributed", reason="distributed is not installed (segkit.scale.dask's tests need distributed (pip install 'segkit[dask]'))")

import dask.dataframe as dd  # noqa: E402
import pandas as pd  # noqa: E402

import segkit  # noqa: E402
import segkit.scale.dask as sd  # noqa: E402

TESTS_DATA = Path(__file__).resolve().parent / "data"
SAMPLE = TESTS_DATA / "multilingual-sample.jsonl"


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def parquet(texts, tmp_path_factory) -> str:
    """The sample as Parquet in 6 files, with a row number to check that every row comes back once."""
    path = tmp_path_factory.mktemp("parquet") / "sample"
    frame = pd.DataFrame({"row": range(len(texts)), "text": texts})
    dd.from_pandas(frame, npartitions=6).to_parquet(str(path), write_index=False)
    return str(path)


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None, silence_logs=40,
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def wordpiece(mbert) -> segkit.WordPiece:
    return mbert


def _check_rows(out: pd.DataFrame, wp, texts, **kwargs) -> None:
    out = out.sort_values("row")
    assert out["row"].tolist() == list(range(len(texts))), "every row exactly once"
    want = wp.encode_batch(texts, **kwargs)
    assert out["text"].tolist() == texts
    assert out["input_ids"].tolist() == [e.ids for e in want]
    assert out["token_type_ids"].tolist() == [e.type_ids for e in want]
    assert out["attention_mask"].tolist() == [e.attention_mask for e in want]
    assert out["special_tokens_mask"].tolist() == [e.special_tokens_mask for e in want]
    assert [[tuple(o) for o in row] for row in out["offset_mapping"].tolist()] == [e.offsets for e in want]


def test_encode_on_the_cluster_equals_one_process(client, parquet, wordpiece, texts):
    frame = dd.read_parquet(parquet)
    result = sd.encode(frame, wordpiece)
    assert str(result.dtypes["input_ids"]) == "list<item: int32>[pyarrow]"
    out = result.compute()
    _check_rows(out, wordpiece, texts)
    assert list(out.columns[:2]) == ["row", "text"]
    # with options (truncation and padding as encode_batch takes them)
    out = sd.encode(frame, wordpiece, max_length=12, truncation=True, padding="max_length").compute()
    _check_rows(out, wordpiece, texts, max_length=12, truncation=True, padding="max_length")


def test_model_travels_once_per_worker(client, parquet, wordpiece):
    # (How fast a worker loads it is a benchmark figure, not a test:
    # benchmarks/bench_scale.py --only dask prints the workers' load times.)
    frame = dd.read_parquet(parquet).repartition(npartitions=12)
    sd.encode(frame, wordpiece).compute()
    key = sd._Shipped(wordpiece).key
    loads = client.run(lambda: [t for k, t in __import__("importlib").import_module("segkit.scale.shipping")._LOADS if k == key])
    assert len(loads) == 2
    for worker, times in loads.items():
        assert len(times) <= 1, f"{worker} unpickled the model {len(times)} times for 12 partitions"
    times = [t for ts in loads.values() for t in ts]
    assert times, "no worker received the model"


def test_cut_on_the_cluster_equals_one_process(client, texts):
    from segkit_cjk import ChineseMaxMatch

    # a small dictionary: the default one takes seconds to build in this test session's private cache
    words = ["中文", "北京", "大学", "北京大学", "我们", "今天", "天气", "学生", "的确", "确实", "中国", "人民"]
    seg = ChineseMaxMatch(words, mode="bidirectional")
    frame = dd.from_pandas(pd.DataFrame({"row": range(len(texts)), "text": texts}), npartitions=4)
    out = sd.cut(frame, seg).compute().sort_values("row")
    assert out["tokens"].tolist() == [seg.cut(t) for t in texts]
    assert str(out["tokens"].dtype) == "list<item: string>[pyarrow]"


def _kill_worker_once(part: pd.DataFrame, marker: str) -> pd.DataFrame:
    """Kills the worker process running it, the first time it sees row 150."""
    if 150 in part["row"].values:
        try:
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return part
        os.close(fd)
        os._exit(1)
    return part


def test_a_worker_killed_mid_job_loses_no_row(client, parquet, wordpiece, texts, tmp_path):
    marker = str(tmp_path / "killed")
    frame = dd.read_parquet(parquet)
    frame = frame.map_partitions(_kill_worker_once, marker, meta=frame._meta)
    out = sd.encode(frame, wordpiece).compute()
    assert os.path.exists(marker), "the task that kills its worker did not run"
    _check_rows(out, wordpiece, texts)
    client.wait_for_workers(2, timeout=60)


def test_errors_name_the_problem(client, wordpiece):
    frame = dd.from_pandas(pd.DataFrame({"text": ["a", None]}), npartitions=1)
    with pytest.raises(KeyError, match="'body' is not in the frame"):
        sd.encode(frame, wordpiece, column="body")
    with pytest.raises(ValueError, match="row 1"):
        sd.encode(frame, wordpiece).compute()
    out = sd.encode(frame, wordpiece, null="empty").compute()
    assert out["input_ids"].tolist() == [wordpiece.encode("a").ids, wordpiece.encode("").ids]
    taken = dd.from_pandas(pd.DataFrame({"text": ["a"], "input_ids": [1]}), npartitions=1)
    with pytest.raises(ValueError, match=r"already has columns \['input_ids'\]"):
        sd.encode(taken, wordpiece)


@pytest.fixture(scope="module")
def corpus_files(texts, tmp_path_factory) -> list[Path]:
    """The sample in three files, documents separated by a special token."""
    d = tmp_path_factory.mktemp("corpus")
    paths = []
    for i in range(3):
        p = d / f"part{i}.txt"
        p.write_text("<|endoftext|>".join(texts[i::3]), encoding="utf-8")
        paths.append(p)
    return paths


def test_train_bpe_on_the_cluster_equals_one_process(client, corpus_files):
    specials = ["<|endoftext|>"]
    want = segkit.train_bpe(corpus_files, 700, specials, show_progress=False)
    got = sd.train_bpe(corpus_files, 700, specials, split_bytes=5000, show_progress=False)
    assert len(got.merges) == 700 - 257
    assert got == want


def test_train_wordpiece_on_the_cluster_equals_one_process(client, corpus_files):
    want = segkit.train_wordpiece(corpus_files, 900, limit_alphabet=300, show_progress=False)
    got = sd.train_wordpiece(corpus_files, 900, limit_alphabet=300, split_bytes=5000, show_progress=False)
    assert got.vocab.tokens == want.vocab.tokens
    assert len(got.vocab.tokens) == 900
    cased = sd.train_wordpiece([str(p) for p in corpus_files], 2000, lowercase=False, split_bytes=None,
                               show_progress=False)
    assert cased.vocab.tokens == segkit.train_wordpiece(corpus_files, 2000, lowercase=False,
                                                        show_progress=False).vocab.tokens


def _run(code: str, **env: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_importing_segkit_starts_no_thread():
    # numpy's OpenBLAS starts its own pool when numpy is imported (unless
    # OPENBLAS_NUM_THREADS=1), and pyarrow starts one: the dependencies are
    # imported first, then segkit must add no thread, neither on import nor
    # when a model is loaded and used on one thread.
    out = _run(
        """
        import os, pickle, threading
        def count():
            return threading.active_count(), len(os.listdir("/proc/self/task"))
        counts = [count()]
        import numpy, numba, marisa_trie, regex, tqdm
        counts.append(count())
        import segkit, segkit.presets.wordpiece, segkit.training, segkit_cjk
        wp = pickle.loads(pickle.dumps(segkit.WordPiece(["[UNK]", "a", "##b"])))
        wp.encode_batch(["ab a"] * 10)
        counts.append(count())
        import pyarrow, pandas, dask.dataframe, distributed
        counts.append(count())
        import segkit.scale.dask
        counts.append(count())
        print(counts)
        """,
        OPENBLAS_NUM_THREADS="1",
    )
    counts = eval(out)
    assert counts[0] == counts[1] == counts[2] == (1, 1), f"threads at start, after dependencies, after segkit: {counts}"
    assert counts[3] == counts[4], f"threads after dask's dependencies, after segkit.scale.dask: {counts}"


def test_fork_after_import_and_use_is_safe():
    # The parent imports, tokenizes on two threads (starting a pool), then
    # forks; the child tokenizes on two threads too and must get the
    # parent's result (a pool inherited from the parent has no threads).
    out = _run(
        """
        import os, segkit
        wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
        texts = ["Hello, forked world! " * 4000] * 4
        want = wp.encode_batch(texts, num_threads=2)[3].ids
        pid = os.fork()
        if pid == 0:
            try:
                got = wp.encode_batch(texts, num_threads=2)[3].ids
                os._exit(0 if got == want else 3)
            except BaseException:
                os._exit(4)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), len(want))
        """
    )
    code, n = out.split()
    assert code == "0", f"the forked child failed (exit code {code})"
    assert int(n) > 10_000
