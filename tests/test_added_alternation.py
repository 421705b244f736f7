"""The added-token pattern of a tokenizer.json (``presets.bpe.added``): the
strings' trie written as one :mod:`re` pattern must find what a plain scan
finds: at each place from the left, the longest string starting there, and
no overlaps."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from segkit.presets.bpe import added


def reference(strings: set[str], text: str) -> list[tuple[int, int]]:
    """Leftmost-longest matches, written as the obvious scan."""
    out, i = [], 0
    while i < len(text):
        best = max((len(s) for s in strings if s and text.startswith(s, i)), default=0)
        if best:
            out.append((i, i + best))
            i += best
        else:
            i += 1
    return out


alphabet = st.sampled_from("ab<|>.\\()[]*?｜▁")
strings = st.sets(st.text(alphabet, min_size=1, max_size=6), min_size=1, max_size=12)


@settings(max_examples=400, deadline=None)
@given(strings, st.text(alphabet, max_size=40))
def test_the_trie_pattern_finds_the_leftmost_longest_strings(ss, text):
    rx = added._alternation(ss)
    assert [m.span() for m in rx.finditer(text)] == reference(ss, text)


def test_strings_nested_too_deep_for_the_trie_use_the_flat_alternation():
    ss = {"a" * k for k in range(1, 2 * added._MAX_NESTING)}
    rx = added._alternation(ss)
    text = "b" + "a" * (3 * added._MAX_NESTING) + "b"
    assert [m.span() for m in rx.finditer(text)] == reference(ss, text)


def test_deepseek_like_tokens_share_one_prefix_branch():
    ss = {f"<｜place▁holder▁no▁{i}｜>" for i in range(300)} | {"<｜begin▁of▁sentence｜>", "<|im_end|>"}
    rx = added._alternation(ss)
    assert rx.pattern.startswith("<")  # (one branch for the shared first character)
    text = "x<｜place▁holder▁no▁12｜><｜place▁holder▁no▁1｜>y<|im_end|><｜begin▁of▁sentence｜"
    assert [m.group() for m in rx.finditer(text)] == ["<｜place▁holder▁no▁12｜>", "<｜place▁holder▁no▁1｜>",
                                                       "<|im_end|>"]
