"""Collection rules for the whole checkout (tests, module doctests, docs).

Modules that exist only for an optional extra are not doctested when the
extra is not installed (their tests in ``tests/`` skip with a reason).
"""

import importlib.util


def _missing(*modules: str) -> bool:
    return any(importlib.util.find_spec(m) is None for m in modules)


collect_ignore = []
if _missing("dask", "distributed", "pandas", "pyarrow"):
    collect_ignore.append("segkit/dask.py")
if _missing("pyspark", "pandas", "pyarrow"):
    collect_ignore.append("segkit/spark.py")
