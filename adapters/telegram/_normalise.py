"""Telegram messages into the core's message type, and the decisions made about them.

- Private chats: every message. Groups and supergroups: the bot is addressed by a command (for
  it: ``/cmd`` or ``/cmd@this_bot``), an ``@mention`` of its username (or a text mention of it),
  or a reply to one of its messages; other group messages are only observed.
- Forum topics: ``message_thread_id`` is part of the thread key only when
  ``is_topic_message`` is set (the General topic has none; in ordinary groups the field is the
  root of a reply chain and means nothing to us). Replies go back into the same topic.
- Captions count as text. Messages of other bots are ignored.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from telegram import Chat, Message, MessageEntity, User

from adapters.telegram._send import Target
from memory.types import ChatKind, IncomingMessage, ThreadKey

PLATFORM = "telegram"

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Inbound:
    """One normalised Telegram message.

    Attributes:
        msg: the core's message (``text`` without the bot's @mention), or None when the
            message holds no text (a sticker, voice or photo without caption).
        target: where replies go (same chat and topic; quoting the message in groups).
        private: a private chat.
        addressed: the bot should answer (always in private chats).
        command: the command name (lower case, without ``/`` and ``@bot``) when the message
            is a command for this bot.
        attachment: the message carries media (used to explain that only text is read).
    """

    msg: IncomingMessage | None
    target: Target
    private: bool
    addressed: bool
    command: str | None
    attachment: bool


def thread_key(message: Message) -> ThreadKey:
    """The thread of a message: the chat, plus the forum topic for real topic messages."""
    topic = message.message_thread_id if getattr(message, "is_topic_message", False) else None
    return ThreadKey(PLATFORM, str(message.chat.id), str(topic) if topic is not None else None)


def chat_kind(chat: Chat) -> ChatKind | None:
    """Private or group; None for channels (not served)."""
    if chat.type == Chat.PRIVATE:
        return ChatKind.PRIVATE
    if chat.type in (Chat.GROUP, Chat.SUPERGROUP):
        return ChatKind.GROUP
    return None


def _entities(message: Message) -> dict[MessageEntity, str]:
    if message.text is not None:
        return message.parse_entities()
    if message.caption is not None:
        return message.parse_caption_entities()
    return {}


def _command(message: Message, entities: dict[MessageEntity, str], username: str
             ) -> tuple[str | None, bool]:
    """``(command name, for another bot)`` of a message starting with a bot command."""
    for entity, text in entities.items():
        if entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
            name, _, bot = text[1:].partition("@")
            return name.lower(), bool(bot) and bot.lower() != username.lower()
    return None, False


def _mentions_bot(entities: dict[MessageEntity, str], bot: User) -> bool:
    for entity, text in entities.items():
        if entity.type == MessageEntity.MENTION and bot.username \
                and text.lower() == f"@{bot.username.lower()}":
            return True
        if entity.type == MessageEntity.TEXT_MENTION and entity.user \
                and entity.user.id == bot.id:
            return True
    return False


def _replies_to_bot(message: Message, bot: User) -> bool:
    replied = message.reply_to_message
    if replied is None or replied.from_user is None or replied.from_user.id != bot.id:
        return False
    # In a forum, a message that replies to nothing points at its topic's first message.
    return not (getattr(message, "is_topic_message", False)
                and replied.message_id == message.message_thread_id
                and replied.forum_topic_created is not None)


def strip_mention(text: str, username: str | None) -> str:
    """The text without the bot's ``@username`` (case-insensitive), spaces tidied."""
    if not username:
        return text.strip()
    cleaned = re.sub(rf"(?<!\w)@{re.escape(username)}\b", " ", text, flags=re.IGNORECASE)
    return re.sub(r"[ \t]{2,}", " ", cleaned).strip()


def classify(message: Message, bot: User) -> Inbound | None:
    """Normalise a message, or None when it is not for the core at all (other bots, channels,
    messages without an author, commands for another bot in a group, and a private message
    whose sender is not the chat: in a private chat the only person is the chat itself, so
    such an update is forged and answering it would reveal the chat owner's data to the
    sender, or the sender's to the chat).

    A command addressed to another bot (``/memories@otherbot``) is ignored in groups, where
    that bot may be present, and answered in a private chat, where only this bot is."""
    author = message.from_user
    kind = chat_kind(message.chat)
    if author is None or author.is_bot or kind is None:
        return None
    private = kind is ChatKind.PRIVATE
    if private and author.id != message.chat.id:
        log.warning("telegram private message from %s in chat %s refused: the sender of a "
                    "private chat is the chat", author.id, message.chat.id)
        return None
    entities = _entities(message)
    command, other_bot = _command(message, entities, bot.username or "")
    if other_bot and not private:
        return None
    addressed = private or command is not None or _mentions_bot(entities, bot) \
        or _replies_to_bot(message, bot)
    raw = message.text if message.text is not None else message.caption
    key = thread_key(message)
    target = Target(chat_id=message.chat.id,
                    thread_id=int(key.thread_id) if key.thread_id is not None else None,
                    reply_to=None if private else message.message_id)
    msg = None
    if raw is not None:
        text = raw if command is not None else strip_mention(raw, bot.username)
        msg = IncomingMessage(
            thread=key, chat_kind=kind, platform_user_id=str(author.id),
            display_name=author.full_name or author.username or str(author.id), text=text,
            sent_at=(message.date or datetime.now(timezone.utc)).astimezone(timezone.utc),
            platform_message_id=str(message.message_id),
            chat_title=None if private else message.chat.title,
            language=author.language_code,
        )
    return Inbound(msg=msg, target=target, private=private, addressed=addressed,
                   command=command, attachment=message.effective_attachment is not None)
