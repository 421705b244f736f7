"""Tiny SentencePiece BPE models trained by the peer, one per option set,
for tests (each trains in well under a second on the bundled sample)."""

from __future__ import annotations

import io
import json
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent / "data" / "multilingual-sample.jsonl"

#: name -> trainer options (and "edit": changes made to the model afterwards)
OPTIONS: dict[str, dict] = {
    # nmt_nfkc charsmap, remove_extra_whitespaces, unk for rare characters
    "nfkc": {"normalization_rule_name": "nmt_nfkc", "character_coverage": 0.98, "vocab_size": 600},
    # identity, byte fallback, digits split, user-defined symbols
    "bytes": {"normalization_rule_name": "identity", "byte_fallback": True, "split_digits": True,
              "user_defined_symbols": ["<sep>", "[X]", "ab", "北京"], "remove_extra_whitespaces": False,
              "character_coverage": 0.99},
    # whitespace as suffix, nmt_nfkc_cf (case folding)
    "suffix": {"normalization_rule_name": "nmt_nfkc_cf", "treat_whitespace_as_suffix": True,
               "character_coverage": 0.995},
    # no dummy prefix; some pieces marked UNUSED after training (resegmentation)
    "unused": {"normalization_rule_name": "nfkc", "add_dummy_prefix": False, "byte_fallback": True,
               "edit": "unused"},
    # a character of longer pieces is no piece itself (edited: the piece
    # renamed): merges start from symbols without an id (the span encoder)
    "nochar": {"normalization_rule_name": "identity", "byte_fallback": True, "edit": "drop_char"},
    # spaces not escaped (edited), whitespace-only pieces allowed
    "spaces": {"normalization_rule_name": "identity", "allow_whitespace_only_pieces": True,
               "remove_extra_whitespaces": False, "edit": "no_escape"},
}


def sample_texts() -> list[str]:
    with open(SAMPLE, encoding="utf-8") as fh:
        return [json.loads(line)["text"] for line in fh]


def train(name: str, directory: Path) -> Path:
    """Train the model ``name`` of :data:`OPTIONS` into ``directory``."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    options = dict(OPTIONS[name])
    edit = options.pop("edit", None)
    writer = io.BytesIO()
    texts = sample_texts()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(texts + ["  spaced   out  text  ", "1234567 89"]),
                                   model_writer=writer, model_type="bpe", vocab_size=options.pop("vocab_size", 1600), hard_vocab_limit=False,
                                   num_threads=1, minloglevel=2, **options)
    proto = pb.ModelProto()
    proto.ParseFromString(writer.getvalue())
    if edit == "unused":
        k = 0
        for p in proto.pieces:
            if p.type == 1 and len(p.piece) >= 2:
                k += 1
                if k % 5 == 0:
                    p.type = 5
    elif edit == "drop_char":
        longer = "".join(p.piece for p in proto.pieces if p.type == 1 and len(p.piece) > 1)
        dropped = 0
        for i, p in enumerate(proto.pieces):
            if p.type == 1 and len(p.piece) == 1 and p.piece in longer and p.piece in "aeiouéè":
                p.piece = f"\u2603{i}"
                dropped += 1
        assert dropped >= 3, dropped
    elif edit == "no_escape":
        proto.normalizer_spec.escape_whitespaces = False
    path = Path(directory) / f"{name}.model"
    path.write_bytes(proto.SerializeToString())
    return path
