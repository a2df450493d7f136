from memory.tokens import HeuristicTokenCounter


def test_counts():
    c = HeuristicTokenCounter()
    assert c.count("") == 0
    assert c.count("hello") == 2  # 5 letters -> ceil(5/4)
    assert c.count("我是做量化的") == 6  # one per CJK character
    assert c.count("a, b!") == 4
    assert c.count("I use Python 3.11") == c.count("I use Python 3.11")
    assert c.count("word " * 100) == 100


def test_bulk_count_equals_the_token_by_token_rule():
    from memory.tokens import _count, _count_by_tokens

    texts = ["", "   ", "Hello, world!", "我明天去上海出差，记得提醒我。", "emoji 🎉🎉 ok",
             "Ünïcödé wörds and CAPS 12345 a b c", "ｆｕｌｌ　ｗｉｄｔｈ　ｓｐａｃｅ", "tab\tand\nnewline",
             "ひらがな カタカナ 한국어", "x" * 4001, "mixed中文and English字符123", "a-b_c.d/e"]
    for text in texts:
        assert _count(text) == _count_by_tokens(text), text
