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


def _layer(module: str) -> str:
    """The layer a module belongs to: a folder of ``segkit/`` (a preset's
    folder, or one of the modules directly in ``segkit/presets/``, is a
    layer of its own), ``segkit`` for the package's top modules."""
    parts = module.split(".")
    if parts[0] == "segkit_cjk":
        return "segkit_cjk"
    if len(parts) == 1 or parts[1] in ("__main__", "version", "dask", "spark"):
        return "segkit"
    if parts[1] == "presets" and len(parts) > 2:
        return "presets." + parts[2]
    return parts[1]


_PRESETS = {"presets.wordpiece", "presets.bpe", "presets.maxmatch", "presets.sentencepiece", "presets.charbpe",
            "presets.wordlevel"}
_SHARED = {"engine", "runtime", "models", "results"}
#: Which layer may import which.  Down the stack: the engine, runtime,
#: models and results (shared by every preset), the presets' common
#: modules and the pipeline, the presets, the modules that assemble them
#: (loader, Tokenizer, transformers backend), then the interfaces.
#: ``_UPWARD`` lists the imports against that direction, each run lazily
#: (inside a function) for the reason given.
ALLOWED = {
    "engine": {"runtime"},
    "runtime": set(),
    "models": {"engine", "runtime", "segkit"},
    "results": {"runtime"},
    "presets": set(),
    "presets.registry": set(),
    "presets.added_matches": {"runtime"},
    "presets.transformers_names": {"runtime"},
    "presets.base": _SHARED | {"presets.registry"},
    "presets.pipeline": _SHARED | {"presets.transformers_names", "presets.added_matches"},
    **{p: _SHARED | {"presets.base", "presets.pipeline", "presets.added_matches", "presets.transformers_names"}
       for p in _PRESETS},
    "presets.loader": _SHARED | _PRESETS | {"presets.pipeline", "presets.base", "presets.registry"},
    "presets.tokenizer": _SHARED | {"presets.pipeline", "presets.bpe", "presets.loader", "presets.transformers_names",
                                    "presets.added_matches"},
    "presets.transformers_backend": {"presets.tokenizer"},
    "training": _SHARED | _PRESETS,
    "scale": _SHARED | {"training"},
    "cli": _SHARED | _PRESETS | {"presets.loader", "presets.tokenizer", "scale", "training", "segkit", "segkit_cjk"},
    "segkit": {"cli", "scale"},
    "segkit_cjk": {"engine", "presets.base", "segkit"},
}
_UPWARD = {
    ("models", "presets.registry"): "segkit.load finds the preset class a model file names",
    ("results", "scale"): "Encoding.to_arrow / BatchEncoding.to_arrow build Arrow columns",
    ("presets.base", "scale"): "every preset's encode_arrow and Dask shipping, written once",
    ("presets.pipeline", "scale"): "the pipeline's encode_arrow and datasets map function",
}


def test_every_import_between_layers_is_in_the_table() -> None:
    unknown = sorted({_layer(m) for m in MODULES} - set(ALLOWED))
    assert not unknown, f"layers missing from the table: {unknown}"
    bad = sorted({(_layer(m), _layer(d), m, d) for m, deps in GRAPH.items() for d in deps
                  if _layer(m) != _layer(d) and _layer(d) not in ALLOWED[_layer(m)]
                  and (_layer(m), _layer(d)) not in _UPWARD})
    assert not bad, "imports outside the layer table: " + "; ".join(f"{m} -> {d}" for _, _, m, d in bad[:10])


def test_the_layer_table_catches_a_planted_edge() -> None:
    assert _layer("segkit.presets.pipeline.encoder") == "presets.pipeline"
    assert "presets.bpe" not in ALLOWED["presets.pipeline"]  # the pipeline knows no preset
    assert "presets.wordpiece" not in ALLOWED["presets.bpe"]  # presets do not import each other
    assert "scale" not in ALLOWED["engine"]


def test_upward_imports_are_lazy() -> None:
    """The imports of ``_UPWARD`` run inside functions, never at import."""
    for m, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for node in tree.body:  # top-level statements only
            if isinstance(node, ast.ImportFrom):
                target = _resolve(m, is_package, node.level, node.module)
                deps = {f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names}
            elif isinstance(node, ast.Import):
                deps = {a.name for a in node.names}
            else:
                continue
            for d in deps:
                if d in MODULES and (_layer(m), _layer(d)) in _UPWARD:
                    raise AssertionError(f"{m} imports {d} at import time: {_UPWARD[(_layer(m), _layer(d))]}, "
                                         "so it must run lazily")
