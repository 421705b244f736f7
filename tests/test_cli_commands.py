"""The commands a new user types (issue 33, "Commands people type") and the
command line's handling of hostile streams and arguments (issue 32, items 3,
16 and 17): each case as it was reported, with the expected output written
out by hand.

Most run in-process through :func:`segkit.cli.main`; closed streams, bytes
that are not UTF-8 on the real command line and ``/dev/zero`` run in a
subprocess (``python -m segkit`` from a temporary folder, the checkout on
``PYTHONPATH``).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import segkit
from segkit.cli import main

REPO = Path(__file__).resolve().parents[1]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error(err: str) -> str:
    assert "Traceback" not in err, err
    (line,) = err.strip("\n").split("\n")
    assert line.startswith("segkit: error: "), line
    return line


def segkit_process(args: list, tmp_path: Path, shell_redirect: str = "", stdin=None, limit_memory: bool = False,
                   timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m segkit ARGS`` from ``tmp_path`` (``shell_redirect``, such as
    ``>&-``, applied by /bin/sh)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if limit_memory:
        env["MALLOC_ARENA_MAX"] = "2"  # (see tests/test_api_fuzz.py: the limit measures what is kept)
        code = ("import resource, sys\nresource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))\n"
                "from segkit.cli import main\nsys.exit(main(sys.argv[1:]))")
        argv = [sys.executable, "-c", code, *args]
    else:
        argv = [sys.executable, "-m", "segkit", *args]
    if shell_redirect:
        import shlex

        argv = ["/bin/sh", "-c", " ".join(shlex.quote(os.fsdecode(a)) for a in argv) + " " + shell_redirect]
    return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL if stdin is None else stdin)


# ----------------------------------------------------------- segkit cut
def test_cut_takes_texts_as_arguments(capsys) -> None:
    code, out, err = run(capsys, "cut", "研究生命起源", "我来到北京清华大学")
    assert (code, out) == (0, "研究 / 生命 / 起源\n我 / 来到 / 北京 / 清华大学\n"), err


def test_cut_reads_a_file_given_by_name_or_with_input(capsys, tmp_path: Path) -> None:
    f = tmp_path / "in.txt"
    f.write_text("研究生命起源\n", encoding="utf-8")
    for argv in (["cut", str(f)], ["cut", "-i", str(f)], ["cut", "--input", str(f)]):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (0, "研究 / 生命 / 起源\n"), (argv, err)


def test_cut_a_missing_path_is_a_missing_file_and_a_slash_in_text_is_text(capsys, tmp_path: Path) -> None:
    code, out, err = run(capsys, "cut", str(tmp_path / "missing.txt"))
    assert code == 2 and out == ""
    assert one_error(err) == f"segkit: error: input file not found: {tmp_path / 'missing.txt'}"
    code, out, err = run(capsys, "cut", "北京/上海")  # no folder 北京: a text
    assert (code, out) == (0, "北京 / / / 上海\n"), err


def test_cut_texts_and_files_together_is_an_error(capsys, tmp_path: Path) -> None:
    f = tmp_path / "in.txt"
    f.write_text("北京\n", encoding="utf-8")
    code, _, err = run(capsys, "cut", "-i", str(f), "研究生命起源")
    assert code == 2 and "not both" in one_error(err)


def test_cut_jieba_dict_and_user_dict(capsys, tmp_path: Path) -> None:
    d = tmp_path / "dict.txt"
    d.write_text("研究生 5 n\n命 3 n\n起源 4 n\n", encoding="utf-8")
    code, out, err = run(capsys, "cut", "-D", str(d), "研究生命起源")
    assert (code, out) == (0, "研究生 / 命 / 起源\n"), err
    u = tmp_path / "user.txt"
    u.write_text("生命起源\n", encoding="utf-8")
    for flag in ("-u", "--user-dict", "--userdict"):
        code, out, err = run(capsys, "cut", flag, str(u), "研究生命起源")
        assert (code, out) == (0, "研究 / 生命起源\n"), (flag, err)
    code, out, err = run(capsys, "cut", "-D", str(d), "-u", str(u), "研究生命起源")  # -u adds to -D's words
    assert (code, out) == (0, "研究生 / 命 / 起源\n"), err  # forward and backward agree without 研究/生命
    code, _, err = run(capsys, "cut", "-D", str(tmp_path / "nope.txt"), "x")
    assert code == 2 and "--dict" in one_error(err) and "nope.txt" in err


def test_cut_quiet_silences_warnings(capsys, tmp_path: Path) -> None:
    u = tmp_path / "user.txt"
    u.write_text("Edu Trust认证 2000\n", encoding="utf-8")  # a word with a space: jieba keeps it, with a warning
    code, out, err = run(capsys, "cut", "-u", str(u), "研究生命起源")
    assert code == 0 and "warning" in err
    code, out, err = run(capsys, "cut", "-q", "-u", str(u), "研究生命起源")
    assert (code, out, err) == (0, "研究 / 生命 / 起源\n", "")


def test_cut_no_hmm_is_accepted_and_changes_nothing(capsys) -> None:
    code, out, err = run(capsys, "cut", "-n", "研究生命起源")
    assert (code, out) == (0, "研究 / 生命 / 起源\n"), err


@pytest.mark.parametrize("argv", [["-a"], ["--cut-all"], ["-a", "--mode", "backward"]])
def test_cut_all_is_jiebas_full_mode(capsys, argv) -> None:
    code, out, err = run(capsys, "cut", "-q", *argv, "我来到北京清华大学，你好", "研究生命起源")
    assert (code, err) == (0, "")
    # python -m jieba -a prints these words (and an empty one on each side of a space, which segkit leaves out)
    assert out == "我 / 来到 / 北京 / 清华 / 清华大学 / 华大 / 大学 / ， / 你好\n研究 / 研究生 / 生命 / 起源\n"


@pytest.mark.parametrize("argv,needle", [(["-p"], "-p/--pos"), (["-p", "/"], "-p/--pos")])
def test_cut_unsupported_jieba_options_say_so(capsys, argv, needle) -> None:
    code, out, err = run(capsys, "cut", *argv, "研究生命起源")
    assert code == 2 and out == ""
    assert one_error(err).startswith(f"segkit: error: not supported: {needle} (")


# ------------------------------------------------------ --model NAME|PATH
def test_a_bundled_name_wins_over_a_file_of_that_name(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("cl100k_base").write_bytes(b"not a model")
    code, out, err = run(capsys, "tokenize", "--model", "cl100k_base", "-f", "ids", "hello world")
    assert (code, out) == (0, "15339 1917\n"), err
    assert "./cl100k_base" in err  # the note on how to get the file
    code, out, err = run(capsys, "tokenize", "--model", "./cl100k_base", "hello world")
    assert code == 2 and out == "" and "cl100k_base" in one_error(err)


def test_model_takes_bert_names_and_pretrained_stays_an_alias(capsys) -> None:
    for option in ("--model", "-m", "--pretrained"):
        code, out, err = run(capsys, "tokenize", option, "bert-base-multilingual-cased", "Hello WORLD")
        assert (code, out) == (0, "Hello WORLD\n"), (option, err)
    code, out, err = run(capsys, "tokenize", "--pretrained", "gpt2", "Hello world")
    assert (code, out) == (0, "Hello Ġworld\n"), err


def test_an_unknown_model_name_lists_the_known_ones(capsys) -> None:
    code, _, err = run(capsys, "tokenize", "--model", "cl100k", "x")
    line = one_error(err)
    assert code == 2 and "cl100k" in line
    for name in ("bert-base-uncased", "bert-base-chinese", "cl100k_base", "o200k_base", "gpt2", "rwkv-world"):
        assert name in line, name


def test_tokenize_help_says_what_it_does_for_every_model(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["tokenize", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "WordPiece-tokenize" not in text
    for needle in ("WordPiece", "byte-level BPE", "RWKV World", "--allowed-special"):
        assert needle in text, needle


# ------------------------------------------------------ --allowed-special
def test_allowed_special(capsys) -> None:
    enc = segkit.BPE.from_pretrained("cl100k_base")
    ordinary = " ".join(map(str, enc.encode("a<|endoftext|>b", disallowed_special=())))
    code, out, err = run(capsys, "tokenize", "--model", "cl100k_base", "-f", "ids", "a<|endoftext|>b")
    assert (code, out) == (0, ordinary + "\n"), err  # default: ordinary text, as encode_ordinary
    for value in ("all", "<|endoftext|>", "<|fim_prefix|>,<|endoftext|>"):
        code, out, err = run(capsys, "tokenize", "--model", "cl100k_base", "-f", "ids", "--allowed-special", value,
                             "a<|endoftext|>b")
        assert (code, out) == (0, "64 100257 65\n"), (value, err)  # a, <|endoftext|>, b
    code, out, err = run(capsys, "tokenize", "--model", "cl100k_base", "--allowed-special", "all", "a<|endoftext|>b")
    assert (code, out) == (0, "a <|endoftext|> b\n"), err


def test_allowed_special_matches_tiktoken(capsys, shared_data) -> None:
    import base64
    import gzip

    tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is not installed")
    from segkit.presets.bpe import pretrained

    raw = gzip.decompress((shared_data / "vocab" / "cl100k_base.tiktoken.gz").read_bytes())
    ranks = {base64.b64decode(t): int(r) for t, r in (line.split() for line in raw.splitlines() if line)}
    _, _, pattern, specials = pretrained.PRETRAINED["cl100k_base"]
    ref = tiktoken.Encoding("cl100k_base", pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)
    text = "x <|endoftext|> y<|fim_middle|>z<|endofprompt|>"
    code, out, _ = run(capsys, "tokenize", "--model", "cl100k_base", "-f", "ids", "--allowed-special", "all", text)
    assert out.split() == [str(i) for i in ref.encode(text, allowed_special="all")]
    code, out, _ = run(capsys, "tokenize", "--model", "cl100k_base", "-f", "ids", "--allowed-special",
                       "<|fim_middle|>", text)
    assert out.split() == [str(i) for i in ref.encode(text, allowed_special={"<|fim_middle|>"},
                                                        disallowed_special=())]


def test_allowed_special_errors(capsys) -> None:
    code, _, err = run(capsys, "tokenize", "--model", "cl100k_base", "--allowed-special", "<|nope|>", "x")
    line = one_error(err)
    assert code == 2 and "'<|nope|>'" in line and "<|endoftext|>" in line
    code, _, err = run(capsys, "tokenize", "--allowed-special", "all", "x")  # WordPiece
    assert code == 2 and "--allowed-special is for BPE models" in one_error(err)


# ---------------------------------------------- checked before the model
def test_arguments_are_checked_before_the_model_loads(capsys, tmp_path: Path, monkeypatch) -> None:
    from segkit.cli import models

    def no_load(choice):
        raise AssertionError(f"the model {choice} was loaded before the arguments were checked")

    monkeypatch.setattr(models, "load", no_load)
    cases = [
        (["tokenize", "--input", str(tmp_path / "missing.txt")], "input file not found"),
        (["tokenize", "--model", "cl100k_base", "-i", str(tmp_path)], "is a directory"),
        (["tokenize", "--batch-size", "0", "x"], "--batch-size"),
        (["encode", "--pair-input", str(tmp_path / "nope.txt"), "x"], "nope.txt"),
        (["tokenize", "--model", "rwkv-world", "ok", "caf\udce9"], "text argument 2 is not valid UTF-8"),
    ]
    for argv, needle in cases:
        code, _, err = run(capsys, *argv)
        assert code == 2 and needle in one_error(err), (argv, err)


def test_a_path_with_a_newline_is_shown_on_one_line(capsys, tmp_path: Path) -> None:
    path = tmp_path / "a\nb.txt"
    code, _, err = run(capsys, "tokenize", "-i", str(path))
    line = one_error(err)
    assert code == 2 and "a\\nb.txt'" in line and "not found" in line
    code, _, err = run(capsys, "cut", "-u", str(path), "x")
    assert code == 2 and "a\\nb.txt'" in one_error(err)


def test_a_text_argument_that_is_not_utf8(tmp_path: Path) -> None:
    # bytes on the real command line: Python gets them as lone surrogates
    r = segkit_process(["tokenize", "--model", "rwkv-world", b"caf\xe9"], tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stderr.decode() == ("segkit: error: text argument 1 is not valid UTF-8 (byte 0xe9 at byte 4): "
                                 "'caf\\xe9'\n")
    r = segkit_process(["cut", b"\xff\xfe"], tmp_path)
    assert r.returncode == 2 and b"text argument 1 is not valid UTF-8 (byte 0xff at byte 1)" in r.stderr


# ----------------------------------------------- closed and endless streams
@pytest.mark.parametrize("argv", [["tokenize", "hello"], ["tokenize", "--model", "gpt2", "hello"], ["cut", "北京"]])
def test_closed_stdout(argv, tmp_path: Path) -> None:
    r = segkit_process(argv, tmp_path, ">&-")
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err, err
    assert err.startswith("segkit: error: standard output is closed"), err


@pytest.mark.parametrize("argv", [["tokenize"], ["tokenize", "--model", "rwkv-world"], ["cut"]])
def test_closed_stdin(argv, tmp_path: Path) -> None:
    r = segkit_process(argv, tmp_path, "<&-")
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err, err
    assert err.startswith("segkit: error: standard input is closed"), err


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")
@pytest.mark.parametrize("argv", [["tokenize", "--input", "/dev/zero"], ["cut", "-i", "/dev/zero"]])
def test_dev_zero_is_a_clear_error_in_bounded_memory(argv, tmp_path: Path) -> None:
    r = segkit_process(argv, tmp_path, limit_memory=True, timeout=120)
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err, err
    assert err == "segkit: error: /dev/zero: line 1 is longer than 256 MiB (the longest line segkit reads; is it " \
                  "a text file?)\n", err


# ------------------------------------------------------------- training
@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("low lower newest widest\n" * 20, encoding="utf-8")
    return path


@pytest.mark.parametrize("trainer", [["bpe", "--vocab-size", "260"], ["wordpiece"]])
def test_train_output_that_is_a_file(trainer, corpus, tmp_path: Path, capsys) -> None:
    target = tmp_path / "existing_file"
    target.write_text("keep me", encoding="utf-8")
    code, _, err = run(capsys, "train", *trainer, "-q", str(corpus), "-o", str(target))
    assert code == 2
    assert one_error(err) == (f"segkit: error: -o {target}: exists and is not a folder; the output is a folder "
                              "of files (give a new or existing folder)")
    assert target.read_text(encoding="utf-8") == "keep me"
    code, _, err = run(capsys, "train", *trainer, "-q", str(corpus), "-o", str(target / "sub"))
    assert code == 2 and one_error(err) == f"segkit: error: -o {target / 'sub'}: {target} is a file, not a folder"


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc on this system")
def test_train_output_where_no_folder_can_be_made(corpus, capsys) -> None:
    code, _, err = run(capsys, "train", "bpe", "--vocab-size", "260", "-q", str(corpus), "-o", "/proc/nope")
    line = one_error(err)
    assert code == 2 and line.startswith("segkit: error: -o /proc/nope: cannot write there (")
    assert ".partial" not in line and "Errno" not in line and "tokens" not in err  # and it did not train


def test_save_tokenizer_json_honours_the_umask(tmp_path: Path) -> None:
    wp = segkit.WordPiece(["[UNK]", "a", "##b"])
    old = os.umask(0o022)
    try:
        wp.save_tokenizer_json(tmp_path / "a.json")
        os.umask(0o027)
        wp.save_tokenizer_json(tmp_path / "b.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "a.json").st_mode) == 0o644
    assert stat.S_IMODE(os.stat(tmp_path / "b.json").st_mode) == 0o640


def test_wordpiece_counting_bar_has_a_total(corpus, capsys) -> None:
    from segkit.training.wordpiece import train_wordpiece

    train_wordpiece([corpus], 40, show_progress=True)
    err = capsys.readouterr().err
    assert "count words: 100%" in err, err
    train_wordpiece(["low lower", "newest widest"], 40, show_progress=True)
    assert "2/2" in capsys.readouterr().err


# --------------------------------------------------- BPE output, formatted
def _gpt2_spelling() -> dict[int, str]:
    """GPT-2's bytes_to_unicode table, written out independently."""
    keep = [*range(33, 127), *range(161, 173), *range(174, 256)]
    table = {b: chr(b) for b in keep}
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return table


@pytest.mark.parametrize("fmt", ["tokens", "ids"])
def test_bpe_output_lines_match_a_per_token_join(fmt, capsys, tmp_path: Path, monkeypatch) -> None:
    texts = ["hello world", "", "", "héllo wörld 東京 🎉 \x00 a  b", "", "x" * 50 + " ok", ""]
    f = tmp_path / "in.txt"
    f.write_text("\n".join(texts) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "tokenize", "--model", "o200k_base", "-f", fmt, "-i", str(f), "--batch-size", "3")
    assert code == 0, err
    enc = segkit.BPE.from_pretrained("o200k_base")
    spell = _gpt2_spelling()
    expected = []
    for t in texts:
        ids = enc.encode_ordinary(t)
        if fmt == "ids":
            expected.append(" ".join(str(i) for i in ids))
        else:
            expected.append(" ".join("".join(spell[b] for b in enc.decode_single_token_bytes(i)) for i in ids))
    assert out == "".join(line + "\n" for line in expected)


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
@pytest.mark.parametrize("quiet", [False, True])
def test_cut_stdin_notice_is_right_and_quiet_drops_it(quiet, tmp_path: Path) -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "segkit", "cut", *(["-q"] if quiet else [])], stdin=follower,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
                                env={**os.environ, "PYTHONPATH": str(REPO)})
        os.write(leader, "研究生命起源\n\x04".encode("utf-8"))  # a line, then Ctrl-D
        out, err = proc.communicate(timeout=300)
    finally:
        os.close(leader)
        os.close(follower)
    assert proc.returncode == 0 and out.decode() == "研究 / 生命 / 起源\n", err
    note = b"segkit: reading texts from standard input, one per line (end with Ctrl-D; or give texts as arguments " \
           b"or files with --input FILE, or --help)\n"
    assert err == (b"" if quiet else note)


@pytest.mark.parametrize("argv", [["tokenize", "--vocab", "{p}", "x"], ["tokenize", "--tokenizer-json", "{p}", "x"],
                                  ["train", "bpe", "--vocab-size", "300", "{p}", "-o", "{o}"],
                                  ["cut", "-D", "{p}", "x"]])
def test_every_error_about_a_path_with_a_newline_is_one_line(argv, capsys, tmp_path: Path) -> None:
    bad = tmp_path / "new\nline.txt"  # (no such file)
    code, _, err = run(capsys, *[a.format(p=bad, o=tmp_path / "o") for a in argv])
    line = one_error(err)
    assert code == 2 and "new\\nline.txt" in line, line


@pytest.mark.parametrize("fmt", ["tokens", "ids"])
def test_rwkv_output_lines_match_a_per_token_join(fmt, capsys, tmp_path: Path) -> None:
    texts = ["hello world", "", "héllo 東京 🎉", "", ""]
    f = tmp_path / "in.txt"
    f.write_text("\n".join(texts) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "tokenize", "--model", "rwkv-world", "-f", fmt, "-i", str(f), "--batch-size", "2")
    assert code == 0, err
    rwkv = segkit.RWKVWorld()
    expected = []
    for t in texts:
        ids = rwkv.encode(t)
        if fmt == "ids":
            expected.append(" ".join(map(str, ids)))
        else:  # each token's bytes as UTF-8, \x escapes where it cuts a character
            expected.append(" ".join(rwkv.decode_bytes([i]).decode("utf-8", "backslashreplace") for i in ids))
    assert out == "".join(line + "\n" for line in expected)


# ---------------------------------------- --model PATH: the one loader
def _trained_tokenizer_json(tmp_path: Path) -> Path:
    from segkit.training import train_bpe

    path = tmp_path / "bpe" / "tokenizer.json"
    path.parent.mkdir()
    train_bpe(["hello world " * 20, "low lower lowest"], 300, ["<|end|>"], show_progress=False).to_tokenizer_json(path)
    return path


@pytest.mark.parametrize("how", ["--model", "--tokenizer-json", "folder"])
def test_tokenize_reads_a_bpe_tokenizer_json(capsys, tmp_path: Path, how: str) -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers (HuggingFace) is not installed")
    path = _trained_tokenizer_json(tmp_path)
    expected = tokenizers.Tokenizer.from_file(str(path)).encode("hello lowest world").ids
    option, value = ("--model", str(path.parent)) if how == "folder" else (how, str(path))
    code, out, err = run(capsys, "tokenize", option, value, "-f", "ids", "hello lowest world")
    assert (code, err) == (0, "")
    assert out == " ".join(map(str, expected)) + "\n"


def test_tokenize_reads_a_tiktoken_file_by_content(capsys, tmp_path: Path) -> None:
    import shutil

    from segkit.models.bundled import vocabularies_dir

    copy = tmp_path / "no-telling-name.bin"  # the name says nothing: the content does
    shutil.copy(vocabularies_dir() / "cl100k_base.tiktoken.gz", copy)
    code, out, err = run(capsys, "tokenize", "--model", str(copy), "-f", "ids", "hello world")
    assert (code, out, err) == (0, "15339 1917\n", "")


def test_tokenize_reads_a_sentencepiece_model(capsys, tmp_path: Path) -> None:
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece is not installed (it trains the test model)")
    pytest.importorskip("google.protobuf", reason="protobuf is not installed (sentencepiece's trainer needs it)")
    import spm_models

    path = spm_models.train("nfkc", tmp_path)
    ref = spm.SentencePieceProcessor(model_file=str(path))
    text = "Hello world, 世界"
    code, out, err = run(capsys, "tokenize", "--model", str(path), "-f", "ids", text)
    assert (code, err) == (0, "")
    assert out == " ".join(map(str, ref.encode(text))) + "\n"
    code, out, err = run(capsys, "tokenize", "--model", str(path), text)
    assert (code, err) == (0, "")
    assert out == " ".join(ref.id_to_piece(i) for i in ref.encode(text)) + "\n"  # (unk: the piece, as tokenize())
    code, out, err = run(capsys, "encode", "--model", str(path), text)
    assert code == 2 and "use 'segkit tokenize'" in one_error(err)


def test_tokenize_names_what_a_file_is_not(capsys, tmp_path: Path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01\x02 not a tokenizer")
    code, out, err = run(capsys, "tokenize", "--model", str(junk), "x")
    assert code == 2 and out == ""
    assert "junk.bin" in one_error(err) and "not a tokenizer file" in err
