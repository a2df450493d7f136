"""The Discord adapter: messages and slash commands in, replies out, through the conversation
engine every adapter shares.

The engine is duck-typed (``handle(IncomingMessage) -> list[str]``, ``memory``), so
this package never imports ``bot/``. Start-up work (command sync) runs in ``setup_hook``, which
discord.py calls once per login, never on a gateway reconnect; the adapter also remembers that
it synced, so a client rebuilt without the message-content intent does not sync again.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections import Counter, OrderedDict
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any, Protocol

import discord
from discord import app_commands

from adapters.discord._normalise import (PLATFORM, Kept, command_message, guild_locale, incoming,
                                         is_addressed)
from adapters.discord._reply import NO_MENTIONS, ReplyStream, keep_typing
from adapters.discord._text import neutralise, pages, split_message
from adapters.discord._views import ConfirmView, PagesView
from adapters.commands import CommandTable
from adapters.kept_updates import SEEN_KEEP, UpdateMarks
from i18n import DEFAULT_LANGUAGE, language_of_code, say
from memory import streaming
from memory.episodes import is_end_phrase
from memory.errors import MemoryCoreError
from memory.types import ChatKind, IncomingMessage, ThreadKey

log = logging.getLogger(__name__)

CONTENT_INTENT_MISSING = (
    "Discord: the bot does not have the privileged Message Content intent, so it cannot read "
    "server messages that do not @mention it (they arrive empty). DMs, @mentions and slash "
    "commands still work; replies without a mention and threads the bot started do not. To fix "
    "it, enable 'Message Content Intent' under Bot > Privileged Gateway Intents in the Discord "
    "Developer Portal and restart.")
SEEN_MESSAGES = 10_000
"""Message ids remembered to drop a replayed MESSAGE_CREATE (a RESUME replays at most what
was missed while disconnected; older replays are still caught by the unique turn index)."""

class Engine(Protocol):
    """What the adapter needs of ``bot.engine.ConversationEngine``."""

    memory: Any
    commands: CommandTable

    async def handle(self, msg: IncomingMessage) -> list[str]: ...

    async def answer_question(self, question: Any, yes: bool) -> str: ...

    async def replied(self, msg: IncomingMessage) -> None: ...

    async def due_replies(self, platform: str) -> list[IncomingMessage]: ...

    async def answer_due(self, msg: IncomingMessage) -> list[str]: ...

    async def reply_language(self, msg: IncomingMessage) -> str: ...


Marks = UpdateMarks
"""Where received messages are kept until handled (``adapters.kept_updates``)."""


class DiscordAdapter:
    """Everything the Discord client does, in one place (the client only forwards events).

    Args:
        engine: the conversation engine.
        allows: ``Settings.allows`` (``ALLOWED_USERS``).
        guild_id: ``DISCORD_GUILD_ID``: sync slash commands to this guild only (None: globally).
        edit_interval: least seconds between two edits of a reply preview.
        client_options: extra keyword arguments for ``discord.Client`` (tests shorten
            ``guild_ready_timeout``).
        marks: where a message for the bot is kept from its arrival until it is handled (its
            turn's transaction, or the end of a command), so that one a stop cut off is
            handled at the next start (:meth:`recover`); None keeps nothing.

    Messages are handled one after the other in each channel (DM, channel or thread), in the
    order they arrived; a message is kept before it waits for its turn.
    """

    def __init__(self, *, engine: Engine, allows: Callable[[str, str | int], bool],
                 guild_id: int | None = None, edit_interval: float = 1.5,
                 client_options: dict | None = None, marks: Marks | None = None) -> None:
        self.engine = engine
        self.marks = marks
        self.allows = allows
        self.guild_id = guild_id
        self.edit_interval = edit_interval
        self.client_options = dict(client_options or {})
        self.synced = False
        self.content_intent = True  # cleared when Discord says the bot may not have it
        self.ready = asyncio.Event()
        #: whether the gateway is connected now: set by READY and RESUMED, cleared on a
        #: disconnect (``/readyz``)
        self.connected = False
        self.logins = 0
        self.connections = 0
        #: events handled so far: ``messages`` (every message event, ignored ones included),
        #: ``answered``, ``commands``, ``failures``; logged and read by tests
        self.counts: Counter[str] = Counter()
        self.accepting = True
        self._inflight: set[asyncio.Task] = set()
        self._seen: OrderedDict[int, None] = OrderedDict()
        #: set once the messages left unanswered by a stop are answered (first READY); new
        #: messages wait for it, in arrival order
        self.recovered = asyncio.Event()
        self._recovering = False
        self._tails: dict[ThreadKey, asyncio.Future] = {}  # each channel's last message
        self._live: set[str] = set()  # update keys of messages this process received
        self._received = 0

    # ----------------------------------------------------------------- the client

    def build_client(self) -> MemoryBotClient:
        """A client asking for the intents it needs (message content only while
        :attr:`content_intent` holds)."""
        intents = discord.Intents.none()
        intents.guilds = True
        intents.guild_messages = True
        intents.dm_messages = True
        intents.message_content = self.content_intent
        sharded = self.client_options.get("shard_count") is not None
        client_class = ShardedMemoryBotClient if sharded else MemoryBotClient
        return client_class(self, intents=intents, **self.client_options)

    async def setup(self, client: MemoryBotClient) -> None:
        """Start-up work, run from ``setup_hook`` (once per login, never on a reconnect)."""
        self.logins += 1
        flags = client.application_flags
        if self.content_intent and not (flags.gateway_message_content
                                        or flags.gateway_message_content_limited):
            self.content_intent = False
            log.warning(CONTENT_INTENT_MISSING)
        if not self.synced:
            self.synced = True
            from adapters.discord._commands import CatalogueTranslator

            await client.tree.set_translator(CatalogueTranslator())
            await self._sync(client.tree)

    async def _sync(self, tree: app_commands.CommandTree) -> None:
        try:
            if self.guild_id is not None:
                guild = discord.Object(id=self.guild_id)
                tree.copy_global_to(guild=guild)
                commands = await tree.sync(guild=guild)
                log.info("discord slash commands synced to guild %s: %d", self.guild_id,
                         len(commands))
            else:
                commands = await tree.sync()
                log.info("discord slash commands synced globally: %d (new commands can take "
                         "up to an hour to appear everywhere)", len(commands))
        except discord.HTTPException as exc:
            log.error("discord slash commands could not be registered (%s); messages still "
                      "work. Is the bot invited with the applications.commands scope%s?", exc,
                      f" and a member of guild {self.guild_id}" if self.guild_id else "")

    async def recover(self, client: MemoryBotClient) -> None:
        """Start-up work of the first READY, before new messages are handled (once per
        process): answer every stored message whose answer was never delivered (the stored
        answer, a new one, or word that it was lost: ``ConversationEngine.answer_due``), then
        handle the messages received but never handled, in the order they came."""
        if self._recovering:
            return
        self._recovering = True
        try:
            if self.marks is not None:
                await self.marks.prune_seen_updates(_now() - SEEN_KEEP)
            for msg in await self.engine.due_replies(PLATFORM):
                channel_id = int(msg.thread.thread_id or msg.thread.chat_id)
                channel = client.get_partial_messageable(channel_id)
                if msg.language is None:  # the store keeps no hint: the server's, as live
                    msg = replace(msg, language=_server_locale(client, channel_id))
                try:
                    replies = await self.engine.answer_due(msg)
                    if replies:
                        await ReplyStream(channel).finish(replies)
                    await self.engine.replied(msg)
                    log.info("discord: answered a message left unanswered by a stop "
                             "channel=%s message=%s", channel.id, msg.platform_message_id)
                except Exception as exc:  # one message must not keep the others waiting
                    log.warning("discord: a message left unanswered by a stop could not be "
                                "answered (message %s): %s", msg.platform_message_id, exc)
            await self._handle_kept(client)
        except MemoryCoreError as exc:  # the stores fail: new messages say so themselves
            log.error("discord: start-up recovery stopped: %s", exc)
        finally:
            self.recovered.set()

    async def _handle_kept(self, client: MemoryBotClient) -> None:
        """Handle the messages kept as received by an earlier process, oldest first, as they
        would have been handled then (a command answered in private included)."""
        if self.marks is None or client.user is None:
            return
        # what this process received itself (during the answers above) is handled as it came
        kept = [(key, payload) for key, payload in
                await self.marks.received_updates(PLATFORM, prefix=f"{client.user.id}:")
                if key not in self._live]
        if kept:
            log.info("discord: %d message(s) received before a stop are handled now", len(kept))
        for key, payload in kept:
            try:
                item = Kept.from_payload(payload)
            except ValueError as exc:
                log.warning("discord: a kept message could not be read and is dropped (%s): %s",
                            key, exc)
                await self._handled(key)
                continue
            if item.msg.language is None and item.guild_id is not None:  # kept without one
                item = replace(item, msg=replace(
                    item.msg, language=guild_locale(client.get_guild(item.guild_id))))
            message_id = int(item.msg.platform_message_id or 0)
            self._first_delivery(message_id)  # a replay of it from now on is dropped
            try:
                if self.allows(PLATFORM, item.author_id):
                    channel = client.get_channel(item.channel_id) or \
                        client.get_partial_messageable(item.channel_id, guild_id=item.guild_id)
                    reference = (channel.get_partial_message(message_id)
                                 if item.guild_id is not None else None)
                    await self._answer(client, item, channel, reference, author=None)
            except Exception as exc:  # one message must not keep the others waiting
                log.warning("discord: a message received before a stop could not be handled "
                            "(message %s): %s", message_id, exc)
            finally:
                await self._handled(key)

    def on_ready(self, client: MemoryBotClient) -> None:
        self.connections += 1
        log.info("discord connected as %s (id %s) in %d server(s); connection %d",
                 client.user, client.user.id if client.user else "?", len(client.guilds),
                 self.connections)
        self.connected = True
        self.ready.set()

    # ----------------------------------------------------------------- messages

    async def on_message(self, client: MemoryBotClient, message: discord.Message) -> None:
        try:
            if self._admit() and await self._on_message(client, message):
                self.counts["answered"] += 1
        finally:
            self._inflight.discard(asyncio.current_task())  # type: ignore[arg-type]
            self.counts["messages"] += 1

    def _admit(self) -> bool:
        """Track the current event's task for :meth:`drain`; False once stopping."""
        if not self.accepting:
            return False
        task = asyncio.current_task()
        if task is not None:
            self._inflight.add(task)
        return True

    async def drain(self, timeout: float) -> None:
        """Stop taking input and wait (up to ``timeout`` seconds) for the messages and
        commands being handled to be answered."""
        self.accepting = False
        pending = {t for t in self._inflight if not t.done()}
        if pending:
            log.info("discord: waiting for %d message(s) in progress", len(pending))
            await asyncio.wait(pending, timeout=timeout)

    async def _on_message(self, client: MemoryBotClient, message: discord.Message) -> bool:
        """Answer one message event; returns whether it was for the bot."""
        me = client.user
        if me is None or not is_addressed(message, me):
            return False
        if not self.allows(PLATFORM, message.author.id):
            log.info("discord message ignored: user %s is not in ALLOWED_USERS",
                     message.author.id)
            return False
        if not self._first_delivery(message.id):
            log.info("discord message %s delivered again; ignored", message.id)
            return False
        item = Kept(replace(incoming(message, me), update_key=f"{me.id}:{message.id}"),
                    message.channel.id, message.guild.id if message.guild is not None else None,
                    message.author.id)
        # no await before this: the channel's messages are handled in arrival order
        key = item.msg.thread
        previous = self._tails.get(key)
        mine = asyncio.get_running_loop().create_future()
        self._tails[key] = mine
        try:
            if not await self._keep(item):
                return False
            if previous is not None:
                await asyncio.wait([previous])
            if not self.recovered.is_set():
                await self.recovered.wait()
            try:
                await self._answer(client, item, message.channel,
                                   message if message.guild is not None else None,
                                   author=message.author)
            finally:
                await self._handled(item.msg.update_key)
            return True
        finally:
            self._live.discard(item.msg.update_key)
            mine.set_result(None)
            if self._tails.get(key) is mine:
                del self._tails[key]

    async def _answer(self, client: MemoryBotClient, item: Kept,
                      channel: discord.abc.Messageable, reference, *,
                      author: discord.abc.User | None) -> None:
        """Answer a message for the bot in ``channel`` (replying to ``reference`` in servers):
        through the engine with typing and a streamed preview, or in private for a command
        whose answer names the user's memory. ``author`` None: fetched when needed."""
        msg = item.msg
        command = _command_name(msg.text)
        if item.guild_id is not None and self.engine.commands.answered_privately(command):
            await self._answer_in_dm(client, item, channel, reference, command, author)
            return
        if not msg.text and item.guild_id is not None and not client.intents.message_content:
            await ReplyStream(channel, reference=reference).finish(
                [say(await self.engine.reply_language(msg), "discord.no_content")])
            return
        # no await before engine.handle: the message reaches its thread's lock in turn
        typing = asyncio.get_running_loop().create_task(keep_typing(channel))
        reply = ReplyStream(channel, reference=reference, interval=self.edit_interval)
        stream = not msg.text.startswith("/") and not is_end_phrase(msg.text)
        try:
            with streaming.listen(reply.update) if stream else nullcontext():
                replies = await self.engine.handle(msg)
            typing.cancel()
            await reply.finish(replies)
            await self.engine.replied(msg)  # a stop before this: answered at the next start
        except Exception as exc:
            await reply.abort()
            await self.on_failure(exc, where="message", channel=channel, reference=reference)
        finally:
            typing.cancel()

    async def _keep(self, item: Kept) -> bool:
        """Keep a message until it is handled; False when the store knows it already (handled
        or kept before: a redelivery, also across a restart). A store that fails here does
        not stop the message: it is handled, only not kept."""
        if self.marks is None:
            return True
        key = item.msg.update_key
        assert key is not None
        try:
            if await self.marks.update_state(PLATFORM, key) is not None:
                log.info("discord message %s delivered again; ignored",
                         item.msg.platform_message_id)
                return False
            # before it is written: recovery never takes it for one an earlier process left
            self._live.add(key)
            await self.marks.receive_updates(PLATFORM, [(key, item.payload())], _now())
            self._received += 1
            if self._received % 1000 == 0:
                await self.marks.prune_seen_updates(_now() - SEEN_KEEP)
        except MemoryCoreError as exc:
            log.warning("discord message %s could not be kept until handled: %s",
                        item.msg.platform_message_id, exc)
        return True

    async def _handled(self, key: str | None) -> None:
        """The kept message is handled, however its handling ended (a message's turn marked
        it already, in the turn's transaction). Never raises: a failure leaves it kept, so it
        is handled again after a restart (its stored turn is not stored twice)."""
        if self.marks is None or key is None:
            return
        try:
            await self.marks.mark_update_handled(PLATFORM, key, _now())
        except MemoryCoreError as exc:
            log.warning("discord message %s could not be marked handled: %s", key, exc)

    async def _answer_in_dm(self, client: MemoryBotClient, item: Kept,
                            channel: discord.abc.Messageable, reference, command: str,
                            author: discord.abc.User | None) -> None:
        """A typed command whose answer names or counts the user's memory, in a server
        (``adapters.commands``): a first direct message checks that the user can be
        reached, then the command runs as if sent there (``/why`` in the server chat it
        explains) and is answered there; the channel only learns where the answer went."""
        msg = item.msg
        lang = await self.engine.reply_language(msg)
        name = getattr(channel, "name", None)
        where = f"#{name}" if name else say(lang, "discord.a_channel")
        ran = False
        try:
            if author is None:
                author = client.get_user(item.author_id) or \
                    await client.fetch_user(item.author_id)
            dm = author.dm_channel or await author.create_dm()
            await dm.send(say(lang, "discord.dm_header", command=command, where=where),
                          allowed_mentions=NO_MENTIONS)
            ran = True
            replies = await self.engine.handle(
                msg if self.engine.commands.about_this_chat(command) else self._in_dm(msg, dm))
            await ReplyStream(dm).finish(replies)
            note = "discord.dm_sent"
        except discord.HTTPException as exc:  # 50007: the user does not take DMs from here
            log.info("discord DM to user %s failed: %s", item.author_id, exc)
            note = "discord.dm_failed" if ran else "discord.dm_closed"
        await ReplyStream(channel, reference=reference).finish([say(lang, note, command=command)])

    @staticmethod
    def _in_dm(msg: IncomingMessage, dm) -> IncomingMessage:
        """``msg`` as if sent in the author's direct-message channel ``dm``."""
        return replace(msg, thread=ThreadKey(PLATFORM, str(dm.id)), chat_kind=ChatKind.PRIVATE,
                       chat_title=None)

    def _first_delivery(self, message_id: int) -> bool:
        """Whether this message id is new to this process (no await: keeps arrival order).
        Replays after a gateway RESUME are dropped here, commands and end phrases included;
        the conversation engine also drops a turn it already stored."""
        if message_id in self._seen:
            return False
        self._seen[message_id] = None
        if len(self._seen) > SEEN_MESSAGES:
            self._seen.popitem(last=False)
        return True

    def forget_seen(self) -> None:
        """Forget the message ids seen so far (tests of the store-level duplicate check)."""
        self._seen.clear()

    # ----------------------------------------------------------------- slash commands

    async def command(self, interaction: discord.Interaction, name: str, arg: str | None = None,
                      *, ephemeral: bool = True, paginate: bool = False,
                      attach: str | None = None) -> None:
        """Run ``/name arg`` through the engine for a slash command.

        The interaction is deferred first, before any I/O, so Discord's 3-second deadline holds
        even when the thread is busy or the stores are slow; the answer comes as follow-ups.
        """
        try:
            if self._admit():
                await self._command(interaction, name, arg, ephemeral=ephemeral,
                                    paginate=paginate, attach=attach)
        finally:
            self._inflight.discard(asyncio.current_task())  # type: ignore[arg-type]
            self.counts["commands"] += 1

    async def _command(self, interaction: discord.Interaction, name: str, arg: str | None, *,
                       ephemeral: bool, paginate: bool, attach: str | None) -> None:
        if not self.allows(PLATFORM, interaction.user.id):  # a stranger: the client's locale only
            await interaction.response.send_message(
                say(_locale_language(interaction), "discord.not_allowed"), ephemeral=True)
            return
        deferred = await self._defer(interaction, ephemeral=ephemeral)
        msg = command_message(interaction, f"/{name} {arg or ''}".strip())
        commands = self.engine.commands
        if interaction.guild is not None and commands.answered_privately(name) \
                and not commands.about_this_chat(name):
            # answered ephemerally, and run as in the user's DM: a confirmation it asks for is
            # not answered by a "yes" typed in the server channel (which everyone would see)
            try:
                dm = interaction.user.dm_channel or await interaction.user.create_dm()
            except discord.HTTPException as exc:
                log.info("discord DM channel for user %s unavailable: %s", interaction.user.id,
                         exc)
            else:
                msg = self._in_dm(msg, dm)
        ctx = await self.engine.memory.context(msg)
        key = (ctx.thread.id, ctx.user.id)
        before = await self.engine.memory.waiting_question(*key)
        replies = await self.engine.handle(msg)
        lang = await self.engine.reply_language(msg)
        body = "\n\n".join(r for r in replies if r.strip()) or say(lang, "discord.nothing_to_show")
        pending = await self.engine.memory.waiting_question(*key)
        if not deferred:  # the interaction expired: the command still ran exactly once
            await self._fallback(interaction, body, private=ephemeral)
            return
        owner = interaction.user.id
        if pending is not None and pending != before:  # this command asked it
            await self._followup(interaction, body, ephemeral=ephemeral,
                                 view=ConfirmView(self, owner, key, pending))
        elif attach and body.lstrip().startswith(("{", "[")):  # a document, not a chat answer
            await interaction.followup.send(
                say(lang, "discord.export_attached"), ephemeral=ephemeral,
                file=discord.File(io.BytesIO(body.encode()), filename=attach), wait=True)
        elif paginate and len(listing := pages(neutralise(body))) > 1:
            view = PagesView(self, owner, listing, lang=lang)
            await self._followup(interaction, view.render(), ephemeral=ephemeral, view=view)
        else:
            for chunk in split_message(neutralise(body)):
                await self._followup(interaction, chunk, ephemeral=ephemeral)

    async def _defer(self, interaction: discord.Interaction, *, ephemeral: bool) -> bool:
        try:
            await interaction.response.defer(ephemeral=ephemeral, thinking=True)
            return True
        except discord.NotFound as exc:  # 10062 Unknown interaction: more than 3 s went by
            log.warning("discord interaction %s expired before it was acknowledged: %s",
                        interaction.id, exc)
            return False

    async def _followup(self, interaction: discord.Interaction, text: str, *, ephemeral: bool,
                        view: discord.ui.View | None = None) -> None:
        kwargs: dict[str, Any] = {"ephemeral": ephemeral, "allowed_mentions": NO_MENTIONS,
                                  "wait": True}
        if view is not None:
            kwargs["view"] = view
        await interaction.followup.send(text, **kwargs)

    async def _fallback(self, interaction: discord.Interaction, body: str, *,
                        private: bool) -> None:
        """Answer an expired interaction in the channel, where that reveals nothing private."""
        channel = interaction.channel
        if channel is None or (private and interaction.guild is not None):
            log.warning("discord command answer dropped: interaction expired in a server "
                        "channel and the answer is private")
            return
        await ReplyStream(channel).finish([body])

    # ----------------------------------------------------------------- errors

    async def on_failure(self, exc: BaseException, *, where: str,
                         channel: discord.abc.Messageable | None = None,
                         reference: discord.Message | None = None,
                         interaction: discord.Interaction | None = None) -> None:
        """The one error handler: log first, then tell the user briefly; never raises."""
        self.counts["failures"] += 1
        log.error("discord %s failed: %s", where, exc, exc_info=exc)
        failed = say(_locale_language(interaction) if interaction is not None
                     else DEFAULT_LANGUAGE, "platform.sorry")
        try:
            if interaction is not None:
                if interaction.response.is_done():
                    await interaction.followup.send(failed, ephemeral=True,
                                                    allowed_mentions=NO_MENTIONS)
                else:
                    await interaction.response.send_message(failed, ephemeral=True)
            elif channel is not None:
                await ReplyStream(channel, reference=reference).finish([failed])
        except Exception as inner:  # the user cannot be reached either: logged, keep running
            log.warning("discord: could not tell the user about the failure: %s", inner)


class MemoryBotClient(discord.Client):
    """A ``discord.Client`` that forwards its events to a :class:`DiscordAdapter` and owns the
    slash-command tree. Nothing in it is specific to one connection."""

    def __init__(self, adapter: DiscordAdapter, *, intents: discord.Intents, **options) -> None:
        options.setdefault("allowed_mentions", NO_MENTIONS)
        # the bot has no voice: discord.py's warnings about missing voice libraries are noise
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
        super().__init__(intents=intents, **options)
        self.adapter = adapter
        self.tree = app_commands.CommandTree(self)
        self.tree.error(self._on_command_error)
        from adapters.discord._commands import register

        register(self.tree, adapter)

    async def setup_hook(self) -> None:
        await self.adapter.setup(self)

    async def on_ready(self) -> None:
        self.adapter.on_ready(self)
        await self.adapter.recover(self)

    async def on_resumed(self) -> None:
        self.adapter.connected = True
        log.info("discord session resumed")

    async def on_disconnect(self) -> None:
        self.adapter.connected = False

    async def on_message(self, message: discord.Message) -> None:
        await self.adapter.on_message(self, message)

    async def _on_command_error(self, interaction: discord.Interaction,
                                error: app_commands.AppCommandError) -> None:
        original = getattr(error, "original", error)
        name = interaction.command.name if interaction.command is not None else "?"
        await self.adapter.on_failure(original, where=f"command /{name}", interaction=interaction)

    async def on_error(self, event_method: str, /, *args: Any, **kwargs: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        channel = None
        if args and isinstance(args[0], discord.Message):
            channel = args[0].channel
        await self.adapter.on_failure(exc or RuntimeError(event_method), where=event_method,
                                      channel=channel)


def _server_locale(client: discord.Client, channel_id: int) -> str | None:
    """The language hint of a message in channel (or thread) ``channel_id``: its server's
    preferred locale (:func:`guild_locale`); None for a direct message or a channel the
    client does not know."""
    channel = client.get_channel(channel_id)
    return guild_locale(getattr(channel, "guild", None))


class ShardedMemoryBotClient(MemoryBotClient, discord.AutoShardedClient):
    """A :class:`MemoryBotClient` connecting the shards ``shard_ids`` of ``shard_count``
    (discord.py's ``AutoShardedClient``): one gateway connection per shard in this process,
    Discord sending each shard the events of the guilds with ``(guild_id >> 22) % shard_count``
    equal to its id, and direct messages to shard 0 (Discord's sharding documentation). Other
    processes run the other shards."""


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _locale_language(interaction: discord.Interaction) -> str:
    """The product's language for the client locale of ``interaction`` (else English)."""
    locale = getattr(interaction, "locale", None)
    return language_of_code(getattr(locale, "value", None)) or DEFAULT_LANGUAGE


def _command_name(text: str) -> str | None:
    """``"/forget tea"`` -> ``"forget"`` (lower case, without ``@bot``); None for a message
    that is not a command."""
    if not text.startswith("/"):
        return None
    return text[1:].split(maxsplit=1)[0].split("@", 1)[0].lower() if len(text) > 1 else None
