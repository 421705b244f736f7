"""ChineseMaxMatch on known examples, user dictionaries, the default
dictionary, large inputs, saving and bad input."""

from __future__ import annotations

import gc
import pickle
import time
from pathlib import Path

import pytest

import cjk_reference as ref
import segkit
from threads import run_in_threads
from segkit_cjk import ChineseMaxMatch

MODES = ("forward", "backward", "bidirectional")
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def cut(words, text, mode="forward", **kw):
    return ChineseMaxMatch(words, mode=mode, **kw).cut(text)


# ------------------------------------------------------------ known examples

def _distinct_chars(n: int) -> str:
    """``n`` distinct characters from U+4E00 on, none of them whitespace or a
    lone surrogate (which every entry point refuses)."""
    out = []
    cp = 0x4E00
    while len(out) < n:
        c = chr(cp)
        if not (0xD800 <= cp <= 0xDFFF or c.isspace()):
            out.append(c)
        cp += 1
    return "".join(out)

class TestKnownExamples:
    WORDS = ["研究", "研究生", "生命", "命", "起源"]

    def test_forward_vs_backward(self):
        assert cut(self.WORDS, "研究生命起源", "forward") == ["研究生", "命", "起源"]
        assert cut(self.WORDS, "研究生命起源", "backward") == ["研究", "生命", "起源"]
        # same word count; backward has fewer single characters
        assert cut(self.WORDS, "研究生命起源", "bidirectional") == ["研究", "生命", "起源"]

    def test_default_mode_is_bidirectional(self):
        # The mode with the best F1 on all four SIGHAN corpora (docs/chinese.rst).
        assert ChineseMaxMatch(self.WORDS).mode == "bidirectional"
        assert ChineseMaxMatch(self.WORDS).cut("研究生命起源") == ["研究", "生命", "起源"]

    def test_bidirectional_prefers_fewer_single_characters(self):
        words = ["当下", "下雨", "下雨天", "雨天", "天地", "地面", "面积", "积水", "当"]
        text = "当下雨天地面积水"
        assert cut(words, text, "forward") == ["当下", "雨天", "地面", "积水"]
        assert cut(words, text, "backward") == ["当", "下雨天", "地面", "积水"]
        assert cut(words, text, "bidirectional") == ["当下", "雨天", "地面", "积水"]

    def test_bidirectional_tie_goes_to_backward(self):
        words = ["结婚", "的", "和尚", "尚未", "未", "和", "结"]
        text = "结婚的和尚未结婚的"
        assert cut(words, text, "forward") == ["结婚", "的", "和尚", "未", "结婚", "的"]
        assert cut(words, text, "backward") == ["结婚", "的", "和", "尚未", "结婚", "的"]
        assert cut(words, text, "bidirectional") == ["结婚", "的", "和", "尚未", "结婚", "的"]

    def test_bidirectional_fewer_words_beats_fewer_single_characters(self):
        words = ["甲乙丙丁戊", "甲乙", "丙丁", "戊己"]
        assert cut(words, "甲乙丙丁戊己", "forward") == ["甲乙丙丁戊", "己"]
        assert cut(words, "甲乙丙丁戊己", "backward") == ["甲乙", "丙丁", "戊己"]
        assert cut(words, "甲乙丙丁戊己", "bidirectional") == ["甲乙丙丁戊", "己"]

    def test_bidirectional_chooses_per_stretch(self):
        # two ambiguous stretches separated by 和: forward wins the first, backward the second
        words = ["甲乙丙", "丁戊", "丙丁戊", "和", "结婚", "的", "和尚", "尚未", "未", "结"]
        text = "甲乙丙丁戊和尚未结婚"
        assert cut(words, text, "bidirectional") == ["甲乙丙", "丁戊", "和", "尚未", "结婚"]

    def test_whitespace_separates_and_is_dropped(self):
        words = ["北京", "大学", "北京大学"]
        assert cut(words, "北京 大学") == ["北京", "大学"]
        assert cut(words, "北京\u3000大学\t北京\n大学\u00a0北京\u2028大学") == ["北京", "大学"] * 3
        assert ChineseMaxMatch(words).tokenize(" 北京大学  读书 ") == [("北京大学", 1, 5), ("读", 7, 8), ("书", 8, 9)]

    def test_non_white_space_characters_are_not_separators(self):
        # U+200B ZERO WIDTH SPACE and U+001C are not Unicode White_Space
        assert cut([], "a\u200bb", alnum_runs=False) == ["a", "\u200b", "b"]
        assert cut([], "a\u001cb", alnum_runs=False) == ["a", "\u001c", "b"]

    def test_alnum_runs(self):
        seg = ChineseMaxMatch(["你好", "增长", "达到"])
        assert seg.tokenize("你好 world 3.5%") == [("你好", 0, 2), ("world", 3, 8), ("3.5%", 9, 13)]
        assert seg.cut("增长3.5%，达到１２．５％和ｉＰｈｏｎｅ15") == ["增长", "3.5%", "，", "达到", "１２．５％", "和", "ｉＰｈｏｎｅ15"]
        assert seg.cut("版本1.2.3 和 1..2 和 5%% 和 .5 和 a.b") == [
            "版", "本", "1.2.3", "和", "1", ".", ".", "2", "和", "5%", "%", "和", ".", "5", "和", "a", ".", "b",
        ]  # fmt: skip
        assert seg.cut("x%") == ["x", "%"]
        assert seg.cut("3%5") == ["3%", "5"]

    def test_alnum_runs_off_is_textbook(self):
        seg = ChineseMaxMatch(["你好"], alnum_runs=False)
        assert seg.cut("你好abc 3.5%") == ["你好", "a", "b", "c", "3", ".", "5", "%"]

    def test_dictionary_words_containing_latin_are_kept(self):
        seg = ChineseMaxMatch(["AI芯片", "5G"])
        assert seg.cut("AI芯片和5G网络") == ["AI芯片", "和", "5G", "网", "络"]
        # a multi-character dictionary token is never merged into a run
        assert seg.cut("x5Gy") == ["x", "5G", "y"]

    def test_astral_characters(self):
        seg = ChineseMaxMatch(["𠀀𠀁", "𝔘"])
        assert seg.tokenize("a𠀀𠀁𝔘 𠀀") == [("a", 0, 1), ("𠀀𠀁", 1, 3), ("𝔘", 3, 4), ("𠀀", 5, 6)]

    def test_empty_text(self):
        seg = ChineseMaxMatch(self.WORDS, mode="bidirectional")
        assert seg.cut("") == []
        assert seg.tokenize("") == []
        assert seg.cut("  \u3000\n") == []
        assert seg.cut_batch([]) == []
        assert seg.tokenize_batch(["", "研究", ""]) == [[], [("研究", 0, 2)], []]

    def test_empty_dictionary(self):
        assert cut([], "中文 ab1", alnum_runs=False) == ["中", "文", "a", "b", "1"]
        assert cut([], "中文 ab1") == ["中", "文", "ab1"]

    def test_batch_equals_single(self):
        seg = ChineseMaxMatch(self.WORDS, mode="bidirectional")
        texts = ["研究生命起源", "", "生命 起源 abc", "研究"]
        assert seg.cut_batch(texts) == [seg.cut(t) for t in texts]
        assert seg.tokenize_batch(texts) == [seg.tokenize(t) for t in texts]
        assert seg.cut_batch(tuple(texts)) == seg.cut_batch(iter(texts)) == seg.cut_batch(texts)

    def test_reused_scratch_and_a_growing_word_table(self):
        # Each thread reuses its buffers and its table of the words a call
        # spells out from call to call (a new stamp per call), and the table
        # doubles when half full (it starts with 65,536 slots).  50,000
        # distinct unseen characters, not cached yet, make it grow; calls
        # before and after, with other dictionaries and smaller batches,
        # must not see each other's words.
        many = _distinct_chars(50_000)
        small = ChineseMaxMatch(self.WORDS, mode="forward")
        empty = ChineseMaxMatch([], alnum_runs=False)
        before = small.cut_batch(["研究生命起源", "起源"])
        assert before == [["研究生", "命", "起源"], ["起源"]]
        got = empty.cut_batch([many[:30_000], many[30_000:] + many[:10]])
        assert got == [list(many[:30_000]), list(many[30_000:] + many[:10])]
        assert small.cut_batch(["研究生命起源", "起源"]) == before
        assert empty.cut_batch(["研究生命"]) == [["研", "究", "生", "命"]]
        assert small.tokenize("研究生命") == [("研究生", 0, 3), ("命", 3, 4)]

    def test_huge_batches_leave_no_buffers_behind(self, monkeypatch):
        # A batch above MAX_KEPT_CHARS gets arrays of its own, and a table of
        # spelled words grown above MAX_KEPT_SLOTS is not kept: one huge
        # call must not leave the thread holding its memory.
        import threading

        from segkit_cjk import scratch

        monkeypatch.setattr(scratch, "MAX_KEPT_CHARS", 1000)
        monkeypatch.setattr(scratch, "MAX_KEPT_SLOTS", 1 << 16)
        seg = ChineseMaxMatch(self.WORDS, alnum_runs=False, mode="forward")
        bi = ChineseMaxMatch(self.WORDS, alnum_runs=False, mode="bidirectional")
        many = _distinct_chars(40_000)
        seen = {}

        def work():
            seen["small"] = seg.cut_batch(["研究生命起源"])
            seen["small bi"] = bi.cut_batch(["研究生命起源"])
            seen["huge"] = seg.cut_batch([many])
            seen["huge bi"] = bi.cut_batch([many])
            sc = scratch.SCRATCH
            seen["kept"] = (max(sc.rows.shape[1], sc.rows2.shape[1]), sc.text.size, sc.keys.shape[1], sc.seen.size)
            seen["after"] = seg.cut_batch(["研究生命起源", "起源"])
            seen["after bi"] = bi.cut_batch(["研究生命起源", "起源"])

        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert seen["small"] == [["研究生", "命", "起源"]]
        assert seen["small bi"] == [["研究", "生命", "起源"]]
        assert seen["huge"] == seen["huge bi"] == [list(many)]
        rows, text, keys, table = seen["kept"]
        assert rows < 1000 and text < 1000 and keys < 1000 and table <= 2 * (1 << 16)
        assert seen["after"] == [["研究生", "命", "起源"], ["起源"]]
        assert seen["after bi"] == [["研究", "生命", "起源"], ["起源"]]

    def test_threads_cutting_at_once_give_one_thread_results(self):
        seg = ChineseMaxMatch(self.WORDS + ["a", "数"])
        pieces = ["研究生命", "起源", "命", "好", "abc 3.5%", "数", "𠀀", "x1"]
        texts = ["".join(pieces[(i * 5 + j) % len(pieces)] for j in range(i % 13)) for i in range(400)]
        expected = {k: seg.cut_batch(texts[k:] + texts[:k]) for k in range(8)}
        errors = []

        def work(k):
            for _ in range(20):
                if seg.cut_batch(texts[k:] + texts[:k]) != expected[k]:
                    errors.append(k)

        run_in_threads(work, 8)
        assert not errors

    def test_threads_filling_a_cold_string_cache_at_once(self):
        # Strings are cached per dictionary (see _WordCache): threads that
        # start together on a fresh segmenter all find words not cached yet,
        # spell them and fill the cache while the others read it.  Expected
        # results come from a second segmenter, so the tested one is cold.
        words = self.WORDS + ["a", "数"] + [chr(0x4E00 + i) * 2 for i in range(3000)]
        pieces = ["研究生命", "起源", "命", "好", "abc 3.5%", "数", "𠀀", "x1"]
        texts = [
            "".join(pieces[(i * 5 + j) % len(pieces)] for j in range(i % 13)) + chr(0x4E00 + i % 3000) * (2 + i % 3)
            for i in range(3000)
        ]
        expected = {k: ChineseMaxMatch(words).cut_batch(texts[k:] + texts[:k]) for k in range(4)}
        for _ in range(3):
            seg = ChineseMaxMatch(words)
            errors = []

            def work(k):
                if seg.cut_batch(texts[k:] + texts[:k]) != expected[k]:
                    errors.append(k)
                if [seg.cut(t) for t in texts[k : k + 300]] != expected[k][:300]:
                    errors.append(-k)

            run_in_threads(work, 4)
            assert not errors

    def test_string_cache_keeps_one_slot_per_key(self):
        # Two threads that both found key 7 uncached both add it; the second
        # add keeps the first slot (and string) and only stores new keys.
        import numpy as np

        from segkit_cjk.segmenter import _WordCache

        cache = _WordCache(10)
        slot_of = cache.slot_of()
        cache.add(np.array([7, 3]), np.array(["seven", "three"], dtype=object))
        cache.add(np.array([5, 7]), np.array(["five", "SEVEN"], dtype=object))
        assert cache.count == 3
        assert [cache.strings[slot_of[k]] for k in (3, 5, 7)] == ["three", "five", "seven"]
        assert (slot_of[[0, 1, 2, 4, 6, 8, 9]] == -1).all()

    @pytest.mark.parametrize("mode", MODES)
    def test_long_texts_take_the_batch_path_with_the_same_result(self, mode, monkeypatch):
        # cut()/tokenize() segment a text of up to MAX_ONE_CHARS characters in
        # one compiled call (segment_one), a longer one through the batch path.
        from segkit_cjk import segmenter

        seg = ChineseMaxMatch(self.WORDS + ["a", "数"], mode=mode)
        texts = ["研究生命起源 abc 3.5%", "", "𠀀研究x1数", "命" * 40]
        short = [(seg.cut(t), seg.tokenize(t)) for t in texts]
        monkeypatch.setattr(segmenter, "MAX_ONE_CHARS", 5)
        assert [(seg.cut(t), seg.tokenize(t)) for t in texts] == short
        assert short == [(c, b) for c, b in zip(seg.cut_batch(texts), seg.tokenize_batch(texts))]

    def test_word_strings_are_made_once_per_dictionary(self):
        # A word's string is made the first time and reused after, also by
        # tokenize; a word added later gets a fresh cache and is found.
        seg = ChineseMaxMatch(self.WORDS, mode="forward")
        first = seg.cut_batch(["研究生命起源", "起源好"])
        again = seg.cut_batch(["起源"])
        assert first == [["研究生", "命", "起源"], ["起源", "好"]]
        assert again[0][0] is first[0][2] is first[1][0]
        assert seg.tokenize("好起源")[1][0] is first[1][0]
        seg.add_word("命起")
        assert seg.cut("研究生命起源") == ["研究生", "命起", "源"]

    @pytest.mark.parametrize("mode", MODES)
    @pytest.mark.parametrize("alnum", [True, False])
    def test_repeated_words_across_a_batch(self, mode, alnum):
        # A batch's words are made once per distinct word (dictionary id, or
        # code point for an unseen character): repeats of every kind across
        # texts must still give each text its own words, equal to the text
        # sliced at tokenize()'s offsets, and to each text cut on its own.
        seg = ChineseMaxMatch(self.WORDS + ["a", "数"], mode=mode, alnum_runs=alnum)
        pieces = ["研究生命", "起源", "命", "好", "，", "😀", "𠀀", "abc", "3.5%", "数", "x1", " ", "ａｂ", "\x00"]
        texts = ["".join(pieces[(i * 7 + j * 3) % len(pieces)] for j in range(i % 9)) for i in range(60)]
        batch = seg.cut_batch(texts)
        assert batch == [seg.cut(t) for t in texts]
        assert batch == [[t[s:e] for _, s, e in toks] for t, toks in zip(texts, seg.tokenize_batch(texts))]
        assert sum(map(len, batch)) > 150

    def test_traditional_chinese(self):
        words = ["臺灣", "大學", "臺灣大學", "研究", "研究生", "生命", "起源", "資訊", "工程", "資訊工程", "學系"]
        text = "我在臺灣大學資訊工程學系研究生命起源"
        assert cut(words, text, "forward") == ["我", "在", "臺灣大學", "資訊工程", "學系", "研究生", "命", "起源"]
        assert cut(words, text, "backward") == ["我", "在", "臺灣大學", "資訊工程", "學系", "研究", "生命", "起源"]

    def test_other_scripts_pass_through(self):
        text = "Привет, мир! مرحبا こんにちは 😀👍 naïve"
        for mode in MODES:
            seg = ChineseMaxMatch(["мир", "こんにちは"], mode=mode, alnum_runs=False)
            got = seg.tokenize(text)
            assert [w for w, _, _ in got] == (
                list("Привет,") + ["мир"] + list("!مرحبا") + ["こんにちは"] + list("😀👍naïve")
            )
            assert all(text[s:e] == w for w, s, e in got)
        # alnum runs join ASCII letters only: ï splits "naïve"
        assert ChineseMaxMatch([]).cut("naïve café") == ["na", "ï", "ve", "caf", "é"]

    @pytest.mark.parametrize("length", [255, 256, 300])
    @pytest.mark.parametrize("mode", ["forward", "backward"])
    def test_long_words(self, length, mode):
        """Words longer than 255 characters, emitted after a failed longer match."""
        a, b = "一" * length, "一" * (length + 1)
        words = [a, b + "二", "一"] if mode == "forward" else [a, "二" + b, "一"]
        text = b + "三" if mode == "forward" else "三" + b
        expected = [a, "一", "三"] if mode == "forward" else ["三", "一", a]
        assert cut(words, text, mode, alnum_runs=False) == expected

    def test_punctuation_is_matched_like_any_character(self):
        seg = ChineseMaxMatch(["《红楼梦》", "红楼梦", "……"])
        assert seg.cut("读《红楼梦》……。") == ["读", "《红楼梦》", "……", "。"]


# ------------------------------------------------------- user dictionaries
class TestUserDictionaries:
    def test_add_word_takes_effect_on_the_next_call(self):
        for mode in MODES:
            seg = ChineseMaxMatch(["研究", "生命", "起源"], mode=mode)
            assert seg.cut("研究生命起源") == ["研究", "生命", "起源"]
            seg.add_word("研究生命")
            assert seg.cut("研究生命起源") == ["研究生命", "起源"]
            seg.add_words(["研究生命起源"])
            assert seg.cut("研究生命起源") == ["研究生命起源"]
            assert seg.tokenize_batch(["研究生命起源"]) == [[("研究生命起源", 0, 6)]]

    @pytest.mark.parametrize("mode", MODES)
    @pytest.mark.parametrize("method", ["cut_batch", "tokenize_batch"])
    def test_threads_of_one_call_share_one_dictionary_state(self, mode, method):
        # issue 17: add_word landing while cut_batch(num_threads=2) runs must
        # not give one thread the old dictionary and the other the new one.
        # The first run to start adds the word once it has segmented; the
        # second run waits for that before segmenting.
        import threading

        seg = ChineseMaxMatch(["北京", "大学"], mode=mode)
        texts = ["北京大学"] * 40_000  # 160,000 characters: two runs
        added = threading.Event()
        calls = []
        original = seg._segment_cps

        def segment(*args):
            with lock:
                first = not calls
                calls.append(1)
            if first:
                out = original(*args)
                seg.add_word("北京大学")
                added.set()
                return out
            assert added.wait(10)
            return original(*args)

        lock = threading.Lock()
        seg._segment_cps = segment
        results = getattr(seg, method)(texts, num_threads=2)
        assert len(calls) == 2
        words = [[w if isinstance(w, str) else w[0] for w in r] for r in results]
        assert all(r == ["北京", "大学"] for r in words), "one call mixed two dictionary states"
        del seg._segment_cps
        assert seg.cut_batch(texts[:3], num_threads=2) == [["北京大学"]] * 3

    def test_add_existing_and_empty_word(self):
        seg = ChineseMaxMatch(["研究"])
        seg.add_word("研究")
        seg.add_words(["", "研究"])
        assert seg.words == ["研究"]

    def test_words_property_is_a_copy(self):
        seg = ChineseMaxMatch(["甲", "乙"])
        seg.words.append("丙")
        assert sorted(seg.words) == ["乙", "甲"]
        seg.add_word("丙")
        assert sorted(seg.words) == ["丙", "乙", "甲"]

    @pytest.mark.parametrize("bad", ["a b", "北京 大学", "北京\u3000大学", "北京\t", "\n"])
    def test_add_word_with_whitespace_is_rejected(self, bad):
        seg = ChineseMaxMatch(["研究"])
        with pytest.raises(ValueError, match="whitespace"):
            seg.add_word(bad)
        with pytest.raises(ValueError, match="whitespace"):
            ChineseMaxMatch(["研究", bad])
        assert seg.words == ["研究"]

    def test_add_word_type_error(self):
        seg = ChineseMaxMatch(["研究"])
        with pytest.raises(TypeError):
            seg.add_word(3)
        with pytest.raises(TypeError):
            seg.add_words([b"\xe7\xa0\x94"])
        with pytest.raises(TypeError):
            ChineseMaxMatch(["研究", None])

    def test_load_userdict_messy_jieba_file(self, tmp_path):
        path = tmp_path / "user.dict"
        content = (
            "\ufeff云计算 5 n\r\n"  # BOM, CRLF, word freq tag
            "\r\n"  # empty line
            "创新办 3 i  \r\n"  # trailing spaces
            "   \n"  # blank line
            "凱特琳 2\n"  # word freq
            "\t台中\t\n"  # word only, tabs around
            "云计算 7 n\n"  # duplicate
            "韩玉赏鉴\n"  # word only, no final newline after the next line
            "八一双鹿 3 nz"
        )
        path.write_bytes(content.encode("utf-8"))
        seg = ChineseMaxMatch(["研究"])
        seg.load_userdict(path)
        assert sorted(seg.words) == sorted(["研究", "云计算", "创新办", "凱特琳", "台中", "韩玉赏鉴", "八一双鹿"])
        assert seg.cut("云计算创新办凱特琳台中韩玉赏鉴八一双鹿") == [
            "云计算", "创新办", "凱特琳", "台中", "韩玉赏鉴", "八一双鹿",
        ]  # fmt: skip
        seg.load_userdict(str(path))  # str path; loading twice changes nothing
        assert len(seg.words) == 7

    def test_load_userdict_word_list(self, tmp_path):
        path = tmp_path / "words.txt"
        path.write_text("北京大学\n大学生\n\n", encoding="utf-8")
        seg = ChineseMaxMatch(["北京", "大学"], mode="backward")
        assert seg.cut("北京大学生") == ["北京", "大学", "生"]
        seg.load_userdict(path)
        assert seg.cut("北京大学生") == ["北京", "大学生"]

    def test_dictionary_file_as_constructor_argument(self, tmp_path):
        path = tmp_path / "words.txt"
        path.write_bytes("\ufeff研究 1 n\r\n研究生 2\r\n生命\r\n命\r\n起源 3 n\r\n".encode())
        for p in (path, str(path)):
            seg = ChineseMaxMatch(p, mode="backward")
            assert seg.cut("研究生命起源") == ["研究", "生命", "起源"]
            assert sorted(seg.words) == sorted(["研究", "研究生", "生命", "命", "起源"])

    @pytest.mark.parametrize(
        "line, word",
        [
            ("Edu Trust认证 2000", "Edu Trust认证"),  # jieba's own test/userdict.txt
            ("北京 大学 5 ns", "北京 大学"),
            ("起源 high n", "起源 high"),
            ("生命 -1 n", "生命 -1"),
            ("研究 1.5 n", "研究 1.5"),
            ("云计算 5 N", "云计算 5 N"),  # jieba's tags are lowercase
            ("word\t5", "word\t5"),  # jieba separates fields by one space only
        ],
    )
    def test_words_with_spaces_are_kept_as_jieba_keeps_them(self, tmp_path, line, word):
        path = tmp_path / "user.dict"
        path.write_text(f"研究 3 n\n{line}\n生命\n", encoding="utf-8")
        seg = ChineseMaxMatch(["甲"])
        with pytest.warns(UserWarning, match=r"user\.dict: 1 word containing whitespace.*never match.*line 2") as rec:
            seg.load_userdict(path)
        assert len(rec) == 1
        assert seg.words == ["甲", "研究", word, "生命"]
        # stored, but a word containing whitespace can never match
        text = line.split(" ")[0] + " " + word
        assert word not in seg.cut(text)

    def test_jieba_test_userdict_loads_whole(self):
        path = Path(__file__).parent / "data" / "jieba-userdict.txt"
        seg = ChineseMaxMatch(["研究"])
        with pytest.warns(UserWarning, match="Edu Trust认证") as rec:
            seg.load_userdict(path)
        assert len(rec) == 1  # one warning per file
        assert seg.words == ["研究", "云计算", "李小福", "创新办", "easy_install", "好用", "韩玉赏鉴", "八一双鹿",
                             "台中", "凱特琳", "Edu Trust认证"]  # fmt: skip
        assert seg.cut("李小福是创新办主任也是云计算方面的专家") == [
            "李小福", "是", "创新办", "主", "任", "也", "是", "云计算", "方", "面", "的", "专", "家",
        ]  # fmt: skip
        with pytest.warns(UserWarning, match="Edu Trust认证"):
            assert ChineseMaxMatch(path).words[-1] == "Edu Trust认证"

    def test_non_utf8_file(self, tmp_path):
        path = tmp_path / "gbk.dict"
        path.write_bytes("研究 3 n\n".encode("utf-8") + "北京 3 ns\n".encode("gbk"))
        with pytest.raises(segkit.VocabularyError, match=r"gbk\.dict.*line 2"):
            ChineseMaxMatch(["甲"]).load_userdict(path)

    def test_missing_file(self, tmp_path):
        with pytest.raises(FileNotFoundError):
            ChineseMaxMatch(["甲"]).load_userdict(tmp_path / "nope.txt")
        with pytest.raises(FileNotFoundError):
            ChineseMaxMatch(tmp_path / "nope.txt")


# ------------------------------------------------------------- large inputs
LINES = [
    "研究生命起源",
    "我在北京大学读书 iPhone 15 增长3.5%",
    "北京大学生前来应聘",
    "𠀀𝔘 ａｂｃ１２３",
    "结婚的和尚未结婚的",
]
LARGE_WORDS = ["研究", "研究生", "生命", "命", "起源", "北京", "北京大学", "大学", "大学生", "学生", "前来", "应聘",
               "生前", "结婚", "和尚", "尚未", "ab", "𠀀𝔘"]  # fmt: skip


@pytest.mark.parametrize("mode", ["forward", "bidirectional"])
def test_ten_megabyte_text(mode, with_timeout):
    unit = "\n".join(LINES) + "\n"
    reps = 10_000_000 // len(unit.encode("utf-8")) + 1
    text = unit * reps
    assert len(text.encode("utf-8")) >= 10_000_000
    seg = ChineseMaxMatch(LARGE_WORDS, mode=mode)
    seg.cut("研究")  # build outside the timed part
    t0 = time.perf_counter()
    got = with_timeout(lambda: seg.cut(text), 120)
    elapsed = time.perf_counter() - t0
    expected_unit = [w for line in LINES for w in ref.cut(line, LARGE_WORDS, mode)]
    assert got == expected_unit * reps
    assert elapsed < 60, f"10 MB took {elapsed:.1f} s"


def test_finalizer_that_segments_while_a_result_is_built(monkeypatch, with_timeout):
    """Building a result allocates, so a garbage collection may run there,
    and a finalizer it runs may segment with the same segmenter, in the
    same thread, while the outer call holds the string cache's lock: that
    must neither deadlock nor disturb the outer result."""
    from segkit_cjk import segmenter

    seg = ChineseMaxMatch(["研究", "生命", "起源"])
    inner: list = []

    class Garbage:
        def __del__(self):
            inner.append(seg.cut("生命起源"))

    real = segmenter.list_of

    def collecting_list_of(*args):
        if not inner:
            g = Garbage()
            g.cycle = g  # freed only by a collection
            del g
            gc.collect()  # as an allocation of the build could
        return real(*args)

    monkeypatch.setattr(segmenter, "list_of", collecting_list_of)
    got = with_timeout(lambda: seg.cut("研究生命"), 30)
    assert (got, inner) == (["研究", "生命"], [["生命", "起源"]])


@pytest.mark.parametrize("mode", ["forward", "backward"])
def test_no_quadratic_blow_up(mode, with_timeout):
    """A long word that almost matches everywhere: naive MaxMatch rereads
    100 characters at every position; the automaton must not."""
    n = 2_000_000
    long_word = "一" * 100 + "二" if mode == "forward" else "二" + "一" * 100
    seg = ChineseMaxMatch(["一一", long_word], mode=mode)
    seg.cut("一")
    t0 = time.perf_counter()
    got = with_timeout(lambda: seg.tokenize("一" * n), 120)
    elapsed = time.perf_counter() - t0
    assert len(got) == n // 2 and got[0] == ("一一", 0, 2) and got[-1] == ("一一", n - 2, n)
    assert elapsed < 60, f"{n} characters took {elapsed:.1f} s"


# ------------------------------------------------------- saving and pickling
SAMPLES = ["研究生命起源", "结婚的和尚未结婚的 iPhone15 3.5%", "", "北京大学生前来应聘𠀀𝔘"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("alnum", [True, False])
def test_save_load_round_trip(tmp_path, mode, alnum):
    seg = ChineseMaxMatch(LARGE_WORDS, mode=mode, alnum_runs=alnum)
    seg.add_word("命起")  # added words are saved too
    expected = seg.tokenize_batch(SAMPLES)
    path = tmp_path / "zh.segkit"
    seg.save(path)
    loaded = segkit.load(path)
    assert type(loaded) is ChineseMaxMatch
    assert (loaded.mode, loaded.alnum_runs) == (mode, alnum)
    assert sorted(loaded.words) == sorted(seg.words)
    assert loaded.tokenize_batch(SAMPLES) == expected
    assert [loaded.cut(t) for t in SAMPLES] == [[w for w, _, _ in e] for e in expected]
    # a loaded model still accepts new words
    loaded.add_word("应聘北京")
    assert "应聘北京" in loaded.cut("来应聘北京")


@pytest.mark.parametrize("mode", MODES)
def test_pickle_round_trip(mode):
    seg = ChineseMaxMatch(LARGE_WORDS, mode=mode, alnum_runs=False)
    before_build = pickle.loads(pickle.dumps(seg))  # nothing built yet
    expected = seg.tokenize_batch(SAMPLES)
    after_build = pickle.loads(pickle.dumps(seg))
    for other in (before_build, after_build):
        assert other.tokenize_batch(SAMPLES) == expected
        assert (other.mode, other.alnum_runs) == (mode, False)
    after_build.add_word("北京研究")
    assert after_build.cut("北京研究") == ["北京研究"]
    assert seg.cut("北京研究") == ["北京", "研究"]
    assert "北京研究" not in seg.words


def test_saved_model_loads_from_pickled_copy(tmp_path):
    seg = pickle.loads(pickle.dumps(ChineseMaxMatch(LARGE_WORDS, mode="bidirectional")))
    seg.save(tmp_path / "m.segkit")
    assert segkit.load(tmp_path / "m.segkit").cut_batch(SAMPLES) == seg.cut_batch(SAMPLES)


# ---------------------------------------------------------------- bad input
class TestBadInput:
    seg = None

    @classmethod
    def setup_class(cls):
        cls.seg = ChineseMaxMatch(["研究"])

    @pytest.mark.parametrize("bad", [b"\xe7\xa0\x94", None, 3, ["研究"]])
    def test_non_str_text(self, bad):
        with pytest.raises(TypeError):
            self.seg.cut(bad)
        with pytest.raises(TypeError):
            self.seg.tokenize(bad)

    @pytest.mark.parametrize("bad", [["研究", b"x"], ["研究", None], [3]])
    def test_non_str_in_batch(self, bad):
        with pytest.raises(TypeError):
            self.seg.cut_batch(bad)
        with pytest.raises(TypeError):
            self.seg.tokenize_batch(bad)

    def test_single_str_as_batch(self):
        with pytest.raises(TypeError, match="single str"):
            self.seg.cut_batch("研究")
        with pytest.raises(TypeError, match="single str"):
            self.seg.tokenize_batch("研究")

    @pytest.mark.parametrize("mode", ["Forward", "fmm", "", None])
    def test_bad_mode(self, mode):
        with pytest.raises(ValueError, match="mode"):
            ChineseMaxMatch(["研究"], mode=mode)


# ------------------------------------------------------- default dictionary
@pytest.fixture(scope="module")
def default_cache(tmp_path_factory):
    """A private, empty SEGKIT_CACHE_DIR for this module (hermetic)."""
    folder = tmp_path_factory.mktemp("segkit-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SEGKIT_CACHE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="module")
def jieba_words() -> ref.Lexicon:
    """The words of jieba's dictionary, read from jieba's own file (not through segkit)."""
    jieba = pytest.importorskip("jieba", reason="jieba is not installed (pip install jieba)")
    path = Path(jieba.__file__).resolve().parent / "dict.txt"
    words = [line.split(" ")[0] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return ref.Lexicon(words)


@pytest.fixture(scope="module")
def default_forward(default_cache):
    return ChineseMaxMatch(mode="forward")


DEFAULT_TEXTS = [
    "我来到北京清华大学",
    "研究生命起源",
    "结婚的和尚未结婚的",
    "工信处女干事每月经过下属科室都要亲口交代24口交换机等技术性器件的安装工作",
    "他说：“iPhone 15 的售价是7999元，比去年上涨了3.5%。”",
    "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
    "臺灣大學的研究生在討論ＡＩ晶片１２．５％的良率",
    "",
]


def test_default_dictionary_builds_into_the_cache(default_cache, default_forward):
    files = sorted(p.name for p in default_cache.iterdir())
    assert any(name.startswith("chinese-default-forward") for name in files), files
    t0 = time.perf_counter()
    again = ChineseMaxMatch(mode="forward")  # loaded from the cache file, not rebuilt
    elapsed = time.perf_counter() - t0
    assert again.cut_batch(DEFAULT_TEXTS) == default_forward.cut_batch(DEFAULT_TEXTS)
    assert elapsed < 30


def test_default_dictionary_words(default_forward, jieba_words):
    words = default_forward.words
    assert len(words) == len(set(words)) == 349_045
    assert set(words) == jieba_words.words


def test_default_dictionary_known_examples(default_forward):
    assert default_forward.cut("我来到北京清华大学") == ["我", "来到", "北京", "清华大学"]
    assert default_forward.cut("中华人民共和国成立了") == ["中华人民共和国", "成立", "了"]
    assert default_forward.cut("增长3.5%") == ["增长", "3.5%"]
    assert default_forward.mode == "forward" and default_forward.alnum_runs


@pytest.mark.parametrize("mode", ["forward", "bidirectional"])
@pytest.mark.parametrize("alnum", [True, False])
def test_default_dictionary_matches_reference(default_cache, jieba_words, mode, alnum):
    seg = ChineseMaxMatch(mode=mode, alnum_runs=alnum)
    assert seg.mode == mode and seg.alnum_runs is alnum
    assert seg.tokenize_batch(DEFAULT_TEXTS) == [ref.tokenize(t, jieba_words, mode, alnum) for t in DEFAULT_TEXTS]


def test_default_dictionary_on_chinese_corpus(default_forward, jieba_words):
    path = SHARED_DATA / "corpus" / "zh.txt"
    if not path.is_file():
        pytest.skip(f"shared corpus not found at {path}")
    lines = path.read_text(encoding="utf-8").split("\n")
    assert default_forward.cut_batch(lines) == [ref.cut(t, jieba_words, "forward") for t in lines]


def test_default_dictionary_add_word_does_not_touch_the_cache(default_cache, default_forward):
    seg = ChineseMaxMatch()
    seg.add_word("清华大学来到")
    assert seg.cut("清华大学来到北京") == ["清华大学来到", "北京"]
    assert ChineseMaxMatch().cut("清华大学来到北京") == ["清华大学", "来到", "北京"]
    assert default_forward.cut("清华大学来到北京") == ["清华大学", "来到", "北京"]


def test_large_userdict_is_cached_with_its_dictionary(tmp_path, monkeypatch, capfd):
    """load_userdict of a large file on a cached dictionary: the merged
    dictionary is built once (with a notice on stderr) and stored in the
    model cache under both files' bytes; a second process-like run loads
    it (no notice), and both give what one segmenter built from all the
    words gives."""
    from segkit.runtime import notices
    from segkit_cjk import segmenter

    cache = tmp_path / "cache"
    monkeypatch.setenv("SEGKIT_CACHE_DIR", str(cache))
    monkeypatch.setattr(segmenter, "FOLD_WORDS", 100)
    monkeypatch.setattr(notices, "_said", set())
    base = [f"词{i:05d}" for i in range(12000)] + ["研究", "生命", "起源"]
    dict_path = tmp_path / "dict.txt"
    dict_path.write_text("\n".join(base) + "\n", encoding="utf-8")  # > 64 KiB: cached
    user = [f"研究{i}" for i in range(2000)] + ["研究生命", "研究"]
    user_path = tmp_path / "user.txt"
    user_path.write_text("".join(f"{w} 3 n\n" for w in user), encoding="utf-8")
    text = "研究生命起源 研究17起源词00042"
    expected = segkit.ChineseMaxMatch(base + user).tokenize(text)
    results = []
    for run in range(2):
        seg = segkit.ChineseMaxMatch(dict_path)
        capfd.readouterr()
        seg.load_userdict(user_path)
        err = capfd.readouterr().err
        assert ("building" in err) == (run == 0), err
        assert not seg._dict.changed  # one dictionary, not changes kept apart
        results.append(seg.tokenize(text))
        monkeypatch.setattr(notices, "_said", set())
    assert results == [expected, expected]
    assert any("userdict" in p.name for p in cache.iterdir()), sorted(p.name for p in cache.iterdir())
    seg.add_word("起源词")  # changes after that work as before
    assert seg.cut("起源词") == ["起源词"]


@pytest.mark.parametrize("name", ["convert_tokens_to_ids", "convert_ids_to_tokens", "vocab_size", "pad_token_id",
                                  "batch_decode", "save_pretrained", "encode", "decode"])
def test_transformers_id_names_say_a_word_segmenter_has_no_ids(name):
    # (issue 34: the names a transformers user types; a segmenter of words
    # has no ids, and says so in the error instead of a bare AttributeError)
    seg = ChineseMaxMatch(["研究", "生命"])
    with pytest.raises(AttributeError, match=rf"ChineseMaxMatch has no {name}: it cuts text into words"):
        getattr(seg, name)
    assert not hasattr(seg, name)
    with pytest.raises(AttributeError, match="'ChineseMaxMatch' object has no attribute 'nonsense'"):
        seg.nonsense
    assert seg.cut("研究生命") == ["研究", "生命"] and pickle.loads(pickle.dumps(seg)).cut("研究生命") == ["研究", "生命"]
