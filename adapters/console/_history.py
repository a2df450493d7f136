"""The interactive console's input history: a file in the data folder, owner-only.

What is kept is what memory keeps: every line is redacted (``memory.redact``) before it enters
the history, in the running prompt (Up) and on disk alike, so a password typed once never
comes back on Up and never reaches the file. Redacting beats dropping the line: the user sees
at once what was kept ("my password is [redacted password]"), and Up never skips a line they
just sent. While the user's memory is off (``persist`` False) lines stay in the running
process only, as the conversation does; ``clear`` empties both (``/forget all``), and
``remove`` takes out the lines of messages a ``/forget N`` deletes.

The file format is prompt_toolkit's :class:`~prompt_toolkit.history.FileHistory` format (an
entry is a ``# <UTC time>`` line and its text lines prefixed with ``+``), so multi-line pastes
survive, and its reader is reused.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import quote

from prompt_toolkit.history import FileHistory

from memory.redact import redact
from memory.text import without_direction_marks

#: Entries kept on disk; older ones are dropped when the file is loaded (a shell's HISTSIZE).
MAX_ENTRIES = 1000
HISTORY_FOLDER = "console"


def history_path(data_dir: Path, user: str) -> Path:
    """Where the console history of ``user`` (``--user``) lives:
    ``<data folder>/console/<user>.history``, the name percent-encoded so that any user name is
    one file name inside that folder (``a/b`` -> ``a%2Fb.history``)."""
    return Path(data_dir) / HISTORY_FOLDER / f"{quote(user, safe='') or '%00'}.history"


class ConsoleHistory(FileHistory):
    """A prompt_toolkit history kept in an owner-only file (mode 0600, folder 0700).

    Args:
        path: the history file (``history_path``); created with its folder on the first write.
        max_entries: entries kept on disk (``MAX_ENTRIES``).

    Attributes:
        persist: write new lines to the file (True) or keep them in this process only (the
            console sets it from the user's memory switch).
    """

    def __init__(self, path: Path, *, max_entries: int = MAX_ENTRIES) -> None:
        super().__init__(str(path))
        self.path = Path(path)
        self.max_entries = max_entries
        self.persist = True

    def load_history_strings(self):
        """The stored entries, newest first (prompt_toolkit's contract); a file that holds more
        than ``max_entries`` is rewritten with the newest ones."""
        newest_first = list(super().load_history_strings())
        if len(newest_first) > self.max_entries:
            newest_first = newest_first[:self.max_entries]
            self._rewrite(reversed(newest_first))
        return newest_first

    def append_string(self, string: str) -> None:
        """Add one accepted line, redacted, to the running history and (with ``persist``) to
        the file."""
        text = redact(string).text
        self._loaded_strings.insert(0, text)
        if self.persist:
            self.store_string(text)

    def store_string(self, string: str) -> None:
        """Append one entry to the file (created 0600 inside a 0700 folder)."""
        with self._open(os.O_APPEND) as fh:
            fh.write(_entry(string))

    def clear(self) -> None:
        """Forget every entry: the running history and the file (deleted)."""
        self._loaded_strings.clear()
        self.path.unlink(missing_ok=True)

    def remove(self, texts) -> int:
        """Take every entry equal to one of ``texts`` (messages as stored: redacted, without
        direction marks or surrounding blanks) out of the running history and the file (rewritten, or deleted
        when nothing is left). Returns how many entries went from the file."""
        gone = {_as_stored(t) for t in texts}
        self._loaded_strings[:] = [s for s in self._loaded_strings if _as_stored(s) not in gone]
        if not self.path.exists():
            return 0
        oldest_first = list(reversed(list(FileHistory.load_history_strings(self))))
        kept = [s for s in oldest_first if _as_stored(s) not in gone]
        if len(kept) == len(oldest_first):
            return 0
        if kept:
            self._rewrite(kept)
        else:
            self.path.unlink(missing_ok=True)
        return len(oldest_first) - len(kept)

    def _rewrite(self, oldest_first) -> None:
        with self._open(os.O_TRUNC) as fh:
            fh.write("".join(_entry(s) for s in oldest_first))

    def _open(self, flag: int):
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | flag, 0o600)
        os.fchmod(fd, 0o600)  # also when the file existed with a wider mode
        return os.fdopen(fd, "w", encoding="utf-8", errors="replace")


def _as_stored(text: str) -> str:
    """A line as the conversation stores it (without direction marks, stripped)."""
    return without_direction_marks(text).strip()


def _entry(text: str) -> str:
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return f"\n# {stamp}\n" + "".join(f"+{line}\n" for line in text.split("\n"))
