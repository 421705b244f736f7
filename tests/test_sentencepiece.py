"""segkit.SentencePieceBPE against sentencepiece (issue 31 part 1).

Ids equal ``SentencePieceProcessor.encode`` and decoding equals its
``decode`` on tiny models the peer trains here, one per option set
(tests/spm_models.py: nmt_nfkc with unk, identity with byte fallback, digits
split and user-defined symbols, whitespace as suffix with case folding,
UNUSED pieces, unescaped spaces) and on Mistral's models shipped with
mistral_common (v1, v3, v7); the naive reference (tests/spm_reference.py)
is checked against the peer on the same inputs first.
"""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path

import pytest

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is not installed")
pytest.importorskip("google.protobuf", reason="protobuf is not installed")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

import segkit  # noqa: E402
from segkit import ModelFileError  # noqa: E402

import spm_models  # noqa: E402
from spm_reference import ReferenceBPE  # noqa: E402

MISTRAL = ("tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3",
           "mistral_instruct_tokenizer_241114.model.v7")

EDGES = [
    "", " ", "   ", "\t\n", "  spaced   out  text  ", "\u2581 lead \u2581\u2581", "１２３ ｶﾀｶﾅ ＡＢＣ ﬁ ǅ",
    "ab北京<sep>[X]x[X][X]ab", "😀🤖 emoji 👩‍👩‍👧", "1234567890 3.14159", "a" * 300, "ab" * 150,
    "\u3000ideographic\u00a0nbsp\u2003em", "[REFERENCE_DOC_1][/REF]x [INST] <s></s>", "\x00\x01 controls \x7f",
    "Ω≈ç√∫ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \U0010fffd \ufeff", "e\u0301 combining",
]


@pytest.fixture(scope="session")
def trained(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("spm")
    return {name: spm_models.train(name, directory) for name in spm_models.OPTIONS}


def _mistral(name: str) -> Path:
    mc = pytest.importorskip("mistral_common", reason="mistral_common is not installed")
    path = Path(mc.__file__).parent / "data" / name
    if not path.is_file():
        pytest.skip(f"{path} is not in this mistral_common")
    return path


@pytest.fixture(scope="session")
def models(trained) -> dict:
    """name -> (segkit model, peer, path) for every trained model; Mistral's are added by _model()."""
    return {}


def _model(models: dict, trained: dict, name: str):
    if name not in models:
        path = trained[name] if name in trained else _mistral(name)
        models[name] = (segkit.SentencePieceBPE(path), spm.SentencePieceProcessor(model_file=str(path)), path)
    return models[name]


ALL = [*spm_models.OPTIONS, *MISTRAL]
TEXTS = spm_models.sample_texts() + EDGES


@pytest.mark.parametrize("name", ALL)
def test_the_reference_matches_sentencepiece(models, trained, name) -> None:
    _, sp, path = _model(models, trained, name)
    ref = ReferenceBPE(str(path))
    for text in TEXTS[::3] + EDGES:
        assert ref.encode(text) == sp.encode(text), text


@pytest.mark.parametrize("name", ALL)
def test_ids_pieces_and_decoding_match_sentencepiece(models, trained, name) -> None:
    model, sp, _ = _model(models, trained, name)
    for text in TEXTS:
        ids = sp.encode(text)
        assert model.encode(text) == ids, text
        assert model.tokenize(text) == [sp.id_to_piece(i) for i in ids], text  # unk as <unk>, not its text
        assert model.decode(ids) == sp.decode(ids), ids
    assert model.encode_batch(TEXTS) == [sp.encode(t) for t in TEXTS]
    assert model.encode_batch(TEXTS, num_threads=2) == [sp.encode(t) for t in TEXTS]


def test_the_options_are_the_ones_meant(models, trained) -> None:
    """Each trained model exercises what its name says (else the exactness
    tests above would prove less than they claim)."""
    got = {name: _model(models, trained, name)[0] for name in spm_models.OPTIONS}
    assert got["nfkc"].settings["normalizer_name"] == "nmt_nfkc" and got["nfkc"].settings["remove_extra_whitespaces"]
    assert any(got["nfkc"].encode(t).count(got["nfkc"].unk_id) for t in TEXTS)  # unk is emitted
    b = got["bytes"]
    assert b.settings["byte_fallback"] and b.settings["split_digits"]
    assert [b.piece_type(b.piece_to_id(u)) for u in ("<sep>", "[X]", "ab", "北京")] == ["USER_DEFINED"] * 4
    assert any(b.piece_type(i) == "BYTE" for t in TEXTS for i in b.encode(t))
    assert got["suffix"].settings["treat_whitespace_as_suffix"]
    u = got["unused"]
    assert sum(u.piece_type(i) == "UNUSED" for i in range(len(u))) > 20 and not u.settings["add_dummy_prefix"]
    assert not got["spaces"].settings["escape_whitespaces"]
    from segkit.presets.sentencepiece import kernels as K

    fast = {name: bool(m._t.flags[K.F_FAST]) for name, m in got.items()}
    assert fast == {name: name != "nochar" for name in got}, fast


@pytest.mark.parametrize("name", [*spm_models.OPTIONS, "tokenizer.model.v1", "mistral_instruct_tokenizer_240323.model.v3"])
def test_the_span_encoder_matches_too(models, trained, name) -> None:
    """The encoder on spans (run when some character of a piece is no
    piece) gives the peer's ids on every model, forced where the faster
    encoder on ids would run."""
    from segkit.presets.sentencepiece import kernels as K
    from segkit.presets.sentencepiece.tables import packed

    model, sp, path = _model(models, trained, name)
    slow = segkit.SentencePieceBPE(path)
    slow._t.flags[K.F_FAST] = 0
    slow._args = packed(slow._t)
    assert slow.encode_batch(TEXTS) == [sp.encode(t) for t in TEXTS]


def _corpus(shared_data: Path, n: int | None) -> list[str]:
    with open(shared_data / "corpus" / "multilingual.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh]
    random.Random(31).shuffle(texts)
    return texts if n is None else texts[:n]


@pytest.mark.parametrize("name", MISTRAL)
def test_mistral_models_on_the_multilingual_corpus(models, trained, shared_data, name) -> None:
    model, sp, _ = _model(models, trained, name)
    texts = _corpus(shared_data, 3000)
    assert model.encode_batch(texts) == sp.encode(texts)


@pytest.mark.slow
@pytest.mark.parametrize("name", MISTRAL)
def test_mistral_models_on_the_whole_corpus(models, trained, shared_data, name) -> None:
    model, sp, _ = _model(models, trained, name)
    texts = _corpus(shared_data, None)
    assert model.encode_batch(texts) == sp.encode(texts)
    joined = " ".join(texts[:2000])  # one long text
    assert model.encode(joined) == sp.encode(joined)


_ALPHABET = st.sampled_from([" ", "  ", "\t", "\n", "\u3000", "\u00a0", "\u2581", "0", "7", "12", "a", "b", "ab",
                             "e", "é", "e\u0301", "x", "Q", "北", "京", "北京", "ｶ", "ﬁ", "😀", "🤖", "\U0001f9ec",
                             "\u0378", "\U000e0041", "<sep>", "[X]", "<s>", "[REF]", "the", " the", ".", ","])
_TEXTS = st.one_of(st.lists(_ALPHABET, max_size=30).map("".join), st.text(max_size=40))


@pytest.mark.parametrize("name", ALL)
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=_TEXTS)
def test_hypothesis_ids_and_decode(models, trained, name, text) -> None:
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates (refused: see below)
    model, sp, _ = _model(models, trained, name)
    ids = sp.encode(text)
    assert model.encode(text) == ids
    assert model.decode(ids) == sp.decode(ids)


@pytest.mark.parametrize("name", ["bytes", "nfkc", "tokenizer.model.v1"])
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_hypothesis_decode_of_any_ids(models, trained, name, data) -> None:
    model, sp, _ = _model(models, trained, name)
    ids = data.draw(st.lists(st.integers(0, len(model) - 1), max_size=20))
    assert model.decode(ids) == sp.decode(ids)


def test_long_runs_match(models, trained) -> None:
    model, sp, _ = _model(models, trained, "bytes")
    for text in ["a" * 5000, "ab" * 3000, " " * 2000 + "x", "北京" * 1000, "9" * 4000]:
        assert model.encode(text) == sp.encode(text)


def test_save_load_and_pickle(models, trained, tmp_path) -> None:
    for name in ("nfkc", "bytes", "unused"):
        model, sp, _ = _model(models, trained, name)
        path = tmp_path / f"{name}.segkit"
        model.save(path)
        for other in (segkit.load(path), segkit.SentencePieceBPE.load(path), pickle.loads(pickle.dumps(model))):
            assert isinstance(other, segkit.SentencePieceBPE)
            assert other.encode_batch(TEXTS[:60] + EDGES) == [sp.encode(t) for t in TEXTS[:60] + EDGES]
            assert other.settings == model.settings


def test_bad_arguments(models, trained) -> None:
    model, _, _ = _model(models, trained, "bytes")
    with pytest.raises(TypeError, match="text"):
        model.encode(b"bytes")
    with pytest.raises(ValueError, match="surrogate"):
        model.encode("a\ud800b")
    with pytest.raises(TypeError, match="texts"):
        model.encode_batch("one string")
    with pytest.raises(ValueError, match=r"texts\[2\]"):
        model.encode_batch(["a", "b", "c\udc00"], num_threads=2)
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        model.encode_batch(["a", 5])
    with pytest.raises(ValueError, match="ids"):
        model.decode([len(model)])
    with pytest.raises(ValueError, match="ids"):
        model.decode([-1])
    with pytest.raises(TypeError, match="ids"):
        model.decode(None)
    assert model.piece_to_id("no such piece") == model.unk_id


# ----------------------------------------------------------------- bad files
def _proto(path: Path):
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(path.read_bytes())
    return proto


def _write(tmp_path: Path, proto, name: str = "bad.model") -> Path:
    path = tmp_path / name
    path.write_bytes(proto.SerializeToString())
    return path


def test_unigram_is_refused_by_name(tmp_path) -> None:
    writer = __import__("io").BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(spm_models.sample_texts()), model_writer=writer,
                                   model_type="unigram", vocab_size=1000, hard_vocab_limit=False, character_coverage=0.98, minloglevel=2)
    path = tmp_path / "uni.model"
    path.write_bytes(writer.getvalue())
    with pytest.raises(ModelFileError, match=r"uni\.model: trainer_spec\.model_type: model_type UNIGRAM is not supported yet"):
        segkit.SentencePieceBPE(path)


@pytest.mark.parametrize("edit, field", [
    (lambda p: setattr(p.pieces[5], "score", float("nan")), r"pieces\[5\]\.score"),
    (lambda p: setattr(p.pieces[6], "piece", p.pieces[7].piece), r"pieces\[7\]\.piece: .* is already defined"),
    (lambda p: setattr(p.pieces[0], "type", 1), r"pieces: expected one piece of type UNKNOWN, found 0"),
    (lambda p: setattr(p.pieces[9], "type", 2), r"pieces: expected one piece of type UNKNOWN, found 2"),
    (lambda p: setattr(p.pieces[9], "type", 6), r"pieces\[9\].*byte_fallback is false"),
    (lambda p: setattr(p.pieces[9], "piece", ""), r"pieces\[9\]\.piece: empty"),
    (lambda p: setattr(p.pieces[9], "piece", "a\x00b"), r"pieces\[9\]\.piece: contains a NUL"),
    (lambda p: setattr(p.pieces[9], "piece", "x" * 8000), r"pieces\[9\]\.piece: 8000 bytes"),
    (lambda p: setattr(p.trainer_spec, "model_type", 3), r"trainer_spec\.model_type: model_type WORD"),
    (lambda p: setattr(p.normalizer_spec, "precompiled_charsmap", b"\x10\x00\x00\x00abc"), r"normalizer_spec\.precompiled_charsmap: a trie of 16 bytes"),
    (lambda p: setattr(p.denormalizer_spec, "precompiled_charsmap", p.normalizer_spec.precompiled_charsmap),
     r"denormalizer_spec\.precompiled_charsmap"),
])
def test_bad_models_name_the_field(trained, tmp_path, edit, field) -> None:
    proto = _proto(trained["nfkc"])
    edit(proto)
    path = _write(tmp_path, proto)
    with pytest.raises(ModelFileError, match=rf"bad\.model: {field}"):
        segkit.SentencePieceBPE(path)


def test_byte_fallback_needs_all_256_byte_pieces(trained, tmp_path) -> None:
    proto = _proto(trained["bytes"])
    i = next(i for i, p in enumerate(proto.pieces) if p.piece == "<0x41>")
    proto.pieces[i].piece = "<0x4g>"
    with pytest.raises(ModelFileError, match=r"pieces\[\d+\]\.piece: a BYTE piece must be <0xNN>"):
        segkit.SentencePieceBPE(_write(tmp_path, proto))
    proto.pieces[i].type = 1
    with pytest.raises(ModelFileError, match=r"byte_fallback is true but 1 of the 256 byte pieces are missing \(first <0x41>\)"):
        segkit.SentencePieceBPE(_write(tmp_path, proto))


@pytest.mark.parametrize("data, message", [
    (b"", r"pieces: the model has no pieces"),
    (b"\x0a\x05\x0a\x03ab", r"pieces: a length of 3 bytes, but only 1 remain|length of 5"),
    (b"\x0a", r"pieces: the file ends inside a varint"),
    (b"\x0b", r"wire type 3"),
    (b"\x10\x05", r"trainer_spec: expected wire type 2"),
    (b"\x0a\x02\x10\x05", r"pieces\.score: expected wire type 5"),
    (b"\x0a\x02\x18\x09", r"pieces\.type: expected one of"),
    (b"\x0a\x03\x0a\x01\xff", r"pieces\.piece: not UTF-8"),
    (b"\xff" * 11, r"varint longer than 10 bytes"),
])
def test_broken_bytes_name_the_field(tmp_path, data, message) -> None:
    path = tmp_path / "broken.model"
    path.write_bytes(data)
    with pytest.raises(ModelFileError, match=rf"broken\.model: .*(?:{message})"):
        segkit.SentencePieceBPE(path)
    with pytest.raises(ModelFileError, match=r"<bytes>"):
        segkit.SentencePieceBPE.from_bytes(data)


def test_a_missing_file_is_named(tmp_path) -> None:
    with pytest.raises(ModelFileError, match=r"nope\.model: cannot read"):
        segkit.SentencePieceBPE(tmp_path / "nope.model")


# ------------------------------------------------- segkit precompile's models
def test_the_precompile_models_are_what_sentencepiece_reads() -> None:
    """The ``.model`` files ``segkit precompile`` writes itself (its
    protobuf encoder and charsmap builder, segkit.cli.precompile) are read
    by the peer as segkit reads them, and take the paths they are there for."""
    from segkit.cli import precompile
    from segkit.presets.sentencepiece import kernels as K

    texts = precompile.SP_TEXTS + ["\ufb01\u3000\uff21", " Hello  World hello", "world" * 30]
    flags = {}
    for name, data in precompile.sentencepiece_models().items():
        model, peer = segkit.SentencePieceBPE.from_bytes(data, name), spm.SentencePieceProcessor(model_proto=data)
        for text in texts:
            ids = peer.encode(text)
            assert model.encode(text) == ids, (name, text)
            assert model.decode(ids) == peer.decode(ids), (name, ids)
        f = model._t.flags
        flags[name] = (int(f[K.F_SPLIT]), bool(f[K.F_FAST]), bool(f[K.F_HAS_UNUSED]), model.settings["byte_fallback"])
    assert flags == {"bytes": (K.SPLIT_BEFORE, True, False, True), "charsmap": (0, False, False, False),
                     "unused": (0, True, True, True), "suffix": (K.SPLIT_AFTER, True, False, False),
                     "spaces": (K.SPLIT_BEFORE, True, False, False)}, flags
    charsmap = segkit.SentencePieceBPE.from_bytes(precompile.sentencepiece_models()["charsmap"])
    assert charsmap.encode("\ufb01ne \uff21") == charsmap.encode("fine A")  # the charsmap's rules apply


_AFTER_PRECOMPILE = r"""
import pickle, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import segkit
from segkit.cli import precompile
from segkit.runtime import kernel_cache
from segkit.runtime.jit import dispatcher_of


def signatures():
    from numba.core.dispatcher import Dispatcher

    found = {}
    for module_name, module in list(sys.modules.items()):
        if module_name.startswith("segkit"):
            for name, value in list(vars(module).items()):
                d = dispatcher_of(value)
                if isinstance(d, Dispatcher):
                    found[f"{module_name}.{name}"] = len(d.signatures)
    return found


precompile.run(areas=("sentencepiece",))
before = kernel_cache.STATS["loaded"] + kernel_cache.STATS["compiled"]
kernels = signatures()
texts = ["Hello, world! naïve café 東京 😀", "  spaced   out  ", "", "x" * 300]
with tempfile.TemporaryDirectory() as tmp:
    for path in sys.argv[2:]:
        sp = segkit.SentencePieceBPE(path)
        for text in texts:
            sp.decode(sp.encode(text))
        sp.encode(texts[0] * 2000)
        sp.encode_batch(texts)
        sp.encode_batch(texts * 4, num_threads=2)
        sp.save(Path(tmp) / "m.segkit")
        segkit.load(Path(tmp) / "m.segkit").encode_batch(texts)
        pickle.loads(pickle.dumps(sp)).encode(texts[0])
after = kernel_cache.STATS["loaded"] + kernel_cache.STATS["compiled"]
print(after - before, sorted(k for k, n in signatures().items() if n > kernels.get(k, 0)))
"""


def test_precompile_covers_every_sentencepiece_kernel(trained) -> None:
    """After the ``sentencepiece`` exercise of ``segkit precompile``, real
    models (the trained ones, Mistral's) need no kernel that it did not
    compile or load: a specialization it misses would be compiled at a
    user's first call (in a fresh process, so that no earlier test has
    made it)."""
    import subprocess
    import sys

    paths = [str(p) for p in trained.values()]
    try:
        import mistral_common

        data = Path(mistral_common.__file__).parent / "data"
        paths += [str(data / name) for name in MISTRAL if (data / name).is_file()]
    except ImportError:
        pass
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-c", _AFTER_PRECOMPILE, str(root), *paths], capture_output=True,
                         text=True, timeout=600, cwd=root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "0 []", f"new specializations after the exercise (count, kernels): {run.stdout}"
