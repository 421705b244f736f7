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
    assert sorted(p.suffix for p in shipped.iterdir()) == [".nbk", ".nbk"]  # segkit's format: no Numba pickles

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


def _entry_of(cache: Path, name: str) -> Path:
    """The one cache entry of kernel ``name`` (``probe.a.f``) under ``cache``."""
    found = [p for p in cache.rglob(f"{name}-*.nbk")]
    assert len(found) == 1, found
    return found[0]


def _run_raw(tmp_path: Path, env_extra: dict, drop: tuple = (), umask: int | None = None):
    """``_run`` that returns the parsed output and the standard error."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "SEGKIT_JIT", "XDG_"))}
    env.update(PYTHONPATH=os.pathsep.join([str(tmp_path / "src"), str(ROOT)]), PYTHONDONTWRITEBYTECODE="1",
               NUMBA_CACHE_DIR=str(tmp_path / "local-cache"), SEGKIT_JIT_SHIPPED="0")
    env.update(env_extra)
    for k in drop:
        env.pop(k, None)
    proc = subprocess.run([sys.executable, "-c", RUN], env=env, cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=600, preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)
    assert proc.returncode == 0, f"exit status {proc.returncode}: {proc.stderr[-3000:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_a_damaged_cache_entry_is_compiled_again(tmp_path: Path) -> None:
    _probe(tmp_path)
    cache = tmp_path / "local-cache"
    first, _ = _run_raw(tmp_path, {})
    assert first["stats"]["compiled"] == 2
    entries = list(cache.rglob("*.nbk"))
    assert len(entries) == 2
    for p in entries:
        p.write_bytes(b"\x80\x04garbage" * 7)
    second, err = _run_raw(tmp_path, {})
    assert second["result"] == 41 and second["stats"]["compiled"] >= 1
    assert err.count("discarding the damaged kernel cache entry") == 2, err  # one line per damaged entry
    third, err = _run_raw(tmp_path, {})
    assert third["result"] == 41 and third["stats"]["compiled"] == 0 and "damaged" not in err


def _spans(entry: bytes) -> dict:
    """Where the middle of the machine code (an ELF object) and of the
    bitcode lie in an entry, found by walking the payload's pickle opcodes
    (nothing is unpickled)."""
    import pickletools

    from segkit.runtime.kernel_cache import ENTRY_MAGIC

    head_end = entry.index(b"\n", len(ENTRY_MAGIC)) + 1
    payload = entry[head_end:]
    found = {}
    for op, arg, pos in pickletools.genops(payload):
        if isinstance(arg, bytes) and len(arg) > 64:
            what = {b"\x7fELF": "machine code", b"BC\xc0\xde": "bitcode"}.get(arg[:4])
            if what and what not in found:
                start = head_end + payload.index(arg, pos)
                found[what] = start + len(arg) // 2
    assert set(found) == {"machine code", "bitcode"}, found
    return found


@pytest.mark.parametrize("where", ["machine code", "bitcode"])
def test_a_flipped_bit_in_an_entry_is_found_and_compiled_again_not_run(tmp_path: Path, where: str) -> None:
    # Issue 32 item 2: one flipped bit in cached machine code crashed the
    # process or gave wrong ids; one in the bitcode raised RuntimeError in
    # every process until the cache was deleted.
    _probe(tmp_path)
    first, _ = _run_raw(tmp_path, {})
    assert first["stats"]["compiled"] == 2
    entry = _entry_of(tmp_path / "local-cache", "probe.a.f")
    good = entry.read_bytes()
    at = _spans(good)[where]
    for bit in (0, 5):
        damaged = bytearray(good)
        damaged[at + bit] ^= 1 << bit
        entry.write_bytes(bytes(damaged))
        out, err = _run_raw(tmp_path, {})  # in a subprocess: running the damaged code could crash
        assert out["result"] == 41
        assert "probe.a.f" in out["stats"]["compiled_names"] and out["stats"]["damaged"] == 1
        lines = [line for line in err.splitlines() if "kernel cache" in line]
        assert len(lines) == 1 and "checksum (SHA-256) does not match" in lines[0], err
        again, err = _run_raw(tmp_path, {})  # the entry was replaced by a good one
        assert again["result"] == 41 and again["stats"]["compiled"] == 0 and "kernel cache" not in err


def _plant(tmp_path: Path) -> tuple[Path, Path]:
    """Compile the probe, then put in place of f's entry one that is valid in
    every respect (header, key, checksum) but whose payload is a pickle that
    creates a marker file: the entry an attacker would plant.  Returns the
    entry and the marker."""
    from segkit.runtime.kernel_cache import entry_bytes, parse_entry

    first, _ = _run_raw(tmp_path, {})
    assert first["stats"]["compiled"] == 2
    entry = _entry_of(tmp_path / "local-cache", "probe.a.f")
    good = entry.read_bytes()
    key = json.loads(good.splitlines()[1])["key"]
    assert parse_entry(good, key)
    marker = tmp_path / "planted-code-ran"
    evil = b"cbuiltins\nopen\n(V" + str(marker).encode() + b"\nVw\ntR."  # pickle of open(marker, "w")
    entry.write_bytes(entry_bytes(key, evil))
    return entry, marker


def test_a_planted_entry_is_run_when_trusted_the_control(tmp_path: Path) -> None:
    # The control for the tests below: the planted entry is found and its
    # pickle runs when the file passes the checks (owned by us, 0600, in a
    # private folder), so the refusals below come from the checks alone.
    _probe(tmp_path)
    entry, marker = _plant(tmp_path)
    _run_raw(tmp_path, {})
    assert marker.exists()


@pytest.mark.parametrize("case", ["entry owned by another user", "entry writable by the group",
                                  "entry writable by all", "folder writable by all",
                                  "folder owned by another user", "a folder above writable by all"])
def test_an_entry_another_user_could_have_written_is_not_read(tmp_path: Path, case: str) -> None:
    # Issue 32 item 1.  We run as root in CI, so "another user" is made with chown.
    if os.geteuid() != 0 and "owned" in case:
        pytest.skip("changing a file's owner needs root")
    _probe(tmp_path)
    entry, marker = _plant(tmp_path)
    host = entry.parent
    if case == "entry owned by another user":
        os.chown(entry, 12345, 12345)
    elif case == "entry writable by the group":
        os.chmod(entry, 0o620)
    elif case == "entry writable by all":
        os.chmod(entry, 0o606)
    elif case == "folder writable by all":
        os.chmod(host, 0o777)
    elif case == "folder owned by another user":
        os.chown(host, 12345, 12345)
    else:
        os.chmod(tmp_path / "local-cache", 0o777)  # without the sticky bit: host/ could be swapped
    out, err = _run_raw(tmp_path, {})
    assert not marker.exists(), "the planted pickle ran"
    assert out["result"] == 41 and "probe.a.f" in out["stats"]["compiled_names"]
    said = [line for line in err.splitlines() if "kernel cache" in line]
    assert len(said) == 1 and ("owned by user id 12345" in said[0] or "writable by other users" in said[0]), err


def test_numba_index_pickles_are_never_read(tmp_path: Path) -> None:
    # The exact case of issue 32: an .nbi pickle planted under the name
    # Numba computes from public sources, beside the sources and in Numba's
    # cache folder.  segkit reads neither.
    import hashlib

    pkg = _probe(tmp_path)
    marker = tmp_path / "planted-nbi-ran"
    evil = b"cbuiltins\nopen\n(V" + str(marker).encode() + b"\nVw\ntR."
    src = str(pkg.resolve())
    sub = f"{pkg.name}_{hashlib.sha1(src.encode()).hexdigest()}"
    for folder in (pkg / "__pycache__", tmp_path / "local-cache" / sub):
        folder.mkdir(parents=True)
        for fn in ("a.f-6.py%d%d.nbi" % sys.version_info[:2], "b.g-5.py%d%d.nbi" % sys.version_info[:2]):
            (folder / f"probe.{fn}").write_bytes(evil)
    out, _ = _run_raw(tmp_path, {})
    assert out["result"] == 41 and not marker.exists()
    # ... and without NUMBA_CACHE_DIR nothing is written beside the sources.
    out, _ = _run_raw(tmp_path, {"XDG_CACHE_HOME": str(tmp_path / "xdg")}, drop=("NUMBA_CACHE_DIR",))
    assert out["result"] == 41 and not marker.exists()
    assert sorted(p.name for p in (pkg / "__pycache__").iterdir()) == sorted(
        f"probe.{fn}" for fn in ("a.f-6.py%d%d.nbi" % sys.version_info[:2], "b.g-5.py%d%d.nbi" % sys.version_info[:2]))
    assert len(list((tmp_path / "xdg" / "segkit" / "kernels" / "host").glob("*.nbk"))) == 2


def test_under_umask_000_the_cache_is_private(tmp_path: Path) -> None:
    _probe(tmp_path)
    xdg = tmp_path / "xdg"
    out, _ = _run_raw(tmp_path, {"XDG_CACHE_HOME": str(xdg)}, drop=("NUMBA_CACHE_DIR",), umask=0)
    assert out["stats"]["compiled"] == 2
    made = sorted(xdg.rglob("*"))
    folders = [p for p in made if p.is_dir()]
    files = [p for p in made if p.is_file()]
    assert [p.relative_to(xdg).as_posix() for p in folders] == ["segkit", "segkit/kernels", "segkit/kernels/host"]
    assert len(files) == 2 and all(p.suffix == ".nbk" for p in files)
    assert {oct(p.stat().st_mode & 0o777) for p in folders} == {"0o700"}
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {"0o600"}
    assert not list(xdg.rglob("*.tmp"))  # written through temporary files, all renamed


def test_fuzz_of_the_kernel_cache_reader() -> None:
    # 100 mutated entries here (tools/fuzz_kernel_cache.py --count 1000 for
    # the figure), each read as a first call would; the children run
    # what they accept, so a crash shows as a failed batch.
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "fuzz_kernel_cache.py"), "--count", "100", "--json"],
                          capture_output=True, text=True, timeout=900)
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["crashes"] == [] and result["wrong"] == 0 and not result["forged_code_ran"], result
    assert sum(result["counts"].values()) == 100
    refused = sum(v for k, v in result["counts"].items() if "refused" in k)
    assert refused == 100 - result["counts"]["control-unchanged: loaded, right result"] > 80
    assert proc.returncode == 0


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


# ------------------------------------------- one compile per machine (issue 33)
def _generic_entries(tmp_path: Path) -> Path:
    """The probe's kernels compiled for a generic CPU, as the build step does."""
    shipped = tmp_path / "built"
    built = _run(tmp_path, {"NUMBA_CPU_NAME": "generic", "SEGKIT_JIT_WRITE": str(shipped)})
    assert built["stats"]["compiled"] == 2 and len(list(shipped.glob("*.nbk"))) == 2
    return shipped


def test_a_checkout_loads_the_installed_distributions_compiled_kernels(tmp_path: Path) -> None:
    # pytest from the clone root imports the checkout, not the installed
    # package: the installed package's compiled code serves it without any
    # environment variable when the sources' digests match.
    import shutil

    _probe(tmp_path)
    shipped = _generic_entries(tmp_path)
    site = tmp_path / "site"
    (site / "segkit-9.9.dist-info").mkdir(parents=True)
    (site / "segkit-9.9.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: segkit\nVersion: 9.9\n")
    shutil.copytree(shipped, site / "segkit" / "runtime" / "compiled")
    # A build from the clone leaves segkit.egg-info in it, ahead on the path,
    # naming the checkout (which has no compiled folder): looked past.
    (tmp_path / "src" / "segkit.egg-info").mkdir()
    (tmp_path / "src" / "segkit.egg-info" / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: segkit\nVersion: 9.9\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "src"), str(ROOT), str(site)]),
           "NUMBA_CACHE_DIR": str(tmp_path / "empty-cache")}
    out = _run(tmp_path, env)
    assert out["result"] == 41 and out["stats"]["compiled"] == 0 and out["stats"]["loaded_portable"] == 1
    # Other sources (a changed callee): not loaded from there, compiled.
    (tmp_path / "src" / "probe" / "b.py").write_text(PROBE_B.replace("x * 2", "x * 3"), encoding="utf-8")
    out = _run(tmp_path, dict(env, NUMBA_CACHE_DIR=str(tmp_path / "empty-cache-2")))
    assert out["result"] == 61 and out["stats"]["loaded"] == 0


@pytest.mark.parametrize("trusted", [True, False])
def test_a_kept_build_in_the_user_cache_serves_processes_if_only_the_user_could_write_it(tmp_path: Path,
                                                                                        trusted: bool) -> None:
    import shutil

    _probe(tmp_path)
    shipped = _generic_entries(tmp_path)
    kept = tmp_path / "local-cache" / "segkit" / "builds" / "0123abcd"
    kept.parent.mkdir(parents=True, mode=0o700)
    shutil.copytree(shipped, kept)
    if not trusted:
        for p in kept.iterdir():
            os.chmod(p, 0o666)
    proc_out, err = _run_raw(tmp_path, {}, drop=("SEGKIT_JIT_SHIPPED",))
    assert proc_out["result"] == 41
    if trusted:
        assert proc_out["stats"]["compiled"] == 0 and proc_out["stats"]["loaded_portable"] == 1
    else:
        assert proc_out["stats"]["loaded"] == 0 and "writable by other users" in err


def test_a_build_keeps_its_output_and_the_next_build_of_the_same_sources_copies_it(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    from numba.core import config

    from segkit.cli import precompile
    from segkit.runtime import kernel_cache as kc

    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    said: list = []
    out1 = tmp_path / "out1"
    out1.mkdir()
    names = [f"m.k{i}-1.py311.abc-{i:024d}.nbk" for i in range(3)]
    for i, n in enumerate(names):
        (out1 / n).write_bytes(kc.entry_bytes(f"{i:064x}", b"payload %d" % i))
    manifest = {"files": names, "wall_seconds": 123.0}
    precompile.keep_build("d1", out1, manifest, said.append)
    builds = tmp_path / "xdg" / "segkit" / "kernels" / "builds"
    assert oct((builds / "d1").stat().st_mode & 0o777) == "0o700"
    assert {oct(p.stat().st_mode & 0o777) for p in (builds / "d1").iterdir()} == {"0o600"}
    assert precompile._estimate() == 123  # the notice's estimate: what the last build here took

    out2 = tmp_path / "out2"
    out2.mkdir()
    assert precompile.reuse_build("other-sources", out2, said.append) is None and not list(out2.iterdir())
    got = precompile.reuse_build("d1", out2, said.append)
    assert got is not None and got["files"] == names and said == []
    assert sorted(p.name for p in out2.iterdir()) == sorted(names)
    assert all((out2 / n).read_bytes() == (out1 / n).read_bytes() for n in names)
    assert {oct((out2 / n).stat().st_mode & 0o777) for n in names} == {"0o644"}  # into the wheel

    # Damaged, or writable by others: compiled instead, said why.
    victim = builds / "d1" / names[1]
    good = victim.read_bytes()
    victim.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    assert precompile.reuse_build("d1", tmp_path / "out2", said.append) is None
    assert "checksum" in said[-1]
    victim.write_bytes(good)
    os.chmod(victim, 0o664)
    assert precompile.reuse_build("d1", tmp_path / "out2", said.append) is None
    assert "writable by other users" in said[-1]
    os.chmod(victim, 0o600)
    assert precompile.reuse_build("d1", tmp_path / "out2", said.append) is not None

    # At most KEPT_BUILDS are kept, the least recently used go.
    for i, d in enumerate(["d2", "d3", "d4"]):
        os.utime(builds / "d1", (1000 + i, 1000 + i))
        precompile.keep_build(d, out1, manifest, said.append)
    assert sorted(p.name for p in builds.iterdir()) == ["d2", "d3", "d4"]


def test_the_sources_digest_follows_every_python_file(tmp_path: Path, monkeypatch) -> None:
    import shutil

    from segkit.cli import precompile
    from segkit.runtime import kernel_cache as kc

    copy = tmp_path / "segkit"
    shutil.copytree(ROOT / "segkit", copy, ignore=shutil.ignore_patterns("__pycache__", "compiled"))
    monkeypatch.setattr(kc, "SEGKIT_ROOT", copy)
    first = precompile.sources_digest()
    assert precompile.sources_digest() == first
    (copy / "cli" / "precompile.py").write_text((copy / "cli" / "precompile.py").read_text() + "\n# more\n")
    assert precompile.sources_digest() != first


def test_saving_an_entry_removes_those_of_sources_older_than_the_last_other(tmp_path: Path, monkeypatch) -> None:
    # A checkout switched back and forth keeps both versions' entries; a
    # third version's save removes the oldest.
    import time

    from segkit.runtime import kernel_cache as kc

    def f(x):
        return x

    cache = kc.KernelCache(f, lambda: None)
    base, _, _, tag = cache._setup()
    monkeypatch.setattr(kc, "KEPT_OTHER_SOURCES", 1)
    names = {t: tmp_path / f"{base}.{t}-{'0' * 24}.nbk" for t in ("old000000000", "mid000000000", tag)}
    for i, p in enumerate(names.values()):
        p.write_bytes(b"x")
        os.utime(p, (time.time() - 100 + i, time.time() - 100 + i))
    other = tmp_path / f"other.kernel-1.py311.old000000000-{'0' * 24}.nbk"
    other.write_bytes(b"x")
    cache._prune(tmp_path, names[tag].name)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([names["mid000000000"].name, names[tag].name,
                                                                  other.name])
