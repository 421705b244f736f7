"""Doctests (modules and docs/*.rst) that import an optional peer skip,
with the reason, when that peer is not installed (CI installs them all)."""

from __future__ import annotations

import importlib.util
import re

import pytest
from _pytest.doctest import DoctestItem

#: Optional peers some doctests import (``segkit[arrow]`` and friends).
OPTIONAL_PEERS = ("pyarrow", "pandas", "datasets", "transformers", "dask", "distributed")


def pytest_collection_modifyitems(config, items):
    missing = [m for m in OPTIONAL_PEERS if importlib.util.find_spec(m) is None]
    if not missing:
        return
    for item in items:
        if not isinstance(item, DoctestItem):
            continue
        source = "".join(example.source for example in item.dtest.examples)
        for name in missing:
            if re.search(rf"^\s*(import|from) {name}\b", source, re.M):
                item.add_marker(pytest.mark.skip(reason=f"the example needs {name}, which is not installed"))
                break


def _missing(*modules: str) -> bool:
    return any(importlib.util.find_spec(m) is None for m in modules)


# Modules that import an extra at the top cannot even be collected without
# it (their tests in tests/ skip with a reason).
collect_ignore = []
if _missing("dask", "distributed", "pandas", "pyarrow"):
    collect_ignore += ["segkit/dask.py", "segkit/scale/dask.py"]
if _missing("pyspark", "pandas", "pyarrow"):
    collect_ignore += ["segkit/spark.py", "segkit/scale/spark.py"]
