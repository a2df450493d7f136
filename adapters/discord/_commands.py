"""The chat command table (``engine.commands``) as Discord slash commands.

Each one becomes the same text command the console takes (``/memories all``) and runs through
the engine's handlers (``bot/commands.py``), in the thread it was used in. Answers are
ephemeral (only the user sees them) except ``/new``, which changes the conversation for
everyone in a server channel. ``/memories`` is paginated with buttons; a command that asks for
confirmation (``/forget all``) gets Confirm/Cancel buttons; ``/export`` sends its JSON document
as a file.

Descriptions are ``locale_str`` values carrying their catalogue message id; the
:class:`CatalogueTranslator` gives Discord every other language the catalogue has
(``description_localizations``), so a client set to Chinese shows Chinese descriptions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import discord
from discord import app_commands
from discord.app_commands import locale_str

from adapters.commands import Command
from i18n import DEFAULT_LANGUAGE, language_of_code, say

if TYPE_CHECKING:
    from adapters.discord._adapter import DiscordAdapter

Choice = app_commands.Choice

#: How Discord presents a command's answer beyond the table's policies (``DiscordAdapter.command``
#: keyword arguments): /new is seen by everyone in the channel, /memories is paged, /export is
#: a file.
PRESENTATION: dict[str, dict[str, Any]] = {
    "new": {"ephemeral": False},
    "memories": {"paginate": True},
    "export": {"attach": "memory-export.json"},
}


def localised(msgid: str) -> locale_str:
    """The English text of ``msgid`` marked for translation (its id in ``extras``)."""
    return locale_str(say(DEFAULT_LANGUAGE, msgid), msgid=msgid)


class CatalogueTranslator(app_commands.Translator):
    """Translates the ``locale_str`` values of the command tree from the catalogue: a locale
    of a language the product speaks (``zh-CN``, ``zh-TW``) gets that language's text, every
    other one (and English) Discord's default."""

    async def translate(self, string: locale_str, locale: discord.Locale,
                        context: app_commands.TranslationContextTypes) -> str | None:
        msgid = string.extras.get("msgid")
        lang = language_of_code(locale.value)
        if msgid is None or lang is None or lang == DEFAULT_LANGUAGE:
            return None
        return say(lang, msgid)


def _callback(adapter: DiscordAdapter, command: Command):
    """The coroutine Discord calls for ``command``: no option, one required option or one
    optional option (named in Discord by ``app_commands.rename``)."""
    name, how, argument = command.name, PRESENTATION.get(command.name, {}), command.argument
    if argument is None:
        async def run(interaction: discord.Interaction) -> None:
            await adapter.command(interaction, name, **how)
        return run
    if argument.required:
        async def run_with(interaction: discord.Interaction, value: str) -> None:
            await adapter.command(interaction, name, value, **how)
    else:
        async def run_with(interaction: discord.Interaction, value: Optional[str] = None) -> None:
            await adapter.command(interaction, name, value, **how)
    run_with = app_commands.rename(value=argument.name)(run_with)
    run_with = app_commands.describe(value=localised(argument.help))(run_with)
    if argument.choices:
        run_with = app_commands.choices(
            value=[Choice(name=c, value=c) for c in argument.choices])(run_with)
    return run_with


def register(tree: app_commands.CommandTree, adapter: DiscordAdapter) -> None:
    """Add every command of ``adapter.engine.commands`` to ``tree`` (synced later, in
    ``setup_hook``, after :class:`CatalogueTranslator` is set)."""
    for command in adapter.engine.commands:
        tree.add_command(app_commands.Command(
            name=command.name, description=localised(command.summary),
            callback=_callback(adapter, command)))
