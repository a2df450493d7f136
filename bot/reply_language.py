"""The language a reply is written in, for every adapter alike.

The rule, first that holds:

1. the user's setting (``/language en|zh``, stored with the user);
2. the language of the message itself (a command's argument only when it holds Chinese:
   names and keywords such as ``all`` are no language);
3. the language of the author's latest message in the same thread that shows one (what a
   command without text, ``/new`` or ``/help``, or a message of emoji only, has to go by): the
   last one this process saw, else the newest in the thread's open session (the turns working
   memory reads, so it holds across a restart);
4. the platform's hint (Telegram ``language_code``, Discord ``locale`` or the server's
   preferred locale, the console's ``LANG``);
5. English.
"""

from __future__ import annotations

from collections import OrderedDict

from i18n import DEFAULT_LANGUAGE, language_of_code
from memory.context import Context
from memory.text import has_cjk, language_of
from memory.types import IncomingMessage, Role, ThreadKey

#: How many (thread, author) pairs keep their latest language in this process (least recently
#: written dropped first; a dropped pair falls back to the thread's stored turns).
REMEMBERED_AUTHORS = 10_000


def message_language(text: str) -> str | None:
    """The language a message is written in (``memory.text.language_of``), or None when it
    shows none: no letters, or a command whose argument holds no Chinese."""
    if text.startswith("/"):
        argument = text.partition(" ")[2]
        return "zh" if has_cjk(argument) else None
    if not any(c.isalpha() for c in text):
        return None
    return language_of(text)


def choose(chosen: str | None, text: str, latest: str | None, hint: str | None) -> str:
    """The rule of the module docstring: ``chosen`` (the user's setting), the language of
    ``text``, ``latest`` (the thread's latest language of the author), the platform's ``hint``
    (a platform tag such as ``"zh-hans"``), English."""
    return (chosen or message_language(text) or latest or language_of_code(hint)
            or DEFAULT_LANGUAGE)


class ThreadLanguages:
    """The language of each author's latest message per thread (step 3 of the rule).

    Args:
        memory: the memory service (``recent_turns``: the open session's turns, cached).
    """

    def __init__(self, memory) -> None:
        self.memory = memory
        self._latest: OrderedDict[tuple[ThreadKey, str], str] = OrderedDict()

    def seen(self, msg: IncomingMessage, text: str) -> None:
        """``msg`` (its cleaned ``text``) was handled: its language, when it shows one, is the
        author's latest in its thread."""
        lang = message_language(text)
        if lang is None:
            return
        key = (msg.thread, msg.platform_user_id)
        self._latest[key] = lang
        self._latest.move_to_end(key)
        while len(self._latest) > REMEMBERED_AUTHORS:
            self._latest.popitem(last=False)

    def last_seen(self, msg: IncomingMessage) -> str | None:
        """The latest language of ``msg``'s author in its thread that this process saw."""
        return self._latest.get((msg.thread, msg.platform_user_id))

    async def latest(self, msg: IncomingMessage, ctx: Context) -> str | None:
        """The language of the author's latest message in the thread that shows one:
        :meth:`last_seen`, else the newest such user turn of the open session; None when
        neither has one."""
        if (lang := self.last_seen(msg)) is not None:
            return lang
        for turn in reversed(await self.memory.recent_turns(ctx)):
            if turn.role is Role.USER and turn.user_id == ctx.user.id \
                    and (lang := message_language(turn.text)) is not None:
                return lang
        return None
