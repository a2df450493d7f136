"""Claude through the ``anthropic`` SDK (``AsyncAnthropic``), behind the ChatModel port.

Prompt caching: the system prompt is sent as text blocks, the persona first and the memory part
(frame plus recalled facts and episodes) second, and the last system block carries
``cache_control: {"type": "ephemeral"}`` (5-minute TTL). The cached prefix is everything up to
that marker, so two turns that recall the same memory send byte-identical system blocks and the
second one reads the prefix from the cache. The messages after it (working memory and the
current input) change every turn and are not marked.

The provider caches a prefix only from a model-specific minimum length; a shorter marked prefix
is answered normally, uncached, with no error. Minimums per Anthropic's prompt-caching docs
(https://platform.claude.com/docs/en/build-with-claude/prompt-caching, "Cache limitations", as
quoted in anthropics/anthropic-sdk-python#1194, read 2026-11-30; see :data:`MIN_CACHEABLE_TOKENS`):
1024 tokens for Claude Sonnet 4.5 / 4.6, Sonnet 4, Opus 4 / 4.1; 2048 for Claude Haiku 3 / 3.5;
4096 for Claude Haiku 4.5 and Opus 4.5 / 4.6. (The older "1024 for Sonnet/Opus, 2048 for Haiku"
rule holds only up to the 4.1 generation.) With the default ``MEMORY_TOKEN_BUDGET`` of 1000
the persona plus memory reach about 1100 tokens at most, so caching takes effect only on
Sonnet-class models and only when memory is nearly full.

Streaming: replies are streamed when ``stream`` is True, or (the default, ``None``) when
``max_tokens`` is above :data:`STREAM_ABOVE_TOKENS` or a chat adapter previews the reply as it
is written (:mod:`memory.streaming`; the text so far is reported there). Non-streaming calls
always pass an explicit ``timeout``, so the SDK never refuses a large ``max_tokens`` with its
"may take longer than 10 minutes" ValueError (anthropic-sdk-python #874).

Failures are retried here (the SDK's own retries are off) and mapped at the seam: see
:mod:`adapters.llm._retry`. Non-text blocks (thinking, tool_use) are ignored; a reply cut at
``max_tokens`` ends with :data:`CUT_OFF_NOTE` and keeps ``stop_reason="max_tokens"``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import anthropic
from anthropic import AsyncAnthropic

from adapters.llm._retry import Failure, RetryPolicy, call_with_retries, retry_after_seconds
from adapters.llm._structured import parse_json_object
from adapters.llm._usage import CUT_OFF_NOTE, Spent, split_system
from memory import streaming
from memory.ports import StructuredReply
from memory.types import ChatMessage, ModelReply

log = logging.getLogger(__name__)

STREAM_ABOVE_TOKENS = 4096
CACHE_CONTROL = {"type": "ephemeral"}

MIN_CACHEABLE_TOKENS: dict[str, int] = {
    "claude-sonnet-4-6": 1024,
    "claude-sonnet-4-5": 1024,
    "claude-sonnet-4": 1024,
    "claude-opus-4-1": 1024,
    "claude-opus-4": 1024,
    "claude-opus-4-5": 4096,
    "claude-opus-4-6": 4096,
    "claude-haiku-4-5": 4096,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
"""Smallest prefix (tokens) the provider caches, per model family (see the module docstring)."""

_NO_RETRY_WHEN_EMPTY = frozenset({"max_tokens", "refusal"})


def system_blocks(system: str) -> list[dict]:
    """The system prompt as text blocks, with the cache marker on the last one.

    ``[persona, memory + marker]`` when memory was recalled, else ``[persona + marker]``.
    """
    persona, memory = split_system(system)
    blocks = [{"type": "text", "text": part} for part in (persona, memory) if part]
    if not blocks:
        return []
    blocks[-1]["cache_control"] = dict(CACHE_CONTROL)
    return blocks


@dataclass(frozen=True, slots=True)
class _Answer:
    text: str
    stop_reason: str | None
    model: str


class AnthropicChatModel:
    """A :class:`memory.ports.ChatModel` backed by the Claude Messages API.

    Args:
        api_key: ``ANTHROPIC_API_KEY``.
        model: ``ANTHROPIC_MODEL``, the model that writes replies (also :attr:`name`).
        consolidation_model: ``CONSOLIDATION_MODEL``, kept for background consolidation
            (:meth:`for_consolidation`); defaults to ``model``.
        base_url: ``ANTHROPIC_BASE_URL``; None = the SDK default.
        timeout: seconds; the client's time-out (connect, and between received bytes).
        stream: True = always stream, False = never, None = stream above
            :data:`STREAM_ABOVE_TOKENS` output tokens or when :func:`memory.streaming.wanted`.
        retry: retry policy (attempts, backoff, cap on the total wait).
        client: a ready client (shared between the reply and consolidation models).
    """

    def __init__(self, *, api_key: str | None, model: str, consolidation_model: str | None = None,
                 base_url: str | None = None, timeout: float = 60.0, stream: bool | None = None,
                 retry: RetryPolicy | None = None, client: AsyncAnthropic | None = None) -> None:
        self.name = model
        self.model = model
        self.consolidation_model = consolidation_model or model
        self.timeout = timeout
        self.stream = stream
        self.retry = retry or RetryPolicy()
        self._owns_client = client is None
        self._client = client or AsyncAnthropic(api_key=api_key, base_url=base_url,
                                                timeout=timeout, max_retries=0)

    def for_consolidation(self) -> AnthropicChatModel:
        """The same client asking ``CONSOLIDATION_MODEL`` (for summaries and extraction)."""
        return AnthropicChatModel(api_key=None, model=self.consolidation_model,
                                  consolidation_model=self.consolidation_model,
                                  timeout=self.timeout, stream=self.stream, retry=self.retry,
                                  client=self._client)

    async def aclose(self) -> None:
        """Close the HTTP client (when this model created it)."""
        if self._owns_client:
            await self._client.close()

    async def complete(
        self, *, system: str, messages: Sequence[ChatMessage], max_tokens: int
    ) -> ModelReply:
        """Ask Claude; see :meth:`memory.ports.ChatModel.complete`.

        Raises:
            ModelRateLimited: 429 / 529 / overloaded after the last retry.
            ModelUnavailable: time-out, refused connection, 5xx or a broken stream after the
                last retry.
            ModelError: a request the provider rejects (400, 401, 403, 404, ...).
        """
        params = {
            "model": self.model,
            "max_tokens": max_tokens,
            "system": system_blocks(system),
            "messages": [{"role": m.role, "content": m.content} for m in messages],
        }
        stream = self.stream if self.stream is not None else (
            max_tokens > STREAM_ABOVE_TOKENS or streaming.wanted())  # a chat adapter previews
        spent = Spent()
        started = time.monotonic()
        attempts = 0

        async def attempt() -> _Answer:
            nonlocal attempts
            attempts += 1
            if stream:
                return await self._streamed(params, spent)
            message = await self._client.messages.create(**params, timeout=self.timeout)
            _add_usage(spent, message.usage)
            return _answer(message, self.model)

        answer = await call_with_retries(
            attempt, classify=classify, policy=self.retry, what=f"anthropic {self.model}",
            is_empty=lambda a: not a.text.strip() and a.stop_reason not in _NO_RETRY_WHEN_EMPTY)
        text = answer.text
        if answer.stop_reason == "max_tokens" and text.strip():
            text = text.rstrip() + CUT_OFF_NOTE
        log.info("anthropic reply model=%s stream=%s attempts=%d stop=%s in=%d out=%d "
                 "cache_write=%d cache_read=%d ms=%d", answer.model, stream, attempts,
                 answer.stop_reason, spent.input_tokens, spent.output_tokens,
                 spent.cache_creation_input_tokens, spent.cache_read_input_tokens,
                 (time.monotonic() - started) * 1000)
        return ModelReply(text=text, model=answer.model, input_tokens=spent.input_tokens,
                          output_tokens=spent.output_tokens, stop_reason=answer.stop_reason,
                          cache_creation_input_tokens=spent.cache_creation_input_tokens,
                          cache_read_input_tokens=spent.cache_read_input_tokens)

    async def _streamed(self, params: dict, spent: Spent) -> _Answer:
        opened = None
        async with self._client.messages.stream(**params, timeout=self.timeout) as stream:
            try:
                async for event in stream:
                    if event.type == "message_start":
                        opened = event.message.usage
                    elif event.type == "text":
                        streaming.report(event.snapshot)
                message = await stream.get_final_message()
            except Exception:
                if opened is not None:  # the broken attempt was billed for its input
                    _add_usage(spent, opened)
                raise
        _add_usage(spent, message.usage)
        return _answer(message, self.model)


    async def complete_structured(
        self, *, system: str, messages: Sequence[ChatMessage], schema: dict, tool_name: str,
        description: str, max_tokens: int,
    ) -> StructuredReply:
        """Ask for one object of ``schema`` through tool use: the schema is the tool's
        ``input_schema`` and ``tool_choice`` forces that tool, so the answer is a ``tool_use``
        block whose ``input`` is the object. A reply without it (a text answer) is parsed as
        JSON (:func:`adapters.llm._structured.parse_json_object`). Never streamed (the output
        cap of consolidation is small, well under :data:`STREAM_ABOVE_TOKENS`); an empty answer
        is not retried here (the caller falls back to its rules). See
        :meth:`memory.ports.StructuredModel.complete_structured`.

        Raises:
            ModelRateLimited, ModelUnavailable, ModelError: as for :meth:`complete`.
        """
        params = {
            "model": self.model,
            "max_tokens": max_tokens,
            "system": system_blocks(system),
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "tools": [{"name": tool_name, "description": description, "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": tool_name},
        }
        spent = Spent()
        attempts = 0

        async def attempt():
            nonlocal attempts
            attempts += 1
            message = await self._client.messages.create(**params, timeout=self.timeout)
            _add_usage(spent, message.usage)
            return message

        message = await call_with_retries(attempt, classify=classify, policy=self.retry,
                                          what=f"anthropic {self.model} (structured)")
        data = None
        texts = []
        for block in message.content or []:
            kind = getattr(block, "type", None)
            if kind == "tool_use" and block.name == tool_name and isinstance(block.input, dict):
                data = data if data is not None else block.input
            elif kind == "text":
                texts.append(block.text)
        text = "".join(texts)
        if data is None:
            data = parse_json_object(text)
        log.info("anthropic structured model=%s attempts=%d stop=%s parsed=%s in=%d out=%d",
                 message.model or self.model, attempts, message.stop_reason, data is not None,
                 spent.input_tokens, spent.output_tokens)
        return StructuredReply(data=data, reply=ModelReply(
            text=text, model=message.model or self.model, input_tokens=spent.input_tokens,
            output_tokens=spent.output_tokens, stop_reason=message.stop_reason,
            cache_creation_input_tokens=spent.cache_creation_input_tokens,
            cache_read_input_tokens=spent.cache_read_input_tokens))


def _add_usage(spent: Spent, usage) -> None:
    if usage is None:
        return
    spent.add(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
              cache_creation_input_tokens=usage.cache_creation_input_tokens,
              cache_read_input_tokens=usage.cache_read_input_tokens)


def _answer(message, requested: str) -> _Answer:
    text = "".join(block.text for block in (message.content or [])
                   if getattr(block, "type", None) == "text")
    return _Answer(text=text, stop_reason=message.stop_reason, model=message.model or requested)


def _error_type(body: object) -> str | None:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"].get("type")
    return None


def classify(exc: BaseException) -> Failure | None:
    """Map an ``anthropic`` SDK error onto the retry loop's :class:`Failure` (None: not an SDK
    error). 429, 529 and ``overloaded_error`` / ``rate_limit_error`` (also as an ``error`` event
    inside a 200 stream) are rate limits; time-outs, refused connections, 408, 409, 5xx and
    other stream errors are outages; other statuses are fatal."""
    if isinstance(exc, anthropic.APITimeoutError):
        return Failure("unavailable", None, "timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return Failure("unavailable", None, "connection failed")
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        kind = getattr(exc, "type", None) or _error_type(exc.body) or "error"
        detail = f"HTTP {status} {kind}" if status != 200 else f"{kind} in the stream"
        retry_after = retry_after_seconds(exc.response.headers)
        if status in (429, 529) or kind in ("rate_limit_error", "overloaded_error"):
            return Failure("rate_limited", retry_after, detail)
        if status in (401, 403):
            return Failure("misconfigured", None, detail)
        if status >= 500 or status in (200, 408, 409):
            return Failure("unavailable", retry_after, detail)
        return Failure("fatal", None, detail)
    if isinstance(exc, anthropic.AnthropicError):
        return Failure("fatal", None, type(exc).__name__)
    return None
