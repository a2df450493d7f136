"""Buttons under command answers: pages of ``/memories`` and the confirmation of a destructive
command (``/forget all``).

Views live in memory (discord.py's view store): after a restart the buttons of older messages
no longer answer; the question a confirmation shows is kept in the store, so a typed ``yes``
still answers it until it expires.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import discord

from adapters.discord._reply import NO_MENTIONS
from i18n import DEFAULT_LANGUAGE, language_of_code, say

if TYPE_CHECKING:
    from adapters.discord._adapter import DiscordAdapter

log = logging.getLogger(__name__)

class _OwnedView(discord.ui.View):
    """A view only the user who ran the command may press."""

    def __init__(self, adapter: DiscordAdapter, owner_id: int, *, timeout: float) -> None:
        super().__init__(timeout=timeout)
        self.adapter = adapter
        self.owner_id = owner_id

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if interaction.user.id == self.owner_id:
            return True
        lang = language_of_code(getattr(interaction.locale, "value", None)) or DEFAULT_LANGUAGE
        await interaction.response.send_message(say(lang, "discord.not_your_buttons"),
                                                ephemeral=True)
        return False

    async def on_error(self, interaction: discord.Interaction, error: Exception,
                       item: discord.ui.Item[Any], /) -> None:
        await self.adapter.on_failure(error, where=f"button {item!r}", interaction=interaction)


class PagesView(_OwnedView):
    """Previous/next buttons over pages of a listing; the message shows ``Page i/n``."""

    def __init__(self, adapter: DiscordAdapter, owner_id: int, pages: list[str], *,
                 timeout: float = 900, lang: str = DEFAULT_LANGUAGE) -> None:
        super().__init__(adapter, owner_id, timeout=timeout)
        self.pages = pages
        self.page = 0
        self.lang = lang
        self.previous.label = say(lang, "discord.previous")
        self.next.label = say(lang, "discord.next")
        self._refresh()

    def render(self) -> str:
        line = say(self.lang, "discord.page", page=self.page + 1, pages=len(self.pages))
        return f"{self.pages[self.page]}\n\n{line}"

    def _refresh(self) -> None:
        self.previous.disabled = self.page == 0
        self.next.disabled = self.page >= len(self.pages) - 1

    async def _turn(self, interaction: discord.Interaction, step: int) -> None:
        self.page = max(0, min(len(self.pages) - 1, self.page + step))
        self._refresh()
        await interaction.response.edit_message(content=self.render(), view=self,
                                                allowed_mentions=NO_MENTIONS)

    @discord.ui.button(label="<", style=discord.ButtonStyle.secondary)  # labelled in __init__
    async def previous(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await self._turn(interaction, -1)

    @discord.ui.button(label=">", style=discord.ButtonStyle.secondary)
    async def next(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await self._turn(interaction, +1)


class ConfirmView(_OwnedView):
    """Confirm/cancel buttons for the question ``pending`` (``memory.records.PendingQuestion``)
    waiting in the store for ``key`` (thread id, user id).

    Confirm runs the action only if it is still the question waiting (another message in the
    thread cancels it, as typing anything but ``yes`` does in the console), and only once: the
    store gives a question to one taker.
    """

    def __init__(self, adapter: DiscordAdapter, owner_id: int, key: tuple[int, int], pending,
                 *, timeout: float = 600) -> None:
        super().__init__(adapter, owner_id, timeout=timeout)
        self.key = key
        self.pending = pending
        self.lang = getattr(pending, "language", DEFAULT_LANGUAGE)
        self.confirm.label = say(self.lang, "button.confirm")
        self.cancel.label = say(self.lang, "button.cancel")

    async def _claim(self):
        """Take the question out of the store if it is still the one waiting (the store
        gives it to one taker, so two presses cannot both get it); None otherwise."""
        return await self.adapter.engine.memory.take_question(
            *self.key, asked_at=self.pending.asked_at)

    @discord.ui.button(label="!", style=discord.ButtonStyle.danger)  # labelled in __init__
    async def confirm(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await interaction.response.defer()  # before the (possibly slow) deletion
        self.stop()
        question = await self._claim()
        text = (await self.adapter.engine.answer_question(question, True) if question
                else say(self.lang, "discord.confirmation_expired"))
        await interaction.edit_original_response(content=text, view=None,
                                                 allowed_mentions=NO_MENTIONS)

    @discord.ui.button(label="x", style=discord.ButtonStyle.secondary)
    async def cancel(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        self.stop()
        question = await self._claim()
        text = (await self.adapter.engine.answer_question(question, False) if question
                else say(self.lang, "discord.confirmation_expired"))
        await interaction.response.edit_message(content=text, view=None,
                                                allowed_mentions=NO_MENTIONS)

    async def on_timeout(self) -> None:
        await self._claim()
