"""Daily maintenance on real SQLite + LanceDB: fact expiry, turn retention, compaction."""

from __future__ import annotations

import logging
from datetime import timedelta

from memory.types import FactStatus, ItemKind

DAY = 86400


async def _facts(h, user="alice"):
    row = await h.store.identities.find_user("console", user)
    return {f.id: f for f in await h.memory.facts_for(row.id, history=True)}


async def _recalled_keys(h, query: str) -> list[str]:
    ctx = await h.memory.context(h.message(query))
    result = await h.memory.recall(ctx, query, touch=False)
    return [i.key for i in result.blocks.items]


async def test_unused_fact_is_archived_not_recalled_still_listed_and_deletable(
        lance_harness, caplog):
    h = lance_harness
    await h.say("remember I keep bees on the roof")
    await h.say("remember I prefer green tea")
    await h.say("/new")
    bees, tea = sorted(await _facts(h))
    assert f"fact:{bees}" in await _recalled_keys(h, "bees on the roof")
    h.clock.advance(30 * DAY)
    await h.say("green tea please")  # recalls (touches) the tea fact: "recalled yesterday"
    assert (await _facts(h))[tea].last_recalled_at == h.clock.now()
    h.clock.advance(DAY)  # the bees fact is now unused for 31 days
    bees_used = (await _facts(h))[bees]
    assert max(bees_used.last_confirmed_at, bees_used.last_recalled_at) < (
        h.clock.now() - timedelta(days=30))

    with caplog.at_level(logging.INFO, logger="memory.service"):
        report = await h.memory.run_maintenance(expire_days=30, retention_days=0)
    assert report.archived_facts == 1
    assert "maintenance done consolidated=0 archived_facts=1 deleted_turns=0" in caplog.text
    facts = await _facts(h)
    assert facts[bees].status is FactStatus.ARCHIVED and facts[bees].valid_to is None
    assert facts[tea].status is FactStatus.ACTIVE
    assert f"fact:{bees}" in await h.index.keys()  # the row stays, with status archived
    assert f"fact:{bees}" not in await _recalled_keys(h, "bees on the roof")
    assert f"fact:{tea}" in await _recalled_keys(h, "green tea")

    listing = (await h.say("/memories"))[0]
    assert "bees" not in listing and "green tea" in listing
    listing = (await h.say("/memories all"))[0]
    archived_line = listing.split("Superseded and archived:\n")[1].splitlines()[0]
    assert archived_line.startswith("2. ") and "bees" in archived_line
    assert (await h.say("/forget 2"))[0].startswith("Forgotten:")
    assert bees not in await _facts(h)
    assert f"fact:{bees}" not in await h.index.keys()

    report = await h.memory.run_maintenance(expire_days=30, retention_days=0)
    assert report.archived_facts == 0  # idempotent


async def test_expiry_off_never_archives(lance_harness):
    h = lance_harness
    await h.say("remember I keep bees on the roof")
    h.clock.advance(400 * DAY)
    report = await h.memory.run_maintenance(expire_days=0, retention_days=0)
    assert report.archived_facts == 0
    assert all(f.status is FactStatus.ACTIVE for f in (await _facts(h)).values())


async def test_retention_deletes_old_consolidated_turns_with_their_rounds(lance_harness):
    h = lance_harness
    await h.say("Zanzibarquux is the project codename")
    await h.say("/new")
    old_session = await h.store.conversations.get_session(1)
    h.clock.advance(10 * DAY)
    await h.say("a recent conversation about Qwertyplonk")
    await h.say("/new")
    await h.say("an open conversation about Zanzibarquux")
    rounds_before = {r.id: r for r in await h.store.episodes.all_rounds()}
    old_rounds = [i for i, r in rounds_before.items() if r.session_id == old_session.id]
    assert len(old_rounds) == 1

    report = await h.memory.run_maintenance(expire_days=0, retention_days=7)
    assert (report.deleted_turns, report.deleted_rounds) == (2, 1)  # the user turn and reply
    assert await h.store.conversations.session_turns(old_session.id) == []
    assert {r.session_id for r in await h.store.episodes.all_rounds()} == {2}
    keys = await h.index.keys()
    assert f"round:{old_rounds[0]}" not in keys
    assert sum(k.startswith("episode:") for k in keys) == 2  # episodes stay
    assert len(await h.store.conversations.session_turns(2)) == 2
    assert len(await h.store.conversations.session_turns(3)) == 2  # the open session is untouched
    ctx = await h.memory.context(h.message("Zanzibarquux"))
    result = await h.memory.recall(ctx, "Zanzibarquux codename", touch=False)
    assert all(i.kind is not ItemKind.ROUND or i.source_session_id != old_session.id
               for i in result.blocks.items)
    again = await h.memory.run_maintenance(expire_days=0, retention_days=7)
    assert (again.deleted_turns, again.deleted_rounds) == (0, 0)
