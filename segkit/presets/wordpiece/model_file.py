"""The WordPiece model file: what ``save`` stores and how ``segkit.load``
reads it back, every value validated (see ``docs/saving.rst``)."""

from __future__ import annotations

import numpy as np

from ...models.parts import (
    automaton_arrays,
    automaton_from_arrays,
    valid_id_mask,
    vocabulary_and_keys,
    vocabulary_state,
)
from . import added_tokens as _added
from .settings import SETTINGS, boundary_classes, check_setting_types, check_settings, engine_config


def model_state(wp) -> tuple[dict, dict, dict]:
    """``(config, arrays, blobs)`` of a :class:`~segkit.WordPiece`."""
    aconf, arrays = automaton_arrays(wp.automaton, "automaton")
    varrays, blobs = vocabulary_state(wp.vocab)
    arrays.update(varrays)
    st = wp._stages  # one state: settings and added tokens together
    arrays["rewrite.packed"] = st.matcher.rewrite
    config = {k: st.settings[k] for k in SETTINGS}
    config["automaton"] = aconf
    config["has_rewrite"] = True
    if st.added is not None:
        config["added_tokens"] = _added.added_state(st)
    extra = transformers_state(wp)
    if extra:
        config["transformers"] = extra
    return config, arrays, blobs


def transformers_state(wp) -> dict:
    """transformers' settings that differ from the class defaults
    (``model_max_length``, ``clean_up_tokenization_spaces``)."""
    cls = type(wp)
    return {k: getattr(wp, k) for k in ("model_max_length", "clean_up_tokenization_spaces")
            if getattr(wp, k) != getattr(cls, k)}


def restore_transformers(wp, state, source: str) -> None:
    """Set what :func:`transformers_state` gave, checked."""
    from .hf_folder import model_max_length_of

    if state is None:
        return
    if not isinstance(state, dict) or set(state) - {"model_max_length", "clean_up_tokenization_spaces"}:
        raise ValueError(f"{source}: invalid transformers settings {state!r:.100}")
    if "model_max_length" in state:
        wp.model_max_length = model_max_length_of(state["model_max_length"], source)
    if "clean_up_tokenization_spaces" in state:
        if not isinstance(state["clean_up_tokenization_spaces"], bool):
            raise ValueError(f"{source}: clean_up_tokenization_spaces must be a bool")
        wp.clean_up_tokenization_spaces = state["clean_up_tokenization_spaces"]


def from_model(cls, config: dict, arrays: dict, blobs: dict, source: str):
    """A WordPiece from a model file's parts, everything validated: the
    settings as the constructor checks them, the vocabulary, the automaton
    (structure, ids, and an engine configuration equal to the one the
    settings imply).  The normalization tables are rebuilt from the
    settings (cached per process) and must equal the stored ones."""
    missing = [k for k in SETTINGS if k not in config]
    if missing:
        raise ValueError(f"{source}: settings {missing} are missing")
    settings = {k: config[k] for k in SETTINGS}
    check_setting_types(settings)
    vocab, keys = vocabulary_and_keys(arrays, blobs, source=source)
    check_settings(settings, vocab)
    automaton = automaton_from_arrays(
        config["automaton"], arrays, "automaton", source, valid_id_mask(vocab), keys,
        boundary_classes(settings),
    )
    expected = engine_config(settings, vocab)
    if automaton.config != expected:
        raise ValueError(f"{source}: the automaton's configuration {automaton.config} does not match the "
                         f"settings, which imply {expected}")
    obj = cls.__new__(cls)
    obj._assemble(vocab, automaton, settings, None)
    _added.restore_added(obj, config.get("added_tokens"), source)
    restore_transformers(obj, config.get("transformers"), source)
    try:
        obj._check_pad_id(obj.pad_id, settings)
    except ValueError as e:
        raise ValueError(f"{source}: {e}") from None
    stored = arrays.get("rewrite.packed")
    if stored is not None and not np.array_equal(stored, obj._rewrite):
        raise ValueError(f"{source}: invalid normalization tables: they are not the ones the settings give")
    return obj
