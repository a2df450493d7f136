"""The compact dictionary behind Chinese segmentation: same cuts as jieba's own dictionary."""

from __future__ import annotations

import logging

import pytest

from memory.segmenter import CompactFreq, load_dictionary, segmenter
from memory.text import search_tokens

SENTENCES = (
    "我家里用的是美的的电饭煲。",
    "美的电饭煲用起来真方便，做出来的米饭味道也超级好，功能什么的都很齐全。",
    "我下周五去上海开会，顺便看看向量数据库的新版本",
    "小明硕士毕业于中国科学院计算所，后在日本京都大学深造",
    "他来到了网易杭研大厦",  # 杭研 is no dictionary word: jieba's HMM finds it
    "我的表弟身高169cm，喜欢吃麻辣香锅和螺蛳粉。",
    "周末和同事去爬了香山，红叶很好看",
)


def test_mapping_answers_like_a_dict() -> None:
    freq = CompactFreq(10)
    freq.set("数据库", 7)
    freq.set("数据", 0, keep=True)
    freq.set("数据库", 0, keep=True)  # keep: an existing value stays
    freq.set("数据", 3)  # a prefix that is a word too gets its frequency
    assert "数据库" in freq and "数据" in freq and "数" not in freq
    assert freq["数据库"] == 7 and freq.get("数据") == 3
    assert freq.get("向量") is None and freq.get("向量", 1) == 1
    assert 5 not in freq
    with pytest.raises(KeyError):
        freq["向量"]
    assert len(freq) == 2
    freq.set("cm", 2)  # the same stored bytes as 浣 (U+6D63), and so the same str hash
    assert "浣" not in freq and freq.get("cm") == 2


def test_mapping_refuses_more_keys_than_slots() -> None:
    freq = CompactFreq(1)  # two slots
    freq.set("a", 1)
    with pytest.raises(RuntimeError):
        for word in ("b", "c", "d"):
            freq.set(word, 1)


def test_dictionary_reads_words_prefixes_and_total() -> None:
    freq, total = load_dictionary("数据库 5 n\n数据 3 n\n向量 2\n数据库 4 n\n".encode())
    assert total == 14  # duplicates counted, as jieba counts them
    assert freq["数据库"] == 4 and freq["数据"] == 3 and freq["数"] == 0 and freq["向"] == 0
    assert "库" not in freq
    with pytest.raises(ValueError, match="line 2"):
        load_dictionary("数据 3\n向量\n".encode())


def test_cuts_equal_jiebas_own_dictionary() -> None:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    reference = jieba.Tokenizer()
    reference.initialize()
    ours = segmenter()
    assert ours.total == reference.total
    for sentence in SENTENCES:
        assert list(ours.cut_for_search(sentence)) == list(reference.cut_for_search(sentence))
        assert list(ours.cut(sentence)) == list(reference.cut(sentence))
        assert list(ours.cut(sentence, HMM=False)) == list(reference.cut(sentence, HMM=False))


def test_search_tokens_segment_chinese() -> None:
    assert search_tokens("我的向量数据库") == ["向量", "数据", "据库", "数据库"]
