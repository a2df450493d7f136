"""What a clause is: a question, a statement of the speaker's (as subject, lasting), a
supposition, a passing state, a correction; and the words that open it without being part of
what it says. For English and Chinese, read from the lexicons."""

from __future__ import annotations

from memory.lexicon import en as EN
from memory.lexicon import zh as ZH
from memory.segmenter import segmenter
from memory.sentences import find_phrase, norms, split_sentences, starts_with, tokens
from memory.text import has_cjk, language_of

#: The closing marks a sentence may end with after its question mark or particle.
_CLOSERS = " \t\"'”’)）」』"


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
        if any(_alternative_question(sentence, w) for w in ZH.ALTERNATIVE_QUESTIONS):
            return True
        return zh_question_word(sentence)
    words = norms(tokens(sentence))
    words = after_openers(words)
    if len(words) < 2:
        return False
    first, second = words[0], words[1]
    if first in EN.AUXILIARIES and second in EN.QUESTION_SUBJECTS:
        return True
    if first in EN.QUESTION_WORDS:  # "when I was young ..." opens a clause, not a question
        return second not in EN.QUESTION_SUBJECTS and any(w in EN.AUXILIARIES
                                                          for w in words[1:3])
    return False


def _alternative_question(sentence: str, word: str) -> bool:
    """``word`` (是不是, 对不对) asks in ``sentence``: not where a negation stands before it, a
    denial said twice (不对不对, 不是不是)."""
    at = sentence.find(word)
    while at >= 0:
        if not sentence.startswith(ZH.NEGATION, at - len(ZH.NEGATION)) or at == 0:
            return True
        at = sentence.find(word, at + 1)
    return False


def zh_question_word(sentence: str) -> bool:
    """True when a Chinese question word stands in ``sentence`` without a marker after it
    that makes it mean "any" (什么都吃, 哪儿都不想去)."""
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


def after_openers(words: list[str]) -> list[str]:
    """``words`` without the openers in front ("oh, and", "by the way", "ok so") and the
    speaker's pointing back at their own words ("I told you (that)", "as I said":
    ``SAYING_FRAMES``)."""
    i = 0
    while i < len(words):
        phrase = find_phrase(words, EN.OPENER_PHRASES, i)
        frame = find_phrase(words, EN.SAYING_FRAMES, i)
        if frame and frame[0] == i:  # "I told you (that) ...", "as I said, ..."
            i += frame[1]
            while i < len(words) and words[i] in EN.FRAME_TAILS:
                i += 1  # "like I said before, ...", "as I told you earlier, that ..."
        elif phrase and phrase[0] == i:
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
        return zh_speaker_at(clause) is not None
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
        if not after_openers(words[:i]) or is_boundary(words[i - 1]):
            return True
    return False


def zh_speaker_at(clause: str) -> int | None:
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
    at = zh_speaker_at(clause)
    if at is None:
        return False
    rest = clause[at + 1:]
    return not rest.startswith(("的", "们的", *ZH.OTHER_PEOPLE))


def lasting_statement(clause: str, lang: str | None = None) -> bool:
    """True when the speaker is the subject with a verb or noun of lasting things right after
    (past adverbs) and a predicate about them: "I have two cats", "I mainly use Go", "my wife
    is ...", 我养了两只猫, 我平时喝茶 (``STATEMENT_HEADS``); "I think so", 我想问 are not, nor a
    predicate of a pronoun or the listener alone ("I love it", "I'm here for you", 我也喜欢这样:
    :func:`about_the_speaker`)."""
    lang = lang or language_of(clause)
    if not about_the_speaker(clause, lang):
        return False
    if lang == "zh" or has_cjk(clause):
        at = clause.find(ZH.SPEAKER)
        while at >= 0:
            if zh_speaker_at(clause[at:]) == 0 and not clause[:at].endswith(ZH.OBJECT_MARKERS):
                rest = clause[at + 1:].removeprefix("们").removeprefix("的")
                for adverb in ZH.ADVERBS:
                    rest = rest.removeprefix(adverb)
                head = next((h for h in ZH.STATEMENT_HEADS if rest.startswith(h)), None)
                if head is not None and _zh_said_of(rest[len(head):]):
                    return True
            at = clause.find(ZH.SPEAKER, at + 1)
        return False
    words = norms(tokens(clause))
    for i, word in enumerate(words):
        if word in {"i", "my"} and speaker_subject(" ".join(words[max(0, i - 3):]), "en"):
            j = i + 1
            while j < len(words) and words[j] in EN.ADVERBS:
                j += 1
            if j < len(words) and words[j] in EN.STATEMENT_HEADS and _en_said_of(words[j + 1:]):
                return True
    return False


# ----------------------------------------------------------------- what a clause is about
# (and where a sentence's clauses are: ``clause_spans``, ``zh_clause_spans``)

def about_the_speaker(clause: str, lang: str | None = None) -> bool:
    """True when ``clause`` may state something about the speaker: the speaker (or the
    speaker's own) is its subject (:func:`speaker_subject`), and it is no pleasantry
    (:func:`is_pleasantry`) and does not speak to or of the listener
    (:func:`names_the_listener`: "I'm always here for you", 我一直在你身边)."""
    lang = lang or language_of(clause)
    return speaker_subject(clause, lang) and not is_pleasantry(clause, lang) and \
        not names_the_listener(clause, lang)


def names_the_listener(clause: str, lang: str | None = None) -> bool:
    """True when ``clause`` names the listener (you, your, yourself; 你, 您): it is said to or
    about them ("believe in yourself", "I'm proud of you", 你永远是最棒的); set phrases such
    as "you know", "thank you", 跟你说 (``LISTENER_FILLERS``) do not count."""
    lang = lang or language_of(clause)
    if lang == "zh" or has_cjk(clause):
        for filler in ZH.LISTENER_FILLERS:
            clause = clause.replace(filler, "")
        return any(w in clause for w in ZH.LISTENER)
    words = norms(tokens(clause))
    i = 0
    while i < len(words):
        filler = find_phrase(words, EN.LISTENER_FILLERS, i)
        if filler is None:
            return any(w in EN.LISTENER for w in words[i:])
        if any(w in EN.LISTENER for w in words[i:filler[0]]):
            return True
        i = filler[0] + filler[1]
    return False


def is_pleasantry(clause: str, lang: str | None = None) -> bool:
    """True when ``clause`` is a pleasantry, thanks, greeting or acknowledgement, with or
    without a name it is said to ("Thanks, Caroline!", "Yep!", "Nice one, Gina!", 谢谢！,
    好的好的, 嗯嗯): made of ``PLEASANTRIES`` alone, besides names (English: capitalised words
    other than "I"; Chinese: up to three characters left over) and punctuation."""
    lang = lang or language_of(clause)
    if lang == "zh" or has_cjk(clause):
        rest, found = "".join(ch for ch in clause if ch.isalnum()), False
        changed = True
        while changed:
            changed = False
            for word in ZH.PLEASANTRIES:
                if word in rest:
                    rest, found, changed = rest.replace(word, ""), True, True
        return found and len(rest) <= 3 and ZH.SPEAKER not in rest
    found = False
    for t in tokens(clause):
        if t.norm in EN.PLEASANTRIES:
            found = True
        elif t.norm.isalnum() and not (clause[t.start].isupper() and t.norm != "i"):
            return False
    return found


def is_maxim(clause: str, lang: str | None = None) -> bool:
    """True when ``clause`` is a saying about everyone rather than a statement about someone:
    its subject is an activity ("staying positive is very important", "to be kind ..."),
    everyone ("everybody makes mistakes", 一切都会好起来的) or an abstract noun with its verb
    ("money doesn't grow on trees", 失败是成功之母: ``ABSTRACT_SUBJECTS``), or it judges (a judgement word
    before or just after a copula: "honesty is the best policy", "the best is yet to come";
    保持好心态非常重要: a degree word)."""
    lang = lang or language_of(clause)
    if lang == "zh" or has_cjk(clause):
        said = strip_openers(clause)
        first = next(iter(segmenter().cut(said)), "")
        return any(w in clause for w in ZH.DEGREE_WORDS) or \
            said.startswith(ZH.GENERIC_SUBJECTS) or first in ZH.ABSTRACT_SUBJECTS
    words = [w for w in after_openers(norms(tokens(clause)))
             if w not in EN.ADVERBS | EN.FREQUENCY_ADVERBS]  # "sometimes, ..." generalises
    if not words:
        return False
    gerund = words[0].endswith("ing") and len(words[0]) > 4 and len(words) > 1 and \
        words[1] not in EN.COPULAS  # "staying positive is ...", not "spring is ..."
    if words[0] in EN.GENERIC_SUBJECTS or words[0] == "to" or gerund:
        return True
    if words[0] in EN.ABSTRACT_SUBJECTS and len(words) > 1 and (
            words[1] in EN.AUXILIARIES | EN.NEGATIONS or words[1].endswith("s")):
        return True  # "money does not grow on trees", "time heals everything"
    copula = next((i for i, w in enumerate(words) if w in EN.COPULAS | {"was", "were"}), None)
    if copula is None:
        return False
    value = [w for w in words[copula + 1:copula + 4] if w not in EN.ARTICLES]
    return (bool(value) and value[0] in EN.NOT_VALUES) or any(
        w in EN.NOT_VALUES for w in words[:copula])  # "the best is yet to come"


def _en_said_of(predicate: list[str]) -> bool:
    """The rest of a statement after its verb says something of the speaker: a word that is
    no pronoun, adverb or auxiliary ("I love it", "I have been there too" say nothing)."""
    return any(w.isalnum() and w not in EN.PRONOUNS | EN.ADVERBS | EN.AUXILIARIES
               | EN.LISTENER | {"been", "so", "too", "a", "the"} for w in predicate)


def _zh_said_of(predicate: str) -> bool:
    """The same for Chinese: the rest after the verb is more than a pronoun (我也喜欢这样)."""
    rest = "".join(ch for ch in predicate if ch.isalnum())
    for tail in ZH.VALUE_TAILS:
        rest = rest.removesuffix(tail)
    return bool(rest) and rest not in ZH.PRONOUNS


def clause_spans(words: list[str]) -> list[tuple[int, int]]:
    """English ``words`` (tokens' norms) cut into clauses, as (start, end) token offsets: a
    boundary word (``CLAUSE_BOUNDARIES``: punctuation, "so", "since", "but", "because" ...)
    opens a new one, except "so" as a degree word ("I'm so allergic") and a word before a
    number ("since 2019")."""
    cuts = [0]
    for k in range(1, len(words)):
        word, nxt = words[k], words[k + 1] if k + 1 < len(words) else ""
        if word not in EN.CLAUSE_BOUNDARIES or nxt[:1].isdigit():
            continue
        if word == "so" and words[k - 1] != "," and nxt not in EN.SPEAKER_SUBJECTS | \
                EN.PRONOUNS | EN.NEGATIONS:
            continue
        if cuts[-1] == k - 1 and words[k - 1] in EN.CLAUSE_BOUNDARIES:
            continue  # ", so ...": one cut
        cuts.append(k)
    return [(a, b) for a, b in zip(cuts, [*cuts[1:], len(words)]) if a < b]


def zh_clause_spans(clause: str) -> list[tuple[int, int]]:
    """Chinese ``clause`` cut into clauses at punctuation and at ``CLAUSE_WORDS`` (所以, 因为,
    但是), as (start, end) character offsets without the cutting marks and words."""
    out, start, i = [], 0, 0
    while i < len(clause):
        word = next((w for w in ZH.CLAUSE_WORDS if clause.startswith(w, i)), None)
        if clause[i] in ZH.CLAUSE_MARKS or word:
            if i > start:
                out.append((start, i))
            i += len(word) if word else 1
            start = i
            continue
        i += 1
    if start < len(clause):
        out.append((start, len(clause)))
    return out


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
    words = after_openers(norms(tokens(clause)))
    return bool(words) and words[0] in EN.HYPOTHETICAL


def is_transient(clause: str, lang: str | None = None) -> bool:
    """True when ``clause`` speaks of a passing state ("I'm tired today", 今天好累): it holds
    for the moment, not beyond."""
    lang = lang or language_of(clause)
    if lang == "zh" or has_cjk(clause):
        return any(w in clause for w in ZH.TRANSIENT)
    words = norms(tokens(clause))
    return any(w in EN.TRANSIENT for w in words) or find_phrase(words, EN.TRANSIENT_PHRASES) \
        is not None


def speaking_state(clause: str, lang: str | None = None) -> bool:
    """True when ``clause`` says what the speaker is doing or feeling as they speak ("I'm just
    asking for a friend", "I'm so tired", 我只是随便问问, 我好累): the speaker, a copula and
    adverbs, then a word of ``PASSING_STATES``; nothing in it lasts beyond the moment."""
    lang = lang or language_of(clause)
    clause = strip_openers(clause)
    if lang == "zh" or has_cjk(clause):
        if not clause.startswith(ZH.SPEAKER):
            return False
        rest = clause[1:]
        changed = True
        while changed:
            changed = False
            for word in (*ZH.ADVERBS, "只是", "就是", "有点", "好", "太"):
                if rest.startswith(word):
                    rest, changed = rest[len(word):], True
        return rest.startswith(ZH.PASSING_STATES)
    words = norms(tokens(clause))
    if len(words) < 3 or words[0] not in {"i", "we"} or words[1] not in {"am", "are"}:
        return False
    rest = words[2:]
    while rest and rest[0] in EN.ADVERBS | {"a", "bit", "little", "kind", "of"}:
        rest = rest[1:]  # "I'm just", "I'm a bit", "I'm kind of"
    # "I'm tired of my job" lasts
    return bool(rest) and rest[0] in EN.PASSING_STATES and rest[1:2] != ["of"]


def is_correction(text: str) -> bool:
    """True when the message corrects the assistant: it opens with "no", "actually",
    "that's wrong", 不对, 其实, 我说错了 ... (``CORRECTION_OPENERS``), or its first sentence
    owns up to a mistake ("Sorry, I got that wrong, ...", "Wait, I mixed that up: ...",
    不好意思说错了, 口误: ``ERROR_ADMISSIONS``)."""
    stripped = text.strip()
    first_sentence = (split_sentences(stripped) or [stripped])[0]
    if has_cjk(stripped[:6]):
        rest = stripped
        for polite in ZH.APOLOGIES:
            rest = rest.removeprefix(polite).lstrip("，,！! ")
        return rest.startswith(ZH.CORRECTION_OPENERS) or any(
            w in first_sentence for w in ZH.ERROR_ADMISSIONS)
    words = norms(tokens(stripped))
    while words and words[0] in {"oh", "ah", "hmm", "um", "well", "sorry", "wait", ","}:
        words = words[1:]  # "Sorry, no, it's 41"
    first = next((words[:i] for i, w in enumerate(words) if not w.isalnum()), words)
    if len(first) > 1 and all(w in EN.PLEASANTRIES for w in first):
        return False  # "No worries, Jon!", "No thanks": a pleasantry, no correction
    return any(starts_with(words, p) for p in EN.CORRECTION_OPENERS) or \
        find_phrase(norms(tokens(first_sentence)), EN.ERROR_ADMISSIONS) is not None


def strip_openers(text: str) -> str:
    """``text`` without the words that open it but are not part of what it says
    ("Actually I'm 33 now" -> "I'm 33 now", "其实我住在上海" -> "我住在上海"), a pleasantry
    before a comma ("Thanks Jon, I'm vegan" -> "I'm vegan", 好的，我吃素 -> 我吃素) and a name
    the speaker addresses before their own words ("Jon, my flat is on the fourth floor")."""
    text = text.strip()
    if has_cjk(text[:4]):
        changed = True
        while changed:
            changed = False
            for opener in sorted(ZH.OPENERS + ZH.SAYING_FRAMES, key=len, reverse=True):
                if text.startswith(opener):
                    text = text[len(opener):].lstrip("，,：: ")
                    changed = True
            head, comma, rest = text.partition("，")
            if comma and rest and is_pleasantry(head, "zh"):
                text, changed = rest.lstrip("，,：: "), True
        return text
    while True:
        toks = tokens(text)
        words = norms(toks)
        kept = after_openers(words)
        start = len(words) - len(kept)
        comma = next((i for i in range(start, len(words)) if words[i] == ","), None)
        if comma is not None and comma + 1 < len(words) and (
                is_pleasantry(text[toks[start].start:toks[comma].start], "en") or (
                    comma == start + 1 and text[toks[start].start].isupper()
                    and words[start] != "i" and words[comma + 1] in EN.SPEAKER_SUBJECTS)):
            text = text[toks[comma + 1].start:]  # "Thanks Jon, ...", "Jon, I'm vegan"
            continue
        if start == len(words) or start == 0:
            return text
        return text[toks[start].start:]


def is_boundary(word: str) -> bool:
    """A token that ends a clause before a request verb ("...,", "and", "so")."""
    return word in {",", ";", ":", "-", "—", "–", ".", "!", "and", "but", "so", "also", "then"}

