"""``memory-bot inspect USER`` on real SQLite + LanceDB: accounts, chats, facts with
their history, episodes, recent messages and the last recall, so one id can be followed from
the message that wrote a fact to the prompt that used it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from bot.datadir import lock_data_dir
from bot.inspection import inspect_lines
from tests.conftest import make_harness
from tests.integration.test_privacy import _close, _seed_alice

BIN = Path(sys.executable).with_name("memory-bot")


async def test_inspect_follows_a_fact_from_its_message_to_the_prompt(tmp_path, clock):
    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await _seed_alice(h)
        await h.say("remember bob Zorptangle", user="bob")
        await h.say("do I still live in Linz?", user="alice", message_id="m77")
        lines = await inspect_lines(h.store, "console:alice")
        user = await h.store.identities.find_user("console", "alice")
        assert await inspect_lines(h.store, str(user.id)) == lines  # internal id works too
    finally:
        await _close(h)
    text = "\n".join(lines)
    assert "Zorptangle" not in text  # one user only
    assert lines[0].startswith(f"user {user.id} (Alice); accounts: console:alice; memory on")
    assert "2 active, 2 superseded" in lines[1]
    for section in ("chats:", "facts (newest first):", "  history:", "episodes:",
                    "recent messages (last 12 of 12):",
                    "last recalls (what the model saw for the last reply in each chat):"):
        assert section in lines, section
    # write: the message that stated it
    linz_turn = re.search(r"turn (\d+) session \d+ thread \d+ \S+ \S+ user Alice: "
                          r"remember I live in Linz now", text)
    assert linz_turn, text
    turn_id = linz_turn.group(1)
    # store: the fact, its source turn, and the fact it superseded
    fact = re.search(r"fact (\d+) \[active, profile, residence\] \S+: The user lives in Linz\n"
                     r"\s+from turns (\S+) in thread", text)
    assert fact and fact.group(2) == turn_id, text
    fact_id = fact.group(1)
    history = next(line for line in lines if line.strip().startswith("residence:"))
    assert re.search(rf"fact \d+ \(superseded, \S+ to \S+\) -> fact {fact_id} \(active", history)
    # episodes with session, dates and the turns they summarise
    assert re.search(r"episode \d+ session \d+ thread \d+ \(console:alice private\) \[closed, by rules\] "
                     r"\S+ \S+ to \S+ \S+, turns \d+-\d+ \(\d+\): ", text)
    # recall and assembly: the key, its score and tokens, the same source turn
    recall = next(line for line in lines if line.strip().startswith(f"fact:{fact_id} "))
    assert re.search(rf"score \d\.\d{{3}}, \d+ tokens, turns {turn_id}(, profile)?: ", recall), \
        recall  # the profile holds the fact (it is in every prompt): marked so
    assert re.search(r"model offline: \d+ item\(s\), \d+ of 1000 memory tokens", text)
    assert "msg m77: do I still live in Linz?" in text


async def test_cli_inspect_reads_while_the_folder_is_locked_by_a_running_bot(tmp_path, clock):
    data = tmp_path / "data"
    h = await make_harness(data, clock, lance=True)
    try:
        await _seed_alice(h)
    finally:
        await _close(h)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "OPENAI"))}
    env["MEMORY_BOT_DATA_DIR"] = str(data)
    lock = lock_data_dir(data)  # as `memory-bot run` holds it
    try:
        out = subprocess.run([str(BIN), "inspect", "console:alice"], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    finally:
        lock.release()
    assert out.returncode == 0, out.stderr
    assert "The user lives in Linz" in out.stdout and "residence: fact" in out.stdout
    missing = subprocess.run([str(BIN), "inspect", "telegram:42"], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "no user telegram:42" in missing.stderr


def test_cli_inspect_of_a_missing_folder_creates_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "OPENAI"))}
    env["MEMORY_BOT_DATA_DIR"] = str(tmp_path / "nothing-here")
    out = subprocess.run([str(BIN), "inspect", "console:alice"], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "no database" in out.stderr
    assert not (tmp_path / "nothing-here").exists()  # it made logs/ before
