"""User dictionary lines read as jieba's ``load_userdict`` reads them
(issue 17): the words jieba adds, compared on generated lines."""

from __future__ import annotations

import io
import os
import tempfile
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segkit_cjk.dictionary import read_dictionary

jieba = pytest.importorskip("jieba", reason="jieba (the peer) is not installed")


def jieba_words(data: bytes) -> list[str]:
    """The words jieba's load_userdict adds for ``data`` (its main
    dictionary is not loaded: add_word is recorded instead)."""
    tk = jieba.Tokenizer()
    tk.initialized = True
    added: list[str] = []
    tk.add_word = lambda word, freq=None, tag=None: added.append(word)
    tk.load_userdict(io.BytesIO(data))
    return list(dict.fromkeys(added))


def segkit_words(data: bytes) -> list[str]:
    fd, name = tempfile.mkstemp(suffix=".dict")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return read_dictionary(name)
    finally:
        os.unlink(name)


LINE = st.text(alphabet=list("ab认 \t5n N.-\u3000\r\x0b"), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=6))
def test_same_words_as_jieba(lines):
    data = "\n".join(lines).encode("utf-8")
    assert segkit_words(data) == jieba_words(data)


def test_byte_order_marks_as_jieba():
    # jieba drops a BOM at the start of any line (segkit too), after
    # stripping the line's whitespace.
    data = "\ufeff云计算 5\n\ufeff台中 n\n".encode("utf-8")
    assert segkit_words(data) == jieba_words(data) == ["云计算", "台中"]


def test_jieba_userdict_file_same_words_as_jieba():
    from pathlib import Path

    data = (Path(__file__).parent / "data" / "jieba-userdict.txt").read_bytes()
    assert "Edu Trust认证" in jieba_words(data)
    assert segkit_words(data) == jieba_words(data)
