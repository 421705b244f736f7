"""The child process of ``tests/test_api_fuzz.py``: hypothesis over the
argument values and types of every public entry point of one group.

Each entry point is called with valid arguments but one, which hypothesis
draws from anything (None, bools, huge and negative ints, floats, short
strings with odd characters, bytes, lists, dicts, an object) or from values
near the valid ones.  A call must return, or raise an exception the library
documents for bad input (:class:`TypeError` or :class:`ValueError` and their
subclasses, :class:`FileNotFoundError` for a path), whose message names the
argument.  Anything else (another exception, a message that does not say
which argument is wrong, a crash, a hang, a memory blow-up) is a failure;
the parent runs this under a timeout and an address-space limit.

Usage: ``python tests/api_fuzz_child.py GROUP MAX_EXAMPLES``; prints ``ok
N`` (calls made) or the first failure and exits 1.
"""

from __future__ import annotations

import importlib.util
import sys
import traceback
import warnings
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import segkit

ALLOWED = (TypeError, ValueError, FileNotFoundError, IsADirectoryError)

ODD_TEXT = st.text(st.sampled_from("ab ,.中\u3000\n\t\x00\ufeff😀é\u0301#[]"), max_size=8)
ANYTHING = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.integers(-3, 40), st.floats(allow_nan=True),
    ODD_TEXT, st.text(max_size=6), st.binary(max_size=6), st.lists(st.integers(-3, 3), max_size=3),
    st.lists(ODD_TEXT, max_size=3), st.dictionaries(st.text(max_size=3), st.integers(-2, 5), max_size=2),
    st.just(object()), st.just("\ud800"), st.just(["a", "\udfff"]),
)

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "##a", "##b", "ab", ",", "中"]
calls = 0


def check(entry: str, arg: str, names: tuple[str, ...], fn, value) -> None:
    """Call ``fn(value)``; a failure is reported with everything needed to
    reproduce it."""
    global calls
    calls += 1
    allowed = ALLOWED + ((IndexError,) if entry.startswith("decode") else ())  # (an id no token has)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(value)
    except allowed as e:
        message = str(e)
        if not any(n in message for n in names):
            raise AssertionError(f"{entry}({arg}={value!r:.80}): {type(e).__name__} does not name {arg}: "
                                 f"{message[:300]}") from None
    except BaseException as e:  # noqa: BLE001 - the point
        raise AssertionError(f"{entry}({arg}={value!r:.80}) raised {type(e).__name__}: {e}\n"
                             + "".join(traceback.format_exception(e))[-3000:]) from None


def fuzz(entry: str, arg: str, names, fn, values=ANYTHING) -> None:
    """Hypothesis over ``fn(value)`` for the argument ``arg``."""

    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None, report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck))
    @given(values)
    def run(value):
        check(entry, arg, names, fn, value)

    run()


# ------------------------------------------------------------------ groups
def wordpiece() -> None:
    wp = segkit.WordPiece.bert(VOCAB)
    text = "ab, ba 中 a"
    opts = {"max_length": ("max_length",), "truncation": ("truncation",), "padding": ("padding",),
            "pad_to_multiple_of": ("pad_to_multiple_of",), "stride": ("stride",),
            "truncation_side": ("truncation_side",), "padding_side": ("padding_side",)}
    lengths = st.one_of(ANYTHING, st.integers(0, 12))
    for opt, names in opts.items():
        values = lengths if opt in ("max_length", "pad_to_multiple_of", "stride") else ANYTHING
        base = {"max_length": 8, "truncation": True} if opt == "stride" else {}
        fuzz("encode", opt, names, lambda v, o=opt, b=base: wp.encode(text, "a b", **{**b, o: v}), values)
        fuzz("encode_batch", opt, names, lambda v, o=opt, b=base: wp.encode_batch([text, ("a", "b")], **{**b, o: v}),
             values)
        fuzz("__call__", opt, names + ("do_not_pad", "do_not_truncate"),
             lambda v, o=opt, b=base: wp([text, "b"], **{**b, o: v}), values)
    fuzz("encode", "text", ("text",), lambda v: wp.encode(v))
    fuzz("encode", "pair", ("pair",), lambda v: wp.encode(text, v))
    fuzz("encode_batch", "texts", ("text",), lambda v: wp.encode_batch(v))
    fuzz("encode_batch", "texts", ("text", "pair"), lambda v: wp.encode_batch([text, v]))
    fuzz("encode_batch", "num_threads", ("num_threads",), lambda v: wp.encode_batch([text], num_threads=v))
    fuzz("tokenize", "text", ("text",), lambda v: wp.tokenize(v))
    fuzz("encode_ids", "text", ("text",), lambda v: wp.encode_ids(v))
    fuzz("__call__", "text", ("text",), lambda v: wp(v))
    fuzz("__call__", "text_pair", ("text", "pair"), lambda v: wp(text, v))
    fuzz("__call__", "return_tensors", ("return_tensors",), lambda v: wp([text], return_tensors=v))
    fuzz("decode", "ids", ("id",), lambda v: wp.decode(v))
    fuzz("decode_batch", "sequences", ("id", "sequence"), lambda v: wp.decode_batch(v))
    fuzz("add_tokens", "tokens", ("token",), lambda v: segkit.WordPiece.bert(VOCAB).add_tokens(v))
    fuzz("add_tokens", "tokens[0]", ("token",), lambda v: segkit.WordPiece.bert(VOCAB).add_tokens([v]))
    fuzz("enable_truncation", "max_length", ("max_length",),
         lambda v: segkit.WordPiece.bert(VOCAB).enable_truncation(v))
    fuzz("enable_padding", "length", ("length",), lambda v: segkit.WordPiece.bert(VOCAB).enable_padding(length=v))
    fuzz("WordPiece", "vocab", ("vocab", "token"), lambda v: segkit.WordPiece(v))
    for kw in ("suffix_indicator", "unk_token", "max_input_chars_per_word", "cjk", "special_tokens", "template",
               "flavour", "duplicates", "truncation", "padding"):
        fuzz("WordPiece", kw, (kw, "token", "template", "special"),
             lambda v, k=kw: segkit.WordPiece.bert(VOCAB, **{k: v}))
    if importlib.util.find_spec("pyarrow") is None:
        return
    fuzz("encode_arrow", "texts", ("text",), lambda v: wp.encode_arrow(v))
    fuzz("encode_arrow", "null", ("null",), lambda v: wp.encode_arrow(["a", None], null=v))


def chinese() -> None:
    seg = segkit.ChineseMaxMatch(["北京", "大学", "北京大学"])
    fuzz("cut", "text", ("text",), lambda v: seg.cut(v))
    fuzz("tokenize", "text", ("text",), lambda v: seg.tokenize(v))
    fuzz("cut_batch", "texts", ("text",), lambda v: seg.cut_batch(v))
    fuzz("cut_batch", "num_threads", ("num_threads",), lambda v: seg.cut_batch(["北京"], num_threads=v))
    fuzz("add_word", "word", ("word",), lambda v: segkit.ChineseMaxMatch(["北京"]).add_word(v))
    fuzz("del_word", "word", ("word",), lambda v: segkit.ChineseMaxMatch(["北京"]).del_word(v))
    fuzz("ChineseMaxMatch", "dictionary", ("dictionary", "word"), lambda v: segkit.ChineseMaxMatch(v))
    for kw in ("mode", "alnum_runs", "keep_whitespace"):
        fuzz("ChineseMaxMatch", kw, (kw,), lambda v, k=kw: segkit.ChineseMaxMatch(["北京"], **{k: v}))
    if importlib.util.find_spec("pyarrow") is None:
        return
    fuzz("cut_arrow", "texts", ("text",), lambda v: seg.cut_arrow(v))


def training() -> None:
    docs = ["low lower newest widest", "hello world"]
    values = st.one_of(ANYTHING, st.integers(250, 400))
    fuzz("train_bpe", "vocab_size", ("vocab_size",), lambda v: segkit.train_bpe(docs, v, show_progress=False), values)
    fuzz("train_bpe", "corpus", ("corpus", "document", "training file"),
         lambda v: segkit.train_bpe(v, 300, show_progress=False))
    for kw in ("special_tokens", "pattern", "num_threads", "errors"):
        fuzz("train_bpe", kw, (kw, "special token"),
             lambda v, k=kw: segkit.train_bpe(docs, 300, show_progress=False, **{k: v}))
    values = st.one_of(ANYTHING, st.integers(0, 60))
    fuzz("train_wordpiece", "vocab_size", ("vocab_size",),
         lambda v: segkit.train_wordpiece(docs, v, show_progress=False), values)
    fuzz("train_wordpiece", "corpus", ("corpus", "document", "training file"),
         lambda v: segkit.train_wordpiece(v, 60, show_progress=False))
    for kw in ("special_tokens", "min_frequency", "limit_alphabet", "suffix_indicator", "num_threads", "errors",
               "lowercase"):
        fuzz("train_wordpiece", kw, (kw, "special token"),
             lambda v, k=kw: segkit.train_wordpiece(docs, 60, show_progress=False, **{k: v}), values)


def others() -> None:
    mm = segkit.MaxMatch([b"a", b"aa", b"b", bytes([0xE4])], unknown=9)
    fuzz("MaxMatch.encode", "text", ("text",), lambda v: mm.encode(v))
    fuzz("MaxMatch.encode_batch", "texts", ("text",), lambda v: mm.encode_batch(v))
    fuzz("MaxMatch.encode_batch", "num_threads", ("num_threads",), lambda v: mm.encode_batch(["ab"], num_threads=v))
    fuzz("MaxMatch", "tokens", ("token",), lambda v: segkit.MaxMatch(v))
    for kw in ("unit", "direction", "ids", "unknown"):
        fuzz("MaxMatch", kw, (kw, "id"), lambda v, k=kw: segkit.MaxMatch([b"a", b"b"], **{k: v}))
    rwkv = segkit.RWKVWorld()
    fuzz("RWKVWorld.encode", "text", ("text",), lambda v: rwkv.encode(v))
    fuzz("RWKVWorld.decode", "ids", ("id",), lambda v: rwkv.decode(v))
    # issue 32: step(5.5) decoded id 5; errors='bogus' passed until first use
    fuzz("RWKVWorld.stream_decoder().step", "token_id", ("id",), lambda v: rwkv.stream_decoder().step(v))
    fuzz("RWKVWorld.stream_decoder().feed", "ids", ("id",), lambda v: rwkv.stream_decoder().feed(v))
    fuzz("RWKVWorld.stream_decoder", "errors", ("errors",), lambda v: rwkv.stream_decoder(errors=v))
    fuzz("RWKVWorld.decode", "errors", ("errors",), lambda v: rwkv.decode([33155], errors=v))
    bpe = segkit.BPE.from_pretrained("gpt2")
    fuzz("BPE.encode", "text", ("text",), lambda v: bpe.encode(v))
    fuzz("BPE.encode", "allowed_special", ("allowed_special", "special"),
         lambda v: bpe.encode("a <|endoftext|>", allowed_special=v))
    fuzz("BPE.encode", "disallowed_special", ("disallowed_special", "special"),
         lambda v: bpe.encode("a <|endoftext|>", disallowed_special=v))
    fuzz("BPE.encode_ordinary", "text", ("text",), lambda v: bpe.encode_ordinary(v))
    fuzz("BPE.encode_batch", "texts", ("text",), lambda v: bpe.encode_batch(v))
    fuzz("BPE.encode_batch", "num_threads", ("num_threads",), lambda v: bpe.encode_batch(["ab"], num_threads=v))
    fuzz("BPE.decode", "ids", ("id", "token"), lambda v: bpe.decode(v))
    fuzz("BPE.count", "text", ("text",), lambda v: bpe.count(v))
    vocab = {bytes([b]): b for b in range(256)}
    fuzz("BPE", "special_tokens", ("special", "id"), lambda v: segkit.BPE(vocab, [], special_tokens=v))
    fuzz("BPE", "pattern", ("pattern",), lambda v: segkit.BPE(vocab, [], pattern=v).encode("Hello world"))
    fuzz("BPE.from_pretrained", "name", ("name", "pretrained"), lambda v: segkit.BPE.from_pretrained(v))
    fuzz("Vocabulary.load", "source", ("vocab", "token", "file"), lambda v: segkit.Vocabulary.load(v))
    fuzz("Vocabulary.load", "duplicates", ("duplicates",), lambda v: segkit.Vocabulary.load(["a", "a"], duplicates=v))
    # paths of the wrong type, or naming nothing (random bytes in files are
    # tools/fuzz_models.py's and tests/test_tokenizer_json_fuzz.py's)
    missing = str(Path(__file__).with_name("no-such-file"))
    paths = st.one_of(ANYTHING, st.just(missing))
    fuzz("load", "path", ("path", "model file", "not found", "str"), lambda v: segkit.load(v), paths)
    fuzz("WordPiece.from_tokenizer_json", "path", ("path", "tokenizer.json", "not found", "str"),
         lambda v: segkit.WordPiece.from_tokenizer_json(v), paths)


GROUPS = {"wordpiece": wordpiece, "chinese": chinese, "training": training, "others": others}

if __name__ == "__main__":
    sys.stdout.reconfigure(errors="backslashreplace")  # (values with lone surrogates)
    group, MAX_EXAMPLES = sys.argv[1], int(sys.argv[2])
    try:
        GROUPS[group]()
    except AssertionError as e:
        print(f"FAILED after {calls} calls: {e}")
        sys.exit(1)
    print(f"ok {calls}")
