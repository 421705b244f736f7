"""BERT pipeline of :class:`segkit.WordPiece`: options, errors, persistence, offsets.

Most tests need only segkit and its bundled vocabularies.  Tests that
compare with HuggingFace ``tokenizers`` say so and skip (with a reason) when
it is not installed; the hypothesis property test also needs the shared data
set (``../shared/data``) for HF's ``tokenizer.json`` files.

Expected values are written by hand from BERT's rules (the bundled
bert-base-uncased vocabulary maps ``[PAD]`` 0, ``[UNK]`` 100, ``[CLS]`` 101,
``[SEP]`` 102, ``[MASK]`` 103, and the single letters ``a``..``z`` to
1037..1062).
"""

from __future__ import annotations

import copy
import json
import pickle
import unicodedata
from pathlib import Path

import pytest

import segkit

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
VOCAB_DIR = SHARED_DATA / "vocab"
SAMPLE = REPO / "tests" / "data" / "multilingual-sample.jsonl"

PAD, UNK, CLS, SEP, MASK = 0, 100, 101, 102, 103
A = 1037  # "a"; "b" is 1038 and so on

LONG = "a b c d e f g h"  # 8 tokens
SHORT = "x y z"  # 3 tokens


def letters(s: str) -> list[int]:
    """Ids of space-separated single letters in bert-base-uncased."""
    return [A + ord(c) - ord("a") for c in s.split()]


@pytest.fixture(scope="module")
def uncased() -> segkit.WordPiece:
    return segkit.WordPiece.from_pretrained("bert-base-uncased")


@pytest.fixture(scope="module")
def mbert_wp() -> segkit.WordPiece:
    return segkit.WordPiece.from_pretrained("bert-base-multilingual-cased")


def test_vocabulary_assumptions(uncased: segkit.WordPiece) -> None:
    """The hand-written expectations below rely on these ids."""
    assert [uncased.token_to_id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [0, 100, 101, 102, 103]
    assert [uncased.token_to_id(c) for c in "abhxyz"] == letters("a b h x y z")


# ------------------------------------------------------------ truncation
def test_truncation_longest_first_single(uncased: segkit.WordPiece) -> None:
    e = uncased.encode(LONG, max_length=5, truncation=True)
    assert e.ids == [CLS, *letters("a b c"), SEP]
    assert e.offsets == [(0, 0), (0, 1), (2, 3), (4, 5), (0, 0)]
    assert e.word_ids == [None, 0, 1, 2, None]
    # "longest_first" is what True means
    assert uncased.encode(LONG, max_length=5, truncation="longest_first").ids == e.ids
    # no truncation needed: unchanged
    assert uncased.encode(SHORT, max_length=5, truncation=True).ids == [CLS, *letters("x y z"), SEP]
    # max_length alone does not truncate
    assert len(uncased.encode(LONG, max_length=5)) == 10


@pytest.mark.parametrize(
    "max_length,first,second",
    [
        # budget = max_length - 3; the shorter side keeps up to half, the longer the rest
        (20, "a b c d e f g h", "x y z"),  # nothing to cut
        (12, "a b c d e f", "x y z"),
        (8, "a b c", "x y"),
        (7, "a b", "x y"),
        (6, "a b", "x"),
        (4, "a", ""),
        (3, "", ""),
    ],
)
def test_truncation_longest_first_pair(uncased: segkit.WordPiece, max_length: int, first: str, second: str) -> None:
    e = uncased.encode(LONG, SHORT, max_length=max_length, truncation=True)
    assert e.ids == [CLS, *letters(first), SEP, *letters(second), SEP]
    assert e.type_ids == [0] * (len(letters(first)) + 2) + [1] * (len(letters(second)) + 1)
    # symmetric when the pair is swapped
    swapped = uncased.encode(SHORT, LONG, max_length=max_length, truncation=True)
    assert swapped.ids == [CLS, *letters(second), SEP, *letters(first), SEP]


def test_truncation_only_first_and_only_second(uncased: segkit.WordPiece) -> None:
    e = uncased.encode(LONG, SHORT, max_length=8, truncation="only_first")
    assert e.ids == [CLS, *letters("a b"), SEP, *letters("x y z"), SEP]
    e = uncased.encode(SHORT, LONG, max_length=8, truncation="only_second")
    assert e.ids == [CLS, *letters("x y z"), SEP, *letters("a b"), SEP]
    # only_first on a single text truncates it
    assert uncased.encode(LONG, max_length=4, truncation="only_first").ids == [CLS, *letters("a b"), SEP]
    # nothing to cut: no error, whatever the strategy
    for strategy in ("only_first", "only_second"):
        assert uncased.encode(SHORT, max_length=5, truncation=strategy).ids == [CLS, *letters("x y z"), SEP]
        assert len(uncased.encode(SHORT, "q", max_length=7, truncation=strategy)) == 7


@pytest.mark.parametrize(
    "args,max_length,strategy",
    [
        ((SHORT, LONG), 8, "only_first"),  # "x y z" cannot give up 6 tokens
        ((LONG, SHORT), 8, "only_second"),
        ((LONG,), 5, "only_second"),  # a single text has no second sequence
    ],
)
def test_truncation_impossible_raises(uncased: segkit.WordPiece, args, max_length: int, strategy: str) -> None:
    with pytest.raises(ValueError, match="truncate"):
        uncased.encode(*args, max_length=max_length, truncation=strategy)
    texts = [args] if len(args) == 2 else list(args)
    with pytest.raises(ValueError, match="truncate"):
        uncased.encode_batch([*texts, *texts], max_length=max_length, truncation=strategy)


@pytest.mark.parametrize("pair", [False, True])
def test_max_length_smaller_than_special_tokens(uncased: segkit.WordPiece, pair: bool) -> None:
    args = (LONG, SHORT) if pair else (LONG,)
    nspecial = 3 if pair else 2
    for max_length in range(nspecial):
        with pytest.raises(ValueError, match="special tokens"):
            uncased.encode(*args, max_length=max_length, truncation=True)
    # exactly the special tokens: every text token is cut
    assert uncased.encode(*args, max_length=nspecial, truncation=True).ids == ([CLS, SEP, SEP] if pair else [CLS, SEP])
    # without the template the limit is the text itself
    assert uncased.encode(LONG, max_length=1, truncation=True, add_special_tokens=False).ids == letters("a")


def test_truncation_option_errors(uncased: segkit.WordPiece) -> None:
    with pytest.raises(ValueError, match="max_length"):
        uncased.encode(LONG, truncation=True)
    with pytest.raises(ValueError, match="truncation must be"):
        uncased.encode(LONG, max_length=5, truncation="only_third")
    with pytest.raises(ValueError, match="padding must be"):
        uncased.encode(LONG, padding="longest_first")
    with pytest.raises(ValueError, match="max_length"):
        uncased.encode(LONG, padding="max_length")


STRATEGIES = ("longest_first", "only_first", "only_second")


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_truncation_matches_hf(uncased: segkit.WordPiece, strategy: str) -> None:
    """(Needs HF tokenizers and the shared data.)  Every strategy, lengths
    from the special tokens + 1 up, single texts and pairs both ways: the
    same ids, or an error on both sides."""
    tokenizers = pytest.importorskip("tokenizers", reason="HuggingFace tokenizers is not installed")
    path = VOCAB_DIR / "bert-base-uncased.tokenizer.json"
    if not path.is_file():
        pytest.skip(f"shared data set not found at {SHARED_DATA}")
    hf = tokenizers.Tokenizer.from_file(str(path))
    both_raise = same = 0
    for args in ((LONG,), (LONG, SHORT), (SHORT, LONG), ("", LONG)):
        nspecial = 1 + len(args)
        for max_length in range(nspecial + 1, 16):
            hf.enable_truncation(max_length, strategy=strategy)
            try:
                want = hf.encode(*args).ids
            except Exception:
                want = None
            try:
                got = uncased.encode(*args, max_length=max_length, truncation=strategy).ids
            except ValueError:
                got = None
            assert got == want, (args, max_length)
            both_raise += want is None
            same += want is not None
    assert same > 20
    # longest_first can always truncate; the others must have met impossible cases
    assert both_raise == 0 if strategy == "longest_first" else both_raise > 5


@pytest.mark.parametrize("strategy", ["only_first", "only_second"])
def test_truncation_zero_budget_like_hf(uncased: segkit.WordPiece, strategy: str) -> None:
    """HF's rule: when max_length equals the number of template tokens, all
    text tokens are dropped whatever the strategy (HF returns
    ``[CLS] [SEP] [SEP]`` for a pair with max_length=3)."""
    assert uncased.encode(LONG, SHORT, max_length=3, truncation=strategy).ids == [CLS, SEP, SEP]
    assert uncased.encode(LONG, max_length=2, truncation=strategy).ids == [CLS, SEP]


# --------------------------------------------------------------- padding
def test_padding_max_length_and_multiple(uncased: segkit.WordPiece) -> None:
    e = uncased.encode(SHORT, max_length=8, padding="max_length")
    assert e.ids == [CLS, *letters("x y z"), SEP, PAD, PAD, PAD]
    assert e.attention_mask == [1] * 5 + [0] * 3
    assert e.special_tokens_mask == [1, 0, 0, 0, 1, 1, 1, 1]
    assert e.type_ids == [0] * 8
    assert e.word_ids == [None, 0, 1, 2, None, None, None, None]
    assert e.offsets[-3:] == [(0, 0)] * 3
    # rounded up to a multiple
    assert len(uncased.encode(SHORT, max_length=10, padding="max_length", pad_to_multiple_of=8)) == 16
    assert len(uncased.encode(SHORT, max_length=16, padding="max_length", pad_to_multiple_of=8)) == 16
    # padding=True pads to the longest, then rounds up
    assert uncased.encode(SHORT, padding=True, pad_to_multiple_of=4).ids == [CLS, *letters("x y z"), SEP, PAD, PAD, PAD]
    # truncation then padding
    e = uncased.encode(LONG, max_length=6, truncation=True, padding="max_length", pad_to_multiple_of=4)
    assert e.ids == [CLS, *letters("a b c d"), SEP, PAD, PAD]
    # no padding asked: the multiple does nothing
    assert len(uncased.encode(SHORT, pad_to_multiple_of=8)) == 5
    # longer than max_length without truncation: left as is
    assert len(uncased.encode(LONG, max_length=4, padding="max_length")) == 10


def test_padding_batch_longest(uncased: segkit.WordPiece) -> None:
    batch = uncased.encode_batch([SHORT, LONG, ""], padding=True)
    assert [len(e) for e in batch] == [10, 10, 10]
    assert batch[2].ids == [CLS, SEP] + [PAD] * 8
    assert batch[0].attention_mask == [1] * 5 + [0] * 5
    batch = uncased.encode_batch([SHORT, ""], padding=True, pad_to_multiple_of=8)
    assert [len(e) for e in batch] == [8, 8]
    pairs = uncased.encode_batch([(SHORT, "q"), ("", "")], padding="longest")
    assert pairs[1].ids == [CLS, SEP, SEP, PAD, PAD, PAD, PAD]
    assert pairs[1].type_ids == [0, 0, 1, 0, 0, 0, 0]
    assert pairs[0].type_ids == [0, 0, 0, 0, 0, 1, 1]


def test_to_numpy(uncased: segkit.WordPiece) -> None:
    np = pytest.importorskip("numpy")
    out = uncased.encode_batch([("a", "b c"), ("x y z", "")]).to_numpy(return_word_ids=True, return_offsets=True)
    assert out["input_ids"].tolist() == [
        [CLS, A, SEP, A + 1, A + 2, SEP],
        [CLS, *letters("x y z"), SEP, SEP],
    ]
    assert out["token_type_ids"].tolist() == [[0, 0, 0, 1, 1, 1], [0, 0, 0, 0, 0, 1]]
    assert out["attention_mask"].tolist() == [[1] * 6, [1] * 6]
    assert out["word_ids"].tolist() == [[-1, 0, -1, 0, 1, -1], [-1, 0, 1, 2, -1, -1]]
    assert out["offset_mapping"].shape == (2, 6, 2)
    assert out["offset_mapping"][0, 4].tolist() == [2, 3]  # "c" in the second text "b c"
    assert out["input_ids"].dtype == np.int64
    assert uncased.encode_batch(["a"]).to_numpy(dtype=np.int32)["input_ids"].dtype == np.int32


# ---------------------------------------------------------------- batches
def test_encode_pairs(uncased: segkit.WordPiece) -> None:
    got = uncased.encode_pairs(["a", "b"], ["c", "d"])
    assert [e.ids for e in got] == [[CLS, A, SEP, A + 2, SEP], [CLS, A + 1, SEP, A + 3, SEP]]
    with pytest.raises(ValueError, match="2 texts but 1 pairs"):
        uncased.encode_pairs(["a", "b"], ["c"])
    with pytest.raises(ValueError, match="must match"):
        uncased.encode_pairs(["a"], ["b", "c"])


@pytest.mark.parametrize(
    "batch",
    [
        [("a", "b"), ("c", "d", "e")],
        ["a", ("b",)],
        ["a", ("b", 1)],
        ["a", None],
    ],
)
def test_bad_batch_item_is_type_error(uncased: segkit.WordPiece, batch) -> None:
    # (batches mixing texts and pairs are fine: tests/test_input_forms.py)
    with pytest.raises(TypeError, match="index 1"):
        uncased.encode_batch(batch)


def test_single_str_batch_is_type_error(uncased: segkit.WordPiece) -> None:
    with pytest.raises(TypeError, match="single str"):
        uncased.encode_batch("a b c")


def test_batch_equals_single_encodes(uncased: segkit.WordPiece) -> None:
    texts = ["Hello, World!", "", "naïve café [MASK]", "日本語のテキスト"]
    batch = uncased.encode_batch(texts)
    for text, e in zip(texts, batch):
        one = uncased.encode(text)
        assert (e.ids, e.offsets, e.word_ids, e.type_ids) == (one.ids, one.offsets, one.word_ids, one.type_ids)
    pairs = list(zip(texts, reversed(texts)))
    for (a, b), e in zip(pairs, uncased.encode_batch(pairs)):
        one = uncased.encode(a, b)
        assert (e.ids, e.offsets, e.word_ids, e.type_ids) == (one.ids, one.offsets, one.word_ids, one.type_ids)


@pytest.mark.parametrize(
    "options", [{}, {"max_length": 12, "truncation": True, "padding": "max_length"}, {"padding": True}]
)
def test_threaded_batch_equals_single_thread(uncased: segkit.WordPiece, options: dict) -> None:
    """``num_threads`` changes nothing but speed (texts and pairs).  The
    batch (600,000 characters) is large enough to be split over threads."""
    np = pytest.importorskip("numpy")
    texts = _sample_texts() * 20
    pairs = list(zip(texts, texts[1:]))
    fields = {"return_special_tokens_mask": True, "return_offsets": True, "return_word_ids": True}
    for inputs in (texts, pairs):
        one = uncased.encode_batch(inputs, **options)
        want = one.to_numpy(**fields)
        assert len(one) == len(inputs)
        for threads in (2, 0):
            many = uncased.encode_batch(inputs, num_threads=threads, **options)
            assert np.array_equal(many.row_splits, one.row_splits), threads
            got = many.to_numpy(**fields)
            for key in want:
                assert np.array_equal(got[key], want[key]), (threads, key)
        # spot-check that the batch result is the per-text result (which
        # padding=True leaves unpadded: compare up to its length)
        for k in (0, len(inputs) // 2, len(inputs) - 1):
            single = uncased.encode(*inputs[k], **options) if inputs is pairs else uncased.encode(inputs[k], **options)
            n = len(single)
            assert one[k].ids[:n] == single.ids and one[k].offsets[:n] == single.offsets
            assert set(one[k].attention_mask[n:]) <= {0}


def test_add_special_tokens_false(uncased: segkit.WordPiece) -> None:
    e = uncased.encode("Hello WORLD", add_special_tokens=False)
    assert e.tokens == ["hello", "world"]
    e = uncased.encode("a", "b", add_special_tokens=False)
    assert e.ids == [A, A + 1]
    assert e.type_ids == [0, 1]


# ----------------------------------------------------------- loading
def test_unknown_pretrained_name_lists_known_names() -> None:
    with pytest.raises(ValueError) as info:
        segkit.WordPiece.from_pretrained("bert-large-cased")
    msg = str(info.value)
    assert "bert-large-cased" in msg
    for name in ("bert-base-uncased", "bert-base-multilingual-cased", "bert-base-chinese"):
        assert name in msg


def test_pretrained_casing() -> None:
    assert segkit.WordPiece.from_pretrained("bert-base-uncased").tokenize("Héllo") == ["hello"]
    cased = segkit.WordPiece.from_pretrained("bert-base-multilingual-cased").tokenize("Héllo")
    assert "".join(t.removeprefix("##") for t in cased) == "Héllo"
    assert segkit.WordPiece.from_pretrained("bert-base-chinese").tokenize("ABC中文") == ["abc", "中", "文"]


VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "##s", ",", "!"]


def tiny_tokenizer_json(**changes) -> dict:
    """A complete, valid HF tokenizer.json with a WordPiece model (by hand)."""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": VOCAB.index(t),
                "content": t,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for t in specials
        ],
        "normalizer": {
            "type": "BertNormalizer",
            "clean_text": True,
            "handle_chinese_chars": True,
            "strip_accents": None,
            "lowercase": True,
        },
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
            ],
            "pair": [
                {"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                {"Sequence": {"id": "B", "type_id": 1}},
                {"SpecialToken": {"id": "[SEP]", "type_id": 1}},
            ],
            "special_tokens": {
                "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]},
            },
        },
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": {t: i for i, t in enumerate(VOCAB)},
        },
    }
    for key, value in changes.items():
        data[key] = value
    return data


def write_json(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_tiny_tokenizer_json_loads(tmp_path: Path) -> None:
    wp = segkit.WordPiece.from_tokenizer_json(write_json(tmp_path / "t.json", tiny_tokenizer_json()))
    e = wp.encode("Hello, WORLDS! [MASK]", "hello")
    assert e.tokens == ["[CLS]", "hello", ",", "world", "##s", "!", "[MASK]", "[SEP]", "hello", "[SEP]"]
    assert e.type_ids == [0] * 8 + [1, 1]
    assert e.offsets[3:5] == [(7, 12), (12, 13)]
    # the same file in HF, when installed
    try:
        import tokenizers
    except ImportError:
        return
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json")).encode("Hello, WORLDS! [MASK]", "hello")
    assert (hf.ids, hf.offsets, hf.type_ids, hf.word_ids) == (e.ids, e.offsets, e.type_ids, e.word_ids)


def test_tokenizer_json_defaults_are_applied(tmp_path: Path) -> None:
    data = tiny_tokenizer_json(
        truncation={"direction": "Right", "max_length": 4, "strategy": "LongestFirst", "stride": 0},
        padding={
            "strategy": {"Fixed": 6},
            "direction": "Right",
            "pad_to_multiple_of": None,
            "pad_id": 0,
            "pad_type_id": 0,
            "pad_token": "[PAD]",
        },
    )
    wp = segkit.WordPiece.from_tokenizer_json(write_json(tmp_path / "t.json", data))
    assert wp.encode("hello world hello").tokens == ["[CLS]", "hello", "world", "[SEP]", "[PAD]", "[PAD]"]
    # explicit options win over the file's defaults
    assert wp.encode("hello world hello", truncation=False, padding=False).tokens == [
        "[CLS]", "hello", "world", "hello", "[SEP]",
    ]


def _bpe_model() -> dict:
    return {"type": "BPE", "dropout": None, "unk_token": "[UNK]", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"model": _bpe_model()}, "BPE"),
        ({"model": {"type": "Unigram", "vocab": [["a", 0.0]], "unk_id": 0}}, "Unigram"),
        ({"normalizer": {"type": "NFKC"}}, "NFKC"),
        ({"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}]}}, "Sequence"),
        ({"pre_tokenizer": {"type": "Whitespace"}}, "Whitespace"),
        ({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}}, "ByteLevel"),
        ({"pre_tokenizer": None}, "pre-tokenizer"),
        ({"post_processor": {"type": "RobertaProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]}}, "Roberta"),
    ],
)
def test_tokenizer_json_unsupported(tmp_path: Path, changes: dict, message: str) -> None:
    path = write_json(tmp_path / "t.json", tiny_tokenizer_json(**changes))
    with pytest.raises(ValueError, match=message) as info:
        segkit.WordPiece.from_tokenizer_json(path)
    assert str(path) in str(info.value)


def test_tokenizer_json_unreadable(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        segkit.WordPiece.from_tokenizer_json(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="bad.json"):
        segkit.WordPiece.from_tokenizer_json(bad)
    no_model = write_json(tmp_path / "nomodel.json", {"version": "1.0"})
    with pytest.raises(ValueError, match="model"):
        segkit.WordPiece.from_tokenizer_json(no_model)


# ------------------------------------------------- saving, loading, pickle
PERSIST_TEXTS = [
    "Hello, World! naïve café",
    "[MASK] İstanbul STRASSE ß Ὀδυσσεύς",
    "日本語のテキストと中文",
    "\x00ctrl\u200bchars\x7f",
    "",
]
PERSIST_PAIRS = list(zip(PERSIST_TEXTS, reversed(PERSIST_TEXTS)))


def snapshot(wp: segkit.WordPiece) -> list:
    out = []
    for options in ({}, {"max_length": 8, "truncation": True, "padding": "max_length"}):
        for inputs in (PERSIST_TEXTS, PERSIST_PAIRS):
            for e in wp.encode_batch(inputs, **options):
                out.append((e.ids, e.offsets, e.type_ids, e.attention_mask, e.special_tokens_mask, e.word_ids))
    out.append([wp.tokenize(t) for t in PERSIST_TEXTS])
    out.append(wp.decode(wp.encode(PERSIST_TEXTS[0]).ids))
    return out


@pytest.mark.parametrize("name", ["bert-base-uncased", "bert-base-multilingual-cased", "bert-base-chinese"])
def test_save_load_and_pickle_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(tmp_path / "cache"))
    built = segkit.WordPiece.from_pretrained(name)  # built, then written to the cache
    assert list((tmp_path / "cache").iterdir()), "from_pretrained did not write its cache"
    from_cache = segkit.WordPiece.from_pretrained(name)  # read back from the cache
    want = snapshot(built)
    assert snapshot(from_cache) == want
    path = tmp_path / f"{name}.segkit"
    built.save(path)
    loaded = segkit.load(path)
    assert isinstance(loaded, segkit.WordPiece)
    assert snapshot(loaded) == want
    assert snapshot(pickle.loads(pickle.dumps(built))) == want
    assert snapshot(pickle.loads(pickle.dumps(loaded))) == want
    assert snapshot(copy.deepcopy(built)) == want
    assert (loaded.lowercase, loaded.template, loaded.special_token_list) == (
        built.lowercase,
        built.template,
        built.special_token_list,
    )


# ------------------------------------------------------------- offsets
def _clean(s: str) -> str:
    """HF BertNormalizer's clean_text deletions, on a span (independent of segkit)."""
    return "".join(
        c for c in s if not (c in "\x00\ufffd" or (unicodedata.category(c) in ("Cc", "Cf", "Co") and c not in "\t\n\r"))
    )


def _uncased_norm(s: str) -> str:
    """clean_text, then NFD minus nonspacing marks, then per-character lowercase."""
    s = "".join(c for c in unicodedata.normalize("NFD", _clean(s)) if unicodedata.category(c) != "Mn")
    return "".join(c.lower() for c in s)


def _sample_texts() -> list[str]:
    with SAMPLE.open(encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    return texts + [
        "  Leading and trailing  ",
        "ÀÉÎÕÜ façade\u0301 e\u0301",
        "İstanbul STRASSE ß ΣΊΣΥΦΟΣ",
        "\x00a\x01b\u200bc\ufffd d\x7f",
        "한국어 텍스트",
        "[MASK]s and [UNK] x[SEP]y",
        "ａｂｃ ﬁne Ⅻ",
    ]


@pytest.mark.parametrize(
    "name,normalize", [("bert-base-multilingual-cased", _clean), ("bert-base-uncased", _uncased_norm)]
)
def test_offsets_index_the_original_text(name: str, normalize) -> None:
    """Each non-special token's span of the ORIGINAL text, normalized as the
    model does, is the token without '##' (a substring of it when one
    character expands to several that land in different tokens, e.g. a
    decomposed Hangul syllable); an [UNK] spans a whole word; offsets
    increase within each sequence."""
    wp = segkit.WordPiece.from_pretrained(name)
    texts = _sample_texts()
    pairs = list(zip(texts, texts[1:]))
    checked = 0
    for enc, src in ((wp.encode_batch(texts), [(t, t) for t in texts]), (wp.encode_batch(pairs), pairs)):
        for e, (first, second) in zip(enc, src):
            spans = [
                (tok, s, e_, t)
                for tok, (s, e_), t, m in zip(e.tokens, e.offsets, e.type_ids, e.special_tokens_mask)
                if not m
            ]
            for k, (tok, s, end, t) in enumerate(spans):
                text = first if t == 0 else second
                span = text[s:end]
                assert 0 <= s < end <= len(text), (tok, s, end, text)
                if tok in ("[MASK]", "[UNK]", "[CLS]", "[SEP]", "[PAD]") and span == tok:
                    continue
                if tok == "[UNK]":
                    assert not any(c.isspace() for c in span), (span, text)
                    continue
                piece = tok[2:] if tok.startswith("##") else tok
                shared = any(
                    (s2, e2, t2) == (s, end, t) for j, (_, s2, e2, t2) in enumerate(spans) if j != k
                )
                if shared:
                    assert piece in normalize(span), (tok, span, text)
                else:
                    assert normalize(span) == piece, (tok, span, text)
                checked += 1
            for a, b in zip(spans, spans[1:]):
                if a[3] == b[3]:
                    assert a[1] <= b[1] and a[2] <= b[2], (a, b)
    assert checked > 5000


def test_offsets_by_hand(uncased: segkit.WordPiece, mbert_wp: segkit.WordPiece) -> None:
    text = "\x00Ünïcode\u200b tëst"
    e = uncased.encode(text, add_special_tokens=False)
    assert "".join(t.removeprefix("##") for t in e.tokens[:-1]) == "unicode"
    # the deleted NUL and ZWSP are outside every span; "tëst" is 10..14
    assert e.offsets[0][0] == 1 and e.offsets[-2][1] == 8
    assert e.tokens[-1] == "test" and e.offsets[-1] == (10, 14)
    e = mbert_wp.encode("Grüße, 世界!", add_special_tokens=False)
    assert [("Grüße, 世界!"[s:t]) for s, t in e.offsets] == [t.removeprefix("##") for t in e.tokens]


# -------------------------------------------------- HF property test
def test_hf_property_random_text() -> None:
    """(Needs HF tokenizers, hypothesis and the shared data.)  Random text over
    an alphabet of hard characters: segkit from_tokenizer_json equals HF on
    ids, offsets and word ids, for bert-base-uncased and multilingual-cased."""
    tokenizers = pytest.importorskip("tokenizers", reason="HuggingFace tokenizers is not installed")
    hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is not installed")
    from hypothesis import strategies as st

    files = [VOCAB_DIR / f"{m}.tokenizer.json" for m in ("bert-base-uncased", "bert-base-multilingual-cased")]
    if not all(f.is_file() for f in files):
        pytest.skip(f"shared data set not found at {SHARED_DATA}")
    pairs = [(tokenizers.Tokenizer.from_file(str(f)), segkit.WordPiece.from_tokenizer_json(f)) for f in files]

    chars = list(
        "aeiouxyzAEXYZéèêëÉÈÖöñÑçÇåÅøØ"  # accented and uppercase letters
        "İıßẞΣσςΆΰŉǅǈ\u0345\u0301\u0308"  # casing and combining oddities
        "\x00\x01\x07\x1b\x7f\x85\u200b\u200d\u2060\ufeff\ufffd\ue000\U000e0001\u0890"  # controls, format
        " \t\n\r\xa0\u2003\u3000\u2028"  # spaces
        ".,!?;:'\"#$%&()*+-/<=>@[\\]^_`{|}~¿¡«»“”—…·、。"  # punctuation and symbols
        "中国日本語한글\u3400\U00020000\U0002b820\U0002b920\uf900"  # CJK and Hangul
        "ﬁⅫ①ａ٣"
    )
    words = ["the", "The", "THE", "unaffable", "hello", "world", "##", "##s", "[MASK]", "[UNK]", "[CLS]", "[SEP]",
             "[PAD]", "naïve", "Straße", "İstanbul", "ΟΔΥΣΣΕΥΣ", "x" * 101, "é" * 60, "日本"]
    text_st = st.lists(st.sampled_from(chars) | st.sampled_from(words), max_size=40).map("".join)

    @hypothesis.settings(max_examples=400, deadline=None, derandomize=True)
    @hypothesis.given(text_st, text_st)
    def check(text: str, pair: str) -> None:
        for hf, wp in pairs:
            for args in ((text,), (text, pair)):
                h = hf.encode(*args)
                s = wp.encode(*args)
                assert (s.ids, s.offsets, s.word_ids) == (h.ids, h.offsets, h.word_ids), args

    check()


@pytest.mark.parametrize("model", ["bert-base-uncased", "bert-base-multilingual-cased"])
def test_hf_unicode_8_tables(model: str) -> None:
    """(Needs HF tokenizers and the shared data.)  Characters whose category
    changed after Unicode 8.0: U+2E43 (Po since 9.0), U+166D (Po in 8.0, So
    now), U+111C9 (Po in 8.0, Mn now), U+0898 (Mn since 14.0)."""
    tokenizers = pytest.importorskip("tokenizers", reason="HuggingFace tokenizers is not installed")
    path = VOCAB_DIR / f"{model}.tokenizer.json"
    if not path.is_file():
        pytest.skip(f"shared data set not found at {SHARED_DATA}")
    hf = tokenizers.Tokenizer.from_file(str(path))
    wp = segkit.WordPiece.from_tokenizer_json(path)
    for c in ("\u2e43", "\u166d", "\U000111c9", "\u0898"):
        text = f"a{c}b"
        h, s = hf.encode(text), wp.encode(text)
        assert (s.ids, s.offsets) == (h.ids, h.offsets), (hex(ord(c)), h.tokens, s.tokens)


def test_single_text_rewritten_far_longer_than_itself(mbert_wp: segkit.WordPiece) -> None:
    """Normalization can make a text several times longer (spaces around
    every CJK character triple it); the single-text path then grows its
    buffers and calls again.  Expected ids come from the vocabulary alone:
    each CJK character is a word and a token of its own."""
    chars = [t for t in mbert_wp.vocab.tokens if len(t) == 1 and "\u4e00" <= t <= "\u9fff"][:500]
    text = "".join(chars * 6)  # 3,000 characters, 9,000 after normalization
    want = [mbert_wp.cls_id] + [mbert_wp.vocab.id(c) for c in text] + [mbert_wp.sep_id]
    single = mbert_wp.encode(text)
    assert single.ids == want
    assert single.offsets[1:-1] == [(i, i + 1) for i in range(len(text))]
    assert mbert_wp.encode_batch([text, "x"])[0].ids == want
    assert mbert_wp.tokenize(text) == list(text)


def test_single_text_expanding_characters_become_one_unknown_word() -> None:
    """Lowercasing U+0130 gives two characters ("i" and a combining dot), so
    2,000 of them make one word of 4,000 characters: longer than the limit
    of 100, hence one [UNK] spanning the whole original text."""
    wp = segkit.WordPiece(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "i", "##i"], lowercase=True, strip_accents=False,
                          template="bert")
    enc = wp.encode("\u0130" * 2000)
    assert enc.ids == [2, 1, 3]
    assert enc.offsets == [(0, 0), (0, 2000), (0, 0)]


@pytest.mark.parametrize(
    "changes,field",
    [
        ({"normalizer": ["BertNormalizer"]}, "'normalizer' must be an object or null, found a list"),
        ({"pre_tokenizer": "BertPreTokenizer"}, "'pre_tokenizer' must be an object or null, found a string"),
        ({"post_processor": [1, 2]}, "'post_processor' must be an object or null"),
        ({"added_tokens": {"content": "[CLS]"}}, "'added_tokens' must be a list or null"),
        ({"added_tokens": ["[CLS]"]}, r"added_tokens\[0\] must be an object"),
        ({"truncation": 128}, "'truncation' must be an object or null, found an integer"),
        ({"padding": [1]}, "'padding' must be an object or null"),
        ({"model": {**tiny_tokenizer_json()["model"], "vocab": [["a", 0]]}}, "model.'vocab' must be an object"),
        ({"model": {**tiny_tokenizer_json()["model"], "unk_token": 1}}, "model.'unk_token' must be a string"),
        ({"model": {**tiny_tokenizer_json()["model"], "max_input_chars_per_word": "100"}}, "max_input_chars_per_word"),
        ({"model": {**tiny_tokenizer_json()["model"], "vocab": {"[UNK]": "1"}}}, "has id '1', expected an integer"),
        ({"model": {**tiny_tokenizer_json()["model"], "vocab": {"[UNK]": 3e9}}}, "has id 3000000000.0, expected an integer"),
        ({"normalizer": {"type": "BertNormalizer", "lowercase": "yes"}}, "normalizer.'lowercase' must be true or false"),
        ({"truncation": {"max_length": "8"}}, "truncation.'max_length' must be an integer"),
        ({"post_processor": {"type": "BertProcessing", "cls": [2, 2], "sep": ["[SEP]", 3]}}, r"post_processor.cls must be \[token, id\]"),
        ({"post_processor": {"type": "TemplateProcessing", "single": "[CLS] $A [SEP]"}}, "unexpected structure"),
    ],
)
def test_tokenizer_json_wrong_types_name_the_field(tmp_path: Path, changes: dict, field: str) -> None:
    # issue 17: a clear ValueError naming the field, not AttributeError.
    path = write_json(tmp_path / "t.json", tiny_tokenizer_json(**changes))
    with pytest.raises(ValueError, match=field) as info:
        segkit.WordPiece.from_tokenizer_json(path)
    assert str(path) in str(info.value)


def _json_paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            if k != "vocab":
                yield from _json_paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _json_paths(v, prefix + (i,))


def test_tokenizer_json_any_field_of_any_type_gives_value_error(tmp_path: Path) -> None:
    # Every field of the tiny file replaced by a value of every JSON type:
    # loading either succeeds or raises ValueError naming the file.
    import copy

    base = tiny_tokenizer_json()
    path = tmp_path / "t.json"
    others = [None, [], {}, "x", -1, 1.5, True, [{}]]
    tried = 0
    for where in list(_json_paths(base))[1:]:
        for value in others:
            data = copy.deepcopy(base)
            node = data
            for k in where[:-1]:
                node = node[k]
            node[where[-1]] = value
            write_json(path, data)
            tried += 1
            try:
                segkit.WordPiece.from_tokenizer_json(path)
            except ValueError as e:
                assert str(path) in str(e) or "vocabulary" in str(e) or "token" in str(e), (where, value, e)
            except Exception as e:  # noqa: BLE001 - the point of the test
                raise AssertionError(f"{where} = {value!r}: {type(e).__name__}: {e}") from None
    assert tried > 300


def test_tokenizer_json_random_structures_give_value_error(tmp_path: Path) -> None:
    # Each top-level field (and each model field) is either the valid value
    # or a random JSON value: loading succeeds or raises ValueError naming
    # the file, never AttributeError/TypeError/KeyError.
    from hypothesis import given, settings
    from hypothesis import strategies as st

    json_values = st.recursive(
        st.none() | st.booleans() | st.integers(-3, 2**40) | st.floats(allow_nan=False) | st.sampled_from(
            ["", "[UNK]", "[CLS]", "BertNormalizer", "BertPreTokenizer", "WordPiece", "TemplateProcessing",
             "BertProcessing", "LongestFirst", "Right"]
        ),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
            st.sampled_from(["type", "id", "ids", "content", "cls", "sep", "single", "pair", "SpecialToken",
                             "Sequence", "max_length", "strategy", "Fixed", "lowercase", "vocab"]), inner, max_size=4),
        max_leaves=12,
    )
    base = tiny_tokenizer_json()
    path = tmp_path / "t.json"

    @settings(max_examples=200, deadline=None)
    @given(st.data())
    def check(data):
        doc = json.loads(json.dumps(base))
        for key in list(doc):
            if data.draw(st.booleans()):
                doc[key] = data.draw(json_values)
        if isinstance(doc.get("model"), dict):
            for key in ["unk_token", "continuing_subword_prefix", "max_input_chars_per_word", "vocab"]:
                if data.draw(st.integers(0, 3)) == 0:
                    doc["model"][key] = data.draw(json_values)
        write_json(path, doc)
        try:
            segkit.WordPiece.from_tokenizer_json(path)
        except ValueError as e:
            assert str(path) in str(e), e

    check()
