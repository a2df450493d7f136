"""Constraints the assistant must respect from their first mention: allergies, diets,
medical conditions and prohibitions of the speaker ("don't message me on weekends",
别在周末给我发消息).

A constraint word counts only where it is predicated of the speaker in its own clause: as a
state ("I'm allergic", "I got allergic", 我乳糖不耐受, 我对芒果过敏), as something they have
("I have type 1 diabetes", "I suffer from migraines", 我有高血压, 我是素食者), or as the
predicate itself ("I can't eat pork", 我不吃香菜); not under a wish, a condition or a
negation ("I wish I wasn't allergic", "if I can find any I'm not allergic to", 我希望我不过敏),
not as the attribute of a thing ("I made vegan ice cream", 我做了素食冰淇淋). A sentence is cut
into clauses at punctuation and at "so", "since", "but", "because" (所以, 因为, 但是 ...), and
the constraint's text is its clause alone ("I'm lactose intolerant, so I'll need the
dairy-free recipe" -> "I'm lactose intolerant").
"""

from __future__ import annotations

from memory import language as L
from memory.lexicon import en as EN
from memory.lexicon import zh as ZH
from memory.segmenter import segmenter
from memory.text import has_cjk

_EN_TIMES = frozenset({"today", "tonight", "tomorrow", "yesterday"})
_ZH_TIMES = ("今天", "今晚", "明天", "昨天", "刚才")
#: Most tokens between a verb of having and the constraint word ("I have a mild nut allergy").
_HAVING_SPAN = 5
#: Most tokens between a copula and the constraint word ("I'm severely lactose intolerant").
_STATE_SPAN = 3


def constraint(clause: str, lang: str) -> bool:
    """True when ``clause`` states a constraint the assistant must respect from its first
    mention (:func:`constraint_text` finds one)."""
    return constraint_text(clause, lang) is not None


def constraint_text(clause: str, lang: str) -> str | None:
    """The part of ``clause`` (one sentence) that states a constraint of the speaker's, as
    said: an allergy, intolerance, diet or medical condition predicated of the speaker ("I'm
    allergic to sesame", "I have type 1 diabetes", 我乳糖不耐受), or a prohibition addressed to
    the assistant about the speaker ("please don't message me on weekends", "no ibuprofen for
    me", 别在周末给我发消息); consecutive clauses that both state one are kept together ("I'm
    on blood thinners, so no ibuprofen for me"). None for questions, suppositions, passing
    states and anything else (see the module docstring)."""
    if L.is_question(clause) or L.is_hypothetical(clause, lang):
        return None
    if lang == "zh" or has_cjk(clause):
        return _zh_constraint(clause)
    toks = L.tokens(clause)
    words = L.norms(toks)
    if any(w in _EN_TIMES for w in words):
        return None
    spans = [_en_part(words, a, b) for a, b in L.clause_spans(words)]
    first = next((k for k, span in enumerate(spans) if span is not None), None)
    if first is None:
        return None
    last = first
    while last + 1 < len(spans) and spans[last + 1] is not None:
        last += 1  # neighbouring clauses that state one too
    start, end = spans[first][0], spans[last][1]
    while end > start + 1 and not words[end - 1].isalnum():
        end -= 1  # the full stop after "no ibuprofen for me."
    return clause[toks[start].start:toks[end - 1].end]


def _en_part(words: list[str], a: int, b: int) -> tuple[int, int] | None:
    """The span (token offsets) of the constraint clause ``words[a:b]`` states, or None."""
    for i in range(a, b):
        if words[i] not in {"i", "we"}:
            continue
        if any(w in EN.NOT_HOLDING or w in EN.REPORTING for w in words[a:i]):
            continue  # "I wish I wasn't ...", "if I can find any I'm not allergic to"
        if _en_predicated(words, i + 1, b):
            end = next((k for k in range(i + 2, b) if words[k] in {"i", "we"}), b)
            while end > i + 1 and words[end - 1] in {"and", "or", "then", ","}:
                end -= 1
            return i, end
    rest = words[a:b]
    while rest and (rest[0] in EN.CLAUSE_BOUNDARIES or not rest[0].isalnum()):
        rest = rest[1:]
    if rest[:1] == ["no"] and len(rest) > 1 and rest[1].isalnum() and L.find_phrase(
            rest, (("for", "me"), ("for", "us"))) is not None:
        return b - len(rest), b  # "no ibuprofen for me"
    if not rest[:1] == ["no"]:  # "no texts after 10pm": "no" opens the prohibition
        rest = L.after_openers(rest)
    opens = any(L.starts_with(rest, p) for p in EN.PROHIBITION_OPENERS)
    verb = next((k for k, w in enumerate(rest[:6]) if w in EN.CONTACT_VERBS), None)
    if opens and verb is not None and (any(w in EN.SPEAKER_WORDS for w in rest) or (
            rest[verb + 1:verb + 2] or ["."])[0] in EN.TIME_PREPOSITIONS | {".", "!", "please"}):
        # "please don't message me on weekends"; "no texts after 10pm": contacting, with no
        # object, is contacting the speaker
        return b - len(rest), b
    return None


def _skip(words: list[str], j: int, end: int, skipped: frozenset[str]) -> int:
    while j < end and words[j] in skipped:
        j += 1
    return j


def _has_constraint(words: list[str]) -> bool:
    return any(w in EN.CONSTRAINT_WORDS for w in words) or \
        L.find_phrase(words, EN.CONSTRAINT_PHRASES) is not None


def _en_predicated(words: list[str], j: int, end: int) -> bool:
    """A constraint is predicated of the subject before token ``j`` (see the module
    docstring): "am allergic", "got allergic", "have been vegan", "have type 1 diabetes",
    "suffer from migraines", "am on blood thinners", "can't eat pork"."""
    j = _skip(words, j, end, EN.ADVERBS)
    if any(L.starts_with(words[:end], p, j) for p in EN.CONSTRAINT_PREDICATES):
        return True
    k = _skip(words, j, end, frozenset({"have", "to", "need", "must", "try", "always"}))
    abstain = L.find_phrase(words[k:end], EN.ABSTAINING)
    if abstain and abstain[0] == 0:  # "I don't do dairy", "I try to avoid gluten"
        k = _skip(words, k + abstain[1], end, EN.ARTICLES | frozenset({"any", "all"}))
        return k < end and words[k] in EN.RESTRICTED_FOODS
    if j + 1 < end and words[j] in {"have", "has", "was", "were"} and \
            words[j + 1] in EN.CONSTRAINT_COPULAS | EN.CONSTRAINT_HAVING:
        j = _skip(words, j + 1, end, EN.ADVERBS)  # "I've been", "I was diagnosed"
    if j >= end or words[j] in EN.NEGATIONS:
        return False
    if words[j] in EN.CONSTRAINT_COPULAS:
        k = _skip(words, j + 1, end, EN.ADVERBS)
        if k < end and words[k] in EN.NEGATIONS:
            return False
        k = _skip(words, k, end, EN.ARTICLES | {"on"})
        window = []
        for w in words[k:min(k + _STATE_SPAN, end)]:
            if not w.isalnum() and "-" not in w:
                break
            window.append(w)
            if w.endswith(("ing", "ed")) and w not in EN.CONSTRAINT_WORDS:
                break  # "I'm making vegan ice cream", "I'm obsessed with ..."
        return _has_constraint(window)
    if words[j] in EN.CONSTRAINT_HAVING:
        k = _skip(words, j + 1, end, frozenset({"from", "with"}))
        window = []
        for w in words[k:min(k + _HAVING_SPAN, end)]:
            if (not w.isalnum() and "-" not in w) or w in EN.PREPOSITIONS:
                break
            window.append(w)
        return _has_constraint(window)
    return False


# ----------------------------------------------------------------- Chinese

def _zh_constraint(said: str) -> str | None:
    if any(w in said for w in _ZH_TIMES):
        return None
    clause = said
    for word in ZH.NOT_CONSTRAINTS:  # 不耐烦 holds 不耐: read with it set aside, same offsets
        clause = clause.replace(word, "…" * len(word))
    parts = L.zh_clause_spans(clause)
    starts: list[int | None] = []
    for k, (start, end) in enumerate(parts):
        part = clause[start:end]
        at = _zh_speaker_constraint(part)
        if at is None and starts and _zh_predicated(_zh_strip(part, ZH.CONJUNCTIONS + ZH.ADVERBS)):
            # 我吃素，不吃任何肉 / 我在吃抗凝药，不能吃布洛芬: the speaker of the clause before
            before = clause[parts[k - 1][0]:parts[k - 1][1]]
            if starts[-1] is None and L.zh_speaker_is_subject(before):
                starts[-1] = L.zh_speaker_at(before)
            at = 0 if starts[-1] is not None else None
        if at is None and _zh_prohibition(part):
            at = 0
        starts.append(at)
    first = next((k for k, at in enumerate(starts) if at is not None), None)
    if first is None:
        return None
    last = first
    while last + 1 < len(starts) and starts[last + 1] is not None:
        last += 1
    return said[parts[first][0] + starts[first]:parts[last][1]].strip(" ，,")


def _zh_strip(text: str, words: tuple[str, ...]) -> str:
    """``text`` without any of ``words`` at its start (longest first, repeatedly)."""
    ordered = sorted(words, key=len, reverse=True)
    changed = True
    while changed:
        changed = False
        for word in ordered:
            if text.startswith(word):
                text, changed = text[len(word):], True
    return text


def _zh_speaker_constraint(part: str) -> int | None:
    """Where the speaker stands in ``part`` as the subject of a constraint (see the module
    docstring: 我对芒果过敏, 我乳糖不耐受, 我有高血压, 我是素食者, 我不吃香菜), or None."""
    at = part.find(ZH.SPEAKER)
    while at >= 0:
        before, rest = part[:at], part[at + 1:].removeprefix("们")
        if before.endswith(ZH.OBJECT_MARKERS) or any(w in before for w in ZH.NOT_HOLDING) or \
                rest.startswith(("的", *ZH.OTHER_PEOPLE)):
            at = part.find(ZH.SPEAKER, at + 1)
            continue  # 给我, 我希望我不过敏, 我女儿对花生过敏
        rest = _zh_strip(_zh_strip(rest, ZH.HOUSEHOLD), ZH.ADVERBS + ZH.CONSTRAINT_ADVERBS)
        if _zh_predicated(rest):
            return at
        at = part.find(ZH.SPEAKER, at + 1)
    return None


def _zh_predicated(rest: str) -> bool:
    """A constraint is predicated of the speaker whose predicate ``rest`` is."""
    refusal = next((w for w in ZH.FOOD_REFUSALS if rest.startswith(w)), None)
    if refusal is not None:  # 我不吃香菜, 我吃不了辣的; not 我吃不了那么多, 我不吃了
        thing = _zh_strip(rest[len(refusal):], ZH.ADVERBS).rstrip("了啦的。！!，, ")
        return bool(thing) and not thing.startswith(ZH.QUANTITIES)
    if rest.startswith(ZH.CONSTRAINT_WORDS):
        return True  # 我吃素, 我过敏
    if rest.startswith("吃") and rest[1:].startswith(ZH.RESTRICTED_DIETS):
        return True  # 我只吃清真的
    if rest.startswith(("不", "没")):
        return False  # 我不过敏, 我没有高血压
    if rest.startswith("对"):
        word = next((w for w in ZH.CONSTRAINT_AFTER_NOUN if w in rest), None)
        return word is not None and not rest[:rest.find(word)].endswith(("不", "没"))
    for word in ZH.CONSTRAINT_AFTER_NOUN:  # 我乳糖不耐受, 我花粉过敏
        p = rest.find(word)
        if 0 < p <= 4 and not any(ch in ZH.NOT_IN_CONSTRAINT_NOUN for ch in rest[:p]):
            return True
    for verb in ZH.CONSTRAINT_VERBS:  # 我有高血压, 我患有哮喘, 我是素食者
        p = rest.find(verb)
        if 0 <= p <= 3 and not any(ch in ZH.NOT_IN_CONSTRAINT_NOUN for ch in rest[:p]):
            after = rest[p + len(verb):]
            for word in ZH.CONSTRAINT_WORDS:
                q = after.find(word)
                if 0 <= q <= 6 and not any(ch in ZH.NOT_IN_CONSTRAINT_NOUN for ch in after[:q]):
                    return True
    return False


def _zh_prohibition(clause: str) -> bool:
    """A negative imperative to the assistant about contacting or suggesting to the speaker
    (别在周末给我发消息), not the speaker's own wish (我不要喝咖啡)."""
    bounds = _zh_word_bounds(clause)
    for opener, p in ((o, p) for o in ZH.PROHIBITION_OPENERS for p in _find_all(clause, o)):
        if p not in bounds or p + len(opener) not in bounds:
            continue  # inside a word: 特别实用 (especially), 别人 (others), 区别
        before = clause[:p]
        for mark in ZH.CLAUSE_MARKS:
            before = before.rpartition(mark)[2]
        if ZH.SPEAKER in before and L.zh_speaker_at(before) is not None:
            continue  # 我不要喝咖啡: the speaker's own wish
        after = clause[p + len(opener):]
        if ZH.SPEAKER in after and any(v in after for v in ZH.CONTACT_VERBS):
            return True
    return False


def _find_all(text: str, part: str) -> list[int]:
    """Every start offset of ``part`` in ``text`` (characters)."""
    found, at = [], text.find(part)
    while at >= 0:
        found.append(at)
        at = text.find(part, at + 1)
    return found


def _zh_word_bounds(clause: str) -> set[int]:
    """Character offsets where jieba's segmentation of ``clause`` starts or ends a word: a
    negative imperative opens a word of its own (别 / 请别 / 不要, not the 别 of 特别)."""
    bounds, at = {0}, 0
    for word in segmenter().cut(clause):
        at += len(word)
        bounds.add(at)
    return bounds
