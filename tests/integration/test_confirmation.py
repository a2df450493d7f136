"""The question of ``/forget all`` is kept in the store: its "yes" runs the deletion before
the question goes, so a failure (or a crash) in between leaves it to be confirmed again, and
it expires after ``bot.confirmation.QUESTION_TTL``. Real SQLite, the offline model."""

from __future__ import annotations

from bot.confirmation import QUESTION_TTL
from memory.errors import StoreError
from memory.types import FactStatus


async def _facts(harness) -> list:
    user = await harness.store.identities.find_user("console", "alice")
    return await harness.store.facts.list_facts(user.id, list(FactStatus))


async def test_a_yes_whose_deletion_failed_can_be_given_again(harness, monkeypatch):
    await harness.say("remember that my cat is called Quillvane")
    assert "Reply yes to confirm" in (await harness.say("/forget all"))[0]
    forget_all = harness.memory.forget_all

    async def failing(user_id):
        monkeypatch.setattr(harness.memory, "forget_all", forget_all)  # once
        raise StoreError("disk full", reason="full")

    monkeypatch.setattr(harness.memory, "forget_all", failing)
    [failed] = await harness.say("yes")
    assert not failed.startswith("Deleted everything") and await _facts(harness)
    assert await harness.engine.pending_question(harness.message("")) is not None
    [done] = await harness.say("yes")
    assert done.startswith("Deleted everything") and not await _facts(harness)
    assert await harness.engine.pending_question(harness.message("")) is None


async def test_a_question_expires(harness):
    await harness.say("remember that my cat is called Quillvane")
    assert "Reply yes to confirm" in (await harness.say("/forget all"))[0]
    harness.clock.advance(QUESTION_TTL.total_seconds())
    assert await harness.engine.pending_question(harness.message("")) is None
    assert not (await harness.say("yes"))[0].startswith("Deleted everything")
    assert await _facts(harness)
