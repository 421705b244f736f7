"""What a HF model folder says outside ``tokenizer.json``, read once for
every preset: ``tokenizer_config.json`` and ``special_tokens_map.json``
(the tokens of transformers' roles: ``bos_token``, ``eos_token``, ...).

transformers writes a role's token as a string or as an ``AddedToken``
object (``{"content": ..., ...}``); ``special_tokens_map.json`` wins over
``tokenizer_config.json``, as in transformers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...runtime.regular_files import check_regular

#: transformers' role names, as in :mod:`segkit.presets.transformers_names`.
ROLES = ("unk", "cls", "sep", "pad", "mask", "bos", "eos")


def _read_json_object(path: Path) -> dict:
    if not path.exists():
        return {}
    check_regular(path, path.name, ValueError)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        raise ValueError(f"{path}: not a JSON file ({type(e).__name__}: {str(e)[:200]})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def read_config(folder: Path) -> dict:
    """``tokenizer_config.json`` of ``folder`` (an empty dict without one);
    ValueError naming the file for one that is not a JSON object."""
    return _read_json_object(folder / "tokenizer_config.json")


def role_tokens(folder: Path) -> dict[str, str]:
    """The token of each role the folder names (``{"bos": "<s>", ...}``):
    ``special_tokens_map.json`` over ``tokenizer_config.json``; a value
    that is neither a string nor an object with a string ``content`` is a
    ValueError naming the file and the key.

    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "tokenizer_config.json").write_text(json.dumps({"bos_token": {"content": "<s>"}, "eos_token": "</s>"}))
    >>> role_tokens(d)
    {'bos': '<s>', 'eos': '</s>'}
    """
    roles: dict[str, str] = {}
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        data = _read_json_object(folder / name)
        for role in ROLES:
            key = f"{role}_token"
            if key not in data or data[key] is None:
                continue
            value = data[key]
            if isinstance(value, dict):
                value = value.get("content")
            if not isinstance(value, str) or not value:
                raise ValueError(f"{folder / name}: {key} must be a token (a string or an object with a "
                                 f"string content), found {data[key]!r:.80}")
            roles[role] = value
    return roles


def write_folder(folder: str | os.PathLike, doc: dict, roles: dict[str, str],
                 model_max_length: int | None = None) -> list[str]:
    """Write ``tokenizer.json`` (``doc``), ``tokenizer_config.json``
    (transformers' ``PreTrainedTokenizerFast``, the role tokens
    ``{"eos_token": ...}``, ``model_max_length``) and
    ``special_tokens_map.json`` (the roles) into ``folder`` (made if
    missing), each through :func:`segkit.runtime.regular_files.write_new_file`;
    returns the paths written."""
    from ...runtime.regular_files import write_new_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = {"tokenizer_class": "PreTrainedTokenizerFast", **roles}
    if model_max_length is not None:
        config["model_max_length"] = int(model_max_length)
    written = []
    for name, data in (("tokenizer.json", doc), ("tokenizer_config.json", config),
                       ("special_tokens_map.json", roles)):
        target = folder / name
        write_new_file(target, (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
        written.append(str(target))
    return written
