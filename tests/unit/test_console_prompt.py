"""The interactive console's prompt, fed keys through prompt_toolkit's own pipe input: the real
console loop (``adapters.console.run_console``) and the real engine on real SQLite, with the
history file the command wires (``bot.console.keep_history_in_step``)."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import sqlite3
import stat

from prompt_toolkit.application import create_app_session, get_app_or_none
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.data_structures import Size
from prompt_toolkit.output import DummyOutput
from prompt_toolkit.output.vt100 import Vt100_Output

from adapters.console import ConsoleHistory, history_path, run_console
from bot.console import keep_history_in_step
from bot.logging_setup import configure_logging
from bot.settings import load_settings

LEFT, UP, HOME = "\x1b[D", "\x1b[A", "\x1b[H"
BACKSPACE, ENTER, CTRL_C, CTRL_D = "\x7f", "\r", "\x03", "\x04"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def paste(text: str) -> str:
    """What a terminal sends for a paste in bracketed-paste mode."""
    return PASTE_START + text + PASTE_END


def long_text(chars: int) -> str:
    """Distinct words (no secret-looking runs), exactly ``chars`` characters."""
    words = " ".join(f"word{n}" for n in range(chars // 4))
    return words[:chars]


def user_turns(harness) -> list[str]:
    with sqlite3.connect(harness.store.path) as conn:
        return [r[0] for r in conn.execute("SELECT text FROM turns WHERE role = 'user' "
                                           "ORDER BY id")]


class Typist:
    """Types one chunk of keys per prompt, once that prompt is running, as a person does
    (keys sent all at once would be typeahead, handled before the prompt has loaded its
    history)."""

    def __init__(self, keyboard, chunks: list[str]) -> None:
        self.keyboard = keyboard
        self.chunks = list(chunks)
        self.typing: list[asyncio.Task] = []

    def next_prompt(self) -> None:
        if self.chunks:
            self.typing.append(asyncio.ensure_future(self._type(self.chunks.pop(0))))

    async def _type(self, chunk) -> None:
        for _ in range(6000):  # at most a minute
            app = get_app_or_none()
            if app is not None and app.is_running and not app.is_done:
                break
            await asyncio.sleep(0.01)
        if callable(chunk):  # something that happens while the prompt waits, then keys
            chunk = await chunk()
        self.keyboard.send_text(chunk)


async def type_into_console(harness, history, chunks: list, *, user: str = "alice",
                            terminal=None) -> list[str]:
    """Type ``chunks`` into the console prompt, one per prompt (the last should end the
    console: Ctrl-D or Ctrl-C); returns the lines written to standard output. ``terminal``:
    the prompt's output (default: none)."""
    out = io.StringIO()
    keep_in_step = keep_history_in_step(harness.engine, user, history)
    with create_pipe_input() as keyboard, create_app_session(input=keyboard,
                                                             output=terminal or DummyOutput()):
        typist = Typist(keyboard, chunks)

        async def before_prompt() -> None:
            await keep_in_step()
            typist.next_prompt()

        await run_console(harness.engine.handle, user=user, banner="banner", stdout=out,
                          terminal=True, history=history, before_prompt=before_prompt)
        await asyncio.gather(*typist.typing)
    return out.getvalue().splitlines()


async def test_edited_recalled_and_pasted_lines_are_stored_whole(harness, tmp_path):
    history = ConsoleHistory(history_path(tmp_path / "data", "alice"))
    pasted = long_text(30_000)
    out = await type_into_console(harness, history, [
        "I like gren tea" + LEFT * 5 + "e" + ENTER,  # an edit in the middle of the line
        UP + BACKSPACE * 9 + "coffee" + ENTER,  # the previous line, edited at its end
        UP + UP + HOME + "Now " + ENTER,  # two lines back, edited at its start
        paste(pasted) + ENTER,
        paste("two lines\npasted at once") + ENTER,
        CTRL_D])
    sent = ["I like green tea", "I like coffee", "Now I like green tea", pasted,
            "two lines\npasted at once"]
    assert user_turns(harness) == sent
    assert len(user_turns(harness)[3]) == 30_000
    assert out[0] == "banner" and out[-1] == "Goodbye."
    assert not any(line.startswith("> ") for line in out)  # the prompt shows input: no echo
    reloaded = ConsoleHistory(history.path)
    assert list(reloaded.load_history_strings()) == sent[::-1]  # newest first, pastes whole
    assert stat.S_IMODE(os.stat(history.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(history.path.parent).st_mode) == 0o700


async def test_history_of_an_earlier_run_is_recalled_with_up(harness, tmp_path):
    path = history_path(tmp_path / "data", "alice")
    await type_into_console(harness, ConsoleHistory(path), ["where is my umbrella" + ENTER,
                                                            CTRL_D])
    await type_into_console(harness, ConsoleHistory(path), [UP + "?" + ENTER, CTRL_D])
    assert user_turns(harness) == ["where is my umbrella", "where is my umbrella?"]


async def test_ctrl_c_ends_the_console_like_quit(harness, tmp_path):
    history = ConsoleHistory(history_path(tmp_path / "data", "alice"))
    out = await type_into_console(harness, history, ["hello" + ENTER, "half a line" + CTRL_C])
    assert user_turns(harness) == ["hello"]
    assert out[-1] == "Goodbye."


async def test_secrets_never_reach_the_history(harness, tmp_path):
    history = ConsoleHistory(history_path(tmp_path / "data", "alice"))
    await type_into_console(harness, history, ["my password is Tr0ub4dor&3" + ENTER,
                                               UP + ENTER, CTRL_D])
    text = history.path.read_text()
    assert "Tr0ub4dor" not in text and "[redacted password]" in text
    assert all("Tr0ub4dor" not in t for t in user_turns(harness))  # Up brought the redacted line


async def test_forget_all_deletes_the_history_and_memory_off_keeps_lines_out(harness, tmp_path):
    history = ConsoleHistory(history_path(tmp_path / "data", "alice"))
    other = ConsoleHistory(history_path(tmp_path / "data", "bob"))
    await type_into_console(harness, other, ["bob was here" + ENTER, CTRL_D], user="bob")
    await type_into_console(harness, history, [
        "remember I live in Graz" + ENTER, "/memory_off" + ENTER,
        "a line while memory is off" + ENTER, "/memory_on" + ENTER, "back on" + ENTER, CTRL_D])
    stored = list(ConsoleHistory(history.path).load_history_strings())
    # the line typed while memory was off, and /memory_on itself, stayed in that run only
    assert stored == ["back on", "/memory_off", "remember I live in Graz"]
    out = await type_into_console(harness, history, ["/forget all" + ENTER, "yes" + ENTER,
                                                     UP + ENTER, CTRL_D])
    assert any(line.startswith("Deleted everything") for line in out)
    assert out[-2].startswith("(empty message")  # Up found nothing to recall after the forget
    assert not history.path.exists() and history.get_strings() == []
    assert list(ConsoleHistory(other.path).load_history_strings()) == ["bob was here"]


async def test_forget_n_takes_the_lines_of_the_messages_it_deletes_out_of_the_history(
        harness, tmp_path):
    history = ConsoleHistory(history_path(tmp_path / "data", "alice"))
    other = ConsoleHistory(history_path(tmp_path / "data", "bob"))
    await type_into_console(harness, other, ["remember I live in Graz" + ENTER, CTRL_D],
                            user="bob")
    await type_into_console(harness, history, [
        "remember I live in Graz" + ENTER, "what a sunny morning" + ENTER, CTRL_D])
    before = user_turns(harness)
    out = await type_into_console(harness, history, ["/forget 1" + ENTER, UP + ENTER, CTRL_D])
    assert any(line.startswith("Forgotten:") for line in out)
    after = user_turns(harness)
    gone = {t for t in before if before.count(t) > after.count(t)}
    # alice's line went; bob's own line of the same words stays stored
    assert "remember I live in Graz" in gone and "remember I live in Graz" in after
    stored = list(ConsoleHistory(history.path).load_history_strings())
    # the deleted message left the file and the running prompt (Up found "/forget 1", sent
    # again: the fact is gone), every other line stayed (a repeated line is kept once)
    assert not gone & set(stored) and not gone & set(history.get_strings())
    assert stored == ["/forget 1", "what a sunny morning"]
    assert out[-2].startswith("There is no fact number 1")
    assert list(ConsoleHistory(other.path).load_history_strings()) == ["remember I live in Graz"]


async def test_a_warning_logged_while_the_prompt_waits_is_printed_above_it(harness, tmp_path):
    settings = load_settings({"MEMORY_BOT_DATA_DIR": str(tmp_path / "data"),
                              "EMBEDDER": "hashing"}, env_file=None)
    configure_logging(settings, console=True)
    screen = io.StringIO()
    terminal = Vt100_Output(screen, lambda: Size(rows=24, columns=80), term="xterm")

    async def warn_while_waiting() -> str:
        logging.getLogger("bot.scheduler").warning("an idle job ran late")
        for _ in range(500):  # the prompt's stdout proxy flushes from its own thread
            if "an idle job ran late" in screen.getvalue():
                break
            await asyncio.sleep(0.01)
        return CTRL_D

    try:
        await type_into_console(harness, ConsoleHistory(tmp_path / "h"), [warn_while_waiting],
                                terminal=terminal)
    finally:
        root = logging.getLogger()
        for handler in [h for h in root.handlers if getattr(h, "_memory_bot_handler", False)]:
            root.removeHandler(handler)
            handler.close()
    shown = screen.getvalue()
    warning = shown.index("memory-bot: WARNING: an idle job ran late")
    assert shown.index("you>") < warning  # the prompt was up when the warning came
    assert "you>" in shown[warning:]  # and was drawn again below it
