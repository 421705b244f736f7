"""The RWKV vocabulary reader and its literal parser: Python's own reading
of literals (``ast.literal_eval``, on single literal tokens only) is the
reference; bad lines are rejected naming file, line and what was found;
nothing is evaluated."""

from __future__ import annotations

import ast
import io
import tokenize
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segkit import VocabularyError
from segkit.presets.maxmatch.literal import LiteralError, parse_literal
from segkit.presets.maxmatch.rwkv_file import DuplicateTokenWarning, parse_rwkv_vocab, read_rwkv_vocab

# ----------------------------------------------------------------- literals


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(), st.binary()))
def test_repr_of_any_str_or_bytes_reads_back(value):
    src = repr(value)
    if isinstance(value, str) and any(0xD800 <= ord(c) < 0xE000 for c in value):
        pass  # repr keeps lone surrogates escaped: still a literal
    got, end = parse_literal(src)
    assert got == value and end == len(src)


_PIECES = ["a", "é", "你", " ", "\\\\", "\\'", '\\"', "\\n", "\\t", "\\x41", "\\xff", "\\x4", "\\101", "\\7", "\\400",
           "\\777", "\\u00e9", "\\u12", "\\U0001F600", "\\U00110000", "\\N{BULLET}", "\\N{bullet}", "\\N{nope}",
           "\\N{", "\\q", "\\", "'", '"', "''", "\\\n", "\\0", "\\a\\b\\f\\v\\r"]


def _python_reads(src: str):
    """What Python makes of ``src`` as one literal: the value, or None when
    it is not exactly one str/bytes literal token (or fails, or warns about
    an octal escape above 0o377)."""
    try:
        toks = [t for t in tokenize.generate_tokens(io.StringIO(src).readline)
                if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    if len(toks) != 1 or toks[0].type != tokenize.STRING or toks[0].string != src:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("error", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            value = ast.literal_eval(src)
        except (SyntaxError, ValueError, SyntaxWarning):
            return None
    if any(o in src for o in ("\\4", "\\5", "\\6", "\\7")) and not src.lower().startswith(("r", "br", "rb")):
        return "octal?"  # 3.11 reads \\400 and above differently for str and bytes: checked apart
    return value


@settings(max_examples=1500, deadline=None)
@given(st.sampled_from(["", "b", "r", "br", "rb", "u", "B", "R", "U", "Rb", "bR", "f", "rf"]),
       st.sampled_from(["'", '"', "'''", '"""']),
       st.lists(st.sampled_from(_PIECES), max_size=8))
def test_parser_agrees_with_python(prefix, quote, pieces):
    src = prefix + quote + "".join(pieces) + quote
    want = _python_reads(src)
    try:
        got, end = parse_literal(src)
    except LiteralError:
        got, end = None, None
    if want == "octal?":
        return
    if want is None:
        # Not one literal, or invalid: the parser must not accept the whole line as one.
        assert got is None or end != len(src) or "f" in prefix.lower(), (src, got)
    else:
        assert (got, end) == (want, len(src)), src


def test_octal_escapes_above_0o377_are_rejected():
    with pytest.raises(LiteralError, match="above"):
        parse_literal("'\\400'")
    with pytest.raises(LiteralError, match="above"):
        parse_literal("b'\\777'")
    assert parse_literal("'\\377'")[0] == "\xff" and parse_literal("b'\\377'")[0] == b"\xff"


@pytest.mark.parametrize("src, what", [
    ("__import__('os').system('x')", "expected a str or bytes literal"),
    ("f'{1+1}'", "f-string"),
    ("x'a'", "expected a str or bytes literal"),
    ("'abc", "not closed"),
    ("b'é'", "ASCII"),
    ("'\\x4g'", "2 hex digits"),
    ("'\\U00110000'", r"above U\+10FFFF"),
    ("'\\N{NOT A NAME}'", "Unicode character name"),
    ("", "the end of the line"),
])
def test_what_is_not_a_literal_is_named(src, what):
    with pytest.raises(LiteralError, match=what):
        parse_literal(src)


# ---------------------------------------------------------------- the file
def test_lines_of_the_format():
    raw = "\n".join([
        "1 '\\x00' 1",
        "2 b'\\xff' 1",
        "3 ' ' 1",
        "4 'a b' 3",
        "5 '你好' 6",
        "6 \"'\" 1",
        "7 b'\\\\' 1",
        "8 '\\u2002' 3",
        "9 ' 3 ' 3",
    ]).encode() + b"\r\n"
    tokens, ids = parse_rwkv_vocab(raw, "v.txt")
    assert ids == list(range(1, 10))
    assert tokens == [b"\x00", b"\xff", b" ", b"a b", "你好".encode(), b"'", b"\\", "\u2002".encode(), b" 3 "]


@pytest.mark.parametrize("line, what", [
    ("x 'a' 1", "line 2: expected ID LITERAL LENGTH"),
    ("", "line 2: an empty line"),
    ("3 'a' 2", "line 2: the literal 'a' has 1 bytes, the line says 2"),
    ("3 'a'", "line 2: expected a space and the length"),
    ("3 'a' 1 extra", "line 2: expected a space and the length"),
    ("3 __import__('os') 1", "line 2: bad literal"),
    ("3 '' 0", "line 2: an empty token"),
    ("3 '\\ud800' 3", "line 2: the str literal holds a lone surrogate"),
    ("1 'b' 1", "line 2: id 1 is used again \\(first on line 1\\)"),
    ("99999999999 'b' 1", "does not fit int32"),
    ("-3 'b' 1", "line 2: expected ID LITERAL LENGTH"),
])
def test_bad_lines_name_file_line_and_what(line, what):
    raw = ("1 'a' 1\n" + line + "\n").encode()
    with pytest.raises(VocabularyError, match="^v.txt: .*" + what):
        parse_rwkv_vocab(raw, "v.txt")


def test_not_utf8_names_line_and_byte():
    with pytest.raises(VocabularyError, match=r"v.txt: line 2: not UTF-8 \(byte 0xff at column 4\)"):
        parse_rwkv_vocab(b"1 'a' 1\n2 '\xff' 1\n", "v.txt")


def test_duplicate_bytes_warn_and_the_higher_id_is_matched(tmp_path):
    import segkit

    path = tmp_path / "dup.txt"
    path.write_bytes(b"1 'a' 1\n2 b'a' 1\n3 'ab' 2\n")
    with pytest.warns(DuplicateTokenWarning, match=r"line 1, id 1, and line 2, id 2"):
        tok = segkit.RWKVWorld(path)
    assert tok.encode("aab") == [2, 3]
    assert tok.decode([1, 2]) == "aa"  # both ids decode


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        read_rwkv_vocab(tmp_path / "none.txt")
    with pytest.raises(VocabularyError, match="directory"):
        read_rwkv_vocab(tmp_path)


def test_the_published_file_reads_as_the_reference_reads_it(shared_data):
    rwkv_tokenizer = pytest.importorskip("rwkv.rwkv_tokenizer", reason="rwkv is not installed")
    path = shared_data / "vocab" / "rwkv_vocab_v20230424.txt"
    ref = rwkv_tokenizer.TRIE_TOKENIZER(str(path))
    tokens, ids = read_rwkv_vocab(path)
    assert dict(zip(ids, tokens)) == ref.idx2token
