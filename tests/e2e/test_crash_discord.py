"""Discord across a SIGKILL, as Telegram (``test_crash_quick_messages.py``): three messages
sent quickly in a DM while the model is slow, one of them an explicit "Remember that ...", and
the process killed while the model still answers the first. At the next start the first (stored,
its answer due) is answered, the other two (kept as received, not yet stored) are handled, all
before new input of that channel, and messages the gateway delivers again after the restart
are neither stored nor answered twice.

The real ``memory-bot run`` (discord.py) against the fake Discord gateway and REST API, and the
real anthropic client against the fake model server, whose first answer never comes in the
first life. Nothing is random and nothing is timed: waits poll until a condition holds, with a
generous guard. (A replay after a gateway RESUME within one life: ``test_redelivery.py``.)"""

from __future__ import annotations

import asyncio
import signal

from tests.e2e.fakes.discord import FakeDiscord
from tests.e2e.fakes.llm import FakeLLMServer, Hold, Stall
from tests.e2e.test_health import free_port
from tests.e2e.test_run_process import WAIT_S, Proc, _rows, _until

TEXTS = ("what should I cook tonight?", "Remember that my sister lives in Tartu",
         "and which wine goes with it?")
LATER = "one more question after the restart"


def _env(tmp_path, port: int, fake: FakeDiscord, llm: FakeLLMServer) -> dict:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(
        ("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "HEALTH", "LLM_", "ALLOWED"))}
    env.update({
        "MEMORY_BOT_DATA_DIR": str(tmp_path / "data"), "EMBEDDER": "hashing",
        "HEALTH_PORT": str(port), "DISCORD_BOT_TOKEN": "discord-test-token",
        "DISCORD_API_BASE_URL": fake.api_base, "DISCORD_GATEWAY_URL": fake.gateway_url,
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": llm.anthropic_url,
        "SHUTDOWN_GRACE_SECONDS": "10", "LOG_LEVEL": "INFO"})
    return env


def _kept(db) -> int:
    return _rows(db, "SELECT count(*) FROM seen_updates WHERE payload IS NOT NULL")[0][0]


async def test_discord_quick_messages_killed_while_the_model_answers_the_first(tmp_path):
    fake = FakeDiscord()
    fake.add_guild("Lab", ["general"])
    ana = fake.user("ana")
    await fake.start()
    llm = await FakeLLMServer(echo=True).start()
    llm.push(Stall(WAIT_S))  # the first reply's model call: still running at the kill
    port = free_port()
    env = _env(tmp_path, port, fake, llm)
    db = tmp_path / "data" / "memory.db"
    dm = fake.dm_channel(ana)
    first = Proc(tmp_path, env, "first")
    second = Proc(tmp_path, env, "second")
    try:
        await first.start()
        await first.ready(port)
        sent = [await fake.say(ana, text) for text in TEXTS]
        await _until(lambda: llm.requests and _kept(db) == 2,
                     "the model asked for the first reply, the other two kept")
        first.proc.send_signal(signal.SIGKILL)
        await first.proc.wait()
        asked = llm.requests[0].body.decode()
        assert TEXTS[0] in asked and TEXTS[1] not in asked, asked
        assert _rows(db, "SELECT text FROM turns WHERE role = 'user'") == [(TEXTS[0],)]
        assert _rows(db, "SELECT count(*) FROM replies_due") == [(1,)]
        assert fake.sent(dm) == []

        gate = asyncio.Event()
        llm.push(Hold(gate))  # the first answer of the restart waits for the test
        await second.start()
        await second.ready(port)
        await _until(lambda: len(llm.requests) == 2, "the due message being answered")
        for message in sent[:2]:  # while it is, the gateway delivers two of them again
            await fake.dispatch("MESSAGE_CREATE", message)
        await fake.say(ana, LATER)  # and new input of the same channel arrives
        await _until(lambda: _kept(db) == 3, "the new input kept as received")
        gate.set()
        await _until(lambda: any(LATER in m["content"] and "…" not in m["content"]
                                 for m in fake.sent(dm)), "the answer to the new input")
        shown = [m["content"] for m in fake.sent(dm)]
        assert len(shown) == 4, shown  # one answer each, in the order sent, the new input last
        for answer, text in zip(shown, (*TEXTS, LATER)):
            assert answer.endswith(f"answer to: {text}"), shown
        assert shown[1].startswith("Noted: The user's sister lives in Tartu"), shown
        assert _rows(db, "SELECT text FROM turns WHERE role = 'user' ORDER BY id") == [
            (text,) for text in (*TEXTS, LATER)]
        assert _rows(db, "SELECT text FROM facts WHERE status = 'active'") == [
            ("The user's sister lives in Tartu",)]
        await _until(lambda: _rows(db, "SELECT count(*) FROM replies_due") == [(0,)]
                     and _kept(db) == 0, "nothing due, nothing kept")
        second.proc.send_signal(signal.SIGTERM)
        assert await second.wait() == 0, second.stderr
        log = (tmp_path / "data" / "logs" / "memory-bot.log").read_text()
        assert "discord: answered a message left unanswered by a stop" in log
        # the new input arrived during the start-up answers: handled as it came, not twice
        assert "discord: 2 message(s) received before a stop are handled now" in log
        assert _rows(db, "PRAGMA integrity_check") == [("ok",)]
    finally:
        for proc in (first, second):
            proc.kill()
            if proc.proc is not None:
                await proc.proc.wait()
        await llm.close()
        await fake.close()
