"""Topic statements read from a user's words: which rows of the topic table
(:mod:`memory.topics`) a text states, with the canonical fact text, and which allergies it
says the user does not have. The readers are :mod:`memory.statements`'; this module joins them
to the table, so the table itself depends on no reader.
"""

from __future__ import annotations

from memory import language
from memory.statements import not_allergic, open_attributes, topic_attributes
from memory.text import has_cjk
from memory.topics import TOPIC_BY_KEY, TopicMatch, topic_text

__all__ = ["match_topics", "not_allergic_to"]


def match_topics(text: str, lang: str) -> list[TopicMatch]:
    """Return every topic statement in ``text`` (one per topic key, first wins). Questions
    ("Do I live in Graz?"), quotes and suppositions state nothing; values that are only a
    pronoun ("I can't stand it") are skipped: the thing is named elsewhere."""
    found: dict[str, TopicMatch] = {}
    for sentence in language.split_sentences(language.without_quotes(text)):
        if language.is_question(sentence):
            continue
        named = [s for s in open_attributes(sentence, lang) if s.topic is not None]
        for said in topic_attributes(sentence, lang) + named:
            topic = TOPIC_BY_KEY[said.topic]
            found.setdefault(said.key, TopicMatch(
                topic, said.key, said.value, topic_text(topic, said.shown, lang,
                                                        negative=said.negative), said.shown))
    return list(found.values())


def not_allergic_to(text: str) -> list[str]:
    """Allergy topic keys the user says they do not (or no longer) have: "I'm not allergic to
    peanuts" / "我对花生不过敏" -> ["allergy:peanuts"] / ["allergy:花生"]. Only an allergy named
    this way ends an allergy fact (an ended habit such as "I don't eat peanuts anymore" never
    does: ``memory.semantic``)."""
    keys: list[str] = []
    for sentence in language.split_sentences(text):
        keys += not_allergic(sentence, "zh" if has_cjk(sentence) else "en")
    return list(dict.fromkeys(keys))
