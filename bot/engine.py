"""The conversation engine: one incoming message in, the replies out.

Turns of one thread are handled in order under a per-thread lock. For an ordinary message:
redact secrets, store the user turn, write an explicit fact (before the next input of the
thread), recall, assemble the prompt, ask the model, store the reply and what the model saw
(for ``/why``). Commands are routed to ``bot.commands``; end phrases close the session.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import replace
from datetime import timedelta

from bot.command_table import COMMAND_TABLE
from bot.confirmation import answer, answer_line
from bot.reply_language import ThreadLanguages, choose, message_language
from bot.usage import usage_entry
from i18n import message_ids, say
from i18n.facts import fact_text, mid_sentence
from memory.assembly import assemble
from memory.episodes import is_end_phrase
from memory.errors import ModelError, ModelMisconfigured, StoreError
from memory.facts import explicit_request
from memory.ports import ChatModel, ThreadLocks
from memory.records import NO_WRITES, HandledUpdate, PendingQuestion, PromptRecord, TurnWrites
from memory.redact import redact
from memory.service import Context, MemoryService
from memory.text import valid_text, without_direction_marks
from memory.types import IncomingMessage, MemoryAnswerRequest, Role, ThreadKey, Turn
from memory.work_runner import LocalThreadLocks

log = logging.getLogger(__name__)

#: "Forget that I prefer tea" / "please forget my address" / 忘掉我住在哪里: a request to delete,
#: which only /forget carries out (a plain message deletes nothing, and says so).
_FORGET_REQUEST = re.compile(
    r"^\s*(?:please\s+|pls\s+|can you\s+|could you\s+)?(?:forget|delete|erase)\s+"
    r"(?:that\s+I\b|that\s+my\b|my\b|what\s+I\s+(?:said|told))"
    r"|^\s*(?:请|麻烦)?(?:你)?(?:把)?(?:忘掉|忘记|删掉|删除)(?:我|关于我)", re.IGNORECASE)
#: A stored message left unanswered by a crash is answered at start-up when it is younger than
#: this; an older one gets ``engine.answer_lost`` instead (a late answer to an old question
#: misleads more than it helps).
LATE_ANSWER_LIMIT = timedelta(hours=1)


def turn_lock_id(key: ThreadKey) -> int:
    """The signed 64-bit id of a thread's turn lock: the first 8 bytes of the BLAKE2b digest
    of its platform, chat and topic (stable across processes and restarts, unlike ``hash``;
    two keys share an id with probability about 2**-64)."""
    text = "\x1f".join((key.platform, key.chat_id, key.thread_id or ""))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big",
                          signed=True)


class ConversationEngine:
    """Handles messages for every adapter (console, Telegram, Discord) the same way.

    Args:
        memory: the memory service.
        model: the chat model (offline, Claude, or OpenAI-compatible).
        max_tokens: output token cap per reply (``MAX_TOKENS``).
        on_turn: awaited after every handled message, still under the thread's lock (the app
            reschedules the thread's idle job with it); must not raise.
        locks: the per-thread turn locks, by :func:`turn_lock_id` of the thread's key (default:
            this process's; several processes on one database share the database's).

    Attributes:
        on_forget_all: awaited with the user id when ``/forget all`` of a user is confirmed,
            before the stores delete (a crash in between leaves data to delete again, never a
            copy of deleted data), so that copies kept outside the stores go too (the
            console's input history).
        on_forget_messages: awaited with the user id and the texts of the user's messages a
            confirmed ``/forget N`` is about to delete, before the stores delete (as
            ``on_forget_all``), so that copies of those lines kept outside the stores go too.
    """

    def __init__(self, *, memory: MemoryService, model: ChatModel, max_tokens: int = 1024,
                 on_turn: Callable[[Context], Awaitable[None]] | None = None,
                 reply_timeout_s: float = 60.0, locks: ThreadLocks | None = None) -> None:
        self.memory = memory
        self.model = model
        self.max_tokens = max_tokens
        self.on_turn = on_turn
        self.reply_timeout_s = reply_timeout_s
        self.locks: ThreadLocks = locks or LocalThreadLocks()
        self.on_forget_all: list[Callable[[int], Awaitable[None]]] = []
        self.on_forget_messages: list[Callable[[int, list[str]], Awaitable[None]]] = []
        self._misconfigured_logged = False
        #: the chat commands (``bot.command_table``): the adapters build their menus and
        #: private-answer policy from it
        self.commands = COMMAND_TABLE
        #: each author's latest language per thread (``bot.reply_language``)
        self.languages = ThreadLanguages(memory)

    def _turn_lock(self, key: ThreadKey) -> AbstractAsyncContextManager[None]:
        return self.locks.hold(turn_lock_id(key))

    async def handle(self, msg: IncomingMessage) -> list[str]:
        """Answer one message. Returns the reply texts (at least one for every input).

        Never raises for a model failure (the user gets an apology and the failed reply is not
        stored in working memory) nor for a storage failure (the user is told what could not
        be saved and why, in words; logged once at ERROR), the thread lock's database being
        unreachable included.
        """
        msg = valid_message(msg)
        text = _incoming_text(msg)
        async with AsyncExitStack() as held:
            try:  # the lock's database (several processes) may be the unreachable store
                await held.enter_async_context(self._turn_lock(msg.thread))
            except StoreError as exc:
                return [_storage_failed(exc, self.language_of_reply(msg, text), msg,
                                        saved=False)]
            ctx = None
            try:
                ctx = await self.memory.context(msg)
                question = await self.memory.waiting_question(ctx.thread.id, ctx.user.id)
                if question is not None:  # this line answers it, whoever asked
                    replies, also_a_message = await answer_line(self, question, text)
                    return replies + (await self._dispatch(ctx, msg, text)
                                      if also_a_message else [])
                return await self._dispatch(ctx, msg, text)
            except StoreError as exc:
                return [_storage_failed(exc, self.language_of_reply(msg, text, ctx), msg,
                                        saved=ctx is not None)]
            finally:
                await self._after_turn(ctx)

    async def _after_turn(self, ctx: Context | None) -> None:
        if self.on_turn is None or ctx is None:
            return
        try:
            await self.on_turn(ctx)
        except StoreError as exc:  # the reply is already decided; the idle job is retried
            log.warning("thread %s: rescheduling its idle close failed: %s", ctx.thread.id, exc)

    async def _dispatch(self, ctx: Context, msg: IncomingMessage, text: str) -> list[str]:
        from bot.commands import run_command

        if not text:
            return [say(await self.language_for(msg, text, ctx), "engine.empty_message")]
        if text.startswith("/"):
            return await run_command(self, ctx, msg, text)
        if is_end_phrase(text):
            outcome = await self.close_conversation(ctx, reason="end_phrase")
            lang = await self.language_for(msg, text, ctx)
            self.languages.seen(msg, text)
            return [say(lang, f"engine.bye.{outcome}")]
        return await self._converse(ctx, msg, text)

    async def close_conversation(self, ctx: Context, *, reason: str) -> str:
        """Close the thread's open session and say what became of it: ``saved`` (its episode is
        written), ``later`` (its consolidation is still pending, e.g. the model failed and it is
        retried), ``off`` (memory was off: nothing kept) or ``nothing`` (no session, or nothing
        in it to summarise). Replies to "bye" and ``/new`` must not claim a summary that does
        not exist."""
        return await self.memory.close_conversation(ctx, reason=reason)

    async def ingest(self, msg: IncomingMessage) -> None:
        """Store a recorded message without replying (replays of recorded conversations):
        redaction, the user turn and explicit facts, exactly as in a live chat."""
        msg = valid_message(msg)
        async with self._turn_lock(msg.thread):
            ctx = await self.memory.context(msg)
            cleaned = redact(_incoming_text(msg))
            if not cleaned.text:
                return
            turn, created = await self.memory.record_user_turn(
                ctx, cleaned.text, at=msg.sent_at, speaker=msg.display_name,
                platform_message_id=msg.platform_message_id,
            )
            if created:
                await self.memory.remember(ctx, turn)

    async def _converse(self, ctx: Context, msg: IncomingMessage, text: str) -> list[str]:
        cleaned = redact(text)
        lang = await self.language_for(msg, cleaned.text, ctx)
        self.languages.seen(msg, cleaned.text)
        try:
            turn, created = await self.memory.record_user_turn(
                ctx, cleaned.text, at=msg.sent_at, speaker=msg.display_name,
                platform_message_id=msg.platform_message_id,
                writes=_delivery_writes(msg),
            )
        except StoreError as exc:
            return [_storage_failed(exc, lang, msg, saved=False)]
        if not created:
            log.info("duplicate message ignored thread=%s turn=%s", ctx.thread.id, turn.id)
            return []
        try:
            notes: list[str] = []
            outcomes = await self.memory.remember(ctx, turn)
            for outcome in outcomes:
                note = _fact_note(outcome, lang)
                if note:
                    notes.append(note)
            if _FORGET_REQUEST.match(cleaned.text):  # deleting needs /forget (asks, lists, confirms)
                notes.append(say(lang, "engine.forget_hint"))
            if not ctx.user.memory_enabled and explicit_request(cleaned.text):
                notes.append(say(lang, "engine.memory_off_note"))
            if any(o.status in ("written", "superseded") for o in outcomes) and (
                    await self.memory.note_consent(ctx)):
                notes.append(say(lang, "engine.consent_note"))
            replies = await self._reply(ctx, msg, cleaned.text, turn, lang)
        except StoreError as exc:
            return [_storage_failed(exc, lang, msg, saved=True)]
        redaction = redaction_note(cleaned.kinds, lang)
        return notes + replies + ([redaction] if redaction else [])

    async def _reply(self, ctx: Context, msg: IncomingMessage, text: str, turn: Turn,
                     lang: str) -> list[str]:
        """Recall, assemble, ask the model (within :attr:`reply_timeout_s`) and store the
        answer for a stored user turn. Returns the answer (or the apology for a model that
        failed, timed out or refused our credentials)."""
        await self.memory.settle(ctx.thread.id)  # the previous session's episode, if closing
        recall = await self.memory.recall(ctx, text, exclude_session_id=turn.session_id)
        window = await self.memory.working_memory(ctx)
        working_tokens = sum(self.memory.counter.count(t.text) for t in window)
        prompt = assemble(blocks=recall.blocks, working=window, chat_kind=msg.chat_kind,
                          working_tokens=working_tokens)
        log.info("prompt assembled thread=%s turn=%s items=%d memory_tokens=%d working_turns=%d "
                 "working_tokens=%d keys=%s", ctx.thread.id, turn.id, len(prompt.recalled),
                 prompt.memory_tokens, len(window), working_tokens,
                 ",".join(i.key for i in prompt.recalled) or "-")
        try:
            async with asyncio.timeout(self.reply_timeout_s):
                answer_from_memory = getattr(self.model, "answer_from_memory", None)
                if callable(answer_from_memory):  # memory.ports.MemoryAnswerer: no language model
                    reply = await answer_from_memory(
                        await _answer_request(self, ctx, turn.id, prompt.recalled, lang))
                else:
                    reply = await self.model.complete(system=prompt.system,
                                                      messages=prompt.messages,
                                                      max_tokens=self.max_tokens)
        except TimeoutError:
            log.warning("model reply deadline of %.0fs passed thread=%s", self.reply_timeout_s,
                        ctx.thread.id)
            return [say(lang, "engine.model_down")]
        except ModelMisconfigured as exc:
            if not self._misconfigured_logged:  # once: every message would say the same
                self._misconfigured_logged = True
                log.error("configuration error: the language model refused the credentials "
                          "(check ANTHROPIC_API_KEY / OPENAI_API_KEY and the model name): %s",
                          exc)
            return [say(lang, "engine.misconfigured")]
        except ModelError as exc:
            log.warning("model call failed thread=%s: %s", ctx.thread.id, exc)
            return [say(lang, "engine.model_down")]
        now = self.memory.clock.now()
        # the usage row and the /why record go in the reply turn's transaction: one write
        # instead of three (docs/benchmarks.md, third pass)
        usage = usage_entry(ctx.user.id, reply, now)
        record = PromptRecord(ctx.thread.id, ctx.user.id, {
                "items": [{"key": i.key, "kind": i.kind.value, "score": round(i.score, 3),
                           "tokens": i.tokens, "session_id": i.source_session_id,
                           "created_at": i.created_at.isoformat() if i.created_at else None,
                           "pinned": i.pinned, "profile": i.profile, "text": i.text,
                           "parts": i.parts.as_dict() if i.parts else None}
                          for i in prompt.recalled],
                "memory_tokens": prompt.memory_tokens,
                "profile_tokens": recall.blocks.profile_tokens,
                "budget": self.memory.config.budget_tokens,
                "working_turns": len(window),
                "working_tokens": working_tokens,
                "model": reply.model,
            }, now)
        answer = reply.text.strip()
        if answer:
            # with what the reply was derived from, so that forgetting an item takes it along;
            # stored only when the user turn has no answer yet (another process may have
            # answered it meanwhile: then that answer is the one given)
            stored = await self.memory.record_assistant_turn(
                ctx, answer, at=now, generated_by=reply.model, answers=turn, writes=TurnWrites(
                    usage=usage, prompt_record=record,
                    recalled=tuple(i.key for i in prompt.recalled)))
            answer = stored.text
        else:
            await self.memory.record_reply(usage=usage, prompt_record=record)
        if await self.memory.fold_due(ctx.thread.id):
            self.memory.consolidate_in_background(ctx.thread.id)  # off the reply path
        return [answer or say(lang, "engine.empty_answer")]

    # ----------------------------------------------------------------- replies due after a crash

    async def replied(self, msg: IncomingMessage) -> None:
        """The adapter delivered the answer to ``msg``: its reply is no longer due. Never
        raises (a failure leaves the reply due, so it is sent again after a restart)."""
        if msg.platform_message_id is None:
            return
        try:
            await self.memory.reply_delivered(msg.thread, msg.platform_message_id)
        except StoreError as exc:
            log.warning("could not record a delivered reply thread=%s: %s", msg.thread, exc)

    async def due_replies(self, platform: str) -> list[IncomingMessage]:
        """The stored messages of ``platform`` whose answer was never delivered (the process
        stopped in between), oldest first, rebuilt as the adapter gave them. Adapters queue
        :meth:`answer_due` for each before taking new input of its thread."""
        return await self.memory.due_messages(platform)

    async def answer_due(self, msg: IncomingMessage) -> list[str]:
        """Answer a message left due by a crash: the stored answer when it was written but
        not delivered, a new answer when the message is recent (its explicit facts written
        first if the crash came before), else ``engine.answer_lost``. The adapter sends the
        result and calls :meth:`replied`."""
        async with self._turn_lock(msg.thread):
            ctx = await self.memory.context(msg)
            turn, answer = await self.memory.due_turn(ctx, msg.platform_message_id)
            if turn is None:
                return []
            lang = await self.language_for(msg, turn.text, ctx)
            if answer is not None:
                return [answer]
            if self.memory.clock.now() - turn.created_at > LATE_ANSWER_LIMIT:
                head = turn.text if len(turn.text) <= 60 else turn.text[:59] + "…"
                return [say(lang, "engine.answer_lost", text=head)]
            try:
                if not await self.memory.turn_has_memory(turn.id):
                    await self.memory.remember(ctx, turn)
                return await self._reply(ctx, msg, turn.text, turn, lang)
            except StoreError as exc:
                return [_storage_failed(exc, lang, msg, saved=True)]
            finally:
                await self._after_turn(ctx)

    def language_of_reply(self, msg: IncomingMessage, text: str,
                          ctx: Context | None = None) -> str:
        """The language to answer ``text`` (from ``msg``, by the user of ``ctx``) in, by the
        rule of ``bot.reply_language`` with the author's latest language this process saw in
        the thread (no store read: for answers that must not fail)."""
        chosen = getattr(ctx.user, "language", None) if ctx is not None else None
        return choose(chosen, text, self.languages.last_seen(msg), msg.language)

    async def language_for(self, msg: IncomingMessage, text: str, ctx: Context) -> str:
        """:meth:`language_of_reply`, the thread's stored turns read when only they can tell
        (``ThreadLanguages.latest``: a command without text after a restart)."""
        chosen = getattr(ctx.user, "language", None)
        if chosen or message_language(text):
            return choose(chosen, text, None, msg.language)
        return choose(None, text, await self.languages.latest(msg, ctx), msg.language)

    async def reply_language(self, msg: IncomingMessage) -> str:
        """:meth:`language_of_reply` for ``msg`` as a platform adapter sees it (for the notes
        it words itself): the author's stored setting when they are known, without creating
        anything for an author who is not."""
        user = await self.memory.find_user(msg.thread.platform, msg.platform_user_id)
        chosen = getattr(user, "language", None) if user is not None else None
        return chosen or self.language_of_reply(msg, _incoming_text(msg))

    async def forgot_everything(self, user_id: int) -> None:
        """Run the ``on_forget_all`` listeners for ``user_id`` (``/forget all``, confirmed)."""
        for listener in self.on_forget_all:
            await listener(user_id)

    async def forgetting_messages(self, user_id: int, texts: list[str]) -> None:
        """Run the ``on_forget_messages`` listeners for ``user_id`` and the texts of the
        messages about to be deleted (``/forget N``)."""
        if texts:
            for listener in self.on_forget_messages:
                await listener(user_id, texts)

    async def shutdown(self) -> None:
        """Finish background and pending consolidation of this process."""
        await self.memory.drain()
        await self.memory.consolidate_pending()

    # ----------------------------------------------------------------- chat platforms

    async def observe(self, msg: IncomingMessage) -> None:
        """Store a group message the assistant was not addressed in, without replying: it
        feeds the thread's working memory (redacted, deduplicated by platform message id) but
        never produces facts about anyone."""
        msg = valid_message(msg)
        try:
            await self._observe(msg)
        except StoreError as exc:  # the thread lock's database: nobody to tell either
            log.error("storage failed keeping a group message thread=%s:%s (%s): %s",
                      msg.thread.platform, msg.thread.chat_id, exc.reason, exc)

    async def _observe(self, msg: IncomingMessage) -> None:
        async with self._turn_lock(msg.thread):
            ctx = None
            try:
                ctx = await self.memory.context(msg)
                cleaned = redact(_incoming_text(msg))
                if cleaned.text and not cleaned.text.startswith("/"):
                    self.languages.seen(msg, cleaned.text)
                    await self.memory.record_user_turn(
                        ctx, cleaned.text, at=msg.sent_at, speaker=msg.display_name,
                        platform_message_id=msg.platform_message_id,
                        writes=TurnWrites(handled_update=HandledUpdate(
                            msg.thread.platform, msg.update_key)) if msg.update_key else NO_WRITES)
            except StoreError as exc:  # nobody asked; nobody to tell
                log.error("storage failed keeping a group message thread=%s:%s (%s): %s",
                          msg.thread.platform, msg.thread.chat_id, exc.reason, exc)
            finally:
                await self._after_turn(ctx)

    async def edit(self, msg: IncomingMessage, *, derive_facts: bool = True) -> list[str]:
        """Apply an edited message (same ``platform_message_id``, new text): the stored turn
        is updated and, with ``derive_facts``, its facts are derived again (the new value
        replaces the old one). Returns notes about changed facts; empty when the message was
        never stored or nothing changed."""
        if msg.platform_message_id is None:
            return []
        msg = valid_message(msg)
        async with self._turn_lock(msg.thread):
            ctx = await self.memory.context(msg)
            cleaned = redact(_incoming_text(msg))
            if not cleaned.text or cleaned.text.startswith("/"):
                return []
            _, outcomes = await self.memory.edit_user_turn(
                ctx, msg.platform_message_id, cleaned.text, derive_facts=derive_facts)
            lang = self.language_of_reply(msg, cleaned.text, ctx)
            return [note for o in outcomes if (note := _fact_note(o, lang))]

    async def pending_question(self, msg: IncomingMessage) -> str | None:
        """What the confirmation waiting for this author in this thread would do, or None
        (adapters attach confirm buttons when there is one)."""
        ctx = await self.memory.context(valid_message(msg))
        question = await self.memory.waiting_question(ctx.thread.id, ctx.user.id)
        return question.description if question is not None else None

    async def confirm(self, msg: IncomingMessage, yes: bool) -> list[str]:
        """Answer the author's pending confirmation in this thread (a confirm button): run the
        action for ``yes``, cancel it otherwise."""
        msg = valid_message(msg)
        async with self._turn_lock(msg.thread):
            ctx = await self.memory.context(msg)
            question = await self.memory.take_question(ctx.thread.id, ctx.user.id)
            if question is None:
                return [say(await self.language_for(msg, "", ctx), "engine.question_expired")]
            return [await answer(self, question, yes)]

    async def answer_question(self, question: PendingQuestion, yes: bool) -> str:
        """Run (``yes``) or cancel a question taken with ``memory.take_question`` (a confirm
        button that holds the question it showed); the reply text."""
        return await answer(self, question, yes)

    async def run_confirmed(self, question: PendingQuestion) -> str:
        """Run a confirmed question's action (``bot.commands.CONFIRMED``); the reply text."""
        from bot.commands import run_confirmed
        return await run_confirmed(self, question)

    async def command(self, msg: IncomingMessage) -> list[str]:
        """Run the slash command in ``msg.text`` without touching pending confirmations
        (buttons that re-render a list, such as ``/memories`` pages)."""
        from bot.commands import run_command

        msg = valid_message(msg)
        async with self._turn_lock(msg.thread):
            ctx = await self.memory.context(msg)
            return await run_command(self, ctx, msg, _incoming_text(msg))


async def _answer_request(engine: ConversationEngine, ctx: Context, turn_id: int, items,
                          lang: str) -> MemoryAnswerRequest:
    """The data a :class:`memory.ports.MemoryAnswerer` answers from. ``first_reply`` comes
    from the stored turns, not from this process: true until the open session's recent turns
    (folded ones too, whatever the window's token bound) hold a reply of ``engine``'s model, so
    it survives a restart and starts over with each session."""
    recent = await engine.memory.recent_turns(ctx)  # the cache working memory uses
    first = not any(t.role is Role.ASSISTANT and t.generated_by == engine.model.name
                    for t in recent)
    facts = (await engine.memory.facts_in_scope(ctx)
             if ctx.user.memory_enabled and items else [])
    return MemoryAnswerRequest(items=tuple(items), threshold=engine.memory.config.threshold,
                               facts=tuple(facts), turn_id=turn_id, first_reply=first,
                               language=lang)


def _storage_failed(exc: StoreError, lang: str, msg: IncomingMessage, *,
                    saved: bool) -> str:
    """The honest answer to a storage failure, logged once at ERROR (no traceback: the
    cause is the disk, not the code). ``saved``: the message itself was stored (or was a
    command, which is not stored), only later work failed."""
    log.error("storage failed handling a message thread=%s:%s (%s): %s",
              msg.thread.platform, msg.thread.chat_id, exc.reason, exc)
    reason = (say(lang, f"storage.reason.{exc.reason}")
              if f"storage.reason.{exc.reason}" in message_ids() else exc.reason)
    return say(lang, "engine.not_finished" if saved else "engine.not_saved", reason=reason)


def _delivery_writes(msg: IncomingMessage) -> TurnWrites:
    """What the user turn's transaction also records for a platform message: its update
    as handled (``msg.update_key``: a redelivery is then ignored, and a message not yet
    stored is not) and a reply as due until the adapter says it was delivered
    (:meth:`ConversationEngine.replied`); a crash in between leaves the turn due, answered at
    start-up."""
    return TurnWrites(
        handled_update=(HandledUpdate(msg.thread.platform, msg.update_key)
                        if msg.update_key is not None else None),
        reply_due=(msg.platform_message_id is not None
                   and msg.thread.platform in ("telegram", "discord")))


def valid_message(msg: IncomingMessage) -> IncomingMessage:
    """``msg`` with every text field storable: lone surrogates (undecodable console bytes, a
    JSON ``\\ud800`` from a platform) replaced by U+FFFD (``memory.text.valid_text``), so the
    message is kept instead of failing in the database."""
    fixed = {name: valid_text(value) for name in ("text", "display_name", "chat_title")
             if isinstance(value := getattr(msg, name), str) and valid_text(value) != value}
    return replace(msg, **fixed) if fixed else msg


def _incoming_text(msg: IncomingMessage) -> str:
    """The text of an incoming message as every path reads it: without invisible direction
    marks (``memory.text.without_direction_marks``), stripped."""
    return without_direction_marks(msg.text).strip()


def _fact_note(outcome, lang: str) -> str:
    """One line telling the user what their turn changed in semantic memory ("" for nothing
    worth saying: candidates, and confirmations they did not ask for)."""
    if outcome.fact is None:  # a candidate: nothing written yet
        return ""
    fact = fact_text(outcome.fact.text)
    if outcome.status in ("written", "ended"):
        return say(lang, f"note.{outcome.status}", fact=fact)
    if outcome.status == "superseded":
        return say(lang, "note.superseded", fact=fact,
                   before=mid_sentence(outcome.previous.text) if outcome.previous else "")
    if outcome.status == "confirmed" and outcome.explicit:
        return say(lang, "note.confirmed", fact=fact)
    return ""


def redaction_note(kinds: tuple[str, ...], lang: str) -> str:
    """The sentence that tells the user which kinds of secret (``memory.redact`` kinds such
    as ``"password"``) were removed from their message before storing ("" for none)."""
    if not kinds:
        return ""
    names = [say(lang, f"redaction.kind.{k}") if f"redaction.kind.{k}" in message_ids() else k
             for k in kinds]
    return say(lang, "redaction.note", kinds=say(lang, "list.separator").join(names))
