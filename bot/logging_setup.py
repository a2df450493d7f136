"""Logging for the whole process: a rotating file under the data folder, warnings on stderr.

Nothing is ever written to standard output (the console's transcript owns it). Configured
secrets are masked in every record before any handler formats it.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import sys
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from bot.settings import Settings

LOG_FILE_NAME = "memory-bot.log"
MAX_LOG_BYTES = 10 * 1024 * 1024
LOG_BACKUPS = 5
MIN_SECRET_LENGTH = 4
"""Shorter configured secrets are not masked: masking them would garble ordinary text."""
NOISY_LOGGERS: tuple[str, ...] = (
    "httpx", "httpcore", "urllib3", "anthropic", "openai", "telegram", "discord",
    "apscheduler", "lancedb", "jieba", "filelock", "huggingface_hub", "websockets",
)
_OURS = "_memory_bot_handler"
_TEXT_FORMAT = "%(asctime)s.%(msecs)03dZ %(levelname)s %(name)s: %(message)s"
_CONSOLE_FORMAT = "memory-bot: %(levelname)s: %(message)s"


class SecretMaskFilter(logging.Filter):
    """Replaces every configured secret in a record's message, traceback and stack with ``***``.

    Attach it to handlers (logger filters do not see records propagated from child loggers).
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        unique = {s for s in secrets if len(s) >= MIN_SECRET_LENGTH}
        self._secrets = tuple(sorted(unique, key=len, reverse=True))

    def mask(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self._secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format call: let the handler report it as usual
            return True
        masked = self.mask(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.mask(record.exc_text)
        if record.stack_info:
            record.stack_info = self.mask(record.stack_info)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts`` (UTC, ISO 8601), ``level``, ``logger``, ``message``,
    and ``exc`` / ``stack`` when present."""

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            payload["exc"] = record.exc_text
        if record.stack_info:
            payload["stack"] = self.formatStack(record.stack_info)
        return json.dumps(payload, ensure_ascii=False)


class StderrHandler(logging.StreamHandler):
    """A stream handler that writes to whatever ``sys.stderr`` is when a record is emitted
    (as the standard library's last-resort handler does): the interactive console replaces it
    while the prompt is shown, so that a warning is printed above the prompt line instead of
    through it."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # StreamHandler.__init__ assigns it; sys.stderr rules
        pass


class LogFile(logging.handlers.RotatingFileHandler):
    """The rotating log file. A write that fails for want of storage (disk full, read-only,
    file-size limit: an ``OSError``) is said once, in one line on standard error, instead of
    Python's "--- Logging error ---" traceback for every record; each later record tries the
    file again, and a success ends the failing state (a later failure is said again)."""

    failing: str | None = None
    _failed_now = False

    def emit(self, record: logging.LogRecord) -> None:
        self._failed_now = False
        super().emit(record)  # a failure ends in handleError
        if not self._failed_now:
            self.failing = None

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError):
            super().handleError(record)  # a bug (a bad format call): the usual report
            return
        self._failed_now = True
        if self.failing is None:
            self.failing = exc.strerror or type(exc).__name__
            try:
                sys.stderr.write(f"memory-bot: WARNING: the log file {self.baseFilename} cannot "
                                 f"be written ({self.failing}); until it can, only warnings "
                                 "and errors are shown, here\n")
                sys.stderr.flush()
            except (OSError, ValueError):  # no standard error either: nothing more to do
                pass


def _formatter(log_format: str) -> logging.Formatter:
    if log_format == "json":
        return JsonFormatter()
    formatter = logging.Formatter(_TEXT_FORMAT, datefmt="%Y-%m-%dT%H:%M:%S")
    formatter.converter = time.gmtime
    return formatter


FILE_ONLY = {"file_only": True}
"""``extra=`` for a record that goes to the log file only, not to standard error (a failure
the command line already reported in one line, whose traceback belongs in the log)."""


def _not_file_only(record: logging.LogRecord) -> bool:
    return not getattr(record, "file_only", False)


def configure_logging(settings: Settings, *, console: bool, to_file: bool = True) -> Path | None:
    """Install the process's log handlers on the root logger; safe to call again.

    - ``<data_dir>/logs/memory-bot.log``, rotating (10 MiB x 5), at ``LOG_LEVEL``, text or
      JSON lines per ``LOG_FORMAT``, UTC timestamps;
    - standard error at WARNING and above: a short ``memory-bot: LEVEL: message`` line when
      ``console`` is true (a person is at the terminal), else the file's format;
    - nothing to standard output; configured secrets masked; noisy libraries at WARNING.

    Handlers installed by an earlier call are removed and closed; foreign handlers (pytest's
    caplog, for instance) are left alone. With ``to_file`` False (read-only commands such as
    ``inspect``, and ``restore`` before its target exists) only standard error is used and
    nothing is created on disk.

    Returns:
        The path of the log file, or None without one.
    """
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(handler)
        handler.close()

    level = logging.getLevelNamesMapping()[settings.log_level]
    mask = SecretMaskFilter(settings.secret_values())
    handlers: list[logging.Handler] = []
    log_file = None
    if to_file:
        from bot.datadir import ensure_data_dir

        ensure_data_dir(settings.data_dir)
        settings.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        log_file = settings.log_dir / LOG_FILE_NAME
        file_handler = LogFile(
            log_file, maxBytes=MAX_LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8", delay=True)
        file_handler.setLevel(level)
        file_handler.setFormatter(_formatter(settings.log_format))
        handlers.append(file_handler)

    stderr_handler = StderrHandler()
    stderr_handler.setLevel(logging.WARNING)
    stderr_handler.setFormatter(
        logging.Formatter(_CONSOLE_FORMAT) if console else _formatter(settings.log_format))
    stderr_handler.addFilter(_not_file_only)

    for handler in (*handlers, stderr_handler):
        handler.addFilter(mask)
        setattr(handler, _OURS, True)
        root.addHandler(handler)
    root.setLevel(min(level, logging.WARNING))
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    return log_file
