"""The conversation engine with the real Claude and OpenAI-compatible adapters against a fake
server: what the user sees, what is stored, what is recorded for ``/stats``, and what was sent."""

from __future__ import annotations

import pytest

from adapters.llm import CUT_OFF_NOTE, AnthropicChatModel, OpenAICompatChatModel, RetryPolicy
from i18n import say
from memory.types import Role
from tests.conftest import make_harness
from tests.e2e.fakes.llm import Answer, Fail, FakeLLMServer, StreamError
from tests.e2e.test_llm_adapters import Sleeps, raw_system_prefix

PROVIDERS = ["anthropic", "openai"]
USAGE = {"input_tokens": 1000, "output_tokens": 200, "cache_creation_input_tokens": 2000,
         "cache_read_input_tokens": 4000}


@pytest.fixture
async def server():
    fake = await FakeLLMServer().start()
    yield fake
    await fake.close()


@pytest.fixture
async def harness_for(tmp_path, clock, server):
    made = []

    async def make(provider: str, *, stream: bool = False):
        policy = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, sleep=Sleeps())
        if provider == "anthropic":
            model = AnthropicChatModel(api_key="k", base_url=server.anthropic_url,
                                       model="claude-haiku-4-5", stream=stream, retry=policy)
        else:
            model = OpenAICompatChatModel(base_url=server.openai_url, model="qwen3-8b",
                                          stream=stream, retry=policy)
        h = await make_harness(tmp_path, clock, model=model)
        made.append(h)
        return h

    yield make
    for h in made:
        await h.engine.model.aclose()
        await h.store.close()


async def roles(h) -> list[Role]:
    session = await h.store.conversations.open_session(1)
    return [t.role for t in await h.store.conversations.session_turns(session.id)]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_reply_is_stored_and_usage_shows_in_stats(provider, harness_for, server):
    h = await harness_for(provider)
    server.push(Answer("Hi Alice!", usage=USAGE), Answer("Still here.", usage=USAGE))
    assert await h.say("hello") == ["Hi Alice!"]
    assert await h.say("are you there?") == ["Still here."]
    session = await h.store.conversations.open_session(1)
    turns = await h.store.conversations.session_turns(session.id)
    assert [t.role for t in turns] == [Role.USER, Role.ASSISTANT] * 2
    assert turns[1].generated_by == h.engine.model.name
    assert server.requests[1].json["max_tokens"] == h.engine.max_tokens
    [stats] = await h.say("/stats")
    assert "2026-11-30" in stats and "2 call(s)" in stats
    if provider == "anthropic":
        # Haiku 4.5: (2*1000*1.00 + 2*2000*1.25 + 2*4000*0.10 + 2*200*5.00) / 1e6 = 0.0098
        assert "2,000 input and 400 output tokens" in stats
        assert "cache 4,000 written / 8,000 read" in stats
        assert "$0.0098" in stats
    else:
        # cached tokens are a part of prompt_tokens: input = prompt - cached
        assert "6,000 input and 400 output tokens" in stats and "8,000 read" in stats
        assert "cost unknown" in stats and "$" not in stats


async def test_stats_without_usage(harness_for):
    h = await harness_for("anthropic")
    assert await h.say("/stats") == ["No model usage recorded for you yet."]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_unreachable_model_keeps_the_message_and_stores_no_reply(provider, harness_for,
                                                                      server):
    h = await harness_for(provider, stream=True)
    server.push(Fail(529, "overloaded_error"), StreamError("overloaded_error", "Half an"),
                Fail(503))
    replies = await h.say("hello")
    assert replies == [say("en", "engine.model_down")]
    assert "I can't reach the model right now; your message is saved" in replies[0]
    assert await roles(h) == [Role.USER]
    assert len(server.requests) == 3
    # the next message works and the model sees the saved one
    server.push(Answer("Back again."))
    assert await h.say("anyone?") == ["Back again."]
    assert await roles(h) == [Role.USER, Role.USER, Role.ASSISTANT]
    sent = server.requests[-1].json["messages"]
    assert "hello" in sent[-1]["content"] and "anyone?" in sent[-1]["content"]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_empty_reply_is_never_stored(provider, harness_for, server):
    h = await harness_for(provider)
    server.push(Answer(blocks=[]), Answer(blocks=[]))
    replies = await h.say("hello")
    assert replies == ["(the model returned an empty answer)"]
    assert await roles(h) == [Role.USER]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_cut_off_reply_is_marked_for_the_user(provider, harness_for, server):
    h = await harness_for(provider)
    server.push(Answer("Step one, then step", stop_reason="max_tokens"))
    [reply] = await h.say("explain everything")
    assert reply == "Step one, then step" + CUT_OFF_NOTE
    session = await h.store.conversations.open_session(1)
    assert (await h.store.conversations.session_turns(session.id))[-1].text == reply


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_same_recall_sends_the_same_prefix_bytes(provider, harness_for, server):
    h = await harness_for(provider)
    await h.say("remember that I like green tea")
    await h.say("do I like tea?")
    await h.say("do I like tea?")
    first, second = server.requests[-2:]
    prefix = raw_system_prefix(provider, first)
    assert b"green tea" in prefix
    assert prefix == raw_system_prefix(provider, second)
    assert first.body != second.body  # the conversation after the prefix grew
    if provider == "anthropic":
        blocks = second.json["system"]
        assert "green tea" in blocks[-1]["text"]
        assert blocks[-1]["cache_control"] == {"type": "ephemeral"}
        assert all("cache_control" not in b for b in blocks[:-1])
