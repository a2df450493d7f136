"""A reply is stored in one write: the assistant turn, the usage row and the /why record
commit together or not at all."""

from __future__ import annotations

import sqlite3

import pytest

from memory.errors import StoreError
from memory.records import PromptRecord, TurnWrites, UsageEntry

from memory.types import Role


async def _counts(store):
    async def one(sql):
        return (await store.db.one(sql))[0]

    return (await one("SELECT count(*) FROM turns WHERE role = 'assistant'"),
            await one("SELECT coalesce(sum(calls), 0) FROM model_usage"),
            await one("SELECT count(*) FROM prompt_records"))


async def test_a_reply_writes_turn_usage_and_why_record(harness):
    await harness.say("I like green tea")
    await harness.say("what do I drink?")
    assert await _counts(harness.store) == (2, 2, 1)  # one /why record per user and thread
    ctx = await harness.memory.context(harness.message("x"))
    record = await harness.store.records.load_prompt_record(ctx.thread.id, ctx.user.id)
    assert record["model"] and record["working_turns"] >= 1


async def test_what_a_turn_also_records_fails_with_it(harness):
    await harness.say("hello")
    ctx = await harness.memory.context(harness.message("x"))
    before = await _counts(harness.store)
    turns = await harness.store.conversations.session_turns((await harness.store.conversations.open_session(ctx.thread.id)).id)
    # the usage is written first and succeeds; the /why record names a user that does not
    # exist, which the database refuses: neither, nor the turn, is kept
    good = UsageEntry(ctx.user.id, "2026-01-01", "m", input_tokens=1, output_tokens=1)
    bad = PromptRecord(ctx.thread.id, 999_999, {"items": []}, harness.clock.now())
    with pytest.raises(StoreError, match="FOREIGN KEY"):  # mapped at the store's seam
        await harness.memory.record_assistant_turn(
            ctx, "an answer", at=harness.clock.now(), generated_by="offline",
            writes=TurnWrites(usage=good, prompt_record=bad))
    assert await _counts(harness.store) == before  # nothing of it was kept
    after = await harness.store.conversations.session_turns((await harness.store.conversations.open_session(ctx.thread.id)).id)
    assert after == turns and not any(t.text == "an answer" for t in after)
    window = await harness.memory.working_memory(ctx)  # the hot cache was dropped, not stale
    assert [t.text for t in window if t.role is Role.ASSISTANT] == [
        t.text for t in turns if t.role is Role.ASSISTANT]
