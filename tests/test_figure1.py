"""The running example of Song et al. (2021), "Fast WordPiece Tokenization".

Figure 1 gives a vocabulary, its trie (nodes 0-13) and the failure links
f(v) and failure pops F(v) of every node; Table 2 traces LinMaxMatch on
``abcdz``.  The expected values below are transcribed from the paper.

segkit differs from Figure 1a in one documented way: the continuation root
r_# (the paper's node 2, string "##") is a root of its own, and continuation
keys hang under it with the indicator stripped, so the paper's node "##cd"
is ``automaton.node("cd", continuation=True)``.  Keys that start with "##"
are *also* inserted literally under the word-start root.
"""

from __future__ import annotations

import pytest

import segkit
from reference import naive_failure, trie_nodes

VOCAB = ["[UNK]", "a", "abcdx", "##b", "##c", "##cdy", "##dz"]
ID = {t: i for i, t in enumerate(VOCAB)}

#: The string of every node of Figure 1a (depth = characters after "##").
NODES = {
    0: "",
    1: "#",
    2: "##",
    3: "a",
    4: "ab",
    5: "abc",
    6: "abcd",
    7: "abcdx",
    8: "##b",
    9: "##c",
    10: "##cd",
    11: "##cdy",
    12: "##d",
    13: "##dz",
}

#: Figure 1b: node -> (f(v), F(v)); None is the null node.
FIGURE_1B = {
    0: (None, []),
    1: (None, []),
    2: (None, []),
    3: (2, ["a"]),
    4: (8, ["a"]),
    5: (9, ["a", "##b"]),
    6: (10, ["a", "##b"]),
    7: (2, ["abcdx"]),
    8: (2, ["##b"]),
    9: (2, ["##c"]),
    10: (12, ["##c"]),
    11: (2, ["##cdy"]),
    12: (None, []),
    13: (2, ["##dz"]),
}


@pytest.fixture(scope="module")
def wp() -> segkit.WordPiece:
    return segkit.WordPiece(VOCAB)


def slot_of(auto: segkit.Automaton, paper_node: int) -> int:
    """The segkit slot of a node of Figure 1a."""
    s = NODES[paper_node]
    if paper_node == 1:  # "#" is an ordinary prefix under the word-start root
        return auto.node("#")
    if s.startswith("##"):
        return auto.node(s[2:], continuation=True)
    return auto.node(s)


def covered(token: str) -> int:
    """Characters of the word a pop covers (the indicator is not in the word)."""
    return len(token) - 2 if token.startswith("##") else len(token)


def test_every_node_of_figure_1a_exists(wp):
    auto = wp.automaton
    slots = {n: slot_of(auto, n) for n in NODES}
    assert all(s >= 0 for s in slots.values()), slots
    assert len(set(slots.values())) == len(NODES), f"two paper nodes share a slot: {slots}"
    assert slots[0] == 0
    assert slots[2] == auto.node("", continuation=True) == 1
    # Strings that are not in the trie.
    for missing in ["b", "abd", "abcdy", "x"]:
        assert auto.node(missing) == -1, missing
    for missing in ["a", "cdx", "dy", "e"]:
        assert auto.node(missing, continuation=True) == -1, missing


@pytest.mark.parametrize("paper_node", sorted(FIGURE_1B))
def test_failure_links_and_pops_of_figure_1b(wp, paper_node):
    auto = wp.automaton
    f_expected, pops_expected = FIGURE_1B[paper_node]
    f, pops = auto.failure(slot_of(auto, paper_node))
    expected_slot = -1 if f_expected is None else slot_of(auto, f_expected)
    assert f == expected_slot, (
        f"node {paper_node} ({NODES[paper_node]!r}): f(v) is slot {f}, expected paper node {f_expected} "
        f"(slot {expected_slot})"
    )
    if f_expected is not None:
        assert pops == [(ID[t], covered(t)) for t in pops_expected], (
            f"node {paper_node} ({NODES[paper_node]!r}): F(v) = {pops}"
        )
    else:
        assert pops == []


def test_oracle_reproduces_figure_1b():
    # The naive Definition 1 (tests/reference.py) gives the paper's table,
    # so it can serve as the oracle for random vocabularies.
    vocab = set(VOCAB) - {"[UNK]"}
    _, cont_nodes = trie_nodes(vocab, "##")
    for node, (f, pops) in FIGURE_1B.items():
        chi = NODES[node]
        if node in (0, 1, 2):  # roots and "#": no token is a prefix
            assert naive_failure(chi[2:] if node == 2 else chi, node == 2, vocab, "##", cont_nodes) == (None, [])
            continue
        continuation = chi.startswith("##")
        rest, got = naive_failure(chi[2:] if continuation else chi, continuation, vocab, "##", cont_nodes)
        assert [t for t, _ in got] == pops, chi
        if f is None:
            assert rest is None
        else:
            assert "##" + rest == NODES[f], chi


def test_literal_indicator_nodes(wp):
    # Our extra nodes: "##b" read from the word start is the token "##b"
    # covering all three characters of the word "##b".
    auto = wp.automaton
    r_sharp = auto.node("", continuation=True)
    for key in ["##b", "##c", "##cdy", "##dz"]:
        f, pops = auto.failure(auto.node(key))
        assert (f, pops) == (r_sharp, [(ID[key], len(key))]), key
    assert auto.failure(auto.node("##"))[0] == -1
    assert auto.failure(auto.node("##cd")) == (auto.node("d", continuation=True), [(ID["##c"], 3)])
    assert wp.tokenize_word("##cdy") == ["##cdy"]
    assert wp.tokenize_word("##b##c") == ["[UNK]"]
    assert wp.tokenize_word("##bc") == ["##b", "##c"]


def test_table_2_trace(wp):
    enc = wp.encode("abcdz")
    assert enc.tokens == ["a", "##b", "##c", "##dz"]
    assert enc.ids == [ID["a"], ID["##b"], ID["##c"], ID["##dz"]]
    assert enc.offsets == [(0, 1), (1, 2), (2, 3), (3, 5)]


@pytest.mark.parametrize(
    "word, expected",
    [
        ("abcdz", ["a", "##b", "##c", "##dz"]),
        ("abcz", ["[UNK]"]),
        ("abcd", ["[UNK]"]),
        ("abcdx", ["abcdx"]),
        ("abcdxb", ["abcdx", "##b"]),
        ("abcdy", ["a", "##b", "##cdy"]),
        ("a", ["a"]),
        ("ab", ["a", "##b"]),
        ("acdz", ["a", "##c", "##dz"]),
        ("b", ["[UNK]"]),
    ],
)
def test_words_of_the_example(wp, word, expected):
    assert wp.tokenize_word(word) == expected
    assert wp.tokenize(word) == expected
    enc = wp.encode(word)
    if expected == ["[UNK]"]:
        assert enc.offsets == [(0, len(word))]


def test_example_in_a_sentence(wp):
    enc = wp.encode("abcdz abcz  abcd ab")
    assert enc.tokens == ["a", "##b", "##c", "##dz", "[UNK]", "[UNK]", "a", "##b"]
    assert enc.offsets == [(0, 1), (1, 2), (2, 3), (3, 5), (6, 10), (12, 16), (17, 18), (18, 19)]
