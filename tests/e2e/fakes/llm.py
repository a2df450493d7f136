"""A fake language-model server on 127.0.0.1 (aiohttp.web) for the real ``anthropic`` and
``openai`` clients.

One server speaks two protocols:

- Anthropic Messages API: ``POST /v1/messages``; a JSON message, or server-sent events
  (``message_start``, ``content_block_*``, ``ping``, ``message_delta``, ``message_stop``, and
  ``error``) when the request says ``"stream": true``.
- OpenAI chat completions: ``POST /v1/chat/completions``; a ``chat.completion`` object, or
  ``chat.completion.chunk`` events ending with ``data: [DONE]`` (usage in a last chunk when
  ``stream_options.include_usage`` is set), errors inside the stream as ``{"error": {...}}``.

Each request takes the next step of :attr:`FakeLLMServer.script` (an empty script answers
"ok") and is recorded with its raw body in :attr:`FakeLLMServer.requests`. Steps:
:class:`Answer` (text, stop reason, usage, or raw content blocks such as thinking and tool_use),
:class:`Fail` (an HTTP error status with headers such as ``retry-after``), :class:`StreamError`
(HTTP 200, then an error event, optionally after some text; a non-streaming request gets 500)
and :class:`Stall` (wait before answering, to make the client time out), :class:`Hold` (wait
until the test lets the answer go).
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from dataclasses import dataclass, field
from typing import Union

from aiohttp import web

DEFAULT_USAGE = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
_FINISH = {"end_turn": "stop", "max_tokens": "length", "tool_use": "tool_calls",
           "refusal": "content_filter", "stop_sequence": "stop"}


@dataclass
class Answer:
    """A successful reply. ``blocks`` (Anthropic content blocks) replaces ``text`` when given;
    an empty list is an empty content list."""

    text: str = "ok"
    stop_reason: str = "end_turn"
    blocks: list[dict] | None = None
    usage: dict = field(default_factory=lambda: dict(DEFAULT_USAGE))

    def content(self) -> list[dict]:
        if self.blocks is not None:
            return self.blocks
        return [{"type": "text", "text": self.text}]


@dataclass
class Fail:
    """An HTTP error: ``status`` with an error body of ``error_type`` and extra ``headers``."""

    status: int
    error_type: str = "api_error"
    headers: dict = field(default_factory=dict)


@dataclass
class StreamError:
    """HTTP 200, ``after_text`` as text deltas, then an ``error`` event of ``error_type``."""

    error_type: str = "overloaded_error"
    after_text: str = ""


@dataclass
class Stall:
    """Wait ``seconds`` (the client should give up first), then answer ``then``."""

    seconds: float
    then: Answer = field(default_factory=Answer)


@dataclass
class Hold:
    """Wait until the test sets ``gate`` (or the server closes), then answer ``then``."""

    gate: asyncio.Event
    then: Answer = field(default_factory=Answer)


Step = Union[Answer, Fail, StreamError, Stall, Hold]


@dataclass
class Recorded:
    """One request as received: path, headers (lower-case names) and the raw body bytes."""

    path: str
    headers: dict
    body: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.body)

    def raw_field(self, name: str) -> bytes:
        """The exact bytes of a top-level JSON field's value as the client sent them."""
        text = self.body.decode()
        decoder = json.JSONDecoder()
        index = 0
        depth = 0
        # walk the top-level object: find `"name":` at depth 1
        while index < len(text):
            char = text[index]
            if char == '"':
                value, end = decoder.raw_decode(text, index)
                rest = text[end:].lstrip()
                if depth == 1 and value == name and rest.startswith(":"):
                    start = end + (len(text[end:]) - len(rest)) + 1
                    while text[start] in " \t\r\n":
                        start += 1
                    _, stop = decoder.raw_decode(text, start)
                    return text[start:stop].encode()
                index = end
                continue
            if char in "{[":
                depth += 1
            elif char in "}]":
                depth -= 1
            index += 1
        raise KeyError(name)


def _words(text: str) -> list[str]:
    parts = text.split(" ")
    return [p + (" " if i < len(parts) - 1 else "") for i, p in enumerate(parts)]


def _last_user_text(payload: dict) -> str:
    for message in reversed(payload.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
            return str(content)
    return ""


class FakeLLMServer:
    """Start with :meth:`start`, stop with :meth:`close`; script with :meth:`push`."""

    def __init__(self, *, echo: bool = False) -> None:
        self.echo = echo  # an empty script answers "answer to: <the last user message>"
        self.script: deque[Step] = deque()
        self.requests: list[Recorded] = []
        self._runner: web.AppRunner | None = None
        self._stop = asyncio.Event()
        self.port = 0

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> FakeLLMServer:
        app = web.Application()
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/v1/chat/completions", self._openai)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def close(self) -> None:
        self._stop.set()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *steps: Step) -> None:
        self.script.extend(steps)

    async def _next(self, request: web.Request) -> tuple[Step, dict]:
        body = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append(Recorded(request.path, headers, body))
        step = self.script.popleft() if self.script else Answer()
        if isinstance(step, Stall):
            try:
                await asyncio.wait_for(self._stop.wait(), step.seconds)
            except asyncio.TimeoutError:
                pass
            step = step.then
        elif isinstance(step, Hold):
            stop = asyncio.ensure_future(self._stop.wait())
            gate = asyncio.ensure_future(step.gate.wait())
            await asyncio.wait([stop, gate], return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            gate.cancel()
            step = step.then
        if self.echo and isinstance(step, Answer) and step.text == "ok" and step.blocks is None:
            step = Answer(f"answer to: {_last_user_text(json.loads(body))}")
        return step, json.loads(body)

    # -- Anthropic -------------------------------------------------------------------------

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        step, payload = await self._next(request)
        if isinstance(step, Fail):
            return web.json_response(
                {"type": "error", "error": {"type": step.error_type, "message": "scripted"}},
                status=step.status, headers=step.headers)
        if not payload.get("stream"):
            if isinstance(step, StreamError):
                return web.json_response({"type": "error", "error": {
                    "type": "api_error", "message": "scripted"}}, status=500)
            return web.json_response(self._message(payload, step, step.content()))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def send(event: str, data: dict) -> None:
            await response.write(f"event: {event}\ndata: {json.dumps(data)}\n\n".encode())

        answer = step if isinstance(step, Answer) else Answer(text=step.after_text)
        start = self._message(payload, answer, [])
        start["stop_reason"] = None
        start["usage"] = dict(answer.usage, output_tokens=1)
        await send("message_start", {"type": "message_start", "message": start})
        await send("ping", {"type": "ping"})
        blocks = answer.content() if isinstance(step, Answer) else (
            [{"type": "text", "text": step.after_text}] if step.after_text else [])
        for index, block in enumerate(blocks):
            await self._anthropic_block(send, index, block)
        if isinstance(step, StreamError):
            await send("error", {"type": "error", "error": {"type": step.error_type,
                                                            "message": "scripted"}})
            return response
        await send("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": answer.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": answer.usage.get("output_tokens", 0)}})
        await send("message_stop", {"type": "message_stop"})
        return response

    @staticmethod
    async def _anthropic_block(send, index: int, block: dict) -> None:
        kind = block["type"]
        if kind == "text":
            await send("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": {"type": "text", "text": ""}})
            for piece in _words(block["text"]):
                await send("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "text_delta", "text": piece}})
        elif kind == "thinking":
            await send("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": {"type": "thinking",
                                                                 "thinking": "", "signature": ""}})
            await send("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "thinking_delta",
                                                         "thinking": block["thinking"]}})
            await send("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "signature_delta",
                                                         "signature": block.get("signature", "s")}})
        elif kind == "tool_use":
            await send("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": {"type": "tool_use",
                                                                 "id": block["id"],
                                                                 "name": block["name"],
                                                                 "input": {}}})
            await send("content_block_delta", {"type": "content_block_delta", "index": index,
                                               "delta": {"type": "input_json_delta",
                                                         "partial_json": json.dumps(
                                                             block.get("input", {}))}})
        await send("content_block_stop", {"type": "content_block_stop", "index": index})

    @staticmethod
    def _message(payload: dict, answer: Answer, content: list[dict]) -> dict:
        return {"id": "msg_fake", "type": "message", "role": "assistant", "model": payload["model"],
                "content": content, "stop_reason": answer.stop_reason, "stop_sequence": None,
                "usage": dict(answer.usage)}

    # -- OpenAI ----------------------------------------------------------------------------

    async def _openai(self, request: web.Request) -> web.StreamResponse:
        step, payload = await self._next(request)
        if isinstance(step, Fail):
            return web.json_response(
                {"error": {"type": step.error_type, "message": "scripted", "code": None}},
                status=step.status, headers=step.headers)
        if not payload.get("stream"):
            if isinstance(step, StreamError):
                return web.json_response({"error": {"type": "api_error", "message": "scripted"}},
                                         status=500)
            return web.json_response(self._completion(payload, step))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def send(data: dict | str) -> None:
            text = data if isinstance(data, str) else json.dumps(data)
            await response.write(f"data: {text}\n\n".encode())

        def chunk(delta: dict, finish: str | None = None) -> dict:
            return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                    "model": payload["model"], "choices": [
                        {"index": 0, "delta": delta, "finish_reason": finish}]}

        answer = step if isinstance(step, Answer) else Answer(text=step.after_text)
        await send(chunk({"role": "assistant", "content": ""}))
        message = self._openai_message(answer)
        if message.get("reasoning_content"):
            await send(chunk({"reasoning_content": message["reasoning_content"]}))
        for piece in _words(message["content"] or "") if message["content"] else ():
            await send(chunk({"content": piece}))
        if message.get("tool_calls"):
            calls = [dict(call, index=i) for i, call in enumerate(message["tool_calls"])]
            await send(chunk({"tool_calls": calls}))
        if isinstance(step, StreamError):
            await send({"error": {"type": step.error_type, "message": "scripted"}})
            return response
        await send(chunk({}, _FINISH.get(answer.stop_reason, answer.stop_reason)))
        if (payload.get("stream_options") or {}).get("include_usage"):
            await send({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                        "model": payload["model"], "choices": [],
                        "usage": self._openai_usage(answer)})
        await send("[DONE]")
        return response

    @staticmethod
    def _openai_message(answer: Answer) -> dict:
        texts, thoughts, calls = [], [], []
        for block in answer.content():
            if block["type"] == "text":
                texts.append(block["text"])
            elif block["type"] == "thinking":
                thoughts.append(block["thinking"])
            elif block["type"] == "tool_use":
                calls.append({"id": block["id"], "type": "function", "function": {
                    "name": block["name"], "arguments": json.dumps(block.get("input", {}))}})
        message: dict = {"role": "assistant", "content": "".join(texts) if texts else None}
        if thoughts:
            message["reasoning_content"] = "".join(thoughts)
        if calls:
            message["tool_calls"] = calls
        return message

    @staticmethod
    def _openai_usage(answer: Answer) -> dict:
        usage = answer.usage
        cached = usage.get("cache_read_input_tokens", 0)
        prompt = usage.get("input_tokens", 0) + cached + usage.get("cache_creation_input_tokens", 0)
        return {"prompt_tokens": prompt, "completion_tokens": usage.get("output_tokens", 0),
                "total_tokens": prompt + usage.get("output_tokens", 0),
                "prompt_tokens_details": {"cached_tokens": cached}}

    def _completion(self, payload: dict, answer: Answer) -> dict:
        return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0,
                "model": payload["model"], "choices": (
                    [] if answer.blocks == [] else
                    [{"index": 0, "message": self._openai_message(answer),
                      "finish_reason": _FINISH.get(answer.stop_reason, answer.stop_reason)}]),
                "usage": self._openai_usage(answer)}
