"""Nothing lost, nothing left behind, under SIGKILL at random moments: the real
``memory-bot run`` against the fake Telegram Bot API (which keeps updates until a later
``offset`` confirms them, as Telegram does) and the fake model server (slow at times), killed
while messages are in flight, during ``/forget all``, and during ``memory-bot backup``; each
kill is followed by a restart on the same data folder.

After every restart: every message the fake delivered is stored exactly once and answered (or
the user is told its answer was lost); an explicit "remember" among them is a fact; no text of
a forgotten user is found in any file of the data folder; the database passes
``PRAGMA integrity_check`` (and so does a backup that completed).

Trials: ``MEMORY_BOT_CRASH_TRIALS`` (default 3, one of each scenario: 20-24 s on 2 cores at load
2, 2026-12-01; at least 30 for a release); ``MEMORY_BOT_CRASH_SEED`` repeats a run. Nothing is
timed: waits poll until a condition holds, with a generous guard."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
from pathlib import Path

from i18n import say
from tests.e2e.fakes.discord import FakeDiscord  # noqa: F401 - same scaffolding as run tests
from tests.e2e.fakes.llm import FakeLLMServer, Stall
from tests.e2e.fakes.telegram import FakeTelegram
from tests.e2e.test_health import free_port
from tests.e2e.test_run_process import BIN, Proc, _rows, _until

TRIALS = int(os.environ.get("MEMORY_BOT_CRASH_TRIALS", "3"))
SCENARIOS = ("in flight", "forget all", "backup")
CITIES = ("Graz", "Linz", "Porto", "Lyon", "Turin", "Cork", "Bergen", "Ghent", "Split", "Tartu",
          "Riga", "Malmo", "Aarhus", "Basel", "Brno", "Krakow", "Bilbao", "Lille", "Leeds",
          "Bonn", "Pisa", "Nantes", "Seville", "Gdansk", "Plovdiv", "Kaunas", "Salzburg", "Delft",
          "Utrecht", "Lucca", "Parma", "Bremen", "Dijon", "Galway", "Oulu", "Umea", "Girona")
_LOST_HEAD = say("en", "engine.answer_lost", text="").split("\"")[0]


def _env(data: Path, port: int, telegram: FakeTelegram, llm: FakeLLMServer) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(
        ("ANTHROPIC", "OPENAI", "TELEGRAM", "DISCORD", "HEALTH", "LLM_", "ALLOWED"))}
    env.update({
        "MEMORY_BOT_DATA_DIR": str(data), "EMBEDDER": "hashing", "HEALTH_PORT": str(port),
        "TELEGRAM_BOT_TOKEN": telegram.token, "TELEGRAM_API_BASE_URL": telegram.base_url,
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": llm.anthropic_url,
        "ALLOWED_USERS": "", "SHUTDOWN_GRACE_SECONDS": "10", "LOG_LEVEL": "INFO"})
    return env


class Suite:
    """The fakes, the data folder and the bookkeeping of what the users sent."""

    def __init__(self, tmp_path: Path, telegram: FakeTelegram, llm: FakeLLMServer) -> None:
        self.tmp, self.telegram, self.llm = tmp_path, telegram, llm
        self.data = tmp_path / "data"
        self.port = free_port()
        self.env = _env(self.data, self.port, telegram, llm)
        self.messages: list[tuple[int, dict]] = []  # (chat id, update) of ordinary messages
        self.facts: list[str] = []  # words an explicit "remember" asked to keep
        self.markers: list[str] = []  # words of users who forgot everything
        self.starts = 0
        self.proc: Proc | None = None
        self.backups_checked = 0

    async def start(self) -> Proc:
        self.starts += 1
        self.proc = await Proc(self.tmp, self.env, f"run{self.starts}").start()
        await self.proc.ready(self.port)
        return self.proc

    async def close(self) -> None:
        """Kill the bot if it still runs (waiting for it to go), then stop the fakes."""
        if self.proc is not None:
            self.proc.kill()
            if self.proc.proc is not None:
                await self.proc.proc.wait()
        await self.llm.close()
        await self.telegram.close()

    def say(self, user: dict, text: str) -> dict:
        update = self.telegram.private(user, text)
        if not text.startswith("/"):
            self.messages.append((user["id"], update))
        self.telegram.push(update)
        return update

    async def kill_after(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        assert self.proc is not None and self.proc.proc is not None
        self.proc.proc.send_signal(signal.SIGKILL)
        await self.proc.proc.wait()

    # ---------------------------------------------------------------- checks after a restart

    def shown(self, chat: int) -> list[str]:
        """What the user of ``chat`` saw: messages sent, and the texts edited into them (a
        streamed reply's preview becomes the reply's first part by an edit)."""
        edits = [self.telegram._visible(c.params) for c in self.telegram.of("editMessageText")
                 if c.status == 200 and int(c.params["chat_id"]) == chat]
        return self.telegram.sent(chat) + edits

    def answered(self, chat: int, text: str) -> bool:
        return any(text in shown and ("answer to:" in shown or shown.startswith(_LOST_HEAD))
                   for shown in self.shown(chat))

    async def verify(self) -> None:
        db = self.data / "memory.db"
        for chat, update in self.messages:
            text = update["message"]["text"]
            await _until(lambda chat=chat, text=text: self.answered(chat, text),
                         f"an answer to {text!r} in chat {chat}")
        for chat, update in self.messages:
            stored = _rows(db, "SELECT count(*) FROM turns t JOIN threads th ON th.id = "
                               "t.thread_id WHERE th.platform = 'telegram' AND th.chat_id = ? "
                               "AND t.role = 'user' AND t.platform_message_id = ?",
                           (str(chat), str(update["message"]["message_id"])))
            forgotten = any(m in update["message"]["text"] for m in self.markers)
            assert stored == [(0 if forgotten else 1,)], (update["message"]["text"], stored)
        for word in self.facts:
            assert _rows(db, "SELECT count(*) FROM facts WHERE text LIKE ?",
                         (f"%{word}%",))[0][0] >= 1, f"the explicit fact about {word} was lost"
        assert _rows(db, "PRAGMA integrity_check") == [("ok",)]
        for marker in self.markers:
            for path in self.data.rglob("*"):
                if path.is_file() and path.name != "memory-bot.lock":
                    assert marker.encode() not in path.read_bytes(), (marker, path)

    # ---------------------------------------------------------------- scenarios

    async def in_flight(self, trial: int, rng: random.Random) -> None:
        users = [FakeTelegram.user(10_000 + trial * 10 + k, f"U{trial}{k}") for k in range(2)]
        city = CITIES[trial % len(CITIES)]
        self.llm.push(*[Stall(rng.uniform(0.1, 1.5)) for _ in range(rng.randint(1, 4))])
        self.facts.append(city)
        texts = [f"first thought of trial {trial}", f"remember that I live in {city}",
                 f"what is the weather like, trial {trial}", f"one more question {trial}"]
        for n, text in enumerate(texts):
            self.say(users[n % 2], text)
            await asyncio.sleep(rng.uniform(0, 0.3))
        await self.kill_after(rng.uniform(0, 2.5))

    async def forget_all(self, trial: int, rng: random.Random) -> None:
        user = FakeTelegram.user(20_000 + trial, f"F{trial}")
        marker = "Zqx" + "".join(rng.choice("bcdfghjklmnpqrstvw") for _ in range(10))
        self.say(user, f"remember that my favourite band is {marker}")
        await _until(lambda: any(t.startswith("Noted") for t in self.shown(user["id"])),
                     "the band noted")
        self.say(user, "/forget all")
        await _until(lambda: any(m.get("reply_markup") for m in
                                 self.telegram.sent_messages(user["id"])), "the question")
        question = [m for m in self.telegram.sent_messages(user["id"]) if m.get("reply_markup")][-1]
        message = self.telegram._message(user["id"], question["visible"], message_id=9_000 + trial)
        self.markers.append(marker)
        self.telegram.push(self.telegram.press(user, message, f"cf:y:{user['id']}"))
        await self.kill_after(rng.uniform(0, 1.0))
        self.pending_forget = (user, marker)

    def quiet(self) -> bool:
        """Every update received before the kill is handled and no answer is still due."""
        db = self.data / "memory.db"
        return _rows(db, "SELECT count(*) FROM seen_updates WHERE payload IS NOT NULL") == [(0,)] \
            and _rows(db, "SELECT count(*) FROM replies_due") == [(0,)]

    async def finish_forget(self) -> None:
        """A confirmation the kill cut off before it was acted on is lost with the process
        (it lived in memory, and the user saw no answer): once the restarted bot has handled
        everything it had received, the user asks again if nothing was deleted."""
        user, _ = self.pending_forget
        chat = user["id"]
        done = lambda: any(t.startswith("Deleted everything") for t in  # noqa: E731
                           self.shown(chat))
        await _until(self.quiet, "the kept updates handled")
        if done():
            return
        before = len(self.telegram.sent_messages(chat))
        self.telegram.push(self.telegram.private(user, "/forget all"))
        await _until(lambda: len(self.telegram.sent_messages(chat)) > before, "an answer")
        asked = [m for m in self.telegram.sent_messages(chat)[before:] if m.get("reply_markup")]
        if asked:
            message = self.telegram._message(chat, asked[-1]["visible"], message_id=8_000)
            self.telegram.push(self.telegram.press(user, message, f"cf:y:{chat}"))
            await _until(done, "deleted after asking again")

    async def backup(self, trial: int, rng: random.Random) -> None:
        user = FakeTelegram.user(30_000 + trial, f"B{trial}")
        self.say(user, f"a message while backing up {trial}")
        dest = self.tmp / f"backup{trial}"
        proc = await asyncio.create_subprocess_exec(
            str(BIN), "backup", str(dest), env=self.env, cwd=self.tmp,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        self.say(user, f"another message during the backup {trial}")
        await self.kill_after(rng.uniform(0, 2.0))
        _, err = await asyncio.wait_for(proc.communicate(), 120)
        if proc.returncode == 0:
            assert _rows(dest / "memory.db", "PRAGMA integrity_check") == [("ok",)]
            self.backups_checked += 1
        else:
            assert b"Traceback" not in err, err


async def test_sigkill_at_random_moments_loses_nothing_and_leaves_nothing(tmp_path):
    seed = int(os.environ.get("MEMORY_BOT_CRASH_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    print(f"crash suite seed={seed} (MEMORY_BOT_CRASH_SEED repeats this run)")  # shown on failure
    telegram = await FakeTelegram(confirm_by_offset=True).start()
    llm = await FakeLLMServer(echo=True).start()
    suite = Suite(tmp_path, telegram, llm)
    counts = {name: 0 for name in SCENARIOS}
    try:
        await suite.start()
        for trial in range(TRIALS):
            scenario = SCENARIOS[trial % len(SCENARIOS)]
            counts[scenario] += 1
            if scenario == "in flight":
                await suite.in_flight(trial, rng)
            elif scenario == "forget all":
                await suite.forget_all(trial, rng)
            else:
                await suite.backup(trial, rng)
            await suite.start()
            if scenario == "forget all":
                await suite.finish_forget()
            await suite.verify()
        assert suite.proc is not None and suite.proc.proc is not None
        suite.proc.proc.send_signal(signal.SIGTERM)
        assert await suite.proc.wait() == 0, suite.proc.stderr
        print(f"\ncrash suite seed={seed} trials={TRIALS} {counts} messages="
              f"{len(suite.messages)} facts={len(suite.facts)} forgotten={len(suite.markers)} "
              f"completed backups checked={suite.backups_checked}: all passed")
    finally:
        await suite.close()
