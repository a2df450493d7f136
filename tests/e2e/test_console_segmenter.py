"""A console process that only sees English never loads the Chinese segmenter's dictionary
(~1.5 s of CPU, ~26 MiB), though indexing a topic fact adds the topic's Chinese question
words to its lexical keys; the first Chinese message loads it. The signal is the segmenter's
own debug log line, read from the data folder's log file."""

from __future__ import annotations

from tests.e2e.test_console import answers, run_console

LOADED = "memory.segmenter: jieba dictionary:"


def _log(tmp_path) -> str:
    return (tmp_path / "data" / "logs" / "memory-bot.log").read_text(encoding="utf-8")


def test_an_english_session_never_loads_the_segmenter(tmp_path):
    lines = ["remember that I live in Graz", "remember that I'm allergic to peanuts",
             "what am I allergic to?"]
    result = run_console(tmp_path, lines, env={"EMBEDDER": "hashing", "LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.stderr
    got = answers(result.stdout)
    assert "Noted: The user lives in Graz" in got[lines[0]]
    assert any("allergic to peanuts" in line for line in got[lines[2]]), got
    log = _log(tmp_path)
    assert "DEBUG memory." in log  # debug lines are written: the absence below means something
    assert LOADED not in log


def test_a_chinese_message_loads_the_segmenter(tmp_path):
    result = run_console(tmp_path, ["记住我住在维也纳"],
                         env={"EMBEDDER": "hashing", "LOG_LEVEL": "DEBUG"})
    assert result.returncode == 0, result.stderr
    assert LOADED in _log(tmp_path)
