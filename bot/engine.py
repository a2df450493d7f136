"""The conversation engine: one incoming message in, the replies out.

Turns of one thread are handled in order under a per-thread lock. For an ordinary message:
redact secrets, store the user turn, write an explicit fact (before the next input of the
thread), recall, assemble the prompt, ask the model, store the reply and what the model saw
(for ``/why``). Commands are routed to ``bot.commands``; end phrases close the session.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.usage import record_usage
from memory.assembly import assemble
from memory.episodes import is_end_phrase
from memory.errors import ModelError
from memory.ports import ChatModel
from memory.redact import describe_redaction, redact
from memory.service import Context, MemoryService
from memory.text import language_of
from memory.types import IncomingMessage, ThreadKey

log = logging.getLogger(__name__)

MODEL_DOWN_REPLY = ("I can't reach the model right now; your message is saved. "
                    "Please try again in a moment.")


@dataclass
class PendingConfirmation:
    """An action waiting for the user's ``yes`` (any other line cancels it)."""

    description: str
    action: Callable
    user_id: int


class ConversationEngine:
    """Handles messages for every adapter (console, Telegram, Discord) the same way.

    Args:
        memory: the memory service.
        model: the chat model (offline, Claude, or OpenAI-compatible).
        max_tokens: output token cap per reply (``MAX_TOKENS``).
        on_turn: awaited after every handled message, still under the thread's lock (the app
            reschedules the thread's idle job with it); must not raise.
    """

    def __init__(self, *, memory: MemoryService, model: ChatModel, max_tokens: int = 1024,
                 on_turn: Callable[[Context], Awaitable[None]] | None = None) -> None:
        self.memory = memory
        self.model = model
        self.max_tokens = max_tokens
        self.on_turn = on_turn
        self._locks: dict[ThreadKey, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.pending: dict[tuple[int, int], PendingConfirmation] = {}

    async def handle(self, msg: IncomingMessage) -> list[str]:
        """Answer one message. Returns the reply texts (at least one for every input).

        Never raises for a model failure: the user gets an apology and the failed reply is not
        stored in working memory.
        """
        async with self._locks[msg.thread]:
            ctx = await self.memory.context(msg)
            try:
                text = msg.text.strip()
                key = (ctx.thread.id, ctx.user.id)
                if key in self.pending:
                    pending = self.pending.pop(key)
                    if text.lower() in {"yes", "y", "是", "确认"}:
                        return [await pending.action()]
                    cancelled = [f"Cancelled: {pending.description}."]
                    if text.lower().strip(".!") in {"no", "n", "cancel", "不", "不要", "取消", "算了"}:
                        return cancelled  # the answer to the question, not a new message
                    return cancelled + await self._dispatch(ctx, msg, text)
                return await self._dispatch(ctx, msg, text)
            finally:
                if self.on_turn is not None:
                    await self.on_turn(ctx)

    async def _dispatch(self, ctx: Context, msg: IncomingMessage, text: str) -> list[str]:
        from bot.commands import run_command

        if not text:
            return ["(empty message: type something, or /help)"]
        if text.startswith("/"):
            return await run_command(self, ctx, msg, text)
        if is_end_phrase(text):
            closed = await self.memory.close_session(ctx, reason="end_phrase")
            zh = language_of(text) == "zh"
            if closed:
                return ["好的，下次见！这次的对话我记下了。" if zh
                        else "Bye for now! I saved a summary of this conversation."]
            return ["好的，下次见！" if zh else "Bye for now!"]
        return await self._converse(ctx, msg, text)

    async def ingest(self, msg: IncomingMessage) -> None:
        """Store a recorded message without replying (replays of recorded conversations):
        redaction, the user turn and explicit facts, exactly as in a live chat."""
        async with self._locks[msg.thread]:
            ctx = await self.memory.context(msg)
            cleaned = redact(msg.text.strip())
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
        lang = language_of(cleaned.text)
        turn, created = await self.memory.record_user_turn(
            ctx, cleaned.text, at=msg.sent_at, speaker=msg.display_name,
            platform_message_id=msg.platform_message_id,
        )
        if not created:
            log.info("duplicate message ignored thread=%s turn=%s", ctx.thread.id, turn.id)
            return []
        notes: list[str] = []
        for outcome in await self.memory.remember(ctx, turn):
            note = _fact_note(outcome, lang)
            if note:
                notes.append(note)
        recall = await self.memory.recall(ctx, cleaned.text, exclude_session_id=turn.session_id)
        window = await self.memory.working_memory(ctx)
        working_tokens = sum(self.memory.counter.count(t.text) for t in window)
        prompt = assemble(blocks=recall.blocks, working=window, chat_kind=msg.chat_kind,
                          working_tokens=working_tokens)
        log.info("prompt assembled thread=%s items=%d memory_tokens=%d working_turns=%d "
                 "working_tokens=%d", ctx.thread.id, len(prompt.recalled), prompt.memory_tokens,
                 len(window), working_tokens)
        log.debug("prompt system=%r", prompt.system)
        try:
            reply = await self.model.complete(system=prompt.system, messages=prompt.messages,
                                              max_tokens=self.max_tokens)
        except ModelError as exc:
            log.warning("model call failed thread=%s: %s", ctx.thread.id, exc)
            return notes + [MODEL_DOWN_REPLY]
        await record_usage(self.memory.store, ctx.user.id, reply, self.memory.clock.now())
        answer = reply.text.strip()
        if answer:
            await self.memory.record_assistant_turn(
                ctx, answer, at=self.memory.clock.now(), generated_by=reply.model)
        await self.memory.store.save_prompt_record(ctx.thread.id, ctx.user.id, {
            "items": [{"key": i.key, "kind": i.kind.value, "score": round(i.score, 3),
                       "tokens": i.tokens, "session_id": i.source_session_id,
                       "created_at": i.created_at.isoformat() if i.created_at else None,
                       "pinned": i.pinned, "text": i.text} for i in prompt.recalled],
            "memory_tokens": prompt.memory_tokens,
            "budget": self.memory.config.budget_tokens,
            "working_turns": len(window),
            "working_tokens": working_tokens,
            "model": reply.model,
        }, self.memory.clock.now())
        redaction = describe_redaction(cleaned.kinds, lang)
        replies = [answer or "(the model returned an empty answer)"]
        return notes + replies + ([redaction] if redaction else [])

    async def shutdown(self) -> None:
        """Finish pending consolidation of this process."""
        await self.memory.consolidate_pending()


def _fact_note(outcome, lang: str) -> str:
    """One line telling the user what their turn changed in semantic memory ("" for nothing
    worth saying: candidates, and confirmations they did not ask for)."""
    zh = lang == "zh"
    fact = outcome.fact
    if outcome.status == "written":
        return f"记住了：{fact.text}" if zh else f"Noted: {fact.text}"
    if outcome.status == "superseded":
        before = outcome.previous.text if outcome.previous else ""
        return (f"已更新：{fact.text}（之前：{before}）" if zh
                else f"Updated: {fact.text} (before: {before})")
    if outcome.status == "ended":
        return f"记下了，这条不再成立：{fact.text}" if zh else f"Noted that this no longer holds: {fact.text}"
    if outcome.status == "confirmed" and outcome.explicit:
        return f"我已经记着了：{fact.text}" if zh else f"I already had that: {fact.text}"
    return ""

