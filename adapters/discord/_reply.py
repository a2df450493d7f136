"""Delivering a reply in a Discord channel: typing, a preview edited at a safe rate while the
model writes, then the final text in messages of at most 2,000 characters.

Discord allows about five edits per five seconds in a channel; the preview is edited at most
once per ``interval`` seconds (1.5 by default) however fast the model writes. Nothing the model
writes can ping anyone: ``@everyone``/``@here`` are broken with a zero-width space and every
message goes out with ``allowed_mentions`` that allow no mention at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import discord

from adapters.discord._text import MESSAGE_LIMIT, neutralise, split_message

log = logging.getLogger(__name__)

NO_MENTIONS = discord.AllowedMentions.none()
TYPING_EVERY_S = 8.0  # Discord shows "typing" for about 10 seconds per trigger
PREVIEW_SUFFIX = " …"


async def keep_typing(channel: discord.abc.Messageable) -> None:
    """Show "typing…" until cancelled (failures only end the indicator)."""
    try:
        while True:
            await channel.typing()
            await asyncio.sleep(TYPING_EVERY_S)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # missing permission, rate limit: typing is cosmetic
        log.debug("typing indicator stopped: %s", exc)


class ReplyStream:
    """One reply in a channel: :meth:`update` with the text so far (from any point while the
    model writes), then :meth:`finish` with the final reply texts.

    Args:
        channel: where to answer.
        reference: the user's message to answer to (server chats), or None.
        interval: least seconds between two edits of the preview.
    """

    def __init__(self, channel: discord.abc.Messageable, *,
                 reference: discord.Message | None = None, interval: float = 1.5) -> None:
        self.channel = channel
        self.reference = reference
        self.interval = interval
        self.preview: discord.Message | None = None
        self.sent: list[discord.Message] = []
        self._latest = ""
        self._shown = ""
        self._wake = asyncio.Event()
        self._done = asyncio.Event()
        self._pump: asyncio.Task | None = None

    def update(self, text_so_far: str) -> None:
        """Offer the text written so far; it is shown at the next allowed edit."""
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
            text = _preview_text(self._latest)
            if text != self._shown:
                try:
                    await self._show(text)
                except discord.HTTPException as exc:
                    log.warning("reply preview failed: %s", exc)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._done.wait(), self.interval)

    async def _show(self, text: str) -> None:
        if self.preview is None:
            self.preview = await self._send(text, first=True)
        else:
            self.preview = await self.preview.edit(content=text, allowed_mentions=NO_MENTIONS)
        self._shown = text

    async def _send(self, text: str, *, first: bool) -> discord.Message:
        reference = None
        if first and self.reference is not None:
            reference = self.reference.to_reference(fail_if_not_exists=False)
        return await self.channel.send(text, reference=reference, mention_author=False,
                                       allowed_mentions=NO_MENTIONS)

    async def _stop_preview(self) -> None:
        self._done.set()
        self._wake.set()
        if self._pump is not None:
            await self._pump  # lets an edit in flight finish, so its message is known

    async def finish(self, replies: list[str]) -> list[discord.Message]:
        """Deliver the final replies (joined by blank lines): the preview becomes the first
        message, the rest follow. Returns the messages now showing the reply.

        Raises:
            discord.HTTPException: a message could not be sent (after discord.py's own retries
                of rate limits).
        """
        await self._stop_preview()
        chunks = split_message(neutralise("\n\n".join(r for r in replies if r.strip())))
        if not chunks:
            if self.preview is not None:  # the engine had nothing to add to a preview
                await self.preview.delete()
            return []
        messages: list[discord.Message] = []
        if self.preview is not None:
            if chunks[0] != self._shown:
                self.preview = await self.preview.edit(content=chunks[0],
                                                       allowed_mentions=NO_MENTIONS)
            messages.append(self.preview)
        else:
            messages.append(await self._send(chunks[0], first=True))
        for chunk in chunks[1:]:
            messages.append(await self._send(chunk, first=False))
        self.sent = messages
        return messages

    async def abort(self) -> None:
        """Stop previewing (the reply failed); the preview, if any, is left as it is."""
        await self._stop_preview()


def _preview_text(text: str) -> str:
    """The preview of a reply being written: its first message's worth, marked unfinished."""
    chunks = split_message(neutralise(text), MESSAGE_LIMIT - len(PREVIEW_SUFFIX))
    return (chunks[0] if chunks else "") + PREVIEW_SUFFIX
