"""A conversation in Chinese with the real console process (piped, offline model): every line
the product writes itself is Chinese — the banner, the offline reply, the notes, ``/help``,
``/memories``, ``/why``, ``/stats``, ``/forget`` with its confirmation, ``/language`` and the
goodbye. Stored memory (the user's own words, in Chinese here) is shown as stored.

A line counts as English when it holds two Latin words in a row, or Latin letters without
any Chinese character; commands (``/memories all``), setting names (``ANTHROPIC_API_KEY``),
dates, paths and single technical words inside Chinese text (``token``, ``UTC``, the model's
name) are not English sentences.
"""

from __future__ import annotations

import re

from tests.e2e.test_console import answers, run_console

_CJK = re.compile(r"[\u3400-\u9fff]")
_COMMAND = re.compile(r"/[a-z_]+(?: (?:all|episodes|chat|en|zh))?")
_PATH = re.compile(r"(?:/[\w.@+-]+){2,}")
_TWO_WORDS = re.compile(r"[A-Za-z]{2,}[,.;:!?']?\s+[A-Za-z]{2,}")


def english(line: str) -> bool:
    """Whether ``line`` reads as English (see the module docstring)."""
    words = _COMMAND.sub(" ", _PATH.sub(" ", line))
    return bool(_TWO_WORDS.search(words)) or (
        bool(re.search(r"[A-Za-z]{2,}", words)) and not _CJK.search(words))


def test_the_english_test_tells_chinese_lines_from_english_ones():
    assert english("Goodbye.") and english("记住了 but not this") and english("Earlier conversations: 2")
    assert not english("记住了：用户住在维也纳") and not english("/memories all：当前事实")
    assert not english("模型 offline，输入 12 个 token") and not english("已导出到 /tmp/a/b.json")


LINES = [
    "/help",
    "记住我妹妹的生日是下周五",
    "记住我对花生过敏",
    "记住我住在维也纳",
    "记住我搬到格拉茨了",
    "我妹妹的生日是哪天？",
    "/memories",
    "/memories all",
    "/memories episodes",
    "/why",
    "/stats",
    "/timezone",
    "/language",
    "/forget 花生",
    "/forget 99",
    "/forget 1",
    "/forget all",
    "不要",
    "/language zh",
    "/language",
    "/forget all",
    "是",
    "/memories",
    "/nosuchcommand",
    "再见",
]


def test_a_chinese_conversation_shows_no_english_product_text(tmp_path):
    result = run_console(tmp_path, LINES, user="小明",
                         env={"EMBEDDER": "hashing", "LANG": "zh_CN.UTF-8", "LC_ALL": ""})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    banner, echoed = lines[0], [line[2:] for line in lines if line.startswith("> ")]
    assert echoed == LINES  # the piped transcript contract: echo, one banner, answers
    assert "控制台" in banner and "小明" in banner
    got = answers(result.stdout)
    assert all(got[line] for line in LINES), got  # every input has an answer
    product = [line for line in lines if not line.startswith("> ")]
    assert not [line for line in product if english(line)], "\n".join(result.stdout.splitlines())
    assert lines[-1] == "再见。"
    # the notes, the reply and the commands said what a Chinese user needs to know
    assert any(line.startswith("记住了：") for line in got["记住我妹妹的生日是下周五"])
    assert any("（星期五）" in line for line in got["记住我妹妹的生日是下周五"])
    assert any("已更新" in line or "记住了" in line for line in got["记住我搬到格拉茨了"])
    assert "星期五" in "\n".join(got["我妹妹的生日是哪天？"])
    assert "命令：" in "\n".join(got["/help"])
    assert any("以往的对话" in line for line in got["/memories"])
    assert any(line.startswith("上一次回复时") for line in got["/why"])
    assert "已取消" in "\n".join(got["不要"])
    assert "已删除" in "\n".join(got["是"])
    assert "还没有保存的记忆" in "\n".join(got["/memories"][-2:] + got[LINES[-3]])


_ISO_DAY = r"\d{4}-\d{2}-\d{2}"
_ENGLISH_FRAMING = re.compile(r"\b(?:since|from|until|no longer current|Open tasks|Key data|"
                              r"this conversation)\b", re.IGNORECASE)

WHY_LINES = [
    "记住我住在维也纳",
    "记住我搬到格拉茨了",
    "我住在哪里？",
    "/why",
    "我还需要订酒店，还要续签护照。",
    "/new",
    "酒店订了吗？",
    "/why",
]


def test_why_in_chinese_words_the_recalled_facts_and_conversations_in_chinese(tmp_path):
    result = run_console(tmp_path, WHY_LINES, user="小明",
                         env={"EMBEDDER": "hashing", "LANG": "zh_CN.UTF-8", "LC_ALL": ""})
    assert result.returncode == 0, result.stderr
    whys = [lines for line, lines in _answers_in_order(result.stdout) if line == "/why"]
    assert len(whys) == 2
    facts = [line for line in whys[0] if "[事实]" in line]
    assert facts and all(re.search(rf"用户住在格拉茨（自 {_ISO_DAY} 星期[一二三四五六日] 起）$", line)
                         for line in facts), whys[0]
    episodes = [line for line in whys[1] if "[对话摘要]" in line]
    assert episodes and any("待办：" in line for line in episodes), whys[1]
    for lines in whys:
        assert not [line for line in lines if _ENGLISH_FRAMING.search(line) or english(line)], lines


def _answers_in_order(stdout: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for line in stdout.splitlines()[1:]:
        if line.startswith("> "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


NO_HINT_LINES = ["我最近在学做意大利面", "记住我喜欢吃辣", "/help", "/memories", "/why", "/new",
                 "/memories all", "👍", "/stats", "/timezone", "/nosuchcommand"]


def test_without_a_chinese_terminal_the_users_chinese_messages_set_the_language(tmp_path):
    # a terminal that names no language: before the first message only the banner is English
    result = run_console(tmp_path, NO_HINT_LINES, user="小明",
                         env={"EMBEDDER": "hashing", "LANG": "C.UTF-8", "LC_ALL": "",
                              "LC_MESSAGES": ""})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert english(lines[0])  # the banner: nothing to go by yet
    product = [line for line in lines[1:] if not line.startswith("> ")]
    assert not [line for line in product if english(line)], result.stdout
    got = answers(result.stdout)
    assert all(got[line] for line in NO_HINT_LINES), got
    assert "命令：" in "\n".join(got["/help"])
    assert lines[-1] == "再见。"  # the end of input is /quit, in the user's language
