"""The Claude and OpenAI-compatible adapters with their real SDK clients against a fake server
on 127.0.0.1: what is sent, what comes back, and every way a call can fail."""

from __future__ import annotations

import json
import socket

import pytest

from adapters.llm import CUT_OFF_NOTE, AnthropicChatModel, OpenAICompatChatModel, RetryPolicy
from memory.assembly import MEMORY_FRAME, PERSONA
from memory.errors import ModelError, ModelRateLimited, ModelUnavailable
from memory.recall import SEMANTIC_HEADER
from memory.types import ChatMessage
from tests.e2e.fakes.llm import Answer, Fail, FakeLLMServer, Stall, StreamError

PROVIDERS = ["anthropic", "openai"]
MEMORY = f"{MEMORY_FRAME}\n\n{SEMANTIC_HEADER}\n- the user prefers green tea (2026-11-01)"
SYSTEM = f"{PERSONA}\n\n{MEMORY}"
HELLO = [ChatMessage("user", "hello")]


class Sleeps:
    """Records the backoff waits instead of sleeping."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
async def server():
    fake = await FakeLLMServer().start()
    yield fake
    await fake.close()


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def make_model(provider: str, url: str, sleeps: Sleeps, *, stream: bool | None = None,
               timeout: float = 5.0, attempts: int = 4, max_total_wait: float = 30.0,
               model: str | None = None, api_key: str | None = None):
    policy = RetryPolicy(attempts=attempts, base_delay=0.01, max_delay=0.04,
                         max_total_wait=max_total_wait, sleep=sleeps, random=lambda: 0.5)
    if provider == "anthropic":
        return AnthropicChatModel(api_key=api_key or "test-key", base_url=url,
                                  model=model or "claude-haiku-4-5",
                                  consolidation_model="claude-haiku-4-5-20251001",
                                  timeout=timeout, stream=stream, retry=policy)
    return OpenAICompatChatModel(base_url=url, model=model or "local-model", api_key=api_key,
                                 timeout=timeout, stream=bool(stream), retry=policy)


def url_of(provider: str, server: FakeLLMServer) -> str:
    return server.anthropic_url if provider == "anthropic" else server.openai_url


async def ask(model, *, system: str = SYSTEM, messages=HELLO, max_tokens: int = 300):
    try:
        return await model.complete(system=system, messages=messages, max_tokens=max_tokens)
    finally:
        await model.aclose()


def raw_system_prefix(provider: str, recorded) -> bytes:
    """The bytes of the cacheable prefix as sent: Anthropic's ``system`` value, or the first
    (system) message of an OpenAI request."""
    if provider == "anthropic":
        return recorded.raw_field("system")
    raw = recorded.raw_field("messages").decode()
    _, end = json.JSONDecoder().raw_decode(raw, 1)
    return raw[1:end].encode()


# ----------------------------------------------------------------------------- happy path


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_reply_usage_and_request_shape(provider, stream, server, sleeps):
    server.push(Answer("Hello there, Alice.", usage={
        "input_tokens": 120, "output_tokens": 7, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 40}))
    model = make_model(provider, url_of(provider, server), sleeps, stream=stream)
    reply = await ask(model, messages=[ChatMessage("user", "hi"), ChatMessage("assistant", "yo"),
                                       ChatMessage("user", "hello")], max_tokens=321)
    assert reply.text == "Hello there, Alice."
    assert reply.stop_reason == "end_turn"
    assert (reply.input_tokens, reply.output_tokens, reply.cache_read_input_tokens) == (120, 7, 40)
    [sent] = server.requests
    body = sent.json
    assert body["max_tokens"] == 321
    assert bool(body.get("stream")) is stream
    if provider == "anthropic":
        assert sent.path == "/v1/messages"
        key = sent.headers.get("x-api-key") or sent.headers["authorization"].removeprefix("Bearer ")
        assert key == "test-key" and sent.headers["anthropic-version"]
        assert body["model"] == reply.model == "claude-haiku-4-5"
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
        assert "".join(b["text"] for b in body["system"]) == SYSTEM.replace("\n\n" + MEMORY, MEMORY)
    else:
        assert sent.path == "/v1/chat/completions"
        assert sent.headers["authorization"] == "Bearer unused"
        assert body["model"] == reply.model == "local-model"
        assert body["messages"][0] == {"role": "system", "content": SYSTEM}
        assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]
        if stream:
            assert body["stream_options"] == {"include_usage": True}


async def test_system_blocks_carry_the_cache_marker_after_the_memory(server, sleeps):
    await ask(make_model("anthropic", server.anthropic_url, sleeps))
    await ask(make_model("anthropic", server.anthropic_url, sleeps), system=PERSONA)
    with_memory, without = (r.json["system"] for r in server.requests)
    assert with_memory == [{"type": "text", "text": PERSONA},
                           {"type": "text", "text": MEMORY, "cache_control": {"type": "ephemeral"}}]
    assert without == [{"type": "text", "text": PERSONA, "cache_control": {"type": "ephemeral"}}]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_same_memory_sends_identical_prefix_bytes(provider, server, sleeps):
    model = make_model(provider, url_of(provider, server), sleeps)
    await model.complete(system=SYSTEM, messages=HELLO, max_tokens=100)
    await ask(model, messages=[*HELLO, ChatMessage("assistant", "hi"),
                               ChatMessage("user", "how are you?")])
    first, second = server.requests
    assert first.body != second.body
    assert raw_system_prefix(provider, first) == raw_system_prefix(provider, second)
    assert b"green tea" in raw_system_prefix(provider, first)


async def test_consolidation_model_shares_the_client(server, sleeps):
    model = make_model("anthropic", server.anthropic_url, sleeps)
    summariser = model.for_consolidation()
    await summariser.complete(system=PERSONA, messages=HELLO, max_tokens=50)
    await ask(model)
    assert [r.json["model"] for r in server.requests] == ["claude-haiku-4-5-20251001",
                                                         "claude-haiku-4-5"]


async def test_large_max_tokens_never_hits_the_sdk_ten_minute_check(server, sleeps):
    # opus-4-0 allows 8192 non-streaming tokens, 32000 is over 10 minutes by the SDK's
    # estimate; an explicit time-out (non-streaming) or streaming (default) must both send it.
    await ask(make_model("anthropic", server.anthropic_url, sleeps, stream=False,
                         model="claude-opus-4-0"), max_tokens=32000)
    await ask(make_model("anthropic", server.anthropic_url, sleeps, model="claude-opus-4-0"),
              max_tokens=16000)
    plain, streamed = (r.json for r in server.requests)
    assert plain["max_tokens"] == 32000 and "stream" not in plain
    assert streamed["max_tokens"] == 16000 and streamed["stream"] is True


# ----------------------------------------------------------------------------- replies


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_cut_off_reply_is_marked(provider, stream, server, sleeps):
    server.push(Answer("A long answer that goes on and", stop_reason="max_tokens"))
    reply = await ask(make_model(provider, url_of(provider, server), sleeps, stream=stream))
    assert reply.text == "A long answer that goes on and" + CUT_OFF_NOTE
    assert reply.stop_reason == "max_tokens"
    assert len(server.requests) == 1


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_non_text_blocks_are_ignored(provider, stream, server, sleeps):
    server.push(Answer(blocks=[
        {"type": "thinking", "thinking": "the user wants a greeting", "signature": "sig"},
        {"type": "text", "text": "Hello!"},
        {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"q": "x"}}]))
    reply = await ask(make_model(provider, url_of(provider, server), sleeps, stream=stream))
    assert reply.text == "Hello!"


@pytest.mark.parametrize("blocks", [
    [], [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {}}],
    [{"type": "thinking", "thinking": "hmm", "signature": "sig"}]],
    ids=["empty-list", "tool-use-only", "thinking-only"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_empty_reply_is_retried_once_then_returned_empty(provider, stream, blocks, server,
                                                                sleeps):
    server.push(Answer(blocks=blocks), Answer(blocks=blocks))
    reply = await ask(make_model(provider, url_of(provider, server), sleeps, stream=stream))
    assert reply.text == ""
    assert len(server.requests) == 2 and len(sleeps.delays) == 1
    server.requests.clear()
    server.push(Answer(blocks=blocks), Answer("Second try."))
    reply = await ask(make_model(provider, url_of(provider, server), sleeps, stream=stream))
    assert reply.text == "Second try."


# ----------------------------------------------------------------------------- failures

RECOVERABLE = {
    "429-retry-after": (Fail(429, "rate_limit_error", {"retry-after": "0.2"}), False),
    "529-overloaded": (Fail(529, "overloaded_error"), False),
    "500": (Fail(500, "api_error"), False),
    "503": (Fail(503, "api_error"), False),
    "timeout": (Stall(3.0), False),
    "stream-error-before-text": (StreamError("overloaded_error"), True),
    "stream-error-after-text": (StreamError("overloaded_error", after_text="Partial words"), True),
}


@pytest.mark.parametrize("case", RECOVERABLE, ids=list(RECOVERABLE))
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_failure_is_retried_then_answered(provider, case, server, sleeps):
    step, stream = RECOVERABLE[case]
    server.push(step, Answer("All good now."))
    # only the stalled case needs a short time-out; elsewhere a loaded machine must not turn a
    # slow answer into an extra retry
    model = make_model(provider, url_of(provider, server), sleeps, stream=stream,
                       timeout=1.0 if case == "timeout" else 10.0)
    reply = await ask(model)
    assert reply.text == "All good now."  # no partial text from the broken attempt
    assert len(server.requests) == 2 and len(sleeps.delays) == 1
    if case == "429-retry-after":
        assert sleeps.delays == [0.2]
    if provider == "anthropic" and stream:
        assert reply.input_tokens == 20  # the broken stream's input was billed too


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_backoff_grows_exponentially(provider, stream, server, sleeps):
    server.push(Fail(503), Fail(503), Fail(503), Answer("Finally."))
    reply = await ask(make_model(provider, url_of(provider, server), sleeps, stream=stream))
    assert reply.text == "Finally."
    # base 0.01, cap 0.04, jitter fixed at the middle: d/2 + 0.5 * d/2 = 0.75 d
    assert sleeps.delays == pytest.approx([0.0075, 0.015, 0.03])


GIVE_UP = {
    "529": (Fail(529, "overloaded_error"), ModelRateLimited, False),
    "429": (Fail(429, "rate_limit_error"), ModelRateLimited, False),
    "503": (Fail(503, "api_error"), ModelUnavailable, False),
    "stream-overloaded": (StreamError("overloaded_error", after_text="Half"), ModelRateLimited,
                          True),
    "timeout": (Stall(3.0), ModelUnavailable, False),
}


@pytest.mark.parametrize("case", GIVE_UP, ids=list(GIVE_UP))
@pytest.mark.parametrize("provider", PROVIDERS)
async def test_persistent_failure_raises_the_mapped_error(provider, case, server, sleeps):
    step, error, stream = GIVE_UP[case]
    server.push(*[step] * 3)
    # a short time-out only where the server stalls: elsewhere a loaded machine must not turn
    # a slow failure into a different one
    model = make_model(provider, url_of(provider, server), sleeps, stream=stream, attempts=3,
                       timeout=1.0 if case == "timeout" else 10.0)
    with pytest.raises(error) as caught:
        await ask(model)
    assert caught.value.__cause__ is not None  # raise ... from the SDK error
    assert type(caught.value.__cause__).__module__.split(".")[0] == provider
    assert len(server.requests) == 3 and len(sleeps.delays) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_refused_connection_is_unavailable(provider, sleeps):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}" + ("/v1" if provider == "openai" else "")
    with pytest.raises(ModelUnavailable):
        await ask(make_model(provider, url, sleeps, attempts=2))
    assert len(sleeps.delays) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_bad_request_is_not_retried(provider, server, sleeps):
    server.push(Fail(400, "invalid_request_error"))
    with pytest.raises(ModelError) as caught:
        await ask(make_model(provider, url_of(provider, server), sleeps))
    assert not isinstance(caught.value, (ModelRateLimited, ModelUnavailable))
    assert len(server.requests) == 1 and sleeps.delays == []


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_retry_after_beyond_the_wait_cap_gives_up_at_once(provider, server, sleeps):
    server.push(Fail(429, "rate_limit_error", {"retry-after": "120"}))
    model = make_model(provider, url_of(provider, server), sleeps, max_total_wait=5.0)
    with pytest.raises(ModelRateLimited):
        await ask(model)
    assert len(server.requests) == 1 and sleeps.delays == []


async def test_openai_key_is_sent_when_configured(server, sleeps):
    await ask(make_model("openai", server.openai_url, sleeps, api_key="sk-local"))
    assert server.requests[0].headers["authorization"] == "Bearer sk-local"
