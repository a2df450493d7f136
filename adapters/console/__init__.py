"""The console adapter: chat in the terminal with the full pipeline.

The public front door is :func:`run_console` (the read-answer loop), :func:`console_message`
(what a line becomes) and :class:`ConsoleHistory` with :func:`history_path` (the prompt's
history file in the data folder). Modules: ``_run`` (the loop, and piped input as a plain
transcript), ``_prompt`` (the line-editing prompt on prompt_toolkit, used
when standard input and output are terminals) and ``_history`` (the history file).
"""

from __future__ import annotations

from adapters.console._history import MAX_ENTRIES, ConsoleHistory, history_path
from adapters.console._run import QUIT_COMMANDS, console_message, run_console

__all__ = ["MAX_ENTRIES", "QUIT_COMMANDS", "ConsoleHistory", "console_message", "history_path",
           "run_console"]
