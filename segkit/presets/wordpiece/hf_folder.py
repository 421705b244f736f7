"""``WordPiece.from_pretrained`` and ``save_pretrained``: bundled names,
HF model folders, ``vocab.txt`` and ``tokenizer.json`` files.

A folder is what transformers' ``save_pretrained`` writes (and the Hub
holds): ``tokenizer.json`` (read by :mod:`.tokenizer_json`) or, without one,
a BERT ``vocab.txt``, plus ``tokenizer_config.json`` for the settings
transformers keeps outside ``tokenizer.json``: ``model_max_length``,
``do_lower_case`` (for ``vocab.txt``), ``clean_up_tokenization_spaces``.
A name is a bundled model's unless it is written as a path (it holds a
folder separator or starts with ``.``), so that a folder that happens to
be called ``bert-base-uncased`` never replaces the bundled model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...models.bundled import written_as_a_path
from ...runtime.regular_files import check_regular, write_new_file
from ..pipeline.folder_config import read_config  # noqa: F401  (the folder's settings, shared by the presets)

#: transformers' ``model_max_length`` of the bundled BERT models (their
#: Hub ``tokenizer_config.json``: the models' position embeddings).
BUNDLED_MODEL_MAX_LENGTH = 512

#: The largest ``model_max_length`` kept as given (transformers' "no
#: limit" is ``int(1e30)``; a larger or non-int value is refused).
_MAX_LENGTH_LIMIT = int(1e30)


def model_max_length_of(value, where: str) -> int:
    """A checked ``model_max_length``."""
    if isinstance(value, float) and value.is_integer() and value >= 1:
        value = int(min(value, _MAX_LENGTH_LIMIT))
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_LENGTH_LIMIT:
        raise ValueError(f"{where}: model_max_length must be a positive int (at most 1e30), found {value!r:.60}")
    return value


def apply_config(wp, config: dict, where: str):
    """Set what ``tokenizer_config.json`` says that ``tokenizer.json`` does not."""
    if "model_max_length" in config:
        wp.model_max_length = model_max_length_of(config["model_max_length"], where)
    if "clean_up_tokenization_spaces" in config:
        value = config["clean_up_tokenization_spaces"]
        if not isinstance(value, bool):
            raise ValueError(f"{where}: clean_up_tokenization_spaces must be true or false, found {value!r:.60}")
        wp.clean_up_tokenization_spaces = value
    return wp


def load_pretrained(cls, name: str | os.PathLike):
    """See :meth:`segkit.WordPiece.from_pretrained`."""
    from ...models.bundled import BUNDLED_LOWERCASE, BUNDLED_VOCABULARIES, bundled_vocabulary

    if not isinstance(name, (str, os.PathLike)):
        raise TypeError(f"from_pretrained: name must be a bundled name or a path, found {type(name).__name__}")
    text = os.fspath(name)
    if isinstance(name, str) and text in BUNDLED_VOCABULARIES and not written_as_a_path(text):
        wp = cls.bert(bundled_vocabulary(text), lowercase=BUNDLED_LOWERCASE[text])
        wp.model_max_length = BUNDLED_MODEL_MAX_LENGTH
        return wp
    path = Path(text)
    if path.is_dir():
        config = read_config(path)
        where = str(path / "tokenizer_config.json")
        if (path / "tokenizer.json").exists():
            return apply_config(cls.from_tokenizer_json(path / "tokenizer.json"), config, where)
        if (path / "vocab.txt").exists():
            lower = config.get("do_lower_case", True)
            if not isinstance(lower, bool):
                raise ValueError(f"{where}: do_lower_case must be true or false, found {lower!r:.60}")
            return apply_config(cls.bert(path / "vocab.txt", lowercase=lower), config, where)
        raise ValueError(f"{path}: a model folder needs a tokenizer.json or a vocab.txt; found neither")
    if path.exists():
        check_regular(path, "vocab.txt or tokenizer.json", ValueError)
        with open(path, "rb") as fh:
            start = fh.read(64).lstrip()
        if start.startswith(b"{"):
            return cls.from_tokenizer_json(path)
        return cls.bert(path)  # a vocab.txt: BERT's pipeline, lowercasing as BertTokenizer does by default
    known = ", ".join(sorted(BUNDLED_VOCABULARIES))
    raise ValueError(f"from_pretrained: {text!r} is neither a bundled name ({known}) nor an existing file or folder")


def save_pretrained(wp, folder: str | os.PathLike) -> list[str]:
    """See :meth:`segkit.WordPiece.save_pretrained`."""
    from .tokenizer_json import write_tokenizer_json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    special = {f"{role}_token": wp._special_token(role) for role in ("unk", "sep", "pad", "cls", "mask")}
    special = {k: v for k, v in special.items() if v is not None}
    config = {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": bool(wp.lowercase),
        "model_max_length": int(wp.model_max_length),
        "clean_up_tokenization_spaces": bool(wp.clean_up_tokenization_spaces),
        **special,
    }
    written = []
    target = folder / "tokenizer.json"
    write_tokenizer_json(wp, target)
    written.append(str(target))
    for name, data in (("tokenizer_config.json", config), ("special_tokens_map.json", special)):
        target = folder / name
        write_new_file(target, (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        written.append(str(target))
    return written
