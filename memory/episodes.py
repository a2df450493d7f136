"""Episodic memory, offline version: end phrases, and a deterministic episode of a session.

An episode holds an extractive summary of the session (the user's most informative sentences,
in order), the key data kept verbatim (numbers, amounts, dates, versions, addresses) and the
ids of the turns it covers. No language model is needed; the language-model issue adds an
abstractive summary on top of the same record.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.ports import TokenCounter
from memory.text import normalise, search_tokens, sentences
from memory.types import KeyDatum, Role, Turn

#: Whole messages that end a session (compared after :func:`memory.text.normalise`).
END_PHRASES_EN = (
    "bye", "bye bye", "goodbye", "good bye", "see you", "see you later", "see ya", "cya",
    "good night", "gn", "that's all", "that's all for now", "that's all for today",
    "that is all", "that's it for now", "that's it for today", "thats all", "we're done",
    "i'm done", "done for today", "end session", "talk later", "talk to you later", "ttyl",
)
END_PHRASES_ZH = (
    "再见", "拜拜", "拜", "先这样", "先这样吧", "就这样", "就这样吧", "结束了", "结束", "今天就到这",
    "今天就到这里", "今天就到这吧", "下次再聊", "回头聊", "晚安", "好了就这些", "就这些", "没别的了",
)
_END_PHRASES = frozenset(normalise(p) for p in END_PHRASES_EN + END_PHRASES_ZH)


def is_end_phrase(text: str) -> bool:
    """True when the whole message is an end phrase (EN/ZH list above), e.g. "Bye!" or "先这样"."""
    return normalise(text) in _END_PHRASES


# Key data: spans worth keeping verbatim because a summary would lose them.
KEY_DATA_RE = re.compile(
    r"""
    \b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b                       # ISO-like dates
    | \b\d{1,2}[:：]\d{2}\s*(?:am|pm)?\b                       # times
    | \b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?\b
    | \b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b
    | \d{4}\s*年(?:\s*\d{1,2}\s*月)?(?:\s*\d{1,2}\s*[日号])? | \d{1,2}\s*月\s*\d{1,2}\s*[日号]
    | [$€£¥￥]\s?\d[\d,]*(?:\.\d+)?                            # amounts with a currency sign
    | \b\d[\d,]*(?:\.\d+)?\s?(?:usd|eur|gbp|cny|rmb|dollars?|euros?|yuan|k|m|%)(?![a-z])
    | \d+(?:\.\d+)?\s?(?:元|块|万|亿|美元|欧元)
    | \bv?\d+\.\d+(?:\.\d+)+\b | \bv\d+(?:\.\d+)?\b           # versions
    | \b\d{1,5}\s+[A-Z][a-z]+\s+(?:street|st|road|rd|avenue|ave|lane|ln|blvd|way|drive|dr)\b
    | [\u4e00-\u9fff]{2,8}(?:路|街|大道)\d+号
    | \b\d+(?:\.\d+)?\b                                     # any other number
    """,
    re.IGNORECASE | re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class EpisodeDraft:
    """An episode computed from a session's turns, before it is stored."""

    summary: str
    key_data: tuple[KeyDatum, ...]
    turn_ids: tuple[int, ...]


def key_data_of(turns: Sequence[Turn], *, limit: int = 4) -> tuple[KeyDatum, ...]:
    """Return the sentences of user turns that hold key data, verbatim (clipped to 120
    characters), the newest ``limit`` of them in conversation order, without exact repeats.
    The cap keeps the pinned last episode small (it is in every prompt of the next session)."""
    found: list[KeyDatum] = []
    seen: set[str] = set()
    for turn in turns:
        if turn.role is not Role.USER:
            continue
        for sentence in sentences(turn.text):
            if KEY_DATA_RE.search(sentence) and normalise(sentence) not in seen:
                seen.add(normalise(sentence))
                found.append(KeyDatum(text=_clip(sentence, 120), turn_id=turn.id))
    return tuple(found[-limit:])


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def summarise_session(
    turns: Sequence[Turn], *, counter: TokenCounter, max_tokens: int = 80
) -> EpisodeDraft | None:
    """Build a deterministic extractive episode from a session's turns.

    Sentences of user turns are scored by their number of distinct content tokens (longer,
    denser sentences first; the session's first sentence gets a bonus because it usually states
    the goal), the best are taken until ``max_tokens`` (by ``counter``) and put back in
    conversation order. Speakers are named when more than one user spoke.

    Returns:
        The draft, or None when the session has no user text.
    """
    user_turns = [t for t in turns if t.role is Role.USER and t.text.strip()]
    if not user_turns:
        return None
    speakers = {t.speaker for t in user_turns}
    candidates: list[tuple[float, int, str]] = []
    order = 0
    for turn in user_turns:
        for sentence in sentences(turn.text):
            distinct = len(set(search_tokens(sentence)))
            if distinct < 2:
                order += 1
                continue
            text = f"{turn.speaker}: {sentence}" if len(speakers) > 1 and turn.speaker else sentence
            score = distinct + (4 if order == 0 else 0)
            candidates.append((score, order, _clip(text, 240)))
            order += 1
    if not candidates:
        candidates = [(1.0, 0, _clip(user_turns[0].text.strip(), 240))]
    chosen: list[tuple[int, str]] = []
    used = 0
    for score, position, text in sorted(candidates, key=lambda c: (-c[0], c[1])):
        cost = counter.count(text)
        if chosen and used + cost > max_tokens:
            continue
        chosen.append((position, text))
        used += cost
    summary = " ".join(text for _, text in sorted(chosen))
    return EpisodeDraft(
        summary=summary,
        key_data=key_data_of(turns),
        turn_ids=tuple(t.id for t in turns),
    )
