"""A fake Telegram Bot API on 127.0.0.1 (aiohttp.web) for the real python-telegram-bot client.

Point ``ApplicationBuilder().base_url(fake.base_url)`` at it: every call arrives as
``POST /bot<token>/<method>`` with form fields (nested values as JSON text) or a JSON body, and
is recorded in :attr:`FakeTelegram.calls` with its decoded parameters.

- ``getUpdates`` long-polls the updates queued with :meth:`FakeTelegram.push` (the helpers
  :meth:`private`, :meth:`group`, :meth:`edit` and :meth:`press` build realistic updates with
  entities, topics and replies); every queued update is delivered once, as queued (a test that
  pushes the same update twice sees a redelivery).
- ``sendMessage`` / ``editMessageText`` check ``parse_mode=HTML`` the way Telegram does (only
  its tags, balanced; every ``<`` and ``&`` escaped) and answer 400 "can't parse entities"
  otherwise; messages over 4,096 UTF-16 units get 400 "message is too long". They answer a full
  Message object; :meth:`FakeTelegram.sent` gives what users see (tags stripped, entities
  unescaped).
- :meth:`fail` scripts errors for the next calls of a method (429 with ``retry_after``, 400,
  403); :meth:`block` makes every send to a chat answer 403 "bot was blocked by the user".
- ``confirm_by_offset=True`` keeps Telegram's own rule instead: an update stays queued, and
  is delivered by every ``getUpdates``, until a poll asks for a later ``offset`` (so a client
  killed before it confirmed gets its updates again after a restart).
"""

from __future__ import annotations

import asyncio
import html
import itertools
import json
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

TELEGRAM_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span",
                 "tg-spoiler", "a", "code", "pre", "blockquote", "tg-emoji"}
_NESTED = {"reply_parameters", "reply_markup", "commands", "entities", "allowed_updates",
           "link_preview_options", "caption_entities"}
_TOKEN = re.compile(r"<(/?)([a-zA-Z-]+)((?:\s[^<>]*)?)>|&(#\d+|#x[0-9a-fA-F]+|lt|gt|amp|quot);"
                    r"|[<&]")


class EntityError(ValueError):
    """The text is not valid Telegram HTML."""


def visible_html(text: str) -> str:
    """What Telegram shows for an HTML message; raises :class:`EntityError` like the API."""
    out: list[str] = []
    stack: list[str] = []
    pos = 0
    for m in _TOKEN.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        if m.group(2) is not None:
            closing, tag = m.group(1) == "/", m.group(2).lower()
            if tag not in TELEGRAM_TAGS:
                raise EntityError(f"unsupported start tag \"{tag}\" at byte offset {m.start()}")
            if closing:
                if not stack or stack.pop() != tag:
                    raise EntityError(f"unmatched end tag at byte offset {m.start()}")
            else:
                stack.append(tag)
        elif m.group(4) is not None:
            out.append(html.unescape(m.group(0)))
        else:
            raise EntityError(f"unexpected \"{m.group(0)}\" at byte offset {m.start()}")
    out.append(text[pos:])
    if stack:
        raise EntityError(f"can't find end tag corresponding to start tag \"{stack[-1]}\"")
    return "".join(out)


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


@dataclass
class Call:
    """One recorded API call."""

    method: str
    params: dict[str, Any]
    status: int = 200
    at: float = field(default_factory=time.monotonic)
    result: Any = None


@dataclass
class Failure:
    """A scripted error answer."""

    status: int
    description: str
    retry_after: int | None = None


class FakeTelegram:
    """The fake Bot API server. ``await FakeTelegram().start()``, then ``base_url``."""

    def __init__(self, *, token: str = "123456:TEST-token", bot_id: int = 777000,
                 username: str = "memo_test_bot", can_read_all_group_messages: bool = False,
                 max_poll_seconds: float = 0.25, confirm_by_offset: bool = False) -> None:
        self.confirm_by_offset = confirm_by_offset
        self.token = token
        self.bot = {"id": bot_id, "is_bot": True, "first_name": "Memo", "username": username,
                    "can_join_groups": True,
                    "can_read_all_group_messages": can_read_all_group_messages,
                    "supports_inline_queries": False}
        self.max_poll_seconds = max_poll_seconds
        self.calls: list[Call] = []
        self.failures: dict[str, deque[Failure]] = {}
        self.blocked: set[int] = set()
        self.chats: dict[int, dict] = {}
        self._pending: list[dict] = []
        self.polls = 0  # getUpdates requests so far
        self.delivered: dict[int, int] = {}  # update_id -> the poll that delivered it (last)
        self._arrived = asyncio.Event()
        self._changed = asyncio.Event()
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(100)
        self._runner: web.AppRunner | None = None
        self.port = 0

    # ------------------------------------------------------------------ server

    async def start(self) -> FakeTelegram:
        app = web.Application()
        app.router.add_post(r"/bot{token}/{method}", self._dispatch)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    async def _params(self, request: web.Request) -> dict[str, Any]:
        if request.content_type == "application/json":
            raw = await request.json()
        else:
            raw = dict(await request.post())
        params = {}
        for key, value in raw.items():
            if key in _NESTED and isinstance(value, str):
                value = json.loads(value)
            params[key] = value
        return params

    async def _dispatch(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.match_info["token"] != self.token:
            return self._error(401, "Unauthorized")
        params = await self._params(request)
        call = Call(method, params)
        self.calls.append(call)
        self._changed.set()
        queue = self.failures.get(method)
        if queue:
            failure = queue.popleft()
            call.status = failure.status
            return self._error(failure.status, failure.description, failure.retry_after)
        chat_id = params.get("chat_id")
        if chat_id is not None and int(chat_id) in self.blocked and method.startswith("send"):
            call.status = 403
            return self._error(403, "Forbidden: bot was blocked by the user")
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            call.status = 404
            return self._error(404, "Not Found: method not found")
        try:
            result = await handler(params)
        except EntityError as exc:
            call.status = 400
            return self._error(400, f"Bad Request: can't parse entities: {exc}")
        except _BadRequest as exc:
            call.status = 400
            return self._error(400, f"Bad Request: {exc}")
        call.result = result
        return web.json_response({"ok": True, "result": result})

    @staticmethod
    def _error(status: int, description: str, retry_after: int | None = None) -> web.Response:
        body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
        if retry_after is not None:
            body["parameters"] = {"retry_after": retry_after}
        return web.json_response(body, status=status)

    # ------------------------------------------------------------------ methods

    async def _m_getMe(self, params):
        return self.bot

    async def _m_deleteWebhook(self, params):
        return True

    async def _m_setWebhook(self, params):
        return True

    async def _m_setMyCommands(self, params):
        return True

    async def _m_sendChatAction(self, params):
        return True

    async def _m_answerCallbackQuery(self, params):
        return True

    async def _m_getUpdates(self, params):
        self.polls += 1
        timeout = float(params.get("timeout") or 0)
        if self.confirm_by_offset:
            offset = int(params.get("offset") or 0)
            self._pending = [u for u in self._pending if u["update_id"] >= offset]
            if not self._pending and timeout > 0:
                self._arrived.clear()
                try:
                    await asyncio.wait_for(self._arrived.wait(),
                                           min(timeout, self.max_poll_seconds))
                except asyncio.TimeoutError:
                    pass
            updates = list(self._pending)
            for update in updates:
                self.delivered[update["update_id"]] = self.polls
            return updates
        if not self._pending and timeout > 0:
            self._arrived.clear()
            try:
                await asyncio.wait_for(self._arrived.wait(), min(timeout, self.max_poll_seconds))
            except asyncio.TimeoutError:
                pass
        updates, self._pending = self._pending, []
        for update in updates:
            self.delivered[update["update_id"]] = self.polls
        return updates

    def _render(self, params) -> str:
        text = str(params.get("text", ""))
        if params.get("parse_mode") == "HTML":
            text = visible_html(text)
        elif params.get("parse_mode"):
            raise _BadRequest(f"unsupported parse_mode {params['parse_mode']}")
        if not text.strip():
            raise _BadRequest("message text is empty")
        if utf16_len(text) > 4096:
            raise _BadRequest("message is too long")
        return text

    def _message(self, chat_id: int, text: str, *, thread: int | None = None,
                 message_id: int | None = None, markup=None) -> dict:
        chat = self.chats.get(chat_id) or {"id": chat_id, "type": "private" if chat_id > 0
                                           else "supergroup"}
        msg = {"message_id": message_id or next(self._message_ids), "date": int(time.time()),
               "chat": chat, "from": {k: self.bot[k] for k in ("id", "is_bot", "first_name",
                                                                "username")},
               "text": text}
        if thread is not None:
            msg["message_thread_id"] = thread
            msg["is_topic_message"] = True
        if markup:
            msg["reply_markup"] = markup
        return msg

    async def _m_sendMessage(self, params):
        text = self._render(params)
        thread = params.get("message_thread_id")
        return self._message(int(params["chat_id"]), text,
                             thread=int(thread) if thread is not None else None,
                             markup=params.get("reply_markup"))

    async def _m_editMessageText(self, params):
        text = self._render(params)
        return self._message(int(params["chat_id"]), text, message_id=int(params["message_id"]),
                             markup=params.get("reply_markup"))

    async def _m_editMessageReplyMarkup(self, params):
        return self._message(int(params["chat_id"]), "(edited)",
                             message_id=int(params["message_id"]),
                             markup=params.get("reply_markup"))

    # ------------------------------------------------------------------ scripting

    def fail(self, method: str, status: int, description: str, *, times: int = 1,
             retry_after: int | None = None) -> None:
        """Answer the next ``times`` calls of ``method`` with this error."""
        queue = self.failures.setdefault(method, deque())
        queue.extend(Failure(status, description, retry_after) for _ in range(times))

    def block(self, chat_id: int) -> None:
        """Every send to ``chat_id`` answers 403 "bot was blocked by the user"."""
        self.blocked.add(chat_id)

    def push(self, *updates: dict) -> None:
        """Queue updates for the next ``getUpdates`` (redelivering one is pushing it again)."""
        for update in updates:
            self.delivered.pop(update["update_id"], None)
        self._pending.extend(updates)
        self._arrived.set()

    # ------------------------------------------------------------------ update builders

    @staticmethod
    def user(user_id: int, first_name: str, *, is_bot: bool = False) -> dict:
        return {"id": user_id, "is_bot": is_bot, "first_name": first_name}

    @staticmethod
    def _entities(text: str) -> list[dict]:
        entities = []
        command_end = 0
        if text.startswith("/"):
            first = text.split()[0]
            entities.append({"type": "bot_command", "offset": 0, "length": utf16_len(first)})
            command_end = len(first)
        for m in re.finditer(r"@\w+", text):
            if m.start() >= command_end:
                entities.append({"type": "mention", "offset": utf16_len(text[:m.start()]),
                                 "length": utf16_len(m.group(0))})
        return entities

    def _update(self, message: dict, kind: str = "message") -> dict:
        return {"update_id": next(self._update_ids), kind: message}

    def private(self, user: dict, text: str | None, *, caption: str | None = None,
                media: str | None = None) -> dict:
        """A private-chat message update (``media``: ``sticker``, ``voice`` or ``photo``)."""
        chat = {"id": user["id"], "type": "private", "first_name": user["first_name"]}
        self.chats[user["id"]] = chat
        return self._update(self._build(chat, user, text, caption=caption, media=media))

    def group(self, chat_id: int, title: str, user: dict, text: str | None, *,
              topic: int | None = None, reply_to: dict | None = None, forum: bool = False,
              media: str | None = None, caption: str | None = None) -> dict:
        """A (super)group message update; ``topic`` puts it in a forum topic, ``reply_to`` is
        the Message it replies to (e.g. one the bot sent)."""
        chat = {"id": chat_id, "type": "supergroup", "title": title}
        if forum:
            chat["is_forum"] = True
        self.chats[chat_id] = chat
        msg = self._build(chat, user, text, caption=caption, media=media)
        if topic is not None:
            msg["message_thread_id"] = topic
            msg["is_topic_message"] = True
            if reply_to is None:  # Telegram: a topic message replies to the topic's root
                msg["reply_to_message"] = {
                    "message_id": topic, "date": msg["date"], "chat": chat,
                    "from": user, "forum_topic_created": {"name": "topic", "icon_color": 1}}
        if reply_to is not None:
            msg["reply_to_message"] = reply_to
        return self._update(msg)

    def _build(self, chat: dict, user: dict, text: str | None, *, caption: str | None,
               media: str | None) -> dict:
        msg: dict[str, Any] = {"message_id": next(self._message_ids), "date": int(time.time()),
                               "chat": chat, "from": user}
        if text is not None:
            msg["text"] = text
            entities = self._entities(text)
            if entities:
                msg["entities"] = entities
        if caption is not None:
            msg["caption"] = caption
        if media == "sticker":
            msg["sticker"] = {"file_id": "s1", "file_unique_id": "s1", "width": 512,
                              "height": 512, "is_animated": False, "is_video": False,
                              "type": "regular"}
        elif media == "voice":
            msg["voice"] = {"file_id": "v1", "file_unique_id": "v1", "duration": 3}
        elif media == "photo":
            msg["photo"] = [{"file_id": "p1", "file_unique_id": "p1", "width": 90,
                             "height": 90}]
        return msg

    def edit(self, update: dict, text: str) -> dict:
        """An ``edited_message`` update for the message of ``update`` with new text."""
        msg = dict(update["message"])
        msg["text"] = text
        msg["edit_date"] = int(time.time())
        entities = self._entities(text)
        msg.pop("entities", None)
        if entities:
            msg["entities"] = entities
        return self._update(msg, "edited_message")

    def press(self, user: dict, message: dict, data: str) -> dict:
        """A ``callback_query`` update: ``user`` pressed a button with ``data`` on
        ``message`` (a Message the bot sent, e.g. from :meth:`sent_messages`)."""
        return {"update_id": next(self._update_ids),
                "callback_query": {"id": str(next(self._message_ids)), "from": user,
                                   "chat_instance": "ci", "message": message, "data": data}}

    # ------------------------------------------------------------------ inspection

    def of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def sent_messages(self, chat_id: int | None = None) -> list[dict]:
        """Messages the bot sent successfully (as the Message objects returned), in order."""
        out = []
        for c in self.calls:
            if c.method == "sendMessage" and c.status == 200 and (
                    chat_id is None or int(c.params["chat_id"]) == chat_id):
                out.append(c.params | {"visible": self._visible(c.params)})
        return out

    def sent(self, chat_id: int | None = None) -> list[str]:
        """What users saw, one entry per message sent successfully."""
        return [m["visible"] for m in self.sent_messages(chat_id)]

    def seen(self, chat_id: int) -> list[str]:
        """What a user sees now, one entry per message sent successfully, each with its last
        successful ``editMessageText`` applied (a streamed reply's preview becomes its final
        text)."""
        shown: dict[int, str] = {}
        for c in self.calls:
            if c.status != 200 or int(c.params.get("chat_id", 0)) != chat_id:
                continue
            if c.method == "sendMessage" and isinstance(c.result, dict):
                shown[c.result["message_id"]] = self._visible(c.params)
            elif c.method == "editMessageText" and int(c.params["message_id"]) in shown:
                shown[int(c.params["message_id"])] = self._visible(c.params)
        return list(shown.values())

    def _visible(self, params: dict) -> str:
        text = str(params.get("text", ""))
        return visible_html(text) if params.get("parse_mode") == "HTML" else text

    async def taken(self, *updates: dict) -> None:
        """Wait until these updates were delivered and the client polled again (so they are
        in its update queue)."""
        ids = [u["update_id"] for u in updates]
        await self.wait_for(lambda: all(i in self.delivered for i in ids)
                            and self.polls > max(self.delivered[i] for i in ids))

    async def wait_for(self, predicate, timeout: float = 30.0) -> None:
        """Wait until ``predicate()`` holds (checked after every call); fail after
        ``timeout`` seconds (a generous guard, not a timing assertion)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"condition not reached; calls: "
                                     f"{[(c.method, c.status) for c in self.calls][-20:]}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), min(remaining, 0.5))
            except asyncio.TimeoutError:
                pass


class _BadRequest(Exception):
    pass
