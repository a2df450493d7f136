"""The chat commands of ``bot.commands`` as Discord slash commands.

Each one becomes the same text command the console takes (``/memories all``) and runs through
the engine's handlers (``bot/commands.py``), in the thread it was used in. Answers are
ephemeral (only the user sees them) except ``/new``, which changes the conversation for
everyone in a server channel. ``/memories`` is paginated with buttons; a command that asks for
confirmation (``/forget all``) gets Confirm/Cancel buttons; ``/export`` sends its JSON document
as a file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import discord
from discord import app_commands

if TYPE_CHECKING:
    from adapters.discord._adapter import DiscordAdapter

Choice = app_commands.Choice


def register(tree: app_commands.CommandTree, adapter: DiscordAdapter) -> None:
    """Add every command to ``tree`` (synced later, in ``setup_hook``)."""

    @tree.command(name="start", description="What I am, what I remember, how to control it")
    async def start(interaction: discord.Interaction) -> None:
        await adapter.command(interaction, "start")

    @tree.command(name="help", description="What I am, what I remember, how to control it")
    async def help_(interaction: discord.Interaction) -> None:
        await adapter.command(interaction, "help")

    @tree.command(name="new", description="Close this conversation now; its summary is saved")
    async def new(interaction: discord.Interaction) -> None:
        await adapter.command(interaction, "new", ephemeral=False)

    @tree.command(name="why", description="What I recalled for my last reply to you here")
    async def why(interaction: discord.Interaction) -> None:
        await adapter.command(interaction, "why")

    @tree.command(name="memories", description="What I know about you (only you see it)")
    @app_commands.describe(show="active facts (default), all (with history), or episodes")
    @app_commands.choices(show=[Choice(name="all", value="all"),
                                Choice(name="episodes", value="episodes")])
    async def memories(interaction: discord.Interaction, show: Optional[str] = None) -> None:
        await adapter.command(interaction, "memories", show, paginate=True)

    @tree.command(name="forget", description="Delete a fact (N from /memories), facts "
                                             "matching words, or all (asks to confirm)")
    @app_commands.describe(what="a number from /memories, some words, or all")
    async def forget(interaction: discord.Interaction, what: str) -> None:
        await adapter.command(interaction, "forget", what)

    scope = [Choice(name="chat", value="chat")]

    @tree.command(name="memory_off", description="Stop remembering you (chat: this whole "
                                                 "server chat, admins only)")
    @app_commands.describe(where="chat = the whole chat instead of just you")
    @app_commands.choices(where=scope)
    async def memory_off(interaction: discord.Interaction, where: Optional[str] = None) -> None:
        await adapter.command(interaction, "memory_off", where)

    @tree.command(name="memory_on", description="Resume remembering you (chat: this whole "
                                                "server chat, admins only)")
    @app_commands.describe(where="chat = the whole chat instead of just you")
    @app_commands.choices(where=scope)
    async def memory_on(interaction: discord.Interaction, where: Optional[str] = None) -> None:
        await adapter.command(interaction, "memory_on", where)

    @tree.command(name="export", description="Everything stored about you as one JSON document")
    async def export(interaction: discord.Interaction) -> None:
        await adapter.command(interaction, "export", attach="memory-export.json")

    @tree.command(name="stats", description="Your model usage and its cost")
    async def stats(interaction: discord.Interaction) -> None:
        await adapter.command(interaction, "stats")

    @tree.command(name="timezone", description="Show or set your time zone (IANA name)")
    @app_commands.describe(name="e.g. Europe/Vienna or Asia/Shanghai")
    async def timezone(interaction: discord.Interaction, name: Optional[str] = None) -> None:
        await adapter.command(interaction, "timezone", name)
