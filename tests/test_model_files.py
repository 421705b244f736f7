"""Crafted and changing model files (issue 17): any byte string given to
``segkit.load`` loads a model that behaves like a valid one or raises
``ModelFileError``; nothing a file says can crash, hang or mislead a process.

Files that used to crash are checked in a worker subprocess
(``tools/fuzz_models.py``), so a regression fails the test instead of
killing the test run.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit.engine import kernels
from segkit.models.files import MAGIC, ModelFileError, read_model, write_model

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import fuzz_models  # noqa: E402

WORDS = ["研究", "研究生", "生命", "起源", "北京"]


@pytest.fixture(scope="module")
def worker():
    w = fuzz_models.Worker(timeout=120)
    yield w
    w.close()


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    return fuzz_models.make_models(tmp_path_factory.mktemp("models"))


def forge(src: Path, dst: Path, *, arrays=None, blobs=None, config=None, automaton=None) -> Path:
    """Rewrite ``src`` into ``dst`` with valid checksums after edits:
    ``arrays``/``blobs``/``config``: dicts of replacements (``config`` a
    function editing the config in place); ``automaton``: ``(prefix,
    edit)`` where ``edit(cmap, trans, fails, pool, params)`` edits copies of
    that automaton's sections in place."""
    m = read_model(src)
    new_arrays = {k: np.array(v) for k, v in m.arrays.items()}
    new_blobs = {k: bytes(v) for k, v in m.blobs.items()}
    cfg = json.loads(json.dumps(m.config))
    if automaton is not None:
        prefix, edit = automaton
        packed = new_arrays[f"{prefix}.packed"]
        edit(*kernels.unpack(packed))
    new_arrays.update(arrays or {})
    new_blobs.update(blobs or {})
    if config is not None:
        config(cfg)
    write_model(dst, m.preset, cfg, new_arrays, new_blobs)
    return dst


def key_node(a: segkit.Automaton, key: str, *, continuation: bool = False) -> int:
    v = a.node(key, continuation=continuation)
    assert v > 0 and a.failure(v)[1], key
    return v


@pytest.fixture(scope="module")
def chinese(tmp_path_factory) -> tuple[Path, segkit.ChineseMaxMatch]:
    seg = segkit.ChineseMaxMatch(WORDS, mode="forward")
    path = tmp_path_factory.mktemp("zh") / "zh.segkit"
    seg.save(path)
    return path, seg


@pytest.fixture(scope="module")
def wordpiece(tmp_path_factory) -> tuple[Path, segkit.WordPiece]:
    wp = segkit.WordPiece(["[UNK]", "a", "##b", "##c", "abcd", "xy", "##x", "zz"])
    path = tmp_path_factory.mktemp("wp") / "wp.segkit"
    wp.save(path)
    return path, wp


# ------------------------------------------------- the cases of the issue
def test_wordpiece_pop_covering_2_30_characters_is_rejected(wordpiece, worker, tmp_path):
    path, wp = wordpiece
    a = wp.automaton
    pooled = [v for v in range(a.fails.shape[0]) if a.fails[v, 0] >= 0 and a.fails[v, 1] > 0]
    assert pooled, "the vocabulary should give some node a list of pops"
    v = pooled[0]

    def edit(cmap, trans, fails, pool, params):
        pool[pool[fails[v, 1] + 1] + 1] = 2**30  # the characters its first pop covers (header: count, start)

    bad = forge(path, tmp_path / "pop.segkit", automaton=("automaton", edit))
    assert worker.check(str(bad)) == "rejected"


@pytest.mark.parametrize("covered", [255, 10**7])
def test_chinese_pop_covering_too_many_characters_is_rejected(chinese, worker, tmp_path, covered):
    path, seg = chinese
    a = seg._automaton("forward")
    v = key_node(a, "研究生")
    (tid, _), = a.failure(v)[1]

    cmap, trans, fails, pool, params = (np.array(x) for x in kernels.unpack(a.packed))
    if covered < 256:
        fails[v, 1] = -1 - (((tid + 1) << 8) | covered)
    else:  # a list of one pop, appended to the pool: header (count, start), then the pair
        fails[v, 1] = pool.size
        pool = np.concatenate([pool, np.array([1, pool.size + 2, tid, covered], dtype=np.int32)])
    packed = kernels.pack(cmap, trans, fails, pool, params)
    bad = forge(path, tmp_path / "zh-pop.segkit", arrays={"forward.packed": packed})
    assert worker.check(str(bad)) == "rejected"


def test_chinese_word_id_outside_the_vocabulary_is_rejected(chinese, worker, tmp_path):
    path, seg = chinese
    a = seg._automaton("forward")
    v = key_node(a, "生命")
    cov = a.failure(v)[1][0][1]

    def edit(cmap, trans, fails, pool, params):
        fails[v, 1] = -1 - (((8_388_606 + 1) << 8) | cov)

    bad = forge(path, tmp_path / "zh-id.segkit", automaton=("forward", edit))
    assert worker.check(str(bad)) == "rejected"


@pytest.mark.parametrize("preset", ["wordpiece", "chinese"])
def test_failure_link_to_its_own_node_is_rejected(preset, wordpiece, chinese, worker, tmp_path):
    path, obj = wordpiece if preset == "wordpiece" else chinese
    prefix = "automaton" if preset == "wordpiece" else "forward"
    a = obj.automaton if preset == "wordpiece" else obj._automaton("forward")
    v = key_node(a, "abcd" if preset == "wordpiece" else "研究生")

    def edit(cmap, trans, fails, pool, params):
        fails[v, 0] = v

    bad = forge(path, tmp_path / "loop.segkit", automaton=(prefix, edit))
    assert worker.check(str(bad)) == "rejected"


def test_trie_cycle_is_rejected(wordpiece, worker, tmp_path):
    path, wp = wordpiece
    a = wp.automaton
    v = key_node(a, "abcd")

    def edit(cmap, trans, fails, pool, params):
        trans[v, 1] = v  # its own parent

    bad = forge(path, tmp_path / "cycle.segkit", automaton=("automaton", edit))
    assert worker.check(str(bad)) == "rejected"


def test_negative_unk_id_is_rejected(wordpiece, worker, tmp_path):
    path, _ = wordpiece

    def edit(cmap, trans, fails, pool, params):
        params[kernels.P_UNK] = -5

    bad = forge(path, tmp_path / "unk.segkit", automaton=("automaton", edit),
                config=lambda c: c["automaton"].update(unk_id=-5))
    assert worker.check(str(bad)) == "rejected"
    with pytest.raises(ModelFileError, match="unk"):
        segkit.load(bad)


def test_forged_token_list_is_rejected(wordpiece, worker, tmp_path):
    path, wp = wordpiece
    tokens = list(wp.vocab.id_to_token)
    tokens[5], tokens[7] = tokens[7], tokens[5]  # two tokens of the same length swapped
    assert len(tokens[5]) == len(tokens[7])
    bad = forge(path, tmp_path / "tokens.segkit", blobs={"vocab.tokens": "\n".join(tokens).encode()})
    assert worker.check(str(bad)) == "rejected"
    with pytest.raises(ModelFileError, match="token"):
        segkit.load(bad)


def test_token_list_that_is_not_utf8_is_rejected(wordpiece, tmp_path):
    path, wp = wordpiece
    raw = "\n".join(wp.vocab.id_to_token).encode().replace(b"abcd", b"ab\xffd")
    bad = forge(path, tmp_path / "utf8.segkit", blobs={"vocab.tokens": raw})
    with pytest.raises(ModelFileError, match="UTF-8"):
        segkit.load(bad)


def test_marisa_blob_is_never_parsed(wordpiece, chinese, worker, tmp_path):
    """marisa-trie's reader trusts its input (mutated blobs crashed it):
    load does not read the blob at all, so garbage there changes nothing."""
    for path, obj in (wordpiece, chinese):
        garbage = bytes(range(256)) * 7
        bad = forge(path, tmp_path / f"marisa-{path.name}", blobs={"vocab.marisa": garbage})
        assert worker.check(str(bad)) == "loaded"
        loaded = segkit.load(bad)
        if isinstance(obj, segkit.WordPiece):
            assert loaded.tokenize("abcd abcx xy zz abc") == obj.tokenize("abcd abcx xy zz abc")
            assert loaded.token_to_id("##x") == obj.token_to_id("##x") == 6
        else:
            assert loaded.cut("研究生命起源北京") == obj.cut("研究生命起源北京")


def test_truncation_setting_of_the_wrong_type_is_rejected(wordpiece, tmp_path):
    path, _ = wordpiece
    bad = forge(path, tmp_path / "trunc.segkit", config=lambda c: c.update(truncation=[1]))
    with pytest.raises(ModelFileError, match="truncation"):
        segkit.load(bad)
    with pytest.raises(ValueError, match="truncation"):
        segkit.WordPiece(["[UNK]", "a"], truncation=[1])


def test_stored_tables_that_differ_from_the_settings_are_rejected(wordpiece, tmp_path):
    path, _ = wordpiece
    bad = forge(path, tmp_path / "lower.segkit", config=lambda c: c.update(lowercase=True))
    with pytest.raises(ModelFileError, match="normalization"):
        segkit.load(bad)


def test_a_valid_model_with_every_check_loads_unchanged(tmp_path):
    """The checks accept what save writes, for every kind of automaton:
    continuation keys, backward matching, one-character tokens."""
    wp = segkit.WordPiece.bert(ROOT / "vocabularies" / "bert-base-uncased.txt")
    path = tmp_path / "bert.segkit"
    wp.save(path)
    loaded = segkit.load(path)
    text = "Hello, wonderful world! unaffable 北京 ÀÉÎ [MASK]"
    assert loaded.encode(text).ids == wp.encode(text).ids
    seg = segkit.ChineseMaxMatch(WORDS + ["a", "研"], mode="bidirectional")
    seg.save(tmp_path / "zh.segkit")
    assert segkit.load(tmp_path / "zh.segkit").cut("研究生命起源 abc 研") == seg.cut("研究生命起源 abc 研")


# ----------------------------------------------------- malformed headers
def _with_header(src: Path, dst: Path, header_raw: bytes) -> Path:
    raw = src.read_bytes()
    version, _, data_start = fuzz_models.split_file(raw)
    dst.write_bytes(fuzz_models.assemble(version, header_raw, raw[data_start:]))
    return dst


@pytest.mark.parametrize(
    "header",
    [
        b"[]",  # not an object (was AttributeError)
        b"{}",  # no entries (was KeyError)
        b"[" * 100_000 + b"]" * 100_000,  # nesting (was RecursionError)
        b'{"preset": "WordPiece", "config": {}, "entries": {}, "data_nbytes": "12"}',  # (was ValueError)
        b'{"preset": "WordPiece", "config": {}, "entries": {"a": {"kind": "array", "offset": 0, "nbytes": 8,'
        b' "dtype": "<i4", "shape": 2}}, "data_nbytes": 64}',
        b'{"preset": "WordPiece", "config": {}, "entries": {"a": {"kind": "array", "offset": 3, "nbytes": 4,'
        b' "dtype": "<i4", "shape": [1]}}, "data_nbytes": 64}',
        b'{"preset": 5, "config": {}, "entries": {}, "data_nbytes": 0}',
        b'{"preset": "WordPiece", "config": [], "entries": {}, "data_nbytes": 0}',
        b'{"preset": "WordPiece", "config": {}, "entries": {}, "data_nbytes": 0}',
        b"\xff\xfe",
    ],
)
def test_malformed_header_is_model_file_error(models, tmp_path, header):
    bad = _with_header(models["wordpiece"], tmp_path / "h.segkit", header)
    with pytest.raises(ModelFileError):
        segkit.load(bad)


def test_directory_is_refused(tmp_path):
    with pytest.raises(ModelFileError, match="directory"):
        segkit.load(tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.segkit"
    os.mkfifo(fifo)
    code = "import sys, segkit\ntry:\n    segkit.load(sys.argv[1])\nexcept segkit.ModelFileError as e:\n    print('refused', e)\n"
    out = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60)
    assert out.stdout.startswith("refused") and "regular file" in out.stdout, out.stderr


# ------------------------------------------------ files changed after load
def test_changing_the_file_after_load_changes_nothing(models, tmp_path):
    """Truncating the file (SIGBUS with a mapping) or overwriting it in
    place leaves a loaded model as it was: load keeps its own copy."""
    src = models["wordpiece"]
    path = tmp_path / "m.segkit"
    path.write_bytes(src.read_bytes())
    code = (
        "import sys, segkit\n"
        "m = segkit.load(sys.argv[1])\n"
        "before = m.encode_batch(['unaffable hello world', 'abc x']).ids\n"
        "open(sys.argv[1], 'r+b').truncate(100)\n"
        "mid = m.encode_batch(['unaffable hello world', 'abc x']).ids\n"
        "with open(sys.argv[1], 'r+b') as f:\n"
        "    f.write(b'\\xff' * 100)\n"
        "after = m.encode_batch(['unaffable hello world', 'abc x']).ids\n"
        "print(before == mid == after)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


# ------------------------------------------------------------- fuzzing
@pytest.mark.parametrize("name", ["wordpiece", "chinese", "maxmatch", "maxmatch-char"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(rng=st.randoms(use_true_random=False))
def test_mutated_models_load_valid_or_raise(name, models, worker, tmp_path, rng):
    """Mutations of saved models with checksums recomputed, each loaded and
    exercised in the worker subprocess: rejected with ModelFileError, or
    loaded and behaving (no crash, hang, other exception or wrong output).
    ``tools/fuzz_models.py`` runs the same check on 10,000 mutations."""
    raw, note = fuzz_models.mutate(models[name].read_bytes(), rng)
    path = tmp_path / f"mutant-{name}.segkit"
    path.write_bytes(raw)
    verdict = worker.check(str(path), str(models[name]))
    assert verdict in ("rejected", "loaded", "loaded-differs"), f"{note}: {verdict}"


def test_worker_reports_a_crash(tmp_path):
    """The harness counts a dying worker as a crash (not as a verdict)."""
    w = fuzz_models.Worker(timeout=60)
    try:
        w._start()
        w.proc.kill()
        w.proc.wait()
        assert w.check(str(tmp_path / "x.segkit")).startswith("crash")
    finally:
        w.close()


def test_prefix_layout_matches_storage():
    assert fuzz_models.PREFIX.size == struct.calcsize("<8sIIII") and MAGIC == b"SEGKIT\n\x00"
    assert zlib.crc32(b"") == 0


def _full_lists(fails: np.ndarray, pool: np.ndarray, order) -> tuple[np.ndarray, np.ndarray]:
    """The pops of an automaton laid out as builders before list headers
    wrote them: every list in full, ``[count, pairs]`` at its reference, the
    lists in ``order`` (of the nodes that have one)."""
    fails = fails.copy()
    new_pool = [0]
    for v in order:
        r = fails[v, 1]
        cnt, at = pool[r], pool[r + 1]
        fails[v, 1] = len(new_pool)
        new_pool += [int(cnt)] + pool[at : at + 2 * cnt].tolist()
    return fails, np.array(new_pool, dtype=np.int32)


@pytest.mark.parametrize("order", ["slots", "reversed"])
def test_files_with_pop_lists_written_in_full_still_load(models, tmp_path, order):
    """Files written before pops lists shared their pairs hold every list
    in full (in slot order, or in node order before that): they load,
    compared list by list, and behave as before."""
    path = models["wordpiece"]
    m = read_model(path)
    cmap, trans, fails, pool, params = (np.array(x) for x in kernels.unpack(m.arrays["automaton.packed"]))
    listed = [v for v in range(fails.shape[0]) if fails[v, 0] >= 0 and fails[v, 1] > 0]
    assert len(listed) >= 2
    old_fails, old_pool = _full_lists(fails, pool, listed if order == "slots" else listed[::-1])
    assert not np.array_equal(old_pool, pool)
    packed = kernels.pack(cmap, trans, old_fails, old_pool, params)
    old = forge(path, tmp_path / "old-layout.segkit", arrays={"automaton.packed": packed})
    texts = fuzz_models.WP_TEXTS
    assert [e.ids for e in segkit.load(old).encode_batch(texts)] == [e.ids for e in segkit.load(path).encode_batch(texts)]
    # One covered count changed in such a file: rejected.
    bad_pool = old_pool.copy()
    bad_pool[old_fails[listed[0], 1] + 2] += 1
    packed = kernels.pack(cmap, trans, old_fails, bad_pool, params)
    bad = forge(path, tmp_path / "old-layout-bad.segkit", arrays={"automaton.packed": packed})
    with pytest.raises(ModelFileError, match="failure links or pops"):
        segkit.load(bad)


def test_long_repeated_token_saves_and_loads_in_linear_space(tmp_path):
    """A key of n repeated characters gives nodes whose pops lists grow by
    one each (``F(q^k) = [q, ##q x (k - 1)]``); written out in full they
    took n**2 / 2 pairs.  Lists share their pairs: the pool is linear in n,
    the file loads, and a damaged pool is rejected without expanding the
    lists it claims (a smaller-than-full pool cannot be an old layout)."""
    n = 20_000
    wp = segkit.WordPiece(["[UNK]", "q", "##q", "q" * n], max_input_chars_per_word=10 * n)
    assert wp.automaton.pool.size < 8 * n
    assert wp.tokenize("q" * (n - 1)) == ["q"] + ["##q"] * (n - 2)
    assert wp.tokenize("q" * n + " " + "q" * 3) == ["q" * n, "q", "##q", "##q"]
    path = tmp_path / "q.segkit"
    wp.save(path)
    assert path.stat().st_size < 64 * n
    loaded = segkit.load(path)
    assert loaded.tokenize("q" * (n - 1)) == ["q"] + ["##q"] * (n - 2)

    def edit(cmap, trans, fails, pool, params):
        pool[-1] = 7  # the last pop covers 7 characters instead of 1

    bad = forge(path, tmp_path / "q-bad.segkit", automaton=("automaton", edit))
    with pytest.raises(ModelFileError, match="failure links or pops"):
        segkit.load(bad)


def test_vocabulary_with_a_newline_token_round_trips(tmp_path):
    wp = segkit.WordPiece(["[UNK]", "a", "b\nc", "##b"])
    wp.save(tmp_path / "nl.segkit")
    loaded = segkit.load(tmp_path / "nl.segkit")
    assert loaded.tokenize("ab a") == ["a", "##b", "a"]
    assert loaded.id_to_token(2) == "b\nc" and loaded.token_to_id("##b") == 3


def test_structural_check_without_keys():
    """Plugins whose presets load an automaton without its keys
    (``automaton_from_arrays`` without ``keys``) still get the structural
    checks: links to shallower nodes, pops covering what links drop, ids in
    the vocabulary, no trie cycle."""
    from segkit.engine.automaton import automaton_from_state, automaton_state

    wp = segkit.WordPiece(["[UNK]", "a", "##b", "##c", "abcd", "xy", "##x", "zz"])
    a = wp.automaton
    config, arrays = automaton_state(a)
    ids = np.ones(len(wp.vocab.id_to_token) + 1, dtype=bool)
    ids[0] = False  # -1 is no id here
    assert automaton_from_state(config, {"packed": np.array(a.packed)}, valid_ids=ids).segment_ids("abcd xy").tolist() == [4, 5]
    v = a.node("abcd")
    listed = [u for u in range(a.fails.shape[0]) if a.fails[u, 0] >= 0 and a.fails[u, 1] > 0][0]

    def broken(edit):
        packed = np.array(a.packed)
        edit(*kernels.unpack(packed))
        return {"packed": packed}

    cases = {
        "own node": lambda c, t, f, p, q: f.__setitem__((v, 0), v),
        "covering": lambda c, t, f, p, q: p.__setitem__(p[f[listed, 1] + 1] + 1, 2**30),
        "inline id": lambda c, t, f, p, q: f.__setitem__((v, 1), -1 - (((8_388_606 + 1) << 8) | 4)),
        "cycle": lambda c, t, f, p, q: t.__setitem__((v, 1), v),
        "unk": lambda c, t, f, p, q: q.__setitem__(kernels.P_UNK, -5),
    }
    for name, edit in cases.items():
        with pytest.raises(ValueError, match="invalid automaton"):
            automaton_from_state(config, broken(edit), valid_ids=ids)


def test_many_lookups_on_a_loaded_vocabulary_build_its_mapping(wordpiece):
    """load answers its few lookups from the token list (no mapping built);
    a caller looking up many tokens gets the mapping, not a search each."""
    path, wp = wordpiece
    loaded = segkit.load(path)
    assert loaded.vocab._index is None  # nothing built by load itself
    got = [loaded.token_to_id(t) for t in ["a", "##b", "zz", "nope"] * 50]
    assert got == [wp.token_to_id(t) for t in ["a", "##b", "zz", "nope"] * 50]
    assert loaded.vocab._index is not None


# ---------------------------------------------------- byte automata (MaxMatch)
@pytest.fixture(scope="module")
def maxmatch(tmp_path_factory) -> tuple[Path, segkit.MaxMatch]:
    mm = segkit.MaxMatch(fuzz_models.maxmatch_tokens())
    path = tmp_path_factory.mktemp("mm") / "mm.segkit"
    mm.save(path)
    return path, mm


def test_byte_automaton_edits_are_rejected(maxmatch, worker, tmp_path):
    path, mm = maxmatch
    a = mm._automaton
    v = a.node(b"hello")
    leaf_parent = a.node(b"hell")

    def self_link(cmap, trans, fails, pool, params):
        fails[v, 0] = v

    def cycle(cmap, trans, fails, pool, params):
        trans[leaf_parent, 1] = v  # "hell" becomes a child of "hello"

    def char_map(cmap, trans, fails, pool, params):
        params[0] = 1  # a continuation root the settings do not imply

    for n, edit in enumerate((self_link, cycle, char_map)):
        bad = forge(path, tmp_path / f"bad{n}.segkit", automaton=("automaton", edit))
        assert worker.check(str(bad)) == "rejected", edit.__name__
    # A token changed in the table: the trie no longer holds the tokens.
    m = read_model(path)
    data = np.array(m.arrays["tokens.data"])
    data[-3] ^= 1
    bad = forge(path, tmp_path / "tok.segkit", arrays={"tokens.data": data})
    assert worker.check(str(bad)) == "rejected"
    # An id dropped from the matched keys ("wo", inside "wonder": the trie
    # still checks out): its token is no higher id's.
    wo = mm.token_to_id(b"wo")
    keys = np.array(m.arrays["tokens.keys"])
    bad = forge(path, tmp_path / "keys.segkit", arrays={"tokens.keys": keys[keys != wo]})
    with pytest.raises(ModelFileError, match="failure links or pops are not the ones its trie gives"):
        segkit.load(bad)
    # ... and with an automaton built without it, the table check finds it.
    from segkit.presets.maxmatch.tokens import TokenTable

    table = TokenTable.from_state("byte", {"tokens.data": m.arrays["tokens.data"], "tokens.ends": m.arrays["tokens.ends"],
                                           "tokens.keys": keys[keys != wo]}, "t")
    without = segkit.Automaton.build(table.keys(), table.key_ids, mm._automaton.config)
    with pytest.raises(ValueError, match=f"t: invalid token table: id {wo} is not matched, yet its token is no "
                                         "token of a higher id"):
        table.check_shadowed(without, "t")
    # The settings of another alphabet.
    bad = forge(path, tmp_path / "unit.segkit", config=lambda c: c.update(unit="char"))
    with pytest.raises(ModelFileError):
        segkit.load(bad)
