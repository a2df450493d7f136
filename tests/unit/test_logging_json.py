"""``LOG_FORMAT=json``: one JSON object per line with ``ts`` (UTC), ``level``,
``logger`` and ``message``, on the log file and on standard error, and no configured secret in
any line, tracebacks included."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta

import pytest

from bot.logging_setup import LOG_FILE_NAME, configure_logging
from bot.settings import load_settings

TOKEN = "123456:AAH-secret-telegram-token"
KEY = "sk-ant-api03-very-secret-key"


@pytest.fixture
def json_logging(tmp_path, capsys):
    settings = load_settings({"MEMORY_BOT_DATA_DIR": str(tmp_path / "data"), "LOG_FORMAT": "json",
                              "TELEGRAM_BOT_TOKEN": TOKEN, "ANTHROPIC_API_KEY": KEY,
                              "EMBEDDER": "hashing"}, env_file=None)
    path = configure_logging(settings, console=False)
    yield path, capsys  # the stderr handler writes to sys.stderr as it is at each record
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "_memory_bot_handler", False)]:
        root.removeHandler(handler)
        handler.close()


def test_json_lines_carry_level_logger_message_and_utc_time_and_never_a_secret(json_logging):
    path, capsys = json_logging
    log = logging.getLogger("bot.test_json")
    log.info("calling https://api.telegram.org/bot%s/getMe with key %s", TOKEN, KEY)
    log.warning("a line with \"quotes\", a newline\nand 中文")
    try:
        raise RuntimeError(f"refused token {TOKEN}")
    except RuntimeError:
        log.exception("request failed")
    for handler in logging.getLogger().handlers:
        if getattr(handler, "_memory_bot_handler", False):
            handler.flush()
    assert path.name == LOG_FILE_NAME
    raw = path.read_text(encoding="utf-8")
    err = capsys.readouterr().err
    assert TOKEN not in raw + err and KEY not in raw + err
    lines = [line for line in raw.splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is one whole object
    ours = [r for r in records if r["logger"] == "bot.test_json"]
    assert [r["level"] for r in ours] == ["INFO", "WARNING", "ERROR"]
    for record in ours:
        assert {"ts", "level", "logger", "message"} <= record.keys()
        assert record["ts"].endswith("Z")
        stamp = datetime.fromisoformat(record["ts"].replace("Z", "+00:00"))
        assert stamp.utcoffset() == timedelta(0)
    assert "***" in ours[0]["message"] and "getMe" in ours[0]["message"]
    assert ours[1]["message"] == "a line with \"quotes\", a newline\nand 中文"
    assert "RuntimeError: refused token ***" in ours[2]["exc"]
    stderr_records = [json.loads(line) for line in err.splitlines() if line.strip()]
    assert [r["level"] for r in stderr_records if r["logger"] == "bot.test_json"] == [
        "WARNING", "ERROR"]  # standard error: warnings and up, same format
