"""Three messages sent quickly in one Telegram chat while the model is slow, one of them an
explicit "Remember that ...", then SIGKILL while the model is still answering the first, and a
restart: every message is stored exactly once, each is answered before any new input of that
chat, and the explicit fact is in semantic memory.

The real ``memory-bot run`` against the fake Telegram (which keeps updates until a later
``offset`` confirms them) and the real anthropic client against the fake model server, whose
first answer never comes in the first life. Nothing is random and nothing is timed: the kill
comes once the model was asked about the first message and the other two were taken from
Telegram; every wait polls until a condition holds, with a generous guard."""

from __future__ import annotations

import signal

from tests.e2e.fakes.llm import FakeLLMServer, Stall
from tests.e2e.fakes.telegram import FakeTelegram
from tests.e2e.test_crash_suite import Suite
from tests.e2e.test_run_process import WAIT_S, _rows, _until

MIRA = FakeTelegram.user(4242, "Mira")
TEXTS = ("what should I cook tonight?", "Remember that my sister lives in Tartu",
         "and which wine goes with it?")
LATER = "one more question after the restart"


def _first_index(shown: list[str], text: str) -> int:
    return next(i for i, s in enumerate(shown) if f"answer to: {text}" in s)


async def test_quick_messages_killed_while_the_model_answers_the_first(tmp_path):
    telegram = await FakeTelegram(confirm_by_offset=True).start()
    llm = await FakeLLMServer(echo=True).start()
    llm.push(Stall(WAIT_S))  # the first reply's model call: still running at the kill
    suite = Suite(tmp_path, telegram, llm)
    db = suite.data / "memory.db"
    try:
        await suite.start()
        updates = [suite.say(MIRA, text) for text in TEXTS]  # one poll delivers all three
        await telegram.taken(*updates)
        await _until(lambda: llm.requests, "the model asked for the first reply")
        await suite.kill_after(0)
        [asked] = llm.requests
        asked = asked.body.decode()
        assert TEXTS[0] in asked and TEXTS[1] not in asked, asked  # the first one's reply
        # the first message is stored with its answer due, the other two only kept as
        # received (their seen-mark goes in the transaction that stores them)
        assert _rows(db, "SELECT text FROM turns WHERE role = 'user'") == [(TEXTS[0],)]
        assert _rows(db, "SELECT count(*) FROM replies_due") == [(1,)]
        assert _rows(db, "SELECT count(*) FROM seen_updates WHERE payload IS NOT NULL") \
            == [(2,)]

        suite.say(MIRA, LATER)  # new input, waiting at Telegram before the restart
        await suite.start()
        await suite.verify()  # each stored once and answered, the fact kept, integrity_check
        shown = telegram.seen(MIRA["id"])
        order = [_first_index(shown, text) for text in (*TEXTS, LATER)]
        assert order == sorted(order), shown  # in the order sent, the new input last
        assert sum("answer to: " in s for s in shown) == 4, shown  # each answered once
        await _until(suite.quiet, "no update kept and no answer due")  # marked after sending
        assert [t for (t,) in _rows(db, "SELECT text FROM facts WHERE status = 'active'")] \
            == ["The user's sister lives in Tartu"]
        log = (suite.data / "logs" / "memory-bot.log").read_text()
        assert "delivered again; ignored" not in log
        suite.proc.proc.send_signal(signal.SIGTERM)
        assert await suite.proc.wait() == 0, suite.proc.stderr
    finally:
        await suite.close()
