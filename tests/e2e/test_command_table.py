"""One command table, three builds: ``/help``, Telegram's command menu and Discord's slash
command tree all come from ``bot.command_table.COMMAND_TABLE`` (names, arguments, texts from
the catalogue in every language, private-answer policy). The menus are read from what the real
python-telegram-bot sent to the fake Bot API (``setMyCommands``) and what the real discord.py
synced to the fake Discord; the policy is checked by changing the table an engine serves."""

from __future__ import annotations

import dataclasses

from adapters.commands import CommandTable
from bot.command_table import COMMAND_TABLE, help_text
from bot.commands import COMMANDS
from i18n import LANGUAGES, say
from tests.e2e.test_discord import ScriptedModel, running
from tests.e2e.test_telegram import ALICE, GROUP, telegram_env


def test_every_command_of_the_table_has_a_handler_and_back():
    assert set(COMMAND_TABLE.names()) == set(COMMANDS)


def test_help_lists_every_listed_command_with_its_summary_and_usage_in_each_language():
    for lang in LANGUAGES:
        lines = help_text(lang).splitlines()
        for command in COMMAND_TABLE:
            head = f"/{command.name}" + (f" {say(lang, command.usage)}" if command.usage else "")
            line = say(lang, "help.line.destructive" if command.destructive else "help.line",
                       command=head, summary=say(lang, command.summary))
            assert (line in lines) == command.listed, (lang, command.name)
            if not command.listed:
                assert not any(x.startswith(f"/{command.name}") for x in lines)
        private = [f"/{c.name}" for c in COMMAND_TABLE if c.private]
        assert lines[-1] == say(lang, "help.private",
                                commands=say(lang, "list.separator").join(private))
    assert help_text("en") != help_text("zh")


async def test_telegram_menu_is_registered_from_the_table_in_every_language(tmp_path):
    async with telegram_env(tmp_path) as env:
        calls = env.fake.of("setMyCommands")
        by_language = {c.params.get("language_code"): c.params["commands"] for c in calls}
        assert set(by_language) == {None, "zh"}
        for code, lang in ((None, "en"), ("zh", "zh")):
            assert by_language[code] == [
                {"command": c.name, "description": say(lang, c.summary)} for c in COMMAND_TABLE]


async def test_discord_tree_is_synced_from_the_table_with_chinese_localisations(tmp_path):
    async with running(tmp_path, model=ScriptedModel()) as (env, people):
        synced = {c["name"]: c for c in env.fake.synced["global"]}
        assert list(synced) == list(COMMAND_TABLE.names())
        for command in COMMAND_TABLE:
            got = synced[command.name]
            assert got["description"] == say("en", command.summary)
            assert got["description_localizations"]["zh-CN"] == say("zh", command.summary)
            assert got["description_localizations"]["zh-TW"] == say("zh", command.summary)
            options = got.get("options") or []
            if command.argument is None:
                assert options == []
                continue
            option = options[0]
            assert len(options) == 1 and option["name"] == command.argument.name
            assert option["description"] == say("en", command.argument.help)
            assert option["description_localizations"]["zh-CN"] == say("zh", command.argument.help)
            assert bool(option.get("required")) == command.argument.required
            assert [c["value"] for c in option.get("choices") or []] == list(
                command.argument.choices)


async def test_telegram_answers_in_private_what_the_table_marks_private(tmp_path):
    async with telegram_env(tmp_path) as env:
        await env.send(env.fake.private(ALICE, "/start"))  # the private chat exists
        await env.send(env.fake.group(GROUP, "Team", ALICE, "/stats@memo_test_bot"))
        assert "private chat" in env.fake.sent(GROUP)[-1]  # the group learns where it went
        # the same table with /stats answered in the group
        table = CommandTable(dataclasses.replace(c, private=False) if c.name == "stats" else c
                             for c in COMMAND_TABLE)
        env.app.engine.commands = table
        before = len(env.fake.sent(ALICE["id"]))
        await env.send(env.fake.group(GROUP, "Team", ALICE, "/stats@memo_test_bot"))
        assert "model usage" in env.fake.sent(GROUP)[-1]
        assert len(env.fake.sent(ALICE["id"])) == before
