"""The package's architecture, checked: no import circles, plugins on the
plugin API only, the loader independent of every preset, every package
installed.

The import graph is read from the source (every ``import`` statement,
including those inside functions, which run later but still tie two modules
together), so a circle is found whether or not it would fail at import time.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("segkit", "segkit_cjk")


def _modules() -> dict[str, Path]:
    found = {}
    for top in PACKAGES:
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _imports(module: str) -> set[str]:
    """Modules of ours that ``module`` imports (a submodule when the
    imported name is one, else the module named in the statement)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name and name not in MODULES:
                    name = name.rpartition(".")[0]
                if name:
                    out.add(name)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES:
                    out.add(sub)
                elif target in MODULES:
                    out.add(target)
    out.discard(module)
    return out


GRAPH = {m: _imports(m) for m in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_planted_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_relative_and_lazy_imports() -> None:
    # Known edges, one of each kind, so that an empty graph cannot pass.
    assert "segkit.models.files" in GRAPH["segkit.models.saving"]  # relative, top level
    assert "segkit.presets.registry" in GRAPH["segkit.models.saving"]  # inside a function
    assert "segkit.presets.base" in GRAPH["segkit_cjk.segmenter"]  # absolute


def test_no_import_circles() -> None:
    cycles = _cycles(GRAPH)
    assert not cycles, "import circles: " + "; ".join(" <-> ".join(c) for c in cycles)


PLUGIN_API = {"segkit", "segkit.engine", "segkit.presets.base"}


def test_segkit_cjk_uses_only_the_plugin_api() -> None:
    used = {
        (m, dep)
        for m, deps in GRAPH.items() if m.startswith("segkit_cjk")
        for dep in deps if dep.startswith("segkit.") or dep == "segkit"
    }
    assert used, "segkit_cjk imports nothing of segkit: the check would be empty"
    private = sorted((m, dep) for m, dep in used if dep not in PLUGIN_API)
    assert not private, f"segkit_cjk imports private modules: {private}"


def test_the_loader_imports_no_preset() -> None:
    reached: set[str] = set()
    todo = ["segkit.models.saving"]
    while todo:
        m = todo.pop()
        for dep in GRAPH[m]:
            if dep not in reached:
                reached.add(dep)
                todo.append(dep)
    presets = sorted(m for m in reached if m.startswith("segkit.presets.") and m not in
                     ("segkit.presets.registry", "segkit.presets"))
    assert not presets, f"the loader reaches preset modules: {presets}"


def test_every_package_is_installed() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    packages = {m for m, p in MODULES.items() if p.name == "__init__.py"}
    missing = sorted(packages - listed)
    assert not missing, f"packages missing from pyproject.toml's [tool.setuptools] packages: {missing}"


@pytest.mark.parametrize("layer", ["engine", "models", "runtime", "results", "presets", "training", "scale", "cli"])
def test_each_layer_is_a_package(layer: str) -> None:
    assert (ROOT / "segkit" / layer / "__init__.py").is_file()


def test_bundled_data_is_found_in_a_source_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a checkout (pytest's rootdir first on sys.path), ``segkit``
    is the source folder and ``segkit.vocabularies`` is not importable: the
    bundled files are then in the top-level ``vocabularies/`` folder.  CI
    imports the checkout this way even after ``pip install .``."""
    from segkit.models import bundled

    def not_installed(name: str) -> None:
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(bundled.resources, "files", not_installed)
    folder = bundled.vocabularies_dir()
    assert folder == ROOT / "vocabularies"
    for name in bundled.BUNDLED_VOCABULARIES:
        assert bundled.bundled_vocabulary(name).is_file()
