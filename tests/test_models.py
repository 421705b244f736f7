"""Saved models, damaged files, pickling, threads and process pools (issue 5)."""

from __future__ import annotations

import json
import os
import pickle
import struct
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import segkit
from segkit.models.files import MAGIC, ModelFileError
from threads import run_in_threads

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "multilingual-sample.jsonl"


def sample_texts() -> list[str]:
    texts = [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line]
    assert len(texts) >= 100
    return texts


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def bert_uncased():
    return segkit.WordPiece.bert(ROOT / "vocabularies" / "bert-base-uncased.txt")


def encodings_equal(a, b) -> bool:
    return all(
        getattr(x, f) == getattr(y, f)
        for x, y in zip(a, b)
        for f in ("ids", "offsets", "type_ids", "attention_mask", "special_tokens_mask", "word_ids")
    ) and len(a) == len(b)


PRESETS = {
    "wordpiece-plain": lambda: segkit.WordPiece(["[UNK]", "a", "##b", "ab", ",", "##a"]),
    "wordpiece-bert": lambda: segkit.WordPiece.bert(ROOT / "vocabularies" / "bert-base-uncased.txt"),
    "wordpiece-tf": lambda: segkit.WordPiece(
        ROOT / "vocabularies" / "bert-base-multilingual-cased.txt", flavour="tf_text"
    ),
    "chinese-forward": lambda: segkit.ChineseMaxMatch(["研究", "研究生", "生命", "起源", "北京"], mode="forward"),
    "chinese-bidirectional": lambda: segkit.ChineseMaxMatch(
        ["研究", "研究生", "生命", "起源", "北京"], mode="bidirectional", alnum_runs=False
    ),
}

TEXTS = [
    "研究生命起源 in Peking 3.5% ÀÉÎ [MASK] ab,ab",
    "Hello, wonderful world! unaffable [CLS]x",
    "",
    "   ",
    "北京大学 iPhone12 ab a b ##a",
]


def outputs(obj, texts):
    if isinstance(obj, segkit.WordPiece):
        return [(e.ids, e.offsets, e.word_ids) for e in obj.encode_batch(texts)]
    return obj.tokenize_batch(texts)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_save_load_round_trip(name, tmp_path):
    obj = PRESETS[name]()
    path = tmp_path / f"{name}.segkit"
    obj.save(path)
    loaded = segkit.load(path)
    assert type(loaded) is type(obj)
    texts = TEXTS + sample_texts()[:200]
    assert outputs(loaded, texts) == outputs(obj, texts)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_pickle_round_trip(name):
    obj = PRESETS[name]()
    clone = pickle.loads(pickle.dumps(obj))
    texts = TEXTS + sample_texts()[:200]
    assert outputs(clone, texts) == outputs(obj, texts)


def test_pickle_of_loaded_model(tmp_path, bert_uncased):
    path = tmp_path / "m.segkit"
    bert_uncased.save(path)
    loaded = segkit.load(path)
    clone = pickle.loads(pickle.dumps(loaded))
    texts = sample_texts()
    assert encodings_equal(clone.encode_batch(texts), bert_uncased.encode_batch(texts))
    assert clone.decode(clone.encode("Hello there").ids) == "hello there"


@pytest.fixture
def saved(tmp_path, bert_uncased) -> Path:
    path = tmp_path / "model.segkit"
    bert_uncased.save(path)
    return path


def test_truncated_file_raises(saved, tmp_path):
    raw = saved.read_bytes()
    for cut in (10, 30, len(raw) // 2, len(raw) - 1):
        bad = tmp_path / f"cut{cut}.segkit"
        bad.write_bytes(raw[:cut])
        with pytest.raises(ModelFileError, match="truncated|too short|corrupted"):
            segkit.load(bad)


def test_corrupted_data_raises(saved, tmp_path):
    raw = bytearray(saved.read_bytes())
    raw[-200] ^= 0x40
    bad = tmp_path / "flip.segkit"
    bad.write_bytes(bytes(raw))
    with pytest.raises(ModelFileError, match="checksum"):
        segkit.load(bad)


def test_corrupted_header_raises(saved, tmp_path):
    raw = bytearray(saved.read_bytes())
    raw[30] ^= 0x01  # inside the JSON header
    bad = tmp_path / "head.segkit"
    bad.write_bytes(bytes(raw))
    with pytest.raises(ModelFileError, match="header"):
        segkit.load(bad)


def test_future_version_raises(saved, tmp_path):
    raw = bytearray(saved.read_bytes())
    struct.pack_into("<I", raw, 8, 99)
    bad = tmp_path / "future.segkit"
    bad.write_bytes(bytes(raw))
    with pytest.raises(ModelFileError, match="newer than this segkit"):
        segkit.load(bad)


def test_not_a_model_raises(tmp_path):
    bad = tmp_path / "x.segkit"
    bad.write_bytes(b"hello world, not a model at all")
    with pytest.raises(ModelFileError, match="not a segkit model"):
        segkit.load(bad)
    with pytest.raises(FileNotFoundError):
        segkit.load(tmp_path / "missing.segkit")


def _rewrite_header(raw: bytes, edit) -> bytes:
    """A well-formed file (valid checksums) whose header was edited."""
    magic, version, hlen, _, dcrc = struct.unpack_from("<8sIIII", raw, 0)
    assert magic == MAGIC
    header = json.loads(raw[24 : 24 + hlen])
    edit(header)
    new = json.dumps(header).encode()
    head = struct.pack("<8sIIII", MAGIC, version, len(new), zlib.crc32(new), dcrc) + new
    head += b"\0" * ((-len(head)) % 64)
    old_start = 24 + hlen + ((-(24 + hlen)) % 64)
    return head + raw[old_start:]


def test_crafted_out_of_bounds_automaton_is_rejected(saved, tmp_path):
    """Checksums can be recomputed by anyone: a file whose automaton indexes
    outside its arrays must be rejected before the unchecked kernels run."""
    raw = saved.read_bytes()
    loaded = segkit.models.files.read_model(saved)
    packed = np.array(loaded.arrays["automaton.packed"])
    cfg = loaded.config["automaton"]
    # Point a failure link far outside the table.
    h = packed[:8]
    fails_start = int(h[2])
    packed[fails_start + 2 * 5] = 10**8
    arrays = dict(loaded.arrays)
    arrays["automaton.packed"] = packed
    bad = tmp_path / "crafted.segkit"
    blobs = {k: bytes(v) for k, v in loaded.blobs.items()}
    segkit.models.files.write_model(bad, loaded.preset, loaded.config, arrays, blobs)
    with pytest.raises(ModelFileError, match="invalid"):
        segkit.load(bad)
    assert raw  # the original still loads
    assert segkit.load(saved).tokenize("hello") == ["hello"]
    assert cfg["num_symbols"] > 0


def test_unknown_preset_raises(saved, tmp_path):
    raw = saved.read_bytes()
    bad = tmp_path / "other.segkit"
    bad.write_bytes(_rewrite_header(raw, lambda h: h.update(preset="NoSuchPreset")))
    with pytest.raises(ModelFileError, match="not available"):
        segkit.load(bad)


def test_load_never_unpickles(saved):
    """The file format holds JSON and raw arrays only."""
    raw = saved.read_bytes()
    assert b"\x80\x04\x95" not in raw[:4096]  # no pickle protocol-4 frame in the header
    loaded = segkit.models.files.read_model(saved)
    assert all(isinstance(a, np.ndarray) and a.dtype != object for a in loaded.arrays.values())


def test_threads_give_single_thread_results(bert_uncased):
    texts = sample_texts()
    expected = [(e.ids, e.offsets) for e in bert_uncased.encode_batch(texts)]
    single = [(bert_uncased.encode(t).ids, bert_uncased.encode(t).offsets) for t in texts]
    assert single == expected
    errors: list[BaseException] = []
    results: dict[int, list] = {}

    def work(k: int) -> None:
        try:
            # Each thread encodes different texts (a rotation), many times.
            mine = texts[k * 7 :] + texts[: k * 7]
            got = []
            for _ in range(3):
                got = [(e.ids, e.offsets) for e in bert_uncased.encode_batch(mine)]
                got_single = [(bert_uncased.encode(t).ids, bert_uncased.encode(t).offsets) for t in mine[:50]]
                assert got_single == got[:50]
            results[k] = got
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    run_in_threads(work, 8)
    assert not errors, errors
    for k, got in results.items():
        assert got == expected[k * 7 :] + expected[: k * 7]


def test_num_threads_matches_one_thread(bert_uncased, monkeypatch):
    import segkit.runtime.threads as par

    monkeypatch.setattr(par, "MIN_CHARS_PER_THREAD", 100)  # force a split on small data
    texts = sample_texts() * 3
    a = bert_uncased.encode_batch(texts, padding=True)
    b = bert_uncased.encode_batch(texts, padding=True, num_threads=2)
    assert np.array_equal(a.to_numpy()["input_ids"], b.to_numpy()["input_ids"])
    assert encodings_equal(a, b)
    # A batch larger than the sample that plans the split, sorted by length
    # (runs of very different sizes), with empty texts at the front.
    texts = [""] * 40 + sorted(sample_texts() * 12, key=len)
    assert len(texts) > par._SAMPLE
    plan = []
    real_pool = par._pool
    monkeypatch.setattr(par, "_pool", lambda n: (plan.append(n), real_pool(n))[1])
    one = bert_uncased.encode_batch(texts)
    for threads in (2, 3):
        many = bert_uncased.encode_batch(texts, num_threads=threads)
        assert np.array_equal(many.row_splits, one.row_splits) and np.array_equal(many.ids_flat, one.ids_flat)
        assert encodings_equal(one, many)
    assert set(plan) == {2, 3}  # both batches were split
    # Each thread matches its runs a block of texts at a time, as one thread
    # does: small blocks make every run span several.
    import segkit.presets.wordpiece.matching as matching

    monkeypatch.setattr(matching, "_BLOCK_TEXTS", 7)
    for threads in (1, 2):
        blocks = bert_uncased.encode_batch(texts, num_threads=threads)
        assert np.array_equal(blocks.row_splits, one.row_splits) and np.array_equal(blocks.ids_flat, one.ids_flat)
        assert encodings_equal(one, blocks)
    seg = segkit.ChineseMaxMatch(["研究", "生命", "起源"])
    zh = ["研究生命起源", "起源 abc 3.5%", ""] * 50
    assert seg.cut_batch(zh, num_threads=2) == seg.cut_batch(zh)


def test_batch_of_thread_parts_behaves_as_one(monkeypatch):
    """A batch split over threads keeps each thread's output where it is;
    every way of reading it gives what the one-thread batch gives."""
    import segkit.runtime.threads as par

    monkeypatch.setattr(par, "MIN_CHARS_PER_THREAD", 100)
    plain = segkit.WordPiece(ROOT / "vocabularies" / "bert-base-multilingual-cased.txt")  # no template: plain results
    texts = sample_texts()[:150] + ["", "Hello world!"]
    one = plain.encode_batch(texts)
    options = [{}, {"return_special_tokens_mask": True, "return_offsets": True, "return_word_ids": True}]
    for reads_flat_first in (False, True):
        many = plain.encode_batch(texts, num_threads=3)
        assert many._parts is not None and len(many._parts) > 1  # really made of parts
        if reads_flat_first:
            assert np.array_equal(many.row_splits, one.row_splits) and np.array_equal(many.ids_flat, one.ids_flat)
            assert many._parts is None  # joined once, for good
        assert len(many) == len(one) and repr(many) == repr(one)
        assert many.ids == one.ids
        for opts in options:
            a, b = one.to_numpy(**opts), many.to_numpy(**opts)
            assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
        assert encodings_equal(one, many)
        for i in (0, 1, 37, len(texts) - 2, len(texts) - 1, -1, -len(texts)):
            assert many[i].ids == one[i].ids and many[i].offsets == one[i].offsets
        assert [e.tokens for e in many[5:60:7]] == [e.tokens for e in one[5:60:7]]
        with pytest.raises(IndexError):
            many[len(texts)]
        again = pickle.loads(pickle.dumps(many))
        assert again.ids == one.ids and np.array_equal(again.row_splits, one.row_splits)


def _encode_in_worker(args):
    model, texts = args
    return [e.ids for e in model.encode_batch(texts)]


def test_process_pool_gives_same_results(bert_uncased):
    texts = sample_texts()
    chunks = [texts[i::3] for i in range(3)]
    with ProcessPoolExecutor(max_workers=2) as pool:
        got = list(pool.map(_encode_in_worker, [(bert_uncased, c) for c in chunks]))
    assert got == [[e.ids for e in bert_uncased.encode_batch(c)] for c in chunks]


def test_cache_reuses_built_model(tmp_path):
    first = segkit.WordPiece.from_pretrained("bert-base-uncased")
    files = list((tmp_path / "cache").glob("*.segkit"))
    assert len(files) == 1
    second = segkit.WordPiece.from_pretrained("bert-base-uncased")
    assert second.vocab.size == first.vocab.size
    # A damaged cache file is rebuilt, not trusted.
    files[0].write_bytes(b"garbage")
    with pytest.warns(UserWarning, match="damaged model cache entry"):
        third = segkit.WordPiece.from_pretrained("bert-base-uncased")
    assert third.tokenize("Hello World") == ["hello", "world"]


def test_cache_can_be_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("SEGKIT_CACHE_DIR", "off")
    wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
    assert wp.tokenize("Hello") == ["hello"]
    assert not (tmp_path / "cache").exists()
    assert os.environ["SEGKIT_CACHE_DIR"] == "off"


# ------------------------------------------------- large vocabulary files
def _no_build(*args, **kwargs):
    raise AssertionError("the automaton was built although the model cache holds it")


def _same_encodings(a, b, texts) -> bool:
    ea, eb = a.encode_batch(texts), b.encode_batch(texts)
    return all(x.ids == y.ids and x.offsets == y.offsets and x.tokens == y.tokens for x, y in zip(ea, eb))


def test_large_vocabulary_file_is_built_once(tmp_path, monkeypatch):
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes((ROOT / "vocabularies" / "bert-base-uncased.txt").read_bytes())
    assert vocab.stat().st_size >= segkit.models.cache.CACHE_MIN_BYTES
    texts = [t.lower() for t in sample_texts()[:200]]
    first = segkit.WordPiece(vocab, template="bert")
    assert len(list((tmp_path / "cache").glob("*.segkit"))) == 1
    reference = segkit.WordPiece(segkit.Vocabulary.load(vocab), template="bert")  # never cached
    monkeypatch.setattr(segkit.engine.Automaton, "build", _no_build)
    second = segkit.WordPiece(vocab, template="bert")
    assert second._settings == first._settings
    assert _same_encodings(second, reference, texts)
    assert second.decode(second.encode(texts[0]).ids) == reference.decode(reference.encode(texts[0]).ids)
    # Other settings are another model: built, not taken from the first.
    with pytest.raises(AssertionError, match="was built"):
        segkit.WordPiece(vocab, template="bert", max_input_chars_per_word=5)


def test_changed_vocabulary_file_is_rebuilt(tmp_path):
    vocab = tmp_path / "vocab.txt"
    lines = (ROOT / "vocabularies" / "bert-base-uncased.txt").read_text(encoding="utf-8").split("\n")
    vocab.write_text("\n".join(lines), encoding="utf-8")
    assert segkit.WordPiece(vocab).tokenize("hello") == ["hello"]
    lines[lines.index("hello")] = "hellx"  # same size, other bytes
    vocab.write_text("\n".join(lines), encoding="utf-8")
    assert segkit.WordPiece(vocab).tokenize("hello") != ["hello"]
    assert len(list((tmp_path / "cache").glob("*.segkit"))) == 2


def test_small_vocabulary_file_is_not_cached(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[UNK]\nhello\n##s\n", encoding="utf-8")
    assert segkit.WordPiece(vocab).tokenize("hellos") == ["hello", "##s"]
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_cache_keeps_the_most_recently_used(tmp_path, monkeypatch):
    monkeypatch.setattr(segkit.models.cache, "MAX_CACHED_MODELS", 2)
    vocab = tmp_path / "vocab.txt"
    vocab.write_bytes((ROOT / "vocabularies" / "bert-base-uncased.txt").read_bytes())
    folder = tmp_path / "cache"
    made = []
    for limit in (50, 60, 70):
        segkit.WordPiece(vocab, max_input_chars_per_word=limit)
        (new,) = set(folder.glob("*.segkit")) - set(made)
        os.utime(new, (1e9 + limit, 1e9 + limit))  # distinct ages, whatever the clock's resolution
        made.append(new)
    left = set(folder.glob("*.segkit"))
    assert len(made) == 3 and left == set(made[1:])


def test_large_dictionary_file_is_built_once(tmp_path, monkeypatch):
    words = segkit.ChineseMaxMatch().words[:40_000]
    path = tmp_path / "dict.txt"
    path.write_text("\n".join(f"{w} 3 n" for w in words) + "\n", encoding="utf-8")
    assert path.stat().st_size >= segkit.models.cache.CACHE_MIN_BYTES
    lines = sample_texts()[:100] + ["研究生命起源", "我们在北京大学读书。"]
    for mode in ("forward", "bidirectional"):
        first = segkit.ChineseMaxMatch(path, mode=mode)
        expected = segkit.ChineseMaxMatch(words, mode=mode).cut_batch(lines)
        assert first.cut_batch(lines) == expected
        textbook = segkit.ChineseMaxMatch(words, mode=mode, alnum_runs=False).cut_batch(lines)
        assert textbook != expected  # the sample has Latin words: alnum_runs matters
        with monkeypatch.context() as m:
            m.setattr(segkit.engine.Automaton, "build", _no_build)
            second = segkit.ChineseMaxMatch(path, mode=mode, alnum_runs=False)
            assert second.alnum_runs is False
            assert second.cut_batch(lines) == textbook
    assert len(list((tmp_path / "cache").glob("chinese-file-*.segkit"))) == 2
