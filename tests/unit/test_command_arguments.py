"""Chat commands refuse arguments they do not understand with one clear line and change
nothing: no fact, episode, session, confirmation or memory switch is touched."""

from __future__ import annotations

import pytest

from memory.types import FactStatus


async def _seed(harness) -> None:
    await harness.say("remember I live in Graz")
    await harness.say("remember I drink green tea")


async def _state(harness, user: str = "alice") -> dict:
    """Everything a bad argument must leave as it was."""
    found = await harness.store.identities.find_user("console", user)
    if found is None:
        return {}
    facts = await harness.store.facts.list_facts(found.id, list(FactStatus))
    session = await harness.store.conversations.open_session(1)
    return {"facts": sorted((f.id, f.text, f.status) for f in facts),
            "episodes": len(await harness.memory.episodes_for(found.id)),
            "session": session.id if session else None,
            "memory_enabled": found.memory_enabled,
            "pending": await harness.memory.waiting_question(1, found.id)}


BAD_ARGUMENTS = [
    ("/memories bogus",
     '/memories has no option "bogus"; send /memories, /memories all or /memories episodes.'),
    ("/memories all please",
     '/memories has no option "all please"; send /memories, /memories all or '
     "/memories episodes."),
    ("/new extra", '/new takes no argument (got "extra"); send just /new.'),
    ("/help me", '/help takes no argument (got "me"); send just /help.'),
    ("/why now", '/why takes no argument (got "now"); send just /why.'),
    ("/stats today", '/stats takes no argument (got "today"); send just /stats.'),
    ("/export json", '/export takes no argument (got "json"); send just /export.'),
    ("/memory_off bogus",
     '/memory_off has no option "bogus"; send /memory_off (just you) or /memory_off chat '
     "(the whole group, its admins only)."),
    ("/memory_on please",
     '/memory_on has no option "please"; send /memory_on (just you) or /memory_on chat '
     "(the whole group, its admins only)."),
    ("/forget all please",
     "To delete everything I keep about you, send exactly /forget all (I ask before deleting); "
     'to find facts by words, leave out "all". Nothing was deleted.'),
    ("/forget ALL!",
     "To delete everything I keep about you, send exactly /forget all (I ask before deleting); "
     'to find facts by words, leave out "all". Nothing was deleted.'),
    ("/forget -1",
     '"-1" is not a fact number. Send /forget N with one number from 1 to 2, as /memories '
     "numbers them. Nothing was deleted."),
    ("/forget 0",
     "There is no fact number 0. Send /forget N with one number from 1 to 2, as /memories "
     "numbers them. Nothing was deleted."),
    ("/forget 7",
     "There is no fact number 7. Send /forget N with one number from 1 to 2, as /memories "
     "numbers them. Nothing was deleted."),
    ("/forget 1 2",
     '"1 2" is not a fact number. Send /forget N with one number from 1 to 2, as /memories '
     "numbers them. Nothing was deleted."),
    ("/forget 1, 2",
     '"1, 2" is not a fact number. Send /forget N with one number from 1 to 2, as /memories '
     "numbers them. Nothing was deleted."),
]


@pytest.mark.parametrize(("command", "reply"), BAD_ARGUMENTS,
                         ids=[c for c, _ in BAD_ARGUMENTS])
async def test_bad_argument_gets_one_clear_line_and_changes_nothing(harness, command, reply):
    await _seed(harness)
    before = await _state(harness)
    assert len(before["facts"]) == 2 and before["session"] is not None
    assert await harness.say(command) == [reply]
    assert await _state(harness) == before


async def test_forget_all_with_more_words_starts_no_confirmation(harness):
    await _seed(harness)
    before = await _state(harness)
    assert (await harness.say("/forget all please"))[0].startswith("To delete everything")
    found = await harness.store.identities.find_user("console", "alice")
    assert await harness.memory.waiting_question(1, found.id) is None
    assert not (await harness.say("yes"))[0].startswith("Deleted everything")
    after = await _state(harness)
    assert after["facts"] == before["facts"] and after["episodes"] == before["episodes"]


async def test_forget_bad_number_names_the_numbers_of_memories_all(harness):
    """With history the valid numbers run past the active facts, as /memories all shows."""
    await harness.say("remember I live in Graz")
    await harness.say("/new")
    await harness.say("No, I live in Linz")
    before = await _state(harness)
    assert len(before["facts"]) == 2
    assert await harness.say("/forget 3") == [
        "There is no fact number 3. Send /forget N with one number from 1 to 2, as /memories "
        "all numbers them. Nothing was deleted."]
    assert await _state(harness) == before


@pytest.mark.parametrize(("command", "reply"), [
    ("/forget 1", "There is no fact number 1. You have no saved facts to forget. "
                  "Nothing was deleted."),
    ("/forget -1", '"-1" is not a fact number. You have no saved facts to forget. '
                   "Nothing was deleted."),
], ids=["1", "-1"])
async def test_forget_a_number_without_facts(harness, command, reply):
    assert await harness.say(command, user="newbie") == [reply]
    assert (await _state(harness, "newbie"))["facts"] == []
