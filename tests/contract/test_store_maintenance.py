"""The daily maintenance's claim: of the processes on one store, one runs a day's maintenance
(the first to claim it); the day stays claimed once done, a failed run's claim is released,
and a claim left unfinished by a process that died is taken over once it is stale."""

from __future__ import annotations

import asyncio

from tests.contract.support import store  # noqa: F401 (every backend in turn)
from tests.contract.support import at

DAY = "2026-11-30"


async def test_a_day_is_claimed_once_and_stays_claimed_when_done(store):
    assert await store.claim_maintenance(DAY, at(1), stale_before=at(-59))
    assert not await store.claim_maintenance(DAY, at(2), stale_before=at(-58))
    await store.finish_maintenance(DAY, at(3), done=True)
    assert not await store.claim_maintenance(DAY, at(200), stale_before=at(140))  # done
    assert await store.claim_maintenance("2026-12-01", at(1440), stale_before=at(1380))


async def test_a_failed_run_releases_its_claim(store):
    assert await store.claim_maintenance(DAY, at(1), stale_before=at(-59))
    await store.finish_maintenance(DAY, at(2), done=False)
    assert await store.claim_maintenance(DAY, at(3), stale_before=at(-57))


async def test_a_stale_claim_of_a_dead_process_is_taken_over(store):
    assert await store.claim_maintenance(DAY, at(1), stale_before=at(-59))
    assert not await store.claim_maintenance(DAY, at(30), stale_before=at(-30))  # still fresh
    assert await store.claim_maintenance(DAY, at(70), stale_before=at(10))  # started at 1
    assert not await store.claim_maintenance(DAY, at(71), stale_before=at(11))  # now fresh


async def test_of_concurrent_claims_of_a_day_one_wins(store):
    won = await asyncio.gather(*(store.claim_maintenance(DAY, at(1), stale_before=at(-59))
                                 for _ in range(4)))
    assert sum(won) == 1
