"""segkit.runtime.jit and kernel_cache: kernels made on first use, a cache
keyed by source contents, code compiled for a generic CPU found after
installation, and a notice when compiling happens.

Most checks run a fresh interpreter on a small package of kernels written
to a temporary folder (``probe``), with its own Numba cache folders, so
that what is compiled or loaded there is known exactly.
"""

from __future__ import annotations

import ast
import json
import os
import pty
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PROBE_A = '''
from segkit.engine import kernel
from .b import g
from .consts import OFFSET


@kernel
def f(x):
    return g(x) + OFFSET
'''
PROBE_B = '''
from segkit.engine import kernel


@kernel
def g(x):
    return x * 2
'''


def _probe(tmp_path: Path, offset: int = 1) -> Path:
    pkg = tmp_path / "src" / "probe"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "a.py").write_text(PROBE_A, encoding="utf-8")
    (pkg / "b.py").write_text(PROBE_B, encoding="utf-8")
    (pkg / "consts.py").write_text(f"OFFSET = {offset}\n", encoding="utf-8")
    (pkg / "unrelated.py").write_text("X = 1\n", encoding="utf-8")
    return pkg


RUN = r'''
import json, sys
import numba.core.config
from probe.a import f
result = f(20)
from segkit.runtime import kernel_cache as kc
print(json.dumps({"result": result, "stats": {k: v for k, v in kc.STATS.items()},
                  "cpu_name": numba.core.config.CPU_NAME}))
'''


def _run(tmp_path: Path, env_extra: dict, code: str = RUN, stderr=subprocess.PIPE) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "SEGKIT_JIT"))}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "src"), str(ROOT)])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.setdefault("NUMBA_CACHE_DIR", str(tmp_path / "local-cache"))
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(tmp_path), stdout=subprocess.PIPE,
                          stderr=stderr, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------ declarations
def _package_files():
    for top in ("segkit", "segkit_cjk"):
        yield from sorted((ROOT / top).rglob("*.py"))


def test_every_kernel_is_declared_through_segkit_runtime_jit() -> None:
    offenders = []
    for path in _package_files():
        text = path.read_text(encoding="utf-8")
        if path.name in ("jit.py", "kernel_cache.py") and path.parent.name == "runtime":
            continue
        for needle in ("@njit", "@jit(", "numba.njit", "@generated_jit", "@vectorize", "@guvectorize"):
            if needle in text:
                offenders.append(f"{path.relative_to(ROOT)}: {needle}")
    assert not offenders, "compiled functions not declared with segkit.runtime.jit.kernel: " + ", ".join(offenders)
    assert "@kernel" in (ROOT / "segkit" / "engine" / "kernels.py").read_text(encoding="utf-8")


def test_no_module_imports_numba_at_import_time() -> None:
    # Only inside functions (run when compiling or after a kernel ran);
    # kernel_cache itself is imported when Numba is loaded anyway.
    offenders = []
    for path in _package_files():
        if path.name == "kernel_cache.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            elif isinstance(node, ast.Try):
                names = [a.name for n in node.body if isinstance(n, ast.Import) for a in n.names]
                names += [n.module or "" for n in node.body if isinstance(n, ast.ImportFrom)]
            for name in names:
                if name.split(".")[0] in ("numba", "llvmlite"):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {name}")
    assert not offenders, "top-level imports of numba/llvmlite: " + ", ".join(offenders)


def test_import_segkit_loads_no_numba() -> None:
    code = textwrap.dedent('''
        import sys, json
        import segkit
        bare = sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "numba", "llvmlite"))
        from segkit import WordPiece, load, Vocabulary, ModelFileError
        before = sorted(m for m in sys.modules if m.split(".")[0] in ("numba", "llvmlite"))
        wp = WordPiece(["[UNK]", "un", "##aff", "##able"])
        tokens = wp.tokenize("unaffable")
        after = "numba" in sys.modules
        print(json.dumps({"bare": bare, "before": before, "tokens": tokens, "after": after}))
    ''')
    proc = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["bare"] == []  # import segkit: not even NumPy
    assert out["before"] == []
    assert out["tokens"] == ["un", "##aff", "##able"]
    assert out["after"] is True


def test_stand_ins_become_dispatchers_and_references_still_work(tmp_path: Path) -> None:
    _probe(tmp_path)
    code = textwrap.dedent('''
        import json, sys
        import probe.a as a, probe.b as b
        from segkit.runtime import jit
        held = {"f": a.f}                     # a reference materialize() cannot rebind
        kinds = [type(a.f).__name__, "numba" in sys.modules]
        r = held["f"](5)                      # loads Numba, makes every dispatcher
        from numba.core.dispatcher import Dispatcher
        print(json.dumps({"r": r, "kinds": kinds, "a_f": isinstance(a.f, Dispatcher),
                          "b_g": isinstance(b.g, Dispatcher), "held": type(held["f"]).__name__,
                          "again": held["f"](6), "sigs": len(held["f"].signatures)}))
    ''')
    out = _run(tmp_path, {"SEGKIT_JIT_SHIPPED": "0"}, code)
    assert out["kinds"] == ["Kernel", False]
    assert out["r"] == 11 and out["again"] == 13
    assert out["a_f"] and out["b_g"]
    assert out["held"] == "Kernel" and out["sigs"] == 1


# ------------------------------------------------------------------ stamps
def test_source_digest_follows_kernel_files_and_their_imports(tmp_path: Path) -> None:
    from segkit.runtime.kernel_cache import source_digest

    pkg = _probe(tmp_path)

    def digest() -> str:
        source_digest.cache_clear()
        return source_digest(str(pkg))

    first = digest()
    (pkg / "unrelated.py").write_text("X = 2\n", encoding="utf-8")
    assert digest() == first  # imported by no kernel file
    (pkg / "consts.py").write_text("OFFSET = 2\n", encoding="utf-8")
    second = digest()
    assert second != first  # a constant a kernel file imports
    (pkg / "b.py").write_text(PROBE_B.replace("x * 2", "x * 3"), encoding="utf-8")
    assert digest() not in (first, second)  # a kernel file


# ------------------------------------------------- cache across "installs"
def test_generic_code_is_found_after_a_copy_and_other_numba_code_is_unaffected(tmp_path: Path) -> None:
    _probe(tmp_path)
    shipped = tmp_path / "shipped"
    built = _run(tmp_path, {"NUMBA_CPU_NAME": "generic", "SEGKIT_JIT_WRITE": str(shipped)})
    assert built["result"] == 41 and built["stats"]["compiled"] == 2
    assert built["cpu_name"] == "generic"
    assert sorted(p.suffix for p in shipped.iterdir()) == [".nbc", ".nbc", ".nbi", ".nbi"]

    # "Installed" elsewhere: the sources copied (new modification times),
    # an empty local cache; the host CPU.
    import shutil

    shutil.copytree(tmp_path / "src", tmp_path / "installed" / "src")
    inst = tmp_path / "installed"
    loaded = _run(inst, {"SEGKIT_JIT_SHIPPED": str(shipped), "NUMBA_CACHE_DIR": str(inst / "cache")})
    assert loaded["result"] == 41
    assert loaded["stats"]["compiled"] == 0
    assert loaded["stats"]["loaded_portable"] == loaded["stats"]["loaded"] == 1  # f, with g linked in
    assert loaded["cpu_name"] is None  # the process still compiles everything else for its own CPU

    # A changed constant in a file the kernel file imports: compiled again,
    # for this CPU, into the local cache; the next process loads that.
    (inst / "src" / "probe" / "consts.py").write_text("OFFSET = 5\n", encoding="utf-8")
    changed = _run(inst, {"SEGKIT_JIT_SHIPPED": str(shipped), "NUMBA_CACHE_DIR": str(inst / "cache")})
    assert changed["result"] == 45 and changed["stats"]["compiled"] == 2
    again = _run(inst, {"SEGKIT_JIT_SHIPPED": str(shipped), "NUMBA_CACHE_DIR": str(inst / "cache")})
    assert again["result"] == 45
    assert again["stats"]["compiled"] == 0 and again["stats"]["loaded"] == 1 and again["stats"]["loaded_portable"] == 0


def test_a_changed_callee_in_another_file_is_compiled_again_not_loaded_stale(tmp_path: Path) -> None:
    # f (probe/a.py) calls g (probe/b.py); Numba links g's code into f's, so
    # f's cached entry must not survive a change of g, neither in the local
    # cache nor in the code shipped with the package.
    _probe(tmp_path)
    shipped = tmp_path / "shipped"
    built = _run(tmp_path, {"NUMBA_CPU_NAME": "generic", "SEGKIT_JIT_WRITE": str(shipped)})
    assert built["result"] == 41
    import shutil

    shutil.copytree(tmp_path / "src", tmp_path / "installed" / "src")
    inst = tmp_path / "installed"
    env = {"SEGKIT_JIT_SHIPPED": str(shipped), "NUMBA_CACHE_DIR": str(inst / "cache")}
    warm = _run(inst, env)
    assert warm["result"] == 41 and warm["stats"]["compiled"] == 0 and warm["stats"]["loaded_portable"] == 1
    # Only the callee's file changes; a.py (the caller's file) is byte for byte the same.
    (inst / "src" / "probe" / "b.py").write_text(PROBE_B.replace("x * 2", "x * 3"), encoding="utf-8")
    changed = _run(inst, env)
    assert changed["result"] == 61  # 20 * 3 + 1: not the stale 41
    assert changed["stats"]["loaded"] == 0 and "probe.a.f" in changed["stats"]["compiled_names"]
    # The local cache written then serves the next process; changing the
    # callee back is a different source again, compiled again, not the
    # entry of the new g.
    again = _run(inst, env)
    assert again["result"] == 61 and again["stats"]["compiled"] == 0 and again["stats"]["loaded"] == 1
    (inst / "src" / "probe" / "b.py").write_text(PROBE_B.replace("x * 2", "x * 4"), encoding="utf-8")
    assert _run(inst, env)["result"] == 81


def test_a_damaged_cache_entry_is_compiled_again(tmp_path: Path) -> None:
    _probe(tmp_path)
    cache = tmp_path / "local-cache"
    first = _run(tmp_path, {"SEGKIT_JIT_SHIPPED": "0"})
    assert first["stats"]["compiled"] == 2
    entries = [p for p in cache.rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert entries
    for p in entries:
        p.write_bytes(b"\x80\x04garbage" * 7)
    second = _run(tmp_path, {"SEGKIT_JIT_SHIPPED": "0"})
    assert second["result"] == 41 and second["stats"]["compiled"] >= 1


# ----------------------------------------------------------------- notices
def _stderr_of(tmp_path: Path, env_extra: dict, tty: bool) -> str:
    if not tty:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "SEGKIT_JIT"))}
        env.update(PYTHONPATH=os.pathsep.join([str(tmp_path / "src"), str(ROOT)]),
                   NUMBA_CACHE_DIR=str(tmp_path / "cache-pipe"), **env_extra)
        proc = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        return proc.stderr
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "SEGKIT_JIT"))}
    env.update(PYTHONPATH=os.pathsep.join([str(tmp_path / "src"), str(ROOT)]),
               NUMBA_CACHE_DIR=str(tmp_path / "cache-tty"), **env_extra)
    proc = subprocess.Popen([sys.executable, "-c", RUN], env=env, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=600)
    os.close(master)
    assert proc.returncode == 0
    return b"".join(chunks).decode("utf-8", "replace")


def test_compiling_is_announced_once_on_a_terminal(tmp_path: Path) -> None:
    _probe(tmp_path)
    said = _stderr_of(tmp_path, {"SEGKIT_JIT_SHIPPED": "0"}, tty=True)
    assert said.count("segkit: compiling kernels (first run only, ~") == 1, said
    # Not when standard error is a pipe or a file, and not when nothing compiles.
    assert "compiling" not in _stderr_of(tmp_path, {"SEGKIT_JIT_SHIPPED": "0"}, tty=False)
    assert "compiling" not in _stderr_of(tmp_path, {"SEGKIT_JIT_SHIPPED": "0"}, tty=True)


def test_a_kernel_pickles_by_name() -> None:
    import pickle

    from segkit.engine import kernels

    again = pickle.loads(pickle.dumps(kernels.segment_batch))
    assert again is kernels.segment_batch


class _Bar:
    """A stand-in for tqdm's bar that records when it is made."""

    def __init__(self, events: list, *args, **kwargs) -> None:
        events.append("bar")
        self.n = 0
        self.total = kwargs.get("total")

    def update(self, k: int = 1) -> None:
        self.n += k

    def close(self) -> None:
        pass

    def set_postfix_str(self, *args, **kwargs) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


@pytest.mark.parametrize("trainer", ["train_bpe", "train_wordpiece"])
def test_training_compiles_before_its_first_bar(monkeypatch, trainer: str) -> None:
    import tqdm

    import segkit
    from segkit.runtime import jit

    events: list = []
    real_prepare = jit.prepare

    def prepare(calls, seconds):
        events.append("prepare")
        return real_prepare(calls, seconds)

    monkeypatch.setattr(jit, "prepare", prepare)
    monkeypatch.setattr(tqdm, "tqdm", lambda *a, **k: _Bar(events, *a, **k))
    corpus = ["low lower lowest newer newest wider"] * 20
    if trainer == "train_bpe":
        segkit.train_bpe(corpus, 270, show_progress=True)
    else:
        segkit.train_wordpiece(corpus, 60, show_progress=True)
    assert events and events[0] == "prepare", events
    assert "bar" in events
    # Without bars there is nothing to wait for: no preparing run.
    events.clear()
    getattr(segkit, trainer)(corpus, 270 if trainer == "train_bpe" else 60, show_progress=False)
    assert events == []
