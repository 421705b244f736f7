"""Added tokens (``add_tokens`` / ``add_special_tokens``, flags lstrip,
rstrip, single_word, normalized): parity with HuggingFace ``tokenizers``
(ids, offsets, word ids, type ids, special tokens masks, decode) on the
multilingual sample with tokens inserted, and on hypothesis-made tokens and
texts; tokenizer.json, model files and pickles keep them.  The parity tests
skip with a reason without ``tokenizers``."""

from __future__ import annotations

import json
import pickle
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit import AddedToken

SAMPLE = Path(__file__).resolve().parent / "data" / "multilingual-sample.jsonl"
SHARED_VOCAB = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "vocab"

FLAGS = ("single_word", "lstrip", "rstrip", "normalized", "special")


def _texts() -> list[str]:
    with SAMPLE.open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


_CACHE: dict = {}


def _pair(name: str, tmp_path_factory):
    """A segkit tokenizer and HF's, loaded from the same tokenizer.json."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (parity with HuggingFace tokenizers)")
    if name not in _CACHE:
        wp = segkit.WordPiece.from_pretrained(name)
        path = tmp_path_factory.mktemp("tj") / "tokenizer.json"
        wp.save_tokenizer_json(path)
        _CACHE[name] = (pickle.dumps(segkit.WordPiece.from_tokenizer_json(path)), path.read_text(encoding="utf-8"))
    wp, text = _CACHE[name]
    return pickle.loads(wp), tokenizers.Tokenizer.from_str(text)


def _hf_tokens(specs):
    from tokenizers import AddedToken as HFAddedToken

    return [HFAddedToken(s["content"], **{k: v for k, v in s.items() if k != "content"}) for s in specs]


def _add(wp, tk, specs, special: bool):
    ours = [AddedToken(**s) for s in specs]
    if special:
        return wp.add_special_tokens(ours), tk.add_special_tokens(_hf_tokens(specs))
    return wp.add_tokens(ours), tk.add_tokens(_hf_tokens(specs))


def _fields(e, strip_tokens=False):
    toks = [t.strip() for t in e.tokens] if strip_tokens else e.tokens
    return {
        "ids": e.ids, "offsets": [tuple(o) for o in e.offsets], "word_ids": e.word_ids, "type_ids": e.type_ids,
        "special_tokens_mask": e.special_tokens_mask, "attention_mask": e.attention_mask, "tokens": toks,
    }


def _same(a, b, what):
    """Equal fields, token strings exactly HF's (an added token that took
    spaces is the text it matched; a normalized one BERT's normalized text
    around it)."""
    fa, fb = _fields(a), _fields(b)
    for key in fa:
        assert fa[key] == fb[key], (key, what)


def test_a_raw_added_token_that_took_spaces_is_the_text_it_matched(tmp_path_factory):
    """HF's token string of a ``normalized=False`` token with lstrip/rstrip:
    the text matched, white space included (one text, a pair, a batch)."""
    wp, tk = _pair("bert-base-uncased", tmp_path_factory)
    specs = [dict(content="<eot>", lstrip=True, normalized=False), dict(content="[M]", rstrip=True, lstrip=True,
                                                                        normalized=False)]
    _add(wp, tk, specs, True)
    texts = ["a <eot> b", "x\t [M]  y", "<eot><eot>  [M] [M]", "中 <eot>", "  [M]"]
    for t in texts:
        assert wp.encode(t).tokens == tk.encode(t).tokens, t
        assert wp.encode(t, "z [M] ").tokens == tk.encode(t, "z [M] ").tokens, t
    assert [e.tokens for e in wp.encode_batch(texts)] == [e.tokens for e in tk.encode_batch(texts)]
    assert any(" " in tok for tok in wp.encode("a <eot> b").tokens)


def test_a_normalized_added_token_that_took_spaces_is_the_normalized_text(tmp_path_factory):
    """HF's token string of a ``normalized=True`` token with lstrip/rstrip:
    the normalized text it matched, so BERT's spaces put around a CJK
    character next to it are part of it (``"中[NEW]中"`` -> ``" [new] "``)."""
    wp, tk = _pair("bert-base-uncased", tmp_path_factory)
    _add(wp, tk, [dict(content="[NEW]", lstrip=True, rstrip=True, normalized=True)], False)
    texts = ["中[NEW]中", "hello 中 [new] there", "x\t[NEW]\ty", "Héllo [NEW]", "[NEW]中[NEW]", "a [NEW] b"]
    for t in texts:
        assert wp.encode(t).tokens == tk.encode(t).tokens, t
        assert wp.encode(t, "中 [NEW]").tokens == tk.encode(t, "中 [NEW]").tokens, t
    assert [e.tokens for e in wp.encode_batch(texts)] == [e.tokens for e in tk.encode_batch(texts)]
    assert " [new] " in wp.encode("中[NEW]中").tokens


# Flag combinations, tokens in the vocabulary and new ones, raw and normalized.
SPECS = [
    dict(content="[NEW]"),
    dict(content="Hello", single_word=True),
    dict(content="the", lstrip=True, rstrip=True),
    dict(content="<sep2>", normalized=False, lstrip=True),
    dict(content="ab", single_word=True, rstrip=True, normalized=False),
    dict(content="Été", normalized=True),
    dict(content="東京", rstrip=True),
    dict(content="xx yy", lstrip=True, single_word=True),
]
SPECIALS = [dict(content="<eot>", lstrip=True), dict(content="[MASK]", rstrip=True), dict(content="<|pad|>", normalized=True)]


def _inserted(texts, contents, seed):
    rng = random.Random(seed)
    out = []
    for t in texts:
        for _ in range(rng.randrange(4)):
            k = rng.randrange(len(t) + 1)
            pad = rng.choice(["", " ", "  ", "\t", "x"])
            t = t[:k] + rng.choice([pad, ""]) + rng.choice(contents) + rng.choice([pad, ""]) + t[k:]
        out.append(t)
    return out


@pytest.mark.parametrize("name", ["bert-base-uncased", "bert-base-multilingual-cased"])
def test_sample_parity(name, tmp_path_factory):
    wp, tk = _pair(name, tmp_path_factory)
    n_ours, n_hf = _add(wp, tk, SPECS[:4], False)
    assert n_ours == n_hf == 4
    n_ours, n_hf = _add(wp, tk, SPECS, False)
    assert n_ours == n_hf == 4
    n_ours, n_hf = _add(wp, tk, SPECIALS, True)
    assert n_ours == n_hf
    contents = [s["content"] for s in SPECS + SPECIALS] + ["hello", "HELLO", "THE", "été", "[mask]"]
    texts = _inserted(_texts(), contents, name)
    assert sum(any(c in t for c in contents) for t in texts) > 200
    hf_single = tk.encode_batch(texts)
    ours = wp.encode_batch(texts)
    threaded = wp.encode_batch(texts, num_threads=2)
    assert [e.ids for e in threaded] == [e.ids for e in hf_single]
    assert [wp.encode_ids(t) for t in texts[:50]] == [e.ids for e in tk.encode_batch(texts[:50], add_special_tokens=False)]
    assert wp.tokenize(texts[0]) == [t.strip() for t in tk.encode(texts[0], add_special_tokens=False).tokens]
    for k, t in enumerate(texts):
        _same(ours[k], hf_single[k], t)
        _same(wp.encode(t), hf_single[k], t)
    pairs = list(zip(texts[::3], texts[1::3]))
    hf_pairs = tk.encode_batch(pairs)
    for (x, y), a, b in zip(pairs, wp.encode_batch(pairs), hf_pairs):
        _same(a, b, (x, y))
    for x, y in pairs[:20]:
        _same(wp.encode(x, y), tk.encode(x, y), (x, y))
    for e in hf_single[:100]:
        for skip in (True, False):
            assert wp.decode(e.ids, skip_special_tokens=skip) == tk.decode(e.ids, skip_special_tokens=skip)
    # The vocabulary views.
    for with_added in (True, False):
        assert wp.get_vocab(with_added_tokens=with_added) == tk.get_vocab(with_added_tokens=with_added)
        assert wp.get_vocab_size(with_added_tokens=with_added) == tk.get_vocab_size(with_added_tokens=with_added)
    for s in SPECS + SPECIALS:
        i = tk.token_to_id(s["content"])
        assert wp.token_to_id(s["content"]) == i
        assert wp.id_to_token(i) == tk.id_to_token(i)


def test_truncation_padding_with_added(tmp_path_factory):
    wp, tk = _pair("bert-base-uncased", tmp_path_factory)
    _add(wp, tk, SPECS, False)
    texts = _inserted(_texts()[:60], ["[NEW]", "the", "<sep2>"], 1)
    tk.enable_truncation(12)
    tk.enable_padding()
    pairs = list(zip(texts[::2], texts[1::2]))
    for batch in (texts, pairs):
        hf = tk.encode_batch(batch)
        ours = wp.encode_batch(batch, max_length=12, truncation=True, padding=True)
        assert len({len(e) for e in ours}) == 1
        for a, b, t in zip(ours, hf, batch):
            _same(a, b, t)


# ------------------------------------------------------------------ hypothesis
_ALPHABET = "aAbBé É中 -.\t\x07\u0301\ufdd0"
_token = st.text(alphabet="aAbBé中<>-", min_size=1, max_size=4)
_flags = st.fixed_dictionaries({k: st.booleans() for k in FLAGS})


_SMALL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "ab", "aa", "##a", "##b", "##ab", "e", "é", "##é",
          "##e", "中", "<", ">", "-", ".", "A", "B", "##A", "x"]


def _small_pair(uncased: bool, tmp_path_factory):
    """A small vocabulary (fast to load for each example), cased or not."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (parity with HuggingFace tokenizers)")
    key = ("small", uncased)
    if key not in _CACHE:
        wp = segkit.WordPiece.bert(_SMALL, lowercase=uncased)
        path = tmp_path_factory.mktemp("small") / "tokenizer.json"
        wp.save_tokenizer_json(path)
        _CACHE[key] = (pickle.dumps(wp), path.read_text(encoding="utf-8"))
    wp, text = _CACHE[key]
    return pickle.loads(wp), tokenizers.Tokenizer.from_str(text)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    specs=st.lists(st.tuples(_token, _flags), min_size=1, max_size=5, unique_by=lambda x: x[0].lower()),
    pieces=st.lists(st.one_of(st.text(alphabet=_ALPHABET, max_size=6), st.integers(0, 4)), max_size=10),
    pair=st.booleans(),
    uncased=st.booleans(),
)
def test_hypothesis_parity(tmp_path_factory, specs, pieces, pair, uncased):
    wp, tk = _small_pair(uncased, tmp_path_factory)
    rows = [dict(content=c, **f) for c, f in specs]
    for r in rows:
        sp = r.pop("special")
        n_ours, n_hf = _add(wp, tk, [r], sp)
        assert n_ours == n_hf
    contents = [r["content"] for r in rows]
    text = "".join(p if isinstance(p, str) else contents[p % len(contents)] for p in pieces)
    other = text[::-1]
    a = wp.encode(text, other) if pair else wp.encode(text)
    b = tk.encode(text, other) if pair else tk.encode(text)
    _same(a, b, text)
    batch = [text, other, ""]
    for x, y in zip(wp.encode_batch(batch), tk.encode_batch(batch)):
        _same(x, y, batch)
    assert wp.decode(b.ids) == tk.decode(b.ids)
    assert wp.get_vocab() == tk.get_vocab()


def test_add_counts_and_ids(tmp_path_factory):
    wp, tk = _pair("bert-base-uncased", tmp_path_factory)
    seq = [
        (["a", "b", "[NEW]"], False), ([AddedToken("[NEW]")], False), ([AddedToken("[NEW]", lstrip=True)], False),
        (["[CLS]", "<x>"], True), ([""], False), (["[NEW]", "<y>"], True),
    ]
    for tokens, special in seq:
        ours = wp.add_special_tokens(tokens) if special else wp.add_tokens(tokens)
        from tokenizers import AddedToken as H

        hf_tokens = [t if isinstance(t, str) else H(t.content, lstrip=t.lstrip) for t in tokens]
        theirs = tk.add_special_tokens(hf_tokens) if special else tk.add_tokens(hf_tokens)
        assert ours == theirs, tokens
    assert wp.get_vocab() == tk.get_vocab()
    e = tk.encode("a [NEW] <x> <y>b")
    assert wp.encode("a [NEW] <x> <y>b").ids == e.ids
    assert wp.decode(e.ids) == tk.decode(e.ids)


def test_no_added_tokens_is_the_fast_path():
    wp = segkit.WordPiece.from_pretrained("bert-base-uncased")
    assert wp._added is None
    assert wp.add_tokens([]) == 0
    assert wp.encode("[CLS] hi").tokens == ["[CLS]", "[CLS]", "hi", "[SEP]"]


def test_errors():
    wp = segkit.WordPiece(["[UNK]", "a"])
    with pytest.raises(TypeError, match="list"):
        wp.add_tokens("abc")
    with pytest.raises(TypeError, match="str or AddedToken"):
        wp.add_tokens([3])
    with pytest.raises(TypeError, match="lstrip"):
        AddedToken("x", lstrip="yes")
    tf = segkit.WordPiece(["[UNK]", "a"], flavour="tf_text")
    with pytest.raises(ValueError, match="flavour"):
        tf.add_tokens(["x"])


# ------------------------------------------------------- files and pickles
def _with_added():
    wp = segkit.WordPiece.bert(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "##s"])
    wp.add_tokens([AddedToken("New", lstrip=True), AddedToken("hello", single_word=True)])
    wp.add_special_tokens(["<eot>", AddedToken("<x>", rstrip=True, normalized=True)])
    return wp


_TEXT = "Hello  new worlds<eot> helloworld <X>  hello"


def test_save_load_and_pickle(tmp_path):
    wp = _with_added()
    want = wp.encode(_TEXT)
    # (HF tokenizers' tokens for the same file and added tokens: the normalized
    # "New" and "<x>" are the text they matched, the spaces they took included)
    want_tokens = ["[CLS]", "hello", "  new", "world", "##s", "<eot>", "[UNK]", "<x>  ", "hello", "[SEP]"]
    assert want.tokens == want_tokens
    path = tmp_path / "m.segkit"
    wp.save(path)
    back = segkit.load(path)
    for other in (back, pickle.loads(pickle.dumps(wp))):
        e = other.encode(_TEXT)
        assert (e.ids, e.offsets, e.word_ids) == (want.ids, want.offsets, want.word_ids)
        assert e.tokens == want_tokens and pickle.loads(pickle.dumps(e)).tokens == want_tokens
        assert other.get_vocab() == wp.get_vocab() and other.decode(e.ids) == wp.decode(e.ids) == "hello new worlds hello"
    # tokenizer.json both ways
    tj = tmp_path / "tokenizer.json"
    wp.save_tokenizer_json(tj)
    again = segkit.WordPiece.from_tokenizer_json(tj)
    e = again.encode(_TEXT)
    assert (e.ids, e.offsets, e.word_ids) == (want.ids, want.offsets, want.word_ids)
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (HF loads the written tokenizer.json)")
    hf = tokenizers.Tokenizer.from_file(str(tj))
    h = hf.encode(_TEXT)
    assert (h.ids, h.offsets, h.word_ids) == (want.ids, want.offsets, want.word_ids) and h.tokens == want_tokens
    assert hf.decode(h.ids) == wp.decode(h.ids) and hf.get_vocab() == wp.get_vocab()


def _crafted_states():
    good = [[7, "New", False, True, False, True, False], [8, "<eot>", False, False, False, False, True]]
    yield "not a list", "added_tokens must be a list"
    yield [good], "added_tokens must be a list"
    yield [[[7, "New"]], []], "must be \\[id, content"
    yield [[[-1, "New", False, False, False, True, False]], []], "has id -1"
    yield [[[True, "New", False, False, False, True, False]], []], "has id True"
    yield [[[7, "", False, False, False, True, False]], []], "non-empty str"
    yield [[[7, "New", 1, False, False, True, False]], []], "flags"
    yield [[[3, "New", False, False, False, True, False]], []], "which the vocabulary uses"
    yield [[[9, "hello", False, False, False, True, False]], []], "vocabulary gives it id 4"
    yield [good + [[9, "New", False, False, False, True, False]], []], "listed twice"
    yield [good, [5]], "special contents"


@pytest.mark.parametrize("state,message", list(_crafted_states()))
def test_crafted_model_files_raise(tmp_path, state, message):
    from segkit.models.files import read_model, write_model

    wp = _with_added()
    path = tmp_path / "m.segkit"
    wp.save(path)
    loaded = read_model(path)
    config = dict(loaded.config)
    config["added_tokens"] = state
    bad = tmp_path / "bad.segkit"
    write_model(bad, loaded.preset, config, loaded.arrays, loaded.blobs)
    with pytest.raises(segkit.ModelFileError, match=message):
        segkit.load(bad)


def test_fuzzed_added_state_never_crashes(tmp_path):
    """Random JSON in place of the added tokens: load gives a model or
    ModelFileError, in a subprocess so that a crash counts as a failure."""
    from segkit.models.files import read_model, write_model

    wp = _with_added()
    path = tmp_path / "m.segkit"
    wp.save(path)
    loaded = read_model(path)
    rng = random.Random(19)
    atoms = [0, 1, 7, 9, 2**31, -5, "", "New", "<eot>", "a" * 3, True, False, None, 1.5, [], {}]
    for k in range(40):
        rows = [[rng.choice(atoms) if rng.random() < 0.3 else v for v in row]
                for row in loaded.config["added_tokens"][0][: rng.randrange(4)]]
        config = dict(loaded.config)
        config["added_tokens"] = [rows, rng.choice([[], ["<eot>"], [1]])] if k % 7 else rng.choice(atoms)
        write_model(tmp_path / f"f{k}.segkit", loaded.preset, config, loaded.arrays, loaded.blobs)
    script = (
        "import sys, segkit\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n"
        "        m = segkit.load(p)\n"
        f"        m.encode({_TEXT!r}); m.decode(m.encode('hello').ids)\n"
        "    except segkit.ModelFileError:\n"
        "        pass\n"
        "print('ok')\n"
    )
    files = [str(tmp_path / f"f{k}.segkit") for k in range(40)]
    run = subprocess.run([sys.executable, "-c", script, *files], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


@pytest.mark.parametrize("name", ["bert-base-uncased", "bert-base-multilingual-cased"])
def test_hf_file_with_added_tokens(tmp_path, name):
    """A HuggingFace tokenizer.json (shared data set) with added tokens
    written by HF itself loads with the same results."""
    tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is not installed (HF writes the tokenizer.json)")
    src = SHARED_VOCAB / f"{name}.tokenizer.json"
    if not src.exists():
        pytest.skip(f"shared data set not present ({src})")
    tk = tokenizers.Tokenizer.from_file(str(src))
    tk.add_tokens(_hf_tokens(SPECS))
    tk.add_special_tokens(_hf_tokens(SPECIALS))
    path = tmp_path / "tokenizer.json"
    tk.save(str(path))
    wp = segkit.WordPiece.from_tokenizer_json(path)
    texts = _inserted(_texts(), [s["content"] for s in SPECS + SPECIALS], 3)
    for a, b, t in zip(wp.encode_batch(texts), tk.encode_batch(texts), texts):
        _same(a, b, t)
    assert wp.get_vocab() == tk.get_vocab()


def test_unpickled_vocabulary_finds_every_token():
    """Regression: an unpickled vocabulary answered ``id()`` None for every
    token but id 0 until its mapping was rebuilt (which added tokens, looked
    up right after unpickling, ran into)."""
    wp = segkit.WordPiece(["[UNK]", "a", "##b", "", "c", "a"], duplicates="first")
    v = pickle.loads(pickle.dumps(wp)).vocab
    assert [v.id(t) for t in ["[UNK]", "a", "##b", "c", "zz"]] == [0, 1, 2, 4, None]


_JSON_ATOMS = st.sampled_from([None, True, False, 0, 1, 5, 9, -1, 2**31, 2**40, 1.5, "", "a", "[UNK]", "<x>", [], {}])


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(entries=st.lists(st.dictionaries(st.sampled_from(["id", "content", "single_word", "lstrip", "rstrip",
                                                         "normalized", "special", "other"]), _JSON_ATOMS),
                        max_size=4))
def test_tokenizer_json_added_tokens_any_values(tmp_path_factory, entries):
    """Any values in a tokenizer.json's added_tokens: a tokenizer that
    encodes, or a ValueError naming the file."""
    data = json.loads(_with_added_json())
    data["added_tokens"] = data["added_tokens"][:2] + entries
    path = tmp_path_factory.mktemp("tj") / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    try:
        wp = segkit.WordPiece.from_tokenizer_json(path)
    except ValueError as e:
        assert str(path) in str(e)
        return
    e = wp.encode("a <x> Hello  new worlds")
    assert wp.decode(e.ids) is not None and len(e.ids) == len(e.offsets)


_JSON: list = []


def _with_added_json() -> str:
    if not _JSON:
        import tempfile

        path = Path(tempfile.mkdtemp()) / "tokenizer.json"
        _with_added().save_tokenizer_json(path)
        _JSON.append(path.read_text(encoding="utf-8"))
    return _JSON[0]


# ------------------------------------------------- ids of added tokens (issue 27)
_IDS_CHILD = r"""
import json, resource, sys, warnings
sys.path.insert(0, sys.argv[1])
import segkit
path = sys.argv[2]
segkit.WordPiece.from_tokenizer_json(path)  # warm-up, then a cap: an id must not allocate a table
with open("/proc/self/status") as fh:
    size = next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmSize"))
resource.setrlimit(resource.RLIMIT_AS, (size + (512 << 20),) * 2)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    wp = segkit.WordPiece.from_tokenizer_json(path)
print(json.dumps({"ids": wp.encode("a<x0>a<x1>").ids, "size": wp.get_vocab_size(),
                  "warnings": [str(w.message) for w in caught]}))
"""


@pytest.mark.parametrize("ids", [[2**31 - 2], [10**8], [7, 5], [6], [5], [2**32 - 1, 3]])
def test_tokenizer_json_added_token_ids_are_assigned_as_hf_assigns_them(tmp_path, ids):
    """HF's loader adds the file's added tokens one by one and gives them
    its own ids (the file's are only compared, with a logged warning): a
    token of the vocabulary keeps its id, the others get the next ones.
    segkit did use the file's ids: 2**31 - 2 allocated a table of 2**31
    entries, 10**8 loaded in 1.76 GB, and ids differed from HF's.  Now the
    ids are HF's, in a process capped at 512 MiB more than a warm one, and a
    warning names the file, the token and both ids."""
    data = json.loads(_with_added_json())
    vocab_size = len(data["model"]["vocab"])
    for k, i in enumerate(ids):
        data["added_tokens"].append({"id": i, "content": f"<x{k}>", "single_word": False, "lstrip": False,
                                     "rstrip": False, "normalized": False, "special": True})
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    run = subprocess.run([sys.executable, "-c", _IDS_CHILD, str(Path(__file__).resolve().parents[1]), str(path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    base = max(t["id"] for t in data["added_tokens"][: -len(ids)]) + 1
    expected_ids = {f"<x{k}>": base + k for k in range(len(ids))}
    moved = [f"<x{k}>" for k, i in enumerate(ids) if i != expected_ids[f"<x{k}>"]]
    if moved:
        (message,) = got["warnings"]
        assert str(path) in message and all(f"'{c}'" in message for c in moved)
        assert all(f"id {i} in the file" in message for c, i in zip(expected_ids, ids) if c in moved)
    else:
        assert got["warnings"] == []
    tokenizers = pytest.importorskip("tokenizers", reason="the peer HuggingFace tokenizers is not installed")
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert got["ids"] == hf.encode("a<x0>a<x1>").ids and got["size"] == hf.get_vocab_size()
    assert [hf.token_to_id(c) for c in expected_ids] == list(expected_ids.values())
    assert vocab_size <= base


def test_model_file_with_sparse_added_token_ids_is_refused(tmp_path):
    """A segkit model file's added tokens keep their stored ids (segkit gave
    them), so ids must be dense, as a vocabulary's (``check_ids``): id
    10**8 with a handful of tokens is refused, naming the token and id."""
    from segkit.models.files import read_model, write_model

    wp = _with_added()
    path = tmp_path / "m.segkit"
    wp.save(path)
    loaded = read_model(path)
    config = dict(loaded.config)
    rows, sticky = config["added_tokens"]
    config["added_tokens"] = [rows + [[10**8, "<far>", False, False, False, False, True]], sticky]
    bad = tmp_path / "far.segkit"
    write_model(bad, loaded.preset, config, loaded.arrays, loaded.blobs)
    with pytest.raises(segkit.ModelFileError, match=r"'<far>' has id 100000000, but there are only"):
        segkit.load(bad)
