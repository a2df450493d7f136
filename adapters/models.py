"""Chat model adapters. The offline model needs no key and no network.

The Claude and OpenAI-compatible adapters are in ``adapters/llm``; ``bot/app.py`` uses the
offline model when neither ``ANTHROPIC_API_KEY`` nor ``OPENAI_BASE_URL`` is set.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.recall import EPISODIC_HEADER, SEMANTIC_HEADER
from memory.types import ChatMessage, ModelReply


class OfflineChatModel:
    """A :class:`memory.ports.ChatModel` that says plainly that no language model is
    configured and shows what memory was recalled for the message (taken from the memory
    blocks of the system prompt). Deterministic; reports zero tokens."""

    name = "offline"

    async def complete(
        self, *, system: str, messages: Sequence[ChatMessage], max_tokens: int
    ) -> ModelReply:
        recalled = []
        for header in (SEMANTIC_HEADER, EPISODIC_HEADER):
            start = system.find(header)
            if start < 0:
                continue
            block = system[start + len(header):].split("\n\n", 1)[0]
            recalled += [line for line in block.splitlines() if line.strip()]
        text = ("No language model is configured (set ANTHROPIC_API_KEY or OPENAI_BASE_URL), "
                "so I can only show what I remember.")
        if recalled:
            text += "\nRecalled for this message:\n" + "\n".join(recalled)
        else:
            text += "\nNothing I remember seems related to this message."
        return ModelReply(text=text, model=self.name, stop_reason="end_turn")
