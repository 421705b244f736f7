"""Every example of the README and of the quickstart's command-line section
runs as written (issue 33, "Docs that differ from what happens").

* ``docs/quickstart.rst``: each ``.. code-block:: console`` block is a
  session: its ``$ ...`` lines run in order with ``/bin/sh`` in one fresh
  folder (where ``vocabularies/`` is the checkout's, as from the clone root
  the quickstart assumes), ``segkit`` being ``python -m segkit`` on this
  checkout; what each prints (standard output and error) must be the lines
  that follow it.  (The quickstart's Python examples are doctests, collected
  by pytest's ``--doctest-glob=*.rst``.)
* ``README.md``: the Python blocks run in order in one namespace in such a
  folder; a one-line statement whose comment starts with a Python literal
  (``wp.tokenize(...)  # ['token', ...]``) must give that value.  Lines that
  need an optional extra run only when it is installed (else they skip,
  saying which).  The ``segkit ...`` commands of the bash blocks and of
  ``# or: segkit ...`` comments run too; a trailing ``# output`` comment is
  the expected output.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
QUICKSTART = REPO / "docs" / "quickstart.rst"


@pytest.fixture
def clone_root(tmp_path: Path) -> tuple[Path, dict]:
    """A folder standing for the clone root, and an environment whose
    ``segkit`` command is this checkout's."""
    work = tmp_path / "root"
    work.mkdir()
    (work / "vocabularies").symlink_to(REPO / "vocabularies")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "segkit"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m segkit "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(REPO), "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    return work, env


def sh(command: str, cwd: Path, env: dict) -> str:
    r = subprocess.run(["/bin/sh", "-c", f"( {command}\n) 2>&1"], cwd=cwd, env=env, capture_output=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    # One-time notices (a first run builds a dictionary's automata or
    # compiles a kernel: the reader's second run does not show them) are
    # not part of what the docs show.
    return "".join(line for line in r.stdout.decode("utf-8").splitlines(keepends=True)
                   if not line.startswith(ONE_TIME_NOTICES))


ONE_TIME_NOTICES = ("segkit: building ", "segkit: compiling ")


# ------------------------------------------------------------ quickstart
def console_blocks(text: str) -> list[list[tuple[str, list[str]]]]:
    """The sessions of the ``console`` blocks: ``[(command, output lines)]``."""
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)\.\. code-block:: console\s*$", lines[i])
        i += 1
        if not m:
            continue
        body = []
        indent = None
        while i < len(lines):
            line = lines[i]
            if line.strip():
                width = len(line) - len(line.lstrip())
                if indent is None:
                    indent = width
                if width < indent:
                    break
                body.append(line[indent:])
            else:
                body.append("")
            i += 1
        while body and not body[-1]:
            body.pop()
        session: list[tuple[str, list[str]]] = []
        for line in body:
            if line.startswith("$ "):
                session.append((line[2:], []))
            elif session:
                session[-1][1].append(line)
        blocks.append(session)
    return blocks


QUICKSTART_BLOCKS = console_blocks(QUICKSTART.read_text(encoding="utf-8"))


def test_the_quickstart_has_console_examples() -> None:
    assert len(QUICKSTART_BLOCKS) >= 6
    assert any("segkit cut 研究生命起源" == c for block in QUICKSTART_BLOCKS for c, _ in block)


@pytest.mark.parametrize("session", QUICKSTART_BLOCKS, ids=[f"block{k}" for k in range(len(QUICKSTART_BLOCKS))])
def test_quickstart_console_example(session, clone_root) -> None:
    work, env = clone_root
    for command, expected in session:
        got = sh(command, work, env)
        assert got.rstrip("\n").split("\n") == (expected or [""]), command


# ---------------------------------------------------------------- README
def fenced_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


README_TEXT = README.read_text(encoding="utf-8")
PYTHON_BLOCKS = fenced_blocks(README_TEXT, "python")

#: Names the README uses as placeholders for the reader's data: the module
#: that line needs and how to make a small stand-in.
PLACEHOLDERS = {
    "pyarrow_string_column": ("pyarrow", "import pyarrow; pyarrow_string_column = pyarrow.array(['a text', 'another'])"),
    "ds": ("datasets", "import datasets; ds = datasets.Dataset.from_dict({'text': ['a text', 'another']})"),
    "dask_frame": ("dask.dataframe", "import dask.dataframe, pandas; "
                   "dask_frame = dask.dataframe.from_pandas(pandas.DataFrame({'text': ['a text', 'another']}), "
                   "npartitions=1)"),
}


def literal_prefix(comment: str):
    """The Python literal a comment starts with (``[15339, 1917], tiktoken's
    ids`` -> ``[15339, 1917]``), else a marker that there is none."""
    for k in range(len(comment), 0, -1):
        if comment[k - 1] in "])'\"":
            try:
                value = ast.literal_eval(comment[:k])
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, (list, tuple, str)):
                return value
    return NO_VALUE


NO_VALUE = object()


def checked_statements(block: str):
    """``(source, expected value or NO_VALUE)`` per top-level statement."""
    tree = ast.parse(block)
    lines = block.split("\n")
    for node in tree.body:
        source = ast.get_source_segment(block, node)
        expected = NO_VALUE
        if isinstance(node, ast.Expr) and node.lineno == node.end_lineno:
            rest = lines[node.lineno - 1].encode("utf-8")[node.end_col_offset:].decode("utf-8")  # (a byte offset)
            if rest.strip().startswith("#"):
                expected = literal_prefix(rest.strip()[1:].strip())
        yield source, expected, node


def run_readme_block(block: str, namespace: dict) -> int:
    checked = 0
    for source, expected, node in checked_statements(block):
        needs = [PLACEHOLDERS[n.id] for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in PLACEHOLDERS
                 and n.id not in namespace]
        for module, setup in needs:
            pytest.importorskip(module, reason=f"{module} is not installed")
            exec(setup, namespace)
        if expected is NO_VALUE:
            exec(compile(source, "README.md", "exec"), namespace)
        else:
            value = eval(compile(source, "README.md", "eval"), namespace)
            assert value == expected, source
            checked += 1
    return checked


@pytest.fixture
def in_clone_root(clone_root, monkeypatch):
    work, _ = clone_root
    monkeypatch.chdir(work)
    return work


def test_readme_python_examples(in_clone_root) -> None:
    namespace: dict = {}
    checked = 0
    for block in PYTHON_BLOCKS[:2]:  # the core blocks; the corpus-scale block below
        checked += run_readme_block(block, namespace)
    assert checked >= 5  # the values shown in comments were compared
    # the overflow example shows windows (it returned [] when the text fitted)
    assert namespace["wp"].encode("a text too long for eight tokens, so the rest overflows", max_length=8,
                                  truncation=True, stride=2).overflowing
    assert (in_clone_root / "out" / "tokenizer.json").is_file()
    assert (in_clone_root / "tokenizer.json").is_file()


CORPUS_LINES = [line for line in PYTHON_BLOCKS[2].split("\n") if line.strip()] if len(PYTHON_BLOCKS) > 2 else []


@pytest.mark.parametrize("line", CORPUS_LINES)
def test_readme_corpus_scale_examples(line, in_clone_root) -> None:
    import segkit

    namespace = {"segkit": segkit, "wp": segkit.WordPiece.from_pretrained("bert-base-uncased")}
    run_readme_block(line, namespace)
    assert len(namespace) > 2  # the line assigned its result


def readme_commands() -> list[tuple[str, str | None]]:
    """``(segkit command, expected output or None)`` of the README."""
    found = []
    for block in fenced_blocks(README_TEXT, "bash"):
        for line in block.split("\n"):
            for part in line.split("&&"):
                part = part.strip()
                if part.startswith("segkit "):
                    command, _, comment = part.partition("  #")
                    found.append((command.strip(), comment.strip() or None))
    for m in re.finditer(r"# or: (segkit [^\n]*)", README_TEXT):
        found.append((m.group(1).strip(), None))
    return found


README_COMMANDS = readme_commands()


def test_the_readme_has_commands() -> None:
    assert any(c.startswith("segkit cut ") for c, _ in README_COMMANDS)
    assert any(c.startswith("segkit train bpe ") for c, _ in README_COMMANDS)


@pytest.mark.parametrize("command,expected", README_COMMANDS)
def test_readme_command(command, expected, clone_root) -> None:
    work, env = clone_root
    r = subprocess.run(["/bin/sh", "-c", command], cwd=work, env=env, capture_output=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr.decode()
    out = r.stdout.decode("utf-8")
    if expected is not None:
        assert out == expected + "\n"
    elif " train " not in command:
        assert out.strip()
    else:
        assert "written to" in r.stderr.decode()
