"""The console's read-answer loop, for a terminal and for piped input.

In a terminal (standard input and output both terminals) lines come from a prompt_toolkit
prompt (``_prompt.PromptLines``): line editing, history, bracketed paste of any length, Ctrl-C
and Ctrl-D as ``/quit``. Otherwise (piped input, a plain transcript) lines are read by a
daemon thread and handed to the event loop through a queue; one banner line, then every input
echoed as ``> <line>`` before its answer, and nothing else on standard output. Either way the
event loop keeps running while the console waits, so scheduled work (idle timeouts) runs.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import TextIO

from i18n import DEFAULT_LANGUAGE, say
from memory.text import printable
from memory.types import ChatKind, IncomingMessage, ThreadKey

log = logging.getLogger(__name__)

Handler = Callable[[IncomingMessage], Awaitable[list[str]]]
QUIT_COMMANDS = frozenset({"/quit", "/exit"})


def console_message(user: str, text: str, language: str | None = None) -> IncomingMessage:
    """The message a console line becomes: a private chat ``console:<user>``; ``language`` is
    the terminal's locale (``LANG``), the platform's hint of the user's language."""
    return IncomingMessage(
        thread=ThreadKey("console", user), chat_kind=ChatKind.PRIVATE, platform_user_id=user,
        display_name=user, text=text, sent_at=datetime.now(timezone.utc), language=language,
    )


class StreamLines:
    """Lines of a stream (a pipe, a file, or a terminal without line editing), read by a
    daemon thread; ``None`` at end of input. With ``prompt`` (standard input is a terminal but
    standard output is not) a ``you> `` prompt is written before each line."""

    def __init__(self, stream: TextIO, *, prompt: TextIO | None = None) -> None:
        self.stream = stream
        self.prompt = prompt
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()

    async def __aenter__(self) -> StreamLines:
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._reader, args=(loop,), daemon=True,
                         name="console-input").start()
        return self

    async def __aexit__(self, *exc) -> None:
        return None

    def _lines(self):
        """Input lines as text: bytes that are not valid in the stream's encoding become
        U+FFFD (read from the binary buffer when there is one, so no decoding error can end
        input)."""
        raw = getattr(self.stream, "buffer", None)
        if raw is None:
            yield from iter(self.stream.readline, "")
            return
        encoding = getattr(self.stream, "encoding", None) or "utf-8"
        for line in iter(raw.readline, b""):
            yield line.decode(encoding, "replace")

    def _reader(self, loop: asyncio.AbstractEventLoop) -> None:
        for line in self._lines():
            loop.call_soon_threadsafe(self.queue.put_nowait, line.rstrip("\r\n"))
        loop.call_soon_threadsafe(self.queue.put_nowait, None)

    async def read(self) -> str | None:
        if self.prompt is not None:
            self.prompt.write("you> ")
            self.prompt.flush()
        return await self.queue.get()


async def _unless_stopped(work: Awaitable, stop: asyncio.Event):
    """Await ``work`` unless ``stop`` is set first; then ``work`` is cancelled and None is
    returned (a finished result wins over a stop that came at the same moment)."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # cancelled from outside: take both down with us
        task.cancel()
        raise
    finally:
        stopped.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.wait({task})  # its cancellation finishes (no result, nothing raised here)
    return None


async def _answer(handler: Handler, user: str, line: str, hint: str | None, lang: str
                  ) -> list[str]:
    try:
        replies = await handler(console_message(user, line, hint))
    except Exception as exc:  # the console must survive any single failure
        log.exception("console turn failed")
        replies = [say(lang, "console.failed", error=type(exc).__name__)]
    return replies or [say(lang, "console.no_reply")]


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


async def run_console(
    handler: Handler,
    *,
    user: str,
    banner: str,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    terminal: bool | None = None,
    history=None,
    stop: asyncio.Event | None = None,
    before_prompt: Callable[[], Awaitable[None]] | None = None,
    language: Callable[[], str] | None = None,
    language_hint: str | None = None,
) -> None:
    """Read lines until ``/quit``, end of input, Ctrl-C / Ctrl-D or ``stop``, answering each
    through ``handler``; "Goodbye." is the last line written.

    Args:
        handler: the conversation engine's ``handle``.
        user: console user name (``--user``).
        banner: the one banner line (program, user, model; no memory content).
        stdin: input stream (default: ``sys.stdin``).
        stdout: output stream (default: ``sys.stdout``).
        terminal: use the line-editing prompt; default: when ``stdin`` and ``stdout`` are both
            terminals. The prompt reads prompt_toolkit's current input and output (tests
            give it a pipe input with ``create_app_session``).
        history: the prompt's history (``ConsoleHistory``); default: this process only.
        stop: set it to end the console (the bot sets it on SIGINT): a line being answered is
            cancelled (the user's turn may be stored without its reply, as when the model
            fails).
        before_prompt: awaited before the first line and after every answer (the bot keeps
            the history's ``persist`` in step with the user's memory switch there).
        language: the language of the console's own lines ("Goodbye."), asked each time
            (``/language`` may change it); default English.
        language_hint: the terminal's language tag (``LANG``), given with every message.
    """
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stop = stop or asyncio.Event()
    language = language or (lambda: DEFAULT_LANGUAGE)
    if terminal is None:
        terminal = _is_terminal(stdin) and _is_terminal(stdout)
    if terminal:
        from adapters.console._prompt import PromptLines

        source = PromptLines(history=history)
    else:
        source = StreamLines(stdin, prompt=stdout if _is_terminal(stdin) else None)
    echo = not terminal and not _is_terminal(stdin)

    def write(text: str) -> None:
        stdout.write(printable(text) + "\n")  # stored text never acts on the terminal
        stdout.flush()

    async with source:
        write(banner)
        try:
            while not stop.is_set():
                if before_prompt is not None:
                    await before_prompt()
                line = await _unless_stopped(source.read(), stop)
                if line is None:
                    break
                if echo:
                    write(f"> {line}")
                if line.strip().lower() in QUIT_COMMANDS:
                    break
                replies = await _unless_stopped(
                    _answer(handler, user, line, language_hint, language()), stop)
                if replies is None:
                    break
                for reply in replies:
                    write(reply)
        except asyncio.CancelledError:  # cancelled from outside: the caller finishes the work
            write("\n" + say(language(), "console.goodbye"))
            raise
        write(say(language(), "console.goodbye"))
