"""``BPE.save_pretrained`` (and ``Tokenizer.save_pretrained`` over a BPE)
against the peers: the folder written for gpt2, cl100k_base and o200k_base
(and for a tiktoken file with shuffled, non-monotone ranks) loads in HF
``tokenizers`` and transformers with tiktoken's ids (every special token
allowed, as HF matches them all) and decodes as tiktoken does; segkit
reads it back with the same ids.

tiktoken's own encodings (``tiktoken.get_encoding``) run offline from a
cache folder holding the bundled files under the names tiktoken looks for
(it checks their sha256); segkit's ``"gpt2"`` is tiktoken's ``r50k_base``
(tiktoken's ``"gpt2"`` reads GPT-2's original files, which are not
bundled: same ranks, pattern and special token).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit
from segkit.presets.bpe.pretrained import CL100K_PATTERN
from segkit.presets.bpe.to_tokenizer_json import for_oniguruma

tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers is not installed")
tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is not installed")

VOCABS = Path(__file__).resolve().parent.parent / "vocabularies"
URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
#: segkit's name -> (tiktoken's name, bundled file)
NAMES = {"gpt2": ("r50k_base", "gpt2.tiktoken.gz"), "cl100k_base": ("cl100k_base", "cl100k_base.tiktoken.gz"),
         "o200k_base": ("o200k_base", "o200k_base.tiktoken.gz")}

#: What the generated texts are made of: the special tokens, emoji (with
#: modifiers and flags), runs of spaces and newlines, digits, contractions
#: and the characters case folding maps to ASCII (ſ, K).
PIECES = ["<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>", "<|endoftext",
          "🎉", "👍🏽", "🇯🇵", "👨‍👩‍👧", " ", "  ", "      ", "\n", "\n\n", "\r\n", "\t", " \n ", "1", "12", "123",
          "1234567", "3.14159", "'s", "'LL", "'Ve", "ſ", "K", "ǅ", "日本語", "ÉCOLE", "x"]
texts_st = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=6)), max_size=12).map("".join)


@pytest.fixture(scope="module")
def tiktoken_offline(tmp_path_factory):
    """tiktoken's registry, reading the bundled files from a local cache folder."""
    folder = tmp_path_factory.mktemp("tiktoken-cache")
    for name, file in NAMES.values():
        raw = gzip.decompress((VOCABS / file).read_bytes())
        (folder / hashlib.sha1(URL.format(name).encode()).hexdigest()).write_bytes(raw)
    mp = pytest.MonkeyPatch()
    mp.setenv("TIKTOKEN_CACHE_DIR", str(folder))
    yield tiktoken
    mp.undo()


@pytest.fixture(scope="module", params=list(NAMES))
def saved(request, tiktoken_offline, tmp_path_factory):
    """``(segkit's BPE, tiktoken's Encoding, HF's Tokenizer of the saved
    tokenizer.json, the folder)``."""
    name = request.param
    bpe = segkit.BPE.from_pretrained(name)
    folder = tmp_path_factory.mktemp(name)
    written = bpe.save_pretrained(folder)
    assert [Path(p).name for p in written] == ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]
    hf = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    return bpe, tiktoken_offline.get_encoding(NAMES[name][0]), hf, folder


@pytest.fixture(scope="module")
def sample_texts(multilingual_sample) -> list[str]:
    return [row["text"] for row in multilingual_sample]


def test_hf_gives_tiktokens_ids_on_the_sample(saved, sample_texts):
    _, ref, hf, _ = saved
    got = [e.ids for e in hf.encode_batch(sample_texts)]
    want = ref.encode_batch(sample_texts, allowed_special="all")
    assert got == want
    assert hf.decode_batch(got, skip_special_tokens=False) == [ref.decode(ids) for ids in want]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts_st)
def test_hf_gives_tiktokens_ids_on_generated_text(saved, text):
    bpe, ref, hf, _ = saved
    want = ref.encode(text, allowed_special="all")
    ids = hf.encode(text).ids
    assert ids == want
    assert ids == bpe.encode(text, allowed_special="all")
    assert hf.decode(ids, skip_special_tokens=False) == ref.decode(want)


def test_special_tokens_keep_their_ids(saved):
    bpe, ref, hf, _ = saved
    for token, i in bpe.special_tokens.items():
        assert hf.token_to_id(token) == i == ref.encode_single_token(token)
        assert hf.id_to_token(i) == token


def test_segkit_reads_its_folder_back(saved, sample_texts):
    bpe, _, _, folder = saved
    again = segkit.from_pretrained(folder)
    texts = sample_texts + ["a<|endoftext|>b  12345 🎉"]
    assert again.encode_batch(texts) == bpe.encode_batch(texts, allowed_special="all")


def test_transformers_loads_the_folder(saved, sample_texts):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    bpe, _, _, folder = saved
    auto = transformers.AutoTokenizer.from_pretrained(str(folder))
    texts = sample_texts[:20] + ["hello world<|endoftext|>", "   12345678 🎉\n\n x"]
    assert auto(texts)["input_ids"] == bpe.encode_batch(texts, allowed_special="all")
    assert auto.decode(bpe.encode(texts[-1])) == texts[-1]


def test_no_roles_are_invented(saved):
    """A tiktoken file names no roles (eos, pad...): none are written."""
    _, _, _, folder = saved
    assert json.loads((folder / "special_tokens_map.json").read_text()) == {}
    assert json.loads((folder / "tokenizer_config.json").read_text()) == {"tokenizer_class": "PreTrainedTokenizerFast"}


# ------------------------------------------------ a file of shuffled ranks
@pytest.fixture(scope="module")
def shuffled(tiktoken_offline, tmp_path_factory):
    """cl100k_base's first 3000 tokens with their ranks shuffled: the byte
    tokens are not ranks 0..255 in byte order, many tokens rank below their
    parts (non-monotone) and some cannot come out of BPE at all; the
    special token's id leaves a gap after the ranks."""
    ranks = tiktoken_offline.get_encoding("cl100k_base")._mergeable_ranks
    tokens = [t for t, r in sorted(ranks.items(), key=lambda kv: kv[1]) if r < 3000]
    random.Random(7).shuffle(tokens)
    shuffled_ranks = {t: r for r, t in enumerate(tokens)}
    specials = {"<|end|>": len(tokens) + 7, "<|pad|>": len(tokens) + 2}
    folder = tmp_path_factory.mktemp("shuffled")
    path = folder / "shuffled.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in shuffled_ranks.items()))
    bpe = segkit.BPE.from_tiktoken(path, pattern=CL100K_PATTERN, special_tokens=specials)
    ref = tiktoken.Encoding("shuffled", pat_str=CL100K_PATTERN, mergeable_ranks=shuffled_ranks,
                            special_tokens=specials)
    bpe.save_pretrained(folder / "out")
    doc = json.loads((folder / "out" / "tokenizer.json").read_text(encoding="utf-8"))
    assert len(doc["model"]["merges"]) < len(tokens) - 256  # (some tokens have no merge: BPE never makes them)
    assert bpe._tables.non_monotone >= 0
    return bpe, ref, tokenizers.Tokenizer.from_file(str(folder / "out" / "tokenizer.json"))


def test_shuffled_ranks_on_the_sample(shuffled, sample_texts):
    _, ref, hf = shuffled
    texts = sample_texts + ["a<|end|>b<|pad|>", "x" * 50]
    assert [e.ids for e in hf.encode_batch(texts)] == ref.encode_batch(texts, allowed_special="all")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts_st)
def test_shuffled_ranks_on_generated_text(shuffled, text):
    _, ref, hf = shuffled
    assert hf.encode(text).ids == ref.encode(text, allowed_special="all")


# ----------------------------------------------- a BPE from a tokenizer.json
def test_a_bpe_from_a_tokenizer_json_saves_what_hf_runs(saved, sample_texts, tmp_path):
    """A tokenizer.json with a normalizer, ByteLevel's own regex with a
    prefix space, a template and a non-special added token: the file saved
    from segkit's BPE of it gives the original's ids in HF."""
    _, _, _, folder = saved
    doc = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    eot = doc["added_tokens"][0]
    doc["normalizer"] = {"type": "NFKC"}
    doc["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    doc["post_processor"] = {"type": "TemplateProcessing",
                             "single": [{"SpecialToken": {"id": eot["content"], "type_id": 0}},
                                        {"Sequence": {"id": "A", "type_id": 0}}],
                             "pair": [{"SpecialToken": {"id": eot["content"], "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}},
                                      {"SpecialToken": {"id": eot["content"], "type_id": 1}},
                                      {"Sequence": {"id": "B", "type_id": 1}}],
                             "special_tokens": {eot["content"]: {"id": eot["content"], "ids": [eot["id"]],
                                                                 "tokens": [eot["content"]]}}}
    doc["added_tokens"].append({"id": 0, "content": "segkit rocks", "single_word": False, "lstrip": False,
                                "rstrip": False, "normalized": True, "special": False})
    # the id HF gives it (the next free one: len(model.vocab) here, below
    # the ids of cl100k_base's and o200k_base's special tokens)
    doc["added_tokens"][-1]["id"] = tokenizers.Tokenizer.from_str(json.dumps(doc)).token_to_id("segkit rocks")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    original = tokenizers.Tokenizer.from_file(str(tmp_path / "in" / "tokenizer.json"))
    bpe = segkit.BPE.from_tokenizer_json(tmp_path / "in" / "tokenizer.json")
    bpe.save_pretrained(tmp_path / "out")
    resaved = tokenizers.Tokenizer.from_file(str(tmp_path / "out" / "tokenizer.json"))
    texts = sample_texts + ["ｆｕｌｌ width, segkit rocks<|endoftext|>  x", "segkit rocks"]
    want = [e.ids for e in original.encode_batch(texts)]
    assert [e.ids for e in resaved.encode_batch(texts)] == want
    assert bpe.encode_batch(texts) == want


# ------------------------------------------------ a Tokenizer over a BPE
def test_a_tokenizer_over_a_bpe_saves_its_template(saved, sample_texts, tmp_path):
    bpe, ref, _, _ = saved
    tok = segkit.Tokenizer(bpe, template={"single": "<|endoftext|> $A", "pair": "<|endoftext|> $A $B:1"})
    tok.enable_truncation(24)
    tok.save_pretrained(tmp_path)
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert hf.truncation["max_length"] == 24
    texts = sample_texts[:50]
    ours = tok.encode_batch(texts)
    theirs = hf.encode_batch(texts)
    assert [e.ids for e in theirs] == [e.ids for e in ours]
    assert [e.offsets for e in theirs] == [e.offsets for e in ours]
    eot = bpe.special_tokens["<|endoftext|>"]
    want = [eot, *ref.encode("a b"), *ref.encode("c d")]
    assert hf.encode("a b", "c d").ids == tok.encode("a b", "c d").ids == want


# -------------------------------------------------------------- refusals
def test_a_pattern_oniguruma_cannot_compile_is_named(tmp_path):
    path = tmp_path / "bytes.tiktoken"
    path.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    bpe = segkit.BPE.from_tiktoken(path, pattern=r"(?P<word>\w+)|\s")
    with pytest.raises(ValueError, match=r"Oniguruma.*cannot compile the pattern '\(\?P<word>"):
        bpe.save_pretrained(tmp_path / "out")
    assert not (tmp_path / "out" / "tokenizer.json").exists()


def test_tiktoken_patterns_for_oniguruma():
    assert for_oniguruma(CL100K_PATTERN).count("(?>\\p{N}{1,3})") == 1
    assert for_oniguruma(r"[\]^$]+$") == r"[\]^$]+\z"
    with pytest.raises(ValueError, match="flags 'm'"):
        for_oniguruma(r"(?m)^a")
