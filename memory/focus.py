"""The question inside a chatty message: "...nice weather today. Anyway, what I really want to
know is: where is the Shanghai event?" is recalled for "where is the Shanghai event?".

Small talk before the real question spreads both the dense and the lexical query over words
the user does not ask about (MemDaily's "noisy" questions: a paragraph of chatter, then
"我真正想问的是：..."; recall on them measured 0.33 against 0.60 for the same questions asked
plainly, docs/evaluation.md). When a message says where its question starts, recall uses what
follows the last such marker. Messages without a marker are unchanged.
"""

from __future__ import annotations

import re

#: "我真正想问的是：", "实际上我想问的是：", "我其实是想搞清楚，", "我真正想要了解的是：",
#: "实际上我那个问题是这个，", "我本来想说的是，", "对了，我想问，", "等等，诶，等等，": a marker, then
#: punctuation.
_ZH_MARKER = re.compile(
    r"(?:(?:真正|实际上?|其实|本来)[^，。！？：:,!?]{0,12}?(?:问|说|弄清楚|搞清楚|了解|知道|问题)"
    r"[^，。！？：:,!?]{0,6}|我想问(?:的是)?|等等[，,]\s*诶[，,]\s*等等)[：:，,]")
#: "what I really want to know is:", "my real question is", "actually, I wanted to ask:".
_EN_MARKER = re.compile(
    r"\b(?:what i (?:really|actually) (?:want(?:ed)? to (?:know|ask)|mean(?:t)?)(?: is)?"
    r"|my (?:real|actual) question(?: is)?"
    r"|(?:actually|anyway|really),? i (?:just )?(?:want(?:ed)? to (?:know|ask)|meant to ask))"
    r"\s*[:,-]?\s", re.IGNORECASE)
#: The shortest remainder taken as the question (characters); a shorter one keeps the message.
MIN_QUESTION_CHARS = 4


def focus_question(message: str) -> str:
    """Return the question a message states after a "what I really want to ask is" marker
    (English or Chinese), else ``message`` unchanged.

    Args:
        message: the user's message (already redacted).

    Returns:
        The text after the last marker, stripped, when it has at least ``MIN_QUESTION_CHARS``
        characters; otherwise ``message``.
    """
    last = None
    for pattern in (_ZH_MARKER, _EN_MARKER):
        for m in pattern.finditer(message):
            if last is None or m.end() > last:
                last = m.end()
    if last is None:
        return message
    rest = message[last:].strip()
    return rest if len(rest) >= MIN_QUESTION_CHARS else message


#: Where a question in several parts starts its next part: "A？另外，B？", "A？还有，B？",
#: "A? Also, B?", "A? And also B?".
_PART_BREAK = re.compile(
    r"(?<=[？?。！!，,；;])\s*(?:另外|此外|还有|顺便问一下|顺便问下)[，,、：:]?\s*"
    r"|(?<=[?.!;])\s+(?:and also|also|additionally|plus)[,:]?\s+", re.IGNORECASE)
#: Most parts a question is split into.
MAX_PARTS = 3


def question_parts(question: str) -> list[str]:
    """Split a question in several parts ("我同事有多高？另外，模型艺术盛宴的时间是什么？",
    "Where is Ana? Also, when is her exam?") into its parts, in order.

    Args:
        question: the (focused) question.

    Returns:
        One string per part, stripped; ``[question]`` when it has one part. A part shorter than
        ``MIN_QUESTION_CHARS`` is joined to the one before it; at most ``MAX_PARTS`` parts
        (the rest stays in the last one).
    """
    pieces = [p.strip() for p in _PART_BREAK.split(question)]
    parts: list[str] = []
    for piece in pieces:
        if parts and (len(piece) < MIN_QUESTION_CHARS or len(parts) >= MAX_PARTS):
            parts[-1] = f"{parts[-1]} {piece}".strip()
        elif piece:
            parts.append(piece)
    return parts if len(parts) > 1 else [question]


_ABOUT_ME = re.compile(
    r"\b(?:what|everything|anything|tell me)\b[^?.!]*\b(?:know|remember|recall|kept|keep|saved)"
    r"\b[^?.!]*\babout me\b|\bwho am i\b"
    r"|你(?:都)?(?:记得|知道|记住了|存了)(?:关于)?我(?:的)?(?:什么|哪些|些什么|多少)"
    r"|关于我你(?:都)?(?:知道|记得)",
    re.IGNORECASE)


def asks_about_the_user(question: str) -> bool:
    """True for a question about everything kept about the speaker ("what do you remember
    about me?", "who am I?", "你都记得我什么？"): it names no subject a memory could match, so
    recall adds the speaker's facts itself (``MemoryService.recall``)."""
    return _ABOUT_ME.search(question) is not None


#: Words that ask the assistant to remember or recall ("Do you remember that ...", "Can you
#: recall when ...", "Remember that ..." opening a sentence, "don't forget", 你还记得 / 记住 /
#: 别忘了). They are about the act of remembering, not about what is remembered, and every
#: earlier "remember that ..." matched them. "What does Joanna do to remember happy memories?"
#: keeps its words (no "you", not opening a sentence).
_RECALL_WORDS = re.compile(
    r"\b(?:do|can|could|did|would|will)\s+you\s+(?:still\s+|even\s+)?(?:remember|recall)\b"
    r"(?:\s+(?:that|when|if|whether)\b)?"
    r"|(?:^|(?<=[.!?]\s))\s*(?:please\s+)?(?:remember|recall)\b(?:\s+(?:that|when)\b)?"
    r"|\b(?:don'?t|do not)\s+forget\b(?:\s+that\b)?"
    r"|你?还?记得|记住|别忘了",
    re.IGNORECASE)


def without_recall_words(question: str) -> str:
    """``question`` without the words that ask to remember or recall (``_RECALL_WORDS``): "Do
    you remember that I'm vegetarian?" -> "I'm vegetarian?", "remember that" -> "".

    Returns:
        The rest, white space folded and stripped (possibly empty: then there is nothing to
        search for).
    """
    return re.sub(r"\s+", " ", _RECALL_WORDS.sub(" ", question)).strip(" ,，")
