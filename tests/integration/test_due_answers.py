"""A reply left due by a crash is answered at most once, however many processes answer it.

The way a second answer came about with several workers: a worker stored a message and was
killed before answering it; another worker handled the chat's next message; a restarted
worker then answered the first message late (its answer stored after the later turns), and
was killed again before it delivered that answer. The next start-up found the message still
due and, looking for its answer right after it, found the later user turn instead and
answered it a second time. The answer of a user turn is stored under a key of its own
(``memory.records.answer_key``), so the store keeps at most one per turn.

Real SQLite and the real PostgreSQL the tests start (two apps on one schema, as two
processes), the offline model.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from urllib.parse import quote

import pytest

from adapters.embedders import HashingEmbedder
from bot.app import build_app
from bot.engine import _delivery_writes
from bot.settings import Settings
from memory.types import ChatKind, IncomingMessage, ThreadKey

KEY = ThreadKey("telegram", "4711")


def _msg(text: str, n: int) -> IncomingMessage:
    return IncomingMessage(KEY, ChatKind.PRIVATE, "4711", "Ana", text, datetime.now(timezone.utc),
                           platform_message_id=str(n))


async def _stored_but_unanswered(engine, msg: IncomingMessage) -> None:
    """What a worker killed between storing ``msg`` and answering it leaves: the user turn,
    its reply due."""
    ctx = await engine.memory.context(msg)
    await engine.memory.record_user_turn(ctx, msg.text, at=msg.sent_at, speaker="Ana",
                                         platform_message_id=msg.platform_message_id,
                                         writes=_delivery_writes(msg))


async def _roles(engine) -> Counter:
    ctx = await engine.memory.context(_msg("", 0))
    session = await engine.memory.open_session(ctx.thread.id)
    turns = await engine.memory.store.conversations.session_turns(session.id)
    return Counter(t.role.value for t in turns)


async def _late_answer_twice(first, second) -> None:
    """``first`` is killed before answering message 1; the chat's message 2 is handled and
    delivered; ``first`` restarts and answers message 1 late without delivering it (killed
    again); ``second`` starts and answers whatever is due."""
    one, two = _msg("remember that my favourite number is 7", 1), _msg("I like rivers", 2)
    await _stored_but_unanswered(first, one)
    assert await second.handle(two)
    await second.replied(two)
    [due] = await first.due_replies("telegram")
    late = await first.answer_due(due)
    assert late
    [again] = await second.due_replies("telegram")  # not delivered: still due
    assert await second.answer_due(again) == late  # the stored answer, not a second one
    roles = await _roles(second)
    assert roles["user"] == 2 and roles["assistant"] == 2, roles


async def test_a_late_answer_left_undelivered_is_not_answered_again_sqlite(tmp_path):
    app = await build_app(Settings(data_dir=tmp_path / "data", embedder="hashing"),
                          embedder=HashingEmbedder())
    try:
        await _late_answer_twice(app.engine, app.engine)
    finally:
        await app.aclose()


@pytest.mark.postgres
async def test_a_late_answer_left_undelivered_is_not_answered_again_postgres(tmp_path,
                                                                             pg_schema):
    url, schema = pg_schema
    settings = Settings(data_dir=tmp_path / "data", embedder="hashing",
                        database_url=f"{url}&search_path={quote(schema + ',public')}")
    first = await build_app(settings, embedder=HashingEmbedder())
    second = await build_app(settings, embedder=HashingEmbedder())
    try:
        await _late_answer_twice(first.engine, second.engine)
    finally:
        await first.aclose()
        await second.aclose()
