"""The chat commands of the product, in one table.

Everything a platform shows about a command comes from here: ``/help`` (:func:`help_text`),
Telegram's command menu and Discord's slash-command tree (built by the adapters from
``engine.commands``), and the policies the adapters apply (answered in private in a group,
asks before deleting). The texts are message ids of the catalogue (:mod:`i18n`), so every menu
exists in every language the product speaks. The handlers are ``bot.commands.COMMANDS`` (a test
keeps the two in agreement).
"""

from __future__ import annotations

from adapters.commands import Argument, Command, CommandTable
from i18n import LANGUAGES, say

COMMAND_TABLE = CommandTable((
    Command("start", "command.start.summary", listed=False, strict=False),
    Command("help", "command.help.summary"),
    Command("new", "command.new.summary"),
    Command("why", "command.why.summary", private=True, about_this_chat=True),
    Command("memories", "command.memories.summary", usage="command.memories.usage",
            argument=Argument("show", "command.memories.argument",
                              choices=("all", "episodes")),
            private=True),
    Command("forget", "command.forget.summary", usage="command.forget.usage",
            argument=Argument("what", "command.forget.argument", required=True),
            private=True, destructive=True),
    Command("memory_off", "command.memory_off.summary", usage="command.memory_off.usage",
            argument=Argument("where", "command.memory_off.argument", choices=("chat",))),
    Command("memory_on", "command.memory_on.summary", usage="command.memory_on.usage",
            argument=Argument("where", "command.memory_on.argument", choices=("chat",))),
    Command("export", "command.export.summary", private=True),
    Command("stats", "command.stats.summary", private=True),
    Command("timezone", "command.timezone.summary", usage="command.timezone.usage",
            argument=Argument("name", "command.timezone.argument")),
    Command("language", "command.language.summary", usage="command.language.usage",
            argument=Argument("code", "command.language.argument", choices=LANGUAGES)),
))


def help_text(lang: str, table: CommandTable = COMMAND_TABLE) -> str:
    """The ``/help`` (and ``/start``) answer in ``lang``: what the assistant is and remembers,
    one line per listed command of ``table`` (destructive ones marked as asking first), and
    which commands answer in private in a group."""
    lines = [say(lang, "help.intro"), say(lang, "help.commands")]
    for command in table:
        if not command.listed:
            continue
        head = f"/{command.name}"
        if command.usage:
            head += " " + say(lang, command.usage)
        msgid = "help.line.destructive" if command.destructive else "help.line"
        lines.append(say(lang, msgid, command=head, summary=say(lang, command.summary)))
    private = [f"/{c.name}" for c in table if c.private]
    if private:
        lines.append(say(lang, "help.private",
                          commands=say(lang, "list.separator").join(private)))
    return "\n".join(lines)
