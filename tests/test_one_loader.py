"""segkit.from_pretrained / segkit.from_tokenizer_json (issue 34, item 2):
every kind of file recognised by content, never by name; a bundled name
wins over a file of that name unless written as a path; anything else is
the loader's ValueError naming the file.  The expected models come from the
per-class loaders (each checked against its peer in its own tests)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import segkit

REPO = Path(__file__).resolve().parents[1]
VOCABS = REPO / "vocabularies"
TEXT = "Hello, world! Héllo 世界 123"


@pytest.mark.parametrize("name, cls", [("bert-base-uncased", "WordPiece"), ("bert-base-multilingual-cased", "WordPiece"),
                                       ("gpt2", "BPE"), ("cl100k_base", "BPE"), ("rwkv-world", "RWKVWorld")])
def test_bundled_names(name, cls):
    tok = segkit.from_pretrained(name)
    assert type(tok).__name__ == cls
    if cls == "BPE":
        assert tok.encode(TEXT) == segkit.BPE.from_pretrained(name).encode(TEXT)


def test_a_bundled_name_wins_over_a_file_of_that_name(tmp_path, monkeypatch):
    (tmp_path / "cl100k_base").write_text("[UNK]\n[CLS]\n[SEP]\nhello\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert type(segkit.from_pretrained("cl100k_base")).__name__ == "BPE"
    wp = segkit.from_pretrained("./cl100k_base")  # a path: the file (a vocab.txt)
    assert type(wp).__name__ == "WordPiece" and wp.vocab_size == 4


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="cl100k_base") as e:
        segkit.from_pretrained("no-such-tokenizer")
    assert "bert-base-uncased" in str(e.value) and "rwkv-world" in str(e.value)


def test_tokenizer_json_of_wordpiece_and_a_model_folder(tmp_path):
    wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
    wp.save_tokenizer_json(tmp_path / "tokenizer.json")
    got = segkit.from_pretrained(tmp_path / "tokenizer.json")
    assert type(got).__name__ == "WordPiece" and got.encode(TEXT).ids == wp.encode(TEXT).ids
    folder = tmp_path / "folder"
    wp.save_pretrained(folder)
    for tok in (segkit.from_pretrained(folder), segkit.from_tokenizer_json(folder)):
        assert tok.encode(TEXT).ids == wp.encode(TEXT).ids and tok.model_max_length == 512


def test_tokenizer_json_of_bpe(tmp_path):
    trained = segkit.train_bpe(["low lower lowest newer newest wider"] * 50, 300, special_tokens=["<|endoftext|>"])
    trained.to_tokenizer_json(tmp_path / "tokenizer.json")
    got = segkit.from_tokenizer_json(tmp_path / "tokenizer.json")
    expected = segkit.BPE.from_tokenizer_json(tmp_path / "tokenizer.json")
    assert type(got).__name__ == "BPE"
    assert got.encode("lowest newer") == expected.encode("lowest newer")
    assert segkit.from_pretrained(tmp_path).encode("lowest newer") == expected.encode("lowest newer")


def test_gpt_neox_tokenizer_json(shared_data):
    path = shared_data / "vocab" / "gpt-neox-20b.tokenizer.json"
    got = segkit.from_pretrained(path)
    assert type(got).__name__ == "BPE" and got.encode(TEXT) == segkit.BPE.from_tokenizer_json(path).encode(TEXT)


def test_tiktoken_files_of_a_known_encoding_get_its_pattern(tmp_path):
    gz = VOCABS / "gpt2.tiktoken.gz"
    plain = tmp_path / "renamed.bin"  # the name says nothing
    plain.write_bytes(gzip.decompress(gz.read_bytes()))
    expected = segkit.BPE.from_pretrained("gpt2").encode(TEXT)
    assert segkit.from_pretrained(gz).encode(TEXT) == expected
    assert segkit.from_pretrained(plain).encode(TEXT) == expected


def test_a_tiktoken_file_of_no_known_encoding_asks_for_its_pattern(tmp_path):
    path = tmp_path / "mine.tiktoken"
    path.write_bytes(b"YQ== 0\nYg== 1\nYWI= 2\n")
    with pytest.raises(ValueError, match="from_tiktoken") as e:
        segkit.from_pretrained(path)
    assert str(path) in str(e.value)


def test_rwkv_vocabulary_file(shared_data):
    path = shared_data / "vocab" / "rwkv_vocab_v20230424.txt"
    got = segkit.from_pretrained(path)
    assert type(got).__name__ == "RWKVWorld" and got.encode(TEXT) == segkit.RWKVWorld().encode(TEXT)


def test_vocab_txt_gets_berts_pipeline(tmp_path):
    path = tmp_path / "vocab.txt"
    shutil.copy(VOCABS / "bert-base-uncased.txt", path)
    got = segkit.from_pretrained(path)
    assert got.encode(TEXT).ids == segkit.WordPiece.from_pretrained("bert-base-uncased").encode(TEXT).ids


def test_segkit_model_file(tmp_path):
    bpe = segkit.BPE.from_pretrained("gpt2")
    bpe.save(tmp_path / "model.bin")
    assert segkit.from_pretrained(tmp_path / "model.bin").encode(TEXT) == bpe.encode(TEXT)


@pytest.mark.parametrize("content, found", [
    (b"\x00\x01\x02binary", "binary content"),
    (b"[1, 2, 3]", "expected a tokenizer.json"),
    (json.dumps({"model": {"type": "Unigram", "vocab": []}}).encode(), "model.type 'Unigram' is not supported"),
    (b"{not json", "not a JSON file"),
    (b"\x1f\x8b\x08garbage", "gzip"),
])
def test_what_is_no_tokenizer_is_the_loaders_error_naming_the_file(tmp_path, content, found):
    path = tmp_path / "thing"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=found) as e:
        segkit.from_pretrained(path)
    assert str(path) in str(e.value)


def test_a_folder_of_an_empty_vocab_json_and_merges_says_what_is_missing(tmp_path):
    # (vocab.json + merges.txt are read: tests/test_vocab_merges.py; an empty
    # vocabulary lacks the single bytes byte-level BPE needs)
    (tmp_path / "vocab.json").write_text("{}")
    (tmp_path / "merges.txt").write_text("")
    with pytest.raises(ValueError, match="single bytes") as e:
        segkit.from_pretrained(tmp_path)
    assert str(tmp_path / "vocab.json") in str(e.value)


def test_a_fifo_is_refused_not_opened(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="FIFO"):
        segkit.from_pretrained(fifo)


_FUZZ = r"""
import random, sys, tempfile, os
sys.path.insert(0, sys.argv[1])
import segkit
seeds = [open(p, "rb").read()[:3000] for p in sys.argv[3:]]
rng = random.Random(int(sys.argv[2]))
folder = tempfile.mkdtemp()
for i in range(150):
    data = bytearray(rng.choice(seeds))
    for _ in range(rng.randint(1, 8)):
        op = rng.randrange(3)
        if op == 0 and data:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == 1 and data:
            del data[rng.randrange(len(data)):][: rng.randint(1, 50)]
        else:
            data[rng.randrange(len(data) + 1):0] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    path = os.path.join(folder, f"f{i}")
    with open(path, "wb") as fh:
        fh.write(data)
    try:
        tok = segkit.from_pretrained(path)
    except (ValueError, TypeError) as e:
        assert str(e), repr(e)
        continue
    except Exception as e:
        raise AssertionError(f"case {i}: {type(e).__name__}: {e}") from None
print("ok")
"""


def test_any_bytes_give_a_model_or_the_loaders_error(tmp_path):
    wp = tmp_path / "tokenizer.json"
    segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##b"]).save_tokenizer_json(wp)
    model = tmp_path / "model.segkit"
    segkit.MaxMatch([b"a", b"ab", b"b"]).save(model)
    tik = tmp_path / "t.tiktoken"
    tik.write_bytes(b"YQ== 0\nYg== 1\nYWI= 2\n")
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[UNK]\na\n##b\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-c", _FUZZ, str(REPO), "7", str(wp), str(model), str(tik), str(vocab)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stderr[-3000:]


def test_a_cached_tokenizer_json_is_loaded_without_parsing_it_again(tmp_path, monkeypatch):
    # A large tokenizer.json (DeepSeek's 6 MB) is kept in the model cache;
    # a cache hit must give the built model without the JSON parse, which
    # costs more than loading the cached model.  CACHE_BYTES is lowered so
    # that a small trained file counts as large.
    import segkit.presets.bpe.preset as preset
    import segkit.presets.loader as loader

    monkeypatch.setattr(preset, "CACHE_BYTES", 0)
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "model"
    folder.mkdir()
    path = folder / "tokenizer.json"
    trained = segkit.train_bpe(["low lower lowest newer newest wider"] * 50, 300, special_tokens=["<|endoftext|>"])
    trained.to_tokenizer_json(path)
    (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": "<|endoftext|>"}))
    text = "lowest newer<|endoftext|> wider"
    monkeypatch.setenv("SEGKIT_CACHE_DIR", "off")
    expected = segkit.BPE.from_tokenizer_json(path).encode(text)
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(tmp_path / "cache"))
    segkit.from_tokenizer_json(path)  # built and stored
    assert len(list((tmp_path / "cache").glob("bpe-tokenizer-json-*.segkit"))) == 1

    def parsed(*args, **kwargs):
        raise AssertionError("the tokenizer.json was parsed although its model is cached")

    with monkeypatch.context() as m:
        m.setattr(loader, "_model_type", parsed)
        m.setattr(preset, "read_tokenizer_json", parsed)
        m.setattr(preset, "_refuse_characters", parsed)
        for got in (segkit.from_tokenizer_json(path), segkit.from_pretrained(path), segkit.from_pretrained(folder),
                    segkit.from_tokenizer_json(folder), segkit.BPE.from_tokenizer_json(path)):
            assert type(got).__name__ == "BPE" and got.name == "tokenizer.json"
            assert got.encode(text) == expected
        eos = json.loads(path.read_text())["added_tokens"][0]["id"]
        assert eos in expected and segkit.from_pretrained(folder).eos_token_id == eos  # the folder's roles, on a hit too

    # A damaged entry is not a hit: the file is parsed and built again, with the cache's warning.
    entry, = (tmp_path / "cache").glob("bpe-tokenizer-json-*.segkit")
    entry.write_bytes(b"garbage")
    import segkit.models.cache as cache

    monkeypatch.setattr(cache, "_WARNED", set())
    with pytest.warns(UserWarning, match="damaged"):
        again = segkit.from_tokenizer_json(path)
    assert again.encode(text) == expected
