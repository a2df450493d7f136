"""A destructive command's question (``/forget all``, ``/forget N`` of several facts) waiting
for its author's answer in the thread: kept in the store (:class:`memory.records.
PendingQuestion`, through ``MemoryService``), so the ``yes`` confirms it whichever process on
the store takes that line. It lasts until the author's next line in the thread (``yes`` runs
it, anything else cancels it) or :data:`QUESTION_TTL`, whichever comes first."""

from __future__ import annotations

from datetime import timedelta

from i18n import say
from memory.records import PendingQuestion
from memory.service import Context

QUESTION_TTL = timedelta(minutes=10)
"""How long a question waits for its answer: the 600 s Discord's confirm buttons stay usable
(``adapters.discord._views.ConfirmView``), for every platform alike."""



async def ask(engine, ctx: Context, *, action: str, target: int | None, description: str,
              lang: str) -> None:
    """Keep the question of ``action`` (``bot.commands.CONFIRMED``) on ``target`` for the
    author of ``ctx`` in its thread, replacing any earlier one there."""
    now = engine.memory.clock.now()
    await engine.memory.ask_question(PendingQuestion(
        ctx.thread.id, ctx.user.id, action, target, description, lang, now, now + QUESTION_TTL))


async def answer(engine, question: PendingQuestion, yes: bool) -> str:
    """Run a taken question's action (``yes``, through ``engine.run_confirmed``) or say it was
    cancelled; the reply text."""
    if yes:
        return await engine.run_confirmed(question)
    return say(question.language, "engine.cancelled", description=question.description)


async def answer_line(engine, question: PendingQuestion, text: str) -> tuple[list[str], bool]:
    """Answer ``question`` with its author's next line ``text``: a yes runs its action and
    then removes it (a crash in between leaves it to be confirmed again: the action is safe to
    repeat), anything else removes and cancels it. Returns the replies and whether ``text`` is
    also a message of its own (neither a yes nor a no)."""
    async def take() -> None:
        await engine.memory.take_question(question.thread_id, question.user_id,
                                          asked_at=question.asked_at)

    if text.lower() in {"yes", "y", "是", "确认"}:
        done = await answer(engine, question, True)
        await take()
        return [done], False
    await take()
    cancelled = await answer(engine, question, False)
    return [cancelled], text.lower().strip(".!") not in {"no", "n", "cancel", "不", "不要", "取消",
                                                          "算了"}
