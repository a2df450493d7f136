"""``memory-bot config check``: the effective settings with secrets masked, then
``#`` lines saying what they mean for ``memory-bot run`` (model, adapters, data folder state,
the open-access warning)."""

from __future__ import annotations

import os
from pathlib import Path

from bot import cli
from bot.datadir import lock_data_dir


def _check(monkeypatch, capsys, tmp_path: Path, **env: str) -> list[str]:
    monkeypatch.chdir(tmp_path)  # no stray .env
    for name in ("ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "TELEGRAM_BOT_TOKEN",
                 "DISCORD_BOT_TOKEN", "ALLOWED_USERS", "LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MEMORY_BOT_DATA_DIR", str(tmp_path / "data"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["config", "check"]) == 0
    return capsys.readouterr().out.splitlines()


def test_offline_without_tokens(monkeypatch, capsys, tmp_path):
    lines = _check(monkeypatch, capsys, tmp_path)
    assert f"MEMORY_BOT_DATA_DIR={tmp_path / 'data'}" in lines
    assert "# model: offline" in lines
    assert any(line.startswith("# adapters for `memory-bot run`: none") for line in lines)
    assert any(line.endswith("no database yet (created at the first start)") for line in lines)
    assert not any(line.startswith("# warning") for line in lines)


def test_model_and_token_set_warns_about_open_access_and_masks_secrets(monkeypatch, capsys,
                                                                        tmp_path):
    lines = _check(monkeypatch, capsys, tmp_path, ANTHROPIC_API_KEY="sk-ant-secret-value-1",
                   TELEGRAM_BOT_TOKEN="123456:secret-token-value")
    text = "\n".join(lines)
    assert "secret-value-1" not in text and "secret-token-value" not in text
    assert any(line.startswith("# model: anthropic (") for line in lines)
    assert "# adapters for `memory-bot run`: telegram" in lines
    assert any(line.startswith("# warning: ALLOWED_USERS is empty") for line in lines)
    lines = _check(monkeypatch, capsys, tmp_path, ANTHROPIC_API_KEY="sk-ant-secret-value-1",
                   ALLOWED_USERS="telegram:42")
    assert not any(line.startswith("# warning") for line in lines)


def test_a_folder_in_use_is_reported_with_its_pid(monkeypatch, capsys, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "memory.db").write_bytes(b"")
    lock = lock_data_dir(data)
    try:
        lines = _check(monkeypatch, capsys, tmp_path)
    finally:
        lock.release()
    assert any(line.endswith(f"in use by a running memory-bot (pid {os.getpid()})")
               for line in lines), lines
    lines = _check(monkeypatch, capsys, tmp_path)
    assert any(line.endswith(": has a database") for line in lines), lines
