"""Forgetting and editing reach every copy derived from the text (real SQLite + LanceDB): the
replies that recalled or quoted it, the episodes and exchanges made from it, index rows,
``/why`` records and export files. Each test scans every file of the data folder for a word
only the forgotten or edited text held, and the process log is checked at DEBUG level."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memory.types import ChatKind, FactStatus
from tests.conftest import make_harness

BIN = Path(sys.executable).with_name("memory-bot")


def _files_holding(folder: Path, word: str) -> list[str]:
    needle = word.lower().encode()
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and needle in p.read_bytes().lower())


async def _close(h):
    await h.index.close()
    await h.store.close()


async def test_forgetting_a_fact_deletes_the_replies_and_summaries_that_quoted_it(tmp_path,
                                                                                 clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await h.say("remember that I live in Vrellisburg")
        await h.say("I am planning a garden party for Saturday")
        await h.say("/new")  # an episode whose summary cites the town
        for question in ("where do I live?", "what do you know about my town?",
                         "tell me about my garden party"):
            await h.say(question)  # offline replies quote the recalled fact and episode
        await h.say("/new")
        await h.say("remember that I drink green tea")
        await h.say("what do I drink?")
        await h.say("/why")
        u = await h.store.identities.find_user("console", "alice")
        assert len(json.dumps(await h.memory.export_user(u.id)).lower().split("vrellisburg")) > 3
        facts = await h.memory.facts_for(u.id)
        n = next(i for i, f in enumerate(facts, 1) if "Vrellisburg" in f.text)
        assert (await h.say(f"/forget {n}"))[0].startswith("Forgotten: The user lives in")
        doc = json.dumps(await h.memory.export_user(u.id), ensure_ascii=False)
        assert "vrellisburg" not in doc.lower()
        assert "green tea" in doc  # what was not derived from it stays
        assert await h.memory.episodes_for(u.id)  # summarised again from what remains
    finally:
        await _close(h)
    assert _files_holding(tmp_path, "Vrellisburg") == []


async def test_an_edited_message_leaves_no_old_text_in_episodes_exchanges_or_recall(tmp_path,
                                                                                   clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await h.say("remember that I live in Quendlhof", message_id="m1")
        await h.say("my sister visits next week", message_id="m2")
        await h.say("/new")  # episode and exchanges written with the old text
        u = await h.store.identities.find_user("console", "alice")
        assert any("Quendlhof" in r.text for r in await h.store.episodes.all_rounds())
        await h.engine.edit(h.message("remember that I live in Graz", message_id="m1"))
        assert [f.text for f in await h.memory.facts_for(u.id, history=True)] == [
            "The user lives in Graz"]
        reply = "".join(await h.say("where do I live? which town?"))
        assert "Graz" in reply and "Quendlhof" not in reply  # recall has only the new text
        rounds = await h.store.episodes.all_rounds()
        assert any("I live in Graz" in r.text for r in rounds)
        assert f"round:{rounds[0].id}" in await h.index.keys()
        (episode,) = await h.memory.episodes_for(u.id)
        assert "Quendlhof" not in episode.summary
    finally:
        await _close(h)
    holding = _files_holding(tmp_path, "Quendlhof")
    assert holding == [], holding


def test_the_log_holds_no_message_or_memory_text_even_at_debug(tmp_path):
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "OPENAI"))}
    env.update({"MEMORY_BOT_DATA_DIR": str(data), "EMBEDDER": "hashing", "LOG_LEVEL": "DEBUG"})
    done = subprocess.run(
        [str(BIN), "console", "--user", "erin"], env=env, timeout=120, capture_output=True,
        text=True, input="remember that my cat is called Plimbottle\nwhat is my cat called?\n"
                         "/why\n/new\nwhat about Plimbottle?\n/quit\n")
    assert done.returncode == 0, done.stderr
    log = (data / "logs" / "memory-bot.log").read_text()
    assert "prompt assembled" in log and "DEBUG" in log  # it did log, at DEBUG
    assert "plimbottle" not in log.lower()
