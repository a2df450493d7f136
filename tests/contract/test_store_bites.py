"""The contract catches a broken backend: an in-memory store whose supersede forgets the old
fact's ``valid_to`` fails the supersede contract (the same check every backend passes)."""

from __future__ import annotations

import pytest

from memory.stores.memory_store import InMemoryStore
from memory.stores.memory_store.facts import MemoryFacts

from tests.contract.test_store_facts import check_supersede_keeps_history


class ForgetfulFacts(MemoryFacts):
    """Supersedes by status alone: the old fact keeps no ``valid_to``."""

    async def add_fact(self, *, supersedes=(), **kw):
        fact = await super().add_fact(**kw)
        for old_id in supersedes:
            row = self.t.facts.get(old_id)
            if row is not None and row["user_id"] == fact.user_id and row["status"] == "active":
                self.t.update(self.t.facts, old_id, status="superseded")
        return fact


class BrokenStore(InMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.facts = ForgetfulFacts(self.tables)


async def test_a_supersede_that_forgets_valid_to_is_caught():
    with pytest.raises(AssertionError):
        await check_supersede_keeps_history(BrokenStore())


async def test_the_same_check_passes_on_the_store_it_breaks():
    await check_supersede_keeps_history(InMemoryStore())
