"""Explicit requests to remember, and tasks.

A **request** is a request verb (remember, keep in mind, note, from now on; 记住, 记一下, 以后
...) that governs a statement about the speaker, anywhere in the message, also asked politely
("could you remember that ...?", 你能记住...吗) or pointing back ("..., remember that"); not a
request: a verb with a subject before it ("I remember when ...", 我记得), a question about
memory ("do you remember ...?", 你还记得...吗), a verb governing a question or a task
("keep in mind what I like", "remember to call", 记得明天提醒我), and anything quoted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory.clauses import (
    about_the_speaker,
    after_openers,
    is_boundary,
    is_hypothetical,
    is_maxim,
    is_pleasantry,
    is_question,
    names_the_listener,
    speaker_subject,
    speaking_state,
    strip_openers,
    zh_question_word,
    zh_speaker_at,
)
from memory.lexicon import en as EN
from memory.lexicon import zh as ZH
from memory.sentences import (
    Token,
    find_phrase,
    norms,
    split_sentences,
    starts_with,
    tokens,
    without_quotes,
)
from memory.text import has_cjk, language_of


@dataclass(frozen=True, slots=True)
class Request:
    """An explicit memory request: its ``body`` (what to remember, in the user's words) and
    fact ``kind`` (``preference`` for standing instructions, else ``note``)."""

    body: str
    kind: str


def is_task(body: str, lang: str | None = None) -> bool:
    """True when what a request verb governs is something to do, not something about the
    user: "to call Mum", "remind me ...", 明天提醒我交水电费, 带伞."""
    lang = lang or language_of(body)
    body = body.strip(" ：:，,")
    if lang == "zh" or has_cjk(body):
        # times first (明天, 一会儿, a resolved date 2026-12-03, 早上七点半), then what to do
        rest, before = body, None
        while rest != before:
            before = rest.lstrip("-年月日号 ")
            rest = before.lstrip(ZH.NUMERALS)
            if rest != before:
                rest = next((rest[len(u):] for u in ZH.TIME_UNITS if rest.startswith(u)), rest)
            rest = next((rest[len(w):] for w in ZH.TASK_TIMES if rest.startswith(w)), rest)
        return rest.startswith(ZH.TASK_VERBS)
    words = norms(tokens(body))
    return bool(words) and (words[0] in EN.TASK_OPENERS or words[0] in EN.TASK_VERBS)


def _about_the_user(body: str, lang: str) -> bool:
    """A request's body is a statement about the user: it names the speaker as subject or
    possessor, is no question, no task and no supposition, and is more than one word; with the
    speaker as subject, its predicate is about them, not the listener (``about_the_speaker``:
    "I'm always here for you" is not)."""
    if not body or is_task(body, lang) or is_hypothetical(body, lang):
        return False
    if lang == "zh":
        return sum(ch.isalnum() for ch in body) >= 3 and not zh_question_word(body) \
            and about_the_speaker(body, lang)
    toks = tokens(body)
    words = after_openers(norms(toks))
    if len(words) < 2 or words[0] in EN.QUESTION_WORDS or words[0] in EN.PRONOUNS:
        return False
    if words[0] in EN.SPEAKER_SUBJECTS or words[:3] == ["me", "and", "my"]:
        return about_the_speaker(body, lang)
    # "peanuts are my least favourite snack", "Anna is my sister": a verb, then the speaker;
    # not "restaurant we went to" (the speaker in a relative clause of a noun)
    speaker = next((i for i, w in enumerate(words) if w in EN.SPEAKER_WORDS), None)
    return speaker is not None and any(w in EN.AUXILIARIES for w in words[:speaker]) and \
        not names_the_listener(body, lang)


def find_request(text: str) -> Request | None:
    """The explicit memory request in ``text``, or None (see the module docstring).

    The body is the statement the request verb governs (after it, or before it when the verb
    points back: "I work at Siemens, remember that"), with the statements of the sentences
    after it that are no questions; "from now on" bodies are standing instructions
    (``kind="preference"``)."""
    text = without_quotes(text)
    parts = split_sentences(text)
    for i, sentence in enumerate(parts):
        zh = has_cjk(sentence)
        found = _zh_request(sentence) if zh else _en_request(sentence)
        if found is None:
            continue
        body, kind, pointing, plain = found
        if pointing:  # "..., remember that" with nothing before it in the sentence: the
            # statement before, else the ones after ("能帮我记一下吗？我每周二上瑜伽课。")
            after = [p for p in parts[i + 1:] if not is_question(p)]
            if i > 0 and not is_question(parts[i - 1]):
                body = parts[i - 1]
            elif after:
                body = " ".join(after) if not zh else "".join(after)
            else:
                continue
        else:
            rest = [p for p in parts[i + 1:] if not is_question(p)]
            body = " ".join([body, *rest]) if not zh else "".join([body, *rest])
        body = _without_closers(strip_openers(body).strip()).rstrip("。.!！,，")
        lang = "zh" if has_cjk(body) else "en"
        if kind == "preference":
            # an instruction ("answer briefly from now on"), or the speaker's own standing
            # preference; not the speaker's plan with the listener ("I'll write down my
            # memories with you from now on")
            if not speaker_subject(body, lang) or about_the_speaker(body, lang):
                return Request(body, kind)
            continue
        if speaking_state(body, lang):
            continue  # "keep in mind, I'm just asking for a friend": nothing lasting
        if _about_the_user(body, lang) or (plain and _a_note(body, lang)):
            return Request(body, kind)
    return None


def _without_closers(body: str) -> str:
    """``body`` without what closes the message but says nothing: a last part that is a
    pleasantry ("I'm vegetarian, thanks!", 我吃素，谢谢) and words that close a message at its
    end ("my name's Priya btw": ``CLOSERS``)."""
    head, comma, last = body.rpartition("，" if has_cjk(body) else ",")
    if comma and head.strip() and is_pleasantry(last):
        body = head
    if not has_cjk(body):
        toks = tokens(body)
        while len(toks) > 1 and (toks[-1].norm in EN.CLOSERS or not any(
                ch.isalnum() for ch in toks[-1].norm)):
            toks = toks[:-1]
        body = body[:toks[-1].end] if toks else body
    return body


def _a_note(body: str, lang: str) -> bool:
    """A plain "Remember X." may keep a note that does not name the user ("remember the
    meeting code is 4411"): a statement of a thing (a subject, then its verb: not an
    imperative such as "just do it", "believe in yourself"), no question, task or supposition,
    not led by a pronoun, more than one word (three Chinese characters), and neither a
    pleasantry, nor said to or of the listener, nor a maxim ("staying positive is very
    important", 保持好心态非常重要: ``memory.clauses``)."""
    if not body or is_question(body) or is_task(body, lang) or is_hypothetical(body, lang) \
            or is_pleasantry(body, lang) or names_the_listener(body, lang) \
            or is_maxim(body, lang):
        return False
    if lang == "zh":
        return sum(map(has_cjk, body)) >= 3 and not zh_question_word(body) and \
            not strip_openers(body).startswith(ZH.IMPERATIVE_OPENERS)
    words = after_openers(norms(tokens(body)))
    if len(words) < 2 or words[0] in EN.QUESTION_WORDS | EN.PRONOUNS | EN.ADVERBS:
        return False
    # a subject before the first verb, all of one phrase: "the meeting code is 4411", or an
    # event of a thing: "the meeting moved to 3pm", "the pool closes at 6"
    verb = next((i for i, w in enumerate(words) if w in EN.AUXILIARIES or _event_verb(words, i)),
                None)
    subject = words[:verb] if verb else []
    return bool(subject) and all(w.isalnum() or w == "'s" for w in subject) and not any(
        w in EN.SPEAKER_WORDS | EN.LISTENER | EN.PRONOUNS for w in subject)


def _event_verb(words: list[str], i: int) -> bool:
    """``words[i]`` is the verb of an event after a subject of its own (no article alone):
    a past form ("moved", "got"), or a present "-s" form with a number after it ("closes at
    6"); sayings in the present ("the early bird catches the worm") are none."""
    word, after = words[i], words[i + 1:]
    if i == 0 or (i == 1 and words[0] in EN.ARTICLES) or not after or not word.isalpha():
        return False
    if word in EN.PAST_FORMS or (word.endswith("ed") and len(word) > 4):
        return True
    return word.endswith("s") and not word.endswith("ss") and any(w[:1].isdigit() for w in after)


def _en_request(sentence: str) -> tuple[str, str, bool, bool] | None:
    """(body, kind, pointing back, plain imperative opening the sentence) of an English
    sentence's request, or None."""
    toks = tokens(sentence)
    words = norms(toks)
    question = is_question(sentence)
    tagged = _tagged(words)
    start = 0
    while (hit := find_phrase(words, EN.REQUEST_VERBS + EN.STANDING_PHRASES, start)) is not None:
        at, length = hit
        start = at + 1
        after = at + length
        if tuple(words[at:after]) in EN.STANDING_PHRASES:
            found = _standing(sentence, toks, at, after, question=question or tagged)
            if found:
                return found, "preference", False, False
            continue
        before, polite = _before_verb(words[:at])
        if not after_openers(before):
            before = []  # "oh and remember ..."
        elif words[at - 1] in {",", ";", ":", "-", "—"}:
            before = [*before, ","]  # "my name's Priya btw, remember it"
        if before and not is_boundary(before[-1]) and not _joined_imperative(words[:at], before):
            continue  # a subject before the verb: "I remember", "do you remember", "he notes"
        if question and not polite and not tagged:
            continue  # "remember that time we ...?" asks
        rest = words[after:]
        while rest and ((tail := find_phrase(rest[:4], EN.REQUEST_TAILS)) and tail[0] == 0 or
                        rest[0] in EN.COMPLEMENTISERS and not (
                rest[0] == "this" and len(rest) > 1 and rest[1] not in {":", ",", "for"})):
            skip = tail[1] if tail and tail[0] == 0 else 1  # "remember (this) for me: ..."
            rest = rest[skip:]
            after += skip
        said = [w for w in rest if w not in {".", "!", "?", ",", "please", "for", "me"} | EN.TAGS]
        if not said or (len(said) == 1 and said[0] in EN.POINTING):
            head = _span(sentence, toks, _front(words, at), _boundary_before(words, at))
            if head and len(tokens(head)) >= 2:
                return head, "note", False, True
            return "", "note", True, True
        plain = not before and not question
        return _untagged(_span(sentence, toks, after, len(toks))), "note", False, plain
    return None


def _before_verb(words: list[str]) -> tuple[list[str], bool]:
    """The words before a request verb without softeners and a polite frame ("hey, could you
    please"), and whether there was a polite frame."""
    words = _strip_softeners(words)
    frames = [len(p) for p in EN.POLITE_ASKS if len(words) >= len(p) and words[-len(p):] == list(p)]
    if not frames:
        return words, False
    return _strip_softeners(words[:-max(frames)]), True


def _joined_imperative(words: list[str], before: list[str]) -> bool:
    """The request verb after ``words`` opens an imperative of its own joined to one before it
    ("Plan me a weekend in Rome and keep in mind I hate museums"): ``and`` / ``then`` between
    them, and the clause before has no subject of its own ("I go there and remember ..."
    narrates)."""
    joined = any(w in {"and", "then"} for w in words[len(before):])
    head = after_openers(before)
    return joined and bool(head) and head[0] not in EN.SPEAKER_SUBJECTS | EN.PRONOUNS | \
        EN.LISTENER | EN.SUBJECT_PRONOUNS and not any(w in EN.SPEAKER_SUBJECTS for w in head[:3])


def _strip_softeners(words: list[str]) -> list[str]:
    """``words`` without softeners and openers at their end ("..., and by the way, please")."""
    words = list(words)
    while words:
        if words[-3:] == ["by", "the", "way"]:
            words = words[:-3]
        elif words[-1] in EN.SOFTENERS:
            words = words[:-1]
        elif words[-1] in {",", "-"} and len(words) >= 2 and (
                words[-2] in EN.SOFTENERS or words[-2] in EN.OPENERS or words[-2] == "way"):
            words = words[:-1]
        else:
            break
    return words


def _front(words: list[str], end: int) -> int:
    """The first token of the statement in ``words[:end]``: after a polite frame, softeners
    and openers at the start of the sentence ("could you please", "oh, and")."""
    i = 0
    while i < end:
        frame = max((len(p) for p in EN.POLITE_ASKS if starts_with(words, p, i)), default=0)
        opener = find_phrase(words[:end], EN.OPENER_PHRASES, i)
        if frame:
            i += frame
        elif opener and opener[0] == i:
            i += opener[1]
        elif words[i] in EN.SOFTENERS or words[i] in EN.OPENERS or words[i] in {",", ":", "-"}:
            i += 1
        else:
            break
    return i


def _standing(sentence: str, toks: Sequence[Token], at: int, after: int, *,
              question: bool) -> str | None:
    """The instruction a "from now on" at tokens ``at``-``after`` governs, or None.

    The phrase opens the sentence (after openers and a polite frame) or a clause ("I love
    dumplings, from now on suggest dumpling places": the statement and the instruction), or
    ends it ("Please answer briefly from now on."; not "in future", which also ends wishes).
    The instruction is no question unless asked politely ("Could you reply in bullet points
    from now on?")."""
    words = norms(toks)
    front = _front(words, at)
    polite = any(starts_with(words, p, i) for p in EN.POLITE_ASKS for i in range(front + 1))
    if question and not polite:
        return None
    follows = [w for w in words[after:] if w not in {".", "!", "?", ","}]
    if follows:
        if front < at and not is_boundary(words[at - 1]):
            return None  # "I'll be going forward with the plan"
        body = _untagged(_span(sentence, toks, after, len(toks)))
        head = _span(sentence, toks, front, _boundary_before(words, at))
        if head and body and speaker_subject(head, "en"):
            # "I love dumplings, from now on suggest dumpling places": both, each a fact
            body = f"{head}, {sentence[toks[at].start:toks[after - 1].end]} {body}"
        return body or None
    if tuple(words[at:after]) in {("in", "future"), ("in", "the", "future")}:
        return None
    head = _span(sentence, toks, front, _boundary_before(words, at))
    head_words = norms(tokens(head))
    if not head_words or head_words[0] in EN.PRONOUNS | EN.QUESTION_WORDS | EN.AUXILIARIES:
        return None  # "That's how it will be from now on"
    return head


def _boundary_before(words: list[str], at: int) -> int:
    """Where the statement before a request verb at ``at`` ends (before its softeners)."""
    end = at
    while end > 0 and (words[end - 1] in EN.SOFTENERS or is_boundary(words[end - 1])):
        end -= 1
    return end


def _tagged(words: list[str]) -> bool:
    """The sentence ends with a tag question ("..., okay?", "..., will you?")."""
    tail = [w for w in words[-4:] if w not in {"?", ","}]
    return bool(tail) and words[-1:] == ["?"] and (tail[-1] in EN.TAGS
                                                 or tail[-2:] == ["will", "you"])


def _untagged(body: str) -> str:
    """``body`` without a tag question and its question mark at the end."""
    toks = tokens(body)
    words = norms(toks)
    end = len(words)
    while end and words[end - 1] in {"?", ".", "!"}:
        end -= 1
    if end >= 2 and words[end - 2:end] == ["will", "you"]:
        end -= 2
    elif end and words[end - 1] in EN.TAGS and end >= 2 and words[end - 2] == ",":
        end -= 1
    while end and words[end - 1] in {",", "-"}:
        end -= 1
    return body[:toks[end - 1].end].strip() if end else ""


def _span(text: str, toks: Sequence[Token], start: int, end: int) -> str:
    """The original text of tokens ``start`` to ``end`` (exclusive), stripped."""
    if start >= end or start >= len(toks):
        return ""
    return text[toks[start].start:toks[min(end, len(toks)) - 1].end].strip(" ,;:-")


def _zh_request(sentence: str) -> tuple[str, str, bool, bool] | None:
    """(body, kind, pointing back, plain imperative opening the sentence) of a Chinese
    sentence's request, or None."""
    question = is_question(sentence)
    for at in range(len(sentence)):
        standing = next((p for p in ZH.STANDING_PHRASES if sentence.startswith(p, at)), None)
        verb = None if standing else next(
            (v for v in ZH.REQUEST_VERBS if sentence.startswith(v, at)), None)
        if standing is None and verb is None:
            continue
        if standing is not None and sentence.startswith(ZH.NOT_STANDING, at + len(standing)):
            continue  # 以后的事, 以后再说, 以后有机会再聊: later, no standing instruction
        before = _zh_strip_softeners(sentence[:at])
        polite = any(p in sentence[max(0, at - 6):at] for p in ZH.POLITE_ASKS)
        if before and not before.endswith(tuple(ZH.CLAUSE_MARKS)):
            if standing is not None or not before.endswith(ZH.POINTING):
                continue  # 我记得, 你还记得, 十点以后
        tail = _zh_untagged(sentence)
        tagged = tail != sentence.rstrip("。！!？? ")
        if question and not polite and not tagged:
            continue
        if standing is not None:
            if before:  # 我喜欢吃饺子，以后都推荐饺子馆: the statement and the instruction
                return _zh_polite_body(tail, polite), "preference", False, False
            return _zh_polite_body(tail[at:], polite), "preference", False, False
        rest = tail[at + len(verb):]
        while rest and (rest[0] in ZH.CLAUSE_MARKS or rest.startswith(ZH.VERB_TAILS)):
            tails = [t for t in ZH.VERB_TAILS if rest.startswith(t)]
            rest = rest[max((len(t) for t in tails), default=1):]
        rest = _zh_polite_body(rest, polite)
        if not rest.strip("。！!，, "):
            head = before.rstrip("，,：: ")
            for p in ZH.POINTING:
                head = head.removesuffix(p)
            head = _zh_strip_softeners(head.rstrip("，,：: ")).rstrip("，,：: ")
            if head:
                return head, "note", False, True
            return "", "note", True, True
        if verb == "记得" and not zh_speaker_at(rest) == 0:
            return None  # 记得 + a task (记得带伞, 记得明天提醒我)
        return rest, "note", False, not before and not question


def _zh_strip_softeners(text: str) -> str:
    """``text`` without softeners at its end (请, 麻烦你, 帮我, 你, 能)."""
    changed = True
    while text and changed:
        changed = False
        for s in sorted(ZH.SOFTENERS, key=len, reverse=True):
            if text.endswith(s):
                text = text[:-len(s)]
                changed = True
                break
    return text


def _zh_untagged(sentence: str) -> str:
    """``sentence`` without a tag question (，好吗？) and its end punctuation."""
    text = sentence.rstrip("。！!？? ")
    for tag in sorted(ZH.TAGS, key=len, reverse=True):
        if text.endswith(tag):
            return text[:-len(tag)].rstrip("，, ")
    return text


def _zh_polite_body(body: str, polite: bool) -> str:
    """A polite question's body without its final 吗 (你能记住我不吃辣吗 -> 我不吃辣)."""
    body = body.rstrip("。！!？? ")
    if polite and body.endswith(("吗", "么")):
        body = body[:-1]
    return body

