"""A reply that grows while the model writes: a preview message edited at a safe rate, then
the final text.

The model reports the text so far through ``memory.streaming`` (only when it streams); the
preview is sent with the first report and edited at most once per ``interval`` seconds however
fast the model writes (Telegram allows about one message per second in a private chat and
twenty per minute in a group). A preview edit that meets flood control is skipped, not waited
for. :meth:`ReplyStream.finish` turns the preview into the first message of the final reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from telegram import Message
from telegram.error import TelegramError

from adapters.telegram._format import MESSAGE_LIMIT, split_message
from adapters.telegram._send import Sender, Target

log = logging.getLogger(__name__)

PREVIEW_SUFFIX = " …"


def preview_text(text: str) -> str:
    """The preview of a reply being written: its first message's worth, marked unfinished."""
    chunks = split_message(text, MESSAGE_LIMIT - len(PREVIEW_SUFFIX))
    return (chunks[0] if chunks else "") + PREVIEW_SUFFIX


class ReplyStream:
    """One reply in one chat: :meth:`update` with the text so far, then :meth:`finish`.

    Args:
        sender: the adapter's sender.
        target: where the reply goes.
        interval: least seconds between two edits of the preview.
    """

    def __init__(self, sender: Sender, target: Target, *, interval: float) -> None:
        self.sender = sender
        self.target = target
        self.interval = interval
        self.preview: Message | None = None
        self._latest = ""
        self._shown = ""
        self._wake = asyncio.Event()
        self._done = asyncio.Event()
        self._pump: asyncio.Task | None = None

    def update(self, text_so_far: str) -> None:
        """Offer the text written so far (a ``memory.streaming`` listener; never blocks)."""
        if self._done.is_set() or not text_so_far.strip():
            return
        self._latest = text_so_far
        self._wake.set()
        if self._pump is None:
            self._pump = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while not self._done.is_set():
            await self._wake.wait()
            self._wake.clear()
            if self._done.is_set():
                break
            text = preview_text(self._latest)
            if text != self._shown:
                try:
                    await self._show(text)
                except TelegramError as exc:  # flood control or a refused edit: skip this one
                    log.debug("telegram reply preview skipped: %s", exc)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._done.wait(), self.interval)

    async def _show(self, text: str) -> None:
        if self.preview is None:
            sent = await self.sender.send(self.target, text, retry_budget_s=0)
            if not sent:  # the chat is unreachable: stop previewing
                self._done.set()
                return
            self.preview = sent[0]
        else:
            await self.sender.edit(self.preview.chat_id, self.preview.message_id, text,
                                   retry_budget_s=0)
        self._shown = text

    async def stop(self) -> None:
        """Stop previewing (lets an edit in flight finish, so its message is known)."""
        self._done.set()
        self._wake.set()
        if self._pump is not None:
            with contextlib.suppress(Exception):
                await self._pump

    async def finish(self, replies: list[str]) -> list[Message]:
        """Deliver the final replies joined by blank lines: the preview becomes their first
        message, the rest follow. Returns the messages now showing the reply (empty when no
        preview was shown: the caller delivers as usual)."""
        await self.stop()
        if self.preview is None:
            return []
        chunks = split_message("\n\n".join(r for r in replies if r.strip()))
        if not chunks:
            return [self.preview]
        await self.sender.edit(self.preview.chat_id, self.preview.message_id, chunks[0])
        messages = [self.preview]
        rest = Target(self.target.chat_id, self.target.thread_id)
        for chunk in chunks[1:]:
            messages += await self.sender.send(rest, chunk)
        return messages
