"""``memory-bot console``: the app with the console adapter, its history and its signals.

The console adapter (``adapters/console``) reads and answers lines; this module owns what the
composition root owns: building and closing the app, SIGINT, and tying the prompt's history
file to the user's memory (``/forget all`` deletes it, ``/forget N`` takes out the lines of the
messages it deletes; nothing new is written to it while the user's memory is off).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal

from bot.engine import ConversationEngine
from bot.settings import Settings
from i18n import DEFAULT_LANGUAGE, language_of_code, say

log = logging.getLogger(__name__)


async def run_console_command(settings: Settings, user: str) -> int:
    """``memory-bot console``: the app with the console adapter until ``/quit``, end of input,
    Ctrl-C or Ctrl-D, then pending consolidation of this process is finished (within
    ``SHUTDOWN_GRACE_SECONDS``; a second Ctrl-C stops waiting, the work stays recorded) and the
    exit code is 0.

    SIGINT (Ctrl-C while a reply is being made, or ``kill -INT``) ends the console as ``/quit``
    does: at the prompt Ctrl-C is a key press (the terminal is in raw mode) and never a signal.
    The prompt's history is ``<data folder>/console/<user>.history`` (``adapters.console``):
    new lines are not written to it while the user's memory is off, ``/forget all`` deletes it
    and ``/forget N`` takes out the lines of the messages it deletes."""
    from adapters.console import ConsoleHistory, history_path, run_console
    from bot.app import build_app

    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    with contextlib.suppress(NotImplementedError, RuntimeError):  # not the main thread
        loop.add_signal_handler(signal.SIGINT, stop.set)
    try:
        app = await build_app(settings)
        history = ConsoleHistory(history_path(settings.data_dir, user))
        hint = terminal_language()
        language = ConsoleLanguage(language_of_code(hint) or DEFAULT_LANGUAGE)
        before_prompt = keep_history_in_step(app.engine, user, history, language)
        try:
            await app.start()  # overdue sessions close before any input is read
            await before_prompt()  # the user's stored language, for the banner
            banner = say(language.value, "console.banner", user=user,
                         model=app.engine.model.name)
            await run_console(app.engine.handle, user=user, banner=banner, history=history,
                              stop=stop, before_prompt=before_prompt,
                              language=lambda: language.value, language_hint=hint)
        finally:
            await _close_within_grace(app, settings.shutdown_grace_seconds)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
    return 0


def terminal_language() -> str | None:
    """The terminal's locale as POSIX reads it for messages (``LC_ALL``, else
    ``LC_MESSAGES``, else ``LANG``; ``C`` and ``POSIX`` name no language), or None."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(name)
        if value:
            return None if value.split(".", 1)[0] in ("C", "POSIX") else value
    return None


class ConsoleLanguage:
    """The language of the console's own lines (banner, "Goodbye."): the user's stored
    ``/language``, else the language of their latest message, else the terminal's; kept
    current by the ``before_prompt`` hook."""

    def __init__(self, fallback: str) -> None:
        self.fallback = fallback
        self.value = fallback


def keep_history_in_step(engine: ConversationEngine, user: str, history,
                         language: ConsoleLanguage | None = None):
    """Tie the console's ``history`` to the memory of console user ``user``: ``/forget all``
    of that user deletes it (an ``engine.on_forget_all`` listener), ``/forget N`` takes out the
    lines of the messages it deletes (``engine.on_forget_messages``), and while the user's
    memory is off new lines stay out of its file. Returns the ``before_prompt`` hook for
    ``run_console`` that keeps ``history.persist`` in step with the memory switch (and
    ``language`` with the user's ``/language``, else the language of their latest message this
    process saw)."""
    from adapters.console import console_message

    memory = engine.memory

    async def forgot_everything(user_id: int) -> None:
        row = await memory.find_user("console", user)
        if row is not None and row.id == user_id:
            history.clear()

    async def forgot_messages(user_id: int, texts: list[str]) -> None:
        row = await memory.find_user("console", user)
        if row is not None and row.id == user_id:
            history.remove(texts)

    async def before_prompt() -> None:
        row = await memory.find_user("console", user)
        history.persist = row is None or row.memory_enabled
        if language is not None:  # as the replies: the setting, the latest message's, the hint
            language.value = (getattr(row, "language", None)
                              or engine.languages.last_seen(console_message(user, ""))
                              or language.fallback)

    engine.on_forget_all.append(forgot_everything)
    engine.on_forget_messages.append(forgot_messages)
    return before_prompt


async def _close_within_grace(app, grace_seconds: float) -> None:
    """``app.aclose()`` within ``grace_seconds``; SIGINT meanwhile (a second Ctrl-C) stops
    waiting. Either way the unfinished work stays recorded and runs at the next start."""
    loop = asyncio.get_running_loop()
    closing = asyncio.ensure_future(asyncio.wait_for(app.aclose(), timeout=grace_seconds))
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, closing.cancel)
    try:
        await asyncio.wait({closing})  # a cancelled close must not cancel this task
    finally:
        if not closing.done():  # this task itself is being cancelled
            closing.cancel()
    if closing.cancelled():
        log.warning("shutdown cut short by Ctrl-C; pending work stays recorded")
    elif isinstance(closing.exception(), asyncio.TimeoutError):
        log.warning("shutdown grace of %ss exceeded; pending work stays recorded", grace_seconds)
    elif closing.exception() is not None:
        raise closing.exception()
