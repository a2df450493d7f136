"""A fake Discord on 127.0.0.1 (aiohttp.web) for the real discord.py client.

One server plays both halves of Discord:

- REST under ``/api/v10``: login (``GET /users/@me``, ``GET /oauth2/applications/@me``), command
  sync (``PUT /applications/{app}/commands`` and the guild variant), messages (create, edit),
  typing, interaction callbacks (``POST /interactions/{id}/{token}/callback``) and follow-ups
  (``/webhooks/{app}/{token}``). Every request is recorded in :attr:`FakeDiscord.calls`;
  :meth:`FakeDiscord.fail` scripts an error (429 with ``retry_after``, or any status) for the next
  matching requests. Answers are ``application/json`` exactly (discord.py parses nothing else).
- The gateway websocket at ``/gateway``: HELLO, IDENTIFY -> READY + one GUILD_CREATE per guild,
  heartbeat ACKs, RESUME -> RESUMED (or an invalid session, to force a fresh IDENTIFY), and
  :meth:`FakeDiscord.dispatch` for any event. Frames are plain JSON text (discord.py asks for
  zlib-stream but reads uncompressed text frames as JSON).

Messages the bot sends or edits are kept in :attr:`FakeDiscord.messages` with their latest
content, so tests can read what a user ends up seeing.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from aiohttp import WSMsgType, web

DISCORD_EPOCH_MS = 1420070400000
MESSAGE_CONTENT_FLAG = 1 << 18  # application flag GATEWAY_MESSAGE_CONTENT
EPHEMERAL = 1 << 6


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat()


@dataclass
class Call:
    """One recorded REST request (``path`` without the ``/api/v10`` prefix)."""

    n: int
    method: str
    path: str
    query: dict
    body: Any
    status: int = 200


@dataclass
class Failure:
    """A scripted error for requests whose ``METHOD path`` matches ``pattern`` (a regex)."""

    pattern: str
    status: int = 429
    retry_after: float = 0.05
    times: int = 1
    code: int = 0  # Discord's JSON error code (10062: unknown interaction)


@dataclass
class Channel:
    id: int
    name: str
    type: int = 0  # 0 text, 11 public thread


@dataclass
class Thread:
    id: int
    parent_id: int
    name: str
    owner_id: int


@dataclass
class Guild:
    id: int
    name: str
    channels: list[Channel] = field(default_factory=list)
    threads: list[Thread] = field(default_factory=list)
    locale: str = "en-US"  # the server's preferred locale


class FakeDiscord:
    """The fake: start with :meth:`start`, point discord.py at :attr:`api_base` and
    :attr:`gateway_url`, stop with :meth:`close`.

    Args:
        message_content: whether the application has the message-content intent enabled in the
            developer portal. When the bot asks for the intent without it, the gateway closes
            with 4014 as Discord does.
        content_flag: the ``GATEWAY_MESSAGE_CONTENT`` application flag reported at login
            (default: as ``message_content``; set it apart to make the two disagree).
    """

    def __init__(self, *, message_content: bool = True, content_flag: bool | None = None) -> None:
        self._seq_id = 0
        self.users: dict[str, dict] = {}  # every user made by :meth:`user`, by id
        self.bot = self.user("memorybot", bot=True)
        self.app_id = self.snowflake()
        self.message_content = message_content
        self.content_flag = message_content if content_flag is None else content_flag
        self.guilds: list[Guild] = []
        self.calls: list[Call] = []
        self.identifies: list[dict] = []
        self.resumes: list[dict] = []
        self.messages: dict[int, dict] = {}
        self.failures: list[Failure] = []
        self.synced: dict[str, list[dict]] = {}  # "global" or guild id -> commands
        self.command_ids: dict[str, int] = {}
        self.invalidate_next_resume = False
        self._interactions: dict[str, dict] = {}
        self._originals: dict[str, int] = {}  # interaction token -> message id
        self._dm_channels: dict[str, int] = {}  # user id -> DM channel id
        self._ws: web.WebSocketResponse | None = None
        self._seq = 0
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0

    # ----------------------------------------------------------------- ids and payloads

    def snowflake(self) -> int:
        self._seq_id += 1
        return ((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) + self._seq_id

    def user(self, name: str, *, bot: bool = False) -> dict:
        user = {"id": str(self.snowflake()), "username": name, "global_name": name.capitalize(),
                "discriminator": "0", "avatar": None, "bot": bot}
        self.users[user["id"]] = user
        return user

    def add_guild(self, name: str, channels: list[str], *,
                  threads: list[tuple[str, str, bool]] = (), guild_id: int | None = None,
                  locale: str = "en-US") -> Guild:
        """A guild with text channels and threads ``(name, parent channel, started by the
        bot)`` and a preferred locale; it is announced by GUILD_CREATE on every IDENTIFY of the
        shard it belongs to (``guild_id`` chooses its id, hence its shard)."""
        guild = Guild(guild_id or self.snowflake(), name, locale=locale)
        for channel in channels:
            guild.channels.append(Channel(self.snowflake(), channel))
        for thread_name, parent, by_bot in threads:
            parent_id = next(c.id for c in guild.channels if c.name == parent)
            owner = int(self.bot["id"]) if by_bot else self.snowflake()
            guild.threads.append(Thread(self.snowflake(), parent_id, thread_name, owner))
        self.guilds.append(guild)
        return guild

    def channel(self, guild: Guild, name: str) -> int:
        for channel in guild.channels:
            if channel.name == name:
                return channel.id
        return next(t.id for t in guild.threads if t.name == name)

    def _thread_payload(self, guild: Guild, thread: Thread) -> dict:
        return {"id": str(thread.id), "guild_id": str(guild.id), "parent_id": str(thread.parent_id),
                "owner_id": str(thread.owner_id), "name": thread.name, "type": 11,
                "message_count": 0, "member_count": 2, "rate_limit_per_user": 0,
                "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                                    "archive_timestamp": _now_iso(), "locked": False}}

    def _guild_payload(self, guild: Guild) -> dict:
        everyone = {"id": str(guild.id), "name": "@everyone", "permissions": str((1 << 41) - 1),
                    "position": 0, "color": 0, "hoist": False, "managed": False,
                    "mentionable": False, "flags": 0}
        channels = [{"id": str(c.id), "type": c.type, "name": c.name, "position": n,
                     "guild_id": str(guild.id), "permission_overwrites": [], "nsfw": False,
                     "parent_id": None} for n, c in enumerate(guild.channels)]
        return {"id": str(guild.id), "name": guild.name, "owner_id": str(self.snowflake()),
                "roles": [everyone], "channels": channels,
                "threads": [self._thread_payload(guild, t) for t in guild.threads],
                "members": [self._member(self.bot)], "member_count": 3, "large": False,
                "unavailable": False, "joined_at": _now_iso(), "emojis": [], "stickers": [],
                "features": [], "presences": [], "voice_states": [], "stage_instances": [],
                "guild_scheduled_events": [], "soundboard_sounds": [], "preferred_locale": guild.locale,
                "premium_tier": 0, "afk_timeout": 300, "verification_level": 0,
                "default_message_notifications": 0, "explicit_content_filter": 0, "mfa_level": 0,
                "nsfw_level": 0, "system_channel_flags": 0}

    @staticmethod
    def _member(user: dict, *, with_user: bool = True) -> dict:
        member = {"roles": [], "joined_at": _now_iso(), "deaf": False, "mute": False,
                  "nick": None, "flags": 0}
        if with_user:
            member["user"] = user
        return member

    def _bot_message(self, channel_id: int | str, body: dict, **extra) -> dict:
        mid = self.snowflake()
        message = {"id": str(mid), "channel_id": str(channel_id), "author": self.bot,
                   "content": body.get("content") or "", "timestamp": _now_iso(),
                   "edited_timestamp": None, "tts": False, "mention_everyone": False,
                   "mentions": [], "mention_roles": [], "attachments": [], "embeds": [],
                   "components": body.get("components") or [], "pinned": False, "type": 0,
                   "flags": body.get("flags") or 0, **extra}
        if body.get("message_reference"):
            message["type"] = 19
            message["message_reference"] = body["message_reference"]
        self.messages[mid] = {**message, "edits": 0,
                              "allowed_mentions": body.get("allowed_mentions")}
        return message

    # ----------------------------------------------------------------- server life cycle

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def close(self) -> None:
        if self._ws is not None and not self._ws.closed:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def fail(self, pattern: str, *, status: int = 429, retry_after: float = 0.05,
             times: int = 1, code: int = 0) -> None:
        """Answer the next ``times`` requests matching ``pattern`` (a regex searched in
        ``"METHOD /path"``) with ``status`` (429: a Discord rate limit with ``retry_after``;
        others an error with Discord's JSON ``code``)."""
        self.failures.append(Failure(pattern, status, retry_after, times, code))

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate, *, timeout: float = 30.0):
        """Wait until ``predicate()`` is truthy (re-checked after every request and event);
        return its value. The timeout only guards against a hung test."""
        async def check():
            async with self._changed:
                while not (value := predicate()):
                    await self._changed.wait()
                return value
        return await asyncio.wait_for(check(), timeout)

    # ----------------------------------------------------------------- REST

    def find(self, method: str, pattern: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and re.search(pattern, c.path)]

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["path"]
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            if request.content_type == "application/json" and raw:
                body = json.loads(raw)
            elif request.content_type.startswith("multipart/"):
                body = {"multipart": raw.decode("utf-8", "replace")}
        call = Call(len(self.calls) + 1, request.method, path, dict(request.query), body)
        self.calls.append(call)
        try:
            for failure in self.failures:
                if failure.times > 0 and re.search(failure.pattern, f"{request.method} {path}"):
                    failure.times -= 1
                    call.status = failure.status
                    if failure.status == 429:
                        return _json({"message": "You are being rate limited.",
                                      "retry_after": failure.retry_after, "global": False},
                                     status=429, headers={"Via": "1.1 google",
                                                          "Retry-After": str(failure.retry_after)})
                    return _json({"message": "scripted failure", "code": failure.code},
                                 status=failure.status)
            status, answer = self._route(request.method, path, body or {})
            call.status = status
            if status == 204:
                return web.Response(status=204)
            return _json(answer, status=status)
        finally:
            await self._notify()

    def _route(self, method: str, path: str, body: dict) -> tuple[int, Any]:
        app = str(self.app_id)
        if method == "GET" and path == "/users/@me":
            return 200, self.bot
        if method == "GET" and path == "/oauth2/applications/@me":
            flags = MESSAGE_CONTENT_FLAG if self.content_flag else 0
            return 200, {"id": app, "name": "memorybot", "icon": None, "description": "",
                         "rpc_origins": [], "bot_public": True, "bot_require_code_grant": False,
                         "owner": self.user("owner"), "summary": "", "verify_key": "00",
                         "team": None, "flags": flags, "interactions_endpoint_url": None}
        if method == "GET" and path == "/gateway/bot":
            return 200, {"url": self.gateway_url, "shards": 1,
                         "session_start_limit": {"total": 1000, "remaining": 999,
                                                 "reset_after": 0, "max_concurrency": 1}}
        m = re.fullmatch(r"/applications/(\d+)(?:/guilds/(\d+))?/commands", path)
        if method == "PUT" and m:
            scope = m.group(2) or "global"
            commands = []
            for command in body:
                cid = self.command_ids.setdefault(f"{scope}:{command['name']}", self.snowflake())
                commands.append({**command, "id": str(cid), "application_id": app,
                                 "version": "1", "guild_id": m.group(2), "type": 1,
                                 "default_member_permissions": None, "dm_permission": True})
            self.synced[scope] = commands
            return 200, commands
        if method == "POST" and path == "/users/@me/channels":  # open a DM channel
            recipient = str(body["recipient_id"])
            return 200, {"id": str(self.dm_channel({"id": recipient})), "type": 1,
                         "last_message_id": None, "flags": 0,
                         "recipients": [self.users.get(recipient, {"id": recipient,
                                                                   "username": "someone",
                                                                   "discriminator": "0",
                                                                   "avatar": None})]}
        m = re.fullmatch(r"/channels/(\d+)/typing", path)
        if method == "POST" and m:
            return 204, None
        m = re.fullmatch(r"/channels/(\d+)/messages", path)
        if method == "POST" and m:
            return 200, self._bot_message(m.group(1), body)
        m = re.fullmatch(r"/channels/(\d+)/messages/(\d+)", path)
        if method == "PATCH" and m:
            return self._edit(int(m.group(2)), body)
        m = re.fullmatch(r"/interactions/(\d+)/([^/]+)/callback", path)
        if method == "POST" and m:
            return self._callback(int(m.group(1)), m.group(2), body)
        m = re.fullmatch(r"/webhooks/(\d+)/([^/]+)", path)
        if method == "POST" and m:
            interaction = self._interactions.get(m.group(2), {})
            return 200, self._bot_message(interaction.get("channel_id", 0), body,
                                          webhook_id=app, application_id=app,
                                          interaction_token=m.group(2))
        m = re.fullmatch(r"/webhooks/(\d+)/([^/]+)/messages/(@original|\d+)", path)
        if method == "PATCH" and m:
            if m.group(3) == "@original":
                original = self._originals.get(m.group(2))
                if original is None:
                    interaction = self._interactions.get(m.group(2), {})
                    message = self._bot_message(interaction.get("channel_id", 0), body,
                                                webhook_id=app)
                    self._originals[m.group(2)] = int(message["id"])
                    return 200, message
                return self._edit(original, body)
            return self._edit(int(m.group(3)), body)
        return 404, {"message": f"Unknown route {method} {path}", "code": 0}

    def _edit(self, mid: int, body: dict) -> tuple[int, Any]:
        stored = self.messages.get(mid)
        if stored is None:
            return 404, {"message": "Unknown Message", "code": 10008}
        if "content" in body:
            stored["content"] = body["content"] or ""
        if "components" in body:
            stored["components"] = body["components"] or []
        stored["edits"] += 1
        stored["edited_timestamp"] = _now_iso()
        return 200, {k: v for k, v in stored.items() if k not in {"edits", "allowed_mentions"}}

    def _callback(self, iid: int, token: str, body: dict) -> tuple[int, Any]:
        kind = body.get("type")
        data = body.get("data") or {}
        interaction = self._interactions.get(token, {})
        result = {"interaction": {"id": str(iid), "type": interaction.get("type", 2),
                                  "response_message_loading": kind == 5,
                                  "response_message_ephemeral": bool((data.get("flags") or 0)
                                                                     & EPHEMERAL)},
                  "resource": {"type": kind}}
        if kind == 4:  # a message answering the interaction
            message = self._bot_message(interaction.get("channel_id", 0), data)
            self._originals[token] = int(message["id"])
            result["resource"]["message"] = message
        elif kind == 7:  # update the message the component is on
            mid = int(interaction["message"]["id"])
            _, message = self._edit(mid, data)
            result["resource"]["message"] = message
        return 200, result

    # ----------------------------------------------------------------- gateway

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._ws = ws
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 41250}}))
        async for frame in ws:
            if frame.type != WSMsgType.TEXT:
                continue
            payload = json.loads(frame.data)
            op = payload.get("op")
            if op == 1:
                await ws.send_str(json.dumps({"op": 11}))
            elif op == 2:
                self.identifies.append(payload["d"])
                await self._notify()
                if payload["d"]["intents"] & (1 << 15) and not self.message_content:
                    await ws.close(code=4014, message=b"Disallowed intent(s).")
                    break
                await self._ready(ws)
            elif op == 6:
                self.resumes.append(payload["d"])
                await self._notify()
                if self.invalidate_next_resume:
                    self.invalidate_next_resume = False
                    await ws.send_str(json.dumps({"op": 9, "d": False}))
                else:
                    await self._send(ws, "RESUMED", {})
        if self._ws is ws:
            self._ws = None
        return ws

    async def _send(self, ws: web.WebSocketResponse, name: str, data: dict) -> None:
        self._seq += 1
        await ws.send_str(json.dumps({"op": 0, "t": name, "s": self._seq, "d": data}))

    @staticmethod
    def shard_of(guild_id: int, shard_count: int) -> int:
        """The shard that gets a guild's events: ``(guild_id >> 22) % shard_count`` (Discord's
        sharding formula)."""
        return (guild_id >> 22) % shard_count

    async def _ready(self, ws: web.WebSocketResponse) -> None:
        """READY and the GUILD_CREATEs of the guilds of the identifying shard (every guild for
        a client that identified without ``shard``)."""
        shard = self.identifies[-1].get("shard")
        shard_id, shard_count = shard or (0, 1)
        guilds = [g for g in self.guilds if self.shard_of(g.id, shard_count) == shard_id]
        self._seq = 0
        flags = MESSAGE_CONTENT_FLAG if self.content_flag else 0
        await self._send(ws, "READY", {
            "v": 10, "user": self.bot, "session_id": f"session-{len(self.identifies)}",
            "resume_gateway_url": self.gateway_url, "guilds": [
                {"id": str(g.id), "unavailable": True} for g in guilds],
            "private_channels": [], "relationships": [],
            "application": {"id": str(self.app_id), "flags": flags},
            **({"shard": shard} if shard else {})})
        for guild in guilds:
            await self._send(ws, "GUILD_CREATE", self._guild_payload(guild))

    async def connected(self) -> web.WebSocketResponse:
        return await self.wait_for(lambda: self._ws if self._ws and not self._ws.closed and
                                   self.identifies else None)

    async def dispatch(self, name: str, data: dict) -> None:
        """Send one gateway event to the connected client."""
        ws = await self.connected()
        await self._send(ws, name, data)

    async def drop_connection(self, *, resumable: bool = True) -> None:
        """Close the gateway socket as a network failure would (code 4000: the client
        reconnects and resumes). ``resumable=False`` answers the RESUME with an invalid
        session, so the client IDENTIFYs again and gets a second READY."""
        ws = await self.connected()
        self.invalidate_next_resume = not resumable
        await ws.close(code=4000, message=b"reconnect")

    # ----------------------------------------------------------------- user actions

    async def say(self, author: dict, content: str, *, guild: Guild | None = None,
                  channel_id: int | None = None, mentions: list[dict] = (),
                  reply_to: dict | None = None, ping: bool = True) -> dict:
        """A user writes a message: in a DM (no guild; the DM channel is per author) or in a
        guild channel or thread; ``reply_to`` makes it a reply (pinging the author unless
        ``ping`` is False, as Discord's reply toggle does). Returns the MESSAGE_CREATE payload."""
        mid = self.snowflake()
        if guild is None:
            channel_id = channel_id or self._dm_channels.setdefault(author["id"], self.snowflake())
        payload = {"id": str(mid), "channel_id": str(channel_id), "author": author,
                   "content": content, "timestamp": _now_iso(), "edited_timestamp": None,
                   "tts": False, "mention_everyone": False, "mention_roles": [],
                   "attachments": [], "embeds": [], "pinned": False, "type": 0, "flags": 0,
                   "mentions": [dict(m) for m in mentions]}
        if guild is not None:
            payload["guild_id"] = str(guild.id)
            payload["member"] = self._member(author, with_user=False)
            for mention in payload["mentions"]:
                mention["member"] = self._member(mention, with_user=False)
        if reply_to is not None:
            payload["type"] = 19
            payload["message_reference"] = {"message_id": reply_to["id"],
                                            "channel_id": str(channel_id),
                                            **({"guild_id": str(guild.id)} if guild else {})}
            referenced = {k: v for k, v in reply_to.items()
                          if k not in {"edits", "allowed_mentions", "interaction_token"}}
            payload["referenced_message"] = referenced
            if ping and guild is not None and not any(m["id"] == reply_to["author"]["id"]
                                                      for m in payload["mentions"]):
                payload["mentions"].append({**reply_to["author"],
                                            "member": self._member(reply_to["author"],
                                                                   with_user=False)})
        await self.dispatch("MESSAGE_CREATE", payload)
        return payload

    def dm_channel(self, author: dict) -> int:
        return self._dm_channels.setdefault(author["id"], self.snowflake())

    async def slash(self, author: dict, name: str, options: dict | None = None, *,
                    guild: Guild | None = None, channel_id: int | None = None) -> str:
        """A user runs ``/name`` with string options; returns the interaction token."""
        scope = str(guild.id) if guild is not None and str(guild.id) in self.synced else "global"
        command = next(c for c in self.synced[scope] if c["name"] == name)
        data = {"id": command["id"], "name": name, "type": 1,
                "options": [{"name": k, "type": 3, "value": v} for k, v in (options or {}).items()]}
        if scope != "global":
            data["guild_id"] = scope
        return await self._interact(author, 2, data, guild=guild, channel_id=channel_id)

    async def click(self, author: dict, message_id: int, custom_id: str, *,
                    guild: Guild | None = None, channel_id: int | None = None) -> str:
        """A user presses the button ``custom_id`` on the bot's message; returns the token."""
        message = {k: v for k, v in self.messages[message_id].items()
                   if k not in {"edits", "allowed_mentions", "interaction_token"}}
        data = {"custom_id": custom_id, "component_type": 2}
        return await self._interact(author, 3, data, guild=guild, channel_id=channel_id,
                                    message=message)

    def buttons(self, message_id: int) -> list[dict]:
        """The buttons on a message the bot sent: ``[{"custom_id", "label", ...}]``."""
        rows = self.messages[message_id].get("components") or []
        return [c for row in rows for c in row.get("components", [])]

    async def _interact(self, author: dict, kind: int, data: dict, *, guild: Guild | None,
                        channel_id: int | None, message: dict | None = None) -> str:
        iid = self.snowflake()
        token = f"token-{iid}"
        if guild is None:
            channel_id = channel_id or self.dm_channel(author)
            channel = {"id": str(channel_id), "type": 1}
        else:
            channel = {"id": str(channel_id), "type": 0, "guild_id": str(guild.id),
                       "name": "channel", "position": 0, "permission_overwrites": []}
        payload = {"id": str(iid), "application_id": str(self.app_id), "type": kind,
                   "token": token, "version": 1, "channel_id": str(channel_id),
                   "channel": channel, "data": data, "locale": "en-US",
                   "app_permissions": str((1 << 41) - 1), "attachment_size_limit": 8 << 20,
                   "entitlements": [], "authorizing_integration_owners": {"0": "0"},
                   "context": 1 if guild is None else 0}
        if guild is not None:
            payload["guild_id"] = str(guild.id)
            payload["guild_locale"] = "en-US"
            payload["member"] = {**self._member(author), "permissions": str((1 << 41) - 1)}
        else:
            payload["user"] = author
        if message is not None:
            payload["message"] = message
            self._originals[token] = int(message["id"])  # @original = the clicked message
        self._interactions[token] = payload
        await self.dispatch("INTERACTION_CREATE", payload)
        return token

    # ----------------------------------------------------------------- reading results

    def sent(self, channel_id: int | str) -> list[dict]:
        """Messages the bot posted in a channel (not follow-ups), oldest first, as they are
        now (after edits)."""
        return [m for m in self.messages.values()
                if m["channel_id"] == str(channel_id) and "interaction_token" not in m
                and m.get("webhook_id") is None]

    def followups(self, token: str) -> list[dict]:
        """Follow-up messages of an interaction, oldest first."""
        return [m for m in self.messages.values() if m.get("interaction_token") == token]

    def callbacks(self, token: str) -> list[Call]:
        return [c for c in self.calls if c.method == "POST"
                and re.fullmatch(rf"/interactions/\d+/{re.escape(token)}/callback", c.path)]


def _json(data: Any, *, status: int = 200, headers: dict | None = None) -> web.Response:
    return web.Response(body=json.dumps(data).encode(), status=status,
                        content_type="application/json", headers=headers)
