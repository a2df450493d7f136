"""Chat model adapters. The offline model needs no key and no network.

The Claude and OpenAI-compatible adapters are in ``adapters/llm``; ``bot/app.py`` uses the
offline model when neither ``ANTHROPIC_API_KEY`` nor ``OPENAI_BASE_URL`` is set.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from i18n import say
from i18n.facts import fact_text
from i18n.items import day_text, item_text
from memory.recall import EPISODIC_HEADER, SEMANTIC_HEADER
from memory.text import language_of
from memory.types import (
    ChatMessage,
    Fact,
    FactStatus,
    ItemKind,
    MemoryAnswerRequest,
    ModelReply,
    RecalledItem,
)

class OfflineChatModel:
    """A chat model without a language model: it says once per conversation that none is
    configured, then answers each message with what memory recalled for it.

    It is a :class:`memory.ports.MemoryAnswerer` (the engine gives it the recalled items as
    data, see :func:`offline_answer`) and a :class:`memory.ports.ChatModel` (``complete`` lists
    the memory blocks of a system prompt, for callers that only have a prompt). Deterministic;
    reports zero tokens.
    """

    name = "offline"

    async def answer_from_memory(self, request: MemoryAnswerRequest) -> ModelReply:
        """The reply of :func:`offline_answer`."""
        return ModelReply(text=offline_answer(request), model=self.name, stop_reason="end_turn")

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
        asked = next((m.content for m in reversed(messages) if m.role == "user"), "")
        lang = language_of(asked)
        text = say(lang, "offline.disclaimer")
        if recalled:
            text += "\n" + say(lang, "offline.recalled_heading") + "\n" + "\n".join(recalled)
        else:
            text += "\n" + say(lang, "offline.nothing_related")
        return ModelReply(text=text, model=self.name, stop_reason="end_turn")


def offline_answer(request: MemoryAnswerRequest) -> str:
    """A compact answer built from what was recalled for one message.

    All its words come from the catalogue (``offline.*``) in ``request.language``.

    - The disclaimer (``offline.disclaimer``) only on the session's first reply.
    - The profile facts (``memory.profile``, in every prompt) on the session's first reply, as
      a language model would have them at hand; on later replies only those the message
      relates to.
    - Items that do not relate to the message are left out: a pinned episode (the last
      conversation, in every prompt) counts only when the recall score it earned for this
      message reaches the threshold, as every other item had to.
    - Facts first (``offline.facts_heading``): current values, then earlier ones marked
      ``earlier:`` with the dates they held; an earlier value recalled without its current
      successor (same topic, active) brings the successor. A fact stated in this very
      message is left out (the engine's "Noted:" line says it).
    - Then conversations (``offline.history_heading``): an exchange that a shown fact came from is
      left out (the fact says it, dated); one that a superseded fact came from is marked
      ``(since replaced)``.
    - ``offline.nothing_related`` when nothing is left.
    """
    lang = request.language
    facts = {f.id: f for f in request.facts}
    own = {request.turn_id} if request.turn_id is not None else set()
    related = [i for i in request.items if not i.pinned or i.score >= request.threshold
               or (i.profile and request.first_reply)]
    current: list[Fact] = []
    earlier: list[Fact] = []
    unknown: list[str] = []  # a recalled fact the request does not describe: shown as recalled
    for item in related:
        if item.kind is not ItemKind.FACT:
            continue
        fact = facts.get(_item_id(item))
        if fact is None:
            unknown.append(_shown(item, lang))
        elif not set(fact.source_turn_ids) <= own:
            (current if fact.status is FactStatus.ACTIVE else earlier).append(fact)
    for old in list(earlier):
        for new in request.facts:
            if (old.topic and new.topic == old.topic and new.status is FactStatus.ACTIVE
                    and new not in current and not set(new.source_turn_ids) <= own):
                current.append(new)
    shown_sources = {t for f in current + earlier for t in f.source_turn_ids}
    replaced_sources = {t for f in request.facts if f.status is FactStatus.SUPERSEDED
                        for t in f.source_turn_ids}
    history = []
    for item in related:
        if item.kind is ItemKind.FACT:
            continue
        turns = set(item.source_turn_ids)
        if item.kind is ItemKind.ROUND and turns & shown_sources:
            continue
        stale = item.kind is ItemKind.ROUND and turns & replaced_sources
        shown = _shown(item, lang)
        history.append(say(lang, "offline.replaced", text=shown) if stale else shown)
    lines = [say(lang, "offline.disclaimer")] if request.first_reply else []
    if current or earlier or unknown:
        lines.append(say(lang, "offline.facts_heading"))
        lines += [say(lang, "offline.current", text=fact_text(f.text), day=_day(f.valid_from, lang))
                  for f in current]
        lines += unknown
        lines += [_earlier_line(f, lang) for f in earlier]
    if history:
        lines.append(say(lang, "offline.history_heading"))
        lines += history
    if not (current or earlier or unknown or history):
        lines.append(say(lang, "offline.nothing_related"))
    return "\n".join(lines)


def _shown(item: RecalledItem, lang: str) -> str:
    """An item's line in the reply: worded from its parts in ``lang`` (``i18n.items``), else as
    the prompt has it."""
    if item.parts is None:
        return item.text
    return "- " + item_text(item.kind.value, item.parts.as_dict(), item.text, lang)


def _item_id(item: RecalledItem) -> int:
    return int(item.key.split(":", 1)[1])


def _day(value: datetime | None, lang: str) -> str:
    return day_text(value, lang)


def _earlier_line(fact: Fact, lang: str) -> str:
    if fact.status is FactStatus.ARCHIVED:
        return say(lang, "offline.archived", text=fact_text(fact.text),
                   day=_day(fact.valid_from, lang))
    return say(lang, "offline.earlier", text=fact_text(fact.text), start=_day(fact.valid_from, lang),
               end=_day(fact.valid_to, lang))
