"""The Telegram adapter: python-telegram-bot's ``Application`` wired to the conversation core.

Handlers are plain async functions wired in one place (:meth:`TelegramAdapter._build`); one
central error handler logs, tells the user briefly and keeps running. While a streaming model
writes, the reply is previewed and edited at a safe rate (``_stream``). PTB hands updates to the
handlers one at a time; each handler only decides and queues the work on its thread, so turns of
one thread run in order while different chats run side by side.

Long polling by default; with a webhook URL, a small aiohttp server takes Telegram's POSTs,
checks the secret token and feeds PTB's update queue.
"""

from __future__ import annotations

from dataclasses import replace

import asyncio
import dataclasses
import hashlib
import hmac
import logging
import secrets
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import nullcontext, suppress
from datetime import datetime, timedelta, timezone
from typing import Protocol
from urllib.parse import urlparse

from aiohttp import web
from telegram import BotCommand, Message, Update, User
from telegram.constants import ChatAction
from telegram.error import BadRequest, Forbidden, InvalidToken, TelegramError
from telegram.request import HTTPXRequest
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from adapters.telegram._buttons import confirm_buttons, page_view, paginate, parse
from adapters.telegram._normalise import PLATFORM, Inbound, chat_kind, classify, thread_key
from adapters.telegram._send import Sender, Target
from adapters.telegram._stream import ReplyStream
from adapters.commands import CommandTable
from adapters.kept_updates import SEEN_KEEP, UpdateMarks
from i18n import DEFAULT_LANGUAGE, LANGUAGES, language_of_code, say
from memory import streaming
from memory.errors import ConfigError, MemoryCoreError
from memory.ports import ThreadLocks
from memory.types import ChatKind, IncomingMessage, ThreadKey

log = logging.getLogger(__name__)

ALLOWED_UPDATES = ["message", "edited_message", "callback_query"]

#: The note after ``/start`` while the bot's privacy mode is on (a message id of the catalogue).
PRIVACY_NOTE = "telegram.privacy_note"


class Conversation(Protocol):
    """What the adapter needs from the core (``bot.engine.ConversationEngine``)."""

    commands: CommandTable

    async def handle(self, msg: IncomingMessage) -> list[str]: ...

    async def observe(self, msg: IncomingMessage) -> None: ...

    async def edit(self, msg: IncomingMessage, *, derive_facts: bool = True) -> list[str]: ...

    async def pending_question(self, msg: IncomingMessage) -> str | None: ...

    async def confirm(self, msg: IncomingMessage, yes: bool) -> list[str]: ...

    async def command(self, msg: IncomingMessage) -> list[str]: ...

    async def replied(self, msg: IncomingMessage) -> None: ...

    async def due_replies(self, platform: str) -> list[IncomingMessage]: ...

    async def answer_due(self, msg: IncomingMessage) -> list[str]: ...

    async def reply_language(self, msg: IncomingMessage) -> str: ...


class Marks(UpdateMarks, Protocol):
    """Where the adapter keeps its durable marks: received updates (``adapters.kept_updates``)
    and blocked accounts (``memory.ports.DeliveryStore``)."""

    async def set_account_blocked(self, platform: str, platform_user_id: str,
                                  at: datetime | None) -> None: ...

    async def blocked_accounts(self, platform: str) -> set[str]: ...


class TelegramStartError(MemoryCoreError):
    """The Telegram Bot API could not be reached or refused to start the bot."""


@dataclasses.dataclass(frozen=True)
class TelegramConfig:
    """How to reach Telegram (built by ``bot/`` from the settings).

    Attributes:
        token: the bot token from @BotFather.
        base_url: Bot API base URL ending in ``/bot`` (the token is appended).
        webhook_url: public HTTPS URL for webhook mode; None = long polling.
        webhook_secret: secret token Telegram must send with every webhook request; None =
            a random one per start.
        webhook_port: local port of the webhook server.
        webhook_listen: local address of the webhook server.
        poll_timeout_s: long-polling timeout of ``getUpdates`` (seconds).
        edit_interval_s: least seconds between two edits of a reply preview in a private
            chat (while a streaming model writes).
        group_edit_interval_s: the same in groups (Telegram allows 20 messages a minute there).
        takeover_interval_s: with chat locks (several workers), how often (seconds) this
            process looks for chats whose due replies or kept updates nobody is handling (their
            worker died) and handles those already there at its previous look; each look is
            one read of each. A dead worker's chat is taken over within two intervals.
    """

    token: str
    base_url: str = "https://api.telegram.org/bot"
    webhook_url: str | None = None
    webhook_secret: str | None = None
    webhook_port: int = 8443
    webhook_listen: str = "0.0.0.0"
    poll_timeout_s: float = 10.0
    edit_interval_s: float = 1.0
    group_edit_interval_s: float = 3.0
    takeover_interval_s: float = 5.0

    def __repr__(self) -> str:
        return (f"TelegramConfig(base_url={self.base_url!r}, webhook_url={self.webhook_url!r}, "
                f"webhook_port={self.webhook_port})")


def _now() -> datetime:
    return datetime.now(timezone.utc)



class PollRequest(HTTPXRequest):
    """The HTTP client of the long polls (``getUpdates`` only; PTB's default for it is an
    ``HTTPXRequest`` with one connection), noting whether the last one worked.

    PTB's updater keeps running and retries when ``getUpdates`` fails (the Bot API unreachable,
    a 5xx, a 409 from a second poller), so ``updater.running`` stays true while no update can
    arrive; readiness reads :attr:`failing` instead.

    Attributes:
        failing: None after a poll answered 200, else a short reason (``"HTTP 502"``,
            ``"ConnectError"``) from the last poll.
    """

    def __init__(self, on_updates: Callable[[list[dict]], Awaitable[None]] | None = None
                 ) -> None:
        super().__init__(connection_pool_size=1)
        self.failing: str | None = None
        self.on_updates = on_updates

    async def do_request(self, url, method, request_data=None, read_timeout=None,
                         write_timeout=None, connect_timeout=None, pool_timeout=None):
        """``HTTPXRequest.do_request``, recording the outcome (cancellation records nothing).

        The updates of a successful poll are handed to ``on_updates`` (kept durably) before
        PTB sees them: Telegram counts them as delivered once the next poll asks for a later
        offset, which PTB does at once, while their messages still wait for their chat's turn.
        A failure there fails this poll, so they are fetched again."""
        try:
            code, payload = await super().do_request(
                url, method, request_data, read_timeout=read_timeout,
                write_timeout=write_timeout, connect_timeout=connect_timeout,
                pool_timeout=pool_timeout)
            if code == 200 and self.on_updates is not None:
                updates = json.loads(payload).get("result")
                if isinstance(updates, list) and updates:
                    await self.on_updates(updates)
        except Exception as exc:
            self.failing = type(exc).__name__
            raise
        self.failing = None if code == 200 else f"HTTP {code}"
        return code, payload

def update_chat(payload: dict) -> str:
    """The chat id (as text) an update's JSON belongs to: its message's, edited message's or
    button press's message's chat; ``""`` for an update of no chat."""
    for field in ("message", "edited_message"):
        chat = (payload.get(field) or {}).get("chat") or {}
        if "id" in chat:
            return str(chat["id"])
    chat = ((payload.get("callback_query") or {}).get("message") or {}).get("chat") or {}
    return str(chat["id"]) if "id" in chat else ""


def chat_lock_id(bot_id: int, chat: str) -> int:
    """The signed 64-bit lock id of one bot's chat for :class:`memory.ports.ThreadLocks`
    (the first 8 bytes of a BLAKE2b digest: the same in every process)."""
    name = "\x1f".join(("telegram", "updates", str(bot_id), chat))
    digest = hashlib.blake2b(name.encode(), digest_size=8)
    return int.from_bytes(digest.digest(), "big", signed=True)


def _log_drain_failure(task: asyncio.Task) -> None:
    """Done callback of a chat's drain: its updates stay kept (the next drain of the chat, or
    start-up recovery, handles them); the failure is logged once."""
    if not task.cancelled() and task.exception() is not None:
        log.warning("telegram: handling a chat's kept updates stopped: %s", task.exception())


class TelegramAdapter:
    """Serves the conversation core on Telegram. ``await start()``, later ``await stop()``.

    Args:
        conversation: the core (the conversation engine).
        config: where and how to reach Telegram.
        marks: durable marks (handled updates, blocked users).
        allows: whether a Telegram user id may talk to the bot (``ALLOWED_USERS``); None =
            everyone.
        sleep: waits on ``RetryAfter`` (tests may record them).
        chat_locks: per-chat locks shared by every process taking this bot's webhook updates
            from one store (several workers behind a load balancer), or None (this process
            alone). With them, an update arriving here is kept and then handled by whichever
            process holds its chat's lock: the holder handles every kept, unhandled update of
            the chat in update-id order (webhooks arrive concurrently and at any worker), each
            once (an update another worker handled meanwhile is no longer kept), after first
            answering the chat's replies left due (a worker killed between storing a message
            and delivering its answer). Every ``takeover_interval_s`` each process also drains
            the chats whose due replies or kept updates were there at its previous look, so a
            dead worker's chats are taken over without waiting for their next message or for
            that worker's restart.
    """

    def __init__(self, conversation: Conversation, config: TelegramConfig, *, marks: Marks,
                 allows: Callable[[str], bool] | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 chat_locks: ThreadLocks | None = None) -> None:
        self.conversation = conversation
        self.config = config
        self.marks = marks
        self.allows = allows
        self.sleep = sleep
        self.application: Application | None = None
        # while stop() lets PTB finish the updates already received, new work still needs it
        self._draining: Application | None = None
        self.sender: Sender | None = None
        self.me: User | None = None
        self.privacy_on = False
        self.webhook_port: int | None = None
        self._web: web.AppRunner | None = None
        self._secret = ""
        self._blocked: set[str] = set()
        self._tails: dict[ThreadKey, asyncio.Task] = {}
        self._seen = 0
        self._polls: PollRequest | None = None
        self._inflight: set[int] = set()  # update ids taken by this process, not yet handled
        self._queued: set[int] = set()  # update ids whose work went on a thread's queue
        self.chat_locks = chat_locks
        self._waiters: dict[int, asyncio.Future] = {}  # update id -> handled (chat_locks)
        self._drains: set[asyncio.Task] = set()
        self._drain_chats: Counter[str] = Counter()  # chat -> drains of it not yet ended
        self._takeover: asyncio.Task | None = None

    # ------------------------------------------------------------------ life cycle

    def _build(self) -> Application:
        base = self.config.base_url
        builder = (ApplicationBuilder().token(self.config.token).base_url(base)
                   .base_file_url(base[:-len("/bot")] + "/file/bot" if base.endswith("/bot")
                                  else base))
        if self.config.webhook_url:
            builder = builder.updater(None)
        else:
            self._polls = PollRequest(on_updates=self._receive)
            builder = builder.get_updates_request(self._polls)
        app = builder.build()
        app.add_handler(TypeHandler(Update, self._first_time), group=-1)
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE, self._on_message))
        app.add_handler(MessageHandler(filters.UpdateType.EDITED_MESSAGE, self._on_edited))
        app.add_handler(CallbackQueryHandler(self._on_button))
        app.add_handler(TypeHandler(Update, self._settled), group=1)
        app.add_error_handler(self._on_error)
        return app

    async def start(self) -> None:
        """Connect (``getMe``), register the command menu, and start polling or the webhook.

        Raises:
            ConfigError: Telegram refused the token.
            TelegramStartError: the Bot API could not be reached.
        """
        app = self._build()
        try:
            try:
                await app.initialize()
            except BaseException:
                await app.bot.shutdown()  # close the HTTP clients opened before getMe failed
                raise
        except InvalidToken as exc:
            raise ConfigError("invalid setting: TELEGRAM_BOT_TOKEN: Telegram refused the "
                              "token") from exc
        except TelegramError as exc:
            raise TelegramStartError(f"cannot reach the Telegram Bot API at "
                                     f"{self.config.base_url}: {exc}") from exc
        except Exception as exc:  # e.g. an answer PTB cannot parse (a TypeError in getMe)
            raise TelegramStartError(
                f"the Telegram Bot API at {self.config.base_url} gave an answer the client "
                f"could not use ({type(exc).__name__}: {exc})") from exc
        self.application = app
        try:
            await self._begin(app)
        except BaseException:
            await self.stop()
            raise

    async def _begin(self, app: Application) -> None:
        self.me = app.bot.bot
        self.sender = Sender(app.bot, on_blocked=self._on_blocked, sleep=self.sleep)
        self.privacy_on = not app.bot.can_read_all_group_messages
        if self.privacy_on:
            log.info("telegram privacy mode is on for @%s: in groups it sees only commands, "
                     "mentions and replies to it; turn it off with @BotFather /setprivacy "
                     "(then re-add the bot) to let group messages feed working memory",
                     self.me.username)
        self._blocked = await self.marks.blocked_accounts(PLATFORM)
        await self.marks.prune_seen_updates(_now() - SEEN_KEEP)
        try:
            for lang in LANGUAGES:  # the default list (English), then one per other language
                await app.bot.set_my_commands(
                    menu(self.conversation.commands, lang),
                    language_code=None if lang == DEFAULT_LANGUAGE else lang)
        except TelegramError as exc:  # the menu is a convenience; commands work without it
            log.warning("telegram setMyCommands failed: %s", exc)
        await app.start()
        await self._recover(app)  # before any new update is taken
        try:
            if self.config.webhook_url:
                await self._start_webhook()
                if self.chat_locks is not None:
                    self._takeover = asyncio.get_running_loop().create_task(self._take_over())
            else:
                assert app.updater is not None
                await app.updater.start_polling(
                    timeout=timedelta(seconds=self.config.poll_timeout_s),
                    allowed_updates=ALLOWED_UPDATES, error_callback=self._polling_error)
        except (TelegramError, OSError) as exc:
            raise TelegramStartError(f"cannot start receiving Telegram updates: {exc}") from exc
        log.info("telegram adapter started bot=@%s id=%s mode=%s blocked_users=%d",
                 self.me.username, self.me.id, "webhook" if self.config.webhook_url else "polling",
                 len(self._blocked))

    async def stop(self) -> None:
        """Stop taking updates, finish the queued work, and close the connection."""
        app, self.application = self.application, None
        if app is None:
            return
        self._draining = app  # updates already received are still answered (_enqueue)
        if self._takeover is not None:
            self._takeover.cancel()
            with suppress(asyncio.CancelledError):
                await self._takeover
            self._takeover = None
        try:
            if self._web is not None:
                await self._web.cleanup()
                self._web = None
            elif app.updater is not None and app.updater.running:
                await app.updater.stop()
            while self._drains:  # chats whose kept updates are being handled
                await asyncio.wait(list(self._drains))
            if app.running:
                await app.stop()  # waits for queued per-thread work (Application.create_task)
            while self._tails:  # work of updates PTB handed over while stopping
                await asyncio.wait(list(self._tails.values()))
        finally:
            self._draining = None
            await app.shutdown()
            log.info("telegram adapter stopped")

    async def drain(self) -> None:
        """Wait until every update already in PTB's queue has been handled, including the work
        it queued on its thread."""
        app = self.application
        if app is None:
            return
        while self._drains:
            await asyncio.wait(list(self._drains))
        await app.update_queue.join()
        while self._tails:
            await asyncio.wait(list(self._tails.values()))

    def readiness(self) -> str | None:
        """None while updates can come in (long polling running, or the webhook server up),
        else a short reason (``/readyz``). Cheap: reads flags only, no Bot API call."""
        app = self.application
        if app is None or not app.running:
            return "not started"
        if self.config.webhook_url:
            return None if self._web is not None else "webhook server not listening"
        if app.updater is None or not app.updater.running:
            return "not polling"
        failing = self._polls.failing if self._polls is not None else None
        return f"getUpdates failing ({failing})" if failing else None

    def _polling_error(self, exc: TelegramError) -> None:
        log.warning("telegram getUpdates failed (retrying): %s", exc)

    async def _start_webhook(self) -> None:
        assert self.application is not None and self.config.webhook_url
        self._secret = self.config.webhook_secret or secrets.token_urlsafe(32)
        path = urlparse(self.config.webhook_url).path or "/"
        server = web.Application()
        server.router.add_post(path, self._on_webhook)
        runner = web.AppRunner(server, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, self.config.webhook_listen, self.config.webhook_port).start()
        self._web = runner
        self.webhook_port = runner.addresses[0][1]
        await self.application.bot.set_webhook(url=self.config.webhook_url,
                                               secret_token=self._secret,
                                               allowed_updates=ALLOWED_UPDATES)
        log.info("telegram webhook listening on %s:%s%s", self.config.webhook_listen,
                 self.webhook_port, path)

    async def _on_webhook(self, request: web.Request) -> web.Response:
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if not hmac.compare_digest(given.encode(), self._secret.encode()):
            log.warning("telegram webhook request without the right secret token refused")
            return web.Response(status=403)
        app = self.application
        if app is None:
            return web.Response(status=503)
        try:
            body = await request.json()
            if not isinstance(body, dict) or not isinstance(body.get("update_id"), int):
                raise ValueError("not an update object")
            update = Update.de_json(body, app.bot)
        except Exception as exc:  # noqa: BLE001 - any body PTB cannot read is the sender's fault
            log.warning("telegram webhook body refused (400): %s: %s", type(exc).__name__,
                        str(exc)[:200])
            return web.Response(status=400)
        try:
            await self._receive([body])  # kept before Telegram hears it arrived
        except MemoryCoreError as exc:  # Telegram retries the webhook later
            log.error("telegram update %s could not be kept: %s", update.update_id, exc)
            return web.Response(status=503)
        if self.chat_locks is None:
            await app.update_queue.put(update)
        else:
            self._start_drain(update_chat(body))
        return web.Response()

    def _start_drain(self, chat: str) -> None:
        task = asyncio.get_running_loop().create_task(self._drain_chat(chat))
        self._drains.add(task)
        self._drain_chats[chat] += 1

        def ended(t: asyncio.Task) -> None:
            self._drains.discard(t)
            self._drain_chats[chat] -= 1
            if self._drain_chats[chat] <= 0:
                del self._drain_chats[chat]

        task.add_done_callback(ended)
        task.add_done_callback(_log_drain_failure)

    async def _take_over(self) -> None:
        """Every ``takeover_interval_s``: drain each chat with a reply due or an update kept
        that was already there at the previous look (so at least that long: one that arrived
        since is its receiver's to handle), unless this process is draining it already. A chat
        another worker is still handling waits on its lock and then finds nothing left; one
        whose worker died is handled here. Failures are logged and tried at the next look."""
        noticed: set[str] = set()
        while True:
            await asyncio.sleep(self.config.takeover_interval_s)
            try:
                found = await self._unhandled()
            except Exception as exc:  # noqa: BLE001 - the database may be back at the next look
                log.warning("telegram: looking for chats left unhandled failed: %s", exc)
                continue
            left = dict.fromkeys(chat for item, chat in found if item in noticed)
            noticed = {item for item, _ in found}
            for chat in left:
                if chat not in self._drain_chats and self.application is not None:
                    log.info("telegram: taking over chat=%s (due replies or kept updates)",
                             chat)
                    self._start_drain(chat)

    async def _unhandled(self) -> list[tuple[str, str]]:
        """``(item, chat)`` of every reply due (item ``due:<chat>:<message id>``) and every
        update kept unhandled (item: its key), due replies first."""
        assert self.me is not None
        found = [(f"due:{m.thread.chat_id}:{m.platform_message_id}", m.thread.chat_id)
                 for m in await self.conversation.due_replies(PLATFORM)]
        for key, payload in await self.marks.received_updates(PLATFORM, prefix=f"{self.me.id}:"):
            try:
                found.append((key, update_chat(json.loads(payload))))
            except (ValueError, AttributeError):
                continue  # left to start-up recovery, which drops what it cannot read
        return found

    async def _drain_chat(self, chat: str) -> None:
        """Under the chat's lock (every process's): answer the chat's replies left due (a
        worker died before delivering them), then hand PTB the chat's kept, unhandled updates
        in update-id order, one at a time, each after the one before was handled. A failure
        ends the drain (what is left stays due or kept, for the next one)."""
        assert self.chat_locks is not None and self.me is not None
        async with self.chat_locks.hold(chat_lock_id(self.me.id, chat)):
            app = self.application or self._draining
            if app is None:
                return
            for msg in await self.conversation.due_replies(PLATFORM):
                if msg.thread.chat_id == chat:  # oldest first, before any later message
                    log.info("telegram: answering a message left unanswered thread=%s "
                             "message=%s", chat, msg.platform_message_id)
                    await self._answer_left_due(msg)
            kept = []
            for key, payload in await self.marks.received_updates(PLATFORM,
                                                                  prefix=f"{self.me.id}:"):
                try:
                    body = json.loads(payload)
                except ValueError:
                    continue  # left to start-up recovery, which drops what it cannot read
                if update_chat(body) == chat and isinstance(body.get("update_id"), int):
                    kept.append((body["update_id"], body))
            for update_id, body in sorted(kept, key=lambda pair: pair[0]):
                if update_id in self._inflight:  # already on this process's way
                    continue
                waiter = asyncio.get_running_loop().create_future()
                self._waiters[update_id] = waiter
                try:
                    await app.update_queue.put(Update.de_json(body, app.bot))
                    await waiter
                finally:
                    self._waiters.pop(update_id, None)

    # ------------------------------------------------------------------ ordering and marks

    def _enqueue_plain(self, key: ThreadKey, job: Callable[[], Awaitable[None]]) -> None:
        """:meth:`_enqueue` for work of no update (start-up recovery); errors are logged."""
        async def guarded() -> None:
            try:
                await job()
            except Exception:  # one recovered message must not stop the thread's queue
                log.exception("telegram: answering a recovered message failed thread=%s", key)
        self._enqueue(key, guarded, None)

    def _enqueue(self, key: ThreadKey, job: Callable[[], Awaitable[None]],
                 update: Update | None) -> None:
        """Run ``job`` after the work already queued for this thread (errors go to the
        central error handler with ``update``); the update counts as handled when the job
        ended, however it ended (a crash before leaves it kept, so it is handled again)."""
        app = self.application or self._draining
        assert app is not None, "no update can arrive before start() or after stop()"
        previous = self._tails.get(key)
        if update is not None:
            self._queued.add(update.update_id)

        async def run() -> None:
            if previous is not None:
                await asyncio.wait([previous])
            try:
                await job()
            finally:
                if update is not None:
                    await self._handled(update.update_id)

        async def run_while_stopping() -> None:
            try:
                await run()
            except Exception as exc:  # the same central error handler as create_task's
                await app.process_error(update, exc)

        if app.running:
            task = app.create_task(run(), update=update)
        else:  # stop() in progress: PTB no longer awaits its tasks, stop() awaits these
            task = asyncio.get_running_loop().create_task(run_while_stopping())
        self._tails[key] = task

        def done(t: asyncio.Task) -> None:
            if self._tails.get(key) is t:
                del self._tails[key]
            if not t.cancelled():
                t.exception()  # already reported by the error handler

        task.add_done_callback(done)

    def _key(self, update_id: int) -> str:
        assert self.me is not None
        return f"{self.me.id}:{update_id}"

    async def _receive(self, updates: list[dict]) -> None:
        """Keep received updates (their JSON) until handled: written before Telegram is told
        they arrived (the next poll, or the webhook's 200), so none is lost to a crash."""
        if self.me is None:
            return
        # ASCII JSON: a lone surrogate (``\ud800`` in the update's JSON) is kept escaped; as
        # text no UTF-8 column takes it, and the poll would fail on it again and again
        kept = [(self._key(u["update_id"]), json.dumps(u))
                for u in updates if isinstance(u, dict) and isinstance(u.get("update_id"), int)]
        await self.marks.receive_updates(PLATFORM, kept, _now())

    async def _recover(self, app: Application) -> None:
        """Start-up, before new updates are taken: answer every stored message whose answer
        was never delivered (the stored answer, a new one, or word that it was lost), then
        hand PTB the updates received but never handled, in the order they came."""
        locked = self.chat_locks is not None
        if not locked:  # with chat locks, each chat's drain answers them first
            for msg in await self.conversation.due_replies(PLATFORM):
                self._enqueue_plain(msg.thread, lambda msg=msg: self._answer_left_due(msg))
                log.info("telegram: answering a message left unanswered by a stop thread=%s "
                         "message=%s", msg.thread.chat_id, msg.platform_message_id)
        assert self.me is not None
        kept = await self.marks.received_updates(PLATFORM, prefix=f"{self.me.id}:")
        for key, payload in kept:
            try:
                update = Update.de_json(json.loads(payload), app.bot)
            except Exception as exc:  # noqa: BLE001 - a kept body PTB no longer reads
                log.warning("telegram kept update %s unreadable, dropped: %s", key, exc)
                await self.marks.mark_update_handled(PLATFORM, key, _now())
                continue
            if not locked:
                await app.update_queue.put(update)
        if locked:  # under each chat's lock, as any worker handles them
            for chat in dict.fromkeys(chat for _, chat in await self._unhandled()):
                self._start_drain(chat)
        if kept:
            log.info("telegram: %d update(s) received before a stop are handled now", len(kept))

    async def _answer_left_due(self, msg: IncomingMessage) -> None:
        """Answer a stored message whose answer was never delivered (``answer_due``: its
        stored answer, a new one, or word that it was lost), then record it delivered."""
        private = msg.chat_kind is ChatKind.PRIVATE
        target = Target(chat_id=int(msg.thread.chat_id),
                        thread_id=int(msg.thread.thread_id) if msg.thread.thread_id else None,
                        reply_to=None if private or msg.platform_message_id is None
                        else int(msg.platform_message_id))
        replies = await self.conversation.answer_due(msg)
        if replies:
            await self._deliver(target, replies)
        await self.conversation.replied(msg)

    async def _first_time(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """Drop an update this process already has, or one handled before (a redelivery,
        also across a restart). An update counts as handled only once what it carried is
        stored (a message: in the transaction of its turn) or answered, never at arrival."""
        key = self._key(update.update_id)
        if update.update_id in self._inflight or (
                await self.marks.update_state(PLATFORM, key) == "handled"):
            log.info("telegram update %s delivered again; ignored", update.update_id)
            if update.update_id not in self._inflight:
                self._release_waiter(update.update_id)
            raise ApplicationHandlerStop
        self._inflight.add(update.update_id)
        self._seen += 1
        if self._seen % 1000 == 0:
            await self.marks.prune_seen_updates(_now() - SEEN_KEEP)

    async def _settled(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """After the handlers: an update that queued no work (ignored, refused) is handled."""
        if update.update_id not in self._queued:
            await self._handled(update.update_id)

    async def _handled(self, update_id: int) -> None:
        self._inflight.discard(update_id)
        self._queued.discard(update_id)
        try:
            await self.marks.mark_update_handled(PLATFORM, self._key(update_id), _now())
        except MemoryCoreError as exc:  # kept as received: handled again after a restart
            log.warning("telegram update %s could not be marked handled: %s", update_id, exc)
        finally:
            self._release_waiter(update_id)

    def _release_waiter(self, update_id: int) -> None:
        waiter = self._waiters.get(update_id)
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _on_blocked(self, chat_id: int) -> None:
        self._blocked.add(str(chat_id))
        await self.marks.set_account_blocked(PLATFORM, str(chat_id), _now())

    def _allowed(self, user_id: int) -> bool:
        return self.allows is None or self.allows(str(user_id))

    # ------------------------------------------------------------------ handlers

    async def _on_message(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert self.me is not None and self.sender is not None
        message = update.message
        inbound = classify(message, self.me) if message is not None else None
        if inbound is None:
            return
        sender = self.sender
        key = thread_key(message)
        user_id = message.from_user.id
        hint = language_of_code(message.from_user.language_code) or DEFAULT_LANGUAGE
        if not self._allowed(user_id):  # a stranger: only the platform's hint, nothing stored
            if inbound.private:
                self._enqueue(key, lambda: sender.send(inbound.target,
                                                       say(hint, "telegram.refused")), update)
            return
        if inbound.private and str(user_id) in self._blocked:
            self._blocked.discard(str(user_id))
            await self.marks.set_account_blocked(PLATFORM, str(user_id), None)
            log.info("telegram user chat=%s is back; block mark cleared", user_id)
        if inbound.msg is None:
            if inbound.private and inbound.attachment:
                self._enqueue(key, lambda: sender.send(inbound.target,
                                                       say(hint, "telegram.media_reply")), update)
            return
        msg = replace(inbound.msg, update_key=self._key(update.update_id))
        if not inbound.addressed:
            self._enqueue(key, lambda: self.conversation.observe(msg), update)
            return
        inbound = replace(inbound, msg=msg)
        self._enqueue(key, lambda: self._answer(inbound), update)

    async def _answer(self, inbound: Inbound) -> None:
        """Answer an addressed message, then record its answer as delivered (a crash before
        leaves it due: it is answered at the next start)."""
        await self._answer_now(inbound)
        assert inbound.msg is not None
        await self.conversation.replied(inbound.msg)

    async def _answer_now(self, inbound: Inbound) -> None:
        assert inbound.msg is not None and self.sender is not None
        msg, command = inbound.msg, inbound.command
        if self.conversation.commands.answered_privately(command) and not inbound.private:
            await self._answer_privately(inbound)
            return
        if command in ("memory_off", "memory_on") and not inbound.private:
            msg = replace(msg, is_admin=await self._is_chat_admin(msg))
        preview = ReplyStream(self.sender, inbound.target,
                              interval=self.config.edit_interval_s if inbound.private
                              else self.config.group_edit_interval_s)
        try:
            async with self.sender.typing(inbound.target):
                with streaming.listen(preview.update) if command is None else nullcontext():
                    replies = await self.conversation.handle(msg)
        finally:
            await preview.stop()
        if await preview.finish(replies):
            return  # the preview became the reply
        lang = await self.conversation.reply_language(msg)
        if command == "start" and self.privacy_on:
            replies = [*replies, say(lang, PRIVACY_NOTE)]
        if command == "memories":
            await self._send_pages(inbound.target, replies, _mode(msg.text), lang)
            return
        markup = None
        if command is not None and replies and await self.conversation.pending_question(msg):
            markup = confirm_buttons(int(msg.platform_user_id), lang)
        await self._deliver(inbound.target, replies, markup=markup, lang=lang)

    async def _is_chat_admin(self, msg) -> bool:
        """True when the author administers the group (``getChatMember``), for
        ``/memory_off chat``; any failure counts as not an admin."""
        try:
            app = self.application or self._draining
            assert app is not None
            member = await app.bot.get_chat_member(int(msg.thread.chat_id),
                                                   int(msg.platform_user_id))
        except Exception:  # noqa: BLE001 - the platform decides; refusing is the safe answer
            log.warning("could not check admin status in chat %s", msg.thread.chat_id)
            return False
        return member.status in ("administrator", "creator")

    async def _answer_privately(self, inbound: Inbound) -> None:
        """A command whose answer names or counts the user's memory, used in a group
        (``adapters.commands``): answered in the user's private chat, where it also runs
        (so a confirmation is asked and answered there) unless it explains this group
        (``/why``). When the private chat cannot be reached, the group is told so, naming
        nothing, and the command does not run."""
        assert inbound.msg is not None and self.sender is not None and self.me is not None
        msg, command = inbound.msg, inbound.command
        user_id = int(msg.platform_user_id)
        private = Target(chat_id=user_id)
        app = self.application or self._draining
        assert app is not None
        ran, sent = False, []
        lang = await self.conversation.reply_language(msg)
        try:  # can the bot write to this user at all? (never started: 403 or "chat not found")
            await app.bot.send_chat_action(chat_id=user_id, action=ChatAction.TYPING)
        except (BadRequest, Forbidden) as exc:
            log.info("telegram private chat with %s unreachable: %s", user_id, exc)
        else:
            ran = True
            if not self.conversation.commands.about_this_chat(command):
                # runs in the private chat (Telegram: its id is the user's)
                msg = replace(msg, thread=ThreadKey(PLATFORM, str(user_id)),
                              chat_kind=ChatKind.PRIVATE, chat_title=None)
            replies = await self.conversation.handle(msg)
            try:
                if command == "memories":
                    sent = await self._send_pages(private, replies, _mode(msg.text), lang)
                else:
                    markup = None
                    if replies and await self.conversation.pending_question(msg):
                        markup = confirm_buttons(user_id, lang)
                    sent = await self._deliver(private, replies, markup=markup, lang=lang)
            except BadRequest as exc:  # "chat not found" after all
                log.info("telegram private answer to %s failed: %s", user_id, exc)
        opening = say(lang, "telegram.private.opening", link=f"https://t.me/{self.me.username}",
                      command=command)
        if sent:
            note = say(lang, "telegram.private.sent", command=command)
        elif ran:
            note = say(lang, "telegram.private.failed", command=command, opening=opening)
        else:
            note = say(lang, "telegram.private.refused", command=command, opening=opening)
        await self.sender.send(inbound.target, note)

    async def _deliver(self, target: Target, replies: list[str], *, markup=None,
                       lang: str = DEFAULT_LANGUAGE) -> list[Message]:
        """Send each reply as its own part (quoting the user's message with the first);
        ``markup`` goes on the last message. A part the API refuses is tried once more; a part
        that still fails is logged and skipped, the later parts are still sent, and the user
        is told how many parts are missing. An unreachable chat (blocked, removed) ends it."""
        assert self.sender is not None
        sent: list[Message] = []
        missing = 0
        for n, reply in enumerate(replies):
            last = n == len(replies) - 1
            to = target if n == 0 else dataclasses.replace(target, reply_to=None)
            try:
                part = await self.sender.send(to, reply, markup=markup if last else None)
            except TelegramError as exc:
                log.error("telegram reply part %d of %d to chat=%s not delivered: %s", n + 1,
                          len(replies), target.chat_id, exc)
                missing += 1
                continue
            if not part:
                break  # unreachable chat
            sent += part
        if missing:
            note = say(lang, "platform.parts_missing", missing=missing)
            try:
                sent += await self.sender.send(dataclasses.replace(target, reply_to=None), note)
            except TelegramError as exc:
                log.error("telegram note about undelivered parts failed chat=%s: %s",
                          target.chat_id, exc)
        return sent

    async def _send_pages(self, target: Target, replies: list[str], mode: str,
                          lang: str) -> list[Message]:
        assert self.sender is not None
        text, markup = page_view(paginate("\n\n".join(replies)), 0, mode, lang)
        return await self.sender.send(target, text, markup=markup)

    async def _on_edited(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert self.me is not None
        message = update.edited_message
        inbound = classify(message, self.me) if message is not None else None
        if inbound is None or inbound.msg is None or inbound.command is not None:
            return
        if not self._allowed(message.from_user.id):
            return
        msg = inbound.msg

        async def job() -> None:
            notes = await self.conversation.edit(msg, derive_facts=inbound.addressed)
            if notes and inbound.addressed:
                await self._deliver(inbound.target, notes,
                                    lang=await self.conversation.reply_language(msg))

        self._enqueue(msg.thread, job, update)

    async def _on_button(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        assert self.sender is not None
        query = update.callback_query
        parsed = parse(query.data)
        message = query.message
        user = query.from_user
        hint = language_of_code(user.language_code) or DEFAULT_LANGUAGE
        if parsed is None or message is None or not isinstance(message, Message):
            await _answer_query(query, say(hint, "button.expired"))
            return
        kind = chat_kind(message.chat)
        if kind is None or (parsed[0] == "mem" and kind is not ChatKind.PRIVATE):
            await _answer_query(query, say(hint, "button.expired"))
            return  # /memories pages live in private chats only (callback data is not signed)
        key = thread_key(message)
        msg = IncomingMessage(
            thread=key, chat_kind=kind, platform_user_id=str(user.id),
            display_name=user.full_name or str(user.id), text="", sent_at=_now(),
            chat_title=message.chat.title, language=user.language_code)
        target = Target(chat_id=message.chat.id,
                        thread_id=int(key.thread_id) if key.thread_id is not None else None)
        sender = self.sender
        action, first, second = parsed
        if action == "cf":
            if second != str(user.id):
                await _answer_query(query, say(hint, "button.not_yours"))
                return

            async def confirm() -> None:
                await _answer_query(query)
                await sender.drop_buttons(message.chat.id, message.message_id)
                replies = await self.conversation.confirm(msg, first == "y")
                await self._deliver(target, replies,
                                    lang=await self.conversation.reply_language(msg))

            self._enqueue(key, confirm, update)
            return

        async def turn_page() -> None:
            replies = await self.conversation.command(
                dataclasses.replace(msg, text=f"/memories {second}".strip()))
            page = int(first) if first.isdigit() else 0
            text, markup = page_view(paginate("\n\n".join(replies)), page, second,
                                     await self.conversation.reply_language(msg))
            await sender.edit(message.chat.id, message.message_id, text, markup=markup)
            await _answer_query(query)

        self._enqueue(key, turn_page, update)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The central error handler: log first, then a short apology where the user was
        talking to the bot; never raises."""
        update_id = getattr(update, "update_id", None)
        log.error("telegram update %s failed: %r", update_id, context.error,
                  exc_info=context.error)
        if not isinstance(update, Update) or not self._addressed(update):
            return
        chat = update.effective_chat
        message = update.effective_message
        topic = (message.message_thread_id if message is not None
                 and getattr(message, "is_topic_message", False) else None)
        user = update.effective_user
        lang = (language_of_code(user.language_code) if user is not None else None) \
            or DEFAULT_LANGUAGE
        try:
            if self.sender is not None and chat is not None:
                await self.sender.send(Target(chat.id, topic), say(lang, "platform.sorry"))
        except TelegramError as exc:
            log.warning("telegram apology to chat=%s failed: %s", chat.id if chat else None, exc)

    def _addressed(self, update: Update) -> bool:
        if update.callback_query is not None:
            return True
        message = update.message or update.edited_message
        if message is None or self.me is None:
            return False
        inbound = classify(message, self.me)
        return inbound is not None and inbound.addressed


def menu(commands: CommandTable, lang: str) -> list[BotCommand]:
    """The command menu (``setMyCommands``) of ``commands`` in ``lang``: every command with
    its summary from the catalogue."""
    return [BotCommand(c.name, say(lang, c.summary)) for c in commands]


def _mode(text: str) -> str:
    """The argument of ``/memories [all|episodes]`` (short enough for callback data)."""
    parts = text.split(maxsplit=1)
    return parts[1].strip().lower()[:20] if len(parts) > 1 else ""


async def _answer_query(query, text: str | None = None) -> None:
    try:
        await query.answer(text, show_alert=text is not None)
    except TelegramError as exc:  # too old, or already answered
        log.debug("telegram answerCallbackQuery failed: %s", exc)
