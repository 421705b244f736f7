"""What a transformers user types (issue 34, item 5), on WordPiece: the
names of ``PreTrainedTokenizerFast`` (``vocab_size``, ``len()``,
``convert_ids_to_tokens``, ``convert_tokens_to_ids``, ``batch_decode``,
``*_token_id``), ``model_max_length`` from bundled names and model folders,
``from_pretrained`` of folders and files, and ``save_pretrained`` folders
that transformers loads.  The reference is transformers itself, loading the
folder segkit wrote (so the folder's loadability is checked too)."""

from __future__ import annotations

import json
import pickle

import pytest

import segkit

TEXTS = ["Hello, world! Don't panic.", "naïve café résumé", "The QUICK brown fox", "中文 and 日本語", ""]


@pytest.fixture(scope="module")
def uncased():
    return segkit.WordPiece.from_pretrained("bert-base-uncased")


@pytest.fixture(scope="module")
def folder(uncased, tmp_path_factory):
    path = tmp_path_factory.mktemp("bert-folder")
    uncased.save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def hf(folder):
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    return transformers.AutoTokenizer.from_pretrained(str(folder))


def test_bundled_names_know_their_model_max_length(uncased):
    # transformers' bert-base-uncased has model_max_length 512: truncation=True
    # without max_length must cap there (a BERT model fails on 1,002 ids).
    assert uncased.model_max_length == 512
    ids = uncased(" ".join(["word"] * 1000), truncation=True)["input_ids"]
    assert len(ids) == 512 and ids[0] == uncased.cls_id and ids[-1] == uncased.sep_id


def test_transformers_loads_the_folder_with_the_same_settings(uncased, hf):
    assert type(hf).__name__.startswith("BertTokenizer")
    assert hf.model_max_length == uncased.model_max_length == 512
    long = " ".join(["word"] * 1000)
    for text in [*TEXTS, long]:
        assert hf(text, truncation=True)["input_ids"] == uncased(text, truncation=True)["input_ids"], text


def test_sizes_and_special_tokens_as_transformers(uncased, hf):
    assert uncased.vocab_size == hf.vocab_size == 30522
    assert len(uncased) == len(hf)
    for role in ("unk", "cls", "sep", "pad", "mask", "bos", "eos"):
        assert getattr(uncased, f"{role}_token") == getattr(hf, f"{role}_token"), role
        assert getattr(uncased, f"{role}_token_id") == getattr(hf, f"{role}_token_id"), role


def test_convert_ids_and_tokens_as_transformers(uncased, hf):
    ids = hf("Hello, world! zzqqx", "second")["input_ids"]
    assert uncased.convert_ids_to_tokens(ids) == hf.convert_ids_to_tokens(ids)
    assert uncased.convert_ids_to_tokens(ids, skip_special_tokens=True) == \
        hf.convert_ids_to_tokens(ids, skip_special_tokens=True)
    assert uncased.convert_ids_to_tokens(ids[1]) == hf.convert_ids_to_tokens(ids[1])
    tokens = ["hello", "##s", "zzqqx-not-a-token", "[CLS]"]
    assert uncased.convert_tokens_to_ids(tokens) == hf.convert_tokens_to_ids(tokens)
    assert uncased.convert_tokens_to_ids("zzqqx-not-a-token") == hf.convert_tokens_to_ids("zzqqx-not-a-token")
    np = pytest.importorskip("numpy")
    assert uncased.convert_ids_to_tokens(np.array(ids)) == hf.convert_ids_to_tokens(ids)


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("clean", [None, False, True])
def test_batch_decode_as_transformers(uncased, hf, skip, clean):
    batch = hf(TEXTS, ["a pair , isn't it ?"] * len(TEXTS))["input_ids"]
    ours = uncased.batch_decode(batch, skip_special_tokens=skip, clean_up_tokenization_spaces=clean)
    assert ours == hf.batch_decode(batch, skip_special_tokens=skip, clean_up_tokenization_spaces=clean)


def test_model_max_length_survives_save_load_and_pickle(uncased, tmp_path):
    uncased.save(tmp_path / "m.segkit")
    assert segkit.load(tmp_path / "m.segkit").model_max_length == 512
    assert pickle.loads(pickle.dumps(uncased)).model_max_length == 512
    plain = segkit.WordPiece.bert(["[UNK]", "[CLS]", "[SEP]", "a"])
    assert pickle.loads(pickle.dumps(plain)).model_max_length == segkit.WordPiece.model_max_length


def test_from_pretrained_of_a_folder_a_tokenizer_json_and_a_vocab_txt(folder, tmp_path):
    wp = segkit.WordPiece.from_pretrained(folder)
    assert wp.model_max_length == 512 and wp.tokenize("Hello") == ["hello"]
    assert segkit.WordPiece.from_tokenizer_json(folder).model_max_length == 512
    assert segkit.WordPiece.from_pretrained(folder / "tokenizer.json").tokenize("Hello") == ["hello"]
    # A vocab.txt gets BERT's pipeline: lowercased, as transformers' BertTokenizer by default.
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n", encoding="utf-8")
    assert segkit.WordPiece.from_pretrained(vocab).encode("HELLO").tokens == ["[CLS]", "hello", "[SEP]"]
    # A folder with a vocab.txt and do_lower_case false: cased.
    cased = tmp_path / "cased"
    cased.mkdir()
    (cased / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n", encoding="utf-8")
    (cased / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False, "model_max_length": 64}))
    wp = segkit.WordPiece.from_pretrained(cased)
    assert wp.tokenize("HELLO hello") == ["[UNK]", "hello"] and wp.model_max_length == 64


def test_a_bundled_name_wins_over_a_folder_of_that_name_unless_written_as_a_path(tmp_path, monkeypatch):
    fake = tmp_path / "bert-base-uncased"
    fake.mkdir()
    (fake / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert segkit.WordPiece.from_pretrained("bert-base-uncased").vocab_size == 30522
    assert segkit.WordPiece.from_pretrained("./bert-base-uncased").vocab_size == 5


@pytest.mark.parametrize("config, found", [
    ({"model_max_length": "512"}, "model_max_length must be a positive int"),
    ({"model_max_length": 0}, "model_max_length must be a positive int"),
    ({"do_lower_case": "yes"}, "do_lower_case must be true or false"),
    ([1, 2], "expected a JSON object, found list"),
])
def test_a_bad_tokenizer_config_names_the_file_and_the_field(tmp_path, config, found):
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n", encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(ValueError, match=found) as e:
        segkit.WordPiece.from_pretrained(tmp_path)
    assert "tokenizer_config.json" in str(e.value)


def test_an_unknown_name_lists_the_bundled_ones():
    with pytest.raises(ValueError, match="bert-base-uncased"):
        segkit.WordPiece.from_pretrained("no-such-model")


def test_saved_files_have_the_permissions_of_any_new_file(uncased, tmp_path):
    import os

    old = os.umask(0o022)
    try:
        uncased.save_pretrained(tmp_path / "f")
    finally:
        os.umask(old)
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        assert (tmp_path / "f" / name).stat().st_mode & 0o777 == 0o644, name
