"""The plugin registry (entry-point group ``segkit.plugins``).

Third-party plugins are registered at test time without installing
anything: a temporary folder on ``sys.path`` holds the plugin module and a
``fakeplugin-0.1.dist-info`` folder whose ``entry_points.txt`` declares the
entry points, which is all ``importlib.metadata`` needs to find them.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import segkit
import segkit.presets.registry
import segkit_cjk

REPO = Path(__file__).resolve().parents[1]

FAKE_MODULE = '''
"""A tiny third-party segmenter (test fixture)."""

IMPORTED = True


class UpperSplit:
    def cut(self, text):
        return text.upper().split()


class LowerSplit:
    def cut(self, text):
        return text.lower().split()
'''

BROKEN_DEPENDENCY_MODULE = '''
import segkit_test_dependency_that_does_not_exist  # noqa: F401


class NeedsDependency:
    pass
'''

OWN_MODULES = ("fakeplugin_mod", "fakeplugin_broken_dep", "compound_split")


class FakeDistribution:
    """A fake installed distribution in a temporary ``sys.path`` entry."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.info = root / "fakeplugin-0.1.dist-info"
        self.info.mkdir()
        (self.info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakeplugin\nVersion: 0.1\n", encoding="utf-8")
        self.register({})

    def module(self, name: str, source: str) -> None:
        (self.root / f"{name}.py").write_text(source, encoding="utf-8")

    def register(self, entries: dict[str, str]) -> None:
        lines = "".join(f"{name} = {target}\n" for name, target in entries.items())
        (self.info / "entry_points.txt").write_text(f"[segkit.plugins]\n{lines}", encoding="utf-8")


@pytest.fixture
def fake_dist(tmp_path, monkeypatch):
    for name in OWN_MODULES:
        monkeypatch.delitem(sys.modules, name, raising=False)
    dist = FakeDistribution(tmp_path)
    dist.module("fakeplugin_mod", FAKE_MODULE)
    dist.module("fakeplugin_broken_dep", BROKEN_DEPENDENCY_MODULE)
    dist.register(
        {
            "UpperSplit": "fakeplugin_mod:UpperSplit",
            "NoSuchModule": "fakeplugin_no_such_module:Thing",
            "NoSuchAttribute": "fakeplugin_mod:DoesNotExist",
            "NeedsDependency": "fakeplugin_broken_dep:NeedsDependency",
        }
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    segkit.presets.registry.refresh()
    yield dist
    segkit.presets.registry.refresh()
    for name in OWN_MODULES:
        sys.modules.pop(name, None)


def test_plugin_resolves_lazily(fake_dist):
    assert "fakeplugin_mod" not in sys.modules
    registered = segkit.presets.registry.available()
    assert registered["UpperSplit"] == "fakeplugin_mod:UpperSplit"
    assert registered["ChineseMaxMatch"] == "segkit_cjk:ChineseMaxMatch"
    assert "fakeplugin_mod" not in sys.modules  # listing imports nothing
    cls = segkit.UpperSplit
    assert "fakeplugin_mod" in sys.modules
    assert cls is sys.modules["fakeplugin_mod"].UpperSplit
    assert cls().cut("hello plugin world") == ["HELLO", "PLUGIN", "WORLD"]
    assert segkit.UpperSplit is cls
    assert segkit.presets.registry.load("UpperSplit") is cls
    assert getattr(segkit, "UpperSplit") is cls


def test_from_import(fake_dist):
    namespace: dict = {}
    exec("from segkit import UpperSplit", namespace)
    assert namespace["UpperSplit"] is sys.modules["fakeplugin_mod"].UpperSplit


def test_unknown_name_lists_registered_plugins(fake_dist):
    with pytest.raises(AttributeError) as info:
        segkit.NoSuchSegmenter  # noqa: B018
    msg = str(info.value)
    assert "NoSuchSegmenter" in msg
    for name in ("ChineseMaxMatch", "UpperSplit", "NoSuchModule"):
        assert name in msg
    assert not hasattr(segkit, "NoSuchSegmenter")
    with pytest.raises(AttributeError, match="NoSuchSegmenter"):
        segkit.presets.registry.load("NoSuchSegmenter")
    with pytest.raises(ImportError):
        exec("from segkit import NoSuchSegmenter", {})


def test_dunder_names_are_not_plugins(fake_dist):
    with pytest.raises(AttributeError):
        segkit.__wrapped__  # noqa: B018
    assert getattr(segkit, "__path__")  # a real package attribute still works


@pytest.mark.parametrize(
    "name, target",
    [
        ("NoSuchModule", "fakeplugin_no_such_module:Thing"),
        ("NoSuchAttribute", "fakeplugin_mod:DoesNotExist"),
        ("NeedsDependency", "fakeplugin_broken_dep:NeedsDependency"),
    ],
)
def test_broken_target_raises_import_error_naming_it(fake_dist, name, target):
    with pytest.raises(ImportError) as info:
        getattr(segkit, name)
    msg = str(info.value)
    assert name in msg and target in msg
    with pytest.raises(ImportError, match=re.escape(target)):
        segkit.presets.registry.load(name)
    # a broken plugin does not break the others
    assert segkit.UpperSplit().cut("a") == ["A"]


def test_refresh_forgets_loaded_plugins(fake_dist):
    first = segkit.UpperSplit
    fake_dist.register({"UpperSplit": "fakeplugin_mod:LowerSplit"})
    assert segkit.UpperSplit is first  # loaded once, kept
    segkit.presets.registry.refresh()
    assert segkit.UpperSplit is sys.modules["fakeplugin_mod"].LowerSplit
    assert segkit.UpperSplit().cut("MiXeD") == ["mixed"]


def test_plugin_installed_after_start_is_found(fake_dist):
    with pytest.raises(AttributeError):
        segkit.LateComer  # noqa: B018
    fake_dist.register({"UpperSplit": "fakeplugin_mod:UpperSplit", "LateComer": "fakeplugin_mod:LowerSplit"})
    segkit.presets.registry.refresh()
    assert segkit.LateComer is sys.modules["fakeplugin_mod"].LowerSplit


def test_plugins_cannot_shadow_segkit_names(fake_dist):
    fake_dist.register({"WordPiece": "fakeplugin_mod:UpperSplit", "load": "fakeplugin_mod:LowerSplit"})
    segkit.presets.registry.refresh()
    from segkit.models.saving import load
    from segkit.presets.wordpiece import WordPiece

    assert segkit.WordPiece is WordPiece
    assert segkit.load is load


def test_chinese_maxmatch_is_the_cjk_plugin():
    segkit.presets.registry.refresh()
    assert segkit.ChineseMaxMatch is segkit_cjk.ChineseMaxMatch
    assert segkit.presets.registry.load("ChineseMaxMatch") is segkit_cjk.ChineseMaxMatch
    assert segkit.presets.registry.available()["ChineseMaxMatch"] == "segkit_cjk:ChineseMaxMatch"
    assert segkit.presets.registry.GROUP == "segkit.plugins"


def test_chinese_maxmatch_saved_model_loads_through_the_registry(tmp_path):
    seg = segkit.ChineseMaxMatch(["研究", "研究生", "生命", "命", "起源"], mode="backward")
    seg.save(tmp_path / "zh.segkit")
    loaded = segkit.load(tmp_path / "zh.segkit")
    assert type(loaded) is segkit_cjk.ChineseMaxMatch
    assert loaded.cut("研究生命起源") == ["研究", "生命", "起源"]


def test_import_segkit_imports_no_plugin():
    code = textwrap.dedent(
        """
        import sys
        import segkit
        assert "segkit_cjk" not in sys.modules, "segkit_cjk imported by 'import segkit'"
        cls = segkit.ChineseMaxMatch
        assert "segkit_cjk" in sys.modules
        import segkit_cjk
        assert cls is segkit_cjk.ChineseMaxMatch
        print("ok")
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=str(REPO), capture_output=True, text=True, timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "ok"


def _docs_example() -> str:
    """The ``compound_split.py`` code block of docs/plugins.rst."""
    rst = (REPO / "docs" / "plugins.rst").read_text(encoding="utf-8")
    m = re.search(r"\.\. code-block:: python\n   :caption: compound_split\.py\n\n((?:   .*\n|\n)+)", rst)
    assert m, "compound_split.py example not found in docs/plugins.rst"
    return textwrap.dedent(m.group(1))


def test_docs_example_plugin(fake_dist):
    """The example of docs/plugins.rst, registered as a plugin, gives the documented output."""
    fake_dist.module("compound_split", _docs_example())
    fake_dist.register({"CompoundSplit": "compound_split:CompoundSplit"})
    segkit.presets.registry.refresh()
    splitter = segkit.CompoundSplit(["haus", "tür", "haustür", "schlüssel", "dienst", "dienstag"])
    assert splitter.split("haustürschlüssel dienstagsdienst") == ["haustür", "schlüssel", "dienstag", "s", "dienst"]
    assert splitter.split("  Haus\u3000tür ") == ["H", "a", "u", "s", "tür"]
    assert splitter.split("") == []


def test_docs_example_plugin_saves_loads_pickles(fake_dist, tmp_path):
    """The example gets saving, segkit.load and pickling from the preset base alone."""
    import pickle

    fake_dist.module("compound_split", _docs_example())
    fake_dist.register({"CompoundSplit": "compound_split:CompoundSplit"})
    segkit.presets.registry.refresh()
    words = ["haus", "tür", "haustür", "schlüssel", "dienst", "dienstag"]
    splitter = segkit.CompoundSplit(words)
    path = tmp_path / "compounds.segkit"
    splitter.save(path)
    sys.modules.pop("compound_split")  # the loader must find the class through the registry,
    segkit.presets.registry.refresh()  # importing its module afresh
    loaded = segkit.load(path)
    assert type(loaded).__name__ == "CompoundSplit" and type(loaded) is not type(splitter)
    texts = ["haustürschlüssel dienstagsdienst", "dienstag", "xhaus tür", ""]
    assert [loaded.split(t) for t in texts] == [splitter.split(t) for t in texts]
    assert loaded.split_batch(texts) == [splitter.split(t) for t in texts]
    again = pickle.loads(pickle.dumps(loaded))
    assert again.split("haustür") == ["haustür"]
    # A damaged file is the loader's error, not a crash.
    raw = bytearray(path.read_bytes())
    raw[-40:] = b"\xff" * 40
    path.write_bytes(bytes(raw))
    with pytest.raises(segkit.ModelFileError):
        segkit.load(path)


def test_docs_example_plugin_imports_only_the_plugin_api():
    import ast

    tree = ast.parse(_docs_example())
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            used.update(a.name for a in node.names if a.name.split(".")[0] == "segkit")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "segkit":
            used.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" == "segkit.presets.base" else node.module
                        for a in node.names)
    assert used == {"segkit", "segkit.engine", "segkit.presets.base"}, used
