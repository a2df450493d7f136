"""Lines from a prompt_toolkit prompt: the console as a person types in it.

prompt_toolkit puts the terminal in raw mode while it reads, so editing keys (Left, Right,
Home, End, Backspace, Delete, Up/Down through the history, Ctrl-R to search it) act instead of
arriving as escape codes, no line length limit of the terminal's canonical mode applies, and a
paste arrives whole as one bracketed-paste event (newlines included: a pasted text is one
message). Ctrl-C and Ctrl-D (on an empty line) end the console as ``/quit`` does.

``patch_stdout`` is active while the console runs: text written to ``sys.stdout`` or
``sys.stderr`` meanwhile (a warning logged by a scheduled job while the prompt waits) is
printed above the prompt line instead of through it. The prompt runs on the bot's own event
loop (``prompt_async``), so scheduled work keeps running while it waits; it leaves SIGINT and
the loop's exception handler to the bot.

Keys typed while a line is being answered (type-ahead) reach the next prompt as typed: between
prompts the terminal stays out of its canonical line mode, without echo. In that mode the
kernel's own line editing would act on them first: Backspace erased the bytes of an Up typed
just before it and Enter ended the line there, so "Up, Backspace x9, coffee, Enter" sent
"coffee" instead of the edited earlier line. Ctrl-C still interrupts an answer (signals stay
on); the terminal's own mode comes back when the console ends.
"""

from __future__ import annotations

import os

from prompt_toolkit import PromptSession
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.patch_stdout import patch_stdout

try:
    import termios
except ImportError:  # Windows: no terminal modes to keep
    termios = None  # type: ignore[assignment]

PROMPT = "you> "


class PromptLines:
    """Read lines with a prompt_toolkit ``PromptSession`` (an async context manager; ``read``
    returns None for Ctrl-C and Ctrl-D).

    Args:
        history: the prompt's history; default: this process only.
    """

    def __init__(self, history: History | None = None) -> None:
        self.session: PromptSession[str] = PromptSession(
            history=history or InMemoryHistory(), enable_open_in_editor=False,
            complete_while_typing=False)
        self._patch = patch_stdout(raw=True)
        self._terminal: tuple[int, list] | None = None  # (fd, mode to restore)

    async def __aenter__(self) -> PromptLines:
        self._keep_typeahead()
        self._patch.__enter__()
        return self

    async def __aexit__(self, *exc) -> None:
        try:
            self._patch.__exit__(*exc)
        finally:
            if self._terminal is not None:
                fd, mode = self._terminal
                self._terminal = None
                termios.tcsetattr(fd, termios.TCSANOW, mode)

    def _keep_typeahead(self) -> None:
        """Take the prompt's terminal out of canonical mode and echo (signals stay on), so
        keys typed between prompts wait unedited for prompt_toolkit, which restores this mode
        after each prompt. Nothing happens when the input is not a terminal."""
        try:
            fd = self.session.input.fileno()
        except (AttributeError, NotImplementedError, OSError, ValueError):
            return
        if termios is None or not os.isatty(fd):
            return
        mode = termios.tcgetattr(fd)
        self._terminal = (fd, mode)
        typeahead = list(mode)
        typeahead[0] &= ~termios.ICRNL  # Enter stays \r, as prompt_toolkit reads it
        typeahead[3] &= ~(termios.ICANON | termios.ECHO | termios.IEXTEN)
        typeahead[6] = list(mode[6])
        typeahead[6][termios.VMIN], typeahead[6][termios.VTIME] = 1, 0
        termios.tcsetattr(fd, termios.TCSANOW, typeahead)  # TCSANOW: typed keys are kept

    async def read(self) -> str | None:
        try:
            return await self.session.prompt_async(PROMPT, handle_sigint=False,
                                                   set_exception_handler=False)
        except (KeyboardInterrupt, EOFError):
            return None
