"""Build step of segkit: compile the kernels into the wheel.

Everything else is declared in ``pyproject.toml``.  After the sources are
copied into the build folder, a fresh interpreter runs ``segkit precompile``
(:mod:`segkit.cli.precompile`) from there with ``NUMBA_CPU_NAME=generic``, writing
the compiled kernels to ``segkit/runtime/compiled``: code for the baseline
CPU of this architecture, which ``segkit.runtime.kernel_cache`` loads after
installation on any machine of the architecture, with the same Python and
Numba versions.  The wheel then holds machine code and is tagged for this
Python and platform.

The step keeps its output in the user's kernel cache
(``~/.cache/segkit/kernels/builds/<digest of the sources>``, private to the
user), so a second install of the same sources (``.[test]`` after ``.``, a
docs venv) copies it in a second instead of compiling again, and a checkout
of the same sources loads it too (:mod:`segkit.runtime.kernel_cache`).

If that step fails or takes too long, the build goes on without it (the
kernels are then compiled on first use, as in a development checkout);
``SEGKIT_PRECOMPILE=0`` skips it.  Editable installs skip it too.  pip
shows a build's output only with ``-v``: the step's notice and progress go
to the terminal pip runs in, if any (``SEGKIT_BUILD_QUIET=1``: not).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # older setuptools
    from wheel.bdist_wheel import bdist_wheel

#: The build step's limit; CI allows 20 minutes for everything.
PRECOMPILE_TIMEOUT = int(os.environ.get("SEGKIT_PRECOMPILE_TIMEOUT", "900"))


def _open_terminal():
    """The user's terminal, if ``pip install`` runs in one: pip shows a build
    step's output only with ``-v``, so the notice that compiling takes a few
    minutes goes to the terminal directly (else to standard error, which
    pip shows with ``-v`` and in its log)."""
    if os.environ.get("SEGKIT_BUILD_QUIET"):
        return None
    try:
        return open("/dev/tty", "w", encoding="utf-8", errors="replace")  # noqa: SIM115 (closed by the caller)
    except OSError:
        return None


_TERMINAL = None


def _log(message: str) -> None:
    line = f"segkit build: {message}"
    if _TERMINAL is not None:
        try:
            _TERMINAL.write(f"\r\n{line}\n" if not message.startswith("  ") else f"{line}\n")
            _TERMINAL.flush()
            return
        except OSError:
            pass
    print(line, file=sys.stderr, flush=True)


class BuildWithKernels(build_py):
    """``build_py`` that also compiles the kernels into the build folder."""

    def run(self) -> None:
        super().run()
        out = (Path(self.build_lib) / "segkit" / "runtime" / "compiled").resolve()
        shutil.rmtree(out, ignore_errors=True)  # never a stale one from an earlier build in this folder
        if getattr(self, "editable_mode", False) or os.environ.get("SEGKIT_PRECOMPILE", "1") == "0":
            return
        out.mkdir(parents=True, mode=0o755)
        env = dict(os.environ)
        env.update(
            NUMBA_CPU_NAME="generic", SEGKIT_JIT_WRITE=str(out.resolve()), PYTHONDONTWRITEBYTECODE="1",
            PYTHONPATH=os.pathsep.join([str(Path(self.build_lib).resolve()), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        )
        env.pop("NUMBA_CPU_FEATURES", None)
        env.pop("NUMBA_CACHE_DIR", None)
        env.pop("NUMBA_DISABLE_JIT", None)
        global _TERMINAL
        _TERMINAL = _open_terminal()
        t0 = time.perf_counter()
        # The step says itself whether it reuses an earlier build of the same
        # sources (kept in the user's kernel cache) or compiles, and how long
        # that takes (segkit.cli.precompile.build).
        _log("the kernels for a generic CPU, so that the first segkit command after installing does not compile:")
        output: list[str] = []
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "segkit", "precompile", "--into", str(out)],
                env=env, cwd=str(Path(self.build_lib).resolve()),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
            timer = threading.Timer(PRECOMPILE_TIMEOUT, proc.kill)
            timer.start()
            try:
                assert proc.stdout is not None
                for line in proc.stdout:  # "segkit precompile: wordpiece: 32.0 s", one per area: progress
                    output.append(line)
                    if line.startswith("segkit precompile: "):
                        _log("  " + line[len("segkit precompile: "):].rstrip())
                proc.wait()
            finally:
                timer.cancel()
            ok = proc.returncode == 0
            detail = "".join(output)[-2000:]
        except (OSError, subprocess.SubprocessError) as e:
            ok, detail = False, repr(e)
        if ok:
            n = sum(1 for p in out.iterdir() if p.suffix == ".nbk")
            _log(f"{n} compiled kernels in {time.perf_counter() - t0:.0f} s")
        else:
            shutil.rmtree(out, ignore_errors=True)
            _log(f"precompiling failed; the kernels will be compiled on first use instead:\n{detail}")
        if _TERMINAL is not None:
            _TERMINAL.close()
            _TERMINAL = None


class PlatformWheel(bdist_wheel):
    """A wheel with compiled kernels holds machine code for this Python and
    platform: tag it so (a pure wheel otherwise)."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if os.environ.get("SEGKIT_PRECOMPILE", "1") != "0":
            self.root_is_pure = False

    def get_tag(self):
        python, abi, plat = super().get_tag()
        if not self.root_is_pure:
            python, abi = f"cp{sys.version_info[0]}{sys.version_info[1]}", "none"
        return python, abi, plat


setup(cmdclass={"build_py": BuildWithKernels, "bdist_wheel": PlatformWheel})
