"""What a user's words mean, per language: a question, the speaker as subject, a request to
remember, a task, a correction, a hypothetical, a passing state.

One definition of each, for English and Chinese, read from the lexicons
(``memory.lexicon.en`` / ``memory.lexicon.zh``). Every rule is a row of :data:`RULES` with its
own examples that must and must not satisfy it; one parametrised test runs every row.

English text is read as tokens (:func:`tokens`: lowercase words, contractions expanded,
possessive ``'s`` apart, punctuation as tokens, each with its span in the original text);
Chinese text as characters, with the lexicons' words found by position.

A **request** is a request verb (remember, keep in mind, note, from now on; 记住, 记一下, 以后
...) that governs a statement about the speaker, anywhere in the message, also asked politely
("could you remember that ...?", 你能记住...吗) or pointing back ("..., remember that"); not a
request: a verb with a subject before it ("I remember when ...", 我记得), a question about
memory ("do you remember ...?", 你还记得...吗), a verb governing a question or a task
("keep in mind what I like", "remember to call", 记得明天提醒我), and anything quoted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory.lexicon import en as EN
from memory.lexicon import zh as ZH
from memory.text import has_cjk, language_of

#: One English token: a word with inner apostrophes or hyphens, or one other character.
_TOKEN_RE = re.compile(r"[A-Za-z0-9\u00c0-\u024f]+(?:['’][A-Za-z]+|[-+#][A-Za-z0-9+#]*)*|\S")
#: Quoted spans (straight, curly and CJK quotes): someone's words, not the user's statement.
_QUOTED_RE = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」|『[^』\n]*』")
#: Sentence ends: . ! ? followed by white space, 。！？ anywhere, line breaks.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
#: The closing marks a sentence may end with after its question mark or particle.
_CLOSERS = " \t\"'”’)）」』"


@dataclass(frozen=True, slots=True)
class Token:
    """An English token: ``norm`` (lowercase, apostrophes folded) and its span in the text."""

    norm: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """``text`` as English tokens (see the module docstring): "I'm" -> ``i``, ``am``;
    "partner's" -> ``partner``, ``'s``; both parts keep the span of the whole word."""
    out: list[Token] = []
    for m in _TOKEN_RE.finditer(text):
        word = m.group().replace("’", "'").lower()
        if word in EN.CONTRACTIONS:
            out.extend(Token(part, m.start(), m.end()) for part in EN.CONTRACTIONS[word])
        elif word.endswith("'s") and len(word) > 2:
            out.append(Token(word[:-2], m.start(), m.end() - 2))
            out.append(Token("'s", m.end() - 2, m.end()))
        else:
            out.append(Token(word, m.start(), m.end()))
    return out


def norms(toks: Sequence[Token]) -> list[str]:
    """The ``norm`` of each token."""
    return [t.norm for t in toks]


def starts_with(words: Sequence[str], phrase: Sequence[str], at: int = 0) -> bool:
    """True when ``words[at:]`` begins with ``phrase``."""
    return tuple(words[at:at + len(phrase)]) == tuple(phrase)


def find_phrase(words: Sequence[str], phrases: Sequence[Sequence[str]],
                start: int = 0) -> tuple[int, int] | None:
    """The first (position, length) at or after ``start`` where one of ``phrases`` stands in
    ``words`` (the longest phrase wins at a position), or None."""
    for i in range(start, len(words)):
        best = max((len(p) for p in phrases if starts_with(words, p, i)), default=0)
        if best:
            return i, best
    return None


def split_sentences(text: str) -> list[str]:
    """``text`` split into sentences (. ! ? 。！？ and line breaks), stripped; a full stop after
    an abbreviation ("Dr. Okafor", ``ABBREVIATIONS``) or between digits ends none."""
    out: list[str] = []
    for piece in _SENTENCE_END_RE.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if out and _ends_in_abbreviation(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _ends_in_abbreviation(sentence: str) -> bool:
    if not sentence.endswith("."):
        return False
    words = sentence[:-1].split()
    return bool(words) and words[-1].lower().strip("(\"'") in EN.ABBREVIATIONS


def without_abbreviation_dots(text: str) -> str:
    """``text`` with the full stop after an abbreviation dropped ("Dr. Okafor" -> "Dr Okafor",
    "St. Elena" -> "St Elena"), so it ends no sentence or value."""
    out, last = [], 0
    for t in tokens(text):
        if t.norm in EN.ABBREVIATIONS and text[t.end:t.end + 1] == "." and \
                text[t.end + 1:t.end + 2] == " ":
            out.append(text[last:t.end])
            last = t.end + 1
    return "".join(out) + text[last:]


def without_quotes(text: str) -> str:
    """``text`` with quoted spans replaced by "…": what someone else said, or words to
    translate, are not the user's statements."""
    return _QUOTED_RE.sub("…", text)


# ----------------------------------------------------------------- questions

def is_question(sentence: str) -> bool:
    """True when ``sentence`` asks: it ends with a question mark or a Chinese question particle
    (吗 么 呢 嘛); or, in English, it opens with an auxiliary and a subject ("do you ...",
    "is it ...") or with a question word and an auxiliary ("where do I ...", "which bank am
    I ..."); or, in Chinese, it holds a question word that does not mean "any" (什么都吃) or
    an alternative question (是不是, 能不能)."""
    end = sentence.rstrip(_CLOSERS)
    if end.endswith(("?", "？")):
        return True
    if has_cjk(sentence):
        bare = end.rstrip("。.!！~～")
        if bare.endswith(ZH.QUESTION_PARTICLES):
            return True
        if any(w in sentence for w in ZH.ALTERNATIVE_QUESTIONS):
            return True
        return _zh_question_word(sentence)
    words = norms(tokens(sentence))
    words = _after_openers(words)
    if len(words) < 2:
        return False
    first, second = words[0], words[1]
    if first in EN.AUXILIARIES and second in EN.QUESTION_SUBJECTS:
        return True
    if first in EN.QUESTION_WORDS:  # "when I was young ..." opens a clause, not a question
        return second not in EN.QUESTION_SUBJECTS and any(w in EN.AUXILIARIES
                                                          for w in words[1:3])
    return False


def _zh_question_word(sentence: str) -> bool:
    for word in ZH.QUESTION_WORDS:
        at = sentence.find(word)
        while at >= 0:
            after = sentence[at + len(word):at + len(word) + 3]
            if not any(m in after for m in ZH.UNIVERSAL_MARKERS):
                return True
            at = sentence.find(word, at + 1)
    return False


def asks(text: str) -> bool:
    """True when some sentence of ``text`` is a question (:func:`is_question`)."""
    return any(is_question(s) for s in split_sentences(text))


def _after_openers(words: list[str]) -> list[str]:
    """``words`` without the openers in front ("oh, and", "by the way", "ok so")."""
    i = 0
    while i < len(words):
        phrase = find_phrase(words, EN.OPENER_PHRASES, i)
        if phrase and phrase[0] == i:
            i += phrase[1]
        elif words[i] in EN.OPENERS or words[i] in {",", ":", "-", "!"}:
            i += 1
        else:
            break
    return words[i:]


# ----------------------------------------------------------------- the speaker

def speaker_subject(clause: str, lang: str | None = None) -> bool:
    """True when ``clause`` is said about the speaker: its subject is the speaker or the
    speaker's own ("I ...", "my sister ...", 我..., 我的X..., 我女儿...), not inside a
    subordinate or hypothetical part ("if I moved ...", 如果我...) and not only as an object
    ("can you help me", 给我)."""
    lang = lang or language_of(clause)
    if lang == "zh" or has_cjk(clause):
        return _zh_speaker_at(clause) is not None
    words = norms(tokens(clause))
    for i, word in enumerate(words):
        if word not in EN.SPEAKER_SUBJECTS:
            continue
        before = words[max(0, i - 3):i]
        if any(w in EN.SUBORDINATORS or w in EN.REPORTING for w in before):
            continue
        if word in {"i", "we"}:
            return True
        # "my" / "our" open the subject only at the start of a clause ("my bank is ..."; not
        # "write an email to my landlord")
        if not _after_openers(words[:i]) or _is_boundary(words[i - 1]):
            return True
    return False


def _zh_speaker_at(clause: str) -> int | None:
    """Where the speaker stands as subject or possessor in a Chinese clause, or None."""
    at = clause.find(ZH.SPEAKER)
    while at >= 0:
        before = clause[max(0, at - 4):at]
        if not before.endswith(ZH.OBJECT_MARKERS) and not any(
                s in clause[:at] for s in ZH.SUBORDINATORS):
            return at
        at = clause.find(ZH.SPEAKER, at + 1)
    return None


def zh_speaker_is_subject(clause: str) -> bool:
    """True when 我 in ``clause`` is the speaker acting (我住在, 我现在不吃), not the
    possessor of another subject (我朋友, 我的老婆) and not an object."""
    at = _zh_speaker_at(clause)
    if at is None:
        return False
    rest = clause[at + 1:]
    return not rest.startswith(("的", "们的", *ZH.OTHER_PEOPLE))


def lasting_statement(clause: str, lang: str | None = None) -> bool:
    """True when the speaker is the subject with a verb or noun of lasting things right after
    (past adverbs): "I have two cats", "I mainly use Go", "my wife is ...", 我养了两只猫,
    我平时喝茶 (``STATEMENT_HEADS``); "I think so", 我想问 are not."""
    lang = lang or language_of(clause)
    if lang == "zh" or has_cjk(clause):
        at = clause.find(ZH.SPEAKER)
        while at >= 0:
            if _zh_speaker_at(clause[at:]) == 0 and not clause[:at].endswith(ZH.OBJECT_MARKERS):
                rest = clause[at + 1:].removeprefix("们").removeprefix("的")
                for adverb in ZH.ADVERBS:
                    rest = rest.removeprefix(adverb)
                if rest.startswith(ZH.STATEMENT_HEADS):
                    return True
            at = clause.find(ZH.SPEAKER, at + 1)
        return False
    words = norms(tokens(clause))
    for i, word in enumerate(words):
        if word in {"i", "my"} and speaker_subject(" ".join(words[max(0, i - 3):]), "en"):
            j = i + 1
            while j < len(words) and words[j] in EN.ADVERBS:
                j += 1
            if j < len(words) and words[j] in EN.STATEMENT_HEADS:
                return True
    return False


def mentions_speaker(text: str, lang: str | None = None) -> bool:
    """True when ``text`` names the speaker at all (I, me, my, 我)."""
    lang = lang or language_of(text)
    if lang == "zh" or has_cjk(text):
        return ZH.SPEAKER in text
    return any(t.norm in EN.SPEAKER_WORDS for t in tokens(text))


def has_cue(text: str) -> bool:
    """True when ``text`` holds a word that tends to open a lasting statement about someone's
    life (prefer, allergic, moved, wife, 喜欢, 过敏, 搬, 老婆 ...: ``CANDIDATE_CUES``)."""
    if has_cjk(text) and any(w in text for w in ZH.CANDIDATE_CUES):
        return True
    words = norms(tokens(text))
    return any(w in EN.CANDIDATE_CUES for w in words) or \
        find_phrase(words, (("can", "not", "stand"),)) is not None


def is_hypothetical(clause: str, lang: str | None = None) -> bool:
    """True when ``clause`` opens a condition or a supposition ("if I lived in Tokyo",
    假如我搬到东京): what it says does not hold as said."""
    lang = lang or language_of(clause)
    if lang == "zh" or has_cjk(clause):
        return clause.lstrip(" ，,").startswith(ZH.SUBORDINATORS[:6])
    words = _after_openers(norms(tokens(clause)))
    return bool(words) and words[0] in {"if", "suppose", "supposing", "imagine",
                                        "hypothetically", "assuming"}


def is_transient(clause: str, lang: str | None = None) -> bool:
    """True when ``clause`` speaks of a passing state ("I'm tired today", 今天好累): it holds
    for the moment, not beyond."""
    lang = lang or language_of(clause)
    if lang == "zh" or has_cjk(clause):
        return any(w in clause for w in ZH.TRANSIENT)
    words = norms(tokens(clause))
    return any(w in EN.TRANSIENT for w in words) or find_phrase(words, EN.TRANSIENT_PHRASES) \
        is not None


def is_correction(text: str) -> bool:
    """True when the message corrects the assistant: it opens with "no", "actually",
    "that's wrong", 不对, 其实, 我说错了 ... (``CORRECTION_OPENERS``)."""
    stripped = text.strip()
    if has_cjk(stripped[:6]):
        return stripped.startswith(ZH.CORRECTION_OPENERS)
    words = norms(tokens(stripped))
    while words and words[0] in {"oh", "ah", "hmm", "um", "well", "sorry", "wait", ","}:
        words = words[1:]  # "Sorry, no, it's 41"
    return any(starts_with(words, p) for p in EN.CORRECTION_OPENERS)


def strip_openers(text: str) -> str:
    """``text`` without the words that open it but are not part of what it says
    ("Actually I'm 33 now" -> "I'm 33 now", "其实我住在上海" -> "我住在上海")."""
    text = text.strip()
    if has_cjk(text[:4]):
        changed = True
        while changed:
            changed = False
            for opener in sorted(ZH.OPENERS, key=len, reverse=True):
                if text.startswith(opener):
                    text = text[len(opener):].lstrip("，,：: ")
                    changed = True
        return text
    toks = tokens(text)
    words = norms(toks)
    kept = _after_openers(words)
    if len(kept) == len(words) or not kept:
        return text
    return text[toks[len(words) - len(kept)].start:]


# ----------------------------------------------------------------- requests and tasks

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
        # a time first (明天, 一会儿, a resolved date 2026-12-03), then what to do
        rest = body.lstrip("0123456789-年月日号 ")
        for when in ZH.TASK_TIMES:
            rest = rest.removeprefix(when)
        return rest.startswith(ZH.TASK_VERBS)
    words = norms(tokens(body))
    return bool(words) and (words[0] in EN.TASK_OPENERS or words[0] in EN.TASK_VERBS)


def _about_the_user(body: str, lang: str) -> bool:
    """A request's body is a statement about the user: it names the speaker as subject or
    possessor, is no question, no task and no supposition, and is more than one word."""
    if not body or is_task(body, lang) or is_hypothetical(body, lang):
        return False
    if lang == "zh":
        return len(re.sub(r"\W", "", body)) >= 3 and not _zh_question_word(body) \
            and _zh_speaker_at(body) is not None
    toks = tokens(body)
    words = _after_openers(norms(toks))
    if len(words) < 2 or words[0] in EN.QUESTION_WORDS or words[0] in EN.PRONOUNS:
        return False
    if words[0] in EN.SPEAKER_SUBJECTS or words[:3] == ["me", "and", "my"]:
        return True
    # "peanuts are my least favourite snack", "Anna is my sister": a verb, then the speaker;
    # not "restaurant we went to" (the speaker in a relative clause of a noun)
    speaker = next((i for i, w in enumerate(words) if w in EN.SPEAKER_WORDS), None)
    return speaker is not None and any(w in EN.AUXILIARIES for w in words[:speaker])


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
        if pointing:  # "..., remember that" with nothing before it in the sentence
            if i == 0 or is_question(parts[i - 1]):
                continue
            body = parts[i - 1]
        else:
            rest = [p for p in parts[i + 1:] if not is_question(p)]
            body = " ".join([body, *rest]) if not zh else "".join([body, *rest])
        body = strip_openers(body).strip().rstrip("。.!！,，")
        lang = "zh" if has_cjk(body) else "en"
        if kind == "preference" or _about_the_user(body, lang) or (
                plain and _a_note(body, lang)):
            return Request(body, kind)
    return None


def _a_note(body: str, lang: str) -> bool:
    """A plain "Remember X." may keep a note that does not name the user ("remember the
    meeting code is 4411"): no question, task or supposition, not led by a pronoun, and more
    than one word (three Chinese characters)."""
    if not body or is_question(body) or is_task(body, lang) or is_hypothetical(body, lang):
        return False
    if lang == "zh":
        return sum(map(has_cjk, body)) >= 3 and not _zh_question_word(body)
    words = _after_openers(norms(tokens(body)))
    return len(words) >= 2 and words[0] not in EN.QUESTION_WORDS | EN.PRONOUNS


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
        if before and not _is_boundary(before[-1]):
            continue  # a subject before the verb: "I remember", "do you remember", "he notes"
        if question and not polite and not tagged:
            continue  # "remember that time we ...?" asks
        rest = words[after:]
        while rest and rest[0] in EN.COMPLEMENTISERS and not (
                rest[0] == "this" and len(rest) > 1 and rest[1] not in {":", ","}):
            rest = rest[1:]
            after += 1
        said = [w for w in rest if w not in {".", "!", "?", ",", "please"} | EN.TAGS]
        if not said or (len(said) == 1 and said[0] in EN.POINTING):
            head = _span(sentence, toks, _front(words, at), _boundary_before(words, at))
            if head and len(tokens(head)) >= 2:
                return head, "note", False, False
            return "", "note", True, False
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
        if front < at and not _is_boundary(words[at - 1]):
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


def _is_boundary(word: str) -> bool:
    """A token that ends a clause before a request verb ("...,", "and", "so")."""
    return word in {",", ";", ":", "-", "—", "–", ".", "!", "and", "but", "so", "also", "then"}


def _boundary_before(words: list[str], at: int) -> int:
    """Where the statement before a request verb at ``at`` ends (before its softeners)."""
    end = at
    while end > 0 and (words[end - 1] in EN.SOFTENERS or _is_boundary(words[end - 1])):
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
                return head, "note", False, False
            return "", "note", True, False
        if verb == "记得" and not _zh_speaker_at(rest) == 0:
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


# ----------------------------------------------------------------- the rule table

@dataclass(frozen=True)
class Rule:
    """One rule of the language module with the examples that show it: every ``yes`` example
    satisfies ``check``, no ``no`` example does."""

    name: str
    lang: str
    check: Callable[[str], bool]
    yes: tuple[str, ...]
    no: tuple[str, ...]


def _requested(text: str) -> bool:
    return find_request(text) is not None


RULES: tuple[Rule, ...] = (
    Rule("question", "en", is_question,
         ("Should I take the train?", "Do you live in Graz", "where do I live",
          "Which bank am I with", "Is it normal that my cat sleeps all day?",
          "Can you suggest a film for tonight"),
         ("Don't message me on weekends.", "When I was young I lived in Rome.",
          "I live in Graz.", "What I like is jazz.", "Have a nice day.")),
    Rule("question", "zh", is_question,
         ("我需要带护照吗", "我的牙医是谁", "周末去哪儿玩比较好", "你是不是忘了", "今晚做点什么菜好",
          "沙爹酱我能吃吗？"),
         ("我什么都吃。", "我住在上海。", "别在周末给我发消息。", "我哪儿都不想去。")),
    Rule("speaker", "en", lambda s: speaker_subject(s, "en"),
         ("I live in Graz", "My dentist is Dr. Weber", "we are vegan", "Oh, my bike is a Cube"),
         ("Can you help me with this?", "If I moved to Tokyo, what would rent cost",
          "Priya moved to Lisbon", "He said I was wrong",
          "Write me a short email to my landlord")),
    Rule("speaker", "zh", lambda s: speaker_subject(s, "zh"),
         ("我住在上海", "我的牙医是王医生", "我女儿对猫毛过敏", "其实我不吃香菜"),
         ("别在周末给我发消息", "假如我搬到东京", "你能帮我看看吗", "他叫李明")),
    Rule("request", "en", _requested,
         ("Remember that I prefer tea.", "Please answer briefly from now on.",
          "Could you reply in bullet points from now on?",
          "I'm planning a trip, and by the way, remember that my passport expires in March.",
          "Can you keep in mind that I work night shifts?",
          "My flat is on the fourth floor, please remember that.",
          "Would you mind remembering that my partner's name is Alex?",
          "Hey, could you note down that my son's practice is on Wednesdays?",
          "Remember I'm vegan, okay?", "Don't forget that I'm left-handed.",
          "Remember the meeting code is 4411."),
         ("Can you suggest a film, keeping in mind what I like?", "Remember to call the plumber.",
          "Do you remember what I told you about my sister?",
          "I remember when we used to drive to the coast.",
          'My grandmother always said "remember that you are loved".',
          "Keep in mind this is only hypothetical: if I moved to Tokyo, what would rent cost?",
          "Remember that time we went to Rome?", "I can't remember that.", "Thanks. Remember that.",
          "Can you remember what I said about Rome?")),
    Rule("request", "zh", _requested,
         ("记住我不吃辣", "以后回答我尽量简短一点，好吗？", "对了，你帮我记一下，我女儿对猫毛过敏。",
          "你能记住我每周四晚上有合唱排练吗？", "我的车牌号是沪A12345，记住了啊。",
          "顺便说一句，请记住我的工位在三楼东边。", "我在西门子工作，记住了", "请以后都用繁体字回复我。"),
         ("周末有什么好玩的推荐吗？记着我喜欢什么。", "记得明天提醒我交水电费。", "你还记得我上次说的那家火锅店吗？",
          "我记得小时候每年暑假都去外婆家。", "我老板常说“记住，客户永远是对的”。", "我朋友说他还记得那场大雪。",
          "晚上十点以后不要给我发通知。", "记得带伞")),
    Rule("task", "en", lambda s: is_task(s, "en"),
         ("to call Mum tomorrow", "remind me about the dentist"),
         ("my dentist is Dr. Weber", "I take the bus to work")),
    Rule("task", "zh", lambda s: is_task(s, "zh"),
         ("明天提醒我交水电费", "带伞", "给妈妈打电话", "2026-12-03提醒我交水电费"),
         ("我明天要去看牙医", "我不吃辣", "2026-12-04是我妈妈的生日")),
    Rule("correction", "en", is_correction,
         ("No, I live in Linz", "Actually, my landlord is Mr. Brandl", "That's wrong, it's 5",
          "Correction: my bike is a Canyon", "Sorry, no, it's 41."),
         ("I live in Linz", "Nobody knows", "Now I use Go", "Sorry, I'm late")),
    Rule("correction", "zh", is_correction,
         ("不对，我住在上海", "我说错了，我的工号是A1032", "更正一下，我的搭档是阿伟"),
         ("我住在上海", "对了，我搬家了")),
    Rule("lasting statement", "en", lambda s: lasting_statement(s, "en"),
         ("I have two cats", "I mainly use Go", "My wife is a teacher", "I really love jazz"),
         ("I think so", "My tortoise Humphrey loves strawberries", "nice weather today",
          "Can you help me")),
    Rule("lasting statement", "zh", lambda s: lasting_statement(s, "zh"),
         ("我养了两只猫", "我平时喝茶", "我老婆是老师"), ("今天天气不错", "给我讲个笑话", "他有两只猫")),
    Rule("hypothetical", "en", lambda s: is_hypothetical(s, "en"),
         ("If I moved to Tokyo, what would rent cost?", "Suppose I quit my job"),
         ("I moved to Tokyo", "My gym is FitZone")),
    Rule("hypothetical", "zh", lambda s: is_hypothetical(s, "zh"),
         ("假如我搬到东京住", "如果我辞职了"), ("我搬到东京了", "我的健身房是乐刻")),
    Rule("transient", "en", lambda s: is_transient(s, "en"),
         ("I'm exhausted and a bit grumpy this morning", "I'm tired today"),
         ("I'm allergic to peanuts", "I have two cats")),
    Rule("transient", "zh", lambda s: is_transient(s, "zh"),
         ("今天好累啊，心情有点烦", "我现在很饿"), ("我对芒果过敏", "我养了两只猫")),
)
