"""The Telegram adapter's pure parts: splitting, HTML, pages, and how messages are normalised
(real PTB objects built from Bot API JSON, no network)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from telegram import Bot, Message, User

from adapters.telegram import MESSAGE_LIMIT, split_message, to_html
from adapters.telegram._buttons import page_view, paginate, parse
from adapters.telegram._format import utf16_len
from adapters.telegram._normalise import classify, strip_mention, thread_key
from memory.types import ChatKind, ThreadKey
from tests.e2e.fakes.telegram import EntityError, FakeTelegram, visible_html

BOT = User(777000, "Memo", is_bot=True, username="memo_test_bot")
ALICE = FakeTelegram.user(11, "Alice")


def test_split_prefers_paragraphs_then_lines_then_spaces():
    paras = ["a" * 3000, "b" * 3000, "c" * 100]
    assert split_message("\n\n".join(paras)) == ["a" * 3000, "b" * 3000 + "\n\n" + "c" * 100]
    lines = "\n".join(["x" * 1000] * 9)
    parts = split_message(lines)
    assert [utf16_len(p) for p in parts] == [4003, 4003, 1000]  # four whole lines per part
    assert "\n".join(parts) == lines
    words = " ".join(["word"] * 2000)
    assert " ".join(split_message(words)) == words
    assert split_message("   \n\n  ") == []


def test_split_never_cuts_a_surrogate_pair_and_counts_utf16():
    text = "😀" * 3000  # 2 UTF-16 units each
    parts = split_message(text)
    assert "".join(parts) == text
    assert all(utf16_len(p) <= MESSAGE_LIMIT for p in parts) and len(parts) == 2


def test_html_escapes_everything_but_fenced_code_becomes_pre():
    text = "a < b && c > d *x* _y_ <b>"
    assert visible_html(to_html(text)) == text
    code = "see:\n```python\nif a<b: print('&')\n```\ndone"
    html = to_html(code)
    assert '<pre><code class="language-python">if a&lt;b: print(\'&amp;\')</code></pre>' in html
    assert visible_html(html) == "see:\nif a<b: print('&')\ndone"
    with pytest.raises(EntityError):
        visible_html("a < b")


def test_pages_keep_whole_lines_and_buttons_point_to_neighbours():
    listing = "\n".join(f"{n}. fact {n}" for n in range(1, 24))
    pages = paginate(listing)
    assert len(pages) == 3 and pages[0].splitlines()[0] == "1. fact 1"
    assert "\n".join(pages) == listing
    text, markup = page_view(pages, 1, "all")
    assert text.endswith("(page 2 of 3)")
    assert [b.callback_data for b in markup.inline_keyboard[0]] == ["mem:0:all", "mem:2:all"]
    text, markup = page_view(pages, 7, "")  # clamped
    assert text.endswith("(page 3 of 3)") and len(markup.inline_keyboard[0]) == 1
    assert page_view(["only"], 0, "") == ("only", None)
    assert parse("cf:y:11") == ("cf", "y", "11") and parse("other") is None


def message(update: dict) -> Message:
    return Message.de_json(update["message"], Bot("1:x"))


def test_private_messages_are_addressed_and_keyed_by_chat():
    fake = FakeTelegram()
    inbound = classify(message(fake.private(ALICE, "hello @memo_test_bot")), BOT)
    assert inbound.private and inbound.addressed and inbound.command is None
    assert inbound.msg.thread == ThreadKey("telegram", "11", None)
    assert inbound.msg.chat_kind is ChatKind.PRIVATE and inbound.msg.text == "hello"
    assert inbound.target.reply_to is None and inbound.msg.sent_at.tzinfo is not None


def test_group_addressing_commands_mentions_replies_and_topics():
    fake = FakeTelegram()
    plain = classify(message(fake.group(-5, "T", ALICE, "just chatting")), BOT)
    assert not plain.addressed and plain.msg.chat_title == "T"
    mention = classify(message(fake.group(-5, "T", ALICE, "@Memo_Test_Bot hi there")), BOT)
    assert mention.addressed and mention.msg.text == "hi there"
    other = classify(message(fake.group(-5, "T", ALICE, "@someone_else hi")), BOT)
    assert not other.addressed
    command = classify(message(fake.group(-5, "T", ALICE, "/memories@memo_test_bot all")), BOT)
    assert command.command == "memories" and command.addressed
    assert classify(message(fake.group(-5, "T", ALICE, "/help@other_bot")), BOT) is None
    topic = classify(message(fake.group(-5, "T", ALICE, "in a topic", topic=3, forum=True)), BOT)
    assert not topic.addressed  # the topic root is not a reply to the bot
    assert topic.msg.thread == ThreadKey("telegram", "-5", "3") and topic.target.thread_id == 3
    general = message(fake.group(-5, "T", ALICE, "general", forum=True))
    assert thread_key(general).thread_id is None
    assert strip_mention("hey @memo_test_bot, ok", "memo_test_bot") == "hey , ok"


def test_cli_run_without_tokens_exits_2_naming_both(tmp_path):
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("TELEGRAM", "DISCORD", "ANTHROPIC", "OPENAI"))}
    environ["MEMORY_BOT_DATA_DIR"] = str(tmp_path / "data")
    result = subprocess.run([str(Path(sys.executable).with_name("memory-bot")), "run"],
                            capture_output=True, text=True, cwd=tmp_path, env=environ,
                            timeout=120)
    assert result.returncode == 2
    assert "TELEGRAM_BOT_TOKEN" in result.stderr and "DISCORD_BOT_TOKEN" in result.stderr
