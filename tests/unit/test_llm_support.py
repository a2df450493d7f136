"""Pieces around the model adapters: provider choice, prices, retry-after parsing, the system
prompt split, and usage totals in SQLite."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from adapters.llm import AnthropicChatModel, OpenAICompatChatModel, cost_usd, price_for
from adapters.llm._retry import RetryPolicy, retry_after_seconds
from adapters.llm._usage import split_system
from adapters.models import OfflineChatModel
from bot.app import build_model
from bot.settings import load_settings
from bot.usage import render_stats
from memory.assembly import MEMORY_FRAME, PERSONA
from memory.errors import ConfigError
from memory.records import UsageEntry
from memory.stores.sqlite import SQLiteStore


@pytest.mark.parametrize(("env", "expected", "name"), [
    ({}, OfflineChatModel, "offline"),
    ({"ANTHROPIC_API_KEY": "k"}, AnthropicChatModel, "claude-sonnet-5-5"),
    ({"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MODEL": "claude-opus-4-8",
      "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_MODEL": "m"},
     AnthropicChatModel, "claude-opus-4-8"),
    ({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_MODEL": "qwen3"},
     OpenAICompatChatModel, "qwen3"),
    ({"LLM_PROVIDER": "openai", "ANTHROPIC_API_KEY": "k",
      "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_MODEL": "qwen3"},
     OpenAICompatChatModel, "qwen3"),
    ({"LLM_PROVIDER": "offline", "ANTHROPIC_API_KEY": "k"}, OfflineChatModel, "offline"),
])
async def test_build_model_follows_llm_provider(env, expected, name):
    model = build_model(load_settings(env, env_file=None))
    try:
        assert type(model) is expected and model.name == name
        if isinstance(model, AnthropicChatModel):
            assert model.consolidation_model == "claude-haiku-4-5"
    finally:
        if hasattr(model, "aclose"):
            await model.aclose()


def test_openai_provider_needs_a_model_name():
    settings = load_settings({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, env_file=None)
    with pytest.raises(ConfigError, match="OPENAI_MODEL"):
        build_model(settings)


def test_prices_by_family_and_unknown_models():
    assert price_for("claude-haiku-4-5-20251001") == price_for("claude-haiku-4-5")
    assert price_for("claude-sonnet-4-5-20250929").input == 3.0
    assert price_for("claude-opus-4-8").output == 25.0
    assert price_for("claude-sonnet-4-6") is not None
    assert price_for("qwen3-8b") is None and price_for("claude-sonnet-5") is None
    assert cost_usd("qwen3-8b", input_tokens=10, output_tokens=10) is None
    cost = cost_usd("claude-sonnet-4-5", input_tokens=1_000_000, output_tokens=1_000_000,
                    cache_creation_input_tokens=1_000_000, cache_read_input_tokens=1_000_000)
    assert cost == pytest.approx(3.0 + 15.0 + 3.75 + 0.30)


def test_retry_after_headers():
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:05 GMT"},
                               now=datetime(2015, 10, 21, 7, 28, tzinfo=timezone.utc).timestamp()
                               ) == pytest.approx(5.0)
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_is_exponential_capped_and_jittered():
    low = RetryPolicy(base_delay=1, max_delay=4, random=lambda: 0.0)
    high = RetryPolicy(base_delay=1, max_delay=4, random=lambda: 0.999999)
    assert [low.backoff(n) for n in range(4)] == [0.5, 1.0, 2.0, 2.0]
    assert [round(high.backoff(n), 3) for n in range(4)] == [1.0, 2.0, 4.0, 4.0]


def test_system_prompt_splits_at_the_memory_frame():
    memory = f"{MEMORY_FRAME}\n\nWhat you know about the user:\n- likes tea"
    assert split_system(f"{PERSONA}\n\n{memory}") == (PERSONA, memory)
    assert split_system(PERSONA) == (PERSONA, "")


async def test_usage_totals_per_user_day_and_model(tmp_path):
    store = await SQLiteStore.open(tmp_path / "memory.db")
    try:
        now = datetime(2026, 11, 30, 23, 59, tzinfo=timezone.utc)
        user_id = (await store.identities.user_for_account("console", "alice", "Alice", now)).id
        other_id = (await store.identities.user_for_account("console", "bob", "Bob", now)).id
        for day, model, cost in [("2026-11-30", "claude-haiku-4-5", 0.01),
                                 ("2026-11-30", "claude-haiku-4-5", 0.02),
                                 ("2026-11-29", "qwen3", None)]:
            await store.records.add_model_usage(UsageEntry(
                user_id, day, model, input_tokens=100, output_tokens=10,
                cache_read_input_tokens=5, cost_usd=cost))
        await store.records.add_model_usage(UsageEntry(
            other_id, "2026-11-30", "claude-haiku-4-5", input_tokens=1, output_tokens=1,
            cost_usd=1.0))
        rows = await store.records.model_usage(user_id)
        assert [(r.day, r.model, r.calls, r.input_tokens, r.cache_read_input_tokens)
                for r in rows] == [("2026-11-30", "claude-haiku-4-5", 2, 200, 10),
                                   ("2026-11-29", "qwen3", 1, 100, 5)]
        assert rows[0].cost_usd == pytest.approx(0.03) and rows[1].cost_usd is None
        assert [r.day for r in await store.records.model_usage(user_id, since_day="2026-11-30")] == [
            "2026-11-30"]
        text = render_stats(rows, today=now)
        assert "$0.0300" in text and "cost unknown" in text
        assert "Last 30 days: 3 call(s), 300 input and 30 output tokens" in text
        assert "models without a price not included" in text
        old = render_stats(rows, today=now + timedelta(days=40))
        assert "Last 30 days: 0 call(s)" in old
    finally:
        await store.close()


def test_front_door_exports_resolve():
    import adapters.llm as llm

    assert all(getattr(llm, name) is not None for name in llm.__all__)
