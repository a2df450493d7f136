"""Episodic memory, offline version: end phrases, and a deterministic episode of a session.

An episode holds an extractive summary of the session (the user's most informative sentences,
in order), the key data kept verbatim (numbers, amounts, dates, versions, addresses) and the
ids of the turns it covers. No language model is needed; the language-model issue adds an
abstractive summary on top of the same record.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from memory.ports import TokenCounter
from memory.records import EpisodeDraft
from memory.language import is_question
from memory.text import language_of, normalise, search_tokens, sentences, stem_english
from memory.topic_statements import match_topics
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


_GOAL = re.compile(r"\b(?:I want to|I'd like to|I would like to|I'm trying to|I am trying to|help me|"
                   r"I need to|I'm looking for|I am looking for|my goal is)\b|我想|我要|帮我|我需要|我在找|目标是",
                   re.IGNORECASE)
_DECISION = re.compile(r"\b(?:let's|let us|we'll|we will|I'll go with|I will go with|I've decided|I decided|"
                       r"we decided|we agreed|decided to|going with|settled on|we chose|I chose|I'll take)\b"
                       r"|决定|就用|定了|选了|就这么办|那就", re.IGNORECASE)
_TASK = re.compile(r"\b(?:still need to|need to|have to|must|should|todo|to-do|remind me to|"
                   r"don't forget to|we still|next step)\b|还要|还需要|需要|得去|记得|待办|下一步|别忘了",
                   re.IGNORECASE)
_DONE = re.compile(r"\b(?:done|finished|booked|bought|sent|paid|submitted|completed|fixed|"
                   r"took care of|sorted|already)\b|搞定|做完|订好|买好|完成|已经", re.IGNORECASE)
_STATE = re.compile(r"\b(?:I'm|I am|I feel|I've been|I was) (?:so |really |very |a bit |quite )?"
                    r"(?:tired|stressed|exhausted|sick|ill|anxious|worried|excited|happy|sad|"
                    r"overwhelmed|frustrated|busy|in a hurry|nervous|upset)\b"
                    r"|我(?:好|很|有点|特别)?(?:累|焦虑|担心|开心|难过|紧张|忙|烦|生病)", re.IGNORECASE)


_REMIND = re.compile(r"\bremind me\b|\bdon't let me forget\b|提醒我|记得提醒", re.IGNORECASE)


#: Words of greetings, thanks and goodbyes: a sentence made only of them ("Thanks, bye",
#: "Okay great!", 谢谢，再见) says nothing about the session and is left out of the summary.
#: The Chinese ones are segmented when first needed (by a sentence with Chinese in it): jieba's
#: dictionary costs ~1 s and ~78 MB, and an English-only bot never loads it.
_PLEASANTRY_EN = frozenset(search_tokens(
    "hi hello hey thanks thank you so much very bye goodbye good night ok okay great cool sure "
    "see you later talk soon yeah yes no nope lol haha wow awesome nice again appreciate it "
    "that's all for now"))
_PLEASANTRY_ZH = "谢谢 好的 再见 拜拜 嗯 你好 好 哈哈 好吧 了 啊 呀 哦"


@lru_cache(maxsize=1)
def _pleasantry_zh() -> frozenset[str]:
    return frozenset(search_tokens(_PLEASANTRY_ZH))


def _pleasantry(sentence: str) -> bool:
    """True when every search token of ``sentence`` is a greeting, thanks or goodbye word."""
    tokens = set(search_tokens(sentence)) - _PLEASANTRY_EN
    return not tokens or (not all(t.isascii() for t in tokens) and tokens <= _pleasantry_zh())


def _content(text: str) -> set[str]:
    """Content words of ``text``: English words stemmed (Snowball: "called" = "call"), longer
    than two letters; Chinese words as jieba splits them."""
    tokens = [t for t in search_tokens(text) if len(t) > 2 or not t.isascii()]
    return set(stem_english([t for t in tokens if t.isascii()])) | {t for t in tokens if not t.isascii()}


def _extract(turns: Sequence[Turn]) -> tuple[list[str], list[str], list[str], list[str]]:
    """Goal, decision, task and state sentences of the user turns, in order."""
    goals, decisions, tasks, states = [], [], [], []
    for turn in turns:
        if turn.role is not Role.USER:
            continue
        for sentence in sentences(turn.text):
            clipped = _clip(sentence, 160)
            if _GOAL.search(sentence):
                goals.append(clipped)
            if _DECISION.search(sentence):
                decisions.append(clipped)
            if (_TASK.search(sentence) and not _DONE.search(sentence)
                    and (not is_question(sentence) or _REMIND.search(sentence))):  # asks: no task
                tasks.append(clipped)
            if _STATE.search(sentence):
                states.append(clipped)
    return goals, decisions, tasks, states


#: A Chinese verb with a completion complement ("订好", "做完", "打过"): the verb alone is the
#: task's word ("订").
_ZH_DONE_VERB = re.compile(r"^([\u4e00-\u9fff])(?:好|完|过|掉)$")
_PAST = re.compile(r"\b[a-z]{3,}ed\b", re.IGNORECASE)


def _done_words(sentence: str) -> set[str]:
    """Content words of a sentence that may report a task done, with 订好 -> 订 as well."""
    words = _content(sentence)
    return words | {m.group(1) for w in words if (m := _ZH_DONE_VERB.match(w))}


def _close_done(tasks: Sequence[str], turns: Sequence[Turn]) -> list[str]:
    """Drop tasks that a later user sentence reports done: a completion word ("booked", 订好,
    "already") or the task's own verb in the past tense ("I called Mum" for "call Mum"), plus
    at least two of the task's content words (stemmed; 订好 counts as 订), or all of them when
    it has fewer."""
    said = [s for t in turns if t.role is Role.USER for s in sentences(t.text)]
    open_ = []
    for task in tasks:
        words = _content(task) - _content("need to have to still must should remind 还要 需要")
        need = min(2, len(words)) or 1
        if any(len(words & _done_words(d)) >= need and (
                _DONE.search(d) or any(_content(p.group()) & words for p in _PAST.finditer(d)))
               for d in said if not is_question(d)):
            continue
        open_.append(task)
    return open_


def _unique(items, limit: int | None = None) -> tuple:
    seen, out = set(), []
    for item in items:
        key = normalise(item.text if isinstance(item, KeyDatum) else item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return tuple(out[-limit:] if limit else out)


def personal_statement(sentence: str) -> bool:
    """True when ``sentence`` is the user stating who they are or what they must avoid: a
    first-person statement of one of their attributes (``memory.topics``: name, home, work,
    languages, allergies, diet, ...), not a question. Such a sentence is key data: a summary
    chosen by word count drops short ones ("I'm allergic to peanuts.") for longer requests."""
    return not is_question(sentence) and bool(match_topics(sentence, language_of(sentence)))


def key_data_of(turns: Sequence[Turn], *, limit: int | None = 4) -> tuple[KeyDatum, ...]:
    """Return the sentences of user turns that hold key data (numbers, dates, amounts,
    versions, addresses, or a personal statement: :func:`personal_statement`), verbatim
    (clipped to 120 characters), the newest ``limit`` of them in conversation order, without
    exact repeats. The cap keeps the pinned last episode small (it is in every prompt of the
    next session)."""
    found: list[KeyDatum] = []
    seen: set[str] = set()
    for turn in turns:
        if turn.role is not Role.USER:
            continue
        for sentence in sentences(turn.text):
            if normalise(sentence) in seen:
                continue
            if KEY_DATA_RE.search(sentence) or personal_statement(sentence):
                seen.add(normalise(sentence))
                found.append(KeyDatum(text=_clip(sentence, 120), turn_id=turn.id))
    return tuple(found[-limit:] if limit else found)


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1].rstrip() + "…"


def summarise_session(
    turns: Sequence[Turn],
    *,
    counter: TokenCounter,
    max_tokens: int = 80,
    previous: EpisodeDraft | None = None,
    carried_tasks: Sequence[str] = (),
) -> EpisodeDraft | None:
    """Build a deterministic extractive episode, or fold new turns into ``previous``.

    Sentences are scored by their number of distinct content tokens (longer, denser sentences
    first); the session's first sentence, and the previous summary's sentences when folding,
    get a bonus (the goal is usually stated first, and a fold must not lose what was already
    summarised). The best are taken until ``max_tokens`` (by ``counter``) and put back in
    conversation order. Key data, decisions and open tasks are the union of the previous draft
    and the new turns (nothing earlier is dropped; key data is kept verbatim; a personal
    statement the summary already holds is not repeated as key data); open tasks carried
    from the previous session of the thread stay open until a turn reports them done.

    Args:
        turns: the new turns, oldest first (all of a session, or those since the last fold).
        counter: the product's token counter.
        max_tokens: summary length in tokens.
        previous: the running episode to update (folding); None for a fresh episode.
        carried_tasks: open tasks of the thread's previous episode.

    Returns:
        The draft, or None when there is no user text at all.
    """
    user_turns = [t for t in turns if t.role is Role.USER and t.text.strip()]
    if not user_turns and previous is None:
        return None
    speakers = tuple(dict.fromkeys(t.speaker for t in user_turns if t.speaker))
    if previous is not None:
        speakers = tuple(dict.fromkeys(previous.participants + speakers))
    candidates: list[tuple[float, int, str]] = []
    order = 0
    if previous is not None:
        for sentence in sentences(previous.summary):
            candidates.append((len(_content(sentence)) + 6, order, sentence))
            order += 1
    for turn in user_turns:
        for sentence in sentences(turn.text):
            distinct = len(set(search_tokens(sentence)))
            if distinct < 2 or _pleasantry(sentence):
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
    goals, decisions, tasks, states = _extract(turns)
    prev_tasks = tuple(previous.open_tasks) if previous else ()
    open_tasks = _close_done(_unique([*carried_tasks, *prev_tasks, *tasks]), turns)
    said = normalise(summary)  # a personal statement the summary kept is not repeated
    new_data = [k for k in key_data_of(turns, limit=None)
                if KEY_DATA_RE.search(k.text) or normalise(k.text) not in said]
    return EpisodeDraft(
        summary=summary,
        key_data=_unique([*(previous.key_data if previous else ()), *new_data]),
        turn_ids=tuple(dict.fromkeys([*(previous.turn_ids if previous else ()),
                                      *(t.id for t in turns)])),
        goal=(previous.goal if previous and previous.goal else (goals[0] if goals else None)),
        decisions=_unique([*(previous.decisions if previous else ()), *decisions], limit=12),
        open_tasks=tuple(open_tasks[-12:]),
        state=states[-1] if states else (previous.state if previous else None),
        participants=speakers,
    )
