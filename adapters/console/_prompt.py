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
"""

from __future__ import annotations

from prompt_toolkit import PromptSession
from prompt_toolkit.history import History, InMemoryHistory
from prompt_toolkit.patch_stdout import patch_stdout

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

    async def __aenter__(self) -> PromptLines:
        self._patch.__enter__()
        return self

    async def __aexit__(self, *exc) -> None:
        self._patch.__exit__(*exc)

    async def read(self) -> str | None:
        try:
            return await self.session.prompt_async(PROMPT, handle_sigint=False,
                                                   set_exception_handler=False)
        except (KeyboardInterrupt, EOFError):
            return None
