"""Constraints the assistant must respect from their first mention: allergies, diets,
medical conditions and prohibitions of the speaker ("don't message me on weekends",
别在周末给我发消息)."""

from __future__ import annotations

from memory import language as L
from memory.lexicon import en as EN
from memory.lexicon import zh as ZH
from memory.segmenter import segmenter
from memory.text import has_cjk


def constraint(clause: str, lang: str) -> bool:
    """True when ``clause`` states a constraint the assistant must respect from its first
    mention: an allergy, intolerance, diet or medical condition of the speaker ("I'm
    allergic to sesame", "I have type 1 diabetes", 我乳糖不耐受), or a prohibition addressed to
    the assistant about the speaker ("please don't message me on weekends", 别在周末给我发消息).
    Questions, suppositions and passing states are none."""
    if L.is_question(clause) or L.is_hypothetical(clause, lang):
        return False
    if lang == "zh" or has_cjk(clause):
        return _zh_constraint(clause)
    words = L.norms(L.tokens(clause))
    transient = any(w in {"today", "tonight", "tomorrow", "yesterday"} for w in words)
    if transient:
        return False
    # the speaker's own ("I'm allergic", "we're vegan"), not "my dog is allergic to chicken"
    if any(w in {"i", "we"} for w in words) and L.speaker_subject(clause, "en") and (
            any(w in EN.CONSTRAINT_WORDS for w in words)
            or L.find_phrase(words, EN.CONSTRAINT_PHRASES) is not None):
        return True
    rest = L.after_openers(words)
    opens = any(L.starts_with(rest, p) for p in EN.PROHIBITION_OPENERS)
    return opens and any(w in EN.CONTACT_VERBS for w in rest[:6]) and any(
        w in EN.SPEAKER_WORDS for w in rest)


def _zh_constraint(clause: str) -> bool:
    if any(w in clause for w in ("今天", "今晚", "明天", "昨天", "刚才")):
        return False
    at = L.zh_speaker_at(clause)
    if at is not None and L.zh_speaker_is_subject(clause[at:]) and any(
            w in clause[at:] for w in ZH.CONSTRAINT_WORDS):
        return True  # the speaker's own (我对芒果过敏), not 我女儿对花生过敏
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
