"""Phrase templates matched against a clause, and the value they name.

The lexicons' phrases (``TOPIC_PHRASES``, ``NOT_ALLERGIC_PHRASES`` of ``memory.lexicon``) are
templates: ``{v}`` is the value, ``{*}`` skips a few words, ``{v:kind}`` restricts the value to
a word class, a number or a name. English is matched on tokens (``memory.language.tokens``),
Chinese on characters. A template matches only where the statement holds as said: not after
a subordinator, a verb of saying or a question word in its clause, and an instruction only at
the start of its clause. The value readers (:func:`en_value`, :func:`zh_value`) are shared by
the statement readers (``memory.statements``, ``memory.endings``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from memory import language as L
from memory.lexicon import en as EN
from memory.lexicon import zh as ZH
from memory.text import has_cjk

#: Longest value kept, in characters (a longer "value" is a whole clause, not an attribute).
MAX_VALUE_CHARS = 60
MAX_ZH_VALUE_CHARS = 20
#: Longest Chinese proper name taken as a value (a place such as 广西壮族自治区 has 7 characters).
MAX_ZH_NAME_CHARS = 8
#: Words ``{*}`` may skip in English.
MAX_SKIP_WORDS = 6


@dataclass(frozen=True, slots=True)
class _Item:
    kind: str  # "word", "value", "skip"
    text: str = ""  # the word (English token / Chinese string) or the value's class


@lru_cache(maxsize=None)
def _template(template: str, zh: bool) -> tuple[_Item, ...]:
    """A phrase template as items (see the module docstring)."""
    items: list[_Item] = []
    rest = template
    while rest:
        at = rest.find("{")
        literal, rest = (rest, "") if at < 0 else (rest[:at], rest[at:])
        if literal:
            if zh:
                items.append(_Item("word", literal))
            else:
                items.extend(_Item("word", w) for w in literal.split())
        if rest:
            close = rest.index("}")
            inner, rest = rest[1:close], rest[close + 1:]
            if inner == "*":
                items.append(_Item("skip"))
            else:
                items.append(_Item("value", inner.partition(":")[2]))
    return tuple(items)


@dataclass(frozen=True, slots=True)
class Hit:
    """Where a template matched (``start``: its first item's token / character position) and
    the value it names, as said and cleaned (empty for a template without a value)."""

    start: int  # where the template's first item stands (token / character)
    value: str  # the value as said (cleaned)


def clause_free(words: Sequence[str], at: int) -> bool:
    """The statement starting at token ``at`` holds as said: no subordinator, verb of saying
    or question word shortly before it in its clause."""
    i = at - 1
    while i >= 0 and at - i <= 4 and words[i] not in {",", ";", ":", ".", "!", "?", "and", "but"}:
        if words[i] in EN.SUBORDINATORS or words[i] in EN.REPORTING or \
                words[i] in EN.QUESTION_WORDS:
            return False
        i -= 1
    return True


def _imperative_start(words: Sequence[str], at: int) -> bool:
    """An instruction template ("call me Sam") stands at the start of its clause, after
    softeners, openers, a polite frame or a standing phrase only."""
    i = at - 1
    while i >= 0 and words[i] not in {",", ";", ":", ".", "!", "?"}:
        if not (words[i] in EN.SOFTENERS or words[i] in EN.OPENERS or words[i] in EN.ADVERBS
                or words[i] in {"you", "can", "could", "would", "will", "always", "from", "on",
                                "going", "forward", "future", "in", "the"}):
            return False
        i -= 1
    return True


def en_match(template: str, toks: Sequence[L.Token], text: str) -> Hit | None:
    """The first place an English ``template`` matches ``text`` (given as its tokens ``toks``)
    where the statement holds as said, or None."""
    items = _template(template, False)
    words = L.norms(toks)
    first = items[0].text
    for start, word in enumerate(words):
        if word != first or not clause_free(words, start):
            continue
        if first not in {"i", "my"} and not _imperative_start(words, start):
            continue
        value = _en_walk(items, 1, start + 1, words, toks, text, None)
        if value is not None:
            return Hit(start, value)
    return None


def _en_walk(items, k, i, words, toks, text, value):
    """Match ``items[k:]`` from token ``i``; the value found so far is ``value``."""
    if k == len(items):
        return value if value is not None else ""
    item = items[k]
    if item.kind == "word":
        while i < len(words) and words[i] != item.text and words[i] in EN.ADVERBS:
            i += 1
        if i < len(words) and words[i] == item.text:
            return _en_walk(items, k + 1, i + 1, words, toks, text, value)
        return None
    if item.kind == "skip":
        for j in range(i + 1, min(i + MAX_SKIP_WORDS, len(words)) + 1):
            found = _en_walk(items, k + 1, j, words, toks, text, value)
            if found is not None:
                return found
        return None
    # a value: up to the next word of the template, or to the end of the clause
    stops = EN.VALUE_STOPS if item.text != "number" else {".", ";", "!", "?"}
    if k + 1 < len(items):
        nxt = items[k + 1].text
        for j in range(i + 1, len(words)):
            if words[j] in stops:
                return None
            if words[j] == nxt:
                got = en_value(item.text, toks, text, i, j)
                if got is not None:
                    found = _en_walk(items, k + 1, j, words, toks, text, got)
                    if found is not None:
                        return found
        return None
    j = i
    while j < len(words) and words[j] not in stops:
        if item.text == "number" and words[j] == "," and not (
                j + 1 < len(words) and words[j + 1].isdigit()):
            break  # a number ends at a comma too, unless a list of numbers goes on
        j += 1
    return en_value(item.text, toks, text, i, j) if j > i else None


def en_value(kind: str, toks: Sequence[L.Token], text: str, i: int, j: int) -> str | None:
    """The value of class ``kind`` in tokens ``i``-``j``, as said, or None."""
    toks = list(toks[i:j])
    words = L.norms(toks)
    toks, words = _without_tails(toks, words, kind)
    while words and words[0] in EN.ARTICLES and kind not in {"name"}:
        toks, words = toks[1:], words[1:]
    if not words:
        return None
    said = text[toks[0].start:toks[-1].end].strip(" \"'“”‘’")
    if kind == "":
        if len(said) > MAX_VALUE_CHARS or words[0] in EN.PRONOUNS or \
                words[0] in EN.QUESTION_WORDS or words[0] == "to" or len(words) > 8 or \
                words[0] in EN.NOT_VALUES:
            return None
        return said
    if kind == "number":
        return said if len(words) == 1 and said.isdigit() and len(said) <= 3 else None
    if kind == "name":
        names = []
        for t in toks:
            word = text[t.start:t.end]
            if not word[:1].isupper() or any(c.isdigit() for c in word) or len(names) == 2:
                break
            names.append(word)
        return " ".join(names) or None
    if kind == "timezone":
        low = said.lower()
        if low.startswith(("utc", "gmt")) and all(c in "+-0123456789:" for c in low[3:]) \
                and len(low) > 3:
            return said
        return said if said.isupper() and 3 <= len(said) <= 4 and said.endswith("T") else None
    members = EN.VALUE_CLASSES[kind]
    if kind in EN.HEAD_CLASSES:  # the last class word of the first four: "quant developer"
        heads = [n for n in range(min(len(words), 4))
                 if words[n] in members or (n and " ".join(words[n - 1:n + 1]) in members)]
        return text[toks[0].start:toks[heads[-1]].end] if heads else None
    if kind in EN.OPENING_CLASSES:
        return said if words[0] in members and len(words) <= 4 else None
    for n in range(min(len(words), 3), 0, -1):
        if " ".join(words[:n]) in members:
            return text[toks[0].start:toks[n - 1].end]
    return None


def _without_tails(toks, words, kind):
    """Tokens without trailing words that are no part of a value ("now", "these days",
    "on 2026-11-25", "last month")."""
    changed = True
    while words and changed:
        changed = False
        if words[-1] in EN.VALUE_TAILS or words[-1] in {"today", "yesterday", "again"}:
            toks, words = toks[:-1], words[:-1]
            changed = True
            continue
        for phrase in EN.VALUE_TAIL_PHRASES + (("this", "year"), ("last", "month"),
                                               ("last", "week"), ("last", "year")):
            if len(words) > len(phrase) and tuple(words[-len(phrase):]) == phrase:
                toks, words = toks[:-len(phrase)], words[:-len(phrase)]
                changed = True
                break
        # a resolved date after the value: "Vodafone on 2026-11-25" (not "on 2026-12-01")
        if words and words[-1][:4].isdigit() and "-" in words[-1]:
            cut = 2 if len(words) > 2 and words[-2] in {"on", "in", "since", "from", "at"} else 1
            if len(words) > cut and words[-cut - 1] not in {"on", "in", "since", "from", "at"}:
                toks, words = toks[:-cut], words[:-cut]
                changed = True
    return toks, words


def zh_match(template: str, text: str) -> Hit | None:
    """The first place a Chinese ``template`` matches ``text`` (by characters) where the
    speaker is the subject and no verb of saying comes before, or None."""
    items = _template(template, True)
    first = items[0].text
    speaker = first.startswith(ZH.SPEAKER)
    at = text.find(first[:1])
    while at >= 0:
        if (not speaker or zh_speaker(text, at)) and not zh_said(text, at):
            head = first[1:] if speaker else first[1:]
            for q in zh_adverb_skips(text, at + 1) if speaker else [at + 1]:
                if text.startswith(head, q):
                    value = _zh_walk(items, 1, q + len(head), text, None)
                    if value is not None:
                        return Hit(at, value)
        at = text.find(first[:1], at + 1)
    return None


def zh_speaker(text: str, at: int) -> bool:
    """我 at ``at`` is the speaker as subject: not an object (给我, 叫我) and not in a
    supposition (如果我)."""
    before = text[max(0, at - 4):at]
    clause = text[:at]
    for mark in ZH.CLAUSE_MARKS:
        clause = clause.rpartition(mark)[2]
    return not before.endswith(ZH.OBJECT_MARKERS) and not any(s in clause for s in
                                                              ZH.SUBORDINATORS)


def zh_said(text: str, at: int) -> bool:
    """The statement at ``at`` follows a verb of saying in its clause (他说我...)."""
    clause = text[:at]
    for mark in ZH.CLAUSE_MARKS:
        clause = clause.rpartition(mark)[2]
    return any(clause.endswith(v) or clause.endswith(v + "过") for v in ZH.REPORTING)


def zh_adverb_skips(text: str, q: int) -> list[int]:
    """Positions reachable from ``q`` by skipping adverbs and time words (我[现在][一直]...)."""
    out = [q]
    seen = {q}
    frontier = [q]
    while frontier:
        p = frontier.pop()
        for adverb in ZH.ADVERBS:
            if text.startswith(adverb, p) and p + len(adverb) not in seen:
                seen.add(p + len(adverb))
                out.append(p + len(adverb))
                frontier.append(p + len(adverb))
    return out


def _zh_walk(items, k, q, text, value):
    if k == len(items):
        return value if value is not None else ""
    item = items[k]
    if item.kind == "word":
        return _zh_walk(items, k + 1, q + len(item.text), text, value) \
            if text.startswith(item.text, q) else None
    if item.kind == "skip":
        for j in range(q + 1, min(q + MAX_ZH_VALUE_CHARS, len(text)) + 1):
            if j > q and text[j - 1] in "。！？!?":
                return None
            found = _zh_walk(items, k + 1, j, text, value)
            if found is not None:
                return found
        return None
    if k + 1 < len(items):
        nxt = items[k + 1].text
        j = q + 1
        while j < len(text) and j - q <= MAX_ZH_VALUE_CHARS and text[j - 1] not in ZH.CLAUSE_MARKS:
            if text.startswith(nxt, j):
                got = zh_value(item.text, text[q:j])
                if got is not None:
                    found = _zh_walk(items, k + 1, j, text, got)
                    if found is not None:
                        return found
            j += 1
        return None
    j = q
    while j < len(text) and text[j] not in ZH.CLAUSE_MARKS:
        j += 1
    return zh_value(item.text, text[q:j]) if j > q else None


def zh_value(kind: str, value: str) -> str | None:
    """A Chinese value of class ``kind`` ("" any, ``number``, or a word class of the lexicon)
    read from ``value``, cleaned of particles, or None when it is no value (a judgement such as
    很好的, a pronoun, the speaker, too long)."""
    if kind == "name":  # 我是{v:name}人: 湖南 / 北京, never 个好 (我是个好人) or 一个很内向
        value = zh_clean(value)
        return value if 0 < len(value) <= MAX_ZH_NAME_CHARS and not any(
            c in ZH.NOT_IN_NAMES for c in value) else None
    if kind not in {"", "number"}:
        return _zh_class_value(kind, value.strip())
    if value.startswith("的"):
        return None  # 我最喜欢的歌手是...: 喜欢 modifies a noun, it is no opinion's object
    judged = value.startswith(ZH.NOT_VALUE_HEADS)
    value = zh_clean(value)
    if kind == "" and judged and (len(value) <= 3 or value.endswith("的")):
        return None  # 是很好的, 挺远: a judgement, no value
    if not value or kind == "" and (len(value) > MAX_ZH_VALUE_CHARS or value in ZH.PRONOUNS
                                    or ZH.SPEAKER in value or value.endswith("不")):
        return None
    if kind == "":
        return value
    if kind == "number":
        return value if value.isdigit() and len(value) <= 3 else None
    return None


def _zh_class_value(kind: str, value: str) -> str | None:
    """The value of word class ``kind`` at the start of ``value`` (at its end for head
    classes: 软件工程师), after the words that may lead it (要简短, 尽量详细)."""
    members = ZH.VALUE_CLASSES[kind]
    changed = True
    while changed:
        changed = False
        for lead in ZH.VALUE_LEADS:
            if value.startswith(lead) and len(value) > len(lead):
                value = value[len(lead):].lstrip()
                changed = True
    if kind in ZH.HEAD_CLASSES:
        for word in sorted(members, key=len, reverse=True):
            at = value.find(word)
            if 0 <= at <= 8:  # 我是做销售的: the verb that leads the occupation is not in it
                found = zh_clean(value[:at + len(word)])
                lead = next((v for v in ZH.OCCUPATION_VERBS if found.startswith(v)
                             and len(found) > len(v)), "")
                return found[len(lead):]
        return None
    for word in sorted(members, key=len, reverse=True):
        if value.startswith(word):
            return zh_clean(word, heads=False) or word
    return None


def zh_clean(value: str, *, heads: bool = True) -> str:
    """A Chinese value without particles around it (了上海 -> 上海, 联通的 -> 联通)."""
    value = value.strip(" \"'“”‘’")
    changed = True
    while value and changed:
        changed = False
        for head in ZH.VALUE_HEADS if heads else ():
            if value.startswith(head) and len(value) > len(head):
                value = value[len(head):]
                changed = True
        for tail in ZH.VALUE_TAILS:
            if value.endswith(tail) and len(value) > len(tail):
                value = value[:-len(tail)]
                changed = True
    return value.strip()


def match_template(template: str, clause: str, lang: str) -> str | None:
    """The value of ``template`` in ``clause`` (as said), or None when it does not match."""
    if lang == "zh" or has_cjk(template):
        hit = zh_match(template, clause)
    else:
        hit = en_match(template, L.tokens(clause), clause)
    return hit.value if hit is not None else None


def value_end(words: Sequence[str], v: int) -> int:
    """Where a value starting at token ``v`` ends: a stop word, or a second statement with its
    own subject ("blue and I like jazz")."""
    j = v
    while j < len(words) and words[j] not in EN.VALUE_STOPS and not (
            words[j] in {"and", "but"} and words[j + 1:j + 2] in (["i"], ["my"])):
        j += 1
    return j

