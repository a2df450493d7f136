"""Sending to Telegram: split, HTML with a plain-text fallback, ``RetryAfter`` honoured,
blocked users marked, and the "typing..." indicator.

Errors are mapped here, at the seam: a 429 waits the time Telegram asks for and tries again
(within a budget); a 400 "can't parse entities" resends the chunk as plain text; a 403 in a
private chat means the user blocked the bot, which is reported to ``on_blocked`` and ends the
delivery to that chat without disturbing anyone else.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from telegram import Bot, InlineKeyboardMarkup, LinkPreviewOptions, Message, ReplyParameters
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError
from telegram.warnings import PTBDeprecationWarning

from adapters.telegram._format import split_message, to_html

log = logging.getLogger(__name__)

#: Seconds between two "typing..." actions (Telegram shows one for about 5 s).
TYPING_EVERY_S = 4.0
#: Seconds before a refused message is tried once more.
PART_RETRY_S = 1.0


@dataclass(frozen=True, slots=True)
class Target:
    """Where a reply goes.

    Attributes:
        chat_id: the chat.
        thread_id: the forum topic, only for messages that really are in a topic (the General
            topic and ordinary reply chains have none).
        reply_to: message to quote (first chunk only), or None.
    """

    chat_id: int
    thread_id: int | None = None
    reply_to: int | None = None

    @property
    def private(self) -> bool:
        return self.chat_id > 0


def retry_seconds(exc: RetryAfter) -> float:
    """Seconds a ``RetryAfter`` asks to wait (PTB 22 may hand out an int or a timedelta)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _parse_error(exc: BadRequest) -> bool:
    return "can't parse entities" in exc.message.lower() or "can't find end" in exc.message.lower()


class Sender:
    """Delivers reply texts through a PTB ``Bot``.

    Args:
        bot: the application's bot.
        on_blocked: awaited with the chat id when a private chat answers 403.
        retry_budget_s: most seconds one call may spend waiting on ``RetryAfter``.
        sleep: the sleep function (tests may record the waits).
    """

    def __init__(self, bot: Bot, *, on_blocked: Callable[[int], Awaitable[None]],
                 retry_budget_s: float = 120.0,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.bot = bot
        self.on_blocked = on_blocked
        self.retry_budget_s = retry_budget_s
        self.sleep = sleep

    async def _call(self, fn: Callable[[], Awaitable[Message]],
                    budget: float | None = None) -> Message:
        budget = self.retry_budget_s if budget is None else budget
        waited = 0.0
        while True:
            try:
                return await fn()
            except RetryAfter as exc:
                wait = retry_seconds(exc)
                if waited + wait > budget:
                    raise
                log.warning("telegram flood control: waiting %.1fs", wait)
                waited += wait
                await self.sleep(wait)

    async def send(self, target: Target, text: str, *,
                   markup: InlineKeyboardMarkup | None = None,
                   retry_budget_s: float | None = None) -> list[Message]:
        """Send ``text`` as one or more messages (``markup`` on the last one); flood control
        is waited out within ``retry_budget_s`` (default: the sender's budget).

        A message the API refuses for another reason (a network error, a 5xx, an unexpected
        answer) is tried once more after :data:`PART_RETRY_S`, so the messages already sent are
        not sent twice.

        Returns:
            The messages sent; empty when the chat is unreachable (blocked, kicked).

        Raises:
            TelegramError: anything else the API refused, also on the second try (the caller
                reports it).
        """
        sent: list[Message] = []
        chunks = split_message(text) or ["…"]  # the API refuses an empty text
        for n, chunk in enumerate(chunks):
            last = n == len(chunks) - 1
            reply = (ReplyParameters(target.reply_to, allow_sending_without_reply=True)
                     if n == 0 and target.reply_to is not None else None)
            for attempt in (1, 2):
                try:
                    sent.append(await self._send_chunk(target, chunk, reply,
                                                       markup if last else None, retry_budget_s))
                    break
                except Forbidden as exc:
                    await self._unreachable(target.chat_id, exc)
                    return sent
                except RetryAfter:
                    raise  # flood control was already waited out within the budget
                except TelegramError as exc:
                    if attempt == 2:
                        raise
                    log.warning("telegram send to chat=%s failed (%s); trying once more",
                                target.chat_id, exc)
                    await self.sleep(PART_RETRY_S)
        return sent

    async def _send_chunk(self, target: Target, chunk: str, reply: ReplyParameters | None,
                          markup: InlineKeyboardMarkup | None, budget: float | None) -> Message:
        common = dict(chat_id=target.chat_id, message_thread_id=target.thread_id,
                      reply_parameters=reply, reply_markup=markup,
                      link_preview_options=LinkPreviewOptions(is_disabled=True))
        try:
            return await self._call(lambda: self.bot.send_message(
                text=to_html(chunk), parse_mode=ParseMode.HTML, **common), budget)
        except BadRequest as exc:
            if not _parse_error(exc):
                raise
            log.warning("telegram rejected the HTML of a reply (%s); sending plain text", exc)
            return await self._call(lambda: self.bot.send_message(text=chunk, **common), budget)

    async def edit(self, chat_id: int, message_id: int, text: str, *,
                   markup: InlineKeyboardMarkup | None = None,
                   retry_budget_s: float | None = None) -> None:
        """Replace the text of a message the bot sent (at most one message long: longer
        text is cut at the limit on a paragraph boundary). An unchanged text is no error."""
        budget = retry_budget_s
        chunk = (split_message(text) or ["(empty)"])[0]
        try:
            try:
                await self._call(lambda: self.bot.edit_message_text(
                    text=to_html(chunk), chat_id=chat_id, message_id=message_id,
                    parse_mode=ParseMode.HTML, reply_markup=markup,
                    link_preview_options=LinkPreviewOptions(is_disabled=True)), budget)
            except BadRequest as exc:
                if not _parse_error(exc):
                    raise
                await self._call(lambda: self.bot.edit_message_text(
                    text=chunk, chat_id=chat_id, message_id=message_id, reply_markup=markup),
                    budget)
        except BadRequest as exc:
            if "not modified" not in exc.message.lower():
                raise
        except Forbidden as exc:
            await self._unreachable(chat_id, exc)

    async def drop_buttons(self, chat_id: int, message_id: int) -> None:
        """Remove the inline keyboard of a message (after its button was used). Never raises:
        the buttons are a convenience, and whatever the API answers (too old, network error,
        an unexpected reply) must not keep the answer to the button from being given."""
        try:
            await self._call(lambda: self.bot.edit_message_reply_markup(
                chat_id=chat_id, message_id=message_id, reply_markup=None), budget=5.0)
        except Exception as exc:  # noqa: BLE001 - see above
            log.warning("telegram buttons of message %s in chat=%s not removed: %s: %s",
                        message_id, chat_id, type(exc).__name__, exc)

    async def _unreachable(self, chat_id: int, exc: Forbidden) -> None:
        reason = exc.message.lower()
        if chat_id > 0 and ("blocked" in reason or "deactivated" in reason):
            log.info("telegram user chat=%s blocked the bot (%s); marked", chat_id, exc.message)
            await self.on_blocked(chat_id)
        else:  # a group that removed the bot, or a user who never opened a private chat
            log.warning("telegram chat=%s refused the message (%s)", chat_id, exc.message)

    @contextlib.asynccontextmanager
    async def typing(self, target: Target) -> AsyncIterator[None]:
        """Show "typing..." in the target chat (and topic) while the block runs."""

        async def loop() -> None:
            while True:
                try:
                    await self.bot.send_chat_action(chat_id=target.chat_id,
                                                    action=ChatAction.TYPING,
                                                    message_thread_id=target.thread_id)
                except TelegramError as exc:  # never worth failing a reply for
                    log.debug("typing action failed chat=%s: %s", target.chat_id, exc)
                    return
                await asyncio.sleep(TYPING_EVERY_S)

        task = asyncio.create_task(loop())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
