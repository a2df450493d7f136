"""Facts: a new value supersedes the old one, which keeps its history (valid from, valid to);
confirming never deletes; the one length check; archiving unused facts."""

from __future__ import annotations

import pytest

from memory.errors import StoreError
from memory.facts import MAX_FACT_CHARS
from memory.types import ChatKind, FactStatus

from tests.contract.support import store  # noqa: F401 (every backend in turn)
from tests.contract.support import Chat, at


async def check_supersede_keeps_history(store) -> None:
    """The supersede contract (also run against a broken backend, to show it bites)."""
    ada = await Chat.open(store)
    said = await ada.say("I live in Graz")
    old = await ada.fact("The user lives in Graz", turn=said, topic="home")
    moved = await ada.say("I moved to Linz")
    new = await ada.fact("The user lives in Linz", turn=moved, topic="home",
                         supersedes=[old.id], valid_from=at(100))
    facts = await store.facts.get_facts([old.id, new.id])
    assert facts[old.id].status is FactStatus.SUPERSEDED
    assert facts[old.id].valid_to == at(100) == facts[new.id].valid_from
    assert facts[new.id].status is FactStatus.ACTIVE and facts[new.id].valid_to is None
    assert [f.id for f in await store.facts.active_facts(ada.user.id, ada.scope)] == [new.id]
    assert [f.id for f in await store.privacy.fact_with_history(ada.user.id, new.id)] == [
        new.id, old.id]
    assert [f.id for f in await store.facts.list_facts(
        ada.user.id, [FactStatus.SUPERSEDED])] == [old.id]


async def test_a_new_value_supersedes_the_old_one_which_keeps_its_history(store):
    await check_supersede_keeps_history(store)


async def test_ending_a_fact_keeps_it_as_history_once(store):
    ada = await Chat.open(store)
    fact = await ada.fact("The user drinks green tea", turn=await ada.say("I drink green tea"))
    assert await store.facts.end_fact(fact.id, ada.user.id, at(50))
    assert not await store.facts.end_fact(fact.id, ada.user.id, at(60))  # no longer active
    ended = (await store.facts.get_facts([fact.id]))[fact.id]
    assert ended.status is FactStatus.SUPERSEDED and ended.valid_to == at(50)
    other = await Chat.open(store, "bob")
    assert not await store.facts.end_fact(fact.id, other.user.id, at(70))  # not bob's


async def test_a_supersede_of_another_users_fact_changes_nothing(store):
    ada, bob = await Chat.open(store), await Chat.open(store, "bob")
    adas = await ada.fact("The user lives in Graz", turn=await ada.say("I live in Graz"),
                          topic="home")
    await bob.fact("The user lives in Linz", turn=await bob.say("I live in Linz"), topic="home",
                   supersedes=[adas.id])
    assert (await store.facts.get_facts([adas.id]))[adas.id].status is FactStatus.ACTIVE


async def test_confirming_bumps_and_adds_the_source_turn(store):
    ada = await Chat.open(store)
    first = await ada.say("I like jazz")
    fact = await ada.fact("The user likes jazz", turn=first)
    again = await ada.say("I really like jazz")
    await store.facts.confirm_fact(fact.id, again.id, at(30))
    await store.facts.confirm_fact(fact.id, again.id, at(31))
    confirmed = (await store.facts.get_facts([fact.id]))[fact.id]
    assert confirmed.confirmations == 3 and confirmed.last_confirmed_at == at(31)
    assert confirmed.source_turn_ids == (first.id, again.id)
    assert await store.facts.turn_has_memory(again.id)


@pytest.mark.parametrize("text", ["", "   ", "x" * (MAX_FACT_CHARS + 1)])
async def test_a_fact_text_outside_the_length_bounds_is_refused_and_nothing_written(store, text):
    ada = await Chat.open(store)
    old = await ada.fact("The user lives in Graz", turn=await ada.say("I live in Graz"))
    with pytest.raises(StoreError):
        await ada.fact(text, turn=await ada.say("x"), supersedes=[old.id])
    assert [f.id for f in await store.facts.active_facts(ada.user.id, ada.scope)] == [old.id]


async def test_candidates_are_per_scope_and_consumed_once(store):
    ada = await Chat.open(store)
    turn = await ada.say("I go climbing on Sundays")
    first = await store.facts.add_candidate(
        user_id=ada.user.id, scope=ada.scope, topic=None, value=None, text="climbs on Sundays",
        norm="climb sunday", lang="en", vector=b"\x00\x01", session_id=turn.session_id,
        turn_id=turn.id, now=at(5))
    group = await Chat.open(store, "ada", chat="club", kind=ChatKind.GROUP)
    assert [c["id"] for c in await store.facts.open_candidates(ada.user.id, ada.scope)] == [first]
    assert await store.facts.open_candidates(ada.user.id, group.scope) == []
    row = (await store.facts.open_candidates(ada.user.id, ada.scope))[0]
    assert (row["text"], row["norm"], row["vector"], row["turn_id"]) == (
        "climbs on Sundays", "climb sunday", b"\x00\x01", turn.id)
    assert await store.facts.candidate_turn_ids([turn.id, turn.id + 99]) == {turn.id}
    await store.facts.consume_candidates([first], at(6))
    assert await store.facts.open_candidates(ada.user.id, ada.scope) == []
    assert await store.facts.candidate_turn_ids([turn.id]) == {turn.id}  # consumed or not


async def test_unused_facts_are_archived_unless_recalled_meanwhile(store):
    ada = await Chat.open(store)
    old = await ada.fact("The user owns a bike", turn=await ada.say("I own a bike"))
    used = await ada.fact("The user owns a car", turn=await ada.say("I own a car"))
    cutoff = at(500)
    assert {f.id for f in await store.facts.stale_facts(cutoff)} == {old.id, used.id}
    await store.facts.touch_facts([used.id], at(600))  # recalled after the cutoff
    archived = await store.facts.archive_facts([old.id, used.id], cutoff=cutoff, now=at(700))
    assert [(f.id, scope) for f, scope in archived] == [(old.id, ada.scope)]
    facts = await store.facts.get_facts([old.id, used.id])
    assert facts[old.id].status is FactStatus.ARCHIVED and facts[old.id].valid_to is None
    assert facts[used.id].status is FactStatus.ACTIVE
    assert facts[used.id].last_recalled_at == at(600)
    assert [(f.id, s) for f, s in await store.facts.all_facts()] == [
        (old.id, ada.scope), (used.id, ada.scope)]


async def test_profile_candidates_are_the_active_facts_of_the_scope_by_kind_topic_or_mode(store):
    ada = await Chat.open(store)
    turn = await ada.say("facts")

    async def add(text, *, kind="profile", topic=None, mode="statement", user=ada, now=None,
                  supersedes=()):
        return await store.facts.add_fact(
            user_id=user.user.id, kind=kind, text=text, topic=topic, origin=user.thread,
            source_turn_ids=[turn.id], lang="en", scope=user.scope, now=now or ada.now(),
            mode=mode, supersedes=supersedes)

    peanuts = await add("The user is allergic to peanuts", kind="prohibition")
    home = await add("The user lives in Graz", topic="residence")
    await add("The user's phone is 555", topic="phone")  # no kind, root or mode of the three
    vegan = await add("The user is vegan", topic="diet:vegan")  # root before the ":"
    asked = await add("The user keeps bees", mode="explicit")
    await add("The user mentioned rain")
    moved = await add("The user lives in Linz", topic="residence", supersedes=[home.id])
    await add("The user rather likes residences", topic="residence_x")  # a root, not a prefix
    bob = await Chat.open(store, "bob")
    await add("The user is allergic to fish", kind="prohibition", user=bob)
    group = await Chat.open(store, "ada", chat="club", kind=ChatKind.GROUP)
    await add("The user is allergic to cats", kind="prohibition", user=group)

    def ask(limit=50, scope=ada.scope):
        return store.facts.profile_candidates(
            ada.user.id, scope, kinds={"prohibition"}, topic_roots={"residence", "diet"},
            modes={"explicit"}, limit=limit)

    assert [f.id for f in await ask()] == [peanuts.id, vegan.id, asked.id, moved.id]
    assert [f.id for f in await ask(limit=2)] == [peanuts.id, vegan.id]  # the oldest
    got = (await ask())[0]
    assert got == (await store.facts.get_facts([peanuts.id]))[peanuts.id]
    assert [f.text for f in await ask(scope=group.scope)] == ["The user is allergic to cats"]
    assert await store.facts.profile_candidates(
        ada.user.id, ada.scope, kinds=(), topic_roots=(), modes=(), limit=10) == []


async def test_topics_written_before_are_of_any_status_in_the_scope(store):
    ada = await Chat.open(store)
    turn = await ada.say("I live in Graz")
    old = await ada.fact("The user lives in Graz", turn=turn, topic="residence")  # at(2)
    await ada.fact("The user lives in Linz", turn=turn, topic="residence", supersedes=[old.id])
    await ada.fact("The user drinks tea", turn=turn, topic="drink")  # at(4)
    group = await Chat.open(store, "ada", chat="club", kind=ChatKind.GROUP)
    await group.fact("The user works at ACME", turn=turn, topic="employer")
    topics = {"residence", "drink", "employer", "age"}
    assert await store.facts.topics_written_before(ada.user.id, ada.scope, topics,
                                                   at(3)) == {"residence"}
    assert await store.facts.topics_written_before(ada.user.id, ada.scope, topics,
                                                   at(100)) == {"residence", "drink"}
    assert await store.facts.topics_written_before(ada.user.id, ada.scope, set(), at(100)) == set()
