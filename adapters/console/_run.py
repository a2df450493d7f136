"""The console adapter: chat in the terminal with the full pipeline.

Transcript contract (CONTRACTS.md "Console transcript"): when standard input is not a terminal,
one banner line, then every input echoed as ``> <line>`` before its answer; nothing else goes to
standard output. Input is read by a daemon thread and handed to the event loop through a queue,
so scheduled work keeps running while the console waits (and works for pipes, files and
terminals alike). End of input is ``/quit``.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import TextIO

from memory.types import ChatKind, IncomingMessage, ThreadKey

Handler = Callable[[IncomingMessage], Awaitable[list[str]]]


def _reader(stream: TextIO, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue) -> None:
    for line in iter(stream.readline, ""):
        loop.call_soon_threadsafe(queue.put_nowait, line.rstrip("\r\n"))
    loop.call_soon_threadsafe(queue.put_nowait, None)


def console_message(user: str, text: str) -> IncomingMessage:
    """The message a console line becomes: a private chat ``console:<user>``."""
    return IncomingMessage(
        thread=ThreadKey("console", user), chat_kind=ChatKind.PRIVATE, platform_user_id=user,
        display_name=user, text=text, sent_at=datetime.now(timezone.utc),
    )


async def run_console(
    handler: Handler,
    *,
    user: str,
    banner: str,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
) -> None:
    """Read lines until ``/quit`` or end of input, answering each through ``handler``.

    Args:
        handler: the conversation engine's ``handle``.
        user: console user name (``--user``).
        banner: the one banner line (program, user, model; no memory content).
        stdin: input stream; when it is a terminal, a ``you> `` prompt is shown and inputs are
            not echoed.
        stdout: output stream.
    """
    interactive = stdin.isatty()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    threading.Thread(target=_reader, args=(stdin, loop, queue), daemon=True,
                     name="console-input").start()

    def write(text: str) -> None:
        stdout.write(text + "\n")
        stdout.flush()

    write(banner)
    while True:
        if interactive:
            stdout.write("you> ")
            stdout.flush()
        try:
            line = await queue.get()
        except asyncio.CancelledError:  # Ctrl-C: the caller still finishes pending work
            write("\nGoodbye.")
            raise
        if line is None:
            write("Goodbye.")
            return
        if not interactive:
            write(f"> {line}")
        if line.strip().lower() in {"/quit", "/exit"}:
            write("Goodbye.")
            return
        try:
            replies = await handler(console_message(user, line))
        except Exception as exc:  # the console must survive any single failure
            import logging

            logging.getLogger(__name__).exception("console turn failed")
            replies = [f"Sorry, something went wrong handling that ({type(exc).__name__}); "
                       "nothing you said was lost."]
        for reply in replies or ["(no reply)"]:
            write(reply)
