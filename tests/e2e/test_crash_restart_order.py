"""After a crash, start-up does its work in order: the deletion the crash interrupted is purged
first, then the messages left unanswered are answered, then the Telegram updates received but
never handled are handled, and only then new input. A message deleted by that ``/forget all``
is never answered, even though its answer was due.

The first life is a real process on the real stores (the product's ``build_app``) whose model
never answers: Bob's message is stored with its answer due, an update of Bob's is kept as
received, and Alice's ``/forget all`` is killed (SIGKILL) right after the deletion committed,
before its purge. The second life is the real ``memory-bot run`` against the fake Telegram and
the fake model."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.e2e.fakes.llm import FakeLLMServer
from tests.e2e.fakes.telegram import FakeTelegram
from tests.e2e.test_health import free_port
from tests.e2e.test_run_process import Proc, _rows, _until

MARKER = "Vrelgast"
ALICE = FakeTelegram.user(11, "Alice")
BOB = FakeTelegram.user(22, "Bob")

FIRST_LIFE = r'''
import asyncio, json, os, signal, sys
from datetime import datetime, timezone
from bot.app import build_app
from bot.settings import load_settings
from memory.types import ChatKind, IncomingMessage, ThreadKey

MARKER, KEPT_KEY, KEPT = sys.argv[1], sys.argv[2], sys.argv[3]

async def main():
    app = await build_app(load_settings())

    async def say(user, name, text, message_id, *, delivered=True):
        msg = IncomingMessage(ThreadKey("telegram", str(user)), ChatKind.PRIVATE, str(user),
                              name, text, datetime.now(timezone.utc),
                              platform_message_id=str(message_id))
        replies = await app.engine.handle(msg)
        if delivered:
            await app.engine.replied(msg)
        return replies

    await say(11, "Alice", f"remember that my secret hobby is {MARKER} carving", 9001)
    await say(11, "Alice", f"I carve {MARKER} spoons on Sundays", 9002, delivered=False)
    await say(22, "Bob", "what should I pack for the hike on Sunday?", 9003, delivered=False)
    await app.store.deliveries.receive_updates("telegram", [(KEPT_KEY, KEPT)], datetime.now(timezone.utc))
    await say(11, "Alice", "/forget all", 9004)
    index_delete = app.index.delete

    async def die(keys):  # right after the deletion committed, before any purge step
        os.kill(os.getpid(), signal.SIGKILL)
        await index_delete(keys)

    app.index.delete = die
    print("confirming", flush=True)
    await say(11, "Alice", "yes", 9005)

asyncio.run(main())
'''


async def _silent_model() -> asyncio.Server:
    """A model endpoint that takes requests and never answers."""
    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.read()  # until the client gives up
        finally:
            writer.close()
    return await asyncio.start_server(hold, "127.0.0.1", 0)


def _files_holding(folder: Path, word: str) -> list[str]:
    needle = word.lower().encode()
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and p.name != "memory-bot.lock"
                  and needle in p.read_bytes().lower())


async def test_start_up_purges_then_answers_then_takes_kept_updates(tmp_path):
    data = tmp_path / "data"
    telegram = await FakeTelegram(confirm_by_offset=True).start()
    llm = await FakeLLMServer(echo=True).start()
    silent = await _silent_model()
    kept = telegram.private(BOB, "and one more thing for the hike")  # received, never handled
    base = {k: v for k, v in os.environ.items() if not k.startswith(
        ("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "HEALTH", "LLM_", "ALLOWED"))}
    base.update({"MEMORY_BOT_DATA_DIR": str(data), "EMBEDDER": "hashing", "LOG_LEVEL": "INFO",
                 "ALLOWED_USERS": "", "ANTHROPIC_API_KEY": "test-key"})
    try:
        script = tmp_path / "first_life.py"
        script.write_text(FIRST_LIFE)
        port = silent.sockets[0].getsockname()[1]
        first = await asyncio.create_subprocess_exec(
            sys.executable, str(script), MARKER, f"{telegram.bot['id']}:{kept['update_id']}",
            json.dumps(kept), env=base | {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
                                          "REPLY_TIMEOUT_SECONDS": "2"},
            stdout=subprocess.PIPE)
        out, _ = await asyncio.wait_for(first.communicate(), 180)
        assert first.returncode == -signal.SIGKILL and b"confirming" in out, out
        db = data / "memory.db"
        assert _rows(db, "SELECT count(*) FROM purges") == [(1,)]  # the kill cut it off
        assert _rows(db, "SELECT count(*) FROM replies_due") == [(1,)]  # Bob's; Alice's went
        assert _files_holding(data, MARKER)  # still in the index and its old versions

        health = free_port()
        second = await Proc(tmp_path, base | {
            "HEALTH_PORT": str(health), "TELEGRAM_BOT_TOKEN": telegram.token,
            "TELEGRAM_API_BASE_URL": telegram.base_url,
            "ANTHROPIC_BASE_URL": llm.anthropic_url}, "second").start()
        try:
            await second.ready(health)
            await _until(lambda: len(telegram.sent(BOB["id"])) >= 2, "both of Bob's answers")
            telegram.push(telegram.private(BOB, "new input after the restart"))
            await _until(lambda: len(telegram.sent(BOB["id"])) >= 3, "the answer to new input")
            # a reply is streamed: its preview is edited into the final text
            await _until(lambda: not any(t.endswith(" …") for t in telegram.seen(BOB["id"])),
                         "Bob's answers written out")
            bob = telegram.seen(BOB["id"])
            assert "answer to: what should I pack for the hike on Sunday?" in bob[0]
            assert "answer to: and one more thing for the hike" in bob[1]
            assert "answer to: new input after the restart" in bob[2]
            assert telegram.sent(ALICE["id"]) == []  # her due message was deleted, not answered
            second.proc.send_signal(signal.SIGTERM)
            assert await second.wait() == 0, second.stderr
        finally:
            second.kill()
        log = (data / "logs" / "memory-bot.log").read_text()
        purged = log.index("interrupted purges finished count=1")
        answering = log.index("telegram: answering a message left unanswered by a stop")
        handled = log.index("telegram: 1 update(s) received before a stop are handled now")
        assert purged < answering < handled
        assert _files_holding(data, MARKER) == []
        assert _rows(db, "SELECT count(*) FROM purges") == [(0,)]
        assert _rows(db, "SELECT count(*) FROM replies_due") == [(0,)]
        assert _rows(db, "SELECT count(*) FROM seen_updates WHERE payload IS NOT NULL") == [(0,)]
        assert _rows(db, "PRAGMA integrity_check") == [("ok",)]
    finally:
        silent.close()
        await llm.close()
        await telegram.close()
