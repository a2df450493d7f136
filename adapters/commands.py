"""The shape of the chat command table every adapter builds its menus and policies from.

The table itself (which commands exist, their texts and policies) is data of the product,
``bot.command_table.COMMAND_TABLE``; the conversation engine hands it to the adapters as
``engine.commands``. From it the console's ``/help`` text, Telegram's command menu
(``setMyCommands``, once per language) and Discord's slash-command tree (descriptions
localised through a ``Translator``) are built, and the adapters read from it which commands
answer in private when used in a group.

Answered in private: a command whose answer names or counts the user's memory (their facts,
conversations, what was recalled for them, their usage) never answers in the group: Telegram
sends the answer to the user's private chat, Discord answers a slash command ephemerally (only
the user sees it) and a typed command in a direct message. When the private chat cannot be
reached (the user never started one), the group is told so without naming anything, and the
command does not run. Most of them run as if sent in the private chat, so a confirmation they
ask for (``/forget all``) is asked and answered there; ``about_this_chat`` ones explain the
group itself (``/why``: what was recalled for the last reply here) and run in the group, with
only their answer sent privately.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Argument:
    """The one argument a command takes.

    Attributes:
        name: its name where platforms name it (a Discord option: lower case, 1-32 chars).
        help: message id of its description (Discord option description, at most 100 chars).
        required: the command needs it.
        choices: the only values it takes (Discord offers them as choices); empty = free text.
    """

    name: str
    help: str
    required: bool = False
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Command:
    """One chat command.

    Attributes:
        name: without the slash, lower case (Telegram and Discord: 1-32 chars of a-z, 0-9, _).
        summary: message id of what it does: Telegram's menu, Discord's description (both at
            most 100 chars) and its ``/help`` line.
        usage: message id of its argument as ``/help`` shows it (``[all|episodes]``); None for
            a command without one.
        argument: the argument it takes, or None.
        private: answered in private when used in a group (see the module docstring).
        about_this_chat: with ``private``: runs in the group it explains, only the answer goes
            to the private chat.
        destructive: deletes data; it lists what goes and asks before deleting.
        listed: shown in ``/help`` (``/start`` is ``/help`` under Telegram's name for it).
        strict: a command without ``argument`` refuses any argument text; False for ``/start``,
            whose Telegram deep links append a payload the user did not type.
    """

    name: str
    summary: str
    usage: str | None = None
    argument: Argument | None = None
    private: bool = False
    about_this_chat: bool = False
    destructive: bool = False
    listed: bool = True
    strict: bool = True


class CommandTable:
    """The chat commands in menu order, looked up by name."""

    def __init__(self, commands: Iterable[Command]) -> None:
        self.commands: tuple[Command, ...] = tuple(commands)
        self._by_name = {c.name: c for c in self.commands}
        if len(self._by_name) != len(self.commands):
            raise ValueError("two commands of one name")

    def __iter__(self) -> Iterator[Command]:
        return iter(self.commands)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def get(self, name: str | None) -> Command | None:
        """The command called ``name`` (without the slash), or None."""
        return self._by_name.get(name) if name is not None else None

    def names(self) -> tuple[str, ...]:
        """Every command's name, in menu order."""
        return tuple(self._by_name)

    def answered_privately(self, name: str | None) -> bool:
        """Whether command ``name`` (or None: not a command) answers in private when used in a
        group."""
        command = self.get(name)
        return command is not None and command.private

    def about_this_chat(self, name: str | None) -> bool:
        """Whether command ``name`` runs in the group it explains even though its answer goes
        to the private chat (``/why``)."""
        command = self.get(name)
        return command is not None and command.private and command.about_this_chat
