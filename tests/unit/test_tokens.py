from memory.tokens import HeuristicTokenCounter


def test_counts():
    c = HeuristicTokenCounter()
    assert c.count("") == 0
    assert c.count("hello") == 2  # 5 letters -> ceil(5/4)
    assert c.count("我是做量化的") == 6  # one per CJK character
    assert c.count("a, b!") == 4
    assert c.count("I use Python 3.11") == c.count("I use Python 3.11")
    assert c.count("word " * 100) == 100
