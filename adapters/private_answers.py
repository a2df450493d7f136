"""Which chat commands are answered in private when they are used in a group.

A command whose answer names or counts the user's memory (their facts, conversations, what was
recalled for them, their usage) never answers in the group: Telegram sends the answer to the
user's private chat, Discord answers a slash command ephemerally (only the user sees it) and a
typed command in a direct message. When the private chat cannot be reached (the user never
started one), the group is told so without naming anything, and the command does not run.

Most of them run as if sent in the private chat, so a confirmation they ask for (``/forget
all``) is asked and answered there; :data:`ABOUT_THIS_CHAT` ones explain the group itself
(``/why``: what was recalled for the last reply here) and run in the group, with only their
answer sent privately.
"""

from __future__ import annotations

PRIVATE_ANSWERS = frozenset({"memories", "export", "forget", "stats", "why"})
ABOUT_THIS_CHAT = frozenset({"why"})


def answered_privately(command: str | None) -> bool:
    """Whether ``command`` (a name without the slash, or None) answers in private when used
    in a group."""
    return command in PRIVATE_ANSWERS
