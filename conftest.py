"""Doctests (modules and docs/*.rst) that import an optional peer skip,
with the reason, when that peer is not installed (CI installs them all)."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path

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


def _bundled_data_from_the_checkout() -> None:
    """pytest imports ``segkit`` from this checkout, where the bundled files
    are in the top-level ``vocabularies/`` folder (``pyproject.toml`` installs
    it as ``segkit.vocabularies``).  Give the checkout's ``segkit`` that
    subpackage, so that examples using ``files("segkit.vocabularies")`` run
    as they do for a user of the installed package."""
    if importlib.util.find_spec("segkit.vocabularies") is not None:
        return
    folder = Path(__file__).resolve().parent / "vocabularies"
    spec = importlib.util.spec_from_file_location(
        "segkit.vocabularies", folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["segkit.vocabularies"] = module
    spec.loader.exec_module(module)
    import segkit

    segkit.vocabularies = module


_bundled_data_from_the_checkout()


# ------------------------------------------------------------- CI's two runs
# CI runs the README's test command first with only ``.[test]`` installed,
# then installs the optional peers and runs only what they unlock: the
# tests that skipped (or modules that could not even be collected) in the
# first run.  ``SEGKIT_RECORD_SKIPPED=FILE`` writes their node ids to FILE,
# one per line, for ``python -m pytest @FILE``.
_RECORD = os.environ.get("SEGKIT_RECORD_SKIPPED")
_skipped: list[str] = []


def pytest_collectreport(report):
    if _RECORD and report.skipped:
        _skipped.append(report.nodeid)


def pytest_runtest_logreport(report):
    if _RECORD and report.skipped and not hasattr(report, "wasxfail"):
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    # (With pytest-xdist the controller writes the file: the workers'
    # reports reach it, and each worker's session would overwrite it.)
    if not _RECORD or hasattr(session.config, "workerinput"):
        return
    root = Path(__file__).resolve().parent
    unlocked = list(dict.fromkeys([*_skipped, *collect_ignore]))
    Path(_RECORD).write_text("".join(f"{n}\n" for n in unlocked if n and (root / n.split("::")[0]).exists()),
                             encoding="utf-8")
