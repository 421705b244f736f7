"""segkit.scale.spark on a local Spark (``local[2]``): mapInArrow adds the
encoding columns, equal to ``encode_batch`` in one process.

Needs pyspark, pyarrow and a Java runtime (Spark 4 wants Java 17 or later);
skips with the reason otherwise. One SparkSession serves the module (the JVM
takes 10-20 s to start).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyarrow", reason="pyarrow is not installed (segkit.scale.spark needs pyarrow (pip install 'segkit[spark]'))")
pytest.importorskip("pandas", reason="pandas is not installed (pyspark's Arrow path needs pandas)")
pytest.importorskip("pyspark", reason="pyspark is not installed (segkit.scale.spark's tests need pyspark (pip install 'segkit[spark]'))")

import segkit.scale.spark as ss  # noqa: E402

SAMPLE = Path(__file__).resolve().parent / "data" / "multilingual-sample.jsonl"
# pyspark 4.x warns about pandas 3 on every Arrow UDF; segkit's path does not use pandas
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")


def _java_problem() -> str | None:
    java = shutil.which("java") or (os.environ.get("JAVA_HOME") and os.path.join(os.environ["JAVA_HOME"], "bin", "java"))
    if not java or not os.path.exists(java):
        return "no Java runtime (java not on PATH, JAVA_HOME unset); Spark needs one: see docs/corpus_scale.rst"
    try:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"java -version failed: {e}"
    if proc.returncode != 0:
        return f"java -version failed: {proc.stderr[-300:]}"
    return None


@pytest.fixture(scope="module")
def spark():
    problem = _java_problem()
    if problem:
        pytest.skip(problem)
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]").appName("segkit-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "64")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def test_map_in_arrow_equals_encode_batch(spark, mbert, texts):
    df = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "row long, text string").repartition(3)
    out = ss.encode(df, mbert, max_length=32, truncation=True).orderBy("row").collect()
    want = mbert.encode_batch(texts, max_length=32, truncation=True)
    assert [r["row"] for r in out] == list(range(len(texts))), "every row exactly once"
    assert [r["text"] for r in out] == texts
    assert [list(r["input_ids"]) for r in out] == [e.ids for e in want]
    assert [list(r["token_type_ids"]) for r in out] == [e.type_ids for e in want]
    assert [list(r["attention_mask"]) for r in out] == [e.attention_mask for e in want]
    assert [list(r["special_tokens_mask"]) for r in out] == [e.special_tokens_mask for e in want]
    assert [[tuple(p) for p in r["offset_mapping"]] for r in out] == [e.offsets for e in want]


def test_udf_with_explicit_schema_and_pairs(spark, mbert):
    rows = [("How are you?", "Fine."), ("Spark", "mapInArrow")]
    df = spark.createDataFrame(rows, "a string, b string")
    udf = ss.encode_udf(mbert, column="a", pair_column="b")
    out = df.mapInArrow(udf, ss.output_schema(df.schema, mbert, pair_column="b")).collect()
    want = mbert.encode_batch(rows)
    assert [list(r["input_ids"]) for r in out] == [e.ids for e in want]
    assert [list(r["token_type_ids"]) for r in out] == [e.type_ids for e in want]
    with pytest.raises(KeyError, match="'body' is not in the frame"):
        ss.encode(df, mbert, column="body")
