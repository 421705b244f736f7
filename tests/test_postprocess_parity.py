"""Post-processing against HuggingFace ``tokenizers``: templates other than
BERT's, truncation with overflow and stride (both strategies' rules for
pairs, both directions), left padding, ``pad_type_id``,
``pad_to_multiple_of``; through keyword arguments, through tokenizer.json
read by segkit and through tokenizer.json written by segkit.

The vocabulary is the part of bert-base-multilingual-cased the bundled
multilingual sample uses (small: built in milliseconds); every comparison
reads every field of HF's ``Encoding`` and of its ``overflowing`` list (one
level: the overflowing encodings' own ``overflowing``, which HF fills with
repeats for pairs, are not reproduced).
"""

from __future__ import annotations

import json

import pytest

import segkit

tokenizers = pytest.importorskip("tokenizers", reason="the peer HuggingFace tokenizers is not installed")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

TEMPLATES = {
    "bert": "bert",
    "none": None,
    "roberta": {"single": "[CLS] $A [SEP]", "pair": "[CLS] $A [SEP] [SEP] $B [SEP]"},
    "types": {"single": "[CLS]:2 $A:1 [SEP]:3", "pair": "[CLS]:0 $A:1 [SEP] $B:0 [SEP]:1"},
    "b-first": {"single": "$A [SEP]", "pair": "[CLS] $B:1 [MASK]:1 $A:0"},
    "multi": {"single": "<x> $A [SEP]", "pair": "<x> $A:0 [SEP] $B:1 <x>:1", "special_tokens": {"<x>": [2, 4]}},
    "bare": {"single": "$A:3", "pair": "$B:1 $A:0"},
}


@pytest.fixture(scope="module")
def sample_texts(multilingual_sample) -> list[str]:
    return [r["text"] for r in multilingual_sample]


@pytest.fixture(scope="module")
def small_vocab(mbert, sample_texts) -> list[str]:
    """Specials first (ids 0-4), then every token the sample needs."""
    used = {t for text in sample_texts for t in mbert.tokenize(text)}
    return SPECIALS + sorted(used - set(SPECIALS))


_BUILT: dict = {}


def build(vocab: list[str], template_name: str, tmp_path_factory) -> tuple:
    """``(segkit WordPiece, HF Tokenizer)`` on ``vocab`` with a template,
    the HF one loaded from the tokenizer.json segkit writes."""
    if template_name not in _BUILT:
        wp = segkit.WordPiece.bert(vocab, lowercase=False, template=TEMPLATES[template_name], special_tokens=SPECIALS)
        path = tmp_path_factory.mktemp("tj") / "tokenizer.json"
        wp.save_tokenizer_json(path)
        _BUILT[template_name] = (wp, path)
    wp, path = _BUILT[template_name]
    return wp, tokenizers.Tokenizer.from_file(str(path))


def fields(e) -> dict:
    return {
        "ids": e.ids,
        "tokens": e.tokens,
        "type_ids": e.type_ids,
        "attention_mask": e.attention_mask,
        "special_tokens_mask": e.special_tokens_mask,
        "offsets": [tuple(o) for o in e.offsets],
        "word_ids": e.word_ids,
        "sequence_ids": e.sequence_ids,
        "n_sequences": e.n_sequences,
    }


def same(ours, theirs, where: str, post_processor: bool = True) -> None:
    fa, fb = fields(ours), fields(theirs)
    if not post_processor:
        # Without a post-processor, HF gives padding tokens sequence id 0.
        fb["sequence_ids"] = [None if m == 0 else q for q, m in zip(fb["sequence_ids"], fb["attention_mask"])]
    assert fa == fb, where
    assert len(ours.overflowing) == len(theirs.overflowing), where
    for k, (a, b) in enumerate(zip(ours.overflowing, theirs.overflowing)):
        fa, fb = fields(a), fields(b)
        if not post_processor:
            fb["sequence_ids"] = [None if m == 0 else q for q, m in zip(fb["sequence_ids"], fb["attention_mask"])]
        if not post_processor and a.n_sequences == 2:
            # Without a post-processor, HF does not mark the sequences of the
            # overflowing encodings of a pair (only one of them, or none,
            # has sequence ids); segkit marks both, as with any template.
            for key in ("sequence_ids", "n_sequences"):
                del fa[key], fb[key]
        assert fa == fb, f"{where}, overflowing[{k}]"


def hf_configure(hf, *, max_length=None, strategy="longest_first", stride=0, tdir="right", padding=None, pdir="right",
                 pad_type_id=0, multiple=None, pad_id=0) -> None:
    hf.no_truncation()
    hf.no_padding()
    if max_length is not None:
        hf.enable_truncation(max_length, stride=stride, strategy=strategy, direction=tdir)
    if padding is not None:
        hf.enable_padding(direction=pdir, pad_id=pad_id, pad_type_id=pad_type_id, pad_token="[PAD]",
                          length=None if padding == "longest" else padding, pad_to_multiple_of=multiple)


def outcome(fn):
    """``("ok", value)`` or ``("error", None)`` (HF panics count as errors)."""
    try:
        return "ok", fn()
    except (ValueError, Exception) as e:  # noqa: B014
        return "error", e
    except BaseException as e:  # pyo3's PanicException
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return "error", e


CASES = [
    # (template, max_length, strategy, stride, truncation side, padding, padding side, multiple)
    ("bert", 12, "longest_first", 0, "right", None, "right", None),
    ("bert", 12, "longest_first", 2, "right", None, "right", None),
    ("bert", 9, "longest_first", 3, "left", "longest", "left", None),
    ("bert", 14, "only_first", 2, "right", 20, "right", None),
    ("bert", 14, "only_second", 1, "left", "longest", "right", 8),
    ("roberta", 16, "longest_first", 4, "right", "longest", "left", 4),
    ("roberta", 10, "only_first", 0, "left", None, "right", None),
    ("types", 11, "longest_first", 2, "right", 24, "left", None),
    ("b-first", 10, "longest_first", 1, "left", "longest", "right", None),
    ("multi", 13, "only_second", 2, "right", "longest", "right", 5),
    ("bare", 6, "longest_first", 2, "right", None, "right", None),
    ("none", 7, "longest_first", 3, "left", "longest", "left", None),
    ("bert", 3, "longest_first", 0, "right", None, "right", None),  # a budget of 1 or 0
    ("bert", 5, "longest_first", 0, "right", "longest", "right", None),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(x) for x in c))
def test_pairs_and_singles_match_hf(case, small_vocab, sample_texts, tmp_path_factory) -> None:
    name, max_length, strategy, stride, tdir, padding, pdir, multiple = case
    wp, hf = build(small_vocab, name, tmp_path_factory)
    hf_configure(hf, max_length=max_length, strategy=strategy, stride=stride, tdir=tdir, padding=padding, pdir=pdir,
                 multiple=multiple)
    kw = dict(max_length=max_length, truncation=strategy, stride=stride, truncation_side=tdir, padding_side=pdir,
              pad_to_multiple_of=multiple, padding=False if padding is None else "longest" if padding == "longest" else "max_length")
    texts = sample_texts[:120]
    compared = 0
    for i, text in enumerate(texts):
        pair = texts[(i * 7 + 3) % len(texts)]
        for args in ((text,), (text, pair)):
            theirs = outcome(lambda: hf.encode(*args))
            if isinstance(padding, int):
                # segkit's max_length serves truncation and padding; HF's
                # padding length is its own: pass both through the settings.
                ours = outcome(lambda: _fixed_pad_encode(wp, args, kw, padding))
            else:
                ours = outcome(lambda: wp.encode(*args, **kw))
            assert ours[0] == theirs[0], (args, ours, theirs)
            if ours[0] == "ok":
                same(ours[1], theirs[1], repr(args), name != "none")
                compared += 1
    assert compared >= 15


def _fixed_pad_encode(wp, args, kw, length):
    """Truncation to max_length and padding to another length: an explicit
    max_length serves both, so both come from the tokenizer's settings."""
    wp2 = _with_settings(
        wp,
        truncation={"max_length": kw["max_length"], "strategy": kw["truncation"], "stride": kw["stride"],
                    "direction": kw["truncation_side"]},
        padding={"length": length, "pad_to_multiple_of": kw["pad_to_multiple_of"], "direction": kw["padding_side"]},
    )
    return wp2.encode(*args)


def _with_settings(wp, **changes):
    s = dict(wp._settings, **changes)
    return type(wp)._from_parts(wp.vocab, wp.automaton, s, wp._rewrite)


@pytest.mark.parametrize("name", ["bert", "roberta", "types", "multi"])
def test_batches_match_hf(name, small_vocab, sample_texts, tmp_path_factory) -> None:
    """encode_batch: batch padding (longest of the kept encodings), the
    overflowing encodings of every item, the flat matrices."""
    wp, hf = build(small_vocab, name, tmp_path_factory)
    texts = sample_texts[:200]
    pairs = [(t, texts[(i * 11 + 5) % len(texts)]) for i, t in enumerate(texts)]
    for batch in (texts, pairs):
        hf_configure(hf, max_length=24, stride=5, tdir="left", padding="longest", pdir="left", pad_type_id=0,
                     multiple=8)
        theirs = hf.encode_batch(batch)
        ours = wp.encode_batch(batch, max_length=24, truncation=True, stride=5, truncation_side="left",
                               padding=True, padding_side="left", pad_to_multiple_of=8)
        assert len(ours) == len(theirs)
        for k, (a, b) in enumerate(zip(ours, theirs)):
            same(a, b, f"item {k}")
        # Matrices of every encoding, overflowing ones included (transformers' layout).
        m = ours.to_numpy(include_overflowing=True, return_offsets=True)
        every = [e for b in theirs for e in [b] + b.overflowing]
        assert m["input_ids"].tolist() == [e.ids for e in every]
        assert m["token_type_ids"].tolist() == [e.type_ids for e in every]
        assert m["attention_mask"].tolist() == [e.attention_mask for e in every]
        assert m["offset_mapping"].tolist() == [[list(o) for o in e.offsets] for e in every]
        owner = [i for i, b in enumerate(theirs) for _ in range(1 + len(b.overflowing))]
        assert m["overflow_to_sample_mapping"].tolist() == owner
        assert ours.overflow_to_sample_mapping.tolist() == owner


def test_tokenizer_json_settings_round_trip(small_vocab, sample_texts, tmp_path) -> None:
    """HF's truncation (stride, direction) and padding (direction,
    pad_type_id, pad_to_multiple_of) and a template read from its
    tokenizer.json give HF's encodings with segkit's defaults; written back,
    HF reads the same settings."""
    base = segkit.WordPiece.bert(small_vocab, lowercase=False, special_tokens=SPECIALS)
    path = tmp_path / "base.json"
    base.save_tokenizer_json(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    hf.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS]:1 $A:0 [SEP]:2", pair="[CLS] $A [SEP] $B:1 [MASK]:1 [SEP]:0",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3), ("[MASK]", 4)],
    )
    hf_configure(hf, max_length=24, strategy="only_first", stride=2, tdir="left", padding="longest", pdir="left",
                 pad_type_id=3, multiple=4)
    src = tmp_path / "hf.json"
    src.write_text(hf.to_str(), encoding="utf-8")
    wp = segkit.WordPiece.from_tokenizer_json(src)
    assert wp.truncation == {"max_length": 24, "strategy": "only_first", "stride": 2, "direction": "left"}
    assert wp.padding == {"length": None, "pad_to_multiple_of": 4, "direction": "left", "pad_type_id": 3}
    out = tmp_path / "segkit.json"
    wp.save_tokenizer_json(out)
    hf2 = tokenizers.Tokenizer.from_file(str(out))
    assert json.loads(hf2.to_str())["truncation"] == json.loads(hf.to_str())["truncation"]
    assert json.loads(hf2.to_str())["padding"] == json.loads(hf.to_str())["padding"]
    assert json.loads(hf2.to_str())["post_processor"] == json.loads(hf.to_str())["post_processor"]
    texts = sample_texts[:80]
    batch = []
    for i, text in enumerate(texts):
        pair = texts[-1 - i]
        for args in ((text,), (text, pair)):
            theirs = outcome(lambda: hf.encode(*args))
            ours = outcome(lambda: wp.encode(*args))
            assert ours[0] == theirs[0], args
            if ours[0] == "ok":
                same(ours[1], theirs[1], repr(args))
                same(ours[1], hf2.encode(*args), repr(args))
                if len(args) == 2:
                    batch.append(args)
    assert len(batch) > 20
    for a, b in zip(wp.encode_batch(batch), hf.encode_batch(batch)):
        same(a, b, "batch")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(sorted(TEMPLATES)),
    max_length=st.integers(0, 30),
    strategy=st.sampled_from(["longest_first", "only_first", "only_second"]),
    stride=st.integers(0, 6),
    tdir=st.sampled_from(["right", "left"]),
    pdir=st.sampled_from(["right", "left"]),
    multiple=st.sampled_from([None, 1, 3, 8]),
    pad=st.booleans(),
    i=st.integers(0, 299),
    j=st.integers(0, 299),
    paired=st.booleans(),
    add=st.booleans(),
)
def test_hypothesis_matches_hf(name, max_length, strategy, stride, tdir, pdir, multiple, pad, i, j, paired, add,
                               small_vocab, sample_texts, tmp_path_factory) -> None:
    wp, hf = build(small_vocab, name, tmp_path_factory)
    args = (sample_texts[i], sample_texts[j]) if paired else (sample_texts[i],)
    theirs = outcome(lambda: (hf_configure(hf, max_length=max_length, strategy=strategy, stride=stride, tdir=tdir,
                                           padding="longest" if pad else None, pdir=pdir, multiple=multiple),
                              hf.encode(*args, add_special_tokens=add))[1])
    ours = outcome(lambda: wp.encode(*args, max_length=max_length, truncation=strategy, stride=stride,
                                     truncation_side=tdir, padding=pad, padding_side=pdir,
                                     pad_to_multiple_of=multiple, add_special_tokens=add))
    nspec = hf.post_processor.num_special_tokens_to_add(paired) if hf.post_processor and add else 0
    if max_length < nspec:
        # HF's max_length minus the special tokens wraps around (no
        # truncation at all); segkit says what is wrong.
        assert ours[0] == "error" and "smaller than" in str(ours[1])
        return
    assert ours[0] == theirs[0], (args, ours, theirs)
    if ours[0] == "ok":
        same(ours[1], theirs[1], repr(args), name != "none")


def test_sequence_ids_without_type_ids(small_vocab, tmp_path_factory) -> None:
    """A template whose type ids are all 0 still tells the sequences apart."""
    wp, _ = build(small_vocab, "roberta", tmp_path_factory)
    e = wp.encode("a b", "c")
    assert e.type_ids == [0] * len(e)
    assert e.sequence_ids[-2] == 1 and e.token_to_sequence(1) == 0
    assert e.token_to_sequence(len(e) - 2) == 1
    assert e.word_to_tokens(0, sequence_index=1) == (len(e) - 2, len(e) - 1)


def test_template_errors(small_vocab) -> None:
    with pytest.raises(ValueError, match="must hold \\$A and \\$B"):
        segkit.WordPiece(small_vocab, template={"single": "$A", "pair": "$A [SEP]"})
    with pytest.raises(ValueError, match="neither in"):
        segkit.WordPiece(small_vocab, template={"single": "<nope> $A"})
    with pytest.raises(ValueError, match="type id"):
        segkit.WordPiece(small_vocab, template={"single": "$A:x"})
    wp = segkit.WordPiece.bert(small_vocab, lowercase=False)
    with pytest.raises(ValueError, match="stride"):
        wp.encode("a b c d e f g h i j", max_length=5, truncation=True, stride=3)
    with pytest.raises(ValueError, match="truncation_side"):
        wp.encode("a", truncation_side="middle")


@pytest.mark.parametrize("model", ["bert-base-multilingual-cased", "bert-base-uncased"])
def test_shared_corpus_overflow_matches_hf(model, shared_data) -> None:
    """The real tokenizer.json files on 1,000 texts of the corpus, as pairs
    and single texts: truncation with stride in both directions, left
    padding, the overflowing encodings of every item."""
    src = shared_data / "vocab" / f"{model}.tokenizer.json"
    wp = segkit.WordPiece.from_tokenizer_json(src)
    hf = tokenizers.Tokenizer.from_file(str(src))
    with (shared_data / "corpus" / "multilingual-1000.jsonl").open(encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    pairs = list(zip(texts[::2], texts[1::2]))
    for tdir, pdir in (("right", "left"), ("left", "right")):
        hf_configure(hf, max_length=32, stride=8, tdir=tdir, padding="longest", pdir=pdir, pad_type_id=1, pad_id=0)
        for batch in (texts, pairs):
            theirs = hf.encode_batch(batch)
            wp_pad = _with_settings(wp, padding={"direction": pdir, "pad_type_id": 1})
            ours = wp_pad.encode_batch(batch, max_length=32, truncation=True, stride=8, truncation_side=tdir)
            assert sum(len(e.overflowing) for e in theirs) > 500
            for k, (a, b) in enumerate(zip(ours, theirs)):
                same(a, b, f"{tdir}/{pdir} item {k}")


def test_enable_methods_match_hf(small_vocab, sample_texts, tmp_path_factory) -> None:
    """HF's stateful settings, set the same way on both sides."""
    wp, hf = build(small_vocab, "types", tmp_path_factory)
    wp = _with_settings(wp)  # a copy: the shared one keeps its settings
    for side in ("left", "right"):
        wp.enable_truncation(15, stride=3, strategy="only_second", direction=side)
        wp.enable_padding(direction=side, pad_type_id=7, pad_to_multiple_of=4)
        hf.enable_truncation(15, stride=3, strategy="only_second", direction=side)
        hf.enable_padding(direction=side, pad_id=0, pad_type_id=7, pad_token="[PAD]", pad_to_multiple_of=4)
        assert wp.pad_type_id == 7
        batch = [(t, sample_texts[(i * 5 + 1) % 60]) for i, t in enumerate(sample_texts[:60]) if len(t) < 60]
        theirs = outcome(lambda: hf.encode_batch(batch))
        ours = outcome(lambda: wp.encode_batch(batch))
        assert ours[0] == theirs[0]
        if ours[0] == "ok":
            for a, b in zip(ours[1], theirs[1]):
                same(a, b, side)
            m = ours[1].to_numpy()
            assert m["token_type_ids"].tolist() == [e.type_ids for e in theirs[1]]
    wp.no_truncation()
    wp.no_padding()
    hf.no_truncation()
    hf.no_padding()
    same(wp.encode(sample_texts[2], sample_texts[3]), hf.encode(sample_texts[2], sample_texts[3]), "reset")
    with pytest.raises(ValueError, match="stride"):
        wp.enable_truncation(5, stride=4)
    with pytest.raises(ValueError, match="pad_token"):
        wp.enable_padding(pad_token="<nope>")


def test_settings_survive_save_pickle_and_json(small_vocab, sample_texts, tmp_path) -> None:
    import pickle

    wp = segkit.WordPiece.bert(small_vocab, lowercase=False, template=TEMPLATES["multi"],
                               truncation={"max_length": 20, "strategy": "longest_first", "stride": 4, "direction": "left"},
                               padding={"length": None, "pad_to_multiple_of": 8, "direction": "left", "pad_type_id": 2})
    wp.save(tmp_path / "m.segkit")
    wp.save_tokenizer_json(tmp_path / "t.json")
    copies = [pickle.loads(pickle.dumps(wp)), segkit.load(tmp_path / "m.segkit"),
              segkit.WordPiece.from_tokenizer_json(tmp_path / "t.json")]
    args = (sample_texts[2], sample_texts[5])
    want = wp.encode(*args)
    assert want.overflowing and want.tokens[0] == "[PAD]"
    for other in copies:
        assert other.template == wp.template
        same(other.encode(*args), want, type(other).__name__)
    same(want, tokenizers.Tokenizer.from_file(str(tmp_path / "t.json")).encode(*args), "HF")
