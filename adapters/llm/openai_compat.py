"""Any OpenAI-compatible chat server (vLLM, llama.cpp, Ollama, LM Studio, OpenAI itself)
through the ``openai`` SDK (``AsyncOpenAI``), behind the ChatModel port.

The system prompt goes first as a ``system`` message, so two turns with the same recalled memory
share their prefix (servers with automatic prefix caching reuse it). ``max_tokens`` is sent as
``max_tokens``, the field every compatible server understands. Non-streaming by default; with
``stream=True`` the reply is streamed and usage requested with
``stream_options={"include_usage": true}`` (a server that does not send usage leaves the counts
at 0). The API key is optional: local servers need none, but the SDK insists on one, so a
placeholder is sent.

Retries, error mapping, empty replies and the cut-off note work as in the Claude adapter
(:mod:`adapters.llm.anthropic`): ``finish_reason`` ``length`` becomes ``stop_reason="max_tokens"``,
``stop`` becomes ``end_turn``, ``content_filter`` becomes ``refusal``; reasoning text and tool
calls are ignored. Usage: ``prompt_tokens`` minus ``prompt_tokens_details.cached_tokens`` is
reported as input, the cached part as cache reads.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

import openai
from openai import AsyncOpenAI

from adapters.llm._retry import Failure, RetryPolicy, call_with_retries, retry_after_seconds
from adapters.llm._structured import parse_json_object, schema_instruction
from adapters.llm._usage import CUT_OFF_NOTE, Spent
from memory import streaming
from memory.errors import ModelError, ModelRateLimited, ModelUnavailable
from memory.ports import StructuredReply
from memory.types import ChatMessage, ModelReply

log = logging.getLogger(__name__)

NO_KEY = "unused"
_STOP_REASONS = {"length": "max_tokens", "stop": "end_turn", "content_filter": "refusal"}
_NO_RETRY_WHEN_EMPTY = frozenset({"max_tokens", "refusal"})


@dataclass(frozen=True, slots=True)
class _Answer:
    text: str
    stop_reason: str | None
    model: str


class OpenAICompatChatModel:
    """A :class:`memory.ports.ChatModel` backed by ``POST {base_url}/chat/completions``.

    Args:
        base_url: ``OPENAI_BASE_URL``, e.g. ``http://127.0.0.1:8000/v1``.
        model: ``OPENAI_MODEL``, sent as ``model`` (also :attr:`name`).
        api_key: ``OPENAI_API_KEY``; None sends a placeholder.
        timeout: seconds; connect, and between received bytes.
        stream: stream the reply.
        retry: retry policy (attempts, backoff, cap on the total wait).
        client: a ready client.
    """

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None,
                 timeout: float = 60.0, stream: bool = False, retry: RetryPolicy | None = None,
                 client: AsyncOpenAI | None = None) -> None:
        self.name = model
        self.model = model
        self.timeout = timeout
        self.stream = stream
        self.retry = retry or RetryPolicy()
        self._json_schema_ok = True  # False once the server rejected response_format
        self._owns_client = client is None
        self._client = client or AsyncOpenAI(base_url=base_url, api_key=api_key or NO_KEY,
                                             timeout=timeout, max_retries=0)

    async def aclose(self) -> None:
        """Close the HTTP client (when this model created it)."""
        if self._owns_client:
            await self._client.close()

    async def complete(
        self, *, system: str, messages: Sequence[ChatMessage], max_tokens: int
    ) -> ModelReply:
        """Ask the server; see :meth:`memory.ports.ChatModel.complete`.

        Raises:
            ModelRateLimited: 429 / 529 / overloaded after the last retry.
            ModelUnavailable: time-out, refused connection, 5xx or a broken stream after the
                last retry.
            ModelError: a request the server rejects (400, 401, 404, ...).
        """
        params = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [{"role": "system", "content": system},
                         *({"role": m.role, "content": m.content} for m in messages)],
        }
        spent = Spent()
        started = time.monotonic()
        attempts = 0

        async def attempt() -> _Answer:
            nonlocal attempts
            attempts += 1
            if self.stream:
                return await self._streamed(params, spent)
            response = await self._client.chat.completions.create(**params, timeout=self.timeout)
            _add_usage(spent, response.usage)
            choice = response.choices[0] if response.choices else None
            text = (choice.message.content or "") if choice is not None else ""
            reason = choice.finish_reason if choice is not None else None
            return _Answer(text, _STOP_REASONS.get(reason, reason), response.model or self.model)

        answer = await call_with_retries(
            attempt, classify=classify, policy=self.retry, what=f"openai-compatible {self.model}",
            is_empty=lambda a: not a.text.strip() and a.stop_reason not in _NO_RETRY_WHEN_EMPTY)
        text = answer.text
        if answer.stop_reason == "max_tokens" and text.strip():
            text = text.rstrip() + CUT_OFF_NOTE
        log.info("openai-compatible reply model=%s stream=%s attempts=%d stop=%s in=%d out=%d "
                 "cache_read=%d ms=%d", answer.model, self.stream, attempts, answer.stop_reason,
                 spent.input_tokens, spent.output_tokens, spent.cache_read_input_tokens,
                 (time.monotonic() - started) * 1000)
        return ModelReply(text=text, model=answer.model, input_tokens=spent.input_tokens,
                          output_tokens=spent.output_tokens, stop_reason=answer.stop_reason,
                          cache_read_input_tokens=spent.cache_read_input_tokens)

    async def _streamed(self, params: dict, spent: Spent) -> _Answer:
        parts: list[str] = []
        reason = None
        model = self.model
        stream = await self._client.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True}, timeout=self.timeout)
        async with stream:
            async for chunk in stream:
                model = chunk.model or model
                if chunk.usage is not None:
                    _add_usage(spent, chunk.usage)
                for choice in chunk.choices or ():
                    if choice.delta is not None and choice.delta.content:
                        parts.append(choice.delta.content)
                        streaming.report("".join(parts))
                    if choice.finish_reason:
                        reason = choice.finish_reason
        return _Answer("".join(parts), _STOP_REASONS.get(reason, reason), model)


    async def complete_structured(
        self, *, system: str, messages: Sequence[ChatMessage], schema: dict, tool_name: str,
        description: str, max_tokens: int,
    ) -> StructuredReply:
        """Ask for one object of ``schema`` with ``response_format`` ``{"type": "json_schema",
        "json_schema": {"name", "schema", "strict": false}}``; the schema is also spelled out in
        the system prompt (:func:`adapters.llm._structured.schema_instruction`) for servers that
        ignore ``response_format``, and the text is parsed leniently
        (:func:`adapters.llm._structured.parse_json_object`; a tool call's arguments count too).
        A server that rejects ``response_format`` (a 4xx other than 408/409/429) is asked once
        more without it, and this model then stops sending it. Not streamed; an empty answer is
        not retried here (the caller falls back to its rules). See
        :meth:`memory.ports.StructuredModel.complete_structured`.

        Raises:
            ModelRateLimited, ModelUnavailable, ModelError: as for :meth:`complete`.
        """
        params: dict = {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [{"role": "system", "content": system + "\n\n" + schema_instruction(schema)},
                         *({"role": m.role, "content": m.content} for m in messages)],
        }
        if self._json_schema_ok:
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": tool_name, "description": description, "schema": schema,
                "strict": False}}
        spent = Spent()
        attempts = 0

        async def attempt():
            nonlocal attempts
            attempts += 1
            response = await self._client.chat.completions.create(**params, timeout=self.timeout)
            _add_usage(spent, response.usage)
            return response

        what = f"openai-compatible {self.model} (structured)"
        try:
            response = await call_with_retries(attempt, classify=classify, policy=self.retry,
                                               what=what)
        except (ModelRateLimited, ModelUnavailable):
            raise
        except ModelError:
            if "response_format" not in params:
                raise
            log.warning("%s: the server rejected response_format; asking again without it", what)
            self._json_schema_ok = False
            del params["response_format"]
            response = await call_with_retries(attempt, classify=classify, policy=self.retry,
                                               what=what)
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content or "") if choice is not None else ""
        reason = choice.finish_reason if choice is not None else None
        data = parse_json_object(text)
        if data is None and choice is not None:
            for call in choice.message.tool_calls or ():
                function = getattr(call, "function", None)
                data = parse_json_object(getattr(function, "arguments", None))
                if data is not None:
                    break
        stop = _STOP_REASONS.get(reason, reason)
        log.info("openai-compatible structured model=%s attempts=%d stop=%s parsed=%s in=%d "
                 "out=%d", response.model or self.model, attempts, stop, data is not None,
                 spent.input_tokens, spent.output_tokens)
        return StructuredReply(data=data, reply=ModelReply(
            text=text, model=response.model or self.model, input_tokens=spent.input_tokens,
            output_tokens=spent.output_tokens, stop_reason=stop,
            cache_read_input_tokens=spent.cache_read_input_tokens))


def _add_usage(spent: Spent, usage) -> None:
    if usage is None:
        return
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    spent.add(input_tokens=max(0, (usage.prompt_tokens or 0) - cached),
              output_tokens=usage.completion_tokens, cache_read_input_tokens=cached)


def _error_type(body: object) -> str | None:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return inner.get("type") or (str(inner["code"]) if inner.get("code") else None)
    return None


def classify(exc: BaseException) -> Failure | None:
    """Map an ``openai`` SDK error onto the retry loop's :class:`Failure` (None: not an SDK
    error). 429, 529 and overloaded / rate-limit errors (also inside a stream) are rate limits;
    time-outs, refused connections, 408, 409, 5xx and other stream errors are outages; other
    statuses are fatal."""
    if isinstance(exc, openai.APITimeoutError):
        return Failure("unavailable", None, "timed out")
    if isinstance(exc, openai.APIConnectionError):
        return Failure("unavailable", None, "connection failed")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        kind = getattr(exc, "type", None) or _error_type(exc.body) or "error"
        detail = f"HTTP {status} {kind}"
        retry_after = retry_after_seconds(exc.response.headers)
        if status in (429, 529) or kind in ("rate_limit_error", "overloaded_error"):
            return Failure("rate_limited", retry_after, detail)
        if status in (401, 403):
            return Failure("misconfigured", None, detail)
        if status >= 500 or status in (408, 409):
            return Failure("unavailable", retry_after, detail)
        return Failure("fatal", None, detail)
    if isinstance(exc, openai.APIError):  # an error object inside an accepted stream
        kind = getattr(exc, "type", None) or _error_type(exc.body) or "error"
        if kind in ("rate_limit_error", "overloaded_error", "429", "529"):
            return Failure("rate_limited", None, f"{kind} in the stream")
        return Failure("unavailable", None, f"{kind} in the stream")
    if isinstance(exc, openai.OpenAIError):
        return Failure("fatal", None, type(exc).__name__)
    return None
