"""GPT-2's "slow tokenizer" files, ``vocab.json`` + ``merges.txt``, read by
:meth:`segkit.BPE.from_vocab_merges` and :func:`segkit.from_pretrained`,
against HuggingFace: ``tokenizers.models.BPE.from_file`` with a ByteLevel
pre-tokenizer and decoder, and ``transformers.GPT2TokenizerFast`` (which
adds ``<|endoftext|>``, or the folder's special tokens).

transformers 5 builds an empty tokenizer from
``GPT2TokenizerFast(vocab_file=..., merges_file=...)`` (the keyword names
of version 4); ``GPT2TokenizerFast.from_pretrained(folder)`` and
``GPT2TokenizerFast(vocab=..., merges=...)`` read the files, so the tests
use those.

The GPT-NeoX pair is written from the shared ``gpt-neox-20b.tokenizer.json``
(its ``model.vocab`` and ``model.merges``), as GPT-NeoX ships it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit.presets.bpe.files import BPEFileError

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "tests" / "data" / "multilingual-sample.jsonl"
EOT = "<|endoftext|>"


def _texts() -> list[str]:
    with SAMPLE.open(encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    return texts + ["hello<|endoftext|>world", " <|endoftext|> x", EOT + EOT, "a <|padding|> b", "", "  \n\t x",
                    "<|endoftext", "it's 1234567 ünïcödé 😀 漢字"]


def _hf_bpe(vocab: Path, merges: Path):
    tokenizers = pytest.importorskip("tokenizers", reason="the peer HuggingFace tokenizers is not installed")
    from tokenizers import decoders, models, pre_tokenizers

    tok = tokenizers.Tokenizer(models.BPE.from_file(str(vocab), str(merges)))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def _gpt2_fast(folder: Path):
    transformers = pytest.importorskip("transformers", reason="the peer transformers is not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.GPT2TokenizerFast.from_pretrained(str(folder))


@pytest.fixture(scope="module")
def neox_pair(tmp_path_factory, shared_data) -> Path:
    doc = json.loads((shared_data / "vocab" / "gpt-neox-20b.tokenizer.json").read_text(encoding="utf-8"))
    out = tmp_path_factory.mktemp("neox")
    (out / "vocab.json").write_text(json.dumps(doc["model"]["vocab"], ensure_ascii=False), encoding="utf-8")
    with open(out / "merges.txt", "w", encoding="utf-8", newline="\n") as fh:
        fh.write("#version: 0.2\n")
        fh.writelines(m + "\n" for m in doc["model"]["merges"])
    return out


@pytest.fixture(scope="module")
def neox(neox_pair) -> segkit.BPE:
    return segkit.BPE.from_vocab_merges(neox_pair / "vocab.json", neox_pair / "merges.txt")


def test_neox_pair_ids_and_decoding_equal_gpt2_tokenizer_fast(neox, neox_pair):
    fast = _gpt2_fast(neox_pair)
    assert len(fast) > 50000  # (it read the files)
    for text in _texts():
        ids = fast(text)["input_ids"]
        assert neox.encode(text) == ids, text
        assert neox.decode(ids) == fast.decode(ids), text
    assert neox.encode("a<|endoftext|>b") == [66, 0, 67]  # <|endoftext|> is id 0 in vocab.json


def test_neox_pair_ids_equal_tokenizers_bpe_from_file(neox, neox_pair):
    hf = _hf_bpe(neox_pair / "vocab.json", neox_pair / "merges.txt")
    for text in _texts():
        if EOT in text:  # (BPE.from_file alone adds no special token)
            continue
        assert neox.encode(text) == hf.encode(text).ids, text


_ALPHABET = st.sampled_from(["a", "b", " ", "  ", "\n", "'s", "1", "é", "漢", "😀", "\u0300", EOT, "<|", "|>",
                             "endoftext", "Ġ", "\r\n", "\t"])


@pytest.fixture(scope="module")
def neox_fast(neox_pair):
    return _gpt2_fast(neox_pair)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.text(max_size=40), st.lists(_ALPHABET, max_size=16).map("".join)))
def test_neox_pair_on_any_text_equals_gpt2_tokenizer_fast(neox, neox_fast, text):
    ids = neox_fast(text)["input_ids"]
    assert neox.encode(text) == ids
    assert neox.decode(ids) == neox_fast.decode(ids)


def test_from_pretrained_reads_the_folder_the_vocab_json_and_the_merges_txt(neox_pair, neox):
    text = "Hello world<|endoftext|> it's 2026"
    want = neox.encode(text)
    for where in (neox_pair, neox_pair / "vocab.json", neox_pair / "merges.txt", str(neox_pair / "vocab.json")):
        assert segkit.from_pretrained(where).encode(text) == want, where


# ------------------------------------------------------- a small trained pair
CORPUS = ["the cat sat on the mat", "the dog ate the hat", "ünïcödé things and 漢字 and more things"] * 5


@pytest.fixture
def trained(tmp_path) -> Path:
    segkit.train_bpe(CORPUS, 300, [EOT]).save(tmp_path)
    return tmp_path


def test_a_trained_pair_reads_back_as_it_encodes(trained):
    r = segkit.train_bpe(CORPUS, 300, [EOT])
    enc = r.encoder()
    bpe = segkit.from_pretrained(trained)
    for text in CORPUS + ["the cathat", "x<|endoftext|>y", ""]:
        assert bpe.encode(text) == enc.encode(text, allowed_special="all"), text
        assert bpe.decode(bpe.encode(text)) == text


def test_a_trained_pair_equals_hf(trained):
    hf = _hf_bpe(trained / "vocab.json", trained / "merges.txt")
    fast = _gpt2_fast(trained)
    bpe = segkit.BPE.from_vocab_merges(trained / "vocab.json", trained / "merges.txt")
    for text in CORPUS + ["the cathat", "x<|endoftext|>y", "  thé   cat\n\n"]:
        assert bpe.encode(text) == fast(text)["input_ids"], text
        if EOT not in text:
            assert bpe.encode(text) == hf.encode(text).ids, text


def _folder_cases(n: int) -> dict[str, dict]:
    """Config files of a GPT-2 folder whose vocab.json has ``n`` tokens."""
    return {
        "decoder": {"tokenizer_config.json": {
            "eos_token": "</s>", "bos_token": None, "unk_token": {"content": "<unk>", "__type": "AddedToken"},
            "added_tokens_decoder": {str(n + 1): {"content": "<unk>", "special": True},
                                     str(n): {"content": "</s>", "special": True},
                                     str(n + 2): {"content": "xyz", "special": False}}}},
        "map": {"special_tokens_map.json": {"eos_token": {"content": "</s>", "special": True}, "pad_token": "<pad>",
                                            "additional_special_tokens": ["<a>", "<b>"]}},
        "map wins": {"tokenizer_config.json": {"eos_token": "</s>", "mask_token": "<mask>"},
                     "special_tokens_map.json": {"eos_token": "<e>"}},
        "added_tokens.json": {"added_tokens.json": {"yy": n + 1, "xx": n}},
        "map and added": {"special_tokens_map.json": {"eos_token": "</s>", "additional_special_tokens": ["<sep>"]},
                          "added_tokens.json": {"</s>": n, "<sep>": n + 1}},
        "chat": {"tokenizer_config.json": {"pad_token": EOT, "additional_special_tokens": ["<|im_start|>", "<|im_end|>"]}},
        "lstrip": {"tokenizer_config.json": {"added_tokens_decoder": {str(n): {
            "content": "<m>", "special": True, "lstrip": True, "rstrip": False, "normalized": False,
            "single_word": False}}}},
    }


_FOLDER_TEXTS = ["the cat</s>sat", "<unk>the<|endoftext|>", "a xyz b", "the </s> mat", "<pad><a><b><e><mask>",
                 "the xx yy xxyy", "<|im_start|>hi<|im_end|>", "the <m> cat  <m>x", "</s><e>", "a<sep>b</s>c"]


@pytest.mark.parametrize("case", list(_folder_cases(0)))
def test_the_folders_special_and_added_tokens_are_gpt2_tokenizer_fasts(trained, case):
    n = len(json.loads((trained / "vocab.json").read_text(encoding="utf-8")))
    for name, content in _folder_cases(n)[case].items():
        (trained / name).write_text(json.dumps(content), encoding="utf-8")
    fast = _gpt2_fast(trained)
    bpe = segkit.from_pretrained(trained)
    for text in _FOLDER_TEXTS:
        ids = fast(text)["input_ids"]
        assert bpe.encode(text) == ids, text
        assert bpe.decode(ids) == fast.decode(ids), text


def test_a_bad_config_file_is_named(trained):
    (trained / "special_tokens_map.json").write_text('{"eos_token": 5}')
    with pytest.raises(BPEFileError, match="special_tokens_map.json: eos_token: expected a token"):
        segkit.from_pretrained(trained)
    (trained / "special_tokens_map.json").write_text('{"eos_token": ')
    with pytest.raises(BPEFileError, match="special_tokens_map.json: not valid JSON"):
        segkit.from_pretrained(trained)


def test_special_tokens_given_replace_the_default(trained):
    bpe = segkit.BPE.from_vocab_merges(trained / "vocab.json", trained / "merges.txt", special_tokens=[])
    assert 256 not in bpe.encode("a<|endoftext|>b")
    bpe = segkit.BPE.from_vocab_merges(trained / "vocab.json", trained / "merges.txt")
    assert bpe.encode("a<|endoftext|>b") == [97, 256, 98]


# ------------------------------------------------------------------- errors
def _pair(tmp_path, vocab: str | bytes, merges: str | bytes) -> tuple[Path, Path]:
    v, m = tmp_path / "vocab.json", tmp_path / "merges.txt"
    v.write_bytes(vocab if isinstance(vocab, bytes) else vocab.encode("utf-8"))
    m.write_bytes(merges if isinstance(merges, bytes) else merges.encode("utf-8"))
    return v, m


def _byte_vocab(extra=()) -> dict[str, int]:
    from segkit.training.bpe import bytes_to_unicode

    vocab = {ch: b for b, ch in bytes_to_unicode().items()}
    for tok in extra:
        vocab[tok] = len(vocab)
    return vocab


@pytest.mark.parametrize("vocab, found", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "JSON object of token -> id; found list"),
    ('{"a": "0"}', "key 'a': expected an id"),
    ('{"a": 1.0}', "key 'a': expected an id"),
    ('{"a": -1}', "key 'a': expected an id"),
    ('{"a": true}', "key 'a': expected an id"),
    ('{"a": 99999999999999999999999999}', "key 'a': expected an id"),
    (b'{"a": 0, "\xff": 1}', "not UTF-8"),
    ('{"\\ud800": 0}', "lone surrogate"),
])
def test_a_bad_vocab_json_names_the_file_and_key(tmp_path, vocab, found):
    # (HF's BPE.from_file refuses some of these; others it reads silently
    # wrong: it drops a token whose id is a string or a boolean, and wraps
    # an id past 2**32 around)
    v, m = _pair(tmp_path, vocab, "#version: 0.2\n")
    with pytest.raises(BPEFileError, match=found) as e:
        segkit.BPE.from_vocab_merges(v, m)
    assert str(v) in str(e.value)


def _hf_refuses_too(v, m):
    tokenizers = pytest.importorskip("tokenizers", reason="the peer HuggingFace tokenizers is not installed")
    try:
        tokenizers.models.BPE.from_file(str(v), str(m))
    except Exception:
        return
    # HF loads some files segkit refuses (a vocabulary without the single
    # bytes, a merge of tokens outside the byte alphabet); none of these.
    pytest.fail(f"HF loads {v} / {m}, which segkit refuses")


@pytest.mark.parametrize("merges, line, found", [
    ("#version: 0.2\na b\nq z\n", 3, "token 'z' is not in the vocabulary"),
    ("#version: 0.2\na c\n", 2, "makes 'ac', which is not in the vocabulary"),
    ("a b\n\n", 2, "a blank line"),
    ("a  b\n", 1, "two tokens separated by one space"),
    ("a b c\n", 1, "two tokens separated by one space"),
    ("a\tb\n", 1, "two tokens separated by one space"),
    ("#not a version\na b\n", 1, "two tokens"),
])
def test_a_bad_merges_txt_names_the_file_and_line(tmp_path, merges, line, found):
    vocab = _byte_vocab(["ab"])
    del vocab["z"]
    v, m = _pair(tmp_path, json.dumps(vocab), merges)
    with pytest.raises(BPEFileError, match=found) as e:
        segkit.BPE.from_vocab_merges(v, m)
    assert f"{m}: line {line}:" in str(e.value)
    _hf_refuses_too(v, m)


def test_version_lines_crlf_and_no_final_newline_are_read_as_hf_reads_them(tmp_path):
    vocab = _byte_vocab(["ab", "abc", "Ġa"])
    for merges in ("#version: 0.2\na b\nab c\n", "a b\r\nab c", "a b\n#version: 9\nab c\n", "#version\na b\nab c\nĠ a"):
        v, m = _pair(tmp_path, json.dumps(vocab, ensure_ascii=False), merges)
        bpe = segkit.BPE.from_vocab_merges(v, m)
        hf = _hf_bpe(v, m)
        for text in ("abc ab abcab", " a"):
            assert bpe.encode(text) == hf.encode(text).ids, (merges, text)


def test_a_fifo_is_refused_not_opened(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    v, m = _pair(tmp_path, json.dumps(_byte_vocab()), "#version: 0.2\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(BPEFileError, match="fifo") as e:
        segkit.BPE.from_vocab_merges(v, fifo)
    assert str(fifo) in str(e.value)
    with pytest.raises(BPEFileError, match="fifo"):
        segkit.BPE.from_vocab_merges(fifo, m)


def test_a_vocab_json_without_merges_txt_says_so(tmp_path):
    v = tmp_path / "vocab.json"
    v.write_text(json.dumps(_byte_vocab()))
    with pytest.raises(ValueError, match="merges.txt") as e:
        segkit.from_pretrained(v)
    assert str(v) in str(e.value)


# --------------------------------------------------------------------- fuzz
_SCRIPT = r"""
import json, random, sys, warnings
sys.path.insert(0, sys.argv[1])
from hypothesis import given, settings, strategies as st, HealthCheck
import segkit
from segkit.presets.bpe.files import BPEFileError
from segkit.training.bpe import bytes_to_unicode
try:
    import tokenizers
    from tokenizers import models, pre_tokenizers
except ImportError:
    tokenizers = None

d = sys.argv[2]
vocab = {ch: b for b, ch in bytes_to_unicode().items()}
merges = []
for a, b in [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("a", "b"), ("ab", "c"), ("Ġ", "a"), ("<|", "end")]:
    vocab.setdefault(a, len(vocab)); vocab.setdefault(b, len(vocab)); vocab[a + b] = len(vocab)
    merges.append(a + " " + b)
vocab["<|endoftext|>"] = len(vocab)
good_v = json.dumps(vocab, ensure_ascii=False).encode()
good_m = ("#version: 0.2\n" + "\n".join(merges) + "\n").encode()
V, M = d + "/vocab.json", d + "/merges.txt"
TEXTS = ["the abc", "abcab the<|endoftext|> a", " \u00e9\u00fc t"]

def mutate(data, edits):
    data = bytearray(data)
    for kind, at, byte in edits:
        at = at % (len(data) + 1)
        if kind == 0 and at < len(data):
            data[at] = byte
        elif kind == 1:
            data[at:at] = bytes([byte])
        elif at < len(data):
            del data[at]
    return bytes(data)

edits = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10**6),
                           st.sampled_from(b' \n\r#"{}:,0123456789abcehtz\\\x00\xc4\xa0\xff')), min_size=1, max_size=4)

def shuffle_lines(data, picks):
    # Line edits of merges.txt: drop, repeat or move lines (most still load).
    lines = data.split(b"\n")[:-1]
    for kind, at, to in picks:
        at, to = at % len(lines), to % len(lines)
        if kind == 0 and len(lines) > 1:
            del lines[at]
        elif kind == 1:
            lines.insert(to, lines[at])
        else:
            lines.insert(to, lines.pop(at))
    return b"\n".join(lines) + b"\n"

picks = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 99), st.integers(0, 99)), min_size=1, max_size=5)

@settings(max_examples=int(sys.argv[3]), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(edits, edits, picks, st.integers(0, 3))
def check(ev, em, pm, which):
    v = mutate(good_v, ev) if which in (0, 2) else good_v
    m = mutate(good_m, em) if which in (1, 2) else shuffle_lines(good_m, pm) if which == 3 else good_m
    open(V, "wb").write(v); open(M, "wb").write(m)
    try:
        bpe = segkit.BPE.from_vocab_merges(V, M)
    except BPEFileError as e:
        assert V in str(e) or M in str(e), e
        return
    ids = [bpe.encode(t) for t in TEXTS]
    for t, i in zip(TEXTS, ids):
        assert bpe.decode_bytes(i) == t.encode(), (t, i)
    if tokenizers is not None:  # what segkit reads HF reads, and encodes alike
        hf = tokenizers.Tokenizer(models.BPE.from_file(V, M))
        hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        for t in TEXTS:
            if "<|endoftext|>" not in t:
                assert bpe.encode(t) == hf.encode(t).ids, (v, m, t)

check()
print("ok")
"""


def test_mutated_files_load_or_raise_bpe_file_error(tmp_path):
    """Random byte edits of a small vocab.json / merges.txt: each pair loads
    (and encodes as HF does, and decodes back) or raises a BPEFileError
    naming a file; never another exception or a crash (the loads run in a
    subprocess, so a crash in compiled code fails the test)."""
    run = subprocess.run([sys.executable, "-c", _SCRIPT, str(REPO), str(tmp_path), "400"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), (
        f"exit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-4000:]}"
    )


def test_two_tokens_with_one_id_name_the_key(tmp_path):
    vocab = _byte_vocab()
    vocab["ab"] = vocab["a"]
    v, m = _pair(tmp_path, json.dumps(vocab), "#version: 0.2\n")
    with pytest.raises(BPEFileError, match=r"vocab.json: key '(a|ab)': id 97 is also the id of another token$"):
        segkit.BPE.from_vocab_merges(v, m)


@pytest.mark.parametrize("merges, want", [("b c\na b\nb c\n", ["ab", "c"]), ("a b\nb c\na b\n", ["a", "bc"])])
def test_a_merge_given_twice_has_its_last_rank_as_in_hf(tmp_path, merges, want):
    vocab = _byte_vocab(["ab", "bc"])
    v, m = _pair(tmp_path, json.dumps(vocab), merges)
    ids = [vocab[w] for w in want]
    assert segkit.BPE.from_vocab_merges(v, m).encode("abc") == ids
    assert _hf_bpe(v, m).encode("abc").ids == ids
