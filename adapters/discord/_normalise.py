"""Discord messages and interactions as the core's :class:`IncomingMessage`.

Where turns happen (:func:`place`):

- a DM channel is a private chat: ``ThreadKey("discord", <dm channel id>)``;
- a server channel is a group chat: ``ThreadKey("discord", <channel id>)``;
- a thread is a group thread of its own: ``ThreadKey("discord", <parent id>, <thread id>)``.

Which messages are for the bot (:func:`is_addressed`): every DM; in servers, messages that
mention the bot (its user or its role) or reply to one of its messages; in a thread the bot
started, every message. Messages of bots and webhooks (the bot's own included) and system
messages are never for it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone

import discord

from memory.types import ChatKind, IncomingMessage, ThreadKey

PLATFORM = "discord"

_MENTION_RE = re.compile(r"<(@!?|@&|#)(\d+)>")
_CONVERSATION_TYPES = (discord.MessageType.default, discord.MessageType.reply)


def place(channel, guild) -> tuple[ThreadKey, ChatKind, str | None]:
    """The thread key, privacy class and title of a channel (a title only for server chats,
    as ``/memories`` shows it: ``#channel (Server)`` or ``#channel > thread (Server)``)."""
    if isinstance(channel, discord.DMChannel) or (guild is None and not isinstance(
            channel, discord.GroupChannel)):
        return ThreadKey(PLATFORM, str(channel.id)), ChatKind.PRIVATE, None
    server = f" ({guild.name})" if guild is not None and guild.name else ""
    if isinstance(channel, discord.Thread):
        parent = channel.parent
        parent_name = f"#{parent.name} > " if parent is not None else ""
        return (ThreadKey(PLATFORM, str(channel.parent_id), str(channel.id)), ChatKind.GROUP,
                f"{parent_name}{channel.name}{server}")
    name = getattr(channel, "name", None) or str(channel.id)
    return ThreadKey(PLATFORM, str(channel.id)), ChatKind.GROUP, f"#{name}{server}"


def _mentions_me(message: discord.Message, me: discord.abc.User) -> bool:
    if any(user.id == me.id for user in message.mentions):
        return True
    if message.guild is not None and message.role_mentions:
        member = message.guild.me
        if member is not None and any(role in member.roles for role in message.role_mentions):
            return True
    reference = message.reference
    resolved = reference.resolved if reference is not None else None
    return isinstance(resolved, discord.Message) and resolved.author.id == me.id


def is_addressed(message: discord.Message, me: discord.abc.User) -> bool:
    """Whether the bot should answer this message (see the module docstring)."""
    if message.author.bot or message.webhook_id is not None or message.author.id == me.id:
        return False
    if message.type not in _CONVERSATION_TYPES:
        return False
    channel = message.channel
    if isinstance(channel, discord.DMChannel) or (message.guild is None and not isinstance(
            channel, discord.GroupChannel)):
        return True
    if isinstance(channel, discord.Thread) and channel.owner_id == me.id:
        return True
    return _mentions_me(message, me)


def clean_text(message: discord.Message, me: discord.abc.User) -> str:
    """The message text with the bot's own mentions removed and other mentions written as
    names (``@Ana``, ``@role``, ``#channel``), so the model reads names, not ids."""
    users = {user.id: user for user in message.mentions}
    roles = {role.id: role for role in message.role_mentions}

    def replace(match: re.Match) -> str:
        kind, ident = match.group(1), int(match.group(2))
        if kind.startswith("@") and kind != "@&":
            if ident == me.id:
                return ""
            user = users.get(ident)
            return f"@{user.display_name}" if user is not None else "@unknown-user"
        if kind == "@&":
            role = roles.get(ident)
            if message.guild is not None and message.guild.me is not None and role is not None \
                    and role in message.guild.me.roles:
                return ""
            return f"@{role.name}" if role is not None else "@unknown-role"
        guild = message.guild
        channel = guild.get_channel_or_thread(ident) if guild is not None else None
        return f"#{channel.name}" if channel is not None else "#unknown-channel"

    text = _MENTION_RE.sub(replace, message.content)
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def incoming(message: discord.Message, me: discord.abc.User) -> IncomingMessage:
    """The core's message for a Discord message (see :func:`place` and :func:`clean_text`).
    The author's display name reaches the model in group chats."""
    key, kind, title = place(message.channel, message.guild)
    return IncomingMessage(
        thread=key, chat_kind=kind, platform_user_id=str(message.author.id),
        display_name=message.author.display_name, text=clean_text(message, me),
        sent_at=message.created_at.astimezone(timezone.utc),
        platform_message_id=str(message.id), chat_title=title,
        language=_guild_locale(message),
    )


def _is_admin(user) -> bool:
    """True for a server member who may manage the server (``/memory_off chat``)."""
    perms = getattr(user, "guild_permissions", None)
    return bool(perms is not None and (perms.administrator or perms.manage_guild))


def command_message(interaction: discord.Interaction, text: str) -> IncomingMessage:
    """The core's message for a slash command, as if ``text`` (``/memories all``) had been
    typed in the channel the command was used in."""
    channel = interaction.channel
    if channel is None:  # not in discord.py's cache: the id is enough for the thread key
        channel = discord.Object(id=interaction.channel_id or 0)
    key, kind, title = place(channel, interaction.guild)
    user = interaction.user
    return IncomingMessage(
        thread=key, chat_kind=kind, platform_user_id=str(user.id),
        display_name=user.display_name, text=text,
        sent_at=interaction.created_at.astimezone(timezone.utc), chat_title=title,
        is_admin=_is_admin(user), language=getattr(interaction.locale, "value", None),
    )


@dataclass(frozen=True, slots=True)
class Kept:
    """A message received and kept until handled (the store's received updates), with where
    to answer it: what a restart needs to handle it as it would have been handled.

    Attributes:
        msg: the core's message (its ``update_key`` set).
        channel_id: the channel (or thread) it was sent in.
        guild_id: its server, None for a direct message (then no reply reference).
        author_id: the author's user id (a command answered in private needs their DM).
    """

    msg: IncomingMessage
    channel_id: int
    guild_id: int | None
    author_id: int

    def payload(self) -> str:
        """The JSON kept in the store (version 1), ASCII only. ``lang`` holds the message's
        language hint (:attr:`IncomingMessage.language`), so an answer given after a restart
        speaks as the live answer would have."""
        m = self.msg
        # ASCII JSON: a lone surrogate of the message is kept escaped (no UTF-8 column takes
        # it as text); the engine replaces it when the message is handled
        return json.dumps({
            "v": 1, "channel": self.channel_id, "guild": self.guild_id, "author": self.author_id,
            "thread": [m.thread.platform, m.thread.chat_id, m.thread.thread_id],
            "kind": m.chat_kind.value, "user": m.platform_user_id, "name": m.display_name,
            "text": m.text, "sent_at": m.sent_at.isoformat(), "id": m.platform_message_id,
            "title": m.chat_title, "admin": m.is_admin, "key": m.update_key,
            "lang": m.language})

    @classmethod
    def from_payload(cls, payload: str) -> Kept:
        """The message of :meth:`payload`'s JSON. ``lang`` may be absent (a message kept by
        an earlier version): the message then has no language hint.

        Raises:
            ValueError: not a kept message of a known version (KeyError and TypeError are
                turned into ValueError too).
        """
        try:
            data = json.loads(payload)
            if data.get("v") != 1:
                raise ValueError(f"unknown kept-message version {data.get('v')!r}")
            platform, chat_id, thread_id = data["thread"]
            msg = IncomingMessage(
                thread=ThreadKey(platform, chat_id, thread_id), chat_kind=ChatKind(data["kind"]),
                platform_user_id=data["user"], display_name=data["name"], text=data["text"],
                sent_at=datetime.fromisoformat(data["sent_at"]), platform_message_id=data["id"],
                chat_title=data["title"], is_admin=bool(data["admin"]), update_key=data["key"],
                language=_optional_text(data.get("lang")))
            guild = data["guild"]
            return cls(msg, int(data["channel"]), int(guild) if guild is not None else None,
                       int(data["author"]))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a kept message: {exc}") from exc


def _optional_text(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"not a text: {value!r}")
    return value


def _guild_locale(message: discord.Message) -> str | None:
    """A message carries no locale of its author; a server's preferred locale is the hint
    (None in direct messages)."""
    return guild_locale(message.guild)


def guild_locale(guild: discord.Guild | None) -> str | None:
    """The preferred locale of ``guild`` as Discord tags it (``"zh-CN"``), the language hint
    of its messages; None without a server (a direct message) or when it names none."""
    locale = getattr(guild, "preferred_locale", None) if guild is not None else None
    return getattr(locale, "value", None)
